// SPDX-License-Identifier: MIT
/* The NCCL topology XML reader of `collsim topo import`: it builds the graph
 * (topo_import-private.h) that topo_import.c writes out.
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
 * imported link has alpha 0. Unknown elements and attributes are reported, not guessed. */
#include <string.h>

#include "topo/topo_import-private.h"

/* NCCL 2.30.7 src/graph/topo.h: LOC_BW, the bandwidth of a link NCCL does not limit (GB/s). */
#define NCCL_LOC_GBPS 5000.0
/* Elements read from one XML file: 16 times NCCL's own limit (NCCL_TOPO_XML_MAX_NODES = 256,
 * src/graph/topo.h), so a hostile file cannot make the import slow. */
#define MAX_XML_ELEMENTS 4096

static int
find_busid(Graph *g, const char *busid, CsDeviceKind kind)
{
    g_autofree char *low = g_ascii_strdown(busid, -1);
    for (guint i = 0; i < g->devs->len; i++) {
        const Dev *d = cs_topo_import_dev(g, (int)i);
        if (d->kind == kind && d->busid != NULL && strcmp(d->busid, low) == 0)
            return (int)i;
    }
    return -1;
}

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
            cs_topo_import_note(st->g, current_line(st),
                                "<%s>: unknown attribute %s=\"%s\" (ignored)", element, names[i],
                                values[i]);
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
    f->dev = cs_topo_import_add_dev(st->g, CS_DEVICE_CPU, NULL, model_text, source);
    Dev *d = cs_topo_import_dev(st->g, f->dev);
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
        cs_topo_import_note(
            st->g, line,
            "<pci busid=\"%s\">: link_speed=\"%s\" is no PCIe rate NCCL knows: read as "
            "8 GT/s, as NCCL does (kvDictPciGen's fallback)",
            busid, speed);
    gint64 lanes = width == 0 ? 16 : width;
    if (width == 0)
        cs_topo_import_note(
            st->g, line, "<pci busid=\"%s\">: link_width=\"0\" read as x16, as NCCL does", busid);
    double GBps = (double)lanes * rate / 80.0;
    g_autofree char *source
        = g_strdup_printf("pci %s link_speed=\"%s\" link_width=\"%s\": %" G_GINT64_FORMAT
                          " lanes x %d x 100 Mb/s = %.15g GB/s (NCCL topo.cc ncclTopoAddPci)",
                          busid, speed, width_text, lanes, rate, GBps);

    f->busid = g_ascii_strdown(busid, -1);
    f->gpu_class = g_str_has_prefix(klass, "0x03");
    f->nic_class = g_str_has_prefix(klass, "0x02");
    if (g_str_has_prefix(klass, "0x068000")) {
        cs_topo_import_note(
            st->g, line,
            "<pci busid=\"%s\" class=\"%s\">: an NVSwitch's PCI function; NCCL makes no "
            "node of it (the NVLinks that name the switch make it)",
            busid, klass);
        f->kind = EL_SKIP;
        return TRUE;
    }
    if (g_str_has_prefix(klass, "0x068001")) {
        cs_topo_import_note(st->g, line,
                            "<pci busid=\"%s\" class=\"%s\">: a CPU's PCI function; left out",
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
    f->dev = cs_topo_import_add_dev(st->g, kind, busid, model, dsource);
    Dev *d = cs_topo_import_dev(st->g, f->dev);
    d->cpu = parent->cpu;
    f->cpu = parent->cpu;
    if (kind == CS_DEVICE_PCIE_SWITCH && g_str_has_prefix(klass, "0x0604") && width > 0
        && width < 4)
        st->vm_bridges++;
    cs_topo_import_add_duplex(st->g, f->dev, parent->dev, CS_LINK_PCIE, 1, GBps * 1e9, source);
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
        cs_topo_import_note(
            st->g, current_line(st),
            "a second <gpu> in <pci busid=\"%s\"> (MLOPart partitions or ranks sharing "
            "a GPU): imported as one GPU",
            parent->busid);
        f->kind = EL_SKIP;
        return TRUE;
    }
    if (!parent->gpu_class) {
        cs_topo_import_note(st->g, current_line(st),
                            "<gpu> in <pci busid=\"%s\">, which is no GPU's class: left out",
                            parent->busid);
        f->kind = EL_SKIP;
        return TRUE;
    }
    parent->gpus = TRUE;
    f->dev = parent->dev;
    f->cpu = parent->cpu;
    f->sm = (int)sm;
    Dev *d = cs_topo_import_dev(st->g, f->dev);
    d->order = dev >= 0 ? (int)dev : G_MAXINT;
    d->sm = (int)sm;
    char *source = g_strdup_printf("%s, CUDA device %" G_GINT64_FORMAT ", sm %" G_GINT64_FORMAT,
                                   d->source, dev, sm);
    g_free(d->source);
    d->source = source;
    if (sm == 0)
        cs_topo_import_note(
            st->g, current_line(st),
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
    cs_topo_import_add_duplex(st->g, parent->dev, parent->cpu, CS_LINK_NVLINK, (int)count,
                              (double)bw * 1e6, source);
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
        cs_topo_import_note(st->g, line,
                            "<net name=\"%s\"> has no dev: NCCL leaves it out, and so does "
                            "the import",
                            name != NULL ? name : "?");
        return TRUE;
    }
    if (is_net == 0) {
        cs_topo_import_note(
            st->g, line,
            "<net name=\"%s\" net=\"0\">: no network device for collectives (GIN or RMA "
            "only): left out",
            name != NULL ? name : "?");
        return TRUE;
    }
    const char *speed_text = attr(names, values, "speed");
    if (speed <= 0) {
        cs_topo_import_note(st->g, line,
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
        cs_topo_import_note(
            st->g, line,
            "<net name=\"%s\" latency=\"%s\">: the latency its plugin reports to NCCL's "
            "tuning; not a link's alpha: give it to a template's transport (\"reported\": "
            "\"%g us\", topologies/README.md)",
            name != NULL ? name : "?", latency, latency_us);
    const char *gdr = attr(names, values, "gdr");
    if (gdr != NULL && strcmp(gdr, "0") == 0)
        cs_topo_import_note(
            st->g, line,
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
        cs_topo_import_note(st->g, f.line, "%s <%s>%s: left out, with everything inside it",
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
            Dev *d = cs_topo_import_dev(g, dev);
            d->kind = CS_DEVICE_NIC;
            char *full = g_strdup_printf("%s; %s", source, d->source);
            g_free(source);
            g_free(d->model);
            d->model = model;
            g_free(d->source);
            d->source = full;
        }
        else {
            dev = cs_topo_import_add_dev(g, CS_DEVICE_NIC, NULL, model, source);
            int hub = f->nic_pci >= 0 ? f->nic_pci : f->cpu;
            cs_topo_import_dev(g, dev)->cpu = f->cpu;
            if (hub >= 0)
                cs_topo_import_add_duplex(
                    g, dev, hub, CS_LINK_PCIE, 1, NCCL_LOC_GBPS * 1e9,
                    f->nic_pci >= 0 ? "a port of a multi-port NIC: NCCL joins NIC and NET at "
                                      "the port's speed; no limit here (LOC_BW 5000 GB/s), the "
                                      "NIC's PCIe link is the shared one"
                                    : "a NIC under a CPU: NCCL joins them at LOC_BW "
                                      "(5000 GB/s, topo.cc ncclTopoAddCpu)");
        }
        Dev *d = cs_topo_import_dev(g, dev);
        d->order = n->dev;
        d->port_Bps = n->Bps;
        g_free(n->name);
        g_free(n->speed);
    }
    if (f->nets->len == 0 && f->nic_pci >= 0)
        cs_topo_import_note(g, f->line,
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
    Dev *d = cs_topo_import_dev(st->g, f->dev);
    if (f->gpu_class && !f->gpus) {
        st->gpu_no_element++;
        cs_topo_import_note(
            st->g, f->line,
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
        cs_topo_import_note(
            st->g, f->line,
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
            cs_topo_import_note(st->g, line, "text between elements (ignored)");
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
            p->count, p->tclass, p->lane_Bps / 1e9, cs_topo_import_dev(g, p->gpu)->sm);
        if (g_str_has_prefix(p->tclass, "0x03")) {
            int peer = find_busid(g, p->target, CS_DEVICE_GPU);
            if (peer == p->gpu)
                cs_topo_import_note(g, p->line, "<nvlink target=\"%s\">: its own GPU; left out",
                                    p->target);
            else if (peer < 0)
                cs_topo_import_note(
                    g, p->line,
                    "<nvlink target=\"%s\">: no GPU of this file has that bus id; left "
                    "out, as NCCL leaves it",
                    p->target);
            else
                cs_topo_import_add_link(g, p->gpu, peer, CS_LINK_NVLINK, p->count, p->lane_Bps,
                                        g_strdup(source));
        }
        else if (g_str_has_prefix(p->tclass, "0x068001")) {
            int cpu = cs_topo_import_dev(g, p->gpu)->cpu;
            if (cpu >= 0)
                cs_topo_import_add_duplex(g, p->gpu, cpu, CS_LINK_NVLINK, p->count, p->lane_Bps,
                                          source);
        }
        else {
            if (!g_str_has_prefix(p->tclass, "0x068000"))
                cs_topo_import_note(
                    g, p->line,
                    "<nvlink tclass=\"%s\">: neither a GPU nor a CPU; NCCL takes it for "
                    "an NVSwitch, and so does the import",
                    p->tclass);
            if (g->nvswitch < 0) {
                g->nvswitch = cs_topo_import_add_dev(
                    g, CS_DEVICE_NVSWITCH, NULL,
                    g_strdup("NVSwitch fabric (every NVLink to a switch, as NCCL's one NVS node)"),
                    NULL);
            }
            cs_topo_import_add_duplex(g, p->gpu, g->nvswitch, CS_LINK_NVSWITCH, p->count,
                                      p->lane_Bps, source);
        }
    }
    for (guint i = 0; i < st->pcilinks->len; i++) {
        PendingLink *p = &g_array_index(st->pcilinks, PendingLink, i);
        int peer = find_busid(g, p->target, CS_DEVICE_PCIE_SWITCH);
        if (peer < 0 || p->gpu < 0)
            cs_topo_import_note(g, p->line,
                                "<pcilink target=\"%s\">: no PCI switch has that bus id; left "
                                "out, as NCCL leaves it",
                                p->target);
        else
            cs_topo_import_add_link(
                g, p->gpu, peer, CS_LINK_PCIE, 1, p->lane_Bps,
                g_strdup("pcilink between PCI switches: NCCL's LOC_BW, 5000 GB/s "
                         "(topo.cc ncclTopoAddPciLinks)"));
    }
    /* Every pair of sockets, as ncclTopoConnectCpus joins them. */
    for (guint a = 0; a < g->devs->len; a++) {
        for (guint b = 0; b < g->devs->len; b++) {
            if (a == b || cs_topo_import_dev(g, (int)a)->kind != CS_DEVICE_CPU
                || cs_topo_import_dev(g, (int)b)->kind != CS_DEVICE_CPU)
                continue;
            cs_topo_import_add_link(g, (int)a, (int)b, CS_LINK_PCIE, 1,
                                    cs_topo_import_dev(g, (int)a)->port_Bps,
                                    g_strdup(cs_topo_import_dev(g, (int)a)->source));
        }
    }
    for (guint a = 0; a < g->devs->len; a++)
        if (cs_topo_import_dev(g, (int)a)->kind == CS_DEVICE_CPU)
            cs_topo_import_dev(g, (int)a)->port_Bps = 0;
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

gboolean
cs_topo_import_xml_read(Graph *g, const char *text, gsize len, GError **error)
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
