// SPDX-License-Identifier: MIT
/* PyTorch profiler (Kineto) traces in Chrome's trace-event JSON: the reader of the collectives
 * that PyTorch's record_param_comms annotates, summed into a CsNcclLog as NCCL's own log
 * lines would be, from which `collsim workload import` writes a workload (docs/workloads.md). */
#pragma once

#include <glib.h>

#include "base/nccl_log.h"

G_BEGIN_DECLS

#define CS_KINETO_ERROR (cs_kineto_error_quark())
GQuark cs_kineto_error_quark(void);

typedef enum {
    CS_KINETO_ERROR_IO,        /* the file cannot be read, or is larger than the cap */
    CS_KINETO_ERROR_MALFORMED, /* not JSON, or an event that cannot be read: PATH:LINE:COL */
} CsKinetoError;

/* The largest trace read: the file is mapped, not copied, and its events parsed one at a
 * time, so memory stays small; past this it is refused (profile fewer steps). */
#define CS_KINETO_MAX_BYTES ((gsize)2 << 30)
/* The largest single event: Kineto's are a few hundred bytes. */
#define CS_KINETO_MAX_EVENT_BYTES ((gsize)1 << 20)

/* What a trace said beside its collectives. */
typedef struct {
    char *rank; /* the rank label its collectives were added under: the rank ("0"), or the path */
    int world_size;         /* distributedInfo.world_size, 0 when absent */
    int profiler_steps;     /* distinct "ProfilerStep#N" annotations */
    gboolean from_kernels;  /* collectives counted on GPU kernels (else on CPU ops) */
    gint64 events;          /* traceEvents read */
    gint64 collectives;     /* collectives added */
    gint64 compute_kernels; /* GPU kernels that are not NCCL's */
    double compute_busy_us; /* time at least one of them ran (union of their spans), us */
} CsKinetoInfo;

void cs_kineto_info_clear(CsKinetoInfo *info);

/**
 * cs_kineto_looks_like_trace:
 * Whether @path starts (after blanks) with "{": a JSON object, which an NCCL log never is.
 * "-" (stdin) and unreadable files are not traces (the log reader reports them). Gzip data
 * counts as a trace, so that cs_kineto_add_file() refuses it with a message.
 */
gboolean cs_kineto_looks_like_trace(const char *path);

/**
 * cs_kineto_add_file:
 * Reads the trace at @path (a regular file of at most CS_KINETO_MAX_BYTES, mapped) and adds the
 * collectives of its one rank to @log: the GPU kernels whose args carry "Collective name"
 * (newer Kineto versions), or where no kernel does, the CPU ops "record_param_comms". Fills @info.
 * Errors are CS_KINETO_ERROR, "PATH:LINE:COL: what" (IO: "PATH: why"), or CS_NCCL_LOG_ERROR from
 * @log's limits.
 */
gboolean cs_kineto_add_file(CsNcclLog *log, const char *path, CsKinetoInfo *info, GError **error);

/**
 * cs_kineto_add_data:
 * As cs_kineto_add_file(), on the @len bytes at @buf (need not end in a NUL), named @origin
 * in messages.
 */
gboolean cs_kineto_add_data(CsNcclLog *log, const char *origin, const char *buf, gsize len,
                            CsKinetoInfo *info, GError **error);

G_END_DECLS
