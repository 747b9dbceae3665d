// SPDX-License-Identifier: MIT
/* Tests of PyTorch profiler (Kineto) traces in `collsim workload import` (src/base/kineto.c):
 * real excerpts of a public trace (tests/data/kineto/, SOURCE.md says where from) read on
 * their NCCL kernels and on their record_param_comms CPU ops, bytes as the log import counts
 * them, steps from ProfilerStep# spans, groups from process groups, `collsim plan` on the
 * result, and bad traces: one line naming the file, line and column, exit 2. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <glib.h>
#include <glib/gstdio.h>

#include "base/json_util.h"
#include "base/kineto.h"
#include "test-workload-util.h"

static char *scratch;

static char *
data_path(const char *name)
{
    return g_test_build_filename(G_TEST_DIST, "data", "kineto", name, NULL);
}

static char *
write_scratch(const char *name, const char *text)
{
    return cs_test_write_file(scratch, name, text);
}

/* Fails with exit 2, nothing on stdout, and stderr exactly @want (one line). */
static void
import_fails_exactly(const char *const *args, const char *want)
{
    g_auto(CsTestRun) r = cs_test_run_collsim("workload", args);
    g_assert_cmpint(r.status, ==, 2);
    g_assert_cmpstr(r.out, ==, "");
    g_assert_cmpstr(r.err, ==, want);
}

/* The HTA trace's one step, on either record: per ProfilerStep#, two broadcasts (DDP's
 * initial sync of 53120 Float and 53 Long elements) and five gradient-bucket all-reduces of
 * Float, each on process group "0" of ranks [0, 1]. */
static void
assert_hta_step(const cJSON *w)
{
    const cJSON *layout = cs_test_member(w, "layout");
    g_assert_cmpint(cs_test_member(layout, "tp")->valueint, ==, 1);
    g_assert_cmpint(cs_test_member(layout, "dp")->valueint, ==, 2);
    g_assert_cmpint(cs_test_member(layout, "pp")->valueint, ==, 1);
    g_assert_cmpint(cJSON_GetArraySize(cs_test_member(w, "phases")), ==, 1);
    g_assert_cmpstr(cs_test_member(cs_test_at(cs_test_member(w, "phases"), 0), "name")->valuestring,
                    ==, "world comm 1");
    g_assert_cmpint(cJSON_GetArraySize(
                        cs_test_member(cs_test_at(cs_test_member(w, "phases"), 0), "collectives")),
                    ==, 7);
    cs_test_assert_coll(w, 0, 0, "broadcast", "212480", 1, "world");   /* 53120 x 4 */
    cs_test_assert_coll(w, 0, 1, "broadcast", "424", 1, "world");      /* 53 Long x 8 */
    cs_test_assert_coll(w, 0, 2, "allreduce", "8196000", 1, "world");  /* 2049000 x 4 */
    cs_test_assert_coll(w, 0, 3, "allreduce", "31502336", 1, "world"); /* 7875584 x 4 */
    cs_test_assert_coll(w, 0, 4, "allreduce", "26255360", 1, "world"); /* 6563840 x 4 */
    cs_test_assert_coll(w, 0, 5, "allreduce", "26550272", 1, "world"); /* 6637568 x 4 */
    cs_test_assert_coll(w, 0, 6, "allreduce", "9724160", 1, "world");  /* 2431040 x 4 */
}

/* ---- Real excerpts ---- */

