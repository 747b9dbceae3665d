// SPDX-License-Identifier: MIT
/* Tests of the nccl-tests trace reader and writer: every shipped trace, the fixtures of
 * tests/data/trace/ (index.txt), and write -> read round trips. */
#include <glib/gstdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/trace.h"

/* ---- Helpers ---- */

static char *
shipped_path(const char *name)
{
    return g_test_build_filename(G_TEST_DIST, "..", "traces", name, NULL);
}

static char *
fixture_path(const char *name)
{
    return g_test_build_filename(G_TEST_DIST, "data", "trace", name, NULL);
}

/* @line without Slurm's --label "N: " (a published table may keep it, as printed). */
static const char *
without_slurm_label(const char *line)
{
    const char *q = line;
    while (g_ascii_isdigit(*q))
        q++;
    return q > line && q[0] == ':' && q[1] == ' ' ? q + 2 : line;
}

/* The lines of @text with trailing blanks and Slurm's label removed (transfer full). */
static GPtrArray *
stripped_lines(const char *text)
{
    GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    for (int i = 0; lines[i] != NULL; i++)
        g_ptr_array_add(out, g_strchomp(g_strdup(without_slurm_label(lines[i]))));
    return out;
}

/* Result rows (first visible character a digit) and nccl-tests' three title lines. */
static gboolean
is_table_line(const char *line)
{
    const char *p = line;
    while (*p == ' ')
        p++;
    if (g_ascii_isdigit(*p))
        return TRUE;
    return g_str_has_prefix(line, "#       size ") || g_str_has_prefix(line, "#        (B) ")
           || (g_str_has_prefix(line, "#     ") && strstr(line, "out-of-place") != NULL);
}

static GPtrArray *
table_lines(const char *text)
{
    g_autoptr(GPtrArray) all = stripped_lines(text);
    GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
    for (guint i = 0; i < all->len; i++)
        if (is_table_line(g_ptr_array_index(all, i)))
            g_ptr_array_add(out, g_strdup(g_ptr_array_index(all, i)));
    return out;
}

static int
compare_names(gconstpointer a, gconstpointer b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The .txt files of @dir (a folder of traces), sorted. */
static GPtrArray *
trace_files(const char *dir)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(GDir) d = g_dir_open(dir, 0, &error);
    g_assert_no_error(error);
    GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
    const char *name;
    while ((name = g_dir_read_name(d)) != NULL)
        if (g_str_has_suffix(name, ".txt"))
            g_ptr_array_add(names, g_strdup(name));
    g_ptr_array_sort(names, compare_names);
    return names;
}

/* Writing @trace again gives back the table of the file @path byte for byte (trailing blanks
 * aside). */
static void
assert_round_trip(const CsTrace *trace, const char *path)
{
    g_autofree char *text = NULL;
    g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
    g_autofree char *written = cs_trace_to_string(trace);
    g_autoptr(GPtrArray) want = table_lines(text);
    g_autoptr(GPtrArray) got = table_lines(written);
    /* The writer always prints nccl-tests' three title lines; a table published without one
     * of them (the author cut it, or a web page's terminal widget dropped the '#' lines) is
     * compared without it. Every row is always compared. */
    static const char *const titles[] = { "out-of-place", "#       size ", "#        (B) " };
    for (gsize k = 0; k < G_N_ELEMENTS(titles); k++) {
        gboolean published = FALSE;
        for (guint i = 0; i < want->len; i++)
            published = published || strstr(g_ptr_array_index(want, i), titles[k]) != NULL;
        for (guint i = got->len; !published && i-- > 0;)
            if (strstr(g_ptr_array_index(got, i), titles[k]) != NULL)
                g_ptr_array_remove_index(got, i);
    }
    g_assert_cmpuint(got->len, ==, want->len);
    for (guint i = 0; i < want->len; i++)
        g_assert_cmpstr(g_ptr_array_index(got, i), ==, g_ptr_array_index(want, i));
}

/* ---- Every shipped trace ---- */

typedef struct {
    const char *file;
    CsOp op;
    int ranks;
    gsize rows;
    gint64 first_size;    /* bytes: first row */
    double first_time_us; /* out-of-place time of the first row */
    gint64 last_size;     /* bytes: last row */
    double last_busbw;    /* in-place busbw of the last row */
    CsTraceLayout layout;
} ShippedCase;

