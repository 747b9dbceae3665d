// SPDX-License-Identifier: MIT
/* `collsim measure --backend cuda`: the bridge from Schedule to the CUDA executor. Builds the
 * schedule per size, lowers it (cuda_plan.c), checks a launch and a replay element by element
 * against the host reference, then times warm-up and timed iterations with CUDA events. */
#include "config.h"

#include "backends/cuda/cuda_backend.h"

#include <math.h>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/cuda_exec.h"
#include "backends/cuda/cuda_plan.h"
#include "backends/reference.h"

/* cuda_exec.cu mirrors these numberings without including op.h or schedule.h. */
G_STATIC_ASSERT(CS_DTYPE_INT8 == 0 && CS_DTYPE_UINT8 == 1 && CS_DTYPE_INT32 == 2
                && CS_DTYPE_UINT32 == 3 && CS_DTYPE_INT64 == 4 && CS_DTYPE_UINT64 == 5
                && CS_DTYPE_HALF == 6 && CS_DTYPE_FLOAT == 7 && CS_DTYPE_DOUBLE == 8
                && CS_DTYPE_BFLOAT16 == 9);
G_STATIC_ASSERT(CS_REDOP_SUM == 0 && CS_REDOP_PROD == 1 && CS_REDOP_MAX == 2 && CS_REDOP_MIN == 3
                && CS_REDOP_AVG == 4);
G_STATIC_ASSERT((int)CS_BUF_INPUT == (int)CS_CUDA_MEM_INPUT
                && (int)CS_BUF_OUTPUT == (int)CS_CUDA_MEM_OUTPUT
                && (int)CS_BUF_SCRATCH == (int)CS_CUDA_MEM_SCRATCH);
G_STATIC_ASSERT(sizeof(CsCudaXop) == 96);

typedef struct {
    CsCudaExec *exec;
    int nranks;
    int *rank_device;
    guint8 *direct;  /* [nranks * nranks] */
    gboolean graphs; /* iterations launched as a CUDA graph */
} Gpus;

static void
gpus_clear(Gpus *g)
{
    cs_cuda_exec_free(g->exec);
    g_free(g->rank_device);
    g_free(g->direct);
}

static gboolean
exec_failed(GError **error, const char *what, const char *err)
{
    g_set_error(error, CS_BACKEND_ERROR, CS_BACKEND_ERROR_RUNTIME, "cuda backend: %s: %s", what,
                err);
    return FALSE;
}

/**
 * cs_cuda_backend_device_count:
 * Returns: the number of CUDA devices, or 0 with @why (transfer full) saying why none.
 */
int
cs_cuda_backend_device_count(char **why)
{
    char err[CS_CUDA_ERROR_LEN] = "";
    int n = cs_cuda_exec_device_count(err);

    if (n > 0)
        return n;
    if (why != NULL)
        *why = n < 0 ? g_strdup_printf("no usable CUDA driver: %s", err)
                     : g_strdup("no CUDA device found");
    return 0;
}

/* Rank r runs on gpus[r] (one per GPU), or on gpus[r % n] with --virtual-ranks, where the
 * device list defaults to all devices, or to device 0 for virtual ranks. */
