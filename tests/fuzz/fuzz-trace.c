// SPDX-License-Identifier: MIT
/* libFuzzer target: the nccl-tests trace reader (cs_trace_load_data) on arbitrary bytes. A
 * load either fails with an error or gives a trace whose summary functions and printed form
 * work. */
#include <glib.h>
#include <stdint.h>

#include "base/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    g_autofree char *text = g_strndup((const char *)data, size);
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTrace) trace = cs_trace_load_data(text, "fuzz.txt", &error);
    CsOp op;

    if (trace == NULL) {
        g_assert_nonnull(error);
        return 0;
    }
    (void)cs_trace_n_ranks(trace);
    (void)cs_trace_avg_busbw(trace);
    if (cs_trace_op(trace, &op)) {
        g_autoptr(GError) busbw_error = NULL;
        (void)cs_trace_check_busbw(trace, op, cs_trace_n_ranks(trace), &busbw_error);
    }
    g_free(cs_trace_inferred(trace));
    g_free(cs_trace_to_string(trace));
    return 0;
}
