// SPDX-License-Identifier: MIT
/* Validation: holds each row of a measured nccl-tests trace against the engine's prediction
 * for the same point, and summarizes the error per regime (latency, knee, bandwidth). */
#include "analysis/validate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algos/registry.h"
#include "base/parallel.h"

/* ---- Reading what the trace forced ---- */

static char *
find_setting(const char *text, const char *key)
{
    if (text == NULL)
        return NULL;
    /* A list ("Tree,Ring"), an exclusion ("^NVLS") or per-collective lists
     * ("allreduce:Tree;broadcast:Ring") as NCCL reads them. */
    g_autofree char *pattern = g_strdup_printf("%s=([A-Za-z0-9_,^:;-]+)", key);
    g_autoptr(GRegex) re = g_regex_new(pattern, 0, 0, NULL);
    g_autoptr(GMatchInfo) match = NULL;
    if (!g_regex_match(re, text, 0, &match))
        return NULL;
    return g_match_info_fetch(match, 1);
}

/* The one entry of @mask, or -1 when it has none or several. */
static int
single_bit(guint mask)
{
    return mask != 0 && (mask & (mask - 1)) == 0 ? g_bit_nth_lsf(mask, -1) : -1;
}

/* Whether @trace's run set NCCL_NVLS_ENABLE=0 (`env`, `launcher` or `command`). That forces
 * no algorithm, it takes NVLS and NVLSTree away (NCCL's nvls.cc never sets nvlsSupport), so
 * it counts even where the header says nothing was forced. */
static gboolean
trace_disables_nvls(const CsTrace *trace)
{
    const char *keys[] = { "env", "launcher", "command" };

    for (gsize i = 0; i < G_N_ELEMENTS(keys); i++) {
        g_autofree char *nvls
            = find_setting(cs_trace_get_header(trace, keys[i]), "NCCL_NVLS_ENABLE");
        if (nvls != NULL && strcmp(nvls, "0") == 0)
            return TRUE;
    }
    return FALSE;
}

/**
 * cs_validate_trace_masks:
 * What NCCL_ALGO and NCCL_PROTO allowed the run, as masks (1 << CsNcclAlgo, 1 << CsProto; 0:
 * not set). The `algo/proto` header says in words whether the run forced anything ("not
 * forced", or "NCCL_ALGO=Ring forced"); `env`, `launcher` and `command` carry the variables
 * themselves. A header that says "not forced" wins over a stray mention. NCCL_NVLS_ENABLE=0
 * in `env`, `launcher` or `command` removes NVLS and NVLSTree from the algorithms allowed.
 */
void
cs_validate_trace_masks(const CsTrace *trace, guint *algo_mask, guint *proto_mask)
{
    const char *sources[]
        = { cs_trace_get_header(trace, "algo/proto"), cs_trace_get_header(trace, "env"),
            cs_trace_get_header(trace, "launcher"), cs_trace_get_header(trace, "command") };
    g_autofree char *nccl_algo = NULL;
    g_autofree char *nccl_proto = NULL;
    g_autofree char *said = g_strdup(sources[0] != NULL ? sources[0] : "");
    const gboolean none_forced = g_ascii_strncasecmp(g_strstrip(said), "not forced", 10) == 0;
    for (gsize i = 0; i < G_N_ELEMENTS(sources) && !none_forced; i++) {
        if (nccl_algo == NULL)
            nccl_algo = find_setting(sources[i], "NCCL_ALGO");
        if (nccl_proto == NULL)
            nccl_proto = find_setting(sources[i], "NCCL_PROTO");
    }
    CsOp op;
    const int func = cs_trace_op(trace, &op) ? cs_nccl_func_from_op(op) : -1;
    *algo_mask = nccl_algo != NULL ? cs_nccl_list_mask(nccl_algo, FALSE, func) : 0;
    *proto_mask = nccl_proto != NULL ? cs_nccl_list_mask(nccl_proto, TRUE, func) : 0;
    if (trace_disables_nvls(trace)) {
        guint allowed = *algo_mask != 0 ? *algo_mask : CS_NCCL_ALL_ALGOS;
        *algo_mask = allowed & ~((1u << CS_NCCL_ALGO_NVLS) | (1u << CS_NCCL_ALGO_NVLS_TREE));
    }
}

/**
 * cs_validate_trace_settings:
 * The algorithm and protocol a trace forced, when it forced one each (collsim's names), and
 * the GPUs one thread drove (nccl-tests -g). A list or an exclusion forces nothing here: NCCL
 * picks among what it leaves (cs_validate_trace_masks()); so does an algorithm collsim does not
 * simulate or that does not implement the trace's collective (PAT on an all-reduce).
 */
void
cs_validate_trace_settings(const CsTrace *trace, char **algo, char **proto, int *gpus_per_thread)
{
    *algo = NULL;
    *proto = NULL;
    /* collsim's own backends (measure --backend cuda|mpi) name the schedule they ran. */
    const char *backend = cs_trace_get_header(trace, "backend");
    if (backend != NULL
        && (g_str_has_prefix(backend, "cuda") || g_str_has_prefix(backend, "mpi"))) {
        const char *a = cs_trace_get_header(trace, "algo");
        const char *p = cs_trace_get_header(trace, "proto");
        if (a != NULL)
            *algo = g_strdup(a);
        if (p != NULL)
            *proto = g_strdup(p);
    }
    guint algo_mask, proto_mask;
    cs_validate_trace_masks(trace, &algo_mask, &proto_mask);
    const int one_algo = single_bit(algo_mask);
    const char *collsim_algo = one_algo >= 0 ? cs_nccl_algo_collsim_name(one_algo) : NULL;
    const CsAlgo *forced = collsim_algo != NULL ? cs_algo_lookup(collsim_algo, NULL) : NULL;
    CsOp op;
    /* NCCL_ALGO=PAT on an all-reduce forces nothing collsim could run: NCCL picks among
     * what it leaves, which is nothing, and the rows are collsim's fastest. */
    if (forced != NULL && cs_trace_op(trace, &op) && (forced->ops & CS_OP_BIT(op)) == 0)
        forced = NULL;
    if (*algo == NULL && forced != NULL)
        *algo = g_strdup(collsim_algo);
    const int one_proto = single_bit(proto_mask);
    if (*proto == NULL && one_proto >= 0)
        *proto = g_strdup(cs_proto_name((CsProto)one_proto));

    /* nccl-tests' own parameter line first, then the command the header quotes. */
    *gpus_per_thread = MAX(1, cs_trace_gpus_per_thread(trace));
    const char *command = cs_trace_get_header(trace, "command");
    if (command != NULL && cs_trace_gpus_per_thread(trace) == 0) {
        /* nccl-tests spells it -g N, -gN or --ngpus N / --ngpus=N. */
        g_autoptr(GRegex) re
            = g_regex_new("(^|\\s)(?:-g\\s*|--ngpus(?:=|\\s+))([0-9]+)", 0, 0, NULL);
        g_autoptr(GMatchInfo) match = NULL;
        if (g_regex_match(re, command, 0, &match)) {
            g_autofree char *g = g_match_info_fetch(match, 2);
            guint64 n;
            if (g_ascii_string_to_unsigned(g, 10, 1, 1 << 20, &n, NULL))
                *gpus_per_thread = (int)n;
        }
    }
}

