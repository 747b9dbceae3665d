// SPDX-License-Identifier: MIT
/* The memory budget (src/base/membudget.c) and what it refuses: COLLSIM_MEMORY_LIMIT, the
 * default from physical memory and resource limits, and points whose schedule or engine
 * arrays would not fit, refused with one line and exit 2 before they are allocated (issue
 * 32, item 6: they died in GLib's allocator, exit 133). */
#include "config.h"

#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "base/membudget.h"
#include "base/units.h"
#include "test-util.h"

/* Setup: COLLSIM_MEMORY_LIMIT=512M, read by a fresh process.
 * Expectation: a budget of 512 MiB, said to come from the variable. */
static void
test_env_value(void)
{
    if (g_test_subprocess()) {
        g_setenv(CS_MEMBUDGET_ENV, "512M", TRUE);
        g_autoptr(GError) error = NULL;
        g_assert_true(cs_membudget_init(&error));
        g_assert_no_error(error);
        g_assert_cmpuint(cs_membudget_bytes(), ==, (guint64)512 << 20);
        g_assert_cmpstr(cs_membudget_source(), ==, "COLLSIM_MEMORY_LIMIT=512M");
        return;
    }
    g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
    g_test_trap_assert_passed();
}

/* Setup: values of COLLSIM_MEMORY_LIMIT that are no size, or below 1 MiB.
 * Expectation: cs_membudget_init() fails in CS_UNITS_ERROR, naming the variable and the value;
 * the budget falls back to the default (never 0). */
static void
test_env_bad(void)
{
    const char *bad[] = { "abc", "1K", "-5", "", "1e400" };
    if (g_test_subprocess()) {
        const char *value = bad[atoi(g_getenv("CASE"))];
        g_setenv(CS_MEMBUDGET_ENV, value, TRUE);
        g_autoptr(GError) error = NULL;
        g_assert_false(cs_membudget_init(&error));
        g_assert_error(error, CS_UNITS_ERROR, error->code);
        g_autofree char *prefix = g_strdup_printf("COLLSIM_MEMORY_LIMIT=%s: ", value);
        g_assert_true(g_str_has_prefix(error->message, prefix));
        g_assert_cmpuint(cs_membudget_bytes(), >, 0);
        g_clear_error(&error);
        /* A second call says the same. */
        g_assert_false(cs_membudget_init(&error));
        g_assert_nonnull(error);
        return;
    }
    for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_autofree char *n = g_strdup_printf("%u", i);
        g_setenv("CASE", n, TRUE);
        g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_INHERIT_STDERR);
        g_test_trap_assert_passed();
    }
    g_unsetenv("CASE");
}

/* Setup: no COLLSIM_MEMORY_LIMIT; then a data-segment limit of 1 GiB (ulimit -d), which only
 * lowers a budget (not under the address sanitizer, whose shadow memory the limit would
 * count).
 * Expectation: half of physical memory without a limit; 3/4 of the limit (768 MiB) with it,
 * where that is smaller, and the source says which. */
static void
test_default(void)
{
    if (g_test_subprocess()) {
        g_unsetenv(CS_MEMBUDGET_ENV);
        const guint64 phys = (guint64)sysconf(_SC_PHYS_PAGES) * (guint64)sysconf(_SC_PAGESIZE);
        if (g_getenv("LIMITED") != NULL) {
            struct rlimit lim = { (rlim_t)1 << 30, (rlim_t)1 << 30 };
            g_assert_cmpint(setrlimit(RLIMIT_DATA, &lim), ==, 0);
            g_assert_true(cs_membudget_init(NULL));
            guint64 want = MIN(phys / 2, (guint64)768 << 20);
            g_assert_cmpuint(cs_membudget_bytes(), ==, want);
            if (want < phys / 2)
                g_assert_true(g_str_has_prefix(cs_membudget_source(),
                                               "3/4 of the ulimit -d limit of 1 GiB; "));
            return;
        }
        struct rlimit as;
        struct rlimit data;
        g_assert_cmpint(getrlimit(RLIMIT_AS, &as), ==, 0);
        g_assert_cmpint(getrlimit(RLIMIT_DATA, &data), ==, 0);
        g_assert_true(cs_membudget_init(NULL));
        if (as.rlim_cur == RLIM_INFINITY && data.rlim_cur == RLIM_INFINITY) {
            g_assert_cmpuint(cs_membudget_bytes(), ==, phys / 2);
            g_assert_true(g_str_has_prefix(cs_membudget_source(), "half of the "));
            g_assert_nonnull(strstr(cs_membudget_source(), "COLLSIM_MEMORY_LIMIT sets another"));
        }
        else {
            g_assert_cmpuint(cs_membudget_bytes(), <=, phys / 2);
        }
        return;
    }
    g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_INHERIT_STDERR);
    g_test_trap_assert_passed();
#ifndef UNDER_ASAN
    g_setenv("LIMITED", "1", TRUE);
    g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_INHERIT_STDERR);
    g_test_trap_assert_passed();
    g_unsetenv("LIMITED");
#endif
}

/* Setup: sizes for messages.
 * Expectation: three figures and a binary unit. */
