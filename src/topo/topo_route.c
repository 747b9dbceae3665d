// SPDX-License-Identifier: MIT
/* Routes between ranks, computed when first asked and kept, and the bandwidth figures derived
 * from the graph: injection bandwidth per link class, bisection bandwidth as a max-flow (Dinic)
 * between the two halves of the ranks.
 *
 * A route is found in pieces, so that no search ever spans the whole machine:
 *  - Two ranks of one node: a breadth-first search inside the node (fewest hops, widest
 *    bottleneck on ties, then lowest device and link index), never through another rank
 *    device unless no other way exists (NVLink forwarding through a GPU, NCCL's PATH_NVB).
 *  - Ranks of two nodes: source GPU -> the NIC its channel uses -> the fabric -> the NIC the
 *    destination's channel uses -> destination GPU. A node's exits are its devices with a link
 *    out of the node (NICs; GPUs wired straight to an NVLink switch outside the trays). A GPU's
 *    local exits are those at the widest path, then the fewest hops (NCCL's ncclTopoGetLocal),
 *    and channel c uses NCCL's pick among them (ncclTopoGetLocalNetType, src/graph/topo.cc,
 *    NCCL 2.30.7): start at the GPU's index modulo the GPUs sharing those NICs, bit-mirrored
 *    when the NIC count is a power of two, then step by c modulo the NICs per GPU. So a GPU with
 *    four NICs spreads its channels over all four, and two GPUs sharing a NIC both use it.
 *    Through the fabric (devices outside every node): fewest hops, widest, lowest index, from
 *    searches over the switches only, one per first switch, kept.
 *  - Anything those pieces cannot join falls back to one search over the whole graph.
 * Memory grows with the routes asked for, never with the square of the ranks. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "base/union_find.h"
#include "topo/topo-private.h"

/* ---- Adjacency ---- */

/* Compressed adjacency over links in index order: @start[d]..@start[d+1] of @links. */
static void
build_csr(const CsTopo *topo, gboolean incoming, int **start_out, int **links_out)
{
    int n_dev = (int)topo->devices->len;
    int n_links = (int)topo->links->len;
    int *start = g_new0(int, n_dev + 1);
    int *links = g_new(int, MAX(n_links, 1));

    for (int i = 0; i < n_links; i++) {
        const CsLink *l = &g_array_index(topo->links, CsLink, i);
        start[(incoming ? l->dst : l->src) + 1]++;
    }
    for (int d = 0; d < n_dev; d++)
        start[d + 1] += start[d];
    g_autofree int *fill = g_memdup2(start, sizeof(int) * n_dev);
    for (int i = 0; i < n_links; i++) {
        const CsLink *l = &g_array_index(topo->links, CsLink, i);
        links[fill[incoming ? l->dst : l->src]++] = i;
    }
    g_free(*start_out);
    g_free(*links_out);
    *start_out = start;
    *links_out = links;
}

/**
 * cs_topo_build_adjacency:
 * The links leaving and entering each device, in link-index order, and each node's devices.
 */
void
cs_topo_build_adjacency(CsTopo *topo)
{
    int n_dev = (int)topo->devices->len;

    build_csr(topo, FALSE, &topo->out_start, &topo->out_links);
    build_csr(topo, TRUE, &topo->in_start, &topo->in_links);
    g_free(topo->node_start);
    g_free(topo->node_devs);
    topo->node_start = g_new0(int, topo->n_nodes + 2);
    topo->node_devs = g_new(int, MAX(n_dev, 1));
    for (int d = 0; d < n_dev; d++) {
        int node = g_array_index(topo->devices, CsDevice, d).node;
        if (node >= 0 && node < topo->n_nodes)
            topo->node_start[node + 1]++;
    }
    for (int n = 0; n < topo->n_nodes; n++)
        topo->node_start[n + 1] += topo->node_start[n];
    g_autofree int *fill = g_memdup2(topo->node_start, sizeof(int) * (topo->n_nodes + 1));
    for (int d = 0; d < n_dev; d++) {
        int node = g_array_index(topo->devices, CsDevice, d).node;
        if (node >= 0 && node < topo->n_nodes)
            topo->node_devs[fill[node]++] = d;
    }
}

static inline const CsLink *
link_at(const CsTopo *topo, int li)
{
    return &g_array_index(topo->links, CsLink, li);
}

static inline int
node_of(const CsTopo *topo, int d)
{
    return g_array_index(topo->devices, CsDevice, d).node;
}

/* ---- Searches ---- */

/* A local exit plan: the NICs (exits) a rank's channels use. */
typedef struct {
    int n_exits; /* local exits (NCCL's localNetCount) */
    int *exits;  /* device indices, ascending (owned) */
    int per_gpu; /* exits its channels cycle over (NCCL's netsPerGpu) */
    int first;   /* where its channels start in @exits */
    int sharing; /* rank devices that count exits[0] as local (NCCL's localGpuCount) */
} ExitPlan;

/* Shortest paths over the switches outside every node, from one of them. */
typedef struct {
    int root;      /* fabric index */
    guint16 *dist; /* hops, G_MAXUINT16 unreached, per fabric index */
    float *best;   /* bytes/s: widest bottleneck over shortest paths */
    int *pred;     /* link into the device on the chosen path */
} FabricTree;

/* One route as kept: its key, the route and its links. */
typedef struct {
    gint32 key[4]; /* src rank, dst rank, exit device, entry device (-1, -1 inside a node) */
    CsRoute route;
    int links[];
} KeptRoute;

/* Fabric trees kept at once: they are only needed while a route is pieced together. */
#define MAX_TREES 64

struct _CsRouteState {
    GMutex lock;
    GHashTable *kept; /* KeptRoute.key -> KeptRoute (owned) */
    /* Search scratch, one entry per device, valid where stamp == gen. */
    guint32 *stamp;
    guint32 gen;
    int *dist;
    double *best;
    int *pred;
    int *frontier; /* a level's devices, then the next level's: each device once per search */
    int *next;
    GArray *path; /* int links of the route being built */
    gboolean *is_rank;
    int *rank_local;      /* rank -> its index among its node's ranks (NCCL's gpu.dev) */
    int *node_rank_start; /* CSR: the ranks of node n are node_ranks[node_rank_start[n]..] */
    int *node_ranks;
    /* Per rank and kind of way out (EXIT_NVLINK, EXIT_NET), made per node on first use. */
    ExitPlan *plans[2];
    gboolean *node_planned[2];
    int *domain;       /* node -> its NVLink domain: nodes joined by non-network links */
    int *fabric_index; /* device -> index among devices outside every node, -1 */
    int n_fabric;
    int *fabric_start; /* CSR over fabric indices: links from one fabric device to another */
    int *fabric_links;
    FabricTree *trees[MAX_TREES];
    int next_tree;
    double *injection; /* per rank x class, NAN until computed */
    double bisection;  /* NAN until computed */
};

