// SPDX-License-Identifier: MIT
/* Tests of the topology loader: every shipped topology, the conformance fixtures of
 * tests/data/topo/index (one per error class), routes, rank and node maps, template
 * expansion, bandwidth figures, copies and the JSON round trip. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "base/json_util.h"
#include "topo/topo.h"

/* ---- Helpers ---- */

static CsTopo *
load_ok(const char *name)
{
    g_autoptr(GError) error = NULL;
    CsTopo *topo = cs_topo_load(name, &error);
    g_assert_no_error(error);
    g_assert_nonnull(topo);
    return topo;
}

static CsTopo *
load_fixture(const char *file)
{
    g_autofree char *path = g_test_build_filename(G_TEST_DIST, "data", "topo", file, NULL);
    return load_ok(path);
}

static CsTopo *
load_text(const char *json)
{
    g_autoptr(GError) error = NULL;
    CsTopo *topo = cs_topo_load_data(json, "inline.json", &error);
    g_assert_no_error(error);
    g_assert_nonnull(topo);
    return topo;
}

/* The names of the devices channel @channel's route visits after its source. */
static char *
route_names_on(const CsTopo *topo, int src, int dst, int channel)
{
    const CsRoute *r = cs_topo_route_channel(topo, src, dst, channel);
    GString *s = g_string_new(NULL);
    for (int i = 0; i < r->n_links; i++) {
        const CsLink *l = cs_topo_link(topo, r->links[i]);
        g_string_append_printf(s, "%s%s", i > 0 ? " " : "", cs_topo_device(topo, l->dst)->name);
    }
    return g_string_free(s, FALSE);
}

/* The names of the devices a route visits after its source, space-separated. */
static char *
route_names(const CsTopo *topo, int src, int dst)
{
    return route_names_on(topo, src, dst, 0);
}

#define assert_close(a, b) g_assert_cmpfloat_with_epsilon((a), (b), fabs(b) * 1e-9 + 1e-18)

/* The GPU costs every test graph shares, spliced into inline documents. */
#define GPU_SPEC                                                                                   \
    "\"gpu\": {\"launch\": \"4 us\", \"step_overhead\": \"0 us\", "                                \
    "\"reduce_bandwidth\": \"1000 GB/s\", \"copy_bandwidth\": \"1500 GB/s\"}"

/* ---- Conformance fixtures ---- */

typedef struct {
    gboolean positive;
    char *file;
    char *fragment;
} Case;

static void
case_free(gpointer data)
{
    Case *c = data;
    g_free(c->file);
    g_free(c->fragment);
    g_free(c);
}

static void
test_conformance(gconstpointer data)
{
    const Case *c = data;
    g_autofree char *path = g_test_build_filename(G_TEST_DIST, "data", "topo", c->file, NULL);
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTopo) topo = cs_topo_load(path, &error);

    if (c->positive) {
        g_assert_no_error(error);
        g_assert_nonnull(topo);
        g_assert_cmpint(cs_topo_n_ranks(topo), >=, 1);
        return;
    }
    g_assert_null(topo);
    g_assert_nonnull(error);
    g_assert_true(error->domain == CS_TOPO_ERROR);
    /* One line, naming the file first, then the specific complaint. */
    g_assert_null(strchr(error->message, '\n'));
    g_assert_true(g_str_has_prefix(error->message, path));
    if (strstr(error->message, c->fragment) == NULL)
        g_error("%s: message \"%s\" lacks \"%s\"", c->file, error->message, c->fragment);
}

static void
add_conformance_cases(GPtrArray *keep)
{
    g_autofree char *index = g_test_build_filename(G_TEST_DIST, "data", "topo", "index", NULL);
    g_autofree char *text = NULL;
    g_autoptr(GError) error = NULL;

    if (!g_file_get_contents(index, &text, NULL, &error))
        g_error("%s", error->message);
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    for (char **l = lines; *l != NULL; l++) {
        if (**l == '\0' || **l == '#')
            continue;
        g_auto(GStrv) f = g_strsplit(*l, ",", 3);
        g_assert_nonnull(f[1]);
        Case *c = g_new0(Case, 1);
        c->positive = strcmp(f[0], "P") == 0;
        c->file = g_strdup(f[1]);
        c->fragment = g_strdup(f[2] != NULL ? f[2] : "");
        g_assert_true(c->positive || c->fragment[0] != '\0');
        g_ptr_array_add(keep, c);
        g_autofree char *test_path = g_strdup_printf("/topo/conformance/%s/%s",
                                                     c->positive ? "valid" : "invalid", c->file);
        g_test_add_data_func(test_path, c, test_conformance);
    }
}

/* ---- Shipped topologies ---- */

static void
test_shipped(gconstpointer data)
{
    const char *name = data;
    g_autoptr(CsTopo) topo = load_ok(name);
    int P = cs_topo_n_ranks(topo);

    g_assert_cmpstr(cs_topo_name(topo), ==, name);
    g_assert_cmpuint(strlen(cs_topo_description(topo)), >, 100);
    g_assert_cmpint(P, >=, 2);
    g_assert_cmpint(cs_topo_n_nodes(topo) * cs_topo_ranks_per_node(topo), ==, P);
    for (int r = 0; r < P; r++) {
        const CsGpuSpec *g = cs_topo_rank_gpu(topo, r);
        g_assert_cmpfloat(g->launch_s, >, 0.0);
        g_assert_cmpfloat(g->reduce_Bps, >, 0.0);
        g_assert_cmpfloat(g->copy_Bps, >, 0.0);
    }
    /* Sample pairs on big clusters; all of them on boxes. */
    int stride = P > 64 ? 37 : 1;
    for (int s = 0; s < P; s += stride) {
        for (int t = 0; t < P; t++) {
            const CsRoute *r = cs_topo_route(topo, s, t);
            g_assert_cmpint(r->n_links, ==, s == t ? 0 : r->n_links);
            if (s == t)
                continue;
            g_assert_cmpint(r->n_links, >=, 1);
            g_assert_cmpfloat(r->bw_Bps, >, 0.0);
            g_assert_cmpint(cs_topo_link(topo, r->links[0])->src, ==, cs_topo_rank_device(topo, s));
            g_assert_cmpint(cs_topo_link(topo, r->links[r->n_links - 1])->dst, ==,
                            cs_topo_rank_device(topo, t));
            for (int i = 1; i < r->n_links; i++)
                g_assert_cmpint(cs_topo_link(topo, r->links[i])->src, ==,
                                cs_topo_link(topo, r->links[i - 1])->dst);
        }
    }
    g_assert_cmpfloat(cs_topo_bisection_bw(topo), >, 0.0);
}

static void
test_list_shipped(void)
{
    g_auto(GStrv) names = cs_topo_list_shipped();
    const char *want[]
        = { "dgx-h100x4",       "dgx-h100x8",      "dgx-a100x8",  "hgx-h100x8-2n",
            "hgx-h100x8-16n",   "hgx-h100x8-128n", "pcie-l40sx8", "rtx2080ti-x2-pcie3-shm",
            "mi300x-x8-xgmi",   "gb200-nvl72",     "eth-cpu-8n",  "cpu-host-shm",
            "hgx-h200x8",       "hgx-h20x8",       "hgx-a800x8",  "dgx-b200x8",
            "h100-1gpu-vranks8" };

    for (gsize i = 0; i < G_N_ELEMENTS(want); i++)
        g_assert_true(g_strv_contains((const char *const *)names, want[i]));
    for (int i = 1; names[i] != NULL; i++)
        g_assert_cmpint(strcmp(names[i - 1], names[i]), <, 0);
}

/* The 8-GPU NVSwitch boxes that differ from dgx-h100x8 / dgx-a100x8 only in their datasheet
 * numbers: NVLink lanes per GPU, NCCL's usable rate per lane, HBM (reduce = HBM / 3), and
 * whether the switch reduces (NVLS). */
static void
test_nvswitch_variants(void)
{
    static const struct {
        const char *name;
        int lanes;
        double usable_GBps; /* per GPU and direction */
        double reduce_GBps;
        gboolean nvls;
    } cases[] = {
        { "hgx-h200x8", 18, 18 * 25 * 0.824, 4800.0 / 3, TRUE }, /* HBM3e 4.8 TB/s */
        { "hgx-h20x8", 18, 18 * 25 * 0.824, 4000.0 / 3, TRUE },  /* HBM3 4.0 TB/s */
        { "hgx-a800x8", 8, 8 * 25 * 0.8, 2039.0 / 3, FALSE },    /* NVLink 400 GB/s bidir */
        { "dgx-b200x8", 18, 18 * 50 * 0.802, 8000.0 / 3, TRUE }, /* NVLink5, HBM3e 8 TB/s */
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autoptr(CsTopo) topo = load_ok(cases[i].name);
        g_assert_cmpint(cs_topo_n_ranks(topo), ==, 8);
        g_assert_cmpint(cs_topo_n_nodes(topo), ==, 1);
        g_assert_true(cs_topo_has_nvls(topo) == cases[i].nvls);
        const CsDevice *gpu = cs_topo_device(topo, cs_topo_rank_device(topo, 0));
        g_assert_cmpfloat_with_epsilon(gpu->gpu.reduce_Bps / 1e9, cases[i].reduce_GBps, 0.1);
        const CsLink *l = cs_topo_link(topo, 0);
        g_assert_cmpint(cs_link_kind_class(l->kind), ==, CS_LINK_CLASS_NVLINK);
        g_assert_cmpint(l->count, ==, cases[i].lanes);
        g_assert_cmpfloat_with_epsilon(l->bw_Bps / 1e9, cases[i].usable_GBps, 1e-6);
        /* Every GPU pair talks through the switch: two hops. */
        g_assert_cmpint(cs_topo_route(topo, 0, 7)->n_links, ==, 2);
    }
}

/* ---- dgx-h100x4 in detail ---- */

