// SPDX-License-Identifier: MIT
/* Tests of report.c with hand-made predictions: nccl-tests table bytes, the winners table,
 * JSON and CSV, and reading a table back as a trace. */
#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

#include "base/json_util.h"
#include "analysis/report.h"

/* Stand-ins for registry entries: the report only reads their names. */
static const CsAlgo fake_ring = { .name = "ring" };
static const CsAlgo fake_tree = { .name = "tree" };

/* A prediction as predict.c would fill it, for an all-reduce on 4 ranks of float. */
static CsPrediction
make_pred(const CsAlgo *algo, CsProto proto, int channels, gint64 size, double time_us,
          double algbw, double busbw, double alpha_us, double beta_us, double gamma_us,
          double overhead_us)
{
    CsPrediction p = { .algo = algo, .proto = proto, .n_channels = channels };
    p.size.size_bytes = size;
    p.size.count = size / 4;
    p.size.block_bytes = size / 4;
    p.size.send_bytes = size;
    p.size.recv_bytes = size;
    p.time_us = time_us;
    p.algbw_GBps = algbw;
    p.busbw_GBps = busbw;
    p.result.time = (CsTime)llround(time_us * 1e6);
    p.result.alpha = (CsTime)llround(alpha_us * 1e6);
    p.result.beta = (CsTime)llround(beta_us * 1e6);
    p.result.gamma = (CsTime)llround(gamma_us * 1e6);
    p.result.overhead = (CsTime)llround(overhead_us * 1e6);
    p.result.n_ranks = 4;
    return p;
}

/* Two sizes of the seed's H100 run: 8 B in 10 us (algbw 8 B / 10 us = 0.0008 GB/s, busbw
 * x 2(4-1)/4 = 0.0012) and 1 GiB in 4525.6 us (1073741824 / 4525.6e-6 / 1e9 = 237.26 GB/s,
 * busbw 355.89). The 1 GiB split: 25.6 + 4480 + 20 + 0 = 4525.6 us. */
static CsReport *
make_best_report(void)
{
    CsReport *report = cs_report_new(CS_OP_ALL_REDUCE, 4, CS_DTYPE_FLOAT, CS_REDOP_SUM, 0);
    cs_report_set_header(report, "source", "collsim prediction");
    cs_report_set_header(report, "topology", "dgx-h100x4");
    cs_report_set_preamble(report,
                           "nThread 1 nGpus 4 minBytes 8 maxBytes 1073741824 step: 2(factor)");
    cs_report_begin_block(report, "best", TRUE);
    CsPrediction p
        = make_pred(&fake_tree, CS_PROTO_LL, 2, 8, 10.0, 0.0008, 0.0012, 9.0, 0.0, 0.0, 1.0);
    cs_report_add(report, &p);
    p = make_pred(&fake_ring, CS_PROTO_SIMPLE, 16, 1073741824, 4525.6, 237.26, 355.89, 25.6, 4480.0,
                  20.0, 0.0);
    cs_report_add(report, &p);
    return report;
}

static void
test_format_names(void)
{
    CsReportFormat f;
    g_assert_true(cs_report_format_from_name("table", &f));
    g_assert_cmpint(f, ==, CS_REPORT_FORMAT_TABLE);
    g_assert_true(cs_report_format_from_name("JSON", &f));
    g_assert_cmpint(f, ==, CS_REPORT_FORMAT_JSON);
    g_assert_true(cs_report_format_from_name("csv", &f));
    g_assert_cmpint(f, ==, CS_REPORT_FORMAT_CSV);
    g_assert_false(cs_report_format_from_name("xml", &f));
}

/* The table is nccl-tests' own: the 1 GiB row is the seed trace's line with #wrong N/A and the
 * in-place half repeating the out-of-place one. */
