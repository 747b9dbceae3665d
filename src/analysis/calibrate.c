// SPDX-License-Identifier: MIT
/* Calibration: fits the free parameters of a topology to measured traces with GSL's
 * trust-region Levenberg-Marquardt on the relative time error of every row, under a Cauchy
 * loss by default (below), and reports the fitted values with their uncertainties
 * (the sandwich covariance, each row weighed by its own residual, under the Cauchy loss the
 * damped one, so a row the loss discounts widens no sigma). Parameters live in log space: value =
 * initial * exp(theta), so they stay positive and the fit is scale-free. */
#include "analysis/calibrate.h"

#include <cjson/cJSON.h>
#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_permutation.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <math.h>
#include <string.h>

#include "algos/registry.h"
#include "analysis/validate.h"
#include "base/json_util.h"
#include "base/parallel.h"
#include "base/units.h"

G_DEFINE_QUARK(cs_calibrate_error_quark, cs_calibrate_error)

/* A parameter with no physical bound on one side moves at most e^4 (55x) that way (its range,
 * param_range(), says so): beyond that the data say the model is wrong, not that the hardware
 * is that different, and the engine would crawl. */
#define THETA_LIMIT 4.0

/* ---- Loss ---- */

/* The Cauchy (Lorentzian) loss, written as least squares: row i enters as
 * rho(r) = sign(r) s sqrt(log(1 + (r / s)^2)), so GSL minimises sum s^2 log(1 + (r_i / s)^2).
 * Near zero rho(r) = r: rows within a few percent count as in plain least squares. A row 50%
 * off, which plain least squares weighs as 25 rows 10% off, weighs as 4.7 of them. Such rows
 * are what the model does not represent (RCCL switching paths at a few sizes, a host-bound
 * latency floor under a -g 8 loop), and under r^2 they move parameters that every other row
 * determines. (Hartley and Zisserman, Multiple View Geometry, 2nd ed., A6.8; scipy's
 * least_squares loss="cauchy".) */
static double
loss_residual(CsCalibLoss loss, double r)
{
    if (loss == CS_CALIB_LOSS_LINEAR)
        return r;
    const double s = CS_CALIB_CAUCHY_SCALE;
    return copysign(s * sqrt(log1p((r / s) * (r / s))), r);
}

/* The relative error behind loss_residual()'s value. */
static double
relative_error(CsCalibLoss loss, double rho)
{
    if (loss == CS_CALIB_LOSS_LINEAR)
        return rho;
    const double s = CS_CALIB_CAUCHY_SCALE;
    return copysign(s * sqrt(expm1((rho / s) * (rho / s))), rho);
}

static const char *const loss_names[] = {
    [CS_CALIB_LOSS_CAUCHY] = "cauchy",
    [CS_CALIB_LOSS_LINEAR] = "linear",
};

/* "cauchy" or "linear" (transfer none). */
const char *
cs_calib_loss_name(CsCalibLoss loss)
{
    g_return_val_if_fail(loss >= 0 && loss < (int)G_N_ELEMENTS(loss_names), "?");
    return loss_names[loss];
}

/* "Cauchy loss at 10%" or "least squares", for reports (transfer full). */
char *
cs_calib_loss_describe(CsCalibLoss loss)
{
    if (loss == CS_CALIB_LOSS_LINEAR)
        return g_strdup("least squares");
    return g_strdup_printf("Cauchy loss at %.0f%%", 100 * CS_CALIB_CAUCHY_SCALE);
}

/**
 * cs_calib_loss_from_name:
 * Returns: FALSE with CS_CALIBRATE_ERROR_PARAMS naming the choices if @name is none of them.
 */
gboolean
cs_calib_loss_from_name(const char *name, CsCalibLoss *loss, GError **error)
{
    for (gsize i = 0; i < G_N_ELEMENTS(loss_names); i++)
        if (g_ascii_strcasecmp(name, loss_names[i]) == 0) {
            *loss = (CsCalibLoss)i;
            return TRUE;
        }
    g_set_error(error, CS_CALIBRATE_ERROR, CS_CALIBRATE_ERROR_PARAMS,
                "unknown loss \"%s\" (expected cauchy or linear)", name);
    return FALSE;
}

/* ---- Rows ---- */

/* One measured row with the choice (algorithm, protocol, channels) it is predicted with,
 * frozen at the start so the objective is smooth in the parameters. */
typedef struct {
    CsOp op;
    gint64 size_bytes;
    double measured_us;
    const CsAlgo *algo;
    CsProto proto;
    CsPredictOptions options;
} FitRow;

/* One machine of a fit: its datasheet topology, its rows and its candidate parameters. A
 * parameter maps to a component of the fit's parameter vector theta, which machines with the
 * same component share (cs_calibrate_fit_joint()). */
typedef struct {
    const CsTopo *base;
    GArray *params;      /* CsCalibParam, every candidate (the machine's CsCalibration's) */
    int *theta_of;       /* params index -> theta index, -1: kept at its initial value */
    GArray *rows;        /* FitRow */
    CsPointCache *cache; /* each row's schedule, built once for the whole fit */
    int offset;          /* index of its first row among all the fit's residuals */
    double *last_values; /* the values its residuals were last computed for, or NULL */
    gsl_vector *last_f;  /* and those residuals */
} FitGroup;

typedef struct {
    FitGroup *groups;
    int n_groups;
    int n_rows;   /* residuals of all groups' rows */
    int n_free;   /* components of theta */
    double *tmin; /* theta j's log-space range (the intersection over its members) */
    double *tmax;
    CsCalibLoss loss;
    double prior_weight;          /* residual per e-fold of a parameter's move */
    int jobs;                     /* threads (--jobs): one evaluation's rows, or several */
    double h_df;                  /* GSL's finite-difference step (fit_df()) */
    GAsyncQueue *slots;           /* (nullable) EvalSlot: per thread, a point cache per group */
    GError *error;                /* first prediction failure inside the fit */
    CsCalibProgressFunc progress; /* (nullable) told of each evaluation */
    gpointer progress_data;
    CsCalibStep step; /* what it is told */
} FitCtx;

static gboolean
collect_rows(const CsTopo *topo, CsTrace *const *traces, int n_traces,
             const CsPredictOptions *options, GArray *rows, GError **error)
{
    /* Rows of one choice share their three simulated sizes. */
    g_autoptr(CsPointCache) points = cs_point_cache_new(FALSE);
    cs_point_cache_bind(points, topo);
    for (int t = 0; t < n_traces; t++) {
        const CsTrace *trace = traces[t];
        const char *origin = cs_trace_origin(trace);
        CsOp op;
        if (!cs_trace_op(trace, &op)) {
            cs_trace_set_unknown_op_error(trace, error);
            return FALSE;
        }
        int nranks = cs_trace_n_ranks(trace);
        if (nranks <= 0 || nranks > cs_topo_n_ranks(topo)) {
            g_set_error(error, CS_TRACE_ERROR, CS_TRACE_ERROR_MALFORMED,
                        "%s: %d ranks does not fit topology %s (%d GPUs)", origin, nranks,
                        cs_topo_name(topo), cs_topo_n_ranks(topo));
            return FALSE;
        }
        /* The rows' choice is frozen here, as validate makes it; the fit then moves only the
         * times. */
        g_auto(CsTraceSetup) setup;
        if (!cs_trace_setup_init(&setup, topo, trace, op, nranks, options, error))
            return FALSE;

        for (gsize i = 0; i < cs_trace_n_rows(trace); i++) {
            const CsTraceRow *row = cs_trace_row(trace, i);
            if (row->size_bytes <= 0 || !(row->out_of_place.time_us > 0))
                continue;
            FitRow fr = { .op = op,
                          .size_bytes = row->size_bytes,
                          .measured_us = row->out_of_place.time_us,
                          .options = setup.options };
            CsDtype dtype;
            if (cs_dtype_from_name(row->type, &dtype, NULL))
                fr.options.dtype = dtype;
            CsRedop redop;
            if (cs_redop_from_name(row->redop, &redop, NULL))
                fr.options.redop = redop;
            if (cs_op_has_root(op) && row->root >= 0)
                fr.options.root = row->root;

            CsPrediction pred;
            CsPredictOptions choose = fr.options;
            choose.cache = points;
            /* The model dies with the setup; the fit replays the frozen choice only. */
            fr.options.nccl = NULL;
            fr.options.pick = CS_PICK_FASTEST;
            if (!cs_trace_setup_predict(&setup, topo, op, row->size_bytes, &choose, &pred, error)) {
                g_prefix_error(error, "%s:%d: ", origin, row->line);
                return FALSE;
            }
            fr.algo = pred.algo;
            fr.proto = pred.proto;
            fr.options.n_channels = pred.n_channels;
            g_array_append_val(rows, fr);
        }
    }
    if (rows->len == 0) {
        g_set_error(error, CS_CALIBRATE_ERROR, CS_CALIBRATE_ERROR_NO_DATA,
                    "no trace row with a positive size and a measured time");
        return FALSE;
    }
    return TRUE;
}

/* ---- Parameters ---- */

static void add_param(GArray *params, CsParamKind kind, int index, double initial, const char *fmt,
                      ...) G_GNUC_PRINTF(5, 6);

static void
add_param(GArray *params, CsParamKind kind, int index, double initial, const char *fmt, ...)
{
    CsCalibParam p = { .kind = kind,
                       .index = index,
                       .initial = initial,
                       .fitted = initial,
                       .sigma = NAN,
                       .min = initial * exp(-THETA_LIMIT),
                       .max = initial * exp(THETA_LIMIT),
                       .free = TRUE };
    va_list ap;
    va_start(ap, fmt);
    g_vsnprintf(p.name, sizeof p.name, fmt, ap);
    va_end(ap);
    g_array_append_val(params, p);
}

