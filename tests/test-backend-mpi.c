// SPDX-License-Identifier: MIT
/* The MPI backend for real, run under `mpirun -np P` (tests/meson.build: P = 4 and 3): every
 * algorithm x collective it implements, on several sizes, channel counts, datatypes and
 * operators, must leave #wrong = 0. Every rank runs the same cases in the same order (they are
 * collective); rank 0 checks the trace and alone prints TAP. */
#include "config.h"

#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

#include "algos/registry.h"
#include "backends/backend.h"
#include "backends/mpi/mpi_backend.h"
#include "topo/topo.h"

static int world_rank;
static int world_size;

typedef struct {
    const CsAlgo *algo;
    CsOp op;
} MpiCase;

typedef struct {
    gint64 min_bytes;
    gint64 max_bytes;
    int n_channels;
    gint64 chunk_bytes;
    CsDtype dtype;
    CsRedop redop;
} Variant;

/* Sizes from 0 bytes (nothing moves) through a few elements per rank (blocks shorter than P,
 * sizes not divisible by P) to 40 KB; a short chunk pipelines many messages per connection on
 * 2 channels; and exact datatype/operator pairs: int8 products wrap, half maxima, bfloat16 and
 * uint32 averages end with a division, double minima. */
static const Variant variants[] = {
    { 0, 40000, 1, 0, CS_DTYPE_FLOAT, CS_REDOP_SUM },
    { 1000, 3000, 2, 64, CS_DTYPE_FLOAT, CS_REDOP_SUM },
    { 300, 300, 1, 16, CS_DTYPE_INT8, CS_REDOP_PROD },
    { 600, 600, 2, 0, CS_DTYPE_HALF, CS_REDOP_MAX },
    { 600, 600, 1, 32, CS_DTYPE_BFLOAT16, CS_REDOP_AVG },
    { 1200, 1200, 1, 0, CS_DTYPE_UINT32, CS_REDOP_AVG },
    { 2400, 2400, 3, 0, CS_DTYPE_DOUBLE, CS_REDOP_MIN },
};

static void
test_case(gconstpointer data)
{
    const MpiCase *c = data;
    const char *why = NULL;
    g_autoptr(CsTopo) topo = NULL;

    /* Algorithms that need NVLink SHARP get the 4-GPU NVSwitch box's structure. */
    if (c->algo->supports != NULL && !c->algo->supports(NULL, c->op, world_size, &why)) {
        if (world_size == 4)
            topo = cs_topo_load("dgx-h100x4", NULL);
        if (topo == NULL || !c->algo->supports(topo, c->op, world_size, &why)) {
            g_test_skip(why);
            return;
        }
    }
    for (gsize v = 0; v < G_N_ELEMENTS(variants); v++) {
        CsMeasureArgs args;
        cs_measure_args_init(&args, c->op);
        args.algo = c->algo->name;
        args.min_bytes = variants[v].min_bytes;
        args.max_bytes = variants[v].max_bytes;
        args.step_factor = 7.0;
        args.iters = 1;
        args.warmup = 0;
        args.n_channels = variants[v].n_channels;
        args.chunk_bytes = variants[v].chunk_bytes;
        args.dtype = variants[v].dtype;
        args.redop = variants[v].redop;
        args.root = world_size - 1;
        args.topo = topo;

        CsTrace *trace = NULL;
        g_autoptr(GError) error = NULL;
        gboolean ok = cs_mpi_backend_measure(&args, &trace, &error);
        g_assert_no_error(error);
        g_assert_true(ok);
        if (world_rank != 0) {
            g_assert_null(trace);
            continue;
        }
        g_assert_nonnull(trace);
        g_assert_cmpuint(cs_trace_n_rows(trace), >, 0);
        for (gsize i = 0; i < cs_trace_n_rows(trace); i++) {
            const CsTraceRow *row = cs_trace_row(trace, i);
            if (row->out_of_place.wrong != 0)
                g_error("%s %s P=%d size %" G_GINT64_FORMAT
                        " %s %s channels %d chunk %" G_GINT64_FORMAT ": %" G_GINT64_FORMAT
                        " wrong elements",
                        c->algo->name, cs_op_name(c->op), world_size, row->size_bytes, row->type,
                        row->redop, args.n_channels, args.chunk_bytes, row->out_of_place.wrong);
            g_assert_cmpfloat(row->out_of_place.time_us, >, 0.0);
        }
        g_assert_cmpstr(cs_trace_get_header(trace, "backend"), ==, "mpi");
        g_autofree char *ranks = g_strdup_printf("%d", world_size);
        g_assert_cmpstr(cs_trace_get_header(trace, "ranks"), ==, ranks);
        cs_trace_free(trace);
    }
}

/* A root that does not exist is refused on every rank alike, before anything is sent. */
static void
test_bad_root(void)
{
    CsMeasureArgs args;
    cs_measure_args_init(&args, CS_OP_BROADCAST);
    args.algo = "ring";
    args.root = world_size;
    args.min_bytes = args.max_bytes = 64;
    CsTrace *trace = NULL;
    g_autoptr(GError) error = NULL;
    g_assert_false(cs_mpi_backend_measure(&args, &trace, &error));
    g_assert_error(error, CS_BACKEND_ERROR, CS_BACKEND_ERROR_INVALID);
    g_assert_null(trace);
}

int
main(int argc, char **argv)
{
    g_autoptr(GError) error = NULL;
    if (!cs_mpi_backend_init(&error)) {
        fprintf(stderr, "%s\n", error->message);
        return 1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    /* One TAP stream: the other ranks run the same cases silently. */
    if (world_rank != 0 && freopen("/dev/null", "w", stdout) == NULL)
        return 1;

    g_test_init(&argc, &argv, NULL);
    g_test_summary("Every algorithm x collective over MPI point-to-point computes the right "
                   "result (#wrong = 0) on the mpirun's ranks.");

    g_test_add_func("/backend/mpi/bad-root", test_bad_root);
    GPtrArray *cases = g_ptr_array_new_with_free_func(g_free);
    for (const CsAlgo *const *a = cs_algo_registry(); *a != NULL; a++)
        for (int op = 0; op < CS_N_OPS; op++) {
            if (((*a)->ops & CS_OP_BIT(op)) == 0)
                continue;
            MpiCase *c = g_new(MpiCase, 1);
            *c = (MpiCase){ *a, (CsOp)op };
            g_ptr_array_add(cases, c);
            g_autofree char *path
                = g_strdup_printf("/backend/mpi/%s/%s", (*a)->name, cs_op_name(op));
            g_test_add_data_func(path, c, test_case);
        }
    int status = g_test_run();
    g_ptr_array_unref(cases);
    cs_backend_shutdown();
    return status;
}
