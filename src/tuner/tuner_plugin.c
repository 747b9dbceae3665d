// SPDX-License-Identifier: MIT
/* libnccl-tuner-collsim.so: an NCCL tuner plugin (ABI v3, v4, v5) that loads the table
 * `collsim select --emit json` writes (COLLSIM_TUNER_FILE) and steers NCCL to the chosen
 * algorithm, protocol and channel count per collective and size. Plain C and cJSON, no GLib:
 * it lives inside every process that loads NCCL.
 *
 * NCCL hands getCollInfo its cost table float[algo][proto] of predicted times (-1 = entry not
 * usable) and then takes the minimum; the plugin sets the chosen entry to 0 and touches
 * nothing else, never an entry NCCL marked -1. Anything wrong with the file (missing, not
 * JSON, a bad field, another communicator size) is logged once and leaves NCCL's own choice:
 * init always succeeds, since a failing init would fail the communicator. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nccl_tuner_abi.h"

#define EXPORT __attribute__((visibility("default")))
#define PLUGIN_NAME "collsim"
#define N_COLLS 5 /* broadcast, reduce, allgather, reducescatter, allreduce */

/* ---- The table ---- */

typedef struct {
    size_t min_bytes;
    size_t max_bytes;
    int algo;     /* NCCL_ALGO_* index */
    int proto;    /* NCCL_PROTO_* index */
    int channels; /* <= 0: leave NCCL's count */
} Range;

typedef struct {
    Range *ranges;
    int n_ranges;
} CollTable;

typedef struct {
    CsNcclLogger log;
    size_t n_ranks;
    size_t n_nodes;
    char *origin;   /* file, for messages */
    char *topology; /* the table's topology name */
    CollTable colls[N_COLLS];
} Context;

/* ncclFunc_t order; the spelling of "collective" in the table. */
static const char *const coll_names[N_COLLS] = {
    "broadcast", "reduce", "allgather", "reducescatter", "allreduce",
};
/* NCCL_ALGO_* order; the spelling of "algorithm" in nccl_ranges (the tuner CSV's). */
static const char *const algo_names[] = {
    "tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat",
};
/* NCCL_PROTO_* order. */
static const char *const proto_names[] = { "ll", "ll128", "simple" };

#define N_ALGO_NAMES ((int)(sizeof(algo_names) / sizeof(algo_names[0])))
#define N_PROTO_NAMES ((int)(sizeof(proto_names) / sizeof(proto_names[0])))

