// SPDX-License-Identifier: MIT
/* Validation: what a trace's headers say was forced (algorithm, protocol, GPUs per thread) is
 * what the predictions it is held against use. */
#include "analysis/validate.h"

#include <math.h>
#include <string.h>

#include "algos/registry.h"

typedef struct {
    const char *name;
    const char *algo_proto; /* '# algo/proto:' header, NULL: none */
    const char *env;        /* '# env:' header, NULL: none */
    const char *command;    /* '# command:' header, NULL: none */
    const char *want_algo;  /* NULL: not forced */
    const char *want_proto; /* NULL: not forced */
    int want_gpus_per_thread;
} SettingsCase;

static const SettingsCase settings_cases[] = {
    { "not-forced", "not forced", NULL, "./build/all_reduce_perf -b 8 -e 1G -f 2 -g 1", NULL, NULL,
      1 },
    /* A shipped 2-node trace says so, and mentions another file's setting in passing. */
    { "not-forced-wins-over-a-mention",
      "not forced (compare with the NCCL_ALGO=Ring file from the same two nodes)", NULL, NULL, NULL,
      NULL, 1 },
    { "not-forced-wins-over-env", "Not forced", "NCCL_PROTO=LL128", NULL, NULL, NULL, 1 },
    { "algo-forced-in-words", "NCCL_ALGO=Ring forced (protocol not forced)", NULL, NULL, "ring",
      NULL, 1 },
    { "env-only", NULL, "NCCL_DEBUG=INFO NCCL_ALGO=Tree NCCL_PROTO=ll128", NULL, "tree", "LL128",
      1 },
    { "gpus-per-thread", "not forced", NULL, "./build/all_reduce_perf -b 8 -e 128M -f 2 -g 8", NULL,
      NULL, 8 },
    { "gpus-per-thread-glued", NULL, NULL, "./build/all_gather_perf -b 8 -e 1G -g2", NULL, NULL,
      2 },
    { "gpus-per-thread-long", NULL, NULL, "all_reduce_perf --ngpus 4 -b 8", NULL, NULL, 4 },
    { "gpus-per-thread-long-eq", NULL, NULL, "all_reduce_perf --ngpus=4 -b 8", NULL, NULL, 4 },
    /* Out of range: the trace's own count is unknown, one assumed. */
    { "gpus-per-thread-huge", NULL, NULL, "all_reduce_perf -g 99999999999999999999", NULL, NULL,
      1 },
    { "gpus-per-thread-zero", NULL, NULL, "all_reduce_perf -g 0", NULL, NULL, 1 },
    /* Lists and exclusions leave NCCL a choice (cs_validate_trace_masks()): nothing forced. */
    { "algo-list", NULL, "NCCL_ALGO=Tree,Ring NCCL_PROTO=^LL128", NULL, NULL, NULL, 1 },
    /* An algorithm that does not implement the trace's collective (PAT, all-gather and
     * reduce-scatter only, on this all-reduce) is no forced collsim algorithm. */
    { "algo-pat", NULL, "NCCL_ALGO=PAT NCCL_PROTO=Simple", NULL, NULL, "Simple", 1 },
};

static void
test_settings(gconstpointer data)
{
    const SettingsCase *c = data;
    g_autoptr(CsTrace) trace = cs_trace_new(CS_OP_ALL_REDUCE, 8);
    if (c->algo_proto != NULL)
        cs_trace_set_header(trace, "algo/proto", c->algo_proto);
    if (c->env != NULL)
        cs_trace_set_header(trace, "env", c->env);
    if (c->command != NULL)
        cs_trace_set_header(trace, "command", c->command);
    g_autofree char *algo = NULL;
    g_autofree char *proto = NULL;
    int gpus_per_thread = 0;
    cs_validate_trace_settings(trace, &algo, &proto, &gpus_per_thread);
    g_assert_cmpstr(algo, ==, c->want_algo);
    g_assert_cmpstr(proto, ==, c->want_proto);
    g_assert_cmpint(gpus_per_thread, ==, c->want_gpus_per_thread);
}

/* NCCL_ALGO / NCCL_PROTO as NCCL reads them: lists, '^' exclusions, any spelling. */
static void
test_masks(void)
{
    static const struct {
        const char *env;
        guint algos;
        guint protos;
    } cases[] = {
        { "NCCL_ALGO=Ring", 1u << CS_NCCL_ALGO_RING, 0 },
        { "NCCL_ALGO=Tree,Ring NCCL_PROTO=LL,LL128",
          (1u << CS_NCCL_ALGO_TREE) | (1u << CS_NCCL_ALGO_RING),
          (1u << CS_PROTO_LL) | (1u << CS_PROTO_LL128) },
        { "NCCL_ALGO=^NVLS,NVLSTree NCCL_PROTO=^LL128",
          CS_NCCL_ALL_ALGOS & ~((1u << CS_NCCL_ALGO_NVLS) | (1u << CS_NCCL_ALGO_NVLS_TREE)),
          CS_NCCL_ALL_PROTOS & ~(1u << CS_PROTO_LL128) },
        { "NCCL_ALGO=collnet_direct", 1u << CS_NCCL_ALGO_COLLNET_DIRECT, 0 },
        { "NCCL_ALGO=Frob", 0, 0 },
        { "NCCL_DEBUG=INFO", 0, 0 },
        /* NVLS switched off takes NVLS and NVLSTree away, from whatever NCCL_ALGO left. */
        { "NCCL_NVLS_ENABLE=0",
          CS_NCCL_ALL_ALGOS & ~((1u << CS_NCCL_ALGO_NVLS) | (1u << CS_NCCL_ALGO_NVLS_TREE)), 0 },
        { "NCCL_ALGO=Ring,NVLS NCCL_NVLS_ENABLE=0", 1u << CS_NCCL_ALGO_RING, 0 },
        { "NCCL_NVLS_ENABLE=1", 0, 0 },
        { "NCCL_NVLS_ENABLE=2", 0, 0 },
        /* Per-collective lists: the all-reduce's group; none for it, none forced. */
        { "NCCL_ALGO=broadcast:Ring;AllReduce:Tree,NVLS NCCL_PROTO=allreduce:^LL",
          (1u << CS_NCCL_ALGO_TREE) | (1u << CS_NCCL_ALGO_NVLS),
          CS_NCCL_ALL_PROTOS & ~(1u << CS_PROTO_LL) },
        { "NCCL_ALGO=broadcast:Ring;allgather:NVLS", 0, 0 },
        { "NCCL_ALGO=allreducex:Ring", 0, 0 },
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autoptr(CsTrace) trace = cs_trace_new(CS_OP_ALL_REDUCE, 8);
        cs_trace_set_header(trace, "env", cases[i].env);
        guint algos = 99, protos = 99;
        cs_validate_trace_masks(trace, &algos, &protos);
        g_assert_cmphex(algos, ==, cases[i].algos);
        g_assert_cmphex(protos, ==, cases[i].protos);
    }
}

