// SPDX-License-Identifier: MIT
/* Selection: for each collective, the best (algorithm, protocol, channels) on a grid of sizes,
 * then the exact sizes where the best choice changes, found by bisection on the predictions
 * down to the datatype's granularity, and the tables made from them (DESIGN §6).
 *
 * Crossovers: between two neighbouring grid sizes whose best choices A and B differ, an
 * integer bisection on the element count finds the first size where B (or anything but A)
 * beats A among {A, B}; the full argmin over every candidate is then checked one element
 * below and at that size. When a third candidate wins in between, the interval is split and
 * searched again, so every reported crossover is a size where the full argmin really changes
 * from one element to the next. Changes that start and end between two grid sizes (A, C, A)
 * are not seen: the grid bounds the resolution of *where to look*, not of the answer.
 *
 * Large sizes: one simulation of 16 GiB replays about a million events. Past the first grid
 * size whose simulation exceeds options->max_events for a candidate, its time is extrapolated
 * linearly from its last two simulated grid sizes (same channel count): a pipelined schedule
 * is linear in its chunk count once the pipeline is full. Below that, a large size is
 * predicted as cs_predict_one() does, extended where its own pipeline is on a line. Where
 * that fails (trees and NVLS under the reservation model, whose windows' slopes wander by
 * 1-2% up to GiB sizes: docs/performance.md) a grid size is replayed whole, millions of
 * events; the bisection between two such grid sizes would replay every point it visits as
 * long (2-4 s each for an NVLS tree on 128 GPUs, some 27 of them per crossover), so there a
 * size's time is read off the line between the two grid sizes and the crossover is marked
 * interpolated. --exact turns all three off.
 *
 * Threads (options->jobs): each candidate's grid sizes, cap included, depend on that candidate
 * alone, so they are predicted first, one candidate per task on a pool of threads
 * (cs_parallel_for()). The search that follows (argmin per size, bisections, gains) runs on
 * the calling thread in one order; each argmin first has the candidates not yet predicted at
 * its size predicted on the threads (fill()), then reads the memoised times. A time depends
 * only on its candidate and size (the point cache returns a point's own events), so the
 * selection is the same for every thread count. Under mpirun the same two loops are dealt to
 * the ranks as well (cs_parallel_for_ranks(); fill() then runs even with one thread) and the
 * times each item memoised go to every rank, so every rank's search takes the same path.
 *
 * This file is the search and the selection it makes; what a selection is written as (the
 * table, JSON, NCCL's environment and CSVs) is in select_emit.c and the emitters it names. */
#include "config.h"

#include "predict/select-private.h"

#include "predict/predict-private.h"

#include <math.h>
#include <string.h>

#include "algos/allpairs.h"
#include "algos/registry.h"
#include "base/json_util.h"
#include "base/parallel.h"
#include "base/units.h"

/* clang-format off */
G_DEFINE_QUARK(cs_select_error_quark, cs_select_error)
/* clang-format on */

#define DEFAULT_MAX_EVENTS ((gint64)40000)
/* Events of a whole replay past which the sizes between two such grid sizes are interpolated:
 * about half a second of the engine each. */
#define DEFAULT_INTERPOLATE_EVENTS ((gint64)2000000)
#define MAX_CROSSOVERS 512

void
cs_select_options_init(CsSelectOptions *options)
{
    g_return_if_fail(options != NULL);
    memset(options, 0, sizeof(*options));
    options->ops = CS_OPS_ALL;
    options->min_bytes = 8;
    options->max_bytes = (gint64)16 << 30;
    options->step_factor = 2;
    cs_predict_options_init(&options->predict);
}

/* ---- Choices ---- */

const char *
cs_select_choice_algo_name(const CsSelectChoice *choice)
{
    g_return_val_if_fail(choice != NULL, NULL);
    if (choice->algo != NULL)
        return choice->algo->name;
    if (choice->nccl_algo >= 0)
        return cs_nccl_algo_name((CsNcclAlgo)choice->nccl_algo);
    return "none";
}

char *
cs_select_choice_label(const CsSelectChoice *choice)
{
    g_return_val_if_fail(choice != NULL, NULL);
    return g_strdup_printf("%s/%s/%dch", cs_select_choice_algo_name(choice),
                           cs_proto_name(choice->proto), choice->n_channels);
}

gboolean
cs_select_choice_equal(const CsSelectChoice *a, const CsSelectChoice *b)
{
    return a->algo == b->algo && a->nccl_algo == b->nccl_algo && a->proto == b->proto
           && a->n_channels == b->n_channels;
}

/* ---- Candidates and memoised predictions ---- */

typedef struct {
    const CsAlgo *algo; /* NULL under NCCL's model */
    int nccl_algo;      /* -1 if NCCL has no such algorithm */
    CsProto proto;
    gboolean nccl_ok; /* NCCL implements it for this collective here */
} Cand;

typedef struct {
    int cand;
    int channels; /* 0 = the predictor's own choice */
    gint64 size;
} EvalKey;

typedef struct {
    gboolean ok;
    double time_ps;
    int channels;
    int peer_channels;
    gint64 events;
    gboolean extrapolated;
    gboolean bracketed;
    gboolean interpolated; /* read off the line between two grid sizes (interpolate()) */
    const char *why;       /* (nullable) interned: why the prediction failed */
} Eval;

static guint
eval_key_hash(gconstpointer p)
{
    const EvalKey *k = p;
    /* Unsigned arithmetic: a size past 2^32 times the multiplier overflows a gint64. */
    return (guint)((guint64)k->size * 2654435761u) ^ (guint)(k->cand * 40503)
           ^ (guint)(k->channels << 20);
}

static gboolean
eval_key_equal(gconstpointer a, gconstpointer b)
{
    const EvalKey *x = a;
    const EvalKey *y = b;
    return x->cand == y->cand && x->channels == y->channels && x->size == y->size;
}

/* One collective's search state. */
typedef struct {
    const CsTopo *topo;
    const CsSelectOptions *o;
    const CsNcclModel *nccl_model;    /* selection under NCCL's model when non-NULL */
    const CsNcclModel *baseline;      /* NCCL's own pick, what a margin is measured against */
    double margin[CS_N_REGIMES];      /* per size regime, a fraction; 0: the plain argmin */
    gboolean validated[CS_N_REGIMES]; /* the model is validated there for this machine */
    gint64 grid_end;                  /* bytes: the grid's largest size */
    CsOp op;
    int nranks;
    GArray *cands;             /* Cand */
    GHashTable *cache;         /* EvalKey -> Eval */
    CsPointCache *points;      /* simulated points, shared by sizes extended from them */
    gint64 *cap;               /* per candidate: first grid size past max_events, 0 */
    gint64 *cap_below;         /* per candidate: the grid size before it */
    const GArray *grid;        /* the grid sizes, ascending */
    gint64 interpolate_events; /* see interpolate(); 0: never */
    int n_sims;                /* atomic */
    gint64 unserved;           /* a grid size no candidate runs (the table is then empty), or 0 */
    const char *unserved_why;  /* (nullable) interned: why the first candidate fails there */
    GMutex lock;               /* guards @cache: candidates are predicted on threads */
    guint progress_done;       /* steps told to options->progress: candidates, then the */
    guint progress_total;      /* grid intervals searched for crossovers, per table */
} Search;

static Eval evaluate(Search *s, int c, gint64 size, int channels);

static void
remember(Search *s, int c, gint64 size, int channels, const Eval *e)
{
    EvalKey *k = g_new(EvalKey, 1);
    k->cand = c;
    k->channels = channels;
    k->size = size;
    g_mutex_lock(&s->lock);
    g_hash_table_insert(s->cache, k, g_memdup2(e, sizeof(*e)));
    g_mutex_unlock(&s->lock);
}

/* The memoised time of @c at @size with @channels: TRUE with @e, or FALSE. */
static gboolean
recall(Search *s, int c, gint64 size, int channels, Eval *e)
{
    const EvalKey key = { c, channels, size };
    g_mutex_lock(&s->lock);
    const Eval *hit = g_hash_table_lookup(s->cache, &key);
    if (hit != NULL)
        *e = *hit;
    g_mutex_unlock(&s->lock);
    return hit != NULL;
}

static Eval
simulate(Search *s, int c, gint64 size, int channels)
{
    const Cand *cand = &g_array_index(s->cands, Cand, c);
    Eval e = { 0 };

    if (s->nccl_model != NULL) {
        const double t = cs_nccl_model_time_us(s->nccl_model, s->op, (CsNcclAlgo)cand->nccl_algo,
                                               cand->proto, size);
        e.ok = t >= 0.0;
        e.time_ps = t * 1e6;
        e.channels = cs_nccl_model_system(s->nccl_model)->graphs[cand->nccl_algo].n_channels;
        return e;
    }
    CsPredictOptions popts = s->o->predict;
    popts.nranks = s->nranks;
    /* Without --exact a size is extended where the predictor finds its pipeline's line at its
     * own chunk (cs_predict_one()), as collsim run does: a candidate whose grid times never
     * turn linear (NVLS on 72 GPUs, whose chunk grows with the size) is otherwise replayed
     * whole at every grid size up to 16 GiB. Past its cap select extends on its own line. */
    popts.exact = popts.exact || s->o->exact;
    if (popts.cache == NULL)
        popts.cache = s->points;
    if (channels > 0)
        popts.n_channels = channels;
    /* The candidate rule's protocol half, as collsim run applies it: grouped send/recv on GPUs
     * takes the protocol NCCL's p2p plan picks at this size. */
    if (!cs_predict_default_proto(s->topo, cand->algo, s->op, cand->proto, size, s->nranks,
                                  s->o->predict.any_algorithm)) {
        e.why = g_intern_static_string("not the protocol NCCL's p2p plan takes at this size");
        return e;
    }
    CsPrediction pred;
    g_autoptr(GError) error = NULL;
    g_atomic_int_inc(&s->n_sims);
    /* A refusal (protocol, size) only removes the candidate at this size. */
    if (!cs_predict_one(s->topo, s->op, size, cand->algo, cand->proto, &popts, &pred, &error)) {
        e.why = g_intern_string(error->message);
        return e;
    }
    e.ok = TRUE;
    e.extrapolated = pred.extrapolated;
    e.bracketed = pred.bracketed;
    e.time_ps = (double)pred.result.time;
    e.channels = pred.n_channels;
    e.peer_channels = pred.peer_channels;
    e.events = pred.result.n_events;
    return e;
}

