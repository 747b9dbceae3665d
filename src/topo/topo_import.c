// SPDX-License-Identifier: MIT
/* `collsim topo import`: a machine's topology, as NCCL or nvidia-smi reported it, written as an
 * explicit-graph node file (DESIGN §3) for the loader and for a cluster template's "node".
 * This file holds the graph the readers build (topo_import-private.h), its JSON output and the
 * entry points; topo_import_xml.c reads NCCL's topology XML, topo_import_smi.c
 * `nvidia-smi topo -m`. */
#include "config.h"

#include <string.h>

#include "base/fileio.h"
#include "base/json_util.h"
#include "topo/topo_import-private.h"

/* ---- The graph being built ---- */

static void
graph_init(Graph *g, const char *origin, GPtrArray *notes)
{
    g->origin = origin;
    g->devs = g_array_new(FALSE, TRUE, sizeof(Dev));
    g->links = g_array_new(FALSE, TRUE, sizeof(Link));
    g->notes = notes;
    g->nvswitch = -1;
    g->about = g_string_new(NULL);
    g->link_index = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
}

static void
graph_clear(Graph *g)
{
    for (guint i = 0; i < g->devs->len; i++) {
        Dev *d = &g_array_index(g->devs, Dev, i);
        g_free(d->busid);
        g_free(d->model);
        g_free(d->source);
        g_free(d->name);
    }
    for (guint i = 0; i < g->links->len; i++)
        g_free(g_array_index(g->links, Link, i).source);
    g_array_free(g->devs, TRUE);
    g_array_free(g->links, TRUE);
    g_string_free(g->about, TRUE);
    g_hash_table_destroy(g->link_index);
}

/* Adds a device (@model and @source transfer full); returns its index. */
int
cs_topo_import_add_dev(Graph *g, CsDeviceKind kind, const char *busid, char *model, char *source)
{
    Dev d = { 0 };
    d.kind = kind;
    d.busid = busid != NULL ? g_ascii_strdown(busid, -1) : NULL;
    d.model = model;
    d.source = source;
    d.order = G_MAXINT;
    d.seq = (int)g->devs->len;
    d.cpu = -1;
    g_array_append_val(g->devs, d);
    return (int)g->devs->len - 1;
}

/* Adds @count lanes of @lane_Bps from @src to @dst (@source transfer full). Lanes to the same
 * place with the same kind and rate add up, as NCCL's ncclTopoConnectNodes adds bandwidth. */
void
cs_topo_import_add_link(Graph *g, int src, int dst, CsLinkKind kind, int count, double lane_Bps,
                        char *source)
{
    char *key = g_strdup_printf("%d %d %d %a", src, dst, (int)kind, lane_Bps);
    gpointer at = g_hash_table_lookup(g->link_index, key);
    if (at != NULL) {
        g_array_index(g->links, Link, GPOINTER_TO_UINT(at) - 1).count += count;
        g_free(source);
        g_free(key);
        return;
    }
    Link l = { src, dst, kind, count, lane_Bps, source };
    g_array_append_val(g->links, l);
    g_hash_table_insert(g->link_index, key, GUINT_TO_POINTER(g->links->len));
}

void
cs_topo_import_add_duplex(Graph *g, int a, int b, CsLinkKind kind, int count, double lane_Bps,
                          const char *source)
{
    cs_topo_import_add_link(g, a, b, kind, count, lane_Bps, g_strdup(source));
    cs_topo_import_add_link(g, b, a, kind, count, lane_Bps, g_strdup(source));
}

/* @text as one line of valid UTF-8: invalid bytes become U+FFFD, control characters (a
 * newline in an attribute, in GMarkup's quote of the input) spaces. (transfer full) */
