// SPDX-License-Identifier: MIT
/* The CUDA executor: runs the flat list of stream operations that cuda_plan.c lowers a
 * Schedule to. One stream per (rank, channel), copies for sends (peer-to-peer where enabled,
 * through pinned host memory otherwise), an element-wise kernel per reduction, CUDA events for
 * every dependency; one iteration captured into a CUDA graph and launched per iteration, and
 * CUDA events again for the timing. No GLib here (STYLE §2). */
#include "backends/cuda/cuda_exec.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backends/cuda/cuda_util.h"
#include "backends/reference_element.h"

/* ---- Kernels ---- */

/* Integers operate through their unsigned twin so that overflow wraps, as reference.c does. */
template <typename T, typename U> struct IntOps {
    static __device__ T sum(T x, T y) { return (T)(U)((U)x + (U)y); }
    static __device__ T prod(T x, T y) { return (T)(U)((U)x * (U)y); }
    static __device__ T max(T x, T y) { return x > y ? x : y; }
    static __device__ T min(T x, T y) { return x < y ? x : y; }
};

template <typename T> struct Ops;
template <> struct Ops<int8_t> : IntOps<int8_t, uint8_t> {
    static __device__ int8_t div(int8_t x, int d) { return (int8_t)((long long)x / d); }
};
template <> struct Ops<uint8_t> : IntOps<uint8_t, uint8_t> {
    static __device__ uint8_t div(uint8_t x, int d)
    {
        return (uint8_t)((unsigned long long)x / (unsigned long long)d);
    }
};
template <> struct Ops<int32_t> : IntOps<int32_t, uint32_t> {
    static __device__ int32_t div(int32_t x, int d) { return (int32_t)((long long)x / d); }
};
template <> struct Ops<uint32_t> : IntOps<uint32_t, uint32_t> {
    static __device__ uint32_t div(uint32_t x, int d)
    {
        return (uint32_t)((unsigned long long)x / (unsigned long long)d);
    }
};
template <> struct Ops<int64_t> : IntOps<int64_t, uint64_t> {
    static __device__ int64_t div(int64_t x, int d) { return x / (int64_t)d; }
};
template <> struct Ops<uint64_t> : IntOps<uint64_t, uint64_t> {
    static __device__ uint64_t div(uint64_t x, int d) { return x / (uint64_t)d; }
};
template <> struct Ops<float> {
    static __device__ float sum(float x, float y) { return __fadd_rn(x, y); }
    static __device__ float prod(float x, float y) { return __fmul_rn(x, y); }
    static __device__ float max(float x, float y) { return x > y ? x : y; }
    static __device__ float min(float x, float y) { return x < y ? x : y; }
    static __device__ float div(float x, int d) { return __fdiv_rn(x, (float)d); }
};
template <> struct Ops<double> {
    static __device__ double sum(double x, double y) { return __dadd_rn(x, y); }
    static __device__ double prod(double x, double y) { return __dmul_rn(x, y); }
    static __device__ double max(double x, double y) { return x > y ? x : y; }
    static __device__ double min(double x, double y) { return x < y ? x : y; }
    static __device__ double div(double x, int d) { return __ddiv_rn(x, (double)d); }
};
/* 16-bit floats: widen to float, operate, round to nearest even, as reference.c does. */
template <> struct Ops<__half> {
    static __device__ float f(__half x) { return __half2float(x); }
    static __device__ __half h(float x) { return __float2half_rn(x); }
    static __device__ __half sum(__half x, __half y) { return h(__fadd_rn(f(x), f(y))); }
    static __device__ __half prod(__half x, __half y) { return h(__fmul_rn(f(x), f(y))); }
    static __device__ __half max(__half x, __half y) { return f(x) > f(y) ? x : y; }
    static __device__ __half min(__half x, __half y) { return f(x) < f(y) ? x : y; }
    static __device__ __half div(__half x, int d) { return h(__fdiv_rn(f(x), (float)d)); }
};
template <> struct Ops<__nv_bfloat16> {
    static __device__ float f(__nv_bfloat16 x) { return __bfloat162float(x); }
    static __device__ __nv_bfloat16 h(float x) { return __float2bfloat16_rn(x); }
    static __device__ __nv_bfloat16 sum(__nv_bfloat16 x, __nv_bfloat16 y)
    {
        return h(__fadd_rn(f(x), f(y)));
    }
    static __device__ __nv_bfloat16 prod(__nv_bfloat16 x, __nv_bfloat16 y)
    {
        return h(__fmul_rn(f(x), f(y)));
    }
    static __device__ __nv_bfloat16 max(__nv_bfloat16 x, __nv_bfloat16 y)
    {
        return f(x) > f(y) ? x : y;
    }
    static __device__ __nv_bfloat16 min(__nv_bfloat16 x, __nv_bfloat16 y)
    {
        return f(x) < f(y) ? x : y;
    }
    static __device__ __nv_bfloat16 div(__nv_bfloat16 x, int d)
    {
        return h(__fdiv_rn(f(x), (float)d));
    }
};

