// SPDX-License-Identifier: MIT
/* NCCL's channel counts (cs_predict_default_channels()): how many channels each algorithm
 * starts from on a machine, how many small operations, CollNet and NVLS keep, and the
 * pipeline chunk NCCL's Simple rings (and RCCL's Simple trees) use. */
#include "predict/predict-private.h"

#include "algos/allpairs.h"
#include "algos/mesh_rings.h"
#include "algos/pipetree.h"

#include <string.h>

/* NCCL reduces the channel count of small operations until every thread of every channel
 * has work: nc = nBytes / (nThreads * threadThreshold), with threadThreshold 8 B for LL and
 * LL128 and 64 B for Simple (NCCL 2.2x src/enqueue.cc, getNthreads/NCCL_*_THREAD_THRESHOLD),
 * and 512 threads (LL, Simple) or 640 (LL128); Ring's LL threshold is multiplied by the rank
 * count (NCCL 2.30.7 src/graph/tuning.cc: `threadThresholds[NCCL_ALGO_RING][NCCL_PROTO_LL]
 * *= nRanks`, read by topoGetAlgoInfo's "Ring/Tree channel tuning" in src/enqueue.cc), since
 * a ring's LL step carries 1/nRanks of a channel's share. Bytes per channel below which NCCL
 * drops one: */
static gint64
bytes_per_channel_min(CsProto proto, gboolean ring, int nranks)
{
    switch (proto) {
    case CS_PROTO_LL:
        return 512 * 8 * (ring ? MAX(nranks, 1) : 1);
    case CS_PROTO_LL128:
        return 640 * 8;
    case CS_PROTO_SIMPLE:
    default:
        return 512 * 64;
    }
}

/* One node of 8 GPUs fully connected by single xGMI links, all of them in the communicator and
 * no NIC in it (ncclTopoTrimSystem drops the NICs when every rank is on one node and all GPUs
 * are xGMI-connected, RCCL 2.21.5 src/graph/paths.cc): RCCL's parseA2a8P() matches it to
 * rome_model_79 (src/graph/rome_models.cc, ROCm/rccl 2.21.5 to cb829d6), whose ringBase lists
 * 28 rings (14, each directed link in two of them, listed twice). NUMA matching is not
 * modelled: any such node gets the model. */
#define RCCL_MESH8_MODEL_RINGS 28
/* MAXCHANNELS (RCCL src/include/device.h); ncclTopoPostset allows min(CUs, MAXCHANNELS) on
 * gfx942 and gfx950, and their 8-GPU parts have more CUs than that (304 on MI300X, 256 on
 * MI350X/MI355X), with no 64-channel cap on one node without NICs (connect.cc). */
#define RCCL_MAXCHANNELS 128

static gboolean
rccl_mesh8_node(const CsTopo *topo, int nranks)
{
    return nranks == 8 && cs_topo_n_ranks(topo) == 8 && cs_topo_n_nodes(topo) == 1
           && cs_topo_full_mesh(topo, nranks);
}

static gboolean rccl_gpus(const CsTopo *topo);

/**
 * cs_predict_rccl_mesh8:
 * Whether @nranks ranks of @topo are one node of 8 AMD GPUs fully connected by single xGMI
 * links, the node RCCL matches to rome_model_79 (see rccl_mesh8_node()), which enables MSCCL.
 */
gboolean
cs_predict_rccl_mesh8(const CsTopo *topo, int nranks)
{
    g_return_val_if_fail(topo != NULL, FALSE);
    return rccl_mesh8_node(topo, nranks) && rccl_gpus(topo);
}

/* gfx950 (CDNA 4: Instinct MI350X and MI355X, AMD's CDNA 4 ISA guide) by the GPU's model. */
static gboolean
rccl_gfx950(const CsTopo *topo)
{
    const char *model = cs_topo_device(topo, cs_topo_rank_device(topo, 0))->model;
    if (model == NULL)
        return FALSE;
    g_autofree char *upper = g_ascii_strup(model, -1);
    return strstr(upper, "MI350") != NULL || strstr(upper, "MI355") != NULL;
}

