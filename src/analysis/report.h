// SPDX-License-Identifier: MIT
/* Predictions formatted for people and programs: nccl-tests tables (so a prediction and a
 * measured trace diff line by line), JSON and CSV. Reports never run simulations: they take
 * the CsPrediction values predict.c computed. */
#pragma once

#include <glib.h>

#include "predict/predict.h"
#include "base/trace.h"

G_BEGIN_DECLS

/**
 * CsReportFormat:
 * @CS_REPORT_FORMAT_TABLE: nccl-tests' table per block; a best-per-size block is followed by
 *   a comment table of the winners and their time split.
 * @CS_REPORT_FORMAT_JSON: one document with headers and every field of every prediction.
 * @CS_REPORT_FORMAT_CSV: one header line, then one line per prediction.
 */
typedef enum {
    CS_REPORT_FORMAT_TABLE,
    CS_REPORT_FORMAT_JSON,
    CS_REPORT_FORMAT_CSV,
} CsReportFormat;

/* "table", "json", "csv"; FALSE for anything else. */
gboolean cs_report_format_from_name(const char *name, CsReportFormat *format);

typedef struct _CsReport CsReport;

/* A report on @op over @nranks ranks; @dtype, @redop and @root fill the type, redop and root
 * columns the way nccl-tests prints them ("none" and -1 where the collective has none).
 * Returns: (transfer full). */
CsReport *cs_report_new(CsOp op, int nranks, CsDtype dtype, CsRedop redop, int root);
void cs_report_free(CsReport *report);

/* `# key: value` header lines, in order (an existing key is replaced in place). */
void cs_report_set_header(CsReport *report, const char *key, const char *value);
/* One comment line printed after the headers in the table, without the leading "# "
 * (nccl-tests' "nThread 1 nGpus 4 minBytes 8 ..." line). */
void cs_report_set_preamble(CsReport *report, const char *line);
/* The table's column widths (classic by default, see CsTraceLayout). */
void cs_report_set_layout(CsReport *report, CsTraceLayout layout);
/* The title of the winners table after a best-per-size block (default "Best algorithm and
 * protocol per size"). */
void cs_report_set_winners_title(CsReport *report, const char *title);

/* Starts a block of rows. @label names it ("best", "ring/LL128"); @best marks rows that are
 * the winning choice per size, listed with their algorithm after the table. */
void cs_report_begin_block(CsReport *report, const char *label, gboolean best);
/* Appends @pred to the current block (a copy; its algo pointer must outlive the report). */
void cs_report_add(CsReport *report, const CsPrediction *pred);
/* Sets @fastest (a copy) as collsim's fastest choice beside the last row of the current block,
 * which is someone else's pick (NCCL's): the winners table shows it and the pick's loss. */
void cs_report_set_alternative(CsReport *report, const CsPrediction *fastest);
/* Adds a comment under the current block ("tree/LL128: not applicable, ..."). */
void cs_report_add_note(CsReport *report, const char *note);

gsize cs_report_n_blocks(const CsReport *report);
gsize cs_report_block_n_rows(const CsReport *report, gsize block);
/* (transfer none) */
const CsPrediction *cs_report_block_row(const CsReport *report, gsize block, gsize row);

/* The block's label ("best", "ring/LL128"). (transfer none) */
const char *cs_report_block_label(const CsReport *report, gsize block);
/* Whether the block holds the winning choice per size (cs_report_begin_block()'s @best). */
gboolean cs_report_block_is_best(const CsReport *report, gsize block);
CsOp cs_report_op(const CsReport *report);
int cs_report_nranks(const CsReport *report);
/* The value of header @key, or NULL when it was never set. (transfer none) */
const char *cs_report_header(const CsReport *report, const char *key);

/* Block @block as an nccl-tests trace with the report's headers: in-place columns repeat the
 * out-of-place ones (a simulation has no in-place effect) and #wrong is N/A (nothing is
 * checked, as nccl-tests prints it with -c 0). Returns: (transfer full). */
CsTrace *cs_report_block_trace(const CsReport *report, gsize block);

/* The whole report in @format. Returns: (transfer full). */
char *cs_report_to_string(const CsReport *report, CsReportFormat format);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(CsReport, cs_report_free)

G_END_DECLS