static void say(const Context *ctx, CsNcclLogLevel level, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Through NCCL's logger, so messages obey NCCL_DEBUG / NCCL_DEBUG_SUBSYS=TUNING. */
static void
say(const Context *ctx, CsNcclLogLevel level, int line, const char *fmt, ...)
{
    char msg[512];
    va_list ap;

    if (ctx->log == NULL)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    ctx->log(level, CS_NCCL_LOG_TUNING, __FILE__, line, "TUNER/collsim: %s", msg);
}

static void
free_tables(Context *ctx)
{
    for (int c = 0; c < N_COLLS; c++) {
        free(ctx->colls[c].ranges);
        ctx->colls[c].ranges = NULL;
        ctx->colls[c].n_ranges = 0;
    }
    free(ctx->topology);
    ctx->topology = NULL;
}

static int
index_of(const char *name, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (strcasecmp(name, names[i]) == 0)
            return i;
    return -1;
}

/* A whole non-negative number that a size_t holds exactly (cJSON keeps numbers as double). */
static int
get_size(const cJSON *v, size_t *out)
{
    if (!cJSON_IsNumber(v))
        return 0;
    const double d = v->valuedouble;
    if (!(d >= 0.0) || d > 9007199254740992.0 || floor(d) != d)
        return 0;
    *out = (size_t)d;
    return 1;
}

/* One entry of nccl_ranges; on failure writes what is wrong into @why. */
static int
load_range(const cJSON *item, Range *r, char *why, size_t why_len)
{
    const cJSON *min = cJSON_GetObjectItemCaseSensitive(item, "min_bytes");
    const cJSON *max = cJSON_GetObjectItemCaseSensitive(item, "max_bytes");
    const cJSON *algo = cJSON_GetObjectItemCaseSensitive(item, "algorithm");
    const cJSON *proto = cJSON_GetObjectItemCaseSensitive(item, "protocol");
    const cJSON *channels = cJSON_GetObjectItemCaseSensitive(item, "channels");

    if (!cJSON_IsObject(item)) {
        snprintf(why, why_len, "not an object");
        return 0;
    }
    if (!get_size(min, &r->min_bytes)) {
        snprintf(why, why_len, "min_bytes is not a whole number of bytes");
        return 0;
    }
    /* null = no upper bound (the last range). */
    if (cJSON_IsNull(max))
        r->max_bytes = SIZE_MAX;
    else if (!get_size(max, &r->max_bytes)) {
        snprintf(why, why_len, "max_bytes is not a whole number of bytes or null");
        return 0;
    }
    if (r->max_bytes < r->min_bytes) {
        snprintf(why, why_len, "max_bytes is below min_bytes");
        return 0;
    }
    if (!cJSON_IsString(algo)
        || (r->algo = index_of(algo->valuestring, algo_names, N_ALGO_NAMES)) < 0) {
        snprintf(why, why_len,
                 "algorithm is not one of NCCL's (tree, ring, collnet_direct, "
                 "collnet_chain, nvls, nvls_tree, pat)");
        return 0;
    }
    if (!cJSON_IsString(proto)
        || (r->proto = index_of(proto->valuestring, proto_names, N_PROTO_NAMES)) < 0) {
        snprintf(why, why_len, "protocol is not ll, ll128 or simple");
        return 0;
    }
    r->channels = 0;
    /* Checked in double before the conversion: 1e300 or -inf must not reach (int). */
    if (channels != NULL && !cJSON_IsNull(channels)) {
        if (!cJSON_IsNumber(channels) || floor(channels->valuedouble) != channels->valuedouble
            || channels->valuedouble > 64.0 || channels->valuedouble < -1.0) {
            snprintf(why, why_len, "channels is not a whole number from -1 (NCCL's count) to 64");
            return 0;
        }
        r->channels = (int)channels->valuedouble;
    }
    return 1;
}

/* Whether @table names this communicator: "nranks"/"nnodes" absent or -1 match any. */
static int
table_matches(const Context *ctx, const cJSON *table)
{
    const cJSON *nranks = cJSON_GetObjectItemCaseSensitive(table, "nranks");
    const cJSON *nnodes = cJSON_GetObjectItemCaseSensitive(table, "nnodes");

    /* Compared as doubles: a count out of size_t's range (1e300) or with a fraction matches
     * no communicator, and is never converted. */
    if (cJSON_IsNumber(nranks) && nranks->valuedouble >= 0
        && nranks->valuedouble != (double)ctx->n_ranks)
        return 0;
    if (cJSON_IsNumber(nnodes) && nnodes->valuedouble >= 0
        && nnodes->valuedouble != (double)ctx->n_nodes)
        return 0;
    return 1;
}

/* @table's communicator shape into @n_ranks and @n_nodes when it names both as whole numbers
 * of at least 1 (a wildcard or a malformed count is no shape to be near to). */
static int
table_shape(const cJSON *table, size_t *n_ranks, size_t *n_nodes)
{
    const cJSON *nranks = cJSON_GetObjectItemCaseSensitive(table, "nranks");
    const cJSON *nnodes = cJSON_GetObjectItemCaseSensitive(table, "nnodes");

    if (!get_size(nranks, n_ranks) || !get_size(nnodes, n_nodes))
        return 0;
    return *n_ranks >= 1 && *n_nodes >= 1;
}

/* How far apart two counts are: |log(a / b)|, since algorithm costs scale with ratios of
 * counts (log2 P tree depths, P-1 ring steps), not with their differences. */
static double
count_distance(size_t a, size_t b)
{
    return fabs(log((double)a / (double)b));
}

/* The nearest table to this communicator when none names it exactly, by a rule that changes
 * one of the two counts only (docs/communicator-shapes.md):
 *  1. tables for the same number of nodes: the nearest rank count;
 *  2. else, on several nodes, tables for the same ranks per node on several nodes: the
 *     nearest node count (one node and several never stand for each other: the network
 *     algorithms and NCCL's inter-node latencies exist only on several);
 *  ties go to the smaller count. NULL when neither rule finds a table. @why says which rule. */
static const cJSON *
nearest_table(const Context *ctx, const cJSON *const *tables, int n_tables, const char **why)
{
    const cJSON *best = NULL;
    size_t best_count = 0;
    double best_distance = 0.0;
    size_t n_ranks;
    size_t n_nodes;

    if (ctx->n_ranks < 1 || ctx->n_nodes < 1)
        return NULL;
    for (int i = 0; i < n_tables; i++) {
        const cJSON *t = tables[i];
        if (!cJSON_IsObject(t) || !table_shape(t, &n_ranks, &n_nodes) || n_nodes != ctx->n_nodes)
            continue;
        const double d = count_distance(n_ranks, ctx->n_ranks);
        if (best == NULL || d < best_distance || (d == best_distance && n_ranks < best_count)) {
            best = t;
            best_distance = d;
            best_count = n_ranks;
        }
    }
    if (best != NULL) {
        *why = "the same number of nodes";
        return best;
    }
    if (ctx->n_nodes < 2 || ctx->n_ranks % ctx->n_nodes != 0)
        return NULL;
    for (int i = 0; i < n_tables; i++) {
        const cJSON *t = tables[i];
        if (!cJSON_IsObject(t) || !table_shape(t, &n_ranks, &n_nodes) || n_nodes < 2
            || n_ranks % n_nodes != 0 || n_ranks / n_nodes != ctx->n_ranks / ctx->n_nodes)
            continue;
        const double d = count_distance(n_nodes, ctx->n_nodes);
        if (best == NULL || d < best_distance || (d == best_distance && n_nodes < best_count)) {
            best = t;
            best_distance = d;
            best_count = n_nodes;
        }
    }
    *why = "the same ranks per node";
    return best;
}

/* Loads the nccl_ranges of every collective of @table; all or nothing. */
static int
load_table(Context *ctx, const cJSON *table, char *why, size_t why_len)
{
    const cJSON *colls = cJSON_GetObjectItemCaseSensitive(table, "collectives");
    const cJSON *topology = cJSON_GetObjectItemCaseSensitive(table, "topology");
    const cJSON *coll;
    int index = 0;

    if (!cJSON_IsArray(colls)) {
        snprintf(why, why_len, "no \"collectives\" array");
        return 0;
    }
    if (cJSON_IsString(topology))
        ctx->topology = strdup(topology->valuestring);
    cJSON_ArrayForEach(coll, colls)
    {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(coll, "collective");
        const cJSON *ranges = cJSON_GetObjectItemCaseSensitive(coll, "nccl_ranges");
        const cJSON *item;
        int c;

        if (!cJSON_IsString(name)) {
            snprintf(why, why_len, "collectives[%d]: no \"collective\" name", index);
            return 0;
        }
        c = index_of(name->valuestring, coll_names, N_COLLS);
        /* Scatter, gather, all-to-all: NCCL does not tune them; skip quietly. */
        if (c < 0 || ranges == NULL || cJSON_IsNull(ranges)) {
            index++;
            continue;
        }
        if (!cJSON_IsArray(ranges)) {
            snprintf(why, why_len, "collectives[%d].nccl_ranges is not an array", index);
            return 0;
        }
        const int n = cJSON_GetArraySize(ranges);
        CollTable *t = &ctx->colls[c];
        free(t->ranges);
        t->ranges = n > 0 ? calloc((size_t)n, sizeof(Range)) : NULL;
        t->n_ranges = 0;
        if (n > 0 && t->ranges == NULL) {
            snprintf(why, why_len, "out of memory");
            return 0;
        }
        cJSON_ArrayForEach(item, ranges)
        {
            char what[160];
            if (!load_range(item, &t->ranges[t->n_ranges], what, sizeof(what))) {
                snprintf(why, why_len, "collectives[%d].nccl_ranges[%d]: %s", index, t->n_ranges,
                         what);
                return 0;
            }
            t->n_ranges++;
        }
        index++;
    }
    return 1;
}

/* The largest table file read: a table of every collective at one range per size class is a
 * few KiB; anything near this is not a table, and it is read inside NCCL's process. */
#define MAX_FILE_BYTES ((size_t)16 << 20)

/* @path's contents (malloc'ed, NUL-terminated) if it is a regular file of at most
 * MAX_FILE_BYTES; otherwise NULL and @why. A device (/dev/zero) is refused before any read,
 * and a FIFO is opened without blocking (no writer must not hang NCCL's init) and refused. */
static char *
read_file(const char *path, char *why, size_t why_len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    struct stat st;
    char *text = NULL;
    size_t len = 0;

    if (fd < 0) {
        snprintf(why, why_len, "cannot open: %s", strerror(errno));
        return NULL;
    }
    if (fstat(fd, &st) != 0) {
        snprintf(why, why_len, "cannot stat: %s", strerror(errno));
        goto out_close;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(why, why_len, "not a regular file (%s)",
                 S_ISDIR(st.st_mode)    ? "a directory"
                 : S_ISFIFO(st.st_mode) ? "a FIFO"
                 : S_ISCHR(st.st_mode)  ? "a character device"
                                        : "a device or socket");
        goto out_close;
    }
    if ((unsigned long long)st.st_size > MAX_FILE_BYTES) {
        snprintf(why, why_len, "%lld bytes, more than the %zu a table may have",
                 (long long)st.st_size, MAX_FILE_BYTES);
        goto out_close;
    }
    /* What the fstat saw, and no more: a file growing meanwhile cannot push past the cap. */
    const size_t size = (size_t)st.st_size;
    text = malloc(size + 1);
    if (text == NULL) {
        snprintf(why, why_len, "out of memory");
        goto out_close;
    }
    while (len < size) {
        const ssize_t got = read(fd, text + len, size - len);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            snprintf(why, why_len, "read error: %s", strerror(errno));
            goto out_free;
        }
        if (got == 0)
            break;
        len += (size_t)got;
    }
    text[len] = '\0';
    close(fd);
    return text;

out_free:
    free(text);
    text = NULL;
out_close:
    close(fd);
    return text;
}

