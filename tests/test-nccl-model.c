// SPDX-License-Identifier: MIT
/* NCCL's cost model against values computed by hand from tuning.cc's formulas and constants,
 * for both constant sets, and the emulated topology search on shipped topologies. */
#include "config.h"

#include <glib.h>
#include <math.h>
#include <string.h>

#include "models/nccl.h"
#include "topo/topo.h"

#define EPS 1e-6

/* ---- Hand-built systems ---- */

static const CsNcclConstants *
constants(const char *version)
{
    g_autoptr(GError) error = NULL;
    const CsNcclConstants *c = cs_nccl_constants_lookup(version, &error);
    g_assert_no_error(error);
    g_assert_nonnull(c);
    return c;
}

static CsNcclGraph
graph(int channels, double bw, CsNcclHw hw)
{
    CsNcclGraph g = { 0 };
    g.n_channels = channels;
    g.bw_intra_GBps = bw;
    g.bw_inter_GBps = bw;
    g.hw_intra = hw;
    g.ll128 = hw == CS_NCCL_HW_NVLINK;
    g.same_channels = TRUE;
    return g;
}

/* 8 x H100 on NVSwitch: ring and tree 12 channels x 30 GB/s, NVLS 16 x 20 GB/s. */
static CsNcclSystem
dgx_h100x8(void)
{
    CsNcclSystem s;
    cs_nccl_system_init(&s, 8, 1, CS_NCCL_ARCH_HOPPER);
    s.nvswitch = TRUE;
    s.n_nics = 8;
    s.graphs[CS_NCCL_ALGO_RING] = graph(12, 30.0, CS_NCCL_HW_NVLINK);
    s.graphs[CS_NCCL_ALGO_TREE] = graph(12, 30.0, CS_NCCL_HW_NVLINK);
    s.graphs[CS_NCCL_ALGO_NVLS] = graph(16, 20.0, CS_NCCL_HW_NVLINK);
    s.graphs[CS_NCCL_ALGO_NVLS_TREE] = graph(16, 20.0, CS_NCCL_HW_NVLINK);
    return s;
}

/* 2 nodes x 8 H100: ring and tree 8 channels x 24 GB/s (NVLink inside, IB across). */
static CsNcclSystem
two_nodes(void)
{
    CsNcclSystem s;
    cs_nccl_system_init(&s, 16, 2, CS_NCCL_ARCH_HOPPER);
    s.nvswitch = TRUE;
    s.n_nics = 8;
    s.graphs[CS_NCCL_ALGO_RING] = graph(8, 24.0, CS_NCCL_HW_NVLINK);
    s.graphs[CS_NCCL_ALGO_TREE] = graph(8, 24.0, CS_NCCL_HW_NVLINK);
    s.graphs[CS_NCCL_ALGO_TREE].tree_pattern = TRUE;
    return s;
}

static void
assert_close(double got, double want)
{
    g_assert_cmpfloat_with_epsilon(got, want, EPS * MAX(1.0, fabs(want)));
}

/* ---- Latencies ---- */

static void
test_latency_2_28_nvswitch(void)
{
    CsNcclSystem s = dgx_h100x8();
    g_autoptr(CsNcclModel) m = cs_nccl_model_new(constants("2.28"), &s);
    const CsNcclFunc ar = CS_NCCL_FUNC_ALL_REDUCE;

    g_test_summary("Setup: 8 GPUs, one node, NVLink; all-reduce nsteps = 2(P-1) = 14, no "
                   "inter-node steps. Expectation (2.28): ring lat = base + 14 x NVLink hop.");
    /* Ring/Simple: 8.4 + 14 x 3.4 = 56.0 us. */
    assert_close(cs_nccl_model_latency_us(m, ar, CS_NCCL_ALGO_RING, CS_PROTO_SIMPLE), 56.0);
    /* Ring/LL: 6.6 + 14 x 0.6 = 15.0; Ring/LL128: 14.0 + 14 x 1.9 = 40.6. */
    assert_close(cs_nccl_model_latency_us(m, ar, CS_NCCL_ALGO_RING, CS_PROTO_LL), 15.0);
    assert_close(cs_nccl_model_latency_us(m, ar, CS_NCCL_ALGO_RING, CS_PROTO_LL128), 40.6);
    /* Tree = base + 2((ppn-1) intra + log2(nNodes) inter): Simple 8.4 + 2 x 7 x 4.0 = 64.4,
     * LL 6.8 + 2 x 7 x 0.6 = 15.2, LL128 14.0 + 2 x 7 x 1.25 = 31.5. */
    assert_close(cs_nccl_model_latency_us(m, ar, CS_NCCL_ALGO_TREE, CS_PROTO_SIMPLE), 64.4);
    assert_close(cs_nccl_model_latency_us(m, ar, CS_NCCL_ALGO_TREE, CS_PROTO_LL), 15.2);
    assert_close(cs_nccl_model_latency_us(m, ar, CS_NCCL_ALGO_TREE, CS_PROTO_LL128), 31.5);
    /* NVLS: the NVLink hop alone, 25 us. */
    assert_close(cs_nccl_model_latency_us(m, ar, CS_NCCL_ALGO_NVLS, CS_PROTO_SIMPLE), 25.0);
    /* All-gather ring: nsteps = P-1 = 7: Simple 8.4 + 7 x 3.4 = 32.2. */
    assert_close(
        cs_nccl_model_latency_us(m, CS_NCCL_FUNC_ALL_GATHER, CS_NCCL_ALGO_RING, CS_PROTO_SIMPLE),
        32.2);
    /* Broadcast ring with identical channels: one hop, 8.4 + 3.4 = 11.8. */
    assert_close(
        cs_nccl_model_latency_us(m, CS_NCCL_FUNC_BROADCAST, CS_NCCL_ALGO_RING, CS_PROTO_SIMPLE),
        11.8);
}

static void
test_latency_broadcast_channels_differ(void)
{
    CsNcclSystem s = dgx_h100x8();
    s.graphs[CS_NCCL_ALGO_RING].same_channels = FALSE;
    g_autoptr(CsNcclModel) m = cs_nccl_model_new(constants("2.28"), &s);

    /* nsteps = P = 8 hops; Simple takes the tree's hop latency as chunk latency:
     * 8.4 + 8 x 4.0 = 40.4; LL keeps the ring's: 6.6 + 8 x 0.6 = 11.4. */
    assert_close(
        cs_nccl_model_latency_us(m, CS_NCCL_FUNC_BROADCAST, CS_NCCL_ALGO_RING, CS_PROTO_SIMPLE),
        40.4);
    assert_close(cs_nccl_model_latency_us(m, CS_NCCL_FUNC_REDUCE, CS_NCCL_ALGO_RING, CS_PROTO_LL),
                 11.4);
}

static void
test_latency_2_19_nvswitch(void)
{
    CsNcclSystem s = dgx_h100x8();
    g_autoptr(CsNcclModel) m = cs_nccl_model_new(constants("2.19"), &s);
    const CsNcclFunc ar = CS_NCCL_FUNC_ALL_REDUCE;

    g_test_summary("2.19: Tree/Simple had 28 us per NVLink hop and no base latency.");
    /* Ring/Simple unchanged: 8.4 + 14 x 3.4 = 56.0. */
    assert_close(cs_nccl_model_latency_us(m, ar, CS_NCCL_ALGO_RING, CS_PROTO_SIMPLE), 56.0);
    /* Tree/Simple: 0 + 2 x 7 x 28 = 392.0. */
    assert_close(cs_nccl_model_latency_us(m, ar, CS_NCCL_ALGO_TREE, CS_PROTO_SIMPLE), 392.0);
    /* NVLS: 23 us. */
    assert_close(cs_nccl_model_latency_us(m, ar, CS_NCCL_ALGO_NVLS, CS_PROTO_SIMPLE), 23.0);
}

static void
test_latency_two_nodes(void)
{
    CsNcclSystem s = two_nodes();
    g_autoptr(CsNcclModel) m28 = cs_nccl_model_new(constants("2.28"), &s);
    g_autoptr(CsNcclModel) m19 = cs_nccl_model_new(constants("2.19"), &s);
    const CsNcclFunc ar = CS_NCCL_FUNC_ALL_REDUCE;

    g_test_summary("Setup: 16 ranks on 2 nodes. Ring all-reduce: nsteps 30; 2.28 counts "
                   "2(nNodes-1) = 2 network steps, 2.19 counted 2 nNodes = 4; intra hops are at "
                   "least the network overhead (1 us Intel, x3 for Simple).");
    /* 2.28 Simple: intra max(3.4, 3.0) = 3.4, inter 14: 8.4 + 28 x 3.4 + 2 x 14 = 131.6. */
    assert_close(cs_nccl_model_latency_us(m28, ar, CS_NCCL_ALGO_RING, CS_PROTO_SIMPLE), 131.6);
    /* 2.28 LL: intra max(0.6, 1.0) = 1.0, inter 2.7: 6.6 + 28 x 1.0 + 2 x 2.7 = 40.0. */
    assert_close(cs_nccl_model_latency_us(m28, ar, CS_NCCL_ALGO_RING, CS_PROTO_LL), 40.0);
    /* 2.19 Simple: 8.4 + 26 x 3.4 + 4 x 14 = 152.8. */
    assert_close(cs_nccl_model_latency_us(m19, ar, CS_NCCL_ALGO_RING, CS_PROTO_SIMPLE), 152.8);
    /* 2.28 Tree/Simple: 8.4 + 2 x (7 x 4.0 + log2(2) x 14) = 92.4. */
    assert_close(cs_nccl_model_latency_us(m28, ar, CS_NCCL_ALGO_TREE, CS_PROTO_SIMPLE), 92.4);
    /* 2.19 Tree/Simple: 0 + 2 x (7 x 28 + 1 x 28) = 448.0. */
    assert_close(cs_nccl_model_latency_us(m19, ar, CS_NCCL_ALGO_TREE, CS_PROTO_SIMPLE), 448.0);
}

