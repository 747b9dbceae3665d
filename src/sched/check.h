// SPDX-License-Identifier: MIT
/* The semantic checker: executes a schedule symbolically, each element carrying the set of
 * ranks' contributions it holds, and proves it computes the collective's definition. */
#pragma once

#include <glib.h>

#include "sched/schedule.h"

G_BEGIN_DECLS

/**
 * CsCheckReport:
 * What the symbolic run found besides correctness.
 */
typedef struct {
    int n_rounds;      /* longest chain of dependent communication steps */
    gint64 n_messages; /* messages sent, all ranks */
    gint64 bytes_sent; /* bytes: sent, all ranks */
} CsCheckReport;

/* Runs @sched symbolically. TRUE if every output element of every rank holds exactly what the
 * collective's definition says, each contribution once. FALSE with CS_SCHEDULE_ERROR set
 * otherwise, naming the first rank, buffer and offset that is wrong and what it holds.
 * @report may be NULL. */
gboolean cs_check_schedule(const CsSchedule *sched, CsCheckReport *report, GError **error);

/**
 * cs_check_rounds:
 * The ASAP round of every step (rank-major, in program order, as cs_schedule_steps lays them
 * out). A step that sends travels in 1 + the latest round among the steps it depends on (its
 * channel predecessor and, if it also receives, the matching send); a pure receive completes
 * in max(its predecessor's round, the round its message travelled in); local steps keep
 * their predecessor's round. So a chain of P ranks takes P - 1 rounds, a ring all-reduce
 * 2(P - 1) per loop. Waits for a free slot are not counted.
 * Returns: (transfer full): an array of cs_schedule_n_steps() rounds, or NULL on deadlock.
 */
int *cs_check_rounds(const CsSchedule *sched, GError **error);

G_END_DECLS
