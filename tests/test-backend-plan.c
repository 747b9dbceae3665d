// SPDX-License-Identifier: MIT
/* The CUDA backend's lowering (cuda_plan.c), tested without a GPU: every algorithm x
 * collective is lowered and its xop list executed on host memory in list order and in random
 * orders that only respect streams and events, as a GPU may run it; the outputs must equal
 * the host reference, and every byte an operation reads must be written by one ordered
 * before it (or be input). Hand-built schedules pin the xop and event structure, the staged
 * path through host memory, slot reuse and the deadlock fallback. */
#include "config.h"

#include <string.h>

#include "algos/registry.h"
#include "backends/cuda/cuda_plan.h"
#include "backends/reference.h"
#include "topo/topo.h"

/* ---- Running a plan on host arenas ---- */

typedef struct {
    int P;
    guint8 **mem; /* [P * CS_CUDA_N_MEMS] */
} Arenas;

static Arenas
arenas_new(const CsCudaPlan *plan, const CsSchedule *sched)
{
    const CsCudaPlanView *v = cs_cuda_plan_view(plan);
    Arenas a = { .P = v->n_ranks, .mem = g_new0(guint8 *, v->n_ranks * CS_CUDA_N_MEMS) };
    CsDtype dtype = cs_schedule_dtype(sched);
    gint64 in_bytes = cs_schedule_buffer_bytes(sched, CS_BUF_INPUT);

    for (int r = 0; r < a.P; r++) {
        for (int m = 0; m < CS_CUDA_N_MEMS; m++) {
            gint64 bytes = v->mem_bytes[r * CS_CUDA_N_MEMS + m];
            a.mem[r * CS_CUDA_N_MEMS + m] = g_malloc((gsize)bytes + 1);
            memset(a.mem[r * CS_CUDA_N_MEMS + m], CS_REFERENCE_POISON, (gsize)bytes + 1);
        }
        cs_reference_fill_input(a.mem[r * CS_CUDA_N_MEMS + CS_CUDA_MEM_INPUT],
                                in_bytes / cs_dtype_size(dtype), dtype, cs_schedule_op(sched),
                                cs_schedule_redop(sched), r, a.P, 0);
    }
    return a;
}

static void
arenas_free(Arenas *a)
{
    for (int i = 0; i < a->P * CS_CUDA_N_MEMS; i++)
        g_free(a->mem[i]);
    g_free(a->mem);
}

/* Wrong output elements over all ranks after running @plan once with @seed. */
static gint64
run_and_count_wrong(const CsCudaPlan *plan, const CsSchedule *sched, guint32 seed)
{
    Arenas a = arenas_new(plan, sched);
    const CsOpSize *size = cs_schedule_size(sched);
    CsDtype dtype = cs_schedule_dtype(sched);
    g_autofree guint8 *expected = g_malloc((gsize)size->recv_bytes + 1);
    gint64 wrong = 0;

    cs_cuda_plan_run_host(plan, a.mem, seed);
    for (int r = 0; r < a.P; r++)
        if (cs_reference_expected(cs_schedule_op(sched), size, a.P, cs_schedule_root(sched), dtype,
                                  cs_schedule_redop(sched), r, expected))
            wrong += cs_reference_count_wrong(a.mem[r * CS_CUDA_N_MEMS + CS_CUDA_MEM_OUTPUT],
                                              expected, size->recv_bytes / cs_dtype_size(dtype),
                                              dtype, a.P);
    arenas_free(&a);
    return wrong;
}

/* Bytes the plan's operations read that no earlier operation is ordered to have written:
 * never written (before a run only the inputs hold data; outputs and scratch hold poison),
 * or written by an operation that neither the read's stream nor its event waits order before
 * it, so that a GPU may run the read first. Order is tracked with a vector clock per
 * operation over the streams. Either is a plan that works by accident. */
