// SPDX-License-Identifier: MIT
/* Tests of prediction: the registry's algorithms through the engine against the textbook
 * closed forms (both network models), agreement of the models on an idle crossbar, NCCL-like
 * channel counts, and the choice of the best candidate. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "algos/mesh_rings.h"
#include "algos/registry.h"
#include "base/parallel.h"
#include "base/trace.h"
#include "models/alpha_beta.h"
#include "models/nccl.h"
#include "predict/predict.h"
#include "test-util.h"

/* ---- Helpers ---- */

static double
rel_error(double got, double want)
{
    return want == 0.0 ? fabs(got) : fabs(got - want) / want;
}

/* ---- Closed forms through the registry ---- */

typedef struct {
    const char *algo;
    CsOp op;
    const int *ps; /* P to try, 0-terminated */
} FormCase;

static const int any_p[] = { 2, 3, 4, 5, 8, 13, 0 };
static const int pow2_p[] = { 2, 4, 8, 16, 0 };

/* The (algorithm, collective) pairs whose schedule is the closed form's: every rank sends one
 * message per round and no link carries two at once. The binomial reduce and gather with P
 * not a power of two let a late child send early into a busy parent (faster than the round
 * count says), and recursive doubling and halving fold the extra ranks in, so they are held
 * to powers of two. */
static const FormCase form_cases[] = {
    { "ring", CS_OP_ALL_REDUCE, any_p },
    { "allpairs", CS_OP_ALL_REDUCE, any_p },
    { "ring", CS_OP_ALL_GATHER, any_p },
    { "ring", CS_OP_REDUCE_SCATTER, any_p },
    { "mst", CS_OP_BROADCAST, any_p },
    { "mst", CS_OP_SCATTER, any_p },
    { "mst", CS_OP_REDUCE, pow2_p },
    { "mst", CS_OP_GATHER, pow2_p },
    { "recursive_doubling", CS_OP_ALL_REDUCE, pow2_p },
    { "recursive_doubling", CS_OP_ALL_GATHER, pow2_p },
    { "rhd", CS_OP_ALL_REDUCE, pow2_p },
    { "rhd", CS_OP_REDUCE_SCATTER, pow2_p },
    { "pairwise", CS_OP_ALL_TO_ALL, any_p },
    { "direct", CS_OP_SEND_RECV, any_p },
};

typedef struct {
    const FormCase *c;
    const char *model;
} FormRun;

static void
test_closed_form(gconstpointer data)
{
    const FormRun *fr = data;
    const FormCase *c = fr->c;
    const CsAlgo *algo = cs_algo_lookup(c->algo, NULL);
    const CsAlphaBetaForm *form = cs_alpha_beta_find(c->algo, c->op);

    g_test_summary("A registered algorithm in textbook mode on an idle crossbar takes exactly "
                   "its closed-form time (alpha 1 us, B 1 GB/s, gamma 1/4 GB/s).");
    g_assert_nonnull(algo);
    g_assert_nonnull(form);
    for (const int *p = c->ps; *p != 0; p++) {
        g_autoptr(CsTopo) topo = cs_test_crossbar(*p, "0 us", "0 us", NULL);
        CsPredictOptions opt;
        CsPrediction pred;
        g_autoptr(GError) error = NULL;
        cs_predict_options_init(&opt);
        opt.engine.textbook = TRUE;
        opt.engine.net_model = fr->model;
        opt.dtype = CS_DTYPE_INT8;
        /* Blocks of 1000 B: every division is whole. */
        gint64 n = (gint64)*p * 1000;
        g_assert_true(cs_predict_one(topo, c->op, n, algo, CS_PROTO_SIMPLE, &opt, &pred, &error));
        g_assert_no_error(error);
        double want = form->time(*p, (double)n, 1e-6, 1e9, 1.0 / 4e9);
        double got = cs_time_to_s(pred.result.time);
        if (rel_error(got, want) >= 1e-9)
            g_error("%s %s P=%d: %.12g s, closed form %.12g s", c->algo, cs_op_name(c->op), *p, got,
                    want);
        g_assert_cmpint(pred.result.overhead, ==, 0);
        g_assert_cmpint(pred.n_channels, ==, 1);
    }
}

/* ---- Textbook mode at scale and on NVLink bonds ---- */

/* Ring all-reduce of @n bytes (float) with the registry's ring in textbook mode, on @topo's
 * ranks under @model; returns the predicted time in seconds. */
static double
textbook_ring_allreduce(const CsTopo *topo, const char *model, gint64 n)
{
    CsPredictOptions opt;
    CsPrediction pred;
    g_autoptr(GError) error = NULL;

    cs_predict_options_init(&opt);
    opt.engine.textbook = TRUE;
    opt.engine.net_model = model;
    g_assert_true(cs_predict_one(topo, CS_OP_ALL_REDUCE, n, cs_algo_lookup("ring", NULL),
                                 CS_PROTO_SIMPLE, &opt, &pred, &error));
    g_assert_no_error(error);
    g_assert_cmpint(pred.result.overhead, ==, 0);
    g_assert_cmpint(pred.n_channels, ==, 1);
    g_assert_false(pred.extrapolated);
    return cs_time_to_s(pred.result.time);
}

static void
test_textbook_star(gconstpointer data)
{
    const char *model = data;
    const int p = 256;
    /* alpha 1 us and B 1 GB/s GPU to GPU (two 0.5 us links through the hub), gamma 1/4 GB/s;
     * 1 GiB in blocks of 4 MiB: every term is a whole number of picoseconds. */
    g_autoptr(CsTopo) topo
        = cs_test_star(p, "nvswitch", "nvswitch", "0.5 us", "0 us", "0 us", NULL);
    const gint64 n = (gint64)1 << 30;
    double want = cs_alpha_beta_ring_allreduce(p, (double)n, 1e-6, 1e9, 1.0 / 4e9);
    double got = textbook_ring_allreduce(topo, model, n);

    g_test_summary("--textbook: ring all-reduce on a 256-rank star takes Hockney's 2(P-1) alpha "
                   "+ 2(P-1)/P n/B + (P-1)/P n gamma, to a relative 1e-9.");
    if (rel_error(got, want) >= 1e-9)
        g_error("P=%d: %.12g s, closed form %.12g s", p, got, want);
}

static void
test_textbook_bond(gconstpointer data)
{
    const char *model = data;
    g_autoptr(CsTopo) topo = cs_test_load_topo("dgx-h100x8");
    const CsRoute *route = cs_topo_route(topo, 0, 1);
    const CsGpuSpec *gpu = cs_topo_rank_gpu(topo, 0);
    const gint64 n = (gint64)1 << 30;
    double want = cs_alpha_beta_ring_allreduce(8, (double)n, route->alpha_s, route->bw_Bps,
                                               1.0 / gpu->reduce_Bps);
    double got = textbook_ring_allreduce(topo, model, n);

    g_test_summary("--textbook on a DGX H100: a message crosses an 18-NVLink bond at the bond's "
                   "bandwidth (Hockney's B), not one NVLink's, so the ring takes the closed "
                   "form's time (1 ps per hop of rounding).");
    /* The engine rounds each hop's alpha and serialization to a picosecond: 14 hops. */
    if (fabs(got - want) > 14 * 2e-12)
        g_error("%.12g s, closed form %.12g s (%.4gx)", got, want, got / want);
}

/* ---- sendrecv on real machines ---- */

/* nccl-tests' sendrecv of 1 GiB in textbook mode on @data (a shipped topology): each rank's
 * message to the next crosses its own route r -> r + 1, all at once. Setup: on dgx-h100x8 every
 * route is GPU -> NVSwitch -> GPU (alpha 200 ns, the 18-NVLink bond's 371 GB/s); on
 * hgx-h100x8-2n the routes 7 -> 8 and 15 -> 0 leave the node through PCIe (48 GB/s usable) and
 * the NIC, so they are the slowest. Expectation: Hockney's T = alpha + n/B of the slowest
 * route, max over r; the messages share no link below its bandwidth (the rail-to-spine links
 * carry two 48 GB/s messages on 100 GB/s), so nothing waits. Tolerance: the engine rounds each
 * hop's alpha and serialization to a picosecond, 2 ps per link of the route. */
static void
test_sendrecv_textbook(gconstpointer data)
{
    const char *name = data;
    g_autoptr(CsTopo) topo = cs_test_load_topo(name);
    const int P = cs_topo_n_ranks(topo);
    const gint64 n = (gint64)1 << 30;
    double want = 0;
    int hops = 0;
    for (int r = 0; r < P; r++) {
        const CsRoute *route = cs_topo_route(topo, r, (r + 1) % P);
        double t = cs_alpha_beta_sendrecv(P, (double)n, route->alpha_s, route->bw_Bps, 0);
        if (t > want) {
            want = t;
            hops = route->n_links;
        }
    }
    CsPredictOptions opt;
    CsPrediction pred;
    g_autoptr(GError) error = NULL;
    cs_predict_options_init(&opt);
    opt.engine.textbook = TRUE;
    g_assert_true(cs_predict_one(topo, CS_OP_SEND_RECV, n, cs_algo_lookup("direct", NULL),
                                 CS_PROTO_SIMPLE, &opt, &pred, &error));
    g_assert_no_error(error);
    double got = cs_time_to_s(pred.result.time);

    g_test_summary("--textbook: nccl-tests' sendrecv (every rank to the next) takes Hockney's "
                   "alpha + n/B of the slowest route r -> r + 1.");
    g_test_message("%s: %.6f us, closed form %.6f us over %d links", name, got * 1e6, want * 1e6,
                   hops);
    if (fabs(got - want) > hops * 2e-12)
        g_error("%s: %.12g s, closed form %.12g s (%.4gx)", name, got, want, got / want);
    /* busbw = algbw (nccl-tests' factor 1). */
    g_assert_cmpfloat_with_epsilon(pred.busbw_GBps, pred.algbw_GBps, 1e-12);
}

/* NCCL's own plan (the default) on the same machines: the launch, protocol and per-step costs
 * only add to Hockney's time, so a prediction is never below the closed form of the slowest
 * route; on one node it stays within the bond's bandwidth, across nodes within the PCIe link in
 * front of each NIC (48 GB/s): busbw <= the slowest route's B. */
static void
test_sendrecv_nccl(gconstpointer data)
{
    const char *name = data;
    g_autoptr(CsTopo) topo = cs_test_load_topo(name);
    const int P = cs_topo_n_ranks(topo);
    const gint64 n = (gint64)1 << 30;
    double floor_s = 0;
    double slowest_Bps = G_MAXDOUBLE;
    for (int r = 0; r < P; r++) {
        const CsRoute *route = cs_topo_route(topo, r, (r + 1) % P);
        floor_s = MAX(floor_s, route->alpha_s + (double)n / route->bw_Bps);
        slowest_Bps = MIN(slowest_Bps, route->bw_Bps);
    }
    CsPredictOptions opt;
    CsPrediction best;
    g_autoptr(GError) error = NULL;
    cs_predict_options_init(&opt);
    g_assert_true(cs_predict_best(topo, CS_OP_SEND_RECV, n, NULL, -1, &opt, &best, &error));
    g_assert_no_error(error);

    g_test_summary("sendrecv by default runs NCCL's p2p path (direct, Simple at 1 GiB) and is "
                   "no faster than alpha + n/B of its slowest route.");
    g_assert_cmpstr(best.algo->name, ==, "direct");
    g_assert_cmpint(best.proto, ==, CS_PROTO_SIMPLE);
    g_assert_cmpfloat(cs_time_to_s(best.result.time), >=, floor_s);
    g_assert_cmpfloat(best.busbw_GBps * 1e9, <=, slowest_Bps);
}

/* Two nodes of 8 fully connected MI355X with a NIC each (mi355x-x8-2n-pollara): RCCL's model
 * for such nodes lists 64 rings and ncclTopoPostset keeps them (rome_model_81/89, connect.cc),
 * so a large ring all-reduce runs 64 channels. One such node alone matches rome_model_79 (28
 * rings), which ncclTopoPostset takes to min(128 / 28, nc) x 28 with gfx950's nc = 4 (init.cc):
 * 112; 8 of the 16 ranks are one node. */
static void
test_channels_mesh_rail(void)
{
    g_autoptr(CsTopo) two = cs_test_load_topo("mi355x-x8-2n-pollara");
    g_autoptr(CsTopo) one = cs_test_load_topo("mi355x-x8-xgmi");
    const CsAlgo *ring = cs_algo_lookup("ring", NULL);

    g_assert_cmpint(
        cs_predict_default_channels(two, ring, CS_OP_ALL_REDUCE, CS_PROTO_SIMPLE, 1 << 30, 16), ==,
        64);
    g_assert_cmpint(
        cs_predict_default_channels(one, ring, CS_OP_ALL_REDUCE, CS_PROTO_SIMPLE, 1 << 30, 8), ==,
        112);
    g_assert_false(cs_mesh_rail_nodes(two, 8));
    g_assert_true(cs_mesh_rail_nodes(two, 16));

    /* Those 112 channels build and run (RCCL's MAXCHANNELS is 128, NCCL's 64). */
    CsPredictOptions opt;
    CsPrediction best;
    g_autoptr(GError) error = NULL;
    cs_predict_options_init(&opt);
    g_assert_true(cs_predict_best(one, CS_OP_ALL_REDUCE, 1 << 30, ring, CS_PROTO_SIMPLE, &opt,
                                  &best, &error));
    g_assert_no_error(error);
    g_assert_cmpint(best.n_channels, ==, 112);
}

