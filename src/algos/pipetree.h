// SPDX-License-Identifier: MIT
/* Shared by the tree-shaped and node-aware algorithms (tree, hierarchical, nvls, nvlstree):
 * NCCL's binary and double binary trees, trees of ranks, the node groups of a topology, a
 * step sink that orders each rank's program by logical time so pipelined phases interleave,
 * and pipelined broadcast / reduce / all-reduce over a tree. */
#pragma once

#include <glib.h>

#include "algos/algo.h"
#include "sched/schedule.h"
#include "topo/topo.h"

G_BEGIN_DECLS

/* ---- NCCL's trees (src/graph/trees.cc) ---- */

/* NCCL_MAX_TREE_ARITY: a rank of a tree has at most this many children. */
#define CS_PIPETREE_MAX_CHILDREN 3

/* NCCL's ncclGetBtree: the binary tree over @n indices rooted at 0 in which odd indices are
 * leaves. Sets @parent (-1 at the root), @child0 / @child1 (-1 when absent) and @child_type
 * (0 if @index is its parent's child0, 1 if child1, -1 at the root). */
void cs_pipetree_btree(int n, int index, int *parent, int *child0, int *child1, int *child_type);

/* NCCL's ncclGetDtree: tree 0 is the btree; tree 1 mirrors it (n even) or shifts it by one
 * (n odd), so that most inner indices of one tree are leaves of the other. */
void cs_pipetree_dtree(int n, int tree, int index, int *parent, int *child0, int *child1,
                       int *child_type);

/* NCCL's ncclGetDtreeRoots: the root index of @tree (0 or 1). */
int cs_pipetree_dtree_root(int n, int tree);

/* ---- Trees of ranks ---- */

/**
 * CsTreeNode:
 * One rank's place in a tree. Ranks outside the tree have @depth -1.
 */
typedef struct {
    int parent; /* rank, -1 at the root and outside */
    int n_children;
    int children[CS_PIPETREE_MAX_CHILDREN]; /* ranks, deepest subtree first */
    int depth;                              /* hops below the root, -1 outside */
} CsTreeNode;

/**
 * CsPipeTree:
 * A tree over some of @n_ranks ranks, built with cs_pipetree_new(), _link() and _finish().
 */
typedef struct {
    int n_ranks;
    int root;          /* rank */
    int height;        /* hops: the largest depth */
    CsTreeNode *nodes; /* n_ranks entries (owned) */
} CsPipeTree;

/* A tree over @n_ranks ranks with no edges yet. (transfer full) */
CsPipeTree *cs_pipetree_new(int n_ranks);
void cs_pipetree_free(CsPipeTree *tree);
/* Makes @child a child of @parent. */
void cs_pipetree_link(CsPipeTree *tree, int parent, int child);
/* Roots the tree at @root: computes depths and the height and orders every rank's children
 * by decreasing subtree height (the longest path is served first). */
void cs_pipetree_finish(CsPipeTree *tree, int root);
/* NCCL's double binary tree @which (0 or 1) over @members[0..n-1] (index i is rank
 * members[i]), into an empty @tree, finished. */
void cs_pipetree_dtree_over(CsPipeTree *tree, const int *members, int n, int which);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(CsPipeTree, cs_pipetree_free)

/* ---- Node groups ---- */

/**
 * CsNodeGroups:
 * The ranks 0..n_ranks-1 grouped by node, nodes in increasing node index, ranks increasing
 * within a node. Without a topology every rank is on one node.
 */
typedef struct {
    int n_ranks;
    int n_groups;
    int *offsets;  /* n_groups + 1 entries into @ranks (owned) */
    int *ranks;    /* n_ranks entries (owned) */
    int *group_of; /* n_ranks entries: the group of each rank (owned) */
    int *local_of; /* n_ranks entries: index within the group (owned) */
} CsNodeGroups;

/* Groups the first @n_ranks ranks of @topo (nullable) by node. NULL with
 * CS_SCHEDULE_ERROR_UNSUPPORTED if @topo has fewer ranks. (transfer full) */
CsNodeGroups *cs_node_groups_new(const CsTopo *topo, int n_ranks, GError **error);
/* Groups the first @n_ranks ranks of @topo (not NULL) into NVLink domains: ranks joined by
 * routes of NVLink class only (a node of NVSwitch GPUs, or a whole NVL72 rack). NULL with
 * CS_SCHEDULE_ERROR_UNSUPPORTED if @topo has fewer ranks. (transfer full) */
CsNodeGroups *cs_node_groups_new_nvlink(const CsTopo *topo, int n_ranks, GError **error);
/* Every rank on its own node: the flat structure of trees over ranks. (transfer full) */
CsNodeGroups *cs_node_groups_new_flat(int n_ranks);
void cs_node_groups_free(CsNodeGroups *groups);
/* Ranks in group @g. */
int cs_node_groups_size(const CsNodeGroups *groups, int g);
/* Rank at index @local of group @g. */
int cs_node_groups_rank(const CsNodeGroups *groups, int g, int local);
/* TRUE if every group holds the same number of ranks. */
gboolean cs_node_groups_uniform(const CsNodeGroups *groups);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(CsNodeGroups, cs_node_groups_free)

