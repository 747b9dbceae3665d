// SPDX-License-Identifier: MIT
/* Recursive halving-doubling (Rabenseifner's algorithm).
 *
 * All-reduce = reduce-scatter by recursive halving (round k: exchange half of the current
 * window with partner i XOR 2^k, distance halving from pof2/2 to 1, keep and reduce the other
 * half) then all-gather by recursive doubling (distance doubling, the mirror image): 2 log2 P
 * rounds moving 2 (P-1)/P n bytes, bandwidth-optimal like the ring with log rounds
 * (Rabenseifner, "Optimization of collective reduction operations", ICCS 2004; Thakur,
 * Rabenseifner and Gropp, IJHPCA 19(1) 2005, §4.4). Reduce-scatter is the halving phase alone
 * (Thakur et al. §4.3, recursive halving).
 *
 * P that is not a power of two: the fold-in of recursive_doubling.c. Even ranks r < 2 rem
 * hand their whole input to r + 1 and get their result back at the end. In reduce-scatter
 * participant i owns a contiguous run of blocks (two for i < rem), so windows of
 * participants are contiguous runs of blocks.
 *
 * All-reduce splits the vector across channels; reduce-scatter's windows span several
 * ranks' blocks and run on channel 0. */
#include "algos/algo.h"

#define RHD_OPS (CS_OP_BIT(CS_OP_ALL_REDUCE) | CS_OP_BIT(CS_OP_REDUCE_SCATTER))

/* ---- All-reduce ---- */

/* Byte range of blocks [@lo, @hi) when @count elements from @first are cut into pof2 blocks. */
static void
window(const CsAlgoFold *f, gint64 first, gint64 count, gint64 ts, int lo, int hi, gint64 *off,
       gint64 *bytes)
{
    gint64 a;
    gint64 b;
    gint64 n;
    cs_algo_split(count, f->pof2, lo, &a, &n);
    if (hi < f->pof2)
        cs_algo_split(count, f->pof2, hi, &b, &n);
    else
        b = count;
    *off = (first + a) * ts;
    *bytes = (b - a) * ts;
}

static void
all_reduce_channel(CsSchedule *s, const CsAlgoFold *f, int r, int ch, gint64 first, gint64 count,
                   gint64 ts, gint64 chunk)
{
    int i = cs_algo_fold_participant(f, r);
    CsRegion all_in = cs_algo_region(CS_BUF_INPUT, first * ts, count * ts);
    CsRegion all_out = cs_algo_region(CS_BUF_OUTPUT, first * ts, count * ts);
    if (i < 0) {
        cs_algo_exchange(s, r, ch, chunk, r + 1, &all_in, 1, -1, NULL, 0, NULL);
        cs_algo_exchange(s, r, ch, chunk, -1, NULL, 0, r + 1, &all_out, 1, NULL);
        return;
    }
    CsBuffer cur = CS_BUF_INPUT;
    if (r < 2 * f->rem) {
        cs_algo_exchange(s, r, ch, chunk, -1, NULL, 0, r - 1, &all_out, 1, &all_in);
        cur = CS_BUF_OUTPUT;
    }
    /* Reduce-scatter: the window of blocks [lo, hi) halves each round. */
    int lo = 0;
    int hi = f->pof2;
    for (int mask = f->pof2 / 2; mask >= 1; mask /= 2) {
        int peer = cs_algo_fold_rank(f, i ^ mask);
        int mid = lo + mask;
        gboolean lower = (i & mask) == 0;
        gint64 keep_off;
        gint64 keep_bytes;
        gint64 give_off;
        gint64 give_bytes;
        window(f, first, count, ts, lower ? lo : mid, lower ? mid : hi, &keep_off, &keep_bytes);
        window(f, first, count, ts, lower ? mid : lo, lower ? hi : mid, &give_off, &give_bytes);
        CsRegion give = cs_algo_region(cur, give_off, give_bytes);
        CsRegion keep_src = cs_algo_region(cur, keep_off, keep_bytes);
        CsRegion keep = cs_algo_region(CS_BUF_OUTPUT, keep_off, keep_bytes);
        cs_algo_exchange(s, r, ch, chunk, peer, &give, 1, peer, &keep, 1, &keep_src);
        cur = CS_BUF_OUTPUT;
        if (lower)
            hi = mid;
        else
            lo = mid;
    }
    /* All-gather: the window doubles back. */
    for (int mask = 1; mask < f->pof2; mask *= 2) {
        int peer = cs_algo_fold_rank(f, i ^ mask);
        int mine = i & ~(mask - 1);
        int theirs = (i ^ mask) & ~(mask - 1);
        gint64 off;
        gint64 bytes;
        window(f, first, count, ts, mine, mine + mask, &off, &bytes);
        CsRegion send = cs_algo_region(CS_BUF_OUTPUT, off, bytes);
        window(f, first, count, ts, theirs, theirs + mask, &off, &bytes);
        CsRegion recv = cs_algo_region(CS_BUF_OUTPUT, off, bytes);
        cs_algo_exchange(s, r, ch, chunk, peer, &send, 1, peer, &recv, 1, NULL);
    }
    if (r < 2 * f->rem)
        cs_algo_exchange(s, r, ch, chunk, r - 1, &all_out, 1, -1, NULL, 0, NULL);
}

