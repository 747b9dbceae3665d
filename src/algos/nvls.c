// SPDX-License-Identifier: MIT
/* NVLink SHARP (NVLS): all-reduce, reduce-scatter and all-gather in which the NVSwitch itself
 * reduces (multimem.ld_reduce) and multicasts (multimem.st), on one NVLink domain whose
 * switch declares multicast_reduction.
 *
 * Sources:
 *   NCCL 2.28: src/device/all_reduce.h (RunWorkColl<AllReduce, NVLS>: scatter to the
 *   multicast buffer, ld_reduce of this rank's head chunk, multicast store of the result),
 *   src/device/reduce_scatter.h and all_gather.h (NVLS variants), src/transport/nvls.cc
 *   (one NVLS head per local rank), src/enqueue.cc (NVLS chunk: NCCL_NVLS_CHUNKSIZE =
 *   128 KiB, halved for small sizes), src/graph/tuning.cc (NVLS is Simple only).
 *   NVIDIA, "NVLink SHARP" (Hopper architecture whitepaper, 2022): in-switch reduction and
 *   multicast on third-generation NVSwitch.
 *
 * Modelling in the IR. The schedule IR has rank-to-rank steps only, so the switch's work is
 * written as the messages it stands for, flagged so that the engine charges what NVLS really
 * moves (schedule.h CsStepFlags). The buffer is cut into P shards, rank j is the "head" of
 * shard j;
 *   reduce-scatter phase ("ld_reduce"): every rank sends shard j to rank j, and rank j
 *     RECV_REDUCEs one message from each peer into its output (P-1 receives). The P-1
 *     messages into j are one in-switch reduction: the one from j-1 leads it
 *     (CS_STEP_FLAG_REDUCE_SELF), the others share its last hop (SHARED_LAST_HOP);
 *   all-gather phase ("multimem.st"): rank j SENDs its reduced shard to every peer, one
 *     multicast: the send to j+1 leads it (MULTICAST_SELF), the others share its first hop
 *     (SHARED_FIRST_HOP).
 * No message is forwarded: each crosses the switch once, and a phase's P-1 sends leave back
 * to back (a send step ends when its last byte has left, engine.c), so a phase costs one
 * switch traversal plus serialization, not the P-1 store-and-forward hops of a ring; the
 * checker's round count (one per step) is 2 (P-1) all the same.
 *
 * Traffic, per GPU and direction, for an all-reduce of S bytes (shards of S/P). NCCL's NVLS
 * buffers (src/transport/nvls.cc) are multicast objects backed by every GPU's memory: the
 * scatter and gather are copies into and out of the GPU's own backing (no link), ld_reduce
 * on the multicast address reads every member's copy through the switch, the head's own
 * included, and multimem.st writes every member's copy, the issuer's own included. So GPU r's
 * link to the switch carries
 *   up:   S (each of its P shards read once, by its head's ld_reduce) + S/P (its multicast
 *         store of its reduced shard) = (P+1)/P S;
 *   down: S/P (the sum of its own shard, returned by the switch) + S (every head's multicast,
 *         its own included) = (P+1)/P S.
 * With the flags the IR charges exactly that: up (P-1)/P S (its sends of the other shards)
 * + S/P (REDUCE_SELF on the message that leads its own shard's reduction) + S/P (its
 * multicast leader); down S/P (that leader's last hop) + (P-1)/P S (the other heads'
 * multicasts) + S/P (MULTICAST_SELF). A ring moves 2 (P-1)/P S each way, so NVLS moves
 * (P+1)/(2 (P-1)) of a ring's bytes (9/14 at P = 8), and the engine gives NVLS traffic
 * NCCL's nvlsEfficiency of the links (0.85 on Hopper, tuning.cc). The receives still count
 * the P-1 reductions per shard on the head GPU that the switch does in NCCL (gamma is small
 * beside the link time). Reduce-scatter and all-gather use one phase each: up S and down
 * S/P (reduce-scatter of S in all), up S/P and down S (all-gather).
 *
 * Pipelining: channel c carries part c of every shard, in chunks; chunk i's reduce-scatter
 * and chunk i-2's all-gather share a logical time unit and their sends alternate (pipetree.c
 * orders them, the other way round on odd channels), so both directions of every GPU's link
 * carry traffic at once, as NCCL's reduce warps interleave ld_reduce and multimem.st.
 *
 * Across nodes: NVLS + CollNet (SHARP). NCCL runs its NVLS algorithm on several nodes only
 * together with CollNet (NCCL 2.30.7, git 5067397: src/graph/tuning.cc disables NVLS for
 * nNodes > 1 without collnetEnable, src/enqueue.cc skips it without collNetSupport), all-reduce
 * only here. RunWorkColl<AllReduce, NVLS, SIMPLE>'s !oneNode path (src/device/all_reduce.h):
 * the scatter warps put every rank's data into the NVLS buffer (nvls->up), one part per head;
 * head h's "Reduce, send to network" warps ld_reduce its part through the switch (nvls->down)
 * and send it to the CollNet connection (nvls->out, set by connectNvls in
 * src/graph/connect.cc where collnetEnable and the rank is a head); its "Recv from network,
 * broadcast" warps take the network's all-reduced part and multicast it (multimem.st on
 * nvls->down); the gather warps copy it out. The heads are the first GPUs of the NVLS graph's
 * channels, one per NIC (connect.cc nvlsHeads; src/transport/nvls.cc nHeads), and head h of
 * every node joins the same CollNet all-reduce, which the SHARP switch computes. So the
 * schedule is CollNet Direct's (collnet_direct.c) with NVLS's in-switch phases: (1) the NVLS
 * reduce-scatter above among the node's L ranks into its H heads (H = cs_collnet_heads(): one
 * per NIC, at most L), (2) cs_pipetree_sharp_allreduce() of head h's part over the heads h of
 * all N nodes, (3) the NVLS multicast from head h to the node. The chunk is NCCL's NVLS rule
 * with nHeads = H (enqueue.cc; its 32 KiB cap where NCCL's own NVLS bandwidth estimate is
 * under 150 GB/s is not applied: the schedule knows no tuning table). NCCL's channel count
 * for it is min(nvlsChannels, nChannels) (enqueue.cc); the predictor gives nvlsChannels
 * (cs_predict_default_channels()), the same where the communicator has at least that many
 * channels (16 against 32 on the shipped H100 clusters). Each NVLink domain must be one node
 * (NCCL's NVLS group is the node's local ranks). Per GPU (H = L) the network carries S/L up and S/L
 * down, as CollNet Direct; the NVLink ports carry NVLS's (L+1)/L S each way instead of Direct's 2
 * (L-1)/L S.
 *
 * Why in this file: this is NCCL's one algorithm NVLS (NCCL_ALGO_NVLS) on more than one node,
 * so collsim's "nvls" maps to it one-to-one (models/nccl_names.c) and NCCL's pick of NVLS
 * across nodes lands here; NVLS inside nodes + a tree across them is NCCL's NVLSTree, the
 * separate algorithm "nvls_tree". */