/* Past the cap: the line through the candidate's last two simulated grid sizes. */
static Eval
extrapolate(Search *s, int c, gint64 size, int channels)
{
    Eval hi = evaluate(s, c, s->cap[c], channels);
    if (!hi.ok)
        return hi;
    Eval lo = evaluate(s, c, s->cap_below[c], hi.channels);
    if (!lo.ok)
        return lo;
    const double slope = (hi.time_ps - lo.time_ps) / (double)(s->cap[c] - s->cap_below[c]);
    Eval e = hi;
    e.time_ps = hi.time_ps + slope * (double)(size - s->cap[c]);
    e.extrapolated = TRUE;
    return e;
}

/* Between two grid sizes whose predictions each replayed more than interpolate_events events
 * (whole, or in the windows they were extended from) with the same channels: the line joining
 * them, instead of a replay as long. Only sizes strictly between grid sizes, once both are
 * known: the grid itself is always predicted. */
static gboolean
interpolate(Search *s, int c, gint64 size, int channels, Eval *out)
{
    if (s->grid == NULL || s->interpolate_events <= 0 || s->grid->len < 2)
        return FALSE;
    guint lo = 0;
    guint hi = s->grid->len - 1;
    const gint64 *grid = (const gint64 *)(gpointer)s->grid->data;
    if (size <= grid[lo] || size >= grid[hi])
        return FALSE;
    while (hi - lo > 1) {
        const guint mid = (lo + hi) / 2;
        if (grid[mid] <= size)
            lo = mid;
        else
            hi = mid;
    }
    Eval a;
    Eval b;
    if (size == grid[lo] || !recall(s, c, grid[lo], channels, &a)
        || !recall(s, c, grid[hi], channels, &b))
        return FALSE;
    if (!a.ok || !b.ok || a.events <= s->interpolate_events || b.events <= s->interpolate_events
        || a.channels != b.channels || a.peer_channels != b.peer_channels)
        return FALSE;
    /* A refusal that depends on the size itself still runs (simulate()): checked last, so
     * grid sizes and cheap neighbours do not ask it twice. */
    const Cand *cand = &g_array_index(s->cands, Cand, c);
    if (!cs_predict_default_proto(s->topo, cand->algo, s->op, cand->proto, size, s->nranks,
                                  s->o->predict.any_algorithm))
        return FALSE;
    *out = a;
    out->time_ps
        = a.time_ps
          + (b.time_ps - a.time_ps) * (double)(size - grid[lo]) / (double)(grid[hi] - grid[lo]);
    out->events = 0;
    out->bracketed = FALSE;
    out->interpolated = TRUE;
    return TRUE;
}

/* The candidate's time at @size with @channels (0 = predictor's choice), memoised. */
static Eval
evaluate(Search *s, int c, gint64 size, int channels)
{
    Eval e;
    if (!recall(s, c, size, channels, &e)) {
        if (s->cap[c] > 0 && size > s->cap[c])
            e = extrapolate(s, c, size, channels);
        else if (!interpolate(s, c, size, channels, &e))
            e = simulate(s, c, size, channels);
        remember(s, c, size, channels, &e);
        /* The predictor's own channel count, forced, is the same prediction. */
        Eval known;
        if (channels == 0 && e.ok && e.channels > 0 && !recall(s, c, size, e.channels, &known))
            remember(s, c, size, e.channels, &e);
    }
    return e;
}

typedef struct {
    int cand; /* -1: nothing runs */
    int channels;
    double time_ps;
    gboolean extrapolated;
    gboolean bracketed;
} Best;

/* A choice is an algorithm x protocol: the channel count follows the size (NCCL's own
 * thread-threshold rule, reproduced by the predictor), so it is reported, not searched. */
static gboolean
best_same(const Best *a, const Best *b)
{
    return a->cand == b->cand;
}

/* ---- Memoised times between the ranks of a study (mpirun) ----
 *
 * A loop's item fills the memo of its own candidate; the entries it made travel to the other
 * ranks (cs_parallel_for_ranks()), so every rank holds the same memo and the search after it
 * takes the same path everywhere. */

static void
pack_eval(GByteArray *out, const EvalKey *k, const Eval *e)
{
    cs_pack_int(out, k->channels);
    cs_pack_int(out, k->size);
    cs_pack_int(out, e->ok);
    cs_pack_double(out, e->time_ps);
    cs_pack_int(out, e->channels);
    cs_pack_int(out, e->peer_channels);
    cs_pack_int(out, e->events);
    cs_pack_int(out, e->extrapolated);
    cs_pack_int(out, e->bracketed);
    cs_pack_int(out, e->interpolated);
    cs_pack_string(out, e->why);
}

/* Reads @n entries of candidate @c into the memo; an entry this rank holds already is the
 * same time (a time depends only on its candidate and size). */
static void
unpack_evals(Search *s, int c, gint64 n, CsUnpack *in)
{
    for (gint64 i = 0; i < n; i++) {
        const int channels = (int)cs_unpack_int(in);
        const gint64 size = cs_unpack_int(in);
        Eval e = { 0 };
        e.ok = (gboolean)cs_unpack_int(in);
        e.time_ps = cs_unpack_double(in);
        e.channels = (int)cs_unpack_int(in);
        e.peer_channels = (int)cs_unpack_int(in);
        e.events = cs_unpack_int(in);
        e.extrapolated = (gboolean)cs_unpack_int(in);
        e.bracketed = (gboolean)cs_unpack_int(in);
        e.interpolated = (gboolean)cs_unpack_int(in);
        e.why = cs_unpack_interned(in);
        Eval known;
        if (!recall(s, c, size, channels, &known))
            remember(s, c, size, channels, &e);
    }
}

/* Every memoised entry of candidate @c, preceded by their count. */
static void
pack_candidate_evals(Search *s, int c, GByteArray *out)
{
    g_autoptr(GArray) keys = g_array_new(FALSE, FALSE, sizeof(EvalKey));
    g_autoptr(GArray) evals = g_array_new(FALSE, FALSE, sizeof(Eval));
    GHashTableIter it;
    gpointer k, v;
    g_mutex_lock(&s->lock);
    g_hash_table_iter_init(&it, s->cache);
    while (g_hash_table_iter_next(&it, &k, &v)) {
        if (((const EvalKey *)k)->cand != c)
            continue;
        g_array_append_val(keys, *(const EvalKey *)k);
        g_array_append_val(evals, *(const Eval *)v);
    }
    g_mutex_unlock(&s->lock);
    cs_pack_int(out, keys->len);
    for (guint i = 0; i < keys->len; i++)
        pack_eval(out, &g_array_index(keys, EvalKey, i), &g_array_index(evals, Eval, i));
}

/* The candidates of @mask not yet predicted at one size, predicted on options->jobs threads
 * before best_at() reads them in its own order. */
typedef struct {
    Search *s;
    gint64 size;
    const int *cands;
} Fill;

static void
fill_item(guint i, gpointer data)
{
    const Fill *f = data;
    evaluate(f->s, f->cands[i], f->size, 0);
}

/* What fill_item() memoised for its candidate at the size: the predictor's channels and
 * the same forced, and, past the candidate's cap, the two grid sizes it extends from. */
static void
fill_pack(guint i, GByteArray *out, gpointer data)
{
    const Fill *f = data;
    Search *s = f->s;
    const int c = f->cands[i];
    const gint64 sizes[3] = { f->size, s->cap[c], s->cap_below[c] };
    g_autoptr(GByteArray) entries = g_byte_array_new();
    gint64 n = 0;
    for (int k = 0; k < 3; k++) {
        if (sizes[k] <= 0 || (k > 0 && sizes[k] == f->size))
            continue;
        Eval e0;
        if (!recall(s, c, sizes[k], 0, &e0))
            continue;
        const EvalKey key0 = { c, 0, sizes[k] };
        pack_eval(entries, &key0, &e0);
        n++;
        Eval e;
        if (e0.channels > 0 && recall(s, c, sizes[k], e0.channels, &e)) {
            const EvalKey key = { c, e0.channels, sizes[k] };
            pack_eval(entries, &key, &e);
            n++;
        }
    }
    cs_pack_int(out, n);
    g_byte_array_append(out, entries->data, entries->len);
}

static void
fill_unpack(guint i, CsUnpack *in, gpointer data)
{
    const Fill *f = data;
    unpack_evals(f->s, f->cands[i], cs_unpack_int(in), in);
}