/* ---- Bandwidths ---- */

static void
test_bandwidth_2_28(void)
{
    CsNcclSystem s = dgx_h100x8();
    g_autoptr(CsNcclModel) m = cs_nccl_model_new(constants("2.28"), &s);
    const CsNcclFunc ar = CS_NCCL_FUNC_ALL_REDUCE;
    const double ring_ratio = 8.0 / 14.0;

    g_test_summary("Setup: bus bandwidth = 12 channels x 30 GB/s = 360 GB/s. Ring converts to "
                   "algorithm bandwidth by nRanks / nsteps = 8/14, tree by 1/2.");
    /* Ring/Simple: 360 x 8/14 = 205.714. */
    assert_close(cs_nccl_model_bandwidth_GBps(m, ar, CS_NCCL_ALGO_RING, CS_PROTO_SIMPLE),
                 360.0 * ring_ratio);
    /* Ring/LL: min(llMaxBw Hopper-N1 141, 360 x 0.5) = 141, x 8/14. */
    assert_close(cs_nccl_model_bandwidth_GBps(m, ar, CS_NCCL_ALGO_RING, CS_PROTO_LL),
                 141.0 * ring_ratio);
    /* Ring/LL128: min(360 x 0.92 = 331.2, 12 x 36.7 = 440.4) = 331.2, x 8/14. */
    assert_close(cs_nccl_model_bandwidth_GBps(m, ar, CS_NCCL_ALGO_RING, CS_PROTO_LL128),
                 331.2 * ring_ratio);
    /* Tree/Simple: min(331.2, 12 x 38.7) = 331.2, x 0.5 = 165.6. */
    assert_close(cs_nccl_model_bandwidth_GBps(m, ar, CS_NCCL_ALGO_TREE, CS_PROTO_SIMPLE), 165.6);
    /* Tree/LL: min(331.2 / 3.8, 141) x 0.5 = 43.5789. */
    assert_close(cs_nccl_model_bandwidth_GBps(m, ar, CS_NCCL_ALGO_TREE, CS_PROTO_LL),
                 331.2 / 3.8 * 0.5);
    /* Tree/LL128 on one node: min(331.2 x 7/9, 12 x 36.7) x 0.5 = 128.8. */
    assert_close(cs_nccl_model_bandwidth_GBps(m, ar, CS_NCCL_ALGO_TREE, CS_PROTO_LL128), 128.8);
    /* NVLS: per channel min(20 x 0.85 x 15/16 x 2 = 31.875, inter 20) = 20; 16 x 20 = 320,
     * x 8/14 = 182.857. NVLS has no LL/LL128. */
    assert_close(cs_nccl_model_bandwidth_GBps(m, ar, CS_NCCL_ALGO_NVLS, CS_PROTO_SIMPLE),
                 320.0 * ring_ratio);
    assert_close(cs_nccl_model_bandwidth_GBps(m, ar, CS_NCCL_ALGO_NVLS, CS_PROTO_LL), 0.0);
    /* NVLS Tree is off on one node; CollNet off without SHARP; tree does no broadcast. */
    assert_close(cs_nccl_model_bandwidth_GBps(m, ar, CS_NCCL_ALGO_NVLS_TREE, CS_PROTO_SIMPLE), 0.0);
    assert_close(cs_nccl_model_bandwidth_GBps(m, ar, CS_NCCL_ALGO_COLLNET_DIRECT, CS_PROTO_SIMPLE),
                 0.0);
    assert_close(
        cs_nccl_model_bandwidth_GBps(m, CS_NCCL_FUNC_BROADCAST, CS_NCCL_ALGO_TREE, CS_PROTO_SIMPLE),
        0.0);
    /* All-gather ring: 360 x 8/7; broadcast ring: 360 x 8/8. */
    assert_close(cs_nccl_model_bandwidth_GBps(m, CS_NCCL_FUNC_ALL_GATHER, CS_NCCL_ALGO_RING,
                                              CS_PROTO_SIMPLE),
                 360.0 * 8.0 / 7.0);
    assert_close(
        cs_nccl_model_bandwidth_GBps(m, CS_NCCL_FUNC_BROADCAST, CS_NCCL_ALGO_RING, CS_PROTO_SIMPLE),
        360.0);
}

static void
test_bandwidth_2_19(void)
{
    CsNcclSystem s = dgx_h100x8();
    g_autoptr(CsNcclModel) m = cs_nccl_model_new(constants("2.19"), &s);
    const CsNcclFunc ar = CS_NCCL_FUNC_ALL_REDUCE;

    /* Ring/LL: min(llMaxBw Hopper-N1 87.7, 360 / 4 = 90) = 87.7, x 8/14. */
    assert_close(cs_nccl_model_bandwidth_GBps(m, ar, CS_NCCL_ALGO_RING, CS_PROTO_LL),
                 87.7 * 8.0 / 14.0);
    /* All-gather ring LL on one node uses 1/3: min(87.7, 120) = 87.7, x 8/7. */
    assert_close(
        cs_nccl_model_bandwidth_GBps(m, CS_NCCL_FUNC_ALL_GATHER, CS_NCCL_ALGO_RING, CS_PROTO_LL),
        87.7 * 8.0 / 7.0);
    /* NVLS: min(20, 20) x 16 = 320, x 5/6. */
    assert_close(cs_nccl_model_bandwidth_GBps(m, ar, CS_NCCL_ALGO_NVLS, CS_PROTO_SIMPLE),
                 320.0 * 5.0 / 6.0);
}

static void
test_bandwidth_tree_pattern(void)
{
    CsNcclSystem s = two_nodes();
    g_autoptr(CsNcclModel) m = cs_nccl_model_new(constants("2.28"), &s);

    /* Bus 8 x 24 = 192; tree: min(192 x 0.92, 8 x perChMaxTreeBw Hopper-N2 41.4) = 176.64,
     * TREE pattern x 0.85 = 150.144, x 0.5 = 75.072. */
    assert_close(cs_nccl_model_bandwidth_GBps(m, CS_NCCL_FUNC_ALL_REDUCE, CS_NCCL_ALGO_TREE,
                                              CS_PROTO_SIMPLE),
                 75.072);
    /* Ring/LL128 with ppn 8: min(192 x 0.92, 8 x 36.7) = 176.64, x 16/30. */
    assert_close(
        cs_nccl_model_bandwidth_GBps(m, CS_NCCL_FUNC_ALL_REDUCE, CS_NCCL_ALGO_RING, CS_PROTO_LL128),
        176.64 * 16.0 / 30.0);
    /* Ring/LL across nodes: min(llMaxBw Intel-N2 39.0, 192 x 0.5) = 39.0, x 16/30. */
    assert_close(
        cs_nccl_model_bandwidth_GBps(m, CS_NCCL_FUNC_ALL_REDUCE, CS_NCCL_ALGO_RING, CS_PROTO_LL),
        39.0 * 16.0 / 30.0);
}

static void
test_pcie_no_ll128(void)
{
    CsNcclSystem s;
    cs_nccl_system_init(&s, 8, 1, CS_NCCL_ARCH_AMPERE);
    s.graphs[CS_NCCL_ALGO_RING] = graph(2, 24.0, CS_NCCL_HW_PCI);
    s.graphs[CS_NCCL_ALGO_TREE] = graph(2, 24.0, CS_NCCL_HW_PCI);
    g_autoptr(CsNcclModel) m = cs_nccl_model_new(constants("2.28"), &s);

    g_test_summary("LL128 needs NVLink inside the node; PCI hops take PCI latencies.");
    assert_close(
        cs_nccl_model_bandwidth_GBps(m, CS_NCCL_FUNC_ALL_REDUCE, CS_NCCL_ALGO_RING, CS_PROTO_LL128),
        0.0);
    /* Ring/Simple over PCI: 8.4 + 14 x 5.7 = 88.2. */
    assert_close(
        cs_nccl_model_latency_us(m, CS_NCCL_FUNC_ALL_REDUCE, CS_NCCL_ALGO_RING, CS_PROTO_SIMPLE),
        88.2);
}

