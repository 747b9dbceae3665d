// SPDX-License-Identifier: MIT
/* The checker sweep: every algorithm of the registry x every collective it implements x many
 * rank counts, roots, sizes, chunkings and channel counts must pass the semantic checker.
 * It iterates the registry, so a new algorithm is tested without editing this file.
 * Built twice: test-algos (unit suite, P up to 17 and small shipped topologies) and
 * test-algos-slow (P up to 257, topologies up to 128 ranks). */
#include "config.h"

#include "algos/registry.h"
#include "sched/check.h"

#ifndef SWEEP_SLOW
static const int rank_counts[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 17 };
/* Shipped topologies give node structure (hierarchical, tree), NVLS switches and SHARP
 * (CollNet). */
static const char *const topologies[]
    = { "dgx-h100x8", "hgx-h100x8-2n", "eth-cpu-8n", "hgx-h100x8-2n-sharp" };
#else
static const int rank_counts[] = { 10, 11, 13, 14, 15, 18, 19, 20, 21, 22, 23,  24,  25,
                                   26, 27, 28, 29, 30, 31, 32, 33, 48, 64, 100, 128, 257 };
static const char *const topologies[]
    = { "dgx-h100x4", "pcie-l40sx8", "gb200-nvl72", "hgx-h100x8-16n" };
#endif

typedef struct {
    const CsAlgo *algo;
    CsOp op;
    int nranks;
    const char *topo; /* shipped topology name, or NULL for none */
} SweepCase;

/* One configuration of a case: size, pipeline chunk, channels, protocol. */
typedef struct {
    gint64 size_bytes;
    gint64 chunk_bytes; /* 0: protocol default */
    int n_channels;
    CsProto proto;
    int peer_channels; /* grouped send/recv: channels per peer's message, 0 = all */
} Variant;

/* Sizes in bytes of floats (4 bytes):
 *  - 12P + 4: 3P + 1 elements, never divisible by P for P > 1, and for the block
 *    collectives 3 elements per block with one left over (rounded away by cs_op_size);
 *  - 1000: 250 elements, fewer than P for P > 250 (empty blocks);
 *  - 148P + 12 with a 40-byte chunk: 37 elements per block cut into 4 chunks of at most
 *    10, so every pipeline runs several chunks, with the last one short (148 min(P, 16)
 *    + 12 for the vector collectives);
 *  - the same on 3 channels with LL, where channels split vectors and blocks unevenly;
 *  - the same with each peer's message on 2 of the 3 channels (grouped send/recv), so the
 *    peers' parts wrap around the channels;
 *  - 0 bytes: nothing to move, yet a valid schedule. */
static int
variants_for(CsOp op, int P, Variant *v)
{
    /* Vector collectives (the size is the per-rank vector) keep the chunked vector at the
     * 16-rank size, so 257 ranks do not move 2 million 40-byte chunks. */
    gboolean vector = op == CS_OP_ALL_REDUCE || op == CS_OP_BROADCAST || op == CS_OP_REDUCE;
    gint64 chunked = 148 * (gint64)(vector ? MIN(P, 16) : P) + 12;
    int n = 0;
    v[n++] = (Variant){ 12 * (gint64)P + 4, 0, 1, CS_PROTO_SIMPLE, 0 };
    v[n++] = (Variant){ 1000, 0, 1, CS_PROTO_SIMPLE, 0 };
    v[n++] = (Variant){ chunked, 40, 1, CS_PROTO_SIMPLE, 0 };
    v[n++] = (Variant){ chunked, 40, 3, CS_PROTO_LL, 0 };
    v[n++] = (Variant){ chunked, 40, 3, CS_PROTO_LL, 2 };
    v[n++] = (Variant){ 0, 0, 1, CS_PROTO_SIMPLE, 0 };
    return n;
}

static int
roots_for(CsOp op, int P, int *roots)
{
    if (!cs_op_has_root(op)) {
        roots[0] = 0;
        return 1;
    }
    int n = 0;
    int candidates[] = { 0, P - 1, P / 2 };
    for (int i = 0; i < 3; i++) {
        gboolean seen = FALSE;
        for (int k = 0; k < n; k++)
            seen = seen || roots[k] == candidates[i];
        if (!seen)
            roots[n++] = candidates[i];
    }
    return n;
}