static void
test_format(void)
{
    const struct {
        guint64 bytes;
        const char *text;
    } cases[] = {
        { 0, "0 B" },
        { 1023, "1023 B" },
        { 1024, "1 KiB" },
        { (guint64)3 << 29, "1.5 GiB" },
        { 4787404800ULL, "4.46 GiB" },
        { G_MAXUINT64, "16 EiB" },
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *text = cs_membudget_format(cases[i].bytes);
        g_assert_cmpstr(text, ==, cases[i].text);
    }
}

/* Runs collsim with COLLSIM_MEMORY_LIMIT=@limit (NULL: unset). */
static CsTestRun
run_with_limit(const char *limit, const char *const *args)
{
    const char *saved = g_getenv(CS_MEMBUDGET_ENV);
    g_autofree char *keep = g_strdup(saved);
    if (limit != NULL)
        g_setenv(CS_MEMBUDGET_ENV, limit, TRUE);
    else
        g_unsetenv(CS_MEMBUDGET_ENV);
    CsTestRun r = cs_test_run_collsim(NULL, args);
    if (keep != NULL)
        g_setenv(CS_MEMBUDGET_ENV, keep, TRUE);
    else
        g_unsetenv(CS_MEMBUDGET_ENV);
    return r;
}

/* Setup: a 128-rank ring all-reduce of 4 GiB in LL on 32 channels, every rank replayed and
 * every chunk simulated: 33 M steps, 4.5 GiB at the build's peak (before the budget it was
 * built, and under a 2 GiB limit died in GLib's allocator with exit 133); budget 1 GiB.
 * Expectation: exit 2 at once, one line with the estimate, the budget and where it comes
 * from; nothing on stdout. */
static void
test_schedule_refused(void)
{
    const char *args[]
        = { "run", "--topo",  "hgx-h100x8-16n", "--algo", "ring", "--proto", "LL", "--channels",
            "32",  "--whole", "--exact",        "-b",     "4G",   "-e",      "4G", NULL };
    g_auto(CsTestRun) r = run_with_limit("1G", args);
    g_assert_cmpint(r.status, ==, 2);
    g_assert_cmpstr(r.out, ==, "");
    g_assert_cmpstr(r.err, ==,
                    "collsim run: allreduce of 4294967296 bytes: ring allreduce of 4294967296 "
                    "bytes on 128 ranks and 32 channels in chunks of 32768 bytes: about "
                    "33292288 steps: 4.46 GiB of memory at 144 B a step, beyond the memory "
                    "budget of 1 GiB (COLLSIM_MEMORY_LIMIT=1G)\n");
}

/* Setup: a direct all-to-all of 1 MiB over 128 ranks, every rank replayed: 36,608 steps
 * (5 MiB at 144 B) but 16,256 connections of one message each, which the engine's arrays
 * hold; budget 8 MiB.
 * Expectation: exit 2, the engine's own estimate in one line; with 64 MiB it runs. */
static void
test_engine_refused(void)
{
    const char *args[]
        = { "run", "--topo", "hgx-h100x8-16n", "--op", "alltoall", "--algo", "direct", "-b", "1M",
            "-e",  "1M",     "--whole",        NULL };
    g_auto(CsTestRun) r = run_with_limit("8M", args);
    g_assert_cmpint(r.status, ==, 2);
    g_assert_cmpstr(r.out, ==, "");
    g_assert_true(g_str_has_prefix(r.err, "collsim run: alltoall of 1048576 bytes: "));
    g_assert_nonnull(strstr(r.err, "16256 connections and 16256 message slots: "));
    g_assert_true(g_str_has_suffix(r.err, " of memory to simulate, beyond the memory budget "
                                          "of 8 MiB (COLLSIM_MEMORY_LIMIT=8M)\n"));
    g_assert_true(strchr(r.err, '\n') == r.err + strlen(r.err) - 1); /* one line */

    g_auto(CsTestRun) ok = run_with_limit("64M", args);
    g_assert_cmpint(ok.status, ==, 0);
    g_assert_cmpstr(ok.err, ==, "");
}

/* Setup: a bad COLLSIM_MEMORY_LIMIT on a command that would succeed.
 * Expectation: exit 2, one line naming the variable, before anything runs. */
static void
test_cli_bad_env(void)
{
    const char *args[] = { "run", "--topo", "dgx-h100x4", "-b", "8", "-e", "8", NULL };
    g_auto(CsTestRun) r = run_with_limit("lots", args);
    g_assert_cmpint(r.status, ==, 2);
    g_assert_cmpstr(r.out, ==, "");
    g_assert_true(g_str_has_prefix(r.err, "collsim: COLLSIM_MEMORY_LIMIT=lots: \"lots\" is not "
                                          "a size"));
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/membudget/env-value", test_env_value);
    g_test_add_func("/membudget/env-bad", test_env_bad);
    g_test_add_func("/membudget/default", test_default);
    g_test_add_func("/membudget/format", test_format);
    g_test_add_func("/membudget/schedule-refused", test_schedule_refused);
    g_test_add_func("/membudget/engine-refused", test_engine_refused);
    g_test_add_func("/membudget/cli-bad-env", test_cli_bad_env);
    return g_test_run();
}