/* ---- Times and NCCL's pick ---- */

static void
test_time_and_pick(void)
{
    CsNcclSystem s = dgx_h100x8();
    g_autoptr(CsNcclModel) m = cs_nccl_model_new(constants("2.28"), &s);
    CsNcclPrediction p;
    const double ring_simple = 360.0 * 8.0 / 14.0;

    g_test_summary("time = lat + nBytes / (1000 x bw); tree bandwidth is scaled by "
                   "treeCorrectionFactor[proto][log2(nBytes / 64)].");
    /* 1 MiB ring/Simple: 56.0 + 1048576 / (1000 x 205.714) = 61.0972. */
    assert_close(
        cs_nccl_model_time_us(m, CS_OP_ALL_REDUCE, CS_NCCL_ALGO_RING, CS_PROTO_SIMPLE, 1048576),
        56.0 + 1048576.0 / (1000.0 * ring_simple));
    /* 1 MiB tree/Simple: log2(16384) = 14, factor 0.5: 64.4 + 1048576 / (1000 x 82.8). */
    assert_close(
        cs_nccl_model_time_us(m, CS_OP_ALL_REDUCE, CS_NCCL_ALGO_TREE, CS_PROTO_SIMPLE, 1048576),
        64.4 + 1048576.0 / (1000.0 * 82.8));
    /* 32 B: 2.28's log2i(0) is -1, no correction: 64.4 + 32 / (1000 x 165.6). */
    assert_close(cs_nccl_model_time_us(m, CS_OP_ALL_REDUCE, CS_NCCL_ALGO_TREE, CS_PROTO_SIMPLE, 32),
                 64.4 + 32.0 / (1000.0 * 165.6));
    /* Unusable entries and collectives NCCL has no model for are -1. */
    assert_close(cs_nccl_model_time_us(m, CS_OP_ALL_REDUCE, CS_NCCL_ALGO_NVLS, CS_PROTO_LL, 64),
                 -1.0);
    assert_close(cs_nccl_model_time_us(m, CS_OP_ALL_TO_ALL, CS_NCCL_ALGO_RING, CS_PROTO_SIMPLE, 64),
                 -1.0);

    /* 1 MiB pick: ring/LL 15.0 + 1048576 / 80571 = 28.01 beats NVLS 25 + 5.73 = 30.73,
     * tree/LL128 31.5 + 1048576 / (128.8 x 0.6 x 1000) = 45.07 and ring/LL128 46.14. */
    g_assert_true(cs_nccl_model_pick(m, CS_OP_ALL_REDUCE, 1048576, &p));
    g_assert_cmpint(p.algo, ==, CS_NCCL_ALGO_RING);
    g_assert_cmpint(p.proto, ==, CS_PROTO_LL);
    g_assert_cmpint(p.n_channels, ==, 12);
    assert_close(p.time_us, 15.0 + 1048576.0 / (1000.0 * 141.0 * 8.0 / 14.0));
    /* 64 MiB: ring/Simple 56 + 326.2 = 382.2 beats NVLS 25 + 367.0 = 392.0. */
    g_assert_true(cs_nccl_model_pick(m, CS_OP_ALL_REDUCE, 64 << 20, &p));
    g_assert_cmpint(p.algo, ==, CS_NCCL_ALGO_RING);
    g_assert_cmpint(p.proto, ==, CS_PROTO_SIMPLE);
    /* 8 B: ring/LL at 15.0001 beats tree/LL at 15.2. */
    g_assert_true(cs_nccl_model_pick(m, CS_OP_ALL_REDUCE, 8, &p));
    g_assert_cmpint(p.algo, ==, CS_NCCL_ALGO_RING);
    g_assert_cmpint(p.proto, ==, CS_PROTO_LL);
    g_assert_false(cs_nccl_model_pick(m, CS_OP_GATHER, 8, &p));
}

static void
test_plateau(void)
{
    CsNcclSystem s = two_nodes();
    g_autoptr(CsNcclModel) m = cs_nccl_model_new(constants("2.28"), &s);
    const double bw = 192.0 * 16.0 / 30.0;

    g_test_summary("Multi-node ring/Simple all-reduce latency x1.4 (Ampere+) once "
                   "nBytes / (nChannels x nRanks) >= 64, i.e. from 8 x 16 x 64 = 8192 B.");
    assert_close(
        cs_nccl_model_time_us(m, CS_OP_ALL_REDUCE, CS_NCCL_ALGO_RING, CS_PROTO_SIMPLE, 8191),
        131.6 + 8191.0 / (1000.0 * bw));
    assert_close(
        cs_nccl_model_time_us(m, CS_OP_ALL_REDUCE, CS_NCCL_ALGO_RING, CS_PROTO_SIMPLE, 8192),
        131.6 * 1.4 + 8192.0 / (1000.0 * bw));
}

static void
test_cost_table(void)
{
    CsNcclSystem s = dgx_h100x8();
    g_autoptr(CsNcclModel) m = cs_nccl_model_new(constants("2.28"), &s);
    float table[CS_NCCL_N_ALGOS][CS_N_PROTOS];

    g_assert_true(cs_nccl_model_cost_table(m, CS_OP_BROADCAST, 4096, table));
    /* Broadcast is ring only: every other algorithm -1. 8.4 + 3.4 + 4096 / (1000 x 360). */
    for (int a = 0; a < CS_NCCL_N_ALGOS; a++)
        for (int p = 0; p < CS_N_PROTOS; p++)
            if (a != CS_NCCL_ALGO_RING)
                g_assert_cmpfloat(table[a][p], ==, -1.0f);
    g_assert_cmpfloat_with_epsilon(table[CS_NCCL_ALGO_RING][CS_PROTO_SIMPLE],
                                   11.8 + 4096.0 / 360000.0, 1e-4);
    g_assert_false(cs_nccl_model_cost_table(m, CS_OP_SCATTER, 4096, table));
    g_assert_cmpfloat(table[CS_NCCL_ALGO_RING][CS_PROTO_SIMPLE], ==, -1.0f);
}

static void
test_predict_forced(void)
{
    CsNcclSystem s = dgx_h100x8();
    g_autoptr(CsNcclModel) m = cs_nccl_model_new(constants("2.28"), &s);
    g_autoptr(GError) error = NULL;
    CsNcclPrediction p;

    /* NCCL_ALGO=Tree NCCL_PROTO=Simple at 1 MiB: the tree/Simple time computed above. */
    g_assert_true(cs_nccl_model_predict(m, CS_OP_ALL_REDUCE, 1048576, CS_NCCL_ALGO_TREE,
                                        CS_PROTO_SIMPLE, &p, &error));
    g_assert_no_error(error);
    assert_close(p.time_us, 64.4 + 1048576.0 / (1000.0 * 82.8));
    assert_close(p.latency_us, 64.4);
    /* Forced tree only: at 1 MiB tree/LL128 31.5 + 13.57 beats tree/Simple 77.06. */
    g_assert_true(
        cs_nccl_model_predict(m, CS_OP_ALL_REDUCE, 1048576, CS_NCCL_ALGO_TREE, -1, &p, &error));
    g_assert_cmpint(p.proto, ==, CS_PROTO_LL128);
    /* NVLS/LL does not exist. */
    g_assert_false(
        cs_nccl_model_predict(m, CS_OP_ALL_REDUCE, 64, CS_NCCL_ALGO_NVLS, CS_PROTO_LL, &p, &error));
    g_assert_error(error, CS_NCCL_ERROR, CS_NCCL_ERROR_UNSUPPORTED);
    g_clear_error(&error);
    g_assert_false(cs_nccl_model_predict(m, CS_OP_ALL_TO_ALL, 64, -1, -1, &p, &error));
    g_assert_error(error, CS_NCCL_ERROR, CS_NCCL_ERROR_UNSUPPORTED);
}

/* ---- Versions and names ---- */

static void
test_versions(void)
{
    g_autoptr(GError) error = NULL;
    const CsNcclConstants *c = NULL;

    g_assert_cmpstr(constants("2.28.9")->version, ==, "2.28");
    g_assert_cmpstr(constants("2.19.3")->version, ==, "2.19");
    g_assert_cmpstr(constants(NULL)->version, ==, "2.28");
    g_assert_null(cs_nccl_constants_lookup("2.2", &error));
    g_assert_error(error, CS_NCCL_ERROR, CS_NCCL_ERROR_VERSION);
    g_assert_nonnull(strstr(error->message, "known: 2.19, 2.28"));
    g_clear_error(&error);

    g_assert_true(cs_nccl_parse_spec("nccl", &c, &error));
    g_assert_cmpstr(c->version, ==, "2.28");
    g_assert_true(cs_nccl_parse_spec("nccl:2.19", &c, &error));
    g_assert_cmpstr(c->version, ==, "2.19");
    g_assert_false(cs_nccl_parse_spec("nccl:", &c, &error));
    g_assert_error(error, CS_NCCL_ERROR, CS_NCCL_ERROR_SPEC);
    g_clear_error(&error);
    g_assert_false(cs_nccl_parse_spec("ncclx", &c, &error));
    g_assert_error(error, CS_NCCL_ERROR, CS_NCCL_ERROR_SPEC);
    g_clear_error(&error);
    g_assert_false(cs_nccl_parse_spec("nccl:3.0", &c, &error));
    g_assert_error(error, CS_NCCL_ERROR, CS_NCCL_ERROR_VERSION);
}

