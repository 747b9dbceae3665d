// SPDX-License-Identifier: MIT
/* Tests of models/alpha_beta.c: each closed form against a value derived by hand, the
 * identities between forms, the lower bounds of Chan et al. 2007, and the pipeline formula
 * against a direct simulation of the chain. */
#include "config.h"

#include <math.h>

#include "models/alpha_beta.h"

/*
 * Setup shared by the hand derivations unless a test says otherwise:
 *   alpha = 10 us = 10e-6 s, B = 100 GB/s = 1e11 B/s, n = 1 MiB = 1048576 B
 *   n beta     = 1048576 / 1e11  = 10.48576e-6 s
 *   n beta / 4 = 262144 / 1e11   =  2.62144e-6 s
 *   gamma      = 1e-10 s/B (a 10 GB/s reduction) where a test says so: n gamma = 104.8576e-6 s
 */
#define ALPHA 10e-6
#define BW 1e11
#define N_MIB 1048576.0
#define GAMMA 1e-10

static void
assert_close(double got, double want)
{
    /* Relative: the sums are computed in a different order than the derivations. */
    g_assert_cmpfloat_with_epsilon(got, want, fabs(want) * 1e-12 + 1e-18);
}

/* ---- Hand-derived values ---- */

static void
test_p2p(void)
{
    /* alpha + n beta = 10e-6 + 10.48576e-6 = 20.48576e-6 */
    assert_close(cs_alpha_beta_p2p(N_MIB, ALPHA, BW), 20.48576e-6);
}

static void
test_n_half(void)
{
    g_test_summary("At n_1/2 = alpha B a message takes 2 alpha and reaches B/2.");
    /* alpha B = 10e-6 * 1e11 = 1e6 bytes */
    double n = cs_alpha_beta_n_half(ALPHA, BW);
    assert_close(n, 1e6);
    /* T = 10e-6 + 1e6/1e11 = 20e-6 = 2 alpha; n/T = 1e6 / 20e-6 = 5e10 = B/2 */
    assert_close(cs_alpha_beta_p2p(n, ALPHA, BW), 2 * ALPHA);
    assert_close(n / cs_alpha_beta_p2p(n, ALPHA, BW), BW / 2);
    /* The seed's H100 example: 10 us x 900 GB/s = 9e6 bytes. */
    assert_close(cs_alpha_beta_n_half(10e-6, 900e9), 9e6);
}

static void
test_ring_allreduce(void)
{
    /* P = 4: 2(P-1)(alpha + n/(P B)) = 6 * (10e-6 + 2.62144e-6) = 6 * 12.62144e-6 = 75.72864e-6 */
    assert_close(cs_alpha_beta_ring_allreduce(4, N_MIB, ALPHA, BW, 0.0), 75.72864e-6);
    /* + (P-1)/P n gamma = 3 * 262144 * 1e-10 = 78.6432e-6 -> 154.37184e-6 */
    assert_close(cs_alpha_beta_ring_allreduce(4, N_MIB, ALPHA, BW, GAMMA), 154.37184e-6);
    /* P = 8: 14 alpha + 2 * 7/8 * n beta = 140e-6 + 18.35008e-6 = 158.35008e-6 */
    assert_close(cs_alpha_beta_ring_allreduce(8, N_MIB, ALPHA, BW, 0.0), 158.35008e-6);
}

static void
test_ring_allgather_reducescatter(void)
{
    /* P = 4, n the total: 3 (alpha + n/(4B)) = 3 * 12.62144e-6 = 37.86432e-6 */
    assert_close(cs_alpha_beta_ring_allgather(4, N_MIB, ALPHA, BW, GAMMA), 37.86432e-6);
    assert_close(cs_alpha_beta_ring_reducescatter(4, N_MIB, ALPHA, BW, 0.0), 37.86432e-6);
    /* reduce-scatter with gamma: + 3/4 n gamma = 78.6432e-6 -> 116.50752e-6 */
    assert_close(cs_alpha_beta_ring_reducescatter(4, N_MIB, ALPHA, BW, GAMMA), 116.50752e-6);
}

