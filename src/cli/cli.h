// SPDX-License-Identifier: MIT
/* Subcommand entry points: main.c dispatches, each cli_<name>.c implements one. */
#pragma once

#include <glib.h>

#include "analysis/calibrate.h"
#include "topo/topo.h"

G_BEGIN_DECLS

#define CS_CLI_ERROR (cs_cli_error_quark())
GQuark cs_cli_error_quark(void);

typedef enum {
    CS_CLI_ERROR_USAGE,       /* bad flags or arguments: exit 2 and "Try 'collsim --help'" */
    CS_CLI_ERROR_INPUT,       /* a bad input file or value: exit 2 */
    CS_CLI_ERROR_FAILED,      /* the command ran and failed (a gate, a wrong result): exit 1 */
    CS_CLI_ERROR_UNAVAILABLE, /* built without the feature it needs: exit 1 */
    CS_CLI_ERROR_WRITE,       /* an output could not be written (disk full, stdout closed):
                               * exit 1 */
} CsCliError;

/**
 * CsCliFunc:
 * A subcommand. @argv[0] is "collsim <name>". Prints its results to stdout and returns
 * TRUE, or returns FALSE with @error set and prints nothing: main() prints the one line and
 * picks the exit status from the error's domain and code.
 */
typedef gboolean (*CsCliFunc)(int argc, char **argv, GError **error);

gboolean cs_cli_run(int argc, char **argv, GError **error); /* the main job */
gboolean cs_cli_model(int argc, char **argv, GError **error);
gboolean cs_cli_topo(int argc, char **argv, GError **error);
gboolean cs_cli_algos(int argc, char **argv, GError **error);
gboolean cs_cli_verify(int argc, char **argv, GError **error);
gboolean cs_cli_explain(int argc, char **argv, GError **error);
gboolean cs_cli_select(int argc, char **argv, GError **error);
gboolean cs_cli_validate(int argc, char **argv, GError **error);
gboolean cs_cli_calibrate(int argc, char **argv, GError **error);
gboolean cs_cli_measure(int argc, char **argv, GError **error);
gboolean cs_cli_crossover(int argc, char **argv, GError **error);
gboolean cs_cli_plan(int argc, char **argv, GError **error);
gboolean cs_cli_workload(int argc, char **argv, GError **error);

/* What binds each GPU's way out of its node and each fabric tier, one statement a line
 * (cli_bottleneck.c). (transfer full) NULL-terminated. */
char **cs_cli_bottlenecks(const CsTopo *topo);
/* The bottleneck line of @n_groups groups of @size ranks (@ranks, group after group) of
 * communicator kind @kind ("dp") whose placement breaks rails, or NULL (cli_bottleneck.c).
 * (transfer full) */
char *cs_cli_rail_breaks(const CsTopo *topo, const char *kind, const int *ranks, int size,
                         int n_groups);

/* ---- Shared option helpers (cli_common.c) ---- */

/*
 * Flags with units (`-b 64K`, `--alpha 0.8us`, `--bandwidth 400Gb/s`) are parsed by units.c
 * during option parsing, so a bad value is a usage error naming the flag. The pattern:
 *
 *     static gint64 min_bytes = 8;
 *     static double alpha_s = 10e-6;
 *     static const GOptionEntry entries[] = {
 *         { "minbytes", 'b', 0, G_OPTION_ARG_CALLBACK, CS_CLI_ARG_FUNC (cs_cli_parse_size_arg),
 *           "Smallest size (default 8)", "SIZE" },
 *         { "alpha", 0, 0, G_OPTION_ARG_CALLBACK, CS_CLI_ARG_FUNC (cs_cli_parse_time_arg),
 *           "Latency", "TIME" },
 *         G_OPTION_ENTRY_NULL };
 *     static const CsCliUnitTarget targets[] = {
 *         { "minbytes", &min_bytes }, { "alpha", &alpha_s }, { NULL, NULL } };
 *     ...
 *     if (!cs_cli_parse_units (&argc, &argv, entries, targets, "", summary, description, error))
 *         return FALSE;
 *
 * The entry's callback picks the unit, the target table (looked up by the entry's long name,
 * also when the short flag was given) picks where the value goes. Targets may be locals when
 * the entries and targets arrays are locals too.
 */
