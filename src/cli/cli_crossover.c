// SPDX-License-Identifier: MIT
/* `collsim crossover`: measures the crossovers `select` predicts on a real backend (the search
 * is analysis/crossover.c), reports predicted against measured sizes, writes everything it
 * measured as nccl-tests traces (one per algorithm), and with --calibrate refits the topology
 * on them and predicts again. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <glib/gstdio.h>

#include "analysis/calibrate.h"
#include "analysis/crossover.h"
#include "analysis/plot.h"
#include "backends/backend.h"
#include "base/json_util.h"
#include "base/units.h"
#include "cli/cli.h"
#include "predict/select.h"

#define PROG "collsim crossover"

typedef struct {
    char *backend;
    char *topo;
    char **sets;
    char *op;
    char *between;
    char *ranks;
    char *dtype;
    int iters;
    int warmup;
    char *repeats;
    char *tolerance;
    char *factor;
    int steps;
    char *width;
    int max_points;
    gint64 max_bytes;
    int virtual_ranks;
    char *format;
    char *output;
    char *traces;
    gboolean calibrate;
    gboolean nccl_only;
    gboolean progress;
    gboolean quiet;
    char *emit;
    char *emit_output;
    char *plot;
    char **rest;
} Options;

static void
options_clear(Options *o)
{
    g_free(o->backend);
    g_free(o->topo);
    g_strfreev(o->sets);
    g_free(o->op);
    g_free(o->between);
    g_free(o->ranks);
    g_free(o->dtype);
    g_free(o->repeats);
    g_free(o->tolerance);
    g_free(o->factor);
    g_free(o->width);
    g_free(o->format);
    g_free(o->output);
    g_free(o->traces);
    g_free(o->emit);
    g_free(o->emit_output);
    g_free(o->plot);
    g_strfreev(o->rest);
}

/* ---- What was measured, per choice and size, for the traces ---- */

typedef struct {
    CsTraceRow row;  /* the backend's row of the first sample (count, type, redop, root) */
    GArray *samples; /* double: us */
} SizeRecord;

typedef struct {
    CsSelectChoice choice;
    char *label;
    CsTrace *first; /* the backend's first trace: its headers */
    GArray *sizes;  /* SizeRecord */
} ChoiceRecord;

static void
choice_record_free(gpointer data)
{
    ChoiceRecord *c = data;
    for (guint i = 0; i < c->sizes->len; i++)
        g_array_unref(g_array_index(c->sizes, SizeRecord, i).samples);
    g_array_unref(c->sizes);
    cs_trace_free(c->first);
    g_free(c->label);
    g_free(c);
}

typedef struct {
    const CsBackend *backend;
    gboolean schedules; /* cuda, mpi: collsim's schedules; nccl: NCCL's collectives */
    CsOp op;
    CsDtype dtype;
    int iters;
    int warmup;
    int virtual_ranks;
    const CsTopo *topo; /* the communicator's topology */
    const char *command;
    GPtrArray *records;     /* ChoiceRecord */
    CsCliProgress progress; /* a step per crossover, a line per point measured */
    const char *from;       /* the crossover under way: its lower choice, "ring/LL" */
    const char *to;         /* and its upper one */
    int max_points;
    gboolean measured_any; /* a sample was taken: MPI, if any, is up */
} Bench;

/* Whether this process prints progress: every process but under mpirun, where only rank 0
 * does, once MPI is up and the ranks know which they are (so none during the prediction). */
static gboolean
speaks(const Bench *b)
{
    return !cs_backend_multi_process() || (b->measured_any && cs_backend_reporting());
}

/* CsSelectOptions.progress, for the prediction (and the re-prediction of --calibrate). */
static void
select_progress(CsOp op, guint done, guint total, const char *label, gpointer data)
{
    Bench *b = data;
    if (!speaks(b))
        return;
    if (done == 1)
        cs_cli_progress_restart(&b->progress, (int)total, "prediction steps");
    (void)op;
    cs_cli_progress_step_text(&b->progress, label);
}

/* CsXoverSource.measured: "1/2 crossovers, now rhd/Simple/1ch -> ring/Simple/2ch: point 3 of
 * at most 14, 64 KiB: ring/Simple/2ch faster (3 samples each)". */
static void
point_measured(const CsXoverPoint *point, int n_points, gpointer data)
{
    Bench *b = data;
    if (!speaks(b))
        return;
    g_autofree char *size = cs_units_format_size(point->size_bytes);
    g_autofree char *verdict = point->verdict == CS_XOVER_FROM
                                   ? g_strdup_printf("%s faster", b->from)
                               : point->verdict == CS_XOVER_TO ? g_strdup_printf("%s faster", b->to)
                               : point->verdict == CS_XOVER_EQUAL ? g_strdup("equal")
                                                                  : g_strdup("undecided");
    g_autofree char *what
        = g_strdup_printf("%s -> %s: point %d of at most %d, %s: %s (%d samples each)", b->from,
                          b->to, n_points, b->max_points, size, verdict, point->repeats);
    cs_cli_progress_within(&b->progress, what);
}

/* The fit of --calibrate, per evaluation. */
static void
fit_evaluated(const CsCalibStep *step, gpointer data)
{
    Bench *b = data;
    g_autofree char *step_text = cs_cli_calibrate_step_text(step);
    g_autofree char *what = g_strdup_printf("the fit to the measurements: %s", step_text);
    cs_cli_progress_within(&b->progress, what);
}

static ChoiceRecord *
record_for(Bench *b, const CsSelectChoice *choice)
{
    for (guint i = 0; i < b->records->len; i++) {
        ChoiceRecord *c = g_ptr_array_index(b->records, i);
        if (cs_select_choice_equal(&c->choice, choice))
            return c;
    }
    ChoiceRecord *c = g_new0(ChoiceRecord, 1);
    c->choice = *choice;
    c->label = cs_select_choice_label(choice);
    c->sizes = g_array_new(FALSE, FALSE, sizeof(SizeRecord));
    g_ptr_array_add(b->records, c);
    return c;
}

/* Algorithms whose schedules stand for work done inside a switch: collsim's point-to-point
 * backends can run the schedule's transfers but not the hardware it models. */
static const struct {
    const char *prefix;
    const char *needs;
} switch_algos[] = {
    { "nvls", "NVSwitch multicast and in-switch reduction (NVLS)" },
    { "collnet", "in-network reduction (CollNet/SHARP)" },
};

static gboolean
bench_can_measure(const CsSelectChoice *choice, char **why, gpointer data)
{
    Bench *b = data;
    const char *name = cs_select_choice_algo_name(choice);
    if (!b->schedules) {
        if (choice->nccl_algo < 0) {
            *why = g_strdup_printf("NCCL has no algorithm %s to force with NCCL_ALGO", name);
            return FALSE;
        }
        return TRUE;
    }
    for (gsize i = 0; i < G_N_ELEMENTS(switch_algos); i++)
        if (g_str_has_prefix(name, switch_algos[i].prefix)) {
            *why = g_strdup_printf("needs %s, which the %s backend's point-to-point copies do "
                                   "not have (measure it with --backend nccl on such a machine)",
                                   switch_algos[i].needs, b->backend->name);
            return FALSE;
        }
    return TRUE;
}