/* ---- Step sink ---- */

typedef struct _CsStepSink CsStepSink;

/* A sink for the programs of @n_ranks ranks. (transfer full) */
CsStepSink *cs_step_sink_new(int n_ranks);
void cs_step_sink_free(CsStepSink *sink);
/* Queues @step for @rank at logical @time. Steps of a rank run in (time, order, queueing
 * order); this queues at order 0. Deadlock freedom is the caller's: each message must be
 * received at a later time than it is sent, and in the order the sender sent it. Zero-byte
 * steps are dropped. */
void cs_step_sink_add(CsStepSink *sink, int rank, gint64 time, const CsStep *step);
/* Queues @step at (@time, @order): @order sorts steps of one time. */
void cs_step_sink_add_ordered(CsStepSink *sink, int rank, gint64 time, gint64 order,
                              const CsStep *step);
/* Fills a CsStep and queues it; the arguments are cs_schedule_step()'s. */
void cs_step_sink_step(CsStepSink *sink, int rank, gint64 time, int channel, CsStepKind kind,
                       int recv_peer, int send_peer, CsBuffer src_buf, gint64 src_offset,
                       CsBuffer dst_buf, gint64 dst_offset, gint64 bytes, int chunk);
/* Appends every queued step to @sched in order and empties the sink. */
void cs_step_sink_flush(CsStepSink *sink, CsSchedule *sched);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(CsStepSink, cs_step_sink_free)

/* ---- Pipelined collectives over a tree ---- */

/**
 * CsTreeRegion:
 * One chunk of a pipelined tree collective: the same region on every rank of the tree.
 * @src_buf is read (the contribution, or the root's data), @acc_buf holds partial sums of
 * ranks with two children, @dst_buf receives the result.
 */
typedef struct {
    int channel;
    CsBuffer src_buf;
    CsBuffer acc_buf;
    CsBuffer dst_buf;
    gint64 offset; /* bytes: the same on every buffer */
    gint64 bytes;
    int chunk;   /* recorded in the steps */
    gint64 time; /* logical time at which the chunk enters the tree */
} CsTreeRegion;

/* Broadcast of the root's @src_buf region into every other rank's @dst_buf; the root also
 * copies it into its own @dst_buf when @root_copy. Rank at depth d acts at time + d. */
void cs_pipetree_broadcast(CsStepSink *sink, const CsPipeTree *tree, const CsTreeRegion *region,
                           gboolean root_copy);
/* Reduction of every rank's @src_buf region into the root's @dst_buf. Rank at depth d acts at
 * time + height - d (as late as possible, so nothing waits in a slot). */
void cs_pipetree_reduce(CsStepSink *sink, const CsPipeTree *tree, const CsTreeRegion *region);
/* Reduce up then broadcast down (NCCL's tree all-reduce): every rank's @dst_buf gets the
 * reduction of every @src_buf. Rank at depth d reduces at time + height - d and receives the
 * result at time + height + d; the root does both in one step. */
void cs_pipetree_allreduce(CsStepSink *sink, const CsPipeTree *tree, const CsTreeRegion *region);

/* ---- Direct phases (NVLS) ---- */

/**
 * CsBlockMove:
 * Block x of a direct phase: where ranks read it (@src) and where it lands (@dst), at the
 * same offsets on every rank.
 */
typedef struct {
    CsBuffer src_buf;
    gint64 src_off; /* bytes */
    CsBuffer dst_buf;
    gint64 dst_off; /* bytes */
    gint64 bytes;
} CsBlockMove;

/* Channel @c's share of @count elements (cs_algo_split() over @n_channels), cut into @k shards
 * the same way: shard x starts at element @first[x] and holds @len[x]. Returns the longest. */
gint64 cs_pipetree_channel_shards(gint64 count, int n_channels, int c, int k, gint64 *first,
                                  gint64 *len);
/* Chunk @i (@chunk_el elements of @es bytes) of shard @x of cs_pipetree_channel_shards(), from
 * the input to the output at the same offsets; empty past the shard's end. */
CsBlockMove cs_pipetree_shard_chunk(const gint64 *first, const gint64 *len, int x, gint64 i,
                                    gint64 chunk_el, int es);

/* Reduce-scatter among @m[0..k-1]: member x receives block x's @src from every other member
 * and reduces it with its own into its @dst (one member: a copy). Sends at @time, receives at
 * @time + 1; member x sends to x+q and receives from x-q in order q = 1..k-1, interleaved
 * with the all-gather's q-th steps of the same time (order 2q or 2q + 1 by the channel's
 * parity, the all-gather the other): on each connection their messages keep one order.
 * @in_switch:
 * the messages into each member are one in-switch reduction (NVLS ld_reduce): the first
 * carries CS_STEP_FLAG_REDUCE_SELF, the others CS_STEP_FLAG_SHARED_LAST_HOP. @rotate: the
 * distances are visited from 1 + rotate % (k - 1) on, wrapping (0: 1 .. k-1); the orders go
 * with the visit, so sends leave and receives are taken in the rotated order. */
