// SPDX-License-Identifier: MIT
/* NCCL's point-to-point plan (scatter, gather, all-to-all, sendrecv).
 *
 * nccl-tests runs these as ncclSend/ncclRecv to every peer in one group, and NCCL stripes each
 * peer's message over several channels (NCCL src/graph/paths.cc ncclTopoGetNchannels,
 * ncclTopoComputeP2pChannels; src/enqueue.cc scheduleP2pTasksToPlan, addP2pToPlan;
 * src/init.cc computeBuffSizes), as of the release a run names (CsPredictOptions.nccl_release;
 * the newest, 2.30, when none):
 * - p2pnChannels: the collective channel count, at most 32, rounded up to a power of two;
 * - channels per peer (p2pnChannelsPerPeer): the minimum over the peers, rounded up to a power
 *   of two, at most p2pnChannels. A peer in the GPU's NVLink domain gets 2 per NVLink of the
 *   path (2 over PCIe or shared memory). A peer beyond it, over the network, gets
 *   NCCL_NCHANNELS_PER_NET_PEER (2) before 2.20.3; from 2.20.3 on 2, halved while 2 x nRanks
 *   exceeds 4 x p2pnChannels, or the GPU's NICs if more (those it needs to match its link to
 *   the CPU, counted only where that link is direct, not behind a PCIe switch); from 2.29.2
 *   on its NICs or one channel per 14 GB/s of their bandwidth (NCCL_P2P_PER_CHANNEL_NET_BW),
 *   whichever is more, and across nodes the per-peer count is then halved until
 *   p2pnChannels holds every peer in one round of 8-peer batches
 *   (NCCL_MAX_DEV_WORK_P2P_PER_BATCH);
 * - a message of b bytes starts on min(nChannelsMin, b / minPart) channels, nChannelsMin being
 *   the per-peer count halved until nChannelsMin x nRanks <= p2pnChannels, and doubles while
 *   a part exceeds maxPart (up to the per-peer count): minPart = step / 8 and maxPart =
 *   32 steps on one node, step / 2 and one step across nodes;
 * - the protocol is LL up to 16 KiB (NCCL_P2P_LL_THRESHOLD) per channel, Simple beyond (never
 *   LL128): per channel of the per-peer count before 2.29.2, per channel of the message
 *   (counted with Simple's step) from 2.29.2 on; a peer over the network has no LL buffer
 *   (NCCL_ALLOC_P2P_NET_LL_BUFFERS, 0 since 2.14.3), so across nodes Simple at every size;
 * - a Simple step is NCCL_P2P_NET_CHUNKSIZE (128 KiB; twice that across nodes of Grace hosts
 *   with Blackwell GPUs from 2.29.2 on) across nodes, NCCL_P2P_NVL_CHUNKSIZE (512 KiB) where
 *   every GPU pair talks over NVLink, NCCL_P2P_PCI_CHUNKSIZE (128 KiB) otherwise; an LL step is
 *   one LL slot. A message over the network moves in smaller chunks when it is small: from
 *   2.22.3 a quarter of a Simple step below one step, half a step below eight (addP2pToPlan).
 * Releases before 2.22.3 decided the protocol and the network chunk per part of a message
 *   (addP2pToPlan per part, ncclProxyComputeP2p; parts cut by calcP2pChunkSize): they are
 *   planned with 2.22.3's rules here.
 * Nodes are NCCL's: the racks of a multi-node NVLink domain (GB200 NVL72) count as one.
 * Simplified here: the NVLink count, the all-NVLink test and the NICs come from rank 0 (NCCL
 * takes every local GPU and peer); a GPU's link to the CPU is its first link toward its NIC
 * (templates rarely hold the CPU); NCCL's 4 KiB rounding of parts and its batching of rounds
 * across nodes (direct.c) are not modelled. RCCL traces take the rules of the NCCL release
 * their number names. */
#include "predict/predict-private.h"

#include <string.h>

#include "base/trace.h"

#define P2P_LL_THRESHOLD_BYTES 16384
#define P2P_PEERS_PER_BATCH 8
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

/* NCCL releases whose point-to-point plan changed (NCCL_VERSION_CODE): 2.20.3 gave a network
 * peer channels from its GPU's NICs; 2.29.2 counted them by bandwidth, gave fewer per peer
 * across nodes, counted a message's channels before its protocol and doubled Grace's chunks. */
#define RELEASE_NET_NICS 22003
#define RELEASE_NET_BW 22902

