// SPDX-License-Identifier: MIT
/* The algorithm interface: argument defaults, the checked entry point cs_algo_build(), and
 * small helpers the algorithm files share (block splits, chunked transfers). */
#include "algos/algo.h"

/* ---- Arguments ---- */

/**
 * cs_algo_args_init:
 * Fills @args for @op on @nranks ranks of @size_bytes (nccl-tests' size column): root 0,
 * float, sum, Simple, one channel, the protocol's chunk. @topo is nullable.
 */
void
cs_algo_args_init(CsAlgoArgs *args, const CsTopo *topo, CsOp op, int nranks, gint64 size_bytes)
{
    g_return_if_fail(args != NULL);
    *args = (CsAlgoArgs){
        .topo = topo,
        .op = op,
        .nranks = nranks,
        .root = 0,
        .size_bytes = size_bytes,
        .dtype = CS_DTYPE_FLOAT,
        .redop = CS_REDOP_SUM,
        .proto = CS_PROTO_SIMPLE,
        .n_channels = 1,
        .peer_channels = 0,
        .chunk_bytes = 0,
    };
}

/**
 * cs_algo_default_chunk:
 * The protocol's chunk per channel step: the data one of NCCL's CS_NCCL_STEPS slots carries
 * (Simple 512 KiB, LL 32 KiB, LL128 576,000 B; models/protocol.c), so one message fills
 * one slot of the receiver's buffer. Rounded down to whole elements, at least one.
 */
gint64
cs_algo_default_chunk(const CsAlgoArgs *args)
{
    g_return_val_if_fail(args != NULL, 0);
    gint64 ts = cs_dtype_size(args->dtype);
    gint64 slot = cs_proto_info(args->proto)->slot_data_bytes;
    return MAX(slot / ts, 1) * ts;
}

gint64
cs_algo_chunk_bytes(const CsAlgoArgs *args)
{
    g_return_val_if_fail(args != NULL, 0);
    if (args->chunk_bytes <= 0)
        return cs_algo_default_chunk(args);
    gint64 ts = cs_dtype_size(args->dtype);
    return MAX(args->chunk_bytes / ts, 1) * ts;
}

gint64
cs_algo_step_chunk(const CsAlgo *algo, const CsAlgoArgs *args)
{
    g_return_val_if_fail(algo != NULL && args != NULL, 0);
    if (args->chunk_bytes <= 0 && algo->chunk != NULL)
        return algo->chunk(args);
    return cs_algo_chunk_bytes(args);
}

gint64
cs_algo_loop_bytes(const CsAlgo *algo, const CsAlgoArgs *args)
{
    g_return_val_if_fail(algo != NULL && args != NULL, 0);
    int parts = algo->parts != NULL ? algo->parts(args) : args->nranks;
    return (gint64)MAX(parts, 1) * MAX(args->n_channels, 1) * cs_algo_step_chunk(algo, args);
}

/* ---- Building ---- */

static gboolean
check_args(const CsAlgoArgs *args, GError **error)
{
    const char *problem = NULL;
    if (args->op < 0 || args->op >= CS_N_OPS)
        problem = "unknown collective";
    else if (args->nranks < 1)
        problem = "needs at least one rank";
    else if (cs_op_has_root(args->op) && (args->root < 0 || args->root >= args->nranks))
        problem = "root is not one of the ranks";
    else if (args->size_bytes < 0)
        problem = "negative size";
    else if (args->dtype < 0 || args->dtype >= CS_N_DTYPES)
        problem = "unknown datatype";
    else if (args->redop < 0 || args->redop >= CS_N_REDOPS)
        problem = "unknown reduction operator";
    else if (args->proto < 0 || args->proto >= CS_N_PROTOS)
        problem = "unknown protocol";
    else if (args->n_channels < 1 || args->n_channels > 128)
        problem = "channels must be 1 to 128 (RCCL's MAXCHANNELS; NCCL's is 64)";
    else if (args->chunk_bytes < 0)
        problem = "negative chunk size";
    else if (args->shares < CS_ALGO_SHARES_EXACT || args->shares > CS_ALGO_SHARES_HIGH)
        problem = "unknown shares";
    else if (args->topo != NULL && cs_topo_n_ranks(args->topo) != args->nranks)
        problem = "rank count differs from the topology's";
    if (problem == NULL)
        return TRUE;
    g_set_error(error, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_INVALID,
                "%s on %d ranks (root %d, %" G_GINT64_FORMAT " bytes, %d channels): %s",
                args->op >= 0 && args->op < CS_N_OPS ? cs_op_name(args->op) : "?", args->nranks,
                args->root, args->size_bytes, args->n_channels, problem);
    return FALSE;
}

/**
 * cs_algo_build:
 * Checks @args, that @algo implements the collective and supports this case, then builds and
 * seals the schedule and records the algorithm's name in it.
 * Returns: (transfer full) (nullable): the sealed schedule, or NULL with CS_SCHEDULE_ERROR
 * (INVALID for bad arguments, UNSUPPORTED when the algorithm refuses) naming algo and op.
 */
