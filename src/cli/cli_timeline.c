// SPDX-License-Identifier: MIT
/* Timelines in Chrome's Trace Event Format (chrome://tracing, Perfetto): a process per GPU, a
 * thread per channel, each step a complete event, each message an arrow from its send to its
 * receive (through the switch where it reduces or multicasts: NVLS, SHARP), each GPU's whole
 * collective and launch as spans, and a counter track of each busy link's utilization. Shared
 * by explain and run. */
#include "config.h"

#include <cjson/cJSON.h>
#include <string.h>

#include "base/json_util.h"
#include "cli/cli.h"
#include "cli/cli_timeline.h"

/* ---- Recording ---- */

/**
 * cs_cli_timeline_new:
 * An empty timeline. Returns: (transfer full).
 */
CsTimeline *
cs_cli_timeline_new(void)
{
    CsTimeline *t = g_new0(CsTimeline, 1);
    t->steps = g_array_new(FALSE, FALSE, sizeof(CsTimelineStep));
    t->loads = g_array_new(FALSE, FALSE, sizeof(CsTimelineLoad));
    return t;
}

void
cs_cli_timeline_free(CsTimeline *timeline)
{
    if (timeline == NULL)
        return;
    g_array_unref(timeline->steps);
    g_array_unref(timeline->loads);
    g_free(timeline);
}

static void
on_step_done(gpointer user_data, int rank, gsize step_index, const CsStep *step, CsTime start,
             CsTime end)
{
    CsTimeline *t = user_data;
    CsTimelineStep e = { rank, (guint)step_index, *step, start, end };
    g_array_append_val(t->steps, e);
}

static void
on_link_load(gpointer user_data, int link, CsTime start, CsTime end, double rate_Bps)
{
    CsTimeline *t = user_data;
    CsTimelineLoad l = { link, start, end, rate_Bps };
    g_array_append_val(t->loads, l);
}

/**
 * cs_cli_timeline_observer:
 * An engine observer that records into @timeline (not owned) every step the engine finishes
 * and every piece of a link's load the network model settles.
 */
CsObserver
cs_cli_timeline_observer(CsTimeline *timeline)
{
    CsObserver observer
        = { .user_data = timeline, .step_done = on_step_done, .link_load = on_link_load };
    return observer;
}

/* ---- Steps and messages ---- */

/* The timeline's thread of a step on @channel: the channel, or, where a channel's sends and
 * receives run apart (@split, NCCL's p2p kernel), one thread for each. */
static int
timeline_thread(int channel, gboolean split, CsStepKind kind)
{
    return split ? 2 * channel + (cs_step_kind_recvs(kind) ? 1 : 0) : channel;
}

/* A flow event of Chrome's format: @ph "s" (the message leaves) or "f" (it arrives, bound to
 * the enclosing slice), both named and identified alike. */
static void
add_flow_event(cJSON *list, const char *ph, int id, int pid, int tid, CsTime t)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", "message");
    cJSON_AddStringToObject(o, "cat", "message");
    cJSON_AddStringToObject(o, "ph", ph);
    cJSON_AddNumberToObject(o, "id", id);
    cJSON_AddNumberToObject(o, "pid", pid);
    cJSON_AddNumberToObject(o, "tid", tid);
    cJSON_AddNumberToObject(o, "ts", cs_time_to_us(t));
    if (strcmp(ph, "f") == 0)
        cJSON_AddStringToObject(o, "bp", "e");
    cJSON_AddItemToArray(list, o);
}

/* A message: its sending and its receiving step, and the in-switch operations it belongs to
 * (indices into the SwitchOp array, -1 for none). */
typedef struct {
    const CsTimelineStep *send;
    const CsTimelineStep *recv;
    int multicast;
    int reduce;
} Message;

/* One operation of a switch that multicasts or reduces (NVLS: multimem.st, multimem.ld_reduce;
 * SHARP), which the schedule writes as a group of flagged rank-to-rank messages
 * (schedule.h CsStepFlags). */
