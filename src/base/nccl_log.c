// SPDX-License-Identifier: MIT
/* NCCL's INFO lines of collective calls (NCCL_DEBUG_SUBSYS=COLL): the line reader and the sum
 * per rank, communicator and identical call.
 *
 * The line, identical from NCCL 2.3.7 (src/collectives/all_reduce.cu) to 2.30.7
 * (src/enqueue.cc, ncclEnqueueCheck), with src/debug.cc's prefix (an optional strftime
 * timestamp when NCCL_DEBUG_TIMESTAMP_LEVELS asks for one, then "%s:%d:%d " host, pid, tid,
 * then "[%d] NCCL INFO " the current CUDA device):
 *
 *   "%s: opCount %lx sendbuff %p recvbuff %p count %zu datatype %d op %d root %d comm %p
 *    [nranks=%d] stream %p"
 *
 * (count was %zi before 2.23). %p prints "0x..." or glibc's "(nil)". */
#include "config.h"

#include "base/nccl_log.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

G_DEFINE_QUARK(cs_nccl_log_error_quark, cs_nccl_log_error)

/* The longest line read as a line: NCCL's own buffer is 1024 bytes (src/debug.cc); launchers
 * prefix a little. Longer lines count as other lines, read through without being kept. */
#define MAX_LINE 65536
/* Ranks in one communicator: more than any machine has. */
#define MAX_NRANKS (1 << 24)

/* ---- Datatypes ---- */

/* ncclDataType_t (NCCL 2.30 src/nccl.h.in): ncclInt8 = 0 ... ncclFloat8e5m2 = 11; 9
 * (bfloat16) since 2.10, 10 and 11 (fp8) since 2.24. */
static const struct {
    const char *name;
    int size;
} datatypes[] = {
    { "ncclInt8", 1 },    { "ncclUint8", 1 },    { "ncclInt32", 4 },      { "ncclUint32", 4 },
    { "ncclInt64", 8 },   { "ncclUint64", 8 },   { "ncclFloat16", 2 },    { "ncclFloat32", 4 },
    { "ncclFloat64", 8 }, { "ncclBfloat16", 2 }, { "ncclFloat8e4m3", 1 }, { "ncclFloat8e5m2", 1 },
};

int
cs_nccl_log_datatype_size(int datatype)
{
    if (datatype < 0 || datatype >= (int)G_N_ELEMENTS(datatypes))
        return 0;
    return datatypes[datatype].size;
}

const char *
cs_nccl_log_datatype_name(int datatype)
{
    if (datatype < 0 || datatype >= (int)G_N_ELEMENTS(datatypes))
        return NULL;
    return datatypes[datatype].name;
}

/* ---- One line ---- */

typedef struct {
    const char *p;    /* next character */
    const char *name; /* the call, for messages */
} Cursor;

static void
skip_spaces(Cursor *c)
{
    while (*c->p == ' ' || *c->p == '\t')
        c->p++;
}

/* A token of a line: every field NCCL prints is shorter than this. */
#define TOKEN_MAX 64

/* The next token (up to a blank, a CR or the end) copied into @tok; one of TOKEN_MAX
 * characters or more is cut there and ends in "...", which matches no key nor value. */
static const char *
next_token(Cursor *c, char tok[TOKEN_MAX])
{
    skip_spaces(c);
    const char *start = c->p;
    while (*c->p != '\0' && *c->p != ' ' && *c->p != '\t' && *c->p != '\r')
        c->p++;
    gsize len = (gsize)(c->p - start);
    if (len >= TOKEN_MAX) {
        memcpy(tok, start, TOKEN_MAX - 4);
        memcpy(tok + TOKEN_MAX - 4, "...", 4);
    }
    else {
        memcpy(tok, start, len);
        tok[len] = '\0';
    }
    return tok;
}

static gboolean malformed(GError **error, const Cursor *c, const char *fmt, ...)
    G_GNUC_PRINTF(3, 4);

static gboolean
malformed(GError **error, const Cursor *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    g_autofree char *what = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_set_error(error, CS_NCCL_LOG_ERROR, CS_NCCL_LOG_ERROR_MALFORMED, "%s line: %s", c->name,
                what);
    return FALSE;
}

