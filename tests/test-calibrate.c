// SPDX-License-Identifier: MIT
/* Calibration: the fit recovers known parameters from traces the engine synthesized with
 * multiplicative noise, reports what it cannot see as fixed, and with fewer rows than
 * parameters fits the best-determined ones and holds the rest. */
#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

#include "algos/registry.h"
#include "analysis/calibrate.h"

/* A synthetic measurement: ring/Simple all-reduce on the 4 ranks of dgx-h100x4 as @truth
 * predicts it at @sizes (@n_sizes of them), each time multiplied by (1 + noise), noise
 * uniform in +-@noise, and by @slow[i] when @slow is given. */
static CsTrace *
synthesize_sizes(const CsTopo *truth, const gint64 *sizes, int n_sizes, double noise, guint32 seed,
                 const double *slow)
{
    CsTrace *trace = cs_trace_new(CS_OP_ALL_REDUCE, 4);
    cs_trace_set_header(trace, "collective", "all_reduce");
    cs_trace_set_header(trace, "ranks", "4");
    cs_trace_set_header(trace, "algo/proto", "NCCL_ALGO=Ring NCCL_PROTO=Simple forced");
    g_autoptr(GRand) rand = g_rand_new_with_seed(seed);
    const CsAlgo *ring = cs_algo_lookup("ring", NULL);
    CsPredictOptions options;
    cs_predict_options_init(&options);
    for (int i = 0; i < n_sizes; i++) {
        const gint64 size = sizes[i];
        CsPrediction pred;
        g_autoptr(GError) error = NULL;
        gboolean ok = cs_predict_one(truth, CS_OP_ALL_REDUCE, size, ring, CS_PROTO_SIMPLE, &options,
                                     &pred, &error);
        g_assert_no_error(error);
        g_assert_true(ok);
        CsTraceRow row = { .size_bytes = size, .count = size / 4, .root = -1 };
        g_strlcpy(row.type, "float", sizeof row.type);
        g_strlcpy(row.redop, "sum", sizeof row.redop);
        row.out_of_place.time_us = pred.time_us * (1 + g_rand_double_range(rand, -noise, noise))
                                   * (slow != NULL ? slow[i] : 1.0);
        row.out_of_place.wrong = 0;
        row.in_place = row.out_of_place;
        cs_trace_add_row(trace, &row);
    }
    return trace;
}

/* 1 KiB to 256 MiB by 4, row i @slow[i] times slower when @slow is given. */
static CsTrace *
synthesize_slow(const CsTopo *truth, double noise, guint32 seed, const double *slow)
{
    gint64 sizes[10];
    for (int i = 0; i < 10; i++)
        sizes[i] = (gint64)1024 << (2 * i);
    return synthesize_sizes(truth, sizes, 10, noise, seed, slow);
}

static CsTrace *
synthesize(const CsTopo *truth, double noise, guint32 seed)
{
    return synthesize_slow(truth, noise, seed, NULL);
}

/* @n_rows rows without noise: 1 KiB, 1 MiB, 1 GiB. */
static CsTrace *
few_rows(const CsTopo *truth, int n_rows)
{
    const gint64 sizes[] = { 1024, 1024 << 10, 1024 << 20 };
    g_assert_cmpint(n_rows, <=, (int)G_N_ELEMENTS(sizes));
    return synthesize_sizes(truth, sizes, n_rows, 0.0, 0, NULL);
}

static const CsCalibParam *
find_param(const CsCalibration *cal, const char *name)
{
    for (guint i = 0; i < cal->params->len; i++) {
        const CsCalibParam *p = &g_array_index(cal->params, CsCalibParam, i);
        if (g_strcmp0(p->name, name) == 0)
            return p;
    }
    g_error("no parameter %s", name);
}

/* @datasheet (dgx-h100x4) with a 30% slower launch and NVSwitch links at 85% of their
 * datasheet bandwidth. (transfer full) */
static CsTopo *
launch_and_bandwidth_truth(const CsTopo *datasheet)
{
    CsTopoAdjust adj;
    cs_topo_adjust_init(&adj);
    adj.launch_scale = 1.3;
    adj.link_bw_scale[CS_LINK_NVSWITCH] = 0.85;
    return cs_topo_adjust(datasheet, &adj);
}

/* Setup: the truth is dgx-h100x4 with a 30% slower launch and NVSwitch links at 85% of their
 * datasheet bandwidth. Expectation: fitting launch and bandwidth to 1% noisy times recovers
 * both within 3%, and the other candidates stay at their datasheet values. */
static void
test_recovers_launch_and_bandwidth(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTopo) datasheet = cs_topo_load("dgx-h100x4", &error);
    g_assert_no_error(error);
    g_autoptr(CsTopo) truth = launch_and_bandwidth_truth(datasheet);

    CsTrace *traces[2] = { synthesize(truth, 0.01, 1), synthesize(truth, 0.01, 2) };
    CsPredictOptions options;
    cs_predict_options_init(&options);
    const char *only[] = { "gpu.launch", "nvswitch.bandwidth", NULL };
    g_autoptr(CsCalibration) cal = cs_calibrate_fit(
        datasheet, traces, 2, &options, CS_CALIB_LOSS_CAUCHY, CS_CALIB_PRIOR_WEIGHT, only, &error);
    g_assert_no_error(error);
    g_assert_nonnull(cal);

    const CsCalibParam *launch = find_param(cal, "gpu.launch");
    const CsCalibParam *bw = find_param(cal, "nvswitch.bandwidth");
    g_assert_true(launch->free && bw->free);
    g_assert_cmpfloat_with_epsilon(launch->fitted / launch->initial, 1.3, 0.03 * 1.3);
    g_assert_cmpfloat_with_epsilon(bw->fitted / bw->initial, 0.85, 0.03 * 0.85);
    g_assert_cmpfloat(bw->sigma, >, 0);
    /* Both inside their physical ranges: no bound flagged. */
    g_assert_cmpint(launch->bound, ==, 0);
    g_assert_cmpint(bw->bound, ==, 0);
    g_assert_null(cs_calib_param_bound_note(launch));
    g_assert_cmpfloat(cal->rms_after, <, cal->rms_before);
    /* 1% uniform noise has an rms of 0.58%. */
    g_assert_cmpfloat(cal->rms_after, <, 0.01);

    const CsCalibParam *step = find_param(cal, "gpu.step_overhead");
    g_assert_false(step->free);
    g_assert_true(step->excluded);
    g_assert_false(launch->excluded || bw->excluded);
    g_assert_cmpfloat(step->fitted, ==, step->initial);

    for (int i = 0; i < 2; i++)
        cs_trace_free(traces[i]);
}

