// SPDX-License-Identifier: MIT
/* PAT, NCCL's Parallel Aggregated Trees (NCCL 2.23+): all-gather and reduce-scatter over
 * binomial trees whose edges join ranks 2^d apart, with the small blocks of many ranks
 * aggregated into one message, for communicators of one GPU per node.
 *
 * NCCL 2.30 src/include/collectives.h, PatAGAlgorithm and PatRSAlgorithm::getNextOp(): each
 * rank walks the same sequence of steps, each step naming a dimension to receive on
 * (recvDim) and one to send on (sendDim), the block it moves (inpIx, outIx) and whether it
 * closes the slot it fills (postSend). Dimension d joins rank r with r + 2^d and r - 2^d
 * (src/device/prims_simple.h, the PatMode set-up; src/transport/generic.cc
 * ncclTransportPatConnect): all-gather sends to r - 2^d and receives from r + 2^d,
 * reduce-scatter the other way round. A block of all-gather crosses the set bits of its
 * distance, lowest dimension last, so a rank forwards what it received on a higher dimension;
 * reduce-scatter sums the partial results of a block on the way in the mirror order.
 * Aggregation: while a channel's data is at most half a slot, blocks of 2, 4 ... ranks share
 * one slot (aggFactor, postFreq), which is what makes PAT log-latency at small sizes.
 *
 * collsim runs those generators as they are (ported below) and writes each step as the data
 * it moves: a slot is a region of the sender's scratch that the blocks are copied into and
 * that is sent whole when NCCL posts it; the receiver takes it into its scratch and copies
 * (all-gather) or reduces (reduce-scatter) each block out by the block it is, the way
 * patCopy()/patReduce() read the connection buffer. NCCL's warps run up to 16 steps of a
 * parallel group at once; collsim runs them in order (docs/pat.md).
 *
 * When NCCL uses it (2.30 src/graph/tuning.cc ncclPatEnable, ncclTopoTuneModel): all-gather
 * and reduce-scatter, Simple only, one GPU per node (nNodes == nRanks), and not
 * reduce-scatter with a scaling operator (src/enqueue.cc: PreMulSum, SumPostDiv, i.e. avg).
 * Its chunk halves from the slot down to 64 KiB while chunk x channels x 32 (all-gather) or
 * x 16 (reduce-scatter) exceeds the size (enqueue.cc, the PAT cases of the chunk size). */
#include <string.h>

#include "algos/algo.h"

#define PAT_OPS (CS_OP_BIT(CS_OP_ALL_GATHER) | CS_OP_BIT(CS_OP_REDUCE_SCATTER))
/* NCCL_STEPS: slots per connection (src/include/device.h). */
#define PAT_STEPS 8
/* NCCL_PAT_NWORKERS / WARP_SIZE: the most steps run at once (collectives.h, all_gather.h). */
#define PAT_MAX_PARALLEL (512 / 32)

/* ---- NCCL's step generators (collectives.h, ported line by line) ---- */

/* ncclPatStep, less the device fields. */
typedef struct {
    int recv_dim;     /* dimension received on, -1: none */
    int send_dim;     /* dimension sent on, -1: none */
    int step_offset;  /* slots ahead of the connection's step */
    int post_send;    /* the step closes the send slot */
    int last;         /* 2 after the last step */
    gboolean skipped; /* PatSkipped: the step does nothing */
    gint64 nelem;     /* elements */
    gint64 inp_ix;    /* elements: into the input */
    gint64 out_ix;    /* elements: into the output */
} PatStep;

typedef struct {
    gboolean rs; /* PatRSAlgorithm, else PatAGAlgorithm */
    gint64 offset, end, count, chunk_count, nelem;
    int rank, nranks, nr_pow2, post_freq, last_a, parallel_factor, agg_factor;
    int as, a, send_skipped, step_offset, agg_delta, scale, phase;
    /* all-gather's order of aggregated steps */
    int as_dim, v;
    int bit_count[32];
    int bit_zero_step[32];
} PatGen;

static int
log2_up(int n)
{
    int k = 0;
    while ((1 << k) < n)
        k++;
    return k;
}

