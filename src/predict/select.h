// SPDX-License-Identifier: MIT
/* Selection: the best (algorithm, protocol, channels) per message size for each collective,
 * the exact sizes where the best choice changes (crossovers, found by bisection on the
 * predictions, to the datatype's granularity), and the tuning tables made from them: JSON,
 * NCCL_ALGO / NCCL_PROTO lines, the CSVs of NCCL's example tuner, and the comparison with
 * NCCL's own cost model. */
#pragma once

#include <glib.h>

#include "models/nccl.h"
#include "predict/predict.h"
#include "predict/validated.h"

G_BEGIN_DECLS

#define CS_SELECT_ERROR (cs_select_error_quark())
GQuark cs_select_error_quark(void);

typedef enum {
    CS_SELECT_ERROR_NOTHING,  /* no candidate serves a collective on this machine */
    CS_SELECT_ERROR_OPTIONS,  /* inconsistent options (sizes, ranks) */
    CS_SELECT_ERROR_UNSERVED, /* a grid size no candidate runs (times beyond the clock) */
} CsSelectError;

/**
 * CsSelectOptions:
 * What to select over. cs_select_options_init() gives 8 B ... 16 GiB by doubling, every
 * collective, collsim's engine.
 */
typedef struct {
    CsOpMask ops;
    gint64 min_bytes;          /* bytes: first grid size */
    gint64 max_bytes;          /* bytes: last grid size */
    gint64 step_factor;        /* grid: x factor (>= 2) */
    CsPredictOptions predict;  /* datatype, ranks, engine network model, forced channels */
    const char *nccl_spec;     /* NULL: collsim's engine; "nccl[:VERSION]": NCCL's model */
    gboolean nccl_only;        /* only algorithms NCCL implements (NCCL emitters force it) */
    gboolean exact;            /* simulate every size (no extrapolation past the cap) */
    gint64 max_events;         /* extrapolation cap: events of one simulation (0 = default) */
    gint64 interpolate_events; /* a crossover search between two grid sizes that each replayed
                                * more than this many events reads the sizes between them off
                                * the line joining them (0 = default, 2,000,000; < 0: never) */
    double min_gain_pct;       /* percent: 0 = the fastest per size; > 0 = NCCL's own pick
                                * unless the fastest gains more than this over it, and a range's
                                * choice kept while within this of the fastest (hysteresis) */
    gboolean validated_margin; /* instead of min_gain_pct, per size regime the larger of 5% and
                                * the model's validated error for this machine class
                                * (cs_validated_margin_pct()): collsim select's default */
    int jobs;                  /* threads the candidates are spread over (<= 1: none); the
                                * selection is the same for every count */
    /* (nullable) told, on the calling thread, of each step of @op's selection: each
     * candidate's grid sizes predicted (in whatever order threads end them; @label
     * "ring/LL"), then each interval between grid sizes searched for crossovers, per table
     * (@label "crossovers 64 KiB .. 128 KiB"); @done of @total steps */
    void (*progress)(CsOp op, guint done, guint total, const char *label, gpointer data);
    gpointer progress_data;
} CsSelectOptions;

void cs_select_options_init(CsSelectOptions *options);

/**
 * CsSelectChoice:
 * One candidate with the channel count it ran with.
 */
typedef struct {
    const CsAlgo *algo; /* (transfer none) collsim's algorithm; NULL under NCCL's model */
    int nccl_algo;      /* CsNcclAlgo, or -1: not an algorithm NCCL has */
    CsProto proto;
    int n_channels;
} CsSelectChoice;

/* "ring/LL128/16ch"-style label (transfer full). */
char *cs_select_choice_label(const CsSelectChoice *choice);
/* The algorithm's collsim name, or NCCL's name under NCCL's model (transfer none). */
const char *cs_select_choice_algo_name(const CsSelectChoice *choice);
gboolean cs_select_choice_equal(const CsSelectChoice *a, const CsSelectChoice *b);

/**
 * CsSelectPoint:
 * The best choice at one grid size.
 */
typedef struct {
    gint64 size_bytes; /* bytes: nccl-tests' size column (NCCL's nBytes) */
    CsSelectChoice best;
    double time_us;
    double algbw_GBps;
    double busbw_GBps;
    gboolean extrapolated; /* the time is extrapolated past the simulation cap */
    gboolean bracketed;    /* the time is a bracket's upper end (CsPrediction.bracketed) */
} CsSelectPoint;

/**
 * CsSelectCrossover:
 * The best choice is @from at @below_bytes and @to at @size_bytes, the next size the
 * collective can have (@size_bytes - @below_bytes = the granularity).
 */
typedef struct {
    gint64 size_bytes;
    gint64 below_bytes;
    CsSelectChoice from;
    CsSelectChoice to;
    double from_time_us;       /* @from at @size_bytes (NAN: it cannot run there) */
    double to_time_us;         /* @to at @size_bytes (NAN: as above) */
    double from_time_below_us; /* @from at @below_bytes (NAN: as above) */
    double to_time_below_us;   /* @to at @below_bytes (NAN: as above) */
    gboolean interpolated;     /* a candidate's time at either size (these four, or one the
                                * argmin weighed) read off the line between two grid sizes */
} CsSelectCrossover;

