// SPDX-License-Identifier: MIT
/* One choice's prediction (an algorithm and a protocol): its schedule run through the engine
 * for one point, answered from the point cache where it ran before, or, past the step budget,
 * extended on the line of three smaller sizes; and a sweep of sizes. */
#include "predict/predict-private.h"

#include <math.h>
#include <string.h>

/* ---- Options ---- */

/* Defaults: float sum, root 0, every rank of the topology, channels chosen per point,
 * reservation model, one GPU per launching thread. */
void
cs_predict_options_init(CsPredictOptions *options)
{
    g_return_if_fail(options != NULL);
    *options = (CsPredictOptions){
        .dtype = CS_DTYPE_FLOAT,
        .redop = CS_REDOP_SUM,
        .root = 0,
        .nranks = 0,
        .n_channels = 0,
    };
}

/* ---- Point cache ---- */

/* Steps of schedule kept at most (about 48 bytes each): the schedules of a fit's rows and
 * their extension points, not every whole replay of a point that is never on a line. */
#define POINT_CACHE_MAX_STEPS (8 * 1000 * 1000)

/* Everything a schedule depends on besides the machine's structure. */
static char *
schedule_key(const CsAlgo *algo, const CsAlgoArgs *args)
{
    return g_strdup_printf("%s/%d/%d/%d/%" G_GINT64_FORMAT "/%d/%d/%d/%d/%d/%" G_GINT64_FORMAT
                           "/%" G_GINT64_FORMAT "/%d/%d/%d/%d",
                           algo->name, args->op, args->nranks, args->root, args->size_bytes,
                           args->dtype, args->redop, args->proto, args->n_channels,
                           args->peer_channels, args->chunk_bytes, args->net_chunk_bytes,
                           args->placement != NULL, args->topo != NULL, args->period_min,
                           args->shares);
}

/* Whether @options' cache serves @topo. */
static gboolean
cache_serves(const CsTopo *topo, const CsPredictOptions *options)
{
    return options->cache != NULL && options->cache->topo == topo;
}

/* @algo's schedule for @args: borrowed from the cache, or built and returned in @owned. */
static const CsSchedule *
build_schedule(const CsTopo *topo, const CsAlgo *algo, const CsAlgoArgs *args,
               const CsPredictOptions *options, CsSchedule **owned, GError **error)
{
    *owned = NULL;
    if (!cache_serves(topo, options))
        return *owned = cs_algo_build(algo, args, error);
    /* The schedules of the cache, or of the one it shares them with. */
    CsPointCache *cache
        = options->cache->schedule_owner != NULL ? options->cache->schedule_owner : options->cache;
    if (cache->schedules == NULL)
        return *owned = cs_algo_build(algo, args, error);
    g_autofree char *key = schedule_key(algo, args);
    g_mutex_lock(&cache->lock);
    CsSchedule *sched = g_hash_table_lookup(cache->schedules, key);
    g_mutex_unlock(&cache->lock);
    if (sched != NULL)
        return sched;
    /* Ring orders break ties between equal-hop neighbours by route bandwidth, which a
     * parameter vector scales: every cached schedule is built on the first topology bound, so
     * one key always means one schedule. */
    CsAlgoArgs on_structure = *args;
    if (on_structure.topo != NULL)
        on_structure.topo = cache->structure;
    sched = cs_algo_build(algo, &on_structure, error);
    if (sched == NULL)
        return NULL;
    const gsize steps = cs_schedule_n_steps(sched);
    g_mutex_lock(&cache->lock);
    /* Kept schedules live as long as the cache: another thread's, built meanwhile, stays. */
    if (cache->schedule_steps + steps > POINT_CACHE_MAX_STEPS
        || g_hash_table_contains(cache->schedules, key)) {
        g_mutex_unlock(&cache->lock);
        return *owned = sched;
    }
    cache->schedule_steps += steps;
    g_hash_table_insert(cache->schedules, g_steal_pointer(&key), sched);
    g_mutex_unlock(&cache->lock);
    return sched;
}

/* Everything a simulated point depends on besides the topology's values; NULL when it must
 * not be cached (an observer sees every event of every run). */
static char *
point_key(const CsTopo *topo, const CsAlgo *algo, const CsAlgoArgs *args,
          const CsPredictOptions *options)
{
    const CsEngineOptions *e = &options->engine;
    if (!cache_serves(topo, options) || e->observer != NULL)
        return NULL;
    /* One period or every rank replayed: the same answer (engine.c "Symmetry"). */
    CsAlgoArgs any_period = *args;
    any_period.period_min = 0;
    any_period.shares = CS_ALGO_SHARES_EXACT;
    g_autofree char *sched = schedule_key(algo, &any_period);
    return g_strdup_printf("%s/%s/%d/%d/%d/%d", sched, e->net_model != NULL ? e->net_model : "",
                           e->gpus_per_thread, e->no_launch, e->textbook,
                           MAX(options->concurrent, 1));
}

/* ---- One point ---- */

/* Above this many estimated steps, a prediction extends smaller simulated sizes (see
 * cs_predict_one()). About 50 ms of simulation. */
#define PREDICT_STEP_BUDGET 60000.0
/* The budget is raised by this factor while three points are not yet on one line... A small
 * factor finds the smallest sizes on the line (a 2-node NVLS tree's pipeline fills by about
 * 256 MiB: doubling stops there, eight-fold jumped to several GiB), and the points of all
 * larger sizes of one choice are then the same (a point cache simulates them once); a point
 * that is never on a line costs at most twice its last try. */
