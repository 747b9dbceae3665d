// SPDX-License-Identifier: MIT
/* Cluster templates: N copies of a node (a shipped single-node topology or an inline graph)
 * joined by a scale-out network, expanded into the explicit graph the rest of collsim uses.
 *
 * Expansion (documented for users in topologies/README.md):
 *  - node i's devices are renamed "n<i>/<name>" and put in node i; its links are copied.
 *  - NICs: the node's own nic devices, in file order; if it declares none, or the network gives
 *    a nic_link (which replaces the node's NICs and their links), the template makes
 *    "n<i>/nic<j>" and joins each to the node's rank devices with network.nic_link (NIC j to
 *    rank device j*R/N when there are N >= R NICs for R rank devices, else rank device k to
 *    NIC k*N/R), e.g. every DGX H100 GPU with its own ConnectX-7 over PCIe Gen5 x16.
 *  - Nodes are grouped by nodes_per_leaf (default: all). Rail-optimized: NIC j of every node
 *    of group g goes to leaf "rail<j>" ("su<g>/rail<j>" with several groups); otherwise every
 *    NIC of group g goes to "leaf" ("leaf<g>"). With more than one leaf, every leaf has an
 *    uplink to one "spine" whose capacity is the leaf's down-port capacity divided by the
 *    oversubscription (a non-blocking spine layer shown as one device).
 *  - Pods (nodes_per_pod, whole leaf groups): a third tier. Each pod's leaves uplink to the
 *    pod's own spine "pod<p>/spine", and every pod spine to one "core" with its down capacity
 *    divided by pod_oversubscription: a three-tier Clos (fat tree) as NVIDIA describes it
 *    (InfiniBand Cluster Bring-up Procedure v1.0, "Acronyms", 2024-05-28: LEAF, SPINE and CORE
 *    tiers, a Spine-Leaf Group per pod, "Super Spine" for the core; NVIDIA Enterprise RA, NVL72
 *    AI Factory, "Network Logical Architecture": super-spine, spine and leaf for larger design
 *    points) and as Meta builds RoCE clusters (Gangidi et al., "RDMA over Ethernet for
 *    Distributed AI Training at Meta Scale", SIGCOMM 2024: RTSW leaves and CTSW spines form a
 *    non-blocking AI zone, an oversubscribed ATSW layer joins zones).
 *  - Latency: a link entering a switch costs nic_alpha + switch_alpha (NIC to leaf) or
 *    switch_alpha (between switches); a link leaving towards a NIC costs nic_alpha.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "topo/topo-private.h"

static const char *const template_keys[] = {
    "name", "description", "nodes", "domains", "node", "network", "protocols", "price", NULL,
};
static const char *const network_keys[] = {
    "kind",
    "nics_per_node",
    "nic_bandwidth",
    "nic_efficiency",
    "nic_alpha",
    "switch_alpha",
    "rail_optimized",
    "nodes_per_leaf",
    "oversubscription",
    "nodes_per_pod",
    "pod_oversubscription",
    "sharp",
    "nic_link",
    "transport",
    "source",
    NULL,
};
static const char *const nic_link_keys[] = {
    "kind", "bandwidth", "count", "efficiency", "alpha", "source", NULL,
};

typedef struct {
    CsLinkKind kind;
    int nics_per_node; /* 0 until known */
    double nic_Bps;    /* bytes/s per NIC port, per direction (datasheet) */
    double nic_efficiency;
    double nic_alpha_s;
    double switch_alpha_s;
    gboolean rail_optimized;
    int nodes_per_leaf;
    double oversubscription;
    int nodes_per_pod;           /* a multiple of nodes_per_leaf; all nodes: no core tier */
    double pod_oversubscription; /* a pod spine's down / up capacity to the core */
    gboolean sharp;
    const cJSON *nic_link; /* (nullable) */
} Network;

typedef struct {
    CsLinkKind kind;
    double lane_Bps;
    int count;
    double efficiency;
    double alpha_s;
} NicLink;

/* ---- The node ---- */

