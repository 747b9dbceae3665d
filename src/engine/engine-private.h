// SPDX-License-Identifier: MIT
/* What the engine's files share (STYLE §2: a *-private.h when two files share a struct): the
 * event and its flat-array binary heap (engine.c and its tests), and the engine's state, which
 * engine_setup.c builds and engine.c's run loop walks. */
#pragma once

#include <glib.h>

#include "base/units.h"
#include "engine/engine.h"
#include "models/netmodel.h"

G_BEGIN_DECLS

/**
 * CsEvent:
 * One pending event, stored by value in the heap. Size budget: 32 bytes (current: 24).
 * Ordered by (@time, @seq): @seq is the heap's insertion counter, so ties resolve the same
 * way on every run (STYLE §4).
 */
typedef struct {
    CsTime time;   /* ps */
    guint64 seq;   /* insertion order, tie breaker */
    gint32 cursor; /* the (rank, channel) program it wakes */
    guint32 kind;  /* what it does (EventKind) */
} CsEvent;

G_STATIC_ASSERT(sizeof(CsEvent) <= 32);

/**
 * CsEventHeap:
 * A min-heap of events in one array sized once: pushing beyond @capacity is a programming
 * error, never a reallocation (no allocation in the hot loop).
 */
typedef struct {
    CsEvent *ev;
    gsize n;
    gsize capacity;
    guint64 next_seq;
    gboolean hole; /* the root was taken and awaits a push or a settle */
} CsEventHeap;

void cs_event_heap_init(CsEventHeap *heap, gsize capacity);
void cs_event_heap_clear(CsEventHeap *heap);
void cs_event_heap_push(CsEventHeap *heap, CsTime time, gint32 cursor, guint32 kind);
/* Removes the earliest event into @out; FALSE when empty. */
gboolean cs_event_heap_pop(CsEventHeap *heap, CsEvent *out);
/* Copies the earliest event into @out and leaves a hole at the root that the next push fills
 * (a pop and a push cost one sift); FALSE when empty. */
gboolean cs_event_heap_take(CsEventHeap *heap, CsEvent *out);
/* Closes a hole left by cs_event_heap_take() that no push filled. */
void cs_event_heap_settle(CsEventHeap *heap);

/* ---- The engine's state ---- */

/* A time with the critical-path parts that led to it; overhead = t - a - b - g. */
typedef struct {
    CsTime t;
    CsTime a; /* alpha: link and protocol latency */
    CsTime b; /* beta: serialization, including queueing */
    CsTime g; /* gamma: reduction and copy work */
} Stamp;

typedef enum {
    EV_STEP, /* a cursor's step begins */
    EV_SEND, /* it may start sending (its data is in, or a slot came back) */
    EV_READ, /* it may start reading a message out of host memory */
} EventKind;

typedef enum {
    WAIT_NONE, /* an event is pending, or the cursor is done */
    WAIT_MSG,  /* for the next message of the step's conn_in */
    WAIT_SLOT, /* for a free slot on the step's conn_out */
    WAIT_FLOW, /* for the model to report its flow's end */
} WaitKind;

/* What a step kind does, as bits. */
enum {
    DOES_RECV = 1,
    DOES_SEND = 2,
    DOES_REDUCE = 4,
    /* A received summand a SHARP switch added: nothing to do (mark_switch_sums). */
    DOES_NO_WORK = 8,
    /* A send whose e->fan names a member: it leads a multicast, or a member follows it. */
    DOES_FANS = 16,
};

/* A step as the engine walks it: what it moves and where. Size: 16 bytes, four to a cache
 * line: the walk over millions of steps is the engine's main memory stream. */
typedef struct {
    gint32 conn_in;   /* connection received from, -1 */
    gint32 conn_out;  /* connection sent on, -1 */
    guint32 bytes_lo; /* bytes moved, 48 bits in two parts */
    guint16 bytes_hi;
    guint8 does;  /* DOES_* bits */
    guint8 flags; /* CsStepFlags of its message */
} EStep;

G_STATIC_ASSERT(sizeof(EStep) == 16);

static inline gint64
step_bytes(const EStep *st)
{
    return ((gint64)st->bytes_hi << 32) | st->bytes_lo;
}

/* One (rank, channel) program: its steps are e->steps[step .. Engine.ends[id]). Size: two
 * cache lines, 64-byte aligned: the first is what every step reads and writes, the second
 * what a forwarding step adds. What only a send, a staged read or an observer needs lives in
 * per-cursor arrays of Engine (flow_first, read_first, step_start). */