/* ---- Who picks what a trace did not force ---- */

/* An all-reduce trace on 8 ranks with @headers, rows at a latency, a knee and a bandwidth
 * size (the times do not matter here). */
static CsTrace *
pick_trace(const char *headers)
{
    g_autofree char *text = g_strdup_printf(
        "# collective: all_reduce\n# ranks: 8\n%s"
        "#       size         count      type   redop    root     time   algbw   busbw #wrong\n"
        "        1024           256     float     sum      -1    20.00    0.05    0.09      0\n"
        "     4194304       1048576     float     sum      -1    40.00  104.86  183.50      0\n"
        "   268435456      67108864     float     sum      -1   700.00  383.48  671.10      0\n",
        headers);
    g_autoptr(GError) error = NULL;
    CsTrace *trace = cs_trace_load_data(text, "pick", &error);
    g_assert_no_error(error);
    return trace;
}

static CsValidateReport *
validate_with(const CsTopo *topo, const CsTrace *trace, CsPick pick)
{
    CsPredictOptions options;
    cs_predict_options_init(&options);
    options.pick = pick;
    g_autoptr(GError) error = NULL;
    CsValidateReport *report = cs_validate_trace(topo, trace, &options, &error);
    g_assert_no_error(error);
    return report;
}

/* Every row of @report is NCCL's pick under @spec among @algos (the algorithm and protocol),
 * and says so. */
static void
assert_rows_picked(const CsValidateReport *report, const CsTopo *topo, const char *spec,
                   guint algos)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(CsNcclModel) nccl = cs_nccl_model_new_for_topo(topo, report->nranks, spec, &error);
    g_assert_no_error(error);
    for (guint i = 0; i < report->rows->len; i++) {
        const CsValidateRow *row = &g_array_index(report->rows, CsValidateRow, i);
        CsNcclPrediction want;
        g_assert_true(cs_nccl_model_pick_among(nccl, report->op, row->size_bytes, algos,
                                               CS_NCCL_ALL_PROTOS, &want));
        g_assert_true(row->nccl_picked);
        g_assert_cmpstr(row->algo, ==, cs_nccl_algo_collsim_name(want.algo));
        g_assert_cmpstr(row->proto, ==, cs_proto_name(want.proto));
    }
}

/* An NCCL trace that forced nothing: every row is NCCL's pick under the constants of the
 * trace's release (2.19 for 2.19.3), timed by the engine. */
static void
test_pick_nccl_trace(void)
{
    g_autoptr(CsTopo) topo = cs_topo_load("dgx-h100x8", NULL);
    g_assert_nonnull(topo);
    g_autoptr(CsTrace) trace
        = pick_trace("# nccl-tests version 2.19.4 nccl-headers=21903 nccl-library=21903\n");
    g_autoptr(CsValidateReport) report = validate_with(topo, trace, CS_PICK_AUTO);
    g_assert_true(g_str_has_prefix(report->picker, "NCCL 2.19's tuning model"));
    g_assert_nonnull(strstr(report->picker, "NCCL 2.19.3"));

    g_assert_cmpuint(report->rows->len, ==, 3);
    assert_rows_picked(report, topo, "nccl:2.19", CS_NCCL_ALL_ALGOS);
}

/* A trace whose Rank lines name a GPU of another generation than the topology's is flagged;
 * one of the same generation is not. */
static void
test_gpu_mismatch(void)
{
    g_autoptr(CsTopo) topo = cs_topo_load("dgx-h100x8", NULL);
    g_assert_nonnull(topo);
    g_autoptr(CsTrace) a100 = pick_trace(
        "#  Rank  0 Group  0 Pid  12001 on node-01 device  0 [0x19] NVIDIA A100-SXM4-80GB\n");
    g_assert_cmpstr(cs_trace_device_model(a100), ==, "NVIDIA A100-SXM4-80GB");
    g_autoptr(CsValidateReport) flagged = validate_with(topo, a100, CS_PICK_AUTO);
    g_assert_nonnull(flagged->gpu_mismatch);
    g_assert_nonnull(strstr(flagged->gpu_mismatch, "NVIDIA A100-SXM4-80GB (Ampere)"));
    g_assert_nonnull(strstr(flagged->gpu_mismatch, "H100 SXM5 80GB (Hopper)"));

    g_autoptr(CsTrace) h100 = pick_trace(
        "#  Rank  0 Group  0 Pid  41000 on node-a device  0 [0x18] NVIDIA H100 80GB HBM3\n");
    g_autoptr(CsValidateReport) same = validate_with(topo, h100, CS_PICK_AUTO);
    g_assert_null(same->gpu_mismatch);
    g_autoptr(CsTrace) unnamed = pick_trace("");
    g_assert_null(cs_trace_device_model(unnamed));
    g_autoptr(CsValidateReport) silent = validate_with(topo, unnamed, CS_PICK_AUTO);
    g_assert_null(silent->gpu_mismatch);
}

/* Two runs in one file (two hosts' jobs writing one log): the report says which line first
 * measures a size again and how many do; the shipped-style trace, and size-0 rows (nccl-tests
 * prints several for tiny all-to-alls, none compared), raise nothing. */
static void
test_repeated_sizes(void)
{
    g_autoptr(CsTopo) topo = cs_topo_load("dgx-h100x8", NULL);
    g_assert_nonnull(topo);
    static const char twice[]
        = "# collective: all_reduce\n# ranks: 8\n"
          "#       size         count      type   redop    root     time   algbw   busbw #wrong\n"
          "     1048576        262144     float     sum      -1    42.30   24.79   43.38      0\n"
          "     1048576        262144     float     sum      -1    41.86   25.05   43.84      0\n"
          "     2097152        524288     float     sum      -1    42.08   49.84   87.22      0\n"
          "     2097152        524288     float     sum      -1    41.23   50.87   89.01      0\n";
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTrace) trace = cs_trace_load_data(twice, "two-runs", &error);
    g_assert_no_error(error);
    g_autoptr(CsValidateReport) report = validate_with(topo, trace, CS_PICK_AUTO);
    g_assert_cmpuint(report->rows->len, ==, 4);
    g_assert_nonnull(report->repeated_sizes);
    g_assert_true(g_str_has_prefix(report->repeated_sizes, "2 rows measure a size"));
    g_assert_nonnull(strstr(report->repeated_sizes, "line 5 repeats the 1048576 B of line 4"));

    g_autoptr(CsTrace) once = pick_trace("");
    g_autoptr(CsValidateReport) plain = validate_with(topo, once, CS_PICK_AUTO);
    g_assert_null(plain->repeated_sizes);

    static const char zeros[]
        = "# collective: alltoall\n# ranks: 8\n"
          "#       size         count      type   redop    root     time   algbw   busbw #wrong\n"
          "           0             0     float    none      -1     0.88    0.00    0.00      0\n"
          "           0             0     float    none      -1     0.90    0.00    0.00      0\n"
          "         128             4     float    none      -1    35.05    0.00    0.00      0\n";
    g_autoptr(CsTrace) tiny = cs_trace_load_data(zeros, "zeros", &error);
    g_assert_no_error(error);
    g_autoptr(CsValidateReport) none = validate_with(topo, tiny, CS_PICK_AUTO);
    g_assert_cmpuint(none->rows->len, ==, 1);
    g_assert_null(none->repeated_sizes);
}

