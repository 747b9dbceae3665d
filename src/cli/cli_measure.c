// SPDX-License-Identifier: MIT
/* `collsim measure`: runs a collective for real on a backend (cuda, nccl, mpi) over a sweep of
 * sizes with nccl-tests' flags, and prints an nccl-tests trace that `collsim validate` and
 * `collsim calibrate` read. Any wrong element fails the command after the trace is printed. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "algos/registry.h"
#include "backends/backend.h"
#include "cli/cli.h"
#include "models/nccl.h"
#include "sched/schedule.h"
#include "topo/topo.h"
#include "base/units.h"

typedef struct {
    char *backend;
    char *op;
    char *algo;
    char *proto;
    char *min_bytes;
    char *max_bytes;
    char *step_factor;
    char *step_bytes;
    int iters;
    int warmup;
    char *dtype;
    char *redop;
    int root;
    int check;
    int channels;
    char *chunk;
    char *gpus;
    int virtual_ranks;
    char *topo;
    char **sets; /* --set PATH=VALUE */
    char *output;
    char **rest;
} Options;

static void
options_clear(Options *o)
{
    g_free(o->backend);
    g_free(o->op);
    g_free(o->algo);
    g_free(o->proto);
    g_free(o->min_bytes);
    g_free(o->max_bytes);
    g_free(o->step_factor);
    g_free(o->step_bytes);
    g_free(o->dtype);
    g_free(o->redop);
    g_free(o->chunk);
    g_free(o->gpus);
    g_free(o->topo);
    g_strfreev(o->sets);
    g_free(o->output);
    g_strfreev(o->rest);
}

/* A sweep longer than this is a typo, as in collsim run. */
#define MAX_SIZES 4096

static gboolean usage(GError **error, const char *format, ...) G_GNUC_PRINTF(2, 3);

static gboolean
usage(GError **error, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    g_autofree char *msg = g_strdup_vprintf(format, ap);
    va_end(ap);
    g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_USAGE, "collsim measure: %s", msg);
    return FALSE;
}

/* A size option: @text with units ("8", "64K", "1G"), >= 0. */
static gboolean
parse_size(const char *flag, const char *text, gint64 *bytes, GError **error)
{
    g_autoptr(GError) local = NULL;
    if (!cs_units_parse_size(text, bytes, &local))
        return usage(error, "%s: %s", flag, local->message);
    if (*bytes < 0)
        return usage(error, "%s: \"%s\" is negative", flag, text);
    return TRUE;
}

/* "0,1,3" -> device indices. */
static gboolean
parse_gpus(const char *text, GArray *gpus, GError **error)
{
    g_auto(GStrv) parts = g_strsplit(text, ",", -1);
    for (char **p = parts; *p != NULL; p++) {
        guint64 d = 0;
        g_autoptr(GError) local = NULL;
        if (!g_ascii_string_to_unsigned(g_strstrip(*p), 10, 0, G_MAXINT32, &d, &local))
            return usage(error, "--gpus: \"%s\" is not a device index (expected e.g. 0,1,2,3)", *p);
        int dev = (int)d;
        g_array_append_val(gpus, dev);
    }
    if (gpus->len == 0)
        return usage(error, "--gpus: empty list");
    return TRUE;
}

/* The command line as typed, for the trace header. */
static char *
command_line(int argc, char **argv)
{
    g_autoptr(GString) s = g_string_new("collsim measure");
    for (int i = 1; i < argc; i++) {
        gboolean plain = argv[i][0] != '\0' && strpbrk(argv[i], " \t\n'\"\\$`*?;&|<>()") == NULL;
        g_autofree char *quoted = plain ? g_strdup(argv[i]) : g_shell_quote(argv[i]);
        g_string_append_printf(s, " %s", quoted);
    }
    return g_string_free(g_steal_pointer(&s), FALSE);
}

