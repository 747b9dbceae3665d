// SPDX-License-Identifier: MIT
/* Tests of `collsim topo import` (src/topo/topo_import.c) on real published topologies: NCCL's
 * XML dump of an IBM Cloud 8 x H100 VM, the NCCL_TOPO_FILEs Azure ships for NDv4, NDv5 and
 * NCv4 and aws-ofi-nccl for p4d.24xlarge, and `nvidia-smi topo -m` of an 8 x H100 server (each
 * file's header names its source). Each import is loaded back (the library, `topo check`,
 * `topo show`, a cluster template naming it), and its GPUs, NICs, NVLink and PCIe links and
 * bandwidths are checked against the file's attributes, read as NCCL 2.30.7 reads them
 * (src/graph/topo.cc: PCIe width x kvDictPciGen / 80 GB/s, NET speed / 8000 GB/s; topo.h:
 * NVLink per link by sm). Malformed input is one line "FILE:LINE:COLUMN: ...", exit 2, and
 * the output file is left as it was. */
#include "config.h"

#include <math.h>
#include <string.h>

#include <glib/gstdio.h>

#include "test-util.h"
#include "topo/topo_import.h"

/* ---- Helpers ---- */

static char *
data_path(const char *file)
{
    return g_test_build_filename(G_TEST_DIST, "data", "topo-import", file, NULL);
}

/* The GPU costs `--gpu dgx-h100x8` gives. */
static CsTopoImportOptions
h100_options(void)
{
    g_autoptr(CsTopo) like = cs_test_load_topo("dgx-h100x8");
    CsTopoImportOptions o = { 0 };
    o.gpu = *cs_topo_rank_gpu(like, 0);
    o.gpu_model = "H100 SXM5 80GB";
    o.gpu_source = "test";
    return o;
}

typedef struct {
    CsTopo *topo;
    GPtrArray *notes;
    CsTopoImportSummary sum;
    char *json;
} Imported;

