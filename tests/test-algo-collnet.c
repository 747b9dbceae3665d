// SPDX-License-Identifier: MIT
/* CollNet Direct and Chain, and NVLS across nodes (NVLS + CollNet), on SHARP: the semantic
 * checker over several node counts and head counts, the network traffic the in-network
 * reduction saves, the refusal without SHARP, and "sharp": true reaching a prediction. */
#include "config.h"

#include <math.h>
#include <string.h>
#include <sys/resource.h>

#include "algos/algo.h"
#include "algos/registry.h"
#include "engine/engine.h"
#include "models/nccl.h"
#include "predict/predict.h"
#include "sched/check.h"
#include "test-util.h"

/* A cluster template of @nodes copies of @node over 400 Gb/s NDR, rail-optimized, with SHARP
 * on or off; @nics > 0 makes that many NICs per node on PCIe Gen5 x16 (for a node that
 * declares none), 0 keeps the node's own. */
static CsTopo *
sharp_cluster(int nodes, const char *node, int nics, gboolean sharp)
{
    g_autoptr(GError) error = NULL;
    g_autofree char *nics_key
        = nics > 0 ? g_strdup_printf("\"nics_per_node\": %d, \"nic_link\": {\"bandwidth\": "
                                     "\"64 GB/s\", \"alpha\": \"0.5 us\"}, ",
                                     nics)
                   : g_strdup("");
    g_autofree char *json = g_strdup_printf(
        "{\"name\": \"sharp-%d\", \"nodes\": %d, \"node\": \"%s\", \"network\": {\"kind\": "
        "\"ib\", %s\"nic_bandwidth\": \"400 Gb/s\", \"nic_alpha\": \"0.3 us\", "
        "\"switch_alpha\": \"0.13 us\", \"rail_optimized\": true, \"sharp\": %s}}",
        nodes, nodes, node, nics_key, sharp ? "true" : "false");
    CsTopo *topo = cs_topo_load_data(json, "inline", &error);
    g_assert_no_error(error);
    return topo;
}

typedef struct {
    const char *algo;
    int nodes;
    const char *node;
    int nics;
} SweepCase;

/* Every configuration builds and computes the all-reduce: sizes that do not divide by the
 * heads, chunked pipelines, several channels, 0 bytes. */
static void
test_sweep(gconstpointer data)
{
    const SweepCase *c = data;
    g_autoptr(CsTopo) topo = sharp_cluster(c->nodes, c->node, c->nics, TRUE);
    const CsAlgo *algo = cs_algo_lookup(c->algo, NULL);
    int p = cs_topo_n_ranks(topo);
    static const struct {
        gint64 size;
        gint64 chunk;
        int channels;
    } variants[] = { { 4100, 0, 1 },           { 1000, 0, 2 }, { 4 * 1000 + 12, 40, 1 },
                     { 4 * 1000 + 12, 40, 3 }, { 0, 0, 1 },    { 1 << 20, 0, 8 } };
    const char *why = NULL;

    g_assert_nonnull(algo);
    g_assert_true(algo->supports(topo, CS_OP_ALL_REDUCE, p, &why));
    for (gsize v = 0; v < G_N_ELEMENTS(variants); v++) {
        g_autoptr(GError) error = NULL;
        CsAlgoArgs args;
        CsCheckReport report;
        cs_algo_args_init(&args, topo, CS_OP_ALL_REDUCE, p, variants[v].size);
        args.chunk_bytes = variants[v].chunk;
        args.n_channels = variants[v].channels;
        g_autoptr(CsSchedule) sched = cs_algo_build(algo, &args, &error);
        g_assert_no_error(error);
        if (!cs_check_schedule(sched, &report, &error))
            g_error("%s on %d x %s (%d NICs), %" G_GINT64_FORMAT " B, chunk %" G_GINT64_FORMAT
                    ", %d channels: %s",
                    c->algo, c->nodes, c->node, c->nics, variants[v].size, variants[v].chunk,
                    variants[v].channels, error->message);
        if (variants[v].size > 0)
            g_assert_cmpint(report.n_messages, >, 0);
        /* The engine runs it too (the flags' links and the reverse routes). */
        g_autoptr(CsResult) res = cs_engine_run(sched, topo, NULL, &error);
        g_assert_no_error(error);
        g_assert_cmpint(res->time, >, 0);
    }
}