int
cs_validate_trace_channels(const CsTrace *trace, GError **error)
{
    const char *backend = cs_trace_get_header(trace, "backend");
    const char *channels = cs_trace_get_header(trace, "channels");
    guint64 n;
    if (backend == NULL || channels == NULL)
        return 0;
    /* collsim measure writes 1 .. 64, as its --channels takes them. */
    if (!g_ascii_string_to_unsigned(channels, 10, 1, 64, &n, NULL)) {
        g_set_error(error, CS_TRACE_ERROR, CS_TRACE_ERROR_MALFORMED,
                    "%s: channels header: \"%s\" is not a channel count (1 to 64)",
                    cs_trace_origin(trace), channels);
        return -1;
    }
    return (int)n;
}

/* ---- Who picks what the trace did not force ---- */

/* Whether rank 0's device is an AMD GPU (RCCL's tuning model applies). */
static gboolean
topo_gpus_amd(const CsTopo *topo)
{
    const CsDevice *dev = cs_topo_device(topo, cs_topo_rank_device(topo, 0));
    return dev->kind == CS_DEVICE_GPU
           && cs_nccl_amd_arch_from_model(dev->model) != CS_NCCL_AMD_NONE;
}

/**
 * cs_validate_nccl_model:
 * NCCL's tuning model for @trace's @nranks ranks on @topo, when NCCL picks the rows'
 * algorithm and protocol: always under CS_PICK_NCCL; under CS_PICK_AUTO when the trace was
 * measured with NCCL (or names no library: nccl-tests is NCCL's) on GPUs NCCL's model knows.
 * An RCCL trace, or ranks that are not NVIDIA GPUs, keep collsim's fastest choice under
 * CS_PICK_AUTO. The constants are those of the release nearest the trace's
 * (cs_nccl_constants_nearest()). NCCL has no model for scatter, gather and all-to-all (it runs
 * them as grouped sends): NULL for those.
 * Returns: (transfer full) (nullable): NULL with no error when collsim's fastest choice
 * applies.
 */
CsNcclModel *
cs_validate_nccl_model(const CsTopo *topo, const CsTrace *trace, CsOp op, int nranks, CsPick pick,
                       GError **error)
{
    if (pick == CS_PICK_FASTEST || cs_nccl_func_from_op(op) < 0)
        return NULL;
    const char *version = NULL;
    const char *library = cs_trace_library(trace, &version);
    /* Where the GPUs are AMD, the library is RCCL and its own tuning model picks. */
    const gboolean amd = topo_gpus_amd(topo);
    if (pick == CS_PICK_AUTO && library != NULL && strcmp(library, amd ? "RCCL" : "NCCL") != 0)
        return NULL;
    const CsNcclConstants *constants
        = amd ? cs_rccl_constants_nearest(version) : cs_nccl_constants_nearest(version);
    CsNcclSystem system;
    if (!cs_nccl_system_from_topo(topo, nranks, constants, &system, error))
        return NULL;
    if (pick == CS_PICK_AUTO && system.arch_guessed)
        return NULL;
    return cs_nccl_model_new(constants, &system);
}

/**
 * cs_trace_setup_init:
 * How @trace's rows are predicted, for validate and calibrate alike: the caller's @base
 * options with the trace's ranks, GPUs per thread (-g), channels (collsim backend traces),
 * what it forced, and NCCL's model and NCCL_ALGO / NCCL_PROTO lists where NCCL picks the
 * rest. Errors name the trace.
 */
