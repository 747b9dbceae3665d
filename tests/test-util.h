// SPDX-License-Identifier: MIT
/* Helpers shared by the tests: running the collsim binary ($COLLSIM_BIN) as users run it and
 * capturing what it prints; loading topologies and checking schedules. Header-only: each test
 * executable is one translation unit. */
#pragma once

#include <sys/wait.h>

#include <glib.h>

#include "sched/check.h"
#include "sched/schedule.h"
#include "topo/topo.h"

/* UNDER_ASAN: built with the address sanitizer, whose shadow memory resource limits count
 * (ulimit -d, -v), so tests that set one skip. */
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

/* ---- Running collsim ---- */

/* What one run of the binary printed and how it ended. */
typedef struct {
    char *out;
    char *err;
    int status; /* exit status, or -1 when killed */
} CsTestRun;

static inline void
cs_test_run_clear(CsTestRun *r)
{
    g_clear_pointer(&r->out, g_free);
    g_clear_pointer(&r->err, g_free);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(CsTestRun, cs_test_run_clear)

/* Runs `collsim [SUBCOMMAND] ARGS...` (@subcommand nullable, @args NULL-terminated) with
 * GLib's messages, which are translated ("Unknown option"), pinned to English. */
static inline CsTestRun
cs_test_run_collsim(const char *subcommand, const char *const *args)
{
    const char *bin = g_getenv("COLLSIM_BIN");
    g_autoptr(GPtrArray) argv = g_ptr_array_new();
    g_autoptr(GError) error = NULL;
    CsTestRun r = { NULL, NULL, -1 };
    int wait_status = 0;

    g_assert_nonnull(bin);
    g_ptr_array_add(argv, (gpointer)bin);
    if (subcommand != NULL)
        g_ptr_array_add(argv, (gpointer)subcommand);
    for (int i = 0; args[i] != NULL; i++)
        g_ptr_array_add(argv, (gpointer)args[i]);
    g_ptr_array_add(argv, NULL);
    g_auto(GStrv) envp = g_environ_setenv(g_get_environ(), "LC_ALL", "C", TRUE);
    g_spawn_sync(NULL, (char **)argv->pdata, envp, G_SPAWN_DEFAULT, NULL, NULL, &r.out, &r.err,
                 &wait_status, &error);
    g_assert_no_error(error);
    if (WIFEXITED(wait_status))
        r.status = WEXITSTATUS(wait_status);
    return r;
}

/* ---- Topologies and schedules ---- */

/* A star: @nranks GPUs, each with one duplex link of kind @link_kind, 1 GB/s and @alpha, to
 * one hub device "sw" of kind @hub_kind; reduce 4 GB/s (gamma = 250 ps/B), copy 8 GB/s
 * (125 ps/B). @launch and @step set the GPU's costs; @uplink1_bw (nullable) gives GPU 1's link
 * another bandwidth. (transfer full) */
static inline CsTopo *
cs_test_star(int nranks, const char *hub_kind, const char *link_kind, const char *alpha,
             const char *launch, const char *step, const char *uplink1_bw)
{
    g_autoptr(GString) js = g_string_new(NULL);
    g_autoptr(GError) error = NULL;

    g_string_append_printf(js,
                           "{\"name\": \"star%d\", \"description\": \"test star\", "
                           "\"gpu\": {\"launch\": \"%s\", \"step_overhead\": \"%s\", "
                           "\"reduce_bandwidth\": \"4 GB/s\", \"copy_bandwidth\": \"8 GB/s\"}, "
                           "\"devices\": [",
                           nranks, launch, step);
    for (int i = 0; i < nranks; i++)
        g_string_append_printf(js, "{\"name\": \"gpu%d\", \"kind\": \"gpu\"}, ", i);
    g_string_append_printf(js, "{\"name\": \"sw\", \"kind\": \"%s\"}], \"links\": [", hub_kind);
    for (int i = 0; i < nranks; i++)
        g_string_append_printf(js,
                               "%s{\"endpoints\": [\"gpu%d\", \"sw\"], \"kind\": \"%s\", "
                               "\"bandwidth\": \"%s\", \"alpha\": \"%s\"}",
                               i > 0 ? ", " : "", i, link_kind,
                               i == 1 && uplink1_bw != NULL ? uplink1_bw : "1 GB/s", alpha);
    g_string_append(js, "]}");

    CsTopo *topo = cs_topo_load_data(js->str, "star", &error);
    g_assert_no_error(error);
    return topo;
}

/* A crossbar: @nranks GPUs, each with one duplex link to one NVSwitch. Every link has
 * alpha 0.5 us and 1 GB/s, so a route GPU -> switch -> GPU has alpha = 1 us and B = 1 GB/s:
 * one byte = 1000 ps, and every figure below is a whole number of picoseconds.
 * (cs_test_star() says the rest.) (transfer full) */
static inline CsTopo *
cs_test_crossbar(int nranks, const char *launch, const char *step, const char *uplink1_bw)
{
    return cs_test_star(nranks, "nvswitch", "nvswitch", "0.5 us", launch, step, uplink1_bw);
}

/* The shipped topology @name (or a JSON file); fails the test on error. (transfer full) */
static inline CsTopo *
cs_test_load_topo(const char *name)
{
    GError *error = NULL;
    CsTopo *topo = cs_topo_load(name, &error);

    g_assert_no_error(error);
    return topo;
}

/* A cluster template of @nodes copies of the shipped single-node topology @node, @nics NICs
 * per node on a rail-optimized InfiniBand fabric (numbers are placeholders: only the
 * structure matters to the schedules). (transfer full) */
static inline CsTopo *
cs_test_load_cluster(int nodes, const char *node, int nics)
{
    g_autofree char *json = g_strdup_printf(
        "{\"name\": \"test-%dx%s\", \"nodes\": %d, \"node\": \"%s\", \"network\": {"
        "\"kind\": \"ib\", \"nic_bandwidth\": \"400 Gb/s\", \"nic_alpha\": \"0.3 us\", "
        "\"switch_alpha\": \"0.13 us\", \"rail_optimized\": true, \"nics_per_node\": %d, "
        "\"nic_link\": {\"bandwidth\": \"64 GB/s\", \"alpha\": \"0.5 us\"}}}",
        nodes, node, nodes, node, nics);
    GError *error = NULL;
    CsTopo *topo = cs_topo_load_data(json, "inline cluster", &error);

    g_assert_no_error(error);
    return topo;
}

/* Asserts that @sched passes the semantic checker, filling @report (nullable). */
static inline void
cs_test_assert_checks(const CsSchedule *sched, CsCheckReport *report)
{
    GError *error = NULL;
    gboolean ok = cs_check_schedule(sched, report, &error);

    g_assert_no_error(error);
    g_assert_true(ok);
}

/* Asserts that two runs printed the same standard output but for the "# command:" line each
 * echoes (the flags that differ, --progress or --quiet, are in it). */
static inline void
cs_test_assert_same_but_command(const char *a, const char *b)
{
    g_autoptr(GRegex) command = g_regex_new("^# command: .*$", G_REGEX_MULTILINE, 0, NULL);
    g_autofree char *a_out = g_regex_replace_literal(command, a, -1, 0, "", 0, NULL);
    g_autofree char *b_out = g_regex_replace_literal(command, b, -1, 0, "", 0, NULL);
    g_assert_cmpstr(a_out, ==, b_out);
}

/* The fields of one CSV @line (RFC 4180): commas outside quotes, plus one. */
static inline int
cs_test_csv_fields(const char *line)
{
    int fields = 1;
    gboolean quoted = FALSE;
    for (const char *c = line; *c != '\0'; c++) {
        if (*c == '"')
            quoted = !quoted;
        fields += *c == ',' && !quoted;
    }
    return fields;
}
