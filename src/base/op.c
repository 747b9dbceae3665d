// SPDX-License-Identifier: MIT
/* Collectives, datatypes and reduction operators: names, and nccl-tests' size and bus-bandwidth
 * conventions (nccl-tests: the GetCollByteCount and GetBw function of each test). */
#include "base/op.h"

#include <string.h>

G_DEFINE_QUARK(cs_op_error_quark, cs_op_error)

typedef struct {
    const char *name;       /* canonical spelling */
    const char *nccl_tests; /* nccl-tests binary stem */
} OpName;

static const OpName op_names[CS_N_OPS] = {
    [CS_OP_BROADCAST] = { "broadcast", "broadcast" },
    [CS_OP_REDUCE] = { "reduce", "reduce" },
    [CS_OP_ALL_REDUCE] = { "allreduce", "all_reduce" },
    [CS_OP_ALL_GATHER] = { "allgather", "all_gather" },
    [CS_OP_REDUCE_SCATTER] = { "reducescatter", "reduce_scatter" },
    [CS_OP_SCATTER] = { "scatter", "scatter" },
    [CS_OP_GATHER] = { "gather", "gather" },
    [CS_OP_ALL_TO_ALL] = { "alltoall", "alltoall" },
    [CS_OP_SEND_RECV] = { "sendrecv", "sendrecv" },
};

typedef struct {
    const char *name;
    int size; /* bytes */
} DtypeInfo;

/* nccl-tests' spellings (common.cu test_typenames). */
static const DtypeInfo dtypes[CS_N_DTYPES] = {
    [CS_DTYPE_INT8] = { "int8", 1 },     [CS_DTYPE_UINT8] = { "uint8", 1 },
    [CS_DTYPE_INT32] = { "int32", 4 },   [CS_DTYPE_UINT32] = { "uint32", 4 },
    [CS_DTYPE_INT64] = { "int64", 8 },   [CS_DTYPE_UINT64] = { "uint64", 8 },
    [CS_DTYPE_HALF] = { "half", 2 },     [CS_DTYPE_FLOAT] = { "float", 4 },
    [CS_DTYPE_DOUBLE] = { "double", 8 }, [CS_DTYPE_BFLOAT16] = { "bfloat16", 2 },
};

static const char *const redop_names[CS_N_REDOPS] = {
    [CS_REDOP_SUM] = "sum", [CS_REDOP_PROD] = "prod", [CS_REDOP_MAX] = "max",
    [CS_REDOP_MIN] = "min", [CS_REDOP_AVG] = "avg",
};

/* Lower-cases and drops '_' and '-', so "All_Reduce", "all-reduce" and "allreduce" agree. */
static char *
normalize(const char *name)
{
    GString *s = g_string_new(NULL);
    for (const char *c = name; *c != '\0'; c++)
        if (*c != '_' && *c != '-')
            g_string_append_c(s, g_ascii_tolower(*c));
    return g_string_free(s, FALSE);
}

static char *
list_names(const char *const *names, int n)
{
    GString *s = g_string_new(NULL);
    for (int i = 0; i < n; i++)
        g_string_append_printf(s, "%s%s", i > 0 ? ", " : "", names[i]);
    return g_string_free(s, FALSE);
}

const char *
cs_op_name(CsOp op)
{
    g_return_val_if_fail(op < CS_N_OPS, NULL);
    return op_names[op].name;
}

const char *
cs_op_nccl_tests_name(CsOp op)
{
    g_return_val_if_fail(op < CS_N_OPS, NULL);
    return op_names[op].nccl_tests;
}

/**
 * cs_op_from_name:
 * Reads a collective's name in any of the usual spellings, also nccl-tests' binary names
 * ("all_reduce_perf"). On failure the error lists the known names.
 */
gboolean
cs_op_from_name(const char *name, CsOp *op, GError **error)
{
    g_autofree char *norm = normalize(name);
    if (g_str_has_suffix(norm, "perf"))
        norm[strlen(norm) - 4] = '\0';
    for (int i = 0; i < CS_N_OPS; i++) {
        if (strcmp(norm, op_names[i].name) == 0) {
            *op = (CsOp)i;
            return TRUE;
        }
    }
    const char *names[CS_N_OPS];
    for (int i = 0; i < CS_N_OPS; i++)
        names[i] = op_names[i].name;
    g_autofree char *known = list_names(names, CS_N_OPS);
    g_set_error(error, CS_OP_ERROR, CS_OP_ERROR_UNKNOWN, "\"%s\" is not a collective (known: %s)",
                name, known);
    return FALSE;
}

