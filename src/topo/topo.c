// SPDX-License-Identifier: MIT
/* Topology queries: the names of device and link kinds, a topology's lifetime, its rank map
 * and derived figures, and the route, bandwidth and capability questions the algorithms and
 * the engine ask; copies and output. The loader and the file format are topo_load.c. */
#include <string.h>

#include "base/json_util.h"
#include "base/union_find.h"
#include "topo/topo-private.h"

G_DEFINE_QUARK(cs_topo_error_quark, cs_topo_error)

/* ---- Kind names ---- */

const char *const cs_topo_device_kind_names[CS_N_DEVICE_KINDS] = {
    [CS_DEVICE_GPU] = "gpu",
    [CS_DEVICE_NVSWITCH] = "nvswitch",
    [CS_DEVICE_PCIE_SWITCH] = "pcie_switch",
    [CS_DEVICE_CPU] = "cpu",
    [CS_DEVICE_NIC] = "nic",
    [CS_DEVICE_SWITCH] = "switch",
};

const char *const cs_topo_link_kind_names[CS_N_LINK_KINDS] = {
    [CS_LINK_NVLINK] = "nvlink", [CS_LINK_NVSWITCH] = "nvswitch", [CS_LINK_PCIE] = "pcie",
    [CS_LINK_IB] = "ib",         [CS_LINK_ROCE] = "roce",         [CS_LINK_ETHERNET] = "ethernet",
    [CS_LINK_XGMI] = "xgmi",     [CS_LINK_SHM] = "shm",
};

static const char *const link_class_names[CS_N_LINK_CLASSES] = {
    [CS_LINK_CLASS_NVLINK] = "nvlink",
    [CS_LINK_CLASS_PCI] = "pci",
    [CS_LINK_CLASS_NET] = "net",
};

const char *
cs_device_kind_name(CsDeviceKind kind)
{
    g_return_val_if_fail(kind < CS_N_DEVICE_KINDS, "?");
    return cs_topo_device_kind_names[kind];
}

const char *
cs_link_kind_name(CsLinkKind kind)
{
    g_return_val_if_fail(kind < CS_N_LINK_KINDS, "?");
    return cs_topo_link_kind_names[kind];
}

/**
 * cs_link_kind_class:
 * The class NCCL's cost model puts @kind in: NVLink-like (NVLink, NVSwitch, xGMI), PCI
 * (PCIe and host-memory staging) or NET (IB, RoCE, Ethernet).
 */
CsLinkClass
cs_link_kind_class(CsLinkKind kind)
{
    switch (kind) {
    case CS_LINK_NVLINK:
    case CS_LINK_NVSWITCH:
    case CS_LINK_XGMI:
        return CS_LINK_CLASS_NVLINK;
    case CS_LINK_PCIE:
    case CS_LINK_SHM:
        return CS_LINK_CLASS_PCI;
    case CS_LINK_IB:
    case CS_LINK_ROCE:
    case CS_LINK_ETHERNET:
        return CS_LINK_CLASS_NET;
    case CS_N_LINK_KINDS:
    default:
        break;
    }
    g_return_val_if_reached(CS_LINK_CLASS_NET);
}

const char *
cs_link_class_name(CsLinkClass link_class)
{
    g_return_val_if_fail(link_class < CS_N_LINK_CLASSES, "?");
    return link_class_names[link_class];
}

gboolean
cs_topo_lookup_name(const char *const *names, int n, const char *name, int *index)
{
    for (int i = 0; i < n; i++) {
        if (strcmp(names[i], name) == 0) {
            *index = i;
            return TRUE;
        }
    }
    return FALSE;
}

char *
cs_topo_joined_names(const char *const *names, int n)
{
    GString *s = g_string_new(NULL);
    for (int i = 0; i < n; i++)
        g_string_append_printf(s, "%s%s", i > 0 ? ", " : "", names[i]);
    return g_string_free(s, FALSE);
}

/* ---- Lifecycle ---- */

static void
device_clear(gpointer data)
{
    CsDevice *d = data;
    g_free(d->name);
    g_free(d->model);
}