#include "algos/algo.h"
#include "algos/pipetree.h"

/* ---- Across nodes: NVLS + CollNet ---- */

/* NVLS on @domains (several) as NCCL runs it: with CollNet on a SHARP fabric, all-reduce,
 * every NVLink domain one node. */
static gboolean
nvls_collnet_supports(const CsTopo *topo, CsOp op, int nranks, const CsNodeGroups *domains,
                      const char **why)
{
    g_autoptr(CsNodeGroups) nodes = NULL;

    if (!cs_topo_has_sharp(topo)) {
        *why = "the ranks span several NVLink domains: NVLS across nodes runs with CollNet on a "
               "SHARP fabric (\"sharp\": true; NCCL tuning.cc), else use nvls_tree";
        return FALSE;
    }
    if (op != CS_OP_ALL_REDUCE) {
        *why = "NVLS across nodes (with CollNet) is built for all-reduce only";
        return FALSE;
    }
    if (!cs_collnet_supports(topo, nranks, why))
        return FALSE;
    nodes = cs_node_groups_new(topo, nranks, NULL);
    if (nodes == NULL || nodes->n_groups != domains->n_groups) {
        *why = "NVLS with CollNet needs each NVLink domain to be one node";
        return FALSE;
    }
    return TRUE;
}

/* The node groups of @args when NVLS runs across nodes (with CollNet), else NULL. */
static CsNodeGroups *
collnet_nodes_of(const CsAlgoArgs *args)
{
    g_autoptr(CsNodeGroups) domains = NULL;

    if (args->topo == NULL)
        return NULL;
    domains = cs_node_groups_new_nvlink(args->topo, args->nranks, NULL);
    if (domains == NULL || domains->n_groups < 2)
        return NULL;
    return cs_node_groups_new(args->topo, args->nranks, NULL);
}