static void
fill(Search *s, const gboolean *mask, gint64 size)
{
    /* NCCL's model answers in microseconds: not worth a thread, nor a rank. */
    if ((s->o->jobs <= 1 && cs_parallel_n_ranks() <= 1) || s->nccl_model != NULL)
        return;
    g_autofree int *todo = g_new(int, MAX(1, s->cands->len));
    guint n = 0;
    for (guint c = 0; c < s->cands->len; c++) {
        Eval e;
        if (mask[c] && !recall(s, (int)c, size, 0, &e))
            todo[n++] = (int)c;
    }
    const Fill f = { s, size, todo };
    if (n >= 2)
        cs_parallel_for_ranks(n, 1, s->o->jobs, fill_item, NULL, fill_pack, fill_unpack,
                              (gpointer)&f);
}

/* The argmin over the candidates of @mask (ties to the lower index: deterministic). */
static Best
best_at(Search *s, const gboolean *mask, gint64 size)
{
    Best b = { -1, 0, G_MAXDOUBLE, FALSE, FALSE };
    fill(s, mask, size);
    for (guint c = 0; c < s->cands->len; c++) {
        if (!mask[c])
            continue;
        const Eval e = evaluate(s, (int)c, size, 0);
        if (e.ok && e.time_ps < b.time_ps) {
            b.cand = (int)c;
            b.channels = e.channels;
            b.time_ps = e.time_ps;
            b.extrapolated = e.extrapolated;
            b.bracketed = e.bracketed;
        }
    }
    return b;
}

/* The argmin over two candidates only (the bisection's predicate). */
static Best
best_of_two(Search *s, int a, int b, gint64 size)
{
    gboolean mask[2048] = { FALSE };
    g_assert((guint)MAX(a, b) < G_N_ELEMENTS(mask));
    mask[a] = TRUE;
    mask[b] = TRUE;
    return best_at(s, mask, size);
}

static CsSelectChoice
choice_of(const Search *s, int cand, int channels)
{
    CsSelectChoice ch = { NULL, -1, CS_PROTO_SIMPLE, 0 };
    if (cand < 0)
        return ch;
    const Cand *c = &g_array_index(s->cands, Cand, cand);
    ch.algo = c->algo;
    ch.nccl_algo = c->nccl_algo;
    ch.proto = c->proto;
    ch.n_channels = channels;
    return ch;
}

/* ---- Crossover search ---- */

typedef struct {
    Search *s;
    const gboolean *mask;
    gint64 g;    /* granularity */
    GArray *out; /* CsSelectCrossover */
    gboolean truncated;
} Bisect;

static void
record(Bisect *b, gint64 size, const Best *from, const Best *to)
{
    if (b->out->len >= MAX_CROSSOVERS) {
        b->truncated = TRUE;
        return;
    }
    Search *s = b->s;
    CsSelectCrossover x = { 0 };
    x.size_bytes = size;
    x.below_bytes = size - b->g;
    x.from = choice_of(s, from->cand, from->channels);
    x.to = choice_of(s, to->cand, to->channels);
    const Eval times[4]
        = { evaluate(s, from->cand, size, 0), evaluate(s, to->cand, size, 0),
            evaluate(s, from->cand, x.below_bytes, 0), evaluate(s, to->cand, x.below_bytes, 0) };
    /* A side that cannot run at a size (the reason the choice changes there) has no time. */
    x.from_time_us = times[0].ok ? times[0].time_ps / 1e6 : NAN;
    x.to_time_us = times[1].ok ? times[1].time_ps / 1e6 : NAN;
    x.from_time_below_us = times[2].ok ? times[2].time_ps / 1e6 : NAN;
    x.to_time_below_us = times[3].ok ? times[3].time_ps / 1e6 : NAN;
    for (int i = 0; i < 4; i++)
        x.interpolated |= times[i].interpolated;
    /* The argmin that confirmed the crossover weighed every candidate at both sizes. */
    for (guint c = 0; c < s->cands->len && !x.interpolated; c++) {
        Eval e;
        if (!b->mask[c])
            continue;
        x.interpolated |= (recall(s, (int)c, size, 0, &e) && e.interpolated)
                          || (recall(s, (int)c, x.below_bytes, 0, &e) && e.interpolated);
    }
    g_array_append_val(b->out, x);
}

/* Crossovers in (@a, @b], where the full argmin is @ca at @a and @cb at @b. */
static void
segment(Bisect *b, gint64 a, Best ca, gint64 bsize, Best cb, int depth)
{
    Search *s = b->s;

    if (best_same(&ca, &cb) || b->truncated)
        return;
    if (bsize - a == b->g) {
        record(b, bsize, &ca, &cb);
        return;
    }
    if (depth > 64) {
        b->truncated = TRUE;
        return;
    }
    /* First element count in (a, b] where {A, B} no longer picks A. */
    gint64 lo = a / b->g;
    gint64 hi = bsize / b->g;
    while (hi - lo > 1) {
        const gint64 mid = lo + (hi - lo) / 2;
        const Best m = best_of_two(s, ca.cand, cb.cand, mid * b->g);
        if (best_same(&m, &ca))
            lo = mid;
        else
            hi = mid;
    }
    const gint64 at = hi * b->g;
    const Best before = best_at(s, b->mask, at - b->g);
    const Best after = best_at(s, b->mask, at);

    /* Something else won before the found size: search (a, at - g] first. */
    if (!best_same(&before, &ca))
        segment(b, a, ca, at - b->g, before, depth + 1);
    if (!best_same(&before, &after))
        record(b, at, &before, &after);
    if (!best_same(&after, &cb))
        segment(b, at, after, bsize, cb, depth + 1);
}

/* ---- Margin: NCCL's pick unless the gain is worth it, and hysteresis ---- */

/* NCCL's own pick at @size among @mask, as a Best (cand -1: NCCL's model picks nothing here,
 * or its pick is not a candidate collsim can time). */
static Best
nccl_pick_at(Search *s, const gboolean *mask, gint64 size)
{
    Best nb = { -1, 0, G_MAXDOUBLE, FALSE, FALSE };
    CsNcclPrediction np;
    if (s->baseline == NULL || !cs_nccl_model_pick(s->baseline, s->op, size, &np))
        return nb;
    for (guint c = 0; c < s->cands->len; c++) {
        const Cand *cand = &g_array_index(s->cands, Cand, c);
        if (!mask[c] || cand->nccl_algo != (int)np.algo || cand->proto != np.proto)
            continue;
        const Eval e = evaluate(s, (int)c, size, 0);
        if (e.ok)
            nb = (Best){ (int)c, e.channels, e.time_ps, e.extrapolated, e.bracketed };
        break;
    }
    return nb;
}

/* @c's Best at @size, cand -1 when it does not run there. */
static Best
best_of_one(Search *s, const gboolean *mask, int c, gint64 size)
{
    Best b = { -1, 0, G_MAXDOUBLE, FALSE, FALSE };
    if (c < 0 || !mask[c])
        return b;
    const Eval e = evaluate(s, c, size, 0);
    if (e.ok)
        b = (Best){ c, e.channels, e.time_ps, e.extrapolated, e.bracketed };
    return b;
}

/* The choice at @size after @incumbent (the choice just below; cand -1 at the first size).
 * With no margin, the fastest. Otherwise NCCL's own pick stays unless the fastest beats it by
 * more than the margin; and the incumbent stays while it is within the margin of the
 * fastest and (when it is not NCCL's pick) still beats NCCL's pick by the margin, so a range
 * never ends on a difference below the margin. */
static Best
decide(Search *s, const gboolean *mask, gint64 size, const Best *incumbent)
{
    const Best b = best_at(s, mask, size);
    const double margin = s->margin[cs_regime_of_size(size)];
    if (margin <= 0.0 || b.cand < 0)
        return b;
    const double m = 1.0 + margin;
    const Best nb = nccl_pick_at(s, mask, size);
    const Best in = best_of_one(s, mask, incumbent != NULL ? incumbent->cand : -1, size);
    if (in.cand >= 0 && in.time_ps <= m * b.time_ps
        && (nb.cand < 0 || nb.cand == in.cand || in.time_ps * m < nb.time_ps))
        return in;
    if (nb.cand >= 0 && nb.time_ps <= m * b.time_ps)
        return nb;
    return b;
}

/* Crossovers in (@a, @bsize] under decide(): the first size where @ca no longer stays, then
 * on from there. */
static void
segment_margin(Bisect *b, gint64 a, Best ca, gint64 bsize, Best cb, int depth)
{
    Search *s = b->s;

    if (best_same(&ca, &cb) || b->truncated)
        return;
    if (depth > 64) {
        b->truncated = TRUE;
        return;
    }
    gint64 lo = a / b->g;
    gint64 hi = bsize / b->g;
    while (hi - lo > 1) {
        const gint64 mid = lo + (hi - lo) / 2;
        const Best m = decide(s, b->mask, mid * b->g, &ca);
        if (best_same(&m, &ca))
            lo = mid;
        else
            hi = mid;
    }
    const gint64 at = hi * b->g;
    const Best after = at == bsize ? cb : decide(s, b->mask, at, &ca);
    record(b, at, &ca, &after);
    if (at < bsize && !best_same(&after, &cb))
        segment_margin(b, at, after, bsize, cb, depth + 1);
}

/* ---- One table ---- */

