// SPDX-License-Identifier: MIT
/* The semantic checker on hand-built schedules: right ones pass with the rounds and traffic
 * derived below, wrong ones (missing or double contributions, misplaced data, deadlocks,
 * size mismatches, full slots, races between channels, step flags that do not hold) are
 * rejected with a message that
 * names the rank and what is wrong. */
#include "config.h"

#include <string.h>

#include "sched/check.h"

/* Floats: 4 bytes per element. */
#define F 4

static CsSchedule *
new_sched(CsOp op, int P, int root, gint64 bytes, int n_channels)
{
    return cs_schedule_new(op, P, root, bytes, CS_DTYPE_FLOAT, CS_REDOP_SUM, CS_PROTO_SIMPLE,
                           n_channels);
}

static void
copy(CsSchedule *s, int rank, int ch, CsBuffer src, gint64 src_off, CsBuffer dst, gint64 dst_off,
     gint64 bytes)
{
    cs_schedule_step(s, rank, ch, CS_STEP_COPY, -1, -1, src, src_off, dst, dst_off, bytes, 0);
}

static void
recv_reduce(CsSchedule *s, int rank, int ch, int peer, CsBuffer src, gint64 src_off, CsBuffer dst,
            gint64 dst_off, gint64 bytes)
{
    cs_schedule_step(s, rank, ch, CS_STEP_RECV_REDUCE, peer, -1, src, src_off, dst, dst_off, bytes,
                     0);
}

/* Checks @s and asserts it fails with @code and a message containing each of @parts. */
static void
assert_rejected(CsSchedule *s, int code, const char *const *parts)
{
    g_autoptr(GError) error = NULL;
    cs_schedule_seal(s);
    g_assert_false(cs_check_schedule(s, NULL, &error));
    g_assert_error(error, CS_SCHEDULE_ERROR, code);
    g_test_message("%s", error->message);
    for (int i = 0; parts[i] != NULL; i++)
        if (strstr(error->message, parts[i]) == NULL)
            g_error("\"%s\" not in: %s", parts[i], error->message);
}

/* ---- Correct schedules ---- */

/* Setup: P = 2 all-reduce of 16 bytes (4 floats). Each rank sends its input to the other and
 * reduces what it receives with its input into its output.
 * Expectation: correct; 2 messages of 16 bytes = 32 bytes; both sends travel in round 1 and
 * the receives complete in that round: 1 round. */
static void
test_ok_exchange(void)
{
    g_autoptr(CsSchedule) s = new_sched(CS_OP_ALL_REDUCE, 2, 0, 16, 1);
    for (int r = 0; r < 2; r++) {
        cs_schedule_send(s, r, 0, 1 - r, CS_BUF_INPUT, 0, 16, 0);
        recv_reduce(s, r, 0, 1 - r, CS_BUF_INPUT, 0, CS_BUF_OUTPUT, 0, 16);
    }
    cs_schedule_seal(s);
    CsCheckReport rep;
    g_autoptr(GError) error = NULL;
    g_assert_true(cs_check_schedule(s, &rep, &error));
    g_assert_no_error(error);
    g_assert_cmpint(rep.n_messages, ==, 2);
    g_assert_cmpint(rep.bytes_sent, ==, 32);
    g_assert_cmpint(rep.n_rounds, ==, 1);
}

/* Setup: a broadcast chain 0 -> 1 -> 2 -> 3 of 40 bytes, root 0, in one message: rank 0
 * sends and copies, ranks 1, 2 recv_copy_send, rank 3 receives.
 * Expectation: rounds per step: rank 0 send 1, copy 1; rank 1: 2; rank 2: 3; rank 3: its
 * receive completes with the message of round 3. 3 messages, 3 rounds. */
