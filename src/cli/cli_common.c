// SPDX-License-Identifier: MIT
/* Option parsing shared by every subcommand: one GOptionContext wrapper, and callbacks that
 * read flags with units through units.c so a bad value fails as a usage error. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "base/fileio.h"
#include "base/parallel.h"
#include "base/units.h"
#include "predict/select.h"
#include "topo/topo.h"

G_DEFINE_QUARK(cs_cli_error_quark, cs_cli_error)

/* What the unit callbacks receive as GOptionGroup user data. */
typedef struct {
    const GOptionEntry *entries;
    const CsCliUnitTarget *targets;
} ParseData;

/* ---- Unit callbacks ---- */

/* The long name of the entry @option_name ("--alpha" or "-a") belongs to. */
static const char *
entry_long_name(const GOptionEntry *entries, const char *option_name)
{
    if (g_str_has_prefix(option_name, "--"))
        return option_name + 2;
    if (option_name[0] == '-' && option_name[1] != '\0' && option_name[2] == '\0') {
        for (const GOptionEntry *e = entries; e->long_name != NULL; e++)
            if (e->short_name == option_name[1])
                return e->long_name;
    }
    return NULL;
}

/* A missing target is a programming error in the command's tables, not a user error. */
static gpointer
find_target(gpointer data, const char *option_name)
{
    const ParseData *pd = data;

    g_return_val_if_fail(pd != NULL, NULL);
    const char *name = entry_long_name(pd->entries, option_name);
    g_return_val_if_fail(name != NULL, NULL);
    for (const CsCliUnitTarget *t = pd->targets; t != NULL && t->long_name != NULL; t++)
        if (strcmp(t->long_name, name) == 0)
            return t->target;
    g_critical("option %s has a unit callback but no CsCliUnitTarget", option_name);
    return NULL;
}

/* Puts the flag in front of units.c's message: `-e: "8X" is not a size (...)`. */
static gboolean
prefix_flag(gboolean ok, const char *option_name, GError **error)
{
    if (!ok)
        g_prefix_error(error, "%s: ", option_name);
    return ok;
}

/**
 * cs_cli_parse_size_arg:
 * GOptionArgFunc: @value is a size ("64K", "1GiB", "8"); the flag's target is a gint64 of
 * bytes. Errors are CS_UNITS_ERROR, turned into usage errors by cs_cli_parse_units().
 */
gboolean
cs_cli_parse_size_arg(const char *option_name, const char *value, gpointer data, GError **error)
{
    gint64 *target = find_target(data, option_name);

    g_return_val_if_fail(target != NULL, FALSE);
    return prefix_flag(cs_units_parse_size(value, target, error), option_name, error);
}

/**
 * cs_cli_parse_count_arg:
 * GOptionArgFunc: @value is a positive integer count; the target is a gint64.
 */
gboolean
cs_cli_parse_count_arg(const char *option_name, const char *value, gpointer data, GError **error)
{
    gint64 *target = find_target(data, option_name);

    g_return_val_if_fail(target != NULL, FALSE);
    return prefix_flag(cs_units_parse_count(value, target, error), option_name, error);
}

/**
 * cs_cli_resolve_jobs:
 * --jobs: a thread count from 1 to CS_PARALLEL_MAX_JOBS; unset, the processors.
 */
gboolean
cs_cli_resolve_jobs(const char *prog, int jobs, int *out, GError **error)
{
    if (jobs == CS_CLI_JOBS_UNSET) {
        *out = cs_parallel_default_jobs();
        return TRUE;
    }
    if (jobs < 1 || jobs > CS_PARALLEL_MAX_JOBS)
        return cs_cli_usage_error(error, prog, "--jobs %d: threads are 1 to %d", jobs,
                                  CS_PARALLEL_MAX_JOBS);
    *out = jobs;
    return TRUE;
}

/**
 * cs_cli_parse_time_arg:
 * GOptionArgFunc: @value is a time with its unit ("0.8us"); the target is a double of seconds.
 */
gboolean
cs_cli_parse_time_arg(const char *option_name, const char *value, gpointer data, GError **error)
{
    double *target = find_target(data, option_name);

    g_return_val_if_fail(target != NULL, FALSE);
    return prefix_flag(cs_units_parse_time(value, target, error), option_name, error);
}

