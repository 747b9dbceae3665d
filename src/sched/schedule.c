// SPDX-License-Identifier: MIT
/* Schedule IR: algorithms append steps to per-rank programs, cs_schedule_seal() packs them into
 * one contiguous array that the checker, the engine and the backends read. */
#include "sched/schedule.h"

#include <string.h>

#include "base/membudget.h"

G_DEFINE_QUARK(cs_schedule_error_quark, cs_schedule_error)

/* Steps a program's array holds when it is first needed; it doubles from there. */
#define STEPS_RESERVE 32

/* A growing array of steps. */
typedef struct {
    CsStep *steps;
    gsize len;
    gsize cap;
} Program;

struct _CsSchedule {
    CsOp op;
    int nranks;
    int root;
    CsDtype dtype;
    CsRedop redop;
    CsProto proto;
    int n_channels;
    CsOpSize size;
    gint64 scratch_bytes; /* bytes: per rank */
    const char *algo;     /* static string, NULL until set */
    gboolean p2p_split;   /* a channel's sends and receives run side by side */
    int *nic_lanes;       /* per channel: the NIC lane its network connections use; NULL = own */
    int period;           /* ranks 0..period-1 hold steps; the rest repeat them (nranks: all) */

    int dtype_size;    /* bytes: cs_dtype_size (dtype), which every region is checked against */
    gint64 dtype_mask; /* dtype_size - 1 where that is a power of two (a region's check without a
                        * division), else -1 */

    /* While building, steps go to @packed as long as they come rank by rank (every step of
     * a rank before any of a later rank's: the step sink's flush, a one-channel ring): that
     * array is then the sealed one, as it is. A step for a rank before @tail sends that rank's
     * later steps, and every later step, to @scattered, and sealing packs both. */
    gboolean sealed;
    Program packed;     /* while building: the steps of ranks 0 .. @tail, rank-major */
    int tail;           /* the last rank with steps in @packed, -1 before any */
    Program *scattered; /* while building, NULL until needed: per rank, steps after @packed's */
    CsStep *steps;      /* sealed: every rank's program, rank-major */
    gsize *first;       /* nranks + 1 offsets into @steps (@packed while building, to @tail) */
    gsize n_steps;
    gsize n_added;       /* steps appended so far, all ranks */
    gsize max_steps;     /* cs_schedule_max_steps() when it was started */
    gboolean overflowed; /* steps were dropped past max_steps */
};

/* ---- Limits ---- */

gsize
cs_schedule_max_steps(void)
{
    guint64 by_memory = cs_membudget_bytes() / CS_SCHEDULE_STEP_PEAK_BYTES;
    return (gsize)MIN(by_memory, (guint64)CS_SCHEDULE_MAX_STEPS);
}

char *
cs_schedule_limit_reason(double est_steps)
{
    gsize max = cs_schedule_max_steps();
    if (max >= CS_SCHEDULE_MAX_STEPS)
        return g_strdup_printf("more than %" G_GSIZE_FORMAT " steps, too many to hold in memory",
                               max);
    g_autofree char *budget = cs_membudget_format(cs_membudget_bytes());
    if (est_steps <= (double)max)
        return g_strdup_printf("more than %" G_GSIZE_FORMAT
                               " steps: over %s of memory at %" G_GSIZE_FORMAT
                               " B a step, beyond the memory budget (%s)",
                               max, budget, CS_SCHEDULE_STEP_PEAK_BYTES, cs_membudget_source());
    g_autofree char *need
        = cs_membudget_format((guint64)MIN(est_steps * CS_SCHEDULE_STEP_PEAK_BYTES, 1e19));
    return g_strdup_printf("about %.0f steps: %s of memory at %" G_GSIZE_FORMAT
                           " B a step, beyond the memory budget of %s (%s)",
                           est_steps, need, CS_SCHEDULE_STEP_PEAK_BYTES, budget,
                           cs_membudget_source());
}