/* CsCalibProgressFunc: appends the step to the GArray (CsCalibStep) @data. */
static void
step_told(const CsCalibStep *step, gpointer data)
{
    g_array_append_val((GArray *)data, *step);
}

static int
phase_rank(const char *phase)
{
    static const char *const order[] = { "datasheet", "sensitivities", "fit", "uncertainties" };
    for (int i = 0; i < (int)G_N_ELEMENTS(order); i++)
        if (strcmp(phase, order[i]) == 0)
            return i;
    g_error("unknown phase %s", phase);
}

/* Setup: the launch fitted to a noisy trace of a 30% slower launch, told to a progress
 * callback. Expectation: the same fit as without one; one step per evaluation, counted 1, 2,
 * 3...; the phases in order, each present, the datasheet's one evaluation first, then four
 * per free parameter for the uncertainties; the iterations never past the fit's count (the
 * last step's equal to it) nor past CS_CALIB_MAX_ITERATIONS; the rms the datasheet's first
 * and the fitted one last. */
static void
test_progress_told(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTopo) datasheet = cs_topo_load("dgx-h100x4", &error);
    g_assert_no_error(error);
    g_autoptr(CsTopo) truth = launch_and_bandwidth_truth(datasheet);
    CsTrace *traces[1] = { synthesize(truth, 0.01, 1) };
    int n_traces = 1;
    CsPredictOptions options;
    cs_predict_options_init(&options);
    const char *only[] = { "gpu.launch", NULL };
    g_autoptr(CsCalibration) plain = cs_calibrate_fit(
        datasheet, traces, 1, &options, CS_CALIB_LOSS_CAUCHY, CS_CALIB_PRIOR_WEIGHT, only, &error);
    g_assert_no_error(error);
    g_autoptr(GArray) steps = g_array_new(FALSE, FALSE, sizeof(CsCalibStep));
    const CsTopo *const topos[] = { datasheet };
    g_autoptr(GPtrArray) cals
        = cs_calibrate_fit_joint_full(topos, 1, traces, &n_traces, &options, CS_CALIB_LOSS_CAUCHY,
                                      CS_CALIB_PRIOR_WEIGHT, only, step_told, steps, &error);
    g_assert_no_error(error);
    const CsCalibration *cal = cals->pdata[0];
    g_assert_cmpfloat(find_param(cal, "gpu.launch")->fitted, ==,
                      find_param(plain, "gpu.launch")->fitted);
    g_assert_cmpfloat(cal->rms_after, ==, plain->rms_after);

    g_assert_cmpuint(steps->len, >, 6);
    int n_phase[4] = { 0 };
    int last_phase = 0;
    for (guint i = 0; i < steps->len; i++) {
        const CsCalibStep *s = &g_array_index(steps, CsCalibStep, i);
        g_assert_cmpint(s->evaluation, ==, (int)i + 1);
        g_assert_cmpint(s->max_iterations, ==, CS_CALIB_MAX_ITERATIONS);
        g_assert_cmpint(s->iteration, <=, cal->iterations);
        const int rank = phase_rank(s->phase);
        g_assert_cmpint(rank, >=, last_phase);
        last_phase = rank;
        n_phase[rank]++;
    }
    g_assert_cmpint(n_phase[0], ==, 1);
    g_assert_cmpint(n_phase[1], >=, 1);
    g_assert_cmpint(n_phase[2], >=, cal->iterations);
    int n_free = 0;
    for (guint i = 0; i < cal->params->len; i++)
        n_free += g_array_index(cal->params, CsCalibParam, i).free;
    g_assert_cmpint(n_free, >=, 1);
    g_assert_cmpint(n_phase[3], ==, 4 * n_free);
    const CsCalibStep *first = &g_array_index(steps, CsCalibStep, 0);
    const CsCalibStep *last = &g_array_index(steps, CsCalibStep, steps->len - 1);
    g_assert_cmpfloat(first->rms, ==, cal->rms_before);
    g_assert_cmpfloat(last->rms, ==, cal->rms_after);
    g_assert_cmpint(last->iteration, ==, cal->iterations);
    cs_trace_free(traces[0]);
}

/* Setup: a machine whose NVSwitch links deliver 1.5x their usable figure, which is more than
 * their line rate (dgx-h100x4's links are 25 GB/s lanes at efficiency 0.824: the line rate is
 * 1 / 0.824 = 1.21x the usable figure). Expectation: the fitted bandwidth stops at the line
 * rate, is flagged at its bound, and the bound is in the parameter record. */