/* Read off the files in traces/ by eye: row counts, first and last rows as printed. */
static const ShippedCase shipped[] = {
    { "a100-sxm4-80gb-8gpu-nvswitch_allreduce_nccl2.19.3.txt", CS_OP_ALL_REDUCE, 8, 25, 8, 34.84,
      134217728, 182.90, CS_TRACE_LAYOUT_CURRENT },
    { "a100-sxm4-40gb-8gpu-nvswitch_allreduce_ncclunknown.txt", CS_OP_ALL_REDUCE, 8, 28, 64, 32.01,
      8589934592, 235.21, CS_TRACE_LAYOUT_CLASSIC },
    { "a100-sxm4-8gpu-nvswitch_sendrecv_ncclunknown_partial.txt", CS_OP_SEND_RECV, 8, 4, 134217728,
      1211.2, 1073741824, 195.56, CS_TRACE_LAYOUT_CLASSIC },
    { "a100-sxm4-80gb-8gpu-x2-efa-p4de-4x100g_allreduce_ncclunknown.txt", CS_OP_ALL_REDUCE, 16, 29,
      8, 164.3, 2147483648, 78.33, CS_TRACE_LAYOUT_CLASSIC },
    { "b200-8gpu-x2-gcp-a4-roce-8nic_allreduce_ncclunknown_partial.txt", CS_OP_ALL_REDUCE, 16, 11,
      8388608, 156.9, 8589934592, 679.54, CS_TRACE_LAYOUT_CLASSIC },
    { "b200-8gpu-x2-ib-ndr8x400g_sendrecv_nccl2.29.7.txt", CS_OP_SEND_RECV, 16, 19, 1024, 35.00,
      268435456, 43.17, CS_TRACE_LAYOUT_CLASSIC },
    { "b200-8gpu-x4-ib-ndr8x400g_sendrecv_nccl2.29.7.txt", CS_OP_SEND_RECV, 32, 19, 1024, 32.75,
      268435456, 44.37, CS_TRACE_LAYOUT_CLASSIC },
    { "b200-8gpu-x8-ib-ndr8x400g_sendrecv_nccl2.29.7.txt", CS_OP_SEND_RECV, 64, 19, 1024, 29.62,
      268435456, 26.13, CS_TRACE_LAYOUT_CLASSIC },
    { "b200-8gpu-x16-ib-ndr8x400g_sendrecv_nccl2.29.7.txt", CS_OP_SEND_RECV, 128, 19, 1024, 33.27,
      268435456, 14.80, CS_TRACE_LAYOUT_CLASSIC },
    { "b200-8gpu-x32-ib-ndr8x400g_sendrecv_nccl2.29.7.txt", CS_OP_SEND_RECV, 256, 19, 1024, 32.73,
      268435456, 14.76, CS_TRACE_LAYOUT_CLASSIC },
    { "b200-8gpu-x64-ib-ndr8x400g_sendrecv_nccl2.29.7.txt", CS_OP_SEND_RECV, 512, 19, 1024, 33.02,
      268435456, 14.90, CS_TRACE_LAYOUT_CLASSIC },
    { "gb200-nvl72-1rack-72gpu-mnnvl_allreduce_nccl2.26.2_partial.txt", CS_OP_ALL_REDUCE, 72, 5,
      536870912, 1806.7, 8589934592, 846.82, CS_TRACE_LAYOUT_CLASSIC },
    { "gb200-nvl72-2rack-128gpu-mnnvl-ib_allreduce_nccl2.26.2_partial.txt", CS_OP_ALL_REDUCE, 128,
      6, 536870912, 2156.8, 17179869184, 820.36, CS_TRACE_LAYOUT_CLASSIC },
    { "gb200-nvl72-20rack-1440gpu-mnnvl-ib_allreduce_nccl2.26.2_partial.txt", CS_OP_ALL_REDUCE,
      1440, 6, 536870912, 7108.4, 17179869184, 404.77, CS_TRACE_LAYOUT_CLASSIC },
    { "h100-sxm-4gpu-nvswitch_allreduce_nccl2.26.2.txt", CS_OP_ALL_REDUCE, 4, 28, 8, 26.08,
      1073741824, 353.40, CS_TRACE_LAYOUT_CLASSIC },
    { "h100-sxm-8gpu-x2-efa-p5-32x100g_allreduce_ncclunknown.txt", CS_OP_ALL_REDUCE, 16, 32, 8,
      69.12, 17179869184, 487.26, CS_TRACE_LAYOUT_CLASSIC },
    { "h100-sxm-8gpu-x2-gcp-a3high-tcpx-4nic_allgather_ncclunknown_partial.txt", CS_OP_ALL_GATHER,
      16, 11, 8388608, 784.9, 8589934592, 50.29, CS_TRACE_LAYOUT_CLASSIC },
    { "h100-sxm-8gpu-x2-gcp-a3mega-tcpxo-8x200g_allreduce_ncclunknown.txt", CS_OP_ALL_REDUCE, 16,
      31, 8, 135.8, 8589934592, 337.35, CS_TRACE_LAYOUT_CLASSIC },
    { "h100-sxm-8gpu-x2-ib-ndr8x400g_allreduce_nccl2.26.2.txt", CS_OP_ALL_REDUCE, 16, 32, 8, 68.52,
      17179869184, 469.10, CS_TRACE_LAYOUT_CLASSIC },
    { "h100-sxm-8gpu-x2-ib400g_allreduce_default_ncclunknown.txt", CS_OP_ALL_REDUCE, 16, 14,
      1048576, 93.25, 8589934592, 466.65, CS_TRACE_LAYOUT_CLASSIC },
    { "h100-sxm-8gpu-x2-ib400g_allreduce_ring_ctas24_ncclunknown.txt", CS_OP_ALL_REDUCE, 16, 14,
      1048576, 156.9, 8589934592, 392.30, CS_TRACE_LAYOUT_CLASSIC },
    { "h100-sxm-8gpu-nvswitch_allgather_default-nvls_nccl2.26.2.txt", CS_OP_ALL_GATHER, 8, 31, 0,
      0.94, 8589934592, 363.52, CS_TRACE_LAYOUT_CURRENT },
    { "h100-sxm-8gpu-nvswitch_allgather_ring_nccl2.26.2.txt", CS_OP_ALL_GATHER, 8, 31, 0, 0.88,
      8589934592, 363.38, CS_TRACE_LAYOUT_CURRENT },
    { "h100-sxm-8gpu-nvswitch_allreduce_default-nvls_nccl2.26.2.txt", CS_OP_ALL_REDUCE, 8, 31, 8,
      36.22, 8589934592, 479.85, CS_TRACE_LAYOUT_CURRENT },
    { "h100-sxm-8gpu-nvswitch_allreduce_ring_nccl2.26.2.txt", CS_OP_ALL_REDUCE, 8, 31, 8, 34.98,
      8589934592, 368.62, CS_TRACE_LAYOUT_CURRENT },
    { "h100-sxm-8gpu-nvswitch_reducescatter_default-nvls_nccl2.26.2.txt", CS_OP_REDUCE_SCATTER, 8,
      31, 0, 0.94, 8589934592, 364.10, CS_TRACE_LAYOUT_CURRENT },
    { "h100-sxm-8gpu-nvswitch_reducescatter_ring_nccl2.26.2.txt", CS_OP_REDUCE_SCATTER, 8, 31, 0,
      0.89, 8589934592, 364.13, CS_TRACE_LAYOUT_CURRENT },
    { "mi300x-8gpu-xgmi_allreduce_rccl-aac8.txt", CS_OP_ALL_REDUCE, 8, 31, 8, 19.28, 8589934592,
      315.91, CS_TRACE_LAYOUT_CLASSIC },
    { "h100-sxm-8gpu-x2-oci-roce-16x200g_allreduce_nccl2.21.5_partial.txt", CS_OP_ALL_REDUCE, 16, 5,
      1073741824, 4511.2, 17179869184, 464.79, CS_TRACE_LAYOUT_CLASSIC },
    { "gb200-nvl72-2rack-128gpu-oci-roce-8nic_allreduce_nccl2.29.2_partial.txt", CS_OP_ALL_REDUCE,
      128, 33, 8, 183.82, 34359738368, 683.49, CS_TRACE_LAYOUT_CURRENT },
    { "h100-sxm-96gpu-ib-sharp-collnetchain_allreduce_nccl2.18.1_partial.txt", CS_OP_ALL_REDUCE, 96,
      5, 536870912, 2984.6, 8589934592, 385.56, CS_TRACE_LAYOUT_CLASSIC },
    { "mi300x-8gpu-x2-roce-mlx5x8_allreduce_rccl2.22.3.txt", CS_OP_ALL_REDUCE, 16, 32, 8, 256.5,
      17179869184, 357.41, CS_TRACE_LAYOUT_CLASSIC },
    { "mi355x-8gpu-x2-roce-pollara8x400g-anp_allreduce_rccl2.26.6.txt", CS_OP_ALL_REDUCE, 16, 31, 8,
      41.16, 8589934592, 369.08, CS_TRACE_LAYOUT_CLASSIC },
    { "mi355x-8gpu-x2-roce-ainic8x400g_allreduce_rccl2.27.7.txt", CS_OP_ALL_REDUCE, 16, 31, 16,
      37.35, 17179869184, 385.95, CS_TRACE_LAYOUT_CURRENT },
    { "mi355x-8gpu-x2-roce-ainic8x400g_alltoall_rccl2.27.7.txt", CS_OP_ALL_TO_ALL, 16, 31, 0, 0.06,
      17179869184, 91.10, CS_TRACE_LAYOUT_CURRENT },
    { "mi355x-8gpu-xgmi_allreduce_rccl2.27.7.txt", CS_OP_ALL_REDUCE, 8, 29, 4, 42.02, 1073741824,
      401.90, CS_TRACE_LAYOUT_CURRENT },
    { "rtx2080ti-2gpu-pcie3-nop2p_allgather.txt", CS_OP_ALL_GATHER, 2, 28, 0, 0.33, 1073741824,
      3.84, CS_TRACE_LAYOUT_CLASSIC },
    { "rtx2080ti-2gpu-pcie3-nop2p_allreduce.txt", CS_OP_ALL_REDUCE, 2, 28, 8, 12.25, 1073741824,
      4.00, CS_TRACE_LAYOUT_CLASSIC },
    { "rtx2080ti-2gpu-pcie3-nop2p_alltoall.txt", CS_OP_ALL_TO_ALL, 2, 28, 0, 12.97, 1073741824,
      4.73, CS_TRACE_LAYOUT_CLASSIC },
    { "rtx2080ti-2gpu-pcie3-nop2p_broadcast.txt", CS_OP_BROADCAST, 2, 28, 8, 11.65, 1073741824,
      11.09, CS_TRACE_LAYOUT_CLASSIC },
    { "rtx2080ti-2gpu-pcie3-nop2p_reduce.txt", CS_OP_REDUCE, 2, 28, 8, 10.39, 1073741824, 11.13,
      CS_TRACE_LAYOUT_CLASSIC },
};

/* Traces whose printed "Avg bus bandwidth" covers rows the author did not publish (the header
 * says so): their average cannot match the rows kept. */
