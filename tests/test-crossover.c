// SPDX-License-Identifier: MIT
/* The measured-crossover search (src/analysis/crossover.c) driven by a test double: a
 * measurement source whose two choices follow known alpha-beta lines with deterministic noise,
 * so the true crossover is known and every verdict can be checked; and a machine simulated by
 * the engine on a changed topology, to check that calibrating on the measurements moves the
 * predicted crossover toward the measured one. No backend, no timing. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "algos/registry.h"
#include "analysis/calibrate.h"
#include "analysis/crossover.h"
#include "predict/select.h"
#include "test-util.h"

/* ---- A machine of two lines ---- */

/* t(s) = alpha + s / bw for each choice, times (1 + noise * u), u uniform in [-1, 1) from a
 * fixed seed. */
typedef struct {
    double alpha_us[2]; /* [0] the crossover's lower choice, [1] its upper one */
    double us_per_byte[2];
    double noise;
    GRand *rand;
    const CsSelectChoice *upper; /* to tell the choices apart */
    gboolean refuse_upper;       /* can_measure says no to the upper choice */
    int fail_after;              /* > 0: the source fails at this sample */
    int samples;
    GArray *told; /* CsXoverPoint: each point CsXoverSource.measured was told of, in order */
    int told_n;   /* the point count it was last told */
} Lines;

static double
line_time(const Lines *l, int j, gint64 size)
{
    return l->alpha_us[j] + (double)size * l->us_per_byte[j];
}

static gboolean
lines_can_measure(const CsSelectChoice *choice, char **why, gpointer data)
{
    Lines *l = data;
    if (l->refuse_upper && cs_select_choice_equal(choice, l->upper)) {
        *why = g_strdup("needs a switch this machine lacks");
        return FALSE;
    }
    return TRUE;
}

static gboolean
lines_measure(const CsSelectChoice *choice, gint64 size, gboolean first, double *time_us,
              gpointer data, GError **error)
{
    Lines *l = data;
    (void)first;
    l->samples++;
    if (l->fail_after > 0 && l->samples >= l->fail_after) {
        g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_IO, "the device went away");
        return FALSE;
    }
    int j = cs_select_choice_equal(choice, l->upper) ? 1 : 0;
    *time_us = line_time(l, j, size) * (1.0 + l->noise * (2.0 * g_rand_double(l->rand) - 1.0));
    return TRUE;
}

static void
lines_measured(const CsXoverPoint *point, int n_points, gpointer data)
{
    Lines *l = data;
    g_array_append_val(l->told, *point);
    l->told_n = n_points;
    /* Told once per new point, the count one more each time. */
    g_assert_cmpint(n_points, ==, (int)l->told->len);
}

typedef struct {
    CsSelectCrossover predicted;
    Lines lines;
    CsXoverSource source;
    CsXoverOptions options;
} Fixture;

/* Lower choice: 2 us + 1 ns/B; upper: 10 us + 0.5 ns/B: they cross where 8 us = s * 0.5 ns/B,
 * s = 16000 B. The prediction says 4000 B. */
static void
fixture_setup(Fixture *f, gconstpointer data)
{
    (void)data;
    memset(f, 0, sizeof *f);
    f->predicted.size_bytes = 4000;
    f->predicted.below_bytes = 3996;
    f->predicted.from = (CsSelectChoice){ .algo = cs_algo_lookup("recursive_doubling", NULL),
                                          .nccl_algo = -1,
                                          .proto = CS_PROTO_SIMPLE,
                                          .n_channels = 1 };
    f->predicted.to = (CsSelectChoice){ .algo = cs_algo_lookup("ring", NULL),
                                        .nccl_algo = -1,
                                        .proto = CS_PROTO_SIMPLE,
                                        .n_channels = 1 };
    f->lines = (Lines){ .alpha_us = { 2.0, 10.0 },
                        .us_per_byte = { 1e-3, 0.5e-3 },
                        .noise = 0.01,
                        .rand = g_rand_new_with_seed(20261127),
                        .upper = &f->predicted.to,
                        .told = g_array_new(FALSE, FALSE, sizeof(CsXoverPoint)) };
    f->source = (CsXoverSource){ .can_measure = lines_can_measure,
                                 .measure = lines_measure,
                                 .user_data = &f->lines,
                                 .measured = lines_measured };
    cs_xover_options_init(&f->options);
    f->options.granularity = 4;
    f->options.min_bytes = 4;
}