/* ---- Life cycle ---- */

/**
 * cs_schedule_new:
 * Starts an empty schedule for @op over @nranks ranks; buffer sizes come from cs_op_size().
 * Rootless collectives store root 0 whatever @root says.
 * Returns: (transfer full): the schedule, to fill with cs_schedule_add() and seal.
 */
CsSchedule *
cs_schedule_new(CsOp op, int nranks, int root, gint64 size_bytes, CsDtype dtype, CsRedop redop,
                CsProto proto, int n_channels)
{
    g_return_val_if_fail(op >= 0 && op < CS_N_OPS, NULL);
    g_return_val_if_fail(nranks >= 1, NULL);
    g_return_val_if_fail(!cs_op_has_root(op) || (root >= 0 && root < nranks), NULL);
    g_return_val_if_fail(size_bytes >= 0, NULL);
    g_return_val_if_fail(dtype >= 0 && dtype < CS_N_DTYPES, NULL);
    g_return_val_if_fail(redop >= 0 && redop < CS_N_REDOPS, NULL);
    g_return_val_if_fail(proto >= 0 && proto < CS_N_PROTOS, NULL);
    /* CsStep.channel is a guint8. */
    g_return_val_if_fail(n_channels >= 1 && n_channels <= 256, NULL);

    CsSchedule *sched = g_new0(CsSchedule, 1);
    sched->op = op;
    sched->nranks = nranks;
    sched->root = cs_op_has_root(op) ? root : 0;
    sched->dtype = dtype;
    sched->redop = redop;
    sched->proto = proto;
    sched->n_channels = n_channels;
    sched->size = cs_op_size(op, size_bytes, dtype, nranks);
    sched->period = nranks;
    sched->max_steps = cs_schedule_max_steps();
    sched->dtype_size = cs_dtype_size(dtype);
    sched->dtype_mask
        = (sched->dtype_size & (sched->dtype_size - 1)) == 0 ? sched->dtype_size - 1 : -1;
    sched->tail = -1;
    sched->first = g_new0(gsize, (gsize)nranks + 1);
    return sched;
}

void
cs_schedule_free(CsSchedule *sched)
{
    if (sched == NULL)
        return;
    if (sched->scattered != NULL) {
        for (int r = 0; r < sched->period; r++)
            g_free(sched->scattered[r].steps);
        g_free(sched->scattered);
    }
    g_free(sched->packed.steps);
    g_free(sched->steps);
    g_free(sched->first);
    g_free(sched->nic_lanes);
    g_free(sched);
}

/* Declares @scratch_bytes of algorithm-private memory on every rank. */
void
cs_schedule_set_scratch(CsSchedule *sched, gint64 scratch_bytes)
{
    g_return_if_fail(sched != NULL);
    g_return_if_fail(scratch_bytes >= 0);
    g_return_if_fail(!sched->sealed);
    sched->scratch_bytes = scratch_bytes;
}

/* Records which algorithm built @sched; @algo_name must outlive it (a static string). */
void
cs_schedule_set_algo(CsSchedule *sched, const char *algo_name)
{
    g_return_if_fail(sched != NULL);
    sched->algo = algo_name;
}

/**
 * cs_schedule_set_period:
 * Declares that @sched repeats under the rank shift r -> (r + @period) mod nranks: rank
 * r + k @period runs rank r's program with every peer shifted by k @period, moving the same
 * bytes on the same channels (offsets may differ: they do not change when anything happens).
 * Only ranks 0 .. @period - 1 then hold steps; before any step is added. The engine runs such
 * a schedule on one period of ranks where the machine repeats too (engine.c, "Symmetry");
 * the checker and the backends need every rank's program and refuse it.
 */
void
cs_schedule_set_period(CsSchedule *sched, int period)
{
    g_return_if_fail(sched != NULL && !sched->sealed);
    g_return_if_fail(period >= 1 && period <= sched->nranks && sched->nranks % period == 0);
    g_return_if_fail(sched->n_added == 0 && sched->period == sched->nranks);
    sched->period = period;
}