static void
test_table_best(void)
{
    g_autoptr(CsReport) report = make_best_report();
    g_autofree char *text = cs_report_to_string(report, CS_REPORT_FORMAT_TABLE);
    g_test_message("%s", text);

    g_assert_true(g_str_has_prefix(
        text, "# source: collsim prediction\n"
              "# topology: dgx-h100x4\n"
              "# collective: all_reduce\n"
              "# ranks: 4\n"
              "# nThread 1 nGpus 4 minBytes 8 maxBytes 1073741824 step: 2(factor)\n"
              "#\n"
              "#                                                              out-of-place"));
    g_assert_nonnull(strstr(text, "\n           8             2     float     sum      -1    10.00"
                                  "    0.00    0.00    N/A    10.00    0.00    0.00    N/A\n"));
    g_assert_nonnull(strstr(text, "\n  1073741824     268435456     float     sum      -1   4525.6"
                                  "  237.26  355.89    N/A   4525.6  237.26  355.89    N/A\n"));
    /* Footer: (0.0012 + 355.89) / 2 over the four cells = 177.9456, printed %g. */
    g_assert_nonnull(strstr(text, "\n# Out of bounds values : 0 OK\n"
                                  "# Avg bus bandwidth    : 177.946\n"));
    /* Winners, algorithm column 9 wide ("algorithm"). */
    g_assert_nonnull(strstr(text,
                            "\n#       size  algorithm  proto   channels       time      alpha"
                            "       beta      gamma   overhead\n"));
    g_assert_nonnull(strstr(text,
                            "\n#          8  tree       LL             2     10.000      9.000"
                            "      0.000      0.000      1.000\n"));
    g_assert_nonnull(strstr(text,
                            "\n# 1073741824  ring       Simple        16   4525.600     25.600"
                            "   4480.000     20.000      0.000\n"));
    /* One best block: no block label. */
    g_assert_null(strstr(text, "# block:"));
}

/* What diff and validate see: the table read back is the prediction. */
static void
test_table_reads_back(void)
{
    g_autoptr(CsReport) report = make_best_report();
    g_autofree char *text = cs_report_to_string(report, CS_REPORT_FORMAT_TABLE);
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTrace) trace = cs_trace_load_data(text, "prediction", &error);
    g_assert_no_error(error);
    g_assert_cmpuint(cs_trace_n_rows(trace), ==, 2);
    CsOp op;
    g_assert_true(cs_trace_op(trace, &op));
    g_assert_cmpint(op, ==, CS_OP_ALL_REDUCE);
    g_assert_cmpint(cs_trace_n_ranks(trace), ==, 4);
    g_assert_cmpstr(cs_trace_get_header(trace, "topology"), ==, "dgx-h100x4");
    const CsTraceRow *r = cs_trace_row(trace, 1);
    g_assert_cmpint(r->size_bytes, ==, 1073741824);
    g_assert_cmpint(r->count, ==, 268435456);
    g_assert_cmpfloat_with_epsilon(r->out_of_place.time_us, 4525.6, 1e-9);
    g_assert_cmpfloat_with_epsilon(r->in_place.busbw_GBps, 355.89, 1e-9);
    g_assert_cmpint(r->out_of_place.wrong, ==, -1);
}

static void
test_block_trace(void)
{
    g_autoptr(CsReport) report = make_best_report();
    g_assert_cmpuint(cs_report_n_blocks(report), ==, 1);
    g_assert_cmpuint(cs_report_block_n_rows(report, 0), ==, 2);
    g_assert_true(cs_report_block_row(report, 0, 1)->algo == &fake_ring);
    g_autoptr(CsTrace) trace = cs_report_block_trace(report, 0);
    const CsTraceRow *r = cs_trace_row(trace, 0);
    g_assert_cmpfloat(r->in_place.time_us, ==, r->out_of_place.time_us);
    g_assert_cmpfloat(r->in_place.busbw_GBps, ==, r->out_of_place.busbw_GBps);
    g_assert_cmpint(r->in_place.wrong, ==, -1);
    g_assert_cmpstr(r->type, ==, "float");
    g_assert_cmpstr(r->redop, ==, "sum");
    g_assert_cmpint(r->root, ==, -1);
}