static void
fixture_teardown(Fixture *f, gconstpointer data)
{
    (void)data;
    g_rand_free(f->lines.rand);
    g_array_unref(f->lines.told);
}

static CsXoverResult *
run(Fixture *f)
{
    CsXoverResult *r = NULL;
    g_autoptr(GError) error = NULL;
    g_assert_true(
        cs_xover_measure(CS_OP_ALL_REDUCE, &f->predicted, &f->options, &f->source, &r, &error));
    g_assert_no_error(error);
    g_assert_nonnull(r);
    for (guint i = 0; i < r->points->len; i++) {
        const CsXoverPoint *p = &g_array_index(r->points, CsXoverPoint, i);
        g_test_message("%" G_GINT64_FORMAT " B: %.3f +- %.3f vs %.3f +- %.3f, diff %.3f +- %.3f, "
                       "%d repeats, %s",
                       p->size_bytes, p->from_us, p->from_ci_us, p->to_us, p->to_ci_us, p->diff_us,
                       p->diff_ci_us, p->repeats, cs_xover_verdict_name(p->verdict));
    }
    return r;
}

/* Every point's repeats within the budget, and the sample count their sum. */
static void
assert_budget(const Fixture *f, const CsXoverResult *r)
{
    int samples = 0;
    g_assert_cmpint(r->points->len, <=, f->options.max_points);
    for (guint i = 0; i < r->points->len; i++) {
        const CsXoverPoint *p = &g_array_index(r->points, CsXoverPoint, i);
        g_assert_cmpint(p->repeats, <=, f->options.max_repeats);
        g_assert_cmpint(p->repeats, >=, f->options.min_repeats);
        g_assert_cmpint(p->size_bytes % f->options.granularity, ==, 0);
        if (i > 0)
            g_assert_cmpint(p->size_bytes, >,
                            g_array_index(r->points, CsXoverPoint, i - 1).size_bytes);
        samples += 2 * p->repeats;
    }
    g_assert_cmpint(r->n_samples, ==, samples);
    g_assert_cmpint(f->lines.samples, ==, samples);
}

/* The true crossover 16000 B lies above the prediction: the search walks up from 4000 by 4
 * (16000: within 1% noise the sides are equal there, 64000 the upper wins), then bisects.
 * The interval must hold 16000 and be within the width; the point estimate (the zero of the
 * measured difference) near it; the loss at the predicted size is what the upper choice costs
 * there: (10 + 2) - (2 + 4) = 6 us. */
static void
test_measured_above(Fixture *f, gconstpointer data)
{
    (void)data;
    g_test_summary("a crossover 4x above the prediction is bracketed and bisected to it");
    g_autoptr(CsXoverResult) r = run(f);
    assert_budget(f, r);
    g_assert_cmpstr(cs_xover_status_name(r->status), ==, "measured");
    g_assert_cmpint(r->lo_bytes, <, 16000);
    g_assert_cmpint(r->hi_bytes, >=, 16000);
    g_assert_false(r->budget_spent);
    g_assert_cmpfloat((double)r->hi_bytes / (double)r->lo_bytes, <=, 1.0 + f->options.width);
    g_assert_cmpint(r->measured_bytes, >, r->lo_bytes);
    g_assert_cmpint(r->measured_bytes, <=, r->hi_bytes);
    g_assert_cmpfloat_with_epsilon((double)r->measured_bytes, 16000.0, 800.0);
    g_assert_cmpfloat_with_epsilon(r->ratio, (double)r->measured_bytes / 4000.0, 1e-12);
    /* The first point is the predicted size. */
    g_assert_cmpfloat_with_epsilon(r->loss_predicted_us, 6.0, 0.3);
    g_assert_cmpfloat_with_epsilon(r->loss_predicted_pct, 100.0, 6.0);
    g_assert_cmpfloat(r->loss_max_us, >=, r->loss_predicted_us);
    g_assert_cmpfloat(r->noise_pct, >, 0.0);
    g_assert_cmpfloat(r->noise_pct, <, 3.0);
}

