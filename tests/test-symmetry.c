// SPDX-License-Identifier: MIT
/* Issue 28: a schedule that repeats under a shift of ranks replays one period where the machine
 * repeats too (engine.c "Symmetry", topo_symmetry.c). The reduced run must give the whole
 * replay's answer, every rank's finish included, and any asymmetry must fall back to the whole
 * replay by itself. */
#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

#include "algos/registry.h"
#include "engine/engine.h"
#include "predict/predict.h"
#include "test-util.h"

/* Builds ring @op of @size on every rank of @topo with @proto: one period of at least
 * @period_min ranks where it repeats, every rank with 0. */
static CsSchedule *
ring_schedule(const CsTopo *topo, CsOp op, gint64 size, CsProto proto, int channels, int period_min)
{
    CsAlgoArgs args;
    cs_algo_args_init(&args, topo, op, cs_topo_n_ranks(topo), size);
    args.proto = proto;
    args.n_channels = channels;
    args.period_min = period_min;
    g_autoptr(GError) error = NULL;
    CsSchedule *sched = cs_algo_build(cs_algo_lookup("ring", NULL), &args, &error);
    g_assert_no_error(error);
    return sched;
}

/* The reduced and the whole replay of the same schedule agree exactly on every rank. The
 * period is the predictor's: the shortest the schedule repeats under that the engine finds
 * the machine repeating under too. */
static void
assert_same_run(const CsTopo *topo, CsOp op, gint64 size, CsProto proto, int channels,
                int want_period)
{
    g_autoptr(CsSchedule) whole = ring_schedule(topo, op, size, proto, channels, 0);
    const int P = cs_topo_n_ranks(topo);
    g_assert_cmpint(cs_schedule_period(whole), ==, P);
    g_autoptr(GError) error = NULL;
    g_autoptr(CsSchedule) part = NULL;
    g_autoptr(CsResult) a = NULL;
    for (int period_min = 1; a == NULL;) {
        g_clear_pointer(&part, cs_schedule_free);
        part = ring_schedule(topo, op, size, proto, channels, period_min);
        a = cs_engine_run(part, topo, NULL, &error);
        if (a == NULL) {
            g_assert_error(error, CS_ENGINE_ERROR, CS_ENGINE_ERROR_ASYMMETRIC);
            g_clear_error(&error);
            period_min = cs_schedule_period(part) + 1;
        }
    }
    g_assert_cmpint(cs_schedule_period(part), ==, want_period);
    g_assert_cmpuint(cs_schedule_n_steps(part) * (P / want_period), ==, cs_schedule_n_steps(whole));
    g_autoptr(CsResult) b = cs_engine_run(whole, topo, NULL, &error);
    g_assert_no_error(error);
    g_assert_cmpint(a->time, ==, b->time);
    g_assert_cmpint(a->alpha, ==, b->alpha);
    g_assert_cmpint(a->beta, ==, b->beta);
    g_assert_cmpint(a->bytes_moved, ==, b->bytes_moved);
    g_assert_cmpint(a->n_ranks, ==, P);
    for (int r = 0; r < P; r++)
        g_assert_cmpint(a->rank_finish[r], ==, b->rank_finish[r]);
    /* The reduced replay does the period's share of the work. */
    g_assert_cmpint(a->n_events * (P / want_period), <=, b->n_events + P);
}

static void
test_same_as_whole(void)
{
    g_test_summary("Issue 28: ring all-reduce, all-gather and reduce-scatter replayed on one "
                   "period of ranks give the whole replay's time and every rank's finish to the "
                   "picosecond, with a period's share of the events, on one node (NVSwitch, "
                   "xGMI mesh), two and sixteen rail-optimized nodes, EFA and CPU hosts.");
    static const struct {
        const char *topo;
        int period; /* the smallest shift the ring and the machine share */
    } cases[] = {
        { "dgx-h100x8", 1 },      /* rank order on one NVSwitch */
        { "hgx-h100x8-16n", 16 }, /* rings alternate direction node by node: two nodes */
        { "eth-cpu-8n", 1 },      /* one host per node on a switch */
    };
    static const CsOp ops[] = { CS_OP_ALL_REDUCE, CS_OP_ALL_GATHER, CS_OP_REDUCE_SCATTER };
    for (guint t = 0; t < G_N_ELEMENTS(cases); t++) {
        g_autoptr(CsTopo) topo = cs_test_load_topo(cases[t].topo);
        const int P = cs_topo_n_ranks(topo);
        const gboolean cpu = strcmp(cases[t].topo, "eth-cpu-8n") == 0;
        for (guint o = 0; o < G_N_ELEMENTS(ops); o++)
            for (int proto = cpu ? CS_PROTO_SIMPLE : 0; proto < CS_N_PROTOS; proto++) {
                /* A multiple of P elements per channel (all-reduce repeats only then). */
                gint64 size = (gint64)P * 4 * 4 * 1024;
                int channels = P > 64 ? 4 : 8;
                g_test_message("%s %s %s", cases[t].topo, cs_op_name(ops[o]),
                               cs_proto_name((CsProto)proto));
                assert_same_run(topo, ops[o], size, (CsProto)proto, channels, cases[t].period);
            }
    }
}

