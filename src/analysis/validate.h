// SPDX-License-Identifier: MIT
/* Validation: every row of a measured nccl-tests trace against the engine's prediction for the
 * same collective, size, ranks and (when the trace forced them) algorithm and protocol. */
#pragma once

#include <glib.h>

#include "predict/predict.h"
#include "predict/validated.h"
#include "topo/topo.h"
#include "base/trace.h"

G_BEGIN_DECLS

/* Size regimes of the per-trace summary, the regimes select's default margins are per. */
#define CS_VALIDATE_LATENCY_MAX_BYTES CS_REGIME_LATENCY_MAX_BYTES /* < 64 KiB */
#define CS_VALIDATE_BANDWIDTH_MIN_BYTES CS_REGIME_KNEE_MAX_BYTES  /* >= 64 MiB */

/**
 * CsValidateRow:
 * One measured row beside its prediction. Errors are signed and relative:
 * (predicted - measured) / measured.
 */
typedef struct {
    gint64 size_bytes;           /* bytes: the trace's size column */
    int line;                    /* line in the trace */
    double measured_us;          /* us: out-of-place time */
    double predicted_us;         /* us */
    double measured_busbw_GBps;  /* GB/s: recomputed from size and time, as nccl-tests does */
    double predicted_busbw_GBps; /* GB/s */
    double time_error;           /* relative, signed */
    double busbw_error;          /* relative, signed */
    const char *algo;            /* predicted algorithm (static string) */
    const char *proto;           /* predicted protocol (static string) */
    gboolean nccl_picked;        /* NCCL's model chose it (else forced, or collsim's fastest) */
    /* NCCL's own cost model for the same row (cs_validate_trace_full() with a spec); NaN and
     * NULL when not asked for or when it has nothing usable for the row. */
    double nccl_us;          /* us: lat + nBytes / bw, NCCL's pick under the trace's lists */
    double nccl_time_error;  /* relative, signed */
    double nccl_busbw_error; /* relative, signed */
    const char *nccl_algo;   /* (nullable) NCCL_ALGO spelling (static string) */
    const char *nccl_proto;  /* (nullable) (static string) */
} CsValidateRow;

/**
 * CsValidateSummary:
 * Geometric means of |busbw error| over a set of rows; NaN when the set is empty.
 */
typedef struct {
    int n_rows;
    double geomean_abs;    /* relative */
    double max_abs;        /* relative */
    gint64 max_size_bytes; /* bytes: where the max is */
} CsValidateSummary;

/**
 * CsValidateReport:
 * One trace held against the engine.
 */
typedef struct {
    char *origin; /* trace file */
    CsOp op;
    int nranks;
    char *forced_algo;           /* (nullable) algorithm the trace forced, collsim's name */
    char *forced_proto;          /* (nullable) */
    char *picker;                /* who chose what was not forced, in words */
    gboolean nccl_picks;         /* NCCL's model chose what was not forced */
    char *inferred;              /* (nullable) what of op and ranks the trace did not state */
    char *gpu_mismatch;          /* (nullable) the trace's GPU is of another generation */
    char *repeated_sizes;        /* (nullable) rows that measure a size again, in words */
    char *placement;             /* where the trace's ranks sit on the topology, in words */
    gboolean placement_said;     /* worth printing: fewer ranks than the topology, or moved */
    int *topo_ranks;             /* nranks entries: the topology rank each trace rank ran on */
    const char *machine_class;   /* cs_validated_class() of the ranks it ran on (static) */
    GPtrArray *warnings;         /* char *: what a reader must know (unknown GPU models) */
    GPtrArray *unpredicted;      /* char *: rows collsim could not predict, each with why */
    char *nccl_model;            /* (nullable) "NCCL 2.28's cost model" when held beside */
    char *nccl_note;             /* (nullable) why it has no rows (no model for the op) */
    GArray *rows;                /* CsValidateRow */
    CsValidateSummary all;       /* every row */
    CsValidateSummary latency;   /* size < 64 KiB */
    CsValidateSummary knee;      /* 64 KiB <= size < 64 MiB */
    CsValidateSummary bandwidth; /* size >= 64 MiB */
    /* The same four for NCCL's cost model (n_rows 0 when not asked for). */
    CsValidateSummary nccl_all;
    CsValidateSummary nccl_latency;
    CsValidateSummary nccl_knee;
    CsValidateSummary nccl_bandwidth;
} CsValidateReport;

/**
 * CsValidateCrossover:
 * For two traces of the same collective with different forced algorithms: the smallest
 * measured size from which the second is faster than the first for good, and the same for
 * the predictions; -1 where one never overtakes the other.
 */
typedef struct {
    const CsValidateReport *a;
    const CsValidateReport *b;
    gint64 measured_bytes;
    gint64 predicted_bytes;
} CsValidateCrossover;

/* Validates @trace against @topo. @options carries the engine settings; the trace's own
 * headers (ranks, -g from its command, forced NCCL_ALGO/NCCL_PROTO, datatype) override the
 * matching fields. Returns: (transfer full) (nullable). */
CsValidateReport *cs_validate_trace(const CsTopo *topo, const CsTrace *trace,
                                    const CsPredictOptions *options, GError **error);