static gint64
unordered_reads(const CsCudaPlan *plan, const CsSchedule *sched)
{
    const CsCudaPlanView *v = cs_cuda_plan_view(plan);
    const int S = v->n_streams;
    const gint64 n = v->n_xops;
    g_autofree gint32 *clock = g_new0(gint32, (gsize)(n * S) + 1);
    g_autofree gint32 *seq = g_new0(gint32, (gsize)n + 1);
    g_autofree gint64 *stream_last = g_new(gint64, (gsize)S);
    g_autofree gint64 *recorder = g_new(gint64, (gsize)v->n_events + 1);
    g_autoptr(GPtrArray) writer = g_ptr_array_new_with_free_func(g_free);
    gint64 in_bytes = cs_schedule_buffer_bytes(sched, CS_BUF_INPUT);
    gint64 bad = 0;

    for (int i = 0; i < S; i++)
        stream_last[i] = -1;
    for (int e = 0; e < v->n_events; e++)
        recorder[e] = -1;
    /* The last writer of every byte: -1 written before the run, -2 never. */
    for (int i = 0; i < v->n_ranks * CS_CUDA_N_MEMS; i++) {
        gint64 bytes = v->mem_bytes[i];
        gint64 *w = g_new(gint64, (gsize)bytes + 1);
        for (gint64 b = 0; b < bytes; b++)
            w[b] = i % CS_CUDA_N_MEMS == CS_CUDA_MEM_INPUT && b < in_bytes ? -1 : -2;
        g_ptr_array_add(writer, w);
    }
#define WRITER(ref)                                                                                \
    ((gint64 *)g_ptr_array_index(writer, (ref).rank * CS_CUDA_N_MEMS + (ref).mem) + (ref).offset)
    for (gint64 i = 0; i < n; i++) {
        const CsCudaXop *x = &v->xops[i];
        gint32 *c = clock + i * S;
        if (stream_last[x->stream] >= 0)
            memcpy(c, clock + stream_last[x->stream] * S, (gsize)S * sizeof *c);
        for (int w = 0; w < x->n_waits; w++) {
            gint64 r = recorder[v->waits[x->wait_first + w]];
            g_assert_cmpint(r, >=, 0); /* every wait follows its record in the list */
            for (int k = 0; k < S; k++)
                c[k] = MAX(c[k], clock[r * S + k]);
        }
        seq[i] = c[x->stream] = c[x->stream] + 1;
        stream_last[x->stream] = i;
        if (x->record >= 0)
            recorder[x->record] = i;
        if (x->bytes <= 0)
            continue;

        const CsCudaRef none = { 0, 0, -1 };
        const CsCudaRef reads[] = {
            x->action == CS_CUDA_XOP_DIVIDE ? none : x->a,
            x->action == CS_CUDA_XOP_REDUCE ? x->b : none,
            x->action == CS_CUDA_XOP_DIVIDE ? x->dst : none,
        };
        for (gsize k = 0; k < G_N_ELEMENTS(reads); k++) {
            if (reads[k].mem < 0)
                continue;
            const gint64 *w = WRITER(reads[k]);
            for (gint64 b = 0; b < x->bytes; b++) {
                gint64 by = w[b];
                bad += by == -2
                       || (by >= 0 && c[v->xops[by].stream] < seq[by]); /* not ordered after */
            }
        }
        for (gint64 b = 0; b < x->bytes; b++) {
            WRITER(x->dst)[b] = i;
            if (x->dst2.mem >= 0)
                WRITER(x->dst2)[b] = i;
        }
    }
#undef WRITER
    return bad;
}

/* Every pair direct, or every pair of distinct ranks with an odd sum staged through host
 * memory (a PCIe box without peer access between some GPUs). */
static guint8 *
direct_matrix(int P, gboolean some_staged)
{
    guint8 *d = g_new(guint8, P * P);
    for (int a = 0; a < P; a++)
        for (int b = 0; b < P; b++)
            d[a * P + b] = !some_staged || a == b || (a + b) % 2 == 0;
    return d;
}

/* ---- The sweep ---- */

typedef struct {
    const CsAlgo *algo;
    CsOp op;
    int nranks;
    const char *topo; /* (nullable) shipped topology giving node structure, NVLS */
} SweepCase;

typedef struct {
    gint64 size_bytes;
    gint64 chunk_bytes;
    int n_channels;
    CsDtype dtype;
    CsRedop redop;
    gboolean staged;
} Variant;

