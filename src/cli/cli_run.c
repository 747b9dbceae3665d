// SPDX-License-Identifier: MIT
/* `collsim [run]`: the main job. Predicts a collective over a sweep of sizes the way
 * nccl-tests measures it, with nccl-tests' flags, and prints nccl-tests' own table so a
 * prediction and a measured log diff line by line (or JSON / CSV). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "algos/registry.h"
#include "sched/check.h"
#include "cli/cli.h"
#include "cli/cli_timeline.h"
#include "models/nccl.h"
#include "models/netmodel.h"
#include "predict/predict.h"
#include "predict/select.h"
#include "analysis/plot.h"
#include "analysis/report.h"
#include "topo/topo.h"
#include "base/parallel.h"
#include "base/units.h"

/* The default sweep: 8 B to 8 GiB by doubling. nccl-tests' own default is one 32 MiB size;
 * published runs mostly sweep -b 8 -e 1G or -e 8G -f 2, and 8 GiB reaches the bandwidth
 * plateau of every shipped machine. */
#define DEFAULT_MIN_BYTES ((gint64)8)
#define DEFAULT_MAX_BYTES ((gint64)8 << 30)
/* nccl-tests' -i default, used when -f 1 asks for increments without -i. */
#define DEFAULT_STEP_BYTES ((gint64)1 << 20)
/* A sweep longer than this is a typo (-i 8 up to 8G), not a plan. */
#define MAX_SIZES 4096

static const char summary[]
    = "Predict a collective over a sweep of sizes, like nccl-tests measures it, and print\n"
      "nccl-tests' own table (size count type redop root time algbw busbw #wrong, out-of-place\n"
      "and in-place), so a prediction and a measured log diff line by line.";

static const char description[]
    = "Sizes follow nccl-tests: -b to -e, multiplied by -f, or increased by -i when -i is given\n"
      "without -f. The default sweep is 8 B to 8 GiB by doubling (nccl-tests' own default is a\n"
      "single 32 MiB size; published runs sweep -b 8 -e 1G or 8G).\n"
      "\n"
      "The table is nccl-tests' byte for byte: the in-place columns repeat the out-of-place ones\n"
      "(a simulation has no in-place effect) and #wrong is N/A, as nccl-tests prints it when it\n"
      "checks nothing (-c 0). By default each size gets what an nccl-tests run would get:\n"
      "NCCL's own pick (its tuning model, versioned; --pick) where NCCL runs the collective on\n"
      "GPUs its model knows, timed by the engine, else the fastest algorithm x protocol x\n"
      "channel count collsim finds (--pick fastest everywhere). A comment table after the block\n"
      "names the pick per size and splits its time along the critical path into alpha\n"
      "(latency), beta (bandwidth), gamma (reduction) and overhead; under NCCL's pick collsim's\n"
      "fastest and its gain stand beside it. The candidates are what an nccl-tests run can "
      "execute, as NCCL 2.2x\n"
      "allows: broadcast and reduce: ring; all-gather and reduce-scatter: ring and NVLS;\n"
      "all-reduce: ring, tree, NVLS (one NVLink domain) and NVLSTree (more than one node and\n"
      "NVLink domain);\n"
      "scatter, gather and all-to-all: grouped send/recv (direct). NVLS needs an NVSwitch with\n"
      "NVLink SHARP. On CPU ranks no NCCL runs: an MPI library does, so every algorithm collsim\n"
      "knows is a candidate there, with the Simple protocol. --any-algorithm weighs every\n"
      "algorithm on GPUs too (MPI classics: binomial tree, recursive doubling, Rabenseifner,\n"
      "Bruck, pairwise; hierarchical); --algo forces one. collsim select weighs the same\n"
      "candidates. --all prints one block\n"
      "per algorithm x protocol instead.\n"
      "\n"
      "-g G is nccl-tests' GPUs per thread: one thread driving G GPUs launches their kernels one\n"
      "after another, and they start together once it has launched the last, as in nccl-tests'\n"
      "timed loop: G launch latencies at every size (the seed's 4 x H100 log ran -g 4).\n"
      "Ranks = processes x threads x G, so G must divide the ranks. -t T threads launch in\n"
      "parallel, so T only has to divide the ranks too. -G N > 0 (CUDA graphs) leaves out the\n"
      "host's launches.\n"
      "\n"
      "Every other all_reduce_perf flag is accepted so a pasted nccl-tests command runs, and\n"
      "named on one stderr line as ignored in a simulation: -n -m -w -N -p -c -z -y -T -C -S -J\n"
      "-a -R -x -D -V -M -u -I -K (repetitions, checks, timing and reporting; the prediction\n"
      "is one collective, whose ranks end together). --op also takes a reduction, as\n"
      "nccl-tests' long name for -o.\n"
      "\n"
      "--textbook asks the question of the textbooks and of other simulators' alpha-beta\n"
      "modes: Hockney's machine, where a message of n bytes costs its sender alpha + n/B (alpha\n"
      "and B those of its route) and nothing else: no launch, no per-step overhead, no protocol,\n"
      "one channel, each message sent whole (no chunk overlap), reductions after arrival at\n"
      "the GPU's rate. Ring all-reduce on a star then takes 2(P-1) alpha + 2(P-1)/P n/B\n"
      "(+ (P-1)/P n gamma), the closed form 'collsim explain' prints.\n"
      "\n"
      "Examples:\n"
      "  collsim --topo dgx-h100x4 --op allreduce -g 4 -b 8 -e 1G\n"
      "  collsim --topo dgx-h100x4 -b 1M -e 1M -n 20 -w 5\n"
      "  collsim --topo dgx-h100x8 --op allgather --all -b 1M -e 1G --format csv\n"
      "  collsim --topo hgx-h100x8-2n --op allreduce --algo ring --proto LL128 -e 64M\n"
      "  collsim --topo dgx-h100x8 --op allgather --all -e 1G --plot allgather.svg";

/* ---- Options ---- */

typedef struct {
    char *topo;
    char **sets; /* --set PATH=VALUE */
    char *op;
    gint64 min_bytes;
    gint64 max_bytes;
    gint64 step_factor;
    gint64 step_bytes;
    gboolean factor_given;
    char *dtype;
    char *redop;
    int root;
    int nthreads;
    int ngpus;
    int cudagraph;
    char *algo;
    char *proto;
    int channels;
    gboolean all;
    gboolean any_algorithm;
    gboolean exact;
    gboolean whole;
    gboolean verify;
    gboolean textbook;
    gboolean progress;
    gboolean quiet;
    int jobs;
    char *model;
    char *pick; /* "fastest", "nccl" or "nccl:VERSION" */
    char *format;
    gint64 ranks;
    gint64 nodes;
    char *layout;
    char *plot;
    char *timeline;
    gint64 timeline_size; /* bytes; 0: the sweep's largest */
    char *ignored[21];    /* the value of each of ignored_flags[], NULL when not given */
} RunOptions;