static void
test_bandwidth_capped_at_line_rate(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTopo) datasheet = cs_topo_load("dgx-h100x4", &error);
    g_assert_no_error(error);
    CsTopoAdjust adj;
    cs_topo_adjust_init(&adj);
    adj.link_bw_scale[CS_LINK_NVSWITCH] = 1.5;
    g_autoptr(CsTopo) truth = cs_topo_adjust(datasheet, &adj);
    CsTrace *traces[1] = { synthesize(truth, 0.0, 1) };
    CsPredictOptions options;
    cs_predict_options_init(&options);
    const char *only[] = { "nvswitch.bandwidth", NULL };
    g_autoptr(CsCalibration) cal = cs_calibrate_fit(
        datasheet, traces, 1, &options, CS_CALIB_LOSS_CAUCHY, CS_CALIB_PRIOR_WEIGHT, only, &error);
    g_assert_no_error(error);
    const CsCalibParam *bw = find_param(cal, "nvswitch.bandwidth");
    g_assert_true(bw->free);
    g_assert_cmpfloat_with_epsilon(bw->max / bw->initial, 1.0 / 0.824, 1e-3);
    g_assert_cmpfloat(bw->fitted, <=, bw->max * (1 + 1e-9));
    g_assert_cmpfloat(bw->fitted, >=, bw->max * (1 - 1e-6));
    g_assert_true(bw->at_bound);
    cs_trace_free(traces[0]);
}

/* Fits @only of dgx-h100x4 to one noiseless trace of @truth. (transfer full) */
static CsCalibration *
fit_one(const CsTopo *datasheet, const CsTopo *truth, const char *only)
{
    g_autoptr(GError) error = NULL;
    CsTrace *traces[1] = { synthesize(truth, 0.0, 1) };
    CsPredictOptions options;
    cs_predict_options_init(&options);
    const char *names[] = { only, NULL };
    CsCalibration *cal = cs_calibrate_fit(datasheet, traces, 1, &options, CS_CALIB_LOSS_CAUCHY,
                                          CS_CALIB_PRIOR_WEIGHT, names, &error);
    g_assert_no_error(error);
    g_assert_nonnull(cal);
    cs_trace_free(traces[0]);
    return cal;
}

/* Setup: dgx-h100x4 whose launch costs 5x the datasheet's 4.5 us (22.5 us), beyond the 14 us
 * of NCCL's largest base latency that bounds it; and one whose Simple NVLink hop costs 1 us,
 * below the least NCCL charges Simple on NVLink (2.8 us, CollNetChain). Expectation: each fit
 * stops at its bound and says so: bound +1 / -1, no 1-sigma, a note naming the bound, its
 * source and what the traces want; the JSON record carries the range, its source and the
 * bound. A fit inside the range flags nothing (test_recovers_launch_and_bandwidth). */
static void
test_bound_binds(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTopo) datasheet = cs_topo_load("dgx-h100x4", &error);
    g_assert_no_error(error);

    CsTopoAdjust adj;
    cs_topo_adjust_init(&adj);
    adj.launch_scale = 5.0;
    g_autoptr(CsTopo) slow_launch = cs_topo_adjust(datasheet, &adj);
    g_autoptr(CsCalibration) cal = fit_one(datasheet, slow_launch, "gpu.launch");
    const CsCalibParam *launch = find_param(cal, "gpu.launch");
    g_assert_cmpfloat_with_epsilon(launch->min, 0.5e-6, 1e-12);
    g_assert_cmpfloat_with_epsilon(launch->max, 14e-6, 1e-12);
    g_assert_cmpfloat(launch->fitted, <=, launch->max * (1 + 1e-9));
    g_assert_cmpfloat(launch->fitted, >=, launch->max * (1 - 1e-3));
    g_assert_cmpint(launch->bound, ==, 1);
    g_assert_true(launch->at_bound);
    g_assert_true(isnan(launch->sigma));
    g_autofree char *note = cs_calib_param_bound_note(launch);
    g_assert_nonnull(strstr(note, "gpu.launch at its upper bound 14.0 us"));
    g_assert_nonnull(strstr(note, "tuning.cc"));
    g_assert_nonnull(strstr(note, "the traces want more"));

    cJSON *params = cs_calibration_params_to_json(cal);
    const cJSON *rec = NULL;
    cJSON_ArrayForEach(rec, params)
    {
        if (g_strcmp0(cJSON_GetStringValue(cJSON_GetObjectItem(rec, "name")), "gpu.launch") == 0)
            break;
    }
    g_assert_nonnull(rec);
    g_assert_cmpstr(cJSON_GetStringValue(cJSON_GetObjectItem(rec, "bound")), ==, "upper");
    g_assert_cmpfloat(cJSON_GetObjectItem(rec, "max")->valuedouble, ==, launch->max);
    g_assert_cmpfloat(cJSON_GetObjectItem(rec, "min")->valuedouble, ==, launch->min);
    g_assert_nonnull(
        strstr(cJSON_GetStringValue(cJSON_GetObjectItem(rec, "range_source")), "base latency"));
    g_assert_nonnull(cJSON_GetObjectItem(rec, "bound_note"));
    g_assert_null(cJSON_GetObjectItem(rec, "sigma"));
    cJSON_Delete(params);

    cs_topo_adjust_init(&adj);
    adj.hop_latency_s[CS_PROTO_SIMPLE][CS_LINK_CLASS_NVLINK] = 1e-6;
    g_autoptr(CsTopo) fast_hop = cs_topo_adjust(datasheet, &adj);
    g_autoptr(CsCalibration) cal2 = fit_one(datasheet, fast_hop, "Simple.hop.nvlink");
    const CsCalibParam *hop = find_param(cal2, "Simple.hop.nvlink");
    g_assert_cmpfloat_with_epsilon(hop->min, 2.8e-6, 1e-12);
    g_assert_cmpfloat_with_epsilon(hop->max, 31e-6, 1e-12);
    g_assert_cmpfloat(hop->fitted, >=, hop->min * (1 - 1e-9));
    g_assert_cmpfloat(hop->fitted, <=, hop->min * (1 + 1e-3));
    g_assert_cmpint(hop->bound, ==, -1);
    g_autofree char *note2 = cs_calib_param_bound_note(hop);
    g_assert_nonnull(strstr(note2, "Simple.hop.nvlink at its lower bound 2.80 us"));
    g_assert_nonnull(strstr(note2, "the traces want less"));
}

