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

/* ---- All-reduce ---- */

static void
all_reduce_channel(CsSchedule *s, const CsAlgoFold *f, int r, int ch, gint64 off, gint64 bytes,
                   gint64 chunk)
{
    int i = cs_algo_fold_participant(f, r);
    if (i < 0) {
        CsRegion mine = cs_algo_region(CS_BUF_INPUT, off, bytes);
        CsRegion result = cs_algo_region(CS_BUF_OUTPUT, off, bytes);
        cs_algo_exchange(s, r, ch, chunk, r + 1, &mine, 1, -1, NULL, 0, NULL);
        cs_algo_exchange(s, r, ch, chunk, -1, NULL, 0, r + 1, &result, 1, NULL);
        return;
    }
    CsBuffer cur = CS_BUF_INPUT;
    CsRegion out = cs_algo_region(CS_BUF_OUTPUT, off, bytes);
    if (r < 2 * f->rem) {
        CsRegion in = cs_algo_region(CS_BUF_INPUT, off, bytes);
        cs_algo_exchange(s, r, ch, chunk, -1, NULL, 0, r - 1, &out, 1, &in);
        cur = CS_BUF_OUTPUT;
    }
    for (int mask = 1; mask < f->pof2; mask <<= 1) {
        int peer = cs_algo_fold_rank(f, i ^ mask);
        CsRegion mine = cs_algo_region(cur, off, bytes);
        cs_algo_exchange(s, r, ch, chunk, peer, &mine, 1, peer, &out, 1, &mine);
        cur = CS_BUF_OUTPUT;
    }
    if (r < 2 * f->rem)
        cs_algo_exchange(s, r, ch, chunk, r - 1, &out, 1, -1, NULL, 0, NULL);
}

/* ---- All-gather ---- */

static void
all_gather_rank(CsSchedule *s, const CsAlgoFold *f, int r, gint64 block, gint64 chunk)
{
    int P = f->nranks;
    int i = cs_algo_fold_participant(f, r);
    if (i < 0) {
        CsRegion mine = cs_algo_region(CS_BUF_INPUT, 0, block);
        CsRegion all = cs_algo_region(CS_BUF_OUTPUT, 0, block * P);
        cs_algo_exchange(s, r, 0, chunk, r + 1, &mine, 1, -1, NULL, 0, NULL);
        cs_algo_exchange(s, r, 0, chunk, -1, NULL, 0, r + 1, &all, 1, NULL);
        return;
    }
    if (r < 2 * f->rem) {
        CsRegion theirs = cs_algo_region(CS_BUF_OUTPUT, (r - 1) * block, block);
        cs_algo_exchange(s, r, 0, chunk, -1, NULL, 0, r - 1, &theirs, 1, NULL);
    }
    if (block > 0)
        cs_schedule_step(s, r, 0, CS_STEP_COPY, -1, -1, CS_BUF_INPUT, 0, CS_BUF_OUTPUT, r * block,
                         block, 0);
    for (int mask = 1; mask < f->pof2; mask <<= 1) {
        int mine_lo = i & ~(mask - 1);
        int peer_lo = (i ^ mask) & ~(mask - 1);
        int a = cs_algo_fold_first_block(f, mine_lo);
        int b = cs_algo_fold_first_block(f, mine_lo + mask);
        int c = cs_algo_fold_first_block(f, peer_lo);
        int d = cs_algo_fold_first_block(f, peer_lo + mask);
        int peer = cs_algo_fold_rank(f, i ^ mask);
        CsRegion mine = cs_algo_region(CS_BUF_OUTPUT, a * block, (b - a) * block);
        CsRegion theirs = cs_algo_region(CS_BUF_OUTPUT, c * block, (d - c) * block);
        cs_algo_exchange(s, r, 0, chunk, peer, &mine, 1, peer, &theirs, 1, NULL);
    }
    if (r < 2 * f->rem) {
        CsRegion all = cs_algo_region(CS_BUF_OUTPUT, 0, block * P);
        cs_algo_exchange(s, r, 0, chunk, r - 1, &all, 1, -1, NULL, 0, NULL);
    }
}

/* ---- The algorithm ---- */

static gboolean
rd_supports(const CsTopo *topo, CsOp op, int nranks, const char **why)
{
    (void)topo;
    (void)nranks;
    return cs_algo_supports_ops(RD_OPS, op, "recursive doubling serves all-reduce and all-gather",
                                why);
}

static CsSchedule *
rd_build(const CsAlgoArgs *args, GError **error)
{
    (void)error;
    g_autoptr(CsSchedule) sched = cs_algo_schedule_new(args);
    int P = args->nranks;
    if (cs_algo_one_rank_done(sched))
        return g_steal_pointer(&sched);
    const CsOpSize *size = cs_schedule_size(sched);
    gint64 ts = cs_dtype_size(args->dtype);
    gint64 chunk = cs_algo_chunk_bytes(args);
    CsAlgoFold f = cs_algo_fold_new(P);
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