/* ---- Network traffic ---- */

typedef struct {
    const CsTopo *topo;
    gint64 up;   /* bytes over NIC -> switch links */
    gint64 down; /* bytes over switch -> NIC links */
} Traffic;

static void
count_link(gpointer user_data, int link, gint64 bytes, CsTime start, CsTime end)
{
    Traffic *t = user_data;
    const CsLink *l = cs_topo_link(t->topo, link);
    CsDeviceKind src = cs_topo_device(t->topo, l->src)->kind;
    CsDeviceKind dst = cs_topo_device(t->topo, l->dst)->kind;

    (void)start;
    (void)end;
    if (src == CS_DEVICE_NIC && dst == CS_DEVICE_SWITCH)
        t->up += bytes;
    if (src == CS_DEVICE_SWITCH && dst == CS_DEVICE_NIC)
        t->down += bytes;
}

static Traffic
network_traffic(const CsTopo *topo, const char *algo_name, gint64 size, int channels)
{
    g_autoptr(GError) error = NULL;
    Traffic t = { topo, 0, 0 };
    CsObserver obs = { .user_data = &t, .link_busy = count_link };
    CsEngineOptions options = { .observer = &obs };
    CsAlgoArgs args;

    cs_algo_args_init(&args, topo, CS_OP_ALL_REDUCE, cs_topo_n_ranks(topo), size);
    args.n_channels = channels;
    g_autoptr(CsSchedule) sched = cs_algo_build(cs_algo_lookup(algo_name, NULL), &args, &error);
    g_assert_no_error(error);
    g_autoptr(CsResult) res = cs_engine_run(sched, topo, &options, &error);
    g_assert_no_error(error);
    g_assert_nonnull(res);
    return t;
}

/* Setup: N = 4 nodes of L = 8 H100 (P = 32), one NIC per GPU on rail-optimized SHARP
 * switches; an all-reduce of S = 32 MiB on 8 channels.
 * Expectation, from the algorithms:
 * - ring: each channel's ring visits the nodes one after the other and crosses the network
 *   N times (once out of every node); each crossing carries 2 (P-1)/P of the channel's data,
 *   so the NICs send N x 2 (P-1)/P x S in all, 2 (P-1)/P x S / L per GPU, and receive as much;
 * - CollNet Direct and Chain, and NVLS across nodes (NVLS + CollNet): every node's heads
 *   send each byte of the node's partial sum into the network once and receive the total
 *   once: N x S each way, S / L per GPU.
 * CollNet's inter-node bytes per GPU are P / (2 (P-1)) = 16/31 of the ring's: the in-network
 * reduction halves the traffic (exactly half as P grows). */
static void
test_traffic_halved(void)
{
    const int n = 4, l = 8;
    const int p = n * l;
    const gint64 s = 32 << 20;
    g_autoptr(CsTopo) topo = sharp_cluster(n, "dgx-h100x8", 0, TRUE);

    g_test_summary("On a SHARP fabric CollNet's network bytes per GPU are P / (2 (P-1)) of "
                   "the ring's: S / L against 2 (P-1)/P S / L.");
    Traffic ring = network_traffic(topo, "ring", s, 8);
    g_assert_cmpint(ring.up, ==, (gint64)n * 2 * (p - 1) * (s / p));
    g_assert_cmpint(ring.down, ==, ring.up);
    static const char *const collnet[] = { "collnet_direct", "collnet_chain", "nvls" };
    for (gsize i = 0; i < G_N_ELEMENTS(collnet); i++) {
        Traffic t = network_traffic(topo, collnet[i], s, 8);
        g_test_message("%s: %" G_GINT64_FORMAT " B up, %" G_GINT64_FORMAT
                       " B down; ring %" G_GINT64_FORMAT,
                       collnet[i], t.up, t.down, ring.up);
        g_assert_cmpint(t.up, ==, (gint64)n * s);
        g_assert_cmpint(t.down, ==, (gint64)n * s);
        /* Per GPU: S / L against 2 (P-1)/P x S / L. */
        g_assert_cmpfloat_with_epsilon((double)t.up / (double)ring.up, p / (2.0 * (p - 1)), 1e-9);
    }
}

