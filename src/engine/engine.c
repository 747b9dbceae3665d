// SPDX-License-Identifier: MIT
/* The discrete-event engine: replays a schedule on a topology, step by step and chunk by
 * chunk, under a network model from src/models/, and splits the time of the critical path
 * into alpha, beta, gamma and overhead (DESIGN §5, STYLE §4). This file is the run: the
 * event queues, the step mechanics and the loop; engine_setup.c builds what they read before
 * the loop starts (engine-private.h holds the state both share).
 *
 * What a step costs (the machine NCCL's primitives run on, src/device/prims_*.h in NCCL 2.2x):
 *
 * - Launch. One host thread driving g GPUs (nccl-tests -g, CsEngineOptions.gpus_per_thread)
 *   issues their kernels one after another, and its GPUs all start once it has issued them
 *   all: at the sum of the thread's launch_s. In nccl-tests' timed loop each GPU's next kernel
 *   is already queued when its last one ends, and the collective ends on every rank together,
 *   so the GPUs start in step, an iteration costing the thread's launches plus the GPUs' work
 *   (the seed's -g 4 floor). Staggered starts (rank r at r + 1 launches, the model before)
 *   put GPUs of one PCIe switch out of step (one reading host memory while the other still
 *   writes: the 2080 Ti traces came out 37-56% fast from 64 MiB).
 * - Programs. Each (rank, channel) is a cursor walking that channel's steps in order; a step
 *   begins when the previous one ended. NCCL's p2p kernel gives a channel's sends and its
 *   receives separate warps (cs_schedule_p2p_split()): there a channel is two cursors, one
 *   walking its sends (and local steps), the other its receives.
 * - Synchronization. A message becomes visible to its receiver step_overhead_s (of the
 *   sender's GPU) after its bytes land: the fence and flag store NCCL's primitives do after
 *   writing each step (prims_simple.h, __threadfence_system then the tail store), paid once
 *   per hop on the chain. Local steps and pure receives post no flag.
 * - Flow control. A connection is (sender, receiver, channel); the k-th receive takes the
 *   k-th message. A send needs a free slot: NCCL_STEPS = 8 per connection, freed when the
 *   receiver has consumed the message, and the news travels back over the reverse route
 *   (its alpha): the sender of the 9th message waits for the 1st to be consumed. The slots
 *   exist before the receiver's kernel starts, so early ranks may send ahead.
 * - Channels. A channel is one SM (one CTA) streaming its transfers through the fabric; it
 *   drives one link of an NVLink-class bond at a time, so a transfer never goes faster than
 *   one such link (a bond of count links has bw / count each); PCIe lanes and network ports
 *   stripe every transfer, so there a channel may fill the link. NCCL's own model
 *   gives a Hopper channel one NVLink's worth (SM90_NVLINK_BW, 20.6 GB/s, NCCL 2.2x
 *   src/graph/topo.h), which is why it runs as many channels as links have lanes. A channel
 *   of NCCL's p2p kernel (schedules whose sends and receives run apart: grouped send/recv)
 *   sends with part of its warps, and over the network moves at most 14 GB/s: the figure
 *   NCCL sizes its channels per network peer by (NCCL_P2P_PER_CHANNEL_NET_BW, 2.29.2
 *   src/graph/paths.cc: "at least 1 channel per NIC, and more if needed to meet the bw
 *   requirement"). NCCL uses it to count channels, not as a limit; collsim takes it as the
 *   rate one such channel reaches, which Together AI's B200 sendrecv across 16 - 64 nodes, one
 *   channel per peer in NCCL's log, bears out within 6% (14.7 - 14.9 GB/s measured;
 *   docs/accuracy-multinode.md). The same kernel in every release has it.
 * - Transfers. Cut-through across the channel's route (cs_topo_route_channel): the network model
 * decides when the last byte leaves (bytes / data_fraction wire bytes at the bottleneck bandwidth
 * when alone); it then arrives after the propagation: route alpha + the protocol's hop latency for
 * the route's class. A sending step ends when its last byte has left. The model may answer at once,
 * once the instant's events are all run (model->settle: reservation, whose flows of one instant
 * share a port), or when the flow ends (model->advance: maxmin).
 * - Receiving. NCCL reduces (or copies out) a message unit by unit as it lands, so the work
 *   overlaps the transfer: a receiving step ends at
 *       max(last byte arrived + tail, begin + bytes / rate)
 *   where begin = max(step ready, first byte arrived), rate = reduce_Bps for reductions and
 *   copy_Bps for plain receives, and tail = the work on the last unit, which can only start
 *   once it has fully arrived. The unit is what one flag covers: a slot for Simple (the
 *   sender posts its tail counter per slot), a line for LL (8 data bytes) and LL128 (120).
 * - Staging. A route through host memory (its first shm link ends in the buffer: NCCL's SHM
 *   transport where GPUs have no peer-to-peer, an MPI shared-memory segment) is two legs run
 *   by two channels: the sender's flow writes the message into host memory, and the
 *   receiver's channel reads it out itself, in its program's turn, as a flow of its own over
 *   the rest of the route (flow id cursor + n_cursors), from the first unit a flag covers (a
 *   Simple slot is read once all written) and no faster than it was written. The protocol's
 *   hop latency is paid before the message is seen, as on any route: once per hop of a
 *   pipeline, not once per chunk on the reader's program.
 *   So a channel that sends and then receives (a 2-rank ring) writes, then reads, one after
 *   the other, as NCCL's primitives do, where NCCL's p2p kernel, whose sends and receives run
 *   apart ("Programs" above), reads while it writes.
 *   A fluid model (maxmin) knows a write's end only when its flow ends, so there a staged
 *   message is read once it is all written: store and forward, message by message.
 * - Forwarding (recv_*_send). The send starts as soon as the first unit has arrived and been
 *   processed, and its last byte leaves no earlier than the last unit came in and was
 *   processed: cut-through at the protocol's unit, so LL and LL128 stream a message through
 *   a chain of ranks line by line while Simple moves it slot by slot. The step is over when
 *   both its receive and its send are. A fluid model (maxmin) only knows a flow's last byte
 *   when the flow ends, so a forwarding step whose message is still in flight there waits
 *   for it: under maxmin, forwarding is cut-through only for messages already landed.
 * - Shared hops (NVLink SHARP, schedule.h CsStepFlags). The IR writes one multicast as a
 *   send to each peer and one in-switch reduction as a message from each peer; the switch
 *   moves the shared bytes once. A multicast member's flow skips its first hop (the leader
 *   carried those bytes to the switch), a reduction member's flow skips its last hop (the
 *   leader carries the combined sum out); a leader's flow also crosses the hop of the rank's
 *   own copy (the switch -> sender hop of a multicast that lands on its issuer too, the
 *   receiver -> switch hop of an ld_reduce that reads the receiver's copy too). Latencies
 *   are those of the whole route: the bytes still travel it. A flow with no hop left costs
 *   no serialization. A multicast is one store into the switch, which copies it out to every
 *   member at once: the leader's flow also charges the members' hops beyond the switch (each
 *   link once), and each member, when its turn comes on the sender's channel, costs that
 *   channel nothing and lands when the leader's bytes do (plus its own route's latency). Were
 *   the members charged one after another on the sender's channel, the channel would spend
 *   P - 1 hop times per multicast where NCCL's multimem.st spends one. The members of an
 *   in-switch reduction come from different ranks, each over its own first hop, so they are
 *   charged where they are sent. NVLS traffic gets
 *   NCCL's nvlsEfficiency of the links' bandwidth (nvls_efficiency(): 0.85 on Hopper): its
 *   wire bytes are the data over that share. The same flags serve a SHARP network switch
 *   (CollNet): a "hop" into the switch is every link of the route up to the first device on
 *   it that reduces (reducing_split(): one NVLink to an NVSwitch with multicast_reduction,
 *   GPU -> NIC -> leaf to a switch with sharp), the hop out the rest, for the route and its
 *   reverse alike; nvlsEfficiency applies only where that device is an NVSwitch. A
 *   FROM_SWITCH multicast leader (the sum a SHARP reduction left in the switch, sent on by
 *   the member it reached) charges no hop into the switch.
 * - Local steps: copy at copy_Bps, reduce at reduce_Bps.
 * - Textbook mode (CsEngineOptions.textbook): Hockney's machine. None of launch, step
 *   overhead, protocol fraction, hop latency, slot-return latency or per-channel cap (a
 *   link is one resource at its bandwidth B, a bond of NVLinks too); a send occupies its
 *   sender until the message has arrived (every message costs its sender alpha + n beta);
 *   forwarding and reductions start after the last byte arrived (alpha-beta-gamma as in
 *   Thakur, Rabenseifner and Gropp 2005); copies are free. The engine then reproduces the
 *   closed forms of models/alpha_beta.c exactly, for any P.
 *
 * Critical path. Every time the engine computes carries the alpha / beta / gamma parts of the
 * chain that produced it (a Stamp); a max() keeps the parts of the winner, so the finish of
 * the last rank says how its time splits. Overhead is the rest.
 *
 * Symmetry. A schedule that repeats under a shift of T ranks (cs_schedule_set_period()) holds
 * the programs of ranks 0 .. T-1 only. On a machine that repeats likewise on the schedule's
 * routes (cs_topo_shift_orbits(), which proves it link by link), rank r + kT does what rank r
 * does at the same times, so only ranks 0 .. T-1 run: a message to rank b lands at b mod T,
 * routes are those of the real pairs, and each link's traffic is charged to one link of its
 * orbit, which in the whole replay carries the images of the same flows at the same times.
 * The result is the whole replay's, every rank's finish included; a machine that does not
 * repeat is refused (CS_ENGINE_ERROR_ASYMMETRIC) and the caller replays the schedule whole.
 *
 * Cost: events are ordered by (time, seq), at most one per cursor: those of the current
 * instant wait in a FIFO, the events of a few future times in a FIFO per time (ranks in step
 * push their next events for the same times), the rest in one flat binary heap (see push());
 * each cursor's steps are copied once into a compact array in walking order (16 bytes a
 * step), and a cursor copies its current step into its own first cache line; messages live
 * in a ring of at most 8 slots per connection, one line each. A run is bound by memory
 * latency, not arithmetic: a thousand cursors each touch their own cursor, step, connection
 * and slot lines, more than the caches hold, so the records are laid out by cache line (what
 * every step reads on the first), the large arrays sit on huge pages where Linux offers them
 * (one TLB entry for 2 MiB), and the next cursors of the instant have their lines fetched
 * while the current one runs (see PREFETCH_DEPTH). Everything is sized from the schedule
 * before the loop (engine_setup.c): nothing is allocated per event. */
