// SPDX-License-Identifier: MIT
/* PAT (algos/pat.c): the semantic checker on 2..16 ranks of one GPU per node, the log2 P
 * aggregated messages at small sizes, what it refuses as NCCL does, and NCCL's own pick of it
 * on one GPU per node (NCCL 2.28 tuning.cc). */
#include "config.h"

#include <string.h>

#include "algos/algo.h"
#include "algos/registry.h"
#include "models/nccl.h"
#include "predict/predict.h"
#include "sched/check.h"
#include "test-util.h"

/* @nodes nodes of one H100 SXM each (dgx-h100x8's GPU numbers), one 400 Gb/s NDR NIC per node
 * on PCIe Gen5 x16, one InfiniBand switch. */
static CsTopo *
one_gpu_per_node(int nodes)
{
    g_autoptr(GError) error = NULL;
    g_autofree char *json = g_strdup_printf(
        "{\"name\": \"h100-1pn-%d\", \"nodes\": %d, \"node\": {\"gpu\": {\"model\": \"H100 SXM5 "
        "80GB\", \"launch\": \"4.5 us\", \"step_overhead\": \"0.2 us\", \"reduce_bandwidth\": "
        "\"1116.7 GB/s\", \"copy_bandwidth\": \"1675 GB/s\"}, \"devices\": [{\"name\": "
        "\"gpu0\", \"kind\": \"gpu\"}], \"links\": []}, \"network\": {\"kind\": \"ib\", "
        "\"nics_per_node\": 1, \"nic_bandwidth\": \"400 Gb/s\", \"nic_alpha\": \"0.3 us\", "
        "\"switch_alpha\": \"0.13 us\", \"nic_link\": {\"kind\": \"pcie\", \"bandwidth\": "
        "\"63 GB/s\", \"efficiency\": 0.762, \"alpha\": \"0.2 us\"}}}",
        nodes, nodes);
    CsTopo *topo = cs_topo_load_data(json, "inline", &error);
    g_assert_no_error(error);
    return topo;
}

typedef struct {
    CsOp op;
    int nranks;
} CheckCase;

/* Every size (0, a few elements, sizes that do not divide by the ranks, several chunks), on
 * 1 and 3 channels, with the protocol's chunk and a 4 KiB one (more chunks, so more of the
 * generator's phases), computes the collective. */
static void
test_check(gconstpointer data)
{
    const CheckCase *c = data;
    g_autoptr(CsTopo) topo = one_gpu_per_node(c->nranks);
    const CsAlgo *pat = cs_algo_lookup("pat", NULL);
    static const gint64 sizes[] = { 0, 8, 1000, 65540, (1 << 20) + 12, 5 << 20 };
    static const gint64 chunks[] = { 0, 4096 };
    const char *why = NULL;

    g_assert_nonnull(pat);
    g_assert_true(pat->supports(topo, c->op, c->nranks, &why));
    for (guint s = 0; s < G_N_ELEMENTS(sizes); s++)
        for (int channels = 1; channels <= 3; channels += 2)
            for (guint k = 0; k < G_N_ELEMENTS(chunks); k++) {
                g_autoptr(GError) error = NULL;
                CsAlgoArgs args;
                CsCheckReport report;
                cs_algo_args_init(&args, topo, c->op, c->nranks, sizes[s]);
                args.n_channels = channels;
                args.chunk_bytes = chunks[k];
                g_autoptr(CsSchedule) sched = cs_algo_build(pat, &args, &error);
                g_assert_no_error(error);
                if (!cs_check_schedule(sched, &report, &error))
                    g_error("pat %s on %d ranks, %" G_GINT64_FORMAT " B, %d channels, chunk "
                            "%" G_GINT64_FORMAT ": %s",
                            cs_op_name(c->op), c->nranks, sizes[s], channels, chunks[k],
                            error->message);
                const gint64 block = cs_schedule_size(sched)->block_bytes;
                g_assert_cmpint(report.n_messages > 0, ==, block > 0);
            }
}

/* Setup: 1,000 B on P = 2, 4, 8, 16 ranks: blocks of at most 125 B, far below half a 512 KiB
 * slot, so the generator aggregates as far as it goes (aggFactor P / 2).
 * Expectation: each rank sends one message per dimension, log2 P in all (a ring sends P - 1):
 * P log2 P messages. */
static void
test_aggregated(void)
{
    const CsAlgo *pat = cs_algo_lookup("pat", NULL);
    for (int log2p = 1; log2p <= 4; log2p++) {
        const int P = 1 << log2p;
        g_autoptr(CsTopo) topo = one_gpu_per_node(P);
        for (int rs = 0; rs <= 1; rs++) {
            g_autoptr(GError) error = NULL;
            CsAlgoArgs args;
            CsCheckReport report;
            cs_algo_args_init(&args, topo, rs ? CS_OP_REDUCE_SCATTER : CS_OP_ALL_GATHER, P, 1000);
            g_autoptr(CsSchedule) sched = cs_algo_build(pat, &args, &error);
            g_assert_no_error(error);
            g_assert_true(cs_check_schedule(sched, &report, &error));
            g_assert_cmpint(report.n_messages, ==, P * log2p);
        }
    }
}

/* What NCCL refuses (tuning.cc ncclPatEnable, enqueue.cc): more than one GPU per node, any
 * collective but all-gather and reduce-scatter, LL and LL128, reduce-scatter with avg. */
