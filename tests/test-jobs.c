// SPDX-License-Identifier: MIT
/* --jobs: the threads of run, select, plan and validate change no byte of their output (issue 28,
 * DESIGN §11 "Output never depends on the degree of parallelism"), and cs_parallel_for() runs
 * every item once. The commands run as users run them ($COLLSIM_BIN) with 1, 2 and 3 threads
 * on small machines (4 GPUs in a box, 2 x 8 GPUs over InfiniBand). */
#include <string.h>

#include <glib.h>

#include "base/parallel.h"
#include "test-util.h"

/* ---- cs_parallel_for ---- */

typedef struct {
    gint *runs;     /* per item, atomic */
    guint n_done;   /* calls of the done callback */
    guint last;     /* the last done count told */
    GThread *owner; /* the thread that called cs_parallel_for() */
    gboolean done_elsewhere;
} Count;

static void
count_item(guint index, gpointer data)
{
    Count *c = data;
    g_atomic_int_inc(&c->runs[index]);
}

static void
count_done(guint done, guint index, gpointer data)
{
    Count *c = data;
    (void)index;
    c->n_done++;
    c->done_elsewhere |= g_thread_self() != c->owner;
    g_assert_cmpuint(done, ==, c->last + 1);
    c->last = done;
}

static void
test_parallel_for(void)
{
    g_test_summary("cs_parallel_for() runs each index once, for any thread count, and tells the "
                   "calling thread of each in a count that rises by one.");
    const guint n = 1000;
    for (int jobs = 0; jobs <= 5; jobs++) {
        g_autofree gint *runs = g_new0(gint, n);
        Count c = { runs, 0, 0, g_thread_self(), FALSE };
        cs_parallel_for(n, jobs, count_item, count_done, &c);
        for (guint i = 0; i < n; i++)
            g_assert_cmpint(runs[i], ==, 1);
        g_assert_cmpuint(c.n_done, ==, n);
        g_assert_false(c.done_elsewhere);
    }
    /* No item: nothing runs, nothing is told. */
    Count none = { NULL, 0, 0, g_thread_self(), FALSE };
    cs_parallel_for(0, 3, count_item, count_done, &none);
    g_assert_cmpuint(none.n_done, ==, 0);
}

static void
never_pack(guint index, GByteArray *out, gpointer data)
{
    (void)index, (void)out, (void)data;
    g_assert_not_reached();
}

static void
never_unpack(guint index, CsUnpack *in, gpointer data)
{
    (void)index, (void)in, (void)data;
    g_assert_not_reached();
}

static void
test_parallel_for_one_rank(void)
{
    g_test_summary("Without mpirun's ranks, cs_parallel_for_ranks() is cs_parallel_for(): every "
                   "item once, each told once, nothing packed (test-study-mpi.sh covers ranks).");
    g_assert_cmpint(cs_parallel_n_ranks(), ==, 1);
    g_assert_cmpint(cs_parallel_rank(), ==, 0);
    const guint n = 100;
    for (int jobs = 1; jobs <= 3; jobs++) {
        g_autofree gint *runs = g_new0(gint, n);
        Count c = { runs, 0, 0, g_thread_self(), FALSE };
        cs_parallel_for_ranks(n, 1, jobs, count_item, count_done, never_pack, never_unpack, &c);
        for (guint i = 0; i < n; i++)
            g_assert_cmpint(runs[i], ==, 1);
        g_assert_cmpuint(c.n_done, ==, n);
    }
    /* The last round of a single process hands back its own status and text. */
    g_autofree char *report = NULL;
    g_assert_cmpint(cs_parallel_ranks_end(2, "collsim: bad\n", &report), ==, 2);
    g_assert_cmpstr(report, ==, "collsim: bad\n");
}

/* ---- The commands ---- */

typedef struct {
    const char *name;
    const char *subcommand; /* NULL: run */
    const char *args[16];
    int status; /* the exit status expected */
} Case;