typedef struct {
    gboolean multicast; /* else an in-switch reduction */
    int device;         /* the switch; -1: none on the way (drawn as plain messages) */
    int leader;         /* the message that pays the shared hop */
    int n_messages;
    CsTime start; /* ps: a multicast's leading send starts; a reduction's first send */
    CsTime end;   /* ps: the group's last send ends */
    int lane;     /* thread on the switch's process */
} SwitchOp;

/* What the messages of a timeline are and how they group. */
typedef struct {
    Message *msgs;
    int n_msgs;
    GArray *ops; /* SwitchOp */
} Messages;

static void
messages_clear(Messages *mm)
{
    g_free(mm->msgs);
    if (mm->ops != NULL)
        g_array_unref(mm->ops);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(Messages, messages_clear)

/* The switch that reduces and multicasts on the way of @m, as the engine finds it
 * (engine.c, reducing_split()): the first device of the route that can, an NVSwitch with
 * multicast_reduction or a network switch with sharp. The route is the channel's
 * (cs_topo_route_channel()) with the channel's default NIC lane, its own index: only rings
 * choose other lanes, and they flag no message. -1 when the route crosses none. */
static int
reducing_switch(const CsTopo *topo, const Message *m)
{
    const CsRoute *route
        = cs_topo_route_channel(topo, m->send->rank, m->recv->rank, m->send->step.channel);
    for (int i = 0; i + 1 < route->n_links; i++) {
        int dev = cs_topo_link(topo, route->links[i])->dst;
        const CsDevice *d = cs_topo_device(topo, dev);
        if ((d->kind == CS_DEVICE_NVSWITCH && d->multicast_reduction)
            || (d->kind == CS_DEVICE_SWITCH && d->sharp))
            return dev;
    }
    return -1;
}

/* Message @m joins operation @op, or leads a new one when @op is -1; returns the operation. */
static int
join_op(Messages *mm, int m, int op, gboolean multicast)
{
    if (op < 0) {
        SwitchOp o = { .multicast = multicast, .device = -1, .leader = m };
        g_array_append_val(mm->ops, o);
        op = (int)mm->ops->len - 1;
    }
    g_array_index(mm->ops, SwitchOp, op).n_messages++;
    if (multicast)
        mm->msgs[m].multicast = op;
    else
        mm->msgs[m].reduce = op;
    return op;
}

static int
compare_ops(gconstpointer a, gconstpointer b, gpointer user_data)
{
    const SwitchOp *ops = user_data;
    const SwitchOp *x = &ops[*(const int *)a];
    const SwitchOp *y = &ops[*(const int *)b];
    if (x->device != y->device)
        return x->device < y->device ? -1 : 1;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return *(const int *)a - *(const int *)b;
}

/* The in-switch operations of mm->msgs, as the flags group them: a multicast is a send that
 * leads (the next sends of its rank on its channel SHARED_FIRST_HOP, or itself MULTICAST_SELF
 * or FROM_SWITCH) and the sends that share its first hop; a reduction is a receive that leads
 * (the next receives on its channel of messages SHARED_LAST_HOP, or its own message
 * REDUCE_SELF) and the receives that share its last hop. Each is placed on its switch, timed
 * by its members' sends, and put on the first lane of its switch free by then, so that the
 * operations on one thread never overlap. */
static void
group_switch_ops(Messages *mm, const CsTopo *topo, GPtrArray *programs, const int *msg_of_send,
                 const int *msg_of_recv, const CsTimelineStep *base)
{
    int open[G_MAXUINT8 + 1];
    mm->ops = g_array_new(FALSE, FALSE, sizeof(SwitchOp));
    for (guint r = 0; r < programs->len; r++) {
        GPtrArray *prog = g_ptr_array_index(programs, r);
        /* Multicasts, in the sender's program: open[c] is its last leading send's message on
         * channel c. */
        for (guint c = 0; c < G_N_ELEMENTS(open); c++)
            open[c] = -1;
        for (guint i = 0; i < prog->len; i++) {
            const CsTimelineStep *e = g_ptr_array_index(prog, i);
            if (e == NULL || e->step.send_peer < 0)
                continue;
            int m = msg_of_send[e - base];
            int *lead = &open[e->step.channel];
            if ((e->step.flags & CS_STEP_FLAG_SHARED_FIRST_HOP) && *lead >= 0) {
                if (mm->msgs[*lead].multicast < 0)
                    join_op(mm, *lead, -1, TRUE);
                join_op(mm, m, mm->msgs[*lead].multicast, TRUE);
                continue;
            }
            *lead = m;
            if (e->step.flags & (CS_STEP_FLAG_MULTICAST_SELF | CS_STEP_FLAG_FROM_SWITCH))
                join_op(mm, m, -1, TRUE);
        }
        /* Reductions, in the receiver's program. */
        for (guint c = 0; c < G_N_ELEMENTS(open); c++)
            open[c] = -1;
        for (guint i = 0; i < prog->len; i++) {
            const CsTimelineStep *e = g_ptr_array_index(prog, i);
            if (e == NULL || e->step.recv_peer < 0)
                continue;
            int m = msg_of_recv[e - base];
            guint8 flags = mm->msgs[m].send->step.flags;
            int *lead = &open[e->step.channel];
            if ((flags & CS_STEP_FLAG_SHARED_LAST_HOP) && *lead >= 0) {
                if (mm->msgs[*lead].reduce < 0)
                    join_op(mm, *lead, -1, FALSE);
                join_op(mm, m, mm->msgs[*lead].reduce, FALSE);
                continue;
            }
            *lead = m;
            if (flags & CS_STEP_FLAG_REDUCE_SELF)
                join_op(mm, m, -1, FALSE);
        }
    }

    SwitchOp *ops = (SwitchOp *)(void *)mm->ops->data;
    int n_ops = (int)mm->ops->len;
    for (int k = 0; k < n_ops; k++) {
        ops[k].device = reducing_switch(topo, &mm->msgs[ops[k].leader]);
        ops[k].start = ops[k].multicast ? mm->msgs[ops[k].leader].send->start : G_MAXINT64;
        ops[k].end = 0;
    }
    for (int m = 0; m < mm->n_msgs; m++) {
        Message *msg = &mm->msgs[m];
        for (int pass = 0; pass < 2; pass++) {
            int *k = pass == 0 ? &msg->multicast : &msg->reduce;
            if (*k < 0)
                continue;
            if (ops[*k].device < 0) {
                *k = -1; /* no switch that could: the message goes rank to rank */
                continue;
            }
            if (!ops[*k].multicast)
                ops[*k].start = MIN(ops[*k].start, msg->send->start);
            ops[*k].end = MAX(ops[*k].end, msg->send->end);
        }
    }
    g_autofree int *order = g_new(int, MAX(n_ops, 1));
    for (int k = 0; k < n_ops; k++)
        order[k] = k;
    g_qsort_with_data(order, n_ops, sizeof(int), compare_ops, ops);
    g_autoptr(GArray) lane_end = g_array_new(FALSE, FALSE, sizeof(CsTime));
    for (int i = 0; i < n_ops; i++) {
        SwitchOp *o = &ops[order[i]];
        if (i == 0 || o->device != ops[order[i - 1]].device)
            g_array_set_size(lane_end, 0);
        guint lane = 0;
        while (lane < lane_end->len && g_array_index(lane_end, CsTime, lane) > o->start)
            lane++;
        if (lane == lane_end->len)
            g_array_set_size(lane_end, lane + 1);
        g_array_index(lane_end, CsTime, lane) = o->end;
        o->lane = (int)lane;
    }
}

/* Each message of @events with its sending and receiving step: CsStep's matching rule, the
 * k-th receive of rank r from p on a channel takes the k-th message p sent r on it. Messages
 * count in the order of the receivers' ranks and programs. Then their in-switch operations
 * (group_switch_ops()). */
static void
find_messages(Messages *mm, const CsTopo *topo, const GArray *events, int nranks)
{
    const CsTimelineStep *base = (const CsTimelineStep *)(const void *)events->data;
    g_autoptr(GPtrArray) programs
        = g_ptr_array_new_with_free_func((GDestroyNotify)g_ptr_array_unref);
    for (int r = 0; r < nranks; r++)
        g_ptr_array_add(programs, g_ptr_array_new());
    for (guint i = 0; i < events->len; i++) {
        const CsTimelineStep *e = &base[i];
        GPtrArray *prog = g_ptr_array_index(programs, e->rank);
        if (prog->len <= e->index)
            g_ptr_array_set_size(prog, (gint)e->index + 1);
        g_ptr_array_index(prog, e->index) = (gpointer)e;
    }
    /* (sender, receiver, channel) -> the sender's steps that send there, in program order. */
    g_autoptr(GHashTable) sends = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free,
                                                        (GDestroyNotify)g_ptr_array_unref);
    for (int r = 0; r < nranks; r++) {
        GPtrArray *prog = g_ptr_array_index(programs, r);
        for (guint i = 0; i < prog->len; i++) {
            const CsTimelineStep *e = g_ptr_array_index(prog, i);
            if (e == NULL || e->step.send_peer < 0)
                continue;
            gint64 key = ((gint64)r * nranks + e->step.send_peer) * 256 + e->step.channel;
            GPtrArray *queue = g_hash_table_lookup(sends, &key);
            if (queue == NULL) {
                queue = g_ptr_array_new();
                g_hash_table_insert(sends, g_memdup2(&key, sizeof(key)), queue);
            }
            g_ptr_array_add(queue, (gpointer)e);
        }
    }
    g_autofree int *msg_of_send = g_new(int, MAX(events->len, 1));
    g_autofree int *msg_of_recv = g_new(int, MAX(events->len, 1));
    mm->msgs = g_new(Message, MAX(events->len, 1));
    mm->n_msgs = 0;
    g_autoptr(GHashTable) taken = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
    for (int r = 0; r < nranks; r++) {
        GPtrArray *prog = g_ptr_array_index(programs, r);
        for (guint i = 0; i < prog->len; i++) {
            const CsTimelineStep *recv = g_ptr_array_index(prog, i);
            if (recv == NULL || recv->step.recv_peer < 0)
                continue;
            gint64 key = ((gint64)recv->step.recv_peer * nranks + r) * 256 + recv->step.channel;
            GPtrArray *queue = g_hash_table_lookup(sends, &key);
            guint k = GPOINTER_TO_UINT(g_hash_table_lookup(taken, &key));
            /* The engine ran the schedule to its end: every receive had its message. */
            g_assert(queue != NULL && k < queue->len);
            g_hash_table_replace(taken, g_memdup2(&key, sizeof(key)), GUINT_TO_POINTER(k + 1));
            const CsTimelineStep *send = g_ptr_array_index(queue, k);
            msg_of_send[send - base] = mm->n_msgs;
            msg_of_recv[recv - base] = mm->n_msgs;
            mm->msgs[mm->n_msgs++] = (Message){ send, recv, -1, -1 };
        }
    }
    group_switch_ops(mm, topo, programs, msg_of_send, msg_of_recv, base);
}