static void
run_options_clear(RunOptions *o)
{
    g_free(o->topo);
    g_strfreev(o->sets);
    g_free(o->op);
    g_free(o->dtype);
    g_free(o->redop);
    g_free(o->algo);
    g_free(o->proto);
    g_free(o->model);
    g_free(o->pick);
    g_free(o->format);
    g_free(o->layout);
    g_free(o->plot);
    g_free(o->timeline);
    for (gsize i = 0; i < G_N_ELEMENTS(o->ignored); i++)
        g_free(o->ignored[i]);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(RunOptions, run_options_clear)

/* The command as invoked, "collsim" or "collsim run", to start every message. */
static const char *prog = "collsim";

/* ---- nccl-tests flags a simulation ignores ---- */

/* all_reduce_perf's flags (nccl-tests src/common.cu, longopts[], as of a0b82b2, 2026) that
 * change how a real run repeats, checks or reports the collective, not what one collective
 * costs: accepted so a pasted command runs, and named on one stderr line. -m groups m
 * collectives into one launch and -a reduces the ranks' times; both are listed because the
 * engine times one collective whose ranks end together. */
typedef struct {
    char short_name;
    const char *long_name;
} IgnoredFlag;

static const IgnoredFlag ignored_flags[] = {
    { 'n', "iters" },
    { 'm', "agg_iters" },
    { 'w', "warmup_iters" },
    { 'N', "run_cycles" },
    { 'p', "parallel_init" },
    { 'c', "check" },
    { 'z', "blocking" },
    { 'y', "stream_null" },
    { 'T', "timeout" },
    { 'C', "report_cputime" },
    { 'S', "report_timestamps" },
    { 'J', "output_file" },
    { 'a', "average" },
    { 'R', "local_register" },
    { 'x', "cta_policy" },
    { 'D', "device_implementation" },
    { 'V', "device_cta_count" },
    { 'M', "memory" },
    { 'u', "unalign" },
    { 'I', "per_iter_timing" },
    { 'K', "per_iter_skip" },
};

#define N_IGNORED_FLAGS G_N_ELEMENTS(ignored_flags)
G_STATIC_ASSERT(N_IGNORED_FLAGS == G_N_ELEMENTS(((RunOptions *)NULL)->ignored));

/* @entries (NULL-terminated) followed by a hidden entry for each ignored flag, writing its
 * value to @o->ignored. (transfer full) */
static GArray *
entries_with_ignored(const GOptionEntry *entries, RunOptions *o)
{
    GArray *all = g_array_new(TRUE, TRUE, sizeof(GOptionEntry));
    for (const GOptionEntry *e = entries; e->long_name != NULL; e++)
        g_array_append_val(all, *e);
    for (gsize i = 0; i < N_IGNORED_FLAGS; i++) {
        GOptionEntry e = {
            .long_name = ignored_flags[i].long_name,
            .short_name = ignored_flags[i].short_name,
            .flags = G_OPTION_FLAG_HIDDEN,
            .arg = G_OPTION_ARG_STRING,
            .arg_data = &o->ignored[i],
        };
        g_array_append_val(all, e);
    }
    return all;
}

/* The one stderr line naming the ignored flags given, as given ("-n 20 -w 5"), or NULL. */
static char *
ignored_line(const RunOptions *o)
{
    g_autoptr(GString) s = g_string_new(NULL);
    for (gsize i = 0; i < N_IGNORED_FLAGS; i++) {
        if (o->ignored[i] == NULL)
            continue;
        g_autofree char *v = g_shell_quote(o->ignored[i]);
        g_string_append_printf(s, "%s-%c %s", s->len > 0 ? " " : "", ignored_flags[i].short_name,
                               strpbrk(o->ignored[i], " \t'\"\\$`*?;&|<>()") != NULL
                                       || o->ignored[i][0] == '\0'
                                   ? v
                                   : o->ignored[i]);
    }
    if (s->len == 0)
        return NULL;
    return g_strdup_printf("%s: ignored in a simulation: %s (nccl-tests' repetitions, checks "
                           "and reports; the prediction is one collective)",
                           prog, s->str);
}

/* The sizes nccl-tests would run: minBytes, then x factor (or + step) while <= maxBytes. */
static GArray *
make_sizes(const RunOptions *o, GError **error)
{
    gboolean increment = o->step_bytes > 0 && !o->factor_given;
    gint64 step = o->step_bytes > 0 ? o->step_bytes : DEFAULT_STEP_BYTES;
    if (o->min_bytes > o->max_bytes) {
        cs_cli_usage_error(error, prog,
                           "-b %" G_GINT64_FORMAT " is larger than -e %" G_GINT64_FORMAT,
                           o->min_bytes, o->max_bytes);
        return NULL;
    }
    if (o->max_bytes > CS_PREDICT_MAX_BYTES) {
        cs_cli_usage_error(error, prog,
                           "-e %" G_GINT64_FORMAT " is beyond what collsim predicts (1 PiB)",
                           o->max_bytes);
        return NULL;
    }
    if (!increment && o->step_factor > 1 && o->min_bytes == 0) {
        cs_cli_usage_error(error, prog,
                           "-b 0 with -f %" G_GINT64_FORMAT " never grows; start at -b 1 or "
                           "use -i",
                           o->step_factor);
        return NULL;
    }
    if (!increment && o->step_factor == 1)
        increment = TRUE;

    GArray *sizes = g_array_new(FALSE, FALSE, sizeof(gint64));
    for (gint64 s = o->min_bytes; s <= o->max_bytes;) {
        if (sizes->len >= MAX_SIZES) {
            g_array_unref(sizes);
            cs_cli_usage_error(error, prog,
                               "the sweep from -b %" G_GINT64_FORMAT " to -e %" G_GINT64_FORMAT
                               " has more than %d sizes; use a larger -f or -i",
                               o->min_bytes, o->max_bytes, MAX_SIZES);
            return NULL;
        }
        g_array_append_val(sizes, s);
        if (increment) {
            if (s > G_MAXINT64 - step)
                break;
            s += step;
        }
        else {
            if (s > G_MAXINT64 / o->step_factor)
                break;
            s *= o->step_factor;
        }
    }
    return sizes;
}

/* ---- Headers ---- */

static int
count_nodes(const CsTopo *topo, int nranks)
{
    g_autoptr(GHashTable) nodes = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (int r = 0; r < nranks; r++)
        g_hash_table_add(nodes, GINT_TO_POINTER(cs_topo_rank_node(topo, r) + 1));
    return (int)g_hash_table_size(nodes);
}

static void
set_headers(CsReport *report, const CsTopo *topo, int nranks, const RunOptions *o,
            const char *model, const char *picker, const char *cmd)
{
    cs_report_set_header(report, "source",
                         "collsim " COLLSIM_VERSION " prediction (simulated, not measured)");
    /* The description's first sentence: what the machine is; its sources stay in the file. */
    const char *desc = cs_topo_description(topo);
    g_autofree char *first = g_strdup(desc != NULL ? desc : "");
    char *stop = strstr(first, ". ");
    if (stop != NULL)
        stop[1] = '\0';
    g_autofree char *topo_line = first[0] != '\0'
                                     ? g_strdup_printf("%s: %s", cs_topo_name(topo), first)
                                     : g_strdup(cs_topo_name(topo));
    cs_report_set_header(report, "topology", topo_line);
    g_autofree char *gpus = g_strdup_printf("%d", nranks);
    cs_report_set_header(report, "gpus", gpus);
    g_autofree char *nodes = g_strdup_printf("%d", count_nodes(topo, nranks));
    cs_report_set_header(report, "nodes", nodes);
    g_autofree char *model_line
        = o->textbook ? g_strdup_printf("%s, textbook (Hockney: each message costs its sender "
                                        "alpha + n/B; no launch, protocol, chunking or overlap)",
                                        model)
                      : g_strdup(model);
    cs_report_set_header(report, "model", model_line);
    cs_report_set_header(report, "command", cmd);
    g_autofree char *choice = NULL;
    if (o->all)
        choice = g_strdup("one block per algorithm x protocol");
    else if ((o->algo != NULL || o->proto != NULL) && picker != NULL)
        choice = g_strdup_printf("%s forced, %s forced; %s's pick of the rest per size "
                                 "(its tuning model), timed by the engine",
                                 o->algo != NULL ? o->algo : "no algorithm",
                                 o->proto != NULL ? o->proto : "no protocol", picker);
    else if (o->algo != NULL || o->proto != NULL)
        choice = g_strdup_printf("%s forced, %s forced; the fastest of the rest per size",
                                 o->algo != NULL ? o->algo : "no algorithm",
                                 o->proto != NULL ? o->proto : "no protocol");
    else if (o->any_algorithm)
        choice = g_strdup("the fastest per size among every algorithm collsim knows (see the "
                          "table after the block)");
    else if (picker != NULL)
        choice = g_strdup_printf("%s's pick per size (its tuning model), timed by the "
                                 "engine (see the table after the block)",
                                 picker);
    else if (cs_predict_cpu_ranks(topo, nranks))
        choice = g_strdup("the fastest per size among every algorithm collsim knows but RCCL's "
                          "all-pairs (CPU ranks: an MPI library runs them; see the table after "
                          "the block)");
    else
        choice = g_strdup("the fastest per size among what NCCL runs (see the table after the "
                          "block)");
    cs_report_set_header(report, "algo/proto", choice);
    if (o->channels > 0) {
        g_autofree char *ch = g_strdup_printf("%d (forced)", o->channels);
        cs_report_set_header(report, "channels", ch);
    }
    cs_report_set_header(report, "columns",
                         "in-place repeats out-of-place (no in-place effect "
                         "is simulated); #wrong N/A (nothing is checked)");
}

/* ---- Predictions ---- */

/* --verify: the semantic checker on the exact schedule behind @pred (its algorithm, protocol
 * and channels, at the full size). Appends one comment line to @lines; FALSE with the
 * checker's error when the schedule does not compute the collective. */
static gboolean
verify_point(const CsTopo *topo, CsOp op, const CsPrediction *pred, const CsPredictOptions *popts,
             GString *lines, GError **error)
{
    CsPredictOptions o = *popts;
    o.n_channels = pred->n_channels;
    g_autoptr(CsSchedule) sched
        = cs_predict_schedule(topo, op, pred->size.size_bytes, pred->algo, pred->proto, &o, error);
    CsCheckReport check;
    if (sched == NULL || !cs_check_schedule(sched, &check, error)) {
        g_prefix_error(
            error, "%s: --verify: %s/%s, %d channels, %" G_GINT64_FORMAT " bytes: ", prog,
            pred->algo->name, cs_proto_name(pred->proto), pred->n_channels, pred->size.size_bytes);
        return FALSE;
    }
    g_string_append_printf(
        lines,
        "# verified %12" G_GINT64_FORMAT " B  %s/%s, %d channels: computes %s "
        "(%d rounds, %" G_GINT64_FORMAT " messages, %" G_GINT64_FORMAT " steps)\n",
        pred->size.size_bytes, pred->algo->name, cs_proto_name(pred->proto), pred->n_channels,
        cs_op_name(op), check.n_rounds, check.n_messages, (gint64)cs_schedule_n_steps(sched));
    return TRUE;
}

/* ---- Threads (--jobs) ----
 *
 * Each size (and block) is predicted on its own (cs_parallel_for()), into its own slot; the
 * report is then written from the slots in order, so the output is the same for every --jobs.
 * The point cache is shared and locks. */

/* The points of one block at every size: predictions or why each failed. */
typedef struct {
    const CsTopo *topo;
    CsOp op;
    const GArray *sizes;
    const CsAlgo *algo; /* (nullable) --algo for the best block, the block's own otherwise */
    int proto;
    const CsPredictOptions *popts;
    const CsPredictOptions *fastest_opts; /* (nullable) collsim's fastest beside NCCL's pick */
    gboolean best;                        /* cs_predict_best(), not cs_predict_one() */
    CsPrediction *pred;
    CsPrediction *fastest;
    GError **errors; /* per size: the first error, or NULL */
    CsCliProgress *progress;
} SizesJob;

static void
sizes_job_item(guint i, gpointer data)
{
    SizesJob *j = data;
    const gint64 size = g_array_index(j->sizes, gint64, i);
    if (!j->best) {
        cs_predict_one(j->topo, j->op, size, j->algo, (CsProto)j->proto, j->popts, &j->pred[i],
                       &j->errors[i]);
        return;
    }
    if (!cs_predict_best(j->topo, j->op, size, j->algo, j->proto, j->popts, &j->pred[i],
                         &j->errors[i]))
        return;
    if (j->fastest_opts != NULL
        && !cs_predict_best(j->topo, j->op, size, j->algo, j->proto, j->fastest_opts,
                            &j->fastest[i], &j->errors[i])) {
        g_prefix_error(&j->errors[i], "collsim's fastest choice beside it: ");
        return;
    }
    /* The library's own pick runs too, also where it is none of the candidates (RCCL's MSCCL
     * all-pairs): the fastest is never slower than it. */
    if (j->fastest_opts != NULL && j->pred[i].nccl_picked
        && j->pred[i].time_us < j->fastest[i].time_us)
        j->fastest[i] = j->pred[i];
}

/* Size @i's slots, for the other ranks of a study: its error, or its prediction(s). */
static void
sizes_job_pack(guint i, GByteArray *out, gpointer data)
{
    const SizesJob *j = data;
    cs_pack_error(out, j->errors[i]);
    if (j->errors[i] != NULL)
        return;
    cs_prediction_pack(&j->pred[i], out);
    if (j->best && j->fastest_opts != NULL)
        cs_prediction_pack(&j->fastest[i], out);
}

static void
sizes_job_unpack(guint i, CsUnpack *in, gpointer data)
{
    SizesJob *j = data;
    j->errors[i] = cs_unpack_error(in);
    if (j->errors[i] != NULL)
        return;
    cs_prediction_unpack(in, &j->pred[i]);
    if (j->best && j->fastest_opts != NULL)
        cs_prediction_unpack(in, &j->fastest[i]);
}

static void
sizes_job_done(guint done, guint i, gpointer data)
{
    SizesJob *j = data;
    (void)done;
    if (j->progress != NULL)
        cs_cli_progress_step(j->progress, g_array_index(j->sizes, gint64, i));
}

/* Fills @j's slots for every size on @jobs threads; free with sizes_job_clear(). */
static void
sizes_job_run(SizesJob *j, int jobs)
{
    const guint n = j->sizes->len;
    j->pred = g_new0(CsPrediction, MAX(n, 1));
    j->fastest = g_new0(CsPrediction, MAX(n, 1));
    j->errors = g_new0(GError *, MAX(n, 1));
    /* One size: its candidates go on the threads instead (the same answer). */
    CsPredictOptions one_size = *j->popts;
    CsPredictOptions one_size_fastest;
    const CsPredictOptions *popts = j->popts;
    const CsPredictOptions *fastest_opts = j->fastest_opts;
    if (n == 1 && jobs > 1) {
        one_size.candidate_jobs = jobs;
        j->popts = &one_size;
        if (fastest_opts != NULL) {
            one_size_fastest = *fastest_opts;
            one_size_fastest.candidate_jobs = jobs;
            j->fastest_opts = &one_size_fastest;
        }
    }
    cs_parallel_for_ranks(n, 1, jobs, sizes_job_item, sizes_job_done, sizes_job_pack,
                          sizes_job_unpack, j);
    j->popts = popts;
    j->fastest_opts = fastest_opts;
}

static void
sizes_job_clear(SizesJob *j)
{
    for (guint i = 0; j->errors != NULL && i < j->sizes->len; i++)
        g_clear_error(&j->errors[i]);
    g_clear_pointer(&j->pred, g_free);
    g_clear_pointer(&j->fastest, g_free);
    g_clear_pointer(&j->errors, g_free);
}

static gboolean
predict_best_block(CsReport *report, const CsTopo *topo, CsOp op, const GArray *sizes,
                   const CsAlgo *algo, int proto, const CsPredictOptions *popts, int jobs,
                   GString *verified, CsCliProgress *progress, GError **error)
{
    /* Under NCCL's pick, collsim's fastest goes beside it (same candidates, same engine). */
    CsPredictOptions fastest_opts = *popts;
    fastest_opts.pick = CS_PICK_FASTEST;
    fastest_opts.nccl = NULL;
    SizesJob j = {
        topo,
        op,
        sizes,
        algo,
        proto,
        popts,
        popts->pick == CS_PICK_NCCL ? &fastest_opts : NULL,
        TRUE,
        NULL,
        NULL,
        NULL,
        progress,
    };
    sizes_job_run(&j, jobs);
    gboolean ok = TRUE;
    guint predicted = 0;
    g_autoptr(GPtrArray) unpredicted = g_ptr_array_new_with_free_func(g_free);
    cs_report_begin_block(report, "best", TRUE);
    for (guint i = 0; i < sizes->len && ok; i++) {
        gint64 size = g_array_index(sizes, gint64, i);
        const CsPrediction *pred = &j.pred[i];
        /* A size collsim cannot predict (a schedule beyond the memory budget, say) is said,
         * and the others still come out, as validate does with its rows. */
        if (j.errors[i] != NULL) {
            g_autofree char *note = g_strdup_printf("%" G_GINT64_FORMAT " bytes: not predicted: %s",
                                                    size, j.errors[i]->message);
            cs_report_add_note(report, note);
            g_ptr_array_add(unpredicted, g_steal_pointer(&note));
            continue;
        }
        predicted++;
        cs_report_add(report, pred);
        if (j.fastest_opts != NULL)
            cs_report_set_alternative(report, &j.fastest[i]);
        if (pred->n_unsimulated > 0) {
            g_autofree char *more = pred->n_unsimulated > 1
                                        ? g_strdup_printf(" and %d more", pred->n_unsimulated - 1)
                                        : g_strdup("");
            g_autofree char *reason = cs_schedule_limit_reason(0);
            g_autofree char *note = g_strdup_printf(
                "%" G_GINT64_FORMAT " bytes: %s/%s%s not simulated (schedule of %s); the best "
                "of the others is shown",
                size, pred->unsimulated_algo->name, cs_proto_name(pred->unsimulated_proto), more,
                reason);
            cs_report_add_note(report, note);
        }
        if (verified != NULL && !verify_point(topo, op, pred, popts, verified, error))
            ok = FALSE;
    }
    /* Where the pick is no candidate (RCCL's MSCCL all-pairs) and beats them all, the fastest
     * column repeats it (sizes_job_item()), which --pick fastest cannot print. */
    const int nranks = popts->nranks > 0 ? popts->nranks : cs_topo_n_ranks(topo);
    guint repeated = 0;
    const char *repeated_algo = NULL;
    for (guint i = 0; j.fastest_opts != NULL && i < sizes->len; i++) {
        const CsPrediction *pred = &j.pred[i];
        if (j.errors[i] == NULL && pred->nccl_picked && pred->algo != NULL
            && j.fastest[i].algo == pred->algo && j.fastest[i].proto == pred->proto
            && !cs_predict_default_candidate(pred->algo, op, topo, nranks, popts->any_algorithm)) {
            repeated++;
            repeated_algo = pred->algo->name;
        }
    }
    if (repeated > 0) {
        g_autofree char *note = g_strdup_printf(
            "at %u size%s the library's pick (%s) is none of collsim's candidates and beats "
            "them all: the fastest column repeats it (--pick fastest prints the candidates' "
            "fastest)",
            repeated, repeated > 1 ? "s" : "", repeated_algo);
        cs_report_add_note(report, note);
    }
    if (ok && predicted > 0)
        for (guint i = 0; i < unpredicted->len; i++)
            g_printerr("%s: warning: %s of %s\n", prog, cs_op_name(op),
                       (const char *)g_ptr_array_index(unpredicted, i));
    /* Nothing to show: the first size's reason is the command's. */
    if (ok && predicted == 0 && sizes->len > 0) {
        g_propagate_prefixed_error(error, g_steal_pointer(&j.errors[0]),
                                   "%s: %s of %" G_GINT64_FORMAT " bytes: ", prog, cs_op_name(op),
                                   g_array_index(sizes, gint64, 0));
        ok = FALSE;
    }
    sizes_job_clear(&j);
    return ok;
}

/* One block of --all: an algorithm x protocol, or an algorithm that cannot run here. */
typedef struct {
    const CsAlgo *algo;
    int proto;       /* -1: not applicable, @why says why */
    const char *why; /* (nullable) */
    SizesJob job;
} AllBlock;

typedef struct {
    AllBlock *blocks;
    guint n_sizes;
} AllJob;

static void
all_job_item(guint k, gpointer data)
{
    AllJob *a = data;
    AllBlock *b = &a->blocks[k / a->n_sizes];
    sizes_job_item(k % a->n_sizes, &b->job);
}

static void
all_job_pack(guint k, GByteArray *out, gpointer data)
{
    AllJob *a = data;
    sizes_job_pack(k % a->n_sizes, out, &a->blocks[k / a->n_sizes].job);
}

static void
all_job_unpack(guint k, CsUnpack *in, gpointer data)
{
    AllJob *a = data;
    sizes_job_unpack(k % a->n_sizes, in, &a->blocks[k / a->n_sizes].job);
}

/* One block per algorithm x protocol; what cannot run becomes a note, not a failure. */
static gboolean
predict_all_blocks(CsReport *report, const CsTopo *topo, CsOp op, const GArray *sizes,
                   const CsAlgo *algo_filter, int proto_filter, const CsPredictOptions *popts,
                   int jobs, GString *verified, GError **error)
{
    int nranks = popts->nranks;
    gsize n_rows = 0;
    g_autoptr(GArray) blocks = g_array_new(FALSE, TRUE, sizeof(AllBlock));
    for (const CsAlgo *const *a = cs_algo_registry(); *a != NULL; a++) {
        const CsAlgo *algo = *a;
        if (algo_filter != NULL && algo != algo_filter)
            continue;
        if ((algo->ops & CS_OP_BIT(op)) == 0)
            continue;
        const char *why = NULL;
        if (algo->supports != NULL && !algo->supports(topo, op, nranks, &why)) {
            AllBlock b = { algo, -1, why, { 0 } };
            g_array_append_val(blocks, b);
            continue;
        }
        for (int p = 0; p < CS_N_PROTOS; p++) {
            if (proto_filter >= 0 && p != proto_filter)
                continue;
            AllBlock b = { algo, p, NULL, { 0 } };
            b.job = (SizesJob){
                topo, op, sizes, algo, p, popts, NULL, FALSE, NULL, NULL, NULL, NULL
            };
            b.job.pred = g_new0(CsPrediction, MAX(sizes->len, 1));
            b.job.errors = g_new0(GError *, MAX(sizes->len, 1));
            g_array_append_val(blocks, b);
        }
    }
    /* Every size of every block, the blocks' slots filled on @jobs threads. */
    g_autoptr(GArray) runnable = g_array_new(FALSE, TRUE, sizeof(AllBlock));
    for (guint b = 0; b < blocks->len; b++)
        if (g_array_index(blocks, AllBlock, b).proto >= 0)
            g_array_append_val(runnable, g_array_index(blocks, AllBlock, b));
    /* Over mpirun's ranks a block's sizes stay together: its large sizes extend from the
     * same simulated points (the point cache is per process). */
    AllJob all = { (AllBlock *)runnable->data, sizes->len };
    cs_parallel_for_ranks(runnable->len * sizes->len, sizes->len, jobs, all_job_item, NULL,
                          all_job_pack, all_job_unpack, &all);

    gboolean ok = TRUE;
    guint next = 0;
    for (guint b = 0; b < blocks->len; b++) {
        const AllBlock *block = &g_array_index(blocks, AllBlock, b);
        if (block->proto < 0) {
            if (!ok)
                continue;
            cs_report_begin_block(report, block->algo->name, FALSE);
            g_autofree char *note = g_strdup_printf("%s: not applicable: %s", block->algo->name,
                                                    block->why != NULL ? block->why : "refused");
            cs_report_add_note(report, note);
            continue;
        }
        SizesJob *j = &g_array_index(runnable, AllBlock, next++).job;
        g_autofree char *label
            = g_strdup_printf("%s/%s", block->algo->name, cs_proto_name((CsProto)block->proto));
        if (ok)
            cs_report_begin_block(report, label, FALSE);
        g_autofree char *last_note = NULL;
        for (guint i = 0; i < sizes->len && ok; i++) {
            gint64 size = g_array_index(sizes, gint64, i);
            if (j->errors[i] == NULL) {
                cs_report_add(report, &j->pred[i]);
                n_rows++;
                if (verified != NULL
                    && !verify_point(topo, op, &j->pred[i], popts, verified, error))
                    ok = FALSE;
                continue;
            }
            /* The same refusal for every size is said once. */
            const char *message = j->errors[i]->message;
            if (g_strcmp0(last_note, message) != 0) {
                g_autofree char *note
                    = g_strdup_printf("%s: %" G_GINT64_FORMAT " bytes: %s", label, size, message);
                cs_report_add_note(report, note);
                g_free(last_note);
                last_note = g_strdup(message);
            }
        }
        sizes_job_clear(j);
    }
    if (!ok)
        return FALSE;
    if (n_rows == 0) {
        g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_FAILED,
                    "%s: no algorithm x protocol can run %s on %d ranks of %s", prog,
                    cs_op_name(op), nranks, cs_topo_name(topo));
        return FALSE;
    }
    return TRUE;
}

