// SPDX-License-Identifier: MIT
/* The algorithm interface: each file in src/algos/ exports one CsAlgo that builds schedules. */
#pragma once

#include <glib.h>

#include "base/op.h"
#include "sched/schedule.h"
#include "topo/topo.h"

G_BEGIN_DECLS

/**
 * CsAlgoShares:
 * Which shares of a loop each rank's steps carry. A ring all-reduce cuts a channel's last
 * loop into P chunks of ceil(rest / P) elements, the last ones shorter (NCCL's runRing), so
 * rank r and rank r + T move different bytes and the schedule does not repeat under a shift
 * of T ranks (CsAlgo.period) although its rings do. With args->period_min set, a bound makes
 * it repeat: each chunk is taken as the smallest (@CS_ALGO_SHARES_LOW) or the largest
 * (@CS_ALGO_SHARES_HIGH) of the chunks it stands for under the period (chunks j, j + T,
 * j + 2T, ... of the ring). Such a schedule is a bracket's end for the predictor, not a
 * program: its offsets stay in the buffers but its data do not add up.
 * @CS_ALGO_SHARES_EXACT: every chunk as the algorithm cuts it.
 */
typedef enum {
    CS_ALGO_SHARES_EXACT,
    CS_ALGO_SHARES_LOW,
    CS_ALGO_SHARES_HIGH,
} CsAlgoShares;

/**
 * CsAlgoArgs:
 * What an algorithm needs to build one schedule. @topo may be NULL: algorithms that use the
 * node structure (hierarchical, NVLS, tree across nodes) then treat all ranks as one node.
 */
typedef struct {
    const CsTopo *topo; /* (nullable) the machine, for node structure and rings */
    CsOp op;
    int nranks;
    int root;          /* rank; ignored by rootless collectives */
    gint64 size_bytes; /* bytes: nccl-tests' size column */
    CsDtype dtype;
    CsRedop redop;
    CsProto proto;
    int n_channels;          /* channels (NCCL's parallel rings/trees), >= 1 */
    int peer_channels;       /* channels each peer's message is striped over (grouped send/recv);
                                0 = all n_channels */
    gint64 chunk_bytes;      /* bytes: pipeline chunk per channel step, 0 = protocol default */
    gint64 net_chunk_bytes;  /* bytes: grouped send/recv's chunk for a message between NVLink
                                domains (NCCL's network chunk for small messages); 0 =
                                chunk_bytes */
    const CsTopo *placement; /* (nullable) with net_chunk_bytes: the machine whose first
                                nranks ranks run the schedule, for where each rank sits (set
                                also when @topo is not: fewer ranks than the machine) */
    int period_min;          /* 0: every rank's program. >= 1: where the schedule repeats under a
                                shift of T >= period_min ranks (CsAlgo.period), build ranks
                                0..T-1 only (cs_schedule_set_period()), for the engine */
    CsAlgoShares shares;     /* with period_min: unequal shares bounded so that the schedule
                                repeats (CsAlgoShares); EXACT otherwise */
} CsAlgoArgs;

typedef struct _CsAlgo CsAlgo;

/**
 * CsAlgoBound:
 * What a schedule must do whatever the machine: @chain messages in a row, each sent only
 * once the one before it has arrived (its first unit, for a forwarding step), so the run
 * lasts at least @chain route latencies; and @bytes_sent bytes sent by all ranks together
 * (local copies not counted), so it lasts at least that over the ranks' summed egress.
 */
typedef struct {
    gint64 chain;
    gint64 bytes_sent;
} CsAlgoBound;

/**
 * CsAlgo:
 * @name:      CLI spelling ("ring").
 * @summary:   one line for --help and `collsim algos`.
 * @reference: paper, or NCCL file and version.
 * @ops:       collectives it implements.
 * @supports:  whether it applies to @op on @nranks ranks of @topo (@topo nullable); on FALSE
 *             sets @why to a static string.
 * @build:     builds the schedule (transfer full), or NULL with @error set.
 * @chunk:     (nullable) the chunk per channel step @build cuts for @args when
 *             args->chunk_bytes is 0, where that depends on more than the protocol (NVLS:
 *             NCCL shrinks it for small sizes). NULL: cs_algo_chunk_bytes().
 * @parts:     (nullable) into how many parts, each one chunk further per loop, @build cuts
 *             a channel's data (a ring: one per rank; NVLS: one per head; a tree: 1). NULL:
 *             one per rank.
 * @period:    (nullable) the smallest T >= args->period_min dividing args->nranks under whose
 *             rank shift @build's schedule repeats (same steps, peers shifted by T, same
 *             bytes), or args->nranks when none does or period_min is 0; @build then builds
 *             ranks 0..T-1 only. With args->shares not EXACT, unequal shares are no obstacle
 *             (@build bounds them: CsAlgoShares). NULL: never.
 * @bound:     (nullable) what any run of @build's schedule for @args must at least do,
 *             known without building it (CsAlgoBound); FALSE when unknown. The predictor
 *             skips a candidate whose lower bound is already beaten, so it must never
 *             overstate: tests hold it against the schedule and the engine.
 */
struct _CsAlgo {
    const char *name;
    const char *summary;
    const char *reference;
    CsOpMask ops;
    gboolean (*supports)(const CsTopo *topo, CsOp op, int nranks, const char **why);
    CsSchedule *(*build)(const CsAlgoArgs *args, GError **error);
    gint64 (*chunk)(const CsAlgoArgs *args);
    int (*parts)(const CsAlgoArgs *args);
    int (*period)(const CsAlgoArgs *args);
    gboolean (*bound)(const CsAlgoArgs *args, CsAlgoBound *out);
};