static void
test_ok_chain_rounds(void)
{
    g_autoptr(CsSchedule) s = new_sched(CS_OP_BROADCAST, 4, 0, 40, 1);
    cs_schedule_send(s, 0, 0, 1, CS_BUF_INPUT, 0, 40, 0);
    copy(s, 0, 0, CS_BUF_INPUT, 0, CS_BUF_OUTPUT, 0, 40);
    for (int r = 1; r < 3; r++)
        cs_schedule_step(s, r, 0, CS_STEP_RECV_COPY_SEND, r - 1, r + 1, CS_BUF_OUTPUT, 0,
                         CS_BUF_OUTPUT, 0, 40, 0);
    cs_schedule_recv(s, 3, 0, 2, CS_BUF_OUTPUT, 0, 40, 0);
    cs_schedule_seal(s);

    CsCheckReport rep;
    g_autoptr(GError) error = NULL;
    g_assert_true(cs_check_schedule(s, &rep, &error));
    g_assert_no_error(error);
    g_assert_cmpint(rep.n_rounds, ==, 3);
    g_assert_cmpint(rep.n_messages, ==, 3);

    g_autofree int *rounds = cs_check_rounds(s, &error);
    g_assert_no_error(error);
    g_assert_nonnull(rounds);
    static const int want[] = { 1, 1, 2, 3, 3 };
    g_assert_cmpuint(cs_schedule_n_steps(s), ==, G_N_ELEMENTS(want));
    for (gsize i = 0; i < G_N_ELEMENTS(want); i++)
        g_assert_cmpint(rounds[i], ==, want[i]);
}

/* Setup: P = 2 all-to-all of 16 bytes total: blocks of 2 floats. Rank r keeps block r and
 * sends block 1-r of its input to rank 1-r, who stores it as block r.
 * Expectation: correct (out(r, s*n + e) = what s sent for r). */
static void
test_ok_alltoall(void)
{
    g_autoptr(CsSchedule) s = new_sched(CS_OP_ALL_TO_ALL, 2, 0, 16, 1);
    for (int r = 0; r < 2; r++) {
        int q = 1 - r;
        copy(s, r, 0, CS_BUF_INPUT, r * 8, CS_BUF_OUTPUT, r * 8, 8);
        cs_schedule_send(s, r, 0, q, CS_BUF_INPUT, q * 8, 8, 0);
        cs_schedule_recv(s, r, 0, q, CS_BUF_OUTPUT, q * 8, 8, 0);
    }
    cs_schedule_seal(s);
    g_autoptr(GError) error = NULL;
    g_assert_true(cs_check_schedule(s, NULL, &error));
    g_assert_no_error(error);
}

/* Setup: P = 3 reduce to root 1 of 8 bytes: ranks 0 and 2 send to 1, which reduces both into
 * its output. Non-root outputs stay unwritten: the definition only constrains the root.
 * Expectation: correct. Same with gather (root 1, blocks of 1 float, 12 bytes). */
static void
test_ok_rooted(void)
{
    g_autoptr(CsSchedule) s = new_sched(CS_OP_REDUCE, 3, 1, 8, 1);
    cs_schedule_send(s, 0, 0, 1, CS_BUF_INPUT, 0, 8, 0);
    cs_schedule_send(s, 2, 0, 1, CS_BUF_INPUT, 0, 8, 0);
    recv_reduce(s, 1, 0, 0, CS_BUF_INPUT, 0, CS_BUF_OUTPUT, 0, 8);
    recv_reduce(s, 1, 0, 2, CS_BUF_OUTPUT, 0, CS_BUF_OUTPUT, 0, 8);
    cs_schedule_seal(s);
    g_autoptr(GError) error = NULL;
    g_assert_true(cs_check_schedule(s, NULL, &error));
    g_assert_no_error(error);

    g_autoptr(CsSchedule) g = new_sched(CS_OP_GATHER, 3, 1, 12, 1);
    cs_schedule_send(g, 0, 0, 1, CS_BUF_INPUT, 0, 4, 0);
    cs_schedule_send(g, 2, 0, 1, CS_BUF_INPUT, 0, 4, 0);
    cs_schedule_recv(g, 1, 0, 0, CS_BUF_OUTPUT, 0, 4, 0);
    copy(g, 1, 0, CS_BUF_INPUT, 0, CS_BUF_OUTPUT, 4, 4);
    cs_schedule_recv(g, 1, 0, 2, CS_BUF_OUTPUT, 8, 4, 0);
    cs_schedule_seal(g);
    g_assert_true(cs_check_schedule(g, NULL, &error));
    g_assert_no_error(error);
}

