// SPDX-License-Identifier: MIT
/* Tests of the NCCL_DEBUG_SUBSYS=COLL line reader and its sum (src/base/nccl_log.c): every
 * field of a line, the rank from the prefixes real logs carry, lines that are not collectives,
 * lines cut short or garbled (and where they are), and the real excerpts in
 * tests/data/nccl-logs/ summed per rank and communicator. */
#include "config.h"

#include <string.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "base/nccl_log.h"

static char *
data_path(const char *name)
{
    return g_test_build_filename(G_TEST_DIST, "data", "nccl-logs", name, NULL);
}

/* The first line of github.com/NVIDIA/nccl/issues/1193: NCCL's own prefix behind Ray's. */
static const char ray_line[]
    = "(RayTrainWorker pid=615, ip=10.72.7.6) "
      "r24-02-22-23-29-0066-raycluster-lv52c-worker-l4-8-fqztx:615:18953 [2] NCCL INFO "
      "AllReduce: opCount 139d sendbuff 0x78d056200000 recvbuff 0x78d056200000 count 7382228 "
      "datatype 7 op 0 root 0 comm 0x78cfda045840 [nranks=128] stream 0x78d07125e5e0";

static void
test_line_fields(void)
{
    g_test_summary("Every field of a real NCCL 2.x COLL line is read; the rank is HOST:PID:DEV "
                   "from NCCL's prefix, wherever a launcher's prefix puts it");
    CsNcclLogLine l;
    g_autoptr(GError) error = NULL;
    g_assert_cmpint(cs_nccl_log_parse_line(ray_line, &l, &error), ==, CS_NCCL_LOG_LINE_COLLECTIVE);
    g_assert_no_error(error);
    g_assert_cmpstr(l.name, ==, "AllReduce");
    g_assert_cmpstr(l.rank, ==, "r24-02-22-23-29-0066-raycluster-lv52c-worker-l4-8-fqztx:615:2");
    g_assert_cmpuint(l.op_count, ==, 0x139d);
    g_assert_cmpuint(l.count, ==, 7382228);
    g_assert_cmpint(l.datatype, ==, 7);
    g_assert_cmpint(l.redop, ==, 0);
    g_assert_cmpint(l.root, ==, 0);
    g_assert_cmpuint(l.comm, ==, 0x78cfda045840);
    g_assert_cmpint(l.nranks, ==, 128);

    /* Send from github.com/NVIDIA/nccl/issues/584: "(nil)" buffers, root is the peer. */
    const char send[] = "ubuntu:199574:201142 [1] NCCL INFO Send: opCount d60 sendbuff "
                        "0x7f50e6f3c000 recvbuff (nil) count 2420736 datatype 7 op 0 root 0 "
                        "comm 0x7f516c002e10 [nranks=2] stream 0x55f1de7279a0";
    g_assert_cmpint(cs_nccl_log_parse_line(send, &l, &error), ==, CS_NCCL_LOG_LINE_COLLECTIVE);
    g_assert_cmpstr(l.name, ==, "Send");
    g_assert_cmpstr(l.rank, ==, "ubuntu:199574:1");
    g_assert_cmpuint(l.op_count, ==, 0xd60);
}

typedef struct {
    const char *line;
    const char *rank;
} RankCase;