/* Expects the word @key next. */
static gboolean
expect_key(Cursor *c, const char *key, GError **error)
{
    char buf[TOKEN_MAX];
    const char *tok = next_token(c, buf);
    if (tok[0] == '\0')
        return malformed(error, c, "the line ends before \"%s\" (cut short?)", key);
    if (strcmp(tok, key) != 0)
        return malformed(error, c, "\"%s\" where \"%s\" belongs", tok, key);
    return TRUE;
}

/* The value after @key: unsigned, in @base (16 or 10), all of the token. */
static gboolean
read_unsigned(Cursor *c, const char *key, int base, guint64 *value, GError **error)
{
    if (!expect_key(c, key, error))
        return FALSE;
    char buf[TOKEN_MAX];
    const char *tok = next_token(c, buf);
    if (tok[0] == '\0')
        return malformed(error, c, "the line ends after \"%s\" (cut short?)", key);
    guint64 v = 0;
    gboolean ok = g_ascii_isxdigit(tok[0]) && (base == 16 || g_ascii_isdigit(tok[0]));
    if (ok) {
        errno = 0;
        char *end = NULL;
        v = g_ascii_strtoull(tok, &end, (guint)base);
        ok = errno == 0 && end != NULL && *end == '\0';
    }
    if (!ok)
        return malformed(error, c, "%s \"%s\" is not %s number", key, tok,
                         base == 16 ? "a hexadecimal" : "a whole");
    *value = v;
    return TRUE;
}

/* The value after @key: a C int (NCCL prints %d). */
static gboolean
read_int(Cursor *c, const char *key, int *value, GError **error)
{
    if (!expect_key(c, key, error))
        return FALSE;
    char buf[TOKEN_MAX];
    const char *tok = next_token(c, buf);
    if (tok[0] == '\0')
        return malformed(error, c, "the line ends after \"%s\" (cut short?)", key);
    errno = 0;
    char *end = NULL;
    gint64 v = g_ascii_strtoll(tok, &end, 10);
    if (errno != 0 || end == tok || *end != '\0' || v < G_MININT || v > G_MAXINT)
        return malformed(error, c, "%s \"%s\" is not an integer", key, tok);
    *value = (int)v;
    return TRUE;
}

/* The value after @key: a pointer as %p prints it, "0x..." or "(nil)" (0). */
static gboolean
read_pointer(Cursor *c, const char *key, guint64 *value, GError **error)
{
    if (!expect_key(c, key, error))
        return FALSE;
    char buf[TOKEN_MAX];
    const char *tok = next_token(c, buf);
    if (tok[0] == '\0')
        return malformed(error, c, "the line ends after \"%s\" (cut short?)", key);
    if (strcmp(tok, "(nil)") == 0) {
        *value = 0;
        return TRUE;
    }
    gboolean ok = tok[0] == '0' && (tok[1] == 'x' || tok[1] == 'X') && g_ascii_isxdigit(tok[2]);
    if (ok) {
        errno = 0;
        char *end = NULL;
        *value = g_ascii_strtoull(tok + 2, &end, 16);
        ok = errno == 0 && *end == '\0';
    }
    if (!ok)
        return malformed(error, c, "%s \"%s\" is not an address (0x... or (nil))", key, tok);
    return TRUE;
}

/* Whether @s[0..len) is all ASCII digits (and not empty). */
static gboolean
all_digits(const char *s, gsize len)
{
    if (len == 0)
        return FALSE;
    for (gsize i = 0; i < len; i++)
        if (!g_ascii_isdigit(s[i]))
            return FALSE;
    return TRUE;
}

/* The rank in @prefix[0..len), whose end is "HOST:PID:TID [DEV] NCCL INFO " in src/debug.cc's
 * layout: "HOST:PID:DEV" into @rank, or "-" when the prefix does not end that way. */
