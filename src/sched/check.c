// SPDX-License-Identifier: MIT
/* The semantic checker: runs a schedule symbolically and proves that it computes its
 * collective. Every element carries (logical index, set of contributing ranks); a reduction
 * must combine equal indices and disjoint rank sets; at the end every output element must hold
 * what the collective's definition says.
 *
 * It works on runs (segments) rather than elements: a buffer is a sorted array of runs, each
 * a stretch of elements whose logical indices are consecutive and whose rank set is shared.
 * Buffers are pre-split at every offset a step of that rank uses, so most writes replace runs
 * in place. Rank sets are reference-counted bitsets (P up to a few thousand): a ring of
 * 4,096 ranks keeps only the sets of the messages in flight alive.
 *
 * Execution follows the IR's rules (schedule.h): one cursor per (rank, channel) walks its
 * steps in order; messages match FIFO per (sender, receiver, channel); a connection holds at
 * most CS_NCCL_STEPS unreceived messages and a sender waits for a free slot, as NCCL's
 * senders do. Channels of one rank run independently, so they must touch disjoint parts of
 * the output and scratch buffers: an overlap would be a race, and is reported as one. */
#include "sched/check.h"

#include <stdlib.h>
#include <string.h>

/* ---- Rank sets ---- */

typedef struct {
    guint refs;
    int count;   /* ranks in the set */
    guint64 w[]; /* bit r: rank r contributes */
} RankSet;

static RankSet *
set_new(int nwords)
{
    RankSet *s = g_malloc0(sizeof(RankSet) + (gsize)nwords * sizeof(guint64));
    s->refs = 1;
    return s;
}

static RankSet *
set_ref(RankSet *s)
{
    if (s != NULL)
        s->refs++;
    return s;
}

static void
set_unref(RankSet *s)
{
    if (s != NULL && --s->refs == 0)
        g_free(s);
}

static gboolean
set_has(const RankSet *s, int r)
{
    return (s->w[r / 64] >> (r % 64)) & 1u;
}

static gboolean
set_equal(const RankSet *a, const RankSet *b, int nwords)
{
    if (a == b)
        return TRUE;
    if (a == NULL || b == NULL || a->count != b->count)
        return FALSE;
    return memcmp(a->w, b->w, (gsize)nwords * sizeof(guint64)) == 0;
}

/* Whether every rank of @a is in @b. */
static gboolean
set_within(const RankSet *a, const RankSet *b, int nwords)
{
    for (int k = 0; k < nwords; k++)
        if ((a->w[k] & ~b->w[k]) != 0)
            return FALSE;
    return TRUE;
}

/* Appends "{0-3, 5}" for the ranks in @a but not in @minus (@minus nullable). */
static void
set_append(GString *out, const RankSet *a, const RankSet *minus, int nranks)
{
    int shown = 0;
    int r = 0;
    g_string_append_c(out, '{');
    while (r < nranks) {
        if (!set_has(a, r) || (minus != NULL && set_has(minus, r))) {
            r++;
            continue;
        }
        int lo = r;
        while (r < nranks && set_has(a, r) && (minus == NULL || !set_has(minus, r)))
            r++;
        if (shown == 8) {
            g_string_append(out, ", ...");
            break;
        }
        g_string_append_printf(out, shown > 0 ? ", %d" : "%d", lo);
        if (r - 1 > lo)
            g_string_append_printf(out, "-%d", r - 1);
        shown++;
    }
    g_string_append_c(out, '}');
}

/* ---- Buffers as runs ---- */

/* A stretch of a rank's buffer: elements [start, next run's start). */
typedef struct {
    gint64 start; /* elements */
    gint64 index; /* logical index of the first element (unused if !set) */
    RankSet *set; /* contributors, NULL if never written (owned ref) */
} Run;

/* What a region holds, or what a message carries. */
typedef struct {
    gint64 len;   /* elements */
    gint64 index; /* logical index of the first element (unused if !set) */
    RankSet *set; /* borrowed in read results, owned in messages */
} Piece;

typedef struct {
    GArray *runs; /* Run, sorted by start, first at 0 (empty if len == 0) */
    gint64 len;   /* elements */
} Buf;

typedef struct {
    gint64 bytes;
    int round;  /* round in which the message travels */
    gsize step; /* global index of the sending step */
    guint n_pieces;
    Piece pieces[];
} Msg;

/* One (sender, receiver, channel) connection: NCCL_STEPS slots. */
typedef struct {
    gint64 key;
    Msg *slot[CS_NCCL_STEPS];
    int head;
    int count;
    int waiting_recv; /* cursor blocked on an empty connection, or -1 */
    int waiting_send; /* cursor blocked on a full connection, or -1 */
} Conn;

typedef enum { STEP_DONE, STEP_BLOCKED, STEP_FAILED } StepResult;

/* "No step" in per-cursor step indices. */
#define NO_STEP G_MAXSIZE

typedef struct {
    const CsSchedule *sched;
    const CsStep *steps; /* rank-major, as sealed */
    gsize *rank_first;   /* nranks + 1 global indices */
    int nranks;
    int nch;
    int ts;        /* bytes per element */
    gboolean data; /* track contents (FALSE: rounds and matching only) */

    Buf *bufs; /* nranks * CS_N_BUFS */
    int nwords;
    RankSet **single; /* {r} */
    RankSet *full;    /* every rank: the canonical instance */

    GHashTable *conns; /* &Conn.key -> Conn */
    gsize *cur_first;  /* cursor (rank * nch + channel) -> first in @cur_steps */
    gsize *cur_steps;  /* global step indices grouped by cursor */
    gsize *cur_pos;
    int *cur_round;          /* round of the cursor's last step */
    gsize *mc_leader;        /* cursor -> its multicast leader (step), NO_STEP if none */
    gsize *sum_step;         /* cursor -> its last reducing receive (step), or NO_STEP */
    gboolean *sum_in_switch; /* cursor -> that receive took an in-switch message */
    GArray *ready;           /* cursors to run */
    int *rounds;             /* per global step, nullable */

    CsCheckReport report;
    GArray *pa;       /* Piece scratch: received or read */
    GArray *pb;       /* Piece scratch: local operand */
    GArray *pc;       /* Piece scratch: reduction results (owned refs) */
    GArray *new_runs; /* Run scratch for writes */
} Exec;

