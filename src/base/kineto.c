// SPDX-License-Identifier: MIT
/* PyTorch profiler traces (Kineto's Chrome trace-event JSON): the collectives they record,
 * added to a CsNcclLog as NCCL's own log lines would be.
 *
 * PyTorch annotates each collective with RECORD_PARAM_COMMS_DATA
 * (torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp): a CPU op "record_param_comms" whose
 * args are "Collective name", "In msg nelems", "Out msg nelems", "Group size", "dtype",
 * "Process Group Name", "Process Group Ranks" (the keys of torch/csrc/profiler/util.h,
 * kCommsName ... kGroupRanks); newer Kineto versions copy them onto the NCCL kernel the op
 * launched. inNelems and outNelems are numel() of the
 * input and output tensors: for "_reduce_scatter_base" the input is the whole buffer and the
 * output one rank's share; for "all_to_allv" both are whole buffers; for the coalesced calls
 * the sum over their tensors.
 *
 * The file is read without holding its parsed tree: mapped, scanned for the extent of each
 * element of "traceEvents", and each element parsed alone by cJSON. */
#include "config.h"

#include "base/kineto.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/json_util.h"

G_DEFINE_QUARK(cs_kineto_error_quark, cs_kineto_error)

/* Nesting of one JSON value the scanner follows (cJSON's own limit is 1000). */
#define MAX_DEPTH 1000
/* A top-level value other than traceEvents (deviceProperties, distributedInfo). */
#define MAX_OTHER_BYTES ((gsize)16 << 20)
/* Ranks in one group: more than any machine has (as nccl_log.c). */
#define MAX_GROUP (1 << 24)
/* Elements of one collective: 2^53, where a double stops holding whole numbers. */
#define MAX_NELEMS 9007199254740992.0

void
cs_kineto_info_clear(CsKinetoInfo *info)
{
    g_free(info->rank);
    memset(info, 0, sizeof(*info));
}

/* ---- PyTorch's names ---- */

/* How a record's element count becomes NCCL's count argument. */
typedef enum {
    COUNT_IN,       /* the input's elements: AllReduce, Broadcast, AllGather (per rank) */
    COUNT_OUT,      /* the output's: ReduceScatter (its output is one rank's share) */
    COUNT_IN_SPLIT, /* the input's over the group: AlltoAll, whose count is per peer */
} CountRule;

/* ProcessGroupNCCL.cpp's collective names (as RECORD_PARAM_COMMS_DATA records them) of the
 * calls a workload takes, and the NCCL call each makes. Any other name (send, recv, reduce,
 * gather, scatter, barrier, wait...) is added under its own name and left out by the
 * workload. */
static const struct {
    const char *torch;
    const char *nccl;
    CountRule rule;
} collectives[] = {
    { "allreduce", "AllReduce", COUNT_IN },
    { "allreduce_coalesced", "AllReduce", COUNT_IN },
    { "broadcast", "Broadcast", COUNT_IN },
    { "all_gather", "AllGather", COUNT_IN },
    { "_allgather_base", "AllGather", COUNT_IN },
    { "allgather_into_tensor_coalesced", "AllGather", COUNT_IN },
    { "reduce_scatter", "ReduceScatter", COUNT_OUT },
    { "_reduce_scatter_base", "ReduceScatter", COUNT_OUT },
    { "reduce_scatter_tensor_coalesced", "ReduceScatter", COUNT_OUT },
    { "all_to_all", "AlltoAll", COUNT_IN_SPLIT },
    { "all_to_allv", "AlltoAll", COUNT_IN_SPLIT },
};

/* c10::toString(ScalarType) and the ncclDataType_t ProcessGroupNCCL.cpp's ncclDataType map
 * gives it (Bool as ncclUint8; the fp8 types since NCCL 2.24). */
static const struct {
    const char *torch;
    int nccl;
} dtypes[] = {
    { "Char", 0 },     { "Byte", 1 },           { "Bool", 1 },         { "Int", 2 },
    { "Long", 4 },     { "Half", 6 },           { "Float", 7 },        { "Double", 8 },
    { "BFloat16", 9 }, { "Float8_e4m3fn", 10 }, { "Float8_e5m2", 11 },
};

