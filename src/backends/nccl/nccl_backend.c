// SPDX-License-Identifier: MIT
/* `collsim measure --backend nccl`: the library's own collectives, the reference collsim
 * predicts against. NCCL_ALGO / NCCL_PROTO are set before the communicators exist, so NCCL
 * runs what was asked. One process drives every local GPU (ncclCommInitAll); under mpirun each
 * process drives one GPU and rank 0's ncclUniqueId goes out over MPI_Bcast. Rows carry
 * out-of-place and in-place halves laid out as nccl-tests does (src/common.cu, *_perf.cu). */
#include "config.h"

#include "backends/nccl/nccl_backend.h"

#include <cuda_runtime_api.h>
#include <math.h>
/* nccl.h declares a few functions as f() instead of f(void). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <nccl.h>
#pragma GCC diagnostic pop
#include <stdlib.h>
#include <string.h>

#include "backends/cuda/cuda_check.h"
#include "backends/reference.h"
#include "base/trace.h"

#ifdef HAVE_MPI
#include <mpi.h>

#include "backends/mpi/mpi_backend.h"
#endif

typedef struct {
    int nlocal;     /* GPUs this process drives */
    int nranks;     /* ranks in the communicator */
    int first_rank; /* global rank of local GPU 0 */
    int nprocs;     /* processes (1 without MPI) */
    int nnodes;
    int *devices; /* [nlocal] */
    ncclComm_t *comms;
    cudaStream_t *streams;
    cudaEvent_t *start;
    cudaEvent_t *stop;
    void **send; /* out-of-place input */
    void **recv; /* output; also the in-place buffer */
    gint64 send_cap;
    gint64 recv_cap;
    gboolean use_mpi;
} Nccl;

static gboolean
cuda_failed(GError **error, const char *what, cudaError_t e)
{
    g_set_error(error, CS_BACKEND_ERROR, CS_BACKEND_ERROR_RUNTIME, "nccl backend: %s: %s", what,
                cudaGetErrorString(e));
    return FALSE;
}

static gboolean
nccl_failed(GError **error, const char *what, ncclResult_t r, ncclComm_t comm)
{
    const char *last = comm != NULL ? ncclGetLastError(comm) : NULL;
    g_set_error(error, CS_BACKEND_ERROR, CS_BACKEND_ERROR_RUNTIME, "nccl backend: %s: %s%s%s", what,
                ncclGetErrorString(r), last != NULL && *last ? ": " : "", last != NULL ? last : "");
    return FALSE;
}

#define CUDA_OK(call, what)                                                                        \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess)                                                                     \
            return cuda_failed(error, what, e_);                                                   \
    } while (0)

#define NCCL_OK(call, what, comm)                                                                  \
    do {                                                                                           \
        ncclResult_t r_ = (call);                                                                  \
        if (r_ != ncclSuccess)                                                                     \
            return nccl_failed(error, what, r_, comm);                                             \
    } while (0)

/* ---- Names ---- */

static ncclDataType_t
nccl_dtype(CsDtype dtype)
{
    switch (dtype) {
    case CS_DTYPE_INT8:
        return ncclInt8;
    case CS_DTYPE_UINT8:
        return ncclUint8;
    case CS_DTYPE_INT32:
        return ncclInt32;
    case CS_DTYPE_UINT32:
        return ncclUint32;
    case CS_DTYPE_INT64:
        return ncclInt64;
    case CS_DTYPE_UINT64:
        return ncclUint64;
    case CS_DTYPE_HALF:
        return ncclFloat16;
    case CS_DTYPE_DOUBLE:
        return ncclFloat64;
    case CS_DTYPE_BFLOAT16:
        return ncclBfloat16;
    case CS_DTYPE_FLOAT:
    case CS_N_DTYPES:
    default:
        return ncclFloat32;
    }
}

static ncclRedOp_t
nccl_redop(CsRedop redop)
{
    switch (redop) {
    case CS_REDOP_PROD:
        return ncclProd;
    case CS_REDOP_MAX:
        return ncclMax;
    case CS_REDOP_MIN:
        return ncclMin;
    case CS_REDOP_AVG:
        return ncclAvg;
    case CS_REDOP_SUM:
    case CS_N_REDOPS:
    default:
        return ncclSum;
    }
}

/* ---- Set-up ---- */

