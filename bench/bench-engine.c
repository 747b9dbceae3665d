// SPDX-License-Identifier: MIT
/* Engine benchmarks (STYLE §9 suite 'bench'): events per second, wall time and peak memory of
 * three workloads, one per run so that each peak RSS is its own:
 *   ring1024   1 GiB ring all-reduce on 1,024 ranks (hgx-h100x8-128n), chunk by chunk
 *   period1024 the same, one period of ranks replayed (engine.c "Symmetry"): the same time
 *   star4096   1 MiB ring all-reduce on a 4,096-rank star, one channel, one chunk per step,
 *              one period replayed
 *   sweep      8 B .. 8 GiB x2, every collective x algorithm x protocol on dgx-h100x8
 *   hier1024   1 GiB hierarchical all-reduce on hgx-h100x8-128n
 *   tree128    1 GiB double binary tree all-reduce on hgx-h100x8-16n (128 ranks), Simple, the
 *              channels NCCL-like defaults give it
 *   nvlstree128 the same with NVLS inside each node and the trees across (nvls_tree), the
 *              costliest candidate of a 128-GPU sweep
 *   best128    `collsim --topo hgx-h100x8-16n`'s work: the best all-reduce candidate at every
 *              size 8 B .. 8 GiB x2 on 128 ranks, with the candidates' lower bounds skipping
 *              the hopeless ones, then with every candidate simulated (the same picks)
 * Targets: >= 20 M events/s on one core, ring1024 < 1 s, sweep < 0.5 s.
 * Usage: bench-engine [--model M] [--max-events N]
 *        [ring1024|period1024|star4096|sweep|hier1024|tree128|nvlstree128|best128|all]
 * (--max-events: the sweep extrapolates sizes past N events per simulation; 0 = none). */
#include <glib.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "algos/registry.h"
#include "predict/predict.h"

/* ---- Clocks ---- */

typedef struct {
    double wall_s;
    double cpu_s;
} Clock;

static Clock
clock_now(void)
{
    struct timespec cpu;

    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);
    return (Clock){ g_get_monotonic_time() / 1e6, cpu.tv_sec + cpu.tv_nsec / 1e9 };
}

static Clock
clock_since(Clock t0)
{
    Clock t = clock_now();

    return (Clock){ t.wall_s - t0.wall_s, t.cpu_s - t0.cpu_s };
}

static double
peak_rss_MiB(void)
{
    struct rusage ru;

    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss / 1024.0; /* Linux reports KiB */
}

/* ---- Workloads ---- */

/* Builds and simulates one all-reduce of @size bytes in chunks of @chunk (0: the protocol's),
 * timing the engine apart from the build; with @period, one period of ranks where the ring
 * and the machine repeat (engine.c "Symmetry"). */
static gboolean
one_big_on(const char *name, CsTopo *topo, const char *topo_name, const char *algo_name,
           int n_channels, gint64 size, gint64 chunk, gboolean period, const char *model,
           GError **error)
{
    const CsAlgo *algo = cs_algo_lookup(algo_name, error);
    if (algo == NULL)
        return FALSE;

    Clock t0 = clock_now();
    CsAlgoArgs args;
    int nranks = cs_topo_n_ranks(topo);
    cs_algo_args_init(&args, topo, CS_OP_ALL_REDUCE, nranks, size);
    args.proto = CS_PROTO_SIMPLE;
    args.n_channels = n_channels;
    args.chunk_bytes = chunk;
    args.period_min = period ? 1 : 0;
    CsEngineOptions opt = { .net_model = model };
    g_autoptr(CsSchedule) sched = NULL;
    g_autoptr(CsResult) res = NULL;
    Clock t_build = { 0 }, t_run = { 0 };
    /* A period the machine does not repeat under: a longer one, as the predictor does. */
    for (;;) {
        Clock tb = clock_now();
        g_clear_pointer(&sched, cs_schedule_free);
        sched = cs_algo_build(algo, &args, error);
        if (sched == NULL)
            return FALSE;
        Clock b = clock_since(tb);
        Clock t1 = clock_now();
        g_autoptr(GError) local = NULL;
        res = cs_engine_run(sched, topo, &opt, &local);
        Clock r = clock_since(t1);
        t_build.wall_s += b.wall_s, t_build.cpu_s += b.cpu_s;
        t_run.wall_s += r.wall_s, t_run.cpu_s += r.cpu_s;
        if (res != NULL)
            break;
        if (!g_error_matches(local, CS_ENGINE_ERROR, CS_ENGINE_ERROR_ASYMMETRIC)) {
            g_propagate_error(error, g_steal_pointer(&local));
            return FALSE;
        }
        args.period_min = cs_schedule_period(sched) + 1;
    }
    Clock t_all = clock_since(t0);

    printf("%-9s %s %s allreduce %" G_GINT64_FORMAT " B, %d ranks, %d channel(s), Simple, %s: "
           "%" G_GSIZE_FORMAT " steps, %d ranks replayed\n",
           name, topo_name, algo_name, size, nranks, n_channels, model, cs_schedule_n_steps(sched),
           cs_schedule_period(sched));
    printf("%-9s   simulated %.1f us; build %.3f s, engine %.3f s wall (%.3f s cpu), total %.3f s "
           "wall\n",
           name, cs_result_time_us(res), t_build.wall_s, t_run.wall_s, t_run.cpu_s, t_all.wall_s);
    printf("%-9s   %" G_GINT64_FORMAT " events: %.1f M events/s, %.1f M steps/s (engine cpu, "
           "set-up included); peak RSS %.0f MiB\n",
           name, res->n_events, res->n_events / t_run.cpu_s / 1e6,
           cs_schedule_n_steps(sched) / t_run.cpu_s / 1e6, peak_rss_MiB());
    return TRUE;
}

