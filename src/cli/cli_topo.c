// SPDX-License-Identifier: MIT
/* `collsim topo show|check|list|import`: what a topology file describes once loaded (devices,
 * links by kind, bandwidth figures, route lengths, node map, NVLS/SHARP), whether files are
 * valid, which topologies ship with collsim, and a node file made from a machine's own
 * topology (NCCL's XML dump, nvidia-smi topo -m; src/topo/topo_import.c). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <glib/gstdio.h>

#include "cli/cli.h"
#include "models/protocol.h"
#include "topo/topo.h"
#include "topo/topo_import.h"
#include "base/units.h"

/* Routes are shown as a matrix up to this many ranks, as a histogram beyond. */
#define MATRIX_MAX_RANKS 16
/* Ranks up to which show summarizes every rank and every pair. */
#define SUMMARY_MAX_RANKS 1024

/* ---- Formatting helpers ---- */

/* @text wrapped at ~96 columns, each line indented by @indent spaces. */
static void
print_wrapped(const char *text, int indent)
{
    g_auto(GStrv) words = g_strsplit(text, " ", -1);
    int col = 0;

    for (char **w = words; *w != NULL; w++) {
        int len = (int)strlen(*w);
        if (len == 0)
            continue;
        if (col > 0 && col + 1 + len > 96) {
            printf("\n");
            col = 0;
        }
        if (col == 0) {
            printf("%*s%s", indent, "", *w);
            col = indent + len;
        }
        else {
            printf(" %s", *w);
            col += 1 + len;
        }
    }
    if (col > 0)
        printf("\n");
}

/* "371 GB/s", or "48.0-371 GB/s" when ranks differ. */
static char *
format_bw_range(double lo, double hi)
{
    if (hi <= 0.0)
        return g_strdup("0");
    if (lo == hi)
        return cs_units_format_bandwidth(lo);
    g_autofree char *a = cs_units_format_bandwidth(lo);
    g_autofree char *b = cs_units_format_bandwidth(hi);
    return g_strdup_printf("%s to %s", a, b);
}

static const char *
rank_noun(const CsTopo *topo)
{
    const CsDevice *d = cs_topo_device(topo, cs_topo_rank_device(topo, 0));
    return d->kind == CS_DEVICE_GPU ? "GPUs" : "CPUs";
}

/* ---- show ---- */

static void
show_devices(const CsTopo *topo)
{
    int n = cs_topo_n_devices(topo);
    g_autoptr(GPtrArray) keys = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(GArray) counts = g_array_new(FALSE, TRUE, sizeof(int));

    /* Group by kind, model and flags, in order of first appearance. */
    for (int i = 0; i < n; i++) {
        const CsDevice *d = cs_topo_device(topo, i);
        char *key = g_strdup_printf(
            "%-11s %s%s%s", cs_device_kind_name(d->kind), d->model != NULL ? d->model : "-",
            d->multicast_reduction ? "  [multicast reduction]" : "", d->sharp ? "  [SHARP]" : "");
        guint at = 0;
        if (g_ptr_array_find_with_equal_func(keys, key, g_str_equal, &at)) {
            g_array_index(counts, int, at)++;
            g_free(key);
            continue;
        }
        int one = 1;
        g_ptr_array_add(keys, key);
        g_array_append_val(counts, one);
    }
    printf("devices: %d\n", n);
    for (guint i = 0; i < keys->len; i++)
        printf("  %5d  %s\n", g_array_index(counts, int, i), (char *)keys->pdata[i]);
}

typedef struct {
    CsLinkKind kind;
    int count;
    double raw_Bps;
    double bw_Bps;
    double alpha_s;
    int n; /* directed links in the group */
} LinkGroup;

static void
show_links(const CsTopo *topo)
{
    g_autoptr(GArray) groups = g_array_new(FALSE, FALSE, sizeof(LinkGroup));
    int n = cs_topo_n_links(topo);

    for (int i = 0; i < n; i++) {
        const CsLink *l = cs_topo_link(topo, i);
        gboolean found = FALSE;
        for (guint g = 0; g < groups->len && !found; g++) {
            LinkGroup *x = &g_array_index(groups, LinkGroup, g);
            if (x->kind == l->kind && x->count == l->count && x->raw_Bps == l->raw_bw_Bps
                && x->bw_Bps == l->bw_Bps && x->alpha_s == l->alpha_s) {
                x->n++;
                found = TRUE;
            }
        }
        if (!found) {
            LinkGroup x = { l->kind, l->count, l->raw_bw_Bps, l->bw_Bps, l->alpha_s, 1 };
            g_array_append_val(groups, x);
        }
    }
    printf("links: %d directed\n", n);
    printf("  %-9s %6s %6s %12s %12s %12s %10s\n", "kind", "links", "lanes", "lane", "datasheet",
           "usable", "alpha");
    for (int k = 0; k < CS_N_LINK_KINDS; k++) {
        for (guint g = 0; g < groups->len; g++) {
            const LinkGroup *x = &g_array_index(groups, LinkGroup, g);
            if ((int)x->kind != k)
                continue;
            g_autofree char *lane = cs_units_format_bandwidth(x->raw_Bps / x->count);
            g_autofree char *raw = cs_units_format_bandwidth(x->raw_Bps);
            g_autofree char *bw = cs_units_format_bandwidth(x->bw_Bps);
            g_autofree char *alpha = cs_units_format_time(x->alpha_s);
            printf("  %-9s %6d %6d %12s %12s %12s %10s\n", cs_link_kind_name(x->kind), x->n,
                   x->count, lane, raw, bw, alpha);
        }
    }
    printf("  (bandwidths per direction; usable = datasheet x efficiency)\n");
}

