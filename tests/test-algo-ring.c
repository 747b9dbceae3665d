// SPDX-License-Identifier: MIT
/* Tests of the ring algorithms' ring orders (src/algos/ring.c): on several nodes every channel
 * crosses between nodes on its own rail, so that the inter-node bytes spread evenly over
 * every NIC; inside a machine the ring follows the PCIe switch tree; and the semantic checker
 * passes on odd node counts and partial rank sets, which the registry sweep (test-algos)
 * does not cover. */
#include "config.h"

#include <string.h>

#include "algos/algo.h"
#include "algos/mesh_rings.h"
#include "engine/engine.h"
#include "sched/check.h"
#include "test-util.h"

extern const CsAlgo cs_algo_ring;

/* ---- Helpers ---- */

/* An explicit graph of nodes of @sizes[k] GPUs each on an NVSwitch, one NIC per GPU, all NICs
 * on one InfiniBand switch. With @interleave the ranks alternate between the nodes (rank 2i
 * is node 0's GPU i, rank 2i + 1 node 1's; two nodes of equal size). */
static CsTopo *
load_explicit(const int *sizes, int n_nodes, gboolean interleave)
{
    g_autoptr(GString) json = g_string_new(
        "{\"name\": \"explicit\", \"gpu\": {\"launch\": \"4 us\", \"step_overhead\": "
        "\"0.2 us\", \"reduce_bandwidth\": \"1000 GB/s\", \"copy_bandwidth\": "
        "\"1500 GB/s\"}, \"devices\": [{\"name\": \"ib\", \"kind\": \"switch\", "
        "\"node\": -1}");
    g_autoptr(GString) links = g_string_new("");
    GError *error = NULL;

    for (int k = 0; k < n_nodes; k++) {
        g_string_append_printf(json,
                               ", {\"name\": \"n%d/nvs\", \"kind\": \"nvswitch\", "
                               "\"node\": %d}",
                               k, k);
        for (int i = 0; i < sizes[k]; i++) {
            g_string_append_printf(json,
                                   ", {\"name\": \"n%d/gpu%d\", \"kind\": \"gpu\", "
                                   "\"node\": %d}, {\"name\": \"n%d/nic%d\", \"kind\": "
                                   "\"nic\", \"node\": %d}",
                                   k, i, k, k, i, k);
            g_string_append_printf(
                links,
                "%s{\"endpoints\": [\"n%d/gpu%d\", \"n%d/nvs\"], \"kind\": \"nvswitch\", "
                "\"bandwidth\": \"400 GB/s\", \"alpha\": \"0.1 us\"}, "
                "{\"endpoints\": [\"n%d/gpu%d\", \"n%d/nic%d\"], \"kind\": \"pcie\", "
                "\"bandwidth\": \"64 GB/s\", \"alpha\": \"0.2 us\"}, "
                "{\"endpoints\": [\"n%d/nic%d\", \"ib\"], \"kind\": \"ib\", "
                "\"bandwidth\": \"50 GB/s\", \"alpha\": \"0.3 us\"}",
                links->len > 0 ? ", " : "", k, i, k, k, i, k, i, k, i);
        }
    }
    g_string_append_printf(json, "], \"links\": [%s]", links->str);
    if (interleave) {
        g_string_append(json, ", \"ranks\": [");
        for (int i = 0; i < sizes[0]; i++)
            g_string_append_printf(json, "%s\"n0/gpu%d\", \"n1/gpu%d\"", i > 0 ? ", " : "", i, i);
        g_string_append(json, "]");
    }
    g_string_append(json, "}");
    CsTopo *topo = cs_topo_load_data(json->str, "inline explicit", &error);
    g_assert_no_error(error);
    return topo;
}

/* The GPU's name inside its node: "gpu3" for "n1/gpu3". */
static const char *
local_name(const CsTopo *topo, int rank)
{
    const char *name = cs_topo_device(topo, cs_topo_rank_device(topo, rank))->name;
    const char *slash = strrchr(name, '/');

    return slash != NULL ? slash + 1 : name;
}

static CsSchedule *
build(const CsTopo *topo, CsOp op, int nranks, int root, gint64 size, gint64 chunk, int n_channels)
{
    CsAlgoArgs args;
    GError *error = NULL;
    CsSchedule *sched;

    cs_algo_args_init(&args, topo, op, nranks, size);
    args.root = root;
    args.chunk_bytes = chunk;
    args.n_channels = n_channels;
    sched = cs_algo_build(&cs_algo_ring, &args, &error);
    g_assert_no_error(error);
    return sched;
}

/* The rank @rank sends to on @channel; on a ring every send goes to the same peer. */
static int
next_of(const CsSchedule *sched, int rank, int channel)
{
    gsize n;
    const CsStep *steps = cs_schedule_steps(sched, rank, &n);
    int next = -1;

    for (gsize i = 0; i < n; i++) {
        if (steps[i].channel != channel || steps[i].send_peer < 0)
            continue;
        if (next >= 0)
            g_assert_cmpint(steps[i].send_peer, ==, next);
        next = steps[i].send_peer;
    }
    return next;
}

/* Follows channel @channel's ring from rank 0 into @order (P entries) and asserts that it
 * visits every rank once. */
static void
ring_of(const CsSchedule *sched, int channel, int *order)
{
    int p = cs_schedule_n_ranks(sched);
    g_autofree gboolean *seen = g_new0(gboolean, p);
    int r = 0;

    for (int i = 0; i < p; i++) {
        g_assert_false(seen[r]);
        seen[r] = TRUE;
        order[i] = r;
        r = next_of(sched, r, channel);
    }
    g_assert_cmpint(r, ==, 0);
}

/* ---- NIC load on rail-optimized clusters ---- */