static void
test_line_prefixes(void)
{
    g_test_summary("The rank comes from the last 'HOST:PID:TID [DEV] NCCL INFO' before the call: "
                   "after another process's text, a timestamp, or a '[N]' some builds add; '-' "
                   "when the line has no prefix");
    static const RankCase cases[] = {
        /* github.com/NVIDIA/nccl/issues/147: two processes' text in one line */
        { "learnfair062:32619:32711 [2] NCCL INFO learnfair062:32629:32629 [7] NCCL INFO "
          "Broadcast: opCount 0 sendbuff 0x7f372c7f5400 recvbuff 0x7f372c7f5400 count 53 "
          "datatype 4 op 0 root 0 comm 0x7f372005a260 [nranks=8] stream 0x5599dafdc1f0",
          "learnfair062:32629:7" },
        /* the same issue: the rest of a line whose prefix went to another line */
        { "Broadcast: opCount 1 sendbuff 0x7f5836000000 recvbuff 0x7f5836000000 count 25503912 "
          "datatype 6 op 0 root 0 comm 0x7f584405a260 [nranks=8] stream 0x563448681ac0",
          "-" },
        /* github.com/NVIDIA/nccl/issues/1352: "[2]" after NCCL INFO */
        { "srv01:2016601:2016601 [0] NCCL INFO [2] AllReduce: opCount e sendbuff 0x7fc0626a1c00 "
          "recvbuff 0x7fc0626a1c00 count 1 datatype 1 op 0 root 0 comm 0x5558715599c0 "
          "[nranks=4] stream 0x555870f12040",
          "srv01:2016601:0" },
        /* src/debug.cc's default timestamp "[%F %T] " (NCCL_DEBUG_TIMESTAMP_LEVELS) */
        { "[2025-03-01 10:00:00] node7:4242:4250 [3] NCCL INFO AllGather: opCount 2 sendbuff "
          "0x7f0000000000 recvbuff 0x7f0000100000 count 1024 datatype 9 op 0 root 0 comm "
          "0x55aa00000000 [nranks=8] stream 0x55bb00000000\r",
          "node7:4242:3" },
        /* a host name with colons in it keeps them: PID and TID are the last two fields */
        { "a:b:12:13 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x1 count 1 "
          "datatype 7 op 0 root 0 comm 0x2 [nranks=2] stream 0x3",
          "a:b:12:0" },
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        CsNcclLogLine l;
        g_autoptr(GError) error = NULL;
        const CsNcclLogLineKind kind = cs_nccl_log_parse_line(cases[i].line, &l, &error);
        g_assert_no_error(error);
        g_assert_cmpint(kind, ==, CS_NCCL_LOG_LINE_COLLECTIVE);
        g_assert_cmpstr(l.rank, ==, cases[i].rank);
    }
}

static void
test_line_other(void)
{
    g_test_summary("Lines that are not a collective's INFO line are other lines, not errors");
    static const char *const lines[] = {
        "",
        "learnfair062:32615:32615 [0] NCCL INFO Launch mode Parallel",
        "myles-MC62-G40-00:6742:6769 [3] NCCL INFO Channel 00/0 : 3[3] -> 2[2] via P2P/direct "
        "pointer",
        /* src/enqueue.cc's TRACE line (NCCL_DEBUG=TRACE) */
        "h:1:2 [0] 12.5 computeColl:1394 NCCL TRACE opCount 1f slicesteps 2 spl 2 cpl 4 nbytes "
        "1048576 -> protocol 2 nchannels 8",
        /* the TUNING subsystem */
        "h:1:2 [0] NCCL INFO AllReduce: 1048576 Bytes -> Algo 1 proto 2 time 13.2",
        "#  out-of-place                       in-place",
    };
    for (gsize i = 0; i < G_N_ELEMENTS(lines); i++) {
        CsNcclLogLine l;
        g_autoptr(GError) error = NULL;
        g_assert_cmpint(cs_nccl_log_parse_line(lines[i], &l, &error), ==, CS_NCCL_LOG_LINE_OTHER);
        g_assert_no_error(error);
    }
}

typedef struct {
    const char *tail; /* what follows "h:1:2 [0] NCCL INFO " */
    const char *why;  /* a part of the message */
} BadCase;