/* ---- NVLink domains ---- */

/* Ways out of a node: its links to other nodes' NVLink (an NVL72 tray's GPUs to the rack's
 * switches), or to the network. */
enum {
    EXIT_NVLINK,
    EXIT_NET,
};

/* Each node's NVLink domain: nodes joined by links other than network ones, directly or
 * through devices outside every node (a rack's NVLink switches), share one; with no such links
 * every node is its own. Returned per node as the smallest node index of its domain. */
static int *
find_domains(const CsTopo *topo, const int *fabric_index, int n_fabric)
{
    int N = topo->n_nodes;
    g_autofree int *parent = g_new(int, N + n_fabric);
    int *domain = g_new(int, MAX(N, 1));

    for (int i = 0; i < N + n_fabric; i++)
        parent[i] = i;
    for (guint i = 0; i < topo->links->len; i++) {
        const CsLink *l = link_at(topo, (int)i);
        if (cs_link_kind_class(l->kind) == CS_LINK_CLASS_NET)
            continue;
        int a = node_of(topo, l->src), b = node_of(topo, l->dst);
        /* Nodes past the ranks' (a subset's unused nodes) join no domain. */
        if (a >= N || b >= N)
            continue;
        a = a >= 0 ? a : N + fabric_index[l->src];
        b = b >= 0 ? b : N + fabric_index[l->dst];
        cs_uf_union(parent, a, b);
    }
    for (int n = 0; n < N; n++)
        domain[n] = cs_uf_find(parent, n);
    return domain;
}

static guint
key_hash(gconstpointer p)
{
    const gint32 *k = p;
    guint h = 2166136261u;
    for (int i = 0; i < 4; i++)
        h = (h ^ (guint)k[i]) * 16777619u;
    return h;
}

static gboolean
key_equal(gconstpointer a, gconstpointer b)
{
    return memcmp(a, b, 4 * sizeof(gint32)) == 0;
}

static void
tree_free(FabricTree *t)
{
    if (t == NULL)
        return;
    g_free(t->dist);
    g_free(t->best);
    g_free(t->pred);
    g_free(t);
}

/**
 * cs_topo_routes_init:
 * The empty route state of a finished topology: nothing is searched until asked.
 */
void
cs_topo_routes_init(CsTopo *topo)
{
    int n_dev = (int)topo->devices->len;
    CsRouteState *rs = g_new0(CsRouteState, 1);

    cs_topo_routes_free(topo);
    g_mutex_init(&rs->lock);
    rs->kept = g_hash_table_new_full(key_hash, key_equal, NULL, g_free);
    rs->stamp = g_new0(guint32, MAX(n_dev, 1));
    rs->dist = g_new(int, MAX(n_dev, 1));
    rs->best = g_new(double, MAX(n_dev, 1));
    rs->pred = g_new(int, MAX(n_dev, 1));
    rs->frontier = g_new(int, MAX(n_dev, 1));
    rs->next = g_new(int, MAX(n_dev, 1));
    rs->path = g_array_new(FALSE, FALSE, sizeof(int));
    rs->is_rank = g_new0(gboolean, MAX(n_dev, 1));
    rs->rank_local = g_new(int, MAX(topo->n_ranks, 1));
    rs->node_rank_start = g_new0(int, topo->n_nodes + 1);
    rs->node_ranks = g_new(int, MAX(topo->n_ranks, 1));
    for (int r = 0; r < topo->n_ranks; r++) {
        rs->is_rank[topo->rank_device[r]] = TRUE;
        rs->rank_local[r] = rs->node_rank_start[topo->rank_node[r] + 1]++;
    }
    for (int n = 0; n < topo->n_nodes; n++)
        rs->node_rank_start[n + 1] += rs->node_rank_start[n];
    for (int r = 0; r < topo->n_ranks; r++)
        rs->node_ranks[rs->node_rank_start[topo->rank_node[r]] + rs->rank_local[r]] = r;
    for (int k = 0; k < 2; k++) {
        rs->plans[k] = g_new0(ExitPlan, MAX(topo->n_ranks, 1));
        rs->node_planned[k] = g_new0(gboolean, MAX(topo->n_nodes, 1));
    }
    rs->fabric_index = g_new(int, MAX(n_dev, 1));
    for (int d = 0; d < n_dev; d++)
        rs->fabric_index[d] = node_of(topo, d) < 0 ? rs->n_fabric++ : -1;
    rs->domain = find_domains(topo, rs->fabric_index, rs->n_fabric);
    rs->fabric_start = g_new0(int, rs->n_fabric + 1);
    for (guint i = 0; i < topo->links->len; i++) {
        const CsLink *l = link_at(topo, (int)i);
        if (rs->fabric_index[l->src] >= 0 && rs->fabric_index[l->dst] >= 0)
            rs->fabric_start[rs->fabric_index[l->src] + 1]++;
    }
    for (int f = 0; f < rs->n_fabric; f++)
        rs->fabric_start[f + 1] += rs->fabric_start[f];
    rs->fabric_links = g_new(int, MAX(rs->fabric_start[rs->n_fabric], 1));
    g_autofree int *fill = g_memdup2(rs->fabric_start, sizeof(int) * (gsize)(rs->n_fabric + 1));
    for (guint i = 0; i < topo->links->len; i++) {
        const CsLink *l = link_at(topo, (int)i);
        if (rs->fabric_index[l->src] >= 0 && rs->fabric_index[l->dst] >= 0)
            rs->fabric_links[fill[rs->fabric_index[l->src]]++] = (int)i;
    }
    rs->injection = g_new(double, (gsize)MAX(topo->n_ranks, 1) * CS_N_LINK_CLASSES);
    for (gsize i = 0; i < (gsize)MAX(topo->n_ranks, 1) * CS_N_LINK_CLASSES; i++)
        rs->injection[i] = NAN;
    rs->bisection = NAN;
    topo->routes = rs;
}

void
cs_topo_routes_free(CsTopo *topo)
{
    CsRouteState *rs = topo->routes;

    if (rs == NULL)
        return;
    g_hash_table_unref(rs->kept);
    g_free(rs->stamp);
    g_free(rs->dist);
    g_free(rs->best);
    g_free(rs->pred);
    g_free(rs->frontier);
    g_free(rs->next);
    g_array_unref(rs->path);
    g_free(rs->is_rank);
    g_free(rs->rank_local);
    g_free(rs->node_rank_start);
    g_free(rs->node_ranks);
    for (int k = 0; k < 2; k++) {
        for (int r = 0; r < topo->n_ranks; r++)
            g_free(rs->plans[k][r].exits);
        g_free(rs->plans[k]);
        g_free(rs->node_planned[k]);
    }
    g_free(rs->domain);
    g_free(rs->fabric_index);
    g_free(rs->fabric_start);
    g_free(rs->fabric_links);
    for (int i = 0; i < MAX_TREES; i++)
        tree_free(rs->trees[i]);
    g_free(rs->injection);
    g_mutex_clear(&rs->lock);
    g_free(rs);
    topo->routes = NULL;
}

