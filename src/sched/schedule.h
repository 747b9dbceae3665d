// SPDX-License-Identifier: MIT
/* Schedule IR: for each rank an ordered program of steps on channels, mirroring NCCL's
 * primitives. Algorithms build it; the checker, the engine and the backends execute it. */
#pragma once

#include <glib.h>

#include "base/op.h"
#include "models/protocol.h"

G_BEGIN_DECLS

#define CS_SCHEDULE_ERROR (cs_schedule_error_quark())
GQuark cs_schedule_error_quark(void);

typedef enum {
    CS_SCHEDULE_ERROR_INVALID,      /* malformed: bad peer, region out of bounds, ... */
    CS_SCHEDULE_ERROR_DEADLOCK,     /* a receive never matched */
    CS_SCHEDULE_ERROR_WRONG_RESULT, /* runs, but does not compute the collective */
    CS_SCHEDULE_ERROR_UNSUPPORTED,  /* the algorithm cannot build this case */
    CS_SCHEDULE_ERROR_TOO_LARGE,    /* more than cs_schedule_max_steps() steps */
} CsScheduleError;

/**
 * CsBuffer:
 * The buffers of one rank. INPUT and OUTPUT are the collective's send and receive buffers
 * (sizes from CsOpSize); SCRATCH is algorithm-private memory.
 */
typedef enum { CS_BUF_INPUT, CS_BUF_OUTPUT, CS_BUF_SCRATCH, CS_N_BUFS } CsBuffer;

/**
 * CsStepKind:
 * NCCL's primitives (src/device/prims_*.h). "Received data" is the message that the
 * matching send put in this rank's slot; "local" is the @src region.
 *
 * - SEND:                 send @src to @send_peer.
 * - RECV:                 receive from @recv_peer into @dst.
 * - RECV_REDUCE:          @dst = received (+) @src.
 * - RECV_REDUCE_SEND:     send received (+) @src to @send_peer; nothing stored.
 * - RECV_REDUCE_COPY_SEND: @dst = received (+) @src, and send it to @send_peer.
 * - RECV_COPY_SEND:       receive into @dst and forward the same bytes to @send_peer.
 * - COPY:                 @dst = @src, locally.
 * - REDUCE:               @dst = @dst (+) @src, locally.
 */
typedef enum {
    CS_STEP_SEND,
    CS_STEP_RECV,
    CS_STEP_RECV_REDUCE,
    CS_STEP_RECV_REDUCE_SEND,
    CS_STEP_RECV_REDUCE_COPY_SEND,
    CS_STEP_RECV_COPY_SEND,
    CS_STEP_COPY,
    CS_STEP_REDUCE,
    CS_N_STEP_KINDS
} CsStepKind;

/**
 * CsStepFlags:
 * How the message of a sending step crosses a switch that reduces and multicasts itself
 * (NVLink SHARP on an NVSwitch; SHARP on an InfiniBand switch, CollNet). They change what the
 * engine charges to links, never the data: the checker proves the same result with or without them
 * (and that they are used consistently).
 *
 * A group is the set of messages that one NVLS operation stands for in the IR, which has
 * rank-to-rank messages only: a multimem.st multicast from one rank to its peers, or a
 * multimem.ld_reduce that sums the peers' copies in the switch for one receiver. Its leader
 * pays the shared hop; the other members carry a SHARED flag.
 *
 * - SHARED_FIRST_HOP: a multicast member. The message is the same bytes as the previous
 *   send of this rank on this channel (its leader or another member: a SEND of the same
 *   source region), so its first hop (sender -> switch) is charged once, by the leader.
 * - SHARED_LAST_HOP: an in-switch reduction member. Its last hop (switch -> receiver)
 *   carries the sum the switch already combined with the group's other messages, charged
 *   once, by the leader; the receiver must reduce it (a RECV_REDUCE* step) into the same
 *   region as its previous receive on this channel (the group's earlier member).
 * - MULTICAST_SELF: a multicast leader whose multicast also lands on the sender itself (an
 *   NVLS multicast group includes the issuing GPU): the switch -> sender hop is charged too.
 * - REDUCE_SELF: an in-switch reduction leader whose reduction also reads the receiver's own
 *   copy (ld_reduce reads every member, the issuer included): the receiver -> switch hop is
 *   charged too; the receiver must reduce the message.
 * - FROM_SWITCH: a multicast leader whose bytes are already in the switch: the sum of the
 *   in-switch reduction the sender has just received (its latest reducing receive on this
 *   channel took an in-switch message and wrote exactly the region sent). SHARP returns a
 *   reduction's result from the switch to every member at once (CollNet); the IR writes it
 *   as the reduction into one member followed by that member's multicast, whose first hop
 *   (sender -> switch) is then not charged.
 *
 * The "hop" into or out of the switch is every link of the route up to the reducing switch
 * (the first device on it that reduces: an NVSwitch with multicast_reduction, or a network
 * switch with sharp) or after it: one NVLink for NVLS, GPU -> NIC -> leaf switch for SHARP.
 */