/* The larger of the fitted launch's and NVSwitch bandwidth's relative distance from @truth's
 * factors 1.3 and 0.85 (see below). */
static double
worst_miss(const CsCalibration *cal)
{
    const CsCalibParam *launch = find_param(cal, "gpu.launch");
    const CsCalibParam *bw = find_param(cal, "nvswitch.bandwidth");
    return MAX(fabs(launch->fitted / launch->initial / 1.3 - 1),
               fabs(bw->fitted / bw->initial / 0.85 - 1));
}

/* Setup: the truth of the test above (launch x1.3, NVSwitch bandwidth x0.85), two traces with
 * 1% noise, fitted with no prior, the default prior, a strong one (1: an e-fold move costs as
 * much as a 100% error on one row) and an overwhelming one (1000). Expectation: without a
 * prior and with the default one the fit recovers both within 3%; the launch's move away from
 * the datasheet shrinks as the weight grows, strictly from 0.02 to 1 to 1000, and under 1000
 * it stays within 1% of the datasheet; the fitted topology's record carries the weight. */
static void
test_prior_weight(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTopo) datasheet = cs_topo_load("dgx-h100x4", &error);
    g_assert_no_error(error);
    g_autoptr(CsTopo) truth = launch_and_bandwidth_truth(datasheet);

    CsTrace *traces[2] = { synthesize(truth, 0.01, 1), synthesize(truth, 0.01, 2) };
    CsPredictOptions options;
    cs_predict_options_init(&options);
    const char *only[] = { "gpu.launch", "nvswitch.bandwidth", NULL };
    const double weights[] = { 0.0, CS_CALIB_PRIOR_WEIGHT, 1.0, 1000.0 };
    double moved[G_N_ELEMENTS(weights)];
    for (gsize k = 0; k < G_N_ELEMENTS(weights); k++) {
        g_autoptr(CsCalibration) cal = cs_calibrate_fit(
            datasheet, traces, 2, &options, CS_CALIB_LOSS_CAUCHY, weights[k], only, &error);
        g_assert_no_error(error);
        g_assert_cmpfloat(cal->prior_weight, ==, weights[k]);
        const CsCalibParam *launch = find_param(cal, "gpu.launch");
        moved[k] = fabs(log(launch->fitted / launch->initial));
        g_test_message("prior weight %g: launch x%.4f, worst miss %.2f%%", weights[k],
                       launch->fitted / launch->initial, 100 * worst_miss(cal));
        if (weights[k] <= CS_CALIB_PRIOR_WEIGHT)
            g_assert_cmpfloat(worst_miss(cal), <, 0.03);
        if (k == 1) {
            g_autofree char *text = cs_calibration_to_json(cal, datasheet, traces, 2);
            cJSON *root = cJSON_Parse(text);
            const cJSON *record = cJSON_GetObjectItem(root, "calibration");
            g_assert_cmpfloat(cJSON_GetNumberValue(cJSON_GetObjectItem(record, "prior_weight")), ==,
                              CS_CALIB_PRIOR_WEIGHT);
            cJSON_Delete(root);
        }
    }
    g_assert_cmpfloat(moved[1], >, moved[2]);
    g_assert_cmpfloat(moved[2], >, moved[3]);
    g_assert_cmpfloat(moved[3], <, log(1.01));

    for (int i = 0; i < 2; i++)
        cs_trace_free(traces[i]);
}

/* Setup: the truth of the test above, two traces with 1% noise, and two mid-size rows of one
 * of them 60% slow (what a run that switched algorithm there, or a host hiccup, prints).
 * Expectation: under the Cauchy loss the fit still recovers launch and bandwidth within 3%;
 * plain least squares is pulled further off by those two rows; and rms_before and rms_after
 * are the rows' own relative time error, rms_before the same under both losses (after the fit
 * the two rows' -37.5% alone make it 11.9%; the loss's damped residuals would give 5.2%); the
 * fitted topology's calibration record names the loss (and the Cauchy scale). */