/* ---- Refusals and the prediction ---- */

/* Without SHARP (the shipped 2-node NDR cluster declares "sharp": false), on one node, and
 * for other collectives, CollNet refuses with a reason; building says so too. */
static void
test_refuses_without_sharp(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTopo) plain = cs_topo_load("hgx-h100x8-2n", &error);
    g_assert_no_error(error);
    g_autoptr(CsTopo) one = cs_topo_load("dgx-h100x8", &error);
    g_assert_no_error(error);
    g_autoptr(CsTopo) sharp = sharp_cluster(2, "dgx-h100x8", 0, TRUE);
    static const char *const names[] = { "collnet_direct", "collnet_chain" };

    for (gsize i = 0; i < G_N_ELEMENTS(names); i++) {
        const CsAlgo *a = cs_algo_lookup(names[i], NULL);
        const char *why = NULL;
        g_assert_false(a->supports(plain, CS_OP_ALL_REDUCE, 16, &why));
        g_assert_nonnull(strstr(why, "SHARP"));
        why = NULL;
        g_assert_false(a->supports(NULL, CS_OP_ALL_REDUCE, 16, &why));
        g_assert_nonnull(why);
        why = NULL;
        g_assert_false(a->supports(one, CS_OP_ALL_REDUCE, 8, &why));
        g_assert_nonnull(why);
        why = NULL;
        g_assert_false(a->supports(sharp, CS_OP_BROADCAST, 16, &why));
        g_assert_nonnull(why);
        g_assert_true(a->supports(sharp, CS_OP_ALL_REDUCE, 16, &why));

        CsAlgoArgs args;
        cs_algo_args_init(&args, plain, CS_OP_ALL_REDUCE, 16, 1 << 20);
        g_autoptr(CsSchedule) sched = cs_algo_build(a, &args, &error);
        g_assert_null(sched);
        g_assert_error(error, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_UNSUPPORTED);
        g_clear_error(&error);
    }
}

/* "sharp": true is no longer accepted and ignored: the same 2 x 8 H100 cluster with SHARP
 * on gets NCCL's pick of a CollNet algorithm for a 4 MiB all-reduce. NCCL 2.28 tuning.cc,
 * 2 nodes of 8 GPUs, Simple: CollNetDirect costs 2 (3.7 + 7 x 0.4) + 31 us of latency and
 * runs over the 8 NICs; NVLS across nodes (which NCCL enables only with CollNet) costs the
 * NVLS intra latency + the network's, with a wider NVLS bus bandwidth; NVLSTree costs
 * 25 + 2 x 20.9 us, Tree and Ring more hops; NVLS wins (collsim ran CollNet Direct, NCCL's
 * next choice, before it built NVLS across nodes). Without SHARP NCCL has neither. The
 * engine then times the pick. */
static void
test_sharp_changes_prediction(void)
{
    g_autoptr(GError) error = NULL;
    const gint64 size = 4 << 20;
    CsPrediction with, without;

    g_test_summary("The same cluster with \"sharp\": true gets CollNet Direct as NCCL's pick, "
                   "and a different predicted time.");
    for (int sharp = 0; sharp <= 1; sharp++) {
        g_autoptr(CsTopo) topo = sharp_cluster(2, "dgx-h100x8", 0, sharp);
        g_autoptr(CsNcclModel) nccl = cs_nccl_model_new_for_topo(topo, 16, "nccl", &error);
        g_assert_no_error(error);
        CsPredictOptions opt;
        cs_predict_options_init(&opt);
        opt.pick = CS_PICK_NCCL;
        opt.nccl = nccl;
        g_assert_true(cs_predict_best(topo, CS_OP_ALL_REDUCE, size, NULL, -1, &opt,
                                      sharp ? &with : &without, &error));
        g_assert_no_error(error);
    }
    g_assert_cmpstr(with.algo->name, ==, "nvls");
    g_assert_true(with.nccl_picked);
    g_assert_cmpint(strncmp(without.algo->name, "collnet", 7), !=, 0);
    g_assert_cmpstr(without.algo->name, !=, "nvls");
    g_assert_cmpfloat(with.time_us, !=, without.time_us);
}