#define PREDICT_BUDGET_GROWTH 2.0
/* ...up to this many steps (about 3.8 M steps: a second and some 200 MB), or to the smallest
 * three that may be extended from (2, 4 and 8 loops) where one loop is already beyond the
 * budget (an NVLS all-reduce on 72 GPUs, 108 MiB a loop at 4 GiB), doubling past three that
 * are still filling the pipeline; the largest of the three is at most half the point, so
 * they cost less than replaying it. A point bigger still is
 * extended from the largest three simulated sizes when their slopes agree within 5%
 * (PREDICT_LOOSE_TOLERANCE): a few percent at most, where replaying it costs minutes. */
#define PREDICT_STEP_HARD_LIMIT (64.0 * PREDICT_STEP_BUDGET)
/* The largest point of the three simulated to extend a larger one has at most this many
 * steps (a quarter of CS_SCHEDULE_MAX_STEPS: about 2.5 GB in the engine), and no more than
 * the memory budget holds (cs_schedule_max_steps()). */
#define PREDICT_WINDOW_MAX_STEPS                                                                   \
    MIN((double)CS_SCHEDULE_MAX_STEPS / 4, (double)cs_schedule_max_steps())
/* Three points are on one line when their two slopes differ by at most this share. */
#define PREDICT_LINEAR_TOLERANCE 0.005

/* The point cache's key for the shortest period the machine repeats under for @args' choice,
 * or NULL where the cache does not serve or one period is not asked for. */
static char *
held_period_key(const CsTopo *topo, const CsAlgo *algo, CsOp op, const CsAlgoArgs *args,
                const CsPredictOptions *options, int nranks)
{
    if (!cache_serves(topo, options) || args->period_min <= 0)
        return NULL;
    return g_strdup_printf("%s/%d/%d/%d/%d/%d/%d", algo->name, op, nranks, args->proto,
                           args->n_channels, args->peer_channels, args->topo != NULL);
}

/* The period held under @key: 0 when not known yet, the rank count when none shorter. */
static int
held_period(const CsPredictOptions *options, const char *key)
{
    g_mutex_lock(&options->cache->lock);
    const int held = GPOINTER_TO_INT(g_hash_table_lookup(options->cache->periods, key));
    g_mutex_unlock(&options->cache->lock);
    return held;
}

static void
hold_period(const CsPredictOptions *options, const char *key, int period)
{
    g_mutex_lock(&options->cache->lock);
    g_hash_table_insert(options->cache->periods, g_strdup(key), GINT_TO_POINTER(period));
    g_mutex_unlock(&options->cache->lock);
}

/* Builds and replays the schedule of @base (its size set), one period of ranks where it
 * and the machine repeat, a longer one or every rank where the machine does not. With
 * @periodic_only (a bracket's end, base->shares not EXACT), FALSE without an error where one
 * period no longer holds: a bounded schedule replayed whole stands for nothing. */
static gboolean
replay_point(const CsTopo *topo, CsOp op, gint64 size_bytes, const CsAlgo *algo,
             const CsAlgoArgs *base, const CsPredictOptions *options, int nranks,
             gboolean periodic_only, CsPrediction *out, GError **error)
{
    CsAlgoArgs args = *base;
    g_autoptr(CsSchedule) owned = NULL;
    g_autoptr(CsSchedule) copies = NULL;
    g_autoptr(CsResult) res = NULL;
    const CsSchedule *sched = NULL;
    gboolean asymmetric = FALSE;
    /* Concurrent communicators: each copy's schedule whole, the copies replayed as one
     * period of the machine where it repeats from copy to copy, every copy otherwise. */
    const gboolean concurrent = options->concurrent > 1 && options->concurrent_topo != NULL;
    gboolean copies_periodic = concurrent && options->engine.observer == NULL && !options->whole;
    if (concurrent)
        args.period_min = 0;
    /* The periods the machine was found not to repeat under, for every size of this choice
     * (the routes of a ring or an exchange do not depend on its size). */
    g_autofree char *period_key = held_period_key(topo, algo, op, &args, options, nranks);
    if (period_key != NULL) {
        const int held = held_period(options, period_key);
        asymmetric = held == nranks;
        args.period_min = MAX(args.period_min, held);
    }
    for (;;) {
        g_autoptr(GError) local = NULL;
        /* The copies' retry replays the same schedule of one copy. */
        if (sched == NULL || !concurrent) {
            g_clear_pointer(&owned, cs_schedule_free);
            sched = build_schedule(topo, algo, &args, options, &owned, error);
            if (sched == NULL)
                return FALSE;
        }
        if (concurrent) {
            g_clear_pointer(&copies, cs_schedule_free);
            copies = cs_schedule_replicate(sched, options->concurrent, copies_periodic, error);
            if (copies == NULL)
                return FALSE;
            res = cs_engine_run(copies, options->concurrent_topo, &options->engine, &local);
            if (res == NULL && copies_periodic
                && g_error_matches(local, CS_ENGINE_ERROR, CS_ENGINE_ERROR_ASYMMETRIC)) {
                g_debug("%s/%s %" G_GINT64_FORMAT " B, %d copies: %s", algo->name,
                        cs_proto_name(args.proto), size_bytes, options->concurrent, local->message);
                copies_periodic = FALSE;
                asymmetric = TRUE;
                continue;
            }
            if (res == NULL) {
                g_propagate_error(error, g_steal_pointer(&local));
                return FALSE;
            }
            break;
        }
        res = cs_engine_run(sched, topo, &options->engine, &local);
        if (res != NULL) {
            /* A period that held, or the whole replay after every shorter one failed. */
            if (period_key != NULL && (cs_schedule_period(sched) < nranks || asymmetric))
                hold_period(options, period_key, cs_schedule_period(sched));
            break;
        }
        /* One period of ranks where the machine does not repeat likewise: a longer period,
         * up to the whole schedule (engine.c, "Symmetry"). */
        const int period = cs_schedule_period(sched);
        if (!g_error_matches(local, CS_ENGINE_ERROR, CS_ENGINE_ERROR_ASYMMETRIC)
            || period >= nranks) {
            g_propagate_error(error, g_steal_pointer(&local));
            return FALSE;
        }
        g_debug("%s/%s %" G_GINT64_FORMAT " B: %s", algo->name, cs_proto_name(args.proto),
                size_bytes, local->message);
        args.period_min = period + 1;
        asymmetric = TRUE;
        /* Every shorter period failed: the machine repeats under none, for every size. */
        if (periodic_only && cs_algo_period(algo, &args) >= nranks) {
            if (period_key != NULL)
                hold_period(options, period_key, nranks);
            return FALSE;
        }
    }
    if (cs_schedule_period(sched) < nranks)
        g_debug("%s/%s %" G_GINT64_FORMAT " B: replayed one period of %d ranks of %d", algo->name,
                cs_proto_name(args.proto), size_bytes, cs_schedule_period(sched), nranks);

    *out = (CsPrediction){
        .algo = algo,
        .proto = args.proto,
        .n_channels = args.n_channels,
        .peer_channels = args.peer_channels,
        .size = *cs_schedule_size(sched),
        .result = *res,
        .replayed_ranks = cs_schedule_period(concurrent ? copies : sched),
        .asymmetric
        = asymmetric && (concurrent ? !copies_periodic : cs_schedule_period(sched) == nranks),
    };
    out->result.rank_finish = NULL;
    out->time_us = cs_result_time_us(res);
    out->algbw_GBps = cs_result_algbw_GBps(res, &out->size);
    out->busbw_GBps = cs_result_busbw_GBps(res, &out->size, op, nranks);
    return TRUE;
}

