// SPDX-License-Identifier: MIT
/* The CSV emitters of a selection, for NCCL's ext-tuner example: the tuner plugin's
 * configuration (cs_selection_to_nccl_tuner_csv()) and optimize_config.py's measurements
 * (cs_selection_to_nccl_measurements_csv()), one communicator shape or several. */
#include "config.h"

#include <math.h>

#include "predict/select-private.h"

/* NCCL's tuner CSV ranges end here unless the table reaches past 4 GiB (ext-tuner README's
 * default XXLarge range ends at 4,294,967,295). */
#define CSV_END_32 G_GUINT64_CONSTANT(4294967295)

/* ---- NCCL's example tuner CSV ---- */

/* The lines of @sel's NCCL tables, each preceded by a comment with its gain. */
static void
append_tuner_rows(GString *out, const CsSelection *sel)
{
    const gboolean past_32 = (guint64)sel->max_bytes > CSV_END_32;
    for (guint i = 0; i < sel->ops->len; i++) {
        const OpResult *r = g_ptr_array_index(sel->ops, i);
        const CsSelectTable *t = r->nccl;
        if (t == NULL || t->ranges->len == 0)
            continue;
        for (guint j = 0; j < t->ranges->len; j++) {
            const CsSelectRange *rg = &g_array_index(t->ranges, CsSelectRange, j);
            guint64 max
                = rg->max_bytes < 0 ? (past_32 ? G_MAXUINT64 : CSV_END_32) : (guint64)rg->max_bytes;
            /* A crossover past 2^32-1 only exists when the grid goes there (then past_32). */
            if ((guint64)rg->min_bytes > max)
                continue;
            /* The example tuner skips lines starting with '#' (plugin.c, NCCL 2.28). */
            if (rg->min_measured)
                g_string_append_printf(
                    out, "# next range: from a measured crossover at %" G_GINT64_FORMAT " B\n",
                    rg->min_bytes);
            if (rg->gain_pct == 0.0)
                g_string_append(out, "# next range: NCCL's own pick\n");
            else if (!isnan(rg->gain_pct))
                g_string_append_printf(out,
                                       "# next range: %+.1f%% over NCCL's own pick (margin "
                                       "%.1f%%, %s)\n",
                                       rg->gain_pct, rg->margin_pct,
                                       rg->validated ? "validated" : "not validated");
            g_string_append_printf(
                out, "%s,%" G_GINT64_FORMAT ",%" G_GUINT64_FORMAT ",%s,%s,%d,%d,%d,-1,-1\n",
                cs_op_name(t->op), rg->min_bytes, max,
                cs_nccl_algo_name((CsNcclAlgo)rg->choice.nccl_algo),
                cs_nccl_proto_name(rg->choice.proto), rg->choice.n_channels, sel->nnodes,
                sel->nranks);
        }
    }
}

/* The comment lines that open the CSV: @what, @sel's margin (with @margin), the restriction,
 * the columns. */
static void
append_tuner_header(GString *out, const CsSelection *sel, const char *what, gboolean margin)
{
    const gboolean past_32 = (guint64)sel->max_bytes > CSV_END_32;

    g_string_append_printf(out, "# collsim %s select --emit nccl-tuner-csv\n", COLLSIM_VERSION);
    g_string_append_printf(out, "# %s\n", what);
    cs_select_append_notes(out, sel, "# ");
    g_autofree char *margins = margin ? cs_select_margin_text(sel) : NULL;
    if (margins != NULL)
        g_string_append_printf(out, "# margin: %s\n", margins);
    g_string_append(out, "# For NCCL's example tuner (ext-tuner/example): "
                         "NCCL_TUNER_CONFIG_FILE=<this file>\n");
    cs_select_append_restriction(out, sel, "# ");
    g_string_append_printf(out, "# Ranges cover 0 ... %s with no gap or overlap.\n",
                           past_32 ? "18446744073709551615" : "4294967295");
    g_string_append(out, "# collective_type,min_bytes,max_bytes,algorithm,protocol,channels,"
                         "nNodes,nRanks,numPipeOps,regBuff\n");
}