typedef struct {
    const char *name; /* shipped topology, or NULL for a cluster template of: */
    int nodes;
    const char *node; /* NULL: an explicit graph of two 4-GPU nodes, ranks alternating */
    int nics;
} TopoCase;

static CsTopo *
load_case(const TopoCase *tc)
{
    static const int two_fours[] = { 4, 4 };

    if (tc->name != NULL)
        return cs_test_load_topo(tc->name);
    if (tc->node == NULL)
        return load_explicit(two_fours, 2, TRUE);
    return cs_test_load_cluster(tc->nodes, tc->node, tc->nics);
}

/* Ring all-reduce on 2L channels of N nodes x L GPUs, one NIC per GPU. The size gives every
 * channel P blocks of 64 floats (256 B) and one pipeline loop, so each ring edge carries
 * 2(P-1) messages of 256 B: B = 512 (P-1) bytes. Each channel crosses N node boundaries
 * (N edges leave a node, N enter one). The channels' entry GPUs move with the channel, so
 * over 2L channels every node leaves and enters through each of its L NICs exactly twice:
 * every NIC sends 2B and receives 2B into the fabric, and every crossing stays on one rail
 * (local index kept, NIC -> rail switch -> NIC, two network links). Hand numbers for
 * hgx-h100x8-2n: P = 16, B = 512 x 15 = 7,680 B, 2B = 15,360 B per NIC and direction; the
 * 2 x 16 crossings move 245,760 B = 16 NICs x 15,360. With every channel in rank order all
 * of it would leave node 0 through one NIC (GPU 7's). */
static void
test_nic_balance(gconstpointer data)
{
    g_autoptr(CsTopo) topo = load_case(data);
    int p = cs_topo_n_ranks(topo);
    int l = cs_topo_ranks_per_node(topo);
    int n_channels = 2 * l;
    gint64 block = 64 * 4;
    gint64 per_edge = 2 * (gint64)(p - 1) * block;
    int n_dev = cs_topo_n_devices(topo);
    g_autofree gint64 *out = g_new0(gint64, n_dev);
    g_autofree gint64 *in = g_new0(gint64, n_dev);
    gint64 crossing_bytes = 0;
    int n_nics = 0;

    g_autoptr(CsSchedule) sched
        = build(topo, CS_OP_ALL_REDUCE, p, 0, block * p * n_channels, 4 << 20, n_channels);
    cs_test_assert_checks(sched, NULL);
    for (int r = 0; r < p; r++) {
        gsize n;
        const CsStep *steps = cs_schedule_steps(sched, r, &n);
        for (gsize i = 0; i < n; i++) {
            int q = steps[i].send_peer;
            if (q < 0 || cs_topo_rank_node(topo, q) == cs_topo_rank_node(topo, r))
                continue;
            /* A node crossing: same local index, over exactly one switch between NICs. */
            const CsRoute *route = cs_topo_route(topo, r, q);
            int net_links = 0;
            g_assert_cmpstr(local_name(topo, q), ==, local_name(topo, r));
            crossing_bytes += steps[i].bytes;
            for (int k = 0; k < route->n_links; k++) {
                const CsLink *link = cs_topo_link(topo, route->links[k]);
                if (cs_link_kind_class(link->kind) != CS_LINK_CLASS_NET)
                    continue;
                net_links++;
                if (cs_topo_device(topo, link->src)->kind == CS_DEVICE_NIC)
                    out[link->src] += steps[i].bytes;
                if (cs_topo_device(topo, link->dst)->kind == CS_DEVICE_NIC)
                    in[link->dst] += steps[i].bytes;
            }
            g_assert_cmpint(net_links, ==, 2);
        }
    }
    g_assert_cmpint(crossing_bytes, ==, (gint64)n_channels * cs_topo_n_nodes(topo) * per_edge);
    for (int d = 0; d < n_dev; d++) {
        if (cs_topo_device(topo, d)->kind != CS_DEVICE_NIC)
            continue;
        n_nics++;
        g_assert_cmpint(out[d], ==, 2 * per_edge);
        g_assert_cmpint(in[d], ==, 2 * per_edge);
    }
    g_assert_cmpint(n_nics, ==, p);
}

/* ---- Orders inside a machine ---- */

/* On one machine every channel runs the same ring, in rank order on NVSwitch (all GPUs two
 * hops apart), on pcie-l40sx8 (GPUs 2i and 2i+1 share a switch, so rank order already pairs
 * them) and on the NVL72 rack (its trays are nodes, but joined by NVLink: one ring domain). */
static void
test_single_machine_rank_order(gconstpointer data)
{
    g_autoptr(CsTopo) topo = cs_test_load_topo(data);
    int p = cs_topo_n_ranks(topo);
    g_autofree int *order = g_new(int, p);
    g_autoptr(CsSchedule) sched = build(topo, CS_OP_ALL_GATHER, p, 0, 4 * (gint64)p * 3, 0, 3);

    cs_test_assert_checks(sched, NULL);
    for (int c = 0; c < 3; c++) {
        ring_of(sched, c, order);
        for (int i = 0; i < p; i++)
            g_assert_cmpint(order[i], ==, i);
    }
}

/* ---- Full meshes ---- */

