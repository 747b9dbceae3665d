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

/* ---- Rails broken by the placement ---- */

/* The switch each device reaches first over a network link (its rail or leaf), -1 for
 * devices outside every node or without one. (transfer full): one per device. */
static int *
device_rails(const CsTopo *topo)
{
    const int n_dev = cs_topo_n_devices(topo);
    int *rail = g_new(int, MAX(n_dev, 1));
    for (int d = 0; d < n_dev; d++)
        rail[d] = -1;
    for (int i = 0; i < cs_topo_n_links(topo); i++) {
        const CsLink *l = cs_topo_link(topo, i);
        if (rail[l->src] < 0 && cs_topo_device(topo, l->src)->node >= 0
            && cs_topo_device(topo, l->dst)->kind == CS_DEVICE_SWITCH
            && cs_link_kind_class(l->kind) == CS_LINK_CLASS_NET)
            rail[l->src] = l->dst;
    }
    return rail;
}

/* Adds the rails of @rank's NICs (those its channels use) to @set, each mapped to @rank
 * unless it is there already. */
static void
add_rank_rails(const CsTopo *topo, const int *rail, int rank, GHashTable *set)
{
    const CsRankNics nics = cs_topo_rank_nics(topo, rank);
    for (int i = 0; i < MIN(nics.used, CS_TOPO_MAX_RANK_NICS); i++) {
        const int r = rail[nics.device[i]];
        if (r >= 0 && !g_hash_table_contains(set, GINT_TO_POINTER(r + 1)))
            g_hash_table_insert(set, GINT_TO_POINTER(r + 1), GINT_TO_POINTER(rank + 1));
    }
}

/**
 * cs_cli_rail_breaks:
 * Whether the placement of @n_groups groups of @size ranks each (@ranks, group after group)
 * breaks rails: a group breaks them when one of its nodes is on a rail (a switch the node's
 * NICs reach first) that members on other nodes use but its own members do not, so traffic
 * between those members leaves the rail for a higher tier of switches. NCCL keeps a group on
 * its rails only where every node's members use the same rails (its rings and trees join
 * GPUs behind the same NIC index; DESIGN §11); nodes that share no rail at all (different
 * scalable units, different leaves) are not counted: no placement keeps their traffic on one
 * switch. Returns the bottleneck line naming @kind, how many groups break rails, an example
 * pair and the tier their route climbs to, or NULL when none does. (transfer full)
 */
char *
cs_cli_rail_breaks(const CsTopo *topo, const char *kind, const int *ranks, int size, int n_groups)
{
    g_return_val_if_fail(topo != NULL && ranks != NULL, NULL);
    if (cs_topo_n_nodes(topo) < 2 || size < 2)
        return NULL;
    g_autofree int *rail = device_rails(topo);
    /* Each node's rails: all its devices', whatever the group uses. */
    const int n_nodes = cs_topo_n_nodes(topo);
    g_autoptr(GPtrArray) node_rails = g_ptr_array_new_full(n_nodes, (GDestroyNotify)g_array_unref);
    for (int n = 0; n < n_nodes; n++)
        g_ptr_array_add(node_rails, g_array_new(FALSE, FALSE, sizeof(int)));
    for (int d = 0; d < cs_topo_n_devices(topo); d++) {
        const int node = cs_topo_device(topo, d)->node;
        if (rail[d] < 0 || node < 0 || node >= n_nodes)
            continue;
        GArray *list = g_ptr_array_index(node_rails, node);
        gboolean seen = FALSE;
        for (guint i = 0; i < list->len && !seen; i++)
            seen = g_array_index(list, int, i) == rail[d];
        if (!seen)
            g_array_append_val(list, rail[d]);
    }
    int broken = 0, from = -1, to = -1;
    for (int g = 0; g < n_groups; g++) {
        const int *members = ranks + (gsize)g * size;
        /* Rail -> a member using it, over the group and per node. */
        g_autoptr(GHashTable) used = g_hash_table_new(NULL, NULL);
        g_autoptr(GHashTable) per_node = g_hash_table_new_full(
            NULL, NULL, NULL, (GDestroyNotify)g_hash_table_unref); /* node + 1 -> rail set */
        for (int i = 0; i < size; i++) {
            const int node = cs_topo_rank_node(topo, members[i]);
            GHashTable *set = g_hash_table_lookup(per_node, GINT_TO_POINTER(node + 1));
            if (set == NULL) {
                set = g_hash_table_new(NULL, NULL);
                g_hash_table_insert(per_node, GINT_TO_POINTER(node + 1), set);
            }
            add_rank_rails(topo, rail, members[i], set);
            add_rank_rails(topo, rail, members[i], used);
        }
        if (g_hash_table_size(per_node) < 2)
            continue;
        gboolean breaks = FALSE;
        for (int i = 0; i < size && !breaks; i++) {
            const int node = cs_topo_rank_node(topo, members[i]);
            const GHashTable *own = g_hash_table_lookup(per_node, GINT_TO_POINTER(node + 1));
            const GArray *list = g_ptr_array_index(node_rails, node);
            for (guint k = 0; k < list->len && !breaks; k++) {
                const int r = g_array_index(list, int, k);
                const int user = GPOINTER_TO_INT(g_hash_table_lookup(used, GINT_TO_POINTER(r + 1)));
                if (user == 0 || g_hash_table_contains((GHashTable *)own, GINT_TO_POINTER(r + 1)))
                    continue;
                breaks = TRUE;
                if (from < 0) {
                    from = user - 1;
                    to = members[i];
                }
            }
        }
        broken += breaks;
    }
    if (broken == 0)
        return NULL;
    /* Where the example's traffic goes: the highest switch on its route. */
    int n_tiers = 0;
    g_autofree int *tier = cs_topo_device_tiers(topo, &n_tiers);
    const CsRoute *route = cs_topo_route_channel(topo, from, to, 0);
    int top = -1;
    for (int i = 0; i < route->n_links; i++) {
        const int d = cs_topo_link(topo, route->links[i])->dst;
        if (top < 0 || tier[d] > tier[top])
            top = d;
    }
    const CsRankNics a = cs_topo_rank_nics(topo, from), b = cs_topo_rank_nics(topo, to);
    const char *rail_a = cs_topo_device(topo, rail[a.device[0]])->name;
    const char *rail_b = cs_topo_device(topo, rail[b.device[0]])->name;
    return g_strdup_printf(
        "%s groups: %d of %d break rails: members on different nodes use NICs on different "
        "rails, so their traffic climbs to tier %d (e.g. rank %d on %s to rank %d on %s, "
        "through %s)",
        kind, broken, n_groups, top >= 0 ? tier[top] : 0, from, rail_a, to, rail_b,
        top >= 0 ? cs_topo_device(topo, top)->name : "-");
}
