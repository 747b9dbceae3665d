// SPDX-License-Identifier: MIT
/* Tests of `collsim verify` and `collsim algos`, run as users run them ($COLLSIM_BIN): lines
 * and counts derived by hand, exit statuses of good and bad invocations. */
#include "config.h"

#include <string.h>

#include <glib.h>
#include "test-util.h"

/* Setup: ring all-reduce, P = 7, 1000 bytes (250 floats), Simple: one loop of 7 chunks.
 * Expectation: 2(P - 1) = 12 rounds (P - 1 reduce-scatter steps, P - 1 all-gather steps);
 * every rank sends 12 messages (a send, 5 recv_reduce_send, a recv_reduce_copy_send, 5
 * recv_copy_send): 7 x 12 = 84. */
static void
test_verify_ring(void)
{
    const char *args[] = { "verify",  "--algo", "ring",   "--op", "allreduce",
                           "--ranks", "7",      "--size", "1000", NULL };
    CsTestRun r = cs_test_run_collsim(NULL, args);
    g_assert_cmpint(r.status, ==, 0);
    g_assert_cmpstr(r.out, ==,
                    "ok ring allreduce P=7 size=1000 root=0 (12 rounds, 84 messages)\n"
                    "# 1 case: 1 ok, 0 failed, 0 skipped\n");
    cs_test_run_clear(&r);
}

/* Setup: binomial broadcast from root 2 on P = 6, 24 bytes (one chunk).
 * Expectation: relative rank 0 sends to 4, 2 and 1 one after the other (rounds 1, 2, 3);
 * 4 forwards to 5 in round 2, 2 to 3 in round 3: 3 rounds, P - 1 = 5 messages. */
static void
test_verify_mst_root(void)
{
    const char *args[]
        = { "verify", "-a", "mst", "--op", "broadcast", "-n", "6", "-s", "24", "-r", "2", NULL };
    CsTestRun r = cs_test_run_collsim(NULL, args);
    g_assert_cmpint(r.status, ==, 0);
    g_assert_cmpstr(r.out, ==,
                    "ok mst broadcast P=6 size=24 root=2 (3 rounds, 5 messages)\n"
                    "# 1 case: 1 ok, 0 failed, 0 skipped\n");
    cs_test_run_clear(&r);
}

/* Setup: the default rank list 1-9 with a root of 5, for scatter with direct, one size.
 * Expectation: rooted cases run only for P > 5: P = 6..9, 4 cases. */
static void
test_verify_root_filter(void)
{
    const char *args[]
        = { "verify", "--algo", "direct", "--op", "scatter", "--size", "1K", "--root", "5", NULL };
    CsTestRun r = cs_test_run_collsim(NULL, args);
    g_assert_cmpint(r.status, ==, 0);
    g_assert_nonnull(strstr(r.out, "ok direct scatter P=6 size=1024 root=5"));
    g_assert_null(strstr(r.out, "P=5 "));
    g_assert_nonnull(strstr(r.out, "# 4 cases: 4 ok, 0 failed, 0 skipped\n"));
    cs_test_run_clear(&r);
}

/* Setup: 1 TiB all-reduces on 4 ranks in 1 KiB chunks: the ring and the tree by their own
 * count of bytes over the chunk (2 (P - 1) x 1 TiB / 1 KiB = 6 G sends), the binomial tree by
 * one loop's steps times the loops.
 * Expectation: each refused at once as more steps than a schedule holds (100 M), a failed
 * case each, exit 1; nothing is built (the command returns well before 5 GB of steps). */
static void
test_verify_too_large(void)
{
    const char *args[] = { "verify", "--algo", "ring,tree,mst", "--op", "allreduce", "--ranks", "4",
                           "--size", "1T",     "--chunk",       "1K",   NULL };
    CsTestRun r = cs_test_run_collsim(NULL, args);
    g_assert_cmpint(r.status, ==, 1);
    const char *names[] = { "ring", "tree", "mst" };
    for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
        g_autofree char *line = g_strdup_printf(
            "FAIL %s allreduce P=4 size=1099511627776 root=0: %s allreduce of 1099511627776 "
            "bytes on 4 ranks and 1 channels in chunks of 1024 bytes: more than 100000000 "
            "steps, too many to hold in memory\n",
            names[i], names[i]);
        g_assert_nonnull(strstr(r.out, line));
    }
    g_assert_nonnull(strstr(r.out, "# 3 cases: 0 ok, 3 failed, 0 skipped\n"));
    cs_test_run_clear(&r);
}

/* Setup: the whole default selection on one rank count and size, and a topology.
 * Expectation: success; the topology fixes P = 8 (dgx-h100x8). */
