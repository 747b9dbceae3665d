// SPDX-License-Identifier: MIT
/* Rings over a full mesh of direct links (an xGMI platform): directed Hamiltonian cycles of
 * the complete digraph that use every link the same number of times, so that a ring
 * collective spread over them drives every link of every GPU. */
#pragma once

#include <glib.h>

#include "topo/topo.h"

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

/**
 * cs_mesh_paths_new:
 * @nranks: even, at least 2
 *
 * @nranks Hamiltonian paths over ranks 0..@nranks-1 that together follow every ordered pair
 * (a, b) once: Walecki's zigzag paths i, i + 1, i - 1, i + 2, i - 2, ... (mod @nranks) for
 * i < @nranks / 2, which split the complete graph's edges (Lucas, "Recreations
 * mathematiques" II, 1892), each taken in both directions. Path p starts at rank p and ends
 * at rank p + @nranks / 2 (mod @nranks), so the paths' first ranks are every rank once, and
 * so are their last ranks.
 *
 * Returns: (transfer full): @nranks x @nranks ranks, path-major.
 */
int *cs_mesh_paths_new(int nranks);

/* The channels RCCL runs across nodes of 8 fully connected GPUs with a NIC each (see
 * cs_mesh_rail_nodes()): its topology model for them lists 64 rings (rome_model_81 and 89,
 * src/graph/rome_models.cc), and ncclTopoPostset (src/graph/connect.cc) neither doubles nor
 * cuts them: on gfx942 and gfx950 it allows min(CUs, MAXCHANNELS = 128) channels, at most 64
 * over several nodes. */
#define CS_MESH_RAIL_CHANNELS 64

/**
 * cs_mesh_rail_nodes:
 * Whether ranks 0..@nranks-1 of @topo are two or more whole nodes of 8 GPUs, each node a full
 * mesh of direct links (xGMI) and each GPU the only one near its own NIC: the machines RCCL's
 * parseA2a8P() matches to its 8-NIC models (8 x MI300X or MI355X, one NIC per GPU).
 */
gboolean cs_mesh_rail_nodes(const CsTopo *topo, int nranks);

G_END_DECLS