/* CsXoverSource.measure: one `collsim measure` run of @choice at one size. */
static gboolean
bench_measure(const CsSelectChoice *choice, gint64 size_bytes, gboolean first, double *time_us,
              gpointer data, GError **error)
{
    Bench *b = data;
    CsMeasureArgs args;
    g_autofree char *proto = g_strdup(cs_proto_name(choice->proto));
    g_autoptr(CsTrace) trace = NULL;
    g_autoptr(GError) local = NULL;

    cs_measure_args_init(&args, b->op);
    if (b->schedules) {
        args.algo = choice->algo->name;
        args.proto = choice->proto;
        args.n_channels = choice->n_channels;
        args.topo = b->topo;
        args.virtual_ranks = b->virtual_ranks;
    }
    else {
        args.algo = cs_nccl_algo_name(choice->nccl_algo);
        args.proto_name = proto;
    }
    args.min_bytes = args.max_bytes = size_bytes;
    args.iters = b->iters;
    args.warmup = b->warmup;
    args.dtype = b->dtype;
    args.check = first; /* every (choice, size) is checked once, by its first sample */
    args.command = b->command;
    args.every_rank = TRUE;
    if (!cs_backend_measure(b->backend, &args, &trace, &local)) {
        g_autofree char *label = cs_select_choice_label(choice);
        g_set_error(error, CS_CLI_ERROR,
                    local->domain == CS_BACKEND_ERROR && local->code == CS_BACKEND_ERROR_INVALID
                        ? CS_CLI_ERROR_INPUT
                        : CS_CLI_ERROR_FAILED,
                    PROG ": %s at %" G_GINT64_FORMAT " B: %s", label, size_bytes, local->message);
        return FALSE;
    }
    if (trace == NULL || cs_trace_n_rows(trace) != 1) {
        g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_FAILED,
                    PROG ": the %s backend gave this process no times", b->backend->name);
        return FALSE;
    }
    const CsTraceRow *row = cs_trace_row(trace, 0);
    if (row->out_of_place.wrong > 0) {
        g_autofree char *label = cs_select_choice_label(choice);
        g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_FAILED,
                    PROG ": %s at %" G_GINT64_FORMAT " B: %" G_GINT64_FORMAT
                         " wrong elements: the %s backend did not compute %s correctly",
                    label, size_bytes, row->out_of_place.wrong, b->backend->name,
                    cs_op_name(b->op));
        return FALSE;
    }
    *time_us = row->out_of_place.time_us;
    b->measured_any = TRUE;

    ChoiceRecord *c = record_for(b, choice);
    if (c->first == NULL)
        c->first = g_steal_pointer(&trace);
    SizeRecord *s = NULL;
    for (guint i = 0; i < c->sizes->len && s == NULL; i++)
        if (g_array_index(c->sizes, SizeRecord, i).row.size_bytes == size_bytes)
            s = &g_array_index(c->sizes, SizeRecord, i);
    if (s == NULL) {
        SizeRecord rec = { .row = *row, .samples = g_array_new(FALSE, FALSE, sizeof(double)) };
        g_array_append_val(c->sizes, rec);
        s = &g_array_index(c->sizes, SizeRecord, c->sizes->len - 1);
    }
    g_array_append_val(s->samples, *time_us);
    return TRUE;
}

static gint
compare_size_records(gconstpointer a, gconstpointer b)
{
    gint64 x = ((const SizeRecord *)a)->row.size_bytes;
    gint64 y = ((const SizeRecord *)b)->row.size_bytes;
    return x < y ? -1 : x > y;
}

/* @c as an nccl-tests trace: the backend's headers, one row per size with the mean of its
 * samples (transfer full). */
static CsTrace *
record_trace(const Bench *b, ChoiceRecord *c)
{
    g_autoptr(GPtrArray) keys = cs_trace_header_keys(c->first);
    CsTrace *t = cs_trace_new(b->op, cs_trace_n_ranks(c->first));
    for (guint i = 0; i < keys->len; i++) {
        const char *k = g_ptr_array_index(keys, i);
        cs_trace_set_header(t, k, cs_trace_get_header(c->first, k));
    }
    cs_trace_set_header(t, "command", b->command);
    cs_trace_set_header(t, "samples",
                        "collsim crossover: each row is the mean of its repeated samples, each "
                        "sample the mean time of the timed iterations");
    g_array_sort(c->sizes, compare_size_records);
    for (guint i = 0; i < c->sizes->len; i++) {
        const SizeRecord *s = &g_array_index(c->sizes, SizeRecord, i);
        CsTraceRow row = s->row;
        double sum = 0.0;
        for (guint k = 0; k < s->samples->len; k++)
            sum += g_array_index(s->samples, double, k);
        double t_us = sum / s->samples->len;
        double factor = row.out_of_place.algbw_GBps > 0 && row.out_of_place.busbw_GBps > 0
                            ? row.out_of_place.busbw_GBps / row.out_of_place.algbw_GBps
                            : cs_op_busbw_factor(b->op, cs_trace_n_ranks(c->first));
        row.out_of_place.time_us = t_us;
        row.out_of_place.algbw_GBps = t_us > 0 ? (double)row.size_bytes / t_us / 1e3 : 0.0;
        row.out_of_place.busbw_GBps = row.out_of_place.algbw_GBps * factor;
        row.line = 0;
        cs_trace_add_row(t, &row);
    }
    return t;
}

/* "allreduce-ring-Simple-2ch.txt" */
static char *
trace_name(const Bench *b, const ChoiceRecord *c)
{
    g_autofree char *name = g_strdup_printf("%s-%s-%s-%dch.txt", cs_op_nccl_tests_name(b->op),
                                            cs_select_choice_algo_name(&c->choice),
                                            cs_proto_name(c->choice.proto), c->choice.n_channels);
    return g_strdelimit(g_steal_pointer(&name), "/ ", '_');
}

static gboolean
write_traces(const Bench *b, const char *dir, GPtrArray *traces, GPtrArray *paths, GError **error)
{
    for (guint i = 0; i < b->records->len; i++) {
        ChoiceRecord *c = g_ptr_array_index(b->records, i);
        g_autofree char *name = trace_name(b, c);
        CsTrace *t = record_trace(b, c);
        g_ptr_array_add(traces, t);
        if (dir == NULL)
            continue;
        char *path = g_build_filename(dir, name, NULL);
        g_ptr_array_add(paths, path);
        g_autofree char *text = cs_trace_to_string(t);
        if (!cs_cli_write_output(PROG, "--traces", path, text, -1, error))
            return FALSE;
    }
    return TRUE;
}

/* ---- Reports ---- */

typedef struct {
    CsXoverResult *result;
    gint64 recalibrated; /* bytes: the re-predicted crossover; 0 not asked, -1 gone */
} Row;

static const char *
moved_text(const Row *r)
{
    if (r->recalibrated == 0 || r->result->status != CS_XOVER_MEASURED)
        return "";
    if (r->recalibrated < 0)
        return "gone";
    if (r->recalibrated == r->result->predicted.size_bytes)
        return "unmoved";
    return cs_xover_moved_toward(r->result->predicted.size_bytes, r->recalibrated,
                                 r->result->measured_bytes)
               ? "toward"
               : "away";
}

