// SPDX-License-Identifier: MIT
/* Routes between ranks and the bandwidth figures derived from the graph: one breadth-first
 * search per source rank, O(P * (V + E)), ties broken by the widest bottleneck and then the
 * lowest device and link index so every run picks the same paths; injection bandwidth per
 * link class; bisection bandwidth as a max-flow (Dinic) between the two halves of the ranks. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "topo/topo-private.h"

/* ---- Adjacency ---- */

/**
 * cs_topo_build_adjacency:
 * Compressed adjacency: the links leaving each device, in link-index order.
 */
void
cs_topo_build_adjacency(CsTopo *topo)
{
    int n_dev = (int)topo->devices->len;
    int n_links = (int)topo->links->len;

    g_free(topo->out_start);
    g_free(topo->out_links);
    topo->out_start = g_new0(int, n_dev + 1);
    topo->out_links = g_new(int, MAX(n_links, 1));
    for (int i = 0; i < n_links; i++)
        topo->out_start[g_array_index(topo->links, CsLink, i).src + 1]++;
    for (int d = 0; d < n_dev; d++)
        topo->out_start[d + 1] += topo->out_start[d];
    g_autofree int *fill = g_memdup2(topo->out_start, sizeof(int) * n_dev);
    for (int i = 0; i < n_links; i++)
        topo->out_links[fill[g_array_index(topo->links, CsLink, i).src]++] = i;
}

/* ---- Routes ---- */

typedef struct {
    int *dist;    /* hops from the source, -1 unreached */
    double *best; /* widest bottleneck over shortest paths */
    int *pred;    /* link into the device on the chosen path */
    int *frontier;
    int *next;
} Bfs;