/* RCCL's channel count on such a node: init.cc sets the multiplier nc to 2 (gfx942 with 8
 * ranks keeps the default) or 4 (gfx950 with 8 ranks, ROCm/rocm-systems projects/rccl
 * src/init.cc, the 2.27+ line); ncclTopoPostset (connect.cc, ROCm/rccl ee2d4e4 and
 * rocm-systems) doubles the model's 28 rings to 56 while they fit in half of MAXCHANNELS,
 * then copies channels up to min(MAXCHANNELS / 28, nc) x 28: 56 on MI300X, 112 on MI355X.
 * The newest rocm-systems line caps one node at RCCL_MI3XX_MAX_SINGLE_NODE_CHANNELS = 56,
 * doubled on gfx950 (rccl_common.h), the same counts. */
static int
rccl_mesh8_channels(const CsTopo *topo)
{
    const int rings = RCCL_MESH8_MODEL_RINGS;
    const int doubled = rings <= RCCL_MAXCHANNELS / 2 ? 2 * rings : rings;
    const int nc = MIN(RCCL_MAXCHANNELS / rings, rccl_gfx950(topo) ? 4 : 2) * rings;
    return MIN(MAX(doubled, nc), RCCL_MAXCHANNELS);
}

/* RCCL's bytes per channel below which a ring or tree operation drops one, on such a node
 * (no RCCL channel tuning there: rcclOverrideChannels returns before its tables when
 * nNodes < 2, src/misc/rccl_common.cc): NCCL's loop (enqueue.cc) with RCCL's threads, 256 for
 * every protocol (NCCL_MAX_NTHREADS 256 in RCCL 2.21.5 src/include/device.h;
 * RCCL_SINGLE_NODE_MAX_NTHREADS, RCCL_GFX950_MAX_NTHREADS, RCCL_LL_MAX_NTHREADS 256 in
 * rccl_common.h), and tuning.cc's thresholds: 8 B LL and LL128, 64 B Simple, Ring's LL one
 * times nRanks. 16 KiB for ring LL and Simple on 8 ranks, 2 KiB for LL128. */
static gint64
rccl_bytes_per_channel_min(CsProto proto, gboolean ring, int nranks)
{
    const gint64 nt = 256;
    switch (proto) {
    case CS_PROTO_LL:
        return nt * 8 * (ring ? MAX(nranks, 1) : 1);
    case CS_PROTO_LL128:
        return nt * 8;
    case CS_PROTO_SIMPLE:
    default:
        return nt * 64;
    }
}

/* NCCL's CollNet channel count for @bytes (NCCL 2.28.9 src/enqueue.cc, topoGetAlgoInfo), from
 * @nc channels: CollNet Chain takes the Ring/Tree rule with NCCL_MAX_NTHREADS = 640 threads
 * and threadThreshold 512 (tuning.cc), one channel dropped at a time while nBytes < nc x nt x
 * threshold; CollNet Direct counts its @heads too and steps down through 16, 8, 4, 2, 1,
 * halving the threshold each time nc passes 1.5 x the next step ("CollNet channel tuning"). */
static int
collnet_channels(gboolean direct, gint64 bytes, int heads, int nc)
{
    const gint64 nt = 640;
    gint64 threshold = 512;

    if (!direct) {
        while (bytes < nc * nt * threshold && nc >= 2)
            nc--;
        return nc;
    }
    gboolean flag = TRUE;
    for (int sw = 16; sw >= 1 && flag; sw /= 2) {
        while ((flag = bytes < nc * nt * heads * threshold) && nc > sw) {
            if (nc == sw + sw / 2)
                threshold /= 2;
            nc--;
        }
    }
    return MAX(nc, 1);
}

