// SPDX-License-Identifier: MIT
/* CollNet Chain: all-reduce across nodes as a chain of the node's ranks up to one head, an
 * in-network all-reduce by the SHARP switches among the heads, and the chain back down: NCCL's
 * CollNet on SHARP fabrics whose nodes have no NVSwitch (CollNet Direct needs one), and its
 * latency choice elsewhere.
 *
 * Sources:
 *   NCCL 2.28.9: src/device/all_reduce.h (RunWorkColl<AllReduce, COLLNET_CHAIN, SIMPLE>: half
 *   the threads "Reduce up the chain" (directSend at the chain's end, then
 *   directRecvReduceDirectSend, the head's up being the CollNet connection), the other half
 *   "Broadcast down the chain" (the head receives the network's result, recv == nranks, and
 *   every rank directRecvCopyDirectSend it on)), src/graph/connect.cc (connectCollNet: the
 *   chain follows the CollNet graph's intra-node order, one chain per channel, its head the
 *   GPU of the channel's NIC; collnetChain.depth = ranks per node), src/transport/coll_net.cc,
 *   src/enqueue.cc (chunk min(256 KiB, the Simple step), halved while the size gives fewer
 *   than depth x 64, x 8, x 1 chunks per channel), src/graph/tuning.cc (Simple only; latency
 *   2 (ppn - 1) intra hops + one network operation).
 *   R. L. Graham et al., "Scalable Hierarchical Aggregation Protocol (SHArP)", COMHPC 2016.
 *
 * Structure, for N nodes of L ranks with H heads (one per NIC): channel c's head is head
 * c mod H of every node (collnet_direct.c's heads), its chain the node's ranks from the head
 * on, in local order wrapping around. Per chunk of the channel's data: the chain's far end
 * sends its contribution, each rank up the chain adds its own and passes the sum on
 * (RECV_REDUCE_SEND), the head reduces it with its own into its output; the heads of all N
 * nodes all-reduce it in the network (cs_pipetree_sharp_allreduce(), the in-switch
 * reduction and multicast flags, engine.c "Shared hops"); then each head sends the result
 * down its chain (RECV_COPY_SEND). Every GPU's NIC is some channel's, so with as many
 * channels as NICs every rail carries traffic.
 *
 * Traffic per GPU for an all-reduce of S bytes: S over NVLink each way for the chain (every
 * rank but the end sends the partial sum once, every rank but the head receives the result
 * once), and across nodes S/H up and S/H down per head on average, half of a ring's
 * 2 (P-1)/P S / H. */
#include "algos/algo.h"
#include "algos/pipetree.h"

static CsNodeGroups *
nodes_of(const CsAlgoArgs *args)
{
    return args->topo != NULL ? cs_node_groups_new(args->topo, args->nranks, NULL) : NULL;
}

/* ---- Algorithm ---- */

static gboolean
collnet_chain_supports(const CsTopo *topo, CsOp op, int nranks, const char **why)
{
    if (op != CS_OP_ALL_REDUCE) {
        *why = "CollNet Chain serves all-reduce only (NCCL 2.28 tuning.cc)";
        return FALSE;
    }
    return cs_collnet_supports(topo, nranks, why);
}

/* A channel's data is one part that goes up the chain whole. */
static int
collnet_chain_parts(const CsAlgoArgs *args)
{
    (void)args;
    return 1;
}

/* NCCL 2.28.9 enqueue.cc: min(256 KiB, the Simple step of 512 KiB), halved while the size
 * gives fewer than depth x 64 chunks per channel (to 128 KiB), depth x 8 (to 64 KiB) and
 * depth (to 32 KiB); depth is the ranks per node (connect.cc). */
static gint64
collnet_chain_chunk(const CsAlgoArgs *args)
{
    g_autoptr(CsNodeGroups) nodes = nodes_of(args);
    gint64 chunk = 256 * 1024;
    int es = cs_dtype_size(args->dtype);

    if (args->chunk_bytes > 0)
        return MAX(args->chunk_bytes / es, 1) * es;
    if (nodes != NULL) {
        gint64 depth = cs_node_groups_size(nodes, 0);
        gint64 total = cs_op_size(args->op, args->size_bytes, args->dtype, args->nranks).size_bytes;
        gint64 nch = args->n_channels;
        while (total / (nch * chunk) < depth * 64 && chunk > 131072)
            chunk /= 2;
        while (total / (nch * chunk) < depth * 8 && chunk > 65536)
            chunk /= 2;
        while (total / (nch * chunk) < depth && chunk > 32768)
            chunk /= 2;
    }
    return MAX(chunk / es, 1) * es;
}