static int
nccl_dtype(const char *name)
{
    for (gsize i = 0; i < G_N_ELEMENTS(dtypes); i++)
        if (strcmp(name, dtypes[i].torch) == 0)
            return dtypes[i].nccl;
    return -1;
}

/* ---- The scanner ---- */

typedef struct {
    const char *buf;  /* the file */
    gsize len;        /* its bytes */
    gsize pos;        /* next byte */
    const char *path; /* for messages */
    gsize line_off;   /* a line start at or before the last place located */
    gint64 line;      /* its line number */
} Scan;

/* "PATH:LINE:COL" of @off. Places are located in increasing order, so counting lines goes on
 * from the last one. (transfer full) */
static char *
place(Scan *s, gsize off)
{
    if (off < s->line_off) {
        s->line_off = 0;
        s->line = 1;
    }
    const char *p = s->buf + s->line_off;
    const char *end = s->buf + MIN(off, s->len);
    for (;;) {
        const char *nl = memchr(p, '\n', (gsize)(end - p));
        if (nl == NULL)
            break;
        s->line++;
        p = nl + 1;
    }
    s->line_off = (gsize)(p - s->buf);
    return g_strdup_printf("%s:%" G_GINT64_FORMAT ":%" G_GSIZE_FORMAT, s->path, s->line,
                           off - s->line_off + 1);
}

static gboolean fail_at(Scan *s, gsize off, GError **error, const char *fmt, ...)
    G_GNUC_PRINTF(4, 5);

static gboolean
fail_at(Scan *s, gsize off, GError **error, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    g_autofree char *what = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_autofree char *where = place(s, off);
    g_set_error(error, CS_KINETO_ERROR, CS_KINETO_ERROR_MALFORMED, "%s: %s", where, what);
    return FALSE;
}

static void
skip_blanks(Scan *s)
{
    while (s->pos < s->len
           && (s->buf[s->pos] == ' ' || s->buf[s->pos] == '\n' || s->buf[s->pos] == '\r'
               || s->buf[s->pos] == '\t'))
        s->pos++;
}

/* The end of the JSON value at s->pos (not moved), found by its brackets and strings; cJSON
 * checks the value itself. */
static gboolean
value_end(Scan *s, const char *what, gsize *end, GError **error)
{
    gsize p = s->pos;
    int depth = 0;
    gboolean cut = FALSE;
    gboolean done = FALSE;
    while (p < s->len && !done) {
        const char c = s->buf[p];
        if (c == '"') {
            p++;
            while (p < s->len && s->buf[p] != '"')
                p += s->buf[p] == '\\' ? 2 : 1;
            if (p >= s->len) {
                cut = TRUE;
                break;
            }
            p++;
            done = depth == 0;
        }
        else if (c == '{' || c == '[') {
            if (++depth > MAX_DEPTH)
                return fail_at(s, p, error, "%s: nested deeper than %d", what, MAX_DEPTH);
            p++;
        }
        else if (c == '}' || c == ']') {
            if (depth == 0)
                break;
            p++;
            done = --depth == 0;
        }
        else if (depth == 0 && (c == ',' || c == ' ' || c == '\n' || c == '\r' || c == '\t'))
            break;
        else
            p++;
    }
    if (cut || depth > 0)
        return fail_at(s, s->pos, error, "%s: the file ends inside it (cut short?)", what);
    if (p == s->pos)
        return fail_at(s, s->pos, error, "%s: a value is missing", what);
    *end = p;
    return TRUE;
}

/* The value at s->pos parsed alone (transfer full); s->pos moves past it. At most @max bytes. */
static cJSON *
parse_value(Scan *s, const char *what, gsize max, GError **error)
{
    gsize end = 0;
    if (!value_end(s, what, &end, error))
        return NULL;
    if (end - s->pos > max) {
        fail_at(s, s->pos, error,
                "%s: %" G_GSIZE_FORMAT " bytes, more than the %" G_GSIZE_FORMAT
                " MiB one value may have",
                what, end - s->pos, max >> 20);
        return NULL;
    }
    const char *parse_end = NULL;
    cJSON *v = cJSON_ParseWithLengthOpts(s->buf + s->pos, end - s->pos, &parse_end, FALSE);
    if (v == NULL || parse_end != s->buf + end) {
        gsize at = s->pos;
        if (v == NULL && cJSON_GetErrorPtr() != NULL && cJSON_GetErrorPtr() >= s->buf + s->pos
            && cJSON_GetErrorPtr() <= s->buf + end)
            at = (gsize)(cJSON_GetErrorPtr() - s->buf);
        else if (parse_end != NULL && parse_end >= s->buf && parse_end <= s->buf + end)
            at = (gsize)(parse_end - s->buf);
        cJSON_Delete(v);
        fail_at(s, at, error, "%s: not valid JSON here", what);
        return NULL;
    }
    s->pos = end;
    return v;
}

