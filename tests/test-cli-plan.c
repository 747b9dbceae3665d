// SPDX-License-Identifier: MIT
/* Tests of `collsim plan` run as users run it ($COLLSIM_BIN): a workload's collectives equal
 * `collsim run` (or the library's prediction on the same subset of ranks), the phase and step
 * arithmetic, the CSV and JSON outputs, and bad workloads (exit 2, the file and JSON path). */
#include "config.h"

#include <math.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <glib.h>
#include <glib/gstdio.h>

#include "base/json_util.h"
#include "models/nccl.h"
#include "predict/predict.h"
#include "topo/topo.h"
#include "test-util.h"

static char *scratch;

/* Writes @json to a file named @name in the scratch folder. (transfer full) */
static char *
write_workload(const char *name, const char *json)
{
    char *path = g_build_filename(scratch, name, NULL);
    g_autoptr(GError) error = NULL;
    g_file_set_contents(path, json, -1, &error);
    g_assert_no_error(error);
    return path;
}

/* `collsim plan --workload @path --topo @topo --format json`, parsed. (transfer full) */
static cJSON *
plan_json(const char *path, const char *topo)
{
    const char *args[] = { "--workload", path, "--topo", topo, "--format", "json", NULL };
    g_auto(CsTestRun) r = cs_test_run_collsim("plan", args);
    g_assert_cmpstr(r.err, ==, "");
    g_assert_cmpint(r.status, ==, 0);
    cJSON *root = cJSON_Parse(r.out);
    g_assert_nonnull(root);
    return root;
}

static double
number(const cJSON *object, const char *key)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(object, key);
    g_assert_true(cJSON_IsNumber(item));
    return item->valuedouble;
}

static const cJSON *
at(const cJSON *array, int i)
{
    const cJSON *item = cJSON_GetArrayItem(array, i);
    g_assert_nonnull(item);
    return item;
}

static const char tp_dp_workload[]
    = "{ \"name\": \"tp8 dp2\", \"layout\": { \"tp\": 8, \"dp\": 2 },\n"
      "  \"phases\": [\n"
      "    { \"name\": \"fwd\", \"collectives\": [\n"
      "        { \"op\": \"allreduce\", \"bytes\": \"64 MiB\", \"count\": 3, \"group\": \"tp\" } "
      "] },\n"
      "    { \"name\": \"grads\", \"compute\": \"1 ms\", \"overlap\": true, \"collectives\": [\n"
      "        { \"op\": \"allreduce\", \"bytes\": \"1 GiB\", \"group\": \"dp\" } ] } ] }\n";

/* Setup: TP 8 x DP 2 on hgx-h100x8-2n: the TP group is ranks 0..7 (one node), the DP group of
 * TP index 0 is ranks 0 and 8 (one GPU per node, rails first). Expectation: the TP all-reduce
 * is `collsim run` on one such node (dgx-h100x8) at the same size; the DP all-reduce is the
 * library's default prediction (NCCL's pick) on cs_topo_subset(ranks 0, 8); a phase's communication
 * is the sum of time x count, its exposed time what the compute does not hide, the step their sum.
 */
static void
test_matches_run(void)
{
    g_autofree char *path = write_workload("tp-dp.json", tp_dp_workload);
    g_autoptr(cJSON) plan = plan_json(path, "hgx-h100x8-2n");
    const cJSON *cand = at(cJSON_GetObjectItem(plan, "candidates"), 0);
    const cJSON *phases = cJSON_GetObjectItem(cand, "phases");
    const cJSON *fwd = at(phases, 0);
    const cJSON *grads = at(phases, 1);
    const cJSON *tp = at(cJSON_GetObjectItem(fwd, "collectives"), 0);
    const cJSON *dp = at(cJSON_GetObjectItem(grads, "collectives"), 0);
    g_assert_cmpfloat(number(tp, "ranks"), ==, 8);
    g_assert_cmpfloat(number(dp, "ranks"), ==, 2);

    /* TP: collsim run on one node alone (hgx-h100x8-2n's nodes are dgx-h100x8). */
    const char *run_args[]
        = { "--topo", "dgx-h100x8", "-b", "64M", "-e", "64M", "--format", "json", NULL };
    g_auto(CsTestRun) r = cs_test_run_collsim(NULL, run_args);
    g_assert_cmpint(r.status, ==, 0);
    g_autoptr(cJSON) run = cJSON_Parse(r.out);
    g_assert_nonnull(run);
    const cJSON *row
        = at(cJSON_GetObjectItem(at(cJSON_GetObjectItem(run, "blocks"), 0), "rows"), 0);
    const double tp_us = number(tp, "time_us");
    g_assert_cmpfloat(tp_us, >, 0);
    g_assert_cmpfloat_with_epsilon(tp_us, number(row, "time_us"), 1e-5);
    g_assert_cmpfloat_with_epsilon(number(tp, "busbw_GBps"), number(row, "busbw_GBps"), 1e-3);

    /* DP: ranks 0 and 8 alone, as collsim run predicts by default. */
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTopo) topo = cs_topo_load("hgx-h100x8-2n", &error);
    g_assert_no_error(error);
    const int ranks[] = { 0, 8 };
    g_autoptr(CsTopo) sub = cs_topo_subset(topo, ranks, 2);
    g_assert_cmpint(cs_topo_n_nodes(sub), ==, 2);
    g_autoptr(CsNcclModel) nccl = cs_nccl_model_new_for_topo(sub, 2, "nccl", &error);
    g_assert_no_error(error);
    CsPredictOptions popts;
    cs_predict_options_init(&popts);
    popts.nranks = 2;
    popts.pick = CS_PICK_NCCL;
    popts.nccl = nccl;
    CsPrediction pred;
    g_assert_true(
        cs_predict_best(sub, CS_OP_ALL_REDUCE, (gint64)1 << 30, NULL, -1, &popts, &pred, &error));
    g_assert_no_error(error);
    const double dp_us = number(dp, "time_us");
    g_assert_cmpfloat_with_epsilon(dp_us, pred.time_us, 1e-6);
    /* Two ranks across nodes are not the first two ranks of one node. */
    const char *two_args[] = { "--topo", "hgx-h100x8-2n", "--ranks", "2", "-b", "1G", "-e",
                               "1G",     "--format",      "json",    NULL };
    g_auto(CsTestRun) r2 = cs_test_run_collsim(NULL, two_args);
    g_assert_cmpint(r2.status, ==, 0);
    g_autoptr(cJSON) run2 = cJSON_Parse(r2.out);
    const cJSON *row2
        = at(cJSON_GetObjectItem(at(cJSON_GetObjectItem(run2, "blocks"), 0), "rows"), 0);
    g_assert_cmpfloat(fabs(dp_us - number(row2, "time_us")), >, 1);

    /* Phases and step. */
    g_assert_cmpfloat_with_epsilon(number(fwd, "comm_us"), 3 * tp_us, 1e-6);
    g_assert_cmpfloat_with_epsilon(number(fwd, "exposed_us"), 3 * tp_us, 1e-6);
    g_assert_cmpfloat_with_epsilon(number(grads, "comm_us"), dp_us, 1e-6);
    g_assert_cmpfloat(dp_us, >, 1000); /* 1 GiB over one 400 Gb/s NIC: the compute hides part */
    g_assert_cmpfloat_with_epsilon(number(grads, "exposed_us"), dp_us - 1000, 1e-6);
    g_assert_cmpfloat_with_epsilon(number(grads, "total_us"), dp_us, 1e-6);
    g_assert_cmpfloat_with_epsilon(number(cand, "step_us"), 3 * tp_us + dp_us, 1e-6);
}

/* Setup: a DP all-reduce hidden behind a longer compute, a TP group of one rank, a 7-byte
 * broadcast. Expectation: nothing exposed, the step is the compute; one rank communicates
 * nothing; the broadcast is predicted (and printed) as one float. */
static void
test_overlap_and_one_rank(void)
{
    g_autofree char *path = write_workload(
        "hidden.json",
        "{ \"name\": \"dp4\", \"layout\": { \"tp\": 1, \"dp\": 4 }, \"phases\": [\n"
        "  { \"name\": \"bwd\", \"compute\": \"1 s\", \"overlap\": true, \"collectives\": [\n"
        "    { \"op\": \"allreduce\", \"bytes\": \"256 MiB\", \"group\": \"dp\" },\n"
        "    { \"op\": \"allgather\", \"bytes\": \"1 MiB\", \"group\": \"tp\" },\n"
        "    { \"op\": \"broadcast\", \"bytes\": \"7\", \"group\": \"dp\" } ] } ] }\n");
    g_autoptr(cJSON) plan = plan_json(path, "dgx-h100x8");
    const cJSON *cand = at(cJSON_GetObjectItem(plan, "candidates"), 0);
    const cJSON *phase = at(cJSON_GetObjectItem(cand, "phases"), 0);
    const cJSON *colls = cJSON_GetObjectItem(phase, "collectives");
    g_assert_cmpfloat(number(at(colls, 0), "time_us"), >, 0);
    g_assert_cmpfloat(number(at(colls, 1), "time_us"), ==, 0);
    g_assert_cmpfloat(number(at(colls, 1), "ranks"), ==, 1);
    /* 7 bytes are one float, as nccl-tests would run them. */
    g_assert_cmpfloat(number(at(colls, 2), "bytes"), ==, 4);
    g_assert_cmpfloat(number(at(colls, 2), "time_us"), >, 0);
    g_assert_cmpfloat(number(phase, "exposed_us"), ==, 0);
    g_assert_cmpfloat_with_epsilon(number(cand, "step_us"), 1e6, 1e-6);
}

