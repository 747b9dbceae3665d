// SPDX-License-Identifier: MIT
/* The registry of real backends (cuda, nccl, mpi): which were built, why the others were not,
 * and the helpers they share to write nccl-tests traces. */
#include "config.h"

#include "backends/backend.h"

#include <math.h>

#include "algos/registry.h"

#ifdef HAVE_CUDA
#include "backends/cuda/cuda_backend.h"
#endif
#ifdef HAVE_NCCL
#include "backends/nccl/nccl_backend.h"
#endif
#ifdef HAVE_MPI
#include "backends/mpi/mpi_backend.h"
#endif

/* clang-format off */
G_DEFINE_QUARK(cs_backend_error_quark, cs_backend_error)
/* clang-format on */

/* ---- Registry ---- */

static const CsBackend backend_cuda = {
    .name = "cuda",
    .summary = "collsim's schedules on NVIDIA GPUs: a stream per rank, copies and kernels",
#ifdef HAVE_CUDA
    .available = TRUE,
    .measure = cs_cuda_backend_measure,
#else
    .missing = "built without CUDA (install nvidia-cuda-toolkit and reconfigure with "
               "-Dcuda=enabled)",
#endif
};

static const CsBackend backend_nccl = {
    .name = "nccl",
    .summary = "NCCL's own collectives, NCCL_ALGO/NCCL_PROTO forced by --algo/--proto",
#ifdef HAVE_NCCL
    .available = TRUE,
    .measure = cs_nccl_backend_measure,
#elif defined(HAVE_CUDA)
    .missing = "built without NCCL (install libnccl-dev and reconfigure with -Dcuda=enabled)",
#else
    .missing = "built without CUDA and NCCL (install nvidia-cuda-toolkit and libnccl-dev and "
               "reconfigure with -Dcuda=enabled)",
#endif
};

static const CsBackend backend_mpi = {
    .name = "mpi",
    .summary = "collsim's schedules over MPI point-to-point between CPU processes (mpirun)",
#ifdef HAVE_MPI
    .available = TRUE,
    .measure = cs_mpi_backend_measure,
#else
    .missing = "built without MPI (install libopenmpi-dev and reconfigure with -Dmpi=enabled)",
#endif
};

static const CsBackend *const backends[] = { &backend_cuda, &backend_nccl, &backend_mpi, NULL };

/**
 * cs_backend_registry:
 * Returns: (transfer none): the NULL-terminated table, built-out backends included.
 */
const CsBackend *const *
cs_backend_registry(void)
{
    return backends;
}

/**
 * cs_backend_lookup:
 * Finds a backend by its --backend name, available or not.
 * Returns: (transfer none) (nullable): NULL with CS_BACKEND_ERROR_INVALID naming the choices.
 */
const CsBackend *
cs_backend_lookup(const char *name, GError **error)
{
    g_autoptr(GString) names = g_string_new(NULL);

    for (const CsBackend *const *b = backends; *b != NULL; b++) {
        if (g_ascii_strcasecmp((*b)->name, name) == 0)
            return *b;
        g_string_append_printf(names, "%s%s", names->len > 0 ? ", " : "", (*b)->name);
    }
    g_set_error(error, CS_BACKEND_ERROR, CS_BACKEND_ERROR_INVALID,
                "unknown backend \"%s\" (known: %s)", name, names->str);
    return NULL;
}

/**
 * cs_backend_measure:
 * Runs @args on @backend.
 * Returns: FALSE with CS_BACKEND_ERROR_UNAVAILABLE (the package and build option to get it)
 * when @backend was built out, or the backend's own error.
 */
gboolean
cs_backend_measure(const CsBackend *backend, const CsMeasureArgs *args, CsTrace **trace,
                   GError **error)
{
    g_return_val_if_fail(backend != NULL && args != NULL && trace != NULL, FALSE);
    *trace = NULL;
    if (!backend->available || backend->measure == NULL) {
        g_set_error_literal(error, CS_BACKEND_ERROR, CS_BACKEND_ERROR_UNAVAILABLE,
                            backend->missing);
        return FALSE;
    }
    return backend->measure(args, trace, error);
}

gboolean
cs_backend_multi_process(void)
{
#ifdef HAVE_MPI
    return cs_mpi_backend_launched();
#else
    return FALSE;
#endif
}

/**
 * cs_backend_reporting:
 * Whether this process reports: always, except under MPI in ranks other than 0.
 */
gboolean
cs_backend_reporting(void)
{
#ifdef HAVE_MPI
    return cs_mpi_backend_rank() == 0;
#else
    return TRUE;
#endif
}