static void
test_line_malformed(void)
{
    g_test_summary("A collective's line cut short or garbled anywhere up to its stream is "
                   "refused with the reason, so a cut count is never read as a smaller call");
    static const BadCase cases[] = {
        { "AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x1 count 16384 datatype 0 op 0 root 3 comm "
          "0x155468002fb0 [nranks=8] stream",
          "AllReduce line: the line ends after \"stream\" (cut short?)" },
        { "AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x1 count 163", "ends before \"datatype\"" },
        { "AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x1 count", "ends after \"count\"" },
        { "AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x1 count 12a datatype 7 op 0 root 0 comm "
          "0x2 "
          "[nranks=2] stream 0x3",
          "count \"12a\" is not a whole number" },
        { "AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x1 count -5 datatype 7 op 0 root 0 comm 0x2 "
          "[nranks=2] stream 0x3",
          "count \"-5\" is not a whole number" },
        { "AllReduce: opCount zz sendbuff 0x1 recvbuff 0x1 count 1 datatype 7 op 0 root 0 comm 0x2 "
          "[nranks=2] stream 0x3",
          "opCount \"zz\" is not a hexadecimal number" },
        { "AllReduce: opCount 0 sendbuff 1234 recvbuff 0x1 count 1 datatype 7 op 0 root 0 comm 0x2 "
          "[nranks=2] stream 0x3",
          "sendbuff \"1234\" is not an address" },
        { "AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x1 count 1 datatype 12 op 0 root 0 comm 0x2 "
          "[nranks=2] stream 0x3",
          "datatype 12 is not an NCCL datatype" },
        { "AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x1 count 1 datatype 7 op 0 root 0 comm "
          "(nil) [nranks=2] stream 0x3",
          "comm (nil)" },
        { "AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x1 count 1 datatype 7 op 0 root 0 comm 0x2 "
          "[nranks=0] stream 0x3",
          "[nranks=0]: a communicator has 1 to" },
        { "AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x1 count 1 datatype 7 op 0 root 0 comm 0x2 "
          "nranks=2 stream 0x3",
          "\"nranks=2\" where \"[nranks=N]\" belongs" },
        { "AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x1 count 1 datatype 7 op 0 root 0 comm 0x2 "
          "[nranks=2] stream 0x3 h:1:2 [1] NCCL INFO AllReduce: opCount 0",
          "two lines run together?" },
        { "AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x1 count 1 datatype 7 op 0 root 0 comm 0x2 "
          "[nranks=2] stream 0x3 0x4",
          "\"0x4\" after the stream" },
        { "AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x1 count 281474976710657 datatype 7 op 0 "
          "root 0 comm 0x2 [nranks=2] stream 0x3",
          "more than 1 PiB" },
        { "AllReduce: opCount 0 recvbuff 0x1 count 1 datatype 7 op 0 root 0 comm 0x2 [nranks=2] "
          "stream 0x3",
          "\"recvbuff\" where \"sendbuff\" belongs" },
        { "All-Reduce: opCount 0", "no collective's name before \"opCount\"" },
        /* a 70-digit count: refused, quoted cut to 60 characters */
        { "AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x1 count "
          "1234567890123456789012345678901234567890123456789012345678901234567890 datatype 7 op 0 "
          "root 0 comm 0x2 [nranks=2] stream 0x3",
          "count \"123456789012345678901234567890123456789012345678901234567890...\" is not a "
          "whole number" },
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *line = g_strconcat("h:1:2 [0] NCCL INFO ", cases[i].tail, NULL);
        CsNcclLogLine l;
        g_autoptr(GError) error = NULL;
        g_assert_cmpint(cs_nccl_log_parse_line(line, &l, &error), ==, CS_NCCL_LOG_LINE_MALFORMED);
        g_assert_error(error, CS_NCCL_LOG_ERROR, CS_NCCL_LOG_ERROR_MALFORMED);
        if (strstr(error->message, cases[i].why) == NULL)
            g_error("case %zu: \"%s\" does not say \"%s\"", i, error->message, cases[i].why);
    }
    /* The largest count that fits: 2^50 bytes of int8. */
    g_autofree char *edge = g_strdup_printf(
        "h:1:2 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x1 count %" G_GINT64_FORMAT
        " datatype 0 op 0 root 0 comm 0x2 [nranks=2] stream 0x3",
        CS_NCCL_LOG_MAX_BYTES);
    CsNcclLogLine l;
    g_assert_cmpint(cs_nccl_log_parse_line(edge, &l, NULL), ==, CS_NCCL_LOG_LINE_COLLECTIVE);
}

static void
test_datatypes(void)
{
    /* ncclDataType_t in NCCL 2.30 src/nccl.h.in */
    g_assert_cmpint(cs_nccl_log_datatype_size(0), ==, 1);
    g_assert_cmpint(cs_nccl_log_datatype_size(4), ==, 8);
    g_assert_cmpint(cs_nccl_log_datatype_size(6), ==, 2);
    g_assert_cmpint(cs_nccl_log_datatype_size(7), ==, 4);
    g_assert_cmpint(cs_nccl_log_datatype_size(9), ==, 2);
    g_assert_cmpint(cs_nccl_log_datatype_size(11), ==, 1);
    g_assert_cmpint(cs_nccl_log_datatype_size(12), ==, 0);
    g_assert_cmpint(cs_nccl_log_datatype_size(-1), ==, 0);
    g_assert_cmpstr(cs_nccl_log_datatype_name(9), ==, "ncclBfloat16");
}

static const CsNcclLogComm *
comm_of(const CsNcclLogRank *rank, guint i)
{
    g_assert_cmpuint(i, <, rank->comms->len);
    return g_ptr_array_index(rank->comms, i);
}