/* The largest message of the schedule collsim predicts @size_bytes of a Tree/Simple
 * all-reduce on @topo with: the pipeline chunk. */
static gint64
tree_simple_chunk(const CsTopo *topo, gint64 size_bytes)
{
    const CsAlgo *tree = cs_algo_lookup("tree", NULL);
    CsPredictOptions opt;
    g_autoptr(GError) error = NULL;
    gint64 chunk = 0;

    cs_predict_options_init(&opt);
    g_autoptr(CsSchedule) sched = cs_predict_schedule(topo, CS_OP_ALL_REDUCE, size_bytes, tree,
                                                      CS_PROTO_SIMPLE, &opt, &error);
    g_assert_no_error(error);
    for (int r = 0; r < cs_schedule_n_ranks(sched); r++) {
        gsize n;
        const CsStep *steps = cs_schedule_steps(sched, r, &n);
        for (gsize i = 0; i < n; i++)
            chunk = MAX(chunk, steps[i].bytes);
    }
    return chunk;
}

/* RCCL's Tree/Simple all-reduce chunk (ROCm/rccl 0cbce2a7 src/enqueue.cc computeCollChunkInfo,
 * rocm-systems projects/rccl calcCollChunking; NCCL dropped the rule after 2.19): one 512 KiB
 * slot, halved while nBytes / (nChannels x chunk) < depth x 8 above 128 KiB, < depth x 4
 * above 64 KiB, < depth above 32 KiB; depth = nRanks / nNodes - 1 + log2i(nNodes).
 * Setup: mi355x-x8-2n-pollara, 16 ranks on 2 nodes, depth 8 - 1 + 1 = 8, 64 channels.
 * Expectation: 64 MiB: 67108864 / (64 x 512 KiB) = 2 < 64, halved to 128 KiB (8 < 64 but the
 * first rule stops there), then 64 KiB (16 < 32; the second rule stops at 64 KiB); 16 >= 8.
 * 1 GiB: 32 < 64 at 512 KiB, 64 at 256 KiB: 256 KiB. 2 GiB: 64, one slot (512 KiB).
 * NCCL on NVIDIA GPUs (hgx-h100x8-2n, NCCL 2.28) keeps the slot at 64 MiB. */
static void
test_chunk_rccl_tree_simple(void)
{
    g_autoptr(CsTopo) amd = cs_test_load_topo("mi355x-x8-2n-pollara");
    g_autoptr(CsTopo) nvidia = cs_test_load_topo("hgx-h100x8-2n");
    const CsAlgo *tree = cs_algo_lookup("tree", NULL);

    g_test_summary("RCCL's Tree/Simple all-reduce shrinks its chunk for short pipelines");
    g_assert_cmpint(
        cs_predict_default_channels(amd, tree, CS_OP_ALL_REDUCE, CS_PROTO_SIMPLE, 64 << 20, 16), ==,
        64);
    g_assert_cmpint(tree_simple_chunk(amd, (gint64)64 << 20), ==, 65536);
    g_assert_cmpint(tree_simple_chunk(amd, (gint64)1 << 30), ==, 262144);
    g_assert_cmpint(tree_simple_chunk(amd, (gint64)2 << 30), ==, 524288);
    g_assert_cmpint(tree_simple_chunk(nvidia, (gint64)64 << 20), ==, 524288);
}

/* NCCL's per-size channel count on 8 x H100 (NCCL 2.30.7 enqueue.cc "Ring/Tree channel
 * tuning", tuning.cc thresholds): a channel is dropped while nBytes < nc x 512 threads x
 * threshold, the threshold 8 B for LL but 8 B x nRanks for Ring's LL. 256 KiB ring LL on 8
 * ranks: 262144 / (512 x 8 x 8) = 8 channels; a tree's LL at the same size: 262144 / 4096 =
 * 64, capped at the machine's channels; 4 ranks: 16. */
static void
test_channels_nccl_ring_ll(void)
{
    g_autoptr(CsTopo) topo = cs_test_load_topo("dgx-h100x8");
    const CsAlgo *ring = cs_algo_lookup("ring", NULL);
    const CsAlgo *tree = cs_algo_lookup("tree", NULL);

    g_test_summary("NCCL's Ring LL keeps a channel per 4 KiB x nRanks, other algorithms per "
                   "4 KiB.");
    g_assert_cmpint(
        cs_predict_default_channels(topo, ring, CS_OP_ALL_REDUCE, CS_PROTO_LL, 256 << 10, 8), ==,
        8);
    g_assert_cmpint(
        cs_predict_default_channels(topo, ring, CS_OP_ALL_REDUCE, CS_PROTO_LL, 256 << 10, 4), ==,
        16);
    /* The size alone would allow 64: the machine's own count caps it, far above the ring's 8. */
    g_assert_cmpint(
        cs_predict_default_channels(topo, tree, CS_OP_ALL_REDUCE, CS_PROTO_LL, 256 << 10, 8), >=,
        16);
}

/* How many of its channels an all-reduce uses by size on one node of 8 MI300X, as RCCL picks
 * them: NCCL's loop (enqueue.cc) drops a channel while nBytes < nc x nThreads x threshold, with
 * RCCL's 256 threads (device.h, rccl_common.h) and tuning.cc's thresholds (Ring LL: 8 B x
 * nRanks; LL128 8 B; Simple 64 B), no RCCL channel tables on one node (rcclOverrideChannels).
 * 64 KiB ring LL: 65536 / (256 x 64) = 4; 1 MiB Simple: 1 MiB / 16 KiB = 64, capped at the
 * 56 channels; 16 KiB LL128: 8; a tree's LL threshold is not multiplied: 64 KiB / 2 KiB = 32.
 * NCCL's 512 threads and LL's 8 B would give 16, 28 (its old cap) and 12 (640 threads). */
static void
test_channels_rccl_mesh_sizes(void)
{
    g_autoptr(CsTopo) topo = cs_test_load_topo("mi300x-x8-xgmi");
    const CsAlgo *ring = cs_algo_lookup("ring", NULL);
    const CsAlgo *tree = cs_algo_lookup("tree", NULL);

    g_test_summary("RCCL's per-size channel count on one 8-GPU xGMI mesh.");
    g_assert_cmpint(
        cs_predict_default_channels(topo, ring, CS_OP_ALL_REDUCE, CS_PROTO_LL, 64 << 10, 8), ==, 4);
    g_assert_cmpint(
        cs_predict_default_channels(topo, ring, CS_OP_ALL_REDUCE, CS_PROTO_SIMPLE, 1 << 20, 8), ==,
        56);
    g_assert_cmpint(
        cs_predict_default_channels(topo, ring, CS_OP_ALL_REDUCE, CS_PROTO_LL128, 16 << 10, 8), ==,
        8);
    g_assert_cmpint(cs_predict_default_channels(topo, ring, CS_OP_ALL_REDUCE, CS_PROTO_LL, 8, 8),
                    ==, 1);
    g_assert_nonnull(tree);
    g_assert_cmpint(
        cs_predict_default_channels(topo, tree, CS_OP_ALL_REDUCE, CS_PROTO_LL, 64 << 10, 8), ==,
        32);
}

/* The p2p plan stripes sendrecv's one message per rank, not P - 1 of them (NCCL 2.28
 * enqueue.cc scheduleP2pTasksToPlan: nChannelsMin halves while nChannelsMin x nRanks >
 * p2pnChannels, a function of the communicator's size only). On 8 x H100 at 2 MiB with LL
 * forced: 32 channels per peer, nChannelsMin 4, the LL step 64 KiB gives minPart 8 KiB, so 4
 * channels; all-to-all's 7 peers with 2 MiB each (16 MiB) take 7 x 4 = 28. */
static void
test_sendrecv_channels(void)
{
    g_autoptr(CsTopo) h100 = cs_test_load_topo("dgx-h100x8");
    const CsAlgo *direct = cs_algo_lookup("direct", NULL);

    g_test_summary("sendrecv uses one peer's channels of NCCL's p2p plan.");
    g_assert_cmpint(
        cs_predict_peer_channels(h100, direct, CS_OP_SEND_RECV, CS_PROTO_LL, 2 << 20, 8), ==, 4);
    g_assert_cmpint(
        cs_predict_default_channels(h100, direct, CS_OP_SEND_RECV, CS_PROTO_LL, 2 << 20, 8), ==, 4);
    g_assert_cmpint(
        cs_predict_default_channels(h100, direct, CS_OP_ALL_TO_ALL, CS_PROTO_LL, 16 << 20, 8), ==,
        28);
    /* 1 GiB, Simple: 8 x 512 KiB-step parts grow to the 32 channels a peer gets. */
    g_assert_cmpint(
        cs_predict_default_channels(h100, direct, CS_OP_SEND_RECV, CS_PROTO_SIMPLE, 1 << 30, 8), ==,
        32);
}

/* Across nodes NCCL's p2p plan changed with its releases (NCCL 2.30.7 src/graph/paths.cc
 * ncclTopoGetNchannels and ncclTopoComputeP2pChannels, 2.20.3-2.28.9 the same functions,
 * 2.19 NCCL_NCHANNELS_PER_NET_PEER; src/enqueue.cc addP2pToPlan from 2.22.3). On 2 x 8
 * H100, one 400 Gb/s NIC per GPU behind PCIe Gen5 (48 GB/s usable): from 2.29.2 a network
 * peer gets max(1 NIC, 48 / 14 GB/s -> 4) channels, before it 2 (the GPU's NIC is not
 * counted: its link leads to no CPU); 4 NICs of 100 Gb/s per GPU (AWS p5) give 4 either way
 * from 2.29.2; one 100 Gb/s NIC shared by two GPUs (p4de) 1. On 1,024 ranks every release
 * drops to 1 per peer (2.29: 4 x 1,024 / 8 rounds beyond 32 channels; 2.20: 2 x 1,024 beyond
 * 4 x 32). */
static void
test_p2p_network_channels(void)
{
    g_autoptr(CsTopo) two = cs_test_load_topo("hgx-h100x8-2n");
    g_autoptr(CsTopo) p5 = cs_test_load_topo("aws-p5-h100x8-2n-efa");
    g_autoptr(CsTopo) p4de = cs_test_load_topo("aws-p4de-a100x8-2n-efa");
    g_autoptr(CsTopo) big = cs_test_load_topo("hgx-h100x8-128n");
    const CsAlgo *direct = cs_algo_lookup("direct", NULL);
    const CsOp sr = CS_OP_SEND_RECV;
    const CsProto simple = CS_PROTO_SIMPLE;

    g_test_summary("A network peer's p2p channels follow the NCCL release's rule.");
    g_assert_cmpint(cs_nccl_release_code("2.29.7"), ==, 22907);
    g_assert_cmpint(cs_nccl_release_code("2.29"), ==, 22999);
    g_assert_cmpint(cs_nccl_release_code(NULL), ==, 0);
    g_assert_cmpint(cs_nccl_release_code("unknown"), ==, 0);
    g_assert_cmpint(cs_predict_peer_channels_at(two, direct, sr, simple, 1 << 30, 16, 0), ==, 4);
    g_assert_cmpint(cs_predict_peer_channels_at(two, direct, sr, simple, 1 << 30, 16, 22907), ==,
                    4);
    g_assert_cmpint(cs_predict_peer_channels_at(two, direct, sr, simple, 1 << 30, 16, 22602), ==,
                    2);
    g_assert_cmpint(cs_predict_peer_channels_at(two, direct, sr, simple, 1 << 30, 16, 21903), ==,
                    2);
    g_assert_cmpint(cs_predict_peer_channels_at(p5, direct, sr, simple, 1 << 30, 16, 0), ==, 4);
    g_assert_cmpint(cs_predict_peer_channels_at(p4de, direct, sr, simple, 1 << 30, 16, 0), ==, 1);
    g_assert_cmpint(cs_predict_peer_channels_at(p4de, direct, sr, simple, 1 << 30, 16, 22003), ==,
                    2);
    g_assert_cmpint(cs_predict_peer_channels_at(big, direct, sr, simple, 1 << 30, 1024, 0), ==, 1);
    g_assert_cmpint(cs_predict_peer_channels_at(big, direct, sr, simple, 1 << 30, 1024, 22602), ==,
                    1);
    /* One node: no network peer, the NVLink rule alone (32 per peer at 1 GiB); so on a GB200
     * NVL72 rack, whose 18 trays NCCL's search sees as one node (init.cc counts nodes by their
     * rings' first rank), with NVLink's 512 KiB step. */
    g_autoptr(CsTopo) one = cs_test_load_topo("dgx-h100x8");
    g_assert_cmpint(cs_predict_peer_channels_at(one, direct, sr, simple, 1 << 30, 8, 0), ==, 32);
    g_autoptr(CsTopo) rack = cs_test_load_topo("gb200-nvl72");
    g_assert_cmpint(cs_predict_peer_channels_at(rack, direct, sr, simple, 1 << 30, 72, 0), ==, 32);
}

/* Together AI's B200 cluster (8 x B200, 8 x 400 Gb/s NDR per node, NCCL 2.29.7) logs "16 p2p
 * channels, 4 p2p channels per peer" on 16 ranks and "16 p2p channels, 1 p2p channels per
 * peer" on 256 (traces/b200-8gpu-x*-ib-ndr8x400g_sendrecv_nccl2.29.7.txt headers): NCCL's
 * nChannels there is its search's 8 rings doubled, so the per-peer 4 halves once 4 x nRanks / 8
 * passes 16 (2 at 64 ranks, 1 from 128). Its sendrecv then moves 43.1, 26.1 and 14.75 GB/s at
 * 256 MiB on 2, 8 and 16 nodes; the prediction must come within 12% of each (a p2p channel
 * moving at most 14 GB/s over the network, NCCL's own figure, gives 47.8, 27.9 and 14.0). */
