// SPDX-License-Identifier: MIT
/* `collsim calibrate`: fits a topology's free parameters to measured traces, reports them with
 * uncertainties and the error before and after, optionally leave-one-out, and writes the fitted
 * topology with a record of the traces it came from. */
#include "config.h"

#include "base/fileio.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analysis/calibrate.h"
#include "analysis/plot.h"
#include "cli/cli.h"
#include "models/netmodel.h"
#include "base/units.h"
#include "analysis/validate.h"
#include "base/json_util.h"

static char *format_value(const CsCalibParam *p, double v);

/* One line per parameter, the JSON's fields in SI units (s, B/s); empty where JSON leaves a
 * field out. */
static void
append_params_csv(GString *out, const CsCalibration *cal)
{
    g_string_append(out, "name,unit,datasheet,fitted,sigma,min,max,free,held,excluded,at_bound,"
                         "bound,rows_seen,component,range_source\n");
    for (guint i = 0; i < cal->params->len; i++) {
        const CsCalibParam *p = &g_array_index(cal->params, CsCalibParam, i);
        const gboolean bw = p->kind == CS_PARAM_LINK_BW || p->kind == CS_PARAM_REDUCE_BW
                            || p->kind == CS_PARAM_COPY_BW;
        cs_csv_append_field(out, p->name);
        g_string_append_printf(out, ",%s,%.9g,%.9g,", bw ? "B/s" : "s", p->initial, p->fitted);
        if (!isnan(p->sigma))
            g_string_append_printf(out, "%.6g", p->sigma);
        g_string_append_printf(out, ",%.9g,%.9g,%d,%d,%d,%d,%s,", p->min, p->max, p->free != 0,
                               p->held != 0, p->excluded != 0, p->at_bound != 0,
                               !p->at_bound   ? ""
                               : p->bound > 0 ? "upper"
                                              : "lower");
        if (p->free)
            g_string_append_printf(out, "%.2f", round(p->rows_seen * 100) / 100);
        g_string_append_c(out, ',');
        cs_csv_append_field(out, p->component);
        g_string_append_c(out, ',');
        cs_csv_append_field(out, p->range_source);
        g_string_append_c(out, '\n');
    }
}

static char *
format_value(const CsCalibParam *p, double v)
{
    if (isnan(v))
        return g_strdup("?");
    if (p->kind == CS_PARAM_LINK_BW || p->kind == CS_PARAM_REDUCE_BW || p->kind == CS_PARAM_COPY_BW)
        return cs_units_format_bandwidth(v);
    return cs_units_format_time(v);
}

/* Geometric-mean |busbw error| of one trace on @topo, on the topology's first ranks as
 * calibrate.c fits it (validate places a smaller trace on its hosts' nodes; the fit does not
 * yet), so that the figures before and after are those of the fitted objective. */
static gboolean
trace_error(const CsTopo *topo, const CsTrace *trace, const CsPredictOptions *options,
            double *error_out, GPtrArray *reports, GError **error)
{
    g_autoptr(CsValidateReport) r = cs_validate_trace_full(
        topo, trace, options, NULL, CS_VALIDATE_FIRST_RANKS, NULL, NULL, error);
    if (r == NULL)
        return FALSE;
    *error_out = r->all.geomean_abs;
    /* Kept for --plot. */
    if (reports != NULL)
        g_ptr_array_add(reports, g_steal_pointer(&r));
    return TRUE;
}

/* How the fits of one command run. */
typedef struct {
    const CsPredictOptions *options;
    CsCalibLoss loss;
    double prior_weight;
    const char *const *only;
} JointArgs;

/* Progress per fit (the fit of every trace, then one per trace or machine left out), and
 * within a fit per evaluation of its objective, whose count has no known total:
 * "collsim calibrate: 1/4 fits, now leaving out a.txt: evaluation 12 (fit, iteration 3 of at
 * most 100), rms 8.1%, 9.0 s, about 27 s left". */
typedef struct {
    CsCliProgress line;
    char *fit;        /* the fit under way, in words */
    CsCalibStep last; /* its last evaluation */
} CalibrateProgress;

/**
 * cs_cli_calibrate_step_text:
 * One evaluation of a fit in words, for progress lines: "evaluation 12 (fit, iteration 3 of
 * at most 100), rms 8.1%".
 */
char *
cs_cli_calibrate_step_text(const CsCalibStep *step)
{
    g_autofree char *iteration = strcmp(step->phase, "fit") == 0
                                     ? g_strdup_printf(", iteration %d of at most %d",
                                                       step->iteration + 1, step->max_iterations)
                                     : g_strdup("");
    return g_strdup_printf("evaluation %d (%s%s), rms %.1f%%", step->evaluation, step->phase,
                           iteration, 100 * step->rms);
}

static void
fit_evaluated(const CsCalibStep *step, gpointer data)
{
    CalibrateProgress *p = data;
    p->last = *step;
    g_autofree char *step_text = cs_cli_calibrate_step_text(step);
    g_autofree char *what = g_strdup_printf("%s: %s", p->fit, step_text);
    cs_cli_progress_within(&p->line, what);
}

/* Fits @n_machines machines' traces (as cs_calibrate_fit_joint()), told to @p as the fit
 * @what ("leaving out a.txt"), which counts one step when it ends, fitted or not. */