static void
nccl_clear(Nccl *n)
{
    for (int i = 0; i < n->nlocal; i++) {
        if (n->devices != NULL)
            (void)cudaSetDevice(n->devices[i]);
        if (n->comms != NULL && n->comms[i] != NULL)
            ncclCommDestroy(n->comms[i]);
        if (n->streams != NULL && n->streams[i] != NULL)
            cudaStreamDestroy(n->streams[i]);
        if (n->start != NULL && n->start[i] != NULL)
            cudaEventDestroy(n->start[i]);
        if (n->stop != NULL && n->stop[i] != NULL)
            cudaEventDestroy(n->stop[i]);
        if (n->send != NULL && n->send[i] != NULL)
            cudaFree(n->send[i]);
        if (n->recv != NULL && n->recv[i] != NULL)
            cudaFree(n->recv[i]);
    }
    g_free(n->devices);
    g_free(n->comms);
    g_free(n->streams);
    g_free(n->start);
    g_free(n->stop);
    g_free(n->send);
    g_free(n->recv);
}

/* NCCL reads NCCL_ALGO / NCCL_PROTO when a communicator is created: set them first. The
 * values are NCCL's (`collsim measure` checks them and writes NCCL's spellings with
 * cs_nccl_env_list(): NCCL skips a name it does not know, silently). */
static void
force_env(const CsMeasureArgs *args, GString *env)
{
    if (args->algo != NULL) {
        g_setenv("NCCL_ALGO", args->algo, TRUE);
        g_string_append_printf(env, "NCCL_ALGO=%s", args->algo);
    }
    if (args->proto_name != NULL) {
        g_setenv("NCCL_PROTO", args->proto_name, TRUE);
        g_string_append_printf(env, "%sNCCL_PROTO=%s", env->len > 0 ? " " : "", args->proto_name);
    }
}

static gboolean
local_devices(const CsMeasureArgs *args, Nccl *n, int local_rank, GError **error)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        g_set_error(error, CS_BACKEND_ERROR, CS_BACKEND_ERROR_UNAVAILABLE, "nccl backend: %s",
                    e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA device found");
        return FALSE;
    }
    if (args->virtual_ranks > 0) {
        g_set_error_literal(error, CS_BACKEND_ERROR, CS_BACKEND_ERROR_INVALID,
                            "nccl backend: --virtual-ranks is not possible (NCCL refuses two "
                            "ranks on one GPU); use --backend cuda");
        return FALSE;
    }
    for (int i = 0; i < args->n_gpus; i++) {
        if (args->gpus[i] < 0 || args->gpus[i] >= count) {
            g_set_error(error, CS_BACKEND_ERROR, CS_BACKEND_ERROR_INVALID,
                        "--gpus: device %d does not exist (%d CUDA device%s)", args->gpus[i], count,
                        count == 1 ? "" : "s");
            return FALSE;
        }
    }
    if (n->use_mpi) {
        /* One GPU per process, picked by the process's rank on its node. */
        n->nlocal = 1;
        n->devices = g_new(int, 1);
        n->devices[0]
            = args->n_gpus > 0 ? args->gpus[local_rank % args->n_gpus] : local_rank % count;
        return TRUE;
    }
    n->nlocal = args->n_gpus > 0 ? args->n_gpus : count;
    n->devices = g_new(int, n->nlocal);
    for (int i = 0; i < n->nlocal; i++)
        n->devices[i] = args->n_gpus > 0 ? args->gpus[i] : i;
    return TRUE;
}

