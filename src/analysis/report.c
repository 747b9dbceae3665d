// SPDX-License-Identifier: MIT
/* Predictions formatted as nccl-tests tables (through trace.c's writer, so they diff line by
 * line against measurements), JSON and CSV. Takes CsPrediction values; runs nothing. */
#include "analysis/report.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

#include "base/fileio.h"
#include "base/json_util.h"

typedef struct {
    char *label;
    gboolean best;
    GArray *rows;     /* CsPrediction */
    GArray *alts;     /* (nullable) CsPrediction parallel to @rows: collsim's fastest, algo
                       * NULL where none was set */
    GPtrArray *notes; /* char * */
} Block;

struct _CsReport {
    CsOp op;
    int nranks;
    CsDtype dtype;
    CsRedop redop;
    int root;
    CsTraceLayout layout;
    GPtrArray *keys;   /* char *, in order */
    GPtrArray *values; /* char *, parallel to @keys */
    char *preamble;
    char *winners_title; /* (nullable) "NCCL's pick per size" */
    GPtrArray *blocks;   /* Block * */
};

/* ---- Construction ---- */

gboolean
cs_report_format_from_name(const char *name, CsReportFormat *format)
{
    static const char *const names[] = { "table", "json", "csv" };
    for (gsize i = 0; i < G_N_ELEMENTS(names); i++) {
        if (g_ascii_strcasecmp(name, names[i]) == 0) {
            *format = (CsReportFormat)i;
            return TRUE;
        }
    }
    return FALSE;
}

static void
block_free(gpointer data)
{
    Block *b = data;
    g_free(b->label);
    g_array_unref(b->rows);
    if (b->alts != NULL)
        g_array_unref(b->alts);
    g_ptr_array_unref(b->notes);
    g_free(b);
}

/**
 * cs_report_new:
 * An empty report; add blocks with cs_report_begin_block() and rows with cs_report_add().
 * Returns: (transfer full).
 */
CsReport *
cs_report_new(CsOp op, int nranks, CsDtype dtype, CsRedop redop, int root)
{
    g_return_val_if_fail(op < CS_N_OPS && dtype < CS_N_DTYPES && redop < CS_N_REDOPS, NULL);
    CsReport *report = g_new0(CsReport, 1);
    report->op = op;
    report->nranks = nranks;
    report->dtype = dtype;
    report->redop = redop;
    report->root = root;
    report->layout = CS_TRACE_LAYOUT_CLASSIC;
    report->keys = g_ptr_array_new_with_free_func(g_free);
    report->values = g_ptr_array_new_with_free_func(g_free);
    report->blocks = g_ptr_array_new_with_free_func(block_free);
    return report;
}

void
cs_report_free(CsReport *report)
{
    if (report == NULL)
        return;
    g_ptr_array_unref(report->keys);
    g_ptr_array_unref(report->values);
    g_ptr_array_unref(report->blocks);
    g_free(report->preamble);
    g_free(report->winners_title);
    g_free(report);
}

void
cs_report_set_header(CsReport *report, const char *key, const char *value)
{
    g_return_if_fail(report != NULL && key != NULL && value != NULL);
    for (guint i = 0; i < report->keys->len; i++) {
        if (strcmp(g_ptr_array_index(report->keys, i), key) == 0) {
            g_free(report->values->pdata[i]);
            report->values->pdata[i] = g_strdup(value);
            return;
        }
    }
    g_ptr_array_add(report->keys, g_strdup(key));
    g_ptr_array_add(report->values, g_strdup(value));
}

void
cs_report_set_preamble(CsReport *report, const char *line)
{
    g_return_if_fail(report != NULL);
    g_free(report->preamble);
    report->preamble = g_strdup(line);
}

/* What the winners table after a best-per-size block is titled (default "Best algorithm and
 * protocol per size"). */
void
cs_report_set_winners_title(CsReport *report, const char *title)
{
    g_return_if_fail(report != NULL);
    g_free(report->winners_title);
    report->winners_title = g_strdup(title);
}

void
cs_report_set_layout(CsReport *report, CsTraceLayout layout)
{
    g_return_if_fail(report != NULL);
    report->layout = layout;
}