/* The process of switch @device in the timeline: after the GPUs and the links' process, the
 * switches that operate in the order of their device indices. */
static int
switch_pid(const int *switch_rank, int nranks, int device)
{
    return nranks + 1 + switch_rank[device];
}

/* An arrow from each message's send to its receive, or through the switch that multicasts or
 * reduces it. A plain message's arrow leaves when the sending step starts and lands when the
 * receiving step has both begun and its message has left (the later of the two), so each end
 * lies inside its step's slice and no arrow runs back in time. A multicast gets one arrow
 * from its leading send into the switch's operation and one out of it to each receive; a
 * reduction one arrow from each send into it and one out of it to the receive that leads it
 * (whose message carries the sum over the last hop). An arrow out of an operation leaves when
 * its receive begins, held inside the operation. Ids count the arrows in the order of the
 * messages. */
static void
add_flows(cJSON *list, const Messages *mm, const int *switch_rank, int nranks, gboolean split)
{
    const SwitchOp *ops = (const SwitchOp *)(const void *)mm->ops->data;
    int id = 0;
    for (int k = 0; k < mm->n_msgs; k++) {
        const Message *m = &mm->msgs[k];
        const CsTimelineStep *send = m->send;
        const CsTimelineStep *recv = m->recv;
        int send_tid = timeline_thread(send->step.channel, split, (CsStepKind)send->step.kind);
        int recv_tid = timeline_thread(recv->step.channel, split, (CsStepKind)recv->step.kind);
        if (m->multicast < 0 && m->reduce < 0) {
            add_flow_event(list, "s", id, send->rank, send_tid, send->start);
            add_flow_event(list, "f", id, recv->rank, recv_tid, MAX(recv->start, send->start));
            id++;
            continue;
        }
        /* Into the switch: a multicast's bytes once, by its leader. */
        int in = m->multicast >= 0 ? m->multicast : m->reduce;
        if (m->multicast < 0 || ops[in].leader == k) {
            const SwitchOp *o = &ops[in];
            add_flow_event(list, "s", id, send->rank, send_tid, send->start);
            add_flow_event(list, "f", id, switch_pid(switch_rank, nranks, o->device), o->lane,
                           MAX(send->start, o->start));
            id++;
        }
        /* Out of it: a reduction's sum once, to its leading receive. */
        int out = m->reduce >= 0 ? m->reduce : m->multicast;
        if (m->reduce < 0 || ops[out].leader == k) {
            const SwitchOp *o = &ops[out];
            CsTime leave = MAX(o->start, MIN(recv->start, o->end));
            add_flow_event(list, "s", id, switch_pid(switch_rank, nranks, o->device), o->lane,
                           leave);
            add_flow_event(list, "f", id, recv->rank, recv_tid, MAX(recv->start, leave));
            id++;
        }
    }
}