/* Setup: the shipped examples, the first on two candidates with --format csv. Expectation: a
 * header, every row with as many fields, the collective, phase and step rows of each
 * candidate; the table names the candidate and the concurrency caveat; the Megatron example's
 * groups have the layout's sizes. */
static void
test_csv_and_table(void)
{
    g_autofree char *src = g_test_build_filename(G_TEST_DIST, "..", "examples", "workloads",
                                                 "dp-gradient-buckets.json", NULL);
    const char *args[]
        = { "--workload", src,   "--topo", "hgx-h100x8-2n", "--topo", "aws-p5-h100x8-2n-efa",
            "--format",   "csv", NULL };
    g_auto(CsTestRun) r = cs_test_run_collsim("plan", args);
    g_assert_cmpstr(r.err, ==, "");
    g_assert_cmpint(r.status, ==, 0);
    g_auto(GStrv) lines = g_strsplit(r.out, "\n", -1);
    g_auto(GStrv) header = g_strsplit(lines[0], ",", -1);
    const guint n_fields = g_strv_length(header);
    g_assert_cmpuint(n_fields, ==, 25);
    int collectives = 0, phases = 0, steps = 0;
    for (int i = 1; lines[i] != NULL && lines[i][0] != '\0'; i++) {
        g_auto(GStrv) f = g_strsplit(lines[i], ",", -1);
        g_assert_cmpuint(g_strv_length(f), ==, n_fields);
        collectives += strcmp(f[1], "collective") == 0;
        phases += strcmp(f[1], "phase") == 0;
        steps += strcmp(f[1], "step") == 0;
        if (strcmp(f[1], "collective") == 0)
            g_assert_cmpfloat(g_ascii_strtod(f[9], NULL), >, 0);
    }
    g_assert_cmpint(collectives, ==, 4);
    g_assert_cmpint(phases, ==, 2);
    g_assert_cmpint(steps, ==, 2);

    const char *table_args[] = { "--workload", src, "--topo", "hgx-h100x8-2n", NULL };
    g_auto(CsTestRun) t = cs_test_run_collsim("plan", table_args);
    g_assert_cmpint(t.status, ==, 0);
    g_assert_nonnull(strstr(t.out, "every group of a kind runs its collective at once"));
    g_assert_nonnull(strstr(t.out, "## hgx-h100x8-2n"));

    /* The Megatron example: TP all-reduces inside a node, the DP one across the two. */
    g_autofree char *mega = g_test_build_filename(G_TEST_DIST, "..", "examples", "workloads",
                                                  "megatron-tp8-dp2.json", NULL);
    g_autoptr(cJSON) plan = plan_json(mega, "hgx-h100x8-2n");
    const cJSON *mphases
        = cJSON_GetObjectItem(at(cJSON_GetObjectItem(plan, "candidates"), 0), "phases");
    const cJSON *bwd = cJSON_GetObjectItem(at(mphases, 1), "collectives");
    g_assert_cmpfloat(number(at(bwd, 0), "ranks"), ==, 8);
    g_assert_cmpfloat(number(at(bwd, 1), "ranks"), ==, 2);
    g_assert_cmpfloat(number(at(bwd, 0), "count"), ==, 144);
}

typedef struct {
    const char *json;
    const char *fragment; /* the JSON path and problem the one line names */
} BadCase;

static const BadCase bad_cases[] = {
    /* Formulas of the model's dimensions: a name the model lacks, a fraction of a byte, a
     * datatype nccl-tests does not have, a model dimension that is no number. */
    { "{ \"name\": \"x\", \"layout\": { \"tp\": 1, \"dp\": 2 }, \"model\": { \"b\": 8 }, "
      "\"phases\": [ { \"name\": \"p\", \"collectives\": [ { \"op\": \"allreduce\", "
      "\"bytes\": \"b * h\", \"group\": \"dp\" } ] } ] }",
      "phases[0].collectives[0].bytes: \"b * h\", column 5: \"h\" is not a number or a dimension "
      "of the model" },
    { "{ \"name\": \"x\", \"layout\": { \"tp\": 1, \"dp\": 2 }, \"model\": { \"b\": 3 }, "
      "\"phases\": [ { \"name\": \"p\", \"collectives\": [ { \"op\": \"allreduce\", "
      "\"bytes\": \"1024 / b\", \"group\": \"dp\" } ] } ] }",
      "phases[0].collectives[0].bytes: 341.33333333333331 is not a whole number from 1 to" },
    { "{ \"name\": \"x\", \"layout\": { \"tp\": 1, \"dp\": 2 }, \"phases\": [ { \"name\": "
      "\"p\", \"collectives\": [ { \"op\": \"allreduce\", \"bytes\": \"1 MiB\", "
      "\"datatype\": \"bf17\", \"group\": \"dp\" } ] } ] }",
      "phases[0].collectives[0].datatype: \"bf17\" is not a datatype" },
    { "{ \"name\": \"x\", \"layout\": { \"tp\": 1, \"dp\": 2 }, \"model\": { \"b\": \"8\" }, "
      "\"phases\": [ { \"name\": \"p\", \"collectives\": [ { \"op\": \"allreduce\", "
      "\"bytes\": \"1 MiB\", \"group\": \"dp\" } ] } ] }",
      "model.b: a dimension is a number" },
    { "{ \"name\": \"x\", \"layout\": { \"tp\": 1, \"dp\": 2 }, \"phases\": [ { \"name\": \"p\", "
      "\"collectives\": [ { \"op\": \"allreduse\", \"bytes\": \"1 MiB\", \"group\": \"dp\" } ] } "
      "] }",
      "phases[0].collectives[0].op: \"allreduse\" is not a collective" },
    { "{ \"name\": \"x\", \"layout\": { \"tp\": 1, \"dp\": 2 }, \"phases\": [ { \"name\": \"p\", "
      "\"collectives\": [ { \"op\": \"allreduce\", \"bytes\": \"1 MiB\", \"group\": \"qq\" } ] } "
      "] }",
      "phases[0].collectives[0].group: \"qq\" is not a group (tp, cp, ep, dp, pp or world)" },
    /* A pipeline exchange in a layout without stages (pp defaults to 1). */
    { "{ \"name\": \"x\", \"layout\": { \"tp\": 2, \"dp\": 2 }, \"phases\": [ { \"name\": \"p\", "
      "\"collectives\": [ { \"op\": \"allreduce\", \"bytes\": \"1 MiB\", \"group\": \"tp\" } ] }, "
      "{ \"name\": \"q\", \"collectives\": [ { \"op\": \"allreduce\", \"bytes\": \"1 MiB\", "
      "\"group\": \"dp\" }, { \"op\": \"sendrecv\", \"bytes\": \"1 MiB\", \"group\": \"pp\" } ] "
      "} ] }",
      "phases[1].collectives[1].group: sendrecv on group pp of 1 rank" },
    { "{ \"name\": \"x\", \"layout\": { \"tp\": 1, \"ep\": 3, \"dp\": 8 }, \"phases\": [ "
      "{ \"name\": \"p\", \"collectives\": [ { \"op\": \"alltoall\", \"bytes\": \"1 MiB\", "
      "\"group\": \"ep\" } ] } ] }",
      "layout.ep: ep 3 does not divide dp 8" },
    { "{ \"name\": \"x\", \"layout\": { \"tp\": 1, \"dp\": 2 }, \"phases\": [ { \"name\": \"p\", "
      "\"collectives\": [ { \"op\": \"allreduce\", \"bytes\": \"1 furlong\", \"group\": \"dp\" } "
      "] } ] }",
      "phases[0].collectives[0].bytes" },
    { "{ \"name\": \"x\", \"layout\": { \"tp\": 0, \"dp\": 2 }, \"phases\": [] }", "layout.tp" },
    { "{ \"name\": \"x\", \"layout\": { \"tp\": 1, \"dp\": 2, \"sp\": 2 }, \"phases\": [] }",
      "layout: unknown key \"sp\"" },
    { "{ \"name\": \"x\", \"layout\": { \"tp\": 1, \"dp\": 2 }, \"phases\": [] }",
      "phases: a workload has at least one phase" },
    { "{ \"name\": \"x\", \"layout\": { \"tp\": 1, \"dp\": 2 }, \"phases\": [ { \"name\": \"p\", "
      "\"overlap\": true, \"collectives\": [ { \"op\": \"allreduce\", \"bytes\": \"1 MiB\", "
      "\"group\": \"dp\" } ] } ] }",
      "phases[0].overlap: overlap needs the phase's \"compute\" time" },
    { "{ \"name\": \"x\", \"layout\": { \"tp\": 1, \"dp\": 2 }, \"phases\": [ { \"name\": \"p\", "
      "\"collectives\": [ { \"op\": \"allreduce\", \"bytes\": \"1 MiB\", \"group\": \"dp\", "
      "\"count\": 0 } ] } ] }",
      "phases[0].collectives[0].count" },
    { "{ \"name\": \"x\", \"layout\": { \"tp\": 1, \"dp\": 2 }, \"steps\": 2.5, \"phases\": [] }",
      "steps: 2.5 is not a whole number of steps" },
    { "{ \"name\": \"x\", \"layout\": ", ":1:" },
};