static void
parse_rank(const char *prefix, gsize len, char *rank, gsize rank_size)
{
    g_strlcpy(rank, "-", rank_size);
    gsize end = len;
    while (end > 0 && prefix[end - 1] == ' ')
        end--;
    static const char marker[] = "NCCL INFO";
    const gsize mlen = sizeof(marker) - 1;
    /* Some builds print a "[N]" after "NCCL INFO" (github.com/NVIDIA/nccl/issues/1352). */
    if (end > 2 && prefix[end - 1] == ']') {
        gsize open = end - 1;
        while (open > 0 && g_ascii_isdigit(prefix[open - 1]))
            open--;
        gsize before = open > 0 ? open - 1 : 0;
        while (before > 0 && prefix[before - 1] == ' ')
            before--;
        if (open > 0 && prefix[open - 1] == '[' && open < end - 1 && before >= mlen
            && memcmp(prefix + before - mlen, marker, mlen) == 0)
            end = before;
    }
    if (end < mlen || memcmp(prefix + end - mlen, marker, mlen) != 0)
        return;
    end -= mlen;
    while (end > 0 && prefix[end - 1] == ' ')
        end--;
    /* "[DEV]" */
    if (end < 3 || prefix[end - 1] != ']')
        return;
    gsize open = end - 1;
    while (open > 0 && prefix[open - 1] != '[')
        open--;
    if (open == 0 || !all_digits(prefix + open, end - 1 - open))
        return;
    const char *dev = prefix + open;
    gsize dev_len = end - 1 - open;
    end = open - 1;
    while (end > 0 && prefix[end - 1] == ' ')
        end--;
    /* "HOST:PID:TID", the last word before "[DEV]" */
    gsize start = end;
    while (start > 0 && prefix[start - 1] != ' ' && prefix[start - 1] != '\t')
        start--;
    const char *word = prefix + start;
    gsize wlen = end - start;
    const char *c2 = g_strrstr_len(word, (gssize)wlen, ":");
    if (c2 == NULL)
        return;
    const char *c1 = g_strrstr_len(word, c2 - word, ":");
    if (c1 == NULL || c1 == word || !all_digits(c1 + 1, (gsize)(c2 - c1 - 1))
        || !all_digits(c2 + 1, (gsize)(word + wlen - c2 - 1)))
        return;
    g_autofree char *label
        = g_strdup_printf("%.*s:%.*s", (int)(c2 - word), word, (int)dev_len, dev);
    if (strlen(label) < rank_size)
        g_strlcpy(rank, label, rank_size);
}