/**
 * CsSelectRange:
 * [min_bytes, max_bytes] served by one choice; max_bytes -1 = no upper bound.
 */
typedef struct {
    gint64 min_bytes;
    gint64 max_bytes;
    CsSelectChoice choice;
    double gain_pct;       /* percent: predicted gain of @choice over NCCL's own pick, the
                            * smallest over the range's grid sizes (at min_bytes when none lies
                            * inside); 0 where @choice is NCCL's pick; NAN where NCCL's model
                            * picks nothing */
    double margin_pct;     /* percent: the largest margin over the size regimes the range
                            * overlaps up to the grid's end (0 without a margin) */
    gboolean validated;    /* every regime it overlaps has validated traces of this machine
                            * class (cs_validated_error()) */
    gboolean min_measured; /* min_bytes is a measured crossover, moved there by
                            * cs_selection_move_boundaries(); FALSE: predicted */
} CsSelectRange;

/**
 * CsSelectTable:
 * One collective's selection. The ranges cover 0 ... unbounded with no gap or overlap.
 */
typedef struct {
    CsOp op;
    gboolean nccl_only; /* restricted to algorithms NCCL implements */
    gint64 granularity; /* bytes between the sizes the collective can have */
    int n_candidates;   /* algorithm x protocol pairs considered */
    GArray *points;     /* CsSelectPoint, one per grid size */
    GArray *crossovers; /* CsSelectCrossover, by size */
    GArray *ranges;     /* CsSelectRange, by size */
    char *note;         /* (nullable) why the table is empty or partial */
} CsSelectTable;

/**
 * CsSelectCompareRow:
 * One size of `select --compare nccl`.
 */
typedef struct {
    gint64 size_bytes;
    CsNcclPrediction nccl;          /* NCCL's pick and NCCL's own predicted time */
    gboolean nccl_simulated;        /* collsim simulated NCCL's pick (FALSE: CollNet, refused) */
    CsSelectChoice nccl_as_collsim; /* NCCL's pick as collsim ran it */
    double nccl_pick_us;            /* collsim's engine on NCCL's pick */
    CsSelectChoice best;            /* collsim's own pick */
    double best_us;
    double loss_us;  /* nccl_pick_us - best_us (>= 0) */
    double loss_pct; /* loss / best */
} CsSelectCompareRow;

typedef struct _CsSelection CsSelection;

/* Runs the selection for every collective of @options->ops that the candidates serve.
 * Returns: (transfer full) (nullable). */
CsSelection *cs_select_run(const CsTopo *topo, const CsSelectOptions *options, GError **error);
/* The same, plus, per size, NCCL's pick under @nccl_spec against collsim's engine. */
CsSelection *cs_select_compare(const CsTopo *topo, const CsSelectOptions *options,
                               const char *nccl_spec, GError **error);
void cs_selection_free(CsSelection *selection);

/**
 * CsSelectShape:
 * A communicator's shape, as NCCL's tuner ABI hands it to a plugin at init (nRanks, nNodes).
 */
typedef struct {
    int nranks; /* ranks; 0 = every rank of the nodes (or of the machine) */
    int nnodes; /* nodes; 0 = the nodes the first nranks ranks fill, in rank order */
} CsSelectShape;

/* The topology of just the ranks a communicator of @shape uses on @topo (@topo itself when it
 * is all of it); @resolved (nullable) gets the counts. Returns: (transfer full) (nullable). */
CsTopo *cs_select_shape_topo(const CsTopo *topo, const CsSelectShape *shape,
                             CsSelectShape *resolved, GError **error);

guint cs_selection_n_tables(const CsSelection *selection);
/* (transfer none) */
const CsSelectTable *cs_selection_table(const CsSelection *selection, guint index);
/* The table restricted to NCCL's algorithms for @op, NULL if NCCL has no model of @op.
 * Equal to the full table under NCCL's model or with nccl_only. (transfer none) */
const CsSelectTable *cs_selection_nccl_table(const CsSelection *selection, CsOp op);
/* Compare rows of @op (CsSelectCompareRow), NULL without --compare. (transfer none) */
const GArray *cs_selection_compare_rows(const CsSelection *selection, CsOp op);

/* The margin in @regime, percent (0: the plain fastest), and whether the model is validated
 * there for this machine class (@validated nullable). */
double cs_selection_margin_pct(const CsSelection *selection, CsRegime regime, gboolean *validated);
/* The machine class the validated margins are of (cs_validated_class()). (transfer none) */
const char *cs_selection_machine_class(const CsSelection *selection);
/* The NCCL release whose cost model gives NCCL's picks ("2.28"). (transfer none) */
const char *cs_selection_nccl_version(const CsSelection *selection);
/* NCCL's own pick for @op (its tuning model, cs_nccl_model_pick()) from the first to the last
 * grid size, as CsSelectRange in size order: choice.algo NULL, choice.nccl_algo and proto
 * NCCL's, n_channels its graph's; boundaries exact to the collective's granularity (found by
 * bisection between grid sizes whose picks differ); gain_pct 0. A stretch where NCCL's model
 * picks nothing has nccl_algo -1. NULL when NCCL has no model of @op. (transfer full) */