/**
 * cs_backend_shutdown:
 * Finalises MPI when a backend initialised it; harmless otherwise. Call once at exit.
 */
void
cs_backend_shutdown(void)
{
#ifdef HAVE_MPI
    cs_mpi_backend_finalize();
#endif
}

/* ---- Arguments ---- */

/**
 * cs_measure_args_init:
 * nccl-tests' defaults (src/common.cu): -b 32M -e 32M, -n 20, -w 1, float, sum, root 0,
 * checking on; our step factor is 2, and one channel with the protocol's chunk.
 */
void
cs_measure_args_init(CsMeasureArgs *args, CsOp op)
{
    *args = (CsMeasureArgs){
        .op = op,
        .proto = CS_PROTO_SIMPLE,
        .min_bytes = 32 * 1024 * 1024,
        .max_bytes = 32 * 1024 * 1024,
        .step_bytes = 1024 * 1024,
        .step_factor = 2.0,
        .iters = 20,
        .warmup = 1,
        .dtype = CS_DTYPE_FLOAT,
        .redop = CS_REDOP_SUM,
        .root = 0,
        .check = TRUE,
        .n_channels = 1,
    };
}

/**
 * cs_measure_args_sizes:
 * nccl-tests' sweep: from -b while <= -e, times -f (or plus -i when -f is 0 or 1).
 * Returns: (transfer full): a GArray of gint64 byte sizes.
 */
GArray *
cs_measure_args_sizes(const CsMeasureArgs *args)
{
    GArray *sizes = g_array_new(FALSE, FALSE, sizeof(gint64));
    gint64 size = MAX(args->min_bytes, 0);

    while (size <= args->max_bytes) {
        g_array_append_val(sizes, size);
        /* Stop before the next size would pass G_MAXINT64 (converting such a double to
         * gint64 is undefined, and the sweep never ended). */
        double grown = args->step_factor > 1.0 ? (double)size * args->step_factor
                                               : (double)size + (double)MAX(args->step_bytes, 1);
        if (grown >= (double)args->max_bytes + 1.0 || grown >= 0x1p63)
            break;
        gint64 next;
        if (args->step_factor > 1.0)
            next = MAX(size + 1, (gint64)grown);
        else
            next = size + MAX(args->step_bytes, 1);
        size = next;
    }
    return sizes;
}

/* ---- Schedules ---- */

const CsAlgo *
cs_backend_lookup_algo(const CsMeasureArgs *args, const char *backend, GError **error)
{
    g_autoptr(GError) local = NULL;

    if (args->algo == NULL) {
        g_set_error(error, CS_BACKEND_ERROR, CS_BACKEND_ERROR_INVALID,
                    "the %s backend runs collsim's schedules: --algo is required "
                    "(see 'collsim algos')",
                    backend);
        return NULL;
    }
    const CsAlgo *algo = cs_algo_lookup(args->algo, &local);
    if (algo == NULL) {
        g_set_error_literal(error, CS_BACKEND_ERROR, CS_BACKEND_ERROR_INVALID, local->message);
        return NULL;
    }
    return algo;
}

CsSchedule *
cs_backend_build_schedule(const CsMeasureArgs *args, const CsAlgo *algo, int nranks,
                          gint64 size_bytes, GError **error)
{
    CsAlgoArgs a;

    if (args->topo != NULL && cs_topo_n_ranks(args->topo) != nranks) {
        g_set_error(error, CS_BACKEND_ERROR, CS_BACKEND_ERROR_INVALID,
                    "topology %s has %d ranks but the run has %d", cs_topo_name(args->topo),
                    cs_topo_n_ranks(args->topo), nranks);
        return NULL;
    }
    if (cs_op_has_root(args->op) && (args->root < 0 || args->root >= nranks)) {
        g_set_error(error, CS_BACKEND_ERROR, CS_BACKEND_ERROR_INVALID,
                    "-r: root %d does not exist on %d rank%s", args->root, nranks,
                    nranks == 1 ? "" : "s");
        return NULL;
    }
    cs_algo_args_init(&a, args->topo, args->op, nranks, size_bytes);
    a.root = args->root;
    a.dtype = args->dtype;
    a.redop = args->redop;
    a.proto = args->proto;
    a.n_channels = args->n_channels;
    if (args->chunk_bytes > 0)
        a.chunk_bytes = args->chunk_bytes;
    CsSchedule *sched = cs_algo_build(algo, &a, error);
    if (sched != NULL && cs_schedule_algo(sched) == NULL)
        cs_schedule_set_algo(sched, algo->name);
    return sched;
}

/* ---- Traces ---- */

