// SPDX-License-Identifier: MIT
/* Tests of `collsim workload import` run as users run it ($COLLSIM_BIN): workloads from real
 * NCCL_DEBUG_SUBSYS=COLL excerpts (tests/data/nccl-logs/, each citing its source), bytes from
 * count x datatype, calls per step, communicators mapped to tp/dp/world, errors with the file
 * and line (exit 2), output replaced whole or not at all, and `collsim plan` on the result. */
#include "config.h"

#include <string.h>

#include <cjson/cJSON.h>
#include <glib.h>
#include <glib/gstdio.h>

#include "base/json_util.h"
#include "test-workload-util.h"

static char *scratch;

static char *
data_path(const char *name)
{
    return g_test_build_filename(G_TEST_DIST, "data", "nccl-logs", name, NULL);
}

/* Writes @text to @name in the scratch folder. (transfer full) */
static char *
write_scratch(const char *name, const char *text)
{
    return cs_test_write_file(scratch, name, text);
}

/* `collsim workload import ARGS...` that fails: exit 2, stderr holding @want, nothing on
 * stdout. */
static void
import_fails(const char *const *args, const char *want)
{
    g_auto(CsTestRun) r = cs_test_run_collsim("workload", args);
    g_assert_cmpint(r.status, ==, 2);
    g_assert_cmpstr(r.out, ==, "");
    if (strstr(r.err, want) == NULL)
        g_error("stderr \"%s\" does not say \"%s\"", r.err, want);
}

static void
assert_layout(const cJSON *w, int tp, int dp, int pp)
{
    const cJSON *layout = cs_test_member(w, "layout");
    g_assert_cmpint(cs_test_member(layout, "tp")->valueint, ==, tp);
    g_assert_cmpint(cs_test_member(layout, "dp")->valueint, ==, dp);
    g_assert_cmpint(cs_test_member(layout, "pp")->valueint, ==, pp);
}

static int
n_phases(const cJSON *w)
{
    return cJSON_GetArraySize(cs_test_member(w, "phases"));
}

static int
n_colls(const cJSON *w, int p)
{
    return cJSON_GetArraySize(
        cs_test_member(cs_test_at(cs_test_member(w, "phases"), p), "collectives"));
}

/* ---- Real excerpts ---- */

static void
test_real_allreduce(void)
{
    g_test_summary("github.com/NVIDIA/nccl/issues/203 (one process, 2 GPUs): the first rank's "
                   "three float32 all-reduces, bytes = count x 4, on the 2-rank world");
    g_autofree char *log = data_path("nccl-203-tensorflow-2gpu.log");
    g_autofree char *err = NULL;
    const char *args[] = { "import", log, NULL };
    g_autoptr(cJSON) w = cs_test_import_ok(args, &err);
    assert_layout(w, 1, 2, 1);
    g_assert_cmpint(n_phases(w), ==, 1);
    g_assert_cmpstr(cs_test_member(cs_test_at(cs_test_member(w, "phases"), 0), "name")->valuestring,
                    ==, "world comm 1");
    g_assert_cmpint(n_colls(w, 0), ==, 3);
    cs_test_assert_coll(w, 0, 0, "allreduce", "256", 1, "world");     /* 64 x 4 */
    cs_test_assert_coll(w, 0, 1, "allreduce", "948736", 1, "world");  /* 237184 x 4 */
    cs_test_assert_coll(w, 0, 2, "allreduce", "1546240", 1, "world"); /* 386560 x 4 */
    g_assert_nonnull(strstr(err, "7 collective lines of 2 ranks; other lines skipped: 1"));
    g_assert_nonnull(strstr(err, "comm 0x7f0c741162f0 (2 ranks, opCount 1a to 1c, 3 calls)"));
    const char *notes = cs_test_member(w, "notes")->valuestring;
    g_assert_nonnull(strstr(notes, "those of rank gpu1:13135:0 taken"));

    /* The other device's rank has the fourth call, opCount 1d: 8192 x 4 bytes. */
    const char *args1[] = { "import", "--rank", "gpu1:13135:1", log, NULL };
    g_autoptr(cJSON) w1 = cs_test_import_ok(args1, NULL);
    g_assert_cmpint(n_colls(w1, 0), ==, 4);
    cs_test_assert_coll(w1, 0, 3, "allreduce", "32768", 1, "world");

    const char *bad_rank[] = { "import", "--rank", "gpu1:13135:7", log, NULL };
    import_fails(bad_rank, "--rank gpu1:13135:7: not in the log (its ranks: gpu1:13135:0, "
                           "gpu1:13135:1)");
}