static void
test_outlier_rows(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTopo) datasheet = cs_topo_load("dgx-h100x4", &error);
    g_assert_no_error(error);
    g_autoptr(CsTopo) truth = launch_and_bandwidth_truth(datasheet);

    /* Rows 4 and 5: 256 KiB and 1 MiB. */
    const double slow[10] = { 1, 1, 1, 1, 1.6, 1.6, 1, 1, 1, 1 };
    CsTrace *traces[2] = { synthesize_slow(truth, 0.01, 1, slow), synthesize(truth, 0.01, 2) };
    CsPredictOptions options;
    cs_predict_options_init(&options);
    const char *only[] = { "gpu.launch", "nvswitch.bandwidth", NULL };
    g_autoptr(CsCalibration) cauchy = cs_calibrate_fit(
        datasheet, traces, 2, &options, CS_CALIB_LOSS_CAUCHY, CS_CALIB_PRIOR_WEIGHT, only, &error);
    g_assert_no_error(error);
    g_autoptr(CsCalibration) linear = cs_calibrate_fit(
        datasheet, traces, 2, &options, CS_CALIB_LOSS_LINEAR, CS_CALIB_PRIOR_WEIGHT, only, &error);
    g_assert_no_error(error);

    g_test_message("worst parameter miss: cauchy %.2f%%, linear %.2f%%; rms after %.3f / %.3f",
                   100 * worst_miss(cauchy), 100 * worst_miss(linear), cauchy->rms_after,
                   linear->rms_after);
    g_assert_cmpfloat(worst_miss(cauchy), <, 0.03);
    g_assert_cmpfloat(worst_miss(linear), >, 2 * worst_miss(cauchy));
    g_assert_cmpint(cauchy->loss, ==, CS_CALIB_LOSS_CAUCHY);
    g_assert_cmpfloat(cauchy->rms_after, >, 0.10);
    /* Before the fit both report the same rows' own relative error (to rounding: the Cauchy
     * residuals are inverted back). */
    g_assert_cmpfloat_with_epsilon(linear->rms_before, cauchy->rms_before, 1e-12);

    /* The fitted topology's record says which loss made it. */
    const CsCalibration *fits[2] = { cauchy, linear };
    for (int k = 0; k < 2; k++) {
        g_autofree char *text = cs_calibration_to_json(fits[k], datasheet, traces, 2);
        cJSON *root = cJSON_Parse(text);
        const cJSON *record = cJSON_GetObjectItem(root, "calibration");
        g_assert_cmpstr(cJSON_GetStringValue(cJSON_GetObjectItem(record, "loss")), ==,
                        k == 0 ? "cauchy" : "linear");
        const cJSON *scale = cJSON_GetObjectItem(record, "cauchy_scale");
        if (k == 0)
            g_assert_cmpfloat(cJSON_GetNumberValue(scale), ==, CS_CALIB_CAUCHY_SCALE);
        else
            g_assert_null(scale);
        cJSON_Delete(root);
    }

    for (int i = 0; i < 2; i++)
        cs_trace_free(traces[i]);
}

/* Setup: an all-gather trace never reduces. Expectation: the reduction rate is a candidate
 * only through the GPU, and the fit fixes it because no row moves when it changes. */
static void
test_invisible_parameter_fixed(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTopo) topo = cs_topo_load("dgx-h100x4", &error);
    g_assert_no_error(error);
    g_autoptr(CsTrace) trace = cs_trace_new(CS_OP_ALL_GATHER, 4);
    cs_trace_set_header(trace, "collective", "all_gather");
    cs_trace_set_header(trace, "ranks", "4");
    for (gint64 size = 4096; size <= G_GINT64_CONSTANT(64) << 20; size *= 4) {
        CsTraceRow row = { .size_bytes = size, .count = size / 16, .root = -1 };
        g_strlcpy(row.type, "float", sizeof row.type);
        g_strlcpy(row.redop, "none", sizeof row.redop);
        /* Not the model's own numbers: a plain 20 us + size / 100 GB/s. */
        row.out_of_place.time_us = 20 + size / 1e5;
        row.in_place = row.out_of_place;
        cs_trace_add_row(trace, &row);
    }
    CsTrace *traces[1] = { trace };
    CsPredictOptions options;
    cs_predict_options_init(&options);
    g_autoptr(CsCalibration) cal = cs_calibrate_fit(topo, traces, 1, &options, CS_CALIB_LOSS_CAUCHY,
                                                    CS_CALIB_PRIOR_WEIGHT, NULL, &error);
    g_assert_no_error(error);
    const CsCalibParam *reduce = find_param(cal, "gpu.reduce_bandwidth");
    g_assert_false(reduce->free);
    g_assert_cmpfloat(cal->rms_after, <=, cal->rms_before);
}

/* Setup: three rows measured on a machine with a 30% slower launch and NVSwitch links at 85%
 * of their datasheet bandwidth; the rows see more than three parameters. Expectation: the fit
 * keeps two of them free (one degree of freedom left), holds the others at their datasheet
 * values and says so, and lowers the error. One row alone cannot be fitted: an error, not a
 * fit that pretends. */
static void
test_too_few_rows(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTopo) topo = cs_topo_load("dgx-h100x4", &error);
    g_assert_no_error(error);
    CsTopoAdjust adj;
    cs_topo_adjust_init(&adj);
    adj.launch_scale = 1.3;
    adj.link_bw_scale[CS_LINK_NVSWITCH] = 0.85;
    g_autoptr(CsTopo) truth = cs_topo_adjust(topo, &adj);
    CsPredictOptions options;
    cs_predict_options_init(&options);

    CsTrace *traces[1] = { few_rows(truth, 3) };
    g_autoptr(CsCalibration) cal = cs_calibrate_fit(topo, traces, 1, &options, CS_CALIB_LOSS_CAUCHY,
                                                    CS_CALIB_PRIOR_WEIGHT, NULL, &error);
    g_assert_no_error(error);
    g_assert_nonnull(cal);
    int n_free = 0;
    int n_held = 0;
    for (guint i = 0; i < cal->params->len; i++) {
        const CsCalibParam *p = &g_array_index(cal->params, CsCalibParam, i);
        n_free += p->free;
        n_held += p->held;
        g_assert_false(p->free && p->held);
        if (!p->free)
            g_assert_cmpfloat(p->fitted, ==, p->initial);
    }
    g_assert_cmpint(n_free, ==, 2);
    g_assert_cmpint(n_held, >=, 1);
    g_assert_cmpfloat(cal->rms_after, <, cal->rms_before);
    cs_trace_free(traces[0]);

    traces[0] = few_rows(truth, 1);
    CsCalibration *none = cs_calibrate_fit(topo, traces, 1, &options, CS_CALIB_LOSS_CAUCHY,
                                           CS_CALIB_PRIOR_WEIGHT, NULL, &error);
    g_assert_null(none);
    g_assert_error(error, CS_CALIBRATE_ERROR, CS_CALIBRATE_ERROR_NO_DATA);
    cs_trace_free(traces[0]);
}