static void
test_ring_broadcast(void)
{
    /* Store and forward, P = 4: 3 (alpha + n beta) = 3 * 20.48576e-6 = 61.45728e-6 */
    assert_close(cs_alpha_beta_ring_broadcast(4, N_MIB, ALPHA, BW, 0.0), 61.45728e-6);
    /* Pipelined in 256 KiB chunks: k = 4, (P-1 + k-1)(alpha + n/k beta) = 6 * 12.62144e-6
     * = 75.72864e-6: with alpha this large, cutting a 1 MiB message costs more than it saves. */
    assert_close(cs_alpha_beta_ring_broadcast_pipelined(4, N_MIB, 262144, ALPHA, BW), 75.72864e-6);
    /* Uneven chunks, 400000 B: k = 3 (400000, 400000, 248576), largest c = 400000:
     * k alpha + n beta + (P-2)(alpha + c beta) = 30e-6 + 10.48576e-6 + 2 * 14e-6 = 68.48576e-6 */
    assert_close(cs_alpha_beta_ring_broadcast_pipelined(4, N_MIB, 400000, ALPHA, BW), 68.48576e-6);
    /* One chunk is the unpipelined form. */
    assert_close(cs_alpha_beta_ring_broadcast_pipelined(4, N_MIB, 4 * N_MIB, ALPHA, BW),
                 61.45728e-6);
    /* Best pipeline, P = 4: (P-2) alpha = 20e-6, n beta = 10.48576e-6,
     * k* = sqrt(20e-6 * 10.48576e-6) / 10e-6 = 1.448 > 1, so
     * T = 20e-6 + 10.48576e-6 + 2 sqrt(20e-6 * 10.48576e-6) = 30.48576e-6 + 28.96309e-6 */
    assert_close(cs_alpha_beta_ring_broadcast_pipelined_optimal(4, N_MIB, ALPHA, BW, 0.0),
                 30.48576e-6 + 2 * sqrt(20e-6 * 10.48576e-6));
    /* P = 2 has one hop: nothing to overlap, alpha + n beta. */
    assert_close(cs_alpha_beta_ring_broadcast_pipelined_optimal(2, N_MIB, ALPHA, BW, 0.0),
                 20.48576e-6);
}

static void
test_binomial(void)
{
    /* Broadcast, P = 4: ceil(lg 4) = 2 rounds: 2 * 20.48576e-6 = 40.97152e-6 */
    assert_close(cs_alpha_beta_binomial_broadcast(4, N_MIB, ALPHA, BW, 0.0), 40.97152e-6);
    /* The seed article's P = 6: it writes "log2(6) = 2.585 rounds", but rounds are whole:
     * ceil(lg 6) = 3, 3 * 20.48576e-6 = 61.45728e-6 */
    assert_close(cs_alpha_beta_binomial_broadcast(6, N_MIB, ALPHA, BW, 0.0), 61.45728e-6);
    /* Reduce, P = 4, gamma: 2 * (20.48576e-6 + 104.8576e-6) = 250.68672e-6 */
    assert_close(cs_alpha_beta_binomial_reduce(4, N_MIB, ALPHA, BW, GAMMA), 250.68672e-6);
    /* Scatter, P = 4: 2 alpha + 3/4 n beta = 20e-6 + 7.86432e-6 = 27.86432e-6 */
    assert_close(cs_alpha_beta_binomial_scatter(4, N_MIB, ALPHA, BW, 0.0), 27.86432e-6);
    /* Gather, P = 5: ceil(lg 5) = 3: 30e-6 + 4/5 * 10.48576e-6 = 38.388608e-6 */
    assert_close(cs_alpha_beta_binomial_gather(5, N_MIB, ALPHA, BW, 0.0), 38.388608e-6);
}

