// SPDX-License-Identifier: MIT
/* NCCL's double binary tree: all-reduce as a pipelined reduce up and broadcast down two
 * complementary binary trees, each carrying half of the data; broadcast and reduce from any
 * root over the same trees.
 *
 * Sources:
 *   P. Sanders, J. Speck, J. L. Träff, "Two-tree algorithms for full bandwidth broadcast,
 *   reduction and scan", Parallel Computing 35(12):581-594, 2009.
 *   NCCL 2.28: src/graph/trees.cc (ncclGetBtree, ncclGetDtree), src/graph/connect.cc
 *   (connectTrees: the tree spans nodes, a chain inside each node), src/graph/topo.cc
 *   (ncclTopoPreset: treeToParent / treeToChild0 / treeToChild1 of the balanced-tree pattern),
 *   src/device/all_reduce.h (runTreeSplit), src/enqueue.cc (tree chunk size).
 *
 * Shape. With a topology of several nodes, as NCCL does: the double binary tree spans the
 * NODES and each node is a chain of its ranks. NCCL's balanced-tree pattern attaches the
 * parent node and child1 to the chain head and child0 to the second rank of the chain; a
 * child node's chain starts at the same local index as the rank it attaches to, so every
 * inter-node edge joins two GPUs of the same rail. Chains are rotated per channel pair so
 * channels use different GPUs (and NICs) as node heads. A chain runs through its node in
 * local order, except across nodes of 8 fully connected GPUs with a NIC each (8 x MI300X or
 * MI355X, cs_mesh_rail_nodes()): there RCCL's machine model has no tree of its own and its
 * tree channels take the model's rings (rome_model_81 and 89, parseRome4P2H's "Fall back to
 * tree from ringBase", src/graph/rome_models.cc, ROCm/rccl 0cbce2a7 (2.21.5) and the 2.26
 * line), 8 paths each from another GPU that together follow every directed xGMI link once;
 * here the chain from head h is path h of cs_mesh_paths_new(), whose second rank is h + 1
 * (where child0 attaches, as above), so the channels spread over all 56 links instead of
 * loading the 16 between neighbours in local order. On one node that leaves the chain
 * alone: NCCL's tree of a single node is the chain of its GPUs (connectTrees: no tree edge
 * between nodes; tuning.cc prices it as 2 (ppn - 1) intra-node hops), reduced up to the
 * chain head and broadcast back down. Without a topology (the textbook and MPI case) the
 * trees span the ranks directly (NCCL's dtree over ranks, each rank <= 2 children).
 *
 * Data. Channel c carries part c of the buffer on tree c % 2 (one channel: tree 0 only), cut
 * into chunks of one protocol slot (NCCL's tree chunkSteps = 1), shrunk for LL128 as in
 * enqueue.cc. All-reduce follows runTreeSplit's primitives: leaves send, inner ranks
 * recvReduceSend, the root recvReduceCopySend, then recvCopySend down to the leaves' recv.
 * A step names one peer, so a rank with two children receives (and sends) them in two
 * steps; partial sums wait in the output buffer. NCCL runs the reduce and the broadcast on
 * separate warps of one channel; here they share one channel and interleave by logical
 * time (a rank at depth d broadcasts chunk k - 2d right after reducing chunk k), which is
 * the steady state of the split kernel.
 *
 * Broadcast and reduce (NCCL has no tree for them) use Sanders et al.'s two-tree scheme: the
 * root sits above two complementary trees over the other ranks (or nodes). */
#include "algos/algo.h"
#include "algos/mesh_rings.h"
#include "algos/pipetree.h"

/* ---- Tree shapes ---- */

typedef struct {
    const CsNodeGroups *groups;
    const int *paths; /* NULL, or per head h: the chain from h (n x n local indices) */
    int *parent;      /* per group: parent group, -1 at the top */
    int *type;        /* per group: 0 = child0 of its parent, 1 = child1 */
    int *start;       /* per group: local index of the chain head, -1 = unknown */
    int top;          /* the group holding the root */
    int rotation;     /* extra offset of the rooted group's attach point */
    gboolean rooted;
} Shape;

