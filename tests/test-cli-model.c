// SPDX-License-Identifier: MIT
/* Tests of `collsim model`, run as users run it ($COLLSIM_BIN): the text table byte for byte
 * against tests/golden/, the CSV and JSON values against hand derivations, and usage errors.
 * COLLSIM_UPDATE_GOLDEN=1 rewrites the golden file instead of comparing (review the diff). */
#include "config.h"

#include <math.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <glib.h>
#include "test-util.h"

/* ---- Golden ---- */

static void
test_golden(void)
{
    g_test_summary("The seed article's H100 example, alpha = 10 us, B = 900 GB/s, 8 B to 8 GiB. "
                   "Rows checked by hand: 8 B: n beta = 8/9e11 = 8.89 ps, alpha/(n beta) = "
                   "1125000; 1 KiB: 1.14 ns, 8789x (the article rounds to 10,000x); 1 GiB: "
                   "1.19 ms, n*beta 119x (the article says 100x), n/T = 2^30/1.203e-3 = 893 GB/s; "
                   "n_1/2 = 10e-6 * 9e11 = 9000000 B, between the 8 MiB and 16 MiB rows.");
    const char *const args[] = { "--alpha", "10us", "--bandwidth", "900GB/s", NULL };
    g_autofree char *path
        = g_test_build_filename(G_TEST_DIST, "golden", "model-10us-900GBps.txt", NULL);
    CsTestRun r = cs_test_run_collsim("model", args);

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
    g_assert_cmpstr(r.out, ==, want);
    cs_test_run_clear(&r);
}

/* ---- CSV and JSON ---- */

static void
test_csv(void)
{
    /* 400 Gb/s = 5e10 B/s, alpha = 2 us, rows 1 MiB and 4 MiB (-f 4; 16 MiB > -e):
     *   1 MiB: n beta = 1048576 / 5e10 = 20.97152e-6 s, T = 22.97152e-6 s,
     *          n*beta / alpha = 10.48576, n/T = 1048576 / 22.97152e-6 B/s
     *   4 MiB: n beta = 83.88608e-6 s, T = 85.88608e-6 s, ratio 41.94304 */
    const char *const args[] = { "--alpha", "2us", "--bandwidth", "400Gb/s",  "-b",  "1M", "-e",
                                 "4M",      "-f",  "4",           "--format", "csv", NULL };
    static const double want[2][5] = {
        { 1048576, 20.97152e-6, 10.48576, 22.97152e-6, 1048576 / 22.97152e-6 / 1e9 },
        { 4194304, 83.88608e-6, 41.94304, 85.88608e-6, 4194304 / 85.88608e-6 / 1e9 },
    };
    CsTestRun r = cs_test_run_collsim("model", args);

    g_assert_cmpint(r.status, ==, 0);
    g_auto(GStrv) lines = g_strsplit(r.out, "\n", -1);
    g_assert_cmpuint(g_strv_length(lines), ==, 4); /* header, 2 rows, "" after the last \n */
    g_assert_cmpstr(lines[0], ==,
                    "size_bytes,alpha_s,nbeta_s,dominant,ratio,time_s,bandwidth_GBps");
    for (int i = 0; i < 2; i++) {
        g_auto(GStrv) f = g_strsplit(lines[i + 1], ",", -1);
        g_assert_cmpuint(g_strv_length(f), ==, 7);
        g_assert_cmpfloat(g_ascii_strtod(f[0], NULL), ==, want[i][0]);
        g_assert_cmpfloat_with_epsilon(g_ascii_strtod(f[1], NULL), 2e-6, 1e-15);
        g_assert_cmpfloat_with_epsilon(g_ascii_strtod(f[2], NULL), want[i][1], 1e-14);
        g_assert_cmpstr(f[3], ==, "n*beta");
        g_assert_cmpfloat_with_epsilon(g_ascii_strtod(f[4], NULL), want[i][2], 1e-7);
        g_assert_cmpfloat_with_epsilon(g_ascii_strtod(f[5], NULL), want[i][3], 1e-14);
        g_assert_cmpfloat_with_epsilon(g_ascii_strtod(f[6], NULL), want[i][4], 1e-6);
    }
    cs_test_run_clear(&r);
}

