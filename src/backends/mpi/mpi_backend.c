// SPDX-License-Identifier: MIT
/* `collsim measure --backend mpi`: each MPI process is one rank and runs its program of the
 * Schedule with nonblocking point-to-point. A channel is an MPI tag, so MPI's non-overtaking
 * rule per (source, tag) is the schedule's FIFO per (sender, receiver, channel). Channels
 * progress independently (a receive blocks only its own channel, MPI_Waitsome drives them
 * all) and sends never wait for their receiver, which is the buffering the semantic checker
 * assumes: any schedule it accepts runs without deadlock. Reductions use the host reference
 * (reference.c) for every datatype and operator. */
#include "config.h"

#include "backends/mpi/mpi_backend.h"

#include <limits.h>
#include <math.h>
#include <mpi.h>
#include <string.h>

#include "backends/reference.h"

/* Staging arena alignment, enough for any datatype. */
#define STAGE_ALIGN 64

/* ---- MPI session ---- */

static gboolean initialized_here = FALSE;

/**
 * cs_mpi_backend_init:
 * Calls MPI_Init_thread unless MPI is up already; only `--backend mpi` and multi-process
 * NCCL runs get here, so other commands never need mpirun.
 */
gboolean
cs_mpi_backend_init(GError **error)
{
    int done = 0;
    int provided = 0;

    MPI_Initialized(&done);
    if (done)
        return TRUE;
    /* Funneled: collsim's --jobs threads never call MPI, only the main thread does. */
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
        g_set_error_literal(error, CS_BACKEND_ERROR, CS_BACKEND_ERROR_RUNTIME,
                            "mpi backend: MPI_Init_thread failed");
        return FALSE;
    }
    initialized_here = TRUE;
    return TRUE;
}

int
cs_mpi_backend_rank(void)
{
    int up = 0;
    int down = 0;
    int rank = 0;

    MPI_Initialized(&up);
    MPI_Finalized(&down);
    if (up && !down)
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank;
}

void
cs_mpi_backend_finalize(void)
{
    int done = 0;

    if (!initialized_here)
        return;
    MPI_Finalized(&done);
    if (!done)
        MPI_Finalize();
    initialized_here = FALSE;
}

int
cs_mpi_backend_n_ranks(void)
{
    int up = 0;
    int down = 0;
    int n = 1;

    MPI_Initialized(&up);
    MPI_Finalized(&down);
    if (up && !down)
        MPI_Comm_size(MPI_COMM_WORLD, &n);
    return n;
}

/**
 * cs_mpi_backend_allgather:
 * A CsParallelAllgather over MPI_COMM_WORLD: the lengths first, then the bytes
 * (MPI_Allgatherv). A study's rounds carry a few bytes per item; past 2 GiB in all, MPI's int
 * counts could not say it, and that is a programming error.
 */