/* Whether the rules of @code apply in @release (0: the newest, where all do). */
static gboolean
since(int release, int code)
{
    return release <= 0 || release >= code;
}

static int
div_up(int a, int b)
{
    return (a + b - 1) / b;
}

/* Whether ranks @a and @b talk over the network: on two nodes, not joined by NVLink (the racks
 * of a multi-node NVLink domain are one NCCL node). */
static gboolean
over_network(const CsTopo *topo, int a, int b)
{
    return cs_topo_rank_node(topo, a) != cs_topo_rank_node(topo, b)
           && cs_topo_rank_island(topo, a) != cs_topo_rank_island(topo, b);
}

/* The first rank of the first @nranks that rank 0 reaches over the network, -1 when none. */
static int
network_peer(const CsTopo *topo, int nranks)
{
    for (int r = 1; r < nranks && r < cs_topo_n_ranks(topo); r++)
        if (over_network(topo, 0, r))
            return r;
    return -1;
}

/* What rank 0's GPU reaches the network with, as ncclTopoGetLocalNetCountByBw counts it:
 * the NICs its channels cycle over, in channel order, until their bandwidth (NCCL's path
 * bandwidth, GB/s: the narrowest link from the GPU through the NIC's port) reaches the GPU's
 * own link toward them. @direct_cpu: NCCL before 2.29.2 reads that link only where it leads
 * straight to a CPU (a GPU behind a PCIe switch counts no NIC there). */
static void
local_nics(const CsTopo *topo, int peer, gboolean direct_cpu, int *count, double *bw_GBps)
{
    const CsRankNics nics = cs_topo_rank_nics(topo, 0);
    *count = 0;
    *bw_GBps = 0.0;
    for (int c = 0; c < nics.used && c < CS_TOPO_MAX_RANK_NICS; c++) {
        const CsRoute *route = cs_topo_route_channel(topo, 0, peer, c);
        if (route == NULL || route->n_links == 0)
            return;
        const CsLink *first = cs_topo_link(topo, route->links[0]);
        if (direct_cpu && cs_topo_device(topo, first->dst)->kind != CS_DEVICE_CPU)
            return;
        const double gpu_GBps = first->bw_Bps / 1e9;
        double path_GBps = G_MAXDOUBLE;
        for (int h = 0; h < route->n_links; h++) {
            /* NCCL's figures: a NIC's port speed; PCIe at its usable rate (the efficiency). */
            const CsLink *l = cs_topo_link(topo, route->links[h]);
            const gboolean net = cs_link_kind_class(l->kind) == CS_LINK_CLASS_NET;
            path_GBps = MIN(path_GBps, (net ? l->raw_bw_Bps : l->bw_Bps) / 1e9);
            if (net)
                break;
        }
        /* NCCL up to 2.28 stops before a NIC once the GPU's link is matched, 2.29 after one. */
        if (direct_cpu && *bw_GBps >= gpu_GBps)
            return;
        *bw_GBps += path_GBps;
        (*count)++;
        if (*bw_GBps >= gpu_GBps)
            return;
    }
}

/* The channels NCCL gives a peer over the network (ncclTopoGetNchannels, "Remote rank"). */
static int
network_peer_channels(const CsTopo *topo, int nranks, int peer, int p2p_channels, int release)
{
    int count;
    double bw_GBps;

    if (!since(release, RELEASE_NET_NICS))
        return 2;
    if (since(release, RELEASE_NET_BW)) {
        local_nics(topo, peer, FALSE, &count, &bw_GBps);
        /* "We use at least 1 channel per NIC": 2 where no NIC is found. */
        return count > 0 ? MAX(count, div_up((int)bw_GBps, CS_NCCL_P2P_NET_CHANNEL_GBPS)) : 2;
    }
    local_nics(topo, peer, TRUE, &count, &bw_GBps);
    int most = 2;
    while (most * nranks > p2p_channels * 4 && most > 1)
        most /= 2;
    return MAX(count, most);
}

/* A Grace host with Blackwell GPUs (GB200, GB300): NCCL doubles its network step there. */
static gboolean
grace_blackwell(const CsTopo *topo)
{
    const char *model = cs_topo_device(topo, cs_topo_rank_device(topo, 0))->model;
    if (model == NULL)
        return FALSE;
    g_autofree char *upper = g_ascii_strup(model, -1);
    return strstr(upper, "GB200") != NULL || strstr(upper, "GB300") != NULL;
}

