// SPDX-License-Identifier: MIT
/* Hockney's alpha-beta(-gamma) closed forms of the classic collective algorithms, for teaching
 * and as the engine's test oracle (DESIGN §5).
 *
 * Sources:
 *   [H94]   R. W. Hockney, "The communication challenge for MPP: Intel Paragon and Meiko CS-2",
 *           Parallel Computing 20(3), 1994: T = alpha + n/B and the half-performance size
 *           n_1/2 = alpha * B.
 *   [TRG05] R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of Collective Communication
 *           Operations in MPICH", Int. J. High Performance Computing Applications 19(1), 2005,
 *           section 4 (cost of each algorithm in alpha, beta, gamma).
 *   [C07]   E. Chan, M. Heimlich, A. Purkayastha, R. van de Geijn, "Collective communication:
 *           theory, practice, and experience", Concurrency and Computation: Practice and
 *           Experience 19(13), 2007 (lower bounds; the "bucket" (ring) algorithms).
 *   [PY09]  P. Patarasuk, X. Yuan, "Bandwidth optimal all-reduce algorithms for clusters of
 *           workstations", J. Parallel and Distributed Computing 69(2), 2009 (ring all-reduce).
 *   [PG07]  J. Pjesivac-Grbovic et al., "Performance analysis of MPI collective operations",
 *           Cluster Computing 10(2), 2007 (segmented pipeline/chain broadcast).
 *
 * Conventions: every message costs alpha even when empty (the textbook model; the engine skips
 * empty transfers), P = 1 costs nothing, and sizes follow nccl-tests (see alpha_beta.h).
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "models/alpha_beta.h"

/* ---- Helpers ---- */

/* ceil(log2 P): rounds of a binomial tree over P ranks. */
static int
ceil_log2(int p)
{
    int r = 0;

    while ((1 << r) < p)
        r++;
    return r;
}

/* floor(log2 P), and so 2^floor(log2 P) the largest power of two not above P. */
static int
floor_log2(int p)
{
    int r = 0;

    while ((2 << r) <= p)
        r++;
    return r;
}

/* (P-1)/P, the fraction of the data a rank lacks in gather-like collectives. */
static double
missing_fraction(int p)
{
    return (double)(p - 1) / (double)p;
}

/* ---- Point to point ---- */

/**
 * cs_alpha_beta_p2p:
 * alpha + n/B [H94]: the time of one message.
 */
double
cs_alpha_beta_p2p(double n_bytes, double alpha_s, double bw_Bps)
{
    return alpha_s + n_bytes / bw_Bps;
}

/**
 * cs_alpha_beta_n_half:
 * n_1/2 = alpha * B [H94]: at this size n/B equals alpha, so T = 2 alpha and the achieved
 * bandwidth n/T is exactly B/2. Below it start-ups dominate, above it bandwidth does.
 */
double
cs_alpha_beta_n_half(double alpha_s, double bw_Bps)
{
    return alpha_s * bw_Bps;
}

/* ---- Ring ---- */

/**
 * cs_alpha_beta_ring_allreduce:
 * Ring all-reduce = ring reduce-scatter + ring all-gather [PY09; C07 "bucket"]:
 * 2(P-1) alpha + 2 (P-1)/P n beta + (P-1)/P n gamma, with n the per-rank buffer.
 */
double
cs_alpha_beta_ring_allreduce(int nranks, double n_bytes, double alpha_s, double bw_Bps,
                             double gamma_s_per_byte)
{
    g_return_val_if_fail(nranks >= 1, 0.0);
    double f = missing_fraction(nranks);
    return 2.0 * (nranks - 1) * alpha_s + 2.0 * f * n_bytes / bw_Bps
           + f * n_bytes * gamma_s_per_byte;
}

/**
 * cs_alpha_beta_ring_allgather:
 * (P-1) alpha + (P-1)/P n beta [TRG05 §4.1, ring], n the total: P-1 steps of one n/P block.
 */
double
cs_alpha_beta_ring_allgather(int nranks, double n_bytes, double alpha_s, double bw_Bps,
                             double gamma_s_per_byte)
{
    (void)gamma_s_per_byte;
    g_return_val_if_fail(nranks >= 1, 0.0);
    return (nranks - 1) * alpha_s + missing_fraction(nranks) * n_bytes / bw_Bps;
}

