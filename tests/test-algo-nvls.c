// SPDX-License-Identifier: MIT
/* Tests of NVLink SHARP (src/algos/nvls.c) and NVLSTree (src/algos/nvls_tree.c): where they
 * apply, the semantic checker on the shipped NVSwitch topologies, the structure of the
 * modelled traffic (two message rounds inside a domain, one tree per rail across domains),
 * the bytes NVLS puts on each GPU's NVLink port, and its bandwidth against the ring's. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "algos/algo.h"
#include "algos/pipetree.h"
#include "sched/check.h"
#include "engine/engine.h"
#include "predict/predict.h"
#include "test-util.h"

extern const CsAlgo cs_algo_nvls;
extern const CsAlgo cs_algo_nvls_tree;
extern const CsAlgo cs_algo_ring;

static CsSchedule *
build(const CsAlgo *algo, const CsTopo *topo, CsOp op, gint64 size, gint64 chunk, int n_channels)
{
    CsAlgoArgs args;
    GError *error = NULL;
    CsSchedule *sched;

    cs_algo_args_init(&args, topo, op, cs_topo_n_ranks(topo), size);
    args.chunk_bytes = chunk;
    args.n_channels = n_channels;
    sched = cs_algo_build(algo, &args, &error);
    g_assert_no_error(error);
    return sched;
}

/* One NVSwitch with multicast reduction joining @p GPUs (placeholder numbers: only the
 * structure matters to the schedules). */
static CsTopo *
load_switch_box(int p)
{
    g_autoptr(GString) json = g_string_new(NULL);
    GError *error = NULL;
    CsTopo *topo;

    g_string_append_printf(json,
                           "{\"name\": \"test-nvs%d\", \"gpu\": {\"launch\": \"4 us\", "
                           "\"step_overhead\": \"0.2 us\", \"reduce_bandwidth\": \"1 TB/s\", "
                           "\"copy_bandwidth\": \"1.5 TB/s\"}, \"devices\": [{\"name\": \"sw\", "
                           "\"kind\": \"nvswitch\", \"multicast_reduction\": true}",
                           p);
    for (int i = 0; i < p; i++)
        g_string_append_printf(json, ", {\"name\": \"gpu%d\", \"kind\": \"gpu\"}", i);
    g_string_append(json, "], \"links\": [");
    for (int i = 0; i < p; i++)
        g_string_append_printf(json,
                               "%s{\"endpoints\": [\"gpu%d\", \"sw\"], \"kind\": \"nvswitch\", "
                               "\"bandwidth\": \"450 GB/s\", \"alpha\": \"0.1 us\"}",
                               i > 0 ? ", " : "", i);
    g_string_append(json, "]}");
    topo = cs_topo_load_data(json->str, "inline switch box", &error);
    g_assert_no_error(error);
    return topo;
}

/* ---- Where they apply ---- */

static void
test_supports(void)
{
    g_autoptr(CsTopo) h100 = cs_test_load_topo("dgx-h100x8");
    g_autoptr(CsTopo) a100 = cs_test_load_topo("dgx-a100x8");
    g_autoptr(CsTopo) two = cs_test_load_topo("hgx-h100x8-2n");
    g_autoptr(CsTopo) nvl72 = cs_test_load_topo("gb200-nvl72");
    const char *why = NULL;

    g_assert_false(cs_algo_nvls.supports(NULL, CS_OP_ALL_REDUCE, 8, &why));
    g_assert_nonnull(why);
    why = NULL;
    /* Second-generation NVSwitch (A100) has no multicast reduction. */
    g_assert_false(cs_algo_nvls.supports(a100, CS_OP_ALL_REDUCE, 8, &why));
    g_assert_cmpstr(why, ==,
                    "needs an NVSwitch with multicast_reduction (NVLink SHARP) in the topology");
    g_assert_true(cs_algo_nvls.supports(h100, CS_OP_ALL_REDUCE, 8, &why));
    g_assert_true(cs_algo_nvls.supports(h100, CS_OP_ALL_GATHER, 8, &why));
    g_assert_false(cs_algo_nvls.supports(h100, CS_OP_BROADCAST, 8, &why));
    /* Two nodes are two NVLink domains: without SHARP (CollNet) NVLS cannot span them,
     * NVLSTree can. */
    g_assert_false(cs_algo_nvls.supports(two, CS_OP_ALL_REDUCE, 16, &why));
    g_assert_nonnull(strstr(why, "several NVLink domains"));
    g_assert_nonnull(strstr(why, "nvls_tree"));
    g_assert_true(cs_algo_nvls_tree.supports(two, CS_OP_ALL_REDUCE, 16, &why));
    g_assert_false(cs_algo_nvls_tree.supports(two, CS_OP_ALL_GATHER, 16, &why));
    g_assert_false(cs_algo_nvls_tree.supports(a100, CS_OP_ALL_REDUCE, 8, &why));
    /* The NVL72 rack is 18 trays (nodes) but one NVLink domain: NVLS spans all 72 GPUs. */
    g_assert_cmpint(cs_topo_n_nodes(nvl72), ==, 18);
    g_assert_true(cs_algo_nvls.supports(nvl72, CS_OP_ALL_REDUCE, 72, &why));
}

