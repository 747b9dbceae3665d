// SPDX-License-Identifier: MIT
/* Tests of the discrete-event engine: the event heap, the textbook closed forms under both
 * network models, contention, slot flow control, launch semantics, the critical-path split,
 * the observer and the errors. Schedules are built by hand with the schedule.h API so that
 * each expectation can be derived in a comment. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "engine/engine-private.h"
#include "engine/engine.h"
#include "models/alpha_beta.h"
#include "models/netmodel.h"
#include "sched/schedule.h"
#include "test-util.h"
#include "topo/topo.h"

/* ---- Helpers ---- */

#define PS_PER_US 1000000

static CsTopo *
textbook_crossbar(int nranks)
{
    return cs_test_crossbar(nranks, "0 us", "0 us", NULL);
}

static CsResult *
run(const CsSchedule *sched, const CsTopo *topo, const char *model, gboolean textbook)
{
    g_autoptr(GError) error = NULL;
    CsEngineOptions opt = { .net_model = model, .textbook = textbook };
    CsResult *res = cs_engine_run(sched, topo, &opt, &error);

    g_assert_no_error(error);
    g_assert_nonnull(res);
    return res;
}

static void
assert_rel(double got, double want)
{
    double err = want == 0.0 ? fabs(got) : fabs(got - want) / want;

    if (err >= 1e-9)
        g_error("got %.12g, want %.12g (relative error %.3g)", got, want, err);
}

static const char *const models[] = { "reservation", "maxmin" };

/* ---- Hand-built textbook schedules (one channel, one chunk) ---- */

/* Ring all-reduce on @p ranks of @n bytes (n divisible by p): P-1 reduce-scatter steps,
 * then P-1 all-gather steps, each moving one block b = n/P to the next rank. */
static CsSchedule *
ring_allreduce(int p, gint64 n)
{
    CsSchedule *s = cs_schedule_new(CS_OP_ALL_REDUCE, p, 0, n, CS_DTYPE_INT8, CS_REDOP_SUM,
                                    CS_PROTO_SIMPLE, 1);
    gint64 b = n / p;

    for (int r = 0; r < p && p > 1; r++) {
        int next = (r + 1) % p;
        int prev = (r + p - 1) % p;
#define BLK(k) ((gint64)(((r - (k)) % p + p) % p) * b)
        cs_schedule_step(s, r, 0, CS_STEP_SEND, -1, next, CS_BUF_INPUT, BLK(0), CS_BUF_OUTPUT, 0, b,
                         0);
        for (int k = 1; k < p - 1; k++)
            cs_schedule_step(s, r, 0, CS_STEP_RECV_REDUCE_SEND, prev, next, CS_BUF_INPUT, BLK(k),
                             CS_BUF_OUTPUT, 0, b, k);
        cs_schedule_step(s, r, 0, CS_STEP_RECV_REDUCE_COPY_SEND, prev, next, CS_BUF_INPUT,
                         BLK(p - 1), CS_BUF_OUTPUT, BLK(p - 1), b, p - 1);
        for (int k = 0; k < p - 2; k++)
            cs_schedule_step(s, r, 0, CS_STEP_RECV_COPY_SEND, prev, next, CS_BUF_INPUT, 0,
                             CS_BUF_OUTPUT, BLK(k), b, p + k);
        cs_schedule_step(s, r, 0, CS_STEP_RECV, prev, -1, CS_BUF_INPUT, 0, CS_BUF_OUTPUT,
                         BLK(p - 2), b, 2 * p - 2);
#undef BLK
    }
    cs_schedule_seal(s);
    return s;
}

/* MPICH's binomial broadcast from rank 0: a rank that got the data from its parent sends
 * it to r + mask for decreasing masks below its own lowest set bit. */
static CsSchedule *
binomial_broadcast(int p, gint64 n)
{
    CsSchedule *s = cs_schedule_new(CS_OP_BROADCAST, p, 0, n, CS_DTYPE_INT8, CS_REDOP_SUM,
                                    CS_PROTO_SIMPLE, 1);
    int top = 1;

    while (top < p)
        top *= 2;
    for (int r = 0; r < p; r++) {
        int mask = 1;
        while (mask < top && (r & mask) == 0)
            mask *= 2;
        if (r != 0)
            cs_schedule_recv(s, r, 0, r - mask, CS_BUF_OUTPUT, 0, n, 0);
        for (mask /= 2; mask >= 1; mask /= 2) {
            if (r + mask < p)
                cs_schedule_send(s, r, 0, r + mask, CS_BUF_OUTPUT, 0, n, 0);
        }
    }
    cs_schedule_seal(s);
    return s;
}

/* Recursive doubling all-reduce for @p a power of two: lg P rounds, each a whole-buffer
 * exchange with r xor 2^k, received into scratch then... modelled as send + recv_reduce. */
static CsSchedule *
recursive_doubling(int p, gint64 n)
{
    CsSchedule *s = cs_schedule_new(CS_OP_ALL_REDUCE, p, 0, n, CS_DTYPE_INT8, CS_REDOP_SUM,
                                    CS_PROTO_SIMPLE, 1);

    for (int r = 0; r < p; r++) {
        for (int mask = 1; mask < p; mask *= 2) {
            cs_schedule_send(s, r, 0, r ^ mask, CS_BUF_OUTPUT, 0, n, mask);
            cs_schedule_step(s, r, 0, CS_STEP_RECV_REDUCE, r ^ mask, -1, CS_BUF_OUTPUT, 0,
                             CS_BUF_OUTPUT, 0, n, mask);
        }
    }
    cs_schedule_seal(s);
    return s;
}

/* Pairwise all-to-all: round k = 1..P-1 sends block to r+k and receives from r-k; @n is the
 * total (nccl-tests), blocks n/P. */
static CsSchedule *
pairwise_alltoall(int p, gint64 n)
{
    CsSchedule *s = cs_schedule_new(CS_OP_ALL_TO_ALL, p, 0, n, CS_DTYPE_INT8, CS_REDOP_SUM,
                                    CS_PROTO_SIMPLE, 1);
    gint64 b = n / p;

    for (int r = 0; r < p; r++) {
        for (int k = 1; k < p; k++) {
            int to = (r + k) % p;
            int from = (r - k + p) % p;
            cs_schedule_send(s, r, 0, to, CS_BUF_INPUT, to * b, b, k);
            cs_schedule_recv(s, r, 0, from, CS_BUF_OUTPUT, from * b, b, k);
        }
    }
    cs_schedule_seal(s);
    return s;
}

/* ---- Heap ---- */

static void
test_heap_order(void)
{
    CsEventHeap heap;
    CsEvent ev;
    CsTime last_time = -1;
    guint64 last_seq = 0;
    GRand *rng = g_rand_new_with_seed(7);

    g_test_summary("Events come out by time, and by insertion order among equal times.");
    cs_event_heap_init(&heap, 1000);
    /* Times 0..19 only, so most of the 1000 events tie with others. */
    for (int i = 0; i < 1000; i++)
        cs_event_heap_push(&heap, g_rand_int_range(rng, 0, 20), i, 0);
    for (int i = 0; i < 1000; i++) {
        g_assert_true(cs_event_heap_pop(&heap, &ev));
        g_assert_cmpint(ev.time, >=, last_time);
        if (ev.time == last_time)
            g_assert_cmpuint(ev.seq, >, last_seq);
        /* seq is the insertion counter and cursor the loop index: they agree. */
        g_assert_cmpuint(ev.seq, ==, (guint64)ev.cursor);
        last_time = ev.time;
        last_seq = ev.seq;
    }
    g_assert_false(cs_event_heap_pop(&heap, &ev));
    cs_event_heap_clear(&heap);
    g_rand_free(rng);
}

static void
test_heap_interleaved(void)
{
    CsEventHeap heap;
    CsEvent ev;

    g_test_summary("Pushes between pops keep the order (the engine's usage pattern).");
    cs_event_heap_init(&heap, 4);
    cs_event_heap_push(&heap, 10, 0, 0);
    cs_event_heap_push(&heap, 5, 1, 0);
    g_assert_true(cs_event_heap_pop(&heap, &ev));
    g_assert_cmpint(ev.cursor, ==, 1);
    cs_event_heap_push(&heap, 10, 2, 0);
    cs_event_heap_push(&heap, 7, 3, 0);
    g_assert_true(cs_event_heap_pop(&heap, &ev));
    g_assert_cmpint(ev.cursor, ==, 3);
    /* Two events at t = 10: the one pushed first (cursor 0) first. */
    g_assert_true(cs_event_heap_pop(&heap, &ev));
    g_assert_cmpint(ev.cursor, ==, 0);
    g_assert_true(cs_event_heap_pop(&heap, &ev));
    g_assert_cmpint(ev.cursor, ==, 2);
    cs_event_heap_clear(&heap);
}

static void
test_determinism(gconstpointer data)
{
    const char *model = data;
    g_autoptr(CsTopo) topo = cs_test_crossbar(6, "3 us", "0.2 us", NULL);
    g_autoptr(CsSchedule) sched = ring_allreduce(6, 6 * 4096);
    g_autoptr(CsResult) a = run(sched, topo, model, FALSE);
    g_autoptr(CsResult) b = run(sched, topo, model, FALSE);

    g_test_summary("Two runs of the same input agree to the picosecond, field by field.");
    g_assert_cmpint(a->time, ==, b->time);
    g_assert_cmpint(a->alpha, ==, b->alpha);
    g_assert_cmpint(a->beta, ==, b->beta);
    g_assert_cmpint(a->gamma, ==, b->gamma);
    g_assert_cmpint(a->overhead, ==, b->overhead);
    g_assert_cmpint(a->n_events, ==, b->n_events);
    for (int r = 0; r < 6; r++)
        g_assert_cmpint(a->rank_finish[r], ==, b->rank_finish[r]);
}

/* ---- Closed forms ---- */

typedef struct {
    const char *name;
    CsSchedule *(*build)(int p, gint64 n);
    CsAlphaBetaFunc form;
    int p;
    gint64 n;
} ClosedCase;

/* alpha = 1 us, B = 1 GB/s, gamma = 1 / (4 GB/s) on the crossbar. Sizes are multiples of P
 * so blocks are whole. P includes non-powers of two except for recursive doubling. */
static const ClosedCase closed_cases[] = {
    { "ring-allreduce/p2", ring_allreduce, cs_alpha_beta_ring_allreduce, 2, 2000 },
    { "ring-allreduce/p5", ring_allreduce, cs_alpha_beta_ring_allreduce, 5, 5 * 1000 },
    { "ring-allreduce/p8", ring_allreduce, cs_alpha_beta_ring_allreduce, 8, 8 * 12345 },
    { "ring-allreduce/p13", ring_allreduce, cs_alpha_beta_ring_allreduce, 13, 13 * 777 },
    { "binomial-broadcast/p2", binomial_broadcast, cs_alpha_beta_binomial_broadcast, 2, 999 },
    { "binomial-broadcast/p5", binomial_broadcast, cs_alpha_beta_binomial_broadcast, 5, 4096 },
    { "binomial-broadcast/p8", binomial_broadcast, cs_alpha_beta_binomial_broadcast, 8, 100 },
    { "binomial-broadcast/p13", binomial_broadcast, cs_alpha_beta_binomial_broadcast, 13, 65536 },
    { "recursive-doubling/p2", recursive_doubling, cs_alpha_beta_recursive_doubling_allreduce, 2,
      3000 },
    { "recursive-doubling/p8", recursive_doubling, cs_alpha_beta_recursive_doubling_allreduce, 8,
      3000 },
    { "recursive-doubling/p16", recursive_doubling, cs_alpha_beta_recursive_doubling_allreduce, 16,
      1 },
    { "pairwise-alltoall/p3", pairwise_alltoall, cs_alpha_beta_pairwise_alltoall, 3, 3 * 100 },
    { "pairwise-alltoall/p7", pairwise_alltoall, cs_alpha_beta_pairwise_alltoall, 7, 7 * 1000 },
    { "pairwise-alltoall/p16", pairwise_alltoall, cs_alpha_beta_pairwise_alltoall, 16, 16 * 64 },
};