/* --timeline: the choice at @size as the table makes it (NCCL's pick or collsim's fastest,
 * or what --algo/--proto force), simulated once more, whole (as --exact), with every step
 * recorded. */
static gboolean
write_timeline(const char *path, const CsTopo *topo, CsOp op, gint64 size, const CsAlgo *algo,
               int proto, const CsPredictOptions *popts, GError **error)
{
    CsPrediction pred;
    if (!cs_predict_best(topo, op, size, algo, proto, popts, &pred, error)) {
        g_prefix_error(error, "%s: --timeline: %s of %" G_GINT64_FORMAT " bytes: ", prog,
                       cs_op_name(op), size);
        return FALSE;
    }
    g_autoptr(CsTimeline) timeline = cs_cli_timeline_new();
    CsObserver observer = cs_cli_timeline_observer(timeline);
    CsPredictOptions traced = *popts;
    traced.engine.observer = &observer;
    traced.exact = TRUE;
    traced.n_channels = pred.n_channels;
    if (!cs_predict_one(topo, op, size, pred.algo, pred.proto, &traced, &pred, error)) {
        g_prefix_error(error, "%s: --timeline: %s of %" G_GINT64_FORMAT " bytes: ", prog,
                       cs_op_name(op), size);
        return FALSE;
    }
    return cs_cli_timeline_write(prog, path, timeline, topo, op, popts->nranks, pred.n_channels,
                                 pred.peer_channels > 0, error);
}

