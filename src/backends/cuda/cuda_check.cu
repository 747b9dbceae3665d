// SPDX-License-Identifier: MIT
/* Inputs written and outputs checked on the GPU (cuda_check.h): grid-stride kernels over
 * reference_element.h. The datatype and operator are the same for every thread, so the
 * element functions' switches do not diverge. */
#include "backends/cuda/cuda_check.h"

#include "backends/cuda/cuda_util.h"

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
cs_cuda_check_count_wrong(int device, const void *got, const CsRefExpect *expect, int64_t *wrong,
                          char *err)
{
    unsigned long long *counter = NULL;
    unsigned long long count = 0;

    *wrong = 0;
    if (expect->n <= 0)
        return 0;
    CUDA_CHECK(cudaSetDevice(device), out_fail);
    CUDA_CHECK(cudaMalloc((void **)&counter, sizeof *counter), out_fail);
    CUDA_CHECK(cudaMemset(counter, 0, sizeof *counter), out_fail);
    count_kernel<<<cs_cuda_blocks_for(expect->n), CS_CUDA_THREADS>>>(got, *expect, counter);
    CUDA_CHECK(cudaGetLastError(), out_fail);
    CUDA_CHECK(cudaMemcpy(&count, counter, sizeof count, cudaMemcpyDeviceToHost), out_fail);
    CUDA_CHECK(cudaFree(counter), out_fail);
    *wrong = (int64_t)count;
    return 0;
out_fail:
    if (counter != NULL)
        (void)cudaFree(counter);
    return -1;
}