int
cs_schedule_period(const CsSchedule *sched)
{
    return sched->period;
}

/* ---- Building ---- */

gboolean
cs_step_kind_sends(CsStepKind kind)
{
    return kind == CS_STEP_SEND || kind == CS_STEP_RECV_REDUCE_SEND
           || kind == CS_STEP_RECV_REDUCE_COPY_SEND || kind == CS_STEP_RECV_COPY_SEND;
}

gboolean
cs_step_kind_recvs(CsStepKind kind)
{
    return kind == CS_STEP_RECV || kind == CS_STEP_RECV_REDUCE || kind == CS_STEP_RECV_REDUCE_SEND
           || kind == CS_STEP_RECV_REDUCE_COPY_SEND || kind == CS_STEP_RECV_COPY_SEND;
}

/* Whether a step of @kind reads its local @src region (all but RECV and RECV_COPY_SEND). */
gboolean
cs_step_kind_reads_src(CsStepKind kind)
{
    return kind != CS_STEP_RECV && kind != CS_STEP_RECV_COPY_SEND;
}

/* Whether a step of @kind writes its local @dst region (all but SEND and RECV_REDUCE_SEND). */
gboolean
cs_step_kind_writes_dst(CsStepKind kind)
{
    return kind != CS_STEP_SEND && kind != CS_STEP_RECV_REDUCE_SEND;
}

/* Whether @offset and @bytes (not negative) are whole elements of the datatype. */
static inline gboolean
whole_elements(const CsSchedule *sched, gint64 offset, gint64 bytes)
{
    if (sched->dtype_mask >= 0)
        return ((offset | bytes) & sched->dtype_mask) == 0;
    return offset % sched->dtype_size == 0 && bytes % sched->dtype_size == 0;
}

static gboolean
region_ok(const CsSchedule *sched, guint buf, gint64 offset, gint64 bytes)
{
    return buf < CS_N_BUFS && offset >= 0 && whole_elements(sched, offset, bytes)
           && offset <= cs_schedule_buffer_bytes(sched, (CsBuffer)buf) - bytes;
}

/* Whether @flags (CsStepFlags) make sense on a step of @kind: known bits, only on a step that
 * sends, a multicast member or a send from the switch only on a plain SEND, never both member
 * and leader of one kind of group, and a send from the switch no other flag. Whether the
 * group holds together is the checker's (check.c). */
static gboolean
flags_ok(CsStepKind kind, guint flags)
{
    if (flags == 0)
        return TRUE;
    if ((flags & ~(guint)CS_STEP_FLAGS_ALL) != 0 || !cs_step_kind_sends(kind))
        return FALSE;
    if ((flags & CS_STEP_FLAG_SHARED_FIRST_HOP) != 0
        && (kind != CS_STEP_SEND || (flags & CS_STEP_FLAG_MULTICAST_SELF) != 0))
        return FALSE;
    if ((flags & CS_STEP_FLAG_FROM_SWITCH) != 0
        && (kind != CS_STEP_SEND || flags != CS_STEP_FLAG_FROM_SWITCH))
        return FALSE;
    return (flags & CS_STEP_FLAG_SHARED_LAST_HOP) == 0 || (flags & CS_STEP_FLAG_REDUCE_SELF) == 0;
}

/* Makes room in @prog for @more steps beyond its length: at least doubled, so that appending
 * costs a constant time per step (a large array grows in place, where realloc can remap it). */
static void
program_grow(Program *prog, gsize more)
{
    gsize cap = MAX(MAX(prog->len + more, 2 * prog->cap), (gsize)STEPS_RESERVE);

    prog->steps = g_renew(CsStep, prog->steps, cap);
    prog->cap = cap;
}

/* The array @rank's next step goes to: @packed while steps come rank by rank (opening the
 * ranks up to @rank there), else the rank's own (see struct _CsSchedule). */
