// SPDX-License-Identifier: MIT
/* nccl-tests / rccl-tests output as printed: the reader (tolerant of launcher prefixes, log
 * lines, old layouts) and the writer (the same layout, so prediction and measurement diff
 * line by line). */
#pragma once

#include <glib.h>

#include "base/op.h"

/* The times a trace row may hold, in us: 1 ns to 11.6 days. */
#define CS_TRACE_MIN_TIME_US 1e-3
#define CS_TRACE_MAX_TIME_US 1e12
/* The largest trace file read: nccl-tests output with NCCL_DEBUG=INFO lines of a large job
 * is megabytes; a file past this is not a trace, and is refused before it is read. */
#define CS_TRACE_MAX_FILE_BYTES ((gsize)64 << 20)

G_BEGIN_DECLS

#define CS_TRACE_ERROR (cs_trace_error_quark())
GQuark cs_trace_error_quark(void);

typedef enum {
    CS_TRACE_ERROR_IO,
    CS_TRACE_ERROR_MALFORMED, /* a row or header that cannot be read: file:line says where */
    CS_TRACE_ERROR_EMPTY,     /* no result rows */
} CsTraceError;

/**
 * CsTraceCell:
 * One half (out-of-place or in-place) of a row. NaN marks a cell printed as N/A or absent.
 */
typedef struct {
    double time_us;    /* us */
    double algbw_GBps; /* GB/s (1e9 B/s) */
    double busbw_GBps; /* GB/s */
    gint64 wrong;      /* #wrong, -1 for N/A */
} CsTraceCell;

/**
 * CsTraceRow:
 * One result row.
 */
typedef struct {
    gint64 size_bytes; /* bytes: size column */
    gint64 count;      /* elements: count column */
    char type[16];     /* datatype as printed */
    char redop[16];    /* redop as printed ("sum", "none") */
    int root;          /* root column, -1 if absent or -1 */
    CsTraceCell out_of_place;
    CsTraceCell in_place;
    int line; /* line number in the file (1-based), 0 if made here */
} CsTraceRow;

typedef struct _CsTrace CsTrace;

/**
 * CsTraceLayout:
 * The column widths the writer uses; the reader accepts both (and older ones).
 * @CS_TRACE_LAYOUT_CLASSIC: nccl-tests before getFloatStr (and rccl-tests): bandwidths
 *   "%6.2f", time "%7.2f"/"%7.1f"/"%7.0f" by magnitude, #wrong five wide. Most published
 *   traces, the seed's H100 run among them. The default.
 * @CS_TRACE_LAYOUT_CURRENT: recent nccl-tests: every number keeps its width by dropping
 *   decimals as it grows, #wrong six wide (the a100 trace).
 */
typedef enum {
    CS_TRACE_LAYOUT_CLASSIC,
    CS_TRACE_LAYOUT_CURRENT,
} CsTraceLayout;

/* Reads a trace. Returns: (transfer full) (nullable): NULL with "file:line: what" on error. */
CsTrace *cs_trace_load_file(const char *path, GError **error);
CsTrace *cs_trace_load_data(const char *text, const char *origin, GError **error);

/* An empty trace for @op on @nranks ranks, to be filled and written. (transfer full) */
CsTrace *cs_trace_new(CsOp op, int nranks);
void cs_trace_free(CsTrace *trace);

/* `# key: value` headers, in file order. Setting an existing key replaces it. Getting a key
 * also finds a header whose key adds a qualifier in parentheses ("env (from the script)")
 * when no header has exactly that key. */
void cs_trace_set_header(CsTrace *trace, const char *key, const char *value);
const char *cs_trace_get_header(const CsTrace *trace, const char *key); /* (nullable) */
/* Keys in order (transfer container). */
GPtrArray *cs_trace_header_keys(const CsTrace *trace);

void cs_trace_add_row(CsTrace *trace, const CsTraceRow *row);
gsize cs_trace_n_rows(const CsTrace *trace);
const CsTraceRow *cs_trace_row(const CsTrace *trace, gsize index);