/* ---- Events ---- */

/* One collective as the trace records it. */
typedef struct {
    char *coll;     /* "Collective name" */
    double in;      /* "In msg nelems" */
    double out;     /* "Out msg nelems" */
    int group;      /* "Group size" */
    char *dtype;    /* "dtype" */
    char *pg;       /* "Process Group Name" (or "Process Group ID"), NULL when absent */
    char *pg_ranks; /* "Process Group Ranks", NULL when absent */
    int rank;       /* "Rank", -1 when absent */
    char *where;    /* "PATH:LINE:COL: traceEvents[I]" */
} Rec;

static void
rec_clear(gpointer data)
{
    Rec *r = data;
    g_free(r->coll);
    g_free(r->dtype);
    g_free(r->pg);
    g_free(r->pg_ranks);
    g_free(r->where);
}

typedef struct {
    double start; /* us */
    double end;   /* us */
} Span;

typedef struct {
    GArray *kernels;   /* Rec of GPU kernels */
    GArray *cpu_ops;   /* Rec of record_param_comms */
    GArray *compute;   /* Span of the other GPU kernels */
    GHashTable *steps; /* ProfilerStep#N names */
    int dist_rank;     /* distributedInfo.rank, -1 */
    int world_size;    /* distributedInfo.world_size, 0 */
    gint64 events;
} Collect;

/* A whole number in [lo, hi] from @v. */
static gboolean
whole(const cJSON *v, double lo, double hi, double *out)
{
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble != floor(v->valuedouble)
        || v->valuedouble < lo || v->valuedouble > hi)
        return FALSE;
    *out = v->valuedouble;
    return TRUE;
}

/* args."KEY" of an event, described for messages. */
static gboolean
bad_arg(Scan *s, gsize off, const char *where, const char *key, const cJSON *v, const char *want,
        GError **error)
{
    if (v == NULL)
        return fail_at(s, off, error, "%s: args.\"%s\" is missing", where, key);
    g_autofree char *got = cs_json_describe(v);
    return fail_at(s, off, error, "%s: args.\"%s\" is %s, not %s", where, key, got, want);
}

/* Reads the collective of one event's @args into @r. */
static gboolean
read_rec(Scan *s, gsize off, const char *where, const cJSON *args, Rec *r, GError **error)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(args, "Collective name");
    if (!cJSON_IsString(v))
        return bad_arg(s, off, where, "Collective name", v, "a string", error);
    r->coll = g_strdup(v->valuestring);
    v = cJSON_GetObjectItemCaseSensitive(args, "In msg nelems");
    if (!whole(v, 0, MAX_NELEMS, &r->in))
        return bad_arg(s, off, where, "In msg nelems", v, "a count of elements", error);
    v = cJSON_GetObjectItemCaseSensitive(args, "Out msg nelems");
    if (!whole(v, 0, MAX_NELEMS, &r->out))
        return bad_arg(s, off, where, "Out msg nelems", v, "a count of elements", error);
    double g = 0;
    v = cJSON_GetObjectItemCaseSensitive(args, "Group size");
    if (!whole(v, 1, MAX_GROUP, &g))
        return bad_arg(s, off, where, "Group size", v, "a number of ranks (1 or more)", error);
    r->group = (int)g;
    v = cJSON_GetObjectItemCaseSensitive(args, "dtype");
    if (!cJSON_IsString(v))
        return bad_arg(s, off, where, "dtype", v, "a string", error);
    r->dtype = g_strdup(v->valuestring);
    v = cJSON_GetObjectItemCaseSensitive(args, "Process Group Name");
    if (v != NULL && !cJSON_IsString(v))
        return bad_arg(s, off, where, "Process Group Name", v, "a string", error);
    if (v != NULL)
        r->pg = g_strdup(v->valuestring);
    else {
        /* Older traces (HTA's tests/data/ns_resolution_trace) carry a number instead. */
        double id = 0;
        v = cJSON_GetObjectItemCaseSensitive(args, "Process Group ID");
        if (v != NULL && !whole(v, 0, MAX_NELEMS, &id))
            return bad_arg(s, off, where, "Process Group ID", v, "a whole number", error);
        if (v != NULL)
            r->pg = g_strdup_printf("%.0f", id);
    }
    v = cJSON_GetObjectItemCaseSensitive(args, "Process Group Ranks");
    if (v != NULL && !cJSON_IsString(v))
        return bad_arg(s, off, where, "Process Group Ranks", v, "a string", error);
    if (v != NULL)
        r->pg_ranks = g_strdup(v->valuestring);
    r->rank = -1;
    double rank = 0;
    v = cJSON_GetObjectItemCaseSensitive(args, "Rank");
    if (v != NULL && !whole(v, 0, MAX_GROUP, &rank))
        return bad_arg(s, off, where, "Rank", v, "a rank", error);
    if (v != NULL)
        r->rank = (int)rank;
    return TRUE;
}