CsTopo *
cs_topo_new_empty(const char *name, const char *path)
{
    CsTopo *topo = g_new0(CsTopo, 1);

    g_ref_count_init(&topo->ref);
    topo->name = g_strdup(name);
    topo->path = g_strdup(path);
    topo->devices = g_array_new(FALSE, TRUE, sizeof(CsDevice));
    g_array_set_clear_func(topo->devices, device_clear);
    topo->origins = g_array_new(FALSE, TRUE, sizeof(CsDeviceOrigin));
    topo->links = g_array_new(FALSE, TRUE, sizeof(CsLink));
    topo->by_name = g_hash_table_new(g_str_hash, g_str_equal);
    for (int p = 0; p < CS_TOPO_N_PROTOS; p++)
        for (int c = 0; c < CS_N_LINK_CLASSES; c++)
            topo->hop_latency_s[p][c] = -1.0;
    return topo;
}

CsTopo *
cs_topo_ref(CsTopo *topo)
{
    g_return_val_if_fail(topo != NULL, NULL);
    g_ref_count_inc(&topo->ref);
    return topo;
}

/**
 * cs_topo_unref:
 * Drops a reference; the last one frees the topology with its routes.
 */
void
cs_topo_unref(CsTopo *topo)
{
    if (topo == NULL || !g_ref_count_dec(&topo->ref))
        return;
    g_hash_table_unref(topo->by_name);
    g_array_unref(topo->devices);
    g_array_unref(topo->origins);
    g_array_unref(topo->links);
    if (topo->rank_order != NULL)
        g_array_unref(topo->rank_order);
    g_free(topo->rank_device);
    g_free(topo->rank_node);
    g_free(topo->rank_island);
    g_free(topo->out_start);
    g_free(topo->out_links);
    g_free(topo->in_start);
    g_free(topo->in_links);
    g_free(topo->node_start);
    g_free(topo->node_devs);
    cs_topo_routes_free(topo);
    g_free(topo->name);
    g_free(topo->description);
    g_free(topo->path);
    cs_topo_price_free(topo->price);
    g_free(topo);
}

int
cs_topo_add_device(CsTopo *topo, const CsDevice *device, const CsDeviceOrigin *origin)
{
    if (g_hash_table_contains(topo->by_name, device->name))
        return -1;
    CsDevice d = *device;
    d.name = g_strdup(device->name);
    d.model = g_strdup(device->model);
    g_array_append_val(topo->devices, d);
    g_array_append_val(topo->origins, *origin);
    int index = (int)topo->devices->len - 1;
    g_hash_table_insert(topo->by_name, g_array_index(topo->devices, CsDevice, index).name,
                        GINT_TO_POINTER(index + 1));
    return index;
}

void
cs_topo_add_link(CsTopo *topo, const CsLink *link)
{
    g_array_append_val(topo->links, *link);
}

/* ---- Rank map and derived figures ---- */

static gboolean
choose_ranks(CsTopo *topo, const CsJsonCtx *ctx, GError **error)
{
    GArray *ranks = g_array_new(FALSE, FALSE, sizeof(int));
    int n_dev = (int)topo->devices->len;

    if (topo->rank_order != NULL) {
        g_array_append_vals(ranks, topo->rank_order->data, topo->rank_order->len);
    }
    else {
        for (int pass = 0; pass < 2 && ranks->len == 0; pass++) {
            CsDeviceKind want = pass == 0 ? CS_DEVICE_GPU : CS_DEVICE_CPU;
            int max_node = -1;
            for (int d = 0; d < n_dev; d++)
                max_node = MAX(max_node, g_array_index(topo->devices, CsDevice, d).node);
            /* Node-major; devices outside every node come last and are reported below. */
            for (int node = 0; node <= max_node + 1; node++) {
                int want_node = node <= max_node ? node : -1;
                for (int d = 0; d < n_dev; d++) {
                    const CsDevice *dev = &g_array_index(topo->devices, CsDevice, d);
                    if (dev->kind == want && dev->node == want_node)
                        g_array_append_val(ranks, d);
                }
            }
        }
    }
    topo->n_ranks = (int)ranks->len;
    topo->rank_device = (int *)(void *)g_array_free(ranks, FALSE);
    if (topo->n_ranks == 0) {
        cs_json_set_error(ctx, error, "devices", "no gpu (or cpu) device to run ranks on");
        return FALSE;
    }
    return TRUE;
}