typedef struct {
    const ClosedCase *c;
    const char *model;
} ClosedRun;

static void
test_closed_form(gconstpointer data)
{
    const ClosedRun *cr = data;
    const ClosedCase *c = cr->c;
    g_autoptr(CsTopo) topo = textbook_crossbar(c->p);
    g_autoptr(CsSchedule) sched = c->build(c->p, c->n);
    g_autoptr(CsResult) res = run(sched, topo, cr->model, TRUE);
    /* The route: two 0.5 us links, bottleneck 1 GB/s; gamma 1/4 GB/s. */
    double want = c->form(c->p, (double)c->n, 1e-6, 1e9, 1.0 / 4e9);

    g_test_summary("Textbook mode on an idle crossbar gives the closed form exactly.");
    assert_rel(cs_time_to_s(res->time), want);
    /* Nothing but alpha, beta and gamma in the textbook machine. */
    g_assert_cmpint(res->overhead, ==, 0);
}

static void
test_split_ring(gconstpointer data)
{
    const char *model = data;
    g_autoptr(CsTopo) topo = textbook_crossbar(5);
    g_autoptr(CsSchedule) sched = ring_allreduce(5, 5000);
    g_autoptr(CsResult) res = run(sched, topo, model, TRUE);

    g_test_summary("The critical path of a ring all-reduce splits as the closed form's terms.");
    /* P = 5, b = 1000 B: 2(P-1) = 8 hops of alpha = 1 us and of b beta = 1 us each, and
     * P-1 = 4 reductions of b gamma = 0.25 us. */
    g_assert_cmpint(res->alpha, ==, 8 * PS_PER_US);
    g_assert_cmpint(res->beta, ==, 8 * PS_PER_US);
    g_assert_cmpint(res->gamma, ==, 4 * PS_PER_US / 4);
    g_assert_cmpint(res->overhead, ==, 0);
    g_assert_cmpint(res->time, ==, 17 * PS_PER_US);
    g_assert_cmpint(res->n_transfers, ==, 5 * 8);
    g_assert_cmpint(res->bytes_moved, ==, 5 * 8 * 1000);
}

/* ---- Contention ---- */

/* Ranks 0 and 1 send @m0 and @m1 bytes to rank 2 at t = 0; rank 2 receives from 0, then 1. */
static CsSchedule *
two_into_one_sized(gint64 m0, gint64 m1)
{
    CsSchedule *s = cs_schedule_new(CS_OP_GATHER, 3, 2, 3 * MAX(m0, m1), CS_DTYPE_INT8,
                                    CS_REDOP_SUM, CS_PROTO_SIMPLE, 1);

    cs_schedule_send(s, 0, 0, 2, CS_BUF_INPUT, 0, m0, 0);
    cs_schedule_send(s, 1, 0, 2, CS_BUF_INPUT, 0, m1, 0);
    cs_schedule_recv(s, 2, 0, 0, CS_BUF_OUTPUT, 0, m0, 0);
    cs_schedule_recv(s, 2, 0, 1, CS_BUF_OUTPUT, m0, m1, 0);
    cs_schedule_seal(s);
    return s;
}

static CsSchedule *
two_into_one(gint64 m)
{
    return two_into_one_sized(m, m);
}

static void
test_contention_reservation(void)
{
    g_autoptr(CsTopo) topo = textbook_crossbar(3);
    g_autoptr(CsSchedule) sched = two_into_one(1000);
    g_autoptr(CsResult) res = run(sched, topo, "reservation", TRUE);

    g_test_summary("Reservation: two flows that start together on a one-lane link share it.");
    /* Both flows need switch -> gpu2 from t = 0. Sharing it, each crosses it in 2 x 1000 B /
     * 1 GB/s = 2 us and arrives at 2 + alpha = 3 us (first come first served would have
     * rank 0's arrive at 2 us and rank 1's at 3). Textbook senders finish when their
     * message arrives. */
    g_assert_cmpint(res->rank_finish[0], ==, 3 * PS_PER_US);
    g_assert_cmpint(res->rank_finish[1], ==, 3 * PS_PER_US);
    g_assert_cmpint(res->rank_finish[2], ==, 3 * PS_PER_US);
    /* The share of the link is serialization on the critical path. */
    g_assert_cmpint(res->beta, ==, 2 * PS_PER_US);
    g_assert_cmpint(res->alpha, ==, 1 * PS_PER_US);
}

static void
test_contention_reservation_unequal(void)
{
    g_autoptr(CsTopo) topo = textbook_crossbar(3);
    g_autoptr(CsSchedule) sched = two_into_one_sized(1000, 3000);
    g_autoptr(CsResult) res = run(sched, topo, "reservation", TRUE);

    g_test_summary("Reservation: of two flows sharing a link, the shorter is done first.");
    /* Side by side at 0.5 GB/s each, 1000 B are across at 2 us, arriving at 3 us; the 3000 B
     * flow has the link to itself after that and is across once the link has carried all
     * 4000 B: 4 us, arriving at 5 us. */
    g_assert_cmpint(res->rank_finish[0], ==, 3 * PS_PER_US);
    g_assert_cmpint(res->rank_finish[1], ==, 5 * PS_PER_US);
    g_assert_cmpint(res->rank_finish[2], ==, 5 * PS_PER_US);
}

static void
test_contention_reservation_later(void)
{
    g_autoptr(CsTopo) topo = textbook_crossbar(3);
    CsSchedule *s = cs_schedule_new(CS_OP_GATHER, 3, 2, 9000, CS_DTYPE_INT8, CS_REDOP_SUM,
                                    CS_PROTO_SIMPLE, 1);

    /* Rank 0 sends 3000 B to rank 2 at t = 0; rank 1 sends 1000 B to rank 0 first, then
     * 1000 B to rank 2, which starts at 2 us, while rank 0's flow still holds sw -> gpu2. */
    cs_schedule_send(s, 0, 0, 2, CS_BUF_INPUT, 0, 3000, 0);
    cs_schedule_recv(s, 0, 0, 1, CS_BUF_OUTPUT, 0, 1000, 0);
    cs_schedule_send(s, 1, 0, 0, CS_BUF_INPUT, 0, 1000, 0);
    cs_schedule_send(s, 1, 0, 2, CS_BUF_INPUT, 0, 1000, 0);
    cs_schedule_recv(s, 2, 0, 0, CS_BUF_OUTPUT, 0, 3000, 0);
    cs_schedule_recv(s, 2, 0, 1, CS_BUF_OUTPUT, 3000, 1000, 0);
    cs_schedule_seal(s);
    g_autoptr(CsSchedule) sched = s;
    g_autoptr(CsResult) res = run(sched, topo, "reservation", TRUE);

    g_test_summary("Reservation: a flow that comes later queues behind the one on the link.");
    /* Rank 0's 3000 B hold sw -> gpu2 until 3 us and arrive at 4 us. Rank 1's first message
     * arrives at 1 + 1 = 2 us, so its second starts at 2 us, waits for the link until 3 us
     * and is across at 4 us, arriving at 5 us (max-min would share from 2 us: both across at
     * 4 us). */
    g_assert_cmpint(res->rank_finish[0], ==, 4 * PS_PER_US);
    g_assert_cmpint(res->rank_finish[1], ==, 5 * PS_PER_US);
    g_assert_cmpint(res->rank_finish[2], ==, 5 * PS_PER_US);
}

static void
test_contention_maxmin(void)
{
    g_autoptr(CsTopo) topo = textbook_crossbar(3);
    g_autoptr(CsSchedule) sched = two_into_one(1000);
    g_autoptr(CsResult) res = run(sched, topo, "maxmin", TRUE);

    g_test_summary("Max-min: two flows through one link each get half of it.");
    /* Each flow gets 0.5 GB/s on switch -> gpu2: both leave by 2 us and arrive at 3 us. */
    g_assert_cmpint(res->rank_finish[0], ==, 3 * PS_PER_US);
    g_assert_cmpint(res->rank_finish[1], ==, 3 * PS_PER_US);
    g_assert_cmpint(res->rank_finish[2], ==, 3 * PS_PER_US);
}

static void
test_contention_maxmin_unequal(void)
{
    /* gpu1's uplink is 0.25 GB/s: flow 1 -> 2 cannot use its half of switch -> gpu2. */
    g_autoptr(CsTopo) topo = cs_test_crossbar(3, "0 us", "0 us", "0.25 GB/s");
    g_autoptr(CsSchedule) sched = two_into_one(3000);
    g_autoptr(CsResult) res = run(sched, topo, "maxmin", TRUE);

    g_test_summary("Max-min, not equal split: a flow held back elsewhere leaves its share.");
    /* Progressive filling: gpu1 -> sw offers 0.25 GB/s to one flow, sw -> gpu2 0.5 GB/s
     * each to two: flow 1 fixed at 0.25, flow 0 gets the other 0.75 GB/s. Flow 0: 3000 B /
     * 0.75 GB/s = 4 us, arrives 5 us. Flow 1: 3000 B / 0.25 GB/s = 12 us (its own uplink
     * stays the bottleneck after flow 0 ends), arrives 13 us. */
    g_assert_cmpint(res->rank_finish[0], ==, 5 * PS_PER_US);
    g_assert_cmpint(res->rank_finish[1], ==, 13 * PS_PER_US);
    g_assert_cmpint(res->rank_finish[2], ==, 13 * PS_PER_US);
}

static void
test_contention_channels(gconstpointer data)
{
    const char *model = data;
    g_autoptr(CsTopo) topo = cs_test_crossbar(2, "0 us", "0 us", NULL);
    CsSchedule *s = cs_schedule_new(CS_OP_BROADCAST, 2, 0, 2000, CS_DTYPE_INT8, CS_REDOP_SUM,
                                    CS_PROTO_SIMPLE, 2);

    g_test_summary("Two channels between the same pair share the link (both models).");
    /* Rank 0 sends 1000 B on each of two channels at t = 0 over one 1 GB/s route: the two
     * messages need 2 us of link time together. Not textbook: Simple adds its NVLink hop
     * latency h to alpha; a plain receive copies out its 1000 B after arrival (tail
     * 1000 B / 8 GB/s = 0.125 us, it fits in one 512 KiB slot). Reservation: first message
     * leaves by 1 us, second by 2 us; max-min: both by 2 us. Either way rank 1 finishes at
     * 2 us + 1 us + h + 0.125 us. */
    cs_schedule_send(s, 0, 0, 1, CS_BUF_INPUT, 0, 1000, 0);
    cs_schedule_send(s, 0, 1, 1, CS_BUF_INPUT, 1000, 1000, 0);
    cs_schedule_recv(s, 1, 0, 0, CS_BUF_OUTPUT, 0, 1000, 0);
    cs_schedule_recv(s, 1, 1, 0, CS_BUF_OUTPUT, 1000, 1000, 0);
    cs_schedule_seal(s);
    g_autoptr(CsSchedule) sched = s;
    g_autoptr(CsResult) res = run(sched, topo, model, FALSE);
    CsTime hop
        = cs_time_from_s(cs_proto_info(CS_PROTO_SIMPLE)->hop_latency_s[CS_LINK_CLASS_NVLINK]);

    g_assert_cmpint(res->rank_finish[1], ==, 3 * PS_PER_US + hop + 125000);
    g_assert_cmpint(res->rank_finish[0], ==, 2 * PS_PER_US);
}

/* Two single-GPU nodes on one switch over 1 GB/s InfiniBand, no alphas, no launch or step
 * overhead; @transport (nullable) is the file's "transport" value. */