static int
first_bit_set(int i, int max)
{
    return i != 0 ? g_bit_nth_lsf((gulong)(guint)i, -1) : max;
}

static int
n_bits_set(int i)
{
    int n = 0;
    for (guint u = (guint)i; u != 0; u &= u - 1)
        n++;
    return n;
}

static int
mirror_invert(int i, int max)
{
    int ret = 0;
    for (int mask = 1, imask = max / 2; mask < max; mask <<= 1, imask >>= 1)
        if ((i & mask) == 0)
            ret += imask;
    return ret;
}

/* newPeer(): only upper bits of @i set below @pow2 (8, 12, 14, 15 for 16). */
static int
new_peer(int i, int pow2)
{
    return n_bits_set((i ^ (pow2 - 1)) + 1) == 1;
}

static void
reset_a(PatGen *g)
{
    g->a = 0;
    g->send_skipped = g->step_offset = 0;
    g->last_a = g->agg_factor;
    if (g->phase >= 2)
        g->last_a /= 2 * g->scale;
    if (g->rs && g->phase == 4)
        g->last_a = 1;
}

static int
next_as(PatGen *g)
{
    for (int d = 0; d < g->as_dim; d++) {
        int p = 1 << d;
        g->bit_count[d]--;
        if (g->bit_count[d] == 0) {
            g->v ^= p;
            g->bit_count[d] = p;
            if ((g->v & p) == 0) {
                g->bit_count[d] += first_bit_set(g->bit_zero_step[d], g->as_dim) - 1;
                if (g->bit_count[d] == 0) {
                    g->v ^= p;
                    g->bit_count[d] = p;
                }
                g->bit_zero_step[d]++;
            }
        }
    }
    return g->v;
}

static void
reset(PatGen *g)
{
    g->nelem = MIN(g->chunk_count, g->end - g->offset);
    if (g->rs) {
        g->phase = 0;
        g->scale = 1;
        g->as = g->agg_delta - 1;
    }
    else {
        g->scale = g->agg_factor / 2;
        g->phase = g->scale ? 2 : 1;
        g->v = 0;
        for (int i = 0; i < g->as_dim; i++) {
            g->bit_count[i] = g->as_dim - i;
            g->bit_zero_step[i] = 1;
        }
        g->as = next_as(g);
    }
    reset_a(g);
}

/* The constructor: @step_bytes is the slot (chunkCount elements), @step_depth NCCL_STEPS. */
static void
gen_init(PatGen *g, gboolean rs, gint64 step_bytes, gint64 ts, gint64 offset, gint64 end,
         gint64 count, gint64 chunk_count, int rank, int nranks)
{
    *g = (PatGen){ .rs = rs,
                   .offset = offset,
                   .end = end,
                   .count = count,
                   .chunk_count = chunk_count,
                   .rank = rank,
                   .nranks = nranks };
    g->parallel_factor = PAT_MAX_PARALLEL;
    g->agg_delta = g->nr_pow2 = 1 << log2_up(nranks);
    g->agg_factor = 1;
    const gint64 channel_size = end - offset;
    while (step_bytes / (channel_size * ts * g->agg_factor) >= 2 && g->agg_factor < nranks / 2) {
        g->agg_factor *= 2;
        g->agg_delta /= 2;
    }
    g->post_freq = g->agg_factor;
    if (g->post_freq < g->parallel_factor)
        g->parallel_factor = g->post_freq;
    for (int d = PAT_STEPS; d > 1 && g->agg_factor < nranks / 2;) {
        d /= 2;
        g->agg_factor *= 2;
        g->agg_delta /= 2;
    }
    g->as_dim = log2_up(g->agg_delta);
    reset(g);
}

