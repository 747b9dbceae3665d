// SPDX-License-Identifier: MIT
/* Whether a machine repeats under a shift of its ranks, proven on the routes a schedule uses.
 *
 * A schedule that repeats under r -> r + T (mod P) (cs_schedule_set_period()) runs on a machine
 * that repeats likewise exactly as if every rank ran: each event of rank r + kT happens when
 * the matching event of rank r does. The engine then replays ranks 0 .. T-1 only, and charges
 * each link's traffic to one link of its orbit, which in the whole replay carries the images
 * of the same flows at the same times. What has to hold, and is checked here route by route
 * rather than assumed from how a template was written:
 *
 * - every connection (a, b) of the replayed ranks and each of its images (a + kT, b + kT)
 *   take routes of the same length whose links agree one by one in kind, lanes, bandwidth
 *   and latency, between devices of the same kind and abilities (NVLS, SHARP);
 * - those correspondences define one permutation of the links: a link is never mapped to two
 *   different links by one shift, and never to itself by a shift other than the identity
 *   (a link all images cross, such as one uplink shared by every node, carries N copies of a
 *   flow in the whole replay and one here: such a machine is refused);
 * - no route crosses two links of one orbit (it would be charged twice on one link here);
 * - every link carries the images of the replayed flows under one shift only, so that flows
 *   that meet on a link meet in the same order as in the whole replay;
 * - every rank's GPU equals the GPU of each of its images.
 *
 * The orbits are a union-find over links whose edges carry the shift between the two ends:
 * L = lambda^off(root), checked modulo the number of copies N = P / T. */
#include "topo/topo-private.h"

typedef struct {
    int *parent;
    int *off; /* this link = lambda^off(parent) */
    int n_copies;
} Orbits;

static int
find(Orbits *o, int link, int *off)
{
    int total = 0;
    int root = link;
    while (o->parent[root] != root) {
        total = (total + o->off[root]) % o->n_copies;
        root = o->parent[root];
    }
    /* Path compression: each link on the way now points at the root. */
    int acc = total;
    for (int l = link; o->parent[l] != l;) {
        int next = o->parent[l];
        int step = o->off[l];
        o->parent[l] = root;
        o->off[l] = acc;
        acc = ((acc - step) % o->n_copies + o->n_copies) % o->n_copies;
        l = next;
    }
    *off = total;
    return root;
}

/* Records @b = lambda^@k(@a); FALSE when that contradicts what is known. */
static gboolean
unite(Orbits *o, int a, int b, int k)
{
    int oa, ob;
    int ra = find(o, a, &oa);
    int rb = find(o, b, &ob);
    int want = (k + oa) % o->n_copies;
    if (ra == rb)
        return ob == want;
    o->parent[rb] = ra;
    o->off[rb] = ((want - ob) % o->n_copies + o->n_copies) % o->n_copies;
    return TRUE;
}

static gboolean
same_device(const CsTopo *topo, int a, int b)
{
    const CsDevice *x = cs_topo_device(topo, a);
    const CsDevice *y = cs_topo_device(topo, b);
    return x->kind == y->kind && x->multicast_reduction == y->multicast_reduction
           && x->sharp == y->sharp;
}

static gboolean
same_link(const CsTopo *topo, int a, int b)
{
    const CsLink *x = cs_topo_link(topo, a);
    const CsLink *y = cs_topo_link(topo, b);
    return x->kind == y->kind && x->count == y->count && x->bw_Bps == y->bw_Bps
           && x->raw_bw_Bps == y->raw_bw_Bps && x->alpha_s == y->alpha_s
           && same_device(topo, x->src, y->src) && same_device(topo, x->dst, y->dst);
}

static gboolean
same_gpu(const CsGpuSpec *x, const CsGpuSpec *y)
{
    return x->launch_s == y->launch_s && x->step_overhead_s == y->step_overhead_s
           && x->reduce_Bps == y->reduce_Bps && x->copy_Bps == y->copy_Bps
           && x->default_protos == y->default_protos;
}

/**
 * cs_topo_shift_orbits:
 * @pairs: @n_pairs connections as (source rank < @period, destination rank, NIC lane) triples,
 *   each direction a schedule uses (a slot's return crosses the reverse route: list it too),
 *   the first @n_charged of them those whose links carry traffic (the rest only latency)
 * @why: (out) on FALSE, what breaks the symmetry (transfer full)
 *
 * Proves that the first @nranks ranks of @topo repeat under the shift by @period ranks on
 * the routes of @pairs (see the top of this file) and returns, for every link, the link of
 * its orbit the engine charges instead (itself for the links no route of @pairs crosses).
 * Returns: (transfer full) (nullable): cs_topo_n_links() entries, or NULL with @why set.
 */