/**
 * cs_cli_parse_bandwidth_arg:
 * GOptionArgFunc: @value is a bandwidth with its unit ("400Gb/s"); the target is a double of
 * bytes per second.
 */
gboolean
cs_cli_parse_bandwidth_arg(const char *option_name, const char *value, gpointer data,
                           GError **error)
{
    double *target = find_target(data, option_name);

    g_return_val_if_fail(target != NULL, FALSE);
    return prefix_flag(cs_units_parse_bandwidth(value, target, error), option_name, error);
}

/* ---- Parsing ---- */

/**
 * cs_cli_parse_units:
 * Parses @argv (argv[0] is "collsim <cmd>") with @entries and the unit @targets (nullable,
 * NULL-terminated). GOption's --help prints and exits 0. On failure returns FALSE with a
 * CS_CLI_ERROR_USAGE whose message starts with argv[0]; errors of other domains a callback
 * raised on purpose (a missing file, say) pass through unchanged.
 */
gboolean
cs_cli_parse_units(int *argc, char ***argv, const GOptionEntry *entries,
                   const CsCliUnitTarget *targets, const char *parameter_string,
                   const char *summary, const char *description, GError **error)
{
    g_return_val_if_fail(argc != NULL && argv != NULL && *argc >= 1, FALSE);
    g_return_val_if_fail(entries != NULL, FALSE);

    ParseData pd = { .entries = entries, .targets = targets };
    g_autoptr(GOptionContext) context = g_option_context_new(parameter_string);
    /* The main group carries pd, so unit callbacks can find their targets. */
    GOptionGroup *group = g_option_group_new(NULL, NULL, NULL, &pd, NULL);

    g_option_group_add_entries(group, entries);
    g_option_context_set_main_group(context, group);
    if (summary != NULL)
        g_option_context_set_summary(context, summary);
    if (description != NULL)
        g_option_context_set_description(context, description);

    const char *prog = (*argv)[0];
    g_autoptr(GError) local = NULL;
    if (g_option_context_parse(context, argc, argv, &local))
        return TRUE;
    if (local->domain == G_OPTION_ERROR || local->domain == CS_UNITS_ERROR)
        g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_USAGE, "%s: %s", prog, local->message);
    else
        g_propagate_error(error, g_steal_pointer(&local));
    return FALSE;
}

/**
 * cs_cli_parse:
 * cs_cli_parse_units() for commands whose flags carry no units.
 */
gboolean
cs_cli_parse(int *argc, char ***argv, const GOptionEntry *entries, const char *parameter_string,
             const char *summary, const char *description, GError **error)
{
    return cs_cli_parse_units(argc, argv, entries, NULL, parameter_string, summary, description,
                              error);
}

/* ---- Usage errors ---- */

gboolean
cs_cli_usage_error(GError **error, const char *prog, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    g_autofree char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_USAGE, "%s: %s", prog, msg);
    return FALSE;
}

gboolean
cs_cli_flag_error(GError **error, const char *prog, const char *flag, GError *cause)
{
    cs_cli_usage_error(error, prog, "%s: %s", flag, cause->message);
    g_error_free(cause);
    return FALSE;
}

/* ---- Output files ---- */

static gboolean
output_error(const char *prog, const char *flag, const char *path, const char *why, GError **error)
{
    g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_INPUT, "%s: %s %s: %s", prog, flag, path, why);
    return FALSE;
}

gboolean
cs_cli_check_gpus_per_thread(const char *prog, int gpus_per_thread, int trace_ranks,
                             const char *path, GError **error)
{
    if (gpus_per_thread < 0)
        return cs_cli_usage_error(error, prog, "-g %d: GPUs per thread must be at least 1",
                                  gpus_per_thread);
    if (gpus_per_thread > 0 && path != NULL && trace_ranks > 0
        && trace_ranks % gpus_per_thread != 0)
        return cs_cli_usage_error(error, prog,
                                  "-g %d: GPUs per thread must divide the %d ranks of %s",
                                  gpus_per_thread, trace_ranks, path);
    return TRUE;
}

/* ---- Words ---- */