static void
test_dgx_h100x4(void)
{
    g_autoptr(CsTopo) topo = load_ok("dgx-h100x4");

    g_test_summary("Expectation: 4 GPUs + 1 NVSwitch; 4 duplex links = 8 directed; each link "
                   "18 x 25 GB/s = 450 GB/s raw, x 0.824 = 370.8 GB/s usable; GPU to GPU is "
                   "GPU-switch-GPU: 2 hops, alpha 2 x 0.1 us; bisection = 2 uplinks = 741.6 GB/s");
    g_assert_cmpint(cs_topo_n_devices(topo), ==, 5);
    g_assert_cmpint(cs_topo_n_links(topo), ==, 8);
    g_assert_cmpint(cs_topo_n_ranks(topo), ==, 4);
    g_assert_cmpint(cs_topo_n_nodes(topo), ==, 1);
    g_assert_cmpint(cs_topo_ranks_per_node(topo), ==, 4);
    const CsLink *l = cs_topo_link(topo, 0);
    g_assert_cmpint(l->kind, ==, CS_LINK_NVSWITCH);
    g_assert_cmpint(l->count, ==, 18);
    assert_close(l->raw_bw_Bps, 450e9);
    assert_close(l->bw_Bps, 370.8e9);
    for (int s = 0; s < 4; s++) {
        for (int t = 0; t < 4; t++) {
            const CsRoute *r = cs_topo_route(topo, s, t);
            if (s == t) {
                g_assert_cmpint(r->n_links, ==, 0);
                assert_close(r->bw_Bps, 1675e9);
                continue;
            }
            g_assert_cmpint(r->n_links, ==, 2);
            assert_close(r->alpha_s, 0.2e-6);
            assert_close(r->bw_Bps, 370.8e9);
            g_assert_cmpint(r->link_class, ==, CS_LINK_CLASS_NVLINK);
        }
    }
    g_autofree char *names = route_names(topo, 0, 3);
    g_assert_cmpstr(names, ==, "nvswitch gpu3");
    g_assert_true(cs_topo_has_nvls(topo));
    g_assert_false(cs_topo_has_sharp(topo));
    assert_close(cs_topo_injection_bw(topo, 0, CS_LINK_CLASS_NVLINK), 370.8e9);
    assert_close(cs_topo_injection_bw(topo, 0, CS_LINK_CLASS_NET), 0.0);
    assert_close(cs_topo_bisection_bw(topo), 741.6e9);
    const CsGpuSpec *g = cs_topo_rank_gpu(topo, 2);
    assert_close(g->launch_s, 4.5e-6);
    assert_close(g->reduce_Bps, 1116.7e9);
    g_assert_cmpstr(cs_topo_device(topo, 0)->model, ==, "H100 SXM5 80GB");
}

/* ---- Routes ---- */

static void
test_routes_nvswitch(void)
{
    g_autoptr(CsTopo) topo = load_ok("dgx-h100x8");

    /* Every pair through the NVSwitch, never through a NIC or another GPU. */
    for (int s = 0; s < 8; s++)
        for (int t = 0; t < 8; t++)
            if (s != t)
                g_assert_cmpint(cs_topo_route(topo, s, t)->n_links, ==, 2);
}

static void
test_routes_cross_node(void)
{
    g_autoptr(CsTopo) topo = load_ok("hgx-h100x8-2n");

    g_test_summary("Same rail: GPU-NIC-rail-NIC-GPU, 4 hops, alpha 0.2 + (0.3 + 0.13) + 0.3 + "
                   "0.2 = 1.13 us, bottleneck the PCIe Gen5 link 63 x 0.762 = 48.006 GB/s. "
                   "Other rail: through the spine, 6 hops, alpha 1.13 + 2 x 0.13 = 1.39 us");
    g_autofree char *same = route_names(topo, 0, 8);
    g_assert_cmpstr(same, ==, "n0/nic0 rail0 n1/nic0 n1/gpu0");
    const CsRoute *r = cs_topo_route(topo, 0, 8);
    assert_close(r->alpha_s, 1.13e-6);
    assert_close(r->bw_Bps, 48.006e9);
    g_assert_cmpint(r->link_class, ==, CS_LINK_CLASS_NET);

    g_autofree char *other = route_names(topo, 0, 15);
    g_assert_cmpstr(other, ==, "n0/nic0 rail0 spine rail7 n1/nic7 n1/gpu7");
    assert_close(cs_topo_route(topo, 0, 15)->alpha_s, 1.39e-6);

    /* Inside a node: still the NVSwitch. */
    g_autofree char *inside = route_names(topo, 9, 10);
    g_assert_cmpstr(inside, ==, "n1/nvswitch n1/gpu2");
}

static void
test_routes_deterministic(void)
{
    g_autoptr(CsTopo) a = load_ok("hgx-h100x8-16n");
    g_autoptr(CsTopo) b = load_ok("hgx-h100x8-16n");
    int P = cs_topo_n_ranks(a);

    for (int s = 0; s < P; s += 5) {
        for (int t = 0; t < P; t++) {
            const CsRoute *x = cs_topo_route(a, s, t);
            const CsRoute *y = cs_topo_route(b, s, t);
            g_assert_cmpint(x->n_links, ==, y->n_links);
            for (int i = 0; i < x->n_links; i++)
                g_assert_cmpint(x->links[i], ==, y->links[i]);
        }
    }
}

static void
test_routes_widest(void)
{
    /* Two 2-hop paths gpu0 -> swX -> gpu1: "narrow" (index 2) has 10 GB/s, "wide" (index 3)
     * 20 GB/s. Equal hops, so the wider wins although its device index is higher. */
    g_autoptr(CsTopo) topo = load_text(
        "{" GPU_SPEC ", \"devices\": [{\"name\": \"gpu0\", \"kind\": \"gpu\"}, "
        "{\"name\": \"gpu1\", \"kind\": \"gpu\"}, {\"name\": \"narrow\", \"kind\": \"switch\"}, "
        "{\"name\": \"wide\", \"kind\": \"switch\"}], \"links\": ["
        "{\"endpoints\": [\"gpu0\", \"narrow\"], \"kind\": \"ib\", \"bandwidth\": \"10 GB/s\", "
        "\"alpha\": \"1 us\"},"
        "{\"endpoints\": [\"narrow\", \"gpu1\"], \"kind\": \"ib\", \"bandwidth\": \"10 GB/s\", "
        "\"alpha\": \"1 us\"},"
        "{\"endpoints\": [\"gpu0\", \"wide\"], \"kind\": \"ib\", \"bandwidth\": \"20 GB/s\", "
        "\"alpha\": \"1 us\"},"
        "{\"endpoints\": [\"wide\", \"gpu1\"], \"kind\": \"ib\", \"bandwidth\": \"20 GB/s\", "
        "\"alpha\": \"1 us\"}]}");
    g_autofree char *names = route_names(topo, 0, 1);
    g_assert_cmpstr(names, ==, "wide gpu1");
    assert_close(cs_topo_route(topo, 0, 1)->bw_Bps, 20e9);

    /* Equal widths: the lower device index ("a" before "b"). */
    g_autoptr(CsTopo) tie = load_text(
        "{" GPU_SPEC ", \"devices\": [{\"name\": \"gpu0\", \"kind\": \"gpu\"}, "
        "{\"name\": \"gpu1\", \"kind\": \"gpu\"}, {\"name\": \"b\", \"kind\": \"switch\"}, "
        "{\"name\": \"a\", \"kind\": \"switch\"}], \"links\": ["
        "{\"endpoints\": [\"gpu0\", \"a\"], \"kind\": \"ib\", \"bandwidth\": \"10 GB/s\", "
        "\"alpha\": \"1 us\"},"
        "{\"endpoints\": [\"a\", \"gpu1\"], \"kind\": \"ib\", \"bandwidth\": \"10 GB/s\", "
        "\"alpha\": \"1 us\"},"
        "{\"endpoints\": [\"gpu0\", \"b\"], \"kind\": \"ib\", \"bandwidth\": \"10 GB/s\", "
        "\"alpha\": \"1 us\"},"
        "{\"endpoints\": [\"b\", \"gpu1\"], \"kind\": \"ib\", \"bandwidth\": \"10 GB/s\", "
        "\"alpha\": \"1 us\"}]}");
    g_autofree char *tie_names = route_names(tie, 0, 1);
    g_assert_cmpstr(tie_names, ==, "b gpu1");
}

static void
test_routes_gpu_transit(void)
{
    /* A chain gpu0 - gpu1 - gpu2 of direct NVLinks: the only way from 0 to 2 forwards
     * through gpu1 (NCCL's NVB path). */
    g_autoptr(CsTopo) chain = load_text(
        "{" GPU_SPEC ", \"devices\": [{\"name\": \"gpu0\", \"kind\": \"gpu\"}, "
        "{\"name\": \"gpu1\", \"kind\": \"gpu\"}, {\"name\": \"gpu2\", \"kind\": \"gpu\"}], "
        "\"links\": ["
        "{\"endpoints\": [\"gpu0\", \"gpu1\"], \"kind\": \"nvlink\", \"bandwidth\": \"25 GB/s\", "
        "\"alpha\": \"1 us\"},"
        "{\"endpoints\": [\"gpu1\", \"gpu2\"], \"kind\": \"nvlink\", \"bandwidth\": \"25 GB/s\", "
        "\"alpha\": \"1 us\"}]}");
    g_autofree char *names = route_names(chain, 0, 2);
    g_assert_cmpstr(names, ==, "gpu1 gpu2");

    /* With a 3-hop switched path as well, the route avoids forwarding through a GPU. */
    g_autoptr(CsTopo) both = load_text(
        "{" GPU_SPEC ", \"devices\": [{\"name\": \"gpu0\", \"kind\": \"gpu\"}, "
        "{\"name\": \"gpu1\", \"kind\": \"gpu\"}, {\"name\": \"gpu2\", \"kind\": \"gpu\"}, "
        "{\"name\": \"s1\", \"kind\": \"switch\"}, {\"name\": \"s2\", \"kind\": \"switch\"}], "
        "\"links\": ["
        "{\"endpoints\": [\"gpu0\", \"gpu1\"], \"kind\": \"nvlink\", \"bandwidth\": \"25 GB/s\", "
        "\"alpha\": \"1 us\"},"
        "{\"endpoints\": [\"gpu1\", \"gpu2\"], \"kind\": \"nvlink\", \"bandwidth\": \"25 GB/s\", "
        "\"alpha\": \"1 us\"},"
        "{\"endpoints\": [\"gpu0\", \"s1\"], \"kind\": \"ib\", \"bandwidth\": \"25 GB/s\", "
        "\"alpha\": \"1 us\"},"
        "{\"endpoints\": [\"s1\", \"s2\"], \"kind\": \"ib\", \"bandwidth\": \"25 GB/s\", "
        "\"alpha\": \"1 us\"},"
        "{\"endpoints\": [\"s2\", \"gpu2\"], \"kind\": \"ib\", \"bandwidth\": \"25 GB/s\", "
        "\"alpha\": \"1 us\"}]}");
    g_autofree char *both_names = route_names(both, 0, 2);
    g_assert_cmpstr(both_names, ==, "s1 s2 gpu2");
}