gboolean
cs_trace_setup_init(CsTraceSetup *setup, const CsTopo *topo, const CsTrace *trace, CsOp op,
                    int nranks, const CsPredictOptions *base, GError **error)
{
    const char *origin = cs_trace_origin(trace);
    int gpus_per_thread;
    *setup = (CsTraceSetup){ .options = *base, .proto = -1 };
    if (!cs_trace_check_busbw(trace, op, nranks, error))
        return FALSE;
    /* A size the reader takes (any gint64) but no prediction can: bad input, not a failure. */
    for (gsize i = 0; i < cs_trace_n_rows(trace); i++) {
        const CsTraceRow *row = cs_trace_row(trace, i);
        if (row->size_bytes > CS_PREDICT_MAX_BYTES) {
            g_set_error(error, CS_TRACE_ERROR, CS_TRACE_ERROR_MALFORMED,
                        "%s:%d: size column: %" G_GINT64_FORMAT
                        " bytes is beyond what collsim predicts (1 PiB)",
                        origin, row->line, row->size_bytes);
            return FALSE;
        }
    }
    setup->options.nranks = nranks;
    /* The trace's release decides NCCL's point-to-point plan (RCCL numbers its releases after
     * the NCCL it follows). */
    if (base->nccl_release <= 0) {
        const char *version = NULL;
        cs_trace_library(trace, &version);
        setup->options.nccl_release = cs_nccl_release_code(version);
    }
    cs_validate_trace_settings(trace, &setup->algo_name, &setup->proto_name, &gpus_per_thread);
    if (base->engine.gpus_per_thread <= 0) {
        /* Every thread drives the same number of GPUs, so they divide the ranks. */
        if (nranks > 0 && nranks % gpus_per_thread != 0) {
            g_set_error(error, CS_TRACE_ERROR, CS_TRACE_ERROR_MALFORMED,
                        "%s: %d GPUs per thread (nccl-tests -g, as the trace gives it) do not "
                        "divide its %d ranks",
                        origin, gpus_per_thread, nranks);
            cs_trace_setup_clear(setup);
            return FALSE;
        }
        setup->options.engine.gpus_per_thread = gpus_per_thread;
    }
    if (base->n_channels <= 0) {
        setup->options.n_channels = cs_validate_trace_channels(trace, error);
        if (setup->options.n_channels < 0) {
            cs_trace_setup_clear(setup);
            return FALSE;
        }
    }

    g_autoptr(GError) local = NULL;
    if (setup->algo_name != NULL
        && (setup->algo = cs_algo_lookup(setup->algo_name, &local)) == NULL)
        goto bad_header;
    if (setup->proto_name != NULL) {
        CsProto p;
        if (!cs_proto_from_name(setup->proto_name, &p, &local))
            goto bad_header;
        setup->proto = p;
    }
    if (setup->options.pick != CS_PICK_FASTEST && setup->options.nccl == NULL) {
        setup->nccl = cs_validate_nccl_model(topo, trace, op, nranks, setup->options.pick, &local);
        if (local != NULL)
            goto fail;
        setup->options.nccl = setup->nccl;
    }
    if (setup->options.pick == CS_PICK_FASTEST)
        setup->options.nccl = NULL;
    /* NCCL_ALGO / NCCL_PROTO lists bound NCCL's pick; the protocol list also bounds collsim's
     * fastest choice, in place of the GPUs' default protocols. */
    guint algo_mask, proto_mask;
    cs_validate_trace_masks(trace, &algo_mask, &proto_mask);
    setup->options.nccl_algo_mask = algo_mask;
    setup->options.nccl_proto_mask = proto_mask;
    if (setup->options.nccl != NULL) {
        const char *version = NULL;
        const char *library = cs_trace_library(trace, &version);
        g_autofree char *said = library == NULL ? g_strdup("neither library nor version named")
                                : version == NULL
                                    ? g_strdup_printf("%s version not printed", library)
                                    : g_strdup_printf("%s %s", library, version);
        const CsNcclConstants *c = cs_nccl_model_constants(setup->options.nccl);
        setup->picker = g_strdup_printf(
            "%s %s's tuning model (trace: %s)%s", c->library, c->version, said,
            trace_disables_nvls(trace) ? ", without NVLS and NVLSTree (NCCL_NVLS_ENABLE=0)" : "");
    }
    else
        setup->picker = g_strdup("collsim's fastest");
    return TRUE;

fail:
    g_propagate_prefixed_error(error, g_steal_pointer(&local), "%s: ", origin);
    cs_trace_setup_clear(setup);
    return FALSE;

bad_header:
    /* An unknown algorithm or protocol comes from the trace's headers: the file is wrong. */
    g_set_error(error, CS_TRACE_ERROR, CS_TRACE_ERROR_MALFORMED, "%s: %s", origin, local->message);
    cs_trace_setup_clear(setup);
    return FALSE;
}

void
cs_trace_setup_clear(CsTraceSetup *setup)
{
    g_clear_pointer(&setup->algo_name, g_free);
    g_clear_pointer(&setup->proto_name, g_free);
    g_clear_pointer(&setup->picker, g_free);
    g_clear_pointer(&setup->nccl, cs_nccl_model_free);
    setup->options.nccl = NULL;
}

/* Predicts one row as @setup says: what was forced, NCCL's pick or the fastest for the rest. */
gboolean
cs_trace_setup_predict(const CsTraceSetup *setup, const CsTopo *topo, CsOp op, gint64 size_bytes,
                       const CsPredictOptions *options, CsPrediction *out, GError **error)
{
    if (setup->algo != NULL && setup->proto >= 0)
        return cs_predict_one(topo, op, size_bytes, setup->algo, (CsProto)setup->proto, options,
                              out, error);
    return cs_predict_best(topo, op, size_bytes, setup->algo, setup->proto, options, out, error);
}

/* ---- Per-trace validation ---- */

double
cs_validate_busbw(CsOp op, int nranks, gint64 size_bytes, double time_us)
{
    if (!(time_us > 0))
        return NAN;
    const double algbw = (double)size_bytes / (time_us * 1e-6) / 1e9;
    return algbw * cs_op_busbw_factor(op, nranks);
}

/* Over the rows in [@min_bytes, @max_bytes): collsim's busbw errors, or NCCL's model's when
 * @nccl. */
static void
summarize(const GArray *rows, gint64 min_bytes, gint64 max_bytes, gboolean nccl,
          CsValidateSummary *out)
{
    double log_sum = 0;
    *out = (CsValidateSummary){
        .n_rows = 0, .geomean_abs = NAN, .max_abs = NAN, .max_size_bytes = -1
    };
    for (guint i = 0; i < rows->len; i++) {
        const CsValidateRow *r = &g_array_index(rows, CsValidateRow, i);
        const double error = nccl ? r->nccl_busbw_error : r->busbw_error;
        if (r->size_bytes < min_bytes || r->size_bytes >= max_bytes || isnan(error))
            continue;
        const double e = fabs(error);
        /* A perfect row must not send the geometric mean to zero: floor at 0.01%. */
        log_sum += log(MAX(e, 1e-4));
        if (out->n_rows == 0 || e > out->max_abs) {
            out->max_abs = e;
            out->max_size_bytes = r->size_bytes;
        }
        out->n_rows++;
    }
    if (out->n_rows > 0)
        out->geomean_abs = exp(log_sum / out->n_rows);
}

/* The error of busbw for rows too small for nccl-tests to print a non-zero busbw is still
 * meaningful: we recompute busbw from size and time instead of reading the rounded column. */
static gboolean
validate_row(const CsTopo *topo, CsOp op, const CsTraceRow *row, const CsTraceSetup *setup,
             const CsPredictOptions *options, CsValidateRow *out, GError **error)
{
    CsPrediction pred;
    g_autoptr(GError) local = NULL;
    if (!cs_trace_setup_predict(setup, topo, op, row->size_bytes, options, &pred, &local)) {
        g_propagate_prefixed_error(error, g_steal_pointer(&local), "size %" G_GINT64_FORMAT ": ",
                                   row->size_bytes);
        return FALSE;
    }
    const int nranks = options->nranks;
    out->size_bytes = row->size_bytes;
    out->line = row->line;
    out->measured_us = row->out_of_place.time_us;
    out->predicted_us = pred.time_us;
    out->measured_busbw_GBps = cs_validate_busbw(op, nranks, row->size_bytes, out->measured_us);
    out->predicted_busbw_GBps = cs_validate_busbw(op, nranks, row->size_bytes, pred.time_us);
    out->time_error = (out->predicted_us - out->measured_us) / out->measured_us;
    out->busbw_error
        = (out->predicted_busbw_GBps - out->measured_busbw_GBps) / out->measured_busbw_GBps;
    out->algo = pred.algo->name;
    out->proto = cs_proto_name(pred.proto);
    out->nccl_picked = pred.nccl_picked;
    out->nccl_us = NAN;
    out->nccl_time_error = NAN;
    out->nccl_busbw_error = NAN;
    out->nccl_algo = NULL;
    out->nccl_proto = NULL;
    return TRUE;
}