/* NCCL's collective channel count before small operations drop some: enough channels to use
 * every lane of a GPU's fastest class of links, since a channel drives one lane at a time
 * (engine.c): the lane count rounded up to a power of two between 2 and 32 (NCCL's channel
 * limit before 2.20). That is 32 on H100 NVSwitch boxes (18 NVLinks), 16 on A100 (12), the
 * 32 coll channels NCCL reports there, and 2 on PCIe-only boxes (NCCL 2.2x
 * src/graph/search.cc, connect.cc). On a full mesh of @nranks GPUs the rings cycle over a set
 * that loads every link equally (ring.c, mesh_rings.c), so the count is a multiple of the
 * set's size: that size doubled while it stays within 32 (7 rings on 8 GPUs give 28). One
 * node of 8 such GPUs alone runs what RCCL makes of its model's 28 rings,
 * rccl_mesh8_channels(): 56 on MI300X (gfx942), 112 on MI355X (gfx950); several nodes that
 * are each such a mesh keep 28, but where those nodes have 8 GPUs with a NIC each RCCL's model
 * lists 64 rings, which it runs as they are (CS_MESH_RAIL_CHANNELS, mesh_rings.h).
 * Every NCCL algorithm and the p2p plan start from this count, as NCCL's share nChannels. */
int
cs_predict_coll_channels_max(const CsTopo *topo, int nranks)
{
    if (cs_mesh_rail_nodes(topo, nranks))
        return CS_MESH_RAIL_CHANNELS;
    /* As ring.c builds them: on the whole of a one-node machine (on fewer ranks the algorithms
     * get no topology, so rank order). */
    int mesh = 0;
    if (nranks <= CS_MESH_RINGS_MAX_RANKS && nranks == cs_topo_n_ranks(topo)
        && cs_topo_n_nodes(topo) == 1 && cs_topo_full_mesh(topo, nranks))
        mesh = nranks;
    /* Nodes that are each such a mesh: ring.c crosses each node along those rings too. */
    const int L = cs_topo_ranks_per_node(topo);
    if (mesh == 0 && cs_topo_n_nodes(topo) > 1 && L <= CS_MESH_RINGS_MAX_RANKS && nranks > L
        && nranks % L == 0 && cs_topo_rank_node(topo, L - 1) == 0 && cs_topo_full_mesh(topo, L))
        mesh = L;
    if (mesh > 0 && rccl_mesh8_node(topo, nranks))
        return rccl_mesh8_channels(topo);
    if (mesh > 0) {
        int n_rings = cs_mesh_rings_count(mesh);
        int max_ch = n_rings;
        while (2 * max_ch <= 32)
            max_ch *= 2;
        return max_ch;
    }

    /* Lanes out of rank 0's GPU on its fastest class of links. */
    int gpu = cs_topo_rank_device(topo, 0);
    double best_Bps = 0.0;
    int lanes = 1;
    for (int k = 0; k < CS_N_LINK_CLASSES; k++) {
        double bw = cs_topo_injection_bw(topo, 0, (CsLinkClass)k);
        if (bw <= best_Bps)
            continue;
        best_Bps = bw;
        lanes = 0;
        for (int i = 0; i < cs_topo_n_links(topo); i++) {
            const CsLink *l = cs_topo_link(topo, i);
            if (l->src == gpu && cs_link_kind_class(l->kind) == (CsLinkClass)k)
                lanes += l->count;
        }
    }
    int max_ch = 2;
    while (max_ch < 32 && max_ch < lanes)
        max_ch *= 2;
    return max_ch;
}

