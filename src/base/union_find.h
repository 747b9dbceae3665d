// SPDX-License-Identifier: MIT
/* Disjoint sets over 0 .. n-1 in an int array (parent[x] == x at a root): the NVLink islands
 * and node domains of a topology, the PCIe groups of an nvidia-smi matrix. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The root of @x's set, halving the path on the way. */
static inline int
cs_uf_find(int *parent, int x)
{
    while (parent[x] != x) {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    return x;
}

/* Joins the sets of @a and @b; the smaller root stays the root. */
static inline void
cs_uf_union(int *parent, int a, int b)
{
    a = cs_uf_find(parent, a);
    b = cs_uf_find(parent, b);
    if (a != b)
        parent[MAX(a, b)] = MIN(a, b);
}

G_END_DECLS