static void
test_refusals(void)
{
    const CsAlgo *pat = cs_algo_lookup("pat", NULL);
    g_autoptr(CsTopo) two_nodes = cs_test_load_topo("hgx-h100x8-2n");
    g_autoptr(CsTopo) one_each = one_gpu_per_node(4);
    const char *why = NULL;

    g_assert_false(pat->supports(two_nodes, CS_OP_ALL_GATHER, 16, &why));
    g_assert_nonnull(strstr(why, "one GPU per node"));
    why = NULL;
    /* Without the machine every rank is on one node. */
    g_assert_false(pat->supports(NULL, CS_OP_REDUCE_SCATTER, 4, &why));
    g_assert_nonnull(why);
    g_assert_false(pat->supports(one_each, CS_OP_ALL_REDUCE, 4, &why));
    g_assert_true(pat->supports(one_each, CS_OP_ALL_GATHER, 4, &why));
    g_assert_true(pat->supports(NULL, CS_OP_ALL_GATHER, 1, &why));

    CsAlgoArgs args;
    g_autoptr(GError) e1 = NULL;
    cs_algo_args_init(&args, one_each, CS_OP_ALL_GATHER, 4, 4096);
    args.proto = CS_PROTO_LL;
    g_autoptr(CsSchedule) ll = cs_algo_build(pat, &args, &e1);
    g_assert_null(ll);
    g_assert_error(e1, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_UNSUPPORTED);

    g_autoptr(GError) e2 = NULL;
    cs_algo_args_init(&args, one_each, CS_OP_REDUCE_SCATTER, 4, 4096);
    args.redop = CS_REDOP_AVG;
    g_autoptr(CsSchedule) avg = cs_algo_build(pat, &args, &e2);
    g_assert_null(avg);
    g_assert_error(e2, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_UNSUPPORTED);
}

/* Setup: NCCL 2.28's tuning model on one H100 per node over InfiniBand (no net plugin
 * latency), all-gather. With one GPU per node every latency is the network's Tree one
 * (ppn == 1): LL 5.0 us, Simple 14 us (hwLatencies NET).
 * Expectation (tuning.cc ncclTopoTuneModel):
 * - PAT Simple: base 8.0 + log2(N) x 14 / 3.5 + N x 2.8: 42.4 us on 8 nodes, 68.8 on 16;
 * - Ring LL: base 6.6 + (N - 1) x 5.0: 41.6 us on 8 nodes, 81.6 on 16.
 * So on 16 nodes NCCL picks PAT at 1 KiB, while on 8 the ring's LL latency is 0.8 us lower
 * and NCCL keeps Ring LL there; by 64 KiB LL's halved bandwidth (busBw x 0.5 against PAT's
 * x 0.75) has cost more than that and NCCL picks PAT. collsim runs that pick. */
static void
test_nccl_pick(void)
{
    static const struct {
        int nodes;
        gint64 size;
        const char *algo;
    } cases[] = { { 16, 1024, "pat" }, { 8, 1024, "ring" }, { 8, 65536, "pat" } };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autoptr(GError) error = NULL;
        g_autoptr(CsTopo) topo = one_gpu_per_node(cases[i].nodes);
        g_autoptr(CsNcclModel) nccl
            = cs_nccl_model_new_for_topo(topo, cases[i].nodes, "nccl:2.28", &error);
        g_assert_no_error(error);
        CsNcclPrediction np;
        g_assert_true(cs_nccl_model_predict(nccl, CS_OP_ALL_GATHER, cases[i].size, CS_NCCL_ALGO_PAT,
                                            CS_PROTO_SIMPLE, &np, &error));
        g_assert_cmpfloat_with_epsilon(np.latency_us, cases[i].nodes == 16 ? 68.8 : 42.4, 1e-9);
        g_assert_true(cs_nccl_model_predict(nccl, CS_OP_ALL_GATHER, cases[i].size,
                                            CS_NCCL_ALGO_RING, CS_PROTO_LL, &np, &error));
        g_assert_cmpfloat_with_epsilon(np.latency_us, cases[i].nodes == 16 ? 81.6 : 41.6, 1e-9);

        CsPredictOptions opt;
        CsPrediction pred;
        cs_predict_options_init(&opt);
        opt.pick = CS_PICK_NCCL;
        opt.nccl = nccl;
        g_assert_true(
            cs_predict_best(topo, CS_OP_ALL_GATHER, cases[i].size, NULL, -1, &opt, &pred, &error));
        g_assert_no_error(error);
        g_assert_true(pred.nccl_picked);
        g_assert_cmpstr(pred.algo->name, ==, cases[i].algo);
        if (strcmp(cases[i].algo, "pat") == 0)
            g_assert_cmpint(pred.proto, ==, CS_PROTO_SIMPLE);
    }
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    static CheckCase cases[2 * 15];
    int n = 0;
    for (int rs = 0; rs <= 1; rs++)
        for (int p = 2; p <= 16; p++) {
            cases[n] = (CheckCase){ rs ? CS_OP_REDUCE_SCATTER : CS_OP_ALL_GATHER, p };
            g_autofree char *path
                = g_strdup_printf("/algo/pat/check/%s/p%d", cs_op_name(cases[n].op), p);
            g_test_add_data_func(path, &cases[n], test_check);
            n++;
        }
    g_test_add_func("/algo/pat/aggregated", test_aggregated);
    g_test_add_func("/algo/pat/refusals", test_refusals);
    g_test_add_func("/algo/pat/nccl-pick", test_nccl_pick);
    return g_test_run();
}
