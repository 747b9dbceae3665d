// SPDX-License-Identifier: MIT
/* Parallel loops on GLib's GThreadPool: the items are pushed in index order to a pool of
 * --jobs threads; the calling thread waits for them and reports each that ends. */
#include "base/parallel.h"

int
cs_parallel_default_jobs(void)
{
    return CLAMP((int)g_get_num_processors(), 1, CS_PARALLEL_MAX_JOBS);
}

typedef struct {
    CsParallelFunc func;
    gpointer data;
    GMutex lock;
    GCond cond;
    GArray *ended; /* guint: indices ended and not yet reported */
} Loop;

static void
run_item(gpointer item, gpointer user)
{
    Loop *loop = user;
    /* Items are pushed as index + 1: a pool never takes a NULL item. */
    const guint index = GPOINTER_TO_UINT(item) - 1;

    loop->func(index, loop->data);
    g_mutex_lock(&loop->lock);
    g_array_append_val(loop->ended, index);
    g_cond_signal(&loop->cond);
    g_mutex_unlock(&loop->lock);
}

/**
 * cs_parallel_for:
 * Runs @func on each index in 0 .. @n - 1 and returns when every call has returned. With
 * @jobs <= 1 (or a single item) the calls run on the calling thread in index order; otherwise
 * on min(@jobs, @n) threads of a pool made for this loop, taking items in index order. After
 * each call ends, @done (nullable) is told on the calling thread (for progress lines).
 */
void
cs_parallel_for(guint n, int jobs, CsParallelFunc func, CsParallelDone done, gpointer data)
{
    g_return_if_fail(func != NULL);
    if (jobs <= 1 || n <= 1) {
        for (guint i = 0; i < n; i++) {
            func(i, data);
            if (done != NULL)
                done(i + 1, i, data);
        }
        return;
    }
    Loop loop = { func, data, { 0 }, { 0 }, g_array_new(FALSE, FALSE, sizeof(guint)) };
    g_mutex_init(&loop.lock);
    g_cond_init(&loop.cond);
    /* Exclusive threads of our own: a shared pool could run the items of two loops at once.
     * None kept once a loop ends: each loop's threads start after its data is written and are
     * joined before it is read, which ThreadSanitizer sees (GLib hands a kept thread its next
     * pool through its own futex-based locks, which it does not). */
    g_thread_pool_set_max_unused_threads(0);
    GThreadPool *pool = g_thread_pool_new(run_item, &loop, (int)MIN((guint)jobs, n), TRUE, NULL);
    g_assert(pool != NULL); /* exclusive pools only fail to start threads: GLib aborts then */
    for (guint i = 0; i < n; i++)
        g_thread_pool_push(pool, GUINT_TO_POINTER(i + 1), NULL);
    guint reported = 0;
    g_mutex_lock(&loop.lock);
    while (reported < n) {
        while (loop.ended->len == 0)
            g_cond_wait(&loop.cond, &loop.lock);
        g_autoptr(GArray) ended = loop.ended;
        loop.ended = g_array_new(FALSE, FALSE, sizeof(guint));
        g_mutex_unlock(&loop.lock);
        for (guint k = 0; k < ended->len; k++) {
            reported++;
            if (done != NULL)
                done(reported, g_array_index(ended, guint, k), data);
        }
        g_mutex_lock(&loop.lock);
    }
    g_mutex_unlock(&loop.lock);
    /* Every item has ended: the threads are idle; wait for them to go. */
    g_thread_pool_free(pool, FALSE, TRUE);
    g_array_unref(loop.ended);
    g_cond_clear(&loop.cond);
    g_mutex_clear(&loop.lock);
}