/* Setup: P = 2 all-to-all with blocks of 8 floats; each rank sends the other's 8 floats as
 * 8 one-float messages before receiving any.
 * Expectation: correct: 8 unreceived messages fit in the CS_NCCL_STEPS = 8 slots. */
static void
test_ok_eight_slots(void)
{
    /* all-to-all with blocks of 8 floats = 32 bytes: 8 messages of one float each way. */
    g_autoptr(CsSchedule) s = new_sched(CS_OP_ALL_TO_ALL, 2, 0, 64, 1);
    for (int r = 0; r < 2; r++) {
        int q = 1 - r;
        copy(s, r, 0, CS_BUF_INPUT, r * 32, CS_BUF_OUTPUT, r * 32, 32);
        for (int k = 0; k < 8; k++)
            cs_schedule_send(s, r, 0, q, CS_BUF_INPUT, q * 32 + k * 4, 4, k);
        for (int k = 0; k < 8; k++)
            cs_schedule_recv(s, r, 0, q, CS_BUF_OUTPUT, q * 32 + k * 4, 4, k);
    }
    cs_schedule_seal(s);
    g_autoptr(GError) error = NULL;
    g_assert_true(cs_check_schedule(s, NULL, &error));
    g_assert_no_error(error);
}

/* ---- Wrong schedules ---- */

/* Setup: P = 3 all-reduce; ranks 0 and 1 exchange and reduce, rank 2 only copies its input.
 * Expectation: rank 0's output lacks rank 2's contribution. */
static void
test_bad_missing(void)
{
    CsSchedule *s = new_sched(CS_OP_ALL_REDUCE, 3, 0, 16, 1);
    for (int r = 0; r < 2; r++) {
        cs_schedule_send(s, r, 0, 1 - r, CS_BUF_INPUT, 0, 16, 0);
        recv_reduce(s, r, 0, 1 - r, CS_BUF_INPUT, 0, CS_BUF_OUTPUT, 0, 16);
    }
    copy(s, 2, 0, CS_BUF_INPUT, 0, CS_BUF_OUTPUT, 0, 16);
    const char *parts[] = { "rank 0 output byte 0", "missing {2}", NULL };
    assert_rejected(s, CS_SCHEDULE_ERROR_WRONG_RESULT, parts);
    cs_schedule_free(s);
}

/* Setup: P = 2 all-reduce; rank 1 reduces rank 0's data into its output, then reduces its own
 * input in again with a local REDUCE.
 * Expectation: rank 1's step 1 counts rank 1 twice. */
static void
test_bad_double(void)
{
    CsSchedule *s = new_sched(CS_OP_ALL_REDUCE, 2, 0, 16, 1);
    cs_schedule_send(s, 0, 0, 1, CS_BUF_INPUT, 0, 16, 0);
    recv_reduce(s, 1, 0, 0, CS_BUF_INPUT, 0, CS_BUF_OUTPUT, 0, 16);
    cs_schedule_step(s, 1, 0, CS_STEP_REDUCE, -1, -1, CS_BUF_INPUT, 0, CS_BUF_OUTPUT, 0, 16, 0);
    const char *parts[] = { "rank 1 step 1 (reduce", "twice", "rank 1 in both", NULL };
    assert_rejected(s, CS_SCHEDULE_ERROR_WRONG_RESULT, parts);
    cs_schedule_free(s);
}

/* Setup: P = 2 all-gather of 16 bytes (blocks of 2 floats); each rank puts the block it
 * receives at its own block's place and its own block at the other's.
 * Expectation: rank 0's output byte 0 holds element 2 (rank 1's first) instead of element 0. */
static void
test_bad_misplaced(void)
{
    CsSchedule *s = new_sched(CS_OP_ALL_GATHER, 2, 0, 16, 1);
    for (int r = 0; r < 2; r++) {
        int q = 1 - r;
        copy(s, r, 0, CS_BUF_INPUT, 0, CS_BUF_OUTPUT, q * 8, 8);
        cs_schedule_send(s, r, 0, q, CS_BUF_INPUT, 0, 8, 0);
        cs_schedule_recv(s, r, 0, q, CS_BUF_OUTPUT, r * 8, 8, 0);
    }
    const char *parts[] = { "rank 0 output byte 0 holds element 2 of ranks {1}",
                            "expected element 0 of ranks {0}", NULL };
    assert_rejected(s, CS_SCHEDULE_ERROR_WRONG_RESULT, parts);
    cs_schedule_free(s);
}