#undef G_LOG_DOMAIN
#define G_LOG_DOMAIN "collsim-engine"

#include <time.h>

#include "engine/engine-private.h"
#include "engine/engine.h"
#include "models/netmodel.h"

/* clang-format off */
G_DEFINE_QUARK(cs_engine_error_quark, cs_engine_error)
/* clang-format on */

/* ---- Event heap ---- */

/* Sizes the heap for @capacity events (the heap owns its array). */
void
cs_event_heap_init(CsEventHeap *heap, gsize capacity)
{
    heap->ev = g_new(CsEvent, MAX(capacity, 1));
    heap->n = 0;
    heap->capacity = MAX(capacity, 1);
    heap->next_seq = 0;
    heap->hole = FALSE;
}

/* Frees the heap's array. */
void
cs_event_heap_clear(CsEventHeap *heap)
{
    g_clear_pointer(&heap->ev, g_free);
    heap->n = heap->capacity = 0;
}

static inline gboolean
event_before(const CsEvent *a, const CsEvent *b)
{
    return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

/* Puts @ev in place of the root and sifts it down. */
static inline void
sift_down_from_root(CsEventHeap *heap, CsEvent ev)
{
    CsEvent *h = heap->ev;
    gsize n = heap->n;
    gsize pos = 0;

    for (;;) {
        gsize child = 2 * pos + 1;
        if (child >= n)
            break;
        if (child + 1 < n && event_before(&h[child + 1], &h[child]))
            child++;
        if (!event_before(&h[child], &ev))
            break;
        h[pos] = h[child];
        pos = child;
    }
    h[pos] = ev;
}

/* Adds an event; the heap must have room (its capacity is a bound derived from the
 * schedule, so overflowing it is a bug). After heap_take(), the first push fills the root's
 * hole: one sift instead of a pop and a push. */
static inline void
heap_push(CsEventHeap *heap, CsTime time, gint32 cursor, guint32 kind)
{
    CsEvent ev = { .time = time, .seq = heap->next_seq++, .cursor = cursor, .kind = kind };

    if (heap->hole) {
        heap->hole = FALSE;
        sift_down_from_root(heap, ev);
        return;
    }

    gsize pos = heap->n++;
    g_assert(heap->n <= heap->capacity);
    while (pos > 0) {
        gsize parent = (pos - 1) / 2;
        if (!event_before(&ev, &heap->ev[parent]))
            break;
        heap->ev[pos] = heap->ev[parent];
        pos = parent;
    }
    heap->ev[pos] = ev;
}

/* Closes the root's hole left by heap_take() if no push filled it. */
static inline void
heap_settle(CsEventHeap *heap)
{
    if (!heap->hole)
        return;
    heap->hole = FALSE;
    CsEvent last = heap->ev[--heap->n];
    if (heap->n > 0)
        sift_down_from_root(heap, last);
}

/* Copies the earliest event into @out and leaves its place as a hole for the next push (or
 * heap_settle()); FALSE when the heap is empty. */
static inline gboolean
heap_take(CsEventHeap *heap, CsEvent *out)
{
    heap_settle(heap);
    if (heap->n == 0)
        return FALSE;
    *out = heap->ev[0];
    heap->hole = TRUE;
    return TRUE;
}

/* Adds an event (see heap_push()). */
void
cs_event_heap_push(CsEventHeap *heap, CsTime time, gint32 cursor, guint32 kind)
{
    heap_push(heap, time, cursor, kind);
}

/* Closes a hole left by cs_event_heap_take() that no push filled. */
void
cs_event_heap_settle(CsEventHeap *heap)
{
    heap_settle(heap);
}

/* Copies the earliest event into @out, leaving a hole for the next push; FALSE if empty. */
gboolean
cs_event_heap_take(CsEventHeap *heap, CsEvent *out)
{
    return heap_take(heap, out);
}

/* Removes the earliest event into @out; FALSE when the heap is empty. */
gboolean
cs_event_heap_pop(CsEventHeap *heap, CsEvent *out)
{
    if (!heap_take(heap, out))
        return FALSE;
    heap_settle(heap);
    return TRUE;
}

static inline Msg *
conn_msg(Engine *e, const Conn *conn, gint32 k)
{
    return &e->msgs[conn->slot_base + (k & conn->slot_mask)];
}

static inline CsTime
work_ps(gint64 bytes, double ps_per_byte)
{
    return (CsTime)((double)bytes * ps_per_byte + 0.5);
}

/* The later of two stamps; the first wins ties. */
static inline Stamp
stamp_later(Stamp x, Stamp y)
{
    return y.t > x.t ? y : x;
}

/* Prefetching. The cursors of one instant are independent, so the cache misses of the next
 * few can overlap with the work on this one, instead of queueing one after another along
 * each handler's chain of loads (cursor -> step -> connection -> message slot). The events
 * of the current instant (in @soon) and the flows a settle model reports (in the order they
 * started, e->started) are known in advance: a cursor a few places ahead gets its records
 * fetched in stages, each stage reading what the one before fetched. A flow's end moves its
 * cursor to the next step, whose connections and slots are fetched too. */
#define PREFETCH_DEPTH 12

/* Fetches the cache line at @p. GCC 12 drops a __builtin_prefetch() whose address it loads
 * when nothing else uses those loads (it counts the prefetch as no use), which removed every
 * stage below but the first; an asm statement stays. */
static inline void
fetch(const void *p)
{
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    __asm__ volatile("prefetcht0 %0" : : "m"(*(const char *)p));
#else
    __builtin_prefetch(p);
#endif
}

/* Stage 1 of 3, PREFETCH_DEPTH places ahead: the cursor's two lines. */
static inline void
prefetch_cursor(const Engine *e, gint32 id)
{
    const char *c = (const char *)&e->cursors[id];

    fetch(c);
    fetch(c + 64);
}

/* The connections of step @st. */
static inline void
prefetch_step_conns(const Engine *e, const EStep *st)
{
    if (st->conn_out >= 0)
        fetch(&e->conns[st->conn_out]);
    if (st->conn_in >= 0)
        fetch(&e->conns[st->conn_in]);
}

/* The message slots step @st will send into and take from, were it to begin now. */
static inline void
prefetch_step_slots(const Engine *e, const EStep *st)
{
    if (st->conn_out >= 0) {
        const Conn *co = &e->conns[st->conn_out];
        fetch(&e->msgs[co->slot_base + (co->n_sent & co->slot_mask)]);
    }
    if (st->conn_in >= 0) {
        const Conn *ci = &e->conns[st->conn_in];
        fetch(&e->msgs[ci->slot_base + (ci->n_consumed & ci->slot_mask)]);
    }
}

/* Stage 2, 2/3 of the depth ahead: the connections of the cursor's step, and its next step. */
static inline void
prefetch_conns(const Engine *e, gint32 id)
{
    const Cursor *c = &e->cursors[id];

    if (c->step + 1 < e->n_steps)
        fetch(&e->steps[c->step + 1]);
    prefetch_step_conns(e, &c->cur);
}

/* Stage 3, 1/3 of the depth ahead: the message slots the step sends into and takes from,
 * and the connections of the next step. */
static inline void
prefetch_slots(const Engine *e, gint32 id)
{
    const Cursor *c = &e->cursors[id];

    prefetch_step_slots(e, &c->cur);
    if (c->step + 1 < e->n_steps)
        prefetch_step_conns(e, &e->steps[c->step + 1]);
}

/* Queues an event. Events wait in three places, and every one of them keeps (time, seq)
 * order: the current instant's in the FIFO @soon (an instant begins by moving its events
 * there, begin_instant(), so one pushed now sorts after them all: its seq is the largest);
 * the events of up to N_RUNS future times each in a FIFO run of their own (a collective's
 * ranks in step push their next events for the same few times, one after another: no sift
 * for them); the rest in the heap. */
static inline void
push(Engine *e, CsTime t, gint32 cursor, EventKind kind)
{
    Run *run = NULL;

    if (t != e->now) {
        Run *empty = NULL;
        for (int k = 0; k < N_RUNS; k++) {
            Run *r = &e->runs[k];
            if (r->n > 0 && r->t == t) {
                run = r;
                break;
            }
            if (r->n == 0 && empty == NULL)
                empty = r;
        }
        if (run == NULL)
            run = empty;
        if (run == NULL) {
            heap_push(&e->heap, t, cursor, kind);
            return;
        }
    }

    CsEvent ev = { .time = t, .seq = e->heap.next_seq++, .cursor = cursor, .kind = kind };
    if (run == NULL) {
        g_assert(e->soon_n <= e->soon_mask);
        e->soon[(e->soon_head + e->soon_n++) & e->soon_mask] = ev;
        return;
    }
    g_assert(run->n <= e->soon_mask);
    run->t = t;
    run->ev[(run->head + run->n++) & e->soon_mask] = ev;
}

/* The time of the earliest event after the current instant's, CS_TIME_NEVER if none. */
static inline CsTime
next_time(Engine *e)
{
    heap_settle(&e->heap);
    CsTime t = e->heap.n > 0 ? e->heap.ev[0].time : CS_TIME_NEVER;
    for (int k = 0; k < N_RUNS; k++)
        if (e->runs[k].n > 0)
            t = MIN(t, e->runs[k].t);
    return t;
}

/* Makes @t the current time and moves its events from the heap and its run (one run at
 * most has a time) into @soon, merged by seq (next_time() must be no earlier than @t and
 * @soon empty). */
static inline void
begin_instant(Engine *e, CsTime t)
{
    CsEventHeap *heap = &e->heap;
    Run *run = NULL;

    e->now = t;
    for (int k = 0; k < N_RUNS && run == NULL; k++)
        if (e->runs[k].n > 0 && e->runs[k].t == t)
            run = &e->runs[k];
    heap_settle(heap);
    for (;;) {
        gboolean from_heap = heap->n > 0 && heap->ev[0].time == t;
        gboolean from_run = run != NULL && run->n > 0;
        if (from_heap && from_run)
            from_heap = heap->ev[0].seq < run->ev[run->head].seq;
        else if (!from_run && !from_heap)
            break;
        g_assert(e->soon_n <= e->soon_mask);
        CsEvent *to = &e->soon[(e->soon_head + e->soon_n++) & e->soon_mask];
        if (from_heap) {
            *to = heap->ev[0];
            heap->hole = TRUE;
            heap_settle(heap);
        }
        else {
            *to = run->ev[run->head];
            run->head = (run->head + 1) & e->soon_mask;
            run->n--;
        }
    }
}

/* The next event in (time, seq) order into @ev; FALSE when none is left. */
static inline gboolean
next_event(Engine *e, CsEvent *ev)
{
    if (e->soon_n == 0) {
        CsTime t = next_time(e);
        if (t == CS_TIME_NEVER)
            return FALSE;
        begin_instant(e, t);
    }
    *ev = e->soon[e->soon_head];
    e->soon_head = (e->soon_head + 1) & e->soon_mask;
    e->soon_n--;
    if (e->soon_n > PREFETCH_DEPTH)
        prefetch_cursor(e, e->soon[(e->soon_head + PREFETCH_DEPTH) & e->soon_mask].cursor);
    if (e->soon_n > 2 * PREFETCH_DEPTH / 3)
        prefetch_conns(e, e->soon[(e->soon_head + 2 * PREFETCH_DEPTH / 3) & e->soon_mask].cursor);
    if (e->soon_n > PREFETCH_DEPTH / 3)
        prefetch_slots(e, e->soon[(e->soon_head + PREFETCH_DEPTH / 3) & e->soon_mask].cursor);
    return TRUE;
}

/* ---- Step mechanics ---- */

/* How many steps may begin inside one another before a plain event is used instead. */
#define EAGER_MAX_DEPTH 32

static void begin_step(Engine *e, gint32 id, CsTime now);

/* The current step of cursor @id ended at @fin: report it, move to the next step. */
static void
step_finished(Engine *e, gint32 id, Stamp fin)
{
    Cursor *c = &e->cursors[id];

    if (e->obs != NULL && e->obs->step_done != NULL) {
        gint32 local = e->local[c->step];
        e->obs->step_done(e->obs->user_data, c->rank, (gsize)local, &e->rank_steps[c->rank][local],
                          e->step_start[id], fin.t);
    }
    /* The next step most likely uses the same connections: fetch the slots it will read (the
     * credit of the message sent 7 before, the next message to take) and the step itself
     * while other events run. */
    const EStep *st = &c->cur;
    if (st->conn_out >= 0) {
        const Conn *co = &e->conns[st->conn_out];
        __builtin_prefetch(conn_msg(e, co, co->n_sent));
    }
    if (st->conn_in >= 0) {
        const Conn *ci = &e->conns[st->conn_in];
        __builtin_prefetch(conn_msg(e, ci, ci->n_consumed));
    }
    if (++c->step == e->ends[id]) {
        e->ranks[c->rank].finish = stamp_later(e->ranks[c->rank].finish, fin);
        return;
    }
    c->cur = e->steps[c->step];
    /* The cursor walks its steps in order, one line of four after another, while every other
     * cursor runs its own step: fetch the line after this one well before it is needed. */
    if (c->step + 4 < e->ends[id])
        __builtin_prefetch(&e->steps[c->step + 4]);
    /* The next step will begin here too, right after this one ends, where no stage of the
     * instant's prefetching reached it. Where it uses other connections than this one (the
     * messages of a multicast or an in-switch reduction go to and come from each peer in
     * turn), fetch its message slots, through its connections fetched one step ago, and the
     * connections of the step after it. */
    if (c->step + 1 < e->ends[id]) {
        const EStep *next = &e->steps[c->step + 1];
        if (next->conn_out != c->cur.conn_out || next->conn_in != c->cur.conn_in)
            prefetch_step_slots(e, next);
        if (c->step + 2 < e->ends[id]) {
            const EStep *after = &e->steps[c->step + 2];
            if (after->conn_out != next->conn_out || after->conn_in != next->conn_in)
                prefetch_step_conns(e, after);
        }
    }
    c->ready = fin;
    /* Starting a step only computes times (its send waits for an event at its own time), so
     * it can run now rather than as an event of its own; the depth bound keeps the stack
     * small along chains of steps that complete at once. */
    if (e->eager_depth < EAGER_MAX_DEPTH) {
        e->eager_depth++;
        begin_step(e, id, e->now);
        e->eager_depth--;
        return;
    }
    push(e, c->ready.t, id, EV_STEP);
}

/* Cursor @id's step takes its message out of the slot at @done (known in advance): the slot
 * goes back to the sender after the reverse route's latency, and a sender waiting for it
 * may go on then. */
static void
consume(Engine *e, const EStep *st, Stamp done, CsTime now)
{
    Conn *conn = &e->conns[st->conn_in];
    Msg *m = conn_msg(e, conn, conn->n_consumed);

    m->credit = done;
    m->credit.t += conn->credit_ps;
    m->credit.a += conn->credit_ps;
    conn->n_consumed++;
    e->n_transfers++;
    e->bytes_moved += step_bytes(st);

    Cursor *s = &e->cursors[conn->src_cursor];
    if (s->wait == WAIT_SLOT && s->cur.conn_out == st->conn_in
        && conn->n_consumed > conn->n_sent - CS_NCCL_STEPS) {
        s->wait = WAIT_NONE;
        push(e, MAX(now, m->credit.t), conn->src_cursor, EV_SEND);
    }
}

/* When the first @share of a message of @bytes, whose first byte lands at @first and last at
 * @arrive, has landed: the arrival less the serialization of the rest. */
static Stamp
share_in(Stamp arrive, CsTime first, double share, gint64 bytes)
{
    double frac = MIN(1.0, share / MAX((double)bytes, 1.0));
    CsTime in = first + (CsTime)((double)(arrive.t - first) * frac + 0.5);
    Stamp landed = arrive;
    landed.b -= arrive.t - in;
    landed.t = in;
    return landed;
}

/* Cursor @id's step has received its message, done at @done: free its slot and end the step,
 * or, forwarding, let its send start from @send_ready. */
static void
received(Engine *e, gint32 id, Stamp done, Stamp send_ready, CsTime now)
{
    Cursor *c = &e->cursors[id];
    const EStep *st = &c->cur;

    consume(e, st, done, now);
    if (!(st->does & DOES_SEND)) {
        step_finished(e, id, done);
        return;
    }
    c->ready = send_ready;
    push(e, MAX(c->ready.t, now), id, EV_SEND);
}

/* Cursor @id's step has its message: its first byte at the receiver at @first, its last at
 * @arrive. Compute when its receive side is done and, forwarding, when its send may start. */
static void
land(Engine *e, gint32 id, Stamp arrive, CsTime first, CsTime now)
{
    Cursor *c = &e->cursors[id];
    const EStep *st = &c->cur;
    const RankInfo *ri = &e->ranks[c->rank];
    Stamp done;

    double ps_per_byte = (st->does & DOES_REDUCE)    ? ri->reduce_ps_per_byte
                         : (st->does & DOES_NO_WORK) ? 0.0
                                                     : ri->copy_ps_per_byte;
    Stamp begin = stamp_later(c->ready, share_in(arrive, first, 0.0, step_bytes(st)));
    CsTime all = work_ps(step_bytes(st), ps_per_byte);
    CsTime tail = work_ps(MIN((double)step_bytes(st), e->grain_bytes), ps_per_byte);
    Stamp by_arrival = arrive;
    by_arrival.t += tail;
    by_arrival.g += tail;
    Stamp by_work = begin;
    by_work.t += all;
    by_work.g += all;
    done = stamp_later(by_arrival, by_work);

    /* Forwarding: the send may start once the first unit is in and processed. */
    Stamp first_unit = share_in(arrive, first, e->grain_bytes, step_bytes(st));
    first_unit.t += tail;
    first_unit.g += tail;
    if (st->does & DOES_SEND) {
        c->recv_done = done;
        c->in_last = by_arrival;
        c->cut = TRUE;
    }
    received(e, id, done, stamp_later(c->ready, first_unit), now);
}

/* Cursor @id's step receives a message whose arrival is known. A message staged through host
 * memory is then still to be read out of it by this channel: that waits for the cursor's own
 * event (a flow starts only there). */
static void
receive(Engine *e, gint32 id, CsTime now)
{
    Cursor *c = &e->cursors[id];
    const EStep *st = &c->cur;
    const RankInfo *ri = &e->ranks[c->rank];
    const Conn *conn = &e->conns[st->conn_in];
    const Msg *m = conn_msg(e, conn, conn->n_consumed);

    if (e->textbook) {
        Stamp done = stamp_later(m->arrive, c->ready);
        if (st->does & DOES_REDUCE) {
            CsTime w = work_ps(step_bytes(st), ri->reduce_ps_per_byte);
            done.t += w;
            done.g += w;
        }
        /* Store and forward. */
        received(e, id, done, done, now);
        return;
    }
    if (conn->read.n_links > 0) {
        /* From the first unit its flag covers: a Simple slot is read once all written. */
        c->ready
            = stamp_later(c->ready, share_in(m->arrive, m->first, e->grain_bytes, step_bytes(st)));
        /* e->now, not @now: woken by its sender's finish_send(), @now is that flow's end. */
        push(e, MAX(c->ready.t, e->now), id, EV_READ);
        return;
    }
    land(e, id, m->arrive, m->first, now);
}

/* Cursor @id's read of its staged message left host memory at @end (its first byte at
 * e->read_first[id]): the message is at the receiver once its last byte was also written there
 * and has crossed the read leg. */
static void
finish_read(Engine *e, gint32 id, CsTime end, CsTime now)
{
    Cursor *c = &e->cursors[id];
    const EStep *st = &c->cur;
    const Conn *conn = &e->conns[st->conn_in];
    const Msg *m = conn_msg(e, conn, conn->n_consumed);
    Stamp last = c->ready;

    last.b += end - last.t;
    last.t = end;
    last = stamp_later(last, m->arrive);
    last.t += conn->read_prop_ps;
    last.a += conn->read_prop_ps;
    if (e->obs != NULL && e->obs->link_busy != NULL)
        for (int i = 0; i < conn->read.n_links; i++)
            e->obs->link_busy(e->obs->user_data, conn->read.links[i], step_bytes(st),
                              e->read_first[id], end);
    land(e, id, last, e->read_first[id] + conn->read_prop_ps, now);
}

/* The receiver of @conn waits for its next message: if that message's arrival is known now,
 * let it receive. */
static void
wake_receiver(Engine *e, gint32 conn_id, CsTime now)
{
    Conn *conn = &e->conns[conn_id];
    Cursor *r = &e->cursors[conn->dst_cursor];

    if (r->wait != WAIT_MSG || r->cur.conn_in != conn_id || conn->n_consumed >= conn->n_sent)
        return;
    if (conn_msg(e, conn, conn->n_consumed)->arrive.t == CS_TIME_NEVER)
        return;
    r->wait = WAIT_NONE;
    receive(e, conn->dst_cursor, now);
}

/* The links one flagged flow charges, each once: a multicast out of a SHARP switch of
 * thousands of nodes crosses tens of thousands, so membership is a mark per link (the
 * set's epoch) rather than a scan of those already listed. */
typedef struct {
    int *out;
    int n;
    guint32 *seen; /* per link: the epoch of the set that last took it */
    guint32 epoch;
} LinkSet;

static inline void
link_set_begin(Engine *e, LinkSet *set, int *out)
{
    if (++e->link_epoch == 0) {
        memset(e->link_seen, 0, (gsize)cs_topo_n_links(e->topo) * sizeof(guint32));
        e->link_epoch = 1;
    }
    *set = (LinkSet){ out, 0, e->link_seen, e->link_epoch };
}

/* Appends @link unless the set holds it already. */
static inline void
add_link_once(LinkSet *set, int link)
{
    if (set->seen[link] == set->epoch)
        return;
    set->seen[link] = set->epoch;
    set->out[set->n++] = link;
}

/* Adds the links a flagged message charges (see "Shared hops" above) to @set, in the order
 * its bytes cross them (room for the route's and the reverse route's links); *@n_chain
 * (nullable) says how many of the set's links, at the start, lead into the switch. */
static void
charged_links(const Conn *conn, guint8 flags, LinkSet *set, int *n_chain)
{
    const CsRoute *r = &conn->route;
    gboolean skip_in = (flags & (CS_STEP_FLAG_SHARED_FIRST_HOP | CS_STEP_FLAG_FROM_SWITCH)) != 0;
    int lo = skip_in ? conn->split : 0;
    int hi = (flags & CS_STEP_FLAG_SHARED_LAST_HOP) ? conn->split : r->n_links;

    if (flags & CS_STEP_FLAG_REDUCE_SELF)
        for (int i = 0; i < conn->back_split; i++) {
            set->seen[conn->back[i]] = set->epoch;
            set->out[set->n++] = conn->back[i];
        }
    for (int i = lo; i < MIN(hi, conn->split); i++)
        add_link_once(set, r->links[i]);
    if (n_chain != NULL)
        *n_chain = set->n;
    for (int i = MAX(lo, conn->split); i < hi; i++)
        add_link_once(set, r->links[i]);
    /* The self hops of a reverse route through the switch may be the links already charged
     * (a one-link reverse route): each link once. */
    if (flags & CS_STEP_FLAG_MULTICAST_SELF)
        for (int i = conn->back_split; i < conn->back_n; i++)
            add_link_once(set, conn->back[i]);
}

/* What the flow of step @step (on @conn; @st, the cursor's copy of it) charges into @out
 * (room for its cursor's flow): its own links and, for a multicast leader, every member's hops
 * beyond the switch, each link once. Returns how many; *@n_branches (nullable) says how many
 * of them, at the end, are a multicast's copies out of the switch (every link after the hops
 * into it). */
static int
flow_charged_links(Engine *e, gint32 step, const EStep *st, const Conn *conn, int *out,
                   int *n_branches)
{
    /* From the cursor's line: e->steps[@step] and e->fan[@step] are far from the cache. */
    guint8 flags = st->flags;
    /* Into the switch: the sender's hops, and the receiver's own copy's (REDUCE_SELF). */
    int n_chain;
    LinkSet set;
    link_set_begin(e, &set, out);
    charged_links(conn, flags, &set, &n_chain);
    gboolean leads = !(flags & CS_STEP_FLAG_SHARED_FIRST_HOP);
    /* DOES_FANS: e->fan[@step] names a member (setup_multicasts()). */
    gboolean fans = leads && (st->does & DOES_FANS);

    for (gint32 k = fans ? e->fan[step] : -1; k >= 0; k = e->fan[k]) {
        const Conn *member = &e->conns[e->steps[k].conn_out];
        for (int i = member->split; i < member->route.n_links; i++)
            add_link_once(&set, member->route.links[i]);
    }
    const int n = set.n;
    if (n_branches != NULL)
        *n_branches
            = fans || (leads && (flags & (CS_STEP_FLAG_MULTICAST_SELF | CS_STEP_FLAG_FROM_SWITCH)))
                  ? MAX(n - n_chain, 0)
                  : 0;
    return n;
}

/* Starts the flow of cursor @id's flagged step at @now over the links it charges; returns
 * what model->start() does (@now when no link is left to charge). */
static CsTime
start_flagged(Engine *e, gint32 id, const Conn *conn, const EStep *st, CsTime now)
{
    Cursor *c = &e->cursors[id];
    /* The model keeps the link list while the flow lasts: the cursor's own scratch, which
     * its next flow (after this one ends) is the first to overwrite. */
    int *links = &e->flow_links[e->flow_base[id]];
    CsRoute sub = conn->route;

    sub.n_links = flow_charged_links(e, c->step, st, conn, links, &sub.n_branches);
    sub.links = links;
    if (sub.n_links == 0) {
        e->flow_first[id] = now;
        return now;
    }
    double wire = (double)step_bytes(st) / e->data_fraction
                  * (conn->nvls ? e->ranks[c->rank].nvls_wire : 1.0);
    double cap = e->textbook ? 0.0 : links_cap(e->topo, links, sub.n_links);
    return e->model->start(e->net, now, &sub, wire, cap, id, &e->flow_first[id]);
}

/* The flow of cursor @id has left its source completely at @end (its first byte left at
 * e->flow_first[id]): the message's arrival is now known and the step's send side is over. */
static void
finish_send(Engine *e, gint32 id, CsTime end)
{
    Cursor *c = &e->cursors[id];
    const EStep *st = &c->cur;
    Conn *conn = &e->conns[st->conn_out];
    Msg *m = conn_msg(e, conn, conn->n_sent - 1);

    c->ready.b += end - c->ready.t;
    c->ready.t = end;
    /* Forwarding: the last byte cannot leave before it came in and was processed. */
    if (c->cut)
        c->ready = stamp_later(c->ready, c->in_last);
    m->arrive = c->ready;
    m->arrive.t += conn->prop_ps + conn->sync_ps;
    m->arrive.a += conn->prop_ps;
    m->first = e->flow_first[id] + conn->prop_ps + conn->sync_ps;
    if ((st->does & DOES_FANS) && !(st->flags & CS_STEP_FLAG_SHARED_FIRST_HOP)) {
        Multicast *mc = &e->mc[id];
        mc->left = c->ready;
        mc->first = e->flow_first[id];
        mc->next = e->fan[c->step];
    }
    if (e->obs != NULL && e->obs->link_busy != NULL) {
        const int *links = conn->route.links;
        int n_links = conn->route.n_links;
        if (st->flags != 0 && n_links > 0) {
            int *charged = &e->flow_links[e->flow_base[id]];
            n_links = flow_charged_links(e, c->step, st, conn, charged, NULL);
            links = charged;
        }
        for (int i = 0; i < n_links; i++)
            e->obs->link_busy(e->obs->user_data, links[i], step_bytes(st), e->flow_first[id], end);
    }
    /* The step ends before the receiver's event may be pushed, so that the heap stays within
     * one event per cursor plus the woken ones. */
    Stamp fin;
    if (c->cut)
        fin = stamp_later(c->ready, c->recv_done);
    else if (e->textbook)
        fin = m->arrive; /* Hockney: a message costs its sender alpha + n beta */
    else
        fin = c->ready;
    c->cut = FALSE;
    gint32 conn_out = st->conn_out; /* st is the cursor's, which moves on to its next step */
    step_finished(e, id, fin);
    wake_receiver(e, conn_out, end);
}

/* Cursor @id's step is a member of the multicast its last leader sent: the switch copied
 * the bytes out with the leader's, so the step costs the channel nothing and the message
 * lands when the leader's bytes do, over this member's route (or once its slot was free, if
 * that came later). */
static void
send_member(Engine *e, gint32 id, CsTime now)
{
    Cursor *c = &e->cursors[id];
    const EStep *st = &c->cur;
    gint32 conn_id = st->conn_out;
    Conn *conn = &e->conns[conn_id];
    Multicast *mc = &e->mc[id];
    Msg *m = conn_msg(e, conn, conn->n_sent);
    Stamp left = mc->left;

    if (conn->n_sent >= CS_NCCL_STEPS)
        left = stamp_later(left, m->credit);
    conn->n_sent++;
    mc->next = e->fan[c->step];
    m->arrive = left;
    m->arrive.t += conn->prop_ps + conn->sync_ps;
    m->arrive.a += conn->prop_ps;
    m->first = mc->first + (left.t - mc->left.t) + conn->prop_ps + conn->sync_ps;
    step_finished(e, id, c->ready);
    wake_receiver(e, conn_id, now);
}

/* The cursor of flow @flow: its send flow has the cursor's id, its read that id + n_cursors. */
static inline gint32
flow_cursor(const Engine *e, gint32 flow)
{
    return flow < e->n_cursors ? flow : flow - e->n_cursors;
}

/* Network-model callback: flow @flow has left its source at @t, which is e->now under
 * model->advance() and may be later under model->settle(): what the receiver does next
 * happens from e->now. A cursor's send flow has the cursor's id, its read out of host memory
 * that id + n_cursors. */
static void
flow_done(gpointer user_data, gint32 flow, CsTime t)
{
    Engine *e = user_data;
    gint32 id = flow_cursor(e, flow);
    Cursor *c = &e->cursors[id];

    /* A settle model reports the instant's flows in the order they started. */
    if (e->n_started > 0) {
        int at = e->n_settled++;
        if (at + PREFETCH_DEPTH < e->n_started)
            prefetch_cursor(e, flow_cursor(e, e->started[at + PREFETCH_DEPTH]));
        if (at + 2 * PREFETCH_DEPTH / 3 < e->n_started)
            prefetch_conns(e, flow_cursor(e, e->started[at + 2 * PREFETCH_DEPTH / 3]));
        if (at + PREFETCH_DEPTH / 3 < e->n_started)
            prefetch_slots(e, flow_cursor(e, e->started[at + PREFETCH_DEPTH / 3]));
    }

    g_assert(c->wait == WAIT_FLOW);
    c->wait = WAIT_NONE;
    if (flow < e->n_cursors)
        finish_send(e, id, t);
    else
        finish_read(e, id, t, e->now);
}

/* Cursor @id starts the receive side of its step at @now, or waits for the message. */
static void
try_recv(Engine *e, gint32 id, CsTime now)
{
    Cursor *c = &e->cursors[id];
    gint32 conn_id = c->cur.conn_in;
    Conn *conn = &e->conns[conn_id];

    if (conn->n_consumed >= conn->n_sent
        || conn_msg(e, conn, conn->n_consumed)->arrive.t == CS_TIME_NEVER) {
        c->wait = WAIT_MSG;
        return;
    }
    receive(e, id, now);
}

/* The time a local copy or reduction of @rank takes: @work at the GPU's rate, shared
 * equally by the rank's channels when it moves nothing to or from other ranks (see
 * local_channels). Charging each channel the full rate made a one-rank tree all-reduce on 32
 * channels 32 times faster than the GPU's memory allows. Textbook mode keeps Hockney's
 * free-standing gamma. */
static CsTime
local_work(const Engine *e, int rank, CsTime work)
{
    return e->textbook ? work : work * MAX(1, e->ranks[rank].local_channels);
}

/* Cursor @id starts (or retries) the send side of its step at @now. A flow starts only from
 * the cursor's own EV_SEND (@own): never inside another cursor's handler or the model's
 * callback. */
static void
try_send(Engine *e, gint32 id, CsTime now, gboolean own)
{
    Cursor *c = &e->cursors[id];
    const EStep *st = &c->cur;
    Conn *conn = &e->conns[st->conn_out];
    gint32 k = conn->n_sent;

    if (k >= CS_NCCL_STEPS) {
        if (conn->n_consumed <= k - CS_NCCL_STEPS) {
            c->wait = WAIT_SLOT;
            return;
        }
        /* The slot of message k - 8, whose consumption freed it. */
        c->ready = stamp_later(c->ready, conn_msg(e, conn, k)->credit);
    }
    if (c->ready.t > now || !own) {
        push(e, MAX(c->ready.t, now), id, EV_SEND);
        return;
    }

    if (e->fan != NULL && e->mc[id].next == c->step) {
        send_member(e, id, now);
        return;
    }

    /* The flow starts now. */
    Msg *m = conn_msg(e, conn, k);
    CsTime end;
    conn->n_sent++;
    m->arrive.t = CS_TIME_NEVER;
    if (conn->route.n_links == 0) {
        /* To itself: a local copy, no link. */
        e->flow_first[id] = now;
        end = now
              + local_work(e, c->rank, work_ps(step_bytes(st), e->ranks[c->rank].copy_ps_per_byte));
    }
    else if (st->flags != 0) {
        end = start_flagged(e, id, conn, st, now);
    }
    else {
        double wire = (double)step_bytes(st) / e->data_fraction;
        end = e->model->start(e->net, now, &conn->route, wire, conn->cap_Bps, id,
                              &e->flow_first[id]);
    }
    if (end == CS_TIME_NEVER) {
        c->wait = WAIT_FLOW;
        e->unsettled = TRUE;
        if (e->model->settle != NULL)
            e->started[e->n_started++] = id;
        return;
    }
    finish_send(e, id, end);
}

/* A local step (copy, reduce) of cursor @id runs from its ready time. */
static void
run_local(Engine *e, gint32 id)
{
    Cursor *c = &e->cursors[id];
    const EStep *st = &c->cur;
    const RankInfo *ri = &e->ranks[c->rank];
    Stamp fin = c->ready;
    CsTime w = 0;

    if (st->does & DOES_REDUCE)
        w = work_ps(step_bytes(st), ri->reduce_ps_per_byte);
    else if (!e->textbook)
        w = work_ps(step_bytes(st), ri->copy_ps_per_byte);
    w = local_work(e, c->rank, w);
    fin.t += w;
    fin.g += w;
    step_finished(e, id, fin);
}

/* ---- Event handlers ---- */

/* Cursor @id's step begins at its ready time (which may lie after @now). */
static void
begin_step(Engine *e, gint32 id, CsTime now)
{
    Cursor *c = &e->cursors[id];
    guint8 does = c->cur.does;

    if (e->step_start != NULL)
        e->step_start[id] = c->ready.t;
    if (does & DOES_RECV)
        try_recv(e, id, now);
    else if (does & DOES_SEND)
        try_send(e, id, now, FALSE);
    else
        run_local(e, id);
}

static void
on_step(Engine *e, const CsEvent *ev)
{
    begin_step(e, ev->cursor, ev->time);
}

static void
on_send(Engine *e, const CsEvent *ev)
{
    try_send(e, ev->cursor, ev->time, TRUE);
}

/* Cursor @id reads its staged message out of host memory, from the first unit written there. */
static void
on_read(Engine *e, const CsEvent *ev)
{
    gint32 id = ev->cursor;
    Cursor *c = &e->cursors[id];
    const EStep *st = &c->cur;
    const Conn *conn = &e->conns[st->conn_in];
    double wire = (double)step_bytes(st) / e->data_fraction;
    CsTime end = e->model->start(e->net, ev->time, &conn->read, wire, conn->read_cap_Bps,
                                 id + e->n_cursors, &e->read_first[id]);

    if (end == CS_TIME_NEVER) {
        c->wait = WAIT_FLOW;
        e->unsettled = TRUE;
        if (e->model->settle != NULL)
            e->started[e->n_started++] = id + e->n_cursors;
        return;
    }
    finish_read(e, id, end, ev->time);
}

/* ---- Run ---- */

static void
run_loop(Engine *e)
{
    CsEvent ev;
    gboolean deferring = e->model->next_event_time != NULL;
    gboolean settling = e->model->settle != NULL;

    for (;;) {
        if (settling && e->unsettled) {
            /* The flows of this instant are all known once no event of it is left. */
            if (e->soon_n == 0 && next_time(e) > e->now) {
                e->unsettled = FALSE;
                e->n_settled = 0;
                e->model->settle(e->net, flow_done, e);
                e->n_started = 0;
                continue;
            }
        }
        if (deferring) {
            /* A flow ending now or before the next event goes first. */
            CsTime tm = e->model->next_event_time(e->net);
            CsTime next = e->soon_n > 0 ? e->now : next_time(e);
            if (tm != CS_TIME_NEVER && tm <= next) {
                e->n_events++;
                /* Events already due at @tm run before those the flows' ends queue. */
                if (e->soon_n == 0)
                    begin_instant(e, tm);
                else
                    e->now = tm;
                e->model->advance(e->net, tm, flow_done, e);
                continue;
            }
        }
        if (!next_event(e, &ev))
            break;
        e->n_events++;
        switch ((EventKind)ev.kind) {
        case EV_STEP:
            on_step(e, &ev);
            break;
        case EV_SEND:
            on_send(e, &ev);
            break;
        case EV_READ:
            on_read(e, &ev);
            break;
        }
    }
}

/* Names the first stuck cursor of a run that ran out of events. */
static gboolean
check_finished(const Engine *e, GError **error)
{
    static const char *const waits[] = { "an event", "a message", "a free slot", "its flow" };

    for (int i = 0; i < e->n_cursors; i++) {
        const Cursor *c = &e->cursors[i];
        if (c->step == e->ends[i])
            continue;
        gint32 local = e->local[c->step];
        const CsStep *st = &e->rank_steps[c->rank][local];
        g_set_error(error, CS_ENGINE_ERROR, CS_ENGINE_ERROR_DEADLOCK,
                    "deadlock: rank %d channel %d is stuck at step %d (%s) waiting for %s", c->rank,
                    cursor_channel(e, i), local, cs_step_kind_name(st->kind), waits[c->wait]);
        return FALSE;
    }
    return TRUE;
}

static void
engine_clear(Engine *e)
{
    if (e->net != NULL)
        e->model->destroy(e->net);
    g_free(e->rank_steps);
    g_aligned_free(e->steps);
    g_free(e->local);
    g_aligned_free(e->cursors);
    g_free(e->ends);
    g_free(e->flow_first);
    g_free(e->read_first);
    g_free(e->step_start);
    g_aligned_free(e->conns);
    g_free(e->conn_peer);
    g_aligned_free(e->msgs);
    g_free(e->ranks);
    g_free(e->route_links);
    g_free(e->flow_links);
    g_free(e->link_seen);
    g_free(e->flow_base);
    g_free(e->fan);
    g_free(e->mc);
    cs_event_heap_clear(&e->heap);
    g_free(e->soon);
    g_free(e->started);
    for (int k = 0; k < N_RUNS; k++)
        g_free(e->runs[k].ev);
}

/**
 * cs_engine_run:
 * @sched: a sealed schedule
 * @topo: the machine; its first cs_schedule_n_ranks() ranks run the schedule
 * @options: (nullable): how to run; NULL means all defaults
 * @error: CS_ENGINE_ERROR_MISMATCH when the schedule does not fit the topology (too many
 *   ranks, a protocol a route cannot carry, a malformed step), _DEADLOCK when a receive can
 *   never be matched, _MODEL for an unknown network model
 *
 * Simulates @sched (see the top of this file for what everything costs).
 * Returns: (transfer full) (nullable): the result, or NULL with @error set.
 */
CsResult *
cs_engine_run(const CsSchedule *sched, const CsTopo *topo, const CsEngineOptions *options,
              GError **error)
{
    static const CsEngineOptions defaults = { 0 };
    Engine e = { 0 };
    CsResult *res;

    g_return_val_if_fail(sched != NULL && topo != NULL, NULL);
    if (options == NULL)
        options = &defaults;
    e.model = cs_net_model_lookup(options->net_model, error);
    if (e.model == NULL)
        return NULL;
    e.sched = sched;
    e.topo = topo;
    e.textbook = options->textbook;
    e.all_ranks = cs_schedule_n_ranks(sched);
    e.n_ranks = cs_schedule_period(sched);
    e.n_channels = MAX(cs_schedule_n_channels(sched), 1);
    e.halves = cs_schedule_p2p_split(sched) ? 2 : 1;
    if (options->observer != NULL
        && (options->observer->step_done != NULL || options->observer->link_busy != NULL
            || options->observer->link_load != NULL))
        e.obs = options->observer;
    if (e.all_ranks > cs_topo_n_ranks(topo)) {
        g_set_error(error, CS_ENGINE_ERROR, CS_ENGINE_ERROR_MISMATCH,
                    "the schedule has %d ranks but topology %s has only %d", e.all_ranks,
                    cs_topo_name(topo), cs_topo_n_ranks(topo));
        return NULL;
    }
    if (e.n_ranks < e.all_ranks) {
        /* An observer sees every rank's events and every link: replay such a run whole. */
        if (e.obs != NULL) {
            g_set_error(error, CS_ENGINE_ERROR, CS_ENGINE_ERROR_ASYMMETRIC,
                        "a timeline needs every rank replayed, not one period of %d", e.n_ranks);
            return NULL;
        }
        e.conn_peer = g_new(gint32, 1); /* grown with the connections (conn_find()) */
    }
    clock_t t_setup = clock();
    if (!cs_engine_setup_programs(&e, error) || !cs_engine_memory_fits(&e, error)
        || !cs_engine_setup_costs(&e, options, error)) {
        engine_clear(&e);
        return NULL;
    }

    /* At most one pending event per cursor: a cursor with an event never waits, and only a
     * waiting cursor is woken. Twice that keeps a margin for the assertion. */
    cs_event_heap_init(&e.heap, 2 * (gsize)e.n_cursors);
    e.soon_mask = 1;
    while (e.soon_mask < 2 * (gsize)e.n_cursors)
        e.soon_mask *= 2;
    e.soon = g_new(CsEvent, e.soon_mask);
    /* At most one flow in flight per cursor and one per staged read. */
    e.started = g_new(gint32, 2 * (gsize)MAX(e.n_cursors, 1));
    for (int k = 0; k < N_RUNS; k++)
        e.runs[k].ev = g_new(CsEvent, e.soon_mask);
    e.soon_mask -= 1;
    e.now = -1;
    for (int i = 0; i < e.n_cursors; i++) {
        Cursor *c = &e.cursors[i];
        if (c->step == e.ends[i])
            continue;
        c->cur = e.steps[c->step];
        c->ready.t = e.ranks[c->rank].launch_ps;
        push(&e, c->ready.t, i, EV_STEP);
    }
    clock_t t_loop = clock();
    run_loop(&e);
    g_debug("%d ranks, %d channels, %d connections: set-up %.3f s, %" G_GINT64_FORMAT
            " events in %.3f s (CPU)",
            e.n_ranks, e.n_channels, e.n_conns, (double)(t_loop - t_setup) / CLOCKS_PER_SEC,
            e.n_events, (double)(clock() - t_loop) / CLOCKS_PER_SEC);
    if (!check_finished(&e, error)) {
        engine_clear(&e);
        return NULL;
    }

    res = g_new0(CsResult, 1);
    res->n_ranks = e.all_ranks;
    res->rank_finish = g_new(CsTime, MAX(e.all_ranks, 1));
    Stamp last = { 0 };
    for (int r = 0; r < e.n_ranks; r++)
        last = stamp_later(last, e.ranks[r].finish);
    /* Every image of a replayed rank finishes with it. */
    for (int r = 0; r < e.all_ranks; r++)
        res->rank_finish[r] = e.ranks[r % e.n_ranks].finish.t;
    res->time = last.t;
    res->alpha = last.a;
    res->beta = last.b;
    res->gamma = last.g;
    res->overhead = last.t - last.a - last.b - last.g;
    res->n_events = e.n_events;
    res->n_transfers = e.n_transfers * (e.all_ranks / e.n_ranks);
    res->bytes_moved = e.bytes_moved * (e.all_ranks / e.n_ranks);
    engine_clear(&e);
    return res;
}

/* Frees a result and its per-rank array; NULL is fine. */
void
cs_result_free(CsResult *result)
{
    if (result == NULL)
        return;
    g_free(result->rank_finish);
    g_free(result);
}

/* ---- nccl-tests figures ---- */

/* The simulated time in microseconds, as nccl-tests prints it. */
double
cs_result_time_us(const CsResult *result)
{
    return cs_time_to_us(result->time);
}

/* nccl-tests' algbw: size / time in GB/s (1e9 B/s); 0 for a zero time. */
double
cs_result_algbw_GBps(const CsResult *result, const CsOpSize *size)
{
    if (result->time <= 0)
        return 0.0;
    return (double)size->size_bytes / cs_time_to_s(result->time) / 1e9;
}

/* nccl-tests' busbw: algbw times the collective's bus factor (op.h). */
double
cs_result_busbw_GBps(const CsResult *result, const CsOpSize *size, CsOp op, int nranks)
{
    return cs_result_algbw_GBps(result, size) * cs_op_busbw_factor(op, nranks);
}
