// SPDX-License-Identifier: MIT
/* Prediction: builds a schedule with an algorithm and runs it through the engine for one
 * (op, size, algorithm, protocol, channels) point, and picks the fastest point per size. The
 * only module that knows both the algorithm registry and the engine (DESIGN §1). */
#include "predict/predict.h"

#include <math.h>
#include <string.h>

#include "algos/mesh_rings.h"
#include "algos/pipetree.h"
#include "algos/registry.h"
#include "models/nccl.h"

/* ---- Options ---- */

/* ---- Predictions between the ranks of a study ---- */

static void
pack_algo(GByteArray *out, const CsAlgo *algo)
{
    cs_pack_string(out, algo != NULL ? algo->name : NULL);
}

/* The registry's algorithm of the packed name (every rank has the same registry). */
static const CsAlgo *
unpack_algo(CsUnpack *in)
{
    g_autofree char *name = cs_unpack_string(in);
    if (name == NULL)
        return NULL;
    const CsAlgo *algo = cs_algo_lookup(name, NULL);
    g_assert(algo != NULL);
    return algo;
}

/**
 * cs_prediction_pack:
 * Every field of CsPrediction but the result's rank_finish (NULL in a prediction); a field
 * added to CsPrediction or CsResult is added here and in cs_prediction_unpack().
 */
void
cs_prediction_pack(const CsPrediction *pred, GByteArray *out)
{
    pack_algo(out, pred->algo);
    cs_pack_int(out, pred->proto);
    cs_pack_int(out, pred->n_channels);
    cs_pack_int(out, pred->peer_channels);
    cs_pack_int(out, pred->size.size_bytes);
    cs_pack_int(out, pred->size.count);
    cs_pack_int(out, pred->size.block_bytes);
    cs_pack_int(out, pred->size.send_bytes);
    cs_pack_int(out, pred->size.recv_bytes);
    const CsResult *r = &pred->result;
    g_assert(r->rank_finish == NULL);
    cs_pack_int(out, r->time);
    cs_pack_int(out, r->alpha);
    cs_pack_int(out, r->beta);
    cs_pack_int(out, r->gamma);
    cs_pack_int(out, r->overhead);
    cs_pack_int(out, r->n_events);
    cs_pack_int(out, r->n_transfers);
    cs_pack_int(out, r->bytes_moved);
    cs_pack_int(out, r->n_ranks);
    cs_pack_double(out, pred->time_us);
    cs_pack_double(out, pred->algbw_GBps);
    cs_pack_double(out, pred->busbw_GBps);
    cs_pack_int(out, pred->extrapolated);
    cs_pack_int(out, pred->nccl_picked);
    cs_pack_int(out, pred->n_unsimulated);
    pack_algo(out, pred->unsimulated_algo);
    cs_pack_int(out, pred->unsimulated_proto);
    cs_pack_int(out, pred->replayed_ranks);
    cs_pack_int(out, pred->asymmetric);
    cs_pack_int(out, pred->bracketed);
    cs_pack_double(out, pred->bracket_low_us);
}

void
cs_prediction_unpack(CsUnpack *in, CsPrediction *pred)
{
    memset(pred, 0, sizeof(*pred));
    pred->algo = unpack_algo(in);
    pred->proto = (CsProto)cs_unpack_int(in);
    pred->n_channels = (int)cs_unpack_int(in);
    pred->peer_channels = (int)cs_unpack_int(in);
    pred->size.size_bytes = cs_unpack_int(in);
    pred->size.count = cs_unpack_int(in);
    pred->size.block_bytes = cs_unpack_int(in);
    pred->size.send_bytes = cs_unpack_int(in);
    pred->size.recv_bytes = cs_unpack_int(in);
    CsResult *r = &pred->result;
    r->time = cs_unpack_int(in);
    r->alpha = cs_unpack_int(in);
    r->beta = cs_unpack_int(in);
    r->gamma = cs_unpack_int(in);
    r->overhead = cs_unpack_int(in);
    r->n_events = cs_unpack_int(in);
    r->n_transfers = cs_unpack_int(in);
    r->bytes_moved = cs_unpack_int(in);
    r->n_ranks = (int)cs_unpack_int(in);
    pred->time_us = cs_unpack_double(in);
    pred->algbw_GBps = cs_unpack_double(in);
    pred->busbw_GBps = cs_unpack_double(in);
    pred->extrapolated = (gboolean)cs_unpack_int(in);
    pred->nccl_picked = (gboolean)cs_unpack_int(in);
    pred->n_unsimulated = (int)cs_unpack_int(in);
    pred->unsimulated_algo = unpack_algo(in);
    pred->unsimulated_proto = (CsProto)cs_unpack_int(in);
    pred->replayed_ranks = (int)cs_unpack_int(in);
    pred->asymmetric = (gboolean)cs_unpack_int(in);
    pred->bracketed = (gboolean)cs_unpack_int(in);
    pred->bracket_low_us = cs_unpack_double(in);
}

/* Defaults: float sum, root 0, every rank of the topology, channels chosen per point,
 * reservation model, one GPU per launching thread. */
void
cs_predict_options_init(CsPredictOptions *options)
{
    g_return_if_fail(options != NULL);
    *options = (CsPredictOptions){
        .dtype = CS_DTYPE_FLOAT,
        .redop = CS_REDOP_SUM,
        .root = 0,
        .nranks = 0,
        .n_channels = 0,
    };
}

static const char *const pick_names[] = {
    [CS_PICK_FASTEST] = "fastest",
    [CS_PICK_NCCL] = "nccl",
    [CS_PICK_AUTO] = "auto",
};

/**
 * cs_pick_from_name:
 * Parses "fastest", "nccl" or "auto" (any case).
 * Returns: FALSE with CS_ENGINE_ERROR_MISMATCH naming the choices otherwise.
 */
gboolean
cs_pick_from_name(const char *name, CsPick *pick, GError **error)
{
    g_return_val_if_fail(name != NULL && pick != NULL, FALSE);
    for (gsize i = 0; i < G_N_ELEMENTS(pick_names); i++)
        if (g_ascii_strcasecmp(name, pick_names[i]) == 0) {
            *pick = (CsPick)i;
            return TRUE;
        }
    g_set_error(error, CS_ENGINE_ERROR, CS_ENGINE_ERROR_MISMATCH,
                "\"%s\" is not a pick (auto, nccl or fastest)", name);
    return FALSE;
}

/* ---- Point cache ---- */

/* Steps of schedule kept at most (about 48 bytes each): the schedules of a fit's rows and
 * their extension points, not every whole replay of a point that is never on a line. */
#define POINT_CACHE_MAX_STEPS (8 * 1000 * 1000)

/* One lock guards the tables and counters, so that threads predicting points of one
 * topology (--jobs) share the cache; simulations run outside it. Two threads that miss the
 * same point both simulate it and get the same answer: the engine is deterministic. */
struct _CsPointCache {
    GMutex lock;
    CsTopo *topo;          /* (nullable) the topology the points are for */
    CsTopo *structure;     /* (nullable) the first one bound: cached schedules are built on it */
    GHashTable *schedules; /* (nullable) schedule key -> CsSchedule */
    gsize schedule_steps;  /* steps of the schedules kept */
    GHashTable *points;    /* point key -> CsPrediction */
    GHashTable *periods;   /* period key -> the shortest period the machine repeats under */
    gint64 hits;
    gint64 misses;
};

CsPointCache *
cs_point_cache_new(gboolean keep_schedules)
{
    CsPointCache *cache = g_new0(CsPointCache, 1);
    g_mutex_init(&cache->lock);
    if (keep_schedules)
        cache->schedules = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                                 (GDestroyNotify)cs_schedule_free);
    cache->points = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    cache->periods = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    return cache;
}

void
cs_point_cache_bind(CsPointCache *cache, const CsTopo *topo)
{
    g_return_if_fail(cache != NULL && topo != NULL);
    if (cache->topo == topo)
        return;
    /* Schedules carry over to another parameter vector of the same machine only. */
    if (cache->structure == NULL)
        cache->structure = cs_topo_ref((CsTopo *)topo);
    g_return_if_fail(cs_topo_n_ranks(cache->structure) == cs_topo_n_ranks(topo)
                     && cs_topo_n_links(cache->structure) == cs_topo_n_links(topo));
    g_hash_table_remove_all(cache->points);
    g_hash_table_remove_all(cache->periods);
    g_clear_pointer(&cache->topo, cs_topo_unref);
    cache->topo = cs_topo_ref((CsTopo *)topo);
}

void
cs_point_cache_free(CsPointCache *cache)
{
    if (cache == NULL)
        return;
    g_hash_table_unref(cache->points);
    g_hash_table_unref(cache->periods);
    g_clear_pointer(&cache->schedules, g_hash_table_unref);
    g_clear_pointer(&cache->topo, cs_topo_unref);
    g_clear_pointer(&cache->structure, cs_topo_unref);
    g_mutex_clear(&cache->lock);
    g_free(cache);
}

void
cs_point_cache_stats(const CsPointCache *cache, gint64 *misses, gint64 *hits)
{
    g_return_if_fail(cache != NULL);
    g_mutex_lock((GMutex *)&cache->lock);
    if (misses != NULL)
        *misses = cache->misses;
    if (hits != NULL)
        *hits = cache->hits;
    g_mutex_unlock((GMutex *)&cache->lock);
}

/* Everything a schedule depends on besides the machine's structure. */
static char *
schedule_key(const CsAlgo *algo, const CsAlgoArgs *args)
{
    return g_strdup_printf(
        "%s/%d/%d/%d/%" G_GINT64_FORMAT "/%d/%d/%d/%d/%d/%" G_GINT64_FORMAT "/%d/%d/%d", algo->name,
        args->op, args->nranks, args->root, args->size_bytes, args->dtype, args->redop, args->proto,
        args->n_channels, args->peer_channels, args->chunk_bytes, args->topo != NULL,
        args->period_min, args->shares);
}