void
cs_report_begin_block(CsReport *report, const char *label, gboolean best)
{
    g_return_if_fail(report != NULL && label != NULL);
    Block *b = g_new0(Block, 1);
    b->label = g_strdup(label);
    b->best = best;
    b->rows = g_array_new(FALSE, FALSE, sizeof(CsPrediction));
    b->notes = g_ptr_array_new_with_free_func(g_free);
    g_ptr_array_add(report->blocks, b);
}

static Block *
current_block(CsReport *report)
{
    if (report->blocks->len == 0)
        cs_report_begin_block(report, "best", TRUE);
    return g_ptr_array_index(report->blocks, report->blocks->len - 1);
}

void
cs_report_add(CsReport *report, const CsPrediction *pred)
{
    g_return_if_fail(report != NULL && pred != NULL);
    CsPrediction copy = *pred;
    /* Only the totals are kept (predict.h); never hold on to a caller's array. */
    copy.result.rank_finish = NULL;
    g_array_append_val(current_block(report)->rows, copy);
}

void
cs_report_set_alternative(CsReport *report, const CsPrediction *fastest)
{
    g_return_if_fail(report != NULL && fastest != NULL);
    Block *b = current_block(report);
    g_return_if_fail(b->rows->len > 0);
    if (b->alts == NULL)
        b->alts = g_array_new(FALSE, TRUE, sizeof(CsPrediction));
    g_array_set_size(b->alts, b->rows->len);
    CsPrediction copy = *fastest;
    copy.result.rank_finish = NULL;
    g_array_index(b->alts, CsPrediction, b->rows->len - 1) = copy;
}

void
cs_report_add_note(CsReport *report, const char *note)
{
    g_return_if_fail(report != NULL && note != NULL);
    g_ptr_array_add(current_block(report)->notes, g_strdup(note));
}

gsize
cs_report_n_blocks(const CsReport *report)
{
    g_return_val_if_fail(report != NULL, 0);
    return report->blocks->len;
}

static const Block *
get_block(const CsReport *report, gsize block)
{
    g_return_val_if_fail(block < report->blocks->len, NULL);
    return g_ptr_array_index(report->blocks, block);
}

gsize
cs_report_block_n_rows(const CsReport *report, gsize block)
{
    g_return_val_if_fail(report != NULL && block < report->blocks->len, 0);
    return get_block(report, block)->rows->len;
}

/* The label given to cs_report_begin_block() ("best", "ring/LL128"). (transfer none) */
const char *
cs_report_block_label(const CsReport *report, gsize block)
{
    g_return_val_if_fail(report != NULL && block < report->blocks->len, NULL);
    return get_block(report, block)->label;
}

/* Whether block @block holds the winning choice per size. */
gboolean
cs_report_block_is_best(const CsReport *report, gsize block)
{
    g_return_val_if_fail(report != NULL && block < report->blocks->len, FALSE);
    return get_block(report, block)->best;
}

CsOp
cs_report_op(const CsReport *report)
{
    g_return_val_if_fail(report != NULL, CS_OP_ALL_REDUCE);
    return report->op;
}

int
cs_report_nranks(const CsReport *report)
{
    g_return_val_if_fail(report != NULL, 0);
    return report->nranks;
}

/* The value of header @key, NULL when it was never set. (transfer none) */
const char *
cs_report_header(const CsReport *report, const char *key)
{
    g_return_val_if_fail(report != NULL && key != NULL, NULL);
    for (guint i = 0; i < report->keys->len; i++) {
        if (strcmp(g_ptr_array_index(report->keys, i), key) == 0)
            return g_ptr_array_index(report->values, i);
    }
    return NULL;
}

const CsPrediction *
cs_report_block_row(const CsReport *report, gsize block, gsize row)
{
    g_return_val_if_fail(report != NULL && block < report->blocks->len, NULL);
    const Block *b = get_block(report, block);
    g_return_val_if_fail(row < b->rows->len, NULL);
    return &g_array_index(b->rows, CsPrediction, row);
}

/* ---- Columns as nccl-tests prints them ---- */

