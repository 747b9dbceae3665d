// SPDX-License-Identifier: MIT
/* Tests of the main command (`collsim [run]`) and of `collsim explain`, run as users run them
 * ($COLLSIM_BIN): golden outputs byte for byte (tests/golden/), the table read back as an
 * nccl-tests trace, the other formats, the sweep flags, the timeline, and usage errors.
 * COLLSIM_UPDATE_GOLDEN=1 rewrites the golden files instead of comparing (review the diff). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <glib.h>
#include <glib/gstdio.h>

#include "base/json_util.h"
#include "base/trace.h"
#include "test-util.h"

static void
check_golden(const char *name, const char *const *args)
{
    g_autofree char *path = g_test_build_filename(G_TEST_DIST, "golden", name, NULL);
    g_auto(CsTestRun) r = cs_test_run_collsim(NULL, args);
    g_assert_cmpstr(r.err, ==, "");
    g_assert_cmpint(r.status, ==, 0);
    if (g_strcmp0(g_getenv("COLLSIM_UPDATE_GOLDEN"), "1") == 0) {
        g_autoptr(GError) error = NULL;
        g_file_set_contents(path, r.out, -1, &error);
        g_assert_no_error(error);
    }
    g_autofree char *want = NULL;
    g_autoptr(GError) error = NULL;
    g_file_get_contents(path, &want, NULL, &error);
    g_assert_no_error(error);
    if (strcmp(r.out, want) != 0) {
        /* Name the first line that differs rather than dumping both outputs. */
        g_auto(GStrv) got_lines = g_strsplit(r.out, "\n", -1);
        g_auto(GStrv) want_lines = g_strsplit(want, "\n", -1);
        guint i = 0;
        while (got_lines[i] != NULL && want_lines[i] != NULL
               && strcmp(got_lines[i], want_lines[i]) == 0)
            i++;
        g_test_message("tests/golden/%s line %u differs (rerun 'meson compile -C BUILD "
                       "update-golden' and review the diff if the change is intended)\n"
                       "  got:  %s\n  want: %s",
                       name, i + 1, got_lines[i] != NULL ? got_lines[i] : "(end)",
                       want_lines[i] != NULL ? want_lines[i] : "(end)");
        g_test_fail();
    }
}

/* ---- Golden ---- */

/* --progress: a line per size on stderr, "k/N sizes (SIZE)", and standard output as without
 * it (but for the command it echoes); --quiet: nothing on stderr. On one thread the sizes end
 * in order; on several, a line still counts each size as it ends. */
static void
test_progress(void)
{
    const char *loud[] = { "--topo", "dgx-h100x4", "-b",         "1K",     "-e", "1M",
                           "-f",     "4",          "--progress", "--jobs", "1",  NULL };
    const char *threads[] = { "--topo", "dgx-h100x4", "-b",         "1K",     "-e", "1M",
                              "-f",     "4",          "--progress", "--jobs", "2",  NULL };
    const char *quiet[]
        = { "--topo", "dgx-h100x4", "-b", "1K", "-e", "1M", "-f", "4", "--quiet", NULL };
    g_auto(CsTestRun) a = cs_test_run_collsim(NULL, loud);
    g_auto(CsTestRun) b = cs_test_run_collsim(NULL, quiet);
    g_assert_cmpint(a.status, ==, 0);
    g_assert_cmpint(b.status, ==, 0);
    g_auto(GStrv) lines = g_strsplit(a.err, "\n", -1);
    g_assert_cmpuint(g_strv_length(lines), ==, 6 + 1);
    g_assert_nonnull(strstr(lines[0], "collsim: 1/6 sizes (1 KiB), "));
    g_assert_nonnull(strstr(lines[5], "collsim: 6/6 sizes (1 MiB), "));
    g_assert_nonnull(strstr(lines[5], "about 0 s left"));
    g_assert_cmpstr(b.err, ==, "");
    g_auto(CsTestRun) c = cs_test_run_collsim(NULL, threads);
    g_assert_cmpint(c.status, ==, 0);
    g_auto(GStrv) counted = g_strsplit(c.err, "\n", -1);
    g_assert_cmpuint(g_strv_length(counted), ==, 6 + 1);
    for (int i = 0; i < 6; i++) {
        g_autofree char *k = g_strdup_printf("collsim: %d/6 sizes (", i + 1);
        g_assert_nonnull(strstr(counted[i], k));
    }
    g_assert_cmpstr(c.out, ==, a.out);
    cs_test_assert_same_but_command(a.out, b.out);
}

static void
test_golden_default(void)
{
    g_test_summary("The default command: all-reduce on dgx-h100x4, 8 B to 8 GiB by doubling.");
    const char *const args[] = { NULL };
    check_golden("run-default.txt", args);
}

static void
test_golden_seed_h100(void)
{
    g_test_summary("The seed's nccl-tests command line on its machine: one process driving "
                   "4 H100 (-g 4), 8 B to 1 GiB; diff it against "
                   "traces/h100-sxm-4gpu-nvswitch_allreduce_nccl2.26.2.txt.");
    const char *const args[]
        = { "--topo", "dgx-h100x4", "--op", "allreduce", "-g", "4", "-b", "8", "-e", "1G", NULL };
    check_golden("run-h100x4-g4-8-1G.txt", args);
}

static void
test_golden_explain_mst(void)
{
    g_test_summary("Seed 000's example: a broadcast from GPU 0 over a spanning tree of 6 GPUs "
                   "takes ceil(log2 6) = 3 rounds.");
    /* 16 KiB fits one LL slot: one chunk, so the tree's rounds are not repeated per chunk. */
    const char *const args[]
        = { "explain", "--topo",  "dgx-h100x8", "--op",   "broadcast", "--algo",
            "mst",     "--ranks", "6",          "--size", "16K",       NULL };
    check_golden("explain-mst-broadcast-6.txt", args);
}

/* ---- The table is an nccl-tests trace ---- */

static CsTrace *
trace_of(const CsTestRun *r)
{
    g_autoptr(GError) error = NULL;
    CsTrace *trace = cs_trace_load_data(r->out, "stdout", &error);
    g_assert_no_error(error);
    return trace;
}

/* --ranks 8 on a 2-node machine of 8-GPU nodes is the first node: run and explain give the
 * algorithms a topology of just those GPUs (cs_cli_shape_topo(), as select does), so NVLS,
 * whose 8 GPUs share one NVSwitch, is a candidate and NCCL's pick, and the times are the 8-GPU
 * machine's. Before, the algorithms saw no machine at --ranks below its size: no NVLS, and
 * a different pick and time. */
static void
test_ranks_subset(void)
{
    const char *const part[] = { "--topo",  "hgx-h100x8-2n",
                                 "--ranks", "8",
                                 "--op",    "allreduce",
                                 "-b",      "1M",
                                 "-e",      "1G",
                                 "-f",      "32",
                                 NULL };
    const char *const whole[]
        = { "--topo", "dgx-h100x8", "--op", "allreduce", "-b", "1M", "-e", "1G", "-f", "32", NULL };
    g_auto(CsTestRun) a = cs_test_run_collsim(NULL, part);
    g_auto(CsTestRun) b = cs_test_run_collsim(NULL, whole);
    g_assert_cmpint(a.status, ==, 0);
    g_assert_cmpint(b.status, ==, 0);
    g_autoptr(CsTrace) ta = trace_of(&a);
    g_autoptr(CsTrace) tb = trace_of(&b);
    g_assert_cmpuint(cs_trace_n_rows(ta), ==, 3);
    g_assert_cmpuint(cs_trace_n_rows(ta), ==, cs_trace_n_rows(tb));
    for (gsize i = 0; i < cs_trace_n_rows(ta); i++)
        g_assert_cmpfloat(cs_trace_row(ta, i)->out_of_place.time_us, ==,
                          cs_trace_row(tb, i)->out_of_place.time_us);
    g_assert_nonnull(strstr(a.out, "  nvls  "));

    const char *const explain[] = { "explain", "--topo",    "hgx-h100x8-2n", "--ranks", "8",
                                    "--op",    "allreduce", "--size",        "64M",     NULL };
    g_auto(CsTestRun) e = cs_test_run_collsim(NULL, explain);
    g_assert_cmpint(e.status, ==, 0);
    g_assert_true(g_str_has_prefix(e.out, "nvls allreduce of 64 MiB"));

    /* --nodes as select places it: 16 ranks on 16 nodes is one GPU per node, where NCCL 2.28
     * picks PAT for a 64 KiB all-gather (tuning.cc; tests/test-algo-pat.c derives it). */
    const char *const spread[] = { "--topo", "hgx-h100x8-16n", "--ranks", "16",  "--nodes", "16",
                                   "--op",   "allgather",      "-b",      "64K", "-e",      "64K",
                                   NULL };
    g_auto(CsTestRun) s = cs_test_run_collsim(NULL, spread);
    g_assert_cmpint(s.status, ==, 0);
    g_assert_nonnull(strstr(s.out, "# nodes: 16\n"));
    g_assert_nonnull(strstr(s.out, "  pat  "));
}

/* Every row obeys nccl-tests' definitions, up to the printed rounding:
 * algbw = size / time (bytes per us = 1e-3 GB/s), busbw = algbw * 2(P-1)/P = 1.5 algbw on 4
 * ranks; the in-place half repeats the out-of-place one and #wrong is N/A. */
static void
test_table_is_trace(void)
{
    const char *const args[] = { "--topo", "dgx-h100x4", "-b", "1K", "-e", "64M", "-f", "4", NULL };
    g_auto(CsTestRun) r = cs_test_run_collsim(NULL, args);
    g_assert_cmpint(r.status, ==, 0);
    g_autoptr(CsTrace) trace = trace_of(&r);
    /* 1K, 4K, ..., 64M: 4^0..4^8 times 1 KiB = 9 rows. */
    g_assert_cmpuint(cs_trace_n_rows(trace), ==, 9);
    CsOp op;
    g_assert_true(cs_trace_op(trace, &op));
    g_assert_cmpint(op, ==, CS_OP_ALL_REDUCE);
    g_assert_cmpint(cs_trace_n_ranks(trace), ==, 4);
    gint64 size = 1024;
    for (gsize i = 0; i < cs_trace_n_rows(trace); i++, size *= 4) {
        const CsTraceRow *row = cs_trace_row(trace, i);
        g_assert_cmpint(row->size_bytes, ==, size);
        g_assert_cmpint(row->count, ==, size / 4);
        g_assert_cmpstr(row->type, ==, "float");
        g_assert_cmpstr(row->redop, ==, "sum");
        g_assert_cmpint(row->root, ==, -1);
        const CsTraceCell *c = &row->out_of_place;
        g_assert_cmpfloat(c->time_us, >, 0.0);
        double algbw = (double)size / c->time_us / 1e3;
        /* Time is printed with >= 4 significant digits, bandwidths with 2 decimals. */
        g_assert_cmpfloat(fabs(c->algbw_GBps - algbw), <=, 0.005 + algbw * 1e-3);
        g_assert_cmpfloat(fabs(c->busbw_GBps - 1.5 * c->algbw_GBps), <=, 0.01 + algbw * 1e-3);
        g_assert_cmpint(c->wrong, ==, -1);
        g_assert_cmpfloat(row->in_place.time_us, ==, c->time_us);
        g_assert_cmpfloat(row->in_place.busbw_GBps, ==, c->busbw_GBps);
        /* A bigger message never finishes sooner. */
        if (i > 0)
            g_assert_cmpfloat(c->time_us, >=, cs_trace_row(trace, i - 1)->out_of_place.time_us);
    }
    /* The winners table names an algorithm and protocol per size: NCCL's pick by default. */
    g_assert_nonnull(strstr(r.out, "# NCCL's pick per size (its tuning model), timed by the "
                                   "engine; the predicted time split"));
}