static char *
one_line(const char *text)
{
    char *valid = g_utf8_make_valid(text, -1);
    for (char *p = valid; *p != '\0'; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = ' ';
    return valid;
}

/* One line for @notes: "ORIGIN:LINE: what" (no line when @line <= 0). */
void
cs_topo_import_note(Graph *g, int line, const char *format, ...)
{
    if (g->notes == NULL)
        return;
    va_list ap;
    va_start(ap, format);
    g_autofree char *raw = g_strdup_vprintf(format, ap);
    va_end(ap);
    g_autofree char *text = one_line(raw);
    if (line > 0)
        g_ptr_array_add(g->notes, g_strdup_printf("%s:%d: %s", g->origin, line, text));
    else
        g_ptr_array_add(g->notes, g_strdup_printf("%s: %s", g->origin, text));
}

/* ---- Output ---- */

/* PCI switches with no GPU or NIC below them (a bridge to a disk, an empty slot) carry no
 * route between ranks: they are left out, and so are their links. */
static void
prune_switches(Graph *g)
{
    int n = (int)g->devs->len;
    g_autoptr(GPtrArray) adj = g_ptr_array_new_with_free_func((GDestroyNotify)g_hash_table_unref);
    for (int i = 0; i < n; i++)
        g_ptr_array_add(adj, g_hash_table_new(g_direct_hash, g_direct_equal));
    for (guint k = 0; k < g->links->len; k++) {
        const Link *l = &g_array_index(g->links, Link, k);
        if (l->src == l->dst)
            continue;
        g_hash_table_add(adj->pdata[l->src], GINT_TO_POINTER(l->dst + 1));
        g_hash_table_add(adj->pdata[l->dst], GINT_TO_POINTER(l->src + 1));
    }
    g_autofree int *degree = g_new(int, MAX(n, 1));
    g_autoptr(GQueue) leaves = g_queue_new();
    for (int i = 0; i < n; i++) {
        degree[i] = (int)g_hash_table_size(adj->pdata[i]);
        if (cs_topo_import_dev(g, i)->kind == CS_DEVICE_PCIE_SWITCH && degree[i] <= 1) {
            cs_topo_import_dev(g, i)->removed = TRUE;
            g_queue_push_tail(leaves, GINT_TO_POINTER(i));
        }
    }
    while (!g_queue_is_empty(leaves)) {
        int i = GPOINTER_TO_INT(g_queue_pop_head(leaves));
        GHashTableIter it;
        gpointer key;
        g_hash_table_iter_init(&it, adj->pdata[i]);
        while (g_hash_table_iter_next(&it, &key, NULL)) {
            int other = GPOINTER_TO_INT(key) - 1;
            Dev *o = cs_topo_import_dev(g, other);
            if (o->removed)
                continue;
            degree[other]--;
            if (o->kind == CS_DEVICE_PCIE_SWITCH && degree[other] <= 1) {
                o->removed = TRUE;
                g_queue_push_tail(leaves, GINT_TO_POINTER(other));
            }
        }
    }
}

static int
kind_rank(CsDeviceKind kind)
{
    switch (kind) {
    case CS_DEVICE_GPU:
        return 0;
    case CS_DEVICE_NIC:
        return 1;
    case CS_DEVICE_NVSWITCH:
        return 2;
    case CS_DEVICE_CPU:
        return 3;
    default:
        return 4;
    }
}

static int
compare_devs(gconstpointer a, gconstpointer b, gpointer data)
{
    Graph *g = data;
    const Dev *x = cs_topo_import_dev(g, *(const int *)a);
    const Dev *y = cs_topo_import_dev(g, *(const int *)b);
    if (kind_rank(x->kind) != kind_rank(y->kind))
        return kind_rank(x->kind) - kind_rank(y->kind);
    if (x->order != y->order)
        return x->order < y->order ? -1 : 1;
    return x->seq - y->seq;
}

static const char *
name_stem(CsDeviceKind kind)
{
    switch (kind) {
    case CS_DEVICE_GPU:
        return "gpu";
    case CS_DEVICE_NIC:
        return "nic";
    case CS_DEVICE_NVSWITCH:
        return "nvswitch";
    case CS_DEVICE_CPU:
        return "cpu";
    default:
        return "pcisw";
    }
}

/* "%.15g GB/s" or "%.15g us": exact enough to read back to the same double. */
static char *
format_GBps(double Bps)
{
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    g_ascii_formatd(buf, sizeof buf, "%.15g", Bps / 1e9);
    return g_strdup_printf("%s GB/s", buf);
}

static char *
format_us(double s)
{
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    g_ascii_formatd(buf, sizeof buf, "%.15g", s * 1e6);
    return g_strdup_printf("%s us", buf);
}

static void
add_string(cJSON *obj, const char *key, char *value)
{
    cJSON_AddStringToObject(obj, key, value);
    g_free(value);
}

static const char *const format_names[] = {
    [CS_TOPO_IMPORT_AUTO] = "auto",
    [CS_TOPO_IMPORT_NCCL_XML] = "NCCL topology XML",
    [CS_TOPO_IMPORT_NVIDIA_SMI] = "nvidia-smi topo -m",
};

/* The document: names given (GPUs by CUDA device, NICs by NCCL's NET device, then order of
 * appearance), switches without ranks below left out, each pair of opposite links with equal
 * numbers written once as a duplex link. Fills @summary. Returns: (transfer full) (nullable). */
static char *
graph_to_json(Graph *g, const CsTopoImportOptions *options, const char *name,
              CsTopoImportFormat format, CsTopoImportSummary *summary, GError **error)
{
    prune_switches(g);
    g_autoptr(GArray) order = g_array_new(FALSE, FALSE, sizeof(int));
    for (guint i = 0; i < g->devs->len; i++)
        if (!cs_topo_import_dev(g, (int)i)->removed)
            g_array_append_val(order, i);
    g_array_sort_with_data(order, compare_devs, g);

    CsTopoImportSummary sum = { 0 };
    sum.format = format;
    int per_kind[CS_N_DEVICE_KINDS] = { 0 };
    int n_kind[CS_N_DEVICE_KINDS] = { 0 };
    for (guint i = 0; i < order->len; i++)
        n_kind[cs_topo_import_dev(g, g_array_index(order, int, i))->kind]++;
    if (n_kind[CS_DEVICE_GPU] == 0) {
        g_set_error(error, CS_TOPO_ERROR, CS_TOPO_ERROR_INVALID,
                    "%s: no GPU in it (no <pci> of class 0x03..., no GPU row), nothing to "
                    "simulate",
                    g->origin);
        return NULL;
    }
    for (guint i = 0; i < order->len; i++) {
        Dev *d = cs_topo_import_dev(g, g_array_index(order, int, i));
        int k = per_kind[d->kind]++;
        if (d->kind == CS_DEVICE_NVSWITCH && n_kind[d->kind] == 1)
            d->name = g_strdup("nvswitch");
        else
            d->name = g_strdup_printf("%s%d", name_stem(d->kind), k);
    }

    g_autoptr(cJSON) root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "name", name);
    cJSON *gpu = cJSON_CreateObject();
    if (options->gpu_model != NULL)
        cJSON_AddStringToObject(gpu, "model", options->gpu_model);
    add_string(gpu, "launch", format_us(options->gpu.launch_s));
    add_string(gpu, "step_overhead", format_us(options->gpu.step_overhead_s));
    add_string(gpu, "reduce_bandwidth", format_GBps(options->gpu.reduce_Bps));
    add_string(gpu, "copy_bandwidth", format_GBps(options->gpu.copy_Bps));
    if (options->gpu.default_protos != 0) {
        static const char *const protos[] = { "LL", "LL128", "Simple" };
        cJSON *list = cJSON_AddArrayToObject(gpu, "default_protocols");
        for (int p = 0; p < 3; p++)
            if (options->gpu.default_protos & (1u << p))
                cJSON_AddItemToArray(list, cJSON_CreateString(protos[p]));
    }
    if (options->gpu_source != NULL)
        cJSON_AddStringToObject(gpu, "source", options->gpu_source);

    cJSON *devices = cJSON_CreateArray();
    for (guint i = 0; i < order->len; i++) {
        const Dev *d = cs_topo_import_dev(g, g_array_index(order, int, i));
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", d->name);
        cJSON_AddStringToObject(o, "kind", cs_device_kind_name(d->kind));
        if (d->model != NULL)
            cJSON_AddStringToObject(o, "model", d->model);
        if (d->source != NULL)
            cJSON_AddStringToObject(o, "source", d->source);
        cJSON_AddItemToArray(devices, o);
        if (d->kind == CS_DEVICE_NIC && d->port_Bps > 0) {
            sum.nic_Bps_min
                = sum.nic_Bps_min == 0 ? d->port_Bps : MIN(sum.nic_Bps_min, d->port_Bps);
            sum.nic_Bps_max = MAX(sum.nic_Bps_max, d->port_Bps);
        }
    }

    cJSON *links = cJSON_CreateArray();
    g_autofree gboolean *done = g_new0(gboolean, g->links->len + 1);
    for (guint i = 0; i < g->links->len; i++) {
        const Link *l = &g_array_index(g->links, Link, i);
        if (done[i] || cs_topo_import_dev(g, l->src)->removed
            || cs_topo_import_dev(g, l->dst)->removed)
            continue;
        done[i] = TRUE;
        gboolean duplex = FALSE;
        for (guint k = i + 1; k < g->links->len && !duplex; k++) {
            const Link *r = &g_array_index(g->links, Link, k);
            if (!done[k] && r->src == l->dst && r->dst == l->src && r->kind == l->kind
                && r->count == l->count && r->lane_Bps == l->lane_Bps
                && g_strcmp0(r->source, l->source) == 0) {
                done[k] = TRUE;
                duplex = TRUE;
            }
        }
        int n_dir = duplex ? 2 : 1;
        if (l->kind == CS_LINK_PCIE)
            sum.n_pcie_links += n_dir;
        else if (l->kind == CS_LINK_NVLINK || l->kind == CS_LINK_NVSWITCH)
            sum.n_nvlink_links += n_dir;
        cJSON *o = cJSON_CreateObject();
        const char *ends[2]
            = { cs_topo_import_dev(g, l->src)->name, cs_topo_import_dev(g, l->dst)->name };
        cJSON_AddItemToObject(o, "endpoints", cJSON_CreateStringArray(ends, 2));
        cJSON_AddStringToObject(o, "kind", cs_link_kind_name(l->kind));
        if (l->count != 1)
            cJSON_AddNumberToObject(o, "count", l->count);
        add_string(o, "bandwidth", format_GBps(l->lane_Bps));
        cJSON_AddStringToObject(o, "alpha", "0 us");
        if (!duplex)
            cJSON_AddBoolToObject(o, "duplex", FALSE);
        if (l->source != NULL)
            cJSON_AddStringToObject(o, "source", l->source);
        cJSON_AddItemToArray(links, o);
    }

    sum.n_gpus = n_kind[CS_DEVICE_GPU];
    sum.n_nics = n_kind[CS_DEVICE_NIC];
    g_autofree char *base = g_path_get_basename(g->origin);
    GString *desc = g_string_new(NULL);
    g_string_append_printf(desc,
                           "Imported by 'collsim topo import' from %s (%s): %d GPU%s, %d NIC%s",
                           base, format_names[format], sum.n_gpus, sum.n_gpus == 1 ? "" : "s",
                           sum.n_nics, sum.n_nics == 1 ? "" : "s");
    if (sum.nic_Bps_max > 0) {
        g_autofree char *lo = g_strdup_printf("%.15g", sum.nic_Bps_min * 8 / 1e9);
        g_autofree char *hi = g_strdup_printf("%.15g", sum.nic_Bps_max * 8 / 1e9);
        if (sum.nic_Bps_min == sum.nic_Bps_max)
            g_string_append_printf(desc, " (ports of %s Gb/s)", hi);
        else
            g_string_append_printf(desc, " (ports of %s to %s Gb/s)", lo, hi);
    }
    g_string_append_printf(desc, ". %s", g->about->str);
    cJSON_AddStringToObject(root, "description", desc->str);
    g_string_free(desc, TRUE);
    cJSON_AddItemToObject(root, "gpu", gpu);
    cJSON_AddItemToObject(root, "devices", devices);
    cJSON_AddItemToObject(root, "links", links);
    if (summary != NULL)
        *summary = sum;
    char *printed = cs_json_print(root, TRUE);
    char *text = g_strdup_printf("%s\n", printed);
    cJSON_free(printed);
    return text;
}