/**
 * cs_selection_to_nccl_tuner_csv:
 * The CSV NCCL's example tuner plugin reads (NCCL_TUNER_CONFIG_FILE): one line per range of
 * each collective's NCCL table, contiguous from 0; the last ends at 4294967295 (2^32-1), or is
 * open-ended (18446744073709551615) when the table goes past 4 GiB. Comment lines stay under
 * the example's 256-byte line buffer.
 */
char *
cs_selection_to_nccl_tuner_csv(const CsSelection *sel)
{
    g_return_val_if_fail(sel != NULL, NULL);
    GString *out = g_string_new(NULL);
    g_autofree char *what = cs_select_describe(sel);
    append_tuner_header(out, sel, what, TRUE);
    append_tuner_rows(out, sel);
    return g_string_free(out, FALSE);
}

#define MEASUREMENTS_HEADER                                                                        \
    "collective,size_bytes,algorithm,protocol,channels,nodes,ranks,pipeOps,regBuff,cost_metric,"   \
    "bandwidth_gbps,latency_us\n"

static void
append_measurement_rows(GString *out, const CsSelection *sel)
{
    for (guint i = 0; i < sel->ops->len; i++) {
        const OpResult *r = g_ptr_array_index(sel->ops, i);
        if (r->nccl == NULL)
            continue;
        for (guint j = 0; j < r->measures->len; j++) {
            const Measure *m = &g_array_index(r->measures, Measure, j);
            const CsOpSize os = cs_op_size(r->full.op, m->size_bytes, sel->dtype, sel->nranks);
            const double bw = m->time_us > 0.0 ? (double)os.size_bytes / (m->time_us * 1e3) : 0.0;
            g_string_append_printf(out,
                                   "%s,%" G_GINT64_FORMAT ",%s,%s,%d,%d,%d,-1,-1,%.6f,%.6f,"
                                   "%.6f\n",
                                   cs_op_name(r->full.op), m->size_bytes,
                                   cs_nccl_algo_name((CsNcclAlgo)m->choice.nccl_algo),
                                   cs_nccl_proto_name(m->choice.proto), m->choice.n_channels,
                                   sel->nnodes, sel->nranks, m->time_us, bw, m->time_us);
        }
    }
}

/**
 * cs_selection_to_nccl_measurements_csv:
 * The measurement CSV of NCCL's ext-tuner/example/scripts/optimize_config.py: the header line
 * first (csv.DictReader takes the first line as the header, so no comments), then one row per
 * grid size and NCCL-implementable algorithm x protocol with its predicted time as
 * cost_metric and latency_us, and its algorithm bandwidth as bandwidth_gbps.
 */
char *
cs_selection_to_nccl_measurements_csv(const CsSelection *sel)
{
    g_return_val_if_fail(sel != NULL, NULL);
    GString *out = g_string_new(MEASUREMENTS_HEADER);
    append_measurement_rows(out, sel);
    return g_string_free(out, FALSE);
}

/* --emit nccl-tuner-csv for several shapes: the lines of every shape under one header (NCCL's
 * example tuner matches nNodes and nRanks per line). (transfer full) */
char *
cs_select_tuner_csv_shapes(CsSelection *const *selections, guint n)
{
    GString *out = g_string_new(NULL);
    g_autofree char *what = g_strdup_printf("%u communicator shapes of %s; the lines of each "
                                            "carry its nNodes and nRanks",
                                            n, cs_topo_name(selections[0]->topo));
    append_tuner_header(out, selections[0], what, FALSE);
    for (guint i = 0; i < n; i++) {
        g_autofree char *shape = cs_select_describe(selections[i]);
        g_autofree char *margin = cs_select_margin_text(selections[i]);
        g_string_append_printf(out, "# ---- %s\n# margin: %s\n", shape, margin);
        append_tuner_rows(out, selections[i]);
    }
    return g_string_free(out, FALSE);
}

/* --emit nccl-measurements-csv for several shapes: the rows of every shape under one header.
 * (transfer full) */
char *
cs_select_measurements_csv_shapes(CsSelection *const *selections, guint n)
{
    GString *out = g_string_new(MEASUREMENTS_HEADER);
    for (guint i = 0; i < n; i++)
        append_measurement_rows(out, selections[i]);
    return g_string_free(out, FALSE);
}