static void
test_real_tp_gather_scatter(void)
{
    g_test_summary("github.com/pytorch/torchtitan/issues/1369: AllGather's and ReduceScatter's "
                   "count is per rank, so bytes = count x 4 x 2 ranks; identical calls counted");
    g_autofree char *log = data_path("torchtitan-1369-tp2.log");
    const char *args[] = { "import", log, NULL };
    g_autoptr(cJSON) w = cs_test_import_ok(args, NULL);
    /* rank hopper01:191370:1: AllGather (opCount d), ReduceScatter (e), AllGather (f) */
    g_assert_cmpint(n_colls(w, 0), ==, 2);
    cs_test_assert_coll(w, 0, 0, "allgather", "16777216", 2, "world");
    cs_test_assert_coll(w, 0, 1, "reducescatter", "16777216", 1, "world");

    /* rank hopper01:191369:0 (two threads): ReduceScatter, AllGather, 2 AllReduce of one
     * float32 */
    const char *args0[] = { "import", "--rank", "hopper01:191369:0", log, NULL };
    g_autoptr(cJSON) w0 = cs_test_import_ok(args0, NULL);
    g_assert_cmpint(n_colls(w0, 0), ==, 3);
    cs_test_assert_coll(w0, 0, 0, "reducescatter", "16777216", 1, "world");
    cs_test_assert_coll(w0, 0, 1, "allgather", "16777216", 1, "world");
    cs_test_assert_coll(w0, 0, 2, "allreduce", "4", 2, "world");
}

static void
test_real_prefixes(void)
{
    g_test_summary("Real logs with Ray's prefixes (nccl#1193, 128 ranks), lines of two processes "
                   "run together (nccl#147) and a '[2]' after NCCL INFO (nccl#1352)");
    g_autofree char *ray = data_path("nccl-1193-ray-128.log");
    const char *args[]
        = { "import", "--rank", "r24-02-22-23-29-0066-raycluster-lv52c-worker-l4-8-srrss:22754:5",
            ray, NULL };
    g_autoptr(cJSON) w = cs_test_import_ok(args, NULL);
    assert_layout(w, 1, 128, 1);
    cs_test_assert_coll(w, 0, 0, "allreduce", "29528912", 1, "world"); /* 7382228 x 4 */
    cs_test_assert_coll(w, 0, 1, "allreduce", "28266288", 1, "world"); /* 7066572 x 4 */

    /* Rank learnfair062:32617:1: an int64 broadcast of 53 (424 bytes) then a float16 one of
     * 25503912 (51007824 bytes); rank 32629:7 is read from the line that holds two prefixes. */
    g_autofree char *ddp = data_path("nccl-147-ddp-interleaved.log");
    g_autofree char *err = NULL;
    const char *args1[] = { "import", "--rank", "learnfair062:32617:1", ddp, NULL };
    g_autoptr(cJSON) w1 = cs_test_import_ok(args1, &err);
    assert_layout(w1, 1, 8, 1);
    cs_test_assert_coll(w1, 0, 0, "broadcast", "424", 1, "world");
    cs_test_assert_coll(w1, 0, 1, "broadcast", "51007824", 1, "world");
    g_assert_nonnull(strstr(err, "6 collective lines of 5 ranks; other lines skipped: 2"));
    const char *args2[] = { "import", "--rank", "learnfair062:32629:7", ddp, NULL };
    g_autoptr(cJSON) w2 = cs_test_import_ok(args2, NULL);
    cs_test_assert_coll(w2, 0, 0, "broadcast", "424", 1, "world");

    /* One uint8 all-reduce (1 byte) and an int8 all-gather of 8 per rank (32 bytes on 4
     * ranks): written as plan's smallest sizes, 4 bytes and 16 x 4 = 64 bytes, and said so. */
    g_autofree char *bracket = data_path("nccl-1352-bracket-rank.log");
    const char *args3[] = { "import", bracket, NULL };
    g_autoptr(cJSON) w3 = cs_test_import_ok(args3, NULL);
    assert_layout(w3, 1, 4, 1);
    cs_test_assert_coll(w3, 0, 0, "allreduce", "4", 2, "world");
    cs_test_assert_coll(w3, 0, 1, "allgather", "64", 1, "world");
    g_assert_nonnull(strstr(cs_test_member(w3, "notes")->valuestring,
                            "3 calls smaller than collsim plan's smallest size"));
}