static void
test_real_kernels(void)
{
    g_test_summary("HTA's nccl_data.json (2-rank DDP, 3 profiled steps): the 21 NCCL kernels' "
                   "args give 7 collectives per step of the 2-rank world; the other kernels' "
                   "busy time is reported, not written as compute");
    g_autofree char *trace = data_path("hta-ddp-2gpu-kernels.json");
    g_autofree char *err = NULL;
    const char *args[] = { "import", trace, NULL };
    g_autoptr(cJSON) w = cs_test_import_ok(args, &err);
    assert_hta_step(w);
    g_assert_null(
        cJSON_GetObjectItemCaseSensitive(cs_test_at(cs_test_member(w, "phases"), 0), "compute"));
    g_assert_nonnull(strstr(err, "28 events; 21 collectives of rank 0 on NCCL kernels; 3 "
                                 "ProfilerStep# spans: 3 steps\n"));
    g_assert_nonnull(strstr(err, "process group \"0\" (2 ranks [0, 1], collectives 1 to 21, 21 "
                                 "calls): world comm 1\n"));
    /* The 4 other kernels: 3.744 + 3.552 + 2.464 + 461.914 us, none overlapping, over 3
     * steps = 157.2 us. */
    g_assert_nonnull(strstr(err, "other GPU kernels busy 157.2 us per step"));
    const char *notes = cs_test_member(w, "notes")->valuestring;
    g_assert_nonnull(strstr(notes, "busy 157.2 us per step"));

    /* --steps overrides the ProfilerStep# spans: 21 calls in one step. */
    const char *one[] = { "import", "--steps", "1", trace, NULL };
    g_autoptr(cJSON) w1 = cs_test_import_ok(one, NULL);
    cs_test_assert_coll(w1, 0, 2, "allreduce", "8196000", 3, "world");
}

static void
test_real_cpu_ops(void)
{
    g_test_summary("The same trace's record_param_comms CPU ops give the same workload; its 6 "
                   "'wait' records (a 1-rank group, no process group name) are left out");
    g_autofree char *trace = data_path("hta-ddp-2gpu-cpu-ops.json");
    g_autofree char *err = NULL;
    const char *args[] = { "import", trace, NULL };
    g_autoptr(cJSON) w = cs_test_import_ok(args, &err);
    assert_hta_step(w);
    g_assert_nonnull(strstr(err, "27 collectives of rank 0 on record_param_comms CPU ops"));
    g_assert_nonnull(strstr(err, "left out 6 wait (no such operation in a workload)"));
}

static void
test_real_old_format(void)
{
    g_test_summary("HTA's ns_resolution trace (V100, 1 rank, older format): the group is "
                   "\"Process Group ID\" 0, read as process group \"0\"; one ProfilerStep#, "
                   "one step; the 1-rank world is the world group, as for a log");
    g_autofree char *trace = data_path("hta-v100-1gpu-cpu-ops.json");
    g_autofree char *err = NULL;
    const char *args[] = { "import", trace, NULL };
    g_autoptr(cJSON) w = cs_test_import_ok(args, &err);
    g_assert_cmpint(cs_test_member(cs_test_member(w, "layout"), "dp")->valueint, ==, 1);
    g_assert_cmpint(cJSON_GetArraySize(
                        cs_test_member(cs_test_at(cs_test_member(w, "phases"), 0), "collectives")),
                    ==, 7);
    cs_test_assert_coll(w, 0, 0, "broadcast", "212480", 1, "world");
    cs_test_assert_coll(w, 0, 6, "allreduce", "9724160", 1, "world");
    g_assert_nonnull(strstr(err, "10 events; 9 collectives of rank 0 on record_param_comms CPU "
                                 "ops; 1 ProfilerStep# spans: 1 step\n"));
    g_assert_nonnull(strstr(err, "process group \"0\" (1 ranks [0], collectives 1 to 9, 9 "
                                 "calls): world comm 1\n"));
    g_assert_nonnull(strstr(err, "left out 2 wait"));
}

