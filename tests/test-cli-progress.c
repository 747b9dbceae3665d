// SPDX-License-Identifier: MIT
/* Progress lines of `collsim validate` and `collsim calibrate` (src/cli/cli_progress.c), run as
 * users run them ($COLLSIM_BIN) on shipped traces ($COLLSIM_SOURCE_ROOT): --progress puts
 * them on stderr, --quiet none, and by default, stderr being no terminal here, none either;
 * standard output is byte for byte the same in all three. `collsim crossover` too, where the
 * build has MPI, on crossovers it cannot measure; tests/test-crossover-mpi.sh measures with
 * --progress under mpirun. --progress --quiet is a usage error of every command
 * (tests/data/cli-errors/cases). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <glib.h>

#include "test-util.h"

static char *
shipped_trace(const char *name)
{
    return g_build_filename(g_getenv("COLLSIM_SOURCE_ROOT"), "traces", name, NULL);
}

/* @args (NULL-terminated, at most 16) with @flag appended (nullable: none). */
static CsTestRun
run_with(const char *subcommand, const char *const *args, const char *flag)
{
    const char *argv[18];
    int n = 0;
    for (; args[n] != NULL; n++)
        argv[n] = args[n];
    g_assert_cmpint(n, <=, 16);
    argv[n++] = flag;
    argv[n] = NULL;
    return cs_test_run_collsim(subcommand, argv);
}

/* Runs @args with --quiet and without a flag: both exit 0 with nothing on stderr, the same
 * standard output as @loud's. */
static void
assert_quiet_and_default(const char *subcommand, const char *const *args, const CsTestRun *loud)
{
    g_auto(CsTestRun) quiet = run_with(subcommand, args, "--quiet");
    g_auto(CsTestRun) plain = run_with(subcommand, args, NULL);
    g_assert_cmpint(quiet.status, ==, 0);
    g_assert_cmpint(plain.status, ==, 0);
    g_assert_cmpstr(quiet.err, ==, "");
    g_assert_cmpstr(plain.err, ==, "");
    g_assert_cmpstr(loud->out, ==, quiet.out);
    g_assert_cmpstr(loud->out, ==, plain.out);
}

/* Setup: the 4 x H100 all-reduce trace (28 rows) on dgx-h100x4, on one thread, then twice on
 * two threads. Expectation: forced, a line per row, "k/28 rows (TRACE: SIZE)" in the trace's
 * order on one thread (8 B first, 1 GiB last); on two threads one total of 56 rows, counted
 * 1..56 as rows end; standard output the same with --progress, --quiet and neither. */
static void
test_validate(void)
{
    g_autofree char *trace = shipped_trace("h100-sxm-4gpu-nvswitch_allreduce_nccl2.26.2.txt");
    const char *one[] = { "--topo", "dgx-h100x4", "--jobs", "1", trace, NULL };
    g_auto(CsTestRun) a = run_with("validate", one, "--progress");
    g_assert_cmpint(a.status, ==, 0);
    g_auto(GStrv) lines = g_strsplit(a.err, "\n", -1);
    g_assert_cmpuint(g_strv_length(lines), ==, 28 + 1);
    g_assert_true(g_str_has_prefix(
        lines[0],
        "collsim validate: 1/28 rows (h100-sxm-4gpu-nvswitch_allreduce_nccl2.26.2.txt: 8 B), "));
    g_assert_true(g_str_has_prefix(
        lines[27],
        "collsim validate: 28/28 rows (h100-sxm-4gpu-nvswitch_allreduce_nccl2.26.2.txt: 1 GiB), "));
    g_assert_nonnull(strstr(lines[27], "about 0 s left"));
    g_assert_cmpstr(lines[28], ==, "");
    assert_quiet_and_default("validate", one, &a);

    const char *two[] = { "--topo", "dgx-h100x4", "--jobs", "2", trace, trace, NULL };
    g_auto(CsTestRun) b = run_with("validate", two, "--progress");
    g_assert_cmpint(b.status, ==, 0);
    g_auto(GStrv) counted = g_strsplit(b.err, "\n", -1);
    g_assert_cmpuint(g_strv_length(counted), ==, 56 + 1);
    for (int i = 0; i < 56; i++) {
        g_autofree char *k = g_strdup_printf("collsim validate: %d/56 rows (", i + 1);
        g_assert_true(g_str_has_prefix(counted[i], k));
    }
    assert_quiet_and_default("validate", two, &b);
}