/* The switches' operations as complete events, each on its lane of its switch's process:
 * "multicast from GPU 3 (16 KiB)", "reduce into GPU 3 (16 KiB)". */
static void
add_switch_ops(cJSON *list, const Messages *mm, const int *switch_rank, int nranks)
{
    for (guint k = 0; k < mm->ops->len; k++) {
        const SwitchOp *o = &g_array_index(mm->ops, SwitchOp, k);
        if (o->device < 0)
            continue;
        const Message *lead = &mm->msgs[o->leader];
        g_autofree char *size = cs_cli_human_size(lead->send->step.bytes);
        g_autofree char *name
            = o->multicast ? g_strdup_printf("multicast from GPU %d (%s)", lead->send->rank, size)
                           : g_strdup_printf("reduce into GPU %d (%s)", lead->recv->rank, size);
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "name", name);
        cJSON_AddStringToObject(e, "cat", o->multicast ? "multicast" : "reduce");
        cJSON_AddStringToObject(e, "ph", "X");
        cJSON_AddNumberToObject(e, "ts", cs_time_to_us(o->start));
        cJSON_AddNumberToObject(e, "dur", cs_time_to_us(o->end - o->start));
        cJSON_AddNumberToObject(e, "pid", switch_pid(switch_rank, nranks, o->device));
        cJSON_AddNumberToObject(e, "tid", o->lane);
        cJSON *args = cJSON_AddObjectToObject(e, "args");
        cJSON_AddNumberToObject(args, "bytes", (double)lead->send->step.bytes);
        cJSON_AddNumberToObject(args, "messages", o->n_messages);
        cJSON_AddNumberToObject(args, "chunk", lead->send->step.chunk);
        cJSON_AddItemToArray(list, e);
    }
}