static gboolean
check_rank_devices(CsTopo *topo, const CsJsonCtx *ctx, GError **error)
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

    for (int r = 0; r < topo->n_ranks; r++) {
        int d = topo->rank_device[r];
        const CsDevice *dev = &g_array_index(topo->devices, CsDevice, d);
        const CsDeviceOrigin *o = &g_array_index(topo->origins, CsDeviceOrigin, d);
        g_autofree char *p = o->file_index >= 0 ? g_strdup_printf("devices[%d]", o->file_index)
                                                : g_strdup("node.devices");
        if (dev->node < 0) {
            cs_json_set_error(ctx, error, p,
                              "%s \"%s\" runs a rank but belongs to no node (node %d)",
                              cs_device_kind_name(dev->kind), dev->name, dev->node);
            return FALSE;
        }
        for (gsize i = 0; i < G_N_ELEMENTS(needed); i++) {
            if ((o->spec_mask & needed[i].bit) == 0) {
                cs_json_set_error(ctx, error, p,
                                  "%s \"%s\" runs a rank but has no \"%s\" (give it on the "
                                  "device or in the top-level \"%s\" object)",
                                  cs_device_kind_name(dev->kind), dev->name, needed[i].key,
                                  cs_device_kind_name(dev->kind));
                return FALSE;
            }
        }
    }
    return TRUE;
}

static gboolean
map_nodes(CsTopo *topo, const CsJsonCtx *ctx, GError **error)
{
    int max_node = -1;

    for (int r = 0; r < topo->n_ranks; r++)
        max_node = MAX(max_node, g_array_index(topo->devices, CsDevice, topo->rank_device[r]).node);
    topo->n_nodes = max_node + 1;
    g_autofree int *per_node = g_new0(int, topo->n_nodes);
    topo->rank_node = g_new(int, topo->n_ranks);
    for (int r = 0; r < topo->n_ranks; r++) {
        topo->rank_node[r] = g_array_index(topo->devices, CsDevice, topo->rank_device[r]).node;
        per_node[topo->rank_node[r]]++;
    }
    topo->ranks_per_node = 0;
    for (int n = 0; n < topo->n_nodes; n++) {
        if (per_node[n] == 0) {
            cs_json_set_error(ctx, error, "devices",
                              "nodes are numbered 0 to %d, but node %d has no rank", max_node, n);
            return FALSE;
        }
        topo->ranks_per_node = MAX(topo->ranks_per_node, per_node[n]);
    }
    return TRUE;
}

/* Islands are the connected components of the devices over NVLink-class links: a route of
 * NVLink class (every link NVLink, NVSwitch or xGMI) never leaves one, so whoever looks for
 * the ranks a rank reaches over NVLink only need not look outside its island. Numbered by
 * their lowest rank, in rank order. */
static void
compute_islands(CsTopo *topo)
{
    const int n_dev = (int)topo->devices->len;
    g_autofree int *parent = g_new(int, n_dev);
    g_autofree int *number = g_new(int, n_dev);
    int n_islands = 0;

    for (int d = 0; d < n_dev; d++) {
        parent[d] = d;
        number[d] = -1;
    }
    for (guint i = 0; i < topo->links->len; i++) {
        const CsLink *l = &g_array_index(topo->links, CsLink, i);
        if (cs_link_kind_class(l->kind) == CS_LINK_CLASS_NVLINK)
            cs_uf_union(parent, l->src, l->dst);
    }
    g_free(topo->rank_island);
    topo->rank_island = g_new(int, topo->n_ranks);
    for (int r = 0; r < topo->n_ranks; r++) {
        int root = cs_uf_find(parent, topo->rank_device[r]);
        if (number[root] < 0)
            number[root] = n_islands++;
        topo->rank_island[r] = number[root];
    }
}