/* The current per-hop latency of @proto on @cls for @topo. */
static double
hop_latency(const CsTopo *topo, int proto, CsLinkClass cls)
{
    double s = cs_topo_hop_latency_override(topo, proto, cls);
    return s >= 0 ? s : cs_proto_info((CsProto)proto)->hop_latency_s[cls];
}

/* ---- Physical ranges ---- */

#define US 1e-6
#define NS 1e-9

/* NCCL 2.30.7 src/graph/tuning.cc, ncclTunerConstantsDefaults.hwLatencies[hw][algo][proto] in
 * us, hw NVLINK, PCI, NET (the order of CsLinkClass); algo Tree, Ring, CollNetDirect,
 * CollNetChain, NVLS, NVLSTree, PAT; proto LL, LL128, Simple (the order of CsProto); 0: NCCL has
 * no such pair. */
static const double nccl_hw_latency_us[CS_N_LINK_CLASSES][7][CS_N_PROTOS] = {
    { { 0.6, 1.25, 4.0 },
      { 0.6, 1.9, 3.4 },
      { 0, 0, 3.7 },
      { 0, 0, 2.8 },
      { 0, 0, 25 },
      { 0, 0, 25 },
      { 0, 0, 4.0 } },
    { { 1.0, 1.9, 4.0 },
      { 1.0, 2.5, 5.7 },
      { 0, 0, 3.7 },
      { 0, 0, 2.8 },
      { 0, 0, 0 },
      { 0, 0, 0 },
      { 0, 0, 4.0 } },
    { { 5.0, 8.5, 14 },
      { 2.7, 4.0, 14.0 },
      { 0, 0, 31 },
      { 0, 0, 30 },
      { 0, 0, 18 },
      { 0, 0, 20.9 },
      { 0, 0, 14 } },
};

/* The largest base latency in NCCL 2.30.7 tuning.cc (baseLatencies, LL128 Tree and Ring): all
 * the fixed cost NCCL's own model charges a collective, launch included. */
#define NCCL_MAX_BASE_LATENCY_US 14.0

/* Declares @p's physical range [lo, hi] with its @source; a bound of 0 (lo) or INFINITY (hi)
 * leaves that side at the fit's domain (e^4 from the topology's value), said in the source.
 * A topology whose own value lies outside the range widens it to that value: the fit starts
 * where the file says, and the source says the range was widened. */
static void
declare_range(CsCalibParam *p, double lo, double hi, const char *source)
{
    GString *text = g_string_new(source);
    if (lo > 0)
        p->min = lo;
    if (isfinite(hi))
        p->max = hi;
    if (p->initial < p->min || p->initial > p->max) {
        p->min = MIN(p->min, p->initial);
        p->max = MAX(p->max, p->initial);
        g_string_append(text, "; widened to the topology's own value");
    }
    g_strlcpy(p->range_source, text->str, sizeof p->range_source);
    g_string_free(text, TRUE);
}

/* Every candidate's range, by kind. @raw_bw is a link kind's mean line rate (LINK_BW only);
 * @cpu_ranks: the ranks are CPUs (the "launch" is an MPI call). docs/calibration.md lists the
 * ranges with their sources. */
/* CPU ranks (MPI processes): NCCL's protocol latencies do not apply to them, and messages of
 * the sizes measured sit in the cores' caches, which run several times the memory bandwidth a
 * file's reduce and copy rates come from; nothing published bounds them. */
#define CPU_DOMAIN                                                                                 \
    "CPU ranks: no published bound (NCCL's latencies do not apply; data in the caches runs "       \
    "past the memory bandwidth): the fit's domain, 1/55 to 55x the file's figure"

static void
param_range(CsCalibParam *p, double raw_bw, gboolean cpu_ranks)
{
    switch (p->kind) {
    case CS_PARAM_LINK_BW:
        /* A link carries at most its signalling rate: the datasheet figure before the usable
         * fraction (efficiency) the file applies. */
        declare_range(p, 0, raw_bw,
                      "up to the datasheet line rate (no link carries more than it signals); "
                      "no physical floor (a shared or throttled link delivers any fraction): "
                      "down to 1/55 of the file's figure");
        break;
    case CS_PARAM_LINK_ALPHA:
        declare_range(p, 10 * NS, 10 * US,
                      "10 ns: 2 m of cable at 5 ns/m, no hop beats its wire; 10 us: above "
                      "a store-and-forward hop of a 9,000 B frame at 10 Gb/s (7.2 us)");
        break;
    case CS_PARAM_HOP_LATENCY: {
        if (cpu_ranks) {
            declare_range(p, 0, INFINITY, CPU_DOMAIN);
            break;
        }
        const int proto = p->index / CS_N_LINK_CLASSES;
        const int cls = p->index % CS_N_LINK_CLASSES;
        double lo = INFINITY;
        double hi = 0;
        for (int hw = 0; hw < CS_N_LINK_CLASSES; hw++)
            for (int a = 0; a < 7; a++) {
                const double v = nccl_hw_latency_us[hw][a][proto];
                if (v <= 0)
                    continue;
                hi = MAX(hi, v);
                if (hw == cls)
                    lo = MIN(lo, v);
            }
        g_autofree char *source = g_strdup_printf(
            "NCCL 2.30.7 tuning.cc hwLatencies for %s: the least on %s (%g us) to the most "
            "on any hardware (%g us)",
            cs_proto_name((CsProto)proto), cs_link_class_name((CsLinkClass)cls), lo, hi);
        declare_range(p, lo * US, hi * US, source);
        break;
    }
    case CS_PARAM_LAUNCH:
        if (cpu_ranks)
            declare_range(p, 0, INFINITY, CPU_DOMAIN);
        else
            declare_range(p, 0.5 * US, NCCL_MAX_BASE_LATENCY_US * US,
                          "0.5 us: a CUDA graph replay's exposed launch (NVIDIA, Getting "
                          "Started with CUDA Graphs, 2019); 14 us: NCCL 2.30.7 tuning.cc's "
                          "largest base latency, all its fixed cost per collective");
        break;
    case CS_PARAM_STEP_OVERHEAD:
        if (cpu_ranks) {
            declare_range(p, 0, INFINITY, CPU_DOMAIN);
            break;
        }
        declare_range(p, 0, 5.7 * US,
                      "up to 5.7 us, NCCL 2.30.7 tuning.cc's largest intra-node hop latency "
                      "(PCI, Ring, Simple), of which a step's fence and flag are a part; no "
                      "published floor: down to 1/55 of the file's figure");
        break;
    case CS_PARAM_REDUCE_BW:
        if (cpu_ranks) {
            declare_range(p, 0, INFINITY, CPU_DOMAIN);
            break;
        }
        declare_range(p, 0, 3 * p->initial,
                      "up to 3x the file's figure, the memory bandwidth it is derived from "
                      "(two reads and a write per byte); no floor: down to 1/55");
        break;
    case CS_PARAM_COPY_BW:
        if (cpu_ranks) {
            declare_range(p, 0, INFINITY, CPU_DOMAIN);
            break;
        }
        declare_range(p, 0, 2 * p->initial,
                      "up to 2x the file's figure, the memory bandwidth it is derived from "
                      "(a read and a write per byte); no floor: down to 1/55");
        break;
    case CS_N_PARAM_KINDS:
    default:
        g_assert_not_reached();
    }
}

/* What @p belongs to, into its component: the thing two machines must have in common to
 * share it (cs_calibrate_fit_joint()). The GPU's costs, and the per-hop latencies on NVLink
 * and PCI (NCCL charges them per GPU-side hop), belong to the GPU model; a link kind's alpha
 * and bandwidth to the kind at its datasheet line rate per lane (the generation: NVLink4 and
 * NVLink5 differ in it); the NET per-hop latencies to the network's transport. Where the file
 * names no GPU model or no transport, the component is the topology's own. */
static void
param_component(CsCalibParam *p, const CsTopo *topo, const CsDevice *dev,
                const CsTransport *transport, const double *raw_sum, const int *n_kind)
{
    const char *model = dev->model;
    switch (p->kind) {
    case CS_PARAM_LINK_ALPHA:
    case CS_PARAM_LINK_BW: {
        g_autofree char *rate = cs_units_format_bandwidth(raw_sum[p->index] / n_kind[p->index]);
        g_snprintf(p->component, sizeof p->component, "%s link at %s per lane",
                   cs_link_kind_name((CsLinkKind)p->index), rate);
        return;
    }
    case CS_PARAM_HOP_LATENCY:
        if (p->index % CS_N_LINK_CLASSES == CS_LINK_CLASS_NET) {
            if (transport->kind != NULL)
                g_snprintf(p->component, sizeof p->component, "transport %s", transport->kind);
            else
                g_snprintf(p->component, sizeof p->component, "network of %s", cs_topo_name(topo));
            return;
        }
        break;
    default:
        break;
    }
    if (model != NULL)
        g_snprintf(p->component, sizeof p->component, "%s %s", cs_device_kind_name(dev->kind),
                   model);
    else
        g_snprintf(p->component, sizeof p->component, "%s of %s", cs_device_kind_name(dev->kind),
                   cs_topo_name(topo));
}

/* Candidates: what the rows can see. Link kinds on the routes between the ranks used, the
 * protocols the rows run with on the link classes those routes cross, and the GPU costs. */