/* One row of a trace to predict (--jobs): its options, its result or why it has none. */
typedef struct {
    const CsTraceRow *row;
    CsPredictOptions opts;
    CsValidateRow v;
    GError *error;
} RowJob;

typedef struct {
    const CsTopo *topo;
    CsOp op;
    const CsTraceSetup *setup;
    RowJob *rows;
    CsValidateRowDone done; /* (nullable) */
    gpointer done_data;
} RowsJob;

static void
row_job_item(guint i, gpointer data)
{
    RowsJob *all = data;
    RowJob *job = &all->rows[i];
    validate_row(all->topo, all->op, job->row, all->setup, &job->opts, &job->v, &job->error);
}

/* Tells the caller of row @i, on the calling thread, as rows end. */
static void
row_job_done(guint done, guint i, gpointer data)
{
    const RowsJob *all = data;
    (void)done;
    all->done(all->rows[i].row->size_bytes, all->done_data);
}

/* Row @i's slot, for the other ranks of a study: its error, or every field of its row. */
static void
row_job_pack(guint i, GByteArray *out, gpointer data)
{
    const RowsJob *all = data;
    const RowJob *job = &all->rows[i];
    cs_pack_error(out, job->error);
    if (job->error != NULL)
        return;
    const CsValidateRow *v = &job->v;
    cs_pack_int(out, v->size_bytes);
    cs_pack_int(out, v->line);
    cs_pack_double(out, v->measured_us);
    cs_pack_double(out, v->predicted_us);
    cs_pack_double(out, v->measured_busbw_GBps);
    cs_pack_double(out, v->predicted_busbw_GBps);
    cs_pack_double(out, v->time_error);
    cs_pack_double(out, v->busbw_error);
    cs_pack_string(out, v->algo);
    cs_pack_string(out, v->proto);
    cs_pack_int(out, v->nccl_picked);
    cs_pack_double(out, v->nccl_us);
    cs_pack_double(out, v->nccl_time_error);
    cs_pack_double(out, v->nccl_busbw_error);
    cs_pack_string(out, v->nccl_algo);
    cs_pack_string(out, v->nccl_proto);
}

static void
row_job_unpack(guint i, CsUnpack *in, gpointer data)
{
    RowsJob *all = data;
    RowJob *job = &all->rows[i];
    job->error = cs_unpack_error(in);
    if (job->error != NULL)
        return;
    CsValidateRow *v = &job->v;
    v->size_bytes = cs_unpack_int(in);
    v->line = (int)cs_unpack_int(in);
    v->measured_us = cs_unpack_double(in);
    v->predicted_us = cs_unpack_double(in);
    v->measured_busbw_GBps = cs_unpack_double(in);
    v->predicted_busbw_GBps = cs_unpack_double(in);
    v->time_error = cs_unpack_double(in);
    v->busbw_error = cs_unpack_double(in);
    /* Static strings (algorithm and protocol names): interned ones live as long. */
    v->algo = cs_unpack_interned(in);
    v->proto = cs_unpack_interned(in);
    v->nccl_picked = (gboolean)cs_unpack_int(in);
    v->nccl_us = cs_unpack_double(in);
    v->nccl_time_error = cs_unpack_double(in);
    v->nccl_busbw_error = cs_unpack_double(in);
    v->nccl_algo = cs_unpack_interned(in);
    v->nccl_proto = cs_unpack_interned(in);
}

/* NCCL's own cost model for @v's row: its pick among what the trace's NCCL_ALGO / NCCL_PROTO
 * allowed (everything when they are not set), timed by lat + nBytes / bw. */
static void
nccl_row(const CsNcclModel *model, CsOp op, int nranks, guint algo_mask, guint proto_mask,
         CsValidateRow *v)
{
    CsNcclPrediction np;
    if (!cs_nccl_model_pick_among(model, op, v->size_bytes,
                                  algo_mask != 0 ? algo_mask : CS_NCCL_ALL_ALGOS,
                                  proto_mask != 0 ? proto_mask : CS_NCCL_ALL_PROTOS, &np))
        return;
    v->nccl_us = np.time_us;
    v->nccl_time_error = (np.time_us - v->measured_us) / v->measured_us;
    const double busbw = cs_validate_busbw(op, nranks, v->size_bytes, np.time_us);
    v->nccl_busbw_error = (busbw - v->measured_busbw_GBps) / v->measured_busbw_GBps;
    v->nccl_algo = cs_nccl_algo_env_name(np.algo);
    v->nccl_proto = cs_proto_name(np.proto);
}

/* When the GPU the trace names and the topology's are of different generations (NCCL's
 * tables, cs_nccl_arch_from_model()), the two in words: the figures then compare different
 * machines. NULL when they match or either is not recognised. (transfer full) */
static char *
gpu_mismatch(const CsTopo *topo, const CsTrace *trace)
{
    const char *ran_on = cs_trace_device_model(trace);
    const char *modelled = cs_topo_device(topo, cs_topo_rank_device(topo, 0))->model;
    gboolean known_trace = FALSE;
    gboolean known_topo = FALSE;
    if (ran_on == NULL || modelled == NULL)
        return NULL;
    const CsNcclArch a = cs_nccl_arch_from_model(ran_on, &known_trace);
    const CsNcclArch b = cs_nccl_arch_from_model(modelled, &known_topo);
    if (!known_trace || !known_topo || a == b)
        return NULL;
    return g_strdup_printf("the trace ran on %s (%s), topology %s models %s (%s)", ran_on,
                           cs_nccl_arch_name(a), cs_topo_name(topo), modelled,
                           cs_nccl_arch_name(b));
}

/* Rows that measure a size an earlier row measured: two runs' outputs in one file (two
 * hosts' jobs writing to one log, or logs concatenated). Every row is still compared on its
 * own, but a reader should know that a size counts twice in the figures. NULL when no size
 * repeats. (transfer full) */
