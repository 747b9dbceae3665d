// SPDX-License-Identifier: MIT
/* Topology loader: reads the JSON files of topologies/ (explicit graph or cluster
 * template, DESIGN §3) into devices and directed links (topo.c answers the questions asked of
 * them).
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
 *   price           optional {node, nic, switch_port, gpu_hour, node_hour, amortize, currency,
 *                   source}: the user's quote, which collsim plan turns into cost (topo_price.c)
 * A link becomes one CsLink per direction with bw_Bps = count * bandwidth * efficiency and
 * raw_bw_Bps = count * bandwidth. Every device that runs a rank needs all four GPU costs.
 *
 * Cluster template (topo_template.c): name, description, nodes (>= 1), node (the name of a
 * single-node topology, or an inline explicit-graph object), network {kind, nics_per_node,
 * nic_bandwidth, nic_efficiency, nic_alpha, switch_alpha, rail_optimized, nodes_per_leaf,
 * oversubscription, sharp, nic_link, transport, source}, protocols, price.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "base/fileio.h"
#include "base/json_util.h"
#include "topo/topo-private.h"

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
    "name",        "description", "gpu",       "cpu",       "devices",
    "links",       "ranks",       "protocols", "transport", "calibrated_from",
    "calibration", "price",       NULL,
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
            cs_topo_lookup_name(cs_topo_proto_names, CS_TOPO_N_PROTOS, e->valuestring, &proto);
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
    if (!cs_topo_lookup_name(cs_topo_device_kind_names, CS_N_DEVICE_KINDS, kind_name, &kind)) {
        g_autofree char *p = cs_json_path_member(path, "kind");
        g_autofree char *all = cs_topo_joined_names(cs_topo_device_kind_names, CS_N_DEVICE_KINDS);
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

int
cs_topo_device_index(const CsTopo *topo, const char *name)
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
    *device = cs_topo_device_index(topo, e->valuestring);
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
    if (!cs_topo_lookup_name(cs_topo_link_kind_names, CS_N_LINK_KINDS, kind_name, &kind)) {
        g_autofree char *p = cs_json_path_member(path, "kind");
        g_autofree char *all = cs_topo_joined_names(cs_topo_link_kind_names, CS_N_LINK_KINDS);
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
        int d = cs_topo_device_index(topo, r->valuestring);
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
        || !cs_topo_parse_price(topo, ctx, root, path, error)
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
