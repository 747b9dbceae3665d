// SPDX-License-Identifier: MIT
/* NCCL's own analytical cost model, re-implemented from its formulas with one constant set per
 * release: what NCCL predicts for each algorithm x protocol and which one it picks.
 *
 * Sources (read, not copied; every constant below names where it comes from):
 *   NVIDIA/nccl src/graph/tuning.cc  ncclTopoTuneModel() (latencies, bus bandwidths, the
 *     bus -> algorithm bandwidth ratio) and ncclTopoGetAlgoTime() (tree correction, ring
 *     plateau, time = lat + nBytes / (1000 * bw)), releases 2.19 and 2.28;
 *   NVIDIA/nccl src/graph/search.cc  the per-generation speed arrays and channel duplication
 *     (ncclTopoCompute, ncclTopoDupChannels), emulated by cs_nccl_system_from_topo();
 *   NVIDIA/nccl src/graph/topo.h     the NVLink bandwidth NCCL assumes per link and generation.
 * Time is in microseconds and bandwidth in GB/s (1e9 B/s) as in NCCL, so
 * time_us = lat_us + nBytes / (1000 * bw_GBps). */
#include "models/nccl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* clang-format off */
G_DEFINE_QUARK(cs_nccl_error_quark, cs_nccl_error)
/* clang-format on */

/* ---- Constant sets ---- */

/* NCCL 2.19 (src/graph/tuning.cc of the 2.19 releases; Volta/Ampere/Hopper rows only, a
 * Blackwell GPU falls in the Hopper row since 2.19 indexes by minCompCap >= 90). */
static const CsNcclConstants nccl_2_19 = {
    .version = "2.19",
    .reference = "NVIDIA/nccl 2.19 src/graph/tuning.cc (baseLat, hwLat, llMaxBws, perChMax*, "
                 "treeCorrectionFactor), src/graph/search.cc (speed arrays, MAXCHANNELS 32)",
    .formula = CS_NCCL_FORMULA_2_19,
    /* 2.19 tuning.cc baseLat: Tree {6.8, 14.0, 0}, Ring {6.6, 14.0, 8.4}; CollNet, NVLS and
     * NVLS Tree 0 (their latency is all hardware). */
    .base_lat_us = {
        [CS_NCCL_ALGO_TREE] = { 6.8, 14.0, 0.0 },
        [CS_NCCL_ALGO_RING] = { 6.6, 14.0, 8.4 },
    },
    .hw_lat_us = {
        [CS_NCCL_HW_NVLINK] = {
            /* 2.19 tuning.cc hwLat NVLINK: Tree {.6, 1.25, 28}: Tree/Simple 28 us per hop */
            [CS_NCCL_ALGO_TREE] = { 0.6, 1.25, 28.0 },
            /* 2.19 tuning.cc hwLat NVLINK: Ring {.6, 1.9, 3.4} */
            [CS_NCCL_ALGO_RING] = { 0.6, 1.9, 3.4 },
            /* 2.19 tuning.cc hwLat NVLINK: CollNetDirect Simple 3.7, CollNetChain Simple 2.8 */
            [CS_NCCL_ALGO_COLLNET_DIRECT] = { 0.0, 0.0, 3.7 },
            [CS_NCCL_ALGO_COLLNET_CHAIN] = { 0.0, 0.0, 2.8 },
            /* 2.19 tuning.cc hwLat NVLINK: NVLS and NVLSTree Simple 23 */
            [CS_NCCL_ALGO_NVLS] = { 0.0, 0.0, 23.0 },
            [CS_NCCL_ALGO_NVLS_TREE] = { 0.0, 0.0, 23.0 },
        },
        [CS_NCCL_HW_PCI] = {
            /* 2.19 tuning.cc hwLat PCI: Tree {1.0, 1.9, 28}, Ring {1.0, 2.5, 5.7} */
            [CS_NCCL_ALGO_TREE] = { 1.0, 1.9, 28.0 },
            [CS_NCCL_ALGO_RING] = { 1.0, 2.5, 5.7 },
            /* 2.19 tuning.cc hwLat PCI: CollNetDirect 3.7, CollNetChain 2.8, NVLS 0 */
            [CS_NCCL_ALGO_COLLNET_DIRECT] = { 0.0, 0.0, 3.7 },
            [CS_NCCL_ALGO_COLLNET_CHAIN] = { 0.0, 0.0, 2.8 },
        },
        [CS_NCCL_HW_NET] = {
            /* 2.19 tuning.cc hwLat NET: Tree {5.0, 8.5, 28}, Ring {2.7, 4.0, 14.0} */
            [CS_NCCL_ALGO_TREE] = { 5.0, 8.5, 28.0 },
            [CS_NCCL_ALGO_RING] = { 2.7, 4.0, 14.0 },
            /* 2.19 tuning.cc hwLat NET: CollNetDirect 31, CollNetChain 30, NVLS 18, NVLSTree 14 */
            [CS_NCCL_ALGO_COLLNET_DIRECT] = { 0.0, 0.0, 31.0 },
            [CS_NCCL_ALGO_COLLNET_CHAIN] = { 0.0, 0.0, 30.0 },
            [CS_NCCL_ALGO_NVLS] = { 0.0, 0.0, 18.0 },
            [CS_NCCL_ALGO_NVLS_TREE] = { 0.0, 0.0, 14.0 },
        },
    },
    /* 2.19 tuning.cc llMaxBws: Volta-N1/Intel-N2/Intel-N4 {39.0, 39.0, 20.4},
     * Ampere-N1/AMD-N2/AMD-N4 {87.7, 22.5, 19.0}, Hopper-N1/AMD-N2/AMD-N4 {87.7, 22.5, 19.0} */
    .ll_max_bw = {
        { 39.0, 39.0, 20.4 },
        { 87.7, 22.5, 19.0 },
        { 87.7, 22.5, 19.0 },
    },
    /* 2.19 tuning.cc perChMaxRingLL128Bws: Volta, Ampere {20, 20, 20}; Hopper {36.7 x 3} */
    .per_ch_max_ring_ll128_bw = {
        { 20.0, 20.0, 20.0 },
        { 20.0, 20.0, 20.0 },
        { 36.7, 36.7, 36.7 },
    },
    /* 2.19 tuning.cc perChMaxTreeLL128Bws: Volta, Ampere {20, 20, 20}; Hopper {36.7, 36.7, 29.0} */
    .per_ch_max_tree_ll128_bw = {
        { 20.0, 20.0, 20.0 },
        { 20.0, 20.0, 20.0 },
        { 36.7, 36.7, 29.0 },
    },
    /* 2.19 tuning.cc perChMaxTreeBws: Volta {26.5, 18.5, 10.0}, Ampere {24.0, 23.6, 17.8},
     * Hopper {38.7, 41.4, 36.0} */
    .per_ch_max_tree_bw = {
        { 26.5, 18.5, 10.0 },
        { 24.0, 23.6, 17.8 },
        { 38.7, 41.4, 36.0 },
    },
    /* 2.19 has no NVLS Tree cap and no NVLS efficiency factor (it uses a 5/6 ratio instead). */
    .per_ch_max_nvls_tree_bw = { { 0 } },
    .nvls_efficiency = { 0 },
    /* 2.19 tuning.cc treeCorrectionFactor[3][23]: powers of two from 64 B to 256 MB */
    .n_tree_correction = 23,
    .tree_correction = {
        { 1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0,
          1.0, 1.0, 1.0 },
        { 1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9,
          .9, 1.0, 1.0 },
        { .9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9,
          .9 },
    },
    .n_archs = 3,
    /* 2.19 device.h MAXCHANNELS 32; search.cc ring/tree graphs search MAXCHANNELS/2 */
    .max_ring_channels = 16,
    /* 2.19 nvls.cc: NCCL_NVLS_NCHANNELS default 16 on every GPU */
    .nvls_channels = { 16, 16, 16 },
};