static void
test_sweep_increment(void)
{
    /* -i without -f: 1, 2, 3, 4 MiB (nccl-tests adds stepBytes when stepFactor is 1). */
    const char *const args[] = { "-b", "1M", "-e", "4M", "-i", "1M", NULL };
    g_auto(CsTestRun) r = cs_test_run_collsim(NULL, args);
    g_assert_cmpint(r.status, ==, 0);
    g_autoptr(CsTrace) trace = trace_of(&r);
    g_assert_cmpuint(cs_trace_n_rows(trace), ==, 4);
    for (gsize i = 0; i < 4; i++)
        g_assert_cmpint(cs_trace_row(trace, i)->size_bytes, ==, (gint64)(i + 1) << 20);
    g_assert_nonnull(strstr(r.out, "step: 1048576(bytes)"));
}

/* nccl-tests' conventions per collective: broadcast keeps its root and prints redop none;
 * all-gather prints the total size and the per-rank count: 1 MiB on 4 ranks of float is
 * 65536 elements per rank; bfloat16 halves the element size. */
static void
test_columns_per_op(void)
{
    const char *const bcast[] = { "--op", "broadcast", "-r", "2", "-b", "1M", "-e", "1M", NULL };
    g_auto(CsTestRun) r1 = cs_test_run_collsim(NULL, bcast);
    g_assert_cmpint(r1.status, ==, 0);
    g_autoptr(CsTrace) t1 = trace_of(&r1);
    g_assert_cmpint(cs_trace_row(t1, 0)->root, ==, 2);
    g_assert_cmpstr(cs_trace_row(t1, 0)->redop, ==, "none");
    g_assert_cmpint(cs_trace_row(t1, 0)->count, ==, 262144);

    const char *const ag[]
        = { "--op", "allgather", "-d", "bfloat16", "-b", "1M", "-e", "1M", NULL };
    g_auto(CsTestRun) r2 = cs_test_run_collsim(NULL, ag);
    g_assert_cmpint(r2.status, ==, 0);
    g_autoptr(CsTrace) t2 = trace_of(&r2);
    const CsTraceRow *row = cs_trace_row(t2, 0);
    g_assert_cmpint(row->size_bytes, ==, 1048576);
    g_assert_cmpint(row->count, ==, 131072);
    g_assert_cmpstr(row->type, ==, "bfloat16");
    /* busbw = algbw * (P-1)/P = 0.75 algbw. */
    g_assert_cmpfloat(fabs(row->out_of_place.busbw_GBps - 0.75 * row->out_of_place.algbw_GBps), <=,
                      0.011);
}

/* -g 4 makes one thread launch four kernels one after the other: never faster than -g 1. */
static void
test_gpus_per_thread(void)
{
    const char *const g1[] = { "-b", "8", "-e", "8", NULL };
    const char *const g4[] = { "-b", "8", "-e", "8", "-g", "4", NULL };
    g_auto(CsTestRun) r1 = cs_test_run_collsim(NULL, g1);
    g_auto(CsTestRun) r4 = cs_test_run_collsim(NULL, g4);
    g_assert_cmpint(r1.status, ==, 0);
    g_assert_cmpint(r4.status, ==, 0);
    g_autoptr(CsTrace) t1 = trace_of(&r1);
    g_autoptr(CsTrace) t4 = trace_of(&r4);
    g_assert_cmpfloat(cs_trace_row(t4, 0)->out_of_place.time_us, >=,
                      cs_trace_row(t1, 0)->out_of_place.time_us);
    g_assert_nonnull(strstr(r4.out, "# nThread 1 nGpus 4 minBytes 8 maxBytes 8 step: 2(factor)"));
}

/* A pasted all_reduce_perf command runs: the flags that only repeat, check or report a real
 * run change nothing and are named on one stderr line; -t changes only the preamble; -G
 * takes the host's launches out (with -g 2 on dgx-h100x4: 2 launches of the H100's launch
 * cost, so the time drops by more than 1 of them); --op max is nccl-tests' --op (-o). */
static void
test_nccl_tests_flags(void)
{
    g_test_summary("issue 30: every all_reduce_perf flag is accepted; the ones a simulation "
                   "ignores are said once on stderr and change no number.");
    const char *const plain[] = { "--topo", "dgx-h100x4", "-b", "1M", "-e", "1M", "-g", "2", NULL };
    const char *const pasted[]
        = { "--topo",  "dgx-h100x4", "-b",   "1M",  "-e", "1M", "-g", "2", "-n", "20",
            "-w",      "5",          "-c",   "1",   "-z", "0",  "-N", "1", "-p", "0",
            "-a",      "3",          "-M",   "1",   "-m", "2",  "-C", "1", "-R", "1",
            "--iters", "7",          "--op", "max", "-t", "2",  NULL };
    const char *const graph[]
        = { "--topo", "dgx-h100x4", "-b", "1M", "-e", "1M", "-g", "2", "-G", "1", NULL };
    g_auto(CsTestRun) rp = cs_test_run_collsim(NULL, plain);
    g_auto(CsTestRun) rn = cs_test_run_collsim(NULL, pasted);
    g_auto(CsTestRun) rg = cs_test_run_collsim(NULL, graph);
    g_assert_cmpint(rp.status, ==, 0);
    g_assert_cmpint(rn.status, ==, 0);
    g_assert_cmpint(rg.status, ==, 0);
    g_assert_cmpstr(rp.err, ==, "");
    g_assert_cmpstr(rg.err, ==, "");
    /* One line, naming each ignored flag with its value, in nccl-tests' table order. */
    g_assert_true(g_str_has_prefix(rn.err, "collsim: ignored in a simulation: -n 7 -m 2 -w 5 "
                                           "-N 1 -p 0 -c 1 -z 0 -C 1 -a 3 -R 1 -M 1 ("));
    g_assert_cmpint(strchr(rn.err, '\n') - rn.err, ==, (int)strlen(rn.err) - 1);
    g_autoptr(CsTrace) tp = trace_of(&rp);
    g_autoptr(CsTrace) tn = trace_of(&rn);
    g_autoptr(CsTrace) tg = trace_of(&rg);
    g_assert_cmpfloat(cs_trace_row(tn, 0)->out_of_place.time_us, ==,
                      cs_trace_row(tp, 0)->out_of_place.time_us);
    g_assert_nonnull(strstr(rn.out, "# nThread 2 nGpus 2 minBytes 1048576"));
    g_assert_nonnull(strstr(rn.out, "     float     max      -1"));
    g_autoptr(CsTopo) topo = cs_test_load_topo("dgx-h100x4");
    double launch_us = cs_topo_rank_gpu(topo, 0)->launch_s * 1e6;
    g_assert_cmpfloat(launch_us, >, 0);
    g_assert_cmpfloat(cs_trace_row(tp, 0)->out_of_place.time_us
                          - cs_trace_row(tg, 0)->out_of_place.time_us,
                      >, launch_us);
}

/* --any-algorithm takes the best over a superset of the default candidates: never slower. */
static void
test_any_algorithm(void)
{
    const char *const nccl[] = { "-b", "8", "-e", "16M", "-f", "8", NULL };
    const char *const any[] = { "-b", "8", "-e", "16M", "-f", "8", "--any-algorithm", NULL };
    g_auto(CsTestRun) rn = cs_test_run_collsim(NULL, nccl);
    g_auto(CsTestRun) ra = cs_test_run_collsim(NULL, any);
    g_assert_cmpint(rn.status, ==, 0);
    g_assert_cmpint(ra.status, ==, 0);
    g_autoptr(CsTrace) tn = trace_of(&rn);
    g_autoptr(CsTrace) ta = trace_of(&ra);
    g_assert_cmpuint(cs_trace_n_rows(tn), ==, cs_trace_n_rows(ta));
    for (gsize i = 0; i < cs_trace_n_rows(tn); i++)
        g_assert_cmpfloat(cs_trace_row(ta, i)->out_of_place.time_us, <=,
                          cs_trace_row(tn, i)->out_of_place.time_us);
    g_assert_nonnull(strstr(ra.out, "among every algorithm collsim knows"));
}

/* --pick nccl: the fastest is never slower than NCCL's pick, and NCCL's pick is what its
 * model chooses (on 8 x H100 NCCL's model takes ring/LL at 8 B, where the engine's fastest is
 * NVLS). With no --pick, NCCL's pick is the default (issue 30: what nccl-tests would
 * measure), collsim's fastest and the gain beside it. */
static void
test_pick_nccl(void)
{
    const char *const fastest[]
        = { "--topo", "dgx-h100x8", "-b", "8", "-e", "16M", "-f", "64", "--pick", "fastest", NULL };
    const char *const nccl[] = { "--topo", "dgx-h100x8", "-b",     "8",         "-e", "16M",
                                 "-f",     "64",         "--pick", "nccl:2.28", NULL };
    const char *const plain[]
        = { "--topo", "dgx-h100x8", "-b", "8", "-e", "16M", "-f", "64", NULL };
    g_auto(CsTestRun) rf = cs_test_run_collsim(NULL, fastest);
    g_auto(CsTestRun) rn = cs_test_run_collsim(NULL, nccl);
    g_auto(CsTestRun) rd = cs_test_run_collsim(NULL, plain);
    g_assert_cmpint(rf.status, ==, 0);
    g_assert_cmpint(rn.status, ==, 0);
    g_assert_cmpint(rd.status, ==, 0);
    g_autoptr(CsTrace) td = trace_of(&rd);
    g_assert_nonnull(strstr(rd.out, "# algo/proto: NCCL 2.28's pick per size"));
    g_assert_nonnull(strstr(rd.out, "  fastest           time     gain\n"));
    /* 8 B: NCCL's ring/LL 18.505 us beside collsim's nvls/Simple 12.100 us: +52.9%. */
    const char *row = strstr(rd.out, "\n#          8  ring       LL ");
    g_assert_nonnull(row);
    g_autofree char *line = g_strndup(row + 1, strcspn(row + 1, "\n"));
    g_assert_nonnull(strstr(line, "  nvls/Simple  "));
    g_assert_nonnull(strstr(line, "  +52.9%"));
    g_autoptr(CsTrace) tf = trace_of(&rf);
    g_autoptr(CsTrace) tn = trace_of(&rn);
    g_assert_cmpuint(cs_trace_n_rows(tf), ==, cs_trace_n_rows(tn));
    for (gsize i = 0; i < cs_trace_n_rows(tf); i++)
        g_assert_cmpfloat(cs_trace_row(tf, i)->out_of_place.time_us, <=,
                          cs_trace_row(tn, i)->out_of_place.time_us);
    g_assert_nonnull(strstr(rn.out, "NCCL's pick per size"));
    g_assert_nonnull(strstr(rn.out, "\n#          8  ring       LL "));
    g_assert_nonnull(strstr(rf.out, "\n#          8  nvls       Simple "));
    g_assert_null(strstr(rf.out, "gain"));
    for (gsize i = 0; i < cs_trace_n_rows(tn); i++)
        g_assert_cmpfloat(cs_trace_row(td, i)->out_of_place.time_us, ==,
                          cs_trace_row(tn, i)->out_of_place.time_us);
}

/* On AMD GPUs RCCL's own pick applies by default (cs_nccl_default_spec()), as NCCL's does on
 * NVIDIA GPUs: the same times as --pick rccl; at 2 MiB on one MI355X node RCCL's MSCCL
 * scheduler runs its all-pairs Simple file (allpairs.c), at 8 B (2 floats, no multiple of the LL
 * file's 256 chunks) its tuning model's ring/LL. */
