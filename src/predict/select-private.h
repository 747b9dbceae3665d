// SPDX-License-Identifier: MIT
/* What the search (select.c) and the emitters of a selection (select_emit.c, select_table.c,
 * select_json.c, select_env.c, select_csv.c) share: the selection itself and the emitters'
 * common pieces (STYLE §2). */
#pragma once

#include "predict/select.h"

G_BEGIN_DECLS

/* One measured row for the measurements CSV: a candidate's time at a grid size. */
typedef struct {
    gint64 size_bytes;
    CsSelectChoice choice;
    double time_us;
} Measure;

typedef struct {
    CsSelectTable full;
    CsSelectTable nccl_own;    /* used when the NCCL table differs from the full one */
    const CsSelectTable *nccl; /* NULL: NCCL has no model of this collective */
    GArray *measures;          /* Measure, NCCL-implementable candidates at grid sizes */
    GArray *compare;           /* CsSelectCompareRow, or NULL */
    GArray *grid;              /* gint64 */
} OpResult;

struct _CsSelection {
    CsTopo *topo;
    int nranks;
    int nnodes;
    CsDtype dtype;
    gint64 min_bytes;
    gint64 max_bytes;
    gint64 step_factor;
    gboolean exact;
    gint64 max_events;
    gint64 interpolate_events; /* 0: no interpolation */
    double min_gain_pct; /* --min-gain's margin (0: the plain fastest); see validated_margin */
    gboolean validated_margin;        /* margins per regime from the validated errors */
    double margin_pct[CS_N_REGIMES];  /* the margin applied per regime, percent */
    gboolean validated[CS_N_REGIMES]; /* the model validated there for this machine class */
    const char *machine_class;        /* cs_validated_class() */
    int forced_channels;              /* --channels, 0 when channels follow the size */
    gboolean nccl_only;
    gboolean any_algorithm; /* every algorithm weighed, not cs_predict_default_candidate()'s */
    gboolean mpi;           /* CPU ranks: an MPI library runs them, no NCCL pick to keep */
    char *model;            /* "reservation", "maxmin", "nccl:2.28" */
    gboolean nccl_model;    /* selected under NCCL's model */
    char *compare_spec;     /* (nullable) */
    CsNcclModel *nccl;      /* decides what NCCL implements; NCCL's picks for --compare */
    GPtrArray *ops;         /* OpResult */
    GPtrArray *notes;       /* (nullable) char *: cs_selection_add_note() lines */
    int n_sims;
    double seconds;
};

static inline const char *
cs_select_plural(int n)
{
    return n == 1 ? "" : "s";
}

/* The emitters' shared pieces (select_emit.c). */

/* "dgx-h100x8, 8 ranks on 1 node, float, engine reservation" (transfer full) */
char *cs_select_describe(const CsSelection *sel);
/* The margin's line: per regime the margin used, and where it comes from. (transfer full) */
char *cs_select_margin_text(const CsSelection *sel);
/* A range's gain over NCCL's pick and its margin, for a comment. (transfer full) */
char *cs_select_gain_text(const CsSelectRange *r);
/* Comment lines, each starting @prefix, on what the NCCL emitters left out and why. */
void cs_select_append_restriction(GString *out, const CsSelection *sel, const char *prefix);
/* "512 B", "1.37 MiB": a reading aid beside exact byte counts. (transfer full) */
char *cs_select_size_text(gint64 bytes);
/* cs_selection_add_note()'s lines as comment lines starting @prefix. */
void cs_select_append_notes(GString *out, const CsSelection *sel, const char *prefix);

/* cs_selections_emit() over several shapes, per emitter. (transfer full) */
char *cs_select_json_shapes(CsSelection *const *sels, guint n, gboolean compare);
char *cs_select_env_shapes(CsSelection *const *sels, guint n);
char *cs_select_tuner_csv_shapes(CsSelection *const *selections, guint n);
char *cs_select_measurements_csv_shapes(CsSelection *const *selections, guint n);

G_END_DECLS