static GPtrArray *
fit_with_progress(CalibrateProgress *p, const char *what, const CsTopo *const *topos,
                  int n_machines, CsTrace *const *traces, const int *n_traces, const JointArgs *a,
                  GError **error)
{
    g_free(p->fit);
    p->fit = g_strdup(what);
    p->last = (CsCalibStep){ .phase = "datasheet" };
    GPtrArray *cals
        = cs_calibrate_fit_joint_full(topos, n_machines, traces, n_traces, a->options, a->loss,
                                      a->prior_weight, a->only, fit_evaluated, p, error);
    g_autofree char *done
        = cals != NULL ? g_strdup_printf("%s: %d evaluations, %d iterations, rms %.1f%%", what,
                                         p->last.evaluation, p->last.iteration, 100 * p->last.rms)
                       : g_strdup_printf("%s: no fit", what);
    cs_cli_progress_step_text(&p->line, done);
    return cals;
}

static void
calibrate_progress_clear(CalibrateProgress *p)
{
    cs_cli_progress_finish(&p->line);
    g_clear_pointer(&p->fit, g_free);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(CalibrateProgress, calibrate_progress_clear)

static void
print_params(const CsCalibration *cal)
{
    printf("# %-24s %14s %14s %14s %9s  %s\n", "parameter", "datasheet", "fitted", "1-sigma",
           "change", "range");
    for (guint i = 0; i < cal->params->len; i++) {
        const CsCalibParam *p = &g_array_index(cal->params, CsCalibParam, i);
        g_autofree char *a = format_value(p, p->initial);
        g_autofree char *b = format_value(p, p->fitted);
        g_autofree char *lo = format_value(p, p->min);
        g_autofree char *hi = format_value(p, p->max);
        g_autofree char *s = p->at_bound ? g_strdup(p->bound > 0 ? "at upper" : "at lower")
                             : p->free && isnan(p->sigma) && p->rows_seen < CS_CALIB_MIN_ROWS_SEEN
                                 ? g_strdup("1 row")
                             : p->free     ? format_value(p, p->sigma)
                             : p->excluded ? g_strdup("excluded")
                             : p->held     ? g_strdup("held")
                                           : g_strdup("fixed");
        printf("  %-24s %14s %14s %14s %+8.1f%%  [%s, %s]\n", p->name, a, b, s,
               100 * (p->fitted / p->initial - 1), lo, hi);
    }
    printf("# '?': the data cannot separate this parameter from another (its 1-sigma exceeds "
           "an e-fold); '1 row': fitted to what one row says, no spread of rows to give it a "
           "1-sigma; 'fixed': no row depends on it; 'held': no more rows than parameters, and "
           "the rows determine the others better; 'excluded': not among --params; 'at upper', "
           "'at lower': the rows push it past its physical range (below); range: where physics "
           "(or, where nothing physical bounds it, the fit's 55x domain) keeps it, "
           "--format json gives each range's source\n");
    for (guint i = 0; i < cal->params->len; i++) {
        g_autofree char *note
            = cs_calib_param_bound_note(&g_array_index(cal->params, CsCalibParam, i));
        if (note != NULL)
            printf("# %s\n", note);
    }
}

/* Whether option @arg of @entries takes a value in the next argument (a long "--name" or a
 * short "-x" of a non-flag option, written without its value). */
static gboolean
takes_next(const GOptionEntry *entries, const char *arg)
{
    for (const GOptionEntry *e = entries; e->long_name != NULL; e++) {
        if (e->arg == G_OPTION_ARG_NONE || e->long_name[0] == '\0')
            continue;
        if (g_str_has_prefix(arg, "--") && strcmp(arg + 2, e->long_name) == 0)
            return TRUE;
        if (arg[0] == '-' && arg[1] == e->short_name && e->short_name != 0 && arg[2] == '\0')
            return TRUE;
    }
    return FALSE;
}

/* The machines of a joint fit, from the command line as written (before GOption reorders
 * it): every --topo starts a machine, and the traces after it, up to the next --topo, are its.
 * @topos gets the names, @group_of the machine of each trace argument in order (-1: before
 * any --topo). */
static void
scan_machines(int argc, char **argv, const GOptionEntry *entries, GPtrArray *topos,
              GArray *group_of)
{
    gboolean options_end = FALSE;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!options_end && strcmp(a, "--") == 0) {
            options_end = TRUE;
            continue;
        }
        if (!options_end && strcmp(a, "--topo") == 0 && i + 1 < argc) {
            g_ptr_array_add(topos, g_strdup(argv[++i]));
            continue;
        }
        if (!options_end && g_str_has_prefix(a, "--topo=")) {
            g_ptr_array_add(topos, g_strdup(a + strlen("--topo=")));
            continue;
        }
        if (!options_end && a[0] == '-' && a[1] != '\0') {
            if (takes_next(entries, a))
                i++;
            continue;
        }
        const int g = (int)topos->len - 1;
        g_array_append_val(group_of, g);
    }
}

/* One machine's fitted parameters that a joint fit shares with other machines, as lines
 * "name = value (component, N machines)". */
static void
print_shared(const CsCalibration *cal)
{
    for (guint i = 0; i < cal->params->len; i++) {
        const CsCalibParam *p = &g_array_index(cal->params, CsCalibParam, i);
        if (!p->free || p->shared < 2)
            continue;
        g_autofree char *v = format_value(p, p->fitted);
        printf("# shared: %s = %s (%s, %d machines)\n", p->name, v, p->component, p->shared);
    }
}