static void
candidate_params(const CsTopo *topo, const GArray *rows, GArray *params)
{
    int max_ranks = 0;
    gboolean proto_used[CS_N_PROTOS] = { FALSE };
    for (guint i = 0; i < rows->len; i++) {
        const FitRow *r = &g_array_index(rows, FitRow, i);
        max_ranks = MAX(max_ranks, r->options.nranks);
        proto_used[r->proto] = TRUE;
    }
    double alpha_sum[CS_N_LINK_KINDS] = { 0 };
    double bw_sum[CS_N_LINK_KINDS] = { 0 };
    double raw_sum[CS_N_LINK_KINDS] = { 0 };
    int n_kind[CS_N_LINK_KINDS] = { 0 };
    gboolean class_used[CS_N_LINK_CLASSES] = { FALSE };
    g_autofree gboolean *seen = g_new0(gboolean, cs_topo_n_links(topo));
    for (int a = 0; a < max_ranks; a++) {
        for (int b = 0; b < max_ranks; b++) {
            const CsRoute *route = cs_topo_route(topo, a, b);
            for (int k = 0; k < route->n_links; k++) {
                const int li = route->links[k];
                const CsLink *l = cs_topo_link(topo, li);
                class_used[cs_link_kind_class(l->kind)] = TRUE;
                if (seen[li])
                    continue;
                seen[li] = TRUE;
                alpha_sum[l->kind] += l->alpha_s;
                bw_sum[l->kind] += l->bw_Bps / l->count;
                raw_sum[l->kind] += l->raw_bw_Bps / l->count;
                n_kind[l->kind]++;
            }
        }
    }
    for (int k = 0; k < CS_N_LINK_KINDS; k++) {
        if (n_kind[k] == 0)
            continue;
        const char *kind = cs_link_kind_name((CsLinkKind)k);
        add_param(params, CS_PARAM_LINK_BW, k, bw_sum[k] / n_kind[k], "%s.bandwidth", kind);
        param_range(&g_array_index(params, CsCalibParam, params->len - 1), raw_sum[k] / n_kind[k],
                    FALSE);
        /* A kind whose alpha is 0 everywhere has no scale to fit. */
        if (alpha_sum[k] > 0)
            add_param(params, CS_PARAM_LINK_ALPHA, k, alpha_sum[k] / n_kind[k], "%s.alpha", kind);
    }
    for (int p = 0; p < CS_N_PROTOS; p++) {
        if (!proto_used[p])
            continue;
        for (int c = 0; c < CS_N_LINK_CLASSES; c++) {
            const double s = hop_latency(topo, p, (CsLinkClass)c);
            if (class_used[c] && s > 0)
                add_param(params, CS_PARAM_HOP_LATENCY, p * CS_N_LINK_CLASSES + c, s, "%s.hop.%s",
                          cs_proto_name((CsProto)p), cs_link_class_name((CsLinkClass)c));
        }
    }
    const CsGpuSpec *gpu = cs_topo_rank_gpu(topo, 0);
    if (gpu->launch_s > 0)
        add_param(params, CS_PARAM_LAUNCH, 0, gpu->launch_s, "gpu.launch");
    if (gpu->step_overhead_s > 0)
        add_param(params, CS_PARAM_STEP_OVERHEAD, 0, gpu->step_overhead_s, "gpu.step_overhead");
    if (gpu->reduce_Bps > 0)
        add_param(params, CS_PARAM_REDUCE_BW, 0, gpu->reduce_Bps, "gpu.reduce_bandwidth");
    if (gpu->copy_Bps > 0)
        add_param(params, CS_PARAM_COPY_BW, 0, gpu->copy_Bps, "gpu.copy_bandwidth");
    const CsDevice *dev = cs_topo_device(topo, cs_topo_rank_device(topo, 0));
    const gboolean cpu_ranks = dev->kind == CS_DEVICE_CPU;
    const CsTransport *transport = cs_topo_transport(topo);
    for (guint i = 0; i < params->len; i++) {
        CsCalibParam *p = &g_array_index(params, CsCalibParam, i);
        if (p->kind != CS_PARAM_LINK_BW)
            param_range(p, 0, cpu_ranks);
        param_component(p, topo, dev, transport, raw_sum, n_kind);
    }
}

/* The topology for parameter values @values (one per params entry). */
static CsTopo *
apply_params(const CsTopo *base, const GArray *params, const double *values)
{
    CsTopoAdjust adj;
    cs_topo_adjust_init(&adj);
    for (guint i = 0; i < params->len; i++) {
        const CsCalibParam *p = &g_array_index(params, CsCalibParam, i);
        const double scale = values[i] / p->initial;
        switch (p->kind) {
        case CS_PARAM_LINK_ALPHA:
            adj.link_alpha_scale[p->index] = scale;
            break;
        case CS_PARAM_LINK_BW:
            adj.link_bw_scale[p->index] = scale;
            break;
        case CS_PARAM_HOP_LATENCY:
            adj.hop_latency_s[p->index / CS_N_LINK_CLASSES][p->index % CS_N_LINK_CLASSES]
                = values[i];
            break;
        case CS_PARAM_LAUNCH:
            adj.launch_scale = scale;
            break;
        case CS_PARAM_STEP_OVERHEAD:
            adj.step_overhead_scale = scale;
            break;
        case CS_PARAM_REDUCE_BW:
            adj.reduce_bw_scale = scale;
            break;
        case CS_PARAM_COPY_BW:
            adj.copy_bw_scale = scale;
            break;
        case CS_N_PARAM_KINDS:
        default:
            g_assert_not_reached();
        }
    }
    return cs_topo_adjust(base, &adj);
}

/* The log-space range of free parameter @j: the physical range [min, max] (param_range()) of
 * every parameter it is, intersected. */
static double
theta_min(const FitCtx *ctx, int j)
{
    return ctx->tmin[j];
}

static double
theta_max(const FitCtx *ctx, int j)
{
    return ctx->tmax[j];
}

/* Parameter values of group @g for free-parameter vector @theta (fixed ones at their initial
 * value), each clamped to its range. Beyond a bound the rows see no change and the prior,
 * which grows with theta itself, pulls it back: the fit settles on the bound (clamping with a
 * prior, the projected form of a box constraint). */
static void
values_from_theta(const FitCtx *ctx, const FitGroup *g, const gsl_vector *theta, double *values)
{
    for (guint i = 0; i < g->params->len; i++) {
        values[i] = g_array_index(g->params, CsCalibParam, i).initial;
        const int j = g->theta_of[i];
        if (j >= 0)
            values[i] *= exp(CLAMP(gsl_vector_get(theta, j), theta_min(ctx, j), theta_max(ctx, j)));
    }
}

/* ---- Residuals ---- */

/* One evaluation of a group's rows: each row's prediction into its own slot (over threads),
 * then the residuals in row order. */
typedef struct {
    const FitGroup *g;
    const CsTopo *topo;
    CsPointCache *cache;
    double *predicted_us;
    GError **errors;
} RowsJob;

static void
rows_job_item(guint i, gpointer data)
{
    RowsJob *j = data;
    const FitRow *r = &g_array_index(j->g->rows, FitRow, i);
    CsPrediction pred;
    CsPredictOptions options = r->options;
    options.cache = j->cache;
    if (cs_predict_one(j->topo, r->op, r->size_bytes, r->algo, r->proto, &options, &pred,
                       &j->errors[i]))
        j->predicted_us[i] = pred.time_us;
}

/* Group @g's rows' residuals on @topo into @f, predicted on @jobs threads sharing @cache;
 * FALSE with @error the first failing row's (in row order). */
static gboolean
residuals_rows(CsCalibLoss loss, const FitGroup *g, const CsTopo *topo, CsPointCache *cache,
               int jobs, gsl_vector *f, GError **error)
{
    /* Large rows of one algorithm, protocol and channel count extend from the same three
     * simulated sizes: simulate those once per parameter vector (the cache serves every
     * thread, and a point one thread simulates the others wait for). */
    const gint64 t0 = g_get_monotonic_time();
    const guint n = g->rows->len;
    g_autofree double *predicted_us = g_new0(double, MAX(n, 1));
    g_autofree GError **errors = g_new0(GError *, MAX(n, 1));
    RowsJob job = { g, topo, cache, predicted_us, errors };
    gboolean ok = TRUE;

    cs_point_cache_bind(cache, topo);
    cs_parallel_for(n, jobs, rows_job_item, NULL, &job);
    for (guint i = 0; i < n; i++) {
        const FitRow *r = &g_array_index(g->rows, FitRow, i);
        if (errors[i] != NULL) {
            if (ok)
                g_propagate_error(error, g_steal_pointer(&errors[i]));
            g_clear_error(&errors[i]);
            ok = FALSE;
            continue;
        }
        gsl_vector_set(f, i,
                       loss_residual(loss, (predicted_us[i] - r->measured_us) / r->measured_us));
    }
    if (!ok)
        return FALSE;
    gint64 misses, hits;
    cs_point_cache_stats(cache, &misses, &hits);
    g_debug("calibrate: %s: %u rows, %" G_GINT64_FORMAT " points simulated, %" G_GINT64_FORMAT
            " reused, %.3f s",
            cs_topo_name(g->base), g->rows->len, misses, hits, (g_get_monotonic_time() - t0) / 1e6);
    return TRUE;
}

static gboolean
residuals_for(FitCtx *ctx, FitGroup *g, const CsTopo *topo, gsl_vector *f)
{
    g_autoptr(GError) local = NULL;
    if (residuals_rows(ctx->loss, g, topo, g->cache, ctx->jobs, f, &local))
        return TRUE;
    if (ctx->error == NULL)
        ctx->error = g_steal_pointer(&local);
    return FALSE;
}

/* Every group's rows' residuals at @theta (NULL: the datasheet topologies themselves) into
 * @f (n_rows). A group none of whose values moved since its last evaluation keeps its
 * residuals: in a joint fit, a machine's own parameter moves that machine's rows only. */
static gboolean residuals_theta_all(FitCtx *ctx, const gsl_vector *theta, gsl_vector *f);

static double rms(CsCalibLoss loss, const gsl_vector *f);

/* residuals_theta_all(), then the progress told of the evaluation. */
static gboolean
residuals_theta(FitCtx *ctx, const gsl_vector *theta, gsl_vector *f)
{
    if (!residuals_theta_all(ctx, theta, f))
        return FALSE;
    ctx->step.evaluation++;
    if (theta == NULL)
        ctx->step.rms = rms(ctx->loss, f);
    if (ctx->progress != NULL)
        ctx->progress(&ctx->step, ctx->progress_data);
    return TRUE;
}