/* Sizes as in test-algos.c: not divisible by P, a chunk that cuts blocks into several short
 * pipeline steps (so connections carry more than 8 messages and slots are reused), three
 * channels, zero bytes; and datatypes/operators whose results are exact: int8 products wrap,
 * half maxima, bfloat16 and int32 averages end with the division by P. */
static int
variants_for(int P, Variant *v)
{
    int n = 0;
    v[n++] = (Variant){ 12 * (gint64)P + 4, 0, 1, CS_DTYPE_FLOAT, CS_REDOP_SUM, FALSE };
    v[n++] = (Variant){ 148 * (gint64)P + 12, 8, 1, CS_DTYPE_FLOAT, CS_REDOP_SUM, FALSE };
    v[n++] = (Variant){ 148 * (gint64)P + 12, 8, 3, CS_DTYPE_INT32, CS_REDOP_AVG, TRUE };
    v[n++] = (Variant){ 37 * (gint64)P + 3, 4, 2, CS_DTYPE_INT8, CS_REDOP_PROD, TRUE };
    v[n++] = (Variant){ 74 * (gint64)P + 6, 0, 1, CS_DTYPE_HALF, CS_REDOP_MAX, FALSE };
    v[n++] = (Variant){ 74 * (gint64)P + 6, 16, 2, CS_DTYPE_BFLOAT16, CS_REDOP_AVG, TRUE };
    v[n++] = (Variant){ 0, 0, 1, CS_DTYPE_FLOAT, CS_REDOP_SUM, FALSE };
    return n;
}

static void
test_sweep(gconstpointer data)
{
    const SweepCase *c = data;
    Variant variants[8];
    int n_variants = variants_for(c->nranks, variants);
    g_autoptr(CsTopo) topo = NULL;
    if (c->topo != NULL) {
        g_autoptr(GError) error = NULL;
        topo = cs_topo_load(c->topo, &error);
        g_assert_no_error(error);
        g_assert_cmpint(cs_topo_n_ranks(topo), ==, c->nranks);
    }
    int root = cs_op_has_root(c->op) ? c->nranks / 2 : 0;

    for (int vi = 0; vi < n_variants; vi++) {
        const Variant *v = &variants[vi];
        CsAlgoArgs args;
        cs_algo_args_init(&args, topo, c->op, c->nranks, v->size_bytes);
        args.root = root;
        args.chunk_bytes = v->chunk_bytes;
        args.n_channels = v->n_channels;
        args.dtype = v->dtype;
        args.redop = v->redop;
        g_autoptr(GError) error = NULL;
        g_autoptr(CsSchedule) sched = cs_algo_build(c->algo, &args, &error);
        if (sched == NULL) {
            g_assert_error(error, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_UNSUPPORTED);
            g_test_skip(error->message);
            return;
        }
        g_autofree guint8 *direct = direct_matrix(c->nranks, v->staged);
        g_autoptr(CsCudaPlan) plan = cs_cuda_plan_new(sched, direct, &error);
        g_assert_no_error(error);
        g_assert_cmpint(unordered_reads(plan, sched), ==, 0);
        for (guint32 seed = 0; seed < 4; seed++) {
            gint64 wrong = run_and_count_wrong(plan, sched, seed);
            if (wrong != 0)
                g_error("%s %s P=%d topo=%s size=%" G_GINT64_FORMAT " chunk=%" G_GINT64_FORMAT
                        " channels=%d %s %s staged=%d seed=%u: %" G_GINT64_FORMAT " wrong",
                        c->algo->name, cs_op_name(c->op), c->nranks,
                        c->topo != NULL ? c->topo : "none", v->size_bytes, v->chunk_bytes,
                        v->n_channels, cs_dtype_name(v->dtype), cs_redop_name(v->redop), v->staged,
                        seed, wrong);
        }
    }
}

/* ---- Hand-built schedules ---- */

/* Rank 0 sends 16 floats to rank 1 on channel 0. Directly: one copy into rank 1's slot that
 * records an event, and one copy from the slot into the output that waits for it (2 xops, 1
 * event). Staged: device to host stage (event), host stage to slot on the staging stream
 * (event), slot to output (3 xops, 2 events); the staging stream of rank 1 channel 0 is
 * (P + 1) * C + 0 = 3. */
