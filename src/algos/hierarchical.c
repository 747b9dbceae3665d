// SPDX-License-Identifier: MIT
/* Hierarchical (two-level) collectives for multi-node machines: ranks of a node cooperate
 * over the fast intra-node fabric and only one rank per rail and block crosses the network.
 *
 * Sources:
 *   X. Jia et al., "Highly Scalable Deep Learning Training System with Mixed-Precision:
 *   Training ImageNet in Four Minutes", arXiv:1807.11205, 2018 (hierarchical all-reduce:
 *   intra-node reduce-scatter, inter-node all-reduce, intra-node all-gather).
 *   M. Cho, U. Finkler, D. Kung, H. Hunter, "BlueConnect: Decomposing All-Reduce for Deep
 *   Learning on Heterogeneous Network Hierarchy", SysML 2019 (one ring per rail).
 *   NCCL 2.28 has no such algorithm (its rings and trees are node-aware instead,
 *   src/graph/rings.cc, src/graph/connect.cc); the per-step primitives are NCCL's ring ones
 *   (src/device/all_reduce.h runRing, reduce_scatter.h, all_gather.h).
 *
 * Structure, for N nodes of L ranks (grouped by cs_topo_rank_node(), any numbering; one node
 * without a topology). "Rail j" is the ring of the ranks with local index j of every node.
 *   all-reduce:     intra-node ring reduce-scatter of L shards (local rank j gets shard j of
 *                   its node's sum) -> ring all-reduce of shard j on rail j (NCCL's ring
 *                   primitives: send, recvReduceSend, recvReduceCopySend, recvCopySend, recv)
 *                   -> intra-node ring all-gather of the shards.
 *   reduce-scatter: intra-node ring reduce-scatter (once per node n': local j gets node
 *                   partial of block (n', j)) -> ring reduce-scatter on rail j.
 *   all-gather:     ring all-gather on rail j -> intra-node ring all-gather (once per node).
 *   broadcast /     a pipelined chain: root -> rail rho rank of its node -> the rail rho
 *   reduce:         ranks of the other nodes in turn, each feeding a chain through its node
 *                   (reduce: the same tree, upwards). Channel c uses rail (root's + c) % L.
 * Only same-rail ranks exchange inter-node traffic, each carrying 1/L of the data: the
 * inter-node volume of all-reduce is 2 (N-1)/N x S/L per rank.
 *
 * Pipelining. Channel c carries part c of the data; each part is cut into pieces (one chunk
 * per inter-node message). Steps are ordered by logical time: piece i starts at i x W where W
 * is the longest phase, so piece i+1's intra-node phase overlaps piece i's inter-node phase,
 * and no connection ever holds more than two unreceived messages. Requires the same number of
 * ranks on every node. */
#include "algos/algo.h"
#include "algos/pipetree.h"

/* ---- Context ---- */

typedef struct {
    const CsNodeGroups *groups;
    CsStepSink *sink;
    int n;     /* nodes */
    int l;     /* ranks per node */
    int esize; /* bytes per element */
    int channel;
} Hier;

/* One block of a ring phase: where every rank reads its contribution (or the owner its
 * copy) and where the result lands; the same offsets on every rank of the ring. */
typedef struct {
    CsBuffer src_buf;
    gint64 src_off; /* bytes */
    CsBuffer dst_buf;
    gint64 dst_off; /* bytes */
    gint64 bytes;
} Block;

static int
rank_at(const Hier *h, int node, int local)
{
    return cs_node_groups_rank(h->groups, node, local);
}

static void
step(const Hier *h, int rank, gint64 time, CsStepKind kind, int recv_peer, int send_peer,
     CsBuffer src, gint64 src_off, CsBuffer dst, gint64 dst_off, gint64 bytes, int chunk)
{
    cs_step_sink_step(h->sink, rank, time, h->channel, kind, recv_peer, send_peer, src, src_off,
                      dst, dst_off, bytes, chunk);
}

/* ---- Ring phases ---- */

/* Ring reduce-scatter over @m[0..k-1] starting at @time: position x ends with the sum of
 * every member's @blocks[x].src in @blocks[x].dst (k time units; NCCL's send,
 * recvReduceSend..., recvReduce). */
