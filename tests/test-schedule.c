// SPDX-License-Identifier: MIT
/* The schedule IR: buffer sizes, packing at seal, validation of malformed steps, step kinds,
 * a large chunked ring; with it the protocol constants and the algorithm helpers that
 * schedules are built from. */
#include "config.h"

#include <string.h>

#include "algos/registry.h"
#include "sched/schedule.h"

/* Setup: P = 4, 1000 bytes of floats (250 elements).
 * Expectation: all-reduce buffers are 1000 bytes each way; all-gather's size is the total:
 * 250 / 4 = 62 elements per block = 248 bytes in, 4 x 248 = 992 out; reduce-scatter the
 * reverse; all-to-all 992 both ways. Scratch starts at 0. Rootless ops store root 0. */
static void
test_sizes(void)
{
    g_autoptr(CsSchedule) ar = cs_schedule_new(CS_OP_ALL_REDUCE, 4, 3, 1000, CS_DTYPE_FLOAT,
                                               CS_REDOP_SUM, CS_PROTO_SIMPLE, 1);
    g_assert_cmpint(cs_schedule_buffer_bytes(ar, CS_BUF_INPUT), ==, 1000);
    g_assert_cmpint(cs_schedule_buffer_bytes(ar, CS_BUF_OUTPUT), ==, 1000);
    g_assert_cmpint(cs_schedule_buffer_bytes(ar, CS_BUF_SCRATCH), ==, 0);
    g_assert_cmpint(cs_schedule_root(ar), ==, 0);
    g_assert_cmpint(cs_schedule_size(ar)->count, ==, 250);

    g_autoptr(CsSchedule) ag = cs_schedule_new(CS_OP_ALL_GATHER, 4, 0, 1000, CS_DTYPE_FLOAT,
                                               CS_REDOP_SUM, CS_PROTO_SIMPLE, 1);
    g_assert_cmpint(cs_schedule_buffer_bytes(ag, CS_BUF_INPUT), ==, 248);
    g_assert_cmpint(cs_schedule_buffer_bytes(ag, CS_BUF_OUTPUT), ==, 992);

    g_autoptr(CsSchedule) rs = cs_schedule_new(CS_OP_REDUCE_SCATTER, 4, 0, 1000, CS_DTYPE_FLOAT,
                                               CS_REDOP_SUM, CS_PROTO_LL, 2);
    g_assert_cmpint(cs_schedule_buffer_bytes(rs, CS_BUF_INPUT), ==, 992);
    g_assert_cmpint(cs_schedule_buffer_bytes(rs, CS_BUF_OUTPUT), ==, 248);
    g_assert_cmpint(cs_schedule_n_channels(rs), ==, 2);
    g_assert_cmpint(cs_schedule_proto(rs), ==, CS_PROTO_LL);

    g_autoptr(CsSchedule) bc = cs_schedule_new(CS_OP_BROADCAST, 4, 3, 1000, CS_DTYPE_DOUBLE,
                                               CS_REDOP_MAX, CS_PROTO_SIMPLE, 1);
    g_assert_cmpint(cs_schedule_root(bc), ==, 3);
    g_assert_cmpint(cs_schedule_dtype(bc), ==, CS_DTYPE_DOUBLE);
    g_assert_cmpint(cs_schedule_redop(bc), ==, CS_REDOP_MAX);
    /* 1000 bytes of doubles: 125 elements. */
    g_assert_cmpint(cs_schedule_buffer_bytes(bc, CS_BUF_OUTPUT), ==, 1000);
    cs_schedule_set_scratch(bc, 64);
    g_assert_cmpint(cs_schedule_buffer_bytes(bc, CS_BUF_SCRATCH), ==, 64);
    g_assert_cmpstr(cs_schedule_algo(bc), ==, "custom");
    cs_schedule_set_algo(bc, "ring");
    g_assert_cmpstr(cs_schedule_algo(bc), ==, "ring");
}

/* Setup: P = 3; steps appended to ranks 2, 0, 2, 1 in that order.
 * Expectation: after sealing, each rank's program keeps its own order: rank 0 one step,
 * rank 1 one, rank 2 two (first the one added first); 4 steps in all, counted the same
 * before and after sealing. */