/* nccl-tests prints the root only for rooted collectives and the operator only for reducing
 * ones. */
static void
test_columns_per_op(void)
{
    static const struct {
        CsOp op;
        CsRedop redop;
        int root;
        const char *want_redop;
        int want_root;
    } cases[] = {
        { CS_OP_BROADCAST, CS_REDOP_SUM, 2, "none", 2 },
        { CS_OP_REDUCE, CS_REDOP_MAX, 1, "max", 1 },
        { CS_OP_ALL_GATHER, CS_REDOP_SUM, 3, "none", -1 },
        { CS_OP_REDUCE_SCATTER, CS_REDOP_PROD, 3, "prod", -1 },
        { CS_OP_ALL_TO_ALL, CS_REDOP_SUM, 0, "none", -1 },
        { CS_OP_GATHER, CS_REDOP_SUM, 0, "none", 0 },
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autoptr(CsReport) report
            = cs_report_new(cases[i].op, 4, CS_DTYPE_HALF, cases[i].redop, cases[i].root);
        cs_report_begin_block(report, "best", TRUE);
        CsPrediction p
            = make_pred(&fake_ring, CS_PROTO_LL128, 1, 1024, 5.0, 0.2, 0.2, 5.0, 0, 0, 0);
        cs_report_add(report, &p);
        g_autoptr(CsTrace) trace = cs_report_block_trace(report, 0);
        const CsTraceRow *r = cs_trace_row(trace, 0);
        g_assert_cmpstr(r->type, ==, "half");
        g_assert_cmpstr(r->redop, ==, cases[i].want_redop);
        g_assert_cmpint(r->root, ==, cases[i].want_root);
    }
}

/* --all: one labelled block per algorithm x protocol, notes for the ones that cannot run, no
 * winners table. */
static void
test_table_all_blocks(void)
{
    g_autoptr(CsReport) report
        = cs_report_new(CS_OP_ALL_REDUCE, 4, CS_DTYPE_FLOAT, CS_REDOP_SUM, 0);
    cs_report_begin_block(report, "ring/LL", FALSE);
    CsPrediction p
        = make_pred(&fake_ring, CS_PROTO_LL, 4, 8, 12.5, 0.00064, 0.00096, 12, 0, 0, 0.5);
    cs_report_add(report, &p);
    cs_report_begin_block(report, "tree/LL128", FALSE);
    cs_report_add_note(report, "tree/LL128: not applicable (LL128 needs NVLink)");
    g_autofree char *text = cs_report_to_string(report, CS_REPORT_FORMAT_TABLE);
    g_test_message("%s", text);
    g_assert_nonnull(strstr(text, "#\n# block: ring/LL\n#      "));
    g_assert_nonnull(strstr(text, "    12.50    0.00    0.00    N/A    12.50"));
    g_assert_nonnull(strstr(text, "#\n# block: tree/LL128\n# note: tree/LL128: not applicable "
                                  "(LL128 needs NVLink)\n"));
    g_assert_null(strstr(text, "Best algorithm"));
}

