// SPDX-License-Identifier: MIT
/* The human-readable emitters of a selection: select's table (cs_selection_to_table()) and
 * --compare's (cs_selection_compare_to_table()), with NCCL's tuning table as its log prints
 * it. */
#include "config.h"

#include "predict/select-private.h"

#include <math.h>
#include <string.h>

/* The candidate rule that applied (cs_predict_default_candidate()), in the table's words. */
static const char *
candidates_text(const CsSelection *sel)
{
    if (sel->nccl_model)
        return "the entries of NCCL's cost tables";
    if (sel->any_algorithm)
        return "every algorithm collsim knows (--any-algorithm)";
    if (sel->mpi)
        return "every algorithm collsim knows but RCCL's all-pairs (CPU ranks: an MPI library "
               "runs them, no NCCL)";
    return "what an nccl-tests run can execute (NCCL's algorithms; --any-algorithm weighs "
           "every one)";
}

/* A crossover side's time, "cannot run" where it has none. */
static char *
time_text(double us)
{
    return isnan(us) ? g_strdup("cannot run") : g_strdup_printf("%.6f", us);
}

static void
append_table(GString *out, const CsSelection *sel, const CsSelectTable *t, const char *title)
{
    g_string_append_printf(out, "#\n# %s%s: %d candidate%s", cs_op_name(t->op), title,
                           t->n_candidates, cs_select_plural(t->n_candidates));
    g_string_append_printf(out, ", crossovers exact to %" G_GINT64_FORMAT " B\n", t->granularity);
    if (t->note != NULL)
        g_string_append_printf(out, "#   note: %s\n", t->note);
    if (t->points->len == 0)
        return;
    g_string_append(out, "#         size  best                         time(us)  algbw(GB/s)"
                         "  busbw(GB/s)\n");
    gboolean any_extrapolated = FALSE;
    gboolean any_bracketed = FALSE;
    for (guint i = 0; i < t->points->len; i++) {
        const CsSelectPoint *p = &g_array_index(t->points, CsSelectPoint, i);
        g_autofree char *label = cs_select_choice_label(&p->best);
        g_string_append_printf(out, "%14" G_GINT64_FORMAT "  %-26s %10.2f%s %11.2f  %11.2f\n",
                               p->size_bytes, label, p->time_us,
                               p->extrapolated ? "*"
                               : p->bracketed  ? "~"
                                               : " ",
                               p->algbw_GBps, p->busbw_GBps);
        any_extrapolated |= p->extrapolated;
        any_bracketed |= p->bracketed && !p->extrapolated;
    }
    if (any_extrapolated)
        g_string_append_printf(out,
                               "#   * extended on a line: past the simulation cap "
                               "(%" G_GINT64_FORMAT " events), or through three smaller "
                               "simulated sizes (as collsim run); --exact simulates them\n",
                               sel->max_events);
    if (any_bracketed)
        g_string_append(out, "#   ~ bracketed: one period of ranks replayed with the ranks' "
                             "unequal last chunks bounded below and above, within 0.1%; the "
                             "upper end (as collsim run)\n");
    if (t->crossovers->len == 0) {
        g_string_append(out, "# crossovers: none (one choice at every size)\n");
    }
    else {
        g_string_append(out, "# crossovers: first size of the new choice; both times at that "
                             "size and one element below\n");
        gboolean any_interpolated = FALSE;
        for (guint i = 0; i < t->crossovers->len; i++) {
            const CsSelectCrossover *x = &g_array_index(t->crossovers, CsSelectCrossover, i);
            g_autofree char *from = cs_select_choice_label(&x->from);
            g_autofree char *to = cs_select_choice_label(&x->to);
            g_autofree char *human = cs_select_size_text(x->size_bytes);
            g_autofree char *t0 = time_text(x->from_time_us);
            g_autofree char *t1 = time_text(x->to_time_us);
            g_autofree char *t2 = time_text(x->from_time_below_us);
            g_autofree char *t3 = time_text(x->to_time_below_us);
            g_string_append_printf(out,
                                   "#%13" G_GINT64_FORMAT "  (%s) %s -> %s: %s vs %s us;"
                                   " at %" G_GINT64_FORMAT ": %s vs %s%s\n",
                                   x->size_bytes, human, from, to, t0, t1, x->below_bytes, t2, t3,
                                   x->interpolated ? " (interpolated)" : "");
            any_interpolated |= x->interpolated;
        }
        if (any_interpolated)
            g_string_append_printf(out,
                                   "#   interpolated: between two grid sizes that each replayed "
                                   "more than %" G_GINT64_FORMAT " events, a time read off the "
                                   "line joining them; --exact simulates every size\n",
                                   sel->interpolate_events);
    }
    g_string_append(out, "# ranges:\n");
    for (guint i = 0; i < t->ranges->len; i++) {
        const CsSelectRange *r = &g_array_index(t->ranges, CsSelectRange, i);
        g_autofree char *label = cs_select_choice_label(&r->choice);
        g_autofree char *max = r->max_bytes < 0
                                   ? g_strdup("...")
                                   : g_strdup_printf("%" G_GINT64_FORMAT, r->max_bytes);
        g_autofree char *gain = cs_select_gain_text(r);
        g_string_append_printf(out, "#   %14" G_GINT64_FORMAT " - %-14s %s%s%s\n", r->min_bytes,
                               max, label, gain, r->min_measured ? " (measured boundary)" : "");
    }
}

