// SPDX-License-Identifier: MIT
/* Rings over a full mesh of direct links (an xGMI platform): directed Hamiltonian cycles of
 * the complete digraph that use every link the same number of times, so that a ring
 * collective spread over them drives every link of every GPU. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The search finds a set within 300,000 extensions (15 ms) up to 18 ranks, and not within
 * millions from 19; a full mesh wider than 17 GPUs would also need more than NCCL's 32
 * channels to use every link twice. Each count is searched once per process. */
#define CS_MESH_RINGS_MAX_RANKS 17

/* How many rings cs_mesh_rings_new() returns for @nranks: @nranks - 1, twice that for 4 and
 * 6 ranks. */
int cs_mesh_rings_count(int nranks);

/**
 * cs_mesh_rings_new:
 * @nranks: vertices of the mesh, at least 3
 * @n_rings: (out): rings found
 *
 * Rings over ranks 0..@nranks-1 in which every ordered pair (a, b) follows each other equally
 * often: once in each of @nranks - 1 rings, or, where no such set exists (4 and 6 ranks), twice
 * in 2 (@nranks - 1) rings. Each ring starts at rank 0.
 *
 * Returns: (transfer full) (nullable): @n_rings x @nranks ranks, ring-major, or NULL past
 * CS_MESH_RINGS_MAX_RANKS ranks, where the search would take too long.
 */
int *cs_mesh_rings_new(int nranks, int *n_rings);

G_END_DECLS
