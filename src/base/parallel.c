// SPDX-License-Identifier: MIT
/* Parallel loops on GLib's GThreadPool: the items are pushed in index order to a pool of
 * --jobs threads; the calling thread waits for them and reports each that ends. */
#include "base/parallel.h"

#include <string.h>

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

/* ---- Ranks of a study ----
 *
 * Every exchange is one round of the CsParallelAllgather: each rank's message starts with what
 * it is doing (a loop of n items, or the end of the command with its status), so a rank that
 * took another path than the others (an input only it could not read) meets them in a round
 * they all read alike, instead of in a hang. */

typedef enum {
    ROUND_LOOP = 1, /* then n, then (index, length, bytes) per item of the sender's share */
    ROUND_END = 2,  /* then the exit status, then the error text (nullable) */
} Round;

static struct {
    int rank;
    int n_ranks;
    CsParallelAllgather allgather;
    CsParallelLeave leave;
} world = { 0, 1, NULL, NULL };

struct _CsUnpack {
    const guint8 *p;
    gsize left;
};

void
cs_parallel_set_ranks(int rank, int n_ranks, CsParallelAllgather allgather, CsParallelLeave leave)
{
    g_return_if_fail(n_ranks >= 1 && rank >= 0 && rank < n_ranks);
    g_return_if_fail(allgather != NULL && leave != NULL);
    world.rank = rank;
    world.n_ranks = n_ranks;
    world.allgather = allgather;
    world.leave = leave;
}

int
cs_parallel_rank(void)
{
    return world.rank;
}

int
cs_parallel_n_ranks(void)
{
    return world.n_ranks;
}

void
cs_pack_int(GByteArray *out, gint64 v)
{
    g_byte_array_append(out, (const guint8 *)&v, sizeof(v));
}

void
cs_pack_double(GByteArray *out, double v)
{
    /* The bits themselves: a time is the same double on every rank. */
    g_byte_array_append(out, (const guint8 *)&v, sizeof(v));
}

void
cs_pack_string(GByteArray *out, const char *s)
{
    if (s == NULL) {
        cs_pack_int(out, -1);
        return;
    }
    const gsize len = strlen(s);
    cs_pack_int(out, (gint64)len);
    g_byte_array_append(out, (const guint8 *)s, (guint)len);
}

void
cs_pack_error(GByteArray *out, const GError *error)
{
    if (error == NULL) {
        cs_pack_string(out, NULL);
        return;
    }
    cs_pack_string(out, g_quark_to_string(error->domain));
    cs_pack_int(out, error->code);
    cs_pack_string(out, error->message);
}

CsUnpack *
cs_unpack_new(const guint8 *data, gsize len)
{
    g_return_val_if_fail(data != NULL || len == 0, NULL);
    CsUnpack *in = g_new(CsUnpack, 1);
    in->p = data;
    in->left = len;
    return in;
}

void
cs_unpack_free(CsUnpack *in)
{
    g_free(in);
}

gsize
cs_unpack_left(const CsUnpack *in)
{
    return in->left;
}

static const guint8 *
take(CsUnpack *in, gsize n)
{
    if (in->left < n)
        g_error("a rank's packed results end %" G_GSIZE_FORMAT " bytes early: the ranks do not "
                "run the same collsim build",
                n - in->left);
    const guint8 *p = in->p;
    in->p += n;
    in->left -= n;
    return p;
}

gint64
cs_unpack_int(CsUnpack *in)
{
    gint64 v;
    memcpy(&v, take(in, sizeof(v)), sizeof(v));
    return v;
}

double
cs_unpack_double(CsUnpack *in)
{
    double v;
    memcpy(&v, take(in, sizeof(v)), sizeof(v));
    return v;
}

char *
cs_unpack_string(CsUnpack *in)
{
    const gint64 len = cs_unpack_int(in);
    if (len < 0)
        return NULL;
    return g_strndup((const char *)take(in, (gsize)len), (gsize)len);
}

