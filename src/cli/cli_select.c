// SPDX-License-Identifier: MIT
/* `collsim select`: the best algorithm/protocol/channels per size for each collective, the
 * exact crossover sizes, and the tuning tables (JSON for our NCCL tuner plugin,
 * NCCL_ALGO/NCCL_PROTO lines, the CSVs of NCCL's example tuner), or the comparison with
 * NCCL's own cost model. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analysis/plot.h"
#include "cli/cli.h"
#include "models/nccl.h"
#include "models/netmodel.h"
#include "predict/select.h"
#include "topo/topo.h"

static const char summary[]
    = "The best algorithm x protocol (and its channel count) per message size for each\n"
      "collective, the exact sizes where the best choice changes, and tuning tables for NCCL.";

static const char description[]
    = "Sizes run from -b to -e by factors of -f (default 8 B to 16 GiB by doubling). At each\n"
      "size every algorithm x protocol is predicted and the fastest kept; between two sizes\n"
      "with different winners, bisection on the predictions finds the first size (to one\n"
      "datatype element, or P elements for the collectives split in P blocks) where the\n"
      "winner changes, and both times there are reported. Past the size where one simulation\n"
      "replays more than --max-events events, times are extrapolated linearly; below it, a\n"
      "large size is extended from smaller simulated ones on its pipeline's line, as collsim\n"
      "run does (both marked *); --exact simulates every size.\n"
      "\n"
      "--model nccl[:VERSION] selects under NCCL's own analytical model (tuning.cc; versions\n"
      "2.19 and 2.28) instead of collsim's engine; --compare nccl[:VERSION] shows per size\n"
      "what NCCL's model picks, collsim's time for that pick and for collsim's own pick, and\n"
      "the loss.\n"
      "\n"
      "The candidates are collsim run's: on GPU ranks what an nccl-tests run can execute\n"
      "(NCCL's algorithms per collective, grouped send/recv with the protocol NCCL's p2p plan\n"
      "takes), on CPU ranks, which an MPI library runs, every algorithm collsim knows (and no\n"
      "NCCL pick to keep); --any-algorithm weighs every algorithm on GPUs too (MPI classics:\n"
      "recursive doubling, Rabenseifner, Bruck, binomial trees, hierarchical).\n"
      "\n"
      "A margin keeps NCCL's own pick (its tuning model, the version the machine's GPUs\n"
      "suggest) at a size unless collsim's fastest is predicted more than the margin faster,\n"
      "and keeps a range's choice while it is within the margin of the fastest, so ranges do\n"
      "not alternate on near-ties. By default the margin of each size regime (latency below\n"
      "64 KiB, knee, bandwidth from 64 MiB) is the model's validated error there for this\n"
      "machine class (single-node NVSwitch, multi-node InfiniBand, ...: collsim validate on\n"
      "the shipped traces, scripts/accuracy.py --margins), at least 5%; --min-gain PCT sets\n"
      "one margin for every regime, --min-gain 0 tabulates the plain fastest per size, as\n"
      "--compare does unless --min-gain is given. The header's margin line says which applied;\n"
      "every emitted range carries its predicted gain over NCCL's pick, its margin and whether\n"
      "its regimes are validated for this machine class.\n"
      "\n"
      "--ranks N,N... and --nodes M,M... select for several communicator shapes in one run\n"
      "(paired value by value, a single value going with all): N/M ranks on each of the\n"
      "first M nodes, or without --nodes the first N ranks, each on a topology of just its\n"
      "GPUs. Every --emit format then holds one table per shape: json an array, which the\n"
      "tuner plugin picks from by the communicator's ranks and nodes.\n"
      "\n"
      "--emit:\n"
      "  table                  the human table (default)\n"
      "  json                   the table as JSON, read by libnccl-tuner-collsim.so:\n"
      "                         NCCL_TUNER_PLUGIN=/path/libnccl-tuner-collsim.so\n"
      "                         COLLSIM_TUNER_FILE=table.json\n"
      "  env                    NCCL_ALGO / NCCL_PROTO lines (per-collective lists)\n"
      "  nccl-tuner-csv         the CSV of NCCL's example tuner (NCCL_TUNER_CONFIG_FILE)\n"
      "  nccl-measurements-csv  the input CSV of NCCL's ext-tuner optimize_config.py\n"
      "The NCCL emitters keep only the algorithms NCCL implements (ring, tree, nvls,\n"
      "nvls_tree, collnet, pat) and say so in a comment; --nccl-only restricts the table too.\n"
      "\n"
      "Examples:\n"
      "  collsim select --topo dgx-h100x8\n"
      "  collsim select --topo dgx-h100x8 --op allreduce --emit json --output table.json\n"
      "  collsim select --topo hgx-h100x8-2n --emit nccl-tuner-csv --output nccl_tuner.conf\n"
      "  collsim select --topo hgx-h100x8-16n --op allreduce --ranks 8,16,32 --nodes 1,2,4 \\\n"
      "      --emit json --output table.json\n"
      "  collsim select --topo dgx-h100x8 --op allreduce --compare nccl:2.19\n"
      "  collsim select --topo hgx-h100x8-2n --op allreduce,allgather --plot select.svg";

/* At most this many shapes in one run: each is a whole selection. */
#define MAX_SHAPES 64