/**
 * cs_cli_human_size:
 * "1 MiB", "1.5 MiB", "170.7 KiB", "24 B": readable, not exact. Returns: (transfer full).
 */
char *
cs_cli_human_size(gint64 bytes)
{
    static const char *const names[] = { "KiB", "MiB", "GiB", "TiB" };
    if (bytes < 1024)
        return g_strdup_printf("%" G_GINT64_FORMAT " B", bytes);
    double v = (double)bytes;
    int u = -1;
    while (v >= 1024.0 && u < (int)G_N_ELEMENTS(names) - 1) {
        v /= 1024.0;
        u++;
    }
    if (fabs(v - round(v)) < 1e-9)
        return g_strdup_printf("%.0f %s", v, names[u]);
    return g_strdup_printf("%.4g %s", v, names[u]);
}

/* ---- The command line ---- */

char *
cs_cli_command_line(int argc, char **argv)
{
    GString *s = g_string_new(argv[0]);
    for (int i = 1; i < argc; i++) {
        /* --jobs changes no result: the output is the same for every N. */
        if (strcmp(argv[i], "--jobs") == 0 || strcmp(argv[i], "-j") == 0) {
            i++;
            continue;
        }
        if (g_str_has_prefix(argv[i], "--jobs="))
            continue;
        gboolean plain = argv[i][0] != '\0' && strpbrk(argv[i], " \t'\"\\$`*?;&|<>()") == NULL;
        g_autofree char *quoted = plain ? g_strdup(argv[i]) : g_shell_quote(argv[i]);
        g_string_append_printf(s, " %s", quoted);
    }
    return g_string_free(s, FALSE);
}

/* ---- Output files ---- */

/**
 * cs_cli_check_output:
 * Fails early on an output path that cannot be written, so a long run does not end in an
 * error after its results were computed (or printed).
 */
gboolean
cs_cli_check_output(const char *prog, const char *flag, const char *path, GError **error)
{
    if (path == NULL || strcmp(path, "-") == 0)
        return TRUE;
    if (path[0] == '\0')
        return output_error(prog, flag, "\"\"", "an empty file name", error);
    if (g_file_test(path, G_FILE_TEST_IS_DIR))
        return output_error(prog, flag, path, "is a directory", error);
    g_autofree char *dir = g_path_get_dirname(path);
    if (!g_file_test(dir, G_FILE_TEST_IS_DIR))
        return output_error(prog, flag, path, "no such directory", error);
    return TRUE;
}

/**
 * cs_cli_write_output:
 * Through cs_file_replace_contents(): @path ends up holding all of @text or what it held
 * before, never part of it. A failed write is CS_CLI_ERROR_WRITE naming @path (or "standard
 * output"), never the temporary file.
 */
gboolean
cs_cli_write_output(const char *prog, const char *flag, const char *path, const char *text,
                    gssize len, GError **error)
{
    gsize n = len < 0 ? strlen(text) : (gsize)len;
    g_autoptr(GError) local = NULL;
    if (path == NULL || strcmp(path, "-") == 0) {
        if (fwrite(text, 1, n, stdout) == n && cs_file_flush_stream(stdout, &local))
            return TRUE;
        if (local == NULL)
            g_set_error_literal(&local, G_FILE_ERROR, G_FILE_ERROR_IO, g_strerror(errno));
        return cs_cli_write_error(error, prog, NULL, local);
    }
    if (!cs_cli_check_output(prog, flag, path, error))
        return FALSE;
    if (!cs_file_replace_contents(path, text, n, &local)) {
        g_autofree char *where = g_strdup_printf("%s %s", flag, path);
        return cs_cli_write_error(error, prog, where, local);
    }
    return TRUE;
}

/**
 * cs_cli_write_error:
 * Sets CS_CLI_ERROR_WRITE: "PROG: WHERE: why", WHERE NULL meaning standard output.
 */
gboolean
cs_cli_write_error(GError **error, const char *prog, const char *where, const GError *cause)
{
    g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_WRITE, "%s: %s: %s", prog,
                where != NULL ? where : "standard output", cause->message);
    return FALSE;
}

