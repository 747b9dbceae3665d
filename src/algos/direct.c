// SPDX-License-Identifier: MIT
/* Direct send/recv: the root (scatter, gather) or every rank (all-to-all) talks to each peer
 * itself, all peers in flight together. This is how NCCL runs these collectives: there is no
 * ncclScatter, ncclGather or ncclAllToAll kernel; nccl-tests' scatter.cu, gather.cu and
 * alltoall.cu issue ncclSend/ncclRecv to every peer inside ncclGroupStart/End, and NCCL's
 * p2p scheduler (src/enqueue.cc, NCCL 2.28) progresses them side by side chunk by chunk.
 *
 * Here each chunk round visits every peer before the next chunk starts, so every connection
 * has at most one chunk in flight per round and all peers progress together; each block is
 * split across channels (channel c moves slice c of every block). One round of alpha for any
 * P, but the root's (or every rank's) link carries all P - 1 blocks: the choice for small
 * P or fat switches. */
#include "algos/algo.h"

#define DIRECT_OPS                                                                                 \
    (CS_OP_BIT(CS_OP_SCATTER) | CS_OP_BIT(CS_OP_GATHER) | CS_OP_BIT(CS_OP_ALL_TO_ALL))

static int
mod(int a, int p)
{
    return ((a % p) + p) % p;
}

/* Slice [@sub, @sub + @len) of every block, chunk by chunk, for one channel. */
static void
direct_channel(CsSchedule *s, CsOp op, int P, int root, int ch, gint64 block, gint64 sub,
               gint64 len, gint64 chunk)
{
    /* The local block first: it needs nobody. */
    for (int r = 0; r < P; r++) {
        gboolean talks = op == CS_OP_ALL_TO_ALL || r == root;
        if (!talks)
            continue;
        gint64 src = op == CS_OP_GATHER ? sub : r * block + sub;
        gint64 dst = op == CS_OP_SCATTER ? sub : r * block + sub;
        cs_schedule_step(s, r, ch, CS_STEP_COPY, -1, -1, CS_BUF_INPUT, src, CS_BUF_OUTPUT, dst, len,
                         0);
    }
    int k = 0;
    for (gint64 at = 0; at < len; at += chunk, k++) {
        gint64 bytes = MIN(chunk, len - at);
        for (int r = 0; r < P; r++) {
            for (int q = 1; q < P; q++) {
                int to = mod(r + q, P);
                /* Who sends to @to: the root (scatter), every rank to the root (gather),
                 * everybody (all-to-all). */
                gboolean sends = op == CS_OP_ALL_TO_ALL || (op == CS_OP_SCATTER && r == root)
                                 || (op == CS_OP_GATHER && to == root);
                if (sends) {
                    gint64 off = op == CS_OP_GATHER ? sub + at : to * block + sub + at;
                    cs_schedule_send(s, r, ch, to, CS_BUF_INPUT, off, bytes, k);
                }
            }
            for (int q = 1; q < P; q++) {
                int from = mod(r - q, P);
                gboolean recvs = op == CS_OP_ALL_TO_ALL || (op == CS_OP_GATHER && r == root)
                                 || (op == CS_OP_SCATTER && from == root);
                if (recvs) {
                    gint64 off = op == CS_OP_SCATTER ? sub + at : from * block + sub + at;
                    cs_schedule_recv(s, r, ch, from, CS_BUF_OUTPUT, off, bytes, k);
                }
            }
        }
    }
}

static gboolean
direct_supports(const CsTopo *topo, CsOp op, int nranks, const char **why)
{
    (void)topo;
    (void)nranks;
    if ((DIRECT_OPS & CS_OP_BIT(op)) == 0) {
        *why = "direct send/recv serves scatter, gather and all-to-all";
        return FALSE;
    }
    return TRUE;
}

static CsSchedule *
direct_build(const CsAlgoArgs *args, GError **error)
{
    (void)error;
    g_autoptr(CsSchedule) sched = cs_algo_schedule_new(args);
    gint64 ts = cs_dtype_size(args->dtype);
    gint64 block = cs_schedule_size(sched)->block_bytes;
    gint64 chunk = cs_algo_chunk_bytes(args);
    int root = cs_op_has_root(args->op) ? args->root : 0;
    for (int c = 0; c < args->n_channels; c++) {
        gint64 first;
        gint64 n;
        cs_algo_split(block / ts, args->n_channels, c, &first, &n);
        if (n > 0)
            direct_channel(sched, args->op, args->nranks, root, c, block, first * ts, n * ts,
                           chunk);
    }
    return g_steal_pointer(&sched);
}

const CsAlgo cs_algo_direct = {
    .name = "direct",
    .summary = "direct grouped send/recv to every peer (NCCL's scatter, gather, all-to-all)",
    .reference = "nccl-tests scatter.cu, gather.cu, alltoall.cu (ncclSend/ncclRecv in a "
                 "group); NCCL 2.28 src/enqueue.cc p2p scheduling",
    .ops = DIRECT_OPS,
    .supports = direct_supports,
    .build = direct_build,
};