/**
 * cs_alpha_beta_ring_reducescatter:
 * (P-1) alpha + (P-1)/P n beta + (P-1)/P n gamma [C07 "bucket"], n the total: P-1 steps, each
 * receiving and reducing one n/P block.
 */
double
cs_alpha_beta_ring_reducescatter(int nranks, double n_bytes, double alpha_s, double bw_Bps,
                                 double gamma_s_per_byte)
{
    g_return_val_if_fail(nranks >= 1, 0.0);
    double f = missing_fraction(nranks);
    return (nranks - 1) * alpha_s + f * n_bytes / bw_Bps + f * n_bytes * gamma_s_per_byte;
}

/**
 * cs_alpha_beta_ring_broadcast:
 * (P-1)(alpha + n beta): the whole message hops around the ring, store and forward, one hop
 * after the other (the seed article's "ring broadcast", P-1 rounds).
 */
double
cs_alpha_beta_ring_broadcast(int nranks, double n_bytes, double alpha_s, double bw_Bps,
                             double gamma_s_per_byte)
{
    (void)gamma_s_per_byte;
    g_return_val_if_fail(nranks >= 1, 0.0);
    return (nranks - 1) * cs_alpha_beta_p2p(n_bytes, alpha_s, bw_Bps);
}

/**
 * cs_alpha_beta_ring_broadcast_pipelined:
 * The message cut in k = ceil(n / chunk) chunks (at least one) that flow down the P-1 hops
 * of the chain at once [PG07]. Each chunk takes alpha + c_i beta on every hop, so this is a
 * proportionate flow shop whose makespan is the sum of the chunk times plus (hops - 1) times
 * the largest: k alpha + n beta + (P-2)(alpha + c beta), c = min(chunk, n). With equal chunks
 * this is PG07's (P-1 + k-1)(alpha + (n/k) beta). Ranks receive and forward at the same time.
 */
double
cs_alpha_beta_ring_broadcast_pipelined(int nranks, double n_bytes, double chunk_bytes,
                                       double alpha_s, double bw_Bps)
{
    g_return_val_if_fail(nranks >= 1, 0.0);
    g_return_val_if_fail(chunk_bytes > 0.0, 0.0);
    if (nranks == 1)
        return 0.0;
    double k = MAX(1.0, ceil(n_bytes / chunk_bytes));
    double c = MIN(chunk_bytes, n_bytes);
    return k * alpha_s + n_bytes / bw_Bps + (nranks - 2) * cs_alpha_beta_p2p(c, alpha_s, bw_Bps);
}

/**
 * cs_alpha_beta_ring_broadcast_pipelined_optimal:
 * The pipelined chain with the best number of chunks, k* = sqrt((P-2) n beta / alpha) taken as
 * a real number and at least 1 [PG07]: T = (sqrt((P-2) alpha) + sqrt(n beta))^2, which tends
 * to n beta, the bandwidth lower bound of broadcast [C07], as n grows.
 */
double
cs_alpha_beta_ring_broadcast_pipelined_optimal(int nranks, double n_bytes, double alpha_s,
                                               double bw_Bps, double gamma_s_per_byte)
{
    (void)gamma_s_per_byte;
    g_return_val_if_fail(nranks >= 1, 0.0);
    if (nranks == 1)
        return 0.0;
    double nb = n_bytes / bw_Bps;
    double lat = (nranks - 2) * alpha_s;
    /* k* = sqrt(lat nb) / alpha <= 1: cutting does not pay. alpha = 0 gives k* infinite. */
    if (alpha_s > 0.0 && sqrt(lat * nb) <= alpha_s)
        return (nranks - 1) * (alpha_s + nb);
    double r = sqrt(lat) + sqrt(nb);
    return r * r;
}

/* ---- Binomial trees (MST) ---- */

/**
 * cs_alpha_beta_binomial_broadcast:
 * ceil(lg P)(alpha + n beta) [TRG05 §4.2, binomial tree]: each round doubles the ranks that
 * hold the whole message.
 */
