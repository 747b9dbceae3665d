// SPDX-License-Identifier: MIT
/* NVLS on one switch of 100, 128 and 257 GPUs (suite 'slow'): test-algo-nvls.c's checker. */
#define NVLS_SLOW 1
#include "test-algo-nvls.c"