/* @p GPUs, one xGMI link between every pair (a full mesh). */
static CsTopo *
mesh_topo(int p)
{
    g_autoptr(GString) js = g_string_new("{\"name\": \"mesh\", \"description\": \"test\", "
                                         "\"gpu\": {\"launch\": \"4 us\", "
                                         "\"step_overhead\": \"0.2 us\", "
                                         "\"reduce_bandwidth\": \"1 TB/s\", "
                                         "\"copy_bandwidth\": \"2 TB/s\"}, "
                                         "\"devices\": [");
    GError *error = NULL;

    for (int i = 0; i < p; i++)
        g_string_append_printf(js, "%s{\"name\": \"gpu%d\", \"kind\": \"gpu\"}", i > 0 ? ", " : "",
                               i);
    g_string_append(js, "], \"links\": [");
    for (int a = 0; a < p; a++)
        for (int b = a + 1; b < p; b++)
            g_string_append_printf(js,
                                   "%s{\"endpoints\": [\"gpu%d\", \"gpu%d\"], \"kind\": "
                                   "\"xgmi\", \"bandwidth\": \"64 GB/s\", \"alpha\": "
                                   "\"0.1 us\"}",
                                   a + b > 1 ? ", " : "", a, b);
    g_string_append(js, "]}");
    CsTopo *topo = cs_topo_load_data(js->str, "mesh", &error);
    g_assert_no_error(error);
    return topo;
}

/* Bytes the sends of @sched put on each directed link of @topo (n_links entries). */
static guint64 *
link_bytes(const CsTopo *topo, const CsSchedule *sched)
{
    guint64 *bytes = g_new0(guint64, cs_topo_n_links(topo));

    for (int r = 0; r < cs_schedule_n_ranks(sched); r++) {
        gsize n;
        const CsStep *steps = cs_schedule_steps(sched, r, &n);
        for (gsize i = 0; i < n; i++) {
            if (steps[i].send_peer < 0 || steps[i].bytes == 0)
                continue;
            const CsRoute *route = cs_topo_route(topo, r, steps[i].send_peer);
            for (int k = 0; k < route->n_links; k++)
                bytes[route->links[k]] += (guint64)steps[i].bytes;
        }
    }
    return bytes;
}

/* Asserts that a ring all-reduce of @bytes on the @p GPUs of full mesh @topo over @channels
 * channels puts the same bytes on every one of the p (p - 1) directed links. */
static void
assert_mesh_links_even(const CsTopo *topo, int p, gint64 bytes, int channels)
{
    g_autoptr(CsSchedule) sched = build(topo, CS_OP_ALL_REDUCE, p, 0, bytes, 0, channels);
    cs_test_assert_checks(sched, NULL);
    g_autofree guint64 *per_link = link_bytes(topo, sched);
    int n_loaded = 0;
    guint64 first = 0;
    for (int l = 0; l < cs_topo_n_links(topo); l++) {
        if (per_link[l] == 0)
            continue;
        if (n_loaded++ == 0)
            first = per_link[l];
        g_assert_cmpuint(per_link[l], ==, first);
    }
    g_assert_cmpint(n_loaded, ==, p * (p - 1));
}

/* cs_mesh_rings_new(): rings over every rank, each starting at 0, and every ordered pair
 * (a, b) adjacent in exactly `times` of them: once in P - 1 rings (Tillson: every P but 4
 * and 6), twice in 2 (P - 1) rings for 4 and 6; none past CS_MESH_RINGS_MAX_RANKS. */
static void
test_mesh_rings(void)
{
    for (int P = 3; P <= CS_MESH_RINGS_MAX_RANKS; P++) {
        int n_rings = 0;
        g_autofree int *rings = cs_mesh_rings_new(P, &n_rings);
        g_assert_nonnull(rings);
        const int times = (P == 4 || P == 6) ? 2 : 1;
        g_assert_cmpint(n_rings, ==, times * (P - 1));
        g_assert_cmpint(cs_mesh_rings_count(P), ==, n_rings);
        g_autofree int *pairs = g_new0(int, P *P);
        for (int k = 0; k < n_rings; k++) {
            const int *ring = rings + k * P;
            g_autofree gboolean *seen = g_new0(gboolean, P);
            g_assert_cmpint(ring[0], ==, 0);
            for (int i = 0; i < P; i++) {
                g_assert_cmpint(ring[i], >=, 0);
                g_assert_cmpint(ring[i], <, P);
                g_assert_false(seen[ring[i]]);
                seen[ring[i]] = TRUE;
                pairs[ring[i] * P + ring[(i + 1) % P]]++;
            }
        }
        for (int a = 0; a < P; a++)
            for (int b = 0; b < P; b++)
                g_assert_cmpint(pairs[a * P + b], ==, a == b ? 0 : times);
    }
    int n_rings = -1;
    g_assert_null(cs_mesh_rings_new(CS_MESH_RINGS_MAX_RANKS + 1, &n_rings));
    g_assert_cmpint(n_rings, ==, -1);
}

/* On mi300x-x8-xgmi (one xGMI link between every pair of the 8 GPUs) the channels cycle over
 * 7 rings that follow every directed link once: 28 channels (collsim's default there) and 7
 * put the same bytes on all 56 directed links, where rings of one stride used 32 of them.
 * The same holds for meshes of 7 GPUs (6 rings), 4 (6 rings, each link twice) and 5 (4). */
static void
test_full_mesh_rings(void)
{
    g_autoptr(CsTopo) topo = cs_test_load_topo("mi300x-x8-xgmi");
    assert_mesh_links_even(topo, 8, 4 * 28 * 8 * 1000, 28);
    assert_mesh_links_even(topo, 8, 4 * 7 * 8 * 1000, 7);
    static const struct {
        int p;
        int channels;
    } meshes[] = { { 7, 6 }, { 4, 6 }, { 4, 24 }, { 5, 4 } };
    for (gsize i = 0; i < G_N_ELEMENTS(meshes); i++) {
        g_autoptr(CsTopo) mesh = mesh_topo(meshes[i].p);
        assert_mesh_links_even(mesh, meshes[i].p, 4 * 1000 * meshes[i].p * meshes[i].channels,
                               meshes[i].channels);
    }
}

