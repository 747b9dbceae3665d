// SPDX-License-Identifier: MIT
/* Measured crossovers: takes a crossover `select` predicted (the best choice changes from one
 * algorithm/protocol to another at a size) and finds where it lies on a real machine, through a
 * measurement source the caller supplies (a backend in `collsim crossover`, a test double in
 * the tests): a coarse geometric bracket around the prediction, then bisection on the measured
 * difference, each point repeated until its confidence interval decides or the budget is
 * spent. Knows nothing of backends. */
#pragma once

#include <glib.h>

#include "predict/select.h"

G_BEGIN_DECLS

typedef struct _CsXoverPoint CsXoverPoint;

/**
 * CsXoverSource:
 * Where the times come from. @measure returns one sample of @choice at @size_bytes: the mean
 * time of one timed batch of iterations, in us; @first is TRUE for the first sample of this
 * choice and size. @can_measure says whether the source can run @choice at all, and why not
 * (transfer full, in @why). @measured (nullable) is told of each point (size) once it is
 * decided, with the points this crossover has measured so far, @point among them (for
 * progress lines).
 */
typedef struct {
    gboolean (*can_measure)(const CsSelectChoice *choice, char **why, gpointer user_data);
    gboolean (*measure)(const CsSelectChoice *choice, gint64 size_bytes, gboolean first,
                        double *time_us, gpointer user_data, GError **error);
    gpointer user_data;
    void (*measured)(const CsXoverPoint *point, int n_points, gpointer user_data);
} CsXoverSource;

/**
 * CsXoverOptions:
 * The search and its budget. cs_xover_options_init() gives the defaults in brackets.
 */
typedef struct {
    double factor;      /* bracket: sizes the prediction times or over factor^i [4] */
    int steps;          /* bracket: at most this many sizes each way [3] */
    int min_repeats;    /* samples of each side at a point before deciding [3] */
    int max_repeats;    /* the most samples of each side at a point [10] */
    double tolerance;   /* fraction: a point whose difference interval lies within +- this
                         * of the faster side is settled as equal [0.03] */
    double width;       /* bisection stops when hi / lo <= 1 + width [0.25] */
    int max_points;     /* the most sizes measured per crossover, bracket included [14] */
    gint64 min_bytes;   /* bytes: the smallest size measured [the granularity] */
    gint64 max_bytes;   /* bytes: the largest size measured [1 GiB] */
    gint64 granularity; /* bytes: sizes are multiples of it [1] */
} CsXoverOptions;

void cs_xover_options_init(CsXoverOptions *options);

/**
 * CsXoverVerdict:
 * What one point says. @CS_XOVER_FROM: the crossover's lower choice is faster (its interval on
 * the difference excludes zero); @CS_XOVER_TO: the upper one; @CS_XOVER_EQUAL: the difference
 * lies within +- tolerance; @CS_XOVER_NOISE: undecided when the repeats ran out.
 */
typedef enum {
    CS_XOVER_FROM,
    CS_XOVER_TO,
    CS_XOVER_EQUAL,
    CS_XOVER_NOISE,
} CsXoverVerdict;

const char *cs_xover_verdict_name(CsXoverVerdict verdict);

/**
 * CsXoverPoint:
 * One measured size: both choices sampled alternately @repeats times each.
 */
struct _CsXoverPoint {
    gint64 size_bytes;
    int repeats;
    double from_us;    /* us: mean of the lower choice's samples */
    double from_ci_us; /* us: 95% half-width of that mean (Student t) */
    double to_us;      /* us: the upper choice */
    double to_ci_us;
    double diff_us;    /* us: mean of the paired differences from - to (< 0: from faster) */
    double diff_ci_us; /* us: its 95% half-width */
    CsXoverVerdict verdict;
};

/**
 * CsXoverStatus:
 * @CS_XOVER_MEASURED: the lower choice is faster at @lo_bytes and the upper at @hi_bytes.
 * @CS_XOVER_TIE: no measured point told the two apart: within noise over the whole bracket.
 * @CS_XOVER_FROM_THROUGHOUT: the upper choice never won inside the window.
 * @CS_XOVER_TO_THROUGHOUT: the lower choice never won inside the window.
 * @CS_XOVER_UNMEASURABLE: the source cannot run one of the two, or the prediction lies past
 *   the largest size to measure (@why says which and why).
 */
typedef enum {
    CS_XOVER_MEASURED,
    CS_XOVER_TIE,
    CS_XOVER_FROM_THROUGHOUT,
    CS_XOVER_TO_THROUGHOUT,
    CS_XOVER_UNMEASURABLE,
} CsXoverStatus;

const char *cs_xover_status_name(CsXoverStatus status);

/**
 * CsXoverResult:
 * One crossover, predicted and measured.
 */
typedef struct {
    CsOp op;
    CsSelectCrossover predicted;
    CsXoverStatus status;
    char *why;                /* (nullable) UNMEASURABLE: the reason */
    gint64 measured_bytes;    /* bytes: MEASURED: first size where the upper choice wins,
                               * where the measured difference crosses zero; 0 otherwise */
    gint64 lo_bytes;          /* bytes: MEASURED: largest size where the lower choice won;
                               * otherwise the smallest size measured */
    gint64 hi_bytes;          /* bytes: MEASURED: smallest size where the upper choice won;
                               * otherwise the largest size measured */
    double ratio;             /* measured / predicted size (NAN unless MEASURED) */
    double loss_predicted_us; /* us: time lost at the predicted size by following the
                               * prediction where a measurement decided otherwise (0 if not) */
    double loss_predicted_pct;
    double loss_max_us; /* us: the largest such loss over every measured size */
    double loss_max_pct;
    gint64 loss_max_bytes; /* bytes: where it is */
    double noise_pct;      /* percent: median 95% half-width relative to the mean, over every
                            * sample set measured */
    int n_samples;         /* samples taken (both sides) */
    gboolean budget_spent; /* stopped on max_points before the interval reached width */
    GArray *points;        /* CsXoverPoint, by size */
} CsXoverResult;

/* Measures @predicted (a crossover of @op) through @source. FALSE only when the source fails;
 * a choice the source cannot run gives CS_XOVER_UNMEASURABLE. Returns: (transfer full) in
 * @result. */
gboolean cs_xover_measure(CsOp op, const CsSelectCrossover *predicted,
                          const CsXoverOptions *options, const CsXoverSource *source,
                          CsXoverResult **result, GError **error);
void cs_xover_result_free(CsXoverResult *result);

/* The crossover in @table between the same two choices (algorithm and protocol) as @like, the
 * one nearest to @like's size: NULL if the pair no longer crosses. (transfer none) */
const CsSelectCrossover *cs_xover_find_pair(const CsSelectTable *table,
                                            const CsSelectCrossover *like);

/* Whether @now lies closer to @measured than @before does, on a log scale. */
gboolean cs_xover_moved_toward(gint64 before, gint64 now, gint64 measured);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(CsXoverResult, cs_xover_result_free)

G_END_DECLS