static Program *
program_for(CsSchedule *sched, int rank)
{
    if (sched->scattered == NULL) {
        if (rank == sched->tail)
            return &sched->packed;
        if (rank > sched->tail) {
            for (int r = sched->tail + 1; r <= rank; r++)
                sched->first[r] = sched->packed.len;
            sched->tail = rank;
            return &sched->packed;
        }
        sched->scattered = g_new0(Program, sched->period);
    }
    return &sched->scattered[rank];
}

/**
 * cs_schedule_add:
 * Appends a copy of @step to @rank's program. A malformed step (peer out of range, a region
 * outside its buffer or not aligned to the datatype, negative bytes, a channel beyond
 * n_channels, flags that do not fit its kind) is a programming error in the algorithm: it is
 * refused with a critical warning.
 */
void
cs_schedule_add(CsSchedule *sched, int rank, const CsStep *step)
{
    g_return_if_fail(sched != NULL && step != NULL);
    g_return_if_fail(!sched->sealed);
    g_return_if_fail(rank >= 0 && rank < sched->period);
    g_return_if_fail(step->kind < CS_N_STEP_KINDS);
    g_return_if_fail(step->channel < sched->n_channels);
    g_return_if_fail(step->bytes >= 0);
    CsStepKind kind = (CsStepKind)step->kind;
    if (cs_step_kind_sends(kind))
        g_return_if_fail(step->send_peer >= 0 && step->send_peer < sched->nranks);
    else
        g_return_if_fail(step->send_peer == -1);
    if (cs_step_kind_recvs(kind))
        g_return_if_fail(step->recv_peer >= 0 && step->recv_peer < sched->nranks);
    else
        g_return_if_fail(step->recv_peer == -1);
    if (cs_step_kind_reads_src(kind))
        g_return_if_fail(region_ok(sched, step->src_buf, step->src_offset, step->bytes));
    if (cs_step_kind_writes_dst(kind))
        g_return_if_fail(region_ok(sched, step->dst_buf, step->dst_offset, step->bytes));
    g_return_if_fail(flags_ok(kind, step->flags));

    if (sched->n_added >= sched->max_steps) {
        sched->overflowed = TRUE;
        return;
    }
    sched->n_added++;
    Program *prog = program_for(sched, rank);
    if (prog->len == prog->cap)
        program_grow(prog, 1);
    prog->steps[prog->len++] = *step;
}

gboolean
cs_schedule_overflowed(const CsSchedule *sched)
{
    g_return_val_if_fail(sched != NULL, FALSE);
    return sched->overflowed;
}

void
cs_schedule_mark_overflowed(CsSchedule *sched)
{
    g_return_if_fail(sched != NULL);
    sched->overflowed = TRUE;
}

/**
 * cs_schedule_reserve:
 * Makes room for @n_steps more steps in @rank's program, so that appending them copies
 * nothing.
 */
void
cs_schedule_reserve(CsSchedule *sched, int rank, gsize n_steps)
{
    g_return_if_fail(sched != NULL && !sched->sealed);
    g_return_if_fail(rank >= 0 && rank < sched->period);

    /* Steps that will be dropped get no room. */
    if (n_steps > sched->max_steps - MIN(sched->n_added, sched->max_steps))
        return;
    Program *prog = program_for(sched, rank);
    if (prog->cap - prog->len < n_steps)
        program_grow(prog, n_steps);
}

/**
 * cs_schedule_reserve_ranks:
 * Makes room for @n_steps more steps in all, which will come rank by rank from @first_rank on
 * (every step of a rank before any of a later rank's): one array grows once, where growing it
 * step by step would copy it as it doubles, and a fragmented heap would hold both copies.
 * Nothing where the steps so far did not come rank by rank up to @first_rank.
 */