static void
test_json(void)
{
    g_autoptr(CsReport) report = make_best_report();
    cs_report_set_header(report, "gpus", "4");
    cs_report_set_header(report, "nodes", "1");
    g_autofree char *text = cs_report_to_string(report, CS_REPORT_FORMAT_JSON);
    g_autoptr(cJSON) root = cJSON_Parse(text);
    g_assert_nonnull(root);
    g_assert_cmpstr(cJSON_GetObjectItem(root, "collective")->valuestring, ==, "allreduce");
    g_assert_cmpint(cJSON_GetObjectItem(root, "ranks")->valueint, ==, 4);
    g_assert_cmpint(cJSON_GetObjectItem(root, "root")->valueint, ==, -1);
    cJSON *headers = cJSON_GetObjectItem(root, "headers");
    g_assert_cmpstr(cJSON_GetObjectItem(headers, "topology")->valuestring, ==, "dgx-h100x4");
    /* Counts are JSON numbers ("gpus": 4, not "4"); text stays text. */
    g_assert_true(cJSON_IsNumber(cJSON_GetObjectItem(headers, "gpus")));
    g_assert_cmpfloat(cJSON_GetObjectItem(headers, "gpus")->valuedouble, ==, 4.0);
    g_assert_true(cJSON_IsNumber(cJSON_GetObjectItem(headers, "nodes")));
    g_assert_cmpfloat(cJSON_GetObjectItem(headers, "nodes")->valuedouble, ==, 1.0);
    g_assert_true(cJSON_IsString(cJSON_GetObjectItem(headers, "source")));
    cJSON *blocks = cJSON_GetObjectItem(root, "blocks");
    g_assert_cmpint(cJSON_GetArraySize(blocks), ==, 1);
    cJSON *block = cJSON_GetArrayItem(blocks, 0);
    g_assert_true(cJSON_IsTrue(cJSON_GetObjectItem(block, "best")));
    g_assert_cmpfloat_with_epsilon(cJSON_GetObjectItem(block, "avg_busbw_GBps")->valuedouble,
                                   177.9456, 1e-9);
    cJSON *row = cJSON_GetArrayItem(cJSON_GetObjectItem(block, "rows"), 1);
    g_assert_cmpstr(cJSON_GetObjectItem(row, "algo")->valuestring, ==, "ring");
    g_assert_cmpstr(cJSON_GetObjectItem(row, "proto")->valuestring, ==, "Simple");
    g_assert_cmpint(cJSON_GetObjectItem(row, "channels")->valueint, ==, 16);
    g_assert_cmpfloat(cJSON_GetObjectItem(row, "size")->valuedouble, ==, 1073741824.0);
    g_assert_cmpfloat_with_epsilon(cJSON_GetObjectItem(row, "time_us")->valuedouble, 4525.6, 1e-9);
    g_assert_cmpfloat_with_epsilon(cJSON_GetObjectItem(row, "beta_us")->valuedouble, 4480.0, 1e-9);
    g_assert_cmpfloat_with_epsilon(cJSON_GetObjectItem(row, "gamma_us")->valuedouble, 20.0, 1e-9);
}

static void
test_csv(void)
{
    g_autoptr(CsReport) report = make_best_report();
    g_autofree char *text = cs_report_to_string(report, CS_REPORT_FORMAT_CSV);
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    g_assert_cmpuint(g_strv_length(lines), ==, 4); /* header, 2 rows, "" after the last \n */
    g_assert_cmpstr(
        lines[0], ==,
        "block,size,count,type,redop,root,algo,proto,channels,time_us,"
        "algbw_GBps,busbw_GBps,alpha_us,beta_us,gamma_us,overhead_us,extrapolated,bracketed");
    g_assert_cmpstr(lines[2], ==,
                    "best,1073741824,268435456,float,sum,-1,ring,Simple,16,"
                    "4525.600000,237.2600,355.8900,25.600000,4480.000000,20.000000,"
                    "0.000000,0,0");
    g_assert_cmpstr(lines[3], ==, "");
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/report/format/names", test_format_names);
    g_test_add_func("/report/table/best", test_table_best);
    g_test_add_func("/report/table/reads-back", test_table_reads_back);
    g_test_add_func("/report/table/all-blocks", test_table_all_blocks);
    g_test_add_func("/report/table/columns-per-op", test_columns_per_op);
    g_test_add_func("/report/block-trace", test_block_trace);
    g_test_add_func("/report/json", test_json);
    g_test_add_func("/report/csv", test_csv);
    return g_test_run();
}
