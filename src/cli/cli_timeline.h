// SPDX-License-Identifier: MIT
/* Timelines of one simulated collective (explain --timeline, run --timeline): every step the
 * engine ran and every link's load, recorded through its observer, written in Chrome's Trace
 * Event Format. */
#pragma once

#include <glib.h>

#include "engine/engine.h"
#include "sched/schedule.h"
#include "topo/topo.h"

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

/**
 * CsTimelineLoad:
 * A piece of one link's use (CsObserver.link_load).
 */
typedef struct {
    int link;
    CsTime start;    /* ps */
    CsTime end;      /* ps */
    double rate_Bps; /* bytes/s: wire bytes */
} CsTimelineLoad;

/**
 * CsTimeline:
 * What one run recorded: its steps, in the order they finished, and its links' loads.
 */
typedef struct {
    GArray *steps; /* CsTimelineStep */
    GArray *loads; /* CsTimelineLoad */
} CsTimeline;

CsTimeline *cs_cli_timeline_new(void);
void cs_cli_timeline_free(CsTimeline *timeline);
CsObserver cs_cli_timeline_observer(CsTimeline *timeline);
gboolean cs_cli_timeline_write(const char *prog, const char *path, const CsTimeline *timeline,
                               const CsTopo *topo, CsOp op, int nranks, int n_channels,
                               gboolean split, GError **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(CsTimeline, cs_cli_timeline_free)

G_END_DECLS
