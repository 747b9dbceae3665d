// SPDX-License-Identifier: MIT
/* What the CUDA files share: their one way to fail (STYLE §5) and the shape of an element-wise
 * grid-stride launch. For .cu files only. */
#pragma once

#include <cuda_runtime.h>

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#include "backends/cuda/cuda_exec.h"

static inline void
cs_cuda_set_error(char *err, const char *fmt, ...)
{
    if (err == NULL)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, CS_CUDA_ERROR_LEN, fmt, ap);
    va_end(ap);
}

/* On failure, name the call and CUDA's reason in the caller's @err buffer (CS_CUDA_ERROR_LEN
 * bytes), then jump to the label that frees what the function holds. */
#define CUDA_CHECK(call, label)                                                                    \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            cs_cuda_set_error(err, "%s: %s", #call, cudaGetErrorString(e_));                       \
            goto label;                                                                            \
        }                                                                                          \
    } while (0)

/* Element-wise kernels: 256 threads a block, at most 4096 blocks striding over the rest. */
#define CS_CUDA_THREADS 256
#define CS_CUDA_MAX_BLOCKS 4096

static inline unsigned
cs_cuda_blocks_for(int64_t n)
{
    int64_t blocks = (n + CS_CUDA_THREADS - 1) / CS_CUDA_THREADS;
    return (unsigned)(blocks < 1 ? 1 : blocks > CS_CUDA_MAX_BLOCKS ? CS_CUDA_MAX_BLOCKS : blocks);
}