/* NCCL 2.30.7 enqueue.cc, NVLS: the step capped at nvlsChunkSize (128 KiB), halved while the
 * size gives fewer than 64, 8, 2 chunks per concurrent op (channels x nHeads). */
static gint64
nvls_collnet_chunk(const CsAlgoArgs *args, const CsNodeGroups *nodes)
{
    CsOpSize size = cs_op_size(args->op, args->size_bytes, args->dtype, args->nranks);

    return cs_pipetree_nvls_chunk(args->chunk_bytes, cs_dtype_size(args->dtype), args->n_channels,
                                  cs_collnet_heads(args->topo, nodes), nodes->n_groups,
                                  size.size_bytes, FALSE);
}

/* The schedule of NVLS + CollNet (this file's header): per channel and chunk, NVLS
 * reduce-scatter into the node's heads, SHARP all-reduce among the heads h of all nodes,
 * NVLS multicast from each head. */
static CsSchedule *
nvls_collnet_build(const CsAlgoArgs *args, GError **error)
{
    g_autoptr(CsNodeGroups) nodes = cs_collnet_nodes(args->topo, args->nranks, args->proto,
                                                     "NVLS across nodes (with CollNet)", error);
    if (nodes == NULL)
        return NULL;
    return cs_collnet_direct_schedule(args, nodes, nvls_collnet_chunk(args, nodes), TRUE);
}

/* ---- Algorithm ---- */

static gboolean
nvls_supports(const CsTopo *topo, CsOp op, int nranks, const char **why)
{
    g_autoptr(CsNodeGroups) domains = NULL;

    if (op != CS_OP_ALL_REDUCE && op != CS_OP_REDUCE_SCATTER && op != CS_OP_ALL_GATHER) {
        *why = "NVLS serves all-reduce, reduce-scatter and all-gather";
        return FALSE;
    }
    if (topo == NULL || !cs_topo_has_nvls(topo)) {
        *why = "needs an NVSwitch with multicast_reduction (NVLink SHARP) in the topology";
        return FALSE;
    }
    domains = cs_node_groups_new_nvlink(topo, nranks, NULL);
    if (domains == NULL) {
        *why = "more ranks than GPUs in the topology";
        return FALSE;
    }
    if (domains->n_groups > 1)
        return nvls_collnet_supports(topo, op, nranks, domains, why);
    return TRUE;
}

/* NCCL's NVLS chunk for @args: on one NVLink domain every rank is a head; across nodes one
 * rank per NIC. */
static gint64
nvls_chunk(const CsAlgoArgs *args)
{
    g_autoptr(CsNodeGroups) nodes = collnet_nodes_of(args);
    if (nodes != NULL)
        return nvls_collnet_chunk(args, nodes);
    CsOpSize size = cs_op_size(args->op, args->size_bytes, args->dtype, args->nranks);

    return cs_pipetree_nvls_chunk(args->chunk_bytes, cs_dtype_size(args->dtype), args->n_channels,
                                  args->nranks, 1, size.size_bytes, FALSE);
}

/* A channel's data is cut into one part per head: every rank on one NVLink domain, one per
 * NIC across nodes. */
static int
nvls_parts(const CsAlgoArgs *args)
{
    g_autoptr(CsNodeGroups) nodes = collnet_nodes_of(args);

    return nodes != NULL ? cs_collnet_heads(args->topo, nodes) : args->nranks;
}