static CsSchedule *
one_message(void)
{
    CsSchedule *s = cs_schedule_new(CS_OP_BROADCAST, 2, 0, 64, CS_DTYPE_FLOAT, CS_REDOP_SUM,
                                    CS_PROTO_SIMPLE, 1);
    cs_schedule_send(s, 0, 0, 1, CS_BUF_INPUT, 0, 64, 0);
    cs_schedule_recv(s, 1, 0, 0, CS_BUF_OUTPUT, 0, 64, 0);
    cs_schedule_step(s, 0, 0, CS_STEP_COPY, -1, -1, CS_BUF_INPUT, 0, CS_BUF_OUTPUT, 0, 64, 0);
    cs_schedule_seal(s);
    return s;
}

/* The check catches a rank that copies its output before anything wrote it. */
static void
test_unwritten_read_detected(void)
{
    g_autoptr(CsSchedule) s = cs_schedule_new(CS_OP_BROADCAST, 2, 0, 64, CS_DTYPE_FLOAT,
                                              CS_REDOP_SUM, CS_PROTO_SIMPLE, 1);
    cs_schedule_step(s, 1, 0, CS_STEP_COPY, -1, -1, CS_BUF_OUTPUT, 0, CS_BUF_OUTPUT, 32, 32, 0);
    cs_schedule_send(s, 0, 0, 1, CS_BUF_INPUT, 0, 64, 0);
    cs_schedule_recv(s, 1, 0, 0, CS_BUF_OUTPUT, 0, 64, 0);
    cs_schedule_step(s, 0, 0, CS_STEP_COPY, -1, -1, CS_BUF_INPUT, 0, CS_BUF_OUTPUT, 0, 64, 0);
    cs_schedule_seal(s);
    g_autoptr(GError) error = NULL;
    g_autoptr(CsCudaPlan) plan = cs_cuda_plan_new(s, NULL, &error);
    g_assert_no_error(error);
    g_assert_cmpint(unordered_reads(plan, s), ==, 32);
}

static void
test_one_message_direct(void)
{
    g_autoptr(CsSchedule) s = one_message();
    g_autoptr(GError) error = NULL;
    g_autoptr(CsCudaPlan) plan = cs_cuda_plan_new(s, NULL, &error);
    g_assert_no_error(error);
    const CsCudaPlanView *v = cs_cuda_plan_view(plan);

    /* send (rank 0), local copy (rank 0), receive (rank 1). */
    g_assert_cmpint(v->n_xops, ==, 3);
    g_assert_cmpint(v->n_events, ==, 1);
    g_assert_cmpint(v->xops[0].action, ==, CS_CUDA_XOP_COPY);
    g_assert_cmpint(v->xops[0].dst.rank, ==, 1);
    g_assert_cmpint(v->xops[0].dst.mem, ==, CS_CUDA_MEM_SLOTS);
    g_assert_cmpint(v->xops[0].record, ==, 0);
    g_assert_cmpint(v->xops[2].stream, ==, 1);
    g_assert_cmpint(v->xops[2].n_waits, ==, 1);
    g_assert_cmpint(v->waits[v->xops[2].wait_first], ==, 0);
    /* One slot of 64 bytes rounded to 256; no staging memory. */
    g_assert_cmpint(v->mem_bytes[1 * CS_CUDA_N_MEMS + CS_CUDA_MEM_SLOTS], ==, 256);
    g_assert_cmpint(v->mem_bytes[1 * CS_CUDA_N_MEMS + CS_CUDA_MEM_HOST_STAGE], ==, 0);
    g_assert_cmpint(cs_cuda_plan_slots(plan), ==, CS_CUDA_PLAN_SLOTS);
    for (guint32 seed = 0; seed < 8; seed++)
        g_assert_cmpint(run_and_count_wrong(plan, s, seed), ==, 0);
}