/* Setup: each bad workload above. Expectation: exit 2, one line on stderr naming the file and
 * the JSON path with the problem, nothing on stdout. */
static void
test_bad_workloads(void)
{
    for (gsize i = 0; i < G_N_ELEMENTS(bad_cases); i++) {
        g_autofree char *name = g_strdup_printf("bad-%" G_GSIZE_FORMAT ".json", i);
        g_autofree char *path = write_workload(name, bad_cases[i].json);
        const char *args[] = { "--workload", path, "--topo", "dgx-h100x8", NULL };
        g_auto(CsTestRun) r = cs_test_run_collsim("plan", args);
        g_test_message("case %" G_GSIZE_FORMAT ": %s", i, r.err);
        g_assert_cmpint(r.status, ==, 2);
        g_assert_cmpstr(r.out, ==, "");
        /* One line: "collsim: FILE: PATH: problem". */
        g_autofree char *lead = g_strdup_printf("collsim: %s:", path);
        g_assert_true(g_str_has_prefix(r.err, lead));
        g_assert_nonnull(strstr(r.err, bad_cases[i].fragment));
        g_assert_cmpint(strchr(r.err, '\n') - r.err, ==, (int)strlen(r.err) - 1);
    }
}

/* Setup: a layout of 16 ranks on an 8-GPU machine; a missing --workload. Expectation: exit 2,
 * one line saying how many ranks the layout needs; a usage error. */
static void
test_too_few_ranks(void)
{
    g_autofree char *src = g_test_build_filename(G_TEST_DIST, "..", "examples", "workloads",
                                                 "dp-gradient-buckets.json", NULL);
    const char *args[] = { "--workload", src, "--topo", "dgx-h100x8", NULL };
    g_auto(CsTestRun) r = cs_test_run_collsim("plan", args);
    g_assert_cmpint(r.status, ==, 2);
    g_assert_cmpstr(r.out, ==, "");
    g_assert_cmpstr(r.err, ==,
                    "collsim plan: --topo dgx-h100x8 has 8 ranks; the workload's layout needs "
                    "tp 1 x dp 16 x pp 1 = 16\n");
    const char *none[] = { "--topo", "dgx-h100x8", NULL };
    g_auto(CsTestRun) u = cs_test_run_collsim("plan", none);
    g_assert_cmpint(u.status, ==, 2);
    g_assert_nonnull(strstr(u.err, "--workload FILE is required"));
}

/* `collsim plan` with @args (NULL-terminated, after "plan"), --format json, parsed; asserts
 * exit 0 and nothing on stderr. (transfer full) */
static cJSON *
plan_json_args(const char *const *args)
{
    g_autoptr(GPtrArray) all = g_ptr_array_new();
    for (int i = 0; args[i] != NULL; i++)
        g_ptr_array_add(all, (gpointer)args[i]);
    g_ptr_array_add(all, "--format");
    g_ptr_array_add(all, "json");
    g_ptr_array_add(all, NULL);
    g_auto(CsTestRun) r = cs_test_run_collsim("plan", (const char **)all->pdata);
    g_assert_cmpstr(r.err, ==, "");
    g_assert_cmpint(r.status, ==, 0);
    cJSON *root = cJSON_Parse(r.out);
    g_assert_nonnull(root);
    return root;
}

/* The eight DP groups of tp 8 x dp 2 all-reduce at once: with one NIC per GPU each has its
 * own rail and the time is one group's; with 4 NICs two GPUs share each NIC and the DP
 * all-reduce takes about twice as long (before concurrent groups were run together, the two
 * candidates printed the same time). The TP all-reduces, inside each node, do not change. */
static void
test_concurrent_groups(void)
{
    g_autofree char *mega = g_test_build_filename(G_TEST_DIST, "..", "examples", "workloads",
                                                  "megatron-tp8-dp2.json", NULL);
    const char *args[]
        = { "--workload", mega, "--topo", "hgx-h100x8-2n", "--set", "network.nics_per_node=8,4",
            NULL };
    g_autoptr(cJSON) plan = plan_json_args(args);
    const cJSON *cands = cJSON_GetObjectItem(plan, "candidates");
    double dp_us[2], tp_us[2];
    for (int c = 0; c < 2; c++) {
        const cJSON *bwd = cJSON_GetObjectItem(at(cJSON_GetObjectItem(at(cands, c), "phases"), 1),
                                               "collectives");
        tp_us[c] = number(at(bwd, 0), "time_us");
        dp_us[c] = number(at(bwd, 1), "time_us");
    }
    g_assert_cmpfloat(tp_us[1], ==, tp_us[0]);
    g_assert_cmpfloat(dp_us[1], >, 1.6 * dp_us[0]);
    g_assert_cmpfloat(dp_us[1], <, 2.2 * dp_us[0]);
}

/* The groups of a tp 2 x cp 2 x dp 4 (ep 2) layout in Megatron-LM's order tp-cp-ep-dp-pp:
 * rank = t + 2 (c + 2 d), so TP pairs are consecutive, CP pairs two apart, DP groups four
 * apart and an EP group the first two of a DP group; each kind's groups together cover every
 * rank. The EP all-to-all and the CP all-gather run on 2 ranks, the DP all-reduce on 4. */
static void
test_layout_groups(void)
{
    g_autofree char *path = write_workload(
        "cp-ep.json",
        "{ \"name\": \"x\", \"layout\": { \"tp\": 2, \"cp\": 2, \"ep\": 2, \"dp\": 4 }, "
        "\"phases\": [ { \"name\": \"p\", \"collectives\": [ "
        "{ \"op\": \"alltoall\", \"bytes\": \"1 MiB\", \"group\": \"ep\" }, "
        "{ \"op\": \"allgather\", \"bytes\": \"1 MiB\", \"group\": \"cp\" }, "
        "{ \"op\": \"allreduce\", \"bytes\": \"1 MiB\", \"group\": \"dp\" }, "
        "{ \"op\": \"allreduce\", \"bytes\": \"1 MiB\", \"group\": \"tp\" } ] } ] }");
    const char *args[] = { "--workload", path, "--topo", "hgx-h100x8-2n", NULL };
    g_autoptr(cJSON) plan = plan_json_args(args);
    static const struct {
        const char *kind;
        int ranks, groups, first[4];
    } want[] = {
        { "tp", 2, 8, { 0, 1 } },
        { "cp", 2, 8, { 0, 2 } },
        { "ep", 2, 8, { 0, 4 } },
        { "dp", 4, 4, { 0, 4, 8, 12 } },
    };
    const cJSON *groups = cJSON_GetObjectItem(plan, "groups");
    for (gsize i = 0; i < G_N_ELEMENTS(want); i++) {
        const cJSON *kind = cJSON_GetObjectItem(groups, want[i].kind);
        g_assert_nonnull(kind);
        g_assert_cmpfloat(number(kind, "ranks"), ==, want[i].ranks);
        g_assert_cmpfloat(number(kind, "groups"), ==, want[i].groups);
        const cJSON *first = cJSON_GetObjectItem(kind, "first");
        g_assert_cmpint(cJSON_GetArraySize(first), ==, want[i].ranks);
        for (int j = 0; j < want[i].ranks; j++)
            g_assert_cmpint(cJSON_GetArrayItem(first, j)->valueint, ==, want[i].first[j]);
    }
    g_assert_null(cJSON_GetObjectItem(groups, "world"));
    const cJSON *colls = cJSON_GetObjectItem(
        at(cJSON_GetObjectItem(at(cJSON_GetObjectItem(plan, "candidates"), 0), "phases"), 0),
        "collectives");
    const double ranks[] = { 2, 2, 4, 2 };
    for (int j = 0; j < 4; j++)
        g_assert_cmpfloat(number(at(colls, j), "ranks"), ==, ranks[j]);
}

/* Setup: on hgx-h100x8-2n (16 ranks, 8 a node), a sendrecv of 16 MiB, 3 a step, on the pp group
 * of tp 4 x dp 2 x pp 2 (rank = t + 4 (d + 2 stage)), and of tp 2 x dp 2 x pp 2, whose 8 ranks
 * are all on node 0. Expectation: a PP group is one rank of each stage, tp x dp = 8 ranks apart
 * ({0, 8}), 8 groups at once; on 16 ranks stage 0 is node 0 and stage 1 node 1, so every PP message
 * crosses the network: busbw at most the 48 GB/s PCIe link in front of each NIC, while the
 * 8-rank layout's stages (ranks {0, 4}) talk over NVLink at more than twice that. The
 * sendrecv's phase time is time x count. */