static void
test_routes_directed(void)
{
    g_autoptr(CsTopo) topo = load_ok("rtx2080ti-x2-pcie3-shm");

    g_test_summary("No peer-to-peer: up through the switch into host memory and back down; "
                   "the two middle links are shm (PCI class); 15.75 x 0.762 = 12.0015 GB/s");
    g_autofree char *names = route_names(topo, 0, 1);
    g_assert_cmpstr(names, ==, "pcie-up host pcie-down gpu1");
    const CsRoute *r = cs_topo_route(topo, 0, 1);
    g_assert_cmpint(cs_topo_link(topo, r->links[1])->kind, ==, CS_LINK_SHM);
    g_assert_cmpint(r->link_class, ==, CS_LINK_CLASS_PCI);
    assert_close(r->bw_Bps, 12.0015e9);
}

/* ---- Ranks and nodes ---- */

static void
test_ranks_node_major(void)
{
    g_autoptr(CsTopo) topo = load_fixture("node_major.json");

    /* Devices a(node 1), b(0), c(1), d(0): node-major, then file order: b d a c. */
    const char *want[] = { "b", "d", "a", "c" };
    const int node[] = { 0, 0, 1, 1 };
    g_assert_cmpint(cs_topo_n_ranks(topo), ==, 4);
    g_assert_cmpint(cs_topo_n_nodes(topo), ==, 2);
    for (int r = 0; r < 4; r++) {
        g_assert_cmpstr(cs_topo_device(topo, cs_topo_rank_device(topo, r))->name, ==, want[r]);
        g_assert_cmpint(cs_topo_rank_node(topo, r), ==, node[r]);
    }
}

static void
test_ranks_explicit(void)
{
    g_autoptr(CsTopo) topo = load_fixture("ranks_explicit.json");

    g_assert_cmpint(cs_topo_rank_device(topo, 0), ==, cs_topo_find_device(topo, "gpu1"));
    g_assert_cmpint(cs_topo_rank_device(topo, 1), ==, cs_topo_find_device(topo, "gpu0"));
    g_assert_cmpint(cs_topo_find_device(topo, "nope"), ==, -1);
}

/* ---- NICs per channel ---- */

/* Two nodes of the 8-GPU H200 board with the template's own NICs in place of the node's:
 * @nics per node, 100 Gb/s each, on PCIe Gen5. */
static CsTopo *
load_nic_template(int nics)
{
    g_autofree char *json = g_strdup_printf(
        "{\"nodes\": 2, \"node\": \"hgx-h200x8\", \"network\": {\"kind\": \"ib\", "
        "\"nics_per_node\": %d, \"nic_bandwidth\": \"100 Gb/s\", \"nic_alpha\": \"1 us\", "
        "\"switch_alpha\": \"1 us\", \"rail_optimized\": true, \"nic_link\": {\"kind\": "
        "\"pcie\", \"bandwidth\": \"63 GB/s\", \"alpha\": \"0.2 us\"}}}",
        nics);
    return load_text(json);
}

static void
test_nics_per_channel(void)
{
    g_autoptr(CsTopo) topo = load_nic_template(32);

    g_test_summary("32 NICs for 8 GPUs: each GPU's 4 NICs are its local ones, no GPU shares "
                   "them, and NCCL's ncclTopoGetLocalNet gives channel c the NIC 4g + (c mod "
                   "4) (start 0 mirrored is 0): channels 0-3 leave by four NICs, channel 4 by "
                   "the first again; the node's own 8 NICs are gone");
    g_assert_cmpint(cs_topo_find_device(topo, "n0/nic31"), >=, 0);
    g_assert_cmpint(cs_topo_find_device(topo, "n0/ib0"), <, 0);
    for (int g = 0; g < 8; g++) {
        CsRankNics nics = cs_topo_rank_nics(topo, g);
        g_assert_cmpint(nics.n_local, ==, 4);
        g_assert_cmpint(nics.used, ==, 4);
        g_assert_cmpint(nics.sharing, ==, 1);
        for (int c = 0; c < 4; c++) {
            g_autofree char *want = g_strdup_printf("n0/nic%d", 4 * g + c);
            g_assert_cmpstr(cs_topo_device(topo, nics.device[c])->name, ==, want);
        }
    }
    /* GPU 1 to GPU 1 of the other node, same rail: out and in by the channel's NIC. */
    for (int c = 0; c < 5; c++) {
        g_autofree char *got = route_names_on(topo, 1, 9, c);
        g_autofree char *want
            = g_strdup_printf("n0/nic%d rail%d n1/nic%d n1/gpu1", 4 + c % 4, 4 + c % 4, 4 + c % 4);
        g_assert_cmpstr(got, ==, want);
    }
    /* Inside a node the channel changes nothing. */
    g_assert_true(cs_topo_route_channel(topo, 0, 1, 3) == cs_topo_route(topo, 0, 1));
    assert_close(cs_topo_injection_bw(topo, 0, CS_LINK_CLASS_NET), 4 * 12.5e9);
}

static void
test_nics_shared(void)
{
    g_autoptr(CsTopo) topo = load_nic_template(4);

    g_test_summary("4 NICs for 8 GPUs: GPUs 2k and 2k+1 share NIC k, every channel of both "
                   "leaves by it");
    for (int g = 0; g < 8; g++) {
        CsRankNics nics = cs_topo_rank_nics(topo, g);
        g_assert_cmpint(nics.n_local, ==, 1);
        g_assert_cmpint(nics.used, ==, 1);
        g_assert_cmpint(nics.sharing, ==, 2);
        g_autofree char *want = g_strdup_printf("n0/nic%d", g / 2);
        g_assert_cmpstr(cs_topo_device(topo, nics.device[0])->name, ==, want);
    }
    g_autofree char *got = route_names_on(topo, 3, 11, 1);
    g_assert_cmpstr(got, ==, "n0/nic1 rail1 n1/nic1 n1/gpu3");
}

static void
test_nics_behind_switch(void)
{
    /* Two nodes; in each, four GPUs and two NICs behind one PCIe switch. */
    GString *j = g_string_new("{" GPU_SPEC ", \"devices\": [");
    for (int n = 0; n < 2; n++) {
        g_string_append_printf(
            j, "{\"name\": \"n%d/sw\", \"kind\": \"pcie_switch\", \"node\": %d},", n, n);
        for (int g = 0; g < 4; g++)
            g_string_append_printf(j, "{\"name\": \"n%d/gpu%d\", \"kind\": \"gpu\", \"node\": %d},",
                                   n, g, n);
        for (int k = 0; k < 2; k++)
            g_string_append_printf(j, "{\"name\": \"n%d/nic%d\", \"kind\": \"nic\", \"node\": %d},",
                                   n, k, n);
    }
    g_string_append(j, "{\"name\": \"leaf\", \"kind\": \"switch\", \"node\": -1}], \"links\": [");
    for (int n = 0; n < 2; n++) {
        for (int g = 0; g < 4; g++)
            g_string_append_printf(j,
                                   "{\"endpoints\": [\"n%d/gpu%d\", \"n%d/sw\"], \"kind\": "
                                   "\"pcie\", \"bandwidth\": \"32 GB/s\", \"alpha\": \"1 us\"},",
                                   n, g, n);
        for (int k = 0; k < 2; k++)
            g_string_append_printf(j,
                                   "{\"endpoints\": [\"n%d/nic%d\", \"n%d/sw\"], \"kind\": "
                                   "\"pcie\", \"bandwidth\": \"32 GB/s\", \"alpha\": \"1 us\"},"
                                   "{\"endpoints\": [\"n%d/nic%d\", \"leaf\"], \"kind\": "
                                   "\"ib\", \"bandwidth\": \"25 GB/s\", \"alpha\": \"1 us\"}%s",
                                   n, k, n, n, k, n == 1 && k == 1 ? "" : ",");
    }
    g_string_append(j, "]}");
    g_autoptr(CsTopo) topo = load_text(j->str);
    g_string_free(j, TRUE);

    g_test_summary("Four GPUs share two NICs: both are local to each (same path), "
                   "localGpuCount 4, netsPerGpu 1; GPU g starts at g mod 4, mirrored over 2 "
                   "NICs: GPUs 0 and 2 use NIC 0, GPUs 1 and 3 NIC 1 (ncclTopoGetLocalNetType)");
    for (int g = 0; g < 4; g++) {
        CsRankNics nics = cs_topo_rank_nics(topo, g);
        g_assert_cmpint(nics.n_local, ==, 2);
        g_assert_cmpint(nics.used, ==, 1);
        g_assert_cmpint(nics.sharing, ==, 4);
        g_autofree char *want = g_strdup_printf("n0/nic%d", g % 2);
        g_assert_cmpstr(cs_topo_device(topo, nics.device[0])->name, ==, want);
    }
    g_autofree char *got = route_names_on(topo, 1, 6, 0);
    g_assert_cmpstr(got, ==, "n0/sw n0/nic1 leaf n1/nic0 n1/sw n1/gpu2");
}

/* ---- Transport ---- */