/* ---- NVLS across nodes (NVLS + CollNet) ---- */

/* Without SHARP (the shipped 2-node NDR cluster), NVLS refuses several nodes and says why
 * (NCCL runs NVLS across nodes only with CollNet); with SHARP it takes all-reduce only;
 * building on the plain cluster fails the same way. */
static void
test_nvls_refuses_without_sharp(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTopo) plain = cs_test_load_topo("hgx-h100x8-2n");
    g_autoptr(CsTopo) sharp = cs_test_load_topo("hgx-h100x8-2n-sharp");
    const CsAlgo *nvls = cs_algo_lookup("nvls", NULL);
    const char *why = NULL;
    CsAlgoArgs args;

    g_assert_false(nvls->supports(plain, CS_OP_ALL_REDUCE, 16, &why));
    g_assert_nonnull(strstr(why, "SHARP"));
    why = NULL;
    g_assert_false(nvls->supports(sharp, CS_OP_ALL_GATHER, 16, &why));
    g_assert_nonnull(why);
    why = NULL;
    g_assert_false(nvls->supports(sharp, CS_OP_REDUCE_SCATTER, 16, &why));
    g_assert_nonnull(why);
    g_assert_true(nvls->supports(sharp, CS_OP_ALL_REDUCE, 16, &why));
    /* One node of the plain cluster is still NVLS on one domain. */
    g_assert_true(nvls->supports(plain, CS_OP_ALL_REDUCE, 8, &why));

    cs_algo_args_init(&args, plain, CS_OP_ALL_REDUCE, 16, 1 << 20);
    g_autoptr(CsSchedule) sched = cs_algo_build(nvls, &args, &error);
    g_assert_null(sched);
    g_assert_error(error, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_UNSUPPORTED);
    g_assert_nonnull(strstr(error->message, "SHARP"));
}

/* Setup: hgx-h100x8-2n-sharp (2 nodes of 8 H100, a 400 Gb/s NIC per GPU, SHARP), a 16 MiB
 * all-reduce under NCCL's pick.
 * Expectation: NCCL's model picks NVLS there (NCCL 2.28 tuning.cc: NVLS across nodes is
 * enabled with CollNet and has the lowest latency and widest bus bandwidth of the Simple
 * algorithms at that size; from 32 MiB NVLSTree's wider bandwidth wins), and collsim now runs
 * it instead of NCCL's next choice. Its time is bounded below by the NICs: each node's H = 8
 * heads send the node's partial sum, S bytes, into the network once, S / H per NIC, and no
 * NIC link sends faster than its datasheet rate B, so time >= S / (H B). */
static void
test_nvls_nccl_pick_nic_bound(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTopo) topo = cs_test_load_topo("hgx-h100x8-2n-sharp");
    const gint64 size = 16 << 20;
    const int p = cs_topo_n_ranks(topo);
    g_autoptr(CsNcclModel) nccl = cs_nccl_model_new_for_topo(topo, p, "nccl", &error);
    g_assert_no_error(error);
    double nic_Bps = 0;
    CsPredictOptions opt;
    CsPrediction pred;

    g_test_summary("NCCL's pick NVLS across SHARP nodes is simulated as NVLS + CollNet, no "
                   "faster than the NICs carry each node's sum once.");
    for (int k = 0; k < cs_topo_n_links(topo); k++) {
        const CsLink *link = cs_topo_link(topo, k);
        if (cs_topo_device(topo, link->src)->kind == CS_DEVICE_NIC
            && cs_topo_device(topo, link->dst)->kind == CS_DEVICE_SWITCH)
            nic_Bps = MAX(nic_Bps, link->raw_bw_Bps);
    }
    g_assert_cmpfloat(nic_Bps, >, 0);
    cs_predict_options_init(&opt);
    opt.pick = CS_PICK_NCCL;
    opt.nccl = nccl;
    g_assert_true(cs_predict_best(topo, CS_OP_ALL_REDUCE, size, NULL, -1, &opt, &pred, &error));
    g_assert_no_error(error);
    g_assert_cmpstr(pred.algo->name, ==, "nvls");
    g_assert_true(pred.nccl_picked);
    g_assert_cmpint(pred.proto, ==, CS_PROTO_SIMPLE);
    const int heads = 8;
    double bound_us = (double)size / heads / nic_Bps * 1e6;
    g_test_message("nvls %.1f us on %d channels, NIC bound %.1f us", pred.time_us, pred.n_channels,
                   bound_us);
    g_assert_cmpfloat(pred.time_us, >=, bound_us);
}

