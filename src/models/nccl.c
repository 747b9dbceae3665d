// SPDX-License-Identifier: MIT
/* NCCL's own analytical cost model, re-implemented from its formulas: what NCCL predicts for
 * each algorithm x protocol and which one it picks. The constants are nccl_constants.c's (one
 * set per release), the system nccl_system.c's (what NCCL's topology search finds), the names
 * nccl_names.c's.
 *
 * Sources (read, not copied):
 *   NVIDIA/nccl src/graph/tuning.cc  ncclTopoTuneModel() (latencies, bus bandwidths, the
 *     bus -> algorithm bandwidth ratio) and ncclTopoGetAlgoTime() (tree correction, ring
 *     plateau, time = lat + nBytes / (1000 * bw)), releases 2.19 and 2.28.
 * Time is in microseconds and bandwidth in GB/s (1e9 B/s) as in NCCL, so
 * time_us = lat_us + nBytes / (1000 * bw_GBps). */
#include "models/nccl-private.h"

/* clang-format off */
G_DEFINE_QUARK(cs_nccl_error_quark, cs_nccl_error)
/* clang-format on */

struct _CsNcclModel {
    const CsNcclConstants *c;
    CsNcclSystem sys;
    double latency_us[CS_NCCL_N_FUNCS][CS_NCCL_N_ALGOS][CS_N_PROTOS];
    double bandwidth_GBps[CS_NCCL_N_FUNCS][CS_NCCL_N_ALGOS][CS_N_PROTOS];
    int comm_channels; /* comm->nChannels: min of the tree and ring graphs */
};

/* NCCL's log2i: floor(log2(n)), 0 for n <= 1. */
static int
log2i(gint64 n)
{
    int l = 0;
    while (n > 1) {
        n >>= 1;
        l++;
    }
    return l;
}

static gboolean
is_ag_rs(int f)
{
    return f == CS_NCCL_FUNC_ALL_GATHER || f == CS_NCCL_FUNC_REDUCE_SCATTER;
}

/* RCCL's own model (rccl_constants.c): NCCL's formulas on rcclTuningModel[]'s tables. */
static gboolean
is_rccl(const CsNcclModel *m)
{
    return cs_nccl_constants_rccl(m->c);
}

/* Formulas NCCL changed by 2.28 that RCCL 2.26 already has (its NCCL base is newer than 2.19's
 * forms): the network latency added to the table's, the ring's 2 (nNodes - 1) network steps,
 * the bus -> algorithm ratio 1 for non-ring all-gather / reduce-scatter. */
static gboolean
newer_forms(const CsNcclModel *m)
{
    return m->c->formula == CS_NCCL_FORMULA_2_28 || m->c->formula == CS_NCCL_FORMULA_RCCL_2_26;
}

/* rcclTuningModel[comm->topo->tuning]; an entry collsim did not transcribe is never selected
 * (nccl_system.c picks 0, 5 or 6), entry 0 stands in for safety. */
static const CsRcclTuningModel *
rccl_model(const CsNcclModel *m)
{
    const CsRcclTuningModel *t
        = &m->c->rccl_models[CLAMP(m->sys.rccl_tuning, 0, CS_RCCL_N_TUNING_MODELS - 1)];
    return t->present ? t : &m->c->rccl_models[0];
}

/* The per-hop latency of hardware class @hw: NCCL's hwLat, or RCCL's tuning model's. */
static double
hw_lat(const CsNcclModel *m, int hw, int a, int p)
{
    return is_rccl(m) ? rccl_model(m)->hw_lat_us[hw][a][p] : m->c->hw_lat_us[hw][a][p];
}

/* RCCL tuning.cc's arch rule for Tree/Simple and Ring/LL broadcast-reduce: 2.21.5 tests
 * IsArchMatch(gcn, "gfx94"), 2.26 "gfx942" or "gfx950", each with every rank's GPU in this
 * node's topology (topo->nodes[GPU].count == nRanks). */
static gboolean
rccl_gfx94_one_node(const CsNcclModel *m)
{
    const CsNcclAmdArch arch = m->sys.amd_arch;
    const gboolean match
        = arch == CS_NCCL_AMD_GFX942
          || (m->c->formula == CS_NCCL_FORMULA_RCCL_2_26 && arch == CS_NCCL_AMD_GFX950);
    return match && m->sys.n_nodes == 1;
}