/* NCCL 2.28 (src/graph/tuning.cc ncclTunerConstantsDefaults, the table a v5 tuner plugin
 * receives at init; the CUDA toolkit of the development machines ships 2.28.9). */
static const CsNcclConstants nccl_2_28 = {
    .version = "2.28",
    .reference = "NVIDIA/nccl 2.28 src/graph/tuning.cc (ncclTunerConstantsDefaults, "
                 "nvlsEfficiency, treeCorrectionFactor), src/graph/search.cc (speed arrays, "
                 "MAXCHANNELS 64)",
    .formula = CS_NCCL_FORMULA_2_28,
    /* 2.28 tuning.cc baseLatencies: Tree {6.8, 14.0, 8.4}, Ring {6.6, 14.0, 8.4}, CollNet and
     * NVLS 0, PAT {8.0, 8.0, 8.0} */
    .base_lat_us = {
        [CS_NCCL_ALGO_TREE] = { 6.8, 14.0, 8.4 },
        [CS_NCCL_ALGO_RING] = { 6.6, 14.0, 8.4 },
        [CS_NCCL_ALGO_PAT] = { 8.0, 8.0, 8.0 },
    },
    .hw_lat_us = {
        [CS_NCCL_HW_NVLINK] = {
            /* 2.28 tuning.cc hwLatencies NVLINK: Tree {.6, 1.25, 4.0} */
            [CS_NCCL_ALGO_TREE] = { 0.6, 1.25, 4.0 },
            /* 2.28 tuning.cc hwLatencies NVLINK: Ring {.6, 1.9, 3.4} */
            [CS_NCCL_ALGO_RING] = { 0.6, 1.9, 3.4 },
            /* 2.28 tuning.cc hwLatencies NVLINK: CollNetDirect 3.7, CollNetChain 2.8 */
            [CS_NCCL_ALGO_COLLNET_DIRECT] = { 0.0, 0.0, 3.7 },
            [CS_NCCL_ALGO_COLLNET_CHAIN] = { 0.0, 0.0, 2.8 },
            /* 2.28 tuning.cc hwLatencies NVLINK: NVLS and NVLSTree Simple 25 */
            [CS_NCCL_ALGO_NVLS] = { 0.0, 0.0, 25.0 },
            [CS_NCCL_ALGO_NVLS_TREE] = { 0.0, 0.0, 25.0 },
            /* 2.28 tuning.cc hwLatencies NVLINK: PAT Simple 4.0 */
            [CS_NCCL_ALGO_PAT] = { 0.0, 0.0, 4.0 },
        },
        [CS_NCCL_HW_PCI] = {
            /* 2.28 tuning.cc hwLatencies PCI: Tree {1.0, 1.9, 4.0}, Ring {1.0, 2.5, 5.7} */
            [CS_NCCL_ALGO_TREE] = { 1.0, 1.9, 4.0 },
            [CS_NCCL_ALGO_RING] = { 1.0, 2.5, 5.7 },
            /* 2.28 tuning.cc hwLatencies PCI: CollNetDirect 3.7, CollNetChain 2.8, NVLS 0,
             * PAT 4.0 */
            [CS_NCCL_ALGO_COLLNET_DIRECT] = { 0.0, 0.0, 3.7 },
            [CS_NCCL_ALGO_COLLNET_CHAIN] = { 0.0, 0.0, 2.8 },
            [CS_NCCL_ALGO_PAT] = { 0.0, 0.0, 4.0 },
        },
        [CS_NCCL_HW_NET] = {
            /* 2.28 tuning.cc hwLatencies NET: Tree {5.0, 8.5, 14}, Ring {2.7, 4.0, 14.0} */
            [CS_NCCL_ALGO_TREE] = { 5.0, 8.5, 14.0 },
            [CS_NCCL_ALGO_RING] = { 2.7, 4.0, 14.0 },
            /* 2.28 tuning.cc hwLatencies NET: CollNetDirect 31, CollNetChain 30, NVLS 18,
             * NVLSTree 20.9, PAT 14 */
            [CS_NCCL_ALGO_COLLNET_DIRECT] = { 0.0, 0.0, 31.0 },
            [CS_NCCL_ALGO_COLLNET_CHAIN] = { 0.0, 0.0, 30.0 },
            [CS_NCCL_ALGO_NVLS] = { 0.0, 0.0, 18.0 },
            [CS_NCCL_ALGO_NVLS_TREE] = { 0.0, 0.0, 20.9 },
            [CS_NCCL_ALGO_PAT] = { 0.0, 0.0, 14.0 },
        },
    },
    /* 2.28 tuning.cc llMaxBws: Volta {39.0, 39.0, 20.4}, Ampere {87.7, 22.5, 19.0},
     * Hopper {141.0, 45.0, 35.0}, Blackwell {2*141.0, 2*45.0, 2*35.0} */
    .ll_max_bw = {
        { 39.0, 39.0, 20.4 },
        { 87.7, 22.5, 19.0 },
        { 141.0, 45.0, 35.0 },
        { 282.0, 90.0, 70.0 },
    },
    /* 2.28 tuning.cc perChMaxRingLL128Bws: Volta, Ampere {20 x 3}, Hopper {36.7 x 3},
     * Blackwell {40 x 3} */
    .per_ch_max_ring_ll128_bw = {
        { 20.0, 20.0, 20.0 },
        { 20.0, 20.0, 20.0 },
        { 36.7, 36.7, 36.7 },
        { 40.0, 40.0, 40.0 },
    },
    /* 2.28 tuning.cc perChMaxTreeLL128Bws: Volta, Ampere {20 x 3}, Hopper {36.7, 36.7, 29.0},
     * Blackwell {55.6, 31.67, 20.0} */
    .per_ch_max_tree_ll128_bw = {
        { 20.0, 20.0, 20.0 },
        { 20.0, 20.0, 20.0 },
        { 36.7, 36.7, 29.0 },
        { 55.6, 31.67, 20.0 },
    },
    /* 2.28 tuning.cc perChMaxTreeBws: Volta {26.5, 18.5, 10.0}, Ampere {24.0, 23.6, 17.8},
     * Hopper {38.7, 41.4, 36.0}, Blackwell {70.0, 42.8, 24.0} */
    .per_ch_max_tree_bw = {
        { 26.5, 18.5, 10.0 },
        { 24.0, 23.6, 17.8 },
        { 38.7, 41.4, 36.0 },
        { 70.0, 42.8, 24.0 },
    },
    /* 2.28 tuning.cc perChMaxNVLSTreeBws: Volta {26.5, 18.5, 10.0}, Ampere {24.0, 23.6, 17.8},
     * Hopper {0.0, 57.7, 45.5}, Blackwell {0.0, 96.0, 80.0} */
    .per_ch_max_nvls_tree_bw = {
        { 26.5, 18.5, 10.0 },
        { 24.0, 23.6, 17.8 },
        { 0.0, 57.7, 45.5 },
        { 0.0, 96.0, 80.0 },
    },
    /* 2.28 tuning.cc nvlsEfficiency: Volta 0, Ampere 0, Hopper 0.85, Blackwell 0.74 */
    .nvls_efficiency = { 0.0, 0.0, 0.85, 0.74 },
    /* 2.28 tuning.cc treeCorrectionFactor[3][24] (tree uses the first 23, NVLS Tree 24) */
    .n_tree_correction = 24,
    .tree_correction = {
        { 1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0,
          1.0, 1.0, 1.0, 1.0 },
        { 1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9,
          .9, 1.0, 1.0, 1.0 },
        { .9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9,
          .9, .9 },
    },
    .n_archs = 4,
    /* 2.28 device.h MAXCHANNELS 64; ring/tree graphs search MAXCHANNELS/2 */
    .max_ring_channels = 32,
    /* 2.28 nvls.cc ncclNvlsInit: NVLS_NCHANNELS_SM90 16, NVLS_NCHANNELS_SM100_NVL 24 (the
     * ranks in one NVLink clique), NVLS_NCHANNELS_SM100 32 (across nodes) */
    .nvls_channels = { 16, 24, 32 },
};