/* A complete ("X") event of @cat on a GPU's own thread @tid, from the start (time 0, the
 * host's first launch) to @end. */
static void
add_span(cJSON *list, const char *name, const char *cat, int pid, int tid, CsTime end)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", name);
    cJSON_AddStringToObject(o, "cat", cat);
    cJSON_AddStringToObject(o, "ph", "X");
    cJSON_AddNumberToObject(o, "ts", 0);
    cJSON_AddNumberToObject(o, "dur", cs_time_to_us(end));
    cJSON_AddNumberToObject(o, "pid", pid);
    cJSON_AddNumberToObject(o, "tid", tid);
    cJSON_AddItemToArray(list, o);
}

/* Each GPU's whole collective, from the host's first launch (time 0) to the end of its last
 * step, and within it the launch: until its first step begins, which the engine begins when
 * the GPU's launching thread has issued every kernel it issues (engine.c, "Launch"). The
 * outer span comes first, so viewers nest the launch inside it. */
static void
add_spans(cJSON *list, const GArray *events, CsOp op, int nranks, int tid)
{
    const gsize n = (gsize)MAX(nranks, 1);
    g_autofree CsTime *first = g_new(CsTime, n);
    g_autofree CsTime *last = g_new(CsTime, n);
    for (int r = 0; r < nranks; r++) {
        first[r] = G_MAXINT64;
        last[r] = -1;
    }
    for (guint i = 0; i < events->len; i++) {
        const CsTimelineStep *e = &g_array_index(events, CsTimelineStep, i);
        first[e->rank] = MIN(first[e->rank], e->start);
        last[e->rank] = MAX(last[e->rank], e->end);
    }
    for (int r = 0; r < nranks; r++) {
        if (last[r] < 0)
            continue; /* a rank with no step */
        add_span(list, cs_op_name(op), "collective", r, tid, last[r]);
        if (first[r] > 0)
            add_span(list, "launch", "launch", r, tid, first[r]);
    }
}