static void
test_large(void)
{
    g_test_summary("Issue 28's range of machines: ring all-reduce and all-gather on 256 GPUs (32 "
                   "nodes under one leaf per rail: two nodes replayed) and on 512 GPUs (64 nodes "
                   "in two 32-node leaves: the ring crosses the spine every 32 nodes, so 256 "
                   "ranks are replayed) equal the whole replay on every rank.");
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTopo) su = cs_test_load_topo("hgx-h100x8-32n");
    char *edits[] = { "nodes=64", NULL };
    g_autoptr(CsTopo) two_su = cs_topo_load_edited("hgx-h100x8-128n", edits, &error);
    g_assert_no_error(error);
    g_assert_cmpint(cs_topo_n_ranks(two_su), ==, 512);
    assert_same_run(su, CS_OP_ALL_REDUCE, 256 * 2 * 4 * 16, CS_PROTO_SIMPLE, 2, 16);
    assert_same_run(su, CS_OP_ALL_GATHER, 256 * 2 * 64, CS_PROTO_LL128, 2, 16);
    assert_same_run(two_su, CS_OP_ALL_REDUCE, 512 * 2 * 4 * 4, CS_PROTO_SIMPLE, 2, 256);
}

static void
test_copy_rate(void)
{
    g_test_summary("A rank of the period whose ring successor is its own image still talks to "
                   "another rank: its local copies keep the full rate (a one-rank collective "
                   "would share it over its channels). All-gather of 128 MiB with LL128 on "
                   "DGX A100, one period of one rank.");
    g_autoptr(CsTopo) topo = cs_test_load_topo("dgx-a100x8");
    for (int channels = 8; channels <= 32; channels *= 2)
        assert_same_run(topo, CS_OP_ALL_GATHER, 128 << 20, CS_PROTO_LL128, channels, 1);
}

static void
test_no_period(void)
{
    g_test_summary("A ring all-reduce whose last loop cuts unequal chunks, a broadcast (one "
                   "root) and a ring on two nodes (the second crossed backwards) do not repeat: "
                   "every rank is built; the same all-reduce in whole chunks repeats every two "
                   "nodes.");
    g_autoptr(CsTopo) topo = cs_test_load_topo("hgx-h100x8-16n");
    /* 128 ranks x 2 channels: 1,000 floats per channel is no multiple of 128. */
    g_autoptr(CsSchedule) a
        = ring_schedule(topo, CS_OP_ALL_REDUCE, 2 * 1000 * 4, CS_PROTO_SIMPLE, 2, 1);
    g_assert_cmpint(cs_schedule_period(a), ==, 128);
    g_autoptr(CsSchedule) b = ring_schedule(topo, CS_OP_BROADCAST, 1 << 20, CS_PROTO_SIMPLE, 2, 1);
    g_assert_cmpint(cs_schedule_period(b), ==, 128);
    g_autoptr(CsSchedule) c
        = ring_schedule(topo, CS_OP_ALL_REDUCE, 2 * 1024 * 4, CS_PROTO_SIMPLE, 2, 1);
    g_assert_cmpint(cs_schedule_period(c), ==, 16);
    g_autoptr(CsTopo) two = cs_test_load_topo("hgx-h100x8-2n");
    g_autoptr(CsSchedule) d = ring_schedule(two, CS_OP_ALL_GATHER, 1 << 20, CS_PROTO_SIMPLE, 8, 1);
    g_assert_cmpint(cs_schedule_period(d), ==, 16);
}