/* Two 8 x MI300X nodes (full xGMI mesh each) with one 400 Gb/s NIC per GPU. Over 7
 * consecutive channels the intra-node hops follow 7 different rings: each channel crosses its
 * node on 7 of the node's 56 directed links, and together they use at least 7 x 7 - 7 of
 * them (two rings may share the link next to a crossing). One order for every channel would
 * keep them on the same 7 links, 4 channels on each. */
static void
test_full_mesh_nodes(void)
{
    GError *error = NULL;
    g_autoptr(CsTopo) topo = cs_topo_load_data(
        "{\"nodes\": 2, \"node\": \"mi300x-x8-xgmi\", \"network\": {\"kind\": \"roce\", "
        "\"nics_per_node\": 8, \"nic_bandwidth\": \"400 Gb/s\", \"nic_alpha\": \"1 us\", "
        "\"switch_alpha\": \"1 us\", \"rail_optimized\": true, \"nic_link\": {\"kind\": "
        "\"pcie\", \"bandwidth\": \"63 GB/s\", \"alpha\": \"0.2 us\"}}}",
        "mi300x-2n.json", &error);
    g_assert_no_error(error);
    g_autoptr(CsSchedule) sched = build(topo, CS_OP_ALL_REDUCE, 16, 0, 16 * 28 * 64, 0, 7);
    gboolean used[8][8] = { { FALSE } };
    int distinct = 0;

    for (int c = 0; c < 7; c++) {
        int inside = 0;
        for (int r = 0; r < 8; r++) {
            int next = next_of(sched, r, c);
            if (next >= 8)
                continue;
            inside++;
            if (!used[r][next])
                distinct++;
            used[r][next] = TRUE;
        }
        g_assert_cmpint(inside, ==, 7);
    }
    g_assert_cmpint(distinct, >=, 42);
}

/* mi355x-x8-2n-pollara (two full xGMI meshes, one NIC per GPU, one switch), 28 channels: the
 * GPUs that send out of each node, one per channel, are spread over the 8 GPUs (and NICs) as
 * evenly as 28 allows, 3 or 4 each, as NCCL spreads its channels over the NICs. Each channel's
 * start in the base order, carried into its own mesh ring, made whichever GPU that ring holds
 * there cross: 6 channels on one NIC, which then capped the ring's bandwidth. */
static void
test_full_mesh_nodes_nics(void)
{
    g_autoptr(CsTopo) topo = cs_test_load_topo("mi355x-x8-2n-pollara");
    const int channels = 28;
    g_autoptr(CsSchedule) sched = build(topo, CS_OP_ALL_REDUCE, 16, 0, 16 * 28 * 64, 0, channels);
    int leaving[16] = { 0 };

    for (int c = 0; c < channels; c++)
        for (int r = 0; r < 16; r++)
            if (next_of(sched, r, c) / 8 != r / 8)
                leaving[r]++;
    for (int node = 0; node < 2; node++) {
        int sum = 0;
        for (int g = 0; g < 8; g++) {
            g_test_message("node %d GPU %d: %d channels leave", node, g, leaving[node * 8 + g]);
            g_assert_cmpint(leaving[node * 8 + g], >=, 3);
            g_assert_cmpint(leaving[node * 8 + g], <=, 4);
            sum += leaving[node * 8 + g];
        }
        g_assert_cmpint(sum, ==, channels);
    }
}

/* mi355x-x8-2n-pollara with RCCL's 64 channels (rome_model_81/89): each 8 consecutive
 * channels cross node 0 along 8 paths that follow each of its 56 directed xGMI links once and
 * leave it once by every GPU (and so NIC); node 1 takes the same paths reversed, entered at the
 * GPU node 0 left by (one rail per crossing), so it too uses every link and GPU once. The
 * 7 mesh rings cycled under 64 channels put some links in two channels of 8 and none in
 * others. */
static void
test_full_mesh_nodes_rail_paths(void)
{
    g_autoptr(CsTopo) topo = cs_test_load_topo("mi355x-x8-2n-pollara");
    const int channels = 64;
    g_autoptr(CsSchedule) sched = build(topo, CS_OP_ALL_REDUCE, 16, 0, 16 * 64 * 64, 0, channels);

    for (int first = 0; first < channels; first += 8) {
        int link[16][16] = { { 0 } };
        int leaving[16] = { 0 };
        for (int c = first; c < first + 8; c++) {
            for (int r = 0; r < 16; r++) {
                int next = next_of(sched, r, c);
                if (next / 8 == r / 8) {
                    link[r][next]++;
                    continue;
                }
                leaving[r]++;
                g_assert_cmpint(next % 8, ==, r % 8);
            }
        }
        for (int r = 0; r < 16; r++) {
            g_assert_cmpint(leaving[r], ==, 1);
            for (int q = r / 8 * 8; q < r / 8 * 8 + 8; q++)
                g_assert_cmpint(link[r][q], ==, q == r ? 0 : 1);
        }
    }
}

/* cs_mesh_paths_new(): every rank starts one path and ends one, and the paths follow every
 * ordered pair once. */
static void
test_mesh_paths(void)
{
    for (int n = 2; n <= 16; n += 2) {
        g_autofree int *paths = cs_mesh_paths_new(n);
        g_autofree int *pairs = g_new0(int, n *n);
        g_autofree int *starts = g_new0(int, n);
        g_autofree int *ends = g_new0(int, n);
        for (int p = 0; p < n; p++) {
            const int *v = paths + p * n;
            g_assert_cmpint(v[0], ==, p);
            starts[v[0]]++;
            ends[v[n - 1]]++;
            for (int i = 0; i + 1 < n; i++)
                pairs[v[i] * n + v[i + 1]]++;
        }
        for (int a = 0; a < n; a++) {
            g_assert_cmpint(starts[a], ==, 1);
            g_assert_cmpint(ends[a], ==, 1);
            for (int b = 0; b < n; b++)
                g_assert_cmpint(pairs[a * n + b], ==, a == b ? 0 : 1);
        }
    }
}