static char *
backends_help(void)
{
    g_autoptr(GString) s = g_string_new("Backends:\n");
    for (const CsBackend *const *b = cs_backend_registry(); *b != NULL; b++)
        g_string_append_printf(
            s, "  %-5s %s%s%s\n", (*b)->name, (*b)->summary,
            (*b)->available ? "" : "\n        unavailable: ", (*b)->available ? "" : (*b)->missing);
    g_string_append(s, "\n"
                       "cuda and mpi run collsim's own schedules (--algo, see 'collsim algos'), "
                       "check every\n"
                       "element against a host reference (#wrong) and fail on any wrong element. "
                       "mpi runs\n"
                       "one rank per process: mpirun -np 4 collsim measure --backend mpi --op "
                       "allreduce --algo ring.\n"
                       "nccl runs NCCL's collective; --algo/--proto set NCCL_ALGO/NCCL_PROTO "
                       "(lists, ^,\n"
                       "allreduce:tree;broadcast:ring; a name NCCL does not know is an error).\n"
                       "Times: cuda and nccl use CUDA events, mpi MPI_Wtime averaged over ranks; "
                       "in-place\n"
                       "halves are measured by nccl only (N/A for schedules). cuda launches each "
                       "iteration as\n"
                       "one CUDA graph (COLLSIM_CUDA_GRAPHS=0: issued from the host); "
                       "COLLSIM_CUDA_FORCE_STAGING=1\n"
                       "sends every transfer through pinned host memory.");
    return g_string_free(g_steal_pointer(&s), FALSE);
}

/* Backend errors become CLI errors: bad arguments exit 2, the rest 1. */
static gboolean
backend_failed(GError *local, GError **error)
{
    int code = CS_CLI_ERROR_FAILED;
    if (local->domain == CS_BACKEND_ERROR)
        code = local->code == CS_BACKEND_ERROR_INVALID       ? CS_CLI_ERROR_INPUT
               : local->code == CS_BACKEND_ERROR_UNAVAILABLE ? CS_CLI_ERROR_UNAVAILABLE
                                                             : CS_CLI_ERROR_FAILED;
    else if (local->domain == CS_SCHEDULE_ERROR && local->code == CS_SCHEDULE_ERROR_UNSUPPORTED)
        code = CS_CLI_ERROR_INPUT;
    g_set_error(error, CS_CLI_ERROR, code, "collsim measure: %s", local->message);
    return FALSE;
}