double
cs_alpha_beta_binomial_broadcast(int nranks, double n_bytes, double alpha_s, double bw_Bps,
                                 double gamma_s_per_byte)
{
    (void)gamma_s_per_byte;
    g_return_val_if_fail(nranks >= 1, 0.0);
    return ceil_log2(nranks) * cs_alpha_beta_p2p(n_bytes, alpha_s, bw_Bps);
}

/**
 * cs_alpha_beta_binomial_reduce:
 * ceil(lg P)(alpha + n beta + n gamma) [TRG05 §4.3, binomial tree]: broadcast reversed, each
 * round reducing a whole message.
 */
double
cs_alpha_beta_binomial_reduce(int nranks, double n_bytes, double alpha_s, double bw_Bps,
                              double gamma_s_per_byte)
{
    g_return_val_if_fail(nranks >= 1, 0.0);
    return ceil_log2(nranks)
           * (cs_alpha_beta_p2p(n_bytes, alpha_s, bw_Bps) + n_bytes * gamma_s_per_byte);
}

/**
 * cs_alpha_beta_binomial_scatter:
 * ceil(lg P) alpha + (P-1)/P n beta [TRG05 §4.5 / C07 "minimum spanning tree"], n the root's
 * total: the root sends each subtree its blocks, largest subtree first, P-1 blocks in all.
 */
double
cs_alpha_beta_binomial_scatter(int nranks, double n_bytes, double alpha_s, double bw_Bps,
                               double gamma_s_per_byte)
{
    (void)gamma_s_per_byte;
    g_return_val_if_fail(nranks >= 1, 0.0);
    return ceil_log2(nranks) * alpha_s + missing_fraction(nranks) * n_bytes / bw_Bps;
}

/**
 * cs_alpha_beta_binomial_gather:
 * ceil(lg P) alpha + (P-1)/P n beta [TRG05 §4.5, C07]: scatter reversed.
 */
double
cs_alpha_beta_binomial_gather(int nranks, double n_bytes, double alpha_s, double bw_Bps,
                              double gamma_s_per_byte)
{
    return cs_alpha_beta_binomial_scatter(nranks, n_bytes, alpha_s, bw_Bps, gamma_s_per_byte);
}

/* ---- Recursive doubling and halving ---- */

/**
 * cs_alpha_beta_recursive_doubling_allreduce:
 * lg P (alpha + n beta + n gamma) for P a power of two [TRG05 §4.4]: lg P exchanges of the
 * whole vector. Other P fold first, as MPICH does: the first 2r ranks (r = P - 2^floor(lg P))
 * pair up, one of each pair sends its whole vector to the other (alpha + n beta + n gamma)
 * and gets the result back at the end (alpha + n beta).
 */
double
cs_alpha_beta_recursive_doubling_allreduce(int nranks, double n_bytes, double alpha_s,
                                           double bw_Bps, double gamma_s_per_byte)
{
    g_return_val_if_fail(nranks >= 1, 0.0);
    double step = cs_alpha_beta_p2p(n_bytes, alpha_s, bw_Bps) + n_bytes * gamma_s_per_byte;
    double t = floor_log2(nranks) * step;
    if ((nranks & (nranks - 1)) != 0)
        t += step + cs_alpha_beta_p2p(n_bytes, alpha_s, bw_Bps);
    return t;
}

/**
 * cs_alpha_beta_recursive_doubling_allgather:
 * lg P alpha + (P-1)/P n beta for P a power of two [TRG05 §4.1]: round k exchanges 2^k
 * blocks of n/P. For other P the same expression with ceil(lg P) is returned: a lower bound,
 * which Bruck's algorithm attains.
 */
double
cs_alpha_beta_recursive_doubling_allgather(int nranks, double n_bytes, double alpha_s,
                                           double bw_Bps, double gamma_s_per_byte)
{
    (void)gamma_s_per_byte;
    g_return_val_if_fail(nranks >= 1, 0.0);
    return ceil_log2(nranks) * alpha_s + missing_fraction(nranks) * n_bytes / bw_Bps;
}

/**
 * cs_alpha_beta_recursive_halving_reducescatter:
 * lg P alpha + (P-1)/P n beta + (P-1)/P n gamma for P a power of two [TRG05 §4.5]: round k
 * exchanges and reduces half of what is left. Other P: the same with ceil(lg P), a lower bound.
 */