static void
compute_flags(CsTopo *topo)
{
    topo->nvls = topo->n_ranks > 0;
    for (int r = 0; r < topo->n_ranks && topo->nvls; r++) {
        int d = topo->rank_device[r];
        gboolean found = FALSE;
        for (int k = topo->out_start[d]; k < topo->out_start[d + 1] && !found; k++) {
            const CsLink *l = &g_array_index(topo->links, CsLink, topo->out_links[k]);
            const CsDevice *peer = &g_array_index(topo->devices, CsDevice, l->dst);
            found = peer->kind == CS_DEVICE_NVSWITCH && peer->multicast_reduction;
        }
        topo->nvls = found;
    }
    topo->sharp = topo->template_sharp;
    for (guint d = 0; d < topo->devices->len; d++) {
        const CsDevice *dev = &g_array_index(topo->devices, CsDevice, d);
        if (dev->kind == CS_DEVICE_SWITCH && dev->sharp)
            topo->sharp = TRUE;
    }
}

/**
 * cs_topo_finish:
 * Everything derived from devices and links: the rank map (checked: every rank device has
 * its costs and a node, nodes 0..N-1 all have ranks), connectivity (checked: every rank
 * reaches every other), NVLS and SHARP flags. Routes and bandwidth figures come when asked.
 */
gboolean
cs_topo_finish(CsTopo *topo, const CsJsonCtx *ctx, GError **error)
{
    if (!choose_ranks(topo, ctx, error) || !check_rank_devices(topo, ctx, error)
        || !map_nodes(topo, ctx, error))
        return FALSE;
    cs_topo_build_adjacency(topo);
    if (!cs_topo_check_connected(topo, ctx, error))
        return FALSE;
    cs_topo_routes_init(topo);
    cs_topo_finish_transport(topo);
    compute_islands(topo);
    compute_flags(topo);
    return TRUE;
}

/* ---- Queries ---- */

const char *
cs_topo_name(const CsTopo *topo)
{
    return topo->name;
}

const char *
cs_topo_description(const CsTopo *topo)
{
    return topo->description;
}

const char *
cs_topo_path(const CsTopo *topo)
{
    return topo->path;
}

int
cs_topo_n_devices(const CsTopo *topo)
{
    return (int)topo->devices->len;
}

const CsDevice *
cs_topo_device(const CsTopo *topo, int index)
{
    g_return_val_if_fail(index >= 0 && index < (int)topo->devices->len, NULL);
    return &g_array_index(topo->devices, CsDevice, index);
}

int
cs_topo_find_device(const CsTopo *topo, const char *name)
{
    return cs_topo_device_index(topo, name);
}

int
cs_topo_n_links(const CsTopo *topo)
{
    return (int)topo->links->len;
}

const CsLink *
cs_topo_link(const CsTopo *topo, int index)
{
    g_return_val_if_fail(index >= 0 && index < (int)topo->links->len, NULL);
    return &g_array_index(topo->links, CsLink, index);
}

int
cs_topo_n_ranks(const CsTopo *topo)
{
    return topo->n_ranks;
}

int
cs_topo_rank_device(const CsTopo *topo, int rank)
{
    g_return_val_if_fail(rank >= 0 && rank < topo->n_ranks, -1);
    return topo->rank_device[rank];
}

/**
 * cs_topo_rank_island:
 * @rank's NVLink island: ranks whose devices NVLink-class links join (through NVSwitches),
 * numbered from 0 by their lowest rank. Two ranks in different islands never have a route
 * of NVLink class between them; two in one island may not either (a partial NVLink mesh
 * can route them over PCIe).
 */
int
cs_topo_rank_island(const CsTopo *topo, int rank)
{
    g_return_val_if_fail(rank >= 0 && rank < topo->n_ranks, -1);
    return topo->rank_island[rank];
}

int
cs_topo_rank_node(const CsTopo *topo, int rank)
{
    g_return_val_if_fail(rank >= 0 && rank < topo->n_ranks, -1);
    return topo->rank_node[rank];
}

int
cs_topo_n_nodes(const CsTopo *topo)
{
    return topo->n_nodes;
}

int
cs_topo_ranks_per_node(const CsTopo *topo)
{
    return topo->ranks_per_node;
}