/* PatRSAlgorithm::getNextOp(). */
static void
rs_next(PatGen *g, PatStep *ps)
{
    const int nranks = g->nranks;
    int skip = 0;
    *ps = (PatStep){ .nelem = g->nelem, .out_ix = g->offset, .step_offset = g->step_offset };
    const int a = g->a;
    const int pf = g->post_freq;
    const int closes = ((a % pf) + 1 >= pf) || (a == g->last_a - 1);
    if (a >= g->last_a) {
        skip = 1;
    }
    else if (g->phase == 0) {
        int s = mirror_invert(a, g->last_a) * g->agg_delta + g->as;
        if (s >= nranks)
            skip = 1;
        ps->inp_ix = (gint64)((g->rank + s) % nranks) * g->count + g->offset;
        ps->recv_dim = -1;
        ps->send_dim = 0;
        ps->out_ix = 0;
        ps->post_send = closes;
    }
    else if (g->phase == 1) {
        int s = mirror_invert(a, g->last_a) * g->agg_delta + g->as;
        if (s >= nranks)
            skip = 1;
        ps->recv_dim = first_bit_set(s, g->nr_pow2);
        ps->post_send = ps->recv_dim == 0 && closes;
        s -= 1 << ps->recv_dim;
        ps->inp_ix = (gint64)((g->rank + nranks + s) % nranks) * g->count + g->offset;
        ps->send_dim = s ? first_bit_set(s, g->nr_pow2) : -1;
        if (ps->send_dim != -1 && g->as - (1 << ps->recv_dim) == 0 && new_peer(a, g->agg_factor)) {
            g->send_skipped = a;
            ps->step_offset = g->step_offset = 0;
        }
        const int recv_dim = ps->recv_dim;
        if (s < nranks && skip) {
            ps->recv_dim = -1;
            skip = 0;
        }
        if (recv_dim > 0 && (((a - g->send_skipped) % pf) + 1 >= pf) && skip == 0)
            g->step_offset++;
    }
    else if (g->phase == 2) {
        int s = (2 * mirror_invert(a, g->last_a) + 1) * g->scale * g->agg_delta + 1;
        if (s >= nranks)
            skip = 1;
        ps->recv_dim = 0;
        ps->post_send = a == g->last_a - 1;
        s -= 1;
        if (s < nranks && skip) {
            ps->recv_dim = -1;
            skip = 0;
        }
        ps->inp_ix = (gint64)((g->rank + nranks + s) % nranks) * g->count + g->offset;
        ps->send_dim = s ? first_bit_set(s, g->nr_pow2) : -1;
        ps->post_send |= ((a + 1) % pf) == 0;
    }
    else if (g->phase == 3) {
        int s = (2 * mirror_invert(a, g->last_a) + 1) * g->scale * g->agg_delta;
        if (s >= nranks)
            skip = 1;
        ps->recv_dim = first_bit_set(s, g->nr_pow2);
        s -= 1 << ps->recv_dim;
        ps->inp_ix = (gint64)((g->rank + nranks + s) % nranks) * g->count + g->offset;
        ps->send_dim = s ? first_bit_set(s, g->nr_pow2) : -1;
        if (s < nranks && skip) {
            ps->recv_dim = -1;
            skip = 0;
        }
        if (new_peer(a, g->agg_factor / (2 * g->scale))) {
            g->send_skipped = a;
            ps->step_offset = g->step_offset = 0;
        }
        if (((a - g->send_skipped) % pf) + 1 >= pf && skip == 0)
            g->step_offset++;
    }
    else if (g->phase == 4) {
        ps->recv_dim = 0;
        ps->send_dim = -1;
        ps->inp_ix = (gint64)g->rank * g->count + g->offset;
        g->offset += g->chunk_count;
    }
    g->a++;
    if (g->a >= g->last_a && g->a >= g->parallel_factor) {
        const int p = g->phase;
        if (p == 1)
            g->as--;
        if (p == 3)
            g->scale *= 2;
        g->phase = p == 0   ? (g->as == 1 ? (g->agg_factor > 1 ? 2 : 4) : 1)
                   : p == 1 ? (g->as % 2 == 1 ? 0 : 1)
                   : p == 2 ? 3
                   : p == 3 ? (g->scale < g->agg_factor ? 2 : 4)
                            : 5;
        if (p == 4) {
            if (g->offset >= g->end)
                ps->last = 2;
            else
                reset(g);
        }
        else
            reset_a(g);
    }
    ps->skipped = skip;
}