static gboolean
rows_cut(const char *file)
{
    static const char *const cut[] = {
        "b200-8gpu-x2-gcp-a4-roce-8nic_allreduce_ncclunknown_partial.txt",
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cut); i++)
        if (strcmp(cut[i], file) == 0)
            return TRUE;
    return FALSE;
}

/* The "# Avg bus bandwidth : X" figure printed in @text, NaN if none. */
static double
printed_avg_busbw(const char *text)
{
    const char *p = strstr(text, "Avg bus bandwidth");
    if (p == NULL)
        return NAN;
    p = strchr(p, ':');
    return p != NULL ? g_ascii_strtod(p + 1, NULL) : NAN;
}

static void
test_shipped(gconstpointer data)
{
    const ShippedCase *c = data;
    g_autofree char *path = shipped_path(c->file);
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTrace) trace = cs_trace_load_file(path, &error);
    g_assert_no_error(error);
    g_assert_nonnull(trace);

    g_assert_cmpuint(cs_trace_n_rows(trace), ==, c->rows);
    const CsTraceRow *first = cs_trace_row(trace, 0);
    const CsTraceRow *last = cs_trace_row(trace, c->rows - 1);
    g_assert_cmpint(first->size_bytes, ==, c->first_size);
    g_assert_cmpfloat_with_epsilon(first->out_of_place.time_us, c->first_time_us, 1e-9);
    g_assert_cmpint(last->size_bytes, ==, c->last_size);
    g_assert_cmpfloat_with_epsilon(last->in_place.busbw_GBps, c->last_busbw, 1e-9);
    g_assert_cmpstr(first->type, ==, "float");
    g_assert_cmpint(first->out_of_place.wrong, ==, 0);

    CsOp op;
    g_assert_true(cs_trace_op(trace, &op));
    g_assert_cmpint(op, ==, c->op);
    g_assert_cmpint(cs_trace_n_ranks(trace), ==, c->ranks);
    g_assert_cmpint(cs_trace_get_layout(trace), ==, c->layout);
    g_assert_nonnull(cs_trace_get_header(trace, "source"));
    g_assert_nonnull(cs_trace_get_header(trace, "hardware"));
    /* Every provenance line ("# env (qualifier): ...") is read as a header: one whose key the
     * reader passed over (too long a qualifier) would drop what the run set, silently. */
    {
        g_autofree char *head = NULL;
        g_assert_true(g_file_get_contents(path, &head, NULL, NULL));
        g_autoptr(GRegex) re
            = g_regex_new("^# ([a-z/-]+)( \\([^)]*\\))?: ", G_REGEX_MULTILINE, 0, NULL);
        g_autoptr(GMatchInfo) m = NULL;
        g_regex_match(re, head, 0, &m);
        for (; g_match_info_matches(m); g_match_info_next(m, NULL)) {
            g_autofree char *key = g_match_info_fetch(m, 1);
            if (strcmp(key, "nccl-tests") == 0 || strcmp(key, "rccl-tests") == 0)
                continue;
            if (cs_trace_get_header(trace, key) == NULL)
                g_error("%s: header \"%s\" was not read", c->file, key);
        }
    }

    /* nccl-tests averages busbw over both halves of every row from unrounded figures; ours
     * comes from the printed ones (two decimals), so they agree within half a unit of the
     * last digit. Some published tables stop at the last row (the footer was not published);
     * those have no average to hold ours against. */
    g_autofree char *text = NULL;
    g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
    const double printed_avg = printed_avg_busbw(text);
    g_assert_true(isnan(printed_avg) == (strstr(text, "Avg bus bandwidth") == NULL));
    const gboolean cut = rows_cut(c->file);
    if (!isnan(printed_avg) && !cut)
        g_assert_cmpfloat_with_epsilon(cs_trace_avg_busbw(trace), printed_avg, 0.006);
    if (cut)
        g_assert_cmpfloat(fabs(cs_trace_avg_busbw(trace) - printed_avg), >, 0.006);

    assert_round_trip(trace, path);
}

/* A trace added to traces/ without a row above would go untested: fail instead. */
static void
test_shipped_all_listed(void)
{
    g_autofree char *dir = g_test_build_filename(G_TEST_DIST, "..", "traces", NULL);
    g_autoptr(GPtrArray) names = trace_files(dir);
    for (guint k = 0; k < names->len; k++) {
        const char *name = g_ptr_array_index(names, k);
        gboolean listed = FALSE;
        for (gsize i = 0; i < G_N_ELEMENTS(shipped); i++)
            listed = listed || strcmp(shipped[i].file, name) == 0;
        if (!listed)
            g_test_message("traces/%s has no expectations in test-trace.c", name);
        g_assert_true(listed);
    }
    g_assert_cmpint(names->len, ==, G_N_ELEMENTS(shipped));
}

/* collsim's own measurements on a GPU (traces/collsim-measure/, `collsim measure`): each reads,
 * names its backend and GPU, every row was checked with no wrong element, and writing it again
 * gives back the table as measured. */
static void
test_collsim_measured(void)
{
    g_autofree char *dir
        = g_test_build_filename(G_TEST_DIST, "..", "traces", "collsim-measure", NULL);
    g_autoptr(GPtrArray) names = trace_files(dir);
    for (guint k = 0; k < names->len; k++) {
        g_autoptr(GError) error = NULL;
        g_autofree char *path = g_build_filename(dir, g_ptr_array_index(names, k), NULL);
        g_autoptr(CsTrace) trace = cs_trace_load_file(path, &error);
        g_assert_no_error(error);
        g_assert_cmpuint(cs_trace_n_rows(trace), >=, 8);
        for (gsize i = 0; i < cs_trace_n_rows(trace); i++) {
            const CsTraceRow *row = cs_trace_row(trace, i);
            g_assert_cmpint(row->out_of_place.wrong, ==, 0);
            g_assert_cmpfloat(row->out_of_place.time_us, >, 0.0);
        }
        const char *backend = cs_trace_get_header(trace, "backend");
        g_assert_nonnull(backend);
        g_assert_true(g_str_equal(backend, "cuda") || g_str_equal(backend, "nccl"));
        g_assert_nonnull(strstr(cs_trace_get_header(trace, "hardware"), "H100"));
        g_assert_true(g_str_has_prefix(cs_trace_get_header(trace, "source"), "collsim "));
        if (g_str_equal(backend, "cuda"))
            g_assert_nonnull(cs_trace_get_header(trace, "launch"));
        assert_round_trip(trace, path);
    }
    g_assert_cmpuint(names->len, >=, 5);
}

/* The GB200 header is "env (from the example slurm script at the same commit): ...". */
static void
test_shipped_qualified_header(void)
{
    g_autofree char *path
        = shipped_path("gb200-nvl72-1rack-72gpu-mnnvl_allreduce_nccl2.26.2_partial.txt");
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTrace) trace = cs_trace_load_file(path, &error);
    g_assert_no_error(error);
    const char *env = cs_trace_get_header(trace, "env");
    g_assert_nonnull(env);
    g_assert_true(g_str_has_prefix(env, "NCCL_SOCKET_IFNAME=eth0"));
    /* The "note:" header follows the other headers; the rank line after it is no header. */
    g_assert_nonnull(cs_trace_get_header(trace, "note"));
    g_assert_null(cs_trace_get_header(trace, "Rank 71 Group  0 Pid  14840 on slurm-gb200-207-171 "
                                             "device  3 [0x01] NVIDIA Graphics Device"));
}