const CsGpuSpec *
cs_topo_rank_gpu(const CsTopo *topo, int rank)
{
    g_return_val_if_fail(rank >= 0 && rank < topo->n_ranks, NULL);
    return &g_array_index(topo->devices, CsDevice, topo->rank_device[rank]).gpu;
}

gboolean
cs_topo_full_mesh(const CsTopo *topo, int nranks)
{
    g_return_val_if_fail(nranks <= topo->n_ranks, FALSE);
    if (nranks < 3)
        return FALSE;
    for (int a = 0; a < nranks; a++)
        for (int b = 0; b < nranks; b++)
            if (a != b && cs_topo_route(topo, a, b)->n_links != 1)
                return FALSE;
    return TRUE;
}

guint
cs_topo_default_protos(const CsTopo *topo, int nranks)
{
    const guint all = (1u << CS_TOPO_N_PROTOS) - 1;
    guint protos = all;
    for (int r = 0; r < MIN(nranks, topo->n_ranks); r++) {
        guint own = cs_topo_rank_gpu(topo, r)->default_protos;
        own = own != 0 ? own : all;
        /* A CPU rank's library (MPI) moves whole buffers: Simple only (models/protocol.c). */
        if (cs_topo_device(topo, topo->rank_device[r])->kind == CS_DEVICE_CPU)
            own &= CS_TOPO_SIMPLE_BIT;
        protos &= own;
    }
    return protos;
}

gboolean
cs_topo_has_nvls(const CsTopo *topo)
{
    return topo->nvls;
}

gboolean
cs_topo_has_sharp(const CsTopo *topo)
{
    return topo->sharp;
}

/**
 * cs_topo_bisection_bw:
 * The maximum flow (= minimum cut) from ranks [0, P/2) to ranks [P/2, P) over the links'
 * usable bandwidths, one direction, bytes/s; 0 for P < 2. With node-major ranks this cuts
 * between the first and second half of the nodes (or of one node's GPUs).
 */
double
cs_topo_bisection_bw(const CsTopo *topo)
{
    return cs_topo_routes_bisection(topo);
}

/**
 * cs_topo_hop_latency_override:
 * The per-hop latency of protocol @proto (a CsProto) on @link_class that the file's
 * "protocols" object sets, in seconds, or -1 when it sets none.
 */
double
cs_topo_hop_latency_override(const CsTopo *topo, int proto, CsLinkClass link_class)
{
    g_return_val_if_fail(proto >= 0 && proto < CS_TOPO_N_PROTOS, -1.0);
    g_return_val_if_fail(link_class < CS_N_LINK_CLASSES, -1.0);
    return topo->hop_latency_s[proto][link_class];
}

/* ---- Copies and output ---- */

/**
 * cs_topo_copy_unfinished:
 * A copy of @topo's devices, links, rank order, transport and overrides, not yet finished.
 */
CsTopo *
cs_topo_copy_unfinished(const CsTopo *topo)
{
    CsTopo *copy = cs_topo_new_empty(topo->name, topo->path);

    copy->description = g_strdup(topo->description);
    copy->template_sharp = topo->template_sharp;
    copy->transport = topo->transport;
    copy->transport_set = topo->transport_set;
    copy->price = cs_topo_price_copy(topo->price);
    memcpy(copy->hop_latency_s, topo->hop_latency_s, sizeof copy->hop_latency_s);
    for (guint d = 0; d < topo->devices->len; d++)
        cs_topo_add_device(copy, &g_array_index(topo->devices, CsDevice, d),
                           &g_array_index(topo->origins, CsDeviceOrigin, d));
    g_array_append_vals(copy->links, topo->links->data, topo->links->len);
    copy->rank_order = g_array_new(FALSE, FALSE, sizeof(int));
    g_array_append_vals(copy->rank_order, topo->rank_device, topo->n_ranks);
    return copy;
}

/**
 * cs_topo_finish_copy:
 * Finishes a copy: same devices and connectivity as a loaded topology, and ranks on nodes
 * numbered from 0, so it cannot fail.
 */