template <typename T, int OP>
__device__ T
apply(T x, T y)
{
    if (OP == CS_REF_PROD)
        return Ops<T>::prod(x, y);
    if (OP == CS_REF_MAX)
        return Ops<T>::max(x, y);
    if (OP == CS_REF_MIN)
        return Ops<T>::min(x, y);
    return Ops<T>::sum(x, y);
}

template <typename T, int OP>
__global__ void
reduce_kernel(T *dst, T *dst2, const T *a, const T *b, int64_t n)
{
    int64_t stride = (int64_t)blockDim.x * gridDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        T v = apply<T, OP>(a[i], b[i]);
        dst[i] = v;
        if (dst2 != NULL)
            dst2[i] = v;
    }
}

template <typename T>
__global__ void
divide_kernel(T *x, int64_t n, int divisor)
{
    int64_t stride = (int64_t)blockDim.x * gridDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        x[i] = Ops<T>::div(x[i], divisor);
}

template <typename T>
static void
launch_reduce_typed(int redop, void *dst, void *dst2, const void *a, const void *b, int64_t n,
                    cudaStream_t s)
{
    T *d = (T *)dst;
    T *d2 = (T *)dst2;
    const T *x = (const T *)a;
    const T *y = (const T *)b;
    unsigned g = cs_cuda_blocks_for(n);
    switch (redop) {
    case CS_REF_PROD:
        reduce_kernel<T, CS_REF_PROD><<<g, CS_CUDA_THREADS, 0, s>>>(d, d2, x, y, n);
        break;
    case CS_REF_MAX:
        reduce_kernel<T, CS_REF_MAX><<<g, CS_CUDA_THREADS, 0, s>>>(d, d2, x, y, n);
        break;
    case CS_REF_MIN:
        reduce_kernel<T, CS_REF_MIN><<<g, CS_CUDA_THREADS, 0, s>>>(d, d2, x, y, n);
        break;
    default: /* SUM, and AVG whose division comes last */
        reduce_kernel<T, CS_REF_SUM><<<g, CS_CUDA_THREADS, 0, s>>>(d, d2, x, y, n);
        break;
    }
}

static void
launch_reduce(int dtype, int redop, void *dst, void *dst2, const void *a, const void *b, int64_t n,
              cudaStream_t s)
{
    switch (dtype) {
    case CS_REF_INT8:
        launch_reduce_typed<int8_t>(redop, dst, dst2, a, b, n, s);
        break;
    case CS_REF_UINT8:
        launch_reduce_typed<uint8_t>(redop, dst, dst2, a, b, n, s);
        break;
    case CS_REF_INT32:
        launch_reduce_typed<int32_t>(redop, dst, dst2, a, b, n, s);
        break;
    case CS_REF_UINT32:
        launch_reduce_typed<uint32_t>(redop, dst, dst2, a, b, n, s);
        break;
    case CS_REF_INT64:
        launch_reduce_typed<int64_t>(redop, dst, dst2, a, b, n, s);
        break;
    case CS_REF_UINT64:
        launch_reduce_typed<uint64_t>(redop, dst, dst2, a, b, n, s);
        break;
    case CS_REF_HALF:
        launch_reduce_typed<__half>(redop, dst, dst2, a, b, n, s);
        break;
    case CS_REF_FLOAT:
        launch_reduce_typed<float>(redop, dst, dst2, a, b, n, s);
        break;
    case CS_REF_DOUBLE:
        launch_reduce_typed<double>(redop, dst, dst2, a, b, n, s);
        break;
    default:
        launch_reduce_typed<__nv_bfloat16>(redop, dst, dst2, a, b, n, s);
        break;
    }
}

