// SPDX-License-Identifier: MIT
/* The one table of algorithms: listing order for `collsim algos`, lookup by CLI name, and the
 * list the checker sweep iterates, so a new algorithm is one file plus one line here. */
#include "algos/registry.h"

#include <string.h>

extern const CsAlgo cs_algo_ring;
extern const CsAlgo cs_algo_tree;
extern const CsAlgo cs_algo_mst;
extern const CsAlgo cs_algo_hierarchical;
extern const CsAlgo cs_algo_nvls;
extern const CsAlgo cs_algo_nvls_tree;
extern const CsAlgo cs_algo_collnet_direct;
extern const CsAlgo cs_algo_collnet_chain;
extern const CsAlgo cs_algo_pat;
extern const CsAlgo cs_algo_allpairs;
extern const CsAlgo cs_algo_recursive_doubling;
extern const CsAlgo cs_algo_rhd;
extern const CsAlgo cs_algo_bruck;
extern const CsAlgo cs_algo_pairwise;
extern const CsAlgo cs_algo_direct;

/* NCCL's and RCCL's algorithms first, then the MPI classics (Thakur, Rabenseifner, Gropp 2005). */
static const CsAlgo *const algos[] = {
    &cs_algo_ring,
    &cs_algo_tree,
    &cs_algo_nvls,
    &cs_algo_nvls_tree,
    &cs_algo_collnet_direct,
    &cs_algo_collnet_chain,
    &cs_algo_pat,
    &cs_algo_allpairs,
    &cs_algo_hierarchical,
    &cs_algo_mst,
    &cs_algo_recursive_doubling,
    &cs_algo_rhd,
    &cs_algo_bruck,
    &cs_algo_pairwise,
    &cs_algo_direct,
    NULL,
};

/* (transfer none) */
const CsAlgo *const *
cs_algo_registry(void)
{
    return algos;
}

/**
 * cs_algo_lookup:
 * The algorithm called @name (its CLI spelling; case-insensitive, '-' and '_' alike).
 * Returns: (transfer none) (nullable): the algorithm, or NULL with
 * CS_SCHEDULE_ERROR_UNSUPPORTED listing the known names.
 */
const CsAlgo *
cs_algo_lookup(const char *name, GError **error)
{
    g_return_val_if_fail(name != NULL, NULL);
    g_autofree char *want = g_ascii_strdown(name, -1);
    g_strdelimit(want, "-", '_');
    for (const CsAlgo *const *a = algos; *a != NULL; a++)
        if (strcmp((*a)->name, want) == 0)
            return *a;

    g_autoptr(GString) names = g_string_new(NULL);
    for (const CsAlgo *const *a = algos; *a != NULL; a++)
        g_string_append_printf(names, "%s%s", names->len > 0 ? ", " : "", (*a)->name);
    g_set_error(error, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_UNSUPPORTED,
                "unknown algorithm \"%s\" (known: %s)", name, names->str);
    return NULL;
}