/* GOptionEntry.arg_data is a gpointer; ISO C (-Wpedantic) objects to a function stored there. */
#define CS_CLI_ARG_FUNC(func) (G_GNUC_EXTENSION(gpointer)(func))

typedef struct {
    const char *long_name; /* the GOptionEntry's long_name, without dashes */
    gpointer target;       /* gint64 * for sizes (bytes) and counts; double * for times
                            * (seconds) and bandwidths (bytes/s) */
} CsCliUnitTarget;

/* GOptionArgFunc callbacks for G_OPTION_ARG_CALLBACK entries; valid only under
 * cs_cli_parse_units(). Each writes the parsed value to the flag's target. */
gboolean cs_cli_parse_size_arg(const char *option_name, const char *value, gpointer data,
                               GError **error);
gboolean cs_cli_parse_count_arg(const char *option_name, const char *value, gpointer data,
                                GError **error);
gboolean cs_cli_parse_time_arg(const char *option_name, const char *value, gpointer data,
                               GError **error);
gboolean cs_cli_parse_bandwidth_arg(const char *option_name, const char *value, gpointer data,
                                    GError **error);

/* Parses @argv with @entries, removing what it consumed (G_OPTION_REMAINING or leftovers stay
 * for the caller). @parameter_string follows "Usage: collsim cmd [OPTION...]" in --help,
 * @summary comes above the options, @description below. Bad flags and bad values become
 * CS_CLI_ERROR_USAGE, the message prefixed with argv[0] ("collsim model: --alpha: ..."). */
gboolean cs_cli_parse(int *argc, char ***argv, const GOptionEntry *entries,
                      const char *parameter_string, const char *summary, const char *description,
                      GError **error);
/* The same, with @targets (NULL-terminated) for the entries using the unit callbacks above. */
gboolean cs_cli_parse_units(int *argc, char ***argv, const GOptionEntry *entries,
                            const CsCliUnitTarget *targets, const char *parameter_string,
                            const char *summary, const char *description, GError **error);

/* ---- Usage errors ---- */

/* Sets @error to CS_CLI_ERROR_USAGE, "PROG: message" with @prog the command as invoked
 * ("collsim select"); returns FALSE so callers can `return cs_cli_usage_error(...)`. */
gboolean cs_cli_usage_error(GError **error, const char *prog, const char *fmt, ...)
    G_GNUC_PRINTF(3, 4);
/* Turns a lookup failure @cause (unknown op, algorithm, model...; consumed) into a usage
 * error naming the flag: "PROG: FLAG: cause". Returns FALSE. */
gboolean cs_cli_flag_error(GError **error, const char *prog, const char *flag, GError *cause);

/* --pick's help, shared by validate and calibrate. */
#define CS_CLI_PICK_HELP                                                                           \
    "Who picks what a trace did not force: auto (default: NCCL's tuning model for traces made "    \
    "with NCCL or naming no library, on GPUs its model knows; RCCL's for traces made with RCCL "   \
    "or naming no library, on AMD GPUs; collsim's fastest otherwise), nccl (the library's own "    \
    "model) or fastest"

/* ---- Threads (--jobs) ---- */

/* Where --jobs was not given: the default (cs_parallel_default_jobs()). */
#define CS_CLI_JOBS_UNSET G_MININT
#define CS_CLI_JOBS_HELP                                                                           \
    "Threads that share the sizes and candidates (default: the processors); the output is "        \
    "the same for every N"
/* The --jobs entry; @target is an int set to CS_CLI_JOBS_UNSET before parsing. */
#define CS_CLI_JOBS_ENTRY(target)                                                                  \
    {                                                                                              \
        "jobs", 'j', 0, G_OPTION_ARG_INT, (target), CS_CLI_JOBS_HELP, "N"                          \
    }