/* Takes what one event of traceEvents says. */
static gboolean
on_event(Scan *s, Collect *c, gsize off, gint64 index, const cJSON *ev, GError **error)
{
    g_autofree char *at = place(s, off);
    g_autofree char *where = g_strdup_printf("traceEvents[%" G_GINT64_FORMAT "]", index);
    if (!cJSON_IsObject(ev)) {
        g_autofree char *got = cs_json_describe(ev);
        return fail_at(s, off, error, "%s is %s, not an event (an object)", where, got);
    }
    c->events++;
    const cJSON *cat = cJSON_GetObjectItemCaseSensitive(ev, "cat");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(ev, "name");
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(ev, "args");
    const char *cat_s = cJSON_IsString(cat) ? cat->valuestring : "";
    const char *name_s = cJSON_IsString(name) ? name->valuestring : "";
    if (g_str_has_prefix(name_s, "ProfilerStep#")) {
        if (!g_hash_table_contains(c->steps, name_s))
            g_hash_table_add(c->steps, g_strdup(name_s));
        return TRUE;
    }
    const gboolean kernel = strcmp(cat_s, "kernel") == 0;
    const gboolean comms
        = cJSON_IsObject(args) && cJSON_GetObjectItemCaseSensitive(args, "Collective name") != NULL;
    if (comms && (kernel || strcmp(name_s, "record_param_comms") == 0)) {
        Rec r = { 0 };
        g_autofree char *full
            = g_strdup_printf("%s (%s \"%.40s\")", where, kernel ? "kernel" : "cpu_op", name_s);
        if (!read_rec(s, off, full, args, &r, error)) {
            rec_clear(&r);
            return FALSE;
        }
        r.where = g_strdup_printf("%s: %s", at, full);
        g_array_append_val(kernel ? c->kernels : c->cpu_ops, r);
        return TRUE;
    }
    if (kernel && !g_str_has_prefix(name_s, "nccl")) {
        const cJSON *ts = cJSON_GetObjectItemCaseSensitive(ev, "ts");
        const cJSON *dur = cJSON_GetObjectItemCaseSensitive(ev, "dur");
        if (!cJSON_IsNumber(ts) || !isfinite(ts->valuedouble))
            return fail_at(s, off, error, "%s (kernel \"%.40s\"): \"ts\" is not a number", where,
                           name_s);
        if (!cJSON_IsNumber(dur) || !isfinite(dur->valuedouble) || dur->valuedouble < 0)
            return fail_at(s, off, error,
                           "%s (kernel \"%.40s\"): \"dur\" is not a duration (a number >= 0)",
                           where, name_s);
        Span sp = { ts->valuedouble, ts->valuedouble + dur->valuedouble };
        g_array_append_val(c->compute, sp);
    }
    return TRUE;
}