static void
test_transport(void)
{
    g_test_summary("The network's transport: by link kind when the file names none (ib: NCCL's "
                   "verbs transport, ethernet: its socket transport, no network: none), a name "
                   "from the table (efa: aws-ofi-nccl's measured 20 us, 3 us Simple completion, 75 "
                   "us reported to NCCL), an object whose latency "
                   "overrides; written back by cs_topo_to_json");
    g_autoptr(CsTopo) ib = load_ok("hgx-h100x8-2n");
    g_assert_cmpstr(cs_topo_transport(ib)->kind, ==, "ib");
    g_assert_cmpfloat(cs_topo_transport(ib)->latency_s, ==, 0.0);
    g_autoptr(CsTopo) eth = load_ok("eth-cpu-8n");
    g_assert_cmpstr(cs_topo_transport(eth)->kind, ==, "socket");
    g_autoptr(CsTopo) rack = load_ok("gb200-nvl72");
    g_assert_null(cs_topo_transport(rack)->kind);

    g_autoptr(CsTopo) efa
        = load_text("{\"nodes\": 2, \"node\": \"dgx-h100x8\", \"network\": {\"kind\": \"ib\", "
                    "\"nic_bandwidth\": \"400 Gb/s\", \"nic_alpha\": \"1 us\", \"switch_alpha\": "
                    "\"1 us\", \"transport\": \"efa\"}}");
    g_assert_cmpstr(cs_topo_transport(efa)->kind, ==, "efa");
    assert_close(cs_topo_transport(efa)->latency_s, 20e-6);
    assert_close(cs_topo_transport(efa)->flush_s, 3e-6);
    assert_close(cs_topo_transport(efa)->reported_s, 75e-6);
    g_assert_nonnull(strstr(cs_topo_transport(efa)->source, "aws-ofi-nccl"));

    g_autoptr(CsTopo) own
        = load_text("{\"nodes\": 2, \"node\": \"dgx-h100x8\", \"network\": {\"kind\": \"roce\", "
                    "\"nic_bandwidth\": \"400 Gb/s\", \"nic_alpha\": \"1 us\", \"switch_alpha\": "
                    "\"1 us\", \"transport\": {\"kind\": \"roce\", \"latency\": \"12 us\", "
                    "\"source\": \"a measurement\"}}}");
    assert_close(cs_topo_transport(own)->latency_s, 12e-6);
    g_autofree char *json = cs_topo_to_json(own);
    g_autoptr(CsTopo) back = load_text(json);
    g_assert_cmpstr(cs_topo_transport(back)->kind, ==, "roce");
    assert_close(cs_topo_transport(back)->latency_s, 12e-6);
    g_assert_cmpstr(cs_topo_transport(back)->source, ==, "a measurement");

    g_autoptr(GError) error = NULL;
    g_autoptr(CsTopo) bad = cs_topo_load_data(
        "{\"nodes\": 2, \"node\": \"dgx-h100x8\", \"network\": {\"kind\": \"ib\", "
        "\"nic_bandwidth\": \"400 Gb/s\", \"nic_alpha\": \"1 us\", \"switch_alpha\": "
        "\"1 us\", \"transport\": \"carrier-pigeon\"}}",
        "bad.json", &error);
    g_assert_null(bad);
    g_assert_nonnull(
        strstr(error->message, "network.transport: \"carrier-pigeon\" is not a transport"));
}

/* ---- Prices ---- */

/* Setup: tests/data/topo/priced_leaf_spine.json (3 nodes of 2 NICs, 2 nodes per leaf, 4:1
 * uplinks; price block: "10000" per node, 500 per NIC, "250" per switch port, "1.5" per
 * node-hour, "1000h", EUR). Expectation: the amounts as numbers, strings or numbers alike; no
 * GPU-hour term; 1000 h; NICs counted per node set; 10 switch ports (leaf0: 4 NIC ports + an
 * uplink of 4 x 25 Gb/s = one 100 Gb/s port; leaf1: 2 + 2 x 25 Gb/s rounded up to 1; the
 * spine 1 + 1). The block survives cs_topo_to_json() and loading back. */
static void
test_price_block(void)
{
    g_autoptr(CsTopo) topo = load_fixture("priced_leaf_spine.json");
    const CsTopoPrice *p = cs_topo_price(topo);
    g_assert_nonnull(p);
    g_assert_cmpfloat(p->node, ==, 10000);
    g_assert_cmpfloat(p->nic, ==, 500);
    g_assert_cmpfloat(p->switch_port, ==, 250);
    g_assert_cmpfloat(p->node_hour, ==, 1.5);
    g_assert_cmpfloat(p->gpu_hour, <, 0);
    g_assert_cmpfloat(p->amortize_h, ==, 1000);
    g_assert_cmpstr(p->currency, ==, "EUR");
    g_assert_cmpstr(p->source, ==, "test values, not a quote");
    gboolean first_two[3] = { TRUE, TRUE, FALSE }, last[3] = { FALSE, FALSE, TRUE };
    g_assert_cmpint(cs_topo_count_nics(topo, first_two), ==, 4);
    g_assert_cmpint(cs_topo_count_nics(topo, last), ==, 2);
    double port = 0;
    g_assert_cmpint(cs_topo_switch_ports(topo, &port), ==, 10);
    assert_close(port, 12.5e9);

    g_autofree char *json = cs_topo_to_json(topo);
    g_autoptr(CsTopo) back = load_text(json);
    const CsTopoPrice *q = cs_topo_price(back);
    g_assert_nonnull(q);
    g_assert_cmpfloat(q->node, ==, 10000);
    g_assert_cmpfloat(q->amortize_h, ==, 1000);
    g_assert_cmpstr(q->currency, ==, "EUR");
    g_assert_cmpint(cs_topo_switch_ports(back, NULL), ==, 10);

    /* Shipped topologies carry no prices. */
    g_autoptr(CsTopo) shipped = load_ok("hgx-h100x8-2n");
    g_assert_null(cs_topo_price(shipped));
}

/* Switch ports by hand. template_leaf_spine (4 nodes, 1 NIC each, 2 per leaf, 2:1): each leaf
 * 2 NIC ports + 2 x 50 Gb/s up = 1 port, the spine 1 per leaf: 3 + 3 + 2 = 8. template_pods
 * (8 nodes, 2 per leaf, 4 per pod, leaves 1:1, pods 4:1 to the core): 4 leaves x (2 + 2), each
 * pod spine 4 down + 4 x 25 Gb/s up = 1, the core 1 per pod: 16 + 10 + 2 = 28. hgx-h100x8-2n
 * (8 rails, 2 nodes, non-blocking): 8 x (2 + 2) + 16 = 48. One node without a network: 0. An
 * inline node's price block is the template's when the template has none. */
static void
test_switch_ports(void)
{
    g_autoptr(CsTopo) leaf_spine = load_fixture("template_leaf_spine.json");
    g_assert_cmpint(cs_topo_switch_ports(leaf_spine, NULL), ==, 8);
    g_autoptr(CsTopo) pods = load_fixture("template_pods.json");
    g_assert_cmpint(cs_topo_switch_ports(pods, NULL), ==, 28);
    g_autoptr(CsTopo) rails = load_ok("hgx-h100x8-2n");
    g_assert_cmpint(cs_topo_switch_ports(rails, NULL), ==, 48);
    g_autoptr(CsTopo) box = load_ok("dgx-h100x8");
    double port = -1;
    g_assert_cmpint(cs_topo_switch_ports(box, &port), ==, 0);
    g_assert_cmpfloat(port, ==, 0);

    g_autoptr(CsTopo) inherited = load_text(
        "{\"nodes\": 2, \"node\": {\"cpu\": {\"launch\": \"1 us\", \"step_overhead\": \"1 us\", "
        "\"reduce_bandwidth\": \"1 GB/s\", \"copy_bandwidth\": \"1 GB/s\"}, \"devices\": "
        "[{\"name\": \"c\", \"kind\": \"cpu\"}], \"links\": [], \"price\": {\"node\": 7, "
        "\"amortize\": \"1y\"}}, \"network\": {\"kind\": \"ethernet\", \"nics_per_node\": 1, "
        "\"nic_bandwidth\": \"10 Gb/s\", \"nic_alpha\": \"1 us\", \"switch_alpha\": \"1 us\", "
        "\"nic_link\": {\"kind\": \"pcie\", \"bandwidth\": \"1 GB/s\", \"alpha\": \"1 us\"}}}");
    g_assert_nonnull(cs_topo_price(inherited));
    g_assert_cmpfloat(cs_topo_price(inherited)->node, ==, 7);
    g_assert_cmpfloat(cs_topo_price(inherited)->amortize_h, ==, 8760);
    /* One leaf, no spine: 2 NIC ports. */
    g_assert_cmpint(cs_topo_switch_ports(inherited, NULL), ==, 2);
}

/* A bad price block: one line naming the file, the JSON path and the problem. */
static void
test_price_errors(void)
{
    static const struct {
        const char *block, *message;
    } cases[] = {
        { "{\"node\": -5, \"amortize\": \"4y\"}", "bad.json: price.node: -5 is not a price" },
        { "{\"nic\": \"$1800\", \"amortize\": \"4y\"}",
          "bad.json: price.nic: \"$1800\" is not a price" },
        { "{\"gpu_hour\": true}", "bad.json: price.gpu_hour: true is not a price" },
        { "{\"node\": 1e13, \"amortize\": \"4y\"}",
          "bad.json: price.node: 10000000000000 is not a price" },
        { "{\"rack\": 5, \"node\": 1, \"amortize\": \"4y\"}",
          "bad.json: price: unknown key \"rack\"" },
        { "{\"switch_port\": 1200}",
          "bad.json: price: \"switch_port\" is a purchase price: give \"amortize\"" },
        { "{\"node\": 1, \"amortize\": \"4\"}", "bad.json: price.amortize: \"4\" is not a period" },
        { "{\"node\": 1, \"amortize\": \"-1y\"}", "bad.json: price.amortize: \"-1y\"" },
        { "{\"currency\": \"USD\"}", "bad.json: price: a price block gives at least one of" },
        { "\"250000\"", "bad.json: price: " },
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *json = g_strdup_printf(
            "{\"devices\": [{\"name\": \"g\", \"kind\": \"gpu\", \"node\": 0, \"launch\": \"1 "
            "us\", \"step_overhead\": \"1 us\", \"reduce_bandwidth\": \"1 GB/s\", "
            "\"copy_bandwidth\": \"1 GB/s\"}], \"links\": [], \"price\": %s}",
            cases[i].block);
        g_autoptr(GError) error = NULL;
        g_autoptr(CsTopo) topo = cs_topo_load_data(json, "bad.json", &error);
        g_assert_null(topo);
        g_assert_nonnull(error);
        g_test_message("%s -> %s", cases[i].block, error->message);
        g_assert_nonnull(strstr(error->message, cases[i].message));
    }
}

/* ---- Templates ---- */