/* Whether @args (a size whose schedule repeats under no shift) would repeat if only its
 * ranks' shares were equal: its rings do, the shares do not (CsAlgoShares). */
static gboolean
bracket_applies(const CsTopo *topo, CsOp op, const CsAlgo *algo, const CsAlgoArgs *args,
                const CsPredictOptions *options, int nranks)
{
    if (args->period_min <= 0 || algo->period == NULL || options->engine.observer != NULL
        || (options->concurrent > 1 && options->concurrent_topo != NULL))
        return FALSE;
    /* Not where the machine was found to repeat under no shorter period. */
    g_autofree char *period_key = held_period_key(topo, algo, op, args, options, nranks);
    if (period_key != NULL && held_period(options, period_key) >= nranks)
        return FALSE;
    if (cs_algo_period(algo, args) < nranks)
        return FALSE;
    CsAlgoArgs high = *args;
    high.shares = CS_ALGO_SHARES_HIGH;
    return cs_algo_period(algo, &high) < nranks;
}

/* A point whose rings repeat under a shift of ranks but whose shares do not, bracketed by
 * one period replayed with every share bounded below and above (CsAlgoShares): TRUE with
 * the upper end in @out when the ends lie within CS_PREDICT_BRACKET_TOLERANCE of each other;
 * FALSE with no error otherwise (the caller replays the point exactly). */
static gboolean
bracket_point(const CsTopo *topo, CsOp op, gint64 size_bytes, const CsAlgo *algo,
              const CsAlgoArgs *args, const CsPredictOptions *options, int nranks,
              CsPrediction *out)
{
    CsAlgoArgs high = *args;
    high.shares = CS_ALGO_SHARES_HIGH;
    CsPrediction hi = { 0 };
    CsPrediction found = { 0 };
    g_autoptr(GError) local = NULL;
    /* The period the machine repeats under, found on one element per channel: the same rings
     * and connections in a few steps, where a period that fails at this size would have been
     * built in full before the engine refused it (on 1,440 GPUs half of the ranks' 132 M
     * steps, 15 GB). */
    CsAlgoArgs probe = high;
    probe.size_bytes = (gint64)probe.n_channels * cs_dtype_size(probe.dtype);
    gboolean held = replay_point(topo, op, probe.size_bytes, algo, &probe, options, nranks, TRUE,
                                 &found, &local)
                    && found.replayed_ranks < nranks;
    high.period_min = MAX(high.period_min, found.replayed_ranks);
    held = held
           && replay_point(topo, op, size_bytes, algo, &high, options, nranks, TRUE, &hi, &local)
           && hi.replayed_ranks < nranks;
    if (!held) {
        g_debug("%s/%s %" G_GINT64_FORMAT " B: no bracket (%s)", algo->name,
                cs_proto_name(args->proto), size_bytes,
                local != NULL ? local->message : "the machine repeats under no shorter period");
        return FALSE;
    }
    /* The low end over the period the high end held on. */
    CsAlgoArgs low = *args;
    low.shares = CS_ALGO_SHARES_LOW;
    low.period_min = MAX(low.period_min, hi.replayed_ranks);
    CsPrediction lo = { 0 };
    if (!replay_point(topo, op, size_bytes, algo, &low, options, nranks, TRUE, &lo, &local)
        || lo.replayed_ranks != hi.replayed_ranks) {
        g_debug("%s/%s %" G_GINT64_FORMAT " B: no bracket (%s)", algo->name,
                cs_proto_name(args->proto), size_bytes,
                local != NULL ? local->message : "one period does not hold");
        return FALSE;
    }
    const double width = fabs(hi.time_us - lo.time_us) / hi.time_us;
    g_debug("%s/%s %" G_GINT64_FORMAT " B: bracket %.3f .. %.3f us (%.4f%%) over %d of %d ranks",
            algo->name, cs_proto_name(args->proto), size_bytes, lo.time_us, hi.time_us,
            100.0 * width, hi.replayed_ranks, nranks);
    if (!(width <= CS_PREDICT_BRACKET_TOLERANCE))
        return FALSE;
    *out = hi;
    out->result.n_events = hi.result.n_events + lo.result.n_events;
    out->bracketed = TRUE;
    out->bracket_low_us = lo.time_us;
    return TRUE;
}