/* Reads COLLSIM_TUNER_FILE into @ctx; logs and leaves the tables empty on any problem. */
static void
load(Context *ctx)
{
    const char *path = getenv("COLLSIM_TUNER_FILE");
    char why[256] = "";
    char *text;
    cJSON *root;
    const cJSON *chosen = NULL;
    const char *near = NULL; /* why a nearest table stands in, NULL for an exact one */
    size_t near_ranks = 0;
    size_t near_nodes = 0;

    if (path == NULL || *path == '\0') {
        say(ctx, CS_NCCL_LOG_INFO, __LINE__,
            "COLLSIM_TUNER_FILE is not set; NCCL keeps its own choices");
        return;
    }
    ctx->origin = strdup(path);
    text = read_file(path, why, sizeof(why));
    if (text == NULL) {
        say(ctx, CS_NCCL_LOG_WARN, __LINE__, "%s: %s; NCCL keeps its own choices", path, why);
        return;
    }
    root = cJSON_Parse(text);
    if (root == NULL) {
        const char *at = cJSON_GetErrorPtr();
        long offset = at != NULL && at >= text ? (long)(at - text) : -1;
        say(ctx, CS_NCCL_LOG_WARN, __LINE__,
            "%s: not valid JSON (near byte %ld); NCCL keeps its own choices", path, offset);
        free(text);
        return;
    }
    free(text);

    /* One table, or an array of tables for several communicator sizes. */
    if (cJSON_IsArray(root)) {
        const cJSON *t;
        cJSON_ArrayForEach(t, root)
        {
            if (cJSON_IsObject(t) && table_matches(ctx, t)) {
                chosen = t;
                break;
            }
        }
    }
    else if (cJSON_IsObject(root) && table_matches(ctx, root)) {
        chosen = root;
    }
    /* No exact table: the nearest (a file of one table is a list of one). */
    if (chosen == NULL && (cJSON_IsArray(root) || cJSON_IsObject(root))) {
        const int n = cJSON_IsArray(root) ? cJSON_GetArraySize(root) : 1;
        const cJSON **tables = calloc((size_t)(n > 0 ? n : 1), sizeof(*tables));
        const cJSON *t;
        int k = 0;
        if (tables != NULL) {
            if (cJSON_IsArray(root))
                for (t = root->child; t != NULL && k < n; t = t->next)
                    tables[k++] = t;
            else
                tables[k++] = root;
            chosen = nearest_table(ctx, tables, k, &near);
            if (chosen != NULL)
                table_shape(chosen, &near_ranks, &near_nodes);
            free(tables);
        }
    }
    if (!cJSON_IsObject(root) && !cJSON_IsArray(root)) {
        say(ctx, CS_NCCL_LOG_WARN, __LINE__,
            "%s: not a collsim table (expected an object); NCCL keeps its own choices", path);
    }
    else if (chosen == NULL) {
        say(ctx, CS_NCCL_LOG_INFO, __LINE__,
            "%s: no table for %zu ranks on %zu nodes, nor one near it; NCCL keeps its own "
            "choices",
            path, ctx->n_ranks, ctx->n_nodes);
    }
    else if (!load_table(ctx, chosen, why, sizeof(why))) {
        free_tables(ctx);
        say(ctx, CS_NCCL_LOG_WARN, __LINE__, "%s: %s; NCCL keeps its own choices", path, why);
    }
    else {
        int n = 0;
        for (int c = 0; c < N_COLLS; c++)
            n += ctx->colls[c].n_ranges;
        if (near != NULL)
            say(ctx, CS_NCCL_LOG_INFO, __LINE__,
                "%s: no table for %zu ranks on %zu nodes; loaded %d ranges (topology %s) of "
                "the nearest, for %zu ranks on %zu nodes (%s)",
                path, ctx->n_ranks, ctx->n_nodes, n, ctx->topology != NULL ? ctx->topology : "?",
                near_ranks, near_nodes, near);
        else
            say(ctx, CS_NCCL_LOG_INFO, __LINE__,
                "%s: loaded %d ranges (topology %s) for %zu ranks "
                "on %zu nodes",
                path, n, ctx->topology != NULL ? ctx->topology : "?", ctx->n_ranks, ctx->n_nodes);
    }
    cJSON_Delete(root);
}

