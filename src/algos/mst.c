// SPDX-License-Identifier: MIT
/* Binomial trees (the "minimum spanning tree" algorithms): ceil(log2 P) rounds, latency-
 * optimal, each rank sending at most log2 P times.
 *
 * Ranks are renumbered relative to the root (v = r - root mod P). The parent of v > 0 is v
 * with its lowest set bit cleared; v's subtree is [v, v + min(lowbit(v), P - v)). Broadcast
 * and scatter send to children largest subtree first, reduce and gather receive from them
 * smallest first, as MPICH does (Thakur, Rabenseifner and Gropp, "Optimization of
 * Collective Communication Operations in MPICH", IJHPCA 19(1), 2005, §3-4). All-reduce is
 * reduce + broadcast and all-gather gather + broadcast, both rooted at rank 0 (the seed
 * article's MST: "Collective Communication for Multiple GPUs").
 *
 * Broadcast, reduce and all-reduce split the vector across channels and pipeline it in
 * chunks down (or up) the tree. Scatter, gather and all-gather move several ranks' blocks in
 * one message, which per-channel slices of each block would break into many: they run on
 * channel 0 and are chunked. */
#include "algos/algo.h"

#define MST_OPS                                                                                    \
    (CS_OP_BIT(CS_OP_BROADCAST) | CS_OP_BIT(CS_OP_REDUCE) | CS_OP_BIT(CS_OP_ALL_REDUCE)            \
     | CS_OP_BIT(CS_OP_ALL_GATHER) | CS_OP_BIT(CS_OP_SCATTER) | CS_OP_BIT(CS_OP_GATHER))

typedef struct {
    CsSchedule *sched;
    int nranks;
    int root;
    gint64 ts;    /* bytes per element */
    gint64 chunk; /* bytes */
} Tree;

/* ---- Tree shape ---- */

static int
absolute(const Tree *t, int v)
{
    return (v + t->root) % t->nranks;
}

/* lowbit(v), or for the root the smallest power of two >= P. */
static int
span(const Tree *t, int v)
{
    if (v != 0)
        return v & -v;
    int m = 1;
    while (m < t->nranks)
        m <<= 1;
    return m;
}

static int
subtree_size(const Tree *t, int v)
{
    return MIN(span(t, v), t->nranks - v);
}

static int
parent(int v)
{
    return v & (v - 1);
}

/* Children of @v, smallest subtree first; returns how many. */
static int
children(const Tree *t, int v, int *out)
{
    int n = 0;
    for (int m = 1; m < span(t, v); m <<= 1)
        if (v + m < t->nranks)
            out[n++] = v + m;
    return n;
}

/* ---- Vector collectives: broadcast, reduce ---- */

/* Broadcasts [@first, @first + @count) elements from the root's @src_buf to every other
 * rank's output, chunk by chunk down the tree. */
static void
broadcast_range(const Tree *t, int channel, CsBuffer src_buf, gint64 first, gint64 count)
{
    int kids[32];
    gint64 bytes = count * t->ts;
    for (int v = 0; v < t->nranks; v++) {
        int r = absolute(t, v);
        int nk = children(t, v, kids);
        CsBuffer from = v == 0 ? src_buf : CS_BUF_OUTPUT;
        int k = 0;
        for (gint64 at = 0; at < bytes; at += t->chunk, k++) {
            gint64 len = MIN(t->chunk, bytes - at);
            gint64 off = first * t->ts + at;
            if (v != 0)
                cs_schedule_recv(t->sched, r, channel, absolute(t, parent(v)), CS_BUF_OUTPUT, off,
                                 len, k);
            for (int i = nk - 1; i >= 0; i--)
                cs_schedule_send(t->sched, r, channel, absolute(t, kids[i]), from, off, len, k);
        }
    }
}

/* Whether a non-root rank must keep a partial sum (it has two children or more). */
static gboolean
reduce_needs_scratch(const Tree *t)
{
    int kids[32];
    for (int v = 1; v < t->nranks; v++)
        if (children(t, v, kids) >= 2)
            return TRUE;
    return FALSE;
}

/* Reduces [@first, @first + @count) of every input into the root's output. A rank sums its
 * children in its output (root) or scratch (others) and passes the last child's data on
 * with recv_reduce_send, so a rank with one child stores nothing. */
