// SPDX-License-Identifier: MIT
/* The CUDA and NCCL backends on a real GPU. Without one (no driver, or no device) the program
 * exits 77, which meson reports as skipped. With one: every algorithm x collective on 2, 3, 4
 * and 8 virtual ranks of GPU 0 and on the 4 and 16 ranks of two shipped topologies (NVLS,
 * two nodes), through peer copies and again staged through pinned host memory, with #wrong = 0;
 * datatype and operator pairs; every GPU as a rank when there are several; the GPU's own
 * inputs and checks against the host reference; and NCCL's own collectives on all GPUs. */
#include "config.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <string.h>

#include "algos/registry.h"
#include "backends/backend.h"
#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_check.h"
#include "backends/reference.h"
#include "topo/topo.h"
#ifdef HAVE_NCCL
#include "backends/nccl/nccl_backend.h"
#endif

static int n_gpus;

typedef struct {
    const CsAlgo *algo;
    CsOp op;
    int nranks;
    const char *topo; /* (nullable) shipped topology: node structure, NVLink SHARP */
} GpuCase;

/* Fails the test on any wrong element; returns the trace's row count. */
static gsize
assert_all_right(CsTrace *trace, const char *what)
{
    for (gsize i = 0; i < cs_trace_n_rows(trace); i++) {
        const CsTraceRow *row = cs_trace_row(trace, i);
        if (row->out_of_place.wrong != 0 || row->in_place.wrong > 0)
            g_error("%s: size %" G_GINT64_FORMAT " %s %s: %" G_GINT64_FORMAT " + %" G_GINT64_FORMAT
                    " wrong elements",
                    what, row->size_bytes, row->type, row->redop, row->out_of_place.wrong,
                    row->in_place.wrong);
        g_assert_cmpfloat(row->out_of_place.time_us, >, 0.0);
    }
    return cs_trace_n_rows(trace);
}

#define CUDA_ASSERT(call)                                                                          \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess)                                                                     \
            g_error("%s: %s", #call, cudaGetErrorString(e_));                                      \
    } while (0)

/* Counts on the GPU the wrong elements of @host (@n elements) uploaded to @dev. */
static gint64
device_count(void *dev, const void *host, const CsRefExpect *e, gint64 bytes)
{
    char err[CS_CUDA_ERROR_LEN] = "";
    gint64 wrong = -1;
    CUDA_ASSERT(cudaMemcpy(dev, host, (size_t)bytes, cudaMemcpyHostToDevice));
    const int device = 0;
    const void *got = dev;
    if (cs_cuda_check_count_wrong(1, &device, &got, e, &wrong, err) != 0)
        g_error("count: %s", err);
    return wrong;
}

/* The GPU writes the host's inputs and expected outputs bit for bit (every collective,
 * datatype and operator on 3 ranks, 771 elements a block: not a multiple of a warp), and its
 * check finds exactly the elements made wrong. */
