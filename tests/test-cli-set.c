// SPDX-License-Identifier: MIT
/* `--set PATH=VALUE` what-ifs on the commands that take a topology, run as users run them
 * ($COLLSIM_BIN): a what-if equals the same file edited by hand, changes the prediction where
 * the edited part binds and leaves it alone where it does not, and plan sweeps a list of
 * values. Error lines are in tests/data/cli-errors/cases. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <glib.h>
#include <glib/gstdio.h>

#include "test-util.h"

static char *scratch;

/* A copy of the shipped topology @name in the scratch folder, @from replaced by @to once.
 * (transfer full): its path. */
static char *
edited_copy(const char *name, const char *from, const char *to)
{
    g_autoptr(GError) error = NULL;
    g_autofree char *file = g_strconcat(name, ".json", NULL);
    g_autofree char *src = g_build_filename(g_getenv("COLLSIM_TOPO_PATH"), file, NULL);
    g_autofree char *text = NULL;
    g_file_get_contents(src, &text, NULL, &error);
    g_assert_no_error(error);
    g_autoptr(GString) s = g_string_new(text);
    g_assert_cmpuint(g_string_replace(s, from, to, 1), ==, 1);
    char *path = g_build_filename(scratch, file, NULL);
    g_file_set_contents(path, s->str, -1, &error);
    g_assert_no_error(error);
    return path;
}

/* Runs collsim and asserts it succeeded quietly. (transfer full): its standard output. */
static char *
run_ok(const char *subcommand, const char *const *args)
{
    g_auto(CsTestRun) r = cs_test_run_collsim(subcommand, args);
    if (r.status != 0)
        g_test_message("stderr: %s", r.err);
    g_assert_cmpint(r.status, ==, 0);
    g_assert_cmpstr(r.err, ==, "");
    return g_steal_pointer(&r.out);
}

/* The time (us) of the "best" row of `collsim run --format csv` output @csv (one size). */
static double
best_time_us(const char *csv)
{
    g_auto(GStrv) lines = g_strsplit(csv, "\n", -1);
    for (char **l = lines; *l != NULL; l++) {
        if (!g_str_has_prefix(*l, "best,"))
            continue;
        g_auto(GStrv) f = g_strsplit(*l, ",", -1);
        g_assert_cmpuint(g_strv_length(f), >, 9);
        return g_ascii_strtod(f[9], NULL);
    }
    g_assert_not_reached();
    return 0;
}

/* @text with every occurrence of @from replaced by @to. (transfer full) */
static char *
replaced(const char *text, const char *from, const char *to)
{
    g_autoptr(GString) s = g_string_new(text);
    g_string_replace(s, from, to, 0);
    return g_string_free(g_steal_pointer(&s), FALSE);
}

/* @text without its "# command: ..." line (which differs between runs that predict the same).
 * (transfer full) */
static char *
without_command(const char *text)
{
    g_autoptr(GString) s = g_string_new(NULL);
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    for (char **l = lines; *l != NULL; l++)
        if (!g_str_has_prefix(*l, "# command: "))
            g_string_append_printf(s, "%s%s", *l, l[1] != NULL ? "\n" : "");
    return g_string_free(g_steal_pointer(&s), FALSE);
}

/* ---- run ---- */

static void
test_run_changes_answer(void)
{
    g_test_summary("Setup: oci-h100x8-2n-roce (16 x 200 Gb/s RoCE per node: 25 GB/s per NIC, "
                   "below the 48 GB/s PCIe Gen5 link in front of it), all-reduce of 1 GiB. "
                   "Expectation: --set network.nic_bandwidth=400Gb/s predicts a shorter time, the "
                   "same as the file with \"200 Gb/s\" edited to \"400 Gb/s\" by hand");
    const char *plain_args[]
        = { "--topo", "oci-h100x8-2n-roce", "-b", "1G", "-e", "1G", "--format", "csv", NULL };
    const char *set_args[]
        = { "--topo", "oci-h100x8-2n-roce", "-b",  "1G",    "-e",
            "1G",     "--format",           "csv", "--set", "network.nic_bandwidth=400Gb/s",
            NULL };
    g_autofree char *file = edited_copy("oci-h100x8-2n-roce", "\"200 Gb/s\"", "\"400 Gb/s\"");
    const char *file_args[] = { "--topo", file, "-b", "1G", "-e", "1G", "--format", "csv", NULL };
    g_autofree char *plain = run_ok(NULL, plain_args);
    g_autofree char *set = run_ok(NULL, set_args);
    g_autofree char *edited = run_ok(NULL, file_args);
    const double t_plain = best_time_us(plain);
    const double t_set = best_time_us(set);
    g_assert_cmpfloat(t_set, <, t_plain * 0.99);
    g_assert_cmpstr(set, ==, edited);
}

