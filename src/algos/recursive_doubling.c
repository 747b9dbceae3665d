// SPDX-License-Identifier: MIT
/* Recursive doubling: log2 P rounds of pairwise exchange with partner r XOR 2^k.
 *
 * All-reduce exchanges the whole vector every round (latency-optimal, n log P bytes per
 * rank); all-gather exchanges the blocks collected so far, doubling each round. P that is not
 * a power of two uses the standard fold-in (Thakur, Rabenseifner and Gropp, IJHPCA 2005, §4;
 * Rabenseifner, "Optimization of collective reduction operations", ICCS 2004): with
 * pof2 = 2^floor(log2 P) and rem = P - pof2, each even rank r < 2 rem hands its data to
 * r + 1 and sits out, the pof2 remaining ranks run the power-of-two algorithm, and the odd
 * ranks hand the result back. Participant i stands for ranks {2i, 2i+1} if i < rem, else for
 * rank i + rem; in the all-gather a group of participants thus covers a contiguous run of
 * blocks.
 *
 * The all-reduce splits the vector across channels; the all-gather's messages span several
 * ranks' blocks, so it runs on channel 0. Every exchange alternates chunk by chunk (see
 * cs_algo_exchange). */
#include "algos/algo.h"

#define RD_OPS (CS_OP_BIT(CS_OP_ALL_REDUCE) | CS_OP_BIT(CS_OP_ALL_GATHER))

/* The fold-in of the ranks beyond the largest power of two. */
typedef struct {
    int nranks;
    int pof2;
    int rem;
} Fold;

static Fold
fold_new(int P)
{
    Fold f = { .nranks = P, .pof2 = 1 };
    while (f.pof2 * 2 <= P)
        f.pof2 *= 2;
    f.rem = P - f.pof2;
    return f;
}

/* Participant index of rank @r, or -1 for an even rank that sits out. */
static int
fold_participant(const Fold *f, int r)
{
    if (r < 2 * f->rem)
        return r % 2 == 0 ? -1 : r / 2;
    return r - f->rem;
}

/* The rank that plays participant @i. */
static int
fold_rank(const Fold *f, int i)
{
    return i < f->rem ? 2 * i + 1 : i + f->rem;
}

/* First block (rank) that participant @i stands for; @i = pof2 gives P. */
static int
fold_first_block(const Fold *f, int i)
{
    return i < f->rem ? 2 * i : i + f->rem;
}

static CsRegion
region(CsBuffer buf, gint64 offset, gint64 bytes)
{
    return (CsRegion){ .buf = buf, .offset = offset, .bytes = bytes };
}

/* ---- All-reduce ---- */

static void
all_reduce_channel(CsSchedule *s, const Fold *f, int r, int ch, gint64 off, gint64 bytes,
                   gint64 chunk)
{
    int i = fold_participant(f, r);
    if (i < 0) {
        CsRegion mine = region(CS_BUF_INPUT, off, bytes);
        CsRegion result = region(CS_BUF_OUTPUT, off, bytes);
        cs_algo_exchange(s, r, ch, chunk, r + 1, &mine, 1, -1, NULL, 0, NULL);
        cs_algo_exchange(s, r, ch, chunk, -1, NULL, 0, r + 1, &result, 1, NULL);
        return;
    }
    CsBuffer cur = CS_BUF_INPUT;
    CsRegion out = region(CS_BUF_OUTPUT, off, bytes);
    if (r < 2 * f->rem) {
        CsRegion in = region(CS_BUF_INPUT, off, bytes);
        cs_algo_exchange(s, r, ch, chunk, -1, NULL, 0, r - 1, &out, 1, &in);
        cur = CS_BUF_OUTPUT;
    }
    for (int mask = 1; mask < f->pof2; mask <<= 1) {
        int peer = fold_rank(f, i ^ mask);
        CsRegion mine = region(cur, off, bytes);
        cs_algo_exchange(s, r, ch, chunk, peer, &mine, 1, peer, &out, 1, &mine);
        cur = CS_BUF_OUTPUT;
    }
    if (r < 2 * f->rem)
        cs_algo_exchange(s, r, ch, chunk, r - 1, &out, 1, -1, NULL, 0, NULL);
}