typedef enum {
    CS_STEP_FLAG_SHARED_FIRST_HOP = 1 << 0,
    CS_STEP_FLAG_SHARED_LAST_HOP = 1 << 1,
    CS_STEP_FLAG_MULTICAST_SELF = 1 << 2,
    CS_STEP_FLAG_REDUCE_SELF = 1 << 3,
    CS_STEP_FLAG_FROM_SWITCH = 1 << 4,
} CsStepFlags;

/* Every defined CsStepFlags bit. */
#define CS_STEP_FLAGS_ALL 0x1f

/**
 * CsStep:
 * One step of a rank's program. Size budget: 48 bytes (a 1,024-rank chunked ring has
 * millions of them).
 *
 * Matching: the k-th receive of rank r from peer p on channel c takes the k-th message that
 * p sent to r on channel c. Every step moves @bytes; @src and @dst regions are @bytes long.
 * A step waits for the previous step of the same rank on the same channel.
 */
typedef struct {
    gint64 src_offset; /* bytes: into @src_buf */
    gint64 dst_offset; /* bytes: into @dst_buf */
    gint64 bytes;      /* bytes moved, received or reduced */
    gint32 send_peer;  /* rank sent to, -1 if the step sends nothing */
    gint32 recv_peer;  /* rank received from, -1 if the step receives nothing */
    gint32 chunk;      /* chunk index within the algorithm (for explain / timelines) */
    guint8 kind;       /* CsStepKind */
    guint8 src_buf;    /* CsBuffer read locally (unused by RECV) */
    guint8 dst_buf;    /* CsBuffer written locally (unused by SEND, RECV_REDUCE_SEND) */
    guint8 channel;    /* channel index < n_channels */
    guint8 flags;      /* CsStepFlags of a sending step's message, 0 otherwise */
} CsStep;

G_STATIC_ASSERT(sizeof(CsStep) <= 48);

typedef struct _CsSchedule CsSchedule;

/* Starts a schedule for @op over @nranks ranks. Buffer sizes come from cs_op_size().
 * (transfer full) */
CsSchedule *cs_schedule_new(CsOp op, int nranks, int root, gint64 size_bytes, CsDtype dtype,
                            CsRedop redop, CsProto proto, int n_channels);
void cs_schedule_free(CsSchedule *sched);

/* Declares per-rank scratch memory (bytes), default 0. */
void cs_schedule_set_scratch(CsSchedule *sched, gint64 scratch_bytes);
/* Records the algorithm that built it (static string). */
void cs_schedule_set_algo(CsSchedule *sched, const char *algo_name);
/* Each channel's sends and receives run side by side (NCCL's p2p kernel); default FALSE. */
void cs_schedule_set_p2p_split(CsSchedule *sched, gboolean split);
/* Which of its GPU's NICs each channel's network connections use, as an index NCCL's
 * ncclTopoGetLocalNet takes for a channel (cs_topo_route_channel()): @lanes has one entry per
 * channel, copied. Default: a channel's own index (NCCL's p2p connections). A ring that starts
 * its channels at each GPU in turn gives the channels that share a GPU its NICs in turn, as
 * NCCL's graph search does (ncclTopoPrefNetsGpuFirst). */
void cs_schedule_set_nic_lanes(CsSchedule *sched, const int *lanes);
/* The NIC lane of @channel. */
int cs_schedule_nic_lane(const CsSchedule *sched, int channel);

/* Ranks 0 .. @period - 1 hold steps; the others repeat them shifted (see schedule.c). */
void cs_schedule_set_period(CsSchedule *sched, int period);
/* The period: cs_schedule_n_ranks() unless set. */
int cs_schedule_period(const CsSchedule *sched);

/* The most steps a schedule holds: about 5 GB of steps, and as much again in the engine or the
 * checker. A 1,024-rank ring on 32 channels is 67 M. Steps past it are dropped and the
 * schedule is marked (cs_schedule_overflowed()); cs_algo_build() then refuses it. */
#define CS_SCHEDULE_MAX_STEPS ((gsize)100000000)

