// SPDX-License-Identifier: MIT
/* The backend registry (what was built, and what to install otherwise), the shared measuring
 * helpers (size sweep, trace rows) and the host reference (half/bfloat16, reductions,
 * expected outputs, #wrong). Expected numbers are derived by hand in the comments. */
#include "config.h"

#include <math.h>
#include <string.h>
#include <sys/wait.h>

#include "backends/backend.h"
#include "backends/reference.h"

/* ---- Registry ---- */

static void
test_registry_lists_three(void)
{
    const CsBackend *const *reg = cs_backend_registry();
    g_assert_cmpstr(reg[0]->name, ==, "cuda");
    g_assert_cmpstr(reg[1]->name, ==, "nccl");
    g_assert_cmpstr(reg[2]->name, ==, "mpi");
    g_assert_null(reg[3]);

#ifdef HAVE_CUDA
    g_assert_true(reg[0]->available);
#else
    g_assert_false(reg[0]->available);
    g_assert_nonnull(strstr(reg[0]->missing, "-Dcuda=enabled"));
#endif
#ifdef HAVE_NCCL
    g_assert_true(reg[1]->available);
#else
    g_assert_false(reg[1]->available);
    g_assert_nonnull(strstr(reg[1]->missing, "libnccl-dev"));
#endif
#ifdef HAVE_MPI
    g_assert_true(reg[2]->available);
#else
    g_assert_false(reg[2]->available);
    g_assert_cmpstr(reg[2]->missing, ==,
                    "built without MPI (install libopenmpi-dev and reconfigure with "
                    "-Dmpi=enabled)");
#endif
    for (int i = 0; i < 3; i++)
        g_assert_true(reg[i]->available == (reg[i]->measure != NULL));
}

static void
test_registry_lookup(void)
{
    g_autoptr(GError) error = NULL;
    g_assert_true(cs_backend_lookup("MPI", &error) == cs_backend_registry()[2]);
    g_assert_no_error(error);
    g_assert_null(cs_backend_lookup("gloo", &error));
    g_assert_error(error, CS_BACKEND_ERROR, CS_BACKEND_ERROR_INVALID);
    g_assert_nonnull(strstr(error->message, "cuda, nccl, mpi"));
}

/* A backend that was not built refuses with its reason, not a crash. */
static void
test_registry_unavailable_refuses(void)
{
    CsBackend fake = { .name = "fake", .available = FALSE, .missing = "built without fake" };
    CsMeasureArgs args;
    CsTrace *trace = NULL;
    g_autoptr(GError) error = NULL;

    cs_measure_args_init(&args, CS_OP_ALL_REDUCE);
    g_assert_false(cs_backend_measure(&fake, &args, &trace, &error));
    g_assert_error(error, CS_BACKEND_ERROR, CS_BACKEND_ERROR_UNAVAILABLE);
    g_assert_cmpstr(error->message, ==, "built without fake");
    g_assert_null(trace);
}

/* ---- Arguments and traces ---- */

static GArray *
sweep(gint64 min, gint64 max, double factor, gint64 step)
{
    CsMeasureArgs args;
    cs_measure_args_init(&args, CS_OP_ALL_REDUCE);
    args.min_bytes = min;
    args.max_bytes = max;
    args.step_factor = factor;
    args.step_bytes = step;
    return cs_measure_args_sizes(&args);
}