static char *
to_table(const Bench *b, const GArray *rows, const CsXoverOptions *xo, const char *topo_name,
         gboolean calibrated)
{
    g_autoptr(GString) s = g_string_new(NULL);
    g_string_append_printf(s, "# collsim crossover: %s on %s, %d ranks, backend %s\n",
                           cs_op_name(b->op), topo_name, cs_topo_n_ranks(b->topo),
                           b->backend->name);
    g_string_append_printf(
        s,
        "# each point: both choices sampled alternately (%d to %d times each, -n %d iterations "
        "a sample) until the 95%% interval of their difference excludes 0 or lies within "
        "+-%.3g%%; bracket x%.3g, %d steps each way; bisection to x%.3g; at most %d points\n",
        xo->min_repeats, xo->max_repeats, b->iters, 100.0 * xo->tolerance, xo->factor, xo->steps,
        1.0 + xo->width, xo->max_points);
    g_string_append(s, "# measured: the first size the upper choice wins (the measured "
                       "difference's zero); interval: the largest size the lower choice won "
                       "and the smallest the upper one won\n");
    g_string_append(s, "# loss: time lost by following the prediction where a measurement "
                       "decided otherwise, at the predicted size and the most at any size\n");
    for (guint i = 0; i < rows->len; i++) {
        const Row *row = &g_array_index(rows, Row, i);
        const CsXoverResult *r = row->result;
        g_autofree char *from = cs_select_choice_label(&r->predicted.from);
        g_autofree char *to = cs_select_choice_label(&r->predicted.to);
        g_string_append_printf(s, "\n%s -> %s\n", from, to);
        g_string_append_printf(s, "  predicted   %" G_GINT64_FORMAT " B\n",
                               r->predicted.size_bytes);
        switch (r->status) {
        case CS_XOVER_MEASURED:
            g_string_append_printf(s,
                                   "  measured    %" G_GINT64_FORMAT
                                   " B, interval [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT
                                   "] B, ratio %.3g%s\n",
                                   r->measured_bytes, r->lo_bytes, r->hi_bytes, r->ratio,
                                   r->budget_spent ? " (budget spent before the width)" : "");
            break;
        case CS_XOVER_TIE:
            g_string_append_printf(
                s,
                "  measured    tie: within noise at every size from %" G_GINT64_FORMAT
                " to %" G_GINT64_FORMAT " B\n",
                r->lo_bytes, r->hi_bytes);
            break;
        case CS_XOVER_FROM_THROUGHOUT:
        case CS_XOVER_TO_THROUGHOUT:
            g_string_append_printf(s,
                                   "  measured    no crossover from %" G_GINT64_FORMAT
                                   " to %" G_GINT64_FORMAT " B: %s never lost\n",
                                   r->lo_bytes, r->hi_bytes,
                                   r->status == CS_XOVER_FROM_THROUGHOUT ? from : to);
            break;
        case CS_XOVER_UNMEASURABLE:
            g_string_append_printf(s, "  measured    cannot be measured on %s: %s\n",
                                   b->backend->name, r->why);
            continue;
        }
        g_string_append_printf(s, "  noise       %.2g%% (median 95%% half-width), %d samples\n",
                               r->noise_pct, r->n_samples);
        g_string_append_printf(s, "  loss        %.3g us (%.3g%%) at the predicted size",
                               r->loss_predicted_us, r->loss_predicted_pct);
        if (r->loss_max_us > 0)
            g_string_append_printf(s, "; at most %.3g us (%.3g%%) at %" G_GINT64_FORMAT " B",
                                   r->loss_max_us, r->loss_max_pct, r->loss_max_bytes);
        g_string_append(s, "\n");
        if (calibrated) {
            if (row->recalibrated > 0 && r->status == CS_XOVER_MEASURED)
                g_string_append_printf(
                    s, "  calibrated  predicts %" G_GINT64_FORMAT " B (%s)\n", row->recalibrated,
                    strcmp(moved_text(row), "toward") == 0 ? "moved toward the measured size"
                    : strcmp(moved_text(row), "away") == 0 ? "moved away from the measured size"
                                                           : "unmoved");
            else if (row->recalibrated > 0)
                g_string_append_printf(s, "  calibrated  predicts %" G_GINT64_FORMAT " B\n",
                                       row->recalibrated);
            else
                g_string_append(s, "  calibrated  the pair no longer crosses\n");
        }
        g_string_append_printf(s, "  %12s %12s %9s %12s %9s %12s %9s %7s %s\n", "size", "from(us)",
                               "+-", "to(us)", "+-", "diff(us)", "+-", "repeats", "verdict");
        for (guint k = 0; k < r->points->len; k++) {
            const CsXoverPoint *p = &g_array_index(r->points, CsXoverPoint, k);
            g_string_append_printf(s,
                                   "  %12" G_GINT64_FORMAT " %12.3f %9.3f %12.3f %9.3f %12.3f "
                                   "%9.3f %7d %s\n",
                                   p->size_bytes, p->from_us, p->from_ci_us, p->to_us, p->to_ci_us,
                                   p->diff_us, p->diff_ci_us, p->repeats,
                                   cs_xover_verdict_name(p->verdict));
        }
    }
    return g_string_free(g_steal_pointer(&s), FALSE);
}

static char *
csv_field(const char *text)
{
    if (strpbrk(text, ",\"\n") == NULL)
        return g_strdup(text);
    g_auto(GStrv) parts = g_strsplit(text, "\"", -1);
    g_autofree char *joined = g_strjoinv("\"\"", parts);
    return g_strdup_printf("\"%s\"", joined);
}

static char *
to_csv(const Bench *b, const GArray *rows)
{
    g_autoptr(GString) s = g_string_new(
        "collective,from,to,predicted_bytes,status,measured_bytes,lo_bytes,hi_bytes,ratio,"
        "noise_pct,loss_predicted_us,loss_predicted_pct,loss_max_us,loss_max_pct,"
        "loss_max_bytes,samples,points,budget_spent,recalibrated_bytes,recalibrated_moved,why\n");
    for (guint i = 0; i < rows->len; i++) {
        const Row *row = &g_array_index(rows, Row, i);
        const CsXoverResult *r = row->result;
        g_autofree char *from = cs_select_choice_label(&r->predicted.from);
        g_autofree char *to = cs_select_choice_label(&r->predicted.to);
        g_autofree char *why = csv_field(r->why != NULL ? r->why : "");
        gboolean m = r->status == CS_XOVER_MEASURED;
        g_autofree char *recal = row->recalibrated > 0
                                     ? g_strdup_printf("%" G_GINT64_FORMAT, row->recalibrated)
                                     : g_strdup("");
        if (r->status == CS_XOVER_UNMEASURABLE) {
            g_string_append_printf(s, "%s,%s,%s,%" G_GINT64_FORMAT ",%s,,,,,,,,,,,0,0,,,,%s\n",
                                   cs_op_nccl_tests_name(b->op), from, to, r->predicted.size_bytes,
                                   cs_xover_status_name(r->status), why);
            continue;
        }
        g_autofree char *measured
            = m ? g_strdup_printf("%" G_GINT64_FORMAT, r->measured_bytes) : g_strdup("");
        g_autofree char *ratio = m ? g_strdup_printf("%.4g", r->ratio) : g_strdup("");
        g_string_append_printf(
            s,
            "%s,%s,%s,%" G_GINT64_FORMAT ",%s,%s,%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT
            ",%s,%.3g,%.4g,%.4g,%.4g,%.4g,%" G_GINT64_FORMAT ",%d,%u,%s,%s,%s,%s\n",
            cs_op_nccl_tests_name(b->op), from, to, r->predicted.size_bytes,
            cs_xover_status_name(r->status), measured, r->lo_bytes, r->hi_bytes, ratio,
            r->noise_pct, r->loss_predicted_us, r->loss_predicted_pct, r->loss_max_us,
            r->loss_max_pct, r->loss_max_bytes, r->n_samples, r->points->len,
            r->budget_spent ? "yes" : "no", recal, moved_text(row), why);
    }
    return g_string_free(g_steal_pointer(&s), FALSE);
}