static const char *
redop_column(const CsReport *report)
{
    /* nccl-tests' sendrecv.cu prints the operator it was given (sum) though it reduces
     * nothing. */
    return cs_op_reduces(report->op) || report->op == CS_OP_SEND_RECV ? cs_redop_name(report->redop)
                                                                      : "none";
}

static int
root_column(const CsReport *report)
{
    return cs_op_has_root(report->op) ? report->root : -1;
}

static const char *
algo_name(const CsPrediction *p)
{
    return p->algo != NULL ? p->algo->name : "?";
}

static double
ps_to_us(CsTime t)
{
    return (double)t / 1e6;
}

/**
 * cs_report_block_trace:
 * Returns: (transfer full): block @block as a trace (see report.h).
 */
CsTrace *
cs_report_block_trace(const CsReport *report, gsize block)
{
    g_return_val_if_fail(report != NULL && block < report->blocks->len, NULL);
    const Block *b = get_block(report, block);
    CsTrace *trace = cs_trace_new(report->op, report->nranks);
    cs_trace_set_layout(trace, report->layout);
    for (guint i = 0; i < report->keys->len; i++)
        cs_trace_set_header(trace, g_ptr_array_index(report->keys, i),
                            g_ptr_array_index(report->values, i));
    for (guint i = 0; i < b->rows->len; i++) {
        const CsPrediction *p = &g_array_index(b->rows, CsPrediction, i);
        CsTraceRow row = {
            .size_bytes = p->size.size_bytes,
            .count = p->size.count,
            .root = root_column(report),
        };
        g_strlcpy(row.type, cs_dtype_name(report->dtype), sizeof row.type);
        g_strlcpy(row.redop, redop_column(report), sizeof row.redop);
        row.out_of_place = (CsTraceCell){
            .time_us = p->time_us,
            .algbw_GBps = p->algbw_GBps,
            .busbw_GBps = p->busbw_GBps,
            .wrong = -1,
        };
        row.in_place = row.out_of_place;
        cs_trace_add_row(trace, &row);
    }
    return trace;
}

/* ---- Table ---- */

/* The winners of a best-per-size block and where their time goes, as comment lines so a
 * trace reader skips them and the table above stays nccl-tests' own. */