static void
test_p2p_network_b200(void)
{
    g_autoptr(CsTopo) b200 = cs_test_load_topo("hgx-b200x8-64n");
    const CsAlgo *direct = cs_algo_lookup("direct", NULL);
    const gint64 size = 256 << 20;

    g_test_summary("NCCL's p2p channels per network peer on a B200 cluster, and their rate.");
    g_assert_cmpint(
        cs_predict_peer_channels(b200, direct, CS_OP_SEND_RECV, CS_PROTO_SIMPLE, size, 16), ==, 4);
    g_assert_cmpint(
        cs_predict_peer_channels(b200, direct, CS_OP_SEND_RECV, CS_PROTO_SIMPLE, size, 64), ==, 2);
    g_assert_cmpint(
        cs_predict_peer_channels(b200, direct, CS_OP_SEND_RECV, CS_PROTO_SIMPLE, size, 128), ==, 1);
    const struct {
        int nranks;
        double lo, hi; /* GB/s of busbw */
    } rates[] = { { 16, 43.1 * 0.88, 43.1 * 1.12 },
                  { 64, 26.1 * 0.88, 26.1 * 1.12 },
                  { 128, 14.75 * 0.88, 14.75 * 1.12 } };
    for (gsize i = 0; i < G_N_ELEMENTS(rates); i++) {
        CsPredictOptions options;
        CsPrediction p;
        g_autoptr(GError) error = NULL;
        cs_predict_options_init(&options);
        options.nranks = rates[i].nranks;
        g_assert_true(cs_predict_one(b200, CS_OP_SEND_RECV, size, direct, CS_PROTO_SIMPLE, &options,
                                     &p, &error));
        g_assert_no_error(error);
        g_assert_cmpfloat(p.busbw_GBps, >=, rates[i].lo);
        g_assert_cmpfloat(p.busbw_GBps, <=, rates[i].hi);
    }
}

/* NCCL gives p2p connections over the network no LL buffer (NCCL_ALLOC_P2P_NET_LL_BUFFERS,
 * 0 since 2.14.3; src/transport/net.cc: "Only allocate dedicated buffers for ring/tree, not
 * for p2p"), so addP2pToPlan cannot take LL for them: a grouped send/recv across nodes runs
 * Simple even at 1 KiB, where one node takes LL. */
static void
test_p2p_network_simple(void)
{
    g_autoptr(CsTopo) two = cs_test_load_topo("hgx-h100x8-2n");
    g_autoptr(CsTopo) one = cs_test_load_topo("dgx-h100x8");
    CsPredictOptions options;
    CsPrediction best;
    g_autoptr(GError) error = NULL;

    g_test_summary("Grouped send/recv across nodes is Simple at every size.");
    cs_predict_options_init(&options);
    for (int op = 0; op < 2; op++) {
        const CsOp o = op == 0 ? CS_OP_SEND_RECV : CS_OP_ALL_TO_ALL;
        const gint64 size = o == CS_OP_SEND_RECV ? 1024 : 16 * 1024;
        g_assert_true(cs_predict_best(two, o, size, NULL, -1, &options, &best, &error));
        g_assert_no_error(error);
        g_assert_cmpint(best.proto, ==, CS_PROTO_SIMPLE);
        g_assert_true(cs_predict_best(one, o, size / 2, NULL, -1, &options, &best, &error));
        g_assert_no_error(error);
        g_assert_cmpint(best.proto, ==, CS_PROTO_LL);
    }
}

/* Largest bytes of one send from @from to @to in @sched. */
static gint64
largest_send(const CsSchedule *sched, int from, int to)
{
    gsize n = 0;
    const CsStep *steps = cs_schedule_steps(sched, from, &n);
    gint64 most = 0;
    for (gsize i = 0; i < n; i++)
        if (steps[i].send_peer == to)
            most = MAX(most, steps[i].bytes);
    return most;
}

/* From NCCL 2.22.3 a small message over the network moves in smaller chunks (addP2pToPlan,
 * "Tune chunk size for the network"): a quarter of the 128 KiB step below one step, half of it
 * below eight; NVLink peers keep the step. An all-to-all of 16 ranks on 2 x 8 H100: 1 MiB
 * gives 64 KiB blocks in one part (chunks of 32 KiB across nodes, the part whole inside), 8
 * MiB 512 KiB blocks in 128 KiB parts (64 KiB chunks across nodes), 64 MiB 4 MiB blocks (the
 * whole step both ways). Release 2.21.5 shrank them too, per part (ncclProxyComputeP2p): the
 * same 64 KiB for a 128 KiB part. */
static void
test_p2p_network_chunks(void)
{
    g_autoptr(CsTopo) two = cs_test_load_topo("hgx-h100x8-2n");
    const CsAlgo *direct = cs_algo_lookup("direct", NULL);
    const struct {
        gint64 size;
        int release;
        gint64 net, nvlink;
    } cases[] = {
        { 1 << 20, 0, 32768, 65536 },      { 8 << 20, 0, 65536, 131072 },
        { 64 << 20, 0, 131072, 131072 },   { 1 << 20, 22203, 32768, 65536 },
        { 8 << 20, 21505, 65536, 131072 },
    };

    g_test_summary("Small network messages of grouped send/recv move in smaller chunks.");
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        CsPredictOptions options;
        cs_predict_options_init(&options);
        options.nccl_release = cases[i].release;
        options.whole = TRUE;
        g_autoptr(GError) error = NULL;
        g_autoptr(CsSchedule) sched = cs_predict_schedule(
            two, CS_OP_ALL_TO_ALL, cases[i].size, direct, CS_PROTO_SIMPLE, &options, &error);
        g_assert_no_error(error);
        g_assert_cmpint(largest_send(sched, 0, 8), ==, cases[i].net);
        g_assert_cmpint(largest_send(sched, 0, 1), ==, cases[i].nvlink);
    }
    /* The first 16 ranks of a 64-node machine (validate places a smaller trace so): the
     * schedule is built without the machine's structure, but where each rank sits still
     * decides its messages' chunks. */
    g_autoptr(CsTopo) b200 = cs_test_load_topo("hgx-b200x8-64n");
    CsPredictOptions sixteen;
    cs_predict_options_init(&sixteen);
    sixteen.nranks = 16;
    g_autoptr(GError) error = NULL;
    g_autoptr(CsSchedule) part = cs_predict_schedule(b200, CS_OP_ALL_TO_ALL, 8 << 20, direct,
                                                     CS_PROTO_SIMPLE, &sixteen, &error);
    g_assert_no_error(error);
    g_assert_cmpint(largest_send(part, 0, 8), ==, 65536);
    g_assert_cmpint(largest_send(part, 0, 1), ==, 131072);
}

/* ---- The two models on an idle crossbar ---- */

typedef struct {
    const char *algo;
    CsOp op;
} AgreeCase;

/* Schedules without forwarding steps whose ranks each move one message at a time, so no link
 * ever carries two flows: a fluid model and a reservation model must then coincide. */
static const AgreeCase agree_cases[] = {
    { "mst", CS_OP_BROADCAST },
    { "mst", CS_OP_SCATTER },
    { "recursive_doubling", CS_OP_ALL_REDUCE },
    { "pairwise", CS_OP_ALL_TO_ALL },
    { "direct", CS_OP_ALL_TO_ALL },
    { "direct", CS_OP_SEND_RECV },
    { "rhd", CS_OP_ALL_REDUCE },
};

static void
test_models_agree(gconstpointer data)
{
    const AgreeCase *c = data;
    const CsAlgo *algo = cs_algo_lookup(c->algo, NULL);
    static const gint64 sizes[] = { 8, 4096, 1 << 20, 16 << 20 };

    g_test_summary("Reservation and max-min give the same times when nothing contends, with "
                   "launch, step overheads and every protocol.");
    for (int p = 2; p <= 8; p *= 2) {
        g_autoptr(CsTopo) topo = cs_test_crossbar(p, "3 us", "0.3 us", NULL);
        for (gsize s = 0; s < G_N_ELEMENTS(sizes); s++) {
            for (int proto = 0; proto < CS_N_PROTOS; proto++) {
                CsPrediction pr[2];
                for (int m = 0; m < 2; m++) {
                    CsPredictOptions opt;
                    g_autoptr(GError) error = NULL;
                    cs_predict_options_init(&opt);
                    opt.engine.net_model = m == 0 ? "reservation" : "maxmin";
                    opt.n_channels = 1;
                    g_assert_true(cs_predict_one(topo, c->op, sizes[s], algo, (CsProto)proto, &opt,
                                                 &pr[m], &error));
                    g_assert_no_error(error);
                }
                if (pr[0].result.time != pr[1].result.time)
                    g_error("%s %s P=%d %" G_GINT64_FORMAT " B %s: reservation %.6f us, "
                            "maxmin %.6f us",
                            c->algo, cs_op_name(c->op), p, sizes[s], cs_proto_name((CsProto)proto),
                            pr[0].time_us, pr[1].time_us);
                g_assert_cmpint(pr[0].result.alpha, ==, pr[1].result.alpha);
                g_assert_cmpint(pr[0].result.beta, ==, pr[1].result.beta);
            }
        }
    }
}

/* ---- Channels ---- */

static void
test_channels(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTopo) topo = cs_topo_load("dgx-h100x4", &error);
    const CsAlgo *ring = cs_algo_lookup("ring", NULL);
    const CsAlgo *mst = cs_algo_lookup("mst", NULL);

    g_test_summary("NCCL-like channel counts: 32 on H100 NVSwitch, fewer for small buffers.");
    g_assert_no_error(error);
    /* dgx-h100x4: 18 NVLink lanes out of each GPU; a channel drives one lane, so 18, rounded
     * up to a power of two: 32. */
    g_assert_cmpint(
        cs_predict_default_channels(topo, ring, CS_OP_ALL_REDUCE, CS_PROTO_SIMPLE, 1 << 30, 4), ==,
        32);
    /* Simple drops a channel per missing 32 KiB: 64 KiB -> 2, 8 B -> 1. */
    g_assert_cmpint(
        cs_predict_default_channels(topo, ring, CS_OP_ALL_REDUCE, CS_PROTO_SIMPLE, 65536, 4), ==,
        2);
    g_assert_cmpint(
        cs_predict_default_channels(topo, ring, CS_OP_ALL_REDUCE, CS_PROTO_SIMPLE, 8, 4), ==, 1);
    /* LL: 4 KiB per channel, Ring's LL 4 KiB x nRanks (tuning.cc): 32 KiB -> 8 for the
     * tree, 2 for the ring on 4 ranks. */
    g_assert_cmpint(cs_predict_default_channels(topo, cs_algo_lookup("tree", NULL),
                                                CS_OP_ALL_REDUCE, CS_PROTO_LL, 32768, 4),
                    ==, 8);
    g_assert_cmpint(
        cs_predict_default_channels(topo, ring, CS_OP_ALL_REDUCE, CS_PROTO_LL, 32768, 4), ==, 2);
    /* MPI classics run one channel. */
    g_assert_cmpint(
        cs_predict_default_channels(topo, mst, CS_OP_BROADCAST, CS_PROTO_SIMPLE, 1 << 30, 4), ==,
        1);
}

/* NCCL's p2p plan (src/enqueue.cc addP2pToPlan, NCCL 2.28), worked by hand for 8 x H100:
 * p2pnChannels 32; 2 x 18 NVLinks = 36 channels per peer, capped at 32; nChannelsMin 32 halved
 * until 8 ranks x nChannelsMin <= 32: 4. LL up to 32 x 16 KiB = 512 KiB per peer. */
static void
test_channels_p2p(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTopo) h100 = cs_topo_load("dgx-h100x8", &error);
    g_assert_no_error(error);
    g_autoptr(CsTopo) rtx = cs_topo_load("rtx2080ti-x2-pcie3-shm", &error);
    g_assert_no_error(error);
    g_autoptr(CsTopo) cpus = cs_topo_load("eth-cpu-8n", &error);
    g_assert_no_error(error);
    const CsAlgo *direct = cs_algo_lookup("direct", NULL);

    g_test_summary("All-to-all stripes every peer's message over channels as NCCL's p2p plan "
                   "does; CPU ranks run one channel.");
    /* 8 B: each of the 7 peers' messages on one channel. */
    g_assert_cmpint(cs_predict_default_channels(h100, direct, CS_OP_ALL_TO_ALL, CS_PROTO_LL, 8, 8),
                    ==, 7);
    /* 2 MiB, LL (256 KiB per peer; LL step 64 KiB, minPart 8 KiB): 4 channels a peer, 28. */
    g_assert_cmpint(
        cs_predict_default_channels(h100, direct, CS_OP_ALL_TO_ALL, CS_PROTO_LL, 2 << 20, 8), ==,
        28);
    /* 1 GiB, Simple (128 MiB per peer; step 512 KiB, maxPart 16 MiB): 4 -> 8 channels a
     * peer, 56 parts on the 32 p2p channels. */
    g_assert_cmpint(
        cs_predict_default_channels(h100, direct, CS_OP_ALL_TO_ALL, CS_PROTO_SIMPLE, 1 << 30, 8),
        ==, 32);
    /* 2 x 2080 Ti over PCIe: 2 p2p channels, 1 a peer until a part exceeds 32 x 128 KiB. */
    g_assert_cmpint(
        cs_predict_default_channels(rtx, direct, CS_OP_ALL_TO_ALL, CS_PROTO_SIMPLE, 8 << 20, 2), ==,
        1);
    g_assert_cmpint(
        cs_predict_default_channels(rtx, direct, CS_OP_ALL_TO_ALL, CS_PROTO_SIMPLE, 16 << 20, 2),
        ==, 2);
    g_assert_cmpint(
        cs_predict_default_channels(cpus, direct, CS_OP_ALL_TO_ALL, CS_PROTO_SIMPLE, 1 << 30, 8),
        ==, 1);
}

