// SPDX-License-Identifier: MIT
/* What every emitter of a selection shares (its description, margin and notes lines, sizes
 * for reading) and the dispatch of an --emit format over one or several communicator shapes
 * (cs_selections_emit()). The emitters themselves: select_table.c, select_json.c,
 * select_env.c, select_csv.c. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "algos/registry.h"
#include "predict/select-private.h"

/* Where to cut @text (of @len bytes) to keep at most @max: the last space in reach, else
 * the last UTF-8 character start. */
static gsize
wrap_at(const char *text, gsize len, gsize max)
{
    if (len <= max)
        return len;
    for (gsize i = max; i > max / 2; i--)
        if (text[i] == ' ')
            return i;
    gsize i = max;
    while (i > 1 && ((unsigned char)text[i] & 0xc0) == 0x80)
        i--;
    return i;
}

/* Longest comment line written, newline included: NCCL's example tuner reads lines with
 * fgets into a 256-byte buffer (plugins/tuner/example/plugin.c, MAX_LINE_LENGTH, NCCL 2.28),
 * so a longer comment would go on as a line that does not start with '#'. */
#define NOTE_LINE_MAX 200

/* The notes as comment lines, each "@prefix" then at most NOTE_LINE_MAX bytes in all; a long
 * note goes on over lines that start "@prefix  ". */
void
cs_select_append_notes(GString *out, const CsSelection *sel, const char *prefix)
{
    const gsize plen = strlen(prefix);
    for (guint i = 0; sel->notes != NULL && i < sel->notes->len; i++) {
        const char *text = g_ptr_array_index(sel->notes, i);
        gsize len = strlen(text);
        gboolean first = TRUE;
        do {
            const char *lead = first ? "" : "  ";
            const gsize room = NOTE_LINE_MAX - 1 - plen - strlen(lead);
            gsize cut = wrap_at(text, len, room);
            g_string_append_printf(out, "%s%s%.*s\n", prefix, lead, (int)cut, text);
            if (cut < len && text[cut] == ' ')
                cut++;
            text += cut;
            len -= cut;
            first = FALSE;
        } while (len > 0);
    }
}

/* ---- Shared pieces of the emitters ---- */

/* "dgx-h100x8, 8 ranks on 1 node, float, engine reservation" */
char *
cs_select_describe(const CsSelection *sel)
{
    g_autofree char *model
        = sel->nccl_model
              ? g_strdup_printf("%s %s cost model", cs_nccl_model_constants(sel->nccl)->library,
                                cs_nccl_model_constants(sel->nccl)->version)
              : g_strdup_printf("collsim engine (%s)", sel->model);
    g_autofree char *amount = sel->validated_margin ? g_strdup("the margin")
                                                    : g_strdup_printf("%g%%", sel->min_gain_pct);
    g_autofree char *margin
        = !sel->validated_margin && sel->min_gain_pct <= 0.0 ? g_strdup("")
          : sel->mpi
              ? g_strdup_printf(", a range's choice kept while within %s of the fastest", amount)
              : g_strdup_printf(", %s %s's pick unless collsim's gains more than %s",
                                cs_nccl_model_constants(sel->nccl)->library,
                                cs_nccl_model_constants(sel->nccl)->version, amount);
    return g_strdup_printf("%s, %d rank%s on %d node%s, %s, %s%s", cs_topo_name(sel->topo),
                           sel->nranks, cs_select_plural(sel->nranks), sel->nnodes,
                           cs_select_plural(sel->nnodes), cs_dtype_name(sel->dtype), model, margin);
}