static void
test_sizes(void)
{
    /* -b 8 -e 64 -f 2: 8, 16, 32, 64. */
    g_autoptr(GArray) a = sweep(8, 64, 2.0, 0);
    g_assert_cmpuint(a->len, ==, 4);
    g_assert_cmpint(g_array_index(a, gint64, 3), ==, 64);
    /* -b 8 -e 100 -f 4: 8, 32 (128 is past the end). */
    g_autoptr(GArray) b = sweep(8, 100, 4.0, 0);
    g_assert_cmpuint(b->len, ==, 2);
    g_assert_cmpint(g_array_index(b, gint64, 1), ==, 32);
    /* -b 0 -e 2 -f 2: 0, then 1 (at least one more byte), 2. */
    g_autoptr(GArray) c = sweep(0, 2, 2.0, 0);
    g_assert_cmpuint(c->len, ==, 3);
    /* -b 10 -e 30 -i 10 (no factor): 10, 20, 30. */
    g_autoptr(GArray) d = sweep(10, 30, 0.0, 10);
    g_assert_cmpuint(d->len, ==, 3);
    g_assert_cmpint(g_array_index(d, gint64, 2), ==, 30);
    /* -b 4E -e 7E -f 2: 4E only; 8E is past G_MAXINT64 (the sweep used to convert it to a
     * gint64, undefined, and then crawl up by one byte forever). */
    const gint64 exa = G_GINT64_CONSTANT(1) << 60;
    g_autoptr(GArray) e = sweep(4 * exa, 7 * exa, 2.0, 0);
    g_assert_cmpuint(e->len, ==, 1);
    /* -b 7E -e G_MAXINT64 -i 0.5E: 7E and 7.5E; 8E = 2^63 would pass G_MAXINT64. */
    g_autoptr(GArray) f = sweep(7 * exa, G_MAXINT64, 0.0, exa / 2);
    g_assert_cmpuint(f->len, ==, 2);
}

/* All-reduce on 4 ranks, 1,000,000 bytes of float in 1 ms: algbw = 1e6 B / 1e-3 s = 1 GB/s,
 * busbw = 1 * 2 * 3 / 4 = 1.5 GB/s; the in-place half is N/A. */
static void
test_trace_row(void)
{
    CsMeasureArgs args;
    cs_measure_args_init(&args, CS_OP_ALL_REDUCE);
    args.algo = "ring";
    args.command = "collsim measure --backend mpi --op allreduce --algo ring";
    g_autoptr(CsTrace) trace = cs_backend_trace_new(&args, "mpi", 4);
    CsOpSize size = cs_op_size(CS_OP_ALL_REDUCE, 1000000, CS_DTYPE_FLOAT, 4);

    cs_backend_trace_add(trace, &args, &size, 4, 1e-3, 0, NAN, -1);
    g_assert_cmpuint(cs_trace_n_rows(trace), ==, 1);
    const CsTraceRow *row = cs_trace_row(trace, 0);
    g_assert_cmpint(row->size_bytes, ==, 1000000);
    g_assert_cmpint(row->count, ==, 250000);
    g_assert_cmpstr(row->type, ==, "float");
    g_assert_cmpstr(row->redop, ==, "sum");
    g_assert_cmpint(row->root, ==, -1);
    g_assert_cmpfloat_with_epsilon(row->out_of_place.time_us, 1000.0, 1e-9);
    g_assert_cmpfloat_with_epsilon(row->out_of_place.algbw_GBps, 1.0, 1e-12);
    g_assert_cmpfloat_with_epsilon(row->out_of_place.busbw_GBps, 1.5, 1e-12);
    g_assert_cmpint(row->out_of_place.wrong, ==, 0);
    g_assert_true(isnan(row->in_place.time_us));
    g_assert_cmpint(row->in_place.wrong, ==, -1);
    g_assert_cmpint(cs_backend_trace_wrong(trace), ==, 0);

    g_assert_cmpstr(cs_trace_get_header(trace, "backend"), ==, "mpi");
    g_assert_cmpstr(cs_trace_get_header(trace, "collective"), ==, "all_reduce");
    g_assert_cmpstr(cs_trace_get_header(trace, "ranks"), ==, "4");
    g_assert_cmpstr(cs_trace_get_header(trace, "algo/proto"), ==, "ring/Simple (collsim schedule)");
    g_assert_cmpstr(cs_trace_get_header(trace, "algo"), ==, "ring");
    g_assert_cmpstr(cs_trace_get_header(trace, "proto"), ==, "Simple");
    g_assert_cmpstr(cs_trace_get_header(trace, "command"), ==, args.command);

    /* The written trace reads back with the same row and headers. */
    g_autofree char *text = cs_trace_to_string(trace);
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTrace) back = cs_trace_load_data(text, "measured", &error);
    g_assert_no_error(error);
    CsOp op;
    g_assert_true(cs_trace_op(back, &op));
    g_assert_cmpint(op, ==, CS_OP_ALL_REDUCE);
    g_assert_cmpint(cs_trace_n_ranks(back), ==, 4);
    g_assert_cmpfloat_with_epsilon(cs_trace_row(back, 0)->out_of_place.busbw_GBps, 1.5, 1e-9);

    /* Two wrong elements in a second row make the trace's total 2. */
    cs_backend_trace_add(trace, &args, &size, 4, 1e-3, 2, NAN, -1);
    g_assert_cmpint(cs_backend_trace_wrong(trace), ==, 2);
}

