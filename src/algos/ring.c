// SPDX-License-Identifier: MIT
/* Ring algorithms as NCCL runs them: data split across channels, each channel a ring over the
 * ranks in order, pipelined chunk by chunk.
 *
 * - all-reduce: reduce-scatter then all-gather around the ring with NCCL's primitives
 *   (send, recv_reduce_send, recv_reduce_copy_send, recv_copy_send, recv), 2(P-1) steps per
 *   loop of P chunks (NCCL 2.28 src/device/all_reduce.h, runRing);
 * - all-gather: P-1 steps of recv_copy_send (src/device/all_gather.h);
 * - reduce-scatter: P-1 steps of recv_reduce_send ending in a recv_reduce
 *   (src/device/reduce_scatter.h);
 * - broadcast: a pipelined chain from the root (src/device/broadcast.h);
 * - reduce: a pipelined chain ending at the root (src/device/reduce.h).
 * Scatter, gather and all-to-all are not ring collectives in NCCL (they are grouped
 * send/recv: see direct.c). Cost and the bandwidth-optimality of the ring all-reduce:
 * Patarasuk and Yuan, "Bandwidth optimal all-reduce algorithms for clusters of
 * workstations", JPDC 2009; Thakur, Rabenseifner and Gropp, IJHPCA 2005. */
#include "algos/algo.h"

#define RING_OPS                                                                       \
    (CS_OP_BIT (CS_OP_BROADCAST) | CS_OP_BIT (CS_OP_REDUCE) | CS_OP_BIT (CS_OP_ALL_REDUCE) \
     | CS_OP_BIT (CS_OP_ALL_GATHER) | CS_OP_BIT (CS_OP_REDUCE_SCATTER))

/* What one rank of one channel needs to emit its steps. */
typedef struct {
    CsSchedule *sched;
    int nranks;
    int rank;
    int channel;
    int prev;                    /* receives from */
    int next;                    /* sends to */
    gint64 ts;                   /* bytes per element */
} Ring;

static int
mod (int a, int p)
{
    return ((a % p) + p) % p;
}

static void
ring_step (const Ring *g, CsStepKind kind, CsBuffer src_buf, gint64 src_elem, CsBuffer dst_buf,
           gint64 dst_elem, gint64 len, int chunk)
{
    if (len <= 0)
        return;
    int recv_peer = cs_step_kind_recvs (kind) ? g->prev : -1;
    int send_peer = cs_step_kind_sends (kind) ? g->next : -1;
    cs_schedule_step (g->sched, g->rank, g->channel, kind, recv_peer, send_peer, src_buf,
                      src_elem * g->ts, dst_buf, dst_elem * g->ts, len * g->ts, chunk);
}

/* ---- All-reduce ---- */

/* One channel's share [@first, @first + @count) of the vector, in loops of P chunks as
 * NCCL's runRing: each loop's chunk size is ceil(remaining / P), at most @chunk elements. */
static void
all_reduce_channel (const Ring *g, gint64 first, gint64 count, gint64 chunk)
{
    int P = g->nranks;
    int r = g->rank;
    gint64 loop_size = (gint64) P * chunk;
    int loop = 0;
    for (gint64 base = 0; base < count; base += loop_size, loop++) {
        gint64 rest = MIN (loop_size, count - base);
        gint64 cs = (rest + P - 1) / P;
#define AT(j) (first + base + (gint64) (j) * cs)
#define LEN(j) (MAX (0, MIN (cs, rest - (gint64) (j) * cs)))
        int j = mod (r - 1, P);
        ring_step (g, CS_STEP_SEND, CS_BUF_INPUT, AT (j), CS_BUF_INPUT, 0, LEN (j), loop);
        for (int s = 2; s < P; s++) {
            j = mod (r - s, P);
            ring_step (g, CS_STEP_RECV_REDUCE_SEND, CS_BUF_INPUT, AT (j), CS_BUF_OUTPUT, 0,
                       LEN (j), loop);
        }
        j = r;
        ring_step (g, CS_STEP_RECV_REDUCE_COPY_SEND, CS_BUF_INPUT, AT (j), CS_BUF_OUTPUT, AT (j),
                   LEN (j), loop);
        for (int s = 1; s < P - 1; s++) {
            j = mod (r - s, P);
            ring_step (g, CS_STEP_RECV_COPY_SEND, CS_BUF_OUTPUT, 0, CS_BUF_OUTPUT, AT (j),
                       LEN (j), loop);
        }
        j = mod (r + 1, P);
        ring_step (g, CS_STEP_RECV, CS_BUF_OUTPUT, 0, CS_BUF_OUTPUT, AT (j), LEN (j), loop);
#undef AT
#undef LEN
    }
}

