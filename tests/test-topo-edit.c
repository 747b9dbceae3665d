// SPDX-License-Identifier: MIT
/* What-ifs (src/topo/topo_edit.c): "PATH=VALUE" edits of a topology's JSON before it is loaded,
 * and a template's NIC count overriding its named node's (src/topo/topo_template.c). */
#include "config.h"

#include <math.h>
#include <string.h>

#include <glib.h>

#include "topo/topo.h"

#define assert_close(a, b) g_assert_cmpfloat_with_epsilon((a), (b), fabs(b) * 1e-9 + 1e-18)

static CsTopo *
load_edited(const char *name, const char *const *edits)
{
    g_autoptr(GError) error = NULL;
    CsTopo *topo = cs_topo_load_edited(name, (char **)edits, &error);
    g_assert_no_error(error);
    g_assert_nonnull(topo);
    return topo;
}

/* The message of the error loading @name with @edits gives; asserts it is one line. */
static char *
edit_error(const char *name, const char *const *edits, int code)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTopo) topo = cs_topo_load_edited(name, (char **)edits, &error);
    g_assert_null(topo);
    g_assert_error(error, CS_TOPO_ERROR, code);
    g_assert_null(strchr(error->message, '\n'));
    return g_strdup(error->message);
}

/* The text of the shipped topology @name with @from replaced by @to (once). */
static char *
shipped_text_with(const char *name, const char *from, const char *to)
{
    g_autoptr(GError) error = NULL;
    g_autofree char *file = g_strconcat(name, ".json", NULL);
    g_autofree char *path = g_build_filename(g_getenv("COLLSIM_TOPO_PATH"), file, NULL);
    g_autofree char *text = NULL;
    g_file_get_contents(path, &text, NULL, &error);
    g_assert_no_error(error);
    g_autoptr(GString) s = g_string_new(text);
    g_assert_cmpuint(g_string_replace(s, from, to, 1), ==, 1);
    return g_string_free(g_steal_pointer(&s), FALSE);
}

/* The expanded graph of @topo as JSON, its "name" line left out. */
static char *
graph_without_name(const CsTopo *topo)
{
    g_autofree char *json = cs_topo_to_json(topo);
    g_autoptr(GString) out = g_string_new(NULL);
    g_auto(GStrv) lines = g_strsplit(json, "\n", -1);
    for (char **l = lines; *l != NULL; l++)
        if (strstr(*l, "\"name\": \"hgx-h100x8-2n") == NULL)
            g_string_append_printf(out, "%s\n", *l);
    return g_string_free(g_steal_pointer(&out), FALSE);
}

/* ---- Setting values ---- */

static void
test_same_as_edited_file(void)
{
    g_test_summary("Setup: hgx-h100x8-2n with --set network.nic_bandwidth=800Gb/s, and the same "
                   "file with \"400 Gb/s\" edited to \"800 Gb/s\" by hand. Expectation: the same "
                   "expanded graph (every NIC-leaf link 100 GB/s); the name says what was set.");
    static const char *const edits[] = { "network.nic_bandwidth=800Gb/s", NULL };
    g_autoptr(CsTopo) set = load_edited("hgx-h100x8-2n", edits);
    g_autofree char *text = shipped_text_with("hgx-h100x8-2n", "\"400 Gb/s\"", "\"800 Gb/s\"");
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTopo) edited = cs_topo_load_data(text, "hgx-h100x8-2n.json", &error);
    g_assert_no_error(error);

    g_assert_cmpstr(cs_topo_name(set), ==, "hgx-h100x8-2n [network.nic_bandwidth=800Gb/s]");
    g_autofree char *a = graph_without_name(set);
    g_autofree char *b = graph_without_name(edited);
    /* Compared whole (a few thousand lines: a diff is not printed). */
    g_assert_true(strcmp(a, b) == 0);
    int n_ib = 0;
    for (int i = 0; i < cs_topo_n_links(set); i++) {
        const CsLink *l = cs_topo_link(set, i);
        if (l->kind == CS_LINK_IB && l->count == 1) {
            assert_close(l->bw_Bps, 100e9);
            n_ib++;
        }
    }
    g_assert_cmpint(n_ib, ==, 32); /* 16 NICs, both directions */
}