static gboolean
build_args(Options *o, const CsBackend *backend, CsMeasureArgs *args, GArray *gpus, CsTopo **topo,
           GError **error)
{
    CsOp op = CS_OP_ALL_REDUCE;
    gboolean schedules = g_strcmp0(backend->name, "nccl") != 0;

    g_autoptr(GError) cause = NULL;
    if (o->op != NULL && !cs_op_from_name(o->op, &op, &cause))
        return usage(error, "--op: %s", cause->message);
    cs_measure_args_init(args, op);
    args->algo = o->algo;
    args->proto_name = o->proto;
    if (o->proto != NULL && schedules) {
        g_autoptr(GError) local = NULL;
        if (!cs_proto_from_name(o->proto, &args->proto, &local))
            return usage(error, "--proto: %s", local->message);
    }
    /* NCCL skips a name it does not know and the run goes unforced while the trace would
     * claim a forcing: every name must be NCCL's, and NCCL gets (and the trace records) its
     * own spelling. */
    struct {
        const char *flag;
        char **value;
        const char **arg;
        gboolean is_proto;
    } nccl_lists[] = { { "--algo", &o->algo, &args->algo, FALSE },
                       { "--proto", &o->proto, &args->proto_name, TRUE } };
    for (gsize i = 0; !schedules && i < G_N_ELEMENTS(nccl_lists); i++) {
        if (*nccl_lists[i].value == NULL)
            continue;
        char *env = cs_nccl_env_list(*nccl_lists[i].value, nccl_lists[i].is_proto, &cause);
        if (env == NULL)
            return usage(error, "%s: %s", nccl_lists[i].flag, cause->message);
        g_free(*nccl_lists[i].value);
        *nccl_lists[i].arg = *nccl_lists[i].value = env;
    }
    if (schedules && o->algo == NULL)
        return usage(error,
                     "the %s backend runs collsim's schedules: --algo is required "
                     "(see 'collsim algos')",
                     backend->name);
    if (schedules) {
        const CsAlgo *algo = cs_algo_lookup(o->algo, &cause);
        if (algo == NULL)
            return usage(error, "--algo: %s", cause->message);
        if ((algo->ops & CS_OP_BIT(op)) == 0)
            return usage(error, "--algo %s does not implement %s (see 'collsim algos')", algo->name,
                         cs_op_name(op));
    }
    if (o->min_bytes != NULL && !parse_size("-b", o->min_bytes, &args->min_bytes, error))
        return FALSE;
    if (o->max_bytes != NULL && !parse_size("-e", o->max_bytes, &args->max_bytes, error))
        return FALSE;
    if (o->min_bytes != NULL && o->max_bytes == NULL)
        args->max_bytes = MAX(args->max_bytes, args->min_bytes);
    if (o->max_bytes != NULL && o->min_bytes == NULL)
        args->min_bytes = MIN(args->min_bytes, args->max_bytes);
    if (args->min_bytes > args->max_bytes)
        return usage(error, "-b %s is larger than -e %s", o->min_bytes, o->max_bytes);
    if (o->step_bytes != NULL) {
        if (!parse_size("-i", o->step_bytes, &args->step_bytes, error))
            return FALSE;
        if (args->step_bytes == 0)
            return usage(error, "-i: the step must be positive");
        if (o->step_factor == NULL)
            args->step_factor = 0.0;
    }
    if (o->step_factor != NULL) {
        if (!cs_units_parse_decimal(o->step_factor, &args->step_factor)
            || !(args->step_factor > 1.0))
            return usage(error,
                         "-f: \"%s\" is not a step factor above 1 (use -i for linear "
                         "steps)",
                         o->step_factor);
    }
    if (o->iters < 1)
        return usage(error, "-n: %d iterations; at least 1", o->iters);
    if (o->warmup < 0)
        return usage(error, "-w: %d warm-up iterations; at least 0", o->warmup);
    args->iters = o->iters;
    args->warmup = o->warmup;
    if (o->dtype != NULL && !cs_dtype_from_name(o->dtype, &args->dtype, &cause))
        return usage(error, "-d: %s", cause->message);
    if (o->redop != NULL && !cs_redop_from_name(o->redop, &args->redop, &cause))
        return usage(error, "-o: %s", cause->message);
    if (o->root < 0)
        return usage(error, "-r: root %d is negative", o->root);
    args->root = o->root;
    if (o->check != 0 && o->check != 1)
        return usage(error, "-c: %d; 1 checks results, 0 does not", o->check);
    args->check = o->check == 1;
    /* collsim's schedules run on at most NCCL's 64 channels (algo.c refuses more). */
    const int max_channels = schedules ? 64 : 256;
    if (o->channels < 1 || o->channels > max_channels)
        return usage(error, "--channels: %d; between 1 and %d", o->channels, max_channels);
    args->n_channels = o->channels;
    if (o->chunk != NULL && !parse_size("--chunk", o->chunk, &args->chunk_bytes, error))
        return FALSE;
    if (o->gpus != NULL) {
        if (!parse_gpus(o->gpus, gpus, error))
            return FALSE;
        args->gpus = (const int *)(gconstpointer)gpus->data;
        args->n_gpus = (int)gpus->len;
    }
    if (o->virtual_ranks < 0)
        return usage(error, "--virtual-ranks: %d is negative", o->virtual_ranks);
    if (o->virtual_ranks > 0 && g_strcmp0(backend->name, "cuda") != 0)
        return usage(error, "--virtual-ranks is for --backend cuda (mpi takes its ranks from "
                            "mpirun -np, nccl one per GPU)");
    args->virtual_ranks = o->virtual_ranks;
    if (o->gpus != NULL && g_strcmp0(backend->name, "mpi") == 0)
        return usage(error, "--gpus is for the cuda and nccl backends");
    /* As collsim run: a sweep this long is a typo (-i 1 up to 1G), not a plan. */
    gint64 n_sizes = 0;
    if (args->step_factor > 1.0) {
        for (double v = (double)MAX(args->min_bytes, 0);
             v <= (double)args->max_bytes && n_sizes <= MAX_SIZES;
             v = MAX(v + 1, v * args->step_factor))
            n_sizes++;
    }
    else {
        n_sizes = (args->max_bytes - MAX(args->min_bytes, 0)) / MAX(args->step_bytes, 1) + 1;
    }
    if (n_sizes > MAX_SIZES)
        return usage(error,
                     "the sweep from -b %" G_GINT64_FORMAT " to -e %" G_GINT64_FORMAT
                     " has more than %d sizes; use a larger -f or -i",
                     args->min_bytes, args->max_bytes, MAX_SIZES);
    if (!cs_cli_check_output("collsim measure", "--output", o->output, error))
        return FALSE;
    if (o->sets != NULL && o->topo == NULL)
        return usage(error, "--set changes a topology: give --topo TOPO");
    if (o->topo != NULL) {
        *topo = cs_cli_load_topo("collsim measure", o->topo, o->sets, error);
        if (*topo == NULL)
            return FALSE;
        args->topo = *topo;
    }
    return TRUE;
}

/* ---- Row by row ---- */