/* ---- Plugin entry points ---- */

static CsNcclResult
context_new(size_t n_ranks, size_t n_nodes, CsNcclLogger log, void **context)
{
    Context *ctx;

    if (context == NULL)
        return CS_NCCL_INVALID_ARGUMENT;
    ctx = calloc(1, sizeof(Context));
    if (ctx == NULL)
        return CS_NCCL_SYSTEM_ERROR;
    ctx->log = log;
    ctx->n_ranks = n_ranks;
    ctx->n_nodes = n_nodes;
    load(ctx);
    *context = ctx;
    return CS_NCCL_SUCCESS;
}

static CsNcclResult
init_v3(size_t n_ranks, size_t n_nodes, CsNcclLogger log, void **context)
{
    return context_new(n_ranks, n_nodes, log, context);
}

static CsNcclResult
init_v5(void **context, uint64_t comm_id, size_t n_ranks, size_t n_nodes, CsNcclLogger log,
        CsNcclNvlDomainInfoV5 *nvl_domain_info, CsNcclTunerConstantsV5 *constants)
{
    (void)comm_id;
    (void)nvl_domain_info;
    /* NCCL's constants are left alone: the table overrides choices, not the model. */
    (void)constants;
    return context_new(n_ranks, n_nodes, log, context);
}

