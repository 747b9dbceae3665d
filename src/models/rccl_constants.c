// SPDX-License-Identifier: MIT
/* RCCL's own tuning model as constant sets for nccl.c's machinery: RCCL keeps NCCL's formulas
 * (ncclTopoTuneModel, ncclTopoGetAlgoTime) but, in its ROCm build, replaces NCCL's tables with
 * its own rcclTuningModel[] (per-hop latencies, bus-bandwidth ratios, tree and ring correction
 * factors, and from 2.26 on the LL/LL128 size ranges that override the protocol across nodes),
 * picked per machine by comm->topo->tuning, and adds rules by GPU architecture.
 *
 * Sources (read, not copied; every constant below names where it comes from):
 *   RCCL 2.21.5: ROCm/rccl at commit 0cbce2a7 (branch develop, 2024-10-24, makefiles/version.mk
 *     2.21.5): src/graph/tuning.cc (baseLat, tuning_model_0 .. tuning_model_5), src/enqueue.cc
 *     (topoGetAlgoInfo: the argmin, nothing overridden), src/graph/rome_models.cc (the machine
 *     models; rome_model_79, _81 and _84, the 8-GPU xGMI meshes, carry "tuning=5").
 *   RCCL 2.26: ROCm/rccl at commit 9e22c79d, the newest revision of src/graph/tuning.cc stored
 *     from ROCm/rccl before RCCL moved into ROCm/rocm-systems: it has the gfx950 target, which
 *     RCCL's CHANGELOG.md adds in 2.26.6, and not the channel tuning (RCCL_CHANNEL_TUNING_ENABLE,
 *     channelThresholds) it adds in 2.27.7; its rcclTuningModel[] has tuning_model_0 ..
 *     tuning_model_6. src/graph/rome_models.cc of the same line sets tuning = 6 on gfx950 after
 *     a machine-model match; src/rccl_wrap.cc rcclUpdateCollectiveProtocol() applies the
 *     llProtoRanges across nodes; src/graph/topo.h (08814b0a) GFX95X_XGMI_WIDTH 48.
 * The traces' releases (2.26.6, 2.27.7) map to the 2.26 set (cs_rccl_constants_nearest()); a
 * 2.27.7 run may differ where 2.27 changed the channel count, which this model does not pick.
 * Latencies are in microseconds, bandwidths in GB/s, as in RCCL. */
#include "models/nccl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* RCCL 2.21.5 tuning.cc rcclTuningModel[] = { tuning_model_0, ..., tuning_model_5 }; the
 * tables are per hardware class (NVLINK = xGMI, PCI, NET), algorithm and protocol
 * (LL, LL128, Simple), transcribed entry by entry. */