/* Told by GSL's driver after each iteration: the rows' rms error at its new position. */
static void
fit_iterated(const size_t iter, void *data, const gsl_multifit_nlinear_workspace *w)
{
    FitCtx *ctx = data;
    ctx->step.iteration = (int)iter;
    gsl_vector_const_view rows
        = gsl_vector_const_subvector(gsl_multifit_nlinear_residual(w), 0, ctx->n_rows);
    ctx->step.rms = rms(ctx->loss, &rows.vector);
}

static gboolean
residuals_theta_all(FitCtx *ctx, const gsl_vector *theta, gsl_vector *f)
{
    for (int k = 0; k < ctx->n_groups; k++) {
        FitGroup *g = &ctx->groups[k];
        gsl_vector_view part = gsl_vector_subvector(f, g->offset, g->rows->len);
        if (theta == NULL) {
            if (!residuals_for(ctx, g, g->base, &part.vector))
                return FALSE;
            continue;
        }
        const guint np = g->params->len;
        g_autofree double *values = g_new(double, MAX(np, 1));
        values_from_theta(ctx, g, theta, values);
        if (g->last_values != NULL && memcmp(values, g->last_values, np * sizeof(double)) == 0) {
            gsl_vector_memcpy(&part.vector, g->last_f);
            continue;
        }
        g_autoptr(CsTopo) topo = apply_params(g->base, g->params, values);
        if (!residuals_for(ctx, g, topo, &part.vector))
            return FALSE;
        if (g->last_values == NULL) {
            g->last_values = g_new(double, MAX(np, 1));
            g->last_f = gsl_vector_alloc(g->rows->len);
        }
        memcpy(g->last_values, values, np * sizeof(double));
        gsl_vector_memcpy(g->last_f, &part.vector);
    }
    return TRUE;
}

/* The rows' residuals, then the prior toward the topology's own (datasheet) values: one residual
 * prior_weight * theta per free parameter. Parameters the rows constrain move freely; directions
 * the rows cannot tell apart (launch against per-step overhead against hop latency) stay near
 * the datasheet instead of drifting to absurd values (MAP estimation with a Gaussian prior in
 * log space). */
static int
fit_f(const gsl_vector *theta, void *data, gsl_vector *f)
{
    FitCtx *ctx = data;
    gsl_vector_view rows = gsl_vector_subvector(f, 0, ctx->n_rows);
    if (!residuals_theta(ctx, theta, &rows.vector))
        return GSL_EBADFUNC;
    for (int j = 0; j < ctx->n_free; j++)
        gsl_vector_set(f, ctx->n_rows + j, ctx->prior_weight * gsl_vector_get(theta, j));
    return GSL_SUCCESS;
}
/* ---- Several parameter vectors at once ---- */

/* One thread's point caches, one per group (a cache is bound to one parameter vector at a
 * time), their schedules kept in the group's own cache. */
typedef struct {
    CsPointCache **caches;
    int n;
} EvalSlot;

static void
eval_slot_free(gpointer data)
{
    EvalSlot *slot = data;
    for (int k = 0; k < slot->n; k++)
        cs_point_cache_free(slot->caches[k]);
    g_free(slot->caches);
    g_free(slot);
}

typedef struct {
    FitCtx *ctx;
    const gsl_vector *const *thetas;
    gsl_vector *const *fs;      /* per vector, the rows' residuals (n_rows) */
    const gsl_vector *f_at;     /* (nullable) the rows' residuals at @theta_at, which the groups */
    const gsl_vector *theta_at; /* whose values a vector does not move keep */
    GError **errors;
} BatchJob;

static void
batch_item(guint i, gpointer data)
{
    BatchJob *b = data;
    FitCtx *ctx = b->ctx;
    EvalSlot *slot = g_async_queue_pop(ctx->slots);
    for (int k = 0; k < ctx->n_groups; k++) {
        const FitGroup *g = &ctx->groups[k];
        const guint np = g->params->len;
        gsl_vector_view part = gsl_vector_subvector(b->fs[i], g->offset, g->rows->len);
        g_autofree double *values = g_new(double, MAX(np, 1));
        values_from_theta(ctx, g, b->thetas[i], values);
        if (b->f_at != NULL) {
            g_autofree double *at = g_new(double, MAX(np, 1));
            values_from_theta(ctx, g, b->theta_at, at);
            if (memcmp(values, at, np * sizeof(double)) == 0) {
                gsl_vector_const_view same
                    = gsl_vector_const_subvector(b->f_at, g->offset, g->rows->len);
                gsl_vector_memcpy(&part.vector, &same.vector);
                continue;
            }
        }
        g_autoptr(CsTopo) topo = apply_params(g->base, g->params, values);
        if (!residuals_rows(ctx->loss, g, topo, slot->caches[k], 1, &part.vector, &b->errors[i]))
            break;
    }
    g_async_queue_push(ctx->slots, slot);
}

/* On the calling thread, as each vector's residuals are in: one more evaluation. */
static void
batch_done(guint done, guint i, gpointer data)
{
    BatchJob *b = data;
    (void)done;
    if (b->errors[i] != NULL)
        return;
    b->ctx->step.evaluation++;
    if (b->ctx->progress != NULL)
        b->ctx->progress(&b->ctx->step, b->ctx->progress_data);
}

/* The rows' residuals at each of the @n parameter vectors @thetas into @fs, the vectors
 * spread over ctx->jobs threads, each thread with point caches of its own. A group whose
 * values a vector leaves as at @theta_at keeps its residuals of @f_at (both nullable), as
 * residuals_theta() would. The same residuals, bit for bit, as one at a time: the engine is
 * deterministic and every cache builds its schedules on the same topology. */
static gboolean
residuals_batch(FitCtx *ctx, const gsl_vector *const *thetas, gsl_vector *const *fs, guint n,
                const gsl_vector *theta_at, const gsl_vector *f_at)
{
    if (ctx->slots == NULL) {
        ctx->slots = g_async_queue_new_full(eval_slot_free);
        for (int t = 0; t < MAX(ctx->jobs, 1); t++) {
            EvalSlot *slot = g_new0(EvalSlot, 1);
            slot->n = ctx->n_groups;
            slot->caches = g_new(CsPointCache *, MAX(ctx->n_groups, 1));
            for (int k = 0; k < ctx->n_groups; k++) {
                slot->caches[k] = cs_point_cache_new_sharing(ctx->groups[k].cache);
                cs_point_cache_bind(slot->caches[k], ctx->groups[k].base);
            }
            g_async_queue_push(ctx->slots, slot);
        }
    }
    g_autofree GError **errors = g_new0(GError *, MAX(n, 1));
    BatchJob job = { ctx, thetas, fs, f_at, theta_at, errors };
    cs_parallel_for(n, ctx->jobs, batch_item, batch_done, &job);
    gboolean ok = TRUE;
    for (guint i = 0; i < n; i++) {
        if (errors[i] == NULL)
            continue;
        if (ok && ctx->error == NULL)
            ctx->error = g_steal_pointer(&errors[i]);
        g_clear_error(&errors[i]);
        ok = FALSE;
    }
    return ok;
}

/* GSL's forward-difference Jacobian of fit_f() (multifit_nlinear/fdjac.c, forward_jac(): the
 * step h |theta_j|, or h at 0, and (f(theta + step e_j) - f(theta)) * (1 / step), the same
 * arithmetic), its p evaluations run at once over the threads instead of one after another. */
static int
fit_df(const gsl_vector *theta, void *data, gsl_matrix *jac)
{
    FitCtx *ctx = data;
    const int n = ctx->n_rows;
    const int p = ctx->n_free;
    gsl_vector *f0 = gsl_vector_alloc(n);
    g_autofree double *step = g_new(double, MAX(p, 1));
    g_autofree gsl_vector **thetas = g_new(gsl_vector *, MAX(p, 1));
    g_autofree gsl_vector **fs = g_new(gsl_vector *, MAX(p, 1));

    /* At theta itself: the groups' last residuals, which GSL has just evaluated (its own
     * difference quotients take that f as given, so it is no evaluation of the count). */
    gboolean ok = residuals_theta_all(ctx, theta, f0);
    for (int j = 0; j < p; j++) {
        const double tj = gsl_vector_get(theta, j);
        step[j] = ctx->h_df * fabs(tj);
        if (step[j] == 0.0)
            step[j] = ctx->h_df;
        thetas[j] = gsl_vector_alloc(p);
        gsl_vector_memcpy(thetas[j], theta);
        gsl_vector_set(thetas[j], j, tj + step[j]);
        fs[j] = gsl_vector_alloc(n);
    }
    ok = ok && residuals_batch(ctx, (const gsl_vector *const *)thetas, fs, (guint)p, theta, f0);
    for (int j = 0; j < p && ok; j++) {
        const double inv = 1.0 / step[j];
        for (int i = 0; i < n; i++)
            gsl_matrix_set(jac, i, j, (gsl_vector_get(fs[j], i) - gsl_vector_get(f0, i)) * inv);
        for (int k = 0; k < p; k++) {
            const double moved = gsl_vector_get(thetas[j], k);
            const double at = gsl_vector_get(theta, k);
            gsl_matrix_set(jac, n + k, j,
                           (ctx->prior_weight * moved - ctx->prior_weight * at) * inv);
        }
    }
    for (int j = 0; j < p; j++) {
        gsl_vector_free(thetas[j]);
        gsl_vector_free(fs[j]);
    }
    gsl_vector_free(f0);
    return ok ? GSL_SUCCESS : GSL_EBADFUNC;
}

/* The rms relative time error of the rows behind residuals @f. */
static double
rms(CsCalibLoss loss, const gsl_vector *f)
{
    double sum = 0.0;
    for (size_t i = 0; i < f->size; i++) {
        const double r = relative_error(loss, gsl_vector_get(f, i));
        sum += r * r;
    }
    return sqrt(sum / (double)f->size);
}