static void
test_one_message_staged(void)
{
    g_autoptr(CsSchedule) s = one_message();
    const guint8 direct[4] = { 1, 0, 0, 1 };
    g_autoptr(GError) error = NULL;
    g_autoptr(CsCudaPlan) plan = cs_cuda_plan_new(s, direct, &error);
    g_assert_no_error(error);
    const CsCudaPlanView *v = cs_cuda_plan_view(plan);

    g_assert_cmpint(v->n_xops, ==, 4);
    g_assert_cmpint(v->n_events, ==, 2);
    g_assert_cmpint(v->xops[0].dst.mem, ==, CS_CUDA_MEM_HOST_STAGE);
    g_assert_cmpint(v->xops[1].stream, ==, 3);
    g_assert_cmpint(v->xops[1].a.mem, ==, CS_CUDA_MEM_HOST_STAGE);
    g_assert_cmpint(v->xops[1].dst.mem, ==, CS_CUDA_MEM_SLOTS);
    g_assert_cmpint(v->stream_rank[3], ==, 1);
    g_assert_cmpint(v->mem_bytes[1 * CS_CUDA_N_MEMS + CS_CUDA_MEM_HOST_STAGE], ==, 256);
    for (guint32 seed = 0; seed < 8; seed++)
        g_assert_cmpint(run_and_count_wrong(plan, s, seed), ==, 0);
}

/* Both ranks send 10 one-float messages to each other, then receive 10: with 8 slots per
 * connection neither can send its 9th before the other receives, which it does only after
 * sending all 10, so the plan falls back to one slot per message (10 x 256 bytes). */
static void
test_slot_bound_fallback(void)
{
    g_autoptr(CsSchedule) s = cs_schedule_new(CS_OP_ALL_GATHER, 2, 0, 80, CS_DTYPE_FLOAT,
                                              CS_REDOP_SUM, CS_PROTO_SIMPLE, 1);
    /* all-gather of 80 bytes on 2 ranks: 40-byte blocks, 10 floats each. */
    for (int r = 0; r < 2; r++) {
        int peer = 1 - r;
        for (int k = 0; k < 10; k++)
            cs_schedule_send(s, r, 0, peer, CS_BUF_INPUT, 4 * k, 4, k);
        for (int k = 0; k < 10; k++)
            cs_schedule_recv(s, r, 0, peer, CS_BUF_OUTPUT, 40 * peer + 4 * k, 4, k);
        cs_schedule_step(s, r, 0, CS_STEP_COPY, -1, -1, CS_BUF_INPUT, 0, CS_BUF_OUTPUT, 40 * r, 40,
                         0);
    }
    cs_schedule_seal(s);
    g_autoptr(GError) error = NULL;
    g_autoptr(CsCudaPlan) plan = cs_cuda_plan_new(s, NULL, &error);
    g_assert_no_error(error);
    g_assert_cmpint(cs_cuda_plan_slots(plan), ==, 0);
    g_assert_cmpint(cs_cuda_plan_view(plan)->mem_bytes[CS_CUDA_MEM_SLOTS], ==, 10 * 256);
    for (guint32 seed = 0; seed < 8; seed++)
        g_assert_cmpint(run_and_count_wrong(plan, s, seed), ==, 0);
}

/* Both ranks receive before they send: no buffering helps. */
static void
test_deadlock_refused(void)
{
    g_autoptr(CsSchedule) s = cs_schedule_new(CS_OP_ALL_GATHER, 2, 0, 8, CS_DTYPE_FLOAT,
                                              CS_REDOP_SUM, CS_PROTO_SIMPLE, 1);
    for (int r = 0; r < 2; r++) {
        cs_schedule_recv(s, r, 0, 1 - r, CS_BUF_OUTPUT, 4 * (1 - r), 4, 0);
        cs_schedule_send(s, r, 0, 1 - r, CS_BUF_INPUT, 0, 4, 0);
    }
    cs_schedule_seal(s);
    g_autoptr(GError) error = NULL;
    g_autoptr(CsCudaPlan) plan = cs_cuda_plan_new(s, NULL, &error);
    g_assert_null(plan);
    g_assert_error(error, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_DEADLOCK);
}