static void
append_winners(GString *out, const CsReport *report, const Block *b)
{
    int algo_w = 9;
    for (guint i = 0; i < b->rows->len; i++)
        algo_w = MAX(algo_w, (int)strlen(algo_name(&g_array_index(b->rows, CsPrediction, i))));
    g_string_append_printf(out, "#\n# %s; the predicted time split along the critical path (us):\n",
                           report->winners_title != NULL ? report->winners_title
                                                         : "Best algorithm and protocol per size");
    const gboolean alts = b->alts != NULL;
    int alt_w = 8;
    for (guint i = 0; alts && i < b->alts->len; i++) {
        const CsPrediction *a = &g_array_index(b->alts, CsPrediction, i);
        if (a->algo != NULL)
            alt_w = MAX(alt_w, (int)(strlen(algo_name(a)) + 1 + strlen(cs_proto_name(a->proto))));
    }
    g_string_append_printf(out, "# %10s  %-*s  %-6s  %8s  %9s  %9s  %9s  %9s  %9s", "size", algo_w,
                           "algorithm", "proto", "channels", "time", "alpha", "beta", "gamma",
                           "overhead");
    if (alts)
        g_string_append_printf(out, "  %-*s  %9s  %7s", alt_w, "fastest", "time", "gain");
    g_string_append_c(out, '\n');
    gboolean any_extrapolated = FALSE;
    gboolean any_bracketed = FALSE;
    for (guint i = 0; i < b->rows->len; i++) {
        const CsPrediction *p = &g_array_index(b->rows, CsPrediction, i);
        any_extrapolated = any_extrapolated || p->extrapolated;
        any_bracketed = any_bracketed || p->bracketed;
        g_string_append_printf(out,
                               "# %10" G_GINT64_FORMAT "  %-*s  %-6s  %8d  %9.3f  %9.3f  %9.3f"
                               "  %9.3f  %9.3f",
                               p->size.size_bytes, algo_w, algo_name(p), cs_proto_name(p->proto),
                               p->n_channels, p->time_us, ps_to_us(p->result.alpha),
                               ps_to_us(p->result.beta), ps_to_us(p->result.gamma),
                               ps_to_us(p->result.overhead));
        const CsPrediction *a
            = alts && i < b->alts->len ? &g_array_index(b->alts, CsPrediction, i) : NULL;
        if (a != NULL && a->algo != NULL) {
            g_autofree char *label
                = g_strdup_printf("%s/%s", algo_name(a), cs_proto_name(a->proto));
            const gboolean same = a->algo == p->algo && a->proto == p->proto;
            /* The gain of switching: how much faster collsim's fastest is than the pick. */
            g_autofree char *gain
                = same || a->time_us <= 0.0
                      ? g_strdup("-")
                      : g_strdup_printf("%+.1f%%", 100.0 * (p->time_us / a->time_us - 1.0));
            g_string_append_printf(out, "  %-*s  %9.3f  %7s", alt_w, same ? "(same)" : label,
                                   a->time_us, gain);
        }
        else if (alts) {
            g_string_append_printf(out, "  %-*s  %9s  %7s", alt_w, "-", "-", "-");
        }
        g_string_append(out, p->extrapolated ? " *" : "");
        g_string_append(out, p->bracketed ? " ~\n" : "\n");
    }
    if (alts)
        g_string_append(out, "# fastest: collsim's fastest choice at that size, timed by the same "
                             "engine; gain: how much faster it is than the pick (--pick "
                             "fastest prints it as the table)\n");
    if (any_extrapolated)
        g_string_append(out, "# * extended on the line through three smaller simulated sizes "
                             "(the pipeline is linear there); --exact simulates every size\n");
    if (any_bracketed)
        g_string_append(out, "# ~ bracketed: one period of ranks replayed twice, every rank's "
                             "last chunks as the smallest and as the largest of those it stands "
                             "for; the two within 0.1%, the high end printed; --whole "
                             "replays every rank as it is cut\n");
}

/* Says where one period of ranks stood for all of them, and where a schedule that repeats
 * met a machine that does not (engine.c "Symmetry"). */
static void
append_symmetry(GString *out, const CsReport *report, const Block *b)
{
    int fewest = G_MAXINT;
    gboolean asymmetric = FALSE;
    for (guint i = 0; i < b->rows->len; i++) {
        const CsPrediction *p = &g_array_index(b->rows, CsPrediction, i);
        if (p->replayed_ranks > 0)
            fewest = MIN(fewest, p->replayed_ranks);
        asymmetric = asymmetric || p->asymmetric;
    }
    if (report->nranks > 0 && fewest < report->nranks)
        g_string_append_printf(out,
                               "# symmetry: rows replay %d of the %d ranks where the schedule "
                               "and the machine repeat under a shift of %d rank%s (the same "
                               "times; --whole replays every rank)\n",
                               fewest, report->nranks, fewest, fewest == 1 ? "" : "s");
    if (asymmetric)
        g_string_append(out, "# symmetry: the schedule repeats but the machine does not on its "
                             "routes (a link, a GPU or a tier unlike its images): every rank "
                             "replayed\n");
}

