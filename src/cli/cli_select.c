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
      "--min-gain PCT (default 5) keeps NCCL's own pick (its tuning model, the version the\n"
      "machine's GPUs suggest) at a size unless collsim's fastest is predicted more than PCT\n"
      "percent faster, and keeps a range's choice while it is within PCT of the fastest, so\n"
      "ranges do not alternate on near-ties; every emitted range carries its predicted gain\n"
      "over NCCL's pick. --min-gain 0 tabulates the plain fastest per size, as --compare does\n"
      "unless --min-gain is given.\n"
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
      "  collsim select --topo dgx-h100x8 --op allreduce --compare nccl:2.19\n"
      "  collsim select --topo hgx-h100x8-2n --op allreduce,allgather --plot select.svg";

typedef enum {
    EMIT_TABLE,
    EMIT_JSON,
    EMIT_ENV,
    EMIT_TUNER_CSV,
    EMIT_MEASUREMENTS_CSV,
} Emit;

static const struct {
    const char *name;
    Emit emit;
} emits[] = {
    { "table", EMIT_TABLE },
    { "json", EMIT_JSON },
    { "env", EMIT_ENV },
    { "nccl-tuner-csv", EMIT_TUNER_CSV },
    { "nccl-measurements-csv", EMIT_MEASUREMENTS_CSV },
};

typedef struct {
    char *topo;
    char *op;
    char *dtype;
    char *model;
    char *compare;
    char *emit;
    char *output;
    gint64 min_bytes;
    gint64 max_bytes;
    gint64 factor;
    gint64 ranks;
    gint64 channels;
    gint64 max_events;
    gboolean nccl_only;
    gboolean exact;
    char *min_gain;
    char *plot;
} SelectOptions;