static void
test_steps(void)
{
    g_test_summary("--steps N divides each call's number by N, and refuses a number N does not "
                   "divide, naming the call and its opCount range");
    g_autofree char *log = data_path("nccl-1238-nranks1.log");
    const char *args[] = { "import", "--steps", "4", log, NULL };
    g_autoptr(cJSON) w = cs_test_import_ok(args, NULL);
    assert_layout(w, 1, 1, 1);
    cs_test_assert_coll(w, 0, 0, "allreduce", "134217728", 1,
                        "world"); /* 33554432 x 4, 4 calls / 4 */
    const char *args2[] = { "import", "--steps", "2", log, NULL };
    g_autoptr(cJSON) w2 = cs_test_import_ok(args2, NULL);
    cs_test_assert_coll(w2, 0, 0, "allreduce", "134217728", 2, "world");
    const char *bad[] = { "import", "--steps", "3", log, NULL };
    import_fails(bad, "AllReduce of count 33554432 ncclFloat32 (comm 0x5631f0816b40, opCount 0 "
                      "to 0) is called 4 times, not a multiple of --steps 3");
    const char *zero[] = { "import", "--steps", "0", log, NULL };
    import_fails(zero, "--steps 0: at least 1");
}

static void
test_errors(void)
{
    g_test_summary("A cut-short line (nccl#740 as pasted) is an error naming FILE:LINE, exit 2, "
                   "and an existing output file is left as it was; a log of only Send/Recv "
                   "(nccl#584) or of no collective line is an error saying so");
    g_autofree char *wrapped = data_path("nccl-740-broadcast-wrapped.log");
    g_autofree char *out = write_scratch("kept.json", "old contents\n");
    const char *args[] = { "import", "-o", out, wrapped, NULL };
    g_autofree char *want = g_strdup_printf("collsim workload import: %s:2: Broadcast line: the "
                                            "line ends after \"stream\" (cut short?)\n",
                                            wrapped);
    {
        g_auto(CsTestRun) r = cs_test_run_collsim("workload", args);
        g_assert_cmpint(r.status, ==, 2);
        g_assert_cmpstr(r.err, ==, want);
    }
    g_autofree char *kept = NULL;
    g_assert_true(g_file_get_contents(out, &kept, NULL, NULL));
    g_assert_cmpstr(kept, ==, "old contents\n");

    g_autofree char *p2p = data_path("nccl-584-sendrecv.log");
    const char *args2[] = { "import", p2p, NULL };
    import_fails(args2, "rank ubuntu:199574:1 called no collective a workload takes (AllReduce, "
                        "AllGather, ReduceScatter, Broadcast, AlltoAll) with a non-zero count; "
                        "it called 6 Send, 1 Recv");

    g_autofree char *none = write_scratch("none.log", "h:1:2 [0] NCCL INFO Bootstrap : Using "
                                                      "eth0\nplain text\n");
    const char *args3[] = { "import", none, NULL };
    import_fails(args3, "no NCCL collective line (\"NCCL INFO AllReduce: opCount ...\") in 2 "
                        "lines: run with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=COLL");
    const char *args4[] = { "import", NULL };
    import_fails(args4, "a LOG file is required");
    const char *args5[] = { "import", "/nonexistent/run.log", NULL };
    import_fails(args5, "/nonexistent/run.log: cannot read:");
    const char *args6[] = { "frobnicate", NULL };
    import_fails(args6, "unknown command (import)");
}

/* ---- Communicators to groups ---- */

/* A COLL line of rank h:1:0 in the layout NCCL 2.30 prints (src/enqueue.cc). */
static void
add_line(GString *s, int op_count, const char *name, long count, int datatype, const char *comm,
         int nranks)
{
    g_string_append_printf(s,
                           "h:1:7 [0] NCCL INFO %s: opCount %x sendbuff 0x7f0000000000 recvbuff "
                           "0x7f0000100000 count %ld datatype %d op 0 root 0 comm %s [nranks=%d] "
                           "stream 0x55bb00000000\n",
                           name, op_count, count, datatype, comm, nranks);
}