typedef struct {
    EStep cur;   /* e->steps[step], copied when the step begins */
    Stamp ready; /* when the current phase may proceed */
    gint32 step; /* current step, == ends[id] when done */
    gint32 rank;
    guint8 wait; /* WaitKind: WAIT_MSG waits on cur.conn_in, WAIT_SLOT on cur.conn_out */
    guint8 cut;  /* the current step forwards cut-through: it ends with its send */
    _Alignas(64) Stamp recv_done; /* forwarding step: when its receive side is done */
    Stamp in_last;                /* forwarding step: last input unit arrived and processed */
} Cursor;

G_STATIC_ASSERT(sizeof(Cursor) == 128);

/* One direction of one channel between two ranks. Size: three cache lines, 64-byte aligned:
 * the first holds what every message reads and writes (counters, latencies, cap), the second
 * the route a flow takes, the third what staged routes and the set-up read. */
typedef struct {
    _Alignas(64) gint32 n_sent;
    gint32 n_consumed;
    gint32 slot_base; /* first of its Msg slots */
    gint32 slot_mask; /* slots - 1: a power of two, at most CS_NCCL_STEPS */
    gint32 src_cursor;
    gint32 dst_cursor;
    CsTime prop_ps;   /* route alpha + protocol hop latency (staged: the write leg's alpha) */
    CsTime credit_ps; /* slot-return latency: the reverse route's alpha */
    CsTime sync_ps;   /* the sender's step overhead: fence and flag before it is seen */
    double cap_Bps;   /* bytes/s: what one channel can drive on this route, 0 = no cap */
    /* Shared hops (CsStepFlags): the route's first @split links lead into the reducing
     * switch, the rest out of it; the reverse route (@back, @back_n links, packed after the
     * route in Engine.route_links) likewise splits at @back_split (receiver -> switch, then
     * switch -> sender). */
    gint16 back_n;
    gint16 back_split;
    gint16 split;
    guint8 nvls;   /* the reducing switch is an NVSwitch: flagged traffic gets nvlsEfficiency */
    CsRoute route; /* a copy; links point into Engine.route_links */
    const int *back;
    gint32 n_msgs;  /* messages over the whole run */
    gint32 n_recvs; /* receives matched to it (set-up check) */
    /* Staged through host memory: @route is the sender's leg into it and @read the leg the
     * receiver's channel reads out (0 links otherwise), with that leg's latency and cap. */
    CsRoute read;
    CsTime read_prop_ps;
    double read_cap_Bps;
} Conn;

G_STATIC_ASSERT(sizeof(Conn) == 192);

/* A message in a slot: sent, arrived, consumed. Size: 64 bytes, one cache line. The first
 * byte's time is needed only until the message is consumed, and the consumption's stamp only
 * until the sender reuses the slot, after which the next message's first byte is written:
 * they share the storage. */
typedef struct {
    Stamp arrive; /* last byte at the receiver; t = CS_TIME_NEVER while in flight */
    union {
        CsTime first; /* ps: first byte at the receiver (arrived, not yet consumed) */
        Stamp credit; /* slot free again at the sender (consumed) */
    };
} Msg;

G_STATIC_ASSERT(sizeof(Msg) == 64);

/* A cursor's last multicast leader: when its bytes left, and which member comes next. */
typedef struct {
    Stamp left;   /* the leader's flow had left its source */
    CsTime first; /* ps: its first byte left */
    gint32 next;  /* EStep index of the next member served by it, -1 */
} Multicast;

/* Per-rank constants and results. */
typedef struct {
    double reduce_ps_per_byte;
    double copy_ps_per_byte;
    double nvls_wire; /* wire bytes per byte of its NVLS (flagged) messages: 1 / efficiency */
    CsTime step_ps;
    CsTime launch_ps;
    int local_channels; /* channels sharing its copy rate: those with work on a rank that
                         * moves nothing to or from other ranks; 0 otherwise */
    Stamp finish;
} RankInfo;

/* How many future times get a FIFO of their own (see push()). */
#define N_RUNS 4

/* A FIFO ring of future events all at @t, in seq order. */
typedef struct {
    CsEvent *ev;
    gsize head;
    gsize n;
    CsTime t; /* ps */
} Run;