static void
test_seal_packs(void)
{
    g_autoptr(CsSchedule) s = cs_schedule_new(CS_OP_ALL_REDUCE, 3, 0, 64, CS_DTYPE_FLOAT,
                                              CS_REDOP_SUM, CS_PROTO_SIMPLE, 2);
    cs_schedule_send(s, 2, 0, 0, CS_BUF_INPUT, 0, 16, 7);
    /* Room made between two steps adds none and keeps the first. */
    cs_schedule_reserve(s, 2, 1000);
    g_assert_cmpuint(cs_schedule_n_steps(s), ==, 1);
    cs_schedule_recv(s, 0, 1, 2, CS_BUF_OUTPUT, 16, 16, 8);
    cs_schedule_step(s, 2, 1, CS_STEP_RECV_REDUCE_COPY_SEND, 1, 0, CS_BUF_INPUT, 32, CS_BUF_OUTPUT,
                     48, 16, 9);
    cs_schedule_step(s, 1, 0, CS_STEP_COPY, -1, -1, CS_BUF_INPUT, 0, CS_BUF_OUTPUT, 0, 64, 10);
    g_assert_cmpuint(cs_schedule_n_steps(s), ==, 4);
    cs_schedule_seal(s);
    cs_schedule_seal(s);
    g_assert_cmpuint(cs_schedule_n_steps(s), ==, 4);

    gsize n;
    const CsStep *p0 = cs_schedule_steps(s, 0, &n);
    g_assert_cmpuint(n, ==, 1);
    g_assert_cmpint(p0[0].kind, ==, CS_STEP_RECV);
    g_assert_cmpint(p0[0].recv_peer, ==, 2);
    g_assert_cmpint(p0[0].send_peer, ==, -1);
    g_assert_cmpint(p0[0].dst_offset, ==, 16);
    g_assert_cmpint(p0[0].channel, ==, 1);
    g_assert_cmpint(p0[0].chunk, ==, 8);
    const CsStep *p1 = cs_schedule_steps(s, 1, &n);
    g_assert_cmpuint(n, ==, 1);
    g_assert_cmpint(p1[0].kind, ==, CS_STEP_COPY);
    g_assert_cmpint(p1[0].bytes, ==, 64);
    const CsStep *p2 = cs_schedule_steps(s, 2, &n);
    g_assert_cmpuint(n, ==, 2);
    g_assert_cmpint(p2[0].kind, ==, CS_STEP_SEND);
    g_assert_cmpint(p2[0].chunk, ==, 7);
    g_assert_cmpint(p2[1].kind, ==, CS_STEP_RECV_REDUCE_COPY_SEND);
    g_assert_cmpint(p2[1].recv_peer, ==, 1);
    g_assert_cmpint(p2[1].send_peer, ==, 0);
    g_assert_cmpint(p2[1].src_offset, ==, 32);
    g_assert_cmpint(p2[1].dst_offset, ==, 48);
    /* The programs are consecutive in one array, rank-major. */
    g_assert_true(p1 == p0 + 1);
    g_assert_true(p2 == p1 + 1);
}

/* Setup: 4 ranks; steps come rank by rank (0, 0, 2: rank 1 has none yet), then rank 1 and
 * rank 0 again after rank 2's, then rank 2 and rank 3, with reservations between (room in
 * one rank's program, and room rank by rank, which steps out of rank order ignore).
 * Expectation: each rank's program holds its steps in the order they were added, its first
 * ones (added rank by rank) before its later ones, whatever other ranks did between; the
 * programs are consecutive, rank-major; the count while building is every step added. */
