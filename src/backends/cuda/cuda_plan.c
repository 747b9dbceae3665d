// SPDX-License-Identifier: MIT
/* Lowers a Schedule to the CUDA executor's ordered stream operations: every send becomes a
 * copy into the receiver's slot (direct, or through pinned host memory), every reduction a
 * kernel, every dependency an event. The list is emitted in an order that simulates the
 * schedule on the host, so each event is recorded before anything waits on it. */
#include "config.h"

#include "backends/cuda/cuda_plan.h"

#include <string.h>

#include "backends/reference.h"

/* Slot and outbox alignment: enough for any datatype and for vector loads. */
#define SLOT_ALIGN 256

struct _CsCudaPlan {
    CsCudaPlanView view;
    GArray *xops;  /* CsCudaXop */
    GArray *waits; /* gint32 event indices */
    gint32 *stream_rank;
    gint64 *mem_bytes;
    int slots; /* per connection, 0 = one per message */
};

/* A connection: FIFO of messages from @src to @dst on @channel. */
typedef struct {
    int src;
    int dst;
    int channel;
    gint64 n_msgs;
    gint64 n_recvs;
    gint64 first_msg; /* index of message 0 in the global message arrays */
    gint64 max_bytes;
    gint64 slot_count; /* slots used in turn */
    gint64 slot_bytes;
    gint64 base;     /* offset in dst's SLOTS arena */
    gboolean direct; /* src writes dst's memory itself */
} Conn;

typedef struct {
    const CsSchedule *sched;
    const guint8 *direct;
    int P;
    int C;
    /* Steps of each (rank, channel) stream, as pointers into the schedule. */
    GPtrArray **chan_steps;
    GArray *conns;          /* Conn */
    GHashTable *conn_index; /* key (src, dst, channel) -> index + 1 */
    /* Per step (same layout as chan_steps): message sent and received, -1 none. */
    GArray **chan_out;
    GArray **chan_in;
    /* Per message. */
    gint64 n_msgs;
    gint32 *msg_conn;
    gint32 *arrive_ev;
    gint32 *free_ev;
    gboolean *emitted_send;
    gboolean *emitted_recv;
    gint64 *outbox_stride; /* per rank */
    CsCudaPlan *plan;
} Builder;

static const char *
algo_name(const CsSchedule *sched)
{
    return cs_schedule_algo(sched) != NULL ? cs_schedule_algo(sched) : "schedule";
}

static gint64
align_up(gint64 x, gint64 a)
{
    return (x + a - 1) / a * a;
}

static gpointer
conn_key(int src, int dst, int channel, int P)
{
    guint64 k = ((guint64)channel * (guint64)P + (guint64)src) * (guint64)P + (guint64)dst;
    return GSIZE_TO_POINTER((gsize)k + 1);
}

static int
conn_find_or_add(Builder *b, int src, int dst, int channel)
{
    gpointer key = conn_key(src, dst, channel, b->P);
    gpointer v = g_hash_table_lookup(b->conn_index, key);
    if (v != NULL)
        return GPOINTER_TO_INT(v) - 1;
    Conn c = { .src = src, .dst = dst, .channel = channel };
    g_array_append_val(b->conns, c);
    int index = (int)b->conns->len - 1;
    g_hash_table_insert(b->conn_index, key, GINT_TO_POINTER(index + 1));
    return index;
}

/* ---- Checks and matching ---- */

static gboolean
reads_src(CsStepKind kind)
{
    return kind == CS_STEP_SEND || kind == CS_STEP_RECV_REDUCE || kind == CS_STEP_RECV_REDUCE_SEND
           || kind == CS_STEP_RECV_REDUCE_COPY_SEND || kind == CS_STEP_COPY
           || kind == CS_STEP_REDUCE;
}

static gboolean
writes_dst(CsStepKind kind)
{
    return kind != CS_STEP_SEND && kind != CS_STEP_RECV_REDUCE_SEND;
}

static gboolean
region_ok(const CsSchedule *sched, guint8 buf, gint64 offset, gint64 bytes)
{
    if (buf >= CS_N_BUFS || offset < 0 || bytes < 0)
        return FALSE;
    return offset + bytes <= cs_schedule_buffer_bytes(sched, (CsBuffer)buf);
}