static cJSON *
choice_json(const CsSelectChoice *c)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "algorithm", cs_select_choice_algo_name(c));
    cJSON_AddStringToObject(o, "protocol", cs_proto_name(c->proto));
    cJSON_AddNumberToObject(o, "channels", c->n_channels);
    return o;
}

static char *
to_json(const Bench *b, const GArray *rows, const CsXoverOptions *xo, const char *topo_name,
        const GPtrArray *paths)
{
    g_autoptr(cJSON) root = cJSON_CreateObject();
    cs_json_add_schema(root, "collsim-crossover", CS_JSON_SCHEMA_VERSION);
    cJSON_AddStringToObject(root, "collsim", COLLSIM_VERSION);
    cJSON_AddStringToObject(root, "topology", topo_name);
    cJSON_AddNumberToObject(root, "ranks", cs_topo_n_ranks(b->topo));
    cJSON_AddStringToObject(root, "backend", b->backend->name);
    cJSON_AddStringToObject(root, "collective", cs_op_nccl_tests_name(b->op));
    cJSON *search = cJSON_AddObjectToObject(root, "search");
    cJSON_AddNumberToObject(search, "iterations", b->iters);
    cJSON_AddNumberToObject(search, "min_repeats", xo->min_repeats);
    cJSON_AddNumberToObject(search, "max_repeats", xo->max_repeats);
    cJSON_AddNumberToObject(search, "tolerance_pct", 100.0 * xo->tolerance);
    cJSON_AddNumberToObject(search, "bracket_factor", xo->factor);
    cJSON_AddNumberToObject(search, "bracket_steps", xo->steps);
    cJSON_AddNumberToObject(search, "width_pct", 100.0 * xo->width);
    cJSON_AddNumberToObject(search, "max_points", xo->max_points);
    cJSON_AddNumberToObject(search, "confidence", 0.95);
    cJSON *traces = cJSON_AddArrayToObject(root, "traces");
    for (guint i = 0; paths != NULL && i < paths->len; i++)
        cJSON_AddItemToArray(traces, cJSON_CreateString(g_ptr_array_index(paths, i)));
    cJSON *list = cJSON_AddArrayToObject(root, "crossovers");
    for (guint i = 0; i < rows->len; i++) {
        const Row *row = &g_array_index(rows, Row, i);
        const CsXoverResult *r = row->result;
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToObject(o, "from", choice_json(&r->predicted.from));
        cJSON_AddItemToObject(o, "to", choice_json(&r->predicted.to));
        cJSON_AddNumberToObject(o, "predicted_bytes", (double)r->predicted.size_bytes);
        cJSON_AddStringToObject(o, "status", cs_xover_status_name(r->status));
        if (r->status == CS_XOVER_UNMEASURABLE) {
            cJSON_AddStringToObject(o, "why", r->why);
            cJSON_AddItemToArray(list, o);
            continue;
        }
        if (r->status == CS_XOVER_MEASURED) {
            cJSON_AddNumberToObject(o, "measured_bytes", (double)r->measured_bytes);
            cJSON_AddNumberToObject(o, "ratio", r->ratio);
        }
        cJSON_AddNumberToObject(o, "lo_bytes", (double)r->lo_bytes);
        cJSON_AddNumberToObject(o, "hi_bytes", (double)r->hi_bytes);
        cJSON_AddNumberToObject(o, "noise_pct", r->noise_pct);
        cJSON_AddNumberToObject(o, "loss_predicted_us", r->loss_predicted_us);
        cJSON_AddNumberToObject(o, "loss_predicted_pct", r->loss_predicted_pct);
        cJSON_AddNumberToObject(o, "loss_max_us", r->loss_max_us);
        cJSON_AddNumberToObject(o, "loss_max_pct", r->loss_max_pct);
        cJSON_AddNumberToObject(o, "loss_max_bytes", (double)r->loss_max_bytes);
        cJSON_AddNumberToObject(o, "samples", r->n_samples);
        cJSON_AddBoolToObject(o, "budget_spent", r->budget_spent);
        if (row->recalibrated != 0) {
            if (row->recalibrated > 0)
                cJSON_AddNumberToObject(o, "recalibrated_bytes", (double)row->recalibrated);
            else
                cJSON_AddNullToObject(o, "recalibrated_bytes");
            if (*moved_text(row) != '\0')
                cJSON_AddStringToObject(o, "recalibrated_moved", moved_text(row));
        }
        cJSON *pts = cJSON_AddArrayToObject(o, "points");
        for (guint k = 0; k < r->points->len; k++) {
            const CsXoverPoint *p = &g_array_index(r->points, CsXoverPoint, k);
            cJSON *q = cJSON_CreateObject();
            cJSON_AddNumberToObject(q, "size_bytes", (double)p->size_bytes);
            cJSON_AddNumberToObject(q, "repeats", p->repeats);
            cJSON_AddNumberToObject(q, "from_us", p->from_us);
            cJSON_AddNumberToObject(q, "from_ci_us", isfinite(p->from_ci_us) ? p->from_ci_us : -1);
            cJSON_AddNumberToObject(q, "to_us", p->to_us);
            cJSON_AddNumberToObject(q, "to_ci_us", isfinite(p->to_ci_us) ? p->to_ci_us : -1);
            cJSON_AddNumberToObject(q, "diff_us", p->diff_us);
            cJSON_AddNumberToObject(q, "diff_ci_us", isfinite(p->diff_ci_us) ? p->diff_ci_us : -1);
            cJSON_AddStringToObject(q, "verdict", cs_xover_verdict_name(p->verdict));
            cJSON_AddItemToArray(pts, q);
        }
        cJSON_AddItemToArray(list, o);
    }
    g_autofree char *text = cs_json_print(root, TRUE);
    return g_strconcat(text, "\n", NULL);
}

/* ---- Tuning tables with the measured boundaries ---- */