double
cs_alpha_beta_recursive_halving_reducescatter(int nranks, double n_bytes, double alpha_s,
                                              double bw_Bps, double gamma_s_per_byte)
{
    g_return_val_if_fail(nranks >= 1, 0.0);
    double f = missing_fraction(nranks);
    return ceil_log2(nranks) * alpha_s + f * n_bytes / bw_Bps + f * n_bytes * gamma_s_per_byte;
}

/**
 * cs_alpha_beta_rabenseifner_allreduce:
 * Rabenseifner's recursive halving reduce-scatter then recursive doubling all-gather
 * [TRG05 §4.4]: 2 lg P alpha + 2 (P-1)/P n beta + (P-1)/P n gamma for P a power of two.
 * Other P fold to P' = 2^floor(lg P) first, as in recursive_doubling_allreduce (whole-vector
 * fold: + alpha + n beta + n gamma before, + alpha + n beta after), and the formula uses P'.
 */
double
cs_alpha_beta_rabenseifner_allreduce(int nranks, double n_bytes, double alpha_s, double bw_Bps,
                                     double gamma_s_per_byte)
{
    g_return_val_if_fail(nranks >= 1, 0.0);
    int lg = floor_log2(nranks);
    double f = missing_fraction(1 << lg);
    double t = 2.0 * lg * alpha_s + 2.0 * f * n_bytes / bw_Bps + f * n_bytes * gamma_s_per_byte;
    if ((nranks & (nranks - 1)) != 0)
        t += 2.0 * cs_alpha_beta_p2p(n_bytes, alpha_s, bw_Bps) + n_bytes * gamma_s_per_byte;
    return t;
}

/* ---- Bruck and pairwise ---- */

/**
 * cs_alpha_beta_bruck_allgather:
 * ceil(lg P) alpha + (P-1)/P n beta for any P [TRG05 §4.1, after Bruck et al. 1997]; the
 * local rotations are free in this model.
 */
double
cs_alpha_beta_bruck_allgather(int nranks, double n_bytes, double alpha_s, double bw_Bps,
                              double gamma_s_per_byte)
{
    (void)gamma_s_per_byte;
    g_return_val_if_fail(nranks >= 1, 0.0);
    return ceil_log2(nranks) * alpha_s + missing_fraction(nranks) * n_bytes / bw_Bps;
}

/**
 * cs_alpha_beta_pairwise_alltoall:
 * (P-1)(alpha + n/P beta) [TRG05 §4.6, pairwise exchange], n the per-rank buffer: P-1 rounds,
 * each sending one n/P block to one peer and receiving one from another.
 */
double
cs_alpha_beta_pairwise_alltoall(int nranks, double n_bytes, double alpha_s, double bw_Bps,
                                double gamma_s_per_byte)
{
    (void)gamma_s_per_byte;
    g_return_val_if_fail(nranks >= 1, 0.0);
    return (nranks - 1) * cs_alpha_beta_p2p(n_bytes / nranks, alpha_s, bw_Bps);
}

/**
 * cs_alpha_beta_sendrecv:
 * alpha + n beta [H94]: nccl-tests' sendrecv, every rank sending its n bytes to the next one
 * while receiving the previous one's, all P messages at once on disjoint links; one message's
 * time whatever P >= 2.
 */
double
cs_alpha_beta_sendrecv(int nranks, double n_bytes, double alpha_s, double bw_Bps,
                       double gamma_s_per_byte)
{
    (void)gamma_s_per_byte;
    g_return_val_if_fail(nranks >= 1, 0.0);
    if (nranks == 1)
        return 0.0;
    return cs_alpha_beta_p2p(n_bytes, alpha_s, bw_Bps);
}

/* ---- Table ---- */