/* Whether @options' cache serves @topo. */
static gboolean
cache_serves(const CsTopo *topo, const CsPredictOptions *options)
{
    return options->cache != NULL && options->cache->topo == topo;
}

/* @algo's schedule for @args: borrowed from the cache, or built and returned in @owned. */
static const CsSchedule *
build_schedule(const CsTopo *topo, const CsAlgo *algo, const CsAlgoArgs *args,
               const CsPredictOptions *options, CsSchedule **owned, GError **error)
{
    CsPointCache *cache = options->cache;
    *owned = NULL;
    if (!cache_serves(topo, options) || cache->schedules == NULL)
        return *owned = cs_algo_build(algo, args, error);
    g_autofree char *key = schedule_key(algo, args);
    g_mutex_lock(&cache->lock);
    CsSchedule *sched = g_hash_table_lookup(cache->schedules, key);
    g_mutex_unlock(&cache->lock);
    if (sched != NULL)
        return sched;
    /* Ring orders break ties between equal-hop neighbours by route bandwidth, which a
     * parameter vector scales: every cached schedule is built on the first topology bound, so
     * one key always means one schedule. */
    CsAlgoArgs on_structure = *args;
    if (on_structure.topo != NULL)
        on_structure.topo = cache->structure;
    sched = cs_algo_build(algo, &on_structure, error);
    if (sched == NULL)
        return NULL;
    const gsize steps = cs_schedule_n_steps(sched);
    g_mutex_lock(&cache->lock);
    /* Kept schedules live as long as the cache: another thread's, built meanwhile, stays. */
    if (cache->schedule_steps + steps > POINT_CACHE_MAX_STEPS
        || g_hash_table_contains(cache->schedules, key)) {
        g_mutex_unlock(&cache->lock);
        return *owned = sched;
    }
    cache->schedule_steps += steps;
    g_hash_table_insert(cache->schedules, g_steal_pointer(&key), sched);
    g_mutex_unlock(&cache->lock);
    return sched;
}

/* Everything a simulated point depends on besides the topology's values; NULL when it must
 * not be cached (an observer sees every event of every run). */
static char *
point_key(const CsTopo *topo, const CsAlgo *algo, const CsAlgoArgs *args,
          const CsPredictOptions *options)
{
    const CsEngineOptions *e = &options->engine;
    if (!cache_serves(topo, options) || e->observer != NULL)
        return NULL;
    /* One period or every rank replayed: the same answer (engine.c "Symmetry"). */
    CsAlgoArgs any_period = *args;
    any_period.period_min = 0;
    any_period.shares = CS_ALGO_SHARES_EXACT;
    g_autofree char *sched = schedule_key(algo, &any_period);
    return g_strdup_printf("%s/%s/%d/%d/%d/%d", sched, e->net_model != NULL ? e->net_model : "",
                           e->gpus_per_thread, e->no_launch, e->textbook,
                           MAX(options->concurrent, 1));
}

/* ---- Channels ---- */

/* NCCL reduces the channel count of small operations until every thread of every channel
 * has work: nc = nBytes / (nThreads * threadThreshold), with threadThreshold 8 B for LL and
 * LL128 and 64 B for Simple (NCCL 2.2x src/enqueue.cc, getNthreads/NCCL_*_THREAD_THRESHOLD),
 * and 512 threads (LL, Simple) or 640 (LL128). Bytes per channel below which NCCL drops one: */
