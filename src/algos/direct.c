// SPDX-License-Identifier: MIT
/* Direct send/recv: the root (scatter, gather) or every rank (all-to-all) talks to each peer
 * itself, all peers in flight together. This is how NCCL runs these collectives: there is no
 * ncclScatter, ncclGather or ncclAllToAll kernel; nccl-tests' scatter.cu, gather.cu and
 * alltoall.cu issue ncclSend/ncclRecv to every peer inside ncclGroupStart/End, and NCCL's
 * p2p scheduler (src/enqueue.cc, NCCL 2.28) progresses them side by side chunk by chunk.
 * nccl-tests' sendrecv.cu is the same path with one peer each way: every rank sends its buffer
 * to rank + 1 and receives rank - 1's in one group, which NCCL's p2p schedule pairs in round 1
 * (scheduleP2pTasksToPlan: round q sends to rank + q and receives from rank - q) and moves as
 * one ncclDevWorkP2p striped over the peer's channels (addP2pToPlan; src/device/sendrecv.h
 * runs the send and the receive with separate warps).
 *
 * Each peer's message is striped over peer_channels of the n_channels channels, as NCCL
 * stripes it over nChannels parts (addP2pToPlan); the peer at distance q (NCCL's round q)
 * starts at channel (q - 1) x peer_channels, so the peers spread over all channels, as
 * ncclP2pChannelBaseForRound spreads the rounds on one node (across nodes NCCL gives each
 * batch of 8 rounds one base, so it uses fewer channels than here). On each channel every chunk
 * round visits the channel's peers before the next chunk starts, so each connection has at
 * most one chunk in flight per round and all peers progress together. One round of alpha
 * for any P, but the root's (or every rank's) link carries all P - 1 blocks: the choice for
 * small P or fat switches. */
#include "algos/algo.h"

#define DIRECT_OPS                                                                                 \
    (CS_OP_BIT(CS_OP_SCATTER) | CS_OP_BIT(CS_OP_GATHER) | CS_OP_BIT(CS_OP_ALL_TO_ALL)              \
     | CS_OP_BIT(CS_OP_SEND_RECV))

static int
mod(int a, int p)
{
    return ((a % p) + p) % p;
}

/* The distances q (ascending, 1 .. P - 1) at which rank @r sends to r + q (@recv: receives
 * from r - q) in @op, into @out; their count: the root to all (scatter), all to the root
 * (gather), everybody to everybody (all-to-all), each rank to the next (sendrecv). Found
 * without visiting every pair: sendrecv and the ranks beside the root talk to one peer. */
static int
distances(CsOp op, int root, int P, int r, gboolean recv, int *out)
{
    int n = 0;
    if (P < 2)
        return 0;
    if (op == CS_OP_SEND_RECV) {
        out[n++] = 1;
    }
    else if (op == CS_OP_ALL_TO_ALL || (op == CS_OP_SCATTER && !recv && r == root)
             || (op == CS_OP_GATHER && recv && r == root)) {
        for (int q = 1; q < P; q++)
            out[n++] = q;
    }
    else if (op == CS_OP_SCATTER && recv && r != root) {
        out[n++] = mod(r - root, P);
    }
    else if (op == CS_OP_GATHER && !recv && r != root) {
        out[n++] = mod(root - r, P);
    }
    return n;
}

/* Where the message from @from to @to starts in @from's input (@at_sender) or @to's output:
 * the receiver's block of the sender's input, the sender's block of the output, the whole
 * buffer for the side that holds one block (scatter's output, gather's input) and for
 * sendrecv. */
static gint64
block_offset(CsOp op, int from, int to, gint64 block, gboolean at_sender)
{
    if (op == CS_OP_SEND_RECV)
        return 0;
    if (at_sender)
        return op == CS_OP_GATHER ? 0 : to * block;
    return op == CS_OP_SCATTER ? 0 : from * block;
}

/* The chunk of the message from @from to @to: @net_chunk over the network, between ranks of
 * two nodes and two NVLink domains (@place: each rank's node and domain, NULL when not known),
 * @chunk otherwise. */