/* Bytes every rank of @sched sends, its period's ranks standing for all. */
static gint64
bytes_sent(const CsSchedule *sched)
{
    const int P = cs_schedule_n_ranks(sched);
    const int T = cs_schedule_period(sched);
    gint64 sum = 0;
    for (int r = 0; r < T; r++) {
        gsize n = 0;
        const CsStep *steps = cs_schedule_steps(sched, r, &n);
        for (gsize i = 0; i < n; i++)
            if (cs_step_kind_sends(steps[i].kind))
                sum += steps[i].bytes;
    }
    return sum * (P / T);
}

static void
test_shares_bounded(void)
{
    g_test_summary("A ring all-reduce whose last loop cuts unequal chunks repeats every two "
                   "nodes once every chunk is bounded to the smallest or the largest of those it "
                   "stands for (CsAlgoShares): the low end sends fewer bytes than the exact "
                   "schedule, the high end more; without one period asked, a bound changes "
                   "nothing.");
    g_autoptr(CsTopo) topo = cs_test_load_topo("hgx-h100x8-16n");
    const CsAlgo *ring = cs_algo_lookup("ring", NULL);
    /* Floats per channel, no multiple of 128: 1,000 is 125 chunks of 8 and 3 empty ones;
     * 300,001 is 127 of 2,344 and one of 2,313. */
    static const gint64 counts[] = { 1000, 300001 };
    for (guint i = 0; i < G_N_ELEMENTS(counts); i++) {
        gint64 sent[3];
        for (int shares = CS_ALGO_SHARES_EXACT; shares <= CS_ALGO_SHARES_HIGH; shares++) {
            CsAlgoArgs args;
            cs_algo_args_init(&args, topo, CS_OP_ALL_REDUCE, 128, 2 * counts[i] * 4);
            args.n_channels = 2;
            args.shares = (CsAlgoShares)shares;
            g_autoptr(GError) error = NULL;
            g_autoptr(CsSchedule) whole = cs_algo_build(ring, &args, &error);
            g_assert_no_error(error);
            g_assert_cmpint(cs_schedule_period(whole), ==, 128);
            args.period_min = 1;
            g_autoptr(CsSchedule) part = cs_algo_build(ring, &args, &error);
            g_assert_no_error(error);
            g_assert_cmpint(cs_schedule_period(part), ==,
                            shares == CS_ALGO_SHARES_EXACT ? 128 : 16);
            g_assert_cmpint(cs_algo_period(ring, &args), ==, cs_schedule_period(part));
            sent[shares] = bytes_sent(part);
            if (shares != CS_ALGO_SHARES_EXACT)
                g_assert_cmpint(bytes_sent(whole), ==, sent[CS_ALGO_SHARES_EXACT]);
        }
        g_assert_cmpint(sent[CS_ALGO_SHARES_LOW], <, sent[CS_ALGO_SHARES_EXACT]);
        g_assert_cmpint(sent[CS_ALGO_SHARES_EXACT], <, sent[CS_ALGO_SHARES_HIGH]);
    }
}