static CsTopo *
two_nodes(const char *transport)
{
    g_autofree char *json = g_strdup_printf(
        "{\"gpu\": {\"launch\": \"0 us\", \"step_overhead\": \"0 us\", "
        "\"reduce_bandwidth\": \"4 GB/s\", \"copy_bandwidth\": \"8 GB/s\"}, "
        "\"devices\": [{\"name\": \"g0\", \"kind\": \"gpu\", \"node\": 0}, "
        "{\"name\": \"g1\", \"kind\": \"gpu\", \"node\": 1}, "
        "{\"name\": \"sw\", \"kind\": \"switch\", \"node\": -1}], \"links\": ["
        "{\"endpoints\": [\"g0\", \"sw\"], \"kind\": \"ib\", \"bandwidth\": \"1 GB/s\", "
        "\"alpha\": \"0 us\"}, {\"endpoints\": [\"g1\", \"sw\"], \"kind\": \"ib\", "
        "\"bandwidth\": \"1 GB/s\", \"alpha\": \"0 us\"}]%s%s}",
        transport != NULL ? ", \"transport\": " : "", transport != NULL ? transport : "");
    g_autoptr(GError) error = NULL;
    CsTopo *topo = cs_topo_load_data(json, "two-nodes.json", &error);
    g_assert_no_error(error);
    return topo;
}

static void
test_transport_latency(void)
{
    g_test_summary("A transport latency L delays each network message by L (with Simple, its "
                   "completion F more; here F = L) and each slot's return "
                   "by L: a one-message send lands L (LL) or 2L (Simple) later, and a slot "
                   "is reused only after a round trip");
    g_autoptr(CsTopo) plain = two_nodes(NULL);
    g_autoptr(CsTopo) slow
        = two_nodes("{\"kind\": \"ib\", \"latency\": \"40 us\", \"flush\": \"40 us\"}");
    const CsTime L = 40 * PS_PER_US;
    const CsProto protos[] = { CS_PROTO_LL, CS_PROTO_SIMPLE };

    for (gsize i = 0; i < G_N_ELEMENTS(protos); i++) {
        CsSchedule *s = cs_schedule_new(CS_OP_BROADCAST, 2, 0, 1000, CS_DTYPE_INT8, CS_REDOP_SUM,
                                        protos[i], 1);
        cs_schedule_send(s, 0, 0, 1, CS_BUF_INPUT, 0, 1000, 0);
        cs_schedule_recv(s, 1, 0, 0, CS_BUF_OUTPUT, 0, 1000, 0);
        cs_schedule_seal(s);
        g_autoptr(CsSchedule) sched = s;
        g_autoptr(CsResult) a = run(sched, plain, "reservation", FALSE);
        g_autoptr(CsResult) b = run(sched, slow, "reservation", FALSE);
        CsTime extra = protos[i] == CS_PROTO_SIMPLE ? 2 * L : L;
        g_assert_cmpint(b->rank_finish[1] - a->rank_finish[1], ==, extra);
        /* The sender is done once its bytes left: latency is not its business. */
        g_assert_cmpint(b->rank_finish[0], ==, a->rank_finish[0]);
    }
    /* Sixteen messages through eight slots: the ninth waits for the first slot's return,
     * which crosses the network too. Were only arrivals delayed, the last would land 1.8 L
     * late (the ninth leaves at 1 us + L); with the return it leaves at 1 us + 2 L. */
    {
        CsSchedule *m = cs_schedule_new(CS_OP_BROADCAST, 2, 0, 16000, CS_DTYPE_INT8, CS_REDOP_SUM,
                                        CS_PROTO_LL, 1);
        for (int k = 0; k < 16; k++) {
            cs_schedule_send(m, 0, 0, 1, CS_BUF_INPUT, k * 1000, 1000, k);
            cs_schedule_recv(m, 1, 0, 0, CS_BUF_OUTPUT, k * 1000, 1000, k);
        }
        cs_schedule_seal(m);
        g_autoptr(CsSchedule) many = m;
        g_autoptr(CsResult) a = run(many, plain, "reservation", FALSE);
        g_autoptr(CsResult) b = run(many, slow, "reservation", FALSE);
        g_assert_cmpint(b->rank_finish[1] - a->rank_finish[1], >, 2 * L);
    }
    /* Textbook mode has no protocol and no transport. */
    CsSchedule *s = cs_schedule_new(CS_OP_BROADCAST, 2, 0, 1000, CS_DTYPE_INT8, CS_REDOP_SUM,
                                    CS_PROTO_SIMPLE, 1);
    cs_schedule_send(s, 0, 0, 1, CS_BUF_INPUT, 0, 1000, 0);
    cs_schedule_recv(s, 1, 0, 0, CS_BUF_OUTPUT, 0, 1000, 0);
    cs_schedule_seal(s);
    g_autoptr(CsSchedule) sched = s;
    g_autoptr(CsResult) a = run(sched, plain, "reservation", TRUE);
    g_autoptr(CsResult) b = run(sched, slow, "reservation", TRUE);
    g_assert_cmpint(a->time, ==, b->time);
}

/* @n GPUs without peer-to-peer: every message is staged through host memory (a CPU device)
 * over 1 GB/s shm links with no alpha; no launch or step overhead; copies at 8 GB/s. */
static CsTopo *
staged_ranks(int n)
{
    return cs_test_star(n, "cpu", "shm", "0 us", "0 us", "0 us", NULL);
}

static CsTopo *
staged_pair(void)
{
    return staged_ranks(2);
}

/* @pieces times, each rank sends 1000 B to the other, then receives the other's 1000 B, on
 * one channel. */
static CsSchedule *
staged_exchange(int pieces, gboolean p2p_split)
{
    CsSchedule *s = cs_schedule_new(CS_OP_ALL_GATHER, 2, 0, 2000 * pieces, CS_DTYPE_INT8,
                                    CS_REDOP_SUM, CS_PROTO_SIMPLE, 1);
    cs_schedule_set_p2p_split(s, p2p_split);
    for (int k = 0; k < pieces; k++) {
        for (int r = 0; r < 2; r++) {
            cs_schedule_send(s, r, 0, 1 - r, CS_BUF_INPUT, k * 1000, 1000, k);
            cs_schedule_recv(s, r, 0, 1 - r, CS_BUF_OUTPUT, ((1 - r) * pieces + k) * 1000, 1000, k);
        }
    }
    cs_schedule_seal(s);
    return s;
}

static CsTime
pci_simple_hop(void)
{
    return cs_time_from_s(cs_proto_info(CS_PROTO_SIMPLE)->hop_latency_s[CS_LINK_CLASS_PCI]);
}

static void
test_staged_exchange(gconstpointer data)
{
    const char *model = data;
    g_autoptr(CsTopo) topo = staged_pair();
    g_autoptr(CsSchedule) sched = staged_exchange(1, FALSE);
    g_autoptr(CsResult) res = run(sched, topo, model, FALSE);

    g_test_summary("Through host memory the receiver's channel reads the message out itself, "
                   "after its own send: write, then read, one after the other.");
    /* Both write their 1000 B into host memory over their own link by 1 us, seen after the
     * Simple PCI hop latency h; each then reads the other's out (1 us on its own link, both
     * models) and copies out the last slot (1000 B / 8 GB/s = 0.125 us): 2 us + h + 0.125 us.
     * One flow over both links would have finished at 1 us + h + 0.125 us. */
    for (int r = 0; r < 2; r++)
        g_assert_cmpint(res->rank_finish[r], ==, 2 * PS_PER_US + pci_simple_hop() + 125000);
}

static void
test_staged_p2p_split(gconstpointer data)
{
    const char *model = data;
    g_autoptr(CsTopo) topo = staged_pair();
    g_autoptr(CsSchedule) apart = staged_exchange(2, TRUE);
    g_autoptr(CsSchedule) in_order = staged_exchange(2, FALSE);
    g_autoptr(CsResult) res = run(apart, topo, model, FALSE);
    g_autoptr(CsResult) one = run(in_order, topo, model, FALSE);
    CsTime h = pci_simple_hop();

    g_test_summary("NCCL's p2p kernel receives with other warps than it sends: a channel "
                   "reads the staged messages while it goes on writing.");
    /* Two messages each way, each seen h after it is written. Apart: the sends write 0-1 and
     * 1-2 us; the receives read the first from 1 us + h (done 2 us + h + 0.125 us) and the
     * second, seen at 2 us + h, from then on: done at 3 us + h + 0.25 us. In one program
     * each write waits for the read before it and each read for its message to be seen:
     * 4 us + 2 h + 0.25 us. */
    for (int r = 0; r < 2; r++) {
        g_assert_cmpint(res->rank_finish[r], ==, 3 * PS_PER_US + h + 250000);
        g_assert_cmpint(one->rank_finish[r], ==, 4 * PS_PER_US + 2 * h + 250000);
    }
}

/* Rank 0 sends @n messages of @bytes to rank 1 on one channel, which receives them. */
static CsSchedule *
staged_broadcast(int n, gint64 bytes)
{
    CsSchedule *s = cs_schedule_new(CS_OP_BROADCAST, 2, 0, n * bytes, CS_DTYPE_INT8, CS_REDOP_SUM,
                                    CS_PROTO_SIMPLE, 1);
    for (int k = 0; k < n; k++) {
        cs_schedule_send(s, 0, 0, 1, CS_BUF_INPUT, k * bytes, bytes, k);
        cs_schedule_recv(s, 1, 0, 0, CS_BUF_OUTPUT, k * bytes, bytes, k);
    }
    cs_schedule_seal(s);
    return s;
}

/* Through host memory, rank 1 forwards rank 0's LL message to rank 2. */
static void
test_staged_forward_ll(gconstpointer data)
{
    const char *model = data;
    g_autoptr(CsTopo) topo = staged_ranks(3);
    CsSchedule *s
        = cs_schedule_new(CS_OP_BROADCAST, 3, 0, 8000, CS_DTYPE_INT8, CS_REDOP_SUM, CS_PROTO_LL, 1);

    cs_schedule_send(s, 0, 0, 1, CS_BUF_INPUT, 0, 8000, 0);
    cs_schedule_step(s, 1, 0, CS_STEP_RECV_COPY_SEND, 0, 2, CS_BUF_OUTPUT, 0, CS_BUF_OUTPUT, 0,
                     8000, 0);
    cs_schedule_recv(s, 2, 0, 1, CS_BUF_OUTPUT, 0, 8000, 0);
    cs_schedule_seal(s);
    g_autoptr(CsSchedule) sched = s;
    g_autoptr(CsResult) res = run(sched, topo, model, FALSE);

    g_test_summary("A staged LL message is forwarded line by line as it is read out.");
    /* 8000 B of LL are 16000 wire bytes: 16 us on each 1 GB/s leg, and every leg is a link
     * of its own (gpu0 -> host, host -> gpu1, gpu1 -> host, host -> gpu2). Streamed, the four
     * legs overlap and rank 2 is done a little after 16 us (hop latencies, 8 B lines);
     * store and forward at rank 1 would take its write after its read: past 32 us. The
     * reservation model knows the write's end when it starts, so it streams; maxmin reads a
     * staged message once all written and forwards once it has landed (the engine's top
     * comment). */
    if (g_strcmp0(model, "reservation") == 0) {
        g_assert_cmpint(res->rank_finish[2], >, 16 * PS_PER_US);
        g_assert_cmpint(res->rank_finish[2], <, 24 * PS_PER_US);
    }
    else {
        g_assert_cmpint(res->rank_finish[2], >, 32 * PS_PER_US);
    }
}

static void
test_staged_pipeline(gconstpointer data)
{
    const char *model = data;
    g_autoptr(CsTopo) topo = staged_pair();
    g_autoptr(CsSchedule) sched = staged_broadcast(2, 1000);

    g_test_summary("A staged message is read once its slot is written, and the writer goes "
                   "on meanwhile.");
    g_autoptr(CsResult) res = run(sched, topo, model, FALSE);
    CsTime h = pci_simple_hop();

    /* Rank 0 writes message 0 by 1 us and message 1 by 2 us; each is seen h later. Rank 1
     * reads message 0 from 1 us + h (its slot is then all written) and is done at 2 us + h +
     * 0.125 us; message 1, seen at 2 us + h, it reads from then on: done at 3 us + h +
     * 0.25 us. */
    g_assert_cmpint(res->rank_finish[0], ==, 2 * PS_PER_US);
    g_assert_cmpint(res->rank_finish[1], ==, 3 * PS_PER_US + h + 250000);
}