static char *
repeated_sizes(const CsTrace *trace)
{
    g_autoptr(GHashTable) first_line = g_hash_table_new(g_int64_hash, g_int64_equal);
    const CsTraceRow *first = NULL;
    const CsTraceRow *again = NULL;
    guint n_again = 0;
    for (gsize i = 0; i < cs_trace_n_rows(trace); i++) {
        const CsTraceRow *row = cs_trace_row(trace, i);
        if (row->size_bytes == 0)
            continue; /* nccl-tests prints several for tiny all-to-alls; none is compared */
        const CsTraceRow *seen = g_hash_table_lookup(first_line, &row->size_bytes);
        if (seen == NULL) {
            g_hash_table_insert(first_line, (gpointer)&row->size_bytes, (gpointer)row);
            continue;
        }
        if (n_again++ == 0) {
            first = seen;
            again = row;
        }
    }
    if (n_again == 0)
        return NULL;
    return g_strdup_printf("%u row%s measure%s a size an earlier row measured (line %d repeats "
                           "the %" G_GINT64_FORMAT " B of line %d): two runs in one file? Every "
                           "row is compared on its own, so repeated sizes weigh more in the "
                           "figures",
                           n_again, n_again == 1 ? "" : "s", n_again == 1 ? "s" : "", again->line,
                           again->size_bytes, first->line);
}

/* ---- Where the trace's ranks ran ---- */

/* "0-3" or "5". */
static void
append_range(GString *out, int first, int last)
{
    if (first == last)
        g_string_append_printf(out, "%d", first);
    else
        g_string_append_printf(out, "%d-%d", first, last);
}

/* @map in words: runs of trace ranks on consecutive topology ranks of one node. */
static void
describe_map(const CsTopo *topo, const int *map, int nranks, GString *out)
{
    int first = 0;
    for (int r = 1; r <= nranks; r++) {
        if (r < nranks && map[r] == map[r - 1] + 1
            && cs_topo_rank_node(topo, map[r]) == cs_topo_rank_node(topo, map[first]))
            continue;
        if (first > 0)
            g_string_append(out, ", ");
        g_string_append(out, r - 1 > first ? "ranks " : "rank ");
        append_range(out, first, r - 1);
        g_string_append_printf(out, " on node %d (topology rank%s ",
                               cs_topo_rank_node(topo, map[first]), r - 1 > first ? "s" : "");
        append_range(out, map[first], map[r - 1]);
        g_string_append(out, ")");
        first = r;
    }
}

/* The host index (in order of first appearance) and device of every rank, from the trace's
 * Rank lines or its `nodes` header; FALSE when it does not say. @basis: where from. */
static gboolean
trace_hosts(const CsTrace *trace, int nranks, int *host, int *device, int *n_hosts,
            const char **basis)
{
    g_autoptr(GPtrArray) names = g_ptr_array_new();
    gboolean all = TRUE;
    for (int r = 0; r < nranks && all; r++) {
        const char *name = NULL;
        all = cs_trace_rank_place(trace, r, &name, &device[r]);
        if (!all)
            break;
        guint h;
        if (!g_ptr_array_find_with_equal_func(names, name, g_str_equal, &h)) {
            g_ptr_array_add(names, (gpointer)name);
            h = names->len - 1;
        }
        host[r] = (int)h;
    }
    if (all) {
        *n_hosts = (int)names->len;
        *basis = "its Rank lines";
        return TRUE;
    }
    /* "# nodes: 2" (or "2 (8 GPUs each)"): node-major, as nccl-tests' ranks are under MPI. */
    const char *nodes = cs_trace_get_header(trace, "nodes");
    gint64 k;
    if (nodes == NULL)
        return FALSE;
    g_autofree char *word = g_strdup(nodes);
    g_strstrip(word);
    word[strcspn(word, " \t(")] = '\0';
    if (!g_ascii_string_to_signed(word, 10, 1, nranks, &k, NULL) || nranks % k != 0)
        return FALSE;
    const int per_host = nranks / (int)k;
    for (int r = 0; r < nranks; r++) {
        host[r] = r / per_host;
        device[r] = r % per_host;
    }
    *n_hosts = (int)k;
    *basis = "its nodes header";
    return TRUE;
}

/**
 * cs_validate_place_ranks:
 * The trace's host i is the topology's node i (nodes in rank order), and each of its ranks
 * the node's GPU of the CUDA device index nccl-tests printed when the host's indices are
 * distinct and within the node, else the node's GPUs in turn. nccl-tests under MPI puts N
 * ranks on k hosts as k nodes of N/k GPUs, not the first N GPUs of the machine.
 */
char *
cs_validate_place_ranks(const CsTopo *topo, const CsTrace *trace, int nranks, int *map)
{
    g_return_val_if_fail(nranks >= 1 && nranks <= cs_topo_n_ranks(topo), NULL);
    GString *out = g_string_new(NULL);
    g_autofree int *host = g_new0(int, nranks);
    g_autofree int *device = g_new0(int, nranks);
    int n_hosts = 0;
    const char *basis = NULL;
    for (int r = 0; r < nranks; r++)
        map[r] = r;
    if (!trace_hosts(trace, nranks, host, device, &n_hosts, &basis)) {
        describe_map(topo, map, nranks, out);
        g_string_append(out, ": the topology's first ranks (the trace does not say on which "
                             "hosts its ranks ran)");
        return g_string_free(out, FALSE);
    }

    /* The topology's nodes in rank order, and each one's ranks. */
    const int n_topo = cs_topo_n_ranks(topo);
    g_autoptr(GArray) node_ids = g_array_new(FALSE, FALSE, sizeof(int));
    g_autofree int *node_of = g_new(int, n_topo);
    for (int r = 0; r < n_topo; r++) {
        const int id = cs_topo_rank_node(topo, r);
        guint k = 0;
        while (k < node_ids->len && g_array_index(node_ids, int, k) != id)
            k++;
        if (k == node_ids->len)
            g_array_append_val(node_ids, id);
        node_of[r] = (int)k;
    }
    const int n_nodes = (int)node_ids->len;
    g_autofree int *node_size = g_new0(int, n_nodes);
    for (int r = 0; r < n_topo; r++)
        node_size[node_of[r]]++;
    /* Rank lists, node by node in rank order. */
    g_autofree int *offset = g_new0(int, n_nodes + 1);
    for (int k = 0; k < n_nodes; k++)
        offset[k + 1] = offset[k] + node_size[k];
    g_autofree int *fill = g_memdup2(offset, sizeof(int) * n_nodes);
    g_autofree int *node_ranks = g_new(int, n_topo);
    for (int r = 0; r < n_topo; r++)
        node_ranks[fill[node_of[r]]++] = r;

    g_autofree char *misfit = NULL;
    if (n_hosts > n_nodes)
        misfit = g_strdup_printf("%d hosts, %d nodes", n_hosts, n_nodes);
    for (int h = 0; h < n_hosts && misfit == NULL; h++) {
        int count = 0;
        gboolean by_device = TRUE;
        g_autofree gboolean *taken = g_new0(gboolean, node_size[h]);
        for (int r = 0; r < nranks; r++) {
            if (host[r] != h)
                continue;
            count++;
            if (device[r] < 0 || device[r] >= node_size[h] || taken[device[r]])
                by_device = FALSE;
            else
                taken[device[r]] = TRUE;
        }
        if (count > node_size[h]) {
            misfit = g_strdup_printf("host %d ran %d ranks, node %d has %d GPUs", h, count,
                                     g_array_index(node_ids, int, h), node_size[h]);
            break;
        }
        int next = 0;
        for (int r = 0; r < nranks; r++)
            if (host[r] == h)
                map[r] = node_ranks[offset[h] + (by_device ? device[r] : next++)];
    }
    if (misfit != NULL) {
        for (int r = 0; r < nranks; r++)
            map[r] = r;
        describe_map(topo, map, nranks, out);
        g_string_append_printf(out,
                               ": the topology's first ranks (the trace's %d host%s, from %s, "
                               "do not fit its nodes: %s)",
                               n_hosts, n_hosts == 1 ? "" : "s", basis, misfit);
        return g_string_free(out, FALSE);
    }
    describe_map(topo, map, nranks, out);
    g_string_append_printf(out, ": as the trace's %d host%s (%s)", n_hosts, n_hosts == 1 ? "" : "s",
                           basis);
    return g_string_free(out, FALSE);
}