CsTopo *
cs_topo_finish_copy(CsTopo *copy)
{
    CsJsonCtx ctx
        = { .origin = copy->name, .domain = CS_TOPO_ERROR, .code = CS_TOPO_ERROR_INVALID };
    g_autoptr(GError) error = NULL;
    gboolean ok = cs_topo_finish(copy, &ctx, &error);

    g_assert_no_error(error);
    g_assert(ok);
    return copy;
}

static gboolean *
rank_device_mask(const CsTopo *topo)
{
    gboolean *is_rank = g_new0(gboolean, topo->devices->len);
    for (int r = 0; r < topo->n_ranks; r++)
        is_rank[topo->rank_device[r]] = TRUE;
    return is_rank;
}

/**
 * cs_topo_adjust_init:
 * Fills @adjust with the adjustment that changes nothing: scales 1, no hop latencies.
 */
void
cs_topo_adjust_init(CsTopoAdjust *adjust)
{
    g_return_if_fail(adjust != NULL);
    for (int k = 0; k < CS_N_LINK_KINDS; k++) {
        adjust->link_alpha_scale[k] = 1.0;
        adjust->link_bw_scale[k] = 1.0;
    }
    for (int p = 0; p < CS_TOPO_N_PROTOS; p++)
        for (int c = 0; c < CS_N_LINK_CLASSES; c++)
            adjust->hop_latency_s[p][c] = -1.0;
    adjust->launch_scale = 1.0;
    adjust->step_overhead_scale = 1.0;
    adjust->reduce_bw_scale = 1.0;
    adjust->copy_bw_scale = 1.0;
}

/**
 * cs_topo_adjust:
 * A copy of @topo with every link's alpha and usable bandwidth scaled by its kind's factors
 * (raw_bw_Bps keeps the datasheet value), the costs of every GPU and rank device scaled, and
 * the non-negative hop latencies of @adjust set as protocol overrides. Routes are recomputed.
 * Returns: (transfer full).
 */
CsTopo *
cs_topo_adjust(const CsTopo *topo, const CsTopoAdjust *adjust)
{
    g_return_val_if_fail(topo != NULL && adjust != NULL, NULL);
    CsTopo *copy = cs_topo_copy_unfinished(topo);
    g_autofree gboolean *is_rank = rank_device_mask(topo);

    for (guint i = 0; i < copy->links->len; i++) {
        CsLink *l = &g_array_index(copy->links, CsLink, i);
        l->alpha_s *= adjust->link_alpha_scale[l->kind];
        l->bw_Bps *= adjust->link_bw_scale[l->kind];
    }
    for (guint d = 0; d < copy->devices->len; d++) {
        CsDevice *dev = &g_array_index(copy->devices, CsDevice, d);
        if (dev->kind != CS_DEVICE_GPU && !is_rank[d])
            continue;
        dev->gpu.launch_s *= adjust->launch_scale;
        dev->gpu.step_overhead_s *= adjust->step_overhead_scale;
        dev->gpu.reduce_Bps *= adjust->reduce_bw_scale;
        dev->gpu.copy_Bps *= adjust->copy_bw_scale;
    }
    for (int p = 0; p < CS_TOPO_N_PROTOS; p++)
        for (int c = 0; c < CS_N_LINK_CLASSES; c++)
            if (adjust->hop_latency_s[p][c] >= 0.0)
                copy->hop_latency_s[p][c] = adjust->hop_latency_s[p][c];
    return cs_topo_finish_copy(copy);
}

/**
 * cs_topo_copy_with:
 * A new topology like @topo in which every link of @link_kind gets @alpha_s (if >= 0) and
 * the usable per-lane bandwidth @lane_bw_Bps (if > 0: bw_Bps = count * lane_bw_Bps, the
 * efficiency being part of the fitted figure; raw_bw_Bps keeps the datasheet value), and every
 * GPU and every rank device gets @gpu when non-NULL. Routes are recomputed (the widest-path
 * tie-break may change). Returns: (transfer full).
 */
