// SPDX-License-Identifier: MIT
/* All-pairs all-reduce: MSCCL's "allreduce_pairs", which RCCL runs instead of its rings on one
 * node of 8 fully xGMI-connected GPUs (MI300X, MI350X, MI355X) for mid and small sizes.
 *
 * Sources:
 *   ROCm/rccl 2.21.5 (0cbce2a7) tools/msccl-algorithms/allreduce-allpairs-8n-*.xml: per rank,
 *   a channel's data is cut into one block per rank; a thread block per (peer, channel) sends
 *   the peer's block to it ("s") and receives the peer's copy of this rank's block into
 *   scratch ("r"); the received copies are reduced into this rank's block ("re", split over
 *   the channel's thread blocks, which wait for all seven receives: "deps"); each thread block
 *   then sends the reduced block to its peer and receives the peer's reduced block. Two
 *   one-hop phases, where a ring takes 2 (P - 1) hops.
 *   src/misc/msccl/msccl_lifecycle.cc (mscclSchedulerSelectAlgo's internal scheduler: an
 *   algorithm file applies when minBytes <= bytes <= maxBytes, the element count is a
 *   multiple of its nchunksperloop, the rank count matches and the call is in- or out-of-place
 *   as the file says; MSCCL_ENABLE_SINGLE_PROCESS defaults to 1, so one process driving all
 *   GPUs runs it too), src/graph/rome_models.cc (rome_model_79, the 8-GPU 7-link mesh without
 *   NICs, sets mscclEnabled=1).
 *   RCCL 2.27.7 for ROCm 7.1.1 release notes: "a single node data corruption issue in MSCCL on
 *   the Instinct MI350X and MI355X for the LL protocol ... single node AllReduce with inputs
 *   smaller than 512 KiB": gfx950 runs these files too.
 *   M. Cowan et al., "MSCCLang: Microsoft Collective Communication Language", ASPLOS 2023.
 *
 * In the IR a channel is one program, so the seven peers of a phase are visited one after
 * another (cs_pipetree_direct_reduce_scatter(), _all_gather()): a send step ends when its last
 * byte has left, so the seven sends leave back to back, as seven thread blocks would start
 * them, and channel c starts at distance 1 + c mod 7, so that the channels of a rank load its
 * seven links together, as the thread blocks per peer do. The reduction is the receiving
 * steps' own (RECV_REDUCE into the output, the first reading this rank's input), on the
 * channel's one program where MSCCL splits it over eight thread blocks: its bytes are small
 * beside a link's time. The sends of the reduced block wait for all seven receives, as the
 * XML's "deps" make them. Sizes beyond one loop of the files (nchunksperloop x the protocol's
 * step, 256 MiB with Simple) are not run by RCCL this way; collsim pipelines them in chunks
 * of the protocol's step per block, chunk i's all-gather two time units after its
 * reduce-scatter, as NVLS's direct phases are (nvls.c). */
#include "algos/allpairs.h"

#include "algos/algo.h"
#include "algos/pipetree.h"
#include "base/units.h"

/* One MSCCL algorithm file of RCCL 2.21.5's allreduce_pairs set, out-of-place (nccl-tests'
 * first column): the sizes it takes, its protocol, channels and chunks per loop. */
typedef struct {
    gint64 min_bytes;
    gint64 max_bytes;
    CsProto proto;
    int n_channels;
    int chunks_per_loop;
} MscclFile;

/* allreduce-allpairs-8n-ll-32tb-op.xml, -ll-64tb-op.xml, -simple-op.xml (ROCm/rccl 2.21.5). */
static const MscclFile allpairs_files[] = {
    { 0, 65536, CS_PROTO_LL, 4, 256 },
    { 65537, 524287, CS_PROTO_LL, 8, 512 },
    { 524288, 16777216, CS_PROTO_SIMPLE, 8, 512 },
};

#define ALLPAIRS_RANKS 8

/**
 * cs_allpairs_msccl_plan:
 * Whether RCCL's MSCCL scheduler takes an allreduce_pairs file for an out-of-place all-reduce
 * of @size_bytes (@count elements) on @nranks ranks, and which: its protocol and channels.
 */
gboolean
cs_allpairs_msccl_plan(gint64 size_bytes, gint64 count, int nranks, CsProto *proto, int *n_channels)
{
    if (nranks != ALLPAIRS_RANKS || count <= 0)
        return FALSE;
    for (gsize i = 0; i < G_N_ELEMENTS(allpairs_files); i++) {
        const MscclFile *f = &allpairs_files[i];
        if (size_bytes >= f->min_bytes && size_bytes <= f->max_bytes
            && count % f->chunks_per_loop == 0) {
            if (proto != NULL)
                *proto = f->proto;
            if (n_channels != NULL)
                *n_channels = f->n_channels;
            return TRUE;
        }
    }
    return FALSE;
}

