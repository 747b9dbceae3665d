// SPDX-License-Identifier: MIT
/* `collsim explain`: one algorithm's schedule told round by round in words ("Round 1: GPU 0
 * sends 1 MiB to GPU 4"), then its predicted time split into alpha, beta, gamma and overhead
 * beside the textbook closed form, and optionally a Chrome trace-event timeline of its steps. */
#include "config.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "algos/registry.h"
#include "sched/check.h"
#include "cli/cli.h"
#include "cli/cli_timeline.h"
#include "base/json_util.h"
#include "models/alpha_beta.h"
#include "models/netmodel.h"
#include "predict/predict.h"
#include "topo/topo.h"
#include "base/units.h"

/* Rounds told in full before the rest is summarised, and senders named per round. */
#define MAX_ROUNDS_SHOWN 8
#define MAX_SENDERS_SHOWN 6

static const char summary[]
    = "Explain one algorithm's schedule round by round, and where its predicted time goes.";

static const char description[]
    = "A round is a step that waits for the step before it: a send waits for its channel's\n"
      "previous step and, when it forwards data, for the receive that brought it (the ASAP\n"
      "rounds of the semantic checker). Chunks of the same transfer in the same round are told\n"
      "as one (\"GPU 0 sends 3 chunks (1.5 MiB) to GPU 1\"); past the first rounds the rest is\n"
      "summarised.\n"
      "\n"
      "The predicted time is split along the critical path into alpha (link and protocol\n"
      "latency), beta (bytes at link bandwidth, waiting under contention included), gamma\n"
      "(reductions and copies at GPU speed) and overhead (launch and per-step costs), and shown\n"
      "beside the textbook alpha-beta closed form of the algorithm when one exists.\n"
      "\n"
      "Without --algo (or --proto) collsim explains its own best choice for the size.\n"
      "--timeline FILE writes every step as a Chrome trace event (open it in chrome://tracing\n"
      "or Perfetto): one process per GPU, one thread per channel (two for grouped send/recv,\n"
      "whose sends and receives run apart) and a thread with the spans of the whole\n"
      "collective and of its launch, and an arrow (a flow event) from each message's send to\n"
      "its receive; a process per switch that reduces or multicasts (NVLS, SHARP) holding\n"
      "those operations, each message of one drawn through the switch; and a process\n"
      "\"links (utilization)\" with a counter track of each busy link's utilization.\n"
      "\n"
      "Example (the broadcast of the seed article, on 6 GPUs):\n"
      "  collsim explain --topo dgx-h100x8 --op broadcast --algo mst --ranks 6";

/* ---- Words ---- */

/* "1", "1 and 2", "1, 2 and 3". */
static char *
join_ranks(const int *ranks, int n)
{
    GString *s = g_string_new(NULL);
    for (int i = 0; i < n; i++) {
        if (i > 0)
            g_string_append(s, i == n - 1 ? " and " : ", ");
        g_string_append_printf(s, "%d", ranks[i]);
    }
    return g_string_free(s, FALSE);
}

/* ---- Rounds ---- */

/* What one rank sends one peer in one round: its chunks merged. */
/* What a sending step does with the data, for the verb. */
typedef enum {
    ACT_SEND,    /* its own data */
    ACT_FORWARD, /* what it just received */
    ACT_REDUCE,  /* what it received plus its own */
} Action;

typedef struct {
    int round;
    int rank;
    int peer;
    int n_chunks;
    gint64 bytes;
    Action action; /* of the first chunk; chunks of one transfer agree */
} Transfer;

static Action
action_of(CsStepKind kind)
{
    switch (kind) {
    case CS_STEP_RECV_REDUCE_SEND:
    case CS_STEP_RECV_REDUCE_COPY_SEND:
        return ACT_REDUCE;
    case CS_STEP_RECV_COPY_SEND:
        return ACT_FORWARD;
    default:
        return ACT_SEND;
    }
}

static const char *
verb(Action action)
{
    static const char *const verbs[] = {
        [ACT_SEND] = "sends",
        [ACT_FORWARD] = "forwards",
        [ACT_REDUCE] = "adds its data and sends",
    };
    return verbs[action];
}