static const CsRcclTuningModel rccl_2_21_models[CS_RCCL_N_TUNING_MODELS] = {
    /* RCCL 2.21.5 tuning.cc tuning_model_0 */
    [0] = {
        .hw_lat_us = {
            [CS_NCCL_HW_NVLINK] = {
                [CS_NCCL_ALGO_TREE] = { 0.8, 1.4, 2.5 },
                [CS_NCCL_ALGO_RING] = { 0.8, 2.2, 3.6 },
                [CS_NCCL_ALGO_COLLNET_DIRECT] = { 0.0, 0.0, 0.8 },
                [CS_NCCL_ALGO_COLLNET_CHAIN] = { 0.0, 0.0, 1.4 },
            },
            [CS_NCCL_HW_PCI] = {
                [CS_NCCL_ALGO_TREE] = { 2.2, 2.2, 5.7 },
                [CS_NCCL_ALGO_RING] = { 2.2, 2.2, 5.7 },
                [CS_NCCL_ALGO_COLLNET_DIRECT] = { 0.0, 0.0, 5.7 },
                [CS_NCCL_ALGO_COLLNET_CHAIN] = { 0.0, 0.0, 5.7 },
            },
            [CS_NCCL_HW_NET] = {
                [CS_NCCL_ALGO_TREE] = { 11.8, 18.2, 20.8 },
                [CS_NCCL_ALGO_RING] = { 9.5, 19.8, 15.1 },
                [CS_NCCL_ALGO_COLLNET_DIRECT] = { 0.0, 0.0, 11.8 },
                [CS_NCCL_ALGO_COLLNET_CHAIN] = { 0.0, 0.0, 18.2 },
            },
        },
        .bw_ratio = {
            {
                [CS_NCCL_ALGO_TREE] = { 0.04, 0.22, 0.91 },
                [CS_NCCL_ALGO_RING] = { 0.04, 0.34, 1.0 },
                [CS_NCCL_ALGO_COLLNET_DIRECT] = { 0.0, 0.0, 1.0 },
                [CS_NCCL_ALGO_COLLNET_CHAIN] = { 0.0, 0.0, 1.0 },
            },
            {
                [CS_NCCL_ALGO_TREE] = { 0.04, 0.22, 0.95 },
                [CS_NCCL_ALGO_RING] = { 0.04, 0.34, 1.0 },
                [CS_NCCL_ALGO_COLLNET_DIRECT] = { 0.0, 0.0, 1.0 },
                [CS_NCCL_ALGO_COLLNET_CHAIN] = { 0.0, 0.0, 1.0 },
            },
        },
        .tree_correction = {
            { 0.1, 0.2, 0.1, 0.1, 0.9, 0.3, 0.4, 0.1, 0.2, 0.4, 0.2, 0.1, 0.3, 0.3, 0.2, 0.2, 0.2, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1 },
            { 0.1, 0.3, 1.0, 0.1, 0.5, 1.0, 0.9, 1.0, 1.0, 1.0, 0.3, 0.1, 0.4, 0.5, 0.5, 0.4, 0.4, 0.3, 0.3, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2 },
            { 0.2, 1.0, 0.1, 0.1, 0.7, 0.2, 0.4, 0.1, 0.1, 0.3, 0.4, 0.3, 0.6, 0.8, 1.0, 1.0, 1.0, 1.0, 0.9, 0.8, 0.8, 0.8, 0.8, 0.8, 0.9, 0.9, 0.9 },
        },
        .ring_correction = {
            { 0.1, 0.1, 0.1, 0.1, 0.1, 0.2, 0.4, 0.2, 0.3, 0.5, 0.3, 0.1, 0.5, 0.5, 0.3, 0.2, 0.2, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1 },
            { 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.3, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.8, 0.7, 0.5, 0.4, 0.4, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3 },
            { 1.0, 0.8, 0.2, 1.0, 1.0, 0.3, 1.0, 0.1, 0.1, 0.2, 0.2, 0.1, 0.5, 1.0, 0.8, 0.8, 1.0, 0.9, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0 },
        },
        .present = TRUE,
    },
    /* RCCL 2.21.5 tuning.cc tuning_model_1 */
    [1] = {
        .hw_lat_us = {
            [CS_NCCL_HW_NVLINK] = {
                [CS_NCCL_ALGO_TREE] = { 1.5, 1.5, 4.5 },
                [CS_NCCL_ALGO_RING] = { 1.5, 1.5, 4.5 },
                [CS_NCCL_ALGO_COLLNET_DIRECT] = { 0.0, 0.0, 4.5 },
                [CS_NCCL_ALGO_COLLNET_CHAIN] = { 0.0, 0.0, 4.5 },
            },
            [CS_NCCL_HW_PCI] = {
                [CS_NCCL_ALGO_TREE] = { 2.2, 2.2, 5.7 },
                [CS_NCCL_ALGO_RING] = { 2.2, 2.2, 5.7 },
                [CS_NCCL_ALGO_COLLNET_DIRECT] = { 0.0, 0.0, 5.7 },
                [CS_NCCL_ALGO_COLLNET_CHAIN] = { 0.0, 0.0, 5.7 },
            },
            [CS_NCCL_HW_NET] = {
                [CS_NCCL_ALGO_TREE] = { 33.0, 33.0, 15.8 },
                [CS_NCCL_ALGO_RING] = { 5.1, 5.1, 68.8 },
                [CS_NCCL_ALGO_COLLNET_DIRECT] = { 0.0, 0.0, 15.8 },
                [CS_NCCL_ALGO_COLLNET_CHAIN] = { 0.0, 0.0, 15.8 },
            },
        },
        .bw_ratio = {
            {
                [CS_NCCL_ALGO_TREE] = { 0.12, 1.0, 0.99 },
                [CS_NCCL_ALGO_RING] = { 0.12, 1.0, 1.0 },
                [CS_NCCL_ALGO_COLLNET_DIRECT] = { 0.0, 0.0, 1.0 },
                [CS_NCCL_ALGO_COLLNET_CHAIN] = { 0.0, 0.0, 1.0 },
            },
            {
                [CS_NCCL_ALGO_TREE] = { 0.15, 1.0, 0.42 },
                [CS_NCCL_ALGO_RING] = { 0.2, 1.0, 1.0 },
                [CS_NCCL_ALGO_COLLNET_DIRECT] = { 0.0, 0.0, 1.0 },
                [CS_NCCL_ALGO_COLLNET_CHAIN] = { 0.0, 0.0, 1.0 },
            },
        },
        .tree_correction = {
            { 0.5, 0.4, 0.7, 0.6, 1.0, 1.0, 0.5, 0.4, 0.1, 0.5, 0.4, 0.6, 1.0, 1.0, 1.0, 1.0, 1.0, 0.8, 0.6, 0.5, 0.4, 0.4, 0.3, 0.2, 0.1, 0.1, 0.1 },
            { 0.5, 0.4, 0.7, 0.6, 1.0, 1.0, 0.5, 0.4, 0.1, 0.5, 0.4, 0.6, 1.0, 1.0, 1.0, 1.0, 1.0, 0.8, 0.6, 0.5, 0.4, 0.4, 0.3, 0.2, 0.1, 0.1, 0.1 },
            { 0.1, 0.1, 0.1, 0.1, 0.1, 0.3, 0.4, 0.5, 0.1, 0.6, 1.0, 1.0, 1.0, 0.6, 0.5, 0.7, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.7, 0.5, 0.3, 0.3 },
        },
        .ring_correction = {
            { 1.0, 0.5, 1.0, 1.0, 0.6, 0.7, 1.0, 1.0, 0.2, 1.0, 0.9, 0.7, 1.0, 1.0, 1.0, 0.9, 0.9, 0.8, 0.8, 0.7, 0.6, 0.5, 0.5, 0.3, 0.2, 0.1, 0.1 },
            { 1.0, 0.5, 1.0, 1.0, 0.6, 0.7, 1.0, 1.0, 0.2, 1.0, 0.9, 0.7, 1.0, 1.0, 1.0, 0.9, 0.9, 0.8, 0.8, 0.7, 0.6, 0.5, 0.5, 0.3, 0.2, 0.1, 0.1 },
            { 0.3, 1.0, 0.3, 0.1, 0.1, 0.1, 0.3, 0.7, 1.0, 0.2, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.2, 0.3, 0.5, 0.9, 1.0, 1.0, 1.0, 1.0 },
        },
        .present = TRUE,
    },
    /* RCCL 2.21.5 tuning.cc tuning_model_2 */
    [2] = {
        .hw_lat_us = {
            [CS_NCCL_HW_NVLINK] = {
                [CS_NCCL_ALGO_TREE] = { 1.5, 1.5, 4.5 },
                [CS_NCCL_ALGO_RING] = { 1.5, 1.5, 4.5 },
                [CS_NCCL_ALGO_COLLNET_DIRECT] = { 0.0, 0.0, 4.5 },
                [CS_NCCL_ALGO_COLLNET_CHAIN] = { 0.0, 0.0, 4.5 },
            },
            [CS_NCCL_HW_PCI] = {
                [CS_NCCL_ALGO_TREE] = { 2.2, 2.2, 5.7 },
                [CS_NCCL_ALGO_RING] = { 2.2, 2.2, 5.7 },
                [CS_NCCL_ALGO_COLLNET_DIRECT] = { 0.0, 0.0, 5.7 },
                [CS_NCCL_ALGO_COLLNET_CHAIN] = { 0.0, 0.0, 5.7 },
            },
            [CS_NCCL_HW_NET] = {
                [CS_NCCL_ALGO_TREE] = { 27.9, 27.9, 15.8 },
                [CS_NCCL_ALGO_RING] = { 12.1, 12.1, 68.8 },
                [CS_NCCL_ALGO_COLLNET_DIRECT] = { 0.0, 0.0, 15.8 },
                [CS_NCCL_ALGO_COLLNET_CHAIN] = { 0.0, 0.0, 15.8 },
            },
        },
        .bw_ratio = {
            {
                [CS_NCCL_ALGO_TREE] = { 0.07, 1.0, 0.99 },
                [CS_NCCL_ALGO_RING] = { 0.08, 1.0, 1.0 },
                [CS_NCCL_ALGO_COLLNET_DIRECT] = { 0.0, 0.0, 1.0 },
                [CS_NCCL_ALGO_COLLNET_CHAIN] = { 0.0, 0.0, 1.0 },
            },
            {
                [CS_NCCL_ALGO_TREE] = { 0.07, 1.0, 0.42 },
                [CS_NCCL_ALGO_RING] = { 0.08, 1.0, 1.0 },
                [CS_NCCL_ALGO_COLLNET_DIRECT] = { 0.0, 0.0, 1.0 },
                [CS_NCCL_ALGO_COLLNET_CHAIN] = { 0.0, 0.0, 1.0 },
            },
        },
        .tree_correction = {
            { 0.1, 0.4, 0.3, 0.3, 0.2, 0.4, 0.5, 0.1, 0.1, 0.6, 0.7, 0.7, 0.8, 1.0, 0.9, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2 },
            { 0.1, 0.4, 0.3, 0.3, 0.2, 0.4, 0.5, 0.1, 0.1, 0.6, 0.7, 0.7, 0.8, 1.0, 0.9, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2 },
            { 1.0, 0.1, 0.1, 0.1, 0.1, 0.2, 0.3, 0.5, 0.1, 0.6, 0.9, 0.8, 0.7, 0.9, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.7, 0.9, 0.9, 1.0, 1.0, 1.0 },
        },
        .ring_correction = {
            { 0.1, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.4, 1.0, 1.0, 1.0, 1.0, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.2, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1 },
            { 0.1, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.4, 1.0, 1.0, 1.0, 1.0, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.2, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1 },
            { 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 1.0, 0.2, 0.2, 0.1, 0.1, 0.1, 0.1, 0.1, 0.2, 0.4, 0.5, 0.6, 0.9, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0 },
        },
        .present = TRUE,
    },
    /* RCCL 2.21.5 tuning.cc tuning_model_3 */
    [3] = {
        .hw_lat_us = {
            [CS_NCCL_HW_NVLINK] = {
                [CS_NCCL_ALGO_TREE] = { 0.8, 0.0, 2.5 },
                [CS_NCCL_ALGO_RING] = { 0.8, 0.0, 3.6 },
                [CS_NCCL_ALGO_COLLNET_DIRECT] = { 0.0, 0.0, 0.8 },
            },
            [CS_NCCL_HW_PCI] = {
                [CS_NCCL_ALGO_TREE] = { 2.2, 2.2, 5.7 },
                [CS_NCCL_ALGO_RING] = { 2.2, 2.2, 5.7 },
                [CS_NCCL_ALGO_COLLNET_DIRECT] = { 0.0, 0.0, 5.7 },
                [CS_NCCL_ALGO_COLLNET_CHAIN] = { 0.0, 0.0, 5.7 },
            },
            [CS_NCCL_HW_NET] = {
                [CS_NCCL_ALGO_TREE] = { 12.5, 0.0, 22.4 },
                [CS_NCCL_ALGO_RING] = { 9.5, 0.0, 19.8 },
                [CS_NCCL_ALGO_COLLNET_DIRECT] = { 0.0, 0.0, 12.5 },
            },
        },
        .bw_ratio = {
            {
                [CS_NCCL_ALGO_TREE] = { 0.2, 0.0, 1.75 },
                [CS_NCCL_ALGO_RING] = { 0.2, 0.0, 1.0 },
                [CS_NCCL_ALGO_COLLNET_DIRECT] = { 0.0, 0.0, 1.0 },
                [CS_NCCL_ALGO_COLLNET_CHAIN] = { 0.0, 0.0, 1.0 },
            },
            {
                [CS_NCCL_ALGO_TREE] = { 0.2, 0.0, 0.96 },
                [CS_NCCL_ALGO_RING] = { 0.2, 0.0, 1.0 },
                [CS_NCCL_ALGO_COLLNET_DIRECT] = { 0.0, 0.0, 1.0 },
                [CS_NCCL_ALGO_COLLNET_CHAIN] = { 0.0, 0.0, 1.0 },
            },
        },
        .tree_correction = {
            { 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 1.0, 1.0, 0.2, 1.0, 0.9, 1.0, 0.6, 0.4, 0.6, 0.4, 0.3, 0.3, 0.3, 0.3, 0.3, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2 },
            { 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0 },
            { 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.1, 0.1, 0.1, 0.2, 1.0, 0.8, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.8, 0.7, 0.8, 0.9, 0.7, 0.7 },
        },
        .ring_correction = {
            { 0.1, 0.1, 0.1, 0.1, 0.1, 0.3, 0.1, 0.2, 0.1, 0.4, 0.4, 0.2, 0.2, 0.3, 0.7, 0.5, 0.4, 0.3, 0.3, 0.3, 0.3, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2 },
            { 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0 },
            { 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.5, 1.0, 0.1, 0.3, 0.1, 0.1, 0.1, 0.2, 0.2, 0.2, 0.3, 0.4, 0.7, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0 },
        },
        .present = TRUE,
    },
    /* RCCL 2.21.5 tuning.cc tuning_model_4 */
    [4] = {
        .hw_lat_us = {
            [CS_NCCL_HW_NVLINK] = {
                [CS_NCCL_ALGO_TREE] = { 0.8, 1.4, 2.5 },
                [CS_NCCL_ALGO_RING] = { 0.8, 2.2, 3.6 },
                [CS_NCCL_ALGO_COLLNET_DIRECT] = { 0.8, 1.4, 2.5 },
                [CS_NCCL_ALGO_COLLNET_CHAIN] = { 0.8, 1.4, 2.5 },
            },
            [CS_NCCL_HW_PCI] = {
                [CS_NCCL_ALGO_TREE] = { 2.2, 2.2, 5.7 },
                [CS_NCCL_ALGO_RING] = { 2.2, 2.2, 5.7 },
                [CS_NCCL_ALGO_COLLNET_DIRECT] = { 0.0, 0.0, 5.7 },
                [CS_NCCL_ALGO_COLLNET_CHAIN] = { 0.0, 0.0, 5.7 },
            },
            [CS_NCCL_HW_NET] = {
                [CS_NCCL_ALGO_TREE] = { 32.2, 34.4, 47.6 },
                [CS_NCCL_ALGO_RING] = { 35.4, 87.8, 209.2 },
                [CS_NCCL_ALGO_COLLNET_DIRECT] = { 0.0, 0.0, 47.6 },
                [CS_NCCL_ALGO_COLLNET_CHAIN] = { 0.0, 0.0, 47.6 },
            },
        },
        .bw_ratio = {
            {
                [CS_NCCL_ALGO_TREE] = { 0.16, 1.09, 1.61 },
                [CS_NCCL_ALGO_RING] = { 0.15, 0.41, 1.0 },
                [CS_NCCL_ALGO_COLLNET_DIRECT] = { 0.0, 0.0, 1.0 },
                [CS_NCCL_ALGO_COLLNET_CHAIN] = { 0.0, 0.0, 1.0 },
            },
            {
                [CS_NCCL_ALGO_TREE] = { 0.16, 1.09, 1.08 },
                [CS_NCCL_ALGO_RING] = { 0.15, 0.41, 1.0 },
                [CS_NCCL_ALGO_COLLNET_DIRECT] = { 0.0, 0.0, 1.0 },
                [CS_NCCL_ALGO_COLLNET_CHAIN] = { 0.0, 0.0, 1.0 },
            },
        },
        .tree_correction = {
            { 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 1.0, 0.1, 0.1, 0.2, 0.4, 0.6, 0.5, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1 },
            { 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.2, 0.1, 0.1, 0.2, 1.0, 0.5, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2 },
            { 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.8, 0.4, 0.3, 0.3, 0.1, 0.1, 1.0, 1.0, 0.7, 0.5, 0.6, 0.5, 0.6, 0.6, 0.5, 0.6, 0.6, 0.6, 0.7 },
        },
        .ring_correction = {
            { 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.2, 0.2, 0.1, 0.3, 0.1, 0.1, 0.1, 0.2, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1 },
            { 0.4, 0.5, 0.5, 0.4, 0.4, 0.4, 0.4, 0.2, 0.2, 0.1, 0.3, 1.0, 1.0, 0.7, 0.8, 0.5, 1.0, 1.0, 1.0, 1.0, 1.0, 0.9, 0.8, 0.5, 0.4, 0.3, 0.3 },
            { 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 1.0, 1.0, 0.8, 0.5, 0.1, 0.7, 0.2, 0.4, 0.4, 0.6, 0.7, 0.9, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0 },
        },
        .present = TRUE,
    },
    /* RCCL 2.21.5 tuning.cc tuning_model_5 */
    [5] = {
        .hw_lat_us = {
            [CS_NCCL_HW_NVLINK] = {
                [CS_NCCL_ALGO_TREE] = { 0.9, 0.0, 2.3 },
                [CS_NCCL_ALGO_RING] = { 0.8, 0.0, 2.1 },
                [CS_NCCL_ALGO_COLLNET_DIRECT] = { 0.0, 0.0, 0.9 },
            },
            [CS_NCCL_HW_PCI] = {
                [CS_NCCL_ALGO_TREE] = { 2.2, 2.2, 5.7 },
                [CS_NCCL_ALGO_RING] = { 2.2, 2.2, 5.7 },
                [CS_NCCL_ALGO_COLLNET_DIRECT] = { 0.0, 0.0, 5.7 },
                [CS_NCCL_ALGO_COLLNET_CHAIN] = { 0.0, 0.0, 5.7 },
            },
            [CS_NCCL_HW_NET] = {
                [CS_NCCL_ALGO_TREE] = { 10.5, 0.0, 25.0 },
                [CS_NCCL_ALGO_RING] = { 9.5, 0.0, 320.0 },
                [CS_NCCL_ALGO_COLLNET_DIRECT] = { 0.0, 0.0, 10.5 },
            },
        },
        .bw_ratio = {
            {
                [CS_NCCL_ALGO_TREE] = { 0.06, 0.0, 0.11 },
                [CS_NCCL_ALGO_RING] = { 0.08, 0.0, 1.0 },
                [CS_NCCL_ALGO_COLLNET_DIRECT] = { 0.0, 0.0, 1.0 },
                [CS_NCCL_ALGO_COLLNET_CHAIN] = { 0.0, 0.0, 1.0 },
            },
            {
                [CS_NCCL_ALGO_TREE] = { 0.06, 0.0, 0.59 },
                [CS_NCCL_ALGO_RING] = { 0.08, 0.0, 1.0 },
                [CS_NCCL_ALGO_COLLNET_DIRECT] = { 0.0, 0.0, 1.0 },
                [CS_NCCL_ALGO_COLLNET_CHAIN] = { 0.0, 0.0, 1.0 },
            },
        },
        .tree_correction = {
            { 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 1.0, 1.0, 1.0, 1.0, 1.0, 0.6, 1.0, 0.9, 1.0, 1.0, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1 },
            { 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0 },
            { 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.7, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.8 },
        },
        .ring_correction = {
            { 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 1.0, 0.2, 1.0, 0.4, 0.4, 0.1, 0.2, 0.2, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1 },
            { 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0 },
            { 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.8, 1.0, 1.0, 1.0 },
        },
        .present = TRUE,
    },
};