/* Local index of the @i-th rank of group @g's chain, which starts at local index @head: the
 * path from @head where the shape has paths, the ranks in local order otherwise. */
static int
chain_local(const Shape *s, int g, int head, int i)
{
    int n = cs_node_groups_size(s->groups, g);

    if (s->paths != NULL)
        return s->paths[(gsize)head * n + i];
    return (head + i) % n;
}

/* Local index in group @g where a child group of @type attaches (NCCL balanced pattern:
 * child0 on the second rank of the chain, parent and child1 on the head). */
static int
attach_local(const Shape *s, int g, int type)
{
    int n = cs_node_groups_size(s->groups, g);

    if (s->rooted && g == s->top)
        return (s->start[g] + s->rotation) % n;
    if (type == 0 && n > 1)
        return chain_local(s, g, s->start[g], 1);
    return s->start[g];
}

static int
chain_start(Shape *s, int g)
{
    if (s->start[g] < 0) {
        int p = s->parent[g];
        chain_start(s, p);
        s->start[g] = attach_local(s, p, s->type[g]) % cs_node_groups_size(s->groups, g);
    }
    return s->start[g];
}

/* Double binary tree @which over the groups of @groups, a chain inside each group (along
 * @paths, nullable: see Shape). With @root >= 0 the root's group is on top and the other
 * groups form the tree below it. */
static CsPipeTree *
build_tree(const CsNodeGroups *groups, const int *paths, int which, int rotation, int root)
{
    int n = groups->n_groups;
    g_autofree int *parent = g_new(int, n);
    g_autofree int *type = g_new(int, n);
    g_autofree int *start = g_new(int, n);
    Shape s = { groups, paths, parent, type, start, 0, rotation, root >= 0 };
    CsPipeTree *tree = cs_pipetree_new(groups->n_ranks);
    int c0, c1;

    for (int g = 0; g < n; g++)
        start[g] = -1;
    if (root < 0) {
        for (int g = 0; g < n; g++)
            cs_pipetree_dtree(n, which, g, &parent[g], &c0, &c1, &type[g]);
        s.top = cs_pipetree_dtree_root(n, which);
        start[s.top] = rotation % cs_node_groups_size(groups, s.top);
    }
    else {
        /* Sanders et al.: the root above a double tree over everybody else. */
        int top = groups->group_of[root];
        for (int v = 0; v < n - 1; v++) {
            int g = (top + 1 + v) % n;
            int p;
            cs_pipetree_dtree(n - 1, which, v, &p, &c0, &c1, &type[g]);
            parent[g] = p < 0 ? top : (top + 1 + p) % n;
            if (p < 0)
                type[g] = 1;
        }
        parent[top] = -1;
        type[top] = -1;
        s.top = top;
        start[top] = groups->local_of[root];
    }

    for (int g = 0; g < n; g++) {
        int len = cs_node_groups_size(groups, g);
        int head = chain_start(&s, g);
        for (int i = 1; i < len; i++)
            cs_pipetree_link(tree, cs_node_groups_rank(groups, g, chain_local(&s, g, head, i - 1)),
                             cs_node_groups_rank(groups, g, chain_local(&s, g, head, i)));
        if (parent[g] >= 0)
            cs_pipetree_link(
                tree, cs_node_groups_rank(groups, parent[g], attach_local(&s, parent[g], type[g])),
                cs_node_groups_rank(groups, g, head));
    }
    cs_pipetree_finish(tree, cs_node_groups_rank(groups, s.top, start[s.top]));
    return tree;
}

/* ---- Sizes ---- */

/* NCCL enqueue.cc: tree chunks are one slot (chunkSteps = 1); LL128 halves them while the
 * pipeline would be too short for the tree's depth. */