/* Two NVL72 racks over InfiniBand: the trays of a rack meet over its NVLink switch, racks over
 * the trays' NICs. The ring takes each rack as one node (NCCL's MNNVL), so its channels leave
 * a rack at different GPUs, hence NICs: over 8 channels, 8 distinct GPUs send out of rack 0.
 * Taking the trays for the nodes, every channel followed one ring and left at one GPU. */
static void
test_nvlink_domains(void)
{
    GError *error = NULL;
    g_autoptr(CsTopo) topo = cs_topo_load_data(
        "{\"domains\": 2, \"node\": \"gb200-nvl72\", \"network\": {\"kind\": \"ib\", "
        "\"nics_per_node\": 4, \"nic_bandwidth\": \"400 Gb/s\", \"nic_alpha\": \"1 us\", "
        "\"switch_alpha\": \"1 us\", \"rail_optimized\": true, \"nic_link\": {\"kind\": "
        "\"pcie\", \"bandwidth\": \"63 GB/s\", \"alpha\": \"0.2 us\"}}}",
        "gb200x2.json", &error);
    g_assert_no_error(error);
    g_autoptr(CsSchedule) sched = build(topo, CS_OP_ALL_REDUCE, 144, 0, 144 * 8 * 64, 0, 8);
    gboolean leaves[72] = { FALSE };
    int distinct = 0;

    for (int c = 0; c < 8; c++) {
        int out = 0;
        for (int r = 0; r < 72; r++) {
            if (next_of(sched, r, c) < 72)
                continue;
            out++;
            if (!leaves[r])
                distinct++;
            leaves[r] = TRUE;
        }
        g_assert_cmpint(out, ==, 1);
    }
    g_assert_cmpint(distinct, ==, 8);
}

/* Eight GPUs, switch i holding GPUs i and i + 4, switches under one host. Rank order would
 * cross the host on all 8 edges; the adjacency order 0 4 1 5 2 6 3 7 keeps 4 edges inside a
 * switch (2 hops) and crosses the host on the other 4 (4 hops). */
static const char pcie_interleaved[]
    = "{\"name\": \"pcie-interleaved\", \"gpu\": {\"launch\": \"4 us\", \"step_overhead\": "
      "\"0.2 us\", \"reduce_bandwidth\": \"300 GB/s\", \"copy_bandwidth\": \"400 GB/s\"}, "
      "\"devices\": [{\"name\": \"gpu0\", \"kind\": \"gpu\"}, {\"name\": \"gpu1\", \"kind\": "
      "\"gpu\"}, {\"name\": \"gpu2\", \"kind\": \"gpu\"}, {\"name\": \"gpu3\", \"kind\": \"gpu\"}, "
      "{\"name\": \"gpu4\", \"kind\": \"gpu\"}, {\"name\": \"gpu5\", \"kind\": \"gpu\"}, "
      "{\"name\": \"gpu6\", \"kind\": \"gpu\"}, {\"name\": \"gpu7\", \"kind\": \"gpu\"}, "
      "{\"name\": \"sw0\", \"kind\": \"pcie_switch\"}, {\"name\": \"sw1\", \"kind\": "
      "\"pcie_switch\"}, {\"name\": \"sw2\", \"kind\": \"pcie_switch\"}, {\"name\": \"sw3\", "
      "\"kind\": \"pcie_switch\"}, {\"name\": \"host\", \"kind\": \"cpu\"}], \"links\": ["
      "{\"endpoints\": [\"gpu0\", \"sw0\"], \"kind\": \"pcie\", \"bandwidth\": \"32 GB/s\", "
      "\"alpha\": \"0.1 us\"}, "
      "{\"endpoints\": [\"gpu4\", \"sw0\"], \"kind\": \"pcie\", \"bandwidth\": \"32 GB/s\", "
      "\"alpha\": \"0.1 us\"}, "
      "{\"endpoints\": [\"gpu1\", \"sw1\"], \"kind\": \"pcie\", \"bandwidth\": \"32 GB/s\", "
      "\"alpha\": \"0.1 us\"}, "
      "{\"endpoints\": [\"gpu5\", \"sw1\"], \"kind\": \"pcie\", \"bandwidth\": \"32 GB/s\", "
      "\"alpha\": \"0.1 us\"}, "
      "{\"endpoints\": [\"gpu2\", \"sw2\"], \"kind\": \"pcie\", \"bandwidth\": \"32 GB/s\", "
      "\"alpha\": \"0.1 us\"}, "
      "{\"endpoints\": [\"gpu6\", \"sw2\"], \"kind\": \"pcie\", \"bandwidth\": \"32 GB/s\", "
      "\"alpha\": \"0.1 us\"}, "
      "{\"endpoints\": [\"gpu3\", \"sw3\"], \"kind\": \"pcie\", \"bandwidth\": \"32 GB/s\", "
      "\"alpha\": \"0.1 us\"}, "
      "{\"endpoints\": [\"gpu7\", \"sw3\"], \"kind\": \"pcie\", \"bandwidth\": \"32 GB/s\", "
      "\"alpha\": \"0.1 us\"}, "
      "{\"endpoints\": [\"sw0\", \"host\"], \"kind\": \"pcie\", \"bandwidth\": \"64 GB/s\", "
      "\"alpha\": \"0.1 us\"}, "
      "{\"endpoints\": [\"sw1\", \"host\"], \"kind\": \"pcie\", \"bandwidth\": \"64 GB/s\", "
      "\"alpha\": \"0.1 us\"}, "
      "{\"endpoints\": [\"sw2\", \"host\"], \"kind\": \"pcie\", \"bandwidth\": \"64 GB/s\", "
      "\"alpha\": \"0.1 us\"}, "
      "{\"endpoints\": [\"sw3\", \"host\"], \"kind\": \"pcie\", \"bandwidth\": \"64 GB/s\", "
      "\"alpha\": \"0.1 us\"}]}";