/* Why a GPU model leaves NCCL's generation table (cs_nccl_arch_from_model()) out, for the
 * topology's GPUs when that changed who picks, and for the trace's. */
static void
unknown_gpu_warnings(const CsTopo *topo, const CsTrace *trace, CsOp op, int nranks,
                     const CsTraceSetup *setup, GPtrArray *warnings)
{
    const CsDevice *dev = cs_topo_device(topo, cs_topo_rank_device(topo, 0));
    gboolean known = FALSE;
    const char *version = NULL;
    const char *library = cs_trace_library(trace, &version);
    const gboolean nccl_trace = library == NULL || strcmp(library, "NCCL") == 0;
    (void)nranks;

    if (dev->kind == CS_DEVICE_GPU && cs_nccl_func_from_op(op) >= 0
        && cs_nccl_amd_arch_from_model(dev->model) == CS_NCCL_AMD_NONE) {
        cs_nccl_arch_from_model(dev->model, &known);
        if (!known && setup->options.pick == CS_PICK_AUTO && nccl_trace)
            g_ptr_array_add(warnings,
                            g_strdup_printf("GPU model \"%s\" of topology %s is not in NCCL's "
                                            "generation table: NCCL's tuning model cannot pick "
                                            "for it, so collsim's fastest choice picks instead",
                                            dev->model != NULL ? dev->model : "(none)",
                                            cs_topo_name(topo)));
        else if (!known && setup->options.nccl != NULL)
            g_ptr_array_add(
                warnings, g_strdup_printf(
                              "GPU model \"%s\" of topology %s is not in NCCL's "
                              "generation table: NCCL's tuning model assumes %s",
                              dev->model != NULL ? dev->model : "(none)", cs_topo_name(topo),
                              cs_nccl_arch_name(cs_nccl_model_system(setup->options.nccl)->arch)));
    }
    const char *ran_on = cs_trace_device_model(trace);
    if (ran_on != NULL && nccl_trace) {
        cs_nccl_arch_from_model(ran_on, &known);
        if (!known)
            g_ptr_array_add(warnings,
                            g_strdup_printf("GPU model \"%s\" the trace ran on is not in "
                                            "NCCL's generation table: whether topology %s "
                                            "models the same generation is not checked",
                                            ran_on, cs_topo_name(topo)));
    }
}

/**
 * cs_validate_trace:
 * Rows of size 0 (nccl-tests prints them for alltoall at tiny sizes) and rows whose time is
 * N/A are skipped: there is nothing to compare.
 */
CsValidateReport *
cs_validate_trace(const CsTopo *topo, const CsTrace *trace, const CsPredictOptions *options,
                  GError **error)
{
    return cs_validate_trace_full(topo, trace, options, NULL, CS_VALIDATE_PLACED, NULL, NULL,
                                  error);
}

/* A row there is something to compare on: a positive size and a measured time. */
static gboolean
row_usable(const CsTraceRow *row)
{
    return row->size_bytes > 0 && row->out_of_place.time_us > 0;
}

/**
 * cs_validate_trace_n_rows:
 * The rows cs_validate_trace_full() predicts: those with a positive size and a measured time.
 */
guint
cs_validate_trace_n_rows(const CsTrace *trace)
{
    guint n = 0;
    for (gsize i = 0; i < cs_trace_n_rows(trace); i++)
        n += row_usable(cs_trace_row(trace, i));
    return n;
}

/* NCCL's cost model for @spec ("nccl": the release nearest the trace's) on @topo's @nranks
 * ranks. (transfer full) (nullable) */
static CsNcclModel *
spec_model(const CsTopo *topo, const CsTrace *trace, int nranks, const char *spec, GError **error)
{
    const CsNcclConstants *constants = NULL;
    if (strcmp(spec, "nccl") == 0 || strcmp(spec, "rccl") == 0) {
        const char *version = NULL;
        cs_trace_library(trace, &version);
        constants = spec[0] == 'r' ? cs_rccl_constants_nearest(version)
                                   : cs_nccl_constants_nearest(version);
    }
    else if (!cs_nccl_parse_spec(spec, &constants, error))
        return NULL;
    CsNcclSystem system;
    if (!cs_nccl_system_from_topo(topo, nranks, constants, &system, error))
        return NULL;
    return cs_nccl_model_new(constants, &system);
}

/**
 * cs_validate_trace_full:
 * cs_validate_trace() on the GPUs the trace's ranks ran on (cs_validate_place_ranks()), or
 * on the topology's first ranks with CS_VALIDATE_FIRST_RANKS, and, with @nccl_spec, NCCL's
 * own cost model for every row beside collsim's.
 */