const char *
cs_unpack_interned(CsUnpack *in)
{
    g_autofree char *s = cs_unpack_string(in);
    return s != NULL ? g_intern_string(s) : NULL;
}

GError *
cs_unpack_error(CsUnpack *in)
{
    g_autofree char *domain = cs_unpack_string(in);
    if (domain == NULL)
        return NULL;
    const int code = (int)cs_unpack_int(in);
    g_autofree char *message = cs_unpack_string(in);
    return g_error_new_literal(g_quark_from_string(domain), code, message);
}

/* One round: @mine (consumed) to every rank, each rank's message opened for reading. */
static GPtrArray *
round_trip(GByteArray *mine, CsUnpack *ins)
{
    g_autoptr(GBytes) bytes = g_byte_array_free_to_bytes(mine);
    GPtrArray *all = world.allgather(bytes);
    g_assert(all != NULL && all->len == (guint)world.n_ranks);
    for (int r = 0; r < world.n_ranks; r++) {
        gsize len = 0;
        ins[r].p = g_bytes_get_data(g_ptr_array_index(all, r), &len);
        ins[r].left = len;
    }
    return all;
}

/* Each rank's exit status and text from a round whose messages @ins have their kind and
 * first number read (@kind, @number); the same answer on every rank. */
static int
round_outcome(const int *kind, const gint64 *number, CsUnpack *ins, char **report)
{
    const int n = world.n_ranks;
    g_autofree int *status = g_new0(int, n);
    char **text = g_new0(char *, n + 1);
    for (int r = 0; r < n; r++) {
        if (kind[r] == ROUND_END) {
            status[r] = (int)number[r];
            text[r] = cs_unpack_string(&ins[r]);
        }
        else {
            status[r] = 1;
            text[r] = g_strdup_printf("(rank %d) collsim: still in a loop of %" G_GINT64_FORMAT
                                      " items when another rank was not (do all ranks read the "
                                      "same inputs?)\n",
                                      r, number[r]);
        }
    }
    /* The first error a rank ended with; a rank still in a loop only failed because of it. */
    int final = 0;
    for (int r = 0; r < n && final == 0; r++)
        if (kind[r] == ROUND_END)
            final = status[r];
    for (int r = 0; r < n && final == 0; r++)
        final = status[r];
    GString *out = g_string_new(text[0]);
    for (int r = 1; r < n; r++) {
        /* A rank that ended well, or as rank 0 did, adds nothing to say. */
        if (status[r] == 0 || (status[r] == status[0] && g_strcmp0(text[r], text[0]) == 0))
            continue;
        if (kind[r] != ROUND_END)
            g_string_append(out, text[r]);
        else if (text[r] != NULL)
            g_string_append_printf(out, "(rank %d) %s", r, text[r]);
        else
            g_string_append_printf(out, "(rank %d) collsim: ended with status %d\n", r, status[r]);
    }
    g_strfreev(text);
    if (report != NULL)
        *report = world.rank == 0 && out->len > 0 ? g_string_free(out, FALSE) : NULL;
    if (report == NULL || *report == NULL)
        g_string_free(out, TRUE);
    return final;
}

/* Reads the kind and number of each rank's message. */
static void
round_heads(CsUnpack *ins, int *kind, gint64 *number)
{
    for (int r = 0; r < world.n_ranks; r++) {
        kind[r] = (int)cs_unpack_int(&ins[r]);
        number[r] = cs_unpack_int(&ins[r]);
    }
}

/**
 * cs_parallel_ranks_end:
 * The round every rank of a study ends with (main() calls it once): see parallel.h.
 */
int
cs_parallel_ranks_end(int status, const char *message, char **report)
{
    if (report != NULL)
        *report = NULL;
    if (world.n_ranks <= 1) {
        if (report != NULL)
            *report = g_strdup(message);
        return status;
    }
    GByteArray *mine = g_byte_array_new();
    cs_pack_int(mine, ROUND_END);
    cs_pack_int(mine, status);
    cs_pack_string(mine, message);
    g_autofree CsUnpack *ins = g_new0(CsUnpack, world.n_ranks);
    /* The received buffers @ins points into, kept until the return. */
    g_autoptr(GPtrArray) all = round_trip(mine, ins);
    (void)all;
    g_autofree int *kind = g_new(int, world.n_ranks);
    g_autofree gint64 *number = g_new(gint64, world.n_ranks);
    round_heads(ins, kind, number);
    return round_outcome(kind, number, ins, report);
}

