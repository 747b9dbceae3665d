// SPDX-License-Identifier: MIT
/* The checker sweep at large P (suite 'slow'): test-algos.c with the big rank counts. */
#define SWEEP_SLOW 1
#include "test-algos.c"
