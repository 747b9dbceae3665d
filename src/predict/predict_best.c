// SPDX-License-Identifier: MIT
/* The best point per size (cs_predict_best()): every candidate algorithm and protocol, run in
 * order of its lower bound and left out when the fastest so far beats it, or NCCL's own pick
 * under its tuning model (CsPick). */
#include "predict/predict-private.h"

#include "base/parallel.h"

#include "algos/allpairs.h"
#include "algos/registry.h"

static const char *const pick_names[] = {
    [CS_PICK_FASTEST] = "fastest",
    [CS_PICK_NCCL] = "nccl",
    [CS_PICK_AUTO] = "auto",
};

/**
 * cs_pick_from_name:
 * Parses "fastest", "nccl" or "auto" (any case).
 * Returns: FALSE with CS_ENGINE_ERROR_MISMATCH naming the choices otherwise.
 */
gboolean
cs_pick_from_name(const char *name, CsPick *pick, GError **error)
{
    g_return_val_if_fail(name != NULL && pick != NULL, FALSE);
    for (gsize i = 0; i < G_N_ELEMENTS(pick_names); i++)
        if (g_ascii_strcasecmp(name, pick_names[i]) == 0) {
            *pick = (CsPick)i;
            return TRUE;
        }
    g_set_error(error, CS_ENGINE_ERROR, CS_ENGINE_ERROR_MISMATCH,
                "\"%s\" is not a pick (auto, nccl or fastest)", name);
    return FALSE;
}

/**
 * cs_predict_rccl_msccl_node:
 * Whether RCCL under @model runs MSCCL's all-pairs files for the all-reduces they cover on
 * @nranks ranks of @topo with @redop: one node of 8 fully xGMI-connected AMD GPUs
 * (rome_model_79's mscclEnabled, cs_predict_rccl_mesh8()), any operator but avg
 * (msccl_lifecycle.cc: no MSCCL for op >= ncclAvg). Which sizes: cs_allpairs_msccl_plan().
 */
gboolean
cs_predict_rccl_msccl_node(const CsTopo *topo, int nranks, const CsNcclModel *model, CsRedop redop)
{
    return redop != CS_REDOP_AVG && model != NULL
           && g_strcmp0(cs_nccl_model_constants(model)->library, "RCCL") == 0
           && cs_predict_rccl_mesh8(topo, nranks);
}

/* RCCL's MSCCL scheduler, which RCCL asks before its own tuning model (ROCm/rccl 2.21.5
 * src/collectives.cc: mscclEnqueueCheck() ahead of ncclEnqueueCheck()): where
 * cs_predict_rccl_msccl_node(), an all-reduce whose size (count x type size) and element count
 * an allreduce_pairs file takes runs that file (allpairs.c). RCCL reads neither NCCL_ALGO nor
 * NCCL_PROTO there; collsim treats a forced algorithm or protocol (--algo, --proto, a trace's
 * NCCL_ALGO/NCCL_PROTO) as forcing the choice, so a forced one other than the file's keeps
 * MSCCL out. 1 with @out set, 0 where it does not apply (or collsim refuses it), -1 with
 * @error. */
static int
predict_rccl_msccl(const CsTopo *topo, CsOp op, gint64 size_bytes, const CsAlgo *algo_filter,
                   int proto_filter, const CsPredictOptions *options, CsPrediction *out,
                   GError **error)
{
    const int nranks = options->nranks > 0 ? options->nranks : cs_topo_n_ranks(topo);
    const int es = cs_dtype_size(options->dtype);
    const gint64 count = size_bytes / es;
    CsProto proto;
    if (op != CS_OP_ALL_REDUCE
        || !cs_predict_rccl_msccl_node(topo, nranks, options->nccl, options->redop)
        || !cs_allpairs_msccl_plan(count * es, count, nranks, &proto, NULL)
        || (proto_filter >= 0 && proto_filter != (int)proto))
        return 0;
    const CsAlgo *allpairs = cs_algo_lookup("allpairs", NULL);
    if (allpairs == NULL || (algo_filter != NULL && algo_filter != allpairs))
        return 0;
    g_autoptr(GError) local = NULL;
    if (cs_predict_one(topo, op, size_bytes, allpairs, proto, options, out, &local)) {
        out->nccl_picked = TRUE;
        return 1;
    }
    if (local != NULL && !is_refusal(local)) {
        g_propagate_error(error, g_steal_pointer(&local));
        return -1;
    }
    return 0;
}

/* NCCL's pick under options->nccl, simulated: 1 with @out set, 0 when NCCL has no model for
 * @op or allows nothing collsim simulates (the caller then takes the fastest), -1 with
 * @error. NCCL picks among what NCCL_ALGO (options->nccl_algo_mask, @algo_filter) and
 * NCCL_PROTO (@proto_filter) leave; where collsim does not simulate its pick or refuses it,
 * NCCL's next choice is taken. */