static void
test_pick_rccl_default(void)
{
    const char *const plain[]
        = { "--topo", "mi355x-x8-xgmi", "-b", "8", "-e", "16M", "-f", "64", NULL };
    const char *const rccl[] = { "--topo", "mi355x-x8-xgmi", "-b",        "8", "-e", "16M", "-f",
                                 "64",     "--pick",         "rccl:2.26", NULL };
    g_auto(CsTestRun) rd = cs_test_run_collsim(NULL, plain);
    g_auto(CsTestRun) rr = cs_test_run_collsim(NULL, rccl);
    g_assert_cmpint(rd.status, ==, 0);
    g_assert_cmpint(rr.status, ==, 0);
    g_assert_nonnull(strstr(rd.out, "# algo/proto: RCCL 2.26's pick per size"));
    g_assert_nonnull(strstr(rd.out, "RCCL's pick per size (its tuning model)"));
    g_assert_nonnull(strstr(rd.out, "\n#    2097152  allpairs   Simple "));
    g_assert_nonnull(strstr(rd.out, "\n#          8  ring       LL "));
    /* The library's pick runs too: at 32 KiB all-pairs beats every candidate, and the fastest
     * column says "(same)" instead of a slower choice with a negative gain. */
    g_assert_nonnull(strstr(rd.out, "\n#      32768  allpairs   LL             4 "));
    const char *row = strstr(rd.out, "\n#      32768  allpairs ");
    const char *end = row != NULL ? strchr(row + 1, '\n') : NULL;
    g_assert_nonnull(end);
    g_autofree char *line = g_strndup(row, end - row);
    g_assert_nonnull(strstr(line, "(same)"));
    /* ... and the report says so, since --pick fastest cannot print it. */
    g_assert_nonnull(strstr(rd.out, "# note: at 1 size the library's pick (allpairs) is none of "
                                    "collsim's candidates and beats them all"));
    g_autoptr(CsTrace) td = trace_of(&rd);
    g_autoptr(CsTrace) tr = trace_of(&rr);
    g_assert_cmpuint(cs_trace_n_rows(td), ==, cs_trace_n_rows(tr));
    for (gsize i = 0; i < cs_trace_n_rows(td); i++)
        g_assert_cmpfloat(cs_trace_row(td, i)->out_of_place.time_us, ==,
                          cs_trace_row(tr, i)->out_of_place.time_us);
}

/* The JSON and CSV carry the same predictions as the table. */
static void
test_formats_agree(void)
{
    const char *const table[] = { "-b", "64K", "-e", "256K", NULL };
    const char *const json[] = { "-b", "64K", "-e", "256K", "--format", "json", NULL };
    const char *const csv[] = { "-b", "64K", "-e", "256K", "--format", "csv", NULL };
    g_auto(CsTestRun) rt = cs_test_run_collsim(NULL, table);
    g_auto(CsTestRun) rj = cs_test_run_collsim(NULL, json);
    g_auto(CsTestRun) rc = cs_test_run_collsim(NULL, csv);
    g_assert_cmpint(rt.status + rj.status + rc.status, ==, 0);
    g_autoptr(CsTrace) trace = trace_of(&rt);

    g_autoptr(cJSON) root = cJSON_Parse(rj.out);
    g_assert_nonnull(root);
    cJSON *rows
        = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(root, "blocks"), 0), "rows");
    g_assert_cmpint(cJSON_GetArraySize(rows), ==, 3);
    g_auto(GStrv) lines = g_strsplit(rc.out, "\n", -1);
    g_assert_cmpuint(g_strv_length(lines), ==, 5);
    for (int i = 0; i < 3; i++) {
        cJSON *row = cJSON_GetArrayItem(rows, i);
        double t = cJSON_GetObjectItem(row, "time_us")->valuedouble;
        double parts = cJSON_GetObjectItem(row, "alpha_us")->valuedouble
                       + cJSON_GetObjectItem(row, "beta_us")->valuedouble
                       + cJSON_GetObjectItem(row, "gamma_us")->valuedouble
                       + cJSON_GetObjectItem(row, "overhead_us")->valuedouble;
        /* Every picosecond of the time belongs to exactly one part (engine.h). */
        g_assert_cmpfloat_with_epsilon(parts, t, 1e-6);
        /* The table prints the same time to 2 decimals (< 100 us) or 1 decimal. */
        g_assert_cmpfloat_with_epsilon(cs_trace_row(trace, i)->out_of_place.time_us, t, 0.05);
        g_auto(GStrv) f = g_strsplit(lines[i + 1], ",", -1);
        g_assert_cmpstr(f[0], ==, "best");
        g_assert_cmpfloat_with_epsilon(g_ascii_strtod(f[9], NULL), t, 1e-6);
        g_assert_cmpstr(f[6], ==, cJSON_GetObjectItem(row, "algo")->valuestring);
    }
}

/* --all: one labelled block per algorithm x protocol that can run all-reduce; ring runs it
 * with every protocol on NVLink. */
static void
test_all_blocks(void)
{
    const char *const args[] = { "--all", "-b", "1M", "-e", "1M", NULL };
    g_auto(CsTestRun) r = cs_test_run_collsim(NULL, args);
    g_assert_cmpint(r.status, ==, 0);
    g_assert_nonnull(strstr(r.out, "# block: ring/LL\n"));
    g_assert_nonnull(strstr(r.out, "# block: ring/LL128\n"));
    g_assert_nonnull(strstr(r.out, "# block: ring/Simple\n"));
    g_assert_null(strstr(r.out, "# Best algorithm"));
}

/* ---- explain ---- */

static double
predicted_time_us(const char *out)
{
    const char *p = strstr(out, "Predicted time: ");
    g_assert_nonnull(p);
    return g_ascii_strtod(p + strlen("Predicted time: "), NULL);
}

/* --textbook: explain's engine figure is its closed form's, and run prints the same time. */
static void
test_textbook(void)
{
    g_test_summary("--textbook runs Hockney's machine: a ring all-reduce of 1 GiB on a DGX H100 "
                   "takes the closed form's 2(P-1) alpha + 2(P-1)/P n/B + (P-1)/P n gamma in "
                   "explain, and run prints the same time and names the model.");
    const char *const explain[]
        = { "explain", "--topo", "dgx-h100x8", "--op",       "allreduce", "--algo",
            "ring",    "--size", "1G",         "--textbook", NULL };
    g_auto(CsTestRun) e = cs_test_run_collsim(NULL, explain);
    g_assert_cmpint(e.status, ==, 0);
    g_assert_cmpstr(e.err, ==, "");
    const char *form = strstr(e.out, "  T = ");
    g_assert_nonnull(form);
    double closed_us = g_ascii_strtod(form + strlen("  T = "), NULL);
    double engine_us = predicted_time_us(e.out);
    /* Both printed to the nanosecond; the engine rounds each of 14 hops to a picosecond. */
    g_assert_cmpfloat(fabs(engine_us - closed_us), <=, 0.0015);
    g_assert_nonnull(strstr(e.out, "the engine predicts"));
    g_assert_nonnull(strstr(e.out, "(1.00x)"));

    const char *const run[] = { "--topo", "dgx-h100x8", "--op", "allreduce", "--algo",     "ring",
                                "-b",     "1G",         "-e",   "1G",        "--textbook", NULL };
    g_auto(CsTestRun) r = cs_test_run_collsim(NULL, run);
    g_assert_cmpint(r.status, ==, 0);
    g_assert_cmpstr(r.err, ==, "");
    g_assert_nonnull(strstr(r.out, "# model: reservation, textbook (Hockney"));
    /* The winners table after the block gives the time to the nanosecond. */
    g_autofree char *want = g_strdup_printf(" %.3f ", engine_us);
    g_assert_nonnull(strstr(r.out, want));
}

/* select --textbook: the crossover of recursive doubling and Rabenseifner's all-reduce on the
 * 8-node Ethernet star is where their closed forms cross (TRG05: lg P (alpha + n beta + n
 * gamma) against 2 lg P alpha + 2(P-1)/P n beta + (P-1)/P n gamma), with the alpha, B and gamma
 * explain --textbook prints, to within a few elements (select bisects to one float and each
 * algorithm's pieces round to whole elements). NCCL's model, --compare and tables for NCCL are
 * refused. */
static void
test_select_textbook(void)
{
    const char *const explain[]
        = { "explain", "--topo", "eth-cpu-8n", "--op",       "allreduce", "--algo",
            "rhd",     "--size", "64K",        "--textbook", NULL };
    g_auto(CsTestRun) e = cs_test_run_collsim(NULL, explain);
    g_assert_cmpint(e.status, ==, 0);
    const char *with = strstr(e.out, "alpha = ");
    g_assert_nonnull(with);
    double alpha_us = 0, bw_GBps = 0, gamma_ps = 0;
    g_assert_cmpint(sscanf(with, "alpha = %lf us and B = %lf GB/s", &alpha_us, &bw_GBps), ==, 2);
    const char *g = strstr(with, "gamma = ");
    g_assert_nonnull(g);
    g_assert_cmpint(sscanf(g, "gamma = %lf ps/B", &gamma_ps), ==, 1);
    const double P = 8, lg = 3, beta = 1e-9 / bw_GBps, gamma = gamma_ps * 1e-12;
    const double alpha = alpha_us * 1e-6;
    /* lg (alpha + n beta + n gamma) = 2 lg alpha + 2(P-1)/P n beta + (P-1)/P n gamma */
    const double cross
        = lg * alpha / (lg * (beta + gamma) - 2 * (P - 1) / P * beta - (P - 1) / P * gamma);

    const char *const select[]
        = { "select",     "--topo", "eth-cpu-8n", "--op", "allreduce", "--textbook",
            "--min-gain", "0",      "--emit",     "json", NULL };
    g_auto(CsTestRun) s = cs_test_run_collsim(NULL, select);
    g_assert_cmpint(s.status, ==, 0);
    g_autoptr(cJSON) root = cJSON_Parse(s.out);
    g_assert_nonnull(root);
    g_assert_cmpstr(cJSON_GetObjectItem(root, "net_model")->valuestring, ==, "textbook");
    const cJSON *xs = cJSON_GetObjectItem(
        cJSON_GetArrayItem(cJSON_GetObjectItem(root, "collectives"), 0), "crossovers");
    gboolean found = FALSE;
    const cJSON *x = NULL;
    cJSON_ArrayForEach(x, xs)
    {
        const char *from
            = cJSON_GetObjectItem(cJSON_GetObjectItem(x, "from"), "algorithm")->valuestring;
        const char *to
            = cJSON_GetObjectItem(cJSON_GetObjectItem(x, "to"), "algorithm")->valuestring;
        if (strcmp(from, "recursive_doubling") != 0 || strcmp(to, "rhd") != 0)
            continue;
        found = TRUE;
        const double at = cJSON_GetObjectItem(x, "size_bytes")->valuedouble;
        g_test_message("crossover %.0f B, closed forms %.1f B", at, cross);
        g_assert_cmpfloat(fabs(at - cross), <=, 8 * 4);
    }
    g_assert_true(found);

    const char *const refused[][12] = {
        { "select", "--topo", "eth-cpu-8n", "--textbook", "--model", "nccl", NULL },
        { "select", "--topo", "dgx-h100x8", "--textbook", "--compare", "nccl", NULL },
        { "select", "--topo", "dgx-h100x8", "--textbook", "--emit", "nccl-tuner-csv", NULL },
    };
    for (gsize i = 0; i < G_N_ELEMENTS(refused); i++) {
        g_auto(CsTestRun) r = cs_test_run_collsim(NULL, refused[i]);
        g_assert_cmpint(r.status, ==, 2);
        g_assert_nonnull(strstr(r.err, "--textbook"));
    }
}