/* NCCL's channel count on a communicator that spans nodes (comm->nChannels): the ring and tree
 * graphs' smaller count from its topology search, as models/nccl_system.c emulates it, doubled
 * by ncclTopoPostset ("Duplication should be complete now", src/graph/connect.cc), and doubled
 * again below 16 on Hopper and later where the ring's intra-node bandwidth passes 45 GB/s
 * ("4 compute channels per search channel"); 0 where the search cannot be emulated. */
static int
nccl_net_channels(const CsTopo *topo, int nranks, int release)
{
    g_autofree char *version = release > 0 ? cs_nccl_version_string(release) : NULL;
    CsNcclSystem system;
    if (!cs_nccl_system_from_topo(topo, nranks, cs_nccl_constants_nearest(version), &system, NULL))
        return 0;
    const CsNcclGraph *ring = &system.graphs[CS_NCCL_ALGO_RING];
    const CsNcclGraph *tree = &system.graphs[CS_NCCL_ALGO_TREE];
    int n = tree->n_channels > 0 ? MIN(ring->n_channels, tree->n_channels) : ring->n_channels;
    if (n <= 0 || system.n_nodes < 2)
        return 0;
    /* MAXCHANNELS was 32 before 2.20; the second doubling took Hopper alone (minCompCap == 90)
     * before 2.25.1, and before 2.20 it went on while 2 n fit MAXCHANNELS (connect.cc). */
    const gboolean old = release > 0 && release < 22000;
    n = MIN(old ? 32 : 64, 2 * n);
    const gboolean arch_ok = since(release, 22501) ? system.arch >= CS_NCCL_ARCH_HOPPER
                                                   : system.arch == CS_NCCL_ARCH_HOPPER;
    if (arch_ok && ring->bw_intra_GBps > 45.0 && (old ? 2 * n <= 32 : n < 16))
        n *= 2;
    return n;
}

typedef struct {
    int p2p_channels;    /* p2pnChannels */
    int per_peer;        /* p2pnChannelsPerPeer: nChannelsMax */
    gint64 simple_step;  /* bytes: p2pChunkSize */
    gboolean multi_node; /* rank 0 reaches some peer over the network: NCCL's nNodes > 1 */
} P2pComm;

static void
p2p_comm(const CsTopo *topo, int nranks, int release, P2pComm *c)
{
    gboolean all_nvlink = TRUE;
    int per_peer = G_MAXINT;

    /* NCCL's nodes are its topology search's: the racks of a multi-node NVLink domain are one
     * (init.cc counts nodes by their rings' first rank). */
    const int remote = network_peer(topo, nranks);
    c->multi_node = remote >= 0;
    const int net_channels = c->multi_node ? nccl_net_channels(topo, nranks, release) : 0;
    /* p2pnChannels before it is rounded up to a power of two: what NCCL up to 2.28 weighs a
     * network peer's channels against (ncclTopoGetNchannels runs first). */
    const int unrounded
        = MIN(net_channels > 0 ? net_channels : cs_predict_coll_channels_max(topo, nranks), 32);
    c->p2p_channels = pow2_up(unrounded);
    for (int peer = 1; peer < nranks && peer < cs_topo_n_ranks(topo); peer++) {
        int lanes = route_nvlink_lanes(topo, peer);
        all_nvlink = all_nvlink && lanes > 0;
        if (!over_network(topo, 0, peer))
            per_peer = MIN(per_peer, 2 * MAX(1, lanes));
    }
    if (c->multi_node)
        per_peer = MIN(per_peer, network_peer_channels(topo, nranks, remote, unrounded, release));
    c->per_peer = pow2_up(MIN(per_peer, c->p2p_channels));
    if (c->multi_node && since(release, RELEASE_NET_BW))
        while (c->per_peer * div_up(nranks, P2P_PEERS_PER_BATCH) > c->p2p_channels
               && c->per_peer > 1)
            c->per_peer /= 2;
    c->simple_step = c->multi_node ? P2P_NET_CHUNK_BYTES
                     : all_nvlink  ? P2P_NVL_CHUNK_BYTES
                                   : P2P_PCI_CHUNK_BYTES;
    if (c->multi_node && since(release, RELEASE_NET_BW) && grace_blackwell(topo))
        c->simple_step *= 2;
}

/* The bytes each peer's message carries in an nccl-tests run of @op at @size_bytes. */
static gint64
p2p_peer_bytes(CsOp op, gint64 size_bytes, int nranks)
{
    return cs_op_size(op, size_bytes, CS_DTYPE_INT8, MAX(nranks, 1)).block_bytes;
}

/* The channels a message of @b bytes is striped over, its parts sized for a @step (NCCL's
 * nChannels[dir]). */