/* ---- Reduce-scatter ---- */

/* Participant windows [lo, hi) as byte ranges of the P blocks of @block bytes. */
static void
group_range(const CsAlgoFold *f, int lo, int hi, gint64 block, gint64 *off, gint64 *bytes)
{
    *off = cs_algo_fold_first_block(f, lo) * block;
    *bytes = (cs_algo_fold_first_block(f, hi) - cs_algo_fold_first_block(f, lo)) * block;
}

static void
reduce_scatter_rank(CsSchedule *s, const CsAlgoFold *f, int r, gint64 block, gint64 chunk)
{
    int P = f->nranks;
    int i = cs_algo_fold_participant(f, r);
    CsRegion all_in = cs_algo_region(CS_BUF_INPUT, 0, block * P);
    CsRegion result = cs_algo_region(CS_BUF_OUTPUT, 0, block);
    if (i < 0) {
        cs_algo_exchange(s, r, 0, chunk, r + 1, &all_in, 1, -1, NULL, 0, NULL);
        cs_algo_exchange(s, r, 0, chunk, -1, NULL, 0, r + 1, &result, 1, NULL);
        return;
    }
    CsBuffer cur = CS_BUF_INPUT;
    if (r < 2 * f->rem) {
        CsRegion acc = cs_algo_region(CS_BUF_SCRATCH, 0, block * P);
        cs_algo_exchange(s, r, 0, chunk, -1, NULL, 0, r - 1, &acc, 1, &all_in);
        cur = CS_BUF_SCRATCH;
    }
    int lo = 0;
    int hi = f->pof2;
    for (int mask = f->pof2 / 2; mask >= 1; mask /= 2) {
        int peer = cs_algo_fold_rank(f, i ^ mask);
        int mid = lo + mask;
        gboolean lower = (i & mask) == 0;
        gint64 keep_off;
        gint64 keep_bytes;
        gint64 give_off;
        gint64 give_bytes;
        group_range(f, lower ? lo : mid, lower ? mid : hi, block, &keep_off, &keep_bytes);
        group_range(f, lower ? mid : lo, lower ? hi : mid, block, &give_off, &give_bytes);
        CsRegion give = cs_algo_region(cur, give_off, give_bytes);
        CsRegion keep_src = cs_algo_region(cur, keep_off, keep_bytes);
        /* The last round of a one-block participant lands in its output directly. */
        gboolean last_single = mask == 1 && i >= f->rem;
        CsRegion keep = last_single ? cs_algo_region(CS_BUF_OUTPUT, 0, keep_bytes)
                                    : cs_algo_region(CS_BUF_SCRATCH, keep_off, keep_bytes);
        cs_algo_exchange(s, r, 0, chunk, peer, &give, 1, peer, &keep, 1, &keep_src);
        cur = CS_BUF_SCRATCH;
        if (lower)
            hi = mid;
        else
            lo = mid;
    }
    if (r < 2 * f->rem) {
        /* Blocks r - 1 (for the rank sitting out) and r, reduced in scratch. */
        CsRegion theirs = cs_algo_region(CS_BUF_SCRATCH, (r - 1) * block, block);
        if (block > 0)
            cs_schedule_step(s, r, 0, CS_STEP_COPY, -1, -1, CS_BUF_SCRATCH, r * block,
                             CS_BUF_OUTPUT, 0, block, 0);
        cs_algo_exchange(s, r, 0, chunk, r - 1, &theirs, 1, -1, NULL, 0, NULL);
    }
}

/* ---- The algorithm ---- */

static gboolean
rhd_supports(const CsTopo *topo, CsOp op, int nranks, const char **why)
{
    (void)topo;
    (void)nranks;
    return cs_algo_supports_ops(
        RHD_OPS, op, "recursive halving-doubling serves all-reduce and reduce-scatter", why);
}

static CsSchedule *
rhd_build(const CsAlgoArgs *args, GError **error)
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
    if (args->op == CS_OP_REDUCE_SCATTER) {
        cs_schedule_set_scratch(sched, size->block_bytes * P);
        for (int r = 0; r < P; r++)
            reduce_scatter_rank(sched, &f, r, size->block_bytes, chunk);
        return g_steal_pointer(&sched);
    }
    for (int r = 0; r < P; r++)
        for (int c = 0; c < args->n_channels; c++) {
            gint64 first;
            gint64 n;
            cs_algo_split(size->count, args->n_channels, c, &first, &n);
            all_reduce_channel(sched, &f, r, c, first, n, ts, chunk);
        }
    return g_steal_pointer(&sched);
}

const CsAlgo cs_algo_rhd = {
    .name = "rhd",
    .summary = "recursive halving-doubling (Rabenseifner): 2 log2 P rounds, bandwidth-optimal",
    .reference = "Rabenseifner, ICCS 2004; Thakur, Rabenseifner & Gropp, IJHPCA 19(1) 2005 "
                 "§4.3-4.4",
    .ops = RHD_OPS,
    .supports = rhd_supports,
    .build = rhd_build,
};
