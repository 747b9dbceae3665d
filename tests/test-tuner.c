// SPDX-License-Identifier: MIT
/* The NCCL tuner plugin, loaded as NCCL loads it (dlopen + dlsym of ncclTunerPlugin_v3/4/5)
 * and driven with hand-built cost tables: the chosen entry goes to 0, every other entry and
 * every -1 entry stays, and bad or missing table files leave NCCL's choice alone. */
#include "config.h"

#include <cjson/cJSON.h>
#include <dlfcn.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tuner/nccl_tuner_abi.h"

#define N_ALGOS 7
#define N_PROTOS 3

/* ---- Loading the plugin ---- */

static void *plugin_handle;

static char *
plugin_path(void)
{
    const char *env = g_getenv("COLLSIM_TUNER_PLUGIN");
    if (env != NULL)
        return g_strdup(env);
    return g_test_build_filename(G_TEST_BUILT, "..", "src", "tuner", "libnccl-tuner-collsim.so",
                                 NULL);
}

static const void *
plugin_symbol(const char *name)
{
    if (plugin_handle == NULL) {
        g_autofree char *path = plugin_path();
        plugin_handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (plugin_handle == NULL)
            g_error("cannot load %s: %s", path, dlerror());
    }
    const void *sym = dlsym(plugin_handle, name);
    g_assert_nonnull(sym);
    return sym;
}

static const CsNcclTunerV3 *
v3(void)
{
    return plugin_symbol("ncclTunerPlugin_v3");
}

static const CsNcclTunerV4 *
v4(void)
{
    return plugin_symbol("ncclTunerPlugin_v4");
}

static const CsNcclTunerV5 *
v5(void)
{
    return plugin_symbol("ncclTunerPlugin_v5");
}

/* ---- A logger that remembers what NCCL would have printed ---- */

static GPtrArray *log_lines;
static int log_warnings;

/* printf-like, as NCCL's logger is: @fmt is a format string, handed on to g_strdup_vprintf. */
static void mock_logger(CsNcclLogLevel level, unsigned long flags, const char *file, int line,
                        const char *fmt, ...) G_GNUC_PRINTF(5, 6);

static void
mock_logger(CsNcclLogLevel level, unsigned long flags, const char *file, int line, const char *fmt,
            ...)
{
    va_list ap;
    (void)file;
    (void)line;
    g_assert_cmpuint(flags, ==, CS_NCCL_LOG_TUNING);
    va_start(ap, fmt);
    g_ptr_array_add(log_lines, g_strdup_vprintf(fmt, ap));
    va_end(ap);
    if (level == CS_NCCL_LOG_WARN)
        log_warnings++;
}

static gboolean
log_contains(const char *needle)
{
    for (guint i = 0; i < log_lines->len; i++)
        if (strstr(g_ptr_array_index(log_lines, i), needle) != NULL)
            return TRUE;
    return FALSE;
}

/* ---- Fixture: a table file and a cost table ---- */

typedef struct {
    char *dir;
    char *file;
    float table[N_ALGOS][N_PROTOS];
    float before[N_ALGOS][N_PROTOS];
} Fixture;

/* Times in us as NCCL would hand them, with the entries NCCL could not use at -1: NVLS only
 * with Simple, no CollNet, no PAT, NVLS Tree off on one node. */
static void
fill_table(Fixture *f)
{
    for (int a = 0; a < N_ALGOS; a++)
        for (int p = 0; p < N_PROTOS; p++)
            f->table[a][p] = 10.0f + a * 3.0f + p;
    for (int p = 0; p < N_PROTOS; p++) {
        f->table[CS_NCCL_TUNER_ALGO_COLLNET_DIRECT][p] = -1.0f;
        f->table[CS_NCCL_TUNER_ALGO_COLLNET_CHAIN][p] = -1.0f;
        f->table[CS_NCCL_TUNER_ALGO_NVLS_TREE][p] = -1.0f;
        f->table[CS_NCCL_TUNER_ALGO_PAT][p] = -1.0f;
    }
    f->table[CS_NCCL_TUNER_ALGO_NVLS][CS_NCCL_TUNER_PROTO_LL] = -1.0f;
    f->table[CS_NCCL_TUNER_ALGO_NVLS][CS_NCCL_TUNER_PROTO_LL128] = -1.0f;
    memcpy(f->before, f->table, sizeof(f->table));
}

static void
fixture_setup(Fixture *f, gconstpointer data)
{
    (void)data;
    f->dir = g_dir_make_tmp("collsim-tuner-XXXXXX", NULL);
    g_assert_nonnull(f->dir);
    f->file = g_build_filename(f->dir, "table.json", NULL);
    fill_table(f);
    log_lines = g_ptr_array_new_with_free_func(g_free);
    log_warnings = 0;
    g_unsetenv("COLLSIM_TUNER_FILE");
}

static void
fixture_teardown(Fixture *f, gconstpointer data)
{
    (void)data;
    g_remove(f->file);
    g_rmdir(f->dir);
    g_free(f->file);
    g_free(f->dir);
    g_ptr_array_unref(log_lines);
    log_lines = NULL;
    g_unsetenv("COLLSIM_TUNER_FILE");
}

static void
write_table(Fixture *f, const char *json)
{
    g_autoptr(GError) error = NULL;
    g_file_set_contents(f->file, json, -1, &error);
    g_assert_no_error(error);
    g_setenv("COLLSIM_TUNER_FILE", f->file, TRUE);
}