static int
predict_nccl_pick(const CsTopo *topo, CsOp op, gint64 size_bytes, const CsAlgo *algo_filter,
                  int proto_filter, const CsPredictOptions *options, CsPrediction *out,
                  GError **error)
{
    int msccl
        = predict_rccl_msccl(topo, op, size_bytes, algo_filter, proto_filter, options, out, error);
    if (msccl != 0)
        return msccl;
    guint algos = options->nccl_algo_mask != 0 ? options->nccl_algo_mask : CS_NCCL_ALL_ALGOS;
    if (algo_filter != NULL) {
        CsNcclAlgo a;
        if (!cs_nccl_algo_from_collsim(algo_filter->name, &a))
            return 0;
        algos &= 1u << a;
    }
    guint protos = CS_NCCL_ALL_PROTOS & cs_predict_unforced_protos(topo, options);
    if (proto_filter >= 0)
        protos &= 1u << proto_filter;
    CsNcclPrediction pick;
    while (algos != 0
           && cs_nccl_model_pick_among(options->nccl, op, size_bytes, algos, protos, &pick)) {
        const char *name = cs_nccl_algo_collsim_name(pick.algo);
        const CsAlgo *algo = name != NULL ? cs_algo_lookup(name, NULL) : NULL;
        g_autoptr(GError) local = NULL;
        if (algo != NULL
            && cs_predict_one(topo, op, size_bytes, algo, pick.proto, options, out, &local)) {
            out->nccl_picked = TRUE;
            return 1;
        }
        if (local != NULL && !is_refusal(local)) {
            g_propagate_error(error, g_steal_pointer(&local));
            return -1;
        }
        algos &= ~(1u << pick.algo);
    }
    return 0;
}

/* The bound cs_predict_best() prunes with. cs_predict_lower_bound() holds for a size
 * simulated whole; one extended from smaller sizes may come out a little below it (0.1% for
 * a 2-rank reduce-scatter at TiB sizes on 64 channels), as much as the line it was extended
 * on allows: the bound is lowered by that tolerance unless every size is simulated. */
static CsTime
pruning_bound(const CsTopo *topo, CsOp op, gint64 size_bytes, const CsAlgo *algo, CsProto proto,
              const CsPredictOptions *options)
{
    const CsTime bound = cs_predict_lower_bound(topo, op, size_bytes, algo, proto, options);
    if (options != NULL && options->exact)
        return bound;
    return (CsTime)((double)bound * (1.0 - PREDICT_LOOSE_TOLERANCE));
}

/* One candidate of cs_predict_best(): its place in listing order, and the time it cannot
 * beat. */
typedef struct {
    const CsAlgo *algo;
    CsProto proto;
    int index;
    CsTime bound;
} Candidate;

static gint
candidate_cmp(gconstpointer pa, gconstpointer pb)
{
    const Candidate *a = pa;
    const Candidate *b = pb;
    if (a->bound != b->bound)
        return a->bound < b->bound ? -1 : 1;
    return a->index - b->index;
}

/* ---- Candidates over threads ---- */

/* A candidate simulated ahead of its turn: its prediction, or its error. */
typedef struct {
    gboolean done;
    CsPrediction pred;
    GError *error;
} Speculated;

typedef struct {
    const CsTopo *topo;
    CsOp op;
    gint64 size_bytes;
    const CsPredictOptions *options;
    const Candidate *const *wave;
    Speculated *const *slots;
} Wave;

static void
wave_item(guint k, gpointer data)
{
    const Wave *w = data;
    Speculated *s = w->slots[k];
    if (!cs_predict_one(w->topo, w->op, w->size_bytes, w->wave[k]->algo, w->wave[k]->proto,
                        w->options, &s->pred, &s->error)
        && s->error == NULL)
        g_set_error(&s->error, CS_ENGINE_ERROR, CS_ENGINE_ERROR_MISMATCH, "no prediction");
    s->done = TRUE;
}

/* Simulates candidate @from and the next ones its turn could reach, @threads at once: those
 * that the best so far (@found: time @best_time, listing position @best_index) does not rule
 * out. The loop then takes them in its own order with the same pruning: it visits no
 * candidate this skipped (the best only improves as it goes), and one simulated here that it
 * skips is only CPU spent, so the answer is the one-thread answer. */