/* Whether ncclTopoTuneModel computes (func, algo, proto) at all. */
static gboolean
modelled(const CsNcclModel *m, int f, int a, int p)
{
    const gboolean v228 = m->c->formula == CS_NCCL_FORMULA_2_28;
    /* RCCL: no PAT (2.21.5 has none; 2.26 models it only with NCCL_PAT_ENABLE, default 0);
     * Tree/Simple is skipped on one gfx94x node, so its bandwidth stays 0. */
    if (is_rccl(m)
        && (a == CS_NCCL_ALGO_PAT
            || (a == CS_NCCL_ALGO_TREE && p == CS_PROTO_SIMPLE && rccl_gfx94_one_node(m))))
        return FALSE;
    if ((f == CS_NCCL_FUNC_BROADCAST || f == CS_NCCL_FUNC_REDUCE) && a != CS_NCCL_ALGO_RING)
        return FALSE;
    if (is_ag_rs(f) && a != CS_NCCL_ALGO_RING && a != CS_NCCL_ALGO_NVLS
        && a != CS_NCCL_ALGO_COLLNET_DIRECT && !(v228 && a == CS_NCCL_ALGO_PAT))
        return FALSE;
    if (a == CS_NCCL_ALGO_PAT && (!v228 || f == CS_NCCL_FUNC_ALL_REDUCE))
        return FALSE;
    if ((a == CS_NCCL_ALGO_NVLS || a == CS_NCCL_ALGO_NVLS_TREE) && p != CS_PROTO_SIMPLE)
        return FALSE;
    /* 2.28 ncclPatEnable: one GPU per node, Simple only. */
    if (a == CS_NCCL_ALGO_PAT && (p != CS_PROTO_SIMPLE || m->sys.n_nodes != m->sys.n_ranks))
        return FALSE;
    return TRUE;
}