/* Setup: hgx-h100x8-2n-sharp (8 heads a node, 32 channels to start from), 4 MiB all-reduce.
 * Expectation, NCCL 2.28.9 enqueue.cc with 640 threads and threshold 512:
 * - Chain, the Ring/Tree rule: drop while 4,194,304 < nc x 640 x 512 = nc x 327,680, so
 *   nc = 12 (12 x 327,680 = 3,932,160);
 * - Direct: bound 640 x 8 heads x threshold per channel; down to 16 (threshold 256 from
 *   nc = 24), on to 8 (128 from nc = 12), then while 4 MiB < nc x 655,360: 7 x 655,360 =
 *   4.59 M still is, 6 x 655,360 = 3.93 M is not: nc = 6. */
static void
test_channels(void)
{
    g_autoptr(CsTopo) topo = cs_test_load_topo("hgx-h100x8-2n-sharp");
    const gint64 size = 4 << 20;

    g_test_summary("CollNet runs on the channels NCCL's CollNet rules leave at a size.");
    g_assert_cmpint(cs_predict_default_channels(topo, cs_algo_lookup("collnet_chain", NULL),
                                                CS_OP_ALL_REDUCE, CS_PROTO_SIMPLE, size, 16),
                    ==, 12);
    g_assert_cmpint(cs_predict_default_channels(topo, cs_algo_lookup("collnet_direct", NULL),
                                                CS_OP_ALL_REDUCE, CS_PROTO_SIMPLE, size, 16),
                    ==, 6);
}

/* Setup: CollNet Direct's 256 MiB all-reduce over one GPU per node (a data-parallel group),
 * 2 channels, on 32 and on 128 SHARP nodes (one leaf, then four).
 * Expectation: the same time within 1%, and a gamma (GPU work on the critical path) under 2%
 * of it. The switch sums the nodes' chunks and each head takes the sum off the network with
 * a copy (NCCL 2.28 all_reduce.h, COLLNET_*: directRecvCopyDirectSend); the engine charged
 * the receiving member one GPU reduction per other node instead, serially, and the time grew
 * with the nodes (+45% from 32 to 128, gamma 18% then 50% of it). */
static void
test_switch_sums(void)
{
    const int counts[] = { 32, 128 };
    CsTime time[2];

    for (int k = 0; k < 2; k++) {
        g_autoptr(CsTopo) cluster = sharp_cluster(counts[k], "dgx-h100x8", 0, TRUE);
        g_autofree int *ranks = g_new(int, counts[k]);
        for (int i = 0; i < counts[k]; i++)
            ranks[i] = i * cs_topo_ranks_per_node(cluster);
        g_autoptr(CsTopo) topo = cs_topo_subset(cluster, ranks, counts[k]);
        g_autoptr(GError) error = NULL;
        CsAlgoArgs args;
        cs_algo_args_init(&args, topo, CS_OP_ALL_REDUCE, counts[k], (gint64)256 << 20);
        args.n_channels = 2;
        g_autoptr(CsSchedule) sched
            = cs_algo_build(cs_algo_lookup("collnet_direct", NULL), &args, &error);
        g_assert_no_error(error);
        g_autoptr(CsResult) res = cs_engine_run(sched, topo, NULL, &error);
        g_assert_no_error(error);
        time[k] = res->time;
        g_assert_cmpfloat((double)res->gamma, <, 0.02 * (double)res->time);
    }
    g_assert_cmpfloat(fabs((double)time[1] / (double)time[0] - 1.0), <, 0.01);
}

