// SPDX-License-Identifier: MIT
/* The `nvidia-smi topo -m` reader of `collsim topo import`: it builds the graph
 * (topo_import-private.h) that topo_import.c writes out.
 *
 * `nvidia-smi topo -m` gives the GPU and NIC matrix: NV# (a bonded set of # NVLinks), PIX (at
 * most one PCIe bridge), PXB (several bridges), PHB (through the host bridge), NODE (between
 * host bridges of one NUMA node), SYS (across the socket interconnect), each GPU's NUMA
 * affinity and the NIC legend; no bandwidth, so the caller gives the NVLink lane, PCIe and
 * socket rates. */
#include <string.h>

#include "base/union_find.h"
#include "topo/topo_import-private.h"

/* Devices in one nvidia-smi matrix (a node has tens). */
#define MAX_SMI_DEVICES 512

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
gboolean
cs_topo_import_smi_read(Graph *g, const char *text, gsize len, const CsTopoImportOptions *options,
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
        cs_topo_import_note(g, 0, "%d line%s before the matrix (line %d) skipped", skipped,
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
                cs_topo_import_note(g, i + 1, "not a NIC of the matrix: \"%s\" (ignored)", t);
            continue;
        }
        int row = -1;
        for (int k = 0; k < n && row < 0; k++)
            if (strcmp(g_array_index(devs, SmiDev, k).label, w->pdata[0]) == 0)
                row = k;
        if (row < 0) {
            cs_topo_import_note(g, i + 1, "unknown line \"%s\" (ignored)", t);
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
                cs_topo_import_note(
                    g, g_array_index(devs, SmiDev, a).row,
                    "%s to %s and back differ; each row's cells are taken for that row",
                    g_array_index(devs, SmiDev, a).label, g_array_index(devs, SmiDev, b).label);
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
                cs_uf_union(sock, a, b);
        }
    }
    /* GPUs with no NUMA figure and only NVLinks to the rest: one socket with the others. */
    int n_sockets = 0;
    g_autofree int *cpu_of = g_new(int, MAX(n, 1));
    for (int k = 0; ok && k < n; k++) {
        int root = cs_uf_find(sock, k);
        if (root == k) {
            const SmiDev *d = &g_array_index(devs, SmiDev, k);
            char *model = d->numa >= 0 ? g_strdup_printf("CPU socket, NUMA node %d", d->numa)
                                       : g_strdup("CPU socket (NUMA node not in the matrix)");
            cpu_of[k] = cs_topo_import_add_dev(g, CS_DEVICE_CPU, NULL, model, NULL);
            cs_topo_import_dev(g, cpu_of[k])->order = d->numa >= 0 ? d->numa : G_MAXINT;
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
        int root = cs_uf_find(sock, k);
        if (root != k)
            cpu_of[k] = cpu_of[root];
    }

    /* Devices. */
    for (int k = 0; ok && k < n; k++) {
        SmiDev *d = &g_array_index(devs, SmiDev, k);
        d->dev
            = cs_topo_import_add_dev(g, d->gpu ? CS_DEVICE_GPU : CS_DEVICE_NIC, NULL,
                                     d->gpu ? NULL : g_strdup("NIC, port speed not in the matrix"),
                                     g_strdup_printf("%s of nvidia-smi topo -m", d->label));
        cs_topo_import_dev(g, d->dev)->cpu = cpu_of[k];
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
                cs_uf_union(pix, a, b);
                cs_uf_union(pxb, a, b);
            }
            if (rel[a * n + b] == REL_PXB)
                cs_uf_union(pxb, a, b);
        }
    }
    g_autofree int *pix_sw = g_new(int, MAX(n, 1));
    g_autofree int *pxb_sw = g_new(int, MAX(n, 1));
    for (int k = 0; ok && k < n; k++) {
        pix_sw[k] = pxb_sw[k] = -1;
        int members_pix = 0, groups_pxb = 0;
        for (int j = 0; j < n; j++) {
            members_pix += cs_uf_find(pix, j) == k;
            groups_pxb += cs_uf_find(pxb, j) == k && cs_uf_find(pix, j) == j;
        }
        if (cs_uf_find(pxb, k) == k && groups_pxb > 1) {
            pxb_sw[k] = cs_topo_import_add_dev(g, CS_DEVICE_PCIE_SWITCH, NULL,
                                               g_strdup("PCIe switch above switches (PXB)"), NULL);
            cs_topo_import_add_duplex(g, pxb_sw[k], cpu_of[k], CS_LINK_PCIE, 1, options->pcie_Bps,
                                      pcie_source);
        }
        if (cs_uf_find(pix, k) == k && members_pix > 1)
            pix_sw[k] = cs_topo_import_add_dev(g, CS_DEVICE_PCIE_SWITCH, NULL,
                                               g_strdup("PCIe switch (PIX)"), NULL);
    }
    for (int k = 0; ok && k < n; k++) {
        int p = cs_uf_find(pix, k);
        if (pix_sw[p] < 0)
            continue;
        if (p == k) {
            int above = pxb_sw[cs_uf_find(pxb, k)];
            cs_topo_import_add_duplex(g, pix_sw[p], above >= 0 ? above : cpu_of[k], CS_LINK_PCIE, 1,
                                      options->pcie_Bps, pcie_source);
        }
    }
    for (int k = 0; ok && k < n; k++) {
        const SmiDev *d = &g_array_index(devs, SmiDev, k);
        int p = cs_uf_find(pix, k);
        int up = pix_sw[p] >= 0 ? pix_sw[p] : pxb_sw[cs_uf_find(pxb, k)];
        cs_topo_import_add_duplex(g, d->dev, up >= 0 ? up : cpu_of[k], CS_LINK_PCIE, 1,
                                  options->pcie_Bps, pcie_source);
    }
    /* Sockets, pairwise. */
    g_autofree char *sys_source = g_strdup_printf(
        "--sys-bandwidth %.15g GB/s (nvidia-smi gives no socket rate)", options->sys_Bps / 1e9);
    for (int a = 0; ok && a < n; a++) {
        for (int b = a + 1; b < n; b++) {
            if (cs_uf_find(sock, a) == a && cs_uf_find(sock, b) == b)
                cs_topo_import_add_duplex(g, cpu_of[a], cpu_of[b], CS_LINK_PCIE, 1,
                                          options->sys_Bps, sys_source);
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
                cs_topo_import_add_link(g, da->dev, g_array_index(devs, SmiDev, b).dev,
                                        CS_LINK_NVLINK, count, options->nvlink_lane_Bps,
                                        g_strdup(nv_source));
        }
        if (to_switch > 0) {
            if (g->nvswitch < 0)
                g->nvswitch = cs_topo_import_add_dev(g, CS_DEVICE_NVSWITCH, NULL,
                                                     g_strdup("NVSwitch (--nvswitch)"), NULL);
            cs_topo_import_add_duplex(g, da->dev, g->nvswitch, CS_LINK_NVSWITCH, to_switch,
                                      options->nvlink_lane_Bps, nv_source);
        }
    }
    if (ok && !options->nvswitch && any_nv && all_same && n_gpus > 2)
        cs_topo_import_note(
            g, 0,
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