/* The source is told of each point as it is decided (for progress lines): once per point of
 * the result, the first at the predicted size, each with the verdict and repeats the result
 * keeps for its size. */
static void
test_told_of_points(Fixture *f, gconstpointer data)
{
    (void)data;
    g_autoptr(CsXoverResult) r = run(f);
    g_assert_cmpuint(r->points->len, >=, 3);
    g_assert_cmpuint(f->lines.told->len, ==, r->points->len);
    g_assert_cmpint(f->lines.told_n, ==, (int)r->points->len);
    g_assert_cmpint(g_array_index(f->lines.told, CsXoverPoint, 0).size_bytes, ==, 4000);
    for (guint i = 0; i < f->lines.told->len; i++) {
        const CsXoverPoint *t = &g_array_index(f->lines.told, CsXoverPoint, i);
        const CsXoverPoint *kept = NULL;
        for (guint k = 0; k < r->points->len && kept == NULL; k++)
            if (g_array_index(r->points, CsXoverPoint, k).size_bytes == t->size_bytes)
                kept = &g_array_index(r->points, CsXoverPoint, k);
        g_assert_nonnull(kept);
        g_assert_cmpint(t->verdict, ==, kept->verdict);
        g_assert_cmpint(t->repeats, ==, kept->repeats);
        for (guint k = 0; k < i; k++)
            g_assert_cmpint(g_array_index(f->lines.told, CsXoverPoint, k).size_bytes, !=,
                            t->size_bytes);
    }
}

/* The prediction 4x too high (64000 B): the search walks down instead. */
static void
test_measured_below(Fixture *f, gconstpointer data)
{
    (void)data;
    f->predicted.size_bytes = 64000;
    f->predicted.below_bytes = 63996;
    g_autoptr(CsXoverResult) r = run(f);
    assert_budget(f, r);
    g_assert_cmpint(r->status, ==, CS_XOVER_MEASURED);
    g_assert_cmpint(r->lo_bytes, <, 16000);
    g_assert_cmpint(r->hi_bytes, >=, 16000);
    g_assert_cmpfloat(r->ratio, <, 0.3);
    /* At 64000 the prediction runs the upper choice, which is right there: no loss. */
    g_assert_cmpfloat(r->loss_predicted_us, ==, 0.0);
}

/* Both choices the same line: every point settles as equal (their difference within 3%), and
 * the crossover is a tie over the whole bracket, 4000 / 4^3 ... 4000 * 4^3. */
static void
test_tie(Fixture *f, gconstpointer data)
{
    (void)data;
    g_test_summary("two sides within noise over the whole bracket are a tie, not a size");
    f->lines.alpha_us[1] = f->lines.alpha_us[0];
    f->lines.us_per_byte[1] = f->lines.us_per_byte[0];
    g_autoptr(CsXoverResult) r = run(f);
    assert_budget(f, r);
    g_assert_cmpint(r->status, ==, CS_XOVER_TIE);
    g_assert_cmpint(r->points->len, ==, 1 + 2 * f->options.steps);
    for (guint i = 0; i < r->points->len; i++) {
        CsXoverVerdict v = g_array_index(r->points, CsXoverPoint, i).verdict;
        g_assert_true(v == CS_XOVER_EQUAL || v == CS_XOVER_NOISE);
    }
    g_assert_cmpint(r->lo_bytes, ==, 64); /* 4000 / 64 = 62.5, to the 4-byte grid */
    g_assert_cmpint(r->hi_bytes, ==, 256000);
    g_assert_cmpint(r->measured_bytes, ==, 0);
    g_assert_true(isnan(r->ratio));
    g_assert_cmpfloat(r->loss_max_us, ==, 0.0);
}

/* 30% noise on equal lines: no point is decided or settled early, so each takes max_repeats,
 * and the result is still a tie (no interval on a difference of 0 excludes it, but at 95%
 * some may: the verdicts are checked to be consistent, the budget exact). */