static void
test_simple_only(void)
{
    g_autoptr(CsTopo) h100 = cs_test_load_topo("dgx-h100x8");
    CsAlgoArgs args;
    GError *error = NULL;
    CsSchedule *sched;

    cs_algo_args_init(&args, h100, CS_OP_ALL_REDUCE, 8, 1 << 20);
    args.proto = CS_PROTO_LL128;
    sched = cs_algo_build(&cs_algo_nvls, &args, &error);
    g_assert_null(sched);
    g_assert_error(error, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_UNSUPPORTED);
    g_clear_error(&error);
    sched = cs_algo_build(&cs_algo_nvls_tree, &args, &error);
    g_assert_null(sched);
    g_assert_error(error, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_UNSUPPORTED);
    g_clear_error(&error);
}

/* ---- Checker ---- */

/* Every op of @data's algorithm on a topology: sizes leaving remainders (37 floats a rank
 * plus 3), 40-byte chunks on 1 and 3 channels, the default chunk, fewer elements than ranks. */
typedef struct {
    const CsAlgo *algo;
    const char *topo; /* shipped, or NULL: */
    int nodes;        /* a cluster of @nodes x @node, or with @nodes 0 ... */
    const char *node;
    int p; /* ... one switch of @p GPUs */
} Case;

static CsTopo *
load_case(const Case *c)
{
    if (c->topo != NULL)
        return cs_test_load_topo(c->topo);
    if (c->nodes > 0)
        return cs_test_load_cluster(c->nodes, c->node, 4);
    return load_switch_box(c->p);
}

static void
test_checker(gconstpointer data)
{
    const Case *c = data;
    g_autoptr(CsTopo) topo = load_case(c);
    int p = cs_topo_n_ranks(topo);

    for (int op = 0; op < CS_N_OPS; op++) {
        if (!(c->algo->ops & CS_OP_BIT(op)))
            continue;
        gint64 size = 4 * (37 * (gint64)p + 3);
        g_autoptr(CsSchedule) a = build(c->algo, topo, op, size, 40, 1);
        g_autoptr(CsSchedule) b = build(c->algo, topo, op, size, 40, 3);
        g_autoptr(CsSchedule) d = build(c->algo, topo, op, size, 0, 2);
        g_autoptr(CsSchedule) e = build(c->algo, topo, op, 4 * 3, 0, 1);
        cs_test_assert_checks(a, NULL);
        cs_test_assert_checks(b, NULL);
        cs_test_assert_checks(d, NULL);
        cs_test_assert_checks(e, NULL);
    }
}

/* ---- Structure ---- */

/* One chunk of NVLS all-reduce on P ranks: every rank sends each peer its shard, then
 * multicasts its reduced shard: 2 P (P-1) messages of S/P bytes (P = 8, S = 8 x 256 floats:
 * 112 messages of 1,024 bytes). A step names one peer, so a rank's P-1 sends are consecutive
 * steps and the checker counts a round for each: the reduce-scatter sends travel in rounds
 * 1..7, the last receive takes a round-7 message, the multicast sends follow in rounds 8..14.
 * (No message is forwarded: every message is one switch traversal; the engine lets a send
 * step end when its last byte has left, so a phase costs one latency, not P-1.) */
