// SPDX-License-Identifier: MIT
/* `collsim validate`: measured nccl-tests traces against the engine's predictions, row by row,
 * with per-regime summaries, crossovers between forced algorithms, and an optional error gate. */
#include "config.h"

#include "base/fileio.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>

#include "cli/cli.h"
#include "analysis/plot.h"
#include "models/nccl.h"
#include "models/netmodel.h"
#include "analysis/validate.h"
#include "base/json_util.h"

static void
print_summary_line(const char *label, const CsValidateSummary *s)
{
    if (s->n_rows == 0) {
        printf("#   %-28s no rows\n", label);
        return;
    }
    printf("#   %-28s %6.1f%% geomean |busbw error| over %2d rows, max %.1f%% at %" G_GINT64_FORMAT
           " B\n",
           label, 100 * s->geomean_abs, s->n_rows, 100 * s->max_abs, s->max_size_bytes);
}

static void
print_report(const CsValidateReport *r, const CsTopo *topo)
{
    printf("# validate: %s\n", r->origin);
    printf("#   topology %s, %s on %d ranks, algorithm %s, protocol %s\n", cs_topo_name(topo),
           cs_op_name(r->op), r->nranks, r->forced_algo != NULL ? r->forced_algo : "not forced",
           r->forced_proto != NULL ? r->forced_proto : "not forced");
    if (r->placement_said)
        printf("#   placed: %s\n", r->placement);
    if (r->inferred != NULL)
        printf("#   not stated in the trace: %s\n", r->inferred);
    for (guint i = 0; i < r->warnings->len; i++)
        printf("#   warning: %s\n", (const char *)g_ptr_array_index(r->warnings, i));
    for (guint i = 0; i < r->unpredicted->len; i++)
        printf("#   not predicted: %s\n", (const char *)g_ptr_array_index(r->unpredicted, i));
    if (r->gpu_mismatch != NULL)
        printf("#   warning: %s\n", r->gpu_mismatch);
    if (r->repeated_sizes != NULL)
        printf("#   note: %s\n", r->repeated_sizes);
    if (r->forced_algo == NULL || r->forced_proto == NULL) {
        printf("#   what was not forced is picked by %s", r->picker);
        guint fell_back = cs_validate_report_fastest_rows(r);
        if (fell_back > 0)
            printf("; collsim's fastest on %u row%s whose NCCL choice collsim does not simulate",
                   fell_back, fell_back == 1 ? "" : "s");
        printf("\n");
    }
    const gboolean nccl = r->nccl_model != NULL && r->nccl_note == NULL;
    if (r->nccl_model != NULL)
        printf("#   held beside collsim: %s%s%s\n", r->nccl_model, r->nccl_note != NULL ? ": " : "",
               r->nccl_note != NULL ? r->nccl_note : "");
    printf("#%11s %12s %12s %9s %11s %11s %9s  %-*s", "size", "measured", "predicted", "time",
           "measured", "predicted", "busbw", nccl ? 17 : 0, "predicted");
    if (nccl)
        printf(" %12s %9s  %s", "NCCL model", "busbw", "NCCL model");
    printf("\n");
    printf("#%11s %12s %12s %9s %11s %11s %9s  %-*s", "(B)", "(us)", "(us)", "error", "busbw",
           "busbw", "error", nccl ? 17 : 0, "choice");
    if (nccl)
        printf(" %12s %9s  %s", "(us)", "error", "choice");
    printf("\n");
    guint no_busbw = 0;
    for (guint i = 0; i < r->rows->len; i++) {
        const CsValidateRow *v = &g_array_index(r->rows, CsValidateRow, i);
        /* One rank moves nothing between GPUs: nccl-tests' busbw factor is 0, so is busbw,
         * and its error is undefined. */
        char busbw_error[16];
        if (isnan(v->busbw_error)) {
            g_strlcpy(busbw_error, "-", sizeof busbw_error);
            no_busbw++;
        }
        else
            g_snprintf(busbw_error, sizeof busbw_error, "%+.1f%%", 100 * v->busbw_error);
        g_autofree char *choice = g_strdup_printf("%s/%s", v->algo, v->proto);
        printf("%12" G_GINT64_FORMAT " %12.2f %12.2f %+8.1f%% %11.2f %11.2f %9s  %s", v->size_bytes,
               v->measured_us, v->predicted_us, 100 * v->time_error, v->measured_busbw_GBps,
               v->predicted_busbw_GBps, busbw_error, nccl ? "" : choice);
        if (nccl && isnan(v->nccl_us))
            printf("%-17s %12s %9s  %s", choice, "-", "-", "nothing usable");
        else if (nccl)
            printf("%-17s %12.2f %+8.1f%%  %s/%s", choice, v->nccl_us, 100 * v->nccl_busbw_error,
                   v->nccl_algo, v->nccl_proto);
        printf("\n");
    }
    if (no_busbw > 0)
        printf("#   busbw is 0 on %u row%s (nccl-tests' factor is 0 with one rank): there, the "
               "time error is the comparison\n",
               no_busbw, no_busbw == 1 ? "" : "s");
    print_summary_line("all sizes:", &r->all);
    print_summary_line("latency (< 64 KiB):", &r->latency);
    print_summary_line("knee (64 KiB - 64 MiB):", &r->knee);
    print_summary_line("bandwidth (>= 64 MiB):", &r->bandwidth);
    if (nccl) {
        print_summary_line("NCCL model, all sizes:", &r->nccl_all);
        print_summary_line("NCCL model, latency:", &r->nccl_latency);
        print_summary_line("NCCL model, knee:", &r->nccl_knee);
        print_summary_line("NCCL model, bandwidth:", &r->nccl_bandwidth);
    }
    printf("\n");
}

