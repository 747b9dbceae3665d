// SPDX-License-Identifier: MIT
/* Tests of the double binary tree (src/algos/tree.c) and the tree helpers it shares
 * (src/algos/pipetree.c): NCCL's tree shapes, complementarity, trees spanning nodes as
 * chains on multi-node topologies, a single node as one chain, the semantic checker on
 * every op it serves, and the step sink's (time, order) order. */
#include "config.h"

#include "algos/algo.h"
#include "algos/pipetree.h"
#include "sched/check.h"
#include "test-util.h"

extern const CsAlgo cs_algo_tree;

/* ---- Shapes ---- */

/* Parent and children of @index in NCCL's tree @which over @n, as one array:
 * { parent, child0, child1 }. */
static void
dtree_links(int n, int which, int index, int out[3])
{
    int type;
    cs_pipetree_dtree(n, which, index, &out[0], &out[1], &out[2], &type);
}

static void
test_btree_figure(void)
{
    /* NCCL trees.cc draws the btree over 14 ranks:
     *   0---------------8
     *            ______/ \______
     *           4               12
     *         /   \            /  \
     *       2       6       10     \
     *      / \     / \     /  \     \
     *     1   3   5   7   9   11    13
     * Each row: index, parent, child0, child1. */
    static const int want[14][4] = {
        { 0, -1, -1, 8 },  { 1, 2, -1, -1 },   { 2, 4, 1, 3 },    { 3, 2, -1, -1 },
        { 4, 8, 2, 6 },    { 5, 6, -1, -1 },   { 6, 4, 5, 7 },    { 7, 6, -1, -1 },
        { 8, 0, 4, 12 },   { 9, 10, -1, -1 },  { 10, 12, 9, 11 }, { 11, 10, -1, -1 },
        { 12, 8, 10, 13 }, { 13, 12, -1, -1 },
    };
    for (int i = 0; i < 14; i++) {
        int got[3];
        dtree_links(14, 0, i, got);
        g_assert_cmpint(got[0], ==, want[i][1]);
        g_assert_cmpint(got[1], ==, want[i][2]);
        g_assert_cmpint(got[2], ==, want[i][3]);
    }
}

static void
test_dtree_figure(void)
{
    /* NCCL trees.cc draws the second tree for 12 ranks (even: the mirror, root 11) and for
     * 13 ranks (odd: shifted by one, root 1):
     *   3----------------11              1---------------9
     *  / \______                                ______/ \______
     * /         7                               5                0
     * 1        /   \                          /   \            /
     *         5      9                       3       7       11
     *                                       / \     / \     /  \
     *                                      2   4   6   8  10   12          */
    int got[3];

    g_assert_cmpint(cs_pipetree_dtree_root(12, 1), ==, 11);
    dtree_links(12, 1, 11, got);
    g_assert_cmpint(got[0], ==, -1);
    g_assert_cmpint(got[1], ==, -1);
    g_assert_cmpint(got[2], ==, 3); /* the root's one child, NCCL's child1 */
    dtree_links(12, 1, 3, got);
    g_assert_cmpint(got[0], ==, 11);
    g_assert_cmpint(got[1], ==, 7); /* mirrored: child0 is the larger rank */
    g_assert_cmpint(got[2], ==, 1);
    dtree_links(12, 1, 7, got);
    g_assert_cmpint(got[1], ==, 9);
    g_assert_cmpint(got[2], ==, 5);
    dtree_links(12, 1, 0, got);
    g_assert_cmpint(got[0], ==, 1);

    g_assert_cmpint(cs_pipetree_dtree_root(13, 1), ==, 1);
    dtree_links(13, 1, 1, got);
    g_assert_cmpint(got[0], ==, -1);
    g_assert_cmpint(got[2], ==, 9);
    dtree_links(13, 1, 9, got);
    g_assert_cmpint(got[1], ==, 5);
    g_assert_cmpint(got[2], ==, 0); /* 12 + 1 wraps to 0 */
    dtree_links(13, 1, 0, got);
    g_assert_cmpint(got[0], ==, 9);
    g_assert_cmpint(got[1], ==, 11);
    g_assert_cmpint(got[2], ==, -1);
    dtree_links(13, 1, 11, got);
    g_assert_cmpint(got[1], ==, 10);
    g_assert_cmpint(got[2], ==, 12);
}