static const CsNcclConstants rccl_2_21 = {
    .library = "RCCL",
    .version = "2.21.5",
    .reference = "ROCm/rccl 0cbce2a7 (2.21.5) src/graph/tuning.cc (baseLat, rcclTuningModel[]), "
                 "src/graph/rome_models.cc (tuning=N per machine model)",
    .formula = CS_NCCL_FORMULA_RCCL_2_21,
    /* RCCL 2.21.5 tuning.cc baseLat: Tree, Ring, CollNetDirect, CollNetChain {12, 12, 17};
     * NVLS and NVLS Tree 0 */
    .base_lat_us = {
        [CS_NCCL_ALGO_TREE] = { 12.0, 12.0, 17.0 },
        [CS_NCCL_ALGO_RING] = { 12.0, 12.0, 17.0 },
        [CS_NCCL_ALGO_COLLNET_DIRECT] = { 12.0, 12.0, 17.0 },
        [CS_NCCL_ALGO_COLLNET_CHAIN] = { 12.0, 12.0, 17.0 },
    },
    /* RCCL's ROCm build reads the hardware latencies from rcclTuningModel[] only; NCCL's
     * llMaxBws / perChMax* tables are compiled out (#if !__HIP_PLATFORM_AMD__). */
    .n_archs = 1,
    /* RCCL 2.21.5 device.h MAXCHANNELS 64 */
    .max_ring_channels = 32,
    .nvls_channels = { 16, 16, 16 },
    .rccl_models = rccl_2_21_models,
};