/* One note line on what became of @r's boundary in the tuning table. */
static char *
boundary_note(const Bench *b, const CsXoverResult *r, const CsSelectMoved *moved,
              gboolean nccl_format)
{
    g_autofree char *from = cs_select_choice_label(&r->predicted.from);
    g_autofree char *to = cs_select_choice_label(&r->predicted.to);
    g_autofree char *pair = g_strdup_printf("%s %s -> %s", cs_op_name(b->op), from, to);
    const gint64 p = r->predicted.size_bytes;
    const char *absent = nccl_format && !moved->in_nccl
                             ? "; not NCCL's algorithms: not in this table, which holds NCCL's"
                             : "";
    switch (r->status) {
    case CS_XOVER_MEASURED:
        if (moved->kept || !moved->found)
            return g_strdup_printf("predicted kept: %s at %" G_GINT64_FORMAT
                                   " B: the measured %" G_GINT64_FORMAT
                                   " B (interval %" G_GINT64_FORMAT " .. %" G_GINT64_FORMAT
                                   " B) reaches a neighbouring boundary%s",
                                   pair, p, r->measured_bytes, r->lo_bytes, r->hi_bytes, absent);
        return g_strdup_printf("measured: %s at %" G_GINT64_FORMAT
                               " B (95%% interval %" G_GINT64_FORMAT " .. %" G_GINT64_FORMAT
                               " B; predicted %" G_GINT64_FORMAT " B)%s",
                               pair, r->measured_bytes, r->lo_bytes, r->hi_bytes, p, absent);
    case CS_XOVER_TIE:
        return g_strdup_printf("predicted kept: %s at %" G_GINT64_FORMAT
                               " B: a tie, within noise at every size from %" G_GINT64_FORMAT
                               " to %" G_GINT64_FORMAT " B%s",
                               pair, p, r->lo_bytes, r->hi_bytes, absent);
    case CS_XOVER_FROM_THROUGHOUT:
    case CS_XOVER_TO_THROUGHOUT:
        return g_strdup_printf("predicted kept: %s at %" G_GINT64_FORMAT
                               " B: no measured crossover, %s never lost from %" G_GINT64_FORMAT
                               " to %" G_GINT64_FORMAT " B%s",
                               pair, p, r->status == CS_XOVER_FROM_THROUGHOUT ? from : to,
                               r->lo_bytes, r->hi_bytes, absent);
    case CS_XOVER_UNMEASURABLE:
        break;
    }
    return g_strdup_printf("predicted kept: %s at %" G_GINT64_FORMAT
                           " B: cannot be measured on %s: %s%s",
                           pair, p, b->backend->name, r->why, absent);
}

/* @sel (the prediction the crossovers came from) as a tuning table in @format, each
 * measured crossover's boundary moved to its measured size, with notes saying which
 * boundaries were measured, how, and where the traces are. (transfer full) */
static char *
measured_tuning(CsSelection *sel, const Bench *b, const GArray *rows, const CsXoverOptions *xo,
                const GPtrArray *paths, CsSelectFormat format)
{
    const guint n = rows->len;
    g_autofree CsSelectBoundary *moves = g_new0(CsSelectBoundary, MAX(n, 1));
    g_autofree CsSelectMoved *moved = g_new0(CsSelectMoved, MAX(n, 1));
    for (guint i = 0; i < n; i++) {
        const CsXoverResult *r = g_array_index(rows, Row, i).result;
        moves[i].op = b->op;
        moves[i].from = r->predicted.from;
        moves[i].to = r->predicted.to;
        moves[i].predicted_bytes = r->predicted.size_bytes;
        moves[i].bytes = r->status == CS_XOVER_MEASURED ? r->measured_bytes : 0;
    }
    cs_selection_move_boundaries(sel, moves, n, moved);

    const gboolean nccl_format
        = format == CS_SELECT_FORMAT_ENV || format == CS_SELECT_FORMAT_TUNER_CSV;
    g_autofree char *head = g_strdup_printf(
        "boundaries measured by collsim crossover --backend %s, %d ranks: a boundary marked "
        "measured is the measured crossover; every other boundary, the times and the gains "
        "are predicted",
        b->backend->name, cs_topo_n_ranks(b->topo));
    cs_selection_add_note(sel, head);
    g_autofree char *search = g_strdup_printf(
        "search: both sides sampled alternately %d to %d times per size (-n %d), 95%% Student-t "
        "interval of the paired difference, tolerance %.3g%%",
        xo->min_repeats, xo->max_repeats, b->iters, 100.0 * xo->tolerance);
    cs_selection_add_note(sel, search);
    for (guint i = 0; i < n; i++) {
        g_autofree char *note
            = boundary_note(b, g_array_index(rows, Row, i).result, &moved[i], nccl_format);
        cs_selection_add_note(sel, note);
    }
    for (guint i = 0; i < paths->len; i++) {
        g_autofree char *note = g_strdup_printf("trace: %s", (char *)g_ptr_array_index(paths, i));
        cs_selection_add_note(sel, note);
    }
    if (paths->len == 0)
        cs_selection_add_note(sel, "traces: none written (crossover without --traces DIR)");
    g_autofree char *command = g_strdup_printf("command: %s", b->command);
    cs_selection_add_note(sel, command);
    return cs_selections_emit(&sel, 1, format);
}

/* ---- The command ---- */

static gboolean
parse_fraction(const char *flag, const char *text, double *value, GError **error)
{
    double v;
    if (!cs_units_parse_decimal(text, &v) || !(v > 0) || !(v < 1000))
        return cs_cli_usage_error(error, PROG, "%s: \"%s\" is not a percentage above 0", flag,
                                  text);
    *value = v / 100.0;
    return TRUE;
}

/* --between A,B: each name an algorithm or a choice label prefix ("ring", "ring/Simple"). */
static gboolean
choice_matches(const CsSelectChoice *c, const char *name)
{
    g_autofree char *label = cs_select_choice_label(c);
    return g_ascii_strcasecmp(cs_select_choice_algo_name(c), name) == 0
           || g_ascii_strncasecmp(label, name, strlen(name)) == 0;
}

static gboolean
parse_options(Options *o, CsXoverOptions *xo, GError **error)
{
    cs_xover_options_init(xo);
    if (o->repeats != NULL) {
        g_auto(GStrv) parts = g_strsplit(o->repeats, ",", -1);
        guint64 lo = 0;
        guint64 hi = 0;
        if (g_strv_length(parts) != 2
            || !g_ascii_string_to_unsigned(parts[0], 10, 2, 1000, &lo, NULL)
            || !g_ascii_string_to_unsigned(parts[1], 10, 2, 1000, &hi, NULL) || hi < lo)
            return cs_cli_usage_error(error, PROG,
                                      "--repeats: \"%s\" is not MIN,MAX with 2 <= MIN <= MAX "
                                      "<= 1000",
                                      o->repeats);
        xo->min_repeats = (int)lo;
        xo->max_repeats = (int)hi;
    }
    if (o->tolerance != NULL && !parse_fraction("--tolerance", o->tolerance, &xo->tolerance, error))
        return FALSE;
    if (o->width != NULL && !parse_fraction("--width", o->width, &xo->width, error))
        return FALSE;
    if (o->factor != NULL
        && (!cs_units_parse_decimal(o->factor, &xo->factor) || !(xo->factor >= 1.5)
            || !(xo->factor <= 1024)))
        return cs_cli_usage_error(error, PROG, "--factor: \"%s\" is not between 1.5 and 1024",
                                  o->factor);
    if (o->steps < 1 || o->steps > 32)
        return cs_cli_usage_error(error, PROG, "--steps: %d; between 1 and 32", o->steps);
    xo->steps = o->steps;
    if (o->max_points < 1 || o->max_points > 1000)
        return cs_cli_usage_error(error, PROG, "--max-points: %d; between 1 and 1000",
                                  o->max_points);
    xo->max_points = o->max_points;
    if (o->max_bytes <= 0)
        return cs_cli_usage_error(error, PROG, "-e: the largest size must be positive");
    xo->max_bytes = o->max_bytes;
    if (o->iters < 1)
        return cs_cli_usage_error(error, PROG, "-n: %d iterations; at least 1", o->iters);
    if (o->warmup < 0)
        return cs_cli_usage_error(error, PROG, "-w: %d warm-up iterations; at least 0", o->warmup);
    if (o->virtual_ranks < 0)
        return cs_cli_usage_error(error, PROG, "--virtual-ranks: %d is negative", o->virtual_ranks);
    return TRUE;
}

