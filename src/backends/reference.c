// SPDX-License-Identifier: MIT
/* Host reference for the real backends: inputs, CPU reductions, expected outputs and #wrong,
 * in the spirit of nccl-tests' verification (src/common.cu: InitData / CheckData). */
#include "config.h"

#include "backends/reference.h"

#include <math.h>
#include <string.h>

/* ---- Half and bfloat16 ---- */

guint16
cs_reference_float_to_half(float value)
{
    guint32 x;
    memcpy(&x, &value, sizeof x);
    guint32 sign = (x >> 16) & 0x8000u;
    guint32 mant = x & 0x7fffffu;
    int exp = (int)((x >> 23) & 0xffu);

    if (exp == 0xff)
        return (guint16)(sign | 0x7c00u | (mant != 0 ? 0x200u : 0u));
    int e = exp - 127 + 15;
    if (e >= 31)
        return (guint16)(sign | 0x7c00u);
    if (e <= 0) {
        /* Subnormal half: the implicit one joins the mantissa, shifted to 2^-24 units. */
        if (e < -10)
            return (guint16)sign;
        guint32 full = mant | 0x800000u;
        int shift = 14 - e;
        guint32 h = full >> shift;
        guint32 rem = full & ((1u << shift) - 1u);
        guint32 halfway = 1u << (shift - 1);
        if (rem > halfway || (rem == halfway && (h & 1u)))
            h++;
        return (guint16)(sign | h);
    }
    guint32 h = sign | ((guint32)e << 10) | (mant >> 13);
    guint32 rem = mant & 0x1fffu;
    /* A carry out of the mantissa correctly bumps the exponent (up to infinity). */
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u)))
        h++;
    return (guint16)h;
}

float
cs_reference_half_to_float(guint16 bits)
{
    guint32 sign = ((guint32)bits & 0x8000u) << 16;
    guint32 exp = (bits >> 10) & 0x1fu;
    guint32 mant = bits & 0x3ffu;
    guint32 x;

    if (exp == 0x1f)
        x = sign | 0x7f800000u | (mant << 13);
    else if (exp != 0)
        x = sign | ((exp + 112u) << 23) | (mant << 13);
    else if (mant == 0)
        x = sign;
    else {
        /* Subnormal: normalise into a float, which has the range for it. */
        int e = -1;
        do {
            mant <<= 1;
            e++;
        } while ((mant & 0x400u) == 0);
        x = sign | ((guint32)(112 - e) << 23) | ((mant & 0x3ffu) << 13);
    }
    float value;
    memcpy(&value, &x, sizeof value);
    return value;
}

guint16
cs_reference_float_to_bf16(float value)
{
    guint32 x;
    memcpy(&x, &value, sizeof x);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return (guint16)((x >> 16) | 0x40u);
    x += 0x7fffu + ((x >> 16) & 1u);
    return (guint16)(x >> 16);
}

float
cs_reference_bf16_to_float(guint16 bits)
{
    guint32 x = (guint32)bits << 16;
    float value;
    memcpy(&value, &x, sizeof value);
    return value;
}

/* ---- Inputs ---- */

