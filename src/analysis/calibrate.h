// SPDX-License-Identifier: MIT
/* Calibration: fits a topology's free parameters (per link kind alpha and achievable bandwidth,
 * per protocol hop latency, GPU launch, step overhead, reduction and copy rates) to measured traces
 * with GSL's nonlinear least squares on the relative time error. */
#pragma once

#include <cjson/cJSON.h>
#include <glib.h>

#include "predict/predict.h"
#include "topo/topo.h"
#include "base/trace.h"

G_BEGIN_DECLS

#define CS_CALIBRATE_ERROR (cs_calibrate_error_quark())
GQuark cs_calibrate_error_quark(void);

typedef enum {
    CS_CALIBRATE_ERROR_NO_DATA, /* no usable row, or nothing to fit */
    CS_CALIBRATE_ERROR_FIT,     /* GSL did not converge */
    CS_CALIBRATE_ERROR_PARAMS,  /* a name given to fit matches no parameter */
} CsCalibrateError;

typedef enum {
    CS_PARAM_LINK_ALPHA,    /* s: alpha of every link of one kind */
    CS_PARAM_LINK_BW,       /* bytes/s: usable per-lane bandwidth of one kind */
    CS_PARAM_HOP_LATENCY,   /* s: one protocol's per-hop latency on one link class */
    CS_PARAM_LAUNCH,        /* s: GPU launch */
    CS_PARAM_STEP_OVERHEAD, /* s: per step */
    CS_PARAM_REDUCE_BW,     /* bytes/s: GPU reduction rate */
    CS_PARAM_COPY_BW,       /* bytes/s: GPU local copy rate */
    CS_N_PARAM_KINDS
} CsParamKind;

/**
 * CsCalibParam:
 * One free parameter, fitted in log space so it stays positive, inside its physical range
 * [@min, @max] (declared per kind in calibrate.c with its source, @range_source).
 */
typedef struct {
    CsParamKind kind;
    int index;      /* CsLinkKind, or proto * CS_N_LINK_CLASSES + class */
    char name[48];  /* "nvswitch.bandwidth", "Simple.hop.nvlink", "gpu.launch" */
    double initial; /* the topology's value (s or bytes/s) */
    double fitted;  /* after the fit */
    double sigma;   /* 1-sigma uncertainty of @fitted, same unit; NaN if not
                     * identifiable from the data, seen by one row only, or held at a bound */
    gboolean free;  /* FALSE: kept at @initial, because no row depends on it or ... */
    gboolean held;  /* ... the rows are no more than the parameters they see, and
                     * others are better determined */
    double min;     /* the smallest value physics allows (or the fit's domain, initial / e^4,
                     * where nothing physical bounds it), never above @initial */
    double max;     /* the largest (a link's datasheet line rate: no link carries more than
                     * it signals), never below @initial */
    char range_source[224]; /* where [@min, @max] comes from, one line */
    int bound;              /* +1: the rows push it past @max and the fit holds it there; -1: past
                             * @min; 0: inside its range, or at a bound the rows do not push on */
    gboolean at_bound;      /* @bound != 0 */
    gboolean excluded;      /* not among the parameters asked for (--params): kept at @initial */
    double rows_seen;       /* rows' worth of the data it draws on (participation ratio of its
                             * sensitivities); below CS_CALIB_MIN_ROWS_SEEN it has no @sigma */
    char component[96];     /* what it belongs to: "gpu H100 SXM5 80GB", "nvswitch link at
                             * 25 GB/s per lane", "transport ib"; machines of a joint fit share
                             * a parameter of the same name, component and datasheet value */
    int shared;             /* machines of the fit whose rows determine this one value (1: its
                             * own machine only; 0: not fitted) */
} CsCalibParam;

/* A parameter fitted to fewer rows' worth of data than this (rows_seen) is what those rows
 * say, with no spread of rows to give it an uncertainty. */
#define CS_CALIB_MIN_ROWS_SEEN 2.0

/**
 * CsCalibLoss:
 * How a row's relative time error r weighs in the fit.
 * @CS_CALIB_LOSS_CAUCHY: s^2 log(1 + (r / s)^2), s = CS_CALIB_CAUCHY_SCALE: least squares
 *   for rows within a few percent, the logarithm of the error beyond (the default).
 * @CS_CALIB_LOSS_LINEAR: r^2, plain least squares.
 */
typedef enum {
    CS_CALIB_LOSS_CAUCHY,
    CS_CALIB_LOSS_LINEAR,
} CsCalibLoss;

/* The relative error at which a row under the Cauchy loss weighs half what it would under
 * least squares (the loss's reweighting factor 1 / (1 + (r / s)^2)). */
#define CS_CALIB_CAUCHY_SCALE 0.10

gboolean cs_calib_loss_from_name(const char *name, CsCalibLoss *loss, GError **error);
const char *cs_calib_loss_name(CsCalibLoss loss);
/* The loss in words for reports: "Cauchy loss at 10%", "least squares". (transfer full) */
char *cs_calib_loss_describe(CsCalibLoss loss);

/* The prior's default weight: the residual of moving one parameter by a factor e, so such a
 * move costs as much as a 2% time error on one row. A cross-validation over the shipped traces
 * (docs/accuracy.md, "The fit's prior") found no better weight. */
