// SPDX-License-Identifier: MIT
/* Ring algorithms as NCCL runs them: data split across channels, each channel a ring over all
 * ranks, pipelined chunk by chunk.
 *
 * - all-reduce: reduce-scatter then all-gather around the ring with NCCL's primitives
 *   (send, recv_reduce_send, recv_reduce_copy_send, recv_copy_send, recv), 2(P-1) steps per
 *   loop of P chunks (NCCL 2.28 src/device/all_reduce.h, runRing);
 * - all-gather: P-1 steps of recv_copy_send (src/device/all_gather.h);
 * - reduce-scatter: P-1 steps of recv_reduce_send ending in a recv_reduce
 *   (src/device/reduce_scatter.h);
 * - broadcast: a pipelined chain from the root (src/device/broadcast.h), in NCCL's chunks;
 * - reduce: a pipelined chain ending at the root (src/device/reduce.h), likewise (NCCL
 *   2.30.7; see "Broadcast and reduce" below).
 * Scatter, gather and all-to-all are not ring collectives in NCCL (they are grouped
 * send/recv: see direct.c). Cost and the bandwidth-optimality of the ring all-reduce:
 * Patarasuk and Yuan, "Bandwidth optimal all-reduce algorithms for clusters of
 * workstations", JPDC 2009; Thakur, Rabenseifner and Gropp, IJHPCA 2005.
 *
 * Ring order. NCCL searches one ring per channel (src/graph/search.cc): inside a node the GPUs
 * follow NVLink / PCIe adjacency, and each channel enters and leaves the node through its own
 * NIC (graph->inter), so that the channels together use every NIC; connect.cc then joins the
 * node rings, each node's last GPU (ringSend) to the next node's first (ringRecv). Here:
 * - inside a node (or on one machine) the ranks are ordered greedily by route: from the first
 *   rank, always the nearest unvisited one (fewest hops, then widest), so GPUs that share a
 *   PCIe switch are neighbours; on NVSwitch and NVL72 racks that is rank order;
 * - on one node whose GPUs form a full mesh of direct links (an xGMI platform), the channels
 *   cycle over P - 1 rings that together follow every directed link once (2 (P - 1) rings,
 *   each link twice, for P = 4 and 6: mesh_rings.c), so that, as with RCCL's rings on
 *   8 MI300X, every link of every GPU carries an equal share; across such nodes each channel
 *   crosses its node along the next of those rings;
 * - on several nodes joined by a network, channel c enters every node at a start position s
 *   that moves with c, and leaves it at the neighbouring position; the next node is entered
 *   at the GPU of the same local index (the same rail of a rail-optimised fabric), so every
 *   node crossing stays on one rail (NIC, rail switch, NIC) and, over L consecutive channels
 *   of L-GPU nodes, every NIC sends and receives the same share. Nodes alternate direction
 *   (enter at s, leave at s+1; the next enters at s+1 and leaves at s; with an odd node count
 *   the last enters at s+2), which keeps in-node hops on adjacency edges. The channels that
 *   share a start position take the GPU's NICs in turn (several NICs per GPU). NCCL's rings
 *   leave a node through the NIC they entered by (PXN: a hop over NVLink to that NIC's GPU);
 *   collsim routes every message from the sending GPU's own NIC, so a channel's entry and
 *   exit rails differ and the alternation keeps each crossing on one rail. Start positions
 *   whose crossings take more hops than others (one NIC behind one PCIe switch) are skipped;
 * - nodes joined by NVLink into domains (an NVL72 rack's trays) that meet over a network are
 *   taken domain by domain, as NCCL's MNNVL takes an NVLink clique for one node;
 * - with nodes of unequal GPU counts, channel c enters each node of L GPUs at its local
 *   position c mod L and leaves at the one before (NICs still shared out, rails crossed);
 * - without a topology, or with more ranks than it has GPUs, ranks are in rank order. */
#include <string.h>

#include "algos/algo.h"
#include "algos/mesh_rings.h"
#include "algos/pipetree.h"

#define RING_OPS                                                                                   \
    (CS_OP_BIT(CS_OP_BROADCAST) | CS_OP_BIT(CS_OP_REDUCE) | CS_OP_BIT(CS_OP_ALL_REDUCE)            \
     | CS_OP_BIT(CS_OP_ALL_GATHER) | CS_OP_BIT(CS_OP_REDUCE_SCATTER))