/* The margin's line: per regime the margin used, and where it comes from. (transfer full) */
char *
cs_select_margin_text(const CsSelection *sel)
{
    if (sel->nccl_model)
        return g_strdup("none (NCCL's own model picks)");
    if (!sel->validated_margin && sel->min_gain_pct <= 0.0)
        return g_strdup("none: the fastest per size");
    const CsValidatedError *e = cs_validated_error(sel->machine_class);
    GString *out = g_string_new(NULL);
    if (sel->validated_margin && e == NULL)
        g_string_append_printf(
            out, "no trace of %s machines is validated (%s): the %g%% floor:", sel->machine_class,
            cs_validated_source(), CS_VALIDATED_MIN_MARGIN_PCT);
    else if (sel->validated_margin)
        g_string_append_printf(out,
                               "the validated error of %s machines (%d trace%s, %s), at least "
                               "%g%%:",
                               sel->machine_class, e->n_traces, cs_select_plural(e->n_traces),
                               cs_validated_source(), CS_VALIDATED_MIN_MARGIN_PCT);
    else
        g_string_append_printf(out,
                               "--min-gain %g%% in every regime (%s machines):", sel->min_gain_pct,
                               sel->machine_class);
    for (int k = 0; k < CS_N_REGIMES; k++) {
        g_string_append_printf(out, "%s %s %.1f%%", k > 0 ? "," : "", cs_regime_name((CsRegime)k),
                               sel->margin_pct[k]);
        if (!sel->validated[k])
            g_string_append(out, " (not validated)");
        else if (!sel->validated_margin || e->error_pct[k] < CS_VALIDATED_MIN_MARGIN_PCT)
            g_string_append_printf(out, " (validated error %.1f%%)", e->error_pct[k]);
    }
    return g_string_free(out, FALSE);
}

/* " (+12.3% over NCCL's pick; margin 14.9%, validated)", " (NCCL's pick)", or the margin
 * alone where there is no NCCL pick to weigh. */
char *
cs_select_gain_text(const CsSelectRange *r)
{
    g_autofree char *margin = g_strdup_printf("margin %.1f%%, %s", r->margin_pct,
                                              r->validated ? "validated" : "not validated");
    if (isnan(r->gain_pct))
        return r->margin_pct > 0.0 ? g_strdup_printf(" (%s)", margin) : g_strdup("");
    if (r->gain_pct == 0.0)
        return g_strdup(" (NCCL's pick)");
    return g_strdup_printf(" (%+.1f%% over NCCL's pick; %s)", r->gain_pct, margin);
}

/* The algorithm names of candidates NCCL does not have, for the restriction comment. */
static char *
non_nccl_algorithms(const CsSelection *sel)
{
    g_autoptr(GString) s = g_string_new(NULL);
    if (sel->nccl_model)
        return g_strdup("");
    for (const CsAlgo *const *a = cs_algo_registry(); *a != NULL; a++) {
        CsNcclAlgo na;
        if (!cs_nccl_algo_from_collsim((*a)->name, &na))
            g_string_append_printf(s, "%s%s", s->len > 0 ? ", " : "", (*a)->name);
    }
    return g_string_free(g_steal_pointer(&s), FALSE);
}

/* Comment lines shared by the NCCL emitters: what was left out and why. */
void
cs_select_append_restriction(GString *out, const CsSelection *sel, const char *prefix)
{
    g_autofree char *others = non_nccl_algorithms(sel);
    if (others[0] != '\0') {
        g_string_append_printf(out,
                               "%sRestricted to algorithms NCCL implements (ring, tree, "
                               "nvls, nvls_tree, collnet, pat):\n",
                               prefix);
        g_string_append_printf(out, "%s  %s are collsim's, not NCCL's.\n", prefix, others);
    }
    g_autoptr(GString) none = g_string_new(NULL);
    for (guint i = 0; i < sel->ops->len; i++) {
        const OpResult *r = g_ptr_array_index(sel->ops, i);
        if (r->nccl == NULL)
            g_string_append_printf(none, "%s%s", none->len > 0 ? ", " : "", cs_op_name(r->full.op));
    }
    if (none->len > 0)
        g_string_append_printf(out, "%sNot tuned by NCCL (point-to-point there): %s.\n", prefix,
                               none->str);
}

/* "512 B", "1.37 MiB": a reading aid beside exact byte counts. */
char *
cs_select_size_text(gint64 bytes)
{
    static const char *const units[] = { "KiB", "MiB", "GiB", "TiB" };
    if (bytes < 1024)
        return g_strdup_printf("%" G_GINT64_FORMAT " B", bytes);
    double v = (double)bytes / 1024.0;
    int u = 0;
    while (v >= 1024.0 && u < 3) {
        v /= 1024.0;
        u++;
    }
    if (v == floor(v))
        return g_strdup_printf("%.0f %s", v, units[u]);
    return g_strdup_printf("%.2f %s", v, units[u]);
}