/* ---- NCCL's own cost model (--model nccl[:VERSION]) ---- */

/* Labels for NCCL algorithms that collsim does not simulate (CollNet): the report names
 * a prediction by its CsAlgo, and these only ever carry NCCL-model times. */
static const CsAlgo nccl_only_algos[CS_NCCL_N_ALGOS] = {
    [CS_NCCL_ALGO_COLLNET_DIRECT]
    = { .name = "collnet_direct", .summary = "NCCL CollNet Direct (NCCL cost model only)" },
    [CS_NCCL_ALGO_COLLNET_CHAIN]
    = { .name = "collnet_chain", .summary = "NCCL CollNet Chain (NCCL cost model only)" },
};

/* One size under NCCL's analytical model, as a CsPrediction the report can print: the
 * latency term is reported as alpha and the bandwidth term as beta. */
static gboolean
predict_nccl_one(const CsNcclModel *m, CsOp op, gint64 size, int algo, int proto,
                 const CsPredictOptions *popts, CsPrediction *out, GError **error)
{
    CsNcclPrediction np;
    if (!cs_nccl_model_predict(m, op, size, algo, proto, &np, error))
        return FALSE;
    const char *name = cs_nccl_algo_collsim_name(np.algo);
    const CsAlgo *a = name != NULL ? cs_algo_lookup(name, NULL) : NULL;
    if (a == NULL)
        a = &nccl_only_algos[np.algo];
    *out = (CsPrediction){
        .algo = a,
        .proto = np.proto,
        .n_channels = np.n_channels,
        .size = cs_op_size(op, size, popts->dtype, popts->nranks),
    };
    out->result.time = cs_time_from_us(np.time_us);
    out->result.alpha = cs_time_from_us(np.latency_us);
    out->result.beta = out->result.time - out->result.alpha;
    out->result.n_ranks = popts->nranks;
    out->time_us = np.time_us;
    out->algbw_GBps = out->time_us > 0 ? out->size.size_bytes / (out->time_us * 1e3) : 0;
    out->busbw_GBps = out->algbw_GBps * cs_op_busbw_factor(op, popts->nranks);
    return TRUE;
}

