// SPDX-License-Identifier: MIT
/* Topology loader and queries: reads the JSON files of topologies/ (explicit graph or cluster
 * template, DESIGN §3) into devices and directed links, maps ranks to GPUs and nodes, and
 * answers route, bandwidth and capability questions for the algorithms and the engine.
 *
 * File format (topologies/README.md is the full reference, with examples). Quantities are
 * strings with units, parsed by units.c: times "0.5 us", bandwidths "25 GB/s" / "400 Gb/s".
 * Unknown keys and repeated keys are errors.
 *
 * Explicit graph:
 *   name            string, default the file name without ".json"
 *   description     string: what the machine is and where every number comes from
 *   gpu, cpu        defaults for every gpu / cpu device: model, launch, step_overhead,
 *                   reduce_bandwidth, copy_bandwidth, source (all optional)
 *   devices[]       name (unique), kind (gpu|nvswitch|pcie_switch|cpu|nic|switch),
 *                   node (integer, default 0; -1 = outside every node), model, source;
 *                   gpu/cpu: launch (time, kernel launch / per-collective base latency),
 *                   step_overhead (time, per schedule step), reduce_bandwidth (gamma =
 *                   1 / reduce_bandwidth), copy_bandwidth, default_protocols (the
 *                   protocols the library picks from unless one is forced; default all);
 *                   nvswitch: multicast_reduction (bool, NVLS); switch: sharp (bool)
 *   links[]         endpoints [a, b], kind (nvlink|nvswitch|pcie|ib|roce|ethernet|xgmi|shm),
 *                   bandwidth (per lane, per direction, datasheet), count (bonded lanes,
 *                   default 1), efficiency (usable fraction, default 1.0, (0, 1]),
 *                   alpha (time per traversal), duplex (default true: both directions),
 *                   source
 *   ranks[]         optional device names in rank order; default every GPU (every CPU if the
 *                   file has no GPU) in node-major, then file order
 *   protocols       optional {"LL"|"LL128"|"Simple": {"nvlink"|"pci"|"net": time}}: per-hop
 *                   protocol latencies overriding the protocol model's (calibrated files)
 *   transport       optional scale-out transport: a name (ib|roce|socket|efa|efa3) or
 *                   {kind, latency, source} (topo_transport.c); default from the network links
 *   calibrated_from, calibration   records written by collsim calibrate; ignored
 * A link becomes one CsLink per direction with bw_Bps = count * bandwidth * efficiency and
 * raw_bw_Bps = count * bandwidth. Every device that runs a rank needs all four GPU costs.
 *
 * Cluster template (topo_template.c): name, description, nodes (>= 1), node (the name of a
 * single-node topology, or an inline explicit-graph object), network {kind, nics_per_node,
 * nic_bandwidth, nic_efficiency, nic_alpha, switch_alpha, rail_optimized, nodes_per_leaf,
 * oversubscription, sharp, nic_link, transport, source}, protocols.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "topo/topo-private.h"
#include "base/fileio.h"
#include "base/json_util.h"

G_DEFINE_QUARK(cs_topo_error_quark, cs_topo_error)

/* ---- Kind names ---- */

static const char *const device_kind_names[CS_N_DEVICE_KINDS] = {
    [CS_DEVICE_GPU] = "gpu",
    [CS_DEVICE_NVSWITCH] = "nvswitch",
    [CS_DEVICE_PCIE_SWITCH] = "pcie_switch",
    [CS_DEVICE_CPU] = "cpu",
    [CS_DEVICE_NIC] = "nic",
    [CS_DEVICE_SWITCH] = "switch",
};

static const char *const link_kind_names[CS_N_LINK_KINDS] = {
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
    return device_kind_names[kind];
}

