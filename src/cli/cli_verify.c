// SPDX-License-Identifier: MIT
/* `collsim verify`: builds schedules for a selection of algorithms, collectives, rank
 * counts, sizes and roots, and proves each one with the semantic checker (check.c). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algos/registry.h"
#include "sched/check.h"
#include "cli/cli.h"
#include "topo/topo.h"
#include "base/units.h"

/* Rank counts above this would take the checker minutes; nobody verifies by hand there. */
#define MAX_RANKS 65536

typedef struct {
    const CsTopo *topo; /* nullable: algorithms then see one node */
    GPtrArray *algos;   /* const CsAlgo * */
    CsOpMask ops;
    GArray *ranks; /* int */
    GArray *sizes; /* gint64, bytes; empty: the defaults */
    int root;      /* -1: 0, P-1 and P/2 */
    CsProto proto;
    int n_channels;
    gint64 chunk_bytes;
} Selection;

typedef struct {
    int n_ok;
    int n_failed;
    int n_skipped;
    char *first_failure; /* "ring allreduce P=7 size=1000 root=0" */
} Tally;

/* ---- Parsing the selection ---- */

static gboolean
usage_error(GError **error, const char *flag, const char *value, const char *expected)
{
    g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_USAGE, "collsim verify: %s: \"%s\" %s", flag,
                value, expected);
    return FALSE;
}

static gboolean
parse_int(const char *text, int lo, int hi, int *out)
{
    char *end = NULL;
    if (text[0] == '\0' || !g_ascii_isdigit(text[0]))
        return FALSE;
    gint64 v = g_ascii_strtoll(text, &end, 10);
    if (*end != '\0' || v < lo || v > hi)
        return FALSE;
    *out = (int)v;
    return TRUE;
}

/* "1-9,16,100" */
static gboolean
parse_ranks(const char *text, GArray *ranks, GError **error)
{
    if (text[strspn(text, " \t")] == '\0')
        return usage_error(error, "--ranks", text, "is an empty list (expected e.g. 1-9,16,100)");
    g_auto(GStrv) items = g_strsplit(text, ",", -1);
    for (int i = 0; items[i] != NULL; i++) {
        char *item = g_strstrip(items[i]);
        char *dash = strchr(item, '-');
        int a;
        int b;
        gboolean ok;
        if (dash != NULL) {
            *dash = '\0';
            ok = parse_int(item, 1, MAX_RANKS, &a) && parse_int(dash + 1, 1, MAX_RANKS, &b)
                 && a <= b;
        }
        else {
            ok = parse_int(item, 1, MAX_RANKS, &a);
            b = a;
        }
        if (!ok)
            return usage_error(error, "--ranks", text,
                               "is not a list of rank counts and ranges from 1 to 65536 "
                               "(expected e.g. 1-9,16,100)");
        for (int p = a; p <= b; p++)
            g_array_append_val(ranks, p);
    }
    return TRUE;
}

/* "1000,64K,1M" */
static gboolean
parse_sizes(const char *text, GArray *sizes, GError **error)
{
    if (text[strspn(text, " \t")] == '\0')
        return usage_error(error, "--size", text, "is an empty list (expected e.g. 1000,1M)");
    g_auto(GStrv) items = g_strsplit(text, ",", -1);
    for (int i = 0; items[i] != NULL; i++) {
        gint64 bytes;
        g_autoptr(GError) local = NULL;
        if (!cs_units_parse_size(g_strstrip(items[i]), &bytes, &local)) {
            g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_USAGE, "collsim verify: --size: %s",
                        local->message);
            return FALSE;
        }
        g_array_append_val(sizes, bytes);
    }
    return TRUE;
}

