// SPDX-License-Identifier: MIT
/* The max-min fair fluid network model: flows share every link they cross, and their rates
 * are the max-min fair allocation (progressive filling), recomputed whenever a flow starts or
 * ends. Slower than reservation, exact under contention: two flows through one link each get
 * half of it.
 *
 * References: Bertsekas and Gallager, "Data Networks" (1992), §6.5.2 max-min fairness and
 * progressive filling; SimGrid's LMM solver and its lazy/full update split (Casanova et al.,
 * "Versatile, scalable, and accurate simulation of distributed applications and platforms",
 * JPDC 2014). A flow may carry a cap of its own (one channel's throughput), filled as a
 * link only it crosses. Only the connected component of links and flows touched by a change is
 * recomputed, so independent rings of a large machine cost nothing to each other. */
#include <math.h>

#include "models/netmodel.h"

/* ---- State ---- */

typedef struct {
    const int *links; /* route links (transfer none: the topology owns them) */
    int n_links;
    int heap_pos;     /* index in the completion heap, -1 when idle */
    double remaining; /* wire bytes still to leave the source at @last */
    double rate;      /* bytes/s */
    double last_rate; /* bytes/s: the rate before the current filling */
    double cap_Bps;   /* bytes/s: its own limit, 0 = none */
    CsTime last;      /* ps: when @remaining was last brought up to date */
    CsTime end;       /* ps: predicted end at the current rate */
    CsTime since;     /* ps: when the current rate began (watch() only) */
    guint32 mark;     /* visit epoch of the component walk */
    gboolean fixed;   /* rate settled in the current filling */
} Flow;

typedef struct {
    int *flows; /* active flows crossing the link */
    int n;
    int cap;
    double bw_Bps;   /* bytes/s: capacity */
    double left_Bps; /* bytes/s: not yet handed out in the current filling */
    int unfixed;     /* flows on it whose rate is not settled yet */
    guint32 mark;
} Link;

struct _CsNetState {
    Link *links;
    int n_links;
    Flow *flows;
    int max_flows;
    gint32 *hop_base; /* per flow: where its hops start in slot */
    int *slot;        /* [hop_base[flow] + hop]: index of the flow in the link's list */
    int *heap;        /* flows ordered by (end, id) */
    int heap_n;
    guint32 epoch;
    int *comp_links; /* scratch of the component walk */
    int *comp_flows;
    int *seeds; /* links whose flows changed */
    int n_seeds;
    int *finished;      /* flows ending at the current advance() */
    CsNetLoadFunc load; /* watch(): NULL when nobody asked */
    gpointer load_data;
};

/* Reports flow @f's @rate on each of its links from f->since until @now, where that rate
 * ends, and starts its next piece at @now. */
static void
report_load(const CsNetState *s, Flow *f, double rate, CsTime now)
{
    if (rate > 0.0 && now > f->since)
        for (int h = 0; h < f->n_links; h++)
            s->load(s->load_data, f->links[h], f->since, now, rate);
    f->since = now;
}

/* ---- Completion heap (indexed, keyed by (end, flow id)) ---- */

static gboolean
flow_before(const CsNetState *s, int a, int b)
{
    const Flow *fa = &s->flows[a];
    const Flow *fb = &s->flows[b];

    return fa->end < fb->end || (fa->end == fb->end && a < b);
}

static void
heap_place(CsNetState *s, int pos, int f)
{
    s->heap[pos] = f;
    s->flows[f].heap_pos = pos;
}

static void
heap_up(CsNetState *s, int pos)
{
    int f = s->heap[pos];

    while (pos > 0) {
        int parent = (pos - 1) / 2;
        if (!flow_before(s, f, s->heap[parent]))
            break;
        heap_place(s, pos, s->heap[parent]);
        pos = parent;
    }
    heap_place(s, pos, f);
}

static void
heap_down(CsNetState *s, int pos)
{
    int f = s->heap[pos];

    for (;;) {
        int child = 2 * pos + 1;
        if (child >= s->heap_n)
            break;
        if (child + 1 < s->heap_n && flow_before(s, s->heap[child + 1], s->heap[child]))
            child++;
        if (!flow_before(s, s->heap[child], f))
            break;
        heap_place(s, pos, s->heap[child]);
        pos = child;
    }
    heap_place(s, pos, f);
}

static void
heap_update(CsNetState *s, int f)
{
    int pos = s->flows[f].heap_pos;

    if (pos < 0) {
        pos = s->heap_n++;
        heap_place(s, pos, f);
    }
    heap_up(s, pos);
    heap_down(s, s->flows[f].heap_pos);
}

static void
heap_remove(CsNetState *s, int f)
{
    int pos = s->flows[f].heap_pos;
    int last = s->heap[--s->heap_n];

    s->flows[f].heap_pos = -1;
    if (last == f)
        return;
    heap_place(s, pos, last);
    heap_up(s, pos);
    heap_down(s, s->flows[last].heap_pos);
}

