// SPDX-License-Identifier: MIT
/* What the files of the prediction share (STYLE §2): the point cache's fields, which
 * point_cache.c makes and predict.c looks points and schedules up in. */
#pragma once

#include "predict/predict.h"

G_BEGIN_DECLS

/* One lock guards the tables and counters, so that threads predicting points of one
 * topology (--jobs) share the cache; simulations run outside it. Two threads that miss the
 * same point both simulate it and get the same answer: the engine is deterministic. */
struct _CsPointCache {
    GMutex lock;
    CsTopo *topo;          /* (nullable) the topology the points are for */
    CsTopo *structure;     /* (nullable) the first one bound: cached schedules are built on it */
    GHashTable *schedules; /* (nullable) schedule key -> CsSchedule */
    gsize schedule_steps;  /* steps of the schedules kept */
    GHashTable *points;    /* point key -> CsPrediction */
    GHashTable *periods;   /* period key -> the shortest period the machine repeats under */
    gint64 hits;
    gint64 misses;
};

G_END_DECLS