/* NCCL_ALGO lists: the pick among what they leave, in NCCL's order. */
static void
test_pick_among(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTopo) topo = cs_topo_load("dgx-h100x8", &error);
    g_assert_no_error(error);
    g_autoptr(CsNcclModel) m = cs_nccl_model_new_for_topo(topo, 0, "nccl:2.28", &error);
    g_assert_no_error(error);
    const gint64 gib = G_GINT64_CONSTANT(1) << 30;
    CsNcclPrediction all, without, ring_ll;
    /* Without its first choice NCCL takes another, no faster by its own model. */
    g_assert_true(cs_nccl_model_pick(m, CS_OP_ALL_REDUCE, gib, &all));
    g_assert_true(cs_nccl_model_pick_among(m, CS_OP_ALL_REDUCE, gib,
                                           CS_NCCL_ALL_ALGOS & ~(1u << all.algo),
                                           CS_NCCL_ALL_PROTOS, &without));
    g_assert_cmpint(without.algo, !=, all.algo);
    g_assert_cmpfloat(without.time_us, >=, all.time_us);
    g_assert_true(cs_nccl_model_pick_among(m, CS_OP_ALL_REDUCE, gib, 1u << CS_NCCL_ALGO_RING,
                                           1u << CS_PROTO_LL, &ring_ll));
    g_assert_cmpint(ring_ll.algo, ==, CS_NCCL_ALGO_RING);
    g_assert_cmpint(ring_ll.proto, ==, CS_PROTO_LL);
    g_assert_false(
        cs_nccl_model_pick_among(m, CS_OP_ALL_REDUCE, gib, 0, CS_NCCL_ALL_PROTOS, &ring_ll));
    g_assert_false(cs_nccl_model_pick_among(m, CS_OP_ALL_TO_ALL, gib, CS_NCCL_ALL_ALGOS,
                                            CS_NCCL_ALL_PROTOS, &ring_ll));
}

/* A trace's release gets the constants of the nearest known one, by minor release. */
static void
test_versions_nearest(void)
{
    static const struct {
        const char *release;
        const char *want;
    } cases[] = {
        { "2.19.3", "2.19" },          { "2.28.9", "2.28" }, { "2.26.2", "2.28" },
        { "2.23.4", "2.19" },          { "2.24", "2.28" },   { "2.18.1", "2.19" },
        { "2.30.0", "2.28" },          { "3.0", "2.28" },    { "not printed", "2.28" },
        { "2.26.2+cuda12.8", "2.28" },
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++)
        g_assert_cmpstr(cs_nccl_constants_nearest(cases[i].release)->version, ==, cases[i].want);
    g_assert_cmpstr(cs_nccl_constants_nearest(NULL)->version, ==, "2.28");
}

static void
test_names(void)
{
    CsNcclAlgo a;

    g_assert_cmpstr(cs_nccl_algo_name(CS_NCCL_ALGO_NVLS_TREE), ==, "nvls_tree");
    g_assert_cmpstr(cs_nccl_algo_env_name(CS_NCCL_ALGO_NVLS_TREE), ==, "NVLSTree");
    g_assert_true(cs_nccl_algo_from_name("NVLSTree", &a));
    g_assert_cmpint(a, ==, CS_NCCL_ALGO_NVLS_TREE);
    g_assert_true(cs_nccl_algo_from_name("collnet-direct", &a));
    g_assert_cmpint(a, ==, CS_NCCL_ALGO_COLLNET_DIRECT);
    g_assert_false(cs_nccl_algo_from_name("rhd", &a));
    g_assert_true(cs_nccl_algo_from_collsim("nvls_tree", &a));
    g_assert_cmpint(a, ==, CS_NCCL_ALGO_NVLS_TREE);
    g_assert_cmpstr(cs_nccl_algo_collsim_name(a), ==, "nvls_tree");
    g_assert_true(cs_nccl_algo_from_collsim("ring", &a));
    g_assert_cmpint(a, ==, CS_NCCL_ALGO_RING);
    g_assert_false(cs_nccl_algo_from_collsim("mst", &a));
    g_assert_false(cs_nccl_algo_from_collsim("bruck", &a));
    /* CollNet is simulated (collnet_direct.c, collnet_chain.c): NCCL's pick names them. */
    g_assert_cmpstr(cs_nccl_algo_collsim_name(CS_NCCL_ALGO_COLLNET_CHAIN), ==, "collnet_chain");
    g_assert_true(cs_nccl_algo_from_collsim("collnet_direct", &a));
    g_assert_cmpint(a, ==, CS_NCCL_ALGO_COLLNET_DIRECT);
    g_assert_cmpint(cs_nccl_func_from_op(CS_OP_REDUCE_SCATTER), ==, CS_NCCL_FUNC_REDUCE_SCATTER);
    g_assert_cmpint(cs_nccl_func_from_op(CS_OP_ALL_TO_ALL), ==, -1);
    g_assert_cmpstr(cs_nccl_proto_name(CS_PROTO_LL128), ==, "ll128");

    gboolean known = FALSE;
    g_assert_cmpint(cs_nccl_arch_from_model("H100 SXM5 80GB", &known), ==, CS_NCCL_ARCH_HOPPER);
    g_assert_true(known);
    g_assert_cmpint(cs_nccl_arch_from_model("A100-SXM4-80GB", &known), ==, CS_NCCL_ARCH_AMPERE);
    g_assert_cmpint(cs_nccl_arch_from_model("GB200", &known), ==, CS_NCCL_ARCH_BLACKWELL);
    g_assert_cmpint(cs_nccl_arch_from_model("RTX 2080 Ti", &known), ==, CS_NCCL_ARCH_VOLTA);
    cs_nccl_arch_from_model("Epyc 9654", &known);
    g_assert_false(known);
}

/* ---- The emulated search on shipped topologies ---- */

/* GB200 NVL72: one NVLink domain of 72 Blackwell GPUs; NVLS has at most NCCL_MAX_NVLS_ARITY
 * = 32 heads, one channel each. */
static void
test_from_topo_gb200_nvls_heads(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTopo) topo = cs_topo_load("gb200-nvl72", &error);
    CsNcclSystem s;

    g_assert_no_error(error);
    g_assert_true(cs_nccl_system_from_topo(topo, 0, constants("2.28"), &s, &error));
    g_assert_no_error(error);
    g_assert_cmpint(s.n_ranks, ==, 72);
    g_assert_cmpint(s.n_nodes, ==, 1);
    g_assert_cmpint(s.arch, ==, CS_NCCL_ARCH_BLACKWELL);
    g_assert_cmpint(s.graphs[CS_NCCL_ALGO_NVLS].n_channels, ==, 32);
}

/* Two GB200 NVL72 racks over InfiniBand, all 144 GPUs: NCCL (2.21.5 on) fuses each NVLink clique
 * into one topology system (src/graph/topo.cc, ncclTopoGetSystem under comm->MNNVL: ncclTopoFuseXml
 * over the clique's ranks) and counts nodes by their rings' first rank (init.cc "Determine
 * nNodes"), so a rack is one node of 2, with the NICs of all its trays, not 32 trays of 4 NICs
 * each. */
static void
test_from_topo_gb200_racks_are_nodes(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTopo) topo = cs_topo_load("gb200-nvl72-2rack-ib", &error);
    CsNcclSystem s;

    g_assert_no_error(error);
    g_assert_true(cs_nccl_system_from_topo(topo, 0, constants("2.28"), &s, &error));
    g_assert_no_error(error);
    g_assert_cmpint(s.n_ranks, ==, cs_topo_n_ranks(topo));
    g_assert_cmpint(s.n_nodes, ==, 2);
    g_assert_cmpint(s.n_nics, ==, cs_topo_n_ranks(topo) / 2);
    /* The racks' NVLink switches belong to no tray, and NCCL finds them (tuning.cc). */
    g_assert_true(s.nvswitch);
    /* Before 2.21.5 a clique that does not hold every rank is no node: the trays are. */
    g_assert_true(cs_nccl_system_from_topo(topo, 0, constants("2.19"), &s, &error));
    g_assert_cmpint(s.n_nodes, ==, cs_topo_n_ranks(topo) / 4);
    /* One rack is one node under either. */
    g_assert_true(cs_nccl_system_from_topo(topo, 72, constants("2.19"), &s, &error));
    g_assert_cmpint(s.n_nodes, ==, 1);
    g_assert_cmpint(cs_nccl_nodes(topo, 72, NULL, NULL, NULL), ==, 1);
    const int two_trays_two_racks[] = { 0, 4, 72, 76 };
    g_assert_cmpint(cs_nccl_nodes(topo, 4, two_trays_two_racks, NULL, NULL), ==, 2);
}