/* The node's rank devices in rank order: "ranks" if given, else its GPUs, else its CPUs. */
static GArray *
unit_ranks(const CsTopo *unit)
{
    GArray *ranks = g_array_new(FALSE, FALSE, sizeof(int));

    if (unit->rank_order != NULL) {
        g_array_append_vals(ranks, unit->rank_order->data, unit->rank_order->len);
        return ranks;
    }
    for (int pass = 0; pass < 2 && ranks->len == 0; pass++) {
        CsDeviceKind want = pass == 0 ? CS_DEVICE_GPU : CS_DEVICE_CPU;
        for (guint d = 0; d < unit->devices->len; d++)
            if (g_array_index(unit->devices, CsDevice, d).kind == want)
                g_array_append_val(ranks, d);
    }
    return ranks;
}

/* Every device of a template's node is in node 0: the template numbers the copies. */
static gboolean
check_single_node(const CsTopo *unit, const CsJsonCtx *ctx, const char *devices_path,
                  GError **error)
{
    for (guint d = 0; d < unit->devices->len; d++) {
        const CsDevice *dev = &g_array_index(unit->devices, CsDevice, d);
        if (dev->node != 0) {
            g_autofree char *p = g_strdup_printf("%s[%u].node", devices_path, d);
            cs_json_set_error(ctx, error, p,
                              "a node of a cluster template must be one node (0), got %d",
                              dev->node);
            return FALSE;
        }
    }
    return TRUE;
}

/* Loads the node (by name or inline) into @unit; messages about a named node's own content
 * name its file. */
static gboolean
load_unit(CsTopo *unit, const CsJsonCtx *ctx, const cJSON *root, const char *base_dir,
          gboolean domain, char **label, GError **error)
{
    const cJSON *node = cs_json_member(root, "node");

    if (node == NULL) {
        cs_json_set_error(ctx, error, "", "missing key \"node\"");
        return FALSE;
    }
    if (cJSON_IsObject(node)) {
        *label = g_strdup("node");
        if (cs_json_member(node, "nodes") != NULL || cs_json_member(node, "domains") != NULL) {
            cs_json_set_error(ctx, error, "node", "a node cannot itself be a cluster template");
            return FALSE;
        }
        return cs_topo_parse_graph(unit, ctx, node, "node", error)
               && (domain || check_single_node(unit, ctx, "node.devices", error));
    }
    if (!cJSON_IsString(node)) {
        g_autofree char *got = cs_json_describe(node);
        cs_json_set_error(ctx, error, "node",
                          "expected the name of a single-node topology or a node object, got %s",
                          got);
        return FALSE;
    }

    g_autoptr(GError) local = NULL;
    g_autofree char *path = cs_topo_resolve(node->valuestring, base_dir, &local);
    if (path == NULL) {
        cs_json_set_error(ctx, error, "node", "%s", local->message);
        return FALSE;
    }
    g_autofree char *text = NULL;
    if (!g_file_get_contents(path, &text, NULL, &local)) {
        cs_json_set_error(ctx, error, "node", "cannot read %s: %s", path, local->message);
        return FALSE;
    }
    /* An error in the node's file names that file, and is said of this template's node. */
    g_autoptr(cJSON) doc = cs_json_parse(text, path, CS_TOPO_ERROR, CS_TOPO_ERROR_PARSE, error);
    if (doc == NULL) {
        g_prefix_error(error, "%s: node: ", ctx->origin);
        return FALSE;
    }
    if (cJSON_IsObject(doc)
        && (cs_json_member(doc, "nodes") != NULL || cs_json_member(doc, "domains") != NULL)) {
        cs_json_set_error(ctx, error, "node",
                          "\"%s\" is a cluster template itself; name a single-node topology",
                          node->valuestring);
        return FALSE;
    }
    *label = g_strdup_printf("\"%s\"", node->valuestring);
    CsJsonCtx node_ctx = { .origin = path, .domain = ctx->domain, .code = ctx->code };
    if (!cs_topo_parse_graph(unit, &node_ctx, doc, "", error)
        || (!domain && !check_single_node(unit, &node_ctx, "devices", error))) {
        g_prefix_error(error, "%s: node: ", ctx->origin);
        return FALSE;
    }
    return TRUE;
}