static gboolean
check_step(const Builder *b, int rank, gsize index, const CsStep *st, GError **error)
{
    const char *what = NULL;
    CsStepKind kind = (CsStepKind)st->kind;

    if (st->kind >= CS_N_STEP_KINDS)
        what = "unknown step kind";
    else if (st->channel >= b->C)
        what = "channel out of range";
    else if (cs_step_kind_sends(kind) && (st->send_peer < 0 || st->send_peer >= b->P))
        what = "send peer out of range";
    else if (cs_step_kind_recvs(kind) && (st->recv_peer < 0 || st->recv_peer >= b->P))
        what = "receive peer out of range";
    else if (reads_src(kind) && !region_ok(b->sched, st->src_buf, st->src_offset, st->bytes))
        what = "source region out of bounds";
    else if (writes_dst(kind) && !region_ok(b->sched, st->dst_buf, st->dst_offset, st->bytes))
        what = "destination region out of bounds";
    if (what == NULL)
        return TRUE;
    g_set_error(error, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_INVALID,
                "%s: rank %d step %" G_GSIZE_FORMAT " (%s): %s", algo_name(b->sched), rank, index,
                st->kind < CS_N_STEP_KINDS ? cs_step_kind_name(kind) : "?", what);
    return FALSE;
}

/* Splits programs into channel streams, checks every step, numbers the messages of each
 * connection in FIFO order and checks that sends and receives pair up with equal sizes. */
static gboolean
match_messages(Builder *b, GError **error)
{
    int P = b->P;
    int C = b->C;

    for (int r = 0; r < P; r++) {
        gsize n = 0;
        const CsStep *steps = cs_schedule_steps(b->sched, r, &n);
        for (gsize i = 0; i < n; i++) {
            const CsStep *st = &steps[i];
            if (!check_step(b, r, i, st, error))
                return FALSE;
            g_ptr_array_add(b->chan_steps[r * C + st->channel], (gpointer)st);
            if (cs_step_kind_sends((CsStepKind)st->kind)) {
                /* Look up first: adding may move the array. */
                int ci = conn_find_or_add(b, r, st->send_peer, st->channel);
                Conn *c = &g_array_index(b->conns, Conn, ci);
                c->n_msgs++;
                c->max_bytes = MAX(c->max_bytes, st->bytes);
            }
            if (cs_step_kind_recvs((CsStepKind)st->kind)) {
                int ci = conn_find_or_add(b, st->recv_peer, r, st->channel);
                Conn *c = &g_array_index(b->conns, Conn, ci);
                c->n_recvs++;
            }
        }
    }

    gint64 total = 0;
    for (guint i = 0; i < b->conns->len; i++) {
        Conn *c = &g_array_index(b->conns, Conn, i);
        if (c->n_msgs != c->n_recvs) {
            g_set_error(error, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_INVALID,
                        "rank %d sends %" G_GINT64_FORMAT " messages to rank %d on channel %d "
                        "but rank %d receives %" G_GINT64_FORMAT,
                        c->src, c->n_msgs, c->dst, c->channel, c->dst, c->n_recvs);
            return FALSE;
        }
        c->first_msg = total;
        total += c->n_msgs;
    }
    b->n_msgs = total;
    b->msg_conn = g_new0(gint32, total + 1);
    b->arrive_ev = g_new(gint32, total + 1);
    b->free_ev = g_new(gint32, total + 1);
    b->emitted_send = g_new0(gboolean, total + 1);
    b->emitted_recv = g_new0(gboolean, total + 1);
    g_autofree gint64 *msg_bytes = g_new0(gint64, total + 1);
    g_autofree gint64 *sent = g_new0(gint64, b->conns->len + 1);
    g_autofree gint64 *received = g_new0(gint64, b->conns->len + 1);

    /* FIFO per connection: the k-th send and the k-th receive are message first_msg + k. */
    for (int s = 0; s < P * C; s++) {
        GPtrArray *steps = b->chan_steps[s];
        int r = s / C;
        int ch = s % C;
        for (guint i = 0; i < steps->len; i++) {
            const CsStep *st = g_ptr_array_index(steps, i);
            gint64 out = -1;
            gint64 in = -1;
            if (cs_step_kind_sends((CsStepKind)st->kind)) {
                int ci = conn_find_or_add(b, r, st->send_peer, ch);
                out = g_array_index(b->conns, Conn, ci).first_msg + sent[ci]++;
                b->msg_conn[out] = ci;
                msg_bytes[out] = st->bytes;
            }
            g_array_append_val(b->chan_out[s], out);
            g_array_append_val(b->chan_in[s], in);
        }
    }
    for (int s = 0; s < P * C; s++) {
        GPtrArray *steps = b->chan_steps[s];
        int r = s / C;
        int ch = s % C;
        for (guint i = 0; i < steps->len; i++) {
            const CsStep *st = g_ptr_array_index(steps, i);
            if (!cs_step_kind_recvs((CsStepKind)st->kind))
                continue;
            int ci = conn_find_or_add(b, st->recv_peer, r, ch);
            gint64 in = g_array_index(b->conns, Conn, ci).first_msg + received[ci]++;
            if (msg_bytes[in] != st->bytes) {
                g_set_error(error, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_INVALID,
                            "rank %d receives %" G_GINT64_FORMAT " bytes from rank %d on "
                            "channel %d where %" G_GINT64_FORMAT " were sent",
                            r, st->bytes, st->recv_peer, ch, msg_bytes[in]);
                return FALSE;
            }
            g_array_index(b->chan_in[s], gint64, i) = in;
        }
    }
    return TRUE;
}