/* Which library made each shipped trace, as its output or `software` header says. */
static void
test_shipped_library(void)
{
    static const struct {
        const char *file;
        const char *library; /* NULL: not named */
        const char *version; /* NULL: not printed */
    } cases[] = {
        /* "# nccl-tests version 2.19.4 nccl-headers=21903 nccl-library=21903" */
        { "a100-sxm4-80gb-8gpu-nvswitch_allreduce_nccl2.19.3.txt", "NCCL", "2.19.3" },
        /* "# nccl-tests version 2.17.9 nccl-headers=22602 nccl-library=22602" */
        { "h100-sxm-8gpu-nvswitch_allgather_ring_nccl2.26.2.txt", "NCCL", "2.26.2" },
        /* "# software: NCCL 2.26.2+cuda12.8, ..." */
        { "h100-sxm-8gpu-x2-ib-ndr8x400g_allreduce_nccl2.26.2.txt", "NCCL", "2.26.2" },
        /* "# software: NCCL 2.29.7+cuda12.9 (printed; run1 log: ...)" */
        { "b200-8gpu-x64-ib-ndr8x400g_sendrecv_nccl2.29.7.txt", "NCCL", "2.29.7" },
        /* "# software: NCCL version not printed (old nccl-tests header ...); NCCL of the
         * horovod/horovod:latest container ..." */
        { "a100-sxm4-40gb-8gpu-nvswitch_allreduce_ncclunknown.txt", "NCCL", NULL },
        /* "# software: NCCL version not printed/stated; ..." */
        { "h100-sxm-8gpu-x2-ib400g_allreduce_default_ncclunknown.txt", "NCCL", NULL },
        /* "# rccl-tests: Version develop:a7809b3" */
        { "mi300x-8gpu-xgmi_allreduce_rccl-aac8.txt", "RCCL", NULL },
        /* "# rccl-tests version 2.17.9-develop:2596ca5f71 rccl-headers=22803
         * rccl-library=22707" */
        { "mi355x-8gpu-xgmi_allreduce_rccl2.27.7.txt", "RCCL", "2.27.7" },
        /* "RCCL version : 2.26.6-HEAD:6ade506" */
        { "mi355x-8gpu-x2-roce-pollara8x400g-anp_allreduce_rccl2.26.6.txt", "RCCL", "2.26.6" },
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *path = shipped_path(cases[i].file);
        g_autoptr(GError) error = NULL;
        g_autoptr(CsTrace) trace = cs_trace_load_file(path, &error);
        g_assert_no_error(error);
        const char *version = "unset";
        g_assert_cmpstr(cs_trace_library(trace, &version), ==, cases[i].library);
        g_assert_cmpstr(version, ==, cases[i].version);
    }
}

/* NCCL_DEBUG=INFO's version line among the logs; RCCL's says +hip; the tool's own line wins
 * over the `software` header. */
static void
test_library_from_logs(void)
{
    static const char rows[]
        = "#       size         count      type   redop    root     time   algbw   busbw #wrong\n"
          "           8             2     float     sum      -1    24.00    0.00    0.00      0\n";
    static const struct {
        const char *lines;
        const char *library;
        const char *version;
    } cases[] = {
        { "node1:1234:1234 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n", "NCCL", "2.21.5" },
        { "[1,0]<stdout>:host:77:77 [0] NCCL INFO NCCL version 2.18.3+hip6.0 HEAD:abc\n", "RCCL",
          "2.18.3" },
        { "RCCL version : 2.20.5-develop\n", "RCCL", "2.20.5" },
        { "# software: NCCL 2.23.4\n# nccl-tests version 2.13.10 nccl-headers=22603 "
          "nccl-library=22602\n",
          "NCCL", "2.26.2" },
        { "# software: RCCL from ROCm 6.2\n", "RCCL", NULL },
        /* rccl-tests 2.17 prints RCCL_VERSION_CODE like nccl-tests; older ones no version. */
        { "# rccl-tests version 2.17.9-develop:2596ca5f71 rccl-headers=22803 "
          "rccl-library=22707\n",
          "RCCL", "2.27.7" },
        { "# rccl-tests: Version develop:a7809b3\n", "RCCL", NULL },
        /* A header that mentions a version is not the tool's own line. */
        { "# software: NCCL version 2.23.4\nhost:1:1 [0] NCCL INFO NCCL version 2.26.2+cuda12.8\n",
          "NCCL", "2.26.2" },
        /* NCCL_VERSION_CODE before 2.9: major * 1000 + minor * 100 + patch. */
        { "# nccl-tests version 2.0.0 nccl-headers=2804 nccl-library=2804\n", "NCCL", "2.8.4" },
        { "# collective: all_reduce\n", NULL, NULL },
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *text = g_strconcat(cases[i].lines, rows, NULL);
        g_autoptr(GError) error = NULL;
        g_autoptr(CsTrace) trace = cs_trace_load_data(text, "logs", &error);
        g_assert_no_error(error);
        const char *version = "unset";
        g_assert_cmpstr(cs_trace_library(trace, &version), ==, cases[i].library);
        g_assert_cmpstr(version, ==, cases[i].version);
    }
}

/* ---- Fixtures (tests/data/trace/index.txt) ---- */

typedef struct {
    char kind; /* 'P' reads, 'N' malformed, 'E' empty */
    char *file;
    gsize rows;
    gint64 first_size;
    double last_time_us;
    char *op; /* canonical name or "-" */
    int ranks;
    int line; /* 'N': the line the error must name */
} FixtureCase;

static void
fixture_case_free(gpointer data)
{
    FixtureCase *c = data;
    g_free(c->file);
    g_free(c->op);
    g_free(c);
}

static void
test_fixture(gconstpointer data)
{
    const FixtureCase *c = data;
    g_autofree char *path = fixture_path(c->file);
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTrace) trace = cs_trace_load_file(path, &error);

    if (c->kind == 'N' || c->kind == 'E') {
        g_assert_null(trace);
        int code = c->kind == 'N' ? CS_TRACE_ERROR_MALFORMED : CS_TRACE_ERROR_EMPTY;
        g_assert_error(error, CS_TRACE_ERROR, code);
        g_autofree char *where = c->kind == 'N' ? g_strdup_printf("%s:%d: ", path, c->line)
                                                : g_strdup_printf("%s: ", path);
        g_test_message("%s", error->message);
        g_assert_true(g_str_has_prefix(error->message, where));
        return;
    }

    g_assert_no_error(error);
    g_assert_cmpuint(cs_trace_n_rows(trace), ==, c->rows);
    g_assert_cmpint(cs_trace_row(trace, 0)->size_bytes, ==, c->first_size);
    double t = cs_trace_row(trace, c->rows - 1)->in_place.time_us;
    if (isnan(c->last_time_us))
        g_assert_true(isnan(t));
    else
        g_assert_cmpfloat_with_epsilon(t, c->last_time_us, 1e-9);
    CsOp op;
    if (strcmp(c->op, "-") == 0) {
        g_assert_false(cs_trace_op(trace, &op));
    }
    else {
        g_assert_true(cs_trace_op(trace, &op));
        g_assert_cmpstr(cs_op_name(op), ==, c->op);
    }
    g_assert_cmpint(cs_trace_n_ranks(trace), ==, c->ranks);
}

static void
add_fixture_tests(void)
{
    g_autofree char *index = fixture_path("index.txt");
    g_autofree char *text = NULL;
    g_autoptr(GError) error = NULL;
    if (!g_file_get_contents(index, &text, NULL, &error))
        g_error("%s", error->message);
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    for (int i = 0; lines[i] != NULL; i++) {
        const char *line = lines[i];
        if (line[0] == '\0' || line[0] == '#')
            continue;
        g_auto(GStrv) f = g_strsplit(line, ",", -1);
        guint n = g_strv_length(f);
        FixtureCase *c = g_new0(FixtureCase, 1);
        c->kind = f[0][0];
        c->file = g_strdup(f[1]);
        c->op = g_strdup("-");
        if (c->kind == 'P' && n == 7) {
            c->rows = g_ascii_strtoull(f[2], NULL, 10);
            c->first_size = g_ascii_strtoll(f[3], NULL, 10);
            c->last_time_us = g_ascii_strtod(f[4], NULL);
            g_free(c->op);
            c->op = g_strdup(f[5]);
            c->ranks = atoi(f[6]);
        }
        else if (c->kind == 'N' && n == 3) {
            c->line = atoi(f[2]);
        }
        else if (!(c->kind == 'E' && n == 2)) {
            g_error("%s:%d: bad index line \"%s\"", index, i + 1, line);
        }
        g_autofree char *stem = g_strndup(c->file, strcspn(c->file, "."));
        g_autofree char *test_path = g_strdup_printf("/trace/fixture/%s", stem);
        g_test_add_data_func_full(test_path, c, test_fixture, fixture_case_free);
    }
}