static gboolean
check_traces_dir(const char *dir, GError **error)
{
    if (dir == NULL)
        return TRUE;
    if (g_file_test(dir, G_FILE_TEST_EXISTS) && !g_file_test(dir, G_FILE_TEST_IS_DIR)) {
        g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_INPUT,
                    PROG ": --traces %s: exists and is not a directory", dir);
        return FALSE;
    }
    if (g_mkdir_with_parents(dir, 0777) != 0) {
        int e = errno;
        g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_INPUT, PROG ": --traces %s: %s", dir,
                    g_strerror(e));
        return FALSE;
    }
    return TRUE;
}

/* Refits @topo on @traces and sets each row's re-predicted crossover. */
static gboolean
recalibrate(const CsTopo *topo, const CsSelectOptions *sopts, CsTrace *const *traces, int n,
            GArray *rows, Bench *b, char **summary, GError **error)
{
    g_autoptr(GError) local = NULL;
    const CsTopo *const one[] = { topo };
    cs_cli_progress_restart(&b->progress, 1, "fits");
    g_autoptr(GPtrArray) fitted
        = cs_calibrate_fit_joint_full(one, 1, traces, &n, &sopts->predict, CS_CALIB_LOSS_CAUCHY,
                                      CS_CALIB_PRIOR_WEIGHT, NULL, fit_evaluated, b, &local);
    CsCalibration *cal = fitted != NULL ? g_ptr_array_steal_index(fitted, 0) : NULL;
    if (cal != NULL) {
        g_autofree char *done
            = g_strdup_printf("the fit to the measurements: rms %.1f%%", 100.0 * cal->rms_after);
        cs_cli_progress_step_text(&b->progress, done);
    }
    if (cal == NULL) {
        g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_FAILED, PROG ": --calibrate: %s",
                    local->message);
        return FALSE;
    }
    g_autoptr(CsSelection) sel = cs_select_run(cal->topo, sopts, &local);
    if (sel == NULL) {
        cs_calibration_free(cal);
        g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_FAILED, PROG ": --calibrate: %s",
                    local->message);
        return FALSE;
    }
    const CsSelectTable *table = cs_selection_n_tables(sel) > 0 ? cs_selection_table(sel, 0) : NULL;
    for (guint i = 0; i < rows->len; i++) {
        Row *row = &g_array_index(rows, Row, i);
        const CsSelectCrossover *c
            = table != NULL ? cs_xover_find_pair(table, &row->result->predicted) : NULL;
        row->recalibrated = c != NULL ? c->size_bytes : -1;
    }
    *summary = g_strdup_printf("# calibrated on the measurements: rms time error %.1f%% -> "
                               "%.1f%% over %d rows\n",
                               100.0 * cal->rms_before, 100.0 * cal->rms_after, cal->n_rows);
    cs_calibration_free(cal);
    return TRUE;
}