static void
test_named_node(void)
{
    g_test_summary("node.gpu.launch on a template whose node is a shipped name: the node is "
                   "read in and changed, every GPU of every node launches in 3 us (4.5 us in "
                   "dgx-h100x8)");
    static const char *const edits[] = { "node.gpu.launch=3us", NULL };
    g_autoptr(CsTopo) topo = load_edited("hgx-h100x8-2n", edits);
    g_assert_cmpint(cs_topo_n_ranks(topo), ==, 16);
    for (int r = 0; r < 16; r++)
        assert_close(cs_topo_rank_gpu(topo, r)->launch_s, 3e-6);
}

static void
test_index_forms(void)
{
    g_test_summary("links[8].alpha and links.8.alpha name the same element; later edits win");
    static const char *const brack[] = { "links[8].alpha=1us", NULL };
    static const char *const dot[] = { "links.8.alpha=2us", "links.8.alpha=1us", NULL };
    g_autoptr(CsTopo) a = load_edited("dgx-h100x8", brack);
    g_autoptr(CsTopo) b = load_edited("dgx-h100x8", dot);
    g_autoptr(CsTopo) plain = cs_topo_load("dgx-h100x8", NULL);
    gboolean changed = FALSE;
    for (int i = 0; i < cs_topo_n_links(a); i++) {
        const CsLink *la = cs_topo_link(a, i);
        assert_close(la->alpha_s, cs_topo_link(b, i)->alpha_s);
        if (la->file_index == 8) {
            assert_close(la->alpha_s, 1e-6);
            changed = TRUE;
        }
        else
            assert_close(la->alpha_s, cs_topo_link(plain, i)->alpha_s);
    }
    g_assert_true(changed);
}

static void
test_value_types(void)
{
    g_test_summary("A value is JSON where it reads as a number or a JSON text, else a string; "
                   "a string stays a string (name=123); new keys are added");
    static const char *const edits[] = { "name=123", "network.nics_per_node=8",
                                         "network.sharp=true", "network.nic_efficiency=0.5", NULL };
    g_autoptr(CsTopo) topo = load_edited("hgx-h100x8-2n", edits);
    g_assert_true(g_str_has_prefix(cs_topo_name(topo), "123 ["));
    g_assert_true(cs_topo_has_sharp(topo));
    static const char *const protos[] = { "gpu.default_protocols=[\"LL\",\"Simple\"]", NULL };
    g_autoptr(CsTopo) box = load_edited("dgx-h100x8", protos);
    g_assert_cmpuint(cs_topo_default_protos(box, 8), ==, 0x5);
}

/* ---- Errors ---- */

typedef struct {
    const char *edit;
    int code;
    const char *fragment;
} ErrorCase;

static const ErrorCase error_cases[] = {
    /* The path. */
    { "foo.bar=1", CS_TOPO_ERROR_EDIT,
      "foo.bar=1: no key \"foo\" in the top level (it has: name, description, nodes, node, "
      "network)" },
    { "network.kind.x=1", CS_TOPO_ERROR_EDIT,
      "network.kind.x=1: network.kind is a string (\"ib\"), not an object or array: there is no "
      "network.kind.x in it" },
    { "node.devices.99.name=x", CS_TOPO_ERROR_EDIT, "node.devices has 17 elements, no [99]" },
    { "node.devices.x=1", CS_TOPO_ERROR_EDIT,
      "node.devices is an array: index it as node.devices[i] or node.devices.i, not .x" },
    { "network[0]=1", CS_TOPO_ERROR_EDIT, "network is an object: name a key, not [0]" },
    /* The syntax. */
    { "network", CS_TOPO_ERROR_EDIT, "network: expected PATH=VALUE" },
    { "=1", CS_TOPO_ERROR_EDIT, "the path before '=' is empty" },
    { "a..b=1", CS_TOPO_ERROR_EDIT, "a..b=1: an empty key in the path (at character 3)" },
    { "a.=1", CS_TOPO_ERROR_EDIT, "an empty key in the path" },
    { "a[x]=1", CS_TOPO_ERROR_EDIT, "[x]: an array index is a number" },
    { "a[1=1", CS_TOPO_ERROR_EDIT, "'[' without its ']'" },
    { "a[1]b=1", CS_TOPO_ERROR_EDIT, "unexpected 'b' in the path" },
    { "network.nic_bandwidth=", CS_TOPO_ERROR_EDIT, "an empty value" },
    { "network.nic_link={\"kind\":", CS_TOPO_ERROR_EDIT, "the value is not valid JSON" },
    /* The value, as the loader judges it. */
    { "network.nic_bandwidth=800Gb", CS_TOPO_ERROR_EDIT,
      "network.nic_bandwidth=800Gb: " /* then the file and the loader's message */ },
    { "network.nic_bandwidth=800Gb", CS_TOPO_ERROR_EDIT,
      "network.nic_bandwidth: \"800Gb\" is not a bandwidth" },
    { "network.nic_bandwith=800Gb/s", CS_TOPO_ERROR_EDIT, "network: unknown key \"nic_bandwith\"" },
    { "node.gpu.launch=3", CS_TOPO_ERROR_EDIT,
      "node.gpu.launch: \"3\" is not a time: the unit is missing" },
    { "nodes=0", CS_TOPO_ERROR_EDIT, "nodes: a cluster template needs at least 1 node, got 0" },
    { "node=no-such-node", CS_TOPO_ERROR_EDIT, "no topology named \"no-such-node\"" },
};