/* Whether two ranks' devices have the same costs and default protocols. */
static gboolean
same_costs(const CsGpuSpec *a, const CsGpuSpec *b)
{
    return a->launch_s == b->launch_s && a->step_overhead_s == b->step_overhead_s
           && a->reduce_Bps == b->reduce_Bps && a->copy_Bps == b->copy_Bps
           && a->default_protos == b->default_protos;
}

static void
show_ranks(const CsTopo *topo)
{
    int P = cs_topo_n_ranks(topo);
    const CsGpuSpec *g0 = cs_topo_rank_gpu(topo, 0);
    gboolean same = TRUE;

    printf("ranks: %d %s on %d node%s\n", P, rank_noun(topo), cs_topo_n_nodes(topo),
           cs_topo_n_nodes(topo) == 1 ? "" : "s");
    printf("ranks per node: %d\n", cs_topo_ranks_per_node(topo));
    if (P <= MATRIX_MAX_RANKS) {
        for (int r = 0; r < P; r++)
            printf("  rank %-3d %-20s node %d\n", r,
                   cs_topo_device(topo, cs_topo_rank_device(topo, r))->name,
                   cs_topo_rank_node(topo, r));
    }
    else {
        printf("  rank 0 = %s ... rank %d = %s\n",
               cs_topo_device(topo, cs_topo_rank_device(topo, 0))->name, P - 1,
               cs_topo_device(topo, cs_topo_rank_device(topo, P - 1))->name);
    }
    for (int r = 1; r < P; r++)
        same = same && same_costs(cs_topo_rank_gpu(topo, r), g0);
    g_autofree char *launch = cs_units_format_time(g0->launch_s);
    g_autofree char *step = cs_units_format_time(g0->step_overhead_s);
    g_autofree char *reduce = cs_units_format_bandwidth(g0->reduce_Bps);
    g_autofree char *copy = cs_units_format_bandwidth(g0->copy_Bps);
    printf("%s costs%s: launch %s, step overhead %s, reduce %s, copy %s\n",
           cs_topo_device(topo, cs_topo_rank_device(topo, 0))->kind == CS_DEVICE_GPU ? "GPU"
                                                                                     : "CPU",
           same ? "" : " (rank 0; ranks differ)", launch, step, reduce, copy);
    if (g0->default_protos != 0) {
        printf("default protocols (when none is forced):");
        for (int p = 0; p < CS_N_PROTOS; p++)
            if (g0->default_protos & (1u << p))
                printf(" %s", cs_proto_name((CsProto)p));
        printf("\n");
    }
}

/* How the GPUs reach the network: NICs per GPU, how many GPUs share one, and what that leaves
 * each GPU (the NICs its channels use, each at its port rate divided among its sharers). */
static void
show_nics(const CsTopo *topo, int shown)
{
    int lo_used = G_MAXINT, hi_used = 0, lo_share = G_MAXINT, hi_share = 0;
    double lo_bw = G_MAXDOUBLE, hi_bw = 0.0;

    if (cs_topo_n_nodes(topo) < 2)
        return;
    for (int r = 0; r < shown; r++) {
        CsRankNics nics = cs_topo_rank_nics(topo, r);
        double bw = 0.0;
        for (int i = 0; i < MIN(nics.used, CS_TOPO_MAX_RANK_NICS); i++) {
            double port = 0.0;
            const int d = nics.device[i];
            for (int k = 0; k < cs_topo_n_links(topo); k++) {
                const CsLink *l = cs_topo_link(topo, k);
                if (l->src == d
                    && cs_topo_device(topo, l->dst)->node != cs_topo_device(topo, d)->node)
                    port = MAX(port, l->bw_Bps);
            }
            bw += port / MAX(1, nics.sharing);
        }
        lo_used = MIN(lo_used, nics.used);
        hi_used = MAX(hi_used, nics.used);
        lo_share = MIN(lo_share, nics.sharing);
        hi_share = MAX(hi_share, nics.sharing);
        lo_bw = MIN(lo_bw, bw);
        hi_bw = MAX(hi_bw, bw);
    }
    if (hi_used == 0) {
        printf("network per rank: none (no device of a node links out of it)\n");
        return;
    }
    CsRankNics first = cs_topo_rank_nics(topo, 0);
    if (first.used > 0 && first.device[0] == cs_topo_rank_device(topo, 0)) {
        g_autofree char *own = format_bw_range(lo_bw, hi_bw);
        printf("network per rank: its own links out of the node (no NIC): %s\n", own);
        return;
    }
    g_autofree char *used = lo_used == hi_used ? g_strdup_printf("%d", lo_used)
                                               : g_strdup_printf("%d-%d", lo_used, hi_used);
    g_autofree char *share = lo_share == hi_share ? g_strdup_printf("%d", lo_share)
                                                  : g_strdup_printf("%d-%d", lo_share, hi_share);
    g_autofree char *bw = format_bw_range(lo_bw, hi_bw);
    printf("network per rank: %s NIC%s used by its channels, each shared by %s rank%s: %s out "
           "of the node\n",
           used, hi_used == 1 ? "" : "s", share, hi_share == 1 ? "" : "s", bw);
}