/* NCCL_ALGO=Ring left the protocol to NCCL: NCCL's pick among Ring's protocols. */
static void
test_pick_forced_algo(void)
{
    g_autoptr(CsTopo) topo = cs_topo_load("dgx-h100x8", NULL);
    g_assert_nonnull(topo);
    g_autoptr(CsTrace) trace
        = pick_trace("# software: NCCL 2.28.9\n# algo/proto: NCCL_ALGO=Ring forced\n");
    g_autoptr(CsValidateReport) report = validate_with(topo, trace, CS_PICK_AUTO);
    g_assert_cmpstr(report->forced_algo, ==, "ring");
    g_assert_null(report->forced_proto);
    g_assert_true(g_str_has_prefix(report->picker, "NCCL 2.28's tuning model"));
    g_assert_cmpuint(cs_validate_report_fastest_rows(report), ==, 0);

    assert_rows_picked(report, topo, "nccl:2.28", 1u << CS_NCCL_ALGO_RING);
}

/* NCCL_ALGO=^Ring,NVLS leaves NCCL tree and NVLS tree (and what collsim does not simulate):
 * no row is ring or NVLS. NCCL_ALGO=PAT leaves NCCL nothing for an all-reduce (PAT serves
 * all-gather and reduce-scatter): every row is collsim's fastest, and the report counts them. */
static void
test_pick_within_nccl_algo(void)
{
    g_autoptr(CsTopo) topo = cs_topo_load("dgx-h100x8", NULL);
    g_assert_nonnull(topo);
    g_autoptr(CsTrace) excluded
        = pick_trace("# software: NCCL 2.28.9\n# env: NCCL_ALGO=^Ring,NVLS\n");
    g_autoptr(CsValidateReport) r = validate_with(topo, excluded, CS_PICK_AUTO);
    g_assert_null(r->forced_algo);
    for (guint i = 0; i < r->rows->len; i++) {
        const CsValidateRow *row = &g_array_index(r->rows, CsValidateRow, i);
        g_assert_true(row->nccl_picked);
        g_assert_cmpstr(row->algo, !=, "ring");
        g_assert_cmpstr(row->algo, !=, "nvls");
    }
    g_assert_cmpuint(cs_validate_report_fastest_rows(r), ==, 0);

    g_autoptr(CsTrace) pat = pick_trace("# software: NCCL 2.28.9\n# env: NCCL_ALGO=PAT\n");
    g_autoptr(CsValidateReport) rp = validate_with(topo, pat, CS_PICK_AUTO);
    g_assert_cmpuint(cs_validate_report_fastest_rows(rp), ==, rp->rows->len);
}

/* NCCL_NVLS_ENABLE=0 in the run's environment keeps NCCL's pick off NVLS even where the
 * header says the run forced nothing (it switches a feature off, it forces no algorithm), and
 * the report says so; without it NCCL picks NVLS for the 256 MiB row on 8 H100. */
static void
test_pick_nvls_disabled(void)
{
    g_autoptr(CsTopo) topo = cs_topo_load("dgx-h100x8", NULL);
    g_assert_nonnull(topo);
    g_autoptr(CsTrace) on = pick_trace("# software: NCCL 2.28.9\n# algo/proto: not forced\n");
    g_autoptr(CsValidateReport) r_on = validate_with(topo, on, CS_PICK_AUTO);
    const CsValidateRow *last = &g_array_index(r_on->rows, CsValidateRow, r_on->rows->len - 1);
    g_assert_cmpstr(last->algo, ==, "nvls");
    g_assert_null(strstr(r_on->picker, "NVLS"));

    g_autoptr(CsTrace) off = pick_trace("# software: NCCL 2.28.9\n# algo/proto: not forced\n"
                                        "# env: NCCL_DEBUG=INFO NCCL_NVLS_ENABLE=0\n");
    g_autoptr(CsValidateReport) r_off = validate_with(topo, off, CS_PICK_AUTO);
    g_assert_null(r_off->forced_algo);
    g_assert_nonnull(strstr(r_off->picker, "without NVLS and NVLSTree (NCCL_NVLS_ENABLE=0)"));
    assert_rows_picked(r_off, topo, "nccl:2.28",
                       CS_NCCL_ALL_ALGOS
                           & ~((1u << CS_NCCL_ALGO_NVLS) | (1u << CS_NCCL_ALGO_NVLS_TREE)));
    for (guint i = 0; i < r_off->rows->len; i++)
        g_assert_cmpstr(g_array_index(r_off->rows, CsValidateRow, i).algo, !=, "nvls");
}

/* NCCL has no model for all-to-all (it runs grouped sends): collsim's fastest picks. */
static void
test_pick_no_nccl_model(void)
{
    g_autoptr(CsTopo) topo = cs_topo_load("dgx-h100x8", NULL);
    g_assert_nonnull(topo);
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTrace) trace = cs_trace_load_data(
        "# collective: alltoall\n# ranks: 8\n# software: NCCL 2.28.9\n"
        "#       size         count      type   redop    root     time   algbw   busbw #wrong\n"
        "     1048576        32768     float    none      -1    40.00   26.21   22.94      0\n",
        "alltoall", &error);
    g_assert_no_error(error);
    g_autoptr(CsValidateReport) r = validate_with(topo, trace, CS_PICK_AUTO);
    g_assert_cmpstr(r->picker, ==, "collsim's fastest");
}