static void
ring_reduce_scatter(const Hier *h, const int *m, int k, const Block *blocks, gint64 time, int chunk)
{
    for (int x = 0; x < k; x++) {
        int prev = m[(x + k - 1) % k];
        int next = m[(x + 1) % k];
        if (k == 1) {
            const Block *b = &blocks[0];
            step(h, m[0], time, CS_STEP_COPY, -1, -1, b->src_buf, b->src_off, b->dst_buf,
                 b->dst_off, b->bytes, chunk);
            continue;
        }
        for (int q = 0; q < k - 1; q++) {
            const Block *b = &blocks[((x - 1 - q) % k + k) % k];
            step(h, m[x], time + q, q == 0 ? CS_STEP_SEND : CS_STEP_RECV_REDUCE_SEND,
                 q == 0 ? -1 : prev, next, b->src_buf, b->src_off, b->src_buf, b->src_off, b->bytes,
                 chunk);
        }
        const Block *own = &blocks[x];
        step(h, m[x], time + k - 1, CS_STEP_RECV_REDUCE, prev, -1, own->src_buf, own->src_off,
             own->dst_buf, own->dst_off, own->bytes, chunk);
    }
}

/* Ring all-gather over @m[0..k-1] starting at @time: every member gets each owner's
 * @blocks[x].src into @blocks[x].dst (k time units; send, recvCopySend..., recv). The owner's
 * own dst is the caller's. */
static void
ring_all_gather(const Hier *h, const int *m, int k, const Block *blocks, gint64 time, int chunk)
{
    if (k == 1)
        return;
    for (int x = 0; x < k; x++) {
        int prev = m[(x + k - 1) % k];
        int next = m[(x + 1) % k];
        const Block *own = &blocks[x];
        step(h, m[x], time, CS_STEP_SEND, -1, next, own->src_buf, own->src_off, own->src_buf,
             own->src_off, own->bytes, chunk);
        for (int q = 1; q < k; q++) {
            const Block *b = &blocks[((x - q) % k + k) % k];
            step(h, m[x], time + q, q < k - 1 ? CS_STEP_RECV_COPY_SEND : CS_STEP_RECV, prev,
                 q < k - 1 ? next : -1, b->dst_buf, b->dst_off, b->dst_buf, b->dst_off, b->bytes,
                 chunk);
        }
    }
}

/* NCCL's ring all-reduce (runRing) of [@off, @off + @bytes) over @m[0..k-1], the region cut
 * into k sub-blocks: contributions in @src, result in @dst (2k - 1 time units). */
static void
ring_all_reduce(const Hier *h, const int *m, int k, CsBuffer src, CsBuffer dst, gint64 off,
                gint64 bytes, gint64 time, int chunk)
{
    gint64 n_el = bytes / h->esize;
    g_autofree gint64 *start = g_new(gint64, k + 1);

    if (k == 1) {
        if (src != dst)
            step(h, m[0], time, CS_STEP_COPY, -1, -1, src, off, dst, off, bytes, chunk);
        return;
    }
    for (int b = 0; b <= k; b++)
        start[b] = off + cs_pipetree_part_start(n_el, k, b) * h->esize;
    for (int x = 0; x < k; x++) {
        int prev = m[(x + k - 1) % k];
        int next = m[(x + 1) % k];
        gint64 t = time;
        int b;

        b = (x + k - 1) % k;
        step(h, m[x], t++, CS_STEP_SEND, -1, next, src, start[b], src, start[b],
             start[b + 1] - start[b], chunk);
        for (int j = 2; j < k; j++) {
            b = (x + k - j) % k;
            step(h, m[x], t++, CS_STEP_RECV_REDUCE_SEND, prev, next, src, start[b], src, start[b],
                 start[b + 1] - start[b], chunk);
        }
        b = x;
        step(h, m[x], t++, CS_STEP_RECV_REDUCE_COPY_SEND, prev, next, src, start[b], dst, start[b],
             start[b + 1] - start[b], chunk);
        for (int j = 1; j < k - 1; j++) {
            b = (x + k - j) % k;
            step(h, m[x], t++, CS_STEP_RECV_COPY_SEND, prev, next, dst, start[b], dst, start[b],
                 start[b + 1] - start[b], chunk);
        }
        b = (x + 1) % k;
        step(h, m[x], t, CS_STEP_RECV, prev, -1, dst, start[b], dst, start[b],
             start[b + 1] - start[b], chunk);
    }
}

/* ---- Collectives ---- */

