// SPDX-License-Identifier: MIT
/* libFuzzer target: the tuner plugin's table file, driven as NCCL drives it: the input is
 * written to the file COLLSIM_TUNER_FILE names, then init (8 ranks on 1 node, and 16 ranks on
 * 2 nodes), a getCollInfo per collective over a few sizes, and finalize. */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "tuner/nccl_tuner_abi.h"

#define N_ALGOS 7
#define N_PROTOS 3

extern const CsNcclTunerV5 ncclTunerPlugin_v5;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *table_path;

static void
quiet_logger(CsNcclLogLevel level, unsigned long flags, const char *file, int line, const char *fmt,
             ...)
{
    (void)level;
    (void)flags;
    (void)file;
    (void)line;
    (void)fmt;
}

static void
remove_table(void)
{
    g_unlink(table_path);
    g_free(table_path);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const size_t sizes[] = { 0, 1, 8, 4096, 65536, 1 << 20, (size_t)1 << 32, SIZE_MAX };
    static const size_t comms[][2] = { { 8, 1 }, { 16, 2 } };
    g_autoptr(GError) error = NULL;

    if (table_path == NULL) {
        int fd = g_file_open_tmp("collsim-fuzz-tuner-XXXXXX.json", &table_path, &error);
        g_assert_no_error(error);
        close(fd);
        g_setenv("COLLSIM_TUNER_FILE", table_path, TRUE);
        atexit(remove_table);
    }
    /* Rewritten in place (no fsync, no rename): thousands of inputs a second. */
    FILE *f = fopen(table_path, "wb");
    g_assert_nonnull(f);
    g_assert_cmpuint(fwrite(data, 1, size, f), ==, size);
    g_assert_cmpint(fclose(f), ==, 0);

    for (size_t c = 0; c < G_N_ELEMENTS(comms); c++) {
        void *ctx = NULL;
        g_assert_cmpint(
            ncclTunerPlugin_v5.init(&ctx, 1, comms[c][0], comms[c][1], quiet_logger, NULL, NULL),
            ==, CS_NCCL_SUCCESS);
        for (int coll = 0; coll < 5; coll++) {
            for (size_t s = 0; s < G_N_ELEMENTS(sizes); s++) {
                float table[N_ALGOS][N_PROTOS];
                int channels = 0;
                for (int a = 0; a < N_ALGOS; a++)
                    for (int p = 0; p < N_PROTOS; p++)
                        table[a][p] = (a + p) % 4 == 3 ? -1.0f : 1.0f;
                g_assert_cmpint(ncclTunerPlugin_v5.get_coll_info(ctx, (CsNcclColl)coll, sizes[s], 1,
                                                                 (float **)table, N_ALGOS, N_PROTOS,
                                                                 0, &channels),
                                ==, CS_NCCL_SUCCESS);
            }
        }
        g_assert_cmpint(ncclTunerPlugin_v5.finalize(ctx), ==, CS_NCCL_SUCCESS);
    }
    return 0;
}