/* The node's rank devices must carry their GPU costs before they are copied N times. */
static gboolean
check_unit_ranks(const CsTopo *unit, const GArray *ranks, const CsJsonCtx *ctx, const char *label,
                 GError **error)
{
    static const struct {
        guint bit;
        const char *key;
    } needed[] = {
        { SPEC_LAUNCH, "launch" },
        { SPEC_STEP, "step_overhead" },
        { SPEC_REDUCE, "reduce_bandwidth" },
        { SPEC_COPY, "copy_bandwidth" },
    };

    if (ranks->len == 0) {
        cs_json_set_error(ctx, error, "node", "%s has no gpu (or cpu) device to run ranks on",
                          label);
        return FALSE;
    }
    for (guint r = 0; r < ranks->len; r++) {
        int d = g_array_index(ranks, int, r);
        const CsDevice *dev = &g_array_index(unit->devices, CsDevice, d);
        guint mask = g_array_index(unit->origins, CsDeviceOrigin, d).spec_mask;
        for (gsize i = 0; i < G_N_ELEMENTS(needed); i++) {
            if ((mask & needed[i].bit) == 0) {
                cs_json_set_error(ctx, error, "node", "%s: %s \"%s\" runs a rank but has no \"%s\"",
                                  label, cs_device_kind_name(dev->kind), dev->name, needed[i].key);
                return FALSE;
            }
        }
    }
    return TRUE;
}

/* ---- The network ---- */

static gboolean
read_link_kind(const CsJsonCtx *ctx, const cJSON *obj, const char *path, const char *key,
               gboolean scale_out, CsLinkKind *kind, GError **error)
{
    const char *name = NULL;

    if (!cs_json_get_string(ctx, obj, path, key, scale_out, &name, error))
        return FALSE;
    if (name == NULL)
        return TRUE;
    for (int k = 0; k < CS_N_LINK_KINDS; k++) {
        if (strcmp(cs_link_kind_name(k), name) != 0)
            continue;
        if (scale_out && cs_link_kind_class(k) != CS_LINK_CLASS_NET)
            break;
        *kind = k;
        return TRUE;
    }
    g_autofree char *p = cs_json_path_member(path, key);
    cs_json_set_error(ctx, error, p,
                      scale_out ? "\"%s\" is not a scale-out link kind (ib, roce, ethernet)"
                                : "\"%s\" is not a link kind",
                      name);
    return FALSE;
}

static gboolean
read_network(const CsJsonCtx *ctx, const cJSON *root, int nodes, Network *net, GError **error)
{
    const cJSON *obj = NULL;
    const char *source = NULL;

    if (!cs_json_get_object(ctx, root, "", "network", TRUE, &obj, error)
        || !cs_json_check_object(ctx, obj, "network", network_keys, error))
        return FALSE;
    *net = (Network){
        .nic_efficiency = 1.0,
        .nodes_per_leaf = nodes,
        .oversubscription = 1.0,
        .nodes_per_pod = nodes,
        .pod_oversubscription = 1.0,
    };
    if (!(read_link_kind(ctx, obj, "network", "kind", TRUE, &net->kind, error)
          && cs_json_get_int(ctx, obj, "network", "nics_per_node", FALSE, 1, 1 << 16,
                             &net->nics_per_node, error)
          && cs_json_get_bandwidth(ctx, obj, "network", "nic_bandwidth", TRUE, &net->nic_Bps, error)
          && cs_json_get_number(ctx, obj, "network", "nic_efficiency", FALSE, 0.0, TRUE, 1.0,
                                &net->nic_efficiency, error)
          && cs_json_get_time(ctx, obj, "network", "nic_alpha", TRUE, &net->nic_alpha_s, error)
          && cs_json_get_time(ctx, obj, "network", "switch_alpha", TRUE, &net->switch_alpha_s,
                              error)
          && cs_json_get_bool(ctx, obj, "network", "rail_optimized", FALSE, &net->rail_optimized,
                              error)
          && cs_json_get_int(ctx, obj, "network", "nodes_per_leaf", FALSE, 1, CS_TOPO_MAX_RANKS,
                             &net->nodes_per_leaf, error)
          && cs_json_get_number(ctx, obj, "network", "oversubscription", FALSE, 1.0, FALSE, 1e6,
                                &net->oversubscription, error)
          && cs_json_get_int(ctx, obj, "network", "nodes_per_pod", FALSE, 1, CS_TOPO_MAX_RANKS,
                             &net->nodes_per_pod, error)
          && cs_json_get_number(ctx, obj, "network", "pod_oversubscription", FALSE, 1.0, FALSE, 1e6,
                                &net->pod_oversubscription, error)
          && cs_json_get_bool(ctx, obj, "network", "sharp", FALSE, &net->sharp, error)
          && cs_json_get_object(ctx, obj, "network", "nic_link", FALSE, &net->nic_link, error)
          && cs_json_get_string(ctx, obj, "network", "source", FALSE, &source, error)))
        return FALSE;
    /* Pods hold whole leaf groups (one pod, the default, holds every node). */
    if (net->nodes_per_pod < nodes && net->nodes_per_pod % net->nodes_per_leaf != 0) {
        cs_json_set_error(ctx, error, "network.nodes_per_pod",
                          "%d nodes per pod: a pod holds whole leaf groups of nodes_per_leaf = "
                          "%d nodes",
                          net->nodes_per_pod, net->nodes_per_leaf);
        return FALSE;
    }
    /* A leaf group or pod larger than the machine is a partly filled one (the DGX SuperPOD
     * GB200 RA: "the fabric should be designed to support the full SU ... and leave the
     * portion of the fabric unused"): all nodes on one leaf group, one pod. */
    net->nodes_per_leaf = MIN(net->nodes_per_leaf, nodes);
    net->nodes_per_pod = MIN(net->nodes_per_pod, nodes);
    /* The slowest lanes the template makes, spine and core uplinks: the same floor as any
     * link's. */
    if (net->nic_Bps * net->nic_efficiency / net->oversubscription < CS_TOPO_MIN_USABLE_BPS) {
        cs_json_set_error(ctx, error, "network",
                          "nic_bandwidth x nic_efficiency / oversubscription is below 1 MB/s "
                          "(a spine link that slow would swamp every prediction)");
        return FALSE;
    }
    if (net->nic_Bps * net->nic_efficiency / net->oversubscription / net->pod_oversubscription
        < CS_TOPO_MIN_USABLE_BPS) {
        cs_json_set_error(ctx, error, "network.pod_oversubscription",
                          "nic_bandwidth x nic_efficiency / oversubscription / "
                          "pod_oversubscription is below 1 MB/s (a core link that slow would "
                          "swamp every prediction)");
        return FALSE;
    }
    return TRUE;
}

