// SPDX-License-Identifier: MIT
/* `collsim topo import`: a machine's topology, as NCCL or nvidia-smi reported it, written as an
 * explicit-graph node file (DESIGN §3) for the loader and for a cluster template's "node".
 *
 * NCCL's topology XML (NCCL_TOPO_DUMP_FILE writes it, NCCL_TOPO_FILE reads it) is read with
 * GLib's GMarkup and every bandwidth is NCCL's own reading of the file's attributes, from
 * NCCL 2.30.7 (github.com/NVIDIA/nccl, src/graph/topo.cc and topo.h):
 *   <cpu numaid arch vendor familyid modelid>   a CPU socket (NUMA node); sockets of one host
 *       are joined at ncclTopoGetInterCpuBw()'s rate: Intel family 6 model >= 0xCF 40 GB/s
 *       (ERP_QPI_BW), >= 0x8F 22 (SRP_QPI_BW), >= 0x55 10 (SKL_QPI_BW), else 6 (BDW_QPI_BW);
 *       AMD 16 (AMD_BW); Zhaoxin 9 (Yongfeng) or 6; arm64 6 (ARM_BW); ppc64 32 (P9_BW); any
 *       other CPU 5000 (LOC_BW, no limit).
 *   <pci busid class link_speed link_width>     a PCI device and its link to its parent:
 *       link_width x kvDictPciGen[link_speed] / 80 GB/s per direction (2.5/5/8/16/32/64 GT/s
 *       -> 15/30/60/120/240/480 x 100 Mb/s per lane; an unknown speed reads as 60; width 0
 *       reads as 16). kvDictPciClass by prefix: 0x060400 and 0x080100 a switch, 0x068000 an
 *       NVSwitch function (no node), 0x03 a GPU, 0x02 a NIC, anything else a switch. A <pci>
 *       holding a <nic> is a NIC whatever its class (ncclTopoAddPci).
 *   <gpu dev sm rank gdr>                       the GPU of its <pci>.
 *   <nvlink target tclass count>                count x ncclTopoNVLinkBw(sm) GB/s one way
 *       (SM60 18, SM70/SM80 20, SM86 12, SM90 20.6, SM100 40.1 per link): tclass 0x03 to the
 *       GPU at busid target, 0x068001 to the GPU's CPU (and back), else to the one NVSwitch
 *       node every GPU shares (and back); links to one place add up (ncclTopoConnectNodes).
 *   <c2c bw count>                              GPU to its CPU and back, bw x count / 1000 GB/s.
 *   <pcilink target>                            PCI switch to PCI switch, 5000 GB/s (LOC_BW).
 *   <nic><net name dev speed .../></nic>        NIC ports: speed Mb/s / 8000 GB/s (<= 0 reads
 *       as 10000 Mb/s); a <net> without dev, or with net="0", is no network device to NCCL; a
 *       <nic> directly under <cpu> hangs off the CPU at 5000 GB/s (ncclTopoAddCpu).
 * The file gives no latency for any link, and NCCL's model charges none per link (only its
 * per-hop protocol latencies, src/graph/tuning.cc, which collsim's protocol model adds): every
 * imported link has alpha 0. Unknown elements and attributes are reported, not guessed.
 *
 * `nvidia-smi topo -m` gives the GPU and NIC matrix: NV# (a bonded set of # NVLinks), PIX (at
 * most one PCIe bridge), PXB (several bridges), PHB (through the host bridge), NODE (between
 * host bridges of one NUMA node), SYS (across the socket interconnect), each GPU's NUMA
 * affinity and the NIC legend; no bandwidth, so the caller gives the NVLink lane, PCIe and
 * socket rates. */
#include "config.h"

#include <string.h>

#include "base/fileio.h"
#include "base/json_util.h"
#include "topo/topo_import.h"

/* NCCL 2.30.7 src/graph/topo.h: LOC_BW, the bandwidth of a link NCCL does not limit (GB/s). */
#define NCCL_LOC_GBPS 5000.0
/* Elements read from one XML file: 16 times NCCL's own limit (NCCL_TOPO_XML_MAX_NODES = 256,
 * src/graph/topo.h), so a hostile file cannot make the import slow. */
#define MAX_XML_ELEMENTS 4096
/* Devices in one nvidia-smi matrix (a node has tens). */
#define MAX_SMI_DEVICES 512

/* ---- The graph being built ---- */

typedef struct {
    CsDeviceKind kind;
    char *busid;      /* lowercase PCI bus id; nullable */
    char *model;      /* nullable */
    char *source;     /* nullable */
    int order;        /* within its kind: CUDA device, NET device, NUMA id; G_MAXINT: none */
    int seq;          /* order of appearance */
    int cpu;          /* the CPU device above it; -1 */
    int sm;           /* GPUs: compute capability; 0 unknown */
    double port_Bps;  /* NICs: port speed; 0 unknown */
    gboolean removed; /* a PCI switch with no GPU or NIC below it */
    char *name;       /* given at output */
} Dev;

typedef struct {
    int src; /* device index */
    int dst; /* device index */
    CsLinkKind kind;
    int count;       /* lanes */
    double lane_Bps; /* bytes/s per lane, per direction */
    char *source;
} Link;

typedef struct {
    const char *origin;
    GArray *devs;           /* Dev */
    GArray *links;          /* Link: one direction each */
    GPtrArray *notes;       /* nullable */
    int nvswitch;           /* the NVSwitch device, -1 */
    GString *about;         /* what the description says beyond the counts */
    GHashTable *link_index; /* "src dst kind lane" -> index in links + 1 */
} Graph;

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

static Dev *
dev_at(Graph *g, int i)
{
    return &g_array_index(g->devs, Dev, i);
}