static int
cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Shortest paths from @src; with @transit_ranks FALSE a path never passes through another
 * rank device (GPUs forward nothing unless no other way exists, NCCL's PATH_NVB case). */
static void
bfs(const CsTopo *topo, const gboolean *is_rank, int src, gboolean transit_ranks, Bfs *b)
{
    int n_dev = (int)topo->devices->len;
    int n_front = 1, n_next;

    for (int d = 0; d < n_dev; d++) {
        b->dist[d] = -1;
        b->best[d] = 0.0;
        b->pred[d] = -1;
    }
    b->dist[src] = 0;
    b->best[src] = INFINITY;
    b->frontier[0] = src;
    for (int depth = 0; n_front > 0; depth++) {
        n_next = 0;
        /* The frontier is in increasing device order, so on equal width the first
         * predecessor met is the lowest device index, and within it the lowest link. */
        for (int f = 0; f < n_front; f++) {
            int u = b->frontier[f];
            if (u != src && is_rank[u] && !transit_ranks)
                continue;
            for (int k = topo->out_start[u]; k < topo->out_start[u + 1]; k++) {
                int li = topo->out_links[k];
                const CsLink *l = &g_array_index(topo->links, CsLink, li);
                int v = l->dst;
                double w = MIN(b->best[u], l->bw_Bps);
                if (b->dist[v] < 0) {
                    b->dist[v] = depth + 1;
                    b->best[v] = w;
                    b->pred[v] = li;
                    b->next[n_next++] = v;
                }
                else if (b->dist[v] == depth + 1 && w > b->best[v]) {
                    b->best[v] = w;
                    b->pred[v] = li;
                }
            }
        }
        /* Sorting keeps the tie-break on device index independent of discovery order. */
        qsort(b->next, n_next, sizeof(int), cmp_int);
        int *t = b->frontier;
        b->frontier = b->next;
        b->next = t;
        n_front = n_next;
    }
}

static void
fill_route(const CsTopo *topo, const Bfs *b, int dst, int *links, CsRoute *route)
{
    int n = b->dist[dst];

    route->n_links = n;
    route->alpha_s = 0.0;
    route->bw_Bps = INFINITY;
    route->link_class = CS_LINK_CLASS_NVLINK;
    for (int v = dst, i = n - 1; i >= 0; i--) {
        int li = b->pred[v];
        const CsLink *l = &g_array_index(topo->links, CsLink, li);
        links[i] = li;
        route->alpha_s += l->alpha_s;
        route->bw_Bps = MIN(route->bw_Bps, l->bw_Bps);
        route->link_class = MAX(route->link_class, cs_link_kind_class(l->kind));
        v = l->src;
    }
}

/**
 * cs_topo_compute_routes:
 * A route between every ordered pair of ranks: fewest hops, then widest bottleneck, then
 * lowest device and link indices. Paths avoid passing through other rank devices; pairs
 * that cannot be joined otherwise may (NVLink forwarding through a GPU). Fails with a
 * message naming both devices when a rank cannot reach another.
 */
gboolean
cs_topo_compute_routes(CsTopo *topo, const CsJsonCtx *ctx, GError **error)
{
    int n_dev = (int)topo->devices->len;
    int P = topo->n_ranks;
    g_autofree gboolean *is_rank = g_new0(gboolean, n_dev);
    Bfs b = {
        .dist = g_new(int, n_dev),
        .best = g_new(double, n_dev),
        .pred = g_new(int, n_dev),
        .frontier = g_new(int, n_dev),
        .next = g_new(int, n_dev),
    };
    Bfs b2 = {
        .dist = g_new(int, n_dev),
        .best = g_new(double, n_dev),
        .pred = g_new(int, n_dev),
        .frontier = g_new(int, n_dev),
        .next = g_new(int, n_dev),
    };
    gsize cap = (gsize)P * P * 2 + 1, used = 0;
    int *links = g_new(int, cap);
    g_autofree gsize *offset = g_new(gsize, (gsize)P * P);
    gboolean ok = TRUE;

    for (int r = 0; r < P; r++)
        is_rank[topo->rank_device[r]] = TRUE;
    g_free(topo->routes);
    topo->routes = g_new0(CsRoute, (gsize)P * P);

    for (int s = 0; s < P && ok; s++) {
        int src = topo->rank_device[s];
        gboolean second_done = FALSE;
        bfs(topo, is_rank, src, FALSE, &b);
        for (int t = 0; t < P && ok; t++) {
            int dst = topo->rank_device[t];
            const Bfs *use = &b;
            CsRoute *route = &topo->routes[(gsize)s * P + t];
            if (b.dist[dst] < 0) {
                if (!second_done) {
                    bfs(topo, is_rank, src, TRUE, &b2);
                    second_done = TRUE;
                }
                use = &b2;
            }
            if (use->dist[dst] < 0) {
                const CsDevice *a = &g_array_index(topo->devices, CsDevice, src);
                const CsDevice *z = &g_array_index(topo->devices, CsDevice, dst);
                cs_json_set_error(ctx, error, "links",
                                  "disconnected: no path of links from %s \"%s\" (rank %d) to "
                                  "%s \"%s\" (rank %d)",
                                  cs_device_kind_name(a->kind), a->name, s,
                                  cs_device_kind_name(z->kind), z->name, t);
                ok = FALSE;
                break;
            }
            int n = use->dist[dst];
            if (used + n > cap) {
                cap = MAX(cap * 2, used + n);
                links = g_renew(int, links, cap);
            }
            offset[(gsize)s * P + t] = used;
            fill_route(topo, use, dst, links + used, route);
            used += n;
            if (n == 0) {
                route->bw_Bps = g_array_index(topo->devices, CsDevice, src).gpu.copy_Bps;
                route->link_class = CS_LINK_CLASS_NVLINK;
            }
        }
    }
    for (Bfs *x = &b; x != NULL; x = x == &b ? &b2 : NULL) {
        g_free(x->dist);
        g_free(x->best);
        g_free(x->pred);
        g_free(x->frontier);
        g_free(x->next);
    }
    if (!ok) {
        g_free(links);
        return FALSE;
    }
    g_free(topo->route_links);
    topo->route_links = g_renew(int, links, MAX(used, 1));
    for (gsize i = 0; i < (gsize)P * P; i++)
        topo->routes[i].links = topo->route_links + offset[i];
    return TRUE;
}

/* ---- Injection bandwidth ---- */

/**
 * cs_topo_compute_injection:
 * For each rank and link class: over the rank's routes, the first link of that class each
 * takes, once per distinct link, at the bottleneck of the route up to it; summed.
 */
void
cs_topo_compute_injection(CsTopo *topo)
{
    int P = topo->n_ranks;
    int n_links = (int)topo->links->len;
    g_autofree double *contrib = g_new0(double, MAX(n_links, 1));
    g_autofree int *touched = g_new(int, MAX(n_links, 1));

    g_free(topo->injection_Bps);
    topo->injection_Bps = g_new0(double, (gsize)P *CS_N_LINK_CLASSES);
    for (int s = 0; s < P; s++) {
        for (int c = 0; c < CS_N_LINK_CLASSES; c++) {
            int n_touched = 0;
            for (int t = 0; t < P; t++) {
                const CsRoute *r = &topo->routes[(gsize)s * P + t];
                double prefix = INFINITY;
                for (int i = 0; i < r->n_links; i++) {
                    const CsLink *l = &g_array_index(topo->links, CsLink, r->links[i]);
                    prefix = MIN(prefix, l->bw_Bps);
                    if ((int)cs_link_kind_class(l->kind) != c)
                        continue;
                    if (contrib[r->links[i]] == 0.0)
                        touched[n_touched++] = r->links[i];
                    contrib[r->links[i]] = MAX(contrib[r->links[i]], prefix);
                    break;
                }
            }
            double sum = 0.0;
            for (int i = 0; i < n_touched; i++) {
                sum += contrib[touched[i]];
                contrib[touched[i]] = 0.0;
            }
            topo->injection_Bps[(gsize)s * CS_N_LINK_CLASSES + c] = sum;
        }
    }
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