static cJSON *
summary_json(const CsValidateSummary *s)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "rows", s->n_rows);
    if (s->n_rows > 0) {
        cJSON_AddNumberToObject(o, "geomean_abs_busbw_error", s->geomean_abs);
        cJSON_AddNumberToObject(o, "max_abs_busbw_error", s->max_abs);
        cJSON_AddNumberToObject(o, "max_error_size_bytes", (double)s->max_size_bytes);
    }
    return o;
}

/* One line per row of every trace, the JSON's rows with their trace's name, collective, ranks
 * and machine class in front; NCCL's model's columns empty without --model nccl. */
static void
append_csv(GString *out, const GPtrArray *reports)
{
    g_string_append(out, "trace,collective,ranks,machine_class,size_bytes,line,measured_us,"
                         "predicted_us,time_error,measured_busbw_GBps,predicted_busbw_GBps,"
                         "busbw_error,algo,proto,nccl_model_us,nccl_model_time_error,"
                         "nccl_model_busbw_error,nccl_model_algo,nccl_model_proto\n");
    for (guint k = 0; k < reports->len; k++) {
        const CsValidateReport *r = g_ptr_array_index(reports, k);
        for (guint i = 0; i < r->rows->len; i++) {
            const CsValidateRow *v = &g_array_index(r->rows, CsValidateRow, i);
            cs_csv_append_field(out, r->origin);
            g_string_append_printf(out, ",%s,%d,", cs_op_name(r->op), r->nranks);
            cs_csv_append_field(out, r->machine_class);
            g_string_append_printf(out, ",%" G_GINT64_FORMAT ",%d,%.3f,%.3f,%.6f,%.6g,%.6g,%.6f,",
                                   v->size_bytes, v->line, v->measured_us, v->predicted_us,
                                   v->time_error, v->measured_busbw_GBps, v->predicted_busbw_GBps,
                                   v->busbw_error);
            cs_csv_append_field(out, v->algo);
            g_string_append_c(out, ',');
            cs_csv_append_field(out, v->proto);
            if (r->nccl_model != NULL && !isnan(v->nccl_us)) {
                g_string_append_printf(out, ",%.3f,%.6f,%.6f,", v->nccl_us, v->nccl_time_error,
                                       v->nccl_busbw_error);
                cs_csv_append_field(out, v->nccl_algo);
                g_string_append_c(out, ',');
                cs_csv_append_field(out, v->nccl_proto);
            }
            else {
                g_string_append(out, ",,,,,");
            }
            g_string_append_c(out, '\n');
        }
    }
}