CsNcclLogLineKind
cs_nccl_log_parse_line(const char *line, CsNcclLogLine *out, GError **error)
{
    g_return_val_if_fail(line != NULL && out != NULL, CS_NCCL_LOG_LINE_OTHER);
    const char *mark = strstr(line, ": opCount ");
    if (mark == NULL)
        return CS_NCCL_LOG_LINE_OTHER;
    memset(out, 0, sizeof(*out));
    const char *name = mark;
    while (name > line && g_ascii_isalpha(name[-1]))
        name--;
    Cursor c = { .p = mark + 1, .name = "collective" };
    if (name == mark || (name > line && name[-1] != ' ' && name[-1] != '\t')
        || mark - name >= (gssize)sizeof(out->name)) {
        malformed(error, &c, "no collective's name before \"opCount\"");
        return CS_NCCL_LOG_LINE_MALFORMED;
    }
    memcpy(out->name, name, (gsize)(mark - name));
    out->name[mark - name] = '\0';
    c.name = out->name;
    parse_rank(line, (gsize)(name - line), out->rank, sizeof(out->rank));

    guint64 count = 0;
    guint64 ignored = 0;
    if (!read_unsigned(&c, "opCount", 16, &out->op_count, error)
        || !read_pointer(&c, "sendbuff", &ignored, error)
        || !read_pointer(&c, "recvbuff", &ignored, error)
        || !read_unsigned(&c, "count", 10, &count, error)
        || !read_int(&c, "datatype", &out->datatype, error)
        || !read_int(&c, "op", &out->redop, error) || !read_int(&c, "root", &out->root, error)
        || !read_pointer(&c, "comm", &out->comm, error))
        return CS_NCCL_LOG_LINE_MALFORMED;
    /* "[nranks=%d]" */
    char buf[TOKEN_MAX];
    const char *tok = next_token(&c, buf);
    gsize tlen = strlen(tok);
    if (tlen == 0) {
        malformed(error, &c, "the line ends before \"[nranks=N]\" (cut short?)");
        return CS_NCCL_LOG_LINE_MALFORMED;
    }
    if (!g_str_has_prefix(tok, "[nranks=") || tok[tlen - 1] != ']' || !all_digits(tok + 8, tlen - 9)
        || tlen - 9 > 9) {
        malformed(error, &c, "\"%s\" where \"[nranks=N]\" belongs", tok);
        return CS_NCCL_LOG_LINE_MALFORMED;
    }
    out->nranks = atoi(tok + 8);
    if (!read_pointer(&c, "stream", &ignored, error))
        return CS_NCCL_LOG_LINE_MALFORMED;
    /* Trailing blanks and a DOS line end are allowed. */
    while (*c.p == ' ' || *c.p == '\t' || *c.p == '\r')
        c.p++;
    if (*c.p != '\0') {
        malformed(error, &c, "\"%s\" after the stream: two lines run together?", c.p);
        return CS_NCCL_LOG_LINE_MALFORMED;
    }

    if (out->comm == 0) {
        malformed(error, &c, "comm (nil)");
        return CS_NCCL_LOG_LINE_MALFORMED;
    }
    if (out->nranks < 1 || out->nranks > MAX_NRANKS) {
        malformed(error, &c, "[nranks=%d]: a communicator has 1 to %d ranks", out->nranks,
                  MAX_NRANKS);
        return CS_NCCL_LOG_LINE_MALFORMED;
    }
    const int size = cs_nccl_log_datatype_size(out->datatype);
    if (size == 0) {
        malformed(error, &c,
                  "datatype %d is not an NCCL datatype (0 ncclInt8 to 11 ncclFloat8e5m2)",
                  out->datatype);
        return CS_NCCL_LOG_LINE_MALFORMED;
    }
    if (count > (guint64)(CS_NCCL_LOG_MAX_BYTES / size)) {
        malformed(error, &c, "count %" G_GUINT64_FORMAT " of %d-byte elements: more than 1 PiB",
                  count, size);
        return CS_NCCL_LOG_LINE_MALFORMED;
    }
    out->count = count;
    return CS_NCCL_LOG_LINE_COLLECTIVE;
}

/* ---- The sum of a log ---- */

struct _CsNcclLog {
    GPtrArray *ranks;   /* CsNcclLogRank */
    GHashTable *index;  /* "R\x1fRANK" -> rank, "C\x1fRANK\x1fCOMM" -> comm,
                         * "K\x1fRANK\x1fCOMM\x1fNAME\x1fCOUNT\x1fTYPE" -> call index + 1 */
    gint64 coll_lines;  /* collective lines */
    gint64 other_lines; /* lines skipped */
};

static void
comm_free(gpointer data)
{
    CsNcclLogComm *c = data;
    for (guint i = 0; i < c->call_list->len; i++)
        g_free(g_array_index(c->call_list, CsNcclLogCall, i).name);
    g_array_unref(c->call_list);
    g_free(c->name);
    g_free(c->ranks);
    g_free(c);
}

static void
rank_free(gpointer data)
{
    CsNcclLogRank *r = data;
    g_free(r->label);
    g_ptr_array_unref(r->comms);
    g_free(r);
}

/**
 * cs_nccl_log_new:
 * An empty sum. Returns: (transfer full).
 */
CsNcclLog *
cs_nccl_log_new(void)
{
    CsNcclLog *log = g_new0(CsNcclLog, 1);
    log->ranks = g_ptr_array_new_with_free_func(rank_free);
    log->index = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    return log;
}

void
cs_nccl_log_free(CsNcclLog *log)
{
    if (log == NULL)
        return;
    g_hash_table_unref(log->index);
    g_ptr_array_unref(log->ranks);
    g_free(log);
}

static gboolean
check_room(const CsNcclLog *log, const char *where, GError **error)
{
    if (g_hash_table_size(log->index) < CS_NCCL_LOG_MAX_ENTRIES)
        return TRUE;
    g_set_error(error, CS_NCCL_LOG_ERROR, CS_NCCL_LOG_ERROR_LIMIT,
                "%s: more than %d distinct ranks, communicators and calls: "
                "not the record of a few training steps (cut it to the steps to import)",
                where, CS_NCCL_LOG_MAX_ENTRIES);
    return FALSE;
}