static void
test_plan_takes_it(void)
{
    g_test_summary("`collsim plan` predicts the imported trace's all-reduces on 2 GPUs of a "
                   "DGX H100 with the trace's bytes");
    g_autofree char *trace = data_path("hta-ddp-2gpu-kernels.json");
    g_autofree char *out = g_build_filename(scratch, "hta.json", NULL);
    const char *args[] = { "import", "-o", out, trace, NULL };
    {
        g_auto(CsTestRun) r = cs_test_run_collsim("workload", args);
        g_assert_cmpint(r.status, ==, 0);
    }
    const char *plan[] = { "--workload", out, "--topo", "dgx-h100x8", "--format", "json", NULL };
    g_auto(CsTestRun) r = cs_test_run_collsim("plan", plan);
    g_assert_cmpstr(r.err, ==, "");
    g_assert_cmpint(r.status, ==, 0);
    g_autoptr(cJSON) root = cJSON_Parse(r.out);
    g_assert_nonnull(root);
    const cJSON *phase = cs_test_at(
        cs_test_member(cs_test_at(cs_test_member(root, "candidates"), 0), "phases"), 0);
    g_assert_cmpint(cJSON_GetArraySize(cs_test_member(phase, "collectives")), ==, 7);
    double sum = 0;
    for (int i = 0; i < 7; i++) {
        const cJSON *c = cs_test_at(cs_test_member(phase, "collectives"), i);
        g_assert_cmpint(cs_test_member(c, "ranks")->valueint, ==, 2);
        g_assert_cmpfloat(cs_test_member(c, "time_us")->valuedouble, >, 0);
        sum += cs_test_member(c, "time_us")->valuedouble * cs_test_member(c, "count")->valuedouble;
    }
    const cJSON *c3 = cs_test_at(cs_test_member(phase, "collectives"), 3);
    g_assert_cmpstr(cs_test_member(c3, "op")->valuestring, ==, "allreduce");
    g_assert_cmpfloat(cs_test_member(c3, "bytes")->valuedouble, ==, 31502336);
    g_assert_cmpfloat_with_epsilon(cs_test_member(phase, "comm_us")->valuedouble, sum, 1e-6);
}

/* ---- Written traces: the mapping of each collective ---- */

/* A trace of rank @rank holding @events (comma-separated event objects). (transfer full) */
static char *
trace_text(const char *dist, const char *events)
{
    return g_strdup_printf("{\"schemaVersion\": 1, %s\"traceEvents\": [\n%s\n]}\n",
                           dist != NULL ? dist : "", events);
}

/* One NCCL kernel event carrying PyTorch's args. */
static char *
kernel(const char *coll, long in, long out, int group, const char *dtype, const char *pg,
       const char *ranks)
{
    return g_strdup_printf(
        "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclDevKernel_x\", \"ts\": 1, \"dur\": "
        "2, \"args\": {\"Collective name\": \"%s\", \"In msg nelems\": %ld, \"Out msg nelems\": "
        "%ld, \"Group size\": %d, \"dtype\": \"%s\", \"Process Group Name\": \"%s\", \"Process "
        "Group Ranks\": \"%s\"}}",
        coll, in, out, group, dtype, pg, ranks);
}

