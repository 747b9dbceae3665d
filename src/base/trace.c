// SPDX-License-Identifier: MIT
/* nccl-tests / rccl-tests output as printed: a trace's headers, rows and what they say (the
 * collective, the ranks, where they ran). The reader is trace_read.c, the writer
 * trace_write.c. The column widths are nccl-tests' (src/common.cu). */
#include <math.h>
#include <string.h>

#include "base/trace-private.h"

G_DEFINE_QUARK(cs_trace_error_quark, cs_trace_error)

static void
rank_place_clear(gpointer data)
{
    g_free(((RankPlace *)data)->host);
}

/* ---- Construction and headers ---- */

CsTrace *
cs_trace_alloc(const char *origin)
{
    CsTrace *trace = g_new0(CsTrace, 1);
    trace->origin = g_strdup(origin != NULL ? origin : "(trace)");
    trace->keys = g_ptr_array_new_with_free_func(g_free);
    trace->values = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, g_free);
    trace->rows = g_array_new(FALSE, TRUE, sizeof(CsTraceRow));
    trace->layout = CS_TRACE_LAYOUT_CLASSIC;
    trace->max_rank_line = -1;
    trace->rank_places = g_array_new(FALSE, TRUE, sizeof(RankPlace));
    g_array_set_clear_func(trace->rank_places, rank_place_clear);
    return trace;
}

/**
 * cs_trace_new:
 * An empty trace for @op on @nranks ranks (0 if unknown), to be filled with
 * cs_trace_set_header() and cs_trace_add_row() and written. The writer adds the `collective`
 * and `ranks` headers after the others unless they were set, so a reader finds them again.
 * Returns: (transfer full).
 */
CsTrace *
cs_trace_new(CsOp op, int nranks)
{
    g_return_val_if_fail(op < CS_N_OPS, NULL);
    CsTrace *trace = cs_trace_alloc(NULL);
    trace->op_set = TRUE;
    trace->op = op;
    trace->nranks = MAX(nranks, 0);
    return trace;
}

void
cs_trace_free(CsTrace *trace)
{
    if (trace == NULL)
        return;
    g_hash_table_destroy(trace->values);
    g_ptr_array_unref(trace->keys);
    g_array_unref(trace->rows);
    g_free(trace->program);
    g_free(trace->library);
    g_free(trace->library_version);
    g_free(trace->device_model);
    g_array_unref(trace->rank_places);
    g_free(trace->origin);
    g_free(trace);
}

/**
 * cs_trace_set_header:
 * Sets `# @key: @value`; an existing key keeps its place and gets the new value. Newlines in
 * @value become spaces, since a header is one line.
 */
void
cs_trace_set_header(CsTrace *trace, const char *key, const char *value)
{
    g_return_if_fail(trace != NULL && key != NULL && value != NULL);
    char *v = g_strdup(value);
    for (char *c = v; *c != '\0'; c++)
        if (*c == '\n' || *c == '\r')
            *c = ' ';
    for (guint i = 0; i < trace->keys->len; i++) {
        const char *k = g_ptr_array_index(trace->keys, i);
        if (strcmp(k, key) == 0) {
            g_hash_table_replace(trace->values, (gpointer)k, v);
            return;
        }
    }
    char *k = g_strdup(key);
    g_ptr_array_add(trace->keys, k);
    g_hash_table_replace(trace->values, k, v);
}

/**
 * cs_trace_get_header:
 * The value of @key, or of the first key that is @key followed by a parenthesised qualifier
 * ("env (from the example script)"), or NULL.
 * Returns: (transfer none) (nullable).
 */
const char *
cs_trace_get_header(const CsTrace *trace, const char *key)
{
    g_return_val_if_fail(trace != NULL && key != NULL, NULL);
    const char *value = g_hash_table_lookup(trace->values, key);
    if (value != NULL)
        return value;
    gsize n = strlen(key);
    for (guint i = 0; i < trace->keys->len; i++) {
        const char *k = g_ptr_array_index(trace->keys, i);
        if (strncmp(k, key, n) == 0 && k[n] == ' ' && k[n + 1] == '(')
            return g_hash_table_lookup(trace->values, k);
    }
    return NULL;
}