/* ---- All-gather and reduce-scatter ---- */

/* Channel share [@sub, @sub + @sub_len) of every rank's block of @n elements, in pieces of
 * @chunk: block j's piece travels from rank j around the ring. */
static void
all_gather_channel (const Ring *g, gint64 n, gint64 sub, gint64 sub_len, gint64 chunk)
{
    int P = g->nranks;
    int r = g->rank;
    int piece = 0;
    for (gint64 base = 0; base < sub_len; base += chunk, piece++) {
        gint64 len = MIN (chunk, sub_len - base);
        gint64 off = sub + base;
        ring_step (g, CS_STEP_SEND, CS_BUF_INPUT, off, CS_BUF_INPUT, 0, len, piece);
        ring_step (g, CS_STEP_COPY, CS_BUF_INPUT, off, CS_BUF_OUTPUT, r * n + off, len, piece);
        for (int s = 1; s < P - 1; s++) {
            int j = mod (r - s, P);
            ring_step (g, CS_STEP_RECV_COPY_SEND, CS_BUF_OUTPUT, 0, CS_BUF_OUTPUT, j * n + off,
                       len, piece);
        }
        int j = mod (r + 1, P);
        ring_step (g, CS_STEP_RECV, CS_BUF_OUTPUT, 0, CS_BUF_OUTPUT, j * n + off, len, piece);
    }
}

static void
reduce_scatter_channel (const Ring *g, gint64 n, gint64 sub, gint64 sub_len, gint64 chunk)
{
    int P = g->nranks;
    int r = g->rank;
    int piece = 0;
    for (gint64 base = 0; base < sub_len; base += chunk, piece++) {
        gint64 len = MIN (chunk, sub_len - base);
        gint64 off = sub + base;
        int j = mod (r - 1, P);
        ring_step (g, CS_STEP_SEND, CS_BUF_INPUT, j * n + off, CS_BUF_INPUT, 0, len, piece);
        for (int s = 2; s < P; s++) {
            j = mod (r - s, P);
            ring_step (g, CS_STEP_RECV_REDUCE_SEND, CS_BUF_INPUT, j * n + off, CS_BUF_OUTPUT, 0,
                       len, piece);
        }
        ring_step (g, CS_STEP_RECV_REDUCE, CS_BUF_INPUT, r * n + off, CS_BUF_OUTPUT, off, len,
                   piece);
    }
}

/* ---- Broadcast and reduce: chains ---- */

/* The chain root, root+1, ..., root-1, piece by piece. */
static void
broadcast_channel (const Ring *g, int root, gint64 first, gint64 count, gint64 chunk)
{
    int v = mod (g->rank - root, g->nranks);
    int piece = 0;
    for (gint64 base = 0; base < count; base += chunk, piece++) {
        gint64 len = MIN (chunk, count - base);
        gint64 off = first + base;
        if (v == 0)
            ring_step (g, CS_STEP_SEND, CS_BUF_INPUT, off, CS_BUF_INPUT, 0, len, piece);
        else if (v < g->nranks - 1)
            ring_step (g, CS_STEP_RECV_COPY_SEND, CS_BUF_OUTPUT, 0, CS_BUF_OUTPUT, off, len,
                       piece);
        else
            ring_step (g, CS_STEP_RECV, CS_BUF_OUTPUT, 0, CS_BUF_OUTPUT, off, len, piece);
    }
    /* The root's own copy comes last: it is off the pipeline's critical path. */
    if (v == 0)
        ring_step (g, CS_STEP_COPY, CS_BUF_INPUT, first, CS_BUF_OUTPUT, first, count, 0);
}