static void
select_options_clear(SelectOptions *o)
{
    g_free(o->topo);
    g_free(o->op);
    g_free(o->dtype);
    g_free(o->model);
    g_free(o->compare);
    g_free(o->emit);
    g_free(o->output);
    g_free(o->min_gain);
    g_free(o->plot);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(SelectOptions, select_options_clear)

static const char *prog = "collsim select";

/**
 * cs_cli_select:
 * `collsim select --topo T [--op OP|all] [--emit ...]`: see @summary and @description.
 */
gboolean
cs_cli_select(int argc, char **argv, GError **error)
{
    g_auto(SelectOptions) o = { 0 };
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
        { "ranks", 0, 0, G_OPTION_ARG_CALLBACK, CS_CLI_ARG_FUNC(cs_cli_parse_count_arg),
          "Use the first N ranks of the topology (default all)", "N" },
        { "channels", 0, 0, G_OPTION_ARG_CALLBACK, CS_CLI_ARG_FUNC(cs_cli_parse_count_arg),
          "Force the channel count (default: per algorithm and size, as NCCL does)", "N" },
        { "model", 0, 0, G_OPTION_ARG_STRING, &o.model,
          "reservation (default) or maxmin: collsim's engine; nccl[:VERSION]: NCCL's own "
          "cost model",
          "M" },
        { "compare", 0, 0, G_OPTION_ARG_STRING, &o.compare,
          "Compare with NCCL's choice: nccl or nccl:VERSION (2.19, 2.28)", "nccl[:V]" },
        { "emit", 0, 0, G_OPTION_ARG_STRING, &o.emit,
          "table (default), json, env, nccl-tuner-csv, nccl-measurements-csv", "FORMAT" },
        { "output", 0, 0, G_OPTION_ARG_FILENAME, &o.output, "Write to FILE instead of stdout",
          "FILE" },
        { "nccl-only", 0, 0, G_OPTION_ARG_NONE, &o.nccl_only,
          "Only algorithms NCCL implements, in every output", NULL },
        { "exact", 0, 0, G_OPTION_ARG_NONE, &o.exact,
          "Simulate every size (no extrapolation of large sizes)", NULL },
        { "min-gain", 0, 0, G_OPTION_ARG_STRING, &o.min_gain,
          "Keep NCCL's own pick unless collsim's fastest gains more than PCT percent over it, "
          "and keep a range's choice while it is within PCT of the fastest (default 5; 0: the "
          "fastest per size)",
          "PCT" },
        { "max-events", 0, 0, G_OPTION_ARG_CALLBACK, CS_CLI_ARG_FUNC(cs_cli_parse_count_arg),
          "Extrapolate past sizes whose simulation exceeds N events (default 40000)", "N" },
        { "plot", 0, 0, G_OPTION_ARG_FILENAME, &o.plot,
          "Also draw the choices along the size axis into FILE (.svg, .png or .pdf): a band "
          "per collective for collsim's choice and one for NCCL's pick, the crossovers marked",
          "FILE" },
        G_OPTION_ENTRY_NULL,
    };
    const CsCliUnitTarget targets[] = {
        { "minbytes", &o.min_bytes },
        { "maxbytes", &o.max_bytes },
        { "stepfactor", &o.factor },
        { "ranks", &o.ranks },
        { "channels", &o.channels },
        { "max-events", &o.max_events },
        { NULL, NULL },
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
    Emit emit = EMIT_TABLE;
    if (o.emit != NULL) {
        gsize i;
        for (i = 0; i < G_N_ELEMENTS(emits); i++)
            if (g_ascii_strcasecmp(o.emit, emits[i].name) == 0)
                break;
        if (i == G_N_ELEMENTS(emits))
            return cs_cli_usage_error(error, prog,
                                      "--emit: \"%s\" is not one of table, json, env, "
                                      "nccl-tuner-csv, nccl-measurements-csv",
                                      o.emit);
        emit = emits[i].emit;
    }
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
    /* The default margin: collsim's engine is not proven closer than a few percent to a
     * measured run anywhere (README, accuracy), so a smaller predicted gain is not one. */
    sopts.min_gain_pct = o.compare != NULL ? 0.0 : 5.0; /* --compare: NCCL's loss against the
                                                         * plain fastest */
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
    sopts.exact = o.exact;
    sopts.max_events = o.max_events;

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
        if (emit != EMIT_TABLE && emit != EMIT_JSON)
            return cs_cli_usage_error(error, prog,
                                      "--compare prints a table or JSON (--emit table|json)");
    }

    if (!cs_cli_check_output(prog, "--output", o.output, error))
        return FALSE;
    if (o.plot != NULL && !cs_cli_check_plot(prog, o.plot, error))
        return FALSE;

    g_autoptr(CsTopo) topo = cs_topo_load(o.topo, error);
    if (topo == NULL)
        return FALSE;
    if (o.ranks > cs_topo_n_ranks(topo))
        return cs_cli_usage_error(error, prog, "--ranks %" G_GINT64_FORMAT ": %s has only %d ranks",
                                  o.ranks, cs_topo_name(topo), cs_topo_n_ranks(topo));
    sopts.predict.nranks = (int)o.ranks;

    g_autoptr(CsSelection) sel = NULL;
    if (o.compare != NULL)
        sel = cs_select_compare(topo, &sopts, o.compare, error);
    else
        sel = cs_select_run(topo, &sopts, error);
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

    /* The picture first: a file that cannot be written fails before anything is printed. */
    if (o.plot != NULL) {
        GString *ops = g_string_new(NULL);
        for (guint i = 0; i < cs_selection_n_tables(sel); i++)
            g_string_append_printf(ops, "%s%s", i > 0 ? ", " : "",
                                   cs_op_name(cs_selection_table(sel, i)->op));
        g_autofree char *op_list = g_string_free(ops, FALSE);
        g_autofree char *n_ops = g_strdup_printf("%u collectives", cs_selection_n_tables(sel));
        g_autofree char *title
            = g_strdup_printf("collsim select: %s on %s, %d ranks: the best choice per size",
                              cs_selection_n_tables(sel) > 3 ? n_ops : op_list, cs_topo_name(topo),
                              o.ranks > 0 ? (int)o.ranks : cs_topo_n_ranks(topo));
        if (!cs_plot_select(sel, title, cmd, o.plot, error)) {
            g_prefix_error(error, "%s: --plot: ", prog);
            return FALSE;
        }
    }

    g_autofree char *text = NULL;
    if (o.compare != NULL)
        text = emit == EMIT_JSON ? cs_selection_compare_to_json(sel)
                                 : cs_selection_compare_to_table(sel);
    else if (emit == EMIT_JSON)
        text = cs_selection_to_json(sel);
    else if (emit == EMIT_ENV)
        text = cs_selection_to_env(sel);
    else if (emit == EMIT_TUNER_CSV)
        text = cs_selection_to_nccl_tuner_csv(sel);
    else if (emit == EMIT_MEASUREMENTS_CSV)
        text = cs_selection_to_nccl_measurements_csv(sel);
    else
        text = cs_selection_to_table(sel);
    return cs_cli_write_output(prog, "--output", o.output, text, -1, error);
}