/* Setup: P = 2 broadcast; rank 1 never receives, so its output stays unwritten; rank 0 sends
 * nothing either.
 * Expectation: rank 1's output "holds nothing". */
static void
test_bad_unwritten(void)
{
    CsSchedule *s = new_sched(CS_OP_BROADCAST, 2, 0, 16, 1);
    copy(s, 0, 0, CS_BUF_INPUT, 0, CS_BUF_OUTPUT, 0, 16);
    const char *parts[] = { "rank 1 output byte 0 holds nothing", NULL };
    assert_rejected(s, CS_SCHEDULE_ERROR_WRONG_RESULT, parts);
    cs_schedule_free(s);
}

/* Setup: P = 2; both ranks receive before they send.
 * Expectation: deadlock, naming rank 0's receive. */
static void
test_bad_deadlock(void)
{
    CsSchedule *s = new_sched(CS_OP_ALL_REDUCE, 2, 0, 16, 1);
    for (int r = 0; r < 2; r++) {
        recv_reduce(s, r, 0, 1 - r, CS_BUF_INPUT, 0, CS_BUF_OUTPUT, 0, 16);
        cs_schedule_send(s, r, 0, 1 - r, CS_BUF_INPUT, 0, 16, 0);
    }
    const char *parts[] = { "deadlock", "rank 0 step 0 (recv_reduce from rank 1", "2 of 2", NULL };
    assert_rejected(s, CS_SCHEDULE_ERROR_DEADLOCK, parts);
    cs_schedule_free(s);
}

/* Setup: P = 2 broadcast where rank 0 sends twice and rank 1 receives once.
 * Expectation: the second message is left over. */
static void
test_bad_unmatched(void)
{
    CsSchedule *s = new_sched(CS_OP_BROADCAST, 2, 0, 16, 1);
    copy(s, 0, 0, CS_BUF_INPUT, 0, CS_BUF_OUTPUT, 0, 16);
    cs_schedule_send(s, 0, 0, 1, CS_BUF_INPUT, 0, 16, 0);
    cs_schedule_send(s, 0, 0, 1, CS_BUF_INPUT, 0, 16, 1);
    cs_schedule_recv(s, 1, 0, 0, CS_BUF_OUTPUT, 0, 16, 0);
    const char *parts[] = { "unmatched message", "rank 0 step 2 (send to rank 1", NULL };
    assert_rejected(s, CS_SCHEDULE_ERROR_DEADLOCK, parts);
    cs_schedule_free(s);
}

/* Setup: P = 2 broadcast; rank 0 sends 16 bytes, rank 1 receives 8 twice.
 * Expectation: size mismatch naming both steps and sizes. */
static void
test_bad_size(void)
{
    CsSchedule *s = new_sched(CS_OP_BROADCAST, 2, 0, 16, 1);
    copy(s, 0, 0, CS_BUF_INPUT, 0, CS_BUF_OUTPUT, 0, 16);
    cs_schedule_send(s, 0, 0, 1, CS_BUF_INPUT, 0, 16, 0);
    cs_schedule_recv(s, 1, 0, 0, CS_BUF_OUTPUT, 0, 8, 0);
    cs_schedule_recv(s, 1, 0, 0, CS_BUF_OUTPUT, 8, 8, 1);
    const char *parts[]
        = { "size mismatch", "rank 1 step 0", "expects 8 bytes", "carries 16 bytes", NULL };
    assert_rejected(s, CS_SCHEDULE_ERROR_INVALID, parts);
    cs_schedule_free(s);
}

/* Setup: as test_ok_eight_slots with 9 messages of one float each way (blocks of 9 floats),
 * every send before any receive.
 * Expectation: each rank's 9th send waits for a ninth slot that never frees: deadlock. */