/* What cached_point() found. */
typedef enum {
    POINT_KNOWN,   /* @out is set */
    POINT_OWNED,   /* this thread simulates it */
    POINT_PENDING, /* another thread simulates it and the caller would rather not wait */
} PointState;

/* Takes a point from the cache, or (with @wait) waits while another thread simulates it (see
 * CsPointCache). Sets @pending to the entry this thread owns when it returns POINT_OWNED;
 * called and returning with the cache's lock held. */
static PointState
cached_point(CsPointCache *cache, const char *key, gboolean wait, CsPrediction *out,
             CsPendingPoint **pending)
{
    for (;;) {
        const CsPrediction *known = g_hash_table_lookup(cache->points, key);
        if (known != NULL) {
            cache->hits++;
            /* With the events its simulation replayed: whether a point was simulated first
             * here or earlier (another size, another thread) decides nothing. */
            *out = *known;
            return POINT_KNOWN;
        }
        CsPendingPoint *other = g_hash_table_lookup(cache->pending, key);
        if (other == NULL)
            break;
        if (!wait)
            return POINT_PENDING;
        other->refs++;
        while (!other->done)
            g_cond_wait(&other->done_cond, &cache->lock);
        if (--other->refs == 0) {
            g_cond_clear(&other->done_cond);
            g_free(other);
        }
        /* Answered, or failed: then look again (another waiter may own it now). */
    }
    CsPendingPoint *own = g_new0(CsPendingPoint, 1);
    g_cond_init(&own->done_cond);
    own->refs = 1;
    g_hash_table_insert(cache->pending, g_strdup(key), own);
    *pending = own;
    return POINT_OWNED;
}

/* Builds and simulates one point with everything decided: from the point cache, bracketed
 * (bracket_point()) where unequal shares alone keep a ring from repeating, else replayed.
 * Without @wait, a point another thread is simulating returns POINT_PENDING at once. */
static PointState
simulate_point_or_skip(const CsTopo *topo, CsOp op, gint64 size_bytes, const CsAlgo *algo,
                       const CsAlgoArgs *base, const CsPredictOptions *options, int nranks,
                       gboolean wait, CsPrediction *out, GError **error, gboolean *ok_out)
{
    CsAlgoArgs args = *base;
    CsPendingPoint *pending = NULL;

    args.size_bytes = size_bytes;
    g_autofree char *key = point_key(topo, algo, &args, options);
    if (key != NULL) {
        CsPointCache *cache = options->cache;
        g_mutex_lock(&cache->lock);
        const PointState state = cached_point(cache, key, wait, out, &pending);
        g_mutex_unlock(&cache->lock);
        if (state != POINT_OWNED) {
            *ok_out = TRUE;
            return state;
        }
    }
    const gboolean ok
        = (bracket_applies(topo, op, algo, &args, options, nranks)
           && bracket_point(topo, op, size_bytes, algo, &args, options, nranks, out))
          || replay_point(topo, op, size_bytes, algo, &args, options, nranks, FALSE, out, error);
    if (key != NULL) {
        CsPointCache *cache = options->cache;
        g_mutex_lock(&cache->lock);
        if (ok) {
            cache->misses++;
            g_hash_table_insert(cache->points, g_strdup(key), g_memdup2(out, sizeof *out));
        }
        g_hash_table_remove(cache->pending, key);
        pending->done = TRUE;
        g_cond_broadcast(&pending->done_cond);
        if (--pending->refs == 0) {
            g_cond_clear(&pending->done_cond);
            g_free(pending);
        }
        g_mutex_unlock(&cache->lock);
    }
    *ok_out = ok;
    return POINT_OWNED;
}

static gboolean
simulate_point(const CsTopo *topo, CsOp op, gint64 size_bytes, const CsAlgo *algo,
               const CsAlgoArgs *base, const CsPredictOptions *options, int nranks,
               CsPrediction *out, GError **error)
{
    gboolean ok;
    simulate_point_or_skip(topo, op, size_bytes, algo, base, options, nranks, TRUE, out, error,
                           &ok);
    return ok;
}