/* What one rank of one channel needs to emit its steps. */
typedef struct {
    CsSchedule *sched;
    int nranks;
    int rank;
    int channel;
    int pos;          /* this rank's position on the channel's ring */
    const int *order; /* nranks entries: the rank at each position */
    int prev;         /* receives from */
    int next;         /* sends to */
    gint64 ts;        /* bytes per element */
    int period;       /* ranks the schedule repeats under a shift of (P: none) */
    CsAlgoShares shares;
} Ring;

static int
mod(int a, int p)
{
    return ((a % p) + p) % p;
}

/* ---- Ring orders ---- */

/* Whether @a is a better neighbour of @from than @b: fewer hops, then a wider route. */
static gboolean
nearer(const CsTopo *topo, int from, int a, int b)
{
    const CsRoute *ra = cs_topo_route(topo, from, a);
    const CsRoute *rb = cs_topo_route(topo, from, b);

    if (ra->n_links != rb->n_links)
        return ra->n_links < rb->n_links;
    return ra->bw_Bps > rb->bw_Bps;
}

/* Orders @members[0..n-1] greedily by adjacency: from the first, always the nearest
 * unvisited member, ties to the lowest index. Writes member indices into @out. */
static void
adjacency_order(const CsTopo *topo, const int *members, int n, int *out)
{
    g_autofree gboolean *used = g_new0(gboolean, n);
    g_autofree int *hops = g_new(int, n);
    g_autofree double *bw = g_new(double, n);

    out[0] = 0;
    used[0] = TRUE;
    /* Members of one node: each step's costs from one search (cs_topo_node_route_costs()), the
     * same order without finding and keeping every pair's route. */
    gboolean batched = n > 2;
    for (int i = 1; i < n && batched; i++) {
        const int from = members[out[i - 1]];
        batched = cs_topo_node_route_costs(topo, from, members, n, hops, bw);
        int best = -1;
        for (int j = 0; j < n && batched; j++) {
            if (used[j])
                continue;
            if (best < 0 || hops[j] < hops[best] || (hops[j] == hops[best] && bw[j] > bw[best]))
                best = j;
        }
        if (!batched)
            break;
        out[i] = best;
        used[best] = TRUE;
    }
    if (batched)
        return;
    memset(used, 0, sizeof(gboolean) * (gsize)n);
    used[0] = TRUE;
    for (int i = 1; i < n; i++) {
        int from = members[out[i - 1]];
        int best = -1;
        for (int j = 0; j < n; j++) {
            if (!used[j] && (best < 0 || nearer(topo, from, members[j], members[best])))
                best = j;
        }
        out[i] = best;
        used[best] = TRUE;
    }
}

/* Positions 0..@n-1 of a cyclic base order as a path from @a to @b (@a != @b unless n = 1),
 * using only cycle edges when @a and @b are neighbours on the cycle. */
static void
node_path(int n, int a, int b, int *path)
{
    int k = 0;

    if (n == 1) {
        path[0] = 0;
        return;
    }
    if (b == mod(a + 1, n)) {
        for (int i = 0; i < n; i++)
            path[k++] = mod(a - i, n);
        return;
    }
    for (int i = 0; i < n; i++) {
        int p = mod(a + i, n);
        if (p != b)
            path[k++] = p;
    }
    path[k] = b;
}

/* Entry position offsets of the nodes, from the channel's start position: 0, 1, 0, 1, ...
 * so consecutive nodes differ and the last meets the first; an odd node count ends in 2. */
static int
entry_offset(int n_nodes, int k)
{
    if (n_nodes % 2 == 1 && k == n_nodes - 1)
        return 2;
    return k % 2;
}

/* The start position in @ring (local indices, @len of them) whose node exits, at the entry
 * offsets network_ring() gives @n_nodes nodes, have left by the fewest channels so far
 * (@exits: per offset 0..2 and local GPU); counts the chosen start's exits. The first such
 * position on ties. */
static int
least_loaded_start(const int *ring, int len, int n_nodes, int *exits)
{
    gboolean used[3] = { FALSE, FALSE, FALSE };
    int best = 0;
    int best_load = G_MAXINT;

    for (int k = 0; k < n_nodes; k++)
        used[entry_offset(n_nodes, k)] = TRUE;
    for (int s = 0; s < len; s++) {
        int load = 0;
        for (int o = 0; o < 3; o++)
            if (used[o])
                load += exits[o * len + ring[mod(s + o, len)]];
        if (load < best_load) {
            best_load = load;
            best = s;
        }
    }
    for (int o = 0; o < 3; o++)
        if (used[o])
            exits[o * len + ring[mod(best + o, len)]]++;
    return best;
}

