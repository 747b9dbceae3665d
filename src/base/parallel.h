// SPDX-License-Identifier: MIT
/* Parallel loops: run the items 0 .. n-1 of a loop on a pool of threads (--jobs), each item
 * writing only its own results, so that the caller merges them in index order and the output
 * never depends on the number of threads. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The most threads --jobs accepts. */
#define CS_PARALLEL_MAX_JOBS 1024

/* Computes item @index of a loop; @data is the caller's. Must touch only what item @index
 * owns, or state that locks. */
typedef void (*CsParallelFunc)(guint index, gpointer data);

/* Told on the calling thread after each item ends, with the items ended so far and the index
 * of the one that just did (in whatever order threads finish them). */
typedef void (*CsParallelDone)(guint done, guint index, gpointer data);

/* The default thread count: the processors this process may run on. */
int cs_parallel_default_jobs(void);

/* Runs @func on every index in 0 .. @n - 1 over @jobs threads (<= 1: on the calling thread, in
 * index order) and returns when all have ended; @done (nullable) is told of each on the calling
 * thread. */
void cs_parallel_for(guint n, int jobs, CsParallelFunc func, CsParallelDone done, gpointer data);

G_END_DECLS
