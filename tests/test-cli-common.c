// SPDX-License-Identifier: MIT
/* Tests of cli_common.c: flags with units land in their targets through the short and the long
 * spelling, and every bad flag or value becomes one usage error naming the command and flag. */
#include "config.h"

#include <string.h>

#include <glib/gstdio.h>

#include "cli/cli.h"
#include "base/units.h"

typedef struct {
    gint64 min_bytes;
    gint64 iters;
    double alpha_s;
    double bw_Bps;
    gboolean verbose;
} Opts;

/* Parses @args (argv[0] included) into @o; leaves the remaining arguments in *@rest. */
static gboolean
parse(const char *const *args, Opts *o, GStrv *rest, GError **error)
{
    const GOptionEntry entries[] = {
        { "minbytes", 'b', 0, G_OPTION_ARG_CALLBACK, CS_CLI_ARG_FUNC(cs_cli_parse_size_arg),
          "Smallest size", "SIZE" },
        { "iters", 'n', 0, G_OPTION_ARG_CALLBACK, CS_CLI_ARG_FUNC(cs_cli_parse_count_arg),
          "Iterations", "N" },
        { "alpha", 'a', 0, G_OPTION_ARG_CALLBACK, CS_CLI_ARG_FUNC(cs_cli_parse_time_arg), "Latency",
          "TIME" },
        { "bandwidth", 0, 0, G_OPTION_ARG_CALLBACK, CS_CLI_ARG_FUNC(cs_cli_parse_bandwidth_arg),
          "Bandwidth", "BW" },
        { "verbose", 'v', 0, G_OPTION_ARG_NONE, &o->verbose, "More", NULL },
        G_OPTION_ENTRY_NULL,
    };
    const CsCliUnitTarget targets[] = {
        { "minbytes", &o->min_bytes }, { "iters", &o->iters }, { "alpha", &o->alpha_s },
        { "bandwidth", &o->bw_Bps },   { NULL, NULL },
    };
    /* GOption rearranges argv: hand it a copy it may own. */
    char **argv = g_strdupv((char **)args);
    int argc = (int)g_strv_length(argv);
    char **orig = g_memdup2(argv, sizeof(char *) * (argc + 1));

    gboolean ok = cs_cli_parse_units(&argc, &argv, entries, targets, "[FILE...]", "Summary.",
                                     "Description.", error);
    if (rest != NULL)
        *rest = g_strdupv(argv);
    /* argv now holds a subset of the original pointers; free every string once. */
    g_free(argv);
    g_strfreev(orig);
    return ok;
}

static void
test_targets(void)
{
    Opts o = { 0 };
    g_auto(GStrv) rest = NULL;
    g_autoptr(GError) error = NULL;
    const char *const args[]
        = { "collsim x", "-b",          "64K",     "--iters=20", "file.txt", "-a",
            "0.8us",     "--bandwidth", "400Gb/s", "-v",         NULL };

    g_assert_true(parse(args, &o, &rest, &error));
    g_assert_no_error(error);
    /* 64K = 65536 B; 0.8 us = 8e-7 s; 400 Gb/s = 400e9 / 8 = 5e10 B/s */
    g_assert_cmpint(o.min_bytes, ==, 65536);
    g_assert_cmpint(o.iters, ==, 20);
    g_assert_cmpfloat_with_epsilon(o.alpha_s, 8e-7, 1e-20);
    g_assert_cmpfloat_with_epsilon(o.bw_Bps, 5e10, 1e-3);
    g_assert_true(o.verbose);
    /* The operand stays for the caller, after argv[0]. */
    g_assert_cmpint(g_strv_length(rest), ==, 2);
    g_assert_cmpstr(rest[0], ==, "collsim x");
    g_assert_cmpstr(rest[1], ==, "file.txt");
}

static void
test_long_and_short_same_target(void)
{
    Opts a = { 0 }, b = { 0 };
    const char *const long_args[] = { "collsim x", "--minbytes", "1G", NULL };
    const char *const short_args[] = { "collsim x", "-b", "1G", NULL };

    g_assert_true(parse(long_args, &a, NULL, NULL));
    g_assert_true(parse(short_args, &b, NULL, NULL));
    g_assert_cmpint(a.min_bytes, ==, G_GINT64_CONSTANT(1) << 30);
    g_assert_cmpint(b.min_bytes, ==, a.min_bytes);
}

typedef struct {
    const char *flag;
    const char *value;
    const char *message; /* the whole message */
} BadCase;