/* Broadcast prints its root; a rootless all-gather prints redop none and root -1. */
static void
test_trace_root_and_redop(void)
{
    CsMeasureArgs args;
    cs_measure_args_init(&args, CS_OP_BROADCAST);
    args.root = 2;
    g_autoptr(CsTrace) t = cs_backend_trace_new(&args, "cuda", 4);
    CsOpSize size = cs_op_size(CS_OP_BROADCAST, 64, CS_DTYPE_FLOAT, 4);
    cs_backend_trace_add(t, &args, &size, 4, 1e-6, 0, NAN, -1);
    g_assert_cmpint(cs_trace_row(t, 0)->root, ==, 2);
    g_assert_cmpstr(cs_trace_row(t, 0)->redop, ==, "none");

    cs_measure_args_init(&args, CS_OP_ALL_GATHER);
    g_autoptr(CsTrace) g = cs_backend_trace_new(&args, "cuda", 4);
    size = cs_op_size(CS_OP_ALL_GATHER, 64, CS_DTYPE_FLOAT, 4);
    cs_backend_trace_add(g, &args, &size, 4, 1e-6, 0, NAN, -1);
    g_assert_cmpint(cs_trace_row(g, 0)->root, ==, -1);
    g_assert_cmpstr(cs_trace_row(g, 0)->redop, ==, "none");
    /* 64 bytes on 4 ranks: blocks of 4 floats, count column 4. */
    g_assert_cmpint(cs_trace_row(g, 0)->count, ==, 4);
}

/* ---- Reference: 16-bit floats ---- */

static void
test_half(void)
{
    /* IEEE binary16: 1.0 = 0 01111 0000000000 = 0x3C00; 65504 (largest) = 0x7BFF; 65520 is
     * halfway to 65536 and rounds to even (the infinity 0x7C00); 2^-24 is the smallest
     * subnormal 0x0001; 2^-25 is halfway between 0 and it and rounds to even 0; 0.1 rounds to
     * 0x2E66 (1.6 * 2^-4 = 1 + 614.4/1024 -> 614 = 0x266, exponent 11 -> 0x2C00 | 0x266). */
    g_assert_cmphex(cs_ref_float_to_half(1.0f), ==, 0x3C00);
    g_assert_cmphex(cs_ref_float_to_half(-2.0f), ==, 0xC000);
    g_assert_cmphex(cs_ref_float_to_half(65504.0f), ==, 0x7BFF);
    g_assert_cmphex(cs_ref_float_to_half(65520.0f), ==, 0x7C00);
    g_assert_cmphex(cs_ref_float_to_half(0x1p-24f), ==, 0x0001);
    g_assert_cmphex(cs_ref_float_to_half(0x1p-25f), ==, 0x0000);
    g_assert_cmphex(cs_ref_float_to_half(0.1f), ==, 0x2E66);
    /* 1 + 2^-11 is halfway between 1 and 1 + 2^-10: even mantissa, 1.0. */
    g_assert_cmphex(cs_ref_float_to_half(1.0f + 0x1p-11f), ==, 0x3C00);
    g_assert_cmphex(cs_ref_float_to_half(1.0f + 3 * 0x1p-11f), ==, 0x3C02);

    g_assert_cmpfloat(cs_ref_half_to_float(0x3C00), ==, 1.0f);
    g_assert_cmpfloat(cs_ref_half_to_float(0x0001), ==, 0x1p-24f);
    g_assert_cmpfloat(cs_ref_half_to_float(0x0200), ==, 0x1p-15f);
    g_assert_true(isinf(cs_ref_half_to_float(0x7C00)));
    /* Every finite half survives the round trip. */
    for (guint32 h = 0; h < 0x10000; h++) {
        if ((h & 0x7C00) == 0x7C00)
            continue;
        g_assert_cmphex(cs_ref_float_to_half(cs_ref_half_to_float((guint16)h)), ==, h);
    }
}