static char *
to_table(const CsReport *report)
{
    GString *out = g_string_new(NULL);
    gboolean has_collective = FALSE;
    gboolean has_ranks = FALSE;
    for (guint i = 0; i < report->keys->len; i++) {
        const char *k = g_ptr_array_index(report->keys, i);
        g_string_append_printf(out, "# %s: %s\n", k,
                               (const char *)g_ptr_array_index(report->values, i));
        has_collective = has_collective || strcmp(k, "collective") == 0;
        has_ranks = has_ranks || strcmp(k, "ranks") == 0;
    }
    /* The reader finds the collective and the ranks again (trace.c writes them the same). */
    if (!has_collective)
        g_string_append_printf(out, "# collective: %s\n", cs_op_nccl_tests_name(report->op));
    if (!has_ranks && report->nranks > 0)
        g_string_append_printf(out, "# ranks: %d\n", report->nranks);
    if (report->preamble != NULL)
        g_string_append_printf(out, "# %s\n", report->preamble);

    for (guint bi = 0; bi < report->blocks->len; bi++) {
        const Block *b = g_ptr_array_index(report->blocks, bi);
        g_string_append(out, "#\n");
        if (!b->best || report->blocks->len > 1)
            g_string_append_printf(out, "# block: %s\n", b->label);
        if (b->rows->len > 0) {
            g_autoptr(CsTrace) trace = cs_report_block_trace(report, bi);
            g_autofree char *table = cs_trace_table_to_string(trace);
            g_string_append(out, table);
            if (b->best)
                append_winners(out, report, b);
        }
        append_symmetry(out, report, b);
        for (guint i = 0; i < b->notes->len; i++)
            g_string_append_printf(out, "# note: %s\n",
                                   (const char *)g_ptr_array_index(b->notes, i));
    }
    return g_string_free(out, FALSE);
}

/* ---- JSON ---- */

static cJSON *
prediction_json(const CsReport *report, const CsPrediction *p)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "size", (double)p->size.size_bytes);
    cJSON_AddNumberToObject(o, "count", (double)p->size.count);
    cJSON_AddStringToObject(o, "type", cs_dtype_name(report->dtype));
    cJSON_AddStringToObject(o, "redop", redop_column(report));
    cJSON_AddNumberToObject(o, "root", root_column(report));
    cJSON_AddStringToObject(o, "algo", algo_name(p));
    cJSON_AddStringToObject(o, "proto", cs_proto_name(p->proto));
    cJSON_AddNumberToObject(o, "channels", p->n_channels);
    cJSON_AddNumberToObject(o, "time_us", p->time_us);
    cJSON_AddNumberToObject(o, "algbw_GBps", p->algbw_GBps);
    cJSON_AddNumberToObject(o, "busbw_GBps", p->busbw_GBps);
    cJSON_AddNumberToObject(o, "alpha_us", ps_to_us(p->result.alpha));
    cJSON_AddNumberToObject(o, "beta_us", ps_to_us(p->result.beta));
    cJSON_AddNumberToObject(o, "gamma_us", ps_to_us(p->result.gamma));
    cJSON_AddNumberToObject(o, "overhead_us", ps_to_us(p->result.overhead));
    cJSON_AddBoolToObject(o, "extrapolated", p->extrapolated);
    cJSON_AddBoolToObject(o, "bracketed", p->bracketed);
    if (p->bracketed)
        cJSON_AddNumberToObject(o, "bracket_low_us", p->bracket_low_us);
    if (p->replayed_ranks > 0)
        cJSON_AddNumberToObject(o, "replayed_ranks", p->replayed_ranks);
    cJSON_AddNumberToObject(o, "events", (double)p->result.n_events);
    cJSON_AddNumberToObject(o, "transfers", (double)p->result.n_transfers);
    cJSON_AddNumberToObject(o, "bytes_moved", (double)p->result.bytes_moved);
    return o;
}

/* Headers that are counts ("# gpus: 4" in the text): numbers in JSON. */
static const char *const count_headers[] = { "gpus", "nodes", "ranks" };

/* One header into @headers: a count header whose value is a whole number as a JSON number,
 * anything else as the text it is. */
static void
add_header_json(cJSON *headers, const char *key, const char *value)
{
    guint64 n = 0;
    for (gsize i = 0; i < G_N_ELEMENTS(count_headers); i++) {
        /* 2^53: every count a double holds exactly. */
        if (g_str_equal(key, count_headers[i])
            && g_ascii_string_to_unsigned(value, 10, 0, G_GUINT64_CONSTANT(1) << 53, &n, NULL)) {
            cJSON_AddNumberToObject(headers, key, (double)n);
            return;
        }
    }
    cJSON_AddStringToObject(headers, key, value);
}