static void
test_staged_slots(gconstpointer data)
{
    const char *model = data;
    g_autoptr(CsTopo) topo = staged_pair();
    g_autoptr(CsSchedule) sched = staged_broadcast(1, 2000000);

    g_test_summary("A staged message of several slots is read from its first slot on, while "
                   "it is still being written (reservation); a fluid model reads it once all "
                   "written.");
    g_autoptr(CsResult) res = run(sched, topo, model, FALSE);
    CsTime h = pci_simple_hop();
    /* The last slot's copy-out: 524,288 B at 8 GB/s. */
    CsTime tail = 65536000;

    /* Rank 0 writes 2 MB by 2000 us. Reservation: its first Simple slot (524,288 B) is in
     * host memory at 524.288 us and seen h later; the waiting receiver reads the 2 MB from
     * then on, 2000 us at 1 GB/s, to 2524.288 us + h (not before the last byte was seen, at
     * 2000 us + h), then copies out the last slot. Max-min knows the write's end only at
     * 2000 us: the read runs from 2000 to 4000 us. */
    g_assert_cmpint(res->rank_finish[0], ==, 2000 * (CsTime)PS_PER_US);
    if (g_str_equal(model, "reservation"))
        g_assert_cmpint(res->rank_finish[1], ==, 2524288000 + h + tail);
    else
        g_assert_cmpint(res->rank_finish[1], ==, 4000 * (CsTime)PS_PER_US + tail);
}

static void
test_staged_textbook(gconstpointer data)
{
    const char *model = data;
    g_autoptr(CsTopo) topo = staged_pair();
    g_autoptr(CsSchedule) sched = staged_exchange(1, FALSE);
    g_autoptr(CsResult) res = run(sched, topo, model, TRUE);

    g_test_summary("Hockney's machine has no host memory in between: one message, one flow.");
    /* 1000 B at the route's 1 GB/s: 1 us, no latency; the receive ends on arrival. */
    for (int r = 0; r < 2; r++)
        g_assert_cmpint(res->rank_finish[r], ==, 1 * PS_PER_US);
}

/* Bytes the observer saw on any link. */
static void
sum_link_bytes(gpointer user_data, int link, gint64 bytes, CsTime start, CsTime end)
{
    (void)link;
    (void)start;
    (void)end;
    *(gint64 *)user_data += bytes;
}

/* Ring all-reduce of @pieces pieces of 3 x 1000 B on 3 ranks, one channel: each piece is
 * ring_allreduce()'s program, forwarding steps and all. 4 messages per piece and rank. */
static CsSchedule *
ring_allreduce_pieces(int pieces)
{
    const int p = 3;
    const gint64 b = 1000;
    CsSchedule *s = cs_schedule_new(CS_OP_ALL_REDUCE, p, 0, p * b, CS_DTYPE_INT8, CS_REDOP_SUM,
                                    CS_PROTO_SIMPLE, 1);
    for (int k = 0; k < pieces; k++) {
        for (int r = 0; r < p; r++) {
            int next = (r + 1) % p;
            int prev = (r + p - 1) % p;
            cs_schedule_step(s, r, 0, CS_STEP_SEND, -1, next, CS_BUF_INPUT, 0, CS_BUF_OUTPUT, 0, b,
                             k);
            cs_schedule_step(s, r, 0, CS_STEP_RECV_REDUCE_SEND, prev, next, CS_BUF_INPUT, 0,
                             CS_BUF_OUTPUT, 0, b, k);
            cs_schedule_step(s, r, 0, CS_STEP_RECV_REDUCE_COPY_SEND, prev, next, CS_BUF_INPUT, 0,
                             CS_BUF_OUTPUT, 0, b, k);
            cs_schedule_step(s, r, 0, CS_STEP_RECV_COPY_SEND, prev, next, CS_BUF_INPUT, 0,
                             CS_BUF_OUTPUT, 0, b, k);
            cs_schedule_step(s, r, 0, CS_STEP_RECV, prev, -1, CS_BUF_INPUT, 0, CS_BUF_OUTPUT, 0, b,
                             k);
        }
    }
    cs_schedule_seal(s);
    return s;
}

static void
test_staged_chain(gconstpointer data)
{
    const char *model = data;
    g_autoptr(CsTopo) topo = staged_ranks(3);
    /* The same links through a PCIe switch: the same class, nothing staged. */
    g_autoptr(CsTopo) direct = cs_test_star(3, "pcie_switch", "pcie", "0 us", "0 us", "0 us", NULL);
    g_autoptr(CsSchedule) sched = ring_allreduce_pieces(12);
    g_autoptr(GError) error = NULL;
    gint64 bytes = 0;
    CsObserver obs = { .user_data = &bytes, .link_busy = sum_link_bytes };
    CsEngineOptions opt = { .net_model = model, .observer = &obs };

    g_test_summary("A 3-rank ring of forwarding steps through host memory, 48 messages per "
                   "connection (slots reused through reads): it completes, the observer sees "
                   "each message on both legs once, and reading out costs time.");
    g_autoptr(CsResult) a = cs_engine_run(sched, topo, &opt, &error);
    g_assert_no_error(error);
    /* 3 ranks x 12 pieces x 4 messages of 1000 B, each over 2 links (write and read leg). */
    g_assert_cmpint(bytes, ==, 3 * 12 * 4 * 1000 * 2);
    g_autoptr(CsResult) again = run(sched, topo, model, FALSE);
    g_assert_cmpint(again->time, ==, a->time);
    g_autoptr(CsResult) b = run(sched, direct, model, FALSE);
    /* One flow over both links lets a rank's read overlap its own write; staged, a forwarding
     * step reads (1 us at best) before its bytes can go on. */
    g_assert_cmpint(a->time, >, b->time);
}

/* ---- Link loads (CsObserver.link_load) ---- */

/* One piece of a link's load. */
typedef struct {
    CsTime t;
    double rate_Bps; /* negative: the piece ends */
} LoadEdge;

typedef struct {
    GArray **edges;     /* per link: LoadEdge */
    double *load_bytes; /* per link: the pieces' rate x duration */
    double *busy_bytes; /* per link: link_busy's bytes */
    CsTime last;        /* ps: the latest end of a piece */
} LoadLog;

static void
log_load(gpointer user_data, int link, CsTime start, CsTime end, double rate_Bps)
{
    LoadLog *log = user_data;
    g_assert_cmpint(start, >=, 0);
    g_assert_cmpint(end, >, start);
    g_assert_cmpfloat(rate_Bps, >, 0.0);
    LoadEdge up = { start, rate_Bps };
    LoadEdge down = { end, -rate_Bps };
    g_array_append_val(log->edges[link], up);
    g_array_append_val(log->edges[link], down);
    log->load_bytes[link] += rate_Bps * (double)(end - start) / CS_TIME_PS_PER_S;
    log->last = MAX(log->last, end);
}

static void
log_busy(gpointer user_data, int link, gint64 bytes, CsTime start, CsTime end)
{
    (void)start;
    (void)end;
    ((LoadLog *)user_data)->busy_bytes[link] += (double)bytes;
}

static int
compare_load_edges(gconstpointer a, gconstpointer b)
{
    const LoadEdge *x = a;
    const LoadEdge *y = b;
    return x->t < y->t ? -1 : x->t > y->t ? 1 : 0;
}

/* An incast: ranks 1 .. @nranks - 1 each send rank 0 one message on each of @n_channels
 * channels at once, of 100, 200 or 300 kB by rank and channel, Simple (wire bytes = bytes). */
static CsSchedule *
incast(int nranks, int n_channels)
{
    CsSchedule *s = cs_schedule_new(CS_OP_ALL_REDUCE, nranks, 0, 300000, CS_DTYPE_INT8,
                                    CS_REDOP_SUM, CS_PROTO_SIMPLE, n_channels);
    for (int c = 0; c < n_channels; c++) {
        for (int r = 1; r < nranks; r++) {
            gint64 bytes = 100000 * (1 + (r + c) % 3);
            cs_schedule_send(s, r, c, 0, CS_BUF_INPUT, 0, bytes, c);
            cs_schedule_recv(s, 0, c, r, CS_BUF_OUTPUT, 0, bytes, c);
        }
    }
    cs_schedule_seal(s);
    return s;
}

/* Setup: an incast (incast()) on a PCIe star (one-lane links, which the flows of an instant
 * share under reservation) and on the 8 x H100 box (NVLink bonds of 18 lanes; 24 channels,
 * more flows than lanes), under @data's model, observed with link_busy and link_load.
 * Expectation: each link's pieces carry what link_busy says it carried (rate x duration =
 * bytes, to 1e-6), at no instant add up to more than its bandwidth, and end by the end of the
 * run; the run takes as long as without an observer. */
static void
test_link_load(gconstpointer data)
{
    const char *model = data;
    g_autoptr(CsTopo) star = cs_test_star(5, "pcie_switch", "pcie", "0.5 us", "0 us", "0 us", NULL);
    g_autoptr(CsTopo) dgx = cs_test_load_topo("dgx-h100x8");
    const CsTopo *topos[] = { star, dgx };
    const int ranks[] = { 5, 8 };
    const int channels[] = { 2, 24 };

    for (gsize k = 0; k < G_N_ELEMENTS(topos); k++) {
        const CsTopo *topo = topos[k];
        int n_links = cs_topo_n_links(topo);
        g_autoptr(CsSchedule) sched = incast(ranks[k], channels[k]);
        LoadLog log
            = { g_new0(GArray *, n_links), g_new0(double, n_links), g_new0(double, n_links), 0 };
        for (int l = 0; l < n_links; l++)
            log.edges[l] = g_array_new(FALSE, FALSE, sizeof(LoadEdge));
        CsObserver obs = { .user_data = &log, .link_busy = log_busy, .link_load = log_load };
        CsEngineOptions opt = { .net_model = model, .observer = &obs };
        g_autoptr(GError) error = NULL;
        g_autoptr(CsResult) res = cs_engine_run(sched, topo, &opt, &error);
        g_assert_no_error(error);
        g_autoptr(CsResult) plain = run(sched, topo, model, FALSE);
        g_assert_cmpint(res->time, ==, plain->time);
        g_assert_cmpint(log.last, <=, res->time);
        int n_busy = 0;
        for (int l = 0; l < n_links; l++) {
            if (log.busy_bytes[l] > 0)
                n_busy++;
            g_assert_cmpfloat(fabs(log.load_bytes[l] - log.busy_bytes[l]), <=,
                              1e-6 * log.busy_bytes[l]);
            GArray *e = log.edges[l];
            g_array_sort(e, compare_load_edges);
            double sum = 0.0;
            double peak = 0.0;
            for (guint i = 0; i < e->len;) {
                CsTime t = g_array_index(e, LoadEdge, i).t;
                for (; i < e->len && g_array_index(e, LoadEdge, i).t == t; i++)
                    sum += g_array_index(e, LoadEdge, i).rate_Bps;
                peak = MAX(peak, sum);
            }
            g_assert_cmpfloat(peak, <=, cs_topo_link(topo, l)->bw_Bps * (1 + 1e-9));
            g_array_unref(e);
        }
        /* Each sender's uplink and the switch's link to rank 0 at least. */
        g_assert_cmpint(n_busy, >=, ranks[k]);
        g_free(log.edges);
        g_free(log.load_bytes);
        g_free(log.busy_bytes);
    }
}

/* Seals @s (taking it) and asserts that the engine refuses it on @topo, naming @what. */
static void
assert_refused(CsSchedule *s, const CsTopo *topo, const char *what)
{
    g_autoptr(GError) error = NULL;
    CsEngineOptions opt = { 0 };

    cs_schedule_seal(s);
    g_autoptr(CsSchedule) sched = s;
    g_autoptr(CsResult) res = cs_engine_run(sched, topo, &opt, &error);
    g_assert_null(res);
    g_assert_error(error, CS_ENGINE_ERROR, CS_ENGINE_ERROR_MISMATCH);
    g_assert_nonnull(strstr(error->message, what));
}

