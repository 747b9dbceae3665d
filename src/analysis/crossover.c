// SPDX-License-Identifier: MIT
/* Measured crossovers (crossover.h): bracket, bisection and confidence intervals on the
 * difference of two choices' measured times. The statistics are the textbook ones: a paired
 * Student t interval on the differences of alternately taken samples (the pairing cancels the
 * slow drift of a shared machine; Jain, "The Art of Computer Systems Performance Analysis",
 * 1991, ch. 13.4), and bisection on a bracketed sign change. */
#include "config.h"

#include "analysis/crossover.h"

#include <gsl/gsl_cdf.h>
#include <math.h>

void
cs_xover_options_init(CsXoverOptions *options)
{
    *options = (CsXoverOptions){
        .factor = 4.0,
        .steps = 3,
        .min_repeats = 3,
        .max_repeats = 10,
        .tolerance = 0.03,
        .width = 0.25,
        .max_points = 14,
        .min_bytes = 0,
        .max_bytes = (gint64)1 << 30,
        .granularity = 1,
    };
}

const char *
cs_xover_verdict_name(CsXoverVerdict verdict)
{
    switch (verdict) {
    case CS_XOVER_FROM:
        return "from";
    case CS_XOVER_TO:
        return "to";
    case CS_XOVER_EQUAL:
        return "equal";
    case CS_XOVER_NOISE:
        return "noise";
    }
    return "?";
}

const char *
cs_xover_status_name(CsXoverStatus status)
{
    switch (status) {
    case CS_XOVER_MEASURED:
        return "measured";
    case CS_XOVER_TIE:
        return "tie";
    case CS_XOVER_FROM_THROUGHOUT:
        return "from-throughout";
    case CS_XOVER_TO_THROUGHOUT:
        return "to-throughout";
    case CS_XOVER_UNMEASURABLE:
        return "unmeasurable";
    }
    return "?";
}

void
cs_xover_result_free(CsXoverResult *result)
{
    if (result == NULL)
        return;
    g_free(result->why);
    if (result->points != NULL)
        g_array_unref(result->points);
    g_free(result);
}

/* ---- Statistics ---- */

typedef struct {
    double mean;
    double ci; /* 95% half-width of the mean; INFINITY with fewer than 2 samples */
} Stat;

static Stat
stat_of(const double *x, int n)
{
    Stat s = { .mean = 0.0, .ci = INFINITY };
    for (int i = 0; i < n; i++)
        s.mean += x[i];
    s.mean /= MAX(n, 1);
    if (n < 2)
        return s;
    double ss = 0.0;
    for (int i = 0; i < n; i++)
        ss += (x[i] - s.mean) * (x[i] - s.mean);
    double sd = sqrt(ss / (n - 1));
    s.ci = gsl_cdf_tdist_Pinv(0.975, n - 1) * sd / sqrt(n);
    return s;
}

/* ---- The search ---- */

typedef struct {
    const CsXoverOptions *o;
    const CsXoverSource *src;
    CsXoverResult *r;
    GArray *rel_ci; /* double: relative half-widths, for the noise figure */
} Search;

static gint64
round_size(const Search *s, double size)
{
    gint64 g = MAX(s->o->granularity, 1);
    gint64 lo = MAX(s->o->min_bytes, g);
    double q = round(size / (double)g);
    gint64 v = q >= 0x1p62 ? G_MAXINT64 / 2 : (gint64)q * g;
    return CLAMP(v, lo, MAX(s->o->max_bytes, lo));
}

static const CsXoverPoint *
point_at(const Search *s, gint64 size)
{
    for (guint i = 0; i < s->r->points->len; i++) {
        const CsXoverPoint *p = &g_array_index(s->r->points, CsXoverPoint, i);
        if (p->size_bytes == size)
            return p;
    }
    return NULL;
}

static gint
compare_points(gconstpointer a, gconstpointer b)
{
    gint64 x = ((const CsXoverPoint *)a)->size_bytes;
    gint64 y = ((const CsXoverPoint *)b)->size_bytes;
    return x < y ? -1 : x > y;
}

/* Measures both choices at @size, alternating which goes first, until the interval on the
 * difference excludes zero, or lies within the tolerance, or the repeats run out. */