static void
test_sweep(gconstpointer data)
{
    const SweepCase *c = data;
    g_autoptr(CsTopo) topo = NULL;
    int nranks = c->nranks;
    if (c->topo != NULL) {
        g_autoptr(GError) error = NULL;
        topo = cs_topo_load(c->topo, &error);
        g_assert_no_error(error);
        nranks = cs_topo_n_ranks(topo);
    }
    Variant variants[8];
    int roots[3];
    int n_variants = variants_for(c->op, nranks, variants);
    int n_roots = roots_for(c->op, nranks, roots);
    int n_built = 0;
    for (int vi = 0; vi < n_variants; vi++) {
        const Variant *v = &variants[vi];
        for (int ri = 0; ri < n_roots; ri++) {
            CsAlgoArgs args;
            cs_algo_args_init(&args, topo, c->op, nranks, v->size_bytes);
            args.root = roots[ri];
            args.chunk_bytes = v->chunk_bytes;
            args.n_channels = v->n_channels;
            args.peer_channels = v->peer_channels;
            args.proto = v->proto;
            g_autoptr(GError) error = NULL;
            g_autoptr(CsSchedule) sched = cs_algo_build(c->algo, &args, &error);
            if (sched == NULL) {
                /* An algorithm may refuse a case (supports() with a reason, or a build-time
                 * limit such as NVLS's Simple-only protocol), never fail otherwise. */
                g_test_message("%s", error->message);
                g_assert_error(error, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_UNSUPPORTED);
                const char *why = NULL;
                if (c->algo->supports != NULL && !c->algo->supports(topo, c->op, nranks, &why)) {
                    g_assert_nonnull(why);
                    return;
                }
                continue;
            }
            n_built++;
            CsCheckReport report;
            if (!cs_check_schedule(sched, &report, &error))
                g_error("%s %s P=%d%s%s root=%d size=%" G_GINT64_FORMAT " chunk=%" G_GINT64_FORMAT
                        " channels=%d %s: %s",
                        c->algo->name, cs_op_name(c->op), nranks, c->topo ? " topo=" : "",
                        c->topo ? c->topo : "", roots[ri], v->size_bytes, v->chunk_bytes,
                        v->n_channels, cs_proto_name(v->proto), error->message);
            g_assert_cmpstr(cs_schedule_algo(sched), ==, c->algo->name);
            /* More than one rank and a non-empty buffer: something must travel. */
            if (nranks > 1 && cs_schedule_size(sched)->block_bytes > 0)
                g_assert_cmpint(report.n_messages, >, 0);
            if (nranks == 1)
                g_assert_cmpint(report.n_messages, ==, 0);
        }
    }
    /* Supported cases build for at least the default configuration. */
    g_assert_cmpint(n_built, >, 0);
}

/* NCCL stripes each peer's message over a few channels, not all: with one channel per peer,
 * an 8-rank all-to-all on 32 channels sends 7 messages per rank (one per peer, each peer on its
 * own channel), not 7 x 32 slices. */
static void
test_direct_peer_channels(void)
{
    const CsAlgo *direct = cs_algo_lookup("direct", NULL);
    CsAlgoArgs args;

    g_test_summary("Grouped send/recv puts each peer's message on peer_channels channels, the "
                   "peers spread over all channels.");
    for (int per_peer = 0; per_peer <= 1; per_peer++) {
        cs_algo_args_init(&args, NULL, CS_OP_ALL_TO_ALL, 8, 8 * 4096);
        args.n_channels = 32;
        args.peer_channels = per_peer;
        g_autoptr(GError) error = NULL;
        g_autoptr(CsSchedule) sched = cs_algo_build(direct, &args, &error);
        g_assert_no_error(error);
        CsCheckReport report;
        g_assert_true(cs_check_schedule(sched, &report, &error));
        g_assert_no_error(error);
        g_assert_cmpint(report.n_messages, ==, 8 * 7 * (per_peer == 1 ? 1 : 32));
        /* With one channel per peer, the 7 peers of rank 0 use 7 distinct channels. */
        gsize n_steps;
        const CsStep *steps = cs_schedule_steps(sched, 0, &n_steps);
        guint64 channels_sending = 0;
        for (gsize i = 0; i < n_steps; i++)
            if (steps[i].kind == CS_STEP_SEND)
                channels_sending |= G_GUINT64_CONSTANT(1) << steps[i].channel;
        g_assert_cmpint(__builtin_popcountll(channels_sending), ==, per_peer == 1 ? 7 : 32);
    }
}