static gboolean
map_ranks(const CsMeasureArgs *args, Gpus *g, GError **error)
{
    g_autofree char *why = NULL;
    int n_devices = cs_cuda_backend_device_count(&why);

    if (n_devices == 0) {
        g_set_error(error, CS_BACKEND_ERROR, CS_BACKEND_ERROR_UNAVAILABLE, "cuda backend: %s", why);
        return FALSE;
    }
    g_autoptr(GArray) devices = g_array_new(FALSE, FALSE, sizeof(int));
    if (args->n_gpus > 0)
        g_array_append_vals(devices, args->gpus, (guint)args->n_gpus);
    else if (args->virtual_ranks > 0) {
        int zero = 0;
        g_array_append_val(devices, zero);
    }
    else
        for (int d = 0; d < n_devices; d++)
            g_array_append_val(devices, d);
    for (guint i = 0; i < devices->len; i++) {
        int d = g_array_index(devices, int, i);
        if (d < 0 || d >= n_devices) {
            g_set_error(error, CS_BACKEND_ERROR, CS_BACKEND_ERROR_INVALID,
                        "--gpus: device %d does not exist (%d CUDA device%s)", d, n_devices,
                        n_devices == 1 ? "" : "s");
            return FALSE;
        }
    }

    g->nranks = args->virtual_ranks > 0 ? args->virtual_ranks : (int)devices->len;
    g->rank_device = g_new(int, g->nranks);
    for (int r = 0; r < g->nranks; r++)
        g->rank_device[r] = g_array_index(devices, int, (guint)r % devices->len);

    char err[CS_CUDA_ERROR_LEN] = "";
    g->exec = cs_cuda_exec_new(g->rank_device, g->nranks, err);
    if (g->exec == NULL)
        return exec_failed(error, "set-up", err);
    /* COLLSIM_CUDA_GRAPHS=0 issues every iteration from the host instead of launching a graph,
     * to see what issuing costs. */
    g->graphs = g_strcmp0(g_getenv("COLLSIM_CUDA_GRAPHS"), "0") != 0;
    cs_cuda_exec_set_graphs(g->exec, g->graphs);
    /* COLLSIM_CUDA_FORCE_STAGING=1 sends everything between ranks through pinned host
     * memory, as on GPUs without peer access: the tests run that path on one GPU. */
    gboolean force_staging = g_strcmp0(g_getenv("COLLSIM_CUDA_FORCE_STAGING"), "1") == 0;
    g->direct = g_new(guint8, (gsize)g->nranks * (gsize)g->nranks);
    for (int a = 0; a < g->nranks; a++)
        for (int b = 0; b < g->nranks; b++)
            g->direct[a * g->nranks + b]
                = force_staging ? a == b : (guint8)cs_cuda_exec_direct(g->exec, a, b);
    return TRUE;
}

/* hardware, gpus, software and transport headers. */
static gboolean
describe_gpus(const CsMeasureArgs *args, const Gpus *g, CsTrace *trace, GError **error)
{
    char err[CS_CUDA_ERROR_LEN] = "";
    g_autoptr(GString) hardware = g_string_new(NULL);
    g_autoptr(GHashTable) seen = g_hash_table_new(g_direct_hash, g_direct_equal);
    int driver = 0;
    int runtime = 0;
    int n_distinct = 0;

    for (int r = 0; r < g->nranks; r++) {
        int d = g->rank_device[r];
        if (g_hash_table_contains(seen, GINT_TO_POINTER(d + 1)))
            continue;
        g_hash_table_add(seen, GINT_TO_POINTER(d + 1));
        char name[256];
        if (cs_cuda_exec_device_info(d, name, sizeof name, &driver, &runtime, err) != 0)
            return exec_failed(error, "device query", err);
        g_string_append_printf(hardware, "%sdevice %d: %s", n_distinct > 0 ? ", " : "", d, name);
        n_distinct++;
    }
    if (args->virtual_ranks > 0)
        g_string_append_printf(hardware, " (%d virtual ranks on %d GPU%s)", g->nranks, n_distinct,
                               n_distinct == 1 ? "" : "s");
    g_autofree char *gpus = g_strdup_printf("%d", n_distinct);
    g_autofree char *software
        = g_strdup_printf("CUDA driver %d.%d, CUDA runtime %d.%d", driver / 1000,
                          driver % 1000 / 10, runtime / 1000, runtime % 1000 / 10);
    g_autofree char *launcher = g_strdup_printf("single process, %d rank%s, a stream per rank "
                                                "and channel",
                                                g->nranks, g->nranks == 1 ? "" : "s");
    int staged = 0;
    for (int i = 0; i < g->nranks * g->nranks; i++)
        staged += g->direct[i] == 0;
    g_autofree char *transport
        = staged == 0
              ? g_strdup("direct copies and kernels (same device or peer access)")
              : g_strdup_printf("%d of %d rank pairs staged through pinned host memory (no peer "
                                "access)",
                                staged, g->nranks * g->nranks);
    g_autofree char *channels = g_strdup_printf("%d", args->n_channels);

    cs_trace_set_header(trace, "hardware", hardware->str);
    cs_trace_set_header(trace, "gpus", gpus);
    cs_trace_set_header(trace, "nodes", "1");
    cs_trace_set_header(trace, "software", software);
    cs_trace_set_header(trace, "launcher", launcher);
    cs_trace_set_header(trace, "transport", transport);
    cs_trace_set_header(trace, "channels", channels);
    return TRUE;
}