static void
test_error(gconstpointer data)
{
    const ErrorCase *c = data;
    const char *edits[] = { c->edit, NULL };
    g_autofree char *msg = edit_error("hgx-h100x8-2n", edits, c->code);
    if (strstr(msg, c->fragment) == NULL)
        g_error("--set %s: \"%s\" lacks \"%s\"", c->edit, msg, c->fragment);
    /* Every error starts with the edit it is about. */
    g_assert_true(g_str_has_prefix(msg, c->edit));
}

static void
test_error_blames_edit(void)
{
    g_test_summary("Of several edits, the error names the one that breaks the topology: the "
                   "first whose addition makes loading fail");
    static const char *const edits[]
        = { "network.nic_bandwidth=800Gb/s", "network.nic_alpha=fast", "nodes=4", NULL };
    g_autofree char *msg = edit_error("hgx-h100x8-2n", edits, CS_TOPO_ERROR_EDIT);
    g_assert_true(g_str_has_prefix(msg, "network.nic_alpha=fast: "));
    g_assert_nonnull(strstr(msg, "network.nic_alpha: \"fast\" is not a time"));
}

static void
test_error_of_the_file(void)
{
    g_test_summary("A file that fails with no edit reports its own error, as without --set");
    g_autofree char *path
        = g_test_build_filename(G_TEST_DIST, "data", "topo", "bad_link_kind.json", NULL);
    static const char *const edits[] = { "description=x", NULL };
    g_autoptr(GError) plain = NULL;
    g_autoptr(CsTopo) t = cs_topo_load(path, &plain);
    g_assert_null(t);
    const char *list[] = { edits[0], NULL };
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTopo) topo = cs_topo_load_edited(path, (char **)list, &error);
    g_assert_null(topo);
    g_assert_error(error, plain->domain, plain->code);
    g_assert_cmpstr(error->message, ==, plain->message);
}

/* ---- Lists of values ---- */

static void
test_split(void)
{
    g_test_summary("PATH=V1,V2 is two edits; commas inside brackets, braces or quotes are not "
                   "separators");
    static const struct {
        const char *edit;
        const char *joined; /* the edits, joined with " | " */
    } cases[] = {
        { "network.nic_bandwidth=200Gb/s,400Gb/s,800Gb/s",
          "network.nic_bandwidth=200Gb/s | network.nic_bandwidth=400Gb/s | "
          "network.nic_bandwidth=800Gb/s" },
        { "a=1", "a=1" },
        { "gpu.default_protocols=[\"LL\",\"Simple\"],[\"Simple\"]",
          "gpu.default_protocols=[\"LL\",\"Simple\"] | gpu.default_protocols=[\"Simple\"]" },
        { "description=\"a, b\",c", "description=\"a, b\" | description=c" },
        { "n={\"a\":1,\"b\":2}", "n={\"a\":1,\"b\":2}" },
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autoptr(GError) error = NULL;
        g_auto(GStrv) parts = cs_topo_edit_split(cases[i].edit, &error);
        g_assert_no_error(error);
        g_autofree char *joined = g_strjoinv(" | ", parts);
        g_assert_cmpstr(joined, ==, cases[i].joined);
    }
    static const char *const bad[] = { "a=1,,2", "a=1,", "a=,1", "a", "a..b=1,2" };
    for (gsize i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_autoptr(GError) error = NULL;
        g_auto(GStrv) parts = cs_topo_edit_split(bad[i], &error);
        g_assert_null(parts);
        g_assert_error(error, CS_TOPO_ERROR, CS_TOPO_ERROR_EDIT);
        g_assert_true(g_str_has_prefix(error->message, bad[i]));
    }
}