static const char *const buf_names[CS_N_BUFS] = { "input", "output", "scratch" };

static Buf *
exec_buf(Exec *x, int rank, int buf)
{
    return &x->bufs[rank * CS_N_BUFS + buf];
}

/* Index of the run containing element @e (0 <= e < len). */
static guint
run_find(const Buf *b, gint64 e)
{
    const Run *runs = (const Run *)b->runs->data;
    guint lo = 0;
    guint hi = b->runs->len;
    while (hi - lo > 1) {
        guint mid = lo + (hi - lo) / 2;
        if (runs[mid].start <= e)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

static gint64
run_end(const Buf *b, guint i)
{
    return i + 1 < b->runs->len ? g_array_index(b->runs, Run, i + 1).start : b->len;
}

static void
pieces_push(GArray *out, gint64 len, gint64 index, RankSet *set)
{
    if (len == 0)
        return;
    if (out->len > 0) {
        Piece *last = &g_array_index(out, Piece, out->len - 1);
        if (last->set == set && (set == NULL || last->index + last->len == index)) {
            last->len += len;
            return;
        }
    }
    Piece p = { .len = len, .index = index, .set = set };
    g_array_append_val(out, p);
}

/* Fills @out with what [@a, @a + @len) of @b holds (borrowed sets). */
static void
buf_read(const Buf *b, gint64 a, gint64 len, GArray *out)
{
    g_array_set_size(out, 0);
    if (len == 0)
        return;
    gint64 stop = a + len;
    for (guint i = run_find(b, a); a < stop; i++) {
        const Run *run = &g_array_index(b->runs, Run, i);
        gint64 end = MIN(run_end(b, i), stop);
        pieces_push(out, end - a, run->index + (a - run->start), run->set);
        a = end;
    }
}

/* Makes @e a run boundary of @b (0 < e < len). */
static void
buf_split(Buf *b, gint64 e)
{
    guint i = run_find(b, e);
    Run *run = &g_array_index(b->runs, Run, i);
    if (run->start == e)
        return;
    Run tail = { .start = e, .index = run->index + (e - run->start), .set = set_ref(run->set) };
    g_array_insert_val(b->runs, i + 1, tail);
}

/* Writes @pieces at [@a, ...) of @b. Existing boundaries are kept, so a write whose piece
 * boundaries are among them replaces runs in place without moving the array. */
static void
buf_write(Exec *x, Buf *b, gint64 a, const GArray *pieces)
{
    gint64 len = 0;
    for (guint k = 0; k < pieces->len; k++)
        len += g_array_index(pieces, Piece, k).len;
    if (len == 0)
        return;
    gint64 end = a + len;
    if (a > 0)
        buf_split(b, a);
    if (end < b->len)
        buf_split(b, end);
    guint i = run_find(b, a);
    guint j = end < b->len ? run_find(b, end) : b->runs->len;

    /* Merge the old boundaries with the pieces' boundaries. */
    GArray *nr = x->new_runs;
    g_array_set_size(nr, 0);
    guint k = 0;
    gint64 piece_start = a;
    guint oi = i;
    gint64 e = a;
    while (e < end) {
        const Piece *p = &g_array_index(pieces, Piece, k);
        Run run = { .start = e, .index = p->index + (e - piece_start), .set = set_ref(p->set) };
        g_array_append_val(nr, run);
        gint64 piece_end = piece_start + p->len;
        while (oi < j && g_array_index(b->runs, Run, oi).start <= e)
            oi++;
        gint64 next_old = oi < j ? g_array_index(b->runs, Run, oi).start : end;
        e = MIN(piece_end, next_old);
        if (e == piece_end) {
            piece_start = piece_end;
            k++;
        }
    }
    for (guint r = i; r < j; r++)
        set_unref(g_array_index(b->runs, Run, r).set);
    if (nr->len == j - i) {
        memcpy(&g_array_index(b->runs, Run, i), nr->data, nr->len * sizeof(Run));
    }
    else {
        g_array_remove_range(b->runs, i, j - i);
        g_array_insert_vals(b->runs, i, nr->data, nr->len);
    }
}

static void
buf_clear(Buf *b)
{
    if (b->runs == NULL)
        return;
    for (guint i = 0; i < b->runs->len; i++)
        set_unref(g_array_index(b->runs, Run, i).set);
    g_array_unref(b->runs);
    b->runs = NULL;
}

static void
msg_free(Msg *m)
{
    for (guint k = 0; k < m->n_pieces; k++)
        set_unref(m->pieces[k].set);
    g_free(m);
}

static void
conn_free(gpointer data)
{
    Conn *c = data;
    for (int k = 0; k < c->count; k++)
        msg_free(c->slot[(c->head + k) % CS_NCCL_STEPS]);
    g_free(c);
}

/* ---- Set-up ---- */

/* Logical index of element 0 of @rank's input: all-gather and gather concatenate the
 * ranks' inputs, the others index by position. */
static gint64
input_base(const Exec *x, int rank)
{
    CsOp op = cs_schedule_op(x->sched);
    gint64 n = cs_schedule_size(x->sched)->block_bytes / x->ts;
    return op == CS_OP_ALL_GATHER || op == CS_OP_GATHER ? rank * n : 0;
}

static int
cmp_gint64(const void *a, const void *b)
{
    gint64 x = *(const gint64 *)a;
    gint64 y = *(const gint64 *)b;
    return (x > y) - (x < y);
}

/* Builds every buffer, split at each offset its rank's steps use. */
static void
init_buffers(Exec *x)
{
    const CsSchedule *s = x->sched;
    x->bufs = g_new0(Buf, (gsize)x->nranks * CS_N_BUFS);
    g_autoptr(GArray) cuts = g_array_new(FALSE, FALSE, sizeof(gint64));
    for (int r = 0; r < x->nranks; r++) {
        for (int b = 0; b < CS_N_BUFS; b++) {
            Buf *buf = exec_buf(x, r, b);
            buf->len = cs_schedule_buffer_bytes(s, (CsBuffer)b) / x->ts;
            buf->runs = g_array_new(FALSE, FALSE, sizeof(Run));
            if (buf->len == 0)
                continue;
            g_array_set_size(cuts, 0);
            for (gsize i = x->rank_first[r]; i < x->rank_first[r + 1]; i++) {
                const CsStep *st = &x->steps[i];
                gint64 ends[4];
                int n = 0;
                if (cs_step_kind_reads_src(st->kind) && st->src_buf == b) {
                    ends[n++] = st->src_offset / x->ts;
                    ends[n++] = (st->src_offset + st->bytes) / x->ts;
                }
                if (cs_step_kind_writes_dst(st->kind) && st->dst_buf == b) {
                    ends[n++] = st->dst_offset / x->ts;
                    ends[n++] = (st->dst_offset + st->bytes) / x->ts;
                }
                for (int k = 0; k < n; k++)
                    if (ends[k] > 0 && ends[k] < buf->len)
                        g_array_append_val(cuts, ends[k]);
            }
            if (cuts->len > 1)
                qsort(cuts->data, cuts->len, sizeof(gint64), cmp_gint64);
            gboolean input = b == CS_BUF_INPUT;
            gint64 base = input_base(x, r);
            gint64 prev = -1;
            for (guint k = 0; k <= cuts->len; k++) {
                gint64 start = k == 0 ? 0 : g_array_index(cuts, gint64, k - 1);
                if (start == prev)
                    continue;
                prev = start;
                Run run = {
                    .start = start,
                    .index = input ? base + start : 0,
                    .set = input ? set_ref(x->single[r]) : NULL,
                };
                g_array_append_val(buf->runs, run);
            }
        }
    }
}

static void
exec_init(Exec *x, const CsSchedule *sched, gboolean data, int *rounds)
{
    memset(x, 0, sizeof *x);
    x->sched = sched;
    x->nranks = cs_schedule_n_ranks(sched);
    x->nch = cs_schedule_n_channels(sched);
    x->ts = cs_dtype_size(cs_schedule_dtype(sched));
    x->data = data;
    x->rounds = rounds;
    int P = x->nranks;

    x->rank_first = g_new(gsize, P + 1);
    gsize n0 = 0;
    x->steps = P > 0 ? cs_schedule_steps(sched, 0, &n0) : NULL;
    x->rank_first[0] = 0;
    for (int r = 0; r < P; r++) {
        gsize n = 0;
        cs_schedule_steps(sched, r, &n);
        x->rank_first[r + 1] = x->rank_first[r] + n;
    }
    gsize total = x->rank_first[P];

    /* Cursors: step indices grouped by (rank, channel), program order kept. */
    gsize ncur = (gsize)P * x->nch;
    x->cur_first = g_new0(gsize, ncur + 1);
    for (int r = 0; r < P; r++)
        for (gsize i = x->rank_first[r]; i < x->rank_first[r + 1]; i++)
            x->cur_first[(gsize)r * x->nch + x->steps[i].channel + 1]++;
    for (gsize u = 0; u < ncur; u++)
        x->cur_first[u + 1] += x->cur_first[u];
    x->cur_pos = g_new(gsize, ncur);
    memcpy(x->cur_pos, x->cur_first, ncur * sizeof(gsize));
    x->cur_steps = g_new(gsize, MAX(total, 1));
    for (int r = 0; r < P; r++)
        for (gsize i = x->rank_first[r]; i < x->rank_first[r + 1]; i++)
            x->cur_steps[x->cur_pos[(gsize)r * x->nch + x->steps[i].channel]++] = i;
    memcpy(x->cur_pos, x->cur_first, ncur * sizeof(gsize));
    x->cur_round = g_new0(int, ncur);
    x->mc_leader = g_new(gsize, ncur);
    x->sum_step = g_new(gsize, ncur);
    x->sum_in_switch = g_new0(gboolean, ncur);
    for (gsize u = 0; u < ncur; u++)
        x->mc_leader[u] = x->sum_step[u] = NO_STEP;
    x->ready = g_array_new(FALSE, FALSE, sizeof(int));
    for (gsize u = ncur; u-- > 0;)
        if (x->cur_first[u + 1] > x->cur_first[u]) {
            int cu = (int)u;
            g_array_append_val(x->ready, cu);
        }

    x->conns = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, conn_free);
    x->pa = g_array_new(FALSE, FALSE, sizeof(Piece));
    x->pb = g_array_new(FALSE, FALSE, sizeof(Piece));
    x->pc = g_array_new(FALSE, FALSE, sizeof(Piece));
    x->new_runs = g_array_new(FALSE, FALSE, sizeof(Run));

    if (data) {
        x->nwords = (P + 63) / 64;
        x->single = g_new(RankSet *, P);
        for (int r = 0; r < P; r++) {
            x->single[r] = set_new(x->nwords);
            x->single[r]->w[r / 64] |= (guint64)1 << (r % 64);
            x->single[r]->count = 1;
        }
        x->full = set_new(x->nwords);
        for (int r = 0; r < P; r++)
            x->full->w[r / 64] |= (guint64)1 << (r % 64);
        x->full->count = P;
        init_buffers(x);
    }
}

static void
exec_clear(Exec *x)
{
    g_hash_table_destroy(x->conns);
    if (x->bufs != NULL)
        for (int i = 0; i < x->nranks * CS_N_BUFS; i++)
            buf_clear(&x->bufs[i]);
    g_free(x->bufs);
    if (x->single != NULL)
        for (int r = 0; r < x->nranks; r++)
            set_unref(x->single[r]);
    g_free(x->single);
    set_unref(x->full);
    g_free(x->rank_first);
    g_free(x->cur_first);
    g_free(x->cur_steps);
    g_free(x->cur_pos);
    g_free(x->cur_round);
    g_free(x->mc_leader);
    g_free(x->sum_step);
    g_free(x->sum_in_switch);
    g_array_unref(x->ready);
    g_array_unref(x->pa);
    g_array_unref(x->pb);
    g_array_unref(x->pc);
    g_array_unref(x->new_runs);
}

/* ---- Messages in error reports ---- */

static int
step_rank(const Exec *x, gsize gi)
{
    int lo = 0;
    int hi = x->nranks;
    while (hi - lo > 1) {
        int mid = lo + (hi - lo) / 2;
        if (x->rank_first[mid] <= gi)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* "rank 3 step 17 (recv_reduce from rank 2, channel 0, chunk 4)" */
static char *
step_describe(const Exec *x, gsize gi)
{
    const CsStep *st = &x->steps[gi];
    int r = step_rank(x, gi);
    GString *s = g_string_new(NULL);
    g_string_append_printf(s, "rank %d step %" G_GSIZE_FORMAT " (%s", r, gi - x->rank_first[r],
                           cs_step_kind_name(st->kind));
    if (cs_step_kind_recvs(st->kind))
        g_string_append_printf(s, " from rank %d", st->recv_peer);
    if (cs_step_kind_sends(st->kind))
        g_string_append_printf(s, " to rank %d", st->send_peer);
    g_string_append_printf(s, ", channel %d, chunk %d)", st->channel, st->chunk);
    return g_string_free(s, FALSE);
}

static void
piece_append(GString *out, const Exec *x, gint64 index, const RankSet *set)
{
    if (set == NULL) {
        g_string_append(out, "nothing (never written)");
        return;
    }
    g_string_append_printf(out, "element %" G_GINT64_FORMAT " of ranks ", index);
    if (set->count == x->nranks)
        g_string_append_printf(out, "{all %d}", x->nranks);
    else
        set_append(out, set, NULL, x->nranks);
}

/* ---- Flags ---- */

static gboolean
reduces(CsStepKind kind)
{
    return kind == CS_STEP_RECV_REDUCE || kind == CS_STEP_RECV_REDUCE_SEND
           || kind == CS_STEP_RECV_REDUCE_COPY_SEND;
}

static gboolean
in_switch(guint8 flags)
{
    return (flags & (CS_STEP_FLAG_SHARED_LAST_HOP | CS_STEP_FLAG_REDUCE_SELF)) != 0;
}

/* Flags only change what the engine charges (schedule.h), but each one claims something
 * about the data that must hold for that charge to be right: a multicast member sends the
 * same bytes as its channel's multicast leader (the latest MULTICAST_SELF or FROM_SWITCH send, its
 * region not written since on that channel); a message combined in the switch is reduced by its
 * receiver; a reduction member adds to the sum that the receiver's latest reducing receive
 * on that channel made of the group's earlier messages; a message sent from the switch
 * (FROM_SWITCH) is the sum the sender's latest reducing receive on that channel made in the
 * switch, that receive's region. @msg is the message step @gi of cursor @u takes
 * (nullable). */
static gboolean
flags_consistent(Exec *x, int u, gsize gi, const Msg *msg, GError **error)
{
    const CsStep *st = &x->steps[gi];
    const char *problem = NULL;
    gsize culprit = gi;

    if ((st->flags & CS_STEP_FLAG_SHARED_FIRST_HOP) != 0) {
        const CsStep *lead = x->mc_leader[u] != NO_STEP ? &x->steps[x->mc_leader[u]] : NULL;
        if (lead == NULL || lead->src_buf != st->src_buf || lead->src_offset != st->src_offset
            || lead->bytes != st->bytes)
            problem = "is a multicast member (shared first hop), but its channel's multicast "
                      "leader does not send the same source region";
    }
    if (problem == NULL && (st->flags & CS_STEP_FLAG_FROM_SWITCH) != 0) {
        const CsStep *sum = x->sum_step[u] != NO_STEP ? &x->steps[x->sum_step[u]] : NULL;
        if (sum == NULL || !x->sum_in_switch[u] || !cs_step_kind_writes_dst(sum->kind)
            || sum->dst_buf != st->src_buf || sum->dst_offset != st->src_offset
            || sum->bytes != st->bytes)
            problem = "is sent from the switch, but it is not the sum its sender's latest "
                      "in-switch reduction left there";
    }
    if (problem == NULL && msg != NULL) {
        guint8 sent = x->steps[msg->step].flags;
        const CsStep *sum = x->sum_step[u] != NO_STEP ? &x->steps[x->sum_step[u]] : NULL;
        culprit = msg->step;
        if (in_switch(sent) && !reduces(st->kind))
            problem = "sends a message combined in the switch, but its receiver does not "
                      "reduce it";
        else if ((sent & CS_STEP_FLAG_SHARED_LAST_HOP) != 0
                 && (sum == NULL || !x->sum_in_switch[u] || !cs_step_kind_writes_dst(sum->kind)
                     || sum->dst_buf != st->src_buf || sum->dst_offset != st->src_offset
                     || sum->bytes != st->bytes))
            problem = "is an in-switch reduction member (shared last hop), but its receiver "
                      "does not add it to the sum of the group's earlier messages";
    }
    if (problem == NULL)
        return TRUE;
    g_autofree char *what = step_describe(x, culprit);
    g_set_error(error, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_INVALID, "flags: %s %s", what, problem);
    return FALSE;
}

/* After step @gi of cursor @u ran (taking @msg, nullable): its multicast leader and its
 * running in-switch sum. */
static void
flags_track(Exec *x, int u, gsize gi, const Msg *msg)
{
    const CsStep *st = &x->steps[gi];

    if ((st->flags & (CS_STEP_FLAG_MULTICAST_SELF | CS_STEP_FLAG_FROM_SWITCH)) != 0) {
        x->mc_leader[u] = gi;
    }
    else if (x->mc_leader[u] != NO_STEP && cs_step_kind_writes_dst(st->kind)) {
        const CsStep *lead = &x->steps[x->mc_leader[u]];
        if (st->dst_buf == lead->src_buf && st->dst_offset < lead->src_offset + lead->bytes
            && lead->src_offset < st->dst_offset + st->bytes)
            x->mc_leader[u] = NO_STEP;
    }
    if (msg != NULL && reduces(st->kind)) {
        x->sum_step[u] = gi;
        x->sum_in_switch[u] = in_switch(x->steps[msg->step].flags);
    }
}

/* ---- Execution ---- */

static gint64
conn_key(const Exec *x, int from, int to, int channel)
{
    return ((gint64)from * x->nranks + to) * x->nch + channel;
}

static Conn *
conn_get(Exec *x, int from, int to, int channel, gboolean create)
{
    gint64 key = conn_key(x, from, to, channel);
    Conn *c = g_hash_table_lookup(x->conns, &key);
    if (c == NULL && create) {
        c = g_new0(Conn, 1);
        c->key = key;
        c->waiting_recv = -1;
        c->waiting_send = -1;
        g_hash_table_insert(x->conns, &c->key, c);
    }
    return c;
}

static void
wake(Exec *x, int *waiting)
{
    if (*waiting >= 0) {
        g_array_append_val(x->ready, *waiting);
        *waiting = -1;
    }
}

/* Union of two disjoint sets; full results share the canonical instance. */
static RankSet *
set_union(Exec *x, const RankSet *a, const RankSet *b)
{
    if (a->count + b->count == x->nranks)
        return set_ref(x->full);
    RankSet *u = set_new(x->nwords);
    for (int k = 0; k < x->nwords; k++)
        u->w[k] = a->w[k] | b->w[k];
    u->count = a->count + b->count;
    return u;
}

static gboolean
sets_disjoint(const Exec *x, const RankSet *a, const RankSet *b, int *common)
{
    for (int k = 0; k < x->nwords; k++) {
        guint64 both = a->w[k] & b->w[k];
        if (both != 0) {
            int bit = 0;
            while (((both >> bit) & 1u) == 0)
                bit++;
            *common = k * 64 + bit;
            return FALSE;
        }
    }
    return TRUE;
}

/* @out (owned refs) = @a (+) local @b, element by element. @b lies at [@b_elem, ...) of
 * @b_buf and @a_name says what @a is ("received", "held"), for messages. */
static gboolean
combine(Exec *x, gsize gi, const char *a_name, const GArray *a, const GArray *b, int b_buf,
        gint64 b_elem, GArray *out, GError **error)
{
    g_array_set_size(out, 0);
    guint ia = 0;
    guint ib = 0;
    gint64 da = 0;
    gint64 db = 0;
    gint64 pos = 0;
    const RankSet *last_a = NULL;
    const RankSet *last_b = NULL;
    RankSet *last_u = NULL;
    while (ia < a->len && ib < b->len) {
        const Piece *pa = &g_array_index(a, Piece, ia);
        const Piece *pb = &g_array_index(b, Piece, ib);
        gint64 len = MIN(pa->len - da, pb->len - db);
        gint64 index_a = pa->index + da;
        gint64 index_b = pb->index + db;
        const char *problem = NULL;
        int twice = -1;
        if (pa->set == NULL || pb->set == NULL)
            problem = "reduces data that was never written";
        else if (index_a != index_b)
            problem = "reduces different elements together";
        else if (!sets_disjoint(x, pa->set, pb->set, &twice))
            problem = "counts a contribution twice";
        if (problem != NULL) {
            g_autofree char *what = step_describe(x, gi);
            GString *m = g_string_new(NULL);
            g_string_append_printf(m, "%s %s: at %s byte %" G_GINT64_FORMAT ", %s ", what, problem,
                                   buf_names[b_buf], (b_elem + pos) * x->ts, a_name);
            piece_append(m, x, index_a, pa->set);
            g_string_append(m, " with local ");
            piece_append(m, x, index_b, pb->set);
            if (twice >= 0)
                g_string_append_printf(m, " (rank %d in both)", twice);
            g_set_error_literal(error, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_WRONG_RESULT, m->str);
            g_string_free(m, TRUE);
            for (guint k = 0; k < out->len; k++)
                set_unref(g_array_index(out, Piece, k).set);
            g_array_set_size(out, 0);
            return FALSE;
        }
        /* Consecutive pieces combining the same two sets share one union. */
        gboolean fresh = pa->set != last_a || pb->set != last_b;
        RankSet *u = fresh ? set_union(x, pa->set, pb->set) : last_u;
        guint before = out->len;
        pieces_push(out, len, index_a, u);
        gboolean appended = out->len > before;
        if (fresh && !appended)
            set_unref(u); /* merged into a piece that already holds this set */
        else if (!fresh && appended)
            set_ref(u);
        last_a = pa->set;
        last_b = pb->set;
        last_u = u;
        pos += len;
        da += len;
        db += len;
        if (da == pa->len) {
            ia++;
            da = 0;
        }
        if (db == pb->len) {
            ib++;
            db = 0;
        }
    }
    return TRUE;
}

static void
unref_pieces(GArray *pieces)
{
    for (guint k = 0; k < pieces->len; k++)
        set_unref(g_array_index(pieces, Piece, k).set);
    g_array_set_size(pieces, 0);
}

static Msg *
msg_new(const GArray *pieces, gint64 bytes, int round, gsize gi)
{
    guint n = pieces != NULL ? pieces->len : 0;
    Msg *m = g_malloc(sizeof(Msg) + n * sizeof(Piece));
    m->bytes = bytes;
    m->round = round;
    m->step = gi;
    m->n_pieces = n;
    for (guint k = 0; k < n; k++) {
        m->pieces[k] = g_array_index(pieces, Piece, k);
        set_ref(m->pieces[k].set);
    }
    return m;
}

/* Runs step @gi of cursor @u (rank @r), or registers @u as waiting. */
static StepResult
exec_step(Exec *x, int u, int r, gsize gi, GError **error)
{
    const CsStep *st = &x->steps[gi];
    CsStepKind kind = st->kind;
    gboolean recvs = cs_step_kind_recvs(kind);
    gboolean sends = cs_step_kind_sends(kind);
    Conn *in = NULL;
    Conn *out = NULL;

    if (recvs) {
        in = conn_get(x, st->recv_peer, r, st->channel, TRUE);
        if (in->count == 0) {
            in->waiting_recv = u;
            return STEP_BLOCKED;
        }
    }
    if (sends) {
        out = conn_get(x, r, st->send_peer, st->channel, TRUE);
        if (out->count == CS_NCCL_STEPS) {
            out->waiting_send = u;
            return STEP_BLOCKED;
        }
    }
    if (x->data && cs_step_kind_writes_dst(kind) && st->dst_buf == CS_BUF_INPUT) {
        g_autofree char *what = step_describe(x, gi);
        g_set_error(error, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_INVALID,
                    "%s writes the input buffer, which a collective must leave unchanged", what);
        return STEP_FAILED;
    }

    int round = x->cur_round[u];
    Msg *msg = NULL;
    if (recvs) {
        msg = in->slot[in->head];
        in->head = (in->head + 1) % CS_NCCL_STEPS;
        in->count--;
        wake(x, &in->waiting_send);
        if (msg->bytes != st->bytes) {
            g_autofree char *what = step_describe(x, gi);
            g_autofree char *sender = step_describe(x, msg->step);
            g_set_error(error, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_INVALID,
                        "size mismatch: %s expects %" G_GINT64_FORMAT " bytes, but the "
                        "matching message from %s carries %" G_GINT64_FORMAT " bytes",
                        what, st->bytes, sender, msg->bytes);
            msg_free(msg);
            return STEP_FAILED;
        }
        round = MAX(round, msg->round);
    }
    if (x->data) {
        if (!flags_consistent(x, u, gi, msg, error)) {
            if (msg != NULL)
                msg_free(msg);
            return STEP_FAILED;
        }
        flags_track(x, u, gi, msg);
    }
    if (sends)
        round++;
    x->cur_round[u] = round;
    x->report.n_rounds = MAX(x->report.n_rounds, round);
    if (x->rounds != NULL)
        x->rounds[gi] = round;

    /* What the step produces: a piece list to store at dst and/or to send. */
    const GArray *result = NULL;
    gboolean ok = TRUE;
    if (x->data) {
        gint64 len = st->bytes / x->ts;
        gint64 src_elem = st->src_offset / x->ts;
        gint64 dst_elem = st->dst_offset / x->ts;
        GArray *received = x->pa;
        g_array_set_size(received, 0);
        if (msg != NULL)
            g_array_append_vals(received, msg->pieces, msg->n_pieces);
        switch (kind) {
        case CS_STEP_SEND:
        case CS_STEP_COPY:
            buf_read(exec_buf(x, r, st->src_buf), src_elem, len, x->pb);
            result = x->pb;
            break;
        case CS_STEP_RECV:
        case CS_STEP_RECV_COPY_SEND:
            result = received;
            break;
        case CS_STEP_RECV_REDUCE:
        case CS_STEP_RECV_REDUCE_SEND:
        case CS_STEP_RECV_REDUCE_COPY_SEND:
            buf_read(exec_buf(x, r, st->src_buf), src_elem, len, x->pb);
            ok = combine(x, gi, "received", received, x->pb, st->src_buf, src_elem, x->pc, error);
            result = x->pc;
            break;
        case CS_STEP_REDUCE:
            /* dst = dst (+) src: the "received" operand is the current dst. */
            buf_read(exec_buf(x, r, st->dst_buf), dst_elem, len, received);
            buf_read(exec_buf(x, r, st->src_buf), src_elem, len, x->pb);
            ok = combine(x, gi, "held", received, x->pb, st->src_buf, src_elem, x->pc, error);
            result = x->pc;
            break;
        case CS_N_STEP_KINDS:
            g_assert_not_reached();
        }
        if (ok && cs_step_kind_writes_dst(kind))
            buf_write(x, exec_buf(x, r, st->dst_buf), dst_elem, result);
    }
    if (ok && sends) {
        Msg *m = msg_new(result, st->bytes, round, gi);
        out->slot[(out->head + out->count) % CS_NCCL_STEPS] = m;
        out->count++;
        wake(x, &out->waiting_recv);
        x->report.n_messages++;
        x->report.bytes_sent += st->bytes;
    }
    if (result == x->pc)
        unref_pieces(x->pc);
    if (msg != NULL)
        msg_free(msg);
    if (in != NULL && in->count == 0 && in->waiting_recv < 0 && in->waiting_send < 0)
        g_hash_table_remove(x->conns, &in->key);
    return ok ? STEP_DONE : STEP_FAILED;
}

static int
cmp_conn(const void *a, const void *b)
{
    const Conn *x = *(Conn *const *)a;
    const Conn *y = *(Conn *const *)b;
    return (x->key > y->key) - (x->key < y->key);
}

/* Runs every cursor to its end; FALSE on a failed step, a deadlock or unreceived messages. */
static gboolean
exec_run(Exec *x, GError **error)
{
    while (x->ready->len > 0) {
        int u = g_array_index(x->ready, int, x->ready->len - 1);
        g_array_set_size(x->ready, x->ready->len - 1);
        int r = u / x->nch;
        while (x->cur_pos[u] < x->cur_first[u + 1]) {
            StepResult res = exec_step(x, u, r, x->cur_steps[x->cur_pos[u]], error);
            if (res == STEP_FAILED)
                return FALSE;
            if (res == STEP_BLOCKED)
                break;
            x->cur_pos[u]++;
        }
    }

    gsize ncur = (gsize)x->nranks * x->nch;
    int stuck = 0;
    gsize first_stuck = 0;
    for (gsize u = 0; u < ncur; u++)
        if (x->cur_pos[u] < x->cur_first[u + 1]) {
            if (stuck == 0)
                first_stuck = u;
            stuck++;
        }
    if (stuck > 0) {
        gsize gi = x->cur_steps[x->cur_pos[first_stuck]];
        const CsStep *st = &x->steps[gi];
        int r = (int)(first_stuck / x->nch);
        g_autofree char *what = step_describe(x, gi);
        Conn *in = cs_step_kind_recvs(st->kind) ? conn_get(x, st->recv_peer, r, st->channel, FALSE)
                                                : NULL;
        if (cs_step_kind_recvs(st->kind) && (in == NULL || in->count == 0))
            g_set_error(error, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_DEADLOCK,
                        "deadlock: %s waits for a message that rank %d never sends on "
                        "channel %d (%d of %" G_GSIZE_FORMAT " rank-channel programs stuck)",
                        what, st->recv_peer, st->channel, stuck, ncur);
        else
            g_set_error(error, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_DEADLOCK,
                        "deadlock: %s waits for a free slot: rank %d never receives the %d "
                        "messages ahead of it (%d of %" G_GSIZE_FORMAT " rank-channel "
                        "programs stuck)",
                        what, st->send_peer, CS_NCCL_STEPS, stuck, ncur);
        return FALSE;
    }

    /* Messages nobody received: report the lowest connection, for stable messages. */
    GPtrArray *left = g_ptr_array_new();
    GHashTableIter it;
    gpointer value;
    g_hash_table_iter_init(&it, x->conns);
    while (g_hash_table_iter_next(&it, NULL, &value))
        if (((Conn *)value)->count > 0)
            g_ptr_array_add(left, value);
    gboolean ok = left->len == 0;
    if (!ok) {
        qsort(left->pdata, left->len, sizeof(gpointer), cmp_conn);
        const Conn *c = g_ptr_array_index(left, 0);
        const Msg *m = c->slot[c->head];
        g_autofree char *what = step_describe(x, m->step);
        const CsStep *st = &x->steps[m->step];
        g_set_error(error, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_DEADLOCK,
                    "unmatched message: %s sends %" G_GINT64_FORMAT " bytes that rank %d "
                    "never receives on channel %d (%u connection(s) left with messages)",
                    what, m->bytes, st->send_peer, st->channel, left->len);
    }
    g_ptr_array_unref(left);
    return ok;
}

/* ---- Races between channels ---- */

typedef struct {
    gint64 start; /* elements */
    gint64 end;
    int channel;
    gsize step;
} Access;

static int
cmp_access(const void *a, const void *b)
{
    const Access *x = a;
    const Access *y = b;
    return (x->start > y->start) - (x->start < y->start);
}

/* Channels of a rank run independently: two channels touching the same output or scratch
 * element (one of them writing it, or both, since output and scratch are only read after
 * being written) would make the result depend on timing. */
static gboolean
check_channels(Exec *x, GError **error)
{
    if (x->nch == 1)
        return TRUE;
    g_autoptr(GArray) acc = g_array_new(FALSE, FALSE, sizeof(Access));
    for (int r = 0; r < x->nranks; r++) {
        for (int b = CS_BUF_OUTPUT; b < CS_N_BUFS; b++) {
            g_array_set_size(acc, 0);
            for (gsize i = x->rank_first[r]; i < x->rank_first[r + 1]; i++) {
                const CsStep *st = &x->steps[i];
                if (st->bytes == 0)
                    continue;
                if (cs_step_kind_reads_src(st->kind) && st->src_buf == b) {
                    Access a = { st->src_offset, st->src_offset + st->bytes, st->channel, i };
                    g_array_append_val(acc, a);
                }
                if (cs_step_kind_writes_dst(st->kind) && st->dst_buf == b) {
                    Access a = { st->dst_offset, st->dst_offset + st->bytes, st->channel, i };
                    g_array_append_val(acc, a);
                }
            }
            if (acc->len > 1)
                qsort(acc->data, acc->len, sizeof(Access), cmp_access);
            /* Intervals seen so far overlap only within one channel, so the one reaching
             * furthest stands for all of them. */
            const Access *reach = NULL;
            for (guint k = 0; k < acc->len; k++) {
                const Access *a = &g_array_index(acc, Access, k);
                if (reach != NULL && a->start < reach->end && a->channel != reach->channel) {
                    g_autofree char *s1 = step_describe(x, reach->step);
                    g_autofree char *s2 = step_describe(x, a->step);
                    g_set_error(error, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_INVALID,
                                "race between channels: %s and %s both touch %s bytes "
                                "[%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "), and channels "
                                "run independently",
                                s1, s2, buf_names[b], a->start, MIN(a->end, reach->end));
                    return FALSE;
                }
                if (reach == NULL || a->end > reach->end)
                    reach = a;
            }
        }
    }
    return TRUE;
}

/* ---- The collectives' definitions ---- */

/* Which ranks' outputs the definition constrains. */
static gboolean
output_defined(CsOp op, int rank, int root)
{
    return (op != CS_OP_REDUCE && op != CS_OP_GATHER) || rank == root;
}

/* What element @e of @rank's output must hold: logical index and rank set. */
static void
expected_at(const Exec *x, int rank, gint64 e, gint64 n, gint64 *index, const RankSet **set)
{
    CsOp op = cs_schedule_op(x->sched);
    int root = cs_schedule_root(x->sched);
    switch (op) {
    case CS_OP_ALL_REDUCE:
    case CS_OP_REDUCE:
        *index = e;
        *set = x->full;
        return;
    case CS_OP_BROADCAST:
        *index = e;
        *set = x->single[root];
        return;
    case CS_OP_ALL_GATHER:
    case CS_OP_GATHER:
        *index = e;
        *set = x->single[e / n];
        return;
    case CS_OP_REDUCE_SCATTER:
        *index = rank * n + e;
        *set = x->full;
        return;
    case CS_OP_SCATTER:
        *index = rank * n + e;
        *set = x->single[root];
        return;
    case CS_OP_ALL_TO_ALL:
        *index = rank * n + e % n;
        *set = x->single[e / n];
        return;
    case CS_OP_SEND_RECV:
        /* nccl-tests sendrecv.cu: rank r's output is rank r - 1's input. */
        *index = e;
        *set = x->single[(rank - 1 + x->nranks) % x->nranks];
        return;
    case CS_N_OPS:
        break;
    }
    g_assert_not_reached();
}

static gboolean
check_outputs(Exec *x, GError **error)
{
    CsOp op = cs_schedule_op(x->sched);
    int root = cs_schedule_root(x->sched);
    gint64 n = cs_schedule_size(x->sched)->block_bytes / x->ts;
    /* Definitions that change from block to block: split runs at block boundaries. */
    gboolean blocked = op == CS_OP_ALL_GATHER || op == CS_OP_GATHER || op == CS_OP_ALL_TO_ALL;
    for (int r = 0; r < x->nranks; r++) {
        if (!output_defined(op, r, root))
            continue;
        const Buf *b = exec_buf(x, r, CS_BUF_OUTPUT);
        for (guint i = 0; i < b->runs->len; i++) {
            const Run *run = &g_array_index(b->runs, Run, i);
            gint64 end = run_end(b, i);
            for (gint64 e = run->start; e < end;) {
                gint64 stop = blocked ? MIN(end, (e / n + 1) * n) : end;
                gint64 want_index;
                const RankSet *want;
                expected_at(x, r, e, n, &want_index, &want);
                gint64 got_index = run->index + (e - run->start);
                if (run->set == NULL || got_index != want_index
                    || !set_equal(run->set, want, x->nwords)) {
                    GString *m = g_string_new(NULL);
                    g_string_append_printf(
                        m, "wrong result: rank %d output byte %" G_GINT64_FORMAT " holds ", r,
                        e * x->ts);
                    piece_append(m, x, got_index, run->set);
                    g_string_append(m, ", expected ");
                    piece_append(m, x, want_index, want);
                    if (run->set != NULL && got_index == want_index) {
                        if (!set_within(want, run->set, x->nwords)) {
                            g_string_append(m, ": missing ");
                            set_append(m, want, run->set, x->nranks);
                        }
                        if (!set_within(run->set, want, x->nwords)) {
                            g_string_append(m, ": extra ");
                            set_append(m, run->set, want, x->nranks);
                        }
                    }
                    g_set_error_literal(error, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_WRONG_RESULT,
                                        m->str);
                    g_string_free(m, TRUE);
                    return FALSE;
                }
                e = stop;
            }
        }
    }
    return TRUE;
}

/* ---- API ---- */

/**
 * cs_check_schedule:
 * Runs @sched (sealed) symbolically and proves it computes its collective: every output
 * element that the definition constrains holds the right logical element with every
 * contribution exactly once. Also rejects deadlocks (a receive never matched, or a sender
 * waiting forever for one of the CS_NCCL_STEPS slots), messages never received, size
 * mismatches between a send and its receive, writes to the input buffer, channels of one
 * rank touching the same output or scratch bytes, and step flags whose claims do not hold
 * (CsStepFlags: flags change costs only, so the data is proved as without them). @report
 * (nullable) gets rounds and traffic.
 * Returns: TRUE if correct; FALSE with CS_SCHEDULE_ERROR set, naming the first rank, step,
 * buffer and byte offset that is wrong.
 */
gboolean
cs_check_schedule(const CsSchedule *sched, CsCheckReport *report, GError **error)
{
    g_return_val_if_fail(sched != NULL, FALSE);
    g_return_val_if_fail(error == NULL || *error == NULL, FALSE);
    if (cs_schedule_period(sched) < cs_schedule_n_ranks(sched)) {
        g_set_error(error, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_INVALID,
                    "a schedule of one period (%d of %d ranks) holds too little to check: build "
                    "it whole",
                    cs_schedule_period(sched), cs_schedule_n_ranks(sched));
        return FALSE;
    }
    Exec x;
    exec_init(&x, sched, TRUE, NULL);
    gboolean ok = check_channels(&x, error) && exec_run(&x, error) && check_outputs(&x, error);
    if (ok && report != NULL)
        *report = x.report;
    exec_clear(&x);
    return ok;
}

/**
 * cs_check_rounds:
 * ASAP rounds of every step, without tracking data. A step that sends travels one round
 * after everything it depends on (its channel predecessor and, if it receives too, the
 * matching send); a receive completes in the round of the message it takes; local steps
 * keep their predecessor's round. Slot waits are not dependencies here.
 * Returns: (transfer full) (nullable): cs_schedule_n_steps() rounds, rank-major in program
 * order, or NULL with @error set on deadlock or size mismatch.
 */
int *
cs_check_rounds(const CsSchedule *sched, GError **error)
{
    g_return_val_if_fail(sched != NULL, NULL);
    g_return_val_if_fail(cs_schedule_period(sched) == cs_schedule_n_ranks(sched), NULL);
    gsize n = cs_schedule_n_steps(sched);
    int *rounds = g_new0(int, MAX(n, 1));
    Exec x;
    exec_init(&x, sched, FALSE, rounds);
    gboolean ok = exec_run(&x, error);
    exec_clear(&x);
    if (!ok)
        g_clear_pointer(&rounds, g_free);
    return rounds;
}