/* ---- The fit ---- */

static gboolean
param_selected(const CsCalibParam *p, const char *const *only)
{
    if (only == NULL)
        return TRUE;
    for (int i = 0; only[i] != NULL; i++)
        if (g_str_has_prefix(p->name, only[i]))
            return TRUE;
    return FALSE;
}

/* Marks every parameter that free parameter @j stands for: no longer free, and @held. */
static void
unfree(FitCtx *ctx, int j, gboolean held)
{
    for (int k = 0; k < ctx->n_groups; k++) {
        FitGroup *g = &ctx->groups[k];
        for (guint i = 0; i < g->params->len; i++)
            if (g->theta_of[i] == j) {
                CsCalibParam *cp = &g_array_index(g->params, CsCalibParam, i);
                cp->free = FALSE;
                cp->held = held;
            }
    }
}

/* Columns of the Jacobian that are zero: parameters no row can see (a reduction rate for an
 * all-gather trace). They are fixed rather than left to drift.
 *
 * With no more rows than visible parameters the least-squares problem has no unique answer
 * (the prior alone would pick one) and no degree of freedom for the uncertainties. The fit
 * then keeps the n - 1 parameters the rows determine best, the first columns of a QR factorisation
 * of the Jacobian with column pivoting (the most independent directions first: Golub & Van Loan,
 * Matrix Computations, 5.4.1), and holds the others at their datasheet values, leaving one degree
 * of freedom for the uncertainties. */
static void
choose_free(FitCtx *ctx, const gsl_vector *f0)
{
    const int n = ctx->n_rows;
    const double step = 0.05;
    g_autoptr(GArray) keep = g_array_new(FALSE, FALSE, sizeof(int));
    gsl_matrix *jac = gsl_matrix_alloc(n, MAX(ctx->n_free, 1));
    gsl_vector *f = gsl_vector_alloc(n);
    gsl_vector *theta = gsl_vector_calloc(MAX(ctx->n_free, 1));
    for (int j = 0; j < ctx->n_free; j++) {
        gsl_vector_set_zero(theta);
        gsl_vector_set(theta, j, step);
        double change = 0;
        if (residuals_theta(ctx, theta, f)) {
            for (int i = 0; i < n; i++) {
                const double d = gsl_vector_get(f, i) - gsl_vector_get(f0, i);
                change = MAX(change, fabs(d));
                gsl_matrix_set(jac, i, keep->len, d / step);
            }
        }
        if (change > 1e-7)
            g_array_append_val(keep, j);
        else
            unfree(ctx, j, FALSE);
    }
    gsl_vector_free(theta);
    gsl_vector_free(f);

    const int visible = (int)keep->len;
    if (n >= 2 && visible > n - 1) {
        gsl_matrix_view cols = gsl_matrix_submatrix(jac, 0, 0, n, visible);
        gsl_vector *tau = gsl_vector_alloc(MIN(n, visible));
        gsl_vector *norm = gsl_vector_alloc(visible);
        gsl_permutation *perm = gsl_permutation_alloc(visible);
        int signum;
        gsl_linalg_QRPT_decomp(&cols.matrix, tau, perm, &signum, norm);
        g_autofree gboolean *best = g_new0(gboolean, visible);
        for (int j = 0; j < n - 1; j++)
            best[gsl_permutation_get(perm, j)] = TRUE;
        g_autoptr(GArray) chosen = g_array_new(FALSE, FALSE, sizeof(int));
        for (int j = 0; j < visible; j++) {
            const int t = g_array_index(keep, int, j);
            if (best[j])
                g_array_append_val(chosen, t);
            else
                unfree(ctx, t, TRUE);
        }
        g_array_set_size(keep, 0);
        g_array_append_vals(keep, chosen->data, chosen->len);
        gsl_permutation_free(perm);
        gsl_vector_free(norm);
        gsl_vector_free(tau);
    }
    gsl_matrix_free(jac);

    /* Renumber theta over the kept parameters. */
    g_autofree int *renumber = g_new(int, MAX(ctx->n_free, 1));
    for (int j = 0; j < ctx->n_free; j++)
        renumber[j] = -1;
    for (guint k = 0; k < keep->len; k++) {
        const int j = g_array_index(keep, int, k);
        renumber[j] = (int)k;
        ctx->tmin[k] = ctx->tmin[j];
        ctx->tmax[k] = ctx->tmax[j];
    }
    for (int k = 0; k < ctx->n_groups; k++) {
        FitGroup *g = &ctx->groups[k];
        for (guint i = 0; i < g->params->len; i++)
            if (g->theta_of[i] >= 0)
                g->theta_of[i] = renumber[g->theta_of[i]];
        /* The cached residuals were keyed on the old numbering's values; they stay valid
         * (values, not theta), so nothing to drop. */
    }
    ctx->n_free = (int)keep->len;
}
/* ---- The Jacobian behind the uncertainties ---- */

/* Step of the difference quotients for the uncertainties, in log space: 1% of the value,
 * far above the picosecond rounding of simulated times (a 1e-4 step moves a 1 us prediction
 * by 100 ps) and far below what a fit resolves. */
#define SIGMA_STEP 0.01

/* A parameter within this (in log space, 0.1%) of a bound of its range is on it. */
#define BOUND_TOL 1e-3

/* The Jacobian of fit_f() at @theta for the covariance, into @jac ((n + p) x p).
 *
 * A simulated time is piecewise smooth in the parameters, not smooth: where two transfers
 * reach a link at nearly the same time, a small move of a latency swaps their order and the
 * time jumps (on dgx-h100x4's 1 MiB all-reduce row, LL.hop.nvlink moved by 1e-4 of its value
 * jumps the time by 0.9%). GSL's own Jacobian is a forward difference at a 1e-4 step; one
 * that straddles such a jump reads as a derivative of -222 where the smooth response is 0.2,
 * and since a covariance is the inverse of J^T J, that one entry shrank LL.hop.nvlink's 1-sigma
 * 1000-fold (258 ps against 240 ns with four parameters held). A jump is not a sensitivity.
 * So every entry here is a difference quotient over SIGMA_STEP on the side where the
 * response is smooth: on each side the quotients over one and two steps must agree (a jump
 * inside either interval makes them differ by at least half the jump over the step); the
 * central quotient where both sides agree, else the side that agrees better. A parameter on a
 * bound of its range (within BOUND_TOL) has one side only, the inward one: outward the clamped
 * value does not move and the flat quotients would read as "no row sees it". The prior's rows
 * are exact: prior_weight on the diagonal. */
static gboolean
sigma_jacobian(FitCtx *ctx, const gsl_vector *theta, const gsl_vector *f0, gsl_matrix *jac)
{
    const int n = ctx->n_rows;
    const int p = ctx->n_free;
    const double h = SIGMA_STEP;
    gboolean ok = TRUE;

    /* Each parameter moved by -2, -1, +1 and +2 steps: 4p evaluations, at once over the
     * threads. */
    static const double moves[4] = { 1, 2, -1, -2 };
    g_autofree gsl_vector **moved = g_new(gsl_vector *, MAX(4 * p, 1));
    g_autofree gsl_vector **fs = g_new(gsl_vector *, MAX(4 * p, 1));
    for (int j = 0; j < p; j++)
        for (int m = 0; m < 4; m++) {
            gsl_vector *v = moved[4 * j + m] = gsl_vector_alloc(theta->size);
            gsl_vector_memcpy(v, theta);
            gsl_vector_set(v, j, gsl_vector_get(theta, j) + moves[m] * h);
            fs[4 * j + m] = gsl_vector_alloc(n);
        }
    ok = residuals_batch(ctx, (const gsl_vector *const *)moved, fs, (guint)(4 * p), theta, f0);

    gsl_matrix_set_zero(jac);
    for (int j = 0; j < p && ok; j++) {
        const double t = gsl_vector_get(theta, j);
        const gboolean at_upper = t >= theta_max(ctx, j) - BOUND_TOL;
        const gboolean at_lower = !at_upper && t <= theta_min(ctx, j) + BOUND_TOL;
        const gsl_vector *fp1 = fs[4 * j], *fp2 = fs[4 * j + 1];
        const gsl_vector *fm1 = fs[4 * j + 2], *fm2 = fs[4 * j + 3];
        for (int i = 0; i < n && ok; i++) {
            const double f = gsl_vector_get(f0, i);
            const double up1 = (gsl_vector_get(fp1, i) - f) / h;
            const double up2 = (gsl_vector_get(fp2, i) - f) / (2 * h);
            const double down1 = (f - gsl_vector_get(fm1, i)) / h;
            const double down2 = (f - gsl_vector_get(fm2, i)) / (2 * h);
            const double bend_up = fabs(up1 - up2);
            const double bend_down = fabs(down1 - down2);
            /* Smooth: the quotients differ by the curvature only, a few percent of them at a
             * 1% step; 1e-4 absorbs the picosecond rounding of a 1 us time. */
            const double tol = 0.05 * (fabs(up1) + fabs(down1)) + 1e-4;
            double d;
            if (at_upper)
                d = down1;
            else if (at_lower)
                d = up1;
            else if (bend_up <= tol && bend_down <= tol)
                d = 0.5 * (up1 + down1);
            else
                d = bend_up <= bend_down ? up1 : down1;
            gsl_matrix_set(jac, i, j, d);
        }
        gsl_matrix_set(jac, n + j, j, ctx->prior_weight);
    }
    for (int k = 0; k < 4 * p; k++) {
        gsl_vector_free(moved[k]);
        gsl_vector_free(fs[k]);
    }
    return ok;
}