static void
test_recursive(void)
{
    /* Recursive doubling all-reduce, P = 4: lg 4 (alpha + n beta) = 40.97152e-6 */
    assert_close(cs_alpha_beta_recursive_doubling_allreduce(4, N_MIB, ALPHA, BW, 0.0), 40.97152e-6);
    /* P = 6 folds to 4: 2 steps + a fold in + a fold out, each alpha + n beta with gamma 0:
     * 4 * 20.48576e-6 = 81.94304e-6 */
    assert_close(cs_alpha_beta_recursive_doubling_allreduce(6, N_MIB, ALPHA, BW, 0.0), 81.94304e-6);
    /* With gamma: the 2 steps and the fold in reduce (125.34336e-6 each), the fold out does
     * not: 3 * 125.34336e-6 + 20.48576e-6 = 396.51584e-6 */
    assert_close(cs_alpha_beta_recursive_doubling_allreduce(6, N_MIB, ALPHA, BW, GAMMA),
                 396.51584e-6);
    /* Recursive doubling all-gather, P = 8: 3 alpha + 7/8 n beta = 30e-6 + 9.17504e-6 */
    assert_close(cs_alpha_beta_recursive_doubling_allgather(8, N_MIB, ALPHA, BW, 0.0), 39.17504e-6);
    /* Recursive halving reduce-scatter, P = 8, gamma: + 7/8 n gamma = 91.7504e-6 */
    assert_close(cs_alpha_beta_recursive_halving_reducescatter(8, N_MIB, ALPHA, BW, GAMMA),
                 39.17504e-6 + 91.7504e-6);
}

static void
test_rabenseifner(void)
{
    /* P = 4: 2 lg P alpha + 2 (P-1)/P n beta = 40e-6 + 15.72864e-6 = 55.72864e-6 */
    assert_close(cs_alpha_beta_rabenseifner_allreduce(4, N_MIB, ALPHA, BW, 0.0), 55.72864e-6);
    /* + (P-1)/P n gamma = 78.6432e-6 -> 134.37184e-6 */
    assert_close(cs_alpha_beta_rabenseifner_allreduce(4, N_MIB, ALPHA, BW, GAMMA), 134.37184e-6);
    /* P = 6: P' = 4 (55.72864e-6) plus a fold in and out, 2 * 20.48576e-6 -> 96.70016e-6 */
    assert_close(cs_alpha_beta_rabenseifner_allreduce(6, N_MIB, ALPHA, BW, 0.0), 96.70016e-6);
}

static void
test_bruck_pairwise(void)
{
    /* Bruck, P = 6: ceil(lg 6) alpha + 5/6 n beta = 30e-6 + 8.7381333e-6 */
    assert_close(cs_alpha_beta_bruck_allgather(6, N_MIB, ALPHA, BW, 0.0),
                 30e-6 + 5.0 / 6.0 * 10.48576e-6);
    /* Pairwise all-to-all, P = 4: 3 (alpha + n/4 beta) = 37.86432e-6 */
    assert_close(cs_alpha_beta_pairwise_alltoall(4, N_MIB, ALPHA, BW, GAMMA), 37.86432e-6);
    /* P = 5: 4 (alpha + n/5 beta) = 4 * (10e-6 + 2.097152e-6) = 48.388608e-6 */
    assert_close(cs_alpha_beta_pairwise_alltoall(5, N_MIB, ALPHA, BW, 0.0), 48.388608e-6);
    /* sendrecv, any P >= 2: one message, alpha + n beta = 10e-6 + 10.48576e-6 = 20.48576e-6 */
    assert_close(cs_alpha_beta_sendrecv(2, N_MIB, ALPHA, BW, GAMMA), 20.48576e-6);
    assert_close(cs_alpha_beta_sendrecv(7, N_MIB, ALPHA, BW, GAMMA), 20.48576e-6);
}

/* ---- Identities and bounds ---- */