static void
test_noisy_budget(Fixture *f, gconstpointer data)
{
    (void)data;
    f->lines.alpha_us[1] = f->lines.alpha_us[0];
    f->lines.us_per_byte[1] = f->lines.us_per_byte[0];
    f->lines.noise = 0.3;
    f->options.max_repeats = 5;
    f->options.max_points = 4;
    g_autoptr(CsXoverResult) r = run(f);
    assert_budget(f, r);
    g_assert_cmpint(r->points->len, <=, 4);
    g_assert_cmpfloat(r->noise_pct, >, 5.0);
    for (guint i = 0; i < r->points->len; i++) {
        const CsXoverPoint *p = &g_array_index(r->points, CsXoverPoint, i);
        if (p->verdict == CS_XOVER_NOISE)
            g_assert_cmpint(p->repeats, ==, 5);
        /* A decided verdict agrees with its interval. */
        if (p->verdict == CS_XOVER_FROM)
            g_assert_cmpfloat(p->diff_us + p->diff_ci_us, <, 0.0);
        if (p->verdict == CS_XOVER_TO)
            g_assert_cmpfloat(p->diff_us - p->diff_ci_us, >, 0.0);
    }
}

/* The lower choice faster everywhere (lower alpha and cost per byte): no crossover in the
 * window; the prediction is wrong at every size from 4000 up, and the loss says by how much. */
static void
test_from_throughout(Fixture *f, gconstpointer data)
{
    (void)data;
    f->lines.us_per_byte[1] = 2e-3;
    g_autoptr(CsXoverResult) r = run(f);
    assert_budget(f, r);
    g_assert_cmpint(r->status, ==, CS_XOVER_FROM_THROUGHOUT);
    g_assert_cmpint(r->hi_bytes, ==, 256000);
    /* 256000 B: upper 10 + 512 us, lower 2 + 256 us: 264 us lost by following the prediction. */
    g_assert_cmpint(r->loss_max_bytes, ==, 256000);
    g_assert_cmpfloat_with_epsilon(r->loss_max_us, 264.0, 10.0);
}

/* A choice the source cannot run: listed with the reason, nothing measured. */
static void
test_unmeasurable(Fixture *f, gconstpointer data)
{
    (void)data;
    f->lines.refuse_upper = TRUE;
    g_autoptr(CsXoverResult) r = run(f);
    g_assert_cmpint(r->status, ==, CS_XOVER_UNMEASURABLE);
    g_assert_cmpstr(r->why, ==, "ring/Simple/1ch: needs a switch this machine lacks");
    g_assert_cmpint(r->points->len, ==, 0);
    g_assert_cmpint(f->lines.samples, ==, 0);
}

/* A prediction past the largest size to measure is listed, not measured at the edge. */
static void
test_past_max(Fixture *f, gconstpointer data)
{
    (void)data;
    f->options.max_bytes = 2048;
    g_autoptr(CsXoverResult) r = run(f);
    g_assert_cmpint(r->status, ==, CS_XOVER_UNMEASURABLE);
    g_assert_cmpstr(r->why, ==, "predicted at 4000 B, past the largest size measured (2048 B)");
    g_assert_cmpint(f->lines.samples, ==, 0);
}

/* The source's failure is the search's, with no result. */
static void
test_source_fails(Fixture *f, gconstpointer data)
{
    (void)data;
    f->lines.fail_after = 9;
    CsXoverResult *r = NULL;
    g_autoptr(GError) error = NULL;
    g_assert_false(
        cs_xover_measure(CS_OP_ALL_REDUCE, &f->predicted, &f->options, &f->source, &r, &error));
    g_assert_error(error, G_FILE_ERROR, G_FILE_ERROR_IO);
    g_assert_null(r);
}

/* ---- A machine simulated on another topology: calibration moves the prediction ---- */

/* The "real" machine is cpu-host-shm whose cores reduce at 1 GB/s instead of the datasheet's
 * 4 GB/s; the engine on it gives the times (no noise). On 4 ranks the datasheet predicts
 * recursive doubling -> rhd at 6784 B; recursive doubling reduces the whole vector at each of
 * its log2 P steps, rhd halves of it, so a slower reduction makes rhd win at a smaller size
 * (the search measures about 1.9 KB). Calibrating the datasheet topology on the traces of what
 * the search measured must move the predicted crossover toward the measured one. (A machine
 * whose links alone are slower is not this test: the fit holds shm.bandwidth, which sizes
 * near one crossover do not determine, and explains the time by the reduction rate;
 * docs/crossovers.md.) */
