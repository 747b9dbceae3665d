// SPDX-License-Identifier: MIT
/* Pairwise exchange all-to-all: P - 1 rounds; in round k rank r sends its block for r + k to
 * r + k and receives from r - k the block r - k holds for it. Every round every rank sends
 * and receives exactly one block, so no link or port is oversubscribed: the bandwidth-side
 * classic for large blocks (Thakur, Rabenseifner and Gropp, IJHPCA 19(1) 2005, §4.5; MPICH
 * uses r XOR k for powers of two, (r + k) mod P in general, as here).
 *
 * Each block is split across channels (channel c moves slice c of every block), and each
 * exchange alternates chunk by chunk (cs_algo_exchange). */
#include "algos/algo.h"

static int
mod(int a, int p)
{
    return ((a % p) + p) % p;
}

static gboolean
pairwise_supports(const CsTopo *topo, CsOp op, int nranks, const char **why)
{
    (void)topo;
    (void)nranks;
    if (op != CS_OP_ALL_TO_ALL) {
        *why = "pairwise exchange is an all-to-all algorithm";
        return FALSE;
    }
    return TRUE;
}

static CsSchedule *
pairwise_build(const CsAlgoArgs *args, GError **error)
{
    (void)error;
    g_autoptr(CsSchedule) sched = cs_algo_schedule_new(args);
    int P = args->nranks;
    gint64 ts = cs_dtype_size(args->dtype);
    gint64 block = cs_schedule_size(sched)->block_bytes;
    gint64 chunk = cs_algo_chunk_bytes(args);
    for (int c = 0; c < args->n_channels; c++) {
        gint64 first;
        gint64 n;
        cs_algo_split(block / ts, args->n_channels, c, &first, &n);
        if (n == 0)
            continue;
        gint64 sub = first * ts;
        gint64 len = n * ts;
        for (int r = 0; r < P; r++) {
            cs_schedule_step(sched, r, c, CS_STEP_COPY, -1, -1, CS_BUF_INPUT, r * block + sub,
                             CS_BUF_OUTPUT, r * block + sub, len, 0);
            for (int k = 1; k < P; k++) {
                int to = mod(r + k, P);
                int from = mod(r - k, P);
                CsRegion send = { CS_BUF_INPUT, to * block + sub, len };
                CsRegion recv = { CS_BUF_OUTPUT, from * block + sub, len };
                cs_algo_exchange(sched, r, c, chunk, to, &send, 1, from, &recv, 1, NULL);
            }
        }
    }
    return g_steal_pointer(&sched);
}

const CsAlgo cs_algo_pairwise = {
    .name = "pairwise",
    .summary = "pairwise exchange all-to-all: P-1 rounds, one peer each way per round",
    .reference = "Thakur, Rabenseifner & Gropp, IJHPCA 19(1) 2005 §4.5 (pairwise exchange)",
    .ops = CS_OP_BIT(CS_OP_ALL_TO_ALL),
    .supports = pairwise_supports,
    .build = pairwise_build,
};
