// SPDX-License-Identifier: MIT
/* Bruck's algorithms: ceil(log2 P) rounds for any P, no power-of-two restriction
 * (Bruck, Ho, Kipnis, Upfal and Weathersby, "Efficient algorithms for all-to-all
 * communications in multiport message-passing systems", IEEE TPDS 8(11), 1997; Thakur,
 * Rabenseifner and Gropp, IJHPCA 19(1) 2005, §4.2 (all-gather) and §4.5 (all-to-all)).
 *
 * All-gather: in round k (d = 2^k) rank r sends the min(d, P - d) blocks r, r+1, ... it holds
 * to r - d and receives blocks r + d, ... from r + d. Blocks sit in the output by absolute
 * rank, so a run of blocks wraps past P - 1 at most once and sender and receiver cut it the
 * same way: no rotation buffer is needed.
 *
 * All-to-all: (1) rotate the input so slot j holds the block for rank r + j; (2) in round k
 * send every slot j with bit k set to r + d, receiving the same slots from r - d: the slots
 * are packed into one message (local copies), as MPICH does; (3) slot j now holds the block
 * that rank r - j sent to r: copy it to output block r - j. log2 P messages of about n/2
 * bytes each, the latency-optimal choice for small blocks.
 *
 * Messages span several ranks' blocks, so both run on channel 0. */
#include "algos/algo.h"

#define BRUCK_OPS (CS_OP_BIT(CS_OP_ALL_GATHER) | CS_OP_BIT(CS_OP_ALL_TO_ALL))

static int
mod(int a, int p)
{
    return ((a % p) + p) % p;
}

static void
copy(CsSchedule *s, int r, CsBuffer src, gint64 src_off, CsBuffer dst, gint64 dst_off, gint64 bytes)
{
    if (bytes > 0)
        cs_schedule_step(s, r, 0, CS_STEP_COPY, -1, -1, src, src_off, dst, dst_off, bytes, 0);
}

/* Blocks [@first, @first + @n) of the output, by absolute rank mod P: one or two regions. */
static int
wrapped(int P, int first, int n, gint64 block, CsRegion out[2])
{
    int head = MIN(n, P - first);
    out[0] = (CsRegion){ CS_BUF_OUTPUT, first * block, head * block };
    if (head == n)
        return 1;
    out[1] = (CsRegion){ CS_BUF_OUTPUT, 0, (n - head) * block };
    return 2;
}

static void
all_gather_rank(CsSchedule *s, int P, int r, gint64 block, gint64 chunk)
{
    copy(s, r, CS_BUF_INPUT, 0, CS_BUF_OUTPUT, r * block, block);
    for (int d = 1; d < P; d *= 2) {
        int cnt = MIN(d, P - d);
        CsRegion send[2];
        CsRegion recv[2];
        int ns = wrapped(P, r, cnt, block, send);
        int nr = wrapped(P, mod(r + d, P), cnt, block, recv);
        cs_algo_exchange(s, r, 0, chunk, mod(r - d, P), send, ns, mod(r + d, P), recv, nr, NULL);
    }
}

/* Scratch layout for all-to-all: the P rotated slots, then a send pack and a receive pack. */
static void
all_to_all_rank(CsSchedule *s, int P, int r, gint64 block, gint64 chunk, int max_slots)
{
    gint64 pack_out = P * block;
    gint64 pack_in = pack_out + max_slots * block;
    /* (1) slot j = input block r + j. */
    copy(s, r, CS_BUF_INPUT, r * block, CS_BUF_SCRATCH, 0, (P - r) * block);
    copy(s, r, CS_BUF_INPUT, 0, CS_BUF_SCRATCH, (P - r) * block, r * block);
    /* (2) slots with bit d, packed. */
    for (int d = 1; d < P; d *= 2) {
        gint64 at = 0;
        for (int j = d; j < P; j += 2 * d) {
            int run = MIN(d, P - j);
            copy(s, r, CS_BUF_SCRATCH, j * block, CS_BUF_SCRATCH, pack_out + at, run * block);
            at += run * block;
        }
        CsRegion send = { CS_BUF_SCRATCH, pack_out, at };
        CsRegion recv = { CS_BUF_SCRATCH, pack_in, at };
        cs_algo_exchange(s, r, 0, chunk, mod(r + d, P), &send, 1, mod(r - d, P), &recv, 1, NULL);
        at = 0;
        for (int j = d; j < P; j += 2 * d) {
            int run = MIN(d, P - j);
            copy(s, r, CS_BUF_SCRATCH, pack_in + at, CS_BUF_SCRATCH, j * block, run * block);
            at += run * block;
        }
    }
    /* (3) slot j came from rank r - j. */
    for (int j = 0; j < P; j++)
        copy(s, r, CS_BUF_SCRATCH, j * block, CS_BUF_OUTPUT, mod(r - j, P) * block, block);
}

static gboolean
bruck_supports(const CsTopo *topo, CsOp op, int nranks, const char **why)
{
    (void)topo;
    (void)nranks;
    if ((BRUCK_OPS & CS_OP_BIT(op)) == 0) {
        *why = "Bruck's algorithms serve all-gather and all-to-all";
        return FALSE;
    }
    return TRUE;
}

static CsSchedule *
bruck_build(const CsAlgoArgs *args, GError **error)
{
    (void)error;
    g_autoptr(CsSchedule) sched = cs_algo_schedule_new(args);
    int P = args->nranks;
    if (P == 1) {
        cs_algo_copy_input(sched);
        return g_steal_pointer(&sched);
    }
    gint64 block = cs_schedule_size(sched)->block_bytes;
    gint64 chunk = cs_algo_chunk_bytes(args);
    if (args->op == CS_OP_ALL_GATHER) {
        for (int r = 0; r < P; r++)
            all_gather_rank(sched, P, r, block, chunk);
        return g_steal_pointer(&sched);
    }
    /* The largest pack: slots j < P with bit d set, over every round. */
    int max_slots = 0;
    for (int d = 1; d < P; d *= 2) {
        int n = 0;
        for (int j = d; j < P; j += 2 * d)
            n += MIN(d, P - j);
        max_slots = MAX(max_slots, n);
    }
    cs_schedule_set_scratch(sched, (P + 2 * (gint64)max_slots) * block);
    for (int r = 0; r < P; r++)
        all_to_all_rank(sched, P, r, block, chunk, max_slots);
    return g_steal_pointer(&sched);
}

const CsAlgo cs_algo_bruck = {
    .name = "bruck",
    .summary = "Bruck: ceil(log2 P) rounds for any P (all-gather; all-to-all with packing)",
    .reference = "Bruck, Ho, Kipnis, Upfal & Weathersby, IEEE TPDS 8(11) 1997; Thakur, "
                 "Rabenseifner & Gropp, IJHPCA 2005 §4.2, §4.5",
    .ops = BRUCK_OPS,
    .supports = bruck_supports,
    .build = bruck_build,
};
