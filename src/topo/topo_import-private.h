// SPDX-License-Identifier: MIT
/* What topo_import.c (the graph, its JSON output, the entry points), topo_import_xml.c (NCCL's
 * topology XML) and topo_import_smi.c (`nvidia-smi topo -m`) share: the graph being built. */
#pragma once

#include "topo/topo_import.h"

G_BEGIN_DECLS

typedef struct {
    CsDeviceKind kind;
    char *busid;      /* lowercase PCI bus id; nullable */
    char *model;      /* nullable */
    char *source;     /* nullable */
    int order;        /* within its kind: CUDA device, NET device, NUMA id; G_MAXINT: none */
    int seq;          /* order of appearance */
    int cpu;          /* the CPU device above it; -1 */
    int sm;           /* GPUs: compute capability; 0 unknown */
    double port_Bps;  /* NICs: port speed; 0 unknown */
    gboolean removed; /* a PCI switch with no GPU or NIC below it */
    char *name;       /* given at output */
} Dev;

typedef struct {
    int src; /* device index */
    int dst; /* device index */
    CsLinkKind kind;
    int count;       /* lanes */
    double lane_Bps; /* bytes/s per lane, per direction */
    char *source;
} Link;

typedef struct {
    const char *origin;
    GArray *devs;           /* Dev */
    GArray *links;          /* Link: one direction each */
    GPtrArray *notes;       /* nullable */
    int nvswitch;           /* the NVSwitch device, -1 */
    GString *about;         /* what the description says beyond the counts */
    GHashTable *link_index; /* "src dst kind lane" -> index in links + 1 */
} Graph;

static inline Dev *
cs_topo_import_dev(Graph *g, int i)
{
    return &g_array_index(g->devs, Dev, i);
}

/* topo_import.c */
/* Adds a device (@model and @source transfer full); returns its index. */
int cs_topo_import_add_dev(Graph *g, CsDeviceKind kind, const char *busid, char *model,
                           char *source);
/* Adds @count lanes of @lane_Bps from @src to @dst (@source transfer full); lanes to the same
 * place with the same kind and rate add up. */
void cs_topo_import_add_link(Graph *g, int src, int dst, CsLinkKind kind, int count,
                             double lane_Bps, char *source);
/* The same both ways (@source copied). */
void cs_topo_import_add_duplex(Graph *g, int a, int b, CsLinkKind kind, int count, double lane_Bps,
                               const char *source);
/* One line for the notes: "ORIGIN:LINE: what" (no line when @line <= 0). */
void cs_topo_import_note(Graph *g, int line, const char *format, ...) G_GNUC_PRINTF(3, 4);

/* topo_import_xml.c: builds @g from NCCL's topology XML @text (@len bytes). */
gboolean cs_topo_import_xml_read(Graph *g, const char *text, gsize len, GError **error);

/* topo_import_smi.c: builds @g from `nvidia-smi topo -m` @text (@len bytes), with the rates
 * and GPU costs of @options. */
gboolean cs_topo_import_smi_read(Graph *g, const char *text, gsize len,
                                 const CsTopoImportOptions *options, GError **error);

G_END_DECLS