static const CsNcclConstants *const constant_sets[] = { &nccl_2_19, &nccl_2_28, NULL };

const CsNcclConstants *const *
cs_nccl_constants_all(void)
{
    return constant_sets;
}

/**
 * cs_nccl_constants_lookup:
 * The constant set of an NCCL release: "2.28" or a patch release "2.28.9" (constants only
 * change between minor releases here). NULL means the newest.
 * Returns: (transfer none) (nullable).
 */
const CsNcclConstants *
cs_nccl_constants_lookup(const char *version, GError **error)
{
    const gsize n = G_N_ELEMENTS(constant_sets) - 1;

    if (version == NULL || *version == '\0')
        return constant_sets[n - 1];
    for (gsize i = 0; i < n; i++) {
        const char *v = constant_sets[i]->version;
        const gsize len = strlen(v);
        if (strncmp(version, v, len) == 0 && (version[len] == '\0' || version[len] == '.'))
            return constant_sets[i];
    }
    g_autoptr(GString) known = g_string_new(NULL);
    for (gsize i = 0; i < n; i++)
        g_string_append_printf(known, "%s%s", i > 0 ? ", " : "", constant_sets[i]->version);
    g_set_error(error, CS_NCCL_ERROR, CS_NCCL_ERROR_VERSION,
                "no NCCL cost-model constants for version '%s' (known: %s)", version, known->str);
    return NULL;
}

/**
 * cs_nccl_constants_nearest:
 * The constant set closest to the release @version ("2.26.2": major.minor, patch ignored),
 * by minor release, the older on a tie: a trace of a release between two known sets is
 * predicted with the constants that changed least since. An unreadable or NULL @version gets
 * the newest set.
 * Returns: (transfer none).
 */
const CsNcclConstants *
cs_nccl_constants_nearest(const char *version)
{
    const gsize n = G_N_ELEMENTS(constant_sets) - 1;
    int major, minor;
    if (version == NULL || sscanf(version, "%d.%d", &major, &minor) != 2)
        return constant_sets[n - 1];
    const CsNcclConstants *best = constant_sets[n - 1];
    int best_distance = G_MAXINT;
    for (gsize i = 0; i < n; i++) {
        int ma, mi;
        if (sscanf(constant_sets[i]->version, "%d.%d", &ma, &mi) != 2)
            continue;
        const int distance = abs((major - ma) * 1000 + (minor - mi));
        if (distance < best_distance) {
            best = constant_sets[i];
            best_distance = distance;
        }
    }
    return best;
}

/**
 * cs_nccl_parse_spec:
 * "nccl" (newest constants) or "nccl:VERSION".
 */
gboolean
cs_nccl_parse_spec(const char *spec, const CsNcclConstants **constants, GError **error)
{
    g_return_val_if_fail(spec != NULL && constants != NULL, FALSE);
    if (g_ascii_strncasecmp(spec, "nccl", 4) != 0 || (spec[4] != '\0' && spec[4] != ':')) {
        g_set_error(error, CS_NCCL_ERROR, CS_NCCL_ERROR_SPEC,
                    "'%s' is not an NCCL model (expected 'nccl' or 'nccl:VERSION', e.g. "
                    "'nccl:2.28')",
                    spec);
        return FALSE;
    }
    const char *version = spec[4] == ':' ? spec + 5 : NULL;
    if (version != NULL && *version == '\0') {
        g_set_error(error, CS_NCCL_ERROR, CS_NCCL_ERROR_SPEC,
                    "'%s': a version must follow 'nccl:' (e.g. 'nccl:2.28')", spec);
        return FALSE;
    }
    *constants = cs_nccl_constants_lookup(version, error);
    return *constants != NULL;
}

/* ---- Names ---- */

static const char *const algo_names[CS_NCCL_N_ALGOS] = {
    "tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat",
};

/* NCCL's ncclAlgoStr, the spelling NCCL_ALGO accepts. */
static const char *const algo_env_names[CS_NCCL_N_ALGOS] = {
    "Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT",
};

static const char *const algo_collsim_names[CS_NCCL_N_ALGOS] = {
    "tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat",
};

static const char *const proto_names[CS_N_PROTOS] = { "ll", "ll128", "simple" };

/* NCCL's ncclProtoStr, the spelling NCCL_PROTO accepts. */
static const char *const proto_env_names[CS_N_PROTOS] = { "LL", "LL128", "Simple" };

static const char *const func_names[CS_NCCL_N_FUNCS] = {
    "broadcast", "reduce", "allgather", "reducescatter", "allreduce",
};

static const char *const arch_names[CS_NCCL_N_ARCHS] = {
    "Volta",
    "Ampere",
    "Hopper",
    "Blackwell",
};

const char *
cs_nccl_algo_name(CsNcclAlgo algo)
{
    g_return_val_if_fail(algo < CS_NCCL_N_ALGOS, NULL);
    return algo_names[algo];
}

const char *
cs_nccl_algo_env_name(CsNcclAlgo algo)
{
    g_return_val_if_fail(algo < CS_NCCL_N_ALGOS, NULL);
    return algo_env_names[algo];
}