/* Poisons every rank's output and scratch, so that an element a run does not write is wrong. */
static gboolean
poison_outputs(const Gpus *g, const CsSchedule *sched, GError **error)
{
    char err[CS_CUDA_ERROR_LEN] = "";
    if (cs_cuda_exec_fill_all(g->exec, CS_CUDA_MEM_OUTPUT, CS_REFERENCE_POISON,
                              cs_schedule_buffer_bytes(sched, CS_BUF_OUTPUT), err)
            != 0
        || cs_cuda_exec_fill_all(g->exec, CS_CUDA_MEM_SCRATCH, CS_REFERENCE_POISON,
                                 cs_schedule_buffer_bytes(sched, CS_BUF_SCRATCH), err)
               != 0)
        return exec_failed(error, "fill", err);
    return TRUE;
}

/* Writes every rank's input on its GPU (cuda_check.cu): nothing is computed on the host or
 * copied. */
static gboolean
load_inputs(const Gpus *g, const CsSchedule *sched, GError **error)
{
    char err[CS_CUDA_ERROR_LEN] = "";
    CsDtype dtype = cs_schedule_dtype(sched);
    CsRefExpect input = {
        .n = cs_schedule_buffer_bytes(sched, CS_BUF_INPUT) / cs_dtype_size(dtype),
        .block = 1,
        .source = CS_REF_FROM_RANK,
        .nranks = g->nranks,
        .dtype = (int32_t)dtype,
        .redop = (int32_t)cs_schedule_redop(sched),
        .reduces = cs_op_reduces(cs_schedule_op(sched)),
    };

    for (int r = 0; r < g->nranks; r++) {
        int device = 0;
        void *dst = cs_cuda_exec_arena(g->exec, r, CS_CUDA_MEM_INPUT, &device);
        input.rank = r;
        if (cs_cuda_check_write(device, dst, &input, err) != 0)
            return exec_failed(error, "inputs", err);
    }
    return TRUE;
}

/* Wrong elements over all ranks' defined outputs after one run, counted on the GPUs. */
static gboolean
count_wrong(const Gpus *g, const CsSchedule *sched, gint64 *wrong, GError **error)
{
    char err[CS_CUDA_ERROR_LEN] = "";
    g_autofree int *devices = g_new(int, g->nranks);
    g_autofree const void **got = g_new(const void *, g->nranks);
    g_autofree CsRefExpect *expect = g_new(CsRefExpect, g->nranks);
    g_autofree gint64 *rank_wrong = g_new(gint64, g->nranks);
    int n = 0;

    for (int r = 0; r < g->nranks; r++) {
        if (!cs_reference_expectation(cs_schedule_op(sched), cs_schedule_size(sched), g->nranks,
                                      cs_schedule_root(sched), cs_schedule_dtype(sched),
                                      cs_schedule_redop(sched), r, &expect[n]))
            continue;
        got[n] = cs_cuda_exec_arena(g->exec, r, CS_CUDA_MEM_OUTPUT, &devices[n]);
        n++;
    }
    if (cs_cuda_check_count_wrong(n, devices, got, expect, rank_wrong, err) != 0)
        return exec_failed(error, "check", err);
    *wrong = 0;
    for (int i = 0; i < n; i++)
        *wrong += rank_wrong[i];
    return TRUE;
}

