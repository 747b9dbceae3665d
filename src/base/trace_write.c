// SPDX-License-Identifier: MIT
/* The writer of nccl-tests' layout, so that a prediction and a measurement diff line by line
 * (trace.c holds the trace). The column widths are nccl-tests' (src/common.cu). */
#include <math.h>
#include <string.h>

#include "base/fileio.h"
#include "base/trace-private.h"

/* The classic time column: two decimals below 100 us, one below 10 ms, none above. */
static void
format_time_classic(char *buf, gsize size, double us)
{
    if (isnan(us))
        g_snprintf(buf, size, "%7s", "N/A");
    else if (us >= 10000.0)
        g_snprintf(buf, size, "%7.0f", us);
    else if (us >= 100.0)
        g_snprintf(buf, size, "%7.1f", us);
    else
        g_snprintf(buf, size, "%7.2f", us);
}

/* Recent nccl-tests keep each number @width wide: two decimals while the integer part has
 * fewer than width - 2 digits, then one, then none, then exponent notation. */
static void
format_fit(char *buf, gsize size, double value, int width)
{
    if (isnan(value)) {
        g_snprintf(buf, size, "%*s", width, "N/A");
        return;
    }
    int digits = 0;
    for (double p = 1.0; value >= p && digits < 400; p *= 10.0)
        digits++;
    if (digits < width - 2)
        g_snprintf(buf, size, "%*.2f", width, value);
    else if (digits < width - 1)
        g_snprintf(buf, size, "%*.1f", width, value);
    else if (digits < width + 1)
        g_snprintf(buf, size, "%*.0f", width, value);
    else if (width >= 7)
        g_snprintf(buf, size, "%*.1e", width, value);
    else
        g_snprintf(buf, size, "%*.0e", width, value);
}

static void
append_bw_classic(GString *out, double value)
{
    if (isnan(value))
        g_string_append_printf(out, "  %6s", "N/A");
    else
        g_string_append_printf(out, "  %6.2f", value);
}

static void
append_cell(GString *out, const CsTraceCell *cell, CsTraceLayout layout)
{
    char time_s[32];
    if (layout == CS_TRACE_LAYOUT_CLASSIC) {
        format_time_classic(time_s, sizeof time_s, cell->time_us);
        g_string_append_printf(out, "  %7s", time_s);
        append_bw_classic(out, cell->algbw_GBps);
        append_bw_classic(out, cell->busbw_GBps);
        if (cell->wrong < 0)
            g_string_append_printf(out, "  %5s", "N/A");
        else
            g_string_append_printf(out, "  %5g", (double)cell->wrong);
        return;
    }
    char alg_s[32];
    char bus_s[32];
    format_fit(time_s, sizeof time_s, cell->time_us, 7);
    format_fit(alg_s, sizeof alg_s, cell->algbw_GBps, 6);
    format_fit(bus_s, sizeof bus_s, cell->busbw_GBps, 6);
    g_string_append_printf(out, "  %7s  %6s  %6s", time_s, alg_s, bus_s);
    /* nccl-tests prints N/A one column short of a count here; keep its bytes. */
    if (cell->wrong < 0)
        g_string_append(out, "    N/A");
    else
        g_string_append_printf(out, "  %6g", (double)cell->wrong);
}

/* Appends a line without the trailing blanks nccl-tests' padding leaves. */
static void
append_line(GString *out, const char *line)
{
    gsize len = strlen(line);
    while (len > 0 && line[len - 1] == ' ')
        len--;
    g_string_append_len(out, line, len);
    g_string_append_c(out, '\n');
}

/* The `# key: value` headers. */
static void
append_headers(GString *out, const CsTrace *trace)
{
    for (guint i = 0; i < trace->keys->len; i++) {
        const char *k = g_ptr_array_index(trace->keys, i);
        const char *v = g_hash_table_lookup(trace->values, k);
        g_autofree char *line = g_strdup_printf("# %s: %s", k, v);
        append_line(out, line);
    }
    if (trace->op_set && cs_trace_get_header(trace, "collective") == NULL)
        g_string_append_printf(out, "# collective: %s\n", cs_op_nccl_tests_name(trace->op));
    if (trace->nranks > 0 && cs_trace_get_header(trace, "ranks") == NULL)
        g_string_append_printf(out, "# ranks: %d\n", trace->nranks);
}

/* The three column title lines. */
static void
append_titles(GString *out, const CsTrace *trace)
{
    gboolean classic = trace->layout == CS_TRACE_LAYOUT_CLASSIC;
    g_autofree char *t1 = g_strdup_printf("# %10s  %12s  %8s  %6s  %6s           out-of-place"
                                          "                       in-place",
                                          "", "", "", "", "");
    g_autofree char *t2
        = g_strdup_printf(classic ? "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s %6s"
                                    "  %7s  %6s  %6s %6s"
                                  : "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s"
                                    "  %7s  %6s  %6s  %6s",
                          "size", "count", "type", "redop", "root", "time", "algbw", "busbw",
                          "#wrong", "time", "algbw", "busbw", "#wrong");
    g_autofree char *t3
        = g_strdup_printf("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %*s"
                          "  %7s  %6s  %6s",
                          "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)",
                          classic ? 5 : 6, "", "(us)", "(GB/s)", "(GB/s)");
    append_line(out, t1);
    append_line(out, t2);
    append_line(out, t3);
}