const char *
cs_nccl_algo_collsim_name(CsNcclAlgo algo)
{
    g_return_val_if_fail(algo < CS_NCCL_N_ALGOS, NULL);
    return algo_collsim_names[algo];
}

/* Lower-case without '_' and '-': "NVLSTree", "nvls_tree" and "nvls-tree" agree. */
static gboolean
same_name(const char *a, const char *b)
{
    for (;;) {
        while (*a == '_' || *a == '-')
            a++;
        while (*b == '_' || *b == '-')
            b++;
        if (*a == '\0' || *b == '\0')
            return *a == *b;
        if (g_ascii_tolower(*a) != g_ascii_tolower(*b))
            return FALSE;
        a++;
        b++;
    }
}

gboolean
cs_nccl_algo_from_name(const char *name, CsNcclAlgo *algo)
{
    g_return_val_if_fail(name != NULL && algo != NULL, FALSE);
    for (int a = 0; a < CS_NCCL_N_ALGOS; a++) {
        if (same_name(name, algo_names[a])) {
            *algo = (CsNcclAlgo)a;
            return TRUE;
        }
    }
    return FALSE;
}

gboolean
cs_nccl_algo_from_collsim(const char *collsim_name, CsNcclAlgo *algo)
{
    g_return_val_if_fail(collsim_name != NULL && algo != NULL, FALSE);
    for (int a = 0; a < CS_NCCL_N_ALGOS; a++) {
        if (algo_collsim_names[a] != NULL && strcmp(collsim_name, algo_collsim_names[a]) == 0) {
            *algo = (CsNcclAlgo)a;
            return TRUE;
        }
    }
    /* Spellings an algorithm file may use for the same NCCL algorithm. */
    if (strcmp(collsim_name, "nvls-tree") == 0 || strcmp(collsim_name, "nvlstree") == 0) {
        *algo = CS_NCCL_ALGO_NVLS_TREE;
        return TRUE;
    }
    if (strcmp(collsim_name, "collnet-direct") == 0 || strcmp(collsim_name, "collnet") == 0) {
        *algo = CS_NCCL_ALGO_COLLNET_DIRECT;
        return TRUE;
    }
    if (strcmp(collsim_name, "collnet-chain") == 0) {
        *algo = CS_NCCL_ALGO_COLLNET_CHAIN;
        return TRUE;
    }
    return FALSE;
}

/* The collective a group of a per-collective list names ("allreduce:tree": the all-reduce,
 * @list then at "tree"); -1 when @group has no prefix (@list = @group), -2 when its prefix
 * is no collective NCCL names. */
static int
group_func(const char *group, const char **list)
{
    const char *colon = strchr(group, ':');
    *list = group;
    if (colon == NULL)
        return -1;
    g_autofree char *prefix = g_strndup(group, (gsize)(colon - group));
    *list = colon + 1;
    for (int f = 0; f < CS_NCCL_N_FUNCS; f++)
        if (g_ascii_strcasecmp(prefix, func_names[f]) == 0)
            return f;
    return -2;
}

/* @name's bit in an NCCL_PROTO (CsProto) or NCCL_ALGO (CsNcclAlgo) mask; -1: NCCL has none. */
static int
list_name_bit(const char *name, gboolean is_proto)
{
    CsNcclAlgo algo;
    CsProto proto;
    if (is_proto)
        return cs_proto_from_name(name, &proto, NULL) ? (int)proto : -1;
    return cs_nccl_algo_from_name(name, &algo) ? (int)algo : -1;
}

/**
 * cs_nccl_env_list:
 * @value: an NCCL_ALGO (@is_proto FALSE) or NCCL_PROTO value as NCCL reads it: a comma list,
 *   '^' for everything but the list, or per-collective lists ("allreduce:tree,ring;broadcast:
 *   ring", every group prefixed when there are several). Empty names are skipped, as NCCL
 *   skips them; a group must still name one.
 * Returns: (transfer full) the value with NCCL's own spellings (nvls_tree -> NVLSTree,
 *   AllReduce -> allreduce), or NULL with CS_NCCL_ERROR_UNSUPPORTED naming the first name
 *   NCCL does not know (NCCL compares without case and skips such a name silently).
 */
char *
cs_nccl_env_list(const char *value, gboolean is_proto, GError **error)
{
    const char *known = is_proto ? "LL, LL128, Simple"
                                 : "Ring, Tree, NVLS, NVLSTree, CollNetDirect, CollNetChain, PAT";
    const char *what = is_proto ? "protocol" : "algorithm";
    g_auto(GStrv) groups = g_strsplit(value, ";", -1);
    g_autoptr(GString) env = g_string_new(NULL);
    const guint n_groups = g_strv_length(groups);

    if (n_groups == 0) {
        g_set_error(error, CS_NCCL_ERROR, CS_NCCL_ERROR_UNSUPPORTED, "empty (%s)", known);
        return NULL;
    }
    for (guint g = 0; g < n_groups; g++) {
        const char *list;
        const int f = group_func(groups[g], &list);
        if (g > 0)
            g_string_append_c(env, ';');
        if (f == -1 && n_groups > 1) {
            g_set_error(error, CS_NCCL_ERROR, CS_NCCL_ERROR_UNSUPPORTED,
                        "\"%s\" in \"%s\" names no collective (each of several groups starts "
                        "with one, e.g. allreduce:)",
                        groups[g], value);
            return NULL;
        }
        if (f == -2) {
            g_autofree char *func = g_strndup(groups[g], (gsize)(list - 1 - groups[g]));
            g_set_error(error, CS_NCCL_ERROR, CS_NCCL_ERROR_UNSUPPORTED,
                        "\"%s\" in \"%s\" is not a collective NCCL names (broadcast, "
                        "reduce, allgather, reducescatter, allreduce)",
                        func, value);
            return NULL;
        }
        if (f >= 0)
            g_string_append_printf(env, "%s:", func_names[f]);
        if (list[0] == '^') {
            g_string_append_c(env, '^');
            list++;
        }
        g_auto(GStrv) names = g_strsplit(list, ",", -1);
        int n_named = 0;
        for (int i = 0; names[i] != NULL; i++) {
            if (names[i][0] == '\0')
                continue;
            const int bit = list_name_bit(names[i], is_proto);
            if (bit < 0) {
                g_set_error(error, CS_NCCL_ERROR, CS_NCCL_ERROR_UNSUPPORTED,
                            "\"%s\" is not an NCCL %s (%s)", names[i], what, known);
                return NULL;
            }
            g_string_append_printf(env, "%s%s", n_named > 0 ? "," : "",
                                   is_proto ? proto_env_names[bit] : algo_env_names[bit]);
            n_named++;
        }
        if (n_named == 0) {
            g_set_error(error, CS_NCCL_ERROR, CS_NCCL_ERROR_UNSUPPORTED, "no %s in \"%s\" (%s)",
                        what, value, known);
            return NULL;
        }
    }
    return g_string_free(g_steal_pointer(&env), FALSE);
}