/* One rank of a TP 8 x DP 2 job (a Megatron-style step, written for this test): two TP
 * all-reduces of bf16 activations on the 8-rank communicator, a DP reduce-scatter and
 * all-gather of bf16 gradients on the 2-rank one, a loss all-reduce on the 16-rank world and
 * a pipeline Send on a 2-rank point-to-point communicator; twice (2 steps). */
static char *
tp_dp_log(gboolean with_world)
{
    GString *s = g_string_new("h:1:7 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n");
    int op = 0;
    for (int step = 0; step < 2; step++) {
        add_line(s, op++, "AllReduce", 25165824, 9, "0xa000", 8);
        add_line(s, op++, "AllReduce", 25165824, 9, "0xa000", 8);
        add_line(s, op, "ReduceScatter", 1000000, 9, "0xb000", 2);
        add_line(s, op + 1, "AllGather", 1000000, 9, "0xb000", 2);
        if (with_world)
            add_line(s, step, "AllReduce", 1, 7, "0xc000", 16);
        add_line(s, step, "Send", 4096, 9, "0xd000", 2);
    }
    return g_string_free(s, FALSE);
}

static void
test_groups(void)
{
    g_test_summary("Communicators of 8, 2 and 16 ranks become tp 8, dp 2 and world (the smallest "
                   "size below the world is tp unless --tp says otherwise); a 2-rank Send-only "
                   "communicator is left out and said so");
    g_autofree char *text = tp_dp_log(TRUE);
    g_autofree char *log = write_scratch("tp-dp.log", text);
    g_autofree char *err = NULL;
    /* Sizes below the world: 2 (dp's communicator) and 8: the smaller, 2, is taken as tp by
     * default; --tp 8 puts them right. */
    const char *args[] = { "import", "--steps", "2", "--tp", "8", log, NULL };
    g_autoptr(cJSON) w = cs_test_import_ok(args, &err);
    assert_layout(w, 8, 2, 1);
    g_assert_cmpint(n_phases(w), ==, 3);
    g_assert_cmpstr(cs_test_member(cs_test_at(cs_test_member(w, "phases"), 0), "name")->valuestring,
                    ==, "tp comm 1");
    cs_test_assert_coll(w, 0, 0, "allreduce", "50331648", 2, "tp");    /* 25165824 x 2 bytes */
    cs_test_assert_coll(w, 1, 0, "reducescatter", "4000000", 1, "dp"); /* 1e6 x 2 x 2 ranks */
    cs_test_assert_coll(w, 1, 1, "allgather", "4000000", 1, "dp");
    cs_test_assert_coll(w, 2, 0, "allreduce", "4", 1, "world");
    g_assert_nonnull(strstr(err, "layout tp 8 x dp 2 x pp 1 = 16 ranks"));
    g_assert_nonnull(strstr(err, "comm 0xd000 (2 ranks, opCount 0 to 1, 2 calls): left out"));
    g_assert_nonnull(strstr(err, "left out 2 Send (no such operation in a workload)"));
    g_assert_nonnull(strstr(cs_test_member(w, "notes")->valuestring,
                            "Left out (no such operation in "
                            "the format): 2 Send."));

    const char *dflt[] = { "import", "--steps", "2", log, NULL };
    g_autoptr(cJSON) wd = cs_test_import_ok(dflt, NULL);
    assert_layout(wd, 2, 8, 1);
    cs_test_assert_coll(wd, 0, 0, "allreduce", "50331648", 2, "dp");
    cs_test_assert_coll(wd, 1, 0, "reducescatter", "4000000", 1, "tp");

    /* --group names one communicator: the 8-rank one as tp settles both. */
    const char *named[] = { "import", "--steps", "2", "--group", "0xa000=tp", log, NULL };
    g_autoptr(cJSON) wn = cs_test_import_ok(named, NULL);
    assert_layout(wn, 8, 2, 1);
    cs_test_assert_coll(wn, 1, 0, "reducescatter", "4000000", 1, "dp");

    /* Without the world communicator the job's size is not in the log: --world says it. */
    g_autofree char *text2 = tp_dp_log(FALSE);
    g_autofree char *log2 = write_scratch("tp-dp-noworld.log", text2);
    const char *world[] = { "import", "--steps", "2", "--world", "16", "--tp", "8", log2, NULL };
    g_autoptr(cJSON) ww = cs_test_import_ok(world, NULL);
    assert_layout(ww, 8, 2, 1);
    cs_test_assert_coll(ww, 0, 0, "allreduce", "50331648", 2, "tp");
    /* ... and with --world 32 the rest is pp 2. */
    const char *pp[] = { "import", "--steps", "2", "--world", "32", "--tp", "8", log2, NULL };
    g_autoptr(cJSON) wp = cs_test_import_ok(pp, NULL);
    assert_layout(wp, 8, 2, 2);
}