static void
reduce_range(const Tree *t, int channel, gint64 first, gint64 count)
{
    int kids[32];
    gint64 bytes = count * t->ts;
    for (int v = 0; v < t->nranks; v++) {
        int r = absolute(t, v);
        int nk = children(t, v, kids);
        CsBuffer acc = v == 0 ? CS_BUF_OUTPUT : CS_BUF_SCRATCH;
        int up = v == 0 ? -1 : absolute(t, parent(v));
        int k = 0;
        for (gint64 at = 0; at < bytes; at += t->chunk, k++) {
            gint64 len = MIN(t->chunk, bytes - at);
            gint64 off = first * t->ts + at;
            if (nk == 0 && v != 0)
                cs_schedule_send(t->sched, r, channel, up, CS_BUF_INPUT, off, len, k);
            else if (nk == 0)
                cs_schedule_step(t->sched, r, channel, CS_STEP_COPY, -1, -1, CS_BUF_INPUT, off,
                                 CS_BUF_OUTPUT, off, len, k);
            for (int i = 0; i < nk; i++) {
                CsBuffer src = i == 0 ? CS_BUF_INPUT : acc;
                int kid = absolute(t, kids[i]);
                if (v != 0 && i == nk - 1)
                    cs_schedule_step(t->sched, r, channel, CS_STEP_RECV_REDUCE_SEND, kid, up, src,
                                     off, acc, off, len, k);
                else
                    cs_schedule_step(t->sched, r, channel, CS_STEP_RECV_REDUCE, kid, -1, src, off,
                                     acc, off, len, k);
            }
        }
    }
}

/* ---- Block collectives: scatter, gather ---- */

/* The blocks of relative ranks [@v, @v + @n) as at most two byte ranges of a buffer laid out
 * by absolute rank (they wrap past rank P-1 when the root is not 0). */
static int
wrapped(const Tree *t, int v, int n, gint64 block, gint64 off[2], gint64 len[2])
{
    int a = absolute(t, v);
    int first_part = MIN(n, t->nranks - a);
    off[0] = a * block;
    len[0] = first_part * block;
    if (first_part == n)
        return 1;
    off[1] = 0;
    len[1] = (n - first_part) * block;
    return 2;
}

static void
scatter_tree(const Tree *t, gint64 block)
{
    int kids[32];
    for (int v = 0; v < t->nranks; v++) {
        int r = absolute(t, v);
        int nk = children(t, v, kids);
        int size = subtree_size(t, v);
        /* Where this rank holds its subtree's blocks: the root's input (by absolute rank),
         * a leaf's output, or an inner rank's scratch (by relative rank, from offset 0). */
        if (v != 0) {
            int up = absolute(t, parent(v));
            CsBuffer into = size == 1 ? CS_BUF_OUTPUT : CS_BUF_SCRATCH;
            if (parent(v) == 0) {
                gint64 off[2];
                gint64 len[2];
                int n = wrapped(t, v, size, block, off, len);
                for (int i = 0, at = 0; i < n; at += (int)(len[i] / MAX(block, 1)), i++)
                    cs_algo_recv_chunked(t->sched, r, 0, up, into, at * block, len[i], t->chunk);
            }
            else
                cs_algo_recv_chunked(t->sched, r, 0, up, into, 0, size * block, t->chunk);
            if (size > 1 && block > 0)
                cs_schedule_step(t->sched, r, 0, CS_STEP_COPY, -1, -1, CS_BUF_SCRATCH, 0,
                                 CS_BUF_OUTPUT, 0, block, 0);
        }
        for (int i = nk - 1; i >= 0; i--) {
            int c = kids[i];
            int csize = subtree_size(t, c);
            if (v == 0) {
                gint64 off[2];
                gint64 len[2];
                int n = wrapped(t, c, csize, block, off, len);
                for (int j = 0; j < n; j++)
                    cs_algo_send_chunked(t->sched, r, 0, absolute(t, c), CS_BUF_INPUT, off[j],
                                         len[j], t->chunk);
            }
            else
                cs_algo_send_chunked(t->sched, r, 0, absolute(t, c), CS_BUF_SCRATCH,
                                     (c - v) * block, csize * block, t->chunk);
        }
        if (v == 0 && block > 0)
            cs_schedule_step(t->sched, r, 0, CS_STEP_COPY, -1, -1, CS_BUF_INPUT, r * block,
                             CS_BUF_OUTPUT, 0, block, 0);
    }
}

/* Gathers every rank's block into the root's output (by absolute rank). Inner ranks collect
 * their subtree in scratch by relative rank; leaves send straight from their input. */