static gint64
pair_chunk(const int *place, int from, int to, gint64 chunk, gint64 net_chunk)
{
    if (net_chunk > 0 && place != NULL && place[2 * from] != place[2 * to]
        && place[2 * from + 1] != place[2 * to + 1])
        return net_chunk;
    return chunk;
}

/* Channel @ch's share of the exchange: the parts of the peers' messages striped onto it, chunk
 * by chunk, and slice @ch of the local block. @part_first/@part_len give each of the @parts
 * parts of a block, in bytes. */
static void
direct_channel(CsSchedule *s, CsOp op, int P, int root, int ch, int n_ch, int parts, gint64 block,
               const gint64 *part_first, const gint64 *part_len, gint64 local_sub, gint64 local_len,
               gint64 chunk, const int *place, gint64 net_chunk)
{
    /* The local block first: it needs nobody. sendrecv has none but on one rank, where NCCL
     * copies the send to the receive (addP2pToPlan: selfSend). */
    if (local_len > 0) {
        for (int r = 0; r < P; r++) {
            gboolean talks = op == CS_OP_SEND_RECV ? P == 1 : op == CS_OP_ALL_TO_ALL || r == root;
            if (!talks)
                continue;
            gint64 src = block_offset(op, r, r, block, TRUE) + local_sub;
            gint64 dst = block_offset(op, r, r, block, FALSE) + local_sub;
            cs_schedule_step(s, r, ch, CS_STEP_COPY, -1, -1, CS_BUF_INPUT, src, CS_BUF_OUTPUT, dst,
                             local_len, 0);
        }
    }
    /* Which part of round q's message this channel carries (-1: none). */
    g_autofree int *part_of = g_new(int, (gsize)MAX(P, 1));
    g_autofree int *dist = g_new(int, (gsize)MAX(P, 1));
    gint64 longest = 0;
    for (int q = 1; q < P; q++) {
        int j = mod(ch - (q - 1) * parts, n_ch);
        part_of[q] = j < parts && part_len[j] > 0 ? j : -1;
        if (part_of[q] >= 0 && (op != CS_OP_SEND_RECV || q == 1))
            longest = MAX(longest, part_len[j]);
    }
    /* A message between NVLink domains moves in the network's chunk (NCCL's addP2pToPlan),
     * the others in @chunk; round k carries chunk k of every message that has one. */
    const gint64 smallest = net_chunk > 0 && place != NULL ? MIN(chunk, net_chunk) : chunk;
    const gint64 rounds = (longest + smallest - 1) / smallest;
    for (gint64 k = 0; k < rounds; k++) {
        for (int r = 0; r < P; r++) {
            const int n_send = distances(op, root, P, r, FALSE, dist);
            for (int i = 0; i < n_send; i++) {
                int q = dist[i];
                int j = part_of[q];
                int to = mod(r + q, P);
                if (j < 0)
                    continue;
                gint64 c = pair_chunk(place, r, to, chunk, net_chunk);
                gint64 at = k * c;
                if (at >= part_len[j])
                    continue;
                gint64 off = block_offset(op, r, to, block, TRUE) + part_first[j] + at;
                cs_schedule_send(s, r, ch, to, CS_BUF_INPUT, off, MIN(c, part_len[j] - at), (int)k);
            }
            const int n_recv = distances(op, root, P, r, TRUE, dist);
            for (int i = 0; i < n_recv; i++) {
                int q = dist[i];
                int j = part_of[q];
                int from = mod(r - q, P);
                if (j < 0)
                    continue;
                gint64 c = pair_chunk(place, from, r, chunk, net_chunk);
                gint64 at = k * c;
                if (at >= part_len[j])
                    continue;
                gint64 off = block_offset(op, from, r, block, FALSE) + part_first[j] + at;
                cs_schedule_recv(s, r, ch, from, CS_BUF_OUTPUT, off, MIN(c, part_len[j] - at),
                                 (int)k);
            }
        }
    }
}