/* ---- Writer ---- */

static CsTraceRow
make_row(gint64 size, gint64 count, double t_oop, double alg_oop, double bus_oop, gint64 wrong_oop,
         double t_ip, double alg_ip, double bus_ip, gint64 wrong_ip)
{
    CsTraceRow row = { .size_bytes = size, .count = count, .root = -1 };
    g_strlcpy(row.type, "float", sizeof row.type);
    g_strlcpy(row.redop, "sum", sizeof row.redop);
    row.out_of_place = (CsTraceCell){ t_oop, alg_oop, bus_oop, wrong_oop };
    row.in_place = (CsTraceCell){ t_ip, alg_ip, bus_ip, wrong_ip };
    return row;
}

static void
assert_cell_equal(const CsTraceCell *a, const CsTraceCell *b)
{
    const double va[3] = { a->time_us, a->algbw_GBps, a->busbw_GBps };
    const double vb[3] = { b->time_us, b->algbw_GBps, b->busbw_GBps };
    for (int i = 0; i < 3; i++) {
        if (isnan(va[i]))
            g_assert_true(isnan(vb[i]));
        else
            g_assert_cmpfloat_with_epsilon(va[i], vb[i], 1e-9);
    }
    g_assert_cmpint(a->wrong, ==, b->wrong);
}

/* Values chosen to print exactly in @layout, so the round trip must return them unchanged:
 * classic prints times with 2/1/0 decimals below 100 us / 10 ms / above and bandwidths with
 * two; current keeps 7 (time) and 6 (bandwidth) characters, dropping decimals as the integer
 * part grows (1295.41 has four digits, under 7 - 2; 12130.5 has five; 12345 GB/s has five,
 * at 6 - 1). */
static void
round_trip(CsTraceLayout layout)
{
    g_autoptr(CsTrace) trace = cs_trace_new(CS_OP_ALL_REDUCE, 4);
    cs_trace_set_layout(trace, layout);
    cs_trace_set_header(trace, "topology", "dgx-h100x4");
    cs_trace_set_header(trace, "model", "reservation");
    CsTraceRow rows[4];
    if (layout == CS_TRACE_LAYOUT_CLASSIC) {
        rows[0] = make_row(8, 2, 26.08, 0.00, 0.00, 0, 24.37, 0.00, 0.00, 0);
        rows[1] = make_row(16777216, 4194304, 104.4, 160.69, 241.03, -1, 101.9, 164.72, 247.07, -1);
        rows[2] = make_row(1073741824, 268435456, 12130, 88.52, 132.78, 3, NAN, NAN, NAN, -1);
        rows[3] = make_row(0, 0, 0.33, 0.00, 0.00, 0, 0.36, 0.00, 0.00, 0);
    }
    else {
        rows[0] = make_row(8, 2, 34.84, 0.00, 0.00, 0, 36.18, 0.00, 0.00, 0);
        rows[1] = make_row(134217728, 33554432, 1295.41, 103.61, 181.32, -1, 1284.21, 104.51,
                           182.90, -1);
        rows[2] = make_row(1073741824, 268435456, 12130.5, 1234.5, 12345, 1500000, 123456, 8.7,
                           15.22, 0);
        rows[3] = make_row(0, 0, NAN, NAN, NAN, -1, 0.36, 0.00, 0.00, 0);
    }
    for (int i = 0; i < 4; i++)
        cs_trace_add_row(trace, &rows[i]);

    g_autofree char *text = cs_trace_to_string(trace);
    g_test_message("%s", text);
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTrace) back = cs_trace_load_data(text, "round-trip", &error);
    g_assert_no_error(error);
    g_assert_cmpint(cs_trace_get_layout(back), ==, layout);
    g_assert_cmpuint(cs_trace_n_rows(back), ==, 4);
    for (int i = 0; i < 4; i++) {
        const CsTraceRow *r = cs_trace_row(back, i);
        g_assert_cmpint(r->size_bytes, ==, rows[i].size_bytes);
        g_assert_cmpint(r->count, ==, rows[i].count);
        g_assert_cmpstr(r->type, ==, "float");
        g_assert_cmpstr(r->redop, ==, "sum");
        g_assert_cmpint(r->root, ==, -1);
        assert_cell_equal(&r->out_of_place, &rows[i].out_of_place);
        assert_cell_equal(&r->in_place, &rows[i].in_place);
    }

    /* Headers come back in order, the collective and ranks added last. */
    g_autoptr(GPtrArray) keys = cs_trace_header_keys(back);
    const char *want[] = { "topology", "model", "collective", "ranks" };
    g_assert_cmpuint(keys->len, ==, G_N_ELEMENTS(want));
    for (guint i = 0; i < keys->len; i++)
        g_assert_cmpstr(g_ptr_array_index(keys, i), ==, want[i]);
    g_assert_cmpstr(cs_trace_get_header(back, "topology"), ==, "dgx-h100x4");
    CsOp op;
    g_assert_true(cs_trace_op(back, &op));
    g_assert_cmpint(op, ==, CS_OP_ALL_REDUCE);
    g_assert_cmpint(cs_trace_n_ranks(back), ==, 4);

    /* A second write is identical to the first. */
    g_autofree char *again = cs_trace_to_string(back);
    g_assert_cmpstr(again, ==, text);
}

static void
test_round_trip_classic(void)
{
    round_trip(CS_TRACE_LAYOUT_CLASSIC);
}

static void
test_round_trip_current(void)
{
    round_trip(CS_TRACE_LAYOUT_CURRENT);
}

/* The exact bytes nccl-tests printed for these rows (the seed's H100 trace, classic, and the
 * A100 trace, current), written from the same numbers. */
static void
test_writer_exact_rows(void)
{
    g_autoptr(CsTrace) classic = cs_trace_new(CS_OP_ALL_REDUCE, 4);
    CsTraceRow r = make_row(8, 2, 26.08, 0.00, 0.00, 0, 24.37, 0.00, 0.00, 0);
    cs_trace_add_row(classic, &r);
    r = make_row(1073741824, 268435456, 4525.6, 237.26, 355.89, 0, 4557.5, 235.60, 353.40, 0);
    cs_trace_add_row(classic, &r);
    g_autofree char *c = cs_trace_to_string(classic);
    g_assert_nonnull(strstr(c, "\n           8             2     float     sum      -1    26.08"
                               "    0.00    0.00      0    24.37    0.00    0.00      0\n"));
    g_assert_nonnull(strstr(c, "\n  1073741824     268435456     float     sum      -1   4525.6"
                               "  237.26  355.89      0   4557.5  235.60  353.40      0\n"));
    g_assert_nonnull(strstr(c, "\n#       size         count      type   redop    root     time"
                               "   algbw   busbw #wrong     time   algbw   busbw #wrong\n"));

    g_autoptr(CsTrace) current = cs_trace_new(CS_OP_ALL_REDUCE, 8);
    cs_trace_set_layout(current, CS_TRACE_LAYOUT_CURRENT);
    r = make_row(134217728, 33554432, 1295.41, 103.61, 181.32, 0, 1284.21, 104.51, 182.90, 0);
    cs_trace_add_row(current, &r);
    g_autofree char *n = cs_trace_to_string(current);
    g_assert_nonnull(strstr(n, "\n   134217728      33554432     float     sum      -1  1295.41"
                               "  103.61  181.32       0  1284.21  104.51  182.90       0\n"));
}