/* ---- Links ---- */

/* A change of a link's load: @rate_Bps more from @t on (less where negative). */
typedef struct {
    CsTime t;
    double rate_Bps;
} LoadEdge;

static int
compare_edges(gconstpointer a, gconstpointer b)
{
    const LoadEdge *x = a;
    const LoadEdge *y = b;
    /* A total order, so that the sums of one instant add up alike on every run. */
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return x->rate_Bps < y->rate_Bps ? -1 : x->rate_Bps > y->rate_Bps ? 1 : 0;
}

/* A counter ("C") event of link @name's utilization @u from @t on. */
static void
add_counter(cJSON *list, const char *name, int pid, CsTime t, double u)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", name);
    cJSON_AddStringToObject(o, "cat", "link");
    cJSON_AddStringToObject(o, "ph", "C");
    cJSON_AddNumberToObject(o, "ts", cs_time_to_us(t));
    cJSON_AddNumberToObject(o, "pid", pid);
    cJSON_AddNumberToObject(o, "tid", 0);
    cJSON_AddNumberToObject(cJSON_AddObjectToObject(o, "args"), "utilization", u);
    cJSON_AddItemToArray(list, o);
}

/* One counter track per link that carried anything, on process @pid, named as the topology
 * names its ends ("node0/gpu3 -> node0/nvswitch1"): the fraction of the link's bandwidth
 * (bw_Bps, the usable one) its transfers' wire bytes held, as the network model shared it out
 * (@loads), from the first piece to the last, a value at each change. Links in index order.
 * Returns how many links carried anything. */