static int
cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static inline gboolean
reached(const CsRouteState *rs, int d)
{
    return rs->stamp[d] == rs->gen;
}

/* Shortest paths from @src over devices of @node (every device when @node < 0); with
 * @transit_ranks FALSE a path never passes through another rank device. Each level's
 * frontier is sorted, so on equal width the first predecessor met is the lowest device index,
 * and within it the lowest link. Results in rs->dist/best/pred where reached(); with @target
 * >= 0 the search ends with the level that reaches it (its path is then final: later levels
 * only reach devices farther away), where a route of a star's thousands of ports would
 * otherwise walk them all again. */
static void
search(const CsTopo *topo, CsRouteState *rs, int src, int node, gboolean transit_ranks, int target)
{
    if (++rs->gen == 0) {
        memset(rs->stamp, 0, sizeof(guint32) * topo->devices->len);
        rs->gen = 1;
    }
    rs->stamp[src] = rs->gen;
    rs->dist[src] = 0;
    rs->best[src] = INFINITY;
    rs->pred[src] = -1;
    int *frontier = rs->frontier;
    int *next = rs->next;
    int n_frontier = 1;
    frontier[0] = src;
    for (int depth = 0; n_frontier > 0; depth++) {
        int n_next = 0;
        for (int f = 0; f < n_frontier; f++) {
            int u = frontier[f];
            if (u != src && rs->is_rank[u] && !transit_ranks)
                continue;
            for (int k = topo->out_start[u]; k < topo->out_start[u + 1]; k++) {
                int li = topo->out_links[k];
                const CsLink *l = link_at(topo, li);
                int v = l->dst;
                if (node >= 0 && node_of(topo, v) != node)
                    continue;
                double w = MIN(rs->best[u], l->bw_Bps);
                if (!reached(rs, v)) {
                    rs->stamp[v] = rs->gen;
                    rs->dist[v] = depth + 1;
                    rs->best[v] = w;
                    rs->pred[v] = li;
                    next[n_next++] = v;
                }
                else if (rs->dist[v] == depth + 1 && w > rs->best[v]) {
                    rs->best[v] = w;
                    rs->pred[v] = li;
                }
            }
        }
        if (target >= 0 && reached(rs, target))
            break;
        /* Often found in order already (a switch's ports): then no sort. */
        gboolean sorted = TRUE;
        for (int i = 1; i < n_next && sorted; i++)
            sorted = next[i - 1] < next[i];
        if (!sorted)
            qsort(next, (gsize)n_next, sizeof(int), cmp_int);
        int *t = frontier;
        frontier = next;
        next = t;
        n_frontier = n_next;
    }
}

/* Appends the links of the last search's path to @dst to rs->path. */
static void
append_path(const CsTopo *topo, CsRouteState *rs, int dst)
{
    guint at = rs->path->len;
    int n = rs->dist[dst];

    g_array_set_size(rs->path, at + n);
    for (int v = dst, i = n - 1; i >= 0; i--) {
        int li = rs->pred[v];
        g_array_index(rs->path, int, at + i) = li;
        v = link_at(topo, li)->src;
    }
}

/* The path from @src to @dst inside @node (through other ranks only when it must) appended
 * to rs->path; FALSE when the node has none. */
static gboolean
node_path(const CsTopo *topo, CsRouteState *rs, int src, int dst, int node)
{
    if (src == dst)
        return TRUE;
    for (int transit = 0; transit < 2; transit++) {
        search(topo, rs, src, node, transit, dst);
        if (reached(rs, dst)) {
            append_path(topo, rs, dst);
            return TRUE;
        }
    }
    return FALSE;
}

/* ---- Exits: the NICs a rank's channels use ---- */

/* The widest link of @kind from @d out of its node, 0 if none. */
static double
exit_bw(const CsTopo *topo, int d, int kind)
{
    int node = node_of(topo, d);
    double bw = 0.0;

    for (int k = topo->out_start[d]; k < topo->out_start[d + 1]; k++) {
        const CsLink *l = link_at(topo, topo->out_links[k]);
        gboolean net = cs_link_kind_class(l->kind) == CS_LINK_CLASS_NET;
        if (node_of(topo, l->dst) != node && net == (kind == EXIT_NET))
            bw = MAX(bw, l->bw_Bps);
    }
    return bw;
}

/* NCCL's mirrorBits (src/graph/topo.h): @val's bits reversed within log2(@pow2) bits. */
static int
mirror_bits(int val, int pow2)
{
    int mirror = 0;
    for (int b = 1, mb = pow2 >> 1; b < pow2; b <<= 1, mb >>= 1)
        if (val & b)
            mirror |= mb;
    return mirror;
}

static gboolean
same_bw(double a, double b)
{
    return fabs(a - b) <= 1e-9 * MAX(fabs(a), fabs(b));
}

/* Plans every rank of @node: its local exits (widest path, then fewest hops: NCCL's
 * ncclTopoGetLocal) and where its channels start among them (ncclTopoGetLocalNetType). */