static void
launch_divide(int dtype, void *x, int64_t n, int divisor, cudaStream_t s)
{
    unsigned g = cs_cuda_blocks_for(n);
    switch (dtype) {
    case CS_REF_INT8:
        divide_kernel<int8_t><<<g, CS_CUDA_THREADS, 0, s>>>((int8_t *)x, n, divisor);
        break;
    case CS_REF_UINT8:
        divide_kernel<uint8_t><<<g, CS_CUDA_THREADS, 0, s>>>((uint8_t *)x, n, divisor);
        break;
    case CS_REF_INT32:
        divide_kernel<int32_t><<<g, CS_CUDA_THREADS, 0, s>>>((int32_t *)x, n, divisor);
        break;
    case CS_REF_UINT32:
        divide_kernel<uint32_t><<<g, CS_CUDA_THREADS, 0, s>>>((uint32_t *)x, n, divisor);
        break;
    case CS_REF_INT64:
        divide_kernel<int64_t><<<g, CS_CUDA_THREADS, 0, s>>>((int64_t *)x, n, divisor);
        break;
    case CS_REF_UINT64:
        divide_kernel<uint64_t><<<g, CS_CUDA_THREADS, 0, s>>>((uint64_t *)x, n, divisor);
        break;
    case CS_REF_HALF:
        divide_kernel<__half><<<g, CS_CUDA_THREADS, 0, s>>>((__half *)x, n, divisor);
        break;
    case CS_REF_FLOAT:
        divide_kernel<float><<<g, CS_CUDA_THREADS, 0, s>>>((float *)x, n, divisor);
        break;
    case CS_REF_DOUBLE:
        divide_kernel<double><<<g, CS_CUDA_THREADS, 0, s>>>((double *)x, n, divisor);
        break;
    default:
        divide_kernel<__nv_bfloat16>
            <<<g, CS_CUDA_THREADS, 0, s>>>((__nv_bfloat16 *)x, n, divisor);
        break;
    }
}

/* ---- Context ---- */

struct CsCudaExec {
    int n_ranks;
    int *rank_device;
    unsigned char *direct; /* [n_ranks * n_ranks] */
    void **mem;            /* [n_ranks * CS_CUDA_N_MEMS] */
    int64_t *cap;          /* bytes allocated per arena */
    int n_streams;
    cudaStream_t *streams;
    cudaEvent_t *joins; /* per stream, end of an iteration */
    int n_events;
    cudaEvent_t *events;
    int *event_device;
    int main_device;
    cudaStream_t main;
    cudaEvent_t fork;
    cudaEvent_t t0;
    cudaEvent_t t1;
    int use_graphs;
    cudaGraphExec_t graph;            /* the captured iteration of graph_plan, or NULL */
    double capture_ms[3];             /* the last capture: issuing, instantiation, upload */
    const CsCudaPlanView *graph_plan; /* valid until the next prepare */
};

static double
now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

void
cs_cuda_exec_capture_ms(const CsCudaExec *x, double ms[3])
{
    for (int i = 0; i < 3; i++)
        ms[i] = x->capture_ms[i];
}

/* Forgets the captured graph (it holds the addresses of arenas that may move). */
static void
drop_graph(CsCudaExec *x)
{
    if (x->graph != NULL) {
        if (cudaSetDevice(x->main_device) == cudaSuccess)
            (void)cudaStreamSynchronize(x->main);
        cudaGraphExecDestroy(x->graph);
    }
    x->graph = NULL;
    x->graph_plan = NULL;
}

int
cs_cuda_exec_device_count(char *err)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        cs_cuda_set_error(err, "%s", cudaGetErrorString(e));
        return -1;
    }
    return n;
}

int
cs_cuda_exec_device_info(int device, char *name, size_t name_len, int *driver_version,
                         int *runtime_version, char *err)
{
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, device), out_fail);
    CUDA_CHECK(cudaDriverGetVersion(driver_version), out_fail);
    CUDA_CHECK(cudaRuntimeGetVersion(runtime_version), out_fail);
    snprintf(name, name_len, "%s", prop.name);
    return 0;