static void
test_error_split_forward(void)
{
    g_autoptr(CsTopo) topo = staged_pair();
    CsSchedule *s = cs_schedule_new(CS_OP_ALL_GATHER, 2, 0, 2000, CS_DTYPE_INT8, CS_REDOP_SUM,
                                    CS_PROTO_SIMPLE, 1);

    g_test_summary("Where sends and receives run apart, no step may do both.");
    cs_schedule_set_p2p_split(s, TRUE);
    cs_schedule_send(s, 0, 0, 1, CS_BUF_INPUT, 0, 1000, 0);
    cs_schedule_step(s, 1, 0, CS_STEP_RECV_COPY_SEND, 0, 0, CS_BUF_INPUT, 0, CS_BUF_OUTPUT, 0, 1000,
                     0);
    cs_schedule_recv(s, 0, 0, 1, CS_BUF_OUTPUT, 1000, 1000, 0);
    assert_refused(s, topo, "run apart");
}

static void
test_error_split_reads_output(void)
{
    g_autoptr(CsTopo) topo = staged_ranks(3);
    CsSchedule *s = cs_schedule_new(CS_OP_ALL_GATHER, 3, 0, 3000, CS_DTYPE_INT8, CS_REDOP_SUM,
                                    CS_PROTO_SIMPLE, 1);

    g_test_summary("Where sends and receives run apart, a send may not pass on what a receive "
                   "brought: nothing would order them.");
    cs_schedule_set_p2p_split(s, TRUE);
    cs_schedule_send(s, 0, 0, 1, CS_BUF_INPUT, 0, 1000, 0);
    cs_schedule_recv(s, 1, 0, 0, CS_BUF_OUTPUT, 0, 1000, 0);
    cs_schedule_send(s, 1, 0, 2, CS_BUF_OUTPUT, 0, 1000, 0);
    cs_schedule_recv(s, 2, 0, 1, CS_BUF_OUTPUT, 0, 1000, 0);
    assert_refused(s, topo, "reads more than the input");
}

static void
test_channel_cap(gconstpointer data)
{
    const char *model = data;
    g_autoptr(GError) error = NULL;
    /* Two GPUs on a switch through 4 bonded lanes of 1 GB/s each: 4 GB/s per link. */
    g_autoptr(CsTopo) topo = cs_topo_load_data(
        "{\"name\": \"lanes\", \"description\": \"test\", \"gpu\": {\"launch\": \"0 us\", "
        "\"step_overhead\": \"0 us\", \"reduce_bandwidth\": \"4 GB/s\", \"copy_bandwidth\": "
        "\"8 GB/s\"}, \"devices\": [{\"name\": \"g0\", \"kind\": \"gpu\"}, {\"name\": \"g1\", "
        "\"kind\": \"gpu\"}, {\"name\": \"sw\", \"kind\": \"nvswitch\"}], \"links\": "
        "[{\"endpoints\": [\"g0\", \"sw\"], \"kind\": \"nvswitch\", \"count\": 4, "
        "\"bandwidth\": \"1 GB/s\", \"alpha\": \"0.5 us\"}, {\"endpoints\": [\"g1\", \"sw\"], "
        "\"kind\": \"nvswitch\", \"count\": 4, \"bandwidth\": \"1 GB/s\", \"alpha\": "
        "\"0.5 us\"}]}",
        "lanes", &error);
    CsSchedule *s = cs_schedule_new(CS_OP_BROADCAST, 2, 0, 8000, CS_DTYPE_INT8, CS_REDOP_SUM,
                                    CS_PROTO_SIMPLE, 4);

    g_test_summary("A channel drives one lane of a bonded link: one transfer gets 1/count of "
                   "it, and channels side by side fill it.");
    g_assert_no_error(error);
    /* Four channels each send 2000 B at t = 0. Each is capped at one 1 GB/s lane: 2 us, and
     * the four together use the 4 GB/s link exactly, so all leave by 2 us under either
     * model. The sender finishes then; the receiver at 2 + 1 (alpha) + h (Simple hop) +
     * 2000 B x 125 ps (copy-out tail) = 3.25 us + h. Without the cap one transfer would take
     * 0.5 us. */
    for (int ch = 0; ch < 4; ch++) {
        cs_schedule_send(s, 0, ch, 1, CS_BUF_INPUT, ch * 2000, 2000, 0);
        cs_schedule_recv(s, 1, ch, 0, CS_BUF_OUTPUT, ch * 2000, 2000, 0);
    }
    cs_schedule_seal(s);
    g_autoptr(CsSchedule) sched = s;
    g_autoptr(CsResult) res = run(sched, topo, model, FALSE);
    CsTime hop
        = cs_time_from_s(cs_proto_info(CS_PROTO_SIMPLE)->hop_latency_s[CS_LINK_CLASS_NVLINK]);

    g_assert_cmpint(res->rank_finish[0], ==, 2 * PS_PER_US);
    g_assert_cmpint(res->rank_finish[1], ==, 3250000 + hop);
}

/* ---- Flow control ---- */

static void
test_slots(gconstpointer data)
{
    const char *model = data;
    g_autoptr(CsTopo) topo = textbook_crossbar(2);
    CsSchedule *s = cs_schedule_new(CS_OP_BROADCAST, 2, 0, 1000, CS_DTYPE_INT8, CS_REDOP_SUM,
                                    CS_PROTO_SIMPLE, 1);

    g_test_summary("A receiver that consumes late stops the sender after 8 messages.");
    /* Rank 0 sends ten 100-byte messages; each costs its (textbook) sender alpha + 100 B
     * beta = 1.1 us, so without flow control rank 0 would finish at 11 us. Rank 1 first
     * reduces 80000 B locally (80000 x 250 ps = 20 us), then receives the ten messages.
     * Messages 0..7 fill the 8 slots by 8.8 us; message 8 needs message 0's slot, freed
     * when rank 1 consumes it at 20 us (it arrived long ago; a plain receive is free).
     * So message 8 goes 20 -> 21.1 us, and message 9 (slot of message 1, consumed at
     * 20 us too) 21.1 -> 22.2 us. Rank 1 takes message 9 at 22.2 us. */
    cs_schedule_set_scratch(s, 80000);
    for (int k = 0; k < 10; k++)
        cs_schedule_send(s, 0, 0, 1, CS_BUF_INPUT, 0, 100, k);
    cs_schedule_step(s, 1, 0, CS_STEP_REDUCE, -1, -1, CS_BUF_SCRATCH, 0, CS_BUF_SCRATCH, 0, 80000,
                     0);
    for (int k = 0; k < 10; k++)
        cs_schedule_recv(s, 1, 0, 0, CS_BUF_OUTPUT, 0, 100, k);
    cs_schedule_seal(s);
    g_autoptr(CsSchedule) sched = s;
    g_autoptr(CsResult) res = run(sched, topo, model, TRUE);

    g_assert_cmpint(res->rank_finish[0], ==, 22200000);
    g_assert_cmpint(res->rank_finish[1], ==, 22200000);
}

static void
test_slots_eight_free(void)
{
    g_autoptr(CsTopo) topo = textbook_crossbar(2);
    CsSchedule *s = cs_schedule_new(CS_OP_BROADCAST, 2, 0, 1000, CS_DTYPE_INT8, CS_REDOP_SUM,
                                    CS_PROTO_SIMPLE, 1);

    g_test_summary("Exactly 8 unconsumed messages do not block the sender.");
    /* Same as above with 8 messages: they go back to back, 8 x 1.1 us = 8.8 us, and rank 1
     * takes them all at 20 us. */
    cs_schedule_set_scratch(s, 80000);
    for (int k = 0; k < 8; k++)
        cs_schedule_send(s, 0, 0, 1, CS_BUF_INPUT, 0, 100, k);
    cs_schedule_step(s, 1, 0, CS_STEP_REDUCE, -1, -1, CS_BUF_SCRATCH, 0, CS_BUF_SCRATCH, 0, 80000,
                     0);
    for (int k = 0; k < 8; k++)
        cs_schedule_recv(s, 1, 0, 0, CS_BUF_OUTPUT, 0, 100, k);
    cs_schedule_seal(s);
    g_autoptr(CsSchedule) sched = s;
    g_autoptr(CsResult) res = run(sched, topo, "reservation", TRUE);

    g_assert_cmpint(res->rank_finish[0], ==, 8800000);
    g_assert_cmpint(res->rank_finish[1], ==, 20 * PS_PER_US);
}

/* ---- Launch, overheads, overlap ---- */

static void
test_launch_serial(void)
{
    g_autoptr(CsTopo) topo = cs_test_crossbar(4, "5 us", "0.5 us", NULL);
    CsSchedule *s = cs_schedule_new(CS_OP_ALL_REDUCE, 4, 0, 8000, CS_DTYPE_INT8, CS_REDOP_SUM,
                                    CS_PROTO_SIMPLE, 1);
    g_autoptr(GError) error = NULL;

    g_test_summary("One thread launching 4 GPUs starts them in step once it has launched all "
                   "four (nccl-tests -g).");
    /* Each rank copies 8000 B locally: 8000 B / 8 GB/s = 1 us (a local step posts no flag,
     * so the 0.5 us step overhead does not apply). With -g 4 the thread's four launches of
     * 5 us end at 20 us, when every rank starts: all done at 21 us. With -g 2 each thread
     * launches two: 11 us. With -g 3 the second thread has one rank: it starts at 5 us. */
    for (int r = 0; r < 4; r++)
        cs_schedule_step(s, r, 0, CS_STEP_COPY, -1, -1, CS_BUF_INPUT, 0, CS_BUF_OUTPUT, 0, 8000, 0);
    cs_schedule_seal(s);
    g_autoptr(CsSchedule) sched = s;
    CsEngineOptions opt = { .gpus_per_thread = 4 };
    g_autoptr(CsResult) res = cs_engine_run(sched, topo, &opt, &error);
    g_assert_no_error(error);
    for (int r = 0; r < 4; r++)
        g_assert_cmpint(res->rank_finish[r], ==, 21 * PS_PER_US);
    g_assert_cmpint(res->time, ==, 21 * PS_PER_US);
    /* The launches are overhead; the copy is gamma. */
    g_assert_cmpint(res->overhead, ==, 20 * PS_PER_US);
    g_assert_cmpint(res->gamma, ==, 1 * PS_PER_US);

    opt.gpus_per_thread = 2;
    g_autoptr(CsResult) res2 = cs_engine_run(sched, topo, &opt, &error);
    g_assert_no_error(error);
    g_assert_cmpint(res2->rank_finish[2], ==, 11 * PS_PER_US);
    g_assert_cmpint(res2->time, ==, 11 * PS_PER_US);

    opt.gpus_per_thread = 3;
    g_autoptr(CsResult) res4 = cs_engine_run(sched, topo, &opt, &error);
    g_assert_no_error(error);
    for (int r = 0; r < 3; r++)
        g_assert_cmpint(res4->rank_finish[r], ==, 16 * PS_PER_US);
    g_assert_cmpint(res4->rank_finish[3], ==, 6 * PS_PER_US);
    g_assert_cmpint(res4->time, ==, 16 * PS_PER_US);

    opt.no_launch = TRUE;
    g_autoptr(CsResult) res3 = cs_engine_run(sched, topo, &opt, &error);
    g_assert_no_error(error);
    g_assert_cmpint(res3->time, ==, 1 * PS_PER_US);
}

/* GPUs of one thread start in step: two senders into one link share it as with a thread per
 * GPU, only later by the thread's other launches. Staggered starts (the model before) let the
 * first launched sender cross the link alone, ahead of the other. */