static void
test_run_must_not_change(void)
{
    g_test_summary("Setup: hgx-h100x8-2n, 8 x 400 Gb/s NDR (50 GB/s) per node, each NIC behind "
                   "its GPU's PCIe Gen5 x16 link, 48 GB/s usable. Expectation: 800 Gb/s NICs "
                   "leave a 1 GiB all-reduce's time as it is (PCIe binds, not the NIC); the "
                   "same rate written as 50GB/s changes no byte of the table but its header");
    const char *plain_args[] = { "--topo", "hgx-h100x8-2n", "-b", "1G", "-e", "1G", NULL };
    const char *double_args[] = {
        "--topo", "hgx-h100x8-2n", "-b", "1G", "-e", "1G", "--set", "network.nic_bandwidth=800Gb/s",
        NULL
    };
    const char *same_args[] = {
        "--topo", "hgx-h100x8-2n", "-b", "1G", "-e", "1G", "--set", "network.nic_bandwidth=50GB/s",
        NULL
    };
    g_autofree char *plain = run_ok(NULL, plain_args);
    g_autofree char *doubled = run_ok(NULL, double_args);
    g_autofree char *same = run_ok(NULL, same_args);
    g_assert_nonnull(strstr(doubled, "hgx-h100x8-2n [network.nic_bandwidth=800Gb/s]"));
    g_autofree char *a0 = replaced(doubled, " [network.nic_bandwidth=800Gb/s]", "");
    g_autofree char *b0 = replaced(same, " [network.nic_bandwidth=50GB/s]", "");
    g_autofree char *a = without_command(a0);
    g_autofree char *b = without_command(b0);
    g_autofree char *p = without_command(plain);
    g_assert_cmpstr(a, ==, p);
    g_assert_cmpstr(b, ==, p);
}

/* ---- select, explain, topo, validate ---- */

static void
test_select(void)
{
    g_test_summary("select with --set: its header names the what-if, and halving the NIC rate "
                   "changes the table as the hand-edited file does");
    const char *set_args[] = { "--topo", "hgx-h100x8-2n",
                               "--op",   "allreduce",
                               "-b",     "256M",
                               "-e",     "256M",
                               "--set",  "network.nic_bandwidth=200Gb/s",
                               NULL };
    g_autofree char *file = edited_copy("hgx-h100x8-2n", "\"400 Gb/s\"", "\"200 Gb/s\"");
    const char *file_args[]
        = { "--topo", file, "--op", "allreduce", "-b", "256M", "-e", "256M", NULL };
    const char *plain_args[]
        = { "--topo", "hgx-h100x8-2n", "--op", "allreduce", "-b", "256M", "-e", "256M", NULL };
    g_autofree char *set = run_ok("select", set_args);
    g_autofree char *edited = run_ok("select", file_args);
    g_autofree char *plain = run_ok("select", plain_args);
    /* The first line names the topology: "hgx-h100x8-2n [...]", or the copy by its name. */
    g_autofree char *a = replaced(set, "hgx-h100x8-2n [network.nic_bandwidth=200Gb/s]", "T");
    g_autofree char *b = replaced(edited, "hgx-h100x8-2n", "T");
    g_autofree char *c = replaced(plain, "hgx-h100x8-2n", "T");
    g_assert_true(g_str_has_prefix(set, "# collsim "));
    g_assert_nonnull(
        strstr(set, " select: hgx-h100x8-2n [network.nic_bandwidth=200Gb/s], 16 ranks"));
    g_assert_cmpstr(a, ==, b);
    g_assert_cmpstr(a, !=, c);
}

static void
test_explain(void)
{
    g_test_summary("explain with --set names the what-if in its header");
    const char *args[]
        = { "--topo", "hgx-h100x8-2n", "--op",  "allreduce",           "--algo", "ring",
            "--size", "64M",           "--set", "node.gpu.launch=3us", NULL };
    g_autofree char *out = run_ok("explain", args);
    g_assert_nonnull(strstr(out, "hgx-h100x8-2n [node.gpu.launch=3us]"));
}