GPtrArray *
cs_mpi_backend_allgather(GBytes *mine)
{
    int n = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    gsize len = 0;
    const void *data = g_bytes_get_data(mine, &len);
    g_assert(len <= INT_MAX);
    const int my_len = (int)len;
    g_autofree int *lens = g_new(int, n);
    g_autofree int *offsets = g_new(int, n);
    /* A rank that ends its share first waits here. MPI's collectives wait by polling, which
     * takes a core from the ranks still computing wherever ranks share cores (mpirun
     * --oversubscribe, a loaded machine): the wait is a barrier tested between sleeps that
     * double from 50 us to 5 ms instead. */
    MPI_Request arrived;
    MPI_Ibarrier(MPI_COMM_WORLD, &arrived);
    int done = 0;
    for (gulong nap_us = 50; MPI_Test(&arrived, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done;
         nap_us = MIN(2 * nap_us, 5000))
        g_usleep(nap_us);
    MPI_Allgather(&my_len, 1, MPI_INT, lens, 1, MPI_INT, MPI_COMM_WORLD);
    gint64 total = 0;
    for (int r = 0; r < n; r++) {
        offsets[r] = (int)total;
        total += lens[r];
        g_assert(total <= INT_MAX);
    }
    guint8 *all = g_malloc(MAX(total, 1));
    /* MPI wants a send buffer it may read from even when empty. */
    static const guint8 nothing = 0;
    MPI_Allgatherv(my_len > 0 ? data : &nothing, my_len, MPI_BYTE, all, lens, offsets, MPI_BYTE,
                   MPI_COMM_WORLD);
    GPtrArray *out = g_ptr_array_new_with_free_func((GDestroyNotify)g_bytes_unref);
    for (int r = 0; r < n; r++)
        g_ptr_array_add(out, g_bytes_new(all + offsets[r], (gsize)lens[r]));
    g_free(all);
    return out;
}

/* Open MPI, MPICH/Hydra and PMI-based launchers export the job size before MPI_Init. */
gboolean
cs_mpi_backend_launched(void)
{
    static const char *const size_vars[] = {
        "OMPI_COMM_WORLD_SIZE",
        "PMI_SIZE",
        "PMIX_SIZE",
        "MPI_LOCALNRANKS",
    };
    for (gsize i = 0; i < G_N_ELEMENTS(size_vars); i++) {
        const char *v = g_getenv(size_vars[i]);
        if (v != NULL && g_ascii_strtoll(v, NULL, 10) > 1)
            return TRUE;
    }
    return FALSE;
}

/* ---- One rank's program ---- */

/* A step of this rank, with what the run needs to know about it. */
typedef struct {
    const CsStep *step;
    gint64 stage; /* offset in the staging arena, -1: send from the region itself */
} Op;

typedef struct {
    int rank;
    int P;
    int C;
    const CsSchedule *sched;
    GArray **chan; /* per channel: Op in program order */
    guint8 *buf[CS_N_BUFS];
    guint8 *stage; /* copies of outgoing data that must not change under MPI */
    guint8 **temp; /* per channel: receive buffer for reductions */
    gint64 *temp_bytes;
    /* Run state. */
    guint *pos;
    gboolean *recv_posted;
    gboolean *recv_done;
    MPI_Request *reqs; /* [C] channel receives, then sends in flight */
    int *done;         /* MPI_Waitsome's completed indices */
    int n_reqs;
    int max_reqs;
} Rank;

static gboolean
step_writes(CsStepKind kind)
{
    return kind != CS_STEP_SEND && kind != CS_STEP_RECV_REDUCE_SEND;
}

/* The region a send step hands to MPI. */
static void
send_region(const CsStep *st, guint8 *buf_out, gint64 *offset)
{
    if (st->kind == CS_STEP_SEND) {
        *buf_out = st->src_buf;
        *offset = st->src_offset;
    }
    else {
        *buf_out = st->dst_buf;
        *offset = st->dst_offset;
    }
}

typedef struct {
    gint64 start;
    gint64 end;
    int channel;
    guint pos;
} Write;

/* Sends straight from their region unless another step may overwrite it while MPI still
 * reads it: a write on another channel (any time) or later on the same channel. Otherwise
 * the data is copied to the staging arena first. */
static gint64
plan_staging(Rank *rk)
{
    GArray *writes[CS_N_BUFS];
    gint64 arena = 0;
    gsize n_writes = 0;
    gsize n_sends = 0;

    for (int b = 0; b < CS_N_BUFS; b++)
        writes[b] = g_array_new(FALSE, FALSE, sizeof(Write));
    for (int c = 0; c < rk->C; c++)
        for (guint i = 0; i < rk->chan[c]->len; i++) {
            const CsStep *st = g_array_index(rk->chan[c], Op, i).step;
            if (step_writes((CsStepKind)st->kind) && st->bytes > 0) {
                Write w = { st->dst_offset, st->dst_offset + st->bytes, c, i };
                g_array_append_val(writes[st->dst_buf], w);
                n_writes++;
            }
            n_sends += cs_step_kind_sends((CsStepKind)st->kind);
        }
    /* The exact test is sends x writes; past that budget, copy whatever is ever written. */
    gboolean exact = (double)n_sends * (double)n_writes < 5e7;

    for (int c = 0; c < rk->C; c++)
        for (guint i = 0; i < rk->chan[c]->len; i++) {
            Op *op = &g_array_index(rk->chan[c], Op, i);
            const CsStep *st = op->step;
            op->stage = -1;
            if (!cs_step_kind_sends((CsStepKind)st->kind))
                continue;
            gboolean copy = st->kind == CS_STEP_RECV_REDUCE_SEND;
            if (!copy) {
                guint8 b;
                gint64 off;
                send_region(st, &b, &off);
                GArray *w = writes[b];
                if (!exact)
                    copy = w->len > 0;
                for (guint k = 0; exact && !copy && k < w->len; k++) {
                    const Write *x = &g_array_index(w, Write, k);
                    if (x->start < off + st->bytes && off < x->end
                        && (x->channel != c || x->pos > i))
                        copy = TRUE;
                }
            }
            if (copy) {
                op->stage = arena;
                arena += (st->bytes + STAGE_ALIGN - 1) / STAGE_ALIGN * STAGE_ALIGN;
            }
        }
    for (int b = 0; b < CS_N_BUFS; b++)
        g_array_unref(writes[b]);
    return arena;
}

static gboolean
rank_setup(Rank *rk, const CsSchedule *sched, int rank, GError **error)
{
    gsize n = 0;
    const CsStep *steps = cs_schedule_steps(sched, rank, &n);

    rk->rank = rank;
    rk->P = cs_schedule_n_ranks(sched);
    rk->C = cs_schedule_n_channels(sched);
    rk->sched = sched;
    rk->chan = g_new(GArray *, rk->C);
    rk->temp = g_new0(guint8 *, rk->C);
    rk->temp_bytes = g_new0(gint64, rk->C);
    rk->pos = g_new0(guint, rk->C);
    rk->recv_posted = g_new0(gboolean, rk->C);
    rk->recv_done = g_new0(gboolean, rk->C);
    for (int c = 0; c < rk->C; c++)
        rk->chan[c] = g_array_new(FALSE, FALSE, sizeof(Op));

    int n_sends = 0;
    for (gsize i = 0; i < n; i++) {
        const CsStep *st = &steps[i];
        CsStepKind kind = (CsStepKind)st->kind;
        const char *bad = NULL;
        if (st->kind >= CS_N_STEP_KINDS || st->channel >= rk->C)
            bad = "bad kind or channel";
        else if ((cs_step_kind_sends(kind) && (st->send_peer < 0 || st->send_peer >= rk->P))
                 || (cs_step_kind_recvs(kind) && (st->recv_peer < 0 || st->recv_peer >= rk->P)))
            bad = "peer out of range";
        else if (st->bytes < 0 || st->bytes > INT_MAX)
            bad = "message larger than MPI's int count";
        else if (st->src_buf >= CS_N_BUFS || st->dst_buf >= CS_N_BUFS || st->src_offset < 0
                 || st->dst_offset < 0
                 || (kind != CS_STEP_RECV && kind != CS_STEP_RECV_COPY_SEND
                     && st->src_offset + st->bytes
                            > cs_schedule_buffer_bytes(sched, (CsBuffer)st->src_buf))
                 || (step_writes(kind)
                     && st->dst_offset + st->bytes
                            > cs_schedule_buffer_bytes(sched, (CsBuffer)st->dst_buf)))
            bad = "region out of bounds";
        if (bad != NULL) {
            g_set_error(error, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_INVALID,
                        "%s: rank %d step %" G_GSIZE_FORMAT ": %s",
                        cs_schedule_algo(sched) != NULL ? cs_schedule_algo(sched) : "schedule",
                        rank, i, bad);
            return FALSE;
        }
        Op op = { .step = st, .stage = -1 };
        g_array_append_val(rk->chan[st->channel], op);
        n_sends += cs_step_kind_sends(kind);
        if (cs_step_kind_recvs(kind) && kind != CS_STEP_RECV && kind != CS_STEP_RECV_COPY_SEND)
            rk->temp_bytes[st->channel] = MAX(rk->temp_bytes[st->channel], st->bytes);
    }

    for (int b = 0; b < CS_N_BUFS; b++)
        rk->buf[b] = g_malloc0((gsize)cs_schedule_buffer_bytes(sched, (CsBuffer)b) + 1);
    rk->stage = g_malloc((gsize)plan_staging(rk) + 1);
    for (int c = 0; c < rk->C; c++)
        rk->temp[c] = g_malloc((gsize)rk->temp_bytes[c] + 1);
    rk->max_reqs = rk->C + n_sends;
    rk->reqs = g_new(MPI_Request, rk->max_reqs + 1);
    rk->done = g_new(int, rk->max_reqs + 1);
    return TRUE;
}

static void
rank_clear(Rank *rk)
{
    for (int c = 0; c < rk->C && rk->chan != NULL; c++) {
        g_array_unref(rk->chan[c]);
        g_free(rk->temp[c]);
    }
    for (int b = 0; b < CS_N_BUFS; b++)
        g_free(rk->buf[b]);
    g_free(rk->chan);
    g_free(rk->temp);
    g_free(rk->temp_bytes);
    g_free(rk->stage);
    g_free(rk->pos);
    g_free(rk->recv_posted);
    g_free(rk->recv_done);
    g_free(rk->reqs);
    g_free(rk->done);
}

/* ---- Running ---- */

static CsRedop
reduce_op(const Rank *rk)
{
    CsRedop redop = cs_schedule_redop(rk->sched);
    return redop == CS_REDOP_AVG ? CS_REDOP_SUM : redop;
}

static gint64
elements(const Rank *rk, gint64 bytes)
{
    return bytes / cs_dtype_size(cs_schedule_dtype(rk->sched));
}

static void
isend(Rank *rk, const void *data, const CsStep *st)
{
    MPI_Isend(data, (int)st->bytes, MPI_BYTE, st->send_peer, st->channel, MPI_COMM_WORLD,
              &rk->reqs[rk->n_reqs++]);
}

/* Sends @st's outgoing region, or a copy of it where the region may change. */
static void
send_out(Rank *rk, const Op *op)
{
    guint8 b;
    gint64 off;
    send_region(op->step, &b, &off);
    const guint8 *data = rk->buf[b] + off;
    if (op->stage >= 0 && op->step->kind != CS_STEP_RECV_REDUCE_SEND) {
        memcpy(rk->stage + op->stage, data, (gsize)op->step->bytes);
        data = rk->stage + op->stage;
    }
    isend(rk, data, op->step);
}

static void
post_recv(Rank *rk, int c, const CsStep *st)
{
    void *into = rk->temp[c];
    if (st->kind == CS_STEP_RECV || st->kind == CS_STEP_RECV_COPY_SEND)
        into = rk->buf[st->dst_buf] + st->dst_offset;
    MPI_Irecv(into, (int)st->bytes, MPI_BYTE, st->recv_peer, c, MPI_COMM_WORLD, &rk->reqs[c]);
    rk->recv_posted[c] = TRUE;
}

/* Completes @op once its message (if any) is in: local work, then the send. */
static void
finish(Rank *rk, int c, const Op *op)
{
    const CsStep *st = op->step;
    CsDtype dtype = cs_schedule_dtype(rk->sched);
    guint8 *src = rk->buf[st->src_buf] + st->src_offset;
    guint8 *dst = rk->buf[st->dst_buf] + st->dst_offset;
    gint64 n = elements(rk, st->bytes);

    switch ((CsStepKind)st->kind) {
    case CS_STEP_SEND:
    case CS_STEP_RECV_COPY_SEND:
        send_out(rk, op);
        break;
    case CS_STEP_RECV:
        break;
    case CS_STEP_RECV_REDUCE:
        cs_reference_reduce(dst, rk->temp[c], src, n, dtype, reduce_op(rk));
        break;
    case CS_STEP_RECV_REDUCE_SEND:
        cs_reference_reduce(rk->stage + op->stage, rk->temp[c], src, n, dtype, reduce_op(rk));
        isend(rk, rk->stage + op->stage, st);
        break;
    case CS_STEP_RECV_REDUCE_COPY_SEND:
        cs_reference_reduce(dst, rk->temp[c], src, n, dtype, reduce_op(rk));
        send_out(rk, op);
        break;
    case CS_STEP_COPY:
        if (dst != src)
            memmove(dst, src, (gsize)st->bytes);
        break;
    case CS_STEP_REDUCE:
        cs_reference_reduce(dst, dst, src, n, dtype, reduce_op(rk));
        break;
    case CS_N_STEP_KINDS:
    default:
        g_assert_not_reached();
    }
}

/* Runs channel @c until it waits for a message or ends. */
static void
advance(Rank *rk, int c)
{
    GArray *ops = rk->chan[c];

    while (rk->pos[c] < ops->len) {
        const Op *op = &g_array_index(ops, Op, rk->pos[c]);
        if (cs_step_kind_recvs((CsStepKind)op->step->kind)) {
            if (!rk->recv_done[c]) {
                if (!rk->recv_posted[c])
                    post_recv(rk, c, op->step);
                return;
            }
            rk->recv_done[c] = FALSE;
            rk->recv_posted[c] = FALSE;
        }
        finish(rk, c, op);
        rk->pos[c]++;
    }
}

/* Drops completed sends from the request array. */
static void
compact_sends(Rank *rk)
{
    int k = rk->C;
    for (int i = rk->C; i < rk->n_reqs; i++)
        if (rk->reqs[i] != MPI_REQUEST_NULL)
            rk->reqs[k++] = rk->reqs[i];
    rk->n_reqs = k;
}

/* One execution of the collective on this rank, including an average's final division. */
static void
run_once(Rank *rk)
{
    rk->n_reqs = rk->C;
    for (int c = 0; c < rk->C; c++) {
        rk->reqs[c] = MPI_REQUEST_NULL;
        rk->pos[c] = 0;
        rk->recv_posted[c] = FALSE;
        rk->recv_done[c] = FALSE;
    }
    for (;;) {
        gboolean finished = TRUE;
        for (int c = 0; c < rk->C; c++) {
            advance(rk, c);
            finished &= rk->pos[c] >= rk->chan[c]->len;
        }
        if (finished)
            break;
        /* Something is still to receive: wait for any message or send to complete. */
        int n_done = 0;
        MPI_Waitsome(rk->n_reqs, rk->reqs, &n_done, rk->done, MPI_STATUSES_IGNORE);
        for (int i = 0; i < n_done; i++)
            if (rk->done[i] < rk->C)
                rk->recv_done[rk->done[i]] = TRUE;
        compact_sends(rk);
    }
    MPI_Waitall(rk->n_reqs - rk->C, rk->reqs + rk->C, MPI_STATUSES_IGNORE);

    CsOp op = cs_schedule_op(rk->sched);
    if (cs_schedule_redop(rk->sched) == CS_REDOP_AVG && cs_op_reduces(op)
        && (op != CS_OP_REDUCE || rk->rank == cs_schedule_root(rk->sched))) {
        gint64 bytes = cs_schedule_size(rk->sched)->recv_bytes;
        cs_reference_divide(rk->buf[CS_BUF_OUTPUT], elements(rk, bytes),
                            cs_schedule_dtype(rk->sched), rk->P);
    }
}

static void
load_inputs(Rank *rk, gboolean poison)
{
    CsDtype dtype = cs_schedule_dtype(rk->sched);
    gint64 in_bytes = cs_schedule_buffer_bytes(rk->sched, CS_BUF_INPUT);

    cs_reference_fill_input(rk->buf[CS_BUF_INPUT], elements(rk, in_bytes), dtype,
                            cs_schedule_op(rk->sched), cs_schedule_redop(rk->sched), rk->rank,
                            rk->P, 0);
    if (!poison)
        return;
    memset(rk->buf[CS_BUF_OUTPUT], CS_REFERENCE_POISON,
           (gsize)cs_schedule_buffer_bytes(rk->sched, CS_BUF_OUTPUT));
    memset(rk->buf[CS_BUF_SCRATCH], CS_REFERENCE_POISON,
           (gsize)cs_schedule_buffer_bytes(rk->sched, CS_BUF_SCRATCH));
}

static gint64
count_wrong(const Rank *rk)
{
    const CsOpSize *size = cs_schedule_size(rk->sched);
    CsDtype dtype = cs_schedule_dtype(rk->sched);
    g_autofree guint8 *expected = g_malloc((gsize)size->recv_bytes + 1);

    if (!cs_reference_expected(cs_schedule_op(rk->sched), size, rk->P, cs_schedule_root(rk->sched),
                               dtype, cs_schedule_redop(rk->sched), rk->rank, expected))
        return 0;
    return cs_reference_count_wrong(rk->buf[CS_BUF_OUTPUT], expected,
                                    elements(rk, size->recv_bytes), dtype, rk->P);
}

/* Checks once, warms up, then times: mean over ranks of each rank's seconds per iteration,
 * as nccl-tests averages its processes. */
static gboolean
measure_size(const CsMeasureArgs *args, const CsAlgo *algo, int rank, int P, gint64 size_bytes,
             CsTrace *trace, GError **error)
{
    g_autoptr(CsSchedule) sched = cs_backend_build_schedule(args, algo, P, size_bytes, error);
    if (sched == NULL)
        return FALSE;
    Rank rk = { 0 };
    if (!rank_setup(&rk, sched, rank, error)) {
        rank_clear(&rk);
        return FALSE;
    }

    gint64 wrong = -1;
    load_inputs(&rk, args->check);
    if (args->check) {
        run_once(&rk);
        wrong = count_wrong(&rk);
        MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    }
    for (int w = 0; w < args->warmup; w++)
        run_once(&rk);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int it = 0; it < args->iters; it++)
        run_once(&rk);
    double seconds = (MPI_Wtime() - t0) / args->iters;
    MPI_Allreduce(MPI_IN_PLACE, &seconds, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    seconds /= P;
    /* The standard does not promise every rank the same bits from MPI_Allreduce; a caller
     * that branches on the times (collsim crossover) needs them. */
    if (args->every_rank)
        MPI_Bcast(&seconds, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);

    if (trace != NULL)
        cs_backend_trace_add(trace, args, cs_schedule_size(sched), P, seconds, wrong, NAN, -1);
    rank_clear(&rk);
    return TRUE;
}

/* ---- Headers ---- */

static char *
cpu_model(void)
{
    g_autofree char *text = NULL;
    if (!g_file_get_contents("/proc/cpuinfo", &text, NULL, NULL))
        return g_strdup("unknown CPU");
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    for (char **l = lines; *l != NULL; l++) {
        if (g_str_has_prefix(*l, "model name")) {
            const char *colon = strchr(*l, ':');
            if (colon != NULL)
                return g_strstrip(g_strdup(colon + 1));
        }
    }
    return g_strdup("unknown CPU");
}

static void
describe(const CsMeasureArgs *args, int P, int nodes, CsTrace *trace)
{
    char library[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    int len = 0;
    int major = 0;
    int minor = 0;

    MPI_Get_library_version(library, &len);
    MPI_Get_version(&major, &minor);
    /* The library string can span lines; the first names the implementation and version. */
    char *nl = strchr(library, '\n');
    if (nl != NULL)
        *nl = '\0';
    g_strstrip(library);
    if (g_str_has_suffix(library, ","))
        library[strlen(library) - 1] = '\0';

    g_autofree char *cpu = cpu_model();
    g_autofree char *hardware = g_strdup_printf("%d CPU processes on %d node%s (%s, as seen "
                                                "by rank 0)",
                                                P, nodes, nodes == 1 ? "" : "s", cpu);
    g_autofree char *software = g_strdup_printf("%s (MPI %d.%d)", library, major, minor);
    g_autofree char *nodes_s = g_strdup_printf("%d", nodes);
    g_autofree char *launcher
        = g_strdup_printf("MPI, %d process%s, one rank each", P, P == 1 ? "" : "es");
    g_autofree char *channels = g_strdup_printf("%d", args->n_channels);

    cs_trace_set_header(trace, "hardware", hardware);
    cs_trace_set_header(trace, "gpus", "0");
    cs_trace_set_header(trace, "nodes", nodes_s);
    cs_trace_set_header(trace, "software", software);
    cs_trace_set_header(trace, "launcher", launcher);
    cs_trace_set_header(trace, "transport",
                        "MPI point-to-point: MPI_Isend/MPI_Irecv, tag = "
                        "channel; reductions on the CPU");
    cs_trace_set_header(trace, "channels", channels);
}

/**
 * cs_mpi_backend_measure:
 * Runs args->algo's schedules on MPI_COMM_WORLD, one rank per process, for every size of
 * @args. Out-of-place only: the in-place half of each row is N/A. Every rank checks its own
 * output; #wrong is the sum over ranks.
 * Returns: TRUE with @trace (transfer full) on rank 0 and NULL elsewhere, or FALSE with
 * CS_BACKEND_ERROR_INVALID / _RUNTIME or the algorithm's error (the same on every rank).
 */
gboolean
cs_mpi_backend_measure(const CsMeasureArgs *args, CsTrace **trace, GError **error)
{
    int rank = 0;
    int P = 1;
    int local_rank = 0;
    int first_on_node;
    int nodes = 1;
    MPI_Comm node;

    const CsAlgo *algo = cs_backend_lookup_algo(args, "mpi", error);
    if (algo == NULL)
        return FALSE;
    if (!cs_mpi_backend_init(error))
        return FALSE;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local_rank);
    MPI_Comm_free(&node);
    first_on_node = local_rank == 0;
    MPI_Allreduce(&first_on_node, &nodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);

    g_autoptr(CsTrace) t = NULL;
    if (rank == 0 || args->every_rank) {
        t = cs_backend_trace_new(args, "mpi", P);
        describe(args, P, nodes, t);
    }
    g_autoptr(GArray) sizes = cs_measure_args_sizes(args);
    for (guint i = 0; i < sizes->len; i++)
        if (!measure_size(args, algo, rank, P, g_array_index(sizes, gint64, i), t, error))
            return FALSE;
    *trace = g_steal_pointer(&t);
    return TRUE;
}