static int
compare_transfers(gconstpointer a, gconstpointer b)
{
    const Transfer *x = a;
    const Transfer *y = b;
    if (x->round != y->round)
        return x->round < y->round ? -1 : 1;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return x->peer < y->peer ? -1 : x->peer > y->peer;
}

/* Every send step, keyed by (round, sender, receiver), chunks merged. */
static GArray *
collect_transfers(const CsSchedule *sched, const int *rounds)
{
    g_autoptr(GHashTable) index = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
    GArray *transfers = g_array_new(FALSE, FALSE, sizeof(Transfer));
    int nranks = cs_schedule_n_ranks(sched);
    gsize base = 0;
    for (int r = 0; r < nranks; r++) {
        gsize n = 0;
        const CsStep *steps = cs_schedule_steps(sched, r, &n);
        for (gsize i = 0; i < n; i++) {
            const CsStep *st = &steps[i];
            if (!cs_step_kind_sends((CsStepKind)st->kind) || st->send_peer < 0 || st->bytes == 0)
                continue;
            int round = rounds[base + i];
            gint64 *key = g_new(gint64, 1);
            *key = ((gint64)round * nranks + r) * nranks + st->send_peer;
            gpointer pos = g_hash_table_lookup(index, key);
            if (pos != NULL) {
                Transfer *t = &g_array_index(transfers, Transfer, GPOINTER_TO_UINT(pos) - 1);
                t->n_chunks++;
                t->bytes += st->bytes;
                g_free(key);
                continue;
            }
            Transfer t = { round, r, st->send_peer, 1, st->bytes, action_of((CsStepKind)st->kind) };
            g_array_append_val(transfers, t);
            g_hash_table_insert(index, key, GUINT_TO_POINTER(transfers->len));
        }
        base += n;
    }
    g_array_sort(transfers, compare_transfers);
    return transfers;
}

/* "1 MiB" or "3 chunks (1.5 MiB)". */
static char *
amount(const Transfer *t)
{
    g_autofree char *size = cs_cli_human_size(t->bytes);
    if (t->n_chunks == 1)
        return g_steal_pointer(&size);
    return g_strdup_printf("%d chunks (%s)", t->n_chunks, size);
}

/* One sender's transfers of a round: "GPU 0 sends 1 MiB each to GPU 1 and 2". */
static char *
describe_sender(const Transfer *ts, int n)
{
    gboolean same = TRUE;
    for (int i = 1; i < n; i++)
        same = same && ts[i].n_chunks == ts[0].n_chunks && ts[i].bytes == ts[0].bytes;
    if (same) {
        int *peers = g_new(int, n);
        for (int i = 0; i < n; i++)
            peers[i] = ts[i].peer;
        g_autofree char *who = join_ranks(peers, n);
        g_free(peers);
        g_autofree char *what = amount(&ts[0]);
        return g_strdup_printf("GPU %d %s %s%s to GPU %s", ts[0].rank, verb(ts[0].action), what,
                               n > 1 ? " each" : "", who);
    }
    GString *s = g_string_new(NULL);
    g_string_append_printf(s, "GPU %d %s ", ts[0].rank, verb(ts[0].action));
    for (int i = 0; i < n; i++) {
        g_autofree char *what = amount(&ts[i]);
        if (i > 0)
            g_string_append(s, i == n - 1 ? " and " : ", ");
        g_string_append_printf(s, "%s to GPU %d", what, ts[i].peer);
    }
    return g_string_free(s, FALSE);
}

/* A round where every rank sends the same amount to the rank k places on: one sentence. */
static char *
describe_shift(const Transfer *ts, int n, int nranks)
{
    if (n != nranks || nranks < 3)
        return NULL;
    int k = ((ts[0].peer - ts[0].rank) % nranks + nranks) % nranks;
    for (int i = 0; i < n; i++) {
        if (ts[i].rank != i || ts[i].n_chunks != ts[0].n_chunks || ts[i].bytes != ts[0].bytes
            || ts[i].action != ts[0].action
            || ((ts[i].peer - ts[i].rank) % nranks + nranks) % nranks != k)
            return NULL;
    }
    g_autofree char *what = amount(&ts[0]);
    if (k == nranks - 1)
        return g_strdup_printf("every GPU r %s %s to GPU (r-1) mod %d", verb(ts[0].action), what,
                               nranks);
    return g_strdup_printf("every GPU r %s %s to GPU (r+%d) mod %d", verb(ts[0].action), what, k,
                           nranks);
}

