// SPDX-License-Identifier: MIT
/* NCCL's three protocols as parameter sets (DESIGN §5, §9): what share of a link's bytes is
 * data, the per-hop latency NCCL's tuning model charges, buffer and slot sizes, and where each
 * protocol may run.
 *
 * Sources (facts, read from NVIDIA/nccl 2.28):
 *   src/graph/tuning.cc  hwLat[NCCL_HW_NVLINK|PCI|NET][NCCL_ALGO_RING][NCCL_PROTO_*] and the
 *                        LL128 enable rule in ncclTopoTuneModel;
 *   src/include/device.h NCCL_STEPS, NCCL_LL_LINES_PER_THREAD, NCCL_LL128_* (buffer sizes);
 *   src/device/prims_ll.h, prims_ll128.h: LL stores 8 data bytes + 8 flag bytes per 16-byte
 *                        line, LL128 120 data bytes per 128-byte line. */
#include "models/protocol.h"

#include <string.h>

#include "base/op.h"

#define US 1e-6

static const CsProtoInfo protos[CS_N_PROTOS] = {
    [CS_PROTO_LL] = {
        .name = "LL",
        /* prims_ll.h: each 16-byte line carries 8 bytes of data and 8 of flags. */
        .data_fraction = 0.5,
        .hop_latency_s = {
            /* NCCL 2.28 tuning.cc hwLat: Ring/LL NVLink 0.6 us, PCI 1.0 us, NET 2.7 us */
            [CS_LINK_CLASS_NVLINK] = 0.6 * US,
            [CS_LINK_CLASS_PCI] = 1.0 * US,
            [CS_LINK_CLASS_NET] = 2.7 * US,
        },
        /* NCCL_LL_BUFF_SIZE: 512 KiB raw, half of it flags. */
        .buffer_bytes = 524288,
        /* One of NCCL_STEPS = 8 slots: 64 KiB raw = 32 KiB of data. */
        .slot_data_bytes = 32768,
        .needs_nvlink = FALSE,
        .reference = "NCCL 2.28 src/device/prims_ll.h (8 data + 8 flag bytes per line); "
                     "src/graph/tuning.cc hwLat Ring/LL",
    },
    [CS_PROTO_LL128] = {
        .name = "LL128",
        /* prims_ll128.h: 120 data bytes in each 128-byte line (one 8-byte flag). */
        .data_fraction = 120.0 / 128.0,
        .hop_latency_s = {
            /* NCCL 2.28 tuning.cc hwLat: Ring/LL128 NVLink 1.9 us, PCI 2.5 us, NET 4.0 us */
            [CS_LINK_CLASS_NVLINK] = 1.9 * US,
            [CS_LINK_CLASS_PCI] = 2.5 * US,
            [CS_LINK_CLASS_NET] = 4.0 * US,
        },
        /* NCCL_LL128_ELEMS_PER_THREAD 120 x NCCL_LL128_MAX_NTHREADS 640 x NCCL_STEPS 8 x
         * 8 bytes = 4,915,200 B raw. */
        .buffer_bytes = 4915200,
        /* One slot: 614,400 B raw, 120/128 of it data = 576,000 B. */
        .slot_data_bytes = 576000,
        .needs_nvlink = TRUE,
        .reference = "NCCL 2.28 src/device/prims_ll128.h, src/include/device.h "
                     "(NCCL_LL128_*); src/graph/tuning.cc hwLat Ring/LL128",
    },
    [CS_PROTO_SIMPLE] = {
        .name = "Simple",
        .data_fraction = 1.0,
        .hop_latency_s = {
            /* NCCL 2.28 tuning.cc hwLat: Ring/Simple NVLink 3.4 us, PCI 5.7 us, NET 14 us */
            [CS_LINK_CLASS_NVLINK] = 3.4 * US,
            [CS_LINK_CLASS_PCI] = 5.7 * US,
            [CS_LINK_CLASS_NET] = 14.0 * US,
        },
        /* NCCL_BUFFSIZE default 4 MiB. */
        .buffer_bytes = 4194304,
        /* One of the 8 slots: 512 KiB (NCCL's ring all-reduce moves chunks of 4 slots in
         * slices of 2; we pipeline slot by slot: same bytes in flight, finer steps). */
        .slot_data_bytes = 524288,
        .needs_nvlink = FALSE,
        .reference = "NCCL 2.28 src/include/device.h (NCCL_STEPS, default NCCL_BUFFSIZE); "
                     "src/graph/tuning.cc hwLat Ring/Simple",
    },
};