static void
show_bandwidth(const CsTopo *topo)
{
    int P = cs_topo_n_ranks(topo);

    /* Past a few thousand ranks the ranks of the first node stand for the rest. */
    int shown = P <= SUMMARY_MAX_RANKS ? P : cs_topo_ranks_per_node(topo);
    printf("injection bandwidth per rank%s:", shown < P ? " (ranks of node 0)" : "");
    for (int c = 0; c < CS_N_LINK_CLASSES; c++) {
        double lo = G_MAXDOUBLE, hi = 0.0;
        for (int r = 0; r < shown; r++) {
            double v = cs_topo_injection_bw(topo, r, c);
            lo = MIN(lo, v);
            hi = MAX(hi, v);
        }
        g_autofree char *s = format_bw_range(lo, hi);
        printf("%s %s %s", c == 0 ? "" : ",", cs_link_class_name(c), s);
    }
    printf("\n");
    show_nics(topo, shown);
    g_auto(GStrv) binds = cs_cli_bottlenecks(topo);
    if (binds[0] != NULL) {
        printf("bottlenecks:\n");
        for (int i = 0; binds[i] != NULL; i++)
            printf("  %s\n", binds[i]);
    }
    const CsTransport *transport = cs_topo_transport(topo);
    if (transport->kind != NULL && cs_topo_n_nodes(topo) > 1) {
        g_autofree char *lat = cs_units_format_time(transport->latency_s);
        g_autofree char *flush = cs_units_format_time(transport->flush_s);
        g_autofree char *rep = cs_units_format_time(transport->reported_s);
        printf("transport: %s, %s per network message, %s more with Simple, %s reported to "
               "NCCL's tuning (%s)\n",
               transport->kind, lat, flush, rep, transport->source);
    }
    /* What a purchase is counted in (collsim plan --price): the whole machine. */
    g_autofree gboolean *all_nodes = g_new(gboolean, MAX(cs_topo_n_nodes(topo), 1));
    for (int n = 0; n < cs_topo_n_nodes(topo); n++)
        all_nodes[n] = TRUE;
    double port_Bps = 0;
    const gint64 ports = cs_topo_switch_ports(topo, &port_Bps);
    printf("purchase counts: %d node%s, %d NIC%s, %" G_GINT64_FORMAT " switch port%s",
           cs_topo_n_nodes(topo), cs_topo_n_nodes(topo) == 1 ? "" : "s",
           cs_topo_count_nics(topo, all_nodes), cs_topo_count_nics(topo, all_nodes) == 1 ? "" : "s",
           ports, ports == 1 ? "" : "s");
    if (ports > 0) {
        g_autofree char *rate = cs_units_format_bandwidth(port_Bps);
        printf(" (of %s)", rate);
    }
    printf("\n");
    const CsTopoPrice *price = cs_topo_price(topo);
    if (price != NULL) {
        static const char *const names[]
            = { "per node", "per NIC", "per switch port", "per GPU-hour", "per node-hour" };
        const double amounts[]
            = { price->node, price->nic, price->switch_port, price->gpu_hour, price->node_hour };
        printf("price:");
        int shown_terms = 0;
        for (gsize i = 0; i < G_N_ELEMENTS(amounts); i++)
            if (amounts[i] >= 0)
                printf("%s %.6g %s", shown_terms++ > 0 ? "," : "", amounts[i], names[i]);
        if (price->amortize_h > 0)
            printf("; purchase amortized over %.6g h", price->amortize_h);
        printf("; currency %s; source: %s\n",
               price->currency != NULL ? price->currency : "not named",
               price->source != NULL ? price->source : "not named");
    }
    g_autofree char *bis = cs_units_format_bandwidth(cs_topo_bisection_bw(topo));
    if (P >= 2)
        printf("bisection bandwidth: %s (max-flow from ranks 0-%d to ranks %d-%d, one way)\n", bis,
               P / 2 - 1, P / 2, P - 1);
    else
        printf("bisection bandwidth: none (one rank)\n");
}

static void
show_routes(const CsTopo *topo, gboolean matrix)
{
    int P = cs_topo_n_ranks(topo);

    if (matrix) {
        printf("route hops (row = source rank, column = destination rank):\n     ");
        for (int t = 0; t < P; t++)
            printf("%4d", t);
        printf("\n");
        for (int s = 0; s < P; s++) {
            printf("  %3d", s);
            for (int t = 0; t < P; t++)
                printf("%4d", cs_topo_route(topo, s, t)->n_links);
            printf("\n");
        }
        return;
    }
    /* Histogram of (hops, slowest class) over ordered pairs of distinct ranks; past a few
     * thousand ranks, over the pairs from rank 0 (every pair would be P^2 routes). */
    int sources = P <= SUMMARY_MAX_RANKS ? P : 1;
    int max_hops = 0;
    for (int s = 0; s < sources; s++)
        for (int t = 0; t < P; t++)
            max_hops = MAX(max_hops, cs_topo_route(topo, s, t)->n_links);
    g_autofree gint64 *hist = g_new0(gint64, (gsize)(max_hops + 1) * CS_N_LINK_CLASSES);
    for (int s = 0; s < sources; s++) {
        for (int t = 0; t < P; t++) {
            if (s == t)
                continue;
            const CsRoute *r = cs_topo_route(topo, s, t);
            hist[r->n_links * CS_N_LINK_CLASSES + r->link_class]++;
        }
    }
    if (sources == P)
        printf("route hops over %" G_GINT64_FORMAT " ordered rank pairs:\n", (gint64)P * (P - 1));
    else
        printf("route hops from rank 0 to the %d other ranks:\n", P - 1);
    for (int h = 1; h <= max_hops; h++)
        for (int c = 0; c < CS_N_LINK_CLASSES; c++)
            if (hist[h * CS_N_LINK_CLASSES + c] > 0)
                printf("  %2d hops, slowest class %-6s %10" G_GINT64_FORMAT " pairs\n", h,
                       cs_link_class_name(c), hist[h * CS_N_LINK_CLASSES + c]);
}

static void
show_topo(const CsTopo *topo, gboolean matrix)
{
    printf("%s", cs_topo_name(topo));
    if (cs_topo_path(topo) != NULL)
        printf(" (%s)", cs_topo_path(topo));
    printf("\n");
    if (cs_topo_description(topo)[0] != '\0')
        print_wrapped(cs_topo_description(topo), 2);
    printf("\n");
    show_devices(topo);
    show_links(topo);
    show_ranks(topo);
    show_bandwidth(topo);
    show_routes(topo, matrix || cs_topo_n_ranks(topo) <= MATRIX_MAX_RANKS);
    printf("NVLS (NVSwitch multicast reduction): %s\n", cs_topo_has_nvls(topo) ? "yes" : "no");
    printf("SHARP (in-network reduction): %s\n", cs_topo_has_sharp(topo) ? "yes" : "no");
}