/* RCCL's Tree/Simple all-reduce chunk for @bytes on @n_channels channels of @nranks ranks
 * over @n_nodes nodes: one slot, halved while the pipeline is short for the tree's depth
 * (RCCL keeps this rule, which NCCL dropped after 2.19: ROCm/rccl 0cbce2a7 (2.21.5)
 * src/enqueue.cc computeCollChunkInfo, ROCm/rocm-systems 005e1bb0 projects/rccl/src/enqueue.cc
 * calcCollChunking, "Optimize chunkSize / nSteps" for ncclPatternTreeUpDown): halve while
 * nBytes / (nChannels x chunk) < depth x 8 and the chunk is above 128 KiB, < depth x 4 above
 * 64 KiB, < depth above 32 KiB, with depth = nRanks / nNodes - 1 + log2i(nNodes)
 * (src/graph/connect.cc, tree.depth). */
static gint64
rccl_tree_simple_chunk(gint64 bytes, int n_channels, int nranks, int n_nodes)
{
    const gint64 depth = nranks / n_nodes - 1 + cs_pipetree_log2i(n_nodes);
    const gint64 nc = MAX(n_channels, 1);
    gint64 chunk = cs_proto_info(CS_PROTO_SIMPLE)->slot_data_bytes;

    while (bytes / (nc * chunk) < depth * 8 && chunk > 131072)
        chunk /= 2;
    while (bytes / (nc * chunk) < depth * 4 && chunk > 65536)
        chunk /= 2;
    while (bytes / (nc * chunk) < depth && chunk > 32768)
        chunk /= 2;
    return chunk;
}

/* Whether the GPUs of @topo are AMD's, where RCCL runs the collectives. */
static gboolean
rccl_gpus(const CsTopo *topo)
{
    const CsDevice *gpu = cs_topo_device(topo, cs_topo_rank_device(topo, 0));
    return gpu->kind == CS_DEVICE_GPU
           && cs_nccl_amd_arch_from_model(gpu->model) != CS_NCCL_AMD_NONE;
}

/* The pipeline chunk NCCL uses for its collectives, where it differs from one slot
 * (cs_algo_default_chunk()): Simple rings move ALLREDUCE/ALLGATHER/REDUCESCATTER_CHUNKSTEPS =
 * NCCL_STEPS / 2 = 4 slots per step (NCCL 2.2x src/include/collectives.h); on AMD GPUs
 * RCCL's Tree/Simple all-reduce shrinks its one-slot chunk for short pipelines
 * (rccl_tree_simple_chunk()); 0 keeps the algorithm's default. Grouped send/recv has its own
 * (cs_predict_p2p_plan()). */
gint64
cs_predict_nccl_chunk_bytes(const CsTopo *topo, const CsAlgo *algo, CsOp op, CsProto proto,
                            gint64 size_bytes, int nranks, int n_channels)
{
    if (proto != CS_PROTO_SIMPLE)
        return 0;
    if (g_strcmp0(algo->name, "tree") == 0) {
        if (op != CS_OP_ALL_REDUCE || !rccl_gpus(topo))
            return 0;
        g_autoptr(CsNodeGroups) groups = cs_node_groups_new(topo, nranks, NULL);
        if (groups == NULL)
            return 0;
        return rccl_tree_simple_chunk(size_bytes, n_channels, nranks, groups->n_groups);
    }
    if (g_strcmp0(algo->name, "ring") != 0)
        return 0;
    if (op != CS_OP_ALL_REDUCE && op != CS_OP_ALL_GATHER && op != CS_OP_REDUCE_SCATTER)
        return 0;
    return (CS_NCCL_STEPS / 2) * cs_proto_info(proto)->slot_data_bytes;
}