/* validate --format csv: a header of 19 columns and one line per row of the trace, each with
 * 19 fields, the same rows, measured and predicted times as --format json. */
static void
test_validate_csv(void)
{
    g_autofree char *trace = g_test_build_filename(
        G_TEST_DIST, "..", "traces", "h100-sxm-4gpu-nvswitch_allreduce_nccl2.26.2.txt", NULL);
    const char *const csv[]
        = { "validate", "--topo", "dgx-h100x4", "--format", "csv", trace, NULL };
    const char *const json[]
        = { "validate", "--topo", "dgx-h100x4", "--format", "json", trace, NULL };
    g_auto(CsTestRun) c = cs_test_run_collsim(NULL, csv);
    g_auto(CsTestRun) j = cs_test_run_collsim(NULL, json);
    g_assert_cmpint(c.status, ==, 0);
    g_assert_cmpint(j.status, ==, 0);
    g_autoptr(cJSON) root = cJSON_Parse(j.out);
    g_assert_nonnull(root);
    const cJSON *rows
        = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(root, "traces"), 0), "rows");
    g_auto(GStrv) lines = g_strsplit(c.out, "\n", -1);
    g_assert_true(g_str_has_prefix(lines[0], "trace,collective,ranks,machine_class,size_bytes,"));
    g_assert_cmpuint(g_strv_length(lines), ==, (guint)cJSON_GetArraySize(rows) + 2);
    for (int i = 0; i < cJSON_GetArraySize(rows); i++) {
        g_auto(GStrv) f = g_strsplit(lines[i + 1], ",", -1);
        g_assert_cmpuint(g_strv_length(f), ==, 19);
        const cJSON *row = cJSON_GetArrayItem(rows, i);
        g_assert_cmpfloat(g_ascii_strtod(f[4], NULL), ==,
                          cJSON_GetObjectItem(row, "size_bytes")->valuedouble);
        g_assert_cmpfloat(fabs(g_ascii_strtod(f[7], NULL)
                               - cJSON_GetObjectItem(row, "predicted_us")->valuedouble),
                          <=, 0.0005);
        g_assert_cmpstr(f[12], ==, cJSON_GetObjectItem(row, "algo")->valuestring);
    }
    g_assert_cmpstr(lines[cJSON_GetArraySize(rows) + 1], ==, "");
}

/* calibrate --format csv: one line per parameter of --format json's list, 15 fields each (a
 * quoted range source holds commas), the same names and fitted values; a joint fit has no CSV
 * (exit 2). */
static void
test_calibrate_csv(void)
{
    g_autofree char *trace = g_test_build_filename(G_TEST_DIST, "..", "traces",
                                                   "rtx2080ti-2gpu-pcie3-nop2p_reduce.txt", NULL);
    const char *const csv[]
        = { "calibrate", "--topo", "rtx2080ti-x2-pcie3-shm", "--format", "csv", trace, NULL };
    const char *const json[]
        = { "calibrate", "--topo", "rtx2080ti-x2-pcie3-shm", "--format", "json", trace, NULL };
    g_auto(CsTestRun) c = cs_test_run_collsim(NULL, csv);
    g_auto(CsTestRun) j = cs_test_run_collsim(NULL, json);
    g_assert_cmpint(c.status, ==, 0);
    g_assert_cmpint(j.status, ==, 0);
    g_autoptr(cJSON) root = cJSON_Parse(j.out);
    const cJSON *params = cJSON_GetObjectItem(root, "parameters");
    g_auto(GStrv) lines = g_strsplit(c.out, "\n", -1);
    g_assert_true(g_str_has_prefix(lines[0], "name,unit,datasheet,fitted,sigma,min,max,"));
    g_assert_cmpuint(g_strv_length(lines), ==, (guint)cJSON_GetArraySize(params) + 2);
    for (int i = 0; i < cJSON_GetArraySize(params); i++) {
        const char *line = lines[i + 1];
        g_assert_cmpint(cs_test_csv_fields(line), ==, 15);
        const cJSON *p = cJSON_GetArrayItem(params, i);
        g_auto(GStrv) f = g_strsplit(line, ",", 5);
        g_assert_cmpstr(f[0], ==, cJSON_GetObjectItem(p, "name")->valuestring);
        const double fitted = cJSON_GetObjectItem(p, "fitted")->valuedouble;
        g_assert_cmpfloat(fabs(g_ascii_strtod(f[3], NULL) - fitted), <=, 1e-8 * fabs(fitted));
    }
    const char *const joint[]
        = { "calibrate", "--format", "csv",        "--topo", "rtx2080ti-x2-pcie3-shm",
            trace,       "--topo",   "dgx-h100x4", trace,    NULL };
    g_auto(CsTestRun) r = cs_test_run_collsim(NULL, joint);
    g_assert_cmpint(r.status, ==, 2);
    g_assert_nonnull(strstr(r.err, "--format csv"));
}

/* Orders (pid, tid, start, end) spans by thread, then start. */
static gint
compare_spans(gconstpointer a, gconstpointer b)
{
    const double *x = a;
    const double *y = b;
    for (int i = 0; i < 3; i++)
        if (x[i] != y[i])
            return x[i] < y[i] ? -1 : 1;
    return 0;
}

/* Whether @e is an operation of a switch (NVLS, SHARP) rather than a GPU's step. */
static gboolean
is_switch_op(const cJSON *e)
{
    const cJSON *cat = cJSON_GetObjectItem(e, "cat");
    return cat != NULL
           && (strcmp(cat->valuestring, "multicast") == 0
               || strcmp(cat->valuestring, "reduce") == 0);
}

/* Whether @e is a span of a whole collective or of its launch rather than a step. */
static gboolean
is_span(const cJSON *e)
{
    const cJSON *cat = cJSON_GetObjectItem(e, "cat");
    return cat != NULL
           && (strcmp(cat->valuestring, "collective") == 0
               || strcmp(cat->valuestring, "launch") == 0);
}

/* Each of @nranks GPUs has, on its thread named "collective", one span named @op from 0 to
 * the end of its last step and, inside it, one "launch" span from 0 to the start of its first
 * step, which is later than 0 (the engine's launch); the whole span comes first. */
static void
assert_spans(const cJSON *root, int nranks, const char *op)
{
    g_autofree double *first = g_new(double, nranks);
    g_autofree double *last = g_new(double, nranks);
    g_autofree int *tid = g_new(int, nranks);
    g_autofree int *seen = g_new0(int, nranks);
    for (int r = 0; r < nranks; r++) {
        first[r] = G_MAXDOUBLE;
        last[r] = -1.0;
        tid[r] = -1;
    }
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(root, "traceEvents"))
    {
        const char *ph = cJSON_GetObjectItem(e, "ph")->valuestring;
        int pid = cJSON_GetObjectItem(e, "pid")->valueint;
        if (pid >= nranks)
            continue; /* the links' and the switches' processes */
        if (strcmp(ph, "M") == 0 && cJSON_GetObjectItem(e, "tid") != NULL
            && strcmp(cJSON_GetObjectItem(cJSON_GetObjectItem(e, "args"), "name")->valuestring,
                      "collective")
                   == 0)
            tid[pid] = cJSON_GetObjectItem(e, "tid")->valueint;
        if (strcmp(ph, "X") != 0 || is_span(e))
            continue;
        double t0 = cJSON_GetObjectItem(e, "ts")->valuedouble;
        first[pid] = MIN(first[pid], t0);
        last[pid] = MAX(last[pid], t0 + cJSON_GetObjectItem(e, "dur")->valuedouble);
    }
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(root, "traceEvents"))
    {
        if (!is_span(e))
            continue;
        int pid = cJSON_GetObjectItem(e, "pid")->valueint;
        g_assert_cmpint(cJSON_GetObjectItem(e, "tid")->valueint, ==, tid[pid]);
        g_assert_cmpfloat(cJSON_GetObjectItem(e, "ts")->valuedouble, ==, 0.0);
        double dur = cJSON_GetObjectItem(e, "dur")->valuedouble;
        if (strcmp(cJSON_GetObjectItem(e, "cat")->valuestring, "collective") == 0) {
            g_assert_cmpint(seen[pid], ==, 0);
            g_assert_cmpstr(cJSON_GetObjectItem(e, "name")->valuestring, ==, op);
            g_assert_cmpfloat_with_epsilon(dur, last[pid], 1e-6);
            seen[pid] = 1;
        }
        else {
            g_assert_cmpint(seen[pid], ==, 1);
            g_assert_cmpstr(cJSON_GetObjectItem(e, "name")->valuestring, ==, "launch");
            g_assert_cmpfloat(first[pid], >, 0.0);
            g_assert_cmpfloat_with_epsilon(dur, first[pid], 1e-6);
            seen[pid] = 2;
        }
    }
    for (int r = 0; r < nranks; r++) {
        g_assert_cmpint(tid[r], >=, 0);
        g_assert_cmpint(seen[r], ==, 2);
    }
}

/* One end of a flow, or one step, on a (process, thread, peer): its time and its order. */
typedef struct {
    double t0;
    double t1; /* a step's end; a flow end's own time */
    int id;    /* a flow's id; a step's place in the file */
} Mark;

static gint
compare_marks(gconstpointer a, gconstpointer b)
{
    const Mark *x = a, *y = b;
    if (x->t0 != y->t0)
        return x->t0 < y->t0 ? -1 : 1;
    return x->id - y->id;
}

static void
add_mark(GHashTable *table, int pid, int tid, int peer, Mark m)
{
    char *key = g_strdup_printf("%d/%d/%d", pid, tid, peer);
    GArray *marks = g_hash_table_lookup(table, key);
    if (marks == NULL) {
        marks = g_array_new(FALSE, FALSE, sizeof(Mark));
        g_hash_table_insert(table, key, marks);
    }
    else {
        g_free(key);
    }
    g_array_append_val(marks, m);
}

/* On each (process, thread, peer) the k-th flow end in time lies inside the k-th step. */
static void
assert_marks_inside(GHashTable *ends, GHashTable *steps)
{
    g_assert_cmpuint(g_hash_table_size(ends), ==, g_hash_table_size(steps));
    GHashTableIter it;
    gpointer key, value;
    g_hash_table_iter_init(&it, ends);
    while (g_hash_table_iter_next(&it, &key, &value)) {
        GArray *e = value;
        GArray *st = g_hash_table_lookup(steps, key);
        g_assert_nonnull(st);
        g_assert_cmpuint(e->len, ==, st->len);
        g_array_sort(e, compare_marks);
        g_array_sort(st, compare_marks);
        for (guint i = 0; i < e->len; i++) {
            double t = g_array_index(e, Mark, i).t0;
            g_assert_cmpfloat(t, >=, g_array_index(st, Mark, i).t0 - 1e-6);
            g_assert_cmpfloat(t, <=, g_array_index(st, Mark, i).t1 + 1e-6);
        }
    }
}

/* The flows of a timeline (Trace Event Format "s" and "f"): each id has exactly one start and
 * one end, never before it; on each process and thread, the flows that start there toward a
 * peer match the steps that send to it one for one, the k-th flow in time inside the k-th
 * step, and likewise the flows that end there from a peer and the steps that receive from it.
 * So every flow start has its end, and every message its arrow. */
