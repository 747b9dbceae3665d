// SPDX-License-Identifier: MIT
/* libFuzzer target: NCCL's COLL log reader (cs_nccl_log_add_line) on arbitrary bytes, line by
 * line as cs_nccl_log_add_file reads them. Each line is added or refused with an error; the
 * sums it leaves are consistent (every rank's calls are its communicators' calls). */
#include <glib.h>
#include <stdint.h>
#include <string.h>

#include "base/nccl_log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    g_autofree char *text = g_strndup((const char *)data, size);
    g_autoptr(CsNcclLog) log = cs_nccl_log_new();
    gint64 lineno = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line != NULL;
         line = strtok_r(NULL, "\n", &save)) {
        g_autoptr(GError) error = NULL;
        if (!cs_nccl_log_add_line(log, line, "fuzz.log", ++lineno, &error)) {
            g_assert_nonnull(error);
            break;
        }
    }
    const GPtrArray *ranks = cs_nccl_log_ranks(log);
    gint64 total = 0;
    for (guint i = 0; i < ranks->len; i++) {
        const CsNcclLogRank *r = g_ptr_array_index(ranks, i);
        gint64 calls = 0;
        for (guint j = 0; j < r->comms->len; j++) {
            const CsNcclLogComm *c = g_ptr_array_index(r->comms, j);
            g_assert_true(c->nranks >= 1);
            g_assert_true(c->first_op <= c->last_op);
            gint64 in_comm = 0;
            for (guint k = 0; k < c->call_list->len; k++) {
                const CsNcclLogCall *call = &g_array_index(c->call_list, CsNcclLogCall, k);
                g_assert_true(cs_nccl_log_datatype_size(call->datatype) > 0);
                in_comm += call->calls;
            }
            g_assert_true(in_comm == c->calls);
            calls += c->calls;
        }
        g_assert_true(calls == r->calls);
        g_assert_true(cs_nccl_log_find_rank(log, r->label) == r);
        total += calls;
    }
    g_assert_true(total == cs_nccl_log_n_collective_lines(log));
    return 0;
}