/* RCCL 2.26 (ROCm/rccl 9e22c79d) tuning.cc rcclTuningModel[]: the entries collsim selects
 * (0: no machine model matched; 5: gfx942 on its machine models; 6: gfx950); the others tune
 * MI100/MI250 machine models collsim does not match and are left out (present FALSE). */
static const CsRcclTuningModel rccl_2_26_models[CS_RCCL_N_TUNING_MODELS] = {
    /* 9e22c79d tuning.cc tuning_model_0 (as in 2.21.5 but for PAT, which RCCL leaves off:
     * NCCL_PAT_ENABLE defaults to 0) */
    [0] = {
        .hw_lat_us = {
            [CS_NCCL_HW_NVLINK] = {
                [CS_NCCL_ALGO_TREE] = { 0.8, 1.4, 2.5 },
                [CS_NCCL_ALGO_RING] = { 0.8, 2.2, 3.6 },
                [CS_NCCL_ALGO_COLLNET_DIRECT] = { 0.0, 0.0, 0.8 },
                [CS_NCCL_ALGO_COLLNET_CHAIN] = { 0.0, 0.0, 1.4 },
            },
            [CS_NCCL_HW_PCI] = {
                [CS_NCCL_ALGO_TREE] = { 2.2, 2.2, 5.7 },
                [CS_NCCL_ALGO_RING] = { 2.2, 2.2, 5.7 },
                [CS_NCCL_ALGO_COLLNET_DIRECT] = { 0.0, 0.0, 5.7 },
                [CS_NCCL_ALGO_COLLNET_CHAIN] = { 0.0, 0.0, 5.7 },
            },
            [CS_NCCL_HW_NET] = {
                [CS_NCCL_ALGO_TREE] = { 11.8, 18.2, 20.8 },
                [CS_NCCL_ALGO_RING] = { 9.5, 19.8, 15.1 },
                [CS_NCCL_ALGO_COLLNET_DIRECT] = { 0.0, 0.0, 11.8 },
                [CS_NCCL_ALGO_COLLNET_CHAIN] = { 0.0, 0.0, 18.2 },
            },
        },
        .bw_ratio = {
            {
                [CS_NCCL_ALGO_TREE] = { 0.04, 0.22, 0.91 },
                [CS_NCCL_ALGO_RING] = { 0.04, 0.34, 1.0 },
                [CS_NCCL_ALGO_COLLNET_DIRECT] = { 0.0, 0.0, 1.0 },
                [CS_NCCL_ALGO_COLLNET_CHAIN] = { 0.0, 0.0, 1.0 },
            },
            {
                [CS_NCCL_ALGO_TREE] = { 0.04, 0.22, 0.95 },
                [CS_NCCL_ALGO_RING] = { 0.04, 0.34, 1.0 },
                [CS_NCCL_ALGO_COLLNET_DIRECT] = { 0.0, 0.0, 1.0 },
                [CS_NCCL_ALGO_COLLNET_CHAIN] = { 0.0, 0.0, 1.0 },
            },
        },
        .tree_correction = {
            { 0.1, 0.2, 0.1, 0.1, 0.9, 0.3, 0.4, 0.1, 0.2, 0.4, 0.2, 0.1, 0.3, 0.3, 0.2, 0.2, 0.2, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1 },
            { 0.1, 0.3, 1.0, 0.1, 0.5, 1.0, 0.9, 1.0, 1.0, 1.0, 0.3, 0.1, 0.4, 0.5, 0.5, 0.4, 0.4, 0.3, 0.3, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2 },
            { 0.2, 1.0, 0.1, 0.1, 0.7, 0.2, 0.4, 0.1, 0.1, 0.3, 0.4, 0.3, 0.6, 0.8, 1.0, 1.0, 1.0, 1.0, 0.9, 0.8, 0.8, 0.8, 0.8, 0.8, 0.9, 0.9, 0.9 },
        },
        .ring_correction = {
            { 0.1, 0.1, 0.1, 0.1, 0.1, 0.2, 0.4, 0.2, 0.3, 0.5, 0.3, 0.1, 0.5, 0.5, 0.3, 0.2, 0.2, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1 },
            { 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.3, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.8, 0.7, 0.5, 0.4, 0.4, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3 },
            { 1.0, 0.8, 0.2, 1.0, 1.0, 0.3, 1.0, 0.1, 0.1, 0.2, 0.2, 0.1, 0.5, 1.0, 0.8, 0.8, 1.0, 0.9, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0 },
        },
        .present = TRUE,
    },
    /* 9e22c79d tuning.cc tuning_model_5 (gfx942) */
    [5] = {
        .hw_lat_us = {
            [CS_NCCL_HW_NVLINK] = {
                [CS_NCCL_ALGO_TREE] = { 0.9, 0.9, 2.3 },
                [CS_NCCL_ALGO_RING] = { 0.8, 0.8, 2.1 },
                [CS_NCCL_ALGO_COLLNET_DIRECT] = { 0.0, 0.0, 0.9 },
            },
            [CS_NCCL_HW_PCI] = {
                [CS_NCCL_ALGO_TREE] = { 2.2, 2.2, 5.7 },
                [CS_NCCL_ALGO_RING] = { 2.2, 2.2, 5.7 },
                [CS_NCCL_ALGO_COLLNET_DIRECT] = { 0.0, 0.0, 5.7 },
                [CS_NCCL_ALGO_COLLNET_CHAIN] = { 0.0, 0.0, 5.7 },
            },
            [CS_NCCL_HW_NET] = {
                [CS_NCCL_ALGO_TREE] = { 10.5, 10.5, 25.0 },
                [CS_NCCL_ALGO_RING] = { 9.5, 9.5, 320.0 },
                [CS_NCCL_ALGO_COLLNET_DIRECT] = { 0.0, 0.0, 10.5 },
            },
        },
        .bw_ratio = {
            {
                [CS_NCCL_ALGO_TREE] = { 0.06, 0.06, 0.11 },
                [CS_NCCL_ALGO_RING] = { 0.08, 0.08, 1.0 },
                [CS_NCCL_ALGO_COLLNET_DIRECT] = { 0.0, 0.0, 1.0 },
                [CS_NCCL_ALGO_COLLNET_CHAIN] = { 0.0, 0.0, 1.0 },
            },
            {
                [CS_NCCL_ALGO_TREE] = { 0.06, 0.06, 0.59 },
                [CS_NCCL_ALGO_RING] = { 0.08, 0.08, 1.0 },
                [CS_NCCL_ALGO_COLLNET_DIRECT] = { 0.0, 0.0, 1.0 },
                [CS_NCCL_ALGO_COLLNET_CHAIN] = { 0.0, 0.0, 1.0 },
            },
        },
        .tree_correction = {
            { 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 1.0, 1.0, 1.0, 1.0, 1.0, 0.6, 1.0, 0.9, 1.0, 1.0, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1 },
            { 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 1.0, 1.0, 1.0, 1.0, 1.0, 0.6, 1.0, 0.9, 1.0, 1.0, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1 },
            { 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.7, 1.0, 1.0, 1.0, 1.0, 1.0, 0.7, 0.7, 0.5, 0.6, 0.6, 0.6 },
        },
        .ring_correction = {
            { 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 1.0, 0.2, 1.0, 0.4, 0.4, 0.1, 0.2, 0.2, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1 },
            { 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 1.0, 0.2, 1.0, 0.4, 0.4, 0.1, 0.2, 0.2, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1 },
            { 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 1.0, 0.8, 1.0, 1.0, 1.0 },
        },
        /* llProtoRanges: reduce-scatter, all-gather, all-reduce; LL, LL128 {min, max} */
        .ll_ranges = {
            { { 0, 655360 }, { 131072, 3211264 } },
            { { 0, 98304 }, { 98304, 5046272 } },
            { { 0, 1048576 }, { 1048576, 9437184 } },
        },
        .present = TRUE,
    },
    /* 9e22c79d tuning.cc tuning_model_6 (gfx950) */
    [6] = {
        .hw_lat_us = {
            [CS_NCCL_HW_NVLINK] = {
                [CS_NCCL_ALGO_TREE] = { 0.9, 0.9, 2.3 },
                [CS_NCCL_ALGO_RING] = { 0.8, 0.8, 2.1 },
                [CS_NCCL_ALGO_COLLNET_DIRECT] = { 0.0, 0.0, 0.9 },
            },
            [CS_NCCL_HW_PCI] = {
                [CS_NCCL_ALGO_TREE] = { 2.2, 2.2, 5.7 },
                [CS_NCCL_ALGO_RING] = { 2.2, 2.2, 5.7 },
                [CS_NCCL_ALGO_COLLNET_DIRECT] = { 0.0, 0.0, 5.7 },
                [CS_NCCL_ALGO_COLLNET_CHAIN] = { 0.0, 0.0, 5.7 },
            },
            [CS_NCCL_HW_NET] = {
                [CS_NCCL_ALGO_TREE] = { 10.5, 10.5, 25.0 },
                [CS_NCCL_ALGO_RING] = { 9.5, 9.5, 320.0 },
                [CS_NCCL_ALGO_COLLNET_DIRECT] = { 0.0, 0.0, 10.5 },
            },
        },
        .bw_ratio = {
            {
                [CS_NCCL_ALGO_TREE] = { 0.06, 0.06, 0.11 },
                [CS_NCCL_ALGO_RING] = { 0.08, 0.08, 1.0 },
                [CS_NCCL_ALGO_COLLNET_DIRECT] = { 0.0, 0.0, 1.0 },
                [CS_NCCL_ALGO_COLLNET_CHAIN] = { 0.0, 0.0, 1.0 },
            },
            {
                [CS_NCCL_ALGO_TREE] = { 0.06, 0.06, 0.59 },
                [CS_NCCL_ALGO_RING] = { 0.08, 0.08, 1.0 },
                [CS_NCCL_ALGO_COLLNET_DIRECT] = { 0.0, 0.0, 1.0 },
                [CS_NCCL_ALGO_COLLNET_CHAIN] = { 0.0, 0.0, 1.0 },
            },
        },
        .tree_correction = {
            { 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 1.0, 1.0, 1.0, 1.0, 1.0, 0.6, 1.0, 0.9, 1.0, 1.0, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1 },
            { 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 1.0, 1.0, 1.0, 1.0, 1.0, 0.6, 1.0, 0.9, 1.0, 1.0, 1.0, 1.0, 1.0, 2.0, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1 },
            { 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.7, 1.0, 0.1, 0.1, 0.1, 0.9, 0.9, 0.7, 0.8, 0.6, 0.6, 0.6 },
        },
        .ring_correction = {
            { 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 1.0, 0.2, 1.0, 0.4, 0.4, 0.1, 0.2, 0.2, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1 },
            { 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 1.0, 0.2, 1.0, 0.4, 0.4, 0.1, 0.2, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1 },
            { 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 1.0, 0.8, 0.8, 1.0, 1.0 },
        },
        /* llProtoRanges: reduce-scatter, all-gather, all-reduce; LL, LL128 {min, max} */
        .ll_ranges = {
            { { 0, 131071 }, { 131071, 4194304 } },
            { { 0, 7 }, { 7, 8388608 } },
            { { 0, 131071 }, { 131071, 17660227 } },
        },
        .present = TRUE,
    },
};