static void
test_template_hgx16(void)
{
    g_autoptr(CsTopo) topo = load_ok("hgx-h100x8-16n");

    g_test_summary("16 nodes x (8 GPUs + NVSwitch + 8 NICs) + 8 rails + 1 spine = 281 devices; "
                   "directed links: 16 x 16 x 2 in nodes + 128 x 2 NIC-rail + 8 x 2 rail-spine "
                   "= 784; bisection: 8 nodes x 8 NICs at the 48.006 GB/s PCIe bottleneck");
    g_assert_cmpint(cs_topo_n_devices(topo), ==, 281);
    g_assert_cmpint(cs_topo_n_links(topo), ==, 784);
    g_assert_cmpint(cs_topo_n_ranks(topo), ==, 128);
    g_assert_cmpint(cs_topo_n_nodes(topo), ==, 16);
    g_assert_cmpint(cs_topo_ranks_per_node(topo), ==, 8);
    int d = cs_topo_find_device(topo, "n3/gpu5");
    g_assert_cmpint(d, >=, 0);
    g_assert_cmpint(cs_topo_rank_device(topo, 3 * 8 + 5), ==, d);
    g_assert_cmpint(cs_topo_rank_node(topo, 29), ==, 3);
    g_assert_cmpint(cs_topo_device(topo, d)->node, ==, 3);
    g_assert_cmpint(cs_topo_device(topo, cs_topo_find_device(topo, "rail7"))->node, ==, -1);
    assert_close(cs_topo_bisection_bw(topo), 64 * 48.006e9);
    g_assert_true(cs_topo_has_nvls(topo));
    g_assert_false(cs_topo_has_sharp(topo));
    assert_close(cs_topo_injection_bw(topo, 0, CS_LINK_CLASS_NET), 48.006e9);
    assert_close(cs_topo_injection_bw(topo, 0, CS_LINK_CLASS_NVLINK), 370.8e9);
}

static void
test_template_domains(void)
{
    g_autoptr(CsTopo) topo = load_text(
        "{\"domains\": 2, \"node\": \"gb200-nvl72\", \"network\": {\"kind\": \"ib\", "
        "\"nics_per_node\": 4, \"nic_bandwidth\": \"400 Gb/s\", \"nic_alpha\": \"0.3 us\", "
        "\"switch_alpha\": \"0.13 us\", \"rail_optimized\": true, \"nic_link\": {\"kind\": "
        "\"pcie\", \"bandwidth\": \"63 GB/s\", \"alpha\": \"0.2 us\"}}}");

    g_test_summary("Two NVL72 racks as NVLink domains over InfiniBand: 144 ranks on 36 trays, "
                   "each rack's switch outside its trays; trays of one rack meet over that "
                   "switch, racks over the tray's NIC of the GPU, NIC j of every tray on rail j");
    g_assert_cmpint(cs_topo_n_ranks(topo), ==, 144);
    g_assert_cmpint(cs_topo_n_nodes(topo), ==, 36);
    g_assert_cmpint(cs_topo_ranks_per_node(topo), ==, 4);
    g_assert_cmpint(cs_topo_rank_node(topo, 72), ==, 18);
    int sw = cs_topo_find_device(topo, "d1/nvlink-switch");
    g_assert_cmpint(sw, >=, 0);
    g_assert_cmpint(cs_topo_device(topo, sw)->node, ==, -1);
    g_autofree char *rack = route_names(topo, 0, 5);
    g_assert_cmpstr(rack, ==, "d0/nvlink-switch d0/tray1/gpu1");
    g_assert_cmpint(cs_topo_route(topo, 0, 5)->link_class, ==, CS_LINK_CLASS_NVLINK);
    g_autofree char *across = route_names(topo, 1, 73);
    g_assert_cmpstr(across, ==, "d0/node0/nic1 rail1 d1/node0/nic1 d1/tray0/gpu1");
    g_assert_true(cs_topo_has_nvls(topo));

    g_autoptr(GError) error = NULL;
    g_autoptr(CsTopo) both = cs_topo_load_data(
        "{\"domains\": 2, \"nodes\": 2, \"node\": \"gb200-nvl72\", \"network\": {}}", "both.json",
        &error);
    g_assert_null(both);
    g_assert_nonnull(strstr(error->message, "both.json: domains: give \"nodes\""));
    g_clear_error(&error);
    g_autoptr(CsTopo) multi = cs_topo_load_data(
        "{\"nodes\": 2, \"node\": \"gb200-nvl72\", \"network\": {\"kind\": \"ib\", "
        "\"nics_per_node\": 4, \"nic_bandwidth\": \"400 Gb/s\", \"nic_alpha\": \"0.3 us\", "
        "\"switch_alpha\": \"0.13 us\"}}",
        "multi.json", &error);
    g_assert_null(multi);
    g_assert_nonnull(strstr(error->message, "must be one node"));
}

static void
test_template_hgx128(void)
{
    g_autoptr(CsTopo) topo = load_ok("hgx-h100x8-128n");

    g_test_summary("128 x 17 node devices + 4 units x 8 rails + spine = 2209 devices; links "
                   "128 x 32 + 1024 x 2 + 32 x 2 = 6208; SHARP declared");
    g_assert_cmpint(cs_topo_n_devices(topo), ==, 2209);
    g_assert_cmpint(cs_topo_n_links(topo), ==, 6208);
    g_assert_cmpint(cs_topo_n_ranks(topo), ==, 1024);
    g_assert_true(cs_topo_has_sharp(topo));
    /* Same rail inside one unit: 4 hops; same rail across units: via the spine, 6. */
    g_autofree char *in_unit = route_names(topo, 0, 8);
    g_assert_cmpstr(in_unit, ==, "n0/nic0 su0/rail0 n1/nic0 n1/gpu0");
    g_autofree char *across = route_names(topo, 0, 32 * 8);
    g_assert_cmpstr(across, ==, "n0/nic0 su0/rail0 spine su1/rail0 n32/nic0 n32/gpu0");
}

static void
test_template_inline(void)
{
    g_autoptr(CsTopo) topo = load_fixture("template_inline.json");

    g_test_summary("2 nodes x (2 GPUs + NVSwitch) + 1 made NIC each + one leaf: 9 devices; "
                   "1 NIC for 2 GPUs: both GPUs attach to it");
    g_assert_cmpint(cs_topo_n_devices(topo), ==, 9);
    g_assert_cmpint(cs_topo_n_ranks(topo), ==, 4);
    g_autofree char *r03 = route_names(topo, 0, 3);
    g_assert_cmpstr(r03, ==, "n0/nic0 leaf n1/nic0 n1/gpu1");
    const CsRoute *r = cs_topo_route(topo, 0, 3);
    /* 0.2 + (1 + 0.5) + 1 + 0.2 us; RoCE 100 Gb/s = 12.5 GB/s. */
    assert_close(r->alpha_s, 2.9e-6);
    assert_close(r->bw_Bps, 12.5e9);
    g_assert_cmpint(cs_topo_link(topo, r->links[1])->kind, ==, CS_LINK_ROCE);
}

static void
test_template_leaf_spine(void)
{
    g_autoptr(CsTopo) topo = load_fixture("template_leaf_spine.json");

    g_test_summary("4 nodes, 2 per leaf, 100 Gb/s NICs, 2:1 oversubscribed: each leaf's uplink "
                   "is 2 ports x 12.5 / 2 = 12.5 GB/s, which is the bisection (ranks 0,1 vs 2,3)");
    g_assert_nonnull(topo);
    g_assert_cmpint(cs_topo_find_device(topo, "leaf1"), >=, 0);
    g_assert_cmpint(cs_topo_find_device(topo, "spine"), >=, 0);
    assert_close(cs_topo_bisection_bw(topo), 12.5e9);
    g_autofree char *r02 = route_names(topo, 0, 2);
    g_assert_cmpstr(r02, ==, "n0/nic0 leaf0 spine leaf1 n2/nic0 n2/cpu0");
    g_assert_true(cs_topo_has_sharp(topo));
    g_assert_false(cs_topo_has_nvls(topo));
}

static void
test_template_leaf_partial(void)
{
    g_autoptr(CsTopo) topo = load_fixture("template_leaf_partial.json");

    g_test_summary("4 nodes under nodes_per_leaf 8 and nodes_per_pod 16: a partly filled leaf "
                   "group and pod (the SuperPOD RA leaves the rest unused), so every NIC is on "
                   "one leaf, with no spine or core, as with nodes_per_leaf 4");
    g_assert_nonnull(topo);
    g_assert_cmpint(cs_topo_find_device(topo, "leaf"), >=, 0);
    g_assert_cmpint(cs_topo_find_device(topo, "spine"), ==, -1);
    g_assert_cmpint(cs_topo_find_device(topo, "core"), ==, -1);
    g_autofree char *r03 = route_names(topo, 0, 3);
    g_assert_cmpstr(r03, ==, "n0/nic0 leaf n3/nic0 n3/cpu0");
}