/* ---- A template's NIC count ---- */

static void
test_template_nics_override(void)
{
    g_test_summary("Setup: 2 x dgx-h100x8 (8 GPUs, each with its own ConnectX-7 on one PCIe "
                   "Gen5 x16 link, 63 GB/s x 0.762, 0.2 us) with nics_per_node 4 and no nic_link. "
                   "Expectation: the template makes 4 NICs per node, of the node's model, GPU k on "
                   "NIC k/2 by a link like the node's own, so two GPUs share each NIC; 4 rails");
    g_autofree char *path
        = g_test_build_filename(G_TEST_DIST, "data", "topo", "template_nics_override.json", NULL);
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTopo) topo = cs_topo_load(path, &error);
    g_assert_no_error(error);
    int nics = 0;
    for (int d = 0; d < cs_topo_n_devices(topo); d++) {
        const CsDevice *dev = cs_topo_device(topo, d);
        if (dev->kind == CS_DEVICE_NIC && dev->node == 0) {
            nics++;
            g_assert_cmpstr(dev->model, ==, "ConnectX-7 400 Gb/s NDR");
        }
    }
    g_assert_cmpint(nics, ==, 4);
    g_assert_cmpint(cs_topo_find_device(topo, "rail3"), >=, 0);
    g_assert_cmpint(cs_topo_find_device(topo, "rail4"), ==, -1);
    for (int g = 0; g < 8; g++) {
        g_autofree char *gpu = g_strdup_printf("n0/gpu%d", g);
        g_autofree char *nic = g_strdup_printf("n0/nic%d", g / 2);
        const int a = cs_topo_find_device(topo, gpu);
        const int b = cs_topo_find_device(topo, nic);
        int found = 0;
        for (int i = 0; i < cs_topo_n_links(topo); i++) {
            const CsLink *l = cs_topo_link(topo, i);
            if ((l->src == a && l->dst == b) || (l->src == b && l->dst == a)) {
                g_assert_cmpint(l->kind, ==, CS_LINK_PCIE);
                assert_close(l->raw_bw_Bps, 63e9);
                assert_close(l->bw_Bps, 63e9 * 0.762);
                assert_close(l->alpha_s, 0.2e-6);
                found++;
            }
        }
        g_assert_cmpint(found, ==, 2);
        CsRankNics rn = cs_topo_rank_nics(topo, g);
        g_assert_cmpint(rn.sharing, ==, 2);
    }
    /* The same through --set on the shipped template. */
    static const char *const edits[] = { "network.nics_per_node=4", NULL };
    g_autoptr(CsTopo) set = load_edited("hgx-h100x8-2n", edits);
    g_assert_cmpint(cs_topo_n_links(set), ==, cs_topo_n_links(topo));
}