/* A receive that no send matches. */
static void
test_invalid_refused(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(CsSchedule) s = cs_schedule_new(CS_OP_BROADCAST, 2, 0, 8, CS_DTYPE_FLOAT,
                                              CS_REDOP_SUM, CS_PROTO_SIMPLE, 1);
    cs_schedule_recv(s, 1, 0, 0, CS_BUF_OUTPUT, 0, 8, 0);
    cs_schedule_seal(s);
    g_autoptr(CsCudaPlan) plan = cs_cuda_plan_new(s, NULL, &error);
    g_assert_null(plan);
    g_assert_error(error, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_INVALID);
}

/* An average: every rank's REDUCE ends with a DIVIDE of its output by P, on channel 0 after
 * a NOP on each other channel. P = 2, 2 channels, 4 floats: the divide waits for 1 event. */
static void
test_average_divides(void)
{
    g_autoptr(CsSchedule) s = cs_schedule_new(CS_OP_ALL_REDUCE, 2, 0, 16, CS_DTYPE_FLOAT,
                                              CS_REDOP_AVG, CS_PROTO_SIMPLE, 2);
    for (int r = 0; r < 2; r++) {
        cs_schedule_send(s, r, 0, 1 - r, CS_BUF_INPUT, 0, 16, 0);
        cs_schedule_step(s, r, 0, CS_STEP_RECV_REDUCE, 1 - r, -1, CS_BUF_INPUT, 0, CS_BUF_OUTPUT, 0,
                         16, 0);
    }
    cs_schedule_seal(s);
    g_autoptr(GError) error = NULL;
    g_autoptr(CsCudaPlan) plan = cs_cuda_plan_new(s, NULL, &error);
    g_assert_no_error(error);
    const CsCudaPlanView *v = cs_cuda_plan_view(plan);
    int divides = 0;
    for (gint64 i = 0; i < v->n_xops; i++) {
        if (v->xops[i].action != CS_CUDA_XOP_DIVIDE)
            continue;
        divides++;
        g_assert_cmpint(v->xops[i].n_waits, ==, 1);
        g_assert_cmpint(v->xops[i].bytes, ==, 16);
    }
    g_assert_cmpint(divides, ==, 2);
    g_assert_cmpint(v->divisor, ==, 2);
    for (guint32 seed = 0; seed < 8; seed++)
        g_assert_cmpint(run_and_count_wrong(plan, s, seed), ==, 0);
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_summary("Schedules lowered for the CUDA executor compute their collective on host "
                   "memory in any order the plan's streams and events allow.");

    g_test_add_func("/backend/plan/one-message/direct", test_one_message_direct);
    g_test_add_func("/backend/plan/one-message/staged", test_one_message_staged);
    g_test_add_func("/backend/plan/slot-bound-fallback", test_slot_bound_fallback);
    g_test_add_func("/backend/plan/deadlock-refused", test_deadlock_refused);
    g_test_add_func("/backend/plan/invalid-refused", test_invalid_refused);
    g_test_add_func("/backend/plan/average-divides", test_average_divides);
    g_test_add_func("/backend/plan/unwritten-read-detected", test_unwritten_read_detected);

    static const int rank_counts[] = { 1, 2, 3, 4, 5, 8 };
    /* Node structure and NVLink SHARP come from a topology: one NVSwitch box with NVLS, and
     * two 8-GPU nodes for the hierarchical algorithms. */
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
                SweepCase *c = g_new(SweepCase, 1);
                *c = (SweepCase){ *a, (CsOp)op, rank_counts[k], NULL };
                g_ptr_array_add(cases, c);
                g_autofree char *path = g_strdup_printf("/backend/plan/%s/%s/p%d", (*a)->name,
                                                        cs_op_name(op), rank_counts[k]);
                g_test_add_data_func(path, c, test_sweep);
            }
            for (gsize k = 0; k < G_N_ELEMENTS(topos); k++) {
                SweepCase *c = g_new(SweepCase, 1);
                *c = (SweepCase){ *a, (CsOp)op, topos[k].nranks, topos[k].name };
                g_ptr_array_add(cases, c);
                g_autofree char *path = g_strdup_printf("/backend/plan/%s/%s/%s", (*a)->name,
                                                        cs_op_name(op), topos[k].name);
                g_test_add_data_func(path, c, test_sweep);
            }
        }
    int status = g_test_run();
    g_ptr_array_unref(cases);
    return status;
}