static CsNcclResult
get_coll_info(void *context, CsNcclColl coll_type, size_t n_bytes, int num_pipe_ops,
              float **coll_cost_table, int num_algo, int num_proto, int reg_buff, int *n_channels)
{
    const Context *ctx = context;
    const CollTable *t;
    float *table = (float *)coll_cost_table;

    (void)num_pipe_ops;
    (void)reg_buff;
    if (ctx == NULL || table == NULL)
        return CS_NCCL_SUCCESS;
    if ((int)coll_type < 0 || (int)coll_type >= N_COLLS)
        return CS_NCCL_SUCCESS;
    t = &ctx->colls[coll_type];
    for (int i = 0; i < t->n_ranges; i++) {
        const Range *r = &t->ranges[i];
        if (n_bytes < r->min_bytes || n_bytes > r->max_bytes)
            continue;
        if (r->algo >= num_algo || r->proto >= num_proto) {
            say(ctx, CS_NCCL_LOG_INFO, __LINE__,
                "%s %zu B: %s/%s is outside this NCCL's table (%d x %d); NCCL's choice kept",
                coll_names[coll_type], n_bytes, algo_names[r->algo], proto_names[r->proto],
                num_algo, num_proto);
            return CS_NCCL_SUCCESS;
        }
        float *entry = &table[r->algo * num_proto + r->proto];
        if (*entry < 0.0f) {
            say(ctx, CS_NCCL_LOG_INFO, __LINE__,
                "%s %zu B: %s/%s is not usable here (NCCL marked it -1); NCCL's choice kept",
                coll_names[coll_type], n_bytes, algo_names[r->algo], proto_names[r->proto]);
            return CS_NCCL_SUCCESS;
        }
        *entry = 0.0f;
        if (r->channels > 0 && n_channels != NULL)
            *n_channels = r->channels;
        if (r->channels > 0)
            say(ctx, CS_NCCL_LOG_INFO, __LINE__, "%s %zu B -> %s/%s, %d channels (%s)",
                coll_names[coll_type], n_bytes, algo_names[r->algo], proto_names[r->proto],
                r->channels, ctx->topology != NULL ? ctx->topology : ctx->origin);
        else
            say(ctx, CS_NCCL_LOG_INFO, __LINE__, "%s %zu B -> %s/%s, NCCL's channels (%s)",
                coll_names[coll_type], n_bytes, algo_names[r->algo], proto_names[r->proto],
                ctx->topology != NULL ? ctx->topology : ctx->origin);
        return CS_NCCL_SUCCESS;
    }
    return CS_NCCL_SUCCESS;
}