/* @n_channels 0: the channels cs_predict_default_channels() gives the algorithm. */
static gboolean
one_big(const char *name, const char *topo_name, const char *algo_name, int n_channels,
        gboolean period, const char *model, GError **error)
{
    g_autoptr(CsTopo) topo = cs_topo_load(topo_name, error);
    if (topo == NULL)
        return FALSE;
    if (n_channels == 0) {
        const CsAlgo *algo = cs_algo_lookup(algo_name, error);
        if (algo == NULL)
            return FALSE;
        n_channels = cs_predict_default_channels(topo, algo, CS_OP_ALL_REDUCE, CS_PROTO_SIMPLE,
                                                 (gint64)1 << 30, cs_topo_n_ranks(topo));
    }
    return one_big_on(name, topo, topo_name, algo_name, n_channels, (gint64)1 << 30, 0, period,
                      model, error);
}

/* Issue 28's star: @p GPUs, each on its own 400 Gb/s link to one switch. */
static CsTopo *
star(int p, GError **error)
{
    GString *json = g_string_new(
        "{\"name\": \"star\", \"gpu\": {\"launch\": \"5 us\", \"step_overhead\": \"0.3 us\", "
        "\"reduce_bandwidth\": \"1 TB/s\", \"copy_bandwidth\": \"1 TB/s\"}, \"devices\": [");
    for (int i = 0; i < p; i++)
        g_string_append_printf(json, "{\"name\": \"g%d\", \"kind\": \"gpu\"}, ", i);
    g_string_append(json, "{\"name\": \"sw\", \"kind\": \"switch\"}], \"links\": [");
    for (int i = 0; i < p; i++)
        g_string_append_printf(json,
                               "%s{\"endpoints\": [\"g%d\", \"sw\"], \"kind\": \"ib\", "
                               "\"bandwidth\": \"400 Gb/s\", \"alpha\": \"0.5 us\"}",
                               i > 0 ? ", " : "", i);
    g_string_append(json, "]}");
    g_autofree char *text = g_string_free(json, FALSE);
    return cs_topo_load_data(text, "star", error);
}

/* Ring all-reduce of 1 MiB on a 4,096-rank star, one channel, one chunk per step. */
static gboolean
star4096(const char *model, GError **error)
{
    const int p = 4096;
    g_autoptr(CsTopo) topo = star(p, error);
    if (topo == NULL)
        return FALSE;
    return one_big_on("star4096", topo, "star", "ring", 1, (gint64)1 << 20, ((gint64)1 << 20) / p,
                      TRUE, model, error);
}

/* Every collective x algorithm x protocol x size of the default sweep, through
 * cs_predict_sweep(): sizes past @max_events events per simulation are extrapolated (0: every
 * size simulated). */
static gboolean
sweep(const char *model, gint64 max_events, GError **error)
{
    g_autoptr(CsTopo) topo = cs_topo_load("dgx-h100x8", error);
    if (topo == NULL)
        return FALSE;
    gint64 sizes[40];
    int n_sizes = 0;
    CsPrediction out[40];
    gboolean valid[40];
    gboolean extrapolated[40];
    CsPredictOptions opt;
    gint64 events = 0;
    int points = 0;
    int simulated = 0;
    int triples = 0;

    for (gint64 size = 8; size <= (gint64)8 << 30; size *= 2)
        sizes[n_sizes++] = size;
    cs_predict_options_init(&opt);
    opt.engine.net_model = model;
    Clock t0 = clock_now();
    for (int op = 0; op < CS_N_OPS; op++) {
        for (const CsAlgo *const *a = cs_algo_registry(); *a != NULL; a++) {
            if (((*a)->ops & CS_OP_BIT(op)) == 0)
                continue;
            for (int p = 0; p < CS_N_PROTOS; p++) {
                if (!cs_predict_sweep(topo, (CsOp)op, sizes, n_sizes, *a, (CsProto)p, &opt,
                                      max_events, out, valid, extrapolated, error))
                    return FALSE;
                triples++;
                for (int i = 0; i < n_sizes; i++) {
                    if (!valid[i])
                        continue;
                    points++;
                    simulated += !extrapolated[i];
                    events += out[i].result.n_events;
                }
            }
        }
    }
    Clock t = clock_since(t0);
    printf("sweep     dgx-h100x8, 8 B .. 8 GiB x2 (%d sizes), %d collective x algorithm x "
           "protocol, %s: %d points, %d simulated (extrapolated past %" G_GINT64_FORMAT
           " events)\n",
           n_sizes, triples, model, points, simulated, max_events);
    printf("sweep       %.3f s wall (%.3f s cpu), %" G_GINT64_FORMAT
           " events: %.1f M events/s (cpu, builds included); peak RSS %.0f MiB\n",
           t.wall_s, t.cpu_s, events, events / t.cpu_s / 1e6, peak_rss_MiB());
    return TRUE;
}