typedef struct {
    const CsTopo *machine;
    GPtrArray *rows; /* per choice index 0/1: GArray of (size, time) pairs */
    const CsSelectChoice *choices[2];
} Sim;

typedef struct {
    gint64 size;
    double time_us;
} Sample;

static gboolean
sim_measure(const CsSelectChoice *choice, gint64 size, gboolean first, double *time_us,
            gpointer data, GError **error)
{
    Sim *s = data;
    (void)first;
    CsPredictOptions po;
    CsPrediction pred;
    cs_predict_options_init(&po);
    po.n_channels = choice->n_channels;
    if (!cs_predict_one(s->machine, CS_OP_ALL_REDUCE, size, choice->algo, choice->proto, &po, &pred,
                        error))
        return FALSE;
    *time_us = pred.time_us;
    int j = cs_select_choice_equal(choice, s->choices[0]) ? 0 : 1;
    Sample smp = { size, pred.time_us };
    g_array_append_val(g_ptr_array_index(s->rows, j), smp);
    return TRUE;
}

static CsTrace *
sim_trace(const CsSelectChoice *choice, GArray *samples)
{
    CsTrace *t = cs_trace_new(CS_OP_ALL_REDUCE, 4);
    g_autofree char *ch = g_strdup_printf("%d", choice->n_channels);
    cs_trace_set_header(t, "collective", "all_reduce");
    cs_trace_set_header(t, "ranks", "4");
    cs_trace_set_header(t, "algo", choice->algo->name);
    cs_trace_set_header(t, "proto", cs_proto_name(choice->proto));
    cs_trace_set_header(t, "channels", ch);
    for (guint i = 0; i < samples->len; i++) {
        const Sample *smp = &g_array_index(samples, Sample, i);
        CsTraceRow row = { .size_bytes = smp->size, .count = smp->size / 4, .root = -1 };
        g_strlcpy(row.type, "float", sizeof row.type);
        g_strlcpy(row.redop, "sum", sizeof row.redop);
        row.out_of_place
            = (CsTraceCell){ .time_us = smp->time_us,
                             .algbw_GBps = (double)smp->size / smp->time_us / 1e3,
                             .busbw_GBps = (double)smp->size / smp->time_us / 1e3 * 1.5,
                             .wrong = 0 };
        row.in_place = (CsTraceCell){ NAN, NAN, NAN, -1 };
        /* Each size once (repeats give the same time without noise). */
        gboolean seen = FALSE;
        for (gsize k = 0; k < cs_trace_n_rows(t) && !seen; k++)
            seen = cs_trace_row(t, k)->size_bytes == smp->size;
        if (!seen)
            cs_trace_add_row(t, &row);
    }
    return t;
}