/* Footer: busbw 1, 2, 3 and one N/A average to 2; one wrong element fails the check. */
static void
test_writer_footer(void)
{
    g_autoptr(CsTrace) trace = cs_trace_new(CS_OP_BROADCAST, 2);
    CsTraceRow r = make_row(8, 2, 10.0, 1.0, 1.0, 0, 10.0, 2.0, 2.0, -1);
    cs_trace_add_row(trace, &r);
    r = make_row(16, 4, 10.0, 3.0, 3.0, 1, NAN, NAN, NAN, -1);
    cs_trace_add_row(trace, &r);
    g_assert_cmpfloat_with_epsilon(cs_trace_avg_busbw(trace), 2.0, 1e-12);
    g_autofree char *text = cs_trace_to_string(trace);
    g_assert_true(g_str_has_suffix(text, "# Out of bounds values : 1 FAILED\n"
                                         "# Avg bus bandwidth    : 2\n"));
    g_assert_true(g_str_has_prefix(text, "# collective: broadcast\n# ranks: 2\n"));

    /* Headers set explicitly keep their place and are not repeated. */
    cs_trace_set_header(trace, "ranks", "2 (one node)");
    cs_trace_set_header(trace, "topology", "pcie-2gpu");
    g_autofree char *again = cs_trace_to_string(trace);
    g_assert_true(g_str_has_prefix(again, "# ranks: 2 (one node)\n# topology: pcie-2gpu\n"
                                          "# collective: broadcast\n#  "));
}

static void
test_save_file(void)
{
    g_autoptr(CsTrace) trace = cs_trace_new(CS_OP_ALL_GATHER, 2);
    CsTraceRow r = make_row(64, 8, 10.5, 0.01, 0.00, -1, 10.2, 0.01, 0.00, -1);
    g_strlcpy(r.redop, "none", sizeof r.redop);
    cs_trace_add_row(trace, &r);
    g_autofree char *dir = g_dir_make_tmp("collsim-trace-XXXXXX", NULL);
    g_autofree char *path = g_build_filename(dir, "out.txt", NULL);
    g_autoptr(GError) error = NULL;
    g_assert_true(cs_trace_save_file(trace, path, &error));
    g_assert_no_error(error);
    g_autoptr(CsTrace) back = cs_trace_load_file(path, &error);
    g_assert_no_error(error);
    g_assert_cmpstr(cs_trace_row(back, 0)->redop, ==, "none");
    g_assert_cmpint(cs_trace_row(back, 0)->in_place.wrong, ==, -1);
    g_assert_cmpstr(cs_trace_origin(back), ==, path);
    g_remove(path);
    g_rmdir(dir);

    g_autofree char *bad = g_build_filename(dir, "no", "such", "dir.txt", NULL);
    g_assert_false(cs_trace_save_file(trace, bad, &error));
    g_assert_error(error, CS_TRACE_ERROR, CS_TRACE_ERROR_IO);
}

/* ---- What a trace is about ---- */

static const char *const row_text
    = "#       size         count      type   redop    root     time   algbw   busbw #wrong"
      "     time   algbw   busbw #wrong\n"
      "           8             2     float     sum      -1    26.08    0.00    0.00      0"
      "    24.37    0.00    0.00      0\n";

static CsOp
op_of(const char *text, const char *origin)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTrace) trace = cs_trace_load_data(text, origin, &error);
    g_assert_no_error(error);
    CsOp op = CS_N_OPS;
    if (!cs_trace_op(trace, &op))
        return CS_N_OPS;
    return op;
}

/* Rows an all-gather and an all-to-all print alike (no reduction, no root, count per rank). */
static const char *const per_rank_text
    = "#       size         count      type   redop    root     time   algbw   busbw #wrong"
      "     time   algbw   busbw #wrong\n"
      "        1024            64     float    none      -1    14.02    0.07    0.05      0"
      "    13.88    0.07    0.06      0\n";

static void
test_op_inference(void)
{
    g_autofree char *with_header = g_strconcat("# collective: reduce_scatter\n", row_text, NULL);
    g_autofree char *with_banner
        = g_strconcat("# Collective test starting: all_gather_perf_mpi\n", row_text, NULL);
    /* The header and the banner win over the columns and the file name. */
    g_assert_cmpint(op_of(with_header, "x_allreduce.txt"), ==, CS_OP_REDUCE_SCATTER);
    g_assert_cmpint(op_of(with_banner, "x_allreduce.txt"), ==, CS_OP_ALL_GATHER);
    /* An all-reduce's columns with no busbw to compare could be sendrecv's: only a name that
     * says all-reduce settles them (test_op_sendrecv()). */
    g_assert_cmpint(op_of(row_text, "trace.txt"), ==, CS_N_OPS);
    g_assert_cmpint(op_of(row_text, "x_allreduce.txt"), ==, CS_OP_ALL_REDUCE);
    g_assert_cmpint(op_of(row_text, "runs/reduce_scatter_perf.log"), ==, CS_N_OPS);
    /* Where they fit two, the file name settles it: nccl-tests' stems and our spellings,
     * longest match first; a name the columns rule out settles nothing. */
    g_assert_cmpint(op_of(per_rank_text, "trace.txt"), ==, CS_N_OPS);
    g_assert_cmpint(op_of(per_rank_text, "runs/all_gather_perf.log"), ==, CS_OP_ALL_GATHER);
    g_assert_cmpint(op_of(per_rank_text, "x/all-to-all.txt"), ==, CS_OP_ALL_TO_ALL);
    g_assert_cmpint(op_of(per_rank_text, "runs/reduce_scatter_perf.log"), ==, CS_N_OPS);
    g_assert_cmpint(op_of(per_rank_text, "x/sendrecv.txt"), ==, CS_N_OPS);

    /* Each shape of row, as nccl-tests prints it (size = count x 4 B, or x 4 ranks). */
    static const struct {
        const char *row;
        CsOp op; /* CS_N_OPS: not one collective */
    } shapes[] = {
        { "  4096  256  float  sum   -1  9.0 0.46 0.68 0  9.0 0.46 0.68 0\n",
          CS_OP_REDUCE_SCATTER },
        { "  4096 1024  float  sum    0  9.0 0.46 0.46 0  9.0 0.46 0.46 0\n", CS_OP_REDUCE },
        { "  4096 1024  float  none   0  9.0 0.46 0.46 0  9.0 0.46 0.46 0\n", CS_OP_BROADCAST },
        { "  4096  256  float  none   0  9.0 0.46 0.34 0  9.0 0.46 0.34 0\n", CS_N_OPS },
        { "  4096  512  double sum   -1  2.0 2.05 3.58 0  2.0 2.05 3.58 0\n", CS_OP_ALL_REDUCE },
        { "  4096 2048  half   sum   -1  2.0 2.05 3.58 0  2.0 2.05 3.58 0\n", CS_OP_ALL_REDUCE },
    };
    const char *titles = "# size count type redop root time algbw busbw #wrong time algbw "
                         "busbw #wrong\n";
    for (gsize i = 0; i < G_N_ELEMENTS(shapes); i++) {
        g_autofree char *text = g_strconcat(titles, shapes[i].row, NULL);
        g_assert_cmpint(op_of(text, "trace.txt"), ==, shapes[i].op);
    }

    /* Without a root column, a reduction on one buffer is an all-reduce or a reduce. */
    const char *no_root = "#  size  count  type  redop  time  algbw  busbw  error  time  algbw "
                          " busbw  error\n"
                          "     8      2  float   sum  22.41  0.00  0.00  0e+00  22.13  0.00  "
                          "0.00  0e+00\n";
    g_assert_cmpint(op_of(no_root, "trace.txt"), ==, CS_N_OPS);
    g_assert_cmpint(op_of(no_root, "x/reduce.txt"), ==, CS_OP_REDUCE);
}