static void
test_seal_order(void)
{
    static const int ranks[] = { 0, 0, 2, 1, 0, 2, 3, 1 };
    g_autoptr(CsSchedule) s = cs_schedule_new(CS_OP_ALL_REDUCE, 4, 0, 64, CS_DTYPE_FLOAT,
                                              CS_REDOP_SUM, CS_PROTO_SIMPLE, 1);

    /* Room for the steps rank by rank, then (ignored once they are not) again. */
    cs_schedule_reserve_ranks(s, 0, G_N_ELEMENTS(ranks));
    for (guint i = 0; i < G_N_ELEMENTS(ranks); i++) {
        cs_schedule_reserve_ranks(s, ranks[i], 1000);
        cs_schedule_reserve(s, ranks[i], 100);
        cs_schedule_step(s, ranks[i], 0, CS_STEP_COPY, -1, -1, CS_BUF_INPUT, 0, CS_BUF_OUTPUT, 0, 4,
                         (int)i);
        g_assert_cmpuint(cs_schedule_n_steps(s), ==, i + 1);
    }
    cs_schedule_seal(s);
    g_assert_cmpuint(cs_schedule_n_steps(s), ==, G_N_ELEMENTS(ranks));

    static const int expect[4][3] = { { 0, 1, 4 }, { 3, 7, -1 }, { 2, 5, -1 }, { 6, -1, -1 } };
    const CsStep *end = NULL;
    for (int r = 0; r < 4; r++) {
        gsize n;
        const CsStep *p = cs_schedule_steps(s, r, &n);
        if (end != NULL)
            g_assert_true(p == end);
        end = p + n;
        for (gsize k = 0; k < 3; k++) {
            if (expect[r][k] < 0) {
                g_assert_cmpuint(n, ==, k);
                break;
            }
            g_assert_cmpuint(n, >, k);
            g_assert_cmpint(p[k].chunk, ==, expect[r][k]);
        }
    }

    /* Rank by rank only, the last ranks empty. */
    g_autoptr(CsSchedule) t = cs_schedule_new(CS_OP_ALL_REDUCE, 4, 0, 64, CS_DTYPE_FLOAT,
                                              CS_REDOP_SUM, CS_PROTO_SIMPLE, 1);
    cs_schedule_reserve_ranks(t, 0, 3);
    for (int i = 0; i < 3; i++)
        cs_schedule_step(t, i / 2, 0, CS_STEP_COPY, -1, -1, CS_BUF_INPUT, 0, CS_BUF_OUTPUT, 0, 4,
                         i);
    cs_schedule_seal(t);
    static const gsize lens[4] = { 2, 1, 0, 0 };
    int chunk = 0;
    for (int r = 0; r < 4; r++) {
        gsize n;
        const CsStep *p = cs_schedule_steps(t, r, &n);
        g_assert_cmpuint(n, ==, lens[r]);
        for (gsize k = 0; k < n; k++)
            g_assert_cmpint(p[k].chunk, ==, chunk++);
    }
}

/* Setup: an all-reduce of 64 bytes of floats on 2 ranks and 1 channel; each bad step below
 * breaks one rule.
 * Expectation: each is refused with a critical warning and not added. */