static void
test_nvls_rounds(void)
{
    g_autoptr(CsTopo) h100 = cs_test_load_topo("dgx-h100x8");
    g_autoptr(CsSchedule) sched = build(&cs_algo_nvls, h100, CS_OP_ALL_REDUCE, 8 * 1024, 0, 1);
    CsCheckReport report;

    cs_test_assert_checks(sched, &report);
    g_assert_cmpint(report.n_rounds, ==, 2 * 7);
    g_assert_cmpint(report.n_messages, ==, 2 * 8 * 7);
    g_assert_cmpint(report.bytes_sent, ==, 2 * 8 * 7 * 1024);
}

/* NVLSTree on 2 x 8 H100, one channel, S = 16 x 4 KiB (one chunk: the NVLS_TREE rule gives
 * 32 KiB for so small a size): rank j of each node heads shard j (S/8 = 8 KiB). Tree 0 over
 * 2 nodes is node 0 -> node 1: each head of node 1 sends its node's sum of shard j up (8 KiB)
 * and each head of node 0 sends the total back down (8 KiB); every inter-node message stays
 * on its rail. Inside a node a rank sends each of its 7 peers their 8 KiB shard (reduce-
 * scatter) and its own reduced 8 KiB shard (multicast): 2 x 7 x 8 KiB. */
static void
test_nvls_tree_rails(void)
{
    g_autoptr(CsTopo) topo = cs_test_load_topo("hgx-h100x8-2n");
    gint64 s = 16 * 4096;
    g_autoptr(CsSchedule) sched = build(&cs_algo_nvls_tree, topo, CS_OP_ALL_REDUCE, s, 0, 1);

    cs_test_assert_checks(sched, NULL);
    for (int r = 0; r < 16; r++) {
        gsize n;
        const CsStep *steps = cs_schedule_steps(sched, r, &n);
        gint64 inter = 0;
        gint64 intra = 0;
        for (gsize i = 0; i < n; i++) {
            int q = steps[i].send_peer;
            if (q < 0)
                continue;
            if (cs_topo_rank_node(topo, q) != cs_topo_rank_node(topo, r)) {
                g_assert_cmpint(q % 8, ==, r % 8);
                inter += steps[i].bytes;
            }
            else {
                intra += steps[i].bytes;
            }
        }
        g_assert_cmpint(inter, ==, s / 8);
        g_assert_cmpint(intra, ==, 2 * 7 * (s / 8));
    }
}

/* The NVLink domains by their definition, every earlier head tried (the quadratic search
 * cs_node_groups_new_nvlink avoids by looking only inside a rank's NVLink island). */
static int *
domains_by_definition(const CsTopo *topo, int n)
{
    int *domain = g_new(int, n);
    g_autofree int *heads = g_new(int, n);
    int n_heads = 0;

    for (int r = 0; r < n; r++) {
        int d = 0;
        while (d < n_heads && cs_topo_route(topo, heads[d], r)->link_class != CS_LINK_CLASS_NVLINK)
            d++;
        if (d == n_heads)
            heads[n_heads++] = r;
        domain[r] = d;
    }
    return domain;
}

/* Four GPUs in an NVLink chain 0-1-2-3, all on one PCIe switch: one NVLink island, but GPU 3
 * is routed to GPU 0 over PCIe (2 hops against 3), so it heads a second domain. */
