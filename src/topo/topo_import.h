// SPDX-License-Identifier: MIT
/* Importing a machine's topology as collsim sees it: NCCL's topology XML (NCCL_TOPO_DUMP_FILE,
 * NCCL_TOPO_FILE) or `nvidia-smi topo -m` text, turned into an explicit-graph node file that the
 * loader (topo.c) reads and a cluster template names as its "node". */
#pragma once

#include <glib.h>

#include "topo/topo.h"

G_BEGIN_DECLS

/* The largest input read (NCCL's dumps are a few tens of KiB). */
#define CS_TOPO_IMPORT_MAX_BYTES ((gsize)16 << 20)

typedef enum {
    CS_TOPO_IMPORT_AUTO,       /* by content: '<' first -> NCCL XML, else nvidia-smi text */
    CS_TOPO_IMPORT_NCCL_XML,   /* NCCL_TOPO_DUMP_FILE / NCCL_TOPO_FILE XML */
    CS_TOPO_IMPORT_NVIDIA_SMI, /* `nvidia-smi topo -m` */
} CsTopoImportFormat;

/**
 * CsTopoImportOptions:
 * What the input cannot say. Neither format gives a GPU's costs (launch, memory bandwidth), so
 * the caller names them (@gpu, from a topology whose GPUs match). `nvidia-smi topo -m` gives no
 * bandwidths at all: the caller gives the NVLink lane and PCIe rates.
 */
typedef struct {
    const char *name;       /* the topology's name; NULL: the input file's name */
    const char *gpu_model;  /* model of every GPU (nullable) */
    CsGpuSpec gpu;          /* every GPU's costs */
    const char *gpu_source; /* where @gpu comes from (written as the gpu object's source) */
    double nvlink_lane_Bps; /* nvidia-smi: bytes/s per NVLink lane, per direction; 0: none */
    double pcie_Bps;        /* nvidia-smi: bytes/s of every PCIe link, per direction; 0: none */
    double sys_Bps;         /* nvidia-smi: bytes/s between CPU sockets; 0: none */
    gboolean nvswitch;      /* nvidia-smi: NV# counts links to one NVSwitch, not to the peer */
    CsTopoImportFormat format;
} CsTopoImportOptions;

/**
 * CsTopoImportSummary:
 * What an import found, for the caller's one-line report.
 */
typedef struct {
    int n_gpus;
    int n_nics;
    int n_nvlink_links; /* directed GPU links of kind nvlink or nvswitch */
    int n_pcie_links;   /* directed links of kind pcie */
    double nic_Bps_min; /* bytes/s: slowest NIC port the input gives a speed for; 0: none */
    double nic_Bps_max; /* bytes/s: fastest */
    CsTopoImportFormat format;
} CsTopoImportSummary;

/**
 * cs_topo_import_data:
 * Turns @text (@len bytes) into an explicit-graph topology document. @origin names the input
 * in messages. What the input holds that the import leaves out or reads by a documented rule
 * (an unknown element or attribute, a GPU without its NVLinks, a NIC without a speed) is added
 * to @notes (nullable) as one line each, "ORIGIN:LINE: what". @summary (nullable) is filled.
 * Errors are CS_TOPO_ERROR: malformed XML "ORIGIN:LINE:COLUMN: problem" (CS_TOPO_ERROR_PARSE),
 * an input that cannot make a topology (no GPU, a PCI device without its link width)
 * CS_TOPO_ERROR_INVALID.
 * Returns: (transfer full) (nullable): pretty-printed JSON text.
 */
char *cs_topo_import_data(const char *text, gsize len, const char *origin,
                          const CsTopoImportOptions *options, GPtrArray *notes,
                          CsTopoImportSummary *summary, GError **error);

/* The same for the file @path (read up to CS_TOPO_IMPORT_MAX_BYTES; "-" is stdin). */
char *cs_topo_import_file(const char *path, const CsTopoImportOptions *options, GPtrArray *notes,
                          CsTopoImportSummary *summary, GError **error);

G_END_DECLS
