// SPDX-License-Identifier: MIT
/* Collectives, datatypes and reduction operators, with nccl-tests' size and bus-bandwidth
 * conventions, shared by every layer. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/**
 * CsOp:
 * The eight collectives collsim models, and nccl-tests' sendrecv (point-to-point: every rank
 * sends its buffer to rank + 1 and receives rank - 1's, in one group). The order is the CLI's
 * listing order.
 */
typedef enum {
    CS_OP_BROADCAST,
    CS_OP_REDUCE,
    CS_OP_ALL_REDUCE,
    CS_OP_ALL_GATHER,
    CS_OP_REDUCE_SCATTER,
    CS_OP_SCATTER,
    CS_OP_GATHER,
    CS_OP_ALL_TO_ALL,
    CS_OP_SEND_RECV,
    CS_N_OPS
} CsOp;

/* A set of collectives, bit (1 << op). */
typedef guint32 CsOpMask;
#define CS_OP_BIT(op) ((CsOpMask)1u << (op))
#define CS_OPS_ALL ((CsOpMask)((1u << CS_N_OPS) - 1u))

/**
 * CsDtype:
 * nccl-tests' datatypes (`-d`).
 */
typedef enum {
    CS_DTYPE_INT8,
    CS_DTYPE_UINT8,
    CS_DTYPE_INT32,
    CS_DTYPE_UINT32,
    CS_DTYPE_INT64,
    CS_DTYPE_UINT64,
    CS_DTYPE_HALF,
    CS_DTYPE_FLOAT,
    CS_DTYPE_DOUBLE,
    CS_DTYPE_BFLOAT16,
    CS_N_DTYPES
} CsDtype;

/**
 * CsRedop:
 * nccl-tests' reduction operators (`-o`).
 */
typedef enum {
    CS_REDOP_SUM,
    CS_REDOP_PROD,
    CS_REDOP_MAX,
    CS_REDOP_MIN,
    CS_REDOP_AVG,
    CS_N_REDOPS
} CsRedop;

#define CS_OP_ERROR (cs_op_error_quark())
GQuark cs_op_error_quark(void);

typedef enum {
    CS_OP_ERROR_UNKNOWN, /* a name that is no collective, datatype or operator */
} CsOpError;

/* Canonical spelling ("allreduce"), and nccl-tests' binary stem ("all_reduce"). */
const char *cs_op_name(CsOp op);
const char *cs_op_nccl_tests_name(CsOp op);
/* Accepts "allreduce", "all_reduce", "all-reduce", "AllReduce" and the like. */
gboolean cs_op_from_name(const char *name, CsOp *op, GError **error);
/* Parses "all" or a comma list of names into a mask. */
gboolean cs_op_mask_from_string(const char *text, CsOpMask *mask, GError **error);

/* TRUE for broadcast, reduce, scatter and gather. */
gboolean cs_op_has_root(CsOp op);
/* TRUE for reduce, all-reduce and reduce-scatter. */
gboolean cs_op_reduces(CsOp op);

const char *cs_dtype_name(CsDtype dtype);
gboolean cs_dtype_from_name(const char *name, CsDtype *dtype, GError **error);
int cs_dtype_size(CsDtype dtype);

const char *cs_redop_name(CsRedop redop);
gboolean cs_redop_from_name(const char *name, CsRedop *redop, GError **error);

/**
 * CsOpSize:
 * How one nccl-tests row's size maps onto buffers, for P ranks (nccl-tests' *GetCollByteCount).
 * @size_bytes is what nccl-tests prints in its size column: the per-rank buffer for all-reduce,
 * broadcast, reduce and sendrecv, and the total for the others. For sendrecv @block_bytes is
 * the whole buffer: the one message each rank sends to its peer.
 */
typedef struct {
    gint64 size_bytes;  /* bytes: nccl-tests' size column */
    gint64 count;       /* elements: nccl-tests' count column */
    gint64 block_bytes; /* bytes: per-rank block (size / P rounded down to elements); the
                           message to the peer for sendrecv */
    gint64 send_bytes;  /* bytes: each rank's input buffer */
    gint64 recv_bytes;  /* bytes: each rank's output buffer */
} CsOpSize;

/* Rounds @size_bytes down to what nccl-tests really runs for @op on @nranks ranks. */
CsOpSize cs_op_size(CsOp op, gint64 size_bytes, CsDtype dtype, int nranks);

/* The size nccl-tests runs and prints for a requested @size_bytes: for the collectives split in
 * P blocks it rounds each rank's block down to whole 16-byte units, so a request can print as
 * a smaller size, even 0. Other collectives keep the size (rounded to elements). */
gint64 cs_op_nccl_tests_bytes(CsOp op, gint64 size_bytes, CsDtype dtype, int nranks);

/* nccl-tests' busbw factor: 2(P-1)/P, (P-1)/P or 1 (sendrecv: busbw = algbw). */
double cs_op_busbw_factor(CsOp op, int nranks);

G_END_DECLS