static void
test_bracket_as_whole(void)
{
    g_test_summary(
        "Issue 28 (symmetry within 0.1% wherever the whole replay is feasible): a ring "
        "all-reduce whose channels' shares are no multiple of the ranks, on one NVSwitch, "
        "one NVL72 rack and 16 rail-optimized nodes, 2 to 32 channels, under the reservation "
        "and the max-min models: where the predictor brackets it, its time is within 0.1% of "
        "every rank replayed as it is cut; where it does not, it is that replay to the "
        "picosecond. The engine's time is not monotone in the bytes (FCFS lanes reorder), so "
        "the bracket is checked here, not assumed.");
    static const struct {
        const char *topo;
        gint64 size;
        int channels;
    } cases[] = {
        { "dgx-h100x8", 1000004, 2 },        { "dgx-h100x8", 10000004, 16 },
        { "dgx-h100x8", 100000004, 32 },     { "gb200-nvl72", 10000004, 2 },
        { "gb200-nvl72", 100000004, 2 },     { "gb200-nvl72", 100000004, 16 },
        { "hgx-h100x8-16n", 1000004, 8 },    { "hgx-h100x8-16n", 10000004, 32 },
        { "hgx-h100x8-16n", 100000000, 8 },  { "hgx-h100x8-16n", 100000000, 32 },
        { "hgx-h100x8-16n", 300000004, 32 },
    };
    static const char *const models[] = { "reservation", "maxmin" };
    const CsAlgo *ring = cs_algo_lookup("ring", NULL);
    int n_bracketed = 0;
    int n_exact = 0;
    for (guint m = 0; m < G_N_ELEMENTS(models); m++)
        for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
            /* The maxmin model on 128 ranks is slow: its share of the cases is the small ones. */
            if (m == 1 && cases[i].size > 20000000 && strcmp(cases[i].topo, "hgx-h100x8-16n") == 0)
                continue;
            g_autoptr(CsTopo) topo = cs_test_load_topo(cases[i].topo);
            CsPredictOptions opt;
            cs_predict_options_init(&opt);
            opt.exact = TRUE;
            opt.n_channels = cases[i].channels;
            opt.engine.net_model = models[m];
            CsPrediction a, b;
            g_autoptr(GError) error = NULL;
            g_assert_true(cs_predict_one(topo, CS_OP_ALL_REDUCE, cases[i].size, ring,
                                         CS_PROTO_SIMPLE, &opt, &a, &error));
            g_assert_no_error(error);
            opt.whole = TRUE;
            g_assert_true(cs_predict_one(topo, CS_OP_ALL_REDUCE, cases[i].size, ring,
                                         CS_PROTO_SIMPLE, &opt, &b, &error));
            g_assert_no_error(error);
            g_assert_false(b.bracketed);
            g_assert_cmpint(b.replayed_ranks, ==, cs_topo_n_ranks(topo));
            g_test_message("%s %s %" G_GINT64_FORMAT " B, %d channels: %s %.6f (low %.6f) us, "
                           "whole %.6f us",
                           models[m], cases[i].topo, cases[i].size, cases[i].channels,
                           a.bracketed ? "bracketed" : "replayed", a.time_us, a.bracket_low_us,
                           b.time_us);
            if (a.bracketed) {
                n_bracketed++;
                g_assert_cmpint(a.replayed_ranks, <, cs_topo_n_ranks(topo));
                g_assert_cmpfloat(fabs(a.time_us - b.time_us), <=, 1e-3 * b.time_us);
                g_assert_cmpfloat(fabs(a.time_us - a.bracket_low_us), <=, 1e-3 * a.time_us);
            }
            else {
                n_exact++;
                g_assert_cmpint(a.result.time, ==, b.result.time);
            }
        }
    /* Both paths are taken (hgx-h100x8-16n at 300 MB on 32 channels: ends 1.2% apart). */
    g_assert_cmpint(n_bracketed, >=, 10);
    g_assert_cmpint(n_exact, >=, 1);
}

/* hgx-h100x8-16n with the network links of node 1's NICs (both directions) scaled by @scale. */
static CsTopo *
with_one_slow_nic(double scale)
{
    g_autoptr(CsTopo) base = cs_test_load_topo("hgx-h100x8-16n");
    g_autofree char *json = cs_topo_to_json(base);
    cJSON *root = cJSON_Parse(json);
    g_assert_nonnull(root);
    cJSON *links = cJSON_GetObjectItem(root, "links");
    int changed = 0;
    cJSON *link;
    cJSON_ArrayForEach(link, links)
    {
        cJSON *ends = cJSON_GetObjectItem(link, "endpoints");
        const char *kind = cJSON_GetStringValue(cJSON_GetObjectItem(link, "kind"));
        gboolean hit = FALSE;
        cJSON *end;
        cJSON_ArrayForEach(end, ends)
        {
            const char *name = cJSON_GetStringValue(end);
            hit = hit || (name != NULL && g_str_has_prefix(name, "n1/nic"));
        }
        if (!hit || kind == NULL || strcmp(kind, "ib") != 0)
            continue;
        const char *text = cJSON_GetStringValue(cJSON_GetObjectItem(link, "bandwidth"));
        g_assert_nonnull(text);
        const char *unit = strchr(text, ' ');
        g_assert_nonnull(unit);
        g_autofree char *now = g_strdup_printf("%.6g%s", g_ascii_strtod(text, NULL) * scale, unit);
        cJSON_ReplaceItemInObject(link, "bandwidth", cJSON_CreateString(now));
        changed++;
    }
    g_assert_cmpint(changed, >=, 2);
    g_autofree char *out = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    g_autoptr(GError) error = NULL;
    CsTopo *topo = cs_topo_load_data(out, "slow-nic", &error);
    g_assert_no_error(error);
    return topo;
}