static void
print_rounds(const CsSchedule *sched, const int *rounds)
{
    int nranks = cs_schedule_n_ranks(sched);
    g_autoptr(GArray) transfers = collect_transfers(sched, rounds);
    const Transfer *all = (const Transfer *)(void *)transfers->data;
    guint n = transfers->len;

    int n_rounds = 0;
    gint64 total_bytes = 0;
    for (guint i = 0; i < n; i++) {
        n_rounds = MAX(n_rounds, all[i].round);
        total_bytes += all[i].bytes;
    }
    g_autofree char *total = cs_cli_human_size(total_bytes);
    printf("Schedule: %d round%s, %u transfer%s, %s sent in all.\n", n_rounds,
           n_rounds == 1 ? "" : "s", n, n == 1 ? "" : "s", total);
    if (n == 0) {
        printf("  Nothing moves: with one rank (or nothing to send) the collective is local.\n");
        return;
    }

    guint i = 0;
    int shown = 0;
    while (i < n && shown < MAX_ROUNDS_SHOWN) {
        int round = all[i].round;
        guint end = i;
        while (end < n && all[end].round == round)
            end++;
        GString *line = g_string_new(NULL);
        g_autofree char *shift = describe_shift(&all[i], (int)(end - i), nranks);
        if (shift != NULL) {
            g_string_append(line, shift);
        }
        else {
            int senders = 0;
            guint j = i;
            while (j < end) {
                guint k = j;
                while (k < end && all[k].rank == all[j].rank)
                    k++;
                if (senders < MAX_SENDERS_SHOWN) {
                    g_autofree char *part = describe_sender(&all[j], (int)(k - j));
                    g_string_append_printf(line, "%s%s", senders > 0 ? "; " : "", part);
                }
                senders++;
                j = k;
            }
            if (senders > MAX_SENDERS_SHOWN)
                g_string_append_printf(line, "; and %d more GPUs send",
                                       senders - MAX_SENDERS_SHOWN);
        }
        printf("  Round %d: %s.\n", round, line->str);
        g_string_free(line, TRUE);
        shown++;
        i = end;
    }
    if (i < n) {
        gint64 rest_bytes = 0;
        for (guint j = i; j < n; j++)
            rest_bytes += all[j].bytes;
        g_autofree char *rest = cs_cli_human_size(rest_bytes);
        int rest_rounds = n_rounds - all[i].round + 1;
        printf("  ... %d more round%s (%u transfers, %s).\n", rest_rounds,
               rest_rounds == 1 ? "" : "s", n - i, rest);
    }
}

/* ---- Timeline ---- */

/* The schedule the engine ran, rebuilt from its step reports: each rank's steps in program
 * order, scratch as large as the steps use. */
static CsSchedule *
schedule_from_events(const GArray *events, CsOp op, int nranks, int root, gint64 size_bytes,
                     CsDtype dtype, CsRedop redop, CsProto proto, int n_channels)
{
    g_autoptr(GPtrArray) programs = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
    for (int r = 0; r < nranks; r++)
        g_ptr_array_add(programs, g_array_new(FALSE, TRUE, sizeof(CsStep)));
    gint64 scratch = 0;
    for (guint i = 0; i < events->len; i++) {
        const CsTimelineStep *e = &g_array_index(events, CsTimelineStep, i);
        GArray *prog = g_ptr_array_index(programs, e->rank);
        if (prog->len <= e->index)
            g_array_set_size(prog, e->index + 1);
        g_array_index(prog, CsStep, e->index) = e->step;
        if (e->step.src_buf == CS_BUF_SCRATCH)
            scratch = MAX(scratch, e->step.src_offset + e->step.bytes);
        if (e->step.dst_buf == CS_BUF_SCRATCH)
            scratch = MAX(scratch, e->step.dst_offset + e->step.bytes);
    }
    CsSchedule *sched
        = cs_schedule_new(op, nranks, root, size_bytes, dtype, redop, proto, n_channels);
    cs_schedule_set_scratch(sched, scratch);
    for (int r = 0; r < nranks; r++) {
        GArray *prog = g_ptr_array_index(programs, r);
        for (guint i = 0; i < prog->len; i++)
            cs_schedule_add(sched, r, &g_array_index(prog, CsStep, i));
    }
    cs_schedule_seal(sched);
    return sched;
}