static void
assert_flows(const cJSON *root)
{
    g_autoptr(GHashTable) starts = g_hash_table_new(g_direct_hash, g_direct_equal);
    g_autoptr(GHashTable) ends = g_hash_table_new(g_direct_hash, g_direct_equal);
    GDestroyNotify unref = (GDestroyNotify)g_array_unref;
    g_autoptr(GHashTable) send_steps
        = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, unref);
    g_autoptr(GHashTable) recv_steps
        = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, unref);
    int n_steps = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(root, "traceEvents"))
    {
        const char *ph = cJSON_GetObjectItem(e, "ph")->valuestring;
        if (strcmp(ph, "X") == 0 && !is_span(e) && !is_switch_op(e)) {
            const cJSON *args = cJSON_GetObjectItem(e, "args");
            double t0 = cJSON_GetObjectItem(e, "ts")->valuedouble;
            Mark m = { t0, t0 + cJSON_GetObjectItem(e, "dur")->valuedouble, n_steps++ };
            int pid = cJSON_GetObjectItem(e, "pid")->valueint;
            int tid = cJSON_GetObjectItem(e, "tid")->valueint;
            int to = cJSON_GetObjectItem(args, "send_peer")->valueint;
            int from = cJSON_GetObjectItem(args, "recv_peer")->valueint;
            if (to >= 0)
                add_mark(send_steps, pid, tid, to, m);
            if (from >= 0)
                add_mark(recv_steps, pid, tid, from, m);
        }
        else if (strcmp(ph, "s") == 0 || strcmp(ph, "f") == 0) {
            g_assert_cmpstr(cJSON_GetObjectItem(e, "cat")->valuestring, ==, "message");
            g_assert_cmpstr(cJSON_GetObjectItem(e, "name")->valuestring, ==, "message");
            GHashTable *table = ph[0] == 's' ? starts : ends;
            gpointer id = GINT_TO_POINTER(cJSON_GetObjectItem(e, "id")->valueint + 1);
            g_assert_false(g_hash_table_contains(table, id));
            g_hash_table_insert(table, id, (gpointer)e);
            if (ph[0] == 'f')
                g_assert_cmpstr(cJSON_GetObjectItem(e, "bp")->valuestring, ==, "e");
        }
    }
    g_assert_cmpuint(g_hash_table_size(starts), >, 0);
    g_assert_cmpuint(g_hash_table_size(starts), ==, g_hash_table_size(ends));
    g_autoptr(GHashTable) start_marks
        = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, unref);
    g_autoptr(GHashTable) end_marks = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, unref);
    GHashTableIter it;
    gpointer id, value;
    g_hash_table_iter_init(&it, starts);
    while (g_hash_table_iter_next(&it, &id, &value)) {
        const cJSON *s = value;
        const cJSON *f = g_hash_table_lookup(ends, id);
        g_assert_nonnull(f);
        int from = cJSON_GetObjectItem(s, "pid")->valueint;
        int to = cJSON_GetObjectItem(f, "pid")->valueint;
        double ts = cJSON_GetObjectItem(s, "ts")->valuedouble;
        double tf = cJSON_GetObjectItem(f, "ts")->valuedouble;
        g_assert_cmpfloat(tf, >=, ts);
        add_mark(start_marks, from, cJSON_GetObjectItem(s, "tid")->valueint, to,
                 (Mark){ ts, ts, GPOINTER_TO_INT(id) });
        add_mark(end_marks, to, cJSON_GetObjectItem(f, "tid")->valueint, from,
                 (Mark){ tf, tf, GPOINTER_TO_INT(id) });
    }
    assert_marks_inside(start_marks, send_steps);
    assert_marks_inside(end_marks, recv_steps);
}

/* Each "C" event of a timeline of @nranks GPUs on @topo: on the process named "links
 * (utilization)" (pid @nranks), category "link", named after a link of @topo ("SRC -> DST",
 * its devices' names), with one argument, a numeric "utilization" between 0 and 1 (1e-9 over
 * for rounding); a track's times increase, its first value is above 0 and its last is 0.
 * Returns each track's bytes: the utilization integrated over time, times the link's
 * bandwidth (name -> double, transfer full). */
static GHashTable *
assert_link_counters(const cJSON *root, const CsTopo *topo, int nranks)
{
    g_autoptr(GHashTable) links = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    for (int l = 0; l < cs_topo_n_links(topo); l++) {
        const CsLink *link = cs_topo_link(topo, l);
        g_hash_table_insert(links,
                            g_strdup_printf("%s -> %s", cs_topo_device(topo, link->src)->name,
                                            cs_topo_device(topo, link->dst)->name),
                            GINT_TO_POINTER(l + 1));
    }
    GHashTable *bytes = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    /* Per track: its last time and value. */
    g_autoptr(GHashTable) last = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    gboolean named = FALSE;
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(root, "traceEvents"))
    {
        const char *ph = cJSON_GetObjectItem(e, "ph")->valuestring;
        if (strcmp(ph, "M") == 0 && cJSON_GetObjectItem(e, "pid")->valueint == nranks
            && strcmp(cJSON_GetObjectItem(e, "name")->valuestring, "process_name") == 0) {
            const cJSON *args = cJSON_GetObjectItem(e, "args");
            g_assert_cmpstr(cJSON_GetObjectItem(args, "name")->valuestring, ==,
                            "links (utilization)");
            named = TRUE;
        }
        if (strcmp(ph, "C") != 0)
            continue;
        g_assert_cmpint(cJSON_GetObjectItem(e, "pid")->valueint, ==, nranks);
        g_assert_cmpstr(cJSON_GetObjectItem(e, "cat")->valuestring, ==, "link");
        const char *name = cJSON_GetObjectItem(e, "name")->valuestring;
        int l = GPOINTER_TO_INT(g_hash_table_lookup(links, name)) - 1;
        g_assert_cmpint(l, >=, 0);
        const cJSON *args = cJSON_GetObjectItem(e, "args");
        g_assert_cmpint(cJSON_GetArraySize(args), ==, 1);
        const cJSON *u = cJSON_GetObjectItem(args, "utilization");
        g_assert_true(cJSON_IsNumber(u));
        g_assert_cmpfloat(u->valuedouble, >=, 0.0);
        g_assert_cmpfloat(u->valuedouble, <=, 1.0 + 1e-9);
        double t = cJSON_GetObjectItem(e, "ts")->valuedouble;
        double *prev = g_hash_table_lookup(last, name);
        double *sum = g_hash_table_lookup(bytes, name);
        if (prev == NULL) {
            g_assert_cmpfloat(u->valuedouble, >, 0.0);
            prev = g_new(double, 2);
            sum = g_new0(double, 1);
            g_hash_table_insert(last, g_strdup(name), prev);
            g_hash_table_insert(bytes, g_strdup(name), sum);
        }
        else {
            g_assert_cmpfloat(t, >, prev[0]);
            *sum += prev[1] * (t - prev[0]) * 1e-6 * cs_topo_link(topo, l)->bw_Bps;
        }
        prev[0] = t;
        prev[1] = u->valuedouble;
    }
    g_assert_true(named);
    g_assert_cmpuint(g_hash_table_size(bytes), >, 0);
    GHashTableIter it;
    gpointer key, value;
    g_hash_table_iter_init(&it, last);
    while (g_hash_table_iter_next(&it, &key, &value))
        g_assert_cmpfloat(((double *)value)[1], ==, 0.0);
    return bytes;
}

/* The trace-event file @path, parsed (transfer full). */
static cJSON *
load_timeline(const char *path)
{
    g_autofree char *text = NULL;
    g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
    cJSON *root = cJSON_Parse(text);
    g_assert_nonnull(root);
    g_assert_true(cJSON_IsArray(cJSON_GetObjectItem(root, "traceEvents")));
    return root;
}

/* Setup: ring all-reduce of 4 MiB, Simple (wire bytes = bytes), on the 8 x H100 box under
 * each network model, with --timeline.
 * Expectation: the counters of assert_link_counters(), one for each GPU's link to the
 * NVSwitch and back, 16 in all; integrated, each GPU's up-link carried what its send steps
 * sent and its down-link what its receive steps received (to 1e-6). */
static void
test_explain_timeline_links(void)
{
    g_autoptr(CsTopo) topo = cs_test_load_topo("dgx-h100x8");
    const char *const models[] = { "reservation", "maxmin" };
    for (gsize m = 0; m < G_N_ELEMENTS(models); m++) {
        g_autofree char *dir = g_dir_make_tmp("collsim-explain-XXXXXX", NULL);
        g_autofree char *path = g_build_filename(dir, "timeline.json", NULL);
        const char *const args[]
            = { "explain", "--topo",     "dgx-h100x8", "--op",   "allreduce", "--algo",
                "ring",    "--proto",    "simple",     "--size", "4M",        "--model",
                models[m], "--timeline", path,         NULL };
        g_auto(CsTestRun) r = cs_test_run_collsim(NULL, args);
        g_assert_cmpstr(r.err, ==, "");
        g_assert_cmpint(r.status, ==, 0);
        g_autoptr(cJSON) root = load_timeline(path);
        g_autoptr(GHashTable) bytes = assert_link_counters(root, topo, 8);
        g_assert_cmpuint(g_hash_table_size(bytes), ==, 16);
        double sent[8] = { 0 };
        double received[8] = { 0 };
        const cJSON *e;
        cJSON_ArrayForEach(e, cJSON_GetObjectItem(root, "traceEvents"))
        {
            if (strcmp(cJSON_GetObjectItem(e, "ph")->valuestring, "X") != 0 || is_span(e))
                continue;
            const cJSON *a = cJSON_GetObjectItem(e, "args");
            int pid = cJSON_GetObjectItem(e, "pid")->valueint;
            double b = cJSON_GetObjectItem(a, "bytes")->valuedouble;
            if (cJSON_GetObjectItem(a, "send_peer")->valueint >= 0)
                sent[pid] += b;
            if (cJSON_GetObjectItem(a, "recv_peer")->valueint >= 0)
                received[pid] += b;
        }
        for (int g = 0; g < 8; g++) {
            g_autofree char *up = g_strdup_printf("gpu%d -> nvswitch", g);
            g_autofree char *down = g_strdup_printf("nvswitch -> gpu%d", g);
            double *u = g_hash_table_lookup(bytes, up);
            double *d = g_hash_table_lookup(bytes, down);
            g_assert_nonnull(u);
            g_assert_nonnull(d);
            g_assert_cmpfloat(sent[g], >, 0.0);
            g_assert_cmpfloat(fabs(*u - sent[g]), <=, 1e-6 * sent[g]);
            g_assert_cmpfloat(fabs(*d - received[g]), <=, 1e-6 * received[g]);
        }
        assert_flows(root);
        g_remove(path);
        g_rmdir(dir);
    }
}

/* Setup: NVLS all-reduce of 4 MiB on the 8 x H100 box (its NVSwitch reduces and multicasts),
 * with --timeline.
 * Expectation: a process named "nvswitch" holds the switch's operations, "multicast from GPU
 * j" and "reduce into GPU j", as many of each; no arrow goes from GPU to GPU; a multicast
 * has one arrow in and one out to each of its 7 receivers, a reduction one in from each of
 * its 7 senders and one out; every arrow's end lies inside a slice of its process and
 * thread, and no arrow runs back in time; the GPUs' arrows leave from every send but the
 * multicast's shared ones (flag SHARED_FIRST_HOP); the links' counters are as always; a
 * second run writes the same bytes. */