/* The covariance of the fitted log-parameters, into @covar (p x p), from the Jacobian @jac
 * ((n + p) x p, the rows' then the prior's) and the rows' residuals @f (n): the
 * heteroskedasticity-consistent "sandwich" A^-1 B A^-1 (White, Econometrica 48(4), 1980),
 * where A = J^T J is the curvature of the objective, prior included, and
 * B = sum_i (r_i / (1 - h_i))^2 g_i g_i^T the spread of the rows' own gradients g_i, each
 * residual r_i divided by one minus its leverage h_i = g_i^T A^-1 g_i (HC3: MacKinnon & White,
 * J. Econometrics 29, 1985, for few rows: a row that pulls the fit onto itself shows too
 * small a residual). The prior's rows are pseudo-measurements in the rows' units (an e-fold
 * costs prior_weight, as a row's error would): each enters B with the rows' pooled variance
 * chisq / (n - p), so a direction only the prior holds (two parameters with the same effect
 * on every row) keeps the prior's width, s / prior_weight in log space, and reads as not
 * determined, instead of the zero a data-only B would give it.
 *
 * Why not the textbook (J^T J)^-1 chisq / (n - p): that assumes every row equally noisy, and
 * a trace is not: its latency rows miss by several percent (what the model leaves out), its
 * bandwidth rows by a fraction of one. One pooled variance then overstates the uncertainty of
 * what the bandwidth rows determine (nvswitch.bandwidth: 2x the spread of a bootstrap over
 * the rows, on the 4 x H100 log) and understates what the latency rows do (gpu.launch: half
 * of it). The sandwich weighs each row by its own residual, which is what resampling the rows
 * measures (tests/test-calibrate.c, /calibrate/sigma/bootstrap). */
/* How many rows parameter @j draws on: the participation ratio (sum g^2)^2 / sum g^4 of its
 * column of the rows' Jacobian @jac (@n rows), the inverse Simpson index of the squared
 * sensitivities (Simpson, Nature 163, 1949): k rows that see it equally give k, one row that
 * sees it far more than the rest gives about 1. */
static double
rows_seen(const gsl_matrix *jac, int n, int j)
{
    double s2 = 0.0;
    double s4 = 0.0;
    for (int i = 0; i < n; i++) {
        const double g2 = gsl_matrix_get(jac, i, j) * gsl_matrix_get(jac, i, j);
        s2 += g2;
        s4 += g2 * g2;
    }
    return s4 > 0.0 ? s2 * s2 / s4 : 0.0;
}

static void
sandwich_covariance(const gsl_matrix *jac, const gsl_vector *f, gsl_matrix *covar)
{
    const size_t n = f->size;
    const size_t p = jac->size2;
    gsl_matrix *bread = gsl_matrix_alloc(p, p);
    gsl_matrix *meat = gsl_matrix_calloc(p, p);
    gsl_matrix *half = gsl_matrix_alloc(p, p);

    /* A^-1 by GSL's QR with column pivoting: a direction no row and no prior sees gets 0. */
    gsl_multifit_nlinear_covar(jac, 0.0, bread);
    for (size_t i = 0; i < n; i++) {
        double lev = 0.0;
        for (size_t a = 0; a < p; a++)
            for (size_t b = 0; b < p; b++)
                lev += gsl_matrix_get(jac, i, a) * gsl_matrix_get(bread, a, b)
                       * gsl_matrix_get(jac, i, b);
        const double shrink = MAX(1e-6, 1.0 - lev);
        const double r2 = gsl_vector_get(f, i) * gsl_vector_get(f, i) / (shrink * shrink);
        for (size_t a = 0; a < p; a++)
            for (size_t b = 0; b < p; b++)
                *gsl_matrix_ptr(meat, a, b)
                    += r2 * gsl_matrix_get(jac, i, a) * gsl_matrix_get(jac, i, b);
    }
    double chisq = 0.0;
    for (size_t i = 0; i < n; i++)
        chisq += gsl_vector_get(f, i) * gsl_vector_get(f, i);
    const double pooled = chisq / (double)(n > p ? n - p : 1);
    for (size_t i = n; i < jac->size1; i++)
        for (size_t a = 0; a < p; a++)
            for (size_t b = 0; b < p; b++)
                *gsl_matrix_ptr(meat, a, b)
                    += pooled * gsl_matrix_get(jac, i, a) * gsl_matrix_get(jac, i, b);
    gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, bread, meat, 0.0, half);
    gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, half, bread, 0.0, covar);
    gsl_matrix_free(half);
    gsl_matrix_free(meat);
    gsl_matrix_free(bread);
}

/* The key under which parameters of several machines are one: name, component and datasheet
 * value (transfer full). */
static char *
share_key(const CsCalibParam *p)
{
    return g_strdup_printf("%s|%s|%.17g", p->name, p->component, p->initial);
}

static void
fit_group_clear(FitGroup *g)
{
    g_clear_pointer(&g->rows, g_array_unref);
    g_clear_pointer(&g->cache, cs_point_cache_free);
    g_clear_pointer(&g->theta_of, g_free);
    g_clear_pointer(&g->last_values, g_free);
    g_clear_pointer(&g->last_f, gsl_vector_free);
}

static void
fit_ctx_clear(FitCtx *ctx)
{
    /* Before the groups' caches, whose schedules the slots' caches use. */
    g_clear_pointer(&ctx->slots, g_async_queue_unref);
    for (int k = 0; k < ctx->n_groups; k++)
        fit_group_clear(&ctx->groups[k]);
    g_clear_pointer(&ctx->groups, g_free);
    g_clear_pointer(&ctx->tmin, g_free);
    g_clear_pointer(&ctx->tmax, g_free);
    g_clear_error(&ctx->error);
}

/* A failure inside the fit: @ctx's own error, moved to @error. Returns NULL. */
static GPtrArray *
fit_failed(FitCtx *ctx, GError **error)
{
    if (ctx->error != NULL)
        g_propagate_error(error, g_steal_pointer(&ctx->error));
    fit_ctx_clear(ctx);
    return NULL;
}

/**
 * cs_calibrate_fit_joint:
 * The choice (algorithm, protocol, channels) of every row is frozen at what the datasheet
 * topology predicts (or what the trace forced), so that the objective is a smooth function of
 * the parameters; the rows' residuals are (predicted - measured) / measured time, under
 * @loss.
 */
GPtrArray *
cs_calibrate_fit_joint(const CsTopo *const *topos, int n_machines, CsTrace *const *traces,
                       const int *n_traces, const CsPredictOptions *options, CsCalibLoss loss,
                       double prior_weight, const char *const *only, GError **error)
{
    return cs_calibrate_fit_joint_full(topos, n_machines, traces, n_traces, options, loss,
                                       prior_weight, only, NULL, NULL, error);
}

/**
 * cs_calibrate_fit_joint_full:
 * The fit itself; @progress (nullable) is told of every evaluation of the objective: the
 * datasheet's, the probes that find which parameters the rows see, the optimizer's, and those
 * of the uncertainties.
 */