/* ---- Time split ---- */

static void
print_part(const char *name, const char *what, CsTime part, CsTime total)
{
    double pct = total > 0 ? 100.0 * (double)part / (double)total : 0.0;
    printf("  %-9s %12.3f us  %5.1f%%  %s\n", name, cs_time_to_us(part), pct, what);
}

/* The textbook form with the machine's alpha and B between ranks 0 and 1 (the first hop an
 * algorithm takes), and gamma from rank 0's reduction speed. */
static void
print_closed_form(const CsTopo *topo, const CsAlgo *algo, CsOp op, int nranks, const CsOpSize *size,
                  double engine_us, gboolean textbook)
{
    const CsAlphaBetaForm *form = cs_alpha_beta_find(algo->name, op);
    if (form == NULL) {
        printf("\nNo textbook closed form for %s %s in alpha_beta.c: the engine's figure is "
               "the only one.\n",
               algo->name, cs_op_name(op));
        return;
    }
    if (nranks < 2) {
        printf("\nTextbook closed form: %s (nothing to move on one rank).\n", form->formula);
        return;
    }
    const CsRoute *route = cs_topo_route(topo, 0, 1);
    const CsGpuSpec *gpu = cs_topo_rank_gpu(topo, 0);
    double gamma = gpu->reduce_Bps > 0.0 ? 1.0 / gpu->reduce_Bps : 0.0;
    double t = form->time(nranks, (double)size->size_bytes, route->alpha_s, route->bw_Bps, gamma);
    g_autofree char *alpha = cs_units_format_time(route->alpha_s);
    g_autofree char *bw = cs_units_format_bandwidth(route->bw_Bps);
    printf("\nTextbook closed form (%s): T = %s\n", form->reference, form->formula);
    printf("  with P = %d, n = %" G_GINT64_FORMAT " B, alpha = %s and B = %s (route GPU 0 -> "
           "GPU 1)",
           nranks, size->size_bytes, alpha, bw);
    if (cs_op_reduces(op))
        printf(", gamma = %.4g ps/B", gamma * 1e12);
    printf(":\n");
    printf("  T = %.3f us; the engine predicts %.3f us (%.2fx).\n", t * 1e6, engine_us,
           t > 0.0 ? engine_us / (t * 1e6) : 0.0);
    if (textbook)
        printf("  Both are Hockney's machine (--textbook): they agree wherever every route has\n"
               "  the alpha and B of GPU 0 -> GPU 1 and no link is shared.\n");
    else
        printf("  The closed form leaves out launch and per-step overhead, protocol latency and\n"
               "  efficiency, chunking and channels, and contention on shared links (--textbook\n"
               "  leaves them out of the engine too).\n");
}

/* ---- Entry point ---- */

typedef struct {
    char *topo;
    char **sets; /* --set PATH=VALUE */
    char *op;
    char *algo;
    char *proto;
    char *timeline;
    char *model;
    char *dtype;
    char *redop;
    gint64 ranks;
    gint64 nodes;
    gint64 size;
    int root;
    int channels;
    int ngpus;
    gboolean any_algorithm;
    gboolean textbook;
} ExplainOptions;