static void
test_net_path_binds(void)
{
    g_test_summary("Setup: hgx-h100x8-2n (each GPU on its own 400 Gb/s NIC, 50 GB/s, behind a "
                   "PCIe Gen5 x16 link, 63 GB/s x 0.762 = 48.0 GB/s) with what-ifs. Expectation: "
                   "at 800 Gb/s the PCIe link binds at 48.0 GB/s with 52.0 GB/s of the NIC unused; "
                   "with 4 NICs per node two GPUs share each NIC, so 25 GB/s each, and the net "
                   "injection bandwidth counts that sharing (25 GB/s, not 48); with "
                   "oversubscription 2 the rail leaves (tier 1) are 2:1, the spine the top tier");
    static const char *const fast[] = { "network.nic_bandwidth=800Gb/s", NULL };
    g_autoptr(CsTopo) topo = load_edited("hgx-h100x8-2n", fast);
    CsNetPath p;
    g_assert_true(cs_topo_net_path(topo, 3, &p));
    g_assert_cmpint(p.used, ==, 1);
    g_assert_cmpint(p.sharing, ==, 1);
    assert_close(p.port_Bps, 100e9);
    g_assert_cmpint(p.front_link, >=, 0);
    g_assert_cmpint(cs_topo_link(topo, p.front_link)->kind, ==, CS_LINK_PCIE);
    assert_close(p.front_Bps, 63e9 * 0.762);
    assert_close(p.rate_Bps, 63e9 * 0.762);
    g_assert_cmpstr(cs_topo_device(topo, p.nic)->name, ==, "n0/nic3");

    static const char *const four[] = { "network.nics_per_node=4", NULL };
    g_autoptr(CsTopo) shared = load_edited("hgx-h100x8-2n", four);
    g_assert_true(cs_topo_net_path(shared, 5, &p));
    g_assert_cmpint(p.sharing, ==, 2);
    g_assert_cmpint(p.front_link, ==, -1);
    assert_close(p.port_Bps, 50e9);
    assert_close(p.rate_Bps, 25e9);
    assert_close(cs_topo_injection_bw(shared, 5, CS_LINK_CLASS_NET), 25e9);

    static const char *const over[] = { "network.oversubscription=2", NULL };
    g_autoptr(CsTopo) thin = load_edited("hgx-h100x8-2n", over);
    g_autoptr(GArray) tiers = cs_topo_fabric_tiers(thin);
    g_assert_cmpuint(tiers->len, ==, 2);
    const CsFabricTier *leaf = &g_array_index(tiers, CsFabricTier, 0);
    g_assert_cmpint(leaf->n_switches, ==, 8);
    g_assert_cmpint(leaf->n_uplinked, ==, 8);
    assert_close(leaf->ratio_min, 2.0);
    assert_close(leaf->ratio_max, 2.0);
    assert_close(leaf->down_Bps, 100e9);
    assert_close(leaf->up_Bps, 50e9);
    const CsFabricTier *spine = &g_array_index(tiers, CsFabricTier, 1);
    g_assert_cmpint(spine->n_switches, ==, 1);
    g_assert_cmpint(spine->n_uplinked, ==, 0);
    g_assert_cmpstr(cs_topo_device(thin, spine->example)->name, ==, "spine");

    /* An NVL72 rack's NVLink switches are outside every node but no tier of the network: the
     * tiers are the network's switches alone. */
    g_autoptr(CsTopo) racks = load_edited("gb200-nvl72-2rack-ib", NULL);
    g_autoptr(GArray) rack_tiers = cs_topo_fabric_tiers(racks);
    g_assert_cmpuint(rack_tiers->len, ==, 2);
    const CsFabricTier *rails = &g_array_index(rack_tiers, CsFabricTier, 0);
    g_assert_cmpint(rails->n_switches, ==, 4);
    g_assert_cmpstr(cs_topo_device(racks, rails->example)->name, ==, "rail0");
    assert_close(rails->ratio_max, 1.0);

    /* One node: no way out over a network. */
    g_autoptr(CsTopo) box = load_edited("dgx-h100x8", NULL);
    g_assert_false(cs_topo_net_path(box, 0, &p));
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/topo/edit/same-as-edited-file", test_same_as_edited_file);
    g_test_add_func("/topo/edit/template-named-node", test_named_node);
    g_test_add_func("/topo/edit/net-path-binds", test_net_path_binds);
    g_test_add_func("/topo/edit/index-forms", test_index_forms);
    g_test_add_func("/topo/edit/value-types", test_value_types);
    for (gsize i = 0; i < G_N_ELEMENTS(error_cases); i++) {
        g_autofree char *path = g_strdup_printf("/topo/edit/error/%zu", i);
        g_test_add_data_func(path, &error_cases[i], test_error);
    }
    g_test_add_func("/topo/edit/error/blames-the-edit", test_error_blames_edit);
    g_test_add_func("/topo/edit/error/of-the-file", test_error_of_the_file);
    g_test_add_func("/topo/edit/split", test_split);
    g_test_add_func("/topo/template/nics-override", test_template_nics_override);
    return g_test_run();
}
