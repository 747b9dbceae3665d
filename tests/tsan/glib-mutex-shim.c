// SPDX-License-Identifier: MIT
/* ThreadSanitizer cannot see GLib's GMutex and GCond on Linux: GLib implements them on raw
 * futexes, so every access guarded by one looks like a race. Preloaded into a -fsanitize=thread
 * build (LD_PRELOAD; docs/testing.md, "Threads"), this library puts the GMutex and GCond calls that
 * collsim makes on pthread mutexes and condition variables, which TSAN intercepts: what is left
 * is a real race. GLib's calls inside itself are not redirected (nor need to be: collsim reads
 * no data GLib's own locks guard). Each GMutex/GCond holds a pointer to its pthread object,
 * made on first use, so statically zeroed ones (G_LOCK_DEFINE) work too. Not part of collsim. */
#include <pthread.h>
#include <stdlib.h>

#include <glib.h>

/* Guards the first use of every GMutex and GCond. A pthread call, so TSAN sees it although
 * this file is built without -fsanitize=thread (then it loads into any process: meson, sh). */
static pthread_mutex_t first_use = PTHREAD_MUTEX_INITIALIZER;

static pthread_mutex_t *
mutex_of(GMutex *m)
{
    pthread_mutex_lock(&first_use);
    if (m->p == NULL) {
        pthread_mutex_t *p = malloc(sizeof *p);
        pthread_mutex_init(p, NULL);
        m->p = p;
    }
    pthread_mutex_t *p = m->p;
    pthread_mutex_unlock(&first_use);
    return p;
}

static pthread_cond_t *
cond_of(GCond *c)
{
    pthread_mutex_lock(&first_use);
    if (c->p == NULL) {
        pthread_cond_t *p = malloc(sizeof *p);
        pthread_cond_init(p, NULL);
        c->p = p;
    }
    pthread_cond_t *p = c->p;
    pthread_mutex_unlock(&first_use);
    return p;
}

void
g_mutex_init(GMutex *m)
{
    m->p = NULL;
}

void
g_mutex_clear(GMutex *m)
{
    pthread_mutex_t *p = m->p;
    if (p != NULL) {
        pthread_mutex_destroy(p);
        free(p);
    }
    m->p = NULL;
}

void
g_mutex_lock(GMutex *m)
{
    pthread_mutex_lock(mutex_of(m));
}

void
g_mutex_unlock(GMutex *m)
{
    pthread_mutex_unlock(mutex_of(m));
}

gboolean
g_mutex_trylock(GMutex *m)
{
    return pthread_mutex_trylock(mutex_of(m)) == 0;
}

void
g_cond_init(GCond *c)
{
    c->p = NULL;
}

void
g_cond_clear(GCond *c)
{
    pthread_cond_t *p = c->p;
    if (p != NULL) {
        pthread_cond_destroy(p);
        free(p);
    }
    c->p = NULL;
}

void
g_cond_wait(GCond *c, GMutex *m)
{
    pthread_cond_wait(cond_of(c), mutex_of(m));
}

void
g_cond_signal(GCond *c)
{
    pthread_cond_signal(cond_of(c));
}

void
g_cond_broadcast(GCond *c)
{
    pthread_cond_broadcast(cond_of(c));
}