/* Both trees over P = 1..64: a tree (one root, every rank reached, parent and child links
 * agree, at most two children), and complementary: for even P no rank is inner in both; for
 * odd P only rank 0 is (NCCL's shifted tree keeps it inner). */
static void
test_dtree_complementary(void)
{
    g_test_summary("NCCL's two trees are trees and complementary for P = 1..64");
    for (int n = 1; n <= 64; n++) {
        g_autofree int *members = g_new(int, n);
        gboolean inner[2][64] = { { FALSE } };

        for (int i = 0; i < n; i++)
            members[i] = i;
        for (int which = 0; which < 2; which++) {
            g_autoptr(CsPipeTree) tree = cs_pipetree_new(n);
            int roots = 0;

            cs_pipetree_dtree_over(tree, members, n, which);
            g_assert_cmpint(tree->root, ==, cs_pipetree_dtree_root(n, which));
            for (int i = 0; i < n; i++) {
                int l[3];
                dtree_links(n, which, i, l);
                roots += l[0] < 0;
                g_assert_cmpint(tree->nodes[i].depth, >=, 0);
                g_assert_cmpint(tree->nodes[i].n_children, <=, 2);
                for (int c = 1; c <= 2; c++) {
                    if (l[c] < 0)
                        continue;
                    int back[3];
                    dtree_links(n, which, l[c], back);
                    g_assert_cmpint(back[0], ==, i);
                }
                inner[which][i] = tree->nodes[i].n_children > 0;
            }
            g_assert_cmpint(roots, ==, 1);
            /* A binary tree of n nodes alternating leaves: height about log2 n. */
            g_assert_cmpint(tree->height, <=, 2 * cs_pipetree_log2i(n) + 1);
        }
        for (int i = 0; i < n; i++) {
            if (inner[0][i] && inner[1][i]) {
                g_assert_cmpint(n % 2, ==, 1);
                g_assert_cmpint(i, ==, 0);
            }
        }
        /* The leaves of tree 0 are exactly the odd ranks. */
        for (int i = 1; i < n; i++)
            g_assert_cmpint(inner[0][i], ==, i % 2 == 0);
    }
}

/* ---- Schedules ---- */

static CsSchedule *
build(const CsTopo *topo, CsOp op, int nranks, int root, gint64 size, gint64 chunk, int n_channels,
      CsProto proto)
{
    CsAlgoArgs args;
    GError *error = NULL;
    CsSchedule *sched;

    cs_algo_args_init(&args, topo, op, nranks, size);
    args.root = root;
    args.chunk_bytes = chunk;
    args.n_channels = n_channels;
    args.proto = proto;
    sched = cs_algo_build(&cs_algo_tree, &args, &error);
    g_assert_no_error(error);
    return sched;
}

/* Peers @rank sends to on @channel (at most 64 distinct, as a bitmask over a peer list). */
static int
distinct_send_peers(const CsSchedule *sched, int rank, int channel, int *peers, int max)
{
    gsize n;
    const CsStep *steps = cs_schedule_steps(sched, rank, &n);
    int count = 0;

    for (gsize i = 0; i < n; i++) {
        gboolean seen = FALSE;
        if (steps[i].channel != channel || steps[i].send_peer < 0)
            continue;
        for (int k = 0; k < count; k++)
            seen = seen || peers[k] == steps[i].send_peer;
        if (!seen) {
            g_assert_cmpint(count, <, max);
            peers[count++] = steps[i].send_peer;
        }
    }
    return count;
}

/* The registry sweep (test-algos, test-algos-slow) runs every P of 1..33, 48, 64, 100, 128,
 * 257; here a spread of shapes: primes, powers of two, one rank. */
static const int flat_ranks[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 16, 33, 64, 100, 257 };

/* Without a topology: every op x P x roots 0, P-1, P/2 x uneven sizes, several chunks and
 * channels; the broadcast tree from any root is a tree with at most two children a rank. */