static void
test_json(void)
{
    /* Defaults: 8 B (2^3) to 8 GiB (2^33) by 2 = 31 rows; B = 450 GB/s per direction, so
     * n_1/2 = 10e-6 * 450e9 = 4.5e6 B and beta = 1/4.5e11 s/B. Row 17 is 2^20 = 1 MiB: n beta =
     * 2.3301689e-6 < alpha. --textbook changes nothing: the table is Hockney's. */
    const char *const args[] = { "--format", "json", "--textbook", NULL };
    CsTestRun r = cs_test_run_collsim("model", args);

    g_assert_cmpint(r.status, ==, 0);
    cJSON *root = cJSON_Parse(r.out);
    g_assert_nonnull(root);
    g_assert_cmpfloat(cJSON_GetObjectItem(root, "n_half_bytes")->valuedouble, ==, 4.5e6);
    g_assert_cmpfloat_with_epsilon(cJSON_GetObjectItem(root, "beta_s_per_byte")->valuedouble,
                                   1.0 / 4.5e11, 1e-24);
    cJSON *rows = cJSON_GetObjectItem(root, "rows");
    g_assert_cmpint(cJSON_GetArraySize(rows), ==, 31);
    cJSON *mib = cJSON_GetArrayItem(rows, 17);
    g_assert_cmpfloat(cJSON_GetObjectItem(mib, "size_bytes")->valuedouble, ==, 1048576);
    g_assert_cmpstr(cJSON_GetObjectItem(mib, "dominant")->valuestring, ==, "alpha");
    g_assert_cmpfloat_with_epsilon(cJSON_GetObjectItem(mib, "nbeta_s")->valuedouble,
                                   1048576 / 4.5e11, 1e-18);
    cJSON *last = cJSON_GetArrayItem(rows, 30);
    g_assert_cmpfloat(cJSON_GetObjectItem(last, "size_bytes")->valuedouble, ==, 8589934592.0);
    g_assert_cmpstr(cJSON_GetObjectItem(last, "dominant")->valuestring, ==, "n*beta");
    cJSON_Delete(root);
    cs_test_run_clear(&r);
}

/* ---- Errors and help ---- */

typedef struct {
    const char *args[7];
    const char *message; /* first stderr line */
} BadCase;

static void
test_usage_errors(void)
{
    g_test_summary("Bad flags exit 2 with one line naming the flag, then the --help hint; "
                   "nothing goes to stdout.");
    static const BadCase cases[] = {
        { { "--alpha", "10", NULL },
          "collsim model: --alpha: \"10\" is not a time: the unit is missing "
          "(expected e.g. \"10 us\", \"10 ns\")" },
        { { "--bandwidth", "400 GB", NULL },
          "collsim model: --bandwidth: \"400 GB\" is not a bandwidth "
          "(expected e.g. \"400 GB/s\", \"400 Gb/s\")" },
        { { "-e", "8X", NULL },
          "collsim model: -e: \"8X\" is not a size (expected e.g. \"8\", \"8K\", \"8 MiB\")" },
        { { "-b", "16", "-e", "8", NULL }, "collsim model: -b 16 is larger than -e 8" },
        { { "-f", "1", NULL }, "collsim model: -f: the step factor must be at least 2" },
        { { "-b", "0", NULL }, "collsim model: -b: the smallest size must be at least 1 byte" },
        { { "--format", "xml", NULL },
          "collsim model: --format: unknown format 'xml' (expected text, csv or json)" },
        { { "stray", NULL }, "collsim model: unexpected argument 'stray'" },
        { { "--bogus", NULL }, "collsim model: Unknown option --bogus" },
    };

    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        CsTestRun r = cs_test_run_collsim("model", cases[i].args);
        g_autofree char *want
            = g_strdup_printf("%s\nTry 'collsim model --help'\n", cases[i].message);
        g_assert_cmpint(r.status, ==, 2);
        g_assert_cmpstr(r.out, ==, "");
        g_assert_cmpstr(r.err, ==, want);
        cs_test_run_clear(&r);
    }
}

static void
test_help(void)
{
    const char *const args[] = { "--help", NULL };
    CsTestRun r = cs_test_run_collsim("model", args);

    g_assert_cmpint(r.status, ==, 0);
    g_assert_nonnull(strstr(r.out, "--alpha=TIME"));
    g_assert_nonnull(strstr(r.out, "--bandwidth=BANDWIDTH"));
    g_assert_nonnull(strstr(r.out, "-b, --minbytes=SIZE"));
    g_assert_nonnull(strstr(r.out, "n_1/2 = alpha * B"));
    cs_test_run_clear(&r);
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);

    g_test_add_func("/cli/model/golden/10us-900GBps", test_golden);
    g_test_add_func("/cli/model/csv", test_csv);
    g_test_add_func("/cli/model/json", test_json);
    g_test_add_func("/cli/model/usage-errors", test_usage_errors);
    g_test_add_func("/cli/model/help", test_help);
    return g_test_run();
}
