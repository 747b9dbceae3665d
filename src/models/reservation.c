// SPDX-License-Identifier: MIT
/* The reservation network model: every directed link keeps the time it is busy until, and a
 * transfer reserves every link of its route for its whole serialization, first come first
 * served. Fast and deterministic; contention shows up as flows queueing one after another.
 *
 * References: LogGOPSim (Hoefler, Schneider, Lumsdaine, HPDC 2010), its `nexto` / `nextgs`
 * per-resource next-free times; htsim's serialization queue in front of a pipe (Raiciu et al.,
 * SIGCOMM 2011). Cut-through: a flow holds all links of its route at once for
 * bytes / bottleneck bandwidth, then its last byte propagates (the engine adds the latency). */
#include "models/netmodel.h"

struct _CsNetState {
    int n_links;
    CsTime *busy_until; /* ps: per directed link, when its last reservation ends */
};

static CsNetState *
reservation_create(const CsTopo *topo, int max_flows, int max_hops)
{
    CsNetState *s = g_new0(CsNetState, 1);

    (void)max_flows;
    (void)max_hops;
    s->n_links = cs_topo_n_links(topo);
    s->busy_until = g_new0(CsTime, MAX(s->n_links, 1));
    return s;
}

static void
reservation_destroy(CsNetState *s)
{
    g_free(s->busy_until);
    g_free(s);
}

static CsTime
reservation_start(CsNetState *s, CsTime now, const CsRoute *route, double wire_bytes, gint32 flow,
                  CsTime *first_out)
{
    CsTime begin = now;
    CsTime end;

    (void)flow;
    for (int i = 0; i < route->n_links; i++)
        begin = MAX(begin, s->busy_until[route->links[i]]);
    end = begin + cs_net_serialization_ps(wire_bytes, route->bw_Bps);
    for (int i = 0; i < route->n_links; i++)
        s->busy_until[route->links[i]] = end;
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
