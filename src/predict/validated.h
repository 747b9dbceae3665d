// SPDX-License-Identifier: MIT
/* The model's validated error per machine class and size regime: the figures `collsim
 * validate` measured on the shipped traces with their datasheet topologies, written by
 * scripts/accuracy.py --margins into validated-errors.inc and compiled in. `collsim select`
 * takes its default margin from them (docs/tuning.md). */
#pragma once

#include <glib.h>

#include "topo/topo.h"

G_BEGIN_DECLS

/* The size regimes of `collsim validate`'s summary (analysis/validate.h, which uses these). */
typedef enum {
    CS_REGIME_LATENCY,   /* size < 64 KiB */
    CS_REGIME_KNEE,      /* 64 KiB <= size < 64 MiB */
    CS_REGIME_BANDWIDTH, /* size >= 64 MiB */
    CS_N_REGIMES
} CsRegime;

#define CS_REGIME_LATENCY_MAX_BYTES (G_GINT64_CONSTANT(64) * 1024)     /* bytes: < latency */
#define CS_REGIME_KNEE_MAX_BYTES (G_GINT64_CONSTANT(64) * 1024 * 1024) /* bytes: < knee */

/* The smallest default margin, percent: no regime is claimed closer than this. */
#define CS_VALIDATED_MIN_MARGIN_PCT 5.0

CsRegime cs_regime_of_size(gint64 size_bytes);
/* "latency", "knee", "bandwidth" (transfer none) */
const char *cs_regime_name(CsRegime regime);

/* The machine class of the first @nranks ranks of @topo (0: all), as the validation table
 * groups traces: "cpu", "single-node-nvswitch", "single-node-xgmi", "single-node-pcie",
 * "nvlink-rack" (several nodes, one NVLink domain), "nvlink-racks" (several NVLink domains
 * of several nodes), "multi-node-ib", "multi-node-roce", "multi-node-efa", "multi-node-socket"
 * (TCP sockets, GCP TCPX/TCPXO) or "multi-node-other". (transfer none) */
const char *cs_validated_class(const CsTopo *topo, int nranks);

/**
 * CsValidatedError:
 * One class's row: the mean over its traces of each trace's geometric-mean |busbw error| in
 * a regime, percent; negative where no trace of the class has a row in that regime.
 */
typedef struct {
    const char *klass;              /* cs_validated_class()'s name */
    int n_traces;                   /* traces of this class validated */
    double error_pct[CS_N_REGIMES]; /* percent; < 0: not validated */
} CsValidatedError;

/* @klass's row, or NULL when no trace of that class was validated. (transfer none) */
const CsValidatedError *cs_validated_error(const char *klass);
/* Where the figures come from: "scripts/accuracy.py --margins at commit ..." (transfer
 * none). */
const char *cs_validated_source(void);

/* The default margin of `collsim select` for @klass in @regime: the larger of
 * CS_VALIDATED_MIN_MARGIN_PCT and the validated error there; the minimum where that regime
 * is not validated, with *@validated FALSE (nullable). Percent. */
double cs_validated_margin_pct(const char *klass, CsRegime regime, gboolean *validated);

G_END_DECLS