static void
test_device_reference(void)
{
    const int P = 3;
    const int root = 1;
    const gint64 cap = (gint64)P * P * 771 * 8 + 8;
    char err[CS_CUDA_ERROR_LEN] = "";
    void *dev = NULL;
    g_autofree guint8 *want = g_malloc(cap);
    g_autofree guint8 *got = g_malloc(cap);
    CUDA_ASSERT(cudaSetDevice(0));
    CUDA_ASSERT(cudaMalloc(&dev, (size_t)cap));

    for (int op = 0; op < CS_N_OPS; op++)
        for (int d = 0; d < CS_N_DTYPES; d++)
            for (int redop = 0; redop < (cs_op_reduces(op) ? CS_N_REDOPS : 1); redop++) {
                gint64 ts = cs_dtype_size((CsDtype)d);
                gint64 bytes = (gint64)P * 771 * ts;
                CsOpSize size = cs_op_size((CsOp)op, bytes, (CsDtype)d, P);
                for (int r = 0; r < P; r++) {
                    CsRefExpect input = { .n = size.send_bytes / ts,
                                          .block = 1,
                                          .source = CS_REF_FROM_RANK,
                                          .rank = r,
                                          .nranks = P,
                                          .dtype = d,
                                          .redop = redop,
                                          .reduces = cs_op_reduces(op) };
                    cs_reference_fill_input(want, input.n, (CsDtype)d, (CsOp)op, (CsRedop)redop, r,
                                            P, 0);
                    if (cs_cuda_check_write(0, dev, &input, err) != 0)
                        g_error("inputs: %s", err);
                    CUDA_ASSERT(
                        cudaMemcpy(got, dev, (size_t)size.send_bytes, cudaMemcpyDeviceToHost));
                    g_assert_cmpmem(got, size.send_bytes, want, size.send_bytes);

                    CsRefExpect e;
                    if (!cs_reference_expectation((CsOp)op, &size, P, root, (CsDtype)d,
                                                  (CsRedop)redop, r, &e))
                        continue;
                    g_assert_true(cs_reference_expected((CsOp)op, &size, P, root, (CsDtype)d,
                                                        (CsRedop)redop, r, want));
                    gint64 out_bytes = e.n * ts;
                    g_assert_cmpint(out_bytes, >, 0);
                    if (cs_cuda_check_write(0, dev, &e, err) != 0)
                        g_error("expected: %s", err);
                    CUDA_ASSERT(cudaMemcpy(got, dev, (size_t)out_bytes, cudaMemcpyDeviceToHost));
                    g_assert_cmpmem(got, out_bytes, want, out_bytes);
                    g_assert_cmpint(device_count(dev, want, &e, out_bytes), ==, 0);
                    /* Three elements poisoned, as a run that never wrote them leaves them. */
                    memset(want, CS_REFERENCE_POISON, (size_t)ts);
                    memset(want + (e.n / 2) * ts, CS_REFERENCE_POISON, (size_t)ts);
                    memset(want + (e.n - 1) * ts, CS_REFERENCE_POISON, (size_t)ts);
                    g_assert_cmpint(device_count(dev, want, &e, out_bytes), ==, 3);
                    g_assert_cmpint(cs_reference_count_wrong(want, got, e.n, (CsDtype)d, P), ==, 3);
                }
            }
    CUDA_ASSERT(cudaFree(dev));

    /* Several outputs in one call (as a measured point checks its ranks): output i has i
     * poisoned elements, and each gets its own count. */
    CsOpSize size = cs_op_size(CS_OP_ALL_REDUCE, 4000, CS_DTYPE_FLOAT, P);
    CsRefExpect e[3];
    int devices[3] = { 0, 0, 0 };
    const void *outs[3];
    void *bufs[3];
    gint64 wrong[3] = { -1, -1, -1 };
    for (int i = 0; i < 3; i++) {
        g_assert_true(cs_reference_expectation(CS_OP_ALL_REDUCE, &size, P, 0, CS_DTYPE_FLOAT,
                                               CS_REDOP_SUM, i, &e[i]));
        g_assert_true(cs_reference_expected(CS_OP_ALL_REDUCE, &size, P, 0, CS_DTYPE_FLOAT,
                                            CS_REDOP_SUM, i, want));
        memset(want, CS_REFERENCE_POISON, (size_t)i * sizeof(float));
        CUDA_ASSERT(cudaMalloc(&bufs[i], (size_t)size.recv_bytes));
        CUDA_ASSERT(cudaMemcpy(bufs[i], want, (size_t)size.recv_bytes, cudaMemcpyHostToDevice));
        outs[i] = bufs[i];
    }
    if (cs_cuda_check_count_wrong(3, devices, outs, e, wrong, err) != 0)
        g_error("count: %s", err);
    for (int i = 0; i < 3; i++) {
        g_assert_cmpint(wrong[i], ==, i);
        CUDA_ASSERT(cudaFree(bufs[i]));
    }
}

static void
run_cuda(const CsMeasureArgs *args, const char *what)
{
    CsTrace *trace = NULL;
    g_autoptr(GError) error = NULL;
    gboolean ok = cs_cuda_backend_measure(args, &trace, &error);
    if (!ok)
        g_error("%s: %s", what, error->message);
    g_assert_cmpuint(assert_all_right(trace, what), >, 0);
    cs_trace_free(trace);
}

/* Sizes: 0 bytes, a few elements (blocks shorter than P), sizes not divisible by P, 1 MB with
 * a chunk small enough to reuse every connection's 8 slots; 2 channels. */