static void
test_single_rank_is_free(void)
{
    gsize n_forms = 0;
    const CsAlphaBetaForm *forms = cs_alpha_beta_forms(&n_forms);

    for (gsize i = 0; i < n_forms; i++)
        g_assert_cmpfloat(forms[i].time(1, N_MIB, ALPHA, BW, GAMMA), ==, 0.0);
    g_assert_cmpfloat(cs_alpha_beta_ring_broadcast_pipelined(1, N_MIB, 4096, ALPHA, BW), ==, 0.0);
}

static void
test_compositions(void)
{
    g_test_summary("Ring all-reduce is ring reduce-scatter then ring all-gather; Rabenseifner "
                   "is recursive halving then recursive doubling (P a power of two).");
    for (int p = 1; p <= 64; p++) {
        double rs = cs_alpha_beta_ring_reducescatter(p, N_MIB, ALPHA, BW, GAMMA);
        double ag = cs_alpha_beta_ring_allgather(p, N_MIB, ALPHA, BW, GAMMA);
        assert_close(cs_alpha_beta_ring_allreduce(p, N_MIB, ALPHA, BW, GAMMA), rs + ag);
        if ((p & (p - 1)) == 0) {
            rs = cs_alpha_beta_recursive_halving_reducescatter(p, N_MIB, ALPHA, BW, GAMMA);
            ag = cs_alpha_beta_recursive_doubling_allgather(p, N_MIB, ALPHA, BW, GAMMA);
            assert_close(cs_alpha_beta_rabenseifner_allreduce(p, N_MIB, ALPHA, BW, GAMMA), rs + ag);
        }
    }
}

static void
test_lower_bounds(void)
{
    g_test_summary("Chan et al. 2007 lower bounds: every form costs at least the bandwidth "
                   "term of its collective (alpha = 0) and ceil(lg P) start-ups (n = 0).");
    gsize n_forms = 0;
    const CsAlphaBetaForm *forms = cs_alpha_beta_forms(&n_forms);

    for (gsize i = 0; i < n_forms; i++) {
        for (int p = 2; p <= 40; p++) {
            double f = (double)(p - 1) / p;
            double beta_bound = 0.0;
            switch (forms[i].op) {
            case CS_OP_BROADCAST:
            case CS_OP_REDUCE:
            case CS_OP_SEND_RECV: /* the whole buffer leaves every rank */
                beta_bound = N_MIB / BW;
                break;
            case CS_OP_ALL_REDUCE:
                beta_bound = 2 * f * N_MIB / BW;
                break;
            default: /* all-gather, reduce-scatter, scatter, gather, all-to-all */
                beta_bound = f * N_MIB / BW;
                break;
            }
            double t = forms[i].time(p, N_MIB, 0.0, BW, 0.0);
            g_assert_cmpfloat(t, >=, beta_bound * (1 - 1e-12));
            /* All-to-all's start-up bound is also ceil(lg P) (Bruck's); pairwise pays P-1.
             * sendrecv is no collective: each rank needs one message, one start-up. */
            double lat = forms[i].time(p, 0.0, ALPHA, BW, 0.0);
            double startups = forms[i].op == CS_OP_SEND_RECV ? 1.0 : ceil(log2(p));
            g_assert_cmpfloat(lat, >=, startups * ALPHA * (1 - 1e-12));
        }
    }
}

/* Direct simulation of the chain: chunk i leaves hop h when it has arrived there and the hop
 * has sent chunk i-1; the flow-shop recurrence the closed form summarizes. */
static double
simulate_chain(int p, double n, double chunk, double alpha, double bw)
{
    int k = MAX(1, (int)ceil(n / chunk));
    g_autofree double *done = g_new0(double, p); /* done[h]: hop h free again */

    for (int i = 0; i < k; i++) {
        double c = MIN(chunk, n - i * chunk);
        double arrived = 0.0; /* chunk i is at the root from the start */
        for (int h = 1; h < p; h++) {
            double start = MAX(arrived, done[h]);
            done[h] = start + alpha + c / bw;
            arrived = done[h];
        }
    }
    return p > 1 ? done[p - 1] : 0.0;
}