/* PatAGAlgorithm::getNextOp(). */
static void
ag_next(PatGen *g, PatStep *ps)
{
    const int nranks = g->nranks;
    int skip = 0;
    *ps = (PatStep){ .nelem = g->nelem, .inp_ix = g->offset };
    const int a = g->a;
    const int pf = g->post_freq;
    if (a >= g->last_a) {
        skip = 1;
    }
    else if (g->phase == 0) {
        int s = a * g->agg_delta + g->as;
        if (s >= nranks)
            skip = 1;
        ps->out_ix = (gint64)((g->rank + s) % nranks) * g->count + g->offset;
        ps->send_dim = -1;
        ps->recv_dim = 0;
        ps->inp_ix = 0;
    }
    else if (g->phase == 1) {
        int s = a * g->agg_delta + g->as;
        if (s >= nranks)
            skip = 1;
        ps->send_dim = first_bit_set(s, g->nr_pow2);
        s -= 1 << ps->send_dim;
        ps->out_ix = (gint64)((g->rank + nranks + s) % nranks) * g->count + g->offset;
        ps->recv_dim = s ? first_bit_set(s, g->nr_pow2) : -1;
        ps->post_send = (a % pf == pf - 1) || ((a + 1) * g->agg_delta + g->as >= nranks);
        if (s < nranks && ps->send_dim == 0 && skip) {
            /* "Don't forget to receive at least once even if we don't send afterwards" */
            ps->send_dim = -1;
            ps->post_send = 0;
            skip = 0;
        }
    }
    else if (g->phase == 2) {
        int s = (2 * a + 1) * g->scale * g->agg_delta;
        ps->post_send
            = (a % pf == pf - 1) || ((2 * (a + 1) + 1) * g->scale * g->agg_delta >= nranks);
        if (s >= nranks)
            skip = 1;
        ps->send_dim = first_bit_set(s, g->nr_pow2);
        s -= 1 << ps->send_dim;
        ps->out_ix = (gint64)((g->rank + nranks + s) % nranks) * g->count + g->offset;
        ps->recv_dim = s ? first_bit_set(s, g->nr_pow2) : -1;
    }
    g->a++;
    if (g->a >= g->last_a && g->a >= g->parallel_factor) {
        const int p = g->phase;
        if (p == 2)
            g->scale /= 2;
        g->phase = p == 2 ? (g->scale ? 2 : 1) : p == 1 ? (g->as % 2 == 1 ? 0 : 1) : 1;
        if (p == 0 || (p == 1 && g->as % 2 == 0))
            g->as = next_as(g);
        if (p == 0 && g->as == g->agg_delta / 2) {
            g->offset += g->chunk_count;
            if (g->offset >= g->end)
                ps->last = 2;
            else
                reset(g);
        }
        else
            reset_a(g);
    }
    ps->skipped = skip;
}

/* ---- Slots and the schedule ---- */

/* One block in a slot: which block (its element index, the same on sender and receiver) and
 * where it sits in the slot. */
typedef struct {
    gint64 id;     /* elements: inpIx (reduce-scatter) or outIx (all-gather) */
    gint64 at;     /* bytes: into the slot */
    gboolean done; /* written by this rank already (pass 2) */
} SlotBlock;

/* A slot a rank fills on one dimension and posts whole. */
typedef struct {
    GArray *blocks; /* SlotBlock */
    gint64 bytes;   /* bytes */
    gint64 base;    /* bytes: into the sender's scratch (pass 2) */
} Slot;

static void
slot_clear(gpointer data)
{
    Slot *s = data;
    g_clear_pointer(&s->blocks, g_array_unref);
}

/* Every step of one rank on one channel, and the slots it posts on each dimension. */
typedef struct {
    GArray *steps;     /* PatStep, skipped ones left out */
    GArray *slots[32]; /* per dimension: Slot, by slot number */
} RankPlan;

static void
plan_clear(RankPlan *p)
{
    g_clear_pointer(&p->steps, g_array_unref);
    for (int d = 0; d < 32; d++)
        g_clear_pointer(&p->slots[d], g_array_unref);
}