/* Bytes of memory one step may cost at the peak of a point: while it is built, its array
 * holds up to twice its steps (it doubles) and cs_schedule_seal() may copy them into one
 * array beside it (3 x 48 B); the engine then adds 24 B a step to the sealed 48. */
#define CS_SCHEDULE_STEP_PEAK_BYTES ((gsize)(3 * sizeof(CsStep)))

/* The most steps a schedule built now may hold: CS_SCHEDULE_MAX_STEPS, or fewer where the
 * memory budget (base/membudget.h) divided by CS_SCHEDULE_STEP_PEAK_BYTES is smaller. */
gsize cs_schedule_max_steps(void);

/* Why a schedule of more than cs_schedule_max_steps() steps is refused, for an error message:
 * "more than 100000000 steps, too many to hold in memory" where the memory budget holds
 * those; else what @est_steps steps (0 or less: unknown) need, beside the budget and where it
 * comes from ("about 12000000 steps: 1.6 GiB of memory at 144 B a step, beyond the memory
 * budget of 1.0 GiB (COLLSIM_MEMORY_LIMIT=1G)"). (transfer full) */
char *cs_schedule_limit_reason(double est_steps);

/* Whether steps were dropped past cs_schedule_max_steps() (by cs_schedule_add(), or by a
 * builder's own buffer: cs_schedule_mark_overflowed()). */
gboolean cs_schedule_overflowed(const CsSchedule *sched);
void cs_schedule_mark_overflowed(CsSchedule *sched);

/* Appends @step to @rank's program. Only before cs_schedule_seal(). */
void cs_schedule_add(CsSchedule *sched, int rank, const CsStep *step);
/* Room for @n_steps more steps in @rank's program (appending them then copies nothing). */
void cs_schedule_reserve(CsSchedule *sched, int rank, gsize n_steps);
/* Room for @n_steps more steps in all, to be appended rank by rank from @first_rank on. */
void cs_schedule_reserve_ranks(CsSchedule *sched, int first_rank, gsize n_steps);

/* Convenience appenders; each fills a CsStep and calls cs_schedule_add(). */
void cs_schedule_send(CsSchedule *sched, int rank, int channel, int peer, CsBuffer buf,
                      gint64 offset, gint64 bytes, int chunk);
void cs_schedule_recv(CsSchedule *sched, int rank, int channel, int peer, CsBuffer buf,
                      gint64 offset, gint64 bytes, int chunk);
/* The general form: every field explicit. */
void cs_schedule_step(CsSchedule *sched, int rank, int channel, CsStepKind kind, int recv_peer,
                      int send_peer, CsBuffer src_buf, gint64 src_offset, CsBuffer dst_buf,
                      gint64 dst_offset, gint64 bytes, int chunk);

/* Packs the per-rank programs into one array; no more steps may be added. */
void cs_schedule_seal(CsSchedule *sched);
/* @copies communicators running @sched at once, on ranks i x n + j (see schedule.c). */
CsSchedule *cs_schedule_replicate(const CsSchedule *sched, int copies, gboolean periodic,
                                  GError **error);

CsOp cs_schedule_op(const CsSchedule *sched);
int cs_schedule_n_ranks(const CsSchedule *sched);
int cs_schedule_root(const CsSchedule *sched);
CsDtype cs_schedule_dtype(const CsSchedule *sched);
CsRedop cs_schedule_redop(const CsSchedule *sched);
CsProto cs_schedule_proto(const CsSchedule *sched);
int cs_schedule_n_channels(const CsSchedule *sched);
const CsOpSize *cs_schedule_size(const CsSchedule *sched);
const char *cs_schedule_algo(const CsSchedule *sched);
gboolean cs_schedule_p2p_split(const CsSchedule *sched);
/* Bytes of @buf on every rank. */
gint64 cs_schedule_buffer_bytes(const CsSchedule *sched, CsBuffer buf);

/* The sealed program of @rank (transfer none). */
const CsStep *cs_schedule_steps(const CsSchedule *sched, int rank, gsize *n_steps);
gsize cs_schedule_n_steps(const CsSchedule *sched); /* all ranks */

const char *cs_step_kind_name(CsStepKind kind);
gboolean cs_step_kind_sends(CsStepKind kind);
gboolean cs_step_kind_recvs(CsStepKind kind);
/* Whether the step reads its local @src region / writes its local @dst region. */
gboolean cs_step_kind_reads_src(CsStepKind kind);
gboolean cs_step_kind_writes_dst(CsStepKind kind);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(CsSchedule, cs_schedule_free)

G_END_DECLS
