// SPDX-License-Identifier: MIT
/* Lowers a Schedule to the CUDA executor's flat list of stream operations and events
 * (cuda_exec.h), and runs such a list on host memory, in any order its events allow, as the
 * test oracle for the dependencies. Needs no GPU and is built everywhere. */
#pragma once

#include <glib.h>

#include "backends/cuda/cuda_exec.h"
#include "sched/schedule.h"

G_BEGIN_DECLS

/* NCCL_STEPS: message slots per connection before a sender waits for the receiver. */
#define CS_CUDA_PLAN_SLOTS CS_NCCL_STEPS

typedef struct _CsCudaPlan CsCudaPlan;

/**
 * cs_cuda_plan_new:
 * @sched: a sealed schedule
 * @direct: (nullable) @nranks x @nranks bytes, row-major: direct[a * P + b] non-zero when rank
 *   a may write rank b's device memory (same device, or peer access); NULL: every pair may.
 *   Other pairs send through pinned host memory.
 *
 * Streams: rank r's channel c runs on stream r * C + c; staged copies into rank q land on
 * stream (P + q) * C + c. Each connection (sender, receiver, channel) gets
 * CS_CUDA_PLAN_SLOTS slots in the receiver's SLOTS arena, reused in turn; a schedule that
 * would deadlock on that bound gets one slot per message instead.
 * An average (AVG) ends with a division of each rank's reduced output by P.
 *
 * Returns: (transfer full): the plan, or NULL with CS_SCHEDULE_ERROR_INVALID (a region out of
 * bounds, unmatched messages) or CS_SCHEDULE_ERROR_DEADLOCK.
 */
CsCudaPlan *cs_cuda_plan_new(const CsSchedule *sched, const guint8 *direct, GError **error);
void cs_cuda_plan_free(CsCudaPlan *plan);

/* The arrays for the executor (transfer none: valid while @plan lives). */
const CsCudaPlanView *cs_cuda_plan_view(const CsCudaPlan *plan);
/* Slots per connection: CS_CUDA_PLAN_SLOTS, or 0 when every message got its own slot. */
int cs_cuda_plan_slots(const CsCudaPlan *plan);

/**
 * cs_cuda_plan_run_host:
 * Executes @plan once on host arenas @mem (rank r's arena m at mem[r * CS_CUDA_N_MEMS + m],
 * each at least the plan's mem_bytes). Seed 0 runs the list in order; any other seed picks a
 * random order among the xops whose stream predecessor and awaited events are done, as the
 * GPU may: results that differ between orders reveal a missing dependency.
 */
void cs_cuda_plan_run_host(const CsCudaPlan *plan, guint8 *const *mem, guint32 seed);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(CsCudaPlan, cs_cuda_plan_free)

G_END_DECLS