/* The p2p plan decides the protocol and lets all-to-all use every NVLink: at 1 GiB on 8 x H100
 * the time is within 15% of the 7/8 GiB each GPU sends over its 18 links (one channel, as
 * before, drove one link: 20 GB/s of busbw). NCCL 2.28 takes LL up to 16 KiB per channel of
 * the per-peer count (512 KiB a peer here); from 2.29.2 per channel the message is cut into
 * with Simple's step (NCCL 2.30.7 enqueue.cc addP2pToPlan: "Assume SIMPLE protocol to start
 * with"): a 512 KiB peer message takes 4 channels, so Simple, and LL only to 16 KiB. */
static void
test_best_p2p(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTopo) topo = cs_topo_load("dgx-h100x8", &error);
    CsPredictOptions opt;
    CsPrediction best;

    g_test_summary("All-to-all on NVSwitch runs LL up to 16 KiB a peer (512 KiB with NCCL "
                   "2.28), Simple beyond, and is bound by the GPU's NVLink bandwidth.");
    g_assert_no_error(error);
    cs_predict_options_init(&opt);
    g_assert_true(cs_predict_best(topo, CS_OP_ALL_TO_ALL, 4 << 20, NULL, -1, &opt, &best, &error));
    g_assert_no_error(error);
    g_assert_cmpint(best.proto, ==, CS_PROTO_SIMPLE);
    g_assert_true(
        cs_predict_best(topo, CS_OP_ALL_TO_ALL, 128 << 10, NULL, -1, &opt, &best, &error));
    g_assert_no_error(error);
    g_assert_cmpint(best.proto, ==, CS_PROTO_LL);
    opt.nccl_release = 22809;
    g_assert_true(cs_predict_best(topo, CS_OP_ALL_TO_ALL, 4 << 20, NULL, -1, &opt, &best, &error));
    g_assert_no_error(error);
    g_assert_cmpint(best.proto, ==, CS_PROTO_LL);
    g_assert_true(cs_predict_best(topo, CS_OP_ALL_TO_ALL, 8 << 20, NULL, -1, &opt, &best, &error));
    g_assert_no_error(error);
    g_assert_cmpint(best.proto, ==, CS_PROTO_SIMPLE);
    g_assert_true(cs_predict_best(topo, CS_OP_ALL_TO_ALL, 1 << 30, NULL, -1, &opt, &best, &error));
    g_assert_no_error(error);
    /* The schedule behind a prediction, rebuilt with its channel count as --verify and explain
     * do, is the predicted one: each peer's message on its own channels, not all 32. */
    g_assert_cmpint(best.peer_channels, ==, 8);
    CsPredictOptions again = opt;
    again.n_channels = best.n_channels;
    CsPrediction same;
    g_assert_true(cs_predict_one(topo, CS_OP_ALL_TO_ALL, 1 << 30, best.algo, best.proto, &again,
                                 &same, &error));
    g_assert_no_error(error);
    g_assert_cmpint(same.peer_channels, ==, best.peer_channels);
    g_assert_cmpint(same.result.time, ==, best.result.time);
    double wire_s
        = (7.0 / 8.0) * (double)(1 << 30) / cs_topo_injection_bw(topo, 0, CS_LINK_CLASS_NVLINK);
    double t_s = cs_time_to_s(best.result.time);
    g_assert_cmpfloat(t_s, >=, wire_s);
    g_assert_cmpfloat(t_s, <=, 1.15 * wire_s);
}

/* 8 x MI300X, one xGMI link between every pair: the ring channels cycle over 7 rings that load
 * all 7 links of each GPU equally, 56 channels by default (RCCL's rome_model_79 lists 28 rings
 * and ncclTopoPostset doubles them; gfx942 keeps nc = 2, init.cc), and a large
 * all-reduce runs at 7 links x 64 GB/s x 0.75 usable = 336 GB/s of busbw (rings of one stride
 * used 4 links: 256 GB/s at 64 GB/s a link). Its GPUs' library (RCCL) leaves LL128 off by
 * default: the best choice never takes it, but it can be forced. */
static void
test_full_mesh_mi300x(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTopo) topo = cs_topo_load("mi300x-x8-xgmi", &error);
    g_assert_no_error(error);
    const CsAlgo *ring = cs_algo_lookup("ring", NULL);
    CsPredictOptions opt;
    CsPrediction best;

    g_test_summary("On a full xGMI mesh rings use every link; LL128 only when forced.");
    g_assert_cmpint(
        cs_predict_default_channels(topo, ring, CS_OP_ALL_REDUCE, CS_PROTO_SIMPLE, 1 << 30, 8), ==,
        56);
    cs_predict_options_init(&opt);
    g_assert_true(cs_predict_best(topo, CS_OP_ALL_REDUCE, G_GINT64_CONSTANT(8) << 30, NULL, -1,
                                  &opt, &best, &error));
    g_assert_no_error(error);
    g_assert_true(best.algo == ring);
    g_assert_cmpfloat(best.busbw_GBps, <=, 336.0);
    g_assert_cmpfloat(best.busbw_GBps, >=, 0.99 * 336.0);
    for (gint64 size = 1 << 20; size <= (64 << 20); size *= 2) {
        g_assert_true(cs_predict_best(topo, CS_OP_ALL_REDUCE, size, NULL, -1, &opt, &best, &error));
        g_assert_no_error(error);
        g_assert_cmpint(best.proto, !=, CS_PROTO_LL128);
    }
    g_assert_true(cs_predict_best(topo, CS_OP_ALL_REDUCE, 8 << 20, NULL, CS_PROTO_LL128, &opt,
                                  &best, &error));
    g_assert_no_error(error);
    g_assert_cmpint(best.proto, ==, CS_PROTO_LL128);

    /* The default protocols hold under --any-algorithm and NCCL's pick too, and a trace's
     * NCCL_PROTO list replaces them. */
    CsPredictOptions any = opt;
    any.any_algorithm = TRUE;
    g_autoptr(CsNcclModel) nccl = cs_nccl_model_new_for_topo(topo, 8, "nccl", &error);
    g_assert_no_error(error);
    CsPredictOptions picked = opt;
    picked.pick = CS_PICK_NCCL;
    picked.nccl = nccl;
    for (gint64 size = 1 << 20; size <= (64 << 20); size *= 2) {
        g_assert_true(cs_predict_best(topo, CS_OP_ALL_REDUCE, size, NULL, -1, &any, &best, &error));
        g_assert_no_error(error);
        g_assert_cmpint(best.proto, !=, CS_PROTO_LL128);
        g_assert_true(
            cs_predict_best(topo, CS_OP_ALL_REDUCE, size, NULL, -1, &picked, &best, &error));
        g_assert_no_error(error);
        g_assert_cmpint(best.proto, !=, CS_PROTO_LL128);
    }
    CsPredictOptions listed = opt;
    listed.nccl_proto_mask = 1u << CS_PROTO_LL128;
    g_assert_true(
        cs_predict_best(topo, CS_OP_ALL_REDUCE, 8 << 20, NULL, -1, &listed, &best, &error));
    g_assert_no_error(error);
    g_assert_cmpint(best.proto, ==, CS_PROTO_LL128);

    /* Every NCCL algorithm and the p2p plan start from the 28: p2pnChannels is 28 rounded up
     * to 32, so each of the 7 peers keeps its 2 channels (xGMI is not NVLink: 2 a peer) and an
     * all-to-all runs on 14 (with 8 p2p channels, before, on 8). On 5 of the 8 GPUs the algorithms
     * run rank order (no topology for a part of the machine), so the count is the lane rule's: 7
     * xGMI links, rounded up to 8. */
    const CsAlgo *direct = cs_algo_lookup("direct", NULL);
    g_assert_cmpint(
        cs_predict_default_channels(topo, direct, CS_OP_ALL_TO_ALL, CS_PROTO_SIMPLE, 1 << 30, 8),
        ==, 14);
    g_assert_cmpint(
        cs_predict_default_channels(topo, ring, CS_OP_ALL_REDUCE, CS_PROTO_SIMPLE, 1 << 30, 5), ==,
        8);
}

/* ---- Best ---- */

static void
test_best_nccl_set(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTopo) topo = cs_test_crossbar(8, "3 us", "0.3 us", NULL);
    CsPredictOptions opt;
    CsPrediction best;
    CsPrediction any;

    g_test_summary("By default the best is chosen among what nccl-tests can run; "
                   "any_algorithm widens it, and the result is never slower.");
    cs_predict_options_init(&opt);
    for (gint64 size = 8; size <= (gint64)1 << 24; size *= 64) {
        g_assert_true(cs_predict_best(topo, CS_OP_ALL_REDUCE, size, NULL, -1, &opt, &best, &error));
        g_assert_no_error(error);
        g_assert_true(strcmp(best.algo->name, "ring") == 0 || strcmp(best.algo->name, "tree") == 0
                      || strcmp(best.algo->name, "nvls") == 0);
        opt.any_algorithm = TRUE;
        g_assert_true(cs_predict_best(topo, CS_OP_ALL_REDUCE, size, NULL, -1, &opt, &any, &error));
        g_assert_no_error(error);
        g_assert_cmpint(any.result.time, <=, best.result.time);
        opt.any_algorithm = FALSE;
    }
    /* All-to-all: grouped send/recv, as nccl-tests does it. */
    g_assert_true(cs_predict_best(topo, CS_OP_ALL_TO_ALL, 1 << 20, NULL, -1, &opt, &best, &error));
    g_assert_no_error(error);
    g_assert_cmpstr(best.algo->name, ==, "direct");
}

/* The fastest of @names (NULL-terminated) forced one at a time, every protocol each: what
 * cs_predict_best must return when exactly these are its candidates. Names an algorithm
 * refuses (supports()) are skipped. */
static CsTime
fastest_of(const CsTopo *topo, CsOp op, gint64 size, const CsPredictOptions *opt,
           const char *const *names)
{
    CsTime best = G_MAXINT64;

    for (int i = 0; names[i] != NULL; i++) {
        g_autoptr(GError) error = NULL;
        const CsAlgo *algo = cs_algo_lookup(names[i], NULL);
        CsPrediction one;
        g_assert_nonnull(algo);
        if (!cs_predict_best(topo, op, size, algo, -1, opt, &one, &error)) {
            g_assert_error(error, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_UNSUPPORTED);
            continue;
        }
        best = MIN(best, one.result.time);
    }
    return best;
}

static void
test_best_nccl_per_op(void)
{
    static const char *const ring_only[] = { "ring", NULL };
    static const char *const ar_one_node[] = { "ring", "tree", "nvls", NULL };
    static const char *const ar_nodes[] = { "ring", "tree", "nvls", "nvls_tree", NULL };
    static const CsOp rooted[] = { CS_OP_BROADCAST, CS_OP_REDUCE };
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTopo) h8 = cs_topo_load("dgx-h100x8", &error);
    g_assert_no_error(error);
    g_autoptr(CsTopo) h4 = cs_topo_load("dgx-h100x4", &error);
    g_assert_no_error(error);
    g_autoptr(CsTopo) h2n = cs_topo_load("hgx-h100x8-2n", &error);
    g_assert_no_error(error);
    CsPredictOptions opt;
    CsPrediction best;

    g_test_summary("The default candidates are NCCL 2.2x's per collective: broadcast and reduce "
                   "ring only; all-reduce ring, tree, NVLS, and NVLSTree only across nodes.");
    cs_predict_options_init(&opt);
    /* Broadcast and reduce: NCCL has no tree or NVLS variant, so the best is the ring's. */
    for (gsize k = 0; k < G_N_ELEMENTS(rooted); k++) {
        for (gint64 size = 8; size <= (gint64)1 << 23; size *= 32) {
            g_assert_true(cs_predict_best(h8, rooted[k], size, NULL, -1, &opt, &best, &error));
            g_assert_no_error(error);
            g_assert_cmpstr(best.algo->name, ==, "ring");
            g_assert_cmpint(best.result.time, ==, fastest_of(h8, rooted[k], size, &opt, ring_only));
        }
    }
    /* The tree is still there when forced. */
    g_assert_true(cs_predict_best(h8, CS_OP_BROADCAST, 1 << 23, cs_algo_lookup("tree", NULL), -1,
                                  &opt, &best, &error));
    g_assert_no_error(error);
    g_assert_cmpstr(best.algo->name, ==, "tree");

    /* All-reduce on one node: never NVLSTree, although it runs there when forced. */
    for (gint64 size = 8; size <= (gint64)1 << 30; size *= 64) {
        g_assert_true(cs_predict_best(h4, CS_OP_ALL_REDUCE, size, NULL, -1, &opt, &best, &error));
        g_assert_no_error(error);
        g_assert_cmpstr(best.algo->name, !=, "nvls_tree");
        g_assert_cmpint(best.result.time, ==,
                        fastest_of(h4, CS_OP_ALL_REDUCE, size, &opt, ar_one_node));
    }
    g_assert_true(cs_predict_best(h4, CS_OP_ALL_REDUCE, 1 << 20, cs_algo_lookup("nvls_tree", NULL),
                                  -1, &opt, &best, &error));
    g_assert_no_error(error);

    /* Two nodes: NVLSTree joins the candidates; the first 8 ranks (one node) drop it again. */
    g_assert_true(cs_predict_best(h2n, CS_OP_ALL_REDUCE, 1 << 30, NULL, -1, &opt, &best, &error));
    g_assert_no_error(error);
    g_assert_cmpint(best.result.time, ==,
                    fastest_of(h2n, CS_OP_ALL_REDUCE, 1 << 30, &opt, ar_nodes));
    opt.nranks = 8;
    g_assert_true(cs_predict_best(h2n, CS_OP_ALL_REDUCE, 1 << 30, NULL, -1, &opt, &best, &error));
    g_assert_no_error(error);
    g_assert_cmpstr(best.algo->name, !=, "nvls_tree");
    g_assert_cmpint(best.result.time, ==,
                    fastest_of(h2n, CS_OP_ALL_REDUCE, 1 << 30, &opt, ar_one_node));
}