static void
test_bad_slots(void)
{
    CsSchedule *s = new_sched(CS_OP_ALL_TO_ALL, 2, 0, 72, 1);
    for (int r = 0; r < 2; r++) {
        int q = 1 - r;
        copy(s, r, 0, CS_BUF_INPUT, r * 36, CS_BUF_OUTPUT, r * 36, 36);
        for (int k = 0; k < 9; k++)
            cs_schedule_send(s, r, 0, q, CS_BUF_INPUT, q * 36 + k * 4, 4, k);
        for (int k = 0; k < 9; k++)
            cs_schedule_recv(s, r, 0, q, CS_BUF_OUTPUT, q * 36 + k * 4, 4, k);
    }
    const char *parts[] = { "deadlock", "rank 0 step 9 (send to rank 1", "free slot", NULL };
    assert_rejected(s, CS_SCHEDULE_ERROR_DEADLOCK, parts);
    cs_schedule_free(s);
}

/* Setup: P = 2 all-reduce where the received data is reduced with the (never written)
 * output instead of the input.
 * Expectation: "reduces data that was never written" (on whichever rank runs first). */
static void
test_bad_uninitialized(void)
{
    CsSchedule *s = new_sched(CS_OP_ALL_REDUCE, 2, 0, 16, 1);
    for (int r = 0; r < 2; r++) {
        cs_schedule_send(s, r, 0, 1 - r, CS_BUF_INPUT, 0, 16, 0);
        recv_reduce(s, r, 0, 1 - r, CS_BUF_OUTPUT, 0, CS_BUF_OUTPUT, 0, 16);
    }
    const char *parts[] = { "step 1 (recv_reduce", "never written", "output byte 0", NULL };
    assert_rejected(s, CS_SCHEDULE_ERROR_WRONG_RESULT, parts);
    cs_schedule_free(s);
}

/* Setup: P = 2 all-reduce where each rank reduces element 0 of the message with element 1 of
 * its input (offsets shifted by one float).
 * Expectation: "reduces different elements together". */
static void
test_bad_index(void)
{
    CsSchedule *s = new_sched(CS_OP_ALL_REDUCE, 2, 0, 16, 1);
    for (int r = 0; r < 2; r++) {
        cs_schedule_send(s, r, 0, 1 - r, CS_BUF_INPUT, 0, 8, 0);
        recv_reduce(s, r, 0, 1 - r, CS_BUF_INPUT, 4, CS_BUF_OUTPUT, 0, 8);
    }
    const char *parts[] = { "different elements", "received element 0", "local element 1", NULL };
    assert_rejected(s, CS_SCHEDULE_ERROR_WRONG_RESULT, parts);
    cs_schedule_free(s);
}

/* Setup: P = 1 all-reduce whose only step writes the input buffer.
 * Expectation: rejected: a collective leaves its input unchanged. */
static void
test_bad_writes_input(void)
{
    CsSchedule *s = new_sched(CS_OP_ALL_REDUCE, 1, 0, 16, 1);
    copy(s, 0, 0, CS_BUF_INPUT, 0, CS_BUF_OUTPUT, 0, 16);
    copy(s, 0, 0, CS_BUF_OUTPUT, 0, CS_BUF_INPUT, 0, 16);
    const char *parts[] = { "rank 0 step 1 (copy", "input buffer", NULL };
    assert_rejected(s, CS_SCHEDULE_ERROR_INVALID, parts);
    cs_schedule_free(s);
}

/* Setup: P = 1 all-reduce on 2 channels; channel 0 copies bytes [0, 16) to the output and
 * channel 1 copies bytes [8, 16) again.
 * Expectation: a race on output bytes [8, 16) between the two channels. */
static void
test_bad_race(void)
{
    CsSchedule *s = new_sched(CS_OP_ALL_REDUCE, 1, 0, 16, 2);
    copy(s, 0, 0, CS_BUF_INPUT, 0, CS_BUF_OUTPUT, 0, 16);
    copy(s, 0, 1, CS_BUF_INPUT, 8, CS_BUF_OUTPUT, 8, 8);
    const char *parts[] = { "race between channels", "output bytes [8, 16)", NULL };
    assert_rejected(s, CS_SCHEDULE_ERROR_INVALID, parts);
    cs_schedule_free(s);
}

/* Setup: the same on 2 channels touching disjoint halves.
 * Expectation: correct. */