/* The bus bandwidth of one entry before the bus -> algorithm conversion (GB/s). */
static double
bus_bandwidth(const CsNcclModel *m, int f, int a, int p)
{
    const CsNcclConstants *c = m->c;
    const CsNcclSystem *s = &m->sys;
    const CsNcclGraph *g = &s->graphs[a];
    const gboolean v228 = c->formula == CS_NCCL_FORMULA_2_28;
    const int n_nodes = s->n_nodes;
    const double ppn = (double)s->n_ranks / n_nodes;
    const int arch = MIN((int)s->arch, c->n_archs - 1);
    const int i2 = n_nodes <= 2 ? n_nodes - 1 : 2;
    const int i1 = n_nodes == 1 ? arch : (s->cpu_amd ? 1 : 0);
    const double ll_max_bw = c->ll_max_bw[i1][i2];
    const double tree_max = c->per_ch_max_tree_bw[arch][i2];
    const double ring_ll128_max = c->per_ch_max_ring_ll128_bw[arch][i2];
    const double tree_ll128_max = c->per_ch_max_tree_ll128_bw[arch][i2];
    const double nvls_tree_max = c->per_ch_max_nvls_tree_bw[arch][i2];
    const gboolean collnet = a == CS_NCCL_ALGO_COLLNET_DIRECT || a == CS_NCCL_ALGO_COLLNET_CHAIN;
    const int nch = g->n_channels;

    if (nch <= 0)
        return 0.0;
    double bw = n_nodes <= 2 || collnet ? g->bw_intra_GBps : g->bw_inter_GBps;
    if (is_rccl(m)) {
        /* RCCL tuning.cc (2.21.5 and 2.26, the __HIP_PLATFORM_AMD__ branch): the bus
         * bandwidth times bwRatio[nNodes <= 2 ? 0 : 1][a][p] replaces NCCL's refinements;
         * Ring/LL broadcast and reduce on one gfx94x node x1.65. */
        double bus = nch * bw * rccl_model(m)->bw_ratio[n_nodes <= 2 ? 0 : 1][a][p];
        if (a == CS_NCCL_ALGO_RING && p == CS_PROTO_LL
            && (f == CS_NCCL_FUNC_BROADCAST || f == CS_NCCL_FUNC_REDUCE) && rccl_gfx94_one_node(m))
            bus *= 1.65;
        return bus;
    }
    if (a == CS_NCCL_ALGO_NVLS || a == CS_NCCL_ALGO_NVLS_TREE) {
        if (v228) {
            /* 2.28: NVLS needs 2 channels; per-channel bus bandwidth through the switch. */
            if (nch < 2)
                return 0.0;
            double intra = g->bw_intra_GBps * c->nvls_efficiency[arch] * (nch - 1) / nch;
            intra *= f == CS_NCCL_FUNC_ALL_REDUCE ? 2.0 : (ppn - 1.0) / ppn;
            const double inter
                = g->bw_inter_GBps * ((n_nodes <= 2 && a == CS_NCCL_ALGO_NVLS_TREE) ? 2.0 : 1.0);
            bw = MIN(intra, inter);
            if (a == CS_NCCL_ALGO_NVLS_TREE)
                bw = MIN(bw, nvls_tree_max);
        }
        else if (a == CS_NCCL_ALGO_NVLS) {
            bw = MIN(g->bw_intra_GBps, g->bw_inter_GBps);
        }
        else {
            bw = MIN(g->bw_intra_GBps, n_nodes <= 2 ? g->bw_inter_GBps : g->bw_inter_GBps / 2);
        }
    }
    double bus = nch * bw;

    /* The refinements below are tuning.cc's "various model refinements", same release.
     * Ring/LL: 2.28 halves the bus (LL's 8 flag bytes per 16), 2.19 took 1/4 (1/3 for
     * single-node all-gather, reduce-scatter, broadcast), both capped at llMaxBw. */
    if (a == CS_NCCL_ALGO_RING && p == CS_PROTO_LL) {
        const gboolean quarter
            = n_nodes > 1 || f == CS_NCCL_FUNC_ALL_REDUCE || f == CS_NCCL_FUNC_REDUCE;
        bus = MIN(ll_max_bw, bus * (v228 ? 0.5 : (quarter ? 1.0 / 4.0 : 1.0 / 3.0)));
    }
    /* Ring/LL128: 0.92 (~120/128 data bytes), 2.19 took 0.7 with one rank per node. */
    if (a == CS_NCCL_ALGO_RING && p == CS_PROTO_LL128)
        bus = MIN(bus * (!v228 && ppn < 2 ? 0.7 : 0.92), nch * ring_ll128_max);
    /* Tree: 0.92 of the bus, capped per channel (perChMaxTreeBws). */
    if (a == CS_NCCL_ALGO_TREE && (!v228 || f == CS_NCCL_FUNC_ALL_REDUCE))
        bus = MIN(bus * 0.92, nch * tree_max);
    /* Tree/LL: 1/3.8 of that, capped at llMaxBw. */
    if (a == CS_NCCL_ALGO_TREE && p == CS_PROTO_LL)
        bus = MIN(bus * 1.0 / 3.8, ll_max_bw);
    /* Tree/LL128: 7/9 on one node, 120/128 across nodes, capped per channel. */
    if (a == CS_NCCL_ALGO_TREE && p == CS_PROTO_LL128)
        bus = MIN(bus * (n_nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0), nch * tree_ll128_max);
    /* Plain TREE pattern (all NIC traffic through one GPU): 0.85. */
    if (a == CS_NCCL_ALGO_TREE && g->tree_pattern)
        bus *= 0.85;
    /* 2.28 PAT: 0.75. */
    if (v228 && a == CS_NCCL_ALGO_PAT)
        bus *= 0.75;
    if (collnet && p != CS_PROTO_SIMPLE)
        return 0.0;
    if (a == CS_NCCL_ALGO_COLLNET_DIRECT) {
        if (is_ag_rs(f)) {
            /* AllGather/ReduceScatter on CollNet need one NIC per GPU (one head per rank). */
            if (n_nodes > 1 && ppn > s->n_nics)
                return 0.0;
            if (v228) {
                /* 2.28: ppn x min(intra, 0.9 x inter). */
                bus = ppn * MIN(g->bw_intra_GBps, g->bw_inter_GBps * 0.9);
            }
            else {
                /* 2.19: measured 0.95 at 1 GPU per node and 0.85 at 8, interpolated. */
                bus = ppn * bw;
                const double w = (ppn - 1.0) / (8.0 - 1.0);
                bus *= w * 0.85 + (1.0 - w) * 0.95;
            }
        }
        else {
            /* GPU/NIC ratio, halfway discounted; 0.85 from Hopper on (tuning.cc). */
            double factor = ppn / (1.0 * nch);
            factor -= (factor - 1.0) / 2.0;
            bus /= factor;
            if (s->arch >= CS_NCCL_ARCH_HOPPER)
                bus *= 0.85;
        }
    }
    /* 2.28: NVLS AllGather/ReduceScatter across nodes also need CollNet and a head per rank. */
    if (v228 && a == CS_NCCL_ALGO_NVLS && is_ag_rs(f) && n_nodes > 1
        && (!s->collnet || ppn > s->n_nics))
        return 0.0;
    return bus;
}

