// SPDX-License-Identifier: MIT
/* Tests of the two-level algorithm (src/algos/hierarchical.c): the semantic checker on every
 * op it serves, with and without multi-node topologies, and its structure: inter-node traffic
 * only between ranks of the same rail, with the volume the two-level scheme promises. */
#include "config.h"

#include "algos/algo.h"
#include "sched/check.h"
#include "test-util.h"

extern const CsAlgo cs_algo_hierarchical;

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
    sched = cs_algo_build(&cs_algo_hierarchical, &args, &error);
    g_assert_no_error(error);
    return sched;
}

static const CsOp ops[]
    = { CS_OP_ALL_REDUCE, CS_OP_REDUCE_SCATTER, CS_OP_ALL_GATHER, CS_OP_BROADCAST, CS_OP_REDUCE };

/* Every op on @topo (nullable) with @p ranks: roots 0, p-1, p/2; a size leaving a remainder
 * everywhere (37 floats a rank plus 3) cut in 40-byte chunks on 1 and 3 channels, and a size
 * smaller than P elements (empty blocks and shards). */
static void
check_all_ops(const CsTopo *topo, int p)
{
    for (guint o = 0; o < G_N_ELEMENTS(ops); o++) {
        int roots[3] = { 0, p - 1, p / 2 };
        int n_roots = cs_op_has_root(ops[o]) ? 3 : 1;
        for (int ri = 0; ri < n_roots; ri++) {
            gint64 size = 4 * (37 * (gint64)p + 3);
            g_autoptr(CsSchedule) a = build(topo, ops[o], p, roots[ri], size, 40, 1);
            g_autoptr(CsSchedule) b = build(topo, ops[o], p, roots[ri], size, 40, 3);
            g_autoptr(CsSchedule) c = build(topo, ops[o], p, roots[ri], 4 * 3, 0, 2);
            cs_test_assert_checks(a, NULL);
            cs_test_assert_checks(b, NULL);
            cs_test_assert_checks(c, NULL);
        }
    }
}

static void
test_flat_checker(void)
{
    /* The registry sweep (test-algos, test-algos-slow) runs every P of 1..33, 48, 64, 100,
     * 128, 257; here a spread of shapes: primes, powers of two, one rank. */
    static const int ranks[] = { 1, 2, 3, 4, 5, 7, 8, 13, 16, 33, 64, 100 };

    g_test_summary("Without a topology (one node) every op passes the checker");
    for (guint i = 0; i < G_N_ELEMENTS(ranks); i++)
        check_all_ops(NULL, ranks[i]);
}

typedef struct {
    const char *name; /* shipped topology, or NULL for a cluster template of: */
    int nodes;
    const char *node;
    int nics;
} TopoCase;

static CsTopo *
load_case(const TopoCase *tc)
{
    return tc->name != NULL ? cs_test_load_topo(tc->name)
                            : cs_test_load_cluster(tc->nodes, tc->node, tc->nics);
}

static void
test_topo_checker(gconstpointer data)
{
    g_autoptr(CsTopo) topo = load_case(data);

    check_all_ops(topo, cs_topo_n_ranks(topo));
}

/* Bytes sent across nodes by @rank on @sched, asserting that every inter-node message joins
 * ranks with the same index in their node (the same rail: node-major ranks, @l a node). */
static gint64
inter_node_bytes(const CsTopo *topo, const CsSchedule *sched, int rank, int l)
{
    gsize n;
    const CsStep *steps = cs_schedule_steps(sched, rank, &n);
    gint64 bytes = 0;

    for (gsize i = 0; i < n; i++) {
        int q = steps[i].send_peer;
        if (q < 0 || cs_topo_rank_node(topo, q) == cs_topo_rank_node(topo, rank))
            continue;
        g_assert_cmpint(q % l, ==, rank % l);
        bytes += steps[i].bytes;
    }
    return bytes;
}

/* All-reduce of S = L x N x 4 KiB on N nodes of L ranks: rank j of a node owns shard j
 * (S/L = N x 4 KiB); the ring on its rail cuts the shard into N sub-blocks of 4 KiB and sends
 * N - 1 of them in its reduce-scatter half and N - 1 in its all-gather half:
 * 2 (N-1) x 4 KiB a rank across nodes (8,192 bytes on 2 nodes, 122,880 on 16), all on the
 * rank's own rail. Reduce-scatter and all-gather of 4 KiB blocks: a rail carries N blocks and
 * each rank sends N - 1 of them across nodes. Nothing else leaves a node. */