static void
table_clear(CsSelectTable *t)
{
    g_clear_pointer(&t->points, g_array_unref);
    g_clear_pointer(&t->crossovers, g_array_unref);
    g_clear_pointer(&t->ranges, g_array_unref);
    g_clear_pointer(&t->note, g_free);
}

/* @choice's gain over NCCL's own pick at @size in percent: 0 when it is NCCL's pick, NAN
 * when NCCL's model picks nothing collsim can time. */
static double
gain_at(Search *s, const gboolean *mask, const CsSelectChoice *choice, gint64 size)
{
    const Best nb = nccl_pick_at(s, mask, size);
    if (nb.cand < 0)
        return NAN;
    int c = -1;
    for (guint i = 0; i < s->cands->len; i++) {
        const Cand *cand = &g_array_index(s->cands, Cand, i);
        if (cand->algo == choice->algo && cand->nccl_algo == choice->nccl_algo
            && cand->proto == choice->proto) {
            c = (int)i;
            break;
        }
    }
    if (c == nb.cand)
        return 0.0;
    const Best mine = best_of_one(s, mask, c, size);
    if (mine.cand < 0 || mine.time_ps <= 0.0)
        return NAN;
    return 100.0 * (nb.time_ps / mine.time_ps - 1.0);
}

/* Each range's gain over NCCL's pick: the smallest over the grid sizes inside it, or at its
 * first size (the granularity for the range from 0) when none is. */
static void
range_gains(Search *s, const gboolean *mask, const GArray *grid, gint64 g, CsSelectTable *t)
{
    for (guint j = 0; j < t->ranges->len; j++) {
        CsSelectRange *r = &g_array_index(t->ranges, CsSelectRange, j);
        double gain = NAN;
        for (guint i = 0; i < grid->len; i++) {
            const gint64 size = g_array_index(grid, gint64, i);
            if (size < r->min_bytes || (r->max_bytes >= 0 && size > r->max_bytes))
                continue;
            const double x = gain_at(s, mask, &r->choice, size);
            if (!isnan(x) && (isnan(gain) || x < gain))
                gain = x;
        }
        if (isnan(gain))
            gain = gain_at(s, mask, &r->choice, MAX(r->min_bytes, g));
        r->gain_pct = gain;
        /* The margin and validation of the regimes it overlaps, up to the grid's end. */
        const gint64 top = r->max_bytes < 0 ? MAX(r->min_bytes, s->grid_end) : r->max_bytes;
        r->margin_pct = 0.0;
        r->validated = TRUE;
        for (int k = cs_regime_of_size(r->min_bytes); k <= (int)cs_regime_of_size(top); k++) {
            r->margin_pct = MAX(r->margin_pct, 100.0 * s->margin[k]);
            r->validated = r->validated && s->validated[k];
        }
    }
}

static void
build_table(Search *s, const gboolean *mask, const GArray *grid, gint64 g, gboolean nccl_only,
            CsSelectTable *t, GArray *measures)
{
    const CsDtype dtype = s->o->predict.dtype;
    t->op = s->op;
    t->nccl_only = nccl_only;
    t->granularity = g;
    t->points = g_array_new(FALSE, TRUE, sizeof(CsSelectPoint));
    t->crossovers = g_array_new(FALSE, TRUE, sizeof(CsSelectCrossover));
    t->ranges = g_array_new(FALSE, TRUE, sizeof(CsSelectRange));
    for (guint c = 0; c < s->cands->len; c++)
        if (mask[c])
            t->n_candidates++;
    if (t->n_candidates == 0) {
        t->note = g_strdup_printf("no candidate implements %s here", cs_op_name(s->op));
        return;
    }

    g_autoptr(GArray) bests = g_array_new(FALSE, FALSE, sizeof(Best));
    for (guint i = 0; i < grid->len; i++) {
        const gint64 size = g_array_index(grid, gint64, i);
        const Best b
            = decide(s, mask, size, i > 0 ? &g_array_index(bests, Best, bests->len - 1) : NULL);
        if (b.cand < 0) {
            t->note = g_strdup_printf("no candidate runs %s of %" G_GINT64_FORMAT " bytes",
                                      cs_op_name(s->op), size);
            if (s->unserved == 0) {
                s->unserved = size;
                /* Why the first candidate fails there: the same for every thread count. */
                for (guint c = 0; c < s->cands->len && s->unserved_why == NULL; c++)
                    if (mask[c])
                        s->unserved_why = evaluate(s, (int)c, size, 0).why;
            }
            g_array_set_size(t->points, 0);
            return;
        }
        g_array_append_val(bests, b);
        const CsOpSize os = cs_op_size(s->op, size, dtype, s->nranks);
        CsSelectPoint p = { 0 };
        p.size_bytes = size;
        p.best = choice_of(s, b.cand, b.channels);
        p.time_us = b.time_ps / 1e6;
        p.extrapolated = b.extrapolated;
        p.bracketed = b.bracketed;
        p.algbw_GBps = p.time_us > 0.0 ? (double)os.size_bytes / (p.time_us * 1e3) : 0.0;
        p.busbw_GBps = p.algbw_GBps * cs_op_busbw_factor(s->op, s->nranks);
        g_array_append_val(t->points, p);
        if (measures != NULL) {
            for (guint c = 0; c < s->cands->len; c++) {
                if (!mask[c])
                    continue;
                const Eval e = evaluate(s, (int)c, size, 0);
                if (!e.ok)
                    continue;
                Measure m = { size, choice_of(s, (int)c, e.channels), e.time_ps / 1e6 };
                g_array_append_val(measures, m);
            }
        }
    }

    Bisect b = { s, mask, g, t->crossovers, FALSE };
    gboolean margin = FALSE;
    for (int k = 0; k < CS_N_REGIMES; k++)
        margin |= s->margin[k] > 0.0;
    for (guint i = 0; i + 1 < bests->len; i++) {
        (margin ? segment_margin : segment)(
            &b, g_array_index(grid, gint64, i), g_array_index(bests, Best, i),
            g_array_index(grid, gint64, i + 1), g_array_index(bests, Best, i + 1), 0);
        if (s->o->progress != NULL) {
            g_autofree char *from = cs_units_format_size(g_array_index(grid, gint64, i));
            g_autofree char *to = cs_units_format_size(g_array_index(grid, gint64, i + 1));
            g_autofree char *label = g_strdup_printf("crossovers %s .. %s", from, to);
            s->o->progress(s->op, ++s->progress_done, s->progress_total, label,
                           s->o->progress_data);
        }
    }
    if (b.truncated)
        t->note = g_strdup_printf("more than %d crossovers: the list is cut", MAX_CROSSOVERS);

    /* Ranges: the first choice from 0, each crossover opens the next, the last is open. Each
     * carries the channel count at its largest size: NCCL takes a tuner's count as a maximum
     * and lowers it for smaller operations itself (enqueue.cc thread thresholds). */
    CsSelectRange r
        = { 0, -1, g_array_index(t->points, CsSelectPoint, 0).best, 0.0, 0.0, FALSE, FALSE };
    for (guint i = 0; i < t->crossovers->len; i++) {
        const CsSelectCrossover *x = &g_array_index(t->crossovers, CsSelectCrossover, i);
        r.max_bytes = x->size_bytes - 1;
        r.choice.n_channels = x->from.n_channels;
        g_array_append_val(t->ranges, r);
        r.min_bytes = x->size_bytes;
        r.choice = x->to;
    }
    r.max_bytes = -1;
    r.choice.n_channels
        = g_array_index(t->points, CsSelectPoint, t->points->len - 1).best.n_channels;
    g_array_append_val(t->ranges, r);
    range_gains(s, mask, grid, g, t);
}

/* ---- The selection ---- */

static void
op_result_free(gpointer p)
{
    OpResult *r = p;
    table_clear(&r->full);
    table_clear(&r->nccl_own);
    g_clear_pointer(&r->measures, g_array_unref);
    g_clear_pointer(&r->compare, g_array_unref);
    g_clear_pointer(&r->grid, g_array_unref);
    g_free(r);
}

void
cs_selection_free(CsSelection *selection)
{
    if (selection == NULL)
        return;
    g_clear_pointer(&selection->topo, cs_topo_unref);
    g_free(selection->model);
    g_free(selection->compare_spec);
    g_clear_pointer(&selection->nccl, cs_nccl_model_free);
    g_clear_pointer(&selection->ops, g_ptr_array_unref);
    g_clear_pointer(&selection->notes, g_ptr_array_unref);
    g_free(selection);
}

/* The grid of sizes nccl-tests would run for @op, rounded as it rounds them, without the
 * zero-byte sizes and repeats that rounding makes of the smallest ones. */
static GArray *
make_grid(const CsSelectOptions *o, CsOp op, int nranks)
{
    GArray *grid = g_array_new(FALSE, FALSE, sizeof(gint64));
    for (gint64 x = o->min_bytes; x <= o->max_bytes;) {
        const gint64 size = cs_op_size(op, x, o->predict.dtype, nranks).size_bytes;
        if (size > 0 && (grid->len == 0 || size > g_array_index(grid, gint64, grid->len - 1)))
            g_array_append_val(grid, size);
        if (x > G_MAXINT64 / o->step_factor)
            break;
        x *= o->step_factor;
    }
    return grid;
}