/* Channel ring over uniform nodes of @groups, start position @s of @base (local indices in
 * adjacency order, the same on every node): fills @order with ranks. Returns the total hops
 * of the node-crossing routes. */
static int
network_ring(const CsTopo *topo, const CsNodeGroups *groups, const int *base, int s, int *order)
{
    int n_nodes = groups->n_groups;
    int len = cs_node_groups_size(groups, 0);
    g_autofree int *path = g_new(int, len);
    int crossing_hops = 0;

    for (int k = 0; k < n_nodes; k++) {
        int in = mod(s + entry_offset(n_nodes, k), len);
        int out = mod(s + entry_offset(n_nodes, (k + 1) % n_nodes), len);
        if (out == in && len > 1)
            out = mod(in + 1, len);
        node_path(len, in, out, path);
        for (int i = 0; i < len; i++)
            order[k * len + i] = cs_node_groups_rank(groups, k, base[path[i]]);
    }
    for (int k = 0; k < n_nodes; k++) {
        int from = order[k * len + len - 1];
        int to = order[((k + 1) % n_nodes) * len];
        crossing_hops += cs_topo_route(topo, from, to)->n_links;
    }
    return crossing_hops;
}

/* Whether every pair of consecutive node groups talks over the network: nodes of one NVLink
 * domain (an NVL72 rack's trays) form one ring domain instead. */
static gboolean
nodes_on_network(const CsTopo *topo, const CsNodeGroups *groups)
{
    for (int g = 0; g + 1 < groups->n_groups; g++) {
        const CsRoute *r = cs_topo_route(topo, cs_node_groups_rank(groups, g, 0),
                                         cs_node_groups_rank(groups, g + 1, 0));
        if (r->link_class != CS_LINK_CLASS_NET)
            return FALSE;
    }
    return TRUE;
}