static void
plan_node(const CsTopo *topo, CsRouteState *rs, int node, int kind)
{
    const int *devs = &topo->node_devs[topo->node_start[node]];
    int n_devs = topo->node_start[node + 1] - topo->node_start[node];
    g_autoptr(GArray) exits = g_array_new(FALSE, FALSE, sizeof(int));
    g_autoptr(GArray) exit_w = g_array_new(FALSE, FALSE, sizeof(double));

    rs->node_planned[kind][node] = TRUE;
    for (int i = 0; i < n_devs; i++) {
        double w = exit_bw(topo, devs[i], kind);
        if (w > 0) {
            g_array_append_val(exits, devs[i]);
            g_array_append_val(exit_w, w);
        }
    }
    if (exits->len == 0)
        return;
    const int *ranks = &rs->node_ranks[rs->node_rank_start[node]];
    const int n_ranks = rs->node_rank_start[node + 1] - rs->node_rank_start[node];
    for (int i = 0; i < n_ranks; i++) {
        int r = ranks[i];
        ExitPlan *p = &rs->plans[kind][r];
        double best_w = 0.0;
        int best_hops = G_MAXINT;
        search(topo, rs, topo->rank_device[r], node, FALSE, -1);
        p->exits = g_new(int, exits->len);
        for (guint x = 0; x < exits->len; x++) {
            int d = g_array_index(exits, int, x);
            if (!reached(rs, d))
                continue;
            double w = MIN(rs->best[d], g_array_index(exit_w, double, x));
            int hops = rs->dist[d];
            if (w > best_w && !same_bw(w, best_w)) {
                best_w = w;
                best_hops = hops;
                p->n_exits = 0;
            }
            else if (!same_bw(w, best_w) || hops > best_hops)
                continue;
            else if (hops < best_hops) {
                best_hops = hops;
                p->n_exits = 0;
            }
            p->exits[p->n_exits++] = d;
        }
    }
    for (int i = 0; i < n_ranks; i++) {
        ExitPlan *p = &rs->plans[kind][ranks[i]];
        if (p->n_exits == 0)
            continue;
        p->sharing = 0;
        for (int j = 0; j < n_ranks; j++) {
            const ExitPlan *q = &rs->plans[kind][ranks[j]];
            for (int x = 0; x < q->n_exits; x++)
                if (q->exits[x] == p->exits[0]) {
                    p->sharing++;
                    break;
                }
        }
        p->per_gpu = (p->n_exits + p->sharing - 1) / p->sharing;
        int start = rs->rank_local[ranks[i]] % p->sharing;
        if ((p->n_exits & (p->n_exits - 1)) == 0)
            start = mirror_bits(start, p->n_exits);
        p->first = start;
    }
}

static const ExitPlan *
exit_plan(const CsTopo *topo, CsRouteState *rs, int rank, int kind)
{
    int node = topo->rank_node[rank];
    if (!rs->node_planned[kind][node])
        plan_node(topo, rs, node, kind);
    return &rs->plans[kind][rank];
}

/* The exit of @kind @rank's channel @channel leaves its node by, -1 if it has none. */
static int
rank_exit(const CsTopo *topo, CsRouteState *rs, int rank, int channel, int kind)
{
    const ExitPlan *p = exit_plan(topo, rs, rank, kind);
    if (p->n_exits == 0)
        return -1;
    return p->exits[(p->first + channel % p->per_gpu) % p->n_exits];
}

/* ---- The fabric ---- */

static FabricTree *
fabric_tree(const CsTopo *topo, CsRouteState *rs, int root)
{
    int fi = rs->fabric_index[root];
    for (int i = 0; i < MAX_TREES; i++)
        if (rs->trees[i] != NULL && rs->trees[i]->root == fi)
            return rs->trees[i];

    FabricTree *t = g_new0(FabricTree, 1);
    int F = rs->n_fabric;
    t->root = fi;
    t->dist = g_new(guint16, F);
    t->best = g_new(float, F);
    t->pred = g_new(int, F);
    for (int i = 0; i < F; i++)
        t->dist[i] = G_MAXUINT16;
    t->dist[fi] = 0;
    t->best[fi] = INFINITY;
    t->pred[fi] = -1;
    g_autoptr(GArray) front = g_array_new(FALSE, FALSE, sizeof(int));
    g_autoptr(GArray) next = g_array_new(FALSE, FALSE, sizeof(int));
    g_array_append_val(front, root);
    for (int depth = 0; front->len > 0 && depth < G_MAXUINT16 - 1; depth++) {
        g_array_set_size(next, 0);
        for (guint f = 0; f < front->len; f++) {
            int u = g_array_index(front, int, f);
            int fu = rs->fabric_index[u];
            for (int k = rs->fabric_start[fu]; k < rs->fabric_start[fu + 1]; k++) {
                int li = rs->fabric_links[k];
                const CsLink *l = link_at(topo, li);
                int v = rs->fabric_index[l->dst];
                float w = MIN(t->best[rs->fabric_index[u]], (float)l->bw_Bps);
                if (t->dist[v] == G_MAXUINT16) {
                    t->dist[v] = (guint16)(depth + 1);
                    t->best[v] = w;
                    t->pred[v] = li;
                    g_array_append_val(next, l->dst);
                }
                else if (t->dist[v] == depth + 1 && w > t->best[v]) {
                    t->best[v] = w;
                    t->pred[v] = li;
                }
            }
        }
        if (next->len > 1)
            qsort(next->data, next->len, sizeof(int), cmp_int);
        GArray *tmp = front;
        front = next;
        next = tmp;
    }
    tree_free(rs->trees[rs->next_tree]);
    rs->trees[rs->next_tree] = t;
    rs->next_tree = (rs->next_tree + 1) % MAX_TREES;
    return t;
}

/* The path from exit @x of one node to entry @e of another over devices outside every node
 * (or a direct link), appended to rs->path: fewest hops, then widest, then the lowest links
 * out of @x and into @e. FALSE when there is none. */
static gboolean
fabric_path(const CsTopo *topo, CsRouteState *rs, int x, int e)
{
    int best_hops = G_MAXINT;
    double best_w = 0.0;
    int best_out = -1, best_in = -1;

    for (int k = topo->out_start[x]; k < topo->out_start[x + 1]; k++) {
        int lo = topo->out_links[k];
        const CsLink *out = link_at(topo, lo);
        if (out->dst == e) {
            if (1 < best_hops || (1 == best_hops && out->bw_Bps > best_w)) {
                best_hops = 1;
                best_w = out->bw_Bps;
                best_out = lo;
                best_in = -1;
            }
            continue;
        }
        if (rs->fabric_index[out->dst] < 0)
            continue;
        const FabricTree *t = fabric_tree(topo, rs, out->dst);
        for (int j = topo->in_start[e]; j < topo->in_start[e + 1]; j++) {
            int lin = topo->in_links[j];
            const CsLink *in = link_at(topo, lin);
            int v = rs->fabric_index[in->src];
            if (v < 0 || t->dist[v] == G_MAXUINT16)
                continue;
            int hops = 2 + t->dist[v];
            double w = MIN(MIN(out->bw_Bps, (double)t->best[v]), in->bw_Bps);
            if (hops < best_hops || (hops == best_hops && w > best_w && !same_bw(w, best_w))) {
                best_hops = hops;
                best_w = w;
                best_out = lo;
                best_in = lin;
            }
        }
    }
    if (best_out < 0)
        return FALSE;
    g_array_append_val(rs->path, best_out);
    if (best_in < 0)
        return TRUE;
    const FabricTree *t = fabric_tree(topo, rs, link_at(topo, best_out)->dst);
    guint at = rs->path->len;
    int v = link_at(topo, best_in)->src;
    int n = t->dist[rs->fabric_index[v]];
    g_array_set_size(rs->path, at + n);
    for (int i = n - 1; i >= 0; i--) {
        int li = t->pred[rs->fabric_index[v]];
        g_array_index(rs->path, int, at + i) = li;
        v = link_at(topo, li)->src;
    }
    g_array_append_val(rs->path, best_in);
    return TRUE;
}