/**
 * cs_trace_header_keys:
 * Returns: (transfer container): the keys in file order; the strings belong to @trace.
 */
GPtrArray *
cs_trace_header_keys(const CsTrace *trace)
{
    g_return_val_if_fail(trace != NULL, NULL);
    GPtrArray *keys = g_ptr_array_sized_new(trace->keys->len);
    for (guint i = 0; i < trace->keys->len; i++)
        g_ptr_array_add(keys, g_ptr_array_index(trace->keys, i));
    return keys;
}

void
cs_trace_add_row(CsTrace *trace, const CsTraceRow *row)
{
    g_return_if_fail(trace != NULL && row != NULL);
    g_array_append_vals(trace->rows, row, 1);
}

gsize
cs_trace_n_rows(const CsTrace *trace)
{
    g_return_val_if_fail(trace != NULL, 0);
    return trace->rows->len;
}

/* Returns: (transfer none). */
const CsTraceRow *
cs_trace_row(const CsTrace *trace, gsize index)
{
    g_return_val_if_fail(trace != NULL && index < trace->rows->len, NULL);
    return &g_array_index(trace->rows, CsTraceRow, index);
}

const char *
cs_trace_origin(const CsTrace *trace)
{
    g_return_val_if_fail(trace != NULL, NULL);
    return trace->origin;
}

CsTraceLayout
cs_trace_get_layout(const CsTrace *trace)
{
    g_return_val_if_fail(trace != NULL, CS_TRACE_LAYOUT_CLASSIC);
    return trace->layout;
}

void
cs_trace_set_layout(CsTrace *trace, CsTraceLayout layout)
{
    g_return_if_fail(trace != NULL);
    trace->layout = layout;
}

/* ---- What the trace is about ---- */

/* The collective named in a file name: nccl-tests' stems and our own spellings, longest
 * first so "reduce_scatter" is not read as "reduce". */
static gboolean
op_from_file_name(const char *origin, CsOp *op)
{
    static const struct {
        const char *needle;
        CsOp op;
    } names[] = {
        { "sendrecv", CS_OP_SEND_RECV },   { "reducescatter", CS_OP_REDUCE_SCATTER },
        { "allreduce", CS_OP_ALL_REDUCE }, { "allgather", CS_OP_ALL_GATHER },
        { "alltoall", CS_OP_ALL_TO_ALL },  { "broadcast", CS_OP_BROADCAST },
        { "bcast", CS_OP_BROADCAST },      { "reduce", CS_OP_REDUCE },
        { "scatter", CS_OP_SCATTER },      { "gather", CS_OP_GATHER },
    };
    g_autofree char *base = g_path_get_basename(origin);
    GString *norm = g_string_new(NULL);
    for (const char *c = base; *c != '\0'; c++)
        if (*c != '_' && *c != '-')
            g_string_append_c(norm, g_ascii_tolower(*c));
    g_autofree char *s = g_string_free(norm, FALSE);
    for (gsize i = 0; i < G_N_ELEMENTS(names); i++) {
        if (strstr(s, names[i].needle) != NULL) {
            *op = names[i].op;
            return TRUE;
        }
    }
    return FALSE;
}

/* A collective from a header value such as "all_reduce" or "all_reduce (NCCL_ALGO=Ring)". */
static gboolean
op_from_text(const char *text, CsOp *op)
{
    g_autofree char *word = g_strdup(text);
    g_strstrip(word);
    char *end = word;
    while (*end != '\0' && !g_ascii_isspace(*end) && *end != '(' && *end != ',')
        end++;
    *end = '\0';
    /* nccl-tests' MPI builds are called all_reduce_perf_mpi. */
    if (g_str_has_suffix(word, "_mpi"))
        word[strlen(word) - 4] = '\0';
    return word[0] != '\0' && cs_op_from_name(word, op, NULL);
}