static void
test_flat_checker(gconstpointer data)
{
    CsOp op = GPOINTER_TO_INT(data);

    for (guint i = 0; i < G_N_ELEMENTS(flat_ranks); i++) {
        int p = flat_ranks[i];
        int roots[3] = { 0, p - 1, p / 2 };
        int n_roots = cs_op_has_root(op) ? 3 : 1;
        for (int ri = 0; ri < n_roots; ri++) {
            /* 37P + 3 floats: uneven over channels; 40-byte chunks: several per channel. */
            gint64 size = 4 * (37 * (gint64)p + 3);
            g_autoptr(CsSchedule) a = build(NULL, op, p, roots[ri], size, 40, 1, CS_PROTO_SIMPLE);
            g_autoptr(CsSchedule) b = build(NULL, op, p, roots[ri], size, 0, 3, CS_PROTO_LL);
            g_autoptr(CsSchedule) c = build(NULL, op, p, roots[ri], 4 * 5, 0, 2, CS_PROTO_LL128);
            cs_test_assert_checks(a, NULL);
            cs_test_assert_checks(b, NULL);
            cs_test_assert_checks(c, NULL);
            for (int r = 0; r < p; r++) {
                int peers[4];
                g_assert_cmpint(distinct_send_peers(a, r, 0, peers, 4), <=,
                                op == CS_OP_ALL_REDUCE ? 3 : 2);
            }
        }
    }
}

/* ---- Multi-node topologies ---- */

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

/* N nodes of L ranks (node-major): every op passes the checker for 1 to 4 channels; on each
 * channel of all-reduce every rank sends to at most three peers (parent, two children), every
 * inter-node message joins two GPUs of the same rail (same local index), each node is a chain
 * (L - 1 intra-node edges) and N - 1 edges join the nodes into a tree. */
static void
test_node_trees(gconstpointer data)
{
    g_autoptr(CsTopo) topo = load_case(data);
    int p = cs_topo_n_ranks(topo);
    int nodes = cs_topo_n_nodes(topo);
    int l = cs_topo_ranks_per_node(topo);

    g_assert_cmpint(p, ==, nodes * l);
    for (int n_channels = 1; n_channels <= 4; n_channels++) {
        g_autoptr(CsSchedule) sched = build(topo, CS_OP_ALL_REDUCE, p, 0, 4 * (100 * (gint64)p + 7),
                                            512, n_channels, CS_PROTO_SIMPLE);
        cs_test_assert_checks(sched, NULL);
        for (int c = 0; c < n_channels; c++) {
            g_autofree int *intra_edges = g_new0(int, nodes);
            int inter_edges = 0;
            for (int r = 0; r < p; r++) {
                int node = cs_topo_rank_node(topo, r);
                int peers[4];
                int np = distinct_send_peers(sched, r, c, peers, 4);
                g_assert_cmpint(np, <=, 3);
                for (int k = 0; k < np; k++) {
                    /* Each undirected edge once, from its lower end. */
                    if (peers[k] < r)
                        continue;
                    if (cs_topo_rank_node(topo, peers[k]) == node) {
                        intra_edges[node]++;
                    }
                    else {
                        g_assert_cmpint(peers[k] % l, ==, r % l);
                        inter_edges++;
                    }
                }
            }
            for (int g = 0; g < nodes; g++)
                g_assert_cmpint(intra_edges[g], ==, l - 1);
            g_assert_cmpint(inter_edges, ==, nodes - 1);
        }
    }
    for (int op = CS_OP_BROADCAST; op <= CS_OP_REDUCE; op++) {
        for (int root = 0; root < p; root += 3) {
            g_autoptr(CsSchedule) sched = build(topo, op, p, root, 4 * 333, 64, 3, CS_PROTO_SIMPLE);
            cs_test_assert_checks(sched, NULL);
        }
    }
}

/* 16 nodes x 8: the tree over nodes has depth about log2(16) plus the chains; the checker
 * passes for every op and root class; channels rotate which GPU heads a node, so different
 * channel pairs leave each node through different GPUs (NICs). */