out_fail:
    return -1;
}

static int
event_create(cudaEvent_t *ev, int device, unsigned flags, char *err)
{
    CUDA_CHECK(cudaSetDevice(device), out_fail);
    CUDA_CHECK(cudaEventCreateWithFlags(ev, flags), out_fail);
    return 0;
out_fail:
    return -1;
}

CsCudaExec *
cs_cuda_exec_new(const int *rank_device, int n_ranks, char *err)
{
    CsCudaExec *x = (CsCudaExec *)calloc(1, sizeof *x);
    if (x == NULL) {
        cs_cuda_set_error(err, "out of host memory");
        return NULL;
    }
    x->n_ranks = n_ranks;
    x->rank_device = (int *)calloc((size_t)n_ranks, sizeof(int));
    x->direct = (unsigned char *)calloc((size_t)n_ranks * n_ranks, 1);
    x->mem = (void **)calloc((size_t)n_ranks * CS_CUDA_N_MEMS, sizeof(void *));
    x->cap = (int64_t *)calloc((size_t)n_ranks * CS_CUDA_N_MEMS, sizeof(int64_t));
    if (x->rank_device == NULL || x->direct == NULL || x->mem == NULL || x->cap == NULL) {
        cs_cuda_set_error(err, "out of host memory");
        goto out_free_exec;
    }
    memcpy(x->rank_device, rank_device, (size_t)n_ranks * sizeof(int));
    x->main_device = rank_device[0];
    x->use_graphs = 1;

    /* Peer access wherever the hardware allows it; the rest is staged through the host. */
    for (int a = 0; a < n_ranks; a++) {
        for (int b = 0; b < n_ranks; b++) {
            int da = rank_device[a];
            int db = rank_device[b];
            int can = 0;
            if (da == db) {
                x->direct[a * n_ranks + b] = 1;
                continue;
            }
            CUDA_CHECK(cudaDeviceCanAccessPeer(&can, da, db), out_free_exec);
            if (!can)
                continue;
            CUDA_CHECK(cudaSetDevice(da), out_free_exec);
            cudaError_t e = cudaDeviceEnablePeerAccess(db, 0);
            if (e == cudaErrorPeerAccessAlreadyEnabled)
                (void)cudaGetLastError();
            else if (e != cudaSuccess) {
                (void)cudaGetLastError();
                continue;
            }
            x->direct[a * n_ranks + b] = 1;
        }
    }

    CUDA_CHECK(cudaSetDevice(x->main_device), out_free_exec);
    CUDA_CHECK(cudaStreamCreateWithFlags(&x->main, cudaStreamNonBlocking), out_free_exec);
    if (event_create(&x->fork, x->main_device, cudaEventDisableTiming, err) != 0
        || event_create(&x->t0, x->main_device, cudaEventDefault, err) != 0
        || event_create(&x->t1, x->main_device, cudaEventDefault, err) != 0)
        goto out_free_exec;
    return x;

out_free_exec:
    cs_cuda_exec_free(x);
    return NULL;
}

void
cs_cuda_exec_free(CsCudaExec *x)
{
    if (x == NULL)
        return;
    /* Nothing may still run on the buffers we free. */
    for (int r = 0; r < x->n_ranks && x->rank_device != NULL; r++) {
        if (cudaSetDevice(x->rank_device[r]) == cudaSuccess)
            (void)cudaDeviceSynchronize();
    }
    drop_graph(x);
    for (int s = 0; s < x->n_streams; s++) {
        if (x->streams != NULL && x->streams[s] != NULL)
            cudaStreamDestroy(x->streams[s]);
        if (x->joins != NULL && x->joins[s] != NULL)
            cudaEventDestroy(x->joins[s]);
    }
    for (int e = 0; e < x->n_events; e++)
        if (x->events[e] != NULL)
            cudaEventDestroy(x->events[e]);
    if (x->mem != NULL) {
        for (int i = 0; i < x->n_ranks * CS_CUDA_N_MEMS; i++) {
            if (x->mem[i] == NULL)
                continue;
            if (i % CS_CUDA_N_MEMS == CS_CUDA_MEM_HOST_STAGE)
                cudaFreeHost(x->mem[i]);
            else
                cudaFree(x->mem[i]);
        }
    }
    if (x->main != NULL)
        cudaStreamDestroy(x->main);
    if (x->fork != NULL)
        cudaEventDestroy(x->fork);
    if (x->t0 != NULL)
        cudaEventDestroy(x->t0);
    if (x->t1 != NULL)
        cudaEventDestroy(x->t1);
    free(x->streams);
    free(x->joins);
    free(x->events);
    free(x->event_device);
    free(x->rank_device);
    free(x->direct);
    free(x->mem);
    free(x->cap);
    free(x);
}