/* Where the collective or the rank count of a trace was found (cs_trace_inferred()). */
typedef enum {
    CS_TRACE_BASIS_NONE,      /* nowhere */
    CS_TRACE_BASIS_HEADER,    /* a `# key: value` header */
    CS_TRACE_BASIS_OUTPUT,    /* the tool's own lines ("Collective test starting", "Rank N") */
    CS_TRACE_BASIS_GIVEN,     /* cs_trace_new() */
    CS_TRACE_BASIS_TABLE,     /* the columns: redop, root, count per size; busbw / algbw */
    CS_TRACE_BASIS_COUNTS,    /* size / (count x type) of per-rank collectives */
    CS_TRACE_BASIS_FILE_NAME, /* "all_gather_perf.log" */
    CS_TRACE_BASIS_PARAMS,    /* nThread x nGpus of the parameter line, one process assumed */
} CsTraceBasis;

/* The collective and ranks, from headers, the tool's own lines, the table or the file name;
 * FALSE / 0 if unknown. */
gboolean cs_trace_op(const CsTrace *trace, CsOp *op);
int cs_trace_n_ranks(const CsTrace *trace);
/* @error: why cs_trace_op() found no collective, as precisely as the table says. */
void cs_trace_set_unknown_op_error(const CsTrace *trace, GError **error);
/* What of the two was inferred rather than read, in words; NULL if nothing. (transfer full) */
char *cs_trace_inferred(const CsTrace *trace);
/* The GPU named on nccl-tests' first "#  Rank N ... device" line, NULL if none. */
const char *cs_trace_device_model(const CsTrace *trace);
/* The host and CUDA device (-1 if not printed) of @rank's "#  Rank N ... on HOST device D"
 * line; FALSE when there is none. @host: (transfer none). */
gboolean cs_trace_rank_place(const CsTrace *trace, int rank, const char **host, int *device);
/* nGpus of nccl-tests' parameter line (-g), 0 if absent. */
int cs_trace_gpus_per_thread(const CsTrace *trace);
/* "NCCL" or "RCCL" as the trace names it, its version ("2.19.3") in @version when printed;
 * NULL when the trace does not say. */
const char *cs_trace_library(const CsTrace *trace, const char **version);
/* "2.19.3" from an NCCL_VERSION_CODE (21903; 2804 before 2.9), NULL when @code is none.
 * (transfer full) */
char *cs_nccl_version_string(gint64 code);
/* "2.29.7" -> 22907, the inverse for 2.9 and later; 0 when @version is none. */
int cs_nccl_release_code(const char *version);
const char *cs_trace_origin(const CsTrace *trace);

/* The layout read (CLASSIC when no column titles said otherwise) or set for writing. */
CsTraceLayout cs_trace_get_layout(const CsTrace *trace);
void cs_trace_set_layout(CsTrace *trace, CsTraceLayout layout);

/* nccl-tests' footer figure: the mean busbw over every out-of-place and in-place cell that
 * has one (GB/s); 0 without rows. */
double cs_trace_avg_busbw(const CsTrace *trace);

/* Writes nccl-tests' layout: headers, column titles, rows, `# Avg bus bandwidth` footer.
 * Returns: (transfer full). */
char *cs_trace_to_string(const CsTrace *trace);
/* Only the table: the three title lines, the rows and the footer, without headers.
 * Returns: (transfer full). */
char *cs_trace_table_to_string(const CsTrace *trace);
/* The pieces of cs_trace_to_string(), which is exactly head + every row + footer, for a
 * writer that prints rows as they are measured. Each returns: (transfer full). */
char *cs_trace_head_to_string(const CsTrace *trace);
char *cs_trace_row_to_string(const CsTrace *trace, gsize index);
char *cs_trace_footer_to_string(const CsTrace *trace);
gboolean cs_trace_save_file(const CsTrace *trace, const char *path, GError **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(CsTrace, cs_trace_free)

/* Whether busbw / algbw of the rows fits @op on @nranks ranks (nccl-tests' busbw factor,
 * within the printed digits); FALSE with a CS_TRACE_ERROR_MALFORMED naming the file. */
gboolean cs_trace_check_busbw(const CsTrace *trace, CsOp op, int nranks, GError **error);

G_END_DECLS