/* ---- Entry points ---- */

/* The input's file name without its extension: "ndv5-topo.xml" -> "ndv5-topo". */
static char *
default_name(const char *origin)
{
    g_autofree char *base = g_path_get_basename(origin);
    char *dot = strrchr(base, '.');
    if (dot != NULL && dot != base)
        *dot = '\0';
    return g_strdup(base);
}

/**
 * cs_topo_import_data:
 * Reads @text as NCCL XML or nvidia-smi text (@options->format, or by its first character),
 * builds the graph and writes it as a document (transfer full), or fails with one line
 * (CS_TOPO_ERROR) that quotes the input only as valid UTF-8. Notes go to @notes.
 */
char *
cs_topo_import_data(const char *text, gsize len, const char *origin,
                    const CsTopoImportOptions *options, GPtrArray *notes,
                    CsTopoImportSummary *summary, GError **error)
{
    g_return_val_if_fail(text != NULL && origin != NULL && options != NULL, NULL);
    if (memchr(text, '\0', len) != NULL) {
        g_set_error(error, CS_TOPO_ERROR, CS_TOPO_ERROR_PARSE,
                    "%s: binary data, not a topology dump", origin);
        return NULL;
    }
    CsTopoImportFormat format = options->format;
    if (format == CS_TOPO_IMPORT_AUTO) {
        gsize i = 0;
        while (i < len && g_ascii_isspace(text[i]))
            i++;
        format = i < len && text[i] == '<' ? CS_TOPO_IMPORT_NCCL_XML : CS_TOPO_IMPORT_NVIDIA_SMI;
    }
    Graph g;
    graph_init(&g, origin, notes);
    gboolean ok = format == CS_TOPO_IMPORT_NCCL_XML
                      ? cs_topo_import_xml_read(&g, text, len, error)
                      : cs_topo_import_smi_read(&g, text, len, options, error);
    char *out = NULL;
    if (!ok && error != NULL && *error != NULL) {
        /* Messages quote the input (GMarkup's own, attribute values): keep them one line. */
        char *clean = one_line((*error)->message);
        g_free((*error)->message);
        (*error)->message = clean;
    }
    if (ok) {
        g_autofree char *name
            = options->name != NULL ? g_strdup(options->name) : default_name(origin);
        out = graph_to_json(&g, options, name, format, summary, error);
    }
    graph_clear(&g);
    return out;
}

/**
 * cs_topo_import_file:
 * cs_topo_import_data() on the file @path, read whole if it is a regular file of at most
 * CS_TOPO_IMPORT_MAX_BYTES (or stdin for "-"); CS_TOPO_ERROR_NOT_FOUND when it cannot be read.
 */
char *
cs_topo_import_file(const char *path, const CsTopoImportOptions *options, GPtrArray *notes,
                    CsTopoImportSummary *summary, GError **error)
{
    g_autofree char *text = NULL;
    gsize len = 0;
    g_autoptr(GError) local = NULL;

    if (!cs_file_read_bounded(path, CS_TOPO_IMPORT_MAX_BYTES, &text, &len, &local)) {
        g_set_error(error, CS_TOPO_ERROR, CS_TOPO_ERROR_NOT_FOUND, "%s: cannot read: %s", path,
                    local->message);
        return NULL;
    }
    return cs_topo_import_data(text, len, path, options, notes, summary, error);
}