static void
test_template_pods(void)
{
    g_autoptr(CsTopo) topo = load_fixture("template_pods.json");

    g_test_summary("8 nodes, 2 per leaf, 4 per pod, 100 Gb/s NICs (12.5 GB/s): a pod's leaves "
                   "uplink to its spine at 2 ports x 12.5 = 25 GB/s each (1:1); each pod spine "
                   "to the core at 4 ports x 12.5 / 4 = 12.5 GB/s (4:1). Routes inside a pod stay "
                   "under its spine, between pods they cross the core; the bisection (ranks 0-3 "
                   "vs 4-7, one pod each) is one pod uplink, 12.5 GB/s; tiers 1:1, 4:1, top");
    g_assert_nonnull(topo);
    g_assert_cmpint(cs_topo_find_device(topo, "spine"), ==, -1);
    g_assert_cmpint(cs_topo_find_device(topo, "pod1/spine"), >=, 0);
    g_assert_cmpint(cs_topo_find_device(topo, "core"), >=, 0);
    g_autofree char *r02 = route_names(topo, 0, 2);
    g_assert_cmpstr(r02, ==, "n0/nic0 leaf0 pod0/spine leaf1 n2/nic0 n2/cpu0");
    g_autofree char *r04 = route_names(topo, 0, 4);
    g_assert_cmpstr(r04, ==, "n0/nic0 leaf0 pod0/spine core pod1/spine leaf2 n4/nic0 n4/cpu0");
    g_autofree char *r75 = route_names(topo, 7, 5);
    g_assert_cmpstr(r75, ==, "n7/nic0 leaf3 pod1/spine leaf2 n5/nic0 n5/cpu0");
    const CsRoute *r = cs_topo_route(topo, 0, 4);
    assert_close(r->bw_Bps, 12.5e9);
    assert_close(cs_topo_bisection_bw(topo), 12.5e9);
    g_autoptr(GArray) tiers = cs_topo_fabric_tiers(topo);
    g_assert_cmpuint(tiers->len, ==, 3);
    const double ratios[] = { 1.0, 4.0 };
    const int switches[] = { 4, 2, 1 };
    for (guint t = 0; t < 3; t++) {
        const CsFabricTier *ft = &g_array_index(tiers, CsFabricTier, t);
        g_assert_cmpint(ft->n_switches, ==, switches[t]);
        if (t < 2) {
            assert_close(ft->ratio_min, ratios[t]);
            assert_close(ft->ratio_max, ratios[t]);
        }
        else
            g_assert_cmpint(ft->n_uplinked, ==, 0);
    }
    /* Routes of a bigger set: every pair of nodes crosses the core exactly when their pods
     * differ. */
    const int core = cs_topo_find_device(topo, "core");
    for (int a = 0; a < 8; a++)
        for (int b = 0; b < 8; b++) {
            if (a == b)
                continue;
            const CsRoute *ab = cs_topo_route(topo, a, b);
            gboolean via_core = FALSE;
            for (int k = 0; k < ab->n_links; k++)
                via_core = via_core || cs_topo_link(topo, ab->links[k])->dst == core;
            g_assert_cmpint(via_core, ==, a / 4 != b / 4);
        }
}

static void
test_template_cpu_cluster(void)
{
    g_autoptr(CsTopo) topo = load_ok("eth-cpu-8n");

    g_test_summary("8 x (CPU + NIC) + one switch = 17 devices; route CPU-NIC-switch-NIC-CPU, "
                   "alpha 0.5 + (10 + 1.2) + 10 + 0.5 = 22.2 us at 10 Gb/s = 1.25 GB/s; "
                   "bisection 4 x 1.25 GB/s");
    g_assert_cmpint(cs_topo_n_devices(topo), ==, 17);
    g_assert_cmpint(cs_topo_n_links(topo), ==, 32);
    g_assert_cmpint(cs_topo_n_nodes(topo), ==, 8);
    g_assert_cmpint(cs_topo_ranks_per_node(topo), ==, 1);
    const CsRoute *r = cs_topo_route(topo, 0, 7);
    g_assert_cmpint(r->n_links, ==, 4);
    assert_close(r->alpha_s, 22.2e-6);
    assert_close(r->bw_Bps, 1.25e9);
    assert_close(cs_topo_bisection_bw(topo), 5e9);
    assert_close(cs_topo_injection_bw(topo, 3, CS_LINK_CLASS_NET), 1.25e9);
    assert_close(cs_topo_injection_bw(topo, 3, CS_LINK_CLASS_PCI), 7.88e9);
    g_assert_cmpint(cs_topo_device(topo, cs_topo_rank_device(topo, 0))->kind, ==, CS_DEVICE_CPU);
}

/* ---- Copies, JSON, search ---- */

static void
test_copy_with(void)
{
    g_autoptr(CsTopo) topo = load_ok("dgx-h100x4");
    CsGpuSpec gpu
        = { .launch_s = 7e-6, .step_overhead_s = 1e-6, .reduce_Bps = 1e12, .copy_Bps = 2e12 };
    g_autoptr(CsTopo) copy = cs_topo_copy_with(topo, CS_LINK_NVSWITCH, 1e-6, 20e9, &gpu);

    /* 18 lanes x 20 GB/s fitted = 360 GB/s; raw stays 450; the original is untouched. */
    assert_close(cs_topo_link(copy, 0)->bw_Bps, 360e9);
    assert_close(cs_topo_link(copy, 0)->raw_bw_Bps, 450e9);
    assert_close(cs_topo_route(copy, 0, 1)->alpha_s, 2e-6);
    assert_close(cs_topo_rank_gpu(copy, 3)->launch_s, 7e-6);
    assert_close(cs_topo_link(topo, 0)->bw_Bps, 370.8e9);
    assert_close(cs_topo_rank_gpu(topo, 3)->launch_s, 4.5e-6);

    /* Negative values keep what was there; other kinds are untouched. */
    g_autoptr(CsTopo) same = cs_topo_copy_with(topo, CS_LINK_IB, 5e-6, 1e9, NULL);
    assert_close(cs_topo_link(same, 0)->bw_Bps, 370.8e9);
    g_autoptr(CsTopo) keep = cs_topo_copy_with(topo, CS_LINK_NVSWITCH, -1.0, -1.0, NULL);
    assert_close(cs_topo_link(keep, 0)->alpha_s, 0.1e-6);
}

static void
test_adjust(void)
{
    g_autoptr(CsTopo) topo = load_ok("hgx-h100x8-2n");
    CsTopoAdjust adj;

    cs_topo_adjust_init(&adj);
    adj.link_bw_scale[CS_LINK_PCIE] = 2.0;
    adj.link_alpha_scale[CS_LINK_IB] = 3.0;
    adj.hop_latency_s[2][CS_LINK_CLASS_NET] = 14e-6;
    adj.launch_scale = 0.5;
    g_autoptr(CsTopo) t = cs_topo_adjust(topo, &adj);

    g_test_summary("Doubling PCIe makes IB (50 GB/s) the bottleneck of the same-rail route; "
                   "its alpha becomes 0.2 + 3 x (0.3 + 0.13) + 3 x 0.3 + 0.2 = 2.59 us");
    const CsRoute *r = cs_topo_route(t, 0, 8);
    assert_close(r->bw_Bps, 50e9);
    assert_close(r->alpha_s, 2.59e-6);
    assert_close(cs_topo_rank_gpu(t, 5)->launch_s, 2.25e-6);
    assert_close(cs_topo_hop_latency_override(t, 2, CS_LINK_CLASS_NET), 14e-6);
    g_assert_cmpfloat(cs_topo_hop_latency_override(t, 0, CS_LINK_CLASS_NET), <, 0.0);
    g_assert_cmpfloat(cs_topo_hop_latency_override(topo, 2, CS_LINK_CLASS_NET), <, 0.0);
    /* The original is untouched; raw bandwidth keeps the datasheet value. */
    assert_close(cs_topo_route(topo, 0, 8)->bw_Bps, 48.006e9);
    int pcie = cs_topo_route(t, 0, 8)->links[0];
    assert_close(cs_topo_link(t, pcie)->raw_bw_Bps, 63e9);

    /* The overrides survive the JSON round trip, and calibrate's records are accepted. */
    g_autofree char *json = cs_topo_to_json(t);
    g_assert_nonnull(strstr(json, "\"protocols\""));
    g_autoptr(CsTopo) back = load_text(json);
    assert_close(cs_topo_hop_latency_override(back, 2, CS_LINK_CLASS_NET), 14e-6);
    g_autoptr(CsTopo) rec = load_text(
        "{" GPU_SPEC ", \"devices\": [{\"name\": \"g\", \"kind\": \"gpu\"}], \"links\": [], "
        "\"protocols\": {\"LL\": {\"nvlink\": \"0.6 us\"}}, "
        "\"calibrated_from\": [\"a.txt\"], \"calibration\": {\"any\": 1}}");
    assert_close(cs_topo_hop_latency_override(rec, 0, CS_LINK_CLASS_NVLINK), 0.6e-6);
}

/* "default_protocols" as a mask over LL, LL128, Simple (bits 0, 1, 2, as topo.h says): absent
 * means all (0); a device's list replaces the "gpu" object's; mi300x-x8-xgmi leaves LL128
 * out, as RCCL does there. Lists that share no protocol load; a prediction among them needs a
 * forced protocol (/predict/best/no-shared-protocol). */
static void
test_default_protocols(void)
{
    enum { LL = 1u << 0, LL128 = 1u << 1, SIMPLE = 1u << 2 };
    g_autoptr(CsTopo) plain = load_ok("dgx-h100x4");
    g_assert_cmpuint(cs_topo_rank_gpu(plain, 0)->default_protos, ==, 0);
    g_autoptr(CsTopo) mi300x = load_ok("mi300x-x8-xgmi");
    for (int r = 0; r < cs_topo_n_ranks(mi300x); r++)
        g_assert_cmpuint(cs_topo_rank_gpu(mi300x, r)->default_protos, ==, LL | SIMPLE);

    g_autoptr(CsTopo) mixed = load_text(
        "{\"gpu\": {\"launch\": \"4 us\", \"step_overhead\": \"0.2 us\", "
        "\"reduce_bandwidth\": \"1000 GB/s\", \"copy_bandwidth\": \"1500 GB/s\", "
        "\"default_protocols\": [\"Simple\"]}, \"devices\": [{\"name\": \"g0\", \"kind\": "
        "\"gpu\"}, {\"name\": \"g1\", \"kind\": \"gpu\", \"default_protocols\": [\"Simple\", "
        "\"LL\"]}], \"links\": [{\"endpoints\": [\"g0\", \"g1\"], \"kind\": \"nvlink\", "
        "\"bandwidth\": \"25 GB/s\", \"alpha\": \"0.5 us\"}]}");
    g_assert_cmpuint(cs_topo_rank_gpu(mixed, 0)->default_protos, ==, SIMPLE);
    g_assert_cmpuint(cs_topo_rank_gpu(mixed, 1)->default_protos, ==, LL | SIMPLE);
}