static void
test_virtual_ranks(gconstpointer data)
{
    const GpuCase *c = data;
    const char *why = NULL;
    g_autoptr(CsTopo) topo = NULL;
    if (c->topo != NULL) {
        g_autoptr(GError) error = NULL;
        topo = cs_topo_load(c->topo, &error);
        g_assert_no_error(error);
    }
    if (c->algo->supports != NULL && !c->algo->supports(topo, c->op, c->nranks, &why)) {
        g_test_skip(why);
        return;
    }
    for (int staged = 0; staged < 2; staged++) {
        /* Staging: every transfer between ranks goes device -> pinned host -> device. */
        if (staged)
            g_setenv("COLLSIM_CUDA_FORCE_STAGING", "1", TRUE);
        else
            g_unsetenv("COLLSIM_CUDA_FORCE_STAGING");
        CsMeasureArgs args;
        cs_measure_args_init(&args, c->op);
        args.algo = c->algo->name;
        args.virtual_ranks = c->nranks;
        args.topo = topo;
        args.min_bytes = 0;
        args.max_bytes = 1 << 20;
        args.step_factor = 13.0;
        args.iters = 2;
        args.warmup = 1;
        args.root = c->nranks - 1;
        args.n_channels = 2;
        args.chunk_bytes = 16384;
        g_autofree char *what = g_strdup_printf(
            "%s %s P=%d%s%s%s", c->algo->name, cs_op_name(c->op), c->nranks,
            c->topo != NULL ? " on " : "", c->topo != NULL ? c->topo : "", staged ? " staged" : "");
        run_cuda(&args, what);
    }
    g_unsetenv("COLLSIM_CUDA_FORCE_STAGING");
}

/* Every datatype with every operator on a ring all-reduce of 4 virtual ranks. */
static void
test_types(void)
{
    for (int d = 0; d < CS_N_DTYPES; d++)
        for (int o = 0; o < CS_N_REDOPS; o++) {
            CsMeasureArgs args;
            cs_measure_args_init(&args, CS_OP_ALL_REDUCE);
            args.algo = "ring";
            args.virtual_ranks = 4;
            args.min_bytes = args.max_bytes = 40000;
            args.iters = 1;
            args.dtype = (CsDtype)d;
            args.redop = (CsRedop)o;
            g_autofree char *what
                = g_strdup_printf("ring allreduce %s %s", cs_dtype_name(d), cs_redop_name(o));
            run_cuda(&args, what);
        }
}

/* The same schedules issued from the host every iteration (COLLSIM_CUDA_GRAPHS=0) compute the
 * same results; the trace says how each run was launched. */
static void
test_launch_modes(void)
{
    static const char *const algos[] = { "ring", "tree", "mst" };
    /* The other tests run as the caller set COLLSIM_CUDA_GRAPHS (scripts/gpu-session.sh
     * sanitize runs them all without graphs): put it back afterwards. */
    g_autofree char *caller = g_strdup(g_getenv("COLLSIM_CUDA_GRAPHS"));
    for (int graphs = 0; graphs < 2; graphs++) {
        g_setenv("COLLSIM_CUDA_GRAPHS", graphs ? "1" : "0", TRUE);
        for (gsize a = 0; a < G_N_ELEMENTS(algos); a++) {
            CsMeasureArgs args;
            cs_measure_args_init(&args, CS_OP_ALL_REDUCE);
            args.algo = algos[a];
            args.virtual_ranks = 4;
            args.min_bytes = 8;
            args.max_bytes = 4 << 20;
            args.step_factor = 16.0;
            args.iters = 3;
            CsTrace *trace = NULL;
            g_autoptr(GError) error = NULL;
            if (!cs_cuda_backend_measure(&args, &trace, &error))
                g_error("%s graphs=%d: %s", algos[a], graphs, error->message);
            assert_all_right(trace, algos[a]);
            const char *launch = cs_trace_get_header(trace, "launch");
            g_assert_nonnull(launch);
            g_assert_true(g_str_has_prefix(launch, graphs ? "one CUDA graph" : "issued from"));
            cs_trace_free(trace);
        }
    }
    if (caller != NULL)
        g_setenv("COLLSIM_CUDA_GRAPHS", caller, TRUE);
    else
        g_unsetenv("COLLSIM_CUDA_GRAPHS");
}

/* All GPUs, one rank each (peer access where the hardware has it). */
static void
test_all_gpus(void)
{
    if (n_gpus < 2) {
        g_test_skip("one GPU");
        return;
    }
    for (const CsAlgo *const *a = cs_algo_registry(); *a != NULL; a++)
        for (int op = 0; op < CS_N_OPS; op++) {
            const char *why = NULL;
            if (((*a)->ops & CS_OP_BIT(op)) == 0
                || ((*a)->supports != NULL && !(*a)->supports(NULL, op, n_gpus, &why)))
                continue;
            CsMeasureArgs args;
            cs_measure_args_init(&args, (CsOp)op);
            args.algo = (*a)->name;
            args.min_bytes = 8;
            args.max_bytes = 8 << 20;
            args.step_factor = 64.0;
            args.iters = 2;
            g_autofree char *what
                = g_strdup_printf("%s %s on %d GPUs", (*a)->name, cs_op_name(op), n_gpus);
            run_cuda(&args, what);
        }
}