static CsSchedule *
collnet_chain_build(const CsAlgoArgs *args, GError **error)
{
    int p = args->nranks;
    int es = cs_dtype_size(args->dtype);
    CsOpSize size = cs_op_size(args->op, args->size_bytes, args->dtype, p);
    g_autoptr(CsNodeGroups) nodes = NULL;
    g_autoptr(CsStepSink) sink = NULL;
    g_autofree int *rail = NULL;
    CsSchedule *sched;
    gint64 chunk_el;
    int n, l, heads;

    nodes = cs_collnet_nodes(args->topo, p, args->proto, "CollNet Chain", error);
    if (nodes == NULL)
        return NULL;
    n = nodes->n_groups;
    l = cs_node_groups_size(nodes, 0);
    heads = cs_collnet_heads(args->topo, nodes);
    chunk_el = collnet_chain_chunk(args) / es;
    sink = cs_step_sink_new(p);
    rail = g_new(int, n);
    sched = cs_algo_schedule_new(args);

    for (int c = 0; c < args->n_channels; c++) {
        int head = cs_collnet_head_local(c % heads, heads, l);
        gint64 first, len;

        cs_algo_split(size.recv_bytes / es, args->n_channels, c, &first, &len);
        for (int g = 0; g < n; g++)
            rail[g] = cs_node_groups_rank(nodes, g, head);
        for (gint64 i = 0; i * chunk_el < len; i++) {
            gint64 at = (first + i * chunk_el) * es;
            gint64 bytes = MIN(chunk_el, len - i * chunk_el) * es;
            /* Chain position k (0 = head) is local rank head + k; it reduces at time i + l - 1
             * - k, the SHARP operation runs from i + l, the result reaches k at i + l + 4 + k. */
            gint64 up = i, sharp = i + l, down = i + l + 4;

            for (int g = 0; g < n; g++) {
                for (int k = 0; k < l; k++) {
                    int r = cs_node_groups_rank(nodes, g, (head + k) % l);
                    int above = k > 0 ? cs_node_groups_rank(nodes, g, (head + k - 1) % l) : -1;
                    int below = k + 1 < l ? cs_node_groups_rank(nodes, g, (head + k + 1) % l) : -1;
                    gint64 t = up + (l - 1 - k);
                    if (l == 1)
                        cs_step_sink_step(sink, r, t, c, CS_STEP_COPY, -1, -1, CS_BUF_INPUT, at,
                                          CS_BUF_OUTPUT, at, bytes, (int)i);
                    else if (k == l - 1)
                        cs_step_sink_step(sink, r, t, c, CS_STEP_SEND, -1, above, CS_BUF_INPUT, at,
                                          CS_BUF_INPUT, at, bytes, (int)i);
                    else if (k > 0)
                        cs_step_sink_step(sink, r, t, c, CS_STEP_RECV_REDUCE_SEND, below, above,
                                          CS_BUF_INPUT, at, CS_BUF_INPUT, at, bytes, (int)i);
                    else
                        cs_step_sink_step(sink, r, t, c, CS_STEP_RECV_REDUCE, below, -1,
                                          CS_BUF_INPUT, at, CS_BUF_OUTPUT, at, bytes, (int)i);
                    if (k == 0 && below >= 0)
                        cs_step_sink_step(sink, r, down, c, CS_STEP_SEND, -1, below, CS_BUF_OUTPUT,
                                          at, CS_BUF_OUTPUT, at, bytes, (int)i);
                    else if (k > 0 && below >= 0)
                        cs_step_sink_step(sink, r, down + k, c, CS_STEP_RECV_COPY_SEND, above,
                                          below, CS_BUF_OUTPUT, at, CS_BUF_OUTPUT, at, bytes,
                                          (int)i);
                    else if (k > 0)
                        cs_step_sink_step(sink, r, down + k, c, CS_STEP_RECV, above, -1,
                                          CS_BUF_OUTPUT, at, CS_BUF_OUTPUT, at, bytes, (int)i);
                }
            }
            cs_pipetree_sharp_allreduce(sink, c, rail, n, (int)(i % n), CS_BUF_OUTPUT, at, bytes,
                                        sharp, (int)i);
        }
    }
    cs_step_sink_flush(sink, sched);
    return sched;
}

const CsAlgo cs_algo_collnet_chain = {
    .name = "collnet_chain",
    .summary = "CollNet Chain: reduce up a chain to the NIC head, SHARP all-reduce in the "
               "switch, broadcast down the chain (across nodes, Simple)",
    .reference = "NCCL 2.28.9 src/device/all_reduce.h (COLLNET_CHAIN), src/graph/connect.cc, "
                 "src/transport/coll_net.cc, src/enqueue.cc; Graham et al., COMHPC 2016 (SHArP)",
    .ops = CS_OP_BIT(CS_OP_ALL_REDUCE),
    .supports = collnet_chain_supports,
    .build = collnet_chain_build,
    .chunk = collnet_chain_chunk,
    .parts = collnet_chain_parts,
};