CsValidateReport *
cs_validate_trace_full(const CsTopo *topo, const CsTrace *trace, const CsPredictOptions *options,
                       const char *nccl_spec, CsValidateFlags flags, CsValidateRowDone done,
                       gpointer done_data, GError **error)
{
    const char *origin = cs_trace_origin(trace);
    CsOp op;
    if (!cs_trace_op(trace, &op)) {
        cs_trace_set_unknown_op_error(trace, error);
        return NULL;
    }
    int nranks = cs_trace_n_ranks(trace);
    if (nranks <= 0) {
        const char *ranks = cs_trace_get_header(trace, "ranks");
        if (ranks != NULL)
            g_set_error(error, CS_TRACE_ERROR, CS_TRACE_ERROR_MALFORMED,
                        "%s: '# ranks: %s' is not a rank count (1 or more)", origin, ranks);
        else
            g_set_error(error, CS_TRACE_ERROR, CS_TRACE_ERROR_MALFORMED,
                        "%s: cannot tell how many ranks it ran on (add a '# ranks: N' header)",
                        origin);
        return NULL;
    }
    if (nranks > cs_topo_n_ranks(topo)) {
        g_set_error(error, CS_TOPO_ERROR, CS_TOPO_ERROR_INVALID,
                    "%s: %d ranks, but topology %s has only %d GPUs", origin, nranks,
                    cs_topo_name(topo), cs_topo_n_ranks(topo));
        return NULL;
    }

    g_autoptr(CsValidateReport) report = g_new0(CsValidateReport, 1);
    report->origin = g_strdup(origin);
    report->op = op;
    report->nranks = nranks;
    report->rows = g_array_new(FALSE, TRUE, sizeof(CsValidateRow));
    report->warnings = g_ptr_array_new_with_free_func(g_free);
    report->unpredicted = g_ptr_array_new_with_free_func(g_free);

    /* The GPUs the ranks ran on: a topology of just those when they are not its first ones. */
    report->topo_ranks = g_new(int, nranks);
    if (flags & CS_VALIDATE_FIRST_RANKS) {
        for (int r = 0; r < nranks; r++)
            report->topo_ranks[r] = r;
        report->placement = g_strdup_printf("the topology's first %d ranks", nranks);
    }
    else
        report->placement = cs_validate_place_ranks(topo, trace, nranks, report->topo_ranks);
    gboolean moved = FALSE;
    for (int r = 0; r < nranks; r++)
        moved = moved || report->topo_ranks[r] != r;
    report->placement_said = moved || nranks < cs_topo_n_ranks(topo);
    /* Algorithms and NCCL's model also read the topology as a whole (its nodes, its NICs), so
     * a smaller run gets a topology of just its GPUs even where they are the first ones. */
    g_autoptr(CsTopo) placed = NULL;
    if (!(flags & CS_VALIDATE_FIRST_RANKS) && report->placement_said)
        placed = cs_topo_subset(topo, report->topo_ranks, nranks);
    if (placed != NULL)
        topo = placed;
    report->machine_class = cs_validated_class(topo, nranks);

    g_autoptr(CsNcclModel) nccl_model = NULL;
    if (nccl_spec != NULL && cs_nccl_func_from_op(op) >= 0) {
        g_autoptr(GError) local = NULL;
        nccl_model = spec_model(topo, trace, nranks, nccl_spec, &local);
        if (nccl_model == NULL) {
            g_propagate_prefixed_error(error, g_steal_pointer(&local), "%s: ", origin);
            return NULL;
        }
        report->nccl_model
            = g_strdup_printf("%s %s's cost model", cs_nccl_model_constants(nccl_model)->library,
                              cs_nccl_model_constants(nccl_model)->version);
        const CsNcclSystem *system = cs_nccl_model_system(nccl_model);
        if (system->arch_guessed)
            g_ptr_array_add(report->warnings,
                            g_strdup_printf("%s assumes %s GPUs: the topology's GPU model is not "
                                            "in NCCL's generation table",
                                            report->nccl_model, cs_nccl_arch_name(system->arch)));
    }
    else if (nccl_spec != NULL) {
        report->nccl_model = g_strdup("NCCL's cost model");
        report->nccl_note = g_strdup_printf("NCCL has no cost model for %s (it runs it as "
                                            "grouped sends and receives)",
                                            cs_op_name(op));
    }

    g_auto(CsTraceSetup) setup;
    if (!cs_trace_setup_init(&setup, topo, trace, op, nranks, options, error))
        return NULL;
    report->forced_algo = g_strdup(setup.algo_name);
    report->forced_proto = g_strdup(setup.proto_name);
    report->picker = g_strdup(setup.picker);
    report->inferred = cs_trace_inferred(trace);
    report->gpu_mismatch = gpu_mismatch(topo, trace);
    report->repeated_sizes = repeated_sizes(trace);
    report->nccl_picks = setup.options.nccl != NULL;
    unknown_gpu_warnings(topo, trace, op, nranks, &setup, report->warnings);
    if (report->warnings->len > 0 && !report->nccl_picks && setup.options.pick == CS_PICK_AUTO
        && setup.nccl == NULL) {
        g_autofree char *picker = setup.picker;
        setup.picker
            = g_strdup_printf("%s (the GPU model is not in NCCL's generation table)", picker);
        g_free(report->picker);
        report->picker = g_strdup(setup.picker);
    }
    guint algo_mask, proto_mask;
    cs_validate_trace_masks(trace, &algo_mask, &proto_mask);
    CsPredictOptions opts = setup.options;
    /* Large rows of one choice extend from the same three simulated sizes: simulate them
     * once per trace. A caller's cache is for the topology it gave, not for the placed one. */
    g_autoptr(CsPointCache) points = NULL;
    if (opts.cache == NULL || placed != NULL) {
        points = cs_point_cache_new(FALSE);
        cs_point_cache_bind(points, topo);
        opts.cache = points;
    }

    /* Each row's options first (a column collsim cannot read is an error), then the rows
     * predicted on options->jobs threads, each into its own slot, then kept in trace order. */
    const gsize n_rows = cs_trace_n_rows(trace);
    g_autoptr(GArray) rows = g_array_new(FALSE, TRUE, sizeof(RowJob));
    for (gsize i = 0; i < n_rows; i++) {
        const CsTraceRow *row = cs_trace_row(trace, i);
        if (!row_usable(row))
            continue;
        /* A column collsim cannot read would silently predict another point: refuse it. */
        g_autoptr(GError) local = NULL;
        CsDtype dtype;
        if (row->type[0] != '\0') {
            if (!cs_dtype_from_name(row->type, &dtype, &local)) {
                g_set_error(error, CS_TRACE_ERROR, CS_TRACE_ERROR_MALFORMED,
                            "%s:%d: type column: %s", origin, row->line, local->message);
                return NULL;
            }
            opts.dtype = dtype;
        }
        CsRedop redop;
        if (cs_op_reduces(op) && row->redop[0] != '\0') {
            if (!cs_redop_from_name(row->redop, &redop, &local)) {
                g_set_error(error, CS_TRACE_ERROR, CS_TRACE_ERROR_MALFORMED,
                            "%s:%d: redop column: %s", origin, row->line, local->message);
                return NULL;
            }
            opts.redop = redop;
        }
        if (cs_op_has_root(op) && row->root >= nranks) {
            g_set_error(error, CS_TRACE_ERROR, CS_TRACE_ERROR_MALFORMED,
                        "%s:%d: root column: %d is not one of the %d ranks", origin, row->line,
                        row->root, nranks);
            return NULL;
        }
        if (cs_op_has_root(op) && row->root >= 0)
            opts.root = row->root;
        RowJob job = { row, opts, { 0 }, NULL };
        g_array_append_val(rows, job);
    }
    RowsJob all = { topo, op, &setup, (RowJob *)rows->data, done, done_data };
    cs_parallel_for_ranks(rows->len, 1, options != NULL ? options->jobs : 1, row_job_item,
                          done != NULL ? row_job_done : NULL, row_job_pack, row_job_unpack, &all);
    for (guint i = 0; i < rows->len; i++) {
        RowJob *job = &g_array_index(rows, RowJob, i);
        /* A row collsim cannot predict (a schedule too large to hold, say) is said, and
         * the others still come out. */
        if (job->error != NULL) {
            g_ptr_array_add(
                report->unpredicted,
                g_strdup_printf("%s:%d: %s", origin, job->row->line, job->error->message));
            g_clear_error(&job->error);
            continue;
        }
        if (nccl_model != NULL)
            nccl_row(nccl_model, op, nranks, algo_mask, proto_mask, &job->v);
        g_array_append_val(report->rows, job->v);
    }
    if (report->rows->len == 0 && report->unpredicted->len > 0) {
        g_set_error(error, CS_TRACE_ERROR, CS_TRACE_ERROR_EMPTY, "%s",
                    (const char *)g_ptr_array_index(report->unpredicted, 0));
        return NULL;
    }
    if (report->rows->len == 0) {
        g_set_error(error, CS_TRACE_ERROR, CS_TRACE_ERROR_EMPTY,
                    "%s: no row with a positive size and a measured time", origin);
        return NULL;
    }

    for (int nccl = 0; nccl < 2; nccl++) {
        CsValidateSummary *s[4]
            = { &report->all, &report->latency, &report->knee, &report->bandwidth };
        if (nccl) {
            s[0] = &report->nccl_all;
            s[1] = &report->nccl_latency;
            s[2] = &report->nccl_knee;
            s[3] = &report->nccl_bandwidth;
        }
        summarize(report->rows, 0, G_MAXINT64, nccl, s[0]);
        summarize(report->rows, 0, CS_VALIDATE_LATENCY_MAX_BYTES, nccl, s[1]);
        summarize(report->rows, CS_VALIDATE_LATENCY_MAX_BYTES, CS_VALIDATE_BANDWIDTH_MIN_BYTES,
                  nccl, s[2]);
        summarize(report->rows, CS_VALIDATE_BANDWIDTH_MIN_BYTES, G_MAXINT64, nccl, s[3]);
    }
    return g_steal_pointer(&report);
}