static void
test_explain_timeline_nvls(void)
{
    g_autoptr(CsTopo) topo = cs_test_load_topo("dgx-h100x8");
    g_autofree char *dir = g_dir_make_tmp("collsim-explain-XXXXXX", NULL);
    g_autofree char *path = g_build_filename(dir, "timeline.json", NULL);
    const char *const args[]
        = { "explain", "--topo", "dgx-h100x8", "--op",       "allreduce", "--algo",
            "nvls",    "--size", "4M",         "--timeline", path,        NULL };
    g_auto(CsTestRun) r = cs_test_run_collsim(NULL, args);
    g_assert_cmpstr(r.err, ==, "");
    g_assert_cmpint(r.status, ==, 0);
    g_autoptr(cJSON) root = load_timeline(path);
    g_hash_table_unref(assert_link_counters(root, topo, 8));
    assert_spans(root, 8, "allreduce");

    int switch_pid = -1;
    int n_multicast = 0, n_reduce = 0, n_leading_sends = 0;
    /* Slices per "pid/tid": their [start, end] pairs; the switch's by name too. */
    g_autoptr(GHashTable) slices
        = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)g_array_unref);
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(root, "traceEvents"))
    {
        const char *ph = cJSON_GetObjectItem(e, "ph")->valuestring;
        int pid = cJSON_GetObjectItem(e, "pid")->valueint;
        if (strcmp(ph, "M") == 0
            && strcmp(cJSON_GetObjectItem(e, "name")->valuestring, "process_name") == 0
            && strcmp(cJSON_GetObjectItem(cJSON_GetObjectItem(e, "args"), "name")->valuestring,
                      "nvswitch")
                   == 0)
            switch_pid = pid;
        if (strcmp(ph, "X") != 0 || is_span(e))
            continue;
        const cJSON *a = cJSON_GetObjectItem(e, "args");
        if (is_switch_op(e)) {
            gboolean mc = strcmp(cJSON_GetObjectItem(e, "cat")->valuestring, "multicast") == 0;
            const char *name = cJSON_GetObjectItem(e, "name")->valuestring;
            g_assert_true(g_str_has_prefix(name, mc ? "multicast from GPU " : "reduce into GPU "));
            g_assert_cmpint(cJSON_GetObjectItem(a, "messages")->valueint, ==, 7);
            if (mc)
                n_multicast++;
            else
                n_reduce++;
        }
        else {
            g_assert_cmpint(pid, <, 8);
            const cJSON *flags = cJSON_GetObjectItem(a, "flags");
            if (cJSON_GetObjectItem(a, "send_peer")->valueint >= 0
                && (flags == NULL || !(flags->valueint & 1))) /* CS_STEP_FLAG_SHARED_FIRST_HOP */
                n_leading_sends++;
        }
        g_autofree char *key
            = g_strdup_printf("%d/%d", pid, cJSON_GetObjectItem(e, "tid")->valueint);
        GArray *list = g_hash_table_lookup(slices, key);
        if (list == NULL) {
            list = g_array_new(FALSE, FALSE, sizeof(double) * 2);
            g_hash_table_insert(slices, g_strdup(key), list);
        }
        double t0 = cJSON_GetObjectItem(e, "ts")->valuedouble;
        double span[2] = { t0, t0 + cJSON_GetObjectItem(e, "dur")->valuedouble };
        g_array_append_val(list, span);
    }
    g_assert_cmpint(switch_pid, >, 8);
    g_assert_cmpint(n_multicast, >, 0);
    g_assert_cmpint(n_multicast, ==, n_reduce);

    /* The arrows: pair their ends by id. */
    g_autoptr(GHashTable) starts = g_hash_table_new(g_direct_hash, g_direct_equal);
    g_autoptr(GHashTable) ends = g_hash_table_new(g_direct_hash, g_direct_equal);
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(root, "traceEvents"))
    {
        const char *ph = cJSON_GetObjectItem(e, "ph")->valuestring;
        if (strcmp(ph, "s") != 0 && strcmp(ph, "f") != 0)
            continue;
        GHashTable *table = ph[0] == 's' ? starts : ends;
        gpointer id = GINT_TO_POINTER(cJSON_GetObjectItem(e, "id")->valueint + 1);
        g_assert_false(g_hash_table_contains(table, id));
        g_hash_table_insert(table, id, (gpointer)e);
        /* Inside a slice of its own thread. */
        g_autofree char *key = g_strdup_printf("%d/%d", cJSON_GetObjectItem(e, "pid")->valueint,
                                               cJSON_GetObjectItem(e, "tid")->valueint);
        GArray *list = g_hash_table_lookup(slices, key);
        g_assert_nonnull(list);
        double t = cJSON_GetObjectItem(e, "ts")->valuedouble;
        gboolean inside = FALSE;
        for (guint i = 0; i < list->len && !inside; i++) {
            const double *span = &g_array_index(list, double, 2 * i);
            inside = t >= span[0] - 1e-6 && t <= span[1] + 1e-6;
        }
        g_assert_true(inside);
    }
    g_assert_cmpuint(g_hash_table_size(starts), ==, g_hash_table_size(ends));
    int gpu_out = 0, into_switch = 0, out_of_switch = 0;
    GHashTableIter it;
    gpointer id, value;
    g_hash_table_iter_init(&it, starts);
    while (g_hash_table_iter_next(&it, &id, &value)) {
        const cJSON *s = value;
        const cJSON *f = g_hash_table_lookup(ends, id);
        g_assert_nonnull(f);
        g_assert_cmpfloat(cJSON_GetObjectItem(f, "ts")->valuedouble, >=,
                          cJSON_GetObjectItem(s, "ts")->valuedouble);
        int from = cJSON_GetObjectItem(s, "pid")->valueint;
        int to = cJSON_GetObjectItem(f, "pid")->valueint;
        g_assert_true((from == switch_pid) != (to == switch_pid)); /* never GPU to GPU */
        if (from < 8)
            gpu_out++;
        if (to == switch_pid)
            into_switch++;
        else
            out_of_switch++;
    }
    g_assert_cmpint(gpu_out, ==, n_leading_sends);
    g_assert_cmpint(into_switch, ==, n_multicast + 7 * n_reduce);
    g_assert_cmpint(out_of_switch, ==, 7 * n_multicast + n_reduce);

    /* Once more: the same bytes. */
    g_autofree char *first = NULL;
    g_assert_true(g_file_get_contents(path, &first, NULL, NULL));
    g_auto(CsTestRun) again = cs_test_run_collsim(NULL, args);
    g_assert_cmpint(again.status, ==, 0);
    g_autofree char *second = NULL;
    g_assert_true(g_file_get_contents(path, &second, NULL, NULL));
    g_assert_cmpstr(first, ==, second);
    g_remove(path);
    g_rmdir(dir);
}

/* Setup: ring all-reduce of 4 MiB on two 8 x H100 nodes over 400 Gb/s NDR (rail-optimized),
 * with --timeline.
 * Expectation: steps, arrows and spans as on one node (assert_flows(), assert_spans()); the
 * counters of assert_link_counters(), among them links to and from the NICs. */
static void
test_explain_timeline_cluster(void)
{
    g_autoptr(CsTopo) topo = cs_test_load_topo("hgx-h100x8-2n");
    g_autofree char *dir = g_dir_make_tmp("collsim-explain-XXXXXX", NULL);
    g_autofree char *path = g_build_filename(dir, "timeline.json", NULL);
    const char *const args[]
        = { "explain", "--topo", "hgx-h100x8-2n", "--op", "allreduce", "--algo", "ring",
            "--size",  "4M",     "--timeline",    path,   NULL };
    g_auto(CsTestRun) r = cs_test_run_collsim(NULL, args);
    g_assert_cmpstr(r.err, ==, "");
    g_assert_cmpint(r.status, ==, 0);
    g_autoptr(cJSON) root = load_timeline(path);
    g_autoptr(GHashTable) bytes = assert_link_counters(root, topo, 16);
    gboolean network = FALSE;
    GHashTableIter it;
    gpointer name;
    g_hash_table_iter_init(&it, bytes);
    while (g_hash_table_iter_next(&it, &name, NULL))
        network = network || strstr(name, "nic") != NULL;
    g_assert_true(network);
    assert_flows(root);
    assert_spans(root, 16, "allreduce");
    g_remove(path);
    g_rmdir(dir);
}

/* The timeline holds one complete event per step, inside the predicted time; ranks 1..5 of an
 * MST broadcast each receive the data once, so each has at least one receiving step. */
static void
test_explain_timeline(void)
{
    g_autofree char *dir = g_dir_make_tmp("collsim-explain-XXXXXX", NULL);
    g_autofree char *path = g_build_filename(dir, "timeline.json", NULL);
    const char *const args[]
        = { "explain", "--topo",  "dgx-h100x8", "--op",       "broadcast", "--algo",
            "mst",     "--ranks", "6",          "--timeline", path,        NULL };
    g_auto(CsTestRun) r = cs_test_run_collsim(NULL, args);
    g_assert_cmpstr(r.err, ==, "");
    g_assert_cmpint(r.status, ==, 0);
    double total_us = predicted_time_us(r.out);

    g_autofree char *text = NULL;
    g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
    g_autoptr(cJSON) root = cJSON_Parse(text);
    g_assert_nonnull(root);
    cJSON *events = cJSON_GetObjectItem(root, "traceEvents");
    g_assert_true(cJSON_IsArray(events));
    gboolean received[6] = { FALSE };
    int n_steps = 0;
    cJSON *e;
    cJSON_ArrayForEach(e, events)
    {
        if (strcmp(cJSON_GetObjectItem(e, "ph")->valuestring, "X") != 0 || is_span(e))
            continue;
        n_steps++;
        int pid = cJSON_GetObjectItem(e, "pid")->valueint;
        g_assert_cmpint(pid, >=, 0);
        g_assert_cmpint(pid, <, 6);
        double ts = cJSON_GetObjectItem(e, "ts")->valuedouble;
        double dur = cJSON_GetObjectItem(e, "dur")->valuedouble;
        g_assert_cmpfloat(ts, >=, 0.0);
        g_assert_cmpfloat(dur, >=, 0.0);
        g_assert_cmpfloat(ts + dur, <=, total_us + 1e-3);
        if (cJSON_GetObjectItem(cJSON_GetObjectItem(e, "args"), "recv_peer")->valueint >= 0)
            received[pid] = TRUE;
    }
    g_assert_cmpint(n_steps, >=, 10); /* 5 sends and 5 receives at least */
    assert_spans(root, 6, "broadcast");
    for (int rank = 1; rank < 6; rank++)
        g_assert_true(received[rank]);
    g_assert_false(received[0]);
    g_assert_nonnull(strstr(r.out, "Timeline: "));
    g_remove(path);
    g_rmdir(dir);
}

/* Grouped send/recv runs a channel's sends and receives apart: the timeline gives each its
 * own thread (receives on odd threads), and the steps of one thread never overlap, as Chrome's
 * format needs. */
