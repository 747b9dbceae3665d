// SPDX-License-Identifier: MIT
/* NVLSTree: all-reduce over several NVLink domains (nodes) as NVLS inside each domain and
 * NCCL's double binary tree across domains, the algorithm NCCL picks for large all-reduces on
 * 2-node H100 (traces/h100-sxm-8gpu-x2-ib-ndr8x400g_allreduce_nccl2.26.2.txt header).
 *
 * Sources:
 *   NCCL 2.28: src/device/all_reduce.h (RunWorkColl<AllReduce, NVLS_TREE>: scatter into the
 *   NVLS buffer, ld_reduce per head, tree up / down between the heads of every node, multicast
 *   store), src/graph/connect.cc (connectNvls: one tree per NVLS head across nodes),
 *   src/graph/trees.cc (ncclGetDtree), src/enqueue.cc (NVLS_TREE chunk size).
 *   P. Sanders, J. Speck, J. L. Träff, "Two-tree algorithms for full bandwidth broadcast,
 *   reduction and scan", Parallel Computing 35(12), 2009.
 *
 * Structure, for N domains of L ranks: the buffer is cut into L shards; local rank j is the
 * NVLS head of shard j. Per chunk: (1) NVLS reduce-scatter inside each domain (rank j gets the
 * domain's sum of shard j; modelled as in nvls.c: one RECV_REDUCE from each peer); (2) an
 * all-reduce of shard j over the heads j of all domains, pipelined up and down NCCL's double
 * binary tree (tree c % 2 on channel c); (3) NVLS all-gather (multicast) inside each domain.
 * The inter-domain traffic of every rank is one tree's, on its own rail. The NVLS phases
 * carry nvls.c's step flags (one in-switch reduction into each head, one multicast from
 * it), so each GPU's NVLink port carries (L+1)/L x S each way, as NVLS does (see nvls.c).
 * Chunk i's three phases are spread over logical time (reduce-scatter at i, tree from i + 2,
 * multicast after the tree's round trip), so successive chunks overlap, as NCCL's warp groups
 * do. Simple protocol only, as in NCCL. On one NVLink domain it builds nvls.c's schedule
 * (there is no tree; NCCL runs NVLSTree only across nodes). */
#include "algos/algo.h"
#include "algos/pipetree.h"

extern const CsAlgo cs_algo_nvls;

/* ---- Algorithm ---- */

static gboolean
nvls_tree_supports(const CsTopo *topo, CsOp op, int nranks, const char **why)
{
    g_autoptr(CsNodeGroups) domains = NULL;

    if (op != CS_OP_ALL_REDUCE) {
        *why = "NVLSTree serves all-reduce only";
        return FALSE;
    }
    if (topo == NULL || !cs_topo_has_nvls(topo)) {
        *why = "needs an NVSwitch with multicast_reduction (NVLink SHARP) in the topology";
        return FALSE;
    }
    domains = cs_node_groups_new_nvlink(topo, nranks, NULL);
    if (domains == NULL) {
        *why = "more ranks than GPUs in the topology";
        return FALSE;
    }
    if (!cs_node_groups_uniform(domains)) {
        *why = "NVLink domains hold different numbers of ranks";
        return FALSE;
    }
    return TRUE;
}

/* The NVLink domains of @args' ranks, NULL without a topology. */
static CsNodeGroups *
domains_of(const CsAlgoArgs *args)
{
    return args->topo != NULL ? cs_node_groups_new_nvlink(args->topo, args->nranks, NULL) : NULL;
}

/* NCCL's NVLS_TREE chunk for @args: l heads per domain, n domains; one domain is NVLS. */
static gint64
nvls_tree_chunk(const CsAlgoArgs *args)
{
    g_autoptr(CsNodeGroups) domains = domains_of(args);

    if (domains == NULL || domains->n_groups == 1)
        return cs_algo_nvls.chunk(args);
    CsOpSize size = cs_op_size(args->op, args->size_bytes, args->dtype, args->nranks);
    return cs_pipetree_nvls_chunk(args->chunk_bytes, cs_dtype_size(args->dtype), args->n_channels,
                                  cs_node_groups_size(domains, 0), domains->n_groups,
                                  size.size_bytes, TRUE);
}

/* Each channel's data is cut into one shard per head of a domain. */
static int
nvls_tree_parts(const CsAlgoArgs *args)
{
    g_autoptr(CsNodeGroups) domains = domains_of(args);

    return domains != NULL ? cs_node_groups_size(domains, 0) : args->nranks;
}