static gboolean
read_nic_link(const CsJsonCtx *ctx, const cJSON *obj, NicLink *nl, GError **error)
{
    const char *source = NULL;
    const char *path = "network.nic_link";

    *nl = (NicLink){ .kind = CS_LINK_PCIE, .count = 1, .efficiency = 1.0 };
    return cs_json_check_object(ctx, obj, path, nic_link_keys, error)
           && read_link_kind(ctx, obj, path, "kind", FALSE, &nl->kind, error)
           && cs_json_get_bandwidth(ctx, obj, path, "bandwidth", TRUE, &nl->lane_Bps, error)
           && cs_json_get_int(ctx, obj, path, "count", FALSE, 1, 1 << 20, &nl->count, error)
           && cs_json_get_number(ctx, obj, path, "efficiency", FALSE, 0.0, TRUE, 1.0,
                                 &nl->efficiency, error)
           && cs_json_get_time(ctx, obj, path, "alpha", TRUE, &nl->alpha_s, error)
           && cs_json_get_string(ctx, obj, path, "source", FALSE, &source, error);
}

/* The one link that joins each of the node's NICs (@unit_nics) to a rank device, when every
 * NIC has exactly one, the same for all: what a template making a different number of NICs
 * attaches its own with when no nic_link is given. FALSE with @why (static) otherwise. */
static gboolean
node_nic_link(const CsTopo *unit, const GArray *unit_nics, NicLink *nl, const char **why)
{
    for (guint i = 0; i < unit_nics->len; i++) {
        const int nic = g_array_index(unit_nics, int, i);
        const CsLink *out = NULL;
        const CsLink *in = NULL;
        for (guint k = 0; k < unit->links->len; k++) {
            const CsLink *l = &g_array_index(unit->links, CsLink, k);
            if (l->src != nic && l->dst != nic)
                continue;
            const CsLink **slot = l->src == nic ? &in : &out; /* towards the GPU, from it */
            if (*slot != NULL) {
                *why = "a NIC has more than one link";
                return FALSE;
            }
            *slot = l;
        }
        if (out == NULL || in == NULL || out->src != in->dst) {
            *why = "a NIC is not joined to one device both ways";
            return FALSE;
        }
        const CsDevice *peer = &g_array_index(unit->devices, CsDevice, out->src);
        if (peer->kind != CS_DEVICE_GPU && peer->kind != CS_DEVICE_CPU) {
            *why = "a NIC hangs off a switch, not a GPU";
            return FALSE;
        }
        const NicLink this = {
            .kind = out->kind,
            .lane_Bps = out->raw_bw_Bps / out->count,
            .count = out->count,
            .efficiency = out->bw_Bps / out->raw_bw_Bps,
            .alpha_s = out->alpha_s,
        };
        if (in->kind != out->kind || in->bw_Bps != out->bw_Bps || in->count != out->count
            || in->alpha_s != out->alpha_s
            || (i > 0
                && (this.kind != nl->kind || this.lane_Bps != nl->lane_Bps
                    || this.count != nl->count || this.efficiency != nl->efficiency
                    || this.alpha_s != nl->alpha_s))) {
            *why = "its NICs' links differ";
            return FALSE;
        }
        *nl = this;
    }
    return unit_nics->len > 0;
}