/* Every entry except (@algo, @proto) as before; (@algo, @proto) at @expect. */
static void
assert_only_changed(const Fixture *f, int algo, int proto, float expect)
{
    for (int a = 0; a < N_ALGOS; a++) {
        for (int p = 0; p < N_PROTOS; p++) {
            if (a == algo && p == proto)
                g_assert_cmpfloat(f->table[a][p], ==, expect);
            else
                g_assert_cmpfloat(f->table[a][p], ==, f->before[a][p]);
        }
    }
}

static void
assert_unchanged(const Fixture *f)
{
    assert_only_changed(f, -1, -1, 0.0f);
}

/* A table for 8 ranks on 1 node in the shape `collsim select --emit json` writes: all-reduce
 * ring/LL up to 64 KiB - 1, ring/LL128 up to 4 MiB - 1, then NVLS/Simple on 16 channels;
 * all-gather ring/Simple everywhere with NCCL's channel count; scatter has no NCCL ranges. */
static const char *const table_8x1
    = "{\n"
      "  \"format\": \"collsim-select\", \"format_version\": 1,\n"
      "  \"collsim_version\": \"0.1.0\", \"topology\": \"dgx-h100x8\",\n"
      "  \"nranks\": 8, \"nnodes\": 1,\n"
      "  \"collectives\": [\n"
      "    { \"collective\": \"allreduce\", \"nccl_ranges\": [\n"
      "      { \"min_bytes\": 0, \"max_bytes\": 65535, \"algorithm\": \"ring\",\n"
      "        \"protocol\": \"ll\", \"channels\": 4 },\n"
      "      { \"min_bytes\": 65536, \"max_bytes\": 4194303, \"algorithm\": \"ring\",\n"
      "        \"protocol\": \"ll128\", \"channels\": 8 },\n"
      "      { \"min_bytes\": 4194304, \"max_bytes\": null, \"algorithm\": \"nvls\",\n"
      "        \"protocol\": \"simple\", \"channels\": 16 } ] },\n"
      "    { \"collective\": \"allgather\", \"nccl_ranges\": [\n"
      "      { \"min_bytes\": 0, \"max_bytes\": null, \"algorithm\": \"ring\",\n"
      "        \"protocol\": \"simple\", \"channels\": null } ] },\n"
      "    { \"collective\": \"scatter\", \"nccl_ranges\": null }\n"
      "  ]\n"
      "}\n";

/* ---- Tests ---- */

static void
test_symbols(void)
{
    g_test_summary("The plugin exports ncclTunerPlugin_v3, _v4 and _v5, named 'collsim'.");
    g_assert_cmpstr(v3()->name, ==, "collsim");
    g_assert_cmpstr(v4()->name, ==, "collsim");
    g_assert_cmpstr(v5()->name, ==, "collsim");
    g_assert_nonnull(v5()->init);
    g_assert_nonnull(v5()->get_coll_info);
    g_assert_nonnull(v5()->finalize);
}

static void
test_apply_v5(Fixture *f, gconstpointer data)
{
    void *ctx = NULL;
    int channels = 0;
    (void)data;

    write_table(f, table_8x1);
    g_assert_cmpint(v5()->init(&ctx, 42, 8, 1, mock_logger, NULL, NULL), ==, CS_NCCL_SUCCESS);
    g_assert_nonnull(ctx);
    g_assert_cmpint(log_warnings, ==, 0);
    g_assert_true(log_contains("loaded 4 ranges"));

    /* 65535 B is the last byte of the ring/LL range. */
    g_assert_cmpint(v5()->get_coll_info(ctx, CS_NCCL_COLL_ALL_REDUCE, 65535, 1, (float **)f->table,
                                        N_ALGOS, N_PROTOS, 0, &channels),
                    ==, CS_NCCL_SUCCESS);
    assert_only_changed(f, CS_NCCL_TUNER_ALGO_RING, CS_NCCL_TUNER_PROTO_LL, 0.0f);
    g_assert_cmpint(channels, ==, 4);
    g_assert_true(log_contains("allreduce 65535 B -> ring/ll, 4 channels (dgx-h100x8)"));

    /* 65536 B is the first byte of ring/LL128. */
    fill_table(f);
    g_assert_cmpint(v5()->get_coll_info(ctx, CS_NCCL_COLL_ALL_REDUCE, 65536, 1, (float **)f->table,
                                        N_ALGOS, N_PROTOS, 1, &channels),
                    ==, CS_NCCL_SUCCESS);
    assert_only_changed(f, CS_NCCL_TUNER_ALGO_RING, CS_NCCL_TUNER_PROTO_LL128, 0.0f);
    g_assert_cmpint(channels, ==, 8);

    /* The open last range: 16 GiB goes to NVLS/Simple. */
    fill_table(f);
    g_assert_cmpint(v5()->get_coll_info(ctx, CS_NCCL_COLL_ALL_REDUCE, (size_t)16 << 30, 1,
                                        (float **)f->table, N_ALGOS, N_PROTOS, 0, &channels),
                    ==, CS_NCCL_SUCCESS);
    assert_only_changed(f, CS_NCCL_TUNER_ALGO_NVLS, CS_NCCL_TUNER_PROTO_SIMPLE, 0.0f);
    g_assert_cmpint(channels, ==, 16);

    /* channels null: the entry is chosen, the channel count is NCCL's (left at 0). */
    fill_table(f);
    channels = 0;
    v5()->get_coll_info(ctx, CS_NCCL_COLL_ALL_GATHER, 1 << 20, 1, (float **)f->table, N_ALGOS,
                        N_PROTOS, 0, &channels);
    assert_only_changed(f, CS_NCCL_TUNER_ALGO_RING, CS_NCCL_TUNER_PROTO_SIMPLE, 0.0f);
    g_assert_cmpint(channels, ==, 0);

    /* Broadcast has no ranges in the table: nothing changes. */
    fill_table(f);
    v5()->get_coll_info(ctx, CS_NCCL_COLL_BROADCAST, 1 << 20, 1, (float **)f->table, N_ALGOS,
                        N_PROTOS, 0, &channels);
    assert_unchanged(f);
    g_assert_cmpint(v5()->finalize(ctx), ==, CS_NCCL_SUCCESS);
}