static CsSchedule *
nvls_build(const CsAlgoArgs *args, GError **error)
{
    int p = args->nranks;
    int es = cs_dtype_size(args->dtype);
    int n_channels = args->n_channels;
    CsOpSize size = cs_op_size(args->op, args->size_bytes, args->dtype, p);
    g_autoptr(CsStepSink) sink = NULL;
    g_autofree int *m = NULL;
    g_autofree CsBlockMove *blocks = NULL;
    gint64 chunk_el;
    CsSchedule *sched;

    if (args->proto != CS_PROTO_SIMPLE) {
        g_set_error(error, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_UNSUPPORTED,
                    "NVLS runs only with the Simple protocol (NCCL 2.28 tuning.cc), not %s",
                    cs_proto_name(args->proto));
        return NULL;
    }
    if (args->topo != NULL) {
        g_autoptr(CsNodeGroups) domains = cs_node_groups_new_nvlink(args->topo, p, error);
        if (domains == NULL)
            return NULL;
        if (domains->n_groups > 1) {
            const char *why = NULL;
            if (!nvls_collnet_supports(args->topo, args->op, p, domains, &why)) {
                g_set_error(error, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_UNSUPPORTED, "NVLS: %s",
                            why);
                return NULL;
            }
            return nvls_collnet_build(args, error);
        }
    }
    chunk_el = nvls_chunk(args) / es;
    sink = cs_step_sink_new(p);
    m = g_new(int, p);
    blocks = g_new(CsBlockMove, p);
    for (int x = 0; x < p; x++)
        m[x] = x;
    sched = cs_algo_schedule_new(args);

    for (int c = 0; c < n_channels; c++) {
        if (args->op == CS_OP_ALL_REDUCE) {
            g_autofree gint64 *shard_first = g_new(gint64, p);
            g_autofree gint64 *shard_len = g_new(gint64, p);
            const gint64 max_len = cs_pipetree_channel_shards(size.recv_bytes / es, n_channels, c,
                                                              p, shard_first, shard_len);
            for (gint64 i = 0; i * chunk_el < max_len; i++) {
                for (int x = 0; x < p; x++)
                    blocks[x] = cs_pipetree_shard_chunk(shard_first, shard_len, x, i, chunk_el, es);
                cs_pipetree_direct_reduce_scatter(sink, c, m, p, blocks, i, (int)i, TRUE, 0);
                for (int x = 0; x < p; x++)
                    blocks[x].src_buf = CS_BUF_OUTPUT;
                cs_pipetree_direct_all_gather(sink, c, m, p, blocks, i + 2, (int)i, TRUE, 0);
            }
            continue;
        }

        gint64 first, len;
        gint64 bb = size.block_bytes;
        cs_algo_split(bb / es, n_channels, c, &first, &len);
        for (gint64 i = 0, at = first; at < first + len; i++, at += chunk_el) {
            gint64 off = at * es;
            gint64 bytes = MIN(chunk_el, first + len - at) * es;
            for (int x = 0; x < p; x++) {
                if (args->op == CS_OP_REDUCE_SCATTER)
                    blocks[x]
                        = (CsBlockMove){ CS_BUF_INPUT, x * bb + off, CS_BUF_OUTPUT, off, bytes };
                else
                    blocks[x]
                        = (CsBlockMove){ CS_BUF_INPUT, off, CS_BUF_OUTPUT, x * bb + off, bytes };
            }
            if (args->op == CS_OP_REDUCE_SCATTER) {
                cs_pipetree_direct_reduce_scatter(sink, c, m, p, blocks, i, (int)i, TRUE, 0);
                continue;
            }
            for (int x = 0; x < p; x++)
                cs_step_sink_step(sink, x, i, c, CS_STEP_COPY, -1, -1, CS_BUF_INPUT, off,
                                  CS_BUF_OUTPUT, x * bb + off, bytes, (int)i);
            cs_pipetree_direct_all_gather(sink, c, m, p, blocks, i, (int)i, TRUE, 0);
        }
    }
    cs_step_sink_flush(sink, sched);
    return sched;
}

const CsAlgo cs_algo_nvls = {
    .name = "nvls",
    .summary = "NVLink SHARP: the NVSwitch reduces and multicasts (one NVLink domain; across "
               "nodes all-reduce with CollNet/SHARP between the heads, Simple)",
    .reference = "NCCL 2.28 src/device/all_reduce.h (NVLS), src/transport/nvls.cc, "
                 "src/enqueue.cc; NCCL 2.30.7 (5067397) all_reduce.h NVLS !oneNode, "
                 "connect.cc connectNvls (nvls.out); NVIDIA Hopper whitepaper 2022 (NVLink SHARP)",
    .ops
    = CS_OP_BIT(CS_OP_ALL_REDUCE) | CS_OP_BIT(CS_OP_REDUCE_SCATTER) | CS_OP_BIT(CS_OP_ALL_GATHER),
    .supports = nvls_supports,
    .build = nvls_build,
    .chunk = nvls_chunk,
    .parts = nvls_parts,
};
