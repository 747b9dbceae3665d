// SPDX-License-Identifier: MIT
/* The NCCL tuner plugin under concurrent use, as NCCL drives it: several communicators created
 * at once (one thread per GPU, each calling init, which reads COLLSIM_TUNER_FILE) and
 * getCollInfo called on one communicator's context from several threads at a time. Every
 * answer must be the one a lone call gives. Plain C and POSIX threads (no GLib, which is no
 * part of the plugin), so that scripts/tsan-tuner.sh can build it with the plugin under the
 * thread sanitizer in seconds; the unit suite runs it as built. Usage: test-tuner-threads
 * [PLUGIN.so] (default: $COLLSIM_TUNER_PLUGIN, else the build's plugin beside tests/). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tuner/nccl_tuner_abi.h"

#define N_ALGOS 7
#define N_PROTOS 3
#define N_CALLERS 8     /* threads calling getCollInfo on one context */
#define N_CALLS 20000   /* calls per caller */
#define N_CREATORS 4    /* threads creating and destroying communicators */
#define N_CREATIONS 100 /* init + calls + destroy per creator */

/* 8 ranks on 1 node, as `collsim select --emit json` writes it: all-reduce ring/LL up to
 * 64 KiB - 1 on 4 channels, ring/LL128 up to 4 MiB - 1 on 8, NVLS/Simple above on 16;
 * all-gather ring/Simple with NCCL's channels. */
static const char table_json[]
    = "{\"format\": \"collsim-select\", \"format_version\": 1, \"collsim_version\": \"0.1.0\",\n"
      " \"topology\": \"dgx-h100x8\", \"nranks\": 8, \"nnodes\": 1, \"collectives\": [\n"
      "  {\"collective\": \"allreduce\", \"nccl_ranges\": [\n"
      "   {\"min_bytes\": 0, \"max_bytes\": 65535, \"algorithm\": \"ring\", \"protocol\": \"ll\",\n"
      "    \"channels\": 4},\n"
      "   {\"min_bytes\": 65536, \"max_bytes\": 4194303, \"algorithm\": \"ring\",\n"
      "    \"protocol\": \"ll128\", \"channels\": 8},\n"
      "   {\"min_bytes\": 4194304, \"max_bytes\": null, \"algorithm\": \"nvls\",\n"
      "    \"protocol\": \"simple\", \"channels\": 16}]},\n"
      "  {\"collective\": \"allgather\", \"nccl_ranges\": [\n"
      "   {\"min_bytes\": 0, \"max_bytes\": null, \"algorithm\": \"ring\",\n"
      "    \"protocol\": \"simple\", \"channels\": 0}]}]}\n";

/* What the table says for a call: the entry set to 0 and the channel count (0: NCCL's). */
typedef struct {
    CsNcclColl coll;
    size_t bytes;
    int algo;
    int proto;
    int channels;
} Expect;

static const Expect expects[] = {
    { CS_NCCL_COLL_ALL_REDUCE, 8, CS_NCCL_TUNER_ALGO_RING, CS_NCCL_TUNER_PROTO_LL, 4 },
    { CS_NCCL_COLL_ALL_REDUCE, 65535, CS_NCCL_TUNER_ALGO_RING, CS_NCCL_TUNER_PROTO_LL, 4 },
    { CS_NCCL_COLL_ALL_REDUCE, 65536, CS_NCCL_TUNER_ALGO_RING, CS_NCCL_TUNER_PROTO_LL128, 8 },
    { CS_NCCL_COLL_ALL_REDUCE, 4194304, CS_NCCL_TUNER_ALGO_NVLS, CS_NCCL_TUNER_PROTO_SIMPLE, 16 },
    { CS_NCCL_COLL_ALL_REDUCE, (size_t)1 << 34, CS_NCCL_TUNER_ALGO_NVLS, CS_NCCL_TUNER_PROTO_SIMPLE,
      16 },
    { CS_NCCL_COLL_ALL_GATHER, 1 << 20, CS_NCCL_TUNER_ALGO_RING, CS_NCCL_TUNER_PROTO_SIMPLE, 0 },
    { CS_NCCL_COLL_BROADCAST, 1 << 20, -1, -1, 0 }, /* no ranges: NCCL's choice */
};

static const CsNcclTunerV3 *v3;
static const CsNcclTunerV4 *v4;
static const CsNcclTunerV5 *v5;
static void *shared_ctx;
static atomic_long n_logged;
static atomic_long n_warned;
static atomic_long n_wrong;

/* NCCL's logger may be called from any thread: it formats into its own buffer. printf-like,
 * as NCCL's is. */