static void
assert_same_topo(const CsTopo *a, const CsTopo *b)
{
    g_assert_cmpint(cs_topo_n_devices(a), ==, cs_topo_n_devices(b));
    g_assert_cmpint(cs_topo_n_links(a), ==, cs_topo_n_links(b));
    g_assert_cmpint(cs_topo_n_ranks(a), ==, cs_topo_n_ranks(b));
    g_assert_cmpint(cs_topo_n_nodes(a), ==, cs_topo_n_nodes(b));
    for (int i = 0; i < cs_topo_n_devices(a); i++) {
        g_assert_cmpstr(cs_topo_device(a, i)->name, ==, cs_topo_device(b, i)->name);
        g_assert_cmpint(cs_topo_device(a, i)->node, ==, cs_topo_device(b, i)->node);
    }
    /* Duplex pairs come back in a different order: compare link multisets per device pair
     * through the routes, which fix every parameter that matters. */
    int P = cs_topo_n_ranks(a);
    for (int s = 0; s<P; s += P> 16 ? 7 : 1) {
        for (int t = 0; t < P; t++) {
            const CsRoute *x = cs_topo_route(a, s, t);
            const CsRoute *y = cs_topo_route(b, s, t);
            g_assert_cmpint(x->n_links, ==, y->n_links);
            assert_close(x->alpha_s, y->alpha_s);
            assert_close(x->bw_Bps, y->bw_Bps);
            g_assert_cmpint(x->link_class, ==, y->link_class);
        }
        assert_close(cs_topo_rank_gpu(a, s)->reduce_Bps, cs_topo_rank_gpu(b, s)->reduce_Bps);
        g_assert_cmpuint(cs_topo_rank_gpu(a, s)->default_protos, ==,
                         cs_topo_rank_gpu(b, s)->default_protos);
    }
    assert_close(cs_topo_bisection_bw(a), cs_topo_bisection_bw(b));
    g_assert_cmpint(cs_topo_has_nvls(a), ==, cs_topo_has_nvls(b));
}

static void
test_to_json_round_trip(gconstpointer data)
{
    const char *name = data;
    g_autoptr(CsTopo) topo = load_ok(name);
    g_autofree char *json = cs_topo_to_json(topo);
    g_autoptr(CsTopo) back = load_text(json);
    assert_same_topo(topo, back);

    /* Calibrated values survive, even above the datasheet (no efficiency > 1 written). */
    g_autoptr(CsTopo) fast = cs_topo_copy_with(topo, cs_topo_link(topo, 0)->kind, 2e-6, 1e12, NULL);
    g_autofree char *fast_json = cs_topo_to_json(fast);
    g_autoptr(CsTopo) fast_back = load_text(fast_json);
    assert_same_topo(fast, fast_back);
}

static void
test_search_path(void)
{
    g_autofree char *dir = g_test_build_filename(G_TEST_DIST, "data", "topo", "searchdir", NULL);
    g_autofree char *old = g_strdup(g_getenv("COLLSIM_TOPO_PATH"));
    g_autoptr(GError) error = NULL;

    g_setenv("COLLSIM_TOPO_PATH", dir, TRUE);
    g_autoptr(CsTopo) found = cs_topo_load("only-here", &error);
    g_assert_no_error(error);
    g_assert_cmpstr(cs_topo_name(found), ==, "only-here");
    g_auto(GStrv) dirs = cs_topo_search_dirs();
    g_assert_cmpstr(dirs[0], ==, dir);
    g_assert_cmpstr(dirs[1], ==, COLLSIM_SOURCE_TOPODIR);

    g_unsetenv("COLLSIM_TOPO_PATH");
    g_autoptr(CsTopo) missing = cs_topo_load("only-here", &error);
    g_assert_null(missing);
    g_assert_error(error, CS_TOPO_ERROR, CS_TOPO_ERROR_NOT_FOUND);
    g_assert_nonnull(strstr(error->message, "no topology named \"only-here\""));
    g_clear_error(&error);

    /* The source tree's library is always searched. */
    g_autoptr(CsTopo) shipped = cs_topo_load("dgx-h100x4", &error);
    g_assert_no_error(error);
    g_assert_nonnull(shipped);
    g_autoptr(CsTopo) by_file = cs_topo_load("no/such/file.json", &error);
    g_assert_null(by_file);
    g_assert_error(error, CS_TOPO_ERROR, CS_TOPO_ERROR_NOT_FOUND);
    g_assert_cmpstr(error->message, ==, "no/such/file.json: no such topology file");
    g_clear_error(&error);

    /* A directory given as a file says so; it is no missing file. */
    g_autoptr(CsTopo) from_dir = cs_topo_load(dir, &error);
    g_assert_null(from_dir);
    g_assert_error(error, CS_TOPO_ERROR, CS_TOPO_ERROR_NOT_FOUND);
    g_autofree char *want_dir = g_strdup_printf("%s: is a directory, not a topology file", dir);
    g_assert_cmpstr(error->message, ==, want_dir);
    g_clear_error(&error);

    /* $COLLSIM_TOPO_PATH naming the source tree's directory: searched (and listed) once. */
    g_setenv("COLLSIM_TOPO_PATH", COLLSIM_SOURCE_TOPODIR, TRUE);
    g_auto(GStrv) once = cs_topo_search_dirs();
    g_assert_cmpstr(once[0], ==, COLLSIM_SOURCE_TOPODIR);
    g_assert_cmpstr(once[1], !=, COLLSIM_SOURCE_TOPODIR);
    g_assert_cmpuint(g_strv_length(once), ==, 2);
    if (old != NULL)
        g_setenv("COLLSIM_TOPO_PATH", old, TRUE);
    else
        g_unsetenv("COLLSIM_TOPO_PATH");
}

static void
test_load_data_name(void)
{
    g_autoptr(CsTopo) topo = load_text("{\"name\": \"tiny\", " GPU_SPEC ", \"devices\": "
                                       "[{\"name\": \"g\", \"kind\": \"gpu\"}], \"links\": []}");
    g_assert_cmpstr(cs_topo_name(topo), ==, "tiny");
    g_assert_null(cs_topo_path(topo));
    g_assert_cmpint(cs_topo_n_ranks(topo), ==, 1);
    assert_close(cs_topo_bisection_bw(topo), 0.0);
    assert_close(cs_topo_route(topo, 0, 0)->bw_Bps, 1500e9);
}

static void
test_kind_names(void)
{
    g_assert_cmpstr(cs_link_kind_name(CS_LINK_SHM), ==, "shm");
    g_assert_cmpstr(cs_device_kind_name(CS_DEVICE_PCIE_SWITCH), ==, "pcie_switch");
    g_assert_cmpint(cs_link_kind_class(CS_LINK_XGMI), ==, CS_LINK_CLASS_NVLINK);
    g_assert_cmpint(cs_link_kind_class(CS_LINK_SHM), ==, CS_LINK_CLASS_PCI);
    g_assert_cmpint(cs_link_kind_class(CS_LINK_ROCE), ==, CS_LINK_CLASS_NET);
    g_assert_cmpstr(cs_link_class_name(CS_LINK_CLASS_NET), ==, "net");
}

/* ---- json_util ---- */

static void
test_json_parse_position(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(cJSON) bad = cs_json_parse("{\n  \"a\": 1,\n  \"b\": tru\n}", "x.json", CS_TOPO_ERROR,
                                         CS_TOPO_ERROR_PARSE, &error);
    g_assert_null(bad);
    g_assert_error(error, CS_TOPO_ERROR, CS_TOPO_ERROR_PARSE);
    g_assert_true(g_str_has_prefix(error->message, "x.json:3:"));
    g_clear_error(&error);

    g_autoptr(cJSON) trailing
        = cs_json_parse("{} x", "y.json", CS_TOPO_ERROR, CS_TOPO_ERROR_PARSE, &error);
    g_assert_null(trailing);
    g_assert_cmpstr(error->message, ==, "y.json:1:4: not valid JSON near 'x'");
    g_clear_error(&error);

    /* Bytes that are not UTF-8 (a binary file, a name in Latin-1) are refused before parsing
     * (JSON is UTF-8, RFC 8259), at their line and column; a real UTF-8 character stays as
     * typed. */
    g_autoptr(cJSON) binary = cs_json_parse("\xff\x01"
                                            "abc",
                                            "b.bin", CS_TOPO_ERROR, CS_TOPO_ERROR_PARSE, &error);
    g_assert_null(binary);
    g_assert_cmpstr(error->message, ==,
                    "b.bin:1:1: not UTF-8 text (byte 0xff); JSON files are UTF-8");
    g_clear_error(&error);
    g_autoptr(cJSON) latin1 = cs_json_parse("{\n  \"name\": \"caf\xe9\"\n}", "l.json",
                                            CS_TOPO_ERROR, CS_TOPO_ERROR_PARSE, &error);
    g_assert_null(latin1);
    g_assert_cmpstr(error->message, ==,
                    "l.json:2:15: not UTF-8 text (byte 0xe9); JSON files are UTF-8");
    g_clear_error(&error);
    g_autoptr(cJSON) accent
        = cs_json_parse("{\"a\": \xc3\xa9}", "u.json", CS_TOPO_ERROR, CS_TOPO_ERROR_PARSE, &error);
    g_assert_null(accent);
    g_assert_cmpstr(error->message, ==, "u.json:1:7: not valid JSON near '\xc3\xa9}'");
}

/* Setup: a document built from outside text whose key and value hold invalid UTF-8 (a file
 * name in Latin-1). Expectation: cs_json_print() writes U+FFFD for the bad bytes, so the
 * output is valid UTF-8 and parses back. */
static void
test_json_print_utf8(void)
{
    g_autoptr(cJSON) doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "origin", "caf\xe9.txt");
    cJSON *inner = cJSON_AddObjectToObject(doc, "headers");
    cJSON_AddStringToObject(inner, "k\xff", "ok \xc3\xa9");
    g_autofree char *text = cs_json_print(doc, FALSE);
    g_assert_true(g_utf8_validate(text, -1, NULL));
    g_assert_cmpstr(text, ==,
                    "{\"origin\":\"caf\xef\xbf\xbd.txt\",\"headers\":{\"k\xef\xbf\xbd\":\"ok "
                    "\xc3\xa9\"}}");
    g_autoptr(GError) error = NULL;
    g_autoptr(cJSON) back = cs_json_parse(text, "out", CS_TOPO_ERROR, CS_TOPO_ERROR_PARSE, &error);
    g_assert_no_error(error);
    g_assert_nonnull(back);
}