/* ---- Layout ---- */

static void
lay_out_memory(Builder *b, int slots)
{
    int P = b->P;
    int C = b->C;
    gint64 *mem = b->plan->mem_bytes;
    g_autofree gboolean *staged_into = g_new0(gboolean, P);

    for (int r = 0; r < P; r++) {
        mem[r * CS_CUDA_N_MEMS + CS_CUDA_MEM_INPUT]
            = cs_schedule_buffer_bytes(b->sched, CS_BUF_INPUT);
        mem[r * CS_CUDA_N_MEMS + CS_CUDA_MEM_OUTPUT]
            = cs_schedule_buffer_bytes(b->sched, CS_BUF_OUTPUT);
        mem[r * CS_CUDA_N_MEMS + CS_CUDA_MEM_SCRATCH]
            = cs_schedule_buffer_bytes(b->sched, CS_BUF_SCRATCH);
        mem[r * CS_CUDA_N_MEMS + CS_CUDA_MEM_SLOTS] = 0;
        mem[r * CS_CUDA_N_MEMS + CS_CUDA_MEM_OUTBOX] = 0;
        mem[r * CS_CUDA_N_MEMS + CS_CUDA_MEM_HOST_STAGE] = 0;
        b->outbox_stride[r] = 0;
    }
    for (guint i = 0; i < b->conns->len; i++) {
        Conn *c = &g_array_index(b->conns, Conn, i);
        c->direct = b->direct == NULL || b->direct[c->src * P + c->dst] != 0;
        c->slot_count = slots > 0 ? MIN((gint64)slots, c->n_msgs) : c->n_msgs;
        c->slot_bytes = align_up(c->max_bytes, SLOT_ALIGN);
        gint64 *slot_arena = &mem[c->dst * CS_CUDA_N_MEMS + CS_CUDA_MEM_SLOTS];
        c->base = *slot_arena;
        *slot_arena += c->slot_count * c->slot_bytes;
        if (!c->direct) {
            staged_into[c->dst] = TRUE;
            /* A fused reduce-and-send parks its result in the sender's outbox first. */
            b->outbox_stride[c->src] = MAX(b->outbox_stride[c->src], c->slot_bytes);
        }
    }
    for (int r = 0; r < P; r++) {
        if (staged_into[r])
            mem[r * CS_CUDA_N_MEMS + CS_CUDA_MEM_HOST_STAGE]
                = mem[r * CS_CUDA_N_MEMS + CS_CUDA_MEM_SLOTS];
        mem[r * CS_CUDA_N_MEMS + CS_CUDA_MEM_OUTBOX] = (gint64)C * b->outbox_stride[r];
    }
}

/* ---- Emission ---- */

static CsCudaRef
ref(int rank, int mem, gint64 offset)
{
    CsCudaRef x = { .offset = offset, .rank = rank, .mem = mem };
    return x;
}