/* Bus -> algorithm bandwidth: the ring moves nsteps/nRanks of the data per byte of result. */
static double
algo_ratio(const CsNcclModel *m, int f, int a, int nsteps)
{
    const gboolean v228 = newer_forms(m);
    if (v228 ? (a != CS_NCCL_ALGO_RING && is_ag_rs(f))
             : (a == CS_NCCL_ALGO_COLLNET_DIRECT && is_ag_rs(f)))
        return 1.0;
    if (a == CS_NCCL_ALGO_RING)
        return (double)m->sys.n_ranks / nsteps;
    if (a == CS_NCCL_ALGO_NVLS || a == CS_NCCL_ALGO_NVLS_TREE)
        return m->c->formula == CS_NCCL_FORMULA_2_28 ? (double)m->sys.n_ranks / nsteps : 5.0 / 6.0;
    return 0.5;
}

static double
latency(const CsNcclModel *m, int f, int a, int p, int nsteps)
{
    const CsNcclConstants *c = m->c;
    const CsNcclSystem *s = &m->sys;
    const CsNcclGraph *g = &s->graphs[a];
    const gboolean v228 = newer_forms(m);
    const int n_nodes = s->n_nodes;
    const int n_ranks = s->n_ranks;
    const int ppn_int = n_ranks / n_nodes;
    const int intra_hw = g->hw_intra;
    const int hw = n_nodes == 1 ? intra_hw : CS_NCCL_HW_NET;

    double lat = c->base_lat_us[a][p];
    double intra = hw_lat(m, intra_hw, a, p);
    /* 2.28: with one rank per node nothing hides the network, so the tree's figure is used. */
    double inter = v228 && ppn_int == 1 ? hw_lat(m, CS_NCCL_HW_NET, CS_NCCL_ALGO_TREE, p)
                                        : hw_lat(m, CS_NCCL_HW_NET, a, p);
    /* RCCL 2.21.5: the graph's network latency, when it has one, replaces the table's. */
    if (m->c->formula == CS_NCCL_FORMULA_RCCL_2_21)
        inter = g->latency_inter_us > 0.0 ? g->latency_inter_us : inter;
    else
        inter += g->latency_inter_us;
    /* The flush after a Simple receive costs the network latency once more. */
    if (p == CS_PROTO_SIMPLE)
        inter += g->latency_inter_us;

    switch (a) {
    case CS_NCCL_ALGO_RING:
        if (f == CS_NCCL_FUNC_REDUCE || f == CS_NCCL_FUNC_BROADCAST) {
            double hop = hw_lat(m, hw, a, p);
            if (g->same_channels) {
                lat += hop;
            }
            else {
                if (p == CS_PROTO_SIMPLE)
                    hop = hw_lat(m, hw, CS_NCCL_ALGO_TREE, p);
                lat += nsteps * hop;
            }
        }
        else {
            /* Inter-node rings still launch nsteps network operations (getNetOverhead:
             * 1 us on Intel, 2 us on AMD hosts, three times that for Simple). */
            double overhead = 0.0;
            if (n_nodes > 1) {
                overhead = s->cpu_amd ? 2.0 : 1.0;
                if (p == CS_PROTO_SIMPLE)
                    overhead *= 3.0;
            }
            intra = MAX(intra, overhead);
            int n_inter;
            if (v228)
                n_inter = n_nodes == 1
                              ? 0
                              : (f == CS_NCCL_FUNC_ALL_REDUCE ? 2 * (n_nodes - 1) : n_nodes - 1);
            else
                n_inter
                    = f == CS_NCCL_FUNC_ALL_REDUCE ? (n_nodes > 1 ? 2 * n_nodes : 0) : n_nodes - 1;
            lat += (nsteps - n_inter) * intra + n_inter * inter;
        }
        break;
    case CS_NCCL_ALGO_TREE:
        if (!v228 || f == CS_NCCL_FUNC_ALL_REDUCE)
            lat += 2.0 * ((ppn_int - 1) * intra + log2i(n_nodes) * inter);
        break;
    case CS_NCCL_ALGO_COLLNET_DIRECT:
        /* 0.4 us of arity serialization per local rank (tuning.cc). */
        lat += 2.0 * (MIN(1, ppn_int - 1) * intra + (ppn_int - 1) * 0.4) + inter;
        break;
    case CS_NCCL_ALGO_COLLNET_CHAIN:
        lat += 2.0 * (ppn_int - 1) * intra + inter;
        break;
    case CS_NCCL_ALGO_NVLS:
        lat = intra;
        if (n_nodes > 1)
            lat += inter;
        break;
    case CS_NCCL_ALGO_NVLS_TREE:
        lat += intra + 2.0 * log2i(n_nodes) * inter;
        break;
    case CS_NCCL_ALGO_PAT:
        /* 2.28: log latency (the network hop / 3.5) plus 2.8 us per rank. */
        if (is_ag_rs(f))
            lat += log2i(n_nodes) * (inter / 3.5) + n_ranks * 2.8;
        break;
    default:
        g_assert_not_reached();
    }
    return lat;
}