/**
 * cs_allpairs_msccl_text:
 * The files' rule in words for elements of @type_size bytes, from the table: "from 1 KiB to 16
 * MiB (element counts a multiple of 256, of 512 above 64 KiB; not avg)". (transfer full)
 */
char *
cs_allpairs_msccl_text(int type_size)
{
    const MscclFile *first = &allpairs_files[0];
    const MscclFile *last = &allpairs_files[G_N_ELEMENTS(allpairs_files) - 1];
    g_autofree char *from = cs_units_format_size((gint64)first->chunks_per_loop * type_size);
    g_autofree char *to = cs_units_format_size(last->max_bytes);
    g_autofree char *above = cs_units_format_size(first->max_bytes);
    return g_strdup_printf("from %s to %s (element counts a multiple of %d, of %d above %s; not "
                           "avg)",
                           from, to, first->chunks_per_loop, allpairs_files[1].chunks_per_loop,
                           above);
}

/**
 * cs_allpairs_channels:
 * The channels the allreduce_pairs file of @proto at @size_bytes runs: 4 for LL up to 64 KiB,
 * 8 otherwise (the files' nchannels).
 */
int
cs_allpairs_channels(CsProto proto, gint64 size_bytes)
{
    return proto == CS_PROTO_LL && size_bytes <= allpairs_files[0].max_bytes
               ? allpairs_files[0].n_channels
               : allpairs_files[1].n_channels;
}

static gboolean
allpairs_supports(const CsTopo *topo, CsOp op, int nranks, const char **why)
{
    (void)topo;
    if (op != CS_OP_ALL_REDUCE) {
        *why = "all-pairs is an all-reduce";
        return FALSE;
    }
    if (nranks < 2) {
        *why = "needs at least 2 ranks";
        return FALSE;
    }
    return TRUE;
}

static CsSchedule *
allpairs_build(const CsAlgoArgs *args, GError **error)
{
    (void)error;
    const int p = args->nranks;
    const int es = cs_dtype_size(args->dtype);
    const CsOpSize size = cs_op_size(args->op, args->size_bytes, args->dtype, p);
    const gint64 chunk_el = cs_algo_chunk_bytes(args) / es;
    g_autoptr(CsStepSink) sink = cs_step_sink_new(p);
    g_autofree int *m = g_new(int, p);
    g_autofree CsBlockMove *blocks = g_new(CsBlockMove, p);
    g_autofree gint64 *block_first = g_new(gint64, p);
    g_autofree gint64 *block_len = g_new(gint64, p);
    CsSchedule *sched = cs_algo_schedule_new(args);

    for (int x = 0; x < p; x++)
        m[x] = x;
    for (int c = 0; c < args->n_channels; c++) {
        const gint64 max_len = cs_pipetree_channel_shards(size.recv_bytes / es, args->n_channels, c,
                                                          p, block_first, block_len);
        for (gint64 i = 0; i * chunk_el < max_len; i++) {
            for (int x = 0; x < p; x++)
                blocks[x] = cs_pipetree_shard_chunk(block_first, block_len, x, i, chunk_el, es);
            cs_pipetree_direct_reduce_scatter(sink, c, m, p, blocks, i, (int)i, FALSE, c);
            for (int x = 0; x < p; x++)
                blocks[x].src_buf = CS_BUF_OUTPUT;
            cs_pipetree_direct_all_gather(sink, c, m, p, blocks, i + 2, (int)i, FALSE, c);
        }
    }
    cs_step_sink_flush(sink, sched);
    return sched;
}

/* Every rank sends P - 1 blocks twice (its share of the others' and its reduced block), and a
 * block's sum reaches a peer two messages after it left: a send, then the reduced send. */
static gboolean
allpairs_bound(const CsAlgoArgs *args, CsAlgoBound *out)
{
    const int p = args->nranks;
    const gint64 bytes = cs_op_size(args->op, args->size_bytes, args->dtype, p).recv_bytes;
    if (p < 2 || bytes <= 0)
        return FALSE;
    /* Each rank keeps 1/P of the data and sends the rest out twice; the per-block split only
     * moves whole elements between blocks, so the total is exact. */
    out->chain = 2;
    out->bytes_sent = 2 * (gint64)(p - 1) * bytes;
    return TRUE;
}

const CsAlgo cs_algo_allpairs = {
    .name = "allpairs",
    .summary = "all-pairs all-reduce (MSCCL allreduce_pairs, RCCL on one 8-GPU xGMI node): "
               "each rank reduces its block from every peer, then sends the sum to every peer",
    .reference = "ROCm/rccl 2.21.5 tools/msccl-algorithms/allreduce-allpairs-8n-*.xml, "
                 "src/misc/msccl/msccl_lifecycle.cc; Cowan et al., MSCCLang, ASPLOS 2023",
    .ops = CS_OP_BIT(CS_OP_ALL_REDUCE),
    .supports = allpairs_supports,
    .build = allpairs_build,
    .bound = allpairs_bound,
};
