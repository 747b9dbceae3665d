// SPDX-License-Identifier: MIT
/* The reservation network model: every directed lane keeps the time it is busy until, and a
 * transfer reserves a lane of every link of its route, first come first served. Fast and
 * deterministic; contention shows up as flows queueing one after another.
 *
 * References: LogGOPSim (Hoefler, Schneider, Lumsdaine, HPDC 2010), its `nexto` / `nextgs`
 * per-resource next-free times; htsim's serialization queue in front of a pipe (Raiciu et al.,
 * SIGCOMM 2011); processor sharing among flows that arrive together (Kleinrock, Queueing
 * Systems vol. 2, 1976).
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
 * chain into the switch has started, side by side.
 *
 * Flows that start at the same instant and meet on a one-lane link (PCIe, a network port,
 * host memory) share it instead of queueing, as the port interleaves the packets of
 * concurrent transfers: flow i's bytes have crossed it after sum_j min(ser_j, ser_i) (ser:
 * each one's serialization there alone), and it is busy for the sum. First come first served
 * would let the first of two identical channels run a whole transfer ahead of the second and
 * keep it ahead; channels that alternate between two links (a GPU writing to host memory,
 * then reading from it) then fall out of step and use both at once, which the port's fair
 * arbitration does not let them do. An NVLink bond's lanes stay first come first served:
 * there a lane is a channel's share of the bond, not a port that interleaves. So start()
 * only notes a flow, and settle(), once the instant has no event left, reserves them all in
 * the order they started. */
#include "models/netmodel.h"

/* A flow noted at the current instant. */
typedef struct {
    gint32 flow;
    double wire_bytes;
    double cap_Bps;
    CsRoute route; /* its links stay the engine's until the flow ends */
    CsTime *first_out;
} Pending;

struct _CsNetState {
    int n_links;
    gint32 *hop_base;   /* per flow: where its hops start in ser_of and next_sharer */
    int *first_lane;    /* per link: index of its first lane */
    int *n_lanes;       /* per link */
    double *lane_Bps;   /* bytes/s: per link, one lane's bandwidth */
    CsTime *busy_until; /* ps: per lane, when its last reservation ends; a link's lanes are
                         * a ring sorted from its lane_head, which frees first */
    int *lane_head;     /* per link: its earliest-free lane, 0 .. n_lanes - 1 (0 for one lane) */

    /* The instant being collected, and how its flows meet on one-lane links. */
    CsTime now;
    int n_pending;
    Pending *pending;  /* [max_flows] */
    CsTime *end_of;    /* [max_flows]: when pending flow p's last byte has left */
    CsTime *ser_of;    /* [hop_base[f] + h]: pending flow f's serialization at hop h */
    int *next_sharer;  /* [same]: the next hop of the instant on the same link, or -1 */
    int *n_sharing;    /* per link: hops of the instant on it (reset through touched) */
    int *first_sharer; /* per link: its first hop of the instant (hop_base[f] + h) */
    CsTime *ser_sum;   /* per link: their serializations, summed, least and greatest */
    CsTime *ser_min;
    CsTime *ser_max;
    CsTime *busy_after; /* per link: busy until, once the instant's flows have crossed */
    int *touched;
    int n_touched;

    /* watch(): where each link's reservations go, NULL when nobody asked. */
    CsNetLoadFunc load;
    gpointer load_data;
    CsTime *begin_min; /* per link: the earliest start of the instant's sharers (with load) */
};

/* Gives the earliest-free of @n lanes (a ring sorted from *@head) the time @t and keeps the
 * ring sorted: its slot becomes the ring's last, and @t moves back past the later times.
 * Reservations mostly end in the order they were made, so @t is mostly the latest and stays
 * put: one comparison where a binary heap sifted down to a leaf. */
static inline void
lanes_replace_first(CsTime *h, int n, int *head, CsTime t)
{
    int slot = *head;

    if (n == 1) {
        h[0] = t;
        return;
    }
    *head = slot + 1 == n ? 0 : slot + 1;
    for (int k = 1; k < n; k++) {
        int prev = slot == 0 ? n - 1 : slot - 1;
        if (h[prev] <= t)
            break;
        h[slot] = h[prev];
        slot = prev;
    }
    h[slot] = t;
}