static void
add_call(CsNcclLog *log, CsNcclLogComm *comm, const char *comm_key, const CsNcclLogLine *l)
{
    g_autofree char *key = g_strdup_printf("K\x1f%s\x1f%s\x1f%" G_GUINT64_FORMAT "\x1f%d",
                                           comm_key + 2, l->name, l->count, l->datatype);
    guint idx = GPOINTER_TO_UINT(g_hash_table_lookup(log->index, key));
    CsNcclLogCall *call;
    if (idx == 0) {
        CsNcclLogCall fresh = { .name = g_strdup(l->name),
                                .count = l->count,
                                .datatype = l->datatype,
                                .first_op = l->op_count,
                                .last_op = l->op_count };
        g_array_append_val(comm->call_list, fresh);
        g_hash_table_insert(log->index, g_steal_pointer(&key),
                            GUINT_TO_POINTER(comm->call_list->len));
        call = &g_array_index(comm->call_list, CsNcclLogCall, comm->call_list->len - 1);
    }
    else
        call = &g_array_index(comm->call_list, CsNcclLogCall, idx - 1);
    call->calls++;
    call->first_op = MIN(call->first_op, l->op_count);
    call->last_op = MAX(call->last_op, l->op_count);
}

/* Adds the parsed call @l; @where names it in errors. */
static gboolean
add_parsed(CsNcclLog *log, const CsNcclLogLine *l, const char *comm_name, const char *comm_ranks,
           const char *where, GError **error)
{
    if (!check_room(log, where, error))
        return FALSE;
    g_autofree char *rank_key = g_strconcat("R\x1f", l->rank, NULL);
    CsNcclLogRank *rank = g_hash_table_lookup(log->index, rank_key);
    if (rank == NULL) {
        rank = g_new0(CsNcclLogRank, 1);
        rank->label = g_strdup(l->rank);
        rank->comms = g_ptr_array_new_with_free_func(comm_free);
        g_ptr_array_add(log->ranks, rank);
        g_hash_table_insert(log->index, g_steal_pointer(&rank_key), rank);
    }
    g_autofree char *comm_key
        = g_strdup_printf("C\x1f%s\x1f%" G_GINT64_MODIFIER "x", l->rank, l->comm);
    CsNcclLogComm *comm = g_hash_table_lookup(log->index, comm_key);
    if (comm == NULL) {
        comm = g_new0(CsNcclLogComm, 1);
        comm->comm = l->comm;
        comm->nranks = l->nranks;
        comm->first_op = l->op_count;
        comm->last_op = l->op_count;
        comm->call_list = g_array_new(FALSE, TRUE, sizeof(CsNcclLogCall));
        comm->name = g_strdup(comm_name);
        comm->ranks = g_strdup(comm_ranks);
        g_ptr_array_add(rank->comms, comm);
        g_hash_table_insert(log->index, g_strdup(comm_key), comm);
    }
    else if (comm->nranks != l->nranks) {
        if (comm->name != NULL)
            g_set_error(error, CS_NCCL_LOG_ERROR, CS_NCCL_LOG_ERROR_MALFORMED,
                        "%s: %s of process group \"%s\" of %d ranks, which had %d before "
                        "(two runs in one trace?)",
                        where, l->name, comm->name, l->nranks, comm->nranks);
        else
            g_set_error(error, CS_NCCL_LOG_ERROR, CS_NCCL_LOG_ERROR_MALFORMED,
                        "%s: %s line: comm 0x%" G_GINT64_MODIFIER
                        "x has [nranks=%d] here and %d before (two runs in one log? import each "
                        "run's log alone)",
                        where, l->name, l->comm, l->nranks, comm->nranks);
        return FALSE;
    }
    if (!check_room(log, where, error))
        return FALSE;
    rank->calls++;
    comm->calls++;
    comm->first_op = MIN(comm->first_op, l->op_count);
    comm->last_op = MAX(comm->last_op, l->op_count);
    add_call(log, comm, comm_key, l);
    log->coll_lines++;
    return TRUE;
}