/**
 * cs_backend_trace_new:
 * The headers every backend writes, in the `# key: value` vocabulary of traces/README.md.
 * The schedule backends (cuda, mpi) also write `algo` and `proto`: the collsim algorithm and
 * protocol that built the schedule, for validate and calibrate to predict the same one.
 * Returns: (transfer full).
 */
CsTrace *
cs_backend_trace_new(const CsMeasureArgs *args, const char *backend, int nranks)
{
    CsTrace *trace = cs_trace_new(args->op, nranks);
    g_autofree char *source
        = g_strdup_printf("collsim %s measure --backend %s", COLLSIM_VERSION, backend);
    g_autofree char *ranks = g_strdup_printf("%d", nranks);
    g_autofree char *iterations = g_strdup_printf("warmup %d, timed %d, check %s", args->warmup,
                                                  args->iters, args->check ? "on" : "off");

    cs_trace_set_header(trace, "source", source);
    if (args->command != NULL)
        cs_trace_set_header(trace, "command", args->command);
    cs_trace_set_header(trace, "backend", backend);
    cs_trace_set_header(trace, "collective", cs_op_nccl_tests_name(args->op));
    cs_trace_set_header(trace, "ranks", ranks);
    /* The schedule backends ran exactly this algorithm and protocol; the nccl backend says
     * what it forced in NCCL's own words (nccl_backend.c). */
    if (g_strcmp0(backend, "nccl") != 0 && args->algo != NULL) {
        const char *proto = cs_proto_name(args->proto);
        g_autofree char *algo_proto
            = g_strdup_printf("%s/%s (collsim schedule)", args->algo, proto);
        cs_trace_set_header(trace, "algo/proto", algo_proto);
        cs_trace_set_header(trace, "algo", args->algo);
        cs_trace_set_header(trace, "proto", proto);
    }
    cs_trace_set_header(trace, "datatype", cs_dtype_name(args->dtype));
    if (cs_op_reduces(args->op))
        cs_trace_set_header(trace, "redop", cs_redop_name(args->redop));
    if (cs_op_has_root(args->op)) {
        g_autofree char *root = g_strdup_printf("%d", args->root);
        cs_trace_set_header(trace, "root", root);
    }
    cs_trace_set_header(trace, "iterations", iterations);
    return trace;
}

static CsTraceCell
make_cell(const CsOpSize *size, CsOp op, int nranks, double time_s, gint64 wrong)
{
    CsTraceCell cell = { .time_us = NAN, .algbw_GBps = NAN, .busbw_GBps = NAN, .wrong = wrong };

    if (!isnan(time_s)) {
        cell.time_us = time_s * 1e6;
        cell.algbw_GBps = time_s > 0 ? (double)size->size_bytes / time_s / 1e9 : 0.0;
        cell.busbw_GBps = cell.algbw_GBps * cs_op_busbw_factor(op, nranks);
    }
    return cell;
}

/**
 * cs_backend_trace_add:
 * One nccl-tests row: algbw = size / time, busbw = algbw * the collective's factor.
 */
void
cs_backend_trace_add(CsTrace *trace, const CsMeasureArgs *args, const CsOpSize *size, int nranks,
                     double oop_time_s, gint64 oop_wrong, double ip_time_s, gint64 ip_wrong)
{
    CsTraceRow row = {
        .size_bytes = size->size_bytes,
        .count = size->count,
        .root = cs_op_has_root(args->op) ? args->root : -1,
        .out_of_place = make_cell(size, args->op, nranks, oop_time_s, oop_wrong),
        .in_place = make_cell(size, args->op, nranks, ip_time_s, ip_wrong),
    };
    g_strlcpy(row.type, cs_dtype_name(args->dtype), sizeof row.type);
    /* nccl-tests' sendrecv.cu prints its (unused) operator, like a reduction's. */
    gboolean prints_redop = cs_op_reduces(args->op) || args->op == CS_OP_SEND_RECV;
    g_strlcpy(row.redop, prints_redop ? cs_redop_name(args->redop) : "none", sizeof row.redop);
    cs_trace_add_row(trace, &row);
    if (args->on_row != NULL && cs_backend_reporting())
        args->on_row(trace, args->on_row_data);
}

gint64
cs_backend_trace_wrong(const CsTrace *trace)
{
    gint64 wrong = 0;
    for (gsize i = 0; i < cs_trace_n_rows(trace); i++) {
        const CsTraceRow *row = cs_trace_row(trace, i);
        wrong += MAX(row->out_of_place.wrong, 0) + MAX(row->in_place.wrong, 0);
    }
    return wrong;
}
