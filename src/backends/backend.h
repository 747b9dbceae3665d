// SPDX-License-Identifier: MIT
/* Real backends (DESIGN §8): the registry of cuda, nccl and mpi with their availability, and
 * what one measurement needs, shared by the three and by `collsim measure`. */
#pragma once

#include <glib.h>

#include "algos/algo.h"
#include "models/protocol.h"
#include "base/op.h"
#include "topo/topo.h"
#include "base/trace.h"

G_BEGIN_DECLS

#define CS_BACKEND_ERROR (cs_backend_error_quark())
GQuark cs_backend_error_quark(void);

typedef enum {
    CS_BACKEND_ERROR_UNAVAILABLE, /* built without it, or no device to run on */
    CS_BACKEND_ERROR_INVALID,     /* arguments this backend cannot run */
    CS_BACKEND_ERROR_RUNTIME,     /* CUDA, NCCL or MPI failed while running */
} CsBackendError;

/**
 * CsMeasureRowFunc:
 * Called after each row is added to @trace (which holds every row so far): `collsim measure`
 * prints the row and saves the trace there, so an interrupted run keeps what it measured.
 */
typedef void (*CsMeasureRowFunc)(const CsTrace *trace, gpointer user_data);

/**
 * CsMeasureArgs:
 * One `collsim measure` run: a collective swept over sizes like nccl-tests (`-b -e -f -i`).
 */
typedef struct {
    CsOp op;
    const char *algo;       /* (nullable) collsim algorithm (cuda, mpi); NCCL_ALGO (nccl) */
    const char *proto_name; /* (nullable) protocol asked for; NULL: Simple / NCCL's choice;
                             * nccl: NCCL_PROTO. Both as NCCL spells them (cs_nccl_env_list) */
    CsProto proto;          /* @proto_name parsed, Simple when NULL */
    gint64 min_bytes;       /* bytes: -b */
    gint64 max_bytes;       /* bytes: -e */
    gint64 step_bytes;      /* bytes: -i, used when @step_factor is 0 */
    double step_factor;     /* -f; 0 means linear steps of @step_bytes */
    int iters;              /* -n: timed iterations per size */
    int warmup;             /* -w: untimed iterations per size */
    CsDtype dtype;          /* -d */
    CsRedop redop;          /* -o */
    int root;               /* -r */
    gboolean check;         /* -c: verify results (#wrong); FALSE prints N/A */
    int n_channels;         /* schedule channels (cuda, mpi) */
    gint64 chunk_bytes;     /* bytes: pipeline chunk, 0 = the protocol's default */
    const int *gpus;        /* (nullable) device indices to use (cuda, nccl) */
    int n_gpus;
    int virtual_ranks;       /* cuda: ranks sharing the GPUs round-robin; 0 = one per GPU */
    const CsTopo *topo;      /* (nullable) node structure for the algorithms */
    const char *command;     /* (nullable) the command line, for the trace header */
    CsMeasureRowFunc on_row; /* (nullable) after each row, in the reporting process */
    gpointer on_row_data;
    gboolean every_rank; /* mpi: every process gets the trace, with rank 0's times (a loop
                          * that decides what to measure next from them stays in step) */
} CsMeasureArgs;

/* Defaults as nccl-tests: -b 32M -e 32M -f 2 -n 20 -w 1, float sum, root 0, check on. */
void cs_measure_args_init(CsMeasureArgs *args, CsOp op);

/* The size column values to run, in order (transfer full): a GArray of gint64. */
GArray *cs_measure_args_sizes(const CsMeasureArgs *args);

/**
 * CsBackendMeasureFunc:
 * Runs @args and returns the trace in @trace (transfer full). In a multi-process run only the
 * reporting process (MPI rank 0) gets a trace; the others get NULL and return TRUE. Wrong
 * elements are reported in the rows' #wrong, not as an error.
 */
typedef gboolean (*CsBackendMeasureFunc)(const CsMeasureArgs *args, CsTrace **trace,
                                         GError **error);

/**
 * CsBackend:
 * One row of the registry. A backend that was built out keeps its row, with @available FALSE
 * and @missing saying which package and build option would bring it.
 */
typedef struct {
    const char *name;             /* --backend spelling */
    const char *summary;          /* one line for --help */
    gboolean available;           /* built in */
    const char *missing;          /* (nullable) why not: package and option to reconfigure */
    CsBackendMeasureFunc measure; /* (nullable) NULL when not built */
} CsBackend;

/* NULL-terminated table (transfer none). */
const CsBackend *const *cs_backend_registry(void);
/* By name; NULL with CS_BACKEND_ERROR_INVALID listing the known names. Built-out backends are
 * found: check @available. */
const CsBackend *cs_backend_lookup(const char *name, GError **error);
/* Runs @args on @backend, or fails with CS_BACKEND_ERROR_UNAVAILABLE and its @missing text. */
gboolean cs_backend_measure(const CsBackend *backend, const CsMeasureArgs *args, CsTrace **trace,
                            GError **error);
/* Whether an MPI launcher started this process as one of several (known before MPI_Init);
 * FALSE in a build without MPI. */
gboolean cs_backend_multi_process(void);
/* FALSE in the processes of a multi-process run other than rank 0, which reports. */
gboolean cs_backend_reporting(void);
/* Releases process-wide state a backend set up (MPI_Finalize when collsim called MPI_Init). */
void cs_backend_shutdown(void);

/* ---- Helpers shared by the backends ---- */

/* An empty trace for @args on @nranks ranks with the headers every backend writes: source,
 * command, backend, collective, ranks, algo/proto, datatype, redop, iterations
 * (transfer full). The backend adds hardware and software headers. */
CsTrace *cs_backend_trace_new(const CsMeasureArgs *args, const char *backend, int nranks);

/* Appends one row: @size for @nranks ranks, times in seconds (NaN prints N/A), wrong element
 * counts (-1 prints N/A). algbw and busbw follow nccl-tests. Then calls @args->on_row. */
void cs_backend_trace_add(CsTrace *trace, const CsMeasureArgs *args, const CsOpSize *size,
                          int nranks, double oop_time_s, gint64 oop_wrong, double ip_time_s,
                          gint64 ip_wrong);

/* The collsim algorithm @args names, for a schedule backend called @backend: NULL with
 * CS_BACKEND_ERROR_INVALID when --algo is missing or unknown. (transfer none) */
const CsAlgo *cs_backend_lookup_algo(const CsMeasureArgs *args, const char *backend,
                                     GError **error);

/* @algo's schedule for one size of @args on @nranks ranks (transfer full), or NULL with the
 * algorithm's error; CS_BACKEND_ERROR_INVALID when @args->topo has another rank count. */
CsSchedule *cs_backend_build_schedule(const CsMeasureArgs *args, const CsAlgo *algo, int nranks,
                                      gint64 size_bytes, GError **error);

/* Sum of #wrong over all rows and both halves (N/A counts 0). */
gint64 cs_backend_trace_wrong(const CsTrace *trace);

G_END_DECLS