/**
 * cs_cli_check_trace_args:
 * What validate and calibrate both require: no nccl-tests -t mistaken for the topology, a
 * --topo, at least one trace. Usage errors otherwise.
 */
gboolean
cs_cli_check_trace_args(const char *prog, const char *threads, const char *topo_name, char **traces,
                        GError **error)
{
    if (threads != NULL)
        return cs_cli_usage_error(error, prog,
                                  "-t %s: -t is nccl-tests' thread count, not the topology; "
                                  "give the topology as --topo T",
                                  threads);
    if (topo_name == NULL) {
        g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_USAGE, "%s: --topo is required", prog);
        return FALSE;
    }
    if (traces == NULL || traces[0] == NULL) {
        g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_USAGE, "%s: no trace given", prog);
        return FALSE;
    }
    return TRUE;
}

/* ---- Topologies and what-ifs ---- */

/**
 * cs_cli_split_sets:
 * Checks every --set of @sets (nullable) and splits its list of values. Returns: (transfer
 * full) (nullable): a GPtrArray of GStrv (freed with it), one per --set, or NULL with a usage
 * error.
 */
GPtrArray *
cs_cli_split_sets(const char *prog, char **sets, GError **error)
{
    g_autoptr(GPtrArray) out = g_ptr_array_new_with_free_func((GDestroyNotify)g_strfreev);
    for (char **s = sets; s != NULL && *s != NULL; s++) {
        g_autoptr(GError) local = NULL;
        char **values = cs_topo_edit_split(*s, &local);
        if (values == NULL) {
            cs_cli_usage_error(error, prog, "--set %s", local->message);
            return NULL;
        }
        g_ptr_array_add(out, values);
    }
    return g_steal_pointer(&out);
}

/**
 * cs_cli_shape_topo:
 * `--ranks N [--nodes M]` on run and explain: the communicator of that shape on a topology of
 * just its GPUs, through the helper select uses for its shapes, so every command sees the same
 * machine for the same ranks.
 */
gboolean
cs_cli_shape_topo(const char *prog, CsTopo **topo, int *nranks, int nnodes, GError **error)
{
    g_return_val_if_fail(topo != NULL && *topo != NULL && nranks != NULL, FALSE);
    const CsSelectShape shape = { .nranks = *nranks, .nnodes = nnodes };
    CsSelectShape resolved;
    g_autoptr(GError) cause = NULL;
    CsTopo *sub = cs_select_shape_topo(*topo, &shape, &resolved, &cause);
    if (sub == NULL) {
        g_autofree char *r = *nranks > 0 ? g_strdup_printf("--ranks %d", *nranks) : NULL;
        g_autofree char *n = nnodes > 0 ? g_strdup_printf("--nodes %d", nnodes) : NULL;
        g_autofree char *flags = g_strjoin(" ", r != NULL ? r : n, r != NULL ? n : NULL, NULL);
        return cs_cli_usage_error(error, prog, "%s: %s", flags, cause->message);
    }
    cs_topo_unref(*topo);
    *topo = sub;
    *nranks = resolved.nranks;
    return TRUE;
}

/**
 * cs_cli_load_topo:
 * The one way a command loads its topology, --set edits applied (cs_topo_load_edited()).
 */
CsTopo *
cs_cli_load_topo(const char *prog, const char *name_or_path, char **sets, GError **error)
{
    g_autoptr(GPtrArray) split = cs_cli_split_sets(prog, sets, error);
    if (split == NULL)
        return NULL;
    for (guint i = 0; i < split->len; i++) {
        char **values = g_ptr_array_index(split, i);
        if (g_strv_length(values) > 1) {
            cs_cli_usage_error(error, prog,
                               "--set %s: a list of values is a sweep, which only 'collsim "
                               "plan' runs; give one value here",
                               sets[i]);
            return NULL;
        }
    }
    CsTopo *topo = cs_topo_load_edited(name_or_path, sets, error);
    if (topo == NULL && error != NULL && g_error_matches(*error, CS_TOPO_ERROR, CS_TOPO_ERROR_EDIT))
        g_prefix_error(error, "%s: --set ", prog);
    return topo;
}

const char *const cs_group_names[CS_N_GROUPS] = { "tp", "dp", "world", "cp", "ep", "pp" };