/* Adds a device (@model and @source transfer full); returns its index. */
static int
graph_add_dev(Graph *g, CsDeviceKind kind, const char *busid, char *model, char *source)
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
static void
graph_add_link(Graph *g, int src, int dst, CsLinkKind kind, int count, double lane_Bps,
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

static void
graph_add_duplex(Graph *g, int a, int b, CsLinkKind kind, int count, double lane_Bps,
                 const char *source)
{
    graph_add_link(g, a, b, kind, count, lane_Bps, g_strdup(source));
    graph_add_link(g, b, a, kind, count, lane_Bps, g_strdup(source));
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

static void graph_note(Graph *g, int line, const char *format, ...) G_GNUC_PRINTF(3, 4);

/* One line for @notes: "ORIGIN:LINE: what" (no line when @line <= 0). */
static void
graph_note(Graph *g, int line, const char *format, ...)
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

static int
find_busid(Graph *g, const char *busid, CsDeviceKind kind)
{
    g_autofree char *low = g_ascii_strdown(busid, -1);
    for (guint i = 0; i < g->devs->len; i++) {
        const Dev *d = dev_at(g, (int)i);
        if (d->kind == kind && d->busid != NULL && strcmp(d->busid, low) == 0)
            return (int)i;
    }
    return -1;
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
        if (dev_at(g, i)->kind == CS_DEVICE_PCIE_SWITCH && degree[i] <= 1) {
            dev_at(g, i)->removed = TRUE;
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
            Dev *o = dev_at(g, other);
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
    const Dev *x = dev_at(g, *(const int *)a);
    const Dev *y = dev_at(g, *(const int *)b);
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
        if (!dev_at(g, (int)i)->removed)
            g_array_append_val(order, i);
    g_array_sort_with_data(order, compare_devs, g);

    CsTopoImportSummary sum = { 0 };
    sum.format = format;
    int per_kind[CS_N_DEVICE_KINDS] = { 0 };
    int n_kind[CS_N_DEVICE_KINDS] = { 0 };
    for (guint i = 0; i < order->len; i++)
        n_kind[dev_at(g, g_array_index(order, int, i))->kind]++;
    if (n_kind[CS_DEVICE_GPU] == 0) {
        g_set_error(error, CS_TOPO_ERROR, CS_TOPO_ERROR_INVALID,
                    "%s: no GPU in it (no <pci> of class 0x03..., no GPU row), nothing to "
                    "simulate",
                    g->origin);
        return NULL;
    }
    for (guint i = 0; i < order->len; i++) {
        Dev *d = dev_at(g, g_array_index(order, int, i));
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
        const Dev *d = dev_at(g, g_array_index(order, int, i));
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
        if (done[i] || dev_at(g, l->src)->removed || dev_at(g, l->dst)->removed)
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
        const char *ends[2] = { dev_at(g, l->src)->name, dev_at(g, l->dst)->name };
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

/* ---- NCCL topology XML ---- */

typedef enum {
    EL_SYSTEM,
    EL_CPU,
    EL_PCI,
    EL_GPU,
    EL_NVLINK,
    EL_C2C,
    EL_PCILINK,
    EL_NIC,
    EL_NET,
    EL_SKIP, /* an unknown element, or one out of place, and everything inside it */
} ElKind;

typedef struct {
    char *name;  /* the NET device's name (mlx5_0), nullable */
    int dev;     /* NCCL's NET device index */
    double Bps;  /* port speed, bytes/s, as NCCL reads it */
    char *speed; /* the attribute as written, nullable */
    int line;
} Net;

typedef struct {
    ElKind kind;
    int dev;     /* CPU, PCI: the device it made; GPU: its GPU device; -1 */
    int cpu;     /* the CPU device it is under; -1 */
    int line;    /* where it starts */
    int nic_pci; /* NIC: the device of its <pci> (-1 under a <cpu>) */
    GArray *nets;
    int sm;             /* GPU: compute capability */
    gboolean gpus;      /* PCI: a <gpu> was seen inside */
    gboolean nic;       /* PCI: a <nic> was seen inside */
    gboolean gpu_class; /* PCI: class 0x03... */
    gboolean nic_class; /* PCI: class 0x02... */
    char *busid;        /* PCI: lowercase bus id */
} Frame;

typedef struct {
    int gpu;         /* device index */
    char *target;    /* bus id */
    char *tclass;    /* as written */
    int count;       /* links */
    double lane_Bps; /* bytes/s per link, one direction */
    int line;        /* of the element, for notes */
} PendingLink;

typedef struct {
    Graph *g;
    GMarkupParseContext *ctx;
    GArray *stack;       /* Frame */
    GArray *pending;     /* PendingLink: NVLinks, resolved once every GPU is known */
    GArray *pcilinks;    /* PendingLink (gpu = the switch): <pcilink>s, likewise */
    guint64 host_hash;   /* of the first <cpu> that gives one */
    gboolean have_host;  /* host_hash is set */
    gboolean seen_root;  /* <system> was opened */
    int gpu_no_element;  /* GPUs with no <gpu> (an NCCL_TOPO_FILE) */
    int nic_no_element;  /* NICs with no <nic> */
    int vm_bridges;      /* bridges whose link is narrower than x4 */
    const char *text;    /* the input, for the position of an element's '<' */
    gsize len;           /* bytes of @text */
    int el_line;         /* where the element being handled starts (1-based) */
    int el_col;          /* its column (1-based, bytes) */
    int n_elements;      /* elements seen so far */
    GArray *line_starts; /* gsize: byte offset of each line */
} XmlState;

/* Finds where <@element starts: GMarkup reports its position after the tag (and after the
 * text that follows it), so look back from there for the tag's '<'. */
static void
locate_element(XmlState *st, const char *element)
{
    int line = 0, col = 0;
    g_markup_parse_context_get_position(st->ctx, &line, &col);
    const gsize *starts = (const gsize *)(void *)st->line_starts->data;
    guint n_lines = st->line_starts->len;
    /* The byte offset of (line, col): col counts characters, a byte each in NCCL's ASCII. */
    gsize off = line >= 1 && (guint)line <= n_lines ? starts[line - 1] : st->len;
    off = MIN(st->len, off + (gsize)MAX(col, 0));
    gsize n = strlen(element);
    gsize at = off;
    gboolean found = FALSE;
    while (at > 0 && !found) {
        at--;
        found = st->text[at] == '<' && at + 1 + n <= st->len
                && strncmp(st->text + at + 1, element, n) == 0
                && (at + 1 + n == st->len || strchr(" \t\r\n/>", st->text[at + 1 + n]) != NULL);
    }
    if (!found) {
        st->el_line = line;
        st->el_col = col;
        return;
    }
    /* The last line starting at or before @at. */
    guint lo = 0, hi = n_lines;
    while (hi - lo > 1) {
        guint mid = lo + (hi - lo) / 2;
        if (starts[mid] <= at)
            lo = mid;
        else
            hi = mid;
    }
    st->el_line = (int)lo + 1;
    st->el_col = (int)(at - starts[lo]) + 1;
}

static int
current_line(XmlState *st)
{
    return st->el_line;
}

static Frame *
top_frame(XmlState *st)
{
    return st->stack->len == 0 ? NULL : &g_array_index(st->stack, Frame, st->stack->len - 1);
}

static const char *
attr(const char **names, const char **values, const char *key)
{
    for (int i = 0; names[i] != NULL; i++)
        if (strcmp(names[i], key) == 0)
            return values[i];
    return NULL;
}

/* Reports every attribute of <@element> not in @known (NULL-terminated). */
static void
check_attrs(XmlState *st, const char *element, const char **names, const char **values,
            const char *const *known)
{
    for (int i = 0; names[i] != NULL; i++) {
        gboolean ok = FALSE;
        for (int k = 0; known[k] != NULL && !ok; k++)
            ok = strcmp(names[i], known[k]) == 0;
        if (!ok)
            graph_note(st->g, current_line(st), "<%s>: unknown attribute %s=\"%s\" (ignored)",
                       element, names[i], values[i]);
    }
}

/* An integer attribute, or @fallback when absent; FALSE with @error when not a number. */
static gboolean
int_attr(XmlState *st, const char *element, const char **names, const char **values,
         const char *key, gint64 fallback, gint64 *out, GError **error)
{
    const char *v = attr(names, values, key);
    *out = fallback;
    if (v == NULL)
        return TRUE;
    char *end = NULL;
    gint64 x = g_ascii_strtoll(v, &end, 0);
    if (end == v || *end != '\0') {
        g_set_error(error, CS_TOPO_ERROR, CS_TOPO_ERROR_INVALID,
                    "%s:%d:%d: <%s>: %s=\"%s\" is not a number", st->g->origin, st->el_line,
                    st->el_col, element, key, v);
        return FALSE;
    }
    *out = x;
    return TRUE;
}

static gboolean fail_at(XmlState *st, GError **error, const char *format, ...) G_GNUC_PRINTF(3, 4);

static gboolean
fail_at(XmlState *st, GError **error, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    g_autofree char *text = g_strdup_vprintf(format, ap);
    va_end(ap);
    g_set_error(error, CS_TOPO_ERROR, CS_TOPO_ERROR_INVALID, "%s:%d:%d: %s", st->g->origin,
                st->el_line, st->el_col, text);
    return FALSE;
}

/* NCCL 2.30.7 topo.cc kvDictPciGen: per-lane rate in units of 100 Mb/s, matched by prefix;
 * anything else reads as 60 (8 GT/s). */
static int
pci_gen_rate(const char *speed, gboolean *known)
{
    static const struct {
        const char *text;
        int rate;
    } gens[] = {
        { "2.5 GT/s", 15 },        { "5 GT/s", 30 },          { "8 GT/s", 60 },
        { "16 GT/s", 120 },        { "32 GT/s", 240 },        { "2.5 GT/s PCIe", 15 },
        { "5.0 GT/s PCIe", 30 },   { "8.0 GT/s PCIe", 60 },   { "16.0 GT/s PCIe", 120 },
        { "32.0 GT/s PCIe", 240 }, { "64.0 GT/s PCIe", 480 },
    };
    for (gsize i = 0; i < G_N_ELEMENTS(gens); i++) {
        if (strncmp(speed, gens[i].text, strlen(gens[i].text)) == 0) {
            *known = TRUE;
            return gens[i].rate;
        }
    }
    *known = FALSE;
    return 60;
}

/* NCCL 2.30.7 topo.h ncclTopoNVLinkBw(): usable GB/s per NVLink by compute capability. */
static double
nvlink_GBps(int sm)
{
    return sm >= 100  ? 40.1
           : sm >= 90 ? 20.6
           : sm == 86 ? 12.0
           : sm >= 80 ? 20.0
           : sm >= 70 ? 20.0
           : sm >= 60 ? 18.0
                      : 20.0;
}

/* NCCL 2.30.7 topo.cc ncclTopoGetInterCpuBw(): the socket interconnect, GB/s, and its name. */
static double
inter_cpu_GBps(const char *arch, const char *vendor, gint64 family, gint64 model, const char **what)
{
    if (g_strcmp0(arch, "ppc64") == 0) {
        *what = "POWER9 (P9_BW)";
        return 32.0;
    }
    if (g_strcmp0(arch, "arm64") == 0) {
        *what = "Arm (ARM_BW)";
        return 6.0;
    }
    if (g_strcmp0(arch, "x86_64") == 0 && g_strcmp0(vendor, "GenuineIntel") == 0) {
        if (family == 6 && model >= 0xCF) {
            *what = "Intel Emerald Rapids or later (ERP_QPI_BW)";
            return 40.0;
        }
        if (family == 6 && model >= 0x8F) {
            *what = "Intel Sapphire Rapids (SRP_QPI_BW)";
            return 22.0;
        }
        if (family == 6 && model >= 0x55) {
            *what = "Intel Skylake to Ice Lake (SKL_QPI_BW)";
            return 10.0;
        }
        *what = "Intel Broadwell or earlier (BDW_QPI_BW)";
        return 6.0;
    }
    if (g_strcmp0(arch, "x86_64") == 0 && g_strcmp0(vendor, "AuthenticAMD") == 0) {
        *what = "AMD (AMD_BW)";
        return 16.0;
    }
    if (g_strcmp0(arch, "x86_64") == 0
        && (g_strcmp0(vendor, "CentaurHauls") == 0 || g_strcmp0(vendor, "  Shanghai  ") == 0)) {
        *what = family == 7 && model == 0x5B ? "Zhaoxin Yongfeng (YONGFENG_ZPI_BW)"
                                             : "Zhaoxin (ZPI_BW)";
        return family == 7 && model == 0x5B ? 9.0 : 6.0;
    }
    *what = "a CPU NCCL has no figure for (LOC_BW: no limit)";
    return NCCL_LOC_GBPS;
}

static const char *const known_system[] = { "version", NULL };
static const char *const known_cpu[]
    = { "numaid", "affinity", "arch", "vendor", "familyid", "modelid", "host_hash", NULL };
static const char *const known_pci[]
    = { "busid",      "class",      "vendor", "device", "subsystem_vendor", "subsystem_device",
        "link_speed", "link_width", "keep",   NULL };
static const char *const known_gpu[] = { "dev", "sm", "rank", "gdr", "mlopart", "keep", NULL };
static const char *const known_nvlink[] = { "target", "count", "tclass", NULL };
static const char *const known_c2c[] = { "bw", "count", NULL };
static const char *const known_pcilink[] = { "target", NULL };
static const char *const known_nic[] = { "keep", NULL };
static const char *const known_net[]
    = { "name", "dev",  "speed", "port", "latency", "guid", "maxconn", "gdr",
        "coll", "rail", "plane", "net",  "gin",     "rma",  "keep",    NULL };

static gboolean
start_cpu(XmlState *st, const char **names, const char **values, Frame *f, GError **error)
{
    gint64 numa = -1, family = 0, model = 0;
    check_attrs(st, "cpu", names, values, known_cpu);
    if (!int_attr(st, "cpu", names, values, "numaid", -1, &numa, error)
        || !int_attr(st, "cpu", names, values, "familyid", 0, &family, error)
        || !int_attr(st, "cpu", names, values, "modelid", 0, &model, error))
        return FALSE;
    const char *hash = attr(names, values, "host_hash");
    if (hash != NULL) {
        guint64 h = g_ascii_strtoull(hash, NULL, 16);
        if (st->have_host && h != st->host_hash)
            return fail_at(st, error,
                           "<cpu host_hash=\"%s\">: a second host in one file (a fused "
                           "multi-node topology); import one node's dump",
                           hash);
        st->host_hash = h;
        st->have_host = TRUE;
    }
    const char *arch = attr(names, values, "arch");
    const char *vendor = attr(names, values, "vendor");
    const char *what = NULL;
    double sys = inter_cpu_GBps(arch, vendor, family, model, &what);
    char *model_text
        = g_strdup_printf("%s %s family %" G_GINT64_FORMAT " model %" G_GINT64_FORMAT,
                          arch != NULL ? arch : "?", vendor != NULL ? vendor : "?", family, model);
    char *source = g_strdup_printf("NUMA node %" G_GINT64_FORMAT "; socket interconnect: NCCL "
                                   "reads %.15g GB/s for %s",
                                   numa, sys, what);
    f->dev = graph_add_dev(st->g, CS_DEVICE_CPU, NULL, model_text, source);
    Dev *d = dev_at(st->g, f->dev);
    d->order = numa >= 0 ? (int)numa : G_MAXINT;
    d->port_Bps = sys * 1e9; /* a CPU's port_Bps: its inter-socket rate */
    f->cpu = f->dev;
    return TRUE;
}

static gboolean
start_pci(XmlState *st, const char **names, const char **values, Frame *parent, Frame *f,
          GError **error)
{
    check_attrs(st, "pci", names, values, known_pci);
    const char *busid = attr(names, values, "busid");
    const char *klass = attr(names, values, "class");
    const char *speed = attr(names, values, "link_speed");
    const char *width_text = attr(names, values, "link_width");
    if (busid == NULL)
        return fail_at(st, error, "<pci> without busid");
    if (klass == NULL)
        return fail_at(st, error,
                       "<pci busid=\"%s\"> has no class: a GPU, a NIC and a switch cannot be "
                       "told apart (NCCL fills it from sysfs on the machine itself)",
                       busid);
    if (speed == NULL || width_text == NULL)
        return fail_at(st, error,
                       "<pci busid=\"%s\"> has no %s: its PCIe bandwidth is unknown (NCCL "
                       "reads it from sysfs on the machine itself)",
                       busid, speed == NULL ? "link_speed" : "link_width");
    gint64 width = 0;
    if (!int_attr(st, "pci", names, values, "link_width", 0, &width, error))
        return FALSE;
    if (width < 0 || width > 64)
        return fail_at(st, error, "<pci busid=\"%s\">: link_width=\"%s\" is not a PCIe width",
                       busid, width_text);
    int line = current_line(st);
    gboolean known = FALSE;
    int rate = pci_gen_rate(speed, &known);
    if (!known)
        graph_note(st->g, line,
                   "<pci busid=\"%s\">: link_speed=\"%s\" is no PCIe rate NCCL knows: read as "
                   "8 GT/s, as NCCL does (kvDictPciGen's fallback)",
                   busid, speed);
    gint64 lanes = width == 0 ? 16 : width;
    if (width == 0)
        graph_note(st->g, line, "<pci busid=\"%s\">: link_width=\"0\" read as x16, as NCCL does",
                   busid);
    double GBps = (double)lanes * rate / 80.0;
    g_autofree char *source
        = g_strdup_printf("pci %s link_speed=\"%s\" link_width=\"%s\": %" G_GINT64_FORMAT
                          " lanes x %d x 100 Mb/s = %.15g GB/s (NCCL topo.cc ncclTopoAddPci)",
                          busid, speed, width_text, lanes, rate, GBps);

    f->busid = g_ascii_strdown(busid, -1);
    f->gpu_class = g_str_has_prefix(klass, "0x03");
    f->nic_class = g_str_has_prefix(klass, "0x02");
    if (g_str_has_prefix(klass, "0x068000")) {
        graph_note(st->g, line,
                   "<pci busid=\"%s\" class=\"%s\">: an NVSwitch's PCI function; NCCL makes no "
                   "node of it (the NVLinks that name the switch make it)",
                   busid, klass);
        f->kind = EL_SKIP;
        return TRUE;
    }
    if (g_str_has_prefix(klass, "0x068001")) {
        graph_note(st->g, line, "<pci busid=\"%s\" class=\"%s\">: a CPU's PCI function; left out",
                   busid, klass);
        f->kind = EL_SKIP;
        return TRUE;
    }
    CsDeviceKind kind = f->gpu_class ? CS_DEVICE_GPU : CS_DEVICE_PCIE_SWITCH;
    const char *vendor = attr(names, values, "vendor");
    const char *device = attr(names, values, "device");
    g_autofree char *ids = g_strdup_printf(
        "%s%s%s%s", vendor != NULL ? " vendor " : "", vendor != NULL ? vendor : "",
        device != NULL ? " device " : "", device != NULL ? device : "");
    /* GPUs take the model of --gpu's topology; the PCI identity goes in the source, so that
     * `topo show` counts alike devices together. */
    char *model
        = kind == CS_DEVICE_GPU ? NULL : g_strdup_printf("PCIe switch (class %s%s)", klass, ids);
    char *dsource = g_strdup_printf("pci %s class %s%s", busid, klass, ids);
    f->dev = graph_add_dev(st->g, kind, busid, model, dsource);
    Dev *d = dev_at(st->g, f->dev);
    d->cpu = parent->cpu;
    f->cpu = parent->cpu;
    if (kind == CS_DEVICE_PCIE_SWITCH && g_str_has_prefix(klass, "0x0604") && width > 0
        && width < 4)
        st->vm_bridges++;
    graph_add_duplex(st->g, f->dev, parent->dev, CS_LINK_PCIE, 1, GBps * 1e9, source);
    return TRUE;
}

static gboolean
start_gpu(XmlState *st, const char **names, const char **values, Frame *parent, Frame *f,
          GError **error)
{
    check_attrs(st, "gpu", names, values, known_gpu);
    gint64 dev = -1, sm = 0;
    if (!int_attr(st, "gpu", names, values, "dev", -1, &dev, error)
        || !int_attr(st, "gpu", names, values, "sm", 0, &sm, error))
        return FALSE;
    if (parent->gpus) {
        graph_note(st->g, current_line(st),
                   "a second <gpu> in <pci busid=\"%s\"> (MLOPart partitions or ranks sharing "
                   "a GPU): imported as one GPU",
                   parent->busid);
        f->kind = EL_SKIP;
        return TRUE;
    }
    if (!parent->gpu_class) {
        graph_note(st->g, current_line(st),
                   "<gpu> in <pci busid=\"%s\">, which is no GPU's class: left out", parent->busid);
        f->kind = EL_SKIP;
        return TRUE;
    }
    parent->gpus = TRUE;
    f->dev = parent->dev;
    f->cpu = parent->cpu;
    f->sm = (int)sm;
    Dev *d = dev_at(st->g, f->dev);
    d->order = dev >= 0 ? (int)dev : G_MAXINT;
    d->sm = (int)sm;
    char *source = g_strdup_printf("%s, CUDA device %" G_GINT64_FORMAT ", sm %" G_GINT64_FORMAT,
                                   d->source, dev, sm);
    g_free(d->source);
    d->source = source;
    if (sm == 0)
        graph_note(st->g, current_line(st),
                   "<gpu> in <pci busid=\"%s\"> has no sm: its NVLinks read at NCCL's default "
                   "(SM80_NVLINK_BW, 20 GB/s)",
                   parent->busid);
    return TRUE;
}

static gboolean
start_nvlink(XmlState *st, const char **names, const char **values, Frame *parent, GError **error)
{
    check_attrs(st, "nvlink", names, values, known_nvlink);
    gint64 count = 0;
    if (!int_attr(st, "nvlink", names, values, "count", 0, &count, error))
        return FALSE;
    const char *target = attr(names, values, "target");
    const char *tclass = attr(names, values, "tclass");
    if (target == NULL || tclass == NULL || count <= 0 || count > 1024)
        return fail_at(st, error, "<nvlink>: needs target, tclass and a count of 1 to 1024");
    PendingLink p = { parent->dev, g_ascii_strdown(target, -1),   g_strdup(tclass),
                      (int)count,  nvlink_GBps(parent->sm) * 1e9, current_line(st) };
    g_array_append_val(st->pending, p);
    return TRUE;
}

static gboolean
start_c2c(XmlState *st, const char **names, const char **values, Frame *parent, GError **error)
{
    check_attrs(st, "c2c", names, values, known_c2c);
    gint64 bw = 0, count = 0;
    if (!int_attr(st, "c2c", names, values, "bw", 0, &bw, error)
        || !int_attr(st, "c2c", names, values, "count", 0, &count, error))
        return FALSE;
    if (bw <= 0 || count <= 0 || count > 1024)
        return fail_at(st, error, "<c2c>: needs a bw > 0 and a count of 1 to 1024");
    if (parent->cpu < 0)
        return TRUE;
    g_autofree char *source
        = g_strdup_printf("NVLink-C2C: c2c bw=\"%" G_GINT64_FORMAT "\" count=\"%" G_GINT64_FORMAT
                          "\", %.15g GB/s per link (NCCL topo.cc ncclTopoAddC2c: bw / 1000)",
                          bw, count, (double)bw / 1000.0);
    graph_add_duplex(st->g, parent->dev, parent->cpu, CS_LINK_NVLINK, (int)count, (double)bw * 1e6,
                     source);
    return TRUE;
}

static gboolean
start_net(XmlState *st, const char **names, const char **values, Frame *nic, GError **error)
{
    check_attrs(st, "net", names, values, known_net);
    gint64 dev = -1, speed = 0, is_net = 1;
    const char *dev_text = attr(names, values, "dev");
    const char *name = attr(names, values, "name");
    if (!int_attr(st, "net", names, values, "dev", -1, &dev, error)
        || !int_attr(st, "net", names, values, "speed", 0, &speed, error)
        || !int_attr(st, "net", names, values, "net", 1, &is_net, error))
        return FALSE;
    int line = current_line(st);
    if (dev_text == NULL) {
        graph_note(st->g, line,
                   "<net name=\"%s\"> has no dev: NCCL leaves it out, and so does "
                   "the import",
                   name != NULL ? name : "?");
        return TRUE;
    }
    if (is_net == 0) {
        graph_note(st->g, line,
                   "<net name=\"%s\" net=\"0\">: no network device for collectives (GIN or RMA "
                   "only): left out",
                   name != NULL ? name : "?");
        return TRUE;
    }
    const char *speed_text = attr(names, values, "speed");
    if (speed <= 0) {
        graph_note(st->g, line,
                   "<net name=\"%s\">: speed=\"%s\" read as 10000 Mb/s, as NCCL does "
                   "(\"Some NICs define speed = -1\")",
                   name != NULL ? name : "?", speed_text != NULL ? speed_text : "");
        speed = 10000;
    }
    /* latency: what the network plugin reports to NCCL's tuning, us (ncclTopoAddNet reads it
     * into net.latency); a transport's "reported" figure, not a link's alpha. */
    const char *latency = attr(names, values, "latency");
    double latency_us = latency != NULL ? g_ascii_strtod(latency, NULL) : 0.0;
    if (latency_us > 0 && latency_us < 1e6)
        graph_note(st->g, line,
                   "<net name=\"%s\" latency=\"%s\">: the latency its plugin reports to NCCL's "
                   "tuning; not a link's alpha: give it to a template's transport (\"reported\": "
                   "\"%g us\", topologies/README.md)",
                   name != NULL ? name : "?", latency, latency_us);
    const char *gdr = attr(names, values, "gdr");
    if (gdr != NULL && strcmp(gdr, "0") == 0)
        graph_note(st->g, line,
                   "<net name=\"%s\" gdr=\"0\">: no GPUDirect RDMA, NCCL stages its traffic "
                   "through host memory; the import does not model that",
                   name != NULL ? name : "?");
    Net n = { g_strdup(name), (int)dev, (double)speed / 8000.0 * 1e9, g_strdup(speed_text), line };
    g_array_append_val(nic->nets, n);
    return TRUE;
}

static void
on_start(GMarkupParseContext *context, const char *element, const char **names, const char **values,
         gpointer data, GError **error)
{
    (void)context;
    XmlState *st = data;
    locate_element(st, element);
    if (++st->n_elements > MAX_XML_ELEMENTS) {
        fail_at(st, error,
                "more than %d elements; NCCL itself reads at most %d per node "
                "(NCCL_TOPO_XML_MAX_NODES, src/graph/topo.h)",
                MAX_XML_ELEMENTS, 256);
        return;
    }
    Frame *parent = top_frame(st);
    Frame f = { 0 };
    f.kind = EL_SKIP;
    f.dev = -1;
    f.cpu = parent != NULL ? parent->cpu : -1;
    f.nic_pci = -1;
    f.line = current_line(st);
    gboolean ok = TRUE;

    if (parent == NULL) {
        if (st->seen_root) {
            fail_at(st, error, "a second root element <%s>", element);
            return;
        }
        st->seen_root = TRUE;
        if (strcmp(element, "system") != 0) {
            fail_at(st, error,
                    "the root element is <%s>, not <system>: not an NCCL topology file "
                    "(NCCL_TOPO_DUMP_FILE)",
                    element);
            return;
        }
        check_attrs(st, "system", names, values, known_system);
        f.kind = EL_SYSTEM;
    }
    else if (parent->kind == EL_SKIP) {
        f.kind = EL_SKIP; /* inside an element already reported */
    }
    else if (strcmp(element, "cpu") == 0 && parent->kind == EL_SYSTEM) {
        f.kind = EL_CPU;
        ok = start_cpu(st, names, values, &f, error);
    }
    else if (strcmp(element, "pci") == 0 && (parent->kind == EL_CPU || parent->kind == EL_PCI)) {
        f.kind = EL_PCI;
        ok = start_pci(st, names, values, parent, &f, error);
    }
    else if (strcmp(element, "gpu") == 0 && parent->kind == EL_PCI) {
        f.kind = EL_GPU;
        ok = start_gpu(st, names, values, parent, &f, error);
    }
    else if (strcmp(element, "nvlink") == 0 && parent->kind == EL_GPU) {
        f.kind = EL_NVLINK;
        ok = start_nvlink(st, names, values, parent, error);
    }
    else if (strcmp(element, "c2c") == 0 && parent->kind == EL_GPU) {
        f.kind = EL_C2C;
        ok = start_c2c(st, names, values, parent, error);
    }
    else if (strcmp(element, "pcilink") == 0 && parent->kind == EL_PCI) {
        check_attrs(st, "pcilink", names, values, known_pcilink);
        const char *target = attr(names, values, "target");
        f.kind = EL_PCILINK;
        if (target == NULL) {
            fail_at(st, error, "<pcilink> without target");
            return;
        }
        PendingLink p
            = { parent->dev, g_ascii_strdown(target, -1), NULL, 1, NCCL_LOC_GBPS * 1e9, f.line };
        g_array_append_val(st->pcilinks, p);
    }
    else if (strcmp(element, "nic") == 0 && (parent->kind == EL_PCI || parent->kind == EL_CPU)) {
        check_attrs(st, "nic", names, values, known_nic);
        f.kind = EL_NIC;
        f.nic_pci = parent->kind == EL_PCI ? parent->dev : -1;
        f.nets = g_array_new(FALSE, TRUE, sizeof(Net));
        if (parent->kind == EL_PCI)
            parent->nic = TRUE;
    }
    else if (strcmp(element, "net") == 0 && parent->kind == EL_NIC) {
        f.kind = EL_NET;
        ok = start_net(st, names, values, parent, error);
    }
    else {
        static const char *const known[]
            = { "system", "cpu", "pci", "gpu", "nvlink", "c2c", "pcilink", "nic", "net", NULL };
        gboolean is_known = g_strv_contains(known, element);
        graph_note(st->g, f.line, "%s <%s>%s: left out, with everything inside it",
                   is_known ? "unexpected" : "unknown element", element,
                   is_known ? " in this place" : "");
    }
    if (ok)
        g_array_append_val(st->stack, f);
}

/* A <nic>'s ports: one port makes its <pci> the NIC; several hang off the <pci> (now a hub) or
 * off the CPU at NCCL's LOC_BW. */
static void
end_nic(XmlState *st, Frame *f)
{
    Graph *g = st->g;
    for (guint i = 0; i < f->nets->len; i++) {
        Net *n = &g_array_index(f->nets, Net, i);
        char *model = g_strdup_printf("NIC port %.15g Gb/s", n->Bps * 8 / 1e9);
        char *source = g_strdup_printf("net %s dev %d speed=\"%s\" Mb/s: NCCL reads %.15g GB/s "
                                       "(topo.cc ncclTopoAddNet: speed / 8000)",
                                       n->name != NULL ? n->name : "?", n->dev,
                                       n->speed != NULL ? n->speed : "", n->Bps / 1e9);
        int dev;
        if (f->nic_pci >= 0 && f->nets->len == 1) {
            dev = f->nic_pci;
            Dev *d = dev_at(g, dev);
            d->kind = CS_DEVICE_NIC;
            char *full = g_strdup_printf("%s; %s", source, d->source);
            g_free(source);
            g_free(d->model);
            d->model = model;
            g_free(d->source);
            d->source = full;
        }
        else {
            dev = graph_add_dev(g, CS_DEVICE_NIC, NULL, model, source);
            int hub = f->nic_pci >= 0 ? f->nic_pci : f->cpu;
            dev_at(g, dev)->cpu = f->cpu;
            if (hub >= 0)
                graph_add_duplex(g, dev, hub, CS_LINK_PCIE, 1, NCCL_LOC_GBPS * 1e9,
                                 f->nic_pci >= 0
                                     ? "a port of a multi-port NIC: NCCL joins NIC and NET at "
                                       "the port's speed; no limit here (LOC_BW 5000 GB/s), the "
                                       "NIC's PCIe link is the shared one"
                                     : "a NIC under a CPU: NCCL joins them at LOC_BW "
                                       "(5000 GB/s, topo.cc ncclTopoAddCpu)");
        }
        Dev *d = dev_at(g, dev);
        d->order = n->dev;
        d->port_Bps = n->Bps;
        g_free(n->name);
        g_free(n->speed);
    }
    if (f->nets->len == 0 && f->nic_pci >= 0)
        graph_note(g, f->line,
                   "<nic> without a <net> that has a dev: no network device for NCCL, "
                   "left out");
    g_array_free(f->nets, TRUE);
    f->nets = NULL;
}

static void
end_pci(XmlState *st, Frame *f)
{
    if (f->dev < 0)
        return;
    Dev *d = dev_at(st->g, f->dev);
    if (f->gpu_class && !f->gpus) {
        st->gpu_no_element++;
        graph_note(st->g, f->line,
                   "<pci busid=\"%s\"> is a GPU (class 0x03) without a <gpu> element (an "
                   "NCCL_TOPO_FILE; NCCL adds it at run time): its NVLinks are not in the file, "
                   "it is imported with PCIe only",
                   f->busid);
    }
    if (f->nic_class && !f->nic && d->kind == CS_DEVICE_PCIE_SWITCH) {
        st->nic_no_element++;
        d->kind = CS_DEVICE_NIC;
        g_free(d->model);
        d->model = g_strdup("NIC, port speed not in the file");
        graph_note(st->g, f->line,
                   "<pci busid=\"%s\"> is a NIC (class 0x02) without a <nic> element: its port "
                   "speed is not in the file (give it as the template's nic_bandwidth)",
                   f->busid);
    }
}

static void
on_end(GMarkupParseContext *context, const char *element, gpointer data, GError **error)
{
    (void)context;
    (void)element;
    (void)error;
    XmlState *st = data;
    Frame *f = top_frame(st);
    if (f->kind == EL_NIC)
        end_nic(st, f);
    else if (f->kind == EL_PCI)
        end_pci(st, f);
    g_free(f->busid);
    g_array_set_size(st->stack, st->stack->len - 1);
}

static void
on_text(GMarkupParseContext *context, const char *text, gsize len, gpointer data, GError **error)
{
    (void)context;
    (void)error;
    XmlState *st = data;
    for (gsize i = 0; i < len; i++) {
        if (!g_ascii_isspace(text[i])) {
            int line = 0, col = 0;
            g_markup_parse_context_get_position(st->ctx, &line, &col);
            graph_note(st->g, line, "text between elements (ignored)");
            return;
        }
    }
}

/* The NVLinks and PCI links, now that every GPU and switch is known. */
static void
resolve_links(XmlState *st)
{
    Graph *g = st->g;
    for (guint i = 0; i < st->pending->len; i++) {
        PendingLink *p = &g_array_index(st->pending, PendingLink, i);
        g_autofree char *source = g_strdup_printf(
            "nvlink count=\"%d\" tclass=\"%s\": %.15g GB/s per link for sm %d (NCCL topo.h "
            "ncclTopoNVLinkBw)",
            p->count, p->tclass, p->lane_Bps / 1e9, dev_at(g, p->gpu)->sm);
        if (g_str_has_prefix(p->tclass, "0x03")) {
            int peer = find_busid(g, p->target, CS_DEVICE_GPU);
            if (peer == p->gpu)
                graph_note(g, p->line, "<nvlink target=\"%s\">: its own GPU; left out", p->target);
            else if (peer < 0)
                graph_note(g, p->line,
                           "<nvlink target=\"%s\">: no GPU of this file has that bus id; left "
                           "out, as NCCL leaves it",
                           p->target);
            else
                graph_add_link(g, p->gpu, peer, CS_LINK_NVLINK, p->count, p->lane_Bps,
                               g_strdup(source));
        }
        else if (g_str_has_prefix(p->tclass, "0x068001")) {
            int cpu = dev_at(g, p->gpu)->cpu;
            if (cpu >= 0)
                graph_add_duplex(g, p->gpu, cpu, CS_LINK_NVLINK, p->count, p->lane_Bps, source);
        }
        else {
            if (!g_str_has_prefix(p->tclass, "0x068000"))
                graph_note(g, p->line,
                           "<nvlink tclass=\"%s\">: neither a GPU nor a CPU; NCCL takes it for "
                           "an NVSwitch, and so does the import",
                           p->tclass);
            if (g->nvswitch < 0) {
                g->nvswitch = graph_add_dev(
                    g, CS_DEVICE_NVSWITCH, NULL,
                    g_strdup("NVSwitch fabric (every NVLink to a switch, as NCCL's one NVS node)"),
                    NULL);
            }
            graph_add_duplex(g, p->gpu, g->nvswitch, CS_LINK_NVSWITCH, p->count, p->lane_Bps,
                             source);
        }
    }
    for (guint i = 0; i < st->pcilinks->len; i++) {
        PendingLink *p = &g_array_index(st->pcilinks, PendingLink, i);
        int peer = find_busid(g, p->target, CS_DEVICE_PCIE_SWITCH);
        if (peer < 0 || p->gpu < 0)
            graph_note(g, p->line,
                       "<pcilink target=\"%s\">: no PCI switch has that bus id; left "
                       "out, as NCCL leaves it",
                       p->target);
        else
            graph_add_link(g, p->gpu, peer, CS_LINK_PCIE, 1, p->lane_Bps,
                           g_strdup("pcilink between PCI switches: NCCL's LOC_BW, 5000 GB/s "
                                    "(topo.cc ncclTopoAddPciLinks)"));
    }
    /* Every pair of sockets, as ncclTopoConnectCpus joins them. */
    for (guint a = 0; a < g->devs->len; a++) {
        for (guint b = 0; b < g->devs->len; b++) {
            if (a == b || dev_at(g, (int)a)->kind != CS_DEVICE_CPU
                || dev_at(g, (int)b)->kind != CS_DEVICE_CPU)
                continue;
            graph_add_link(g, (int)a, (int)b, CS_LINK_PCIE, 1, dev_at(g, (int)a)->port_Bps,
                           g_strdup(dev_at(g, (int)a)->source));
        }
    }
    for (guint a = 0; a < g->devs->len; a++)
        if (dev_at(g, (int)a)->kind == CS_DEVICE_CPU)
            dev_at(g, (int)a)->port_Bps = 0;
}

static void
clear_pending(GArray *pending)
{
    for (guint i = 0; i < pending->len; i++) {
        PendingLink *p = &g_array_index(pending, PendingLink, i);
        g_free(p->target);
        g_free(p->tclass);
    }
    g_array_free(pending, TRUE);
}

/* "Error on line 3 char 7: Element ..." -> "Element ..." (the position is written our way). */
static const char *
strip_markup_position(const char *message)
{
    if (g_str_has_prefix(message, "Error on line ")) {
        const char *colon = strstr(message, ": ");
        if (colon != NULL)
            return colon + 2;
    }
    return message;
}

static gboolean
import_xml(Graph *g, const char *text, gsize len, GError **error)
{
    static const GMarkupParser parser = { on_start, on_end, on_text, NULL, NULL };
    XmlState st = { 0 };
    st.g = g;
    st.text = text;
    st.len = len;
    st.line_starts = g_array_new(FALSE, FALSE, sizeof(gsize));
    gsize zero = 0;
    g_array_append_val(st.line_starts, zero);
    for (gsize i = 0; i < len; i++) {
        if (text[i] == '\n') {
            gsize next = i + 1;
            g_array_append_val(st.line_starts, next);
        }
    }
    st.stack = g_array_new(FALSE, TRUE, sizeof(Frame));
    st.pending = g_array_new(FALSE, TRUE, sizeof(PendingLink));
    st.pcilinks = g_array_new(FALSE, TRUE, sizeof(PendingLink));
    st.ctx = g_markup_parse_context_new(&parser, 0, &st, NULL);
    g_autoptr(GError) local = NULL;
    gboolean ok = g_markup_parse_context_parse(st.ctx, text, (gssize)len, &local)
                  && g_markup_parse_context_end_parse(st.ctx, &local);
    if (!ok) {
        if (local->domain == CS_TOPO_ERROR) {
            g_propagate_error(error, g_steal_pointer(&local));
        }
        else {
            int line = 0, col = 0;
            g_markup_parse_context_get_position(st.ctx, &line, &col);
            g_set_error(error, CS_TOPO_ERROR, CS_TOPO_ERROR_PARSE, "%s:%d:%d: not valid XML: %s",
                        g->origin, line, col, strip_markup_position(local->message));
        }
    }
    /* Frames left open by an error. */
    for (guint i = 0; i < st.stack->len; i++) {
        Frame *f = &g_array_index(st.stack, Frame, i);
        g_free(f->busid);
        if (f->nets != NULL) {
            for (guint k = 0; k < f->nets->len; k++) {
                g_free(g_array_index(f->nets, Net, k).name);
                g_free(g_array_index(f->nets, Net, k).speed);
            }
            g_array_free(f->nets, TRUE);
        }
    }
    if (ok && !st.seen_root) {
        g_set_error(error, CS_TOPO_ERROR, CS_TOPO_ERROR_PARSE,
                    "%s: no element in it: not an NCCL topology file", g->origin);
        ok = FALSE;
    }
    if (ok)
        resolve_links(&st);
    if (ok) {
        g_string_append(g->about,
                        "Bandwidths are NCCL's own readings of the file's attributes (NCCL "
                        "2.30.7 src/graph/topo.cc, topo.h; each link's source says which); "
                        "alpha is 0 on every link: the file gives no latency and NCCL's model "
                        "charges none per link, only its per-hop protocol latencies, which "
                        "collsim's protocol model adds. The NVSwitch is imported without "
                        "multicast reduction (NVLS is not in the file).");
        if (st.gpu_no_element > 0)
            g_string_append_printf(g->about,
                                   " %d GPU%s had no <gpu> element (an NCCL_TOPO_FILE): "
                                   "their NVLinks are not in the file, only their PCIe.",
                                   st.gpu_no_element, st.gpu_no_element == 1 ? "" : "s");
        if (st.nic_no_element > 0)
            g_string_append_printf(g->about,
                                   " %d NIC%s had no <nic> element: port speeds are not in "
                                   "the file.",
                                   st.nic_no_element, st.nic_no_element == 1 ? "" : "s");
        if (st.vm_bridges > 0)
            g_string_append_printf(g->about,
                                   " %d PCI bridge%s report%s a link narrower than x4 (as "
                                   "virtual machines' bridges do); NCCL reads the same.",
                                   st.vm_bridges, st.vm_bridges == 1 ? "" : "s",
                                   st.vm_bridges == 1 ? "s" : "");
    }
    g_markup_parse_context_free(st.ctx);
    g_array_free(st.line_starts, TRUE);
    g_array_free(st.stack, TRUE);
    clear_pending(st.pending);
    clear_pending(st.pcilinks);
    return ok;
}

/* ---- nvidia-smi topo -m ---- */

typedef enum {
    REL_SELF,
    REL_NV,
    REL_PIX,
    REL_PXB,
    REL_PHB,
    REL_NODE,
    REL_SYS,
} Rel;

typedef struct {
    char *label; /* GPU0, NIC0, mlx5_0 */
    gboolean gpu;
    int numa; /* GPUs: NUMA affinity; -1 unknown */
    int dev;  /* device index in the graph */
    int row;  /* line of its row; 0: none yet */
} SmiDev;

static gboolean
parse_rel(const char *cell, Rel *rel, int *nv)
{
    static const struct {
        const char *text;
        Rel rel;
    } rels[] = {
        { "X", REL_SELF },    { "PIX", REL_PIX }, { "PXB", REL_PXB }, { "PHB", REL_PHB },
        { "NODE", REL_NODE }, { "SYS", REL_SYS }, { "SOC", REL_SYS },
    };
    for (gsize i = 0; i < G_N_ELEMENTS(rels); i++) {
        if (strcmp(cell, rels[i].text) == 0) {
            *rel = rels[i].rel;
            *nv = 0;
            return TRUE;
        }
    }
    if (g_str_has_prefix(cell, "NV") && cell[2] != '\0') {
        char *end = NULL;
        gint64 n = g_ascii_strtoll(cell + 2, &end, 10);
        if (*end == '\0' && n >= 1 && n <= 1024) {
            *rel = REL_NV;
            *nv = (int)n;
            return TRUE;
        }
    }
    return FALSE;
}

static int
uf_find(int *parent, int x)
{
    while (parent[x] != x) {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    return x;
}

static void
uf_union(int *parent, int a, int b)
{
    a = uf_find(parent, a);
    b = uf_find(parent, b);
    if (a != b)
        parent[MAX(a, b)] = MIN(a, b);
}

static gboolean smi_fail(Graph *g, int line, GError **error, const char *format, ...)
    G_GNUC_PRINTF(4, 5);

static gboolean
smi_fail(Graph *g, int line, GError **error, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    g_autofree char *text = g_strdup_vprintf(format, ap);
    va_end(ap);
    if (line > 0)
        g_set_error(error, CS_TOPO_ERROR, CS_TOPO_ERROR_INVALID, "%s:%d: %s", g->origin, line,
                    text);
    else
        g_set_error(error, CS_TOPO_ERROR, CS_TOPO_ERROR_INVALID, "%s: %s", g->origin, text);
    return FALSE;
}

/* "Legend:", "NIC Legend:", or a legend entry "PIX  = Connection traversing ...". */
static gboolean
is_legend_line(const char *line)
{
    static const char *const keys[]
        = { "X", "SYS", "NODE", "PHB", "PXB", "PIX", "NV#", "SOC", "PSB", NULL };
    g_autofree char *t = g_strstrip(g_strdup(line));
    if (strcmp(t, "Legend:") == 0 || strcmp(t, "NIC Legend:") == 0)
        return TRUE;
    gsize n = strcspn(t, " \t=");
    const char *rest = t + n;
    while (*rest == ' ' || *rest == '\t')
        rest++;
    if (*rest != '=')
        return FALSE;
    for (int i = 0; keys[i] != NULL; i++)
        if (strlen(keys[i]) == n && strncmp(t, keys[i], n) == 0)
            return TRUE;
    return FALSE;
}

/* Builds the graph from the matrix: sockets from the NUMA affinity and the PCIe relations
 * (PIX, PXB, PHB and NODE stay within one NUMA node), a PCIe switch per set of devices
 * joined by PIX, one above the switches a PXB joins, NVLinks from NV#. */
static gboolean
import_smi(Graph *g, const char *text, gsize len, const CsTopoImportOptions *options,
           GError **error)
{
    /* On a terminal nvidia-smi underlines the header (ESC [ 4 m ... ESC [ 0 m): drop those. */
    g_autofree char *copy = g_new(char, len + 1);
    gsize kept = 0;
    for (gsize i = 0; i < len; i++) {
        if (text[i] == '\x1b' && i + 1 < len && text[i + 1] == '[') {
            gsize j = i + 2;
            while (j < len && (g_ascii_isdigit(text[j]) || text[j] == ';'))
                j++;
            if (j < len && text[j] == 'm') {
                i = j;
                continue;
            }
        }
        copy[kept++] = text[i];
    }
    copy[kept] = '\0';
    g_auto(GStrv) lines = g_strsplit(copy, "\n", -1);
    g_autoptr(GArray) devs = g_array_new(FALSE, TRUE, sizeof(SmiDev));
    int header = -1;

    /* The header: the first line whose first word is GPU0. */
    for (int i = 0; lines[i] != NULL && header < 0; i++) {
        g_auto(GStrv) words = g_strsplit_set(lines[i], " \t\r", -1);
        g_autoptr(GPtrArray) w = g_ptr_array_new();
        for (char **p = words; *p != NULL; p++)
            if (**p != '\0')
                g_ptr_array_add(w, *p);
        if (w->len == 0 || strcmp(w->pdata[0], "GPU0") != 0)
            continue;
        header = i;
        for (guint k = 0; k < w->len; k++) {
            const char *label = w->pdata[k];
            if (strcmp(label, "CPU") == 0 || strcmp(label, "NUMA") == 0
                || (strcmp(label, "GPU") == 0 && k + 1 < w->len
                    && strcmp(w->pdata[k + 1], "NUMA") == 0))
                break;
            if (devs->len == MAX_SMI_DEVICES)
                break;
            SmiDev d = { g_strdup(label), g_str_has_prefix(label, "GPU"), -1, -1, 0 };
            g_array_append_val(devs, d);
        }
    }
    gboolean ok = TRUE;
    int n = (int)devs->len;
    g_autofree Rel *rel = g_new0(Rel, (gsize)MAX(n, 1) * MAX(n, 1));
    g_autofree int *nv = g_new0(int, (gsize)MAX(n, 1) * MAX(n, 1));
    int skipped = 0;
    if (n == MAX_SMI_DEVICES)
        ok = smi_fail(g, header + 1, error, "the header names more than %d devices",
                      MAX_SMI_DEVICES - 1);
    if (ok && header < 0) {
        ok = smi_fail(g, 0, error,
                      "no matrix in it (no line starting with GPU0): neither NCCL topology XML "
                      "nor `nvidia-smi topo -m` output");
    }
    for (int i = 0; ok && i < header; i++) {
        g_autofree char *t = g_strstrip(g_strdup(lines[i]));
        if (t[0] != '\0' && t[0] != '#')
            skipped++;
    }
    if (skipped > 0)
        graph_note(g, 0, "%d line%s before the matrix (line %d) skipped", skipped,
                   skipped == 1 ? "" : "s", header + 1);

    /* Rows, the NIC legend, and the legend's fixed lines. */
    gboolean in_nic_legend = FALSE;
    for (int i = header + 1; ok && lines[i] != NULL; i++) {
        g_autofree char *t = g_strstrip(g_strdup(lines[i]));
        if (t[0] == '\0' || t[0] == '#')
            continue;
        g_auto(GStrv) words = g_strsplit_set(t, " \t\r", -1);
        g_autoptr(GPtrArray) w = g_ptr_array_new();
        for (char **p = words; *p != NULL; p++)
            if (**p != '\0')
                g_ptr_array_add(w, *p);
        /* The words with single spaces: tabs or spaces alike. */
        g_ptr_array_add(w, NULL);
        g_autofree char *norm = g_strjoinv(" ", (char **)w->pdata);
        g_ptr_array_set_size(w, w->len - 1);
        if (g_str_has_prefix(norm, "NIC Legend:"))
            in_nic_legend = TRUE;
        if (is_legend_line(norm))
            continue;
        if (in_nic_legend) {
            /* "NIC0: mlx5_0" */
            const char *label = w->pdata[0];
            gsize l = strlen(label);
            gboolean found = FALSE;
            if (l > 1 && label[l - 1] == ':' && w->len == 2) {
                for (int k = 0; k < n; k++) {
                    SmiDev *d = &g_array_index(devs, SmiDev, k);
                    if (!d->gpu && strncmp(d->label, label, l - 1) == 0
                        && d->label[l - 1] == '\0') {
                        char *full = g_strdup_printf("%s (%s)", (char *)w->pdata[1], d->label);
                        g_free(d->label);
                        d->label = full;
                        found = TRUE;
                    }
                }
            }
            if (!found)
                graph_note(g, i + 1, "not a NIC of the matrix: \"%s\" (ignored)", t);
            continue;
        }
        int row = -1;
        for (int k = 0; k < n && row < 0; k++)
            if (strcmp(g_array_index(devs, SmiDev, k).label, w->pdata[0]) == 0)
                row = k;
        if (row < 0) {
            graph_note(g, i + 1, "unknown line \"%s\" (ignored)", t);
            continue;
        }
        SmiDev *d = &g_array_index(devs, SmiDev, row);
        if (d->row > 0) {
            ok = smi_fail(g, i + 1, error, "a second row for %s (the first is line %d)", d->label,
                          d->row);
            break;
        }
        d->row = i + 1;
        if ((int)w->len < 1 + n) {
            ok = smi_fail(g, i + 1, error, "row %s has %d cells, the header names %d devices",
                          d->label, (int)w->len - 1, n);
            break;
        }
        for (int c = 0; c < n && ok; c++) {
            const char *cell = w->pdata[1 + c];
            Rel r;
            int count = 0;
            if (!parse_rel(cell, &r, &count)) {
                ok = smi_fail(g, i + 1, error,
                              "%s to %s: \"%s\" is none of X, NV#, PIX, PXB, PHB, NODE, SYS",
                              d->label, g_array_index(devs, SmiDev, c).label, cell);
                break;
            }
            if ((r == REL_SELF) != (c == row)) {
                ok = smi_fail(g, i + 1, error, "%s to %s: \"%s\" where %s", d->label,
                              g_array_index(devs, SmiDev, c).label, cell,
                              c == row ? "X (itself) belongs" : "X means itself");
                break;
            }
            if (r == REL_NV && (!d->gpu || !g_array_index(devs, SmiDev, c).gpu)) {
                ok = smi_fail(g, i + 1, error, "%s to %s: NVLinks (%s) between a GPU and a NIC",
                              d->label, g_array_index(devs, SmiDev, c).label, cell);
                break;
            }
            rel[row * n + c] = r;
            nv[row * n + c] = count;
        }
        /* After a GPU's cells: CPU affinity (a list like 0-47,96-143, may be empty), then
         * its NUMA node (a number, or N/A). */
        if (ok && d->gpu) {
            guint k = 1 + (guint)n;
            if (k < w->len && strpbrk(w->pdata[k], "-,") != NULL)
                k++;
            if (k < w->len) {
                char *end = NULL;
                gint64 numa = g_ascii_strtoll(w->pdata[k], &end, 10);
                if (*end == '\0' && numa >= 0 && numa < 4096)
                    d->numa = (int)numa;
            }
        }
    }
    for (int k = 0; ok && k < n; k++) {
        if (g_array_index(devs, SmiDev, k).row == 0)
            ok = smi_fail(g, header + 1, error, "the header names %s, but no row has it",
                          g_array_index(devs, SmiDev, k).label);
    }
    for (int a = 0; ok && a < n; a++) {
        for (int b = 0; ok && b < n; b++) {
            gboolean pa = rel[a * n + b] == REL_NV, pb = rel[b * n + a] == REL_NV;
            if (pa != pb || (rel[a * n + b] != REL_NV && rel[a * n + b] != rel[b * n + a]))
                graph_note(g, g_array_index(devs, SmiDev, a).row,
                           "%s to %s and back differ; each row's cells are taken for that row",
                           g_array_index(devs, SmiDev, a).label,
                           g_array_index(devs, SmiDev, b).label);
        }
    }

    /* What the matrix needs that it does not give. */
    gboolean any_nv = FALSE;
    for (int k = 0; ok && k < n * n; k++)
        any_nv = any_nv || rel[k] == REL_NV;
    if (ok && any_nv && options->nvlink_lane_Bps <= 0)
        ok = smi_fail(g, 0, error,
                      "the matrix shows NVLinks but gives no bandwidth: give "
                      "--nvlink-bandwidth (per link, per direction; NCCL reads 20.6 GB/s for "
                      "Hopper, 40.1 for Blackwell, 20 for Ampere: src/graph/topo.h)");
    if (ok && options->pcie_Bps <= 0)
        ok = smi_fail(g, 0, error,
                      "the matrix gives no PCIe bandwidth: give --pcie-bandwidth (per "
                      "direction, e.g. NCCL's 48 GB/s for Gen5 x16, 24 for Gen4 x16)");

    /* Sockets: same NUMA node, or a PCIe relation that stays within one. */
    g_autofree int *sock = g_new(int, MAX(n, 1));
    for (int k = 0; k < n; k++)
        sock[k] = k;
    for (int a = 0; ok && a < n; a++) {
        for (int b = 0; b < n; b++) {
            Rel r = rel[a * n + b];
            const SmiDev *da = &g_array_index(devs, SmiDev, a);
            const SmiDev *db = &g_array_index(devs, SmiDev, b);
            if (r == REL_PIX || r == REL_PXB || r == REL_PHB || r == REL_NODE
                || (da->numa >= 0 && da->numa == db->numa))
                uf_union(sock, a, b);
        }
    }
    /* GPUs with no NUMA figure and only NVLinks to the rest: one socket with the others. */
    int n_sockets = 0;
    g_autofree int *cpu_of = g_new(int, MAX(n, 1));
    for (int k = 0; ok && k < n; k++) {
        int root = uf_find(sock, k);
        if (root == k) {
            const SmiDev *d = &g_array_index(devs, SmiDev, k);
            char *model = d->numa >= 0 ? g_strdup_printf("CPU socket, NUMA node %d", d->numa)
                                       : g_strdup("CPU socket (NUMA node not in the matrix)");
            cpu_of[k] = graph_add_dev(g, CS_DEVICE_CPU, NULL, model, NULL);
            dev_at(g, cpu_of[k])->order = d->numa >= 0 ? d->numa : G_MAXINT;
            n_sockets++;
        }
    }
    if (ok && n_sockets > 1 && options->sys_Bps <= 0)
        ok = smi_fail(g, 0, error,
                      "the matrix spans %d CPU sockets (SYS) but gives no bandwidth between "
                      "them: give --sys-bandwidth (NCCL reads 22 GB/s for Sapphire Rapids, 16 "
                      "for AMD: src/graph/topo.h)",
                      n_sockets);
    for (int k = 0; ok && k < n; k++) {
        int root = uf_find(sock, k);
        if (root != k)
            cpu_of[k] = cpu_of[root];
    }

    /* Devices. */
    for (int k = 0; ok && k < n; k++) {
        SmiDev *d = &g_array_index(devs, SmiDev, k);
        d->dev = graph_add_dev(g, d->gpu ? CS_DEVICE_GPU : CS_DEVICE_NIC, NULL,
                               d->gpu ? NULL : g_strdup("NIC, port speed not in the matrix"),
                               g_strdup_printf("%s of nvidia-smi topo -m", d->label));
        dev_at(g, d->dev)->cpu = cpu_of[k];
    }
    g_autofree char *pcie_source = g_strdup_printf(
        "--pcie-bandwidth %.15g GB/s (nvidia-smi gives no PCIe rate)", options->pcie_Bps / 1e9);
    /* PCIe: switch per PIX set, one above the PIX sets a PXB joins, then the socket. */
    g_autofree int *pix = g_new(int, MAX(n, 1));
    g_autofree int *pxb = g_new(int, MAX(n, 1));
    for (int k = 0; k < n; k++)
        pix[k] = pxb[k] = k;
    for (int a = 0; ok && a < n; a++) {
        for (int b = 0; b < n; b++) {
            if (rel[a * n + b] == REL_PIX) {
                uf_union(pix, a, b);
                uf_union(pxb, a, b);
            }
            if (rel[a * n + b] == REL_PXB)
                uf_union(pxb, a, b);
        }
    }
    g_autofree int *pix_sw = g_new(int, MAX(n, 1));
    g_autofree int *pxb_sw = g_new(int, MAX(n, 1));
    for (int k = 0; ok && k < n; k++) {
        pix_sw[k] = pxb_sw[k] = -1;
        int members_pix = 0, groups_pxb = 0;
        for (int j = 0; j < n; j++) {
            members_pix += uf_find(pix, j) == k;
            groups_pxb += uf_find(pxb, j) == k && uf_find(pix, j) == j;
        }
        if (uf_find(pxb, k) == k && groups_pxb > 1) {
            pxb_sw[k] = graph_add_dev(g, CS_DEVICE_PCIE_SWITCH, NULL,
                                      g_strdup("PCIe switch above switches (PXB)"), NULL);
            graph_add_duplex(g, pxb_sw[k], cpu_of[k], CS_LINK_PCIE, 1, options->pcie_Bps,
                             pcie_source);
        }
        if (uf_find(pix, k) == k && members_pix > 1)
            pix_sw[k] = graph_add_dev(g, CS_DEVICE_PCIE_SWITCH, NULL, g_strdup("PCIe switch (PIX)"),
                                      NULL);
    }
    for (int k = 0; ok && k < n; k++) {
        int p = uf_find(pix, k);
        if (pix_sw[p] < 0)
            continue;
        if (p == k) {
            int above = pxb_sw[uf_find(pxb, k)];
            graph_add_duplex(g, pix_sw[p], above >= 0 ? above : cpu_of[k], CS_LINK_PCIE, 1,
                             options->pcie_Bps, pcie_source);
        }
    }
    for (int k = 0; ok && k < n; k++) {
        const SmiDev *d = &g_array_index(devs, SmiDev, k);
        int p = uf_find(pix, k);
        int up = pix_sw[p] >= 0 ? pix_sw[p] : pxb_sw[uf_find(pxb, k)];
        graph_add_duplex(g, d->dev, up >= 0 ? up : cpu_of[k], CS_LINK_PCIE, 1, options->pcie_Bps,
                         pcie_source);
    }
    /* Sockets, pairwise. */
    g_autofree char *sys_source = g_strdup_printf(
        "--sys-bandwidth %.15g GB/s (nvidia-smi gives no socket rate)", options->sys_Bps / 1e9);
    for (int a = 0; ok && a < n; a++) {
        for (int b = a + 1; b < n; b++) {
            if (uf_find(sock, a) == a && uf_find(sock, b) == b)
                graph_add_duplex(g, cpu_of[a], cpu_of[b], CS_LINK_PCIE, 1, options->sys_Bps,
                                 sys_source);
        }
    }
    /* NVLinks. */
    g_autofree char *nv_source
        = g_strdup_printf("NV# of nvidia-smi topo -m x --nvlink-bandwidth %.15g GB/s per link",
                          options->nvlink_lane_Bps / 1e9);
    int first_nv = -1;
    gboolean all_same = TRUE;
    int n_gpus = 0;
    for (int a = 0; ok && a < n; a++) {
        const SmiDev *da = &g_array_index(devs, SmiDev, a);
        n_gpus += da->gpu;
        int to_switch = 0;
        for (int b = 0; b < n; b++) {
            if (!da->gpu || !g_array_index(devs, SmiDev, b).gpu || a == b)
                continue;
            int count = rel[a * n + b] == REL_NV ? nv[a * n + b] : 0;
            if (first_nv < 0)
                first_nv = count;
            all_same = all_same && count == first_nv;
            if (count == 0)
                continue;
            if (options->nvswitch)
                to_switch = MAX(to_switch, count);
            else
                graph_add_link(g, da->dev, g_array_index(devs, SmiDev, b).dev, CS_LINK_NVLINK,
                               count, options->nvlink_lane_Bps, g_strdup(nv_source));
        }
        if (to_switch > 0) {
            if (g->nvswitch < 0)
                g->nvswitch = graph_add_dev(g, CS_DEVICE_NVSWITCH, NULL,
                                            g_strdup("NVSwitch (--nvswitch)"), NULL);
            graph_add_duplex(g, da->dev, g->nvswitch, CS_LINK_NVSWITCH, to_switch,
                             options->nvlink_lane_Bps, nv_source);
        }
    }
    if (ok && !options->nvswitch && any_nv && all_same && n_gpus > 2)
        graph_note(g, 0,
                   "every GPU pair shows NV%d: a full mesh of direct links or one NVSwitch "
                   "(the matrix does not say which); imported as direct links, give --nvswitch "
                   "for a switch",
                   first_nv);
    if (ok)
        g_string_append(g->about,
                        "nvidia-smi gives the NVLink counts and the PCIe relations (PIX, PXB, "
                        "PHB, NODE, SYS); the bandwidths are the import's options (each link's "
                        "source says which); alpha is 0 on every link (no latency in the "
                        "matrix); NIC port speeds are not in it.");
    for (int k = 0; k < n; k++)
        g_free(g_array_index(devs, SmiDev, k).label);
    return ok;
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
    gboolean ok = format == CS_TOPO_IMPORT_NCCL_XML ? import_xml(&g, text, len, error)
                                                    : import_smi(&g, text, len, options, error);
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
