// SPDX-License-Identifier: MIT
/* Prediction: builds a schedule with an algorithm and runs it through the engine, for one
 * (op, size, algo, proto, channels) point, and picks the best point per size. The only module
 * that knows both the algorithm registry and the engine. */
#pragma once

#include <glib.h>

#include "algos/algo.h"
#include "base/parallel.h"
#include "engine/engine.h"
#include "models/nccl.h"
#include "topo/topo.h"

G_BEGIN_DECLS

/**
 * CsPredictOptions:
 * Common knobs of every prediction.
 */
typedef struct _CsPointCache CsPointCache;

/**
 * CsPick:
 * Who chooses the algorithm and protocol that cs_predict_best() does not have forced.
 * @CS_PICK_FASTEST: collsim, the fastest candidate (what a tuner should set).
 * @CS_PICK_NCCL: NCCL's own tuning model (CsPredictOptions.nccl), what NCCL runs when nothing
 *   is forced; the fastest where collsim does not simulate NCCL's pick.
 * @CS_PICK_AUTO: for traces (validate, calibrate): NCCL's pick for a trace NCCL measured on
 *   GPUs its model knows, the fastest otherwise. cs_predict_best() treats it as
 *   @CS_PICK_NCCL when a model is set.
 */
typedef enum {
    CS_PICK_FASTEST,
    CS_PICK_NCCL,
    CS_PICK_AUTO,
} CsPick;

/* Beyond a pebibyte a picosecond clock could overflow: such sizes are refused. */
#define CS_PREDICT_MAX_BYTES (G_GINT64_CONSTANT(1) << 50)

typedef struct {
    CsEngineOptions engine;
    CsPointCache *cache; /* (nullable) schedules and points to reuse, see below */
    CsDtype dtype;
    CsRedop redop;
    int root;
    int nranks;                    /* 0 = every rank of the topology */
    int n_channels;                /* 0 = chosen per topology, algorithm and size */
    gboolean any_algorithm;        /* cs_predict_best without a filter: FALSE (default) weighs
                                    * the candidates of cs_predict_default_candidate() (on GPU
                                    * ranks what an nccl-tests run can execute, on CPU ranks every
                                    * algorithm but RCCL's all-pairs), TRUE every registered
                                    * algorithm */
    CsPick pick;                   /* see CsPick; default CS_PICK_FASTEST */
    const CsNcclModel *nccl;       /* (nullable) NCCL's model for CS_PICK_NCCL / CS_PICK_AUTO */
    guint nccl_algo_mask;          /* the algorithms NCCL may pick (1 << CsNcclAlgo), as NCCL_ALGO
                                    * lists or excludes them; 0: every one */
    guint nccl_proto_mask;         /* the protocols, as NCCL_PROTO allows them; 0: the GPUs'
                                    * default protocols (the topology's default_protocols) */
    gboolean whole;                /* replay every rank even where the schedule and the machine
                                    * repeat under a shift of ranks (by default one period is
                                    * replayed there: the same answer, engine.c "Symmetry") */
    gboolean exact;                /* simulate every chunk of every size; by default a size whose
                                    * schedule would be large is extended linearly from three
                                    * smaller simulated sizes on one line (the pipeline's steady
                                    * state), or simulated whole when they are not */
    int jobs;                      /* threads for callers that predict many points at once
                                    * (validate's rows); each cs_predict_*() call runs on one.
                                    * <= 1: none */
    int candidate_jobs;            /* threads cs_predict_best() simulates its candidates on,
                                    * ahead of their turn (the same answer; for a caller that
                                    * predicts one size, not one already on threads). <= 1:
                                    * none */
    int concurrent;                /* > 1: so many communicators of nranks run the collective at
                                    * once, copy i's rank j on rank i x nranks + j of
                                    * concurrent_topo, sharing its links (the data-parallel groups
                                    * of a training step); the time is the last copy's */
    const CsTopo *concurrent_topo; /* (nullable) the copies' machine, with concurrent */
    gboolean exhaustive;           /* cs_predict_best simulates every candidate, also one whose
                                    * lower bound (cs_predict_lower_bound) a faster one already
                                    * beats; the answer is the same, only slower (tests compare) */
    int nccl_release;              /* the NCCL release whose point-to-point plan applies, as
                                    * major x 10000 + minor x 100 + patch (22907 for 2.29.7; a
                                    * trace's, base/trace.h cs_nccl_release_code()); 0: the newest collsim
                                    * knows (predict_p2p.c) */
} CsPredictOptions;

void cs_predict_options_init(CsPredictOptions *options);

/* "fastest", "nccl", "auto" (any case); FALSE with @error for another name. */
gboolean cs_pick_from_name(const char *name, CsPick *pick, GError **error);