static void
test_ok_channels(void)
{
    g_autoptr(CsSchedule) s = new_sched(CS_OP_ALL_REDUCE, 1, 0, 16, 2);
    copy(s, 0, 0, CS_BUF_INPUT, 0, CS_BUF_OUTPUT, 0, 8);
    copy(s, 0, 1, CS_BUF_INPUT, 8, CS_BUF_OUTPUT, 8, 8);
    cs_schedule_seal(s);
    g_autoptr(GError) error = NULL;
    g_assert_true(cs_check_schedule(s, NULL, &error));
    g_assert_no_error(error);
}

/* Setup: a 4,096-rank all-reduce of 4,096 floats done as a binomial-free "star": every rank
 * sends its input to rank 0, which reduces them one by one, then sends the result back.
 * Expectation: correct; 2 x 4,095 messages; the rank sets need 64 words each. */
static void
test_ok_large_p(void)
{
    int P = 4096;
    g_autoptr(CsSchedule) s = new_sched(CS_OP_ALL_REDUCE, P, 0, 4 * (gint64)P, 1);
    copy(s, 0, 0, CS_BUF_INPUT, 0, CS_BUF_OUTPUT, 0, 4 * (gint64)P);
    for (int r = 1; r < P; r++) {
        cs_schedule_send(s, r, 0, 0, CS_BUF_INPUT, 0, 4 * (gint64)P, 0);
        recv_reduce(s, 0, 0, r, CS_BUF_OUTPUT, 0, CS_BUF_OUTPUT, 0, 4 * (gint64)P);
    }
    for (int r = 1; r < P; r++) {
        cs_schedule_send(s, 0, 0, r, CS_BUF_OUTPUT, 0, 4 * (gint64)P, 1);
        cs_schedule_recv(s, r, 0, 0, CS_BUF_OUTPUT, 0, 4 * (gint64)P, 1);
    }
    cs_schedule_seal(s);
    CsCheckReport rep;
    g_autoptr(GError) error = NULL;
    g_assert_true(cs_check_schedule(s, &rep, &error));
    g_assert_no_error(error);
    g_assert_cmpint(rep.n_messages, ==, 2 * (P - 1));
}

/* ---- Step flags (NVLS) ---- */

static void
flagged_send(CsSchedule *s, int rank, int peer, CsBuffer buf, gint64 off, gint64 bytes,
             guint8 flags)
{
    CsStep st = {
        .src_offset = off,
        .bytes = bytes,
        .send_peer = peer,
        .recv_peer = -1,
        .kind = CS_STEP_SEND,
        .src_buf = (guint8)buf,
        .dst_buf = (guint8)buf,
        .flags = flags,
    };
    cs_schedule_add(s, rank, &st);
}

/* P = 3 all-reduce of 3 floats as NVLS does it, shard x (one float) headed by rank x.
 * Reduce-scatter: x sends shard x+1 to x+1 (leading x+1's in-switch reduction, @rs_lead) and
 * shard x+2 to x+2 (a member); x reduces what x-1 then x-2 send into its output. All-gather:
 * x multicasts its reduced shard to x+1 (leader, @ag_lead) then x+2 (member). On the
 * connection x -> x+q the reduce-scatter message comes first, as x+q receives them. */
static CsSchedule *
nvls_p3(guint8 rs_lead, guint8 ag_lead)
{
    CsSchedule *s = new_sched(CS_OP_ALL_REDUCE, 3, 0, 3 * F, 1);
    for (int x = 0; x < 3; x++) {
        int a = (x + 1) % 3;
        int b = (x + 2) % 3;
        flagged_send(s, x, a, CS_BUF_INPUT, a * F, F, rs_lead);
        flagged_send(s, x, b, CS_BUF_INPUT, b * F, F, CS_STEP_FLAG_SHARED_LAST_HOP);
        recv_reduce(s, x, 0, b, CS_BUF_INPUT, x * F, CS_BUF_OUTPUT, x * F, F);
        recv_reduce(s, x, 0, a, CS_BUF_OUTPUT, x * F, CS_BUF_OUTPUT, x * F, F);
        flagged_send(s, x, a, CS_BUF_OUTPUT, x * F, F, ag_lead);
        flagged_send(s, x, b, CS_BUF_OUTPUT, x * F, F, CS_STEP_FLAG_SHARED_FIRST_HOP);
        cs_schedule_recv(s, x, 0, b, CS_BUF_OUTPUT, b * F, F, 0);
        cs_schedule_recv(s, x, 0, a, CS_BUF_OUTPUT, a * F, F, 0);
    }
    return s;
}