static void
test_pcie_switch_order(void)
{
    static const int want[8] = { 0, 4, 1, 5, 2, 6, 3, 7 };
    GError *error = NULL;
    g_autoptr(CsTopo) topo = cs_topo_load_data(pcie_interleaved, "inline", &error);
    int order[8];
    int host_edges = 0;

    g_assert_no_error(error);
    g_autoptr(CsSchedule) sched = build(topo, CS_OP_ALL_REDUCE, 8, 0, 4 * 1001, 64, 2);
    cs_test_assert_checks(sched, NULL);
    for (int c = 0; c < 2; c++) {
        ring_of(sched, c, order);
        for (int i = 0; i < 8; i++)
            g_assert_cmpint(order[i], ==, want[i]);
    }
    for (int i = 0; i < 8; i++)
        host_edges += cs_topo_route(topo, order[i], order[(i + 1) % 8])->n_links == 4;
    g_assert_cmpint(host_edges, ==, 4);
}

/* ---- Channel rings across nodes ---- */

/* On hgx-h100x8-2n channel c enters node 0 at GPU s = c mod 8, walks its node backwards and
 * leaves at GPU s + 1, which sends to GPU s + 1 of node 1 (rail s + 1); node 1 walks forwards
 * and leaves at GPU s towards node 0's GPU s (rail s). Channel 3: 3 2 1 0 7 6 5 4 on node 0,
 * then 12 13 14 15 8 9 10 11 on node 1. */
static void
test_two_node_rings(void)
{
    g_autoptr(CsTopo) topo = cs_test_load_topo("hgx-h100x8-2n");
    static const int want3[16] = { 3, 2, 1, 0, 7, 6, 5, 4, 12, 13, 14, 15, 8, 9, 10, 11 };
    int order[16];

    g_autoptr(CsSchedule) sched = build(topo, CS_OP_ALL_GATHER, 16, 0, 4 * 16 * 10, 0, 10);
    cs_test_assert_checks(sched, NULL);
    for (int c = 0; c < 10; c++) {
        int s = c % 8;
        int at = 0;
        ring_of(sched, c, order);
        while (order[at] != s)
            at++;
        for (int i = 0; i < 8; i++) {
            g_assert_cmpint(order[(at + i) % 16], ==, (s - i + 8) % 8);
            g_assert_cmpint(order[(at + 8 + i) % 16], ==, 8 + (s + 1 + i) % 8);
        }
        if (c == 3) {
            for (int i = 0; i < 16; i++)
                g_assert_cmpint(order[(at + i) % 16], ==, want3[i]);
        }
    }
}

/* Every op, 1, 5 and 9 channels, several roots: odd node counts (3 and 5 nodes of 4 GPUs, 5
 * nodes of 2 GPUs behind one NIC, where a crossing must change rails) and nodes of unequal
 * size. */
static void
check_all_ops(const CsTopo *topo, int p)
{
    for (int op = 0; op < CS_N_OPS; op++) {
        if ((cs_algo_ring.ops & CS_OP_BIT(op)) == 0)
            continue;
        for (int n_channels = 1; n_channels <= 9; n_channels += 4) {
            int roots[] = { 0, p - 1, p / 2 };
            for (int i = 0; i < (cs_op_has_root((CsOp)op) ? 3 : 1); i++) {
                g_autoptr(CsSchedule) s
                    = build(topo, (CsOp)op, p, roots[i], 4 * (37 * (gint64)p + 5), 40, n_channels);
                cs_test_assert_checks(s, NULL);
            }
        }
    }
}

static void
test_checker_odd_nodes(gconstpointer data)
{
    g_autoptr(CsTopo) topo = load_case(data);
    check_all_ops(topo, cs_topo_n_ranks(topo));
}

/* The checker proves every ring op on full meshes of P = 2..8 GPUs (mi300x-x8-xgmi for 8),
 * every root kind and channel count. */
static void
test_full_mesh_checker(void)
{
    g_autoptr(CsTopo) mi300x = cs_test_load_topo("mi300x-x8-xgmi");

    for (int p = 2; p < 8; p++) {
        g_autoptr(CsTopo) mesh = mesh_topo(p);
        check_all_ops(mesh, p);
    }
    check_all_ops(mi300x, 8);
}

/* Nodes of 8 and 5 GPUs (an explicit graph): each channel starts node k at local position
 * c mod L_k, so the 13 channels below enter node 1 at each of its 5 GPUs. */
static void
test_checker_uneven(void)
{
    static const int sizes[] = { 8, 5 };
    g_autoptr(CsTopo) topo = load_explicit(sizes, 2, FALSE);
    gboolean entered[5] = { FALSE };

    check_all_ops(topo, 13);
    g_autoptr(CsSchedule) sched = build(topo, CS_OP_ALL_REDUCE, 13, 0, 4 * 1300, 0, 13);
    for (int c = 0; c < 13; c++) {
        for (int r = 0; r < 8; r++) {
            int q = next_of(sched, r, c);
            if (q >= 8)
                entered[q - 8] = TRUE;
        }
    }
    for (int i = 0; i < 5; i++)
        g_assert_true(entered[i]);
}

/* ---- Broadcast and reduce: a channel's share in NCCL's chunks ---- */