static void
test_topo_show_and_check(void)
{
    g_test_summary("topo show with --set: the NIC links at the new rate; 4 NICs per node with "
                   "nics_per_node=4; topo check applies the edits to each topology");
    const char *bw[] = { "hgx-h100x8-2n", "--set", "network.nic_bandwidth=800Gb/s", NULL };
    g_autofree char *out = run_ok("topo", (const char *[]){ "show", bw[0], bw[1], bw[2], NULL });
    g_assert_true(g_str_has_prefix(out, "hgx-h100x8-2n [network.nic_bandwidth=800Gb/s] ("));
    g_assert_nonnull(strstr(out, "  ib            16      1     100 GB/s     100 GB/s"));
    g_assert_null(strstr(out, "50.0 GB/s"));
    g_autofree char *four = run_ok(
        "topo", (const char *[]){ "show", "hgx-h100x8-2n", "--set=network.nics_per_node=4", NULL });
    g_assert_nonnull(strstr(four, "      8  nic         ConnectX-7 400 Gb/s NDR\n"));
    g_autofree char *check
        = run_ok("topo", (const char *[]){ "check", "hgx-h100x8-2n", "hgx-h100x8-16n", "--set",
                                           "network.nics_per_node=4", NULL });
    /* Directed links: per node 8 NVSwitch + 8 PCIe, both ways (32); per NIC one to its rail
     * and back (2 x 4); per rail one to the spine and back (2 x 4). 2 nodes: 64 + 16 + 8 = 88;
     * 16 nodes: 512 + 128 + 8 = 648. */
    g_assert_cmpstr(check, ==,
                    "hgx-h100x8-2n: ok (16 GPUs, 88 links)\n"
                    "hgx-h100x8-16n: ok (128 GPUs, 648 links)\n");
}

static void
test_validate(void)
{
    g_test_summary("validate with --set: the JSON names the what-if, and doubling the RoCE NICs "
                   "of oci-h100x8-2n-roce shortens every predicted time of its 2-node trace");
    g_autofree char *trace = g_build_filename(
        g_getenv("COLLSIM_SOURCE_ROOT"), "traces",
        "h100-sxm-8gpu-x2-oci-roce-16x200g_allreduce_nccl2.21.5_partial.txt", NULL);
    const char *plain_args[] = { "--topo", "oci-h100x8-2n-roce", "--format", "json", trace, NULL };
    const char *set_args[] = { "--topo",   "oci-h100x8-2n-roce",
                               "--format", "json",
                               "--set",    "network.nic_bandwidth=400Gb/s",
                               trace,      NULL };
    g_autofree char *plain = run_ok("validate", plain_args);
    g_autofree char *set = run_ok("validate", set_args);
    cJSON *a = cJSON_Parse(plain);
    cJSON *b = cJSON_Parse(set);
    g_assert_nonnull(a);
    g_assert_nonnull(b);
    g_assert_cmpstr(cJSON_GetObjectItem(b, "topology")->valuestring, ==,
                    "oci-h100x8-2n-roce [network.nic_bandwidth=400Gb/s]");
    const cJSON *ra
        = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(a, "traces"), 0), "rows");
    const cJSON *rb
        = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(b, "traces"), 0), "rows");
    g_assert_cmpint(cJSON_GetArraySize(ra), ==, cJSON_GetArraySize(rb));
    g_assert_cmpint(cJSON_GetArraySize(ra), >, 0);
    for (int i = 0; i < cJSON_GetArraySize(ra); i++) {
        double pa = cJSON_GetObjectItem(cJSON_GetArrayItem(ra, i), "predicted_us")->valuedouble;
        double pb = cJSON_GetObjectItem(cJSON_GetArrayItem(rb, i), "predicted_us")->valuedouble;
        g_assert_cmpfloat(pb, <, pa);
    }
    cJSON_Delete(a);
    cJSON_Delete(b);
}

/* ---- plan ---- */