/* The line through (@s0, @v0) and (@s1, @v1), at @s. */
static CsTime
extend(CsTime v0, CsTime v1, gint64 s0, gint64 s1, gint64 s)
{
    double slope = (double)(v1 - v0) / (double)(s1 - s0);
    double v = (double)v1 + slope * (double)(s - s1) + 0.5;

    /* Beyond the clock: saturate, and within_clock() refuses the point. */
    return v >= (double)G_MAXINT64 ? G_MAXINT64 : (CsTime)v;
}

/* @ok, unless @out's time left the picosecond clock (a huge size on a slow link): then FALSE
 * with CS_ENGINE_ERROR_CLOCK, never a wrapped, negative time. */
static gboolean
within_clock(gboolean ok, const CsPrediction *out, gint64 size_bytes, GError **error)
{
    if (!ok || (out->result.time >= 0 && out->result.time < G_MAXINT64 / 2))
        return ok;
    g_set_error(error, CS_ENGINE_ERROR, CS_ENGINE_ERROR_CLOCK,
                "%" G_GINT64_FORMAT " bytes would take longer than collsim's clock counts "
                "(about 53 days)",
                size_bytes);
    return FALSE;
}

/* @out at @size on the line through @a and @b (same algorithm, protocol, channels). */
static void
extend_prediction(const CsPrediction *a, const CsPrediction *b, CsOp op, gint64 size_bytes,
                  CsDtype dtype, int nranks, CsPrediction *out)
{
    gint64 s0 = a->size.size_bytes;
    gint64 s1 = b->size.size_bytes;
    CsOpSize sz = cs_op_size(op, size_bytes, dtype, nranks);
    gint64 s = sz.size_bytes;

    *out = *b;
    out->size = sz;
    out->result.time = extend(a->result.time, b->result.time, s0, s1, s);
    out->result.alpha = extend(a->result.alpha, b->result.alpha, s0, s1, s);
    out->result.beta = extend(a->result.beta, b->result.beta, s0, s1, s);
    out->result.gamma = extend(a->result.gamma, b->result.gamma, s0, s1, s);
    out->result.overhead
        = out->result.time - out->result.alpha - out->result.beta - out->result.gamma;
    out->result.n_transfers
        = (gint64)extend(a->result.n_transfers, b->result.n_transfers, s0, s1, s);
    out->result.bytes_moved
        = (gint64)extend(a->result.bytes_moved, b->result.bytes_moved, s0, s1, s);
    out->time_us = cs_result_time_us(&out->result);
    out->algbw_GBps = cs_result_algbw_GBps(&out->result, &sz);
    out->busbw_GBps = cs_result_busbw_GBps(&out->result, &sz, op, nranks);
    out->extrapolated = TRUE;
}

/* Whether three predictions at increasing sizes lie on one line in the bandwidth regime,
 * their two slopes within @tolerance of each other. */
static gboolean
on_one_line_within(const CsPrediction *a, const CsPrediction *b, const CsPrediction *c,
                   double tolerance)
{
    double s0 = (double)(b->result.time - a->result.time)
                / (double)(b->size.size_bytes - a->size.size_bytes);
    double s1 = (double)(c->result.time - b->result.time)
                / (double)(c->size.size_bytes - b->size.size_bytes);

    /* Collinear points on a latency floor (slopes near zero) are not the bandwidth regime:
     * the line must carry at least half of the time at the largest point. */
    double intercept = (double)c->result.time - s1 * (double)c->size.size_bytes;

    return s1 > 0 && fabs(s1 - s0) <= tolerance * fabs(s1)
           && intercept <= 0.5 * (double)c->result.time;
}

static gboolean
on_one_line(const CsPrediction *a, const CsPrediction *b, const CsPrediction *c)
{
    return on_one_line_within(a, b, c, PREDICT_LINEAR_TOLERANCE);
}

/* The window whose largest point is @top bytes on the grid of @loop: the largest 8 x 2^k
 * loops not above @top (at least 8 loops). Every size of one choice (algorithm, protocol,
 * channels, chunk) places its windows on the same grid, so the point cache serves the windows
 * one size simulated to every larger size. */
static gint64
window_on_grid(gint64 top, gint64 loop)
{
    gint64 grid = 8 * loop;

    while (grid <= top / 2)
        grid *= 2;
    return grid;
}

/* A large point from three smaller ones: 1/4, 1/2 and all of a window of 8 x 2^k whole
 * @loop bytes (cs_algo_loop_bytes(); window_on_grid()), the largest within the step budget,
 * at least two loops in the smallest, at the chunk of @size_bytes (cs_predict_point_args()
 * pins it). FALSE with no error when the three are not on one line (the caller then simulates
 * the point whole). */