static CsTopo *
load_nvlink_chain(void)
{
    GError *error = NULL;
    const char *json
        = "{\"name\": \"test-chain\", \"gpu\": {\"launch\": \"4 us\", \"step_overhead\": \"0.2 "
          "us\", \"reduce_bandwidth\": \"1 TB/s\", \"copy_bandwidth\": \"1.5 TB/s\"}, "
          "\"devices\": [{\"name\": \"sw\", \"kind\": \"pcie_switch\"}, {\"name\": \"g0\", "
          "\"kind\": \"gpu\"}, {\"name\": \"g1\", \"kind\": \"gpu\"}, {\"name\": \"g2\", "
          "\"kind\": \"gpu\"}, {\"name\": \"g3\", \"kind\": \"gpu\"}], \"links\": ["
          "{\"endpoints\": [\"g0\", \"g1\"], \"kind\": \"nvlink\", \"bandwidth\": \"50 GB/s\", "
          "\"alpha\": \"0.1 us\"}, {\"endpoints\": [\"g1\", \"g2\"], \"kind\": \"nvlink\", "
          "\"bandwidth\": \"50 GB/s\", \"alpha\": \"0.1 us\"}, {\"endpoints\": [\"g2\", \"g3\"], "
          "\"kind\": \"nvlink\", \"bandwidth\": \"50 GB/s\", \"alpha\": \"0.1 us\"}, "
          "{\"endpoints\": [\"g0\", \"sw\"], \"kind\": \"pcie\", \"bandwidth\": \"24 GB/s\", "
          "\"alpha\": \"0.1 us\"}, {\"endpoints\": [\"g1\", \"sw\"], \"kind\": \"pcie\", "
          "\"bandwidth\": \"24 GB/s\", \"alpha\": \"0.1 us\"}, {\"endpoints\": [\"g2\", \"sw\"], "
          "\"kind\": \"pcie\", \"bandwidth\": \"24 GB/s\", \"alpha\": \"0.1 us\"}, "
          "{\"endpoints\": [\"g3\", \"sw\"], \"kind\": \"pcie\", \"bandwidth\": \"24 GB/s\", "
          "\"alpha\": \"0.1 us\"}]}";
    CsTopo *topo = cs_topo_load_data(json, "inline NVLink chain", &error);

    g_assert_no_error(error);
    return topo;
}

/* NVLink domains found island by island are the domains of their definition, on every kind
 * of machine: NVSwitch nodes, multi-node NVLink racks, PCIe only, virtual ranks on one GPU,
 * an island holding two domains; and for the first ranks of a machine as for all of them. */
static void
test_nvlink_domains(void)
{
    const char *names[] = { "dgx-h100x8",    "hgx-h100x8-2n",          "gb200-nvl72-2rack-ib",
                            "pcie-l40sx8",   "rtx2080ti-x2-pcie3-shm", "h100-1gpu-vranks8",
                            "mi300x-x8-xgmi" };

    for (int t = 0; t <= (int)G_N_ELEMENTS(names); t++) {
        g_autoptr(CsTopo) topo
            = t < (int)G_N_ELEMENTS(names) ? cs_test_load_topo(names[t]) : load_nvlink_chain();
        const int all = cs_topo_n_ranks(topo);
        const int prefixes[] = { all, MAX(1, all / 2 + 1) };

        for (int k = 0; k < 2; k++) {
            const int n = prefixes[k];
            g_autofree int *want = domains_by_definition(topo, n);
            g_autoptr(CsNodeGroups) got = cs_node_groups_new_nvlink(topo, n, NULL);

            g_assert_nonnull(got);
            for (int r = 0; r < n; r++)
                g_assert_cmpint(got->group_of[r], ==, want[r]);
        }
    }

    g_autoptr(CsTopo) chain = load_nvlink_chain();
    g_autoptr(CsNodeGroups) domains = cs_node_groups_new_nvlink(chain, 4, NULL);
    g_assert_cmpint(domains->n_groups, ==, 2);
    g_assert_cmpint(domains->group_of[3], ==, 1);
    for (int r = 0; r < 4; r++)
        g_assert_cmpint(cs_topo_rank_island(chain, r), ==, 0);

    g_autoptr(CsTopo) racks = cs_test_load_topo("gb200-nvl72-2rack-ib");
    for (int r = 0; r < cs_topo_n_ranks(racks); r++)
        g_assert_cmpint(cs_topo_rank_island(racks, r), ==, r / 72);
    g_autoptr(CsTopo) pcie = cs_test_load_topo("pcie-l40sx8");
    for (int r = 0; r < cs_topo_n_ranks(pcie); r++)
        g_assert_cmpint(cs_topo_rank_island(pcie, r), ==, r);
}