static gboolean
crossover(Options *o, const char *command, GError **error)
{
    g_autoptr(GError) cause = NULL;
    CsXoverOptions xo;
    CsSelectOptions sopts;

    if (o->rest != NULL && o->rest[0] != NULL)
        return cs_cli_usage_error(error, PROG, "unexpected argument \"%s\"", o->rest[0]);
    CsCliProgressMode progress_mode;
    if (!cs_cli_progress_mode(PROG, o->progress, o->quiet, &progress_mode, error))
        return FALSE;
    if (o->backend == NULL)
        return cs_cli_usage_error(error, PROG, "--backend is required (cuda, nccl or mpi)");
    if (o->topo == NULL)
        return cs_cli_usage_error(error, PROG, "--topo is required");
    const CsBackend *backend = cs_backend_lookup(o->backend, &cause);
    if (backend == NULL)
        return cs_cli_flag_error(error, PROG, "--backend", g_steal_pointer(&cause));
    const char *format = o->format != NULL ? o->format : "table";
    CsSelectFormat emit = CS_SELECT_FORMAT_TABLE;
    if (o->emit != NULL && !cs_select_format_from_name(o->emit, &emit))
        return cs_cli_usage_error(error, PROG,
                                  "--emit: \"%s\" is not one of table, json, env, "
                                  "nccl-tuner-csv",
                                  o->emit);
    if (o->emit != NULL && emit == CS_SELECT_FORMAT_MEASUREMENTS_CSV)
        return cs_cli_usage_error(error, PROG,
                                  "--emit nccl-measurements-csv: it holds predicted times per "
                                  "size under a header that must come first, so it cannot say "
                                  "which boundaries were measured (table, json, env or "
                                  "nccl-tuner-csv)");
    if (o->emit == NULL && o->emit_output != NULL)
        return cs_cli_usage_error(error, PROG, "--emit-output needs --emit FORMAT");
    if (strcmp(format, "table") != 0 && strcmp(format, "csv") != 0 && strcmp(format, "json") != 0)
        return cs_cli_usage_error(error, PROG, "--format: \"%s\" (expected table, csv or json)",
                                  format);
    if (!parse_options(o, &xo, error))
        return FALSE;
    cs_select_options_init(&sopts);
    CsOp op = CS_OP_ALL_REDUCE;
    if (o->op != NULL && !cs_op_from_name(o->op, &op, &cause))
        return cs_cli_flag_error(error, PROG, "--op", g_steal_pointer(&cause));
    sopts.ops = CS_OP_BIT(op);
    if (o->dtype != NULL && !cs_dtype_from_name(o->dtype, &sopts.predict.dtype, &cause))
        return cs_cli_flag_error(error, PROG, "-d", g_steal_pointer(&cause));
    g_auto(GStrv) between = NULL;
    if (o->between != NULL) {
        between = g_strsplit(o->between, ",", -1);
        if (g_strv_length(between) != 2 || *between[0] == '\0' || *between[1] == '\0')
            return cs_cli_usage_error(error, PROG,
                                      "--between: \"%s\" is not two names A,B (e.g. "
                                      "recursive_doubling,rhd)",
                                      o->between);
    }
    CsSelectShape shape = { 0, 0 };
    if (o->ranks != NULL) {
        guint64 n = 0;
        if (!g_ascii_string_to_unsigned(o->ranks, 10, 1, G_MAXINT32, &n, NULL))
            return cs_cli_usage_error(error, PROG, "--ranks: \"%s\" is not a rank count", o->ranks);
        shape.nranks = (int)n;
    }
    if (!cs_cli_check_output(PROG, "--output", o->output, error)
        || !cs_cli_check_output(PROG, "--emit-output", o->emit_output, error))
        return FALSE;
    /* Before MPI starts, so that every process fails alike. */
    if (!check_traces_dir(o->traces, error))
        return FALSE;
    if (o->plot != NULL && !cs_cli_check_plot(PROG, o->plot, error))
        return FALSE;
    if (!backend->available) {
        g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_UNAVAILABLE, PROG ": %s", backend->missing);
        return FALSE;
    }
    /* Every process must see the same times to choose the same next size: the mpi backend
     * shares rank 0's; cuda and nccl measure in one process. */
    if (strcmp(backend->name, "mpi") != 0 && cs_backend_multi_process())
        return cs_cli_usage_error(error, PROG,
                                  "--backend %s measures in one process (every local GPU): "
                                  "run it without mpirun",
                                  backend->name);
    g_autoptr(CsTopo) full = cs_cli_load_topo(PROG, o->topo, o->sets, error);
    if (full == NULL)
        return FALSE;
    g_autoptr(CsTopo) topo = cs_select_shape_topo(full, &shape, NULL, &cause);
    if (topo == NULL)
        return cs_cli_flag_error(error, PROG, "--ranks", g_steal_pointer(&cause));

    g_autoptr(GPtrArray) records = g_ptr_array_new_with_free_func(choice_record_free);
    Bench bench = {
        .backend = backend,
        .schedules = strcmp(backend->name, "nccl") != 0,
        .op = op,
        .dtype = sopts.predict.dtype,
        .iters = o->iters,
        .warmup = o->warmup,
        .virtual_ranks = o->virtual_ranks,
        .topo = topo,
        .command = command,
        .records = records,
        .max_points = xo.max_points,
    };
    cs_cli_progress_init(&bench.progress, PROG, 0, progress_mode);

    /* The fastest per size, as measured: no hysteresis toward NCCL's pick. */
    sopts.min_gain_pct = 0.0;
    sopts.nccl_only = o->nccl_only || strcmp(backend->name, "nccl") == 0;
    sopts.predict.nranks = 0;
    sopts.progress = select_progress;
    sopts.progress_data = &bench;
    g_autoptr(CsSelection) sel = cs_select_run(topo, &sopts, &cause);
    cs_cli_progress_finish(&bench.progress);
    if (sel == NULL) {
        g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_INPUT, PROG ": %s", cause->message);
        return FALSE;
    }
    const CsSelectTable *table = cs_selection_table(sel, 0);
    xo.granularity = MAX(table->granularity, 1);
    xo.min_bytes = xo.granularity;

    CsXoverSource source = {
        .can_measure = bench_can_measure,
        .measure = bench_measure,
        .measured = point_measured,
        .user_data = &bench,
    };

    g_autoptr(GPtrArray) chosen = g_ptr_array_new();
    for (guint i = 0; table->crossovers != NULL && i < table->crossovers->len; i++) {
        const CsSelectCrossover *c = &g_array_index(table->crossovers, CsSelectCrossover, i);
        if (between != NULL
            && !((choice_matches(&c->from, between[0]) && choice_matches(&c->to, between[1]))
                 || (choice_matches(&c->from, between[1]) && choice_matches(&c->to, between[0]))))
            continue;
        g_ptr_array_add(chosen, (gpointer)c);
    }
    cs_cli_progress_restart(&bench.progress, (int)chosen->len, "crossovers");
    g_autoptr(GArray) rows = g_array_new(FALSE, TRUE, sizeof(Row));
    for (guint i = 0; i < chosen->len; i++) {
        const CsSelectCrossover *c = g_ptr_array_index(chosen, i);
        g_autofree char *from = cs_select_choice_label(&c->from);
        g_autofree char *to = cs_select_choice_label(&c->to);
        g_autofree char *pair = g_strdup_printf("%s -> %s", from, to);
        bench.from = from;
        bench.to = to;
        Row row = { 0 };
        gboolean ok = cs_xover_measure(op, c, &xo, &source, &row.result, error);
        if (!ok) {
            cs_cli_progress_finish(&bench.progress);
            for (guint k = 0; k < rows->len; k++)
                cs_xover_result_free(g_array_index(rows, Row, k).result);
            return FALSE;
        }
        if (speaks(&bench)) {
            g_autofree char *done = g_strdup_printf("%s: %s, %u points", pair,
                                                    cs_xover_status_name(row.result->status),
                                                    row.result->points->len);
            cs_cli_progress_step_text(&bench.progress, done);
        }
        g_array_append_val(rows, row);
    }
    bench.from = bench.to = NULL;
    cs_cli_progress_finish(&bench.progress);
    gboolean ok = TRUE;
    if (rows->len == 0) {
        g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_INPUT,
                    PROG ": %s on %s predicts no crossover%s%s%s", cs_op_name(op),
                    cs_topo_name(topo), between != NULL ? " between " : "",
                    between != NULL ? o->between : "",
                    between == NULL && table->note != NULL ? table->note : "");
        ok = FALSE;
    }
    g_autoptr(GPtrArray) traces = g_ptr_array_new_with_free_func((GDestroyNotify)cs_trace_free);
    g_autoptr(GPtrArray) paths = g_ptr_array_new_with_free_func(g_free);
    g_autofree char *calib_summary = NULL;
    gboolean reporting = cs_backend_reporting();
    if (ok)
        ok = write_traces(&bench, reporting ? o->traces : NULL, traces, paths, error);
    if (ok && reporting && o->calibrate && traces->len > 0)
        ok = recalibrate(topo, &sopts, (CsTrace *const *)traces->pdata, (int)traces->len, rows,
                         &bench, &calib_summary, error);
    cs_cli_progress_finish(&bench.progress);
    /* The files first: a write that fails leaves no report that looks like success. */
    if (ok && reporting && o->plot != NULL) {
        g_autoptr(GPtrArray) results = g_ptr_array_new();
        for (guint k = 0; k < rows->len; k++)
            g_ptr_array_add(results, g_array_index(rows, Row, k).result);
        g_autofree char *title
            = g_strdup_printf("collsim crossover: %s on %s, %d ranks, backend %s", cs_op_name(op),
                              o->topo, cs_topo_n_ranks(topo), backend->name);
        if (!cs_plot_crossovers((CsXoverResult *const *)results->pdata, (int)results->len,
                                backend->name, title, command, o->plot, error)) {
            g_prefix_error(error, PROG ": --plot: ");
            ok = FALSE;
        }
    }
    if (ok && reporting && o->emit != NULL) {
        g_autofree char *text = measured_tuning(sel, &bench, rows, &xo, paths, emit);
        ok = cs_cli_write_output(PROG, "--emit-output", o->emit_output, text, -1, error);
    }
    /* With --emit to stdout, the report goes only to --output. */
    if (ok && reporting && (o->emit == NULL || o->emit_output != NULL || o->output != NULL)) {
        g_autofree char *text = NULL;
        if (strcmp(format, "csv") == 0)
            text = to_csv(&bench, rows);
        else if (strcmp(format, "json") == 0)
            text = to_json(&bench, rows, &xo, o->topo, paths);
        else {
            g_autofree char *body = to_table(&bench, rows, &xo, o->topo, o->calibrate);
            text = g_strconcat(body, calib_summary != NULL ? "\n" : "",
                               calib_summary != NULL ? calib_summary : "", NULL);
        }
        ok = cs_cli_write_output(PROG, "--output", o->output, text, -1, error);
    }
    for (guint k = 0; k < rows->len; k++)
        cs_xover_result_free(g_array_index(rows, Row, k).result);
    return ok;
}

