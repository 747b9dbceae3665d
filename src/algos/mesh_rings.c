// SPDX-License-Identifier: MIT
/* Rings that load every link of a full mesh equally.
 *
 * A ring all-reduce over P ranks is bounded by the busiest link of its rings. On a full mesh,
 * rings of one stride (r -> r + s) use only the strides coprime with P: 4 of the 7 links of
 * each GPU for P = 8. A set of directed Hamiltonian cycles that covers every ordered pair
 * equally often uses all of them; RCCL ships such a set for 8 fully connected MI300X (14 rings
 * using each of the 56 directed xGMI links twice: src/graph/rome_models.cc, the 8-GPU
 * 7-link model). The complete digraph on P vertices splits into P - 1 arc-disjoint directed
 * Hamiltonian cycles for every P but 4 and 6 (Tillson, "A Hamiltonian decomposition of K*_2m,
 * 2m >= 8", J. Combin. Theory B 29, 1980; for odd P, both directions of Walecki's
 * decomposition of K_P); for 4 and 6, taking
 * every arc twice, 2 (P - 1) cycles exist. They are found by depth-first search, ring after
 * ring (bounded, see mesh_rings.h). */
#include "algos/mesh_rings.h"

#include <string.h>

/* Extensions the search may try before it gives up. */
#define MESH_RINGS_BUDGET 1000000

typedef struct {
    int P;
    int n_rings;
    guint8 *left;   /* P x P: how many more rings may use arc (a, b) */
    gboolean *used; /* P: on the ring being built */
    int *orders;    /* n_rings x P */
    long budget;
} Search;

static gboolean extend_ring(Search *s, int ring, int len);

/* Starts ring @ring at rank 0, or succeeds when every ring is built. */
static gboolean
start_ring(Search *s, int ring)
{
    if (ring == s->n_rings)
        return TRUE;
    memset(s->used, 0, (gsize)s->P * sizeof *s->used);
    s->orders[(gsize)ring * s->P] = 0;
    s->used[0] = TRUE;
    return extend_ring(s, ring, 1);
}

/* Extends ring @ring, whose first @len ranks are placed, to a closed ring and every ring after
 * it. */
static gboolean
extend_ring(Search *s, int ring, int len)
{
    int P = s->P;
    int *order = s->orders + (gsize)ring * P;
    int last = order[len - 1];

    if (--s->budget < 0)
        return FALSE;
    if (len == P) {
        if (s->left[last * P] == 0)
            return FALSE;
        s->left[last * P]--;
        if (start_ring(s, ring + 1))
            return TRUE;
        /* A closed ring holds every rank: back to that state. */
        for (int v = 0; v < P; v++)
            s->used[v] = TRUE;
        s->left[last * P]++;
        return FALSE;
    }
    for (int v = 1; v < P && s->budget >= 0; v++) {
        if (s->used[v] || s->left[last * P + v] == 0)
            continue;
        s->used[v] = TRUE;
        s->left[last * P + v]--;
        order[len] = v;
        if (extend_ring(s, ring, len + 1))
            return TRUE;
        s->used[v] = FALSE;
        s->left[last * P + v]++;
    }
    return FALSE;
}

int
cs_mesh_rings_count(int nranks)
{
    g_return_val_if_fail(nranks >= 3, 0);
    return (nranks == 4 || nranks == 6 ? 2 : 1) * (nranks - 1);
}

/* One search per rank count (up to 15 ms at 17 ranks), kept for every later schedule. */
static int *
search_rings(int P)
{
    int count = cs_mesh_rings_count(P);
    int times = count / (P - 1);
    Search s = {
        .P = P,
        .n_rings = count,
        .left = g_new(guint8, (gsize)P * P),
        .used = g_new0(gboolean, P),
        .orders = g_new(int, (gsize)count *P),
        .budget = MESH_RINGS_BUDGET,
    };
    for (int a = 0; a < P; a++)
        for (int b = 0; b < P; b++)
            s.left[a * P + b] = a == b ? 0 : (guint8)times;

    gboolean found = start_ring(&s, 0);
    g_free(s.left);
    g_free(s.used);
    if (!found)
        g_clear_pointer(&s.orders, g_free);
    return s.orders;
}

int *
cs_mesh_rings_new(int nranks, int *n_rings)
{
    static int *found[CS_MESH_RINGS_MAX_RANKS + 1];
    static gboolean searched[CS_MESH_RINGS_MAX_RANKS + 1];
    G_LOCK_DEFINE_STATIC(found);

    g_return_val_if_fail(nranks >= 3 && n_rings != NULL, NULL);
    if (nranks > CS_MESH_RINGS_MAX_RANKS)
        return NULL;
    G_LOCK(found);
    if (!searched[nranks]) {
        found[nranks] = search_rings(nranks);
        searched[nranks] = TRUE;
    }
    int *rings = found[nranks];
    G_UNLOCK(found);
    if (rings == NULL)
        return NULL;
    *n_rings = cs_mesh_rings_count(nranks);
    return g_memdup2(rings, (gsize)*n_rings * nranks * sizeof(int));
}

int *
cs_mesh_paths_new(int nranks)
{
    g_return_val_if_fail(nranks >= 2 && nranks % 2 == 0, NULL);
    const int half = nranks / 2;
    int *paths = g_new(int, (gsize)nranks *nranks);

    for (int i = 0; i < half; i++) {
        int *fwd = paths + (gsize)i * nranks;
        int *rev = paths + (gsize)(i + half) * nranks;
        int k = 0;
        fwd[k++] = i;
        for (int d = 1; k < nranks; d++) {
            fwd[k++] = (i + d) % nranks;
            if (k < nranks)
                fwd[k++] = (i - d + nranks) % nranks;
        }
        for (int j = 0; j < nranks; j++)
            rev[j] = fwd[nranks - 1 - j];
    }
    return paths;
}

gboolean
cs_mesh_rail_nodes(const CsTopo *topo, int nranks)
{
    g_return_val_if_fail(topo != NULL, FALSE);
    const int L = cs_topo_ranks_per_node(topo);
    int nic[8];

    if (L != 8 || cs_topo_n_nodes(topo) < 2 || nranks <= L || nranks % L != 0
        || nranks > cs_topo_n_ranks(topo) || cs_topo_rank_node(topo, L - 1) != 0
        || cs_topo_rank_node(topo, L) != 1 || !cs_topo_full_mesh(topo, L))
        return FALSE;
    for (int r = 0; r < L; r++) {
        CsRankNics n = cs_topo_rank_nics(topo, r);
        if (n.n_local != 1 || n.sharing != 1)
            return FALSE;
        nic[r] = n.device[0];
        for (int q = 0; q < r; q++)
            if (nic[q] == nic[r])
                return FALSE;
    }
    return TRUE;
}