static gboolean
read_dist_info(Scan *s, gsize off, Collect *c, const cJSON *v, GError **error)
{
    if (!cJSON_IsObject(v))
        return fail_at(s, off, error, "distributedInfo is not an object");
    double x = 0;
    const cJSON *rank = cJSON_GetObjectItemCaseSensitive(v, "rank");
    if (rank != NULL) {
        if (!whole(rank, 0, MAX_GROUP, &x))
            return fail_at(s, off, error, "distributedInfo.rank is not a rank");
        c->dist_rank = (int)x;
    }
    const cJSON *world = cJSON_GetObjectItemCaseSensitive(v, "world_size");
    if (world != NULL) {
        if (!whole(world, 1, MAX_GROUP, &x))
            return fail_at(s, off, error, "distributedInfo.world_size is not a number of ranks");
        c->world_size = (int)x;
    }
    return TRUE;
}

/* Expects @c at s->pos (after blanks). */
static gboolean
expect(Scan *s, char c, const char *after, GError **error)
{
    skip_blanks(s);
    if (s->pos >= s->len)
        return fail_at(s, s->pos, error, "the file ends %s (cut short?)", after);
    if (s->buf[s->pos] != c)
        return fail_at(s, s->pos, error, "'%c' %s, not '%c'", s->buf[s->pos], after, c);
    s->pos++;
    return TRUE;
}

static gboolean
read_events(Scan *s, Collect *c, GError **error)
{
    if (!expect(s, '[', "where traceEvents' array begins", error))
        return FALSE;
    skip_blanks(s);
    if (s->pos < s->len && s->buf[s->pos] == ']') {
        s->pos++;
        return TRUE;
    }
    for (gint64 i = 0;; i++) {
        skip_blanks(s);
        const gsize off = s->pos;
        g_autofree char *what = g_strdup_printf("traceEvents[%" G_GINT64_FORMAT "]", i);
        g_autoptr(cJSON) ev = parse_value(s, what, CS_KINETO_MAX_EVENT_BYTES, error);
        if (ev == NULL || !on_event(s, c, off, i, ev, error))
            return FALSE;
        skip_blanks(s);
        if (s->pos >= s->len)
            return fail_at(s, s->pos, error, "the file ends inside traceEvents (cut short?)");
        if (s->buf[s->pos] == ']') {
            s->pos++;
            return TRUE;
        }
        if (!expect(s, ',', "after an event", error))
            return FALSE;
    }
}

/* The top-level object. */
static gboolean
read_trace(Scan *s, Collect *c, GError **error)
{
    skip_blanks(s);
    if (s->pos >= s->len)
        return fail_at(s, s->pos, error, "empty: not a PyTorch profiler trace");
    if (!expect(s, '{', "at the start", error))
        return FALSE;
    gboolean seen_events = FALSE;
    skip_blanks(s);
    if (s->pos < s->len && s->buf[s->pos] == '}')
        s->pos++;
    else
        for (;;) {
            skip_blanks(s);
            const gsize key_off = s->pos;
            if (s->pos >= s->len || s->buf[s->pos] != '"')
                return fail_at(s, s->pos, error, "a member's name (a string) belongs here");
            g_autoptr(cJSON) key = parse_value(s, "a member's name", MAX_OTHER_BYTES, error);
            if (key == NULL)
                return FALSE;
            if (!expect(s, ':', "after a member's name", error))
                return FALSE;
            skip_blanks(s);
            if (strcmp(key->valuestring, "traceEvents") == 0) {
                if (seen_events)
                    return fail_at(s, key_off, error, "a second \"traceEvents\"");
                seen_events = TRUE;
                if (!read_events(s, c, error))
                    return FALSE;
            }
            else {
                const gsize off = s->pos;
                g_autofree char *what = g_strdup_printf("\"%.60s\"", key->valuestring);
                g_autoptr(cJSON) v = parse_value(s, what, MAX_OTHER_BYTES, error);
                if (v == NULL)
                    return FALSE;
                if (strcmp(key->valuestring, "distributedInfo") == 0
                    && !read_dist_info(s, off, c, v, error))
                    return FALSE;
            }
            skip_blanks(s);
            if (s->pos >= s->len)
                return fail_at(s, s->pos, error, "the file ends inside the object (cut short?)");
            if (s->buf[s->pos] == '}') {
                s->pos++;
                break;
            }
            if (!expect(s, ',', "after a member", error))
                return FALSE;
        }
    skip_blanks(s);
    if (s->pos < s->len)
        return fail_at(s, s->pos, error, "text after the trace's object");
    if (!seen_events)
        return fail_at(s, 0, error,
                       "a JSON object without \"traceEvents\": not a PyTorch profiler trace");
    return TRUE;
}