/* How cs_validate_trace_full() runs a trace. */
typedef enum {
    CS_VALIDATE_PLACED = 0,           /* on the GPUs the trace's hosts used (default) */
    CS_VALIDATE_FIRST_RANKS = 1 << 0, /* on the topology's first ranks, as calibrate fits */
} CsValidateFlags;

/* Told, on the calling thread, of each row predicted (in whatever order the threads end
 * them), with the row's size; for progress lines. */
typedef void (*CsValidateRowDone)(gint64 size_bytes, gpointer data);

/* cs_validate_trace() with @flags, and with @nccl_spec ("nccl": the release nearest the
 * trace's; "nccl:VERSION") NCCL's own cost model held against the same rows; @done (nullable)
 * is told of each of the cs_validate_trace_n_rows() rows as it is predicted. (transfer full)
 * (nullable) */
CsValidateReport *cs_validate_trace_full(const CsTopo *topo, const CsTrace *trace,
                                         const CsPredictOptions *options, const char *nccl_spec,
                                         CsValidateFlags flags, CsValidateRowDone done,
                                         gpointer done_data, GError **error);
/* The rows cs_validate_trace_full() predicts: those with a positive size and a measured time
 * (nccl-tests prints size-0 rows, and N/A for a time it did not take). */
guint cs_validate_trace_n_rows(const CsTrace *trace);

/* Where @trace's @nranks ranks ran on @topo: @map[r] gets the topology rank of trace rank r.
 * The trace's hosts (its "#  Rank N ... on HOST device D" lines, else a `nodes` header that
 * divides the ranks) become the topology's first nodes, host i on node i, each rank on its
 * device's GPU of the node (or in turn); without hosts, or where they do not fit the nodes,
 * the topology's first ranks. Returns the placement in words. (transfer full) */
char *cs_validate_place_ranks(const CsTopo *topo, const CsTrace *trace, int nranks, int *map);
void cs_validate_report_free(CsValidateReport *report);
/* Rows NCCL was to pick where collsim's fastest served instead (NCCL allowed nothing collsim
 * simulates). */
guint cs_validate_report_fastest_rows(const CsValidateReport *report);

/* Crossovers between every pair of reports of the same collective and ranks that forced
 * different algorithms (or one forced, one default). (transfer full) GArray of
 * CsValidateCrossover. */
GArray *cs_validate_crossovers(CsValidateReport *const *reports, int n_reports);

/* Reads NCCL_ALGO/NCCL_PROTO from a trace's `algo/proto`, `env` and `command` headers and
 * maps them to collsim's names ("Ring" -> "ring", "Tree" -> "tree", "NVLS" -> "nvls"); sets
 * NULL when not forced or not representable. Reads -g from the command. */
void cs_validate_trace_settings(const CsTrace *trace, char **algo, char **proto,
                                int *gpus_per_thread);

/* NCCL's model for @trace's rows when NCCL picks them under @pick (see CsPick), or NULL with
 * no error when collsim's fastest choice applies. Returns: (transfer full) (nullable). */
CsNcclModel *cs_validate_nccl_model(const CsTopo *topo, const CsTrace *trace, CsOp op, int nranks,
                                    CsPick pick, GError **error);

/* What NCCL_ALGO / NCCL_PROTO allowed the run (1 << CsNcclAlgo, 1 << CsProto; 0: not set);
 * lists and '^' exclusions as NCCL reads them. */
void cs_validate_trace_masks(const CsTrace *trace, guint *algo_mask, guint *proto_mask);

/**
 * CsTraceSetup:
 * How a trace's rows are predicted (validate and calibrate): the options with the trace's
 * ranks, -g, channels, NCCL model and NCCL_ALGO / NCCL_PROTO lists, and what it forced.
 */
typedef struct {
    char *algo_name;          /* (nullable) forced algorithm, collsim's name */
    char *proto_name;         /* (nullable) forced protocol */
    const CsAlgo *algo;       /* (nullable) */
    int proto;                /* forced CsProto, or -1 */
    CsNcclModel *nccl;        /* (nullable) owned: NCCL's model when it picks the rest */
    char *picker;             /* who picks what was not forced, in words */
    CsPredictOptions options; /* for the trace's rows (dtype, redop, root per row) */
} CsTraceSetup;

gboolean cs_trace_setup_init(CsTraceSetup *setup, const CsTopo *topo, const CsTrace *trace, CsOp op,
                             int nranks, const CsPredictOptions *base, GError **error);
void cs_trace_setup_clear(CsTraceSetup *setup);
/* One row: what was forced, NCCL's pick or the fastest for the rest, with @options (the
 * setup's, with the row's datatype, operator and root). */
gboolean cs_trace_setup_predict(const CsTraceSetup *setup, const CsTopo *topo, CsOp op,
                                gint64 size_bytes, const CsPredictOptions *options,
                                CsPrediction *out, GError **error);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(CsTraceSetup, cs_trace_setup_clear)

/* The channel count a collsim backend trace ran its schedule with (its `channels` header), or
 * 0 when the trace does not say (then predictions choose); -1 with a CS_TRACE_ERROR_MALFORMED
 * naming the file when the header is no count of 1 to 64. */
int cs_validate_trace_channels(const CsTrace *trace, GError **error);

/* The busbw nccl-tests prints for @size_bytes in @time_us. */
double cs_validate_busbw(CsOp op, int nranks, gint64 size_bytes, double time_us);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(CsValidateReport, cs_validate_report_free)

G_END_DECLS