int
cs_cuda_exec_direct(const CsCudaExec *x, int src, int dst)
{
    return x->direct[src * x->n_ranks + dst];
}

static const char *const mem_names[CS_CUDA_N_MEMS] = {
    "input", "output", "scratch", "slots", "outbox", "host staging",
};

static int
reserve_arena(CsCudaExec *x, int rank, int mem, int64_t bytes, char *err)
{
    int i = rank * CS_CUDA_N_MEMS + mem;
    cudaError_t e;
    if (x->cap[i] >= bytes && x->mem[i] != NULL)
        return 0;
    /* Never zero bytes: every arena has an address, even an empty one. */
    int64_t want = bytes < 256 ? 256 : bytes;
    CUDA_CHECK(cudaSetDevice(x->rank_device[rank]), out_fail);
    if (x->mem[i] != NULL) {
        CUDA_CHECK(cudaDeviceSynchronize(), out_fail);
        if (mem == CS_CUDA_MEM_HOST_STAGE)
            cudaFreeHost(x->mem[i]);
        else
            cudaFree(x->mem[i]);
        x->mem[i] = NULL;
        x->cap[i] = 0;
    }
    if (mem == CS_CUDA_MEM_HOST_STAGE)
        e = cudaHostAlloc(&x->mem[i], (size_t)want, cudaHostAllocPortable);
    else
        e = cudaMalloc(&x->mem[i], (size_t)want);
    if (e != cudaSuccess) {
        x->mem[i] = NULL;
        cs_cuda_set_error(err, "rank %d (device %d): cannot allocate %lld bytes of %s memory: %s",
                          rank, x->rank_device[rank], (long long)want, mem_names[mem],
                          cudaGetErrorString(e));
        (void)cudaGetLastError();
        return -1;
    }
    x->cap[i] = want;
    return 0;
out_fail:
    return -1;
}

int
cs_cuda_exec_prepare(CsCudaExec *x, const CsCudaPlanView *plan, char *err)
{
    drop_graph(x);
    for (int r = 0; r < x->n_ranks; r++)
        for (int m = 0; m < CS_CUDA_N_MEMS; m++)
            if (reserve_arena(x, r, m, plan->mem_bytes[r * CS_CUDA_N_MEMS + m], err) != 0)
                return -1;

    if (plan->n_streams > x->n_streams) {
        cudaStream_t *streams
            = (cudaStream_t *)realloc(x->streams, (size_t)plan->n_streams * sizeof(cudaStream_t));
        if (streams != NULL)
            x->streams = streams;
        cudaEvent_t *joins
            = (cudaEvent_t *)realloc(x->joins, (size_t)plan->n_streams * sizeof(cudaEvent_t));
        if (joins != NULL)
            x->joins = joins;
        if (streams == NULL || joins == NULL) {
            cs_cuda_set_error(err, "out of host memory");
            return -1;
        }
        for (int s = x->n_streams; s < plan->n_streams; s++) {
            x->streams[s] = NULL;
            x->joins[s] = NULL;
        }
        for (int s = x->n_streams; s < plan->n_streams; s++) {
            int dev = x->rank_device[plan->stream_rank[s]];
            CUDA_CHECK(cudaSetDevice(dev), out_fail);
            CUDA_CHECK(cudaStreamCreateWithFlags(&x->streams[s], cudaStreamNonBlocking), out_fail);
            CUDA_CHECK(cudaEventCreateWithFlags(&x->joins[s], cudaEventDisableTiming), out_fail);
            x->n_streams = s + 1;
        }
    }

    /* An event must be created on the device of the stream that records it. */
    if (plan->n_events > x->n_events) {
        cudaEvent_t *events
            = (cudaEvent_t *)realloc(x->events, (size_t)plan->n_events * sizeof(cudaEvent_t));
        if (events != NULL)
            x->events = events;
        int *devs = (int *)realloc(x->event_device, (size_t)plan->n_events * sizeof(int));
        if (devs != NULL)
            x->event_device = devs;
        if (events == NULL || devs == NULL) {
            cs_cuda_set_error(err, "out of host memory");
            return -1;
        }
        for (int e = x->n_events; e < plan->n_events; e++) {
            x->events[e] = NULL;
            x->event_device[e] = -1;
        }
        x->n_events = plan->n_events;
    }
    for (int64_t i = 0; i < plan->n_xops; i++) {
        const CsCudaXop *op = &plan->xops[i];
        if (op->record < 0)
            continue;
        int dev = x->rank_device[plan->stream_rank[op->stream]];
        if (x->events[op->record] != NULL && x->event_device[op->record] == dev)
            continue;
        if (x->events[op->record] != NULL)
            cudaEventDestroy(x->events[op->record]);
        x->events[op->record] = NULL;
        if (event_create(&x->events[op->record], dev, cudaEventDisableTiming, err) != 0)
            return -1;
        x->event_device[op->record] = dev;
    }
    return 0;
out_fail:
    return -1;
}