static gint64
tree_chunk_bytes(const CsAlgoArgs *args, int n_nodes, gint64 bytes)
{
    int esize = cs_dtype_size(args->dtype);
    gint64 chunk = args->chunk_bytes;

    if (chunk <= 0) {
        chunk = cs_proto_info(args->proto)->slot_data_bytes;
        if (args->proto == CS_PROTO_LL128) {
            double ppn = (double)args->nranks / n_nodes;
            double nsteps = 1 + cs_pipetree_log2i(n_nodes) + 0.1 * ppn;
            gint64 per_channel = (gint64)args->n_channels;
            while (bytes / (per_channel * chunk) < nsteps * 64 / ppn && chunk > 131072)
                chunk /= 2;
            while (bytes / (per_channel * chunk) < nsteps * 16 / ppn && chunk > 32768)
                chunk /= 2;
        }
    }
    chunk -= chunk % esize;
    return MAX(chunk, esize);
}

/* The chunk tree_build() cuts for @args: nodes are the topology's; without one the ranks
 * count as one node for the chunk rule. */
static gint64
tree_chunk(const CsAlgoArgs *args)
{
    int n_nodes = 1;

    if (args->topo != NULL) {
        g_autoptr(CsNodeGroups) groups = cs_node_groups_new(args->topo, args->nranks, NULL);
        if (groups == NULL)
            return cs_algo_chunk_bytes(args);
        n_nodes = groups->n_groups;
    }
    CsOpSize size = cs_op_size(args->op, args->size_bytes, args->dtype, args->nranks);
    return tree_chunk_bytes(args, n_nodes, size.recv_bytes);
}

/* A tree moves each channel's data whole, chunk after chunk: one part. */
static int
tree_parts(const CsAlgoArgs *args)
{
    (void)args;
    return 1;
}

/* ---- Algorithm ---- */

static gboolean
tree_supports(const CsTopo *topo, CsOp op, int nranks, const char **why)
{
    if (op != CS_OP_ALL_REDUCE && op != CS_OP_BROADCAST && op != CS_OP_REDUCE) {
        *why = "the tree serves all-reduce, broadcast and reduce";
        return FALSE;
    }
    if (topo != NULL && nranks > cs_topo_n_ranks(topo)) {
        *why = "more ranks than GPUs in the topology";
        return FALSE;
    }
    return TRUE;
}