static const CsAlphaBetaForm forms[] = {
    { "ring", CS_OP_ALL_REDUCE, "2(P-1) alpha + 2(P-1)/P n beta + (P-1)/P n gamma", "PY09; C07",
      cs_alpha_beta_ring_allreduce },
    /* A pairwise-exchange reduce-scatter, then its all-gather: one port sends a phase's P-1
     * blocks in turn, so all-pairs costs what the ring does. A GPU with a link per peer (an
     * xGMI mesh) sends them at once, which the engine models and this form does not. */
    { "allpairs", CS_OP_ALL_REDUCE,
      "2(P-1) alpha + 2(P-1)/P n beta + (P-1)/P n gamma (one port: a phase's P-1 messages in "
      "turn)",
      "TRG05 4.5, 4.1", cs_alpha_beta_ring_allreduce },
    { "ring", CS_OP_ALL_GATHER, "(P-1) alpha + (P-1)/P n beta", "TRG05 4.1",
      cs_alpha_beta_ring_allgather },
    { "ring", CS_OP_REDUCE_SCATTER, "(P-1) alpha + (P-1)/P n beta + (P-1)/P n gamma", "C07",
      cs_alpha_beta_ring_reducescatter },
    { "ring", CS_OP_BROADCAST, "(sqrt((P-2) alpha) + sqrt(n beta))^2, best pipeline", "PG07",
      cs_alpha_beta_ring_broadcast_pipelined_optimal },
    { "mst", CS_OP_BROADCAST, "ceil(lg P)(alpha + n beta)", "TRG05 4.2",
      cs_alpha_beta_binomial_broadcast },
    { "mst", CS_OP_REDUCE, "ceil(lg P)(alpha + n beta + n gamma)", "TRG05 4.3",
      cs_alpha_beta_binomial_reduce },
    { "mst", CS_OP_SCATTER, "ceil(lg P) alpha + (P-1)/P n beta", "TRG05; C07",
      cs_alpha_beta_binomial_scatter },
    { "mst", CS_OP_GATHER, "ceil(lg P) alpha + (P-1)/P n beta", "TRG05; C07",
      cs_alpha_beta_binomial_gather },
    { "recursive_doubling", CS_OP_ALL_REDUCE, "lg P (alpha + n beta + n gamma)", "TRG05 4.4",
      cs_alpha_beta_recursive_doubling_allreduce },
    { "recursive_doubling", CS_OP_ALL_GATHER, "lg P alpha + (P-1)/P n beta", "TRG05 4.1",
      cs_alpha_beta_recursive_doubling_allgather },
    { "rhd", CS_OP_ALL_REDUCE, "2 lg P alpha + 2(P-1)/P n beta + (P-1)/P n gamma", "TRG05 4.4",
      cs_alpha_beta_rabenseifner_allreduce },
    { "rhd", CS_OP_REDUCE_SCATTER, "lg P alpha + (P-1)/P n beta + (P-1)/P n gamma", "TRG05 4.5",
      cs_alpha_beta_recursive_halving_reducescatter },
    { "rhd", CS_OP_ALL_GATHER, "lg P alpha + (P-1)/P n beta", "TRG05 4.1",
      cs_alpha_beta_recursive_doubling_allgather },
    { "bruck", CS_OP_ALL_GATHER, "ceil(lg P) alpha + (P-1)/P n beta", "TRG05 4.1",
      cs_alpha_beta_bruck_allgather },
    { "pairwise", CS_OP_ALL_TO_ALL, "(P-1)(alpha + n/P beta)", "TRG05 4.6",
      cs_alpha_beta_pairwise_alltoall },
    { "direct", CS_OP_SEND_RECV, "alpha + n beta", "H94", cs_alpha_beta_sendrecv },
};

/**
 * cs_alpha_beta_forms:
 * Every closed form with its algorithm, collective, formula and source. The references are
 * the keys of this file's header comment. Returns: (transfer none).
 */
const CsAlphaBetaForm *
cs_alpha_beta_forms(gsize *n_forms)
{
    g_return_val_if_fail(n_forms != NULL, NULL);
    *n_forms = G_N_ELEMENTS(forms);
    return forms;
}

/**
 * cs_alpha_beta_find:
 * The closed form of algorithm @algo for @op. Returns: (transfer none) (nullable).
 */
const CsAlphaBetaForm *
cs_alpha_beta_find(const char *algo, CsOp op)
{
    g_return_val_if_fail(algo != NULL, NULL);
    for (gsize i = 0; i < G_N_ELEMENTS(forms); i++)
        if (forms[i].op == op && strcmp(forms[i].algo, algo) == 0)
            return &forms[i];
    return NULL;
}