static CsSchedule *
nvls_tree_build(const CsAlgoArgs *args, GError **error)
{
    int p = args->nranks;
    int es = cs_dtype_size(args->dtype);
    int n_channels = args->n_channels;
    CsOpSize size = cs_op_size(args->op, args->size_bytes, args->dtype, p);
    g_autoptr(CsNodeGroups) domains = NULL;
    g_autoptr(CsStepSink) sink = NULL;
    g_autofree int *m = NULL;
    g_autofree CsBlockMove *blocks = NULL;
    g_autofree gint64 *shard_first = NULL;
    g_autofree gint64 *shard_len = NULL;
    CsPipeTree **trees;
    CsSchedule *sched;
    gint64 chunk_el;
    int n, l;

    if (args->proto != CS_PROTO_SIMPLE) {
        g_set_error(error, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_UNSUPPORTED,
                    "NVLSTree runs only with the Simple protocol (NCCL 2.28 tuning.cc), not %s",
                    cs_proto_name(args->proto));
        return NULL;
    }
    if (args->topo == NULL) {
        g_set_error(error, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_UNSUPPORTED,
                    "NVLSTree needs a topology with NVLink SHARP");
        return NULL;
    }
    domains = cs_node_groups_new_nvlink(args->topo, p, error);
    if (domains == NULL)
        return NULL;
    if (!cs_node_groups_uniform(domains)) {
        g_set_error(error, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_UNSUPPORTED,
                    "NVLSTree: NVLink domains hold different numbers of ranks");
        return NULL;
    }
    /* One domain has no tree between domains (NCCL enables NVLSTree only across nodes): it is
     * NVLS itself, chunk rule included. */
    if (domains->n_groups == 1)
        return cs_algo_nvls.build(args, error);
    n = domains->n_groups;
    l = cs_node_groups_size(domains, 0);
    chunk_el = nvls_tree_chunk(args) / es;
    sink = cs_step_sink_new(p);
    m = g_new(int, MAX(n, l));
    blocks = g_new(CsBlockMove, l);
    shard_first = g_new(gint64, l);
    shard_len = g_new(gint64, l);
    trees = g_new0(CsPipeTree *, l);
    sched = cs_algo_schedule_new(args);

    for (int c = 0; c < n_channels; c++) {
        int which = n_channels == 1 ? 0 : c % 2;
        int height = 0;

        /* Shard j's tree joins the heads j of every domain: an inter-domain tree per rail. */
        for (int j = 0; j < l; j++) {
            for (int x = 0; x < n; x++)
                m[x] = cs_node_groups_rank(domains, x, j);
            cs_pipetree_free(trees[j]);
            trees[j] = cs_pipetree_new(p);
            cs_pipetree_dtree_over(trees[j], m, n, which);
            height = MAX(height, trees[j]->height);
        }
        const gint64 max_len = cs_pipetree_channel_shards(size.recv_bytes / es, n_channels, c, l,
                                                          shard_first, shard_len);
        for (gint64 i = 0; i * chunk_el < max_len; i++) {
            for (int j = 0; j < l; j++)
                blocks[j] = cs_pipetree_shard_chunk(shard_first, shard_len, j, i, chunk_el, es);
            for (int g = 0; g < n; g++) {
                for (int x = 0; x < l; x++)
                    m[x] = cs_node_groups_rank(domains, g, x);
                cs_pipetree_direct_reduce_scatter(sink, c, m, l, blocks, i, (int)i, TRUE, 0);
            }
            for (int j = 0; j < l; j++) {
                CsTreeRegion region = {
                    .channel = c,
                    .src_buf = CS_BUF_OUTPUT,
                    .acc_buf = CS_BUF_OUTPUT,
                    .dst_buf = CS_BUF_OUTPUT,
                    .offset = blocks[j].dst_off,
                    .bytes = blocks[j].bytes,
                    .chunk = (int)i,
                    .time = i + 2,
                };
                cs_pipetree_allreduce(sink, trees[j], &region);
            }
            for (int j = 0; j < l; j++)
                blocks[j].src_buf = CS_BUF_OUTPUT;
            for (int g = 0; g < n; g++) {
                for (int x = 0; x < l; x++)
                    m[x] = cs_node_groups_rank(domains, g, x);
                cs_pipetree_direct_all_gather(sink, c, m, l, blocks, i + 3 + 2 * height, (int)i,
                                              TRUE, 0);
            }
        }
    }
    for (int j = 0; j < l; j++)
        cs_pipetree_free(trees[j]);
    g_free(trees);
    cs_step_sink_flush(sink, sched);
    return sched;
}

const CsAlgo cs_algo_nvls_tree = {
    .name = "nvls_tree",
    .summary = "NVLS inside each NVLink domain + double binary tree across domains (Simple)",
    .reference = "NCCL 2.28 src/device/all_reduce.h (NVLS_TREE), src/graph/connect.cc "
                 "(connectNvls), src/graph/trees.cc; Sanders, Speck, Traff 2009",
    .ops = CS_OP_BIT(CS_OP_ALL_REDUCE),
    .supports = nvls_tree_supports,
    .build = nvls_tree_build,
    .chunk = nvls_tree_chunk,
    .parts = nvls_tree_parts,
};