static char *
to_json(const CsReport *report)
{
    g_autoptr(cJSON) root = cJSON_CreateObject();
    cs_json_add_schema(root, "collsim-run", CS_JSON_SCHEMA_VERSION);
    cJSON *headers = cJSON_AddObjectToObject(root, "headers");
    for (guint i = 0; i < report->keys->len; i++)
        add_header_json(headers, g_ptr_array_index(report->keys, i),
                        g_ptr_array_index(report->values, i));
    cJSON_AddStringToObject(root, "collective", cs_op_name(report->op));
    cJSON_AddNumberToObject(root, "ranks", report->nranks);
    cJSON_AddStringToObject(root, "type", cs_dtype_name(report->dtype));
    cJSON_AddStringToObject(root, "redop", redop_column(report));
    cJSON_AddNumberToObject(root, "root", root_column(report));
    cJSON *blocks = cJSON_AddArrayToObject(root, "blocks");
    for (guint bi = 0; bi < report->blocks->len; bi++) {
        const Block *b = g_ptr_array_index(report->blocks, bi);
        cJSON *bo = cJSON_CreateObject();
        cJSON_AddStringToObject(bo, "label", b->label);
        cJSON_AddBoolToObject(bo, "best", b->best);
        cJSON *rows = cJSON_AddArrayToObject(bo, "rows");
        for (guint i = 0; i < b->rows->len; i++)
            cJSON_AddItemToArray(rows,
                                 prediction_json(report, &g_array_index(b->rows, CsPrediction, i)));
        g_autoptr(CsTrace) trace = cs_report_block_trace(report, bi);
        cJSON_AddNumberToObject(bo, "avg_busbw_GBps", cs_trace_avg_busbw(trace));
        cJSON *notes = cJSON_AddArrayToObject(bo, "notes");
        for (guint i = 0; i < b->notes->len; i++)
            cJSON_AddItemToArray(notes, cJSON_CreateString(g_ptr_array_index(b->notes, i)));
        cJSON_AddItemToArray(blocks, bo);
    }
    char *printed = cs_json_print(root, TRUE);
    char *text = g_strconcat(printed, "\n", NULL);
    cJSON_free(printed);
    return text;
}

/* ---- CSV ---- */

static char *
to_csv(const CsReport *report)
{
    GString *out = g_string_new("block,size,count,type,redop,root,algo,proto,channels,time_us,"
                                "algbw_GBps,busbw_GBps,alpha_us,beta_us,gamma_us,overhead_us,"
                                "extrapolated,bracketed\n");
    for (guint bi = 0; bi < report->blocks->len; bi++) {
        const Block *b = g_ptr_array_index(report->blocks, bi);
        for (guint i = 0; i < b->rows->len; i++) {
            const CsPrediction *p = &g_array_index(b->rows, CsPrediction, i);
            cs_csv_append_field(out, b->label);
            /* Times to the picosecond (6 decimals of us), bandwidths to 0.1 MB/s. */
            g_string_append_printf(out, ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%s,%s,%d,",
                                   p->size.size_bytes, p->size.count, cs_dtype_name(report->dtype),
                                   redop_column(report), root_column(report));
            cs_csv_append_field(out, algo_name(p));
            g_string_append_printf(
                out, ",%s,%d,%.6f,%.4f,%.4f,%.6f,%.6f,%.6f,%.6f,%d,%d\n", cs_proto_name(p->proto),
                p->n_channels, p->time_us, p->algbw_GBps, p->busbw_GBps, ps_to_us(p->result.alpha),
                ps_to_us(p->result.beta), ps_to_us(p->result.gamma), ps_to_us(p->result.overhead),
                p->extrapolated ? 1 : 0, p->bracketed ? 1 : 0);
        }
    }
    return g_string_free(out, FALSE);
}

/**
 * cs_report_to_string:
 * Returns: (transfer full): the report in @format.
 */
char *
cs_report_to_string(const CsReport *report, CsReportFormat format)
{
    g_return_val_if_fail(report != NULL, NULL);
    switch (format) {
    case CS_REPORT_FORMAT_JSON:
        return to_json(report);
    case CS_REPORT_FORMAT_CSV:
        return to_csv(report);
    case CS_REPORT_FORMAT_TABLE:
    default:
        return to_table(report);
    }
}