static void
test_mapping(void)
{
    g_test_summary("Written from ProcessGroupNCCL.cpp's records: a TP 4 x DP 2 rank. "
                   "_reduce_scatter_base counts its output (one rank's share), allgather its "
                   "input, all_to_allv its input over the group (per peer), so bytes match "
                   "NCCL's count x size x ranks as the log import writes them; process groups "
                   "map to tp, dp and world by size; distributedInfo gives the world");
    g_autofree char *k1 = kernel("allreduce", 1024, 1024, 4, "BFloat16", "1", "[0, 1, 2, 3]");
    g_autofree char *k2
        = kernel("_reduce_scatter_base", 4000, 2000, 2, "Float", "2", "[0, 4]"); /* 2000 x 4 x 2 */
    g_autofree char *k3 = kernel("_allgather_base", 2000, 4000, 2, "Float", "2", "[0, 4]");
    /* ProcessGroupNCCL's list all-gather records "all_gather": the same call, joined. */
    g_autofree char *k3b = kernel("all_gather", 2000, 4000, 2, "Float", "2", "[0, 4]");
    g_autofree char *k4 = kernel("all_to_allv", 4096, 4096, 4, "Half", "1", "[0, 1, 2, 3]");
    g_autofree char *k5 = kernel("send", 10, 10, 2, "Float", "3", "[0, 1]");
    g_autofree char *k6 = kernel("allreduce", 1, 1, 8, "Double", "0", "[0, 1, 2, 3, 4, 5, 6, 7]");
    g_autofree char *events = g_strjoin(",\n", k1, k2, k3, k3b, k4, k5, k6, NULL);
    g_autofree char *text
        = trace_text("\"distributedInfo\": {\"rank\": 0, \"world_size\": 8}, ", events);
    g_autofree char *path = write_scratch("tp4dp2.json", text);
    g_autofree char *err = NULL;
    const char *args[] = { "import", path, NULL };
    g_autoptr(cJSON) w = cs_test_import_ok(args, &err);
    const cJSON *layout = cs_test_member(w, "layout");
    g_assert_cmpint(cs_test_member(layout, "tp")->valueint, ==, 4);
    g_assert_cmpint(cs_test_member(layout, "dp")->valueint, ==, 2);
    g_assert_cmpint(cs_test_member(layout, "pp")->valueint, ==, 1);
    g_assert_cmpint(cJSON_GetArraySize(cs_test_member(w, "phases")), ==, 3);
    cs_test_assert_coll(w, 0, 0, "allreduce", "2048", 1, "tp");      /* 1024 x 2 */
    cs_test_assert_coll(w, 0, 1, "alltoall", "8192", 1, "tp");       /* 4096 / 4 x 2 x 4 */
    cs_test_assert_coll(w, 1, 0, "reducescatter", "16000", 1, "dp"); /* 2000 x 4 x 2 */
    cs_test_assert_coll(w, 1, 1, "allgather", "16000", 2, "dp");     /* 2000 x 4 x 2 */
    cs_test_assert_coll(w, 2, 0, "allreduce", "8", 1, "world");      /* 1 x 8 */
    g_assert_nonnull(strstr(err, "left out 1 send"));
    g_assert_nonnull(strstr(err, "process group \"2\" (2 ranks [0, 4], collectives 2 to 4, 3 "
                                 "calls): dp comm 1"));

    /* Without distributedInfo the world is the largest group (8), not the first one read. */
    g_autofree char *bare = trace_text(NULL, events);
    g_autofree char *bare_path = write_scratch("tp4dp2-bare.json", bare);
    const char *bare_args[] = { "import", bare_path, NULL };
    g_autoptr(cJSON) wb = cs_test_import_ok(bare_args, NULL);
    g_assert_cmpint(cs_test_member(cs_test_member(wb, "layout"), "tp")->valueint, ==, 4);
    g_assert_cmpint(cs_test_member(cs_test_member(wb, "layout"), "dp")->valueint, ==, 2);

    /* --group PG=G names a process group by its name. */
    const char *named[] = { "import", "--group", "2=tp", "--group", "1=dp", path, NULL };
    g_autoptr(cJSON) w2 = cs_test_import_ok(named, NULL);
    g_assert_cmpint(cs_test_member(cs_test_member(w2, "layout"), "tp")->valueint, ==, 2);
    g_assert_cmpint(cs_test_member(cs_test_member(w2, "layout"), "dp")->valueint, ==, 4);
    cs_test_assert_coll(w2, 0, 0, "allreduce", "2048", 1, "dp");
}

/* ---- Bad traces ---- */