static void
imported_clear(Imported *im)
{
    g_clear_pointer(&im->topo, cs_topo_unref);
    g_clear_pointer(&im->notes, g_ptr_array_unref);
    g_clear_pointer(&im->json, g_free);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(Imported, imported_clear)

/* Imports tests/data/topo-import/@file with @options and loads the result. */
static Imported
import_ok(const char *file, const CsTopoImportOptions *options)
{
    g_autofree char *path = data_path(file);
    g_autoptr(GError) error = NULL;
    Imported im = { 0 };
    im.notes = g_ptr_array_new_with_free_func(g_free);
    im.json = cs_topo_import_file(path, options, im.notes, &im.sum, &error);
    g_assert_no_error(error);
    g_assert_nonnull(im.json);
    im.topo = cs_topo_load_data(im.json, file, &error);
    g_assert_no_error(error);
    g_assert_nonnull(im.topo);
    return im;
}

/* How many directed links of @kind leave a device of kind @from for one of kind @to, and the
 * usable bandwidth they all have (-1 when they differ). */
static int
count_links(const CsTopo *topo, CsLinkKind kind, CsDeviceKind from, CsDeviceKind to, double *bw)
{
    int n = 0;
    *bw = 0;
    for (int i = 0; i < cs_topo_n_links(topo); i++) {
        const CsLink *l = cs_topo_link(topo, i);
        if (l->kind != kind || cs_topo_device(topo, l->src)->kind != from
            || cs_topo_device(topo, l->dst)->kind != to)
            continue;
        *bw = n == 0 || *bw == l->bw_Bps ? l->bw_Bps : -1;
        n++;
    }
    return n;
}

static int
count_devices(const CsTopo *topo, CsDeviceKind kind)
{
    int n = 0;
    for (int i = 0; i < cs_topo_n_devices(topo); i++)
        n += cs_topo_device(topo, i)->kind == kind;
    return n;
}

/* The device @name's neighbour of kind @kind (the first), or -1. */
static int
neighbour(const CsTopo *topo, const char *name, CsDeviceKind kind)
{
    int d = cs_topo_find_device(topo, name);
    g_assert_cmpint(d, >=, 0);
    for (int i = 0; i < cs_topo_n_links(topo); i++) {
        const CsLink *l = cs_topo_link(topo, i);
        if (l->src == d && cs_topo_device(topo, l->dst)->kind == kind)
            return l->dst;
    }
    return -1;
}

static int
count_notes(GPtrArray *notes, const char *part)
{
    int n = 0;
    for (guint i = 0; i < notes->len; i++)
        n += strstr(notes->pdata[i], part) != NULL;
    return n;
}

/* ---- NCCL's XML dump (NCCL_TOPO_DUMP_FILE) ---- */

static void
test_ibm_h100_dump(void)
{
    g_test_summary("IBM Cloud gx3d H100 VM, NCCL's dump: 8 GPUs on one NVSwitch (NV 5+5+4+4), "
                   "8 NICs of 200000 Mb/s, each GPU and NIC pair behind a x1 Gen1 bridge");
    CsTopoImportOptions o = h100_options();
    g_auto(Imported) im = import_ok("ibm-gx3d-h100x8.xml", &o);
    double bw = 0;

    g_assert_cmpint(cs_topo_n_ranks(im.topo), ==, 8);
    g_assert_cmpint(count_devices(im.topo, CS_DEVICE_GPU), ==, 8);
    g_assert_cmpint(count_devices(im.topo, CS_DEVICE_NIC), ==, 8);
    g_assert_cmpint(count_devices(im.topo, CS_DEVICE_NVSWITCH), ==, 1);
    g_assert_cmpint(count_devices(im.topo, CS_DEVICE_CPU), ==, 2);
    g_assert_cmpint(count_devices(im.topo, CS_DEVICE_PCIE_SWITCH), ==, 8);
    /* Each GPU: <nvlink count> 5 + 5 + 4 + 4 = 18 links to NVSwitch targets (tclass
     * 0x068000), sm 90: 18 x 20.6 GB/s (SM90_NVLINK_BW) = 370.8 GB/s each way. */
    g_assert_cmpint(count_links(im.topo, CS_LINK_NVSWITCH, CS_DEVICE_GPU, CS_DEVICE_NVSWITCH, &bw),
                    ==, 8);
    g_assert_cmpfloat_with_epsilon(bw, 370.8e9, 1e3);
    g_assert_cmpint(count_links(im.topo, CS_LINK_NVSWITCH, CS_DEVICE_NVSWITCH, CS_DEVICE_GPU, &bw),
                    ==, 8);
    for (int i = 0; i < cs_topo_n_links(im.topo); i++)
        if (cs_topo_link(im.topo, i)->kind == CS_LINK_NVSWITCH)
            g_assert_cmpint(cs_topo_link(im.topo, i)->count, ==, 18);
    /* GPU and NIC: link_speed "32.0 GT/s PCIe", link_width "0" (read as 16): 16 x 240 / 80 =
     * 48 GB/s. The bridges above them: "2.5 GT/s PCIe" x1: 1 x 15 / 80 = 0.1875 GB/s. */
    g_assert_cmpint(count_links(im.topo, CS_LINK_PCIE, CS_DEVICE_GPU, CS_DEVICE_PCIE_SWITCH, &bw),
                    ==, 8);
    g_assert_cmpfloat(bw, ==, 48e9);
    g_assert_cmpint(count_links(im.topo, CS_LINK_PCIE, CS_DEVICE_NIC, CS_DEVICE_PCIE_SWITCH, &bw),
                    ==, 8);
    g_assert_cmpfloat(bw, ==, 48e9);
    g_assert_cmpint(count_links(im.topo, CS_LINK_PCIE, CS_DEVICE_PCIE_SWITCH, CS_DEVICE_CPU, &bw),
                    ==, 8);
    g_assert_cmpfloat(bw, ==, 0.1875e9);
    /* Sockets: GenuineIntel family 6 model 143 (0x8F): SRP_QPI_BW, 22 GB/s. */
    g_assert_cmpint(count_links(im.topo, CS_LINK_PCIE, CS_DEVICE_CPU, CS_DEVICE_CPU, &bw), ==, 2);
    g_assert_cmpfloat(bw, ==, 22e9);
    g_assert_cmpint(im.sum.n_nvlink_links, ==, 16);
    g_assert_cmpint(im.sum.n_pcie_links, ==, 8 * 2 * 3 + 2);
    /* <net speed="200000">: 200000 / 8000 = 25 GB/s, every port. */
    g_assert_cmpfloat(im.sum.nic_Bps_min, ==, 25e9);
    g_assert_cmpfloat(im.sum.nic_Bps_max, ==, 25e9);
    /* NICs by NCCL's NET dev: nic0 is mlx5_0 (busid 0000:e9:00.0), behind the switch of the
     * GPU with CUDA device 7 (0000:ea:00.0); nic7 (mlx5_7) shares GPU 0's. */
    g_assert_cmpint(neighbour(im.topo, "nic0", CS_DEVICE_PCIE_SWITCH), ==,
                    neighbour(im.topo, "gpu7", CS_DEVICE_PCIE_SWITCH));
    g_assert_cmpint(neighbour(im.topo, "nic7", CS_DEVICE_PCIE_SWITCH), ==,
                    neighbour(im.topo, "gpu0", CS_DEVICE_PCIE_SWITCH));
    g_assert_cmpint(neighbour(im.topo, "nic0", CS_DEVICE_PCIE_SWITCH), !=,
                    neighbour(im.topo, "gpu0", CS_DEVICE_PCIE_SWITCH));
    /* GPUs reach each other through the switch: 2 hops at 370.8 GB/s. */
    const CsRoute *r = cs_topo_route(im.topo, 0, 5);
    g_assert_cmpint(r->n_links, ==, 2);
    g_assert_cmpfloat_with_epsilon(r->bw_Bps, 370.8e9, 1e3);
    g_assert_cmpfloat(r->alpha_s, ==, 0.0);
    /* What NCCL reads by rule is said, once per PCI device with link_width="0"; nothing
     * unknown. */
    g_assert_cmpint(count_notes(im.notes, "link_width=\"0\" read as x16"), ==, 16);
    g_assert_cmpint(count_notes(im.notes, "unknown"), ==, 0);
    g_assert_cmpint((int)im.notes->len, ==, 16);
}

static void
test_ibm_h100_template(void)
{
    g_test_summary("The imported node in a 2-node template: each GPU's channels use the NIC "
                   "behind its own PCIe switch, 25 GB/s, limited by the NIC and not the PCIe");
    CsTopoImportOptions o = h100_options();
    g_auto(Imported) im = import_ok("ibm-gx3d-h100x8.xml", &o);
    g_autoptr(GError) error = NULL;
    g_autofree char *dir = g_dir_make_tmp("collsim-import-XXXXXX", &error);
    g_assert_no_error(error);
    g_autofree char *node = g_build_filename(dir, "gx3d.json", NULL);
    g_autofree char *tmpl = g_build_filename(dir, "gx3d-2n.json", NULL);
    g_assert_true(g_file_set_contents(node, im.json, -1, NULL));
    g_assert_true(g_file_set_contents(
        tmpl,
        "{\"name\": \"gx3d-2n\", \"nodes\": 2, \"node\": \"gx3d.json\", \"network\": {"
        "\"kind\": \"roce\", \"nic_bandwidth\": \"200 Gb/s\", \"nic_alpha\": \"0.3 us\", "
        "\"switch_alpha\": \"0.13 us\", \"rail_optimized\": true}}",
        -1, NULL));
    g_autoptr(CsTopo) topo = cs_topo_load(tmpl, &error);
    g_assert_no_error(error);
    g_assert_cmpint(cs_topo_n_ranks(topo), ==, 16);
    g_assert_cmpint(cs_topo_n_nodes(topo), ==, 2);
    CsRankNics nics = cs_topo_rank_nics(topo, 7);
    g_assert_cmpint(nics.used, ==, 1);
    g_assert_cmpstr(cs_topo_device(topo, nics.device[0])->name, ==, "n0/nic0");
    nics = cs_topo_rank_nics(topo, 0);
    g_assert_cmpstr(cs_topo_device(topo, nics.device[0])->name, ==, "n0/nic7");
    g_assert_cmpfloat(cs_topo_injection_bw(topo, 0, CS_LINK_CLASS_NET), ==, 25e9);

    /* The same through the CLI: check, and show's line of NICs. */
    CsTestRun run = cs_test_run_collsim("topo", (const char *[]){ "check", tmpl, NULL });
    g_assert_cmpint(run.status, ==, 0);
    g_assert_nonnull(strstr(run.out, ": ok (16 GPUs,"));
    cs_test_run_clear(&run);
    run = cs_test_run_collsim("topo", (const char *[]){ "show", tmpl, NULL });
    g_assert_cmpint(run.status, ==, 0);
    g_assert_nonnull(strstr(run.out, "network per rank: 1 NIC used by its channels, each shared "
                                     "by 1 rank: 25.0 GB/s out of the node"));
    cs_test_run_clear(&run);
    g_remove(tmpl);
    g_remove(node);
    g_rmdir(dir);
}

/* ---- NCCL_TOPO_FILEs that cloud images ship ---- */

typedef struct {
    const char *file;
    int gpus;
    int nics;
    int cpus;
    int switches;
    double pcie_GBps;   /* every GPU and NIC link */
    double bridge_GBps; /* switch to CPU */
    double sys_GBps;    /* CPU to CPU */
    const char *why;
} TopoFileCase;

static const TopoFileCase topo_files[] = {
    { "azure-ndv4-topo.xml", 8, 8, 4, 4, 24, 24, 16,
      "NDv4 (8 x A100): 16 GT/s x16 = 16 x 120 / 80 = 24 GB/s; AuthenticAMD: AMD_BW 16 GB/s" },
    { "azure-ndv5-topo.xml", 8, 8, 2, 8, 48, 48, 22,
      "NDv5 (8 x H100): 32.0 GT/s x16 = 16 x 240 / 80 = 48 GB/s; Intel 6/143: SRP_QPI_BW 22" },
    { "aws-p4d-24xl-topo.xml", 8, 4, 2, 4, 12, 12, 10,
      "p4d.24xlarge (8 x A100, 4 EFA): 8 GT/s x16 = 16 x 60 / 80 = 12 GB/s; Intel 6/85: "
      "SKL_QPI_BW 10" },
};

static void
test_topo_file(gconstpointer data)
{
    const TopoFileCase *c = data;
    g_test_summary(c->why);
    CsTopoImportOptions o = h100_options();
    g_auto(Imported) im = import_ok(c->file, &o);
    double bw = 0;

    g_assert_cmpint(cs_topo_n_ranks(im.topo), ==, c->gpus);
    g_assert_cmpint(count_devices(im.topo, CS_DEVICE_GPU), ==, c->gpus);
    g_assert_cmpint(count_devices(im.topo, CS_DEVICE_NIC), ==, c->nics);
    g_assert_cmpint(count_devices(im.topo, CS_DEVICE_CPU), ==, c->cpus);
    g_assert_cmpint(count_devices(im.topo, CS_DEVICE_PCIE_SWITCH), ==, c->switches);
    g_assert_cmpint(count_devices(im.topo, CS_DEVICE_NVSWITCH), ==, 0);
    /* No <gpu>, so no NVLink: the file says none, and the import adds none. */
    g_assert_cmpint(im.sum.n_nvlink_links, ==, 0);
    g_assert_cmpint(count_links(im.topo, CS_LINK_PCIE, CS_DEVICE_GPU, CS_DEVICE_PCIE_SWITCH, &bw),
                    ==, c->gpus);
    g_assert_cmpfloat(bw, ==, c->pcie_GBps * 1e9);
    g_assert_cmpint(count_links(im.topo, CS_LINK_PCIE, CS_DEVICE_NIC, CS_DEVICE_PCIE_SWITCH, &bw),
                    ==, c->nics);
    g_assert_cmpfloat(bw, ==, c->pcie_GBps * 1e9);
    g_assert_cmpint(count_links(im.topo, CS_LINK_PCIE, CS_DEVICE_PCIE_SWITCH, CS_DEVICE_CPU, &bw),
                    ==, c->switches);
    g_assert_cmpfloat(bw, ==, c->bridge_GBps * 1e9);
    g_assert_cmpint(count_links(im.topo, CS_LINK_PCIE, CS_DEVICE_CPU, CS_DEVICE_CPU, &bw), ==,
                    c->cpus * (c->cpus - 1));
    g_assert_cmpfloat(bw, ==, c->sys_GBps * 1e9);
    g_assert_cmpint(im.sum.n_pcie_links, ==,
                    2 * (c->gpus + c->nics + c->switches) + c->cpus * (c->cpus - 1));
    /* No port speed in the file: none is made up. */
    g_assert_cmpfloat(im.sum.nic_Bps_max, ==, 0.0);
    /* One line for each GPU without its <gpu> and each NIC without its <nic>, and no more. */
    g_assert_cmpint(count_notes(im.notes, "without a <gpu> element"), ==, c->gpus);
    g_assert_cmpint(count_notes(im.notes, "without a <nic> element"), ==, c->nics);
    g_assert_cmpint((int)im.notes->len, ==, c->gpus + c->nics);
}

static void
test_ncv4_nic_under_cpu(void)
{
    g_test_summary("Azure NCv4: an empty link_speed reads as NCCL's fallback (8 GT/s), a NIC "
                   "under a <cpu> joins it at LOC_BW, an NVLink to its own GPU is left out");
    CsTopoImportOptions o = h100_options();
    g_auto(Imported) im = import_ok("azure-ncv4-topo.xml", &o);
    double bw = 0;

    g_assert_cmpint(cs_topo_n_ranks(im.topo), ==, 4);
    g_assert_cmpint(count_devices(im.topo, CS_DEVICE_NIC), ==, 1);
    /* link_speed="" link_width="0": 16 x 60 / 80 = 12 GB/s, GPU straight to its CPU. */
    g_assert_cmpint(count_links(im.topo, CS_LINK_PCIE, CS_DEVICE_GPU, CS_DEVICE_CPU, &bw), ==, 4);
    g_assert_cmpfloat(bw, ==, 12e9);
    /* eth0 speed="100000": 12.5 GB/s; joined to CPU 0 at 5000 GB/s. */
    g_assert_cmpfloat(im.sum.nic_Bps_max, ==, 12.5e9);
    g_assert_cmpint(count_links(im.topo, CS_LINK_PCIE, CS_DEVICE_NIC, CS_DEVICE_CPU, &bw), ==, 1);
    g_assert_cmpfloat(bw, ==, 5000e9);
    /* AuthenticAMD family 175: AMD_BW, 16 GB/s between each pair of its 4 NUMA nodes. */
    g_assert_cmpint(count_links(im.topo, CS_LINK_PCIE, CS_DEVICE_CPU, CS_DEVICE_CPU, &bw), ==, 12);
    g_assert_cmpfloat(bw, ==, 16e9);
    g_assert_cmpint(im.sum.n_nvlink_links, ==, 0);
    g_assert_cmpint(count_notes(im.notes, "its own GPU; left out"), ==, 4);
    /* eth0 gdr="0": said, not modelled. */
    g_assert_cmpint(count_notes(im.notes, "<net name=\"eth0\" gdr=\"0\">: no GPUDirect RDMA"), ==,
                    1);
    g_assert_cmpint(count_notes(im.notes, "link_speed=\"\" is no PCIe rate NCCL knows"), ==, 4);
}

/* ---- nvidia-smi topo -m ---- */

static void
test_smi_h100(void)
{
    g_test_summary("nvidia-smi topo -m of 8 x H100 + 8 NICs: NV18 to one NVSwitch, each GPU and "
                   "its PIX NIC behind one switch, two NUMA nodes joined by SYS");
    CsTopoImportOptions o = h100_options();
    o.nvlink_lane_Bps = 20.6e9;
    o.pcie_Bps = 48e9;
    o.sys_Bps = 22e9;
    o.nvswitch = TRUE;
    g_auto(Imported) im = import_ok("sglang-30401-h100x8-topo-m.txt", &o);
    double bw = 0;

    g_assert_cmpint(cs_topo_n_ranks(im.topo), ==, 8);
    g_assert_cmpint(count_devices(im.topo, CS_DEVICE_NIC), ==, 8);
    g_assert_cmpint(count_devices(im.topo, CS_DEVICE_CPU), ==, 2);
    g_assert_cmpint(count_devices(im.topo, CS_DEVICE_PCIE_SWITCH), ==, 8);
    g_assert_cmpint(count_links(im.topo, CS_LINK_NVSWITCH, CS_DEVICE_GPU, CS_DEVICE_NVSWITCH, &bw),
                    ==, 8);
    g_assert_cmpfloat_with_epsilon(bw, 18 * 20.6e9, 1e3);
    /* GPUn and NICn are PIX: one switch; GPU0-3 are NUMA 0, GPU4-7 NUMA 1. */
    for (int i = 0; i < 8; i++) {
        g_autofree char *gpu = g_strdup_printf("gpu%d", i);
        g_autofree char *nic = g_strdup_printf("nic%d", i);
        g_assert_cmpint(neighbour(im.topo, gpu, CS_DEVICE_PCIE_SWITCH), ==,
                        neighbour(im.topo, nic, CS_DEVICE_PCIE_SWITCH));
    }
    g_assert_cmpint(count_links(im.topo, CS_LINK_PCIE, CS_DEVICE_CPU, CS_DEVICE_CPU, &bw), ==, 2);
    g_assert_cmpfloat(bw, ==, 22e9);
    int sw0 = neighbour(im.topo, "gpu0", CS_DEVICE_PCIE_SWITCH);
    int sw3 = neighbour(im.topo, "gpu3", CS_DEVICE_PCIE_SWITCH);
    int sw4 = neighbour(im.topo, "gpu4", CS_DEVICE_PCIE_SWITCH);
    g_autofree char *s0 = g_strdup(cs_topo_device(im.topo, sw0)->name);
    g_autofree char *s3 = g_strdup(cs_topo_device(im.topo, sw3)->name);
    g_autofree char *s4 = g_strdup(cs_topo_device(im.topo, sw4)->name);
    g_assert_cmpint(neighbour(im.topo, s0, CS_DEVICE_CPU), ==,
                    neighbour(im.topo, s3, CS_DEVICE_CPU));
    g_assert_cmpint(neighbour(im.topo, s0, CS_DEVICE_CPU), !=,
                    neighbour(im.topo, s4, CS_DEVICE_CPU));
    g_assert_cmpint((int)im.notes->len, ==, 0);
}

static void
test_smi_direct_links(void)
{
    g_test_summary("Without --nvswitch, NV18 between every pair is 18 direct links each way, "
                   "and the import says the matrix cannot tell that from a switch");
    CsTopoImportOptions o = h100_options();
    o.nvlink_lane_Bps = 20.6e9;
    o.pcie_Bps = 48e9;
    o.sys_Bps = 22e9;
    g_auto(Imported) im = import_ok("sglang-30401-h100x8-topo-m.txt", &o);
    double bw = 0;

    g_assert_cmpint(count_devices(im.topo, CS_DEVICE_NVSWITCH), ==, 0);
    g_assert_cmpint(count_links(im.topo, CS_LINK_NVLINK, CS_DEVICE_GPU, CS_DEVICE_GPU, &bw), ==,
                    8 * 7);
    g_assert_cmpfloat_with_epsilon(bw, 18 * 20.6e9, 1e3);
    g_assert_cmpint(count_notes(im.notes, "every GPU pair shows NV18"), ==, 1);
}

static void
test_smi_tabs_and_underline(void)
{
    g_test_summary("nvidia-smi on a terminal: tab-separated cells, the header underlined with "
                   "ANSI escapes; the same topology as the pasted text");
    g_autofree char *path = data_path("sglang-30401-h100x8-topo-m.txt");
    g_autofree char *text = NULL;
    g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
    GString *t = g_string_new(NULL);
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    for (char **l = lines; *l != NULL; l++) {
        g_auto(GStrv) words = g_strsplit_set(*l, " ", -1);
        g_autoptr(GString) row = g_string_new(NULL);
        for (char **w = words; *w != NULL; w++)
            if (**w != '\0')
                g_string_append_printf(row, "%s%s", row->len > 0 ? "\t" : "", *w);
        if (g_str_has_prefix(row->str, "GPU0\tGPU1"))
            g_string_append_printf(t, "\x1b[4m\t%s\x1b[0m\n", row->str);
        else if ((*l)[0] == '#')
            g_string_append_printf(t, "%s\n", *l);
        else
            g_string_append_printf(t, "%s\n", row->str);
    }
    CsTopoImportOptions o = h100_options();
    o.nvlink_lane_Bps = 20.6e9;
    o.pcie_Bps = 48e9;
    o.sys_Bps = 22e9;
    o.nvswitch = TRUE;
    g_autoptr(GPtrArray) notes = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(GError) error = NULL;
    g_autofree char *json = cs_topo_import_data(t->str, t->len, "tty.txt", &o, notes, NULL, &error);
    g_string_free(t, TRUE);
    g_assert_no_error(error);
    g_autoptr(CsTopo) topo = cs_topo_load_data(json, "tty.json", &error);
    g_assert_no_error(error);
    double bw = 0;
    g_assert_cmpint(cs_topo_n_ranks(topo), ==, 8);
    g_assert_cmpint(count_devices(topo, CS_DEVICE_NIC), ==, 8);
    g_assert_cmpint(count_devices(topo, CS_DEVICE_CPU), ==, 2);
    g_assert_cmpint(count_links(topo, CS_LINK_NVSWITCH, CS_DEVICE_GPU, CS_DEVICE_NVSWITCH, &bw), ==,
                    8);
    g_assert_cmpint((int)notes->len, ==, 0);
}

static void
test_smi_needs_bandwidths(void)
{
    g_test_summary("nvidia-smi gives no rate: without --nvlink-bandwidth the import refuses");
    CsTopoImportOptions o = h100_options();
    g_autofree char *path = data_path("sglang-30401-h100x8-topo-m.txt");
    g_autoptr(GError) error = NULL;
    g_autofree char *json = cs_topo_import_file(path, &o, NULL, NULL, &error);
    g_assert_null(json);
    g_assert_error(error, CS_TOPO_ERROR, CS_TOPO_ERROR_INVALID);
    g_assert_nonnull(strstr(error->message, "--nvlink-bandwidth"));
}

/* ---- Elements the published files do not have ---- */

/* Imports @xml and loads the result (notes collected). */
static Imported
import_text(const char *xml)
{
    CsTopoImportOptions o = h100_options();
    g_autoptr(GError) error = NULL;
    Imported im = { 0 };
    im.notes = g_ptr_array_new_with_free_func(g_free);
    im.json = cs_topo_import_data(xml, strlen(xml), "t.xml", &o, im.notes, &im.sum, &error);
    g_assert_no_error(error);
    im.topo = cs_topo_load_data(im.json, "t.json", &error);
    g_assert_no_error(error);
    return im;
}

static void
test_direct_nvlinks(void)
{
    g_test_summary("Two sm 80 GPUs, each with <nvlink count=4 tclass=0x030200> to the other: "
                   "4 x 20 GB/s (SM80_NVLINK_BW) = 80 GB/s each way, one duplex link");
    g_auto(Imported) im = import_text(
        "<system version=\"1\"><cpu numaid=\"0\" arch=\"x86_64\" vendor=\"AuthenticAMD\">\n"
        "<pci busid=\"0000:01:00.0\" class=\"0x030200\" link_speed=\"16.0 GT/s PCIe\" "
        "link_width=\"16\"><gpu dev=\"1\" sm=\"80\" rank=\"1\" gdr=\"1\">"
        "<nvlink target=\"0000:02:00.0\" count=\"4\" tclass=\"0x030200\"/></gpu></pci>\n"
        "<pci busid=\"0000:02:00.0\" class=\"0x030200\" link_speed=\"16.0 GT/s PCIe\" "
        "link_width=\"16\"><gpu dev=\"0\" sm=\"80\" rank=\"0\" gdr=\"1\">"
        "<nvlink target=\"0000:01:00.0\" count=\"4\" tclass=\"0x030200\"/></gpu></pci>\n"
        "</cpu></system>\n");
    double bw = 0;
    g_assert_cmpint(count_links(im.topo, CS_LINK_NVLINK, CS_DEVICE_GPU, CS_DEVICE_GPU, &bw), ==, 2);
    g_assert_cmpfloat(bw, ==, 80e9);
    g_assert_cmpint(im.sum.n_nvlink_links, ==, 2);
    /* Ranks by CUDA device: gpu0 is the <gpu dev="0"> at 0000:02:00.0. */
    g_assert_nonnull(strstr(im.json, "\"source\":\t\"pci 0000:02:00.0 class 0x030200, CUDA "
                                     "device 0"));
    const CsRoute *r = cs_topo_route(im.topo, 0, 1);
    g_assert_cmpint(r->n_links, ==, 1);
    g_assert_cmpfloat(r->bw_Bps, ==, 80e9);
    g_assert_cmpint((int)im.notes->len, ==, 0);
}

static void
test_multiport_nic_c2c_cpu_nvlink(void)
{
    g_test_summary("A <nic> with two ports makes two NICs sharing its PCIe link; <c2c bw=56376 "
                   "count=7> is 7 x 56.376 GB/s to the CPU; an NVLink to a CPU (0x068001) goes "
                   "to the GPU's CPU; <net net=0> and a <net> without dev are left out");
    g_auto(Imported) im = import_text(
        "<system version=\"1\"><cpu numaid=\"0\" arch=\"arm64\" vendor=\"NVIDIA\">\n"
        "<pci busid=\"0000:01:00.0\" class=\"0x030200\" link_speed=\"32.0 GT/s PCIe\" "
        "link_width=\"16\"><gpu dev=\"0\" sm=\"90\" rank=\"0\" gdr=\"1\">"
        "<nvlink target=\"0000:00:00.0\" count=\"2\" tclass=\"0x068001\"/>"
        "<c2c bw=\"56376\" count=\"7\"/></gpu></pci>\n"
        "<pci busid=\"0000:03:00.0\" class=\"0x020000\" link_speed=\"32.0 GT/s PCIe\" "
        "link_width=\"16\"><nic>"
        "<net name=\"mlx5_0\" dev=\"0\" speed=\"400000\" latency=\"75\"/>"
        "<net name=\"mlx5_1\" dev=\"1\" speed=\"200000\"/>"
        "<net name=\"gin0\" dev=\"2\" speed=\"400000\" net=\"0\" gin=\"1\"/>"
        "<net name=\"nodev\" speed=\"400000\"/></nic></pci>\n"
        "<cpu numaid=\"1\"/></cpu></system>\n");
    double bw = 0;
    g_assert_cmpint(count_devices(im.topo, CS_DEVICE_NIC), ==, 2);
    g_assert_cmpfloat(im.sum.nic_Bps_min, ==, 25e9);
    g_assert_cmpfloat(im.sum.nic_Bps_max, ==, 50e9);
    /* Both ports hang off the NIC's PCI function (a hub), which has the one 48 GB/s link. */
    g_assert_cmpint(count_links(im.topo, CS_LINK_PCIE, CS_DEVICE_NIC, CS_DEVICE_PCIE_SWITCH, &bw),
                    ==, 2);
    g_assert_cmpfloat(bw, ==, 5000e9);
    g_assert_cmpint(count_links(im.topo, CS_LINK_PCIE, CS_DEVICE_PCIE_SWITCH, CS_DEVICE_CPU, &bw),
                    ==, 1);
    g_assert_cmpfloat(bw, ==, 48e9);
    /* GPU to CPU: NVLink 2 x 20.6 GB/s and C2C 7 x 56.376 GB/s (both kind nvlink), PCIe. */
    int nvl = 0, c2c = 0;
    for (int i = 0; i < cs_topo_n_links(im.topo); i++) {
        const CsLink *l = cs_topo_link(im.topo, i);
        if (l->kind != CS_LINK_NVLINK || cs_topo_device(im.topo, l->src)->kind != CS_DEVICE_GPU)
            continue;
        if (l->count == 2 && fabs(l->bw_Bps - 41.2e9) < 1e3)
            nvl++;
        if (l->count == 7 && fabs(l->bw_Bps - 7 * 56.376e9) < 1e3)
            c2c++;
    }
    g_assert_cmpint(nvl, ==, 1);
    g_assert_cmpint(c2c, ==, 1);
    g_assert_cmpint(count_notes(im.notes, "net=\"0\""), ==, 1);
    g_assert_cmpint(count_notes(im.notes, "has no dev"), ==, 1);
    /* A plugin's reported latency is a transport figure, said rather than made an alpha. */
    g_assert_cmpint(count_notes(im.notes, "latency=\"75\">: the latency its plugin reports"), ==,
                    1);
    for (int i = 0; i < cs_topo_n_links(im.topo); i++)
        g_assert_cmpfloat(cs_topo_link(im.topo, i)->alpha_s, ==, 0.0);
    /* The unexpected <cpu> inside a <cpu> is reported, not read. */
    g_assert_cmpint(count_notes(im.notes, "unexpected <cpu>"), ==, 1);
}

static void
test_empty_switches_pruned(void)
{
    g_test_summary("A chain of 1000 nested PCI bridges with nothing below is left out, quickly");
    GString *x = g_string_new("<system><cpu numaid=\"0\"><pci busid=\"0000:01:00.0\" "
                              "class=\"0x030200\" link_speed=\"8 GT/s\" link_width=\"16\"/>");
    for (int i = 0; i < 1000; i++)
        g_string_append_printf(x,
                               "<pci busid=\"0001:%02x:%02x.0\" class=\"0x060400\" "
                               "link_speed=\"8 GT/s\" link_width=\"16\">",
                               i / 256, i % 256);
    for (int i = 0; i < 1000; i++)
        g_string_append(x, "</pci>");
    g_string_append(x, "</cpu></system>");
    g_auto(Imported) im = import_text(x->str);
    g_string_free(x, TRUE);
    g_assert_cmpint(count_devices(im.topo, CS_DEVICE_PCIE_SWITCH), ==, 0);
    g_assert_cmpint(cs_topo_n_devices(im.topo), ==, 2);
}

static void
test_too_many_elements(void)
{
    g_test_summary("More than 4096 elements (16 x NCCL's own limit) is an error, not a slow "
                   "import");
    GString *x = g_string_new("<system><cpu numaid=\"0\">\n");
    for (int i = 0; i < 5000; i++)
        g_string_append_printf(x,
                               "<pci busid=\"0000:%02x:%02x.0\" class=\"0x030200\" "
                               "link_speed=\"8 GT/s\" link_width=\"16\"/>\n",
                               i / 256, i % 256);
    g_string_append(x, "</cpu></system>");
    CsTopoImportOptions o = h100_options();
    g_autoptr(GError) error = NULL;
    g_autofree char *json = cs_topo_import_data(x->str, x->len, "big.xml", &o, NULL, NULL, &error);
    g_string_free(x, TRUE);
    g_assert_null(json);
    g_assert_error(error, CS_TOPO_ERROR, CS_TOPO_ERROR_INVALID);
    g_assert_true(g_str_has_prefix(error->message, "big.xml:4096:1: more than 4096 elements"));
}

/* ---- Unknown and malformed input ---- */

static void
test_unknown_reported(void)
{
    g_test_summary("Unknown elements and attributes: one line each, with the line they are on; "
                   "the rest imported");
    static const char xml[] = "<system version=\"1\">\n"
                              "  <cpu numaid=\"0\" arch=\"x86_64\" frobnicate=\"yes\">\n"
                              "    <pci busid=\"0000:01:00.0\" class=\"0x030200\" "
                              "link_speed=\"16.0 GT/s PCIe\" link_width=\"16\">\n"
                              "      <gpu dev=\"0\" sm=\"90\" rank=\"0\" gdr=\"1\"/>\n"
                              "    </pci>\n"
                              "    <widget a=\"1\"><pci busid=\"x\"/></widget>\n"
                              "  </cpu>\n"
                              "</system>\n";
    CsTopoImportOptions o = h100_options();
    g_autoptr(GPtrArray) notes = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(GError) error = NULL;
    g_autofree char *json = cs_topo_import_data(xml, strlen(xml), "u.xml", &o, notes, NULL, &error);
    g_assert_no_error(error);
    g_assert_cmpint((int)notes->len, ==, 2);
    g_assert_cmpstr(notes->pdata[0], ==,
                    "u.xml:2: <cpu>: unknown attribute frobnicate=\"yes\" "
                    "(ignored)");
    g_assert_cmpstr(notes->pdata[1], ==,
                    "u.xml:6: unknown element <widget>: left out, with everything inside it");
    g_autoptr(CsTopo) topo = cs_topo_load_data(json, "u.json", &error);
    g_assert_no_error(error);
    g_assert_cmpint(cs_topo_n_ranks(topo), ==, 1);
}

typedef struct {
    const char *name;
    const char *xml;
    int line;            /* of the problem; 0: none (the whole file) */
    int column;          /* of the element at fault; 0: where GMarkup stopped, on @line */
    const char *message; /* what follows "ORIGIN:LINE:COLUMN: " */
} BadCase;

static const BadCase bad_cases[] = {
    /* GMarkup stops just after the closing tag it cannot match. */
    { "mismatched-close", "<system>\n  <cpu numaid=\"0\">\n  </pci>\n</system>\n", 3, 0,
      "not valid XML: " },
    { "truncated", "<system version=\"1\">\n  <cpu numaid=\"0\">\n", 3, 0, "not valid XML: " },
    { "not-nccl", "<topology version=\"2.0\"/>\n", 1, 1,
      "the root element is <topology>, not <system>" },
    { "no-link-width",
      "<system>\n <cpu numaid=\"0\">\n  <pci busid=\"0000:01:00.0\" class=\"0x030200\" "
      "link_speed=\"16 GT/s\"/>\n </cpu>\n</system>\n",
      3, 3, "<pci busid=\"0000:01:00.0\"> has no link_width" },
    { "count-not-number",
      "<system>\n <cpu numaid=\"0\">\n  <pci busid=\"0000:01:00.0\" class=\"0x030200\" "
      "link_speed=\"16 GT/s\" link_width=\"16\">\n   <gpu dev=\"0\" sm=\"90\">\n    <nvlink "
      "target=\"0000:02:00.0\" count=\"x\" tclass=\"0x030200\"/>\n",
      5, 5, "<nvlink>: count=\"x\" is not a number" },
    { "two-hosts",
      "<system>\n<cpu numaid=\"0\" host_hash=\"0x1\"/>\n<cpu numaid=\"0\" host_hash=\"0x2\"/>\n"
      "</system>\n",
      3, 1, "<cpu host_hash=\"0x2\">: a second host" },
    { "no-gpu", "<system>\n<cpu numaid=\"0\"/>\n</system>\n", 0, 0, "no GPU in it" },
    /* GMarkup quotes the bad bytes, and the newline before them: still one line of UTF-8. */
    { "invalid-utf8", "<system>\n<cpu numaid=\"0\">\n      <\n\xff/>\n", 4, 0, "not valid XML: " },
    { "newline-in-value", "<system>\n<cpu numaid=\"1&#10;2\"/>\n</system>\n", 2, 1,
      "<cpu>: numaid=\"1 2\" is not a number" },
};

static void
test_bad_xml(gconstpointer data)
{
    const BadCase *c = data;
    CsTopoImportOptions o = h100_options();
    g_autoptr(GError) error = NULL;
    g_autofree char *json
        = cs_topo_import_data(c->xml, strlen(c->xml), "bad.xml", &o, NULL, NULL, &error);
    g_assert_null(json);
    g_assert_nonnull(error);
    g_assert_true(error->domain == CS_TOPO_ERROR);
    g_assert_null(strchr(error->message, '\n'));
    g_assert_true(g_utf8_validate(error->message, -1, NULL));
    int line = 0, column = 0, at = 0;
    const char *m = error->message;
    if (c->line == 0) {
        g_autofree char *want = g_strdup_printf("bad.xml: %s", c->message);
        g_assert_true(g_str_has_prefix(m, want));
        return;
    }
    g_assert_cmpint(sscanf(m, "bad.xml:%d:%d: %n", &line, &column, &at), ==, 2);
    g_assert_cmpint(line, ==, c->line);
    if (c->column > 0)
        g_assert_cmpint(column, ==, c->column);
    g_assert_cmpint(column, >=, 1);
    if (!g_str_has_prefix(m + at, c->message))
        g_error("%s: got \"%s\", want \"%s\" after the position", c->name, m, c->message);
}

/* ---- The command ---- */

static void
test_cli_import(void)
{
    g_test_summary("collsim topo import -o FILE writes a file that topo check and topo show "
                   "load, and says what it found; a malformed input is one line on stderr, "
                   "exit 2, and leaves FILE as it was");
    g_autoptr(GError) error = NULL;
    g_autofree char *dir = g_dir_make_tmp("collsim-import-XXXXXX", &error);
    g_assert_no_error(error);
    g_autofree char *out = g_build_filename(dir, "node.json", NULL);
    g_autofree char *xml = data_path("azure-ndv5-topo.xml");

    CsTestRun run = cs_test_run_collsim(
        "topo", (const char *[]){ "import", "--gpu", "dgx-h100x8", "-o", out, xml, NULL });
    g_assert_cmpint(run.status, ==, 0);
    g_autofree char *said = g_strdup_printf("%s: 8 GPUs, 8 NICs, 0 NVLink and 50 PCIe directed "
                                            "links; a template names it as its \"node\"\n",
                                            out);
    g_assert_cmpstr(run.out, ==, said);
    /* One line per GPU and NIC the file gives without its element. */
    g_auto(GStrv) lines = g_strsplit(run.err, "\n", -1);
    g_assert_cmpint((int)g_strv_length(lines), ==, 16 + 1);
    cs_test_run_clear(&run);

    run = cs_test_run_collsim("topo", (const char *[]){ "check", out, NULL });
    g_assert_cmpint(run.status, ==, 0);
    g_assert_nonnull(strstr(run.out, ": ok (8 GPUs, 50 links)"));
    cs_test_run_clear(&run);
    run = cs_test_run_collsim("topo", (const char *[]){ "show", out, NULL });
    g_assert_cmpint(run.status, ==, 0);
    g_assert_nonnull(strstr(run.out, "      8  gpu         H100 SXM5 80GB\n"));
    g_assert_nonnull(strstr(run.out, "      8  nic         NIC, port speed not in the file\n"));
    g_assert_nonnull(strstr(run.out, "  pcie          48      1    48.0 GB/s"));
    g_assert_nonnull(strstr(run.out, "  pcie           2      1    22.0 GB/s"));
    cs_test_run_clear(&run);

    /* Malformed: one line naming file, line and column; the old file stays whole. */
    g_autofree char *before = NULL;
    g_assert_true(g_file_get_contents(out, &before, NULL, NULL));
    g_autofree char *bad = g_build_filename(dir, "bad.xml", NULL);
    g_assert_true(g_file_set_contents(bad, "<system>\n<cpu numaid=\"0\">\n</system>\n", -1, NULL));
    run = cs_test_run_collsim(
        "topo", (const char *[]){ "import", "--gpu", "dgx-h100x8", "-o", out, bad, NULL });
    g_assert_cmpint(run.status, ==, 2);
    g_assert_cmpstr(run.out, ==, "");
    g_autofree char *want = g_strdup_printf("collsim: %s:3:", bad);
    g_assert_true(g_str_has_prefix(run.err, want));
    g_assert_nonnull(strstr(run.err, "not valid XML"));
    g_assert_cmpint((int)(strchr(run.err, '\n') - run.err) + 1, ==, (int)strlen(run.err));
    cs_test_run_clear(&run);
    g_autofree char *after = NULL;
    g_assert_true(g_file_get_contents(out, &after, NULL, NULL));
    g_assert_cmpstr(after, ==, before);

    /* No --gpu: a usage error (exit 2) before anything is read or written. */
    run = cs_test_run_collsim("topo", (const char *[]){ "import", xml, NULL });
    g_assert_cmpint(run.status, ==, 2);
    g_assert_nonnull(strstr(run.err, "--gpu"));
    cs_test_run_clear(&run);

    g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
    for (const char *f = g_dir_read_name(d); f != NULL; f = g_dir_read_name(d)) {
        g_autofree char *p = g_build_filename(dir, f, NULL);
        g_remove(p);
    }
    g_rmdir(dir);
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/topo-import/nccl-dump/ibm-gx3d-h100x8", test_ibm_h100_dump);
    g_test_add_func("/topo-import/nccl-dump/ibm-gx3d-h100x8-in-template", test_ibm_h100_template);
    for (gsize i = 0; i < G_N_ELEMENTS(topo_files); i++) {
        g_autofree char *path = g_strdup_printf("/topo-import/topo-file/%s", topo_files[i].file);
        g_test_add_data_func(path, &topo_files[i], test_topo_file);
    }
    g_test_add_func("/topo-import/topo-file/azure-ncv4-nic-under-cpu", test_ncv4_nic_under_cpu);
    g_test_add_func("/topo-import/nvidia-smi/h100x8-nvswitch", test_smi_h100);
    g_test_add_func("/topo-import/nvidia-smi/h100x8-direct-links", test_smi_direct_links);
    g_test_add_func("/topo-import/nvidia-smi/tabs-and-underline", test_smi_tabs_and_underline);
    g_test_add_func("/topo-import/nvidia-smi/needs-bandwidths", test_smi_needs_bandwidths);
    g_test_add_func("/topo-import/xml/direct-nvlinks", test_direct_nvlinks);
    g_test_add_func("/topo-import/xml/multiport-nic-c2c-cpu-nvlink",
                    test_multiport_nic_c2c_cpu_nvlink);
    g_test_add_func("/topo-import/xml/empty-switches-pruned", test_empty_switches_pruned);
    g_test_add_func("/topo-import/xml/too-many-elements", test_too_many_elements);
    g_test_add_func("/topo-import/unknown-reported", test_unknown_reported);
    for (gsize i = 0; i < G_N_ELEMENTS(bad_cases); i++) {
        g_autofree char *path = g_strdup_printf("/topo-import/bad/%s", bad_cases[i].name);
        g_test_add_data_func(path, &bad_cases[i], test_bad_xml);
    }
    g_test_add_func("/topo-import/cli", test_cli_import);
    return g_test_run();
}