/**
 * cs_nccl_list_mask:
 * What an NCCL_ALGO (@is_proto FALSE) or NCCL_PROTO @value allows collective @func (a
 * CsNcclFunc, -1: unknown), read leniently as NCCL reads it (names it does not know are
 * skipped): a comma list, or with a leading '^' everything but the list (NCCL's parseList);
 * with per-collective lists, the first group without a prefix or with @func's.
 * Returns: a mask (1 << CsNcclAlgo, 1 << CsProto); 0 when the group names nothing or @func
 *   has no group.
 */
guint
cs_nccl_list_mask(const char *value, gboolean is_proto, int func)
{
    const guint all = is_proto ? CS_NCCL_ALL_PROTOS : CS_NCCL_ALL_ALGOS;
    const char *list = NULL;
    g_auto(GStrv) groups = g_strsplit(value, ";", -1);
    for (int g = 0; groups[g] != NULL && list == NULL; g++) {
        const char *rest;
        const int f = group_func(groups[g], &rest);
        if (f == -1 || (func >= 0 && f == func))
            list = rest;
    }
    if (list == NULL)
        return 0;
    const gboolean exclude = list[0] == '^';
    guint listed = 0;
    g_auto(GStrv) names = g_strsplit(list + (exclude ? 1 : 0), ",", -1);
    for (int i = 0; names[i] != NULL; i++) {
        const int bit = list_name_bit(names[i], is_proto);
        if (bit >= 0)
            listed |= 1u << bit;
    }
    if (listed == 0)
        return 0;
    return exclude ? all & ~listed : listed;
}

const char *
cs_nccl_proto_name(CsProto proto)
{
    g_return_val_if_fail(proto < CS_N_PROTOS, NULL);
    return proto_names[proto];
}

int
cs_nccl_func_from_op(CsOp op)
{
    switch (op) {
    case CS_OP_BROADCAST:
        return CS_NCCL_FUNC_BROADCAST;
    case CS_OP_REDUCE:
        return CS_NCCL_FUNC_REDUCE;
    case CS_OP_ALL_GATHER:
        return CS_NCCL_FUNC_ALL_GATHER;
    case CS_OP_REDUCE_SCATTER:
        return CS_NCCL_FUNC_REDUCE_SCATTER;
    case CS_OP_ALL_REDUCE:
        return CS_NCCL_FUNC_ALL_REDUCE;
    case CS_OP_SCATTER:
    case CS_OP_GATHER:
    case CS_OP_ALL_TO_ALL:
    case CS_N_OPS:
    default:
        return -1;
    }
}

const char *
cs_nccl_func_name(CsNcclFunc func)
{
    g_return_val_if_fail(func < CS_NCCL_N_FUNCS, NULL);
    return func_names[func];
}

const char *
cs_nccl_arch_name(CsNcclArch arch)
{
    g_return_val_if_fail(arch < CS_NCCL_N_ARCHS, NULL);
    return arch_names[arch];
}

/**
 * cs_nccl_nvls_channels:
 * NCCL sets nvlsChannels once per communicator (src/transport/nvls.cc ncclNvlsInit) and
 * runs both NVLS and NVLSTree on exactly that many CTAs whatever the size ("NVLS should not
 * need more than 16 channels to get peak BW", src/enqueue.cc): a Blackwell GPU gets more
 * when its NVLink clique holds every rank than Hopper does, and more still across nodes.
 */
int
cs_nccl_nvls_channels(const CsNcclConstants *constants, CsNcclArch arch, gboolean several_domains)
{
    g_return_val_if_fail(constants != NULL, 16);
    if (arch < CS_NCCL_ARCH_BLACKWELL)
        return constants->nvls_channels[0];
    return constants->nvls_channels[several_domains ? 2 : 1];
}

/**
 * cs_nccl_arch_from_model:
 * The generation a GPU model string names. NCCL indexes its tables by compute capability:
 * >= 100 Blackwell, >= 90 Hopper, >= 80 Ampere (Ada too), else Volta (Turing too).
 */
CsNcclArch
cs_nccl_arch_from_model(const char *model, gboolean *recognised)
{
    static const struct {
        const char *token;
        CsNcclArch arch;
    } table[] = {
        { "GB200", CS_NCCL_ARCH_BLACKWELL }, { "GB300", CS_NCCL_ARCH_BLACKWELL },
        { "B200", CS_NCCL_ARCH_BLACKWELL },  { "B100", CS_NCCL_ARCH_BLACKWELL },
        { "B300", CS_NCCL_ARCH_BLACKWELL },  { "BLACKWELL", CS_NCCL_ARCH_BLACKWELL },
        { "GH200", CS_NCCL_ARCH_HOPPER },    { "H100", CS_NCCL_ARCH_HOPPER },
        { "H200", CS_NCCL_ARCH_HOPPER },     { "H800", CS_NCCL_ARCH_HOPPER },
        { "H20", CS_NCCL_ARCH_HOPPER },      { "HOPPER", CS_NCCL_ARCH_HOPPER },
        { "A100", CS_NCCL_ARCH_AMPERE },     { "A800", CS_NCCL_ARCH_AMPERE },
        { "A30", CS_NCCL_ARCH_AMPERE },      { "A40", CS_NCCL_ARCH_AMPERE },
        { "A10", CS_NCCL_ARCH_AMPERE },      { "L40", CS_NCCL_ARCH_AMPERE },
        { "L4", CS_NCCL_ARCH_AMPERE },       { "RTX 30", CS_NCCL_ARCH_AMPERE },
        { "RTX 40", CS_NCCL_ARCH_AMPERE },   { "AMPERE", CS_NCCL_ARCH_AMPERE },
        { "ADA", CS_NCCL_ARCH_AMPERE },      { "V100", CS_NCCL_ARCH_VOLTA },
        { "T4", CS_NCCL_ARCH_VOLTA },        { "2080", CS_NCCL_ARCH_VOLTA },
        { "VOLTA", CS_NCCL_ARCH_VOLTA },     { "TURING", CS_NCCL_ARCH_VOLTA },
    };

    if (recognised != NULL)
        *recognised = FALSE;
    if (model == NULL)
        return CS_NCCL_ARCH_HOPPER;
    g_autofree char *upper = g_ascii_strup(model, -1);
    for (gsize i = 0; i < G_N_ELEMENTS(table); i++) {
        if (strstr(upper, table[i].token) != NULL) {
            if (recognised != NULL)
                *recognised = TRUE;
            return table[i].arch;
        }
    }
    return CS_NCCL_ARCH_HOPPER;
}

/* ---- Systems: an emulation of NCCL's topology search ---- */

void
cs_nccl_system_init(CsNcclSystem *system, int n_ranks, int n_nodes, CsNcclArch arch)
{
    g_return_if_fail(system != NULL);
    memset(system, 0, sizeof(*system));
    system->n_ranks = n_ranks;
    system->n_nodes = n_nodes;
    system->arch = arch;
}