static gint64
granularity(CsOp op, CsDtype dtype, int nranks)
{
    const gint64 ts = cs_dtype_size(dtype);
    switch (op) {
    case CS_OP_ALL_REDUCE:
    case CS_OP_BROADCAST:
    case CS_OP_REDUCE:
        return ts;
    default:
        return ts * nranks;
    }
}

/* Collsim's candidates for @op: the algorithms collsim run weighs by default
 * (cs_predict_default_candidate(): NCCL's on GPU ranks, every one but RCCL's all-pairs on CPU
 * ranks, every one with @any_algorithm) that serve it here, with every protocol the GPUs' library
 * picks from by default (the topology's default_protocols; the predictor refuses illegal protocols,
 * and simulate() those NCCL's p2p plan does not take, size by size). */
static GArray *
collsim_candidates(const CsTopo *topo, CsOp op, int nranks, const CsNcclModel *nccl,
                   gboolean any_algorithm)
{
    GArray *cands = g_array_new(FALSE, TRUE, sizeof(Cand));
    const int func = cs_nccl_func_from_op(op);
    const guint defaults = cs_topo_default_protos(topo, nranks);
    for (const CsAlgo *const *a = cs_algo_registry(); *a != NULL; a++) {
        const CsAlgo *algo = *a;
        const char *why = NULL;
        if ((algo->ops & CS_OP_BIT(op)) == 0)
            continue;
        if (!cs_predict_default_candidate(algo, op, topo, nranks, any_algorithm))
            continue;
        /* As the predictor asks: the machine only when all of it runs. */
        if (algo->supports != NULL
            && !algo->supports(nranks == cs_topo_n_ranks(topo) ? topo : NULL, op, nranks, &why))
            continue;
        CsNcclAlgo na;
        const gboolean is_nccl = cs_nccl_algo_from_collsim(algo->name, &na);
        for (int p = 0; p < CS_N_PROTOS; p++) {
            if ((defaults & (1u << p)) == 0)
                continue;
            Cand c = { algo, is_nccl ? (int)na : -1, (CsProto)p, FALSE };
            c.nccl_ok
                = is_nccl && func >= 0
                  && cs_nccl_model_bandwidth_GBps(nccl, (CsNcclFunc)func, na, (CsProto)p) > 0.0;
            g_array_append_val(cands, c);
        }
    }
    return cands;
}

/* Candidate @c's simulation cap: the first grid size whose simulation replays more than
 * @max_events events, provided the line through it and the size before is already the
 * bandwidth regime (intercept at most a tenth of the time) and the channel count no longer
 * changes up to the largest size. Otherwise simulation goes on. */
static void
set_cap(Search *s, guint c, const GArray *grid, gint64 max_events)
{
    const gint64 largest = g_array_index(grid, gint64, grid->len - 1);
    const Cand *cand = &g_array_index(s->cands, Cand, c);
    const int last_channels = s->o->predict.n_channels > 0
                                  ? s->o->predict.n_channels
                                  : cs_predict_default_channels(s->topo, cand->algo, s->op,
                                                                cand->proto, largest, s->nranks);
    for (guint i = 2; i < grid->len; i++) {
        const gint64 size = g_array_index(grid, gint64, i);
        const gint64 below = g_array_index(grid, gint64, i - 1);
        const gint64 below2 = g_array_index(grid, gint64, i - 2);
        const Eval e = evaluate(s, (int)c, size, 0);
        if (!e.ok || e.events <= max_events)
            continue;
        const Eval p = evaluate(s, (int)c, below, 0);
        const Eval q = evaluate(s, (int)c, below2, 0);
        if (!p.ok || !q.ok || p.channels != e.channels || e.channels != last_channels
            || p.peer_channels != e.peer_channels
            || e.peer_channels
                   != cs_predict_peer_channels(s->topo, cand->algo, s->op, cand->proto, largest,
                                               s->nranks))
            continue;
        const double slope = (e.time_ps - p.time_ps) / (double)(size - below);
        const double slope_before = (p.time_ps - q.time_ps) / (double)(below - below2);
        const double intercept = e.time_ps - slope * (double)size;
        /* Linear already: the last two slopes agree and latency is a small part. */
        if (slope <= 0.0 || intercept > 0.1 * e.time_ps
            || fabs(slope - slope_before) > 0.002 * slope)
            continue;
        s->cap[c] = size;
        s->cap_below[c] = below;
        break;
    }
}

/* Everything of one candidate that the search reads at the grid sizes: its cap, then its
 * time at each size. */
typedef struct {
    Search *s;
    const GArray *grid;
    gint64 max_events;
    const gboolean *used; /* per candidate: in a table's mask */
} Prefetch;

static void
prefetch_candidate(guint c, gpointer data)
{
    Prefetch *p = data;
    Search *s = p->s;
    if (s->nccl_model == NULL && !s->o->exact)
        set_cap(s, c, p->grid, p->max_events);
    if (!p->used[c])
        return;
    for (guint i = 0; i < p->grid->len; i++)
        evaluate(s, (int)c, g_array_index(p->grid, gint64, i), 0);
}

static void
prefetch_done(guint done, guint c, gpointer data)
{
    Prefetch *p = data;
    Search *s = p->s;
    const Cand *cand = &g_array_index(s->cands, Cand, c);
    g_autofree char *label = NULL;
    if (s->o->progress == NULL)
        return;
    label = g_strdup_printf("%s/%s",
                            cand->algo != NULL ? cand->algo->name
                                               : cs_nccl_algo_name((CsNcclAlgo)cand->nccl_algo),
                            cs_proto_name(cand->proto));
    s->progress_done = done;
    s->o->progress(s->op, done, s->progress_total, label, s->o->progress_data);
}

/* Candidate @c's cap and every time memoised for it, for the other ranks of a study. */
static void
prefetch_pack(guint c, GByteArray *out, gpointer data)
{
    const Prefetch *p = data;
    cs_pack_int(out, p->s->cap[c]);
    cs_pack_int(out, p->s->cap_below[c]);
    pack_candidate_evals(p->s, (int)c, out);
}

static void
prefetch_unpack(guint c, CsUnpack *in, gpointer data)
{
    const Prefetch *p = data;
    p->s->cap[c] = cs_unpack_int(in);
    p->s->cap_below[c] = cs_unpack_int(in);
    unpack_evals(p->s, (int)c, cs_unpack_int(in), in);
}

/* Caps and grid times of every candidate (the @used ones' grid times), on options->jobs
 * threads and over the ranks of a study. */
static void
prefetch(Search *s, const GArray *grid, gint64 max_events, const gboolean *used)
{
    Prefetch p = { s, grid, max_events, used };
    cs_parallel_for_ranks(s->cands->len, 1, s->o->jobs, prefetch_candidate, prefetch_done,
                          prefetch_pack, prefetch_unpack, &p);
}

/* NCCL's own candidates for @op: every usable entry of its tables among the GPUs' default
 * protocols (default_protocols). */
static GArray *
nccl_candidates(const CsNcclModel *nccl, CsOp op, guint default_protos)
{
    GArray *cands = g_array_new(FALSE, TRUE, sizeof(Cand));
    const int func = cs_nccl_func_from_op(op);
    if (func < 0)
        return cands;
    for (int a = 0; a < CS_NCCL_N_ALGOS; a++) {
        for (int p = 0; p < CS_N_PROTOS; p++) {
            if ((default_protos & (1u << p)) == 0)
                continue;
            if (cs_nccl_model_bandwidth_GBps(nccl, (CsNcclFunc)func, (CsNcclAlgo)a, (CsProto)p)
                <= 0.0)
                continue;
            Cand c = { NULL, a, (CsProto)p, TRUE };
            g_array_append_val(cands, c);
        }
    }
    return cands;
}

/* Per grid size: NCCL's pick under its model, and collsim's engine on it. */
static GArray *
compare_rows(Search *s, const CsNcclModel *nccl, const OpResult *r)
{
    GArray *rows = g_array_new(FALSE, TRUE, sizeof(CsSelectCompareRow));
    const CsSelectTable *mine = r->nccl;
    for (guint i = 0; i < r->grid->len; i++) {
        const gint64 size = g_array_index(r->grid, gint64, i);
        CsSelectCompareRow row = { 0 };
        row.size_bytes = size;
        if (!cs_nccl_model_pick(nccl, s->op, size, &row.nccl))
            continue;
        const CsSelectPoint *p = &g_array_index(mine->points, CsSelectPoint, i);
        row.best = p->best;
        row.best_us = p->time_us;
        for (guint c = 0; c < s->cands->len; c++) {
            const Cand *cand = &g_array_index(s->cands, Cand, c);
            if (cand->nccl_algo != (int)row.nccl.algo || cand->proto != row.nccl.proto)
                continue;
            const Eval e = evaluate(s, (int)c, size, 0);
            if (!e.ok)
                break;
            row.nccl_simulated = TRUE;
            row.nccl_as_collsim = choice_of(s, (int)c, e.channels);
            row.nccl_pick_us = e.time_ps / 1e6;
            row.loss_us = MAX(0.0, row.nccl_pick_us - row.best_us);
            row.loss_pct = row.best_us > 0.0 ? 100.0 * row.loss_us / row.best_us : 0.0;
            break;
        }
        g_array_append_val(rows, row);
    }
    return rows;
}

/* NCCL's nodes among @topo's ranks @ranks[0 .. @nranks - 1], or its first @nranks ranks when
 * @ranks is NULL: what NCCL passes its tuner as nNodes (init.cc), an NVLink clique of GB200
 * trays one node (cs_nccl_nodes()). */