static void *
address(const CsCudaExec *x, CsCudaRef r)
{
    return (char *)x->mem[r.rank * CS_CUDA_N_MEMS + r.mem] + r.offset;
}

int
cs_cuda_exec_upload(CsCudaExec *x, int rank, int mem, const void *host, int64_t bytes, char *err)
{
    if (bytes == 0)
        return 0;
    CUDA_CHECK(cudaSetDevice(x->rank_device[rank]), out_fail);
    CUDA_CHECK(
        cudaMemcpy(x->mem[rank * CS_CUDA_N_MEMS + mem], host, (size_t)bytes, cudaMemcpyDefault),
        out_fail);
    /* From pageable memory cudaMemcpy may return before the DMA lands, and the executor's
     * streams do not wait for the legacy stream. */
    CUDA_CHECK(cudaDeviceSynchronize(), out_fail);
    return 0;
out_fail:
    return -1;
}

int
cs_cuda_exec_download(CsCudaExec *x, int rank, int mem, void *host, int64_t bytes, char *err)
{
    if (bytes == 0)
        return 0;
    CUDA_CHECK(cudaSetDevice(x->rank_device[rank]), out_fail);
    CUDA_CHECK(
        cudaMemcpy(host, x->mem[rank * CS_CUDA_N_MEMS + mem], (size_t)bytes, cudaMemcpyDefault),
        out_fail);
    return 0;
out_fail:
    return -1;
}

void *
cs_cuda_exec_arena(const CsCudaExec *x, int rank, int mem, int *device)
{
    *device = x->rank_device[rank];
    return x->mem[rank * CS_CUDA_N_MEMS + mem];
}

/* Every distinct device of @x, once each, synchronized. */
static int
sync_devices(const CsCudaExec *x, char *err)
{
    for (int r = 0; r < x->n_ranks; r++) {
        int seen = 0;
        for (int q = 0; q < r && !seen; q++)
            seen = x->rank_device[q] == x->rank_device[r];
        if (seen)
            continue;
        CUDA_CHECK(cudaSetDevice(x->rank_device[r]), out_fail);
        CUDA_CHECK(cudaDeviceSynchronize(), out_fail);
    }
    return 0;
out_fail:
    return -1;
}

int
cs_cuda_exec_fill_all(CsCudaExec *x, int mem, int value, int64_t bytes, char *err)
{
    if (bytes == 0)
        return 0;
    /* All memsets queued first, then one synchronization per device: the executor's streams
     * do not wait for the legacy stream the memsets run on. */
    for (int r = 0; r < x->n_ranks; r++) {
        CUDA_CHECK(cudaSetDevice(x->rank_device[r]), out_fail);
        CUDA_CHECK(cudaMemset(x->mem[r * CS_CUDA_N_MEMS + mem], value, (size_t)bytes), out_fail);
    }
    return sync_devices(x, err);
out_fail:
    return -1;
}

/* ---- Running ---- */

typedef struct {
    CsCudaExec *x;
    int current; /* device made current last */
} Issuer;