/* topo.h SM70/SM80_NVLINK_BW 20.0, SM90_NVLINK_BW 20.6, SM100_NVLINK_BW 40.1 (GB/s per link,
 * per direction): what NCCL assumes whatever the datasheet says. */
static const double nvlink_lane_GBps[CS_NCCL_N_ARCHS] = { 20.0, 20.0, 20.6, 40.1 };

/* graph/topo.h LOC_BW (NCCL 2.28.9): a GPU's path to itself, GB/s. */
#define NCCL_LOC_GBps 5000.0

/* search.cc speedArrayIntra / sm90SpeedArrayIntra / sm100SpeedArrayIntra (GB/s per channel). */
static const double speeds_intra_generic[]
    = { 40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0, 4.0, 3.0 };
static const double speeds_intra_sm90[]
    = { 60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 11.0, 6.0, 3.0 };
static const double speeds_intra_sm100[]
    = { 90.0, 80.0, 70.0, 60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 19.0, 18.0 };
/* search.cc speedArrayInter / sm90SpeedArrayInter / sm100SpeedArrayInter. */
static const double speeds_inter_generic[]
    = { 48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0,
        7.0,  6.0,  5.0,  4.0,  3.0,  2.4,  1.2,  0.24, 0.12 };
static const double speeds_inter_sm90[] = { 48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5,
                                            15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12 };
static const double speeds_inter_sm100[] = { 96.0, 48.0, 45.1, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0,
                                             17.5, 15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12 };

typedef struct {
    const double *v;
    gsize n;
} SpeedArray;

static SpeedArray
speed_array(CsNcclArch arch, const CsNcclConstants *c, gboolean inter)
{
    SpeedArray s;
    /* 2.19 knows no sm100 array: a Blackwell GPU searches with the sm90 one. */
    if (arch == CS_NCCL_ARCH_BLACKWELL && c->formula == CS_NCCL_FORMULA_2_19)
        arch = CS_NCCL_ARCH_HOPPER;
    if (arch == CS_NCCL_ARCH_BLACKWELL) {
        s.v = inter ? speeds_inter_sm100 : speeds_intra_sm100;
        s.n = inter ? G_N_ELEMENTS(speeds_inter_sm100) : G_N_ELEMENTS(speeds_intra_sm100);
    }
    else if (arch == CS_NCCL_ARCH_HOPPER) {
        s.v = inter ? speeds_inter_sm90 : speeds_intra_sm90;
        s.n = inter ? G_N_ELEMENTS(speeds_inter_sm90) : G_N_ELEMENTS(speeds_intra_sm90);
    }
    else {
        s.v = inter ? speeds_inter_generic : speeds_intra_generic;
        s.n = inter ? G_N_ELEMENTS(speeds_inter_generic) : G_N_ELEMENTS(speeds_intra_generic);
    }
    return s;
}

/* The first speed of the array that one path carries and the GPU's total feeds at least
 * once (ncclTopoCompute's starting speedIndex). */
static double
first_speed(SpeedArray s, double max_path_GBps, double total_GBps)
{
    for (gsize i = 0; i < s.n; i++)
        if (s.v[i] <= max_path_GBps && s.v[i] <= total_GBps)
            return s.v[i];
    return s.v[s.n - 1];
}

/* floor(@x) as a count in [0, @cap]: how many channels of one speed a bandwidth holds. The
 * comparison is made in double, so a huge or infinite @x (one GPU, a 1e300 GB/s link in a
 * topology file) is @cap, never an out-of-range conversion to int. */
static int
floor_count(double x, int cap)
{
    const double n = floor(x + 1e-9);
    if (!(n > 0.0))
        return 0;
    return n >= (double)cap ? cap : (int)n;
}

/* What NCCL thinks a link carries, GB/s: NVLink lanes at NCCL's per-generation figure, other
 * links at their datasheet rate (NCCL reads PCIe width/speed and NIC speed from the system). */
static double
link_nccl_GBps(const CsLink *link, CsNcclArch arch)
{
    if (cs_link_kind_class(link->kind) == CS_LINK_CLASS_NVLINK)
        return MAX(link->count, 1) * nvlink_lane_GBps[arch];
    return link->raw_bw_Bps / 1e9;
}

/* ncclTopoDupChannels: fast channels are split in two so more SMs pull on them. */
static void
dup_channels(CsNcclGraph *g, CsNcclArch arch, int max_channels)
{
    if (g->bw_intra_GBps < 25.0)
        return;
    if (arch > CS_NCCL_ARCH_AMPERE && g->bw_intra_GBps < 50.0 && g->n_channels > 4)
        return;
    const int dup = MIN(g->n_channels * 2, max_channels);
    const int div = (dup + g->n_channels - 1) / g->n_channels;
    g->bw_intra_GBps /= div;
    g->bw_inter_GBps /= div;
    g->n_channels = dup;
}

/* ncclTopoCompute's second pass for a tree graph (search.cc, the same code in NCCL 2.19.3,
 * 2.20.3, 2.21.5 and 2.28.9): "increase bwIntra for trees (2 nodes or collnet)". Starting
 * from the array entry of the graph's inter speed (the network array when the system has
 * NICs), it searches again with the next faster entry as bwIntra, the channel count held
 * (minChannels = nChannels), while bwIntra < 2 x bwInter and the search succeeds; bwInter
 * stays. The inter speed after duplication must be an array entry (tmpGraph.bwIntra ==
 * graph->bwIntra), or nothing is raised. A GPU-to-GPU path carries bwIntra per channel: the
 * search fails once @max_path or the GPU's @total_GBps over its channels is exceeded. The
 * tuning reads bwIntra for 2 nodes or fewer and for CollNet (tuning.cc "nNodes <= 2 ||
 * collnet ? bwIntra : bwInter"), so on 2 nodes the tree's model bandwidth can reach twice the
 * ring's per channel: each node's NICs carry half the data a ring's do. */
static void
raise_tree_intra(CsNcclGraph *g, SpeedArray s, double max_path, double total_GBps)
{
    gsize i = 0;
    while (i < s.n - 1 && s.v[i] > g->bw_inter_GBps)
        i++;
    if (fabs(s.v[i] - g->bw_intra_GBps) > 1e-9)
        return;
    while (i > 0 && g->bw_intra_GBps < 2.0 * g->bw_inter_GBps) {
        const double next = s.v[i - 1];
        if (next > max_path + 1e-9 || g->n_channels * next > total_GBps + 1e-9)
            return;
        g->bw_intra_GBps = next;
        i--;
    }
}