static gboolean
try_extrapolate(const CsTopo *topo, CsOp op, gint64 size_bytes, const CsAlgo *algo,
                const CsAlgoArgs *args, const CsPredictOptions *options, int nranks,
                double est_steps, gint64 loop, CsPrediction *out, GError **error)
{
    /* Whole loops keep the pipeline's phase: every part of every channel is the same number
     * of chunks. Less than a loop is not the pipeline's line: messages shorter than a chunk
     * grow with the size, which is a line too, but one whose slope is not the pipeline's (an
     * NVLS all-reduce's phases run one after the other, not overlapped). The first loop or
     * two fill the pipeline (an NVLS all-reduce gathers chunk i - 2 while it reduces chunk
     * i): a smallest size of one loop is off the line. */
    gboolean simulated = FALSE;
    CsPrediction p[3];
    gint64 events = 0;

    /* The largest three end at half the size: past that, simulating the point whole costs
     * about as much. */
    gint64 cap = size_bytes / 2;
    gint64 last_top = 0;

    for (double budget = PREDICT_STEP_BUDGET; budget <= PREDICT_STEP_HARD_LIMIT;
         budget *= PREDICT_BUDGET_GROWTH) {
        gint64 top
            = window_on_grid(MIN((gint64)((double)size_bytes * budget / est_steps), cap), loop);
        /* Three points still filling the pipeline (an NVLS all-reduce on 72 ranks fills over
         * three loops) where the budget no longer grows the window: the next window of the
         * grid, up to the cap (three points then cost 7/8 of the size at most). */
        if (top <= last_top)
            top = 2 * last_top;
        if (top > cap)
            break;
        /* Nor past what a schedule may hold at a safe margin: a 1,024-rank NVLS tree at 8 GiB
         * would otherwise replay 4 GiB whole, in 20 GB of memory. */
        if (est_steps * ((double)top / (double)size_bytes) > PREDICT_WINDOW_MAX_STEPS)
            break;
        last_top = top;
        /* A factor of four between the first and the last: a slope that still drifts (an
         * NVLS all-reduce's grows by 4% from 256-512 MiB to 512 MiB-1 GiB on 4 x H100) shows
         * as two slopes that differ, where 1/2, 3/4 and 1 looked straight. */
        gint64 sizes[3] = { top / 4, top / 2, top };
        /* Threads extending neighbouring sizes climb the same windows: the points another
         * thread is simulating are taken last, so that this one simulates the others
         * meanwhile. */
        gboolean have[3] = { FALSE, FALSE, FALSE };
        for (int pass = 0; pass < 2; pass++)
            for (int i = 0; i < 3; i++) {
                gboolean ok;
                if (have[i])
                    continue;
                if (simulate_point_or_skip(topo, op, sizes[i], algo, args, options, nranks,
                                           pass == 1, &p[i], error, &ok)
                    == POINT_PENDING)
                    continue;
                if (!ok)
                    return FALSE;
                have[i] = TRUE;
                events += p[i].result.n_events;
            }
        simulated = TRUE;
        if (on_one_line(&p[0], &p[1], &p[2]))
            break;
        g_debug("%s/%s %" G_GINT64_FORMAT " B: %.3f, %.3f, %.3f us at %" G_GINT64_FORMAT
                " .. %" G_GINT64_FORMAT " B are not on one line",
                algo->name, cs_proto_name(args->proto), size_bytes, p[0].time_us, p[1].time_us,
                p[2].time_us, sizes[0], sizes[2]);
    }
    /* Points that are not on one line are not yet the pipeline's steady state (a latency
     * floor, a channel count still growing): extending them would print a wrong table, so the
     * caller replays the point whole instead. Past the hard limit a looser line will do. */
    if (!simulated)
        return FALSE;
    if (!on_one_line(&p[0], &p[1], &p[2])
        && (est_steps <= PREDICT_STEP_HARD_LIMIT
            || !on_one_line_within(&p[0], &p[1], &p[2], PREDICT_LOOSE_TOLERANCE)))
        return FALSE;
    g_debug("extend %s/%s %" G_GINT64_FORMAT " B from %" G_GINT64_FORMAT " .. %" G_GINT64_FORMAT
            " B (%" G_GINT64_FORMAT " events)",
            algo->name, cs_proto_name(args->proto), size_bytes, p[0].size.size_bytes,
            p[2].size.size_bytes, events);
    extend_prediction(&p[1], &p[2], op, size_bytes, options->dtype, nranks, out);
    out->result.n_events = events;
    return TRUE;
}

/* The algorithm arguments of one point, as cs_predict_one() simulates it. */
void
cs_predict_point_args(const CsTopo *topo, CsOp op, gint64 size_bytes, const CsAlgo *algo,
                      CsProto proto, const CsPredictOptions *options, int nranks, CsAlgoArgs *args)
{
    int topo_ranks = cs_topo_n_ranks(topo);
    gboolean textbook = options->engine.textbook;
    P2pPlan plan;
    gboolean p2p = !textbook
                   && cs_predict_p2p_plan(topo, algo, op, proto, size_bytes, nranks,
                                          options->nccl_release, &plan);
    int channels = options->n_channels > 0 ? options->n_channels
                   : textbook              ? 1
                   : p2p                   ? plan.channels
                         : cs_predict_default_channels_at(topo, algo, op, proto, size_bytes, nranks,
                                                          options->nccl_release);

    /* The algorithm sees the machine only when it runs on all of it (node structure). */
    cs_algo_args_init(args, nranks == topo_ranks ? topo : NULL, op, nranks, size_bytes);
    args->root = options->root;
    args->dtype = options->dtype;
    args->redop = options->redop;
    args->proto = proto;
    args->n_channels = channels;
    /* NCCL stripes each peer's message over some of the channels, by its size, also when the
     * channel count is given (explain and --verify pass the predicted one back). */
    args->peer_channels = p2p ? plan.per_peer : 0;
    args->net_chunk_bytes = p2p ? plan.net_chunk_bytes : 0;
    args->placement = args->net_chunk_bytes > 0 ? topo : NULL;
    /* A schedule that repeats under a shift of ranks replays one period where the machine
     * repeats too (engine.c, "Symmetry"); the same answer, not an approximation. An observer
     * sees every rank. */
    args->period_min = options->engine.observer == NULL && !options->whole
                           ? MAX(options->engine.gpus_per_thread, 1)
                           : 0;
    /* The textbook machine sends each message whole. */
    if (textbook)
        args->chunk_bytes = MAX(size_bytes, (gint64)cs_dtype_size(options->dtype));
    else
        args->chunk_bytes = p2p ? plan.chunk_bytes
                                : cs_predict_nccl_chunk_bytes(topo, algo, op, proto, size_bytes,
                                                              nranks, channels);
    /* The chunk this size gets, pinned: smaller sizes simulated to extend this one (NVLS
     * shrinks its chunk for them) then run the same pipeline, on the same line. */
    args->chunk_bytes = cs_algo_step_chunk(algo, args);
}