static gboolean
parse_algos(const char *text, GPtrArray *algos, GError **error)
{
    if (text == NULL || g_ascii_strcasecmp(text, "all") == 0) {
        for (const CsAlgo *const *a = cs_algo_registry(); *a != NULL; a++)
            g_ptr_array_add(algos, (gpointer)*a);
        return TRUE;
    }
    if (text[strspn(text, " \t")] == '\0')
        return usage_error(error, "--algo", text, "is an empty list (expected e.g. ring,mst)");
    g_auto(GStrv) items = g_strsplit(text, ",", -1);
    for (int i = 0; items[i] != NULL; i++) {
        g_autoptr(GError) local = NULL;
        const CsAlgo *algo = cs_algo_lookup(g_strstrip(items[i]), &local);
        if (algo == NULL) {
            g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_USAGE, "collsim verify: --algo: %s",
                        local->message);
            return FALSE;
        }
        g_ptr_array_add(algos, (gpointer)algo);
    }
    return TRUE;
}

/* ---- Running ---- */

/* The default sizes: an odd 1000 bytes, 64 KiB + 4 (not divisible by most P), and
 * 1 MiB + 12, above the Simple chunk so pipelines run several chunks. */
static const gint64 default_sizes[] = { 1000, 65540, 1048588 };

static void
run_case(const Selection *sel, const CsAlgo *algo, CsOp op, int P, gint64 size, int root,
         Tally *tally)
{
    g_autofree char *name = g_strdup_printf("%s %s P=%d size=%" G_GINT64_FORMAT " root=%d",
                                            algo->name, cs_op_name(op), P, size, root);
    CsAlgoArgs args;
    cs_algo_args_init(&args, sel->topo, op, P, size);
    args.root = root;
    args.proto = sel->proto;
    args.n_channels = sel->n_channels;
    args.chunk_bytes = sel->chunk_bytes;

    const char *why = NULL;
    if (algo->supports != NULL && !algo->supports(sel->topo, op, P, &why)) {
        printf("skip %s: %s\n", name, why != NULL ? why : "not supported");
        tally->n_skipped++;
        return;
    }
    g_autoptr(GError) error = NULL;
    g_autoptr(CsSchedule) sched = cs_algo_build(algo, &args, &error);
    CsCheckReport report = { 0 };
    if (sched != NULL && cs_check_schedule(sched, &report, &error)) {
        printf("ok %s (%d rounds, %" G_GINT64_FORMAT " messages)\n", name, report.n_rounds,
               report.n_messages);
        tally->n_ok++;
        return;
    }
    printf("FAIL %s: %s\n", name, error->message);
    tally->n_failed++;
    if (tally->first_failure == NULL)
        tally->first_failure = g_steal_pointer(&name);
}

static void
run_selection(const Selection *sel, Tally *tally)
{
    for (guint a = 0; a < sel->algos->len; a++) {
        const CsAlgo *algo = g_ptr_array_index(sel->algos, a);
        for (int op = 0; op < CS_N_OPS; op++) {
            if ((algo->ops & sel->ops & CS_OP_BIT(op)) == 0)
                continue;
            for (guint i = 0; i < sel->ranks->len; i++) {
                int P = g_array_index(sel->ranks, int, i);
                int roots[3] = { 0, P - 1, P / 2 };
                int n_roots = 1;
                if (!cs_op_has_root((CsOp)op))
                    roots[0] = 0;
                else if (sel->root >= 0) {
                    if (sel->root >= P)
                        continue;
                    roots[0] = sel->root;
                }
                else
                    n_roots = P > 2 ? 3 : P;
                gboolean defaults = sel->sizes->len == 0;
                guint n_sizes = defaults ? G_N_ELEMENTS(default_sizes) : sel->sizes->len;
                for (guint s = 0; s < n_sizes; s++) {
                    gint64 size
                        = defaults ? default_sizes[s] : g_array_index(sel->sizes, gint64, s);
                    for (int k = 0; k < n_roots; k++)
                        run_case(sel, algo, (CsOp)op, P, size, roots[k], tally);
                }
            }
        }
    }
}

/* ---- Entry point ---- */

static const char summary[]
    = "Build schedules and prove them with the semantic checker: each one runs symbolically,\n"
      "every element carrying (logical index, contributing ranks), and every output element\n"
      "must hold exactly what the collective's definition says, each contribution once, with\n"
      "no deadlock (NCCL's 8 slots per connection), no unmatched message and no race between\n"
      "channels. One line per case, then a summary; any failure makes the exit status 1.";