static CsNcclResult
get_coll_info_v3(void *context, CsNcclColl coll_type, size_t n_bytes, int num_pipe_ops,
                 float **coll_cost_table, int num_algo, int num_proto, int *n_channels)
{
    return get_coll_info(context, coll_type, n_bytes, num_pipe_ops, coll_cost_table, num_algo,
                         num_proto, 0, n_channels);
}

static CsNcclResult
destroy(void *context)
{
    Context *ctx = context;

    if (ctx == NULL)
        return CS_NCCL_SUCCESS;
    free_tables(ctx);
    free(ctx->origin);
    free(ctx);
    return CS_NCCL_SUCCESS;
}

EXPORT const CsNcclTunerV3 ncclTunerPlugin_v3 = {
    .name = PLUGIN_NAME,
    .init = init_v3,
    .get_coll_info = get_coll_info_v3,
    .destroy = destroy,
};

EXPORT const CsNcclTunerV4 ncclTunerPlugin_v4 = {
    .name = PLUGIN_NAME,
    .init = init_v3,
    .get_coll_info = get_coll_info,
    .destroy = destroy,
};

EXPORT const CsNcclTunerV5 ncclTunerPlugin_v5 = {
    .name = PLUGIN_NAME,
    .init = init_v5,
    .get_coll_info = get_coll_info,
    .finalize = destroy,
};
