// SPDX-License-Identifier: MIT
/* CollNet Direct: all-reduce across nodes in which the InfiniBand switches reduce (SHARP),
 * the algorithm NCCL picks for all-reduce on a SHARP fabric with NVSwitch nodes
 * (NCCL_COLLNET_ENABLE=1 and the SHARP net plugin).
 *
 * Sources:
 *   NCCL 2.28.9: src/device/all_reduce.h (RunWorkColl<AllReduce, COLLNET_DIRECT, SIMPLE>:
 *   "Scatter" warps send each rank's data to the node's heads, one part per head; the head's
 *   "Reduce, send to network" warps recvReduceDirectSend the local contributions to the
 *   CollNet connection; the "Recv from network, broadcast" warps take the network's result
 *   and directRecvCopyDirectSend it to the local ranks, which "Gather" it),
 *   src/graph/connect.cc (connectCollNet: one head per NIC, at most NCCL_MAX_DIRECT_ARITY + 1
 *   = 8 local ranks), src/transport/coll_net.cc (the CollNet transport: a head's send and
 *   receive go to the network plugin, whose iallreduce the switch computes), src/enqueue.cc
 *   (the chunk: 512 KiB halved for small sizes, depth 2), src/graph/tuning.cc (CollNetDirect
 *   is Simple only, needs NVSwitches, and nodes > 1 with collnetEnable).
 *   R. L. Graham et al., "Scalable Hierarchical Aggregation Protocol (SHArP): a hardware
 *   architecture for efficient data reduction", COMHPC 2016: the switch reduces the streams
 *   of its children and returns the result down the aggregation tree.
 *
 * Structure, for N nodes of L ranks with H heads each (one per NIC, H <= L; local rank
 * ceil(h L / H) is head h, the first GPU of NIC h): a channel's data is cut into H shards,
 * head h owns shard h. Per chunk: (1) every local rank sends shard h to head h, which
 * reduces the L contributions into its output (the scatter + reduce warps); (2) heads h of
 * all N nodes all-reduce their shard in the network (cs_pipetree_sharp_allreduce(): the
 * rail's SHARP switch reduces the N contributions and returns the sum to every head, the
 * IR's in-switch reduction and multicast flags, engine.c "Shared hops"); (3) head h sends
 * the result to every local rank (broadcast + gather warps). The member whose in-switch
 * reduction the IR routes the sum through rotates over the nodes, chunk by chunk.
 *
 * Traffic per GPU (one head per GPU, H = L) for an all-reduce of S bytes: over NVLink
 * (L-1)/L S out and in for each of the two intra-node phases; into the network S/L up and
 * S/L down, where a ring moves 2 (P-1)/P S / L per GPU across nodes: SHARP halves the
 * network traffic. The switch reduces at the ports' line rate (NVIDIA Quantum-2 datasheet:
 * SHARPv3 at 64 x 400 Gb/s; no separate reduction rate is published), so the links bound
 * it; the member the IR routes the sum through copies it once and reduces nothing (NCCL's
 * head takes the sum with directRecvCopyDirectSend; engine.c mark_switch_sums). The multicast
 * leaves only once the sum reached the root, so a SHARP operation pays the route's latency twice,
 * as NCCL's tuning charges CollNetDirect 31 us on the network where a ring pays 14 per hop
 * (tuning.cc hwLatencies NET, Simple). */
#include "algos/algo.h"
#include "algos/pipetree.h"

static CsNodeGroups *
nodes_of(const CsAlgoArgs *args)
{
    return args->topo != NULL ? cs_node_groups_new(args->topo, args->nranks, NULL) : NULL;
}

/* ---- Algorithm ---- */

static gboolean
collnet_direct_supports(const CsTopo *topo, CsOp op, int nranks, const char **why)
{
    if (op != CS_OP_ALL_REDUCE) {
        *why = "CollNet Direct is built for all-reduce (NCCL's all-gather and reduce-scatter "
               "over CollNet are not modelled)";
        return FALSE;
    }
    return cs_collnet_supports(topo, nranks, why);
}

/* Each channel's data is cut into one shard per head. */
static int
collnet_direct_parts(const CsAlgoArgs *args)
{
    g_autoptr(CsNodeGroups) nodes = nodes_of(args);

    return nodes != NULL && args->topo != NULL ? cs_collnet_heads(args->topo, nodes) : 1;
}

/* NCCL 2.28.9 enqueue.cc: the Simple step (NCCL_BUFFSIZE / NCCL_STEPS = 512 KiB) halved
 * while the size gives fewer than depth x 64 chunks per head and channel (to 128 KiB), then
 * depth x 8 (to 32 KiB); connect.cc sets collnetDirect.depth to 2 where a rank has heads
 * above or below it, as every rank of a multi-GPU node does, else 1. */