static int
add_link_counters(cJSON *list, const GArray *loads, const CsTopo *topo, int pid)
{
    int n_links = cs_topo_n_links(topo);
    g_autofree GArray **edges = g_new0(GArray *, MAX(n_links, 1));
    for (guint i = 0; i < loads->len; i++) {
        const CsTimelineLoad *l = &g_array_index(loads, CsTimelineLoad, i);
        if (l->end <= l->start || l->rate_Bps <= 0.0)
            continue;
        if (edges[l->link] == NULL)
            edges[l->link] = g_array_new(FALSE, FALSE, sizeof(LoadEdge));
        LoadEdge up = { l->start, l->rate_Bps };
        LoadEdge down = { l->end, -l->rate_Bps };
        g_array_append_val(edges[l->link], up);
        g_array_append_val(edges[l->link], down);
    }
    int n_busy = 0;
    for (int k = 0; k < n_links; k++) {
        GArray *e = edges[k];
        if (e == NULL)
            continue;
        n_busy++;
        const CsLink *link = cs_topo_link(topo, k);
        g_autofree char *name = g_strdup_printf("%s -> %s", cs_topo_device(topo, link->src)->name,
                                                cs_topo_device(topo, link->dst)->name);
        g_array_sort(e, compare_edges);
        double sum = 0.0;
        double shown = -1.0;
        int active = 0;
        for (guint i = 0; i < e->len;) {
            CsTime t = g_array_index(e, LoadEdge, i).t;
            for (; i < e->len && g_array_index(e, LoadEdge, i).t == t; i++) {
                double r = g_array_index(e, LoadEdge, i).rate_Bps;
                sum += r;
                active += r > 0.0 ? 1 : -1;
            }
            /* Without a piece in flight the link is idle, whatever the rounding left. */
            if (active == 0)
                sum = 0.0;
            double u = MAX(sum, 0.0) / link->bw_Bps;
            if (u != shown)
                add_counter(list, name, pid, t, u);
            shown = u;
        }
        g_array_unref(e);
    }
    return n_busy;
}

/* ---- The file ---- */

/* A metadata ("M") event: @what ("process_name", "thread_name") of @pid (and @tid, unless
 * negative) with the argument @key, the string @text or else @number. */
static void
add_meta(cJSON *list, const char *what, int pid, int tid, const char *key, const char *text,
         double number)
{
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "name", what);
    cJSON_AddStringToObject(m, "ph", "M");
    cJSON_AddNumberToObject(m, "pid", pid);
    if (tid >= 0)
        cJSON_AddNumberToObject(m, "tid", tid);
    cJSON *args = cJSON_AddObjectToObject(m, "args");
    if (text != NULL)
        cJSON_AddStringToObject(args, key, text);
    else
        cJSON_AddNumberToObject(args, key, number);
    cJSON_AddItemToArray(list, m);
}

/**
 * cs_cli_timeline_write:
 * Writes @timeline (one run of @op on @nranks ranks of @topo over @n_channels channels;
 * @split: each channel's sends and receives on threads of their own) to @path, replaced whole;
 * errors name @prog and --timeline.
 *
 * Chrome's trace-event format, times in microseconds: a process per GPU (pid = rank) with a
 * thread per channel (or its sends and its receives when @split) holding each step as a
 * complete ("X") event, and one "collective" thread holding the spans of the whole collective
 * and of its launch; a "links" process (pid = @nranks) with a counter ("C") track of each busy
 * link's utilization; a process per switch that multicasts or reduces (NVLS, SHARP), its
 * operations on threads "lane N"; and a flow ("s" to "f") for each message, from its send to
 * its receive or through its switch's operation. */