static CsSchedule *
tree_build(const CsAlgoArgs *args, GError **error)
{
    int p = args->nranks;
    int n_channels = args->n_channels;
    CsOpSize size = cs_op_size(args->op, args->size_bytes, args->dtype, p);
    int esize = cs_dtype_size(args->dtype);
    gint64 n_el = size.recv_bytes / esize;
    int root = args->op == CS_OP_ALL_REDUCE ? -1 : args->root;
    g_autoptr(CsNodeGroups) groups = NULL;
    g_autoptr(CsStepSink) sink = NULL;
    CsSchedule *sched;
    gint64 chunk_el;

    if (p < 1 || n_channels < 1 || n_channels > G_MAXUINT8 + 1
        || (cs_op_has_root(args->op) && (args->root < 0 || args->root >= p))) {
        g_set_error(error, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_INVALID,
                    "tree: invalid arguments (%d ranks, root %d, %d channels)", p, args->root,
                    n_channels);
        return NULL;
    }
    /* With a topology, nodes are chains (one node: one chain); without, every rank is a
     * node of its own and the trees span the ranks. */
    if (args->topo != NULL) {
        groups = cs_node_groups_new(args->topo, p, error);
        if (groups == NULL)
            return NULL;
    }
    else {
        groups = cs_node_groups_new_flat(p);
    }
    chunk_el = tree_chunk(args) / esize;
    /* Nodes of 8 fully connected GPUs with a NIC each: chains along RCCL's paths (Shape). */
    g_autofree int *paths = NULL;
    if (args->topo != NULL && groups->n_groups > 1 && cs_mesh_rail_nodes(args->topo, p))
        paths = cs_mesh_paths_new(cs_node_groups_size(groups, 0));

    sched = cs_schedule_new(args->op, p, root < 0 ? 0 : root, args->size_bytes, args->dtype,
                            args->redop, args->proto, n_channels);
    cs_schedule_set_algo(sched, "tree");
    if (args->op == CS_OP_REDUCE)
        cs_schedule_set_scratch(sched, size.recv_bytes);

    sink = cs_step_sink_new(p);
    for (int c = 0; c < n_channels; c++) {
        int which = n_channels == 1 ? 0 : c % 2;
        g_autoptr(CsPipeTree) tree = build_tree(groups, paths, which, c / 2, root);
        gint64 first = cs_pipetree_part_start(n_el, n_channels, c);
        gint64 end = cs_pipetree_part_start(n_el, n_channels, c + 1);

        for (gint64 e = first, k = 0; e < end; e += chunk_el, k++) {
            CsTreeRegion region = {
                .channel = c,
                .src_buf = CS_BUF_INPUT,
                .acc_buf = args->op == CS_OP_REDUCE ? CS_BUF_SCRATCH : CS_BUF_OUTPUT,
                .dst_buf = CS_BUF_OUTPUT,
                .offset = e * esize,
                .bytes = MIN(chunk_el, end - e) * esize,
                .chunk = (int)k,
                .time = k,
            };
            if (args->op == CS_OP_ALL_REDUCE)
                cs_pipetree_allreduce(sink, tree, &region);
            else if (args->op == CS_OP_BROADCAST)
                cs_pipetree_broadcast(sink, tree, &region, TRUE);
            else
                cs_pipetree_reduce(sink, tree, &region);
        }
    }
    cs_step_sink_flush(sink, sched);
    cs_schedule_seal(sched);
    return sched;
}

/* Each tree edge carries its channel's part once up and once down for all-reduce, and every
 * rank but the root receives the whole buffer (broadcast) or sends it (reduce) once, over
 * the two trees. A binary tree of P ranks is at least floor(log2 P) deep, and an all-reduce
 * chunk goes from the deepest leaf to the root and back. */
static gboolean
tree_bound(const CsAlgoArgs *args, CsAlgoBound *out)
{
    const gint64 P = args->nranks;
    const CsOpSize size = cs_op_size(args->op, args->size_bytes, args->dtype, args->nranks);
    const gint64 bytes = size.count * cs_dtype_size(args->dtype);
    const gint64 depth = P > 1 ? cs_pipetree_log2i(P) : 0;

    if (args->op == CS_OP_ALL_REDUCE) {
        out->chain = bytes > 0 ? 2 * depth : 0;
        out->bytes_sent = 2 * (P - 1) * bytes;
    }
    else {
        out->chain = bytes > 0 && P > 1 ? 1 : 0;
        out->bytes_sent = (P - 1) * bytes;
    }
    return TRUE;
}

const CsAlgo cs_algo_tree = {
    .name = "tree",
    .summary = "NCCL double binary tree (nodes as chains), pipelined reduce up + broadcast down",
    .reference = "Sanders, Speck, Traff, Parallel Computing 35(12) 2009 (two-tree); "
                 "NCCL 2.28 src/graph/trees.cc, src/graph/connect.cc, src/device/all_reduce.h; "
                 "RCCL 2.21.5 src/graph/rome_models.cc (tree chains from ringBase)",
    .ops = CS_OP_BIT(CS_OP_ALL_REDUCE) | CS_OP_BIT(CS_OP_BROADCAST) | CS_OP_BIT(CS_OP_REDUCE),
    .supports = tree_supports,
    .build = tree_build,
    .chunk = tree_chunk,
    .parts = tree_parts,
    .bound = tree_bound,
};