/* Setup: the launch of rtx2080ti-x2-pcie3-shm fitted to its all-reduce trace. Expectation:
 * forced, a line per evaluation of the fit, "0/1 fits, now the fit to 1 trace: evaluation k
 * (PHASE...), rms R%", counted 1..N with no estimate (a fit has no known count of
 * evaluations), then "1/1 fits (the fit to 1 trace: N evaluations, M iterations, rms R%)" whose
 * M and R are the iterations and fitted error the report prints; standard output the same
 * with --progress, --quiet and neither. */
static void
test_calibrate(void)
{
    g_autofree char *trace = shipped_trace("rtx2080ti-2gpu-pcie3-nop2p_allreduce.txt");
    const char *args[]
        = { "--topo", "rtx2080ti-x2-pcie3-shm", "--params", "gpu.launch", trace, NULL };
    g_auto(CsTestRun) a = run_with("calibrate", args, "--progress");
    g_assert_cmpint(a.status, ==, 0);
    g_auto(GStrv) lines = g_strsplit(a.err, "\n", -1);
    const guint n = g_strv_length(lines);
    g_assert_cmpuint(n, >=, 4);
    g_assert_cmpstr(lines[n - 1], ==, "");
    const guint evaluations = n - 2;
    for (guint i = 0; i < evaluations; i++) {
        g_autofree char *k = g_strdup_printf(
            "collsim calibrate: 0/1 fits, now the fit to 1 trace: evaluation %u (", i + 1);
        g_assert_true(g_str_has_prefix(lines[i], k));
        g_assert_null(strstr(lines[i], "left"));
    }
    g_assert_nonnull(strstr(lines[0], "evaluation 1 (datasheet), rms "));
    g_assert_nonnull(strstr(lines[evaluations - 1], "(uncertainties), rms "));

    /* The last line against the report: "... 6 iterations, ..." and "..., 14.5% fitted". */
    int iterations = -1;
    double fitted = -1;
    const char *at = strstr(a.out, " rows, ");
    g_assert_nonnull(at);
    g_assert_cmpint(sscanf(at, " rows, %d iterations", &iterations), ==, 1);
    at = strstr(a.out, "with the datasheet topology, ");
    g_assert_nonnull(at);
    g_assert_cmpint(sscanf(at, "with the datasheet topology, %lf%% fitted", &fitted), ==, 1);
    g_autofree char *want
        = g_strdup_printf("collsim calibrate: 1/1 fits (the fit to 1 trace: %u evaluations, %d "
                          "iterations, rms %.1f%%), ",
                          evaluations, iterations, fitted);
    g_assert_true(g_str_has_prefix(lines[n - 2], want));
    assert_quiet_and_default("calibrate", args, &a);
}

/* Setup: the launch fitted to two traces with --leave-one-out: 3 fits. Expectation: each fit
 * ends with its step, "1/3 fits (the fit to 2 traces: ...)", then one per trace left out, in
 * order; the lines within a fit carry an estimate of the time left once a fit has ended and
 * none before; standard output the same with --progress, --quiet and neither. */