/* ---- Routes ---- */

/* rs->path as a route of its own, kept under @key. */
static const CsRoute *
keep_route(const CsTopo *topo, CsRouteState *rs, const gint32 key[4], int src_dev)
{
    int n = (int)rs->path->len;
    KeptRoute *k = g_malloc(sizeof(KeptRoute) + sizeof(int) * (gsize)MAX(n, 1));
    CsRoute *route = &k->route;

    memcpy(k->key, key, sizeof k->key);
    if (n > 0)
        memcpy(k->links, rs->path->data, sizeof(int) * (gsize)n);
    *route = (CsRoute){ .n_links = n, .links = k->links, .bw_Bps = INFINITY };
    for (int i = 0; i < n; i++) {
        const CsLink *l = link_at(topo, k->links[i]);
        route->alpha_s += l->alpha_s;
        route->bw_Bps = MIN(route->bw_Bps, l->bw_Bps);
        route->link_class = MAX(route->link_class, cs_link_kind_class(l->kind));
    }
    if (n == 0) {
        route->bw_Bps = g_array_index(topo->devices, CsDevice, src_dev).gpu.copy_Bps;
        route->link_class = CS_LINK_CLASS_NVLINK;
    }
    g_hash_table_insert(rs->kept, k->key, k);
    return route;
}

/* A route found by one search over the whole graph: the fallback. */
static void
whole_graph_path(const CsTopo *topo, CsRouteState *rs, int src, int dst)
{
    g_array_set_size(rs->path, 0);
    for (int transit = 0; transit < 2; transit++) {
        search(topo, rs, src, -1, transit, dst);
        if (reached(rs, dst)) {
            append_path(topo, rs, dst);
            return;
        }
    }
    /* cs_topo_check_connected() made sure every rank reaches every other. */
    g_assert_not_reached();
}

/**
 * cs_topo_route_channel:
 * The route channel @channel's connection from @src_rank to @dst_rank takes (transfer none,
 * valid as long as @topo): inside a node the same for every channel; across nodes through the
 * NICs NCCL gives that channel at either end. Thread-safe.
 */
const CsRoute *
cs_topo_route_channel(const CsTopo *topo, int src_rank, int dst_rank, int channel)
{
    g_return_val_if_fail(src_rank >= 0 && src_rank < topo->n_ranks, NULL);
    g_return_val_if_fail(dst_rank >= 0 && dst_rank < topo->n_ranks, NULL);
    g_return_val_if_fail(channel >= 0, NULL);
    CsRouteState *rs = topo->routes;
    const int src = topo->rank_device[src_rank];
    const int dst = topo->rank_device[dst_rank];
    const int node = topo->rank_node[src_rank];
    gint32 key[4] = { src_rank, dst_rank, -1, -1 };

    g_mutex_lock(&rs->lock);
    /* Nodes of one NVLink domain meet over it; others over the network. */
    const int kind
        = rs->domain[node] == rs->domain[topo->rank_node[dst_rank]] ? EXIT_NVLINK : EXIT_NET;
    if (node != topo->rank_node[dst_rank]) {
        key[2] = rank_exit(topo, rs, src_rank, channel, kind);
        key[3] = rank_exit(topo, rs, dst_rank, channel, kind);
    }
    const KeptRoute *k = g_hash_table_lookup(rs->kept, key);
    if (k != NULL) {
        g_mutex_unlock(&rs->lock);
        return &k->route;
    }
    g_array_set_size(rs->path, 0);
    gboolean ok = FALSE;
    int x = key[2], e = key[3];
    if (node == topo->rank_node[dst_rank]) {
        ok = node_path(topo, rs, src, dst, node);
        /* GPUs of one tray wired only to the rack's switches (an NVL72's trays) meet there. */
        if (!ok) {
            x = rank_exit(topo, rs, src_rank, 0, EXIT_NVLINK);
            e = rank_exit(topo, rs, dst_rank, 0, EXIT_NVLINK);
        }
    }
    if (!ok)
        ok = x >= 0 && e >= 0 && node_path(topo, rs, src, x, node) && fabric_path(topo, rs, x, e)
             && node_path(topo, rs, e, dst, topo->rank_node[dst_rank]);
    if (!ok)
        whole_graph_path(topo, rs, src, dst);
    const CsRoute *route = keep_route(topo, rs, key, src);
    g_mutex_unlock(&rs->lock);
    return route;
}

/**
 * cs_topo_node_route_costs:
 * The hops and bottleneck bandwidth of cs_topo_route() from @src_rank to each of the @n
 * @dst_ranks, from one search and without keeping a route: for a ring's order over a node of
 * thousands of GPUs, which would otherwise find and keep every pair's route. Only routes that
 * stay inside @src_rank's node; FALSE (nothing written) when one of @dst_ranks is elsewhere or
 * has no path inside it.
 */
gboolean
cs_topo_node_route_costs(const CsTopo *topo, int src_rank, const int *dst_ranks, int n, int *hops,
                         double *bw_Bps)
{
    g_return_val_if_fail(src_rank >= 0 && src_rank < topo->n_ranks, FALSE);
    CsRouteState *rs = topo->routes;
    const int node = topo->rank_node[src_rank];
    const int src = topo->rank_device[src_rank];
    gboolean ok = TRUE;

    for (int i = 0; i < n && ok; i++)
        ok = dst_ranks[i] >= 0 && dst_ranks[i] < topo->n_ranks
             && topo->rank_node[dst_ranks[i]] == node;
    if (!ok || node < 0)
        return FALSE;
    g_mutex_lock(&rs->lock);
    /* As node_path(): through other ranks only where a destination needs it. */
    for (int transit = 0; transit < 2 && ok; transit++) {
        search(topo, rs, src, node, transit, -1);
        gboolean missing = FALSE;
        for (int i = 0; i < n; i++) {
            const int d = topo->rank_device[dst_ranks[i]];
            if (transit == 1 && hops[i] >= 0)
                continue;
            if (d == src) {
                hops[i] = 0;
                bw_Bps[i] = INFINITY;
                continue;
            }
            if (reached(rs, d)) {
                hops[i] = rs->dist[d];
                bw_Bps[i] = rs->best[d];
            }
            else {
                hops[i] = -1;
                missing = TRUE;
            }
        }
        if (!missing)
            break;
        ok = transit == 0;
    }
    g_mutex_unlock(&rs->lock);
    return ok;
}

/**
 * cs_topo_route:
 * The route from @src_rank to @dst_rank on channel 0 (transfer none). A rank's route to
 * itself has no links, alpha 0 and the GPU's copy bandwidth.
 */
const CsRoute *
cs_topo_route(const CsTopo *topo, int src_rank, int dst_rank)
{
    return cs_topo_route_channel(topo, src_rank, dst_rank, 0);
}