/* Ranks of node @g in local order, into @m. */
static void
node_members(const Hier *h, int g, int *m)
{
    for (int x = 0; x < h->l; x++)
        m[x] = rank_at(h, g, x);
}

/* Rail @j: the ranks of local index @j, in node order, into @m. */
static void
rail_members(const Hier *h, int j, int *m)
{
    for (int x = 0; x < h->n; x++)
        m[x] = rank_at(h, x, j);
}

/* Elements [@first, @first + @len) of the buffer: intra reduce-scatter of L shards, all-reduce
 * of shard j on rail j, intra all-gather. Pieces carry N chunks per shard so that each
 * inter-node message is about one chunk. */
static void
hier_all_reduce(Hier *h, gint64 first, gint64 len, gint64 chunk_el)
{
    int n = h->n;
    int l = h->l;
    int es = h->esize;
    g_autofree int *m = g_new(int, MAX(n, l));
    g_autofree Block *blocks = g_new(Block, l);
    g_autofree gint64 *shard_first = g_new(gint64, l);
    g_autofree gint64 *shard_len = g_new(gint64, l);
    gint64 piece_el = chunk_el * n;
    gint64 w = MAX(l, 2 * n - 1);
    gint64 n_pieces = 0;

    for (int s = 0; s < l; s++) {
        cs_algo_split(len, l, s, &shard_first[s], &shard_len[s]);
        shard_first[s] += first;
        n_pieces = MAX(n_pieces, (shard_len[s] + piece_el - 1) / piece_el);
    }
    for (gint64 i = 0; i < n_pieces; i++) {
        gint64 t1 = i * w;
        gint64 t2 = t1 + (l > 1 ? l : 0);
        gint64 t3 = t2 + (n > 1 ? 2 * n - 1 : 0);

        for (int s = 0; s < l; s++) {
            gint64 at = shard_first[s] + i * piece_el;
            gint64 el = CLAMP(shard_len[s] - i * piece_el, 0, piece_el);
            blocks[s] = (Block){ CS_BUF_INPUT, at * es, CS_BUF_OUTPUT, at * es, el * es };
        }
        if (l > 1) {
            for (int g = 0; g < n; g++) {
                node_members(h, g, m);
                ring_reduce_scatter(h, m, l, blocks, t1, (int)i);
            }
        }
        if (n > 1 || l == 1) {
            for (int s = 0; s < l; s++) {
                rail_members(h, s, m);
                ring_all_reduce(h, m, n, l > 1 ? CS_BUF_OUTPUT : CS_BUF_INPUT, CS_BUF_OUTPUT,
                                blocks[s].dst_off, blocks[s].bytes, t2, (int)i);
            }
        }
        if (l > 1) {
            for (int s = 0; s < l; s++)
                blocks[s].src_buf = CS_BUF_OUTPUT;
            for (int g = 0; g < n; g++) {
                node_members(h, g, m);
                ring_all_gather(h, m, l, blocks, t3, (int)i);
            }
        }
    }
}

/* Elements [@first, @first + @len) of every block of @block_bytes: per node n', an intra
 * reduce-scatter of node n''s blocks (local j keeps the node partial of block (n', j)), then
 * a reduce-scatter on every rail. */
static void
hier_reduce_scatter(Hier *h, gint64 block_bytes, gint64 first, gint64 len, gint64 chunk_el)
{
    int n = h->n;
    int l = h->l;
    int es = h->esize;
    g_autofree int *m = g_new(int, MAX(n, l));
    g_autofree Block *blocks = g_new(Block, MAX(n, l));
    gint64 w = MAX((gint64)n * (l - 1) + 1, n);

    for (gint64 i = 0, at = first; at < first + len; i++, at += chunk_el) {
        gint64 off = at * es;
        gint64 bytes = MIN(chunk_el, first + len - at) * es;
        gint64 t1 = i * w;
        gint64 t2 = t1 + (l > 1 ? (gint64)n * (l - 1) + 1 : 0);

        if (l > 1) {
            for (int g = 0; g < n; g++) {
                node_members(h, g, m);
                for (int v = 0; v < n; v++) {
                    for (int b = 0; b < l; b++)
                        blocks[b] = (Block){ CS_BUF_INPUT, rank_at(h, v, b) * block_bytes + off,
                                             n > 1 ? CS_BUF_SCRATCH : CS_BUF_OUTPUT,
                                             n > 1 ? v * block_bytes + off : off, bytes };
                    ring_reduce_scatter(h, m, l, blocks, t1 + (gint64)v * (l - 1), (int)i);
                }
            }
        }
        if (n > 1 || l == 1) {
            for (int j = 0; j < l; j++) {
                rail_members(h, j, m);
                for (int b = 0; b < n; b++)
                    blocks[b] = (Block){ l > 1 ? CS_BUF_SCRATCH : CS_BUF_INPUT,
                                         l > 1 ? b * block_bytes + off
                                               : rank_at(h, b, j) * block_bytes + off,
                                         CS_BUF_OUTPUT, off, bytes };
                ring_reduce_scatter(h, m, n, blocks, t2, (int)i);
            }
        }
    }
}