/* @jobs as given (or unset) checked and resolved into @out: 1 ... CS_PARALLEL_MAX_JOBS, or a
 * usage error "PROG: --jobs N: why". */
gboolean cs_cli_resolve_jobs(const char *prog, int jobs, int *out, GError **error);

/* ---- Topologies and what-ifs (--set) ---- */

#define CS_CLI_SET_HELP                                                                            \
    "What-if: set PATH (JSON keys joined by dots, array elements as [i]) of the topology to "      \
    "VALUE before it is loaded, e.g. network.nic_bandwidth=800Gb/s; repeat for more "              \
    "(docs/what-if.md)"
/* The --set entry of a command that takes a topology; @target is a char ** (GStrv). */
#define CS_CLI_SET_ENTRY(target)                                                                   \
    {                                                                                              \
        "set", 0, 0, G_OPTION_ARG_STRING_ARRAY, (target), CS_CLI_SET_HELP, "PATH=VALUE"            \
    }

/* Loads the topology @name_or_path with the edits @sets (nullable, from --set) applied.
 * A malformed --set, or a list of values (a sweep, which only plan runs), is a usage error;
 * an edit that does not apply is CS_TOPO_ERROR_EDIT "PROG: --set PATH=VALUE: what is wrong";
 * other topology errors as cs_topo_load(). Returns: (transfer full) (nullable). */
CsTopo *cs_cli_load_topo(const char *prog, const char *name_or_path, char **sets, GError **error);
/* Narrows *@topo to the ranks a run of --ranks *@nranks (0: not given) and --nodes @nnodes (0:
 * not given) uses, as select, plan and validate place them (cs_select_shape_topo(): the first
 * N ranks, or N / M on each of the first M nodes, on a topology of just those GPUs, so that
 * rings, trees, NVLS and NCCL's model see the nodes and links they have); *@nranks gets the
 * count. *@topo is unchanged when that is all of it. A shape the machine does not have is a
 * usage error "PROG: --ranks N --nodes M: why". */
gboolean cs_cli_shape_topo(const char *prog, CsTopo **topo, int *nranks, int nnodes,
                           GError **error);
/* The edits @sets stand for, each list of values split ("a=1,2" -> "a=1", "a=2"), checked:
 * (transfer full) an array of GStrv, one per --set; a usage error "PROG: --set ...: why". */
GPtrArray *cs_cli_split_sets(const char *prog, char **sets, GError **error);

/* ---- Traces ---- */

/* Checks a -g given for traces: at least 1 (0: not given, the trace says), and dividing the
 * @trace_ranks of the trace in @path when both are known. Errors are usage errors. */
gboolean cs_cli_check_gpus_per_thread(const char *prog, int gpus_per_thread, int trace_ranks,
                                      const char *path, GError **error);

/* ---- Words ---- */

/* "1 MiB", "1.5 MiB", "170.7 KiB", "24 B": readable, not exact. (transfer full) */
char *cs_cli_human_size(gint64 bytes);

/* ---- The command line ---- */

/* @argv joined with spaces, arguments with shell characters quoted: the command as typed, for
 * report headers and plot subtitles, less --jobs (it changes no result). (transfer full) */
char *cs_cli_command_line(int argc, char **argv);

/* ---- Output files (--output, --timeline, --plot) ---- */

/* Checks, before any work, that @path (nullable; "-" is stdout) can be written: not a
 * directory, its directory exists. Errors are CS_CLI_ERROR_INPUT, "PROG: FLAG PATH: why". */
gboolean cs_cli_check_output(const char *prog, const char *flag, const char *path, GError **error);
/* Writes @len bytes of @text (-1: a string) to @path, or to stdout (flushed and checked) when
 * @path is NULL or "-". A file is replaced whole or left as it was (temporary file in its
 * folder, fsync, rename). Errors as cs_cli_check_output(), or CS_CLI_ERROR_WRITE naming @path
 * itself (never a temporary file) or "standard output". */