/* What NCCL 2.2x runs for all-reduce on one 8 x H100 node, as reported in NVIDIA/nccl-tests
 * issue 309 (2025-05-23, from NCCL_DEBUG_SUBSYS=TUNING): "8B~1MB: uses Algo RING proto LL;
 * 2MB~16GB uses Algo NVLS proto SIMPLE". NCCL's model here picks the same at every size of an
 * nccl-tests sweep, which depends on the NVLS graph above (8 heads x 40/60 GB/s). */
static void
test_pick_dgx_h100x8_sweep(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTopo) topo = cs_topo_load("dgx-h100x8", &error);
    g_assert_no_error(error);
    g_autoptr(CsNcclModel) m = cs_nccl_model_new_for_topo(topo, 0, "nccl:2.28", &error);
    g_assert_no_error(error);
    for (gint64 size = 8; size <= (G_GINT64_CONSTANT(16) << 30); size *= 2) {
        CsNcclPrediction p;
        g_assert_true(cs_nccl_model_pick(m, CS_OP_ALL_REDUCE, size, &p));
        const gboolean small = size <= (G_GINT64_CONSTANT(1) << 20);
        g_assert_cmpint(p.algo, ==, small ? CS_NCCL_ALGO_RING : CS_NCCL_ALGO_NVLS);
        g_assert_cmpint(p.proto, ==, small ? CS_PROTO_LL : CS_PROTO_SIMPLE);
    }
}

static void
test_from_topo_dgx_h100x8(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTopo) topo = cs_topo_load("dgx-h100x8", &error);
    CsNcclSystem s;

    g_assert_no_error(error);
    g_test_summary("DGX H100: 18 NVLinks x 20.6 GB/s = 370.8 GB/s per GPU. sm90 speeds start "
                   "at 60 GB/s: floor(370.8 / 60) = 6 channels, duplicated to 12 x 30 GB/s "
                   "(bw >= 50). NVLS: one channel per head, 8 heads, at the first speed <= "
                   "370.8 / 8 = 46.4: 40 intra, the starting 60 inter (NCCL 2.19.4 logs "
                   "'Pattern 5, nChannels 8, bw 40.000000/60.000000', NVIDIA/nccl issue 1197).");
    g_assert_true(cs_nccl_system_from_topo(topo, 0, constants("2.28"), &s, &error));
    g_assert_no_error(error);
    g_assert_cmpint(s.n_ranks, ==, 8);
    g_assert_cmpint(s.n_nodes, ==, 1);
    g_assert_cmpint(s.arch, ==, CS_NCCL_ARCH_HOPPER);
    g_assert_false(s.arch_guessed);
    g_assert_cmpint(s.graphs[CS_NCCL_ALGO_RING].n_channels, ==, 12);
    assert_close(s.graphs[CS_NCCL_ALGO_RING].bw_intra_GBps, 30.0);
    g_assert_cmpint(s.graphs[CS_NCCL_ALGO_RING].hw_intra, ==, CS_NCCL_HW_NVLINK);
    g_assert_true(s.graphs[CS_NCCL_ALGO_RING].ll128);
    g_assert_cmpint(s.graphs[CS_NCCL_ALGO_NVLS].n_channels, ==, 8);
    assert_close(s.graphs[CS_NCCL_ALGO_NVLS].bw_intra_GBps, 40.0);
    assert_close(s.graphs[CS_NCCL_ALGO_NVLS].bw_inter_GBps, 60.0);
    g_assert_false(s.collnet);

    /* Four of the eight GPUs: same per-GPU bandwidth, same channels. */
    g_assert_true(cs_nccl_system_from_topo(topo, 4, constants("2.28"), &s, &error));
    g_assert_cmpint(s.n_ranks, ==, 4);
    g_assert_cmpint(s.graphs[CS_NCCL_ALGO_RING].n_channels, ==, 12);
    g_assert_false(cs_nccl_system_from_topo(topo, 9, constants("2.28"), &s, &error));
    g_assert_error(error, CS_NCCL_ERROR, CS_NCCL_ERROR_UNSUPPORTED);
}

static void
test_from_topo_one_rank(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTopo) topo = cs_topo_load("dgx-h100x8", &error);
    CsNcclSystem s;

    g_assert_no_error(error);
    g_test_summary("One GPU, no network: NCCL 2.28.9 search.cc ncclTopoSearchInit sets maxBw = "
                   "totalBw = LOC_BW = 5000 GB/s. The first sm90 speed <= 5000 is 60 GB/s and "
                   "5000 / 60 = 83 channels are capped at MAXCHANNELS/2 = 32; duplication "
                   "keeps 32 (min(64, 32)) at 60 GB/s. Without a figure for the path (an "
                   "unbounded double converted to int, undefined) it was 1 channel on x86.");
    g_assert_true(cs_nccl_system_from_topo(topo, 1, constants("2.28"), &s, &error));
    g_assert_no_error(error);
    g_assert_cmpint(s.n_ranks, ==, 1);
    g_assert_cmpint(s.n_nodes, ==, 1);
    g_assert_cmpint(s.graphs[CS_NCCL_ALGO_RING].n_channels, ==, 32);
    assert_close(s.graphs[CS_NCCL_ALGO_RING].bw_intra_GBps, 60.0);
}

static void
test_from_topo_two_nodes(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTopo) topo = cs_topo_load("hgx-h100x8-2n", &error);
    CsNcclSystem s;

    g_assert_no_error(error);
    g_test_summary("2 nodes, 8 x 400 Gb/s NICs (50 GB/s) each: sm90 inter speed 48 GB/s fits "
                   "one NIC once (8 channels) and the GPU's 370.8 GB/s 7 times: 7 channels x 48, "
                   "not duplicated (Hopper, 25 <= 48 < 50, more than 4 channels).");
    g_assert_true(cs_nccl_system_from_topo(topo, 0, constants("2.28"), &s, &error));
    g_assert_no_error(error);
    g_assert_cmpint(s.n_ranks, ==, 16);
    g_assert_cmpint(s.n_nodes, ==, 2);
    g_assert_cmpint(s.n_nics, ==, 8);
    g_assert_cmpint(s.graphs[CS_NCCL_ALGO_RING].n_channels, ==, 7);
    assert_close(s.graphs[CS_NCCL_ALGO_RING].bw_inter_GBps, 48.0);
    g_assert_true(s.graphs[CS_NCCL_ALGO_TREE].tree_pattern);

    /* The model on it: ring/Simple all-reduce latency 8.4 + 28 x 3.4 + 2 x 14 = 131.6 us. */
    g_autoptr(CsNcclModel) m = cs_nccl_model_new_for_topo(topo, 0, "nccl:2.28", &error);
    g_assert_no_error(error);
    assert_close(
        cs_nccl_model_latency_us(m, CS_NCCL_FUNC_ALL_REDUCE, CS_NCCL_ALGO_RING, CS_PROTO_SIMPLE),
        131.6);
    /* NVLS across nodes needs CollNet: off; NVLS Tree on. */
    assert_close(cs_nccl_model_bandwidth_GBps(m, CS_NCCL_FUNC_ALL_REDUCE, CS_NCCL_ALGO_NVLS,
                                              CS_PROTO_SIMPLE),
                 0.0);
    g_assert_cmpfloat(cs_nccl_model_bandwidth_GBps(m, CS_NCCL_FUNC_ALL_REDUCE,
                                                   CS_NCCL_ALGO_NVLS_TREE, CS_PROTO_SIMPLE),
                      >, 0.0);
}

/* The tree graph's second search pass (search.cc "increase bwIntra for trees (2 nodes or
 * collnet)", NCCL 2.19.3-2.28.9) on 2 x p4de: 4 EFA NICs of 12.5 GB/s, Ampere. The ring and the
 * tree find 4 channels x 12 GB/s (generic inter array); the tree's bwIntra then climbs 15, 18,
 * 20, 24 while below 2 x 12, and 2-node tuning reads bwIntra: tree/Simple all-reduce gets
 * 4 x 24 x 0.92 x 0.5 = 44.2 GB/s against ring/Simple's 4 x 12 x 16/30 = 25.6, so NCCL's model
 * runs the tree at 2 GiB (the trace's 78 GB/s busbw is above the ring's 50 GB/s NIC bound). */