static void
test_group_errors(void)
{
    g_test_summary("What the layout cannot hold is refused with what to set: two communicators "
                   "the size of both tp and dp, a size that does not divide the world, three "
                   "sizes below the world, a --group that names no communicator");
    GString *s = g_string_new(NULL);
    add_line(s, 0, "AllReduce", 1024, 7, "0xa000", 4);
    add_line(s, 0, "AllReduce", 2048, 7, "0xb000", 4);
    add_line(s, 0, "AllReduce", 1, 7, "0xc000", 16);
    g_autofree char *text = g_string_free(s, FALSE);
    g_autofree char *log = write_scratch("tp4-dp4.log", text);
    const char *amb[] = { "import", log, NULL };
    import_fails(amb, "communicator 0xa000 has 4 ranks, the size of both tp and dp: say which "
                      "with --group 0xa000=tp or =dp");
    const char *ok[] = { "import", "--group", "0xa000=tp", "--group", "0xb000=dp", log, NULL };
    g_autoptr(cJSON) w = cs_test_import_ok(ok, NULL);
    assert_layout(w, 4, 4, 1);
    cs_test_assert_coll(w, 0, 0, "allreduce", "4096", 1, "tp");
    cs_test_assert_coll(w, 1, 0, "allreduce", "8192", 1, "dp");
    const char *nocomm[] = { "import", "--group", "0xe000=tp", log, NULL };
    import_fails(nocomm, "--group \"0xe000=tp\": rank h:1:0 has no communicator 0xe000");
    const char *badg[] = { "import", "--group", "0xa000=ep", log, NULL };
    import_fails(badg, "--group \"0xa000=ep\": \"ep\" is not tp, dp or world");
    const char *wrong[] = { "import", "--group", "0xc000=tp", log, NULL };
    import_fails(wrong, "tp 16 x dp 4 does not divide the world of 16 ranks: the layout is tp x "
                        "dp x pp (set --world, --tp or --group)");

    const char *tp_vs[] = { "import", "--tp", "2", "--group", "0xa000=tp", log, NULL };
    import_fails(tp_vs, "--tp 2, but --group names a communicator of 4 ranks tp");
    const char *world[] = { "import", "--world", "32", "--group", "0xc000=world", log, NULL };
    import_fails(world, "--group 0xc000=world: the communicator has 16 ranks, the layout's world "
                        "32");

    GString *s3 = g_string_new(NULL);
    add_line(s3, 0, "AllReduce", 1024, 7, "0xa000", 3);
    add_line(s3, 0, "AllReduce", 1, 7, "0xc000", 16);
    g_autofree char *text3 = g_string_free(s3, FALSE);
    g_autofree char *log3 = write_scratch("three.log", text3);
    const char *three[] = { "import", log3, NULL };
    import_fails(three, "tp 3 does not divide the world of 16 ranks");

    GString *s4 = g_string_new(NULL);
    add_line(s4, 0, "AllReduce", 1024, 7, "0xa000", 2);
    add_line(s4, 0, "AllReduce", 1024, 7, "0xb000", 4);
    add_line(s4, 0, "AllReduce", 1024, 7, "0xd000", 8);
    add_line(s4, 0, "AllReduce", 1, 7, "0xc000", 64);
    g_autofree char *text4 = g_string_free(s4, FALSE);
    g_autofree char *log4 = write_scratch("sizes.log", text4);
    const char *sizes[] = { "import", log4, NULL };
    import_fails(sizes, "communicators of tp 2, dp 4 and more sizes (8) below the world of 64 "
                        "ranks");
}

