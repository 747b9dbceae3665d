// SPDX-License-Identifier: MIT
/* The CUDA executor's C interface: a flat, ordered list of device operations ("xops") on
 * streams, tied together by events. Plain C, no GLib (STYLE §2): cuda_plan.c builds the list
 * from a Schedule, cuda_exec.cu runs it. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Memory arenas of one rank. SLOTS receive messages (NCCL's connection buffers); OUTBOX and
 * HOST_STAGE carry a message through pinned host memory where peer access is missing. */
typedef enum {
    CS_CUDA_MEM_INPUT,      /* the collective's send buffer */
    CS_CUDA_MEM_OUTPUT,     /* the collective's receive buffer */
    CS_CUDA_MEM_SCRATCH,    /* algorithm scratch */
    CS_CUDA_MEM_SLOTS,      /* incoming message slots, per connection */
    CS_CUDA_MEM_OUTBOX,     /* device: a fused reduce-and-send result before staging */
    CS_CUDA_MEM_HOST_STAGE, /* pinned host: mirror of SLOTS for staged messages */
    CS_CUDA_N_MEMS
} CsCudaMem;

/* A byte address: arena @mem of @rank at @offset. @mem = -1: no address. */
typedef struct {
    int64_t offset;
    int32_t rank;
    int32_t mem;
} CsCudaRef;

typedef enum {
    CS_CUDA_XOP_NOP,    /* only waits and records */
    CS_CUDA_XOP_COPY,   /* dst = a, and dst2 = a when dst2 is set */
    CS_CUDA_XOP_REDUCE, /* dst = a (+) b, and dst2 = the same when set */
    CS_CUDA_XOP_DIVIDE, /* dst = dst / divisor: the end of an average */
} CsCudaXopAction;

/**
 * CsCudaXop:
 * One operation, issued in list order on its stream: first wait for @n_waits events
 * (waits[@wait_first ...]), then act on @bytes bytes, then record event @record (-1: none).
 * Every event is recorded by exactly one xop, earlier in the list than any xop waiting on it,
 * so issuing the list in order never waits on an event not yet recorded.
 * Size budget: 96 bytes.
 */
typedef struct {
    CsCudaRef dst;
    CsCudaRef dst2; /* second output, mem -1 if none */
    CsCudaRef a;    /* source, or first operand */
    CsCudaRef b;    /* second operand of REDUCE */
    int64_t bytes;
    int32_t stream;     /* index < n_streams */
    int32_t action;     /* CsCudaXopAction */
    int32_t wait_first; /* into CsCudaPlanView.waits */
    int32_t n_waits;
    int32_t record; /* event index, -1 none */
    int32_t reserved;
} CsCudaXop;

/**
 * CsCudaPlanView:
 * What the executor runs: borrowed arrays, owned by the plan.
 */
typedef struct {
    const CsCudaXop *xops;
    int64_t n_xops;
    const int32_t *waits;
    int32_t n_events;
    int32_t n_streams;
    const int32_t *stream_rank; /* [n_streams]: the rank whose device runs the stream */
    int32_t n_ranks;
    const int64_t *mem_bytes; /* [n_ranks * CS_CUDA_N_MEMS]: arena sizes */
    int32_t dtype;            /* CsDtype */
    int32_t redop;            /* CsRedop (AVG reduces as SUM) */
    int32_t divisor;          /* for DIVIDE */
} CsCudaPlanView;

/* Error text buffer size for every call below. */
#define CS_CUDA_ERROR_LEN 512

typedef struct CsCudaExec CsCudaExec;

/* Number of usable devices, or -1 with @err set when the runtime or driver is missing. */
int cs_cuda_exec_device_count(char *err);

/* Fills @name (@name_len bytes) with the device's model, and the driver and runtime CUDA
 * versions (1000 * major + 10 * minor). Returns 0, or -1 with @err set. */
int cs_cuda_exec_device_info(int device, char *name, size_t name_len, int *driver_version,
                             int *runtime_version, char *err);

/* A context for @n_ranks ranks, rank r on device @rank_device[r]: one stream per stream index,
 * peer access enabled between every pair of distinct devices that allow it. Returns NULL with
 * @err set on failure. */
CsCudaExec *cs_cuda_exec_new(const int *rank_device, int n_ranks, char *err);
void cs_cuda_exec_free(CsCudaExec *exec);

/* 1 if rank @src's device can write rank @dst's device memory directly (same device or peer
 * access enabled), else 0. */
int cs_cuda_exec_direct(const CsCudaExec *exec, int src, int dst);

/* Makes every arena at least as large as @plan needs and every stream and event exist.
 * Returns 0, or -1 with @err set (out of memory names the rank, arena and size). */
int cs_cuda_exec_prepare(CsCudaExec *exec, const CsCudaPlanView *plan, char *err);

/* Copies between host memory and an arena (synchronous). */
int cs_cuda_exec_upload(CsCudaExec *exec, int rank, int mem, const void *host, int64_t bytes,
                        char *err);
int cs_cuda_exec_download(CsCudaExec *exec, int rank, int mem, void *host, int64_t bytes,
                          char *err);
/* The device address of rank @rank's arena @mem (as large as the last prepared plan needs),
 * and the device it is on in @device. */
void *cs_cuda_exec_arena(const CsCudaExec *exec, int rank, int mem, int *device);

/* Sets the first @bytes of every rank's arena @mem to @value (synchronous: one
 * synchronization per device). */
int cs_cuda_exec_fill_all(CsCudaExec *exec, int mem, int value, int64_t bytes, char *err);

/* Runs @plan @iters times back to back, every iteration fenced by a fork and a join across all
 * streams, and returns the elapsed GPU time of all iterations in @elapsed_ms (CUDA events on
 * the first rank's device). The first run after cs_cuda_exec_prepare captures the iteration
 * into a CUDA graph and uploads it; this run and the next ones of the same @plan launch it
 * @iters times. A capture that fails is an error. Returns 0, or -1 with @err set. */
int cs_cuda_exec_run(CsCudaExec *exec, const CsCudaPlanView *plan, int iters, double *elapsed_ms,
                     char *err);

/* Host milliseconds of the last graph capture: issuing into the capture, instantiation,
 * upload (0 before the first). */
void cs_cuda_exec_capture_ms(const CsCudaExec *exec, double ms[3]);

/* Graphs on (1, the default) or off (0: every iteration issues the list's copies, kernels and
 * event waits from the host, which the timing then includes). */
void cs_cuda_exec_set_graphs(CsCudaExec *exec, int on);

#ifdef __cplusplus
}
#endif