/* ---- What the table itself says ----
 *
 * nccl-tests prints, per row, the bytes of the largest buffer (size), the elements of the
 * count argument (count), the reduction ("none" when there is none) and, since 2.x, the root
 * (-1 when there is none). Count is per rank where each rank contributes a block: all-gather,
 * reduce-scatter, all-to-all, scatter and gather print size = count x type x P; all-reduce,
 * reduce, broadcast and sendrecv print size = count x type (src/<op>.cu,
 * <Op>GetCollByteCount). sendrecv prints the reduction it was given ("sum" by default) and no
 * root: its rows look like an all-reduce's, and only busbw = algbw (factor 1, an all-reduce's
 * only on 2 ranks) tells them apart; past that the file name must say. */

/* size / (count x type) of @row: P for a per-rank collective, 1 otherwise; 0 when the row
 * cannot say (no size or count, an unknown type), -1 when it is no whole multiple. */
static gint64
row_blocks(const CsTraceRow *row)
{
    CsDtype dtype;
    if (row->size_bytes <= 0 || row->count <= 0 || !cs_dtype_from_name(row->type, &dtype, NULL))
        return 0;
    /* A count whose bytes exceed the size (or gint64) is no whole fraction of it. */
    const gint64 type_size = cs_dtype_size(dtype);
    if (row->count > row->size_bytes / type_size)
        return -1;
    const gint64 whole = row->count * type_size;
    return row->size_bytes % whole == 0 ? row->size_bytes / whole : -1;
}

/* The collectives every usable row's columns fit (a CsOp bit mask; 0 when no row says or the
 * rows fit none); @said (nullable): some row could be read. */
static guint
table_ops(const CsTrace *trace, gboolean *said)
{
    const guint rooted
        = 1u << CS_OP_BROADCAST | 1u << CS_OP_REDUCE | 1u << CS_OP_SCATTER | 1u << CS_OP_GATHER;
    guint mask = (1u << CS_N_OPS) - 1;
    gboolean any = FALSE;

    for (guint i = 0; i < trace->rows->len; i++) {
        const CsTraceRow *row = &g_array_index(trace->rows, CsTraceRow, i);
        const gint64 blocks = row_blocks(row);
        if (blocks <= 0 || row->redop[0] == '\0')
            continue;
        const gboolean per_rank = blocks > 1;
        const gboolean reduces = g_ascii_strcasecmp(row->redop, "none") != 0;
        guint fits;
        if (reduces)
            fits = per_rank ? 1u << CS_OP_REDUCE_SCATTER
                            : 1u << CS_OP_ALL_REDUCE | 1u << CS_OP_REDUCE | 1u << CS_OP_SEND_RECV;
        else
            fits = per_rank ? 1u << CS_OP_ALL_GATHER | 1u << CS_OP_ALL_TO_ALL | 1u << CS_OP_SCATTER
                                  | 1u << CS_OP_GATHER
                            : 1u << CS_OP_BROADCAST;
        if (trace->root_column)
            fits &= row->root >= 0 ? rooted : ~rooted;
        mask &= fits;
        any = TRUE;
    }
    if (said != NULL)
        *said = any;
    return any ? mask : 0;
}

static gboolean
one_op(guint mask, CsOp *op)
{
    if (mask == 0 || (mask & (mask - 1)) != 0)
        return FALSE;
    *op = (CsOp)g_bit_nth_lsf(mask, -1);
    return TRUE;
}

/* Half a unit in the last place nccl-tests prints a bandwidth with (%6.2f; never coarser than
 * 5e-5 of the value in layouts that keep the width). */
static double
printed_error(double value)
{
    return MAX(0.005, 5e-5 * value);
}

/* busbw / algbw of the row with the largest algbw, where printing rounds least, and its
 * uncertainty; FALSE when no row has algbw >= 1 GB/s and some busbw. */
static gboolean
busbw_factor(const CsTrace *trace, double *factor, double *tol)
{
    double algbw = 0.0;
    double busbw = 0.0;
    for (guint i = 0; i < trace->rows->len; i++) {
        const CsTraceRow *row = &g_array_index(trace->rows, CsTraceRow, i);
        const CsTraceCell *cells[2] = { &row->out_of_place, &row->in_place };
        for (int h = 0; h < 2; h++)
            if (cells[h]->algbw_GBps > algbw && cells[h]->busbw_GBps > 0.0) {
                algbw = cells[h]->algbw_GBps;
                busbw = cells[h]->busbw_GBps;
            }
    }
    if (algbw < 1.0)
        return FALSE;
    *factor = busbw / algbw;
    *tol = *factor * (printed_error(algbw) / algbw + printed_error(busbw) / busbw);
    return TRUE;
}