/* The error that says why no collective was found, for @text read as @origin. */
static char *
unknown_op_message(const char *text, const char *origin)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTrace) trace = cs_trace_load_data(text, origin, &error);
    g_assert_no_error(error);
    CsOp op;
    g_assert_false(cs_trace_op(trace, &op));
    cs_trace_set_unknown_op_error(trace, &error);
    g_assert_error(error, CS_TRACE_ERROR, CS_TRACE_ERROR_MALFORMED);
    g_assert_true(g_str_has_prefix(error->message, origin));
    return g_strdup(error->message);
}

/* sendrecv_perf prints the reduction it was given and no root: an all-reduce's columns. Only
 * busbw > algbw (all-reduce on more than 2 ranks), a banner or a name settles them; hypercube
 * stays a point-to-point test collsim refuses. */
static void
test_op_sendrecv(void)
{
    const char *titles = "# size count type redop root time algbw busbw #wrong time algbw busbw "
                         "#wrong\n";
    const char *equal = "1048576 262144 float sum -1 10.0 100.00 100.00 0 10.0 100.00 100.00 0\n";
    const char *more = "1048576 262144 float sum -1 10.0 100.00 175.00 0 10.0 100.00 175.00 0\n";
    g_autofree char *sr = g_strconcat(titles, equal, NULL);
    g_autofree char *ar = g_strconcat(titles, more, NULL);

    g_autofree char *sr_banner
        = g_strconcat("# Collective test starting: sendrecv_perf\n", titles, equal, NULL);
    g_autofree char *hypercube
        = g_strconcat("# Collective test starting: hypercube_perf\n", titles, equal, NULL);

    g_assert_cmpint(op_of(ar, "trace.txt"), ==, CS_OP_ALL_REDUCE);
    g_assert_cmpint(op_of(sr, "runs/all_reduce_perf.log"), ==, CS_OP_ALL_REDUCE);
    g_assert_cmpint(op_of(sr, "runs/sendrecv_perf.log"), ==, CS_OP_SEND_RECV);
    g_assert_cmpint(op_of(sr_banner, "trace.txt"), ==, CS_OP_SEND_RECV);
    /* busbw > algbw is no sendrecv's, whatever the file name says. */
    g_assert_cmpint(op_of(ar, "runs/sendrecv_perf.log"), ==, CS_OP_ALL_REDUCE);
    g_autofree char *ambiguous = unknown_op_message(sr, "trace.txt");
    g_assert_nonnull(strstr(ambiguous, "all_reduce on 2 ranks and nccl-tests' sendrecv alike"));
    g_autofree char *named = unknown_op_message(sr, "runs/hypercube_perf.log");
    g_assert_nonnull(strstr(named, "point-to-point"));
    g_autofree char *by_banner = unknown_op_message(hypercube, "trace.txt");
    g_assert_nonnull(strstr(by_banner, "point-to-point"));

    /* Columns that fit nothing are not overruled by the file name. */
    const char *none_one = "4096 1024 float none -1 9.0 0.46 0.46 0 9.0 0.46 0.46 0\n";
    g_autofree char *odd = g_strconcat(titles, none_one, NULL);
    g_autofree char *no_fit = unknown_op_message(odd, "bench_broadcast.txt");
    g_assert_nonnull(strstr(no_fit, "fit no collective"));

    /* Two collectives the columns fit alike are both named. */
    g_autofree char *two = unknown_op_message(per_rank_text, "t.txt");
    g_assert_nonnull(strstr(two, "all_gather or alltoall"));
    /* A header that names none is reported as such, whatever the columns say. */
    g_autofree char *bad = g_strconcat("# collective: all_shuffle\n", ar, NULL);
    g_autofree char *bad_header = unknown_op_message(bad, "t.txt");
    g_assert_nonnull(strstr(bad_header, "'# collective: all_shuffle' is not a collective"));
}

/* ---- Collective names and sizes (base/op.c), which the reader's inference rests on ---- */

/* Every op's canonical and nccl-tests spelling reads back as itself; sendrecv also in the
 * spellings users type and nccl-tests' binary name. */
static void
test_op_names(void)
{
    g_test_summary("cs_op_name() and cs_op_nccl_tests_name() read back through cs_op_from_name() "
                   "for every op, sendrecv included; 'all' selects it too.");
    for (int i = 0; i < CS_N_OPS; i++) {
        CsOp op = CS_N_OPS;
        g_assert_true(cs_op_from_name(cs_op_name((CsOp)i), &op, NULL));
        g_assert_cmpint(op, ==, i);
        g_autofree char *perf = g_strconcat(cs_op_nccl_tests_name((CsOp)i), "_perf", NULL);
        op = CS_N_OPS;
        g_assert_true(cs_op_from_name(perf, &op, NULL));
        g_assert_cmpint(op, ==, i);
    }
    static const char *const spellings[]
        = { "sendrecv", "SendRecv", "send_recv", "send-recv", "sendrecv_perf" };
    for (gsize i = 0; i < G_N_ELEMENTS(spellings); i++) {
        CsOp op = CS_N_OPS;
        g_assert_true(cs_op_from_name(spellings[i], &op, NULL));
        g_assert_cmpint(op, ==, CS_OP_SEND_RECV);
    }
    g_assert_cmpstr(cs_op_name(CS_OP_SEND_RECV), ==, "sendrecv");
    CsOpMask mask = 0;
    g_assert_true(cs_op_mask_from_string("alltoall,sendrecv", &mask, NULL));
    g_assert_cmpuint(mask, ==, CS_OP_BIT(CS_OP_ALL_TO_ALL) | CS_OP_BIT(CS_OP_SEND_RECV));
    g_assert_true(cs_op_mask_from_string("all", &mask, NULL));
    g_assert_true((mask & CS_OP_BIT(CS_OP_SEND_RECV)) != 0);
    g_autoptr(GError) error = NULL;
    CsOp op;
    g_assert_false(cs_op_from_name("sendreceive", &op, &error));
    g_assert_nonnull(strstr(error->message, "sendrecv"));
}

/* nccl-tests sendrecv.cu: count elements sent and received whatever P (size = count x type,
 * the whole buffer one message), no root, busbw = algbw. */
static void
test_op_sendrecv_sizes(void)
{
    g_test_summary("sendrecv's sizes and bus-bandwidth factor are nccl-tests' sendrecv.cu's.");
    for (int P = 1; P <= 9; P += 4) {
        CsOpSize s = cs_op_size(CS_OP_SEND_RECV, 1000, CS_DTYPE_FLOAT, P);
        g_assert_cmpint(s.count, ==, 250);
        g_assert_cmpint(s.size_bytes, ==, 1000);
        g_assert_cmpint(s.send_bytes, ==, 1000);
        g_assert_cmpint(s.recv_bytes, ==, 1000);
        g_assert_cmpint(s.block_bytes, ==, 1000);
        g_assert_cmpfloat(cs_op_busbw_factor(CS_OP_SEND_RECV, P), ==, 1.0);
        /* No 16-byte rounding per block as for the collectives split in P blocks. */
        g_assert_cmpint(cs_op_nccl_tests_bytes(CS_OP_SEND_RECV, 1002, CS_DTYPE_FLOAT, P), ==, 1000);
    }
    g_assert_false(cs_op_has_root(CS_OP_SEND_RECV));
    g_assert_false(cs_op_reduces(CS_OP_SEND_RECV));
}

/* The rank count of @text: cs_trace_n_ranks(), and how it was found into @inferred. */
static int
ranks_of(const char *text, char **inferred)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTrace) trace = cs_trace_load_data(text, "trace.txt", &error);
    g_assert_no_error(error);
    *inferred = cs_trace_inferred(trace);
    return cs_trace_n_ranks(trace);
}