typedef struct {
    char *topo;
    char **sets; /* --set PATH=VALUE */
    char *op;
    char *dtype;
    char *model;
    char *compare;
    char *emit;
    char *output;
    char *ranks;
    char *nodes;
    gint64 min_bytes;
    gint64 max_bytes;
    gint64 factor;
    gint64 channels;
    gint64 max_events;
    gboolean nccl_only;
    gboolean any_algorithm;
    gboolean textbook;
    gboolean exact;
    gboolean whole;
    gboolean progress;
    gboolean quiet;
    int jobs;
    char *min_gain;
    char *plot;
} SelectOptions;

static void
select_options_clear(SelectOptions *o)
{
    g_free(o->topo);
    g_strfreev(o->sets);
    g_free(o->op);
    g_free(o->dtype);
    g_free(o->model);
    g_free(o->compare);
    g_free(o->emit);
    g_free(o->output);
    g_free(o->ranks);
    g_free(o->nodes);
    g_free(o->min_gain);
    g_free(o->plot);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(SelectOptions, select_options_clear)

static const char *prog = "collsim select";

/* Progress per collective: the candidates whose grid sizes are predicted, then the grid
 * intervals searched for crossovers. */
typedef struct {
    CsCliProgress line;
    int op; /* the collective counted, -1 before the first */
    char unit[64];
} SelectProgress;

static void
select_progress(CsOp op, guint done, guint total, const char *label, gpointer data)
{
    SelectProgress *p = data;
    (void)done;
    if (p->op != (int)op) {
        p->op = (int)op;
        g_snprintf(p->unit, sizeof p->unit, "%s steps", cs_op_name(op));
        cs_cli_progress_restart(&p->line, (int)total, p->unit);
    }
    cs_cli_progress_step_text(&p->line, label);
}

/* @text, a comma list of whole numbers of at least 1, appended to @out (int). */
static gboolean
parse_list(const char *flag, const char *text, GArray *out, GError **error)
{
    g_auto(GStrv) items = g_strsplit(text, ",", -1);
    const guint n = g_strv_length(items);
    if (n > MAX_SHAPES)
        return cs_cli_usage_error(error, prog, "%s %s: %u values; at most %d shapes in one run",
                                  flag, text, n, MAX_SHAPES);
    for (guint i = 0; i < n; i++) {
        const char *item = g_strstrip(items[i]);
        guint64 v = 0;
        if (item[0] == '\0')
            return cs_cli_usage_error(error, prog, "%s \"%s\": value %u is empty", flag, text,
                                      i + 1);
        if (!g_ascii_string_to_unsigned(item, 10, 0, G_MAXINT, &v, NULL))
            return cs_cli_usage_error(error, prog,
                                      "%s %s: \"%s\" is not a whole number (at most %d)", flag,
                                      text, item, G_MAXINT);
        if (v == 0)
            return cs_cli_usage_error(error, prog, "%s %s: 0 is not a count (at least 1)", flag,
                                      text);
        const int value = (int)v;
        g_array_append_val(out, value);
    }
    return TRUE;
}

/* "--ranks 8 --nodes 1", naming only the flags given (transfer full). */
static char *
shape_flags(const CsSelectShape *shape)
{
    g_autofree char *r = shape->nranks > 0 ? g_strdup_printf("--ranks %d", shape->nranks) : NULL;
    g_autofree char *n = shape->nnodes > 0 ? g_strdup_printf("--nodes %d", shape->nnodes) : NULL;
    return g_strjoin(" ", r != NULL ? r : n, r != NULL ? n : NULL, NULL);
}

/* The shapes --ranks and --nodes ask for: paired value by value, a single value going with
 * every value of the other list; one shape of the whole machine when neither is given. */
static GArray *
parse_shapes(const char *ranks, const char *nodes, GError **error)
{
    g_autoptr(GArray) r = g_array_new(FALSE, FALSE, sizeof(int));
    g_autoptr(GArray) m = g_array_new(FALSE, FALSE, sizeof(int));
    if (ranks != NULL && !parse_list("--ranks", ranks, r, error))
        return NULL;
    if (nodes != NULL && !parse_list("--nodes", nodes, m, error))
        return NULL;
    if (r->len > 1 && m->len > 1 && r->len != m->len) {
        cs_cli_usage_error(error, prog,
                           "--ranks %s --nodes %s: %u rank counts and %u node counts (give one "
                           "node count per rank count, or one for all)",
                           ranks, nodes, r->len, m->len);
        return NULL;
    }
    const guint n = MAX(1, MAX(r->len, m->len));
    GArray *shapes = g_array_sized_new(FALSE, TRUE, sizeof(CsSelectShape), n);
    for (guint i = 0; i < n; i++) {
        CsSelectShape shape = { 0, 0 };
        if (r->len > 0)
            shape.nranks = g_array_index(r, int, r->len == 1 ? 0 : i);
        if (m->len > 0)
            shape.nnodes = g_array_index(m, int, m->len == 1 ? 0 : i);
        for (guint j = 0; j < i; j++) {
            const CsSelectShape *other = &g_array_index(shapes, CsSelectShape, j);
            if (other->nranks == shape.nranks && other->nnodes == shape.nnodes) {
                g_autofree char *flags = shape_flags(&shape);
                g_autofree char *gr = ranks != NULL ? g_strdup_printf("--ranks %s", ranks) : NULL;
                g_autofree char *gm = nodes != NULL ? g_strdup_printf("--nodes %s", nodes) : NULL;
                g_autofree char *given
                    = g_strjoin(" ", gr != NULL ? gr : gm, gr != NULL ? gm : NULL, NULL);
                g_array_unref(shapes);
                cs_cli_usage_error(error, prog, "%s: the shape %s is listed twice", given, flags);
                return NULL;
            }
        }
        g_array_append_val(shapes, shape);
    }
    return shapes;
}

/**
 * cs_cli_select:
 * `collsim select --topo T [--op OP|all] [--emit ...]`: see @summary and @description.
 */
gboolean
cs_cli_select(int argc, char **argv, GError **error)
{
    g_auto(SelectOptions) o = { .jobs = CS_CLI_JOBS_UNSET };
    CsSelectOptions sopts;
    GError *cause = NULL;

    prog = argv[0];
    g_autofree char *cmd = cs_cli_command_line(argc, argv);
    cs_select_options_init(&sopts);
    o.min_bytes = sopts.min_bytes;
    o.max_bytes = sopts.max_bytes;

    const GOptionEntry entries[] = {
        { "topo", 0, 0, G_OPTION_ARG_STRING, &o.topo,
          "Topology: a shipped name or a JSON file (required)", "T" },
        CS_CLI_SET_ENTRY(&o.sets),
        { "op", 0, 0, G_OPTION_ARG_STRING, &o.op,
          "Collectives: all (default) or a comma list, e.g. allreduce,allgather", "OP" },
        { "minbytes", 'b', 0, G_OPTION_ARG_CALLBACK, CS_CLI_ARG_FUNC(cs_cli_parse_size_arg),
          "Smallest grid size (default 8)", "SIZE" },
        { "maxbytes", 'e', 0, G_OPTION_ARG_CALLBACK, CS_CLI_ARG_FUNC(cs_cli_parse_size_arg),
          "Largest grid size (default 16G)", "SIZE" },
        { "stepfactor", 'f', 0, G_OPTION_ARG_CALLBACK, CS_CLI_ARG_FUNC(cs_cli_parse_count_arg),
          "Grid factor, at least 2 (default 2)", "F" },
        { "datatype", 'd', 0, G_OPTION_ARG_STRING, &o.dtype,
          "Datatype, sets the crossover granularity (default float)", "TYPE" },
        { "ranks", 0, 0, G_OPTION_ARG_STRING, &o.ranks,
          "Communicator sizes, a comma list: one table per shape (default all the ranks)",
          "N[,N...]" },
        { "nodes", 0, 0, G_OPTION_ARG_STRING, &o.nodes,
          "The nodes each --ranks spans, a comma list (default: the nodes the first N ranks "
          "fill)",
          "M[,M...]" },
        { "channels", 0, 0, G_OPTION_ARG_CALLBACK, CS_CLI_ARG_FUNC(cs_cli_parse_count_arg),
          "Force the channel count (default: per algorithm and size, as NCCL does)", "N" },
        { "model", 0, 0, G_OPTION_ARG_STRING, &o.model,
          "reservation (default) or maxmin: collsim's engine; nccl[:VERSION]: NCCL's own "
          "cost model",
          "M" },
        { "compare", 0, 0, G_OPTION_ARG_STRING, &o.compare,
          "Compare with NCCL's choice: nccl or nccl:VERSION (2.19, 2.28); rccl or rccl:VERSION "
          "(2.21, 2.26) for RCCL's",
          "nccl[:V]" },
        { "emit", 0, 0, G_OPTION_ARG_STRING, &o.emit,
          "table (default), json, env, nccl-tuner-csv, nccl-measurements-csv", "FORMAT" },
        { "output", 0, 0, G_OPTION_ARG_FILENAME, &o.output, "Write to FILE instead of stdout",
          "FILE" },
        { "nccl-only", 0, 0, G_OPTION_ARG_NONE, &o.nccl_only,
          "Only algorithms NCCL implements, in every output", NULL },
        { "any-algorithm", 0, 0, G_OPTION_ARG_NONE, &o.any_algorithm,
          "Weigh every algorithm collsim knows (MPI classics too), not only what NCCL runs "
          "(the default on GPU ranks, as collsim run)",
          NULL },
        { "textbook", 0, 0, G_OPTION_ARG_NONE, &o.textbook,
          "Select in Hockney's textbook model (each message costs its sender alpha + n/B; no "
          "launch, protocol, chunking or overlap): which algorithm the alpha-beta formulas "
          "favour, for teaching; no tables for NCCL",
          NULL },
        { "whole", 0, 0, G_OPTION_ARG_NONE, &o.whole,
          "Replay every rank (default: where the schedule and the machine repeat under a shift "
          "of ranks, one period is replayed, which gives the same times)",
          NULL },
        { "exact", 0, 0, G_OPTION_ARG_NONE, &o.exact,
          "Simulate every size (no extrapolation of large sizes)", NULL },
        { "min-gain", 0, 0, G_OPTION_ARG_STRING, &o.min_gain,
          "Keep NCCL's own pick unless collsim's fastest gains more than PCT percent over it, "
          "and keep a range's choice while it is within PCT of the fastest (default: per size "
          "regime the model's validated error for this machine class, at least 5; 0: the "
          "fastest per size)",
          "PCT" },
        { "max-events", 0, 0, G_OPTION_ARG_CALLBACK, CS_CLI_ARG_FUNC(cs_cli_parse_count_arg),
          "Extrapolate past sizes whose simulation exceeds N events (default 40000)", "N" },
        { "plot", 0, 0, G_OPTION_ARG_FILENAME, &o.plot,
          "Also draw the choices along the size axis into FILE (.svg, .png or .pdf): a band "
          "per collective for collsim's choice and one for NCCL's pick, the crossovers marked",
          "FILE" },
        CS_CLI_JOBS_ENTRY(&o.jobs),
        { "progress", 0, 0, G_OPTION_ARG_NONE, &o.progress,
          "Print progress with an estimate of the time left on stderr, a line per step (each "
          "candidate's grid sizes, then each grid interval's crossover search; by default "
          "only on a terminal, in place, once a second has passed)",
          NULL },
        { "quiet", 0, 0, G_OPTION_ARG_NONE, &o.quiet, "Print no progress", NULL },
        G_OPTION_ENTRY_NULL,
    };
    const CsCliUnitTarget targets[] = {
        { "minbytes", &o.min_bytes }, { "maxbytes", &o.max_bytes },    { "stepfactor", &o.factor },
        { "channels", &o.channels },  { "max-events", &o.max_events }, { NULL, NULL },
    };
    if (!cs_cli_parse_units(&argc, &argv, entries, targets, "", summary, description, error))
        return FALSE;
    if (argc > 1)
        return cs_cli_usage_error(error, prog, "unexpected argument \"%s\" (options only)",
                                  argv[1]);
    if (o.topo == NULL)
        return cs_cli_usage_error(error, prog,
                                  "--topo is required (a shipped name such as dgx-h100x8, or "
                                  "a JSON file)");

    if (o.op != NULL && !cs_op_mask_from_string(o.op, &sopts.ops, &cause))
        return cs_cli_flag_error(error, prog, "--op", cause);
    if (o.dtype != NULL && !cs_dtype_from_name(o.dtype, &sopts.predict.dtype, &cause))
        return cs_cli_flag_error(error, prog, "-d", cause);
    CsSelectFormat emit = CS_SELECT_FORMAT_TABLE;
    if (o.emit != NULL && !cs_select_format_from_name(o.emit, &emit))
        return cs_cli_usage_error(error, prog,
                                  "--emit: \"%s\" is not one of table, json, env, "
                                  "nccl-tuner-csv, nccl-measurements-csv",
                                  o.emit);
    if (o.factor != 0 && o.factor < 2)
        return cs_cli_usage_error(
            error, prog, "-f %" G_GINT64_FORMAT ": the grid factor must be at least 2", o.factor);
    if (o.min_bytes < 1)
        return cs_cli_usage_error(error, prog, "-b must be at least 1 byte");
    if (o.min_bytes > o.max_bytes)
        return cs_cli_usage_error(error, prog,
                                  "-b %" G_GINT64_FORMAT " is larger than -e %" G_GINT64_FORMAT,
                                  o.min_bytes, o.max_bytes);
    sopts.min_bytes = o.min_bytes;
    sopts.max_bytes = o.max_bytes;
    if (o.factor != 0)
        sopts.step_factor = o.factor;
    sopts.predict.n_channels = (int)CLAMP(o.channels, 0, 64);
    if (o.channels > 64)
        return cs_cli_usage_error(error, prog, "--channels %" G_GINT64_FORMAT ": at most 64",
                                  o.channels);
    /* The default margin: per size regime the model's validated error for this machine
     * class, at least 5% (validated.h; docs/tuning.md): a smaller predicted gain is not one.
     * --compare shows NCCL's loss against the plain fastest. */
    sopts.validated_margin = o.compare == NULL && o.min_gain == NULL;
    if (o.min_gain != NULL) {
        char *end = NULL;
        errno = 0;
        const double v = g_ascii_strtod(o.min_gain, &end);
        if (o.min_gain[0] == '\0' || end == NULL || *end != '\0' || errno != 0 || !isfinite(v)
            || v < 0.0 || v > 1000.0)
            return cs_cli_usage_error(error, prog,
                                      "--min-gain: \"%s\" is not a percentage (0 to 1000, e.g. "
                                      "5 or 2.5)",
                                      o.min_gain);
        sopts.min_gain_pct = v;
    }
    sopts.nccl_only = o.nccl_only;
    if (o.any_algorithm && o.nccl_only)
        return cs_cli_usage_error(error, prog,
                                  "--any-algorithm weighs every algorithm; --nccl-only keeps "
                                  "NCCL's");
    if (o.any_algorithm && o.model != NULL && g_ascii_strncasecmp(o.model, "nccl", 4) == 0)
        return cs_cli_usage_error(error, prog,
                                  "--model %s selects among NCCL's cost-table entries; "
                                  "--any-algorithm needs collsim's engine",
                                  o.model);
    sopts.predict.any_algorithm = o.any_algorithm;
    sopts.exact = o.exact;
    sopts.predict.whole = o.whole;
    sopts.max_events = o.max_events;
    if (!cs_cli_resolve_jobs(prog, o.jobs, &sopts.jobs, error))
        return FALSE;
    CsCliProgressMode progress_mode;
    if (!cs_cli_progress_mode(prog, o.progress, o.quiet, &progress_mode, error))
        return FALSE;

    /* --model: an engine network model, or NCCL's cost model. */
    if (o.model != NULL && g_ascii_strncasecmp(o.model, "nccl", 4) == 0) {
        const CsNcclConstants *c = NULL;
        if (!cs_nccl_parse_spec(o.model, &c, &cause))
            return cs_cli_flag_error(error, prog, "--model", cause);
        sopts.nccl_spec = o.model;
    }
    else if (o.model != NULL) {
        if (o.model[0] == '\0')
            return cs_cli_usage_error(error, prog,
                                      "--model: \"\" is not a model (reservation, maxmin or "
                                      "nccl[:VERSION])");
        if (cs_net_model_lookup(o.model, &cause) == NULL)
            return cs_cli_flag_error(error, prog, "--model", cause);
        sopts.predict.engine.net_model = o.model;
    }
    if (o.compare != NULL) {
        const CsNcclConstants *c = NULL;
        if (!cs_nccl_parse_spec(o.compare, &c, &cause))
            return cs_cli_flag_error(error, prog, "--compare", cause);
        if (sopts.nccl_spec != NULL)
            return cs_cli_usage_error(error, prog,
                                      "--compare holds NCCL's model against collsim's engine; "
                                      "it does not combine with --model %s",
                                      o.model);
        if (emit != CS_SELECT_FORMAT_TABLE && emit != CS_SELECT_FORMAT_JSON)
            return cs_cli_usage_error(error, prog,
                                      "--compare prints a table or JSON (--emit table|json)");
    }

    /* The textbook's question has no NCCL in it: no NCCL model to select under, none to
     * compare with, and no table for NCCL to load. */
    if (o.textbook && sopts.nccl_spec != NULL)
        return cs_cli_usage_error(error, prog,
                                  "--textbook runs the engine in Hockney's model; --model %s is "
                                  "NCCL's own cost model, not the engine",
                                  o.model);
    if (o.textbook && o.compare != NULL)
        return cs_cli_usage_error(error, prog,
                                  "--textbook answers the textbook's question; --compare holds "
                                  "NCCL's model against the machine's engine");
    if (o.textbook && emit != CS_SELECT_FORMAT_TABLE && emit != CS_SELECT_FORMAT_JSON)
        return cs_cli_usage_error(error, prog,
                                  "--textbook makes no tables for NCCL (the textbook's machine "
                                  "is not the real one): --emit table or json");
    sopts.predict.engine.textbook = o.textbook;

    g_autoptr(GArray) shapes = parse_shapes(o.ranks, o.nodes, error);
    if (shapes == NULL)
        return FALSE;

    if (!cs_cli_check_output(prog, "--output", o.output, error))
        return FALSE;
    if (o.plot != NULL && !cs_cli_check_plot(prog, o.plot, error))
        return FALSE;

    g_autoptr(CsTopo) topo = cs_cli_load_topo(prog, o.topo, o.sets, error);
    if (topo == NULL)
        return FALSE;

    /* Every shape is checked against the machine before any is selected. */
    g_autoptr(GPtrArray) topos = g_ptr_array_new_with_free_func((GDestroyNotify)cs_topo_unref);
    for (guint i = 0; i < shapes->len; i++) {
        const CsSelectShape *shape = &g_array_index(shapes, CsSelectShape, i);
        CsTopo *sub = cs_select_shape_topo(topo, shape, NULL, &cause);
        if (sub == NULL) {
            g_autofree char *flags = shape_flags(shape);
            cs_cli_usage_error(error, prog, "%s: %s", flags, cause->message);
            g_clear_error(&cause);
            return FALSE;
        }
        g_ptr_array_add(topos, sub);
    }

    SelectProgress progress = { .op = -1 };
    cs_cli_progress_init(&progress.line, prog, 0, progress_mode);
    sopts.progress = select_progress;
    sopts.progress_data = &progress;
    g_autoptr(GPtrArray) sels = g_ptr_array_new_with_free_func((GDestroyNotify)cs_selection_free);
    for (guint i = 0; i < topos->len; i++) {
        const CsTopo *sub = g_ptr_array_index(topos, i);
        CsSelection *sel = NULL;
        sopts.predict.nranks = 0; /* all of the shape's ranks */
        if (o.compare != NULL)
            sel = cs_select_compare(sub, &sopts, o.compare, error);
        else
            sel = cs_select_run(sub, &sopts, error);
        progress.op = -1; /* the next shape counts again */
        cs_cli_progress_finish(&progress.line);
        if (sel == NULL) {
            /* Options the selection refuses (nothing to select under NCCL's model, sizes) are
             * usage errors; anything else keeps its domain. */
            if (error != NULL && *error != NULL && (*error)->domain == CS_SELECT_ERROR
                && (*error)->code != CS_SELECT_ERROR_UNSERVED) {
                GError *inner = g_steal_pointer(error);
                cs_cli_usage_error(error, prog, "%s", inner->message);
                g_error_free(inner);
                return FALSE;
            }
            g_prefix_error(error, "%s: ", prog);
            return FALSE;
        }
        g_ptr_array_add(sels, sel);
    }

    /* The picture first: a file that cannot be written fails before anything is printed. */
    if (o.plot != NULL && sels->len > 1) {
        cs_cli_usage_error(error, prog, "--plot draws one communicator shape; %u were asked",
                           sels->len);
        return FALSE;
    }
    if (o.plot != NULL) {
        const CsSelection *sel = g_ptr_array_index(sels, 0);
        const CsTopo *shape_topo = g_ptr_array_index(topos, 0);
        GString *ops = g_string_new(NULL);
        for (guint i = 0; i < cs_selection_n_tables(sel); i++)
            g_string_append_printf(ops, "%s%s", i > 0 ? ", " : "",
                                   cs_op_name(cs_selection_table(sel, i)->op));
        g_autofree char *op_list = g_string_free(ops, FALSE);
        g_autofree char *n_ops = g_strdup_printf("%u collectives", cs_selection_n_tables(sel));
        g_autofree char *title
            = g_strdup_printf("collsim select: %s on %s, %d ranks: the best choice per size",
                              cs_selection_n_tables(sel) > 3 ? n_ops : op_list, cs_topo_name(topo),
                              cs_topo_n_ranks(shape_topo));
        if (!cs_plot_select(sel, title, cmd, o.plot, error)) {
            g_prefix_error(error, "%s: --plot: ", prog);
            return FALSE;
        }
    }

    if (o.compare != NULL)
        emit = emit == CS_SELECT_FORMAT_JSON ? CS_SELECT_FORMAT_COMPARE_JSON
                                             : CS_SELECT_FORMAT_COMPARE_TABLE;
    g_autofree char *text = cs_selections_emit((CsSelection *const *)sels->pdata, sels->len, emit);
    return cs_cli_write_output(prog, "--output", o.output, text, -1, error);
}
