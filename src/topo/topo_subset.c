// SPDX-License-Identifier: MIT
/* Rank subsets: a topology whose ranks are some of another's, in a given order, with the same
 * devices and links, so that a run on fewer GPUs than the machine has (a 2-node job on a
 * 16-node cluster) sits on the GPUs it really used. */
#include <string.h>

#include "topo/topo-private.h"

/**
 * cs_topo_subset:
 * A copy of @topo whose rank r is @topo's rank @ranks[r], for r < @n_ranks: devices, links,
 * GPU specs and protocol overrides are @topo's, routes are recomputed for the new ranks. The
 * ranks must be distinct ranks of @topo (a programming error otherwise).
 * Returns: (transfer full).
 */
CsTopo *
cs_topo_subset(const CsTopo *topo, const int *ranks, int n_ranks)
{
    g_return_val_if_fail(topo != NULL && ranks != NULL, NULL);
    g_return_val_if_fail(n_ranks >= 1 && n_ranks <= topo->n_ranks, NULL);

    CsTopo *copy = cs_topo_copy_unfinished(topo);
    g_autofree gboolean *used = g_new0(gboolean, topo->n_ranks);

    g_array_set_size(copy->rank_order, 0);
    for (int r = 0; r < n_ranks; r++) {
        g_assert(ranks[r] >= 0 && ranks[r] < topo->n_ranks && !used[ranks[r]]);
        used[ranks[r]] = TRUE;
        g_array_append_val(copy->rank_order, topo->rank_device[ranks[r]]);
    }

    /* The same devices and links as a loaded topology, and every pair of its ranks reached
     * each other there. */
    return cs_topo_finish_copy(copy);
}
