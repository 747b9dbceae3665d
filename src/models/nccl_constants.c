// SPDX-License-Identifier: MIT
/* NCCL's cited constants, one set per release: tuning.cc's latency and bandwidth tables
 * (baseLat, hwLat, llMaxBws, perChMax*, treeCorrectionFactor), the channel limits of search.cc
 * and nvls.cc, and the lookup of a set by release or model spec ("nccl:2.28"). nccl_system.c
 * and nccl.c read them; a new NCCL release is a new set here.
 *
 * Sources (read, not copied; every constant below names where it comes from):
 *   NVIDIA/nccl src/graph/tuning.cc  ncclTopoTuneModel()'s tables, releases 2.19 and 2.28;
 *   NVIDIA/nccl src/graph/search.cc  MAXCHANNELS and the ring/tree channel limit;
 *   NVIDIA/nccl src/transport/nvls.cc  nvlsChannels per generation.
 * Latencies are in microseconds and bandwidths in GB/s (1e9 B/s), as in NCCL. */
#include "models/nccl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* NCCL 2.19 (src/graph/tuning.cc of the 2.19 releases; Volta/Ampere/Hopper rows only, a
 * Blackwell GPU falls in the Hopper row since 2.19 indexes by minCompCap >= 90). */
static const CsNcclConstants nccl_2_19 = {
    .library = "NCCL",
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
    .library = "NCCL",
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
 * "nccl" (newest constants), "nccl:VERSION", "rccl" (RCCL's own model, newest set) or
 * "rccl:VERSION".
 */
gboolean
cs_nccl_parse_spec(const char *spec, const CsNcclConstants **constants, GError **error)
{
    g_return_val_if_fail(spec != NULL && constants != NULL, FALSE);
    const gboolean rccl = g_ascii_strncasecmp(spec, "rccl", 4) == 0;
    if ((!rccl && g_ascii_strncasecmp(spec, "nccl", 4) != 0)
        || (spec[4] != '\0' && spec[4] != ':')) {
        g_set_error(error, CS_NCCL_ERROR, CS_NCCL_ERROR_SPEC,
                    "'%s' is not an NCCL model (expected 'nccl', 'nccl:VERSION', "
                    "'rccl' or 'rccl:VERSION', e.g. 'nccl:2.28')",
                    spec);
        return FALSE;
    }
    const char *version = spec[4] == ':' ? spec + 5 : NULL;
    if (version != NULL && *version == '\0') {
        g_set_error(error, CS_NCCL_ERROR, CS_NCCL_ERROR_SPEC,
                    "'%s': a version must follow '%.4s:' (e.g. '%.4s:%s')", spec, spec, spec,
                    rccl ? "2.21" : "2.28");
        return FALSE;
    }
    *constants = rccl ? cs_rccl_constants_lookup(version, error)
                      : cs_nccl_constants_lookup(version, error);
    return *constants != NULL;
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