static void
test_rail_traffic(gconstpointer data)
{
    g_autoptr(CsTopo) topo = load_case(data);
    int p = cs_topo_n_ranks(topo);
    int nodes = cs_topo_n_nodes(topo);
    int l = cs_topo_ranks_per_node(topo);
    gint64 s = (gint64)l * nodes * 1024 * 4;
    g_autoptr(CsSchedule) ar = build(topo, CS_OP_ALL_REDUCE, p, 0, s, 0, 1);
    g_autoptr(CsSchedule) rs = build(topo, CS_OP_REDUCE_SCATTER, p, 0, 4096 * (gint64)p, 0, 2);
    g_autoptr(CsSchedule) ag = build(topo, CS_OP_ALL_GATHER, p, 0, 4096 * (gint64)p, 0, 4);

    cs_test_assert_checks(ar, NULL);
    cs_test_assert_checks(rs, NULL);
    cs_test_assert_checks(ag, NULL);
    for (int r = 0; r < p; r++) {
        g_assert_cmpint(inter_node_bytes(topo, ar, r, l), ==, 2 * (nodes - 1) * 4096);
        g_assert_cmpint(inter_node_bytes(topo, rs, r, l), ==, (nodes - 1) * 4096);
        g_assert_cmpint(inter_node_bytes(topo, ag, r, l), ==, (nodes - 1) * 4096);
    }
}

/* Broadcast from rank 13 of 2 x 8 on 8 channels: channel c leaves the root's node through
 * local rank (5 + c) % 8, so the 8 channels use the 8 rails once each; the tree sends every
 * byte across nodes exactly once per channel part: 8 x 1,000 floats = 32,000 bytes in total. */
static void
test_broadcast_rails(void)
{
    g_autoptr(CsTopo) topo = cs_test_load_topo("hgx-h100x8-2n");
    g_autoptr(CsSchedule) sched = build(topo, CS_OP_BROADCAST, 16, 13, 32000, 0, 8);
    gint64 total = 0;
    gboolean rails[8] = { FALSE };

    cs_test_assert_checks(sched, NULL);
    for (int r = 8; r < 16; r++) {
        gint64 b = inter_node_bytes(topo, sched, r, 8);
        total += b;
        rails[r % 8] = b > 0;
        /* Part c is 1,000 floats; each rail carries exactly one part. */
        g_assert_cmpint(b, ==, 4000);
    }
    for (int r = 0; r < 8; r++)
        g_assert_cmpint(inter_node_bytes(topo, sched, r, 8), ==, 0);
    g_assert_cmpint(total, ==, 32000);
    for (int j = 0; j < 8; j++)
        g_assert_true(rails[j]);
}

/* 12 of the 16 GPUs of 2 x 8 would put 8 ranks on one node and 4 on the other. */
static void
test_uneven_nodes_refused(void)
{
    g_autoptr(CsTopo) topo = cs_test_load_topo("hgx-h100x8-2n");
    const char *why = NULL;

    g_assert_false(cs_algo_hierarchical.supports(topo, CS_OP_ALL_REDUCE, 12, &why));
    g_assert_cmpstr(why, ==, "nodes hold different numbers of ranks");
    g_assert_true(cs_algo_hierarchical.supports(topo, CS_OP_ALL_REDUCE, 16, &why));
    g_assert_true(cs_algo_hierarchical.supports(NULL, CS_OP_ALL_GATHER, 7, &why));
    g_assert_false(cs_algo_hierarchical.supports(NULL, CS_OP_ALL_TO_ALL, 7, &why));
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);

    g_test_add_func("/algo/hierarchical/check/flat", test_flat_checker);
    static const TopoCase topo_cases[] = {
        { "hgx-h100x8-2n", 0, NULL, 0 },
        { "hgx-h100x8-16n", 0, NULL, 0 },
        { NULL, 3, "dgx-h100x4", 4 },
        { NULL, 5, "rtx2080ti-x2-pcie3-shm", 1 },
    };
    for (guint i = 0; i < G_N_ELEMENTS(topo_cases); i++) {
        const TopoCase *tc = &topo_cases[i];
        g_autofree char *name
            = tc->name != NULL ? g_strdup(tc->name) : g_strdup_printf("%dx%s", tc->nodes, tc->node);
        g_autofree char *check = g_strdup_printf("/algo/hierarchical/check/%s", name);
        g_autofree char *rails = g_strdup_printf("/algo/hierarchical/rails/%s", name);
        g_test_add_data_func(check, tc, test_topo_checker);
        g_test_add_data_func(rails, tc, test_rail_traffic);
    }
    g_test_add_func("/algo/hierarchical/broadcast/rails", test_broadcast_rails);
    g_test_add_func("/algo/hierarchical/supports/uneven-nodes", test_uneven_nodes_refused);
    return g_test_run();
}
