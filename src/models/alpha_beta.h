// SPDX-License-Identifier: MIT
/* Hockney's alpha-beta(-gamma) model and the textbook closed forms of collective algorithms:
 * used to teach (`collsim model`, `collsim explain`) and as the test oracle of the engine. */
#pragma once

#include <glib.h>

#include "base/op.h"

G_BEGIN_DECLS

/*
 * Every time is in seconds. Parameters, named the same in every function:
 *   nranks            P, the number of ranks (>= 1; P = 1 costs nothing)
 *   n_bytes           n, the collective's size in nccl-tests' convention (op.h): the per-rank
 *                     buffer for all-reduce, broadcast and reduce; the total (P blocks) for
 *                     all-gather, reduce-scatter, all-to-all, scatter and gather
 *   alpha_s           alpha, the start-up cost of one message
 *   bw_Bps            B, the link bandwidth in bytes/s; beta = 1/B
 *   gamma_s_per_byte  gamma, the reduction cost per byte (0 for none); ignored by collectives
 *                     that do not reduce
 * One message per round per rank, each rank sending and receiving at once, links uncontended.
 */

/* The signature every closed form in the table below shares. */
typedef double (*CsAlphaBetaFunc)(int nranks, double n_bytes, double alpha_s, double bw_Bps,
                                  double gamma_s_per_byte);

/* alpha + n/B: one message of @n_bytes. */
double cs_alpha_beta_p2p(double n_bytes, double alpha_s, double bw_Bps);
/* alpha * B: the message size whose transfer takes as long as its start-up, so it reaches
 * half the link bandwidth (Hockney's n-half). */
double cs_alpha_beta_n_half(double alpha_s, double bw_Bps);

double cs_alpha_beta_ring_allreduce(int nranks, double n_bytes, double alpha_s, double bw_Bps,
                                    double gamma_s_per_byte);
double cs_alpha_beta_ring_allgather(int nranks, double n_bytes, double alpha_s, double bw_Bps,
                                    double gamma_s_per_byte);
double cs_alpha_beta_ring_reducescatter(int nranks, double n_bytes, double alpha_s, double bw_Bps,
                                        double gamma_s_per_byte);
double cs_alpha_beta_ring_broadcast(int nranks, double n_bytes, double alpha_s, double bw_Bps,
                                    double gamma_s_per_byte);
double cs_alpha_beta_ring_broadcast_pipelined(int nranks, double n_bytes, double chunk_bytes,
                                              double alpha_s, double bw_Bps);
double cs_alpha_beta_ring_broadcast_pipelined_optimal(int nranks, double n_bytes, double alpha_s,
                                                      double bw_Bps, double gamma_s_per_byte);
double cs_alpha_beta_binomial_broadcast(int nranks, double n_bytes, double alpha_s, double bw_Bps,
                                        double gamma_s_per_byte);
double cs_alpha_beta_binomial_reduce(int nranks, double n_bytes, double alpha_s, double bw_Bps,
                                     double gamma_s_per_byte);
double cs_alpha_beta_binomial_scatter(int nranks, double n_bytes, double alpha_s, double bw_Bps,
                                      double gamma_s_per_byte);
double cs_alpha_beta_binomial_gather(int nranks, double n_bytes, double alpha_s, double bw_Bps,
                                     double gamma_s_per_byte);
double cs_alpha_beta_recursive_doubling_allreduce(int nranks, double n_bytes, double alpha_s,
                                                  double bw_Bps, double gamma_s_per_byte);
double cs_alpha_beta_recursive_doubling_allgather(int nranks, double n_bytes, double alpha_s,
                                                  double bw_Bps, double gamma_s_per_byte);
double cs_alpha_beta_rabenseifner_allreduce(int nranks, double n_bytes, double alpha_s,
                                            double bw_Bps, double gamma_s_per_byte);
double cs_alpha_beta_recursive_halving_reducescatter(int nranks, double n_bytes, double alpha_s,
                                                     double bw_Bps, double gamma_s_per_byte);
double cs_alpha_beta_bruck_allgather(int nranks, double n_bytes, double alpha_s, double bw_Bps,
                                     double gamma_s_per_byte);
double cs_alpha_beta_pairwise_alltoall(int nranks, double n_bytes, double alpha_s, double bw_Bps,
                                       double gamma_s_per_byte);
double cs_alpha_beta_sendrecv(int nranks, double n_bytes, double alpha_s, double bw_Bps,
                              double gamma_s_per_byte);

/**
 * CsAlphaBetaForm:
 * One closed form, for listing and for looking up the oracle of an (algorithm, collective).
 * @algo:      the algorithm's CLI name in algos/registry.c where one exists ("ring", "mst",
 *             "recursive_doubling", "rhd", "bruck", "pairwise", "direct")
 * @op:        the collective
 * @formula:   the form in words, P = nranks, beta = 1/B ("2(P-1) alpha + 2(P-1)/P n beta ...")
 * @reference: where it is derived
 * @time:      the function
 */
typedef struct {
    const char *algo;
    CsOp op;
    const char *formula;
    const char *reference;
    CsAlphaBetaFunc time;
} CsAlphaBetaForm;

/* All closed forms, in listing order (transfer none); @n_forms receives the count. */
const CsAlphaBetaForm *cs_alpha_beta_forms(gsize *n_forms);
/* The form of @algo for @op, or NULL when there is none (transfer none). */
const CsAlphaBetaForm *cs_alpha_beta_find(const char *algo, CsOp op);

G_END_DECLS