/* An RCCL trace, and any trace under --pick fastest: collsim's fastest candidate. */
static void
test_pick_fastest(void)
{
    g_autoptr(CsTopo) topo = cs_topo_load("dgx-h100x8", NULL);
    g_assert_nonnull(topo);
    g_autoptr(CsTrace) rccl = pick_trace("# rccl-tests: Version develop:a7809b3\n");
    g_autoptr(CsTrace) nccl = pick_trace("# software: NCCL 2.26.2\n");
    g_autoptr(CsValidateReport) auto_rccl = validate_with(topo, rccl, CS_PICK_AUTO);
    g_autoptr(CsValidateReport) fastest = validate_with(topo, nccl, CS_PICK_FASTEST);
    g_assert_cmpstr(auto_rccl->picker, ==, "collsim's fastest");
    g_assert_cmpstr(fastest->picker, ==, "collsim's fastest");

    CsPredictOptions options;
    cs_predict_options_init(&options);
    options.nranks = 8;
    for (guint i = 0; i < fastest->rows->len; i++) {
        const CsValidateRow *a = &g_array_index(auto_rccl->rows, CsValidateRow, i);
        const CsValidateRow *b = &g_array_index(fastest->rows, CsValidateRow, i);
        CsPrediction best;
        g_assert_true(cs_predict_best(topo, CS_OP_ALL_REDUCE, b->size_bytes, NULL, -1, &options,
                                      &best, NULL));
        g_assert_cmpstr(b->algo, ==, best.algo->name);
        g_assert_cmpstr(b->proto, ==, cs_proto_name(best.proto));
        g_assert_cmpfloat_with_epsilon(b->predicted_us, best.time_us, 1e-9);
        g_assert_cmpstr(a->algo, ==, b->algo);
        g_assert_cmpstr(a->proto, ==, b->proto);
    }
}

/* On mi300x-x8-xgmi (RCCL: LL and Simple by default) an RCCL trace's rows picked by collsim's
 * fastest keep to the default protocols, and a trace whose NCCL_PROTO lists LL128 may get it:
 * at 4 MiB the engine's fastest is LL128, and LL otherwise. */
static void
test_pick_fastest_default_protocols(void)
{
    g_autoptr(CsTopo) topo = cs_topo_load("mi300x-x8-xgmi", NULL);
    g_assert_nonnull(topo);
    g_autoptr(CsTrace) plain = pick_trace("# rccl-tests: Version develop:a7809b3\n");
    g_autoptr(CsTrace) listed
        = pick_trace("# algo/proto: NCCL_PROTO=LL,LL128\n# rccl-tests: Version develop:a7809b3\n");
    g_autoptr(CsValidateReport) a = validate_with(topo, plain, CS_PICK_FASTEST);
    g_autoptr(CsValidateReport) b = validate_with(topo, listed, CS_PICK_FASTEST);
    const CsValidateRow *row_a = &g_array_index(a->rows, CsValidateRow, 1);
    const CsValidateRow *row_b = &g_array_index(b->rows, CsValidateRow, 1);
    g_assert_cmpint(row_a->size_bytes, ==, 4 << 20);
    g_assert_cmpstr(row_a->proto, ==, "LL");
    g_assert_cmpstr(row_b->proto, ==, "LL128");
    for (guint i = 0; i < a->rows->len; i++)
        g_assert_cmpstr(g_array_index(a->rows, CsValidateRow, i).proto, !=, "LL128");
}

/* On AMD GPUs RCCL's own tuning model picks an RCCL trace's rows (the newest set collsim carries
 * when the trace names no release), and says so. On one MI300X node RCCL's MSCCL scheduler
 * comes first (allpairs.c): 1 KiB (256 floats, a multiple of the LL file's 256 chunks) and
 * 4 MiB run its all-pairs files; 256 MiB is past them, where the tuning model (tuning_model_5,
 * see test-nccl-model /nccl-model/rccl/mi300x-one-node) takes ring/Simple. An NVIDIA topology
 * keeps collsim's fastest for an RCCL trace. */
static void
test_pick_rccl_model(void)
{
    g_autoptr(CsTopo) topo = cs_topo_load("mi300x-x8-xgmi", NULL);
    g_assert_nonnull(topo);
    g_autoptr(CsTrace) trace = pick_trace("# rccl-tests: Version develop:a7809b3\n");
    g_autoptr(CsTrace) named = pick_trace("RCCL version : 2.27.7-HEAD:96a25b5\n");
    g_autoptr(CsValidateReport) r = validate_with(topo, trace, CS_PICK_AUTO);
    g_autoptr(CsValidateReport) n = validate_with(topo, named, CS_PICK_AUTO);
    g_assert_true(r->nccl_picks);
    g_assert_true(g_str_has_prefix(r->picker, "RCCL 2.26's tuning model (trace: RCCL"));
    g_assert_cmpstr(n->picker, ==, "RCCL 2.26's tuning model (trace: RCCL 2.27.7)");
    const char *const want[][2]
        = { { "allpairs", "LL" }, { "allpairs", "Simple" }, { "ring", "Simple" } };
    g_assert_cmpuint(r->rows->len, ==, G_N_ELEMENTS(want));
    for (guint i = 0; i < r->rows->len; i++) {
        const CsValidateRow *row = &g_array_index(r->rows, CsValidateRow, i);
        g_assert_true(row->nccl_picked);
        g_assert_cmpstr(row->algo, ==, want[i][0]);
        g_assert_cmpstr(row->proto, ==, want[i][1]);
    }
    /* The row past MSCCL's files is the tuning model's own pick. */
    g_autoptr(GError) error = NULL;
    g_autoptr(CsNcclModel) rccl = cs_nccl_model_new_for_topo(topo, r->nranks, "rccl", &error);
    g_assert_no_error(error);
    CsNcclPrediction pick;
    g_assert_true(cs_nccl_model_pick_among(rccl, CS_OP_ALL_REDUCE, 268435456, CS_NCCL_ALL_ALGOS,
                                           CS_NCCL_ALL_PROTOS, &pick));
    g_assert_cmpstr(cs_nccl_algo_collsim_name(pick.algo), ==, "ring");

    g_autoptr(CsTopo) nvidia = cs_topo_load("dgx-h100x8", NULL);
    g_autoptr(CsValidateReport) f = validate_with(nvidia, trace, CS_PICK_AUTO);
    g_assert_cmpstr(f->picker, ==, "collsim's fastest");
}

/* The pick on one MI300X node for @bytes of @dtype with @redop on @nranks ranks (0: all). */
static CsPrediction
rccl_pick_mi300x(const CsTopo *topo, gint64 bytes, CsDtype dtype, CsRedop redop, int nranks)
{
    CsPredictOptions options;
    cs_predict_options_init(&options);
    options.pick = CS_PICK_AUTO;
    options.dtype = dtype;
    options.redop = redop;
    options.nranks = nranks;
    g_autoptr(GError) error = NULL;
    g_autoptr(CsNcclModel) rccl
        = cs_nccl_model_new_for_topo(topo, nranks > 0 ? nranks : 8, "rccl", &error);
    g_assert_no_error(error);
    options.nccl = rccl;
    CsPrediction p;
    g_assert_true(cs_predict_best(topo, CS_OP_ALL_REDUCE, bytes, NULL, -1, &options, &p, &error));
    g_assert_no_error(error);
    g_assert_true(p.nccl_picked);
    return p;
}