static void
test_asymmetry_falls_back(void)
{
    g_test_summary(
        "One node whose NICs run at half rate breaks the symmetry: the engine refuses the "
        "period's replay (naming a link), and the predictor replays the schedule "
        "whole by itself, with the whole replay's answer; the same machine at full "
        "rate still replays one period.");
    g_autoptr(CsTopo) slow = with_one_slow_nic(0.5);
    g_autoptr(CsSchedule) part
        = ring_schedule(slow, CS_OP_ALL_REDUCE, 128 * 2 * 4 * 64, CS_PROTO_SIMPLE, 2, 1);
    g_assert_cmpint(cs_schedule_period(part), ==, 16);
    g_autoptr(GError) error = NULL;
    g_autoptr(CsResult) refused = cs_engine_run(part, slow, NULL, &error);
    g_assert_null(refused);
    g_assert_error(error, CS_ENGINE_ERROR, CS_ENGINE_ERROR_ASYMMETRIC);
    g_assert_nonnull(strstr(error->message, "n1/nic"));
    g_clear_error(&error);

    CsPredictOptions opt;
    cs_predict_options_init(&opt);
    opt.exact = TRUE;
    opt.n_channels = 2;
    for (int s = 0; s < 2; s++) {
        g_autoptr(CsTopo) topo = s == 0 ? g_steal_pointer(&slow) : with_one_slow_nic(1.0);
        CsPrediction a, b;
        const CsAlgo *ring = cs_algo_lookup("ring", NULL);
        opt.whole = FALSE;
        g_assert_true(cs_predict_one(topo, CS_OP_ALL_REDUCE, 128 * 2 * 4 * 256, ring,
                                     CS_PROTO_SIMPLE, &opt, &a, &error));
        g_assert_no_error(error);
        opt.whole = TRUE;
        g_assert_true(cs_predict_one(topo, CS_OP_ALL_REDUCE, 128 * 2 * 4 * 256, ring,
                                     CS_PROTO_SIMPLE, &opt, &b, &error));
        g_assert_no_error(error);
        g_assert_cmpint(a.result.time, ==, b.result.time);
        /* Only the symmetric machine replays fewer events. */
        if (s == 0)
            g_assert_cmpint(a.result.n_events, >=, b.result.n_events);
        else
            g_assert_cmpint(4 * a.result.n_events, <=, b.result.n_events + 128);
    }
}

static void
test_gpus_per_thread(void)
{
    g_test_summary("A host thread launching 32 GPUs (nccl-tests -g 32) spans two periods of 16: "
                   "refused as asymmetric.");
    g_autoptr(CsTopo) topo = cs_test_load_topo("hgx-h100x8-16n");
    g_autoptr(CsSchedule) part
        = ring_schedule(topo, CS_OP_ALL_GATHER, 128 * 2 * 1024, CS_PROTO_SIMPLE, 2, 1);
    g_assert_cmpint(cs_schedule_period(part), ==, 16);
    CsEngineOptions eo = { .gpus_per_thread = 32 };
    g_autoptr(GError) error = NULL;
    g_autoptr(CsResult) r = cs_engine_run(part, topo, &eo, &error);
    g_assert_null(r);
    g_assert_error(error, CS_ENGINE_ERROR, CS_ENGINE_ERROR_ASYMMETRIC);
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/symmetry/same-as-whole", test_same_as_whole);
    g_test_add_func("/symmetry/copy-rate", test_copy_rate);
    g_test_add_func("/symmetry/large", test_large);
    g_test_add_func("/symmetry/no-period", test_no_period);
    g_test_add_func("/symmetry/asymmetry-falls-back", test_asymmetry_falls_back);
    g_test_add_func("/symmetry/gpus-per-thread", test_gpus_per_thread);
    g_test_add_func("/symmetry/shares-bounded", test_shares_bounded);
    g_test_add_func("/symmetry/bracket-as-whole", test_bracket_as_whole);
    return g_test_run();
}