static const CsNcclLogCall *
call_of(const CsNcclLogComm *comm, guint i)
{
    g_assert_cmpuint(i, <, comm->call_list->len);
    return &g_array_index(comm->call_list, CsNcclLogCall, i);
}

static void
test_file_sums(void)
{
    g_test_summary("Real excerpts summed per rank (host, pid, device), communicator and "
                   "identical call, with their opCount ranges; other lines counted");
    /* github.com/NVIDIA/nccl/issues/203: one process, two devices, two communicators of one
     * 2-rank clique; device 1 has one more call (opCount 1d) than device 0. */
    g_autofree char *path = data_path("nccl-203-tensorflow-2gpu.log");
    g_autoptr(CsNcclLog) log = cs_nccl_log_new();
    g_autoptr(GError) error = NULL;
    g_assert_true(cs_nccl_log_add_file(log, path, &error));
    g_assert_no_error(error);
    g_assert_cmpint(cs_nccl_log_n_collective_lines(log), ==, 7);
    g_assert_cmpint(cs_nccl_log_n_other_lines(log), ==, 1); /* the "# source" line */
    const GPtrArray *ranks = cs_nccl_log_ranks(log);
    g_assert_cmpuint(ranks->len, ==, 2);
    const CsNcclLogRank *r1 = cs_nccl_log_find_rank(log, "gpu1:13135:1");
    g_assert_nonnull(r1);
    g_assert_true(r1 == g_ptr_array_index(ranks, 1));
    g_assert_cmpint(r1->calls, ==, 4);
    g_assert_cmpuint(r1->comms->len, ==, 1);
    const CsNcclLogComm *c = comm_of(r1, 0);
    g_assert_cmpuint(c->comm, ==, 0x7f0c7410f0e0);
    g_assert_cmpint(c->nranks, ==, 2);
    g_assert_cmpuint(c->first_op, ==, 0x1a);
    g_assert_cmpuint(c->last_op, ==, 0x1d);
    g_assert_cmpuint(c->call_list->len, ==, 4);
    g_assert_cmpuint(call_of(c, 3)->count, ==, 8192);
    g_assert_cmpint(call_of(c, 3)->calls, ==, 1);

    /* github.com/NVIDIA/nccl/issues/1238: four identical calls of one rank are one entry. */
    g_autofree char *same = data_path("nccl-1238-nranks1.log");
    g_autoptr(CsNcclLog) log2 = cs_nccl_log_new();
    g_assert_true(cs_nccl_log_add_file(log2, same, &error));
    const CsNcclLogRank *r = g_ptr_array_index(cs_nccl_log_ranks(log2), 0);
    g_assert_cmpstr(r->label, ==, "ip-172-31-54-74:30125:0");
    c = comm_of(r, 0);
    g_assert_cmpuint(c->call_list->len, ==, 1);
    g_assert_cmpint(call_of(c, 0)->calls, ==, 4);
    g_assert_cmpuint(call_of(c, 0)->count, ==, 33554432);
    g_assert_cmpint(c->nranks, ==, 1);

    /* github.com/pytorch/torchtitan/issues/1369: two threads (tids 191420, 191369) of one
     * process and device are one rank. */
    g_autofree char *tt = data_path("torchtitan-1369-tp2.log");
    g_autoptr(CsNcclLog) log3 = cs_nccl_log_new();
    g_assert_true(cs_nccl_log_add_file(log3, tt, &error));
    r = cs_nccl_log_find_rank(log3, "hopper01:191369:0");
    g_assert_nonnull(r);
    g_assert_cmpint(r->calls, ==, 4);
    c = comm_of(r, 0);
    g_assert_cmpuint(c->call_list->len, ==, 3);
    g_assert_cmpstr(call_of(c, 0)->name, ==, "ReduceScatter");
    g_assert_cmpstr(call_of(c, 2)->name, ==, "AllReduce");
    g_assert_cmpint(call_of(c, 2)->calls, ==, 2);
    g_assert_cmpuint(call_of(c, 2)->first_op, ==, 0x10);
    g_assert_cmpuint(call_of(c, 2)->last_op, ==, 0x11);
}