/* NCCL's tuning table as NCCL_DEBUG_SUBSYS=TUNING prints it (latency us / algbw GB/s). */
static void
append_nccl_tables(GString *out, const CsNcclModel *m)
{
    const CsNcclSystem *s = cs_nccl_model_system(m);
    const CsNcclConstants *c = cs_nccl_model_constants(m);
    /* RCCL's model names the AMD architecture its rules test, NCCL's the generation. */
    const char *arch = s->amd_arch != CS_NCCL_AMD_NONE && strcmp(c->library, "RCCL") == 0
                           ? cs_nccl_amd_arch_name(s->amd_arch)
                           : cs_nccl_arch_name(s->arch);
    g_string_append_printf(out,
                           "# %s %s model on the emulated search: %s%s, %d rank%s on "
                           "%d node%s\n",
                           c->library, c->version, arch,
                           s->arch_guessed ? " (GPU not recognised: assumed)" : "", s->n_ranks,
                           cs_select_plural(s->n_ranks), s->n_nodes, cs_select_plural(s->n_nodes));
    for (int a = 0; a < CS_NCCL_N_ALGOS; a++) {
        const CsNcclGraph *g = &s->graphs[a];
        gboolean used = FALSE;
        for (int f = 0; f < CS_NCCL_N_FUNCS; f++)
            for (int p = 0; p < CS_N_PROTOS; p++)
                used |= cs_nccl_model_bandwidth_GBps(m, f, a, p) > 0.0;
        if (used)
            g_string_append_printf(out, "#   %-14s %2d channels x %.1f GB/s intra, %.1f inter\n",
                                   cs_nccl_algo_env_name((CsNcclAlgo)a), g->n_channels,
                                   g->bw_intra_GBps, g->bw_inter_GBps);
    }
    g_string_append(out, "#   usable entries, latency (us) / algorithm bandwidth (GB/s):\n");
    for (int f = 0; f < CS_NCCL_N_FUNCS; f++) {
        g_string_append_printf(out, "#   %-13s", cs_nccl_func_name((CsNcclFunc)f));
        for (int a = 0; a < CS_NCCL_N_ALGOS; a++) {
            for (int p = 0; p < CS_N_PROTOS; p++) {
                const double bw = cs_nccl_model_bandwidth_GBps(m, f, a, p);
                if (bw <= 0.0)
                    continue;
                g_string_append_printf(
                    out, " %s/%s %.1f/%.1f", cs_nccl_algo_env_name((CsNcclAlgo)a),
                    cs_proto_name((CsProto)p), cs_nccl_model_latency_us(m, f, a, p), bw);
            }
        }
        g_string_append(out, "\n");
    }
}

/**
 * cs_selection_to_table:
 * Per collective: the best choice per grid size (time, algbw, busbw), the crossovers with
 * the times of both sides, and the ranges.
 */