/* splitmix64's finaliser: a well-mixed hash of (rank, index). */
static guint64
mix(guint64 z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static gint64
input_value(gboolean reduces, CsRedop redop, int rank, int nranks, gint64 index)
{
    guint64 h = mix(((guint64)(guint32)rank << 40) ^ (guint64)index);

    if (!reduces)
        return (gint64)(h % 64);
    switch (redop) {
    case CS_REDOP_PROD: {
        /* +-1 everywhere, and a 2 from one rank per element: |product| <= 2, exact. */
        gint64 v = (h % 4 == 0) ? -1 : 1;
        if (index % nranks == rank)
            v *= 2;
        return v;
    }
    case CS_REDOP_MAX:
    case CS_REDOP_MIN:
        return (gint64)(h % 64);
    case CS_REDOP_SUM:
    case CS_REDOP_AVG:
    case CS_N_REDOPS:
    default:
        return (gint64)(h % 8);
    }
}

void
cs_reference_fill_input(void *buf, gint64 n, CsDtype dtype, CsOp op, CsRedop redop, int rank,
                        int nranks, gint64 first)
{
    gboolean reduces = cs_op_reduces(op);

    for (gint64 i = 0; i < n; i++) {
        gint64 v = input_value(reduces, redop, rank, nranks, first + i);
        switch (dtype) {
        case CS_DTYPE_INT8:
        case CS_DTYPE_UINT8:
            ((guint8 *)buf)[i] = (guint8)v;
            break;
        case CS_DTYPE_INT32:
        case CS_DTYPE_UINT32:
            ((guint32 *)buf)[i] = (guint32)v;
            break;
        case CS_DTYPE_INT64:
        case CS_DTYPE_UINT64:
            ((guint64 *)buf)[i] = (guint64)v;
            break;
        case CS_DTYPE_HALF:
            ((guint16 *)buf)[i] = cs_reference_float_to_half((float)v);
            break;
        case CS_DTYPE_BFLOAT16:
            ((guint16 *)buf)[i] = cs_reference_float_to_bf16((float)v);
            break;
        case CS_DTYPE_FLOAT:
            ((float *)buf)[i] = (float)v;
            break;
        case CS_DTYPE_DOUBLE:
            ((double *)buf)[i] = (double)v;
            break;
        case CS_N_DTYPES:
        default:
            g_assert_not_reached();
        }
    }
}

/* ---- Reductions ---- */

/* Integers go through their unsigned twin so overflow wraps instead of being undefined. */
#define INT_LOOP(T, UT, EXPR)                                                                      \
    do {                                                                                           \
        T *d = dst;                                                                                \
        const T *pa = a;                                                                           \
        const T *pb = b;                                                                           \
        for (gint64 i = 0; i < n; i++) {                                                           \
            UT x = (UT)pa[i];                                                                      \
            UT y = (UT)pb[i];                                                                      \
            d[i] = (T)(EXPR);                                                                      \
        }                                                                                          \
    } while (0)

#define INT_REDUCE(T, UT)                                                                          \
    do {                                                                                           \
        switch (redop) {                                                                           \
        case CS_REDOP_PROD:                                                                        \
            INT_LOOP(T, UT, (UT)(x * y));                                                          \
            break;                                                                                 \
        case CS_REDOP_MAX:                                                                         \
            INT_LOOP(T, UT, ((T)x > (T)y ? x : y));                                                \
            break;                                                                                 \
        case CS_REDOP_MIN:                                                                         \
            INT_LOOP(T, UT, ((T)x < (T)y ? x : y));                                                \
            break;                                                                                 \
        default:                                                                                   \
            INT_LOOP(T, UT, (UT)(x + y));                                                          \
            break;                                                                                 \
        }                                                                                          \
    } while (0)

#define FLOAT_LOOP(T, EXPR)                                                                        \
    do {                                                                                           \
        T *d = dst;                                                                                \
        const T *pa = a;                                                                           \
        const T *pb = b;                                                                           \
        for (gint64 i = 0; i < n; i++) {                                                           \
            T x = pa[i];                                                                           \
            T y = pb[i];                                                                           \
            d[i] = (EXPR);                                                                         \
        }                                                                                          \
    } while (0)

#define FLOAT_REDUCE(T)                                                                            \
    do {                                                                                           \
        switch (redop) {                                                                           \
        case CS_REDOP_PROD:                                                                        \
            FLOAT_LOOP(T, x *y);                                                                   \
            break;                                                                                 \
        case CS_REDOP_MAX:                                                                         \
            FLOAT_LOOP(T, x > y ? x : y);                                                          \
            break;                                                                                 \
        case CS_REDOP_MIN:                                                                         \
            FLOAT_LOOP(T, x < y ? x : y);                                                          \
            break;                                                                                 \
        default:                                                                                   \
            FLOAT_LOOP(T, x + y);                                                                  \
            break;                                                                                 \
        }                                                                                          \
    } while (0)

/* 16-bit floats: widen to float, operate, round back: the CUDA kernels do the same. */
#define HALF_LOOP(TO, FROM, EXPR)                                                                  \
    do {                                                                                           \
        guint16 *d = dst;                                                                          \
        const guint16 *pa = a;                                                                     \
        const guint16 *pb = b;                                                                     \
        for (gint64 i = 0; i < n; i++) {                                                           \
            float x = TO(pa[i]);                                                                   \
            float y = TO(pb[i]);                                                                   \
            d[i] = FROM(EXPR);                                                                     \
        }                                                                                          \
    } while (0)

#define HALF_REDUCE(TO, FROM)                                                                      \
    do {                                                                                           \
        switch (redop) {                                                                           \
        case CS_REDOP_PROD:                                                                        \
            HALF_LOOP(TO, FROM, x *y);                                                             \
            break;                                                                                 \
        case CS_REDOP_MAX:                                                                         \
            HALF_LOOP(TO, FROM, x > y ? x : y);                                                    \
            break;                                                                                 \
        case CS_REDOP_MIN:                                                                         \
            HALF_LOOP(TO, FROM, x < y ? x : y);                                                    \
            break;                                                                                 \
        default:                                                                                   \
            HALF_LOOP(TO, FROM, x + y);                                                            \
            break;                                                                                 \
        }                                                                                          \
    } while (0)

void
cs_reference_reduce(void *dst, const void *a, const void *b, gint64 n, CsDtype dtype, CsRedop redop)
{
    switch (dtype) {
    case CS_DTYPE_INT8:
        INT_REDUCE(gint8, guint8);
        break;
    case CS_DTYPE_UINT8:
        INT_REDUCE(guint8, guint8);
        break;
    case CS_DTYPE_INT32:
        INT_REDUCE(gint32, guint32);
        break;
    case CS_DTYPE_UINT32:
        INT_REDUCE(guint32, guint32);
        break;
    case CS_DTYPE_INT64:
        INT_REDUCE(gint64, guint64);
        break;
    case CS_DTYPE_UINT64:
        INT_REDUCE(guint64, guint64);
        break;
    case CS_DTYPE_HALF:
        HALF_REDUCE(cs_reference_half_to_float, cs_reference_float_to_half);
        break;
    case CS_DTYPE_BFLOAT16:
        HALF_REDUCE(cs_reference_bf16_to_float, cs_reference_float_to_bf16);
        break;
    case CS_DTYPE_FLOAT:
        FLOAT_REDUCE(float);
        break;
    case CS_DTYPE_DOUBLE:
        FLOAT_REDUCE(double);
        break;
    case CS_N_DTYPES:
    default:
        g_assert_not_reached();
    }
}

#define DIVIDE_LOOP(T, DIV)                                                                        \
    do {                                                                                           \
        T *p = x;                                                                                  \
        for (gint64 i = 0; i < n; i++)                                                             \
            p[i] = (T)(p[i] / (DIV));                                                              \
    } while (0)

void
cs_reference_divide(void *x, gint64 n, CsDtype dtype, int divisor)
{
    switch (dtype) {
    case CS_DTYPE_INT8:
        DIVIDE_LOOP(gint8, divisor);
        break;
    case CS_DTYPE_UINT8:
        DIVIDE_LOOP(guint8, (guint32)divisor);
        break;
    case CS_DTYPE_INT32:
        DIVIDE_LOOP(gint32, divisor);
        break;
    case CS_DTYPE_UINT32:
        DIVIDE_LOOP(guint32, (guint32)divisor);
        break;
    case CS_DTYPE_INT64:
        DIVIDE_LOOP(gint64, (gint64)divisor);
        break;
    case CS_DTYPE_UINT64:
        DIVIDE_LOOP(guint64, (guint64)divisor);
        break;
    case CS_DTYPE_FLOAT:
        DIVIDE_LOOP(float, (float)divisor);
        break;
    case CS_DTYPE_DOUBLE:
        DIVIDE_LOOP(double, (double)divisor);
        break;
    case CS_DTYPE_HALF: {
        guint16 *p = x;
        for (gint64 i = 0; i < n; i++)
            p[i] = cs_reference_float_to_half(cs_reference_half_to_float(p[i]) / (float)divisor);
        break;
    }
    case CS_DTYPE_BFLOAT16: {
        guint16 *p = x;
        for (gint64 i = 0; i < n; i++)
            p[i] = cs_reference_float_to_bf16(cs_reference_bf16_to_float(p[i]) / (float)divisor);
        break;
    }
    case CS_N_DTYPES:
    default:
        g_assert_not_reached();
    }
}

/* ---- Expected outputs ---- */

/* @out = reduction over every rank q of q's input elements [first, first + n). */
static void
reduce_all_ranks(void *out, gint64 n, CsDtype dtype, CsOp op, CsRedop redop, int nranks,
                 gint64 first)
{
    gsize ts = (gsize)cs_dtype_size(dtype);
    g_autofree void *tmp = g_malloc((gsize)n * ts + 1);

    cs_reference_fill_input(out, n, dtype, op, redop, 0, nranks, first);
    for (int q = 1; q < nranks; q++) {
        cs_reference_fill_input(tmp, n, dtype, op, redop, q, nranks, first);
        cs_reference_reduce(out, out, tmp, n, dtype, redop);
    }
    if (redop == CS_REDOP_AVG)
        cs_reference_divide(out, n, dtype, nranks);
}

gboolean
cs_reference_expected(CsOp op, const CsOpSize *size, int nranks, int root, CsDtype dtype,
                      CsRedop redop, int rank, void *out)
{
    gint64 ts = cs_dtype_size(dtype);
    gint64 nb = size->block_bytes / ts;
    guint8 *o = out;

    switch (op) {
    case CS_OP_BROADCAST:
        cs_reference_fill_input(out, size->recv_bytes / ts, dtype, op, redop, root, nranks, 0);
        return TRUE;
    case CS_OP_REDUCE:
        if (rank != root)
            return FALSE;
        reduce_all_ranks(out, size->recv_bytes / ts, dtype, op, redop, nranks, 0);
        return TRUE;
    case CS_OP_ALL_REDUCE:
        reduce_all_ranks(out, size->recv_bytes / ts, dtype, op, redop, nranks, 0);
        return TRUE;
    case CS_OP_ALL_GATHER:
        for (int q = 0; q < nranks; q++)
            cs_reference_fill_input(o + q * nb * ts, nb, dtype, op, redop, q, nranks, 0);
        return TRUE;
    case CS_OP_REDUCE_SCATTER:
        reduce_all_ranks(out, nb, dtype, op, redop, nranks, (gint64)rank * nb);
        return TRUE;
    case CS_OP_SCATTER:
        cs_reference_fill_input(out, nb, dtype, op, redop, root, nranks, (gint64)rank * nb);
        return TRUE;
    case CS_OP_GATHER:
        if (rank != root)
            return FALSE;
        for (int q = 0; q < nranks; q++)
            cs_reference_fill_input(o + q * nb * ts, nb, dtype, op, redop, q, nranks, 0);
        return TRUE;
    case CS_OP_ALL_TO_ALL:
        for (int q = 0; q < nranks; q++)
            cs_reference_fill_input(o + q * nb * ts, nb, dtype, op, redop, q, nranks,
                                    (gint64)rank * nb);
        return TRUE;
    case CS_OP_SEND_RECV:
        /* nccl-tests sendrecv.cu: the input of the rank before. */
        cs_reference_fill_input(out, nb, dtype, op, redop, (rank - 1 + nranks) % nranks, nranks, 0);
        return TRUE;
    case CS_N_OPS:
    default:
        g_assert_not_reached();
    }
}

/* ---- Checking ---- */

static double
element_as_double(const void *p, gint64 i, CsDtype dtype)
{
    switch (dtype) {
    case CS_DTYPE_HALF:
        return cs_reference_half_to_float(((const guint16 *)p)[i]);
    case CS_DTYPE_BFLOAT16:
        return cs_reference_bf16_to_float(((const guint16 *)p)[i]);
    case CS_DTYPE_FLOAT:
        return ((const float *)p)[i];
    case CS_DTYPE_DOUBLE:
        return ((const double *)p)[i];
    default:
        g_assert_not_reached();
    }
}

gint64
cs_reference_count_wrong(const void *got, const void *expected, gint64 n, CsDtype dtype, int nranks)
{
    gsize ts = (gsize)cs_dtype_size(dtype);
    double eps;
    gint64 wrong = 0;

    switch (dtype) {
    case CS_DTYPE_HALF:
        eps = 0x1p-10;
        break;
    case CS_DTYPE_BFLOAT16:
        eps = 0x1p-7;
        break;
    case CS_DTYPE_FLOAT:
        eps = 0x1p-23;
        break;
    case CS_DTYPE_DOUBLE:
        eps = 0x1p-52;
        break;
    default:
        for (gint64 i = 0; i < n; i++)
            if (memcmp((const guint8 *)got + (gsize)i * ts,
                       (const guint8 *)expected + (gsize)i * ts, ts)
                != 0)
                wrong++;
        return wrong;
    }

    /* One rounding per reduction step at most: P + 2 ulps of slack, relative to max(1, |x|). */
    double tol = eps * (double)(nranks + 2);
    for (gint64 i = 0; i < n; i++) {
        double g = element_as_double(got, i, dtype);
        double e = element_as_double(expected, i, dtype);
        double scale = fabs(e) > 1.0 ? fabs(e) : 1.0;
        if (!(fabs(g - e) <= tol * scale))
            wrong++;
    }
    return wrong;
}