static const Case cases[] = {
    { "run/all-json",
      NULL,
      { "--topo", "dgx-h100x4", "--op", "allreduce", "--all", "-e", "64M", "--format", "json",
        NULL },
      0 },
    /* Sizes past the step budget are extended from smaller ones, several sizes from the same
     * three (the point cache): their events in JSON once depended on which size ran first. */
    { "run/best-json-2n",
      NULL,
      { "--topo", "hgx-h100x8-2n", "--op", "allreduce", "-b", "1G", "-e", "8G", "--format", "json",
        NULL },
      0 },
    /* One size: its candidates run on the threads, ahead of their turn. */
    { "run/one-size-json-2n",
      NULL,
      { "--topo", "hgx-h100x8-2n", "--op", "allreduce", "-b", "64M", "-e", "64M", "--format",
        "json", NULL },
      0 },
    { "run/one-size-sharp",
      NULL,
      { "--topo", "hgx-h100x8-2n-sharp", "--op", "allreduce", "-b", "64M", "-e", "64M", NULL },
      0 },
    { "run/best-table-2n",
      NULL,
      { "--topo", "hgx-h100x8-2n", "--op", "allgather", "-e", "256M", NULL },
      0 },
    { "select/table",
      "select",
      { "--topo", "dgx-h100x4", "--op", "allreduce,allgather", "-e", "64M", NULL },
      0 },
    { "select/json",
      "select",
      { "--topo", "dgx-h100x4", "--op", "allreduce,allgather", "-e", "64M", "--emit", "json",
        NULL },
      0 },
    { "select/nccl-tuner-csv",
      "select",
      { "--topo", "dgx-h100x4", "--op", "allreduce,allgather", "-e", "64M", "--emit",
        "nccl-tuner-csv", NULL },
      0 },
    { "select/compare-2n",
      "select",
      { "--topo", "hgx-h100x8-2n", "--op", "allreduce", "-e", "16M", "--compare", "nccl", NULL },
      0 },
    { "select/table-2n",
      "select",
      { "--topo", "hgx-h100x8-2n", "--op", "allreduce,allgather", "-e", "16M", NULL },
      0 },
    { "plan/json",
      "plan",
      { "--workload", "@SRC@/examples/workloads/megatron-tp8-dp2.json", "--topo", "hgx-h100x8-2n",
        "--set", "network.nic_bandwidth=400Gb/s,200Gb/s", "--format", "json", NULL },
      0 },
    { "validate/table-2n",
      "validate",
      { "--topo", "aws-p4de-a100x8-2n-efa", "--model", "nccl",
        "@SRC@/traces/a100-sxm4-80gb-8gpu-x2-efa-p4de-4x100g_allreduce_ncclunknown.txt",
        "@SRC@/traces/a100-sxm4-80gb-8gpu-nvswitch_allreduce_nccl2.19.3.txt", NULL },
      0 },
    /* A fit's rows are predicted over threads at every evaluation (its Jacobian included):
     * the same fit, bit for bit. */
    { "calibrate/json",
      "calibrate",
      { "--topo", "rtx2080ti-x2-pcie3-shm", "--format", "json",
        "@SRC@/traces/rtx2080ti-2gpu-pcie3-nop2p_allreduce.txt",
        "@SRC@/traces/rtx2080ti-2gpu-pcie3-nop2p_allgather.txt", NULL },
      0 },
    { "calibrate/leave-one-out",
      "calibrate",
      { "--topo", "rtx2080ti-x2-pcie3-shm", "--params", "gpu.,pcie.", "--leave-one-out",
        "@SRC@/traces/rtx2080ti-2gpu-pcie3-nop2p_allreduce.txt",
        "@SRC@/traces/rtx2080ti-2gpu-pcie3-nop2p_reduce.txt", NULL },
      0 },
    /* The second candidate cannot hold the layout: the same error, whatever ran first. */
    { "plan/error",
      "plan",
      { "--workload", "@SRC@/examples/workloads/megatron-tp8-dp2.json", "--topo", "hgx-h100x8-2n",
        "--topo", "dgx-h100x4", "--topo", "hgx-h100x8-2n", NULL },
      2 },
};