/* ---- Expansion ---- */

static void
add_pair(CsTopo *topo, int a, int b, CsLinkKind kind, double lane_Bps, int count, double efficiency,
         double alpha_ab, double alpha_ba)
{
    CsLink l = {
        .src = a,
        .dst = b,
        .kind = kind,
        .alpha_s = alpha_ab,
        .bw_Bps = count * lane_Bps * efficiency,
        .raw_bw_Bps = count * lane_Bps,
        .count = count,
        .file_index = -1,
    };
    cs_topo_add_link(topo, &l);
    l.src = b;
    l.dst = a;
    l.alpha_s = alpha_ba;
    cs_topo_add_link(topo, &l);
}

/* A device the template generates (a NIC, a leaf, the spine); -1 with @error when the
 * node's own devices already hold its name. */
static int
add_switch(CsTopo *topo, const CsJsonCtx *ctx, const char *name, int node, CsDeviceKind kind,
           gboolean sharp, GError **error)
{
    CsDevice d = { .name = (char *)name, .kind = kind, .node = node, .sharp = sharp };
    CsDeviceOrigin o = { .file_index = -1 };
    int index = cs_topo_add_device(topo, &d, &o);
    if (index < 0)
        cs_json_set_error(ctx, error, "network",
                          "the template generates a device named \"%s\", which the node's own "
                          "devices already use (rename that device)",
                          name);
    return index;
}

/**
 * cs_topo_template_expand:
 * Reads the cluster template @root and fills @topo with the expanded graph and the
 * node-major rank order. The node named in "node" is looked up next to the template first
 * (@base_dir), then in the search directories.
 */