char *
cs_selection_to_table(const CsSelection *sel)
{
    g_return_val_if_fail(sel != NULL, NULL);
    GString *out = g_string_new(NULL);
    g_autofree char *what = cs_select_describe(sel);
    g_autofree char *lo = cs_select_size_text(sel->min_bytes);
    g_autofree char *hi = cs_select_size_text(sel->max_bytes);
    g_string_append_printf(out, "# collsim %s select: %s\n", COLLSIM_VERSION, what);
    cs_select_append_notes(out, sel, "# ");
    g_string_append_printf(out,
                           "# grid %s ... %s (x%" G_GINT64_FORMAT "); crossovers: where "
                           "the best algorithm/protocol changes, by bisection on the "
                           "predictions\n",
                           lo, hi, sel->step_factor);
    if (sel->forced_channels > 0)
        g_string_append_printf(out, "# channels forced to %d (--channels)\n", sel->forced_channels);
    else
        g_string_append(out, "# channels follow the size (NCCL lowers them for small "
                             "operations); a range's count is the one at its largest size\n");
    g_string_append_printf(out, "# candidates: %s\n", candidates_text(sel));
    g_autofree char *margin = cs_select_margin_text(sel);
    g_string_append_printf(out, "# margin: %s\n", margin);
    if (sel->nccl_model)
        append_nccl_tables(out, sel->nccl);
    else if (sel->nccl_only)
        cs_select_append_restriction(out, sel, "# ");
    for (guint i = 0; i < sel->ops->len; i++) {
        const OpResult *r = g_ptr_array_index(sel->ops, i);
        append_table(out, sel, &r->full, "");
    }
    return g_string_free(out, FALSE);
}

/* ---- --compare ---- */

/**
 * cs_selection_compare_to_table:
 * Per collective and size: NCCL's pick and NCCL's own time for it, collsim's engine on that
 * pick, collsim's pick among the algorithms NCCL implements (what the tuner plugin sets) and
 * the loss of NCCL's pick.
 */
char *
cs_selection_compare_to_table(const CsSelection *sel)
{
    g_return_val_if_fail(sel != NULL && sel->compare_spec != NULL, NULL);
    GString *out = g_string_new(NULL);
    g_autofree char *what = cs_select_describe(sel);

    g_string_append_printf(out, "# collsim %s select --compare %s: %s\n", COLLSIM_VERSION,
                           sel->compare_spec, what);
    append_nccl_tables(out, sel->nccl);
    g_string_append(out, "# model: NCCL's own prediction of its pick; engine: collsim's "
                         "engine on NCCL's pick and on its own\n"
                         "# pick among the algorithms NCCL implements (what the tuner plugin "
                         "would set); loss: the difference.\n");
    for (guint i = 0; i < sel->ops->len; i++) {
        const OpResult *r = g_ptr_array_index(sel->ops, i);
        if (r->compare == NULL) {
            g_string_append_printf(out, "#\n# %s: %s\n", cs_op_name(r->full.op),
                                   r->nccl == NULL ? "NCCL has no cost model for it"
                                                   : "no NCCL-implementable candidate runs");
            continue;
        }
        double worst = 0.0;
        gint64 worst_size = 0;
        g_string_append_printf(out, "#\n# %s\n", cs_op_name(r->full.op));
        g_string_append(out, "#         size  NCCL pick      model(us)  engine(us)  "
                             "engine pick                   engine(us)  loss(us)  loss(%)\n");
        for (guint j = 0; j < r->compare->len; j++) {
            const CsSelectCompareRow *row = &g_array_index(r->compare, CsSelectCompareRow, j);
            g_autofree char *pick = g_strdup_printf("%s/%s", cs_nccl_algo_name(row->nccl.algo),
                                                    cs_proto_name(row->nccl.proto));
            g_autofree char *best = cs_select_choice_label(&row->best);
            if (row->nccl_simulated)
                g_string_append_printf(out,
                                       "%14" G_GINT64_FORMAT "  %-13s %10.2f  %10.2f  %-26s "
                                       "%12.2f  %8.2f  %7.1f\n",
                                       row->size_bytes, pick, row->nccl.time_us, row->nccl_pick_us,
                                       best, row->best_us, row->loss_us, row->loss_pct);
            else
                g_string_append_printf(out,
                                       "%14" G_GINT64_FORMAT "  %-13s %10.2f  %10s  %-26s "
                                       "%12.2f  %8s  %7s\n",
                                       row->size_bytes, pick, row->nccl.time_us, "n/a", best,
                                       row->best_us, "n/a", "n/a");
            if (row->nccl_simulated && row->loss_pct > worst) {
                worst = row->loss_pct;
                worst_size = row->size_bytes;
            }
        }
        if (worst > 0.0)
            g_string_append_printf(
                out, "# worst loss of NCCL's pick: %.1f%% at %" G_GINT64_FORMAT " B\n", worst,
                worst_size);
        else
            g_string_append(out, "# NCCL's pick is collsim's at every size\n");
    }
    return g_string_free(out, FALSE);
}