static void
test_errors(void)
{
    g_test_summary("Bad traces: one line naming FILE:LINE:COL and what is wrong, exit 2, and "
                   "an existing -o file left as it was");
    g_autofree char *k = kernel("allreduce", 16, 16, 2, "Float", "0", "[0, 1]");
    struct {
        const char *name;
        char *text;
        const char *want; /* after "collsim workload import: PATH:" */
    } cases[] = {
        { "cut.json", g_strdup_printf("{\"traceEvents\": [\n%s,\n{\"ph\": \"X\", \"na", k),
          "3:1: traceEvents[1]: the file ends inside it (cut short?)" },
        { "no-events.json", g_strdup("{\"schemaVersion\": 1}\n"),
          "1:1: a JSON object without \"traceEvents\": not a PyTorch profiler trace" },
        { "not-array.json", g_strdup("{\"traceEvents\": 3}"),
          "1:17: '3' where traceEvents' array begins, not '['" },
        { "bad-json.json", g_strdup_printf("{\"traceEvents\": [\n%s,\n{\"ph\": X}\n]}", k),
          "3:8: traceEvents[1]: not valid JSON here" },
        { "nelems.json",
          g_strdup("{\"traceEvents\": [\n{\"cat\": \"kernel\", \"name\": \"ncclK\", \"args\": "
                   "{\"Collective name\": \"allreduce\", \"In msg nelems\": -5}}\n]}"),
          "2:1: traceEvents[0] (kernel \"ncclK\"): args.\"In msg nelems\" is -5, not a count of "
          "elements" },
        { "group.json",
          g_strdup("{\"traceEvents\": [\n{\"cat\": \"kernel\", \"name\": \"ncclK\", \"args\": "
                   "{\"Collective name\": \"allreduce\", \"In msg nelems\": 5, \"Out msg "
                   "nelems\": 5, \"dtype\": \"Float\"}}\n]}"),
          "2:1: traceEvents[0] (kernel \"ncclK\"): args.\"Group size\" is missing" },
        { "dtype.json",
          g_strdup("{\"traceEvents\": [\n{\"cat\": \"kernel\", \"name\": \"ncclK\", \"args\": "
                   "{\"Collective name\": \"allreduce\", \"In msg nelems\": 5, \"Out msg "
                   "nelems\": 5, \"Group size\": 2, \"dtype\": \"ComplexFloat\"}}\n]}"),
          "2:1: traceEvents[0] (kernel \"ncclK\"): dtype \"ComplexFloat\" has no NCCL datatype "
          "(Char, Byte, Bool, Int, Long, Half, Float, Double, BFloat16, Float8_e4m3fn, "
          "Float8_e5m2)" },
        { "not-object.json", g_strdup("{\"traceEvents\": [\n[1, 2]\n]}"),
          "2:1: traceEvents[0] is an array, not an event (an object)" },
        { "trailing.json", g_strdup_printf("{\"traceEvents\": [%s]}\n}", k),
          "2:1: text after the trace's object" },
        { "size-changed.json",
          g_strdup_printf("{\"traceEvents\": [\n%s,\n%s\n]}", k,
                          "{\"cat\": \"kernel\", \"name\": \"ncclK\", \"args\": {\"Collective "
                          "name\": \"allreduce\", \"In msg nelems\": 5, \"Out msg nelems\": 5, "
                          "\"Group size\": 4, \"dtype\": \"Float\", \"Process Group Name\": "
                          "\"0\"}}"),
          "3:1: traceEvents[1] (kernel \"ncclK\"): AllReduce of process group \"0\" of 4 ranks, "
          "which had 2 before (two runs in one trace?)" },
        { "empty-events.json", g_strdup("{\"traceEvents\": []}"), NULL },
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *path = write_scratch(cases[i].name, cases[i].text);
        g_free(cases[i].text);
        const char *args[] = { "import", path, NULL };
        g_autofree char *want
            = cases[i].want != NULL
                  ? g_strdup_printf("collsim workload import: %s:%s\n", path, cases[i].want)
                  : g_strdup_printf("collsim workload import: %s: no collective (an NCCL kernel "
                                    "or record_param_comms with a \"Collective name\") in the "
                                    "trace: profile with torch.profiler on a run that uses "
                                    "torch.distributed\n",
                                    path);
        import_fails_exactly(args, want);
    }

    /* A gzip'd trace is refused with what to do; an existing -o file is kept. */
    static const char gz[] = { 0x1f, (char)0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 0 };
    g_autofree char *gzpath = g_build_filename(scratch, "t.json.gz", NULL);
    g_assert_true(g_file_set_contents(gzpath, gz, sizeof(gz), NULL));
    g_autofree char *out = write_scratch("kept.json", "old contents\n");
    const char *args[] = { "import", "-o", out, gzpath, NULL };
    g_autofree char *want = g_strdup_printf(
        "collsim workload import: %s: gzip data: decompress it first (gunzip -k %s)\n", gzpath,
        gzpath);
    import_fails_exactly(args, want);
    g_autofree char *kept = NULL;
    g_assert_true(g_file_get_contents(out, &kept, NULL, NULL));
    g_assert_cmpstr(kept, ==, "old contents\n");
}