static Slot *
slot_at(RankPlan *p, int d, int k)
{
    if (p->slots[d] == NULL) {
        p->slots[d] = g_array_new(FALSE, TRUE, sizeof(Slot));
        g_array_set_clear_func(p->slots[d], slot_clear);
    }
    if ((guint)k >= p->slots[d]->len)
        g_array_set_size(p->slots[d], k + 1);
    Slot *s = &g_array_index(p->slots[d], Slot, k);
    if (s->blocks == NULL)
        s->blocks = g_array_new(FALSE, FALSE, sizeof(SlotBlock));
    return s;
}

static SlotBlock *
slot_find(const Slot *s, gint64 id)
{
    for (guint i = 0; s->blocks != NULL && i < s->blocks->len; i++) {
        SlotBlock *b = &g_array_index(s->blocks, SlotBlock, i);
        if (b->id == id)
            return b;
    }
    return NULL;
}

/* The block a step moves: the one it takes from a slot or puts in one. */
static gint64
step_id(gboolean rs, const PatStep *ps)
{
    return rs ? ps->inp_ix : ps->out_ix;
}

/* Runs the generator of @rank on [@first, @first + @n) of each rank's block and lays out its
 * slots: each block goes to the slot its step writes (NCCL: the connection's step, plus the
 * step's stepOffset for reduce-scatter), and postSend moves the connection to the next. */
static void
plan_rank(gboolean rs, int rank, int P, gint64 count, gint64 first, gint64 n, gint64 chunk_count,
          gint64 ts, RankPlan *plan)
{
    *plan = (RankPlan){ .steps = g_array_new(FALSE, FALSE, sizeof(PatStep)) };
    PatGen g;
    gen_init(&g, rs, chunk_count * ts, ts, first, first + n, count, chunk_count, rank, P);
    int send_step[32] = { 0 };
    /* A chunk takes about 2 x 2^ceil(log2 P) steps plus a few phases of at most P / 2, each
     * padded to the parallel factor (16); a generator past 8 x (2^ceil(log2 P) + 16) per chunk
     * would not end. */
    const gint64 max_steps = (n / chunk_count + 1) * (8 * ((gint64)g.nr_pow2 + PAT_MAX_PARALLEL));
    gint64 n_steps = 0;
    for (;;) {
        PatStep ps;
        if (rs)
            rs_next(&g, &ps);
        else
            ag_next(&g, &ps);
        g_assert(++n_steps <= max_steps);
        if (!ps.skipped && ps.nelem > 0) {
            g_array_append_val(plan->steps, ps);
            const int d = ps.send_dim;
            if (d >= 0) {
                Slot *s = slot_at(plan, d, send_step[d] + (rs ? ps.step_offset : 0));
                if (slot_find(s, step_id(rs, &ps)) == NULL) {
                    SlotBlock b = { step_id(rs, &ps), s->bytes, FALSE };
                    g_array_append_val(s->blocks, b);
                    s->bytes += ps.nelem * ts;
                }
                if (ps.post_send)
                    send_step[d]++;
            }
        }
        if (ps.last == 2)
            break;
    }
}

static int
mod(int a, int p)
{
    return ((a % p) + p) % p;
}

/* The steps of @rank on channel @ch from its plan; @plans holds every rank's, for the sizes
 * of the slots it receives. @scratch (in, out): the bytes of scratch used so far. */