static void
test_launch_in_step(void)
{
    g_autoptr(CsTopo) topo = cs_test_crossbar(3, "5 us", "0 us", NULL);
    g_autoptr(CsSchedule) sched = two_into_one(1000);
    g_autoptr(GError) error = NULL;

    g_test_summary("With -g 3, two senders into one link still share it; the time is the "
                   "-g 1 time plus two launches.");
    CsEngineOptions one = { .gpus_per_thread = 1 };
    CsEngineOptions three = { .gpus_per_thread = 3 };
    g_autoptr(CsResult) r1 = cs_engine_run(sched, topo, &one, &error);
    g_assert_no_error(error);
    g_autoptr(CsResult) r3 = cs_engine_run(sched, topo, &three, &error);
    g_assert_no_error(error);
    /* Sharing switch -> gpu2, both flows take 2 x 1000 B / 1 GB/s = 2 us from 5 us. */
    g_assert_cmpint(r1->rank_finish[0], ==, r1->rank_finish[1]);
    g_assert_cmpint(r1->rank_finish[0], ==, 7 * PS_PER_US);
    for (int r = 0; r < 3; r++)
        g_assert_cmpint(r3->rank_finish[r], ==, r1->rank_finish[r] + 10 * PS_PER_US);
    g_assert_cmpint(r3->time, ==, r1->time + 10 * PS_PER_US);
    g_assert_cmpint(r3->beta, ==, r1->beta);
    g_assert_cmpint(r3->overhead, ==, r1->overhead + 10 * PS_PER_US);
}

/* A GPU's copy rate is the whole GPU's: four channels copying at once take four times as
 * long as one, as one channel copying all four parts does. */
static void
test_local_shared_by_channels(void)
{
    g_autoptr(CsTopo) topo = cs_test_crossbar(2, "0 us", "0 us", NULL);
    CsSchedule *s = cs_schedule_new(CS_OP_BROADCAST, 2, 0, 32000, CS_DTYPE_INT8, CS_REDOP_SUM,
                                    CS_PROTO_SIMPLE, 4);
    g_autoptr(GError) error = NULL;

    g_test_summary("Local copies on several channels of one GPU share its copy rate.");
    /* 4 x 8000 B at 8 GB/s, one after another: 4 us, not 1 us. */
    for (int ch = 0; ch < 4; ch++)
        cs_schedule_step(s, 0, ch, CS_STEP_COPY, -1, -1, CS_BUF_INPUT, ch * 8000, CS_BUF_OUTPUT,
                         ch * 8000, 8000, 0);
    cs_schedule_seal(s);
    g_autoptr(CsSchedule) sched = s;
    CsEngineOptions opt = { 0 };
    g_autoptr(CsResult) res = cs_engine_run(sched, topo, &opt, &error);
    g_assert_no_error(error);
    g_assert_cmpint(res->rank_finish[0], ==, 4 * PS_PER_US);
    g_assert_cmpint(res->gamma, ==, 4 * PS_PER_US);

    /* Textbook mode: Hockney's copies are free. */
    opt.textbook = TRUE;
    g_autoptr(CsResult) textbook = cs_engine_run(sched, topo, &opt, &error);
    g_assert_no_error(error);
    g_assert_cmpint(textbook->rank_finish[0], ==, 0);
}

static void
test_recv_overlap(gconstpointer data)
{
    const char *model = data;
    g_autoptr(CsTopo) topo = cs_test_crossbar(2, "0 us", "0 us", NULL);
    CsSchedule *s
        = cs_schedule_new(CS_OP_REDUCE, 2, 1, 4000, CS_DTYPE_INT8, CS_REDOP_SUM, CS_PROTO_LL, 1);

    g_test_summary("A receive-reduce overlaps the transfer: only the last line's work trails.");
    /* LL: 4000 data bytes are 8000 wire bytes, 8 us at 1 GB/s; arrival 8 + 1 + 0.6 (LL
     * NVLink hop) = 9.6 us. Reducing 4000 B at 4 GB/s takes 1 us, and it can start with the
     * first byte (1.6 us), so it keeps pace; only the last 8-byte line trails: 8 x 250 ps.
     * Rank 1 finishes at 9.6 us + 2 ns. */
    cs_schedule_send(s, 0, 0, 1, CS_BUF_INPUT, 0, 4000, 0);
    cs_schedule_step(s, 1, 0, CS_STEP_RECV_REDUCE, 0, -1, CS_BUF_INPUT, 0, CS_BUF_OUTPUT, 0, 4000,
                     0);
    cs_schedule_seal(s);
    g_autoptr(CsSchedule) sched = s;
    g_autoptr(CsResult) res = run(sched, topo, model, FALSE);
    CsTime hop = cs_time_from_s(cs_proto_info(CS_PROTO_LL)->hop_latency_s[CS_LINK_CLASS_NVLINK]);

    g_assert_cmpint(res->rank_finish[1], ==, 9 * PS_PER_US + hop + 2000);
    g_assert_cmpint(res->gamma, ==, 2000);
    g_assert_cmpint(res->alpha, ==, 1 * PS_PER_US + hop);
    g_assert_cmpint(res->beta, ==, 8 * PS_PER_US);
}

static void
test_recv_reduce_bound(void)
{
    g_autoptr(CsTopo) topo = cs_test_crossbar(2, "0 us", "0 us", NULL);
    CsSchedule *s = cs_schedule_new(CS_OP_REDUCE, 2, 1, 4000, CS_DTYPE_INT8, CS_REDOP_SUM,
                                    CS_PROTO_SIMPLE, 1);

    g_test_summary("A receiver that starts late reduces the whole message after its start.");
    /* Rank 1 first copies 96000 B locally (96000 x 125 ps = 12 us); the 4000 B message
     * (Simple: 4 us on the link) arrived at 4 + 1 + h us. Then the reduction runs from
     * 12 us for 4000 x 250 ps = 1 us: rank 1 finishes at 13 us (if 5 + h + 1 < 13). */
    cs_schedule_set_scratch(s, 96000);
    cs_schedule_send(s, 0, 0, 1, CS_BUF_INPUT, 0, 4000, 0);
    cs_schedule_step(s, 1, 0, CS_STEP_COPY, -1, -1, CS_BUF_SCRATCH, 0, CS_BUF_SCRATCH, 0, 96000, 0);
    cs_schedule_step(s, 1, 0, CS_STEP_RECV_REDUCE, 0, -1, CS_BUF_INPUT, 0, CS_BUF_OUTPUT, 0, 4000,
                     0);
    cs_schedule_seal(s);
    g_autoptr(CsSchedule) sched = s;
    g_autoptr(CsResult) res = run(sched, topo, "reservation", FALSE);

    g_assert_cmpfloat(cs_proto_info(CS_PROTO_SIMPLE)->hop_latency_s[CS_LINK_CLASS_NVLINK], <, 6e-6);
    g_assert_cmpint(res->rank_finish[1], ==, 13 * PS_PER_US);
    g_assert_cmpint(res->gamma, ==, 13 * PS_PER_US);
}

static void
test_sync_per_hop(gconstpointer data)
{
    const char *model = data;
    g_autoptr(CsTopo) topo = cs_test_crossbar(3, "0 us", "0.5 us", NULL);
    CsSchedule *s = cs_schedule_new(CS_OP_BROADCAST, 3, 0, 1000, CS_DTYPE_INT8, CS_REDOP_SUM,
                                    CS_PROTO_SIMPLE, 1);

    g_test_summary("Each hop of a chain pays the sender's step overhead (fence + flag).");
    /* 0 -> 1 -> 2, 1000 B, Simple (hop latency h). Hop 1: 1 us on the link, then alpha
     * 1 us + h + the 0.5 us step overhead: arrives at 2.5 + h. 1000 B fit in one slot, so
     * rank 1 forwards once it has copied them out: + 1000 x 125 ps = 0.125 us. Hop 2 the
     * same: arrives at (2.5 + h) + 0.125 + (2.5 + h); rank 2 copies out: + 0.125 us.
     * Rank 2 finishes at 5.25 us + 2h. */
    cs_schedule_send(s, 0, 0, 1, CS_BUF_INPUT, 0, 1000, 0);
    cs_schedule_step(s, 1, 0, CS_STEP_RECV_COPY_SEND, 0, 2, CS_BUF_OUTPUT, 0, CS_BUF_OUTPUT, 0,
                     1000, 0);
    cs_schedule_recv(s, 2, 0, 1, CS_BUF_OUTPUT, 0, 1000, 0);
    cs_schedule_seal(s);
    g_autoptr(CsSchedule) sched = s;
    g_autoptr(CsResult) res = run(sched, topo, model, FALSE);
    CsTime hop
        = cs_time_from_s(cs_proto_info(CS_PROTO_SIMPLE)->hop_latency_s[CS_LINK_CLASS_NVLINK]);

    g_assert_cmpint(res->rank_finish[2], ==, 5250000 + 2 * hop);
    /* Two hops of alpha, two serializations, two copies; the rest is the overheads. */
    g_assert_cmpint(res->alpha, ==, 2 * (PS_PER_US + hop));
    g_assert_cmpint(res->beta, ==, 2 * PS_PER_US);
    g_assert_cmpint(res->gamma, ==, 250000);
    g_assert_cmpint(res->overhead, ==, 1 * PS_PER_US);
}

/* ---- Observer ---- */

typedef struct {
    int steps;
    CsTime latest_end;
    gint64 link_bytes;
    CsTime link_time;
} Seen;

static void
seen_step(gpointer user_data, int rank, gsize step_index, const CsStep *step, CsTime start,
          CsTime end)
{
    Seen *seen = user_data;

    (void)rank;
    (void)step_index;
    (void)step;
    g_assert_cmpint(end, >=, start);
    seen->steps++;
    seen->latest_end = MAX(seen->latest_end, end);
}

static void
seen_link(gpointer user_data, int link, gint64 bytes, CsTime start, CsTime end)
{
    Seen *seen = user_data;

    (void)link;
    seen->link_bytes += bytes;
    seen->link_time += end - start;
}

static void
test_observer(gconstpointer data)
{
    const char *model = data;
    g_autoptr(CsTopo) topo = textbook_crossbar(4);
    g_autoptr(CsSchedule) sched = ring_allreduce(4, 4000);
    g_autoptr(GError) error = NULL;
    Seen seen = { 0 };
    CsObserver obs = { .user_data = &seen, .step_done = seen_step, .link_busy = seen_link };
    CsEngineOptions opt = { .net_model = model, .textbook = TRUE, .observer = &obs };
    g_autoptr(CsResult) res = cs_engine_run(sched, topo, &opt, &error);

    g_test_summary("The observer sees every step and every link crossing.");
    g_assert_no_error(error);
    /* 4 ranks x (2P - 1) = 7 steps (send, 2 recv-reduce-send, recv-reduce-copy-send,
     * 2 recv-copy-send, recv); 4 x 2(P-1) = 24 messages of 1000 B, each over 2 links for
     * 1 us. */
    g_assert_cmpint(seen.steps, ==, 28);
    g_assert_cmpint(seen.latest_end, ==, res->time);
    g_assert_cmpint(seen.link_bytes, ==, 24 * 2 * 1000);
    g_assert_cmpint(seen.link_time, ==, 24 * 2 * PS_PER_US);
}

/* ---- Shared hops (NVLS step flags) ---- */

/* Bytes the observer saw per link. */
typedef struct {
    gint64 bytes[64];
} LinkBytes;

static void
count_link(gpointer user_data, int link, gint64 bytes, CsTime start, CsTime end)
{
    LinkBytes *lb = user_data;

    (void)start;
    (void)end;
    g_assert_cmpint(link, <, (int)G_N_ELEMENTS(lb->bytes));
    lb->bytes[link] += bytes;
}

/* The directed link from device @from to device @to. */
static int
link_between(const CsTopo *topo, const char *from, const char *to)
{
    int a = cs_topo_find_device(topo, from);
    int b = cs_topo_find_device(topo, to);

    for (int i = 0; i < cs_topo_n_links(topo); i++) {
        const CsLink *l = cs_topo_link(topo, i);
        if (l->src == a && l->dst == b)
            return i;
    }
    g_assert_not_reached();
}