static void
test_explain_timeline_p2p(void)
{
    g_autofree char *dir = g_dir_make_tmp("collsim-explain-XXXXXX", NULL);
    g_autofree char *path = g_build_filename(dir, "timeline.json", NULL);
    const char *const args[] = { "explain", "--topo", "dgx-h100x8", "--op", "alltoall",
                                 "--size",  "4M",     "--timeline", path,   NULL };
    g_auto(CsTestRun) r = cs_test_run_collsim(NULL, args);
    g_assert_cmpint(r.status, ==, 0);

    g_autofree char *text = NULL;
    g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
    g_autoptr(cJSON) root = cJSON_Parse(text);
    g_assert_nonnull(root);
    /* Per (pid, tid): the latest end so far; events come in no particular order, so sort. */
    g_autoptr(GArray) spans = g_array_new(FALSE, FALSE, sizeof(double) * 4);
    gboolean named_receives = FALSE;
    cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(root, "traceEvents"))
    {
        const char *ph = cJSON_GetObjectItem(e, "ph")->valuestring;
        if (strcmp(ph, "M") == 0) {
            const char *name
                = cJSON_GetObjectItem(cJSON_GetObjectItem(e, "args"), "name")->valuestring;
            named_receives = named_receives || strstr(name, "receives") != NULL;
            continue;
        }
        if (strcmp(ph, "X") != 0 || is_span(e))
            continue; /* the flows and spans: assert_flows(), assert_spans() */
        int tid = cJSON_GetObjectItem(e, "tid")->valueint;
        gboolean recv
            = cJSON_GetObjectItem(cJSON_GetObjectItem(e, "args"), "recv_peer")->valueint >= 0;
        g_assert_cmpint(tid % 2, ==, recv ? 1 : 0);
        double span[4] = { cJSON_GetObjectItem(e, "pid")->valuedouble, tid,
                           cJSON_GetObjectItem(e, "ts")->valuedouble,
                           cJSON_GetObjectItem(e, "ts")->valuedouble
                               + cJSON_GetObjectItem(e, "dur")->valuedouble };
        g_array_append_val(spans, span);
    }
    g_assert_true(named_receives);
    g_assert_cmpuint(spans->len, >, 0);
    g_array_sort(spans, compare_spans);
    for (guint i = 1; i < spans->len; i++) {
        const double *a = &g_array_index(spans, double, 4 * (i - 1));
        const double *b = &g_array_index(spans, double, 4 * i);
        if (a[0] == b[0] && a[1] == b[1])
            g_assert_cmpfloat(b[2], >=, a[3] - 1e-6);
    }
    assert_flows(root);
    assert_spans(root, 8, "alltoall");
    g_remove(path);
    g_rmdir(dir);
}

/* Setup: ring all-reduce of 1 MiB on the 4 x H100 box: every step of every rank (one
 * thread per channel). Expectation: assert_flows(). */
static void
test_explain_timeline_flows(void)
{
    g_autofree char *dir = g_dir_make_tmp("collsim-explain-XXXXXX", NULL);
    g_autofree char *path = g_build_filename(dir, "timeline.json", NULL);
    const char *const args[]
        = { "explain", "--topo", "dgx-h100x4", "--op",       "allreduce", "--algo",
            "ring",    "--size", "1M",         "--timeline", path,        NULL };
    g_auto(CsTestRun) r = cs_test_run_collsim(NULL, args);
    g_assert_cmpint(r.status, ==, 0);
    g_autofree char *text = NULL;
    g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
    g_autoptr(cJSON) root = cJSON_Parse(text);
    g_assert_nonnull(root);
    assert_flows(root);
    assert_spans(root, 4, "allreduce");
    g_remove(path);
    g_rmdir(dir);
}

/* The time_us column of the CSV row of @size in @csv (collsim run --format csv). */
static double
csv_time_us(const char *csv, gint64 size)
{
    g_auto(GStrv) lines = g_strsplit(csv, "\n", -1);
    g_auto(GStrv) header = g_strsplit(lines[0], ",", -1);
    guint col = 0;
    while (header[col] != NULL && strcmp(header[col], "time_us") != 0)
        col++;
    g_assert_nonnull(header[col]);
    for (guint i = 1; lines[i] != NULL; i++) {
        g_auto(GStrv) f = g_strsplit(lines[i], ",", -1);
        if (g_strv_length(f) > col && g_ascii_strtoll(f[1], NULL, 10) == size)
            return g_ascii_strtod(f[col], NULL);
    }
    g_assert_not_reached();
    return 0.0;
}

/* The latest end of the "collective" spans of a timeline. */
static double
timeline_end_us(const cJSON *root)
{
    double end = -1.0;
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(root, "traceEvents"))
    {
        const cJSON *cat = cJSON_GetObjectItem(e, "cat");
        if (cat != NULL && strcmp(cat->valuestring, "collective") == 0)
            end = MAX(end, cJSON_GetObjectItem(e, "dur")->valuedouble);
    }
    return end;
}

/* Setup: collsim run on the 4 x H100 box, 1 KiB .. 1 MiB simulated whole (--exact), with
 * --timeline, then with --timeline-size 64K.
 * Expectation: the timeline of the largest size, then of 64 KiB: steps, flows, spans and
 * link counters as explain writes them (assert_flows, assert_spans, assert_link_counters), the last
 * GPU's collective ending at the table's time for that size (to the CSV's 1e-6 us); the table is
 * printed as without it. */
static void
test_run_timeline(void)
{
    g_autofree char *dir = g_dir_make_tmp("collsim-run-XXXXXX", NULL);
    g_autofree char *path = g_build_filename(dir, "timeline.json", NULL);
    g_autoptr(CsTopo) topo = cs_test_load_topo("dgx-h100x4");
    const char *const plain[]
        = { "--topo", "dgx-h100x4", "-b", "1K", "-e", "1M", "--exact", "--format", "csv", NULL };
    g_auto(CsTestRun) p = cs_test_run_collsim(NULL, plain);
    g_assert_cmpint(p.status, ==, 0);
    const char *sizes[] = { NULL, "64K" };
    const gint64 bytes[] = { 1048576, 65536 };
    for (gsize k = 0; k < G_N_ELEMENTS(sizes); k++) {
        const char *const args[]
            = { "--topo", "dgx-h100x4", "-b",      "1K",
                "-e",     "1M",         "--exact", "--format",
                "csv",    "--timeline", path,      sizes[k] != NULL ? "--timeline-size" : NULL,
                sizes[k], NULL };
        g_auto(CsTestRun) r = cs_test_run_collsim(NULL, args);
        g_assert_cmpint(r.status, ==, 0);
        g_assert_cmpstr(r.out, ==, p.out);
        g_autofree char *text = NULL;
        g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
        g_autoptr(cJSON) root = cJSON_Parse(text);
        g_assert_nonnull(root);
        assert_flows(root);
        assert_spans(root, 4, "allreduce");
        g_hash_table_unref(assert_link_counters(root, topo, 4));
        g_assert_cmpfloat_with_epsilon(timeline_end_us(root), csv_time_us(p.out, bytes[k]), 2e-6);
        g_remove(path);
    }
    /* Without the engine, or a size without the file: usage errors, nothing written. */
    const char *const nccl[]
        = { "--topo", "dgx-h100x4", "--model", "nccl", "--timeline", path, NULL };
    g_auto(CsTestRun) n = cs_test_run_collsim(NULL, nccl);
    g_assert_cmpint(n.status, ==, 2);
    g_assert_nonnull(strstr(n.err, "--timeline shows the engine's steps"));
    const char *const lone[] = { "--topo", "dgx-h100x4", "--timeline-size", "1M", NULL };
    g_auto(CsTestRun) l = cs_test_run_collsim(NULL, lone);
    g_assert_cmpint(l.status, ==, 2);
    g_assert_nonnull(strstr(l.err, "--timeline-size needs --timeline FILE"));
    g_assert_false(g_file_test(path, G_FILE_TEST_EXISTS));
    g_rmdir(dir);
}

/* The split adds up to the time, and a closed form sits beside it. */
static void
test_explain_split(void)
{
    const char *const args[]
        = { "explain", "--op", "allreduce", "--algo", "ring", "--size", "64M", NULL };
    g_auto(CsTestRun) r = cs_test_run_collsim(NULL, args);
    g_assert_cmpint(r.status, ==, 0);
    double total = predicted_time_us(r.out);
    double sum = 0.0;
    const char *const parts[] = { "\n  alpha ", "\n  beta ", "\n  gamma ", "\n  overhead " };
    for (gsize i = 0; i < G_N_ELEMENTS(parts); i++) {
        const char *p = strstr(r.out, parts[i]);
        g_assert_nonnull(p);
        sum += g_ascii_strtod(p + strlen(parts[i]), NULL);
    }
    g_assert_cmpfloat_with_epsilon(sum, total, 0.005);
    g_assert_nonnull(strstr(r.out, "Textbook closed form"));
    g_assert_nonnull(strstr(r.out, "Round 1: every GPU r"));
}

/* ---- Errors and help ---- */

typedef struct {
    const char *args[10];
    const char *message; /* the first stderr line */
} BadCase;

static void
test_usage_errors(void)
{
    g_test_summary("Bad flags exit 2 with one line naming the flag, then the --help hint; "
                   "nothing goes to stdout.");
    static const BadCase cases[] = {
        { { "--op", "allsum", NULL },
          "collsim: --op: \"allsum\" is not a collective (known: broadcast, reduce, allreduce, "
          "allgather, reducescatter, scatter, gather, alltoall, sendrecv)" },
        { { "-b", "16", "-e", "8", NULL }, "collsim: -b 16 is larger than -e 8" },
        { { "--format", "xml", NULL },
          "collsim: --format: \"xml\" is not a format (table, json or csv)" },
        { { "--ranks", "9", NULL }, "collsim: --ranks 9: dgx-h100x4 has only 4 ranks" },
        { { "-g", "3", NULL },
          "collsim: -g 3: GPUs per thread must divide the 4 ranks (ranks = processes x threads "
          "x GPUs, as in nccl-tests)" },
        { { "--op", "broadcast", "-r", "4", NULL },
          "collsim: -r 4: the root must be a rank in 0..3" },
        { { "-e", "1M", "allreduce", NULL },
          "collsim: unexpected argument \"allreduce\" (options only; the collective is --op)" },
        { { "--layout", "wide", NULL },
          "collsim: --layout: \"wide\" is not a layout (classic or current)" },
        { { "run", "-e", "8X", NULL },
          "collsim run: -e: \"8X\" is not a size (expected e.g. \"8\", \"8K\", \"8 MiB\")" },
        { { "explain", "--ranks", "5", NULL },
          "collsim explain: --ranks 5: dgx-h100x4 has only 4 ranks" },
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_auto(CsTestRun) r = cs_test_run_collsim(NULL, cases[i].args);
        const char *prog = strcmp(cases[i].args[0], "run") == 0       ? "collsim run"
                           : strcmp(cases[i].args[0], "explain") == 0 ? "collsim explain"
                                                                      : "collsim";
        g_autofree char *want = g_strdup_printf("%s\nTry '%s --help'\n", cases[i].message, prog);
        g_assert_cmpstr(r.out, ==, "");
        g_assert_cmpstr(r.err, ==, want);
        g_assert_cmpint(r.status, ==, 2);
    }
}

/* Unknown names that come from other modules' lists: the flag is named, exit 2. */
static void
test_unknown_names(void)
{
    const char *const algo[] = { "--algo", "zigzag", NULL };
    const char *const model[] = { "--model", "fluid", NULL };
    const char *const proto[] = { "--proto", "LL256", NULL };
    const char *const topo[] = { "--topo", "no-such-machine", NULL };
    const char *const *cases[] = { algo, model, proto, topo };
    const char *const prefixes[]
        = { "collsim: --algo: ", "collsim: --model: ", "collsim: --proto: ", "" };
    /* Flag errors are usage errors (a --help hint follows); a missing topology is not. */
    const guint n_lines[] = { 2, 2, 2, 1 };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_auto(CsTestRun) r = cs_test_run_collsim(NULL, cases[i]);
        g_test_message("%s", r.err);
        g_assert_cmpint(r.status, ==, 2);
        g_assert_cmpstr(r.out, ==, "");
        g_assert_true(g_str_has_prefix(r.err, prefixes[i]));
        g_auto(GStrv) lines = g_strsplit(r.err, "\n", -1);
        g_assert_cmpuint(g_strv_length(lines), ==, n_lines[i] + 1);
    }
}