static void
speculate(const CsTopo *topo, CsOp op, gint64 size_bytes, const CsPredictOptions *options,
          const GArray *cands, guint from, gboolean found, CsTime best_time, int best_index,
          int threads, Speculated *ahead)
{
    g_autofree const Candidate **wave = g_new(const Candidate *, threads);
    g_autofree Speculated **slots = g_new(Speculated *, threads);
    int n = 0;
    for (guint i = from; i < cands->len && n < threads; i++) {
        const Candidate *c = &g_array_index(cands, Candidate, i);
        if (ahead[i].done
            || (found
                && (c->bound > best_time || (c->bound == best_time && c->index > best_index))))
            continue;
        wave[n] = c;
        slots[n++] = &ahead[i];
    }
    CsPredictOptions one = *options;
    one.candidate_jobs = 1;
    const Wave w = { topo, op, size_bytes, &one, wave, slots };
    cs_parallel_for((guint)n, threads, wave_item, NULL, (gpointer)&w);
}

/**
 * cs_predict_best:
 * Predicts every candidate algorithm that implements @op and supports this case, with every
 * protocol (or only @proto_filter, a CsProto or -1) that can cross the routes it uses, and
 * keeps the fastest; ties go to the earlier algorithm and protocol in listing order. The
 * candidates are @algo_filter when given; otherwise what an nccl-tests run can execute
 * (NCCL 2.2x's algorithms per collective, see algo_in_nccl_tests(); grouped send/recv for
 * scatter, gather and all-to-all), or every
 * registered algorithm with options->any_algorithm: collsim predicts like nccl-tests unless
 * asked to weigh algorithms NCCL does not have. With options->pick (not CS_PICK_FASTEST) and a
 * model in options->nccl, NCCL's own choice is simulated instead (@out->nccl_picked), as NCCL
 * makes it when nothing is forced; where NCCL allows nothing collsim simulates, or has no model
 * for @op, the fastest is kept. Candidates run in order of their lower bound
 * (cs_predict_lower_bound()); one whose bound the fastest so far beats is not simulated, which
 * changes no answer (options->exhaustive simulates it anyway).
 * Returns: TRUE with @out set, or FALSE with @error: the first refusal's reason when nothing
 * applies, or the first error that is not a refusal.
 */