static cJSON *
report_json(const CsValidateReport *r)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "trace", r->origin);
    cJSON_AddStringToObject(o, "collective", cs_op_name(r->op));
    cJSON_AddNumberToObject(o, "ranks", r->nranks);
    cJSON_AddStringToObject(o, "placement", r->placement);
    /* The class select's default margins are per (scripts/accuracy.py --margins groups by it). */
    cJSON_AddStringToObject(o, "machine_class", r->machine_class);
    cJSON *placed = cJSON_AddArrayToObject(o, "topology_ranks");
    for (int i = 0; i < r->nranks; i++)
        cJSON_AddItemToArray(placed, cJSON_CreateNumber(r->topo_ranks[i]));
    if (r->warnings->len > 0) {
        cJSON *w = cJSON_AddArrayToObject(o, "warnings");
        for (guint i = 0; i < r->warnings->len; i++)
            cJSON_AddItemToArray(w, cJSON_CreateString(g_ptr_array_index(r->warnings, i)));
    }
    if (r->unpredicted->len > 0) {
        cJSON *u = cJSON_AddArrayToObject(o, "not_predicted");
        for (guint i = 0; i < r->unpredicted->len; i++)
            cJSON_AddItemToArray(u, cJSON_CreateString(g_ptr_array_index(r->unpredicted, i)));
    }
    if (r->inferred != NULL)
        cJSON_AddStringToObject(o, "inferred", r->inferred);
    if (r->gpu_mismatch != NULL)
        cJSON_AddStringToObject(o, "gpu_mismatch", r->gpu_mismatch);
    if (r->repeated_sizes != NULL)
        cJSON_AddStringToObject(o, "repeated_sizes", r->repeated_sizes);
    if (r->forced_algo != NULL)
        cJSON_AddStringToObject(o, "forced_algo", r->forced_algo);
    if (r->forced_proto != NULL)
        cJSON_AddStringToObject(o, "forced_proto", r->forced_proto);
    if (r->forced_algo == NULL || r->forced_proto == NULL) {
        cJSON_AddStringToObject(o, "picked_by", r->picker);
        cJSON_AddNumberToObject(o, "rows_picked_by_collsim_fastest",
                                cs_validate_report_fastest_rows(r));
    }
    cJSON *rows = cJSON_AddArrayToObject(o, "rows");
    for (guint i = 0; i < r->rows->len; i++) {
        const CsValidateRow *v = &g_array_index(r->rows, CsValidateRow, i);
        cJSON *row = cJSON_CreateObject();
        cJSON_AddNumberToObject(row, "size_bytes", (double)v->size_bytes);
        cJSON_AddNumberToObject(row, "line", v->line);
        cJSON_AddNumberToObject(row, "measured_us", v->measured_us);
        cJSON_AddNumberToObject(row, "predicted_us", v->predicted_us);
        cJSON_AddNumberToObject(row, "time_error", v->time_error);
        cJSON_AddNumberToObject(row, "measured_busbw_GBps", v->measured_busbw_GBps);
        cJSON_AddNumberToObject(row, "predicted_busbw_GBps", v->predicted_busbw_GBps);
        cJSON_AddNumberToObject(row, "busbw_error", v->busbw_error);
        cJSON_AddStringToObject(row, "algo", v->algo);
        cJSON_AddStringToObject(row, "proto", v->proto);
        if (r->nccl_model != NULL && !isnan(v->nccl_us)) {
            cJSON_AddNumberToObject(row, "nccl_model_us", v->nccl_us);
            cJSON_AddNumberToObject(row, "nccl_model_time_error", v->nccl_time_error);
            cJSON_AddNumberToObject(row, "nccl_model_busbw_error", v->nccl_busbw_error);
            cJSON_AddStringToObject(row, "nccl_model_algo", v->nccl_algo);
            cJSON_AddStringToObject(row, "nccl_model_proto", v->nccl_proto);
        }
        cJSON_AddItemToArray(rows, row);
    }
    cJSON_AddItemToObject(o, "all", summary_json(&r->all));
    cJSON_AddItemToObject(o, "latency", summary_json(&r->latency));
    cJSON_AddItemToObject(o, "knee", summary_json(&r->knee));
    cJSON_AddItemToObject(o, "bandwidth", summary_json(&r->bandwidth));
    if (r->nccl_model != NULL) {
        cJSON *m = cJSON_AddObjectToObject(o, "nccl_model");
        cJSON_AddStringToObject(m, "name", r->nccl_model);
        if (r->nccl_note != NULL)
            cJSON_AddStringToObject(m, "note", r->nccl_note);
        cJSON_AddItemToObject(m, "all", summary_json(&r->nccl_all));
        cJSON_AddItemToObject(m, "latency", summary_json(&r->nccl_latency));
        cJSON_AddItemToObject(m, "knee", summary_json(&r->nccl_knee));
        cJSON_AddItemToObject(m, "bandwidth", summary_json(&r->nccl_bandwidth));
    }
    return o;
}