static gboolean
measure_point(Search *s, gint64 size, CsXoverVerdict *verdict, GError **error)
{
    const CsXoverPoint *known = point_at(s, size);
    if (known != NULL) {
        *verdict = known->verdict;
        return TRUE;
    }
    const CsSelectChoice *from = &s->r->predicted.from;
    const CsSelectChoice *to = &s->r->predicted.to;
    int max = MAX(s->o->max_repeats, 1);
    int min = CLAMP(s->o->min_repeats, 1, max);
    g_autofree double *a = g_new(double, max);
    g_autofree double *b = g_new(double, max);
    g_autofree double *d = g_new(double, max);
    CsXoverPoint p = { .size_bytes = size, .verdict = CS_XOVER_NOISE };

    for (int k = 0; k < max; k++) {
        gboolean first = k == 0;
        /* Odd repeats measure the upper choice first, so neither always runs on a warmer
         * cache or after the other's traffic. */
        const CsSelectChoice *order[2] = { k % 2 ? to : from, k % 2 ? from : to };
        double *into[2] = { k % 2 ? &b[k] : &a[k], k % 2 ? &a[k] : &b[k] };
        for (int j = 0; j < 2; j++)
            if (!s->src->measure(order[j], size, first, into[j], s->src->user_data, error))
                return FALSE;
        d[k] = a[k] - b[k];
        s->r->n_samples += 2;
        p.repeats = k + 1;
        if (p.repeats < min)
            continue;
        Stat sd = stat_of(d, p.repeats);
        Stat sa = stat_of(a, p.repeats);
        Stat sb = stat_of(b, p.repeats);
        double faster = MIN(sa.mean, sb.mean);
        if (fabs(sd.mean) > sd.ci) {
            p.verdict = sd.mean < 0 ? CS_XOVER_FROM : CS_XOVER_TO;
            break;
        }
        if (fabs(sd.mean) + sd.ci <= s->o->tolerance * faster) {
            p.verdict = CS_XOVER_EQUAL;
            break;
        }
    }
    Stat sa = stat_of(a, p.repeats);
    Stat sb = stat_of(b, p.repeats);
    Stat sd = stat_of(d, p.repeats);
    p.from_us = sa.mean;
    p.from_ci_us = sa.ci;
    p.to_us = sb.mean;
    p.to_ci_us = sb.ci;
    p.diff_us = sd.mean;
    p.diff_ci_us = sd.ci;
    const Stat both[2] = { sa, sb };
    for (int j = 0; j < 2; j++)
        if (both[j].mean > 0 && isfinite(both[j].ci)) {
            double rel = both[j].ci / both[j].mean;
            g_array_append_val(s->rel_ci, rel);
        }
    g_array_append_val(s->r->points, p);
    g_array_sort(s->r->points, compare_points);
    *verdict = p.verdict;
    if (s->src->measured != NULL)
        s->src->measured(&p, (int)s->r->points->len, s->src->user_data);
    return TRUE;
}

/* The measured bracket: @hi the smallest size the upper choice won, @lo the largest below it
 * that the lower choice won (-1 when there is none). */
static void
bracket(const Search *s, gint64 *lo, gint64 *hi)
{
    *lo = -1;
    *hi = -1;
    const GArray *pts = s->r->points;
    for (guint i = 0; i < pts->len && *hi < 0; i++)
        if (g_array_index(pts, CsXoverPoint, i).verdict == CS_XOVER_TO)
            *hi = g_array_index(pts, CsXoverPoint, i).size_bytes;
    for (guint i = 0; i < pts->len; i++) {
        const CsXoverPoint *p = &g_array_index(pts, CsXoverPoint, i);
        if (p->verdict == CS_XOVER_FROM && (*hi < 0 || p->size_bytes < *hi))
            *lo = p->size_bytes;
    }
}

/* Walks from the prediction by factor^i in @direction (+1 up, -1 down) until a point says
 * @want, the window ends, or the budget does. */
static gboolean
walk(Search *s, gint64 start, int direction, CsXoverVerdict want, GError **error)
{
    gint64 last = start;
    for (int i = 1; i <= s->o->steps; i++) {
        if ((int)s->r->points->len >= s->o->max_points)
            return TRUE;
        gint64 size = round_size(s, (double)start * pow(s->o->factor, direction * i));
        if (size == last)
            return TRUE; /* the window's edge */
        last = size;
        CsXoverVerdict v;
        if (!measure_point(s, size, &v, error))
            return FALSE;
        if (v == want)
            return TRUE;
    }
    return TRUE;
}

/* Bisection: while the interval [lo, hi] is wider than the width, splits the widest gap
 * between measured sizes inside it at its geometric middle (a gap next to an equal or noisy
 * point in the middle is split too, so the decided ends close in on it), until the sizes
 * cannot be split or the budget ends. */