static void
test_pp_sendrecv(void)
{
#define PP_WORKLOAD(tp)                                                                            \
    "{ \"name\": \"x\", \"layout\": { \"tp\": " tp ", \"dp\": 2, \"pp\": 2 }, \"phases\": [ { "    \
    "\"name\": \"p\", \"collectives\": [ { \"op\": \"sendrecv\", \"bytes\": \"16 MiB\", "          \
    "\"count\": "                                                                                  \
    "3, \"group\": \"pp\" } ] } ] }"
    static const char *const workloads[] = { PP_WORKLOAD("4"), PP_WORKLOAD("2") };
#undef PP_WORKLOAD
    double busbw[2];
    for (int i = 0; i < 2; i++) {
        const int tp = i == 0 ? 4 : 2;
        g_autofree char *name = g_strdup_printf("pp-tp%d.json", tp);
        g_autofree char *path = write_workload(name, workloads[i]);
        g_autoptr(cJSON) plan = plan_json(path, "hgx-h100x8-2n");
        const cJSON *pp = cJSON_GetObjectItem(cJSON_GetObjectItem(plan, "groups"), "pp");
        g_assert_nonnull(pp);
        g_assert_cmpfloat(number(pp, "ranks"), ==, 2);
        g_assert_cmpfloat(number(pp, "groups"), ==, tp * 2);
        const cJSON *first = cJSON_GetObjectItem(pp, "first");
        g_assert_cmpint(cJSON_GetArraySize(first), ==, 2);
        g_assert_cmpint(at(first, 0)->valueint, ==, 0);
        g_assert_cmpint(at(first, 1)->valueint, ==, tp * 2);
        const cJSON *phase
            = at(cJSON_GetObjectItem(at(cJSON_GetObjectItem(plan, "candidates"), 0), "phases"), 0);
        const cJSON *sr = at(cJSON_GetObjectItem(phase, "collectives"), 0);
        g_assert_cmpstr(cJSON_GetObjectItem(sr, "op")->valuestring, ==, "sendrecv");
        g_assert_cmpstr(cJSON_GetObjectItem(sr, "group")->valuestring, ==, "pp");
        g_assert_cmpstr(cJSON_GetObjectItem(sr, "algo_proto")->valuestring, ==, "direct/Simple");
        g_assert_cmpfloat(number(sr, "bytes"), ==, 16 << 20);
        g_assert_cmpfloat_with_epsilon(number(phase, "comm_us"), 3 * number(sr, "time_us"), 1e-6);
        busbw[i] = number(sr, "busbw_GBps");
    }
    g_test_message("pp across nodes %.2f GB/s, inside a node %.2f GB/s", busbw[0], busbw[1]);
    g_assert_cmpfloat(busbw[0], <=, 48.0);
    g_assert_cmpfloat(busbw[1], >, 2 * busbw[0]);
}

/* Every shipped workload plans on a machine with enough ranks (the 256-GPU one is covered by
 * test_compute_phases). The MoE example's all-to-alls run on EP groups of 8 ranks two apart,
 * so half of them are across the two nodes: slower than the TP all-reduce inside a pair. */
static void
test_shipped_workloads(void)
{
    static const struct {
        const char *file, *topo;
    } shipped[] = {
        { "moe-tp2-ep8.json", "hgx-h100x8-2n" },
        { "fsdp-70b-64gpu.json", "hgx-h100x8-16n" },
        { "dp-gradient-buckets.json", "hgx-h100x8-2n" },
        { "megatron-tp8-dp2.json", "hgx-h100x8-2n" },
        { "megatron-3d-tp4-pp2-dp2.json", "hgx-h100x8-2n" },
    };
    for (gsize i = 0; i < G_N_ELEMENTS(shipped); i++) {
        g_autofree char *path = g_test_build_filename(G_TEST_DIST, "..", "examples", "workloads",
                                                      shipped[i].file, NULL);
        g_autoptr(cJSON) plan = plan_json(path, shipped[i].topo);
        const cJSON *cand = at(cJSON_GetObjectItem(plan, "candidates"), 0);
        g_assert_cmpfloat(number(cand, "step_us"), >, 0);
        if (i == 0) {
            const cJSON *groups = cJSON_GetObjectItem(plan, "groups");
            g_assert_cmpfloat(number(cJSON_GetObjectItem(groups, "ep"), "ranks"), ==, 8);
            g_assert_cmpfloat(number(cJSON_GetObjectItem(groups, "ep"), "groups"), ==, 2);
            const cJSON *fwd
                = cJSON_GetObjectItem(at(cJSON_GetObjectItem(cand, "phases"), 0), "collectives");
            g_assert_cmpstr(cJSON_GetObjectItem(at(fwd, 1), "op")->valuestring, ==, "alltoall");
            g_assert_cmpfloat(number(at(fwd, 1), "busbw_GBps"), <,
                              number(at(fwd, 0), "busbw_GBps"));
        }
    }
}

/* A phase named with a comma and a quote: --format csv quotes it (RFC 4180), so every line
 * still has 25 fields outside quotes. */
static void
test_csv_quoting(void)
{
    g_autofree char *path = write_workload(
        "quoted.json",
        "{ \"name\": \"x\", \"layout\": { \"tp\": 2, \"dp\": 1 }, \"phases\": [ { \"name\": "
        "\"forward, \\\"attention\\\"\", \"collectives\": [ { \"op\": \"allreduce\", \"bytes\": "
        "\"1 MiB\", \"group\": \"tp\" } ] } ] }");
    const char *args[] = { "--workload", path, "--topo", "dgx-h100x4", "--format", "csv", NULL };
    g_auto(CsTestRun) r = cs_test_run_collsim("plan", args);
    g_assert_cmpint(r.status, ==, 0);
    g_assert_nonnull(strstr(r.out, ",collective,\"forward, \"\"attention\"\"\",allreduce,"));
    g_assert_nonnull(strstr(r.out, ",phase,\"forward, \"\"attention\"\"\",,"));
    g_auto(GStrv) lines = g_strsplit(r.out, "\n", -1);
    for (int i = 0; lines[i] != NULL && lines[i][0] != '\0'; i++)
        g_assert_cmpint(cs_test_csv_fields(lines[i]), ==, 25);
}

/* Whether one of @cand's "bottlenecks" contains @fragment. */
static gboolean
says(const cJSON *cand, const char *fragment)
{
    const cJSON *line = NULL;
    cJSON_ArrayForEach(line, cJSON_GetObjectItem(cand, "bottlenecks"))
    {
        if (strstr(line->valuestring, fragment) != NULL)
            return TRUE;
    }
    return FALSE;
}

/* Setup: hgx-h100x8-2n (a 400 Gb/s NIC per GPU behind PCIe Gen5 x16, 48.0 GB/s usable) as
 * what-ifs: the NIC at 800 Gb/s, 4 NICs per node, the leaves 2:1 oversubscribed. Expectation:
 * each candidate names what binds: the PCIe link with 52.0 GB/s of the NIC unused; two GPUs
 * sharing each NIC at 25.0 GB/s each; the rail leaves 2:1; the table prints the same lines,
 * and so does `topo show`. */
static void
test_bottlenecks(void)
{
    g_autofree char *path = write_workload(
        "dp16.json",
        "{ \"name\": \"dp16\", \"layout\": { \"tp\": 1, \"dp\": 16 }, \"phases\": [\n"
        "  { \"name\": \"g\", \"collectives\": [\n"
        "    { \"op\": \"allreduce\", \"bytes\": \"1 MiB\", \"group\": \"dp\" } ] } ] }\n");
    const char *args[]
        = { "--workload", path, "--topo", "hgx-h100x8-2n", "--set", "network.nic_bandwidth=800Gb/s",
            NULL };
    g_autoptr(cJSON) fast = plan_json_args(args);
    const cJSON *c = at(cJSON_GetObjectItem(fast, "candidates"), 0);
    g_assert_true(says(c, "ranks 0-15: NIC 100 GB/s behind PCIe 48.0 GB/s: the PCIe link binds, "
                          "52.0 GB/s of the NIC rate unused (rank 0: n0/gpu0 -> n0/nic0)"));
    args[5] = "network.nics_per_node=4";
    g_autoptr(cJSON) four = plan_json_args(args);
    c = at(cJSON_GetObjectItem(four, "candidates"), 0);
    g_assert_true(says(c, "NIC 50.0 GB/s shared by 2 GPUs (25.0 GB/s each): the shared NIC "
                          "binds at 25.0 GB/s per GPU"));
    g_assert_false(says(c, "PCIe link binds"));
    args[5] = "network.oversubscription=2";
    g_autoptr(cJSON) thin = plan_json_args(args);
    c = at(cJSON_GetObjectItem(thin, "candidates"), 0);
    g_assert_true(says(c, "tier 1 (8 switches, e.g. rail0): 100 GB/s down, 50.0 GB/s up, 2:1, "
                          "oversubscribed"));
    g_assert_true(says(c, "tier 2 (1 switch, spine): the top tier"));

    args[5] = "network.nics_per_node=4";
    g_auto(CsTestRun) t = cs_test_run_collsim("plan", args);
    g_assert_cmpint(t.status, ==, 0);
    g_assert_nonnull(strstr(t.out, "\n# bottleneck: ranks 0-15: NIC 50.0 GB/s shared by 2 GPUs"));
    const char *show[] = { "show", "hgx-h100x8-2n", "--set", "network.nics_per_node=4", NULL };
    g_auto(CsTestRun) s = cs_test_run_collsim("topo", show);
    g_assert_cmpint(s.status, ==, 0);
    g_assert_nonnull(strstr(s.out, "net 25.0 GB/s\n"));
    g_assert_nonnull(strstr(s.out, "bottlenecks:\n  ranks 0-15: NIC 50.0 GB/s shared by 2 GPUs"));
    /* CPU ranks are named as such. */
    const char *cpus[] = { "show", "eth-cpu-8n", NULL };
    g_auto(CsTestRun) e = cs_test_run_collsim("topo", cpus);
    g_assert_cmpint(e.status, ==, 0);
    g_assert_nonnull(strstr(e.out, "ranks 0-7: NIC 1.25 GB/s: the NIC binds at 1.25 GB/s per CPU, "
                                   "nothing narrower in front"));
}