/**
 * CsPrediction:
 * One predicted point.
 */
typedef struct {
    const CsAlgo *algo; /* (transfer none) */
    CsProto proto;
    int n_channels;
    int peer_channels; /* grouped send/recv: channels each peer's message uses (0: all) */
    CsOpSize size;
    CsResult result;       /* rank_finish is NULL here: only the totals are kept */
    double time_us;        /* us */
    double algbw_GBps;     /* GB/s */
    double busbw_GBps;     /* GB/s */
    gboolean extrapolated; /* the time was extended from smaller sizes (n_events counts
                            * the events those simulations replayed) */
    gboolean nccl_picked;  /* cs_predict_best(): NCCL's model chose it (CsPredictOptions.pick) */
    int n_unsimulated;     /* cs_predict_best(): candidates whose schedule was too large to
                            * simulate (CS_SCHEDULE_ERROR_TOO_LARGE), left out of the pick */
    const CsAlgo *unsimulated_algo; /* the first of them, and its protocol */
    CsProto unsimulated_proto;
    int replayed_ranks;    /* ranks the engine replayed: one period where the schedule and the
                            * machine repeat under a shift of ranks (engine.c "Symmetry") */
    gboolean asymmetric;   /* the schedule repeats but the machine does not on its routes:
                            * every rank was replayed */
    gboolean bracketed;    /* a ring's unequal shares were bounded to replay one period
                            * (CsAlgoShares): the time is the upper end of a bracket whose ends
                            * lie within CS_PREDICT_BRACKET_TOLERANCE of each other */
    double bracket_low_us; /* us: the bracket's lower end, where bracketed */
} CsPrediction;

/* How close, relative to the upper end, the two ends of a bracket (CsPrediction.bracketed)
 * must be for the upper one to stand for the exact replay. */
#define CS_PREDICT_BRACKET_TOLERANCE 0.001

/* Appends @pred to @out for another rank of a study (cs_parallel_for_ranks()): its plain
 * fields, its algorithms by name. */
void cs_prediction_pack(const CsPrediction *pred, GByteArray *out);
/* Reads what cs_prediction_pack() wrote into @pred (rank_finish NULL, as it was). */
void cs_prediction_unpack(CsUnpack *in, CsPrediction *pred);

/* The channels NCCL's p2p plan stripes each peer's message over for @op at @size_bytes
 * (grouped send/recv on GPU ranks, see cs_predict_default_channels()); 0 for every other
 * algorithm: its schedule uses all its channels for everything. */
int cs_predict_peer_channels(const CsTopo *topo, const CsAlgo *algo, CsOp op, CsProto proto,
                             gint64 size_bytes, int nranks);
/* cs_predict_peer_channels() and cs_predict_default_channels() under NCCL @release
 * (CsPredictOptions.nccl_release; 0: the newest collsim knows): NCCL's point-to-point plan
 * across nodes changed with its releases (predict_p2p.c). */
int cs_predict_peer_channels_at(const CsTopo *topo, const CsAlgo *algo, CsOp op, CsProto proto,
                                gint64 size_bytes, int nranks, int release);
int cs_predict_default_channels_at(const CsTopo *topo, const CsAlgo *algo, CsOp op, CsProto proto,
                                   gint64 size_bytes, int nranks, int release);

/* Predicts one point. FALSE with @error if the algorithm/protocol cannot serve it. */
gboolean cs_predict_one(const CsTopo *topo, CsOp op, gint64 size_bytes, const CsAlgo *algo,
                        CsProto proto, const CsPredictOptions *options, CsPrediction *out,
                        GError **error);

/* A time, in ps, that cs_predict_one() of @size_bytes with @algo and @proto, simulated whole,
 * cannot beat, known without building the schedule: the algorithm's chain of messages in a
 * row (CsAlgo.bound) each at least the smallest route latency plus the protocol's smallest
 * hop latency, or the bytes it sends over what the ranks' links can carry out, whichever is
 * longer. 0 when the algorithm gives no bound or two ranks share a device (their messages
 * cross no link). */
CsTime cs_predict_lower_bound(const CsTopo *topo, CsOp op, gint64 size_bytes, const CsAlgo *algo,
                              CsProto proto, const CsPredictOptions *options);

/* The schedule behind cs_predict_one() for the same arguments, built at the full size even
 * where the prediction was extended from smaller sizes (for `collsim --verify`).
 * Returns: (transfer full) (nullable). */
CsSchedule *cs_predict_schedule(const CsTopo *topo, CsOp op, gint64 size_bytes, const CsAlgo *algo,
                                CsProto proto, const CsPredictOptions *options, GError **error);

/* Why ranks 0..@nranks-1 leave no protocol to pick when none is forced (their
 * default_protocols share none; a CPU rank allows Simple only), or NULL when they do.
 * Returns: (transfer full) (nullable). */