/* RCCL's MSCCL scheduler takes an all-pairs file only for an element count that is a multiple
 * of the file's chunks per loop and a size inside its range (msccl_lifecycle.cc), never for
 * avg, and only on one node of 8 AMD GPUs on an xGMI mesh, all 8 in the communicator. */
static void
test_pick_rccl_msccl_rule(void)
{
    g_autoptr(CsTopo) mi300x = cs_topo_load("mi300x-x8-xgmi", NULL);
    g_autoptr(CsTopo) nvidia = cs_topo_load("dgx-h100x8", NULL);
    g_autoptr(CsTopo) pollara = cs_topo_load("mi355x-x8-2n-pollara", NULL);
    g_assert_nonnull(mi300x);
    g_assert_nonnull(nvidia);
    g_assert_nonnull(pollara);
    /* The files: LL on 4 channels to 64 KiB (256 chunks), LL on 8 to 512 KiB - 1 and Simple on
     * 8 to 16 MiB (512 chunks). */
    const struct {
        gint64 bytes;
        const char *algo;
        const char *proto;
        int channels;
    } cases[] = {
        { 8, "ring", NULL, 0 },
        { 1024, "allpairs", "LL", 4 },
        { 65536, "allpairs", "LL", 4 },
        { 65540, "ring", NULL, 0 }, /* 16385 floats */
        { 66560, "ring", NULL, 0 }, /* 16640 floats: a multiple of 256, not of 512 */
        { 131072, "allpairs", "LL", 8 },
        { 262144, "allpairs", "LL", 8 },
        { 524288, "allpairs", "Simple", 8 },
        { 16777216, "allpairs", "Simple", 8 },
        { 33554432, "ring", NULL, 0 },
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        CsPrediction p = rccl_pick_mi300x(mi300x, cases[i].bytes, CS_DTYPE_FLOAT, CS_REDOP_SUM, 0);
        g_assert_cmpstr(p.algo->name, ==, cases[i].algo);
        if (cases[i].proto != NULL)
            g_assert_cmpstr(cs_proto_name(p.proto), ==, cases[i].proto);
        if (cases[i].channels > 0)
            g_assert_cmpint(p.n_channels, ==, cases[i].channels);
    }
    /* 1 KiB of doubles is 128 elements; avg never runs MSCCL; nor does a communicator of 4. */
    g_assert_cmpstr(rccl_pick_mi300x(mi300x, 1024, CS_DTYPE_DOUBLE, CS_REDOP_SUM, 0).algo->name, ==,
                    "ring");
    g_assert_cmpstr(rccl_pick_mi300x(mi300x, 1024, CS_DTYPE_FLOAT, CS_REDOP_AVG, 0).algo->name, ==,
                    "ring");
    g_assert_cmpstr(rccl_pick_mi300x(mi300x, 4096, CS_DTYPE_FLOAT, CS_REDOP_SUM, 4).algo->name, !=,
                    "allpairs");
    /* Not a one-node xGMI mesh of AMD GPUs: no MSCCL. */
    for (int k = 0; k < 2; k++) {
        const CsTopo *topo = k == 0 ? nvidia : pollara;
        CsPredictOptions options;
        cs_predict_options_init(&options);
        options.pick = CS_PICK_AUTO;
        g_autoptr(GError) error = NULL;
        g_autoptr(CsNcclModel) model = cs_nccl_model_new_for_topo(topo, cs_topo_n_ranks(topo),
                                                                  k == 0 ? "nccl" : "rccl", &error);
        g_assert_no_error(error);
        options.nccl = model;
        CsPrediction p;
        g_assert_true(
            cs_predict_best(topo, CS_OP_ALL_REDUCE, 1048576, NULL, -1, &options, &p, &error));
        g_assert_cmpstr(p.algo->name, !=, "allpairs");
    }
}

/* ---- Where a smaller trace's ranks ran ---- */

static CsTrace *
data_trace(const char *name)
{
    g_autofree char *path = g_test_build_filename(G_TEST_DIST, "data", "validate", name, NULL);
    g_autoptr(GError) error = NULL;
    CsTrace *trace = cs_trace_load_file(path, &error);
    g_assert_no_error(error);
    return trace;
}