/* Setup: a ring all-reduce trace; @only names "gpu.lanch" (a typo) beside "gpu.launch".
 * Expectation: CS_CALIBRATE_ERROR_PARAMS quoting the typo, not a fit of "gpu.launch" alone.
 * Then @only names only a parameter no row moves (the all-gather's reduction rate): the fit
 * refuses with NO_DATA (it crashed on an empty free list before). */
static void
test_params_unknown_or_invisible(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTopo) topo = cs_topo_load("dgx-h100x4", &error);
    g_assert_no_error(error);
    CsTrace *traces[1] = { synthesize(topo, 0.0, 3) };
    CsPredictOptions options;
    cs_predict_options_init(&options);

    const char *typo[] = { "gpu.launch", "gpu.lanch", NULL };
    CsCalibration *cal = cs_calibrate_fit(topo, traces, 1, &options, CS_CALIB_LOSS_CAUCHY,
                                          CS_CALIB_PRIOR_WEIGHT, typo, &error);
    g_assert_null(cal);
    g_assert_error(error, CS_CALIBRATE_ERROR, CS_CALIBRATE_ERROR_PARAMS);
    g_assert_true(g_str_has_prefix(error->message, "\"gpu.lanch\" names no parameter"));
    g_clear_error(&error);
    cs_trace_free(traces[0]);

    g_autoptr(CsTrace) gather = cs_trace_new(CS_OP_ALL_GATHER, 4);
    cs_trace_set_header(gather, "collective", "all_gather");
    cs_trace_set_header(gather, "ranks", "4");
    for (gint64 size = 4096; size <= G_GINT64_CONSTANT(64) << 20; size *= 4) {
        CsTraceRow row = { .size_bytes = size, .count = size / 16, .root = -1 };
        g_strlcpy(row.type, "float", sizeof row.type);
        g_strlcpy(row.redop, "none", sizeof row.redop);
        row.out_of_place.time_us = 20 + size / 1e5;
        row.in_place = row.out_of_place;
        cs_trace_add_row(gather, &row);
    }
    traces[0] = gather;
    const char *invisible[] = { "gpu.reduce_bandwidth", NULL };
    cal = cs_calibrate_fit(topo, traces, 1, &options, CS_CALIB_LOSS_CAUCHY, CS_CALIB_PRIOR_WEIGHT,
                           invisible, &error);
    g_assert_null(cal);
    g_assert_error(error, CS_CALIBRATE_ERROR, CS_CALIBRATE_ERROR_NO_DATA);
}

/* A bootstrap sample of the trace @text: every table row (a line starting with a digit after
 * blanks) drawn with replacement as often as it has rows, kept in file order; every other
 * line (headers, the tool's own lines, the footer) as it is. (transfer full) */
static char *
resample_rows(const char *text, GRand *rand)
{
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    g_autoptr(GArray) rows = g_array_new(FALSE, FALSE, sizeof(int));
    for (int i = 0; lines[i] != NULL; i++) {
        const char *l = lines[i];
        while (*l == ' ')
            l++;
        if (g_ascii_isdigit(*l))
            g_array_append_val(rows, i);
    }
    g_autofree int *times = g_new0(int, rows->len);
    for (guint k = 0; k < rows->len; k++)
        times[g_rand_int_range(rand, 0, (gint32)rows->len)]++;
    GString *out = g_string_new(NULL);
    guint row = 0;
    for (int i = 0; lines[i] != NULL; i++) {
        if (row < rows->len && g_array_index(rows, int, row) == i) {
            for (int k = 0; k < times[row]; k++)
                g_string_append_printf(out, "%s\n", lines[i]);
            row++;
        }
        else if (lines[i + 1] != NULL || lines[i][0] != '\0')
            g_string_append_printf(out, "%s\n", lines[i]);
    }
    return g_string_free(out, FALSE);
}

/* Setup: the measured 4 x H100 all-reduce log on dgx-h100x4, every parameter free (as
 * examples/validate-and-calibrate.sh fits it), and 40 bootstrap samples of its rows refitted
 * the same way. Expectation: for each parameter the fit pins down (a finite 1-sigma), the
 * 1-sigma of ln(value) from the covariance and the standard deviation of ln(fitted) over the
 * samples agree within a factor of two; and holding parameters fixed never widens another's
 * 1-sigma. Before the Jacobian behind the uncertainties took its quotients on the smooth side
 * of the simulation's jumps, LL.hop.nvlink's 1-sigma was 258 ps with every parameter free and
 * 240 ns with four held: about 1000 times below its bootstrap spread. Since the physical
 * ranges, LL.hop.nvlink's 1-sigma interval (0.93 e-folds) reaches below NCCL's least LL NVLink
 * latency (0.6 us, its lower bound): the bound, not the rows, limits it, the samples' fits
 * pile up on it (their spread 0.42), and it has no 1-sigma; two parameters are compared. */