static int
count_nodes(const CsTopo *topo, int nranks, const int *ranks)
{
    return cs_nccl_nodes(topo, nranks, ranks, NULL, NULL);
}

/* On one node of 8 AMD GPUs on an xGMI mesh, RCCL's MSCCL scheduler takes the all-reduces its
 * all-pairs files cover before NCCL_ALGO, NCCL_PROTO or a tuner plugin is read (allpairs.c,
 * predict_best.c): an all-reduce table cannot change what RCCL runs there, and the selection
 * says so. */
static void
note_rccl_msccl(CsSelection *sel, const CsTopo *topo, const CsSelectOptions *o, int nranks)
{
    if ((o->ops & CS_OP_BIT(CS_OP_ALL_REDUCE)) == 0
        || !cs_predict_rccl_msccl_node(topo, nranks, sel->nccl, o->predict.redop))
        return;
    g_autofree char *rule = cs_allpairs_msccl_text(cs_dtype_size(o->predict.dtype));
    g_autofree char *line = g_strdup_printf(
        "allreduce: RCCL's MSCCL scheduler runs its all-pairs files on this node %s before "
        "NCCL_ALGO, NCCL_PROTO or a tuner plugin is read: there the table does not change what "
        "RCCL runs (collsim's allpairs; docs/rccl-model.md)",
        rule);
    cs_selection_add_note(sel, line);
}

static CsSelection *
run(const CsTopo *topo, const CsSelectOptions *o, const char *compare_spec, GError **error)
{
    g_return_val_if_fail(topo != NULL && o != NULL, NULL);
    const gint64 t0 = g_get_monotonic_time();
    const int all = cs_topo_n_ranks(topo);
    const int nranks = o->predict.nranks > 0 ? o->predict.nranks : all;

    if (nranks > all) {
        g_set_error(error, CS_SELECT_ERROR, CS_SELECT_ERROR_OPTIONS, "%d ranks asked, %s has %d",
                    nranks, cs_topo_name(topo), all);
        return NULL;
    }
    /* Every candidate keeps to the ranks' default protocols: none shared, no table. */
    g_autofree char *no_protocol = cs_predict_no_shared_protocol(topo, nranks);
    if (no_protocol != NULL) {
        g_set_error(error, CS_SELECT_ERROR, CS_SELECT_ERROR_OPTIONS,
                    "%s; select among fewer ranks (--ranks)", no_protocol);
        return NULL;
    }
    if (o->min_bytes < 1 || o->max_bytes < o->min_bytes || o->step_factor < 2) {
        g_set_error(error, CS_SELECT_ERROR, CS_SELECT_ERROR_OPTIONS,
                    "sizes must grow from at least 1 byte by a factor of at least 2 "
                    "(got %" G_GINT64_FORMAT " ... %" G_GINT64_FORMAT " x %" G_GINT64_FORMAT ")",
                    o->min_bytes, o->max_bytes, o->step_factor);
        return NULL;
    }
    if (o->max_bytes > CS_PREDICT_MAX_BYTES) {
        g_set_error(error, CS_SELECT_ERROR, CS_SELECT_ERROR_OPTIONS,
                    "largest size %" G_GINT64_FORMAT " bytes is beyond what collsim predicts "
                    "(1 PiB)",
                    o->max_bytes);
        return NULL;
    }

    g_autoptr(CsSelection) sel = g_new0(CsSelection, 1);
    sel->topo = cs_topo_ref((CsTopo *)topo);
    sel->nranks = nranks;
    sel->nnodes = count_nodes(topo, nranks, NULL);
    sel->dtype = o->predict.dtype;
    sel->min_bytes = o->min_bytes;
    sel->max_bytes = o->max_bytes;
    sel->step_factor = o->step_factor;
    sel->exact = o->exact;
    sel->forced_channels = o->predict.n_channels;
    sel->max_events = o->max_events > 0 ? o->max_events : DEFAULT_MAX_EVENTS;
    sel->interpolate_events = o->exact || o->nccl_spec != NULL ? 0
                              : o->interpolate_events == 0     ? DEFAULT_INTERPOLATE_EVENTS
                                                               : MAX(o->interpolate_events, 0);
    sel->min_gain_pct = o->nccl_spec != NULL ? 0.0 : MAX(0.0, o->min_gain_pct);
    /* The margin per size regime: --min-gain, or (the default) the model's validated error
     * for this machine class there, at least 5%. Under NCCL's own model there is none. */
    sel->machine_class = cs_validated_class(topo, nranks);
    sel->validated_margin = o->validated_margin && o->nccl_spec == NULL;
    for (int k = 0; k < CS_N_REGIMES; k++) {
        const double v
            = cs_validated_margin_pct(sel->machine_class, (CsRegime)k, &sel->validated[k]);
        sel->margin_pct[k] = o->nccl_spec != NULL    ? 0.0
                             : sel->validated_margin ? v
                                                     : sel->min_gain_pct;
    }
    sel->nccl_model = o->nccl_spec != NULL;
    sel->nccl_only = o->nccl_only || sel->nccl_model;
    sel->any_algorithm = o->predict.any_algorithm;
    sel->mpi = cs_predict_cpu_ranks(topo, nranks);
    sel->compare_spec = g_strdup(compare_spec);
    sel->ops = g_ptr_array_new_with_free_func(op_result_free);

    /* NCCL's model: the selection's model, or what NCCL implements and picks; by default the
     * library that runs on these GPUs (RCCL's own on AMD GPUs, as collsim run picks). */
    const char *spec = o->nccl_spec != NULL   ? o->nccl_spec
                       : compare_spec != NULL ? compare_spec
                                              : cs_nccl_default_spec(topo, nranks);
    sel->nccl = cs_nccl_model_new_for_topo(topo, nranks, spec, error);
    if (sel->nccl == NULL)
        return NULL;
    if (sel->nccl_model)
        sel->model = g_strdup_printf("nccl:%s", cs_nccl_model_constants(sel->nccl)->version);
    else if (o->predict.engine.textbook)
        sel->model = g_strdup("textbook");
    else
        sel->model = g_strdup(o->predict.engine.net_model != NULL ? o->predict.engine.net_model
                                                                  : "reservation");

    g_autoptr(CsPointCache) points = cs_point_cache_new(FALSE);
    cs_point_cache_bind(points, topo);
    for (int op = 0; op < CS_N_OPS; op++) {
        if ((o->ops & CS_OP_BIT(op)) == 0)
            continue;
        const int func = cs_nccl_func_from_op((CsOp)op);
        if (sel->nccl_model && func < 0)
            continue;
        /* Below one element per rank nccl-tests runs only empty sizes: nothing to select. */
        g_autoptr(GArray) grid = make_grid(o, (CsOp)op, nranks);
        if (grid->len == 0) {
            g_set_error(error, CS_SELECT_ERROR, CS_SELECT_ERROR_OPTIONS,
                        "no %s size from -b %" G_GINT64_FORMAT " to -e %" G_GINT64_FORMAT
                        " on %d ranks: the smallest is %" G_GINT64_FORMAT " bytes",
                        cs_op_name((CsOp)op), o->min_bytes, o->max_bytes, nranks,
                        granularity((CsOp)op, o->predict.dtype, nranks));
            return NULL;
        }
        Search s = { 0 };
        s.topo = topo;
        s.points = points;
        s.o = o;
        s.nccl_model = sel->nccl_model ? sel->nccl : NULL;
        /* Under NCCL's own model the pick is NCCL's: no gain to weigh. */
        /* No NCCL runs on CPU ranks (cs_predict_cpu_ranks()): no NCCL pick to keep there,
         * the margin is hysteresis only, as collsim run picks the fastest there. */
        s.baseline = sel->nccl_model || sel->mpi ? NULL : sel->nccl;
        for (int k = 0; k < CS_N_REGIMES; k++) {
            s.margin[k] = sel->margin_pct[k] / 100.0;
            s.validated[k] = sel->validated[k];
        }
        s.op = (CsOp)op;
        s.nranks = nranks;
        s.cands = sel->nccl_model
                      ? nccl_candidates(sel->nccl, s.op, cs_topo_default_protos(topo, nranks))
                      : collsim_candidates(topo, s.op, nranks, sel->nccl, o->predict.any_algorithm);
        s.cache = g_hash_table_new_full(eval_key_hash, eval_key_equal, g_free, g_free);
        g_mutex_init(&s.lock);
        s.cap = g_new0(gint64, MAX(1, s.cands->len));
        s.cap_below = g_new0(gint64, MAX(1, s.cands->len));
        if (s.cands->len >= 2048) {
            g_set_error(error, CS_SELECT_ERROR, CS_SELECT_ERROR_OPTIONS,
                        "%u candidates for %s: more than the 2047 the search handles", s.cands->len,
                        cs_op_name(s.op));
            g_array_unref(s.cands);
            g_hash_table_unref(s.cache);
            g_mutex_clear(&s.lock);
            g_free(s.cap);
            g_free(s.cap_below);
            return NULL;
        }

        OpResult *r = g_new0(OpResult, 1);
        g_ptr_array_add(sel->ops, r);
        r->grid = g_steal_pointer(&grid);
        s.grid_end = g_array_index(r->grid, gint64, r->grid->len - 1);
        s.grid = r->grid;
        s.interpolate_events = sel->interpolate_events;
        const gint64 g = granularity(s.op, o->predict.dtype, nranks);

        g_autofree gboolean *all_mask = g_new0(gboolean, MAX(1, s.cands->len));
        g_autofree gboolean *nccl_mask = g_new0(gboolean, MAX(1, s.cands->len));
        g_autofree gboolean *used = g_new0(gboolean, MAX(1, s.cands->len));
        gboolean differ = FALSE;
        for (guint c = 0; c < s.cands->len; c++) {
            const Cand *cand = &g_array_index(s.cands, Cand, c);
            all_mask[c] = !o->nccl_only || cand->nccl_ok;
            nccl_mask[c] = cand->nccl_ok;
            differ |= all_mask[c] != nccl_mask[c];
            used[c] = all_mask[c] || (func >= 0 && nccl_mask[c]);
        }
        const gint64 t_grid = g_get_monotonic_time();
        /* Progress: each candidate's grid sizes, then each interval of each table. */
        const guint n_tables = func >= 0 && differ ? 2 : 1;
        s.progress_total = s.cands->len + n_tables * (r->grid->len - 1);
        prefetch(&s, r->grid, sel->max_events, used);
        g_debug("select: %s: %u candidates at %u grid sizes in %.3f s", cs_op_name(s.op),
                s.cands->len, r->grid->len, (g_get_monotonic_time() - t_grid) / 1e6);
        r->measures = g_array_new(FALSE, TRUE, sizeof(Measure));
        build_table(&s, all_mask, r->grid, g, sel->nccl_only, &r->full,
                    differ || func < 0 ? NULL : r->measures);
        if (func >= 0) {
            if (differ) {
                build_table(&s, nccl_mask, r->grid, g, TRUE, &r->nccl_own, r->measures);
                r->nccl = &r->nccl_own;
            }
            else {
                r->nccl = &r->full;
            }
        }
        if (compare_spec != NULL && r->nccl != NULL && r->nccl->points->len == r->grid->len)
            r->compare = compare_rows(&s, sel->nccl, r);

        /* A grid size that nothing runs (beyond the engine's size or clock) would leave the
         * collective without a table: the asked grid is wrong, not the machine. */
        const gint64 unserved = s.unserved;
        const char *why = s.unserved_why;
        sel->n_sims += s.n_sims;
        g_array_unref(s.cands);
        g_hash_table_unref(s.cache);
        g_mutex_clear(&s.lock);
        g_free(s.cap);
        g_free(s.cap_below);
        if (unserved > 0) {
            g_set_error(error, CS_SELECT_ERROR, CS_SELECT_ERROR_UNSERVED,
                        "no candidate runs %s of %" G_GINT64_FORMAT " bytes%s%s",
                        cs_op_name((CsOp)op), unserved, why != NULL ? ": " : "",
                        why != NULL ? why : "");
            return NULL;
        }
    }
    if (sel->ops->len == 0) {
        g_set_error(error, CS_SELECT_ERROR, CS_SELECT_ERROR_NOTHING,
                    "NCCL's cost model covers none of the collectives asked (it has broadcast, "
                    "reduce, allgather, reducescatter and allreduce)");
        return NULL;
    }
    note_rccl_msccl(sel, topo, o, nranks);
    sel->seconds = (g_get_monotonic_time() - t0) / 1e6;
    g_debug("select: %d simulations in %.3f s", sel->n_sims, sel->seconds);
    return g_steal_pointer(&sel);
}