#ifndef SWEEP_SLOW
/* Field by field: a step's padding bytes are not part of it. */
static gboolean
steps_equal(const CsStep *a, const CsStep *b)
{
    return a->src_offset == b->src_offset && a->dst_offset == b->dst_offset && a->bytes == b->bytes
           && a->send_peer == b->send_peer && a->recv_peer == b->recv_peer && a->chunk == b->chunk
           && a->kind == b->kind && a->src_buf == b->src_buf && a->dst_buf == b->dst_buf
           && a->channel == b->channel && a->flags == b->flags;
}

/* cs_algo_step_chunk() names the chunk a schedule is cut into: passed back as chunk_bytes it
 * builds the same schedule. predict.c pins it so that the smaller sizes a large one is
 * extended from run the same pipeline; an algorithm that chose its chunk by the size without
 * saying so (a missing CsAlgo.chunk hook) fails here. The sizes cross NVLS's and the LL128
 * tree's chunk rules. */
static void
test_step_chunk(void)
{
    /* NULL: no topology, as predict.c passes for a subset of a machine's ranks. */
    static const char *const topos[] = { "dgx-h100x8", "hgx-h100x8-2n", NULL };
    static const gint64 sizes[] = { 64 * 1024, 8 << 20, 96 << 20, 600 << 20 };
    static const CsProto protos[] = { CS_PROTO_SIMPLE, CS_PROTO_LL128 };
    int n_compared = 0;

    g_test_summary("Building with the chunk cs_algo_step_chunk() reports gives the same "
                   "schedule as leaving the chunk to the algorithm.");
    for (gsize t = 0; t < G_N_ELEMENTS(topos); t++) {
        g_autoptr(GError) error = NULL;
        g_autoptr(CsTopo) topo = topos[t] != NULL ? cs_topo_load(topos[t], &error) : NULL;
        g_assert_no_error(error);
        int nranks = topo != NULL ? cs_topo_n_ranks(topo) : 12;
        for (const CsAlgo *const *a = cs_algo_registry(); *a != NULL; a++) {
            for (int op = 0; op < CS_N_OPS; op++) {
                const char *why = NULL;
                if (((*a)->ops & CS_OP_BIT(op)) == 0
                    || ((*a)->supports != NULL && !(*a)->supports(topo, op, nranks, &why)))
                    continue;
                for (gsize si = 0; si < G_N_ELEMENTS(sizes); si++) {
                    for (gsize pi = 0; pi < G_N_ELEMENTS(protos); pi++) {
                        CsAlgoArgs args;
                        cs_algo_args_init(&args, topo, (CsOp)op, nranks, sizes[si]);
                        args.proto = protos[pi];
                        args.n_channels = 16;
                        g_autoptr(GError) local = NULL;
                        g_autoptr(CsSchedule) free_chunk = cs_algo_build(*a, &args, &local);
                        if (free_chunk == NULL)
                            continue;
                        args.chunk_bytes = cs_algo_step_chunk(*a, &args);
                        g_assert_cmpint(args.chunk_bytes, >, 0);
                        g_autoptr(CsSchedule) pinned = cs_algo_build(*a, &args, &local);
                        g_assert_no_error(local);
                        for (int r = 0; r < nranks; r++) {
                            gsize n0, n1;
                            const CsStep *s0 = cs_schedule_steps(free_chunk, r, &n0);
                            const CsStep *s1 = cs_schedule_steps(pinned, r, &n1);
                            gboolean same = n0 == n1;
                            for (gsize k = 0; same && k < n0; k++)
                                same = steps_equal(&s0[k], &s1[k]);
                            if (!same)
                                g_error("%s %s on %s, %" G_GINT64_FORMAT " B %s: rank %d's "
                                        "steps differ with the chunk pinned at %" G_GINT64_FORMAT,
                                        (*a)->name, cs_op_name((CsOp)op),
                                        topos[t] != NULL ? topos[t] : "no topology", sizes[si],
                                        cs_proto_name(protos[pi]), r, args.chunk_bytes);
                        }
                        n_compared++;
                    }
                }
            }
        }
    }
    /* Every algorithm that applies was compared: ring, tree, NVLS, NVLS tree, the classics. */
    g_assert_cmpint(n_compared, >, 100);
}

/* A loop is every part of every channel one chunk further: a ring cuts a channel's data per
 * rank (its broadcast and reduce not at all), NVLS per head (every GPU of its domain), a tree
 * not at all. A loop too large (a
 * tree's counted per rank: 16 GiB on 1,024 ranks) would keep any size from being extended. */