gboolean
cs_cli_timeline_write(const char *prog, const char *path, const CsTimeline *timeline,
                      const CsTopo *topo, CsOp op, int nranks, int n_channels, gboolean split,
                      GError **error)
{
    const GArray *events = timeline->steps;
    g_auto(Messages) mm = { 0 };
    find_messages(&mm, topo, events, nranks);
    /* The switches that operate, and each one's lanes. */
    int n_devices = cs_topo_n_devices(topo);
    g_autofree int *switch_rank = g_new(int, MAX(n_devices, 1));
    g_autofree int *n_lanes = g_new0(int, MAX(n_devices, 1));
    for (guint k = 0; k < mm.ops->len; k++) {
        const SwitchOp *o = &g_array_index(mm.ops, SwitchOp, k);
        if (o->device >= 0)
            n_lanes[o->device] = MAX(n_lanes[o->device], o->lane + 1);
    }
    int n_switches = 0;
    for (int d = 0; d < n_devices; d++)
        switch_rank[d] = n_lanes[d] > 0 ? n_switches++ : -1;

    g_autoptr(cJSON) root = cJSON_CreateObject();
    cJSON *list = cJSON_AddArrayToObject(root, "traceEvents");
    int collective_tid = (split ? 2 : 1) * n_channels;
    for (int r = 0; r < nranks; r++) {
        g_autofree char *name = g_strdup_printf("GPU %d", r);
        add_meta(list, "process_name", r, -1, "name", name, 0);
        for (int tid = 0; tid < collective_tid; tid++) {
            g_autofree char *cname
                = split ? g_strdup_printf("channel %d %s", tid / 2, tid % 2 ? "receives" : "sends")
                        : g_strdup_printf("channel %d", tid);
            add_meta(list, "thread_name", r, tid, "name", cname, 0);
        }
        add_meta(list, "thread_name", r, collective_tid, "name", "collective", 0);
    }
    for (int d = 0; d < n_devices; d++) {
        if (switch_rank[d] < 0)
            continue;
        int pid = switch_pid(switch_rank, nranks, d);
        add_meta(list, "process_name", pid, -1, "name", cs_topo_device(topo, d)->name, 0);
        for (int lane = 0; lane < n_lanes[d]; lane++) {
            g_autofree char *lname = g_strdup_printf("lane %d", lane);
            add_meta(list, "thread_name", pid, lane, "name", lname, 0);
        }
    }
    add_spans(list, events, op, nranks, collective_tid);
    for (guint i = 0; i < events->len; i++) {
        const CsTimelineStep *e = &g_array_index(events, CsTimelineStep, i);
        const CsStep *st = &e->step;
        cJSON *o = cJSON_CreateObject();
        g_autofree char *size = cs_cli_human_size(st->bytes);
        GString *name = g_string_new(cs_step_kind_name((CsStepKind)st->kind));
        if (st->recv_peer >= 0)
            g_string_append_printf(name, " from %d", st->recv_peer);
        if (st->send_peer >= 0)
            g_string_append_printf(name, " to %d", st->send_peer);
        g_string_append_printf(name, " (%s)", size);
        cJSON_AddStringToObject(o, "name", name->str);
        g_string_free(name, TRUE);
        cJSON_AddStringToObject(o, "cat", cs_step_kind_name((CsStepKind)st->kind));
        cJSON_AddStringToObject(o, "ph", "X");
        cJSON_AddNumberToObject(o, "ts", cs_time_to_us(e->start));
        cJSON_AddNumberToObject(o, "dur", cs_time_to_us(e->end - e->start));
        cJSON_AddNumberToObject(o, "pid", e->rank);
        cJSON_AddNumberToObject(o, "tid",
                                timeline_thread(st->channel, split, (CsStepKind)st->kind));
        cJSON *args = cJSON_AddObjectToObject(o, "args");
        cJSON_AddNumberToObject(args, "bytes", (double)st->bytes);
        cJSON_AddNumberToObject(args, "chunk", st->chunk);
        cJSON_AddNumberToObject(args, "send_peer", st->send_peer);
        cJSON_AddNumberToObject(args, "recv_peer", st->recv_peer);
        if (st->flags != 0)
            cJSON_AddNumberToObject(args, "flags", st->flags);
        cJSON_AddItemToArray(list, o);
    }
    add_switch_ops(list, &mm, switch_rank, nranks);
    add_flows(list, &mm, switch_rank, nranks, split);
    if (add_link_counters(list, timeline->loads, topo, nranks) > 0) {
        add_meta(list, "process_name", nranks, -1, "name", "links (utilization)", 0);
    }
    cJSON_AddStringToObject(root, "displayTimeUnit", "ns");
    char *printed = cs_json_print(root, FALSE);
    g_autofree char *text = g_strconcat(printed, "\n", NULL);
    cJSON_free(printed);
    return cs_cli_write_output(prog, "--timeline", path, text, -1, error);
}