typedef struct {
    const CsSchedule *sched;
    const CsTopo *topo;
    const CsNetModel *model;
    CsNetState *net;
    const CsObserver *obs; /* NULL when no callback is set */
    gboolean textbook;
    gboolean any_staged; /* some connection is staged: read flows are cursor + n_cursors */
    int n_ranks;         /* ranks replayed: the schedule's period */
    int all_ranks;       /* ranks of the schedule (n_ranks, times the copies of a period) */
    int n_channels;
    int halves;        /* cursors per channel: 2 where sends and receives run apart (p2p), else 1 */
    gint32 *conn_peer; /* per connection of a period's replay: its real destination rank */

    const CsStep **rank_steps; /* per rank (transfer none) */
    EStep *steps;              /* cursor-major, each cursor's steps in order */
    gint32 n_steps;
    gint32 *local;   /* per EStep: its index in the rank's program (cold) */
    Cursor *cursors; /* ((rank * n_channels + channel) * halves + half), see cursor_of() */
    int n_cursors;
    gint32 *ends;       /* per cursor: one past its last step */
    CsTime *flow_first; /* per cursor, ps: when its flow in flight began to leave */
    CsTime *read_first; /* per cursor, ps: when its read out of host memory began */
    CsTime *step_start; /* per cursor when observed, ps: when its current step began */
    Conn *conns;
    int n_conns;
    int conns_cap;
    Msg *msgs;
    RankInfo *ranks;
    int *route_links; /* every connection's route, packed (cache-friendly copies) */
    int *flow_links;  /* per cursor, from flow_base[id]: the links its flagged flow charges */
    gint32 *flow_base;
    guint32 *link_seen; /* per topology link when any_flags: flow_charged_links()' marks */
    guint32 link_epoch; /* the mark of the latest such set */
    gboolean any_flags; /* some step carries CsStepFlags */
    gint32 *fan;        /* per EStep when any_flags: next member of its multicast, -1 */
    Multicast *mc;      /* per cursor when any_flags: its multicast in progress */

    CsEventHeap heap;
    CsEvent *soon;    /* FIFO ring of events at the current time (see push()) */
    gsize soon_head;  /* next to run */
    gsize soon_n;     /* queued */
    gsize soon_mask;  /* ring size - 1, also of each run's */
    Run runs[N_RUNS]; /* runs of future events, each of one time, in seq order */
    gint32 *started;  /* flows started this instant, in order (settle models report them so) */
    int n_started;
    int n_settled;      /* of them, reported by the model so far */
    CsTime now;         /* ps: time of the event being handled */
    gboolean unsettled; /* a flow started this instant has no end yet (read by settle models) */
    int eager_depth;    /* steps begun inside one another (step_finished) */
    double data_fraction;
    double grain_bytes; /* data bytes one flag covers (see the top comment) */
    CsTime hop_ps[CS_N_LINK_CLASSES];

    gint64 n_events;
    gint64 n_transfers;
    gint64 bytes_moved;
} Engine;

/* The cursor that runs @rank's steps on @channel that do @does. NCCL's p2p kernel gives a
 * channel's sends and its receives separate warps (cs_schedule_p2p_split()): two cursors, the
 * sending half first; every other schedule runs a channel's steps on one cursor, in order. */
static inline gint32
cursor_of(const Engine *e, int rank, int channel, guint8 does)
{
    gint32 first = (rank * e->n_channels + channel) * e->halves;
    return e->halves == 2 && (does & DOES_RECV) ? first + 1 : first;
}

static inline int
cursor_rank(const Engine *e, gint32 cursor)
{
    return cursor / (e->n_channels * e->halves);
}

static inline int
cursor_channel(const Engine *e, gint32 cursor)
{
    return cursor / e->halves % e->n_channels;
}

/* What one channel can drive over @links: one link of each NVLink-class bond (bw / count),
 * the slowest of them; 0 when that is no less than the slowest link's bandwidth. PCIe lanes
 * and network ports stripe a transfer over all of them. */
static inline double
links_cap(const CsTopo *topo, const int *links, int n_links)
{
    double cap = 0.0;
    double slowest = 0.0;

    for (int i = 0; i < n_links; i++) {
        const CsLink *l = cs_topo_link(topo, links[i]);
        slowest = i == 0 ? l->bw_Bps : MIN(slowest, l->bw_Bps);
        if (cs_link_kind_class(l->kind) != CS_LINK_CLASS_NVLINK)
            continue;
        double lane = l->bw_Bps / MAX(l->count, 1);
        cap = cap == 0.0 ? lane : MIN(cap, lane);
    }
    return cap < slowest ? cap : 0.0;
}

/* ---- Set-up (engine_setup.c) ---- */

/* Each (rank, channel) program's steps in walking order (checked against the schedule's
 * shape), the cursors and the connections their sends and receives use. */
gboolean cs_engine_setup_programs(Engine *e, GError **error);
/* Whether what the run still allocates fits the memory budget (CS_SCHEDULE_ERROR_TOO_LARGE). */
gboolean cs_engine_memory_fits(const Engine *e, GError **error);
/* Routes, latencies and message slots of every connection; the ranks' constants. */
gboolean cs_engine_setup_costs(Engine *e, const CsEngineOptions *options, GError **error);

G_END_DECLS