/* NCCL's enable rules after the tables: LL128 where the graph allows it, NVLS Tree only
 * across nodes, CollNet only with SHARP (and Direct only with NVSwitches), NVLS across nodes
 * only with CollNet. */
static gboolean
enabled(const CsNcclModel *m, int a, int p)
{
    const CsNcclSystem *s = &m->sys;
    /* RCCL enables LL128 only with the machine model's ll128Enabled option (2.21.5: gfx90a;
     * 2.26: gfx90a, gfx942, gfx950; and an ENABLE_LL128 build); the models collsim matches set
     * no such option. */
    if (p == CS_PROTO_LL128 && is_rccl(m))
        return FALSE;
    if (p == CS_PROTO_LL128) {
        if (!s->graphs[a].ll128)
            return FALSE;
        /* 2.19 enables LL128 only on compute capability 7.0, 8.0 and 9.0. */
        if (m->c->formula == CS_NCCL_FORMULA_2_19 && s->arch == CS_NCCL_ARCH_BLACKWELL)
            return FALSE;
    }
    if (a == CS_NCCL_ALGO_NVLS_TREE && s->n_nodes == 1)
        return FALSE;
    if (!s->collnet) {
        if (a == CS_NCCL_ALGO_COLLNET_DIRECT || a == CS_NCCL_ALGO_COLLNET_CHAIN)
            return FALSE;
        if (a == CS_NCCL_ALGO_NVLS && s->n_nodes > 1)
            return FALSE;
    }
    else if (a == CS_NCCL_ALGO_COLLNET_DIRECT && !s->nvswitch) {
        return FALSE;
    }
    return TRUE;
}

/* ncclTopoTuneModel: the latency and algorithm-bandwidth tables. */
static void
tune(CsNcclModel *m)
{
    const int n = m->sys.n_ranks;
    if (n <= 1)
        return;
    for (int f = 0; f < CS_NCCL_N_FUNCS; f++) {
        const int nsteps = f == CS_NCCL_FUNC_ALL_REDUCE ? 2 * (n - 1) : is_ag_rs(f) ? n - 1 : n;
        for (int a = 0; a < CS_NCCL_N_ALGOS; a++) {
            for (int p = 0; p < CS_N_PROTOS; p++) {
                if (!modelled(m, f, a, p))
                    continue;
                double bus = bus_bandwidth(m, f, a, p);
                bus *= algo_ratio(m, f, a, nsteps);
                m->bandwidth_GBps[f][a][p] = enabled(m, a, p) ? bus : 0.0;
                m->latency_us[f][a][p] = latency(m, f, a, p, nsteps);
            }
        }
    }
}

/**
 * cs_nccl_model_new:
 * NCCL's tuning tables for @system under @constants.
 * Returns: (transfer full).
 */
CsNcclModel *
cs_nccl_model_new(const CsNcclConstants *constants, const CsNcclSystem *system)
{
    g_return_val_if_fail(constants != NULL && system != NULL, NULL);
    g_return_val_if_fail(system->n_ranks >= 1 && system->n_nodes >= 1, NULL);
    CsNcclModel *m = g_new0(CsNcclModel, 1);
    m->c = constants;
    m->sys = *system;
    const int ring = system->graphs[CS_NCCL_ALGO_RING].n_channels;
    const int tree = system->graphs[CS_NCCL_ALGO_TREE].n_channels;
    m->comm_channels = MAX(1, tree > 0 ? MIN(ring, tree) : ring);
    tune(m);
    return m;
}

/**
 * cs_nccl_model_new_for_topo:
 * The NCCL model of @spec ("nccl", "nccl:2.19") for the first @nranks ranks of @topo.
 * Returns: (transfer full) (nullable).
 */
CsNcclModel *
cs_nccl_model_new_for_topo(const CsTopo *topo, int nranks, const char *spec, GError **error)
{
    const CsNcclConstants *c = NULL;
    CsNcclSystem sys;

    if (!cs_nccl_parse_spec(spec != NULL ? spec : "nccl", &c, error))
        return NULL;
    if (!cs_nccl_system_from_topo(topo, nranks, c, &sys, error))
        return NULL;
    return cs_nccl_model_new(c, &sys);
}