static void
test_calibrate_leave_one_out(void)
{
    g_autofree char *allreduce = shipped_trace("rtx2080ti-2gpu-pcie3-nop2p_allreduce.txt");
    g_autofree char *reduce = shipped_trace("rtx2080ti-2gpu-pcie3-nop2p_reduce.txt");
    const char *args[] = { "--topo", "rtx2080ti-x2-pcie3-shm", "--params", "gpu.launch", "--format",
                           "json",   "--leave-one-out",        allreduce,  reduce,       NULL };
    g_auto(CsTestRun) a = run_with("calibrate", args, "--progress");
    g_assert_cmpint(a.status, ==, 0);
    g_auto(GStrv) lines = g_strsplit(a.err, "\n", -1);
    static const char *const ends[] = {
        "collsim calibrate: 1/3 fits (the fit to 2 traces: ",
        "collsim calibrate: 2/3 fits (leaving out rtx2080ti-2gpu-pcie3-nop2p_allreduce.txt: ",
        "collsim calibrate: 3/3 fits (leaving out rtx2080ti-2gpu-pcie3-nop2p_reduce.txt: ",
    };
    guint ended = 0;
    for (guint i = 0; lines[i] != NULL && lines[i][0] != '\0'; i++) {
        if (strstr(lines[i], ", now ") != NULL) {
            g_autofree char *k = g_strdup_printf("collsim calibrate: %u/3 fits, now ", ended);
            g_assert_true(g_str_has_prefix(lines[i], k));
            g_assert_true((strstr(lines[i], " left") != NULL) == (ended > 0));
            continue;
        }
        g_assert_cmpuint(ended, <, 3);
        g_assert_true(g_str_has_prefix(lines[i], ends[ended]));
        g_assert_nonnull(strstr(lines[i], " left"));
        ended++;
    }
    g_assert_cmpuint(ended, ==, 3);
    assert_quiet_and_default("calibrate", args, &a);
}

/* Setup: crossover between NVLS and ring on dgx-h100x8 with the mpi backend, in one process:
 * the prediction runs, every crossover it finds needs NVSwitch multicast, so nothing is
 * measured and the report is the same every run. Expectation: forced, a line per step of
 * the prediction, then "k/K crossovers (nvls/... -> ring/...: unmeasurable, 0 points)" for
 * k = 1..K; standard output the same with --progress, --quiet and neither. Skipped in a
 * build without MPI (the backend is not there to run). */
static void
test_crossover(void)
{
    const char *args[]
        = { "--backend", "mpi", "--topo", "dgx-h100x8", "--between", "nvls,ring", NULL };
    g_auto(CsTestRun) a = run_with("crossover", args, "--progress");
    if (a.status == 1 && strstr(a.err, "built without MPI") != NULL) {
        g_test_skip("built without MPI");
        return;
    }
    g_assert_cmpint(a.status, ==, 0);
    g_auto(GStrv) lines = g_strsplit(a.err, "\n", -1);
    guint predicted = 0;
    guint crossovers = 0;
    guint total = 0;
    for (guint i = 0; lines[i] != NULL && lines[i][0] != '\0'; i++) {
        g_assert_true(g_str_has_prefix(lines[i], "collsim crossover: "));
        if (strstr(lines[i], " prediction steps (") != NULL) {
            g_assert_cmpuint(crossovers, ==, 0);
            predicted++;
            continue;
        }
        if (crossovers == 0)
            g_assert_cmpint(sscanf(lines[i], "collsim crossover: 1/%u crossovers", &total), ==, 1);
        crossovers++;
        g_autofree char *k
            = g_strdup_printf("collsim crossover: %u/%u crossovers (", crossovers, total);
        g_assert_true(g_str_has_prefix(lines[i], k));
        g_assert_nonnull(strstr(lines[i], ": unmeasurable, 0 points), "));
    }
    g_assert_cmpuint(predicted, >, 0);
    g_assert_cmpuint(crossovers, >, 0);
    g_assert_cmpuint(crossovers, ==, total);
    assert_quiet_and_default("crossover", args, &a);
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/cli/progress/validate", test_validate);
    g_test_add_func("/cli/progress/calibrate", test_calibrate);
    g_test_add_func("/cli/progress/calibrate-leave-one-out", test_calibrate_leave_one_out);
    g_test_add_func("/cli/progress/crossover", test_crossover);
    return g_test_run();
}