static void
test_json_getters(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(cJSON) doc = cs_json_parse("{\"t\": \"2 us\", \"s\": \"4 MiB\", \"f\": 2.5, "
                                         "\"o\": {\"k\": 1}}",
                                         "z.json", CS_TOPO_ERROR, CS_TOPO_ERROR_PARSE, &error);
    CsJsonCtx ctx = { "z.json", CS_TOPO_ERROR, CS_TOPO_ERROR_INVALID };
    double t = 0.0;
    gint64 size = 0;
    int i = 7;

    g_assert_true(cs_json_get_time(&ctx, doc, "", "t", TRUE, &t, &error));
    assert_close(t, 2e-6);
    g_assert_true(cs_json_get_size(&ctx, doc, "", "s", TRUE, &size, &error));
    g_assert_cmpint(size, ==, 4 << 20);
    g_assert_true(cs_json_get_int(&ctx, doc, "", "absent", FALSE, 0, 9, &i, &error));
    g_assert_cmpint(i, ==, 7);
    g_assert_false(cs_json_get_int(&ctx, doc, "", "f", TRUE, 0, 9, &i, &error));
    g_assert_cmpstr(error->message, ==, "z.json: f: expected an integer, got 2.5");
    g_clear_error(&error);
    const cJSON *o = cs_json_member(doc, "o");
    static const char *const allowed[] = { "j", NULL };
    g_assert_false(cs_json_check_object(&ctx, o, "o", allowed, &error));
    g_assert_cmpstr(error->message, ==, "z.json: o: unknown key \"k\" (allowed: j)");
    g_clear_error(&error);
    g_autofree char *p = cs_json_path_element("links", 3);
    g_autofree char *q = cs_json_path_member(p, "bandwidth");
    g_assert_cmpstr(q, ==, "links[3].bandwidth");
}

/* ---- CLI (when the binary is built) ---- */

static char *
run_collsim(const char *args, int *status)
{
    const char *bin = g_getenv("COLLSIM_BIN");
    g_autofree char *cmd = g_strdup_printf("%s %s", bin, args);
    g_autofree char *out = NULL, *err = NULL;
    g_autoptr(GError) error = NULL;

    if (!g_spawn_command_line_sync(cmd, &out, &err, status, &error))
        g_error("%s", error->message);
    return g_strconcat(out, err, NULL);
}

static gboolean
have_collsim(void)
{
    const char *bin = g_getenv("COLLSIM_BIN");
    if (bin == NULL || !g_file_test(bin, G_FILE_TEST_IS_EXECUTABLE)) {
        g_test_skip("COLLSIM_BIN not set or not built");
        return FALSE;
    }
    return TRUE;
}

static void
test_cli_check(void)
{
    if (!have_collsim())
        return;
    int status = 0;
    g_autofree char *ok = run_collsim("topo check dgx-h100x4 hgx-h100x8-2n", &status);
    g_assert_true(g_spawn_check_wait_status(status, NULL));
    g_assert_nonnull(strstr(ok, "dgx-h100x4: ok (4 GPUs, 8 links)\n"));
    g_assert_nonnull(strstr(ok, "hgx-h100x8-2n: ok (16 GPUs, 112 links)\n"));

    g_autofree char *bad_path
        = g_test_build_filename(G_TEST_DIST, "data", "topo", "bad_unit.json", NULL);
    g_autofree char *args = g_strdup_printf("topo check dgx-h100x4 %s", bad_path);
    g_autofree char *bad = run_collsim(args, &status);
    g_assert_true(WIFEXITED(status));
    g_assert_cmpint(WEXITSTATUS(status), ==, 2);
    g_assert_nonnull(strstr(bad, "links[0].bandwidth: \"400 GB\" is not a bandwidth"));
}

static void
test_cli_show(void)
{
    if (!have_collsim())
        return;
    int status = 0;
    g_autofree char *out = run_collsim("topo show hgx-h100x8-2n", &status);
    g_assert_true(g_spawn_check_wait_status(status, NULL));
    g_assert_nonnull(strstr(out, "ranks per node: 8"));
    g_assert_nonnull(strstr(out, "NVLS"));
    g_assert_nonnull(strstr(out, "bisection"));
    g_assert_null(strstr(out, "default protocols"));
    /* What a purchase is counted in: 8 rails x (2 NIC ports + 2 up) + 16 spine ports. */
    g_assert_nonnull(
        strstr(out, "\npurchase counts: 2 nodes, 16 NICs, 48 switch ports (of 50.0 GB/s)\n"));
    g_assert_null(strstr(out, "\nprice:"));
    g_autofree char *mesh = run_collsim("topo show mi300x-x8-xgmi", &status);
    g_assert_true(g_spawn_check_wait_status(status, NULL));
    g_assert_nonnull(strstr(mesh, "\ndefault protocols (when none is forced): LL Simple\n"));
    g_autofree char *list = run_collsim("topo list", &status);
    g_assert_true(g_spawn_check_wait_status(status, NULL));
    g_assert_nonnull(strstr(list, "gb200-nvl72"));
    /* Issue 33: one line per topology within 100 columns. */
    g_auto(GStrv) lines = g_strsplit(list, "\n", -1);
    for (char **l = lines; *l != NULL; l++)
        g_assert_cmpint(g_utf8_strlen(*l, -1), <=, 100);
}

static void
test_node_route_costs(void)
{
    g_test_summary("cs_topo_node_route_costs() gives every pair of a node the hops and "
                   "bottleneck of cs_topo_route(), from one search per source: on NVSwitch, "
                   "PCIe switches with host-memory staging, and an xGMI mesh; a rank of another "
                   "node is refused.");
    static const char *const names[] = { "dgx-h100x8", "pcie-l40sx8", "rtx2080ti-x2-pcie3-shm",
                                         "mi300x-x8-xgmi", "hgx-h100x8-2n" };
    for (guint t = 0; t < G_N_ELEMENTS(names); t++) {
        g_autoptr(CsTopo) topo = load_ok(names[t]);
        const int n = MIN(cs_topo_n_ranks(topo), cs_topo_ranks_per_node(topo));
        g_autofree int *ranks = g_new(int, n);
        g_autofree int *hops = g_new(int, n);
        g_autofree double *bw = g_new(double, n);
        for (int i = 0; i < n; i++)
            ranks[i] = i;
        for (int src = 0; src < n; src++) {
            g_assert_true(cs_topo_node_route_costs(topo, src, ranks, n, hops, bw));
            for (int dst = 0; dst < n; dst++) {
                if (dst == src)
                    continue;
                const CsRoute *r = cs_topo_route(topo, src, dst);
                g_assert_cmpint(hops[dst], ==, r->n_links);
                g_assert_cmpfloat(bw[dst], ==, r->bw_Bps);
            }
        }
        if (cs_topo_n_ranks(topo) > n) {
            const int other = n;
            g_assert_false(cs_topo_node_route_costs(topo, 0, &other, 1, hops, bw));
        }
    }
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_autoptr(GPtrArray) cases = g_ptr_array_new_with_free_func(case_free);
    g_auto(GStrv) shipped = cs_topo_list_shipped();

    add_conformance_cases(cases);
    for (char **n = shipped; *n != NULL; n++) {
        g_autofree char *path = g_strdup_printf("/topo/shipped/%s", *n);
        g_test_add_data_func(path, *n, test_shipped);
    }
    g_test_add_func("/topo/shipped/list", test_list_shipped);
    g_test_add_func("/topo/shipped/nvswitch-variants", test_nvswitch_variants);
    g_test_add_func("/topo/load/dgx-h100x4", test_dgx_h100x4);
    g_test_add_func("/topo/load/data-name", test_load_data_name);
    g_test_add_func("/topo/routes/nvswitch-two-hops", test_routes_nvswitch);
    g_test_add_func("/topo/routes/cross-node-rail", test_routes_cross_node);
    g_test_add_func("/topo/routes/deterministic", test_routes_deterministic);
    g_test_add_func("/topo/routes/widest-on-ties", test_routes_widest);
    g_test_add_func("/topo/routes/gpu-transit-last-resort", test_routes_gpu_transit);
    g_test_add_func("/topo/routes/one-way-links", test_routes_directed);
    g_test_add_func("/topo/nics/per-channel", test_nics_per_channel);
    g_test_add_func("/topo/nics/shared", test_nics_shared);
    g_test_add_func("/topo/nics/behind-pcie-switch", test_nics_behind_switch);
    g_test_add_func("/topo/transport", test_transport);
    g_test_add_func("/topo/ranks/node-major", test_ranks_node_major);
    g_test_add_func("/topo/ranks/explicit", test_ranks_explicit);
    g_test_add_func("/topo/template/hgx-16n", test_template_hgx16);
    g_test_add_func("/topo/template/hgx-128n", test_template_hgx128);
    g_test_add_func("/topo/template/nvlink-domains", test_template_domains);
    g_test_add_func("/topo/template/inline-node-made-nics", test_template_inline);
    g_test_add_func("/topo/template/leaf-spine-oversubscribed", test_template_leaf_spine);
    g_test_add_func("/topo/template/leaf-partly-filled", test_template_leaf_partial);
    g_test_add_func("/topo/price/block", test_price_block);
    g_test_add_func("/topo/price/switch-ports", test_switch_ports);
    g_test_add_func("/topo/price/errors", test_price_errors);
    g_test_add_func("/topo/template/pods-three-tier", test_template_pods);
    g_test_add_func("/topo/template/cpu-cluster", test_template_cpu_cluster);
    g_test_add_func("/topo/copy-with", test_copy_with);
    g_test_add_func("/topo/adjust", test_adjust);
    g_test_add_func("/topo/gpu/default-protocols", test_default_protocols);
    static const char *const round_trip[] = { "dgx-h100x4", "rtx2080ti-x2-pcie3-shm",
                                              "mi300x-x8-xgmi", "hgx-h100x8-2n", "eth-cpu-8n" };
    for (gsize i = 0; i < G_N_ELEMENTS(round_trip); i++) {
        g_autofree char *path = g_strdup_printf("/topo/to-json/round-trip/%s", round_trip[i]);
        g_test_add_data_func(path, round_trip[i], test_to_json_round_trip);
    }
    g_test_add_func("/topo/search/path-and-names", test_search_path);
    g_test_add_func("/topo/kinds/names-and-classes", test_kind_names);
    g_test_add_func("/topo/json/parse-error-position", test_json_parse_position);
    g_test_add_func("/topo/json/typed-getters", test_json_getters);
    g_test_add_func("/topo/json/print-utf8", test_json_print_utf8);
    g_test_add_func("/topo/cli/check", test_cli_check);
    g_test_add_func("/topo/node-route-costs", test_node_route_costs);
    g_test_add_func("/topo/cli/show-and-list", test_cli_show);
    return g_test_run();
}