/* Setup: the 16-GPU example on two what-if candidates, priced 3 and 2.5 per GPU-hour, 1000
 * steps; then one price per node-hour for both, and the workload's own "steps".
 * Expectation: cost per hour = price x 16 GPUs (or x 2 nodes); per step = per hour x step /
 * 3600 s; per run = per step x steps; steps per unit = 1 / per step; the CSV's step rows carry
 * the same numbers; a bad price or a count that is neither 1 nor the candidates' is exit 2. */
static void
test_prices(void)
{
    g_autofree char *path = write_workload(
        "priced.json",
        "{ \"name\": \"dp16\", \"layout\": { \"tp\": 1, \"dp\": 16 }, \"steps\": 500, "
        "\"phases\": [\n  { \"name\": \"g\", \"compute\": \"1 s\", \"collectives\": [\n"
        "    { \"op\": \"allreduce\", \"bytes\": \"1 MiB\", \"group\": \"dp\" } ] } ] }\n");
    const char *args[] = { "--workload", path,
                           "--topo",     "hgx-h100x8-2n",
                           "--set",      "network.nics_per_node=8,4",
                           "--price",    "3/gpu-hour",
                           "--price",    "2.5/gpu-hour",
                           "--steps",    "1000",
                           NULL };
    g_autoptr(cJSON) plan = plan_json_args(args);
    const double prices[] = { 3, 2.5 };
    for (int k = 0; k < 2; k++) {
        const cJSON *c = at(cJSON_GetObjectItem(plan, "candidates"), k);
        const cJSON *cost = cJSON_GetObjectItem(c, "cost");
        g_assert_nonnull(cost);
        const double step_s = number(c, "step_us") * 1e-6;
        g_assert_cmpfloat(step_s, >, 1.0);
        g_assert_cmpfloat_with_epsilon(number(cost, "per_hour"), prices[k] * 16, 1e-9);
        g_assert_cmpfloat_with_epsilon(number(cost, "per_step"), prices[k] * 16 * step_s / 3600,
                                       1e-12);
        g_assert_cmpfloat_with_epsilon(number(cost, "per_run"),
                                       1000 * prices[k] * 16 * step_s / 3600, 1e-9);
        g_assert_cmpfloat_with_epsilon(number(cost, "steps_per_cost"),
                                       3600 / (prices[k] * 16 * step_s), 1e-6);
    }
    /* Per node-hour, one price for both; the run from the workload's "steps". */
    const char *node_args[]
        = { "--workload", path,  "--topo", "hgx-h100x8-2n", "--price", "$40/node-hour",
            "--format",   "csv", NULL };
    g_auto(CsTestRun) r = cs_test_run_collsim("plan", node_args);
    g_assert_cmpint(r.status, ==, 0);
    g_auto(GStrv) lines = g_strsplit(r.out, "\n", -1);
    gboolean seen = FALSE;
    for (int i = 1; lines[i] != NULL; i++) {
        g_auto(GStrv) f = g_strsplit(lines[i], ",", -1);
        if (g_strv_length(f) < 25 || strcmp(f[1], "step") != 0)
            continue;
        const double step_s = g_ascii_strtod(f[14], NULL) * 1e-6;
        g_assert_cmpfloat_with_epsilon(g_ascii_strtod(f[15], NULL), 80, 1e-9);
        g_assert_cmpfloat_with_epsilon(g_ascii_strtod(f[16], NULL), 80 * step_s / 3600, 1e-6);
        g_assert_cmpfloat_with_epsilon(g_ascii_strtod(f[17], NULL), 500 * 80 * step_s / 3600, 1e-3);
        seen = TRUE;
    }
    g_assert_true(seen);

    const char *bad[]
        = { "--workload", path, "--topo", "hgx-h100x8-2n", "--price", "3/gpu-day", NULL };
    g_auto(CsTestRun) b = cs_test_run_collsim("plan", bad);
    g_assert_cmpint(b.status, ==, 2);
    g_assert_nonnull(strstr(b.err, "--price \"3/gpu-day\""));
    const char *three[]
        = { "--workload", path,         "--topo", "hgx-h100x8-2n", "--price", "1/gpu-hour",
            "--price",    "2/gpu-hour", NULL };
    g_auto(CsTestRun) m = cs_test_run_collsim("plan", three);
    g_assert_cmpint(m.status, ==, 2);
    g_assert_nonnull(strstr(m.err, "2 --price for 1 candidates"));
}

/* Setup: hgx-h100x8-2n (8 GPUs per node, NIC i of each node on rail switch i, a spine above
 * the rails). tp 5 x dp 3 = 15 ranks: the dp groups are {t, t + 5, t + 10}; group 0 has ranks
 * 0 and 5 on node 0 (rails 0 and 5) and rank 10 on node 1 at local GPU 2 (rail 2), so node 1,
 * which is on rails 0 and 5 too, uses neither, and traffic between them leaves the rails for
 * the spine (tier 2); likewise every other dp group (1, 6 | 11 -> rail 3; 2, 7 | 12 -> rail 4;
 * 3 | 8, 13 -> rails 0, 5; 4 | 9, 14 -> rails 1, 6): 5 of 5. The tp groups {0-4}, {5-9},
 * {10-14}: only {5-9} spans both nodes (rails 5-7 on node 0, 0-1 on node 1): 1 of 3. tp 8 x
 * dp 2: each dp group is {t, t + 8}, one GPU index on both nodes, one rail: no such line, nor
 * for the world group, every rail on both nodes. On tests/data/topo/template_leaf_spine.json
 * (one NIC per node, 2 nodes per leaf, no rails) a dp group over all 4 nodes crosses leaves,
 * which no placement avoids: no line. */
static void
test_rail_breaks(void)
{
    g_autofree char *broken = write_workload(
        "tp5-dp3.json",
        "{ \"name\": \"tp5\", \"layout\": { \"tp\": 5, \"dp\": 3 }, \"phases\": [\n"
        "  { \"name\": \"g\", \"collectives\": [\n"
        "    { \"op\": \"allreduce\", \"bytes\": \"1 MiB\", \"group\": \"dp\" },\n"
        "    { \"op\": \"allreduce\", \"bytes\": \"64 KiB\", \"group\": \"tp\" } ] } ] }\n");
    g_autoptr(cJSON) plan = plan_json(broken, "hgx-h100x8-2n");
    const cJSON *cand = at(cJSON_GetObjectItem(plan, "candidates"), 0);
    g_assert_true(says(cand, "dp groups: 5 of 5 break rails: members on different nodes use NICs "
                             "on different rails, so their traffic climbs to tier 2 (e.g. rank "
                             "10 on rail2 to rank 0 on rail0, through spine)"));
    g_assert_true(says(cand, "tp groups: 1 of 3 break rails"));

    g_autofree char *kept = write_workload(
        "tp8-dp2.json",
        "{ \"name\": \"tp8\", \"layout\": { \"tp\": 8, \"dp\": 2 }, \"phases\": [\n"
        "  { \"name\": \"g\", \"collectives\": [\n"
        "    { \"op\": \"allreduce\", \"bytes\": \"1 MiB\", \"group\": \"dp\" },\n"
        "    { \"op\": \"allreduce\", \"bytes\": \"1 MiB\", \"group\": \"world\" } ] } ] }\n");
    g_autoptr(cJSON) plan8 = plan_json(kept, "hgx-h100x8-2n");
    const cJSON *cand8 = at(cJSON_GetObjectItem(plan8, "candidates"), 0);
    g_assert_false(says(cand8, "break rails"));
    /* The machine's own lines are still there. */
    g_assert_true(says(cand8, "tier 2 (1 switch, spine): the top tier"));

    g_autofree char *leaves
        = g_test_build_filename(G_TEST_DIST, "data", "topo", "template_leaf_spine.json", NULL);
    g_autofree char *dp4 = write_workload(
        "dp4.json", "{ \"name\": \"dp4\", \"layout\": { \"tp\": 1, \"dp\": 4 }, \"phases\": [\n"
                    "  { \"name\": \"g\", \"collectives\": [\n"
                    "    { \"op\": \"allreduce\", \"bytes\": \"1 MiB\", \"group\": \"dp\" } ] } "
                    "] }\n");
    g_autoptr(cJSON) plan_leaves = plan_json(dp4, leaves);
    g_assert_false(says(at(cJSON_GetObjectItem(plan_leaves, "candidates"), 0), "break rails"));
}

/* The cost term of @cost that is per @per (gpu-hour, node, nic, ...), NULL if none. */
static const cJSON *
cost_term(const cJSON *cost, const char *per)
{
    const cJSON *list = cJSON_GetObjectItem(cost, "terms");
    for (const cJSON *t = list != NULL ? list->child : NULL; t != NULL; t = t->next)
        if (strcmp(cJSON_GetObjectItem(t, "per")->valuestring, per) == 0)
            return t;
    return NULL;
}

