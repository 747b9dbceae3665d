// SPDX-License-Identifier: MIT
/* The candidate rule (predict.h): which algorithms and protocols an nccl-tests run could
 * execute on GPU ranks (every one on CPU ranks, which an MPI library runs), and the protocols
 * a run picks from when it forces none. */
#include "predict/predict-private.h"

#include "algos/pipetree.h"

/* Whether the first @nranks ranks of @topo span more than one node. */
gboolean
cs_predict_spans_nodes(const CsTopo *topo, int nranks)
{
    for (int r = 1; r < nranks && r < cs_topo_n_ranks(topo); r++) {
        if (cs_topo_rank_node(topo, r) != cs_topo_rank_node(topo, 0))
            return TRUE;
    }
    return FALSE;
}

/* Whether the first @nranks ranks of @topo span more than one NVLink domain. */
gboolean
cs_predict_spans_nvlink_domains(const CsTopo *topo, int nranks)
{
    g_autoptr(CsNodeGroups) domains = cs_node_groups_new_nvlink(topo, nranks, NULL);

    return domains != NULL && domains->n_groups > 1;
}

/* Whether an nccl-tests run of @op on @nranks ranks of @topo could execute @algo, as NCCL
 * 2.2x's algorithm tables allow (src/enqueue.cc, src/graph/tuning.cc):
 * - broadcast and reduce: Ring only (NCCL has no tree or NVLS broadcast/reduce);
 * - all-gather and reduce-scatter: Ring, NVLS and PAT (2.23+; its supports() asks for one
 *   rank per node, as tuning.cc ncclPatEnable does);
 * - all-reduce: Ring, Tree, NVLS, NVLSTree only across nodes (tuning.cc: "Disable NVLS
 *   Tree on a single node") and NVLink domains (on one domain it is NVLS), and CollNet Direct
 *   and Chain (their supports() ask for a SHARP switch and several nodes);
 * - scatter, gather, all-to-all, sendrecv: grouped send/recv ("direct", nccl-tests'
 *   scatter.cu, gather.cu, alltoall.cu, sendrecv.cu; NCCL has no tuning table for p2p).
 * The algorithms' own supports() still decide whether the topology allows them (NVLS needs
 * an NVLS switch and one NVLink domain). */
static gboolean
algo_in_nccl_tests(const CsAlgo *algo, CsOp op, const CsTopo *topo, int nranks)
{
    CsNcclAlgo na;

    if (is_p2p_op(op))
        return g_strcmp0(algo->name, "direct") == 0;
    if (!cs_nccl_algo_from_collsim(algo->name, &na))
        return FALSE;
    switch (op) {
    case CS_OP_BROADCAST:
    case CS_OP_REDUCE:
        return na == CS_NCCL_ALGO_RING;
    case CS_OP_ALL_GATHER:
    case CS_OP_REDUCE_SCATTER:
        return na == CS_NCCL_ALGO_RING || na == CS_NCCL_ALGO_NVLS || na == CS_NCCL_ALGO_PAT;
    case CS_OP_ALL_REDUCE:
        /* On one NVLink domain of several nodes (an NVL72 rack) NVLSTree is NVLS itself
         * (nvls_tree.c), already a candidate: weighing it twice only doubles the work. */
        if (na == CS_NCCL_ALGO_NVLS_TREE)
            return cs_predict_spans_nodes(topo, nranks)
                   && cs_predict_spans_nvlink_domains(topo, nranks);
        return na == CS_NCCL_ALGO_RING || na == CS_NCCL_ALGO_TREE || na == CS_NCCL_ALGO_NVLS
               || na == CS_NCCL_ALGO_COLLNET_DIRECT || na == CS_NCCL_ALGO_COLLNET_CHAIN;
    default:
        return FALSE;
    }
}

/* Whether a rank of the first @nranks of @topo is a CPU: no NCCL runs such a communicator. */
gboolean
cs_predict_cpu_ranks(const CsTopo *topo, int nranks)
{
    g_return_val_if_fail(topo != NULL, FALSE);
    const int n = nranks > 0 ? MIN(nranks, cs_topo_n_ranks(topo)) : cs_topo_n_ranks(topo);
    for (int r = 0; r < n; r++)
        if (cs_topo_device(topo, cs_topo_rank_device(topo, r))->kind == CS_DEVICE_CPU)
            return TRUE;
    return FALSE;
}