CsTopo *
cs_topo_copy_with(const CsTopo *topo, CsLinkKind link_kind, double alpha_s, double lane_bw_Bps,
                  const CsGpuSpec *gpu)
{
    g_return_val_if_fail(topo != NULL, NULL);
    CsTopo *copy = cs_topo_copy_unfinished(topo);
    g_autofree gboolean *is_rank = rank_device_mask(topo);

    for (guint d = 0; d < copy->devices->len; d++) {
        CsDevice *dev = &g_array_index(copy->devices, CsDevice, d);
        if (gpu != NULL && (dev->kind == CS_DEVICE_GPU || is_rank[d])) {
            dev->gpu = *gpu;
            g_array_index(copy->origins, CsDeviceOrigin, d).spec_mask = SPEC_ALL;
        }
    }
    for (guint i = 0; i < copy->links->len; i++) {
        CsLink *l = &g_array_index(copy->links, CsLink, i);
        if (l->kind != link_kind)
            continue;
        if (alpha_s >= 0.0)
            l->alpha_s = alpha_s;
        if (lane_bw_Bps > 0.0)
            l->bw_Bps = l->count * lane_bw_Bps;
    }
    return cs_topo_finish_copy(copy);
}

static char *
fmt_time(double s)
{
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    g_ascii_formatd(buf, sizeof buf, "%.15g", s * 1e6);
    return g_strdup_printf("%s us", buf);
}

static char *
fmt_bw(double Bps)
{
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    g_ascii_formatd(buf, sizeof buf, "%.15g", Bps / 1e9);
    return g_strdup_printf("%s GB/s", buf);
}

static void
add_owned_string(cJSON *obj, const char *key, char *value)
{
    cJSON_AddStringToObject(obj, key, value);
    g_free(value);
}

static gboolean
same_link_params(const CsLink *a, const CsLink *b)
{
    return a->kind == b->kind && a->alpha_s == b->alpha_s && a->bw_Bps == b->bw_Bps
           && a->raw_bw_Bps == b->raw_bw_Bps && a->count == b->count;
}

/**
 * cs_topo_to_json:
 * @topo as an explicit-graph document (templates expanded, calibrated values included), which
 * cs_topo_load_data() reads back to the same devices, links and rank map. A pair of opposite
 * links with equal parameters is written as one duplex link.
 * Returns: (transfer full): pretty-printed JSON text.
 */