/**
 * cs_predict_schedule:
 * The schedule behind a prediction of @size_bytes with @algo and @proto: the same arguments
 * (channels, chunk, root, datatype) cs_predict_one() gives the engine, at the full size even
 * where the prediction was extended from smaller ones. For `collsim --verify`.
 * Returns: (transfer full) (nullable).
 */
CsSchedule *
cs_predict_schedule(const CsTopo *topo, CsOp op, gint64 size_bytes, const CsAlgo *algo,
                    CsProto proto, const CsPredictOptions *options, GError **error)
{
    CsPredictOptions defaults;
    CsAlgoArgs args;

    g_return_val_if_fail(topo != NULL && algo != NULL, NULL);
    if (options == NULL) {
        cs_predict_options_init(&defaults);
        options = &defaults;
    }
    int nranks = options->nranks > 0 ? options->nranks : cs_topo_n_ranks(topo);
    cs_predict_point_args(topo, op, size_bytes, algo, proto, options, nranks, &args);
    args.period_min = 0; /* every rank's program, for the checker and the backends */
    return cs_algo_build(algo, &args, error);
}

/**
 * cs_predict_one:
 * Builds @algo's schedule for @op of @size_bytes on the first options->nranks ranks of @topo
 * with @proto on options->n_channels channels (0: cs_predict_default_channels()), and
 * simulates it. Chunks are NCCL's: one slot per step, four for Simple rings of all-reduce,
 * all-gather and reduce-scatter; in textbook mode one chunk per message.
 *
 * A large size (more than about 60,000 chunk steps and 16 loops, a loop being ranks x
 * channels x chunk) is not replayed chunk by chunk unless options->exact: three sizes of 1/4,
 * 1/2 and 1 times the largest window of 8 x 2^k loops within that budget (at least 2, 4 and
 * 8 loops, at most half the size), at the size's own chunk, are simulated, and when their
 * times lie on one line (slopes within 0.5%: the pipeline's steady state) the point is
 * extended on it, every part of the time split on its own line (@out->extrapolated).
 * Otherwise the window doubles and the three points are tried again; a point still beyond
 * about 3.8 M steps is extended when the largest three agree within 5%, and otherwise, like
 * every smaller one, simulated whole (slow, never wrong). Sizes above 1 PiB are refused.
 *
 * Returns: TRUE with @out filled (its result keeps no per-rank array), or FALSE with the
 * algorithm's error (CS_SCHEDULE_ERROR_UNSUPPORTED: it cannot serve this case) or the
 * engine's (CS_ENGINE_ERROR_MISMATCH: the protocol cannot cross one of the routes, or
 * is LL or LL128 on ranks that are CPUs).
 */
gboolean
cs_predict_one(const CsTopo *topo, CsOp op, gint64 size_bytes, const CsAlgo *algo, CsProto proto,
               const CsPredictOptions *options, CsPrediction *out, GError **error)
{
    CsPredictOptions defaults;
    CsAlgoArgs args;

    g_return_val_if_fail(topo != NULL && algo != NULL && out != NULL, FALSE);
    if (options == NULL) {
        cs_predict_options_init(&defaults);
        options = &defaults;
    }
    int topo_ranks = cs_topo_n_ranks(topo);
    int nranks = options->nranks > 0 ? options->nranks : topo_ranks;
    if (nranks > topo_ranks) {
        g_set_error(error, CS_ENGINE_ERROR, CS_ENGINE_ERROR_MISMATCH,
                    "%d ranks asked but topology %s has %d", nranks, cs_topo_name(topo),
                    topo_ranks);
        return FALSE;
    }
    if (size_bytes > CS_PREDICT_MAX_BYTES) {
        g_set_error(error, CS_ENGINE_ERROR, CS_ENGINE_ERROR_MISMATCH,
                    "%" G_GINT64_FORMAT " bytes is beyond what collsim predicts (1 PiB)",
                    size_bytes);
        return FALSE;
    }
    /* LL and LL128 need GPU ranks (models/protocol.c). */
    for (int r = 0; r < nranks && !options->engine.textbook; r++) {
        const CsDevice *dev = cs_topo_device(topo, cs_topo_rank_device(topo, r));
        const char *why = NULL;
        if (!cs_proto_legal_on_device(proto, dev->kind, &why)) {
            g_set_error(error, CS_ENGINE_ERROR, CS_ENGINE_ERROR_MISMATCH,
                        "protocol %s cannot run on rank %d (%s, a %s): %s", cs_proto_name(proto), r,
                        dev->name, cs_device_kind_name(dev->kind), why);
            return FALSE;
        }
    }
    cs_predict_point_args(topo, op, size_bytes, algo, proto, options, nranks, &args);

    if (!options->exact && !options->engine.textbook) {
        /* Extending needs eight whole loops below half the size (try_extrapolate()); a
         * smaller size is simulated whole. Each loop adds the same steps: count them on one
         * loop's schedule (an NVLS all-reduce on 72 ranks has P times the steps per chunk of
         * a ring, so a formula per algorithm would not do). */
        gint64 loop = cs_algo_loop_bytes(algo, &args);
        if (size_bytes >= 16 * loop) {
            CsAlgoArgs probe_args = args;
            probe_args.size_bytes = loop;
            g_autoptr(CsSchedule) owned = NULL;
            const CsSchedule *probe_sched
                = build_schedule(topo, algo, &probe_args, options, &owned, error);
            if (probe_sched == NULL)
                return FALSE;
            double est_steps
                = (double)cs_schedule_n_steps(probe_sched) * ((double)size_bytes / (double)loop);
            if (est_steps > PREDICT_STEP_BUDGET) {
                g_autoptr(GError) local = NULL;
                if (try_extrapolate(topo, op, size_bytes, algo, &args, options, nranks, est_steps,
                                    loop, out, &local))
                    return within_clock(TRUE, out, size_bytes, error);
                if (local != NULL) {
                    g_propagate_error(error, g_steal_pointer(&local));
                    return FALSE;
                }
            }
        }
    }
    return within_clock(
        simulate_point(topo, op, size_bytes, algo, &args, options, nranks, out, error), out,
        size_bytes, error);
}

