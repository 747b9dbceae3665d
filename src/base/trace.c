// SPDX-License-Identifier: MIT
/* nccl-tests / rccl-tests output as printed: the reader, tolerant of launcher prefixes, log
 * lines and older layouts, and the writer of the same layout, so a prediction and a
 * measurement diff line by line. The column widths are nccl-tests' (src/common.cu). */
#include "base/trace.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/fileio.h"
#include "base/units.h"

G_DEFINE_QUARK(cs_trace_error_quark, cs_trace_error)

struct _CsTrace {
    char *origin;       /* file name or caller's label, for messages */
    GPtrArray *keys;    /* char *: header keys in order */
    GHashTable *values; /* key -> value (both owned by keys / here) */
    GArray *rows;       /* CsTraceRow */
    CsTraceLayout layout;
    gboolean op_set; /* @op came from cs_trace_new() */
    CsOp op;
    int nranks;            /* from cs_trace_new(), 0 if unknown */
    char *program;         /* "all_reduce_perf" from "# Collective test starting:" */
    int max_rank_line;     /* highest N of the "#  Rank N Group ..." lines, -1 if none */
    char *library;         /* "NCCL" or "RCCL" as the output itself says, NULL if it does not */
    char *library_version; /* "2.19.3", NULL if not printed */
    char *device_model;    /* "NVIDIA H100 80GB HBM3" from the first "#  Rank N ... device" line */
    int n_threads;         /* "# nThread 1 nGpus 4 ...": threads of one process, 0 if absent */
    int n_gpus;            /* and the GPUs each thread drove (-g), 0 if absent */
    gboolean root_column;  /* some block of the table printed a root column */
    GArray *rank_places;   /* RankPlace: "#  Rank N ... on HOST device D" lines, file order */
};

/* Where nccl-tests says one rank ran. */
typedef struct {
    int rank;
    char *host;
    int device; /* CUDA device index on the host, -1 if not printed */
} RankPlace;

static void
rank_place_clear(gpointer data)
{
    g_free(((RankPlace *)data)->host);
}

/* ---- Construction and headers ---- */

static CsTrace *
trace_alloc(const char *origin)
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
    CsTrace *trace = trace_alloc(NULL);
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
        { "reducescatter", CS_OP_REDUCE_SCATTER },
        { "allreduce", CS_OP_ALL_REDUCE },
        { "allgather", CS_OP_ALL_GATHER },
        { "alltoall", CS_OP_ALL_TO_ALL },
        { "broadcast", CS_OP_BROADCAST },
        { "bcast", CS_OP_BROADCAST },
        { "reduce", CS_OP_REDUCE },
        { "scatter", CS_OP_SCATTER },
        { "gather", CS_OP_GATHER },
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
 * only on 2 ranks) tells them apart. */

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
                            : 1u << CS_OP_ALL_REDUCE | 1u << CS_OP_REDUCE;
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
    return strstr(lower, "sendrecv") != NULL || strstr(lower, "hypercube") != NULL;
}