/**
 * cs_nccl_default_spec:
 * The library model that picks by default on the first @nranks ranks of @topo: "nccl" where
 * NCCL's model knows the GPUs' generation, "rccl" where RCCL's knows their AMD architecture
 * (RCCL runs its own tuning model, docs/rccl-model.md), NULL otherwise (collsim's fastest
 * picks then). A GPU neither names is answered without building the library's picture of
 * the machine, which looks at every pair of GPUs in a node.
 */
const char *
cs_nccl_default_spec(const CsTopo *topo, int nranks)
{
    g_return_val_if_fail(topo != NULL, NULL);
    const char *model = cs_topo_device(topo, cs_topo_rank_device(topo, 0))->model;
    gboolean recognised = FALSE;
    (void)cs_nccl_arch_from_model(model, &recognised);
    const gboolean amd = cs_nccl_amd_arch_from_model(model) != CS_NCCL_AMD_NONE;
    if (!recognised && !amd)
        return NULL;
    CsNcclSystem system;
    const CsNcclConstants *c
        = amd ? cs_rccl_constants_nearest(NULL) : cs_nccl_constants_nearest(NULL);
    if (!cs_nccl_system_from_topo(topo, nranks, c, &system, NULL) || system.arch_guessed)
        return NULL;
    return amd ? "rccl" : "nccl";
}

void
cs_nccl_model_free(CsNcclModel *model)
{
    g_free(model);
}

const CsNcclConstants *
cs_nccl_model_constants(const CsNcclModel *model)
{
    g_return_val_if_fail(model != NULL, NULL);
    return model->c;
}

const CsNcclSystem *
cs_nccl_model_system(const CsNcclModel *model)
{
    g_return_val_if_fail(model != NULL, NULL);
    return &model->sys;
}

double
cs_nccl_model_latency_us(const CsNcclModel *model, CsNcclFunc func, CsNcclAlgo algo, CsProto proto)
{
    g_return_val_if_fail(model != NULL && func < CS_NCCL_N_FUNCS, 0.0);
    g_return_val_if_fail(algo < CS_NCCL_N_ALGOS && proto < CS_N_PROTOS, 0.0);
    return model->latency_us[func][algo][proto];
}

double
cs_nccl_model_bandwidth_GBps(const CsNcclModel *model, CsNcclFunc func, CsNcclAlgo algo,
                             CsProto proto)
{
    g_return_val_if_fail(model != NULL && func < CS_NCCL_N_FUNCS, 0.0);
    g_return_val_if_fail(algo < CS_NCCL_N_ALGOS && proto < CS_N_PROTOS, 0.0);
    return model->bandwidth_GBps[func][algo][proto];
}

/* ncclTopoGetAlgoTime for one operation; fills @lat_out / @bw_out when non-NULL. */
static double
algo_time(const CsNcclModel *m, int f, int a, int p, gint64 nbytes, double *lat_out, double *bw_out)
{
    const CsNcclConstants *c = m->c;
    double bw = m->bandwidth_GBps[f][a][p];
    double lat = m->latency_us[f][a][p];

    if (bw <= 0.0)
        return -1.0;
    if (is_rccl(m)) {
        /* RCCL ncclTopoGetAlgoTime (2.21.5, 2.26): the tuning model's tree correction for
         * Tree, its ring correction for Ring across nodes, by log2i(nBytes >> 6) (0 below
         * 128 B), the last entry from 4 GiB on; no ring plateau. */
        const int idx = MIN(log2i(nbytes >> 6), CS_RCCL_N_CORRECTION - 1);
        if (a == CS_NCCL_ALGO_TREE)
            bw *= rccl_model(m)->tree_correction[p][idx];
        else if (a == CS_NCCL_ALGO_RING && m->sys.n_nodes > 1)
            bw *= rccl_model(m)->ring_correction[p][idx];
        if (bw <= 0.0)
            return -1.0;
        if (lat_out != NULL)
            *lat_out = lat;
        if (bw_out != NULL)
            *bw_out = bw;
        return lat + (double)nbytes / (1000.0 * bw);
    }
    /* 2.28's log2i is -1 below 64 B (no correction); 2.19's is 0 there. */
    const gint64 units = nbytes >> 6;
    const int log_size = units <= 0 ? (c->formula == CS_NCCL_FORMULA_2_28 ? -1 : 0) : log2i(units);
    if (a == CS_NCCL_ALGO_TREE && f == CS_NCCL_FUNC_ALL_REDUCE && log_size >= 0 && log_size < 23)
        bw *= c->tree_correction[p][log_size];
    if (c->formula == CS_NCCL_FORMULA_2_28 && a == CS_NCCL_ALGO_NVLS_TREE
        && f == CS_NCCL_FUNC_ALL_REDUCE && log_size >= 0 && log_size < c->n_tree_correction
        && m->sys.arch >= CS_NCCL_ARCH_BLACKWELL)
        bw *= c->tree_correction[p][log_size];
    /* Plateau effect of ring (tuning.cc): multi-node Simple all-reduce latency x1.9 before
     * Ampere, x1.4 from Ampere on, once a channel's share per rank reaches 64 B. */
    if (a == CS_NCCL_ALGO_RING && p == CS_PROTO_SIMPLE && m->sys.n_nodes > 1
        && f == CS_NCCL_FUNC_ALL_REDUCE
        && nbytes / ((gint64)m->comm_channels * m->sys.n_ranks) >= 64)
        lat *= m->sys.arch < CS_NCCL_ARCH_AMPERE ? 1.9 : 1.4;
    if (lat_out != NULL)
        *lat_out = lat;
    if (bw_out != NULL)
        *bw_out = bw;
    return lat + (double)nbytes / (1000.0 * bw);
}