static void
test_plan_sweep(void)
{
    g_test_summary("plan --set network.nic_bandwidth=200Gb/s,400Gb/s,800Gb/s: three candidates "
                   "named after their values; 400 Gb/s is the shipped rate (the plain plan's "
                   "step); 200 Gb/s is slower; a second list makes every combination");
    /* One 64 MiB bucket: the network rate shows, and each candidate takes a fraction of a
     * second (the shipped 1 GiB buckets take seconds under the sanitizers). */
    g_autofree char *workload = g_build_filename(scratch, "dp-64m.json", NULL);
    g_autoptr(GError) error = NULL;
    g_file_set_contents(workload,
                        "{\"name\": \"dp 64 MiB\", \"layout\": {\"tp\": 1, \"dp\": 16}, "
                        "\"phases\": [{\"name\": \"gradients\", \"collectives\": "
                        "[{\"op\": \"allreduce\", \"bytes\": \"64 MiB\", \"group\": \"dp\"}]}]}",
                        -1, &error);
    g_assert_no_error(error);
    const char *sweep_args[]
        = { "--workload", workload, "--topo", "hgx-h100x8-2n",
            "--format",   "json",   "--set",  "network.nic_bandwidth=200Gb/s,400Gb/s,800Gb/s",
            NULL };
    const char *plain_args[]
        = { "--workload", workload, "--topo", "hgx-h100x8-2n", "--format", "json", NULL };
    g_autofree char *sweep = run_ok("plan", sweep_args);
    g_autofree char *plain = run_ok("plan", plain_args);
    cJSON *s = cJSON_Parse(sweep);
    cJSON *p = cJSON_Parse(plain);
    const cJSON *cands = cJSON_GetObjectItem(s, "candidates");
    g_assert_cmpint(cJSON_GetArraySize(cands), ==, 3);
    static const char *const rates[] = { "200Gb/s", "400Gb/s", "800Gb/s" };
    double step[3];
    for (int i = 0; i < 3; i++) {
        const cJSON *c = cJSON_GetArrayItem(cands, i);
        g_autofree char *label
            = g_strdup_printf("hgx-h100x8-2n [network.nic_bandwidth=%s]", rates[i]);
        g_assert_cmpstr(cJSON_GetObjectItem(c, "topology")->valuestring, ==, label);
        g_assert_cmpstr(cJSON_GetObjectItem(c, "name")->valuestring, ==, label);
        step[i] = cJSON_GetObjectItem(c, "step_us")->valuedouble;
    }
    const double plain_step
        = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(p, "candidates"), 0),
                              "step_us")
              ->valuedouble;
    g_assert_cmpfloat(step[1], ==, plain_step);
    g_assert_cmpfloat(step[0], >, step[1]);
    cJSON_Delete(s);
    cJSON_Delete(p);

    const char *two_args[] = { "--workload", workload,
                               "--topo",     "hgx-h100x8-2n",
                               "--topo",     "dgx-h100x8",
                               "--format",   "csv",
                               "--set",      "node.gpu.launch=3us,5us",
                               "--set",      "network.nic_bandwidth=200Gb/s,400Gb/s",
                               NULL };
    g_auto(CsTestRun) r = cs_test_run_collsim("plan", two_args);
    /* dgx-h100x8 is no template: its candidates fail on the first edit. */
    g_assert_cmpint(r.status, ==, 2);
    g_assert_nonnull(strstr(r.err, "--set node.gpu.launch=3us: no key \"node\""));
    const char *combo_args[] = { "--workload", workload,
                                 "--topo",     "hgx-h100x8-2n",
                                 "--format",   "csv",
                                 "--set",      "node.gpu.launch=3us,5us",
                                 "--set",      "network.nic_bandwidth=200Gb/s,400Gb/s",
                                 NULL };
    g_autofree char *csv = run_ok("plan", combo_args);
    /* Each label holds a comma, so CSV quotes it. */
    static const char *const order[]
        = { "\"hgx-h100x8-2n [node.gpu.launch=3us, network.nic_bandwidth=200Gb/s]\",step",
            "\"hgx-h100x8-2n [node.gpu.launch=3us, network.nic_bandwidth=400Gb/s]\",step",
            "\"hgx-h100x8-2n [node.gpu.launch=5us, network.nic_bandwidth=200Gb/s]\",step",
            "\"hgx-h100x8-2n [node.gpu.launch=5us, network.nic_bandwidth=400Gb/s]\",step" };
    const char *at = csv;
    for (gsize i = 0; i < G_N_ELEMENTS(order); i++) {
        at = strstr(at, order[i]);
        if (at == NULL)
            g_error("\"%s\" missing or out of order in:\n%s", order[i], csv);
    }
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_autoptr(GError) error = NULL;
    scratch = g_dir_make_tmp("collsim-cli-set-XXXXXX", &error);
    g_assert_no_error(error);
    g_test_add_func("/cli/set/run/changes-answer", test_run_changes_answer);
    g_test_add_func("/cli/set/run/must-not-change", test_run_must_not_change);
    g_test_add_func("/cli/set/select", test_select);
    g_test_add_func("/cli/set/explain", test_explain);
    g_test_add_func("/cli/set/topo-show-check", test_topo_show_and_check);
    g_test_add_func("/cli/set/validate", test_validate);
    g_test_add_func("/cli/set/plan-sweep", test_plan_sweep);
    int status = g_test_run();
    g_autoptr(GDir) dir = g_dir_open(scratch, 0, NULL);
    const char *name;
    while (dir != NULL && (name = g_dir_read_name(dir)) != NULL) {
        g_autofree char *path = g_build_filename(scratch, name, NULL);
        g_remove(path);
    }
    g_rmdir(scratch);
    g_free(scratch);
    return status;
}