/**
 * cs_topo_rank_nics:
 * What the network looks like from @rank: its local NICs, how many its channels use and how
 * many GPUs share them. All zero on a rank whose node has no way out.
 */
CsRankNics
cs_topo_rank_nics(const CsTopo *topo, int rank)
{
    g_return_val_if_fail(rank >= 0 && rank < topo->n_ranks, (CsRankNics){ 0 });
    CsRouteState *rs = topo->routes;

    g_mutex_lock(&rs->lock);
    const ExitPlan *p = exit_plan(topo, rs, rank, EXIT_NET);
    if (p->n_exits == 0)
        p = exit_plan(topo, rs, rank, EXIT_NVLINK);
    CsRankNics nics
        = { .n_local = p->n_exits, .used = MIN(p->per_gpu, p->n_exits), .sharing = p->sharing };
    for (int c = 0; c < nics.used && c < CS_TOPO_MAX_RANK_NICS; c++)
        nics.device[c] = p->exits[(p->first + c) % p->n_exits];
    g_mutex_unlock(&rs->lock);
    return nics;
}

/* ---- Connectivity ---- */

/* Devices reachable from @src following links forwards, or backwards with @reverse. */
static gboolean *
reachable(const CsTopo *topo, int src, gboolean reverse)
{
    int n_dev = (int)topo->devices->len;
    gboolean *seen = g_new0(gboolean, n_dev);
    g_autofree int *queue = g_new(int, n_dev);
    const int *start = reverse ? topo->in_start : topo->out_start;
    const int *links = reverse ? topo->in_links : topo->out_links;
    int head = 0, tail = 0;

    seen[src] = TRUE;
    queue[tail++] = src;
    while (head < tail) {
        int u = queue[head++];
        for (int k = start[u]; k < start[u + 1]; k++) {
            const CsLink *l = link_at(topo, links[k]);
            int v = reverse ? l->src : l->dst;
            if (!seen[v]) {
                seen[v] = TRUE;
                queue[tail++] = v;
            }
        }
    }
    return seen;
}

/**
 * cs_topo_check_connected:
 * Every rank reaches every other (through any device, ranks included): rank 0 reaches each
 * and each reaches rank 0. Fails with a message naming both devices.
 */
gboolean
cs_topo_check_connected(const CsTopo *topo, const CsJsonCtx *ctx, GError **error)
{
    int src = topo->rank_device[0];

    for (int reverse = 0; reverse < 2; reverse++) {
        g_autofree gboolean *seen = reachable(topo, src, reverse);
        for (int t = 1; t < topo->n_ranks; t++) {
            if (seen[topo->rank_device[t]])
                continue;
            int a_rank = reverse ? t : 0;
            int z_rank = reverse ? 0 : t;
            const CsDevice *a = &g_array_index(topo->devices, CsDevice, topo->rank_device[a_rank]);
            const CsDevice *z = &g_array_index(topo->devices, CsDevice, topo->rank_device[z_rank]);
            cs_json_set_error(ctx, error, "links",
                              "disconnected: no path of links from %s \"%s\" (rank %d) to "
                              "%s \"%s\" (rank %d)",
                              cs_device_kind_name(a->kind), a->name, a_rank,
                              cs_device_kind_name(z->kind), z->name, z_rank);
            return FALSE;
        }
    }
    return TRUE;
}

/* ---- Injection bandwidth ---- */

/* A rank over the network from @rank: of the first node in another NVLink domain; else (one
 * domain of several nodes) of the next node; -1 on one node. */
static int
other_node_rank(const CsTopo *topo, int rank)
{
    const CsRouteState *rs = topo->routes;
    const int node = topo->rank_node[rank];
    int other = -1;
    for (int r = 0; r < topo->n_ranks && other < 0; r++)
        if (rs->domain[topo->rank_node[r]] != rs->domain[node])
            other = r;
    for (int r = 0; r < topo->n_ranks && other < 0; r++)
        if (topo->rank_node[r] == (node + 1) % topo->n_nodes && topo->rank_node[r] != node)
            other = r;
    return other;
}

/**
 * cs_topo_injection_bw:
 * How fast @rank can push data into links of @link_class: over @rank's routes to the other
 * ranks of its node and, on every NIC its channels use, to a rank of the next node, the first
 * link of that class each route takes, counted once per distinct link, each at the bottleneck
 * of the route up to and including it (a NIC's port divided among the GPUs that count that NIC
 * as local, NCCL's localGpuCount: they all send through it); summed. 0 when no such route crosses
 * that class (a single box has no NET injection even if it has NICs). Computed on first use.
 */
double
cs_topo_injection_bw(const CsTopo *topo, int rank, CsLinkClass link_class)
{
    g_return_val_if_fail(rank >= 0 && rank < topo->n_ranks, 0.0);
    g_return_val_if_fail(link_class < CS_N_LINK_CLASSES, 0.0);
    CsRouteState *rs = topo->routes;
    double *slot = &rs->injection[(gsize)rank * CS_N_LINK_CLASSES];

    g_mutex_lock(&rs->lock);
    gboolean done = !isnan(slot[0]);
    /* Read under the lock: another thread may be storing the same figures (TSAN). */
    const double known = done ? slot[link_class] : 0.0;
    int used = done ? 0 : MAX(1, exit_plan(topo, rs, rank, EXIT_NET)->per_gpu);
    int sharing = done ? 1 : MAX(1, exit_plan(topo, rs, rank, EXIT_NET)->sharing);
    g_mutex_unlock(&rs->lock);
    if (done)
        return known;

    const int node = topo->rank_node[rank];
    const int other = other_node_rank(topo, rank);
    g_autoptr(GPtrArray) routes = g_ptr_array_new();
    for (int t = 0; t < topo->n_ranks; t++)
        if (t != rank && topo->rank_node[t] == node)
            g_ptr_array_add(routes, (gpointer)cs_topo_route(topo, rank, t));
    for (int c = 0; other >= 0 && c < used; c++)
        g_ptr_array_add(routes, (gpointer)cs_topo_route_channel(topo, rank, other, c));

    /* Each distinct first link of a class, at the widest prefix any route reaches it with;
     * summed in the order met, so the figure never depends on a hash table's order. */
    g_autoptr(GArray) firsts = g_array_new(FALSE, FALSE, sizeof(int));
    g_autoptr(GArray) widths = g_array_new(FALSE, FALSE, sizeof(double));
    double sums[CS_N_LINK_CLASSES] = { 0 };
    for (int c = 0; c < CS_N_LINK_CLASSES; c++) {
        g_array_set_size(firsts, 0);
        g_array_set_size(widths, 0);
        for (guint i = 0; i < routes->len; i++) {
            const CsRoute *r = g_ptr_array_index(routes, i);
            double prefix = INFINITY;
            for (int k = 0; k < r->n_links; k++) {
                const CsLink *l = link_at(topo, r->links[k]);
                const gboolean first = (int)cs_link_kind_class(l->kind) == c;
                /* A NIC's port is shared by the GPUs that count the NIC as local. */
                prefix = MIN(prefix,
                             first && c == CS_LINK_CLASS_NET ? l->bw_Bps / sharing : l->bw_Bps);
                if (!first)
                    continue;
                guint j = 0;
                while (j < firsts->len && g_array_index(firsts, int, j) != r->links[k])
                    j++;
                if (j == firsts->len) {
                    double zero = 0.0;
                    g_array_append_val(firsts, r->links[k]);
                    g_array_append_val(widths, zero);
                }
                g_array_index(widths, double, j) = MAX(g_array_index(widths, double, j), prefix);
                break;
            }
        }
        for (guint j = 0; j < widths->len; j++)
            sums[c] += g_array_index(widths, double, j);
    }
    g_mutex_lock(&rs->lock);
    memcpy(slot, sums, sizeof sums);
    g_mutex_unlock(&rs->lock);
    return sums[link_class];
}