static const CsCudaRef no_ref = { .offset = 0, .rank = -1, .mem = -1 };

static const Conn *
msg_conn(const Builder *b, gint64 msg)
{
    return &g_array_index(b->conns, Conn, b->msg_conn[msg]);
}

static gint64
slot_offset(const Builder *b, gint64 msg)
{
    const Conn *c = msg_conn(b, msg);
    gint64 k = msg - c->first_msg;
    return c->base + (k % c->slot_count) * c->slot_bytes;
}

/* Appends an xop waiting for @n_waits events (negative entries skipped); returns its index. */
static gsize
emit(Builder *b, int stream, int action, CsCudaRef dst, CsCudaRef dst2, CsCudaRef a,
     CsCudaRef src_b, gint64 bytes, const gint32 *waits, int n_waits)
{
    CsCudaPlan *plan = b->plan;
    CsCudaXop x = {
        .dst = dst,
        .dst2 = dst2,
        .a = a,
        .b = src_b,
        .bytes = bytes,
        .stream = stream,
        .action = action,
        .wait_first = (gint32)plan->waits->len,
        .n_waits = 0,
        .record = -1,
    };
    for (int i = 0; i < n_waits; i++) {
        if (waits[i] < 0)
            continue;
        g_array_append_val(plan->waits, waits[i]);
        x.n_waits++;
    }
    g_array_append_val(plan->xops, x);
    return plan->xops->len - 1;
}

/* The event that xop @index records, created on first use. */
static gint32
event_of(Builder *b, gsize index)
{
    CsCudaXop *x = &g_array_index(b->plan->xops, CsCudaXop, index);
    if (x->record < 0)
        x->record = b->plan->view.n_events++;
    return x->record;
}

/* Message @msg is in its slot once xop @index is done. */
static void
signal_arrival(Builder *b, gsize index, gint64 msg)
{
    b->arrive_ev[msg] = event_of(b, index);
    b->emitted_send[msg] = TRUE;
}

/* Xop @index has consumed @msg's slot; record that only if a later message reuses it. */
static void
signal_free(Builder *b, gsize index, gint64 msg)
{
    const Conn *c = msg_conn(b, msg);
    b->emitted_recv[msg] = TRUE;
    if (msg - c->first_msg + c->slot_count < c->n_msgs)
        b->free_ev[msg] = event_of(b, index);
}

/* The event a send of @msg waits for before overwriting its slot, or -1. */
static gint32
slot_free_wait(const Builder *b, gint64 msg)
{
    const Conn *c = msg_conn(b, msg);
    gint64 k = msg - c->first_msg;
    return k >= c->slot_count ? b->free_ev[msg - c->slot_count] : -1;
}

/* Sends @src (on @stream, after its order) as message @msg, through pinned host memory. */
static void
emit_staged_send(Builder *b, int stream, CsCudaRef src, gint64 bytes, gint64 msg)
{
    const Conn *c = msg_conn(b, msg);
    gint64 off = slot_offset(b, msg);
    gint32 w = slot_free_wait(b, msg);
    gsize down = emit(b, stream, CS_CUDA_XOP_COPY, ref(c->dst, CS_CUDA_MEM_HOST_STAGE, off), no_ref,
                      src, no_ref, bytes, &w, 1);
    gint32 staged = event_of(b, down);
    int stage_stream = (b->P + c->dst) * b->C + c->channel;
    gsize up = emit(b, stage_stream, CS_CUDA_XOP_COPY, ref(c->dst, CS_CUDA_MEM_SLOTS, off), no_ref,
                    ref(c->dst, CS_CUDA_MEM_HOST_STAGE, off), no_ref, bytes, &staged, 1);
    signal_arrival(b, up, msg);
}

static void
emit_send(Builder *b, int stream, CsCudaRef src, gint64 bytes, gint64 msg)
{
    const Conn *c = msg_conn(b, msg);
    if (!c->direct) {
        emit_staged_send(b, stream, src, bytes, msg);
        return;
    }
    gint32 w = slot_free_wait(b, msg);
    gsize x = emit(b, stream, CS_CUDA_XOP_COPY, ref(c->dst, CS_CUDA_MEM_SLOTS, slot_offset(b, msg)),
                   no_ref, src, no_ref, bytes, &w, 1);
    signal_arrival(b, x, msg);
}