/* ---- show --dot ---- */

/* @text as a DOT quoted string, "..." with quotes and backslashes escaped (transfer full). */
static char *
dot_quote(const char *text)
{
    GString *s = g_string_new("\"");
    for (const char *p = text; *p != '\0'; p++) {
        if (*p == '"' || *p == '\\')
            g_string_append_c(s, '\\');
        if (*p == '\n')
            g_string_append(s, "\\n");
        else
            g_string_append_c(s, *p);
    }
    g_string_append_c(s, '"');
    return g_string_free(s, FALSE);
}

/* How each kind of device is drawn: GPUs and CPUs (ranks) as filled boxes, switches as
 * hexagons, NICs as ellipses. */
static const char *
dot_style(CsDeviceKind kind)
{
    switch (kind) {
    case CS_DEVICE_GPU:
        return "shape=box, style=filled, fillcolor=\"#cfe2f3\"";
    case CS_DEVICE_CPU:
        return "shape=box, style=filled, fillcolor=\"#e6e6e6\"";
    case CS_DEVICE_NVSWITCH:
        return "shape=hexagon, style=filled, fillcolor=\"#d9ead3\"";
    case CS_DEVICE_PCIE_SWITCH:
        return "shape=hexagon, style=filled, fillcolor=\"#fff2cc\"";
    case CS_DEVICE_NIC:
        return "shape=ellipse, style=filled, fillcolor=\"#fce5cd\"";
    case CS_DEVICE_SWITCH:
        return "shape=hexagon, style=filled, fillcolor=\"#f4cccc\"";
    default:
        return "shape=box";
    }
}

static void
dot_device(GString *out, const CsTopo *topo, int i, const int *rank_of, const char *indent)
{
    const CsDevice *d = cs_topo_device(topo, i);
    GString *label = g_string_new(d->name);
    g_string_append_printf(label, "\n%s", cs_device_kind_name(d->kind));
    if (d->model != NULL)
        g_string_append_printf(label, ": %s", d->model);
    if (rank_of[i] >= 0)
        g_string_append_printf(label, "\nrank %d", rank_of[i]);
    if (d->multicast_reduction)
        g_string_append(label, "\nmulticast reduction (NVLS)");
    if (d->sharp)
        g_string_append(label, "\nSHARP");
    g_autofree char *name = dot_quote(d->name);
    g_autofree char *text = dot_quote(label->str);
    g_string_free(label, TRUE);
    g_string_append_printf(out, "%s%s [label=%s, %s];\n", indent, name, text, dot_style(d->kind));
}

/* "nvswitch x18\n450 GB/s (371 usable)\n100 ns": kind and lanes, bandwidth per direction,
 * alpha. */
static char *
dot_link_label(const CsLink *l)
{
    g_autofree char *raw = cs_units_format_bandwidth(l->raw_bw_Bps);
    g_autofree char *bw = cs_units_format_bandwidth(l->bw_Bps);
    g_autofree char *alpha = cs_units_format_time(l->alpha_s);
    g_autofree char *lanes = l->count > 1 ? g_strdup_printf(" x%d", l->count) : g_strdup("");
    g_autofree char *usable
        = l->bw_Bps != l->raw_bw_Bps ? g_strdup_printf(" (%s usable)", bw) : g_strdup("");
    return g_strdup_printf("%s%s\n%s%s\n%s", cs_link_kind_name(l->kind), lanes, raw, usable, alpha);
}

static gboolean
same_link(const CsLink *a, const CsLink *b)
{
    return a->kind == b->kind && a->count == b->count && a->raw_bw_Bps == b->raw_bw_Bps
           && a->bw_Bps == b->bw_Bps && a->alpha_s == b->alpha_s;
}

/* The topology as a Graphviz digraph: devices by kind (each node's in a cluster), one edge
 * per connection: both directions alike make one undirected-looking edge, a bonded link one
 * edge with its lane count. Returns: (transfer full). */
