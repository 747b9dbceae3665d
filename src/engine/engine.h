// SPDX-License-Identifier: MIT
/* The discrete-event engine: replays a schedule on a topology, chunk by chunk, under a network
 * model from src/models/, and returns what happened. It never formats output. */
#pragma once

#include <glib.h>

#include "sched/schedule.h"
#include "topo/topo.h"
#include "base/units.h"

G_BEGIN_DECLS

#define CS_ENGINE_ERROR (cs_engine_error_quark())
GQuark cs_engine_error_quark(void);

typedef enum {
    CS_ENGINE_ERROR_MISMATCH,   /* the schedule does not fit the topology (ranks, protocol) */
    CS_ENGINE_ERROR_DEADLOCK,   /* unreachable for a checked schedule */
    CS_ENGINE_ERROR_MODEL,      /* unknown network model */
    CS_ENGINE_ERROR_CLOCK,      /* the time does not fit the picosecond clock (about 53 days) */
    CS_ENGINE_ERROR_ASYMMETRIC, /* a schedule of one period (cs_schedule_set_period()) on a
                                 * machine that does not repeat likewise: replay it whole */
} CsEngineError;

/**
 * CsObserver:
 * Optional callbacks for timelines and statistics; NULL members cost nothing.
 */
typedef struct {
    gpointer user_data;
    /* A step of @rank started at @start and finished at @end. */
    void (*step_done)(gpointer user_data, int rank, gsize step_index, const CsStep *step,
                      CsTime start, CsTime end);
    /* A transfer of @bytes crossed @link between @start and @end. */
    void (*link_busy)(gpointer user_data, int link, gint64 bytes, CsTime start, CsTime end);
    /* From @start until @end, @link carried @rate_Bps more wire bytes per second (payload
     * over the protocol's data fraction), as the network model shares it out: a lane's
     * reservation (reservation), a flow's rate between two of its changes (maxmin). The
     * pieces of one link never add up to more than its bw_Bps at any time. */
    void (*link_load)(gpointer user_data, int link, CsTime start, CsTime end, double rate_Bps);
} CsObserver;

/**
 * CsEngineOptions:
 * How to run. Zero-initialised means: reservation model, one GPU per launching thread.
 */
typedef struct {
    const char *net_model;      /* "reservation" (default) or "maxmin" */
    int gpus_per_thread;        /* GPUs one host thread launches serially (nccl-tests -g) */
    gboolean no_launch;         /* leave out the per-collective launch latency */
    gboolean textbook;          /* Hockney's alpha-beta-gamma machine: no launch, no step
                                 * overhead, no protocol (full bandwidth, no hop latency, no
                                 * slot-return latency), a send occupies its sender until it
                                 * has arrived, reductions after arrival (not overlapped),
                                 * local copies free */
    const CsObserver *observer; /* (nullable) */
} CsEngineOptions;

/**
 * CsResult:
 * One simulated collective. The time split follows the critical path: every picosecond of
 * @time is attributed to exactly one of alpha (link latency and protocol hops), beta
 * (serialization at link bandwidth, including waiting under contention), gamma (reduction
 * and copy at GPU speed) or overhead (launch and per-step costs).
 */
typedef struct {
    CsTime time;         /* ps: from the host's first launch until the last rank finished */
    CsTime alpha;        /* ps: on the critical path */
    CsTime beta;         /* ps */
    CsTime gamma;        /* ps */
    CsTime overhead;     /* ps */
    gint64 n_events;     /* events processed */
    gint64 n_transfers;  /* messages delivered */
    gint64 bytes_moved;  /* bytes: all messages */
    CsTime *rank_finish; /* ps: per rank, cs_schedule_n_ranks() entries (owned) */
    int n_ranks;
} CsResult;

/* Simulates @sched on @topo. The first cs_schedule_n_ranks() ranks of @topo are used.
 * Returns: (transfer full) (nullable). */
CsResult *cs_engine_run(const CsSchedule *sched, const CsTopo *topo, const CsEngineOptions *options,
                        GError **error);
void cs_result_free(CsResult *result);

/* nccl-tests' figures from a result: algbw = size / time, busbw = algbw * factor (GB/s). */
double cs_result_time_us(const CsResult *result);
double cs_result_algbw_GBps(const CsResult *result, const CsOpSize *size);
double cs_result_busbw_GBps(const CsResult *result, const CsOpSize *size, CsOp op, int nranks);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(CsResult, cs_result_free)

G_END_DECLS