static void
test_unpredicted_row(void)
{
    g_autofree char *topo_path
        = g_test_build_filename(G_TEST_DIST, "data", "cli-errors", "slow-links.json", NULL);
    g_autoptr(GError) load_error = NULL;
    g_autoptr(CsTopo) topo = cs_topo_load(topo_path, &load_error);
    g_assert_no_error(load_error);
    g_autoptr(CsTrace) trace = data_trace("unpredictable-row.txt");
    CsPredictOptions options;
    cs_predict_options_init(&options);
    g_autoptr(GError) error = NULL;

    g_test_summary("A row collsim cannot predict (8 TiB on 1 MB/s links outruns the clock) is "
                   "said with its line and why; the other rows still come out");
    CsValidateReport *r = cs_validate_trace(topo, trace, &options, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(r->rows->len, ==, 1);
    g_assert_cmpuint(r->unpredicted->len, ==, 1);
    const char *why = g_ptr_array_index(r->unpredicted, 0);
    g_assert_nonnull(strstr(why, "unpredictable-row.txt:11: "));
    g_assert_nonnull(strstr(why, "longer than collsim's clock counts"));
    g_assert_cmpint(g_array_index(r->rows, CsValidateRow, 0).size_bytes, ==, 1024);
    cs_validate_report_free(r);
}

/* An all-reduce trace of 8 ranks with @headers (Rank lines, a nodes header), rows at 1 MiB and
 * 256 MiB. */
static CsTrace *
eight_rank_trace(const char *headers)
{
    g_autofree char *text = g_strdup_printf(
        "# collective: all_reduce\n# ranks: 8\n%s"
        "#       size         count      type   redop    root     time   algbw   busbw #wrong\n"
        "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)\n"
        "     1048576        262144     float     sum      -1    60.00   17.48   30.58      0\n"
        "   268435456      67108864     float     sum      -1  3000.00   89.48  156.59      0\n",
        headers);
    g_autoptr(GError) error = NULL;
    CsTrace *trace = cs_trace_load_data(text, "eight", &error);
    g_assert_no_error(error);
    return trace;
}

/* CsValidateRowDone: appends the size to the GArray (gint64) @data. */
static void
row_told(gint64 size_bytes, gpointer data)
{
    g_array_append_val((GArray *)data, size_bytes);
}

static gint
compare_sizes(gconstpointer a, gconstpointer b)
{
    const gint64 x = *(const gint64 *)a;
    const gint64 y = *(const gint64 *)b;
    return x < y ? -1 : x > y;
}

/* Setup: a trace of 5 rows, one of size 0 and one whose time is N/A, predicted on 2 threads.
 * Expectation: cs_validate_trace_n_rows() counts the 3 rows with a size and a time, and the
 * row callback (progress lines) is told of exactly those, once each, whatever order the
 * threads end them in. */
static void
test_rows_told(void)
{
    static const char text[]
        = "# collective: all_reduce\n# ranks: 8\n"
          "#       size         count      type   redop    root     time   algbw   busbw #wrong\n"
          "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)\n"
          "           0             0     float     sum      -1     5.00    0.00    0.00      0\n"
          "        1024           256     float     sum      -1    20.00    0.05    0.09      0\n"
          "     1048576        262144     float     sum      -1    60.00   17.48   30.58      0\n"
          "     4194304       1048576     float     sum      -1      N/A     N/A     N/A    N/A\n"
          "   268435456      67108864     float     sum      -1  3000.00   89.48  156.59      0\n";
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTrace) trace = cs_trace_load_data(text, "five", &error);
    g_assert_no_error(error);
    g_assert_cmpuint(cs_validate_trace_n_rows(trace), ==, 3);
    g_autoptr(CsTopo) topo = cs_topo_load("dgx-h100x8", &error);
    g_assert_no_error(error);
    CsPredictOptions options;
    cs_predict_options_init(&options);
    options.jobs = 2;
    g_autoptr(GArray) told = g_array_new(FALSE, FALSE, sizeof(gint64));
    g_autoptr(CsValidateReport) report = cs_validate_trace_full(
        topo, trace, &options, NULL, CS_VALIDATE_PLACED, row_told, told, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(report->rows->len, ==, 3);
    g_assert_cmpuint(told->len, ==, 3);
    g_array_sort(told, compare_sizes);
    for (guint i = 0; i < 3; i++)
        g_assert_cmpint(g_array_index(told, gint64, i), ==,
                        g_array_index(report->rows, CsValidateRow, i).size_bytes);
}

static void
assert_map(const CsValidateReport *report, const int *want, int n)
{
    g_assert_cmpint(report->nranks, ==, n);
    for (int r = 0; r < n; r++)
        g_assert_cmpint(report->topo_ranks[r], ==, want[r]);
}

/* 8 ranks on 2 hosts of 4 GPUs (the Rank lines say so) on the 2 x 8-GPU template: ranks 4-7
 * run on node 1's first 4 GPUs (topology ranks 8-11), not on node 0's GPUs 4-7, so the ring
 * crosses the network. Setup: the same rows predicted on topology subsets made by hand. The
 * placed prediction equals the one on {0-3, 8-11} and, at 256 MiB, is slower than the one on
 * {0-7} (NVLink only); before placement the report ran on {0-7}. */
static void
test_place_two_hosts(void)
{
    g_autoptr(CsTopo) topo = cs_topo_load("hgx-h100x8-2n", NULL);
    g_assert_nonnull(topo);
    g_autoptr(CsTrace) trace = data_trace("two-hosts-4gpu.txt");
    const char *host = NULL;
    int device = -1;
    g_assert_true(cs_trace_rank_place(trace, 5, &host, &device));
    g_assert_cmpstr(host, ==, "node-b");
    g_assert_cmpint(device, ==, 1);
    g_assert_false(cs_trace_rank_place(trace, 8, NULL, NULL));

    g_autoptr(CsValidateReport) report = validate_with(topo, trace, CS_PICK_AUTO);
    static const int want[] = { 0, 1, 2, 3, 8, 9, 10, 11 };
    assert_map(report, want, 8);
    g_assert_true(report->placement_said);
    g_assert_nonnull(strstr(report->placement, "ranks 4-7 on node 1 (topology ranks 8-11)"));
    g_assert_nonnull(strstr(report->placement, "2 hosts"));

    static const int first[] = { 0, 1, 2, 3, 4, 5, 6, 7 };
    g_autoptr(CsTopo) on_placed = cs_topo_subset(topo, want, 8);
    g_autoptr(CsTopo) on_first = cs_topo_subset(topo, first, 8);
    g_assert_cmpint(cs_topo_rank_node(on_placed, 4), !=, cs_topo_rank_node(on_placed, 3));
    g_autoptr(CsValidateReport) placed = validate_with(on_placed, trace, CS_PICK_AUTO);
    g_autoptr(CsValidateReport) node0 = validate_with(on_first, trace, CS_PICK_AUTO);
    for (guint i = 0; i < report->rows->len; i++)
        g_assert_cmpfloat(g_array_index(report->rows, CsValidateRow, i).predicted_us, ==,
                          g_array_index(placed->rows, CsValidateRow, i).predicted_us);
    const double big_placed = g_array_index(report->rows, CsValidateRow, 1).predicted_us;
    const double big_node0 = g_array_index(node0->rows, CsValidateRow, 1).predicted_us;
    g_assert_cmpint(g_array_index(report->rows, CsValidateRow, 1).size_bytes, ==, 256 << 20);
    g_assert_cmpfloat(big_placed, >, 1.5 * big_node0);

    /* As calibrate fits it: the topology's first ranks, on the whole topology. */
    CsPredictOptions options;
    cs_predict_options_init(&options);
    g_autoptr(GError) error = NULL;
    g_autoptr(CsValidateReport) unplaced = cs_validate_trace_full(
        topo, trace, &options, NULL, CS_VALIDATE_FIRST_RANKS, NULL, NULL, &error);
    g_assert_no_error(error);
    assert_map(unplaced, first, 8);
    g_assert_nonnull(strstr(unplaced->placement, "first 8 ranks"));

    /* A one-host trace of 8 ranks runs on node 0 alone: the figures of the subset {0-7}, a
     * machine of one node (NVLS possible), not of 8 ranks of the 2-node machine. */
    g_autoptr(CsTrace) one_host = eight_rank_trace("# nodes: 1\n");
    g_autoptr(CsValidateReport) alone = validate_with(topo, one_host, CS_PICK_AUTO);
    g_autoptr(CsValidateReport) alone_subset = validate_with(on_first, one_host, CS_PICK_AUTO);
    assert_map(alone, first, 8);
    for (guint i = 0; i < alone->rows->len; i++) {
        const CsValidateRow *x = &g_array_index(alone->rows, CsValidateRow, i);
        const CsValidateRow *y = &g_array_index(alone_subset->rows, CsValidateRow, i);
        g_assert_cmpfloat(x->predicted_us, ==, y->predicted_us);
        g_assert_cmpstr(x->algo, ==, y->algo);
    }
}

/* Without Rank lines, a `nodes` header that divides the ranks places them node-major; one
 * that does not, or none, leaves the topology's first ranks, and the report says why. */
static void
test_place_nodes_header(void)
{
    g_autoptr(CsTopo) topo = cs_topo_load("hgx-h100x8-2n", NULL);
    g_assert_nonnull(topo);
    g_autoptr(CsTrace) two = eight_rank_trace("# nodes: 2 (4 GPUs each)\n");
    g_autoptr(CsValidateReport) a = validate_with(topo, two, CS_PICK_AUTO);
    static const int want[] = { 0, 1, 2, 3, 8, 9, 10, 11 };
    assert_map(a, want, 8);
    g_assert_nonnull(strstr(a->placement, "nodes header"));

    static const int first[] = { 0, 1, 2, 3, 4, 5, 6, 7 };
    g_autoptr(CsTrace) three = eight_rank_trace("# nodes: 3\n");
    g_autoptr(CsValidateReport) b = validate_with(topo, three, CS_PICK_AUTO);
    assert_map(b, first, 8);
    g_assert_nonnull(strstr(b->placement, "does not say"));
    g_autoptr(CsTrace) none = eight_rank_trace("");
    g_autoptr(CsValidateReport) c = validate_with(topo, none, CS_PICK_AUTO);
    assert_map(c, first, 8);
    g_assert_true(c->placement_said); /* 8 of the topology's 16 ranks */
}

/* One host's device indices pick the node's GPUs (devices 4-7 -> ranks 4-7 of node 0); hosts
 * that do not fit the nodes (two hosts, one node) leave the first ranks, and say so; a trace
 * on every rank of its one node says nothing. */
static void
test_place_devices_and_misfit(void)
{
    g_autoptr(CsTopo) topo = cs_topo_load("dgx-h100x8", NULL);
    g_assert_nonnull(topo);
    GString *lines = g_string_new(NULL);
    for (int r = 0; r < 4; r++)
        g_string_append_printf(lines,
                               "#  Rank %d Group 0 Pid 1 on h device %d [0x1] NVIDIA H100 80GB "
                               "HBM3\n",
                               r, 4 + r);
    g_autofree char *text = g_strdup_printf(
        "# collective: all_reduce\n# ranks: 4\n%s"
        "#       size         count      type   redop    root     time   algbw   busbw #wrong\n"
        "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)\n"
        "     1048576        262144     float     sum      -1    30.00   34.95   52.43      0\n",
        lines->str);
    g_string_free(lines, TRUE);
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTrace) upper = cs_trace_load_data(text, "upper", &error);
    g_assert_no_error(error);
    g_autoptr(CsValidateReport) a = validate_with(topo, upper, CS_PICK_AUTO);
    static const int want[] = { 4, 5, 6, 7 };
    assert_map(a, want, 4);

    g_autoptr(CsTrace) two = data_trace("two-hosts-4gpu.txt");
    g_autoptr(CsValidateReport) b = validate_with(topo, two, CS_PICK_AUTO);
    static const int first[] = { 0, 1, 2, 3, 4, 5, 6, 7 };
    assert_map(b, first, 8);
    g_assert_false(b->placement_said);
    g_assert_nonnull(strstr(b->placement, "do not fit its nodes: 2 hosts, 1 nodes"));
}