/* Asserts term @per of @cost: @units x @price, and per hour (purchase / @hours when > 0). */
static void
assert_term(const cJSON *cost, const char *per, double units, double price, double hours)
{
    const cJSON *t = cost_term(cost, per);
    g_assert_nonnull(t);
    g_assert_cmpfloat(number(t, "units"), ==, units);
    g_assert_cmpfloat(number(t, "price"), ==, price);
    if (hours > 0) {
        g_assert_cmpfloat_with_epsilon(number(t, "capital"), units * price, 1e-9);
        g_assert_cmpfloat_with_epsilon(number(t, "per_hour"), units * price / hours, 1e-9);
    }
    else
        g_assert_cmpfloat_with_epsilon(number(t, "per_hour"), units * price, 1e-9);
}

/* A step of compute alone, 3.6 s (1/1000 of an hour), on 4 or 3 ranks: its cost is exact. */
static const char compute_dp4[]
    = "{ \"name\": \"c\", \"layout\": { \"tp\": 1, \"dp\": 4 }, \"steps\": 1000, \"phases\": [\n"
      "  { \"name\": \"c\", \"compute\": \"3.6 s\", \"collectives\": [] } ] }\n";
static const char compute_dp3[]
    = "{ \"name\": \"c\", \"layout\": { \"tp\": 1, \"dp\": 3 }, \"phases\": [\n"
      "  { \"name\": \"c\", \"compute\": \"3.6 s\", \"collectives\": [] } ] }\n";

/* Setup: tests/data/topo/priced_leaf_spine.json: 3 nodes of 2 CPU ranks, 2 NICs each (100
 * Gb/s), 2 nodes per leaf, uplinks 4:1, and a price block of 10000 per node, 500 per NIC, 250
 * per switch port, 1.5 per node-hour, amortized over 1000 h, in EUR. A step of 3.6 s compute on
 * dp 4 (ranks 0-3: nodes 0 and 1).
 * Counts by hand: nodes 2; NICs of those nodes 4; switch ports, the whole fabric, in 100 Gb/s
 * ports: leaf0 has 4 NIC ports and an uplink of 4 lanes x 25 Gb/s = 1 port; leaf1 2 NIC ports
 * and 2 x 25 Gb/s = 50 Gb/s, still 1 port; the spine one port per leaf: 5 + 3 + 2 = 10.
 * Expectation: purchase 2 x 10000 + 4 x 500 + 10 x 250 = 24500, / 1000 h = 24.5 per hour; plus
 * 1.5 x 2 = 3 per node-hour: 27.5 per hour, 0.0275 per step, 27.5 per run of 1000 steps. The
 * table shows the block's currency and source and each line; dp 3 leaves node 1 half used and
 * is charged the same 2 whole nodes and their 4 NICs. */
static void
test_price_block(void)
{
    g_autofree char *topo
        = g_test_build_filename(G_TEST_DIST, "data", "topo", "priced_leaf_spine.json", NULL);
    g_autofree char *w4 = write_workload("compute-dp4.json", compute_dp4);
    g_autoptr(cJSON) plan = plan_json(w4, topo);
    const cJSON *cost = cJSON_GetObjectItem(at(cJSON_GetObjectItem(plan, "candidates"), 0), "cost");
    g_assert_nonnull(cost);
    g_assert_cmpstr(cJSON_GetObjectItem(cost, "from")->valuestring, ==, "topology");
    g_assert_cmpstr(cJSON_GetObjectItem(cost, "currency")->valuestring, ==, "EUR");
    assert_term(cost, "node", 2, 10000, 1000);
    assert_term(cost, "nic", 4, 500, 1000);
    assert_term(cost, "switch-port", 10, 250, 1000);
    assert_term(cost, "node-hour", 2, 1.5, 0);
    g_assert_null(cost_term(cost, "gpu-hour"));
    g_assert_cmpfloat_with_epsilon(number(cost, "capital"), 24500, 1e-9);
    g_assert_cmpfloat(number(cost, "amortize_h"), ==, 1000);
    g_assert_cmpfloat_with_epsilon(number(cost, "per_hour"), 27.5, 1e-9);
    g_assert_cmpfloat_with_epsilon(number(cost, "per_step"), 0.0275, 1e-12);
    g_assert_cmpfloat_with_epsilon(number(cost, "per_run"), 27.5, 1e-9);
    /* Two kinds of term: no single "price" at the top. */
    g_assert_null(cJSON_GetObjectItem(cost, "price"));

    const char *table_args[] = { "--workload", w4, "--topo", topo, NULL };
    g_auto(CsTestRun) t = cs_test_run_collsim("plan", table_args);
    g_assert_cmpint(t.status, ==, 0);
    g_assert_nonnull(strstr(t.out, "\n# price: the topology's price block (currency EUR; source: "
                                   "test values, not a quote)\n"));
    g_assert_nonnull(strstr(t.out, "\n# cost: 10000 per node x 2 nodes + 500 per NIC x 4 NICs + "
                                   "250 per switch port x 10 switch ports = 24500, straight line "
                                   "over 1000 h = 24.5 per hour\n"));
    g_assert_nonnull(strstr(t.out, "\n# cost: 1.5 per node-hour x 2 nodes = 3 per hour\n"));
    g_assert_nonnull(strstr(t.out, "\n# cost: 27.5 per hour in all; 0.0275 per step, 27.5 per "
                                   "run of 1000 steps"));

    /* The CSV: one cost row per term, count x unit price; the step row sums them. */
    const char *csv_args[] = { "--workload", w4, "--topo", topo, "--format", "csv", NULL };
    g_auto(CsTestRun) c = cs_test_run_collsim("plan", csv_args);
    g_assert_cmpint(c.status, ==, 0);
    /* The step row's two halves are one string (split for the line length). */
    static const char step_row[] = "step,,,,,,,,,,,,,3600000.000,27.5,0.0275,27.5,36.3636,,,,"
                                   "24500,1000,EUR";
    const char *const rows[]
        = { "cost,,,,,,,,,,,,,,3,,,,node-hour,2,1.5,,,EUR",
            "cost,,,,,,,,,,,,,,20,,,,node,2,10000,20000,1000,EUR",
            "cost,,,,,,,,,,,,,,2,,,,nic,4,500,2000,1000,EUR",
            "cost,,,,,,,,,,,,,,2.5,,,,switch-port,10,250,2500,1000,EUR", step_row };
    for (gsize i = 0; i < G_N_ELEMENTS(rows); i++) {
        /* The topology column is the path as given. */
        g_autofree char *row = g_strdup_printf("\n%s,%s\n", topo, rows[i]);
        g_assert_nonnull(strstr(c.out, row));
    }

    /* dp 3: ranks 0-2, node 1 half used and charged whole, node 2 not at all. */
    g_autofree char *w3 = write_workload("compute-dp3.json", compute_dp3);
    g_autoptr(cJSON) plan3 = plan_json(w3, topo);
    const cJSON *cost3
        = cJSON_GetObjectItem(at(cJSON_GetObjectItem(plan3, "candidates"), 0), "cost");
    assert_term(cost3, "node", 2, 10000, 1000);
    assert_term(cost3, "nic", 4, 500, 1000);
    assert_term(cost3, "switch-port", 10, 250, 1000);
    g_assert_cmpfloat_with_epsilon(number(cost3, "per_hour"), 27.5, 1e-9);
}

/* Setup: the same topology and step with its block overridden: --amortize 2000h (block kept),
 * --set price.node=20000 (a what-if on the block), and --price per candidate on two copies
 * of it, one with two terms joined by '+'.
 * Expectation: 24500 / 2000 h + 3 = 15.25 per hour; (2 x 20000 + 2000 + 2500) / 1000 h + 3 =
 * 47.5 per hour; "10000/node+3/gpu-hour" with --amortize 500h: 2 x 10000 / 500 + 3 x 4 ranks
 * = 52 per hour, and "2/gpu-hour": 8 per hour, neither from the block nor in its currency. */