/**
 * cs_nccl_system_from_topo:
 * What NCCL's topology search would most likely find on @topo, from the first @nranks ranks.
 * The emulation follows search.cc's shape, not its backtracking:
 *   - NVLink links count at NCCL's per-generation rate (20.6 GB/s per link on Hopper), other
 *     links at their datasheet rate; the GPU generation comes from the GPU model string;
 *   - inside a node, the channel speed is the first entry of the generation's speed array that
 *     one GPU-to-GPU path carries, and the ring gets as many channels as the GPU's total
 *     bandwidth feeds at that speed (capped at MAXCHANNELS/2); across nodes the speed also fits
 *     one NIC and the NICs of a node bound the channels;
 *   - ncclTopoDupChannels then doubles fast channels; tree graphs equal ring graphs but for
 *     the second pass that raises their intra speed (raise_tree_intra); NVLS uses
 *     NCCL_NVLS_NCHANNELS channels; CollNet exists only with SHARP, one channel per NIC.
 * NCCL's real search is a timed backtracking search and may settle elsewhere on irregular
 * machines; NCCL_GRAPH_DUMP_FILE shows what it found.
 */
gboolean
cs_nccl_system_from_topo(const CsTopo *topo, int nranks, const CsNcclConstants *constants,
                         CsNcclSystem *system, GError **error)
{
    g_return_val_if_fail(topo != NULL && constants != NULL && system != NULL, FALSE);
    const int all = cs_topo_n_ranks(topo);
    if (nranks <= 0)
        nranks = all;
    if (nranks > all) {
        g_set_error(error, CS_NCCL_ERROR, CS_NCCL_ERROR_UNSUPPORTED,
                    "%s: %d ranks asked, the topology has %d", cs_topo_name(topo), nranks, all);
        return FALSE;
    }

    /* Nodes among the ranks used, and ranks per node. */
    g_autoptr(GHashTable) nodes = g_hash_table_new(NULL, NULL);
    for (int r = 0; r < nranks; r++)
        g_hash_table_add(nodes, GINT_TO_POINTER(cs_topo_rank_node(topo, r) + 1));
    const int n_nodes = MAX(1, (int)g_hash_table_size(nodes));

    /* MNNVL (NCCL 2.19+): nodes joined by NVLink form one NVLink domain, tuned as one node. */
    gboolean mnnvl = n_nodes > 1;
    for (int r = 1; r < nranks && mnnvl; r++)
        if (cs_topo_rank_node(topo, r) != cs_topo_rank_node(topo, 0)
            && cs_topo_route(topo, 0, r)->link_class != CS_LINK_CLASS_NVLINK)
            mnnvl = FALSE;

    gboolean recognised = FALSE;
    const CsDevice *gpu0 = cs_topo_device(topo, cs_topo_rank_device(topo, 0));
    const CsNcclArch arch = cs_nccl_arch_from_model(gpu0->model, &recognised);
    cs_nccl_system_init(system, nranks, mnnvl ? 1 : n_nodes, arch);
    system->arch_guessed = !recognised;
    system->collnet = system->n_nodes > 1 && cs_topo_has_sharp(topo);

    /* Intra-node paths: the widest single path (system->maxBw), every path NVLink or not, and
     * the GPU's total bandwidth over its NVLink (or PCI) links (system->totalBw). */
    double max_path = 0.0;
    gboolean all_nvlink = TRUE;
    gboolean have_pairs = FALSE;
    for (int r = 0; r < nranks; r++) {
        for (int q = 0; q < nranks; q++) {
            if (q == r || (!mnnvl && cs_topo_rank_node(topo, q) != cs_topo_rank_node(topo, r)))
                continue;
            const CsRoute *route = cs_topo_route(topo, r, q);
            double path = G_MAXDOUBLE;
            for (int i = 0; i < route->n_links; i++)
                path = MIN(path, link_nccl_GBps(cs_topo_link(topo, route->links[i]), arch));
            if (route->n_links == 0)
                continue;
            have_pairs = TRUE;
            max_path = MAX(max_path, path);
            if (route->link_class != CS_LINK_CLASS_NVLINK)
                all_nvlink = FALSE;
        }
    }
    const CsLinkClass intra_class = all_nvlink ? CS_LINK_CLASS_NVLINK : CS_LINK_CLASS_PCI;
    /* Each device's bandwidth out over those links, in one pass over the links (a pass per
     * rank is quadratic on a machine of thousands of GPUs). */
    double total_intra = G_MAXDOUBLE;
    g_autofree double *out_GBps = g_new0(double, cs_topo_n_devices(topo));
    for (int l = 0; l < cs_topo_n_links(topo); l++) {
        const CsLink *link = cs_topo_link(topo, l);
        const CsLinkClass cls = cs_link_kind_class(link->kind);
        if (cls == intra_class || (intra_class == CS_LINK_CLASS_PCI && cls != CS_LINK_CLASS_NET))
            out_GBps[link->src] += link_nccl_GBps(link, arch);
    }
    for (int r = 0; r < nranks; r++)
        total_intra = MIN(total_intra, out_GBps[cs_topo_rank_device(topo, r)]);
    /* One GPU alone on its node: search.cc ncclTopoSearchInit (NCCL 2.28.9) sets maxBw =
     * totalBw = LOC_BW (5000 GB/s, graph/topo.h) when there is no network; across nodes the
     * network bounds the search and no intra-node figure applies. */
    if (!have_pairs)
        max_path = total_intra = system->n_nodes == 1 ? NCCL_LOC_GBps : G_MAXDOUBLE;

    /* NVSwitches and NICs of the first node. */
    const int node0 = cs_topo_rank_node(topo, 0);
    double nic_GBps = 0.0;
    for (int d = 0; d < cs_topo_n_devices(topo); d++) {
        const CsDevice *dev = cs_topo_device(topo, d);
        if (dev->node != node0)
            continue;
        if (dev->kind == CS_DEVICE_NVSWITCH)
            system->nvswitch = TRUE;
        if (dev->kind != CS_DEVICE_NIC)
            continue;
        system->n_nics++;
        for (int l = 0; l < cs_topo_n_links(topo); l++) {
            const CsLink *link = cs_topo_link(topo, l);
            if (link->src == d && cs_link_kind_class(link->kind) == CS_LINK_CLASS_NET)
                nic_GBps = MAX(nic_GBps, link_nccl_GBps(link, arch));
        }
    }

    const int max_ch = constants->max_ring_channels;
    CsNcclGraph ring = { 0 };
    ring.hw_intra
        = intra_class == CS_LINK_CLASS_NVLINK || !have_pairs ? CS_NCCL_HW_NVLINK : CS_NCCL_HW_PCI;
    /* LL128 needs NVLink inside the node (typeIntra <= PATH_NVB); one GPU per node is LOC. */
    ring.ll128 = intra_class == CS_LINK_CLASS_NVLINK || !have_pairs;
    ring.same_channels = TRUE;
    /* search.cc: a graph that crosses the network takes its NIC's latency (the net plugin's
     * ncclNetProperties_t.latency); every graph below copies it. */
    if (system->n_nodes > 1 && cs_topo_transport(topo)->kind != NULL)
        ring.latency_inter_us = cs_topo_transport(topo)->reported_s * 1e6;
    if (system->n_nodes == 1) {
        const double s = first_speed(speed_array(arch, constants, FALSE), max_path, total_intra);
        ring.n_channels = CLAMP(floor_count(total_intra / s, max_ch), 1, max_ch);
        ring.bw_intra_GBps = ring.bw_inter_GBps = s;
    }
    else {
        const int n_nics = MAX(system->n_nics, 1);
        if (nic_GBps <= 0.0)
            nic_GBps = 12.5; /* no NIC link found: a 100 Gb/s NIC, NCCL's usual floor */
        const double s
            = first_speed(speed_array(arch, constants, TRUE), MIN(nic_GBps, max_path), total_intra);
        int n = n_nics * MAX(1, floor_count(nic_GBps / s, max_ch));
        if (have_pairs)
            n = MIN(n, floor_count(total_intra / s, max_ch));
        ring.n_channels = CLAMP(n, 1, max_ch);
        ring.bw_intra_GBps = ring.bw_inter_GBps = s;
    }
    dup_channels(&ring, arch, max_ch);
    system->graphs[CS_NCCL_ALGO_RING] = ring;

    CsNcclGraph tree = ring;
    /* search.cc: from Hopper on, trees across nodes use the plain TREE pattern. */
    tree.tree_pattern = system->n_nodes > 1 && arch >= CS_NCCL_ARCH_HOPPER;
    raise_tree_intra(&tree, speed_array(arch, constants, system->n_nodes > 1), max_path,
                     total_intra);
    system->graphs[CS_NCCL_ALGO_TREE] = tree;
    /* 2.23+ runs PAT on the tree graph. */
    system->graphs[CS_NCCL_ALGO_PAT] = tree;

    if (cs_topo_has_nvls(topo) && arch >= CS_NCCL_ARCH_HOPPER) {
        CsNcclGraph nvls = ring;
        /* search.cc: the NVLS graph has one channel per head, one head per local GPU (at most
         * NCCL_MAX_NVLS_ARITY 32), and the tuning reads its bandwidth from those channels (the
         * CTAs NVLS runs with, NCCL_NVLS_NCHANNELS, are another count). The intra speed is the
         * first the heads fit in the GPU's NVLink at; on one node the inter speed keeps the
         * search's starting speed. NCCL 2.19.4 on an 8 x H100 NVSwitch box logs "Pattern 5,
         * nChannels 8, bw 40.000000/60.000000" (NVIDIA/nccl issue 1197). */
        const int local = MAX(1, system->n_ranks / system->n_nodes);
        nvls.n_channels = MIN(local, CS_NCCL_MAX_NVLS_ARITY);
        const SpeedArray sa = speed_array(arch, constants, FALSE);
        nvls.bw_intra_GBps = first_speed(sa, max_path, total_intra / nvls.n_channels);
        nvls.bw_inter_GBps = first_speed(sa, max_path, total_intra);
        if (system->n_nodes > 1) {
            const double per_ch = MAX(system->n_nics, 1) * nic_GBps / nvls.n_channels;
            nvls.bw_inter_GBps = first_speed(speed_array(arch, constants, TRUE), per_ch, per_ch);
        }
        system->graphs[CS_NCCL_ALGO_NVLS] = nvls;
        system->graphs[CS_NCCL_ALGO_NVLS_TREE] = nvls;
    }
    if (system->collnet) {
        CsNcclGraph cn = ring;
        cn.n_channels = MAX(system->n_nics, 1);
        cn.bw_intra_GBps = cn.bw_inter_GBps
            = first_speed(speed_array(arch, constants, TRUE), nic_GBps, nic_GBps);
        /* The CollNet graphs (TREE and COLLNET_DIRECT patterns) take the same second pass,
         * and the tuning reads their bwIntra at any node count. */
        raise_tree_intra(&cn, speed_array(arch, constants, TRUE), max_path, total_intra);
        system->graphs[CS_NCCL_ALGO_COLLNET_DIRECT] = cn;
        system->graphs[CS_NCCL_ALGO_COLLNET_CHAIN] = cn;
    }
    return TRUE;
}