static void
test_best_is_fastest(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTopo) topo = cs_test_crossbar(4, "3 us", "0.3 us", NULL);
    const CsAlgo *ring = cs_algo_lookup("ring", NULL);
    CsPredictOptions opt;
    CsPrediction best;

    g_test_summary("The best point is the fastest of the protocols tried one by one.");
    cs_predict_options_init(&opt);
    for (gint64 size = 8; size <= (gint64)1 << 26; size *= 16) {
        g_assert_true(cs_predict_best(topo, CS_OP_ALL_REDUCE, size, ring, -1, &opt, &best, &error));
        g_assert_no_error(error);
        for (int p = 0; p < CS_N_PROTOS; p++) {
            CsPrediction one;
            g_assert_true(
                cs_predict_one(topo, CS_OP_ALL_REDUCE, size, ring, (CsProto)p, &opt, &one, &error));
            g_assert_no_error(error);
            g_assert_cmpint(best.result.time, <=, one.result.time);
        }
        g_assert_true(best.algo == ring);
        g_assert_cmpfloat_with_epsilon(best.time_us, cs_time_to_us(best.result.time), 1e-9);
    }
}

/* ---- Lower bounds (branch and bound in cs_predict_best) ---- */

/* Machines of every kind of route the bound must hold on: NVSwitch, a two-node rail fabric,
 * PCIe through host memory, CPUs over Ethernet, an xGMI mesh. */
static const char *const bound_topos[]
    = { "dgx-h100x8", "hgx-h100x8-2n", "rtx2080ti-x2-pcie3-shm", "eth-cpu-8n", "mi300x-x8-xgmi" };
static const gint64 bound_sizes[] = { 8, 1000, 4096, 65536 + 12, 1 << 20, 3 << 22 };

/* One point to hold a bound against: a machine, an algorithm that states a bound, a
 * collective it implements, a size. */
typedef struct {
    CsTopo *topo;
    const char *topo_name;
    const CsAlgo *algo;
    CsOp op;
    gint64 size;
} BoundPoint;

static void
bound_point_clear(gpointer data)
{
    cs_topo_unref(((BoundPoint *)data)->topo);
}

/* Every bound_topos x bounded algorithm x collective x bound_sizes. */
static GArray *
bound_points(void)
{
    GArray *points = g_array_new(FALSE, FALSE, sizeof(BoundPoint));
    g_array_set_clear_func(points, bound_point_clear);
    for (guint t = 0; t < G_N_ELEMENTS(bound_topos); t++) {
        g_autoptr(CsTopo) topo = cs_test_load_topo(bound_topos[t]);
        for (const CsAlgo *const *a = cs_algo_registry(); *a != NULL; a++)
            for (int op = 0; op < CS_N_OPS && (*a)->bound != NULL; op++)
                for (guint i = 0; i < G_N_ELEMENTS(bound_sizes) && ((*a)->ops & CS_OP_BIT(op));
                     i++) {
                    BoundPoint b
                        = { cs_topo_ref(topo), bound_topos[t], *a, (CsOp)op, bound_sizes[i] };
                    g_array_append_val(points, b);
                }
    }
    return points;
}

static void
test_bound_bytes(void)
{
    g_test_summary("An algorithm's bound counts exactly the bytes its schedule sends.");
    g_autoptr(GArray) points = bound_points();
    int checked = 0;
    for (guint k = 0; k < points->len; k++) {
        const BoundPoint *b = &g_array_index(points, BoundPoint, k);
        g_autoptr(GError) error = NULL;
        CsPredictOptions opt;
        cs_predict_options_init(&opt);
        opt.root = 1;
        g_autoptr(CsSchedule) sched
            = cs_predict_schedule(b->topo, b->op, b->size, b->algo, CS_PROTO_SIMPLE, &opt, &error);
        if (sched == NULL)
            continue; /* refused here (supports) */
        gint64 sent = 0;
        for (int r = 0; r < cs_schedule_n_ranks(sched); r++) {
            gsize n;
            const CsStep *steps = cs_schedule_steps(sched, r, &n);
            for (gsize i = 0; i < n; i++)
                if (cs_step_kind_sends(steps[i].kind))
                    sent += steps[i].bytes;
        }
        CsAlgoArgs args;
        cs_algo_args_init(&args, b->topo, b->op, cs_schedule_n_ranks(sched), b->size);
        args.root = 1;
        args.n_channels = cs_schedule_n_channels(sched);
        CsAlgoBound bound;
        g_assert_true(b->algo->bound(&args, &bound));
        if (bound.bytes_sent != sent)
            g_error("%s %s %" G_GINT64_FORMAT " B on %s: bound says %" G_GINT64_FORMAT
                    " bytes sent, the schedule sends %" G_GINT64_FORMAT,
                    b->algo->name, cs_op_name(b->op), b->size, b->topo_name, bound.bytes_sent,
                    sent);
        g_assert_cmpint(bound.chain > 0, ==, sent > 0);
        checked++;
    }
    g_assert_cmpint(checked, >=, 100);
}

static void
test_bound_below_engine(void)
{
    g_test_summary("The lower bound never exceeds the simulated time (either network model, "
                   "textbook or not, all ranks or the first three), and is not vacuous.");
    static const char *const modes[] = { "", " (textbook)", " (maxmin)", " (3 ranks)" };
    g_autoptr(GArray) points = bound_points();
    double tightest = 0.0;
    int checked = 0;
    for (guint k = 0; k < points->len; k++) {
        const BoundPoint *b = &g_array_index(points, BoundPoint, k);
        for (int p = 0; p < CS_N_PROTOS; p++) {
            for (int mode = 0; mode < (int)G_N_ELEMENTS(modes); mode++) {
                g_autoptr(GError) error = NULL;
                CsPredictOptions opt;
                CsPrediction pred;
                cs_predict_options_init(&opt);
                opt.exact = TRUE;
                opt.engine.textbook = mode == 1;
                opt.engine.net_model = mode == 2 ? "maxmin" : NULL;
                /* The first ranks only: the algorithm sees no machine. */
                opt.nranks = mode == 3 ? MIN(3, cs_topo_n_ranks(b->topo)) : 0;
                if (!cs_predict_one(b->topo, b->op, b->size, b->algo, (CsProto)p, &opt, &pred,
                                    &error))
                    continue; /* refused (LL on CPUs, ...) */
                const CsTime bound
                    = cs_predict_lower_bound(b->topo, b->op, b->size, b->algo, (CsProto)p, &opt);
                if (bound > pred.result.time)
                    g_error("%s/%s %s %" G_GINT64_FORMAT " B on %s%s: bound %.4f us > simulated "
                            "%.4f us",
                            b->algo->name, cs_proto_name((CsProto)p), cs_op_name(b->op), b->size,
                            b->topo_name, modes[mode], cs_time_to_us(bound),
                            cs_time_to_us(pred.result.time));
                tightest = MAX(tightest, (double)bound / (double)MAX(pred.result.time, 1));
                checked++;
            }
        }
    }
    g_assert_cmpint(checked, >=, 200);
    /* A bound of 0 everywhere would pass the check above and prune nothing. */
    g_assert_cmpfloat(tightest, >, 0.5);
}

static void
test_bound_ring_tight(void)
{
    g_test_summary("A ring all-reduce's bound is most of its time, small and large.");
    g_autoptr(CsTopo) topo = cs_test_load_topo("dgx-h100x8");
    const CsAlgo *ring = cs_algo_lookup("ring", NULL);
    const gint64 sizes[] = { 8, (gint64)1 << 30 };
    for (guint i = 0; i < G_N_ELEMENTS(sizes); i++) {
        g_autoptr(GError) error = NULL;
        CsPrediction pred;
        g_assert_true(cs_predict_one(topo, CS_OP_ALL_REDUCE, sizes[i], ring, CS_PROTO_SIMPLE, NULL,
                                     &pred, &error));
        g_assert_no_error(error);
        const CsTime bound
            = cs_predict_lower_bound(topo, CS_OP_ALL_REDUCE, sizes[i], ring, CS_PROTO_SIMPLE, NULL);
        g_assert_cmpint(bound, <=, pred.result.time);
        /* Latency: 14 hops of link and protocol latency, less the launch; bandwidth: the
         * links' rate, less what the channels leave unused. */
        g_assert_cmpfloat((double)bound, >, 0.4 * (double)pred.result.time);
    }
}

static void
test_best_bound_same(void)
{
    g_test_summary("Skipping candidates by their bound picks what trying every one picks.");
    const char *const topos[] = { "dgx-h100x8", "hgx-h100x8-2n", "dgx-h100x4", "eth-cpu-8n" };
    int pruned_somewhere = 0;
    for (guint t = 0; t < G_N_ELEMENTS(topos); t++) {
        g_autoptr(CsTopo) topo = cs_test_load_topo(topos[t]);
        for (int op = 0; op < CS_N_OPS; op++) {
            for (gint64 size = 8; size <= (gint64)1 << 28; size *= 32) {
                g_autoptr(GError) e1 = NULL;
                g_autoptr(GError) e2 = NULL;
                CsPredictOptions opt;
                CsPrediction pruned;
                CsPrediction every;
                cs_predict_options_init(&opt);
                gboolean ok1 = cs_predict_best(topo, (CsOp)op, size, NULL, -1, &opt, &pruned, &e1);
                opt.exhaustive = TRUE;
                gboolean ok2 = cs_predict_best(topo, (CsOp)op, size, NULL, -1, &opt, &every, &e2);
                g_assert_cmpint(ok1, ==, ok2);
                if (!ok1) {
                    g_assert_cmpstr(e1->message, ==, e2->message);
                    continue;
                }
                g_assert_true(pruned.algo == every.algo);
                g_assert_cmpint(pruned.proto, ==, every.proto);
                g_assert_cmpint(pruned.result.time, ==, every.result.time);
                /* Some candidate was beaten by its bound alone. */
                for (int p = 0; p < CS_N_PROTOS; p++) {
                    const CsAlgo *ring = cs_algo_lookup("ring", NULL);
                    if ((ring->ops & CS_OP_BIT(op)) != 0
                        && cs_predict_lower_bound(topo, (CsOp)op, size, ring, (CsProto)p, &opt)
                               > every.result.time)
                        pruned_somewhere++;
                }
            }
        }
    }
    g_assert_cmpint(pruned_somewhere, >, 0);
}

/* Two GPUs on one PCIe switch (16 GB/s, 1 us a link) whose kernel launch is @launch. */
static CsTopo *
load_pcie_pair(const char *launch)
{
    g_autoptr(GError) error = NULL;
    g_autofree char *json = g_strdup_printf(
        "{\"name\": \"pcie2\", \"description\": \"test\", \"gpu\": {\"launch\": \"%s\", "
        "\"step_overhead\": \"0 us\", \"reduce_bandwidth\": \"4 GB/s\", \"copy_bandwidth\": "
        "\"8 GB/s\"}, \"devices\": [{\"name\": \"g0\", \"kind\": \"gpu\"}, {\"name\": \"g1\", "
        "\"kind\": \"gpu\"}, {\"name\": \"sw\", \"kind\": \"pcie_switch\"}], \"links\": "
        "[{\"endpoints\": [\"g0\", \"sw\"], \"kind\": \"pcie\", \"bandwidth\": \"16 GB/s\", "
        "\"alpha\": \"1 us\"}, {\"endpoints\": [\"g1\", \"sw\"], \"kind\": \"pcie\", "
        "\"bandwidth\": \"16 GB/s\", \"alpha\": \"1 us\"}]}",
        launch);
    CsTopo *topo = cs_topo_load_data(json, "pcie2", &error);
    g_assert_no_error(error);
    return topo;
}

static void
test_best_skips_illegal(void)
{
    g_autoptr(GError) error = NULL;
    /* Two GPUs over PCIe: LL128 needs NVLink, so it is never the answer. */
    g_autoptr(CsTopo) topo = load_pcie_pair("1 us");
    const CsAlgo *ring = cs_algo_lookup("ring", NULL);
    CsPredictOptions opt;
    CsPrediction pred;

    g_test_summary("A protocol a route cannot carry is skipped, and alone it is an error.");
    cs_predict_options_init(&opt);
    for (gint64 size = 8; size <= (gint64)1 << 24; size *= 8) {
        g_assert_true(cs_predict_best(topo, CS_OP_ALL_REDUCE, size, NULL, -1, &opt, &pred, &error));
        g_assert_no_error(error);
        g_assert_cmpint(pred.proto, !=, CS_PROTO_LL128);
    }
    g_assert_false(
        cs_predict_best(topo, CS_OP_ALL_REDUCE, 1024, ring, CS_PROTO_LL128, &opt, &pred, &error));
    g_assert_error(error, CS_ENGINE_ERROR, CS_ENGINE_ERROR_MISMATCH);
}

