// SPDX-License-Identifier: MIT
/* The host reference run on the GPU: a rank's inputs written and its outputs checked by
 * kernels from the same element functions as the host's (reference_element.h), so that a
 * measured point moves no buffer to the host and computes nothing there (nccl-tests does the
 * same, src/common.cu InitData / CheckData). Plain C interface, no GLib (STYLE §2). */
#pragma once

#include <stdint.h>

#include "backends/cuda/cuda_exec.h"
#include "backends/reference_element.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Writes element i of @expect into @dst (memory of @device) for every i < expect->n: a rank's
 * input with CS_REF_FROM_RANK and first 0. Synchronous. Returns 0, or -1 with @err set
 * (CS_CUDA_ERROR_LEN bytes). */
int cs_cuda_check_write(int device, void *dst, const CsRefExpect *expect, char *err);

/* For each of @n outputs, counts the elements of @got[i] (memory of @devices[i]) that
 * cs_ref_wrong() finds wrong against @expect[i] into @wrong[i]: every kernel queued first,
 * then one wait per device. Returns 0, or -1 with @err set. */
int cs_cuda_check_count_wrong(int n, const int *devices, const void *const *got,
                              const CsRefExpect *expect, int64_t *wrong, char *err);

#ifdef __cplusplus
}
#endif
