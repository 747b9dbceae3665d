// SPDX-License-Identifier: MIT
/* Bottlenecks said out loud: what binds each GPU's way out of its node (a NIC behind a
 * narrower PCIe link, a NIC shared by GPUs) and each tier of the fabric (oversubscription),
 * as lines for `topo show` and `plan` (docs/bottlenecks.md). */
#include "config.h"

#include <math.h>
#include <string.h>

#include "base/units.h"
#include "cli/cli.h"

/* Past this many ranks the ranks of node 0 stand for the rest, as in `topo show`. */
#define BOTTLENECK_MAX_RANKS 1024

/* "PCIe" for the class names users read in datasheets; the link kind otherwise. */
static const char *
kind_label(CsLinkKind kind)
{
    return kind == CS_LINK_PCIE ? "PCIe" : cs_link_kind_name(kind);
}

/* The statement for @rank's way out, with no device names, so that ranks alike share it. */
static char *
net_statement(const CsTopo *topo, const CsNetPath *p, const char *noun)
{
    g_autofree char *port = cs_units_format_bandwidth(p->port_Bps);
    g_autofree char *nics = p->used == 1 ? g_strdup_printf("NIC %s", port)
                                         : g_strdup_printf("%d NICs x %s", p->used, port);
    g_autofree char *shared = NULL;
    if (p->sharing > 1) {
        g_autofree char *each = cs_units_format_bandwidth(p->ports_Bps);
        shared = g_strdup_printf(" shared by %d %ss (%s each)", p->sharing, noun, each);
    }
    g_autofree char *rate = cs_units_format_bandwidth(p->rate_Bps);
    if (p->front_link >= 0) {
        const CsLink *l = cs_topo_link(topo, p->front_link);
        g_autofree char *front = cs_units_format_bandwidth(p->front_Bps);
        g_autofree char *unused = cs_units_format_bandwidth(p->ports_Bps - p->front_Bps);
        return g_strdup_printf("%s%s behind %s %s: the %s link binds, %s of the NIC rate "
                               "unused",
                               nics, shared != NULL ? shared : "", kind_label(l->kind), front,
                               kind_label(l->kind), unused);
    }
    if (p->sharing > 1)
        return g_strdup_printf("%s%s: the shared NIC binds at %s per %s", nics, shared, rate, noun);
    return g_strdup_printf("%s: the NIC binds at %s per %s, nothing narrower in front", nics, rate,
                           noun);
}

/* " (rank 0: n0/gpu0 -> n0/nic0)": where the statement of @p was seen first. */
static char *
net_example(const CsTopo *topo, int rank, const CsNetPath *p)
{
    const int l = p->front_link >= 0 ? p->front_link : p->port_link;
    const CsLink *link = cs_topo_link(topo, l);
    return g_strdup_printf("rank %d: %s -> %s", rank, cs_topo_device(topo, link->src)->name,
                           cs_topo_device(topo, link->dst)->name);
}

/* Ranks as "0-7, 16-23". */
static char *
rank_ranges(const GArray *ranks)
{
    GString *s = g_string_new(NULL);
    for (guint i = 0; i < ranks->len;) {
        guint j = i;
        while (j + 1 < ranks->len
               && g_array_index(ranks, int, j + 1) == g_array_index(ranks, int, j) + 1)
            j++;
        if (s->len > 0)
            g_string_append(s, ", ");
        if (j == i)
            g_string_append_printf(s, "%d", g_array_index(ranks, int, i));
        else
            g_string_append_printf(s, "%d-%d", g_array_index(ranks, int, i),
                                   g_array_index(ranks, int, j));
        i = j + 1;
    }
    return g_string_free(s, FALSE);
}

static char *
format_ratio(double r)
{
    if (fabs(r - round(r)) < 1e-6)
        return g_strdup_printf("%.0f:1", round(r));
    return g_strdup_printf("%.2f:1", r);
}

static char *
tier_statement(const CsTopo *topo, const CsFabricTier *t)
{
    const char *name = cs_topo_device(topo, t->example)->name;
    g_autofree char *what = t->n_switches == 1
                                ? g_strdup_printf("1 switch, %s", name)
                                : g_strdup_printf("%d switches, e.g. %s", t->n_switches, name);
    if (t->n_uplinked == 0)
        return g_strdup_printf("tier %d (%s): the top tier", t->tier, what);
    g_autofree char *down = cs_units_format_bandwidth(t->down_Bps);
    g_autofree char *up = cs_units_format_bandwidth(t->up_Bps);
    g_autofree char *lo = format_ratio(t->ratio_min);
    g_autofree char *hi = format_ratio(t->ratio_max);
    g_autofree char *ratio
        = strcmp(lo, hi) == 0 ? g_strdup(lo) : g_strdup_printf("%s to %s", lo, hi);
    const char *verdict = t->ratio_max > 1 + 1e-9 ? "oversubscribed: the uplinks bind traffic "
                                                    "that leaves the tier"
                                                  : "non-blocking";
    return g_strdup_printf("tier %d (%s): %s down, %s up, %s, %s", t->tier, what, down, up, ratio,
                           verdict);
}

/**
 * cs_cli_bottlenecks:
 * One line per kind of GPU way out of its node ("ranks 0-15: NIC 100 GB/s behind PCIe
 * 48.0 GB/s: the PCIe link binds, ...") and one per tier of the fabric, without a trailing
 * newline. Empty on a single node. (transfer full): a NULL-terminated vector.
 */
char **
cs_cli_bottlenecks(const CsTopo *topo)
{
    GPtrArray *lines = g_ptr_array_new();
    const int P = cs_topo_n_ranks(topo);
    const int shown = P <= BOTTLENECK_MAX_RANKS ? P : cs_topo_ranks_per_node(topo);
    g_autoptr(GPtrArray) texts = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(GPtrArray) examples = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(GPtrArray) ranks = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
    for (int r = 0; r < shown; r++) {
        CsNetPath p;
        if (!cs_topo_net_path(topo, r, &p))
            continue;
        const CsDeviceKind kind = cs_topo_device(topo, cs_topo_rank_device(topo, r))->kind;
        g_autofree char *text = net_statement(topo, &p, kind == CS_DEVICE_CPU ? "CPU" : "GPU");
        guint i = 0;
        while (i < texts->len && strcmp(g_ptr_array_index(texts, i), text) != 0)
            i++;
        if (i == texts->len) {
            g_ptr_array_add(texts, g_steal_pointer(&text));
            g_ptr_array_add(examples, net_example(topo, r, &p));
            g_ptr_array_add(ranks, g_array_new(FALSE, FALSE, sizeof(int)));
        }
        g_array_append_val(g_ptr_array_index(ranks, i), r);
    }
    for (guint i = 0; i < texts->len; i++) {
        GArray *list = g_ptr_array_index(ranks, i);
        g_autofree char *range = rank_ranges(list);
        g_ptr_array_add(lines,
                        g_strdup_printf("%s %s%s: %s (%s)", list->len == 1 ? "rank" : "ranks",
                                        range, shown < P ? " (node 0)" : "",
                                        (char *)g_ptr_array_index(texts, i),
                                        (char *)g_ptr_array_index(examples, i)));
    }
    if (cs_topo_n_nodes(topo) > 1) {
        g_autoptr(GArray) tiers = cs_topo_fabric_tiers(topo);
        for (guint t = 0; t < tiers->len; t++)
            g_ptr_array_add(lines, tier_statement(topo, &g_array_index(tiers, CsFabricTier, t)));
    }
    g_ptr_array_add(lines, NULL);
    return (char **)g_ptr_array_free(lines, FALSE);
}