/* A zero launch on a size that moves nothing (an all-to-all of fewer bytes than ranks) is a
 * time of 0, inside the clock: a fuzzed topology got "0 bytes would take longer than
 * collsim's clock counts" for it. */
static void
test_zero_time(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTopo) topo = load_pcie_pair("0 us");
    CsPredictOptions opt;
    CsPrediction pred;

    g_test_summary("A prediction of 0 us (no launch, no bytes) is a time, not a clock overflow.");
    cs_predict_options_init(&opt);
    g_assert_true(cs_predict_best(topo, CS_OP_ALL_TO_ALL, 4, NULL, -1, &opt, &pred, &error));
    g_assert_no_error(error);
    g_assert_cmpfloat(pred.time_us, ==, 0.0);
    g_assert_cmpfloat(pred.algbw_GBps, ==, 0.0);
}

static void
test_best_cpu_simple(void)
{
    static const char *const cpu_topos[] = { "cpu-host-shm", "eth-cpu-8n" };
    const CsAlgo *ring = cs_algo_lookup("ring", NULL);
    CsPredictOptions opt;
    CsPrediction pred;

    g_test_summary("On CPU ranks only Simple is weighed; forcing LL or LL128 there is refused.");
    cs_predict_options_init(&opt);
    for (gsize t = 0; t < G_N_ELEMENTS(cpu_topos); t++) {
        g_autoptr(GError) error = NULL;
        g_autoptr(CsTopo) topo = cs_topo_load(cpu_topos[t], &error);
        g_assert_no_error(error);
        for (gint64 size = 8; size <= (gint64)1 << 22; size *= 16) {
            g_assert_true(
                cs_predict_best(topo, CS_OP_ALL_REDUCE, size, NULL, -1, &opt, &pred, &error));
            g_assert_no_error(error);
            g_assert_cmpint(pred.proto, ==, CS_PROTO_SIMPLE);
        }
        for (int p = CS_PROTO_LL; p <= CS_PROTO_LL128; p++) {
            g_assert_false(
                cs_predict_best(topo, CS_OP_ALL_REDUCE, 1024, ring, p, &opt, &pred, &error));
            g_assert_error(error, CS_ENGINE_ERROR, CS_ENGINE_ERROR_MISMATCH);
            g_assert_nonnull(strstr(error->message, "CPU ranks use Simple only"));
            g_clear_error(&error);
        }
    }
}

/* Two GPUs and a CPU on one PCIe switch, all three ranks; @g0_protos / @g1_protos (nullable)
 * are the GPUs' default_protocols as JSON lists. */
static CsTopo *
load_gpus_and_cpu(const char *g0_protos, const char *g1_protos)
{
    g_autoptr(GError) error = NULL;
    g_autofree char *g0 = g0_protos != NULL
                              ? g_strdup_printf(", \"default_protocols\": %s", g0_protos)
                              : g_strdup("");
    g_autofree char *g1 = g1_protos != NULL
                              ? g_strdup_printf(", \"default_protocols\": %s", g1_protos)
                              : g_strdup("");
    g_autofree char *json = g_strdup_printf(
        "{\"name\": \"mixed\", \"description\": \"test\", \"gpu\": {\"launch\": \"4 us\", "
        "\"step_overhead\": \"0.2 us\", \"reduce_bandwidth\": \"1000 GB/s\", "
        "\"copy_bandwidth\": \"1500 GB/s\"}, \"cpu\": {\"launch\": \"1 us\", "
        "\"step_overhead\": \"0.2 us\", \"reduce_bandwidth\": \"4 GB/s\", "
        "\"copy_bandwidth\": \"6 GB/s\"}, \"devices\": [{\"name\": \"g0\", \"kind\": "
        "\"gpu\"%s}, {\"name\": \"g1\", \"kind\": \"gpu\"%s}, {\"name\": \"c0\", \"kind\": "
        "\"cpu\"}, {\"name\": \"sw\", \"kind\": \"pcie_switch\"}], \"links\": "
        "[{\"endpoints\": [\"g0\", \"sw\"], \"kind\": \"pcie\", \"bandwidth\": \"32 GB/s\", "
        "\"alpha\": \"0.5 us\"}, {\"endpoints\": [\"g1\", \"sw\"], \"kind\": \"pcie\", "
        "\"bandwidth\": \"32 GB/s\", \"alpha\": \"0.5 us\"}, {\"endpoints\": [\"c0\", "
        "\"sw\"], \"kind\": \"pcie\", \"bandwidth\": \"32 GB/s\", \"alpha\": \"0.5 us\"}], "
        "\"ranks\": [\"g0\", \"g1\", \"c0\"]}",
        g0, g1);
    CsTopo *topo = cs_topo_load_data(json, "mixed", &error);
    g_assert_no_error(error);
    return topo;
}

static void
test_best_mixed_ranks_simple(void)
{
    g_autoptr(GError) error = NULL;
    /* The CPU holds every collective to Simple, NCCL's grouped send/recv (LL for small
     * messages) included. */
    g_autoptr(CsTopo) topo = load_gpus_and_cpu(NULL, NULL);
    CsPredictOptions opt;
    CsPrediction pred;

    g_test_summary("A CPU among the ranks holds every collective, grouped send/recv too, to "
                   "Simple.");
    cs_predict_options_init(&opt);
    for (int op = 0; op < CS_N_OPS; op++) {
        for (gint64 size = 48; size <= (gint64)3 << 20; size *= 64) {
            g_assert_true(cs_predict_best(topo, (CsOp)op, size, NULL, -1, &opt, &pred, &error));
            g_assert_no_error(error);
            g_assert_cmpint(pred.proto, ==, CS_PROTO_SIMPLE);
        }
    }
}

static void
test_best_no_shared_protocol(void)
{
    g_autoptr(GError) error = NULL;
    /* g0 allows Simple and LL, g1 LL, the CPU Simple only: the first two ranks share LL, all
     * three share nothing. */
    g_autoptr(CsTopo) topo = load_gpus_and_cpu("[\"Simple\", \"LL\"]", "[\"LL\"]");
    const CsAlgo *ring = cs_algo_lookup("ring", NULL);
    CsPredictOptions opt;
    CsPrediction pred;

    g_test_summary("Ranks whose default protocols share none predict only with a forced "
                   "protocol or fewer ranks; the error names the rank that leaves none.");
    g_assert_cmpuint(cs_topo_default_protos(topo, 2), ==, 1u << CS_PROTO_LL);
    g_assert_cmpuint(cs_topo_default_protos(topo, 3), ==, 0);
    cs_predict_options_init(&opt);
    opt.nranks = 2;
    g_assert_true(cs_predict_best(topo, CS_OP_ALL_REDUCE, 4096, NULL, -1, &opt, &pred, &error));
    g_assert_no_error(error);
    g_assert_cmpint(pred.proto, ==, CS_PROTO_LL);
    g_assert_null(cs_predict_no_shared_protocol(topo, 2));

    opt.nranks = 3;
    g_assert_false(cs_predict_best(topo, CS_OP_ALL_REDUCE, 4096, NULL, -1, &opt, &pred, &error));
    g_assert_error(error, CS_ENGINE_ERROR, CS_ENGINE_ERROR_MISMATCH);
    g_assert_nonnull(strstr(error->message, "rank 2 (cpu \"c0\") allows none"));
    g_clear_error(&error);
    g_assert_true(
        cs_predict_best(topo, CS_OP_ALL_REDUCE, 4096, ring, CS_PROTO_SIMPLE, &opt, &pred, &error));
    g_assert_no_error(error);
}

static void
test_sizes_and_figures(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTopo) topo = cs_test_crossbar(4, "0 us", "0 us", NULL);
    const CsAlgo *ring = cs_algo_lookup("ring", NULL);
    CsPredictOptions opt;
    CsPrediction pred;

    g_test_summary("nccl-tests figures: algbw = size / time, busbw = algbw x 2(P-1)/P.");
    cs_predict_options_init(&opt);
    opt.engine.textbook = TRUE;
    opt.dtype = CS_DTYPE_INT8;
    /* Textbook ring all-reduce of 4000 B on 4 ranks: 6 x (1 us + 1 us) + 3 x 0.25 us
     * = 12.75 us; algbw 4000 B / 12.75 us = 0.3137 GB/s, busbw x 1.5. */
    g_assert_true(
        cs_predict_one(topo, CS_OP_ALL_REDUCE, 4000, ring, CS_PROTO_SIMPLE, &opt, &pred, &error));
    g_assert_no_error(error);
    g_assert_cmpfloat_with_epsilon(pred.time_us, 12.75, 1e-9);
    g_assert_cmpfloat_with_epsilon(pred.algbw_GBps, 4000.0 / 12.75e-6 / 1e9, 1e-12);
    g_assert_cmpfloat_with_epsilon(pred.busbw_GBps, 1.5 * 4000.0 / 12.75e-6 / 1e9, 1e-12);
    g_assert_cmpint(pred.size.size_bytes, ==, 4000);
    g_assert_null(pred.result.rank_finish);
}

/* NVLS and NVLSTree run NCCL's nvlsChannels CTAs at every size (NCCL 2.28 nvls.cc, enqueue.cc):
 * 16 on Hopper, 24 on Blackwell within one NVLink clique, 32 across cliques; NCCL 2.19 runs 16
 * everywhere. Ring keeps its own count (32 on 18-lane GPUs, fewer for small sizes). */
static void
test_channels_nvls(void)
{
    g_autoptr(CsTopo) h100 = cs_test_load_topo("dgx-h100x8");
    g_autoptr(CsTopo) two = cs_test_load_topo("hgx-h100x8-2n");
    g_autoptr(CsTopo) nvl72 = cs_test_load_topo("gb200-nvl72");
    g_autoptr(CsTopo) b200 = cs_test_load_topo("dgx-b200x8");
    const CsAlgo *nvls = cs_algo_lookup("nvls", NULL);
    const CsAlgo *nvls_tree = cs_algo_lookup("nvls_tree", NULL);
    const CsAlgo *ring = cs_algo_lookup("ring", NULL);

    g_test_summary("NVLS and NVLSTree get NCCL's nvlsChannels whatever the size.");
    for (gint64 size = 8; size <= (gint64)1 << 30; size *= 1024) {
        g_assert_cmpint(
            cs_predict_default_channels(h100, nvls, CS_OP_ALL_REDUCE, CS_PROTO_SIMPLE, size, 8), ==,
            16);
        g_assert_cmpint(cs_predict_default_channels(two, nvls_tree, CS_OP_ALL_REDUCE,
                                                    CS_PROTO_SIMPLE, size, 16),
                        ==, 16);
        g_assert_cmpint(
            cs_predict_default_channels(nvl72, nvls, CS_OP_ALL_REDUCE, CS_PROTO_SIMPLE, size, 72),
            ==, 24);
        g_assert_cmpint(
            cs_predict_default_channels(b200, nvls, CS_OP_ALL_GATHER, CS_PROTO_SIMPLE, size, 8), ==,
            24);
    }
    g_assert_cmpint(
        cs_predict_default_channels(h100, ring, CS_OP_ALL_REDUCE, CS_PROTO_SIMPLE, 1 << 30, 8), ==,
        32);

    const CsNcclConstants *v219 = cs_nccl_constants_lookup("2.19", NULL);
    const CsNcclConstants *v228 = cs_nccl_constants_lookup("2.28", NULL);
    g_assert_cmpint(cs_nccl_nvls_channels(v228, CS_NCCL_ARCH_HOPPER, TRUE), ==, 16);
    g_assert_cmpint(cs_nccl_nvls_channels(v228, CS_NCCL_ARCH_BLACKWELL, FALSE), ==, 24);
    g_assert_cmpint(cs_nccl_nvls_channels(v228, CS_NCCL_ARCH_BLACKWELL, TRUE), ==, 32);
    g_assert_cmpint(cs_nccl_nvls_channels(v219, CS_NCCL_ARCH_BLACKWELL, FALSE), ==, 16);
}

/* ---- Large sizes ---- */