static const CsNcclConstants rccl_2_26 = {
    .library = "RCCL",
    .version = "2.26",
    .reference = "ROCm/rccl 9e22c79d src/graph/tuning.cc (baseLat, rcclTuningModel[] with "
                 "llProtoRanges), src/graph/rome_models.cc (tuning per machine model, 6 on "
                 "gfx950), src/rccl_wrap.cc (rcclUpdateCollectiveProtocol)",
    .formula = CS_NCCL_FORMULA_RCCL_2_26,
    /* 9e22c79d tuning.cc baseLat: Tree, Ring, CollNetDirect, CollNetChain {12, 12, 17}; NVLS,
     * NVLS Tree 0 (PAT is off: NCCL_PAT_ENABLE defaults to 0 in RCCL) */
    .base_lat_us = {
        [CS_NCCL_ALGO_TREE] = { 12.0, 12.0, 17.0 },
        [CS_NCCL_ALGO_RING] = { 12.0, 12.0, 17.0 },
        [CS_NCCL_ALGO_COLLNET_DIRECT] = { 12.0, 12.0, 17.0 },
        [CS_NCCL_ALGO_COLLNET_CHAIN] = { 12.0, 12.0, 17.0 },
    },
    .n_archs = 1,
    .max_ring_channels = 32,
    .nvls_channels = { 16, 16, 16 },
    .rccl_models = rccl_2_26_models,
};