/* A test nccl-tests runs that is no collective collsim simulates, named in @text. */
static gboolean
names_p2p_test(const char *text)
{
    if (text == NULL)
        return FALSE;
    g_autofree char *lower = g_ascii_strdown(text, -1);
    return strstr(lower, "hypercube") != NULL;
}

static gboolean
find_op(const CsTrace *trace, CsOp *op, CsTraceBasis *basis)
{
    /* A header or a banner that names no collective is an error to report, not a gap to
     * fill (hypercube_perf runs print an all-gather's columns). */
    const char *collective = cs_trace_get_header(trace, "collective");
    if (collective != NULL) {
        *basis = CS_TRACE_BASIS_HEADER;
        return op_from_text(collective, op);
    }
    if (trace->program != NULL) {
        *basis = CS_TRACE_BASIS_OUTPUT;
        return op_from_text(trace->program, op);
    }
    if (trace->op_set) {
        *op = trace->op;
        *basis = CS_TRACE_BASIS_GIVEN;
        return TRUE;
    }
    *basis = CS_TRACE_BASIS_NONE;
    if (names_p2p_test(trace->origin))
        return FALSE;
    gboolean said = FALSE;
    const guint mask = table_ops(trace, &said);
    CsOp named = CS_N_OPS;
    const gboolean have_name = op_from_file_name(trace->origin, &named);
    /* An all-reduce's rows (a reduction, no root) are sendrecv's too unless busbw > algbw says
     * all-reduce: with busbw = algbw (an all-reduce on 2 ranks) the name must say. */
    const guint ar_or_sr = 1u << CS_OP_ALL_REDUCE | 1u << CS_OP_SEND_RECV;
    double factor, tol;
    if (mask == ar_or_sr) {
        if (busbw_factor(trace, &factor, &tol) && factor > 1.0 + tol) {
            *op = CS_OP_ALL_REDUCE;
            *basis = CS_TRACE_BASIS_TABLE;
            return TRUE;
        }
        if (!have_name || (mask & 1u << named) == 0)
            return FALSE;
        *op = named;
        *basis = CS_TRACE_BASIS_FILE_NAME;
        return TRUE;
    }
    if (one_op(mask, op)) {
        *basis = CS_TRACE_BASIS_TABLE;
        return TRUE;
    }
    /* The file name may settle what the columns leave open, never contradict them. */
    if (have_name && (!said || (mask & 1u << named) != 0)) {
        *op = named;
        *basis = CS_TRACE_BASIS_FILE_NAME;
        return TRUE;
    }
    return FALSE;
}

/**
 * cs_trace_op:
 * The collective, from the `collective` header or nccl-tests' "# Collective test starting:"
 * line (FALSE when the one present names none), the op given to cs_trace_new(), the table's
 * columns when they fit one collective only (see table_ops(); an all-reduce's columns with
 * busbw = algbw also need the file name to say all-reduce, as sendrecv prints the same), or the
 * file name when the columns allow it, in that order.
 */
gboolean
cs_trace_op(const CsTrace *trace, CsOp *op)
{
    g_return_val_if_fail(trace != NULL && op != NULL, FALSE);
    CsTraceBasis basis;
    return find_op(trace, op, &basis);
}

/**
 * cs_trace_set_unknown_op_error:
 * Sets @error to why the collective of @trace is unknown (cs_trace_op() said FALSE), as
 * precisely as the trace allows: a header or banner naming no collective collsim simulates, a
 * point-to-point test, columns that fit two collectives alike or none, or nothing to go on.
 */