/* ---- What binds the way out ---- */

/**
 * cs_topo_net_path:
 * See CsNetPath. Channel c of the used NICs crosses the links of cs_topo_route_channel() to a
 * rank of another node up to and including the first network link (the NIC's port).
 */
gboolean
cs_topo_net_path(const CsTopo *topo, int rank, CsNetPath *out)
{
    g_return_val_if_fail(rank >= 0 && rank < topo->n_ranks, FALSE);
    CsRouteState *rs = topo->routes;
    memset(out, 0, sizeof *out);
    out->front_link = -1;
    const int other = other_node_rank(topo, rank);
    if (other < 0)
        return FALSE;
    g_mutex_lock(&rs->lock);
    const ExitPlan *p = exit_plan(topo, rs, rank, EXIT_NET);
    const int used = p->n_exits == 0 ? 0 : MIN(p->per_gpu, p->n_exits);
    const int sharing = MAX(1, p->sharing);
    g_mutex_unlock(&rs->lock);
    if (used == 0)
        return FALSE;
    out->used = used;
    out->sharing = sharing;
    /* Links before the ports, with the channels crossing each; ports counted once each. */
    g_autoptr(GArray) front = g_array_new(FALSE, FALSE, sizeof(int));
    g_autoptr(GArray) crossed = g_array_new(FALSE, FALSE, sizeof(int));
    g_autoptr(GArray) ports = g_array_new(FALSE, FALSE, sizeof(int));
    for (int c = 0; c < used; c++) {
        const CsRoute *r = cs_topo_route_channel(topo, rank, other, c);
        int k = 0;
        while (k < r->n_links
               && cs_link_kind_class(link_at(topo, r->links[k])->kind) != CS_LINK_CLASS_NET)
            k++;
        if (k == r->n_links)
            return FALSE;
        const int port = r->links[k];
        if (c == 0) {
            out->port_link = port;
            out->nic = link_at(topo, port)->src;
            out->port_Bps = link_at(topo, port)->bw_Bps;
        }
        guint j = 0;
        while (j < ports->len && g_array_index(ports, int, j) != port)
            j++;
        if (j == ports->len) {
            g_array_append_val(ports, port);
            out->ports_Bps += link_at(topo, port)->bw_Bps / sharing;
        }
        for (int i = 0; i < k; i++) {
            guint f = 0;
            while (f < front->len && g_array_index(front, int, f) != r->links[i])
                f++;
            if (f == front->len) {
                const int one = 0;
                g_array_append_val(front, r->links[i]);
                g_array_append_val(crossed, one);
            }
            g_array_index(crossed, int, f)++;
        }
    }
    out->rate_Bps = out->ports_Bps;
    out->front_Bps = INFINITY;
    for (guint f = 0; f < front->len; f++) {
        const int li = g_array_index(front, int, f);
        const double through = link_at(topo, li)->bw_Bps * used / g_array_index(crossed, int, f);
        if (through < out->front_Bps) {
            out->front_Bps = through;
            out->front_link = li;
        }
    }
    if (out->front_Bps >= out->ports_Bps)
        out->front_link = -1;
    out->rate_Bps = MIN(out->ports_Bps, out->front_Bps);
    if (out->front_link < 0)
        out->front_Bps = 0;
    return TRUE;
}

/* Each device's tier (topo.h): breadth first from the nodes over network links. */
int *
cs_topo_device_tiers(const CsTopo *topo, int *n_tiers)
{
    const int n_dev = (int)topo->devices->len;
    int *tier = g_new(int, MAX(n_dev, 1));
    g_autoptr(GArray) queue = g_array_new(FALSE, FALSE, sizeof(int));
    for (int d = 0; d < n_dev; d++) {
        tier[d] = node_of(topo, d) >= 0 ? 0 : -1;
        if (tier[d] == 0)
            g_array_append_val(queue, d);
    }
    /* Breadth first from the nodes' devices over network links, both ways, into the fabric
     * (an NVL72 rack's NVLink switches are outside every node but are no tier of it). */
    int top = 0;
    for (guint h = 0; h < queue->len; h++) {
        const int u = g_array_index(queue, int, h);
        for (int dir = 0; dir < 2; dir++) {
            const int *start = dir ? topo->in_start : topo->out_start;
            const int *links = dir ? topo->in_links : topo->out_links;
            for (int k = start[u]; k < start[u + 1]; k++) {
                const CsLink *l = link_at(topo, links[k]);
                const int v = dir ? l->src : l->dst;
                if (tier[v] >= 0 || cs_link_kind_class(l->kind) != CS_LINK_CLASS_NET)
                    continue;
                tier[v] = tier[u] + 1;
                top = MAX(top, tier[v]);
                g_array_append_val(queue, v);
            }
        }
    }
    if (n_tiers != NULL)
        *n_tiers = top;
    return tier;
}

/**
 * cs_topo_fabric_tiers:
 * See CsFabricTier. A link between two switches of one tier counts as neither down nor up.
 */