/* How far the trace has been written: nccl-tests prints each row as it is measured, and an
 * interrupted run (a time limit, ^C, a dead GPU) must keep every finished row. */
typedef struct {
    const char *output; /* (nullable) --output; NULL or "-": stdout */
    gboolean head_done; /* stdout: headers and titles printed */
    gsize rows_done;    /* stdout: rows printed */
    GError *error;      /* the first write that failed; later rows are not written */
} Stream;

static gboolean
to_stdout(const Stream *s)
{
    return s->output == NULL || strcmp(s->output, "-") == 0;
}

/* Prints what @trace holds past what is already on stdout (the footer when @footer). */
static gboolean
print_new(Stream *s, const CsTrace *trace, gboolean footer, GError **error)
{
    g_autoptr(GString) text = g_string_new(NULL);
    if (!s->head_done) {
        g_autofree char *head = cs_trace_head_to_string(trace);
        g_string_append(text, head);
        s->head_done = TRUE;
    }
    for (; s->rows_done < cs_trace_n_rows(trace); s->rows_done++) {
        g_autofree char *row = cs_trace_row_to_string(trace, s->rows_done);
        g_string_append(text, row);
    }
    if (footer) {
        g_autofree char *tail = cs_trace_footer_to_string(trace);
        g_string_append(text, tail);
    }
    return cs_cli_write_output("collsim measure", "--output", NULL, text->str, (gssize)text->len,
                               error);
}

/* CsMeasureRowFunc: stdout gets the new row at once; --output FILE is replaced by the whole
 * trace so far (a valid trace with its footer), so the file is never half a row. */
static void
on_row(const CsTrace *trace, gpointer data)
{
    Stream *s = data;
    if (s->error != NULL)
        return;
    if (to_stdout(s)) {
        print_new(s, trace, FALSE, &s->error);
        return;
    }
    g_autofree char *text = cs_trace_to_string(trace);
    cs_cli_write_output("collsim measure", "--output", s->output, text, -1, &s->error);
}

/* The end of the run: the footer on stdout, or the final trace in the file. */
static gboolean
write_trace(Stream *s, const CsTrace *trace, GError **error)
{
    if (s->error != NULL) {
        g_propagate_error(error, g_steal_pointer(&s->error));
        return FALSE;
    }
    if (to_stdout(s))
        return print_new(s, trace, TRUE, error);
    g_autofree char *text = cs_trace_to_string(trace);
    return cs_cli_write_output("collsim measure", "--output", s->output, text, -1, error);
}

static gboolean
measure(Options *o, const char *command, GError **error)
{
    g_autoptr(GError) local = NULL;
    g_autoptr(GArray) gpus = g_array_new(FALSE, FALSE, sizeof(int));
    g_autoptr(CsTopo) topo = NULL;
    g_autoptr(CsTrace) trace = NULL;
    CsMeasureArgs args;

    if (o->rest != NULL && o->rest[0] != NULL)
        return usage(error, "unexpected argument \"%s\"", o->rest[0]);
    if (o->backend == NULL)
        return usage(error, "--backend is required (cuda, nccl or mpi)");
    const CsBackend *backend = cs_backend_lookup(o->backend, &local);
    if (backend == NULL)
        return usage(error, "--backend: %s", local->message);
    if (!backend->available) {
        g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_UNAVAILABLE, "collsim measure: %s",
                    backend->missing);
        return FALSE;
    }
    if (!build_args(o, backend, &args, gpus, &topo, error))
        return FALSE;
    args.command = command;
    Stream stream = { .output = o->output };
    args.on_row = on_row;
    args.on_row_data = &stream;

    gboolean measured = cs_backend_measure(backend, &args, &trace, &local);
    /* A failed write is reported before a backend error that may have followed it. */
    if (stream.error != NULL) {
        g_propagate_error(error, g_steal_pointer(&stream.error));
        return FALSE;
    }
    if (!measured)
        return backend_failed(local, error);
    /* Under MPI only rank 0 holds the trace and reports; the others end quietly. */
    if (trace == NULL)
        return TRUE;
    if (!write_trace(&stream, trace, error))
        return FALSE;
    gint64 wrong = cs_backend_trace_wrong(trace);
    if (wrong > 0) {
        g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_FAILED,
                    "collsim measure: %" G_GINT64_FORMAT " wrong element%s (#wrong column): "
                    "the %s backend did not compute %s correctly",
                    wrong, wrong == 1 ? "" : "s", backend->name, cs_op_name(args.op));
        return FALSE;
    }
    return TRUE;
}