/* Into how many parts a channel's data is cut, each one chunk further per loop (a loop being
 * parts x channels x chunk, cs_algo_loop_bytes()): one block per peer for scatter, gather and
 * all-to-all (a chunk round visits every peer); for sendrecv, whose one message is cut into
 * min(peer_channels, channels) pieces that each move a chunk per round (direct_build()), as
 * few as make a loop whole rounds (counted per rank, a loop of 512 MiB on 1,024 ranks kept its
 * sizes below 8 GiB from being extended). */
static int
direct_parts(const CsAlgoArgs *args)
{
    if (args->op != CS_OP_SEND_RECV)
        return args->nranks;
    const int n_ch = MAX(args->n_channels, 1);
    const int pieces = args->peer_channels > 0 ? MIN(args->peer_channels, n_ch) : n_ch;
    int a = n_ch;
    int b = pieces;
    while (b != 0) {
        const int t = a % b;
        a = b;
        b = t;
    }
    return pieces / a;
}

static gboolean
direct_supports(const CsTopo *topo, CsOp op, int nranks, const char **why)
{
    (void)topo;
    (void)nranks;
    if ((DIRECT_OPS & CS_OP_BIT(op)) == 0) {
        *why = "direct send/recv serves scatter, gather, all-to-all and sendrecv";
        return FALSE;
    }
    return TRUE;
}

static CsSchedule *
direct_build(const CsAlgoArgs *args, GError **error)
{
    (void)error;
    g_autoptr(CsSchedule) sched = cs_algo_schedule_new(args);
    /* NCCL's p2p kernel sends and receives with separate warps; MPI ranks do one at a time. */
    cs_schedule_set_p2p_split(sched, args->peer_channels > 0);
    gint64 ts = cs_dtype_size(args->dtype);
    gint64 block = cs_schedule_size(sched)->block_bytes;
    gint64 chunk = cs_algo_chunk_bytes(args);
    int root = cs_op_has_root(args->op) ? args->root : 0;
    int n_ch = args->n_channels;
    int parts = args->peer_channels > 0 ? MIN(args->peer_channels, n_ch) : n_ch;
    g_autofree gint64 *part_first = g_new(gint64, (gsize)MAX(parts, 1));
    g_autofree gint64 *part_len = g_new(gint64, (gsize)MAX(parts, 1));
    for (int j = 0; j < parts; j++) {
        gint64 first;
        gint64 n;
        cs_algo_split(block / ts, parts, j, &first, &n);
        part_first[j] = first * ts;
        part_len[j] = n * ts;
    }
    g_autofree int *place = NULL;
    gint64 net_chunk = 0;
    const CsTopo *machine = args->topo != NULL ? args->topo : args->placement;
    if (args->net_chunk_bytes > 0 && machine != NULL && cs_topo_n_ranks(machine) >= args->nranks) {
        net_chunk = MAX(args->net_chunk_bytes / ts, 1) * ts;
        place = g_new(int, 2 * (gsize)MAX(args->nranks, 1));
        for (int r = 0; r < args->nranks; r++) {
            place[2 * r] = cs_topo_rank_node(machine, r);
            place[2 * r + 1] = cs_topo_rank_island(machine, r);
        }
    }
    for (int c = 0; c < n_ch; c++) {
        gint64 first;
        gint64 n;
        cs_algo_split(block / ts, n_ch, c, &first, &n);
        direct_channel(sched, args->op, args->nranks, root, c, n_ch, parts, block, part_first,
                       part_len, first * ts, n * ts, chunk, place, net_chunk);
    }
    return g_steal_pointer(&sched);
}

const CsAlgo cs_algo_direct = {
    .name = "direct",
    .summary = "direct grouped send/recv to every peer (NCCL's scatter, gather, all-to-all, "
               "sendrecv)",
    .reference = "nccl-tests scatter.cu, gather.cu, alltoall.cu, sendrecv.cu (ncclSend/ncclRecv "
                 "in a group); NCCL 2.28 src/enqueue.cc p2p scheduling",
    .ops = DIRECT_OPS,
    .supports = direct_supports,
    .build = direct_build,
    .parts = direct_parts,
};