char *cs_predict_no_shared_protocol(const CsTopo *topo, int nranks);

/* Whether one of the first @nranks ranks of @topo (0: all) is a CPU: no NCCL runs such a
 * communicator, an MPI library does. */
gboolean cs_predict_cpu_ranks(const CsTopo *topo, int nranks);

/* The candidates collsim weighs when nothing is forced, one rule for cs_predict_best() (collsim
 * run, explain) and cs_select_run() (collsim select): on GPU ranks what an nccl-tests run can
 * execute (NCCL 2.2x's algorithms per collective: ring for broadcast and reduce; ring, NVLS
 * and PAT for all-gather and reduce-scatter; ring, tree, NVLS, NVLSTree and CollNet for
 * all-reduce; grouped send/recv, "direct", for scatter, gather and all-to-all), carried by the
 * protocol NCCL's p2p plan takes for grouped send/recv; on CPU ranks, which an MPI library
 * runs, every algorithm but RCCL's MSCCL all-pairs, with every protocol; with @any_algorithm
 * (--any-algorithm) every one. The
 * algorithm's own supports() still decides whether the machine allows it. */
gboolean cs_predict_default_candidate(const CsAlgo *algo, CsOp op, const CsTopo *topo, int nranks,
                                      gboolean any_algorithm);
gboolean cs_predict_default_proto(const CsTopo *topo, const CsAlgo *algo, CsOp op, CsProto proto,
                                  gint64 size_bytes, int nranks, gboolean any_algorithm);

/* Predicts every legal algorithm x protocol for one size and returns the fastest, or, with
 * options->pick and options->nccl, the one NCCL's tuning model picks.
 * @algo_filter / @proto_filter restrict the candidates (NULL / -1 = all) as NCCL_ALGO /
 * NCCL_PROTO would. FALSE with @error if nothing applies. */
gboolean cs_predict_best(const CsTopo *topo, CsOp op, gint64 size_bytes, const CsAlgo *algo_filter,
                         int proto_filter, const CsPredictOptions *options, CsPrediction *out,
                         GError **error);

/* Predicts @algo with @proto at each of the @n_sizes ascending @sizes, as cs_predict_one()
 * would, except that past the first size whose simulation replays more than @max_events
 * events (0: never), each further size with the same channel count is extrapolated linearly
 * from the last two simulated sizes: a pipelined schedule's time is linear in its chunk
 * count once the pipeline is full. @valid[i] (nullable) says whether size i could be served
 * (a refusal leaves @out[i] zeroed); @extrapolated[i] (nullable) marks extrapolated points,
 * whose n_events is 0. FALSE with @error only for errors that are not refusals. */
gboolean cs_predict_sweep(const CsTopo *topo, CsOp op, const gint64 *sizes, int n_sizes,
                          const CsAlgo *algo, CsProto proto, const CsPredictOptions *options,
                          gint64 max_events, CsPrediction *out, gboolean *valid,
                          gboolean *extrapolated, GError **error);

/* A cache for callers that predict the same points many times. Simulated points are kept
 * for the topology last bound: rows of a trace that extend from the same three simulated
 * sizes simulate them once. An answer from the cache is the simulated one, its n_events
 * included (the events its simulation replayed), so no decision depends on which size or
 * thread simulated a point first. Threads may share a cache (it locks); binding is for one
 * thread, between predictions. With
 * @keep_schedules, schedules (up to about 8 M steps in all) are built once, on the first
 * topology bound, and kept across topologies too, for callers whose topologies differ only in
 * parameter values (calibration: one cs_topo_adjust() of one topology per parameter vector,
 * each row's choice and schedule frozen at the datasheet's). Points are not cached for runs
 * with an observer (it wants every event). */
CsPointCache *cs_point_cache_new(gboolean keep_schedules);
/* A cache of its own points that keeps its schedules in @owner's (point_cache.c). */
CsPointCache *cs_point_cache_new_sharing(CsPointCache *owner);
/* Makes @topo (a reference is held) the topology the cached points are for; binding another
 * one forgets the points and keeps the schedules. */
void cs_point_cache_bind(CsPointCache *cache, const CsTopo *topo);
void cs_point_cache_free(CsPointCache *cache);
/* Points simulated, and points answered from the cache, since the cache was made. */
void cs_point_cache_stats(const CsPointCache *cache, gint64 *misses, gint64 *hits);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(CsPointCache, cs_point_cache_free)

/* The channel count NCCL-like defaults would give @algo for @op on @topo. */
int cs_predict_default_channels(const CsTopo *topo, const CsAlgo *algo, CsOp op, CsProto proto,
                                gint64 size_bytes, int nranks);

G_END_DECLS