static void
test_deep_and_long(void)
{
    g_test_summary("A value nested deeper than 1000 levels, and one event past the 1 MiB an "
                   "event may have, are refused with their place, without parsing them");
    GString *deep = g_string_new("{\"traceEvents\": [\n{\"args\": ");
    for (int i = 0; i < 1200; i++)
        g_string_append_c(deep, '[');
    g_autofree char *deep_path = write_scratch("deep.json", deep->str);
    g_string_free(deep, TRUE);
    const char *args[] = { "import", deep_path, NULL };
    /* Line 2 is `{"args": ` (9 columns, the '{' level 1) and then '['s: the k-th, at column
     * 9 + k, opens level k + 1, so level 1001 opens at column 1009. */
    g_autofree char *want = g_strdup_printf(
        "collsim workload import: %s:2:1009: traceEvents[0]: nested deeper than 1000\n", deep_path);
    import_fails_exactly(args, want);

    GString *big = g_string_new("{\"traceEvents\": [\n{\"name\": \"");
    for (int i = 0; i < (1 << 20); i++)
        g_string_append_c(big, 'x');
    g_string_append(big, "\"}\n]}");
    g_autofree char *big_path = write_scratch("big.json", big->str);
    g_string_free(big, TRUE);
    const char *args2[] = { "import", big_path, NULL };
    g_autofree char *want2 = g_strdup_printf("collsim workload import: %s:2:1: traceEvents[0]: "
                                             "1048588 bytes, more than the 1 MiB one value may "
                                             "have\n",
                                             big_path);
    import_fails_exactly(args2, want2);
}

static void
test_size_cap(void)
{
    g_test_summary("A trace past the 2 GiB cap (a sparse file here) is refused by its size "
                   "before it is read");
    g_autofree char *path = g_build_filename(scratch, "huge.json", NULL);
    FILE *f = fopen(path, "wb");
    g_assert_nonnull(f);
    g_assert_cmpint(fputc('{', f), ==, '{');
    g_assert_cmpint(fseeko(f, (off_t)CS_KINETO_MAX_BYTES, SEEK_SET), ==, 0);
    g_assert_cmpint(fputc('}', f), ==, '}');
    g_assert_cmpint(fclose(f), ==, 0);
    const char *args[] = { "import", path, NULL };
    g_autofree char *want = g_strdup_printf(
        "collsim workload import: %s: a trace of 2.00 GiB, more than the 2 GiB collsim reads: "
        "profile fewer steps (torch.profiler.schedule's active=)\n",
        path);
    import_fails_exactly(args, want);
    g_unlink(path);
}

static void
test_detect(void)
{
    g_test_summary("A file whose first non-blank byte is '{' (or gzip's magic) is read as a "
                   "trace; an NCCL log is not");
    g_autofree char *t = write_scratch("t.json", "\n  {\"traceEvents\": []}");
    g_autofree char *l = write_scratch("l.log", "h:1:2 [0] NCCL INFO Bootstrap\n");
    g_assert_true(cs_kineto_looks_like_trace(t));
    g_assert_false(cs_kineto_looks_like_trace(l));
    g_assert_false(cs_kineto_looks_like_trace("-"));
    g_assert_false(cs_kineto_looks_like_trace("/nonexistent/t.json"));
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    scratch = g_dir_make_tmp("collsim-kineto-XXXXXX", NULL);
    g_assert_nonnull(scratch);
    g_test_add_func("/kineto/real/kernels", test_real_kernels);
    g_test_add_func("/kineto/real/cpu-ops", test_real_cpu_ops);
    g_test_add_func("/kineto/real/old-format", test_real_old_format);
    g_test_add_func("/kineto/real/plan-takes-it", test_plan_takes_it);
    g_test_add_func("/kineto/mapping/tp-dp-world", test_mapping);
    g_test_add_func("/kineto/errors/one-line", test_errors);
    g_test_add_func("/kineto/errors/deep-and-long", test_deep_and_long);
    g_test_add_func("/kineto/errors/size-cap", test_size_cap);
    g_test_add_func("/kineto/detect", test_detect);
    int status = g_test_run();
    g_autoptr(GDir) dir = g_dir_open(scratch, 0, NULL);
    const char *name;
    while (dir != NULL && (name = g_dir_read_name(dir)) != NULL) {
        g_autofree char *path = g_build_filename(scratch, name, NULL);
        g_unlink(path);
    }
    g_rmdir(scratch);
    g_free(scratch);
    return status;
}