GArray *
cs_topo_fabric_tiers(const CsTopo *topo)
{
    const int n_dev = (int)topo->devices->len;
    GArray *tiers = g_array_new(FALSE, TRUE, sizeof(CsFabricTier));
    int top = 0;
    g_autofree int *tier = cs_topo_device_tiers(topo, &top);
    for (int t = 1; t <= top; t++) {
        CsFabricTier ft = { .tier = t, .example = -1, .ratio_min = INFINITY, .ratio_max = 0 };
        for (int d = 0; d < n_dev; d++) {
            if (tier[d] != t)
                continue;
            double down = 0, up = 0;
            for (int k = topo->in_start[d]; k < topo->in_start[d + 1]; k++) {
                const CsLink *l = link_at(topo, topo->in_links[k]);
                if (tier[l->src] >= 0 && tier[l->src] < t
                    && cs_link_kind_class(l->kind) == CS_LINK_CLASS_NET)
                    down += l->bw_Bps;
            }
            for (int k = topo->out_start[d]; k < topo->out_start[d + 1]; k++) {
                const CsLink *l = link_at(topo, topo->out_links[k]);
                if (tier[l->dst] > t && cs_link_kind_class(l->kind) == CS_LINK_CLASS_NET)
                    up += l->bw_Bps;
            }
            if (ft.n_switches++ == 0) {
                ft.example = d;
                ft.down_Bps = down;
                ft.up_Bps = up;
            }
            if (up > 0) {
                ft.n_uplinked++;
                ft.ratio_min = MIN(ft.ratio_min, down / up);
                ft.ratio_max = MAX(ft.ratio_max, down / up);
            }
        }
        if (ft.n_uplinked == 0)
            ft.ratio_min = 0;
        g_array_append_val(tiers, ft);
    }
    return tiers;
}

/**
 * cs_topo_routes_bisection:
 * cs_topo_compute_bisection(), computed on first use and kept.
 */
double
cs_topo_routes_bisection(const CsTopo *topo)
{
    CsRouteState *rs = topo->routes;

    g_mutex_lock(&rs->lock);
    if (isnan(rs->bisection))
        rs->bisection = cs_topo_compute_bisection(topo);
    double v = rs->bisection;
    g_mutex_unlock(&rs->lock);
    return v;
}

/* ---- Bisection bandwidth (Dinic max-flow) ---- */

typedef struct {
    int to;
    int next;   /* next edge out of the same vertex, -1 at the end */
    double cap; /* residual capacity, bytes/s */
} Edge;

typedef struct {
    GArray *edges; /* Edge; edge e and e ^ 1 are each other's reverse */
    int *head;     /* first edge out of each vertex */
    int *level;
    int *iter;
    int *queue;
    int n;
} Flow;

static void
flow_add(Flow *f, int u, int v, double cap)
{
    Edge fwd = { .to = v, .next = f->head[u], .cap = cap };
    g_array_append_val(f->edges, fwd);
    f->head[u] = (int)f->edges->len - 1;
    Edge rev = { .to = u, .next = f->head[v], .cap = 0.0 };
    g_array_append_val(f->edges, rev);
    f->head[v] = (int)f->edges->len - 1;
}

static gboolean
flow_levels(Flow *f, int s, int t, double eps)
{
    int qh = 0, qt = 0;

    for (int i = 0; i < f->n; i++)
        f->level[i] = -1;
    f->level[s] = 0;
    f->queue[qt++] = s;
    while (qh < qt) {
        int u = f->queue[qh++];
        for (int e = f->head[u]; e >= 0; e = g_array_index(f->edges, Edge, e).next) {
            const Edge *ed = &g_array_index(f->edges, Edge, e);
            if (ed->cap > eps && f->level[ed->to] < 0) {
                f->level[ed->to] = f->level[u] + 1;
                f->queue[qt++] = ed->to;
            }
        }
    }
    return f->level[t] >= 0;
}

/* One augmenting path in the level graph, iteratively (P = 1,024 makes deep recursion
 * unwise); returns the flow pushed. */
static double
flow_augment(Flow *f, int s, int t, double eps)
{
    g_autofree int *path = g_new(int, f->n);
    int depth = 0;
    int u = s;

    while (TRUE) {
        if (u == t) {
            double push = INFINITY;
            for (int i = 0; i < depth; i++)
                push = MIN(push, g_array_index(f->edges, Edge, path[i]).cap);
            for (int i = 0; i < depth; i++) {
                g_array_index(f->edges, Edge, path[i]).cap -= push;
                g_array_index(f->edges, Edge, path[i] ^ 1).cap += push;
            }
            return push;
        }
        gboolean advanced = FALSE;
        for (; f->iter[u] >= 0; f->iter[u] = g_array_index(f->edges, Edge, f->iter[u]).next) {
            const Edge *ed = &g_array_index(f->edges, Edge, f->iter[u]);
            if (ed->cap > eps && f->level[ed->to] == f->level[u] + 1) {
                path[depth++] = f->iter[u];
                u = ed->to;
                advanced = TRUE;
                break;
            }
        }
        if (advanced)
            continue;
        /* Dead end: never come back to @u in this phase. */
        f->level[u] = -1;
        if (depth == 0)
            return 0.0;
        depth--;
        u = g_array_index(f->edges, Edge, path[depth] ^ 1).to;
        f->iter[u] = g_array_index(f->edges, Edge, f->iter[u]).next;
    }
}

/**
 * cs_topo_compute_bisection:
 * Max-flow from the first half of the ranks to the second over every directed link at its
 * usable bandwidth (every device may forward); 0 for fewer than two ranks.
 */
double
cs_topo_compute_bisection(const CsTopo *topo)
{
    int P = topo->n_ranks;
    int n_dev = (int)topo->devices->len;

    if (P < 2)
        return 0.0;
    Flow f = { .n = n_dev + 2 };
    int s = n_dev, t = n_dev + 1;
    double total_cap = 0.0;

    f.edges = g_array_new(FALSE, FALSE, sizeof(Edge));
    f.head = g_new(int, f.n);
    f.level = g_new(int, f.n);
    f.iter = g_new(int, f.n);
    f.queue = g_new(int, f.n);
    for (int i = 0; i < f.n; i++)
        f.head[i] = -1;
    for (guint i = 0; i < topo->links->len; i++) {
        const CsLink *l = &g_array_index(topo->links, CsLink, i);
        flow_add(&f, l->src, l->dst, l->bw_Bps);
        total_cap += l->bw_Bps;
    }
    /* The terminals' edges carry more than all links together: never the cut. */
    double big = 2.0 * total_cap + 1.0;
    for (int r = 0; r < P; r++) {
        if (r < P / 2)
            flow_add(&f, s, topo->rank_device[r], big);
        else
            flow_add(&f, topo->rank_device[r], t, big);
    }
    double eps = total_cap * 1e-12;
    double flow = 0.0;
    while (flow_levels(&f, s, t, eps)) {
        memcpy(f.iter, f.head, sizeof(int) * f.n);
        double pushed;
        while ((pushed = flow_augment(&f, s, t, eps)) > 0.0)
            flow += pushed;
    }
    g_array_unref(f.edges);
    g_free(f.head);
    g_free(f.level);
    g_free(f.iter);
    g_free(f.queue);
    return flow;
}