static void
test_usage_errors(void)
{
    g_test_summary("Bad values and unknown flags are CS_CLI_ERROR_USAGE (exit 2) whose "
                   "message starts with the command, then the flag as typed.");
    static const BadCase cases[] = {
        { "-b", "8X",
          "collsim x: -b: \"8X\" is not a size (expected e.g. \"8\", \"8K\", "
          "\"8 MiB\")" },
        { "--alpha", "10",
          "collsim x: --alpha: \"10\" is not a time: the unit is missing "
          "(expected e.g. \"10 us\", \"10 ns\")" },
        { "--bandwidth", "400 GB",
          "collsim x: --bandwidth: \"400 GB\" is not a bandwidth "
          "(expected e.g. \"400 GB/s\", \"400 Gb/s\")" },
        { "-n", "0", "collsim x: -n: \"0\" is not a count: it must be at least 1" },
        { "--nope", NULL, "collsim x: Unknown option --nope" },
    };

    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        Opts o = { .min_bytes = 7 };
        g_autoptr(GError) error = NULL;
        const char *const args[] = { "collsim x", cases[i].flag, cases[i].value, NULL };

        g_assert_false(parse(args, &o, NULL, &error));
        g_assert_error(error, CS_CLI_ERROR, CS_CLI_ERROR_USAGE);
        g_assert_cmpstr(error->message, ==, cases[i].message);
    }
}

static void
test_missing_value(void)
{
    Opts o = { 0 };
    g_autoptr(GError) error = NULL;
    const char *const args[] = { "collsim x", "-b", NULL };

    g_assert_false(parse(args, &o, NULL, &error));
    g_assert_error(error, CS_CLI_ERROR, CS_CLI_ERROR_USAGE);
    g_assert_true(g_str_has_prefix(error->message, "collsim x: "));
    g_assert_nonnull(strstr(error->message, "-b"));
}

static void
test_plain_parse(void)
{
    gboolean flag = FALSE;
    const GOptionEntry entries[] = {
        { "flag", 0, 0, G_OPTION_ARG_NONE, &flag, "A flag", NULL },
        G_OPTION_ENTRY_NULL,
    };
    char *args[] = { "collsim y", "--flag", NULL };
    char **argv = args;
    int argc = 2;
    g_autoptr(GError) error = NULL;

    g_assert_true(cs_cli_parse(&argc, &argv, entries, "", NULL, NULL, &error));
    g_assert_no_error(error);
    g_assert_true(flag);
    g_assert_cmpint(argc, ==, 1);
}

/* Setup: a scratch directory D. Expectation: D itself and D/missing/f are refused before
 * anything is written, each message naming the flag and the path the user gave (GLib's own
 * writer would name a temporary "f.XXXXXX"); D/f gets the bytes; NULL and "-" are stdout. */
static void
test_output_files(void)
{
    g_autoptr(GError) error = NULL;
    g_autofree char *dir = g_dir_make_tmp("cli-common-XXXXXX", &error);
    g_assert_no_error(error);
    g_autofree char *missing = g_build_filename(dir, "missing", "f", NULL);
    g_autofree char *file = g_build_filename(dir, "f", NULL);

    g_assert_true(cs_cli_check_output("collsim x", "--output", NULL, &error));
    g_assert_true(cs_cli_check_output("collsim x", "--output", "-", &error));
    g_assert_true(cs_cli_check_output("collsim x", "--output", file, &error));
    g_assert_no_error(error);

    g_assert_false(cs_cli_check_output("collsim x", "--output", dir, &error));
    g_assert_error(error, CS_CLI_ERROR, CS_CLI_ERROR_INPUT);
    g_autofree char *want_dir = g_strdup_printf("collsim x: --output %s: is a directory", dir);
    g_assert_cmpstr(error->message, ==, want_dir);
    g_clear_error(&error);

    g_assert_false(cs_cli_write_output("collsim x", "--timeline", missing, "x", -1, &error));
    g_assert_error(error, CS_CLI_ERROR, CS_CLI_ERROR_INPUT);
    g_autofree char *want_missing
        = g_strdup_printf("collsim x: --timeline %s: no such directory", missing);
    g_assert_cmpstr(error->message, ==, want_missing);
    g_clear_error(&error);

    g_assert_true(cs_cli_write_output("collsim x", "--output", file, "abc\n", 2, &error));
    g_assert_no_error(error);
    g_autofree char *text = NULL;
    g_file_get_contents(file, &text, NULL, &error);
    g_assert_no_error(error);
    g_assert_cmpstr(text, ==, "ab");
    g_remove(file);
    g_rmdir(dir);
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);

    g_test_add_func("/cli/common/targets", test_targets);
    g_test_add_func("/cli/common/long-and-short", test_long_and_short_same_target);
    g_test_add_func("/cli/common/usage-errors", test_usage_errors);
    g_test_add_func("/cli/common/missing-value", test_missing_value);
    g_test_add_func("/cli/common/plain", test_plain_parse);
    g_test_add_func("/cli/common/output-files", test_output_files);
    return g_test_run();
}