/* ---- Several communicator shapes ---- */

static const struct {
    const char *name;
    CsSelectFormat format;
} format_names[] = {
    { "table", CS_SELECT_FORMAT_TABLE },
    { "json", CS_SELECT_FORMAT_JSON },
    { "env", CS_SELECT_FORMAT_ENV },
    { "nccl-tuner-csv", CS_SELECT_FORMAT_TUNER_CSV },
    { "nccl-measurements-csv", CS_SELECT_FORMAT_MEASUREMENTS_CSV },
};

/**
 * cs_select_format_from_name:
 * The --emit spelling of the single-table emitters, shared by `select` and `crossover`.
 */
gboolean
cs_select_format_from_name(const char *name, CsSelectFormat *format)
{
    for (gsize i = 0; i < G_N_ELEMENTS(format_names); i++)
        if (g_ascii_strcasecmp(name, format_names[i].name) == 0) {
            *format = format_names[i].format;
            return TRUE;
        }
    return FALSE;
}

/**
 * cs_selections_emit:
 * @selections: (array length=n): selections of one topology, one per communicator shape.
 * The emitter @format over every shape: with one shape, exactly the single emitter's text;
 * with several, the tables one after the other (table, compare-table), a JSON array of the
 * single documents (json, compare-json; libnccl-tuner-collsim.so picks the one for its
 * communicator), the tuner CSV's lines of every shape under one header (NCCL's example tuner
 * matches nNodes and nRanks per line), the measurement rows of every shape under one header,
 * and for env each shape's settings as comments, exported only where all agree.
 * Returns: (transfer full).
 */
char *
cs_selections_emit(CsSelection *const *selections, guint n, CsSelectFormat format)
{
    g_return_val_if_fail(selections != NULL && n >= 1, NULL);
    if (n == 1 || format == CS_SELECT_FORMAT_TABLE || format == CS_SELECT_FORMAT_COMPARE_TABLE) {
        GString *out = g_string_new(NULL);
        for (guint i = 0; i < n; i++) {
            g_autofree char *text = NULL;
            switch (format) {
            case CS_SELECT_FORMAT_TABLE:
                text = cs_selection_to_table(selections[i]);
                break;
            case CS_SELECT_FORMAT_JSON:
                text = cs_selection_to_json(selections[i]);
                break;
            case CS_SELECT_FORMAT_ENV:
                text = cs_selection_to_env(selections[i]);
                break;
            case CS_SELECT_FORMAT_TUNER_CSV:
                text = cs_selection_to_nccl_tuner_csv(selections[i]);
                break;
            case CS_SELECT_FORMAT_MEASUREMENTS_CSV:
                text = cs_selection_to_nccl_measurements_csv(selections[i]);
                break;
            case CS_SELECT_FORMAT_COMPARE_TABLE:
                text = cs_selection_compare_to_table(selections[i]);
                break;
            case CS_SELECT_FORMAT_COMPARE_JSON:
                text = cs_selection_compare_to_json(selections[i]);
                break;
            }
            if (i > 0)
                g_string_append(out, "\n");
            g_string_append(out, text);
        }
        return g_string_free(out, FALSE);
    }
    switch (format) {
    case CS_SELECT_FORMAT_JSON:
    case CS_SELECT_FORMAT_COMPARE_JSON:
        return cs_select_json_shapes(selections, n, format == CS_SELECT_FORMAT_COMPARE_JSON);
    case CS_SELECT_FORMAT_ENV:
        return cs_select_env_shapes(selections, n);
    case CS_SELECT_FORMAT_TUNER_CSV:
        return cs_select_tuner_csv_shapes(selections, n);
    case CS_SELECT_FORMAT_MEASUREMENTS_CSV:
        return cs_select_measurements_csv_shapes(selections, n);
    default:
        g_return_val_if_reached(NULL);
    }
}