static void
test_add_rejects(void)
{
    g_autoptr(CsSchedule) s = cs_schedule_new(CS_OP_ALL_REDUCE, 2, 0, 64, CS_DTYPE_FLOAT,
                                              CS_REDOP_SUM, CS_PROTO_SIMPLE, 1);
    struct {
        const char *what;
        int rank;
        int channel;
        CsStepKind kind;
        int recv_peer;
        int send_peer;
        gint64 src_offset;
        gint64 dst_offset;
        gint64 bytes;
    } bad[] = {
        { "peer out of range", 0, 0, CS_STEP_SEND, -1, 2, 0, 0, 16 },
        { "negative peer", 0, 0, CS_STEP_RECV, -1, -1, 0, 0, 16 },
        { "send peer on a recv", 0, 0, CS_STEP_RECV, 1, 1, 0, 0, 16 },
        { "rank out of range", 2, 0, CS_STEP_SEND, -1, 1, 0, 0, 16 },
        { "channel out of range", 0, 1, CS_STEP_SEND, -1, 1, 0, 0, 16 },
        { "source past the end", 0, 0, CS_STEP_SEND, -1, 1, 56, 0, 16 },
        { "destination past the end", 0, 0, CS_STEP_RECV, 1, -1, 0, 60, 8 },
        { "misaligned offset", 0, 0, CS_STEP_SEND, -1, 1, 2, 0, 16 },
        { "misaligned size", 0, 0, CS_STEP_SEND, -1, 1, 0, 0, 6 },
        { "negative bytes", 0, 0, CS_STEP_COPY, -1, -1, 0, 0, -4 },
        { "negative offset", 0, 0, CS_STEP_COPY, -1, -1, -4, 0, 4 },
    };
    for (gsize i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_test_message("%s", bad[i].what);
        g_test_expect_message(G_LOG_DOMAIN, G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
        cs_schedule_step(s, bad[i].rank, bad[i].channel, bad[i].kind, bad[i].recv_peer,
                         bad[i].send_peer, CS_BUF_INPUT, bad[i].src_offset, CS_BUF_OUTPUT,
                         bad[i].dst_offset, bad[i].bytes, 0);
        g_test_assert_expected_messages();
    }
    g_assert_cmpuint(cs_schedule_n_steps(s), ==, 0);
    /* The edges are fine: the last 16 bytes, and zero bytes at the very end. */
    cs_schedule_send(s, 0, 0, 1, CS_BUF_INPUT, 48, 16, 0);
    cs_schedule_recv(s, 1, 0, 0, CS_BUF_OUTPUT, 64, 0, 0);
    g_assert_cmpuint(cs_schedule_n_steps(s), ==, 2);
}

/* Flags belong to a sending step's message, and a step is a member or a leader, not both. */
static void
test_add_rejects_flags(void)
{
    g_autoptr(CsSchedule) s = cs_schedule_new(CS_OP_ALL_REDUCE, 2, 0, 64, CS_DTYPE_FLOAT,
                                              CS_REDOP_SUM, CS_PROTO_SIMPLE, 1);
    struct {
        const char *what;
        CsStepKind kind;
        guint8 flags;
    } bad[] = {
        { "flags on a step that sends nothing", CS_STEP_RECV, CS_STEP_FLAG_REDUCE_SELF },
        { "unknown flag", CS_STEP_SEND, 0x20 },
        { "sent from the switch and a multicast member", CS_STEP_SEND,
          CS_STEP_FLAG_FROM_SWITCH | CS_STEP_FLAG_SHARED_FIRST_HOP },
        { "sent from the switch by a forwarding step", CS_STEP_RECV_COPY_SEND,
          CS_STEP_FLAG_FROM_SWITCH },
        { "multicast member forwarding", CS_STEP_RECV_COPY_SEND, CS_STEP_FLAG_SHARED_FIRST_HOP },
        { "multicast member and leader", CS_STEP_SEND,
          CS_STEP_FLAG_SHARED_FIRST_HOP | CS_STEP_FLAG_MULTICAST_SELF },
        { "reduction member and leader", CS_STEP_SEND,
          CS_STEP_FLAG_SHARED_LAST_HOP | CS_STEP_FLAG_REDUCE_SELF },
    };
    for (gsize i = 0; i < G_N_ELEMENTS(bad); i++) {
        gboolean sends = cs_step_kind_sends(bad[i].kind);
        gboolean recvs = cs_step_kind_recvs(bad[i].kind);
        CsStep st = {
            .bytes = 16,
            .send_peer = sends ? 1 : -1,
            .recv_peer = recvs ? 1 : -1,
            .kind = bad[i].kind,
            .src_buf = CS_BUF_INPUT,
            .dst_buf = CS_BUF_OUTPUT,
            .flags = bad[i].flags,
        };
        g_test_message("%s", bad[i].what);
        g_test_expect_message(G_LOG_DOMAIN, G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
        cs_schedule_add(s, 0, &st);
        g_test_assert_expected_messages();
    }
    g_assert_cmpuint(cs_schedule_n_steps(s), ==, 0);
    /* A member's send and a leader that forwards are fine. */
    CsStep member = { .bytes = 16,
                      .send_peer = 1,
                      .recv_peer = -1,
                      .kind = CS_STEP_SEND,
                      .flags = CS_STEP_FLAG_SHARED_FIRST_HOP | CS_STEP_FLAG_SHARED_LAST_HOP };
    CsStep leader = { .bytes = 16,
                      .send_peer = 1,
                      .recv_peer = 1,
                      .kind = CS_STEP_RECV_REDUCE_SEND,
                      .src_buf = CS_BUF_INPUT,
                      .flags = CS_STEP_FLAG_REDUCE_SELF | CS_STEP_FLAG_MULTICAST_SELF };
    cs_schedule_add(s, 0, &member);
    cs_schedule_add(s, 0, &leader);
    g_assert_cmpuint(cs_schedule_n_steps(s), ==, 2);
}

static void
test_kinds(void)
{
    static const struct {
        CsStepKind kind;
        const char *name;
        gboolean sends;
        gboolean recvs;
        gboolean reads;
        gboolean writes;
    } kinds[] = {
        { CS_STEP_SEND, "send", TRUE, FALSE, TRUE, FALSE },
        { CS_STEP_RECV, "recv", FALSE, TRUE, FALSE, TRUE },
        { CS_STEP_RECV_REDUCE, "recv_reduce", FALSE, TRUE, TRUE, TRUE },
        { CS_STEP_RECV_REDUCE_SEND, "recv_reduce_send", TRUE, TRUE, TRUE, FALSE },
        { CS_STEP_RECV_REDUCE_COPY_SEND, "recv_reduce_copy_send", TRUE, TRUE, TRUE, TRUE },
        { CS_STEP_RECV_COPY_SEND, "recv_copy_send", TRUE, TRUE, FALSE, TRUE },
        { CS_STEP_COPY, "copy", FALSE, FALSE, TRUE, TRUE },
        { CS_STEP_REDUCE, "reduce", FALSE, FALSE, TRUE, TRUE },
    };
    g_assert_cmpint(G_N_ELEMENTS(kinds), ==, CS_N_STEP_KINDS);
    for (gsize i = 0; i < G_N_ELEMENTS(kinds); i++) {
        g_assert_cmpstr(cs_step_kind_name(kinds[i].kind), ==, kinds[i].name);
        g_assert_cmpint(cs_step_kind_sends(kinds[i].kind), ==, kinds[i].sends);
        g_assert_cmpint(cs_step_kind_recvs(kinds[i].kind), ==, kinds[i].recvs);
        g_assert_cmpint(cs_step_kind_reads_src(kinds[i].kind), ==, kinds[i].reads);
        g_assert_cmpint(cs_step_kind_writes_dst(kinds[i].kind), ==, kinds[i].writes);
    }
}

/* Setup: ring all-reduce, 256 ranks, 64 MiB of floats, Simple (512 KiB chunks), 1 channel.
 * Expectation: each loop moves P chunks; 64 MiB / (256 x 512 KiB) = 0.5, so one loop with
 * chunks of 64 MiB / 256 = 256 KiB, and each rank runs 2(P - 1) + 1 = 511 steps (a send,
 * P - 2 recv_reduce_send, one recv_reduce_copy_send, P - 2 recv_copy_send, one recv):
 * 256 x 511 = 130,816 steps, packed in one array of 48-byte steps. */
static void
test_ring_steps(void)
{
    const CsAlgo *ring = cs_algo_lookup("ring", NULL);
    g_assert_nonnull(ring);
    CsAlgoArgs args;
    cs_algo_args_init(&args, NULL, CS_OP_ALL_REDUCE, 256, 64 << 20);
    g_autoptr(GError) error = NULL;
    g_autoptr(CsSchedule) s = cs_algo_build(ring, &args, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(cs_schedule_n_steps(s), ==, 256 * 511);
    gsize n;
    const CsStep *p = cs_schedule_steps(s, 5, &n);
    g_assert_cmpuint(n, ==, 511);
    g_assert_cmpint(p[0].kind, ==, CS_STEP_SEND);
    g_assert_cmpint(p[0].bytes, ==, 256 << 10);
    g_assert_cmpint(p[0].send_peer, ==, 6);
    g_assert_cmpint(p[255].kind, ==, CS_STEP_RECV_REDUCE_COPY_SEND);
    g_assert_cmpint(p[510].kind, ==, CS_STEP_RECV);
    g_assert_cmpint(p[510].recv_peer, ==, 4);
}

/* Expectation: DESIGN §9 and NCCL 2.28's constants: LL carries 8 of 16 bytes, LL128 120 of
 * 128; Ring hop latencies NVLink .6/1.9/3.4 us, PCI 1.0/2.5/5.7, NET 2.7/4/14 (LL/LL128/
 * Simple); buffers 512 KiB, 4,915,200 B, 4 MiB; slot data 256 KiB / 8 = 32 KiB,
 * 4,915,200 / 8 x 120/128 = 576,000 B, 4 MiB / 8 = 512 KiB. LL128 is illegal over PCIe. */
static void
test_protocols(void)
{
    static const struct {
        CsProto proto;
        const char *name;
        double fraction;
        double hop_us[3];
        gint64 buffer;
        gint64 slot;
    } want[] = {
        { CS_PROTO_LL, "LL", 0.5, { 0.6, 1.0, 2.7 }, 524288, 32768 },
        { CS_PROTO_LL128, "LL128", 0.9375, { 1.9, 2.5, 4.0 }, 4915200, 576000 },
        { CS_PROTO_SIMPLE, "Simple", 1.0, { 3.4, 5.7, 14.0 }, 4194304, 524288 },
    };
    for (gsize i = 0; i < G_N_ELEMENTS(want); i++) {
        const CsProtoInfo *info = cs_proto_info(want[i].proto);
        g_assert_cmpstr(info->name, ==, want[i].name);
        g_assert_cmpstr(cs_proto_name(want[i].proto), ==, want[i].name);
        g_assert_cmpfloat_with_epsilon(info->data_fraction, want[i].fraction, 1e-12);
        g_assert_cmpfloat_with_epsilon(info->hop_latency_s[CS_LINK_CLASS_NVLINK],
                                       want[i].hop_us[0] * 1e-6, 1e-15);
        g_assert_cmpfloat_with_epsilon(info->hop_latency_s[CS_LINK_CLASS_PCI],
                                       want[i].hop_us[1] * 1e-6, 1e-15);
        g_assert_cmpfloat_with_epsilon(info->hop_latency_s[CS_LINK_CLASS_NET],
                                       want[i].hop_us[2] * 1e-6, 1e-15);
        g_assert_cmpint(info->buffer_bytes, ==, want[i].buffer);
        g_assert_cmpint(info->slot_data_bytes, ==, want[i].slot);
        g_assert_nonnull(info->reference);
        CsProto parsed;
        g_autofree char *lower = g_ascii_strdown(want[i].name, -1);
        g_assert_true(cs_proto_from_name(lower, &parsed, NULL));
        g_assert_cmpint(parsed, ==, want[i].proto);
    }
    g_autoptr(GError) error = NULL;
    CsProto p;
    g_assert_false(cs_proto_from_name("LL64", &p, &error));
    g_assert_error(error, CS_OP_ERROR, CS_OP_ERROR_UNKNOWN);

    const char *why = NULL;
    g_assert_true(cs_proto_legal(CS_PROTO_LL128, CS_LINK_CLASS_NVLINK, &why));
    g_assert_true(cs_proto_legal(CS_PROTO_LL128, CS_LINK_CLASS_NET, &why));
    g_assert_false(cs_proto_legal(CS_PROTO_LL128, CS_LINK_CLASS_PCI, &why));
    g_assert_nonnull(strstr(why, "NVLink"));
    g_assert_true(cs_proto_legal(CS_PROTO_LL, CS_LINK_CLASS_PCI, NULL));
    g_assert_true(cs_proto_legal(CS_PROTO_SIMPLE, CS_LINK_CLASS_PCI, NULL));
}

/* Expectation: the default chunk is one slot's data rounded down to whole elements (doubles:
 * 576,000 / 8 = 72,000 exactly; int8 32,768); an explicit chunk is rounded down too (10 bytes
 * of floats: 8) but never below one element (3 bytes of floats: 4). Splits of 10 into 4:
 * 3, 3, 2, 2 starting at 0, 3, 6, 8. */
static void
test_algo_helpers(void)
{
    CsAlgoArgs args;
    cs_algo_args_init(&args, NULL, CS_OP_ALL_REDUCE, 4, 1000);
    g_assert_cmpint(args.root, ==, 0);
    g_assert_cmpint(args.n_channels, ==, 1);
    g_assert_cmpint(args.proto, ==, CS_PROTO_SIMPLE);
    g_assert_cmpint(args.dtype, ==, CS_DTYPE_FLOAT);
    g_assert_cmpint(cs_algo_default_chunk(&args), ==, 524288);
    args.proto = CS_PROTO_LL128;
    args.dtype = CS_DTYPE_DOUBLE;
    g_assert_cmpint(cs_algo_default_chunk(&args), ==, 576000);
    args.proto = CS_PROTO_LL;
    args.dtype = CS_DTYPE_INT8;
    g_assert_cmpint(cs_algo_chunk_bytes(&args), ==, 32768);
    args.dtype = CS_DTYPE_FLOAT;
    args.chunk_bytes = 10;
    g_assert_cmpint(cs_algo_chunk_bytes(&args), ==, 8);
    args.chunk_bytes = 3;
    g_assert_cmpint(cs_algo_chunk_bytes(&args), ==, 4);

    static const gint64 first[] = { 0, 3, 6, 8 };
    static const gint64 len[] = { 3, 3, 2, 2 };
    for (int i = 0; i < 4; i++) {
        gint64 f;
        gint64 n;
        cs_algo_split(10, 4, i, &f, &n);
        g_assert_cmpint(f, ==, first[i]);
        g_assert_cmpint(n, ==, len[i]);
    }
}

/* Expectation: bad arguments and collectives an algorithm lacks are errors naming the
 * algorithm; lookup ignores case and dashes and lists the names on failure. */
static void
test_algo_build_errors(void)
{
    const CsAlgo *ring = cs_algo_lookup("RING", NULL);
    g_assert_nonnull(ring);
    g_assert_true(cs_algo_lookup("recursive-doubling", NULL)
                  == cs_algo_lookup("recursive_doubling", NULL));
    g_autoptr(GError) error = NULL;
    g_assert_null(cs_algo_lookup("nosuch", &error));
    g_assert_error(error, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_UNSUPPORTED);
    g_assert_nonnull(strstr(error->message, "ring"));
    g_clear_error(&error);

    CsAlgoArgs args;
    cs_algo_args_init(&args, NULL, CS_OP_SCATTER, 4, 1000);
    g_assert_null(cs_algo_build(ring, &args, &error));
    g_assert_error(error, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_UNSUPPORTED);
    g_assert_nonnull(strstr(error->message, "ring does not implement scatter"));
    g_clear_error(&error);

    cs_algo_args_init(&args, NULL, CS_OP_BROADCAST, 4, 1000);
    args.root = 4;
    g_assert_null(cs_algo_build(ring, &args, &error));
    g_assert_error(error, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_INVALID);
    g_assert_nonnull(strstr(error->message, "root"));
    g_clear_error(&error);

    args.root = 0;
    args.n_channels = 129; /* RCCL's MAXCHANNELS is 128 */
    g_assert_null(cs_algo_build(ring, &args, &error));
    g_assert_error(error, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_INVALID);
    g_clear_error(&error);

    /* A rootless collective ignores the root. */
    cs_algo_args_init(&args, NULL, CS_OP_ALL_REDUCE, 4, 1000);
    args.root = 17;
    g_autoptr(CsSchedule) s = cs_algo_build(ring, &args, &error);
    g_assert_no_error(error);
    g_assert_cmpint(cs_schedule_root(s), ==, 0);
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/schedule/new/sizes", test_sizes);
    g_test_add_func("/schedule/seal/packs", test_seal_packs);
    g_test_add_func("/schedule/seal/order", test_seal_order);
    g_test_add_func("/schedule/add/rejects", test_add_rejects);
    g_test_add_func("/schedule/add/rejects-flags", test_add_rejects_flags);
    g_test_add_func("/schedule/step-kinds", test_kinds);
    g_test_add_func("/schedule/ring/steps", test_ring_steps);
    g_test_add_func("/schedule/protocols", test_protocols);
    g_test_add_func("/schedule/algo/helpers", test_algo_helpers);
    g_test_add_func("/schedule/algo/build-errors", test_algo_build_errors);
    return g_test_run();
}