GPtrArray *
cs_calibrate_fit_joint_full(const CsTopo *const *topos, int n_machines, CsTrace *const *traces,
                            const int *n_traces, const CsPredictOptions *options, CsCalibLoss loss,
                            double prior_weight, const char *const *only,
                            CsCalibProgressFunc progress, gpointer progress_data, GError **error)
{
    g_return_val_if_fail(isfinite(prior_weight) && prior_weight >= 0, NULL);
    g_return_val_if_fail(n_machines >= 1, NULL);

    g_autoptr(GPtrArray) cals = g_ptr_array_new_with_free_func((GDestroyNotify)cs_calibration_free);
    FitCtx ctx = { .n_groups = n_machines,
                   .loss = loss,
                   .prior_weight = prior_weight,
                   .jobs = options != NULL ? options->jobs : 1,
                   .progress = progress,
                   .progress_data = progress_data,
                   .step = { .phase = "datasheet", .max_iterations = CS_CALIB_MAX_ITERATIONS } };
    ctx.groups = g_new0(FitGroup, n_machines);
    int first = 0;
    for (int m = 0; m < n_machines; m++) {
        FitGroup *g = &ctx.groups[m];
        g->base = topos[m];
        g->rows = g_array_new(FALSE, FALSE, sizeof(FitRow));
        if (!collect_rows(topos[m], traces + first, n_traces[m], options, g->rows, error))
            return fit_failed(&ctx, NULL);
        first += n_traces[m];
        CsCalibration *cal = g_new0(CsCalibration, 1);
        cal->params = g_array_new(FALSE, FALSE, sizeof(CsCalibParam));
        cal->loss = loss;
        cal->prior_weight = prior_weight;
        g_ptr_array_add(cals, cal);
        candidate_params(topos[m], g->rows, cal->params);
        g->params = cal->params;
        g->offset = ctx.n_rows;
        ctx.n_rows += (int)g->rows->len;
        g->cache = cs_point_cache_new(TRUE);
    }

    /* A name in @only that selects nothing is a typo, not a request to fit nothing. */
    for (int k = 0; only != NULL && only[k] != NULL; k++) {
        const char *const one[] = { only[k], NULL };
        gboolean any = FALSE;
        for (int m = 0; m < n_machines && !any; m++)
            for (guint i = 0; i < ctx.groups[m].params->len && !any; i++)
                any = param_selected(&g_array_index(ctx.groups[m].params, CsCalibParam, i), one);
        if (!any) {
            g_autoptr(GString) names = g_string_new(NULL);
            g_autoptr(GHashTable) listed = g_hash_table_new(g_str_hash, g_str_equal);
            for (int m = 0; m < n_machines; m++)
                for (guint i = 0; i < ctx.groups[m].params->len; i++) {
                    const char *name = g_array_index(ctx.groups[m].params, CsCalibParam, i).name;
                    if (!g_hash_table_add(listed, (gpointer)name))
                        continue;
                    g_string_append_printf(names, "%s%s", names->len > 0 ? ", " : "", name);
                }
            g_set_error(error, CS_CALIBRATE_ERROR, CS_CALIBRATE_ERROR_PARAMS,
                        "\"%s\" names no parameter of these traces (%s)", only[k], names->str);
            return fit_failed(&ctx, NULL);
        }
    }

    /* Theta: one component per selected parameter, one for all machines' parameters of one
     * share key, its range the intersection of theirs. */
    int n_candidates = 0;
    for (int m = 0; m < n_machines; m++)
        n_candidates += (int)ctx.groups[m].params->len;
    ctx.tmin = g_new(double, MAX(n_candidates, 1));
    ctx.tmax = g_new(double, MAX(n_candidates, 1));
    g_autoptr(GHashTable) shared = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    for (int m = 0; m < n_machines; m++) {
        FitGroup *g = &ctx.groups[m];
        g->theta_of = g_new(int, MAX(g->params->len, 1));
        for (guint i = 0; i < g->params->len; i++) {
            CsCalibParam *p = &g_array_index(g->params, CsCalibParam, i);
            p->free = param_selected(p, only);
            p->excluded = !p->free;
            g->theta_of[i] = -1;
            if (!p->free)
                continue;
            char *key = share_key(p);
            gpointer j;
            const double lo = log(p->min / p->initial);
            const double hi = log(p->max / p->initial);
            if (g_hash_table_lookup_extended(shared, key, NULL, &j)) {
                g_free(key);
                g->theta_of[i] = GPOINTER_TO_INT(j);
                ctx.tmin[g->theta_of[i]] = MAX(ctx.tmin[g->theta_of[i]], lo);
                ctx.tmax[g->theta_of[i]] = MIN(ctx.tmax[g->theta_of[i]], hi);
                continue;
            }
            g_hash_table_insert(shared, key, GINT_TO_POINTER(ctx.n_free));
            g->theta_of[i] = ctx.n_free;
            ctx.tmin[ctx.n_free] = lo;
            ctx.tmax[ctx.n_free] = hi;
            ctx.n_free++;
        }
    }

    const int n = ctx.n_rows;
    gsl_vector *f0 = gsl_vector_alloc(n);
    gboolean ok = residuals_theta(&ctx, NULL, f0);
    ctx.step.phase = "sensitivities";
    if (ok) {
        for (int m = 0; m < n_machines; m++) {
            gsl_vector_const_view part
                = gsl_vector_const_subvector(f0, ctx.groups[m].offset, ctx.groups[m].rows->len);
            ((CsCalibration *)cals->pdata[m])->rms_before = rms(loss, &part.vector);
        }
        choose_free(&ctx, f0);
    }
    gsl_vector_free(f0);
    /* A prediction that failed while probing a parameter is the error, not "fixed". */
    if (!ok || ctx.error != NULL)
        return fit_failed(&ctx, error);
    const int p = ctx.n_free;
    if (p == 0 || n < p) {
        g_set_error(error, CS_CALIBRATE_ERROR, CS_CALIBRATE_ERROR_NO_DATA,
                    "%d measured rows cannot determine %d parameters%s", n, p,
                    p == 0 ? " (no selected parameter changes any prediction)" : "");
        return fit_failed(&ctx, NULL);
    }

    gsl_multifit_nlinear_parameters fit_params = gsl_multifit_nlinear_default_parameters();
    /* Simulated times are whole picoseconds: the finite-difference step must move them by
     * far more than one. A 1e-4 relative step moves a 1 us prediction by 100 ps. */
    fit_params.h_df = 1e-4;
    gsl_multifit_nlinear_fdf fdf = {
        .f = fit_f, .df = fit_df, .fvv = NULL, .n = (size_t)(n + p), .p = (size_t)p, .params = &ctx
    };
    ctx.h_df = fit_params.h_df;
    gsl_multifit_nlinear_workspace *w
        = gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &fit_params, n + p, p);
    gsl_vector *theta0 = gsl_vector_calloc(p);
    gsl_multifit_nlinear_init(theta0, &fdf, w);
    int info = 0;
    ctx.step.phase = "fit";
    int status = gsl_multifit_nlinear_driver(CS_CALIB_MAX_ITERATIONS, 1e-6, 1e-6, 1e-8,
                                             fit_iterated, &ctx, &info, w);
    gsl_vector_free(theta0);
    if (ctx.error != NULL) {
        gsl_multifit_nlinear_free(w);
        return fit_failed(&ctx, error);
    }
    /* GSL_EMAXITER still leaves the best point found; anything else is a failure. */
    if (status != GSL_SUCCESS && status != GSL_EMAXITER) {
        g_set_error(error, CS_CALIBRATE_ERROR, CS_CALIBRATE_ERROR_FIT,
                    "the fit did not converge: %s", gsl_strerror(status));
        gsl_multifit_nlinear_free(w);
        return fit_failed(&ctx, NULL);
    }

    /* The fit's position, each parameter clamped to its range as the residuals saw it (the
     * prior may leave theta a hair past a bound the rows push against). */
    gsl_vector *theta = gsl_vector_alloc(p);
    gsl_vector_memcpy(theta, gsl_multifit_nlinear_position(w));
    for (int j = 0; j < p; j++)
        gsl_vector_set(theta, j,
                       CLAMP(gsl_vector_get(theta, j), theta_min(&ctx, j), theta_max(&ctx, j)));
    /* The rows' residuals, without the prior's. */
    gsl_vector_const_view f_rows
        = gsl_vector_const_subvector(gsl_multifit_nlinear_residual(w), 0, n);
    const gsl_vector *f = &f_rows.vector;
    const int iterations = (int)gsl_multifit_nlinear_niter(w);
    for (int m = 0; m < n_machines; m++) {
        CsCalibration *cal = cals->pdata[m];
        gsl_vector_const_view part
            = gsl_vector_const_subvector(f, ctx.groups[m].offset, ctx.groups[m].rows->len);
        cal->rms_after = rms(loss, &part.vector);
        cal->iterations = iterations;
        cal->n_rows = (int)ctx.groups[m].rows->len;
    }

    gsl_matrix *covar = gsl_matrix_alloc(p, p);
    gsl_matrix *jac = gsl_matrix_alloc(n + p, p);
    ctx.step.phase = "uncertainties";
    if (!sigma_jacobian(&ctx, theta, f, jac)) {
        gsl_vector_free(theta);
        gsl_matrix_free(jac);
        gsl_matrix_free(covar);
        gsl_multifit_nlinear_free(w);
        return fit_failed(&ctx, error);
    }
    /* Rows' worth of information per parameter, and which way the rows pull it (the
     * gradient of their half sum of squares, sum_i f_i J_ij: negative when a larger value
     * would fit them better), before the Jacobian goes; and how many machines' rows see it. */
    g_autofree double *seen = g_new(double, p);
    g_autofree double *pull = g_new0(double, p);
    g_autofree int *machines = g_new0(int, p);
    for (int j = 0; j < p; j++) {
        seen[j] = rows_seen(jac, n, j);
        for (int i = 0; i < n; i++)
            pull[j] += gsl_vector_get(f, i) * gsl_matrix_get(jac, i, j);
        for (int m = 0; m < n_machines; m++) {
            const FitGroup *g = &ctx.groups[m];
            gboolean sees = FALSE;
            for (guint i = 0; i < g->params->len && !sees; i++)
                sees = g->theta_of[i] == j;
            machines[j] += sees;
        }
    }
    sandwich_covariance(jac, f, covar);
    gsl_matrix_free(jac);

    for (int m = 0; m < n_machines; m++) {
        FitGroup *g = &ctx.groups[m];
        CsCalibration *cal = cals->pdata[m];
        g_autofree double *values = g_new(double, MAX(g->params->len, 1));
        values_from_theta(&ctx, g, theta, values);
        for (guint i = 0; i < g->params->len; i++) {
            CsCalibParam *cp = &g_array_index(g->params, CsCalibParam, i);
            cp->fitted = values[i];
            const int j = g->theta_of[i];
            if (j < 0)
                continue;
            const double var = gsl_matrix_get(covar, j, j);
            const double sigma_log = var > 0 ? sqrt(var) : NAN;
            /* A zero variance from a rank-deficient Jacobian means "not determined", not
             * "exact"; beyond one e-fold in log space the linearised sigma means nothing
             * either: the data cannot tell this parameter from another. And a parameter one
             * row determines is fitted to that row: no spread of rows is left to say how far
             * it may be off. Nor does it where the 1-sigma interval reaches past the
             * parameter's range: the bound, not the rows, limits it there (a bootstrap's fits
             * pile up on the bound, and their spread is the truncated one), so the data do not
             * determine it within its range. */
            cp->rows_seen = seen[j];
            cp->shared = machines[j];
            const double tj = gsl_vector_get(theta, j);
            const gboolean within
                = tj - sigma_log >= theta_min(&ctx, j) && tj + sigma_log <= theta_max(&ctx, j);
            cp->sigma
                = sigma_log > 0 && sigma_log < 1.0 && within && seen[j] >= CS_CALIB_MIN_ROWS_SEEN
                      ? values[i] * sigma_log
                      : NAN;
            /* At a bound (within 0.1%) that the rows push against: the data want it beyond
             * its physical range. A parameter that merely starts on a bound (NCCL's Simple NET
             * hop latency is the least of its range) and that the rows pull inward, or not at
             * all, is not flagged. Its one-sided uncertainty is no 1-sigma. The bound is the
             * shared one (the intersection of the machines' ranges). */
            const double t = CLAMP(tj, theta_min(&ctx, j), theta_max(&ctx, j));
            cp->bound = t >= theta_max(&ctx, j) - BOUND_TOL && pull[j] < 0   ? 1
                        : t <= theta_min(&ctx, j) + BOUND_TOL && pull[j] > 0 ? -1
                                                                             : 0;
            cp->at_bound = cp->bound != 0;
            if (cp->at_bound)
                cp->sigma = NAN;
            cp->min = MAX(cp->min, cp->initial * exp(theta_min(&ctx, j)));
            cp->max = MIN(cp->max, cp->initial * exp(theta_max(&ctx, j)));
        }
        cal->topo = apply_params(g->base, g->params, values);
    }

    gsl_vector_free(theta);
    gsl_matrix_free(covar);
    gsl_multifit_nlinear_free(w);
    fit_ctx_clear(&ctx);
    return g_steal_pointer(&cals);
}