static void
explain_options_clear(ExplainOptions *o)
{
    g_free(o->topo);
    g_strfreev(o->sets);
    g_free(o->op);
    g_free(o->algo);
    g_free(o->proto);
    g_free(o->timeline);
    g_free(o->model);
    g_free(o->dtype);
    g_free(o->redop);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(ExplainOptions, explain_options_clear)

/**
 * cs_cli_explain:
 * `collsim explain --topo T --op OP [--algo A] [--ranks P] [--size S] [--proto P]
 * [--timeline FILE]`: see @summary and @description.
 */
gboolean
cs_cli_explain(int argc, char **argv, GError **error)
{
    g_auto(ExplainOptions) o = { .size = 1 << 20, .ngpus = 1 };
    const GOptionEntry entries[] = {
        { "topo", 0, 0, G_OPTION_ARG_STRING, &o.topo,
          "Topology: a shipped name or a JSON file (default dgx-h100x4)", "T" },
        CS_CLI_SET_ENTRY(&o.sets),
        { "op", 0, 0, G_OPTION_ARG_STRING, &o.op, "Collective (default allreduce)", "OP" },
        { "algo", 0, 0, G_OPTION_ARG_STRING, &o.algo,
          "Algorithm (see 'collsim algos'; default: collsim's best for the size)", "A" },
        { "proto", 0, 0, G_OPTION_ARG_STRING, &o.proto,
          "Protocol: LL, LL128, Simple (default: the best for the algorithm)", "P" },
        { "ranks", 0, 0, G_OPTION_ARG_CALLBACK, CS_CLI_ARG_FUNC(cs_cli_parse_count_arg),
          "Use the first P ranks of the topology, on a topology of just those GPUs (default all)",
          "P" },
        { "nodes", 0, 0, G_OPTION_ARG_CALLBACK, CS_CLI_ARG_FUNC(cs_cli_parse_count_arg),
          "Spread the ranks over the first M nodes, P / M on each (as 'collsim select'); alone, "
          "every rank of those nodes",
          "M" },
        { "size", 0, 0, G_OPTION_ARG_CALLBACK, CS_CLI_ARG_FUNC(cs_cli_parse_size_arg),
          "Size in nccl-tests' convention (default 1M)", "S" },
        { "root", 'r', 0, G_OPTION_ARG_INT, &o.root, "Root rank (default 0)", "R" },
        { "channels", 0, 0, G_OPTION_ARG_INT, &o.channels,
          "Channels (default: chosen per topology, algorithm and size)", "N" },
        { "datatype", 'd', 0, G_OPTION_ARG_STRING, &o.dtype, "Datatype (default float)", "TYPE" },
        { "redop", 'o', 0, G_OPTION_ARG_STRING, &o.redop, "Reduction (default sum)", "OP" },
        { "ngpus", 'g', 0, G_OPTION_ARG_INT, &o.ngpus,
          "GPUs per thread, as nccl-tests' -g (default 1)", "G" },
        { "model", 0, 0, G_OPTION_ARG_STRING, &o.model,
          "Network model: reservation (default) or maxmin", "M" },
        { "any-algorithm", 0, 0, G_OPTION_ARG_NONE, &o.any_algorithm,
          "Without --algo, choose among every algorithm collsim knows, not only what NCCL runs",
          NULL },
        { "textbook", 0, 0, G_OPTION_ARG_NONE, &o.textbook,
          "Hockney's cost model in the engine (see 'collsim run --help'): the closed form's "
          "question",
          NULL },
        { "timeline", 0, 0, G_OPTION_ARG_FILENAME, &o.timeline,
          "Write the steps as Chrome trace events (chrome://tracing, Perfetto)", "FILE" },
        G_OPTION_ENTRY_NULL,
    };
    const CsCliUnitTarget targets[] = {
        { "ranks", &o.ranks },
        { "nodes", &o.nodes },
        { "size", &o.size },
        { NULL, NULL },
    };
    if (!cs_cli_parse_units(&argc, &argv, entries, targets, "", summary, description, error))
        return FALSE;
    if (argc > 1) {
        g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_USAGE,
                    "collsim explain: unexpected argument \"%s\"", argv[1]);
        return FALSE;
    }

    CsOp op = CS_OP_ALL_REDUCE;
    CsDtype dtype = CS_DTYPE_FLOAT;
    CsRedop redop = CS_REDOP_SUM;
    const CsAlgo *algo = NULL;
    int proto = -1;
    GError *cause = NULL;
    if (o.op != NULL && !cs_op_from_name(o.op, &op, &cause))
        return cs_cli_flag_error(error, "collsim explain", "--op", cause);
    if (o.dtype != NULL && !cs_dtype_from_name(o.dtype, &dtype, &cause))
        return cs_cli_flag_error(error, "collsim explain", "-d", cause);
    if (o.redop != NULL && !cs_redop_from_name(o.redop, &redop, &cause))
        return cs_cli_flag_error(error, "collsim explain", "-o", cause);
    if (o.algo != NULL && (algo = cs_algo_lookup(o.algo, &cause)) == NULL)
        return cs_cli_flag_error(error, "collsim explain", "--algo", cause);
    if (o.proto != NULL) {
        CsProto p;
        if (!cs_proto_from_name(o.proto, &p, &cause))
            return cs_cli_flag_error(error, "collsim explain", "--proto", cause);
        proto = (int)p;
    }
    const char *model = o.model != NULL ? o.model : "reservation";
    if (model[0] == '\0') {
        g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_USAGE,
                    "collsim explain: --model: \"\" is not a network model (reservation or "
                    "maxmin)");
        return FALSE;
    }
    if (cs_net_model_lookup(model, &cause) == NULL)
        return cs_cli_flag_error(error, "collsim explain", "--model", cause);
    if (o.channels < 0 || o.channels > 64) {
        g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_USAGE,
                    "collsim explain: --channels: %d is not a channel count (1 to 64, or 0 for "
                    "the default)",
                    o.channels);
        return FALSE;
    }
    if (algo != NULL && (algo->ops & CS_OP_BIT(op)) == 0) {
        g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_USAGE,
                    "collsim explain: --algo %s does not implement %s (see 'collsim algos')",
                    algo->name, cs_op_name(op));
        return FALSE;
    }
    if (!cs_cli_check_output("collsim explain", "--timeline", o.timeline, error))
        return FALSE;

    g_autoptr(CsTopo) topo
        = cs_cli_load_topo(argv[0], o.topo != NULL ? o.topo : "dgx-h100x4", o.sets, error);
    if (topo == NULL)
        return FALSE;
    if (o.ranks > cs_topo_n_ranks(topo)) {
        g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_USAGE,
                    "collsim explain: --ranks %" G_GINT64_FORMAT ": %s has only %d ranks", o.ranks,
                    cs_topo_name(topo), cs_topo_n_ranks(topo));
        return FALSE;
    }
    int nranks = (int)o.ranks;
    if (!cs_cli_shape_topo("collsim explain", &topo, &nranks, (int)MIN(o.nodes, G_MAXINT), error))
        return FALSE;
    if (cs_op_has_root(op) && (o.root < 0 || o.root >= nranks)) {
        g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_USAGE,
                    "collsim explain: -r %d: the root must be a rank in 0..%d", o.root, nranks - 1);
        return FALSE;
    }
    if (o.ngpus < 1 || nranks % o.ngpus != 0) {
        g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_USAGE,
                    "collsim explain: -g %d: GPUs per thread must divide the %d ranks", o.ngpus,
                    nranks);
        return FALSE;
    }

    CsPredictOptions popts;
    cs_predict_options_init(&popts);
    popts.engine.net_model = model;
    popts.engine.gpus_per_thread = o.ngpus;
    popts.engine.textbook = o.textbook;
    popts.dtype = dtype;
    popts.redop = redop;
    popts.root = cs_op_has_root(op) ? o.root : 0;
    popts.nranks = nranks;
    popts.n_channels = o.channels;
    popts.any_algorithm = o.any_algorithm;

    if (o.size > CS_PREDICT_MAX_BYTES) {
        g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_USAGE,
                    "collsim explain: --size %" G_GINT64_FORMAT
                    " is beyond what collsim predicts (1 PiB)",
                    o.size);
        return FALSE;
    }

    /* What to explain: the forced algorithm and protocol, or collsim's best for the size. */
    gboolean chosen = algo == NULL || proto < 0;
    CsPrediction pred;
    if (chosen) {
        if (!cs_predict_best(topo, op, o.size, algo, proto, &popts, &pred, error)) {
            g_prefix_error(error, "collsim explain: ");
            return FALSE;
        }
        algo = pred.algo;
        proto = (int)pred.proto;
    }
    else if (!cs_predict_one(topo, op, o.size, algo, (CsProto)proto, &popts, &pred, error)) {
        g_prefix_error(error, "collsim explain: ");
        return FALSE;
    }

    /* Run the chosen point once more, recording every step the engine executed: the words and
     * the timeline then tell exactly the schedule that was simulated (chunking included). */
    g_autoptr(CsTimeline) timeline = cs_cli_timeline_new();
    const GArray *events = timeline->steps;
    CsObserver observer = cs_cli_timeline_observer(timeline);
    CsPredictOptions traced = popts;
    traced.engine.observer = &observer;
    /* The whole size, chunk by chunk: a size extended from smaller ones would be told as the
     * smaller schedule that was simulated (3.75 GiB sent for a 64 TiB all-reduce). */
    traced.exact = TRUE;
    traced.n_channels = pred.n_channels;
    if (!cs_predict_one(topo, op, o.size, algo, (CsProto)proto, &traced, &pred, error)) {
        g_prefix_error(error, "collsim explain: ");
        return FALSE;
    }
    g_autoptr(CsSchedule) sched = schedule_from_events(
        events, op, nranks, popts.root, o.size, dtype, redop, (CsProto)proto, pred.n_channels);
    g_autofree int *rounds = cs_check_rounds(sched, error);
    if (rounds == NULL)
        return FALSE;

    /* The timeline first: a file that cannot be written fails before anything is printed. */
    /* NCCL's grouped send/recv (a p2p plan) sends and receives on separate warps. */
    gboolean split = pred.peer_channels > 0;
    cs_schedule_set_p2p_split(sched, split);
    if (o.timeline != NULL
        && !cs_cli_timeline_write("collsim explain", o.timeline, timeline, topo, op, nranks,
                                  pred.n_channels, split, error))
        return FALSE;

    /* Headline. */
    g_autofree char *size = cs_cli_human_size(pred.size.size_bytes);
    printf("%s %s of %s (%" G_GINT64_FORMAT " x %s", algo->name, cs_op_name(op), size,
           pred.size.count, cs_dtype_name(dtype));
    if (cs_op_has_root(op))
        printf(", root %d", popts.root);
    printf(") on %d rank%s of %s\n", nranks, nranks == 1 ? "" : "s", cs_topo_name(topo));
    printf("%s: %s\n", algo->name, algo->summary);
    printf("Protocol %s, %d channel%s%s; %s model%s.\n\n", cs_proto_name((CsProto)proto),
           pred.n_channels, pred.n_channels == 1 ? "" : "s",
           chosen ? " (collsim's best choice for this size)" : "", model,
           o.textbook ? ", textbook (Hockney: each message costs its sender alpha + n/B; no "
                        "launch, protocol, chunking or overlap)"
                      : "");

    print_rounds(sched, rounds);

    /* The time split. */
    const CsResult *r = &pred.result;
    printf("\nPredicted time: %.3f us (algbw %.2f GB/s, busbw %.2f GB/s), along the critical "
           "path:\n",
           pred.time_us, pred.algbw_GBps, pred.busbw_GBps);
    print_part("alpha", "latency: links and protocol hops", r->alpha, r->time);
    print_part("beta", "bandwidth: bytes at link speed, waiting under contention included", r->beta,
               r->time);
    print_part("gamma", "reductions and copies at GPU speed", r->gamma, r->time);
    print_part("overhead", "kernel launch and per-step costs", r->overhead, r->time);

    print_closed_form(topo, algo, op, nranks, &pred.size, pred.time_us, o.textbook);

    if (o.timeline != NULL) {
        printf("\nTimeline: %u steps written to %s (open in chrome://tracing or Perfetto).\n",
               events->len, o.timeline);
    }
    return TRUE;
}