static void
test_price_overrides(void)
{
    g_autofree char *topo
        = g_test_build_filename(G_TEST_DIST, "data", "topo", "priced_leaf_spine.json", NULL);
    g_autofree char *w4 = write_workload("compute-dp4.json", compute_dp4);
    const char *longer[] = { "--workload", w4, "--topo", topo, "--amortize", "2000h", NULL };
    g_autoptr(cJSON) a = plan_json_args(longer);
    const cJSON *ca = cJSON_GetObjectItem(at(cJSON_GetObjectItem(a, "candidates"), 0), "cost");
    g_assert_cmpfloat_with_epsilon(number(ca, "per_hour"), 24500.0 / 2000 + 3, 1e-9);

    const char *what_if[] = { "--workload", w4, "--topo", topo, "--set", "price.node=20000", NULL };
    g_autoptr(cJSON) b = plan_json_args(what_if);
    const cJSON *cb = cJSON_GetObjectItem(at(cJSON_GetObjectItem(b, "candidates"), 0), "cost");
    assert_term(cb, "node", 2, 20000, 1000);
    g_assert_cmpfloat_with_epsilon(number(cb, "per_hour"), 47.5, 1e-9);

    const char *per_candidate[]
        = { "--workload", w4,           "--topo",     topo,
            "--topo",     topo,         "--price",    "10000/node+3/gpu-hour",
            "--price",    "2/gpu-hour", "--amortize", "500h",
            NULL };
    g_autoptr(cJSON) c = plan_json_args(per_candidate);
    const cJSON *c0 = cJSON_GetObjectItem(at(cJSON_GetObjectItem(c, "candidates"), 0), "cost");
    const cJSON *c1 = cJSON_GetObjectItem(at(cJSON_GetObjectItem(c, "candidates"), 1), "cost");
    g_assert_cmpstr(cJSON_GetObjectItem(c0, "from")->valuestring, ==, "--price");
    g_assert_null(cJSON_GetObjectItem(c0, "currency"));
    assert_term(c0, "node", 2, 10000, 500);
    assert_term(c0, "gpu-hour", 4, 3, 0);
    g_assert_null(cost_term(c0, "nic"));
    g_assert_cmpfloat_with_epsilon(number(c0, "per_hour"), 52, 1e-9);
    assert_term(c1, "gpu-hour", 4, 2, 0);
    g_assert_cmpfloat_with_epsilon(number(c1, "per_hour"), 8, 1e-9);
    /* One hourly term: its price, unit and count at the top as well. */
    g_assert_cmpfloat(number(c1, "price"), ==, 2);
    g_assert_cmpstr(cJSON_GetObjectItem(c1, "per")->valuestring, ==, "gpu-hour");
    g_assert_cmpfloat(number(c1, "units"), ==, 4);
}

/* Setup: hgx-h100x8-2n (8 rails of 400 Gb/s, a spine) with 8 and 4 NICs per node, 16 ranks,
 * priced per NIC and switch port. Counts by hand: 8 NICs per node -> 16 NICs; each rail switch
 * has 2 NIC ports and 2 uplink ports (non-blocking), the spine 2 per rail: 8 x 4 + 16 = 48
 * ports. 4 NICs -> 8 NICs, 4 x 4 + 8 = 24 ports. */
static void
test_price_counts_rails(void)
{
    g_autofree char *w = write_workload("compute-16.json",
                                        "{ \"name\": \"c\", \"layout\": { \"tp\": 8, \"dp\": 2 }, "
                                        "\"phases\": [ { \"name\": \"c\", \"compute\": \"1 s\", "
                                        "\"collectives\": [] } ] }\n");
    const char *args[] = { "--workload", w,
                           "--topo",     "hgx-h100x8-2n",
                           "--set",      "network.nics_per_node=8,4",
                           "--price",    "1000/nic+100/switch-port",
                           "--amortize", "4y",
                           NULL };
    g_autoptr(cJSON) plan = plan_json_args(args);
    const double nics[] = { 16, 8 }, ports[] = { 48, 24 };
    for (int k = 0; k < 2; k++) {
        const cJSON *cost
            = cJSON_GetObjectItem(at(cJSON_GetObjectItem(plan, "candidates"), k), "cost");
        assert_term(cost, "nic", nics[k], 1000, 4 * 8760);
        assert_term(cost, "switch-port", ports[k], 100, 4 * 8760);
    }
}

/* Bad prices are exit 2 with one line saying what is wrong: a negative amount, an unknown
 * unit, a purchase price without --amortize, a unit twice, a bad period; and in a topology's
 * block (through --set), a negative price, an unknown key and a purchase price without its
 * "amortize". */
static void
test_price_errors(void)
{
    g_autofree char *topo
        = g_test_build_filename(G_TEST_DIST, "data", "topo", "priced_leaf_spine.json", NULL);
    g_autofree char *w4 = write_workload("compute-dp4.json", compute_dp4);
    static const struct {
        const char *flag, *value, *flag2, *value2, *message;
    } cases[] = {
        { "--price", "-3/gpu-hour", NULL, NULL,
          "--price \"-3/gpu-hour\": an amount from 0 to 1e12 per GPU-hour, not \"-3\"" },
        { "--price", "0x10/nic", "--amortize", "1y",
          "--price \"0x10/nic\": an amount from 0 to 1e12 per NIC, not \"0x10\"" },
        { "--price", "3/gpu-hour+2/rack", NULL, NULL,
          "--price \"3/gpu-hour+2/rack\": term \"2/rack\": expected AMOUNT/UNIT" },
        { "--price", "250000/node", NULL, NULL,
          "--price \"250000/node\": a purchase price needs --amortize PERIOD" },
        { "--price", "1/nic+2/nic", NULL, NULL, "--price \"1/nic+2/nic\": nic is given twice" },
        { "--price", "1/nic", "--amortize", "4 weeks", "--amortize: \"4 weeks\" is not a period" },
        { "--amortize", "0y", NULL, NULL, "--amortize: \"0y\" is not a period: out of range" },
        { "--set", "price.node=-1", NULL, NULL, "--set price.node=-1: " },
        { "--set", "price.rack=5", NULL, NULL, "price: unknown key \"rack\"" },
        { "--set", "price={\"node\": 1}", NULL, NULL,
          "price: \"node\" is a purchase price: give \"amortize\"" },
        { "--set", "price.amortize=forever", NULL, NULL,
          "price.amortize: \"forever\" is not a period" },
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        const char *args[]
            = { "--workload",    w4,  "--topo", topo, cases[i].flag, cases[i].value, cases[i].flag2,
                cases[i].value2, NULL };
        g_auto(CsTestRun) r = cs_test_run_collsim("plan", args);
        g_test_message("%s %s: %s", cases[i].flag, cases[i].value, r.err);
        g_assert_cmpint(r.status, ==, 2);
        g_assert_cmpstr(r.out, ==, "");
        g_assert_nonnull(strstr(r.err, cases[i].message));
    }
    /* The negative price names the block's path and what a price is. */
    const char *neg[] = { "--workload", w4, "--topo", topo, "--set", "price.node=-1", NULL };
    g_auto(CsTestRun) n = cs_test_run_collsim("plan", neg);
    g_assert_nonnull(strstr(n.err, "price.node: \"-1\" is not a price"));
}

/* Setup: a phase of compute alone (5.5 s, no collectives) before an overlapped one (11 s of
 * compute over a 256 MiB all-reduce on 4 ranks); a phase with neither; compute of 2 days; the
 * shipped 256-GPU workload on an 8-GPU box. Expectation: the step is 5.5 + 11 s (the all-reduce
 * hidden); no collectives and no compute is exit 2 naming the path, 2 days too; the shipped
 * file parses (the error is the layout's 256 ranks, not the file). */
static void
test_compute_phases(void)
{
    g_autofree char *path = write_workload(
        "fwd.json",
        "{ \"name\": \"dp4\", \"layout\": { \"tp\": 1, \"dp\": 4 }, \"phases\": [\n"
        "  { \"name\": \"fwd\", \"compute\": \"5.5 s\", \"collectives\": [] },\n"
        "  { \"name\": \"bwd\", \"compute\": \"11 s\", \"overlap\": true, \"collectives\": [\n"
        "    { \"op\": \"allreduce\", \"bytes\": \"256 MiB\", \"group\": \"dp\" } ] } ] }\n");
    g_autoptr(cJSON) plan = plan_json(path, "dgx-h100x8");
    const cJSON *cand = at(cJSON_GetObjectItem(plan, "candidates"), 0);
    g_assert_cmpfloat_with_epsilon(number(cand, "step_us"), 16.5e6, 1e-6);
    const cJSON *fwd = at(cJSON_GetObjectItem(cand, "phases"), 0);
    g_assert_cmpfloat(number(fwd, "comm_us"), ==, 0);
    g_assert_cmpint(cJSON_GetArraySize(cJSON_GetObjectItem(fwd, "collectives")), ==, 0);

    static const struct {
        const char *phase;
        const char *fragment;
    } bad[] = {
        { "{ \"name\": \"p\", \"collectives\": [] }",
          "phases[0].collectives: a phase lists at least one collective, or gives its "
          "\"compute\" time" },
        { "{ \"name\": \"p\", \"compute\": \"2 days\", \"collectives\": [] }",
          "phases[0].compute: \"2 days\" is not a compute time of 0 to 1 day" },
        { "{ \"name\": \"p\", \"compute\": \"90000 s\", \"collectives\": [] }",
          "phases[0].compute: \"90000 s\" is not a compute time of 0 to 1 day" },
    };
    for (gsize i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_autofree char *json = g_strdup_printf(
            "{ \"name\": \"x\", \"layout\": { \"tp\": 1, \"dp\": 2 }, \"phases\": [ %s ] }",
            bad[i].phase);
        g_autofree char *name = g_strdup_printf("compute-bad-%" G_GSIZE_FORMAT ".json", i);
        g_autofree char *bpath = write_workload(name, json);
        const char *args[] = { "--workload", bpath, "--topo", "dgx-h100x8", NULL };
        g_auto(CsTestRun) r = cs_test_run_collsim("plan", args);
        g_assert_cmpint(r.status, ==, 2);
        g_assert_nonnull(strstr(r.err, bad[i].fragment));
    }

    g_autofree char *shipped = g_test_build_filename(G_TEST_DIST, "..", "examples", "workloads",
                                                     "dp-70b-256gpu.json", NULL);
    const char *args[] = { "--workload", shipped, "--topo", "dgx-h100x8", NULL };
    g_auto(CsTestRun) r = cs_test_run_collsim("plan", args);
    g_assert_cmpint(r.status, ==, 2);
    g_assert_nonnull(strstr(r.err, "tp 1 x dp 256 x pp 1 = 256"));
}