/* The chain root+1, root+2, ..., root, piece by piece. */
static void
reduce_channel (const Ring *g, int root, gint64 first, gint64 count, gint64 chunk)
{
    int v = mod (g->rank - root, g->nranks);
    int piece = 0;
    for (gint64 base = 0; base < count; base += chunk, piece++) {
        gint64 len = MIN (chunk, count - base);
        gint64 off = first + base;
        if (v == 1)
            ring_step (g, CS_STEP_SEND, CS_BUF_INPUT, off, CS_BUF_INPUT, 0, len, piece);
        else if (v > 1)
            ring_step (g, CS_STEP_RECV_REDUCE_SEND, CS_BUF_INPUT, off, CS_BUF_OUTPUT, 0, len,
                       piece);
        else
            ring_step (g, CS_STEP_RECV_REDUCE, CS_BUF_INPUT, off, CS_BUF_OUTPUT, off, len,
                       piece);
    }
}

/* ---- The algorithm ---- */

static gboolean
ring_supports (const CsTopo *topo, CsOp op, int nranks, const char **why)
{
    (void) topo;
    (void) nranks;
    if ((RING_OPS & CS_OP_BIT (op)) == 0) {
        *why = "NCCL runs scatter, gather and all-to-all as grouped send/recv, not rings";
        return FALSE;
    }
    return TRUE;
}

static CsSchedule *
ring_build (const CsAlgoArgs *args, GError **error)
{
    (void) error;
    g_autoptr (CsSchedule) sched = cs_algo_schedule_new (args);
    int P = args->nranks;
    if (P == 1) {
        cs_algo_copy_input (sched);
        return g_steal_pointer (&sched);
    }
    const CsOpSize *size = cs_schedule_size (sched);
    gint64 ts = cs_dtype_size (args->dtype);
    gint64 chunk = cs_algo_chunk_bytes (args) / ts;
    gint64 count = size->count;
    gint64 n = size->block_bytes / ts;

    for (int c = 0; c < args->n_channels; c++) {
        gint64 first;
        gint64 len;
        /* Vector collectives split the vector; block collectives split every block. */
        if (args->op == CS_OP_ALL_GATHER || args->op == CS_OP_REDUCE_SCATTER)
            cs_algo_split (n, args->n_channels, c, &first, &len);
        else
            cs_algo_split (count, args->n_channels, c, &first, &len);
        for (int r = 0; r < P; r++) {
            Ring g = {
                .sched = sched,
                .nranks = P,
                .rank = r,
                .channel = c,
                .prev = mod (r - 1, P),
                .next = mod (r + 1, P),
                .ts = ts,
            };
            switch (args->op) {
            case CS_OP_ALL_REDUCE:
                all_reduce_channel (&g, first, len, chunk);
                break;
            case CS_OP_ALL_GATHER:
                all_gather_channel (&g, n, first, len, chunk);
                break;
            case CS_OP_REDUCE_SCATTER:
                reduce_scatter_channel (&g, n, first, len, chunk);
                break;
            case CS_OP_BROADCAST:
                broadcast_channel (&g, args->root, first, len, chunk);
                break;
            case CS_OP_REDUCE:
                reduce_channel (&g, args->root, first, len, chunk);
                break;
            default:
                g_assert_not_reached ();
            }
        }
    }
    return g_steal_pointer (&sched);
}

const CsAlgo cs_algo_ring = {
    .name = "ring",
    .summary = "pipelined ring per channel (NCCL Ring): bandwidth-optimal, 2(P-1) steps",
    .reference = "NCCL 2.28 src/device/all_reduce.h runRing (and all_gather.h, "
                 "reduce_scatter.h, broadcast.h, reduce.h); Patarasuk & Yuan, JPDC 2009",
    .ops = RING_OPS,
    .supports = ring_supports,
    .build = ring_build,
};