static void
test_from_topo_tree_intra_raised(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTopo) topo = cs_topo_load("aws-p4de-a100x8-2n-efa", &error);
    CsNcclSystem s;

    g_assert_no_error(error);
    g_assert_true(cs_nccl_system_from_topo(topo, 0, constants("2.19"), &s, &error));
    g_assert_cmpint(s.graphs[CS_NCCL_ALGO_RING].n_channels, ==, 4);
    assert_close(s.graphs[CS_NCCL_ALGO_RING].bw_intra_GBps, 12.0);
    g_assert_cmpint(s.graphs[CS_NCCL_ALGO_TREE].n_channels, ==, 4);
    assert_close(s.graphs[CS_NCCL_ALGO_TREE].bw_inter_GBps, 12.0);
    assert_close(s.graphs[CS_NCCL_ALGO_TREE].bw_intra_GBps, 24.0);

    g_autoptr(CsNcclModel) m = cs_nccl_model_new_for_topo(topo, 0, "nccl:2.19", &error);
    g_assert_no_error(error);
    assert_close(cs_nccl_model_bandwidth_GBps(m, CS_NCCL_FUNC_ALL_REDUCE, CS_NCCL_ALGO_TREE,
                                              CS_PROTO_SIMPLE),
                 4 * 24.0 * 0.92 * 0.5);
    CsNcclPrediction p;
    g_assert_true(cs_nccl_model_pick(m, CS_OP_ALL_REDUCE, G_GINT64_CONSTANT(2) << 30, &p));
    g_assert_cmpint(p.algo, ==, CS_NCCL_ALGO_TREE);

    /* One GPU per node, one 100 Gb/s NIC each: no GPU-to-GPU path bounds the raise, so the
     * tree ends at 24/12 beside a 12/12 ring, as NCCL 2.28.9 logs it on two one-GPU nodes
     * whose GPU reaches its NIC at 12 GB/s ("Pattern 4, nChannels 1, bw 12.000000/12.000000",
     * "Pattern 3, nChannels 1, bw 24.000000/12.000000"; NVIDIA developer forum thread
     * 366266, dual DGX Spark). */
    g_autoptr(CsTopo) pair = cs_topo_load_data(
        "{\"name\": \"h100-1pn-2\", \"nodes\": 2, \"node\": {\"gpu\": {\"model\": \"H100 SXM5 "
        "80GB\", \"launch\": \"4.5 us\", \"step_overhead\": \"0.2 us\", \"reduce_bandwidth\": "
        "\"1116.7 GB/s\", \"copy_bandwidth\": \"1675 GB/s\"}, \"devices\": [{\"name\": "
        "\"gpu0\", \"kind\": \"gpu\"}], \"links\": []}, \"network\": {\"kind\": \"roce\", "
        "\"nics_per_node\": 1, \"nic_bandwidth\": \"100 Gb/s\", \"nic_alpha\": \"1 us\", "
        "\"switch_alpha\": \"0.5 us\", \"nic_link\": {\"kind\": \"pcie\", \"bandwidth\": "
        "\"63 GB/s\", \"alpha\": \"0.2 us\"}}}",
        "inline", &error);
    g_assert_no_error(error);
    g_assert_true(cs_nccl_system_from_topo(pair, 0, constants("2.28"), &s, &error));
    g_assert_cmpint(s.graphs[CS_NCCL_ALGO_RING].n_channels, ==, 1);
    assert_close(s.graphs[CS_NCCL_ALGO_RING].bw_intra_GBps, 12.0);
    g_assert_cmpint(s.graphs[CS_NCCL_ALGO_TREE].n_channels, ==, 1);
    assert_close(s.graphs[CS_NCCL_ALGO_TREE].bw_intra_GBps, 24.0);
    assert_close(s.graphs[CS_NCCL_ALGO_TREE].bw_inter_GBps, 12.0);

    /* CollNet graphs take the same pass (init.cc: TREE and COLLNET_DIRECT patterns): SHARP
     * over 8 NICs of 100 Gb/s, one channel per NIC at 12 GB/s, raised to 24 (8 x 24 <=
     * 370.8). At 400 Gb/s the search starts at the array's top, 48, and nothing is raised. */
    char *slow[] = { "network.nic_bandwidth=100 Gb/s", NULL };
    g_autoptr(CsTopo) sharp = cs_topo_load_edited("hgx-h100x8-2n-sharp", slow, &error);
    g_assert_no_error(error);
    g_assert_true(cs_nccl_system_from_topo(sharp, 0, constants("2.28"), &s, &error));
    g_assert_true(s.collnet);
    assert_close(s.graphs[CS_NCCL_ALGO_COLLNET_CHAIN].bw_inter_GBps, 12.0);
    assert_close(s.graphs[CS_NCCL_ALGO_COLLNET_CHAIN].bw_intra_GBps, 24.0);
    assert_close(s.graphs[CS_NCCL_ALGO_COLLNET_DIRECT].bw_intra_GBps, 24.0);
    g_autoptr(CsTopo) fast = cs_topo_load("hgx-h100x8-2n-sharp", &error);
    g_assert_no_error(error);
    g_assert_true(cs_nccl_system_from_topo(fast, 0, constants("2.28"), &s, &error));
    assert_close(s.graphs[CS_NCCL_ALGO_COLLNET_CHAIN].bw_intra_GBps, 48.0);

    /* One node: the ring's channels already fill the GPU, so nothing is raised (DGX H100:
     * 12 x 30 GB/s; 12 x 40 > 370.8). */
    g_autoptr(CsTopo) one = cs_topo_load("dgx-h100x8", &error);
    g_assert_no_error(error);
    g_assert_true(cs_nccl_system_from_topo(one, 0, constants("2.28"), &s, &error));
    assert_close(s.graphs[CS_NCCL_ALGO_TREE].bw_intra_GBps, 30.0);
}

/* NCCL_ALGO / NCCL_PROTO values in NCCL's spellings; names NCCL would skip are errors. */
static void
test_env_list(void)
{
    static const struct {
        const char *value;
        gboolean is_proto;
        const char *want; /* NULL: an error containing @error */
        const char *error;
    } cases[] = {
        { "ring", FALSE, "Ring", NULL },
        { "nvls_tree,TREE", FALSE, "NVLSTree,Tree", NULL },
        { "^nvls-tree", FALSE, "^NVLSTree", NULL },
        { "ring,,tree,", FALSE, "Ring,Tree", NULL },
        { "AllReduce:tree,ring;Broadcast:ring", FALSE, "allreduce:Tree,Ring;broadcast:Ring", NULL },
        { "allgather:^nvls", FALSE, "allgather:^NVLS", NULL },
        { "collnet_direct,PAT", FALSE, "CollNetDirect,PAT", NULL },
        { "ll128,SIMPLE", TRUE, "LL128,Simple", NULL },
        { "Bogus", FALSE, NULL, "\"Bogus\" is not an NCCL algorithm" },
        { "ring;tree", FALSE, NULL, "\"ring\" in \"ring;tree\" names no collective" },
        { "allreduce:ring;tree", FALSE, NULL, "\"tree\" in" },
        { "all_reduce:ring", FALSE, NULL, "\"all_reduce\" in \"all_reduce:ring\" is not a" },
        { "alltoall:ring", FALSE, NULL, "is not a collective NCCL names" },
        { "", FALSE, NULL, "empty" },
        { "^", FALSE, NULL, "no algorithm in \"^\"" },
        { "LL129", TRUE, NULL, "\"LL129\" is not an NCCL protocol (LL, LL128, Simple)" },
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autoptr(GError) error = NULL;
        g_autofree char *got = cs_nccl_env_list(cases[i].value, cases[i].is_proto, &error);
        if (cases[i].want != NULL) {
            g_assert_no_error(error);
            g_assert_cmpstr(got, ==, cases[i].want);
        }
        else {
            g_assert_null(got);
            g_assert_error(error, CS_NCCL_ERROR, CS_NCCL_ERROR_UNSUPPORTED);
            if (strstr(error->message, cases[i].error) == NULL)
                g_error("%s: \"%s\" lacks \"%s\"", cases[i].value, error->message, cases[i].error);
        }
    }
}

/* ---- RCCL's own model ---- */

static const CsNcclConstants *
rccl_constants(const char *version)
{
    g_autoptr(GError) error = NULL;
    const CsNcclConstants *c = cs_rccl_constants_lookup(version, &error);
    g_assert_no_error(error);
    g_assert_nonnull(c);
    return c;
}

/* A hand-built RCCL communicator: ring and tree graphs from a machine model's rings, whose bus
 * bandwidth nChannels x bw is the GPU's totalBw (rome_models.cc parseGraph: bwIntra = bwInter =
 * totalBw / nChannels): 7 xGMI links x 48 GB/s = 336 GB/s. No network latency from the graph,
 * an Intel-class host (getNetOverhead 1 us). */