static char *
topo_to_dot(const CsTopo *topo)
{
    int n = cs_topo_n_devices(topo);
    g_autofree int *rank_of = g_new(int, n);
    for (int i = 0; i < n; i++)
        rank_of[i] = -1;
    for (int r = 0; r < cs_topo_n_ranks(topo); r++)
        rank_of[cs_topo_rank_device(topo, r)] = r;

    GString *out = g_string_new(NULL);
    g_autofree char *name = dot_quote(cs_topo_name(topo));
    g_autofree char *title = g_strdup_printf(
        "%s: %d %s on %d node%s (link labels: kind x lanes, bandwidth per direction, alpha)",
        cs_topo_name(topo), cs_topo_n_ranks(topo), rank_noun(topo), cs_topo_n_nodes(topo),
        cs_topo_n_nodes(topo) == 1 ? "" : "s");
    g_autofree char *qtitle = dot_quote(title);
    g_string_append_printf(out, "// collsim topo show --dot %s\n", cs_topo_name(topo));
    g_string_append_printf(out, "digraph %s {\n", name);
    g_string_append_printf(out, "  graph [label=%s, labelloc=t, fontname=\"Helvetica\"];\n",
                           qtitle);
    g_string_append(out, "  node [fontname=\"Helvetica\", fontsize=10];\n");
    g_string_append(out, "  edge [fontname=\"Helvetica\", fontsize=9];\n");

    /* Devices: each node's in a cluster, in node order; fabric devices after them. */
    int max_node = -1;
    for (int i = 0; i < n; i++)
        max_node = MAX(max_node, cs_topo_device(topo, i)->node);
    for (int node = 0; node <= max_node; node++) {
        gboolean open = FALSE;
        for (int i = 0; i < n; i++) {
            if (cs_topo_device(topo, i)->node != node)
                continue;
            if (!open) {
                g_string_append_printf(out, "  subgraph cluster_node%d {\n", node);
                g_string_append_printf(out, "    label=\"node %d\";\n", node);
                open = TRUE;
            }
            dot_device(out, topo, i, rank_of, "    ");
        }
        if (open)
            g_string_append(out, "  }\n");
    }
    for (int i = 0; i < n; i++) {
        if (cs_topo_device(topo, i)->node < 0)
            dot_device(out, topo, i, rank_of, "  ");
    }

    /* Links: a direction whose reverse is alike is drawn once, without arrows. */
    int n_links = cs_topo_n_links(topo);
    g_autofree gboolean *drawn = g_new0(gboolean, n_links);
    g_autoptr(GHashTable) by_pair = g_hash_table_new(g_int64_hash, g_int64_equal);
    g_autofree gint64 *keys = g_new(gint64, n_links);
    for (int i = 0; i < n_links; i++) {
        const CsLink *l = cs_topo_link(topo, i);
        keys[i] = (gint64)l->src * n + l->dst;
        if (!g_hash_table_contains(by_pair, &keys[i]))
            g_hash_table_insert(by_pair, &keys[i], GINT_TO_POINTER(i));
    }
    for (int i = 0; i < n_links; i++) {
        if (drawn[i])
            continue;
        const CsLink *l = cs_topo_link(topo, i);
        drawn[i] = TRUE;
        gint64 back_key = (gint64)l->dst * n + l->src;
        gpointer back = NULL;
        gboolean both = FALSE;
        if (g_hash_table_lookup_extended(by_pair, &back_key, NULL, &back)) {
            int j = GPOINTER_TO_INT(back);
            if (!drawn[j] && same_link(l, cs_topo_link(topo, j))) {
                drawn[j] = TRUE;
                both = TRUE;
            }
        }
        g_autofree char *a = dot_quote(cs_topo_device(topo, l->src)->name);
        g_autofree char *b = dot_quote(cs_topo_device(topo, l->dst)->name);
        g_autofree char *label = dot_link_label(l);
        g_autofree char *qlabel = dot_quote(label);
        g_string_append_printf(out, "  %s -> %s [label=%s%s%s];\n", a, b, qlabel,
                               both ? ", dir=none" : "", l->count > 1 ? ", penwidth=2" : "");
    }
    g_string_append(out, "}\n");
    return g_string_free(out, FALSE);
}

/* The graph of topo_to_dot() drawn by Graphviz's dot into @path, whose name ends in .svg, .png
 * or .pdf: dot writes into a scratch folder, and @path gets all of the picture or keeps what it
 * held. Without dot, CS_CLI_ERROR_UNAVAILABLE says how to get it. */
static gboolean
plot_topo(const char *prog, const CsTopo *topo, const char *path, GError **error)
{
    static const char *const formats[] = { "svg", "png", "pdf" };
    const char *ext = strrchr(path, '.');
    const char *format = NULL;
    for (gsize i = 0; ext != NULL && i < G_N_ELEMENTS(formats); i++)
        if (g_ascii_strcasecmp(ext + 1, formats[i]) == 0)
            format = formats[i];
    if (format == NULL) {
        g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_INPUT,
                    "%s: --plot %s: the file name ends in .svg, .png or .pdf", prog, path);
        return FALSE;
    }
    if (!cs_cli_check_output(prog, "--plot", path, error))
        return FALSE;
    g_autofree char *dot = g_find_program_in_path("dot");
    if (dot == NULL) {
        g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_UNAVAILABLE,
                    "%s: --plot %s: Graphviz's dot is not installed (Debian: apt-get install "
                    "graphviz); --dot prints the graph for it",
                    prog, path);
        return FALSE;
    }
    g_autoptr(GError) local = NULL;
    g_autofree char *scratch = g_dir_make_tmp("collsim-dot-XXXXXX", &local);
    if (scratch == NULL) {
        g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_WRITE, "%s: --plot %s: %s", prog, path,
                    local->message);
        return FALSE;
    }
    g_autofree char *in = g_build_filename(scratch, "topology.dot", NULL);
    g_autofree char *out = g_build_filename(scratch, "picture", NULL);
    g_autofree char *text = topo_to_dot(topo);
    g_autofree char *flag = g_strdup_printf("-T%s", format);
    char *argv[] = { dot, flag, "-o", out, in, NULL };
    g_autofree char *err = NULL;
    g_autofree char *picture = NULL;
    gsize len = 0;
    int status = 0;
    gboolean ok = g_file_set_contents(in, text, -1, &local)
                  && g_spawn_sync(NULL, argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL,
                                  &err, &status, &local)
                  && g_spawn_check_wait_status(status, &local)
                  && g_file_get_contents(out, &picture, &len, &local);
    g_unlink(out);
    g_unlink(in);
    g_rmdir(scratch);
    if (!ok) {
        /* dot's own first line says why (a format its build lacks, say). */
        const char *why = err != NULL && *err != '\0' ? g_strchomp(g_strdelimit(err, "\n", ' '))
                                                      : local->message;
        g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_FAILED, "%s: --plot %s: %s failed: %s", prog,
                    path, dot, why);
        return FALSE;
    }
    return cs_cli_write_output(prog, "--plot", path, picture, (gssize)len, error);
}