/**
 * cs_cli_crossover:
 * `collsim crossover --backend B --topo T [--op OP] [--between A,B] ...`: measures the
 * predicted crossovers on a backend. Returns FALSE with CS_CLI_ERROR_USAGE for bad flags,
 * _INPUT for a topology or sizes the backend refuses, _UNAVAILABLE when the backend was built
 * out, _FAILED when a run fails or computes wrong elements.
 */
gboolean
cs_cli_crossover(int argc, char **argv, GError **error)
{
    Options o
        = { .iters = 20, .warmup = 5, .steps = 3, .max_points = 14, .max_bytes = (gint64)1 << 30 };
    const GOptionEntry entries[] = {
        { "backend", 0, 0, G_OPTION_ARG_STRING, &o.backend, "cuda, nccl or mpi (required)",
          "NAME" },
        { "topo", 0, 0, G_OPTION_ARG_STRING, &o.topo,
          "Topology: a shipped name or a JSON file (required)", "T" },
        CS_CLI_SET_ENTRY(&o.sets),
        { "op", 0, 0, G_OPTION_ARG_STRING, &o.op, "Collective (default allreduce)", "OP" },
        { "between", 0, 0, G_OPTION_ARG_STRING, &o.between,
          "Only the crossover between these two choices (algorithm names or labels)", "A,B" },
        { "ranks", 0, 0, G_OPTION_ARG_STRING, &o.ranks,
          "Ranks of the communicator (default: all of the topology's; mpi: mpirun -np)", "N" },
        { "datatype", 'd', 0, G_OPTION_ARG_STRING, &o.dtype, "Datatype (default float)", "TYPE" },
        { "iters", 'n', 0, G_OPTION_ARG_INT, &o.iters, "Timed iterations per sample (default 20)",
          "N" },
        { "warmup_iters", 'w', 0, G_OPTION_ARG_INT, &o.warmup,
          "Warm-up iterations per sample (default 5)", "N" },
        { "repeats", 0, 0, G_OPTION_ARG_STRING, &o.repeats,
          "Samples of each side per size: at least MIN, at most MAX (default 3,10)", "MIN,MAX" },
        { "tolerance", 0, 0, G_OPTION_ARG_STRING, &o.tolerance,
          "Sides within PCT percent are equal (default 3)", "PCT" },
        { "factor", 0, 0, G_OPTION_ARG_STRING, &o.factor,
          "Bracket: sizes the prediction times or over F^i (default 4)", "F" },
        { "steps", 0, 0, G_OPTION_ARG_INT, &o.steps,
          "Bracket: at most K sizes each way (default 3)", "K" },
        { "width", 0, 0, G_OPTION_ARG_STRING, &o.width,
          "Bisect until the interval is within PCT percent (default 25)", "PCT" },
        { "max-points", 0, 0, G_OPTION_ARG_INT, &o.max_points,
          "Budget: sizes measured per crossover (default 14)", "N" },
        { "maxbytes", 'e', 0, G_OPTION_ARG_CALLBACK, CS_CLI_ARG_FUNC(cs_cli_parse_size_arg),
          "Largest size measured (default 1G)", "SIZE" },
        { "virtual-ranks", 0, 0, G_OPTION_ARG_INT, &o.virtual_ranks, "cuda: P ranks on one GPU",
          "P" },
        { "format", 0, 0, G_OPTION_ARG_STRING, &o.format, "table (default), csv or json",
          "FORMAT" },
        { "output", 0, 0, G_OPTION_ARG_FILENAME, &o.output,
          "Write the report to FILE instead of stdout", "FILE" },
        { "traces", 0, 0, G_OPTION_ARG_FILENAME, &o.traces,
          "Write one nccl-tests trace per algorithm into DIR", "DIR" },
        { "calibrate", 0, 0, G_OPTION_ARG_NONE, &o.calibrate,
          "Refit the topology on the measurements and predict the crossovers again", NULL },
        { "plot", 0, 0, G_OPTION_ARG_FILENAME, &o.plot,
          "Also draw each crossover's measured times of both sides with their intervals, the "
          "predicted and the measured crossover into FILE (.svg, .png or .pdf)",
          "FILE" },
        { "nccl-only", 0, 0, G_OPTION_ARG_NONE, &o.nccl_only,
          "Only the crossovers between algorithms NCCL implements (as --backend nccl)", NULL },
        { "progress", 0, 0, G_OPTION_ARG_NONE, &o.progress,
          "Print progress on stderr: a step per crossover, with an estimate of the time left "
          "once one has ended, and a line per size measured (by default only on a terminal, "
          "once a second has passed; under mpirun, rank 0 once measuring has begun)",
          NULL },
        { "quiet", 0, 0, G_OPTION_ARG_NONE, &o.quiet, "Print no progress", NULL },
        { "emit", 0, 0, G_OPTION_ARG_STRING, &o.emit,
          "Also write the tuning table with the measured boundaries: table, json, env or "
          "nccl-tuner-csv (as select --emit)",
          "FORMAT" },
        { "emit-output", 0, 0, G_OPTION_ARG_FILENAME, &o.emit_output,
          "Write the --emit table to FILE (default stdout; the report then goes to --output "
          "only)",
          "FILE" },
        { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_STRING_ARRAY, &o.rest, NULL, NULL },
        { NULL, 0, 0, 0, NULL, NULL, NULL },
    };
    const CsCliUnitTarget targets[] = { { "maxbytes", &o.max_bytes }, { NULL, NULL } };
    g_autofree char *command = cs_cli_command_line(argc, argv);

    gboolean ok = cs_cli_parse_units(
        &argc, &argv, entries, targets, NULL,
        "Measure the crossovers select predicts on a real backend.",
        "For each predicted crossover (the size where the best algorithm/protocol changes),\n"
        "both choices are measured alternately at the predicted size, then at sizes x/÷ F^i\n"
        "until each side wins once (a geometric bracket), then at the geometric middle of the\n"
        "widest gap until the interval is within --width. Each size is sampled until the 95%\n"
        "interval of the paired difference excludes 0 (decided) or lies within --tolerance\n"
        "(equal), or --repeats runs out. Reports predicted and measured size, the interval,\n"
        "the ratio, the noise, and the time lost by following the prediction. A crossover\n"
        "whose two sides are never told apart is a tie; one the backend cannot run (NVLS on\n"
        "CPU processes, an algorithm NCCL does not have) is listed as unmeasurable.\n"
        "--emit FORMAT writes the prediction's tuning table (as select --emit, --min-gain 0)\n"
        "with each measured crossover's boundary at its measured size; ties, crossovers the\n"
        "backend cannot measure and those with no crossover in the window keep the predicted\n"
        "size, and comment lines (JSON: notes) say which, with the backend, the intervals and\n"
        "the traces.\n"
        "mpi: mpirun -np P collsim crossover --backend mpi --topo cpu-host-shm --ranks P.\n"
        "See docs/crossovers.md.",
        error);
    if (ok)
        ok = crossover(&o, command, error);
    cs_backend_shutdown();
    options_clear(&o);
    return ok;
}
