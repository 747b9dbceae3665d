// SPDX-License-Identifier: MIT
/* Helpers shared by the tests: running the collsim binary ($COLLSIM_BIN) as users run it and
 * capturing what it prints; loading topologies and checking schedules. Header-only: each test
 * executable is one translation unit. */
#pragma once

#include <sys/wait.h>

#include <glib.h>

#include "check.h"
#include "schedule.h"
#include "topo.h"

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