/* ---- NCCL's own cost model beside collsim's ---- */

/* validate --model nccl:2.19: every row also holds NCCL 2.19's pick and time (the model's own
 * answer for the same size and ranks), its busbw error is recomputed from that time, and
 * collsim's own figures do not move. "nccl" alone takes the release nearest the trace's. */
static void
test_nccl_model(void)
{
    g_autoptr(CsTopo) topo = cs_topo_load("dgx-h100x8", NULL);
    g_assert_nonnull(topo);
    g_autoptr(CsTrace) trace = pick_trace("# software: NCCL 2.19.3\n");
    CsPredictOptions options;
    cs_predict_options_init(&options);
    g_autoptr(GError) error = NULL;
    g_autoptr(CsValidateReport) plain = cs_validate_trace(topo, trace, &options, &error);
    g_assert_no_error(error);
    g_assert_null(plain->nccl_model);
    g_autoptr(CsValidateReport) report = cs_validate_trace_full(
        topo, trace, &options, "nccl:2.19", CS_VALIDATE_PLACED, NULL, NULL, &error);
    g_assert_no_error(error);
    g_assert_cmpstr(report->nccl_model, ==, "NCCL 2.19's cost model");
    g_autoptr(CsNcclModel) nccl = cs_nccl_model_new_for_topo(topo, 8, "nccl:2.19", &error);
    g_assert_no_error(error);
    for (guint i = 0; i < report->rows->len; i++) {
        const CsValidateRow *row = &g_array_index(report->rows, CsValidateRow, i);
        CsNcclPrediction want;
        g_assert_true(cs_nccl_model_pick(nccl, CS_OP_ALL_REDUCE, row->size_bytes, &want));
        g_assert_cmpfloat_with_epsilon(row->nccl_us, want.time_us, 1e-9);
        g_assert_cmpstr(row->nccl_algo, ==, cs_nccl_algo_env_name(want.algo));
        const double busbw = row->size_bytes / (want.time_us * 1e3) * 2 * 7 / 8;
        g_assert_cmpfloat_with_epsilon(row->nccl_busbw_error, busbw / row->measured_busbw_GBps - 1,
                                       1e-9);
        g_assert_cmpfloat(row->predicted_us, ==,
                          g_array_index(plain->rows, CsValidateRow, i).predicted_us);
    }
    g_assert_cmpint(report->nccl_all.n_rows, ==, report->rows->len);
    g_assert_cmpint(plain->nccl_all.n_rows, ==, 0);

    g_autoptr(CsValidateReport) nearest = cs_validate_trace_full(
        topo, trace, &options, "nccl", CS_VALIDATE_PLACED, NULL, NULL, &error);
    g_assert_no_error(error);
    g_assert_cmpstr(nearest->nccl_model, ==, "NCCL 2.19's cost model");
    g_assert_null(cs_validate_trace_full(topo, trace, &options, "nccl:1.0", CS_VALIDATE_PLACED,
                                         NULL, NULL, &error));
    g_assert_error(error, CS_NCCL_ERROR, CS_NCCL_ERROR_VERSION);
}