static void
test_topo_sixteen_nodes(void)
{
    g_autoptr(CsTopo) topo = cs_test_load_topo("hgx-h100x8-16n");
    int p = cs_topo_n_ranks(topo);
    g_autoptr(CsSchedule) sched = NULL;
    gboolean used[8] = { FALSE };

    g_assert_cmpint(p, ==, 128);
    sched = build(topo, CS_OP_ALL_REDUCE, p, 0, 4 * (64 * (gint64)p + 5), 256, 16, CS_PROTO_SIMPLE);
    cs_test_assert_checks(sched, NULL);
    /* Which local ranks send inter-node on each channel: over 16 channels (8 pairs) every
     * GPU of node 0 is used. */
    for (int r = 0; r < 8; r++) {
        gsize n;
        const CsStep *steps = cs_schedule_steps(sched, r, &n);
        for (gsize i = 0; i < n; i++)
            if (steps[i].send_peer >= 0 && cs_topo_rank_node(topo, steps[i].send_peer) != 0)
                used[r] = TRUE;
    }
    for (int r = 0; r < 8; r++)
        g_assert_true(used[r]);

    for (int op = CS_OP_BROADCAST; op <= CS_OP_REDUCE; op++) {
        int roots[] = { 0, 77, 127 };
        for (guint i = 0; i < G_N_ELEMENTS(roots); i++) {
            g_autoptr(CsSchedule) s
                = build(topo, op, p, roots[i], 4 * 1001, 128, 2, CS_PROTO_SIMPLE);
            cs_test_assert_checks(s, NULL);
        }
    }
}

/* Rounds of a one-chunk all-reduce on flat P = 8, one channel (tree 0). btree(8): 0 -> 4,
 * 4 -> {2, 6}, 2 -> {1, 3}, 6 -> {5, 7}. The checker gives a message the round after the
 * latest input of its step. Up: the leaves send in round 1, 2 and 6 forward in round 2 (their
 * first child's message is reduced by a receive-only step), 4 in round 3; the root turns the
 * sum around to 4 in round 4. Down: a step names one peer, so 4 sends to its first child in
 * round 5 and its second in round 6; that child does the same in rounds 7 and 8. 8 rounds;
 * 7 messages up and 7 down, 64 bytes each. */
static void
test_rounds(void)
{
    g_autoptr(CsSchedule) sched = build(NULL, CS_OP_ALL_REDUCE, 8, 0, 64, 0, 1, CS_PROTO_SIMPLE);
    CsCheckReport report;
    GError *error = NULL;

    g_assert_true(cs_check_schedule(sched, &report, &error));
    g_assert_no_error(error);
    g_assert_cmpint(report.n_rounds, ==, 8);
    g_assert_cmpint(report.n_messages, ==, 14);
    g_assert_cmpint(report.bytes_sent, ==, 14 * 64);
}

/* One node (dgx-h100x4, P = 4): NCCL's tree of a single node is the chain of its GPUs, not a
 * binary tree over them. Channels 0 and 1 (pair 0) chain 0 - 1 - 2 - 3 with rank 0 at the
 * head; channels 2 and 3 (pair 1) rotate the head to rank 1: 1 - 2 - 3 - 0. Rounds of a
 * one-chunk all-reduce on channel 0: rank 3 sends up in round 1, 2 and 1 reduce and forward
 * in rounds 2 and 3, the head turns the sum around to 1 in round 4, and 1 and 2 forward it
 * down in rounds 5 and 6, which rank 3 receives: 6 rounds (2 (P - 1), NCCL's
 * 2 (ppn - 1) intra-node hops; a binary tree over 4 ranks takes 4), 3 messages up and 3
 * down, each rank sending to at most its two chain neighbours. Broadcast and reduce from
 * any root pass the checker. */
static void
test_one_node_chain(void)
{
    g_autoptr(CsTopo) topo = cs_test_load_topo("dgx-h100x4");
    g_autoptr(CsSchedule) one = build(topo, CS_OP_ALL_REDUCE, 4, 0, 64, 0, 1, CS_PROTO_SIMPLE);
    g_autoptr(CsSchedule) four = build(topo, CS_OP_ALL_REDUCE, 4, 0, 4 * 1000, 64, 4, CS_PROTO_LL);
    static const int heads[4] = { 0, 0, 1, 1 };
    CsCheckReport report;
    GError *error = NULL;

    g_assert_cmpint(cs_topo_n_nodes(topo), ==, 1);
    g_assert_true(cs_check_schedule(one, &report, &error));
    g_assert_no_error(error);
    g_assert_cmpint(report.n_rounds, ==, 6);
    g_assert_cmpint(report.n_messages, ==, 6);
    cs_test_assert_checks(four, NULL);
    for (int c = 0; c < 4; c++) {
        for (int r = 0; r < 4; r++) {
            /* Position along the chain from this channel's head; the chain neighbours. */
            int pos = (r - heads[c] + 4) % 4;
            int peers[4];
            int np = distinct_send_peers(four, r, c, peers, 4);
            g_assert_cmpint(np, ==, pos == 0 || pos == 3 ? 1 : 2);
            for (int k = 0; k < np; k++) {
                int d = (peers[k] - heads[c] + 4) % 4 - pos;
                g_assert_true(d == 1 || d == -1);
            }
        }
    }
    for (int op = CS_OP_BROADCAST; op <= CS_OP_REDUCE; op++) {
        for (int root = 0; root < 4; root++) {
            g_autoptr(CsSchedule) sched = build(topo, op, 4, root, 4 * 333, 64, 3, CS_PROTO_SIMPLE);
            cs_test_assert_checks(sched, NULL);
        }
    }
}