GArray *cs_selection_nccl_picks(const CsSelection *selection, CsOp op);

/* ---- Measured boundaries ---- */

/**
 * CsSelectBoundary:
 * A crossover of @op predicted at @predicted_bytes (the first size of @to, as
 * CsSelectCrossover.size_bytes) and the size @bytes it is to move to.
 */
typedef struct {
    CsOp op;
    CsSelectChoice from;
    CsSelectChoice to;
    gint64 predicted_bytes; /* bytes: the predicted first size of @to */
    gint64 bytes;           /* bytes: the first size of @to to use instead; <= 0: keep the
                             * predicted one (the move only looks the boundary up) */
} CsSelectBoundary;

/**
 * CsSelectMoved:
 * What cs_selection_move_boundaries() did with one boundary.
 */
typedef struct {
    gboolean found;   /* a table of the selection has this boundary (same pair, same size) */
    gboolean in_nccl; /* the NCCL table has it: the NCCL emitters show it */
    gboolean kept;    /* @bytes lies at or past a neighbouring boundary in some table: the
                       * predicted size is kept there */
} CsSelectMoved;

/* Moves each boundary of @moves in every table of @selection (collsim's and NCCL's) whose
 * ranges change from @from to @to (algorithm and protocol) at @predicted_bytes: the range
 * below ends at @bytes - 1 and the one above starts at @bytes, marked min_measured. A move
 * that would reach or pass a neighbouring boundary (as moved) is not made, so the ranges stay
 * contiguous and in order. The crossovers, points and gains stay the prediction's. @results
 * (array length=n) says per move what was done. */
void cs_selection_move_boundaries(CsSelection *selection, const CsSelectBoundary *moves, guint n,
                                  CsSelectMoved *results);

/* Adds a line every emitter but the measurement CSV prints near its head: a comment line in
 * the table, env and tuner CSV (wrapped to stay under the example tuner's 256-byte line
 * buffer), an entry of "notes" in JSON. Control characters in @line become '?'. */
void cs_selection_add_note(CsSelection *selection, const char *line);

/* ---- Emitters (each returns the whole text, transfer full) ---- */

/* The human table: per collective, the best choice per size and the crossovers. */
char *cs_selection_to_table(const CsSelection *selection);
/* The JSON table (topology, collsim version, points, crossovers, ranges, nccl_ranges): the
 * input of libnccl-tuner-collsim.so (COLLSIM_TUNER_FILE). */
char *cs_selection_to_json(const CsSelection *selection);
/* NCCL_ALGO / NCCL_PROTO with NCCL's per-collective list syntax, as shell lines. */
char *cs_selection_to_env(const CsSelection *selection);
/* NCCL's example tuner CSV (NCCL_TUNER_CONFIG_FILE):
 * collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks,numPipeOps,
 * regBuff; ranges contiguous from 0 to 2^32-1, or open-ended (2^64-1) past 4 GiB. */
char *cs_selection_to_nccl_tuner_csv(const CsSelection *selection);
/* The measurement CSV NCCL's ext-tuner optimize_config.py reads:
 * collective,size_bytes,algorithm,protocol,channels,nodes,ranks,pipeOps,regBuff,cost_metric,
 * bandwidth_gbps,latency_us; one row per size and NCCL algorithm x protocol predicted. */
char *cs_selection_to_nccl_measurements_csv(const CsSelection *selection);
/* `--compare`: per size NCCL's pick, collsim's time for it and for collsim's pick, the loss. */
char *cs_selection_compare_to_table(const CsSelection *selection);
char *cs_selection_compare_to_json(const CsSelection *selection);

/* The emitters, for cs_selections_emit(). */
typedef enum {
    CS_SELECT_FORMAT_TABLE,
    CS_SELECT_FORMAT_JSON,
    CS_SELECT_FORMAT_ENV,
    CS_SELECT_FORMAT_TUNER_CSV,
    CS_SELECT_FORMAT_MEASUREMENTS_CSV,
    CS_SELECT_FORMAT_COMPARE_TABLE, /* selections made by cs_select_compare() */
    CS_SELECT_FORMAT_COMPARE_JSON,
} CsSelectFormat;

/* The emitter --emit @name names (table, json, env, nccl-tuner-csv, nccl-measurements-csv;
 * any case), FALSE if none. */
gboolean cs_select_format_from_name(const char *name, CsSelectFormat *format);

/* Selections of several communicator shapes of one topology in one text: the single
 * emitter's text for one; for several, tables one after the other, a JSON array of the
 * documents, the CSVs' lines of all shapes under one header, and env lines exported only
 * where every shape agrees. (transfer full) */
char *cs_selections_emit(CsSelection *const *selections, guint n, CsSelectFormat format);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(CsSelection, cs_selection_free)

G_END_DECLS