static void
test_bf16(void)
{
    /* bfloat16 is the top half of a float: 1.0f = 0x3F800000 -> 0x3F80. 1 + 2^-8 is halfway
     * between 0x3F80 and 0x3F81: to even, 0x3F80; 1 + 3 * 2^-8 is halfway between 0x3F81 and
     * 0x3F82: to even, 0x3F82. */
    g_assert_cmphex(cs_ref_float_to_bf16(1.0f), ==, 0x3F80);
    g_assert_cmphex(cs_ref_float_to_bf16(1.0f + 0x1p-8f), ==, 0x3F80);
    g_assert_cmphex(cs_ref_float_to_bf16(1.0f + 3 * 0x1p-8f), ==, 0x3F82);
    g_assert_cmpfloat(cs_ref_bf16_to_float(0xC040), ==, -3.0f);
    g_assert_true(isnan(cs_ref_bf16_to_float(cs_ref_float_to_bf16(NAN))));
}

/* ---- Reference: reductions ---- */

static void
test_reduce_types(void)
{
    /* int8 wraps: 100 + 100 = 200 - 256 = -56; 100 * 3 = 300 - 256 = 44. */
    gint8 a8[2] = { 100, 100 };
    gint8 b8[2] = { 100, 3 };
    gint8 d8[2];
    cs_reference_reduce(d8, a8, b8, 1, CS_DTYPE_INT8, CS_REDOP_SUM);
    g_assert_cmpint(d8[0], ==, -56);
    cs_reference_reduce(d8, a8 + 1, b8 + 1, 1, CS_DTYPE_INT8, CS_REDOP_PROD);
    g_assert_cmpint(d8[0], ==, 44);
    /* Signed max / min compare as signed: max (-1, 1) = 1 in int32, but 0xFFFFFFFF > 1 as
     * uint32. */
    gint32 ai[1] = { -1 };
    gint32 bi[1] = { 1 };
    gint32 di[1];
    cs_reference_reduce(di, ai, bi, 1, CS_DTYPE_INT32, CS_REDOP_MAX);
    g_assert_cmpint(di[0], ==, 1);
    cs_reference_reduce(di, ai, bi, 1, CS_DTYPE_UINT32, CS_REDOP_MAX);
    g_assert_cmpuint((guint32)di[0], ==, 0xFFFFFFFFu);
    /* half: 1.5 + 2.25 = 3.75 (exact); min (1.5, 2.25) = 1.5. */
    guint16 ah[1] = { cs_ref_float_to_half(1.5f) };
    guint16 bh[1] = { cs_ref_float_to_half(2.25f) };
    guint16 dh[1];
    cs_reference_reduce(dh, ah, bh, 1, CS_DTYPE_HALF, CS_REDOP_SUM);
    g_assert_cmpfloat(cs_ref_half_to_float(dh[0]), ==, 3.75f);
    cs_reference_reduce(dh, ah, bh, 1, CS_DTYPE_HALF, CS_REDOP_MIN);
    g_assert_cmpfloat(cs_ref_half_to_float(dh[0]), ==, 1.5f);
    /* Average = sum, then divide: (7 + 2) / 3 = 3 for int, 9 / 4 = 2.25 for double. */
    gint32 x[1] = { 9 };
    cs_reference_divide(x, 1, CS_DTYPE_INT32, 3);
    g_assert_cmpint(x[0], ==, 3);
    double xd[1] = { 9.0 };
    cs_reference_divide(xd, 1, CS_DTYPE_DOUBLE, 4);
    g_assert_cmpfloat(xd[0], ==, 2.25);
    /* -7 / 2 truncates toward zero in C: -3. */
    gint64 x64[1] = { -7 };
    cs_reference_divide(x64, 1, CS_DTYPE_INT64, 2);
    g_assert_cmpint(x64[0], ==, -3);
}

/* The element functions the GPU checks with (reference_element.h) reduce every datatype and
 * operator exactly as the array loops the MPI backend reduces with: bits compared, over random
 * bits (integers that wrap and change sign; NaNs, infinities and subnormals). */