static gboolean
emit_rank(CsSchedule *s, gboolean rs, int rank, int ch, int P, gint64 ts, RankPlan *plans,
          gint64 *scratch, GError **error)
{
    RankPlan *mine = &plans[rank];
    /* This rank's slots first, then what it receives. */
    for (int d = 0; d < 32; d++)
        for (guint k = 0; mine->slots[d] != NULL && k < mine->slots[d]->len; k++) {
            Slot *sl = &g_array_index(mine->slots[d], Slot, k);
            sl->base = *scratch;
            *scratch += sl->bytes;
        }
    int send_step[32] = { 0 };
    int recv_next[32] = { 0 };       /* the sender's next slot to take on each dimension */
    gint64 recv_base[32][PAT_STEPS]; /* where the last slots taken sit, by slot % PAT_STEPS */
    g_autoptr(GHashTable) written = g_hash_table_new(g_int64_hash, g_int64_equal);
    g_autofree gint64 *keys = g_new(gint64, mine->steps->len);

    for (guint i = 0; i < mine->steps->len; i++) {
        const PatStep *ps = &g_array_index(mine->steps, PatStep, i);
        const gint64 id = step_id(rs, ps);
        const gint64 bytes = ps->nelem * ts;
        gboolean have_in = FALSE;
        gint64 in_at = 0;
        if (ps->recv_dim >= 0) {
            /* The slots of the peer that sends on this dimension, taken in order until one
             * holds the block. */
            const int d = ps->recv_dim;
            const int peer = mod(rs ? rank - (1 << d) : rank + (1 << d), P);
            const GArray *theirs = plans[peer].slots[d];
            for (int k = recv_next[d] - 1; k >= 0 && k >= recv_next[d] - PAT_STEPS && !have_in;
                 k--) {
                const SlotBlock *b = slot_find(&g_array_index(theirs, Slot, k), id);
                if (b != NULL) {
                    have_in = TRUE;
                    in_at = recv_base[d][k % PAT_STEPS] + b->at;
                }
            }
            while (!have_in && theirs != NULL && (guint)recv_next[d] < theirs->len) {
                const int k = recv_next[d]++;
                const Slot *sl = &g_array_index(theirs, Slot, k);
                recv_base[d][k % PAT_STEPS] = *scratch;
                if (sl->bytes > 0)
                    cs_schedule_step(s, rank, ch, CS_STEP_RECV, peer, -1, CS_BUF_SCRATCH, 0,
                                     CS_BUF_SCRATCH, *scratch, sl->bytes, k);
                *scratch += sl->bytes;
                const SlotBlock *b = slot_find(sl, id);
                if (b != NULL) {
                    have_in = TRUE;
                    in_at = recv_base[d][k % PAT_STEPS] + b->at;
                }
            }
            if (!have_in) {
                g_set_error(error, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_INVALID,
                            "pat: rank %d waits on dimension %d for element %" G_GINT64_FORMAT
                            " that rank %d never sends",
                            rank, d, id, peer);
                return FALSE;
            }
        }

        /* Where the step writes: a slot of its send dimension, or this rank's output. */
        CsBuffer dst_buf = CS_BUF_OUTPUT;
        gint64 dst = ps->out_ix * ts;
        gboolean fresh;
        if (ps->send_dim >= 0) {
            const int d = ps->send_dim;
            Slot *sl
                = &g_array_index(mine->slots[d], Slot, send_step[d] + (rs ? ps->step_offset : 0));
            SlotBlock *b = slot_find(sl, id);
            dst_buf = CS_BUF_SCRATCH;
            dst = sl->base + b->at;
            fresh = !b->done;
            b->done = TRUE;
        }
        else {
            keys[i] = ps->out_ix;
            fresh = !g_hash_table_contains(written, &keys[i]);
            if (fresh && rs)
                g_hash_table_add(written, &keys[i]);
        }

        if (rs) {
            /* patReduce: new data is the input's block (+) what came in; data already
             * there takes what came in. */
            if (fresh)
                cs_schedule_step(s, rank, ch, CS_STEP_COPY, -1, -1, CS_BUF_INPUT, ps->inp_ix * ts,
                                 dst_buf, dst, bytes, 0);
            if (have_in)
                cs_schedule_step(s, rank, ch, CS_STEP_REDUCE, -1, -1, CS_BUF_SCRATCH, in_at,
                                 dst_buf, dst, bytes, 0);
        }
        else {
            /* patCopy: the block (received, or this rank's input) goes to the output the
             * first time, and into the slot it is forwarded in. */
            const CsBuffer src_buf = have_in ? CS_BUF_SCRATCH : CS_BUF_INPUT;
            const gint64 src = have_in ? in_at : ps->inp_ix * ts;
            keys[i] = ps->out_ix;
            if (!g_hash_table_contains(written, &keys[i])) {
                g_hash_table_add(written, &keys[i]);
                cs_schedule_step(s, rank, ch, CS_STEP_COPY, -1, -1, src_buf, src, CS_BUF_OUTPUT,
                                 ps->out_ix * ts, bytes, 0);
            }
            if (ps->send_dim >= 0 && fresh)
                cs_schedule_step(s, rank, ch, CS_STEP_COPY, -1, -1, src_buf, src, dst_buf, dst,
                                 bytes, 0);
        }

        if (ps->send_dim >= 0 && ps->post_send) {
            const int d = ps->send_dim;
            const int k = send_step[d]++;
            const Slot *sl = &g_array_index(mine->slots[d], Slot, k);
            const int peer = mod(rs ? rank + (1 << d) : rank - (1 << d), P);
            if (sl->bytes > 0)
                cs_schedule_step(s, rank, ch, CS_STEP_SEND, -1, peer, CS_BUF_SCRATCH, sl->base,
                                 CS_BUF_SCRATCH, 0, sl->bytes, k);
        }
    }
    for (int d = 0; d < 32; d++) {
        if (mine->slots[d] != NULL && (guint)send_step[d] != mine->slots[d]->len) {
            g_set_error(error, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_INVALID,
                        "pat: rank %d fills %u slots on dimension %d but posts %d", rank,
                        mine->slots[d]->len, d, send_step[d]);
            return FALSE;
        }
    }
    return TRUE;
}

