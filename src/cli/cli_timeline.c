// SPDX-License-Identifier: MIT
/* Timelines in Chrome's Trace Event Format (chrome://tracing, Perfetto): a process per GPU, a
 * thread per channel, each step a complete event, each message an arrow from its send to its
 * receive, and each GPU's whole collective and launch as spans. Shared by explain and run. */
#include "config.h"

#include <cjson/cJSON.h>
#include <string.h>

#include "base/json_util.h"
#include "cli/cli.h"
#include "cli/cli_timeline.h"

static void
on_step_done(gpointer user_data, int rank, gsize step_index, const CsStep *step, CsTime start,
             CsTime end)
{
    GArray *events = user_data;
    CsTimelineStep e = { rank, (guint)step_index, *step, start, end };
    g_array_append_val(events, e);
}

/**
 * cs_cli_timeline_observer:
 * An engine observer that appends a CsTimelineStep to @steps (a GArray of them, not owned) for
 * every step the engine finishes.
 */
CsObserver
cs_cli_timeline_observer(GArray *steps)
{
    CsObserver observer = { .user_data = steps, .step_done = on_step_done };
    return observer;
}

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

/* An arrow from each message's send to its receive: CsStep's matching rule, the k-th receive
 * of rank r from p on a channel takes the k-th message p sent r on it. The arrow leaves when
 * the sending step starts and lands when the receiving step has both begun and its message
 * has left, so each end lies inside its step's slice and no arrow runs back in time. Ids
 * count the messages in the order of the receivers' ranks and programs. */
static void
add_flows(cJSON *list, const GArray *events, int nranks, gboolean split)
{
    g_autoptr(GPtrArray) programs
        = g_ptr_array_new_with_free_func((GDestroyNotify)g_ptr_array_unref);
    for (int r = 0; r < nranks; r++)
        g_ptr_array_add(programs, g_ptr_array_new());
    for (guint i = 0; i < events->len; i++) {
        const CsTimelineStep *e = &g_array_index(events, CsTimelineStep, i);
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
    g_autoptr(GHashTable) taken = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
    int id = 0;
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
            add_flow_event(list, "s", id, send->rank,
                           timeline_thread(send->step.channel, split, (CsStepKind)send->step.kind),
                           send->start);
            add_flow_event(list, "f", id, r,
                           timeline_thread(recv->step.channel, split, (CsStepKind)recv->step.kind),
                           MAX(recv->start, send->start));
            id++;
        }
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
    g_autofree CsTime *first = g_new(CsTime, nranks);
    g_autofree CsTime *last = g_new(CsTime, nranks);
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

/**
 * cs_cli_timeline_write:
 * Writes @events (CsTimelineStep of one run of @op on @nranks ranks over @n_channels channels;
 * @split: each channel's sends and receives on threads of their own) to @path, replaced whole;
 * errors name @prog and --timeline.
 *
 * Chrome's trace-event format: "X" (complete) events in microseconds, "M" metadata naming
 * each process (GPU) and thread (channel, or its sends and its receives when @split, and one
 * "collective" thread holding the spans of the whole collective and of its launch), and a
 * flow ("s" to "f") from each message's send to its receive. */
gboolean
cs_cli_timeline_write(const char *prog, const char *path, const GArray *events, CsOp op, int nranks,
                      int n_channels, gboolean split, GError **error)
{
    g_autoptr(cJSON) root = cJSON_CreateObject();
    cJSON *list = cJSON_AddArrayToObject(root, "traceEvents");
    for (int r = 0; r < nranks; r++) {
        cJSON *m = cJSON_CreateObject();
        cJSON_AddStringToObject(m, "name", "process_name");
        cJSON_AddStringToObject(m, "ph", "M");
        cJSON_AddNumberToObject(m, "pid", r);
        g_autofree char *name = g_strdup_printf("GPU %d", r);
        cJSON_AddStringToObject(cJSON_AddObjectToObject(m, "args"), "name", name);
        cJSON_AddItemToArray(list, m);
        for (int tid = 0; tid < (split ? 2 : 1) * n_channels; tid++) {
            cJSON *t = cJSON_CreateObject();
            cJSON_AddStringToObject(t, "name", "thread_name");
            cJSON_AddStringToObject(t, "ph", "M");
            cJSON_AddNumberToObject(t, "pid", r);
            cJSON_AddNumberToObject(t, "tid", tid);
            g_autofree char *cname
                = split ? g_strdup_printf("channel %d %s", tid / 2, tid % 2 ? "receives" : "sends")
                        : g_strdup_printf("channel %d", tid);
            cJSON_AddStringToObject(cJSON_AddObjectToObject(t, "args"), "name", cname);
            cJSON_AddItemToArray(list, t);
        }
        cJSON *t = cJSON_CreateObject();
        cJSON_AddStringToObject(t, "name", "thread_name");
        cJSON_AddStringToObject(t, "ph", "M");
        cJSON_AddNumberToObject(t, "pid", r);
        cJSON_AddNumberToObject(t, "tid", (split ? 2 : 1) * n_channels);
        cJSON_AddStringToObject(cJSON_AddObjectToObject(t, "args"), "name", "collective");
        cJSON_AddItemToArray(list, t);
    }
    add_spans(list, events, op, nranks, (split ? 2 : 1) * n_channels);
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
        cJSON_AddItemToArray(list, o);
    }
    add_flows(list, events, nranks, split);
    cJSON_AddStringToObject(root, "displayTimeUnit", "ns");
    char *printed = cs_json_print(root, FALSE);
    g_autofree char *text = g_strconcat(printed, "\n", NULL);
    cJSON_free(printed);
    return cs_cli_write_output(prog, "--timeline", path, text, -1, error);
}