static gboolean
bisect(Search *s, GError **error)
{
    for (;;) {
        gint64 lo;
        gint64 hi;
        bracket(s, &lo, &hi);
        g_assert(lo > 0 && hi > lo);
        if ((double)hi / (double)lo <= 1.0 + s->o->width)
            return TRUE;
        double best_ratio = 1.0;
        gint64 mid = -1;
        const GArray *pts = s->r->points;
        for (guint i = 0; i + 1 < pts->len; i++) {
            gint64 x = g_array_index(pts, CsXoverPoint, i).size_bytes;
            gint64 y = g_array_index(pts, CsXoverPoint, i + 1).size_bytes;
            if (x < lo || y > hi)
                continue;
            double ratio = (double)y / (double)x;
            gint64 m = round_size(s, sqrt((double)x * (double)y));
            if (ratio > best_ratio && m > x && m < y) {
                best_ratio = ratio;
                mid = m;
            }
        }
        if (mid < 0)
            return TRUE; /* down to the granularity */
        if ((int)pts->len >= s->o->max_points) {
            s->r->budget_spent = TRUE;
            return TRUE;
        }
        CsXoverVerdict v;
        if (!measure_point(s, mid, &v, error))
            return FALSE;
    }
}

/* Where the measured difference changes sign inside [lo, hi], interpolated in log size
 * between the two points around the change; the first size the upper choice wins. */
static gint64
zero_crossing(const Search *s, gint64 lo, gint64 hi)
{
    const GArray *pts = s->r->points;
    for (guint i = 0; i + 1 < pts->len; i++) {
        const CsXoverPoint *p = &g_array_index(pts, CsXoverPoint, i);
        const CsXoverPoint *q = &g_array_index(pts, CsXoverPoint, i + 1);
        if (p->size_bytes < lo || q->size_bytes > hi)
            continue;
        if (p->diff_us < 0 && q->diff_us >= 0) {
            double t = -p->diff_us / (q->diff_us - p->diff_us);
            double x = exp(log((double)p->size_bytes)
                           + t * (log((double)q->size_bytes) - log((double)p->size_bytes)));
            gint64 g = MAX(s->o->granularity, 1);
            gint64 v = (gint64)ceil(x / (double)g) * g;
            return CLAMP(v, lo + g, hi);
        }
    }
    return hi;
}

/* Time lost where the prediction and a decided measurement disagree: below the predicted
 * size the prediction runs the lower choice, from it on the upper one. */
static void
losses(CsXoverResult *r)
{
    for (guint i = 0; i < r->points->len; i++) {
        const CsXoverPoint *p = &g_array_index(r->points, CsXoverPoint, i);
        gboolean predicts_to = p->size_bytes >= r->predicted.size_bytes;
        double lost = 0.0;
        if (p->verdict == CS_XOVER_FROM && predicts_to)
            lost = p->to_us - p->from_us;
        else if (p->verdict == CS_XOVER_TO && !predicts_to)
            lost = p->from_us - p->to_us;
        lost = MAX(lost, 0.0);
        double pct = lost > 0 ? 100.0 * lost / MIN(p->from_us, p->to_us) : 0.0;
        if (p->size_bytes == r->predicted.size_bytes) {
            r->loss_predicted_us = lost;
            r->loss_predicted_pct = pct;
        }
        if (lost > r->loss_max_us) {
            r->loss_max_us = lost;
            r->loss_max_pct = pct;
            r->loss_max_bytes = p->size_bytes;
        }
    }
}