/* ---- Communicator shapes ---- */

/**
 * cs_select_shape_topo:
 * The topology of the ranks a communicator of @shape uses on @topo, as a real run places
 * them: without @shape->nnodes, the first @shape->nranks ranks (ranks fill nodes in rank
 * order); with it, the first nranks / nnodes ranks of each of the first nnodes nodes (nodes in
 * the order of their first rank); nranks 0 with nnodes: every rank of those nodes. The copy
 * has just those ranks (cs_topo_subset()), so algorithms and NCCL's model see the GPUs,
 * links and NICs the communicator has. @resolved (nullable) gets the ranks and nodes.
 * Errors (CS_SELECT_ERROR_OPTIONS): more ranks or nodes than @topo has, ranks that do not
 * divide evenly over the nodes, more ranks per node than a node has.
 * Returns: (transfer full) (nullable) @topo itself (a reference) when the shape is all of it.
 */
CsTopo *
cs_select_shape_topo(const CsTopo *topo, const CsSelectShape *shape, CsSelectShape *resolved,
                     GError **error)
{
    g_return_val_if_fail(topo != NULL && shape != NULL, NULL);
    g_return_val_if_fail(shape->nranks >= 0 && shape->nnodes >= 0, NULL);
    const int all = cs_topo_n_ranks(topo);
    int nranks = shape->nranks;

    if (nranks > all) {
        g_set_error(error, CS_SELECT_ERROR, CS_SELECT_ERROR_OPTIONS, "%s has only %d rank%s",
                    cs_topo_name(topo), all, cs_select_plural(all));
        return NULL;
    }
    g_autofree int *ranks = g_new(int, all);
    if (shape->nnodes == 0) {
        if (nranks == 0)
            nranks = all;
        for (int r = 0; r < nranks; r++)
            ranks[r] = r;
    }
    else {
        /* Nodes in the order of their first rank, each with its ranks in rank order. */
        g_autoptr(GHashTable) index = g_hash_table_new(NULL, NULL); /* node + 1 -> k + 1 */
        g_autoptr(GPtrArray) node_ranks
            = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
        for (int r = 0; r < all; r++) {
            const gpointer id = GINT_TO_POINTER(cs_topo_rank_node(topo, r) + 1);
            guint k = GPOINTER_TO_UINT(g_hash_table_lookup(index, id));
            if (k == 0) {
                g_ptr_array_add(node_ranks, g_array_new(FALSE, FALSE, sizeof(int)));
                k = node_ranks->len;
                g_hash_table_insert(index, id, GUINT_TO_POINTER(k));
            }
            g_array_append_val(g_ptr_array_index(node_ranks, k - 1), r);
        }
        const int n_nodes = (int)node_ranks->len;
        if (shape->nnodes > n_nodes) {
            g_set_error(error, CS_SELECT_ERROR, CS_SELECT_ERROR_OPTIONS, "%s has only %d node%s",
                        cs_topo_name(topo), n_nodes, cs_select_plural(n_nodes));
            return NULL;
        }
        if (nranks == 0) {
            for (int k = 0; k < shape->nnodes; k++) {
                const GArray *on = g_ptr_array_index(node_ranks, k);
                for (guint i = 0; i < on->len; i++)
                    ranks[nranks++] = g_array_index(on, int, i);
            }
        }
        else {
            if (nranks % shape->nnodes != 0) {
                g_set_error(error, CS_SELECT_ERROR, CS_SELECT_ERROR_OPTIONS,
                            "%d rank%s do not divide evenly over %d nodes", nranks,
                            cs_select_plural(nranks), shape->nnodes);
                return NULL;
            }
            const int per_node = nranks / shape->nnodes;
            int n = 0;
            for (int k = 0; k < shape->nnodes; k++) {
                const GArray *on = g_ptr_array_index(node_ranks, k);
                if ((int)on->len < per_node) {
                    g_set_error(error, CS_SELECT_ERROR, CS_SELECT_ERROR_OPTIONS,
                                "%d ranks on %d node%s is %d per node, but node %d of %s has "
                                "%u rank%s",
                                nranks, shape->nnodes, cs_select_plural(shape->nnodes), per_node,
                                k + 1, cs_topo_name(topo), on->len, cs_select_plural((int)on->len));
                    return NULL;
                }
                for (int i = 0; i < per_node; i++)
                    ranks[n++] = g_array_index(on, int, i);
            }
        }
    }
    if (resolved != NULL) {
        resolved->nranks = nranks;
        resolved->nnodes = count_nodes(topo, nranks, ranks);
    }
    gboolean whole = nranks == all;
    for (int r = 0; whole && r < nranks; r++)
        whole = ranks[r] == r;
    if (whole)
        return cs_topo_ref((CsTopo *)topo);
    return cs_topo_subset(topo, ranks, nranks);
}

/**
 * cs_select_run:
 * The selection for every collective of @options->ops. Returns: (transfer full) (nullable).
 */
CsSelection *
cs_select_run(const CsTopo *topo, const CsSelectOptions *options, GError **error)
{
    return run(topo, options, NULL, error);
}

/**
 * cs_select_compare:
 * cs_select_run() plus, per size, NCCL's pick under @nccl_spec ("nccl", "nccl:2.19"), what
 * collsim's engine predicts for it, and its loss against collsim's pick among the algorithms
 * NCCL implements. Returns: (transfer full) (nullable).
 */
CsSelection *
cs_select_compare(const CsTopo *topo, const CsSelectOptions *options, const char *nccl_spec,
                  GError **error)
{
    g_return_val_if_fail(nccl_spec != NULL, NULL);
    if (options->nccl_spec != NULL) {
        g_set_error(error, CS_SELECT_ERROR, CS_SELECT_ERROR_OPTIONS,
                    "--compare compares NCCL's model with collsim's engine: the selection "
                    "itself must use the engine, not %s",
                    options->nccl_spec);
        return NULL;
    }
    return run(topo, options, nccl_spec, error);
}

guint
cs_selection_n_tables(const CsSelection *selection)
{
    g_return_val_if_fail(selection != NULL, 0);
    return selection->ops->len;
}