void
cs_schedule_reserve_ranks(CsSchedule *sched, int first_rank, gsize n_steps)
{
    g_return_if_fail(sched != NULL && !sched->sealed);
    g_return_if_fail(first_rank >= 0 && first_rank < sched->period);

    if (sched->scattered != NULL || first_rank < sched->tail)
        return;
    if (n_steps > sched->max_steps - MIN(sched->n_added, sched->max_steps))
        return;
    if (sched->packed.cap - sched->packed.len < n_steps)
        program_grow(&sched->packed, n_steps);
}

/* Sends @bytes at @offset of @buf to @peer. */
void
cs_schedule_send(CsSchedule *sched, int rank, int channel, int peer, CsBuffer buf, gint64 offset,
                 gint64 bytes, int chunk)
{
    cs_schedule_step(sched, rank, channel, CS_STEP_SEND, -1, peer, buf, offset, buf, 0, bytes,
                     chunk);
}

/* Receives @bytes from @peer into @offset of @buf. */
void
cs_schedule_recv(CsSchedule *sched, int rank, int channel, int peer, CsBuffer buf, gint64 offset,
                 gint64 bytes, int chunk)
{
    cs_schedule_step(sched, rank, channel, CS_STEP_RECV, peer, -1, buf, 0, buf, offset, bytes,
                     chunk);
}

/* Appends a step with every field explicit; -1 for a peer the kind does not use. */
void
cs_schedule_step(CsSchedule *sched, int rank, int channel, CsStepKind kind, int recv_peer,
                 int send_peer, CsBuffer src_buf, gint64 src_offset, CsBuffer dst_buf,
                 gint64 dst_offset, gint64 bytes, int chunk)
{
    g_return_if_fail(channel >= 0 && channel <= G_MAXUINT8);
    CsStep step = {
        .src_offset = src_offset,
        .dst_offset = dst_offset,
        .bytes = bytes,
        .send_peer = send_peer,
        .recv_peer = recv_peer,
        .chunk = chunk,
        .kind = (guint8)kind,
        .src_buf = (guint8)src_buf,
        .dst_buf = (guint8)dst_buf,
        .channel = (guint8)channel,
    };
    cs_schedule_add(sched, rank, &step);
}

/**
 * cs_schedule_seal:
 * Packs the per-rank programs into one array (rank-major, program order). Steps that came
 * rank by rank are in one already, which is kept as it is; otherwise each rank's are copied
 * after its packed ones and freed rank by rank, so the peak is the packed array plus one
 * rank's growth slack. Sealing twice is harmless.
 */
void
cs_schedule_seal(CsSchedule *sched)
{
    g_return_if_fail(sched != NULL);
    if (sched->sealed)
        return;

    const gsize total = sched->n_added;
    for (int r = sched->tail + 1; r <= sched->nranks; r++)
        sched->first[r] = sched->packed.len;
    if (sched->scattered == NULL) {
        /* Shrunk to its length: the slack of its last doubling is given back. */
        sched->steps = g_renew(CsStep, sched->packed.steps, MAX(total, 1));
    }
    else {
        const CsStep *packed = sched->packed.steps;
        gsize at = 0;
        sched->steps = g_new(CsStep, MAX(total, 1));
        for (int r = 0; r < sched->nranks; r++) {
            gsize from = sched->first[r];
            gsize n_packed = sched->first[r + 1] - from;
            sched->first[r] = at;
            if (n_packed > 0)
                memcpy(sched->steps + at, packed + from, n_packed * sizeof(CsStep));
            at += n_packed;
            if (r >= sched->period)
                continue;
            Program *prog = &sched->scattered[r];
            if (prog->len > 0)
                memcpy(sched->steps + at, prog->steps, prog->len * sizeof(CsStep));
            at += prog->len;
            g_clear_pointer(&prog->steps, g_free);
        }
        g_assert(at == total);
        sched->first[sched->nranks] = at;
        g_clear_pointer(&sched->scattered, g_free);
        g_free(sched->packed.steps);
    }
    sched->packed = (Program){ NULL, 0, 0 };
    sched->n_steps = total;
    sched->sealed = TRUE;
}

