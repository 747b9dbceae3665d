// SPDX-License-Identifier: MIT
/* NCCL's point-to-point plan (scatter, gather, all-to-all, sendrecv).
 *
 * nccl-tests runs these as ncclSend/ncclRecv to every peer in one group, and NCCL stripes each
 * peer's message over several channels (NCCL 2.28 src/graph/paths.cc
 * ncclTopoComputeP2pChannels, ncclTopoGetNchannels; src/enqueue.cc scheduleP2pTasksToPlan,
 * addP2pToPlan; src/init.cc p2pChunkSize):
 * - p2pnChannels: the collective channel count, at most 32, rounded up to a power of two;
 * - channels per peer: 2 per NVLink of the path (2 for PCIe, shared memory and the network),
 *   the minimum over the peers, at most p2pnChannels, rounded up to a power of two;
 * - a message of b bytes starts on min(nChannelsMin, b / minPart) channels, nChannelsMin being
 *   the per-peer count halved until nChannelsMin x nRanks <= p2pnChannels, and doubles while
 *   a part exceeds maxPart (up to the per-peer count): minPart = step / 8 and maxPart =
 *   32 steps on one node, step / 2 and one step across nodes;
 * - the protocol is LL up to 16 KiB (NCCL_P2P_LL_THRESHOLD) per channel of the per-peer
 *   count, Simple beyond (never LL128); a Simple step is NCCL_P2P_NET_CHUNKSIZE (128 KiB)
 *   across nodes, NCCL_P2P_NVL_CHUNKSIZE (512 KiB) where every GPU pair talks over NVLink,
 *   NCCL_P2P_PCI_CHUNKSIZE (128 KiB) otherwise; an LL step is one LL slot.
 * Simplified here: the NVLink count and the all-NVLink test come from rank 0's routes (NCCL
 * takes every local pair); a network peer gets 2 channels (NCCL scales that with the NICs
 * and the rank count); NCCL's smaller network chunks for small messages, its 4 KiB rounding
 * of parts and its batching of rounds across nodes (direct.c) are not modelled. */
#include "predict/predict-private.h"

#define P2P_LL_THRESHOLD_BYTES 16384
#define P2P_NET_CHUNK_BYTES 131072
#define P2P_NVL_CHUNK_BYTES 524288
#define P2P_PCI_CHUNK_BYTES 131072

/* Whether @op on @algo runs as NCCL's grouped send/recv: on ranks that are all GPUs (a CPU
 * rank runs MPI's Simple messages, not NCCL's LL). */
static gboolean
is_nccl_p2p(const CsTopo *topo, const CsAlgo *algo, CsOp op, int nranks)
{
    if (g_strcmp0(algo->name, "direct") != 0)
        return FALSE;
    if (!is_p2p_op(op))
        return FALSE;
    for (int r = 0; r < nranks; r++)
        if (cs_topo_device(topo, cs_topo_rank_device(topo, r))->kind != CS_DEVICE_GPU)
            return FALSE;
    return TRUE;
}

static int
pow2_up(int n)
{
    int p = 1;
    while (p < n)
        p *= 2;
    return p;
}

/* NVLink lanes on the route from rank 0 to @peer: its narrowest bond; 0 off NVLink. */
static int
route_nvlink_lanes(const CsTopo *topo, int peer)
{
    const CsRoute *route = cs_topo_route(topo, 0, peer);
    if (route == NULL || route->n_links == 0 || route->link_class != CS_LINK_CLASS_NVLINK)
        return 0;
    int lanes = G_MAXINT;
    for (int i = 0; i < route->n_links; i++)
        lanes = MIN(lanes, cs_topo_link(topo, route->links[i])->count);
    return lanes;
}

typedef struct {
    int p2p_channels;   /* p2pnChannels */
    int per_peer;       /* p2pnChannelsPerPeer: nChannelsMax */
    gint64 simple_step; /* bytes: p2pChunkSize */
    gboolean multi_node;
} P2pComm;