static CsNcclSystem
rccl_mesh(int ranks, int nodes, CsNcclAmdArch arch, int tuning)
{
    CsNcclSystem s;
    cs_nccl_system_init(&s, ranks, nodes, CS_NCCL_ARCH_HOPPER);
    s.amd_arch = arch;
    s.rccl_tuning = tuning;
    s.graphs[CS_NCCL_ALGO_RING] = graph(1, 336.0, CS_NCCL_HW_NVLINK);
    s.graphs[CS_NCCL_ALGO_TREE] = graph(1, 336.0, CS_NCCL_HW_NVLINK);
    return s;
}

static void
test_rccl_mi300x_one_node(void)
{
    g_test_summary(
        "8 x MI300X (gfx942), one node, all-reduce, RCCL 2.26 (ROCm/rccl 9e22c79d) "
        "tuning_model_5, baseLat {12, 12, 17}. nsteps 14, no network step. Ring/LL: bus 336 x "
        "bwRatio 0.08 = 26.88, x 8/14 = 15.36 GB/s; lat 12 + 14 x 0.8 = 23.2. Ring/Simple: "
        "336 x 1.0 x 8/14 = 192; 17 + 14 x 2.1 = 46.4. Tree/LL: 336 x 0.06 x 0.5 = 10.08; "
        "12 + 2 x (7 x 0.9) = 24.6. Tree/Simple: skipped on one gfx942 node (bandwidth 0); "
        "LL128: off (no ll128Enabled). One node: no ring correction; tree/LL correction at "
        "64 KiB (log2i(1024) = 10) 1.0. 64 KiB: ring/LL 23.2 + 65536 / 15360 = 27.4667 beats "
        "tree/LL 31.10 and ring/Simple 46.74. 256 KiB: ring/LL 40.2667 < ring/Simple 47.765; "
        "512 KiB: ring/Simple 46.4 + 524288 / 192000 = 49.1307 < ring/LL 57.33 (the crossover "
        "is 23.2 / (1/15360 - 1/192000) = 387339 B). RCCL 2.21.5's model 5 gives the same.");
    const int ar = CS_NCCL_FUNC_ALL_REDUCE;
    const char *versions[] = { "2.26", "2.21" };
    for (gsize v = 0; v < G_N_ELEMENTS(versions); v++) {
        const CsNcclSystem s = rccl_mesh(8, 1, CS_NCCL_AMD_GFX942, 5);
        g_autoptr(CsNcclModel) m = cs_nccl_model_new(rccl_constants(versions[v]), &s);
        assert_close(cs_nccl_model_bandwidth_GBps(m, ar, CS_NCCL_ALGO_RING, CS_PROTO_LL), 15.36);
        assert_close(cs_nccl_model_latency_us(m, ar, CS_NCCL_ALGO_RING, CS_PROTO_LL), 23.2);
        assert_close(cs_nccl_model_bandwidth_GBps(m, ar, CS_NCCL_ALGO_RING, CS_PROTO_SIMPLE),
                     192.0);
        assert_close(cs_nccl_model_latency_us(m, ar, CS_NCCL_ALGO_RING, CS_PROTO_SIMPLE), 46.4);
        assert_close(cs_nccl_model_bandwidth_GBps(m, ar, CS_NCCL_ALGO_TREE, CS_PROTO_LL), 10.08);
        assert_close(cs_nccl_model_latency_us(m, ar, CS_NCCL_ALGO_TREE, CS_PROTO_LL), 24.6);
        assert_close(cs_nccl_model_bandwidth_GBps(m, ar, CS_NCCL_ALGO_TREE, CS_PROTO_SIMPLE), 0.0);
        assert_close(cs_nccl_model_bandwidth_GBps(m, ar, CS_NCCL_ALGO_RING, CS_PROTO_LL128), 0.0);
        assert_close(
            cs_nccl_model_time_us(m, CS_OP_ALL_REDUCE, CS_NCCL_ALGO_TREE, CS_PROTO_LL, 65536),
            24.6 + 65536.0 / 10080.0);

        const struct {
            gint64 bytes;
            CsNcclAlgo algo;
            CsProto proto;
            double time_us;
        } cases[] = {
            { 65536, CS_NCCL_ALGO_RING, CS_PROTO_LL, 23.2 + 65536.0 / 15360.0 },
            { 262144, CS_NCCL_ALGO_RING, CS_PROTO_LL, 23.2 + 262144.0 / 15360.0 },
            { 524288, CS_NCCL_ALGO_RING, CS_PROTO_SIMPLE, 46.4 + 524288.0 / 192000.0 },
        };
        for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
            CsNcclPrediction p;
            g_assert_true(cs_nccl_model_pick(m, CS_OP_ALL_REDUCE, cases[i].bytes, &p));
            g_assert_cmpint(p.algo, ==, cases[i].algo);
            g_assert_cmpint(p.proto, ==, cases[i].proto);
            assert_close(p.time_us, cases[i].time_us);
        }
    }
}

static void
test_rccl_gfx950_rules(void)
{
    g_test_summary("Tree/Simple on one node: RCCL 2.26 skips it on gfx942 and gfx950, 2.21.5 "
                   "only on \"gfx94*\" (IsArchMatch is a prefix test), so a gfx950 node keeps it "
                   "there: 336 x bwRatio 0.11 x 0.5 = 18.48 GB/s, 17 + 2 x 7 x 2.3 = 49.2 us.");
    const int ar = CS_NCCL_FUNC_ALL_REDUCE;
    const CsNcclSystem s26 = rccl_mesh(8, 1, CS_NCCL_AMD_GFX950, 6);
    g_autoptr(CsNcclModel) m26 = cs_nccl_model_new(rccl_constants("2.26"), &s26);
    assert_close(cs_nccl_model_bandwidth_GBps(m26, ar, CS_NCCL_ALGO_TREE, CS_PROTO_SIMPLE), 0.0);
    const CsNcclSystem s21 = rccl_mesh(8, 1, CS_NCCL_AMD_GFX950, 5);
    g_autoptr(CsNcclModel) m21 = cs_nccl_model_new(rccl_constants("2.21.5"), &s21);
    assert_close(cs_nccl_model_bandwidth_GBps(m21, ar, CS_NCCL_ALGO_TREE, CS_PROTO_SIMPLE), 18.48);
    assert_close(cs_nccl_model_latency_us(m21, ar, CS_NCCL_ALGO_TREE, CS_PROTO_SIMPLE), 49.2);
}

static void
test_rccl_two_nodes_protocol(void)
{
    g_test_summary(
        "2 nodes x 8 x MI355X (gfx950), all-reduce, RCCL 2.26 tuning_model_6, nsteps 30, 2 "
        "network steps, bwRatio row 0 (2 nodes). Ring/LL: 336 x 0.08 x 16/30 = 14.336 GB/s, "
        "12 + 28 x max(0.8, 1) + 2 x 9.5 = 59. Ring/Simple: 179.2, 17 + 28 x max(2.1, 3) + 2 x 320 "
        "= 741. Tree/LL: 336 x 0.06 x 0.5 = 10.08, 12 + 2 x (7 x 0.9 + 10.5) = 45.6. "
        "Tree/Simple: 336 x 0.11 x 0.5 = 18.48, 17 + 2 x (7 x 2.3 + 25) = 99.2. At 1 MiB "
        "(log2i(16384) = 14; tree corrections LL 1.0, Simple 0.1; ring LL 0.4, Simple 0.1) the "
        "model's minimum is tree/LL, 45.6 + 1048576 / 10080 = 149.63, but rccl_wrap.cc "
        "rcclUpdateCollectiveProtocol makes it Simple (llProtoRanges all-reduce LL (0, 131071]): "
        "tree/Simple 99.2 + 1048576 / 1848 = 666.61. At 131071 B (log2i 10) tree/LL stays LL "
        "(45.6 + 131071 / 10080); at 131072 B (log2i 11: tree/LL x 0.6 = 67.27 beats ring/LL "
        "68.14) tree/Simple, 99.2 + 131072 / 1848. With NCCL_PROTO=LL nothing is overridden.");
    const CsNcclSystem s = rccl_mesh(16, 2, CS_NCCL_AMD_GFX950, 6);
    g_autoptr(CsNcclModel) m = cs_nccl_model_new(rccl_constants("2.26"), &s);
    const int ar = CS_NCCL_FUNC_ALL_REDUCE;
    assert_close(cs_nccl_model_bandwidth_GBps(m, ar, CS_NCCL_ALGO_RING, CS_PROTO_LL), 14.336);
    assert_close(cs_nccl_model_latency_us(m, ar, CS_NCCL_ALGO_RING, CS_PROTO_LL), 59.0);
    assert_close(cs_nccl_model_bandwidth_GBps(m, ar, CS_NCCL_ALGO_RING, CS_PROTO_SIMPLE), 179.2);
    assert_close(cs_nccl_model_latency_us(m, ar, CS_NCCL_ALGO_RING, CS_PROTO_SIMPLE), 741.0);
    assert_close(cs_nccl_model_bandwidth_GBps(m, ar, CS_NCCL_ALGO_TREE, CS_PROTO_LL), 10.08);
    assert_close(cs_nccl_model_latency_us(m, ar, CS_NCCL_ALGO_TREE, CS_PROTO_LL), 45.6);
    assert_close(cs_nccl_model_bandwidth_GBps(m, ar, CS_NCCL_ALGO_TREE, CS_PROTO_SIMPLE), 18.48);
    assert_close(cs_nccl_model_latency_us(m, ar, CS_NCCL_ALGO_TREE, CS_PROTO_SIMPLE), 99.2);
    assert_close(
        cs_nccl_model_time_us(m, CS_OP_ALL_REDUCE, CS_NCCL_ALGO_TREE, CS_PROTO_LL, 1048576),
        45.6 + 1048576.0 / 10080.0);

    const struct {
        gint64 bytes;
        CsProto proto;
        double time_us;
    } cases[] = {
        { 1048576, CS_PROTO_SIMPLE, 99.2 + 1048576.0 / 1848.0 },
        { 131071, CS_PROTO_LL, 45.6 + 131071.0 / 10080.0 },
        { 131072, CS_PROTO_SIMPLE, 99.2 + 131072.0 / 1848.0 },
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        CsNcclPrediction p;
        g_assert_true(cs_nccl_model_pick(m, CS_OP_ALL_REDUCE, cases[i].bytes, &p));
        g_assert_cmpint(p.algo, ==, CS_NCCL_ALGO_TREE);
        g_assert_cmpint(p.proto, ==, cases[i].proto);
        assert_close(p.time_us, cases[i].time_us);
    }
    CsNcclPrediction ll;
    g_assert_true(cs_nccl_model_pick_among(m, CS_OP_ALL_REDUCE, 1048576, CS_NCCL_ALL_ALGOS,
                                           1u << CS_PROTO_LL, &ll));
    g_assert_cmpint(ll.algo, ==, CS_NCCL_ALGO_TREE);
    g_assert_cmpint(ll.proto, ==, CS_PROTO_LL);
}