/* On one NVLink domain there is no tree between domains (NCCL enables NVLSTree only across
 * nodes): nvls_tree builds NVLS's schedule, step for step. */
static void
test_nvls_tree_one_domain(void)
{
    g_autoptr(CsTopo) h100 = cs_test_load_topo("dgx-h100x8");
    g_autoptr(CsSchedule) a = build(&cs_algo_nvls, h100, CS_OP_ALL_REDUCE, 3 << 20, 0, 4);
    g_autoptr(CsSchedule) b = build(&cs_algo_nvls_tree, h100, CS_OP_ALL_REDUCE, 3 << 20, 0, 4);

    g_assert_cmpuint(cs_schedule_n_steps(a), ==, cs_schedule_n_steps(b));
    for (int r = 0; r < 8; r++) {
        gsize na, nb;
        const CsStep *sa = cs_schedule_steps(a, r, &na);
        const CsStep *sb = cs_schedule_steps(b, r, &nb);
        g_assert_cmpuint(na, ==, nb);
        for (gsize i = 0; i < na; i++) {
            g_assert_cmpint(sa[i].kind, ==, sb[i].kind);
            g_assert_cmpint(sa[i].send_peer, ==, sb[i].send_peer);
            g_assert_cmpint(sa[i].recv_peer, ==, sb[i].recv_peer);
            g_assert_cmpint(sa[i].bytes, ==, sb[i].bytes);
            g_assert_cmpint(sa[i].flags, ==, sb[i].flags);
        }
    }
}

/* ---- Traffic on the GPU links ---- */

static void
add_link_bytes(gpointer user_data, int link, gint64 bytes, CsTime start, CsTime end)
{
    gint64 *per_link = user_data;

    (void)start;
    (void)end;
    per_link[link] += bytes;
}

/* NVLS all-reduce of S = 1 MiB on 8 H100 (4 channels; S splits evenly into 4 x 8 shards
 * parts, so every shard totals S/8 = 128 KiB over the channels). What NVLS moves over each
 * GPU's port (nvls.c): up, S for its 8 shards read by their heads' ld_reduce (7 sent, its
 * own read by REDUCE_SELF) + S/8 for its multicast = 9/8 S; down, S/8 for the sum of its
 * shard + S for the 8 multicasts (7 peers' and its own, MULTICAST_SELF) = 9/8 S; 1,179,648
 * bytes on each of the 16 GPU <-> NVSwitch links, under both network models, and nothing on
 * the PCIe links to the NICs. A ring would move 2 (P-1)/P S = 1,835,008 bytes each way. */
static void
test_nvls_link_bytes(gconstpointer data)
{
    const char *model = data;
    g_autoptr(CsTopo) h100 = cs_test_load_topo("dgx-h100x8");
    gint64 s = 1 << 20;
    g_autoptr(CsSchedule) sched = build(&cs_algo_nvls, h100, CS_OP_ALL_REDUCE, s, 0, 4);
    int n_links = cs_topo_n_links(h100);
    g_autofree gint64 *per_link = g_new0(gint64, n_links);
    CsObserver obs = { .user_data = per_link, .link_busy = add_link_bytes };
    CsEngineOptions opt = { .net_model = model, .observer = &obs };
    GError *error = NULL;
    g_autoptr(CsResult) res = cs_engine_run(sched, h100, &opt, &error);
    int nvlinks = 0;

    g_assert_no_error(error);
    g_assert_nonnull(res);
    for (int i = 0; i < n_links; i++) {
        const CsLink *l = cs_topo_link(h100, i);
        CsDeviceKind a = cs_topo_device(h100, l->src)->kind;
        CsDeviceKind b = cs_topo_device(h100, l->dst)->kind;
        if ((a == CS_DEVICE_GPU && b == CS_DEVICE_NVSWITCH)
            || (a == CS_DEVICE_NVSWITCH && b == CS_DEVICE_GPU)) {
            g_assert_cmpint(per_link[i], ==, s + s / 8);
            nvlinks++;
        }
        else {
            g_assert_cmpint(per_link[i], ==, 0);
        }
    }
    g_assert_cmpint(nvlinks, ==, 16);
}