/* This rank's share of a loop: the items i with i mod n_ranks == rank. */
typedef struct {
    CsParallelFunc func;
    CsParallelDone done;
    gpointer data;
    const guint *items;
} Share;

static void
share_item(guint k, gpointer data)
{
    const Share *s = data;
    s->func(s->items[k], s->data);
}

static void
share_done(guint done, guint k, gpointer data)
{
    const Share *s = data;
    if (s->done != NULL)
        s->done(done, s->items[k], s->data);
}

/**
 * cs_parallel_for_ranks:
 * Items go to the ranks in runs of @grain, run k to rank k mod n_ranks: with @grain 1 the
 * sizes or candidates of a loop are dealt in order, so each rank gets small and large ones
 * alike. See parallel.h.
 */
void
cs_parallel_for_ranks(guint n, guint grain, int jobs, CsParallelFunc func, CsParallelDone done,
                      CsParallelPack pack, CsParallelUnpack unpack, gpointer data)
{
    g_return_if_fail(func != NULL && pack != NULL && unpack != NULL);
    if (world.n_ranks <= 1) {
        cs_parallel_for(n, jobs, func, done, data);
        return;
    }
    const guint n_ranks = (guint)world.n_ranks;
    g_autofree guint *items = g_new(guint, MAX(n, 1));
    guint count = 0;
    grain = MAX(grain, 1);
    for (guint i = 0; i < n; i++)
        if ((i / grain) % n_ranks == (guint)world.rank)
            items[count++] = i;
    g_debug("rank %d of %d: %u of %u items", world.rank, world.n_ranks, count, n);
    const Share share = { func, done, data, items };
    cs_parallel_for(count, jobs, share_item, share_done, (gpointer)&share);

    GByteArray *mine = g_byte_array_new();
    cs_pack_int(mine, ROUND_LOOP);
    cs_pack_int(mine, n);
    for (guint k = 0; k < count; k++) {
        cs_pack_int(mine, items[k]);
        const guint at = mine->len;
        cs_pack_int(mine, 0);
        pack(items[k], mine, data);
        const gint64 len = (gint64)(mine->len - at - sizeof(gint64));
        memcpy(mine->data + at, &len, sizeof(len));
    }
    g_autofree CsUnpack *ins = g_new0(CsUnpack, n_ranks);
    /* The received buffers @ins points into, kept until the return. */
    g_autoptr(GPtrArray) all = round_trip(mine, ins);
    (void)all;
    g_autofree int *kind = g_new(int, n_ranks);
    g_autofree gint64 *number = g_new(gint64, n_ranks);
    round_heads(ins, kind, number);
    for (guint r = 0; r < n_ranks; r++) {
        if (kind[r] == ROUND_LOOP && number[r] == (gint64)n)
            continue;
        /* Another rank is elsewhere: the study cannot go on. */
        g_autofree char *report = NULL;
        const int status = round_outcome(kind, number, ins, &report);
        world.leave(status, report);
        g_assert_not_reached();
    }
    guint told = count;
    for (guint r = 0; r < n_ranks; r++) {
        if (r == (guint)world.rank)
            continue;
        while (ins[r].left > 0) {
            const gint64 index = cs_unpack_int(&ins[r]);
            const gint64 len = cs_unpack_int(&ins[r]);
            g_assert(index >= 0 && index < (gint64)n && (index / grain) % n_ranks == r);
            CsUnpack item = { take(&ins[r], (gsize)len), (gsize)len };
            unpack((guint)index, &item, data);
            g_assert(item.left == 0);
            if (done != NULL)
                done(++told, (guint)index, data);
        }
    }
}