/* ---- Link membership ---- */

static void
link_add(CsNetState *s, int f, int hop)
{
    Link *l = &s->links[s->flows[f].links[hop]];

    if (l->n == l->cap) {
        /* Grows only when a link carries more flows than ever before in this run. */
        l->cap = MAX(8, 2 * l->cap);
        l->flows = g_renew(int, l->flows, l->cap);
    }
    s->slot[s->hop_base[f] + hop] = l->n;
    l->flows[l->n++] = f;
}

static void
link_remove(CsNetState *s, int f, int hop)
{
    const Flow *flow = &s->flows[f];
    Link *l = &s->links[flow->links[hop]];
    int at = s->slot[s->hop_base[f] + hop];
    int moved = l->flows[--l->n];

    if (moved == f)
        return;
    l->flows[at] = moved;
    /* The moved flow crosses this link at some hop of its own route. */
    for (int h = 0; h < s->flows[moved].n_links; h++) {
        if (s->flows[moved].links[h] == flow->links[hop]) {
            s->slot[s->hop_base[moved] + h] = at;
            break;
        }
    }
}

/* ---- Progressive filling ---- */

/* Brings every flow of the component around the seed links up to @now and gives them their
 * max-min fair rates: repeatedly the link with the smallest fair share fixes the rate of all
 * its unsettled flows (Bertsekas-Gallager). */
static void
refill(CsNetState *s, CsTime now)
{
    int n_links = 0;
    int n_flows = 0;

    s->epoch++;
    for (int i = 0; i < s->n_seeds; i++) {
        Link *l = &s->links[s->seeds[i]];
        if (l->mark != s->epoch) {
            l->mark = s->epoch;
            s->comp_links[n_links++] = s->seeds[i];
        }
    }
    s->n_seeds = 0;
    for (int i = 0; i < n_links; i++) {
        Link *l = &s->links[s->comp_links[i]];
        for (int j = 0; j < l->n; j++) {
            Flow *f = &s->flows[l->flows[j]];
            if (f->mark == s->epoch)
                continue;
            f->mark = s->epoch;
            s->comp_flows[n_flows++] = l->flows[j];
            for (int h = 0; h < f->n_links; h++) {
                Link *m = &s->links[f->links[h]];
                if (m->mark != s->epoch) {
                    m->mark = s->epoch;
                    s->comp_links[n_links++] = f->links[h];
                }
            }
        }
    }

    for (int i = 0; i < n_flows; i++) {
        Flow *f = &s->flows[s->comp_flows[i]];
        f->remaining -= f->rate * ((double)(now - f->last) / CS_TIME_PS_PER_S);
        f->remaining = MAX(f->remaining, 0.0);
        f->last = now;
        f->last_rate = f->rate;
        f->fixed = FALSE;
    }
    for (int i = 0; i < n_links; i++) {
        Link *l = &s->links[s->comp_links[i]];
        l->left_Bps = l->bw_Bps;
        l->unfixed = l->n;
    }

    for (;;) {
        int best = -1;
        double best_share = 0.0;
        for (int i = 0; i < n_links; i++) {
            const Link *l = &s->links[s->comp_links[i]];
            if (l->unfixed == 0)
                continue;
            double share = l->left_Bps / l->unfixed;
            if (best < 0 || share < best_share) {
                best = s->comp_links[i];
                best_share = share;
            }
        }
        if (best < 0)
            break;
        /* Flows whose own cap is below every fair share left are settled at their caps
         * first (a cap is a link of its own). All of them in one pass: settling a flow below
         * a link's share (left / unfixed) only raises that share, so the others stay below
         * the smallest one. One at a time made a refill quadratic in the flows (thousands on
         * 72 GPUs x 32 channels). */
        gboolean settled = FALSE;
        for (int i = 0; i < n_flows; i++) {
            Flow *f = &s->flows[s->comp_flows[i]];
            if (f->fixed || f->cap_Bps <= 0 || f->cap_Bps >= best_share)
                continue;
            f->fixed = TRUE;
            f->rate = f->cap_Bps;
            for (int h = 0; h < f->n_links; h++) {
                Link *m = &s->links[f->links[h]];
                m->left_Bps = MAX(m->left_Bps - f->rate, 0.0);
                m->unfixed--;
            }
            settled = TRUE;
        }
        if (settled)
            continue;
        Link *bl = &s->links[best];
        for (int j = 0; j < bl->n; j++) {
            Flow *f = &s->flows[bl->flows[j]];
            if (f->fixed)
                continue;
            f->fixed = TRUE;
            f->rate = best_share;
            for (int h = 0; h < f->n_links; h++) {
                Link *m = &s->links[f->links[h]];
                m->left_Bps = MAX(m->left_Bps - best_share, 0.0);
                m->unfixed--;
            }
        }
    }

    for (int i = 0; i < n_flows; i++) {
        int id = s->comp_flows[i];
        Flow *f = &s->flows[id];
        if (s->load != NULL && f->rate != f->last_rate)
            report_load(s, f, f->last_rate, now);
        /* An unchanged rate keeps its end: the heap is not touched for most of a large
         * component, whose flows are only walked because they share it. */
        if (f->heap_pos >= 0 && f->rate == f->last_rate)
            continue;
        f->end
            = f->rate > 0.0 ? now + cs_net_serialization_ps(f->remaining, f->rate) : CS_TIME_NEVER;
        heap_update(s, id);
    }
}