static int
use_device(Issuer *is, int device, char *err)
{
    if (device == is->current)
        return 0;
    CUDA_CHECK(cudaSetDevice(device), out_fail);
    is->current = device;
    return 0;
out_fail:
    return -1;
}

static int
issue(Issuer *is, const CsCudaPlanView *plan, const CsCudaXop *op, char *err)
{
    CsCudaExec *x = is->x;
    cudaStream_t s = x->streams[op->stream];
    if (use_device(is, x->rank_device[plan->stream_rank[op->stream]], err) != 0)
        return -1;
    for (int w = 0; w < op->n_waits; w++)
        CUDA_CHECK(cudaStreamWaitEvent(s, x->events[plan->waits[op->wait_first + w]], 0), out_fail);
    if (op->bytes > 0) {
        int64_t n = op->bytes / cs_ref_dtype_size(plan->dtype);
        void *dst = address(x, op->dst);
        void *dst2 = op->dst2.mem >= 0 ? address(x, op->dst2) : NULL;
        switch (op->action) {
        case CS_CUDA_XOP_COPY:
            CUDA_CHECK(
                cudaMemcpyAsync(dst, address(x, op->a), (size_t)op->bytes, cudaMemcpyDefault, s),
                out_fail);
            if (dst2 != NULL)
                CUDA_CHECK(cudaMemcpyAsync(dst2, address(x, op->a), (size_t)op->bytes,
                                           cudaMemcpyDefault, s),
                           out_fail);
            break;
        case CS_CUDA_XOP_REDUCE:
            launch_reduce(plan->dtype, plan->redop, dst, dst2, address(x, op->a), address(x, op->b),
                          n, s);
            CUDA_CHECK(cudaGetLastError(), out_fail);
            break;
        case CS_CUDA_XOP_DIVIDE:
            launch_divide(plan->dtype, dst, n, plan->divisor, s);
            CUDA_CHECK(cudaGetLastError(), out_fail);
            break;
        default:
            break;
        }
    }
    if (op->record >= 0)
        CUDA_CHECK(cudaEventRecord(x->events[op->record], s), out_fail);
    return 0;
out_fail:
    return -1;
}

/* One iteration: a fork from the main stream to every used stream, the list in order, and a
 * join back. Issued eagerly, or inside a capture that turns it into a graph. */
static int
issue_iteration(Issuer *is, const CsCudaPlanView *plan, const unsigned char *used, char *err)
{
    CsCudaExec *x = is->x;
    /* Fork: no stream starts an iteration before the previous one ended everywhere. */
    if (use_device(is, x->main_device, err) != 0)
        return -1;
    CUDA_CHECK(cudaEventRecord(x->fork, x->main), out_fail);
    for (int s = 0; s < plan->n_streams; s++) {
        if (!used[s])
            continue;
        if (use_device(is, x->rank_device[plan->stream_rank[s]], err) != 0)
            return -1;
        CUDA_CHECK(cudaStreamWaitEvent(x->streams[s], x->fork, 0), out_fail);
    }
    for (int64_t i = 0; i < plan->n_xops; i++)
        if (issue(is, plan, &plan->xops[i], err) != 0)
            return -1;
    /* Join: the main stream waits for every stream's last operation. */
    for (int s = 0; s < plan->n_streams; s++) {
        if (!used[s])
            continue;
        if (use_device(is, x->rank_device[plan->stream_rank[s]], err) != 0)
            return -1;
        CUDA_CHECK(cudaEventRecord(x->joins[s], x->streams[s]), out_fail);
        if (use_device(is, x->main_device, err) != 0)
            return -1;
        CUDA_CHECK(cudaStreamWaitEvent(x->main, x->joins[s], 0), out_fail);
    }
    return 0;
out_fail:
    return -1;
}

/* Captures one iteration into an executable graph and uploads it, so that its first launch
 * costs what every launch costs. On failure the capture is ended, the error cleared, and @err
 * says why. */