/* The best all-reduce at each size on 16 x HGX H100 (128 ranks), pruned by the candidates'
 * lower bounds, then exhaustive; the two must pick the same. */
static gboolean
best128(const char *model, GError **error)
{
    g_autoptr(CsTopo) topo = cs_topo_load("hgx-h100x8-16n", error);
    if (topo == NULL)
        return FALSE;
    CsPrediction pruned[40];
    double wall[2];
    int n_sizes = 0;

    for (int exhaustive = 0; exhaustive <= 1; exhaustive++) {
        CsPredictOptions opt;
        cs_predict_options_init(&opt);
        opt.engine.net_model = model;
        opt.exhaustive = exhaustive;
        /* As collsim run: sizes extended from the same smaller ones simulate them once. */
        g_autoptr(CsPointCache) points = cs_point_cache_new(FALSE);
        cs_point_cache_bind(points, topo);
        opt.cache = points;
        Clock t0 = clock_now();
        n_sizes = 0;
        for (gint64 size = 8; size <= (gint64)8 << 30; size *= 2, n_sizes++) {
            CsPrediction best;
            if (!cs_predict_best(topo, CS_OP_ALL_REDUCE, size, NULL, -1, &opt, &best, error))
                return FALSE;
            if (!exhaustive) {
                pruned[n_sizes] = best;
                continue;
            }
            if (best.algo != pruned[n_sizes].algo || best.proto != pruned[n_sizes].proto
                || best.result.time != pruned[n_sizes].result.time) {
                g_set_error(error, g_quark_from_static_string("bench-engine"), 1,
                            "%" G_GINT64_FORMAT " B: pruned search picked %s/%s (%.3f us), "
                            "every candidate %s/%s (%.3f us)",
                            size, pruned[n_sizes].algo->name, cs_proto_name(pruned[n_sizes].proto),
                            pruned[n_sizes].time_us, best.algo->name, cs_proto_name(best.proto),
                            best.time_us);
                return FALSE;
            }
        }
        wall[exhaustive] = clock_since(t0).wall_s;
    }
    printf("best128   hgx-h100x8-16n all-reduce, best of every candidate at %d sizes 8 B .. "
           "8 GiB, %s: %.2f s with lower bounds, %.2f s simulating every candidate (same "
           "picks); peak RSS %.0f MiB\n",
           n_sizes, model, wall[0], wall[1], peak_rss_MiB());
    return TRUE;
}

/* ---- Main ---- */

int
main(int argc, char **argv)
{
    g_autoptr(GError) error = NULL;
    const char *model = "reservation";
    const char *which = "all";
    gint64 max_events = 20000;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--model") == 0 && i + 1 < argc)
            model = argv[++i];
        else if (strcmp(argv[i], "--max-events") == 0 && i + 1 < argc)
            max_events = g_ascii_strtoll(argv[++i], NULL, 10);
        else
            which = argv[i];
    }
    gboolean all = strcmp(which, "all") == 0;
    gboolean ok = TRUE;
    if (ok && (all || strcmp(which, "ring1024") == 0))
        ok = one_big("ring1024", "hgx-h100x8-128n", "ring", 1, FALSE, model, &error);
    if (ok && (all || strcmp(which, "period1024") == 0))
        ok = one_big("period1024", "hgx-h100x8-128n", "ring", 1, TRUE, model, &error);
    if (ok && (all || strcmp(which, "star4096") == 0))
        ok = star4096(model, &error);
    if (ok && (all || strcmp(which, "sweep") == 0))
        ok = sweep(model, max_events, &error);
    if (ok && (all || strcmp(which, "hier1024") == 0))
        ok = one_big("hier1024", "hgx-h100x8-128n", "hierarchical", 1, FALSE, model, &error);
    if (ok && (all || strcmp(which, "tree128") == 0))
        ok = one_big("tree128", "hgx-h100x8-16n", "tree", 0, FALSE, model, &error);
    if (ok && (all || strcmp(which, "nvlstree128") == 0))
        ok = one_big("nvlstree128", "hgx-h100x8-16n", "nvls_tree", 0, FALSE, model, &error);
    if (ok && (all || strcmp(which, "best128") == 0))
        ok = best128(model, &error);
    if (!ok) {
        fprintf(stderr, "bench-engine: %s\n", error->message);
        return 1;
    }
    return 0;
}