static gboolean
measure_size(const CsMeasureArgs *args, const CsAlgo *algo, const Gpus *g, gint64 size_bytes,
             CsTrace *trace, GError **error)
{
    char err[CS_CUDA_ERROR_LEN] = "";
    /* Wall-clock phases of the point, for G_MESSAGES_DEBUG: where the host spends its time. */
    gint64 t[7];
    gint64 checked_run_us[2] = { 0, 0 }; /* the first captures the graph */
    t[0] = g_get_monotonic_time();
    g_autoptr(CsSchedule) sched
        = cs_backend_build_schedule(args, algo, g->nranks, size_bytes, error);
    if (sched == NULL)
        return FALSE;
    g_autoptr(CsCudaPlan) plan = cs_cuda_plan_new(sched, g->direct, error);
    if (plan == NULL)
        return FALSE;
    const CsCudaPlanView *view = cs_cuda_plan_view(plan);
    t[1] = g_get_monotonic_time();
    if (cs_cuda_exec_prepare(g->exec, view, err) != 0)
        return exec_failed(error, "allocation", err);
    t[2] = g_get_monotonic_time();
    if (!load_inputs(g, sched, error))
        return FALSE;
    t[3] = g_get_monotonic_time();

    gint64 wrong = -1;
    double ms = 0.0;
    if (args->check) {
        /* Checked twice over poisoned outputs: the first launch, then a replay of its graph,
         * so that a result only one of them gets wrong is caught. */
        wrong = 0;
        for (int launch = 0; launch < 2; launch++) {
            gint64 launch_wrong = 0;
            if (!poison_outputs(g, sched, error))
                return FALSE;
            gint64 run_start = g_get_monotonic_time();
            if (cs_cuda_exec_run(g->exec, view, 1, &ms, err) != 0)
                return exec_failed(error, "checked run", err);
            checked_run_us[launch] = g_get_monotonic_time() - run_start;
            if (!count_wrong(g, sched, &launch_wrong, error))
                return FALSE;
            wrong += launch_wrong;
        }
    }
    t[4] = g_get_monotonic_time();
    if (args->warmup > 0 && cs_cuda_exec_run(g->exec, view, args->warmup, &ms, err) != 0)
        return exec_failed(error, "warm-up", err);
    t[5] = g_get_monotonic_time();
    if (cs_cuda_exec_run(g->exec, view, args->iters, &ms, err) != 0)
        return exec_failed(error, "timed run", err);
    t[6] = g_get_monotonic_time();
    double capture_ms[3] = { 0, 0, 0 };
    if (g->graphs)
        cs_cuda_exec_capture_ms(g->exec, capture_ms);

    g_debug("cuda: %s %" G_GINT64_FORMAT " B: %" G_GINT64_FORMAT " xops, %d events, %d slots; "
            "ms: schedule and plan %.1f, allocation %.1f, inputs %.1f, checked runs %.1f "
            "(first launch %.1f, second %.1f), warm-up %.1f, timed %.1f (GPU %.1f); the graph, "
            "built in the first run: capture %.1f, instantiate %.1f, upload %.1f",
            algo->name, size_bytes, view->n_xops, view->n_events, cs_cuda_plan_slots(plan),
            (double)(t[1] - t[0]) / 1e3, (double)(t[2] - t[1]) / 1e3, (double)(t[3] - t[2]) / 1e3,
            (double)(t[4] - t[3]) / 1e3, (double)checked_run_us[0] / 1e3,
            (double)checked_run_us[1] / 1e3, (double)(t[5] - t[4]) / 1e3,
            (double)(t[6] - t[5]) / 1e3, ms, capture_ms[0], capture_ms[1], capture_ms[2]);
    cs_backend_trace_add(trace, args, cs_schedule_size(sched), g->nranks, ms / 1e3 / args->iters,
                         wrong, NAN, -1);
    return TRUE;
}

/**
 * cs_cuda_backend_measure:
 * Runs args->algo's schedules on the GPUs for every size of @args. Out-of-place only: the
 * in-place half of each row is N/A, since a schedule names its input and output separately.
 * Returns: TRUE with @trace (transfer full), or FALSE with CS_BACKEND_ERROR_UNAVAILABLE (no
 * GPU), _INVALID (arguments) or _RUNTIME (CUDA failed), or the algorithm's error.
 */
gboolean
cs_cuda_backend_measure(const CsMeasureArgs *args, CsTrace **trace, GError **error)
{
    const CsAlgo *algo = cs_backend_lookup_algo(args, "cuda", error);
    if (algo == NULL)
        return FALSE;

    Gpus g = { 0 };
    gboolean ok = map_ranks(args, &g, error);
    g_autoptr(CsTrace) t = NULL;
    if (ok) {
        t = cs_backend_trace_new(args, "cuda", g.nranks);
        ok = describe_gpus(args, &g, t, error);
    }
    /* Every header before the first row: the rows are printed as they are measured. */
    if (ok)
        cs_trace_set_header(t, "launch",
                            g.graphs ? "one CUDA graph per iteration (captured once a size)"
                                     : "issued from the host every iteration "
                                       "(COLLSIM_CUDA_GRAPHS=0)");
    g_autoptr(GArray) sizes = cs_measure_args_sizes(args);
    for (guint i = 0; ok && i < sizes->len; i++)
        ok = measure_size(args, algo, &g, g_array_index(sizes, gint64, i), t, error);
    gpus_clear(&g);
    if (!ok)
        return FALSE;
    *trace = g_steal_pointer(&t);
    return TRUE;
}