static int
message_channels(const P2pComm *c, int n_min, gint64 b, gint64 step)
{
    gint64 min_part = c->multi_node ? step / 2 : step / 8;
    gint64 max_part = c->multi_node ? step : step * 32;
    int n = (int)MIN((gint64)n_min, (b + min_part - 1) / min_part);
    gint64 part = MAX(min_part, (b + n - 1) / n);
    while (part > max_part && n <= c->per_peer / 2) {
        n *= 2;
        part = (b + n - 1) / n;
    }
    return n;
}

/* NCCL's plan when @algo runs @op as grouped send/recv on GPU ranks (FALSE otherwise), for
 * messages carried with @proto under NCCL @release: LL up to the threshold, Simple beyond
 * (@plan->proto says which one NCCL would take); each of the P - 1 peers' messages striped as
 * addP2pToPlan does. */
gboolean
cs_predict_p2p_plan(const CsTopo *topo, const CsAlgo *algo, CsOp op, CsProto proto,
                    gint64 size_bytes, int nranks, int release, P2pPlan *plan)
{
    if (!is_nccl_p2p(topo, algo, op, nranks))
        return FALSE;
    P2pComm c;
    p2p_comm(topo, nranks, release, &c);
    gint64 b = MAX(p2p_peer_bytes(op, size_bytes, nranks), 1);

    int n_min = c.per_peer;
    while (n_min * nranks > c.p2p_channels && n_min > 1)
        n_min /= 2;
    const gint64 ll_step = cs_proto_info(CS_PROTO_LL)->buffer_bytes / CS_NCCL_STEPS;
    int n;
    if (since(release, RELEASE_NET_BW)) {
        /* Channels first, as Simple would cut the message; LL where each carries little. */
        n = message_channels(&c, n_min, b, c.simple_step);
        plan->proto = b <= (gint64)n * P2P_LL_THRESHOLD_BYTES ? CS_PROTO_LL : CS_PROTO_SIMPLE;
    }
    else {
        plan->proto
            = b <= (gint64)c.per_peer * P2P_LL_THRESHOLD_BYTES ? CS_PROTO_LL : CS_PROTO_SIMPLE;
        n = message_channels(&c, n_min, b, proto == CS_PROTO_LL ? ll_step : c.simple_step);
    }
    /* A peer over the network has no LL buffer (NCCL_ALLOC_P2P_NET_LL_BUFFERS is 0 since
     * 2.14.3: its p2p connections share the proxy's Simple buffers, src/transport/net.cc), so
     * its messages are Simple at every size; they are the exchange's critical path, and the
     * schedule carries one protocol. */
    if (c.multi_node)
        plan->proto = CS_PROTO_SIMPLE;
    plan->per_peer = MIN(n, c.p2p_channels);
    /* sendrecv talks to one peer each way, in one round on the same channels. */
    const int peers = op == CS_OP_SEND_RECV ? MIN(nranks - 1, 1) : nranks - 1;
    plan->channels = MAX(1, MIN(c.p2p_channels, peers * plan->per_peer));
    plan->chunk_bytes = proto == CS_PROTO_SIMPLE ? c.simple_step : 0;
    /* A message over the network: a quarter of a Simple step below one step, half a step
     * (Simple's, or half an LL slot's data) below eight steps. */
    plan->net_chunk_bytes = 0;
    if (c.multi_node) {
        const gint64 step = proto == CS_PROTO_SIMPLE ? c.simple_step : ll_step;
        const gint64 data = proto == CS_PROTO_SIMPLE ? step : step / 2;
        if (proto == CS_PROTO_SIMPLE && b < step)
            plan->net_chunk_bytes = data / 4;
        else if (b < 8 * step)
            plan->net_chunk_bytes = data / 2;
    }
    return TRUE;
}

int
cs_predict_peer_channels_at(const CsTopo *topo, const CsAlgo *algo, CsOp op, CsProto proto,
                            gint64 size_bytes, int nranks, int release)
{
    g_return_val_if_fail(topo != NULL && algo != NULL, 0);
    P2pPlan plan;
    if (!cs_predict_p2p_plan(topo, algo, op, proto, size_bytes, nranks, release, &plan))
        return 0;
    return plan.per_peer;
}

int
cs_predict_peer_channels(const CsTopo *topo, const CsAlgo *algo, CsOp op, CsProto proto,
                         gint64 size_bytes, int nranks)
{
    return cs_predict_peer_channels_at(topo, algo, op, proto, size_bytes, nranks, 0);
}