static void
test_help(void)
{
    const char *const run_help[] = { "run", "--help", NULL };
    g_auto(CsTestRun) r = cs_test_run_collsim(NULL, run_help);
    g_assert_cmpint(r.status, ==, 0);
    const char *const flags[] = { "--topo=T",
                                  "--op=OP",
                                  "-b, --minbytes=SIZE",
                                  "-e, --maxbytes=SIZE",
                                  "-f, --stepfactor=F",
                                  "-i, --stepbytes=SIZE",
                                  "-d, --datatype=TYPE",
                                  "-o, --redop=OP",
                                  "-r, --root=R",
                                  "-g, --ngpus=G",
                                  "--algo=A",
                                  "--proto=P",
                                  "--channels=N",
                                  "--all",
                                  "--model=M",
                                  "--format=F",
                                  "--ranks=N",
                                  "--layout=L",
                                  "--any-algorithm" };
    for (gsize i = 0; i < G_N_ELEMENTS(flags); i++)
        g_assert_nonnull(strstr(r.out, flags[i]));
    g_assert_nonnull(strstr(r.out, "8 B to 8 GiB"));

    const char *const explain_help[] = { "explain", "--help", NULL };
    g_auto(CsTestRun) e = cs_test_run_collsim(NULL, explain_help);
    g_assert_cmpint(e.status, ==, 0);
    g_assert_nonnull(strstr(e.out, "--timeline=FILE"));
    g_assert_nonnull(strstr(e.out, "--size=S"));
}

/* ---- NCCL's own cost model ---- */

/* Setup: dgx-h100x8 (8 GPUs, one node of NVSwitch), ring/Simple all-reduce of 8 bytes under
 * NCCL 2.28's constants. Expectation, from tuning.cc's formula: latency = base 8.4 us +
 * (nsteps = 2(P-1) = 14) x NVLink ring/Simple hop 3.4 us = 56.0 us; the bandwidth term of 8
 * bytes is below a nanosecond, so the printed time is 56.00 us. */
static void
test_nccl_model(void)
{
    const char *args[]
        = { "--topo", "dgx-h100x8", "--model", "nccl:2.28", "--algo", "ring", "--proto",
            "Simple", "-b",         "8",       "-e",        "8",      NULL };
    g_auto(CsTestRun) r = cs_test_run_collsim(NULL, args);
    g_assert_cmpint(r.status, ==, 0);
    g_autoptr(CsTrace) trace = trace_of(&r);
    g_assert_cmpuint(cs_trace_n_rows(trace), ==, 1);
    g_assert_cmpfloat_with_epsilon(cs_trace_row(trace, 0)->out_of_place.time_us, 56.0, 0.005);

    /* An algorithm NCCL does not have has no cost under its model. */
    const char *bad[] = { "--topo", "dgx-h100x8", "--model", "nccl", "--algo", "mst", NULL };
    g_auto(CsTestRun) b = cs_test_run_collsim(NULL, bad);
    g_assert_cmpint(b.status, ==, 2);
    g_assert_nonnull(strstr(b.err, "not one of NCCL's algorithms"));
}

/* --verify checks the schedule behind each row. Setup: ring all-reduce on dgx-h100x4 (4 ranks)
 * at 8 B and 32 KiB. Expectation: one "verified" line per row, each naming 6 rounds, the
 * 2(P-1) steps of a ring all-reduce on 4 ranks. */
static void
test_verify(void)
{
    const char *args[] = { "--topo", "dgx-h100x4", "--algo", "ring", "-b",       "8",
                           "-e",     "32K",        "-f",     "4096", "--verify", NULL };
    g_auto(CsTestRun) r = cs_test_run_collsim(NULL, args);
    g_assert_cmpint(r.status, ==, 0);
    g_auto(GStrv) lines = g_strsplit(r.out, "\n", -1);
    int verified = 0;
    for (int i = 0; lines[i] != NULL; i++) {
        if (g_str_has_prefix(lines[i], "# verified")) {
            verified++;
            g_assert_nonnull(strstr(lines[i], "computes allreduce (6 rounds"));
        }
    }
    g_assert_cmpint(verified, ==, 2);

    const char *bad[] = { "--model", "nccl", "--verify", NULL };
    g_auto(CsTestRun) b = cs_test_run_collsim(NULL, bad);
    g_assert_cmpint(b.status, ==, 2);
}

static void
test_bracketed(void)
{
    g_test_summary("A ring all-reduce of 16 KiB on 3 channels of 8 GPUs (1,366 floats a channel, "
                   "no multiple of 8) is bracketed: its winners row is marked ~ with a footnote, "
                   "JSON says bracketed with the low end, CSV's last column is 1; --whole "
                   "replays it as it is cut, unmarked, at the same time here.");
    const char *base[]
        = { "--topo", "dgx-h100x8", "--algo", "ring", "--proto", "LL128",  "--channels",
            "3",      "-b",         "16K",    "-e",   "16K",     "--quiet" };
    g_autoptr(GPtrArray) args = g_ptr_array_new();
    for (gsize i = 0; i < G_N_ELEMENTS(base); i++)
        g_ptr_array_add(args, (gpointer)base[i]);
    g_ptr_array_add(args, NULL);
    g_auto(CsTestRun) table = cs_test_run_collsim(NULL, (const char *const *)args->pdata);
    g_assert_cmpint(table.status, ==, 0);
    g_assert_nonnull(strstr(table.out, "36.817        - ~\n"));
    g_assert_nonnull(strstr(table.out, "\n# ~ bracketed: one period of ranks replayed twice"));

    g_ptr_array_index(args, args->len - 1) = (gpointer) "--whole";
    g_ptr_array_add(args, NULL);
    g_auto(CsTestRun) whole = cs_test_run_collsim(NULL, (const char *const *)args->pdata);
    g_assert_cmpint(whole.status, ==, 0);
    g_assert_nonnull(strstr(whole.out, "36.817        -\n"));
    g_assert_null(strstr(whole.out, "bracketed"));

    g_ptr_array_index(args, args->len - 2) = (gpointer) "--format=json";
    g_auto(CsTestRun) json = cs_test_run_collsim(NULL, (const char *const *)args->pdata);
    g_assert_cmpint(json.status, ==, 0);
    g_assert_nonnull(strstr(json.out, "\"bracketed\":\ttrue"));
    g_assert_nonnull(strstr(json.out, "\"bracket_low_us\":\t"));

    g_ptr_array_index(args, args->len - 2) = (gpointer) "--format=csv";
    g_auto(CsTestRun) csv = cs_test_run_collsim(NULL, (const char *const *)args->pdata);
    g_assert_cmpint(csv.status, ==, 0);
    g_assert_true(g_str_has_suffix(csv.out, ",0,1\n"));
}

/* Setup: a memory budget of 16 MiB (COLLSIM_MEMORY_LIMIT), under which NVLS, NCCL's pick on
 * dgx-h100x8, cannot be simulated at 256 MiB.
 * Expectation: the sweep's other sizes still come out, the missing one is a note and a
 * warning, exit 0 (the whole sweep failed with one line before); a sweep of that size alone
 * fails with its reason, exit 2, said once. */
static void
test_sweep_unpredicted_size(void)
{
    g_setenv("COLLSIM_MEMORY_LIMIT", "16M", TRUE);
    const char *const sweep[]
        = { "--topo", "dgx-h100x8", "--op", "allreduce", "-b", "64M", "-e", "256M", NULL };
    g_auto(CsTestRun) r = cs_test_run_collsim(NULL, sweep);
    g_assert_cmpint(r.status, ==, 0);
    g_assert_nonnull(strstr(r.out, "\n    67108864 "));
    g_assert_nonnull(strstr(r.out, "\n   134217728 "));
    g_assert_null(strstr(r.out, "\n   268435456 "));
    g_assert_nonnull(strstr(r.out, "# note: 268435456 bytes: not predicted: "));
    g_assert_nonnull(strstr(r.err, "warning: allreduce of 268435456 bytes: not predicted: "));
    g_assert_nonnull(strstr(r.err, "beyond the memory budget (COLLSIM_MEMORY_LIMIT=16M)"));
    const char *const alone[]
        = { "--topo", "dgx-h100x8", "--op", "allreduce", "-b", "256M", "-e", "256M", NULL };
    g_auto(CsTestRun) a = cs_test_run_collsim(NULL, alone);
    g_unsetenv("COLLSIM_MEMORY_LIMIT");
    g_assert_cmpint(a.status, ==, 2);
    g_assert_null(strstr(a.err, "warning"));
    g_assert_nonnull(strstr(a.err, "collsim: allreduce of 268435456 bytes: "));
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/cli-run/golden/default", test_golden_default);
    g_test_add_func("/cli-run/sweep/unpredicted-size", test_sweep_unpredicted_size);
    g_test_add_func("/cli-run/pick/nccl", test_pick_nccl);
    g_test_add_func("/cli-run/golden/seed-h100x4-g4", test_golden_seed_h100);
    g_test_add_func("/cli-run/golden/explain-mst-broadcast-6", test_golden_explain_mst);
    g_test_add_func("/cli-run/table/is-trace", test_table_is_trace);
    g_test_add_func("/cli-run/ranks/subset-of-machine", test_ranks_subset);
    g_test_add_func("/cli-run/table/columns-per-op", test_columns_per_op);
    g_test_add_func("/cli-run/sweep/increment", test_sweep_increment);
    g_test_add_func("/cli-run/gpus-per-thread", test_gpus_per_thread);
    g_test_add_func("/cli-run/nccl-tests-flags", test_nccl_tests_flags);
    g_test_add_func("/cli-run/formats-agree", test_formats_agree);
    g_test_add_func("/cli-run/all-blocks", test_all_blocks);
    g_test_add_func("/cli-run/any-algorithm", test_any_algorithm);
    g_test_add_func("/cli-run/explain/timeline", test_explain_timeline);
    g_test_add_func("/cli-run/explain/timeline-p2p", test_explain_timeline_p2p);
    g_test_add_func("/cli-run/explain/timeline-flows", test_explain_timeline_flows);
    g_test_add_func("/cli-run/run/timeline", test_run_timeline);
    g_test_add_func("/cli-run/explain/timeline-links", test_explain_timeline_links);
    g_test_add_func("/cli-run/explain/timeline-nvls", test_explain_timeline_nvls);
    g_test_add_func("/cli-run/explain/timeline-cluster", test_explain_timeline_cluster);
    g_test_add_func("/cli-run/explain/split", test_explain_split);
    g_test_add_func("/cli-run/textbook", test_textbook);
    g_test_add_func("/cli-run/select/textbook", test_select_textbook);
    g_test_add_func("/cli-run/validate/csv", test_validate_csv);
    g_test_add_func("/cli-run/calibrate/csv", test_calibrate_csv);
    g_test_add_func("/cli-run/errors/usage", test_usage_errors);
    g_test_add_func("/cli-run/errors/unknown-names", test_unknown_names);
    g_test_add_func("/cli-run/help", test_help);
    g_test_add_func("/cli-run/progress", test_progress);
    g_test_add_func("/cli-run/model/nccl", test_nccl_model);
    g_test_add_func("/cli-run/pick/rccl-default", test_pick_rccl_default);
    g_test_add_func("/cli-run/verify", test_verify);
    g_test_add_func("/cli-run/bracketed", test_bracketed);
    return g_test_run();
}