static void
emit_step(Builder *b, int rank, int channel, const CsStep *st, gint64 in, gint64 out)
{
    int s = rank * b->C + channel;
    CsCudaRef src = ref(rank, st->src_buf, st->src_offset);
    CsCudaRef dst = ref(rank, st->dst_buf, st->dst_offset);
    CsCudaRef slot_in = in >= 0 ? ref(rank, CS_CUDA_MEM_SLOTS, slot_offset(b, in)) : no_ref;
    gint32 waits[2] = { in >= 0 ? b->arrive_ev[in] : -1, -1 };
    gboolean direct = out < 0 || msg_conn(b, out)->direct;
    CsCudaRef remote = no_ref;
    gsize x;

    if (out >= 0 && direct) {
        remote = ref(msg_conn(b, out)->dst, CS_CUDA_MEM_SLOTS, slot_offset(b, out));
        waits[1] = slot_free_wait(b, out);
    }

    switch ((CsStepKind)st->kind) {
    case CS_STEP_SEND:
        emit_send(b, s, src, st->bytes, out);
        return;
    case CS_STEP_RECV:
        x = emit(b, s, CS_CUDA_XOP_COPY, dst, no_ref, slot_in, no_ref, st->bytes, waits, 1);
        signal_free(b, x, in);
        return;
    case CS_STEP_RECV_REDUCE:
        x = emit(b, s, CS_CUDA_XOP_REDUCE, dst, no_ref, slot_in, src, st->bytes, waits, 1);
        signal_free(b, x, in);
        return;
    case CS_STEP_RECV_REDUCE_SEND:
        if (direct) {
            /* NCCL's fused primitive: the kernel writes straight into the peer's slot. */
            x = emit(b, s, CS_CUDA_XOP_REDUCE, remote, no_ref, slot_in, src, st->bytes, waits, 2);
            signal_free(b, x, in);
            signal_arrival(b, x, out);
            return;
        }
        {
            CsCudaRef box = ref(rank, CS_CUDA_MEM_OUTBOX, channel * b->outbox_stride[rank]);
            x = emit(b, s, CS_CUDA_XOP_REDUCE, box, no_ref, slot_in, src, st->bytes, waits, 1);
            signal_free(b, x, in);
            emit_staged_send(b, s, box, st->bytes, out);
        }
        return;
    case CS_STEP_RECV_REDUCE_COPY_SEND:
        if (direct) {
            x = emit(b, s, CS_CUDA_XOP_REDUCE, dst, remote, slot_in, src, st->bytes, waits, 2);
            signal_free(b, x, in);
            signal_arrival(b, x, out);
            return;
        }
        x = emit(b, s, CS_CUDA_XOP_REDUCE, dst, no_ref, slot_in, src, st->bytes, waits, 1);
        signal_free(b, x, in);
        emit_staged_send(b, s, dst, st->bytes, out);
        return;
    case CS_STEP_RECV_COPY_SEND:
        if (direct) {
            x = emit(b, s, CS_CUDA_XOP_COPY, dst, remote, slot_in, no_ref, st->bytes, waits, 2);
            signal_free(b, x, in);
            signal_arrival(b, x, out);
            return;
        }
        x = emit(b, s, CS_CUDA_XOP_COPY, dst, no_ref, slot_in, no_ref, st->bytes, waits, 1);
        signal_free(b, x, in);
        emit_staged_send(b, s, dst, st->bytes, out);
        return;
    case CS_STEP_COPY:
        if (st->src_buf != st->dst_buf || st->src_offset != st->dst_offset)
            emit(b, s, CS_CUDA_XOP_COPY, dst, no_ref, src, no_ref, st->bytes, NULL, 0);
        return;
    case CS_STEP_REDUCE:
        emit(b, s, CS_CUDA_XOP_REDUCE, dst, no_ref, dst, src, st->bytes, NULL, 0);
        return;
    case CS_N_STEP_KINDS:
    default:
        g_assert_not_reached();
    }
}

/* Whether a step receiving @in and sending @out (-1: none) may be issued now: its message has
 * been sent, and the slot its own message will take has been consumed. */