static void
gather_tree(const Tree *t, CsBuffer dst_buf, gint64 block)
{
    int kids[32];
    for (int v = 0; v < t->nranks; v++) {
        int r = absolute(t, v);
        int nk = children(t, v, kids);
        int size = subtree_size(t, v);
        if (v == 0 && block > 0)
            cs_schedule_step(t->sched, r, 0, CS_STEP_COPY, -1, -1, CS_BUF_INPUT, 0, dst_buf,
                             r * block, block, 0);
        else if (nk > 0 && block > 0)
            cs_schedule_step(t->sched, r, 0, CS_STEP_COPY, -1, -1, CS_BUF_INPUT, 0, CS_BUF_SCRATCH,
                             0, block, 0);
        for (int i = 0; i < nk; i++) {
            int c = kids[i];
            int csize = subtree_size(t, c);
            if (v == 0) {
                gint64 off[2];
                gint64 len[2];
                int n = wrapped(t, c, csize, block, off, len);
                for (int j = 0; j < n; j++)
                    cs_algo_recv_chunked(t->sched, r, 0, absolute(t, c), dst_buf, off[j], len[j],
                                         t->chunk);
            }
            else
                cs_algo_recv_chunked(t->sched, r, 0, absolute(t, c), CS_BUF_SCRATCH,
                                     (c - v) * block, csize * block, t->chunk);
        }
        if (v == 0)
            continue;
        int up = absolute(t, parent(v));
        CsBuffer from = nk > 0 ? CS_BUF_SCRATCH : CS_BUF_INPUT;
        if (parent(v) == 0) {
            gint64 off[2];
            gint64 len[2];
            int n = wrapped(t, v, size, block, off, len);
            for (int i = 0, at = 0; i < n; at += (int)(len[i] / MAX(block, 1)), i++)
                cs_algo_send_chunked(t->sched, r, 0, up, from, at * block, len[i], t->chunk);
        }
        else
            cs_algo_send_chunked(t->sched, r, 0, up, from, 0, size * block, t->chunk);
    }
}

/* ---- The algorithm ---- */

static gboolean
mst_supports(const CsTopo *topo, CsOp op, int nranks, const char **why)
{
    (void)topo;
    (void)nranks;
    return cs_algo_supports_ops(MST_OPS, op, "no binomial-tree schedule for this collective", why);
}

static CsSchedule *
mst_build(const CsAlgoArgs *args, GError **error)
{
    (void)error;
    g_autoptr(CsSchedule) sched = cs_algo_schedule_new(args);
    int P = args->nranks;
    if (cs_algo_one_rank_done(sched))
        return g_steal_pointer(&sched);
    const CsOpSize *size = cs_schedule_size(sched);
    Tree t = {
        .sched = sched,
        .nranks = P,
        .root = cs_op_has_root(args->op) ? args->root : 0,
        .ts = cs_dtype_size(args->dtype),
        .chunk = cs_algo_chunk_bytes(args),
    };
    gint64 count = size->count;
    gint64 block = size->block_bytes;

    switch (args->op) {
    case CS_OP_BROADCAST:
    case CS_OP_REDUCE:
    case CS_OP_ALL_REDUCE:
        if (args->op != CS_OP_BROADCAST && reduce_needs_scratch(&t))
            cs_schedule_set_scratch(sched, size->send_bytes);
        for (int c = 0; c < args->n_channels; c++) {
            gint64 first;
            gint64 n;
            cs_algo_split(count, args->n_channels, c, &first, &n);
            if (args->op != CS_OP_BROADCAST)
                reduce_range(&t, c, first, n);
            if (args->op == CS_OP_BROADCAST)
                broadcast_range(&t, c, CS_BUF_INPUT, first, n);
            else if (args->op == CS_OP_ALL_REDUCE)
                broadcast_range(&t, c, CS_BUF_OUTPUT, first, n);
        }
        if (args->op == CS_OP_BROADCAST)
            for (int c = 0; c < args->n_channels; c++) {
                gint64 first;
                gint64 n;
                cs_algo_split(count, args->n_channels, c, &first, &n);
                if (n > 0)
                    cs_schedule_step(sched, t.root, c, CS_STEP_COPY, -1, -1, CS_BUF_INPUT,
                                     first * t.ts, CS_BUF_OUTPUT, first * t.ts, n * t.ts, 0);
            }
        break;
    case CS_OP_SCATTER:
        cs_schedule_set_scratch(sched, block * P);
        scatter_tree(&t, block);
        break;
    case CS_OP_GATHER:
        cs_schedule_set_scratch(sched, block * P);
        gather_tree(&t, CS_BUF_OUTPUT, block);
        break;
    case CS_OP_ALL_GATHER:
        cs_schedule_set_scratch(sched, block * P);
        gather_tree(&t, CS_BUF_OUTPUT, block);
        broadcast_range(&t, 0, CS_BUF_OUTPUT, 0, block * P / t.ts);
        break;
    default:
        g_assert_not_reached();
    }
    return g_steal_pointer(&sched);
}

const CsAlgo cs_algo_mst = {
    .name = "mst",
    .summary = "binomial (minimum spanning) tree: ceil(log2 P) rounds, latency-optimal",
    .reference = "Thakur, Rabenseifner & Gropp, IJHPCA 19(1) 2005 (MPICH binomial bcast, "
                 "reduce, scatter, gather)",
    .ops = MST_OPS,
    .supports = mst_supports,
    .build = mst_build,
};