/* ---- All-gather ---- */

static void
all_gather_rank(CsSchedule *s, const Fold *f, int r, gint64 block, gint64 chunk)
{
    int P = f->nranks;
    int i = fold_participant(f, r);
    if (i < 0) {
        CsRegion mine = region(CS_BUF_INPUT, 0, block);
        CsRegion all = region(CS_BUF_OUTPUT, 0, block * P);
        cs_algo_exchange(s, r, 0, chunk, r + 1, &mine, 1, -1, NULL, 0, NULL);
        cs_algo_exchange(s, r, 0, chunk, -1, NULL, 0, r + 1, &all, 1, NULL);
        return;
    }
    if (r < 2 * f->rem) {
        CsRegion theirs = region(CS_BUF_OUTPUT, (r - 1) * block, block);
        cs_algo_exchange(s, r, 0, chunk, -1, NULL, 0, r - 1, &theirs, 1, NULL);
    }
    if (block > 0)
        cs_schedule_step(s, r, 0, CS_STEP_COPY, -1, -1, CS_BUF_INPUT, 0, CS_BUF_OUTPUT, r * block,
                         block, 0);
    for (int mask = 1; mask < f->pof2; mask <<= 1) {
        int mine_lo = i & ~(mask - 1);
        int peer_lo = (i ^ mask) & ~(mask - 1);
        int a = fold_first_block(f, mine_lo);
        int b = fold_first_block(f, mine_lo + mask);
        int c = fold_first_block(f, peer_lo);
        int d = fold_first_block(f, peer_lo + mask);
        int peer = fold_rank(f, i ^ mask);
        CsRegion mine = region(CS_BUF_OUTPUT, a * block, (b - a) * block);
        CsRegion theirs = region(CS_BUF_OUTPUT, c * block, (d - c) * block);
        cs_algo_exchange(s, r, 0, chunk, peer, &mine, 1, peer, &theirs, 1, NULL);
    }
    if (r < 2 * f->rem) {
        CsRegion all = region(CS_BUF_OUTPUT, 0, block * P);
        cs_algo_exchange(s, r, 0, chunk, r - 1, &all, 1, -1, NULL, 0, NULL);
    }
}

/* ---- The algorithm ---- */

static gboolean
rd_supports(const CsTopo *topo, CsOp op, int nranks, const char **why)
{
    (void)topo;
    (void)nranks;
    if ((RD_OPS & CS_OP_BIT(op)) == 0) {
        *why = "recursive doubling serves all-reduce and all-gather";
        return FALSE;
    }
    return TRUE;
}

static CsSchedule *
rd_build(const CsAlgoArgs *args, GError **error)
{
    (void)error;
    g_autoptr(CsSchedule) sched = cs_algo_schedule_new(args);
    int P = args->nranks;
    if (P == 1) {
        cs_algo_copy_input(sched);
        return g_steal_pointer(&sched);
    }
    const CsOpSize *size = cs_schedule_size(sched);
    gint64 ts = cs_dtype_size(args->dtype);
    gint64 chunk = cs_algo_chunk_bytes(args);
    Fold f = fold_new(P);
    for (int r = 0; r < P; r++) {
        if (args->op == CS_OP_ALL_GATHER) {
            all_gather_rank(sched, &f, r, size->block_bytes, chunk);
            continue;
        }
        for (int c = 0; c < args->n_channels; c++) {
            gint64 first;
            gint64 n;
            cs_algo_split(size->count, args->n_channels, c, &first, &n);
            all_reduce_channel(sched, &f, r, c, first * ts, n * ts, chunk);
        }
    }
    return g_steal_pointer(&sched);
}

const CsAlgo cs_algo_recursive_doubling = {
    .name = "recursive_doubling",
    .summary = "recursive doubling: log2 P exchange rounds (all-reduce of the whole vector)",
    .reference = "Thakur, Rabenseifner & Gropp, IJHPCA 19(1) 2005 §4 (recursive doubling, "
                 "non-power-of-two fold-in)",
    .ops = RD_OPS,
    .supports = rd_supports,
    .build = rd_build,
};