/* Two nodes of 8 fully connected MI355X with a NIC each (mi355x-x8-2n-pollara): RCCL builds
 * its tree channels from its model's rings when the model has no tree of its own
 * (rome_model_81 and 89: parseRome4P2H's "Fall back to tree from ringBase",
 * src/graph/rome_models.cc, ROCm/rccl 0cbce2a7), so each channel's chain through a node is one
 * of 8 paths that together follow every directed xGMI link once. Expectation, 16 channels of
 * an all-reduce: inside each node every one of the 56 directed GPU pairs carries traffic, and
 * on every channel each node's chain still gives each GPU at most two chain neighbours in
 * the node, the head one; every pair of a path is an xGMI link (one hop). Chains in rank
 * order (before) used only the 16 pairs (r, r +- 1 mod 8). */
static void
test_mesh_rail_paths(void)
{
    g_autoptr(CsTopo) topo = cs_test_load_topo("mi355x-x8-2n-pollara");
    int p = cs_topo_n_ranks(topo);
    g_autoptr(CsSchedule) sched
        = build(topo, CS_OP_ALL_REDUCE, p, 0, 4 * (16 * 1024 + 3), 1024, 16, CS_PROTO_SIMPLE);
    gboolean pair[16][16] = { { FALSE } };
    int n_pairs[2] = { 0, 0 };

    g_test_summary("a tree across xGMI mesh nodes chains each channel along its own path");
    g_assert_cmpint(p, ==, 16);
    cs_test_assert_checks(sched, NULL);
    for (int r = 0; r < p; r++) {
        gsize n;
        const CsStep *steps = cs_schedule_steps(sched, r, &n);
        for (gsize i = 0; i < n; i++) {
            int q = steps[i].send_peer;
            if (q < 0 || cs_topo_rank_node(topo, q) != cs_topo_rank_node(topo, r))
                continue;
            g_assert_cmpint(cs_topo_route(topo, r, q)->n_links, ==, 1);
            if (!pair[r][q])
                n_pairs[cs_topo_rank_node(topo, r)]++;
            pair[r][q] = TRUE;
        }
    }
    g_assert_cmpint(n_pairs[0], ==, 56);
    g_assert_cmpint(n_pairs[1], ==, 56);
    for (int c = 0; c < 16; c++) {
        for (int r = 0; r < p; r++) {
            int peers[16];
            int np = distinct_send_peers(sched, r, c, peers, 16);
            int local = 0;
            for (int k = 0; k < np; k++)
                local += cs_topo_rank_node(topo, peers[k]) == cs_topo_rank_node(topo, r);
            g_assert_cmpint(local, <=, 2);
        }
    }
}

/* ---- Step sink ---- */

/* cs_step_sink_flush() hands a rank's steps over sorted by (time, order), ties in the order
 * they were queued: checked against an insertion sort (stable) on programs queued as many
 * interleaved runs with many ties, as one sorted run, and as one run backwards. Each pattern
 * comes dense (small integer keys, which the sink sorts by counting) and sparse (keys spread
 * over a range far larger than the steps, and negative orders: merged), and the extreme keys
 * (G_MININT64, G_MAXINT64) tie-break like any other. */