/* NCCL's pick per size, or what NCCL_ALGO/NCCL_PROTO would force (--algo/--proto); with
 * --all one block per NCCL algorithm x protocol the model can use. */
static gboolean
predict_nccl_blocks(CsReport *report, const CsTopo *topo, CsOp op, const GArray *sizes,
                    const CsAlgo *algo, int proto, gboolean all, const char *spec,
                    const CsPredictOptions *popts, GError **error)
{
    g_autoptr(CsNcclModel) m = cs_nccl_model_new_for_topo(topo, popts->nranks, spec, error);
    if (m == NULL)
        return FALSE;
    int nccl_algo = -1;
    if (algo != NULL) {
        CsNcclAlgo na;
        if (!cs_nccl_algo_from_collsim(algo->name, &na))
            return cs_cli_usage_error(error, prog,
                                      "--algo %s is not one of NCCL's algorithms, so --model "
                                      "nccl has no cost for it",
                                      algo->name);
        nccl_algo = na;
    }
    for (int a = all ? 0 : -1; a < (all ? CS_NCCL_N_ALGOS : 0); a++) {
        if (all && nccl_algo >= 0 && a != nccl_algo)
            continue;
        for (int p = all ? 0 : -1; p < (all ? CS_N_PROTOS : 0); p++) {
            if (all && proto >= 0 && p != proto)
                continue;
            const int fa = all ? a : nccl_algo;
            const int fp = all ? p : proto;
            g_autofree char *label
                = all ? g_strdup_printf("%s/%s", cs_nccl_algo_name((CsNcclAlgo)a),
                                        cs_proto_name((CsProto)p))
                      : g_strdup("best");
            gboolean begun = FALSE;
            for (guint i = 0; i < sizes->len; i++) {
                gint64 size = g_array_index(sizes, gint64, i);
                CsPrediction pred;
                g_autoptr(GError) local = NULL;
                if (!predict_nccl_one(m, op, size, fa, fp, popts, &pred, &local)) {
                    /* Under --all an unusable pair is simply absent, as in NCCL's table. */
                    if (all)
                        break;
                    g_propagate_prefixed_error(error, g_steal_pointer(&local),
                                               "%s: %s of %" G_GINT64_FORMAT " bytes: ", prog,
                                               cs_op_name(op), size);
                    return FALSE;
                }
                if (!begun) {
                    cs_report_begin_block(report, label, !all);
                    begun = TRUE;
                }
                cs_report_add(report, &pred);
            }
        }
    }
    return TRUE;
}

/* ---- Entry point ---- */

/**
 * cs_cli_run:
 * `collsim [run] --topo T --op OP [nccl-tests flags]`: see @summary and @description.
 */