static void
test_ranks_inference(void)
{
    const char *titles = "# size count type redop root time algbw busbw #wrong time algbw "
                         "busbw #wrong\n";
    static const struct {
        const char *lines;
        int ranks;
        const char *inferred; /* a part of what cs_trace_inferred() says */
    } cases[] = {
        /* busbw / algbw: 2(P-1)/P = 1.75 on an all-reduce is 8 ranks */
        { "1048576 262144 float sum -1 10.0 100.00 175.00 0 10.0 100.00 175.00 0\n", 8,
          "ranks from busbw / algbw" },
        /* A reduce-scatter prints count per rank: 1 MiB / (16384 x 4 B) = 16 ranks, which
         * its busbw / algbw would say too (15/16) */
        { "1048576 16384 float sum -1 10.0 100.00 93.75 0 10.0 100.00 93.75 0\n", 16,
          "ranks from size / (count x type size)" },
        /* Two decimals of 1.00 and 1.97 fit 66, 67 and 68 ranks: no answer from them, so
         * nccl-tests' parameter line (2 threads x 4 GPUs) */
        { "# nThread 2 nGpus 4 minBytes 8 maxBytes 8 step: 2(factor)\n"
          "1048576 262144 float sum -1 10.0 1.00 1.97 0 10.0 1.00 1.97 0\n",
          8, "nThread x nGpus" },
        /* A broadcast's factor is 1 whatever P: the parameter line */
        { "# nThread 1 nGpus 2 minBytes 8 maxBytes 8 step: 2(factor)\n"
          "4096 1024 float none 0 9.0 0.46 0.46 0 9.0 0.46 0.46 0\n",
          2, "nThread x nGpus" },
        /* Rank lines come before any inference. */
        { "# nThread 1 nGpus 1 minBytes 8 maxBytes 8 step: 2(factor)\n"
          "#  Rank  0 Group  0 Pid 1 on a device  0 [0x18] NVIDIA H100 80GB HBM3\n"
          "#  Rank  3 Group  0 Pid 4 on a device  3 [0x5d] NVIDIA H100 80GB HBM3\n"
          "1048576 262144 float sum -1 10.0 100.00 175.00 0 10.0 100.00 175.00 0\n",
          4, "collective from the columns" },
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *text = g_strconcat(titles, cases[i].lines, NULL);
        g_autofree char *inferred = NULL;
        g_assert_cmpint(ranks_of(text, &inferred), ==, cases[i].ranks);
        g_assert_nonnull(inferred);
        g_assert_nonnull(strstr(inferred, cases[i].inferred));
    }
    /* Stated in headers, nothing is inferred. */
    g_autofree char *stated = g_strconcat("# collective: all_reduce\n# ranks: 4\n", row_text, NULL);
    g_autofree char *inferred = NULL;
    g_assert_cmpint(ranks_of(stated, &inferred), ==, 4);
    g_assert_null(inferred);
}

/* -g as nccl-tests' parameter line prints it. */
static void
test_gpus_per_thread(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTrace) trace = cs_trace_load_data(
        "# nThread 1 nGpus 4 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 1\n", "t.txt",
        &error);
    g_assert_null(trace); /* no rows */
    g_clear_error(&error);
    g_autofree char *text
        = g_strconcat("# nThread 1 nGpus 4 minBytes 8 maxBytes 8\n", row_text, NULL);
    g_autoptr(CsTrace) with = cs_trace_load_data(text, "t.txt", &error);
    g_assert_no_error(error);
    g_assert_cmpint(cs_trace_gpus_per_thread(with), ==, 4);
    g_autoptr(CsTrace) without = cs_trace_load_data(row_text, "t.txt", &error);
    g_assert_no_error(error);
    g_assert_cmpint(cs_trace_gpus_per_thread(without), ==, 0);
}

static void
test_missing_file(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTrace) trace = cs_trace_load_file("/nonexistent/collsim/trace.txt", &error);
    g_assert_null(trace);
    g_assert_error(error, CS_TRACE_ERROR, CS_TRACE_ERROR_IO);
    g_assert_nonnull(strstr(error->message, "/nonexistent/collsim/trace.txt"));
}

/* ---- Main ---- */

/* Setup: a trace with headers and three rows. Expectation: the pieces a row-by-row writer
 * prints (head, each row, footer) are cs_trace_to_string() byte for byte, and the head alone
 * with the first rows reads back as a trace of those rows (an interrupted run's stdout). */
static void
test_pieces(void)
{
    g_autoptr(CsTrace) trace = cs_trace_new(CS_OP_ALL_REDUCE, 4);
    cs_trace_set_header(trace, "backend", "mpi");
    for (int i = 0; i < 3; i++) {
        CsTraceRow r = make_row(1024 << i, 256 << i, 10.0 + i, 0.1, 0.15, 0, NAN, 0, 0, -1);
        g_strlcpy(r.type, "float", sizeof r.type);
        g_strlcpy(r.redop, "sum", sizeof r.redop);
        cs_trace_add_row(trace, &r);
    }
    g_autofree char *whole = cs_trace_to_string(trace);
    g_autoptr(GString) pieces = g_string_new(NULL);
    g_autofree char *head = cs_trace_head_to_string(trace);
    g_string_append(pieces, head);
    for (gsize i = 0; i < cs_trace_n_rows(trace); i++) {
        g_autofree char *row = cs_trace_row_to_string(trace, i);
        g_string_append(pieces, row);
        if (i == 1) {
            g_autoptr(GError) error = NULL;
            g_autoptr(CsTrace) partial = cs_trace_load_data(pieces->str, "partial", &error);
            g_assert_no_error(error);
            g_assert_cmpuint(cs_trace_n_rows(partial), ==, 2);
            g_assert_cmpint(cs_trace_row(partial, 1)->size_bytes, ==, 2048);
        }
    }
    g_autofree char *footer = cs_trace_footer_to_string(trace);
    g_string_append(pieces, footer);
    g_assert_cmpstr(pieces->str, ==, whole);
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);

    for (gsize i = 0; i < G_N_ELEMENTS(shipped); i++) {
        g_autofree char *stem = g_strndup(shipped[i].file, strlen(shipped[i].file) - 4);
        g_autofree char *path = g_strdup_printf("/trace/shipped/%s", stem);
        g_test_add_data_func(path, &shipped[i], test_shipped);
    }
    g_test_add_func("/trace/writer/pieces", test_pieces);
    g_test_add_func("/trace/shipped/all-listed", test_shipped_all_listed);
    g_test_add_func("/trace/shipped/collsim-measured", test_collsim_measured);
    g_test_add_func("/trace/shipped/qualified-header", test_shipped_qualified_header);
    g_test_add_func("/trace/shipped/library", test_shipped_library);
    g_test_add_func("/trace/library/from-logs", test_library_from_logs);
    add_fixture_tests();
    g_test_add_func("/trace/writer/round-trip-classic", test_round_trip_classic);
    g_test_add_func("/trace/writer/round-trip-current", test_round_trip_current);
    g_test_add_func("/trace/writer/exact-rows", test_writer_exact_rows);
    g_test_add_func("/trace/writer/footer", test_writer_footer);
    g_test_add_func("/trace/writer/save-file", test_save_file);
    g_test_add_func("/trace/op/inference", test_op_inference);
    g_test_add_func("/trace/op/sendrecv", test_op_sendrecv);
    g_test_add_func("/op/names/round-trip", test_op_names);
    g_test_add_func("/op/sendrecv/sizes", test_op_sendrecv_sizes);
    g_test_add_func("/trace/ranks/inference", test_ranks_inference);
    g_test_add_func("/trace/gpus-per-thread", test_gpus_per_thread);
    g_test_add_func("/trace/io/missing-file", test_missing_file);
    return g_test_run();
}