static void
test_same_bytes_join(void)
{
    g_test_summary("Calls of one collective with the same bytes in two datatypes (4 float32, 8 "
                   "bfloat16) are one workload collective; a count-0 call moves nothing and is "
                   "left out");
    GString *s = g_string_new(NULL);
    add_line(s, 0, "AllReduce", 4, 7, "0xa000", 2);
    add_line(s, 1, "AllReduce", 8, 9, "0xa000", 2);
    add_line(s, 2, "AllReduce", 8, 9, "0xa000", 2);
    add_line(s, 3, "AllReduce", 0, 7, "0xa000", 2);
    g_autofree char *text = g_string_free(s, FALSE);
    g_autofree char *log = write_scratch("join.log", text);
    const char *args[] = { "import", log, NULL };
    g_autoptr(cJSON) w = cs_test_import_ok(args, NULL);
    g_assert_cmpint(n_colls(w, 0), ==, 1);
    cs_test_assert_coll(w, 0, 0, "allreduce", "16", 3, "world");
}

/* ---- The result in collsim plan ---- */

static void
test_plan_takes_it(void)
{
    g_test_summary("`collsim plan` takes the imported workload (written atomically with -o) and "
                   "predicts each imported collective with the group's ranks and bytes");
    g_autofree char *log = data_path("torchtitan-1369-tp2.log");
    g_autofree char *out = write_scratch("tt.json", "old\n");
    const char *args[] = { "import", "-o", out, log, NULL };
    {
        g_auto(CsTestRun) r = cs_test_run_collsim("workload", args);
        g_assert_cmpint(r.status, ==, 0);
        g_assert_cmpstr(r.out, ==, "");
    }
    const char *plan[] = { "--workload", out, "--topo", "dgx-h100x8", "--format", "json", NULL };
    g_auto(CsTestRun) r = cs_test_run_collsim("plan", plan);
    g_assert_cmpstr(r.err, ==, "");
    g_assert_cmpint(r.status, ==, 0);
    g_autoptr(cJSON) root = cJSON_Parse(r.out);
    g_assert_nonnull(root);
    const cJSON *phase = cs_test_at(
        cs_test_member(cs_test_at(cs_test_member(root, "candidates"), 0), "phases"), 0);
    g_assert_cmpstr(cs_test_member(phase, "name")->valuestring, ==, "world comm 1");
    const cJSON *c0 = cs_test_at(cs_test_member(phase, "collectives"), 0);
    g_assert_cmpstr(cs_test_member(c0, "op")->valuestring, ==, "allgather");
    g_assert_cmpint(cs_test_member(c0, "ranks")->valueint, ==, 2);
    g_assert_cmpfloat(cs_test_member(c0, "bytes")->valuedouble, ==, 16777216);
    g_assert_cmpint(cs_test_member(c0, "count")->valueint, ==, 2);
    g_assert_cmpfloat(cs_test_member(c0, "time_us")->valuedouble, >, 0);
    /* comm = 2 x the all-gather + the reduce-scatter */
    const cJSON *c1 = cs_test_at(cs_test_member(phase, "collectives"), 1);
    g_assert_cmpfloat_with_epsilon(cs_test_member(phase, "comm_us")->valuedouble,
                                   2 * cs_test_member(c0, "time_us")->valuedouble
                                       + cs_test_member(c1, "time_us")->valuedouble,
                                   1e-6);
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    scratch = g_dir_make_tmp("collsim-workload-XXXXXX", NULL);
    g_assert_nonnull(scratch);
    g_test_add_func("/cli/workload/import/real-allreduce", test_real_allreduce);
    g_test_add_func("/cli/workload/import/real-gather-scatter", test_real_tp_gather_scatter);
    g_test_add_func("/cli/workload/import/real-prefixes", test_real_prefixes);
    g_test_add_func("/cli/workload/import/steps", test_steps);
    g_test_add_func("/cli/workload/import/errors", test_errors);
    g_test_add_func("/cli/workload/groups/tp-dp-world", test_groups);
    g_test_add_func("/cli/workload/groups/errors", test_group_errors);
    g_test_add_func("/cli/workload/import/same-bytes-join", test_same_bytes_join);
    g_test_add_func("/cli/workload/plan-takes-it", test_plan_takes_it);
    int status = g_test_run();
    g_autoptr(GDir) dir = g_dir_open(scratch, 0, NULL);
    const char *name;
    while (dir != NULL && (name = g_dir_read_name(dir)) != NULL) {
        g_autofree char *path = g_build_filename(scratch, name, NULL);
        g_unlink(path);
    }
    g_rmdir(scratch);
    g_free(scratch);
    return status;
}