static gboolean
topo_show(int argc, char **argv, GError **error)
{
    gboolean json = FALSE, matrix = FALSE, dot = FALSE;
    g_autofree char *plot = NULL;
    g_auto(GStrv) sets = NULL;
    const GOptionEntry entries[] = {
        CS_CLI_SET_ENTRY(&sets),
        { "json", 0, 0, G_OPTION_ARG_NONE, &json,
          "Print the expanded topology as an explicit-graph JSON file instead", NULL },
        { "matrix", 0, 0, G_OPTION_ARG_NONE, &matrix,
          "Print the route hop matrix even above 16 ranks", NULL },
        { "dot", 0, 0, G_OPTION_ARG_NONE, &dot,
          "Print the graph in Graphviz's DOT language instead (render with e.g. "
          "'dot -Tsvg'): devices by kind, one edge per connection labelled with its kind, "
          "lanes, bandwidth per direction and alpha",
          NULL },
        { "plot", 0, 0, G_OPTION_ARG_FILENAME, &plot,
          "Draw that graph into FILE (.svg, .png or .pdf) with Graphviz's dot, when installed",
          "FILE" },
        G_OPTION_ENTRY_NULL,
    };

    if (!cs_cli_parse(&argc, &argv, entries, "TOPOLOGY",
                      "Show what a topology describes once loaded: devices, links by kind, "
                      "ranks and nodes, injection and bisection bandwidth, route lengths, "
                      "NVLS and SHARP.",
                      "TOPOLOGY is a shipped name ('collsim topo list') or a JSON file.\n"
                      "Examples:\n"
                      "  collsim topo show hgx-h100x8-2n\n"
                      "  collsim topo show hgx-h100x8-2n --set network.nic_bandwidth=800Gb/s\n"
                      "  collsim topo show --dot dgx-h100x8 | dot -Tsvg -o dgx-h100x8.svg\n"
                      "  collsim topo show dgx-h100x8 --plot dgx-h100x8.svg",
                      error))
        return FALSE;
    if (argc != 2) {
        g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_USAGE,
                    argc < 2 ? "%s: which topology? (e.g. dgx-h100x4)"
                             : "%s: one topology at a time",
                    argv[0]);
        return FALSE;
    }
    g_autoptr(CsTopo) topo = cs_cli_load_topo(argv[0], argv[1], sets, error);
    if (topo == NULL)
        return FALSE;
    if (json) {
        g_autofree char *text = cs_topo_to_json(topo);
        printf("%s\n", text);
        return TRUE;
    }
    if (dot) {
        g_autofree char *text = topo_to_dot(topo);
        return cs_cli_write_output(argv[0], NULL, NULL, text, -1, error);
    }
    /* As every --plot: the picture first, then the usual output. */
    if (plot != NULL && !plot_topo(argv[0], topo, plot, error))
        return FALSE;
    show_topo(topo, matrix);
    return TRUE;
}

/* ---- check ---- */

static gboolean
topo_check(int argc, char **argv, GError **error)
{
    g_auto(GStrv) sets = NULL;
    const GOptionEntry entries[] = { CS_CLI_SET_ENTRY(&sets), G_OPTION_ENTRY_NULL };

    if (!cs_cli_parse(&argc, &argv, entries, "TOPOLOGY...",
                      "Load each topology and report it valid, or stop at the first error "
                      "(exit status 2) with one line: file, JSON path, problem.",
                      "--set edits apply to each topology.\n"
                      "Examples:\n"
                      "  collsim topo check topologies/*.json\n"
                      "  collsim topo check hgx-h100x8-2n --set network.nics_per_node=4",
                      error))
        return FALSE;
    if (argc < 2) {
        g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_USAGE,
                    "%s: which topologies? (names or files)", argv[0]);
        return FALSE;
    }
    for (int i = 1; i < argc; i++) {
        g_autoptr(CsTopo) topo = cs_cli_load_topo(argv[0], argv[i], sets, error);
        if (topo == NULL)
            return FALSE;
        printf("%s: ok (%d %s, %d links)\n", argv[i], cs_topo_n_ranks(topo), rank_noun(topo),
               cs_topo_n_links(topo));
        fflush(stdout);
    }
    return TRUE;
}

/* ---- import ---- */