gboolean
cs_predict_best(const CsTopo *topo, CsOp op, gint64 size_bytes, const CsAlgo *algo_filter,
                int proto_filter, const CsPredictOptions *options, CsPrediction *out,
                GError **error)
{
    g_autoptr(GError) first_refusal = NULL;
    gboolean found = FALSE;
    int nranks;

    g_return_val_if_fail(topo != NULL && out != NULL, FALSE);
    if (options != NULL && options->pick != CS_PICK_FASTEST && options->nccl != NULL
        && !options->any_algorithm) {
        int found_pick = predict_nccl_pick(topo, op, size_bytes, algo_filter, proto_filter, options,
                                           out, error);
        if (found_pick != 0)
            return found_pick > 0;
    }
    nranks = options != NULL && options->nranks > 0 ? options->nranks : cs_topo_n_ranks(topo);
    /* On CPU ranks every protocol is a candidate, and every algorithm but RCCL's all-pairs
     * (cs_predict_default_candidate). */
    gboolean any
        = (options != NULL && options->any_algorithm) || cs_predict_cpu_ranks(topo, nranks);
    const guint allowed_protos = cs_predict_unforced_protos(topo, options);
    if (proto_filter < 0 && allowed_protos == 0) {
        g_autofree char *why = cs_predict_no_shared_protocol(topo, nranks);
        g_set_error(error, CS_ENGINE_ERROR, CS_ENGINE_ERROR_MISMATCH,
                    "%s; force one (--proto) or run fewer ranks (--ranks)", why);
        return FALSE;
    }
    g_autoptr(GArray) cands = g_array_new(FALSE, FALSE, sizeof(Candidate));
    int refusal_at = G_MAXINT; /* listing position of first_refusal: 2 x candidate index */
    int n_unsimulated = 0;
    Candidate unsimulated = { 0 };
    g_autoptr(GError) too_large = NULL;
    gboolean op_has_algo = FALSE;
    for (const CsAlgo *const *a = cs_algo_registry(); *a != NULL; a++) {
        const CsAlgo *algo = *a;
        const char *why = NULL;
        if (algo_filter != NULL && algo != algo_filter)
            continue;
        if ((algo->ops & CS_OP_BIT(op)) == 0)
            continue;
        if (algo_filter == NULL
            && !cs_predict_default_candidate(algo, op, topo, nranks,
                                             options != NULL && options->any_algorithm))
            continue;
        op_has_algo = TRUE;
        if (algo->supports != NULL
            && !algo->supports(nranks == cs_topo_n_ranks(topo) ? topo : NULL, op, nranks, &why)) {
            if (first_refusal == NULL) {
                g_set_error(&first_refusal, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_UNSUPPORTED,
                            "algorithm %s cannot run %s on %d ranks: %s", algo->name,
                            cs_op_name(op), nranks, why != NULL ? why : "not supported");
                refusal_at = 2 * (int)cands->len - 1;
            }
            continue;
        }
        for (int p = 0; p < CS_N_PROTOS; p++) {
            if (proto_filter >= 0 && p != proto_filter)
                continue;
            if (proto_filter < 0 && (allowed_protos & (1u << p)) == 0)
                continue;
            if (proto_filter < 0 && !any
                && !cs_predict_proto_in_nccl_tests(topo, algo, op, (CsProto)p, size_bytes, nranks,
                                                   options != NULL ? options->nccl_release : 0))
                continue;
            const gboolean bounded = options == NULL || !options->exhaustive;
            Candidate c = {
                algo,
                (CsProto)p,
                (int)cands->len,
                bounded ? pruning_bound(topo, op, size_bytes, algo, (CsProto)p, options) : 0,
            };
            g_array_append_val(cands, c);
        }
    }
    /* Branch and bound: the candidates the least bounded first, so that one whose bound the
     * best so far already beats is never simulated (a 1024-rank ring replays tens of millions
     * of steps to lose to a tree at every size below gigabytes). Ties still go to listing
     * order. */
    g_array_sort(cands, candidate_cmp);
    int best_index = -1;
    const int threads = options != NULL ? options->candidate_jobs : 1;
    g_autofree Speculated *ahead = threads > 1 ? g_new0(Speculated, cands->len) : NULL;
    for (guint i = 0; i < cands->len; i++) {
        const Candidate *c = &g_array_index(cands, Candidate, i);
        if (found
            && (c->bound > out->result.time
                || (c->bound == out->result.time && c->index > best_index)))
            continue;
        if (ahead != NULL && !ahead[i].done)
            speculate(topo, op, size_bytes, options, cands, i, found, out->result.time, best_index,
                      threads, ahead);
        CsPrediction pred;
        g_autoptr(GError) local = NULL;
        if (ahead != NULL) {
            pred = ahead[i].pred;
            local = g_steal_pointer(&ahead[i].error);
        }
        if (ahead != NULL ? local != NULL
                          : !cs_predict_one(topo, op, size_bytes, c->algo, c->proto, options, &pred,
                                            &local)) {
            /* A candidate too large to simulate is left out, and said so (the caller notes
             * it next to the pick); with nothing else to pick it is the error. */
            if (g_error_matches(local, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_TOO_LARGE)) {
                if (n_unsimulated++ == 0) {
                    unsimulated = *c;
                    too_large = g_steal_pointer(&local);
                }
                continue;
            }
            if (!is_refusal(local)) {
                g_propagate_error(error, g_steal_pointer(&local));
                for (guint k = 0; ahead != NULL && k < cands->len; k++)
                    g_clear_error(&ahead[k].error);
                return FALSE;
            }
            /* The refusal said is the first in listing order, whatever order ran. */
            if (first_refusal == NULL || 2 * c->index < refusal_at) {
                g_clear_error(&first_refusal);
                first_refusal = g_steal_pointer(&local);
                refusal_at = 2 * c->index;
            }
            continue;
        }
        if (!found || pred.result.time < out->result.time
            || (pred.result.time == out->result.time && c->index < best_index)) {
            *out = pred;
            best_index = c->index;
            found = TRUE;
        }
    }
    for (guint i = 0; ahead != NULL && i < cands->len; i++)
        g_clear_error(&ahead[i].error);
    if (found) {
        out->n_unsimulated = n_unsimulated;
        out->unsimulated_algo = n_unsimulated > 0 ? unsimulated.algo : NULL;
        out->unsimulated_proto = unsimulated.proto;
        return TRUE;
    }
    if (too_large != NULL) {
        g_propagate_error(error, g_steal_pointer(&too_large));
        return FALSE;
    }
    if (first_refusal != NULL) {
        g_propagate_error(error, g_steal_pointer(&first_refusal));
    }
    else if (op_has_algo && cands->len == 0 && proto_filter < 0) {
        /* The algorithms are there; the protocols allowed (by the topology or the trace) are not
         * theirs. */
        g_autoptr(GString) names = g_string_new(NULL);
        for (int p = 0; p < CS_N_PROTOS; p++)
            if (allowed_protos & (1u << p))
                g_string_append_printf(names, "%s%s", names->len > 0 ? ", " : "",
                                       cs_proto_info((CsProto)p)->name);
        g_autofree char *whose
            = options != NULL && options->nccl_proto_mask != 0
                  ? g_strdup("the trace's NCCL_PROTO allows")
                  : g_strdup_printf("%s's default_protocols allow", cs_topo_name(topo));
        g_set_error(error, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_UNSUPPORTED,
                    "no %s algorithm runs on the protocols %s (%s); force one (--proto)",
                    cs_op_name(op), whose, names->str);
    }
    else {
        g_set_error(error, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_UNSUPPORTED,
                    "no algorithm implements %s", cs_op_name(op));
    }
    return FALSE;
}