static gboolean
step_ready(const Builder *b, gint64 in, gint64 out)
{
    if (in >= 0 && !b->emitted_send[in])
        return FALSE;
    if (out >= 0) {
        const Conn *c = msg_conn(b, out);
        gint64 k = out - c->first_msg;
        if (k >= c->slot_count && !b->emitted_recv[out - c->slot_count])
            return FALSE;
    }
    return TRUE;
}

/* Issues every step in an order the GPU can follow; FALSE if the slot bound deadlocks. */
static gboolean
emit_all(Builder *b)
{
    int n_streams = b->P * b->C;
    g_autofree guint *pos = g_new0(guint, n_streams);
    gboolean progress = TRUE;
    gboolean finished = FALSE;

    while (progress && !finished) {
        progress = FALSE;
        finished = TRUE;
        for (int s = 0; s < n_streams; s++) {
            GPtrArray *steps = b->chan_steps[s];
            while (pos[s] < steps->len) {
                gint64 in = g_array_index(b->chan_in[s], gint64, pos[s]);
                gint64 out = g_array_index(b->chan_out[s], gint64, pos[s]);
                if (!step_ready(b, in, out))
                    break;
                emit_step(b, s / b->C, s % b->C, g_ptr_array_index(steps, pos[s]), in, out);
                pos[s]++;
                progress = TRUE;
            }
            if (pos[s] < steps->len)
                finished = FALSE;
        }
    }
    return finished;
}

/* An average ends with each rank dividing its reduced output, once all its channels are done. */
static void
emit_average(Builder *b)
{
    CsOp op = cs_schedule_op(b->sched);
    if (cs_schedule_redop(b->sched) != CS_REDOP_AVG || !cs_op_reduces(op))
        return;
    gint64 bytes = cs_schedule_size(b->sched)->recv_bytes;
    g_autofree gint32 *ends = g_new(gint32, b->C);

    for (int r = 0; r < b->P; r++) {
        if (op == CS_OP_REDUCE && r != cs_schedule_root(b->sched))
            continue;
        for (int c = 1; c < b->C; c++) {
            gsize x = emit(b, r * b->C + c, CS_CUDA_XOP_NOP, no_ref, no_ref, no_ref, no_ref, 0,
                           NULL, 0);
            ends[c - 1] = event_of(b, x);
        }
        emit(b, r * b->C, CS_CUDA_XOP_DIVIDE, ref(r, CS_CUDA_MEM_OUTPUT, 0), no_ref,
             ref(r, CS_CUDA_MEM_OUTPUT, 0), no_ref, bytes, ends, b->C - 1);
    }
}

static void
reset_emission(Builder *b)
{
    CsCudaPlan *plan = b->plan;
    g_array_set_size(plan->xops, 0);
    g_array_set_size(plan->waits, 0);
    plan->view.n_events = 0;
    for (gint64 m = 0; m < b->n_msgs; m++) {
        b->arrive_ev[m] = -1;
        b->free_ev[m] = -1;
        b->emitted_send[m] = FALSE;
        b->emitted_recv[m] = FALSE;
    }
}

static void
builder_clear(Builder *b)
{
    int n = b->P * b->C;
    for (int s = 0; s < n; s++) {
        g_ptr_array_unref(b->chan_steps[s]);
        g_array_unref(b->chan_out[s]);
        g_array_unref(b->chan_in[s]);
    }
    g_free(b->chan_steps);
    g_free(b->chan_out);
    g_free(b->chan_in);
    g_array_unref(b->conns);
    g_hash_table_unref(b->conn_index);
    g_free(b->msg_conn);
    g_free(b->arrive_ev);
    g_free(b->free_ev);
    g_free(b->emitted_send);
    g_free(b->emitted_recv);
    g_free(b->outbox_stride);
}

static CsCudaPlan *
plan_alloc(int P, int C)
{
    CsCudaPlan *plan = g_new0(CsCudaPlan, 1);
    plan->xops = g_array_new(FALSE, FALSE, sizeof(CsCudaXop));
    plan->waits = g_array_new(FALSE, FALSE, sizeof(gint32));
    plan->view.n_streams = 2 * P * C;
    plan->stream_rank = g_new(gint32, plan->view.n_streams);
    for (int s = 0; s < plan->view.n_streams; s++)
        plan->stream_rank[s] = (s % (P * C)) / C;
    plan->view.n_ranks = P;
    plan->mem_bytes = g_new0(gint64, (gsize)P * CS_CUDA_N_MEMS);
    return plan;
}

