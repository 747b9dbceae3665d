// SPDX-License-Identifier: MIT
/* Topology benchmark (suite 'bench'): the wall time and peak memory of loading a cluster
 * template of @nodes DGX H100 nodes (8 GPUs and 8 NICs each, rail-optimized NDR in leaf groups
 * of 32 nodes), then asking for one route per rank (to the same GPU of the next node, as a
 * ring's crossings do) and rank 0's injection bandwidth. Routes are found when asked
 * (topo_route.c), so neither grows with the square of the ranks.
 * Usage: bench-topo [NODES]   (default 16384: 131,072 GPUs) */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "topo/topo.h"

static double
peak_rss_MiB(void)
{
    struct rusage ru;

    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss / 1024.0; /* Linux reports KiB */
}

int
main(int argc, char **argv)
{
    int nodes = argc > 1 ? atoi(argv[1]) : 16384;
    if (nodes < 2 || nodes > 65536) {
        fprintf(stderr, "usage: bench-topo [NODES], 2 to 65536\n");
        return 2;
    }
    g_autofree char *json = g_strdup_printf(
        "{\"name\": \"hgx-h100x8-%dn\", \"nodes\": %d, \"node\": \"dgx-h100x8\", \"network\": "
        "{\"kind\": \"ib\", \"nic_bandwidth\": \"400 Gb/s\", \"nic_alpha\": \"0.3 us\", "
        "\"switch_alpha\": \"0.13 us\", \"rail_optimized\": true, \"nodes_per_leaf\": 32}}",
        nodes, nodes);
    g_autoptr(GError) error = NULL;
    gint64 t0 = g_get_monotonic_time();
    g_autoptr(CsTopo) topo = cs_topo_load_data(json, "bench-topo.json", &error);
    if (topo == NULL) {
        fprintf(stderr, "bench-topo: %s\n", error->message);
        return 1;
    }
    double load_s = (g_get_monotonic_time() - t0) / 1e6;
    int P = cs_topo_n_ranks(topo);
    gint64 t1 = g_get_monotonic_time();
    gint64 hops = 0;
    for (int r = 0; r < P; r++)
        hops += cs_topo_route(topo, r, (r + 8) % P)->n_links;
    double net = cs_topo_injection_bw(topo, 0, CS_LINK_CLASS_NET);
    double routes_s = (g_get_monotonic_time() - t1) / 1e6;
    printf("topo %d nodes, %d GPUs, %d devices, %d links: load %.3f s; %d routes (%" G_GINT64_FORMAT
           " hops) and injection %.1f GB/s in %.3f s; peak RSS %.0f MiB\n",
           nodes, P, cs_topo_n_devices(topo), cs_topo_n_links(topo), load_s, P, hops, net / 1e9,
           routes_s, peak_rss_MiB());
    return 0;
}
