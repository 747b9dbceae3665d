// SPDX-License-Identifier: MIT
/* collsim's entry point: dispatches to one cli_<name>.c per subcommand and is the only place
 * that prints errors and picks the exit status. */
#include "config.h"

#include <fcntl.h>
#include <gsl/gsl_errno.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "topo/topo.h"
#include "base/trace.h"
#include "base/fileio.h"
#include "base/units.h"
#include "base/op.h"
#include "base/membudget.h"
#include "base/parallel.h"
#include "sched/schedule.h"
#ifdef HAVE_MPI
#include "backends/mpi/mpi_backend.h"
#endif

typedef struct {
    const char *name;
    CsCliFunc func;
    const char *description;
    gboolean study; /* spreads its points over the ranks of mpirun (cs_parallel_for_ranks()) */
} Subcommand;

static const Subcommand subcommands[] = {
    { "run", cs_cli_run, "predict a collective, nccl-tests style (the default command)", TRUE },
    { "select", cs_cli_select, "best algorithm/protocol per size, crossovers, tuning tables",
      TRUE },
    { "explain", cs_cli_explain, "a schedule round by round, time split into alpha/beta/gamma",
      FALSE },
    { "model", cs_cli_model, "the alpha + n*beta table for one link", FALSE },
    { "algos", cs_cli_algos, "which algorithm serves which collective", FALSE },
    { "verify", cs_cli_verify, "prove schedules compute their collective (semantic checker)",
      FALSE },
    { "validate", cs_cli_validate, "predicted vs measured nccl-tests traces", TRUE },
    { "calibrate", cs_cli_calibrate, "fit a topology's parameters to traces", FALSE },
    { "measure", cs_cli_measure, "run collectives for real (cuda, nccl, mpi backends)", FALSE },
    { "crossover", cs_cli_crossover, "measure the predicted crossovers on a real backend", FALSE },
    { "topo", cs_cli_topo, "show or check topology files", FALSE },
    { "plan", cs_cli_plan, "a workload's step on candidate topologies (planning a purchase)",
      TRUE },
    { "workload", cs_cli_workload, "import a workload from NCCL's log of a run", FALSE },
};

static void
print_help(FILE *out)
{
    fprintf(out, "Usage: collsim [COMMAND] [OPTIONS]\n"
                 "\n"
                 "An alpha-beta collective-communication simulator and algorithm selector.\n"
                 "Without a command, collsim predicts like nccl-tests:\n"
                 "  collsim --topo dgx-h100x4 --op allreduce [-b 8 -e 8G -f 2]\n"
                 "\n"
                 "Commands:\n");
    for (gsize i = 0; i < G_N_ELEMENTS(subcommands); i++)
        fprintf(out, "  %-10s %s\n", subcommands[i].name, subcommands[i].description);
    fprintf(out, "  %-10s %s\n", "help", "this list; 'collsim COMMAND --help' for one command");
    fprintf(out, "\nRun 'collsim COMMAND --help' for a command's options.\n");
}

static const Subcommand *
find_subcommand(const char *name)
{
    for (gsize i = 0; i < G_N_ELEMENTS(subcommands); i++)
        if (strcmp(subcommands[i].name, name) == 0)
            return &subcommands[i];
    return NULL;
}

/* Usage errors are the ones a reminder of --help helps with; bad files are not. */
static gboolean
is_usage_error(const GError *error)
{
    return error->domain == G_OPTION_ERROR
           || (error->domain == CS_CLI_ERROR && error->code == CS_CLI_ERROR_USAGE);
}

static int
exit_status_for(const GError *error)
{
    if (is_usage_error(error))
        return 2;
    if (error->domain == CS_CLI_ERROR)
        return error->code == CS_CLI_ERROR_INPUT ? 2 : 1;
    if (error->domain == CS_TOPO_ERROR || error->domain == CS_TRACE_ERROR
        || error->domain == CS_UNITS_ERROR || error->domain == CS_OP_ERROR)
        return 2;
    /* A point beyond what memory holds is refused, as a size beyond 1 PiB is. */
    if (g_error_matches(error, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_TOO_LARGE))
        return 2;
    return 1;
}

/* ---- A study over mpirun's ranks ---- */

#ifdef HAVE_MPI
/* A rank whose others left the study ends here (cs_parallel_for_ranks()). */
static void
leave_study(int status, const char *report)
{
    if (report != NULL)
        fputs(report, stderr);
    exit(status);
}
#endif

/* Under mpirun with several ranks (an MPI build), makes this process one rank of the study:
 * ranks other than 0 print nothing (rank 0 reports their errors in the last round). A single
 * process, or a build without MPI, stays as it is. */
static gboolean
join_study(GError **error)
{
#ifdef HAVE_MPI
    if (!cs_mpi_backend_launched())
        return TRUE;
    if (!cs_mpi_backend_init(error))
        return FALSE;
    atexit(cs_mpi_backend_finalize);
    const int n_ranks = cs_mpi_backend_n_ranks();
    const int rank = cs_mpi_backend_rank();
    if (n_ranks <= 1)
        return TRUE;
    cs_parallel_set_ranks(rank, n_ranks, cs_mpi_backend_allgather, leave_study);
    if (rank > 0) {
        const int null = open("/dev/null", O_WRONLY);
        if (null >= 0) {
            dup2(null, STDOUT_FILENO);
            dup2(null, STDERR_FILENO);
            close(null);
        }
    }
#else
    (void)error;
#endif
    return TRUE;
}