/* `calibrate --topo A a.txt... --topo B b.txt...`: one fit of every machine, their shared
 * components one value; with @lomo also each machine predicted from the others' fit. */
static gboolean
calibrate_joint(const char *prog, GPtrArray *topo_names, GArray *group_of, char **files,
                char **sets, const JointArgs *a, gboolean lomo, const char *output_dir,
                gboolean json, CsCliProgressMode progress_mode, GError **error)
{
    const int n_machines = (int)topo_names->len;
    const int n_files = (int)g_strv_length(files);
    g_autoptr(GPtrArray) topos = g_ptr_array_new_with_free_func((GDestroyNotify)cs_topo_unref);
    g_autoptr(GPtrArray) traces = g_ptr_array_new_with_free_func((GDestroyNotify)cs_trace_free);
    g_autofree int *n_traces = g_new0(int, n_machines);
    g_autofree int *first = g_new0(int, n_machines + 1);
    for (int m = 0; m < n_machines; m++) {
        CsTopo *topo = cs_cli_load_topo(prog, topo_names->pdata[m], sets, error);
        if (topo == NULL)
            return FALSE;
        g_ptr_array_add(topos, topo);
    }
    for (int m = 0; m < n_machines; m++) {
        first[m] = (int)traces->len;
        for (int i = 0; i < n_files; i++) {
            if (g_array_index(group_of, int, i) != m)
                continue;
            CsTrace *t = cs_trace_load_file(files[i], error);
            if (t == NULL)
                return FALSE;
            g_ptr_array_add(traces, t);
            if (!cs_cli_check_gpus_per_thread(prog, a->options->engine.gpus_per_thread,
                                              cs_trace_n_ranks(t), files[i], error))
                return FALSE;
            n_traces[m]++;
        }
        if (n_traces[m] == 0)
            return cs_cli_usage_error(error, prog,
                                      "--topo %s: no trace follows it (expected "
                                      "--topo A a.txt... --topo B b.txt...)",
                                      (const char *)topo_names->pdata[m]);
    }
    first[n_machines] = (int)traces->len;
    CsTrace *const *tv = (CsTrace *const *)traces->pdata;
    const CsTopo *const *toposv = (const CsTopo *const *)topos->pdata;

    g_auto(CalibrateProgress) progress = { .fit = NULL };
    cs_cli_progress_init(&progress.line, prog, 0, progress_mode);
    cs_cli_progress_restart(&progress.line, 1 + (lomo ? n_machines : 0), "fits");
    g_autofree char *all = g_strdup_printf("the joint fit of %d machines", n_machines);
    g_autoptr(GPtrArray) cals
        = fit_with_progress(&progress, all, toposv, n_machines, tv, n_traces, a, error);
    if (cals == NULL)
        return FALSE;

    /* Per trace: datasheet, fitted, and left out with its machine. */
    const int nt = (int)traces->len;
    g_autofree double *before = g_new(double, MAX(nt, 1));
    g_autofree double *after = g_new(double, MAX(nt, 1));
    g_autofree double *lomo_err = g_new(double, MAX(nt, 1));
    g_autofree int *moved = g_new0(int, n_machines);
    for (int m = 0; m < n_machines; m++) {
        const CsCalibration *cal = cals->pdata[m];
        g_autoptr(CsTopo) held_out = NULL;
        if (lomo) {
            /* The others' fit, on their traces only. */
            g_autoptr(GPtrArray) others_topo = g_ptr_array_new();
            g_autoptr(GPtrArray) others_traces = g_ptr_array_new();
            g_autofree int *others_n = g_new0(int, n_machines);
            int k = 0;
            for (int o = 0; o < n_machines; o++) {
                if (o == m)
                    continue;
                g_ptr_array_add(others_topo, topos->pdata[o]);
                for (int t = first[o]; t < first[o + 1]; t++)
                    g_ptr_array_add(others_traces, tv[t]);
                others_n[k++] = n_traces[o];
            }
            g_autoptr(GError) local = NULL;
            g_autofree char *what
                = g_strdup_printf("leaving out machine %s", cs_topo_name(toposv[m]));
            g_autoptr(GPtrArray) part = fit_with_progress(
                &progress, what, (const CsTopo *const *)others_topo->pdata, n_machines - 1,
                (CsTrace *const *)others_traces->pdata, others_n, a, &local);
            /* The others alone may constrain nothing: say so, do not fail. */
            if (part != NULL) {
                held_out = cs_calibrate_transfer(toposv[m], tv + first[m], n_traces[m], a->options,
                                                 part, &moved[m], error);
                if (held_out == NULL)
                    return FALSE;
            }
            else
                g_debug("calibrate: no fit without %s: %s", cs_topo_name(toposv[m]),
                        local->message);
        }
        for (int t = first[m]; t < first[m + 1]; t++) {
            lomo_err[t] = NAN;
            if (!trace_error(toposv[m], tv[t], a->options, &before[t], NULL, error)
                || !trace_error(cal->topo, tv[t], a->options, &after[t], NULL, error))
                return FALSE;
            if (held_out != NULL
                && !trace_error(held_out, tv[t], a->options, &lomo_err[t], NULL, error))
                return FALSE;
        }
    }

    if (output_dir != NULL) {
        for (int m = 0; m < n_machines; m++) {
            g_autofree char *base = g_strdup_printf("%s-calibrated.json", cs_topo_name(toposv[m]));
            g_autofree char *path = g_build_filename(output_dir, base, NULL);
            g_autofree char *document
                = cs_calibration_to_json(cals->pdata[m], toposv[m], tv + first[m], n_traces[m]);
            g_autoptr(GString) text = g_string_new(document);
            g_string_append_c(text, '\n');
            if (!cs_cli_write_output(prog, "--output-dir", path, text->str, (gssize)text->len,
                                     error))
                return FALSE;
        }
    }

    if (json) {
        cJSON *root = cJSON_CreateObject();
        cs_json_add_schema(root, "collsim-calibrate-joint", CS_JSON_SCHEMA_VERSION);
        cJSON_AddStringToObject(root, "collsim_version", COLLSIM_VERSION);
        cJSON_AddStringToObject(root, "loss", cs_calib_loss_name(a->loss));
        cJSON_AddNumberToObject(root, "prior_weight", a->prior_weight);
        cJSON_AddNumberToObject(root, "iterations",
                                ((const CsCalibration *)cals->pdata[0])->iterations);
        cJSON *ms = cJSON_AddArrayToObject(root, "machines");
        for (int m = 0; m < n_machines; m++) {
            const CsCalibration *cal = cals->pdata[m];
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "topology", cs_topo_name(toposv[m]));
            cJSON_AddNumberToObject(o, "rows", cal->n_rows);
            cJSON_AddNumberToObject(o, "rms_relative_error_before", cal->rms_before);
            cJSON_AddNumberToObject(o, "rms_relative_error_after", cal->rms_after);
            if (lomo)
                cJSON_AddNumberToObject(o, "leave_one_machine_out_parameters_learnt", moved[m]);
            cJSON_AddItemToObject(o, "parameters", cs_calibration_params_to_json(cal));
            cJSON *ts = cJSON_AddArrayToObject(o, "traces");
            for (int t = first[m]; t < first[m + 1]; t++) {
                cJSON *r = cJSON_CreateObject();
                cJSON_AddStringToObject(r, "trace", cs_trace_origin(tv[t]));
                cJSON_AddNumberToObject(r, "datasheet_geomean_abs_busbw_error", before[t]);
                cJSON_AddNumberToObject(r, "calibrated_geomean_abs_busbw_error", after[t]);
                if (!isnan(lomo_err[t]))
                    cJSON_AddNumberToObject(r, "leave_one_machine_out_geomean_abs_busbw_error",
                                            lomo_err[t]);
                cJSON_AddItemToArray(ts, r);
            }
            cJSON_AddItemToArray(ms, o);
        }
        char *text = cs_json_print(root, TRUE);
        printf("%s\n", text);
        cJSON_free(text);
        cJSON_Delete(root);
        return TRUE;
    }

    g_autofree char *how = cs_calib_loss_describe(a->loss);
    printf("# collsim calibrate: %d machines fitted jointly, %d trace(s), %d iterations, %s, "
           "prior weight %g; a parameter of the same name, component and datasheet value is "
           "one value for every machine that has it\n",
           n_machines, nt, ((const CsCalibration *)cals->pdata[0])->iterations, how,
           a->prior_weight);
    int width = 60;
    for (int t = 0; t < nt; t++)
        width = MAX(width, (int)strlen(cs_trace_origin(tv[t])));
    for (int m = 0; m < n_machines; m++) {
        const CsCalibration *cal = cals->pdata[m];
        printf("#\n# machine %s: %d rows; rms relative time error %.1f%% with the datasheet "
               "topology, %.1f%% fitted\n",
               cs_topo_name(toposv[m]), cal->n_rows, 100 * cal->rms_before, 100 * cal->rms_after);
        print_params(cal);
        print_shared(cal);
        printf("# %-*s %10s %10s%s\n", width, "trace (geomean |busbw error|)", "datasheet",
               "fitted", lomo ? "  machine left out" : "");
        for (int t = first[m]; t < first[m + 1]; t++) {
            printf("  %-*s %9.1f%% %9.1f%%", width, cs_trace_origin(tv[t]), 100 * before[t],
                   100 * after[t]);
            if (lomo && isnan(lomo_err[t]))
                printf("  %17s", "no fit");
            else if (lomo)
                printf("  %16.1f%%", 100 * lomo_err[t]);
            printf("\n");
        }
        if (lomo)
            printf("# left out: %d parameter(s) of %s take the others' fitted values; the rest "
                   "stay datasheet\n",
                   moved[m], cs_topo_name(toposv[m]));
    }
    if (output_dir != NULL)
        printf("# wrote %d fitted topologies into %s (NAME-calibrated.json)\n", n_machines,
               output_dir);
    return TRUE;
}