const char *
cs_link_kind_name(CsLinkKind kind)
{
    g_return_val_if_fail(kind < CS_N_LINK_KINDS, "?");
    return link_kind_names[kind];
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

static gboolean
lookup_name(const char *const *names, int n, const char *name, int *index)
{
    for (int i = 0; i < n; i++) {
        if (strcmp(names[i], name) == 0) {
            *index = i;
            return TRUE;
        }
    }
    return FALSE;
}

static char *
joined_names(const char *const *names, int n)
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

/* ---- Search path ---- */

/**
 * cs_topo_search_dirs:
 * Where shipped topologies are looked up, in order: each directory of $COLLSIM_TOPO_PATH
 * (':'-separated), the source tree's topologies/, the installed data directory.
 * Returns: (transfer full): a NULL-terminated list.
 */
char **
cs_topo_search_dirs(void)
{
    GPtrArray *dirs = g_ptr_array_new();
    const char *env = g_getenv("COLLSIM_TOPO_PATH");

    if (env != NULL) {
        g_auto(GStrv) parts = g_strsplit(env, G_SEARCHPATH_SEPARATOR_S, -1);
        for (char **p = parts; *p != NULL; p++)
            if (**p != '\0')
                g_ptr_array_add(dirs, g_strdup(*p));
    }
    /* Each directory once: $COLLSIM_TOPO_PATH often names the source tree's own. */
    const char *defaults[] = { COLLSIM_SOURCE_TOPODIR, NULL };
    g_autofree char *installed = g_build_filename(COLLSIM_DATADIR, "topologies", NULL);
    defaults[1] = installed;
    for (gsize i = 0; i < G_N_ELEMENTS(defaults); i++) {
        gboolean seen = FALSE;
        for (guint j = 0; j < dirs->len && !seen; j++)
            seen = strcmp(g_ptr_array_index(dirs, j), defaults[i]) == 0;
        if (!seen)
            g_ptr_array_add(dirs, g_strdup(defaults[i]));
    }
    g_ptr_array_add(dirs, NULL);
    return (char **)g_ptr_array_free(dirs, FALSE);
}

static int
cmp_strv(gconstpointer a, gconstpointer b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/**
 * cs_topo_list_shipped:
 * The names (file names without ".json") of every topology in the search directories,
 * sorted, each once. Returns: (transfer full): a NULL-terminated list.
 */
char **
cs_topo_list_shipped(void)
{
    g_auto(GStrv) dirs = cs_topo_search_dirs();
    g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);

    for (char **d = dirs; *d != NULL; d++) {
        g_autoptr(GDir) dir = g_dir_open(*d, 0, NULL);
        if (dir == NULL)
            continue;
        const char *entry;
        while ((entry = g_dir_read_name(dir)) != NULL) {
            if (!g_str_has_suffix(entry, ".json"))
                continue;
            g_hash_table_add(seen, g_strndup(entry, strlen(entry) - strlen(".json")));
        }
    }
    GPtrArray *names = g_ptr_array_new();
    GHashTableIter it;
    gpointer key;
    g_hash_table_iter_init(&it, seen);
    while (g_hash_table_iter_next(&it, &key, NULL))
        g_ptr_array_add(names, g_strdup(key));
    g_ptr_array_sort(names, cmp_strv);
    g_ptr_array_add(names, NULL);
    return (char **)g_ptr_array_free(names, FALSE);
}

static gboolean
looks_like_path(const char *s)
{
    return strchr(s, '/') != NULL || g_str_has_suffix(s, ".json");
}

/**
 * cs_topo_resolve:
 * The file @name_or_path stands for. Something with a '/' or ending in ".json" is a path
 * (relative to @base_dir when given, else to the working directory); a plain name is looked
 * up as NAME.json in @base_dir, then in cs_topo_search_dirs(). A ".json" name that is not a
 * file here is also looked up in the search directories.
 * Returns: (transfer full) (nullable): the path, or NULL with CS_TOPO_ERROR_NOT_FOUND.
 */
/* Levenshtein distance between @a and @b. */
static int
edit_distance(const char *a, const char *b)
{
    int n = (int)strlen(a), m = (int)strlen(b);
    g_autofree int *row = g_new(int, m + 1);

    for (int j = 0; j <= m; j++)
        row[j] = j;
    for (int i = 1; i <= n; i++) {
        int diag = row[0];
        row[0] = i;
        for (int j = 1; j <= m; j++) {
            int up = row[j];
            row[j] = MIN(MIN(row[j] + 1, row[j - 1] + 1), diag + (a[i - 1] != b[j - 1]));
            diag = up;
        }
    }
    return row[m];
}

/* "did you mean A or B? " for the shipped names within a few edits of @name, or "". */
static char *
near_names(const char *name)
{
    g_auto(GStrv) names = cs_topo_list_shipped();
    g_autofree char *stem = g_str_has_suffix(name, ".json")
                                ? g_strndup(name, strlen(name) - strlen(".json"))
                                : g_strdup(name);
    const int limit = MAX(2, (int)strlen(stem) / 4);
    int best = G_MAXINT;
    for (char **n = names; *n != NULL; n++)
        best = MIN(best, edit_distance(stem, *n));
    if (best > limit)
        return g_strdup("");
    GString *s = g_string_new("did you mean ");
    int shown = 0;
    for (char **n = names; *n != NULL && shown < 3; n++) {
        if (edit_distance(stem, *n) != best)
            continue;
        g_string_append_printf(s, "%s%s", shown > 0 ? " or " : "", *n);
        shown++;
    }
    g_string_append(s, "? ");
    return g_string_free(s, FALSE);
}

char *
cs_topo_resolve(const char *name_or_path, const char *base_dir, GError **error)
{
    g_return_val_if_fail(name_or_path != NULL, NULL);

    if (looks_like_path(name_or_path)) {
        char *p = (base_dir != NULL && !g_path_is_absolute(name_or_path))
                      ? g_build_filename(base_dir, name_or_path, NULL)
                      : g_strdup(name_or_path);
        if (g_file_test(p, G_FILE_TEST_IS_REGULAR) || strchr(name_or_path, '/') != NULL) {
            if (!g_file_test(p, G_FILE_TEST_IS_REGULAR)) {
                g_set_error(error, CS_TOPO_ERROR, CS_TOPO_ERROR_NOT_FOUND, "%s: %s", p,
                            g_file_test(p, G_FILE_TEST_IS_DIR)
                                ? "is a directory, not a topology file"
                            : g_file_test(p, G_FILE_TEST_EXISTS) ? "not a regular file"
                                                                 : "no such topology file");
                g_free(p);
                return NULL;
            }
            return p;
        }
        g_free(p);
    }

    g_autofree char *file = g_str_has_suffix(name_or_path, ".json")
                                ? g_strdup(name_or_path)
                                : g_strconcat(name_or_path, ".json", NULL);
    if (base_dir != NULL) {
        char *p = g_build_filename(base_dir, file, NULL);
        if (g_file_test(p, G_FILE_TEST_IS_REGULAR))
            return p;
        g_free(p);
    }
    g_auto(GStrv) dirs = cs_topo_search_dirs();
    for (char **d = dirs; *d != NULL; d++) {
        char *p = g_build_filename(*d, file, NULL);
        if (g_file_test(p, G_FILE_TEST_IS_REGULAR))
            return p;
        g_free(p);
    }
    g_autofree char *searched = g_strjoinv(", ", dirs);
    g_autofree char *near = near_names(name_or_path);
    g_set_error(error, CS_TOPO_ERROR, CS_TOPO_ERROR_NOT_FOUND,
                "no topology named \"%s\" (%ssearched %s%s%s; 'collsim topo list' shows them)",
                name_or_path, near, base_dir != NULL ? base_dir : "", base_dir != NULL ? ", " : "",
                searched);
    return NULL;
}

/* ---- Explicit graph ---- */

/* "calibrated_from" and "calibration" are the records collsim calibrate writes beside the
 * fitted values; the loader accepts and ignores them. */
static const char *const top_explicit_keys[] = {
    "name",      "description",     "gpu",         "cpu", "devices", "links", "ranks", "protocols",
    "transport", "calibrated_from", "calibration", NULL,
};
static const char *const spec_keys[] = {
    "model",  "launch", "step_overhead", "reduce_bandwidth", "copy_bandwidth", "default_protocols",
    "source", NULL,
};
static const char *const rank_device_keys[] = {
    "name",
    "kind",
    "node",
    "model",
    "launch",
    "step_overhead",
    "reduce_bandwidth",
    "copy_bandwidth",
    "default_protocols",
    "source",
    NULL,
};
static const char *const nvswitch_keys[] = {
    "name", "kind", "node", "model", "multicast_reduction", "source", NULL,
};
static const char *const switch_keys[] = {
    "name", "kind", "node", "model", "sharp", "source", NULL,
};
static const char *const plain_device_keys[] = {
    "name", "kind", "node", "model", "source", NULL,
};
static const char *const link_keys[] = {
    "endpoints", "kind", "bandwidth", "count", "efficiency", "alpha", "duplex", "source", NULL,
};

/* An optional "default_protocols" array of @obj: a non-empty list of distinct protocol names,
 * as a mask of bits over cs_topo_proto_names (unchanged when absent). */
static gboolean
read_default_protocols(const CsJsonCtx *ctx, const cJSON *obj, const char *path, guint *mask,
                       GError **error)
{
    const cJSON *list = cs_json_member(obj, "default_protocols");
    if (list == NULL)
        return TRUE;
    g_autofree char *p = cs_json_path_member(path, "default_protocols");
    if (!cJSON_IsArray(list) || cJSON_GetArraySize(list) == 0) {
        g_autofree char *got
            = cJSON_IsArray(list) ? g_strdup("an empty list") : cs_json_describe(list);
        cs_json_set_error(ctx, error, p,
                          "expected a non-empty list of protocols (LL, LL128, Simple), got %s",
                          got);
        return FALSE;
    }
    guint bits = 0;
    for (int i = 0; i < cJSON_GetArraySize(list); i++) {
        const cJSON *e = cJSON_GetArrayItem(list, i);
        g_autofree char *pe = cs_json_path_element(p, i);
        int proto = -1;
        if (cJSON_IsString(e))
            lookup_name(cs_topo_proto_names, CS_TOPO_N_PROTOS, e->valuestring, &proto);
        if (proto < 0) {
            g_autofree char *got = cs_json_describe(e);
            cs_json_set_error(ctx, error, pe, "expected a protocol (LL, LL128, Simple), got %s",
                              got);
            return FALSE;
        }
        if (bits & (1u << proto)) {
            cs_json_set_error(ctx, error, pe, "protocol \"%s\" is listed twice", e->valuestring);
            return FALSE;
        }
        bits |= 1u << proto;
    }
    *mask = bits;
    return TRUE;
}

/* A GPU-cost object's keys (a device or a "gpu"/"cpu" defaults object) over @spec. */
static gboolean
read_spec(const CsJsonCtx *ctx, const cJSON *obj, const char *path, CsGpuSpec *spec, guint *mask,
          const char **model, GError **error)
{
    static const struct {
        const char *key;
        gboolean is_time;
        gsize offset;
        guint bit;
    } fields[] = {
        { "launch", TRUE, G_STRUCT_OFFSET(CsGpuSpec, launch_s), SPEC_LAUNCH },
        { "step_overhead", TRUE, G_STRUCT_OFFSET(CsGpuSpec, step_overhead_s), SPEC_STEP },
        { "reduce_bandwidth", FALSE, G_STRUCT_OFFSET(CsGpuSpec, reduce_Bps), SPEC_REDUCE },
        { "copy_bandwidth", FALSE, G_STRUCT_OFFSET(CsGpuSpec, copy_Bps), SPEC_COPY },
    };

    for (gsize i = 0; i < G_N_ELEMENTS(fields); i++) {
        double *v = (double *)((char *)spec + fields[i].offset);
        if (cs_json_member(obj, fields[i].key) == NULL)
            continue;
        gboolean ok = fields[i].is_time
                          ? cs_json_get_time(ctx, obj, path, fields[i].key, TRUE, v, error)
                          : cs_json_get_bandwidth(ctx, obj, path, fields[i].key, TRUE, v, error);
        if (!ok)
            return FALSE;
        *mask |= fields[i].bit;
    }
    if (!read_default_protocols(ctx, obj, path, &spec->default_protos, error))
        return FALSE;
    if (!cs_json_get_string(ctx, obj, path, "model", FALSE, model, error))
        return FALSE;
    const char *source = NULL;
    return cs_json_get_string(ctx, obj, path, "source", FALSE, &source, error);
}

typedef struct {
    CsGpuSpec spec;
    guint mask;
    const char *model;
} SpecDefaults;

static gboolean
read_defaults(const CsJsonCtx *ctx, const cJSON *root, const char *path, const char *key,
              SpecDefaults *d, GError **error)
{
    const cJSON *obj = NULL;

    memset(d, 0, sizeof *d);
    if (!cs_json_get_object(ctx, root, path, key, FALSE, &obj, error))
        return FALSE;
    if (obj == NULL)
        return TRUE;
    g_autofree char *p = cs_json_path_member(path, key);
    if (!cs_json_check_object(ctx, obj, p, spec_keys, error))
        return FALSE;
    return read_spec(ctx, obj, p, &d->spec, &d->mask, &d->model, error);
}

static gboolean
read_device(CsTopo *topo, const CsJsonCtx *ctx, const cJSON *obj, const char *path, int index,
            const SpecDefaults *gpu_defaults, const SpecDefaults *cpu_defaults, GError **error)
{
    if (!cJSON_IsObject(obj)) {
        g_autofree char *got = cs_json_describe(obj);
        cs_json_set_error(ctx, error, path, "expected a device object, got %s", got);
        return FALSE;
    }
    const char *kind_name = NULL;
    if (!cs_json_get_string(ctx, obj, path, "kind", TRUE, &kind_name, error))
        return FALSE;
    int kind;
    if (!lookup_name(device_kind_names, CS_N_DEVICE_KINDS, kind_name, &kind)) {
        g_autofree char *p = cs_json_path_member(path, "kind");
        g_autofree char *all = joined_names(device_kind_names, CS_N_DEVICE_KINDS);
        cs_json_set_error(ctx, error, p, "\"%s\" is not a device kind (kinds: %s)", kind_name, all);
        return FALSE;
    }
    gboolean runs_ranks = kind == CS_DEVICE_GPU || kind == CS_DEVICE_CPU;
    const char *const *allowed = runs_ranks                   ? rank_device_keys
                                 : kind == CS_DEVICE_NVSWITCH ? nvswitch_keys
                                 : kind == CS_DEVICE_SWITCH   ? switch_keys
                                                              : plain_device_keys;
    if (!cs_json_check_object(ctx, obj, path, allowed, error))
        return FALSE;

    CsDevice d = { 0 };
    CsDeviceOrigin origin = { .file_index = index, .spec_mask = 0 };
    const char *name = NULL;
    const char *model = NULL;
    d.kind = kind;
    if (!cs_json_get_string(ctx, obj, path, "name", TRUE, &name, error))
        return FALSE;
    if (name[0] == '\0') {
        g_autofree char *p = cs_json_path_member(path, "name");
        cs_json_set_error(ctx, error, p, "a device name must not be empty");
        return FALSE;
    }
    /* Nodes index arrays: cap them where templates cap their node count. */
    if (!cs_json_get_int(ctx, obj, path, "node", FALSE, -1, CS_TOPO_MAX_NODES - 1, &d.node, error))
        return FALSE;
    if (runs_ranks) {
        const SpecDefaults *def = kind == CS_DEVICE_GPU ? gpu_defaults : cpu_defaults;
        d.gpu = def->spec;
        origin.spec_mask = def->mask;
        model = def->model;
        if (!read_spec(ctx, obj, path, &d.gpu, &origin.spec_mask, &model, error))
            return FALSE;
    }
    else {
        if (!cs_json_get_string(ctx, obj, path, "model", FALSE, &model, error))
            return FALSE;
        const char *source = NULL;
        if (!cs_json_get_string(ctx, obj, path, "source", FALSE, &source, error))
            return FALSE;
    }
    if (!cs_json_get_bool(ctx, obj, path, "multicast_reduction", FALSE, &d.multicast_reduction,
                          error)
        || !cs_json_get_bool(ctx, obj, path, "sharp", FALSE, &d.sharp, error))
        return FALSE;

    d.name = (char *)name;
    d.model = (char *)model;
    if (cs_topo_add_device(topo, &d, &origin) < 0) {
        g_autofree char *p = cs_json_path_member(path, "name");
        int first = GPOINTER_TO_INT(g_hash_table_lookup(topo->by_name, name)) - 1;
        int first_index = g_array_index(topo->origins, CsDeviceOrigin, first).file_index;
        cs_json_set_error(ctx, error, p, "duplicate device name \"%s\" (first used by devices[%d])",
                          name, first_index);
        return FALSE;
    }
    return TRUE;
}

static int
device_index(const CsTopo *topo, const char *name)
{
    return GPOINTER_TO_INT(g_hash_table_lookup(topo->by_name, name)) - 1;
}

static gboolean
read_endpoint(CsTopo *topo, const CsJsonCtx *ctx, const cJSON *ends, const char *path, int i,
              int *device, GError **error)
{
    const cJSON *e = cJSON_GetArrayItem(ends, i);
    g_autofree char *p = cs_json_path_element(path, i);

    if (!cJSON_IsString(e)) {
        g_autofree char *got = cs_json_describe(e);
        cs_json_set_error(ctx, error, p, "expected a device name, got %s", got);
        return FALSE;
    }
    *device = device_index(topo, e->valuestring);
    if (*device < 0) {
        cs_json_set_error(ctx, error, p, "link to undeclared device \"%s\"", e->valuestring);
        return FALSE;
    }
    return TRUE;
}

static gboolean
read_link(CsTopo *topo, const CsJsonCtx *ctx, const cJSON *obj, const char *path, int index,
          GError **error)
{
    if (!cs_json_check_object(ctx, obj, path, link_keys, error))
        return FALSE;

    const cJSON *ends = NULL;
    if (!cs_json_get_array(ctx, obj, path, "endpoints", TRUE, &ends, error))
        return FALSE;
    g_autofree char *ends_path = cs_json_path_member(path, "endpoints");
    if (cJSON_GetArraySize(ends) != 2) {
        cs_json_set_error(ctx, error, ends_path, "expected 2 device names, got %d",
                          cJSON_GetArraySize(ends));
        return FALSE;
    }
    int a, b;
    if (!read_endpoint(topo, ctx, ends, ends_path, 0, &a, error)
        || !read_endpoint(topo, ctx, ends, ends_path, 1, &b, error))
        return FALSE;
    if (a == b) {
        cs_json_set_error(ctx, error, ends_path, "a link from \"%s\" to itself",
                          g_array_index(topo->devices, CsDevice, a).name);
        return FALSE;
    }

    const char *kind_name = NULL;
    int kind;
    if (!cs_json_get_string(ctx, obj, path, "kind", TRUE, &kind_name, error))
        return FALSE;
    if (!lookup_name(link_kind_names, CS_N_LINK_KINDS, kind_name, &kind)) {
        g_autofree char *p = cs_json_path_member(path, "kind");
        g_autofree char *all = joined_names(link_kind_names, CS_N_LINK_KINDS);
        cs_json_set_error(ctx, error, p, "\"%s\" is not a link kind (kinds: %s)", kind_name, all);
        return FALSE;
    }

    double lane_Bps = 0.0, efficiency = 1.0, alpha_s = 0.0;
    int count = 1;
    gboolean duplex = TRUE;
    const char *source = NULL;
    if (!cs_json_get_bandwidth(ctx, obj, path, "bandwidth", TRUE, &lane_Bps, error)
        || !cs_json_get_int(ctx, obj, path, "count", FALSE, 1, 1 << 20, &count, error)
        || !cs_json_get_number(ctx, obj, path, "efficiency", FALSE, 0.0, TRUE, 1.0, &efficiency,
                               error)
        || !cs_json_get_time(ctx, obj, path, "alpha", TRUE, &alpha_s, error)
        || !cs_json_get_bool(ctx, obj, path, "duplex", FALSE, &duplex, error)
        || !cs_json_get_string(ctx, obj, path, "source", FALSE, &source, error))
        return FALSE;

    /* The floor cs_json_get_bandwidth() holds a datasheet rate to holds the usable one too,
     * and count x bandwidth must stay a number. */
    if (!isfinite(count * lane_Bps)) {
        g_autofree char *p = cs_json_path_member(path, "count");
        cs_json_set_error(ctx, error, p, "count x bandwidth is beyond any number");
        return FALSE;
    }
    if (count * lane_Bps * efficiency < CS_TOPO_MIN_USABLE_BPS) {
        g_autofree char *p = cs_json_path_member(path, "efficiency");
        cs_json_set_error(ctx, error, p,
                          "bandwidth x efficiency is below 1 MB/s, too slow for a link (a slip?)");
        return FALSE;
    }

    CsLink l = {
        .src = a,
        .dst = b,
        .kind = kind,
        .alpha_s = alpha_s,
        .bw_Bps = count * lane_Bps * efficiency,
        .raw_bw_Bps = count * lane_Bps,
        .count = count,
        .file_index = index,
    };
    cs_topo_add_link(topo, &l);
    if (duplex) {
        l.src = b;
        l.dst = a;
        cs_topo_add_link(topo, &l);
    }
    return TRUE;
}

static gboolean
read_ranks(CsTopo *topo, const CsJsonCtx *ctx, const cJSON *ranks, const char *path, GError **error)
{
    g_autofree gboolean *used = g_new0(gboolean, topo->devices->len);
    int i = 0;

    topo->rank_order = g_array_new(FALSE, FALSE, sizeof(int));
    for (const cJSON *r = ranks->child; r != NULL; r = r->next, i++) {
        g_autofree char *p = cs_json_path_element(path, i);
        if (!cJSON_IsString(r)) {
            g_autofree char *got = cs_json_describe(r);
            cs_json_set_error(ctx, error, p, "expected a device name, got %s", got);
            return FALSE;
        }
        int d = device_index(topo, r->valuestring);
        if (d < 0) {
            cs_json_set_error(ctx, error, p, "no device named \"%s\"", r->valuestring);
            return FALSE;
        }
        CsDeviceKind kind = g_array_index(topo->devices, CsDevice, d).kind;
        if (kind != CS_DEVICE_GPU && kind != CS_DEVICE_CPU) {
            cs_json_set_error(ctx, error, p, "\"%s\" is a %s: only gpu and cpu devices run ranks",
                              r->valuestring, cs_device_kind_name(kind));
            return FALSE;
        }
        if (used[d]) {
            cs_json_set_error(ctx, error, p, "\"%s\" is listed twice", r->valuestring);
            return FALSE;
        }
        used[d] = TRUE;
        g_array_append_val(topo->rank_order, d);
    }
    if (i == 0) {
        cs_json_set_error(ctx, error, path, "an empty rank list");
        return FALSE;
    }
    return TRUE;
}

const char *const cs_topo_proto_names[CS_TOPO_N_PROTOS + 1] = { "LL", "LL128", "Simple", NULL };

/**
 * cs_topo_parse_protocols:
 * The optional "protocols" object: {"Simple": {"nvlink": "3.4 us", "net": "14 us"}, ...},
 * per-hop latencies that replace the protocol model's own for this topology (what
 * collsim calibrate fits).
 */
gboolean
cs_topo_parse_protocols(CsTopo *topo, const CsJsonCtx *ctx, const cJSON *root, const char *path,
                        GError **error)
{
    static const char *const class_keys[] = { "nvlink", "pci", "net", NULL };
    const cJSON *protocols = NULL;

    G_STATIC_ASSERT(CS_N_LINK_CLASSES == 3);
    if (!cs_json_get_object(ctx, root, path, "protocols", FALSE, &protocols, error))
        return FALSE;
    if (protocols == NULL)
        return TRUE;
    g_autofree char *ppath = cs_json_path_member(path, "protocols");
    if (!cs_json_check_object(ctx, protocols, ppath, cs_topo_proto_names, error))
        return FALSE;
    for (int p = 0; p < CS_TOPO_N_PROTOS; p++) {
        const cJSON *per_class = cs_json_member(protocols, cs_topo_proto_names[p]);
        if (per_class == NULL)
            continue;
        g_autofree char *cpath = cs_json_path_member(ppath, cs_topo_proto_names[p]);
        if (!cs_json_check_object(ctx, per_class, cpath, class_keys, error))
            return FALSE;
        for (int c = 0; c < CS_N_LINK_CLASSES; c++) {
            if (!cs_json_get_time(ctx, per_class, cpath, cs_link_class_name(c), FALSE,
                                  &topo->hop_latency_s[p][c], error))
                return FALSE;
        }
    }
    return TRUE;
}

/**
 * cs_topo_parse_graph:
 * Reads the explicit graph @root (at JSON @path, "" for a whole file) into @topo: defaults,
 * devices, links and the optional rank order. Does not compute routes.
 */
gboolean
cs_topo_parse_graph(CsTopo *topo, const CsJsonCtx *ctx, const cJSON *root, const char *path,
                    GError **error)
{
    if (!cs_json_check_object(ctx, root, path, top_explicit_keys, error))
        return FALSE;

    const char *description = NULL;
    if (!cs_json_get_string(ctx, root, path, "description", FALSE, &description, error))
        return FALSE;
    if (description != NULL && topo->description == NULL)
        topo->description = g_strdup(description);

    SpecDefaults gpu_defaults, cpu_defaults;
    if (!cs_topo_parse_protocols(topo, ctx, root, path, error)
        || !cs_topo_parse_transport(topo, ctx, root, path, error)
        || !read_defaults(ctx, root, path, "gpu", &gpu_defaults, error)
        || !read_defaults(ctx, root, path, "cpu", &cpu_defaults, error))
        return FALSE;

    const cJSON *devices = NULL, *links = NULL, *ranks = NULL;
    if (!cs_json_get_array(ctx, root, path, "devices", TRUE, &devices, error)
        || !cs_json_get_array(ctx, root, path, "links", TRUE, &links, error)
        || !cs_json_get_array(ctx, root, path, "ranks", FALSE, &ranks, error))
        return FALSE;

    g_autofree char *devices_path = cs_json_path_member(path, "devices");
    int i = 0;
    for (const cJSON *d = devices->child; d != NULL; d = d->next, i++) {
        g_autofree char *p = cs_json_path_element(devices_path, i);
        if (!read_device(topo, ctx, d, p, i, &gpu_defaults, &cpu_defaults, error))
            return FALSE;
    }
    if (i == 0) {
        cs_json_set_error(ctx, error, devices_path, "no devices");
        return FALSE;
    }

    g_autofree char *links_path = cs_json_path_member(path, "links");
    i = 0;
    for (const cJSON *l = links->child; l != NULL; l = l->next, i++) {
        g_autofree char *p = cs_json_path_element(links_path, i);
        if (!read_link(topo, ctx, l, p, i, error))
            return FALSE;
    }

    if (ranks != NULL) {
        g_autofree char *p = cs_json_path_member(path, "ranks");
        if (!read_ranks(topo, ctx, ranks, p, error))
            return FALSE;
    }
    return TRUE;
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
    compute_flags(topo);
    return TRUE;
}

/* ---- Loading ---- */

static char *
stem_of(const char *origin)
{
    g_autofree char *base = g_path_get_basename(origin);
    if (g_str_has_suffix(base, ".json"))
        return g_strndup(base, strlen(base) - strlen(".json"));
    return g_strdup(base);
}

/**
 * cs_topo_load_json:
 * Loads the parsed topology document @root (not modified); @origin names it in messages, @path
 * (nullable) is the file it came from and @base_dir (nullable) where a template's named node
 * is looked up first. Returns: (transfer full) (nullable).
 */
CsTopo *
cs_topo_load_json(const cJSON *root, const char *origin, const char *path, const char *base_dir,
                  GError **error)
{
    CsJsonCtx ctx = { .origin = origin, .domain = CS_TOPO_ERROR, .code = CS_TOPO_ERROR_INVALID };
    if (!cJSON_IsObject(root)) {
        g_autofree char *got = cs_json_describe(root);
        cs_json_set_error(&ctx, error, "", "expected a topology object, got %s", got);
        return NULL;
    }

    const char *name = NULL;
    const char *description = NULL;
    if (!cs_json_get_string(&ctx, root, "", "name", FALSE, &name, error)
        || !cs_json_get_string(&ctx, root, "", "description", FALSE, &description, error))
        return NULL;
    g_autofree char *stem = stem_of(origin);
    g_autoptr(CsTopo) topo = cs_topo_new_empty(name != NULL ? name : stem, path);
    topo->description = g_strdup(description);

    gboolean ok = cs_json_member(root, "nodes") != NULL || cs_json_member(root, "domains") != NULL
                      ? cs_topo_template_expand(topo, &ctx, root, base_dir, error)
                      : cs_topo_parse_graph(topo, &ctx, root, "", error);
    if (!ok || !cs_topo_finish(topo, &ctx, error))
        return NULL;
    if (topo->description == NULL)
        topo->description = g_strdup("");
    return g_steal_pointer(&topo);
}

static CsTopo *
load_internal(const char *json, const char *origin, const char *path, const char *base_dir,
              GError **error)
{
    g_autoptr(cJSON) root = cs_json_parse(json, origin, CS_TOPO_ERROR, CS_TOPO_ERROR_PARSE, error);
    if (root == NULL)
        return NULL;
    return cs_topo_load_json(root, origin, path, base_dir, error);
}

/**
 * cs_topo_read_file:
 * The text of the topology file @path (transfer full): a regular file of at most
 * CS_TOPO_MAX_FILE_BYTES holding no NUL byte. NULL with CS_TOPO_ERROR naming @path otherwise.
 */
char *
cs_topo_read_file(const char *path, GError **error)
{
    g_autofree char *text = NULL;
    g_autoptr(GError) local = NULL;

    gsize len = 0;
    g_return_val_if_fail(path != NULL, NULL);
    /* A regular file of bounded size: a FIFO or /dev/zero is refused before it is read. */
    if (!cs_file_read_bounded(path, CS_TOPO_MAX_FILE_BYTES, &text, &len, &local)) {
        g_set_error(error, CS_TOPO_ERROR, CS_TOPO_ERROR_NOT_FOUND, "%s: cannot read: %s", path,
                    local->message);
        return NULL;
    }
    /* cJSON would stop at a NUL and complain about whatever came before it. */
    if (memchr(text, '\0', len) != NULL) {
        g_set_error(error, CS_TOPO_ERROR, CS_TOPO_ERROR_PARSE,
                    "%s: binary data, not a topology (JSON) file", path);
        return NULL;
    }
    return g_steal_pointer(&text);
}

/**
 * cs_topo_load_file:
 * Loads the topology in @path. Returns: (transfer full) (nullable): the topology, or NULL
 * with @error (CS_TOPO_ERROR) set to one line naming the file, the JSON path and the problem.
 */
CsTopo *
cs_topo_load_file(const char *path, GError **error)
{
    g_return_val_if_fail(path != NULL, NULL);
    g_autofree char *text = cs_topo_read_file(path, error);
    if (text == NULL)
        return NULL;
    g_autofree char *dir = g_path_get_dirname(path);
    return load_internal(text, path, path, dir, error);
}

/**
 * cs_topo_load_data:
 * Loads a topology from the JSON text @json; @origin names it in messages and gives its
 * default name. A template's node is looked up by name in the search directories only.
 * Returns: (transfer full) (nullable).
 */
CsTopo *
cs_topo_load_data(const char *json, const char *origin, GError **error)
{
    g_return_val_if_fail(json != NULL, NULL);
    return load_internal(json, origin != NULL ? origin : "<data>", NULL, NULL, error);
}

/**
 * cs_topo_load:
 * Loads @name_or_path: a file path, or the name of a shipped topology (see
 * cs_topo_resolve()). Returns: (transfer full) (nullable).
 */
CsTopo *
cs_topo_load(const char *name_or_path, GError **error)
{
    g_autofree char *path = cs_topo_resolve(name_or_path, NULL, error);
    if (path == NULL)
        return NULL;
    return cs_topo_load_file(path, error);
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
    return device_index(topo, name);
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