void cs_pipetree_direct_reduce_scatter(CsStepSink *sink, int channel, const int *m, int k,
                                       const CsBlockMove *blocks, gint64 time, int chunk,
                                       gboolean in_switch, int rotate);
/* All-gather among @m[0..k-1]: member x sends block x's @src to every other member, which
 * stores it in its @dst. Sends at @time, receives at @time + 1; member x sends to x+q and
 * receives from x-q, q = 1..k-1, interleaved with a reduce-scatter of the same time (see
 * above). The owner's own copy, if
 * needed, is the caller's. @in_switch: each member's sends are one multicast (NVLS
 * multimem.st): the first carries CS_STEP_FLAG_MULTICAST_SELF, the others
 * CS_STEP_FLAG_SHARED_FIRST_HOP. @rotate as for the reduce-scatter. */
void cs_pipetree_direct_all_gather(CsStepSink *sink, int channel, const int *m, int k,
                                   const CsBlockMove *blocks, gint64 time, int chunk,
                                   gboolean in_switch, int rotate);

/* ---- In-network reduction (SHARP) ---- */

/* All-reduce of the region [@off, @off + @bytes) of @buf among @m[0..n-1] by a switch that
 * reduces in the network (SHARP, NCCL's CollNet): every member sends its contribution to the
 * switch, which returns the sum to every member, in place. The IR has rank-to-rank messages
 * only, so it is written as the in-switch reduction into member @m[@root] (sends at @time,
 * its receives at @time + 1: the first message CS_STEP_FLAG_REDUCE_SELF, the others
 * SHARED_LAST_HOP) and the multicast of the sum out of the switch (sent right after them at
 * @time + 1, the first CS_STEP_FLAG_FROM_SWITCH, the others SHARED_FIRST_HOP; received at
 * @time + 2). All of it comes first among the steps of its time.
 * Each member's link into the network then carries @bytes once each way. Nothing for n = 1. */
void cs_pipetree_sharp_allreduce(CsStepSink *sink, int channel, const int *m, int n, int root,
                                 CsBuffer buf, gint64 off, gint64 bytes, gint64 time, int chunk);

/* NCCL_MAX_DIRECT_ARITY + 1 (NCCL src/include/device.h): the most local ranks CollNet
 * serves (enqueue.cc skips CollNet Direct and Chain above it). */
#define CS_COLLNET_MAX_LOCAL 8

/* Whether NCCL's CollNet (Direct or Chain) applies to the first @nranks ranks of @topo
 * (nullable): a SHARP switch, two nodes or more of equal rank counts, at most
 * CS_COLLNET_MAX_LOCAL ranks and at least one NIC per node. On FALSE sets @why (static). */
gboolean cs_collnet_supports(const CsTopo *topo, int nranks, const char **why);
/* What CollNet Direct and Chain (named @label in messages) both check before building: Simple,
 * cs_collnet_supports(); then the node groups of the first @nranks ranks (transfer full), or
 * NULL with @error. */
CsNodeGroups *cs_collnet_nodes(const CsTopo *topo, int nranks, CsProto proto, const char *label,
                               GError **error);
/* The CollNet heads of each of @nodes' nodes on @topo: one per NIC of its first node (NCCL's
 * connectCollNet), at most its rank count. */
int cs_collnet_heads(const CsTopo *topo, const CsNodeGroups *nodes);
/* Local index of head @h of @n_heads among @l ranks: the first rank NIC h serves (a
 * template joins rank k to NIC k * n_heads / l). */
int cs_collnet_head_local(int h, int n_heads, int l);
/* CollNet Direct's all-reduce over @nodes (with @nvls: NVLS across nodes), in chunks of
 * @chunk_bytes (pipetree.c). */
CsSchedule *cs_collnet_direct_schedule(const CsAlgoArgs *args, const CsNodeGroups *nodes,
                                       gint64 chunk_bytes, gboolean nvls);

/* ---- Sizes ---- */

/* Start of part @i of @n elements cut into @parts nearly equal parts (part i is
 * [start(i), start(i + 1))). */
gint64 cs_pipetree_part_start(gint64 n, int parts, int i);
/* The largest k with 2^k <= @n (0 for n <= 1): NCCL's log2i. */
int cs_pipetree_log2i(gint64 n);
/* NCCL's NVLS chunk (enqueue.cc, Simple only): @args->chunk_bytes if set, else
 * NCCL_NVLS_CHUNKSIZE (128 KiB) shrunk for small @total_bytes over n_channels x @n_heads
 * concurrent chunks; @nvls_tree selects the NVLS_TREE rule (64 KiB cap from 4 nodes). Whole
 * elements. */
gint64 cs_pipetree_nvls_chunk(gint64 chunk_bytes, int esize, int n_channels, int n_heads,
                              int n_nodes, gint64 total_bytes, gboolean nvls_tree);

G_END_DECLS