static void
flagged_send(CsSchedule *s, int rank, int peer, gint64 bytes, guint8 flags)
{
    CsStep st = { .bytes = bytes,
                  .send_peer = peer,
                  .recv_peer = -1,
                  .kind = CS_STEP_SEND,
                  .src_buf = CS_BUF_INPUT,
                  .dst_buf = CS_BUF_INPUT,
                  .flags = flags };

    cs_schedule_add(s, rank, &st);
}

/* Runs @sched on @topo under @model (not textbook), counting bytes per link into @lb. */
static CsResult *
run_counting(const CsSchedule *sched, const CsTopo *topo, const char *model, LinkBytes *lb)
{
    g_autoptr(GError) error = NULL;
    CsObserver obs = { .user_data = lb, .link_busy = count_link };
    CsEngineOptions opt = { .net_model = model, .observer = &obs };
    CsResult *res = cs_engine_run(sched, topo, &opt, &error);

    g_assert_no_error(error);
    g_assert_nonnull(res);
    return res;
}

static void
test_flags_multicast(gconstpointer data)
{
    const char *model = data;
    g_autoptr(CsTopo) topo = cs_test_crossbar(3, "0 us", "0 us", NULL);
    CsSchedule *s = cs_schedule_new(CS_OP_BROADCAST, 3, 0, 1000, CS_DTYPE_INT8, CS_REDOP_SUM,
                                    CS_PROTO_SIMPLE, 1);
    LinkBytes lb = { { 0 } };

    g_test_summary("A multicast crosses the sender's link to the switch once, is copied out to "
                   "every member and the sender at once, and costs the sender's channel one "
                   "transfer.");
    /* Rank 0 multicasts 1000 B to ranks 1 and 2: the leader (to 1, MULTICAST_SELF) crosses
     * gpu0 -> sw, and the switch copies it out over sw -> gpu1, sw -> gpu0 and, for the
     * member (to 2, SHARED_FIRST_HOP), sw -> gpu2, all from 0 to 1 us (1 GB/s each, no other
     * flow). The member costs the channel nothing and lands with the leader. Arrivals: 1 + 1
     * (alpha) + h on both; each receiver copies out 1000 B x 125 ps = 0.125 us after
     * arrival. Both models: no flows share a link. */
    flagged_send(s, 0, 1, 1000, CS_STEP_FLAG_MULTICAST_SELF);
    flagged_send(s, 0, 2, 1000, CS_STEP_FLAG_SHARED_FIRST_HOP);
    cs_schedule_recv(s, 1, 0, 0, CS_BUF_OUTPUT, 0, 1000, 0);
    cs_schedule_recv(s, 2, 0, 0, CS_BUF_OUTPUT, 0, 1000, 0);
    cs_schedule_seal(s);
    g_autoptr(CsSchedule) sched = s;
    g_autoptr(CsResult) res = run_counting(sched, topo, model, &lb);
    CsTime hop
        = cs_time_from_s(cs_proto_info(CS_PROTO_SIMPLE)->hop_latency_s[CS_LINK_CLASS_NVLINK]);

    g_assert_cmpint(res->rank_finish[0], ==, 1 * PS_PER_US);
    g_assert_cmpint(res->rank_finish[1], ==, 2125000 + hop);
    g_assert_cmpint(res->rank_finish[2], ==, 2125000 + hop);
    /* Without flags gpu0 -> sw would carry 2000 B and sw -> gpu0 nothing. */
    g_assert_cmpint(lb.bytes[link_between(topo, "gpu0", "sw")], ==, 1000);
    g_assert_cmpint(lb.bytes[link_between(topo, "sw", "gpu0")], ==, 1000);
    g_assert_cmpint(lb.bytes[link_between(topo, "sw", "gpu1")], ==, 1000);
    g_assert_cmpint(lb.bytes[link_between(topo, "sw", "gpu2")], ==, 1000);
    g_assert_cmpint(lb.bytes[link_between(topo, "gpu1", "sw")], ==, 0);
    g_assert_cmpint(lb.bytes[link_between(topo, "gpu2", "sw")], ==, 0);
}

static void
test_flags_multicast_interleaved(gconstpointer data)
{
    const char *model = data;
    g_autoptr(CsTopo) topo = cs_test_crossbar(4, "0 us", "0 us", NULL);
    CsSchedule *s = cs_schedule_new(CS_OP_BROADCAST, 4, 0, 2000, CS_DTYPE_INT8, CS_REDOP_SUM,
                                    CS_PROTO_SIMPLE, 1);
    CsStep other = { .bytes = 1000,
                     .src_offset = 1000,
                     .send_peer = 3,
                     .recv_peer = -1,
                     .kind = CS_STEP_SEND,
                     .src_buf = CS_BUF_INPUT,
                     .dst_buf = CS_BUF_INPUT };

    g_test_summary("A multicast member found past other sends of its channel lands with its "
                   "leader and costs the channel nothing.");
    /* As NVLS interleaves them: rank 0 multicasts bytes 0-999 to ranks 1 and 2, with a
     * plain send of bytes 1000-1999 to rank 3 between the leader (to 1) and the member (to
     * 2). The leader and its copies take 0 - 1 us, the plain send 1 - 2 us. Rank 2's copy
     * left the switch with rank 1's, so both receivers finish together, 1 us before rank 3;
     * were the member charged on the channel after the plain send, rank 2 would finish 1 us
     * after rank 3. */
    flagged_send(s, 0, 1, 1000, CS_STEP_FLAG_MULTICAST_SELF);
    cs_schedule_add(s, 0, &other);
    flagged_send(s, 0, 2, 1000, CS_STEP_FLAG_SHARED_FIRST_HOP);
    cs_schedule_recv(s, 1, 0, 0, CS_BUF_OUTPUT, 0, 1000, 0);
    cs_schedule_recv(s, 2, 0, 0, CS_BUF_OUTPUT, 0, 1000, 0);
    cs_schedule_recv(s, 3, 0, 0, CS_BUF_OUTPUT, 1000, 1000, 0);
    cs_schedule_seal(s);
    g_autoptr(CsSchedule) sched = s;
    LinkBytes lb = { { 0 } };
    g_autoptr(CsResult) res = run_counting(sched, topo, model, &lb);

    g_assert_cmpint(res->rank_finish[0], ==, 2 * PS_PER_US);
    g_assert_cmpint(res->rank_finish[2], ==, res->rank_finish[1]);
    g_assert_cmpint(res->rank_finish[3], ==, res->rank_finish[1] + PS_PER_US);
    g_assert_cmpint(lb.bytes[link_between(topo, "gpu0", "sw")], ==, 2000);
    g_assert_cmpint(lb.bytes[link_between(topo, "sw", "gpu2")], ==, 1000);
}

static void
test_flags_reduction(gconstpointer data)
{
    const char *model = data;
    g_autoptr(CsTopo) topo = cs_test_crossbar(3, "0 us", "0 us", NULL);
    CsSchedule *s = cs_schedule_new(CS_OP_REDUCE, 3, 0, 1000, CS_DTYPE_INT8, CS_REDOP_SUM,
                                    CS_PROTO_SIMPLE, 1);
    LinkBytes lb = { { 0 } };

    g_test_summary("An in-switch reduction crosses the receiver's link from the switch once, "
                   "and reads the receiver's own copy.");
    /* Ranks 1 and 2 send 1000 B to rank 0 at t = 0, summed in the switch: rank 1's message
     * leads (REDUCE_SELF: gpu0 -> sw, gpu1 -> sw, sw -> gpu0), rank 2's is a member
     * (SHARED_LAST_HOP: gpu2 -> sw only). No link is shared, so under either model both
     * leave by 1 us and arrive at 2 us + h (first bytes at 1 us + h). Rank 0 reduces the
     * first: max(arrival + 1000 B x 250 ps, first byte + 0.25 us) = 2.25 us + h; the second
     * from then: 2.5 us + h. Without flags the two would share sw -> gpu0. */
    flagged_send(s, 1, 0, 1000, CS_STEP_FLAG_REDUCE_SELF);
    flagged_send(s, 2, 0, 1000, CS_STEP_FLAG_SHARED_LAST_HOP);
    cs_schedule_step(s, 0, 0, CS_STEP_RECV_REDUCE, 1, -1, CS_BUF_INPUT, 0, CS_BUF_OUTPUT, 0, 1000,
                     0);
    cs_schedule_step(s, 0, 0, CS_STEP_RECV_REDUCE, 2, -1, CS_BUF_OUTPUT, 0, CS_BUF_OUTPUT, 0, 1000,
                     0);
    cs_schedule_seal(s);
    g_autoptr(CsSchedule) sched = s;
    g_autoptr(CsResult) res = run_counting(sched, topo, model, &lb);
    CsTime hop
        = cs_time_from_s(cs_proto_info(CS_PROTO_SIMPLE)->hop_latency_s[CS_LINK_CLASS_NVLINK]);

    g_assert_cmpint(res->rank_finish[1], ==, 1 * PS_PER_US);
    g_assert_cmpint(res->rank_finish[2], ==, 1 * PS_PER_US);
    g_assert_cmpint(res->rank_finish[0], ==, 2500000 + hop);
    g_assert_cmpint(lb.bytes[link_between(topo, "gpu0", "sw")], ==, 1000);
    g_assert_cmpint(lb.bytes[link_between(topo, "gpu1", "sw")], ==, 1000);
    g_assert_cmpint(lb.bytes[link_between(topo, "gpu2", "sw")], ==, 1000);
    g_assert_cmpint(lb.bytes[link_between(topo, "sw", "gpu0")], ==, 1000);
    g_assert_cmpint(lb.bytes[link_between(topo, "sw", "gpu1")], ==, 0);
    g_assert_cmpint(lb.bytes[link_between(topo, "sw", "gpu2")], ==, 0);
}

static void
test_flags_efficiency(gconstpointer data)
{
    const char *model = data;
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTopo) topo = cs_topo_load_data(
        "{\"name\": \"h100pair\", \"description\": \"test\", \"gpu\": {\"model\": "
        "\"H100 SXM5 80GB\", \"launch\": \"0 us\", \"step_overhead\": \"0 us\", "
        "\"reduce_bandwidth\": \"4 GB/s\", \"copy_bandwidth\": \"8 GB/s\"}, \"devices\": "
        "[{\"name\": \"g0\", \"kind\": \"gpu\"}, {\"name\": \"g1\", \"kind\": \"gpu\"}, "
        "{\"name\": \"sw\", \"kind\": \"nvswitch\", \"multicast_reduction\": true}], "
        "\"links\": [{\"endpoints\": [\"g0\", \"sw\"], \"kind\": \"nvswitch\", "
        "\"bandwidth\": \"1 GB/s\", \"alpha\": \"0.5 us\"}, {\"endpoints\": [\"g1\", "
        "\"sw\"], \"kind\": \"nvswitch\", \"bandwidth\": \"1 GB/s\", \"alpha\": "
        "\"0.5 us\"}]}",
        "h100pair", &error);
    CsSchedule *s = cs_schedule_new(CS_OP_BROADCAST, 2, 0, 1700, CS_DTYPE_INT8, CS_REDOP_SUM,
                                    CS_PROTO_SIMPLE, 1);

    g_test_summary("NVLS traffic on Hopper gets NCCL's nvlsEfficiency (0.85) of the links.");
    g_assert_no_error(error);
    /* Rank 0 sends 850 B as a multicast leader, then 850 B plainly. The first is NVLS
     * traffic on an H100: 850 / 0.85 = 1000 wire bytes at 1 GB/s, 1 us; the second takes
     * 0.85 us after it: the sender finishes at 1.85 us. */
    flagged_send(s, 0, 1, 850, CS_STEP_FLAG_MULTICAST_SELF);
    cs_schedule_send(s, 0, 0, 1, CS_BUF_INPUT, 850, 850, 0);
    cs_schedule_recv(s, 1, 0, 0, CS_BUF_OUTPUT, 0, 850, 0);
    cs_schedule_recv(s, 1, 0, 0, CS_BUF_OUTPUT, 850, 850, 0);
    cs_schedule_seal(s);
    g_autoptr(CsSchedule) sched = s;
    g_autoptr(CsResult) res = run(sched, topo, model, FALSE);

    g_assert_cmpint(res->rank_finish[0], ==, 1850000);
}