int
cs_algo_period(const CsAlgo *algo, const CsAlgoArgs *args)
{
    g_return_val_if_fail(algo != NULL && args != NULL, 1);
    if (args->period_min <= 0 || algo->period == NULL || args->nranks <= 1)
        return args->nranks;
    const int T = algo->period(args);
    g_return_val_if_fail(T >= 1 && T <= args->nranks && args->nranks % T == 0, args->nranks);
    return T;
}

CsSchedule *
cs_algo_build(const CsAlgo *algo, const CsAlgoArgs *args, GError **error)
{
    g_return_val_if_fail(algo != NULL && args != NULL, NULL);
    g_return_val_if_fail(error == NULL || *error == NULL, NULL);
    if (!check_args(args, error)) {
        g_prefix_error(error, "%s: ", algo->name);
        return NULL;
    }
    if ((algo->ops & CS_OP_BIT(args->op)) == 0) {
        g_autoptr(GString) served = g_string_new(NULL);
        for (int op = 0; op < CS_N_OPS; op++)
            if (algo->ops & CS_OP_BIT(op))
                g_string_append_printf(served, "%s%s", served->len > 0 ? ", " : "",
                                       cs_op_name((CsOp)op));
        g_set_error(error, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_UNSUPPORTED,
                    "algorithm %s does not implement %s (it implements: %s)", algo->name,
                    cs_op_name(args->op), served->str);
        return NULL;
    }
    const char *why = NULL;
    if (algo->supports != NULL && !algo->supports(args->topo, args->op, args->nranks, &why)) {
        g_set_error(error, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_UNSUPPORTED,
                    "algorithm %s cannot run %s on %d ranks: %s", algo->name, cs_op_name(args->op),
                    args->nranks, why != NULL ? why : "not supported");
        return NULL;
    }
    /* Each sending step carries one chunk at most: a schedule whose bytes need more steps
     * than a schedule may hold is refused before it fills memory. */
    CsAlgoBound bound;
    const gint64 chunk = cs_algo_step_chunk(algo, args);
    const gint64 max_steps = (gint64)cs_schedule_max_steps();
    double est_steps = 0; /* the steps it would hold, where estimated; 0: unknown */
    gboolean too_large = algo->bound != NULL && algo->bound(args, &bound)
                         && bound.bytes_sent / MAX(chunk, 1) > max_steps;
    if (too_large)
        est_steps = (double)(bound.bytes_sent / MAX(chunk, 1));
    /* One period of ranks holds that share of the steps (asked only then: a ring's period
     * costs its orders). */
    if (too_large && args->period_min > 0) {
        est_steps /= args->nranks / cs_algo_period(algo, args);
        too_large = est_steps > (double)max_steps;
    }
    /* Past 16 loops every loop adds the same steps (the predictor extends sizes on that
     * line): one loop's schedule, times the whole loops, is a count the whole one reaches. */
    const gint64 loop = cs_algo_loop_bytes(algo, args);
    if (!too_large && loop > 0 && args->size_bytes / loop >= 16) {
        CsAlgoArgs probe_args = *args;
        probe_args.size_bytes = loop;
        probe_args.chunk_bytes = chunk;
        CsSchedule *probe = algo->build(&probe_args, NULL);
        if (probe != NULL) {
            est_steps = (double)cs_schedule_n_steps(probe) * (double)(args->size_bytes / loop);
            too_large = est_steps > (double)max_steps;
            cs_schedule_free(probe);
        }
    }
    CsSchedule *sched = too_large ? NULL : algo->build(args, error);
    if (sched != NULL && cs_schedule_overflowed(sched)) {
        cs_schedule_free(sched);
        sched = NULL;
        too_large = TRUE;
    }
    if (too_large) {
        g_autofree char *reason = cs_schedule_limit_reason(est_steps);
        g_set_error(error, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_TOO_LARGE,
                    "%s %s of %" G_GINT64_FORMAT " bytes on %d ranks and %d channels in chunks "
                    "of %" G_GINT64_FORMAT " bytes: %s",
                    algo->name, cs_op_name(args->op), args->size_bytes, args->nranks,
                    args->n_channels, chunk, reason);
        return NULL;
    }
    if (sched == NULL) {
        g_prefix_error(error, "%s %s: ", algo->name, cs_op_name(args->op));
        return NULL;
    }
    cs_schedule_set_algo(sched, algo->name);
    cs_schedule_seal(sched);
    return sched;
}

/* ---- Helpers for the algorithm files ---- */

CsSchedule *
cs_algo_schedule_new(const CsAlgoArgs *args)
{
    g_return_val_if_fail(args != NULL, NULL);
    return cs_schedule_new(args->op, args->nranks, args->root, args->size_bytes, args->dtype,
                           args->redop, args->proto, args->n_channels);
}

void
cs_algo_split(gint64 count, int parts, int i, gint64 *first, gint64 *n)
{
    g_return_if_fail(parts >= 1 && i >= 0 && i < parts && count >= 0);
    gint64 q = count / parts;
    gint64 rem = count % parts;
    *first = i * q + MIN(i, rem);
    *n = q + (i < rem ? 1 : 0);
}