static void
test_apply_v3_v4(Fixture *f, gconstpointer data)
{
    void *ctx = NULL;
    int channels = 0;
    (void)data;

    write_table(f, table_8x1);
    g_assert_cmpint(v3()->init(8, 1, mock_logger, &ctx), ==, CS_NCCL_SUCCESS);
    g_assert_cmpint(v3()->get_coll_info(ctx, CS_NCCL_COLL_ALL_REDUCE, 1 << 20, 1,
                                        (float **)f->table, N_ALGOS, N_PROTOS, &channels),
                    ==, CS_NCCL_SUCCESS);
    assert_only_changed(f, CS_NCCL_TUNER_ALGO_RING, CS_NCCL_TUNER_PROTO_LL128, 0.0f);
    g_assert_cmpint(channels, ==, 8);
    g_assert_cmpint(v3()->destroy(ctx), ==, CS_NCCL_SUCCESS);

    /* v4: same table, regBuff set. */
    fill_table(f);
    ctx = NULL;
    g_assert_cmpint(v4()->init(8, 1, NULL, &ctx), ==, CS_NCCL_SUCCESS);
    g_assert_cmpint(v4()->get_coll_info(ctx, CS_NCCL_COLL_ALL_REDUCE, 8, 1, (float **)f->table,
                                        N_ALGOS, N_PROTOS, 1, &channels),
                    ==, CS_NCCL_SUCCESS);
    assert_only_changed(f, CS_NCCL_TUNER_ALGO_RING, CS_NCCL_TUNER_PROTO_LL, 0.0f);
    g_assert_cmpint(channels, ==, 4);
    g_assert_cmpint(v4()->destroy(ctx), ==, CS_NCCL_SUCCESS);
}

static void
test_ignored_entry(Fixture *f, gconstpointer data)
{
    void *ctx = NULL;
    int channels = 7;
    (void)data;

    g_test_summary("An entry NCCL marked -1 stays -1 and the channel count is not touched.");
    write_table(f, table_8x1);
    g_assert_cmpint(v5()->init(&ctx, 1, 8, 1, mock_logger, NULL, NULL), ==, CS_NCCL_SUCCESS);
    f->table[CS_NCCL_TUNER_ALGO_NVLS][CS_NCCL_TUNER_PROTO_SIMPLE] = -1.0f;
    memcpy(f->before, f->table, sizeof(f->table));
    v5()->get_coll_info(ctx, CS_NCCL_COLL_ALL_REDUCE, 1 << 30, 1, (float **)f->table, N_ALGOS,
                        N_PROTOS, 0, &channels);
    assert_unchanged(f);
    g_assert_cmpint(channels, ==, 7);
    g_assert_true(log_contains("NCCL marked it -1"));
    v5()->finalize(ctx);
}

static void
test_small_table(Fixture *f, gconstpointer data)
{
    void *ctx = NULL;
    int channels = 0;
    float small[6][N_PROTOS];
    (void)data;

    g_test_summary("An NCCL with fewer algorithms than the chosen index keeps its choice.");
    write_table(f, "{ \"nranks\": 2, \"collectives\": [ { \"collective\": \"allgather\", "
                   "\"nccl_ranges\": [ { \"min_bytes\": 0, \"max_bytes\": null, "
                   "\"algorithm\": \"pat\", \"protocol\": \"simple\", \"channels\": 2 } ] } ] }");
    g_assert_cmpint(v4()->init(2, 2, mock_logger, &ctx), ==, CS_NCCL_SUCCESS);
    for (int a = 0; a < 6; a++)
        for (int p = 0; p < N_PROTOS; p++)
            small[a][p] = 5.0f;
    v4()->get_coll_info(ctx, CS_NCCL_COLL_ALL_GATHER, 4096, 1, (float **)small, 6, N_PROTOS, 0,
                        &channels);
    for (int a = 0; a < 6; a++)
        for (int p = 0; p < N_PROTOS; p++)
            g_assert_cmpfloat(small[a][p], ==, 5.0f);
    g_assert_cmpint(channels, ==, 0);
    g_assert_true(log_contains("outside this NCCL's table"));
    v4()->destroy(ctx);
}

typedef enum {
    FILE_JSON,  /* the file holds @json; NULL: the file does not exist */
    FILE_ZERO,  /* COLLSIM_TUNER_FILE=/dev/zero: endless */
    FILE_FIFO,  /* a FIFO with no writer: opening it for reading blocks */
    FILE_DIR,   /* a directory */
    FILE_LARGE, /* a (sparse) regular file one byte over the 16 MiB cap */
} FileKind;

typedef struct {
    const char *name;
    const char *json;    /* NULL: the file does not exist */
    gboolean warns;      /* a malformed file is a warning; a mismatch is not */
    const char *message; /* part of the logged line */
    FileKind kind;
} BadCase;