/**
 * cs_schedule_replicate:
 * @sched, sealed and holding every rank's program, run by @copies communicators at once (the
 * data-parallel groups of a training step, one per tensor-parallel rank, all-reduce their
 * gradients together): copy i's rank j is rank i x n + j of the result and sends to and
 * receives from its own copy's ranks only. With @periodic the result holds copy 0's steps
 * and declares the period n, which the engine replays once where the machine repeats under a
 * shift of n ranks and refuses otherwise (engine.c, "Symmetry"); without, every copy's steps.
 * Sizes, channels, NIC lanes, protocol and algorithm stay @sched's: each copy is the same
 * collective of n ranks.
 * Returns: (transfer full): the sealed schedule, or NULL with CS_SCHEDULE_ERROR_TOO_LARGE
 * where the copies exceed cs_schedule_max_steps().
 */
CsSchedule *
cs_schedule_replicate(const CsSchedule *sched, int copies, gboolean periodic, GError **error)
{
    g_return_val_if_fail(sched != NULL && sched->sealed, NULL);
    g_return_val_if_fail(sched->period == sched->nranks, NULL);
    g_return_val_if_fail(copies >= 1 && sched->nranks <= G_MAXINT / copies, NULL);

    const int n = sched->nranks;
    const int stored = periodic ? 1 : copies;
    const double steps = (double)sched->n_steps * stored;
    if (steps > (double)cs_schedule_max_steps()) {
        g_autofree char *why = cs_schedule_limit_reason(steps);
        g_set_error(error, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_TOO_LARGE,
                    "%d concurrent copies of a %s schedule of %d ranks: %s", copies,
                    cs_schedule_algo(sched), n, why);
        return NULL;
    }
    CsSchedule *out = g_new0(CsSchedule, 1);
    *out = *sched;
    out->nranks = n * copies;
    out->period = periodic ? n : n * copies;
    out->nic_lanes = sched->nic_lanes != NULL
                         ? g_memdup2(sched->nic_lanes, sizeof(int) * (gsize)sched->n_channels)
                         : NULL;
    out->n_steps = sched->n_steps * (gsize)stored;
    out->n_added = out->n_steps;
    out->steps = g_new(CsStep, MAX(out->n_steps, 1));
    out->first = g_new(gsize, (gsize)out->nranks + 1);
    for (int c = 0; c < stored; c++) {
        CsStep *dst = out->steps + (gsize)c * sched->n_steps;
        memcpy(dst, sched->steps, sched->n_steps * sizeof(CsStep));
        for (gsize i = 0; c > 0 && i < sched->n_steps; i++) {
            if (dst[i].send_peer >= 0)
                dst[i].send_peer += c * n;
            if (dst[i].recv_peer >= 0)
                dst[i].recv_peer += c * n;
        }
        for (int r = 0; r < n; r++)
            out->first[c * n + r] = (gsize)c * sched->n_steps + sched->first[r];
    }
    /* Ranks past the stored copies hold no steps of their own: the period repeats them. */
    for (int r = stored * n; r <= out->nranks; r++)
        out->first[r] = out->n_steps;
    return out;
}

/* ---- Accessors ---- */

CsOp
cs_schedule_op(const CsSchedule *sched)
{
    return sched->op;
}

int
cs_schedule_n_ranks(const CsSchedule *sched)
{
    return sched->nranks;
}

int
cs_schedule_root(const CsSchedule *sched)
{
    return sched->root;
}

CsDtype
cs_schedule_dtype(const CsSchedule *sched)
{
    return sched->dtype;
}

CsRedop
cs_schedule_redop(const CsSchedule *sched)
{
    return sched->redop;
}