static void logger(CsNcclLogLevel level, unsigned long flags, const char *file, int line,
                   const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void
logger(CsNcclLogLevel level, unsigned long flags, const char *file, int line, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    (void)flags;
    (void)file;
    (void)line;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    atomic_fetch_add(&n_logged, 1);
    if (level == CS_NCCL_LOG_WARN) {
        atomic_fetch_add(&n_warned, 1);
        fprintf(stderr, "plugin warning: %s\n", buf);
    }
}

/* One getCollInfo through @version's entry point on a fresh cost table, checked. */
static void
call_and_check(int version, void *ctx, const Expect *x)
{
    float table[N_ALGOS][N_PROTOS];
    int channels = 0;
    CsNcclResult rc;
    for (int a = 0; a < N_ALGOS; a++)
        for (int p = 0; p < N_PROTOS; p++)
            table[a][p] = 10.0f + (float)(a * N_PROTOS + p);
    if (version == 3)
        rc = v3->get_coll_info(ctx, x->coll, x->bytes, 1, (float **)table, N_ALGOS, N_PROTOS,
                               &channels);
    else if (version == 4)
        rc = v4->get_coll_info(ctx, x->coll, x->bytes, 1, (float **)table, N_ALGOS, N_PROTOS, 0,
                               &channels);
    else
        rc = v5->get_coll_info(ctx, x->coll, x->bytes, 1, (float **)table, N_ALGOS, N_PROTOS, 0,
                               &channels);
    int wrong = rc != CS_NCCL_SUCCESS || channels != x->channels;
    for (int a = 0; a < N_ALGOS; a++)
        for (int p = 0; p < N_PROTOS; p++) {
            float want = a == x->algo && p == x->proto ? 0.0f : 10.0f + (float)(a * N_PROTOS + p);
            wrong |= table[a][p] != want;
        }
    if (wrong && atomic_fetch_add(&n_wrong, 1) < 5)
        fprintf(stderr, "v%d coll %d, %zu B: rc %d, %d channels (want %d), or the table\n", version,
                (int)x->coll, x->bytes, (int)rc, channels, x->channels);
}

static void *
caller(void *arg)
{
    long id = (long)arg;
    for (long i = 0; i < N_CALLS; i++)
        call_and_check(5, shared_ctx, &expects[(i + id) % (sizeof(expects) / sizeof(*expects))]);
    return NULL;
}

static void *
creator(void *arg)
{
    long id = (long)arg;
    for (long i = 0; i < N_CREATIONS; i++) {
        int version = 3 + (int)((i + id) % 3);
        void *ctx = NULL;
        CsNcclResult rc;
        if (version == 3)
            rc = v3->init(8, 1, logger, &ctx);
        else if (version == 4)
            rc = v4->init(8, 1, logger, &ctx);
        else
            rc = v5->init(&ctx, (uint64_t)(id * N_CREATIONS + i), 8, 1, logger, NULL, NULL);
        if (rc != CS_NCCL_SUCCESS || ctx == NULL) {
            atomic_fetch_add(&n_wrong, 1);
            continue;
        }
        for (size_t k = 0; k < sizeof(expects) / sizeof(*expects); k++)
            call_and_check(version, ctx, &expects[k]);
        if (version == 5)
            v5->finalize(ctx);
        else if (version == 4)
            v4->destroy(ctx);
        else
            v3->destroy(ctx);
    }
    return NULL;
}

int
main(int argc, char **argv)
{
    char path[4096];
    const char *plugin = argc > 1 ? argv[1] : getenv("COLLSIM_TUNER_PLUGIN");
    if (plugin == NULL) {
        const char *dir = getenv("G_TEST_BUILDDIR");
        snprintf(path, sizeof(path), "%s/../src/tuner/libnccl-tuner-collsim.so",
                 dir != NULL ? dir : ".");
        plugin = path;
    }
    void *handle = dlopen(plugin, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        fprintf(stderr, "cannot load %s: %s\n", plugin, dlerror());
        return 1;
    }
    v3 = dlsym(handle, "ncclTunerPlugin_v3");
    v4 = dlsym(handle, "ncclTunerPlugin_v4");
    v5 = dlsym(handle, "ncclTunerPlugin_v5");
    if (v3 == NULL || v4 == NULL || v5 == NULL) {
        fprintf(stderr, "%s: a ncclTunerPlugin_v3/4/5 symbol is missing\n", plugin);
        return 1;
    }

    char dir[] = "/tmp/collsim-tuner-threads-XXXXXX";
    if (mkdtemp(dir) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    char file[sizeof(dir) + 16];
    snprintf(file, sizeof(file), "%s/table.json", dir);
    FILE *f = fopen(file, "w");
    if (f == NULL || fputs(table_json, f) == EOF || fclose(f) != 0) {
        perror(file);
        return 1;
    }
    setenv("COLLSIM_TUNER_FILE", file, 1);

    if (v5->init(&shared_ctx, 1, 8, 1, logger, NULL, NULL) != CS_NCCL_SUCCESS
        || shared_ctx == NULL) {
        fprintf(stderr, "init failed\n");
        return 1;
    }
    pthread_t threads[N_CALLERS + N_CREATORS];
    for (long i = 0; i < N_CALLERS + N_CREATORS; i++)
        if (pthread_create(&threads[i], NULL, i < N_CALLERS ? caller : creator, (void *)i) != 0) {
            fprintf(stderr, "pthread_create failed\n");
            return 1;
        }
    for (int i = 0; i < N_CALLERS + N_CREATORS; i++)
        pthread_join(threads[i], NULL);
    v5->finalize(shared_ctx);
    unlink(file);
    rmdir(dir);

    long wrong = atomic_load(&n_wrong);
    long warned = atomic_load(&n_warned);
    long logged = atomic_load(&n_logged);
    /* Each call that picks an entry logs one line; each init at least one. */
    long min_logged = (long)N_CALLERS * N_CALLS * 6 / 7 + N_CREATORS * N_CREATIONS;
    printf("%d threads x %d calls on one context, %d threads x %d communicators: %ld wrong "
           "answers, %ld warnings, %ld log lines\n",
           N_CALLERS, N_CALLS, N_CREATORS, N_CREATIONS, wrong, warned, logged);
    if (wrong != 0 || warned != 0 || logged < min_logged) {
        fprintf(stderr, "FAIL\n");
        return 1;
    }
    return 0;
}