/**
 * cs_cli_measure:
 * `collsim measure --backend B --op OP [--algo A] [--proto P] [-b -e -f -i -n -w -d -o -r -c]
 * [--channels N] [--chunk S] [--gpus LIST | --virtual-ranks P] [--topo T] [--output FILE]`.
 * Prints the trace (rank 0 only under MPI). Returns FALSE with CS_CLI_ERROR_USAGE for bad
 * flags, _UNAVAILABLE when the backend was built out or finds no device, _FAILED when a run
 * fails or any element is wrong (after printing the trace).
 */
gboolean
cs_cli_measure(int argc, char **argv, GError **error)
{
    Options o = { .iters = 20, .warmup = 1, .check = 1, .channels = 1 };
    const GOptionEntry entries[] = {
        { "backend", 0, 0, G_OPTION_ARG_STRING, &o.backend, "cuda, nccl or mpi (required)",
          "NAME" },
        { "op", 0, 0, G_OPTION_ARG_STRING, &o.op, "Collective (default allreduce)", "OP" },
        { "algo", 0, 0, G_OPTION_ARG_STRING, &o.algo,
          "collsim algorithm (cuda, mpi; required) or NCCL_ALGO (nccl)", "ALGO" },
        { "proto", 0, 0, G_OPTION_ARG_STRING, &o.proto,
          "LL, LL128 or Simple (default Simple; nccl: NCCL_PROTO)", "PROTO" },
        { "minbytes", 'b', 0, G_OPTION_ARG_STRING, &o.min_bytes, "Smallest size (default 32M)",
          "SIZE" },
        { "maxbytes", 'e', 0, G_OPTION_ARG_STRING, &o.max_bytes, "Largest size (default 32M)",
          "SIZE" },
        { "stepfactor", 'f', 0, G_OPTION_ARG_STRING, &o.step_factor,
          "Multiply the size by F each step (default 2)", "F" },
        { "stepbytes", 'i', 0, G_OPTION_ARG_STRING, &o.step_bytes,
          "Add SIZE each step instead of multiplying", "SIZE" },
        { "iters", 'n', 0, G_OPTION_ARG_INT, &o.iters, "Timed iterations (default 20)", "N" },
        { "warmup_iters", 'w', 0, G_OPTION_ARG_INT, &o.warmup, "Warm-up iterations (default 1)",
          "N" },
        { "datatype", 'd', 0, G_OPTION_ARG_STRING, &o.dtype,
          "int8, uint8, int32, uint32, int64, uint64, half, float, double, bfloat16", "TYPE" },
        { "redop", 'o', 0, G_OPTION_ARG_STRING, &o.redop, "sum, prod, max, min or avg", "REDOP" },
        { "root", 'r', 0, G_OPTION_ARG_INT, &o.root, "Root rank (default 0)", "R" },
        { "check", 'c', 0, G_OPTION_ARG_INT, &o.check, "Check results: 1 (default) or 0", "0|1" },
        { "channels", 0, 0, G_OPTION_ARG_INT, &o.channels, "Schedule channels (default 1)", "N" },
        { "chunk", 0, 0, G_OPTION_ARG_STRING, &o.chunk,
          "Pipeline chunk per channel step (default: the protocol's)", "SIZE" },
        { "gpus", 0, 0, G_OPTION_ARG_STRING, &o.gpus, "Devices to use (default all)", "LIST" },
        { "virtual-ranks", 0, 0, G_OPTION_ARG_INT, &o.virtual_ranks,
          "cuda: P ranks on one GPU (or round-robin over --gpus)", "P" },
        { "topo", 0, 0, G_OPTION_ARG_STRING, &o.topo,
          "Topology giving the algorithms their node structure", "TOPO" },
        CS_CLI_SET_ENTRY(&o.sets),
        { "output", 0, 0, G_OPTION_ARG_FILENAME, &o.output,
          "Write the trace to FILE instead of stdout", "FILE" },
        { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_STRING_ARRAY, &o.rest, NULL, NULL },
        { NULL, 0, 0, 0, NULL, NULL, NULL },
    };
    g_autofree char *command = command_line(argc, argv);
    g_autofree char *description = backends_help();

    gboolean ok = cs_cli_parse(&argc, &argv, entries, NULL,
                               "Run a collective for real and print an nccl-tests trace.",
                               description, error);
    if (ok)
        ok = measure(&o, command, error);
    cs_backend_shutdown();
    options_clear(&o);
    return ok;
}