static void
test_element_matches_arrays(void)
{
    enum { N = 64 };
    guint8 a[N * 8];
    guint8 b[N * 8];
    guint8 want[N * 8];
    guint64 state = 1;
    for (gsize i = 0; i < sizeof a; i++) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        a[i] = (guint8)(state >> 56);
        b[i] = (guint8)(state >> 48);
    }
    for (int d = 0; d < CS_N_DTYPES; d++) {
        for (int op = 0; op < CS_N_REDOPS; op++) {
            cs_reference_reduce(want, a, b, N, (CsDtype)d, (CsRedop)op);
            for (int i = 0; i < N; i++)
                g_assert_cmphex(cs_ref_combine(d, op, cs_ref_load(d, a, i), cs_ref_load(d, b, i)),
                                ==, cs_ref_load(d, want, i));
        }
        memcpy(want, a, sizeof want);
        cs_reference_divide(want, N, (CsDtype)d, 3);
        for (int i = 0; i < N; i++)
            g_assert_cmphex(cs_ref_divide(d, cs_ref_load(d, a, i), 3), ==, cs_ref_load(d, want, i));
    }
}

/* Inputs are small integers: sums in [0, 7] per rank, products +-1 with one factor 2 (from
 * rank i % P for element i), extrema in [0, 63]. */
static void
test_inputs_bounded(void)
{
    float in[1000];
    for (int r = 0; r < 5; r++) {
        cs_reference_fill_input(in, 1000, CS_DTYPE_FLOAT, CS_OP_ALL_REDUCE, CS_REDOP_SUM, r, 5, 0);
        for (int i = 0; i < 1000; i++)
            g_assert_true(in[i] >= 0 && in[i] <= 7 && in[i] == floorf(in[i]));
        cs_reference_fill_input(in, 1000, CS_DTYPE_FLOAT, CS_OP_ALL_REDUCE, CS_REDOP_PROD, r, 5, 0);
        for (int i = 0; i < 1000; i++) {
            float mag = i % 5 == r ? 2.0f : 1.0f;
            g_assert_true(in[i] == mag || in[i] == -mag);
        }
        cs_reference_fill_input(in, 1000, CS_DTYPE_FLOAT, CS_OP_ALL_GATHER, CS_REDOP_SUM, r, 5, 0);
        for (int i = 0; i < 1000; i++)
            g_assert_true(in[i] >= 0 && in[i] <= 63);
    }
    /* A slice starting at element 10 equals elements 10.. of the whole. */
    float whole[20];
    float slice[10];
    cs_reference_fill_input(whole, 20, CS_DTYPE_FLOAT, CS_OP_ALL_REDUCE, CS_REDOP_SUM, 3, 4, 0);
    cs_reference_fill_input(slice, 10, CS_DTYPE_FLOAT, CS_OP_ALL_REDUCE, CS_REDOP_SUM, 3, 4, 10);
    g_assert_cmpmem(whole + 10, sizeof slice, slice, sizeof slice);
}

/* ---- Reference: expected outputs ---- */

static float
input_of(CsOp op, CsRedop redop, int rank, int nranks, gint64 index)
{
    float v;
    cs_reference_fill_input(&v, 1, CS_DTYPE_FLOAT, op, redop, rank, nranks, index);
    return v;
}