/* (transfer none) */
const CsProtoInfo *
cs_proto_info(CsProto proto)
{
    g_return_val_if_fail(proto >= 0 && proto < CS_N_PROTOS, NULL);
    return &protos[proto];
}

/* "LL", "LL128", "Simple" (transfer none). */
const char *
cs_proto_name(CsProto proto)
{
    g_return_val_if_fail(proto >= 0 && proto < CS_N_PROTOS, "?");
    return protos[proto].name;
}

/**
 * cs_proto_from_name:
 * Parses a protocol name, case-insensitively, as NCCL_PROTO spells them ("ll", "LL128",
 * "simple").
 * Returns: FALSE with CS_OP_ERROR_UNKNOWN listing the names if @name is none of them.
 */
gboolean
cs_proto_from_name(const char *name, CsProto *proto, GError **error)
{
    g_return_val_if_fail(name != NULL && proto != NULL, FALSE);
    for (int p = 0; p < CS_N_PROTOS; p++)
        if (g_ascii_strcasecmp(name, protos[p].name) == 0) {
            *proto = (CsProto)p;
            return TRUE;
        }
    g_set_error(error, CS_OP_ERROR, CS_OP_ERROR_UNKNOWN,
                "unknown protocol \"%s\" (expected LL, LL128 or Simple)", name);
    return FALSE;
}

/**
 * cs_proto_legal:
 * Whether @proto may carry traffic over a path of @link_class. LL128 follows NCCL 2.28's
 * default (tuning.cc, ncclTopoTuneModel): it is enabled only where GPUs of a node talk over
 * NVLink, and between nodes through the network (allowed there since Hopper); a PCIe path
 * between GPUs rules it out ("may cause silent data corruption" on untested paths).
 * Returns: TRUE, or FALSE with @why (nullable) set to a static string.
 */
gboolean
cs_proto_legal(CsProto proto, CsLinkClass link_class, const char **why)
{
    g_return_val_if_fail(proto >= 0 && proto < CS_N_PROTOS, FALSE);
    if (protos[proto].needs_nvlink && link_class == CS_LINK_CLASS_PCI) {
        if (why != NULL)
            *why = "LL128 needs NVLink between the GPUs of a node (NCCL disables it over PCIe)";
        return FALSE;
    }
    return TRUE;
}

/**
 * cs_proto_legal_on_device:
 * Whether @proto can run on ranks that are devices of @kind. LL and LL128 are NCCL's GPU
 * protocols: the receiver polls flags stored with the data in 8-byte (LL) or 128-byte (LL128)
 * lines by GPU threads (NCCL 2.2x src/device/prims_ll.h, prims_ll128.h). Ranks that are CPUs
 * (MPI over shared memory or sockets) move whole buffers: only Simple applies to them.
 * Returns: TRUE, or FALSE with @why (nullable) set to a static string.
 */
gboolean
cs_proto_legal_on_device(CsProto proto, CsDeviceKind kind, const char **why)
{
    g_return_val_if_fail(proto >= 0 && proto < CS_N_PROTOS, FALSE);
    if (kind == CS_DEVICE_CPU && proto != CS_PROTO_SIMPLE) {
        if (why != NULL)
            *why = "LL and LL128 are GPU protocols (flag-based fine-grained stores by GPU "
                   "threads); CPU ranks use Simple only";
        return FALSE;
    }
    return TRUE;
}