/**
 * cs_predict_default_channels:
 * The channel count NCCL-like defaults give @algo for @op at @size_bytes on @nranks ranks of
 * @topo:
 * - NCCL's grouped send/recv (direct scatter, gather and all-to-all on GPU ranks): the
 *   channels NCCL's p2p plan stripes the P - 1 peers' messages over (cs_predict_p2p_plan());
 * - the MPI classics (mst, recursive doubling, rhd, bruck, pairwise, direct between CPUs) run
 *   one channel;
 * - NVLS and NVLSTree run NCCL's nvlsChannels CTAs at every size (cs_nccl_nvls_channels():
 *   16 on Hopper, 24 or 32 on Blackwell);
 * - CollNet Direct and Chain start from cs_predict_coll_channels_max() and drop channels by
 *   NCCL's CollNet rules (collnet_channels());
 * - NCCL's other algorithms (ring, tree ...) start from cs_predict_coll_channels_max(), then,
 *   as NCCL does for small operations, channels are dropped until each has at least nThreads x
 *   threadThreshold bytes (4 KiB LL, 4 KiB x nRanks for Ring LL, 5 KiB LL128, 32 KiB Simple;
 *   see above); on one node of 8
 *   fully connected GPUs, RCCL's 256 threads and Ring LL's threshold times nRanks (16 KiB ring
 *   LL and Simple, 2 KiB LL128; rccl_bytes_per_channel_min()).
 * With 8 B every algorithm but grouped send/recv runs on one channel.
 */
int
cs_predict_default_channels(const CsTopo *topo, const CsAlgo *algo, CsOp op, CsProto proto,
                            gint64 size_bytes, int nranks)
{
    return cs_predict_default_channels_at(topo, algo, op, proto, size_bytes, nranks, 0);
}

int
cs_predict_default_channels_at(const CsTopo *topo, const CsAlgo *algo, CsOp op, CsProto proto,
                               gint64 size_bytes, int nranks, int release)
{
    g_return_val_if_fail(topo != NULL && algo != NULL, 1);
    P2pPlan plan;
    if (cs_predict_p2p_plan(topo, algo, op, proto, size_bytes, nranks, release, &plan))
        return plan.channels;
    /* RCCL's MSCCL files fix their channels (allpairs.c). */
    if (g_strcmp0(algo->name, "allpairs") == 0)
        return cs_allpairs_channels(proto, size_bytes);
    /* NCCL's collective algorithms (the ones models/nccl.c maps to one) run on many channels;
     * the others are MPI classics that move one message at a time per rank. */
    CsNcclAlgo na;
    if (!cs_nccl_algo_from_collsim(algo->name, &na))
        return 1;
    if (na == CS_NCCL_ALGO_NVLS || na == CS_NCCL_ALGO_NVLS_TREE) {
        const char *model = cs_topo_device(topo, cs_topo_rank_device(topo, 0))->model;
        return cs_nccl_nvls_channels(cs_nccl_constants_lookup(NULL, NULL),
                                     cs_nccl_arch_from_model(model, NULL),
                                     cs_predict_spans_nvlink_domains(topo, nranks));
    }

    /* The bytes one rank moves: the buffer for rooted and reducing ops, P blocks otherwise. */
    CsOpSize sz = cs_op_size(op, size_bytes, CS_DTYPE_INT8, MAX(nranks, 1));
    gint64 bytes = MAX(sz.send_bytes, sz.recv_bytes);
    if (na == CS_NCCL_ALGO_COLLNET_DIRECT || na == CS_NCCL_ALGO_COLLNET_CHAIN) {
        g_autoptr(CsNodeGroups) nodes = cs_node_groups_new(topo, nranks, NULL);
        int heads = nodes != NULL ? cs_collnet_heads(topo, nodes) : 1;
        return collnet_channels(na == CS_NCCL_ALGO_COLLNET_DIRECT, bytes, heads,
                                cs_predict_coll_channels_max(topo, nranks));
    }
    gint64 per_channel = rccl_mesh8_node(topo, nranks)
                             ? rccl_bytes_per_channel_min(proto, na == CS_NCCL_ALGO_RING, nranks)
                             : bytes_per_channel_min(proto, na == CS_NCCL_ALGO_RING, nranks);
    gint64 nc = bytes / per_channel;
    return (int)CLAMP(nc, 1, cs_predict_coll_channels_max(topo, nranks));
}