/**
 * cs_nccl_model_time_us:
 * NCCL's predicted time in us, or -1 when the entry is unusable or @op has no NCCL model.
 */
double
cs_nccl_model_time_us(const CsNcclModel *model, CsOp op, CsNcclAlgo algo, CsProto proto,
                      gint64 nbytes)
{
    g_return_val_if_fail(model != NULL, -1.0);
    g_return_val_if_fail(algo < CS_NCCL_N_ALGOS && proto < CS_N_PROTOS, -1.0);
    const int f = cs_nccl_func_from_op(op);
    if (f < 0)
        return -1.0;
    return algo_time(model, f, algo, proto, nbytes, NULL, NULL);
}

gboolean
cs_nccl_model_cost_table(const CsNcclModel *model, CsOp op, gint64 nbytes,
                         float table[CS_NCCL_N_ALGOS][CS_N_PROTOS])
{
    g_return_val_if_fail(model != NULL && table != NULL, FALSE);
    const int f = cs_nccl_func_from_op(op);
    for (int a = 0; a < CS_NCCL_N_ALGOS; a++)
        for (int p = 0; p < CS_N_PROTOS; p++)
            table[a][p] = f < 0 ? -1.0f : (float)algo_time(model, f, a, p, nbytes, NULL, NULL);
    return f >= 0;
}

/* RCCL 2.26 src/rccl_wrap.cc rcclUpdateCollectiveProtocol(), run on the model's pick: across
 * nodes, for reduce-scatter, all-gather and all-reduce whose tuning model defines LL ranges
 * (llProtoRanges), the protocol becomes Simple unless the size per rank (nBytes / nRanks for
 * reduce-scatter and all-gather, nBytes for all-reduce: rcclGetSizePerRank) lies in
 * (llMin, llMax], where it becomes LL; the LL128 range needs the machine model's ll128Enabled,
 * which the models collsim matches do not set. The algorithm stays. RCCL skips this when
 * NCCL_PROTO is set at all; here, when @proto_mask leaves out LL or Simple. */
static void
rccl_protocol_override(const CsNcclModel *m, int f, gint64 nbytes, guint proto_mask,
                       CsNcclPrediction *out)
{
    if (m->c->formula != CS_NCCL_FORMULA_RCCL_2_26 || m->sys.n_nodes < 2)
        return;
    if ((proto_mask & (1u << CS_PROTO_LL)) == 0 || (proto_mask & (1u << CS_PROTO_SIMPLE)) == 0)
        return;
    /* RcclTunableColls order: reduce-scatter, all-gather, all-reduce. */
    const int t = f == CS_NCCL_FUNC_REDUCE_SCATTER ? 0
                  : f == CS_NCCL_FUNC_ALL_GATHER   ? 1
                  : f == CS_NCCL_FUNC_ALL_REDUCE   ? 2
                                                   : -1;
    if (t < 0)
        return;
    const gint64(*r)[2] = rccl_model(m)->ll_ranges[t];
    if (r[0][1] == 0 && r[1][1] == 0)
        return; /* RCCL_LL_LIMITS_UNDEFINED: the model's choice stands */
    const gint64 per_rank = t == 2 ? nbytes : nbytes / m->sys.n_ranks;
    const CsProto p = per_rank > r[0][0] && per_rank <= r[0][1] ? CS_PROTO_LL : CS_PROTO_SIMPLE;
    if (p == out->proto)
        return;
    double lat = 0.0;
    double bw = 0.0;
    const double time = algo_time(m, f, out->algo, p, nbytes, &lat, &bw);
    out->proto = p;
    if (time >= 0.0) {
        out->time_us = time;
        out->latency_us = lat;
        out->bandwidth_GBps = bw;
    }
}