/* One range of allreduce with @extra fields, and the table's own @head fields. */
#define ONE_RANGE(head, extra)                                                                     \
    "{ " head " \"collectives\": [ { \"collective\": \"allreduce\", \"nccl_ranges\": [ { "         \
    "\"min_bytes\": 0, \"max_bytes\": null, \"algorithm\": \"ring\", \"protocol\": \"ll\"" extra   \
    " } ] } ] }"

static const BadCase bad_cases[] = {
    { "missing-file", NULL, TRUE, "cannot open", FILE_JSON },
    { "not-json", "{ \"collectives\": [ ", TRUE, "not valid JSON", FILE_JSON },
    { "not-object", "42", TRUE, "not a collsim table", FILE_JSON },
    { "no-collectives", "{ \"nranks\": 8 }", TRUE, "no \"collectives\" array", FILE_JSON },
    { "unknown-algorithm",
      "{ \"collectives\": [ { \"collective\": \"allreduce\", \"nccl_ranges\": [ { \"min_bytes\": 0,"
      " \"max_bytes\": null, \"algorithm\": \"rhd\", \"protocol\": \"simple\" } ] } ] }",
      TRUE, "nccl_ranges[0]: algorithm is not one of NCCL's", FILE_JSON },
    { "unknown-protocol",
      "{ \"collectives\": [ { \"collective\": \"allreduce\", \"nccl_ranges\": [ { \"min_bytes\": 0,"
      " \"max_bytes\": null, \"algorithm\": \"ring\", \"protocol\": \"LL64\" } ] } ] }",
      TRUE, "protocol is not ll, ll128 or simple", FILE_JSON },
    { "negative-size",
      "{ \"collectives\": [ { \"collective\": \"allreduce\", \"nccl_ranges\": [ { \"min_bytes\": "
      "-1,"
      " \"max_bytes\": null, \"algorithm\": \"ring\", \"protocol\": \"ll\" } ] } ] }",
      TRUE, "min_bytes is not a whole number", FILE_JSON },
    { "reversed-range",
      "{ \"collectives\": [ { \"collective\": \"allreduce\", \"nccl_ranges\": [ { \"min_bytes\": 9,"
      " \"max_bytes\": 8, \"algorithm\": \"ring\", \"protocol\": \"ll\" } ] } ] }",
      TRUE, "max_bytes is below min_bytes", FILE_JSON },
    { "bad-channels",
      "{ \"collectives\": [ { \"collective\": \"allreduce\", \"nccl_ranges\": [ { \"min_bytes\": 0,"
      " \"max_bytes\": null, \"algorithm\": \"ring\", \"protocol\": \"ll\", \"channels\": 2.5 } ] "
      "} ] }",
      TRUE, "channels is not a whole number", FILE_JSON },
    /* A good allreduce list followed by a bad allgather one: nothing of the file is used. */
    { "half-good",
      "{ \"collectives\": [ { \"collective\": \"allreduce\", \"nccl_ranges\": [ { \"min_bytes\": 0,"
      " \"max_bytes\": null, \"algorithm\": \"ring\", \"protocol\": \"ll\" } ] },"
      " { \"collective\": \"allgather\", \"nccl_ranges\": { } } ] }",
      TRUE, "collectives[1].nccl_ranges is not an array", FILE_JSON },
    /* Out of int's range: refused before any conversion (was undefined behaviour). */
    { "channels-huge", ONE_RANGE("", ", \"channels\": -1e300"), TRUE,
      "channels is not a whole number", FILE_JSON },
    { "channels-minus-infinity", ONE_RANGE("", ", \"channels\": -1e999"), TRUE,
      "channels is not a whole number", FILE_JSON },
    /* A count no communicator has matches none, without a conversion to size_t. */
    { "nranks-huge", ONE_RANGE("\"nranks\": 1e300,", ""), FALSE, "no table for 8 ranks",
      FILE_JSON },
    { "nnodes-huge", ONE_RANGE("\"nnodes\": 1e300,", ""), FALSE, "no table for 8 ranks",
      FILE_JSON },
    { "nranks-fraction", ONE_RANGE("\"nranks\": 8.5,", ""), FALSE, "no table for 8 ranks",
      FILE_JSON },
    /* Not a table file at all: refused before reading (bounded, never blocking). */
    { "dev-zero", NULL, TRUE, "not a regular file (a character device)", FILE_ZERO },
    { "fifo", NULL, TRUE, "not a regular file (a FIFO)", FILE_FIFO },
    { "directory", NULL, TRUE, "not a regular file (a directory)", FILE_DIR },
    { "too-large", NULL, TRUE, "16777217 bytes, more than the 16777216", FILE_LARGE },
    { "other-size",
      "{ \"nranks\": 16, \"nnodes\": 2, \"collectives\": [ { \"collective\": \"allreduce\","
      " \"nccl_ranges\": [ { \"min_bytes\": 0, \"max_bytes\": null, \"algorithm\": \"ring\","
      " \"protocol\": \"ll\" } ] } ] }",
      FALSE, "no table for 8 ranks on 1 nodes", FILE_JSON },
};

/* Creates @path as a sparse file of @size bytes (nothing written). */
static int
truncate_new(const char *path, gint64 size)
{
    FILE *fp = fopen(path, "w");
    if (fp == NULL)
        return -1;
    int rc = ftruncate(fileno(fp), (off_t)size);
    fclose(fp);
    return rc;
}