#ifdef HAVE_NCCL
/* NCCL's collectives on all GPUs, out-of-place and in-place, with our reference check. */
static void
test_nccl(void)
{
    for (int op = 0; op < CS_N_OPS; op++) {
        CsMeasureArgs args;
        cs_measure_args_init(&args, (CsOp)op);
        args.min_bytes = 8;
        args.max_bytes = 4 << 20;
        args.step_factor = 32.0;
        args.iters = 2;
        args.root = n_gpus - 1;
        CsTrace *trace = NULL;
        g_autoptr(GError) error = NULL;
        if (!cs_nccl_backend_measure(&args, &trace, &error))
            g_error("nccl %s: %s", cs_op_name(op), error->message);
        assert_all_right(trace, cs_op_name(op));
        cs_trace_free(trace);
    }
    for (int o = 0; o < CS_N_REDOPS; o++) {
        CsMeasureArgs args;
        cs_measure_args_init(&args, CS_OP_ALL_REDUCE);
        args.min_bytes = args.max_bytes = 1 << 16;
        args.iters = 1;
        args.redop = (CsRedop)o;
        args.dtype = CS_DTYPE_BFLOAT16;
        args.algo = "Ring"; /* NCCL's spellings, as collsim measure passes them */
        args.proto_name = "Simple";
        CsTrace *trace = NULL;
        g_autoptr(GError) error = NULL;
        if (!cs_nccl_backend_measure(&args, &trace, &error))
            g_error("nccl allreduce %s: %s", cs_redop_name(o), error->message);
        assert_all_right(trace, cs_redop_name(o));
        g_assert_cmpstr(cs_trace_get_header(trace, "env"), ==, "NCCL_ALGO=Ring NCCL_PROTO=Simple");
        cs_trace_free(trace);
    }
}
#endif

int
main(int argc, char **argv)
{
    g_autofree char *why = NULL;
    n_gpus = cs_cuda_backend_device_count(&why);
    if (n_gpus == 0) {
        printf("skipped: %s\n", why);
        return 77;
    }

    g_test_init(&argc, &argv, NULL);
    g_test_summary("collsim's schedules on a real GPU compute every collective (#wrong = 0), "
                   "and so do NCCL's.");
    static const int rank_counts[] = { 2, 3, 4, 8 };
    static const struct {
        const char *name;
        int nranks;
    } topos[] = { { "dgx-h100x4", 4 }, { "hgx-h100x8-2n", 16 } };
    GPtrArray *cases = g_ptr_array_new_with_free_func(g_free);
    for (const CsAlgo *const *a = cs_algo_registry(); *a != NULL; a++)
        for (int op = 0; op < CS_N_OPS; op++) {
            if (((*a)->ops & CS_OP_BIT(op)) == 0)
                continue;
            for (gsize k = 0; k < G_N_ELEMENTS(rank_counts); k++) {
                GpuCase *c = g_new(GpuCase, 1);
                *c = (GpuCase){ *a, (CsOp)op, rank_counts[k], NULL };
                g_ptr_array_add(cases, c);
                g_autofree char *path = g_strdup_printf("/backend/cuda/%s/%s/p%d", (*a)->name,
                                                        cs_op_name(op), rank_counts[k]);
                g_test_add_data_func(path, c, test_virtual_ranks);
            }
            /* As many virtual ranks as these machines have GPUs: NVLS needs the NVSwitch with
             * multicast of the first, the hierarchical algorithms the two nodes of the second. */
            for (gsize k = 0; k < G_N_ELEMENTS(topos); k++) {
                GpuCase *c = g_new(GpuCase, 1);
                *c = (GpuCase){ *a, (CsOp)op, topos[k].nranks, topos[k].name };
                g_ptr_array_add(cases, c);
                g_autofree char *path = g_strdup_printf("/backend/cuda/%s/%s/%s", (*a)->name,
                                                        cs_op_name(op), topos[k].name);
                g_test_add_data_func(path, c, test_virtual_ranks);
            }
        }
    g_test_add_func("/backend/cuda/device-reference", test_device_reference);
    g_test_add_func("/backend/cuda/types", test_types);
    g_test_add_func("/backend/cuda/launch-modes", test_launch_modes);
    g_test_add_func("/backend/cuda/all-gpus", test_all_gpus);
#ifdef HAVE_NCCL
    g_test_add_func("/backend/nccl/collectives", test_nccl);
#endif
    int status = g_test_run();
    g_ptr_array_unref(cases);
    return status;
}