void
cs_trace_set_unknown_op_error(const CsTrace *trace, GError **error)
{
    const char *origin = cs_trace_origin(trace);
    const char *collective = cs_trace_get_header(trace, "collective");
    if (collective != NULL) {
        g_set_error(error, CS_TRACE_ERROR, CS_TRACE_ERROR_MALFORMED,
                    "%s: '# collective: %s' is not a collective collsim knows (e.g. all_reduce)",
                    origin, collective);
        return;
    }
    const char *test = trace->program != NULL ? trace->program : origin;
    if (names_p2p_test(test)) {
        g_set_error(error, CS_TRACE_ERROR, CS_TRACE_ERROR_MALFORMED,
                    "%s: nccl-tests' hypercube is a point-to-point test, which collsim does "
                    "not simulate",
                    origin);
        return;
    }
    if (trace->program != NULL) {
        g_set_error(error, CS_TRACE_ERROR, CS_TRACE_ERROR_MALFORMED,
                    "%s: its banner names '%s', not a collective collsim knows", origin,
                    trace->program);
        return;
    }
    gboolean said = FALSE;
    const guint fits = table_ops(trace, &said);
    if (fits == (1u << CS_OP_ALL_REDUCE | 1u << CS_OP_SEND_RECV)) {
        g_set_error(error, CS_TRACE_ERROR, CS_TRACE_ERROR_MALFORMED,
                    "%s: its rows (a reduction, no root, count = size, busbw = algbw) fit "
                    "all_reduce on 2 ranks and nccl-tests' sendrecv alike; add a '# collective: "
                    "all_reduce' or '# collective: sendrecv' header",
                    origin);
        return;
    }
    if (fits != 0) {
        g_autoptr(GString) names = g_string_new(NULL);
        for (int op = 0; op < CS_N_OPS; op++)
            if (fits & 1u << op)
                g_string_append_printf(names, "%s%s", names->len > 0 ? " or " : "",
                                       cs_op_nccl_tests_name((CsOp)op));
        g_set_error(error, CS_TRACE_ERROR, CS_TRACE_ERROR_MALFORMED,
                    "%s: its columns fit %s alike; add a '# collective: NAME' header", origin,
                    names->str);
        return;
    }
    if (said) {
        g_set_error(error, CS_TRACE_ERROR, CS_TRACE_ERROR_MALFORMED,
                    "%s: its columns (redop, root, count per size) fit no collective collsim "
                    "simulates; add a '# collective: NAME' header if it is one",
                    origin);
        return;
    }
    g_set_error(error, CS_TRACE_ERROR, CS_TRACE_ERROR_MALFORMED,
                "%s: cannot tell which collective it measured (add a '# collective: "
                "all_reduce' header)",
                origin);
}

/* The leading integer of a header value ("16 (8 per node)" -> 16), 0 if none. */
static int
leading_int(const char *text)
{
    if (text == NULL)
        return 0;
    while (g_ascii_isspace(*text))
        text++;
    if (!g_ascii_isdigit(*text))
        return 0;
    gint64 v = g_ascii_strtoll(text, NULL, 10);
    return v > 0 && v <= G_MAXINT ? (int)v : 0;
}

/* The ranks busbw / algbw gives for @op: the factor is 2(P-1)/P or (P-1)/P (nccl-tests'
 * doc/PERFORMANCE.md), read on the row with the largest algbw, where printing rounds least;
 * 0 when the factor says nothing of P (broadcast, reduce) or no P fits it alone. */
static int
ranks_from_busbw(const CsTrace *trace, CsOp op)
{
    if (cs_op_busbw_factor(op, 2) == cs_op_busbw_factor(op, 3))
        return 0;
    double factor, tol;
    if (!busbw_factor(trace, &factor, &tol))
        return 0;
    /* factor = k (P - 1) / P, k = 1 or 2: P = k / (k - factor). */
    const double k = cs_op_busbw_factor(op, 2) * 2.0;
    if (factor >= k - 1e-9)
        return 0;
    const gint64 guess = (gint64)(k / (k - factor) + 0.5);
    int found = 0;
    for (gint64 p = MAX(guess - 1, 1); p <= guess + 1 && p <= 1 << 20; p++) {
        if (fabs(cs_op_busbw_factor(op, (int)p) - factor) > tol)
            continue;
        if (found != 0)
            return 0; /* two rank counts fit the printed digits */
        found = (int)p;
    }
    return found;
}