static void
test_rccl_from_topo(void)
{
    g_test_summary(
        "An 8-GPU node on a full xGMI mesh matches RCCL's machine models rome_model_79 (no "
        "NICs) or _81 (8 NICs), \"tuning=5\"; 2.26 sets tuning 6 on gfx950. The bus "
        "bandwidth is totalBw: 7 links x 48 GB/s (gfx942; gfx950 from 2.26, GFX95X_XGMI_WIDTH), "
        "x 24 (VEGA_XGMI_WIDTH) for gfx950 under 2.21.5. An NVIDIA GPU under RCCL's model is "
        "a guess.");
    const struct {
        const char *topo;
        const char *version;
        CsNcclAmdArch arch;
        int nodes;
        int tuning;
        double bus_GBps;
    } cases[] = {
        { "mi300x-x8-xgmi", "2.26", CS_NCCL_AMD_GFX942, 1, 5, 336.0 },
        { "mi300x-x8-xgmi", "2.21", CS_NCCL_AMD_GFX942, 1, 5, 336.0 },
        { "mi355x-x8-xgmi", "2.26", CS_NCCL_AMD_GFX950, 1, 6, 336.0 },
        { "mi355x-x8-2n-pollara", "2.26", CS_NCCL_AMD_GFX950, 2, 6, 336.0 },
        { "mi355x-x8-2n-pollara", "2.21", CS_NCCL_AMD_GFX950, 2, 5, 168.0 },
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autoptr(GError) error = NULL;
        g_autoptr(CsTopo) topo = cs_topo_load(cases[i].topo, &error);
        g_assert_no_error(error);
        CsNcclSystem s;
        g_assert_true(
            cs_nccl_system_from_topo(topo, 0, rccl_constants(cases[i].version), &s, &error));
        g_assert_no_error(error);
        g_assert_cmpint(s.amd_arch, ==, cases[i].arch);
        g_assert_false(s.arch_guessed);
        g_assert_cmpint(s.n_nodes, ==, cases[i].nodes);
        g_assert_cmpint(s.rccl_tuning, ==, cases[i].tuning);
        for (int a = CS_NCCL_ALGO_TREE; a <= CS_NCCL_ALGO_RING; a++)
            assert_close(s.graphs[a].n_channels * s.graphs[a].bw_intra_GBps, cases[i].bus_GBps);
    }
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTopo) nvidia = cs_topo_load("dgx-h100x8", &error);
    g_assert_no_error(error);
    CsNcclSystem s;
    g_assert_true(cs_nccl_system_from_topo(nvidia, 0, rccl_constants(NULL), &s, &error));
    g_assert_true(s.arch_guessed);
    g_assert_true(cs_nccl_system_from_topo(nvidia, 0, constants(NULL), &s, &error));
    g_assert_false(s.arch_guessed);
}

static void
test_rccl_versions(void)
{
    const CsNcclConstants *c = NULL;
    g_autoptr(GError) error = NULL;

    g_assert_true(cs_nccl_parse_spec("rccl", &c, &error));
    g_assert_cmpstr(c->library, ==, "RCCL");
    g_assert_cmpstr(c->version, ==, "2.26");
    g_assert_true(cs_nccl_parse_spec("RCCL:2.21.5", &c, &error));
    g_assert_cmpstr(c->version, ==, "2.21.5");
    g_assert_false(cs_nccl_parse_spec("rccl:2.9", &c, &error));
    g_assert_error(error, CS_NCCL_ERROR, CS_NCCL_ERROR_VERSION);
    g_clear_error(&error);
    g_assert_false(cs_nccl_parse_spec("rccl:", &c, &error));
    g_assert_error(error, CS_NCCL_ERROR, CS_NCCL_ERROR_SPEC);
    g_assert_cmpstr(cs_rccl_constants_nearest("2.26.6")->version, ==, "2.26");
    g_assert_cmpstr(cs_rccl_constants_nearest("2.27.7")->version, ==, "2.26");
    g_assert_cmpstr(cs_rccl_constants_nearest("2.22.3")->version, ==, "2.21.5");
    g_assert_cmpstr(cs_rccl_constants_nearest(NULL)->version, ==, "2.26");
    g_assert_cmpstr(cs_nccl_constants_nearest(NULL)->library, ==, "NCCL");
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/nccl/env-list", test_env_list);

    g_test_add_func("/nccl-model/latency/2.28-nvswitch", test_latency_2_28_nvswitch);
    g_test_add_func("/nccl-model/latency/broadcast-channels-differ",
                    test_latency_broadcast_channels_differ);
    g_test_add_func("/nccl-model/latency/2.19-nvswitch", test_latency_2_19_nvswitch);
    g_test_add_func("/nccl-model/latency/two-nodes", test_latency_two_nodes);
    g_test_add_func("/nccl-model/bandwidth/2.28", test_bandwidth_2_28);
    g_test_add_func("/nccl-model/bandwidth/2.19", test_bandwidth_2_19);
    g_test_add_func("/nccl-model/bandwidth/tree-pattern", test_bandwidth_tree_pattern);
    g_test_add_func("/nccl-model/bandwidth/pcie-no-ll128", test_pcie_no_ll128);
    g_test_add_func("/nccl-model/from-topo/one-rank", test_from_topo_one_rank);
    g_test_add_func("/nccl-model/time/pick", test_time_and_pick);
    g_test_add_func("/nccl-model/time/plateau", test_plateau);
    g_test_add_func("/nccl-model/time/cost-table", test_cost_table);
    g_test_add_func("/nccl-model/time/forced", test_predict_forced);
    g_test_add_func("/nccl-model/constants/versions", test_versions);
    g_test_add_func("/nccl-model/constants/nearest", test_versions_nearest);
    g_test_add_func("/nccl-model/time/pick-among", test_pick_among);
    g_test_add_func("/nccl-model/constants/names", test_names);
    g_test_add_func("/nccl-model/topo/dgx-h100x8", test_from_topo_dgx_h100x8);
    g_test_add_func("/nccl-model/topo/gb200-nvls-heads", test_from_topo_gb200_nvls_heads);
    g_test_add_func("/nccl-model/topo/gb200-racks-are-nodes", test_from_topo_gb200_racks_are_nodes);
    g_test_add_func("/nccl-model/time/pick-dgx-h100x8-sweep", test_pick_dgx_h100x8_sweep);
    g_test_add_func("/nccl-model/topo/hgx-h100x8-2n", test_from_topo_two_nodes);
    g_test_add_func("/nccl-model/topo/tree-intra-raised", test_from_topo_tree_intra_raised);
    g_test_add_func("/nccl-model/rccl/mi300x-one-node", test_rccl_mi300x_one_node);
    g_test_add_func("/nccl-model/rccl/gfx950-rules", test_rccl_gfx950_rules);
    g_test_add_func("/nccl-model/rccl/two-nodes-protocol", test_rccl_two_nodes_protocol);
    g_test_add_func("/nccl-model/rccl/from-topo", test_rccl_from_topo);
    g_test_add_func("/nccl-model/rccl/versions", test_rccl_versions);
    return g_test_run();
}