static gboolean
topo_import(int argc, char **argv, GError **error)
{
    g_autofree char *output = NULL;
    g_autofree char *gpu_name = NULL;
    g_autofree char *name = NULL;
    g_autofree char *format = NULL;
    gboolean nvswitch = FALSE;
    double nvlink_Bps = 0, pcie_Bps = 0, sys_Bps = 0;
    const GOptionEntry entries[] = {
        { "gpu", 0, 0, G_OPTION_ARG_STRING, &gpu_name,
          "Topology whose GPU costs (launch, step overhead, reduce and copy rates) the GPUs "
          "get: neither input says them (required)",
          "T" },
        { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output,
          "Write the node file here (replaced whole, or left as it was) instead of stdout",
          "FILE" },
        { "name", 0, 0, G_OPTION_ARG_STRING, &name,
          "The topology's name (default: the input's file name without its extension)", "NAME" },
        { "format", 0, 0, G_OPTION_ARG_STRING, &format,
          "nccl-xml, nvidia-smi or auto (default: XML when it starts with '<')", "F" },
        { "nvlink-bandwidth", 0, 0, G_OPTION_ARG_CALLBACK,
          CS_CLI_ARG_FUNC(cs_cli_parse_bandwidth_arg),
          "nvidia-smi: per NVLink, per direction (the matrix counts links, gives no rate)", "BW" },
        { "pcie-bandwidth", 0, 0, G_OPTION_ARG_CALLBACK,
          CS_CLI_ARG_FUNC(cs_cli_parse_bandwidth_arg), "nvidia-smi: every PCIe link, per direction",
          "BW" },
        { "sys-bandwidth", 0, 0, G_OPTION_ARG_CALLBACK, CS_CLI_ARG_FUNC(cs_cli_parse_bandwidth_arg),
          "nvidia-smi: between CPU sockets (SYS), per direction", "BW" },
        { "nvswitch", 0, 0, G_OPTION_ARG_NONE, &nvswitch,
          "nvidia-smi: NV# counts each GPU's links to one NVSwitch, not direct links to the "
          "peer",
          NULL },
        G_OPTION_ENTRY_NULL,
    };
    const CsCliUnitTarget targets[] = {
        { "nvlink-bandwidth", &nvlink_Bps },
        { "pcie-bandwidth", &pcie_Bps },
        { "sys-bandwidth", &sys_Bps },
        { NULL, NULL },
    };

    if (!cs_cli_parse_units(
            &argc, &argv, entries, targets, "FILE",
            "Turn a machine's topology, as NCCL dumps it (NCCL_TOPO_DUMP_FILE, or an "
            "NCCL_TOPO_FILE) or as 'nvidia-smi topo -m' prints it, into a collsim node file.",
            "Bandwidths come from the XML's own attributes, read as NCCL reads them (NCCL "
            "2.30.7\nsrc/graph/topo.cc); nvidia-smi gives none, so --nvlink-bandwidth, "
            "--pcie-bandwidth\nand --sys-bandwidth say them. What the input holds that the "
            "import leaves out or\nreads by NCCL's rules is reported on stderr, one line each. "
            "A cluster template uses\nthe file as its \"node\" (docs/topology-import.md).\n"
            "Examples:\n"
            "  NCCL_TOPO_DUMP_FILE=node.xml all_reduce_perf -b 8 -e 8 -g 8\n"
            "  collsim topo import --gpu dgx-h100x8 -o mynode.json node.xml\n"
            "  nvidia-smi topo -m > topo.txt\n"
            "  collsim topo import --gpu dgx-h100x8 --nvlink-bandwidth 20.6GB/s --nvswitch \\\n"
            "      --pcie-bandwidth 48GB/s --sys-bandwidth 22GB/s -o mynode.json topo.txt",
            error))
        return FALSE;
    if (argc != 2)
        return cs_cli_usage_error(error, argv[0],
                                  argc < 2 ? "which file? (an NCCL topology XML or nvidia-smi "
                                             "topo -m output)"
                                           : "one file at a time");
    CsTopoImportOptions options = { 0 };
    if (format == NULL || strcmp(format, "auto") == 0)
        options.format = CS_TOPO_IMPORT_AUTO;
    else if (strcmp(format, "nccl-xml") == 0)
        options.format = CS_TOPO_IMPORT_NCCL_XML;
    else if (strcmp(format, "nvidia-smi") == 0)
        options.format = CS_TOPO_IMPORT_NVIDIA_SMI;
    else
        return cs_cli_usage_error(error, argv[0],
                                  "--format: '%s' is none of nccl-xml, nvidia-smi, auto", format);
    if (gpu_name == NULL)
        return cs_cli_usage_error(error, argv[0],
                                  "--gpu: which GPUs? Neither input gives a GPU's costs "
                                  "(launch, memory bandwidth); name a topology whose GPUs "
                                  "match, e.g. --gpu dgx-h100x8 ('collsim topo list')");
    if (!cs_cli_check_output(argv[0], "--output", output, error))
        return FALSE;
    g_autoptr(CsTopo) like = cs_topo_load(gpu_name, error);
    if (like == NULL) {
        g_prefix_error(error, "%s: --gpu: ", argv[0]);
        return FALSE;
    }
    const CsDevice *gpu_dev = cs_topo_device(like, cs_topo_rank_device(like, 0));
    if (gpu_dev->kind != CS_DEVICE_GPU)
        return cs_cli_usage_error(error, argv[0], "--gpu: %s runs its ranks on CPUs, not GPUs",
                                  gpu_name);
    g_autofree char *gpu_source
        = g_strdup_printf("the GPU costs of topology %s (collsim topo import --gpu %s)",
                          cs_topo_name(like), gpu_name);
    options.name = name;
    options.gpu_model = gpu_dev->model;
    options.gpu = *cs_topo_rank_gpu(like, 0);
    options.gpu_source = gpu_source;
    options.nvlink_lane_Bps = nvlink_Bps;
    options.pcie_Bps = pcie_Bps;
    options.sys_Bps = sys_Bps;
    options.nvswitch = nvswitch;

    g_autoptr(GPtrArray) notes = g_ptr_array_new_with_free_func(g_free);
    CsTopoImportSummary sum = { 0 };
    g_autofree char *text = cs_topo_import_file(argv[1], &options, notes, &sum, error);
    /* A failed import is its one error line; the notes are about a file it did not make. */
    if (text == NULL)
        return FALSE;
    /* The result must load: an import the loader refuses is an error, not a file. */
    g_autoptr(GError) invalid = NULL;
    g_autoptr(CsTopo) check = cs_topo_load_data(text, argv[1], &invalid);
    if (check == NULL) {
        g_set_error(error, CS_TOPO_ERROR, CS_TOPO_ERROR_INVALID,
                    "%s: the imported topology does not load: %s", argv[1], invalid->message);
        return FALSE;
    }
    if (!cs_cli_write_output(argv[0], "--output", output, text, -1, error))
        return FALSE;
    for (guint i = 0; i < notes->len; i++)
        fprintf(stderr, "%s\n", (char *)notes->pdata[i]);
    if (output != NULL && strcmp(output, "-") != 0) {
        g_autofree char *nic = NULL;
        if (sum.nic_Bps_max > 0 && sum.nic_Bps_min == sum.nic_Bps_max)
            nic = g_strdup_printf(" (ports of %.15g Gb/s)", sum.nic_Bps_max * 8 / 1e9);
        else if (sum.nic_Bps_max > 0)
            nic = g_strdup_printf(" (ports of %.15g to %.15g Gb/s)", sum.nic_Bps_min * 8 / 1e9,
                                  sum.nic_Bps_max * 8 / 1e9);
        printf("%s: %d GPU%s, %d NIC%s%s, %d NVLink and %d PCIe directed links; a template "
               "names it as its \"node\"\n",
               output, sum.n_gpus, sum.n_gpus == 1 ? "" : "s", sum.n_nics,
               sum.n_nics == 1 ? "" : "s", nic != NULL ? nic : "", sum.n_nvlink_links,
               sum.n_pcie_links);
    }
    return TRUE;
}