/* ---- Model ---- */

static CsNetState *
maxmin_create(const CsTopo *topo, int max_flows, const int *flow_hops, gboolean whole_links)
{
    (void)whole_links; /* a flow here always may fill a whole link */
    CsNetState *s = g_new0(CsNetState, 1);
    int n_links = cs_topo_n_links(topo);

    s->n_links = n_links;
    s->links = g_new0(Link, MAX(n_links, 1));
    for (int i = 0; i < n_links; i++)
        s->links[i].bw_Bps = cs_topo_link(topo, i)->bw_Bps;
    s->max_flows = MAX(max_flows, 1);
    s->hop_base = cs_net_hop_bases(flow_hops, max_flows);
    /* Flows that end at one instant are distinct, so their hops fit one of each. */
    const gsize n_hops = MAX((gsize)s->hop_base[max_flows], 1);
    s->flows = g_new0(Flow, s->max_flows);
    for (int i = 0; i < s->max_flows; i++)
        s->flows[i].heap_pos = -1;
    s->slot = g_new(int, n_hops);
    s->heap = g_new(int, s->max_flows);
    s->comp_links = g_new(int, MAX(n_links, 1));
    s->comp_flows = g_new(int, s->max_flows);
    s->seeds = g_new(int, n_hops);
    s->finished = g_new(int, s->max_flows);
    return s;
}

static void
maxmin_destroy(CsNetState *s)
{
    for (int i = 0; i < s->n_links; i++)
        g_free(s->links[i].flows);
    g_free(s->links);
    g_free(s->flows);
    g_free(s->hop_base);
    g_free(s->slot);
    g_free(s->heap);
    g_free(s->comp_links);
    g_free(s->comp_flows);
    g_free(s->seeds);
    g_free(s->finished);
    g_free(s);
}

static CsTime
maxmin_start(CsNetState *s, CsTime now, const CsRoute *route, double wire_bytes, double cap_Bps,
             gint32 flow, CsTime *first_out)
{
    Flow *f = &s->flows[flow];

    g_assert(flow >= 0 && flow < s->max_flows && f->heap_pos < 0);
    g_assert(route->n_links > 0 && route->n_links <= s->hop_base[flow + 1] - s->hop_base[flow]);
    f->links = route->links;
    f->n_links = route->n_links;
    f->remaining = wire_bytes;
    f->cap_Bps = cap_Bps;
    f->rate = 0.0;
    f->last = now;
    f->since = now;
    f->end = CS_TIME_NEVER;
    for (int h = 0; h < f->n_links; h++) {
        link_add(s, flow, h);
        s->seeds[s->n_seeds++] = f->links[h];
    }
    refill(s, now);
    *first_out = now;
    return CS_TIME_NEVER;
}

static CsTime
maxmin_next_event_time(CsNetState *s)
{
    return s->heap_n > 0 ? s->flows[s->heap[0]].end : CS_TIME_NEVER;
}

static void
maxmin_advance(CsNetState *s, CsTime t, CsNetDoneFunc done, gpointer user_data)
{
    int n_done = 0;

    /* Popped in (end, id) order, which is increasing id since they share @t. */
    while (s->heap_n > 0 && s->flows[s->heap[0]].end == t) {
        int id = s->heap[0];
        Flow *f = &s->flows[id];
        heap_remove(s, id);
        for (int h = 0; h < f->n_links; h++) {
            link_remove(s, id, h);
            s->seeds[s->n_seeds++] = f->links[h];
        }
        if (s->load != NULL)
            report_load(s, f, f->rate, t);
        f->remaining = 0.0;
        f->rate = 0.0;
        s->finished[n_done++] = id;
    }
    refill(s, t);
    for (int i = 0; i < n_done; i++)
        done(user_data, s->finished[i], t);
}

static void
maxmin_watch(CsNetState *s, CsNetLoadFunc load, gpointer user_data)
{
    s->load = load;
    s->load_data = user_data;
}

const CsNetModel cs_net_model_maxmin = {
    .name = "maxmin",
    .summary = "fluid flows sharing links max-min fairly, recomputed at each start and end",
    .reference = "Bertsekas & Gallager, Data Networks (1992) §6.5.2; SimGrid LMM (JPDC 2014)",
    .create = maxmin_create,
    .destroy = maxmin_destroy,
    .start = maxmin_start,
    .next_event_time = maxmin_next_event_time,
    .advance = maxmin_advance,
    .watch = maxmin_watch,
};