static int
gcd(int a, int b)
{
    while (b != 0) {
        int t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* Whether the first node group's ranks (at least 3) are a full mesh of direct links. */
static gboolean
group_full_mesh(const CsTopo *topo, const CsNodeGroups *groups)
{
    int len = cs_node_groups_size(groups, 0);
    if (len < 3 || len > CS_MESH_RINGS_MAX_RANKS)
        return FALSE;
    for (int a = 0; a < len; a++)
        for (int b = 0; b < len; b++)
            if (a != b
                && cs_topo_route(topo, cs_node_groups_rank(groups, 0, a),
                                 cs_node_groups_rank(groups, 0, b))
                           ->n_links
                       != 1)
                return FALSE;
    return TRUE;
}

/* One ring for every channel: @orders gets n_channels x nranks ranks, position-major, and
 * @lanes each channel's NIC lane (cs_schedule_set_nic_lanes()). */
static void
ring_orders(const CsAlgoArgs *args, int *orders, int *lanes)
{
    const CsTopo *topo = args->topo;
    int P = args->nranks;
    int n_channels = args->n_channels;
    g_autoptr(CsNodeGroups) groups = NULL;

    for (int r = 0; r < P; r++)
        orders[r] = r;
    for (int c = 0; c < n_channels; c++)
        lanes[c] = c;
    if (topo != NULL && P <= cs_topo_n_ranks(topo))
        groups = cs_node_groups_new(topo, P, NULL);
    if (groups == NULL) {
        for (int c = 1; c < n_channels; c++)
            memcpy(orders + (gsize)c * P, orders, P * sizeof(int));
        return;
    }

    if (groups->n_groups == 1 && cs_topo_full_mesh(topo, P)) {
        /* A full mesh of direct links: the channels cycle over rings that use every link
         * equally (mesh_rings.c); past the search's reach, over the strides coprime with P. */
        int n_rings = 0;
        g_autofree int *rings = cs_mesh_rings_new(P, &n_rings);
        if (rings != NULL) {
            for (int c = 0; c < n_channels; c++)
                memcpy(orders + (gsize)c * P, rings + (gsize)(c % n_rings) * P, P * sizeof(int));
            return;
        }
        int n_strides = 0;
        g_autofree int *strides = g_new(int, P);
        for (int s = 1; s < P; s++)
            if (gcd(s, P) == 1)
                strides[n_strides++] = s;
        for (int c = 0; c < n_channels; c++)
            for (int i = 0; i < P; i++)
                orders[(gsize)c * P + i] = (int)(((gint64)i * strides[c % n_strides]) % P);
        return;
    }
    /* Nodes joined by NVLink (an NVL72 rack's trays) into domains that meet over a network:
     * the domains are the ring's nodes, as NCCL's MNNVL takes each NVLink clique for one node,
     * so each channel leaves a rack by its own GPU and NIC. */
    if (groups->n_groups > 1 && !nodes_on_network(topo, groups)) {
        g_autoptr(CsNodeGroups) domains = cs_node_groups_new_nvlink(topo, P, NULL);
        if (domains != NULL && domains->n_groups > 1 && domains->n_groups < groups->n_groups
            && nodes_on_network(topo, domains)) {
            cs_node_groups_free(groups);
            groups = g_steal_pointer(&domains);
        }
    }
    if (groups->n_groups == 1 || !nodes_on_network(topo, groups)) {
        /* One domain: the same adjacency ring on every channel. */
        g_autofree int *local = g_new(int, P);
        adjacency_order(topo, orders, P, local);
        for (int c = 0; c < n_channels; c++)
            for (int i = 0; i < P; i++)
                orders[(gsize)c * P + i] = local[i];
        return;
    }

    if (!cs_node_groups_uniform(groups)) {
        /* Nodes of unequal size: rotate each node's adjacency order by the channel. */
        g_autofree int *local = g_new(int, P);
        for (int g = 0; g < groups->n_groups; g++) {
            int off = groups->offsets[g];
            adjacency_order(topo, groups->ranks + off, cs_node_groups_size(groups, g), local + off);
        }
        for (int c = 0; c < n_channels; c++) {
            for (int g = 0; g < groups->n_groups; g++) {
                int off = groups->offsets[g];
                int len = cs_node_groups_size(groups, g);
                for (int i = 0; i < len; i++)
                    orders[(gsize)c * P + off + i]
                        = cs_node_groups_rank(groups, g, local[off + (c + i) % len]);
            }
        }
        return;
    }

    int len = cs_node_groups_size(groups, 0);
    /* An even number of nodes of 8 fully connected GPUs with a NIC each (8 x MI300X or MI355X):
     * as RCCL, whose model for them (rome_model_81 and 89, src/graph/rome_models.cc, RCCL
     * 2.26 and 2.27; matched by parseA2a8P) lists 8 paths through a node, each from GPU p in
     * by NIC p to another GPU out by its own NIC, which together follow every directed xGMI
     * link once and leave by every NIC once; it lists them 8 times, rotated by one path each
     * time, so channel c takes path (c + c / 8) mod 8. parseGraph() reverses the paths (and
     * swaps their NICs) on every odd host, so that each crossing stays on one rail: a node is
     * entered at the GPU the last one left by. Over every 8 channels each NIC sends one and
     * each link carries one. The paths here are cs_mesh_paths_new()'s, which have the same
     * properties; with an odd node count RCCL takes other paths on its last two nodes
     * (ringTail1, ringTail2), not modelled: those rings take the order below. */
    if (groups->n_groups % 2 == 0 && len == 8 && cs_mesh_rail_nodes(topo, P)) {
        g_autofree int *paths = cs_mesh_paths_new(len);
        for (int c = 0; c < n_channels; c++) {
            const int *path = paths + (gsize)((c + c / len) % len) * len;
            for (int k = 0; k < groups->n_groups; k++)
                for (int i = 0; i < len; i++)
                    orders[(gsize)c * P + k * len + i]
                        = cs_node_groups_rank(groups, k, path[k % 2 ? len - 1 - i : i]);
            lanes[c] = c / len;
        }
        return;
    }

    /* Uniform nodes: start positions with the fewest crossing hops, one per channel in turn. */
    g_autofree int *base = g_new(int, len);
    g_autofree int *starts = g_new(int, len);
    int n_starts = 0;
    int best = G_MAXINT;

    adjacency_order(topo, groups->ranks + groups->offsets[0], len, base);
    for (int s = 0; s < len; s++) {
        int h = network_ring(topo, groups, base, s, orders);
        if (h < best) {
            best = h;
            n_starts = 0;
        }
        if (h == best)
            starts[n_starts++] = s;
    }
    /* Nodes whose GPUs form a full mesh of direct links (xGMI): each channel crosses its node
     * along another of the rings that together load every link equally (mesh_rings.c), as
     * RCCL gives each channel its own intra-node order; one base order would put every
     * channel on the same len - 1 links. */
    int n_rings = 0;
    g_autofree int *rings = group_full_mesh(topo, groups) ? cs_mesh_rings_new(len, &n_rings) : NULL;
    g_autofree int *mesh_base = g_new(int, len);
    g_autofree int *exits = g_new0(int, 3 * (gsize)len); /* channels leaving by (offset, GPU) */
    /* The channels that start at one GPU take its NICs in turn (NCCL orders the NICs of its
     * rings GPU first: ncclTopoPrefNetsGpuFirst, src/graph/search.cc, NCCL 2.30.7). */
    for (int c = 0; c < n_channels; c++) {
        const int *b = base;
        int s = starts[c % n_starts];
        if (rings != NULL) {
            for (int i = 0; i < len; i++)
                mesh_base[i] = rings[(gsize)(c % n_rings) * len + i];
            b = mesh_base;
            /* Where every start costs the same crossing hops, the channel starts where the
             * GPUs leaving each node (and so their NICs) have carried the fewest channels so
             * far: NCCL spreads its channels over the NICs (ncclTopoGetNetDev, search.cc),
             * where one start across every mesh ring made whichever GPU each ring holds there
             * cross (28 channels over 8 NICs put 6 on one). */
            if (n_starts == len)
                s = least_loaded_start(b, len, groups->n_groups, exits);
        }
        network_ring(topo, groups, b, s, orders + (gsize)c * P);
        lanes[c] = c / n_starts;
    }
}

static void
ring_step(const Ring *g, CsStepKind kind, CsBuffer src_buf, gint64 src_elem, CsBuffer dst_buf,
          gint64 dst_elem, gint64 len, int chunk)
{
    if (len <= 0)
        return;
    int recv_peer = cs_step_kind_recvs(kind) ? g->prev : -1;
    int send_peer = cs_step_kind_sends(kind) ? g->next : -1;
    cs_schedule_step(g->sched, g->rank, g->channel, kind, recv_peer, send_peer, src_buf,
                     src_elem * g->ts, dst_buf, dst_elem * g->ts, len * g->ts, chunk);
}

/* ---- All-reduce ---- */

/* Elements of chunk @j of a loop of @rest elements cut into chunks of @cs: full ones, then
 * what is left, then none. */
static gint64
chunk_len(gint64 rest, gint64 cs, int j)
{
    return MAX(0, MIN(cs, rest - (gint64)j * cs));
}

/* Elements chunk @j carries on @g's schedule: chunk_len(), or under a bound (g->shares) the
 * smallest or the largest of chunks j mod T, j mod T + T, ... (lengths never grow with the
 * index: the last or the first of them), so that ranks r and r + T, whose ring positions
 * differ by a multiple of T, move the same bytes. */
static gint64
share_len(const Ring *g, gint64 rest, gint64 cs, int j)
{
    if (g->shares == CS_ALGO_SHARES_EXACT || g->period >= g->nranks)
        return chunk_len(rest, cs, j);
    const int k = j % g->period;
    if (g->shares == CS_ALGO_SHARES_LOW)
        return chunk_len(rest, cs, g->nranks - g->period + k);
    return chunk_len(rest, cs, k);
}

/* One channel's share [@first, @first + @count) of the vector, in loops of P chunks as
 * NCCL's runRing: each loop's chunk size is ceil(remaining / P), at most @chunk elements. A
 * bounded chunk (g->shares) stays inside the channel's share. */
static void
all_reduce_channel(const Ring *g, gint64 first, gint64 count, gint64 chunk)
{
    int P = g->nranks;
    int r = g->pos; /* blocks are numbered by ring position */
    gint64 loop_size = (gint64)P * chunk;
    int loop = 0;
    for (gint64 base = 0; base < count; base += loop_size, loop++) {
        gint64 rest = MIN(loop_size, count - base);
        gint64 cs = (rest + P - 1) / P;
#define LEN(j) (share_len(g, rest, cs, (j)))
#define AT(j) (MIN(first + base + (gint64)(j)*cs, first + count - LEN(j)))
        int j = mod(r - 1, P);
        ring_step(g, CS_STEP_SEND, CS_BUF_INPUT, AT(j), CS_BUF_INPUT, 0, LEN(j), loop);
        for (int s = 2; s < P; s++) {
            j = mod(r - s, P);
            ring_step(g, CS_STEP_RECV_REDUCE_SEND, CS_BUF_INPUT, AT(j), CS_BUF_OUTPUT, 0, LEN(j),
                      loop);
        }
        j = r;
        ring_step(g, CS_STEP_RECV_REDUCE_COPY_SEND, CS_BUF_INPUT, AT(j), CS_BUF_OUTPUT, AT(j),
                  LEN(j), loop);
        for (int s = 1; s < P - 1; s++) {
            j = mod(r - s, P);
            ring_step(g, CS_STEP_RECV_COPY_SEND, CS_BUF_OUTPUT, 0, CS_BUF_OUTPUT, AT(j), LEN(j),
                      loop);
        }
        j = mod(r + 1, P);
        ring_step(g, CS_STEP_RECV, CS_BUF_OUTPUT, 0, CS_BUF_OUTPUT, AT(j), LEN(j), loop);
#undef AT
#undef LEN
    }
}

/* ---- All-gather and reduce-scatter ---- */

/* Channel share [@sub, @sub + @sub_len) of every rank's block of @n elements, in pieces of
 * @chunk: block j's piece travels from rank j around the ring (blocks are numbered by rank,
 * the output's layout). */
static void
all_gather_channel(const Ring *g, gint64 n, gint64 sub, gint64 sub_len, gint64 chunk)
{
    int P = g->nranks;
    int r = g->rank;
    int piece = 0;
    for (gint64 base = 0; base < sub_len; base += chunk, piece++) {
        gint64 len = MIN(chunk, sub_len - base);
        gint64 off = sub + base;
        ring_step(g, CS_STEP_SEND, CS_BUF_INPUT, off, CS_BUF_INPUT, 0, len, piece);
        ring_step(g, CS_STEP_COPY, CS_BUF_INPUT, off, CS_BUF_OUTPUT, r * n + off, len, piece);
        for (int s = 1; s < P - 1; s++) {
            int j = g->order[mod(g->pos - s, P)];
            ring_step(g, CS_STEP_RECV_COPY_SEND, CS_BUF_OUTPUT, 0, CS_BUF_OUTPUT, j * n + off, len,
                      piece);
        }
        int j = g->order[mod(g->pos + 1, P)];
        ring_step(g, CS_STEP_RECV, CS_BUF_OUTPUT, 0, CS_BUF_OUTPUT, j * n + off, len, piece);
    }
}

static void
reduce_scatter_channel(const Ring *g, gint64 n, gint64 sub, gint64 sub_len, gint64 chunk)
{
    int P = g->nranks;
    int r = g->rank;
    int piece = 0;
    for (gint64 base = 0; base < sub_len; base += chunk, piece++) {
        gint64 len = MIN(chunk, sub_len - base);
        gint64 off = sub + base;
        int j = g->order[mod(g->pos - 1, P)];
        ring_step(g, CS_STEP_SEND, CS_BUF_INPUT, j * n + off, CS_BUF_INPUT, 0, len, piece);
        for (int s = 2; s < P; s++) {
            j = g->order[mod(g->pos - s, P)];
            ring_step(g, CS_STEP_RECV_REDUCE_SEND, CS_BUF_INPUT, j * n + off, CS_BUF_OUTPUT, 0, len,
                      piece);
        }
        ring_step(g, CS_STEP_RECV_REDUCE, CS_BUF_INPUT, r * n + off, CS_BUF_OUTPUT, off, len,
                  piece);
    }
}

/* ---- Broadcast and reduce: chains ---- */

/* Each channel's share crosses the chain in chunks, each passed on as it arrives, as NCCL's
 * runRing does (NCCL 2.30.7 src/device/broadcast.h and reduce.h: a loop over chunkCount
 * elements with directRecvCopyDirectSend / recvReduceSend). The chunk is one step of the
 * protocol's buffer, stepSize x BROADCAST_CHUNKSTEPS (= REDUCE_CHUNKSTEPS = 1,
 * src/include/collectives.h), halved for LL and 15/16 of it for LL128 (src/enqueue.cc
 * calcCollChunking, which no ring collective shrinks further): 512 KiB for Simple, 32 KiB for
 * LL, 576,000 B for LL128 (cs_algo_default_chunk()). NCCL computes it on each channel's part
 * (scheduleCollTasksToPlan hands calcCollChunking nChannels = 1), so a part smaller than one
 * chunk, such as 4 MiB over 32 channels, crosses every hop in one piece there too. Inside a
 * Simple step the receiver waits for the whole slice (prims_simple.h: one slice per chunk,
 * SlicePerChunk = BROADCAST_CHUNKSTEPS / BROADCAST_SLICESTEPS = 1). */

/* The chain from the root's ring position @root_pos onwards, piece by piece. */
static void
broadcast_channel(const Ring *g, int root_pos, gint64 first, gint64 count, gint64 chunk)
{
    int v = mod(g->pos - root_pos, g->nranks);
    int piece = 0;
    for (gint64 base = 0; base < count; base += chunk, piece++) {
        gint64 len = MIN(chunk, count - base);
        gint64 off = first + base;
        if (v == 0)
            ring_step(g, CS_STEP_SEND, CS_BUF_INPUT, off, CS_BUF_INPUT, 0, len, piece);
        else if (v < g->nranks - 1)
            ring_step(g, CS_STEP_RECV_COPY_SEND, CS_BUF_OUTPUT, 0, CS_BUF_OUTPUT, off, len, piece);
        else
            ring_step(g, CS_STEP_RECV, CS_BUF_OUTPUT, 0, CS_BUF_OUTPUT, off, len, piece);
    }
    /* The root's own copy comes last: it is off the pipeline's critical path. */
    if (v == 0)
        ring_step(g, CS_STEP_COPY, CS_BUF_INPUT, first, CS_BUF_OUTPUT, first, count, 0);
}

/* The chain from the position after the root's (@root_pos) round to the root, piece by
 * piece. */
static void
reduce_channel(const Ring *g, int root_pos, gint64 first, gint64 count, gint64 chunk)
{
    int v = mod(g->pos - root_pos, g->nranks);
    int piece = 0;
    for (gint64 base = 0; base < count; base += chunk, piece++) {
        gint64 len = MIN(chunk, count - base);
        gint64 off = first + base;
        if (v == 1)
            ring_step(g, CS_STEP_SEND, CS_BUF_INPUT, off, CS_BUF_INPUT, 0, len, piece);
        else if (v > 1)
            ring_step(g, CS_STEP_RECV_REDUCE_SEND, CS_BUF_INPUT, off, CS_BUF_OUTPUT, 0, len, piece);
        else
            ring_step(g, CS_STEP_RECV_REDUCE, CS_BUF_INPUT, off, CS_BUF_OUTPUT, off, len, piece);
    }
}

/* ---- The algorithm ---- */

/* Into how many parts a channel's share is cut, each one chunk further per loop: one per rank
 * for the collectives that move a block per rank around the ring (ring_build), one for the
 * chains of broadcast and reduce, whose share crosses the chain chunk after chunk
 * (broadcast_channel(), reduce_channel()). */
static int
ring_parts(const CsAlgoArgs *args)
{
    return args->op == CS_OP_BROADCAST || args->op == CS_OP_REDUCE ? 1 : args->nranks;
}

static gboolean
ring_supports(const CsTopo *topo, CsOp op, int nranks, const char **why)
{
    (void)topo;
    (void)nranks;
    return cs_algo_supports_ops(
        RING_OPS, op, "NCCL runs scatter, gather and all-to-all as grouped send/recv, not rings",
        why);
}

/* ---- Symmetry ---- */

/* The smallest T >= args->period_min dividing P under whose shift the schedule of @orders
 * repeats (CsAlgo.period), or P. It repeats when every channel's ring maps onto itself,
 * next(r + T) = next(r) + T, and every rank moves the same bytes: a broadcast's or reduce's
 * root is one rank, and an all-reduce channel whose share is no multiple of P cuts its last
 * loop's chunks unequally (all_reduce_channel()), unless args->shares bounds them
 * (share_len()). All-gather and reduce-scatter steps move the same pieces on every rank. */
static int
period_of(const CsAlgoArgs *args, const int *orders)
{
    const int P = args->nranks;
    if (args->period_min <= 0 || P <= 1 || args->op == CS_OP_BROADCAST || args->op == CS_OP_REDUCE)
        return P;
    if (args->op == CS_OP_ALL_REDUCE && args->shares == CS_ALGO_SHARES_EXACT) {
        const CsOpSize size = cs_op_size(args->op, args->size_bytes, args->dtype, P);
        for (int c = 0; c < args->n_channels; c++) {
            gint64 first, len;
            cs_algo_split(size.count, args->n_channels, c, &first, &len);
            if (len % P != 0)
                return P;
        }
    }
    g_autofree int *next = g_new(int, (gsize)args->n_channels *P);
    for (int c = 0; c < args->n_channels; c++) {
        const int *order = orders + (gsize)c * P;
        for (int i = 0; i < P; i++)
            next[(gsize)c * P + order[i]] = order[(i + 1) % P];
    }
    for (int T = MAX(args->period_min, 1); T < P; T++) {
        if (P % T != 0)
            continue;
        gboolean repeats = TRUE;
        for (gsize i = 0; repeats && i < (gsize)args->n_channels * P; i++) {
            const int r = (int)(i % P);
            const gsize c0 = i - r;
            repeats = next[c0 + (r + T) % P] == (next[i] + T) % P;
        }
        if (repeats)
            return T;
    }
    return P;
}

static int
ring_period(const CsAlgoArgs *args)
{
    if (args->period_min <= 0 || args->op == CS_OP_BROADCAST || args->op == CS_OP_REDUCE)
        return args->nranks;
    g_autofree int *orders = g_new(int, (gsize)args->n_channels * args->nranks);
    g_autofree int *lanes = g_new(int, args->n_channels);
    ring_orders(args, orders, lanes);
    return period_of(args, orders);
}

static CsSchedule *
ring_build(const CsAlgoArgs *args, GError **error)
{
    (void)error;
    g_autoptr(CsSchedule) sched = cs_algo_schedule_new(args);
    int P = args->nranks;
    if (cs_algo_one_rank_done(sched))
        return g_steal_pointer(&sched);
    const CsOpSize *size = cs_schedule_size(sched);
    gint64 ts = cs_dtype_size(args->dtype);
    gint64 chunk = cs_algo_chunk_bytes(args) / ts;
    gint64 count = size->count;
    gint64 n = size->block_bytes / ts;

    g_autofree int *orders = g_new(int, (gsize)args->n_channels *P);
    g_autofree int *pos = g_new(int, P);
    g_autofree int *lanes = g_new(int, args->n_channels);
    ring_orders(args, orders, lanes);
    cs_schedule_set_nic_lanes(sched, lanes);
    const int period = period_of(args, orders);
    if (period < P)
        cs_schedule_set_period(sched, period);

    for (int c = 0; c < args->n_channels; c++) {
        const int *order = orders + (gsize)c * P;
        gint64 first;
        gint64 len;
        /* Vector collectives split the vector; block collectives split every block. */
        if (args->op == CS_OP_ALL_GATHER || args->op == CS_OP_REDUCE_SCATTER)
            cs_algo_split(n, args->n_channels, c, &first, &len);
        else
            cs_algo_split(count, args->n_channels, c, &first, &len);
        for (int i = 0; i < P; i++)
            pos[order[i]] = i;
        for (int r = 0; r < period; r++) {
            Ring g = {
                .sched = sched,
                .nranks = P,
                .rank = r,
                .channel = c,
                .pos = pos[r],
                .order = order,
                .prev = order[mod(pos[r] - 1, P)],
                .next = order[mod(pos[r] + 1, P)],
                .ts = ts,
                .period = period,
                .shares = args->shares,
            };
            switch (args->op) {
            case CS_OP_ALL_REDUCE:
                all_reduce_channel(&g, first, len, chunk);
                break;
            case CS_OP_ALL_GATHER:
                all_gather_channel(&g, n, first, len, chunk);
                break;
            case CS_OP_REDUCE_SCATTER:
                reduce_scatter_channel(&g, n, first, len, chunk);
                break;
            case CS_OP_BROADCAST:
                broadcast_channel(&g, pos[args->root], first, len, chunk);
                break;
            case CS_OP_REDUCE:
                reduce_channel(&g, pos[args->root], first, len, chunk);
                break;
            default:
                g_assert_not_reached();
            }
        }
    }
    return g_steal_pointer(&sched);
}

/* Every piece of data travels the whole ring (twice round less two hops for all-reduce), one
 * hop after the other, and no step sends nothing: the chain is one piece's trip, and the bytes
 * are every piece's size times its hops. */
static gboolean
ring_bound(const CsAlgoArgs *args, CsAlgoBound *out)
{
    const gint64 P = args->nranks;
    const gint64 ts = cs_dtype_size(args->dtype);
    const CsOpSize size = cs_op_size(args->op, args->size_bytes, args->dtype, args->nranks);
    gint64 hops = P - 1;
    gint64 bytes = size.count * ts;

    switch (args->op) {
    case CS_OP_ALL_REDUCE:
        hops = 2 * (P - 1);
        break;
    case CS_OP_ALL_GATHER:
    case CS_OP_REDUCE_SCATTER:
        bytes = P * (size.block_bytes / ts * ts);
        break;
    case CS_OP_BROADCAST:
    case CS_OP_REDUCE:
        break;
    default:
        return FALSE;
    }
    out->chain = bytes > 0 ? hops : 0;
    out->bytes_sent = bytes * hops;
    return TRUE;
}

const CsAlgo cs_algo_ring = {
    .name = "ring",
    .summary = "pipelined ring per channel (NCCL Ring): bandwidth-optimal, 2(P-1) steps",
    .reference = "NCCL 2.28 src/device/all_reduce.h runRing (and all_gather.h, "
                 "reduce_scatter.h, broadcast.h, reduce.h); Patarasuk & Yuan, JPDC 2009",
    .ops = RING_OPS,
    .supports = ring_supports,
    .build = ring_build,
    .parts = ring_parts,
    .period = ring_period,
    .bound = ring_bound,
};