int *
cs_topo_shift_orbits(const CsTopo *topo, int nranks, int period, const int *pairs, int n_pairs,
                     int n_charged, char **why)
{
    g_return_val_if_fail(topo != NULL && why != NULL, NULL);
    g_return_val_if_fail(period >= 1 && nranks % period == 0 && nranks <= topo->n_ranks, NULL);
    const int n_links = cs_topo_n_links(topo);
    const int n_copies = nranks / period;
    Orbits o = { .parent = g_new(int, MAX(n_links, 1)),
                 .off = g_new0(int, MAX(n_links, 1)),
                 .n_copies = n_copies };
    int *rep = NULL;

    *why = NULL;
    for (int l = 0; l < n_links; l++)
        o.parent[l] = l;
    for (int r = 0; r < nranks && *why == NULL; r++) {
        int image = r % period;
        if (!same_gpu(cs_topo_rank_gpu(topo, r), cs_topo_rank_gpu(topo, image))
            || !same_device(topo, topo->rank_device[r], topo->rank_device[image]))
            *why = g_strdup_printf("rank %d's GPU differs from rank %d's", r, image);
    }
    for (int i = 0; i < n_pairs && *why == NULL; i++) {
        const int src = pairs[3 * i], dst = pairs[3 * i + 1], lane = pairs[3 * i + 2];
        const CsRoute base = *cs_topo_route_channel(topo, src, dst, lane);
        for (int k = 1; k < n_copies && *why == NULL; k++) {
            const int s = src + k * period, d = (dst + k * period) % nranks;
            const CsRoute *image = cs_topo_route_channel(topo, s, d, lane);
            if (image->n_links != base.n_links || image->link_class != base.link_class) {
                *why = g_strdup_printf("rank %d -> %d takes %d links, rank %d -> %d %d", src, dst,
                                       base.n_links, s, d, image->n_links);
                break;
            }
            for (int h = 0; h < base.n_links; h++) {
                if (!same_link(topo, base.links[h], image->links[h])
                    || !unite(&o, base.links[h], image->links[h], k)) {
                    *why = g_strdup_printf(
                        "link %d of rank %d -> %d (%s -> %s) has no twin on rank %d -> %d", h + 1,
                        src, dst,
                        cs_topo_device(topo, cs_topo_link(topo, base.links[h])->src)->name,
                        cs_topo_device(topo, cs_topo_link(topo, base.links[h])->dst)->name, s, d);
                    break;
                }
            }
        }
    }
    if (*why == NULL) {
        rep = g_new(int, MAX(n_links, 1));
        /* A shift is one map of the links: two links never share a place in one orbit
         * (lambda^k(A) = lambda^k(B) with A != B would make it two-to-one). */
        g_autoptr(GHashTable) places = g_hash_table_new(g_int64_hash, g_int64_equal);
        g_autofree gint64 *keys = g_new(gint64, MAX(n_links, 1));
        g_autofree int *offs = g_new(int, MAX(n_links, 1));
        g_autofree guint8 *shared = g_new0(guint8, MAX(n_links, 1));
        for (int l = 0; l < n_links; l++) {
            rep[l] = find(&o, l, &offs[l]);
            if (rep[l] != l)
                shared[l] = shared[rep[l]] = 1;
        }
        for (int l = 0; l < n_links && *why == NULL; l++) {
            if (!shared[l])
                continue;
            keys[l] = (gint64)rep[l] * n_copies + offs[l];
            if (!g_hash_table_add(places, &keys[l]))
                *why = g_strdup_printf("two links meet in one image (%s -> %s and another)",
                                       cs_topo_device(topo, cs_topo_link(topo, l)->src)->name,
                                       cs_topo_device(topo, cs_topo_link(topo, l)->dst)->name);
        }
        /* Each link carries the images of the replayed flows under one shift only: then the
         * flows that meet on it in the whole replay are the images of the flows that meet on
         * its orbit's link here, in the same order. Flows of several shifts on one link (an
         * all-to-all's into one GPU) would meet here in another order, which a network model
         * that serves simultaneous flows in turn may answer differently. And a route that
         * crosses two links of one orbit would meet itself on the one link charged for both. */
        g_autofree int *shift_of = g_new(int, MAX(n_links, 1));
        for (int l = 0; l < n_links; l++)
            shift_of[l] = -1;
        for (int i = 0; i < n_pairs && *why == NULL; i++) {
            const CsRoute *r
                = cs_topo_route_channel(topo, pairs[3 * i], pairs[3 * i + 1], pairs[3 * i + 2]);
            for (int h = 0; h < r->n_links && *why == NULL; h++) {
                const int l = r->links[h];
                for (int k = h + 1; k < r->n_links && *why == NULL; k++)
                    if (rep[r->links[k]] == rep[l])
                        *why = g_strdup_printf("rank %d -> %d crosses two images of one link",
                                               pairs[3 * i], pairs[3 * i + 1]);
                if (i >= n_charged || *why != NULL)
                    continue;
                if (shift_of[rep[l]] < 0)
                    shift_of[rep[l]] = offs[l];
                else if (shift_of[rep[l]] != offs[l])
                    *why = g_strdup_printf("%s -> %s carries flows of two shifts of the "
                                           "period",
                                           cs_topo_device(topo, cs_topo_link(topo, l)->src)->name,
                                           cs_topo_device(topo, cs_topo_link(topo, l)->dst)->name);
            }
        }
        if (*why != NULL)
            g_clear_pointer(&rep, g_free);
    }
    g_free(o.parent);
    g_free(o.off);
    return rep;
}
