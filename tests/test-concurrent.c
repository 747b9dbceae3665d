// SPDX-License-Identifier: MIT
/* Issue 29: the groups of a training step's layout run their collective at once (the
 * data-parallel groups of every tensor-parallel rank all-reduce together) and share the links
 * they share. Copies of one group's schedule replay as one period where the machine repeats
 * from copy to copy (the same answer as every copy replayed), and two GPUs behind one NIC
 * halve each other's network bandwidth. */
#include <string.h>

#include "algos/registry.h"
#include "engine/engine.h"
#include "predict/predict.h"
#include "test-util.h"

/* The data-parallel groups of tp 8 x dp 2 on two 8-GPU nodes: group t is GPU t of each node. */
static void
dp_groups(const CsTopo *topo, CsTopo **first, CsTopo **all)
{
    int ranks[16];
    for (int t = 0; t < 8; t++) {
        ranks[2 * t] = t;
        ranks[2 * t + 1] = 8 + t;
    }
    *first = cs_topo_subset(topo, ranks, 2);
    *all = cs_topo_subset(topo, ranks, 16);
}

static void
test_replicate(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTopo) topo = cs_topo_load("dgx-h100x4", &error);
    g_assert_no_error(error);
    CsAlgoArgs args;
    cs_algo_args_init(&args, topo, CS_OP_ALL_REDUCE, 4, 1 << 20);
    args.n_channels = 2;
    g_autoptr(CsSchedule) one = cs_algo_build(cs_algo_lookup("ring", NULL), &args, &error);
    g_assert_no_error(error);

    g_autoptr(CsSchedule) three = cs_schedule_replicate(one, 3, FALSE, &error);
    g_assert_no_error(error);
    g_assert_cmpint(cs_schedule_n_ranks(three), ==, 12);
    g_assert_cmpint(cs_schedule_period(three), ==, 12);
    g_assert_cmpuint(cs_schedule_n_steps(three), ==, 3 * cs_schedule_n_steps(one));
    g_assert_cmpint(cs_schedule_size(three)->size_bytes, ==, cs_schedule_size(one)->size_bytes);
    for (int c = 0; c < 3; c++) {
        for (int r = 0; r < 4; r++) {
            gsize n0 = 0, n1 = 0;
            const CsStep *a = cs_schedule_steps(one, r, &n0);
            const CsStep *b = cs_schedule_steps(three, c * 4 + r, &n1);
            g_assert_cmpuint(n0, ==, n1);
            for (gsize i = 0; i < n0; i++) {
                g_assert_cmpint(b[i].send_peer, ==,
                                a[i].send_peer < 0 ? -1 : a[i].send_peer + 4 * c);
                g_assert_cmpint(b[i].recv_peer, ==,
                                a[i].recv_peer < 0 ? -1 : a[i].recv_peer + 4 * c);
                g_assert_cmpint(b[i].bytes, ==, a[i].bytes);
                g_assert_cmpint(b[i].channel, ==, a[i].channel);
            }
        }
    }
    g_autoptr(CsSchedule) periodic = cs_schedule_replicate(one, 3, TRUE, &error);
    g_assert_no_error(error);
    g_assert_cmpint(cs_schedule_n_ranks(periodic), ==, 12);
    g_assert_cmpint(cs_schedule_period(periodic), ==, 4);
    g_assert_cmpuint(cs_schedule_n_steps(periodic), ==, cs_schedule_n_steps(one));
}

/* One all-reduce of @size on the DP groups of hgx-h100x8-2n with @edits, alone (@concurrent
 * 1) or all at once, one period or every copy replayed (@whole). */
static CsPrediction
dp_allreduce(const char *edit, gint64 size, int concurrent, gboolean whole)
{
    g_autoptr(GError) error = NULL;
    char *edits[] = { (char *)edit, NULL };
    g_autoptr(CsTopo) topo
        = cs_topo_load_edited("hgx-h100x8-2n", edit != NULL ? edits : NULL, &error);
    g_assert_no_error(error);
    g_autoptr(CsTopo) first = NULL;
    g_autoptr(CsTopo) all = NULL;
    dp_groups(topo, &first, &all);
    CsPredictOptions options;
    cs_predict_options_init(&options);
    options.nranks = 2;
    options.concurrent = concurrent;
    options.concurrent_topo = all;
    options.whole = whole;
    CsPrediction pred;
    g_assert_true(cs_predict_one(first, CS_OP_ALL_REDUCE, size, cs_algo_lookup("ring", NULL),
                                 CS_PROTO_SIMPLE, &options, &pred, &error));
    g_assert_no_error(error);
    return pred;
}

/* One NIC per GPU, rail by rail: the groups share no link, so eight at once take as long as
 * one alone, and the machine repeats from GPU to GPU: one copy replayed, the same answer. */
static void
test_own_rails(void)
{
    for (gint64 size = 1 << 20; size <= (G_GINT64_CONSTANT(1) << 30); size <<= 5) {
        CsPrediction alone = dp_allreduce(NULL, size, 1, FALSE);
        CsPrediction periodic = dp_allreduce(NULL, size, 8, FALSE);
        CsPrediction whole = dp_allreduce(NULL, size, 8, TRUE);
        g_assert_cmpint(periodic.replayed_ranks, ==, 2);
        g_assert_cmpint(whole.replayed_ranks, ==, 16);
        g_assert_false(periodic.asymmetric);
        g_assert_cmpint(periodic.result.time, ==, whole.result.time);
        g_assert_cmpint(periodic.result.alpha, ==, whole.result.alpha);
        g_assert_cmpint(periodic.result.beta, ==, whole.result.beta);
        g_assert_cmpint(periodic.result.time, ==, alone.result.time);
    }
}

/* Four NICs for eight GPUs: GPUs 2k and 2k + 1 share NIC k, so the copies are not one shift
 * of each other (the engine refuses the period and every copy is replayed), and at 1 GiB, where
 * the NIC binds, the groups at once take nearly twice as long as one alone. */
static void
test_shared_nic(void)
{
    const char *edit = "network.nics_per_node=4";
    const gint64 size = G_GINT64_CONSTANT(1) << 30;
    CsPrediction alone = dp_allreduce(edit, size, 1, FALSE);
    CsPrediction together = dp_allreduce(edit, size, 8, FALSE);
    CsPrediction whole = dp_allreduce(edit, size, 8, TRUE);
    g_assert_cmpint(together.replayed_ranks, ==, 16);
    g_assert_true(together.asymmetric);
    g_assert_cmpint(together.result.time, ==, whole.result.time);
    g_assert_cmpfloat((double)together.result.time, >, 1.8 * (double)alone.result.time);
    g_assert_cmpfloat((double)together.result.time, <, 2.2 * (double)alone.result.time);
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/concurrent/replicate", test_replicate);
    g_test_add_func("/concurrent/own-rails", test_own_rails);
    g_test_add_func("/concurrent/shared-nic", test_shared_nic);
    return g_test_run();
}