static CsNetState *
reservation_create(const CsTopo *topo, int max_flows, const int *flow_hops, gboolean whole_links)
{
    CsNetState *s = g_new0(CsNetState, 1);
    int n_lanes = 0;
    int n_links;

    s->n_links = cs_topo_n_links(topo);
    n_links = MAX(s->n_links, 1);
    s->first_lane = g_new(int, n_links);
    s->n_lanes = g_new(int, n_links);
    s->lane_Bps = g_new(double, n_links);
    for (int i = 0; i < s->n_links; i++) {
        const CsLink *l = cs_topo_link(topo, i);
        s->first_lane[i] = n_lanes;
        /* NVLink-class bonds are separate links a channel uses one at a time; PCIe lanes and
         * network ports stripe every transfer over all of them. */
        gboolean bonded = !whole_links && cs_link_kind_class(l->kind) == CS_LINK_CLASS_NVLINK;
        s->n_lanes[i] = bonded ? MAX(l->count, 1) : 1;
        s->lane_Bps[i] = l->bw_Bps / s->n_lanes[i];
        n_lanes += s->n_lanes[i];
    }
    s->hop_base = cs_net_hop_bases(flow_hops, max_flows);
    const gsize n_hops = MAX((gsize)s->hop_base[max_flows], 1);
    max_flows = MAX(max_flows, 1);
    s->busy_until = g_new0(CsTime, MAX(n_lanes, 1));
    s->lane_head = g_new0(int, n_links);
    s->pending = g_new(Pending, max_flows);
    s->end_of = g_new(CsTime, max_flows);
    s->ser_of = g_new(CsTime, n_hops);
    s->next_sharer = g_new(int, n_hops);
    s->n_sharing = g_new0(int, n_links);
    s->first_sharer = g_new(int, n_links);
    s->ser_sum = g_new0(CsTime, n_links);
    s->ser_min = g_new(CsTime, n_links);
    s->ser_max = g_new(CsTime, n_links);
    s->busy_after = g_new(CsTime, n_links);
    s->touched = g_new(int, n_links);
    s->begin_min = g_new(CsTime, n_links);
    return s;
}

static void
reservation_destroy(CsNetState *s)
{
    g_free(s->hop_base);
    g_free(s->first_lane);
    g_free(s->n_lanes);
    g_free(s->lane_Bps);
    g_free(s->busy_until);
    g_free(s->lane_head);
    g_free(s->pending);
    g_free(s->end_of);
    g_free(s->ser_of);
    g_free(s->next_sharer);
    g_free(s->n_sharing);
    g_free(s->first_sharer);
    g_free(s->ser_sum);
    g_free(s->ser_min);
    g_free(s->ser_max);
    g_free(s->busy_after);
    g_free(s->touched);
    g_free(s->begin_min);
    g_free(s);
}

static CsTime
reservation_start(CsNetState *s, CsTime now, const CsRoute *route, double wire_bytes,
                  double cap_Bps, gint32 flow, CsTime *first_out)
{
    g_assert(s->n_pending == 0 || now == s->now);
    g_assert(route->n_links <= s->hop_base[flow + 1] - s->hop_base[flow]);
    s->now = now;
    s->pending[s->n_pending++] = (Pending){
        .flow = flow,
        .wire_bytes = wire_bytes,
        .cap_Bps = cap_Bps,
        .route = *route,
        .first_out = first_out,
    };
    return CS_TIME_NEVER;
}

/* Notes which one-lane links the instant's flows meet on, and what each puts there. */
static void
count_sharers(CsNetState *s)
{
    s->n_touched = 0;
    for (int p = 0; p < s->n_pending; p++) {
        const Pending *f = &s->pending[p];
        for (int h = 0; h < f->route.n_links; h++) {
            int l = f->route.links[h];
            gsize at = (gsize)s->hop_base[f->flow] + (gsize)h;
            if (s->n_lanes[l] > 1)
                continue;
            CsTime ser = cs_net_serialization_ps(f->wire_bytes, s->lane_Bps[l]);
            s->ser_of[at] = ser;
            if (s->n_sharing[l]++ == 0) {
                s->touched[s->n_touched++] = l;
                s->first_sharer[l] = -1;
                s->ser_sum[l] = 0;
                s->ser_min[l] = ser;
                s->ser_max[l] = ser;
                s->busy_after[l] = s->busy_until[s->first_lane[l]];
                s->begin_min[l] = CS_TIME_NEVER;
            }
            s->next_sharer[at] = s->first_sharer[l];
            s->first_sharer[l] = (int)at;
            s->ser_sum[l] += ser;
            s->ser_min[l] = MIN(s->ser_min[l], ser);
            s->ser_max[l] = MAX(s->ser_max[l], ser);
        }
    }
}

/* Pending flow @p's bytes reach hop @h's link (l) no earlier than @begin: sets *@begin to when
 * they start crossing it, and returns when they have all crossed it. Alone there, the lane
 * that frees first takes them, first come first served. Shared with other flows of the
 * instant (a one-lane link), they start when it frees and cross beside the others: done
 * after sum_j min(ser_j, ser) of the link's time, which is busy for all of theirs. */