static void
test_calibrate_moves_toward(void)
{
    g_test_summary("calibrating on the measured points moves the predicted crossover toward "
                   "the measured one");
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTopo) full = cs_test_load_topo("cpu-host-shm");
    CsSelectShape shape = { 4, 0 };
    g_autoptr(CsTopo) sheet = cs_select_shape_topo(full, &shape, NULL, &error);
    g_assert_no_error(error);
    char *edits[] = { "cpu.reduce_bandwidth=1 GB/s", NULL };
    g_autoptr(CsTopo) slow = cs_topo_load_edited("cpu-host-shm", edits, &error);
    g_assert_no_error(error);
    g_autoptr(CsTopo) machine = cs_select_shape_topo(slow, &shape, NULL, &error);
    g_assert_no_error(error);

    CsSelectOptions so;
    cs_select_options_init(&so);
    so.ops = CS_OP_BIT(CS_OP_ALL_REDUCE);
    so.min_gain_pct = 0.0;
    g_autoptr(CsSelection) sel = cs_select_run(sheet, &so, &error);
    g_assert_no_error(error);
    const CsSelectTable *table = cs_selection_table(sel, 0);
    g_assert_cmpuint(table->crossovers->len, >=, 1);
    const CsSelectCrossover *c = &g_array_index(table->crossovers, CsSelectCrossover, 0);
    g_assert_cmpstr(c->from.algo->name, ==, "recursive_doubling");
    g_assert_cmpstr(c->to.algo->name, ==, "rhd");

    g_autoptr(GPtrArray) rows = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
    g_ptr_array_add(rows, g_array_new(FALSE, FALSE, sizeof(Sample)));
    g_ptr_array_add(rows, g_array_new(FALSE, FALSE, sizeof(Sample)));
    Sim sim = { .machine = machine, .rows = rows, .choices = { &c->from, &c->to } };
    CsXoverSource src = { .measure = sim_measure, .user_data = &sim };
    CsXoverOptions xo;
    cs_xover_options_init(&xo);
    xo.granularity = table->granularity;
    xo.min_bytes = table->granularity;
    g_autoptr(CsXoverResult) r = NULL;
    g_assert_true(cs_xover_measure(CS_OP_ALL_REDUCE, c, &xo, &src, &r, &error));
    g_assert_no_error(error);
    g_assert_cmpint(r->status, ==, CS_XOVER_MEASURED);
    g_assert_cmpint(r->measured_bytes, <, c->size_bytes);

    CsTrace *traces[2] = { sim_trace(&c->from, g_ptr_array_index(rows, 0)),
                           sim_trace(&c->to, g_ptr_array_index(rows, 1)) };
    CsPredictOptions po;
    cs_predict_options_init(&po);
    CsCalibration *cal = cs_calibrate_fit(sheet, traces, 2, &po, CS_CALIB_LOSS_CAUCHY,
                                          CS_CALIB_PRIOR_WEIGHT, NULL, &error);
    g_assert_no_error(error);
    g_assert_nonnull(cal);
    g_assert_cmpfloat(cal->rms_after, <, cal->rms_before);
    g_autoptr(CsSelection) again = cs_select_run(cal->topo, &so, &error);
    g_assert_no_error(error);
    const CsSelectCrossover *moved = cs_xover_find_pair(cs_selection_table(again, 0), c);
    g_assert_nonnull(moved);
    g_test_message("predicted %" G_GINT64_FORMAT " B, measured %" G_GINT64_FORMAT
                   " B, calibrated %" G_GINT64_FORMAT " B",
                   c->size_bytes, r->measured_bytes, moved->size_bytes);
    g_assert_cmpint(moved->size_bytes, <, c->size_bytes);
    g_assert_true(cs_xover_moved_toward(c->size_bytes, moved->size_bytes, r->measured_bytes));
    cs_calibration_free(cal);
    cs_trace_free(traces[0]);
    cs_trace_free(traces[1]);
}

/* The helpers on their own. */
static void
test_moved_toward(void)
{
    g_assert_true(cs_xover_moved_toward(4000, 8000, 16000));
    g_assert_true(cs_xover_moved_toward(64000, 20000, 16000));
    g_assert_false(cs_xover_moved_toward(4000, 2000, 16000));
    g_assert_false(cs_xover_moved_toward(16000, 17000, 16000));
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add("/crossover/search/measured-above", Fixture, NULL, fixture_setup,
               test_measured_above, fixture_teardown);
    g_test_add("/crossover/search/measured-below", Fixture, NULL, fixture_setup,
               test_measured_below, fixture_teardown);
    g_test_add("/crossover/search/told-of-points", Fixture, NULL, fixture_setup,
               test_told_of_points, fixture_teardown);
    g_test_add("/crossover/search/tie", Fixture, NULL, fixture_setup, test_tie, fixture_teardown);
    g_test_add("/crossover/search/noisy-budget", Fixture, NULL, fixture_setup, test_noisy_budget,
               fixture_teardown);
    g_test_add("/crossover/search/from-throughout", Fixture, NULL, fixture_setup,
               test_from_throughout, fixture_teardown);
    g_test_add("/crossover/search/unmeasurable", Fixture, NULL, fixture_setup, test_unmeasurable,
               fixture_teardown);
    g_test_add("/crossover/search/past-max", Fixture, NULL, fixture_setup, test_past_max,
               fixture_teardown);
    g_test_add("/crossover/search/source-fails", Fixture, NULL, fixture_setup, test_source_fails,
               fixture_teardown);
    g_test_add_func("/crossover/moved-toward", test_moved_toward);
    g_test_add_func("/crossover/calibrate/moves-toward-measured", test_calibrate_moves_toward);
    return g_test_run();
}