static gboolean
find_op(const CsTrace *trace, CsOp *op, CsTraceBasis *basis)
{
    /* A header or a banner that names no collective is an error to report, not a gap to
     * fill (sendrecv_perf runs print an all-reduce's columns). */
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
    if (one_op(mask, op)) {
        /* An all-reduce's rows with busbw = algbw may be sendrecv's: the name must say. */
        double factor, tol;
        if (*op == CS_OP_ALL_REDUCE
            && !(busbw_factor(trace, &factor, &tol) && factor > 1.0 + tol)) {
            if (!have_name || named != CS_OP_ALL_REDUCE)
                return FALSE;
            *basis = CS_TRACE_BASIS_FILE_NAME;
            return TRUE;
        }
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
                    "%s: nccl-tests' sendrecv and hypercube are point-to-point tests, which "
                    "collsim does not simulate",
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
    if (fits == 1u << CS_OP_ALL_REDUCE) {
        g_set_error(error, CS_TRACE_ERROR, CS_TRACE_ERROR_MALFORMED,
                    "%s: its rows (a reduction, no root, count = size, busbw = algbw) fit "
                    "all_reduce on 2 ranks and nccl-tests' sendrecv alike; add a '# collective: "
                    "all_reduce' header",
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

/* "Rank N Group G Pid P on HOST device D [..] NAME" (tokens of the line after '#'): where rank
 * N ran. A rank printed twice keeps its first line. */
static gboolean parse_int(const char *text, gint64 min, gint64 *out);

static void
read_rank_place(CsTrace *trace, char **tokens, int n)
{
    gint64 r;
    if (n < 2 || !parse_int(tokens[1], 0, &r) || r >= G_MAXINT)
        return;
    for (guint i = 0; i < trace->rank_places->len; i++)
        if (g_array_index(trace->rank_places, RankPlace, i).rank == (int)r)
            return;
    RankPlace place = { .rank = (int)r, .host = NULL, .device = -1 };
    for (int t = 2; t + 1 < n; t++) {
        gint64 d;
        if (strcmp(tokens[t], "on") == 0 && place.host == NULL)
            place.host = g_strdup(tokens[t + 1]);
        else if (strcmp(tokens[t], "device") == 0 && parse_int(tokens[t + 1], 0, &d)
                 && d < G_MAXINT)
            place.device = (int)d;
    }
    if (place.host == NULL)
        return;
    g_array_append_val(trace->rank_places, place);
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

/* ---- Reader ---- */

/* The blank-separated words of @text (runs of spaces and tabs count once), and their count.
 * (transfer full) */
static GStrv
split_words(const char *text, int *n_words)
{
    GStrv words = g_strsplit_set(text, " \t", -1);
    /* g_strsplit_set keeps empty strings between separators: compact them. */
    int n = 0;
    for (int k = 0; words[k] != NULL; k++) {
        if (words[k][0] != '\0')
            words[n++] = words[k];
        else
            g_free(words[k]);
    }
    words[n] = NULL;
    *n_words = n;
    return words;
}

typedef enum {
    COL_SIZE,
    COL_COUNT,
    COL_TYPE,
    COL_REDOP,
    COL_ROOT,
    COL_TIME,
    COL_ALGBW,
    COL_BUSBW,
    COL_WRONG,     /* "#wrong": wrong elements, or N/A */
    COL_ERROR,     /* "error": old nccl-tests' max deviation, e.g. "2e-07" */
    COL_TIMESTAMP, /* two tokens: date and time of day */
    COL_OTHER,     /* a column we do not use ("#iters", "esttime", ...) */
} ColRole;

typedef struct {
    ColRole role;
    int half; /* 0 out-of-place, 1 in-place */
} Column;

#define MAX_COLUMNS 48

typedef struct {
    Column cols[MAX_COLUMNS];
    int n_cols;
    gboolean has_timestamp;
    gboolean has_root;
} Columns;

static const char *const role_names[] = {
    [COL_SIZE] = "size",   [COL_COUNT] = "count",         [COL_TYPE] = "type",
    [COL_REDOP] = "redop", [COL_ROOT] = "root",           [COL_TIME] = "time",
    [COL_ALGBW] = "algbw", [COL_BUSBW] = "busbw",         [COL_WRONG] = "#wrong",
    [COL_ERROR] = "error", [COL_TIMESTAMP] = "timestamp", [COL_OTHER] = "column",
};

static ColRole
role_of(const char *title)
{
    if (strcmp(title, "size") == 0)
        return COL_SIZE;
    if (strcmp(title, "count") == 0)
        return COL_COUNT;
    if (strcmp(title, "type") == 0)
        return COL_TYPE;
    if (strcmp(title, "redop") == 0)
        return COL_REDOP;
    if (strcmp(title, "root") == 0)
        return COL_ROOT;
    if (strcmp(title, "time") == 0 || strcmp(title, "cputime") == 0)
        return COL_TIME;
    if (strcmp(title, "algbw") == 0)
        return COL_ALGBW;
    if (strcmp(title, "busbw") == 0)
        return COL_BUSBW;
    if (strcmp(title, "#wrong") == 0)
        return COL_WRONG;
    if (strcmp(title, "error") == 0)
        return COL_ERROR;
    if (strcmp(title, "timestamp") == 0)
        return COL_TIMESTAMP;
    return COL_OTHER;
}

/* Reads nccl-tests' column titles ("size count type redop root time algbw busbw #wrong ...").
 * FALSE if @tokens are not such a line. The first time/algbw/busbw/#wrong belong to the
 * out-of-place half, the second to the in-place half. */
static gboolean
columns_from_titles(char **tokens, Columns *cols)
{
    int seen[COL_OTHER + 1] = { 0 };
    int n = 0;
    for (; tokens[n] != NULL; n++) {
        if (n >= MAX_COLUMNS)
            return FALSE;
        ColRole role = role_of(tokens[n]);
        cols->cols[n].role = role;
        cols->cols[n].half = seen[role] > 0 ? 1 : 0;
        seen[role]++;
    }
    cols->n_cols = n;
    cols->has_timestamp = seen[COL_TIMESTAMP] > 0;
    cols->has_root = seen[COL_ROOT] > 0;
    return seen[COL_SIZE] == 1 && seen[COL_COUNT] == 1 && seen[COL_TYPE] == 1
           && seen[COL_REDOP] == 1 && seen[COL_TIME] >= 1 && seen[COL_ALGBW] >= 1
           && seen[COL_BUSBW] >= 1;
}

/* The usual layouts, for rows met before any column titles: by their number of tokens. */
static gboolean
columns_from_count(int n_tokens, Columns *cols)
{
    static const char *const with_root[]
        = { "size",  "count",  "type", "redop", "root",  "time",   "algbw",
            "busbw", "#wrong", "time", "algbw", "busbw", "#wrong", NULL };
    static const char *const with_stamp[]
        = { "size",   "count", "type",  "redop", "root",   "time",      "algbw", "busbw",
            "#wrong", "time",  "algbw", "busbw", "#wrong", "timestamp", NULL };
    static const char *const no_root[]
        = { "size",   "count", "type",  "redop", "time",   "algbw", "busbw",
            "#wrong", "time",  "algbw", "busbw", "#wrong", NULL };
    const char *const *titles = n_tokens == 13   ? with_root
                                : n_tokens == 15 ? with_stamp
                                : n_tokens == 12 ? no_root
                                                 : NULL;
    if (titles == NULL)
        return FALSE;
    return columns_from_titles((char **)titles, cols);
}

static int
n_tokens_expected(const Columns *cols)
{
    /* The timestamp title is one word, its value two ("2025-06-18 10:00:00"). */
    return cols->n_cols + (cols->has_timestamp ? 1 : 0);
}

static gboolean
parse_int(const char *text, gint64 min, gint64 *out)
{
    return g_ascii_string_to_signed(text, 10, min, G_MAXINT64, out, NULL);
}

static gboolean
is_na(const char *text)
{
    return g_ascii_strcasecmp(text, "N/A") == 0;
}

/* A non-negative decimal number as nccl-tests prints it, or N/A (NaN). */
static gboolean
parse_number(const char *text, double *out)
{
    if (is_na(text)) {
        *out = NAN;
        return TRUE;
    }
    return cs_units_parse_decimal(text, out);
}

static gboolean set_malformed(GError **error, const char *origin, int line, const char *fmt, ...)
    G_GNUC_PRINTF(4, 5);

static gboolean
set_malformed(GError **error, const char *origin, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    g_autofree char *what = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_set_error(error, CS_TRACE_ERROR, CS_TRACE_ERROR_MALFORMED, "%s:%d: %s", origin, line, what);
    return FALSE;
}

/* Whether @tokens have a result row's shape under @cols (as many words, a known datatype in
 * the type column) whatever their first word: "NaN 2 float sum -1 ..." is a row with a bad
 * size, not a log line to pass over. */
static gboolean
row_shaped(char **tokens, int n_tokens, const Columns *cols)
{
    int expected = n_tokens_expected(cols);
    gboolean stamped = n_tokens == expected;
    if (!stamped && !(cols->has_timestamp && n_tokens == expected - 2))
        return FALSE;
    CsDtype dtype;
    for (int c = 0, t = 0; c < cols->n_cols && t < n_tokens; c++) {
        if (cols->cols[c].role == COL_TYPE)
            return cs_dtype_from_name(tokens[t], &dtype, NULL);
        t += cols->cols[c].role != COL_TIMESTAMP ? 1 : stamped ? 2 : 0;
    }
    return FALSE;
}

static gboolean
parse_row(char **tokens, int n_tokens, const Columns *cols, const char *origin, int line,
          CsTraceRow *row, GError **error)
{
    int expected = n_tokens_expected(cols);
    /* A timestamp column may be titled but left empty. */
    int without_stamp = cols->has_timestamp ? expected - 2 : expected;
    if (n_tokens != expected && n_tokens != without_stamp)
        return set_malformed(error, origin, line, "a result row needs %d columns, this one has %d",
                             expected, n_tokens);

    memset(row, 0, sizeof *row);
    row->root = -1;
    row->line = line;
    CsTraceCell *cells[2] = { &row->out_of_place, &row->in_place };
    for (int h = 0; h < 2; h++) {
        cells[h]->time_us = NAN;
        cells[h]->algbw_GBps = NAN;
        cells[h]->busbw_GBps = NAN;
        cells[h]->wrong = -1;
    }

    int t = 0;
    for (int c = 0; c < cols->n_cols && t < n_tokens; c++, t++) {
        const Column *col = &cols->cols[c];
        const char *tok = tokens[t];
        CsTraceCell *cell = cells[col->half];
        gint64 v;
        switch (col->role) {
        case COL_SIZE:
        case COL_COUNT:
            if (!parse_int(tok, 0, &v))
                return set_malformed(error, origin, line,
                                     "%s column: \"%s\" is not a non-negative integer",
                                     role_names[col->role], tok);
            if (col->role == COL_SIZE)
                row->size_bytes = v;
            else
                row->count = v;
            break;
        case COL_TYPE:
        case COL_REDOP: {
            char *dst = col->role == COL_TYPE ? row->type : row->redop;
            if (strlen(tok) >= sizeof row->type)
                return set_malformed(error, origin, line, "%s column: \"%s\" is too long",
                                     role_names[col->role], tok);
            g_strlcpy(dst, tok, sizeof row->type);
            break;
        }
        case COL_ROOT:
            if (!parse_int(tok, -1, &v) || v > G_MAXINT)
                return set_malformed(error, origin, line, "root column: \"%s\" is not a rank or -1",
                                     tok);
            row->root = (int)v;
            break;
        case COL_TIME:
        case COL_ALGBW:
        case COL_BUSBW: {
            double d;
            if (!parse_number(tok, &d))
                return set_malformed(
                    error, origin, line, "%s %s column: \"%s\" is not a non-negative number",
                    col->half == 0 ? "out-of-place" : "in-place", role_names[col->role], tok);
            /* A measured collective takes at least a nanosecond (a launch alone takes
             * microseconds) and less than days: a time outside is not a measurement, and
             * would carry through validate as a 300-digit or infinite error. */
            if (col->role == COL_TIME && !isnan(d)
                && (d < CS_TRACE_MIN_TIME_US || d > CS_TRACE_MAX_TIME_US))
                return set_malformed(error, origin, line,
                                     "%s time column: \"%s\" is not a time in us (1e-3 to "
                                     "1e12)",
                                     col->half == 0 ? "out-of-place" : "in-place", tok);
            if (col->role == COL_TIME)
                cell->time_us = d;
            else if (col->role == COL_ALGBW)
                cell->algbw_GBps = d;
            else
                cell->busbw_GBps = d;
            break;
        }
        case COL_WRONG: {
            double d;
            if (is_na(tok)) {
                cell->wrong = -1;
                break;
            }
            /* Recent nccl-tests print the count with %g: "1.2e+06" is a count too. */
            if (!parse_number(tok, &d) || d != floor(d) || d > 9e18)
                return set_malformed(error, origin, line,
                                     "%s #wrong column: \"%s\" is not a count or N/A",
                                     col->half == 0 ? "out-of-place" : "in-place", tok);
            cell->wrong = (gint64)d;
            break;
        }
        case COL_ERROR: {
            /* Old nccl-tests: the largest deviation, "*" when over the threshold. It is no
             * count of wrong elements, so #wrong stays N/A. */
            g_autofree char *num = g_strdup(tok);
            gsize len = strlen(num);
            if (len > 1 && num[len - 1] == '*')
                num[len - 1] = '\0';
            double d;
            if (!parse_number(num, &d))
                return set_malformed(error, origin, line, "%s error column: \"%s\" is not a number",
                                     col->half == 0 ? "out-of-place" : "in-place", tok);
            break;
        }
        case COL_TIMESTAMP:
            t++; /* date and time of day */
            break;
        case COL_OTHER:
            break;
        }
    }
    return TRUE;
}

/* Drops what MPI launchers put before each line: Open MPI's --tag-output "[1,0]<stdout>:"
 * and Slurm's --label "0: ". */
static const char *
strip_launcher_prefix(const char *line)
{
    const char *p = line;
    if (*p == '[') {
        const char *q = p + 1;
        while (g_ascii_isdigit(*q) || *q == ',')
            q++;
        if (q > p + 1 && *q == ']' && q[1] == '<') {
            const char *close = strstr(q, ">:");
            if (close != NULL && close - q < 12)
                p = close + 2;
        }
    }
    const char *q = p;
    while (*q == ' ')
        q++;
    const char *digits = q;
    while (g_ascii_isdigit(*q))
        q++;
    if (q > digits && q[0] == ':' && (q[1] == ' ' || q[1] == '\0'))
        p = q[1] == ' ' ? q + 2 : q + 1;
    return p;
}

/* "key: value" after the '#': a key of words without ':' that starts with a letter. */
static gboolean
split_header(const char *text, char **key, char **value)
{
    if (!g_ascii_isalpha(text[0]))
        return FALSE;
    const char *colon = strchr(text, ':');
    if (colon == NULL || colon - text > 80 || (colon[1] != ' ' && colon[1] != '\0'))
        return FALSE;
    g_autofree char *k = g_strndup(text, colon - text);
    if (strstr(k, "  ") != NULL || g_str_has_suffix(k, " "))
        return FALSE;
    *key = g_steal_pointer(&k);
    *value = g_strstrip(g_strdup(colon + 1));
    return TRUE;
}

/* nccl-tests' own comment lines that look like headers but are not ours. */
static gboolean
is_nccl_tests_comment(const char *text)
{
    static const char *const prefixes[] = {
        "nThread ",           "Collective test",  "Out of bounds", "Avg bus bandwidth",
        "nccl-tests version", "Using devices",    "Rank ",         "GPU memory usage",
        "Writing JSON",       "Blocking Enabled", "Parallel Init",
    };
    for (gsize i = 0; i < G_N_ELEMENTS(prefixes); i++)
        if (g_str_has_prefix(text, prefixes[i]))
            return TRUE;
    return FALSE;
}

static gboolean
looks_like_integer(const char *tok)
{
    if (*tok == '-')
        tok++;
    if (!g_ascii_isdigit(*tok))
        return FALSE;
    while (g_ascii_isdigit(*tok))
        tok++;
    return *tok == '\0';
}

/**
 * cs_nccl_version_string:
 * NCCL_VERSION_CODE as ncclGetVersion() and nccl-tests' "nccl-library=" print it: major *
 * 10000 + minor * 100 + patch since 2.9, major * 1000 + minor * 100 + patch before.
 * Returns: (transfer full) (nullable): "2.19.3", or NULL for a code that is no version.
 */
char *
cs_nccl_version_string(gint64 code)
{
    if (code >= 20900)
        return g_strdup_printf("%d.%d.%d", (int)(code / 10000), (int)(code / 100 % 100),
                               (int)(code % 100));
    if (code >= 2000 && code < 10000)
        return g_strdup_printf("%d.%d.%d", (int)(code / 1000), (int)(code / 100 % 10),
                               (int)(code % 100));
    return NULL;
}

/* The first library a trace names wins; a later line may add the version it left out. */
static void
note_library(CsTrace *trace, const char *library, const char *version)
{
    if (trace->library == NULL)
        trace->library = g_strdup(library);
    if (strcmp(trace->library, library) == 0 && trace->library_version == NULL && version != NULL)
        trace->library_version = g_strdup(version);
}

/* What the tool printed about the library: nccl-tests' "nccl-tests version 2.19.4
 * nccl-headers=21903 nccl-library=21903" (NCCL_VERSION_CODE), rccl-tests' "rccl-tests: Version
 * ...", and NCCL_DEBUG=INFO's "NCCL version 2.26.2+cuda12.8" (RCCL's says "+hip"). */
static void
read_library_line(CsTrace *trace, const char *text)
{
    if (g_str_has_prefix(text, "rccl-tests")) {
        note_library(trace, "RCCL", NULL);
        return;
    }
    const char *code = strstr(text, "nccl-library=");
    if (g_str_has_prefix(text, "nccl-tests version") && code != NULL) {
        g_autofree char *version
            = cs_nccl_version_string(g_ascii_strtoll(code + strlen("nccl-library="), NULL, 10));
        note_library(trace, "NCCL", version);
        return;
    }
    /* G_REGEX_RAW: a trace line is bytes, not necessarily UTF-8, and a GRegex without it reads
     * invalid UTF-8 out of bounds (a fuzzer found "\xdfNCCL 00.0025.0025" crashing the JIT). */
    static GRegex *log_re = NULL;
    if (g_once_init_enter(&log_re)) {
        GRegex *re = g_regex_new("\\b(NCCL|RCCL) version *:? *([0-9]+\\.[0-9]+\\.[0-9]+)([^ ]*)",
                                 G_REGEX_OPTIMIZE | G_REGEX_RAW, 0, NULL);
        g_once_init_leave(&log_re, re);
    }
    g_autoptr(GMatchInfo) match = NULL;
    if (g_regex_match(log_re, text, 0, &match)) {
        g_autofree char *name = g_match_info_fetch(match, 1);
        g_autofree char *version = g_match_info_fetch(match, 2);
        g_autofree char *suffix = g_match_info_fetch(match, 3);
        const gboolean hip = strstr(suffix, "hip") != NULL || strcmp(name, "RCCL") == 0;
        note_library(trace, hip ? "RCCL" : "NCCL", version);
    }
}

/* Failing the tool's own word, the `software` header in words ("NCCL 2.26.2+cuda12.8",
 * "rccl-tests develop:a7809b3"). */
static void
read_library_header(CsTrace *trace)
{
    const char *software = cs_trace_get_header(trace, "software");
    if (trace->library != NULL || software == NULL)
        return;
    g_autofree char *lower = g_ascii_strdown(software, -1);
    if (strstr(lower, "rccl") != NULL) {
        note_library(trace, "RCCL", NULL);
        return;
    }
    g_autoptr(GRegex) re
        = g_regex_new("\\bNCCL ([0-9]+\\.[0-9]+(\\.[0-9]+)?)", G_REGEX_RAW, 0, NULL);
    g_autoptr(GMatchInfo) match = NULL;
    if (g_regex_match(re, software, 0, &match)) {
        g_autofree char *version = g_match_info_fetch(match, 1);
        note_library(trace, "NCCL", version);
    }
    else if (strstr(software, "NCCL") != NULL)
        note_library(trace, "NCCL", NULL);
}

/**
 * cs_trace_library:
 * The collective library that produced the trace, as its output or `software` header names
 * it: "NCCL" or "RCCL", with its version ("2.19.3") in @version (nullable; NULL when not
 * printed).
 * Returns: (transfer none) (nullable): NULL when the trace does not say.
 */
const char *
cs_trace_library(const CsTrace *trace, const char **version)
{
    g_return_val_if_fail(trace != NULL, NULL);
    if (version != NULL)
        *version = trace->library_version;
    return trace->library;
}

/**
 * cs_trace_load_data:
 * Reads nccl-tests output from @text. Lines that are neither headers, nccl-tests comments nor
 * result rows (NCCL INFO logs, launcher chatter) are skipped; a line that starts like a result
 * row (an integer) must be one. @origin names the source in messages.
 * Returns: (transfer full) (nullable): NULL with CS_TRACE_ERROR "origin:line: what" on error.
 */
CsTrace *
cs_trace_load_data(const char *text, const char *origin, GError **error)
{
    g_return_val_if_fail(text != NULL, NULL);
    g_autoptr(CsTrace) trace = trace_alloc(origin);
    origin = trace->origin;
    Columns cols = { .n_cols = 0 };
    gboolean have_cols = FALSE;
    gboolean in_headers = TRUE; /* `# key: value` headers only lead the file */

    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    for (int i = 0; lines[i] != NULL; i++) {
        int lineno = i + 1;
        char *raw = lines[i];
        gsize len = strlen(raw);
        while (len > 0 && (raw[len - 1] == '\r' || raw[len - 1] == ' ' || raw[len - 1] == '\t'))
            raw[--len] = '\0';
        const char *line = strip_launcher_prefix(raw);
        while (*line == ' ' || *line == '\t')
            line++;
        if (*line == '\0')
            continue;

        if (*line == '#') {
            const char *body = line + 1;
            while (*body == ' ' || *body == '\t')
                body++;
            int n;
            g_auto(GStrv) tokens = split_words(body, &n);

            if (n > 0 && strcmp(tokens[0], "size") == 0) {
                Columns c;
                if (columns_from_titles(tokens, &c)) {
                    cols = c;
                    have_cols = TRUE;
                    in_headers = FALSE;
                    /* Recent nccl-tests leave two spaces before #wrong, older ones one. */
                    trace->layout = strstr(body, "busbw  #wrong") != NULL ? CS_TRACE_LAYOUT_CURRENT
                                                                          : CS_TRACE_LAYOUT_CLASSIC;
                    continue;
                }
            }
            if (g_str_has_prefix(body, "Collective test starting:")) {
                g_free(trace->program);
                trace->program = g_strstrip(g_strdup(body + strlen("Collective test starting:")));
                in_headers = FALSE;
                continue;
            }
            if (g_str_has_prefix(body, "Rank ") && n >= 2) {
                gint64 r;
                if (parse_int(tokens[1], 0, &r) && r < G_MAXINT)
                    trace->max_rank_line = MAX(trace->max_rank_line, (int)r);
                /* "... device  0 [0x18] NVIDIA H100 80GB HBM3": the GPU's name ends the line. */
                const char *dev = strstr(body, " device ");
                const char *name = dev != NULL ? strstr(dev, "] ") : NULL;
                if (trace->device_model == NULL && name != NULL && name[2] != '\0')
                    trace->device_model = g_strstrip(g_strdup(name + 2));
                read_rank_place(trace, tokens, n);
                in_headers = FALSE;
                continue;
            }
            if (g_str_has_prefix(body, "nThread ") && n >= 4 && strcmp(tokens[2], "nGpus") == 0) {
                gint64 t, g;
                if (parse_int(tokens[1], 1, &t) && parse_int(tokens[3], 1, &g) && t < 1 << 20
                    && g < (1 << 20) / t) {
                    trace->n_threads = (int)t;
                    trace->n_gpus = (int)g;
                }
            }
            if (is_nccl_tests_comment(body) || g_str_has_prefix(body, "rccl-tests")) {
                read_library_line(trace, body);
                in_headers = FALSE;
                continue;
            }
            char *key = NULL;
            char *value = NULL;
            if (in_headers && split_header(body, &key, &value)) {
                cs_trace_set_header(trace, key, value);
                g_free(key);
                g_free(value);
                continue;
            }
            /* A lone "#" separates nccl-tests' blocks; anything else ends the headers. A
             * comment that is no header may still be the tool's own word on the library. */
            read_library_line(trace, body);
            if (n > 0)
                in_headers = FALSE;
            continue;
        }

        int n;
        g_auto(GStrv) tokens = split_words(line, &n);
        /* Log lines (NCCL INFO, launcher chatter) start with a host name or a word. */
        if (n == 0 || !looks_like_integer(tokens[0])) {
            if (have_cols && row_shaped(tokens, n, &cols)) {
                set_malformed(error, origin, lineno, "size column: \"%s\" is not a byte count",
                              tokens[0]);
                return NULL;
            }
            read_library_line(trace, line);
            continue;
        }
        in_headers = FALSE;
        if (!have_cols) {
            if (!columns_from_count(n, &cols)) {
                set_malformed(error, origin, lineno,
                              "a result row before any column titles has %d columns "
                              "(nccl-tests prints 13, or 12 without the root column)",
                              n);
                return NULL;
            }
            have_cols = TRUE;
        }
        CsTraceRow row;
        if (!parse_row(tokens, n, &cols, origin, lineno, &row, error))
            return NULL;
        trace->root_column = trace->root_column || cols.has_root;
        cs_trace_add_row(trace, &row);
    }

    read_library_header(trace);
    if (trace->rows->len == 0) {
        g_set_error(error, CS_TRACE_ERROR, CS_TRACE_ERROR_EMPTY,
                    "%s: no result rows (expected nccl-tests output: \"size count type "
                    "redop root time algbw busbw #wrong ...\")",
                    origin);
        return NULL;
    }
    return g_steal_pointer(&trace);
}

/**
 * cs_trace_load_file:
 * Reads the nccl-tests output in @path, a regular file of at most CS_TRACE_MAX_FILE_BYTES;
 * messages name @path.
 * Returns: (transfer full) (nullable).
 */
CsTrace *
cs_trace_load_file(const char *path, GError **error)
{
    g_return_val_if_fail(path != NULL, NULL);
    g_autofree char *text = NULL;
    gsize len = 0;
    g_autoptr(GError) io_error = NULL;
    /* A regular file of bounded size: /dev/zero or a FIFO is refused before it is read. */
    if (!cs_file_read_bounded(path, CS_TRACE_MAX_FILE_BYTES, &text, &len, &io_error)) {
        const char *why = io_error->code == G_FILE_ERROR_NOENT ? "no such trace file"
                          : io_error->code == G_FILE_ERROR_ISDIR
                              ? "is a directory, not a trace file"
                          : io_error->code == G_FILE_ERROR_ACCES ? "cannot read: permission denied"
                                                                 : NULL;
        if (why != NULL)
            g_set_error(error, CS_TRACE_ERROR, CS_TRACE_ERROR_IO, "%s: %s", path, why);
        else
            g_set_error(error, CS_TRACE_ERROR, CS_TRACE_ERROR_IO, "%s: %s, not a trace file", path,
                        io_error->message);
        return NULL;
    }
    if (memchr(text, '\0', len) != NULL) {
        g_set_error(error, CS_TRACE_ERROR, CS_TRACE_ERROR_MALFORMED,
                    "%s: binary data, not nccl-tests output", path);
        return NULL;
    }
    return cs_trace_load_data(text, path, error);
}

/* ---- Writer ---- */

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