/**
 * cs_cli_calibrate:
 * Prints the fit and, per trace, the error with the datasheet topology and the fitted one;
 * with --leave-one-out also the error of each trace under a fit that did not see it.
 */
gboolean
cs_cli_calibrate(int argc, char **argv, GError **error)
{
    g_autofree char *topo_name = NULL;
    g_auto(GStrv) sets = NULL;
    g_autofree char *output = NULL;
    g_autofree char *params = NULL;
    g_autofree char *model = NULL;
    g_autofree char *format = NULL;
    g_autofree char *pick_name = NULL;
    g_autofree char *loss_name = NULL;
    g_autofree char *prior_name = NULL;
    g_autofree char *plot = NULL;
    g_autofree char *cmd = cs_cli_command_line(argc, argv);
    g_auto(GStrv) files = NULL;
    gboolean leave_one_out = FALSE;
    gboolean leave_one_machine_out = FALSE;
    g_autofree char *output_dir = NULL;
    int gpus_per_thread = 0;
    g_autofree char *threads = NULL;
    int jobs = CS_CLI_JOBS_UNSET;
    gboolean progress_arg = FALSE;
    gboolean quiet = FALSE;
    const GOptionEntry entries[] = {
        { "topo", 0, 0, G_OPTION_ARG_STRING, &topo_name,
          "Topology to start from: a shipped name or a JSON file (required)", "T" },
        CS_CLI_SET_ENTRY(&sets),
        { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output,
          "Write the calibrated topology here (JSON)", "FILE" },
        { "params", 0, 0, G_OPTION_ARG_STRING, &params,
          "Fit only these parameters (comma list of names or prefixes, e.g. "
          "gpu.,nvswitch.bandwidth); default every parameter the traces constrain",
          "LIST" },
        { "leave-one-out", 0, 0, G_OPTION_ARG_NONE, &leave_one_out,
          "For each trace, the error when it is left out of the fit", NULL },
        { "leave-one-machine-out", 0, 0, G_OPTION_ARG_NONE, &leave_one_machine_out,
          "With several --topo: for each machine, the error of its traces predicted with what "
          "a joint fit of the other machines learnt of the components it shares with them",
          NULL },
        { "output-dir", 0, 0, G_OPTION_ARG_FILENAME, &output_dir,
          "With several --topo: write each machine's calibrated topology into DIR as "
          "NAME-calibrated.json",
          "DIR" },
        { "model", 'm', 0, G_OPTION_ARG_STRING, &model,
          "Network model: reservation (default) or maxmin", "MODEL" },
        { "ngpus", 'g', 0, G_OPTION_ARG_INT, &gpus_per_thread,
          "GPUs launched by one thread (default: each trace's nGpus, else the -g or --ngpus of its "
          "command header)",
          "G" },
        /* The long name before --ngpus (run's and nccl-tests'), kept working. */
        { "gpus-per-thread", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_INT, &gpus_per_thread, NULL,
          NULL },
        /* -t is nccl-tests' -t (threads), never the topology (it was, before). */
        { "nthreads", 't', G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_STRING, &threads, NULL, NULL },
        { "pick", 0, 0, G_OPTION_ARG_STRING, &pick_name, CS_CLI_PICK_HELP, "WHO" },
        CS_CLI_JOBS_ENTRY(&jobs),
        { "loss", 0, 0, G_OPTION_ARG_STRING, &loss_name,
          "How a row's relative error weighs: cauchy (default: least squares within a few "
          "percent, the logarithm beyond) or linear (plain least squares)",
          "LOSS" },
        { "prior-weight", 0, 0, G_OPTION_ARG_STRING, &prior_name,
          "Weight of the prior toward the topology's values: the residual of moving one "
          "parameter by a factor e (default 0.02, as much as a 2% error on one row; 0: no prior)",
          "W" },
        { "format", 0, 0, G_OPTION_ARG_STRING, &format,
          "table (default), csv (one line per parameter) or json", "FORMAT" },
        { "plot", 0, 0, G_OPTION_ARG_FILENAME, &plot,
          "Also draw each trace's measured busbw and the predictions before and after the fit "
          "into FILE (.svg, .png or .pdf), one panel per trace",
          "FILE" },
        { "progress", 0, 0, G_OPTION_ARG_NONE, &progress_arg,
          "Print progress on stderr, a line per evaluation of the fit (its iteration, the "
          "rms error so far) with an estimate of the time left once a fit of several "
          "(--leave-one-out) has ended (by default only on a terminal, once a second has "
          "passed)",
          NULL },
        { "quiet", 0, 0, G_OPTION_ARG_NONE, &quiet, "Print no progress", NULL },
        { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &files, NULL, NULL },
        { NULL, 0, 0, 0, NULL, NULL, NULL },
    };
    /* Several --topo, each followed by its traces: one joint fit. */
    g_autoptr(GPtrArray) topo_names = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(GArray) group_of = g_array_new(FALSE, FALSE, sizeof(int));
    scan_machines(argc, argv, entries, topo_names, group_of);
    if (!cs_cli_parse(
            &argc, &argv, entries, "TRACE... | --topo A TRACE... --topo B TRACE...",
            "Fits a topology's free parameters to measured nccl-tests traces.",
            "Free parameters: per link kind on the ranks' routes, the alpha and the\n"
            "usable bandwidth (as a scale of the datasheet figures, so links of one\n"
            "kind keep their differences); per protocol used, the per-hop latency on\n"
            "each link class crossed; the GPU's launch latency, per-step overhead,\n"
            "reduction and copy rates. Those no trace row can see stay fixed. The fit\n"
            "is GSL's trust-region Levenberg-Marquardt on the relative time error r of\n"
            "every row, under the Cauchy loss s^2 log(1 + (r/s)^2), s = 10% (--loss):\n"
            "least squares for rows within a few percent, while a row the model cannot\n"
            "represent (50% off) weighs as about 5 rows 10% off, not 25,\n"
            "with each row's algorithm/protocol/channels frozen at the datasheet\n"
            "prediction (what the trace forced, and what NCCL's tuning model picks for the\n"
            "rest, as validate does; --pick), plus a weak prior toward the datasheet\n"
            "values (an e-fold change of one parameter costs as much as a 2% error on\n"
            "one row; --prior-weight), so what the data cannot separate stays put.\n"
            "Uncertainties are 1-sigma from the sandwich covariance (HC3: each row weighed\n"
            "by its own residual, under the Cauchy loss the damped one), which agrees with a\n"
            "bootstrap over the rows; '?' marks a parameter the data cannot separate from\n"
            "another, '1 row' one that a single row determines.\n"
            "The output file says plainly that its numbers are fitted, names the traces\n"
            "(calibrated_from) and lists every parameter beside its datasheet value.\n"
            "With several --topo, each followed by its machine's traces, one fit covers\n"
            "every machine: a parameter of the same name, component (the GPU model for\n"
            "its costs and NVLink/PCI hop latencies, the link kind at its line rate per\n"
            "lane, the transport for NET hop latencies) and datasheet value is one value\n"
            "for all of them (--output-dir, --leave-one-machine-out).",
            error))
        return FALSE;
    if (!cs_cli_check_trace_args(argv[0], threads, topo_name, files, error))
        return FALSE;
    CsCliProgressMode progress_mode;
    if (!cs_cli_progress_mode(argv[0], progress_arg, quiet, &progress_mode, error))
        return FALSE;
    if (format != NULL && g_strcmp0(format, "json") != 0 && g_strcmp0(format, "table") != 0
        && g_strcmp0(format, "csv") != 0) {
        g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_USAGE,
                    "%s: --format: \"%s\" is not a format (table, csv, json)", argv[0], format);
        return FALSE;
    }
    const gboolean json = g_strcmp0(format, "json") == 0;
    const gboolean csv = g_strcmp0(format, "csv") == 0;
    const int n = (int)g_strv_length(files);
    const gboolean joint = topo_names->len >= 2;
    if (joint) {
        if (group_of->len != (guint)n || g_array_index(group_of, int, 0) < 0)
            return cs_cli_usage_error(error, argv[0],
                                      "with several --topo, every trace follows the --topo of "
                                      "its machine (--topo A a.txt... --topo B b.txt...)");
        if (leave_one_out)
            return cs_cli_usage_error(error, argv[0],
                                      "--leave-one-out takes one --topo (with several, "
                                      "--leave-one-machine-out)");
        if (output != NULL)
            return cs_cli_usage_error(error, argv[0],
                                      "--output takes one --topo (with several, --output-dir "
                                      "DIR writes one file per machine)");
        if (plot != NULL)
            return cs_cli_usage_error(error, argv[0], "--plot takes one --topo");
    }
    else if (leave_one_machine_out || output_dir != NULL)
        return cs_cli_usage_error(error, argv[0],
                                  "%s needs two or more --topo, each followed by "
                                  "its machine's traces",
                                  leave_one_machine_out ? "--leave-one-machine-out"
                                                        : "--output-dir");
    if (leave_one_out && n < 2) {
        g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_USAGE,
                    "%s: --leave-one-out needs at least two traces", argv[0]);
        return FALSE;
    }

    if (model != NULL && (model[0] == '\0' || cs_net_model_lookup(model, NULL) == NULL)) {
        g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_USAGE,
                    "%s: --model: \"%s\" is not a network model (reservation or maxmin)", argv[0],
                    model);
        return FALSE;
    }
    if (!cs_cli_check_gpus_per_thread(argv[0], gpus_per_thread, 0, NULL, error))
        return FALSE;
    g_auto(GStrv) only = NULL;
    if (params != NULL) {
        only = g_strsplit(params, ",", -1);
        for (int i = 0; only[i] != NULL; i++)
            if (g_strstrip(only[i])[0] == '\0') {
                g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_USAGE,
                            "%s: --params: \"%s\" has an empty name (expected e.g. "
                            "gpu.launch,nvswitch.)",
                            argv[0], params);
                return FALSE;
            }
        if (only[0] == NULL) {
            g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_USAGE,
                        "%s: --params: empty list (expected e.g. gpu.launch,nvswitch.)", argv[0]);
            return FALSE;
        }
    }
    if (!cs_cli_check_output(argv[0], "--output", output, error))
        return FALSE;
    if (plot != NULL && !cs_cli_check_plot(argv[0], plot, error))
        return FALSE;

    CsPick pick = CS_PICK_AUTO;
    GError *cause = NULL;
    if (pick_name != NULL && !cs_pick_from_name(pick_name, &pick, &cause))
        return cs_cli_flag_error(error, argv[0], "--pick", cause);
    CsCalibLoss loss = CS_CALIB_LOSS_CAUCHY;
    if (loss_name != NULL && !cs_calib_loss_from_name(loss_name, &loss, &cause))
        return cs_cli_flag_error(error, argv[0], "--loss", cause);
    int n_jobs;
    if (!cs_cli_resolve_jobs(argv[0], jobs, &n_jobs, error))
        return FALSE;
    double prior_weight = CS_CALIB_PRIOR_WEIGHT;
    if (prior_name != NULL && !cs_units_parse_decimal(prior_name, &prior_weight)) {
        g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_USAGE,
                    "%s: --prior-weight: \"%s\" is not a weight (expected a number of 0 or more, "
                    "e.g. 0.02)",
                    argv[0], prior_name);
        return FALSE;
    }

    if (joint) {
        CsPredictOptions joint_options;
        cs_predict_options_init(&joint_options);
        joint_options.engine.net_model = model;
        joint_options.engine.gpus_per_thread = gpus_per_thread;
        joint_options.pick = pick;
        joint_options.jobs = n_jobs;
        const JointArgs args = { .options = &joint_options,
                                 .loss = loss,
                                 .prior_weight = prior_weight,
                                 .only = (const char *const *)only };
        if (output_dir != NULL && !g_file_test(output_dir, G_FILE_TEST_IS_DIR))
            return cs_cli_usage_error(error, argv[0], "--output-dir %s: not a directory",
                                      output_dir);
        if (csv)
            return cs_cli_usage_error(error, argv[0],
                                      "--format csv lists one machine's parameters; a joint fit "
                                      "of several --topo prints a table or json");
        if (calibrate_joint(argv[0], topo_names, group_of, files, sets, &args,
                            leave_one_machine_out, output_dir, json, progress_mode, error))
            return TRUE;
        if (error != NULL && *error != NULL && (*error)->domain == CS_CALIBRATE_ERROR) {
            const gboolean params_error = (*error)->code == CS_CALIBRATE_ERROR_PARAMS;
            (*error)->domain = CS_CLI_ERROR;
            (*error)->code = params_error ? CS_CLI_ERROR_USAGE : CS_CLI_ERROR_INPUT;
            g_prefix_error(error, "%s: %s", argv[0], params_error ? "--params: " : "");
        }
        return FALSE;
    }
    g_autoptr(CsTopo) topo = cs_cli_load_topo(argv[0], topo_name, sets, error);
    if (topo == NULL)
        return FALSE;
    g_autoptr(GPtrArray) traces = g_ptr_array_new_with_free_func((GDestroyNotify)cs_trace_free);
    for (int i = 0; i < n; i++) {
        CsTrace *t = cs_trace_load_file(files[i], error);
        if (t == NULL)
            return FALSE;
        g_ptr_array_add(traces, t);
        if (!cs_cli_check_gpus_per_thread(argv[0], gpus_per_thread, cs_trace_n_ranks(t), files[i],
                                          error))
            return FALSE;
    }
    CsPredictOptions options;
    cs_predict_options_init(&options);
    options.engine.net_model = model;
    options.engine.gpus_per_thread = gpus_per_thread;
    options.pick = pick;
    options.jobs = n_jobs;
    CsTrace *const *tv = (CsTrace *const *)traces->pdata;
    const JointArgs args = { .options = &options,
                             .loss = loss,
                             .prior_weight = prior_weight,
                             .only = (const char *const *)only };
    const CsTopo *const one[] = { topo };

    g_auto(CalibrateProgress) progress = { .fit = NULL };
    cs_cli_progress_init(&progress.line, argv[0], 0, progress_mode);
    cs_cli_progress_restart(&progress.line, 1 + (leave_one_out ? n : 0), "fits");
    g_autofree char *all = g_strdup_printf("the fit to %d trace%s", n, n == 1 ? "" : "s");
    g_autoptr(GPtrArray) fitted = fit_with_progress(&progress, all, one, 1, tv, &n, &args, error);
    g_autoptr(CsCalibration) cal = fitted != NULL ? g_ptr_array_steal_index(fitted, 0) : NULL;
    if (cal == NULL) {
        if (error != NULL && *error != NULL && (*error)->domain == CS_CALIBRATE_ERROR
            && (*error)->code == CS_CALIBRATE_ERROR_PARAMS) {
            (*error)->domain = CS_CLI_ERROR;
            (*error)->code = CS_CLI_ERROR_USAGE;
            g_prefix_error(error, "%s: --params: ", argv[0]);
        }
        /* Too few rows for the parameters is a fault of the input: say which. */
        else if (error != NULL && *error != NULL && (*error)->domain == CS_CALIBRATE_ERROR
                 && (*error)->code == CS_CALIBRATE_ERROR_NO_DATA) {
            g_autofree char *names = g_strjoinv(", ", files);
            (*error)->domain = CS_CLI_ERROR;
            (*error)->code = CS_CLI_ERROR_INPUT;
            g_prefix_error(error, "%s: %s: ", argv[0], names);
        }
        return FALSE;
    }

    g_autofree double *before = g_new(double, g_strv_length(files));
    g_autofree double *after = g_new(double, g_strv_length(files));
    g_autofree double *loo = g_new(double, g_strv_length(files));
    g_autoptr(GPtrArray) reports_before
        = g_ptr_array_new_with_free_func((GDestroyNotify)cs_validate_report_free);
    g_autoptr(GPtrArray) reports_after
        = g_ptr_array_new_with_free_func((GDestroyNotify)cs_validate_report_free);
    for (int i = 0; i < n; i++) {
        loo[i] = NAN;
        if (!trace_error(topo, tv[i], &options, &before[i], plot != NULL ? reports_before : NULL,
                         error)
            || !trace_error(cal->topo, tv[i], &options, &after[i],
                            plot != NULL ? reports_after : NULL, error))
            return FALSE;
        if (!leave_one_out)
            continue;
        g_autoptr(GPtrArray) others = g_ptr_array_new();
        for (int j = 0; j < n; j++)
            if (j != i)
                g_ptr_array_add(others, tv[j]);
        g_autoptr(GError) local = NULL;
        g_autofree char *base = g_path_get_basename(files[i]);
        g_autofree char *what = g_strdup_printf("leaving out %s", base);
        const int n_others = n - 1;
        g_autoptr(GPtrArray) parts = fit_with_progress(
            &progress, what, one, 1, (CsTrace *const *)others->pdata, &n_others, &args, &local);
        g_autoptr(CsCalibration) part = parts != NULL ? g_ptr_array_steal_index(parts, 0) : NULL;
        /* The others alone may not constrain every parameter: say so, do not fail. */
        if (part != NULL && !trace_error(part->topo, tv[i], &options, &loo[i], NULL, error))
            return FALSE;
    }

    cs_cli_progress_finish(&progress.line);

    /* The files first: a write that fails leaves no table on stdout that looks like success. */
    if (plot != NULL) {
        g_autofree char *title
            = g_strdup_printf("collsim calibrate on %s: %d trace%s before and after the fit",
                              cs_topo_name(topo), n, n == 1 ? "" : "s");
        if (!cs_plot_calibrate((CsValidateReport *const *)reports_before->pdata,
                               (CsValidateReport *const *)reports_after->pdata, n, title, cmd, plot,
                               error)) {
            g_prefix_error(error, "%s: --plot: ", argv[0]);
            return FALSE;
        }
    }
    if (output != NULL) {
        g_autofree char *document = cs_calibration_to_json(cal, topo, tv, n);
        g_autoptr(GString) text = g_string_new(document);
        g_string_append_c(text, '\n');
        if (!cs_cli_write_output(argv[0], "--output", output, text->str, (gssize)text->len, error))
            return FALSE;
    }

    if (csv) {
        g_autoptr(GString) out = g_string_new(NULL);
        append_params_csv(out, cal);
        if (!cs_cli_write_output(argv[0], NULL, NULL, out->str, (gssize)out->len, error))
            return FALSE;
    }
    else if (json) {
        cJSON *root = cJSON_CreateObject();
        cs_json_add_schema(root, "collsim-calibrate", CS_JSON_SCHEMA_VERSION);
        cJSON_AddStringToObject(root, "collsim_version", COLLSIM_VERSION);
        cJSON_AddStringToObject(root, "topology", cs_topo_name(topo));
        cJSON_AddNumberToObject(root, "rows", cal->n_rows);
        cJSON_AddNumberToObject(root, "iterations", cal->iterations);
        cJSON_AddStringToObject(root, "loss", cs_calib_loss_name(cal->loss));
        cJSON_AddNumberToObject(root, "prior_weight", cal->prior_weight);
        cJSON_AddNumberToObject(root, "rms_relative_error_before", cal->rms_before);
        cJSON_AddNumberToObject(root, "rms_relative_error_after", cal->rms_after);
        cJSON_AddItemToObject(root, "parameters", cs_calibration_params_to_json(cal));
        cJSON *ts = cJSON_AddArrayToObject(root, "traces");
        for (int i = 0; i < n; i++) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "trace", cs_trace_origin(tv[i]));
            cJSON_AddNumberToObject(o, "datasheet_geomean_abs_busbw_error", before[i]);
            cJSON_AddNumberToObject(o, "calibrated_geomean_abs_busbw_error", after[i]);
            if (!isnan(loo[i]))
                cJSON_AddNumberToObject(o, "leave_one_out_geomean_abs_busbw_error", loo[i]);
            cJSON_AddItemToArray(ts, o);
        }
        char *text = cs_json_print(root, TRUE);
        printf("%s\n", text);
        cJSON_free(text);
        cJSON_Delete(root);
    }
    else {
        g_autofree char *how = cs_calib_loss_describe(loss);
        printf("# collsim calibrate: %s fitted to %d trace(s), %d rows, %d iterations, %s, "
               "prior weight %g\n",
               cs_topo_name(topo), n, cal->n_rows, cal->iterations, how, cal->prior_weight);
        printf("# rms relative time error: %.1f%% with the datasheet topology, %.1f%% fitted\n",
               100 * cal->rms_before, 100 * cal->rms_after);
        print_params(cal);
        /* The name column fits the longest path, so the figures stay in their columns. */
        int width = 60;
        for (int i = 0; i < n; i++)
            width = MAX(width, (int)strlen(cs_trace_origin(tv[i])));
        printf("#\n# %-*s %10s %10s%s\n", width, "trace (geomean |busbw error|)", "datasheet",
               "fitted", leave_one_out ? "  left out" : "");
        for (int i = 0; i < n; i++) {
            printf("  %-*s %9.1f%% %9.1f%%", width, cs_trace_origin(tv[i]), 100 * before[i],
                   100 * after[i]);
            if (leave_one_out && isnan(loo[i]))
                printf("  %9s", "no fit");
            else if (leave_one_out)
                printf("  %8.1f%%", 100 * loo[i]);
            printf("\n");
        }
    }

    if (output != NULL && !json && !csv)
        printf("# wrote %s (fitted values; see its calibrated_from and calibration "
               "records)\n",
               output);
    return TRUE;
}