static void
append_row(GString *out, const CsTrace *trace, guint i)
{
    const CsTraceRow *row = &g_array_index(trace->rows, CsTraceRow, i);
    g_autoptr(GString) line = g_string_new(NULL);
    g_string_append_printf(line, "%12" G_GINT64_FORMAT "  %12" G_GINT64_FORMAT "  %8s  %6s  %6i",
                           row->size_bytes, row->count, row->type, row->redop, row->root);
    append_cell(line, &row->out_of_place, trace->layout);
    append_cell(line, &row->in_place, trace->layout);
    append_line(out, line->str);
}

static void
append_footer(GString *out, const CsTrace *trace)
{
    gint64 wrong = 0;
    for (guint i = 0; i < trace->rows->len; i++) {
        const CsTraceRow *row = &g_array_index(trace->rows, CsTraceRow, i);
        wrong += MAX(row->out_of_place.wrong, 0) + MAX(row->in_place.wrong, 0);
    }
    g_string_append_printf(out, "# %-20s : %" G_GINT64_FORMAT " %s\n", "Out of bounds values",
                           wrong, wrong > 0 ? "FAILED" : "OK");
    g_string_append_printf(out, "# %-20s : %g\n", "Avg bus bandwidth", cs_trace_avg_busbw(trace));
}

/**
 * cs_trace_to_string:
 * The trace in nccl-tests' layout: `# key: value` headers, the three title lines, one line per
 * row and the `# Out of bounds values` / `# Avg bus bandwidth` footer. Trailing blanks are
 * left out (published traces lost them; diff need not see them). It is, byte for byte,
 * cs_trace_head_to_string(), cs_trace_row_to_string() of every row, cs_trace_footer_to_string().
 * Returns: (transfer full).
 */
char *
cs_trace_to_string(const CsTrace *trace)
{
    g_return_val_if_fail(trace != NULL, NULL);
    GString *out = g_string_new(NULL);
    append_headers(out, trace);
    g_autofree char *table = cs_trace_table_to_string(trace);
    g_string_append(out, table);
    return g_string_free(out, FALSE);
}

/**
 * cs_trace_table_to_string:
 * The table part of cs_trace_to_string(): titles, rows, footer.
 * Returns: (transfer full).
 */
char *
cs_trace_table_to_string(const CsTrace *trace)
{
    g_return_val_if_fail(trace != NULL, NULL);
    GString *out = g_string_new(NULL);
    append_titles(out, trace);
    for (guint i = 0; i < trace->rows->len; i++)
        append_row(out, trace, i);
    append_footer(out, trace);
    return g_string_free(out, FALSE);
}

/**
 * cs_trace_head_to_string:
 * What cs_trace_to_string() prints before the first row: headers and titles, for a writer
 * that prints rows as they come (`collsim measure`). Returns: (transfer full).
 */
char *
cs_trace_head_to_string(const CsTrace *trace)
{
    g_return_val_if_fail(trace != NULL, NULL);
    GString *out = g_string_new(NULL);
    append_headers(out, trace);
    append_titles(out, trace);
    return g_string_free(out, FALSE);
}

/**
 * cs_trace_row_to_string:
 * Row @index as cs_trace_to_string() prints it, with its newline. Returns: (transfer full).
 */
char *
cs_trace_row_to_string(const CsTrace *trace, gsize index)
{
    g_return_val_if_fail(trace != NULL && index < trace->rows->len, NULL);
    GString *out = g_string_new(NULL);
    append_row(out, trace, (guint)index);
    return g_string_free(out, FALSE);
}

/**
 * cs_trace_footer_to_string:
 * The `# Out of bounds values` / `# Avg bus bandwidth` lines over the rows so far.
 * Returns: (transfer full).
 */
char *
cs_trace_footer_to_string(const CsTrace *trace)
{
    g_return_val_if_fail(trace != NULL, NULL);
    GString *out = g_string_new(NULL);
    append_footer(out, trace);
    return g_string_free(out, FALSE);
}

/**
 * cs_trace_save_file:
 * Writes cs_trace_to_string() to @path, replacing it whole or not at all
 * (cs_file_replace_contents()). Errors are CS_TRACE_ERROR_IO naming @path.
 */
gboolean
cs_trace_save_file(const CsTrace *trace, const char *path, GError **error)
{
    g_return_val_if_fail(trace != NULL && path != NULL, FALSE);
    g_autofree char *text = cs_trace_to_string(trace);
    g_autoptr(GError) io_error = NULL;
    if (!cs_file_replace_contents(path, text, strlen(text), &io_error)) {
        g_set_error(error, CS_TRACE_ERROR, CS_TRACE_ERROR_IO, "%s: %s", path, io_error->message);
        return FALSE;
    }
    return TRUE;
}