/* Each expectation is rebuilt here from the definition of the collective, element by element. */
static void
test_expected(void)
{
    const int P = 3;
    float out[64];

    /* all-reduce sum of 5 floats (20 B): out[i] = sum over r of in_r[i]. */
    CsOpSize s = cs_op_size(CS_OP_ALL_REDUCE, 20, CS_DTYPE_FLOAT, P);
    g_assert_true(
        cs_reference_expected(CS_OP_ALL_REDUCE, &s, P, 0, CS_DTYPE_FLOAT, CS_REDOP_SUM, 1, out));
    for (int i = 0; i < 5; i++)
        g_assert_cmpfloat(out[i], ==,
                          input_of(CS_OP_ALL_REDUCE, CS_REDOP_SUM, 0, P, i)
                              + input_of(CS_OP_ALL_REDUCE, CS_REDOP_SUM, 1, P, i)
                              + input_of(CS_OP_ALL_REDUCE, CS_REDOP_SUM, 2, P, i));

    /* reduce: only the root has an output. */
    g_assert_false(
        cs_reference_expected(CS_OP_REDUCE, &s, P, 2, CS_DTYPE_FLOAT, CS_REDOP_SUM, 1, out));

    /* all-gather of 36 B on 3 ranks: blocks of 3 floats; out[3q + i] = in_q[i]. */
    s = cs_op_size(CS_OP_ALL_GATHER, 36, CS_DTYPE_FLOAT, P);
    g_assert_cmpint(s.block_bytes, ==, 12);
    g_assert_true(
        cs_reference_expected(CS_OP_ALL_GATHER, &s, P, 0, CS_DTYPE_FLOAT, CS_REDOP_SUM, 0, out));
    for (int q = 0; q < P; q++)
        for (int i = 0; i < 3; i++)
            g_assert_cmpfloat(out[3 * q + i], ==,
                              input_of(CS_OP_ALL_GATHER, CS_REDOP_SUM, q, P, i));

    /* reduce-scatter max: rank 2 gets max over q of in_q[6 + i]. */
    s = cs_op_size(CS_OP_REDUCE_SCATTER, 36, CS_DTYPE_FLOAT, P);
    g_assert_true(cs_reference_expected(CS_OP_REDUCE_SCATTER, &s, P, 0, CS_DTYPE_FLOAT,
                                        CS_REDOP_MAX, 2, out));
    for (int i = 0; i < 3; i++) {
        float m = input_of(CS_OP_REDUCE_SCATTER, CS_REDOP_MAX, 0, P, 6 + i);
        for (int q = 1; q < P; q++)
            m = MAX(m, input_of(CS_OP_REDUCE_SCATTER, CS_REDOP_MAX, q, P, 6 + i));
        g_assert_cmpfloat(out[i], ==, m);
    }

    /* all-to-all: rank 1's block from q is q's block 1: out[3q + i] = in_q[3 + i]. */
    s = cs_op_size(CS_OP_ALL_TO_ALL, 36, CS_DTYPE_FLOAT, P);
    g_assert_true(
        cs_reference_expected(CS_OP_ALL_TO_ALL, &s, P, 0, CS_DTYPE_FLOAT, CS_REDOP_SUM, 1, out));
    for (int q = 0; q < P; q++)
        for (int i = 0; i < 3; i++)
            g_assert_cmpfloat(out[3 * q + i], ==,
                              input_of(CS_OP_ALL_TO_ALL, CS_REDOP_SUM, q, P, 3 + i));

    /* scatter from root 2: rank 0 gets the root's block 0. */
    s = cs_op_size(CS_OP_SCATTER, 36, CS_DTYPE_FLOAT, P);
    g_assert_true(
        cs_reference_expected(CS_OP_SCATTER, &s, P, 2, CS_DTYPE_FLOAT, CS_REDOP_SUM, 0, out));
    for (int i = 0; i < 3; i++)
        g_assert_cmpfloat(out[i], ==, input_of(CS_OP_SCATTER, CS_REDOP_SUM, 2, P, i));
}

/* ---- Reference: #wrong ---- */

static void
test_count_wrong(void)
{
    /* Integers exactly: one element off by one is one wrong element. */
    gint32 ei[4] = { 1, 2, 3, 4 };
    gint32 gi[4] = { 1, 2, 4, 4 };
    g_assert_cmpint(cs_reference_count_wrong(gi, ei, 4, CS_DTYPE_INT32, 4), ==, 1);
    /* Floats within (P + 2) ulps relative: P = 4, float eps 2^-23: 6 * 2^-23 ~ 7.2e-7 of
     * 100 = 7.2e-5. 100 + 5e-5 passes, 100 + 1e-3 fails, NaN (the poison) fails. */
    float ef[3] = { 100.0f, 100.0f, 100.0f };
    float gf[3] = { 100.00005f, 100.001f, NAN };
    g_assert_cmpint(cs_reference_count_wrong(gf, ef, 3, CS_DTYPE_FLOAT, 4), ==, 2);
    /* Poisoned output bytes are never an expected value: 0xA5A5A5A5 as a float is about
     * -2.9e-16, not an integer. */
    float poison;
    memset(&poison, CS_REFERENCE_POISON, sizeof poison);
    g_assert_cmpfloat(poison, !=, floorf(poison));
}

/* ---- collsim measure: what fails before any backend runs ---- */