char *
cs_topo_to_json(const CsTopo *topo)
{
    g_autoptr(cJSON) root = cJSON_CreateObject();

    cJSON_AddStringToObject(root, "name", topo->name);
    cJSON_AddStringToObject(root, "description", topo->description);
    cJSON *devices = cJSON_AddArrayToObject(root, "devices");
    for (guint d = 0; d < topo->devices->len; d++) {
        const CsDevice *dev = &g_array_index(topo->devices, CsDevice, d);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", dev->name);
        cJSON_AddStringToObject(o, "kind", cs_device_kind_name(dev->kind));
        cJSON_AddNumberToObject(o, "node", dev->node);
        if (dev->model != NULL)
            cJSON_AddStringToObject(o, "model", dev->model);
        guint mask = g_array_index(topo->origins, CsDeviceOrigin, d).spec_mask;
        if (mask & SPEC_LAUNCH)
            add_owned_string(o, "launch", fmt_time(dev->gpu.launch_s));
        if (mask & SPEC_STEP)
            add_owned_string(o, "step_overhead", fmt_time(dev->gpu.step_overhead_s));
        if (mask & SPEC_REDUCE)
            add_owned_string(o, "reduce_bandwidth", fmt_bw(dev->gpu.reduce_Bps));
        if (mask & SPEC_COPY)
            add_owned_string(o, "copy_bandwidth", fmt_bw(dev->gpu.copy_Bps));
        if (dev->gpu.default_protos != 0) {
            cJSON *list = cJSON_AddArrayToObject(o, "default_protocols");
            for (int k = 0; k < CS_TOPO_N_PROTOS; k++)
                if (dev->gpu.default_protos & (1u << k))
                    cJSON_AddItemToArray(list, cJSON_CreateString(cs_topo_proto_names[k]));
        }
        if (dev->kind == CS_DEVICE_NVSWITCH)
            cJSON_AddBoolToObject(o, "multicast_reduction", dev->multicast_reduction);
        if (dev->kind == CS_DEVICE_SWITCH)
            cJSON_AddBoolToObject(o, "sharp", dev->sharp);
        cJSON_AddItemToArray(devices, o);
    }

    cJSON *links = cJSON_AddArrayToObject(root, "links");
    g_autofree gboolean *done = g_new0(gboolean, topo->links->len);
    for (guint i = 0; i < topo->links->len; i++) {
        if (done[i])
            continue;
        const CsLink *l = &g_array_index(topo->links, CsLink, i);
        gboolean duplex = FALSE;
        for (int k = topo->out_start[l->dst]; k < topo->out_start[l->dst + 1]; k++) {
            int j = topo->out_links[k];
            const CsLink *r = &g_array_index(topo->links, CsLink, j);
            if ((guint)j > i && !done[j] && r->dst == l->src && same_link_params(l, r)) {
                done[j] = TRUE;
                duplex = TRUE;
                break;
            }
        }
        cJSON *o = cJSON_CreateObject();
        const char *ends[2] = {
            g_array_index(topo->devices, CsDevice, l->src).name,
            g_array_index(topo->devices, CsDevice, l->dst).name,
        };
        cJSON_AddItemToObject(o, "endpoints", cJSON_CreateStringArray(ends, 2));
        cJSON_AddStringToObject(o, "kind", cs_link_kind_name(l->kind));
        /* A fitted bandwidth above the datasheet cannot be an efficiency <= 1: write it
         * as the lane bandwidth itself. */
        gboolean above = l->bw_Bps > l->raw_bw_Bps;
        add_owned_string(o, "bandwidth", fmt_bw((above ? l->bw_Bps : l->raw_bw_Bps) / l->count));
        cJSON_AddNumberToObject(o, "count", l->count);
        if (l->bw_Bps < l->raw_bw_Bps)
            cJSON_AddNumberToObject(o, "efficiency", l->bw_Bps / l->raw_bw_Bps);
        add_owned_string(o, "alpha", fmt_time(l->alpha_s));
        if (!duplex)
            cJSON_AddBoolToObject(o, "duplex", FALSE);
        cJSON_AddItemToArray(links, o);
    }

    cJSON *protocols = NULL;
    for (int p = 0; p < CS_TOPO_N_PROTOS; p++) {
        cJSON *per_class = NULL;
        for (int c = 0; c < CS_N_LINK_CLASSES; c++) {
            if (topo->hop_latency_s[p][c] < 0.0)
                continue;
            if (protocols == NULL)
                protocols = cJSON_AddObjectToObject(root, "protocols");
            if (per_class == NULL)
                per_class = cJSON_AddObjectToObject(protocols, cs_topo_proto_names[p]);
            add_owned_string(per_class, cs_link_class_name(c), fmt_time(topo->hop_latency_s[p][c]));
        }
    }

    if (topo->transport_set) {
        cJSON *t = cJSON_AddObjectToObject(root, "transport");
        cJSON_AddStringToObject(t, "kind", topo->transport.kind);
        add_owned_string(t, "latency", fmt_time(topo->transport.latency_s));
        add_owned_string(t, "flush", fmt_time(topo->transport.flush_s));
        add_owned_string(t, "reported", fmt_time(topo->transport.reported_s));
        cJSON_AddStringToObject(t, "source", topo->transport.source);
    }

    cs_topo_price_to_json(topo->price, root);

    cJSON *ranks = cJSON_AddArrayToObject(root, "ranks");
    for (int r = 0; r < topo->n_ranks; r++)
        cJSON_AddItemToArray(
            ranks,
            cJSON_CreateString(g_array_index(topo->devices, CsDevice, topo->rank_device[r]).name));
    char *text = cs_json_print(root, TRUE);
    /* cJSON indents with tabs and writes "key":<tab>value; JSON strings never hold a raw
     * tab, so every tab is layout: two spaces per level, one space after a colon. */
    GString *out = g_string_sized_new(strlen(text) + 1024);
    for (const char *c = text; *c != '\0'; c++) {
        if (*c == '\t')
            g_string_append(out, c > text && c[-1] == ':' ? " " : "  ");
        else
            g_string_append_c(out, *c);
    }
    cJSON_free(text);
    return g_string_free(out, FALSE);
}