/* Setup: CollNet Direct's 8-byte all-reduce on 2,048 SHARP nodes (16,384 GPUs), in a process
 * whose data segment is limited to 1 GiB (ulimit -d; not under the address sanitizer, whose
 * shadow memory the limit would count).
 * Expectation: it is simulated. The switch's multicast to the 2,048 node heads is one flow
 * crossing a link per member; the engine sized every flow's scratch (and the model's per-hop
 * state) for that longest flow, cursors x members x 16 bytes, and died in the allocator
 * (abort) here, and at 131,072 GPUs on any machine (32 GiB asked). */
static void
test_multicast_memory(void)
{
#ifdef UNDER_ASAN
    g_test_skip("the address sanitizer's shadow memory counts against ulimit -d");
#else
    if (g_test_subprocess()) {
        struct rlimit lim = { (rlim_t)1 << 30, (rlim_t)1 << 30 };
        g_assert_cmpint(setrlimit(RLIMIT_DATA, &lim), ==, 0);
        g_autoptr(CsTopo) topo = sharp_cluster(2048, "dgx-h100x8", 0, TRUE);
        const CsAlgo *algo = cs_algo_lookup("collnet_direct", NULL);
        g_autoptr(GError) error = NULL;
        CsAlgoArgs args;
        cs_algo_args_init(&args, topo, CS_OP_ALL_REDUCE, cs_topo_n_ranks(topo), 8);
        args.n_channels = 1;
        g_autoptr(CsSchedule) sched = cs_algo_build(algo, &args, &error);
        g_assert_no_error(error);
        g_autoptr(CsResult) res = cs_engine_run(sched, topo, NULL, &error);
        g_assert_no_error(error);
        g_assert_cmpint(res->time, >, 0);
        return;
    }
    g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_INHERIT_STDERR);
    g_test_trap_assert_passed();
#endif
}

int
main(int argc, char **argv)
{
    static const SweepCase cases[] = {
        { "collnet_direct", 2, "dgx-h100x8", 0 }, { "collnet_direct", 3, "dgx-h100x8", 0 },
        { "collnet_direct", 4, "dgx-h100x8", 0 }, { "collnet_direct", 3, "dgx-h100x4", 2 },
        { "collnet_direct", 5, "dgx-h100x4", 4 }, { "collnet_chain", 2, "dgx-h100x8", 0 },
        { "collnet_chain", 3, "dgx-h100x8", 0 },  { "collnet_chain", 4, "pcie-l40sx8", 0 },
        { "collnet_chain", 3, "dgx-h100x4", 2 },  { "collnet_chain", 5, "dgx-h100x4", 4 },
        { "nvls", 2, "dgx-h100x8", 0 },           { "nvls", 3, "dgx-h100x8", 0 },
        { "nvls", 4, "dgx-h100x8", 0 },           { "nvls", 3, "dgx-h100x4", 2 },
        { "nvls", 5, "dgx-h100x4", 4 },
    };

    g_test_init(&argc, &argv, NULL);
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *path = g_strdup_printf("/algo/%s/sweep/%dx%s-nics%d", cases[i].algo,
                                                cases[i].nodes, cases[i].node, cases[i].nics);
        g_test_add_data_func(path, &cases[i], test_sweep);
    }
    g_test_add_func("/algo/collnet/traffic-halved", test_traffic_halved);
    g_test_add_func("/algo/collnet/refuses-without-sharp", test_refuses_without_sharp);
    g_test_add_func("/algo/collnet/sharp-changes-prediction", test_sharp_changes_prediction);
    g_test_add_func("/algo/collnet/channels", test_channels);
    g_test_add_func("/algo/nvls/collnet/refuses-without-sharp", test_nvls_refuses_without_sharp);
    g_test_add_func("/algo/nvls/collnet/nccl-pick-nic-bound", test_nvls_nccl_pick_nic_bound);
    g_test_add_func("/algo/collnet/multicast-memory", test_multicast_memory);
    g_test_add_func("/algo/collnet/switch-sums", test_switch_sums);
    return g_test_run();
}