static void
test_extrapolation(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTopo) topo = cs_topo_load("dgx-h100x4", &error);
    const CsAlgo *tree = cs_algo_lookup("tree", NULL);
    CsPredictOptions opt;
    CsPrediction fast;
    CsPrediction exact;

    g_test_summary("A large size extended from smaller simulated ones stays within 1% of the "
                   "chunk-by-chunk simulation.");
    g_assert_no_error(error);
    g_assert_nonnull(tree);
    cs_predict_options_init(&opt);
    /* 1 GiB LL tree all-reduce on 4 ranks: 2 x 4 x 1 GiB / 32 KiB = 262,144 estimated steps,
     * past the 60,000 budget; its steady state is reached early, so three smaller sizes on
     * one line are simulated and extended. */
    g_assert_true(cs_predict_one(topo, CS_OP_ALL_REDUCE, (gint64)1 << 30, tree, CS_PROTO_LL, &opt,
                                 &fast, &error));
    g_assert_no_error(error);
    g_assert_true(fast.extrapolated);
    opt.exact = TRUE;
    g_assert_true(cs_predict_one(topo, CS_OP_ALL_REDUCE, (gint64)1 << 30, tree, CS_PROTO_LL, &opt,
                                 &exact, &error));
    g_assert_no_error(error);
    g_assert_false(exact.extrapolated);
    g_assert_cmpfloat(rel_error(fast.time_us, exact.time_us), <, 0.01);
    /* The parts still add up, and the extension replayed fewer events. */
    g_assert_cmpint(fast.result.alpha + fast.result.beta + fast.result.gamma + fast.result.overhead,
                    ==, fast.result.time);
    g_assert_cmpint(fast.result.n_events, <, exact.result.n_events);

    /* 4 GiB NVLS-tree all-reduce on 2 x 8 H100: its pipeline fills slowly (the three sizes
     * first tried, 32-128 MiB, are not on one line), so the window grows until they are. */
    g_autoptr(CsTopo) two = cs_topo_load("hgx-h100x8-2n", &error);
    g_assert_no_error(error);
    const CsAlgo *nvls_tree = cs_algo_lookup("nvls_tree", NULL);
    g_assert_nonnull(nvls_tree);
    opt.exact = FALSE;
    g_assert_true(cs_predict_one(two, CS_OP_ALL_REDUCE, (gint64)4 << 30, nvls_tree, CS_PROTO_SIMPLE,
                                 &opt, &fast, &error));
    g_assert_no_error(error);
    g_assert_true(fast.extrapolated);
    opt.exact = TRUE;
    g_assert_true(cs_predict_one(two, CS_OP_ALL_REDUCE, (gint64)4 << 30, nvls_tree, CS_PROTO_SIMPLE,
                                 &opt, &exact, &error));
    g_assert_no_error(error);
    g_assert_cmpfloat(rel_error(fast.time_us, exact.time_us), <, 0.01);
}

/* A ring broadcast or reduce on 2 nodes is a chain of 16 ranks that fills in 15 hops and then
 * moves one chunk per channel per step. A broadcast of 128 MiB (LL: 128 loops of 32 channels x
 * 32 KiB; 8 loops, too few to extend, when a loop was counted per rank) and a reduce of 1 GiB
 * (whose windows reach one line later) are extended from windows on their line and land on
 * the whole replay to a thousandth of a percent (4 GiB on 16 nodes, every protocol: equal to
 * the picosecond, docs/performance.md). So is grouped send/recv, whose one peer takes a chunk
 * per round: 256 MiB on 16 nodes (4 loops when a loop was counted per rank). */
static void
test_extend_ring_chain(void)
{
    g_test_summary("A ring broadcast and reduce, and grouped send/recv, extend from their own "
                   "loops, equal to the whole replay.");
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTopo) topo = cs_topo_load("hgx-h100x8-2n", &error);
    g_assert_no_error(error);
    g_autoptr(CsTopo) sixteen = cs_topo_load("hgx-h100x8-16n", &error);
    g_assert_no_error(error);
    const CsAlgo *ring = cs_algo_lookup("ring", NULL);
    const CsAlgo *direct = cs_algo_lookup("direct", NULL);
    const struct {
        const CsTopo *topo;
        const CsAlgo *algo;
        CsOp op;
        CsProto proto;
        gint64 bytes;
    } cases[] = {
        { topo, ring, CS_OP_BROADCAST, CS_PROTO_LL, (gint64)128 << 20 },
        { topo, ring, CS_OP_REDUCE, CS_PROTO_LL, (gint64)1 << 30 },
        { sixteen, direct, CS_OP_SEND_RECV, CS_PROTO_SIMPLE, (gint64)256 << 20 },
    };
    for (gsize k = 0; k < G_N_ELEMENTS(cases); k++) {
        CsPredictOptions opt;
        cs_predict_options_init(&opt);
        CsPrediction fast;
        CsPrediction exact;
        g_assert_true(cs_predict_one(cases[k].topo, cases[k].op, cases[k].bytes, cases[k].algo,
                                     cases[k].proto, &opt, &fast, &error));
        g_assert_no_error(error);
        g_assert_true(fast.extrapolated);
        opt.exact = TRUE;
        g_assert_true(cs_predict_one(cases[k].topo, cases[k].op, cases[k].bytes, cases[k].algo,
                                     cases[k].proto, &opt, &exact, &error));
        g_assert_no_error(error);
        g_assert_false(exact.extrapolated);
        g_assert_cmpfloat(rel_error(fast.time_us, exact.time_us), <, 1e-5);
    }
}

/* The windows a large size is extended from lie on a grid of 8 x 2^k loops. Setup: 4 GiB
 * NVLS all-reduce, Simple, on dgx-h100x4 (16 channels x 4 heads x NCCL's 128 KiB chunk: 8 MiB
 * a loop). The windows 128 MiB - 512 MiB and 256 MiB - 1 GiB are still filling the pipeline
 * and fail the line test; 512 MiB - 2 GiB passes. Expectation: within 0.1% of the
 * chunk-by-chunk replay (17402.1 us). The window the step budget placed before the grid,
 * 152 - 608 MiB, passed the 0.5% slope test while still filling and extended to 17502.3 us,
 * 0.58% slow. */
static void
test_extrapolation_grid(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTopo) topo = cs_topo_load("dgx-h100x4", &error);
    g_assert_no_error(error);
    const CsAlgo *nvls = cs_algo_lookup("nvls", NULL);
    g_assert_nonnull(nvls);
    CsPredictOptions opt;
    CsPrediction fast, exact;

    g_test_summary("A size extended from windows on the grid of whole loops lands within 0.1% "
                   "of its whole replay (4 GiB NVLS all-reduce on 4 x H100).");
    cs_predict_options_init(&opt);
    g_assert_true(cs_predict_one(topo, CS_OP_ALL_REDUCE, (gint64)4 << 30, nvls, CS_PROTO_SIMPLE,
                                 &opt, &fast, &error));
    g_assert_no_error(error);
    g_assert_true(fast.extrapolated);
    opt.exact = TRUE;
    g_assert_true(cs_predict_one(topo, CS_OP_ALL_REDUCE, (gint64)4 << 30, nvls, CS_PROTO_SIMPLE,
                                 &opt, &exact, &error));
    g_assert_no_error(error);
    g_assert_false(exact.extrapolated);
    g_assert_cmpfloat(rel_error(fast.time_us, exact.time_us), <, 0.001);
}

/* A sweep shares one cache across its sizes (collsim run): a size extended from smaller ones
 * must get the points of its own plan. NCCL's p2p plan stripes each peer over a number of
 * channels that follows the size, with the same channel count and chunk: keyed without it,
 * 512 MiB of an LL all-to-all on 8 x H100 took the 64 - 256 MiB points simulated for the
 * sweep's smaller rows and came out 3.5% slow (2633.4 us against 2543.2). */
static void
test_point_cache_sweep(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTopo) topo = cs_topo_load("dgx-h100x8", &error);
    g_assert_no_error(error);
    const CsAlgo *direct = cs_algo_lookup("direct", NULL);
    g_autoptr(CsPointCache) cache = cs_point_cache_new(FALSE);
    cs_point_cache_bind(cache, topo);
    CsPredictOptions plain;
    cs_predict_options_init(&plain);
    CsPredictOptions cached = plain;
    cached.cache = cache;

    g_test_summary("Each size of a sweep that shares a point cache is predicted as it is alone.");
    for (gint64 size = 64 << 20; size <= (gint64)1 << 30; size *= 2) {
        CsPrediction swept, alone;
        g_assert_true(cs_predict_one(topo, CS_OP_ALL_TO_ALL, size, direct, CS_PROTO_LL, &cached,
                                     &swept, &error));
        g_assert_no_error(error);
        g_assert_true(cs_predict_one(topo, CS_OP_ALL_TO_ALL, size, direct, CS_PROTO_LL, &plain,
                                     &alone, &error));
        g_assert_no_error(error);
        g_assert_cmpint(swept.result.time, ==, alone.result.time);
        g_assert_cmpint(swept.peer_channels, ==, alone.peer_channels);
    }
}

/* Schedules built once serve every topology of the same machine; points are reused for the
 * topology they were simulated on only. */
static void
test_point_cache(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTopo) topo = cs_topo_load("dgx-h100x4", &error);
    g_assert_no_error(error);
    const CsAlgo *tree = cs_algo_lookup("tree", NULL);
    CsTopoAdjust adj;
    cs_topo_adjust_init(&adj);
    adj.link_bw_scale[CS_LINK_NVLINK] = 0.5;
    g_autoptr(CsTopo) slower = cs_topo_adjust(topo, &adj);
    g_autoptr(CsPointCache) cache = cs_point_cache_new(TRUE);
    CsPredictOptions plain;
    cs_predict_options_init(&plain);
    CsPredictOptions cached = plain;
    cached.cache = cache;
    gint64 misses, hits;

    g_test_summary("The point cache answers repeated points on one topology, forgets them on "
                   "another, and changes no prediction, not even its event count (the sweep's "
                   "budget and --jobs depend on it).");
    const gint64 sizes[] = { 4096, (gint64)1 << 30, (gint64)1 << 30 };
    const CsTopo *topos[] = { topo, slower };
    for (int t = 0; t < 2; t++) {
        cs_point_cache_bind(cache, topos[t]);
        for (gsize i = 0; i < G_N_ELEMENTS(sizes); i++) {
            CsPrediction want, got;
            g_assert_true(cs_predict_one(topos[t], CS_OP_ALL_REDUCE, sizes[i], tree, CS_PROTO_LL,
                                         &plain, &want, &error));
            g_assert_true(cs_predict_one(topos[t], CS_OP_ALL_REDUCE, sizes[i], tree, CS_PROTO_LL,
                                         &cached, &got, &error));
            g_assert_no_error(error);
            g_assert_cmpint(got.result.time, ==, want.result.time);
            /* A point's own events, whether the cache answered it or not: a hit that counted
             * none made the order of points (threads) change decisions. */
            g_assert_cmpint(got.result.n_events, ==, want.result.n_events);
            g_assert_cmpint(got.result.n_events, >, 0);
            g_assert_true(got.extrapolated == (sizes[i] > 4096));
        }
        cs_point_cache_stats(cache, &misses, &hits);
        /* Once per topology: 4 KiB whole, 1 GiB from three sizes; then 1 GiB again. */
        g_assert_cmpint(misses, ==, 4 * (t + 1));
        g_assert_cmpint(hits, ==, 3 * (t + 1));
    }
}

typedef struct {
    const CsTopo *topo;
    const CsAlgo *algo;
    const CsPredictOptions *options;
    CsPrediction *out;
} SharedCacheJob;

static void
shared_cache_item(guint i, gpointer data)
{
    SharedCacheJob *j = data;
    g_autoptr(GError) error = NULL;
    g_assert_true(cs_predict_one(j->topo, CS_OP_ALL_REDUCE, (gint64)1 << 30, j->algo, CS_PROTO_LL,
                                 j->options, &j->out[i], &error));
    g_assert_no_error(error);
}

/* Threads that ask for a point another thread is simulating wait for its answer: each point
 * is simulated once, whatever the threads. */
static void
test_point_cache_threads(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTopo) topo = cs_topo_load("dgx-h100x4", &error);
    g_assert_no_error(error);
    g_autoptr(CsPointCache) cache = cs_point_cache_new(FALSE);
    cs_point_cache_bind(cache, topo);
    CsPredictOptions options;
    cs_predict_options_init(&options);
    options.cache = cache;
    CsPrediction out[8];
    SharedCacheJob job = { topo, cs_algo_lookup("tree", NULL), &options, out };
    gint64 misses, hits;

    g_test_summary("Eight threads extending the same 1 GiB point from one cache simulate each "
                   "of its three window sizes once, and agree.");
    cs_parallel_for(G_N_ELEMENTS(out), 4, shared_cache_item, NULL, &job);
    cs_point_cache_stats(cache, &misses, &hits);
    g_assert_cmpint(misses, ==, 3);
    g_assert_cmpint(hits, ==, 3 * G_N_ELEMENTS(out) - 3);
    for (gsize i = 1; i < G_N_ELEMENTS(out); i++) {
        g_assert_cmpint(out[i].result.time, ==, out[0].result.time);
        g_assert_cmpint(out[i].result.n_events, ==, out[0].result.n_events);
    }
}

/* cs_predict_best() with its candidates on threads: the same prediction as on one, whatever
 * the candidates simulated ahead of their turn that the pruning then skips. */
static void
test_best_candidate_threads(void)
{
    g_autoptr(GError) error = NULL;
    const char *const topos[] = { "dgx-h100x8", "hgx-h100x8-2n-sharp" };
    const gint64 sizes[] = { 8, 65536, (gint64)8 << 20 };

    g_test_summary("Candidates simulated on 3 threads give the pick of one thread: algorithm, "
                   "protocol, channels, time and events, at three sizes on two machines.");
    for (gsize t = 0; t < G_N_ELEMENTS(topos); t++) {
        g_autoptr(CsTopo) topo = cs_topo_load(topos[t], &error);
        g_assert_no_error(error);
        for (gsize i = 0; i < G_N_ELEMENTS(sizes); i++) {
            CsPredictOptions one, three;
            cs_predict_options_init(&one);
            three = one;
            three.candidate_jobs = 3;
            CsPrediction a, b;
            g_assert_true(
                cs_predict_best(topo, CS_OP_ALL_REDUCE, sizes[i], NULL, -1, &one, &a, &error));
            g_assert_true(
                cs_predict_best(topo, CS_OP_ALL_REDUCE, sizes[i], NULL, -1, &three, &b, &error));
            g_assert_no_error(error);
            g_assert_true(a.algo == b.algo);
            g_assert_cmpint(a.proto, ==, b.proto);
            g_assert_cmpint(a.n_channels, ==, b.n_channels);
            g_assert_cmpint(a.result.time, ==, b.result.time);
            g_assert_cmpint(a.result.n_events, ==, b.result.n_events);
            g_assert_cmpint(a.n_unsimulated, ==, b.n_unsimulated);
        }
    }
}