static void
test_verify_defaults(void)
{
    const char *args[]
        = { "verify", "--ranks", "5", "--size", "4100", "--channels", "2", "--proto", "LL", NULL };
    CsTestRun r = cs_test_run_collsim(NULL, args);
    g_assert_cmpint(r.status, ==, 0);
    g_assert_nonnull(strstr(r.out, "ok ring allreduce P=5 size=4100 root=0"));
    g_assert_nonnull(strstr(r.out, "ok bruck alltoall P=5 size=4100 root=0"));
    g_assert_nonnull(strstr(r.out, " 0 failed"));
    cs_test_run_clear(&r);

    const char *topo[] = { "verify", "--topo",    "dgx-h100x8", "--algo", "ring",
                           "--op",   "allgather", "--size",     "8K",     NULL };
    r = cs_test_run_collsim(NULL, topo);
    g_assert_cmpint(r.status, ==, 0);
    g_assert_nonnull(strstr(r.out, "ok ring allgather P=8 size=8192 root=0"));
    cs_test_run_clear(&r);
}

static void
test_verify_usage(void)
{
    static const char *const bad[][8] = {
        { "verify", "--ranks", "0", NULL },
        { "verify", "--ranks", "3-1", NULL },
        { "verify", "--algo", "nosuch", NULL },
        { "verify", "--op", "nosuch", NULL },
        { "verify", "--size", "3X", NULL },
        { "verify", "--channels", "65", NULL },
        { "verify", "--proto", "LL64", NULL },
        { "verify", "--root", "-3", NULL },
        { "verify", "extra", NULL },
        { "verify", "--topo", "dgx-h100x8", "--ranks", "4", NULL },
        { "verify", "--op", "broadcast", "--ranks", "2", "--root", NULL },
    };
    for (gsize i = 0; i < G_N_ELEMENTS(bad); i++) {
        CsTestRun r = cs_test_run_collsim(NULL, bad[i]);
        g_test_message("%s -> %s", bad[i][1], r.err);
        g_assert_cmpint(r.status, ==, 2);
        g_assert_cmpstr(r.out, ==, "");
        g_assert_true(g_str_has_prefix(r.err, "collsim verify: "));
        cs_test_run_clear(&r);
    }
    /* An empty selection: no rank count above the root. */
    const char *empty[] = { "verify", "--op", "broadcast", "--ranks", "2", "--root", "3", NULL };
    CsTestRun r = cs_test_run_collsim(NULL, empty);
    g_assert_cmpint(r.status, ==, 2);
    g_assert_nonnull(strstr(r.err, "selection is empty"));
    cs_test_run_clear(&r);
}

/* Expectation: one row per registered algorithm with an x under each collective it serves:
 * ring serves allreduce and not scatter; direct the reverse; then summaries. */
static void
test_algos(void)
{
    const char *args[] = { "algos", NULL };
    CsTestRun r = cs_test_run_collsim(NULL, args);
    g_assert_cmpint(r.status, ==, 0);
    g_auto(GStrv) lines = g_strsplit(r.out, "\n", -1);
    g_assert_true(g_str_has_prefix(lines[0], "algorithm"));
    const char *header = lines[0];
    gsize col_allreduce = strstr(header, "  allreduce") - header + 2 + 4;
    /* "  scatter", not the end of "reducescatter". */
    gsize col_scatter = strstr(header, "  scatter") - header + 2 + 3;
    gboolean seen_ring = FALSE;
    gboolean seen_direct = FALSE;
    for (int i = 1; lines[i] != NULL && lines[i][0] != '\0'; i++) {
        if (g_str_has_prefix(lines[i], "ring ")) {
            g_assert_cmpint(lines[i][col_allreduce], ==, 'x');
            g_assert_cmpint(lines[i][col_scatter], ==, '-');
            seen_ring = TRUE;
        }
        if (g_str_has_prefix(lines[i], "direct ")) {
            g_assert_cmpint(lines[i][col_allreduce], ==, '-');
            g_assert_cmpint(lines[i][col_scatter], ==, 'x');
            seen_direct = TRUE;
        }
    }
    g_assert_true(seen_ring);
    g_assert_true(seen_direct);
    g_assert_nonnull(strstr(r.out, "\nring: "));
    g_assert_nonnull(strstr(r.out, "reference: "));
    cs_test_run_clear(&r);

    const char *extra[] = { "algos", "ring", NULL };
    r = cs_test_run_collsim(NULL, extra);
    g_assert_cmpint(r.status, ==, 2);
    cs_test_run_clear(&r);
    const char *help[] = { "algos", "--help", NULL };
    r = cs_test_run_collsim(NULL, help);
    g_assert_cmpint(r.status, ==, 0);
    g_assert_nonnull(strstr(r.out, "collsim algos"));
    cs_test_run_clear(&r);
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/cli/verify/ring", test_verify_ring);
    g_test_add_func("/cli/verify/mst-root", test_verify_mst_root);
    g_test_add_func("/cli/verify/root-filter", test_verify_root_filter);
    g_test_add_func("/cli/verify/defaults", test_verify_defaults);
    g_test_add_func("/cli/verify/usage", test_verify_usage);
    g_test_add_func("/cli/verify/too-large", test_verify_too_large);
    g_test_add_func("/cli/algos/table", test_algos);
    return g_test_run();
}