static const char description[]
    = "Defaults: every registered algorithm, every collective it implements, P = 1..9 (or the\n"
      "rank count of --topo; without it, algorithms see all ranks as one node), sizes\n"
      "1000, 64K+4 and 1M+12 bytes, roots 0, P-1 and P/2 for rooted collectives, Simple, one\n"
      "channel, the protocol's chunk.\n"
      "LIST for --ranks: counts and ranges, e.g. 1-9,16,100. SIZE: bytes or K/M/G (powers of\n"
      "1024, like nccl-tests), comma-separated for several. With --root R, rooted collectives\n"
      "run only for P > R.\n"
      "\n"
      "Examples:\n"
      "  collsim verify\n"
      "  collsim verify --algo ring --op allreduce --ranks 7 --size 1000\n"
      "  collsim verify --algo mst,bruck --ranks 1-33 --size 1000,1M --channels 4\n"
      "  collsim verify --topo hgx-h100x8-2n --algo hierarchical,nvls";

/**
 * cs_cli_verify:
 * `collsim verify [--topo T] [--algo A] [--op OP] [--ranks LIST] [--size S] [--root R] [--proto P]
 * [--channels N] [--chunk S]`: prints "ok ..." / "FAIL ..." / "skip ..." per case and a summary.
 * Returns FALSE with CS_CLI_ERROR_FAILED naming the first failed case if any failed, and
 * CS_CLI_ERROR_USAGE for bad flags (nothing printed then).
 */