/**
 * cs_schedule_set_p2p_split:
 * Says that each channel's sends and receives progress side by side, as in NCCL's p2p kernel,
 * which gives half of a channel's warps to its sends and half to its receives (NCCL 2.28
 * src/device/sendrecv.h). By default a channel runs its steps one after another, as a
 * collective's primitives do. The engine then runs each channel as two programs, its sends
 * (and local steps) and its receives (engine.c, "Programs"): no step may both receive and
 * send, and sends and local steps may read only the input, which no receive writes.
 */
void
cs_schedule_set_p2p_split(CsSchedule *sched, gboolean split)
{
    g_return_if_fail(sched != NULL);
    sched->p2p_split = split;
}

gboolean
cs_schedule_p2p_split(const CsSchedule *sched)
{
    return sched->p2p_split;
}

CsProto
cs_schedule_proto(const CsSchedule *sched)
{
    return sched->proto;
}

int
cs_schedule_n_channels(const CsSchedule *sched)
{
    return sched->n_channels;
}

void
cs_schedule_set_nic_lanes(CsSchedule *sched, const int *lanes)
{
    g_free(sched->nic_lanes);
    sched->nic_lanes = g_memdup2(lanes, sizeof(int) * (gsize)sched->n_channels);
}

int
cs_schedule_nic_lane(const CsSchedule *sched, int channel)
{
    g_return_val_if_fail(channel >= 0 && channel < sched->n_channels, 0);
    return sched->nic_lanes != NULL ? sched->nic_lanes[channel] : channel;
}

/* (transfer none) */
const CsOpSize *
cs_schedule_size(const CsSchedule *sched)
{
    return &sched->size;
}

/* The algorithm's name, or "custom" for a hand-built schedule. (transfer none) */
const char *
cs_schedule_algo(const CsSchedule *sched)
{
    return sched->algo != NULL ? sched->algo : "custom";
}

/* Bytes of @buf on every rank: INPUT and OUTPUT from cs_op_size(), SCRATCH as declared. */
gint64
cs_schedule_buffer_bytes(const CsSchedule *sched, CsBuffer buf)
{
    switch (buf) {
    case CS_BUF_INPUT:
        return sched->size.send_bytes;
    case CS_BUF_OUTPUT:
        return sched->size.recv_bytes;
    case CS_BUF_SCRATCH:
        return sched->scratch_bytes;
    case CS_N_BUFS:
        break;
    }
    g_return_val_if_reached(0);
}

/**
 * cs_schedule_steps:
 * @rank's sealed program, in order; *@n_steps gets its length.
 * Returns: (transfer none): the steps (valid until the schedule is freed).
 */
const CsStep *
cs_schedule_steps(const CsSchedule *sched, int rank, gsize *n_steps)
{
    g_return_val_if_fail(sched != NULL && n_steps != NULL, NULL);
    g_return_val_if_fail(sched->sealed, NULL);
    g_return_val_if_fail(rank >= 0 && rank < sched->nranks, NULL);
    *n_steps = sched->first[rank + 1] - sched->first[rank];
    return sched->steps + sched->first[rank];
}

/* Steps of every rank together: the sealed count, or the count so far while building. */
gsize
cs_schedule_n_steps(const CsSchedule *sched)
{
    /* Only steps kept are counted as added. */
    return sched->sealed ? sched->n_steps : sched->n_added;
}

const char *
cs_step_kind_name(CsStepKind kind)
{
    static const char *const names[CS_N_STEP_KINDS] = {
        [CS_STEP_SEND] = "send",
        [CS_STEP_RECV] = "recv",
        [CS_STEP_RECV_REDUCE] = "recv_reduce",
        [CS_STEP_RECV_REDUCE_SEND] = "recv_reduce_send",
        [CS_STEP_RECV_REDUCE_COPY_SEND] = "recv_reduce_copy_send",
        [CS_STEP_RECV_COPY_SEND] = "recv_copy_send",
        [CS_STEP_COPY] = "copy",
        [CS_STEP_REDUCE] = "reduce",
    };
    g_return_val_if_fail(kind >= 0 && kind < CS_N_STEP_KINDS, "?");
    return names[kind];
}
