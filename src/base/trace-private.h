// SPDX-License-Identifier: MIT
/* What trace.c, trace_read.c and trace_write.c share: the trace itself. */
#pragma once

#include "base/trace.h"

G_BEGIN_DECLS

struct _CsTrace {
    char *origin;       /* file name or caller's label, for messages */
    GPtrArray *keys;    /* char *: header keys in order */
    GHashTable *values; /* key -> value (both owned by keys / here) */
    GArray *rows;       /* CsTraceRow */
    CsTraceLayout layout;
    gboolean op_set; /* @op came from cs_trace_new() */
    CsOp op;
    int nranks;            /* from cs_trace_new(), 0 if unknown */
    char *program;         /* "all_reduce_perf" from "# Collective test starting:" */
    int max_rank_line;     /* highest N of the "#  Rank N Group ..." lines, -1 if none */
    char *library;         /* "NCCL" or "RCCL" as the output itself says, NULL if it does not */
    char *library_version; /* "2.19.3", NULL if not printed */
    char *device_model;    /* "NVIDIA H100 80GB HBM3" from the first "#  Rank N ... device" line */
    int n_threads;         /* "# nThread 1 nGpus 4 ...": threads of one process, 0 if absent */
    int n_gpus;            /* and the GPUs each thread drove (-g), 0 if absent */
    gboolean root_column;  /* some block of the table printed a root column */
    GArray *rank_places;   /* RankPlace: "#  Rank N ... on HOST device D" lines, file order */
};

/* Where nccl-tests says one rank ran. */
typedef struct {
    int rank;
    char *host;
    int device; /* CUDA device index on the host, -1 if not printed */
} RankPlace;

/* An empty trace read from @origin (nullable: a label for messages). */
CsTrace *cs_trace_alloc(const char *origin);

G_END_DECLS
