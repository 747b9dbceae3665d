// SPDX-License-Identifier: MIT
/* The reservation network model: every directed link keeps the time it is busy until, and a
 * transfer reserves every link of its route, first come first served. Fast and
 * deterministic; contention shows up as flows queueing one after another.
 *
 * References: LogGOPSim (Hoefler, Schneider, Lumsdaine, HPDC 2010), its `nexto` / `nextgs`
 * per-resource next-free times; htsim's serialization queue in front of a pipe (Raiciu et al.,
 * SIGCOMM 2011). Cut-through, link by link: the bytes start crossing link i once they have
 * started on link i-1 and link i is free; link i is then busy for bytes / its own bandwidth,
 * and the bytes have all crossed it once that time has passed and link i-1 has passed them
 * all. On an idle route this is bytes / bottleneck bandwidth; then the last byte propagates
 * (the engine adds the latency). */
#include "models/netmodel.h"

struct _CsNetState {
    int n_links;
    CsTime *busy_until; /* ps: per directed link, when its last reservation ends */
    double *bw_Bps;     /* bytes/s: per directed link */
};

static CsNetState *
reservation_create(const CsTopo *topo, int max_flows, int max_hops)
{
    CsNetState *s = g_new0(CsNetState, 1);

    (void) max_flows;
    (void) max_hops;
    s->n_links = cs_topo_n_links(topo);
    s->busy_until = g_new0(CsTime, MAX(s->n_links, 1));
    s->bw_Bps = g_new0(double, MAX(s->n_links, 1));
    for (int i = 0; i < s->n_links; i++)
        s->bw_Bps[i] = cs_topo_link(topo, i)->bw_Bps;
    return s;
}

static void
reservation_destroy(CsNetState *s)
{
    g_free(s->busy_until);
    g_free(s->bw_Bps);
    g_free(s);
}

static CsTime
reservation_start(CsNetState *s, CsTime now, const CsRoute *route, double wire_bytes,
                  gint32 flow, CsTime *first_out)
{
    CsTime begin = now; /* when the bytes start crossing the current link */
    CsTime end = now;   /* when the links so far have passed every byte */

    (void) flow;
    for (int i = 0; i < route->n_links; i++) {
        int l = route->links[i];
        CsTime ser = cs_net_serialization_ps(wire_bytes, s->bw_Bps[l]);
        begin = MAX(begin, s->busy_until[l]);
        end = MAX(end, begin + ser);
        /* A link is held for its own serialization of the bytes, not for the whole flow:
         * a fast link behind a slow one stays free for others meanwhile. */
        s->busy_until[l] = begin + ser;
    }
    *first_out = begin;
    return end;
}

const CsNetModel cs_net_model_reservation = {
    .name = "reservation",
    .summary = "each link busy until its last reservation ends; flows on a link serialize",
    .reference = "LogGOPSim next-free times (Hoefler et al., HPDC 2010); htsim queues",
    .create = reservation_create,
    .destroy = reservation_destroy,
    .start = reservation_start,
    .next_event_time = NULL,
    .advance = NULL,
};