/**
 * cs_validate_report_fastest_rows:
 * Rows NCCL's model was to pick but collsim's fastest choice served instead (NCCL allowed
 * nothing collsim simulates); 0 when collsim's fastest was the picker anyway.
 */
guint
cs_validate_report_fastest_rows(const CsValidateReport *report)
{
    guint n = 0;
    if (!report->nccl_picks || (report->forced_algo != NULL && report->forced_proto != NULL))
        return 0;
    for (guint i = 0; i < report->rows->len; i++)
        if (!g_array_index(report->rows, CsValidateRow, i).nccl_picked)
            n++;
    return n;
}

void
cs_validate_report_free(CsValidateReport *report)
{
    if (report == NULL)
        return;
    g_free(report->origin);
    g_free(report->forced_algo);
    g_free(report->forced_proto);
    g_free(report->picker);
    g_free(report->inferred);
    g_free(report->gpu_mismatch);
    g_free(report->repeated_sizes);
    g_free(report->placement);
    g_free(report->topo_ranks);
    if (report->warnings != NULL)
        g_ptr_array_unref(report->warnings);
    if (report->unpredicted != NULL)
        g_ptr_array_unref(report->unpredicted);
    g_free(report->nccl_model);
    g_free(report->nccl_note);
    if (report->rows != NULL)
        g_array_unref(report->rows);
    g_free(report);
}

/* ---- Crossovers between forced algorithms ---- */

/* The smallest common size from which @b is faster than @a at every larger common size. */
static gint64
overtake_size(const CsValidateReport *a, const CsValidateReport *b, gboolean predicted)
{
    gint64 from = -1;
    for (guint i = 0; i < a->rows->len; i++) {
        const CsValidateRow *ra = &g_array_index(a->rows, CsValidateRow, i);
        for (guint j = 0; j < b->rows->len; j++) {
            const CsValidateRow *rb = &g_array_index(b->rows, CsValidateRow, j);
            if (rb->size_bytes != ra->size_bytes)
                continue;
            const double ta = predicted ? ra->predicted_us : ra->measured_us;
            const double tb = predicted ? rb->predicted_us : rb->measured_us;
            if (tb < ta) {
                if (from < 0)
                    from = ra->size_bytes;
            }
            else
                from = -1;
        }
    }
    return from;
}

/**
 * cs_validate_crossovers:
 * Pairs reports of the same collective and ranks whose forced algorithms differ. The
 * crossover is where the second starts to win for good, measured and predicted.
 */
GArray *
cs_validate_crossovers(CsValidateReport *const *reports, int n_reports)
{
    GArray *out = g_array_new(FALSE, TRUE, sizeof(CsValidateCrossover));
    for (int i = 0; i < n_reports; i++) {
        for (int j = i + 1; j < n_reports; j++) {
            const CsValidateReport *a = reports[i];
            const CsValidateReport *b = reports[j];
            if (a->op != b->op || a->nranks != b->nranks
                || g_strcmp0(a->forced_algo, b->forced_algo) == 0)
                continue;
            CsValidateCrossover c = { a, b, overtake_size(a, b, FALSE), overtake_size(a, b, TRUE) };
            if (c.measured_bytes < 0 && c.predicted_bytes < 0) {
                c = (CsValidateCrossover){ b, a, overtake_size(b, a, FALSE),
                                           overtake_size(b, a, TRUE) };
            }
            g_array_append_val(out, c);
        }
    }
    return out;
}