static void
test_bad_file(Fixture *f, gconstpointer data)
{
    const BadCase *c = data;
    void *ctx = NULL;
    int channels = 0;

    if (c->json != NULL)
        write_table(f, c->json);
    else
        g_setenv("COLLSIM_TUNER_FILE", f->file, TRUE);
    if (c->kind == FILE_ZERO)
        g_setenv("COLLSIM_TUNER_FILE", "/dev/zero", TRUE);
    else if (c->kind == FILE_FIFO)
        g_assert_cmpint(mkfifo(f->file, 0600), ==, 0);
    else if (c->kind == FILE_DIR)
        g_assert_cmpint(g_mkdir(f->file, 0700), ==, 0);
    else if (c->kind == FILE_LARGE)
        g_assert_cmpint(truncate_new(f->file, ((gint64)16 << 20) + 1), ==, 0);
    g_assert_cmpint(v5()->init(&ctx, 7, 8, 1, mock_logger, NULL, NULL), ==, CS_NCCL_SUCCESS);
    g_assert_nonnull(ctx);
    for (int coll = 0; coll < 5; coll++) {
        v5()->get_coll_info(ctx, (CsNcclColl)coll, 1 << 20, 1, (float **)f->table, N_ALGOS,
                            N_PROTOS, 0, &channels);
        assert_unchanged(f);
        g_assert_cmpint(channels, ==, 0);
    }
    g_assert_cmpint(log_warnings, ==, c->warns ? 1 : 0);
    if (!log_contains(c->message)) {
        for (guint i = 0; i < log_lines->len; i++)
            g_printerr("logged: %s\n", (char *)g_ptr_array_index(log_lines, i));
        g_error("no log line contains '%s'", c->message);
    }
    v5()->finalize(ctx);
}

static void
test_unset(Fixture *f, gconstpointer data)
{
    void *ctx = NULL;
    int channels = 0;
    (void)data;

    g_assert_cmpint(v5()->init(&ctx, 7, 8, 1, mock_logger, NULL, NULL), ==, CS_NCCL_SUCCESS);
    v5()->get_coll_info(ctx, CS_NCCL_COLL_ALL_REDUCE, 1024, 1, (float **)f->table, N_ALGOS,
                        N_PROTOS, 0, &channels);
    assert_unchanged(f);
    g_assert_cmpint(log_warnings, ==, 0);
    g_assert_true(log_contains("COLLSIM_TUNER_FILE is not set"));
    v5()->finalize(ctx);
    /* A NULL context (init never ran) is harmless too. */
    g_assert_cmpint(v5()->get_coll_info(NULL, CS_NCCL_COLL_ALL_REDUCE, 1024, 1, (float **)f->table,
                                        N_ALGOS, N_PROTOS, 0, &channels),
                    ==, CS_NCCL_SUCCESS);
    assert_unchanged(f);
}

static void
test_array_of_tables(Fixture *f, gconstpointer data)
{
    void *ctx = NULL;
    int channels = 0;
    g_autofree char *json = NULL;
    (void)data;

    g_test_summary("A file with several tables applies the one for this communicator.");
    json = g_strdup_printf("[ { \"nranks\": 4, \"nnodes\": 1, \"collectives\": [ "
                           "{ \"collective\": \"allreduce\", \"nccl_ranges\": [ { \"min_bytes\": "
                           "0, \"max_bytes\": null, \"algorithm\": \"tree\", \"protocol\": "
                           "\"ll\" } ] } ] }, %s ]",
                           table_8x1);
    write_table(f, json);
    g_assert_cmpint(v5()->init(&ctx, 7, 4, 1, mock_logger, NULL, NULL), ==, CS_NCCL_SUCCESS);
    v5()->get_coll_info(ctx, CS_NCCL_COLL_ALL_REDUCE, 1 << 30, 1, (float **)f->table, N_ALGOS,
                        N_PROTOS, 0, &channels);
    assert_only_changed(f, CS_NCCL_TUNER_ALGO_TREE, CS_NCCL_TUNER_PROTO_LL, 0.0f);
    v5()->finalize(ctx);

    fill_table(f);
    ctx = NULL;
    g_assert_cmpint(v5()->init(&ctx, 8, 8, 1, mock_logger, NULL, NULL), ==, CS_NCCL_SUCCESS);
    v5()->get_coll_info(ctx, CS_NCCL_COLL_ALL_REDUCE, 1 << 30, 1, (float **)f->table, N_ALGOS,
                        N_PROTOS, 0, &channels);
    assert_only_changed(f, CS_NCCL_TUNER_ALGO_NVLS, CS_NCCL_TUNER_PROTO_SIMPLE, 0.0f);
    g_assert_cmpint(channels, ==, 16);
    v5()->finalize(ctx);
}