/* The first minimum over the entries of @algo_mask x @proto_mask (bits of CsNcclAlgo and
 * CsProto), in NCCL's loop order. */
static gboolean
pick(const CsNcclModel *m, int f, gint64 nbytes, guint algo_mask, guint proto_mask,
     CsNcclPrediction *out)
{
    double best = G_MAXDOUBLE;
    gboolean found = FALSE;

    for (int a = 0; a < CS_NCCL_N_ALGOS; a++) {
        if ((algo_mask & (1u << a)) == 0)
            continue;
        for (int p = 0; p < CS_N_PROTOS; p++) {
            if ((proto_mask & (1u << p)) == 0)
                continue;
            double lat = 0.0;
            double bw = 0.0;
            const double t = algo_time(m, f, a, p, nbytes, &lat, &bw);
            if (t < 0.0 || t >= best)
                continue;
            best = t;
            found = TRUE;
            out->algo = (CsNcclAlgo)a;
            out->proto = (CsProto)p;
            out->n_channels = m->sys.graphs[a].n_channels;
            out->time_us = t;
            out->latency_us = lat;
            out->bandwidth_GBps = bw;
        }
    }
    if (found)
        rccl_protocol_override(m, f, nbytes, proto_mask, out);
    return found;
}

gboolean
cs_nccl_model_pick(const CsNcclModel *model, CsOp op, gint64 nbytes, CsNcclPrediction *out)
{
    g_return_val_if_fail(model != NULL && out != NULL, FALSE);
    const int f = cs_nccl_func_from_op(op);
    return f >= 0 && pick(model, f, nbytes, CS_NCCL_ALL_ALGOS, CS_NCCL_ALL_PROTOS, out);
}

/**
 * cs_nccl_model_pick_among:
 * NCCL's pick among the algorithms of @algo_mask and the protocols of @proto_mask (bits
 * 1 << CsNcclAlgo, 1 << CsProto): what NCCL_ALGO / NCCL_PROTO lists, exclusions included,
 * leave it. FALSE when nothing allowed is usable or @op has no model.
 */
gboolean
cs_nccl_model_pick_among(const CsNcclModel *model, CsOp op, gint64 nbytes, guint algo_mask,
                         guint proto_mask, CsNcclPrediction *out)
{
    g_return_val_if_fail(model != NULL && out != NULL, FALSE);
    const int f = cs_nccl_func_from_op(op);
    return f >= 0 && pick(model, f, nbytes, algo_mask, proto_mask, out);
}

/**
 * cs_nccl_model_predict:
 * For `collsim run --model nccl`: NCCL's own pick for @op at @nbytes, or the best entry with
 * the forced @algo / @proto (-1 = free), as NCCL_ALGO / NCCL_PROTO would force them.
 */
gboolean
cs_nccl_model_predict(const CsNcclModel *model, CsOp op, gint64 nbytes, int algo, int proto,
                      CsNcclPrediction *out, GError **error)
{
    g_return_val_if_fail(model != NULL && out != NULL, FALSE);
    g_return_val_if_fail(algo < CS_NCCL_N_ALGOS && proto < CS_N_PROTOS, FALSE);
    const int f = cs_nccl_func_from_op(op);
    if (f < 0) {
        g_set_error(error, CS_NCCL_ERROR, CS_NCCL_ERROR_UNSUPPORTED,
                    "NCCL's cost model has no %s (NCCL runs it as point-to-point sends)",
                    cs_op_name(op));
        return FALSE;
    }
    if (pick(model, f, nbytes, algo >= 0 ? 1u << algo : CS_NCCL_ALL_ALGOS,
             proto >= 0 ? 1u << proto : CS_NCCL_ALL_PROTOS, out))
        return TRUE;
    g_set_error(
        error, CS_NCCL_ERROR, CS_NCCL_ERROR_UNSUPPORTED,
        "NCCL %s's model has no usable %s%s%s for %s on %d ranks, %d node%s", model->c->version,
        algo >= 0 ? cs_nccl_algo_env_name((CsNcclAlgo)algo) : "algorithm", proto >= 0 ? "/" : "",
        proto >= 0 ? cs_nccl_proto_env_names[proto] : "", cs_op_name(op), model->sys.n_ranks,
        model->sys.n_nodes, model->sys.n_nodes == 1 ? "" : "s");
    return FALSE;
}