/* At 1 GiB on 8 H100 (NVLS on NCCL's 16 CTAs), NVLS must beat the ring (measured: about 480
 * against 370 GB/s, the
 * trace header of h100-sxm-8gpu-x2-ib-ndr8x400g) and stay under its own link bound. A GPU
 * port gives 18 x 25 GB/s x 0.824 = 370.8 GB/s a direction. The ring moves 2 (P-1)/P S
 * each way: busbw <= 370.8 GB/s. NVLS moves 9/8 S each way at 0.85 of the port: busbw =
 * 2 (P-1)/P S / t <= 14/8 x 8/9 x 0.85 x 370.8 = 490.3 GB/s. */
static void
test_nvls_beats_ring(gconstpointer data)
{
    g_autoptr(CsTopo) h100 = cs_test_load_topo("dgx-h100x8");
    CsPredictOptions opt;
    CsPrediction nvls, ring;
    GError *error = NULL;

    cs_predict_options_init(&opt);
    opt.engine.net_model = data;
    g_assert_true(cs_predict_one(h100, CS_OP_ALL_REDUCE, (gint64)1 << 30, &cs_algo_nvls,
                                 CS_PROTO_SIMPLE, &opt, &nvls, &error));
    g_assert_no_error(error);
    g_assert_true(cs_predict_one(h100, CS_OP_ALL_REDUCE, (gint64)1 << 30, &cs_algo_ring,
                                 CS_PROTO_SIMPLE, &opt, &ring, &error));
    g_assert_no_error(error);
    g_test_message("busbw at 1 GiB: nvls %.1f GB/s, ring %.1f GB/s", nvls.busbw_GBps,
                   ring.busbw_GBps);
    g_assert_cmpfloat(ring.busbw_GBps, <=, 370.8);
    g_assert_cmpfloat(nvls.busbw_GBps, <=, 490.3);
    /* Fair sharing (maxmin) slows every multicast to its most loaded port of the switch, and
     * the channel waits for it (docs/limitations.md): there NVLS only stays under its bound. */
    if (g_strcmp0(data, "reservation") == 0)
        g_assert_cmpfloat(nvls.busbw_GBps, >, 1.1 * ring.busbw_GBps);
}

/* NVLS on the 72 GPUs of an NVL72 rack, on NCCL's 24 CTAs: one loop (every rank's shard of
 * every channel one chunk further) is 72 x 24 x 64 KiB = 108 MiB at 8 GiB, and NCCL's chunk
 * shrinks for smaller sizes, which moves the pipeline's line; the three sizes 8 GiB is
 * extended from keep its chunk. The pipeline fills over three loops (a chunk's all-gather
 * runs two loops behind its reduce-scatter), so the first three sizes tried (2, 4 and 8
 * loops) are off the line and the window doubles (4, 8, 16 loops): the extension stays within
 * 0.5% of the chunk-by-chunk replay and replays fewer events. */
static void
test_nvls_extend_72(void)
{
    g_autoptr(CsTopo) nvl72 = cs_test_load_topo("gb200-nvl72");
    CsPredictOptions opt;
    CsPrediction fast, exact;
    GError *error = NULL;

    g_test_summary("An 8 GiB NVLS all-reduce on 72 GPUs is extended from three smaller sizes at "
                   "its own chunk, past the pipeline's fill, within 0.5% of the exact replay.");
    cs_predict_options_init(&opt);
    g_assert_true(cs_predict_one(nvl72, CS_OP_ALL_REDUCE, (gint64)8 << 30, &cs_algo_nvls,
                                 CS_PROTO_SIMPLE, &opt, &fast, &error));
    g_assert_no_error(error);
    g_assert_true(fast.extrapolated);
    g_assert_cmpint(fast.n_channels, ==, 24);
    opt.exact = TRUE;
    g_assert_true(cs_predict_one(nvl72, CS_OP_ALL_REDUCE, (gint64)8 << 30, &cs_algo_nvls,
                                 CS_PROTO_SIMPLE, &opt, &exact, &error));
    g_assert_no_error(error);
    g_test_message("8 GiB: extended %.1f us (%" G_GINT64_FORMAT
                   " events), exact %.1f us (%" G_GINT64_FORMAT " events)",
                   fast.time_us, fast.result.n_events, exact.time_us, exact.result.n_events);
    g_assert_cmpfloat(fabs(fast.time_us - exact.time_us), <, 0.005 * exact.time_us);
    g_assert_cmpint(fast.result.n_events, <, exact.result.n_events);
}