static void
test_sigma_matches_bootstrap(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTopo) datasheet = cs_topo_load("dgx-h100x4", &error);
    g_assert_no_error(error);
    g_autofree char *path = g_test_build_filename(
        G_TEST_DIST, "..", "traces", "h100-sxm-4gpu-nvswitch_allreduce_nccl2.26.2.txt", NULL);
    g_autofree char *text = NULL;
    g_file_get_contents(path, &text, NULL, &error);
    g_assert_no_error(error);
    g_autoptr(CsTrace) trace = cs_trace_load_data(text, "bootstrap", &error);
    g_assert_no_error(error);
    CsPredictOptions options;
    cs_predict_options_init(&options);
    options.pick = CS_PICK_AUTO; /* as collsim calibrate */
    CsTrace *one[] = { trace };
    g_autoptr(CsCalibration) cal = cs_calibrate_fit(
        datasheet, one, 1, &options, CS_CALIB_LOSS_CAUCHY, CS_CALIB_PRIOR_WEIGHT, NULL, &error);
    g_assert_no_error(error);

    enum { N_SAMPLES = 40 };
    const guint n_params = cal->params->len;
    g_autofree double *sum = g_new0(double, n_params);
    g_autofree double *sum2 = g_new0(double, n_params);
    g_autofree int *count = g_new0(int, n_params);
    g_autoptr(GRand) rand = g_rand_new_with_seed(30);
    for (int b = 0; b < N_SAMPLES; b++) {
        g_autofree char *sample_text = resample_rows(text, rand);
        g_autoptr(CsTrace) sample = cs_trace_load_data(sample_text, "sample", &error);
        g_assert_no_error(error);
        CsTrace *traces[] = { sample };
        g_autoptr(CsCalibration) fit
            = cs_calibrate_fit(datasheet, traces, 1, &options, CS_CALIB_LOSS_CAUCHY,
                               CS_CALIB_PRIOR_WEIGHT, NULL, &error);
        g_assert_no_error(error);
        /* A sample without a protocol's rows has no parameter for it: matched by name. */
        for (guint k = 0; k < fit->params->len; k++) {
            const CsCalibParam *p = &g_array_index(fit->params, CsCalibParam, k);
            guint i = 0;
            while (i < n_params
                   && g_strcmp0(g_array_index(cal->params, CsCalibParam, i).name, p->name) != 0)
                i++;
            if (i == n_params || !p->free)
                continue;
            const double x = log(p->fitted / p->initial);
            sum[i] += x;
            sum2[i] += x * x;
            count[i]++;
        }
    }
    int compared = 0;
    for (guint i = 0; i < n_params; i++) {
        const CsCalibParam *p = &g_array_index(cal->params, CsCalibParam, i);
        if (!p->free || isnan(p->sigma))
            continue;
        const double sigma_log = p->sigma / p->fitted;
        const double mean = sum[i] / count[i];
        const double spread
            = sqrt(MAX(0.0, sum2[i] / count[i] - mean * mean) * count[i] / MAX(1, count[i] - 1));
        g_test_message("%s: covariance %.4g, bootstrap %.4g (%d samples)", p->name, sigma_log,
                       spread, count[i]);
        g_assert_cmpint(count[i], >=, N_SAMPLES * 3 / 4);
        g_assert_cmpfloat(sigma_log, <=, 2.0 * spread);
        g_assert_cmpfloat(sigma_log, >=, 0.5 * spread);
        compared++;
    }
    g_assert_cmpint(compared, >=, 2);
    const CsCalibParam *ll = find_param(cal, "LL.hop.nvlink");
    g_assert_true(ll->free && isnan(ll->sigma));
}

/* dgx-h100x4 with its NVSwitch lanes at twice the line rate (an NVLink generation apart): the
 * same GPU model on another link component. (transfer full) */
static CsTopo *
faster_links(const CsTopo *datasheet)
{
    g_autofree char *text = cs_topo_to_json(datasheet);
    CsTopoAdjust adj;
    cs_topo_adjust_init(&adj);
    cJSON *root = cJSON_Parse(text);
    g_assert_nonnull(root);
    cJSON *links = cJSON_GetObjectItem(root, "links");
    g_assert_nonnull(links);
    cJSON *link;
    cJSON_ArrayForEach(link, links)
    {
        cJSON *bw = cJSON_GetObjectItem(link, "bandwidth");
        g_assert_nonnull(bw);
        g_assert_true(cJSON_IsString(bw));
        g_assert_cmpstr(bw->valuestring, ==, "25 GB/s");
        cJSON_ReplaceItemInObject(link, "bandwidth", cJSON_CreateString("50 GB/s"));
    }
    cJSON_ReplaceItemInObject(root, "name", cJSON_CreateString("h100x4-fast-links"));
    char *edited = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    g_autoptr(GError) error = NULL;
    CsTopo *topo = cs_topo_load_data(edited, "h100x4-fast-links", &error);
    cJSON_free(edited);
    g_assert_no_error(error);
    return topo;
}

/* Setup: two machines with the same GPU model (H100 SXM5) on NVSwitch lanes of different line
 * rates: A is dgx-h100x4, B the same with 50 GB/s lanes. In truth both launch 1.3x slower than
 * the datasheet, A's links deliver 0.85 of their usable figure and B's 0.7. Expectation: one
 * joint fit of launch and NVSwitch bandwidth shares the launch (one value, `shared` = 2, the
 * same fitted value in both fitted topologies, within 3% of 1.3x), keeps each machine's own
 * bandwidth (0.85 and 0.7 within 3%, `shared` = 1), keeps every value inside its range, and
 * gives bit-identical values when run again. Leave-one-machine-out: B's fit alone carries its
 * launch over to A (one parameter moved) and leaves A's bandwidth at its datasheet value. */