/* ---- Sweeps ---- */

/* Past max_events, a sweep still simulates until the last three points lie on one line
 * (slopes within SWEEP_LINEAR_TOLERANCE), or one simulation exceeds this many times the
 * budget. */
#define SWEEP_LINEAR_TOLERANCE 0.01
#define SWEEP_HARD_FACTOR 16

/* Whether the times at @i, @j, @k (simulated, ascending sizes) lie on one line. */
static gboolean
linear(const CsPrediction *out, int i, int j, int k)
{
    if (i < 0)
        return FALSE;
    double s0 = (double)(out[j].result.time - out[i].result.time)
                / (double)(out[j].size.size_bytes - out[i].size.size_bytes);
    double s1 = (double)(out[k].result.time - out[j].result.time)
                / (double)(out[k].size.size_bytes - out[j].size.size_bytes);
    return fabs(s1 - s0) <= SWEEP_LINEAR_TOLERANCE * fabs(s1);
}

/**
 * cs_predict_sweep:
 * Predictions of one algorithm x protocol over a grid of sizes; sizes past the event budget
 * are extrapolated from the last two simulated ones (see predict.h). Every part of the time
 * split is extended on its own line, so the parts still add up.
 */
gboolean
cs_predict_sweep(const CsTopo *topo, CsOp op, const gint64 *sizes, int n_sizes, const CsAlgo *algo,
                 CsProto proto, const CsPredictOptions *options, gint64 max_events,
                 CsPrediction *out, gboolean *valid, gboolean *extrapolated, GError **error)
{
    CsPredictOptions defaults;
    int last = -1; /* the last three simulated sizes */
    int before = -1;
    int earlier = -1;
    gboolean over_budget = FALSE;

    g_return_val_if_fail(topo != NULL && algo != NULL && out != NULL, FALSE);
    if (options == NULL) {
        cs_predict_options_init(&defaults);
        options = &defaults;
    }
    int nranks = options->nranks > 0 ? options->nranks : cs_topo_n_ranks(topo);
    /* With an event budget the sweep extends its own grid points; each point is exact. */
    CsPredictOptions point = *options;
    if (max_events > 0)
        point.exact = TRUE;
    for (int i = 0; i < n_sizes; i++) {
        g_autoptr(GError) local = NULL;
        memset(&out[i], 0, sizeof(out[i]));
        if (valid != NULL)
            valid[i] = FALSE;
        if (extrapolated != NULL)
            extrapolated[i] = FALSE;

        int channels = options->n_channels > 0
                           ? options->n_channels
                           : cs_predict_default_channels_at(topo, algo, op, proto, sizes[i], nranks,
                                                            options->nccl_release);
        int peer_channels = options->engine.textbook
                                ? 0
                                : cs_predict_peer_channels_at(topo, algo, op, proto, sizes[i],
                                                              nranks, options->nccl_release);
        if (over_budget && before >= 0 && !options->engine.textbook
            && out[last].n_channels == channels && out[before].n_channels == channels
            && out[last].peer_channels == peer_channels
            && out[before].peer_channels == peer_channels && sizes[i] > sizes[last]) {
            extend_prediction(&out[before], &out[last], op, sizes[i], options->dtype, nranks,
                              &out[i]);
            out[i].result.n_events = 0;
            if (valid != NULL)
                valid[i] = TRUE;
            if (extrapolated != NULL)
                extrapolated[i] = TRUE;
            continue;
        }
        if (!cs_predict_one(topo, op, sizes[i], algo, proto, &point, &out[i], &local)) {
            memset(&out[i], 0, sizeof(out[i]));
            if (!is_refusal(local)) {
                g_propagate_error(error, g_steal_pointer(&local));
                return FALSE;
            }
            continue;
        }
        if (valid != NULL)
            valid[i] = TRUE;
        earlier = before;
        before = last;
        last = i;
        if (max_events > 0 && out[i].result.n_events > max_events)
            over_budget = linear(out, earlier, before, last)
                          || out[i].result.n_events > SWEEP_HARD_FACTOR * max_events;
    }
    return TRUE;
}