gboolean
cs_topo_template_expand(CsTopo *topo, const CsJsonCtx *ctx, const cJSON *root, const char *base_dir,
                        GError **error)
{
    if (!cs_json_check_object(ctx, root, "", template_keys, error)
        || !cs_topo_parse_protocols(topo, ctx, root, "", error))
        return FALSE;

    /* "nodes": copies of a one-node unit; "domains": copies of an NVLink domain, a unit of
     * several nodes (an NVL72 rack's trays) whose switches sit outside them. */
    const gboolean domain = cs_json_member(root, "domains") != NULL;
    const char *count_key = domain ? "domains" : "nodes";
    if (domain && cs_json_member(root, "nodes") != NULL) {
        cs_json_set_error(ctx, error, "domains",
                          "give \"nodes\" (copies of a one-node unit) or \"domains\" (copies of "
                          "a unit of several nodes), not both");
        return FALSE;
    }
    const cJSON *count_item = cs_json_member(root, count_key);
    if (cJSON_IsNumber(count_item) && count_item->valuedouble < 1) {
        cs_json_set_error(ctx, error, count_key, "a cluster template needs at least 1 %s, got %g",
                          domain ? "domain" : "node", count_item->valuedouble);
        return FALSE;
    }
    int copies = 0;
    if (!cs_json_get_int(ctx, root, "", count_key, TRUE, 1, CS_TOPO_MAX_NODES, &copies, error))
        return FALSE;

    g_autoptr(CsTopo) unit = cs_topo_new_empty("node", NULL);
    g_autofree char *label = NULL;
    if (!load_unit(unit, ctx, root, base_dir, domain, &label, error))
        return FALSE;
    /* The template's price, else its node file's (a quote per node of that node). */
    if (!cs_topo_parse_price(topo, ctx, root, "", error))
        return FALSE;
    if (topo->price == NULL)
        topo->price = cs_topo_price_copy(unit->price);
    g_autoptr(GArray) ranks = unit_ranks(unit);
    if (!check_unit_ranks(unit, ranks, ctx, label, error))
        return FALSE;
    /* The unit's nodes: 0 .. T-1, each with ranks. */
    int T = 1;
    for (guint r = 0; r < ranks->len; r++)
        T = MAX(T, g_array_index(unit->devices, CsDevice, g_array_index(ranks, int, r)).node + 1);
    g_autofree int *tray_ranks = g_new0(int, T);
    for (guint r = 0; r < ranks->len; r++) {
        int t = g_array_index(unit->devices, CsDevice, g_array_index(ranks, int, r)).node;
        if (t < 0) {
            cs_json_set_error(ctx, error, "node", "%s: a rank device outside every node", label);
            return FALSE;
        }
        tray_ranks[t]++;
    }
    for (int t = 0; t < T; t++) {
        if (tray_ranks[t] == 0) {
            cs_json_set_error(ctx, error, "node",
                              "%s: nodes are numbered 0 to %d, but node %d has no rank", label,
                              T - 1, t);
            return FALSE;
        }
    }
    if ((gint64)copies * T > CS_TOPO_MAX_NODES) {
        cs_json_set_error(ctx, error, count_key,
                          "%d domains of %d nodes are more than the %d nodes collsim holds", copies,
                          T, CS_TOPO_MAX_NODES);
        return FALSE;
    }
    const int nodes = copies * T;
    if ((gint64)copies * ranks->len > CS_TOPO_MAX_RANKS) {
        cs_json_set_error(ctx, error, count_key,
                          "%d %s of %u ranks are %" G_GINT64_FORMAT " ranks, more than the %d "
                          "collsim holds",
                          copies, count_key, ranks->len, (gint64)copies * ranks->len,
                          CS_TOPO_MAX_RANKS);
        return FALSE;
    }

    Network net;
    if (!read_network(ctx, root, nodes, &net, error))
        return FALSE;
    /* The unit's NICs, node by node (every node must have as many). */
    g_autoptr(GArray) unit_nics = g_array_new(FALSE, FALSE, sizeof(int));
    for (int t = 0; t < T; t++)
        for (guint d = 0; d < unit->devices->len; d++) {
            const CsDevice *dev = &g_array_index(unit->devices, CsDevice, d);
            if (dev->kind == CS_DEVICE_NIC && dev->node == t)
                g_array_append_val(unit_nics, d);
        }
    NicLink nic_link = { 0 };
    int nics = (int)unit_nics->len / T;
    /* nics_per_node other than the node's count, without a nic_link: the template makes that
     * many, attached as the node attaches its own (4 NICs instead of 8, a GPU each on PCIe). */
    gboolean derived = FALSE;
    const char *nic_model = NULL;
    if (unit_nics->len > 0 && unit_nics->len % T == 0 && net.nic_link == NULL
        && net.nics_per_node != 0 && net.nics_per_node != nics) {
        const char *why = NULL;
        if (!node_nic_link(unit, unit_nics, &nic_link, &why)) {
            cs_json_set_error(ctx, error, "network.nics_per_node",
                              "%d, but node %s declares %d nic devices and %s: give "
                              "network.nic_link to say how the template's %d attach",
                              net.nics_per_node, label, nics, why, net.nics_per_node);
            return FALSE;
        }
        derived = TRUE;
        nic_model = g_array_index(unit->devices, CsDevice, g_array_index(unit_nics, int, 0)).model;
    }
    /* A nic_link (or a derived one) replaces the node's own NICs (a purchase with 4 NICs
     * instead of 8, say): they and their links are left out, and the template makes its own. */
    gboolean replace_nics = unit_nics->len > 0 && (net.nic_link != NULL || derived);
    guint unit_nics_declared = unit_nics->len;
    if (replace_nics) {
        g_array_set_size(unit_nics, 0);
        nics = 0;
    }
    if (unit_nics->len > 0 && unit_nics->len % T != 0) {
        cs_json_set_error(ctx, error, "node",
                          "%s: its %d nodes hold %u nic devices: every node needs as many", label,
                          T, unit_nics->len);
        return FALSE;
    }
    if (nics > 0) {
        if (net.nics_per_node != 0 && net.nics_per_node != nics) {
            cs_json_set_error(ctx, error, "network.nics_per_node",
                              "%d, but node %s declares %d nic devices (give network.nic_link "
                              "too to replace them with %d of the template's own)",
                              net.nics_per_node, label, nics, net.nics_per_node);
            return FALSE;
        }
    }
    else {
        if (replace_nics && net.nics_per_node == 0) {
            cs_json_set_error(ctx, error, "network",
                              "missing key \"nics_per_node\" (a nic_link replaces the %u nic "
                              "devices of node %s: say how many the template makes)",
                              unit_nics_declared, label);
            return FALSE;
        }
        if (net.nics_per_node == 0 || (net.nic_link == NULL && !derived)) {
            cs_json_set_error(ctx, error, "network",
                              "missing key \"%s\" (node %s declares no nic devices, so the "
                              "template makes them: say how many and how they attach)",
                              net.nics_per_node == 0 ? "nics_per_node" : "nic_link", label);
            return FALSE;
        }
        if (!derived && !read_nic_link(ctx, net.nic_link, &nic_link, error))
            return FALSE;
        nics = net.nics_per_node;
    }

    /* The copies: unit device d becomes base + kept[d], or is left out (kept[d] < 0). Unit node
     * t of copy i is node i * T + t; devices outside the unit's nodes stay outside. */
    int n_unit = (int)unit->devices->len;
    g_autofree int *kept = g_new(int, MAX(n_unit, 1));
    int n_kept = 0;
    for (int d = 0; d < n_unit; d++) {
        gboolean nic = g_array_index(unit->devices, CsDevice, d).kind == CS_DEVICE_NIC;
        kept[d] = replace_nics && nic ? -1 : n_kept++;
    }
    g_autofree int *nic_device = g_new(int, (gsize)nodes *nics);
    g_autofree int *tray_rank = g_new(int, ranks->len);
    topo->rank_order = g_array_new(FALSE, FALSE, sizeof(int));
    for (int i = 0; i < copies; i++) {
        int base = (int)topo->devices->len;
        for (int d = 0; d < n_unit; d++) {
            if (kept[d] < 0)
                continue;
            CsDevice dev = g_array_index(unit->devices, CsDevice, d);
            CsDeviceOrigin o = g_array_index(unit->origins, CsDeviceOrigin, d);
            g_autofree char *name = g_strdup_printf("%s%d/%s", domain ? "d" : "n", i, dev.name);
            dev.name = name;
            dev.node = dev.node >= 0 ? i * T + dev.node : -1;
            o.file_index = -1;
            int index = cs_topo_add_device(topo, &dev, &o);
            g_assert(index == base + kept[d]);
        }
        for (guint k = 0; k < unit->links->len; k++) {
            CsLink l = g_array_index(unit->links, CsLink, k);
            if (kept[l.src] < 0 || kept[l.dst] < 0)
                continue;
            l.src = base + kept[l.src];
            l.dst = base + kept[l.dst];
            l.file_index = -1;
            cs_topo_add_link(topo, &l);
        }
        for (guint r = 0; r < ranks->len; r++) {
            int d = base + kept[g_array_index(ranks, int, r)];
            g_array_append_val(topo->rank_order, d);
        }
        for (int t = 0; t < T; t++) {
            int g = i * T + t;
            if (unit_nics->len > 0) {
                for (int j = 0; j < nics; j++)
                    nic_device[g * nics + j]
                        = base + kept[g_array_index(unit_nics, int, t *nics + j)];
                continue;
            }
            /* This node's rank devices, in rank order. */
            int R = 0;
            for (guint r = 0; r < ranks->len; r++) {
                int d = g_array_index(ranks, int, r);
                if (g_array_index(unit->devices, CsDevice, d).node == t)
                    tray_rank[R++] = base + kept[d];
            }
            for (int j = 0; j < nics; j++) {
                g_autofree char *name = domain ? g_strdup_printf("d%d/node%d/nic%d", i, t, j)
                                               : g_strdup_printf("n%d/nic%d", i, j);
                nic_device[g * nics + j]
                    = add_switch(topo, ctx, name, g, CS_DEVICE_NIC, FALSE, error);
                if (nic_device[g * nics + j] < 0)
                    return FALSE;
                /* Made in place of the node's own NICs: the same adapter. */
                if (derived)
                    g_array_index(topo->devices, CsDevice, nic_device[g * nics + j]).model
                        = g_strdup(nic_model);
            }
            /* Spread evenly: each NIC on one rank device, or each rank device on one NIC. */
            int pairs = MAX(nics, R);
            for (int k = 0; k < pairs; k++) {
                int nic = nics >= R ? k : k * nics / R;
                int rank = nics >= R ? k * R / nics : k;
                add_pair(topo, tray_rank[rank], nic_device[g * nics + nic], nic_link.kind,
                         nic_link.lane_Bps, nic_link.count, nic_link.efficiency, nic_link.alpha_s,
                         nic_link.alpha_s);
            }
        }
    }

    /* Leaves, then the spine. */
    int groups = (nodes + net.nodes_per_leaf - 1) / net.nodes_per_leaf;
    int leaves_per_group = net.rail_optimized ? nics : 1;
    g_autofree int *leaf = g_new(int, (gsize)groups *leaves_per_group);
    for (int g = 0; g < groups; g++) {
        for (int j = 0; j < leaves_per_group; j++) {
            g_autofree char *name = NULL;
            if (net.rail_optimized)
                name = groups == 1 ? g_strdup_printf("rail%d", j)
                                   : g_strdup_printf("su%d/rail%d", g, j);
            else
                name = groups == 1 ? g_strdup("leaf") : g_strdup_printf("leaf%d", g);
            leaf[g * leaves_per_group + j]
                = add_switch(topo, ctx, name, -1, CS_DEVICE_SWITCH, net.sharp, error);
            if (leaf[g * leaves_per_group + j] < 0)
                return FALSE;
        }
    }
    for (int i = 0; i < nodes; i++) {
        int g = i / net.nodes_per_leaf;
        for (int j = 0; j < nics; j++) {
            int l = leaf[g * leaves_per_group + (net.rail_optimized ? j : 0)];
            add_pair(topo, nic_device[i * nics + j], l, net.kind, net.nic_Bps, 1,
                     net.nic_efficiency, net.nic_alpha_s + net.switch_alpha_s, net.nic_alpha_s);
        }
    }
    /* One spine, or with pods a spine per pod ("pod<p>/spine") under one "core". */
    const int pods = (nodes + net.nodes_per_pod - 1) / net.nodes_per_pod;
    const int groups_per_pod = pods == 1 ? groups : net.nodes_per_pod / net.nodes_per_leaf;
    if (groups * leaves_per_group > 1) {
        int core = -1;
        if (pods > 1) {
            core = add_switch(topo, ctx, "core", -1, CS_DEVICE_SWITCH, net.sharp, error);
            if (core < 0)
                return FALSE;
        }
        for (int p = 0; p < pods; p++) {
            g_autofree char *name
                = pods == 1 ? g_strdup("spine") : g_strdup_printf("pod%d/spine", p);
            int spine = add_switch(topo, ctx, name, -1, CS_DEVICE_SWITCH, net.sharp, error);
            if (spine < 0)
                return FALSE;
            int pod_ports = 0;
            for (int g = p * groups_per_pod; g < MIN(groups, (p + 1) * groups_per_pod); g++) {
                int in_group = MIN(net.nodes_per_leaf, nodes - g * net.nodes_per_leaf);
                int down_ports = in_group * (net.rail_optimized ? 1 : nics);
                for (int j = 0; j < leaves_per_group; j++) {
                    add_pair(topo, leaf[g * leaves_per_group + j], spine, net.kind,
                             net.nic_Bps / net.oversubscription, down_ports, net.nic_efficiency,
                             net.switch_alpha_s, net.switch_alpha_s);
                    pod_ports += down_ports;
                }
            }
            /* The pod's uplinks: its spine's down capacity / pod_oversubscription. */
            if (core >= 0)
                add_pair(topo, spine, core, net.kind,
                         net.nic_Bps / net.oversubscription / net.pod_oversubscription, pod_ports,
                         net.nic_efficiency, net.switch_alpha_s, net.switch_alpha_s);
        }
    }
    topo->template_sharp = net.sharp;
    /* The network's transport, else the node's (a node file may name one), else the kind's. */
    if (unit->transport_set) {
        topo->transport = unit->transport;
        topo->transport_set = TRUE;
    }
    const cJSON *network = cs_json_member(root, "network");
    return cs_topo_parse_transport(topo, ctx, network, "network", error);
}