static void
test_from_select(Fixture *f, gconstpointer data)
{
    const char *bin = g_getenv("COLLSIM_BIN");
    (void)data;
    if (bin == NULL) {
        g_test_skip("COLLSIM_BIN is not set (run under meson test)");
        return;
    }
    g_test_summary("`collsim select --emit json` is what the plugin reads: for each size the "
                   "entry set to 0 is the one its nccl_ranges name.");
    const char *argv[]
        = { bin,       "select", "--topo", "dgx-h100x8", "--op",     "allreduce,allgather",
            "--model", "nccl",   "--emit", "json",       "--output", f->file,
            NULL };
    int status = 0;
    g_autoptr(GError) error = NULL;
    g_assert_true(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, NULL, NULL,
                               &status, &error));
    g_assert_no_error(error);
    g_assert_cmpint(status, ==, 0);
    g_setenv("COLLSIM_TUNER_FILE", f->file, TRUE);

    g_autofree char *text = NULL;
    g_assert_true(g_file_get_contents(f->file, &text, NULL, &error));
    cJSON *root = cJSON_Parse(text);
    g_assert_nonnull(root);
    void *ctx = NULL;
    g_assert_cmpint(v5()->init(&ctx, 3, 8, 1, mock_logger, NULL, NULL), ==, CS_NCCL_SUCCESS);
    g_assert_cmpint(log_warnings, ==, 0);

    static const char *const algos[]
        = { "tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat" };
    static const char *const protos[] = { "ll", "ll128", "simple" };
    const cJSON *coll;
    int checked = 0;
    cJSON_ArrayForEach(coll, cJSON_GetObjectItem(root, "collectives"))
    {
        const char *name = cJSON_GetObjectItem(coll, "collective")->valuestring;
        const CsNcclColl type
            = strcmp(name, "allreduce") == 0 ? CS_NCCL_COLL_ALL_REDUCE : CS_NCCL_COLL_ALL_GATHER;
        const cJSON *r;
        cJSON_ArrayForEach(r, cJSON_GetObjectItem(coll, "nccl_ranges"))
        {
            const size_t lo = (size_t)cJSON_GetObjectItem(r, "min_bytes")->valuedouble;
            int a = -1;
            int p = -1;
            for (int i = 0; i < N_ALGOS; i++)
                if (strcmp(algos[i], cJSON_GetObjectItem(r, "algorithm")->valuestring) == 0)
                    a = i;
            for (int i = 0; i < N_PROTOS; i++)
                if (strcmp(protos[i], cJSON_GetObjectItem(r, "protocol")->valuestring) == 0)
                    p = i;
            g_assert_cmpint(a, >=, 0);
            g_assert_cmpint(p, >=, 0);
            /* The range's first byte (and 8 B for the first range, NCCL's smallest size). */
            const size_t sizes[] = { lo, lo == 0 ? 8 : lo + 1 };
            for (gsize k = 0; k < G_N_ELEMENTS(sizes); k++) {
                int channels = 0;
                fill_table(f);
                f->table[CS_NCCL_TUNER_ALGO_NVLS_TREE][CS_NCCL_TUNER_PROTO_SIMPLE] = 3.0f;
                memcpy(f->before, f->table, sizeof(f->table));
                if (f->table[a][p] < 0.0f)
                    continue;
                v5()->get_coll_info(ctx, type, sizes[k], 1, (float **)f->table, N_ALGOS, N_PROTOS,
                                    0, &channels);
                assert_only_changed(f, a, p, 0.0f);
                g_assert_cmpint(channels, ==, (int)cJSON_GetObjectItem(r, "channels")->valuedouble);
                checked++;
            }
        }
    }
    g_assert_cmpint(checked, >=, 4);
    v5()->finalize(ctx);
    cJSON_Delete(root);
}

/* A one-range all-reduce table for @nranks on @nnodes choosing @algo/@proto (transfer full). */
static char *
shape_table(int nranks, int nnodes, const char *algo, const char *proto)
{
    return g_strdup_printf("{ \"nranks\": %d, \"nnodes\": %d, \"collectives\": [ { "
                           "\"collective\": \"allreduce\", \"nccl_ranges\": [ { \"min_bytes\": 0, "
                           "\"max_bytes\": null, \"algorithm\": \"%s\", \"protocol\": \"%s\" } ] "
                           "} ] }",
                           nranks, nnodes, algo, proto);
}

/* Setup: tables for 8 ranks on 1 node (tree/LL), 2 on 1 (tree/Simple), 16 on 2 (ring/LL128),
 * 8 on 2 (NVLS/Simple) and 64 on 8 (ring/Simple), each choosing a different entry.
 * Expectation (the rule in docs/communicator-shapes.md, worked by hand): an exact shape takes
 * its table; else the same node count and the nearest rank count by ratio (6 on 1: 8/6 < 6/2,
 * the 8-rank table; 4 on 1: 2 and 8 are both a factor 2 away, the smaller wins; 2 on 2: 8 is
 * nearer than 16); else on several nodes the same ranks per node and the nearest node count
 * (24 on 3, 8 per node: 2 nodes (x1.5) before 8 (x2.67); 48 on 6: 8 nodes (x1.33) before 2
 * (x3); 32 on 4: 2 and 8 both x2, the smaller wins; 12 on 3, 4 per node: the 8-on-2 table);
 * 6 on 3 (2 per node) and 16 on 1 node... on 1 node the same node count. 6 on 3 has no table
 * of 2 per node: NCCL's choice, and one line says so. One node never takes a table of
 * several: 1 rank on 1 node takes the 2-rank one, not a multi-node table. */