/* Fills @args with defaults: root 0, float, sum, Simple, 1 channel, protocol chunk. */
void cs_algo_args_init(CsAlgoArgs *args, const CsTopo *topo, CsOp op, int nranks,
                       gint64 size_bytes);

/* Protocol default chunk per channel step, in bytes, rounded to the datatype. */
gint64 cs_algo_default_chunk(const CsAlgoArgs *args);

/* The period @algo's schedule for @args would be built with (CsAlgo.period): args->nranks
 * when it builds every rank. */
int cs_algo_period(const CsAlgo *algo, const CsAlgoArgs *args);

/* Builds with @algo after checking ops/supports; the error names algo and op on refusal. */
CsSchedule *cs_algo_build(const CsAlgo *algo, const CsAlgoArgs *args, GError **error);

/* ---- Helpers for the algorithm files ---- */

/* An empty schedule for @args: op, ranks, root, size, datatype, operator, protocol and
 * channels. (transfer full) */
CsSchedule *cs_algo_schedule_new(const CsAlgoArgs *args);

/* Part @i of @count items cut into @parts nearly equal contiguous parts (the first
 * count % parts parts get one more): its first item and length. */
void cs_algo_split(gint64 count, int parts, int i, gint64 *first, gint64 *n);

/* The pipeline chunk in bytes: @args->chunk_bytes, or cs_algo_default_chunk() when 0; whole
 * elements, at least one. */
gint64 cs_algo_chunk_bytes(const CsAlgoArgs *args);

/* The chunk per channel step @algo's schedule for @args is cut into: its @chunk hook's when
 * args->chunk_bytes is 0 and it has one, else cs_algo_chunk_bytes(). Passing it back as
 * args->chunk_bytes builds the same schedule, at this size or any other. */
gint64 cs_algo_step_chunk(const CsAlgo *algo, const CsAlgoArgs *args);

/* One loop of @algo's pipeline for @args, in bytes: every part of every channel's data one
 * chunk further (CsAlgo.parts x channels x cs_algo_step_chunk()). Sizes of whole loops run
 * the pipeline in the same phase. */
gint64 cs_algo_loop_bytes(const CsAlgo *algo, const CsAlgoArgs *args);

/* Moves [@offset, @offset + @bytes) of @buf as consecutive messages of at most @chunk_bytes
 * (chunk index k for the k-th); nothing when @bytes is 0. A send and its receive must use
 * the same @bytes and @chunk_bytes so the messages match. */
void cs_algo_send_chunked(CsSchedule *sched, int rank, int channel, int peer, CsBuffer buf,
                          gint64 offset, gint64 bytes, gint64 chunk_bytes);
void cs_algo_recv_chunked(CsSchedule *sched, int rank, int channel, int peer, CsBuffer buf,
                          gint64 offset, gint64 bytes, gint64 chunk_bytes);

/**
 * CsRegion:
 * A stretch of one of a rank's buffers.
 */
typedef struct {
    CsBuffer buf;
    gint64 offset; /* bytes */
    gint64 bytes;  /* bytes */
} CsRegion;

/* The fold-in of the ranks beyond the largest power of two (Thakur, Rabenseifner and Gropp,
 * IJHPCA 2005, §4): pof2 = 2^floor(log2 P), rem = P - pof2; each even rank r < 2 rem hands
 * its data to r + 1 and sits out. Participant i stands for ranks {2i, 2i+1} if i < rem, else
 * for rank i + rem. Shared by recursive doubling and recursive halving-doubling. */
typedef struct {
    int nranks;
    int pof2;
    int rem;
} CsAlgoFold;

/* The fold-in of @nranks ranks. */
CsAlgoFold cs_algo_fold_new(int nranks);

/* Participant index of rank @r, or -1 for an even rank that sits out. */
int cs_algo_fold_participant(const CsAlgoFold *f, int r);

/* The rank that plays participant @i. */
int cs_algo_fold_rank(const CsAlgoFold *f, int i);

/* First block (rank) that participant @i stands for; @i = pof2 gives P. */
int cs_algo_fold_first_block(const CsAlgoFold *f, int i);

/* The region [@offset, @offset + @bytes) of @buf. */
CsRegion cs_algo_region(CsBuffer buf, gint64 offset, gint64 bytes);

/* Sends the @n_send regions @send to @send_peer while receiving the @n_recv regions @recv from
 * @recv_peer, each region cut into messages of at most @chunk_bytes, alternating one message
 * out and one in, so that ranks exchanging in a cycle never all wait on full slots. With
 * @reduce_src (nullable; @n_recv regions parallel to @recv) the receives are RECV_REDUCE:
 * recv = received (+) reduce_src. Empty regions move nothing. */
void cs_algo_exchange(CsSchedule *sched, int rank, int channel, gint64 chunk_bytes, int send_peer,
                      const CsRegion *send, int n_send, int recv_peer, const CsRegion *recv,
                      int n_recv, const CsRegion *reduce_src);

/* For supports() callbacks that depend only on the collective: whether @op is in @ops; if
 * not, sets @why to @refusal (a static string). */
gboolean cs_algo_supports_ops(CsOpMask ops, CsOp op, const char *refusal, const char **why);

/* The start of a build on one rank: when @sched has a single rank, copies its input to its
 * output (cs_algo_copy_input) and returns TRUE, the schedule then being complete. */
gboolean cs_algo_one_rank_done(CsSchedule *sched);

/* The one-rank case of every collective: rank 0 copies its input to its output (both are
 * the same size when P = 1). */
void cs_algo_copy_input(CsSchedule *sched);

G_END_DECLS
