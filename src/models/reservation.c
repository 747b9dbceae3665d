// SPDX-License-Identifier: MIT
/* The reservation network model: every directed lane keeps the time it is busy until, and a
 * transfer reserves a lane of every link of its route, first come first served. Fast and
 * deterministic; contention shows up as flows queueing one after another.
 *
 * References: LogGOPSim (Hoefler, Schneider, Lumsdaine, HPDC 2010), its `nexto` / `nextgs`
 * per-resource next-free times; htsim's serialization queue in front of a pipe (Raiciu et al.,
 * SIGCOMM 2011).
 *
 * Lanes: an NVLink-class link of count bonded links (18 NVLinks, say) is count resources of
 * bw / count each, and a transfer (one channel's) takes the lane that frees first: a channel
 * drives one NVLink's worth at a time, and channels side by side fill the bond. PCIe and
 * network links stay one resource (their lanes stripe every transfer).
 * Cut-through, link by link: the bytes start crossing link i once they have started on link
 * i-1 and its lane is free; the lane is then busy for bytes / its bandwidth, and the bytes
 * have all crossed link i once that time has passed and link i-1 has passed them all. On an
 * idle route this is bytes / the slowest lane; then the last byte propagates (the engine adds
 * the latency). A flow with a cap of its own lasts at least bytes / cap. A multicast's copies
 * out of the switch (CsRoute.n_branches) each take a lane of their own link from when the
 * chain into the switch has started, side by side. */
#include "models/netmodel.h"

struct _CsNetState {
    int n_links;
    int *first_lane;    /* per link: index of its first lane */
    int *n_lanes;       /* per link */
    double *lane_Bps;   /* bytes/s: per link, one lane's bandwidth */
    CsTime *busy_until; /* ps: per lane, when its last reservation ends */
};

/* Gives the root (earliest-free lane) of a lane min-heap of @n the time @t and sifts it. */
static inline void
lane_heap_replace_root(CsTime *h, int n, CsTime t)
{
    int pos = 0;

    for (;;) {
        int child = 2 * pos + 1;
        if (child >= n)
            break;
        if (child + 1 < n && h[child + 1] < h[child])
            child++;
        if (h[child] >= t)
            break;
        h[pos] = h[child];
        pos = child;
    }
    h[pos] = t;
}

static CsNetState *
reservation_create(const CsTopo *topo, int max_flows, int max_hops)
{
    CsNetState *s = g_new0(CsNetState, 1);
    int n_lanes = 0;

    (void)max_flows;
    (void)max_hops;
    s->n_links = cs_topo_n_links(topo);
    s->first_lane = g_new(int, MAX(s->n_links, 1));
    s->n_lanes = g_new(int, MAX(s->n_links, 1));
    s->lane_Bps = g_new(double, MAX(s->n_links, 1));
    for (int i = 0; i < s->n_links; i++) {
        const CsLink *l = cs_topo_link(topo, i);
        s->first_lane[i] = n_lanes;
        /* NVLink-class bonds are separate links a channel uses one at a time; PCIe lanes and
         * network ports stripe every transfer over all of them. */
        gboolean bonded = cs_link_kind_class(l->kind) == CS_LINK_CLASS_NVLINK;
        s->n_lanes[i] = bonded ? MAX(l->count, 1) : 1;
        s->lane_Bps[i] = l->bw_Bps / s->n_lanes[i];
        n_lanes += s->n_lanes[i];
    }
    s->busy_until = g_new0(CsTime, MAX(n_lanes, 1));
    return s;
}

static void
reservation_destroy(CsNetState *s)
{
    g_free(s->first_lane);
    g_free(s->n_lanes);
    g_free(s->lane_Bps);
    g_free(s->busy_until);
    g_free(s);
}

static CsTime
reservation_start(CsNetState *s, CsTime now, const CsRoute *route, double wire_bytes,
                  double cap_Bps, gint32 flow, CsTime *first_out)
{
    CsTime begin = now; /* when the bytes start crossing the current link */
    CsTime end = now;   /* when the links so far have passed every byte */
    int n_chain = route->n_links - route->n_branches;

    (void)flow;
    for (int i = 0; i < n_chain; i++) {
        int l = route->links[i];
        /* The link's lanes form a min-heap of busy-until times: the root frees first. */
        CsTime *lanes = &s->busy_until[s->first_lane[l]];
        CsTime ser = cs_net_serialization_ps(wire_bytes, s->lane_Bps[l]);
        begin = MAX(begin, lanes[0]);
        end = MAX(end, begin + ser);
        /* A lane is held for its own serialization of the bytes, not for the whole flow: a
         * fast link behind a slow one stays free for others meanwhile. */
        lane_heap_replace_root(lanes, s->n_lanes[l], begin + ser);
    }
    if (route->n_branches > 0) {
        /* A multicast: each copy out of the switch starts once the chain has started and its
         * own lane is free, whatever the other copies wait for. */
        CsTime fork = begin;
        for (int i = n_chain; i < route->n_links; i++) {
            int l = route->links[i];
            CsTime *lanes = &s->busy_until[s->first_lane[l]];
            CsTime ser = cs_net_serialization_ps(wire_bytes, s->lane_Bps[l]);
            CsTime b = MAX(fork, lanes[0]);
            begin = MAX(begin, b);
            end = MAX(end, b + ser);
            lane_heap_replace_root(lanes, s->n_lanes[l], b + ser);
        }
    }
    *first_out = begin;
    if (cap_Bps > 0)
        end = MAX(end, begin + cs_net_serialization_ps(wire_bytes, cap_Bps));
    return end;
}

const CsNetModel cs_net_model_reservation = {
    .name = "reservation",
    .summary = "each lane busy until its last reservation ends; flows on a lane serialize",
    .reference = "LogGOPSim next-free times (Hoefler et al., HPDC 2010); htsim queues",
    .create = reservation_create,
    .destroy = reservation_destroy,
    .start = reservation_start,
    .next_event_time = NULL,
    .advance = NULL,
};