/* ---- list ---- */

/* The first sentence of @text: up to the first ". " that does not end "e.g." or "i.e."
 * (transfer full). */
static char *
first_sentence(const char *text)
{
    for (const char *end = strstr(text, ". "); end != NULL; end = strstr(end + 1, ". ")) {
        if (end - text >= 3 && (strncmp(end - 3, "e.g", 3) == 0 || strncmp(end - 3, "i.e", 3) == 0))
            continue;
        return g_strndup(text, end - text + 1);
    }
    return g_strdup(text);
}

/* `topo list` keeps each topology to one line this wide. */
#define LIST_WIDTH 100

/* The head of a description's first sentence that fits @width columns: up to its first
 * colon, parenthesis or semicolon, else cut at a word with "...". (transfer full) */
static char *
headline(const char *sentence, int width)
{
    gsize n = strcspn(sentence, ":(;");
    while (n > 0 && (sentence[n - 1] == ' ' || sentence[n - 1] == ','))
        n--;
    if (n == 0)
        n = strlen(sentence);
    if (g_utf8_strlen(sentence, (gssize)n) <= width)
        return g_strndup(sentence, n);
    /* Cut at the last space that leaves room for the dots. */
    const char *end = g_utf8_offset_to_pointer(sentence, width - 3);
    const char *cut = end;
    while (cut > sentence && *cut != ' ')
        cut--;
    if (cut == sentence)
        cut = end;
    return g_strdup_printf("%.*s...", (int)(cut - sentence), sentence);
}

static gboolean
topo_list(int argc, char **argv, GError **error)
{
    gboolean full = FALSE;
    const GOptionEntry entries[] = {
        { "long", 'l', 0, G_OPTION_ARG_NONE, &full, "Print whole descriptions and file paths",
          NULL },
        G_OPTION_ENTRY_NULL,
    };

    if (!cs_cli_parse(&argc, &argv, entries, "",
                      "List the shipped topologies with the first sentence of their "
                      "descriptions.",
                      "Searched in order: $COLLSIM_TOPO_PATH (':'-separated), the source "
                      "tree's topologies/, the installed data directory.",
                      error))
        return FALSE;
    if (argc > 1) {
        g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_USAGE, "%s: unexpected argument '%s'",
                    argv[0], argv[1]);
        return FALSE;
    }
    g_auto(GStrv) names = cs_topo_list_shipped();
    for (char **n = names; *n != NULL; n++) {
        g_autoptr(GError) local = NULL;
        g_autoptr(CsTopo) topo = cs_topo_load(*n, &local);
        if (topo == NULL) {
            printf("%-24s INVALID: %s\n", *n, local->message);
            continue;
        }
        g_autofree char *what
            = g_strdup_printf("%d %s, %d node%s", cs_topo_n_ranks(topo), rank_noun(topo),
                              cs_topo_n_nodes(topo), cs_topo_n_nodes(topo) == 1 ? "" : "s");
        if (full) {
            printf("%s (%s; %s)\n", *n, what, cs_topo_path(topo));
            print_wrapped(cs_topo_description(topo), 4);
            continue;
        }
        g_autofree char *first = first_sentence(cs_topo_description(topo));
        g_autofree char *brief = headline(first, LIST_WIDTH - 28 - 22);
        printf("%-27s %-21s %s\n", *n, what, brief);
    }
    return TRUE;
}

/* ---- Dispatch ---- */

typedef struct {
    const char *name;
    gboolean (*func)(int argc, char **argv, GError **error);
    const char *summary;
} Verb;

static const Verb verbs[] = {
    { "show", topo_show, "devices, links, bandwidths, routes and flags of one topology" },
    { "check", topo_check, "validate topology files: 'T: ok (N GPUs, M links)' or the error" },
    { "list", topo_list, "the shipped topologies and their descriptions" },
    { "import", topo_import, "a node file from NCCL's topology XML or nvidia-smi topo -m" },
};

static void
print_usage(const char *prog)
{
    printf("Usage:\n  %s COMMAND [OPTION...] [TOPOLOGY...]\n\nCommands:\n", prog);
    for (gsize i = 0; i < G_N_ELEMENTS(verbs); i++)
        printf("  %-6s %s\n", verbs[i].name, verbs[i].summary);
    printf("\nA TOPOLOGY is a shipped name (dgx-h100x4) or a JSON file; the format is "
           "described in topologies/README.md.\nRun '%s COMMAND --help' for a command's "
           "options.\n",
           prog);
}

/**
 * cs_cli_topo:
 * `collsim topo show|check|list|import ...`. Prints to stdout; a bad topology fails with its
 * CS_TOPO_ERROR (exit 2), bad usage with CS_CLI_ERROR_USAGE.
 */
gboolean
cs_cli_topo(int argc, char **argv, GError **error)
{
    if (argc >= 2
        && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0
            || strcmp(argv[1], "help") == 0)) {
        print_usage(argv[0]);
        return TRUE;
    }
    if (argc < 2) {
        g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_USAGE,
                    "%s: missing command (show, check, list or import)", argv[0]);
        return FALSE;
    }
    for (gsize i = 0; i < G_N_ELEMENTS(verbs); i++) {
        if (strcmp(argv[1], verbs[i].name) != 0)
            continue;
        g_autofree char *prog = g_strdup_printf("%s %s", argv[0], verbs[i].name);
        g_autofree char **sub = g_new0(char *, argc);
        sub[0] = prog;
        for (int k = 2; k < argc; k++)
            sub[k - 1] = argv[k];
        return verbs[i].func(argc - 1, sub, error);
    }
    g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_USAGE,
                "%s: unknown command '%s' (show, check, list or import)", argv[0], argv[1]);
    return FALSE;
}