/* Setup: the TP 8 x DP 2 workload (two collectives) on two candidates (--set
 * network.nics_per_node=8,4), with --progress on one thread, then two, then --quiet.
 * Expectation: forced, a line per collective of a candidate on stderr, "k/4 collectives
 * (CANDIDATE: OP SIZE on GROUP)", on one thread in item order (the first collective of each
 * candidate, then the second of each), counted 1..4 on two;
 * standard output as with --quiet (but for the command it echoes), which prints nothing on
 * stderr; both flags at once are a usage error. */
static void
test_progress(void)
{
    g_autofree char *path = write_workload("tp-dp-progress.json", tp_dp_workload);
    const char *loud[] = { "--workload", path,
                           "--topo",     "hgx-h100x8-2n",
                           "--set",      "network.nics_per_node=8,4",
                           "--progress", "--jobs",
                           "1",          NULL };
    const char *threads[] = { "--workload", path,
                              "--topo",     "hgx-h100x8-2n",
                              "--set",      "network.nics_per_node=8,4",
                              "--progress", "--jobs",
                              "2",          NULL };
    const char *quiet[]
        = { "--workload", path, "--topo", "hgx-h100x8-2n", "--set", "network.nics_per_node=8,4",
            "--quiet",    NULL };
    const char *both[]
        = { "--workload", path, "--topo", "hgx-h100x8-2n", "--progress", "--quiet", NULL };
    g_auto(CsTestRun) a = cs_test_run_collsim("plan", loud);
    g_auto(CsTestRun) b = cs_test_run_collsim("plan", quiet);
    g_auto(CsTestRun) c = cs_test_run_collsim("plan", threads);
    g_auto(CsTestRun) d = cs_test_run_collsim("plan", both);
    g_assert_cmpint(a.status, ==, 0);
    g_assert_cmpint(b.status, ==, 0);
    g_assert_cmpint(c.status, ==, 0);
    g_assert_cmpint(d.status, ==, 2);
    g_assert_nonnull(strstr(d.err, "--progress and --quiet contradict each other"));

    g_auto(GStrv) lines = g_strsplit(a.err, "\n", -1);
    g_assert_cmpuint(g_strv_length(lines), ==, 4 + 1);
    /* Candidates interleave: each candidate's collectives in order, one after the other. */
    g_assert_nonnull(strstr(lines[0], "plan: 1/4 collectives (hgx-h100x8-2n "
                                      "[network.nics_per_node=8]: allreduce 64 MiB on tp), "));
    g_assert_nonnull(strstr(lines[1], "plan: 2/4 collectives (hgx-h100x8-2n "
                                      "[network.nics_per_node=4]: allreduce 64 MiB on tp), "));
    g_assert_nonnull(strstr(lines[2], "plan: 3/4 collectives (hgx-h100x8-2n "
                                      "[network.nics_per_node=8]: allreduce 1 GiB on dp), "));
    g_assert_nonnull(strstr(lines[3], "plan: 4/4 collectives (hgx-h100x8-2n "
                                      "[network.nics_per_node=4]: allreduce 1 GiB on dp), "));
    g_assert_nonnull(strstr(lines[3], "about 0 s left"));
    g_assert_cmpstr(b.err, ==, "");
    g_auto(GStrv) counted = g_strsplit(c.err, "\n", -1);
    g_assert_cmpuint(g_strv_length(counted), ==, 4 + 1);
    for (int i = 0; i < 4; i++) {
        g_autofree char *k = g_strdup_printf("plan: %d/4 collectives (", i + 1);
        g_assert_nonnull(strstr(counted[i], k));
    }
    g_assert_cmpstr(c.out, ==, a.out);
    cs_test_assert_same_but_command(a.out, b.out);
}

/* Setup: Megatron's TP 8 x DP 2 workload written twice: with its figures (50331648 bytes, 144
 * per pass, 2075000000 bytes) and as formulas of a "model" (b s h 2, 2 x layers, params / tp x
 * 2), plus a datatype. Expectation: the same plan, every collective's bytes, count, time and
 * algorithm; bfloat16 moves the same bytes. */
static void
test_formulas(void)
{
    g_autofree char *figures = write_workload(
        "figures.json",
        "{ \"name\": \"m\", \"layout\": { \"tp\": 8, \"dp\": 2 }, \"phases\": [ { \"name\": "
        "\"fwd\", \"collectives\": [ { \"op\": \"allreduce\", \"bytes\": 50331648, \"count\": "
        "144, \"group\": \"tp\" } ] }, { \"name\": \"bwd\", \"collectives\": [ { \"op\": "
        "\"allreduce\", \"bytes\": \"2075000000\", \"group\": \"dp\" } ] } ] }");
    g_autofree char *formulas = write_workload(
        "formulas.json",
        "{ \"name\": \"m\", \"layout\": { \"tp\": 8, \"dp\": 2 }, \"model\": { \"b\": 8, "
        "\"s\": 1024, \"h\": 3072, \"layers\": 72, \"params\": 8.3e9, \"tp\": 8 }, "
        "\"phases\": [ { \"name\": \"fwd\", \"collectives\": [ { \"op\": \"allreduce\", "
        "\"bytes\": \"b * s * h * 2\", \"count\": \"2 * layers\", \"datatype\": \"bfloat16\", "
        "\"group\": \"tp\" } ] }, { \"name\": \"bwd\", \"collectives\": [ { \"op\": "
        "\"allreduce\", \"bytes\": \"params / tp * 2\", \"datatype\": \"bfloat16\", \"group\": "
        "\"dp\" } ] } ] }");
    g_autoptr(cJSON) a = plan_json(figures, "hgx-h100x8-2n");
    g_autoptr(cJSON) b = plan_json(formulas, "hgx-h100x8-2n");
    const cJSON *pa = cJSON_GetObjectItem(at(cJSON_GetObjectItem(a, "candidates"), 0), "phases");
    const cJSON *pb = cJSON_GetObjectItem(at(cJSON_GetObjectItem(b, "candidates"), 0), "phases");
    for (int i = 0; i < 2; i++) {
        const cJSON *ca = at(cJSON_GetObjectItem(at(pa, i), "collectives"), 0);
        const cJSON *cb = at(cJSON_GetObjectItem(at(pb, i), "collectives"), 0);
        g_assert_cmpfloat(number(ca, "bytes"), ==, number(cb, "bytes"));
        g_assert_cmpfloat(number(ca, "count"), ==, number(cb, "count"));
        g_assert_cmpfloat(number(cb, "time_us"), >, 0);
        g_test_message("%s: float %.3f us, bfloat16 %.3f us", i == 0 ? "tp" : "dp",
                       number(ca, "time_us"), number(cb, "time_us"));
    }
    g_assert_cmpfloat(number(at(cJSON_GetObjectItem(at(pb, 0), "collectives"), 0), "count"), ==,
                      144);
    g_assert_cmpfloat(number(at(cJSON_GetObjectItem(at(pb, 1), "collectives"), 0), "bytes"), ==,
                      2075000000);
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_autoptr(GError) error = NULL;
    scratch = g_dir_make_tmp("collsim-plan-XXXXXX", &error);
    g_assert_no_error(error);
    g_test_add_func("/cli/plan/matches-run", test_matches_run);
    g_test_add_func("/cli/plan/overlap-one-rank", test_overlap_and_one_rank);
    g_test_add_func("/cli/plan/csv-table", test_csv_and_table);
    g_test_add_func("/cli/plan/concurrent-groups", test_concurrent_groups);
    g_test_add_func("/cli/plan/layout-groups", test_layout_groups);
    g_test_add_func("/cli/plan/pp-sendrecv", test_pp_sendrecv);
    g_test_add_func("/cli/plan/shipped-workloads", test_shipped_workloads);
    g_test_add_func("/cli/plan/csv-quoting", test_csv_quoting);
    g_test_add_func("/cli/plan/bad-workloads", test_bad_workloads);
    g_test_add_func("/cli/plan/too-few-ranks", test_too_few_ranks);
    g_test_add_func("/cli/plan/bottlenecks", test_bottlenecks);
    g_test_add_func("/cli/plan/rail-breaks", test_rail_breaks);
    g_test_add_func("/cli/plan/prices", test_prices);
    g_test_add_func("/cli/plan/prices/topology-block", test_price_block);
    g_test_add_func("/cli/plan/prices/overrides", test_price_overrides);
    g_test_add_func("/cli/plan/prices/counts-rails", test_price_counts_rails);
    g_test_add_func("/cli/plan/prices/errors", test_price_errors);
    g_test_add_func("/cli/plan/compute-phases", test_compute_phases);
    g_test_add_func("/cli/plan/progress", test_progress);
    g_test_add_func("/cli/plan/formulas", test_formulas);
    int status = g_test_run();
    g_autoptr(GDir) dir = g_dir_open(scratch, 0, NULL);
    for (const char *entry = dir != NULL ? g_dir_read_name(dir) : NULL; entry != NULL;
         entry = g_dir_read_name(dir)) {
        g_autofree char *p = g_build_filename(scratch, entry, NULL);
        g_remove(p);
    }
    g_rmdir(scratch);
    g_free(scratch);
    return status;
}