static gboolean
create_comms(Nccl *n, GError **error)
{
    n->comms = g_new0(ncclComm_t, n->nlocal);
#ifdef HAVE_MPI
    if (n->use_mpi) {
        ncclUniqueId id;
        if (n->first_rank == 0)
            NCCL_OK(ncclGetUniqueId(&id), "ncclGetUniqueId", NULL);
        MPI_Bcast(&id, (int)sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
        CUDA_OK(cudaSetDevice(n->devices[0]), "cudaSetDevice");
        NCCL_OK(ncclCommInitRank(&n->comms[0], n->nranks, id, n->first_rank), "ncclCommInitRank",
                NULL);
        return TRUE;
    }
#endif
    NCCL_OK(ncclCommInitAll(n->comms, n->nlocal, n->devices), "ncclCommInitAll", NULL);
    return TRUE;
}

static gboolean
create_streams(Nccl *n, GError **error)
{
    n->streams = g_new0(cudaStream_t, n->nlocal);
    n->start = g_new0(cudaEvent_t, n->nlocal);
    n->stop = g_new0(cudaEvent_t, n->nlocal);
    n->send = g_new0(void *, n->nlocal);
    n->recv = g_new0(void *, n->nlocal);
    for (int i = 0; i < n->nlocal; i++) {
        CUDA_OK(cudaSetDevice(n->devices[i]), "cudaSetDevice");
        CUDA_OK(cudaStreamCreateWithFlags(&n->streams[i], cudaStreamNonBlocking),
                "cudaStreamCreate");
        CUDA_OK(cudaEventCreate(&n->start[i]), "cudaEventCreate");
        CUDA_OK(cudaEventCreate(&n->stop[i]), "cudaEventCreate");
    }
    return TRUE;
}

/* ---- Headers ---- */

static void
describe(const CsMeasureArgs *args, const Nccl *n, const char *env, CsTrace *trace)
{
    g_autoptr(GString) hardware = g_string_new(NULL);
    int nccl_version = 0;
    int driver = 0;
    int runtime = 0;

    for (int i = 0; i < n->nlocal; i++) {
        struct cudaDeviceProp prop;
        if (cudaGetDeviceProperties(&prop, n->devices[i]) == cudaSuccess)
            g_string_append_printf(hardware, "%sdevice %d: %s", i > 0 ? ", " : "", n->devices[i],
                                   prop.name);
    }
    if (n->use_mpi)
        g_string_append(hardware, " (as seen by rank 0)");
    (void)ncclGetVersion(&nccl_version);
    (void)cudaDriverGetVersion(&driver);
    (void)cudaRuntimeGetVersion(&runtime);
    g_autofree char *release = cs_nccl_version_string(nccl_version);
    g_autofree char *software
        = g_strdup_printf("NCCL %s, CUDA driver %d.%d, CUDA runtime %d.%d",
                          release != NULL ? release : "(unknown version)", driver / 1000,
                          driver % 1000 / 10, runtime / 1000, runtime % 1000 / 10);
    g_autofree char *gpus = g_strdup_printf("%d", n->nranks);
    g_autofree char *nodes = g_strdup_printf("%d", n->nnodes);
    g_autofree char *launcher
        = n->use_mpi
              ? g_strdup_printf("MPI, %d processes, one GPU each (ncclCommInitRank)", n->nprocs)
              : g_strdup_printf("single process, %d GPU%s (ncclCommInitAll)", n->nlocal,
                                n->nlocal == 1 ? "" : "s");

    cs_trace_set_header(trace, "hardware", hardware->str);
    cs_trace_set_header(trace, "gpus", gpus);
    cs_trace_set_header(trace, "nodes", nodes);
    cs_trace_set_header(trace, "software", software);
    cs_trace_set_header(trace, "launcher", launcher);
    cs_trace_set_header(trace, "env", *env != '\0' ? env : "none");
    /* traces/README.md's wording: what was forced, as the variables say it. */
    g_autofree char *forced = NULL;
    if (args->algo == NULL && args->proto_name == NULL)
        forced = g_strdup("not forced");
    else if (args->algo == NULL)
        forced = g_strdup_printf("%s forced, algorithm not forced", env);
    else if (args->proto_name == NULL)
        forced = g_strdup_printf("%s forced, protocol not forced", env);
    else
        forced = g_strdup_printf("%s forced", env);
    cs_trace_set_header(trace, "algo/proto", forced);
}

/* ---- Running ---- */

/* Where rank @rank's input and output lie, nccl-tests style, for one half of a row. */
static void
buffers_for(const Nccl *n, int i, const CsOpSize *size, CsOp op, gboolean in_place, guint8 **in,
            guint8 **out)
{
    int rank = n->first_rank + i;
    guint8 *recv = n->recv[i];

    *out = recv;
    *in = n->send[i];
    if (!in_place)
        return;
    if (op == CS_OP_ALL_GATHER)
        *in = recv + (gint64)rank * size->block_bytes;
    else if (op == CS_OP_REDUCE_SCATTER) {
        *in = recv;
        *out = recv + (gint64)rank * size->block_bytes;
    }
    else
        *in = recv;
}

static gboolean
has_in_place(CsOp op)
{
    return op != CS_OP_SCATTER && op != CS_OP_GATHER && op != CS_OP_ALL_TO_ALL;
}

/* Issues one collective on every local rank (one NCCL group). */
static gboolean
issue(const CsMeasureArgs *args, const Nccl *n, const CsOpSize *size, gboolean in_place,
      GError **error)
{
    ncclDataType_t dt = nccl_dtype(args->dtype);
    ncclRedOp_t rop = nccl_redop(args->redop);
    gint64 ts = cs_dtype_size(args->dtype);
    size_t count = (size_t)size->count;
    size_t block = (size_t)(size->block_bytes / ts);
    int P = n->nranks;

    NCCL_OK(ncclGroupStart(), "ncclGroupStart", NULL);
    for (int i = 0; i < n->nlocal; i++) {
        guint8 *in;
        guint8 *out;
        ncclComm_t c = n->comms[i];
        cudaStream_t s = n->streams[i];
        int rank = n->first_rank + i;
        ncclResult_t r = ncclSuccess;

        buffers_for(n, i, size, args->op, in_place, &in, &out);
        switch (args->op) {
        case CS_OP_BROADCAST:
            r = ncclBroadcast(in, out, count, dt, args->root, c, s);
            break;
        case CS_OP_REDUCE:
            r = ncclReduce(in, out, count, dt, rop, args->root, c, s);
            break;
        case CS_OP_ALL_REDUCE:
            r = ncclAllReduce(in, out, count, dt, rop, c, s);
            break;
        case CS_OP_ALL_GATHER:
            r = ncclAllGather(in, out, block, dt, c, s);
            break;
        case CS_OP_REDUCE_SCATTER:
            r = ncclReduceScatter(in, out, block, dt, rop, c, s);
            break;
        case CS_OP_SCATTER:
            if (rank == args->root)
                for (int q = 0; q < P && r == ncclSuccess; q++)
                    r = ncclSend(in + (gint64)q * size->block_bytes, block, dt, q, c, s);
            if (r == ncclSuccess)
                r = ncclRecv(out, block, dt, args->root, c, s);
            break;
        case CS_OP_GATHER:
            r = ncclSend(in, block, dt, args->root, c, s);
            if (rank == args->root)
                for (int q = 0; q < P && r == ncclSuccess; q++)
                    r = ncclRecv(out + (gint64)q * size->block_bytes, block, dt, q, c, s);
            break;
        case CS_OP_ALL_TO_ALL:
            for (int q = 0; q < P && r == ncclSuccess; q++) {
                r = ncclSend(in + (gint64)q * size->block_bytes, block, dt, q, c, s);
                if (r == ncclSuccess)
                    r = ncclRecv(out + (gint64)q * size->block_bytes, block, dt, q, c, s);
            }
            break;
        case CS_OP_SEND_RECV:
            /* nccl-tests sendrecv.cu SendRecvRunColl: to rank + 1, from rank - 1. */
            r = ncclSend(in, count, dt, (rank + 1) % P, c, s);
            if (r == ncclSuccess)
                r = ncclRecv(out, count, dt, (rank - 1 + P) % P, c, s);
            break;
        case CS_N_OPS:
        default:
            g_assert_not_reached();
        }
        if (r != ncclSuccess) {
            (void)ncclGroupEnd();
            return nccl_failed(error, cs_op_name(args->op), r, c);
        }
    }
    NCCL_OK(ncclGroupEnd(), "ncclGroupEnd", n->comms[0]);
    return TRUE;
}

static gboolean
sync_all(const Nccl *n, GError **error)
{
    for (int i = 0; i < n->nlocal; i++) {
        CUDA_OK(cudaSetDevice(n->devices[i]), "cudaSetDevice");
        CUDA_OK(cudaStreamSynchronize(n->streams[i]), "cudaStreamSynchronize");
    }
    return TRUE;
}

static gboolean
reserve(Nccl *n, gint64 send_bytes, gint64 recv_bytes, GError **error)
{
    /* The in-place buffer holds whichever of input and output is larger. */
    gint64 recv_need = MAX(MAX(send_bytes, recv_bytes), 256);
    gint64 send_need = MAX(send_bytes, 256);

    for (int i = 0; i < n->nlocal; i++) {
        CUDA_OK(cudaSetDevice(n->devices[i]), "cudaSetDevice");
        if (send_need > n->send_cap) {
            if (n->send[i] != NULL)
                cudaFree(n->send[i]);
            n->send[i] = NULL;
            CUDA_OK(cudaMalloc(&n->send[i], (size_t)send_need), "cudaMalloc (input)");
        }
        if (recv_need > n->recv_cap) {
            if (n->recv[i] != NULL)
                cudaFree(n->recv[i]);
            n->recv[i] = NULL;
            CUDA_OK(cudaMalloc(&n->recv[i], (size_t)recv_need), "cudaMalloc (output)");
        }
    }
    n->send_cap = MAX(n->send_cap, send_need);
    n->recv_cap = MAX(n->recv_cap, recv_need);
    return TRUE;
}

/* Writes inputs where this half reads them and poisons the output, on the GPUs
 * (cuda_check.cu): nothing is computed on the host or copied. */
static gboolean
load(const CsMeasureArgs *args, const Nccl *n, const CsOpSize *size, gboolean in_place,
     GError **error)
{
    char err[CS_CUDA_ERROR_LEN] = "";
    CsRefExpect input = {
        .n = size->send_bytes / cs_dtype_size(args->dtype),
        .block = 1,
        .source = CS_REF_FROM_RANK,
        .nranks = n->nranks,
        .dtype = (int32_t)args->dtype,
        .redop = (int32_t)args->redop,
        .reduces = cs_op_reduces(args->op),
    };

    for (int i = 0; i < n->nlocal; i++) {
        guint8 *in;
        guint8 *out;
        buffers_for(n, i, size, args->op, in_place, &in, &out);
        CUDA_OK(cudaSetDevice(n->devices[i]), "cudaSetDevice");
        CUDA_OK(cudaMemset(n->recv[i], CS_REFERENCE_POISON,
                           (size_t)MAX(size->send_bytes, size->recv_bytes)),
                "cudaMemset");
        /* In place, the input is written over the poison: both on the legacy stream. */
        input.rank = n->first_rank + i;
        if (cs_cuda_check_write(n->devices[i], in, &input, err) != 0) {
            g_set_error(error, CS_BACKEND_ERROR, CS_BACKEND_ERROR_RUNTIME,
                        "nccl backend: inputs: %s", err);
            return FALSE;
        }
        /* NCCL's streams do not wait for the legacy stream (an empty input launches nothing). */
        CUDA_OK(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    }
    return TRUE;
}

static gboolean
count_wrong(const CsMeasureArgs *args, const Nccl *n, const CsOpSize *size, gboolean in_place,
            gint64 *wrong, GError **error)
{
    char err[CS_CUDA_ERROR_LEN] = "";
    g_autofree int *devices = g_new(int, n->nlocal);
    g_autofree const void **got = g_new(const void *, n->nlocal);
    g_autofree CsRefExpect *expect = g_new(CsRefExpect, n->nlocal);
    g_autofree gint64 *rank_wrong = g_new(gint64, n->nlocal);
    int k = 0;

    for (int i = 0; i < n->nlocal; i++) {
        guint8 *in;
        guint8 *out;
        if (!cs_reference_expectation(args->op, size, n->nranks, args->root, args->dtype,
                                      args->redop, n->first_rank + i, &expect[k]))
            continue;
        buffers_for(n, i, size, args->op, in_place, &in, &out);
        devices[k] = n->devices[i];
        got[k] = out;
        k++;
    }
    if (cs_cuda_check_count_wrong(k, devices, got, expect, rank_wrong, err) != 0) {
        g_set_error(error, CS_BACKEND_ERROR, CS_BACKEND_ERROR_RUNTIME, "nccl backend: check: %s",
                    err);
        return FALSE;
    }
    *wrong = 0;
    for (int i = 0; i < k; i++)
        *wrong += rank_wrong[i];
    return TRUE;
}

/* Seconds per iteration: per GPU from its events, the slowest local GPU, then the mean over
 * processes as nccl-tests reports it. */
static gboolean
time_half(const CsMeasureArgs *args, const Nccl *n, const CsOpSize *size, gboolean in_place,
          double *seconds, GError **error)
{
    for (int w = 0; w < args->warmup; w++)
        if (!issue(args, n, size, in_place, error))
            return FALSE;
    if (!sync_all(n, error))
        return FALSE;
    for (int i = 0; i < n->nlocal; i++) {
        CUDA_OK(cudaSetDevice(n->devices[i]), "cudaSetDevice");
        CUDA_OK(cudaEventRecord(n->start[i], n->streams[i]), "cudaEventRecord");
    }
    for (int it = 0; it < args->iters; it++)
        if (!issue(args, n, size, in_place, error))
            return FALSE;
    double worst_ms = 0.0;
    for (int i = 0; i < n->nlocal; i++) {
        float ms = 0.0f;
        CUDA_OK(cudaSetDevice(n->devices[i]), "cudaSetDevice");
        CUDA_OK(cudaEventRecord(n->stop[i], n->streams[i]), "cudaEventRecord");
        CUDA_OK(cudaEventSynchronize(n->stop[i]), "cudaEventSynchronize");
        CUDA_OK(cudaEventElapsedTime(&ms, n->start[i], n->stop[i]), "cudaEventElapsedTime");
        worst_ms = MAX(worst_ms, (double)ms);
    }
    double s = worst_ms / 1e3 / args->iters;
#ifdef HAVE_MPI
    if (n->use_mpi) {
        MPI_Allreduce(MPI_IN_PLACE, &s, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        s /= n->nprocs;
    }
#endif
    *seconds = s;
    return TRUE;
}

static gboolean
measure_half(const CsMeasureArgs *args, const Nccl *n, const CsOpSize *size, gboolean in_place,
             double *seconds, gint64 *wrong, GError **error)
{
    *wrong = -1;
    if (!load(args, n, size, in_place, error))
        return FALSE;
    if (args->check) {
        if (!issue(args, n, size, in_place, error) || !sync_all(n, error))
            return FALSE;
        if (!count_wrong(args, n, size, in_place, wrong, error))
            return FALSE;
#ifdef HAVE_MPI
        if (n->use_mpi)
            MPI_Allreduce(MPI_IN_PLACE, wrong, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
#endif
    }
    return time_half(args, n, size, in_place, seconds, error);
}

static gboolean
run_sizes(const CsMeasureArgs *args, Nccl *n, CsTrace *trace, GError **error)
{
    g_autoptr(GArray) sizes = cs_measure_args_sizes(args);

    for (guint k = 0; k < sizes->len; k++) {
        CsOpSize size
            = cs_op_size(args->op, g_array_index(sizes, gint64, k), args->dtype, n->nranks);
        double oop = NAN;
        double ip = NAN;
        gint64 oop_wrong = -1;
        gint64 ip_wrong = -1;
        if (!reserve(n, size.send_bytes, size.recv_bytes, error))
            return FALSE;
        if (!measure_half(args, n, &size, FALSE, &oop, &oop_wrong, error))
            return FALSE;
        if (has_in_place(args->op) && !measure_half(args, n, &size, TRUE, &ip, &ip_wrong, error))
            return FALSE;
        if (trace != NULL)
            cs_backend_trace_add(trace, args, &size, n->nranks, oop, oop_wrong, ip, ip_wrong);
    }
    return TRUE;
}

/* Decides single-process or MPI mode, and this process's place in the communicator. */
static gboolean
place_process(Nccl *n, int *local_rank, GError **error)
{
    n->nprocs = 1;
    n->nnodes = 1;
    n->first_rank = 0;
    *local_rank = 0;
#ifdef HAVE_MPI
    if (cs_mpi_backend_launched()) {
        int rank;
        int size;
        if (!cs_mpi_backend_init(error))
            return FALSE;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        if (size > 1) {
            MPI_Comm node;
            int first_on_node;
            MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
            MPI_Comm_rank(node, local_rank);
            MPI_Comm_free(&node);
            first_on_node = *local_rank == 0;
            MPI_Allreduce(&first_on_node, &n->nnodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
            n->use_mpi = TRUE;
            n->nprocs = size;
            n->first_rank = rank;
        }
    }
#else
    (void)error;
#endif
    return TRUE;
}

/**
 * cs_nccl_backend_measure:
 * Runs NCCL's collective for every size of @args, out-of-place then in-place (not for
 * scatter, gather and all-to-all, whose in-place halves are N/A).
 * Returns: TRUE with @trace (transfer full; NULL on MPI ranks other than 0), or FALSE with
 * CS_BACKEND_ERROR_UNAVAILABLE (no GPU), _INVALID or _RUNTIME (CUDA or NCCL failed).
 */
gboolean
cs_nccl_backend_measure(const CsMeasureArgs *args, CsTrace **trace, GError **error)
{
    Nccl n = { 0 };
    int local_rank = 0;
    g_autoptr(GString) env = g_string_new(NULL);
    g_autoptr(CsTrace) t = NULL;
    gboolean ok
        = place_process(&n, &local_rank, error) && local_devices(args, &n, local_rank, error);

    if (ok) {
        n.nranks = n.use_mpi ? n.nprocs : n.nlocal;
        force_env(args, env);
        ok = create_comms(&n, error) && create_streams(&n, error);
    }
    if (ok && n.first_rank == 0) {
        t = cs_backend_trace_new(args, "nccl", n.nranks);
        describe(args, &n, env->str, t);
    }
    if (ok)
        ok = run_sizes(args, &n, t, error);
    nccl_clear(&n);
    if (!ok)
        return FALSE;
    *trace = g_steal_pointer(&t);
    return TRUE;
}