static void
test_file_errors(void)
{
    g_test_summary("A cut-short line is reported with its file and line number; a missing "
                   "file and a directory are I/O errors; a communicator whose size changes is "
                   "two runs in one log");
    /* github.com/NVIDIA/nccl/issues/740, as pasted: line 2 is wrapped before the stream. */
    g_autofree char *path = data_path("nccl-740-broadcast-wrapped.log");
    g_autoptr(CsNcclLog) log = cs_nccl_log_new();
    g_autoptr(GError) error = NULL;
    g_assert_false(cs_nccl_log_add_file(log, path, &error));
    g_assert_error(error, CS_NCCL_LOG_ERROR, CS_NCCL_LOG_ERROR_MALFORMED);
    g_autofree char *want = g_strdup_printf(
        "%s:2: Broadcast line: the line ends after \"stream\" (cut short?)", path);
    g_assert_cmpstr(error->message, ==, want);
    g_clear_error(&error);

    g_assert_false(cs_nccl_log_add_file(log, "/nonexistent/nccl.log", &error));
    g_assert_error(error, CS_NCCL_LOG_ERROR, CS_NCCL_LOG_ERROR_IO);
    g_clear_error(&error);
    g_autofree char *dir = g_test_build_filename(G_TEST_DIST, "data", "nccl-logs", NULL);
    g_assert_false(cs_nccl_log_add_file(log, dir, &error));
    g_assert_error(error, CS_NCCL_LOG_ERROR, CS_NCCL_LOG_ERROR_IO);
    g_clear_error(&error);

    g_autoptr(CsNcclLog) two = cs_nccl_log_new();
    const char a[] = "h:1:2 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x1 count 1 "
                     "datatype 7 op 0 root 0 comm 0x2 [nranks=2] stream 0x3";
    const char b[] = "h:1:2 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x1 count 1 "
                     "datatype 7 op 0 root 0 comm 0x2 [nranks=4] stream 0x3";
    g_assert_true(cs_nccl_log_add_line(two, a, "x.log", 1, &error));
    g_assert_false(cs_nccl_log_add_line(two, b, "x.log", 2, &error));
    g_assert_error(error, CS_NCCL_LOG_ERROR, CS_NCCL_LOG_ERROR_MALFORMED);
    g_assert_true(g_str_has_prefix(error->message, "x.log:2: AllReduce line: comm 0x2 has "
                                                   "[nranks=4] here and 2 before"));
}

static void
test_file_long_lines(void)
{
    g_test_summary("A line longer than 64 KiB, or holding a NUL byte, is another line, read "
                   "through in bounded memory; the line numbers after it stay right");
    g_autofree char *dir = g_dir_make_tmp("collsim-nccl-log-XXXXXX", NULL);
    g_autofree char *path = g_build_filename(dir, "long.log", NULL);
    GString *s = g_string_new(NULL);
    for (int i = 0; i < 100000; i++)
        g_string_append_c(s, 'x');
    g_string_append(s, " NCCL INFO AllReduce: opCount 0\n");
    g_string_append_len(s, "nul\0AllReduce: opCount 0\n", 25);
    g_string_append(s, "h:1:2 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x1 count "
                       "1 datatype 7 op 0 root 0 comm 0x2 [nranks=2] stream 0x3\n");
    g_string_append(s, "h:1:2 [0] NCCL INFO AllReduce: opCount 1 sendbuff");
    g_autoptr(GError) error = NULL;
    g_file_set_contents(path, s->str, (gssize)s->len, &error);
    g_assert_no_error(error);
    g_string_free(s, TRUE);
    g_autoptr(CsNcclLog) log = cs_nccl_log_new();
    g_assert_false(cs_nccl_log_add_file(log, path, &error));
    g_autofree char *want = g_strdup_printf("%s:4: AllReduce line: the line ends after "
                                            "\"sendbuff\" (cut short?)",
                                            path);
    g_assert_cmpstr(error->message, ==, want);
    g_assert_cmpint(cs_nccl_log_n_other_lines(log), ==, 2);
    g_assert_cmpint(cs_nccl_log_n_collective_lines(log), ==, 1);
    g_unlink(path);
    g_rmdir(dir);
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/nccl-log/line/fields", test_line_fields);
    g_test_add_func("/nccl-log/line/prefixes", test_line_prefixes);
    g_test_add_func("/nccl-log/line/other", test_line_other);
    g_test_add_func("/nccl-log/line/malformed", test_line_malformed);
    g_test_add_func("/nccl-log/datatypes", test_datatypes);
    g_test_add_func("/nccl-log/file/sums", test_file_sums);
    g_test_add_func("/nccl-log/file/errors", test_file_errors);
    g_test_add_func("/nccl-log/file/long-lines", test_file_long_lines);
    return g_test_run();
}