static gint
compare_double(gconstpointer a, gconstpointer b)
{
    double x = *(const double *)a;
    double y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void
classify(Search *s)
{
    CsXoverResult *r = s->r;
    gint64 lo;
    gint64 hi;
    gboolean any_from = FALSE;
    gboolean any_to = FALSE;

    for (guint i = 0; i < r->points->len; i++) {
        CsXoverVerdict v = g_array_index(r->points, CsXoverPoint, i).verdict;
        any_from |= v == CS_XOVER_FROM;
        any_to |= v == CS_XOVER_TO;
    }
    bracket(s, &lo, &hi);
    r->lo_bytes = g_array_index(r->points, CsXoverPoint, 0).size_bytes;
    r->hi_bytes = g_array_index(r->points, CsXoverPoint, r->points->len - 1).size_bytes;
    r->ratio = NAN;
    if (lo > 0 && hi > lo) {
        r->status = CS_XOVER_MEASURED;
        r->lo_bytes = lo;
        r->hi_bytes = hi;
        r->measured_bytes = zero_crossing(s, lo, hi);
        r->ratio = (double)r->measured_bytes / (double)r->predicted.size_bytes;
    }
    else if (!any_from && !any_to)
        r->status = CS_XOVER_TIE;
    else if (any_to && !any_from)
        r->status = CS_XOVER_TO_THROUGHOUT;
    else if (any_from && !any_to)
        r->status = CS_XOVER_FROM_THROUGHOUT;
    else /* the upper choice won only below every size the lower one won: no crossover of
          * this direction, the lower choice loses throughout below and wins above */
        r->status = CS_XOVER_TO_THROUGHOUT;
    losses(r);
    if (s->rel_ci->len > 0) {
        g_array_sort(s->rel_ci, compare_double);
        r->noise_pct = 100.0 * g_array_index(s->rel_ci, double, s->rel_ci->len / 2);
    }
}

/**
 * cs_xover_measure:
 * The whole search for one crossover: the predicted size first; then, by factor^i, down until
 * the lower choice wins and up until the upper one does (each way only as far as needed and
 * at most @options->steps sizes); then bisection between the largest size the lower choice
 * won and the smallest the upper one won. A point is both choices sampled alternately, at
 * least min_repeats times each, until the 95% interval of their paired difference excludes
 * zero (decided) or lies within +- tolerance of the faster time (equal), or max_repeats.
 * Returns: FALSE with the source's error; @result (transfer full) otherwise.
 */
gboolean
cs_xover_measure(CsOp op, const CsSelectCrossover *predicted, const CsXoverOptions *options,
                 const CsXoverSource *source, CsXoverResult **result, GError **error)
{
    g_return_val_if_fail(predicted != NULL && options != NULL && source != NULL, FALSE);
    g_autoptr(CsXoverResult) r = g_new0(CsXoverResult, 1);
    g_autoptr(GArray) rel_ci = g_array_new(FALSE, FALSE, sizeof(double));
    r->op = op;
    r->predicted = *predicted;
    r->points = g_array_new(FALSE, FALSE, sizeof(CsXoverPoint));
    r->ratio = NAN;
    Search s = { .o = options, .src = source, .r = r, .rel_ci = rel_ci };

    const CsSelectChoice *sides[2] = { &predicted->from, &predicted->to };
    for (int j = 0; j < 2; j++) {
        char *why = NULL;
        if (source->can_measure != NULL
            && !source->can_measure(sides[j], &why, source->user_data)) {
            g_autofree char *label = cs_select_choice_label(sides[j]);
            r->status = CS_XOVER_UNMEASURABLE;
            r->why = g_strdup_printf("%s: %s", label, why != NULL ? why : "cannot be run");
            g_free(why);
            *result = g_steal_pointer(&r);
            return TRUE;
        }
    }

    if (predicted->size_bytes > options->max_bytes) {
        r->status = CS_XOVER_UNMEASURABLE;
        r->why = g_strdup_printf("predicted at %" G_GINT64_FORMAT
                                 " B, past the largest size measured (%" G_GINT64_FORMAT " B)",
                                 predicted->size_bytes, options->max_bytes);
        *result = g_steal_pointer(&r);
        return TRUE;
    }
    gint64 start = round_size(&s, (double)predicted->size_bytes);
    CsXoverVerdict v;
    if (!measure_point(&s, start, &v, error))
        return FALSE;
    if (v != CS_XOVER_FROM && !walk(&s, start, -1, CS_XOVER_FROM, error))
        return FALSE;
    if (v != CS_XOVER_TO && !walk(&s, start, +1, CS_XOVER_TO, error))
        return FALSE;
    gint64 lo;
    gint64 hi;
    bracket(&s, &lo, &hi);
    if (lo > 0 && hi > lo && !bisect(&s, error))
        return FALSE;
    classify(&s);
    *result = g_steal_pointer(&r);
    return TRUE;
}

/* ---- Re-prediction ---- */

static gboolean
same_pair(const CsSelectChoice *a, const CsSelectChoice *b)
{
    return a->algo == b->algo && a->nccl_algo == b->nccl_algo && a->proto == b->proto;
}

/**
 * cs_xover_find_pair:
 * Returns: (transfer none) (nullable): the crossover of @table from @like's lower to its upper
 * choice (channels aside) nearest @like's size on a log scale.
 */
const CsSelectCrossover *
cs_xover_find_pair(const CsSelectTable *table, const CsSelectCrossover *like)
{
    const CsSelectCrossover *best = NULL;
    double best_d = INFINITY;
    for (guint i = 0; table->crossovers != NULL && i < table->crossovers->len; i++) {
        const CsSelectCrossover *c = &g_array_index(table->crossovers, CsSelectCrossover, i);
        if (!same_pair(&c->from, &like->from) || !same_pair(&c->to, &like->to))
            continue;
        double d = fabs(log((double)c->size_bytes / (double)like->size_bytes));
        if (d < best_d) {
            best_d = d;
            best = c;
        }
    }
    return best;
}

gboolean
cs_xover_moved_toward(gint64 before, gint64 now, gint64 measured)
{
    double b = fabs(log((double)before / (double)measured));
    double n = fabs(log((double)now / (double)measured));
    return n < b;
}