void
cs_algo_send_chunked(CsSchedule *sched, int rank, int channel, int peer, CsBuffer buf,
                     gint64 offset, gint64 bytes, gint64 chunk_bytes)
{
    g_return_if_fail(chunk_bytes > 0);
    for (gint64 at = 0, k = 0; at < bytes; at += chunk_bytes, k++)
        cs_schedule_send(sched, rank, channel, peer, buf, offset + at, MIN(chunk_bytes, bytes - at),
                         (int)k);
}

void
cs_algo_recv_chunked(CsSchedule *sched, int rank, int channel, int peer, CsBuffer buf,
                     gint64 offset, gint64 bytes, gint64 chunk_bytes)
{
    g_return_if_fail(chunk_bytes > 0);
    for (gint64 at = 0, k = 0; at < bytes; at += chunk_bytes, k++)
        cs_schedule_recv(sched, rank, channel, peer, buf, offset + at, MIN(chunk_bytes, bytes - at),
                         (int)k);
}

void
cs_algo_copy_input(CsSchedule *sched)
{
    gint64 bytes = MIN(cs_schedule_buffer_bytes(sched, CS_BUF_INPUT),
                       cs_schedule_buffer_bytes(sched, CS_BUF_OUTPUT));
    if (bytes > 0)
        cs_schedule_step(sched, 0, 0, CS_STEP_COPY, -1, -1, CS_BUF_INPUT, 0, CS_BUF_OUTPUT, 0,
                         bytes, 0);
}

gboolean
cs_algo_supports_ops(CsOpMask ops, CsOp op, const char *refusal, const char **why)
{
    if ((ops & CS_OP_BIT(op)) == 0) {
        *why = refusal;
        return FALSE;
    }
    return TRUE;
}

gboolean
cs_algo_one_rank_done(CsSchedule *sched)
{
    if (cs_schedule_n_ranks(sched) != 1)
        return FALSE;
    cs_algo_copy_input(sched);
    return TRUE;
}

CsAlgoFold
cs_algo_fold_new(int nranks)
{
    CsAlgoFold f = { .nranks = nranks, .pof2 = 1 };
    while (f.pof2 * 2 <= nranks)
        f.pof2 *= 2;
    f.rem = nranks - f.pof2;
    return f;
}

int
cs_algo_fold_participant(const CsAlgoFold *f, int r)
{
    if (r < 2 * f->rem)
        return r % 2 == 0 ? -1 : r / 2;
    return r - f->rem;
}

int
cs_algo_fold_rank(const CsAlgoFold *f, int i)
{
    return i < f->rem ? 2 * i + 1 : i + f->rem;
}

int
cs_algo_fold_first_block(const CsAlgoFold *f, int i)
{
    return i < f->rem ? 2 * i : i + f->rem;
}

CsRegion
cs_algo_region(CsBuffer buf, gint64 offset, gint64 bytes)
{
    return (CsRegion){ .buf = buf, .offset = offset, .bytes = bytes };
}

/* The k-th message of @regions cut into chunks: region index and offset within it. */
typedef struct {
    const CsRegion *regions;
    int n;
    int i;     /* current region */
    gint64 at; /* bytes into it */
} ChunkIter;

static gboolean
chunk_next(ChunkIter *it, gint64 chunk_bytes, int *region, gint64 *at, gint64 *bytes)
{
    while (it->i < it->n && it->at >= it->regions[it->i].bytes) {
        it->i++;
        it->at = 0;
    }
    if (it->i >= it->n)
        return FALSE;
    *region = it->i;
    *at = it->at;
    *bytes = MIN(chunk_bytes, it->regions[it->i].bytes - it->at);
    it->at += *bytes;
    return TRUE;
}

void
cs_algo_exchange(CsSchedule *sched, int rank, int channel, gint64 chunk_bytes, int send_peer,
                 const CsRegion *send, int n_send, int recv_peer, const CsRegion *recv, int n_recv,
                 const CsRegion *reduce_src)
{
    g_return_if_fail(chunk_bytes > 0);
    ChunkIter out = { .regions = send, .n = n_send };
    ChunkIter in = { .regions = recv, .n = n_recv };
    gboolean more_out = TRUE;
    gboolean more_in = TRUE;
    for (int k = 0; more_out || more_in; k++) {
        int i;
        gint64 at;
        gint64 bytes;
        more_out = more_out && chunk_next(&out, chunk_bytes, &i, &at, &bytes);
        if (more_out)
            cs_schedule_send(sched, rank, channel, send_peer, send[i].buf, send[i].offset + at,
                             bytes, k);
        more_in = more_in && chunk_next(&in, chunk_bytes, &i, &at, &bytes);
        if (more_in && reduce_src == NULL)
            cs_schedule_recv(sched, rank, channel, recv_peer, recv[i].buf, recv[i].offset + at,
                             bytes, k);
        else if (more_in)
            cs_schedule_step(sched, rank, channel, CS_STEP_RECV_REDUCE, recv_peer, -1,
                             reduce_src[i].buf, reduce_src[i].offset + at, recv[i].buf,
                             recv[i].offset + at, bytes, k);
    }
}