static void
test_pipeline_against_simulation(void)
{
    static const double chunks[] = { 1000.0, 4096.0, 65536.0, 100000.0, 262144.0, 5e6 };

    for (int p = 1; p <= 9; p++)
        for (gsize c = 0; c < G_N_ELEMENTS(chunks); c++) {
            double want = simulate_chain(p, N_MIB, chunks[c], ALPHA, BW);
            double got = cs_alpha_beta_ring_broadcast_pipelined(p, N_MIB, chunks[c], ALPHA, BW);
            assert_close(got, want);
        }
}

static void
test_pipeline_optimum(void)
{
    g_test_summary("The best pipeline is no slower than any real number of chunks k >= 1, "
                   "and a scan over k finds nothing better.");
    for (int p = 2; p <= 16; p++)
        for (double n = 1024; n <= 1 << 30; n *= 16) {
            double best = cs_alpha_beta_ring_broadcast_pipelined_optimal(p, n, ALPHA, BW, 0.0);
            double scan = INFINITY;
            for (double k = 1.0; k <= 4096.0; k *= 1.001)
                scan = MIN(scan, (k + p - 2) * (ALPHA + n / BW / k));
            g_assert_cmpfloat(best, <=, scan * (1 + 1e-12));
            g_assert_cmpfloat(best, >=, scan * (1 - 1e-5));
        }
}

static void
test_table(void)
{
    gsize n_forms = 0;
    const CsAlphaBetaForm *forms = cs_alpha_beta_forms(&n_forms);

    g_assert_cmpuint(n_forms, >=, 15);
    for (gsize i = 0; i < n_forms; i++) {
        g_assert_nonnull(forms[i].formula);
        g_assert_nonnull(forms[i].reference);
        g_assert_true(cs_alpha_beta_find(forms[i].algo, forms[i].op) == &forms[i]);
        /* Monotone in n and in P >= 2 at fixed n for these textbook forms. */
        g_assert_cmpfloat(forms[i].time(8, 2 * N_MIB, ALPHA, BW, GAMMA), >,
                          forms[i].time(8, N_MIB, ALPHA, BW, GAMMA));
    }
    const CsAlphaBetaForm *ring = cs_alpha_beta_find("ring", CS_OP_ALL_REDUCE);
    g_assert_nonnull(ring);
    assert_close(ring->time(4, N_MIB, ALPHA, BW, 0.0), 75.72864e-6);
    g_assert_null(cs_alpha_beta_find("ring", CS_OP_SCATTER));
    g_assert_null(cs_alpha_beta_find("no-such-algo", CS_OP_ALL_REDUCE));
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);

    g_test_add_func("/alpha-beta/p2p", test_p2p);
    g_test_add_func("/alpha-beta/n-half", test_n_half);
    g_test_add_func("/alpha-beta/ring/all-reduce", test_ring_allreduce);
    g_test_add_func("/alpha-beta/ring/all-gather-reduce-scatter",
                    test_ring_allgather_reducescatter);
    g_test_add_func("/alpha-beta/ring/broadcast", test_ring_broadcast);
    g_test_add_func("/alpha-beta/binomial", test_binomial);
    g_test_add_func("/alpha-beta/recursive", test_recursive);
    g_test_add_func("/alpha-beta/rabenseifner", test_rabenseifner);
    g_test_add_func("/alpha-beta/bruck-pairwise", test_bruck_pairwise);
    g_test_add_func("/alpha-beta/single-rank-is-free", test_single_rank_is_free);
    g_test_add_func("/alpha-beta/compositions", test_compositions);
    g_test_add_func("/alpha-beta/lower-bounds", test_lower_bounds);
    g_test_add_func("/alpha-beta/pipeline/simulation", test_pipeline_against_simulation);
    g_test_add_func("/alpha-beta/pipeline/optimum", test_pipeline_optimum);
    g_test_add_func("/alpha-beta/table", test_table);
    return g_test_run();
}