/**
 * cs_op_mask_from_string:
 * "all", or a comma-separated list of collectives.
 */
gboolean
cs_op_mask_from_string(const char *text, CsOpMask *mask, GError **error)
{
    if (g_ascii_strcasecmp(text, "all") == 0) {
        *mask = CS_OPS_ALL;
        return TRUE;
    }
    g_auto(GStrv) parts = g_strsplit(text, ",", -1);
    CsOpMask m = 0;
    for (int i = 0; parts[i] != NULL; i++) {
        CsOp op;
        if (!cs_op_from_name(g_strstrip(parts[i]), &op, error))
            return FALSE;
        m |= CS_OP_BIT(op);
    }
    if (m == 0) {
        g_set_error(error, CS_OP_ERROR, CS_OP_ERROR_UNKNOWN, "\"%s\" names no collective", text);
        return FALSE;
    }
    *mask = m;
    return TRUE;
}

gboolean
cs_op_has_root(CsOp op)
{
    return op == CS_OP_BROADCAST || op == CS_OP_REDUCE || op == CS_OP_SCATTER || op == CS_OP_GATHER;
}

gboolean
cs_op_reduces(CsOp op)
{
    return op == CS_OP_REDUCE || op == CS_OP_ALL_REDUCE || op == CS_OP_REDUCE_SCATTER;
}

const char *
cs_dtype_name(CsDtype dtype)
{
    g_return_val_if_fail(dtype < CS_N_DTYPES, NULL);
    return dtypes[dtype].name;
}

/* nccl-tests also accepts these aliases for -d. */
static const struct {
    const char *alias;
    CsDtype dtype;
} dtype_aliases[] = {
    { "char", CS_DTYPE_INT8 },      { "int", CS_DTYPE_INT32 },     { "float16", CS_DTYPE_HALF },
    { "fp16", CS_DTYPE_HALF },      { "float32", CS_DTYPE_FLOAT }, { "fp32", CS_DTYPE_FLOAT },
    { "float64", CS_DTYPE_DOUBLE }, { "bf16", CS_DTYPE_BFLOAT16 },
};

gboolean
cs_dtype_from_name(const char *name, CsDtype *dtype, GError **error)
{
    for (int i = 0; i < CS_N_DTYPES; i++) {
        if (g_ascii_strcasecmp(name, dtypes[i].name) == 0) {
            *dtype = (CsDtype)i;
            return TRUE;
        }
    }
    for (gsize i = 0; i < G_N_ELEMENTS(dtype_aliases); i++) {
        if (g_ascii_strcasecmp(name, dtype_aliases[i].alias) == 0) {
            *dtype = dtype_aliases[i].dtype;
            return TRUE;
        }
    }
    const char *names[CS_N_DTYPES];
    for (int i = 0; i < CS_N_DTYPES; i++)
        names[i] = dtypes[i].name;
    g_autofree char *known = list_names(names, CS_N_DTYPES);
    g_set_error(error, CS_OP_ERROR, CS_OP_ERROR_UNKNOWN, "\"%s\" is not a datatype (known: %s)",
                name, known);
    return FALSE;
}

int
cs_dtype_size(CsDtype dtype)
{
    g_return_val_if_fail(dtype < CS_N_DTYPES, 1);
    return dtypes[dtype].size;
}

const char *
cs_redop_name(CsRedop redop)
{
    g_return_val_if_fail(redop < CS_N_REDOPS, NULL);
    return redop_names[redop];
}

gboolean
cs_redop_from_name(const char *name, CsRedop *redop, GError **error)
{
    for (int i = 0; i < CS_N_REDOPS; i++) {
        if (g_ascii_strcasecmp(name, redop_names[i]) == 0) {
            *redop = (CsRedop)i;
            return TRUE;
        }
    }
    g_autofree char *known = list_names(redop_names, CS_N_REDOPS);
    g_set_error(error, CS_OP_ERROR, CS_OP_ERROR_UNKNOWN,
                "\"%s\" is not a reduction operator (known: %s)", name, known);
    return FALSE;
}

/**
 * cs_op_size:
 * What nccl-tests really runs for a requested size: it rounds the element count down to a
 * multiple of P for the collectives whose buffers are split in P blocks
 * (all_gather.cu, reduce_scatter.cu, alltoall.cu, scatter.cu, gather.cu).
 */