/* Elements [@first, @first + @len) of every block: an all-gather on every rail, then per node
 * n' an intra all-gather of node n''s blocks. */
static void
hier_all_gather(Hier *h, gint64 block_bytes, gint64 first, gint64 len, gint64 chunk_el)
{
    int n = h->n;
    int l = h->l;
    int es = h->esize;
    g_autofree int *m = g_new(int, MAX(n, l));
    g_autofree Block *blocks = g_new(Block, MAX(n, l));
    gint64 w = MAX((gint64)n * (l - 1) + 1, n);

    for (gint64 i = 0, at = first; at < first + len; i++, at += chunk_el) {
        gint64 off = at * es;
        gint64 bytes = MIN(chunk_el, first + len - at) * es;
        gint64 t1 = i * w;
        gint64 t2 = t1 + n;

        for (int j = 0; j < l; j++) {
            rail_members(h, j, m);
            for (int b = 0; b < n; b++) {
                blocks[b]
                    = (Block){ CS_BUF_INPUT, off, CS_BUF_OUTPUT, m[b] * block_bytes + off, bytes };
                step(h, m[b], t1, CS_STEP_COPY, -1, -1, CS_BUF_INPUT, off, CS_BUF_OUTPUT,
                     m[b] * block_bytes + off, bytes, (int)i);
            }
            ring_all_gather(h, m, n, blocks, t1, (int)i);
        }
        if (l > 1) {
            for (int g = 0; g < n; g++) {
                node_members(h, g, m);
                for (int v = 0; v < n; v++) {
                    for (int b = 0; b < l; b++) {
                        gint64 where = rank_at(h, v, b) * block_bytes + off;
                        blocks[b] = (Block){ CS_BUF_OUTPUT, where, CS_BUF_OUTPUT, where, bytes };
                    }
                    ring_all_gather(h, m, l, blocks, t2 + (gint64)v * (l - 1), (int)i);
                }
            }
        }
    }
}

/* Broadcast / reduce tree of channel rail @rail: root -> the rail's rank of its node (when
 * another) -> the rail's ranks of the next nodes in turn, each heading a chain through the
 * rest of its node. Every rank has at most two children. (transfer full) */
static CsPipeTree *
chain_tree(const Hier *h, int root, int rail)
{
    CsPipeTree *tree = cs_pipetree_new(h->groups->n_ranks);
    int top = h->groups->group_of[root];
    int prev_head = root;

    for (int s = 0; s < h->n; s++) {
        int g = (top + s) % h->n;
        int head = rank_at(h, g, rail);
        int last = head;

        if (head != root)
            cs_pipetree_link(tree, prev_head, head);
        for (int d = 1; d < h->l; d++) {
            int r = rank_at(h, g, (rail + d) % h->l);
            if (r == root)
                continue;
            cs_pipetree_link(tree, last, r);
            last = r;
        }
        prev_head = head;
    }
    cs_pipetree_finish(tree, root);
    return tree;
}

/* ---- Algorithm ---- */

static gboolean
hier_supports(const CsTopo *topo, CsOp op, int nranks, const char **why)
{
    g_autoptr(CsNodeGroups) groups = NULL;

    if (op != CS_OP_ALL_REDUCE && op != CS_OP_REDUCE_SCATTER && op != CS_OP_ALL_GATHER
        && op != CS_OP_BROADCAST && op != CS_OP_REDUCE) {
        *why = "hierarchical serves all-reduce, reduce-scatter, all-gather, broadcast, reduce";
        return FALSE;
    }
    groups = cs_node_groups_new(topo, nranks, NULL);
    if (groups == NULL) {
        *why = "more ranks than GPUs in the topology";
        return FALSE;
    }
    if (!cs_node_groups_uniform(groups)) {
        *why = "nodes hold different numbers of ranks";
        return FALSE;
    }
    return TRUE;
}