/* ---- Errors ---- */

static void
test_error_model(void)
{
    g_autoptr(CsTopo) topo = textbook_crossbar(2);
    g_autoptr(CsSchedule) sched = ring_allreduce(2, 2000);
    g_autoptr(GError) error = NULL;
    CsEngineOptions opt = { .net_model = "telepathy" };
    CsResult *res = cs_engine_run(sched, topo, &opt, &error);

    g_assert_null(res);
    g_assert_error(error, CS_ENGINE_ERROR, CS_ENGINE_ERROR_MODEL);
    g_assert_nonnull(strstr(error->message, "telepathy"));
    g_assert_nonnull(strstr(error->message, "maxmin"));
}

static void
test_error_ranks(void)
{
    g_autoptr(CsTopo) topo = textbook_crossbar(2);
    g_autoptr(CsSchedule) sched = ring_allreduce(3, 3000);
    g_autoptr(GError) error = NULL;
    CsResult *res = cs_engine_run(sched, topo, NULL, &error);

    g_assert_null(res);
    g_assert_error(error, CS_ENGINE_ERROR, CS_ENGINE_ERROR_MISMATCH);
}

static void
test_error_unmatched(void)
{
    g_autoptr(CsTopo) topo = textbook_crossbar(2);
    CsSchedule *s = cs_schedule_new(CS_OP_BROADCAST, 2, 0, 100, CS_DTYPE_INT8, CS_REDOP_SUM,
                                    CS_PROTO_SIMPLE, 1);
    g_autoptr(GError) error = NULL;

    /* Two receives, one send. */
    cs_schedule_send(s, 0, 0, 1, CS_BUF_INPUT, 0, 100, 0);
    cs_schedule_recv(s, 1, 0, 0, CS_BUF_OUTPUT, 0, 100, 0);
    cs_schedule_recv(s, 1, 0, 0, CS_BUF_OUTPUT, 0, 100, 1);
    cs_schedule_seal(s);
    g_autoptr(CsSchedule) sched = s;
    CsResult *res = cs_engine_run(sched, topo, NULL, &error);

    g_assert_null(res);
    g_assert_error(error, CS_ENGINE_ERROR, CS_ENGINE_ERROR_DEADLOCK);
}

static void
test_error_cycle(void)
{
    g_autoptr(CsTopo) topo = textbook_crossbar(2);
    CsSchedule *s = cs_schedule_new(CS_OP_ALL_REDUCE, 2, 0, 100, CS_DTYPE_INT8, CS_REDOP_SUM,
                                    CS_PROTO_SIMPLE, 1);
    g_autoptr(GError) error = NULL;

    /* Both ranks receive before they send: counts match, but nobody can start. */
    for (int r = 0; r < 2; r++) {
        cs_schedule_recv(s, r, 0, 1 - r, CS_BUF_OUTPUT, 0, 100, 0);
        cs_schedule_send(s, r, 0, 1 - r, CS_BUF_INPUT, 0, 100, 0);
    }
    cs_schedule_seal(s);
    g_autoptr(CsSchedule) sched = s;
    CsResult *res = cs_engine_run(sched, topo, NULL, &error);

    g_assert_null(res);
    g_assert_error(error, CS_ENGINE_ERROR, CS_ENGINE_ERROR_DEADLOCK);
    g_assert_nonnull(strstr(error->message, "waiting for a message"));
}

static void
test_error_protocol(void)
{
    g_autoptr(GError) error = NULL;
    /* Two GPUs over PCIe only: LL128 needs NVLink. */
    g_autoptr(CsTopo) topo = cs_topo_load_data(
        "{\"name\": \"pcie2\", \"description\": \"test\", \"gpu\": {\"launch\": \"1 us\", "
        "\"step_overhead\": \"0 us\", \"reduce_bandwidth\": \"4 GB/s\", \"copy_bandwidth\": "
        "\"8 GB/s\"}, \"devices\": [{\"name\": \"g0\", \"kind\": \"gpu\"}, {\"name\": \"g1\", "
        "\"kind\": \"gpu\"}, {\"name\": \"sw\", \"kind\": \"pcie_switch\"}], \"links\": "
        "[{\"endpoints\": [\"g0\", \"sw\"], \"kind\": \"pcie\", \"bandwidth\": \"16 GB/s\", "
        "\"alpha\": \"1 us\"}, {\"endpoints\": [\"g1\", \"sw\"], \"kind\": \"pcie\", "
        "\"bandwidth\": \"16 GB/s\", \"alpha\": \"1 us\"}]}",
        "pcie2", &error);
    g_assert_no_error(error);
    CsSchedule *s = cs_schedule_new(CS_OP_BROADCAST, 2, 0, 100, CS_DTYPE_INT8, CS_REDOP_SUM,
                                    CS_PROTO_LL128, 1);
    cs_schedule_send(s, 0, 0, 1, CS_BUF_INPUT, 0, 100, 0);
    cs_schedule_recv(s, 1, 0, 0, CS_BUF_OUTPUT, 0, 100, 0);
    cs_schedule_seal(s);
    g_autoptr(CsSchedule) sched = s;
    CsResult *res = cs_engine_run(sched, topo, NULL, &error);

    g_assert_null(res);
    g_assert_error(error, CS_ENGINE_ERROR, CS_ENGINE_ERROR_MISMATCH);
    g_assert_nonnull(strstr(error->message, "LL128"));
}

static void
test_registry(void)
{
    g_autoptr(GError) error = NULL;
    const CsNetModel *const *all = cs_net_model_registry();

    g_assert_nonnull(all[0]);
    g_assert_cmpstr(all[0]->name, ==, "reservation");
    g_assert_true(cs_net_model_lookup(NULL, &error) == all[0]);
    g_assert_true(cs_net_model_lookup("maxmin", &error) == &cs_net_model_maxmin);
    g_assert_no_error(error);
    for (int i = 0; all[i] != NULL; i++) {
        g_assert_nonnull(all[i]->summary);
        g_assert_nonnull(all[i]->reference);
    }
}

/* ---- Main ---- */

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);

    g_test_add_func("/engine/heap/order", test_heap_order);
    g_test_add_func("/engine/heap/interleaved", test_heap_interleaved);
    g_test_add_func("/engine/transport/latency", test_transport_latency);
    g_test_add_func("/engine/registry", test_registry);
    for (gsize m = 0; m < G_N_ELEMENTS(models); m++) {
        g_autofree char *p = g_strdup_printf("/engine/determinism/%s", models[m]);
        g_test_add_data_func(p, models[m], test_determinism);
    }
    static ClosedRun closed_runs[G_N_ELEMENTS(closed_cases) * G_N_ELEMENTS(models)];
    for (gsize i = 0; i < G_N_ELEMENTS(closed_cases); i++) {
        for (gsize m = 0; m < G_N_ELEMENTS(models); m++) {
            ClosedRun *cr = &closed_runs[i * G_N_ELEMENTS(models) + m];
            cr->c = &closed_cases[i];
            cr->model = models[m];
            g_autofree char *p
                = g_strdup_printf("/engine/closed-form/%s/%s", models[m], closed_cases[i].name);
            g_test_add_data_func(p, cr, test_closed_form);
        }
    }
    for (gsize m = 0; m < G_N_ELEMENTS(models); m++) {
        g_autofree char *p1 = g_strdup_printf("/engine/split/ring/%s", models[m]);
        g_autofree char *p2 = g_strdup_printf("/engine/contention/channels/%s", models[m]);
        g_autofree char *p3 = g_strdup_printf("/engine/slots/late-receiver/%s", models[m]);
        g_autofree char *p4 = g_strdup_printf("/engine/overlap/recv-reduce/%s", models[m]);
        g_autofree char *p5 = g_strdup_printf("/engine/observer/%s", models[m]);
        g_autofree char *p6 = g_strdup_printf("/engine/sync/per-hop/%s", models[m]);
        g_autofree char *p7 = g_strdup_printf("/engine/contention/channel-cap/%s", models[m]);
        g_autofree char *p8 = g_strdup_printf("/engine/flags/multicast/%s", models[m]);
        g_autofree char *p9 = g_strdup_printf("/engine/flags/reduction/%s", models[m]);
        g_autofree char *p10 = g_strdup_printf("/engine/flags/efficiency/%s", models[m]);
        g_test_add_data_func(p8, models[m], test_flags_multicast);
        g_autofree char *p8i = g_strdup_printf("/engine/flags/multicast-interleaved/%s", models[m]);
        g_test_add_data_func(p8i, models[m], test_flags_multicast_interleaved);
        g_test_add_data_func(p9, models[m], test_flags_reduction);
        g_test_add_data_func(p10, models[m], test_flags_efficiency);
        g_test_add_data_func(p1, models[m], test_split_ring);
        g_test_add_data_func(p2, models[m], test_contention_channels);
        g_test_add_data_func(p3, models[m], test_slots);
        g_test_add_data_func(p4, models[m], test_recv_overlap);
        g_test_add_data_func(p5, models[m], test_observer);
        g_autofree char *p5l = g_strdup_printf("/engine/observer/link-load/%s", models[m]);
        g_test_add_data_func(p5l, models[m], test_link_load);
        g_test_add_data_func(p6, models[m], test_sync_per_hop);
        g_test_add_data_func(p7, models[m], test_channel_cap);
        g_autofree char *p11 = g_strdup_printf("/engine/staged/exchange/%s", models[m]);
        g_autofree char *p12 = g_strdup_printf("/engine/staged/p2p-split/%s", models[m]);
        g_autofree char *p13 = g_strdup_printf("/engine/staged/pipeline/%s", models[m]);
        g_test_add_data_func(p11, models[m], test_staged_exchange);
        g_test_add_data_func(p12, models[m], test_staged_p2p_split);
        g_test_add_data_func(p13, models[m], test_staged_pipeline);
        g_autofree char *p14 = g_strdup_printf("/engine/staged/slots/%s", models[m]);
        g_autofree char *p15 = g_strdup_printf("/engine/staged/textbook/%s", models[m]);
        g_test_add_data_func(p14, models[m], test_staged_slots);
        g_test_add_data_func(p15, models[m], test_staged_textbook);
        g_autofree char *p16 = g_strdup_printf("/engine/staged/chain/%s", models[m]);
        g_test_add_data_func(p16, models[m], test_staged_chain);
        g_autofree char *p17 = g_strdup_printf("/engine/staged/forward-ll/%s", models[m]);
        g_test_add_data_func(p17, models[m], test_staged_forward_ll);
    }
    g_test_add_func("/engine/contention/reservation/share", test_contention_reservation);
    g_test_add_func("/engine/contention/reservation/share-unequal",
                    test_contention_reservation_unequal);
    g_test_add_func("/engine/contention/reservation/later-queues",
                    test_contention_reservation_later);
    g_test_add_func("/engine/contention/maxmin/half", test_contention_maxmin);
    g_test_add_func("/engine/contention/maxmin/unequal", test_contention_maxmin_unequal);
    g_test_add_func("/engine/slots/eight-free", test_slots_eight_free);
    g_test_add_func("/engine/launch/serial", test_launch_serial);
    g_test_add_func("/engine/launch/in-step", test_launch_in_step);
    g_test_add_func("/engine/local/shared-by-channels", test_local_shared_by_channels);
    g_test_add_func("/engine/overlap/late-receiver", test_recv_reduce_bound);
    g_test_add_func("/engine/error/model", test_error_model);
    g_test_add_func("/engine/error/ranks", test_error_ranks);
    g_test_add_func("/engine/error/unmatched", test_error_unmatched);
    g_test_add_func("/engine/error/cycle", test_error_cycle);
    g_test_add_func("/engine/error/protocol", test_error_protocol);
    g_test_add_func("/engine/error/split-forward", test_error_split_forward);
    g_test_add_func("/engine/error/split-reads-output", test_error_split_reads_output);
    return g_test_run();
}