static void
test_joint_shares_components(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTopo) a = cs_topo_load("dgx-h100x4", &error);
    g_assert_no_error(error);
    g_autoptr(CsTopo) b = faster_links(a);
    CsTopoAdjust adj;
    cs_topo_adjust_init(&adj);
    adj.launch_scale = 1.3;
    adj.link_bw_scale[CS_LINK_NVSWITCH] = 0.85;
    g_autoptr(CsTopo) truth_a = cs_topo_adjust(a, &adj);
    adj.link_bw_scale[CS_LINK_NVSWITCH] = 0.7;
    g_autoptr(CsTopo) truth_b = cs_topo_adjust(b, &adj);

    CsTrace *traces[2] = { synthesize(truth_a, 0.01, 1), synthesize(truth_b, 0.01, 2) };
    const int n_traces[2] = { 1, 1 };
    const CsTopo *const topos[2] = { a, b };
    CsPredictOptions options;
    cs_predict_options_init(&options);
    const char *only[] = { "gpu.launch", "nvswitch.bandwidth", NULL };
    g_autoptr(GPtrArray) fit
        = cs_calibrate_fit_joint(topos, 2, traces, n_traces, &options, CS_CALIB_LOSS_CAUCHY,
                                 CS_CALIB_PRIOR_WEIGHT, only, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(fit->len, ==, 2);
    const CsCalibration *ca = fit->pdata[0];
    const CsCalibration *cb = fit->pdata[1];

    const CsCalibParam *la = find_param(ca, "gpu.launch");
    const CsCalibParam *lb = find_param(cb, "gpu.launch");
    g_assert_cmpstr(la->component, ==, lb->component);
    g_assert_true(strstr(la->component, "H100") != NULL);
    g_assert_true(la->free && lb->free);
    g_assert_cmpint(la->shared, ==, 2);
    g_assert_cmpint(lb->shared, ==, 2);
    g_assert_cmpfloat(la->fitted, ==, lb->fitted);
    g_assert_cmpfloat_with_epsilon(la->fitted / la->initial, 1.3, 0.03 * 1.3);
    /* The fitted topologies carry that one value. */
    g_assert_cmpfloat(cs_topo_rank_gpu(ca->topo, 0)->launch_s, ==,
                      cs_topo_rank_gpu(cb->topo, 0)->launch_s);

    const CsCalibParam *ba = find_param(ca, "nvswitch.bandwidth");
    const CsCalibParam *bb = find_param(cb, "nvswitch.bandwidth");
    g_assert_cmpstr(ba->component, !=, bb->component);
    g_assert_cmpint(ba->shared, ==, 1);
    g_assert_cmpint(bb->shared, ==, 1);
    g_assert_cmpfloat_with_epsilon(ba->fitted / ba->initial, 0.85, 0.03 * 0.85);
    g_assert_cmpfloat_with_epsilon(bb->fitted / bb->initial, 0.7, 0.03 * 0.7);
    const CsCalibParam *all[] = { la, lb, ba, bb };
    for (guint i = 0; i < G_N_ELEMENTS(all); i++) {
        g_assert_cmpfloat(all[i]->fitted, >=, all[i]->min);
        g_assert_cmpfloat(all[i]->fitted, <=, all[i]->max);
    }

    /* Deterministic: the same fit again gives the same values, bit for bit. */
    g_autoptr(GPtrArray) again
        = cs_calibrate_fit_joint(topos, 2, traces, n_traces, &options, CS_CALIB_LOSS_CAUCHY,
                                 CS_CALIB_PRIOR_WEIGHT, only, &error);
    g_assert_no_error(error);
    for (int m = 0; m < 2; m++) {
        const CsCalibration *x = fit->pdata[m];
        const CsCalibration *y = again->pdata[m];
        g_assert_cmpuint(x->params->len, ==, y->params->len);
        for (guint i = 0; i < x->params->len; i++)
            g_assert_cmpfloat(g_array_index(x->params, CsCalibParam, i).fitted, ==,
                              g_array_index(y->params, CsCalibParam, i).fitted);
    }

    /* Leave A out: B alone learns the launch, A takes it and keeps its own bandwidth. */
    g_autoptr(GPtrArray) only_b
        = cs_calibrate_fit_joint(&topos[1], 1, &traces[1], &n_traces[1], &options,
                                 CS_CALIB_LOSS_CAUCHY, CS_CALIB_PRIOR_WEIGHT, only, &error);
    g_assert_no_error(error);
    int moved = -1;
    g_autoptr(CsTopo) held_out
        = cs_calibrate_transfer(a, &traces[0], 1, &options, only_b, &moved, &error);
    g_assert_no_error(error);
    g_assert_cmpint(moved, ==, 1);
    const CsCalibParam *learnt = find_param(only_b->pdata[0], "gpu.launch");
    g_assert_cmpfloat(cs_topo_rank_gpu(held_out, 0)->launch_s, ==, learnt->fitted);
    g_assert_cmpfloat(cs_topo_injection_bw(held_out, 0, CS_LINK_CLASS_NVLINK), ==,
                      cs_topo_injection_bw(a, 0, CS_LINK_CLASS_NVLINK));

    for (int i = 0; i < 2; i++)
        cs_trace_free(traces[i]);
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/calibrate/recovers/launch-and-bandwidth", test_recovers_launch_and_bandwidth);
    g_test_add_func("/calibrate/outlier-rows", test_outlier_rows);
    g_test_add_func("/calibrate/progress-told", test_progress_told);
    g_test_add_func("/calibrate/bandwidth-capped-at-line-rate", test_bandwidth_capped_at_line_rate);
    g_test_add_func("/calibrate/prior-weight", test_prior_weight);
    g_test_add_func("/calibrate/bound-binds", test_bound_binds);
    g_test_add_func("/calibrate/joint/shares-components", test_joint_shares_components);
    g_test_add_func("/calibrate/invisible-parameter-fixed", test_invisible_parameter_fixed);
    g_test_add_func("/calibrate/too-few-rows", test_too_few_rows);
    g_test_add_func("/calibrate/params/unknown-or-invisible", test_params_unknown_or_invisible);
    /* 40 fits: about a minute, more under the sanitizers; suite 'slow' runs it (-m slow). */
    if (g_test_slow())
        g_test_add_func("/calibrate/sigma/bootstrap", test_sigma_matches_bootstrap);
    return g_test_run();
}