/**
 * cs_calibrate_fit:
 * One machine's fit: cs_calibrate_fit_joint() with @topo alone.
 */
CsCalibration *
cs_calibrate_fit(const CsTopo *topo, CsTrace *const *traces, int n_traces,
                 const CsPredictOptions *options, CsCalibLoss loss, double prior_weight,
                 const char *const *only, GError **error)
{
    const CsTopo *const topos[] = { topo };
    g_autoptr(GPtrArray) cals = cs_calibrate_fit_joint(topos, 1, traces, &n_traces, options, loss,
                                                       prior_weight, only, error);
    if (cals == NULL)
        return NULL;
    return g_ptr_array_steal_index(cals, 0);
}

/**
 * cs_calibrate_transfer:
 * Leave-one-machine-out's prediction: the held-out machine keeps its datasheet values except
 * where another machine's fit determined the same component.
 */
CsTopo *
cs_calibrate_transfer(const CsTopo *topo, CsTrace *const *traces, int n_traces,
                      const CsPredictOptions *options, const GPtrArray *fits, int *n_transferred,
                      GError **error)
{
    g_autoptr(GArray) rows = g_array_new(FALSE, FALSE, sizeof(FitRow));
    if (!collect_rows(topo, traces, n_traces, options, rows, error))
        return NULL;
    g_autoptr(GArray) params = g_array_new(FALSE, FALSE, sizeof(CsCalibParam));
    candidate_params(topo, rows, params);
    g_autofree double *values = g_new(double, MAX(params->len, 1));
    int moved = 0;
    for (guint i = 0; i < params->len; i++) {
        const CsCalibParam *p = &g_array_index(params, CsCalibParam, i);
        g_autofree char *key = share_key(p);
        values[i] = p->initial;
        gboolean found = FALSE;
        for (guint c = 0; c < fits->len && !found; c++) {
            const CsCalibration *cal = fits->pdata[c];
            for (guint k = 0; k < cal->params->len && !found; k++) {
                const CsCalibParam *q = &g_array_index(cal->params, CsCalibParam, k);
                if (!q->free)
                    continue;
                g_autofree char *other = share_key(q);
                if (strcmp(key, other) == 0) {
                    values[i] = q->fitted;
                    found = TRUE;
                }
            }
        }
        moved += found;
    }
    if (n_transferred != NULL)
        *n_transferred = moved;
    return apply_params(topo, params, values);
}
void
cs_calibration_free(CsCalibration *calibration)
{
    if (calibration == NULL)
        return;
    if (calibration->params != NULL)
        g_array_unref(calibration->params);
    if (calibration->topo != NULL)
        cs_topo_unref(calibration->topo);
    g_free(calibration);
}

/* ---- Output ---- */

/**
 * cs_calibration_params_to_json:
 * Every parameter beside its datasheet value: fitted value, uncertainty (where the data
 * determine it), whether it was free, held or at the fit's bound, and its unit.
 * Returns: (transfer full) a cJSON array.
 */
cJSON *
cs_calibration_params_to_json(const CsCalibration *calibration)
{
    cJSON *params = cJSON_CreateArray();
    for (guint i = 0; i < calibration->params->len; i++) {
        const CsCalibParam *p = &g_array_index(calibration->params, CsCalibParam, i);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", p->name);
        cJSON_AddNumberToObject(o, "datasheet", p->initial);
        cJSON_AddNumberToObject(o, "fitted", p->fitted);
        if (!isnan(p->sigma))
            cJSON_AddNumberToObject(o, "sigma", p->sigma);
        if (p->free)
            cJSON_AddNumberToObject(o, "rows_seen", round(p->rows_seen * 100) / 100);
        cJSON_AddStringToObject(o, "component", p->component);
        if (p->free)
            cJSON_AddNumberToObject(o, "shared_by_machines", p->shared);
        cJSON_AddBoolToObject(o, "free", p->free);
        cJSON_AddBoolToObject(o, "held", p->held);
        cJSON_AddBoolToObject(o, "excluded", p->excluded);
        cJSON_AddBoolToObject(o, "at_bound", p->at_bound);
        cJSON_AddNumberToObject(o, "min", p->min);
        cJSON_AddNumberToObject(o, "max", p->max);
        cJSON_AddStringToObject(o, "range_source", p->range_source);
        if (p->at_bound) {
            cJSON_AddStringToObject(o, "bound", p->bound > 0 ? "upper" : "lower");
            g_autofree char *note = cs_calib_param_bound_note(p);
            cJSON_AddStringToObject(o, "bound_note", note);
        }
        cJSON_AddStringToObject(o, "unit",
                                p->kind == CS_PARAM_LINK_BW || p->kind == CS_PARAM_REDUCE_BW
                                        || p->kind == CS_PARAM_COPY_BW
                                    ? "B/s"
                                    : "s");
        cJSON_AddItemToArray(params, o);
    }
    return params;
}

/**
 * cs_calib_param_bound_note:
 * "gpu.launch at its upper bound 14 us (...): the traces want more; ...".
 */
char *
cs_calib_param_bound_note(const CsCalibParam *p)
{
    if (!p->at_bound)
        return NULL;
    const gboolean bw = p->kind == CS_PARAM_LINK_BW || p->kind == CS_PARAM_REDUCE_BW
                        || p->kind == CS_PARAM_COPY_BW;
    const double v = p->bound > 0 ? p->max : p->min;
    g_autofree char *value = bw ? cs_units_format_bandwidth(v) : cs_units_format_time(v);
    /* More time wanted (a latency up, a bandwidth down) is a cost the model leaves out; less
     * is one it charges that the machine does not pay, or pays in parallel. */
    const gboolean slower = (p->bound > 0) != bw;
    return g_strdup_printf(
        "%s at its %s bound %s (%s): the traces want %s; %s", p->name,
        p->bound > 0 ? "upper" : "lower", value, p->range_source, p->bound > 0 ? "more" : "less",
        slower ? "something the model leaves out costs these rows time"
               : "the model charges these rows a cost the machine does not pay, or pays in "
                 "parallel");
}

/**
 * cs_calibration_to_json:
 * The fitted topology (explicit graph), its description prefixed with a plain statement that
 * its numbers are fitted, `calibrated_from` naming every trace, and `calibration` listing
 * every parameter beside its datasheet value.
 */
char *
cs_calibration_to_json(const CsCalibration *calibration, const CsTopo *datasheet,
                       CsTrace *const *traces, int n_traces)
{
    g_autofree char *text = cs_topo_to_json(calibration->topo);
    cJSON *root = cJSON_Parse(text);
    g_assert(root != NULL);

    g_autofree char *description = g_strdup_printf(
        "CALIBRATED by 'collsim calibrate' from %d trace(s) (see calibrated_from): the "
        "parameters listed under calibration are FITTED to measurements, not datasheet "
        "figures. Datasheet topology %s: %s",
        n_traces, cs_topo_name(datasheet), cs_topo_description(datasheet));
    cJSON_ReplaceItemInObject(root, "description", cJSON_CreateString(description));
    g_autofree char *name = g_strdup_printf("%s-calibrated", cs_topo_name(datasheet));
    cJSON_ReplaceItemInObject(root, "name", cJSON_CreateString(name));

    cJSON *from = cJSON_AddArrayToObject(root, "calibrated_from");
    for (int t = 0; t < n_traces; t++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "trace", cs_trace_origin(traces[t]));
        CsOp op;
        if (cs_trace_op(traces[t], &op))
            cJSON_AddStringToObject(o, "collective", cs_op_name(op));
        cJSON_AddNumberToObject(o, "ranks", cs_trace_n_ranks(traces[t]));
        cJSON_AddNumberToObject(o, "rows", (double)cs_trace_n_rows(traces[t]));
        cJSON_AddItemToArray(from, o);
    }
    cJSON *cal = cJSON_AddObjectToObject(root, "calibration");
    g_autofree char *loss = cs_calib_loss_describe(calibration->loss);
    g_autofree char *method = g_strdup_printf(
        "GSL multifit_nlinear (trust region, Levenberg-Marquardt) on the relative time error "
        "of every row, %s, with a Gaussian prior in log space toward the datasheet values "
        "(weight %g per e-fold), each parameter clamped to its physical range (min, max, "
        "range_source; bound where the rows push against it); 1-sigma uncertainties from the "
        "heteroskedasticity-consistent "
        "(HC3 sandwich) covariance, on a Jacobian of difference quotients over 1%% of each "
        "value taken on the smooth side of the simulation's jumps; none for a parameter fewer "
        "than 2 rows' worth of the data see (rows_seen)",
        loss, calibration->prior_weight);
    if (calibration->loss == CS_CALIB_LOSS_CAUCHY)
        cJSON_AddNumberToObject(cal, "cauchy_scale", CS_CALIB_CAUCHY_SCALE);
    cJSON_AddStringToObject(cal, "method", method);
    cJSON_AddStringToObject(cal, "loss", cs_calib_loss_name(calibration->loss));
    cJSON_AddNumberToObject(cal, "prior_weight", calibration->prior_weight);
    cJSON_AddNumberToObject(cal, "rows", calibration->n_rows);
    cJSON_AddNumberToObject(cal, "rms_relative_error_before", calibration->rms_before);
    cJSON_AddNumberToObject(cal, "rms_relative_error_after", calibration->rms_after);
    cJSON_AddItemToObject(cal, "parameters", cs_calibration_params_to_json(calibration));
    char *out = cs_json_print(root, TRUE);
    char *result = g_strdup(out);
    cJSON_free(out);
    cJSON_Delete(root);
    return result;
}