gboolean
cs_nccl_log_add_line(CsNcclLog *log, const char *line, const char *origin, gint64 lineno,
                     GError **error)
{
    g_return_val_if_fail(log != NULL && line != NULL, FALSE);
    CsNcclLogLine l;
    g_autoptr(GError) local = NULL;
    switch (cs_nccl_log_parse_line(line, &l, &local)) {
    case CS_NCCL_LOG_LINE_OTHER:
        log->other_lines++;
        return TRUE;
    case CS_NCCL_LOG_LINE_MALFORMED:
        g_set_error(error, CS_NCCL_LOG_ERROR, CS_NCCL_LOG_ERROR_MALFORMED,
                    "%s:%" G_GINT64_FORMAT ": %s", origin, lineno, local->message);
        return FALSE;
    case CS_NCCL_LOG_LINE_COLLECTIVE:
        break;
    }
    g_autofree char *where = g_strdup_printf("%s:%" G_GINT64_FORMAT, origin, lineno);
    return add_parsed(log, &l, NULL, NULL, where, error);
}

gboolean
cs_nccl_log_add_call(CsNcclLog *log, const CsNcclLogLine *l, const char *comm_name,
                     const char *comm_ranks, const char *where, GError **error)
{
    g_return_val_if_fail(log != NULL && l != NULL && where != NULL, FALSE);
    return add_parsed(log, l, comm_name, comm_ranks, where, error);
}

/* Reads @f line by line into @log; a line longer than MAX_LINE (or holding a NUL byte) is
 * counted as another line. */
static gboolean
add_stream(CsNcclLog *log, FILE *f, const char *origin, GError **error)
{
    g_autofree char *buf = g_malloc(MAX_LINE + 1);
    gsize len = 0;
    gboolean too_long = FALSE;
    gboolean has_nul = FALSE;
    gint64 lineno = 0;
    for (;;) {
        int ch = getc_unlocked(f);
        if (ch == EOF || ch == '\n') {
            if (ch == EOF && len == 0 && !too_long)
                break;
            lineno++;
            buf[len] = '\0';
            if (too_long || has_nul)
                log->other_lines++;
            else if (!cs_nccl_log_add_line(log, buf, origin, lineno, error))
                return FALSE;
            len = 0;
            too_long = FALSE;
            has_nul = FALSE;
            if (ch == EOF)
                break;
            continue;
        }
        if (len < MAX_LINE) {
            has_nul = has_nul || ch == '\0';
            buf[len++] = (char)ch;
        }
        else
            too_long = TRUE;
    }
    if (ferror(f)) {
        int saved = errno;
        g_set_error(error, CS_NCCL_LOG_ERROR, CS_NCCL_LOG_ERROR_IO, "%s: cannot read: %s", origin,
                    g_strerror(saved));
        return FALSE;
    }
    return TRUE;
}

gboolean
cs_nccl_log_add_file(CsNcclLog *log, const char *path, GError **error)
{
    g_return_val_if_fail(log != NULL && path != NULL, FALSE);
    if (strcmp(path, "-") == 0)
        return add_stream(log, stdin, "-", error);
    if (g_file_test(path, G_FILE_TEST_IS_DIR)) {
        g_set_error(error, CS_NCCL_LOG_ERROR, CS_NCCL_LOG_ERROR_IO,
                    "%s: cannot read: a directory, not a log", path);
        return FALSE;
    }
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        int saved = errno;
        g_set_error(error, CS_NCCL_LOG_ERROR, CS_NCCL_LOG_ERROR_IO, "%s: cannot read: %s", path,
                    g_strerror(saved));
        return FALSE;
    }
    gboolean ok = add_stream(log, f, path, error);
    fclose(f);
    return ok;
}

const GPtrArray *
cs_nccl_log_ranks(const CsNcclLog *log)
{
    return log->ranks;
}

const CsNcclLogRank *
cs_nccl_log_find_rank(const CsNcclLog *log, const char *label)
{
    g_autofree char *key = g_strconcat("R\x1f", label, NULL);
    return g_hash_table_lookup(log->index, key);
}

gint64
cs_nccl_log_n_collective_lines(const CsNcclLog *log)
{
    return log->coll_lines;
}

gint64
cs_nccl_log_n_other_lines(const CsNcclLog *log)
{
    return log->other_lines;
}