static void
p2p_comm(const CsTopo *topo, int nranks, P2pComm *c)
{
    gboolean all_nvlink = TRUE;
    int per_peer = G_MAXINT;

    c->p2p_channels = pow2_up(MIN(cs_predict_coll_channels_max(topo, nranks), 32));
    c->multi_node = cs_predict_spans_nodes(topo, nranks);
    for (int peer = 1; peer < nranks && peer < cs_topo_n_ranks(topo); peer++) {
        int lanes = route_nvlink_lanes(topo, peer);
        all_nvlink = all_nvlink && lanes > 0;
        per_peer = MIN(per_peer, 2 * MAX(1, lanes));
    }
    c->per_peer = pow2_up(MIN(per_peer, c->p2p_channels));
    c->simple_step = c->multi_node ? P2P_NET_CHUNK_BYTES
                     : all_nvlink  ? P2P_NVL_CHUNK_BYTES
                                   : P2P_PCI_CHUNK_BYTES;
}

/* The bytes each peer's message carries in an nccl-tests run of @op at @size_bytes. */
static gint64
p2p_peer_bytes(CsOp op, gint64 size_bytes, int nranks)
{
    return cs_op_size(op, size_bytes, CS_DTYPE_INT8, MAX(nranks, 1)).block_bytes;
}

/* NCCL's plan when @algo runs @op as grouped send/recv on GPU ranks (FALSE otherwise), for
 * messages carried with @proto: LL up to the threshold, Simple beyond (@plan->proto says which
 * one NCCL would take); each of the P - 1 peers' messages striped as addP2pToPlan does. */
gboolean
cs_predict_p2p_plan(const CsTopo *topo, const CsAlgo *algo, CsOp op, CsProto proto,
                    gint64 size_bytes, int nranks, P2pPlan *plan)
{
    if (!is_nccl_p2p(topo, algo, op, nranks))
        return FALSE;
    P2pComm c;
    p2p_comm(topo, nranks, &c);
    gint64 b = MAX(p2p_peer_bytes(op, size_bytes, nranks), 1);
    plan->proto = b <= (gint64)c.per_peer * P2P_LL_THRESHOLD_BYTES ? CS_PROTO_LL : CS_PROTO_SIMPLE;

    int n_min = c.per_peer;
    while (n_min * nranks > c.p2p_channels && n_min > 1)
        n_min /= 2;
    gint64 step = proto == CS_PROTO_LL ? cs_proto_info(CS_PROTO_LL)->buffer_bytes / CS_NCCL_STEPS
                                       : c.simple_step;
    gint64 min_part = c.multi_node ? step / 2 : step / 8;
    gint64 max_part = c.multi_node ? step : step * 32;
    int n = (int)MIN((gint64)n_min, (b + min_part - 1) / min_part);
    gint64 part = MAX(min_part, (b + n - 1) / n);
    while (part > max_part && n <= c.per_peer / 2) {
        n *= 2;
        part = (b + n - 1) / n;
    }
    plan->per_peer = MIN(n, c.p2p_channels);
    /* sendrecv talks to one peer each way, in one round on the same channels. */
    const int peers = op == CS_OP_SEND_RECV ? MIN(nranks - 1, 1) : nranks - 1;
    plan->channels = MAX(1, MIN(c.p2p_channels, peers * plan->per_peer));
    plan->chunk_bytes = proto == CS_PROTO_SIMPLE ? c.simple_step : 0;
    return TRUE;
}

int
cs_predict_peer_channels(const CsTopo *topo, const CsAlgo *algo, CsOp op, CsProto proto,
                         gint64 size_bytes, int nranks)
{
    g_return_val_if_fail(topo != NULL && algo != NULL, 0);
    P2pPlan plan;
    if (!cs_predict_p2p_plan(topo, algo, op, proto, size_bytes, nranks, &plan))
        return 0;
    return plan.per_peer;
}
