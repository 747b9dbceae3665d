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
    g_autoptr(CsNodeGroups) nodes
        = cs_collnet_nodes(args->topo, args->nranks, args->proto, "CollNet Direct", error);
    if (nodes == NULL)
        return NULL;
    return cs_collnet_direct_schedule(args, nodes, collnet_direct_chunk(args), FALSE);
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