static void
test_loop_bytes(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(CsTopo) two = cs_topo_load("hgx-h100x8-2n", &error);
    g_assert_no_error(error);
    CsAlgoArgs args;

    g_test_summary("A pipeline's loop is parts x channels x chunk, the parts as the algorithm "
                   "cuts a channel's data.");
    cs_algo_args_init(&args, two, CS_OP_ALL_REDUCE, 16, (gint64)1 << 30);
    args.n_channels = 32;
    args.proto = CS_PROTO_SIMPLE;
    const CsAlgo *tree = cs_algo_lookup("tree", NULL);
    const CsAlgo *ring = cs_algo_lookup("ring", NULL);
    const CsAlgo *nvls_tree = cs_algo_lookup("nvls_tree", NULL);
    g_assert_cmpint(cs_algo_loop_bytes(tree, &args), ==, 32 * cs_algo_step_chunk(tree, &args));
    g_assert_cmpint(cs_algo_loop_bytes(ring, &args), ==, 16 * 32 * cs_algo_step_chunk(ring, &args));
    /* Two domains of 8 heads each. */
    g_assert_cmpint(cs_algo_loop_bytes(nvls_tree, &args), ==,
                    8 * 32 * cs_algo_step_chunk(nvls_tree, &args));
    /* A ring's broadcast and reduce are chains: a channel's share crosses them chunk after
     * chunk, not cut per rank (counted per rank, a loop of 16 GiB on 1,024 ranks kept every
     * size of them from being extended). */
    for (int k = 0; k < 2; k++) {
        args.op = k == 0 ? CS_OP_BROADCAST : CS_OP_REDUCE;
        g_assert_cmpint(cs_algo_loop_bytes(ring, &args), ==, 32 * cs_algo_step_chunk(ring, &args));
    }
    /* Grouped send/recv: a block per peer, and sendrecv's one message to one peer. */
    const CsAlgo *direct = cs_algo_lookup("direct", NULL);
    args.op = CS_OP_ALL_TO_ALL;
    g_assert_cmpint(cs_algo_loop_bytes(direct, &args), ==,
                    16 * 32 * cs_algo_step_chunk(direct, &args));
    args.op = CS_OP_SEND_RECV;
    g_assert_cmpint(cs_algo_loop_bytes(direct, &args), ==, 32 * cs_algo_step_chunk(direct, &args));
    /* Its message in 4 pieces over 5 channels: a loop is whole rounds of the 4 (20 chunks). */
    args.n_channels = 5;
    args.peer_channels = 4;
    g_assert_cmpint(cs_algo_loop_bytes(direct, &args), ==,
                    4 * 5 * cs_algo_step_chunk(direct, &args));
    args.peer_channels = 8; /* at most the channels: 5 pieces, one loop of 5 chunks */
    g_assert_cmpint(cs_algo_loop_bytes(direct, &args), ==, 5 * cs_algo_step_chunk(direct, &args));
}
#endif

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_summary("Every registered algorithm computes every collective it claims, for many "
                   "P, roots, sizes, chunks and channel counts (semantic checker).");
    g_test_add_func("/algo/direct/peer-channels", test_direct_peer_channels);
#ifndef SWEEP_SLOW
    g_test_add_func("/algo/step-chunk", test_step_chunk);
    g_test_add_func("/algo/loop-bytes", test_loop_bytes);
#endif
    for (const CsAlgo *const *a = cs_algo_registry(); *a != NULL; a++) {
        for (int op = 0; op < CS_N_OPS; op++) {
            if (((*a)->ops & CS_OP_BIT(op)) == 0)
                continue;
            for (gsize i = 0; i < G_N_ELEMENTS(rank_counts); i++) {
                SweepCase *c = g_new(SweepCase, 1);
                *c = (SweepCase){ *a, (CsOp)op, rank_counts[i], NULL };
                g_autofree char *path = g_strdup_printf("/algo/%s/%s/p%d", (*a)->name,
                                                        cs_op_name((CsOp)op), c->nranks);
                g_test_add_data_func_full(path, c, test_sweep, g_free);
            }
            for (gsize i = 0; i < G_N_ELEMENTS(topologies); i++) {
                SweepCase *c = g_new(SweepCase, 1);
                *c = (SweepCase){ *a, (CsOp)op, 0, topologies[i] };
                g_autofree char *path = g_strdup_printf("/algo/%s/%s/topo-%s", (*a)->name,
                                                        cs_op_name((CsOp)op), c->topo);
                g_test_add_data_func_full(path, c, test_sweep, g_free);
            }
        }
    }
    return g_test_run();
}
