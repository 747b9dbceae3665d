// SPDX-License-Identifier: MIT
/* Host reference for the real backends: deterministic inputs, element-wise reductions on the
 * CPU for every datatype and operator, the collective's expected outputs, and the #wrong count.
 * The MPI backend reduces with these functions too; the CUDA kernels mirror them exactly. One
 * element's input, expected value and check live in reference_element.h, which the GPU
 * backends compile into kernels. */
#pragma once

#include <glib.h>

#include "backends/reference_element.h"
#include "base/op.h"

G_BEGIN_DECLS

/* Writes elements [@first, @first + @n) of @rank's input into @buf. Values are small integers,
 * so sums, products (at most one factor 2 per element) and extrema are exact in every type and
 * in any reduction order, as long as P * 7 stays below the type's exact range. */
void cs_reference_fill_input(void *buf, gint64 n, CsDtype dtype, CsOp op, CsRedop redop, int rank,
                             int nranks, gint64 first);

/* @dst[i] = @a[i] (+) @b[i] for @n elements; AVG sums (the division comes last, see below).
 * @dst may alias @a or @b. Integers wrap; half and bfloat16 compute in float and round. */
void cs_reference_reduce(void *dst, const void *a, const void *b, gint64 n, CsDtype dtype,
                         CsRedop redop);

/* @x[i] /= @divisor: the end of an AVG reduction (C division for integers). */
void cs_reference_divide(void *x, gint64 n, CsDtype dtype, int divisor);

/* What @op leaves in @rank's output, element by element (reference_element.h). Returns FALSE
 * where the output is undefined (non-roots of reduce and gather). */
gboolean cs_reference_expectation(CsOp op, const CsOpSize *size, int nranks, int root,
                                  CsDtype dtype, CsRedop redop, int rank, CsRefExpect *expect);

/* Fills @out (the output buffer, size->recv_bytes) with what @op leaves in @rank's output.
 * Returns FALSE, leaving @out alone, where the output is undefined (non-roots of reduce and
 * gather). */
gboolean cs_reference_expected(CsOp op, const CsOpSize *size, int nranks, int root, CsDtype dtype,
                               CsRedop redop, int rank, void *out);

/* Counts elements of @got that differ from @expected: integers exactly, floating types within
 * a relative tolerance that grows with @nranks (reduction order, NCCL's pre-scaled average). */
gint64 cs_reference_count_wrong(const void *got, const void *expected, gint64 n, CsDtype dtype,
                                int nranks);

/* Byte written over output buffers before a checked run: no expected value equals it. */
#define CS_REFERENCE_POISON 0xA5

G_END_DECLS