/* Runs `collsim measure ARGS...`; returns the exit status and the stderr text. */
static int
run_measure(const char *const *args, char **err)
{
    const char *bin = g_getenv("COLLSIM_BIN");
    g_autoptr(GPtrArray) argv = g_ptr_array_new();
    g_ptr_array_add(argv, (gpointer)bin);
    g_ptr_array_add(argv, (gpointer) "measure");
    for (const char *const *a = args; *a != NULL; a++)
        g_ptr_array_add(argv, (gpointer)*a);
    g_ptr_array_add(argv, NULL);
    int wait_status = 0;
    g_autoptr(GError) error = NULL;
    g_autofree char *out = NULL;
    g_assert_true(g_spawn_sync(NULL, (char **)argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out,
                               err, &wait_status, &error));
    g_assert_no_error(error);
    return WEXITSTATUS(wait_status);
}

static void
test_cli_usage(void)
{
    if (g_getenv("COLLSIM_BIN") == NULL) {
        g_test_skip("COLLSIM_BIN not set (run through meson test)");
        return;
    }
    static const struct {
        const char *args[8];
        int status;
        const char *says;
    } cases[] = {
        { { "--op", "allreduce", NULL }, 2, "--backend is required" },
        { { "--backend", "gloo", NULL }, 2, "unknown backend \"gloo\"" },
        { { "--backend", "nccl", "-f", "1", NULL }, 2, "-f: \"1\" is not a step factor" },
        { { "--backend", "nccl", "-b", "2K", "-e", "1K", NULL }, 2, "is larger than -e" },
        { { "--backend", "nccl", "-n", "0", NULL }, 2, "-n: 0 iterations" },
        { { "--backend", "nccl", "-c", "2", NULL }, 2, "-c: 2" },
        { { "--backend", "nccl", "--gpus", "0,x", NULL }, 2, "--gpus: \"x\"" },
        { { "--backend", "nccl", "--op", "allsum", NULL }, 2, "--op" },
        { { "--backend", "mpi", "--virtual-ranks", "4", "--algo", "ring", NULL },
          2,
          "--virtual-ranks is for --backend cuda" },
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *err = NULL;
        const CsBackend *b = cs_backend_lookup(cases[i].args[1], NULL);
        /* A built-out backend stops at "built without" (exit 1) before the other checks. */
        if (b != NULL && !b->available)
            continue;
        g_assert_cmpint(run_measure(cases[i].args, &err), ==, cases[i].status);
        if (strstr(err, cases[i].says) == NULL)
            g_error("case %" G_GSIZE_FORMAT ": expected \"%s\" in: %s", i, cases[i].says, err);
    }
    /* Each built-out backend names its package and build option, exit 1. */
    for (const CsBackend *const *b = cs_backend_registry(); *b != NULL; b++) {
        if ((*b)->available)
            continue;
        const char *args[] = { "--backend", (*b)->name, "--algo", "ring", NULL };
        g_autofree char *err = NULL;
        g_assert_cmpint(run_measure(args, &err), ==, 1);
        g_autofree char *line = g_strdup_printf("collsim measure: %s\n", (*b)->missing);
        g_assert_cmpstr(err, ==, line);
    }
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);

    g_test_add_func("/backend/registry/lists-three", test_registry_lists_three);
    g_test_add_func("/backend/registry/lookup", test_registry_lookup);
    g_test_add_func("/backend/registry/unavailable-refuses", test_registry_unavailable_refuses);
    g_test_add_func("/backend/args/sizes", test_sizes);
    g_test_add_func("/backend/trace/row", test_trace_row);
    g_test_add_func("/backend/trace/root-and-redop", test_trace_root_and_redop);
    g_test_add_func("/backend/reference/half", test_half);
    g_test_add_func("/backend/reference/bf16", test_bf16);
    g_test_add_func("/backend/reference/reduce-types", test_reduce_types);
    g_test_add_func("/backend/reference/element-matches-arrays", test_element_matches_arrays);
    g_test_add_func("/backend/reference/inputs-bounded", test_inputs_bounded);
    g_test_add_func("/backend/reference/expected", test_expected);
    g_test_add_func("/backend/reference/count-wrong", test_count_wrong);
    g_test_add_func("/backend/cli/usage", test_cli_usage);
    return g_test_run();
}