/* NCCL's chunk for ring broadcast and reduce: stepSize x BROADCAST_CHUNKSTEPS (=
 * REDUCE_CHUNKSTEPS = 1, src/include/collectives.h), stepSize = buffSize / NCCL_STEPS (8), LL
 * carrying half its line, LL128 15 of 16 words (src/enqueue.cc calcCollChunking, NCCL 2.30.7).
 * Buffer sizes from src/include/device.h and src/init.cc: Simple 4 MiB (DEFAULT_BUFFSIZE); LL
 * NCCL_LL_LINES_PER_THREAD 8 x NCCL_LL_MAX_NTHREADS 512 x NCCL_STEPS x 16-byte lines; LL128
 * NCCL_LL128_ELEMS_PER_THREAD 120 x NCCL_LL128_MAX_NTHREADS 640 x NCCL_STEPS x 8 bytes. Written
 * out here from NCCL's constants, not read from models/protocol.c. */
static gint64
nccl_bcast_chunk(CsProto proto)
{
    switch (proto) {
    case CS_PROTO_SIMPLE:
        return (G_GINT64_CONSTANT(4) << 20) / 8;
    case CS_PROTO_LL:
        return (G_GINT64_CONSTANT(8) * 512 * 8 * 16) / 8 / 2;
    case CS_PROTO_LL128:
        return (G_GINT64_CONSTANT(120) * 640 * 8 * 8) / 8 / 16 * 15;
    default:
        g_assert_not_reached();
    }
}

/* A unidirectional ring of 8 GPUs, one 100 GB/s link with 1 us alpha from each to the next:
 * every hop of a ring order is one uncontended link. */
static CsTopo *
load_ring8(void)
{
    g_autoptr(GString) json = g_string_new(
        "{\"name\": \"ring8\", \"gpu\": {\"launch\": \"0 us\", \"step_overhead\": \"0 us\", "
        "\"reduce_bandwidth\": \"1000 GB/s\", \"copy_bandwidth\": \"1000 GB/s\"}, \"devices\": [");
    for (int i = 0; i < 8; i++)
        g_string_append_printf(json, "%s{\"name\": \"g%d\", \"kind\": \"gpu\"}", i > 0 ? ", " : "",
                               i);
    g_string_append(json, "], \"links\": [");
    for (int i = 0; i < 8; i++)
        g_string_append_printf(json,
                               "%s{\"endpoints\": [\"g%d\", \"g%d\"], \"kind\": \"nvlink\", "
                               "\"bandwidth\": \"100 GB/s\", \"alpha\": \"1 us\", \"duplex\": "
                               "false}",
                               i > 0 ? ", " : "", i, (i + 1) % 8);
    g_string_append(json, "]}");
    GError *error = NULL;
    CsTopo *topo = cs_topo_load_data(json->str, "inline ring8", &error);
    g_assert_no_error(error);
    return topo;
}

typedef struct {
    const char *name;
    CsOp op;
    CsProto proto;
    int channels;
    gint64 size_bytes; /* 0: 4 MiB */
} ChunkCase;

static const ChunkCase chunk_cases[] = {
    { "broadcast-simple-1ch", CS_OP_BROADCAST, CS_PROTO_SIMPLE, 1, 0 },
    { "broadcast-simple-4ch", CS_OP_BROADCAST, CS_PROTO_SIMPLE, 4, 0 },
    { "broadcast-simple-32ch", CS_OP_BROADCAST, CS_PROTO_SIMPLE, 32, 0 },
    { "broadcast-ll-1ch", CS_OP_BROADCAST, CS_PROTO_LL, 1, 0 },
    { "broadcast-ll128-1ch", CS_OP_BROADCAST, CS_PROTO_LL128, 1, 0 },
    { "reduce-simple-1ch", CS_OP_REDUCE, CS_PROTO_SIMPLE, 1, 0 },
    { "reduce-ll-2ch", CS_OP_REDUCE, CS_PROTO_LL, 2, 0 },
    { "reduce-ll128-1ch", CS_OP_REDUCE, CS_PROTO_LL128, 1, 0 },
    /* 8 whole LL128 chunks (4 MiB is 7.3 of them). */
    { "broadcast-ll128-8chunks", CS_OP_BROADCAST, CS_PROTO_LL128, 1, 8 * 576000 },
    { "reduce-ll128-8chunks", CS_OP_REDUCE, CS_PROTO_LL128, 1, 8 * 576000 },
};

/* 4 MiB on 8 ranks: each channel's share n/C crosses h = 7 hops in k = ceil((n/C) / chunk)
 * chunks, each passed on as it arrives (NCCL runRing in src/device/broadcast.h and reduce.h).
 * Expectation: 7 k C transfers and 7 + k - 1 rounds (chunk j leaves the last rank at round
 * 7 + j); the semantic checker proves the result. Timed by Hockney's machine (textbook: a
 * send holds its link for alpha + bytes / B) on load_ring8() with one channel and k equal
 * chunks, the pipeline takes the first chunk's h stages and then one stage per further chunk: T =
 * (h + k - 1) (alpha + c beta) for k equal chunks, against the whole share in one piece, T1 = h
 * (alpha + n beta), beta = 1 / B (+ gamma for reduce's reductions, which Hockney's machine runs
 * after arrival). At 4 MiB with alpha = 1 us and B = 100 GB/s, Simple (k = 8): 87.4 us against
 * 300.6 us. */
