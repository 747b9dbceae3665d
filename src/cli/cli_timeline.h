// SPDX-License-Identifier: MIT
/* Timelines of one simulated collective (explain --timeline, run --timeline): every step the
 * engine ran, recorded through its observer, written in Chrome's Trace Event Format. */
#pragma once

#include <glib.h>

#include "engine/engine.h"
#include "sched/schedule.h"

G_BEGIN_DECLS

/**
 * CsTimelineStep:
 * One step a rank finished.
 */
typedef struct {
    int rank;
    guint index; /* in the rank's program */
    CsStep step;
    CsTime start; /* ps */
    CsTime end;   /* ps */
} CsTimelineStep;

CsObserver cs_cli_timeline_observer(GArray *steps);
gboolean cs_cli_timeline_write(const char *prog, const char *path, const GArray *events, CsOp op,
                               int nranks, int n_channels, gboolean split, GError **error);

G_END_DECLS