/**
 * cs_trace_check_busbw:
 * Whether busbw / algbw of @trace's rows fits @op on @nranks ranks as nccl-tests computes it
 * (the factor 2(P-1)/P, (P-1)/P or 1, within the printed digits): a '# ranks' header that
 * disagrees with the table (1 rank where busbw is not 0) would be validated as another
 * machine. TRUE when it fits or the table cannot tell (no row of 1 GB/s or more).
 */
gboolean
cs_trace_check_busbw(const CsTrace *trace, CsOp op, int nranks, GError **error)
{
    g_return_val_if_fail(trace != NULL, FALSE);
    double factor, tol;
    if (nranks < 1 || !busbw_factor(trace, &factor, &tol))
        return TRUE;
    const double want = cs_op_busbw_factor(op, nranks);
    if (fabs(want - factor) <= tol)
        return TRUE;
    g_set_error(error, CS_TRACE_ERROR, CS_TRACE_ERROR_MALFORMED,
                "%s: busbw / algbw is %.4f in its rows, but %s on %d ranks gives %.4f "
                "(nccl-tests' busbw factor): the rank count does not fit the table",
                cs_trace_origin(trace), factor, cs_op_nccl_tests_name(op), nranks, want);
    return FALSE;
}

/* Where each rank holds a block, nccl-tests prints size = count x type x P (table_ops()):
 * P when every such row says the same, 0 otherwise. */
static int
ranks_from_counts(const CsTrace *trace)
{
    gint64 ranks = 0;
    for (guint i = 0; i < trace->rows->len; i++) {
        const gint64 p = row_blocks(&g_array_index(trace->rows, CsTraceRow, i));
        if (p == 0)
            continue;
        if (p < 2 || p > 1 << 20 || (ranks != 0 && p != ranks))
            return 0;
        ranks = p;
    }
    return (int)ranks;
}

static int
find_n_ranks(const CsTrace *trace, CsTraceBasis *basis)
{
    /* A header that is there but names no count is an error to report, not a gap to fill. */
    *basis = CS_TRACE_BASIS_HEADER;
    const char *ranks = cs_trace_get_header(trace, "ranks");
    if (ranks != NULL)
        return leading_int(ranks);
    const char *gpus = cs_trace_get_header(trace, "gpus");
    if (gpus != NULL)
        return leading_int(gpus);
    int n;
    *basis = CS_TRACE_BASIS_GIVEN;
    if (trace->nranks > 0)
        return trace->nranks;
    *basis = CS_TRACE_BASIS_OUTPUT;
    if (trace->max_rank_line >= 0)
        return trace->max_rank_line + 1;
    *basis = CS_TRACE_BASIS_COUNTS;
    if ((n = ranks_from_counts(trace)) > 0)
        return n;
    CsOp op;
    *basis = CS_TRACE_BASIS_TABLE;
    if (cs_trace_op(trace, &op) && (n = ranks_from_busbw(trace, op)) > 0)
        return n;
    /* One process: its threads times the GPUs each drove. One rank is no collective: an MPI
     * run prints "nThread 1 nGpus 1" on every process. */
    *basis = CS_TRACE_BASIS_PARAMS;
    if (trace->n_threads * trace->n_gpus >= 2)
        return trace->n_threads * trace->n_gpus;
    *basis = CS_TRACE_BASIS_NONE;
    return 0;
}

/**
 * cs_trace_n_ranks:
 * The number of ranks, from the `ranks` header, else the `gpus` header, else what
 * cs_trace_new() was given, else the highest "#  Rank N" line nccl-tests printed plus one,
 * else size / count of a per-rank collective's rows (ranks_from_counts()), else busbw / algbw
 * (ranks_from_busbw()), else nThread x nGpus of nccl-tests' parameter line when 2 or more (one
 * process assumed); 0 if unknown.
 */
int
cs_trace_n_ranks(const CsTrace *trace)
{
    g_return_val_if_fail(trace != NULL, 0);
    CsTraceBasis basis;
    return find_n_ranks(trace, &basis);
}