#define CS_CALIB_PRIOR_WEIGHT 0.02

/**
 * CsCalibration:
 * The outcome of one fit.
 */
typedef struct {
    GArray *params; /* CsCalibParam */
    CsTopo *topo;   /* the topology with the fitted values (owned) */
    int n_rows;     /* residuals fitted */
    int iterations;
    CsCalibLoss loss;
    double prior_weight; /* the residual of an e-fold move of one parameter */
    double rms_before;   /* rms relative time error before the fit */
    double rms_after;    /* and after */
} CsCalibration;

/* Fits @topo to @traces (all rows with a positive size and time) under @loss, with a Gaussian
 * prior in log space toward @topo's values: each free parameter adds the residual
 * @prior_weight * ln(fitted / initial) (CS_CALIB_PRIOR_WEIGHT; 0: none). @only, when
 * non-NULL, is a NULL-terminated list of parameter names (or prefixes such as "gpu." or
 * "Simple.") to fit; the others stay at their topology values.
 * Returns: (transfer full) (nullable). */
CsCalibration *cs_calibrate_fit(const CsTopo *topo, CsTrace *const *traces, int n_traces,
                                const CsPredictOptions *options, CsCalibLoss loss,
                                double prior_weight, const char *const *only, GError **error);
void cs_calibration_free(CsCalibration *calibration);

/* One fit across @n_machines machines: machine m is @topos[m] with its @n_traces[m] traces
 * (@traces holds them machine after machine). A parameter of the same name, component and
 * datasheet value on several machines is one value of the fit (its range the intersection of
 * theirs); the others are each machine's own. Otherwise as cs_calibrate_fit() (which is this
 * with one machine). Returns: (transfer full) (nullable) one CsCalibration per machine, in
 * order, each with its own rows' errors and its fitted topology. */
GPtrArray *cs_calibrate_fit_joint(const CsTopo *const *topos, int n_machines,
                                  CsTrace *const *traces, const int *n_traces,
                                  const CsPredictOptions *options, CsCalibLoss loss,
                                  double prior_weight, const char *const *only, GError **error);

/* The most iterations of the optimizer (GSL's trust-region driver) in one fit. */
#define CS_CALIB_MAX_ITERATIONS 100

/**
 * CsCalibStep:
 * Where a fit stands after one evaluation of its objective (every row predicted at one
 * parameter vector), for progress lines. Evaluations have no known total: each iteration
 * takes one per free parameter for its finite-difference Jacobian and one or more for its
 * step, and the iterations end when the fit converges.
 */
typedef struct {
    const char *phase;  /* "datasheet" (the topology's own values), "sensitivities" (which
                         * parameters the rows see), "fit" (the optimizer) or "uncertainties"
                         * (the Jacobian of the covariance) (static) */
    int evaluation;     /* evaluations of this fit so far */
    int iteration;      /* the optimizer's iterations ended */
    int max_iterations; /* CS_CALIB_MAX_ITERATIONS */
    double rms;         /* the rows' rms relative time error at the fit's best point so far
                         * (the datasheet values' before the first iteration ends) */
} CsCalibStep;

/* Told, on the calling thread, after each evaluation of a fit's objective. */
typedef void (*CsCalibProgressFunc)(const CsCalibStep *step, gpointer data);

/* cs_calibrate_fit_joint() that tells @progress (nullable) of each evaluation. */
GPtrArray *cs_calibrate_fit_joint_full(const CsTopo *const *topos, int n_machines,
                                       CsTrace *const *traces, const int *n_traces,
                                       const CsPredictOptions *options, CsCalibLoss loss,
                                       double prior_weight, const char *const *only,
                                       CsCalibProgressFunc progress, gpointer progress_data,
                                       GError **error);

/* @topo with the values that the fits @fits (CsCalibration) learnt for the components @topo
 * shares with them: each of @topo's candidate parameters for @traces that a fit determined
 * (free) under the same name, component and datasheet value takes that fitted value (the
 * first such fit's); the rest stay at @topo's values. @n_transferred (nullable) gets how many
 * parameters moved. For leave-one-machine-out. Returns: (transfer full) (nullable) */
CsTopo *cs_calibrate_transfer(const CsTopo *topo, CsTrace *const *traces, int n_traces,
                              const CsPredictOptions *options, const GPtrArray *fits,
                              int *n_transferred, GError **error);

/* Every parameter (datasheet, fitted, sigma, range and its source, free/held/bound, unit) as a
 * JSON array; for
 * the fitted topology's record and `collsim calibrate --format json`. (transfer full) */
cJSON *cs_calibration_params_to_json(const CsCalibration *calibration);

/* One line on what a parameter held at a bound of its range means ("gpu.launch at its upper
 * bound 14 us (...): the traces want more; the model leaves out a cost these rows pay"),
 * NULL when @p is not at one. (transfer full) (nullable) */
char *cs_calib_param_bound_note(const CsCalibParam *p);

/* The fitted topology as JSON, with a `calibrated_from` record of @traces and a `calibration`
 * record of every parameter (datasheet value, fitted value, uncertainty). (transfer full) */
char *cs_calibration_to_json(const CsCalibration *calibration, const CsTopo *datasheet,
                             CsTrace *const *traces, int n_traces);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(CsCalibration, cs_calibration_free)

G_END_DECLS