CsCudaPlan *
cs_cuda_plan_new(const CsSchedule *sched, const guint8 *direct, GError **error)
{
    g_return_val_if_fail(sched != NULL, NULL);
    int P = cs_schedule_n_ranks(sched);
    int C = cs_schedule_n_channels(sched);
    g_autoptr(CsCudaPlan) plan = plan_alloc(P, C);
    Builder b = {
        .sched = sched,
        .direct = direct,
        .P = P,
        .C = C,
        .plan = plan,
        .chan_steps = g_new(GPtrArray *, P * C),
        .chan_out = g_new(GArray *, P * C),
        .chan_in = g_new(GArray *, P * C),
        .conns = g_array_new(FALSE, FALSE, sizeof(Conn)),
        .conn_index = g_hash_table_new(g_direct_hash, g_direct_equal),
        .outbox_stride = g_new0(gint64, P),
    };
    for (int s = 0; s < P * C; s++) {
        b.chan_steps[s] = g_ptr_array_new();
        b.chan_out[s] = g_array_new(FALSE, FALSE, sizeof(gint64));
        b.chan_in[s] = g_array_new(FALSE, FALSE, sizeof(gint64));
    }

    gboolean ok = match_messages(&b, error);
    if (ok) {
        /* NCCL's bounded slots first; a schedule that needs more buffering gets it. */
        plan->slots = CS_CUDA_PLAN_SLOTS;
        lay_out_memory(&b, plan->slots);
        reset_emission(&b);
        if (!emit_all(&b)) {
            g_debug("%s: deadlocks with %d slots per connection; one slot per message",
                    algo_name(sched), CS_CUDA_PLAN_SLOTS);
            plan->slots = 0;
            lay_out_memory(&b, 0);
            reset_emission(&b);
            if (!emit_all(&b)) {
                g_set_error(error, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_DEADLOCK,
                            "%s: a receive never matches a send (the schedule deadlocks)",
                            algo_name(sched));
                ok = FALSE;
            }
        }
    }
    if (ok)
        emit_average(&b);
    builder_clear(&b);
    if (!ok)
        return NULL;

    plan->view.xops = (const CsCudaXop *)(gpointer)plan->xops->data;
    plan->view.n_xops = plan->xops->len;
    plan->view.waits = (const gint32 *)(gpointer)plan->waits->data;
    plan->view.stream_rank = plan->stream_rank;
    plan->view.mem_bytes = plan->mem_bytes;
    plan->view.dtype = cs_schedule_dtype(sched);
    plan->view.redop = cs_schedule_redop(sched);
    plan->view.divisor = P;
    return g_steal_pointer(&plan);
}

void
cs_cuda_plan_free(CsCudaPlan *plan)
{
    if (plan == NULL)
        return;
    g_array_unref(plan->xops);
    g_array_unref(plan->waits);
    g_free(plan->stream_rank);
    g_free(plan->mem_bytes);
    g_free(plan);
}

const CsCudaPlanView *
cs_cuda_plan_view(const CsCudaPlan *plan)
{
    return &plan->view;
}

int
cs_cuda_plan_slots(const CsCudaPlan *plan)
{
    return plan->slots;
}

/* ---- Host interpreter ---- */

static guint8 *
host_address(guint8 *const *mem, CsCudaRef r)
{
    return mem[r.rank * CS_CUDA_N_MEMS + r.mem] + r.offset;
}

static void
run_xop_host(const CsCudaPlanView *v, const CsCudaXop *x, guint8 *const *mem)
{
    if (x->bytes == 0 || x->action == CS_CUDA_XOP_NOP)
        return;
    CsDtype dtype = (CsDtype)v->dtype;
    gint64 n = x->bytes / cs_dtype_size(dtype);
    CsRedop redop = v->redop == CS_REDOP_AVG ? CS_REDOP_SUM : (CsRedop)v->redop;
    guint8 *dst = host_address(mem, x->dst);

    switch (x->action) {
    case CS_CUDA_XOP_COPY:
        memmove(dst, host_address(mem, x->a), (gsize)x->bytes);
        break;
    case CS_CUDA_XOP_REDUCE:
        cs_reference_reduce(dst, host_address(mem, x->a), host_address(mem, x->b), n, dtype, redop);
        break;
    case CS_CUDA_XOP_DIVIDE:
        cs_reference_divide(dst, n, dtype, v->divisor);
        return;
    default:
        g_assert_not_reached();
    }
    if (x->dst2.mem >= 0)
        memmove(host_address(mem, x->dst2), dst, (gsize)x->bytes);
}