static void
test_sink_order(void)
{
    enum { N = 3000 };
    static gint64 time[N], order[N];
    static int expect[N];
    guint32 lcg = 12345;

    /* Patterns: random keys with ties (many runs, few piles), one run, one run per step (more
     * runs than the piles a merge deals: merged from its natural runs), four interleaved
     * streams whose keys tie across streams (a CollNet chain's passes). */
    for (int pattern = 0; pattern < 9; pattern++) {
        const gint64 spread = pattern >= 4 ? 1000000007 : 1;
        g_autoptr(CsStepSink) sink = cs_step_sink_new(2);
        g_autoptr(CsSchedule) sched = cs_schedule_new(CS_OP_ALL_REDUCE, 2, 0, 4096, CS_DTYPE_FLOAT,
                                                      CS_REDOP_SUM, CS_PROTO_SIMPLE, 1);
        for (int i = 0; i < N; i++) {
            lcg = lcg * 1103515245u + 12345u;
            const int base = pattern % 4;
            time[i] = base == 0   ? (gint64)((lcg >> 16) % 7)
                      : base == 1 ? i / 3
                      : base == 2 ? N - i
                                  : i / 8 + (i % 4) * 2;
            time[i] *= spread;
            order[i] = base == 0 ? (gint64)((lcg >> 8) % 3) : base == 3 ? i % 2 : 0;
            order[i] = (order[i] - (pattern >= 4)) * spread;
            if (pattern == 8) {
                time[i] = i % 3 == 0 ? G_MAXINT64 : G_MININT64;
                order[i] = i % 2 == 0 ? G_MAXINT64 : G_MININT64;
            }
            CsStep step = { .bytes = 4,
                            .chunk = i,
                            .send_peer = -1,
                            .recv_peer = -1,
                            .kind = CS_STEP_COPY,
                            .src_buf = CS_BUF_INPUT,
                            .dst_buf = CS_BUF_OUTPUT };
            cs_step_sink_add_ordered(sink, 1, time[i], order[i], &step);
            /* Insert i after every queued step whose key is no greater. */
            int at = i;
            while (at > 0
                   && (time[expect[at - 1]] > time[i]
                       || (time[expect[at - 1]] == time[i] && order[expect[at - 1]] > order[i]))) {
                expect[at] = expect[at - 1];
                at--;
            }
            expect[at] = i;
        }
        cs_step_sink_flush(sink, sched);
        cs_schedule_seal(sched);
        gsize n = 0;
        const CsStep *steps = cs_schedule_steps(sched, 1, &n);
        g_assert_cmpuint(n, ==, N);
        for (int i = 0; i < N; i++)
            g_assert_cmpint(steps[i].chunk, ==, expect[i]);
        cs_schedule_steps(sched, 0, &n);
        g_assert_cmpuint(n, ==, 0);
    }
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);

    g_test_add_func("/algo/tree/shape/btree-figure", test_btree_figure);
    g_test_add_func("/algo/tree/shape/dtree-figure", test_dtree_figure);
    g_test_add_func("/algo/tree/shape/dtree-complementary", test_dtree_complementary);
    g_test_add_data_func("/algo/tree/check/flat/allreduce", GINT_TO_POINTER(CS_OP_ALL_REDUCE),
                         test_flat_checker);
    g_test_add_data_func("/algo/tree/check/flat/broadcast", GINT_TO_POINTER(CS_OP_BROADCAST),
                         test_flat_checker);
    g_test_add_data_func("/algo/tree/check/flat/reduce", GINT_TO_POINTER(CS_OP_REDUCE),
                         test_flat_checker);
    static const TopoCase topo_cases[] = {
        { "hgx-h100x8-2n", 0, NULL, 0 },
        { NULL, 3, "dgx-h100x4", 4 },
        { NULL, 5, "rtx2080ti-x2-pcie3-shm", 1 },
        { NULL, 7, "dgx-h100x4", 4 },
    };
    for (guint i = 0; i < G_N_ELEMENTS(topo_cases); i++) {
        const TopoCase *tc = &topo_cases[i];
        g_autofree char *path = tc->name != NULL
                                    ? g_strdup_printf("/algo/tree/topo/%s", tc->name)
                                    : g_strdup_printf("/algo/tree/topo/%dx%s", tc->nodes, tc->node);
        g_test_add_data_func(path, tc, test_node_trees);
    }
    g_test_add_func("/algo/tree/topo/hgx-16n", test_topo_sixteen_nodes);
    g_test_add_func("/algo/tree/rounds/p8", test_rounds);
    g_test_add_func("/algo/tree/topo/one-node-chain", test_one_node_chain);
    g_test_add_func("/algo/tree/topo/mesh-rail-paths", test_mesh_rail_paths);
    g_test_add_func("/algo/tree/sink/order", test_sink_order);
    return g_test_run();
}