/* Setup: nvls_p3 with its leaders flagged.
 * Expectation: correct, with the traffic of the same schedule without flags: 4 messages of
 * one float per rank; the reduce-scatter sends in rounds 1, 2, the multicast in 3, 4. */
static void
test_ok_flags(void)
{
    g_autoptr(CsSchedule) s = nvls_p3(CS_STEP_FLAG_REDUCE_SELF, CS_STEP_FLAG_MULTICAST_SELF);
    CsCheckReport rep;
    g_autoptr(GError) error = NULL;

    cs_schedule_seal(s);
    g_assert_true(cs_check_schedule(s, &rep, &error));
    g_assert_no_error(error);
    g_assert_cmpint(rep.n_messages, ==, 12);
    g_assert_cmpint(rep.bytes_sent, ==, 12 * F);
    g_assert_cmpint(rep.n_rounds, ==, 4);
}

/* Setup: nvls_p3 whose multicasts have no leader (the first send carries no flag).
 * Expectation: rejected at a member send (a rank's step 5; which rank the checker reaches
 * first is its own business): the data would be right, but the member's first hop would be
 * charged to nobody. */
static void
test_bad_flags_no_leader(void)
{
    CsSchedule *s = nvls_p3(CS_STEP_FLAG_REDUCE_SELF, 0);
    const char *parts[] = { "flags: rank ", " step 5 (send to rank ", "multicast member", NULL };
    assert_rejected(s, CS_SCHEDULE_ERROR_INVALID, parts);
    cs_schedule_free(s);
}

/* Setup: nvls_p3 whose in-switch reductions have no leader.
 * Expectation: rejected at the first member message taken: the second receive of some
 * rank takes a member send (a rank's step 1) on top of a sum whose first message was not
 * combined in the switch. */
static void
test_bad_flags_no_sum(void)
{
    CsSchedule *s = nvls_p3(0, CS_STEP_FLAG_MULTICAST_SELF);
    const char *parts[] = { "flags: rank ", " step 1 (send to rank ", "reduction member", NULL };
    assert_rejected(s, CS_SCHEDULE_ERROR_INVALID, parts);
    cs_schedule_free(s);
}

/* Setup: P = 2 broadcast whose one message claims to be combined in the switch, but rank 1
 * stores it with a plain receive.
 * Expectation: rejected: a message summed in the switch must be reduced. */
static void
test_bad_flags_not_reduced(void)
{
    CsSchedule *s = new_sched(CS_OP_BROADCAST, 2, 0, 16, 1);
    flagged_send(s, 0, 1, CS_BUF_INPUT, 0, 16, CS_STEP_FLAG_REDUCE_SELF);
    copy(s, 0, 0, CS_BUF_INPUT, 0, CS_BUF_OUTPUT, 0, 16);
    cs_schedule_recv(s, 1, 0, 0, CS_BUF_OUTPUT, 0, 16, 0);
    const char *parts[] = { "flags: rank 0 step 0", "does not reduce it", NULL };
    assert_rejected(s, CS_SCHEDULE_ERROR_INVALID, parts);
    cs_schedule_free(s);
}

/* P = 3 all-reduce of one float as SHARP does it, rooted at rank 0 in the IR: ranks 1 and 2
 * send their contribution to 0 (1 leads the in-switch reduction with @lead, 2 is a member), 0
 * reduces them with its own into its output, and the switch returns the sum to 1 and 2: 0's
 * send to 1 leads with @from (FROM_SWITCH), the one to 2 is a multicast member. */