static int
capture_iteration(Issuer *is, const CsCudaPlanView *plan, const unsigned char *used,
                  cudaGraphExec_t *exec, char *err)
{
    CsCudaExec *x = is->x;
    cudaGraph_t graph = NULL;
    int issued;
    cudaError_t ended;
    double t[4];
    *exec = NULL;
    if (use_device(is, x->main_device, err) != 0)
        return -1;
    t[0] = now_ms();
    CUDA_CHECK(cudaStreamBeginCapture(x->main, cudaStreamCaptureModeRelaxed), out_fail);
    issued = issue_iteration(is, plan, used, err);
    /* The capture must end whatever happened, or the main stream stays capturing. */
    (void)use_device(is, x->main_device, NULL);
    ended = cudaStreamEndCapture(x->main, &graph);
    if (issued != 0)
        goto out_free_graph;
    if (ended != cudaSuccess) {
        cs_cuda_set_error(err, "cudaStreamEndCapture: %s", cudaGetErrorString(ended));
        goto out_free_graph;
    }
    t[1] = now_ms();
    CUDA_CHECK(cudaGraphInstantiateWithFlags(exec, graph, 0), out_free_graph);
    t[2] = now_ms();
    CUDA_CHECK(cudaGraphUpload(*exec, x->main), out_free_exec);
    CUDA_CHECK(cudaStreamSynchronize(x->main), out_free_exec);
    t[3] = now_ms();
    for (int i = 0; i < 3; i++)
        x->capture_ms[i] = t[i + 1] - t[i];
    cudaGraphDestroy(graph);
    return 0;

out_free_exec:
    cudaGraphExecDestroy(*exec);
    *exec = NULL;
out_free_graph:
    if (graph != NULL)
        cudaGraphDestroy(graph);
out_fail:
    (void)cudaGetLastError();
    return -1;
}

void
cs_cuda_exec_set_graphs(CsCudaExec *x, int on)
{
    x->use_graphs = on != 0;
    drop_graph(x);
}

int
cs_cuda_exec_run(CsCudaExec *x, const CsCudaPlanView *plan, int iters, double *elapsed_ms,
                 char *err)
{
    Issuer is = { x, -1 };
    float ms = 0.0f;
    unsigned char *used = (unsigned char *)calloc((size_t)plan->n_streams + 1, 1);
    if (used == NULL) {
        cs_cuda_set_error(err, "out of host memory");
        return -1;
    }
    for (int64_t i = 0; i < plan->n_xops; i++)
        used[plan->xops[i].stream] = 1;

    /* A graph moves the issuing of thousands of copies, kernels and event waits out of the
     * timed region: what the events then time is the schedule on the GPU, as NCCL's single
     * kernel launch is. One graph serves every run of a prepared plan (the checked run, the
     * warm-up and the timed run); cs_cuda_exec_prepare drops it, since it holds addresses. */
    if (x->use_graphs && (x->graph == NULL || x->graph_plan != plan)) {
        char why[CS_CUDA_ERROR_LEN] = "";
        drop_graph(x);
        if (capture_iteration(&is, plan, used, &x->graph, why) != 0) {
            cs_cuda_set_error(err,
                              "capturing the schedule into a CUDA graph failed (%s); "
                              "COLLSIM_CUDA_GRAPHS=0 issues it from the host instead",
                              why);
            goto out_free;
        }
        x->graph_plan = plan;
    }

    if (use_device(&is, x->main_device, err) != 0)
        goto out_free;
    CUDA_CHECK(cudaEventRecord(x->t0, x->main), out_free);
    for (int it = 0; it < iters; it++) {
        if (x->use_graphs) {
            if (use_device(&is, x->main_device, err) != 0)
                goto out_free;
            CUDA_CHECK(cudaGraphLaunch(x->graph, x->main), out_free);
        }
        /* Eager issuing re-records every event before anything waits on it (cuda_plan.c
         * records each once, ahead of its waiters), so events last recorded inside a capture
         * are never waited on as such. */
        else if (issue_iteration(&is, plan, used, err) != 0)
            goto out_free;
    }
    if (use_device(&is, x->main_device, err) != 0)
        goto out_free;
    CUDA_CHECK(cudaEventRecord(x->t1, x->main), out_free);
    CUDA_CHECK(cudaEventSynchronize(x->t1), out_free);
    CUDA_CHECK(cudaEventElapsedTime(&ms, x->t0, x->t1), out_free);
    *elapsed_ms = ms;
    free(used);
    return 0;

out_free:
    free(used);
    return -1;
}
