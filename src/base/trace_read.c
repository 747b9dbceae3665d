// SPDX-License-Identifier: MIT
/* The reader of nccl-tests / rccl-tests output, tolerant of launcher prefixes, log lines and
 * older layouts (trace.c holds the trace). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/fileio.h"
#include "base/trace-private.h"
#include "base/units.h"

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

/* "Rank N Group G Pid P on HOST device D [..] NAME" (tokens of the line after '#'): where rank
 * N ran. A rank printed twice keeps its first line. */
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

/**
 * cs_nccl_release_code:
 * The inverse of cs_nccl_version_string() for 2.9 and later: "2.29.7" -> 22907; "2.29",
 * naming no patch, -> 22999 (the minor release's newest). 0 for NULL or an unreadable version.
 */
int
cs_nccl_release_code(const char *version)
{
    int major = 0, minor = 0, patch = 99;
    const int n = version != NULL ? sscanf(version, "%d.%d.%d", &major, &minor, &patch) : 0;
    if (n < 2 || major < 0 || minor < 0 || minor > 99 || patch < 0 || patch > 99 || major > 9)
        return 0;
    /* "2.29" names no patch: the minor release's newest rules. */
    return major * 10000 + minor * 100 + (n == 2 ? 99 : patch);
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
        /* rccl-tests 2.17 prints "rccl-headers=22803 rccl-library=22707" (RCCL_VERSION_CODE,
         * numbered after the NCCL release it follows); older ones print no version. */
        const char *rcode = strstr(text, "rccl-library=");
        g_autofree char *version = rcode != NULL ? cs_nccl_version_string(
                                       g_ascii_strtoll(rcode + strlen("rccl-library="), NULL, 10))
                                                 : NULL;
        note_library(trace, "RCCL", version);
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
    g_autoptr(CsTrace) trace = cs_trace_alloc(origin);
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