gboolean cs_cli_write_output(const char *prog, const char *flag, const char *path, const char *text,
                             gssize len, GError **error);
/* --plot @path (cli_plot.c): plots built, a .svg, .png or .pdf name, a writable place; else
 * CS_CLI_ERROR_INPUT "PROG: --plot PATH: why". */
gboolean cs_cli_check_plot(const char *prog, const char *path, GError **error);
/* Sets CS_CLI_ERROR_WRITE "PROG: WHERE: why" from @cause (not consumed); @where NULL means
 * standard output. Returns FALSE. */
gboolean cs_cli_write_error(GError **error, const char *prog, const char *where,
                            const GError *cause);

/* validate's and calibrate's shared argument checks: -t not taken for the topology, --topo
 * given, at least one trace; a usage error otherwise. */
gboolean cs_cli_check_trace_args(const char *prog, const char *threads, const char *topo_name,
                                 char **traces, GError **error);

/* Progress of a long command on stderr (cli_progress.c). */
typedef enum {
    CS_CLI_PROGRESS_AUTO,  /* on a terminal, once a second has passed */
    CS_CLI_PROGRESS_FORCE, /* --progress: a line per step wherever stderr goes */
    CS_CLI_PROGRESS_QUIET, /* --quiet: none */
} CsCliProgressMode;

typedef struct {
    const char *prog;
    int total; /* steps */
    int done;
    CsCliProgressMode mode;
    gboolean tty;     /* stderr is a terminal */
    gboolean shown;   /* a line is on the terminal, to clear */
    gint64 t0;        /* us, monotonic */
    const char *unit; /* (nullable) what a step is, plural: NULL "sizes" */
} CsCliProgress;

void cs_cli_progress_init(CsCliProgress *p, const char *prog, int total, CsCliProgressMode mode);
/* One more step done, the size it was for. */
void cs_cli_progress_step(CsCliProgress *p, gint64 size_bytes);
/* One more step done, @what it was ("ring/LL"). */
void cs_cli_progress_step_text(CsCliProgress *p, const char *what);
/* Starts a new phase of @total steps of @unit (plural, static): the count and clock restart. */
void cs_cli_progress_restart(CsCliProgress *p, int total, const char *unit);
/* Where the step under way stands, @what ("evaluation 12 (iteration 3 of at most 100), rms
 * 8.1%"), without counting it done; the estimate of the time left only once a step has ended. */
void cs_cli_progress_within(CsCliProgress *p, const char *what);
/* Clears a line left on the terminal. */
void cs_cli_progress_finish(CsCliProgress *p);
/* The mode --progress (@progress) and --quiet (@quiet) ask for: FORCE, QUIET, else AUTO; both
 * at once is a usage error ("--progress and --quiet contradict each other"). */
gboolean cs_cli_progress_mode(const char *prog, gboolean progress, gboolean quiet,
                              CsCliProgressMode *mode, GError **error);

/* One evaluation of a calibration fit in words, for progress lines: "evaluation 12 (fit,
 * iteration 3 of at most 100), rms 8.1%" (cli_calibrate.c). (transfer full) */
char *cs_cli_calibrate_step_text(const CsCalibStep *step);

/* The groups of a workload's parallel layout a collective runs on (docs/workloads.md): `plan`
 * reads them, `workload import` writes them. */
typedef enum {
    CS_GROUP_NONE = -1,
    CS_GROUP_TP,
    CS_GROUP_DP,
    CS_GROUP_WORLD,
    CS_GROUP_CP, /* context-parallel: plan's layouts only, not written by workload import */
    CS_GROUP_EP, /* expert-parallel, carved out of dp */
    CS_GROUP_PP, /* pipeline stages: plan's layouts only */
    CS_N_GROUPS,
} CsGroup;

extern const char *const cs_group_names[CS_N_GROUPS];

G_END_DECLS