int
main(int argc, char **argv)
{
#ifndef NVLS_SLOW
    static const int box_ranks[]
        = { 1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16, 17, 18,
            19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 48, 64 };
    const gboolean slow = FALSE;
#else
    static const int box_ranks[] = { 100, 128, 257 };
    const gboolean slow = TRUE;
#endif
    static const Case cases[] = {
        { &cs_algo_nvls, "dgx-h100x4", 0, NULL, 0 },
        { &cs_algo_nvls, "dgx-h100x8", 0, NULL, 0 },
        { &cs_algo_nvls, "gb200-nvl72", 0, NULL, 0 },
        { &cs_algo_nvls_tree, "dgx-h100x8", 0, NULL, 0 },
        { &cs_algo_nvls_tree, "hgx-h100x8-2n", 0, NULL, 0 },
        { &cs_algo_nvls_tree, "hgx-h100x8-16n", 0, NULL, 0 },
        { &cs_algo_nvls_tree, "gb200-nvl72", 0, NULL, 0 },
        { &cs_algo_nvls_tree, NULL, 3, "dgx-h100x4", 0 },
        { &cs_algo_nvls_tree, NULL, 5, "dgx-h100x4", 0 },
    };
    static Case box_cases[G_N_ELEMENTS(box_ranks)];

    g_test_init(&argc, &argv, NULL);

    /* The slow build runs only the big switches below. */
    for (guint i = 0; i < (slow ? 0 : G_N_ELEMENTS(cases)); i++) {
        g_autofree char *path
            = cases[i].topo != NULL
                  ? g_strdup_printf("/algo/%s/check/%s", cases[i].algo->name, cases[i].topo)
                  : g_strdup_printf("/algo/%s/check/%dx%s", cases[i].algo->name, cases[i].nodes,
                                    cases[i].node);
        g_test_add_data_func(path, &cases[i], test_checker);
    }
    if (!slow) {
        g_test_add_func("/algo/nvls/supports", test_supports);
        g_test_add_func("/algo/nvls/simple-only", test_simple_only);
        g_test_add_func("/algo/nvls/rounds", test_nvls_rounds);
        g_test_add_func("/algo/nvls_tree/rails", test_nvls_tree_rails);
        g_test_add_func("/algo/nvls_tree/one-domain", test_nvls_tree_one_domain);
        g_test_add_func("/algo/nvls/nvlink-domains", test_nvlink_domains);
        g_test_add_data_func("/algo/nvls/link-bytes/reservation", "reservation",
                             test_nvls_link_bytes);
        g_test_add_data_func("/algo/nvls/link-bytes/maxmin", "maxmin", test_nvls_link_bytes);
        g_test_add_data_func("/algo/nvls/beats-ring/reservation", "reservation",
                             test_nvls_beats_ring);
        g_test_add_data_func("/algo/nvls/beats-ring/maxmin", "maxmin", test_nvls_beats_ring);
    }
    else {
        g_test_add_func("/algo/nvls/extend-72", test_nvls_extend_72);
    }
    /* NVLS on one switch of P GPUs, for the rank counts of the registry sweep. */
    for (guint i = 0; i < G_N_ELEMENTS(box_ranks); i++) {
        g_autofree char *path = g_strdup_printf("/algo/nvls/check/switch-p%d", box_ranks[i]);
        box_cases[i] = (Case){ &cs_algo_nvls, NULL, 0, NULL, box_ranks[i] };
        g_test_add_data_func(path, &box_cases[i], test_checker);
    }
    return g_test_run();
}