/* ---- The algorithm ---- */

/* enqueue.cc: from the slot, halved down to 64 KiB while chunk x channels x 32 (all-gather)
 * or 16 (reduce-scatter) is more than the operation's bytes. */
static gint64
pat_chunk(const CsAlgoArgs *args)
{
    const gint64 ts = cs_dtype_size(args->dtype);
    gint64 chunk = cs_algo_default_chunk(args);
    const gint64 per = args->op == CS_OP_ALL_GATHER ? 32 : 16;
    while (chunk * MAX(args->n_channels, 1) * per > args->size_bytes && chunk > 65536)
        chunk /= 2;
    return MAX(chunk / ts, 1) * ts;
}

static gboolean
pat_supports(const CsTopo *topo, CsOp op, int nranks, const char **why)
{
    if (!cs_algo_supports_ops(PAT_OPS, op, "PAT serves all-gather and reduce-scatter", why))
        return FALSE;
    if (nranks == 1)
        return TRUE;
    /* tuning.cc ncclPatEnable: "PAT only supports 1 GPU per node". Without the machine
     * every rank counts as one node. */
    gboolean one_per_node = topo != NULL && nranks <= cs_topo_n_ranks(topo);
    if (one_per_node) {
        g_autoptr(GHashTable) nodes = g_hash_table_new(NULL, NULL);
        for (int r = 0; r < nranks && one_per_node; r++) {
            gpointer node = GINT_TO_POINTER(cs_topo_rank_node(topo, r) + 1);
            one_per_node = !g_hash_table_contains(nodes, node);
            g_hash_table_add(nodes, node);
        }
    }
    if (!one_per_node) {
        *why = "NCCL runs PAT with one GPU per node only (tuning.cc ncclPatEnable)";
        return FALSE;
    }
    return TRUE;
}

