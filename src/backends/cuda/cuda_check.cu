// SPDX-License-Identifier: MIT
/* Inputs written and outputs checked on the GPU (cuda_check.h): grid-stride kernels over
 * reference_element.h. The datatype and operator are the same for every thread, so the
 * element functions' switches do not diverge. */
#include "backends/cuda/cuda_check.h"

#include "backends/cuda/cuda_util.h"

#include <stdlib.h>

__global__ void
write_kernel(void *dst, CsRefExpect e)
{
    int64_t stride = (int64_t)blockDim.x * gridDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < e.n; i += stride)
        cs_ref_store(e.dtype, dst, i, cs_ref_expected(&e, i));
}

__global__ void
count_kernel(const void *got, CsRefExpect e, unsigned long long *wrong)
{
    int64_t stride = (int64_t)blockDim.x * gridDim.x;
    unsigned long long mine = 0;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < e.n; i += stride)
        mine += (unsigned long long)cs_ref_wrong(e.dtype, e.nranks, cs_ref_load(e.dtype, got, i),
                                                 cs_ref_expected(&e, i));
    /* One atomic per warp that saw a wrong element. */
    for (int offset = 16; offset > 0; offset /= 2)
        mine += __shfl_down_sync(0xffffffffu, mine, offset);
    if ((threadIdx.x & 31) == 0 && mine > 0)
        atomicAdd(wrong, mine);
}

int
cs_cuda_check_write(int device, void *dst, const CsRefExpect *expect, char *err)
{
    if (expect->n <= 0)
        return 0;
    CUDA_CHECK(cudaSetDevice(device), out_fail);
    write_kernel<<<cs_cuda_blocks_for(expect->n), CS_CUDA_THREADS>>>(dst, *expect);
    CUDA_CHECK(cudaGetLastError(), out_fail);
    CUDA_CHECK(cudaDeviceSynchronize(), out_fail);
    return 0;
out_fail:
    return -1;
}

int
cs_cuda_check_count_wrong(int n, const int *devices, const void *const *got,
                          const CsRefExpect *expect, int64_t *wrong, char *err)
{
    /* One array of n counters on each device, shared by its ranks: every kernel is queued
     * before anything waits, and each device is waited on once, by its copy back. */
    unsigned long long **base = (unsigned long long **)calloc((size_t)n + 1, sizeof *base);
    unsigned long long *counts = (unsigned long long *)calloc((size_t)n + 1, sizeof *counts);
    size_t bytes = (size_t)n * sizeof **base;
    int rc = -1;

    if (base == NULL || counts == NULL) {
        cs_cuda_set_error(err, "out of host memory");
        goto out_free;
    }
    for (int i = 0; i < n; i++) {
        wrong[i] = 0;
        for (int j = 0; j < i && base[i] == NULL; j++)
            if (devices[j] == devices[i])
                base[i] = base[j];
        if (base[i] != NULL)
            continue;
        CUDA_CHECK(cudaSetDevice(devices[i]), out_free);
        CUDA_CHECK(cudaMalloc((void **)&base[i], bytes), out_free);
        CUDA_CHECK(cudaMemset(base[i], 0, bytes), out_free);
    }
    for (int i = 0; i < n; i++) {
        if (expect[i].n <= 0)
            continue;
        CUDA_CHECK(cudaSetDevice(devices[i]), out_free);
        count_kernel<<<cs_cuda_blocks_for(expect[i].n), CS_CUDA_THREADS>>>(got[i], expect[i],
                                                                          base[i] + i);
        CUDA_CHECK(cudaGetLastError(), out_free);
    }
    for (int i = 0; i < n; i++) {
        int first = 1;
        for (int j = 0; j < i && first; j++)
            first = devices[j] != devices[i];
        if (!first)
            continue;
        CUDA_CHECK(cudaSetDevice(devices[i]), out_free);
        CUDA_CHECK(cudaMemcpy(counts, base[i], bytes, cudaMemcpyDeviceToHost), out_free);
        for (int k = i; k < n; k++)
            if (devices[k] == devices[i])
                wrong[k] = (int64_t)counts[k];
    }
    rc = 0;
out_free:
    for (int i = 0; base != NULL && i < n; i++) {
        int first = base[i] != NULL;
        for (int j = 0; j < i && first; j++)
            first = base[j] != base[i];
        if (first && cudaSetDevice(devices[i]) == cudaSuccess)
            (void)cudaFree(base[i]);
    }
    free(base);
    free(counts);
    return rc;
}