/* Progress per row predicted: "collsim validate: 12/58 rows (TRACE: 64 MiB)". */
typedef struct {
    CsCliProgress line;
    const char *trace; /* the base name of the trace under way */
} ValidateProgress;

static void
row_done(gint64 size_bytes, gpointer data)
{
    ValidateProgress *p = data;
    g_autofree char *size = cs_units_format_size(size_bytes);
    g_autofree char *what = g_strdup_printf("%s: %s", p->trace, size);
    cs_cli_progress_step_text(&p->line, what);
}

static const char *
label(const CsValidateReport *r)
{
    return r->forced_algo != NULL ? r->forced_algo : "default";
}

/**
 * cs_cli_validate:
 * Exit 0 whatever the error, unless --max-error makes it a gate: then exit 1 when the
 * geometric-mean |busbw error| of any trace is above it.
 */
gboolean
cs_cli_validate(int argc, char **argv, GError **error)
{
    g_autofree char *topo_name = NULL;
    g_auto(GStrv) sets = NULL;
    g_autofree char *format = NULL;
    g_auto(GStrv) models = NULL;
    g_auto(GStrv) traces = NULL;
    g_autofree char *max_error = NULL;
    g_autofree char *pick_name = NULL;
    g_autofree char *plot = NULL;
    double max_error_pct = -1;
    int gpus_per_thread = 0;
    g_autofree char *cmd = cs_cli_command_line(argc, argv);
    g_autofree char *threads = NULL;
    int jobs = CS_CLI_JOBS_UNSET;
    gboolean progress_arg = FALSE;
    gboolean quiet = FALSE;
    const GOptionEntry entries[] = {
        { "topo", 0, 0, G_OPTION_ARG_STRING, &topo_name,
          "Topology: a shipped name or a JSON file (required)", "T" },
        CS_CLI_SET_ENTRY(&sets),
        { "model", 'm', 0, G_OPTION_ARG_STRING_ARRAY, &models,
          "Network model: reservation (default) or maxmin; nccl[:VERSION] also holds NCCL's own "
          "cost model against the rows, rccl[:VERSION] RCCL's (give --model twice for both)",
          "MODEL" },
        { "ngpus", 'g', 0, G_OPTION_ARG_INT, &gpus_per_thread,
          "GPUs launched by one thread (default: the trace's nGpus, else the -g or --ngpus of its "
          "command header)",
          "G" },
        /* The long name before --ngpus (run's and nccl-tests'), kept working. */
        { "gpus-per-thread", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_INT, &gpus_per_thread, NULL,
          NULL },
        /* -t is nccl-tests' -t (threads), never the topology (it was, before). */
        { "nthreads", 't', G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_STRING, &threads, NULL, NULL },
        { "pick", 0, 0, G_OPTION_ARG_STRING, &pick_name, CS_CLI_PICK_HELP, "WHO" },
        { "format", 0, 0, G_OPTION_ARG_STRING, &format,
          "table (default), csv (one line per row) or json", "FORMAT" },
        { "max-error", 0, 0, G_OPTION_ARG_STRING, &max_error,
          "Fail (exit 1) if a trace's geometric-mean |busbw error| exceeds PCT percent", "PCT" },
        { "plot", 0, 0, G_OPTION_ARG_FILENAME, &plot,
          "Also draw every trace into FILE (.svg, .png or .pdf): measured busbw over the "
          "predicted line, each row's error below, the regimes shaded",
          "FILE" },
        CS_CLI_JOBS_ENTRY(&jobs),
        { "progress", 0, 0, G_OPTION_ARG_NONE, &progress_arg,
          "Print progress with an estimate of the time left on stderr, a line per row "
          "predicted (by default only on a terminal, once a second has passed)",
          NULL },
        { "quiet", 0, 0, G_OPTION_ARG_NONE, &quiet, "Print no progress", NULL },
        { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &traces, NULL, NULL },
        { NULL, 0, 0, 0, NULL, NULL, NULL },
    };
    if (!cs_cli_parse(&argc, &argv, entries, "TRACE...",
                      "Holds measured nccl-tests traces against collsim's predictions.",
                      "For every row: measured and predicted time and busbw, and the signed\n"
                      "error (predicted - measured) / measured. Per trace: the geometric mean\n"
                      "of |busbw error| over all rows and per regime (latency < 64 KiB, knee,\n"
                      "bandwidth >= 64 MiB) and the largest error. A trace that forced\n"
                      "NCCL_ALGO/NCCL_PROTO (its headers say so) is predicted with the same\n"
                      "algorithm. What it left to NCCL is predicted as NCCL picks it: NCCL's\n"
                      "own tuning model (the constants of the nearest release) chooses the\n"
                      "algorithm and protocol, collsim's engine times them (--pick); on AMD\n"
                      "GPUs RCCL's own tuning model (rcclTuningModel[]) chooses. Traces of\n"
                      "the same collective with different forced algorithms are compared for\n"
                      "where one overtakes the other, measured and predicted.\n\n"
                      "A trace on fewer ranks than the topology has runs on the GPUs it\n"
                      "used: its hosts (nccl-tests' '#  Rank N ... on HOST device D' lines,\n"
                      "else a '# nodes: k' header) become the topology's first nodes, each\n"
                      "rank on its device's GPU; the 'placed:' line says which. --model\n"
                      "nccl[:VERSION] adds NCCL's own cost model (lat + bytes / bw, its pick\n"
                      "under the trace's NCCL_ALGO/NCCL_PROTO) beside collsim's, per row\n"
                      "and in the summaries; --model rccl[:VERSION] RCCL's. A GPU model\n"
                      "outside NCCL's generation table\n"
                      "is a warning on stderr.",
                      error))
        return FALSE;
    if (!cs_cli_check_trace_args(argv[0], threads, topo_name, traces, error))
        return FALSE;
    CsCliProgressMode progress_mode;
    if (!cs_cli_progress_mode(argv[0], progress_arg, quiet, &progress_mode, error))
        return FALSE;
    if (plot != NULL && !cs_cli_check_plot(argv[0], plot, error))
        return FALSE;
    gboolean json = FALSE;
    if (format != NULL && g_strcmp0(format, "json") != 0 && g_strcmp0(format, "table") != 0
        && g_strcmp0(format, "csv") != 0) {
        g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_USAGE,
                    "%s: --format: \"%s\" is not a format (table, csv, json)", argv[0], format);
        return FALSE;
    }
    json = g_strcmp0(format, "json") == 0;
    const gboolean csv = g_strcmp0(format, "csv") == 0;
    const char *model = NULL;
    const char *nccl_spec = NULL;
    for (int i = 0; models != NULL && models[i] != NULL; i++) {
        const char *m = models[i];
        const gboolean is_nccl = g_str_has_prefix(m, "nccl") || g_str_has_prefix(m, "rccl");
        if (is_nccl) {
            const CsNcclConstants *constants;
            GError *local = NULL;
            if (!cs_nccl_parse_spec(m, &constants, &local))
                return cs_cli_flag_error(error, argv[0], "--model", local);
        }
        else if (m[0] == '\0' || cs_net_model_lookup(m, NULL) == NULL) {
            g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_USAGE,
                        "%s: --model: \"%s\" is not a network model (reservation, maxmin) "
                        "nor nccl[:VERSION]",
                        argv[0], m);
            return FALSE;
        }
        const char **slot = is_nccl ? &nccl_spec : &model;
        if (*slot != NULL) {
            g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_USAGE,
                        "%s: --model: \"%s\" and \"%s\" both given (one network model and "
                        "one nccl[:VERSION] at most)",
                        argv[0], *slot, m);
            return FALSE;
        }
        *slot = m;
    }
    if (!cs_cli_check_gpus_per_thread(argv[0], gpus_per_thread, 0, NULL, error))
        return FALSE;
    if (max_error != NULL) {
        /* A percentage, "5" or "5%"; NaN or a negative gate would silently never fail. */
        g_autofree char *number = g_strdup(max_error);
        if (g_str_has_suffix(number, "%"))
            number[strlen(number) - 1] = '\0';
        if (!cs_units_parse_decimal(number, &max_error_pct)) {
            g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_USAGE,
                        "%s: --max-error: \"%s\" is not a percentage (expected e.g. 10 or "
                        "10%%)",
                        argv[0], max_error);
            return FALSE;
        }
    }

    CsPick pick = CS_PICK_AUTO;
    GError *cause = NULL;
    if (pick_name != NULL && !cs_pick_from_name(pick_name, &pick, &cause))
        return cs_cli_flag_error(error, argv[0], "--pick", cause);

    g_autoptr(CsTopo) topo = cs_cli_load_topo(argv[0], topo_name, sets, error);
    if (topo == NULL)
        return FALSE;

    CsPredictOptions options;
    cs_predict_options_init(&options);
    options.engine.net_model = model;
    options.engine.gpus_per_thread = gpus_per_thread;
    options.pick = pick;
    if (!cs_cli_resolve_jobs(argv[0], jobs, &options.jobs, error))
        return FALSE;

    /* Every trace read first: the rows to predict are the progress's total. */
    g_autoptr(GPtrArray) loaded = g_ptr_array_new_with_free_func((GDestroyNotify)cs_trace_free);
    guint n_rows = 0;
    for (int i = 0; traces[i] != NULL; i++) {
        CsTrace *trace = cs_trace_load_file(traces[i], error);
        if (trace == NULL)
            return FALSE;
        g_ptr_array_add(loaded, trace);
        if (!cs_cli_check_gpus_per_thread(argv[0], gpus_per_thread, cs_trace_n_ranks(trace),
                                          traces[i], error))
            return FALSE;
        n_rows += cs_validate_trace_n_rows(trace);
    }
    ValidateProgress progress = { .trace = NULL };
    cs_cli_progress_init(&progress.line, argv[0], (int)n_rows, progress_mode);
    cs_cli_progress_restart(&progress.line, (int)n_rows, "rows");
    g_autoptr(GPtrArray) reports
        = g_ptr_array_new_with_free_func((GDestroyNotify)cs_validate_report_free);
    for (int i = 0; traces[i] != NULL; i++) {
        const CsTrace *trace = g_ptr_array_index(loaded, i);
        g_autofree char *base = g_path_get_basename(traces[i]);
        progress.trace = base;
        CsValidateReport *r = cs_validate_trace_full(
            topo, trace, &options, nccl_spec, CS_VALIDATE_PLACED, row_done, &progress, error);
        /* The warnings below go on lines of their own. */
        cs_cli_progress_finish(&progress.line);
        if (r == NULL)
            return FALSE;
        for (guint w = 0; w < r->warnings->len; w++)
            g_printerr("%s: warning: %s: %s\n", argv[0], traces[i],
                       (const char *)g_ptr_array_index(r->warnings, w));
        for (guint w = 0; w < r->unpredicted->len; w++)
            g_printerr("%s: warning: not predicted: %s\n", argv[0],
                       (const char *)g_ptr_array_index(r->unpredicted, w));
        g_ptr_array_add(reports, r);
    }
    g_autoptr(GArray) crossovers
        = cs_validate_crossovers((CsValidateReport *const *)reports->pdata, (int)reports->len);

    /* The picture first: a file that cannot be written fails before anything is printed. */
    if (plot != NULL) {
        const CsValidateReport *first = g_ptr_array_index(reports, 0);
        gboolean one_op = TRUE;
        for (guint i = 1; i < reports->len; i++)
            one_op = one_op
                     && ((const CsValidateReport *)g_ptr_array_index(reports, i))->op == first->op;
        g_autofree char *title = g_strdup_printf(
            "collsim validate: %s on %s: measured against predicted",
            one_op ? cs_op_name(first->op) : "several collectives", cs_topo_name(topo));
        if (!cs_plot_validate((CsValidateReport *const *)reports->pdata, (int)reports->len, title,
                              cmd, plot, error)) {
            g_prefix_error(error, "%s: --plot: ", argv[0]);
            return FALSE;
        }
    }

    if (csv) {
        g_autoptr(GString) out = g_string_new(NULL);
        append_csv(out, reports);
        if (!cs_cli_write_output(argv[0], NULL, NULL, out->str, (gssize)out->len, error))
            return FALSE;
    }
    else if (json) {
        cJSON *root = cJSON_CreateObject();
        cs_json_add_schema(root, "collsim-validate", CS_JSON_SCHEMA_VERSION);
        cJSON_AddStringToObject(root, "collsim_version", COLLSIM_VERSION);
        cJSON_AddStringToObject(root, "topology", cs_topo_name(topo));
        cJSON *arr = cJSON_AddArrayToObject(root, "traces");
        for (guint i = 0; i < reports->len; i++)
            cJSON_AddItemToArray(arr, report_json(g_ptr_array_index(reports, i)));
        cJSON *xs = cJSON_AddArrayToObject(root, "crossovers");
        for (guint i = 0; i < crossovers->len; i++) {
            const CsValidateCrossover *c = &g_array_index(crossovers, CsValidateCrossover, i);
            cJSON *x = cJSON_CreateObject();
            cJSON_AddStringToObject(x, "from", label(c->a));
            cJSON_AddStringToObject(x, "to", label(c->b));
            cJSON_AddNumberToObject(x, "measured_bytes", (double)c->measured_bytes);
            cJSON_AddNumberToObject(x, "predicted_bytes", (double)c->predicted_bytes);
            cJSON_AddItemToArray(xs, x);
        }
        char *text = cs_json_print(root, TRUE);
        printf("%s\n", text);
        cJSON_free(text);
        cJSON_Delete(root);
    }
    else {
        for (guint i = 0; i < reports->len; i++)
            print_report(g_ptr_array_index(reports, i), topo);
        for (guint i = 0; i < crossovers->len; i++) {
            const CsValidateCrossover *c = &g_array_index(crossovers, CsValidateCrossover, i);
            printf("# crossover %s -> %s (%s): measured from %" G_GINT64_FORMAT
                   " B, predicted from %" G_GINT64_FORMAT " B%s\n",
                   label(c->a), label(c->b), cs_op_name(c->a->op), c->measured_bytes,
                   c->predicted_bytes, c->measured_bytes == c->predicted_bytes ? " (match)" : "");
        }
    }

    if (max_error_pct >= 0) {
        for (guint i = 0; i < reports->len; i++) {
            const CsValidateReport *r = g_ptr_array_index(reports, i);
            if (100 * r->all.geomean_abs > max_error_pct) {
                g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_FAILED,
                            "%s: %s: geometric-mean |busbw error| %.1f%% exceeds --max-error "
                            "%.1f%%",
                            argv[0], r->origin, 100 * r->all.geomean_abs, max_error_pct);
                return FALSE;
            }
        }
    }
    return TRUE;
}