/**
 * cs_trace_inferred:
 * What cs_trace_op() and cs_trace_n_ranks() took from the table, the file name or the
 * parameter line rather than from a header or the tool's own words, in words ("collective
 * from the columns (redop, root, count per size); ranks from busbw / algbw"), for a report.
 * Returns: (transfer full) (nullable): NULL when nothing was inferred.
 */
char *
cs_trace_inferred(const CsTrace *trace)
{
    g_return_val_if_fail(trace != NULL, NULL);
    static const char *const op_words[] = {
        [CS_TRACE_BASIS_TABLE] = "collective from the columns (redop, root, count per size)",
        [CS_TRACE_BASIS_FILE_NAME] = "collective from the file name",
    };
    static const char *const rank_words[] = {
        [CS_TRACE_BASIS_TABLE] = "ranks from busbw / algbw",
        [CS_TRACE_BASIS_COUNTS] = "ranks from size / (count x type size)",
        [CS_TRACE_BASIS_PARAMS] = "ranks from nThread x nGpus (one process assumed)",
    };
    CsOp op;
    CsTraceBasis op_basis;
    CsTraceBasis rank_basis;
    find_op(trace, &op, &op_basis);
    find_n_ranks(trace, &rank_basis);
    const char *words[2] = { NULL, NULL };
    int n = 0;
    if (op_basis < G_N_ELEMENTS(op_words) && op_words[op_basis] != NULL)
        words[n++] = op_words[op_basis];
    if (rank_basis < G_N_ELEMENTS(rank_words) && rank_words[rank_basis] != NULL)
        words[n++] = rank_words[rank_basis];
    if (n == 0)
        return NULL;
    return n == 1 ? g_strdup(words[0]) : g_strconcat(words[0], "; ", words[1], NULL);
}

/**
 * cs_trace_rank_place:
 * Where nccl-tests says @rank ran: the host and the CUDA device index of its "#  Rank N
 * Group G Pid P on HOST device D [..] NAME" line. @host is (transfer none); @device is -1
 * when the line names no device.
 * Returns: FALSE when the trace has no such line for @rank.
 */
gboolean
cs_trace_rank_place(const CsTrace *trace, int rank, const char **host, int *device)
{
    g_return_val_if_fail(trace != NULL, FALSE);
    for (guint i = 0; i < trace->rank_places->len; i++) {
        const RankPlace *p = &g_array_index(trace->rank_places, RankPlace, i);
        if (p->rank == rank) {
            if (host != NULL)
                *host = p->host;
            if (device != NULL)
                *device = p->device;
            return TRUE;
        }
    }
    return FALSE;
}

/**
 * cs_trace_device_model:
 * The GPU nccl-tests named on its first "#  Rank N ... device D [0x18] NAME" line ("NVIDIA
 * H100 80GB HBM3").
 * Returns: (transfer none) (nullable): NULL when the trace has no such line.
 */
const char *
cs_trace_device_model(const CsTrace *trace)
{
    g_return_val_if_fail(trace != NULL, NULL);
    return trace->device_model;
}

/**
 * cs_trace_gpus_per_thread:
 * The GPUs one thread drove (nccl-tests -g), as nccl-tests' "# nThread 1 nGpus 4 ..." line
 * prints it; 0 when the trace has no such line.
 */
int
cs_trace_gpus_per_thread(const CsTrace *trace)
{
    g_return_val_if_fail(trace != NULL, 0);
    return trace->n_gpus;
}

double
cs_trace_avg_busbw(const CsTrace *trace)
{
    g_return_val_if_fail(trace != NULL, 0.0);
    double sum = 0.0;
    int n = 0;
    for (guint i = 0; i < trace->rows->len; i++) {
        const CsTraceRow *row = &g_array_index(trace->rows, CsTraceRow, i);
        const CsTraceCell *cells[2] = { &row->out_of_place, &row->in_place };
        for (int h = 0; h < 2; h++) {
            if (!isnan(cells[h]->busbw_GBps)) {
                sum += cells[h]->busbw_GBps;
                n++;
            }
        }
    }
    return n > 0 ? sum / n : 0.0;
}