static void
test_nearest_shape(Fixture *f, gconstpointer data)
{
    (void)data;
    g_test_summary("Without a table for the communicator, the nearest by the documented rule, "
                   "else NCCL's own choice with one log line.");
    g_autofree char *t81 = shape_table(8, 1, "tree", "ll");
    g_autofree char *t21 = shape_table(2, 1, "tree", "simple");
    g_autofree char *t162 = shape_table(16, 2, "ring", "ll128");
    g_autofree char *t82 = shape_table(8, 2, "nvls", "simple");
    g_autofree char *t648 = shape_table(64, 8, "ring", "simple");
    g_autofree char *json = g_strdup_printf("[ %s, %s, %s, %s, %s ]", t81, t21, t162, t82, t648);
    write_table(f, json);

    enum {
        TREE = CS_NCCL_TUNER_ALGO_TREE,
        RING = CS_NCCL_TUNER_ALGO_RING,
        NVLS = CS_NCCL_TUNER_ALGO_NVLS
    };
    enum {
        LL = CS_NCCL_TUNER_PROTO_LL,
        LL128 = CS_NCCL_TUNER_PROTO_LL128,
        SIMPLE = CS_NCCL_TUNER_PROTO_SIMPLE
    };
    static const struct {
        size_t nranks;
        size_t nnodes;
        int algo; /* -1: NCCL's choice */
        int proto;
        const char *log; /* part of the one line logged at init */
    } cases[] = {
        { 8, 1, TREE, LL, "loaded 1 ranges (topology ?) for 8 ranks on 1 nodes" },
        { 16, 2, RING, LL128, "loaded 1 ranges (topology ?) for 16 ranks on 2 nodes" },
        { 6, 1, TREE, LL, "nearest, for 8 ranks on 1 nodes (the same number of nodes)" },
        { 4, 1, TREE, SIMPLE, "nearest, for 2 ranks on 1 nodes (the same number of nodes)" },
        { 1, 1, TREE, SIMPLE, "nearest, for 2 ranks on 1 nodes (the same number of nodes)" },
        { 16, 1, TREE, LL, "nearest, for 8 ranks on 1 nodes (the same number of nodes)" },
        { 2, 2, NVLS, SIMPLE, "nearest, for 8 ranks on 2 nodes (the same number of nodes)" },
        { 24, 3, RING, LL128, "nearest, for 16 ranks on 2 nodes (the same ranks per node)" },
        { 48, 6, RING, SIMPLE, "nearest, for 64 ranks on 8 nodes (the same ranks per node)" },
        { 32, 4, RING, LL128, "nearest, for 16 ranks on 2 nodes (the same ranks per node)" },
        { 12, 3, NVLS, SIMPLE, "nearest, for 8 ranks on 2 nodes (the same ranks per node)" },
        { 6, 3, -1, -1, "no table for 6 ranks on 3 nodes, nor one near it" },
        { 7, 3, -1, -1, "no table for 7 ranks on 3 nodes, nor one near it" },
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        void *ctx = NULL;
        int channels = 0;
        fill_table(f);
        g_ptr_array_set_size(log_lines, 0);
        g_assert_cmpint(
            v5()->init(&ctx, 1, cases[i].nranks, cases[i].nnodes, mock_logger, NULL, NULL), ==,
            CS_NCCL_SUCCESS);
        g_assert_cmpuint(log_lines->len, ==, 1);
        if (!log_contains(cases[i].log))
            g_error("%zu ranks on %zu nodes: logged '%s', expected '%s'", cases[i].nranks,
                    cases[i].nnodes, (char *)g_ptr_array_index(log_lines, 0), cases[i].log);
        v5()->get_coll_info(ctx, CS_NCCL_COLL_ALL_REDUCE, 1 << 20, 1, (float **)f->table, N_ALGOS,
                            N_PROTOS, 0, &channels);
        if (cases[i].algo < 0)
            assert_unchanged(f);
        else
            assert_only_changed(f, cases[i].algo, cases[i].proto, 0.0f);
        v5()->finalize(ctx);
    }
    g_assert_cmpint(log_warnings, ==, 0);

    /* A file of one table is a list of one: 32 ranks on 4 nodes takes 16 on 2. */
    write_table(f, t162);
    void *ctx = NULL;
    int channels = 0;
    fill_table(f);
    g_assert_cmpint(v5()->init(&ctx, 1, 32, 4, mock_logger, NULL, NULL), ==, CS_NCCL_SUCCESS);
    v5()->get_coll_info(ctx, CS_NCCL_COLL_ALL_REDUCE, 1 << 20, 1, (float **)f->table, N_ALGOS,
                        N_PROTOS, 0, &channels);
    assert_only_changed(f, RING, LL128, 0.0f);
    v5()->finalize(ctx);
}

/* The NCCL entry (algorithm, protocol) that @ranges names for @size, -1 when none. */
static void
range_entry(const cJSON *ranges, size_t size, int *algo, int *proto, int *channels)
{
    static const char *const algos[]
        = { "tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat" };
    static const char *const protos[] = { "ll", "ll128", "simple" };
    const cJSON *r;
    *algo = -1;
    *proto = -1;
    cJSON_ArrayForEach(r, ranges)
    {
        const cJSON *max = cJSON_GetObjectItem(r, "max_bytes");
        if (size < (size_t)cJSON_GetObjectItem(r, "min_bytes")->valuedouble
            || (!cJSON_IsNull(max) && size > (size_t)max->valuedouble))
            continue;
        for (int i = 0; i < N_ALGOS; i++)
            if (strcmp(algos[i], cJSON_GetObjectItem(r, "algorithm")->valuestring) == 0)
                *algo = i;
        for (int i = 0; i < N_PROTOS; i++)
            if (strcmp(protos[i], cJSON_GetObjectItem(r, "protocol")->valuestring) == 0)
                *proto = i;
        *channels = (int)cJSON_GetObjectItem(r, "channels")->valuedouble;
        return;
    }
}

/* Setup: `collsim select --ranks 8,16,8 --nodes 1,2,2 --emit json` on hgx-h100x8-2n, the
 * plugin initialised by NCCL's ABI for each of the three communicators. Expectation: at every
 * probed size the entry set to 0 and the channel count are those of the table for that
 * communicator's nRanks and nNodes, and the tables differ somewhere, so a wrong pick fails. */