/* NCCL_ALGO / NCCL_PROTO bound NCCL's model as they bound NCCL; all-to-all has no model and
 * the report says why, with no rows. */
static void
test_nccl_model_forced_and_none(void)
{
    g_autoptr(CsTopo) topo = cs_topo_load("dgx-h100x8", NULL);
    g_assert_nonnull(topo);
    g_autoptr(CsTrace) forced = pick_trace("# algo/proto: NCCL_ALGO=Ring NCCL_PROTO=Simple\n");
    CsPredictOptions options;
    cs_predict_options_init(&options);
    g_autoptr(GError) error = NULL;
    g_autoptr(CsValidateReport) a = cs_validate_trace_full(topo, forced, &options, "nccl",
                                                           CS_VALIDATE_PLACED, NULL, NULL, &error);
    g_assert_no_error(error);
    for (guint i = 0; i < a->rows->len; i++) {
        g_assert_cmpstr(g_array_index(a->rows, CsValidateRow, i).nccl_algo, ==, "Ring");
        g_assert_cmpstr(g_array_index(a->rows, CsValidateRow, i).nccl_proto, ==, "Simple");
    }
    static const char alltoall[]
        = "# collective: alltoall\n# ranks: 8\n"
          "#       size         count      type   redop    root     time   algbw   busbw #wrong\n"
          "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)\n"
          "     1048576         32768     float    none      -1    40.00   26.21   22.94      0\n";
    g_autoptr(CsTrace) trace = cs_trace_load_data(alltoall, "a2a", &error);
    g_assert_no_error(error);
    g_autoptr(CsValidateReport) b = cs_validate_trace_full(topo, trace, &options, "nccl",
                                                           CS_VALIDATE_PLACED, NULL, NULL, &error);
    g_assert_no_error(error);
    g_assert_nonnull(b->nccl_note);
    g_assert_cmpint(b->nccl_all.n_rows, ==, 0);
    g_assert_true(isnan(g_array_index(b->rows, CsValidateRow, 0).nccl_us));
}

/* ---- GPU models NCCL's generation table does not know ---- */

/* A topology and a trace of "GeForce RTX 5090" (not in the table): two warnings, one saying
 * that collsim's fastest picks in NCCL's place, and the picker says why; the RTX 2080 Ti box
 * and its trace (in the table) raise none. */
static void
test_unknown_gpu(void)
{
    g_autofree char *path
        = g_test_build_filename(G_TEST_DIST, "data", "validate", "rtx5090-x2.json", NULL);
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTopo) topo = cs_topo_load(path, &error);
    g_assert_no_error(error);
    g_autoptr(CsTrace) trace = data_trace("rtx5090-2gpu.txt");
    g_autoptr(CsValidateReport) report = validate_with(topo, trace, CS_PICK_AUTO);
    g_assert_cmpint(report->warnings->len, ==, 2);
    const char *first = g_ptr_array_index(report->warnings, 0);
    g_assert_nonnull(strstr(first, "\"GeForce RTX 5090\""));
    g_assert_nonnull(strstr(first, "collsim's fastest choice picks instead"));
    g_assert_nonnull(strstr(g_ptr_array_index(report->warnings, 1), "NVIDIA GeForce RTX 5090"));
    g_assert_false(report->nccl_picks);
    g_assert_nonnull(strstr(report->picker, "not in NCCL's generation table"));
    /* NCCL's model held beside says what it assumed. */
    CsPredictOptions options;
    cs_predict_options_init(&options);
    options.pick = CS_PICK_AUTO;
    g_autoptr(CsValidateReport) beside = cs_validate_trace_full(
        topo, trace, &options, "nccl", CS_VALIDATE_PLACED, NULL, NULL, &error);
    g_assert_no_error(error);
    g_assert_cmpint(beside->warnings->len, ==, 3);
    g_assert_nonnull(strstr(g_ptr_array_index(beside->warnings, 0), "assumes Hopper GPUs"));

    g_autoptr(CsTopo) known = cs_topo_load("rtx2080ti-x2-pcie3-shm", NULL);
    g_assert_nonnull(known);
    g_autofree char *shipped = g_test_build_filename(
        G_TEST_DIST, "..", "traces", "rtx2080ti-2gpu-pcie3-nop2p_broadcast.txt", NULL);
    g_autoptr(CsTrace) measured = cs_trace_load_file(shipped, &error);
    g_assert_no_error(error);
    g_autoptr(CsValidateReport) quiet = validate_with(known, measured, CS_PICK_AUTO);
    g_assert_cmpint(quiet->warnings->len, ==, 0);
    g_assert_true(quiet->nccl_picks);
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    for (gsize i = 0; i < G_N_ELEMENTS(settings_cases); i++) {
        g_autofree char *path = g_strdup_printf("/validate/settings/%s", settings_cases[i].name);
        g_test_add_data_func(path, &settings_cases[i], test_settings);
    }
    g_test_add_func("/validate/pick/nccl-trace", test_pick_nccl_trace);
    g_test_add_func("/validate/pick/forced-algo", test_pick_forced_algo);
    g_test_add_func("/validate/pick/fastest", test_pick_fastest);
    g_test_add_func("/validate/pick/fastest-default-protocols",
                    test_pick_fastest_default_protocols);
    g_test_add_func("/validate/pick/rccl-model", test_pick_rccl_model);
    g_test_add_func("/validate/pick/rccl-msccl-rule", test_pick_rccl_msccl_rule);
    g_test_add_func("/validate/pick/within-nccl-algo", test_pick_within_nccl_algo);
    g_test_add_func("/validate/pick/no-nccl-model", test_pick_no_nccl_model);
    g_test_add_func("/validate/pick/nvls-disabled", test_pick_nvls_disabled);
    g_test_add_func("/validate/unpredicted-row", test_unpredicted_row);
    g_test_add_func("/validate/masks", test_masks);
    g_test_add_func("/validate/gpu-mismatch", test_gpu_mismatch);
    g_test_add_func("/validate/repeated-sizes", test_repeated_sizes);
    g_test_add_func("/validate/place/two-hosts", test_place_two_hosts);
    g_test_add_func("/validate/place/nodes-header", test_place_nodes_header);
    g_test_add_func("/validate/place/devices-and-misfit", test_place_devices_and_misfit);
    g_test_add_func("/validate/nccl-model/rows", test_nccl_model);
    g_test_add_func("/validate/nccl-model/forced-and-none", test_nccl_model_forced_and_none);
    g_test_add_func("/validate/unknown-gpu", test_unknown_gpu);
    g_test_add_func("/validate/rows-told", test_rows_told);
    return g_test_run();
}
