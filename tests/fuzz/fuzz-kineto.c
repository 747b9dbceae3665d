// SPDX-License-Identifier: MIT
/* libFuzzer target: the PyTorch profiler trace reader (cs_kineto_add_data) on arbitrary
 * bytes, which need not end in a NUL (as a mapped file does not). The trace is added or
 * refused with an error; what it adds is consistent with what it says it read. */
#include <glib.h>
#include <stdint.h>
#include <string.h>

#include "base/kineto.h"
#include "base/nccl_log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* A copy of exactly @size bytes, so that reading past them is a sanitizer report. */
    g_autofree char *buf = g_memdup2(data, size);
    g_autoptr(CsNcclLog) log = cs_nccl_log_new();
    g_autoptr(GError) error = NULL;
    CsKinetoInfo info = { 0 };
    const gboolean ok = cs_kineto_add_data(log, "fuzz.json", buf, size, &info, &error);
    if (!ok) {
        g_assert_nonnull(error);
        g_assert_true(g_str_has_prefix(error->message, "fuzz.json:"));
    }
    else {
        g_assert_null(error);
        g_assert_true(cs_nccl_log_n_collective_lines(log) == info.collectives);
        g_assert_true(info.collectives <= info.events);
        g_assert_true(info.compute_busy_us >= 0);
        const GPtrArray *ranks = cs_nccl_log_ranks(log);
        g_assert_true(ranks->len == (info.collectives > 0 ? 1u : 0u));
        for (guint i = 0; i < ranks->len; i++) {
            const CsNcclLogRank *r = g_ptr_array_index(ranks, i);
            g_assert_true(strcmp(r->label, info.rank) == 0);
            for (guint j = 0; j < r->comms->len; j++) {
                const CsNcclLogComm *c = g_ptr_array_index(r->comms, j);
                g_assert_true(c->nranks >= 1);
                g_assert_nonnull(c->name);
            }
        }
    }
    cs_kineto_info_clear(&info);
    return 0;
}