void
cs_cuda_plan_run_host(const CsCudaPlan *plan, guint8 *const *mem, guint32 seed)
{
    const CsCudaPlanView *v = &plan->view;
    gsize n = (gsize)v->n_xops;

    if (seed == 0) {
        for (gsize i = 0; i < n; i++)
            run_xop_host(v, &v->xops[i], mem);
        return;
    }

    /* Dependencies: the previous xop of the same stream, and the recorder of each event. */
    g_autofree gint64 *recorder = g_new(gint64, v->n_events + 1);
    g_autofree gint64 *last_on_stream = g_new(gint64, v->n_streams);
    g_autofree guint *indegree = g_new0(guint, n + 1);
    g_autofree gsize *succ_count = g_new0(gsize, n + 1);
    for (int s = 0; s < v->n_streams; s++)
        last_on_stream[s] = -1;
    for (gsize i = 0; i < n; i++)
        if (v->xops[i].record >= 0)
            recorder[v->xops[i].record] = (gint64)i;

    /* Edges as pairs, then a compressed successor array. */
    GArray *edges_from = g_array_new(FALSE, FALSE, sizeof(gint64));
    GArray *edges_to = g_array_new(FALSE, FALSE, sizeof(gint64));
    for (gsize i = 0; i < n; i++) {
        const CsCudaXop *x = &v->xops[i];
        gint64 prev = last_on_stream[x->stream];
        if (prev >= 0) {
            g_array_append_val(edges_from, prev);
            gint64 to = (gint64)i;
            g_array_append_val(edges_to, to);
        }
        last_on_stream[x->stream] = (gint64)i;
        for (int w = 0; w < x->n_waits; w++) {
            gint64 from = recorder[v->waits[x->wait_first + w]];
            g_assert(from < (gint64)i);
            g_array_append_val(edges_from, from);
            gint64 to = (gint64)i;
            g_array_append_val(edges_to, to);
        }
    }
    g_autofree gsize *succ_first = g_new0(gsize, n + 1);
    g_autofree gint64 *succ = g_new(gint64, edges_from->len + 1);
    for (guint e = 0; e < edges_from->len; e++) {
        succ_count[g_array_index(edges_from, gint64, e)]++;
        indegree[g_array_index(edges_to, gint64, e)]++;
    }
    for (gsize i = 0; i < n; i++)
        succ_first[i + 1] = succ_first[i] + succ_count[i];
    memset(succ_count, 0, (n + 1) * sizeof(gsize));
    for (guint e = 0; e < edges_from->len; e++) {
        gint64 from = g_array_index(edges_from, gint64, e);
        succ[succ_first[from] + succ_count[from]++] = g_array_index(edges_to, gint64, e);
    }
    g_array_unref(edges_from);
    g_array_unref(edges_to);

    g_autoptr(GRand) rand = g_rand_new_with_seed(seed);
    g_autoptr(GArray) ready = g_array_new(FALSE, FALSE, sizeof(gint64));
    for (gsize i = 0; i < n; i++)
        if (indegree[i] == 0) {
            gint64 x = (gint64)i;
            g_array_append_val(ready, x);
        }
    gsize done = 0;
    while (ready->len > 0) {
        guint pick = (guint)g_rand_int_range(rand, 0, (gint32)ready->len);
        gint64 i = g_array_index(ready, gint64, pick);
        g_array_remove_index_fast(ready, pick);
        run_xop_host(v, &v->xops[i], mem);
        done++;
        for (gsize k = succ_first[i]; k < succ_first[i + 1]; k++)
            if (--indegree[succ[k]] == 0)
                g_array_append_val(ready, succ[k]);
    }
    g_assert(done == n);
}