/* The one candidate rule of cs_predict_best() and cs_select_run() (predict.h): on GPU ranks
 * what an nccl-tests run can execute (algo_in_nccl_tests()); on CPU ranks, which an MPI
 * library runs (and collsim's mpi backend, which runs collsim's own schedules), every
 * algorithm but RCCL's MSCCL all-pairs, as Open MPI's and MPICH's collective tuning choose
 * among recursive doubling, Rabenseifner, Bruck, ring and trees; with @any_algorithm every
 * algorithm anywhere. */
gboolean
cs_predict_default_candidate(const CsAlgo *algo, CsOp op, const CsTopo *topo, int nranks,
                             gboolean any_algorithm)
{
    g_return_val_if_fail(algo != NULL && topo != NULL, FALSE);
    if (any_algorithm)
        return TRUE;
    /* MSCCL's all-pairs is RCCL's (its pick takes it: predict_best.c), no MPI library's. */
    if (cs_predict_cpu_ranks(topo, nranks))
        return g_strcmp0(algo->name, "allpairs") != 0;
    return algo_in_nccl_tests(algo, op, topo, nranks);
}

/* Whether an nccl-tests run could carry @op with @proto on @algo: NCCL's grouped send/recv
 * takes LL or Simple by message size (cs_predict_p2p_plan()); every other choice is the
 * engine's. */
gboolean
cs_predict_proto_in_nccl_tests(const CsTopo *topo, const CsAlgo *algo, CsOp op, CsProto proto,
                               gint64 size_bytes, int nranks, int release)
{
    P2pPlan plan;
    return !cs_predict_p2p_plan(topo, algo, op, proto, size_bytes, nranks, release, &plan)
           || proto == plan.proto;
}

/* The protocol half of the candidate rule (predict.h): on GPU ranks grouped send/recv carries
 * only the protocol NCCL's p2p plan takes at @size_bytes; any protocol on CPU ranks or with
 * @any_algorithm. */
gboolean
cs_predict_default_proto(const CsTopo *topo, const CsAlgo *algo, CsOp op, CsProto proto,
                         gint64 size_bytes, int nranks, gboolean any_algorithm)
{
    g_return_val_if_fail(topo != NULL && algo != NULL, FALSE);
    if (any_algorithm || cs_predict_cpu_ranks(topo, nranks))
        return TRUE;
    return cs_predict_proto_in_nccl_tests(topo, algo, op, proto, size_bytes, nranks, 0);
}

/* The protocols a run picks from when it forces none: NCCL_PROTO's list where the run set one
 * (a trace's headers), else the GPUs' library defaults (the topology's default_protocols: RCCL
 * leaves LL128 off unless its platform model turns it on). Bits over CsProto. */
guint
cs_predict_unforced_protos(const CsTopo *topo, const CsPredictOptions *options)
{
    if (options != NULL && options->nccl_proto_mask != 0)
        return options->nccl_proto_mask;
    int nranks = options != NULL && options->nranks > 0 ? options->nranks : cs_topo_n_ranks(topo);
    return cs_topo_default_protos(topo, nranks);
}

/* One sentence naming the first rank whose protocols leave none in common (predict.h). */
char *
cs_predict_no_shared_protocol(const CsTopo *topo, int nranks)
{
    if (cs_topo_default_protos(topo, nranks) != 0)
        return NULL;
    int r = 0;
    while (r + 1 < nranks && cs_topo_default_protos(topo, r + 1) != 0)
        r++;
    const CsDevice *dev = cs_topo_device(topo, cs_topo_rank_device(topo, r));
    /* Rank 0 alone: a CPU whose list holds no Simple. */
    return g_strdup_printf("the default_protocols of %s's ranks share no protocol: rank %d (%s "
                           "\"%s\") allows none of %s",
                           cs_topo_name(topo), r, cs_device_kind_name(dev->kind), dev->name,
                           r == 0 ? "its own (a CPU rank runs Simple only)"
                                  : "those of the ranks before it");
}