const CsSelectTable *
cs_selection_table(const CsSelection *selection, guint index)
{
    g_return_val_if_fail(selection != NULL && index < selection->ops->len, NULL);
    return &((const OpResult *)g_ptr_array_index(selection->ops, index))->full;
}

static const OpResult *
op_result(const CsSelection *selection, CsOp op)
{
    for (guint i = 0; i < selection->ops->len; i++) {
        const OpResult *r = g_ptr_array_index(selection->ops, i);
        if (r->full.op == op)
            return r;
    }
    return NULL;
}

const CsSelectTable *
cs_selection_nccl_table(const CsSelection *selection, CsOp op)
{
    g_return_val_if_fail(selection != NULL, NULL);
    const OpResult *r = op_result(selection, op);
    return r != NULL ? r->nccl : NULL;
}

const GArray *
cs_selection_compare_rows(const CsSelection *selection, CsOp op)
{
    g_return_val_if_fail(selection != NULL, NULL);
    const OpResult *r = op_result(selection, op);
    return r != NULL ? r->compare : NULL;
}

double
cs_selection_margin_pct(const CsSelection *selection, CsRegime regime, gboolean *validated)
{
    g_return_val_if_fail(selection != NULL && regime < CS_N_REGIMES, 0.0);
    if (validated != NULL)
        *validated = selection->validated[regime];
    return selection->margin_pct[regime];
}

const char *
cs_selection_machine_class(const CsSelection *selection)
{
    g_return_val_if_fail(selection != NULL, NULL);
    return selection->machine_class;
}

const char *
cs_selection_nccl_version(const CsSelection *selection)
{
    g_return_val_if_fail(selection != NULL, NULL);
    return cs_nccl_model_constants(selection->nccl)->version;
}

/* NCCL's pick at @size as a choice (nccl_algo -1: nothing usable). */
static CsSelectChoice
nccl_choice_at(const CsSelection *sel, CsOp op, gint64 size)
{
    CsSelectChoice c = { NULL, -1, CS_PROTO_SIMPLE, 0 };
    CsNcclPrediction np;
    if (cs_nccl_model_pick(sel->nccl, op, size, &np)) {
        c.nccl_algo = (int)np.algo;
        c.proto = np.proto;
        c.n_channels = np.n_channels;
    }
    return c;
}

static gboolean
same_nccl_choice(const CsSelectChoice *a, const CsSelectChoice *b)
{
    return a->nccl_algo == b->nccl_algo && (a->nccl_algo < 0 || a->proto == b->proto);
}

/* Appends the ranges of NCCL's picks in (@a, @b] (@ca at @a, @cb at @b): the first size where
 * the pick leaves @ca, by bisection in steps of @g, then on from there. */
static void
nccl_segment(const CsSelection *sel, CsOp op, gint64 g, gint64 a, CsSelectChoice ca, gint64 b,
             CsSelectChoice cb, GArray *ranges, int depth)
{
    if (same_nccl_choice(&ca, &cb))
        return;
    gint64 lo = a / g;
    gint64 hi = b / g;
    while (hi - lo > 1) {
        const gint64 mid = lo + (hi - lo) / 2;
        const CsSelectChoice m = nccl_choice_at(sel, op, mid * g);
        if (same_nccl_choice(&m, &ca))
            lo = mid;
        else
            hi = mid;
    }
    const gint64 at = hi * g;
    const CsSelectChoice after = at == b ? cb : nccl_choice_at(sel, op, at);
    g_array_index(ranges, CsSelectRange, ranges->len - 1).max_bytes = at - 1;
    const CsSelectRange r = { at, -1, after, 0.0, 0.0, FALSE, FALSE };
    g_array_append_val(ranges, r);
    /* Each step starts past the last change: at most (b - a) / g of them. */
    if (at < b && depth < 64)
        nccl_segment(sel, op, g, at, after, b, cb, ranges, depth + 1);
}

/**
 * cs_selection_nccl_picks:
 * NCCL's own pick for @op over the grid, as ranges with exact boundaries. The last range's
 * max_bytes is the last grid size. Returns: (transfer full) (nullable).
 */
GArray *
cs_selection_nccl_picks(const CsSelection *selection, CsOp op)
{
    g_return_val_if_fail(selection != NULL, NULL);
    const OpResult *r = op_result(selection, op);
    if (r == NULL || cs_nccl_func_from_op(op) < 0 || r->grid->len == 0)
        return NULL;
    const gint64 g = granularity(op, selection->dtype, selection->nranks);
    GArray *ranges = g_array_new(FALSE, FALSE, sizeof(CsSelectRange));
    gint64 prev = g_array_index(r->grid, gint64, 0);
    CsSelectChoice cprev = nccl_choice_at(selection, op, prev);
    const CsSelectRange first = { prev, -1, cprev, 0.0, 0.0, FALSE, FALSE };
    g_array_append_val(ranges, first);
    for (guint i = 1; i < r->grid->len; i++) {
        const gint64 size = g_array_index(r->grid, gint64, i);
        const CsSelectChoice c = nccl_choice_at(selection, op, size);
        nccl_segment(selection, op, g, prev, cprev, size, c, ranges, 0);
        prev = size;
        cprev = c;
    }
    g_array_index(ranges, CsSelectRange, ranges->len - 1).max_bytes = prev;
    return ranges;
}

/* ---- Measured boundaries ---- */

static gboolean
same_pair(const CsSelectChoice *a, const CsSelectChoice *b)
{
    return a->algo == b->algo && a->nccl_algo == b->nccl_algo && a->proto == b->proto;
}

/* The index of the range of @t that @m opens, or 0 (range 0 opens at 0, never a boundary). */
static guint
boundary_index(const CsSelectTable *t, const CsSelectBoundary *m)
{
    for (guint j = 1; t->ranges != NULL && j < t->ranges->len; j++) {
        const CsSelectRange *below = &g_array_index(t->ranges, CsSelectRange, j - 1);
        const CsSelectRange *above = &g_array_index(t->ranges, CsSelectRange, j);
        if (above->min_bytes == m->predicted_bytes && same_pair(&below->choice, &m->from)
            && same_pair(&above->choice, &m->to))
            return j;
    }
    return 0;
}

/* Moves the boundaries of @moves that @t has, in size order, each only when it stays strictly
 * between the boundary below it (as moved) and the one above it (as it will be: the smaller
 * of its predicted and its requested size), so the ranges stay contiguous and in order. */
static void
move_in_table(CsSelectTable *t, const CsSelectBoundary *moves, guint n, CsSelectMoved *results,
              gboolean nccl)
{
    const guint nr = t->ranges != NULL ? t->ranges->len : 0;
    if (nr < 2)
        return;
    g_autofree gint64 *want = g_new0(gint64, nr); /* requested first size per range, 0: none */
    g_autofree guint *which = g_new0(guint, nr);  /* the move asking for it */
    for (guint k = 0; k < n; k++) {
        if (moves[k].op != t->op)
            continue;
        const guint j = boundary_index(t, &moves[k]);
        if (j == 0)
            continue;
        results[k].found = TRUE;
        results[k].in_nccl |= nccl;
        if (moves[k].bytes > 0) {
            want[j] = moves[k].bytes;
            which[j] = k;
        }
    }
    for (guint j = 1; j < nr; j++) {
        if (want[j] == 0)
            continue;
        CsSelectRange *below = &g_array_index(t->ranges, CsSelectRange, j - 1);
        CsSelectRange *above = &g_array_index(t->ranges, CsSelectRange, j);
        gint64 upper = G_MAXINT64;
        if (j + 1 < nr) {
            upper = g_array_index(t->ranges, CsSelectRange, j + 1).min_bytes;
            if (want[j + 1] > 0)
                upper = MIN(upper, want[j + 1]);
        }
        if (want[j] <= below->min_bytes || want[j] >= upper) {
            results[which[j]].kept = TRUE;
            continue;
        }
        below->max_bytes = want[j] - 1;
        above->min_bytes = want[j];
        above->min_measured = TRUE;
    }
}

/**
 * cs_selection_move_boundaries:
 * See select.h. Tables are matched by collective; the NCCL table is moved too when it is a
 * table of its own (not the full one under nccl_only or NCCL's model).
 */
void
cs_selection_move_boundaries(CsSelection *selection, const CsSelectBoundary *moves, guint n,
                             CsSelectMoved *results)
{
    g_return_if_fail(selection != NULL && (n == 0 || (moves != NULL && results != NULL)));
    for (guint k = 0; k < n; k++)
        results[k] = (CsSelectMoved){ FALSE, FALSE, FALSE };
    if (n == 0)
        return;
    for (guint i = 0; i < selection->ops->len; i++) {
        OpResult *r = g_ptr_array_index(selection->ops, i);
        move_in_table(&r->full, moves, n, results, r->nccl == &r->full);
        if (r->nccl == &r->nccl_own)
            move_in_table(&r->nccl_own, moves, n, results, TRUE);
    }
}

/**
 * cs_selection_add_note:
 * See select.h. The line is copied.
 */
void
cs_selection_add_note(CsSelection *selection, const char *line)
{
    g_return_if_fail(selection != NULL && line != NULL);
    if (selection->notes == NULL)
        selection->notes = g_ptr_array_new_with_free_func(g_free);
    char *copy = g_strdup(line);
    for (char *c = copy; *c != '\0'; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = '?';
    g_ptr_array_add(selection->notes, copy);
}