static void
test_shapes_from_select(Fixture *f, gconstpointer data)
{
    const char *bin = g_getenv("COLLSIM_BIN");
    (void)data;
    if (bin == NULL) {
        g_test_skip("COLLSIM_BIN is not set (run under meson test)");
        return;
    }
    g_test_summary("Of the tables of several shapes from one select run, the plugin applies the "
                   "one of its communicator's shape.");
    const char *argv[] = { bin,      "select", "--topo",   "hgx-h100x8-2n", "--op",    "allreduce",
                           "-e",     "64M",    "--ranks",  "8,16,8",        "--nodes", "1,2,2",
                           "--emit", "json",   "--output", f->file,         NULL };
    int status = 0;
    g_autoptr(GError) error = NULL;
    g_assert_true(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, NULL, NULL,
                               &status, &error));
    g_assert_no_error(error);
    g_assert_cmpint(status, ==, 0);
    g_setenv("COLLSIM_TUNER_FILE", f->file, TRUE);
    g_autofree char *text = NULL;
    g_assert_true(g_file_get_contents(f->file, &text, NULL, &error));
    cJSON *root = cJSON_Parse(text);
    g_assert_true(cJSON_IsArray(root));
    g_assert_cmpint(cJSON_GetArraySize(root), ==, 3);

    static const size_t sizes[] = { 8, 4096, 65536, 1 << 20, 8 << 20, 64 << 20 };
    int differ = 0;
    for (int k = 0; k < 3; k++) {
        const cJSON *table = cJSON_GetArrayItem(root, k);
        const size_t nranks = (size_t)cJSON_GetObjectItem(table, "nranks")->valuedouble;
        const size_t nnodes = (size_t)cJSON_GetObjectItem(table, "nnodes")->valuedouble;
        const cJSON *ranges = cJSON_GetObjectItem(
            cJSON_GetArrayItem(cJSON_GetObjectItem(table, "collectives"), 0), "nccl_ranges");
        void *ctx = NULL;
        g_assert_cmpint(v5()->init(&ctx, 1, nranks, nnodes, mock_logger, NULL, NULL), ==,
                        CS_NCCL_SUCCESS);
        for (gsize i = 0; i < G_N_ELEMENTS(sizes); i++) {
            int algo;
            int proto;
            int want_channels = 0;
            int channels = 0;
            range_entry(ranges, sizes[i], &algo, &proto, &want_channels);
            g_assert_cmpint(algo, >=, 0);
            /* Every entry usable, so the table's entry is always the one set. */
            for (int a = 0; a < N_ALGOS; a++)
                for (int p = 0; p < N_PROTOS; p++)
                    f->table[a][p] = 10.0f + a * 3.0f + p;
            memcpy(f->before, f->table, sizeof(f->table));
            v5()->get_coll_info(ctx, CS_NCCL_COLL_ALL_REDUCE, sizes[i], 1, (float **)f->table,
                                N_ALGOS, N_PROTOS, 0, &channels);
            assert_only_changed(f, algo, proto, 0.0f);
            g_assert_cmpint(channels, ==, want_channels > 0 ? want_channels : 0);
            /* Against the other tables: does any name another entry here? */
            for (int j = 0; j < 3; j++) {
                int a2;
                int p2;
                int c2 = 0;
                const cJSON *other = cJSON_GetObjectItem(
                    cJSON_GetArrayItem(
                        cJSON_GetObjectItem(cJSON_GetArrayItem(root, j), "collectives"), 0),
                    "nccl_ranges");
                range_entry(other, sizes[i], &a2, &p2, &c2);
                differ += a2 != algo || p2 != proto || c2 != want_channels;
            }
        }
        v5()->finalize(ctx);
    }
    g_assert_cmpint(differ, >, 0);
    cJSON_Delete(root);
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);

    g_test_add_func("/tuner/symbols", test_symbols);
    g_test_add("/tuner/apply/v5", Fixture, NULL, fixture_setup, test_apply_v5, fixture_teardown);
    g_test_add("/tuner/apply/v3-v4", Fixture, NULL, fixture_setup, test_apply_v3_v4,
               fixture_teardown);
    g_test_add("/tuner/apply/ignored-entry", Fixture, NULL, fixture_setup, test_ignored_entry,
               fixture_teardown);
    g_test_add("/tuner/apply/small-table", Fixture, NULL, fixture_setup, test_small_table,
               fixture_teardown);
    g_test_add("/tuner/apply/array-of-tables", Fixture, NULL, fixture_setup, test_array_of_tables,
               fixture_teardown);
    g_test_add("/tuner/apply/nearest-shape", Fixture, NULL, fixture_setup, test_nearest_shape,
               fixture_teardown);
    g_test_add("/tuner/apply/shapes-from-select", Fixture, NULL, fixture_setup,
               test_shapes_from_select, fixture_teardown);
    g_test_add("/tuner/soft/unset", Fixture, NULL, fixture_setup, test_unset, fixture_teardown);
    g_test_add("/tuner/apply/from-select", Fixture, NULL, fixture_setup, test_from_select,
               fixture_teardown);
    for (gsize i = 0; i < G_N_ELEMENTS(bad_cases); i++) {
        g_autofree char *path = g_strdup_printf("/tuner/soft/%s", bad_cases[i].name);
        g_test_add(path, Fixture, &bad_cases[i], fixture_setup, test_bad_file, fixture_teardown);
    }
    const int status = g_test_run();
    if (plugin_handle != NULL)
        dlclose(plugin_handle);
    return status;
}