static gint64
bytes_per_channel_min(CsProto proto)
{
    switch (proto) {
    case CS_PROTO_LL:
        return 512 * 8;
    case CS_PROTO_LL128:
        return 640 * 8;
    case CS_PROTO_SIMPLE:
    default:
        return 512 * 64;
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

/* Whether the first @nranks ranks of @topo span more than one node. */
static gboolean
spans_nodes(const CsTopo *topo, int nranks)
{
    for (int r = 1; r < nranks && r < cs_topo_n_ranks(topo); r++) {
        if (cs_topo_rank_node(topo, r) != cs_topo_rank_node(topo, 0))
            return TRUE;
    }
    return FALSE;
}

/* Whether the first @nranks ranks of @topo span more than one NVLink domain. */
static gboolean
spans_nvlink_domains(const CsTopo *topo, int nranks)
{
    g_autoptr(CsNodeGroups) domains = cs_node_groups_new_nvlink(topo, nranks, NULL);

    return domains != NULL && domains->n_groups > 1;
}

/* Whether an nccl-tests run of @op on @nranks ranks of @topo could execute @algo, as NCCL
 * 2.2x's algorithm tables allow (src/enqueue.cc, src/graph/tuning.cc):
 * - broadcast and reduce: Ring only (NCCL has no tree or NVLS broadcast/reduce);
 * - all-gather and reduce-scatter: Ring, NVLS and PAT (2.23+; its supports() asks for one
 *   rank per node, as tuning.cc ncclPatEnable does);
 * - all-reduce: Ring, Tree, NVLS, NVLSTree only across nodes (tuning.cc: "Disable NVLS
 *   Tree on a single node") and NVLink domains (on one domain it is NVLS), and CollNet Direct
 *   and Chain (their supports() ask for a SHARP switch and several nodes);
 * - scatter, gather, all-to-all, sendrecv: grouped send/recv ("direct", nccl-tests'
 *   scatter.cu, gather.cu, alltoall.cu, sendrecv.cu; NCCL has no tuning table for p2p).
 * The algorithms' own supports() still decide whether the topology allows them (NVLS needs
 * an NVLS switch and one NVLink domain). */
static gboolean
is_p2p_op(CsOp op)
{
    return op == CS_OP_SCATTER || op == CS_OP_GATHER || op == CS_OP_ALL_TO_ALL
           || op == CS_OP_SEND_RECV;
}

static gboolean
algo_in_nccl_tests(const CsAlgo *algo, CsOp op, const CsTopo *topo, int nranks)
{
    CsNcclAlgo na;

    if (is_p2p_op(op))
        return g_strcmp0(algo->name, "direct") == 0;
    if (!cs_nccl_algo_from_collsim(algo->name, &na))
        return FALSE;
    switch (op) {
    case CS_OP_BROADCAST:
    case CS_OP_REDUCE:
        return na == CS_NCCL_ALGO_RING;
    case CS_OP_ALL_GATHER:
    case CS_OP_REDUCE_SCATTER:
        return na == CS_NCCL_ALGO_RING || na == CS_NCCL_ALGO_NVLS || na == CS_NCCL_ALGO_PAT;
    case CS_OP_ALL_REDUCE:
        /* On one NVLink domain of several nodes (an NVL72 rack) NVLSTree is NVLS itself
         * (nvls_tree.c), already a candidate: weighing it twice only doubles the work. */
        if (na == CS_NCCL_ALGO_NVLS_TREE)
            return spans_nodes(topo, nranks) && spans_nvlink_domains(topo, nranks);
        return na == CS_NCCL_ALGO_RING || na == CS_NCCL_ALGO_TREE || na == CS_NCCL_ALGO_NVLS
               || na == CS_NCCL_ALGO_COLLNET_DIRECT || na == CS_NCCL_ALGO_COLLNET_CHAIN;
    default:
        return FALSE;
    }
}

/* Whether a rank of the first @nranks of @topo is a CPU: no NCCL runs such a communicator. */
gboolean
cs_predict_cpu_ranks(const CsTopo *topo, int nranks)
{
    g_return_val_if_fail(topo != NULL, FALSE);
    const int n = nranks > 0 ? MIN(nranks, cs_topo_n_ranks(topo)) : cs_topo_n_ranks(topo);
    for (int r = 0; r < n; r++)
        if (cs_topo_device(topo, cs_topo_rank_device(topo, r))->kind == CS_DEVICE_CPU)
            return TRUE;
    return FALSE;
}

/* The one candidate rule of cs_predict_best() and cs_select_run() (predict.h): on GPU ranks
 * what an nccl-tests run can execute (algo_in_nccl_tests()); on CPU ranks, which an MPI
 * library runs (and collsim's mpi backend, which runs collsim's own schedules), every
 * algorithm, as Open MPI's and MPICH's collective tuning choose among recursive doubling,
 * Rabenseifner, Bruck, ring and trees; with @any_algorithm every algorithm anywhere. */
gboolean
cs_predict_default_candidate(const CsAlgo *algo, CsOp op, const CsTopo *topo, int nranks,
                             gboolean any_algorithm)
{
    g_return_val_if_fail(algo != NULL && topo != NULL, FALSE);
    if (any_algorithm || cs_predict_cpu_ranks(topo, nranks))
        return TRUE;
    return algo_in_nccl_tests(algo, op, topo, nranks);
}

/* NCCL's collective channel count before small operations drop some: enough channels to use
 * every lane of a GPU's fastest class of links, since a channel drives one lane at a time
 * (engine.c): the lane count rounded up to a power of two between 2 and 32 (NCCL's channel
 * limit before 2.20). That is 32 on H100 NVSwitch boxes (18 NVLinks), 16 on A100 (12), the
 * 32 coll channels NCCL reports there, and 2 on PCIe-only boxes (NCCL 2.2x
 * src/graph/search.cc, connect.cc). On a full mesh of @nranks GPUs the rings cycle over a set
 * that loads every link equally (ring.c, mesh_rings.c), so the count is a multiple of the
 * set's size: that size doubled while it stays within 32, 28 on 8 MI300X (7 rings); RCCL's
 * model of that platform lists 14 rings, each directed link in two of them, and lists them
 * twice over, 28 (src/graph/rome_models.cc); so on several nodes that are each such a mesh.
 * Every NCCL algorithm and the p2p plan start from this count, as NCCL's share nChannels. */
static int
coll_channels_max(const CsTopo *topo, int nranks)
{
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

/* ---- NCCL's point-to-point plan (scatter, gather, all-to-all, sendrecv) ----
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

    c->p2p_channels = pow2_up(MIN(coll_channels_max(topo, nranks), 32));
    c->multi_node = spans_nodes(topo, nranks);
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

/* NCCL's plan for one grouped send/recv: the protocol each peer's message gets, the channels
 * it is striped over, all channels in use together and the pipeline step. */
typedef struct {
    CsProto proto;      /* LL or Simple */
    int channels;       /* in use at once: at most p2pnChannels */
    int per_peer;       /* channels each peer's message is striped over */
    gint64 chunk_bytes; /* bytes: Simple's p2pChunkSize; 0 (the slot) for LL */
} P2pPlan;

/* NCCL's plan when @algo runs @op as grouped send/recv on GPU ranks (FALSE otherwise), for
 * messages carried with @proto: LL up to the threshold, Simple beyond (p2p_plan()->proto
 * says which one NCCL would take); each of the P - 1 peers' messages striped as addP2pToPlan
 * does. */
static gboolean
p2p_plan(const CsTopo *topo, const CsAlgo *algo, CsOp op, CsProto proto, gint64 size_bytes,
         int nranks, P2pPlan *plan)
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

/* The pipeline chunk NCCL uses for its collectives, where it differs from one slot
 * (cs_algo_default_chunk()): Simple rings move ALLREDUCE/ALLGATHER/REDUCESCATTER_CHUNKSTEPS =
 * NCCL_STEPS / 2 = 4 slots per step (NCCL 2.2x src/include/collectives.h); 0 keeps the
 * algorithm's default. Grouped send/recv has its own (p2p_plan()). */
static gint64
nccl_chunk_bytes(const CsAlgo *algo, CsOp op, CsProto proto)
{
    if (proto != CS_PROTO_SIMPLE || g_strcmp0(algo->name, "ring") != 0)
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
 *   channels NCCL's p2p plan stripes the P - 1 peers' messages over (p2p_plan());
 * - the MPI classics (mst, recursive doubling, rhd, bruck, pairwise, direct between CPUs) run
 *   one channel;
 * - NVLS and NVLSTree run NCCL's nvlsChannels CTAs at every size (cs_nccl_nvls_channels():
 *   16 on Hopper, 24 or 32 on Blackwell);
 * - CollNet Direct and Chain start from coll_channels_max() and drop channels by NCCL's
 *   CollNet rules (collnet_channels());
 * - NCCL's other algorithms (ring, tree ...) start from coll_channels_max(), then, as NCCL
 *   does for small operations, channels are dropped until each has at least nThreads x
 *   threadThreshold bytes (4 KiB LL, 5 KiB LL128, 32 KiB Simple; see above).
 * With 8 B every algorithm but grouped send/recv runs on one channel.
 */
int
cs_predict_default_channels(const CsTopo *topo, const CsAlgo *algo, CsOp op, CsProto proto,
                            gint64 size_bytes, int nranks)
{
    g_return_val_if_fail(topo != NULL && algo != NULL, 1);
    P2pPlan plan;
    if (p2p_plan(topo, algo, op, proto, size_bytes, nranks, &plan))
        return plan.channels;
    /* NCCL's collective algorithms (the ones models/nccl.c maps to one) run on many channels;
     * the others are MPI classics that move one message at a time per rank. */
    CsNcclAlgo na;
    if (!cs_nccl_algo_from_collsim(algo->name, &na))
        return 1;
    if (na == CS_NCCL_ALGO_NVLS || na == CS_NCCL_ALGO_NVLS_TREE) {
        const char *model = cs_topo_device(topo, cs_topo_rank_device(topo, 0))->model;
        return cs_nccl_nvls_channels(cs_nccl_constants_lookup(NULL, NULL),
                                     cs_nccl_arch_from_model(model, NULL),
                                     spans_nvlink_domains(topo, nranks));
    }

    /* The bytes one rank moves: the buffer for rooted and reducing ops, P blocks otherwise. */
    CsOpSize sz = cs_op_size(op, size_bytes, CS_DTYPE_INT8, MAX(nranks, 1));
    gint64 bytes = MAX(sz.send_bytes, sz.recv_bytes);
    if (na == CS_NCCL_ALGO_COLLNET_DIRECT || na == CS_NCCL_ALGO_COLLNET_CHAIN) {
        g_autoptr(CsNodeGroups) nodes = cs_node_groups_new(topo, nranks, NULL);
        int heads = nodes != NULL ? cs_collnet_heads(topo, nodes) : 1;
        return collnet_channels(na == CS_NCCL_ALGO_COLLNET_DIRECT, bytes, heads,
                                coll_channels_max(topo, nranks));
    }
    gint64 nc = bytes / bytes_per_channel_min(proto);
    return (int)CLAMP(nc, 1, coll_channels_max(topo, nranks));
}

int
cs_predict_peer_channels(const CsTopo *topo, const CsAlgo *algo, CsOp op, CsProto proto,
                         gint64 size_bytes, int nranks)
{
    g_return_val_if_fail(topo != NULL && algo != NULL, 0);
    P2pPlan plan;
    return p2p_plan(topo, algo, op, proto, size_bytes, nranks, &plan) ? plan.per_peer : 0;
}

/* Whether an nccl-tests run could carry @op with @proto on @algo: NCCL's grouped send/recv
 * takes LL or Simple by message size (p2p_plan()); every other choice is the engine's. */
static gboolean
proto_in_nccl_tests(const CsTopo *topo, const CsAlgo *algo, CsOp op, CsProto proto,
                    gint64 size_bytes, int nranks)
{
    P2pPlan plan;
    return !p2p_plan(topo, algo, op, proto, size_bytes, nranks, &plan) || proto == plan.proto;
}

/* The protocol half of the candidate rule (predict.h): on GPU ranks grouped send/recv carries
 * only the protocol NCCL's p2p plan takes at @size_bytes; any protocol on CPU ranks or with
 * @any_algorithm. */
gboolean
cs_predict_default_proto(const CsTopo *topo, const CsAlgo *algo, CsOp op, CsProto proto,
                         gint64 size_bytes, int nranks, gboolean any_algorithm)
{
    g_return_val_if_fail(topo != NULL && algo != NULL, FALSE);
    if (any_algorithm || cs_predict_cpu_ranks(topo, nranks))
        return TRUE;
    return proto_in_nccl_tests(topo, algo, op, proto, size_bytes, nranks);
}

/* The protocols a run picks from when it forces none: NCCL_PROTO's list where the run set one
 * (a trace's headers), else the GPUs' library defaults (the topology's default_protocols: RCCL
 * leaves LL128 off unless its platform model turns it on). Bits over CsProto. */
static guint
unforced_protos(const CsTopo *topo, const CsPredictOptions *options)
{
    if (options != NULL && options->nccl_proto_mask != 0)
        return options->nccl_proto_mask;
    int nranks = options != NULL && options->nranks > 0 ? options->nranks : cs_topo_n_ranks(topo);
    return cs_topo_default_protos(topo, nranks);
}

/* One sentence naming the first rank whose protocols leave none in common (predict.h). */
char *
cs_predict_no_shared_protocol(const CsTopo *topo, int nranks)
{
    if (cs_topo_default_protos(topo, nranks) != 0)
        return NULL;
    int r = 0;
    while (r + 1 < nranks && cs_topo_default_protos(topo, r + 1) != 0)
        r++;
    const CsDevice *dev = cs_topo_device(topo, cs_topo_rank_device(topo, r));
    /* Rank 0 alone: a CPU whose list holds no Simple. */
    return g_strdup_printf("the default_protocols of %s's ranks share no protocol: rank %d (%s "
                           "\"%s\") allows none of %s",
                           cs_topo_name(topo), r, cs_device_kind_name(dev->kind), dev->name,
                           r == 0 ? "its own (a CPU rank runs Simple only)"
                                  : "those of the ranks before it");
}

/* ---- One point ---- */

/* Above this many estimated steps, a prediction extends smaller simulated sizes (see
 * cs_predict_one()). About 50 ms of simulation. */
#define PREDICT_STEP_BUDGET 60000.0
/* The budget is raised by this factor while three points are not yet on one line... A small
 * factor finds the smallest sizes on the line (a 2-node NVLS tree's pipeline fills by about
 * 256 MiB: doubling stops there, eight-fold jumped to several GiB), and the points of all
 * larger sizes of one choice are then the same (a point cache simulates them once); a point
 * that is never on a line costs at most twice its last try. */
#define PREDICT_BUDGET_GROWTH 2.0
/* ...up to this many steps (about 3.8 M steps: a second and some 200 MB), or to the smallest
 * three that may be extended from (2, 4 and 8 loops) where one loop is already beyond the
 * budget (an NVLS all-reduce on 72 GPUs, 108 MiB a loop at 4 GiB), doubling past three that
 * are still filling the pipeline; the largest of the three is at most half the point, so
 * they cost less than replaying it. A point bigger still is
 * extended from the largest three simulated sizes when their slopes agree within 5%
 * (PREDICT_LOOSE_TOLERANCE): a few percent at most, where replaying it costs minutes. */
#define PREDICT_STEP_HARD_LIMIT (64.0 * PREDICT_STEP_BUDGET)
/* The largest point of the three simulated to extend a larger one has at most this many
 * steps (a quarter of CS_SCHEDULE_MAX_STEPS: about 2.5 GB in the engine), and no more than
 * the memory budget holds (cs_schedule_max_steps()). */
#define PREDICT_WINDOW_MAX_STEPS                                                                   \
    MIN((double)CS_SCHEDULE_MAX_STEPS / 4, (double)cs_schedule_max_steps())
/* Three points are on one line when their two slopes differ by at most this share. */
#define PREDICT_LINEAR_TOLERANCE 0.005
/* Past the hard step limit a point is extended when its slopes agree within this share. */
#define PREDICT_LOOSE_TOLERANCE 0.05

/* The point cache's key for the shortest period the machine repeats under for @args' choice,
 * or NULL where the cache does not serve or one period is not asked for. */
static char *
held_period_key(const CsTopo *topo, const CsAlgo *algo, CsOp op, const CsAlgoArgs *args,
                const CsPredictOptions *options, int nranks)
{
    if (!cache_serves(topo, options) || args->period_min <= 0)
        return NULL;
    return g_strdup_printf("%s/%d/%d/%d/%d/%d/%d", algo->name, op, nranks, args->proto,
                           args->n_channels, args->peer_channels, args->topo != NULL);
}

/* The period held under @key: 0 when not known yet, the rank count when none shorter. */
static int
held_period(const CsPredictOptions *options, const char *key)
{
    g_mutex_lock(&options->cache->lock);
    const int held = GPOINTER_TO_INT(g_hash_table_lookup(options->cache->periods, key));
    g_mutex_unlock(&options->cache->lock);
    return held;
}

static void
hold_period(const CsPredictOptions *options, const char *key, int period)
{
    g_mutex_lock(&options->cache->lock);
    g_hash_table_insert(options->cache->periods, g_strdup(key), GINT_TO_POINTER(period));
    g_mutex_unlock(&options->cache->lock);
}

/* Builds and replays the schedule of @base (its size set), one period of ranks where it
 * and the machine repeat, a longer one or every rank where the machine does not. With
 * @periodic_only (a bracket's end, base->shares not EXACT), FALSE without an error where one
 * period no longer holds: a bounded schedule replayed whole stands for nothing. */
static gboolean
replay_point(const CsTopo *topo, CsOp op, gint64 size_bytes, const CsAlgo *algo,
             const CsAlgoArgs *base, const CsPredictOptions *options, int nranks,
             gboolean periodic_only, CsPrediction *out, GError **error)
{
    CsAlgoArgs args = *base;
    g_autoptr(CsSchedule) owned = NULL;
    g_autoptr(CsSchedule) copies = NULL;
    g_autoptr(CsResult) res = NULL;
    const CsSchedule *sched = NULL;
    gboolean asymmetric = FALSE;
    /* Concurrent communicators: each copy's schedule whole, the copies replayed as one
     * period of the machine where it repeats from copy to copy, every copy otherwise. */
    const gboolean concurrent = options->concurrent > 1 && options->concurrent_topo != NULL;
    gboolean copies_periodic = concurrent && options->engine.observer == NULL && !options->whole;
    if (concurrent)
        args.period_min = 0;
    /* The periods the machine was found not to repeat under, for every size of this choice
     * (the routes of a ring or an exchange do not depend on its size). */
    g_autofree char *period_key = held_period_key(topo, algo, op, &args, options, nranks);
    if (period_key != NULL) {
        const int held = held_period(options, period_key);
        asymmetric = held == nranks;
        args.period_min = MAX(args.period_min, held);
    }
    for (;;) {
        g_autoptr(GError) local = NULL;
        /* The copies' retry replays the same schedule of one copy. */
        if (sched == NULL || !concurrent) {
            g_clear_pointer(&owned, cs_schedule_free);
            sched = build_schedule(topo, algo, &args, options, &owned, error);
            if (sched == NULL)
                return FALSE;
        }
        if (concurrent) {
            g_clear_pointer(&copies, cs_schedule_free);
            copies = cs_schedule_replicate(sched, options->concurrent, copies_periodic, error);
            if (copies == NULL)
                return FALSE;
            res = cs_engine_run(copies, options->concurrent_topo, &options->engine, &local);
            if (res == NULL && copies_periodic
                && g_error_matches(local, CS_ENGINE_ERROR, CS_ENGINE_ERROR_ASYMMETRIC)) {
                g_debug("%s/%s %" G_GINT64_FORMAT " B, %d copies: %s", algo->name,
                        cs_proto_name(args.proto), size_bytes, options->concurrent, local->message);
                copies_periodic = FALSE;
                asymmetric = TRUE;
                continue;
            }
            if (res == NULL) {
                g_propagate_error(error, g_steal_pointer(&local));
                return FALSE;
            }
            break;
        }
        res = cs_engine_run(sched, topo, &options->engine, &local);
        if (res != NULL) {
            /* A period that held, or the whole replay after every shorter one failed. */
            if (period_key != NULL && (cs_schedule_period(sched) < nranks || asymmetric))
                hold_period(options, period_key, cs_schedule_period(sched));
            break;
        }
        /* One period of ranks where the machine does not repeat likewise: a longer period,
         * up to the whole schedule (engine.c, "Symmetry"). */
        const int period = cs_schedule_period(sched);
        if (!g_error_matches(local, CS_ENGINE_ERROR, CS_ENGINE_ERROR_ASYMMETRIC)
            || period >= nranks) {
            g_propagate_error(error, g_steal_pointer(&local));
            return FALSE;
        }
        g_debug("%s/%s %" G_GINT64_FORMAT " B: %s", algo->name, cs_proto_name(args.proto),
                size_bytes, local->message);
        args.period_min = period + 1;
        asymmetric = TRUE;
        /* Every shorter period failed: the machine repeats under none, for every size. */
        if (periodic_only && cs_algo_period(algo, &args) >= nranks) {
            if (period_key != NULL)
                hold_period(options, period_key, nranks);
            return FALSE;
        }
    }
    if (cs_schedule_period(sched) < nranks)
        g_debug("%s/%s %" G_GINT64_FORMAT " B: replayed one period of %d ranks of %d", algo->name,
                cs_proto_name(args.proto), size_bytes, cs_schedule_period(sched), nranks);

    *out = (CsPrediction){
        .algo = algo,
        .proto = args.proto,
        .n_channels = args.n_channels,
        .peer_channels = args.peer_channels,
        .size = *cs_schedule_size(sched),
        .result = *res,
        .replayed_ranks = cs_schedule_period(concurrent ? copies : sched),
        .asymmetric
        = asymmetric && (concurrent ? !copies_periodic : cs_schedule_period(sched) == nranks),
    };
    out->result.rank_finish = NULL;
    out->time_us = cs_result_time_us(res);
    out->algbw_GBps = cs_result_algbw_GBps(res, &out->size);
    out->busbw_GBps = cs_result_busbw_GBps(res, &out->size, op, nranks);
    return TRUE;
}

/* Whether @args (a size whose schedule repeats under no shift) would repeat if only its
 * ranks' shares were equal: its rings do, the shares do not (CsAlgoShares). */
static gboolean
bracket_applies(const CsTopo *topo, CsOp op, const CsAlgo *algo, const CsAlgoArgs *args,
                const CsPredictOptions *options, int nranks)
{
    if (args->period_min <= 0 || algo->period == NULL || options->engine.observer != NULL
        || (options->concurrent > 1 && options->concurrent_topo != NULL))
        return FALSE;
    /* Not where the machine was found to repeat under no shorter period. */
    g_autofree char *period_key = held_period_key(topo, algo, op, args, options, nranks);
    if (period_key != NULL && held_period(options, period_key) >= nranks)
        return FALSE;
    if (cs_algo_period(algo, args) < nranks)
        return FALSE;
    CsAlgoArgs high = *args;
    high.shares = CS_ALGO_SHARES_HIGH;
    return cs_algo_period(algo, &high) < nranks;
}

/* A point whose rings repeat under a shift of ranks but whose shares do not, bracketed by
 * one period replayed with every share bounded below and above (CsAlgoShares): TRUE with
 * the upper end in @out when the ends lie within CS_PREDICT_BRACKET_TOLERANCE of each other;
 * FALSE with no error otherwise (the caller replays the point exactly). */
static gboolean
bracket_point(const CsTopo *topo, CsOp op, gint64 size_bytes, const CsAlgo *algo,
              const CsAlgoArgs *args, const CsPredictOptions *options, int nranks,
              CsPrediction *out)
{
    CsAlgoArgs high = *args;
    high.shares = CS_ALGO_SHARES_HIGH;
    CsPrediction hi = { 0 };
    CsPrediction found = { 0 };
    g_autoptr(GError) local = NULL;
    /* The period the machine repeats under, found on one element per channel: the same rings
     * and connections in a few steps, where a period that fails at this size would have been
     * built in full before the engine refused it (on 1,440 GPUs half of the ranks' 132 M
     * steps, 15 GB). */
    CsAlgoArgs probe = high;
    probe.size_bytes = (gint64)probe.n_channels * cs_dtype_size(probe.dtype);
    gboolean held = replay_point(topo, op, probe.size_bytes, algo, &probe, options, nranks, TRUE,
                                 &found, &local)
                    && found.replayed_ranks < nranks;
    high.period_min = MAX(high.period_min, found.replayed_ranks);
    held = held
           && replay_point(topo, op, size_bytes, algo, &high, options, nranks, TRUE, &hi, &local)
           && hi.replayed_ranks < nranks;
    if (!held) {
        g_debug("%s/%s %" G_GINT64_FORMAT " B: no bracket (%s)", algo->name,
                cs_proto_name(args->proto), size_bytes,
                local != NULL ? local->message : "the machine repeats under no shorter period");
        return FALSE;
    }
    /* The low end over the period the high end held on. */
    CsAlgoArgs low = *args;
    low.shares = CS_ALGO_SHARES_LOW;
    low.period_min = MAX(low.period_min, hi.replayed_ranks);
    CsPrediction lo = { 0 };
    if (!replay_point(topo, op, size_bytes, algo, &low, options, nranks, TRUE, &lo, &local)
        || lo.replayed_ranks != hi.replayed_ranks) {
        g_debug("%s/%s %" G_GINT64_FORMAT " B: no bracket (%s)", algo->name,
                cs_proto_name(args->proto), size_bytes,
                local != NULL ? local->message : "one period does not hold");
        return FALSE;
    }
    const double width = fabs(hi.time_us - lo.time_us) / hi.time_us;
    g_debug("%s/%s %" G_GINT64_FORMAT " B: bracket %.3f .. %.3f us (%.4f%%) over %d of %d ranks",
            algo->name, cs_proto_name(args->proto), size_bytes, lo.time_us, hi.time_us,
            100.0 * width, hi.replayed_ranks, nranks);
    if (!(width <= CS_PREDICT_BRACKET_TOLERANCE))
        return FALSE;
    *out = hi;
    out->result.n_events = hi.result.n_events + lo.result.n_events;
    out->bracketed = TRUE;
    out->bracket_low_us = lo.time_us;
    return TRUE;
}

/* Builds and simulates one point with everything decided: from the point cache, bracketed
 * (bracket_point()) where unequal shares alone keep a ring from repeating, else replayed. */
static gboolean
simulate_point(const CsTopo *topo, CsOp op, gint64 size_bytes, const CsAlgo *algo,
               const CsAlgoArgs *base, const CsPredictOptions *options, int nranks,
               CsPrediction *out, GError **error)
{
    CsAlgoArgs args = *base;

    args.size_bytes = size_bytes;
    g_autofree char *key = point_key(topo, algo, &args, options);
    if (key != NULL) {
        CsPointCache *cache = options->cache;
        g_mutex_lock(&cache->lock);
        const CsPrediction *known = g_hash_table_lookup(cache->points, key);
        if (known != NULL) {
            cache->hits++;
            /* With the events its simulation replayed: whether a point was simulated first
             * here or earlier (another size, another thread) decides nothing. */
            *out = *known;
        }
        g_mutex_unlock(&cache->lock);
        if (known != NULL)
            return TRUE;
    }
    if (!(bracket_applies(topo, op, algo, &args, options, nranks)
          && bracket_point(topo, op, size_bytes, algo, &args, options, nranks, out))
        && !replay_point(topo, op, size_bytes, algo, &args, options, nranks, FALSE, out, error))
        return FALSE;
    if (key != NULL) {
        CsPointCache *cache = options->cache;
        g_mutex_lock(&cache->lock);
        cache->misses++;
        g_hash_table_insert(cache->points, g_steal_pointer(&key), g_memdup2(out, sizeof *out));
        g_mutex_unlock(&cache->lock);
    }
    return TRUE;
}

/* The line through (@s0, @v0) and (@s1, @v1), at @s. */
static CsTime
extend(CsTime v0, CsTime v1, gint64 s0, gint64 s1, gint64 s)
{
    double slope = (double)(v1 - v0) / (double)(s1 - s0);
    double v = (double)v1 + slope * (double)(s - s1) + 0.5;

    /* Beyond the clock: saturate, and within_clock() refuses the point. */
    return v >= (double)G_MAXINT64 ? G_MAXINT64 : (CsTime)v;
}

/* @ok, unless @out's time left the picosecond clock (a huge size on a slow link): then FALSE
 * with CS_ENGINE_ERROR_CLOCK, never a wrapped, negative time. */
static gboolean
within_clock(gboolean ok, const CsPrediction *out, gint64 size_bytes, GError **error)
{
    if (!ok || (out->result.time >= 0 && out->result.time < G_MAXINT64 / 2))
        return ok;
    g_set_error(error, CS_ENGINE_ERROR, CS_ENGINE_ERROR_CLOCK,
                "%" G_GINT64_FORMAT " bytes would take longer than collsim's clock counts "
                "(about 53 days)",
                size_bytes);
    return FALSE;
}

/* @out at @size on the line through @a and @b (same algorithm, protocol, channels). */
static void
extend_prediction(const CsPrediction *a, const CsPrediction *b, CsOp op, gint64 size_bytes,
                  CsDtype dtype, int nranks, CsPrediction *out)
{
    gint64 s0 = a->size.size_bytes;
    gint64 s1 = b->size.size_bytes;
    CsOpSize sz = cs_op_size(op, size_bytes, dtype, nranks);
    gint64 s = sz.size_bytes;

    *out = *b;
    out->size = sz;
    out->result.time = extend(a->result.time, b->result.time, s0, s1, s);
    out->result.alpha = extend(a->result.alpha, b->result.alpha, s0, s1, s);
    out->result.beta = extend(a->result.beta, b->result.beta, s0, s1, s);
    out->result.gamma = extend(a->result.gamma, b->result.gamma, s0, s1, s);
    out->result.overhead
        = out->result.time - out->result.alpha - out->result.beta - out->result.gamma;
    out->result.n_transfers
        = (gint64)extend(a->result.n_transfers, b->result.n_transfers, s0, s1, s);
    out->result.bytes_moved
        = (gint64)extend(a->result.bytes_moved, b->result.bytes_moved, s0, s1, s);
    out->time_us = cs_result_time_us(&out->result);
    out->algbw_GBps = cs_result_algbw_GBps(&out->result, &sz);
    out->busbw_GBps = cs_result_busbw_GBps(&out->result, &sz, op, nranks);
    out->extrapolated = TRUE;
}

/* Whether three predictions at increasing sizes lie on one line in the bandwidth regime,
 * their two slopes within @tolerance of each other. */
static gboolean
on_one_line_within(const CsPrediction *a, const CsPrediction *b, const CsPrediction *c,
                   double tolerance)
{
    double s0 = (double)(b->result.time - a->result.time)
                / (double)(b->size.size_bytes - a->size.size_bytes);
    double s1 = (double)(c->result.time - b->result.time)
                / (double)(c->size.size_bytes - b->size.size_bytes);

    /* Collinear points on a latency floor (slopes near zero) are not the bandwidth regime:
     * the line must carry at least half of the time at the largest point. */
    double intercept = (double)c->result.time - s1 * (double)c->size.size_bytes;

    return s1 > 0 && fabs(s1 - s0) <= tolerance * fabs(s1)
           && intercept <= 0.5 * (double)c->result.time;
}

static gboolean
on_one_line(const CsPrediction *a, const CsPrediction *b, const CsPrediction *c)
{
    return on_one_line_within(a, b, c, PREDICT_LINEAR_TOLERANCE);
}

/* The window whose largest point is @top bytes on the grid of @loop: the largest 8 x 2^k
 * loops not above @top (at least 8 loops). Every size of one choice (algorithm, protocol,
 * channels, chunk) places its windows on the same grid, so the point cache serves the windows
 * one size simulated to every larger size. */
static gint64
window_on_grid(gint64 top, gint64 loop)
{
    gint64 grid = 8 * loop;

    while (grid <= top / 2)
        grid *= 2;
    return grid;
}

/* A large point from three smaller ones: 1/4, 1/2 and all of a window of 8 x 2^k whole
 * @loop bytes (cs_algo_loop_bytes(); window_on_grid()), the largest within the step budget,
 * at least two loops in the smallest, at the chunk of @size_bytes (point_args() pins it).
 * FALSE with no error when the three are not on one line (the caller then simulates the
 * point whole). */
static gboolean
try_extrapolate(const CsTopo *topo, CsOp op, gint64 size_bytes, const CsAlgo *algo,
                const CsAlgoArgs *args, const CsPredictOptions *options, int nranks,
                double est_steps, gint64 loop, CsPrediction *out, GError **error)
{
    /* Whole loops keep the pipeline's phase: every part of every channel is the same number
     * of chunks. Less than a loop is not the pipeline's line: messages shorter than a chunk
     * grow with the size, which is a line too, but one whose slope is not the pipeline's (an
     * NVLS all-reduce's phases run one after the other, not overlapped). The first loop or
     * two fill the pipeline (an NVLS all-reduce gathers chunk i - 2 while it reduces chunk
     * i): a smallest size of one loop is off the line. */
    gboolean simulated = FALSE;
    CsPrediction p[3];
    gint64 events = 0;

    /* The largest three end at half the size: past that, simulating the point whole costs
     * about as much. */
    gint64 cap = size_bytes / 2;
    gint64 last_top = 0;

    for (double budget = PREDICT_STEP_BUDGET; budget <= PREDICT_STEP_HARD_LIMIT;
         budget *= PREDICT_BUDGET_GROWTH) {
        gint64 top
            = window_on_grid(MIN((gint64)((double)size_bytes * budget / est_steps), cap), loop);
        /* Three points still filling the pipeline (an NVLS all-reduce on 72 ranks fills over
         * three loops) where the budget no longer grows the window: the next window of the
         * grid, up to the cap (three points then cost 7/8 of the size at most). */
        if (top <= last_top)
            top = 2 * last_top;
        if (top > cap)
            break;
        /* Nor past what a schedule may hold at a safe margin: a 1,024-rank NVLS tree at 8 GiB
         * would otherwise replay 4 GiB whole, in 20 GB of memory. */
        if (est_steps * ((double)top / (double)size_bytes) > PREDICT_WINDOW_MAX_STEPS)
            break;
        last_top = top;
        /* A factor of four between the first and the last: a slope that still drifts (an
         * NVLS all-reduce's grows by 4% from 256-512 MiB to 512 MiB-1 GiB on 4 x H100) shows
         * as two slopes that differ, where 1/2, 3/4 and 1 looked straight. */
        gint64 sizes[3] = { top / 4, top / 2, top };
        for (int i = 0; i < 3; i++) {
            if (!simulate_point(topo, op, sizes[i], algo, args, options, nranks, &p[i], error))
                return FALSE;
            events += p[i].result.n_events;
        }
        simulated = TRUE;
        if (on_one_line(&p[0], &p[1], &p[2]))
            break;
        g_debug("%s/%s %" G_GINT64_FORMAT " B: %.3f, %.3f, %.3f us at %" G_GINT64_FORMAT
                " .. %" G_GINT64_FORMAT " B are not on one line",
                algo->name, cs_proto_name(args->proto), size_bytes, p[0].time_us, p[1].time_us,
                p[2].time_us, sizes[0], sizes[2]);
    }
    /* Points that are not on one line are not yet the pipeline's steady state (a latency
     * floor, a channel count still growing): extending them would print a wrong table, so the
     * caller replays the point whole instead. Past the hard limit a looser line will do. */
    if (!simulated)
        return FALSE;
    if (!on_one_line(&p[0], &p[1], &p[2])
        && (est_steps <= PREDICT_STEP_HARD_LIMIT
            || !on_one_line_within(&p[0], &p[1], &p[2], PREDICT_LOOSE_TOLERANCE)))
        return FALSE;
    g_debug("extend %s/%s %" G_GINT64_FORMAT " B from %" G_GINT64_FORMAT " .. %" G_GINT64_FORMAT
            " B (%" G_GINT64_FORMAT " events)",
            algo->name, cs_proto_name(args->proto), size_bytes, p[0].size.size_bytes,
            p[2].size.size_bytes, events);
    extend_prediction(&p[1], &p[2], op, size_bytes, options->dtype, nranks, out);
    out->result.n_events = events;
    return TRUE;
}

/* The algorithm arguments of one point, as cs_predict_one() simulates it. */
static void
point_args(const CsTopo *topo, CsOp op, gint64 size_bytes, const CsAlgo *algo, CsProto proto,
           const CsPredictOptions *options, int nranks, CsAlgoArgs *args)
{
    int topo_ranks = cs_topo_n_ranks(topo);
    gboolean textbook = options->engine.textbook;
    P2pPlan plan;
    gboolean p2p = !textbook && p2p_plan(topo, algo, op, proto, size_bytes, nranks, &plan);
    int channels = options->n_channels > 0 ? options->n_channels
                   : textbook              ? 1
                   : p2p                   ? plan.channels
                         : cs_predict_default_channels(topo, algo, op, proto, size_bytes, nranks);

    /* The algorithm sees the machine only when it runs on all of it (node structure). */
    cs_algo_args_init(args, nranks == topo_ranks ? topo : NULL, op, nranks, size_bytes);
    args->root = options->root;
    args->dtype = options->dtype;
    args->redop = options->redop;
    args->proto = proto;
    args->n_channels = channels;
    /* NCCL stripes each peer's message over some of the channels, by its size, also when the
     * channel count is given (explain and --verify pass the predicted one back). */
    args->peer_channels = p2p ? plan.per_peer : 0;
    /* A schedule that repeats under a shift of ranks replays one period where the machine
     * repeats too (engine.c, "Symmetry"); the same answer, not an approximation. An observer
     * sees every rank. */
    args->period_min = options->engine.observer == NULL && !options->whole
                           ? MAX(options->engine.gpus_per_thread, 1)
                           : 0;
    /* The textbook machine sends each message whole. */
    if (textbook)
        args->chunk_bytes = MAX(size_bytes, (gint64)cs_dtype_size(options->dtype));
    else
        args->chunk_bytes = p2p ? plan.chunk_bytes : nccl_chunk_bytes(algo, op, proto);
    /* The chunk this size gets, pinned: smaller sizes simulated to extend this one (NVLS
     * shrinks its chunk for them) then run the same pipeline, on the same line. */
    args->chunk_bytes = cs_algo_step_chunk(algo, args);
}

/**
 * cs_predict_schedule:
 * The schedule behind a prediction of @size_bytes with @algo and @proto: the same arguments
 * (channels, chunk, root, datatype) cs_predict_one() gives the engine, at the full size even
 * where the prediction was extended from smaller ones. For `collsim --verify`.
 * Returns: (transfer full) (nullable).
 */
CsSchedule *
cs_predict_schedule(const CsTopo *topo, CsOp op, gint64 size_bytes, const CsAlgo *algo,
                    CsProto proto, const CsPredictOptions *options, GError **error)
{
    CsPredictOptions defaults;
    CsAlgoArgs args;

    g_return_val_if_fail(topo != NULL && algo != NULL, NULL);
    if (options == NULL) {
        cs_predict_options_init(&defaults);
        options = &defaults;
    }
    int nranks = options->nranks > 0 ? options->nranks : cs_topo_n_ranks(topo);
    point_args(topo, op, size_bytes, algo, proto, options, nranks, &args);
    args.period_min = 0; /* every rank's program, for the checker and the backends */
    return cs_algo_build(algo, &args, error);
}

CsTime
cs_predict_lower_bound(const CsTopo *topo, CsOp op, gint64 size_bytes, const CsAlgo *algo,
                       CsProto proto, const CsPredictOptions *options)
{
    CsPredictOptions defaults;
    CsAlgoArgs args;
    CsAlgoBound bound;

    g_return_val_if_fail(topo != NULL && algo != NULL, 0);
    if (algo->bound == NULL)
        return 0;
    if (options == NULL) {
        cs_predict_options_init(&defaults);
        options = &defaults;
    }
    const int nranks = options->nranks > 0 ? options->nranks : cs_topo_n_ranks(topo);
    if (nranks > cs_topo_n_ranks(topo) || size_bytes < 0 || size_bytes > CS_PREDICT_MAX_BYTES)
        return 0;
    point_args(topo, op, size_bytes, algo, proto, options, nranks, &args);
    if (!algo->bound(&args, &bound) || (bound.chain <= 0 && bound.bytes_sent <= 0))
        return 0;

    /* Every rank on a device of its own, so that every message crosses at least one link;
     * what the devices can send out at once, over all their links. */
    const int n_devices = cs_topo_n_devices(topo);
    g_autofree double *egress_Bps = g_new0(double, n_devices);
    g_autofree gboolean *taken = g_new0(gboolean, n_devices);
    double min_alpha_s = G_MAXDOUBLE;
    for (int l = 0; l < cs_topo_n_links(topo); l++) {
        const CsLink *link = cs_topo_link(topo, l);
        egress_Bps[link->src] += link->bw_Bps;
        min_alpha_s = MIN(min_alpha_s, link->alpha_s);
    }
    double ranks_egress_Bps = 0.0;
    for (int r = 0; r < nranks; r++) {
        const int d = cs_topo_rank_device(topo, r);
        if (taken[d])
            return 0;
        taken[d] = TRUE;
        ranks_egress_Bps += egress_Bps[d];
    }
    if (min_alpha_s == G_MAXDOUBLE || ranks_egress_Bps <= 0.0)
        return 0;

    /* A message arrives a route's alpha plus the protocol's hop latency on its class after it
     * left (engine.c, setup_costs), and LL and LL128 put only part of a line on the wire. */
    const gboolean textbook = options->engine.textbook;
    const CsProtoInfo *pi = cs_proto_info(proto);
    double min_hop_s = G_MAXDOUBLE;
    for (int k = 0; k < CS_N_LINK_CLASSES; k++) {
        const double own = cs_topo_hop_latency_override(topo, proto, (CsLinkClass)k);
        min_hop_s = MIN(min_hop_s, own >= 0 ? own : pi->hop_latency_s[k]);
    }
    if (textbook)
        min_hop_s = 0.0;
    const double data_fraction = textbook ? 1.0 : pi->data_fraction;
    const double latency_s = (double)bound.chain * (MAX(min_alpha_s, 0.0) + MAX(min_hop_s, 0.0));
    /* Less a ten-thousandth: the network model rounds each flow's end to a picosecond. */
    const double bandwidth_s
        = (double)bound.bytes_sent / data_fraction / ranks_egress_Bps * (1.0 - 1e-4);
    const double ps = floor(MAX(latency_s, bandwidth_s) * CS_TIME_PS_PER_S);
    /* The engine rounds each hop's latency to a picosecond: allow one per hop. */
    const double slack = (double)bound.chain + 1.0;
    /* A bound past the clock's range (8 TiB on 1 MB/s links) saturates: converting it to
     * CsTime would be undefined (clang's -fsanitize=float-cast-overflow caught it). */
    if (ps - slack >= (double)G_MAXINT64)
        return G_MAXINT64;
    return ps > slack ? (CsTime)(ps - slack) : 0;
}

/**
 * cs_predict_one:
 * Builds @algo's schedule for @op of @size_bytes on the first options->nranks ranks of @topo
 * with @proto on options->n_channels channels (0: cs_predict_default_channels()), and
 * simulates it. Chunks are NCCL's: one slot per step, four for Simple rings of all-reduce,
 * all-gather and reduce-scatter; in textbook mode one chunk per message.
 *
 * A large size (more than about 60,000 chunk steps and 16 loops, a loop being ranks x
 * channels x chunk) is not replayed chunk by chunk unless options->exact: three sizes of 1/4,
 * 1/2 and 1 times the largest window of 8 x 2^k loops within that budget (at least 2, 4 and
 * 8 loops, at most half the size), at the size's own chunk, are simulated, and when their
 * times lie on one line (slopes within 0.5%: the pipeline's steady state) the point is
 * extended on it, every part of the time split on its own line (@out->extrapolated).
 * Otherwise the window doubles and the three points are tried again; a point still beyond
 * about 3.8 M steps is extended when the largest three agree within 5%, and otherwise, like
 * every smaller one, simulated whole (slow, never wrong). Sizes above 1 PiB are refused.
 *
 * Returns: TRUE with @out filled (its result keeps no per-rank array), or FALSE with the
 * algorithm's error (CS_SCHEDULE_ERROR_UNSUPPORTED: it cannot serve this case) or the
 * engine's (CS_ENGINE_ERROR_MISMATCH: the protocol cannot cross one of the routes, or
 * is LL or LL128 on ranks that are CPUs).
 */
gboolean
cs_predict_one(const CsTopo *topo, CsOp op, gint64 size_bytes, const CsAlgo *algo, CsProto proto,
               const CsPredictOptions *options, CsPrediction *out, GError **error)
{
    CsPredictOptions defaults;
    CsAlgoArgs args;

    g_return_val_if_fail(topo != NULL && algo != NULL && out != NULL, FALSE);
    if (options == NULL) {
        cs_predict_options_init(&defaults);
        options = &defaults;
    }
    int topo_ranks = cs_topo_n_ranks(topo);
    int nranks = options->nranks > 0 ? options->nranks : topo_ranks;
    if (nranks > topo_ranks) {
        g_set_error(error, CS_ENGINE_ERROR, CS_ENGINE_ERROR_MISMATCH,
                    "%d ranks asked but topology %s has %d", nranks, cs_topo_name(topo),
                    topo_ranks);
        return FALSE;
    }
    if (size_bytes > CS_PREDICT_MAX_BYTES) {
        g_set_error(error, CS_ENGINE_ERROR, CS_ENGINE_ERROR_MISMATCH,
                    "%" G_GINT64_FORMAT " bytes is beyond what collsim predicts (1 PiB)",
                    size_bytes);
        return FALSE;
    }
    /* LL and LL128 need GPU ranks (models/protocol.c). */
    for (int r = 0; r < nranks && !options->engine.textbook; r++) {
        const CsDevice *dev = cs_topo_device(topo, cs_topo_rank_device(topo, r));
        const char *why = NULL;
        if (!cs_proto_legal_on_device(proto, dev->kind, &why)) {
            g_set_error(error, CS_ENGINE_ERROR, CS_ENGINE_ERROR_MISMATCH,
                        "protocol %s cannot run on rank %d (%s, a %s): %s", cs_proto_name(proto), r,
                        dev->name, cs_device_kind_name(dev->kind), why);
            return FALSE;
        }
    }
    point_args(topo, op, size_bytes, algo, proto, options, nranks, &args);

    if (!options->exact && !options->engine.textbook) {
        /* Extending needs eight whole loops below half the size (try_extrapolate()); a
         * smaller size is simulated whole. Each loop adds the same steps: count them on one
         * loop's schedule (an NVLS all-reduce on 72 ranks has P times the steps per chunk of
         * a ring, so a formula per algorithm would not do). */
        gint64 loop = cs_algo_loop_bytes(algo, &args);
        if (size_bytes >= 16 * loop) {
            CsAlgoArgs probe_args = args;
            probe_args.size_bytes = loop;
            g_autoptr(CsSchedule) owned = NULL;
            const CsSchedule *probe_sched
                = build_schedule(topo, algo, &probe_args, options, &owned, error);
            if (probe_sched == NULL)
                return FALSE;
            double est_steps
                = (double)cs_schedule_n_steps(probe_sched) * ((double)size_bytes / (double)loop);
            if (est_steps > PREDICT_STEP_BUDGET) {
                g_autoptr(GError) local = NULL;
                if (try_extrapolate(topo, op, size_bytes, algo, &args, options, nranks, est_steps,
                                    loop, out, &local))
                    return within_clock(TRUE, out, size_bytes, error);
                if (local != NULL) {
                    g_propagate_error(error, g_steal_pointer(&local));
                    return FALSE;
                }
            }
        }
    }
    return within_clock(
        simulate_point(topo, op, size_bytes, algo, &args, options, nranks, out, error), out,
        size_bytes, error);
}

/* ---- The best point ---- */

/* Errors that mean "this candidate does not apply", as opposed to a broken input. */
static gboolean
is_refusal(const GError *error)
{
    return g_error_matches(error, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_UNSUPPORTED)
           || g_error_matches(error, CS_ENGINE_ERROR, CS_ENGINE_ERROR_MISMATCH);
}

/* NCCL's pick under options->nccl, simulated: 1 with @out set, 0 when NCCL has no model for
 * @op or allows nothing collsim simulates (the caller then takes the fastest), -1 with
 * @error. NCCL picks among what NCCL_ALGO (options->nccl_algo_mask, @algo_filter) and
 * NCCL_PROTO (@proto_filter) leave; where collsim does not simulate its pick or refuses it,
 * NCCL's next choice is taken. */
static int
predict_nccl_pick(const CsTopo *topo, CsOp op, gint64 size_bytes, const CsAlgo *algo_filter,
                  int proto_filter, const CsPredictOptions *options, CsPrediction *out,
                  GError **error)
{
    guint algos = options->nccl_algo_mask != 0 ? options->nccl_algo_mask : CS_NCCL_ALL_ALGOS;
    if (algo_filter != NULL) {
        CsNcclAlgo a;
        if (!cs_nccl_algo_from_collsim(algo_filter->name, &a))
            return 0;
        algos &= 1u << a;
    }
    guint protos = CS_NCCL_ALL_PROTOS & unforced_protos(topo, options);
    if (proto_filter >= 0)
        protos &= 1u << proto_filter;
    CsNcclPrediction pick;
    while (algos != 0
           && cs_nccl_model_pick_among(options->nccl, op, size_bytes, algos, protos, &pick)) {
        const char *name = cs_nccl_algo_collsim_name(pick.algo);
        const CsAlgo *algo = name != NULL ? cs_algo_lookup(name, NULL) : NULL;
        g_autoptr(GError) local = NULL;
        if (algo != NULL
            && cs_predict_one(topo, op, size_bytes, algo, pick.proto, options, out, &local)) {
            out->nccl_picked = TRUE;
            return 1;
        }
        if (local != NULL && !is_refusal(local)) {
            g_propagate_error(error, g_steal_pointer(&local));
            return -1;
        }
        algos &= ~(1u << pick.algo);
    }
    return 0;
}

/* The bound cs_predict_best() prunes with. cs_predict_lower_bound() holds for a size
 * simulated whole; one extended from smaller sizes may come out a little below it (0.1% for
 * a 2-rank reduce-scatter at TiB sizes on 64 channels), as much as the line it was extended
 * on allows: the bound is lowered by that tolerance unless every size is simulated. */
static CsTime
pruning_bound(const CsTopo *topo, CsOp op, gint64 size_bytes, const CsAlgo *algo, CsProto proto,
              const CsPredictOptions *options)
{
    const CsTime bound = cs_predict_lower_bound(topo, op, size_bytes, algo, proto, options);
    if (options != NULL && options->exact)
        return bound;
    return (CsTime)((double)bound * (1.0 - PREDICT_LOOSE_TOLERANCE));
}

/* One candidate of cs_predict_best(): its place in listing order, and the time it cannot
 * beat. */
typedef struct {
    const CsAlgo *algo;
    CsProto proto;
    int index;
    CsTime bound;
} Candidate;

static gint
candidate_cmp(gconstpointer pa, gconstpointer pb)
{
    const Candidate *a = pa;
    const Candidate *b = pb;
    if (a->bound != b->bound)
        return a->bound < b->bound ? -1 : 1;
    return a->index - b->index;
}

/**
 * cs_predict_best:
 * Predicts every candidate algorithm that implements @op and supports this case, with every
 * protocol (or only @proto_filter, a CsProto or -1) that can cross the routes it uses, and
 * keeps the fastest; ties go to the earlier algorithm and protocol in listing order. The
 * candidates are @algo_filter when given; otherwise what an nccl-tests run can execute
 * (NCCL 2.2x's algorithms per collective, see algo_in_nccl_tests(); grouped send/recv for
 * scatter, gather and all-to-all), or every
 * registered algorithm with options->any_algorithm: collsim predicts like nccl-tests unless
 * asked to weigh algorithms NCCL does not have. With options->pick (not CS_PICK_FASTEST) and a
 * model in options->nccl, NCCL's own choice is simulated instead (@out->nccl_picked), as NCCL
 * makes it when nothing is forced; where NCCL allows nothing collsim simulates, or has no model
 * for @op, the fastest is kept. Candidates run in order of their lower bound
 * (cs_predict_lower_bound()); one whose bound the fastest so far beats is not simulated, which
 * changes no answer (options->exhaustive simulates it anyway).
 * Returns: TRUE with @out set, or FALSE with @error: the first refusal's reason when nothing
 * applies, or the first error that is not a refusal.
 */
gboolean
cs_predict_best(const CsTopo *topo, CsOp op, gint64 size_bytes, const CsAlgo *algo_filter,
                int proto_filter, const CsPredictOptions *options, CsPrediction *out,
                GError **error)
{
    g_autoptr(GError) first_refusal = NULL;
    gboolean found = FALSE;
    int nranks;

    g_return_val_if_fail(topo != NULL && out != NULL, FALSE);
    if (options != NULL && options->pick != CS_PICK_FASTEST && options->nccl != NULL
        && !options->any_algorithm) {
        int found_pick = predict_nccl_pick(topo, op, size_bytes, algo_filter, proto_filter, options,
                                           out, error);
        if (found_pick != 0)
            return found_pick > 0;
    }
    nranks = options != NULL && options->nranks > 0 ? options->nranks : cs_topo_n_ranks(topo);
    /* On CPU ranks every algorithm and protocol is a candidate (cs_predict_default_candidate). */
    gboolean any
        = (options != NULL && options->any_algorithm) || cs_predict_cpu_ranks(topo, nranks);
    const guint allowed_protos = unforced_protos(topo, options);
    if (proto_filter < 0 && allowed_protos == 0) {
        g_autofree char *why = cs_predict_no_shared_protocol(topo, nranks);
        g_set_error(error, CS_ENGINE_ERROR, CS_ENGINE_ERROR_MISMATCH,
                    "%s; force one (--proto) or run fewer ranks (--ranks)", why);
        return FALSE;
    }
    g_autoptr(GArray) cands = g_array_new(FALSE, FALSE, sizeof(Candidate));
    int refusal_at = G_MAXINT; /* listing position of first_refusal: 2 x candidate index */
    int n_unsimulated = 0;
    Candidate unsimulated = { 0 };
    g_autoptr(GError) too_large = NULL;
    gboolean op_has_algo = FALSE;
    for (const CsAlgo *const *a = cs_algo_registry(); *a != NULL; a++) {
        const CsAlgo *algo = *a;
        const char *why = NULL;
        if (algo_filter != NULL && algo != algo_filter)
            continue;
        if ((algo->ops & CS_OP_BIT(op)) == 0)
            continue;
        if (algo_filter == NULL && !cs_predict_default_candidate(algo, op, topo, nranks, any))
            continue;
        op_has_algo = TRUE;
        if (algo->supports != NULL
            && !algo->supports(nranks == cs_topo_n_ranks(topo) ? topo : NULL, op, nranks, &why)) {
            if (first_refusal == NULL) {
                g_set_error(&first_refusal, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_UNSUPPORTED,
                            "algorithm %s cannot run %s on %d ranks: %s", algo->name,
                            cs_op_name(op), nranks, why != NULL ? why : "not supported");
                refusal_at = 2 * (int)cands->len - 1;
            }
            continue;
        }
        for (int p = 0; p < CS_N_PROTOS; p++) {
            if (proto_filter >= 0 && p != proto_filter)
                continue;
            if (proto_filter < 0 && (allowed_protos & (1u << p)) == 0)
                continue;
            if (proto_filter < 0 && !any
                && !proto_in_nccl_tests(topo, algo, op, (CsProto)p, size_bytes, nranks))
                continue;
            const gboolean bounded = options == NULL || !options->exhaustive;
            Candidate c = {
                algo,
                (CsProto)p,
                (int)cands->len,
                bounded ? pruning_bound(topo, op, size_bytes, algo, (CsProto)p, options) : 0,
            };
            g_array_append_val(cands, c);
        }
    }
    /* Branch and bound: the candidates the least bounded first, so that one whose bound the
     * best so far already beats is never simulated (a 1024-rank ring replays tens of millions
     * of steps to lose to a tree at every size below gigabytes). Ties still go to listing
     * order. */
    g_array_sort(cands, candidate_cmp);
    int best_index = -1;
    for (guint i = 0; i < cands->len; i++) {
        const Candidate *c = &g_array_index(cands, Candidate, i);
        if (found
            && (c->bound > out->result.time
                || (c->bound == out->result.time && c->index > best_index)))
            continue;
        CsPrediction pred;
        g_autoptr(GError) local = NULL;
        if (!cs_predict_one(topo, op, size_bytes, c->algo, c->proto, options, &pred, &local)) {
            /* A candidate too large to simulate is left out, and said so (the caller notes
             * it next to the pick); with nothing else to pick it is the error. */
            if (g_error_matches(local, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_TOO_LARGE)) {
                if (n_unsimulated++ == 0) {
                    unsimulated = *c;
                    too_large = g_steal_pointer(&local);
                }
                continue;
            }
            if (!is_refusal(local)) {
                g_propagate_error(error, g_steal_pointer(&local));
                return FALSE;
            }
            /* The refusal said is the first in listing order, whatever order ran. */
            if (first_refusal == NULL || 2 * c->index < refusal_at) {
                g_clear_error(&first_refusal);
                first_refusal = g_steal_pointer(&local);
                refusal_at = 2 * c->index;
            }
            continue;
        }
        if (!found || pred.result.time < out->result.time
            || (pred.result.time == out->result.time && c->index < best_index)) {
            *out = pred;
            best_index = c->index;
            found = TRUE;
        }
    }
    if (found) {
        out->n_unsimulated = n_unsimulated;
        out->unsimulated_algo = n_unsimulated > 0 ? unsimulated.algo : NULL;
        out->unsimulated_proto = unsimulated.proto;
        return TRUE;
    }
    if (too_large != NULL) {
        g_propagate_error(error, g_steal_pointer(&too_large));
        return FALSE;
    }
    if (first_refusal != NULL) {
        g_propagate_error(error, g_steal_pointer(&first_refusal));
    }
    else if (op_has_algo && cands->len == 0 && proto_filter < 0) {
        /* The algorithms are there; the protocols allowed (by the topology or the trace) are not
         * theirs. */
        g_autoptr(GString) names = g_string_new(NULL);
        for (int p = 0; p < CS_N_PROTOS; p++)
            if (allowed_protos & (1u << p))
                g_string_append_printf(names, "%s%s", names->len > 0 ? ", " : "",
                                       cs_proto_info((CsProto)p)->name);
        g_autofree char *whose
            = options != NULL && options->nccl_proto_mask != 0
                  ? g_strdup("the trace's NCCL_PROTO allows")
                  : g_strdup_printf("%s's default_protocols allow", cs_topo_name(topo));
        g_set_error(error, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_UNSUPPORTED,
                    "no %s algorithm runs on the protocols %s (%s); force one (--proto)",
                    cs_op_name(op), whose, names->str);
    }
    else {
        g_set_error(error, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_UNSUPPORTED,
                    "no algorithm implements %s", cs_op_name(op));
    }
    return FALSE;
}

/* ---- Sweeps ---- */

/* Past max_events, a sweep still simulates until the last three points lie on one line
 * (slopes within SWEEP_LINEAR_TOLERANCE), or one simulation exceeds this many times the
 * budget. */
#define SWEEP_LINEAR_TOLERANCE 0.01
#define SWEEP_HARD_FACTOR 16

/* Whether the times at @i, @j, @k (simulated, ascending sizes) lie on one line. */
static gboolean
linear(const CsPrediction *out, int i, int j, int k)
{
    if (i < 0)
        return FALSE;
    double s0 = (double)(out[j].result.time - out[i].result.time)
                / (double)(out[j].size.size_bytes - out[i].size.size_bytes);
    double s1 = (double)(out[k].result.time - out[j].result.time)
                / (double)(out[k].size.size_bytes - out[j].size.size_bytes);
    return fabs(s1 - s0) <= SWEEP_LINEAR_TOLERANCE * fabs(s1);
}

/**
 * cs_predict_sweep:
 * Predictions of one algorithm x protocol over a grid of sizes; sizes past the event budget
 * are extrapolated from the last two simulated ones (see predict.h). Every part of the time
 * split is extended on its own line, so the parts still add up.
 */
gboolean
cs_predict_sweep(const CsTopo *topo, CsOp op, const gint64 *sizes, int n_sizes, const CsAlgo *algo,
                 CsProto proto, const CsPredictOptions *options, gint64 max_events,
                 CsPrediction *out, gboolean *valid, gboolean *extrapolated, GError **error)
{
    CsPredictOptions defaults;
    int last = -1; /* the last three simulated sizes */
    int before = -1;
    int earlier = -1;
    gboolean over_budget = FALSE;

    g_return_val_if_fail(topo != NULL && algo != NULL && out != NULL, FALSE);
    if (options == NULL) {
        cs_predict_options_init(&defaults);
        options = &defaults;
    }
    int nranks = options->nranks > 0 ? options->nranks : cs_topo_n_ranks(topo);
    /* With an event budget the sweep extends its own grid points; each point is exact. */
    CsPredictOptions point = *options;
    if (max_events > 0)
        point.exact = TRUE;
    for (int i = 0; i < n_sizes; i++) {
        g_autoptr(GError) local = NULL;
        memset(&out[i], 0, sizeof(out[i]));
        if (valid != NULL)
            valid[i] = FALSE;
        if (extrapolated != NULL)
            extrapolated[i] = FALSE;

        int channels = options->n_channels > 0
                           ? options->n_channels
                           : cs_predict_default_channels(topo, algo, op, proto, sizes[i], nranks);
        int peer_channels = options->engine.textbook
                                ? 0
                                : cs_predict_peer_channels(topo, algo, op, proto, sizes[i], nranks);
        if (over_budget && before >= 0 && !options->engine.textbook
            && out[last].n_channels == channels && out[before].n_channels == channels
            && out[last].peer_channels == peer_channels
            && out[before].peer_channels == peer_channels && sizes[i] > sizes[last]) {
            extend_prediction(&out[before], &out[last], op, sizes[i], options->dtype, nranks,
                              &out[i]);
            out[i].result.n_events = 0;
            if (valid != NULL)
                valid[i] = TRUE;
            if (extrapolated != NULL)
                extrapolated[i] = TRUE;
            continue;
        }
        if (!cs_predict_one(topo, op, sizes[i], algo, proto, &point, &out[i], &local)) {
            memset(&out[i], 0, sizeof(out[i]));
            if (!is_refusal(local)) {
                g_propagate_error(error, g_steal_pointer(&local));
                return FALSE;
            }
            continue;
        }
        if (valid != NULL)
            valid[i] = TRUE;
        earlier = before;
        before = last;
        last = i;
        if (max_events > 0 && out[i].result.n_events > max_events)
            over_budget = linear(out, earlier, before, last)
                          || out[i].result.n_events > SWEEP_HARD_FACTOR * max_events;
    }
    return TRUE;
}