static CsSchedule *
pat_build(const CsAlgoArgs *args, GError **error)
{
    if (args->proto != CS_PROTO_SIMPLE) {
        g_set_error(error, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_UNSUPPORTED,
                    "PAT runs only with the Simple protocol (NCCL 2.30 tuning.cc), not %s",
                    cs_proto_name(args->proto));
        return NULL;
    }
    if (args->op == CS_OP_REDUCE_SCATTER && args->redop == CS_REDOP_AVG) {
        g_set_error(error, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_UNSUPPORTED,
                    "NCCL runs no PAT reduce-scatter with a scaling operator such as avg "
                    "(enqueue.cc)");
        return NULL;
    }
    g_autoptr(CsSchedule) sched = cs_algo_schedule_new(args);
    if (cs_algo_one_rank_done(sched))
        return g_steal_pointer(&sched);
    const int P = args->nranks;
    const gboolean rs = args->op == CS_OP_REDUCE_SCATTER;
    const gint64 ts = cs_dtype_size(args->dtype);
    const gint64 count = cs_schedule_size(sched)->block_bytes / ts;
    const gint64 chunk_count
        = (args->chunk_bytes > 0 ? cs_algo_chunk_bytes(args) : pat_chunk(args)) / ts;
    /* Every channel's plans first: the scratch (each rank's slots, then the slots it takes)
     * must be declared before the first step. */
    const int C = args->n_channels;
    g_autofree RankPlan *plans = g_new0(RankPlan, (gsize)C * P);
    g_autofree gint64 *scratch = g_new0(gint64, P);
    gint64 most = 0;
    for (int c = 0; c < C; c++) {
        gint64 first;
        gint64 n;
        cs_algo_split(count, C, c, &first, &n);
        if (n == 0)
            continue;
        for (int r = 0; r < P; r++)
            plan_rank(rs, r, P, count, first, n, chunk_count, ts, &plans[(gsize)c * P + r]);
        for (int r = 0; r < P; r++) {
            for (int d = 0; d < 31 && (1 << d) < P; d++) {
                const int peer = mod(rs ? r - (1 << d) : r + (1 << d), P);
                const GArray *own = plans[(gsize)c * P + r].slots[d];
                const GArray *in = plans[(gsize)c * P + peer].slots[d];
                for (guint k = 0; own != NULL && k < own->len; k++)
                    scratch[r] += g_array_index(own, Slot, k).bytes;
                for (guint k = 0; in != NULL && k < in->len; k++)
                    scratch[r] += g_array_index(in, Slot, k).bytes;
            }
            most = MAX(most, scratch[r]);
        }
    }
    cs_schedule_set_scratch(sched, most);
    memset(scratch, 0, sizeof(gint64) * (gsize)P);
    gboolean ok = TRUE;
    for (int c = 0; c < C && ok; c++)
        for (int r = 0; r < P && ok && plans[(gsize)c * P + r].steps != NULL; r++)
            ok = emit_rank(sched, rs, r, c, P, ts, &plans[(gsize)c * P], &scratch[r], error);
    for (gsize k = 0; k < (gsize)C * P; k++)
        plan_clear(&plans[k]);
    if (!ok)
        return NULL;
    return g_steal_pointer(&sched);
}

/* Every block reaches every other rank once (all-gather), or every rank's share of a block
 * joins its sum once (reduce-scatter): P - 1 messages' worth of each rank's block, as a ring.
 * A block crosses one edge per set bit of the distance it travels (s in 1..P-1, the dimensions
 * in order), so some block crosses the most set bits of any s < P edges one after another. */
static gboolean
pat_bound(const CsAlgoArgs *args, CsAlgoBound *out)
{
    if ((PAT_OPS & CS_OP_BIT(args->op)) == 0)
        return FALSE;
    const gint64 P = args->nranks;
    const gint64 ts = cs_dtype_size(args->dtype);
    const CsOpSize size = cs_op_size(args->op, args->size_bytes, args->dtype, args->nranks);
    const gint64 bytes = P * (size.block_bytes / ts * ts);
    int depth = 0;
    for (gint64 s = 1; s < P; s++)
        depth = MAX(depth, n_bits_set((int)s));
    out->chain = bytes > 0 ? depth : 0;
    out->bytes_sent = bytes * (P - 1);
    return TRUE;
}

const CsAlgo cs_algo_pat = {
    .name = "pat",
    .summary = "NCCL PAT: aggregated binomial trees over ranks 2^d apart (one GPU per node)",
    .reference = "NCCL 2.30 src/include/collectives.h PatAGAlgorithm/PatRSAlgorithm, "
                 "src/device/prims_simple.h patCopy/patReduce, src/graph/tuning.cc "
                 "ncclPatEnable (NCCL 2.23+)",
    .ops = PAT_OPS,
    .supports = pat_supports,
    .build = pat_build,
    .chunk = pat_chunk,
    .bound = pat_bound,
};