gboolean
cs_cli_run(int argc, char **argv, GError **error)
{
    g_auto(RunOptions) o = {
        .min_bytes = DEFAULT_MIN_BYTES,
        .max_bytes = DEFAULT_MAX_BYTES,
        .step_factor = 2,
        .root = 0,
        .nthreads = 1,
        .ngpus = 1,
        .step_bytes = -1, /* -i not given; -i 0 is an error */
        .jobs = CS_CLI_JOBS_UNSET,
    };
    g_autofree char *cmd = cs_cli_command_line(argc, argv);
    prog = argv[0];
    /* -f is a count, but whether it was given changes what -i means. */
    gint64 factor = 0;

    const GOptionEntry entries[] = {
        { "topo", 0, 0, G_OPTION_ARG_STRING, &o.topo,
          "Topology: a shipped name or a JSON file (default dgx-h100x4)", "T" },
        CS_CLI_SET_ENTRY(&o.sets),
        { "op", 0, 0, G_OPTION_ARG_STRING, &o.op,
          "Collective: allreduce, allgather, reducescatter, broadcast, reduce, alltoall, "
          "scatter, gather, or sendrecv (point-to-point to rank + 1) (default allreduce)",
          "OP" },
        { "minbytes", 'b', 0, G_OPTION_ARG_CALLBACK, CS_CLI_ARG_FUNC(cs_cli_parse_size_arg),
          "Smallest size, e.g. 8, 64K, 1M (default 8)", "SIZE" },
        { "maxbytes", 'e', 0, G_OPTION_ARG_CALLBACK, CS_CLI_ARG_FUNC(cs_cli_parse_size_arg),
          "Largest size (default 8G)", "SIZE" },
        { "stepfactor", 'f', 0, G_OPTION_ARG_CALLBACK, CS_CLI_ARG_FUNC(cs_cli_parse_count_arg),
          "Multiply the size by F each step (default 2)", "F" },
        { "stepbytes", 'i', 0, G_OPTION_ARG_CALLBACK, CS_CLI_ARG_FUNC(cs_cli_parse_size_arg),
          "Add SIZE each step instead (when -f is not given)", "SIZE" },
        { "datatype", 'd', 0, G_OPTION_ARG_STRING, &o.dtype,
          "Datatype: int8 uint8 int32 uint32 int64 uint64 half float double bfloat16 "
          "(default float)",
          "TYPE" },
        { "redop", 'o', 0, G_OPTION_ARG_STRING, &o.redop,
          "Reduction: sum prod max min avg (default sum)", "OP" },
        { "root", 'r', 0, G_OPTION_ARG_INT, &o.root,
          "Root rank of rooted collectives "
          "(default 0)",
          "R" },
        { "nthreads", 't', 0, G_OPTION_ARG_INT, &o.nthreads,
          "Threads per process, as nccl-tests' -t: threads launch in parallel, so only "
          "ranks = processes x T x G changes (default 1)",
          "T" },
        { "ngpus", 'g', 0, G_OPTION_ARG_INT, &o.ngpus,
          "GPUs per thread, as nccl-tests' -g: one thread driving G GPUs launches serially "
          "(default 1)",
          "G" },
        { "cudagraph", 'G', 0, G_OPTION_ARG_INT, &o.cudagraph,
          "CUDA graph launches, as nccl-tests' -G: N > 0 captures the timed iterations in a "
          "graph, so no host launch is paid per collective (default 0)",
          "N" },
        { "algo", 0, 0, G_OPTION_ARG_STRING, &o.algo, "Force an algorithm (see 'collsim algos')",
          "A" },
        { "proto", 0, 0, G_OPTION_ARG_STRING, &o.proto, "Force a protocol: LL, LL128, Simple",
          "P" },
        { "channels", 0, 0, G_OPTION_ARG_INT, &o.channels,
          "Force the channel count (default: chosen per topology, algorithm and size)", "N" },
        { "all", 0, 0, G_OPTION_ARG_NONE, &o.all, "One block per algorithm x protocol", NULL },
        { "verify", 0, 0, G_OPTION_ARG_NONE, &o.verify,
          "Run the semantic checker on the exact schedule behind every prediction (its "
          "algorithm, protocol and channels at the full size) and fail if one does not compute "
          "the collective",
          NULL },
        { "whole", 0, 0, G_OPTION_ARG_NONE, &o.whole,
          "Replay every rank (default: where the schedule and the machine repeat under a shift "
          "of ranks, one period is replayed, which gives the same times)",
          NULL },
        { "exact", 0, 0, G_OPTION_ARG_NONE, &o.exact,
          "Simulate every size chunk by chunk (default: sizes past the pipeline's linear "
          "regime are extended from three smaller simulated sizes on one line, marked in the "
          "winners table)",
          NULL },
        { "any-algorithm", 0, 0, G_OPTION_ARG_NONE, &o.any_algorithm,
          "Best choice among every algorithm collsim knows (MPI classics too), not only what "
          "NCCL runs",
          NULL },
        { "model", 0, 0, G_OPTION_ARG_STRING, &o.model,
          "Model: reservation (default, fast) or maxmin (fair sharing) network models of the "
          "event engine, or nccl[:VERSION] for NCCL's own analytical cost model (2.19, 2.28)",
          "M" },
        { "progress", 0, 0, G_OPTION_ARG_NONE, &o.progress,
          "Print progress with an estimate of the time left on stderr, a line per size (by "
          "default only on a terminal, once a run has taken a second)",
          NULL },
        { "quiet", 0, 0, G_OPTION_ARG_NONE, &o.quiet, "Print no progress", NULL },
        CS_CLI_JOBS_ENTRY(&o.jobs),
        { "textbook", 0, 0, G_OPTION_ARG_NONE, &o.textbook,
          "Hockney's cost model in the engine: each message costs its sender alpha + n/B, "
          "nothing else (no launch, protocol, chunking or overlap); ring all-reduce then takes "
          "2(P-1) alpha + 2(P-1)/P n/B",
          NULL },
        { "pick", 0, 0, G_OPTION_ARG_STRING, &o.pick,
          "Who picks the algorithm and protocol per size: nccl[:VERSION] (default where NCCL "
          "runs the collective on GPUs its model knows: NCCL's own tuning model, as an "
          "nccl-tests run does; the engine times its pick, collsim's fastest and the gain "
          "beside it), rccl[:VERSION] (RCCL's own tuning model; the default on AMD GPUs) or "
          "fastest (collsim's engine; the default elsewhere)",
          "WHO" },
        { "format", 0, 0, G_OPTION_ARG_STRING, &o.format, "Output: table (default), json, csv",
          "F" },
        { "ranks", 0, 0, G_OPTION_ARG_CALLBACK, CS_CLI_ARG_FUNC(cs_cli_parse_count_arg),
          "Use the first N ranks of the topology, on a topology of just those GPUs (default all)",
          "N" },
        { "nodes", 0, 0, G_OPTION_ARG_CALLBACK, CS_CLI_ARG_FUNC(cs_cli_parse_count_arg),
          "Spread the ranks over the first M nodes, N / M on each (as 'collsim select'); alone, "
          "every rank of those nodes",
          "M" },
        { "layout", 0, 0, G_OPTION_ARG_STRING, &o.layout,
          "Table widths: classic (default, most published logs) or current (recent "
          "nccl-tests)",
          "L" },
        { "plot", 0, 0, G_OPTION_ARG_FILENAME, &o.plot,
          "Also draw busbw against size into FILE (.svg, .png or .pdf): one line per block, "
          "the chosen algorithm x protocol bold",
          "FILE" },
        { "timeline", 0, 0, G_OPTION_ARG_FILENAME, &o.timeline,
          "Also write the steps of one size (--timeline-size) as Chrome trace events into FILE, "
          "as explain --timeline does",
          "FILE" },
        { "timeline-size", 0, 0, G_OPTION_ARG_CALLBACK, CS_CLI_ARG_FUNC(cs_cli_parse_size_arg),
          "The size --timeline shows (default the sweep's largest)", "SIZE" },
        G_OPTION_ENTRY_NULL,
    };
    const CsCliUnitTarget targets[] = {
        { "minbytes", &o.min_bytes }, { "maxbytes", &o.max_bytes },
        { "stepfactor", &factor },    { "stepbytes", &o.step_bytes },
        { "ranks", &o.ranks },        { "timeline-size", &o.timeline_size },
        { "nodes", &o.nodes },        { NULL, NULL },
    };
    g_autoptr(GArray) all_entries = entries_with_ignored(entries, &o);
    if (!cs_cli_parse_units(&argc, &argv, (const GOptionEntry *)all_entries->data, targets, "",
                            summary, description, error))
        return FALSE;
    if (argc > 1) {
        /* "collsim allreduce" is a common slip for "collsim --op allreduce". */
        return cs_cli_usage_error(error, prog,
                                  "unexpected argument \"%s\" (options only; the collective "
                                  "is --op)",
                                  argv[1]);
    }
    if (factor > 0) {
        o.step_factor = factor;
        o.factor_given = TRUE;
    }
    if (o.step_bytes == 0)
        return cs_cli_usage_error(error, prog, "-i: the step must be at least 1 byte");

    /* Names. */
    CsOp op = CS_OP_ALL_REDUCE;
    CsDtype dtype = CS_DTYPE_FLOAT;
    CsRedop redop = CS_REDOP_SUM;
    const CsAlgo *algo = NULL;
    int proto = -1;
    CsReportFormat format = CS_REPORT_FORMAT_TABLE;
    CsTraceLayout layout = CS_TRACE_LAYOUT_CLASSIC;
    GError *cause = NULL;
    /* nccl-tests' long name for -o is --op; reductions and collectives share no name. */
    if (o.op != NULL && o.redop == NULL && cs_redop_from_name(o.op, &redop, NULL)) {
        o.redop = g_steal_pointer(&o.op);
    }
    if (o.op != NULL && !cs_op_from_name(o.op, &op, &cause))
        return cs_cli_flag_error(error, prog, "--op", cause);
    if (o.dtype != NULL && !cs_dtype_from_name(o.dtype, &dtype, &cause))
        return cs_cli_flag_error(error, prog, "-d", cause);
    if (o.redop != NULL && !cs_redop_from_name(o.redop, &redop, &cause))
        return cs_cli_flag_error(error, prog, "-o", cause);
    if (o.algo != NULL && (algo = cs_algo_lookup(o.algo, &cause)) == NULL)
        return cs_cli_flag_error(error, prog, "--algo", cause);
    if (o.proto != NULL) {
        CsProto p;
        if (!cs_proto_from_name(o.proto, &p, &cause))
            return cs_cli_flag_error(error, prog, "--proto", cause);
        proto = (int)p;
    }
    if (o.format != NULL && !cs_report_format_from_name(o.format, &format))
        return cs_cli_usage_error(
            error, prog, "--format: \"%s\" is not a format (table, json or csv)", o.format);
    if (o.layout != NULL) {
        if (g_ascii_strcasecmp(o.layout, "classic") == 0)
            layout = CS_TRACE_LAYOUT_CLASSIC;
        else if (g_ascii_strcasecmp(o.layout, "current") == 0)
            layout = CS_TRACE_LAYOUT_CURRENT;
        else
            return cs_cli_usage_error(
                error, prog, "--layout: \"%s\" is not a layout (classic or current)", o.layout);
    }
    const char *model = o.model != NULL ? o.model : "reservation";
    const gboolean nccl_model = g_str_has_prefix(model, "nccl");
    if (nccl_model) {
        const CsNcclConstants *constants;
        GError *local = NULL;
        if (!cs_nccl_parse_spec(model, &constants, &local))
            return cs_cli_flag_error(error, prog, "--model", local);
    }
    else if (model[0] == '\0')
        return cs_cli_usage_error(error, prog,
                                  "--model: \"\" is not a model (reservation, maxmin or "
                                  "nccl[:VERSION])");
    else if (cs_net_model_lookup(model, &cause) == NULL)
        return cs_cli_flag_error(error, prog, "--model", cause);
    gboolean nccl_pick = o.pick != NULL
                         && (g_ascii_strncasecmp(o.pick, "nccl", 4) == 0
                             || g_ascii_strncasecmp(o.pick, "rccl", 4) == 0);
    if (o.pick != NULL && !nccl_pick) {
        CsPick pick;
        if (!cs_pick_from_name(o.pick, &pick, NULL) || pick != CS_PICK_FASTEST)
            return cs_cli_usage_error(error, prog,
                                      "--pick: \"%s\" is not a pick (fastest, nccl[:VERSION] "
                                      "or rccl[:VERSION])",
                                      o.pick);
    }
    if (nccl_pick) {
        const CsNcclConstants *constants;
        GError *local = NULL;
        if (!cs_nccl_parse_spec(o.pick, &constants, &local))
            return cs_cli_flag_error(error, prog, "--pick", local);
        if (o.any_algorithm)
            return cs_cli_usage_error(error, prog,
                                      "--pick nccl chooses among NCCL's algorithms; "
                                      "--any-algorithm asks for collsim's fastest of all");
        if (o.all)
            return cs_cli_usage_error(error, prog,
                                      "--pick nccl picks one algorithm per size; --all prints "
                                      "every one");
        if (o.model != NULL && g_ascii_strncasecmp(o.model, "nccl", 4) == 0)
            return cs_cli_usage_error(error, prog,
                                      "--model nccl already predicts NCCL's pick with NCCL's "
                                      "model; --pick nccl times it with the engine");
    }
    if (o.textbook && nccl_model)
        return cs_cli_usage_error(error, prog,
                                  "--textbook runs the engine in Hockney's model; --model %s is "
                                  "NCCL's own cost model, not the engine",
                                  model);
    if (o.timeline_size != 0 && o.timeline == NULL)
        return cs_cli_usage_error(error, prog, "--timeline-size needs --timeline FILE");
    if (o.timeline != NULL && nccl_model)
        return cs_cli_usage_error(error, prog,
                                  "--timeline shows the engine's steps; --model %s is NCCL's own "
                                  "cost model, which has none",
                                  model);
    if (algo != NULL && (algo->ops & CS_OP_BIT(op)) == 0)
        return cs_cli_usage_error(error, prog,
                                  "--algo %s does not implement %s (see 'collsim algos')",
                                  algo->name, cs_op_name(op));
    if (o.channels < 0 || o.channels > 64)
        return cs_cli_usage_error(error, prog,
                                  "--channels: %d is not a channel count (1 to 64, or 0 for the "
                                  "default)",
                                  o.channels);

    g_autoptr(GArray) sizes = make_sizes(&o, error);
    if (sizes == NULL)
        return FALSE;
    if (o.plot != NULL && !cs_cli_check_plot(prog, o.plot, error))
        return FALSE;
    if (!cs_cli_check_output(prog, "--timeline", o.timeline, error))
        return FALSE;

    /* The machine. */
    g_autoptr(CsTopo) topo
        = cs_cli_load_topo(prog, o.topo != NULL ? o.topo : "dgx-h100x4", o.sets, error);
    if (topo == NULL)
        return FALSE;
    int topo_ranks = cs_topo_n_ranks(topo);
    if (o.ranks > topo_ranks)
        return cs_cli_usage_error(error, prog, "--ranks %" G_GINT64_FORMAT ": %s has only %d ranks",
                                  o.ranks, cs_topo_name(topo), topo_ranks);
    int nranks = (int)o.ranks;
    if (!cs_cli_shape_topo(prog, &topo, &nranks, (int)MIN(o.nodes, G_MAXINT), error))
        return FALSE;
    if (cs_op_has_root(op) && (o.root < 0 || o.root >= nranks))
        return cs_cli_usage_error(error, prog, "-r %d: the root must be a rank in 0..%d", o.root,
                                  nranks - 1);
    if (o.ngpus < 1 || o.ngpus > nranks || nranks % o.ngpus != 0)
        return cs_cli_usage_error(error, prog,
                                  "-g %d: GPUs per thread must divide the %d ranks "
                                  "(ranks = processes x threads x GPUs, as in nccl-tests)",
                                  o.ngpus, nranks);
    if (o.nthreads < 1 || o.nthreads > nranks / o.ngpus || (nranks / o.ngpus) % o.nthreads != 0)
        return cs_cli_usage_error(error, prog,
                                  "-t %d: threads x GPUs per thread (-g %d) must divide the %d "
                                  "ranks (ranks = processes x threads x GPUs, as in nccl-tests)",
                                  o.nthreads, o.ngpus, nranks);
    if (o.cudagraph < 0)
        return cs_cli_usage_error(error, prog,
                                  "-G %d: the number of CUDA graph launches is 0 (none) or more",
                                  o.cudagraph);
    g_autofree char *ignored = ignored_line(&o);

    CsPredictOptions popts;
    cs_predict_options_init(&popts);
    popts.engine.net_model = model;
    popts.engine.gpus_per_thread = o.ngpus;
    popts.engine.textbook = o.textbook;
    /* nccl-tests -G: the timed loop is captured once and replayed as a graph, whose kernels
     * the GPU starts without the host (CUDA Programming Guide, "CUDA Graphs": work submitted
     * as a graph is launched with one call). The host's launches are paid once per graph of -n
     * iterations; collsim rounds that to none. Each thread's GPUs still start together. */
    popts.engine.no_launch = o.cudagraph > 0;
    popts.dtype = dtype;
    popts.redop = redop;
    popts.root = cs_op_has_root(op) ? o.root : 0;
    popts.nranks = nranks;
    /* A forced algorithm the machine cannot run is a request to change, not a failure. */
    if (algo != NULL) {
        const char *why = NULL;
        if (!cs_algo_supports_ops(algo->ops, op, "it does not implement that collective", &why)
            || (algo->supports != NULL && !algo->supports(topo, op, nranks, &why)))
            return cs_cli_usage_error(error, prog, "--algo %s cannot run %s on %d ranks of %s: %s",
                                      algo->name, cs_op_name(op), nranks, cs_topo_name(topo),
                                      why != NULL ? why : "not supported");
    }
    popts.n_channels = o.channels;
    popts.any_algorithm = o.any_algorithm;
    popts.exact = o.exact;
    popts.whole = o.whole;
    /* Sizes extended from the same three smaller ones (one choice, one chunk) simulate them
     * once. */
    g_autoptr(CsPointCache) points = cs_point_cache_new(FALSE);
    cs_point_cache_bind(points, topo);
    popts.cache = points;
    /* By default, what nccl-tests would measure: NCCL's own pick (its tuning model, the
     * release nearest the GPUs' constants), where NCCL runs the collective on GPUs its model
     * knows; collsim's fastest goes beside it. */
    /* Hockney's textbook machine has no NCCL to pick for it. */
    const char *default_spec = o.pick == NULL && !o.all && !o.any_algorithm && !nccl_model
                                       && !o.textbook && cs_nccl_func_from_op(op) >= 0
                                   ? cs_nccl_default_spec(topo, nranks)
                                   : NULL;
    const gboolean default_pick = default_spec != NULL;
    if (default_pick)
        nccl_pick = TRUE;
    g_autoptr(CsNcclModel) nccl = NULL;
    if (nccl_pick && !nccl_model) {
        nccl
            = cs_nccl_model_new_for_topo(topo, nranks, default_pick ? default_spec : o.pick, error);
        if (nccl == NULL)
            return FALSE;
        popts.pick = CS_PICK_NCCL;
        popts.nccl = nccl;
    }

    /* Print the sizes nccl-tests would print: it rounds split collectives' blocks. */
    for (guint i = 0; i < sizes->len; i++)
        g_array_index(sizes, gint64, i)
            = cs_op_nccl_tests_bytes(op, g_array_index(sizes, gint64, i), dtype, nranks);

    g_autoptr(CsReport) report = cs_report_new(op, nranks, dtype, redop, o.root);
    cs_report_set_layout(report, layout);
    const CsNcclConstants *picked = nccl != NULL ? cs_nccl_model_constants(nccl) : NULL;
    g_autofree char *picker
        = picked != NULL ? g_strdup_printf("%s %s", picked->library, picked->version) : NULL;
    set_headers(report, topo, nranks, &o, model, picker, cmd);
    if (picked != NULL) {
        g_autofree char *title = g_strdup_printf(
            "%s's pick per size (its tuning model), timed by the engine", picked->library);
        cs_report_set_winners_title(report, title);
    }
    gint64 first = g_array_index(sizes, gint64, 0);
    g_autofree char *preamble = NULL;
    gboolean increment = (o.step_bytes > 0 && !o.factor_given) || o.step_factor == 1;
    if (increment)
        preamble
            = g_strdup_printf("nThread %d nGpus %d minBytes %" G_GINT64_FORMAT
                              " maxBytes %" G_GINT64_FORMAT " step: %" G_GINT64_FORMAT "(bytes)",
                              o.nthreads, o.ngpus, first, o.max_bytes,
                              o.step_bytes > 0 ? o.step_bytes : DEFAULT_STEP_BYTES);
    else
        preamble
            = g_strdup_printf("nThread %d nGpus %d minBytes %" G_GINT64_FORMAT
                              " maxBytes %" G_GINT64_FORMAT " step: %" G_GINT64_FORMAT "(factor)",
                              o.nthreads, o.ngpus, first, o.max_bytes, o.step_factor);
    cs_report_set_preamble(report, preamble);

    if (o.verify && nccl_model)
        return cs_cli_usage_error(error, prog,
                                  "--verify checks collsim's schedules; --model nccl has none");
    g_autoptr(GString) verified = o.verify ? g_string_new(NULL) : NULL;
    CsCliProgressMode progress_mode;
    if (!cs_cli_progress_mode(prog, o.progress, o.quiet, &progress_mode, error))
        return FALSE;
    int jobs;
    if (!cs_cli_resolve_jobs(prog, o.jobs, &jobs, error))
        return FALSE;
    CsCliProgress progress;
    cs_cli_progress_init(&progress, prog, (int)sizes->len, progress_mode);
    gboolean ok = nccl_model ? predict_nccl_blocks(report, topo, op, sizes, algo, proto, o.all,
                                                   model, &popts, error)
                  : o.all ? predict_all_blocks(report, topo, op, sizes, algo, proto, &popts, jobs,
                                               verified, error)
                          : predict_best_block(report, topo, op, sizes, algo, proto, &popts, jobs,
                                               verified, &progress, error);
    cs_cli_progress_finish(&progress);
    if (!ok)
        return FALSE;

    /* The picture first: a file that cannot be written fails before anything is printed. */
    if (o.plot != NULL) {
        g_autofree char *title = g_strdup_printf("collsim: %s on %s, %d ranks: busbw by size",
                                                 cs_op_name(op), cs_topo_name(topo), nranks);
        if (!cs_plot_report(report, title, cmd, o.plot, error)) {
            g_prefix_error(error, "%s: --plot: ", prog);
            return FALSE;
        }
    }
    if (o.timeline != NULL) {
        gint64 size = o.timeline_size > 0
                          ? cs_op_nccl_tests_bytes(op, o.timeline_size, dtype, nranks)
                          : g_array_index(sizes, gint64, sizes->len - 1);
        if (size <= 0)
            return cs_cli_usage_error(error, prog,
                                      "--timeline-size %" G_GINT64_FORMAT ": %s on %d ranks "
                                      "moves nothing at that size",
                                      o.timeline_size, cs_op_name(op), nranks);
        if (!write_timeline(o.timeline, topo, op, size, algo, proto, &popts, error))
            return FALSE;
    }
    g_autofree char *text = cs_report_to_string(report, format);
    /* A note, not an error: the prediction is complete and the command succeeds. */
    if (ignored != NULL)
        g_printerr("%s\n", ignored);
    if (!cs_cli_write_output(prog, NULL, NULL, text, -1, error))
        return FALSE;
    /* The checker's lines are comments after the table; JSON and CSV stay machine-readable
     * (a schedule that fails the check fails the command either way). */
    if (verified != NULL && format == CS_REPORT_FORMAT_TABLE)
        return cs_cli_write_output(prog, NULL, NULL, verified->str, -1, error);
    return TRUE;
}