/* ---- The model ---- */

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

/* Whether ncclTopoTuneModel computes (func, algo, proto) at all. */
static gboolean
modelled(const CsNcclModel *m, int f, int a, int p)
{
    const gboolean v228 = m->c->formula == CS_NCCL_FORMULA_2_28;
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
    const gboolean v228 = m->c->formula == CS_NCCL_FORMULA_2_28;
    if (v228 ? (a != CS_NCCL_ALGO_RING && is_ag_rs(f))
             : (a == CS_NCCL_ALGO_COLLNET_DIRECT && is_ag_rs(f)))
        return 1.0;
    if (a == CS_NCCL_ALGO_RING)
        return (double)m->sys.n_ranks / nsteps;
    if (a == CS_NCCL_ALGO_NVLS || a == CS_NCCL_ALGO_NVLS_TREE)
        return v228 ? (double)m->sys.n_ranks / nsteps : 5.0 / 6.0;
    return 0.5;
}

static double
latency(const CsNcclModel *m, int f, int a, int p, int nsteps)
{
    const CsNcclConstants *c = m->c;
    const CsNcclSystem *s = &m->sys;
    const CsNcclGraph *g = &s->graphs[a];
    const gboolean v228 = c->formula == CS_NCCL_FORMULA_2_28;
    const int n_nodes = s->n_nodes;
    const int n_ranks = s->n_ranks;
    const int ppn_int = n_ranks / n_nodes;
    const int intra_hw = g->hw_intra;
    const int hw = n_nodes == 1 ? intra_hw : CS_NCCL_HW_NET;

    double lat = c->base_lat_us[a][p];
    double intra = c->hw_lat_us[intra_hw][a][p];
    /* 2.28: with one rank per node nothing hides the network, so the tree's figure is used. */
    double inter = v228 && ppn_int == 1 ? c->hw_lat_us[CS_NCCL_HW_NET][CS_NCCL_ALGO_TREE][p]
                                        : c->hw_lat_us[CS_NCCL_HW_NET][a][p];
    inter += g->latency_inter_us;
    /* The flush after a Simple receive costs the network latency once more. */
    if (p == CS_PROTO_SIMPLE)
        inter += g->latency_inter_us;

    switch (a) {
    case CS_NCCL_ALGO_RING:
        if (f == CS_NCCL_FUNC_REDUCE || f == CS_NCCL_FUNC_BROADCAST) {
            double hop = c->hw_lat_us[hw][a][p];
            if (g->same_channels) {
                lat += hop;
            }
            else {
                if (p == CS_PROTO_SIMPLE)
                    hop = c->hw_lat_us[hw][CS_NCCL_ALGO_TREE][p];
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
    g_set_error(error, CS_NCCL_ERROR, CS_NCCL_ERROR_UNSUPPORTED,
                "NCCL %s's model has no usable %s%s%s for %s on %d ranks, %d node%s",
                model->c->version, algo >= 0 ? algo_env_names[algo] : "algorithm",
                proto >= 0 ? "/" : "", proto >= 0 ? proto_env_names[proto] : "", cs_op_name(op),
                model->sys.n_ranks, model->sys.n_nodes, model->sys.n_nodes == 1 ? "" : "s");
    return FALSE;
}