/* @c's arguments with --jobs @jobs appended, @SRC@ the source tree. (transfer full) */
static char **
case_args(const Case *c, int jobs)
{
    const char *src = g_getenv("COLLSIM_SOURCE_ROOT");
    GPtrArray *args = g_ptr_array_new();
    g_assert_nonnull(src);
    for (int i = 0; c->args[i] != NULL; i++) {
        if (g_str_has_prefix(c->args[i], "@SRC@"))
            g_ptr_array_add(args, g_strconcat(src, c->args[i] + strlen("@SRC@"), NULL));
        else
            g_ptr_array_add(args, g_strdup(c->args[i]));
    }
    g_ptr_array_add(args, g_strdup("--jobs"));
    g_ptr_array_add(args, g_strdup_printf("%d", jobs));
    g_ptr_array_add(args, NULL);
    return (char **)g_ptr_array_free(args, FALSE);
}

static void
test_same_output(gconstpointer data)
{
    const Case *c = data;
    g_autofree char *want = NULL;
    g_autofree char *want_err = NULL;

    g_test_summary("The command prints the same bytes with 1 and 3 threads.");
    /* One thread, and more threads than the two cores a CI machine has (the orders in which
     * threads finish vary most); 2 adds little but time under the sanitizers. */
    static const int counts[] = { 1, 3 };
    for (gsize k = 0; k < G_N_ELEMENTS(counts); k++) {
        const int jobs = counts[k];
        g_auto(GStrv) args = case_args(c, jobs);
        g_auto(CsTestRun) r = cs_test_run_collsim(c->subcommand, (const char *const *)args);
        if (r.status != c->status)
            g_test_message("--jobs %d: %s", jobs, r.err);
        g_assert_cmpint(r.status, ==, c->status);
        /* A table, or the one line of an error. */
        g_assert_cmpuint(strlen(c->status == 0 ? r.out : r.err), >, c->status == 0 ? 100 : 20);
        if (want == NULL) {
            want = g_strdup(r.out);
            want_err = g_strdup(r.err);
            continue;
        }
        g_assert_cmpstr(r.out, ==, want);
        g_assert_cmpstr(r.err, ==, want_err);
    }
}

static void
test_usage(void)
{
    g_test_summary("--jobs takes 1 or more threads; anything else is a usage error (exit 2).");
    const char *const bad[] = { "0", "-3", "100000" };
    for (gsize i = 0; i < G_N_ELEMENTS(bad); i++) {
        const char *const run[] = { "--topo", "dgx-h100x4", "--jobs", bad[i], NULL };
        const char *const plan[]
            = { "--workload", "x.json", "--topo", "dgx-h100x4", "--jobs", bad[i], NULL };
        const char *const calibrate[] = { "--topo", "dgx-h100x4", "x.txt", "--jobs", bad[i], NULL };
        const char *const subcommands[] = { "run", "select", "plan", "calibrate" };
        const char *const *args[] = { run, run, plan, calibrate };
        for (gsize s = 0; s < G_N_ELEMENTS(subcommands); s++) {
            g_auto(CsTestRun) r = cs_test_run_collsim(subcommands[s], args[s]);
            g_autofree char *want
                = g_strdup_printf("--jobs %s: threads are 1 to %d", bad[i], CS_PARALLEL_MAX_JOBS);
            if (strstr(r.err, want) == NULL)
                g_test_message("collsim %s: %s", subcommands[s], r.err);
            g_assert_cmpint(r.status, ==, 2);
            g_assert_nonnull(strstr(r.err, want));
        }
    }
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/jobs/parallel-for", test_parallel_for);
    g_test_add_func("/jobs/parallel-for-one-rank", test_parallel_for_one_rank);
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *path = g_strdup_printf("/jobs/%s", cases[i].name);
        g_test_add_data_func(path, &cases[i], test_same_output);
    }
    g_test_add_func("/jobs/usage", test_usage);
    return g_test_run();
}