/* ---- Into the log ---- */

static int
compare_spans(gconstpointer a, gconstpointer b)
{
    const Span *x = a;
    const Span *y = b;
    return (x->start > y->start) - (x->start < y->start);
}

/* Time at least one span covers. */
static double
busy_us(GArray *spans)
{
    g_array_sort(spans, compare_spans);
    double total = 0;
    double start = 0;
    double end = -INFINITY;
    for (guint i = 0; i < spans->len; i++) {
        const Span *sp = &g_array_index(spans, Span, i);
        if (sp->start > end) {
            if (end > start)
                total += end - start;
            start = sp->start;
            end = sp->end;
        }
        else
            end = MAX(end, sp->end);
    }
    if (spans->len > 0 && end > start)
        total += end - start;
    return total;
}

static gboolean
add_recs(CsNcclLog *log, GArray *recs, const char *label, GError **error)
{
    g_autoptr(GHashTable) ids = g_hash_table_new(g_str_hash, g_str_equal);
    for (guint i = 0; i < recs->len; i++) {
        const Rec *r = &g_array_index(recs, Rec, i);
        CsNcclLogLine l = { 0 };
        g_strlcpy(l.rank, label, sizeof(l.rank));
        l.op_count = i + 1;
        l.nranks = r->group;
        const char *pg = r->pg != NULL ? r->pg : "";
        gpointer id = g_hash_table_lookup(ids, pg);
        if (id == NULL) {
            id = GUINT_TO_POINTER(g_hash_table_size(ids) + 1);
            g_hash_table_insert(ids, (gpointer)pg, id);
        }
        l.comm = GPOINTER_TO_UINT(id);
        int k = -1;
        for (gsize j = 0; j < G_N_ELEMENTS(collectives) && k < 0; j++)
            if (strcmp(r->coll, collectives[j].torch) == 0)
                k = (int)j;
        g_strlcpy(l.name, k >= 0 ? collectives[k].nccl : r->coll, sizeof(l.name));
        l.datatype = nccl_dtype(r->dtype);
        if (k >= 0 && l.datatype < 0) {
            g_set_error(error, CS_KINETO_ERROR, CS_KINETO_ERROR_MALFORMED,
                        "%s: dtype \"%s\" has no NCCL datatype (Char, Byte, Bool, Int, Long, "
                        "Half, Float, Double, BFloat16, Float8_e4m3fn, Float8_e5m2)",
                        r->where, r->dtype);
            return FALSE;
        }
        if (l.datatype < 0)
            l.datatype = 1; /* a call left out: its size is never used */
        double count = r->in;
        if (k >= 0 && collectives[k].rule == COUNT_OUT)
            count = r->out;
        else if (k >= 0 && collectives[k].rule == COUNT_IN_SPLIT)
            count = ceil(r->in / r->group);
        const int size = cs_nccl_log_datatype_size(l.datatype);
        if (count * size > (double)CS_NCCL_LOG_MAX_BYTES) {
            g_set_error(error, CS_KINETO_ERROR, CS_KINETO_ERROR_MALFORMED,
                        "%s: %.0f elements of %d bytes: more than 1 PiB", r->where, count, size);
            return FALSE;
        }
        l.count = (guint64)count;
        if (!cs_nccl_log_add_call(log, &l, r->pg != NULL ? r->pg : "(unnamed)", r->pg_ranks,
                                  r->where, error))
            return FALSE;
    }
    return TRUE;
}