static CsSchedule *
hier_build(const CsAlgoArgs *args, GError **error)
{
    g_autoptr(CsNodeGroups) groups = cs_node_groups_new(args->topo, args->nranks, error);
    g_autoptr(CsStepSink) sink = NULL;
    CsOpSize size = cs_op_size(args->op, args->size_bytes, args->dtype, args->nranks);
    int es = cs_dtype_size(args->dtype);
    gint64 chunk_el = cs_algo_chunk_bytes(args) / es;
    int n_channels = args->n_channels;
    CsSchedule *sched;
    Hier h;

    if (groups == NULL)
        return NULL;
    if (!cs_node_groups_uniform(groups)) {
        g_set_error(error, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_UNSUPPORTED,
                    "hierarchical: nodes hold different numbers of ranks");
        return NULL;
    }
    sink = cs_step_sink_new(args->nranks);
    h = (Hier){
        .groups = groups,
        .sink = sink,
        .n = groups->n_groups,
        .l = cs_node_groups_size(groups, 0),
        .esize = es,
    };
    sched = cs_algo_schedule_new(args);

    for (int c = 0; c < n_channels; c++) {
        gint64 first, len;
        h.channel = c;
        switch (args->op) {
        case CS_OP_ALL_REDUCE:
            cs_algo_split(size.recv_bytes / es, n_channels, c, &first, &len);
            hier_all_reduce(&h, first, len, chunk_el);
            break;
        case CS_OP_REDUCE_SCATTER:
            cs_algo_split(size.block_bytes / es, n_channels, c, &first, &len);
            hier_reduce_scatter(&h, size.block_bytes, first, len, chunk_el);
            break;
        case CS_OP_ALL_GATHER:
            cs_algo_split(size.block_bytes / es, n_channels, c, &first, &len);
            hier_all_gather(&h, size.block_bytes, first, len, chunk_el);
            break;
        default: {
            int rail = (groups->local_of[args->root] + c) % h.l;
            g_autoptr(CsPipeTree) tree = chain_tree(&h, args->root, rail);
            cs_algo_split(size.recv_bytes / es, n_channels, c, &first, &len);
            for (gint64 at = first, k = 0; at < first + len; at += chunk_el, k++) {
                CsTreeRegion region = {
                    .channel = c,
                    .src_buf = CS_BUF_INPUT,
                    .acc_buf = CS_BUF_SCRATCH,
                    .dst_buf = CS_BUF_OUTPUT,
                    .offset = at * es,
                    .bytes = MIN(chunk_el, first + len - at) * es,
                    .chunk = (int)k,
                    .time = k,
                };
                if (args->op == CS_OP_BROADCAST)
                    cs_pipetree_broadcast(sink, tree, &region, TRUE);
                else
                    cs_pipetree_reduce(sink, tree, &region);
            }
            break;
        }
        }
    }
    if (args->op == CS_OP_REDUCE)
        cs_schedule_set_scratch(sched, size.recv_bytes);
    else if (args->op == CS_OP_REDUCE_SCATTER && h.n > 1 && h.l > 1)
        cs_schedule_set_scratch(sched, h.n * size.block_bytes);
    cs_step_sink_flush(sink, sched);
    return sched;
}

const CsAlgo cs_algo_hierarchical = {
    .name = "hierarchical",
    .summary = "two-level: intra-node reduce-scatter, inter-node rings per rail, intra-node "
               "all-gather",
    .reference = "Jia et al., arXiv:1807.11205 2018; Cho et al., BlueConnect, SysML 2019; "
                 "NCCL 2.28 src/device/all_reduce.h (ring primitives)",
    .ops = CS_OP_BIT(CS_OP_ALL_REDUCE) | CS_OP_BIT(CS_OP_REDUCE_SCATTER)
           | CS_OP_BIT(CS_OP_ALL_GATHER) | CS_OP_BIT(CS_OP_BROADCAST) | CS_OP_BIT(CS_OP_REDUCE),
    .supports = hier_supports,
    .build = hier_build,
};