/* Whether main() has already checked stdout (and reported a failure) on its way out. */
static gboolean stdout_checked;
static const char *stdout_prog = "collsim";

/* Every byte of a table counts: a write to stdout that failed (a full disk, a closed pipe
 * end, /dev/full) is one error line naming it, exit 1, not a silent truncated result. */
static gboolean
stdout_ok(const char *prog, gboolean report)
{
    g_autoptr(GError) local = NULL;
    stdout_checked = TRUE;
    if (cs_file_flush_stream(stdout, &local))
        return TRUE;
    if (report)
        fprintf(stderr, "%s: standard output: %s\n", prog, local->message);
    return FALSE;
}

/* For the paths that exit() before main() returns: GOption's --help. */
static void
check_stdout_at_exit(void)
{
    if (!stdout_checked && !stdout_ok(stdout_prog, TRUE))
        _exit(1);
}

/* main()'s status, with stdout's write errors folded in: a failure already reported keeps its
 * status and its one line. */
static int
finish(int status, const char *prog)
{
    if (!stdout_ok(prog, status == 0))
        return status == 0 ? 1 : status;
    return status;
}

int
main(int argc, char **argv)
{
    setlocale(LC_ALL, "");
    /* Numbers in files and tables are always C-locale ("1.5", never "1,5"). */
    setlocale(LC_NUMERIC, "C");
    gsl_set_error_handler_off();
    atexit(check_stdout_at_exit);

    const Subcommand *sub = NULL;
    int sub_argc = argc;
    char **sub_argv = argv;

    if (argc >= 2
        && (strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0
            || strcmp(argv[1], "-h") == 0)) {
        /* "help help", "help --help": the list is help's own help. */
        const gboolean about_help
            = argc >= 3
              && (strcmp(argv[2], "help") == 0 || strcmp(argv[2], "--help") == 0
                  || strcmp(argv[2], "-h") == 0);
        if (argc >= 3 && strcmp(argv[1], "help") == 0 && !about_help
            && find_subcommand(argv[2]) == NULL) {
            fprintf(stderr, "collsim: unknown command '%s'\nTry 'collsim --help'\n", argv[2]);
            return 2;
        }
        if (argc >= 3 && strcmp(argv[1], "help") == 0 && !about_help) {
            char *help_argv[] = { argv[0], "--help", NULL };
            sub = find_subcommand(argv[2]);
            g_autoptr(GError) error = NULL;
            g_autofree char *prog = g_strdup_printf("collsim %s", sub->name);
            help_argv[0] = prog;
            stdout_prog = prog;
            return finish(sub->func(2, help_argv, &error) ? 0 : exit_status_for(error), prog);
        }
        print_help(stdout);
        return finish(0, "collsim");
    }
    if (argc >= 2 && strcmp(argv[1], "--version") == 0) {
        printf("collsim %s\n", COLLSIM_VERSION);
        return finish(0, "collsim");
    }

    g_autofree char *prog = NULL;
    if (argc >= 2 && argv[1][0] != '-') {
        sub = find_subcommand(argv[1]);
        if (sub == NULL) {
            fprintf(stderr, "collsim: unknown command '%s'\nTry 'collsim --help'\n", argv[1]);
            return 2;
        }
        sub_argc = argc - 1;
        sub_argv = argv + 1;
        prog = g_strdup_printf("collsim %s", sub->name);
    }
    else {
        sub = &subcommands[0];
        prog = g_strdup("collsim");
    }

    /* GOption prints argv[0] in --help; give it the command's full name. */
    char **args = g_new0(char *, sub_argc + 1);
    args[0] = prog;
    for (int i = 1; i < sub_argc; i++)
        args[i] = sub_argv[i];

    g_autoptr(GError) error = NULL;
    stdout_prog = prog;
    /* A bad COLLSIM_MEMORY_LIMIT is said before anything runs. */
    gboolean ok = (!sub->study || join_study(&error)) && cs_membudget_init(&error)
                  && sub->func(sub_argc, args, &error);
    g_free(args);
    g_autofree char *text = NULL;
    int status = 0;
    if (ok)
        status = finish(0, prog);
    else {
        g_assert(error != NULL);
        /* What was printed before the error goes out first, as before. */
        status = finish(exit_status_for(error), prog);
        /* Every error line says who speaks; messages about a file start with its name. */
        text = g_strdup_printf(
            "%s%s\n%s%s%s",
            g_str_has_prefix(error->message, "collsim") ? "" : "collsim: ", error->message,
            is_usage_error(error) ? "Try '" : "", is_usage_error(error) ? prog : "",
            is_usage_error(error) ? " --help'\n" : "");
    }
    /* Under mpirun every rank ends here; rank 0 speaks for all of them. */
    g_autofree char *report = NULL;
    status = cs_parallel_ranks_end(status, text, &report);
    if (report != NULL)
        fputs(report, stderr);
    return status;
}