static const CsNcclConstants *const rccl_sets[] = { &rccl_2_21, &rccl_2_26, NULL };

const CsNcclConstants *const *
cs_rccl_constants_all(void)
{
    return rccl_sets;
}

/**
 * cs_rccl_constants_lookup:
 * The RCCL constant set of a release: "2.21" or "2.21.5". NULL means the newest.
 * Returns: (transfer none) (nullable).
 */
const CsNcclConstants *
cs_rccl_constants_lookup(const char *version, GError **error)
{
    const gsize n = G_N_ELEMENTS(rccl_sets) - 1;

    if (version == NULL || *version == '\0')
        return rccl_sets[n - 1];
    for (gsize i = 0; i < n; i++) {
        int ma, mi, vma, vmi;
        if (sscanf(rccl_sets[i]->version, "%d.%d", &ma, &mi) == 2
            && sscanf(version, "%d.%d", &vma, &vmi) == 2 && ma == vma && mi == vmi)
            return rccl_sets[i];
    }
    g_autoptr(GString) known = g_string_new(NULL);
    for (gsize i = 0; i < n; i++)
        g_string_append_printf(known, "%s%s", i > 0 ? ", " : "", rccl_sets[i]->version);
    g_set_error(error, CS_NCCL_ERROR, CS_NCCL_ERROR_VERSION,
                "no RCCL cost-model constants for version '%s' (known: %s)", version, known->str);
    return NULL;
}

/**
 * cs_rccl_constants_nearest:
 * The RCCL set closest to the release @version by minor release, the older on a tie; NULL or
 * unreadable: the newest.
 * Returns: (transfer none).
 */
const CsNcclConstants *
cs_rccl_constants_nearest(const char *version)
{
    const gsize n = G_N_ELEMENTS(rccl_sets) - 1;
    int major, minor;
    if (version == NULL || sscanf(version, "%d.%d", &major, &minor) != 2)
        return rccl_sets[n - 1];
    const CsNcclConstants *best = rccl_sets[n - 1];
    int best_distance = G_MAXINT;
    for (gsize i = 0; i < n; i++) {
        int ma, mi;
        if (sscanf(rccl_sets[i]->version, "%d.%d", &ma, &mi) != 2)
            continue;
        const int distance = abs((major - ma) * 1000 + (minor - mi));
        if (distance < best_distance) {
            best = rccl_sets[i];
            best_distance = distance;
        }
    }
    return best;
}
