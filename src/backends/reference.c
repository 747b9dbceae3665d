// SPDX-License-Identifier: MIT
/* Host reference for the real backends: inputs, CPU reductions, expected outputs and #wrong,
 * in the spirit of nccl-tests' verification (src/common.cu: InitData / CheckData). */
#include "config.h"

#include "backends/reference.h"

#include <string.h>

/* reference_element.h numbers datatypes and operators as op.h does. */
G_STATIC_ASSERT((int)CS_DTYPE_INT8 == CS_REF_INT8 && (int)CS_DTYPE_UINT8 == CS_REF_UINT8
                && (int)CS_DTYPE_INT32 == CS_REF_INT32 && (int)CS_DTYPE_UINT32 == CS_REF_UINT32
                && (int)CS_DTYPE_INT64 == CS_REF_INT64 && (int)CS_DTYPE_UINT64 == CS_REF_UINT64
                && (int)CS_DTYPE_HALF == CS_REF_HALF && (int)CS_DTYPE_FLOAT == CS_REF_FLOAT
                && (int)CS_DTYPE_DOUBLE == CS_REF_DOUBLE
                && (int)CS_DTYPE_BFLOAT16 == CS_REF_BFLOAT16);
G_STATIC_ASSERT((int)CS_REDOP_SUM == CS_REF_SUM && (int)CS_REDOP_PROD == CS_REF_PROD
                && (int)CS_REDOP_MAX == CS_REF_MAX && (int)CS_REDOP_MIN == CS_REF_MIN
                && (int)CS_REDOP_AVG == CS_REF_AVG);

/* ---- Inputs ---- */

void
cs_reference_fill_input(void *buf, gint64 n, CsDtype dtype, CsOp op, CsRedop redop, int rank,
                        int nranks, gint64 first)
{
    int reduces = cs_op_reduces(op);

    for (gint64 i = 0; i < n; i++)
        cs_ref_store((int)dtype, buf, i,
                     cs_ref_encode((int)dtype, cs_ref_input_value(reduces, (int)redop, rank, nranks,
                                                                  first + i)));
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
        HALF_REDUCE(cs_ref_half_to_float, cs_ref_float_to_half);
        break;
    case CS_DTYPE_BFLOAT16:
        HALF_REDUCE(cs_ref_bf16_to_float, cs_ref_float_to_bf16);
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
            p[i] = cs_ref_float_to_half(cs_ref_half_to_float(p[i]) / (float)divisor);
        break;
    }
    case CS_DTYPE_BFLOAT16: {
        guint16 *p = x;
        for (gint64 i = 0; i < n; i++)
            p[i] = cs_ref_float_to_bf16(cs_ref_bf16_to_float(p[i]) / (float)divisor);
        break;
    }
    case CS_N_DTYPES:
    default:
        g_assert_not_reached();
    }
}

/* ---- Expected outputs ---- */

gboolean
cs_reference_expectation(CsOp op, const CsOpSize *size, int nranks, int root, CsDtype dtype,
                         CsRedop redop, int rank, CsRefExpect *expect)
{
    gint64 ts = cs_dtype_size(dtype);
    gint64 nb = size->block_bytes / ts;
    CsRefExpect e = {
        .n = size->recv_bytes / ts,
        .block = MAX(nb, 1),
        .source = CS_REF_FROM_RANK,
        .rank = root,
        .nranks = nranks,
        .dtype = (int32_t)dtype,
        .redop = (int32_t)redop,
        .reduces = cs_op_reduces(op),
    };

    switch (op) {
    case CS_OP_BROADCAST:
        break;
    case CS_OP_REDUCE:
        if (rank != root)
            return FALSE;
        e.source = CS_REF_FROM_ALL;
        break;
    case CS_OP_ALL_REDUCE:
        e.source = CS_REF_FROM_ALL;
        break;
    case CS_OP_ALL_GATHER:
        e.source = CS_REF_FROM_BLOCK;
        break;
    case CS_OP_REDUCE_SCATTER:
        e.source = CS_REF_FROM_ALL;
        e.n = nb;
        e.first = (gint64)rank * nb;
        break;
    case CS_OP_SCATTER:
        e.n = nb;
        e.first = (gint64)rank * nb;
        break;
    case CS_OP_GATHER:
        if (rank != root)
            return FALSE;
        e.source = CS_REF_FROM_BLOCK;
        break;
    case CS_OP_ALL_TO_ALL:
        e.source = CS_REF_FROM_BLOCK;
        e.first = (gint64)rank * nb;
        break;
    case CS_OP_SEND_RECV:
        /* nccl-tests sendrecv.cu: the input of the rank before. */
        e.n = nb;
        e.rank = (rank - 1 + nranks) % nranks;
        break;
    case CS_N_OPS:
    default:
        g_assert_not_reached();
    }
    *expect = e;
    return TRUE;
}

gboolean
cs_reference_expected(CsOp op, const CsOpSize *size, int nranks, int root, CsDtype dtype,
                      CsRedop redop, int rank, void *out)
{
    CsRefExpect e;

    if (!cs_reference_expectation(op, size, nranks, root, dtype, redop, rank, &e))
        return FALSE;
    for (gint64 i = 0; i < e.n; i++)
        cs_ref_store(e.dtype, out, i, cs_ref_expected(&e, i));
    return TRUE;
}

/* ---- Checking ---- */

gint64
cs_reference_count_wrong(const void *got, const void *expected, gint64 n, CsDtype dtype, int nranks)
{
    gint64 wrong = 0;

    for (gint64 i = 0; i < n; i++)
        wrong += cs_ref_wrong((int)dtype, nranks, cs_ref_load((int)dtype, got, i),
                              cs_ref_load((int)dtype, expected, i));
    return wrong;
}