static CsSchedule *
sharp_p3(guint8 lead, guint8 from)
{
    CsSchedule *s = new_sched(CS_OP_ALL_REDUCE, 3, 0, F, 1);
    flagged_send(s, 1, 0, CS_BUF_INPUT, 0, F, lead);
    flagged_send(s, 2, 0, CS_BUF_INPUT, 0, F, lead != 0 ? CS_STEP_FLAG_SHARED_LAST_HOP : 0);
    recv_reduce(s, 0, 0, 1, CS_BUF_INPUT, 0, CS_BUF_OUTPUT, 0, F);
    recv_reduce(s, 0, 0, 2, CS_BUF_OUTPUT, 0, CS_BUF_OUTPUT, 0, F);
    flagged_send(s, 0, 1, CS_BUF_OUTPUT, 0, F, from);
    flagged_send(s, 0, 2, CS_BUF_OUTPUT, 0, F, CS_STEP_FLAG_SHARED_FIRST_HOP);
    cs_schedule_recv(s, 1, 0, 0, CS_BUF_OUTPUT, 0, F, 0);
    cs_schedule_recv(s, 2, 0, 0, CS_BUF_OUTPUT, 0, F, 0);
    return s;
}

/* Setup: sharp_p3 with its leaders flagged.
 * Expectation: correct: 4 messages of one float; a FROM_SWITCH send leads a multicast. */
static void
test_ok_flags_from_switch(void)
{
    g_autoptr(CsSchedule) s = sharp_p3(CS_STEP_FLAG_REDUCE_SELF, CS_STEP_FLAG_FROM_SWITCH);
    CsCheckReport rep;
    g_autoptr(GError) error = NULL;

    cs_schedule_seal(s);
    g_assert_true(cs_check_schedule(s, &rep, &error));
    g_assert_no_error(error);
    g_assert_cmpint(rep.n_messages, ==, 4);
}

/* Setup: sharp_p3 whose reduction into rank 0 is not done in the switch (no flags on it).
 * Expectation: rejected at rank 0's send from the switch (its step 2): no in-switch sum is
 * there to send, so its hop into the switch would be charged to nobody. */
static void
test_bad_flags_from_switch_no_sum(void)
{
    CsSchedule *s = sharp_p3(0, CS_STEP_FLAG_FROM_SWITCH);
    const char *parts[] = { "flags: rank 0 step 2", "sent from the switch", NULL };
    assert_rejected(s, CS_SCHEDULE_ERROR_INVALID, parts);
    cs_schedule_free(s);
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/check/ok/exchange", test_ok_exchange);
    g_test_add_func("/check/ok/chain-rounds", test_ok_chain_rounds);
    g_test_add_func("/check/ok/alltoall", test_ok_alltoall);
    g_test_add_func("/check/ok/rooted", test_ok_rooted);
    g_test_add_func("/check/ok/eight-slots", test_ok_eight_slots);
    g_test_add_func("/check/ok/channels", test_ok_channels);
    g_test_add_func("/check/ok/large-p", test_ok_large_p);
    g_test_add_func("/check/bad/missing-contribution", test_bad_missing);
    g_test_add_func("/check/bad/double-contribution", test_bad_double);
    g_test_add_func("/check/bad/misplaced", test_bad_misplaced);
    g_test_add_func("/check/bad/unwritten", test_bad_unwritten);
    g_test_add_func("/check/bad/deadlock", test_bad_deadlock);
    g_test_add_func("/check/bad/unmatched", test_bad_unmatched);
    g_test_add_func("/check/bad/size-mismatch", test_bad_size);
    g_test_add_func("/check/bad/slots-full", test_bad_slots);
    g_test_add_func("/check/bad/uninitialized", test_bad_uninitialized);
    g_test_add_func("/check/bad/different-index", test_bad_index);
    g_test_add_func("/check/bad/writes-input", test_bad_writes_input);
    g_test_add_func("/check/bad/channel-race", test_bad_race);
    g_test_add_func("/check/ok/flags", test_ok_flags);
    g_test_add_func("/check/bad/flags/no-leader", test_bad_flags_no_leader);
    g_test_add_func("/check/bad/flags/no-sum", test_bad_flags_no_sum);
    g_test_add_func("/check/bad/flags/not-reduced", test_bad_flags_not_reduced);
    g_test_add_func("/check/ok/flags/from-switch", test_ok_flags_from_switch);
    g_test_add_func("/check/bad/flags/from-switch-no-sum", test_bad_flags_from_switch_no_sum);
    return g_test_run();
}