static CsTime
cross(CsNetState *s, int p, int h, int l, CsTime *begin)
{
    const Pending *f = &s->pending[p];
    CsTime *lanes = &s->busy_until[s->first_lane[l]];

    if (s->n_lanes[l] > 1 || s->n_sharing[l] <= 1) {
        CsTime ser = cs_net_serialization_ps(f->wire_bytes, s->lane_Bps[l]);
        *begin = MAX(*begin, lanes[s->lane_head[l]]);
        /* A lane is held for its own serialization of the bytes, not for the whole flow: a
         * fast link behind a slow one stays free for others meanwhile. */
        lanes_replace_first(lanes, s->n_lanes[l], &s->lane_head[l], *begin + ser);
        if (s->load != NULL && ser > 0)
            s->load(s->load_data, l, *begin, *begin + ser, s->lane_Bps[l]);
        return *begin + ser;
    }

    /* busy_until keeps the link's time before the instant until settle() ends. */
    CsTime ser = s->ser_of[(gsize)s->hop_base[f->flow] + (gsize)h];
    CsTime shared = s->ser_sum[l];
    if (s->ser_min[l] != s->ser_max[l]) {
        shared = 0;
        for (int o = s->first_sharer[l]; o >= 0; o = s->next_sharer[o])
            shared += MIN(s->ser_of[o], ser);
    }
    *begin = MAX(*begin, lanes[0]);
    s->busy_after[l] = MAX(s->busy_after[l], *begin + s->ser_sum[l]);
    if (s->load != NULL)
        s->begin_min[l] = MIN(s->begin_min[l], *begin);
    return *begin + shared;
}

/* Reserves pending flow @p's route; returns when its last byte has left. */
static CsTime
reserve(CsNetState *s, int p)
{
    const Pending *f = &s->pending[p];
    const CsRoute *route = &f->route;
    int n_chain = route->n_links - route->n_branches;
    CsTime begin = s->now; /* when the bytes start crossing the current link */
    CsTime end = s->now;   /* when the links so far have passed every byte */

    for (int h = 0; h < n_chain; h++) {
        CsTime crossed = cross(s, p, h, route->links[h], &begin); /* MAX() evaluates twice */
        end = MAX(end, crossed);
    }
    if (route->n_branches > 0) {
        /* A multicast: each copy out of the switch starts once the chain has started and its
         * own lane is free, whatever the other copies wait for. */
        CsTime fork = begin;
        for (int h = n_chain; h < route->n_links; h++) {
            CsTime b = fork;
            CsTime crossed = cross(s, p, h, route->links[h], &b);
            end = MAX(end, crossed);
            begin = MAX(begin, b);
        }
    }
    if (f->cap_Bps > 0)
        end = MAX(end, begin + cs_net_serialization_ps(f->wire_bytes, f->cap_Bps));
    *f->first_out = begin;
    return end;
}

/* Reserves the flows noted at the current instant and reports each one's end to @done, in
 * the order they started. */
static void
reservation_settle(CsNetState *s, CsNetDoneFunc done, gpointer user_data)
{
    int n = s->n_pending;

    if (n == 1) {
        /* Alone: nothing to share (the n_sharing of every link is 0). */
        s->n_pending = 0;
        done(user_data, s->pending[0].flow, reserve(s, 0));
        return;
    }
    count_sharers(s);
    for (int p = 0; p < n; p++)
        s->end_of[p] = reserve(s, p);
    for (int i = 0; i < s->n_touched; i++) {
        int l = s->touched[i];
        if (s->n_sharing[l] > 1) { /* alone there, cross() reserved it at once */
            s->busy_until[s->first_lane[l]] = s->busy_after[l];
            /* The sharers together hold the link for ser_sum of the time they span. */
            CsTime span = s->busy_after[l] - s->begin_min[l];
            if (s->load != NULL && span > 0)
                s->load(s->load_data, l, s->begin_min[l], s->busy_after[l],
                        s->lane_Bps[l] * (double)s->ser_sum[l] / (double)span);
        }
        s->n_sharing[l] = 0;
    }
    s->n_pending = 0;
    for (int p = 0; p < n; p++)
        done(user_data, s->pending[p].flow, s->end_of[p]);
}

static void
reservation_watch(CsNetState *s, CsNetLoadFunc load, gpointer user_data)
{
    s->load = load;
    s->load_data = user_data;
}

const CsNetModel cs_net_model_reservation = {
    .name = "reservation",
    .summary = "each lane busy until its last reservation ends; flows on a lane serialize, "
               "those of one instant share a PCIe or network port",
    .reference = "LogGOPSim next-free times (Hoefler et al., HPDC 2010); htsim queues",
    .create = reservation_create,
    .destroy = reservation_destroy,
    .start = reservation_start,
    .settle = reservation_settle,
    .next_event_time = NULL,
    .advance = NULL,
    .watch = reservation_watch,
};