static void
test_chunked_chain(gconstpointer data)
{
    const ChunkCase *c = data;
    const int P = 8;
    const int h = P - 1;
    const gint64 n = c->size_bytes > 0 ? c->size_bytes : G_GINT64_CONSTANT(4) << 20;
    const gint64 chunk = nccl_bcast_chunk(c->proto);
    const gint64 share = n / c->channels;
    const gint64 k = (share + chunk - 1) / chunk;
    g_autoptr(CsTopo) topo = load_ring8();

    CsAlgoArgs args;
    cs_algo_args_init(&args, topo, c->op, P, n);
    args.proto = c->proto;
    args.n_channels = c->channels;
    GError *error = NULL;
    g_autoptr(CsSchedule) sched = cs_algo_build(&cs_algo_ring, &args, &error);
    g_assert_no_error(error);
    CsCheckReport report;
    g_assert_true(cs_check_schedule(sched, &report, &error));
    g_assert_no_error(error);
    g_assert_cmpint(report.n_messages, ==, (gint64)h * k * c->channels);
    g_assert_cmpint(report.n_rounds, ==, h + k - 1);
    g_assert_cmpint(report.bytes_sent, ==, (gint64)h * n);
    /* The formula below holds for equal chunks; one channel, so that no link is shared. */
    if (c->channels != 1 || share % chunk != 0)
        return;

    const double alpha = 1e-6;
    /* Per byte: the link, and for reduce the reduction each hop does after arrival (gamma,
     * 1 / reduce_bandwidth); a broadcast's copies are free on Hockney's machine. */
    const double beta = 1 / 100e9 + (c->op == CS_OP_REDUCE ? 1 / 1000e9 : 0);
    const double want = (h + k - 1) * (alpha + chunk * beta);
    const double unpipelined = h * (alpha + n * beta);
    CsEngineOptions opt = { .textbook = TRUE };
    g_autoptr(CsResult) result = cs_engine_run(sched, topo, &opt, &error);
    g_assert_no_error(error);
    const double t = cs_result_time_us(result) * 1e-6;
    g_test_message("%s: %" G_GINT64_FORMAT " chunks, %.3f us, formula %.3f us, one piece %.3f us",
                   c->name, k, t * 1e6, want * 1e6, unpipelined * 1e6);
    g_assert_cmpfloat_with_epsilon(t / want, 1.0, 1e-3);
    if (c->proto == CS_PROTO_SIMPLE) {
        /* 8 equal chunks: the pipeline factor h k (alpha + c/B) / ((h + k - 1)(alpha + c/B))
         * tends to h k / (h + k - 1) = 4 as alpha vanishes; here 300.6 / 87.4 = 3.44. */
        g_assert_cmpint(k, ==, 8);
        g_assert_cmpfloat_with_epsilon(
            unpipelined / t, h * (alpha + n * beta) / (14 * (alpha + chunk * beta)), 1e-3);
    }
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);

    static const TopoCase nic_cases[] = {
        { "hgx-h100x8-2n", 0, NULL, 0 },
        { "hgx-h100x8-16n", 0, NULL, 0 },
        { NULL, 3, "dgx-h100x4", 4 },
        { NULL, 2, NULL, 4 },
    };
    for (guint i = 0; i < G_N_ELEMENTS(nic_cases); i++) {
        const TopoCase *tc = &nic_cases[i];
        g_autofree char *path = tc->name != NULL ? g_strdup_printf("/algo/ring/nics/%s", tc->name)
                                : tc->node != NULL
                                    ? g_strdup_printf("/algo/ring/nics/%dx%s", tc->nodes, tc->node)
                                    : g_strdup("/algo/ring/nics/2x4-ranks-interleaved");
        g_test_add_data_func(path, tc, test_nic_balance);
    }
    static const char *const machines[] = { "dgx-h100x8", "pcie-l40sx8", "gb200-nvl72" };
    for (guint i = 0; i < G_N_ELEMENTS(machines); i++) {
        g_autofree char *path = g_strdup_printf("/algo/ring/order/%s", machines[i]);
        g_test_add_data_func(path, machines[i], test_single_machine_rank_order);
    }
    g_test_add_func("/algo/ring/order/pcie-switch-pairs", test_pcie_switch_order);
    g_test_add_func("/algo/ring/mesh-rings", test_mesh_rings);
    g_test_add_func("/algo/ring/order/full-mesh-rings", test_full_mesh_rings);
    g_test_add_func("/algo/ring/order/full-mesh-nodes", test_full_mesh_nodes);
    g_test_add_func("/algo/ring/order/full-mesh-nodes-nics", test_full_mesh_nodes_nics);
    g_test_add_func("/algo/ring/order/full-mesh-nodes-rail-paths", test_full_mesh_nodes_rail_paths);
    g_test_add_func("/algo/ring/mesh-paths", test_mesh_paths);
    g_test_add_func("/algo/ring/order/nvlink-domains", test_nvlink_domains);
    g_test_add_func("/algo/ring/check/full-mesh", test_full_mesh_checker);
    g_test_add_func("/algo/ring/order/hgx-2n-channels", test_two_node_rings);
    static const TopoCase odd_cases[] = {
        { NULL, 3, "dgx-h100x4", 4 },
        { NULL, 5, "dgx-h100x4", 4 },
        { NULL, 5, "rtx2080ti-x2-pcie3-shm", 1 },
    };
    for (guint i = 0; i < G_N_ELEMENTS(odd_cases); i++) {
        g_autofree char *path
            = g_strdup_printf("/algo/ring/check/%dx%s", odd_cases[i].nodes, odd_cases[i].node);
        g_test_add_data_func(path, &odd_cases[i], test_checker_odd_nodes);
    }
    g_test_add_func("/algo/ring/check/uneven-8+5", test_checker_uneven);
    for (gsize i = 0; i < G_N_ELEMENTS(chunk_cases); i++) {
        g_autofree char *path = g_strdup_printf("/algo/ring/chunks/%s", chunk_cases[i].name);
        g_test_add_data_func(path, &chunk_cases[i], test_chunked_chain);
    }
    return g_test_run();
}