/* Maps @path into @buf/@len (@mapped holds it), a regular file of at most the cap. */
static gboolean
open_trace(const char *path, GMappedFile **mapped, const char **buf, gsize *len, GError **error)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        int saved = errno;
        g_set_error(error, CS_KINETO_ERROR, CS_KINETO_ERROR_IO, "%s: cannot read: %s", path,
                    g_strerror(saved));
        return FALSE;
    }
    if (!S_ISREG(st.st_mode)) {
        g_set_error(error, CS_KINETO_ERROR, CS_KINETO_ERROR_IO,
                    "%s: cannot read: not a regular file", path);
        return FALSE;
    }
    if ((guint64)st.st_size > CS_KINETO_MAX_BYTES) {
        g_set_error(error, CS_KINETO_ERROR, CS_KINETO_ERROR_IO,
                    "%s: a trace of %.2f GiB, more than the %" G_GSIZE_FORMAT
                    " GiB collsim reads: profile fewer steps (torch.profiler.schedule's active=)",
                    path, (double)st.st_size / (1 << 30), CS_KINETO_MAX_BYTES >> 30);
        return FALSE;
    }
    if (st.st_size == 0) {
        *buf = "";
        *len = 0;
        return TRUE;
    }
    g_autoptr(GError) local = NULL;
    *mapped = g_mapped_file_new(path, FALSE, &local);
    if (*mapped == NULL) {
        g_set_error(error, CS_KINETO_ERROR, CS_KINETO_ERROR_IO, "%s: cannot read: %s", path,
                    local->message);
        return FALSE;
    }
    *buf = g_mapped_file_get_contents(*mapped);
    *len = g_mapped_file_get_length(*mapped);
    return TRUE;
}

gboolean
cs_kineto_looks_like_trace(const char *path)
{
    g_return_val_if_fail(path != NULL, FALSE);
    if (strcmp(path, "-") == 0 || !g_file_test(path, G_FILE_TEST_IS_REGULAR))
        return FALSE;
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return FALSE;
    int c = getc(f);
    if (c == 0x1f)
        c = getc(f) == 0x8b ? '{' : 0;
    else
        while (c == ' ' || c == '\n' || c == '\r' || c == '\t')
            c = getc(f);
    fclose(f);
    return c == '{';
}

gboolean
cs_kineto_add_data(CsNcclLog *log, const char *origin, const char *buf, gsize len,
                   CsKinetoInfo *info, GError **error)
{
    g_return_val_if_fail(log != NULL && origin != NULL && (buf != NULL || len == 0), FALSE);
    g_return_val_if_fail(info != NULL, FALSE);
    memset(info, 0, sizeof(*info));
    if (len >= 2 && (guchar)buf[0] == 0x1f && (guchar)buf[1] == 0x8b) {
        g_set_error(error, CS_KINETO_ERROR, CS_KINETO_ERROR_IO,
                    "%s: gzip data: decompress it first (gunzip -k %s)", origin, origin);
        return FALSE;
    }
    Scan s = { .buf = len > 0 ? buf : "", .len = len, .path = origin, .line = 1 };
    Collect c = { .kernels = g_array_new(FALSE, TRUE, sizeof(Rec)),
                  .cpu_ops = g_array_new(FALSE, TRUE, sizeof(Rec)),
                  .compute = g_array_new(FALSE, FALSE, sizeof(Span)),
                  .steps = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
                  .dist_rank = -1 };
    g_array_set_clear_func(c.kernels, rec_clear);
    g_array_set_clear_func(c.cpu_ops, rec_clear);
    gboolean ok = read_trace(&s, &c, error);
    if (ok) {
        GArray *recs = c.kernels->len > 0 ? c.kernels : c.cpu_ops;
        int rank = c.dist_rank;
        if (rank < 0 && recs->len > 0)
            rank = g_array_index(recs, Rec, 0).rank;
        info->rank = rank >= 0 ? g_strdup_printf("%d", rank) : g_strdup(origin);
        info->world_size = c.world_size;
        info->profiler_steps = (int)g_hash_table_size(c.steps);
        info->from_kernels = c.kernels->len > 0;
        info->events = c.events;
        info->collectives = recs->len;
        info->compute_kernels = c.compute->len;
        info->compute_busy_us = busy_us(c.compute);
        ok = add_recs(log, recs, info->rank, error);
    }
    g_array_unref(c.kernels);
    g_array_unref(c.cpu_ops);
    g_array_unref(c.compute);
    g_hash_table_unref(c.steps);
    return ok;
}

gboolean
cs_kineto_add_file(CsNcclLog *log, const char *path, CsKinetoInfo *info, GError **error)
{
    g_return_val_if_fail(log != NULL && path != NULL && info != NULL, FALSE);
    memset(info, 0, sizeof(*info));
    g_autoptr(GMappedFile) mapped = NULL;
    const char *buf = NULL;
    gsize len = 0;
    if (!open_trace(path, &mapped, &buf, &len, error))
        return FALSE;
    return cs_kineto_add_data(log, path, buf, len, info, error);
}