CsOpSize
cs_op_size(CsOp op, gint64 size_bytes, CsDtype dtype, int nranks)
{
    CsOpSize s = { 0 };
    g_return_val_if_fail(nranks >= 1, s);
    g_return_val_if_fail(size_bytes >= 0, s);
    const gint64 type_size = cs_dtype_size(dtype);
    const gint64 count = size_bytes / type_size;

    switch (op) {
    case CS_OP_BROADCAST:
    case CS_OP_REDUCE:
    case CS_OP_ALL_REDUCE:
        s.count = count;
        s.size_bytes = count * type_size;
        s.send_bytes = s.size_bytes;
        s.recv_bytes = s.size_bytes;
        s.block_bytes = (count / nranks) * type_size;
        break;
    case CS_OP_ALL_GATHER:
    case CS_OP_GATHER:
        s.count = count / nranks;
        s.block_bytes = s.count * type_size;
        s.size_bytes = s.block_bytes * nranks;
        s.send_bytes = s.block_bytes;
        s.recv_bytes = s.size_bytes;
        break;
    case CS_OP_REDUCE_SCATTER:
    case CS_OP_SCATTER:
        s.count = count / nranks;
        s.block_bytes = s.count * type_size;
        s.size_bytes = s.block_bytes * nranks;
        s.send_bytes = s.size_bytes;
        s.recv_bytes = s.block_bytes;
        break;
    case CS_OP_ALL_TO_ALL:
        s.count = count / nranks;
        s.block_bytes = s.count * type_size;
        s.size_bytes = s.block_bytes * nranks;
        s.send_bytes = s.size_bytes;
        s.recv_bytes = s.size_bytes;
        break;
    case CS_OP_SEND_RECV:
        /* nccl-tests sendrecv.cu SendRecvGetCollByteCount: send and receive count elements,
         * whatever P; the whole buffer is the one message to the peer. */
        s.count = count;
        s.size_bytes = count * type_size;
        s.send_bytes = s.size_bytes;
        s.recv_bytes = s.size_bytes;
        s.block_bytes = s.size_bytes;
        break;
    case CS_N_OPS:
    default:
        g_return_val_if_reached(s);
    }
    return s;
}

/**
 * cs_op_nccl_tests_bytes:
 * nccl-tests' GetCollByteCount computes each rank's block as `(count / nranks) &
 * -(16 / eltSize)` in all_gather.cu, reduce_scatter.cu and alltoall.cu (2.13 and later): 8 B
 * and 16 B all-gathers on 2 ranks print size 0, as the rtx2080ti traces show. Scatter and
 * gather follow the same rule here. Schedules themselves work on any element count
 * (cs_op_size); this is only what a sweep asks for, to print what nccl-tests prints.
 */
gint64
cs_op_nccl_tests_bytes(CsOp op, gint64 size_bytes, CsDtype dtype, int nranks)
{
    g_return_val_if_fail(nranks >= 1 && size_bytes >= 0, 0);
    const gint64 type_size = cs_dtype_size(dtype);
    const gint64 count = size_bytes / type_size;
    switch (op) {
    case CS_OP_ALL_GATHER:
    case CS_OP_GATHER:
    case CS_OP_REDUCE_SCATTER:
    case CS_OP_SCATTER:
    case CS_OP_ALL_TO_ALL: {
        /* Elements per 16-byte unit; a type of 16 bytes or more aligns to one element. */
        const gint64 align = MAX(16 / type_size, 1);
        return (count / nranks) / align * align * nranks * type_size;
    }
    case CS_OP_BROADCAST:
    case CS_OP_REDUCE:
    case CS_OP_ALL_REDUCE:
    case CS_OP_SEND_RECV:
    case CS_N_OPS:
    default:
        return count * type_size;
    }
}

/**
 * cs_op_busbw_factor:
 * nccl-tests' bus bandwidth factors (doc/PERFORMANCE.md): what makes busbw comparable to the
 * hardware's link speed whatever the number of ranks. Scatter and gather use (P-1)/P like
 * all-gather in nccl-tests; sendrecv.cu's SendRecvGetBw uses factor 1 (busbw = algbw).
 */
double
cs_op_busbw_factor(CsOp op, int nranks)
{
    g_return_val_if_fail(nranks >= 1, 1.0);
    const double p = nranks;
    switch (op) {
    case CS_OP_ALL_REDUCE:
        return 2.0 * (p - 1.0) / p;
    case CS_OP_ALL_GATHER:
    case CS_OP_REDUCE_SCATTER:
    case CS_OP_ALL_TO_ALL:
    case CS_OP_SCATTER:
    case CS_OP_GATHER:
        return (p - 1.0) / p;
    case CS_OP_BROADCAST:
    case CS_OP_REDUCE:
    case CS_OP_SEND_RECV:
        return 1.0;
    case CS_N_OPS:
    default:
        g_return_val_if_reached(1.0);
    }
}