static void
test_sweep(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTopo) topo = cs_topo_load("dgx-h100x4", &error);
    const CsAlgo *ring = cs_algo_lookup("ring", NULL);
    gint64 sizes[16];
    CsPrediction out[16];
    gboolean valid[16];
    gboolean extrapolated[16];
    CsPredictOptions opt;

    g_test_summary("A sweep simulates until its event budget, then extends its own points.");
    g_assert_no_error(error);
    for (int i = 0; i < 16; i++)
        sizes[i] = (gint64)1 << (12 + 2 * i);
    cs_predict_options_init(&opt);
    /* LL ring all-reduce, 4 KiB .. 1 GiB by 4: 16 MiB replays about 3,000 events and 64 MiB
     * about 12,000, past the budget of 5,000, with 4, 16 and 64 MiB on one line. */
    g_assert_true(cs_predict_sweep(topo, CS_OP_ALL_REDUCE, sizes, 10, ring, CS_PROTO_LL, &opt, 5000,
                                   out, valid, extrapolated, &error));
    g_assert_no_error(error);
    gboolean any = FALSE;
    for (int i = 0; i < 10; i++) {
        CsPrediction one;
        g_assert_true(valid[i]);
        g_assert_cmpint(out[i].size.size_bytes, ==, sizes[i]);
        any |= extrapolated[i];
        if (!extrapolated[i])
            continue;
        g_assert_cmpint(out[i].result.n_events, ==, 0);
        g_assert_true(cs_predict_one(topo, CS_OP_ALL_REDUCE, sizes[i], ring, CS_PROTO_LL, &opt,
                                     &one, &error));
        g_assert_cmpfloat(rel_error(out[i].time_us, one.time_us), <, 0.02);
    }
    g_assert_true(any);
}

/* ---- Main ---- */

static void
test_p2p_split(void)
{
    g_autoptr(CsTopo) gpus = cs_test_load_topo("rtx2080ti-x2-pcie3-shm");
    g_autoptr(CsTopo) cpus = cs_test_load_topo("cpu-host-shm");
    const CsAlgo *direct = cs_algo_lookup("direct", NULL);
    const CsAlgo *ring = cs_algo_lookup("ring", NULL);
    g_autoptr(GError) error = NULL;

    g_test_summary("NCCL's grouped send/recv on GPUs sends and receives with separate warps "
                   "(no staging read in program order); rings and MPI ranks do not.");
    g_autoptr(CsSchedule) a2a = cs_predict_schedule(gpus, CS_OP_ALL_TO_ALL, 1 << 20, direct,
                                                    CS_PROTO_SIMPLE, NULL, &error);
    g_assert_no_error(error);
    g_assert_true(cs_schedule_p2p_split(a2a));
    g_autoptr(CsSchedule) ag
        = cs_predict_schedule(gpus, CS_OP_ALL_GATHER, 1 << 20, ring, CS_PROTO_SIMPLE, NULL, &error);
    g_assert_no_error(error);
    g_assert_false(cs_schedule_p2p_split(ag));
    CsPredictOptions opt;
    cs_predict_options_init(&opt);
    opt.nranks = 2;
    g_autoptr(CsSchedule) mpi = cs_predict_schedule(cpus, CS_OP_ALL_TO_ALL, 1 << 20, direct,
                                                    CS_PROTO_SIMPLE, &opt, &error);
    g_assert_no_error(error);
    g_assert_false(cs_schedule_p2p_split(mpi));
}

/* ---- Packing for the ranks of a study ---- */

static void
test_pack_round_trip(void)
{
    g_test_summary("A prediction packed for another rank of an mpirun study (cs_prediction_pack) "
                   "unpacks to the same fields, its algorithms the registry's own; plain values, "
                   "NULL and empty strings and errors travel unchanged.");
    g_autoptr(CsTopo) topo = cs_test_load_topo("dgx-h100x8");
    CsPredictOptions opt;
    cs_predict_options_init(&opt);
    CsPrediction pred;
    g_autoptr(GError) error = NULL;
    g_assert_true(cs_predict_best(topo, CS_OP_ALL_REDUCE, 1 << 20, NULL, -1, &opt, &pred, &error));
    g_assert_no_error(error);
    /* Fields a best pick leaves at 0 on this machine get values, so each is seen to travel. */
    pred.n_unsimulated = 2;
    pred.unsimulated_algo = cs_algo_lookup("tree", NULL);
    pred.unsimulated_proto = CS_PROTO_LL128;
    pred.asymmetric = TRUE;
    pred.extrapolated = TRUE;

    g_autoptr(GByteArray) out = g_byte_array_new();
    cs_prediction_pack(&pred, out);
    cs_pack_int(out, G_MININT64);
    cs_pack_double(out, -0.0);
    cs_pack_string(out, NULL);
    cs_pack_string(out, "");
    g_autoptr(GError) sent
        = g_error_new_literal(CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_TOO_LARGE, "too large");
    cs_pack_error(out, sent);
    cs_pack_error(out, NULL);

    CsUnpack *in = cs_unpack_new(out->data, out->len);
    CsPrediction back;
    cs_prediction_unpack(in, &back);
    g_assert_true(back.algo == pred.algo);
    g_assert_cmpint(back.proto, ==, pred.proto);
    g_assert_cmpint(back.n_channels, ==, pred.n_channels);
    g_assert_cmpint(back.peer_channels, ==, pred.peer_channels);
    g_assert_cmpmem(&back.size, sizeof(back.size), &pred.size, sizeof(pred.size));
    g_assert_cmpint(back.result.time, ==, pred.result.time);
    g_assert_cmpint(back.result.alpha, ==, pred.result.alpha);
    g_assert_cmpint(back.result.beta, ==, pred.result.beta);
    g_assert_cmpint(back.result.gamma, ==, pred.result.gamma);
    g_assert_cmpint(back.result.overhead, ==, pred.result.overhead);
    g_assert_cmpint(back.result.n_events, ==, pred.result.n_events);
    g_assert_cmpint(back.result.n_transfers, ==, pred.result.n_transfers);
    g_assert_cmpint(back.result.bytes_moved, ==, pred.result.bytes_moved);
    g_assert_cmpint(back.result.n_ranks, ==, pred.result.n_ranks);
    g_assert_null(back.result.rank_finish);
    g_assert_cmpfloat(back.time_us, ==, pred.time_us);
    g_assert_cmpfloat(back.algbw_GBps, ==, pred.algbw_GBps);
    g_assert_cmpfloat(back.busbw_GBps, ==, pred.busbw_GBps);
    g_assert_cmpint(back.extrapolated, ==, TRUE);
    g_assert_cmpint(back.nccl_picked, ==, pred.nccl_picked);
    g_assert_cmpint(back.n_unsimulated, ==, 2);
    g_assert_true(back.unsimulated_algo == cs_algo_lookup("tree", NULL));
    g_assert_cmpint(back.unsimulated_proto, ==, CS_PROTO_LL128);
    g_assert_cmpint(back.replayed_ranks, ==, pred.replayed_ranks);
    g_assert_cmpint(back.asymmetric, ==, TRUE);

    g_assert_cmpint(cs_unpack_int(in), ==, G_MININT64);
    const double zero = cs_unpack_double(in);
    g_assert_cmpfloat(zero, ==, 0.0);
    g_assert_true(signbit(zero));
    g_assert_null(cs_unpack_string(in));
    g_autofree char *empty = cs_unpack_string(in);
    g_assert_cmpstr(empty, ==, "");
    g_autoptr(GError) got = cs_unpack_error(in);
    g_assert_error(got, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_TOO_LARGE);
    g_assert_cmpstr(got->message, ==, "too large");
    g_assert_null(cs_unpack_error(in));
    g_assert_cmpuint(cs_unpack_left(in), ==, 0);
    cs_unpack_free(in);
}

int
main(int argc, char **argv)
{
    static const char *const models[] = { "reservation", "maxmin" };
    static FormRun form_runs[G_N_ELEMENTS(form_cases) * 2];

    g_test_init(&argc, &argv, NULL);
    for (gsize i = 0; i < G_N_ELEMENTS(form_cases); i++) {
        for (int m = 0; m < 2; m++) {
            FormRun *fr = &form_runs[2 * i + (gsize)m];
            fr->c = &form_cases[i];
            fr->model = models[m];
            g_autofree char *path
                = g_strdup_printf("/predict/closed-form/%s/%s/%s", models[m], form_cases[i].algo,
                                  cs_op_name(form_cases[i].op));
            g_test_add_data_func(path, fr, test_closed_form);
        }
    }
    for (int m = 0; m < 2; m++) {
        g_autofree char *star = g_strdup_printf("/predict/textbook/star-256/%s", models[m]);
        g_autofree char *bond = g_strdup_printf("/predict/textbook/nvlink-bond/%s", models[m]);
        g_test_add_data_func(star, models[m], test_textbook_star);
        g_test_add_data_func(bond, models[m], test_textbook_bond);
    }
    for (gsize i = 0; i < G_N_ELEMENTS(agree_cases); i++) {
        g_autofree char *path = g_strdup_printf("/predict/models-agree/%s/%s", agree_cases[i].algo,
                                                cs_op_name(agree_cases[i].op));
        g_test_add_data_func(path, &agree_cases[i], test_models_agree);
    }
    static const char *const sendrecv_topos[] = { "dgx-h100x8", "hgx-h100x8-2n" };
    for (gsize i = 0; i < G_N_ELEMENTS(sendrecv_topos); i++) {
        g_autofree char *tb = g_strdup_printf("/predict/sendrecv/textbook/%s", sendrecv_topos[i]);
        g_autofree char *nc = g_strdup_printf("/predict/sendrecv/nccl/%s", sendrecv_topos[i]);
        g_test_add_data_func(tb, sendrecv_topos[i], test_sendrecv_textbook);
        g_test_add_data_func(nc, sendrecv_topos[i], test_sendrecv_nccl);
    }
    g_test_add_func("/predict/sendrecv/channels", test_sendrecv_channels);
    g_test_add_func("/predict/p2p/network-channels", test_p2p_network_channels);
    g_test_add_func("/predict/p2p/network-chunks", test_p2p_network_chunks);
    g_test_add_func("/predict/p2p/network-b200", test_p2p_network_b200);
    g_test_add_func("/predict/p2p/network-simple", test_p2p_network_simple);
    g_test_add_func("/predict/channels/nccl-like", test_channels);
    g_test_add_func("/predict/channels/mesh-rail", test_channels_mesh_rail);
    g_test_add_func("/predict/channels/rccl-mesh-sizes", test_channels_rccl_mesh_sizes);
    g_test_add_func("/predict/channels/nccl-ring-ll", test_channels_nccl_ring_ll);
    g_test_add_func("/predict/chunk/rccl-tree-simple", test_chunk_rccl_tree_simple);
    g_test_add_func("/predict/channels/nccl-p2p", test_channels_p2p);
    g_test_add_func("/predict/channels/nvls", test_channels_nvls);
    g_test_add_func("/predict/channels/p2p-split", test_p2p_split);
    g_test_add_func("/predict/best/nccl-set", test_best_nccl_set);
    g_test_add_func("/predict/best/nccl-p2p", test_best_p2p);
    g_test_add_func("/predict/best/full-mesh-mi300x", test_full_mesh_mi300x);
    g_test_add_func("/predict/best/nccl-per-op", test_best_nccl_per_op);
    g_test_add_func("/predict/best/fastest", test_best_is_fastest);
    g_test_add_func("/predict/best/illegal-protocol", test_best_skips_illegal);
    g_test_add_func("/predict/best/bound-same-pick", test_best_bound_same);
    g_test_add_func("/predict/bound/bytes", test_bound_bytes);
    g_test_add_func("/predict/bound/below-engine", test_bound_below_engine);
    g_test_add_func("/predict/bound/ring-tight", test_bound_ring_tight);
    g_test_add_func("/predict/best/cpu-simple-only", test_best_cpu_simple);
    g_test_add_func("/predict/best/mixed-ranks-simple", test_best_mixed_ranks_simple);
    g_test_add_func("/predict/best/no-shared-protocol", test_best_no_shared_protocol);
    g_test_add_func("/predict/one/figures", test_sizes_and_figures);
    g_test_add_func("/predict/one/zero-time", test_zero_time);
    g_test_add_func("/predict/one/extrapolation", test_extrapolation);
    g_test_add_func("/predict/one/extrapolation-grid", test_extrapolation_grid);
    g_test_add_func("/predict/one/extrapolation-ring-chain", test_extend_ring_chain);
    g_test_add_func("/predict/one/point-cache", test_point_cache);
    g_test_add_func("/predict/one/point-cache-sweep", test_point_cache_sweep);
    g_test_add_func("/predict/one/point-cache-threads", test_point_cache_threads);
    g_test_add_func("/predict/best/candidate-threads", test_best_candidate_threads);
    g_test_add_func("/predict/sweep/budget", test_sweep);
    g_test_add_func("/predict/pack/round-trip", test_pack_round_trip);
    return g_test_run();
}