static gint64
collnet_direct_chunk(const CsAlgoArgs *args)
{
    g_autoptr(CsNodeGroups) nodes = nodes_of(args);
    gint64 chunk = 512 * 1024;
    int es = cs_dtype_size(args->dtype);

    if (args->chunk_bytes > 0)
        return MAX(args->chunk_bytes / es, 1) * es;
    if (nodes != NULL) {
        int heads = cs_collnet_heads(args->topo, nodes);
        int depth = cs_node_groups_size(nodes, 0) > 1 ? 2 : 1;
        gint64 ops = (gint64)args->n_channels * heads;
        gint64 total = cs_op_size(args->op, args->size_bytes, args->dtype, args->nranks).size_bytes;
        while (total / (ops * chunk) < depth * 64 && chunk > 131072)
            chunk /= 2;
        while (total / (ops * chunk) < depth * 8 && chunk > 32768)
            chunk /= 2;
    }
    return MAX(chunk / es, 1) * es;
}

static CsSchedule *
collnet_direct_build(const CsAlgoArgs *args, GError **error)
{
    int p = args->nranks;
    int es = cs_dtype_size(args->dtype);
    CsOpSize size = cs_op_size(args->op, args->size_bytes, args->dtype, p);
    g_autoptr(CsNodeGroups) nodes = NULL;
    g_autoptr(CsStepSink) sink = NULL;
    g_autofree int *m = NULL;
    g_autofree int *rail = NULL;
    g_autofree CsBlockMove *blocks = NULL;
    g_autofree gint64 *shard_first = NULL;
    g_autofree gint64 *shard_len = NULL;
    CsSchedule *sched;
    gint64 chunk_el;
    int n, l, heads;

    nodes = cs_collnet_nodes(args->topo, p, args->proto, "CollNet Direct", error);
    if (nodes == NULL)
        return NULL;
    n = nodes->n_groups;
    l = cs_node_groups_size(nodes, 0);
    heads = cs_collnet_heads(args->topo, nodes);
    chunk_el = collnet_direct_chunk(args) / es;
    sink = cs_step_sink_new(p);
    m = g_new(int, l);
    rail = g_new(int, n);
    blocks = g_new0(CsBlockMove, l);
    shard_first = g_new(gint64, heads);
    shard_len = g_new(gint64, heads);
    sched = cs_algo_schedule_new(args);

    for (int c = 0; c < args->n_channels; c++) {
        gint64 first, len, max_len = 0;

        cs_algo_split(size.recv_bytes / es, args->n_channels, c, &first, &len);
        for (int h = 0; h < heads; h++) {
            cs_algo_split(len, heads, h, &shard_first[h], &shard_len[h]);
            shard_first[h] += first;
            max_len = MAX(max_len, shard_len[h]);
        }
        for (gint64 i = 0; i * chunk_el < max_len; i++) {
            /* Block x of the local phases is head x's piece; other ranks own nothing. */
            for (int x = 0; x < l; x++)
                blocks[x] = (CsBlockMove){ CS_BUF_INPUT, 0, CS_BUF_OUTPUT, 0, 0 };
            for (int h = 0; h < heads; h++) {
                gint64 at = (shard_first[h] + i * chunk_el) * es;
                gint64 bytes = CLAMP(shard_len[h] - i * chunk_el, 0, chunk_el) * es;
                blocks[cs_collnet_head_local(h, heads, l)]
                    = (CsBlockMove){ CS_BUF_INPUT, at, CS_BUF_OUTPUT, at, bytes };
            }
            for (int g = 0; g < n; g++) {
                for (int x = 0; x < l; x++)
                    m[x] = cs_node_groups_rank(nodes, g, x);
                cs_pipetree_direct_reduce_scatter(sink, c, m, l, blocks, i, (int)i, FALSE);
            }
            for (int h = 0; h < heads; h++) {
                const CsBlockMove *b = &blocks[cs_collnet_head_local(h, heads, l)];
                for (int g = 0; g < n; g++)
                    rail[g] = cs_node_groups_rank(nodes, g, cs_collnet_head_local(h, heads, l));
                cs_pipetree_sharp_allreduce(sink, c, rail, n, (int)((i + h) % n), CS_BUF_OUTPUT,
                                            b->dst_off, b->bytes, i + 2, (int)i);
            }
            for (int x = 0; x < l; x++)
                blocks[x].src_buf = CS_BUF_OUTPUT;
            for (int g = 0; g < n; g++) {
                for (int x = 0; x < l; x++)
                    m[x] = cs_node_groups_rank(nodes, g, x);
                cs_pipetree_direct_all_gather(sink, c, m, l, blocks, i + 6, (int)i, FALSE);
            }
        }
    }
    cs_step_sink_flush(sink, sched);
    return sched;
}

const CsAlgo cs_algo_collnet_direct = {
    .name = "collnet_direct",
    .summary = "CollNet Direct: reduce-scatter to the NIC heads, SHARP all-reduce in the "
               "switch, gather back (across nodes, Simple)",
    .reference = "NCCL 2.28.9 src/device/all_reduce.h (COLLNET_DIRECT), src/graph/connect.cc, "
                 "src/transport/coll_net.cc, src/enqueue.cc; Graham et al., COMHPC 2016 (SHArP)",
    .ops = CS_OP_BIT(CS_OP_ALL_REDUCE),
    .supports = collnet_direct_supports,
    .build = collnet_direct_build,
    .chunk = collnet_direct_chunk,
    .parts = collnet_direct_parts,
};