gboolean
cs_cli_verify(int argc, char **argv, GError **error)
{
    g_autofree char *topo_name = NULL;
    g_auto(GStrv) sets = NULL;
    g_autofree char *algo_text = NULL;
    g_autofree char *op_text = NULL;
    g_autofree char *ranks_text = NULL;
    g_autofree char *size_text = NULL;
    g_autofree char *proto_text = NULL;
    /* G_MININT: --root not given (every flag value, -1 included, is checked). */
    int root = G_MININT;
    int n_channels = 1;
    gint64 chunk_bytes = 0;

    const GOptionEntry entries[] = {
        { "topo", 't', 0, G_OPTION_ARG_STRING, &topo_name,
          "Topology (shipped name or file): node structure for hierarchical, NVLS, trees; "
          "P is then its rank count",
          "T" },
        CS_CLI_SET_ENTRY(&sets),
        { "algo", 'a', 0, G_OPTION_ARG_STRING, &algo_text,
          "Algorithms, comma-separated, or all (default)", "A" },
        { "op", 0, 0, G_OPTION_ARG_STRING, &op_text,
          "Collectives, comma-separated, or all (default)", "OP" },
        { "ranks", 'n', 0, G_OPTION_ARG_STRING, &ranks_text, "Rank counts (default 1-9)", "LIST" },
        { "size", 's', 0, G_OPTION_ARG_STRING, &size_text,
          "Sizes, nccl-tests' size column (default 1000,65540,1048588)", "SIZE" },
        { "root", 'r', 0, G_OPTION_ARG_INT, &root,
          "Root of rooted collectives (default 0, P-1 and P/2)", "R" },
        { "proto", 'p', 0, G_OPTION_ARG_STRING, &proto_text,
          "Protocol: LL, LL128 or Simple (default); sets the default chunk", "P" },
        { "channels", 'c', 0, G_OPTION_ARG_INT, &n_channels, "Channels, 1 to 64 (default 1)", "N" },
        { "chunk", 0, 0, G_OPTION_ARG_CALLBACK, CS_CLI_ARG_FUNC(cs_cli_parse_size_arg),
          "Pipeline chunk per channel step (default: the protocol's slot)", "SIZE" },
        G_OPTION_ENTRY_NULL,
    };
    const CsCliUnitTarget targets[] = { { "chunk", &chunk_bytes }, { NULL, NULL } };

    if (!cs_cli_parse_units(&argc, &argv, entries, targets, "", summary, description, error))
        return FALSE;
    if (argc > 1) {
        g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_USAGE,
                    "collsim verify: unexpected argument '%s'", argv[1]);
        return FALSE;
    }

    g_autoptr(CsTopo) topo = NULL;
    if (sets != NULL && topo_name == NULL)
        return cs_cli_usage_error(error, argv[0], "--set changes a topology: give --topo T");
    if (topo_name != NULL) {
        topo = cs_cli_load_topo(argv[0], topo_name, sets, error);
        if (topo == NULL)
            return FALSE;
    }
    g_autoptr(GPtrArray) algos = g_ptr_array_new();
    g_autoptr(GArray) ranks = g_array_new(FALSE, FALSE, sizeof(int));
    g_autoptr(GArray) sizes = g_array_new(FALSE, FALSE, sizeof(gint64));
    Selection sel = {
        .topo = topo,
        .algos = algos,
        .ops = CS_OPS_ALL,
        .ranks = ranks,
        .sizes = sizes,
        .root = root,
        .proto = CS_PROTO_SIMPLE,
        .n_channels = n_channels,
        .chunk_bytes = chunk_bytes,
    };
    if (!parse_algos(algo_text, algos, error))
        return FALSE;
    if (op_text != NULL) {
        g_autoptr(GError) local = NULL;
        if (!cs_op_mask_from_string(op_text, &sel.ops, &local)) {
            g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_USAGE, "collsim verify: --op: %s",
                        local->message);
            return FALSE;
        }
    }
    g_autofree char *topo_ranks
        = topo != NULL ? g_strdup_printf("%d", cs_topo_n_ranks(topo)) : NULL;
    if (!parse_ranks(ranks_text != NULL ? ranks_text
                     : topo != NULL     ? topo_ranks
                                        : "1-9",
                     ranks, error))
        return FALSE;
    for (guint i = 0; topo != NULL && i < ranks->len; i++)
        if (g_array_index(ranks, int, i) != cs_topo_n_ranks(topo)) {
            g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_USAGE,
                        "collsim verify: --ranks: topology %s has %d ranks, not %d",
                        cs_topo_name(topo), cs_topo_n_ranks(topo), g_array_index(ranks, int, i));
            return FALSE;
        }
    if (size_text != NULL && !parse_sizes(size_text, sizes, error))
        return FALSE;
    if (proto_text != NULL) {
        g_autoptr(GError) local = NULL;
        if (!cs_proto_from_name(proto_text, &sel.proto, &local)) {
            g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_USAGE, "collsim verify: --proto: %s",
                        local->message);
            return FALSE;
        }
    }
    if (root != G_MININT && root < 0) {
        g_autofree char *text = g_strdup_printf("%d", root);
        return usage_error(error, "--root", text, "is not a rank (expected 0 or more)");
    }
    sel.root = root == G_MININT ? -1 : root;
    if (n_channels < 1 || n_channels > 64) {
        g_autofree char *text = g_strdup_printf("%d", n_channels);
        return usage_error(error, "--channels", text, "is out of range (expected 1 to 64)");
    }

    Tally tally = { 0 };
    run_selection(&sel, &tally);
    int total = tally.n_ok + tally.n_failed + tally.n_skipped;
    /* Nothing ran, so nothing was printed: no "# 0 cases" summary before the error. */
    if (total == 0) {
        g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_USAGE,
                    "collsim verify: the selection is empty (no algorithm implements the "
                    "chosen collectives, or --root is not below any rank count)");
        return FALSE;
    }
    printf("# %d case%s: %d ok, %d failed, %d skipped\n", total, total == 1 ? "" : "s", tally.n_ok,
           tally.n_failed, tally.n_skipped);
    fflush(stdout);
    if (tally.n_failed > 0) {
        g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_FAILED,
                    "collsim verify: %d of %d cases failed (first: %s)", tally.n_failed, total,
                    tally.first_failure);
        g_free(tally.first_failure);
        return FALSE;
    }
    return TRUE;
}
