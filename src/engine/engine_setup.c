// SPDX-License-Identifier: MIT
/* The engine's set-up: everything the run loop reads, built from the schedule and the topology
 * before it starts (engine.c's top comment says what it costs): each (rank, channel) program's
 * steps in walking order, the connections and their message slots, multicast groups, and per
 * connection its route, latencies and caps, staged legs and shared hops, in a period's replay
 * the links' orbits; and whether all that fits the memory budget. Nothing here runs per event. */
#undef G_LOG_DOMAIN
#define G_LOG_DOMAIN "collsim-engine"

#include <string.h>
#ifdef __linux__
#include <sys/mman.h>
#endif

#include "base/membudget.h"
#include "engine/engine-private.h"

/* ---- Large arrays ---- */

/* Arrays at least this large are backed by huge pages where the system offers them. */
#define HUGE_PAGE_BYTES ((gsize)2 << 20)

/* Allocates @n records of @size bytes aligned to @align (a power of two, at least the
 * records' alignment), to be freed with g_aligned_free(). The engine's large arrays (the
 * steps in walking order, the message slots) are read at a few thousand places at once, one
 * per cursor: with 4 KiB pages each of those places is a page of its own and most reads
 * miss the TLB. An array of a huge page or more is aligned to one and advised to use them
 * (Linux transparent huge pages in madvise mode); elsewhere the advice is left out, with the
 * same contents. */
static gpointer
big_alloc(gsize n, gsize size, gsize align)
{
    gsize bytes = MAX(n, 1) * size;

    if (bytes < HUGE_PAGE_BYTES)
        return g_aligned_alloc(MAX(n, 1), size, align);
    gpointer p = g_aligned_alloc(MAX(n, 1), size, HUGE_PAGE_BYTES);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    (void)madvise(p, (bytes + HUGE_PAGE_BYTES - 1) & ~(HUGE_PAGE_BYTES - 1), MADV_HUGEPAGE);
#endif
    return p;
}

static const guint8 kind_does[CS_N_STEP_KINDS] = {
    [CS_STEP_SEND] = DOES_SEND,
    [CS_STEP_RECV] = DOES_RECV,
    [CS_STEP_RECV_REDUCE] = DOES_RECV | DOES_REDUCE,
    [CS_STEP_RECV_REDUCE_SEND] = DOES_RECV | DOES_REDUCE | DOES_SEND,
    [CS_STEP_RECV_REDUCE_COPY_SEND] = DOES_RECV | DOES_REDUCE | DOES_SEND,
    [CS_STEP_RECV_COPY_SEND] = DOES_RECV | DOES_SEND,
    [CS_STEP_COPY] = 0,
    [CS_STEP_REDUCE] = DOES_REDUCE,
};

/* ---- Set-up ---- */

/* Open-addressing map (sender, receiver, channel) -> connection, used only while setting up. */
typedef struct {
    guint64 *keys; /* 0 = empty; keys are stored + 1 */
    gint32 *vals;
    gsize mask;
    gsize n;
    int shift; /* 64 - log2(size): the product's top bits pick the slot */
} ConnMap;

static guint64
conn_key(int src, int dst, int channel)
{
    return (((guint64)src << 40) | ((guint64)dst << 16) | (guint64)channel) + 1;
}

static gsize
conn_slot(const ConnMap *map, guint64 key)
{
    /* Fibonacci hashing: the top bits of the product depend on every bit of the key (the
     * sender sits at bit 40, which the low bits of the product never see). */
    gsize i = (gsize)((key * G_GUINT64_CONSTANT(0x9E3779B97F4A7C15)) >> map->shift);

    while (map->keys[i] != 0 && map->keys[i] != key)
        i = (i + 1) & map->mask;
    return i;
}

static void
conn_map_init(ConnMap *map, gsize capacity)
{
    gsize size = 64;
    int bits = 6;

    while (size < 2 * capacity) {
        size *= 2;
        bits++;
    }
    map->shift = 64 - bits;
    map->keys = g_new0(guint64, size);
    map->vals = g_new(gint32, size);
    map->mask = size - 1;
    map->n = 0;
}

static void
conn_map_clear(ConnMap *map)
{
    g_free(map->keys);
    g_free(map->vals);
}

static void
conn_map_grow(ConnMap *map)
{
    ConnMap bigger;
    gsize old_size = map->mask + 1;

    conn_map_init(&bigger, old_size);
    for (gsize i = 0; i < old_size; i++) {
        if (map->keys[i] == 0)
            continue;
        gsize j = conn_slot(&bigger, map->keys[i]);
        bigger.keys[j] = map->keys[i];
        bigger.vals[j] = map->vals[i];
    }
    bigger.n = map->n;
    conn_map_clear(map);
    *map = bigger;
}

/* The connection of (src, dst, channel), created on first sight from either end. In a
 * period's replay @src is a replayed rank and @real_dst the real destination, whose messages
 * land at real_dst mod n_ranks: the key keeps the real pair, so peers that land on one rank
 * (an all-to-all's) stay apart. */
static gint32
conn_find(Engine *e, ConnMap *map, int src, int real_dst, int channel)
{
    const int dst = real_dst % e->n_ranks;
    guint64 key = conn_key(src, real_dst, channel);
    gsize i = conn_slot(map, key);

    if (map->keys[i] == key)
        return map->vals[i];
    if (2 * (map->n + 1) > map->mask + 1) {
        conn_map_grow(map);
        i = conn_slot(map, key);
    }
    gint32 id = e->n_conns++;
    if (e->n_conns > e->conns_cap) {
        int cap = MAX(2 * e->conns_cap, 16);
        /* Aligned to cache lines (Conn), so grown by hand: no aligned realloc. */
        Conn *bigger = g_aligned_alloc(cap, sizeof(Conn), 64);
        if (id > 0)
            memcpy(bigger, e->conns, sizeof(Conn) * (gsize)id);
        g_aligned_free(e->conns);
        e->conns = bigger;
        e->conns_cap = cap;
        if (e->conn_peer != NULL)
            e->conn_peer = g_renew(gint32, e->conn_peer, e->conns_cap);
    }
    if (e->conn_peer != NULL)
        e->conn_peer[id] = real_dst;
    memset(&e->conns[id], 0, sizeof(Conn));
    e->conns[id].src_cursor = cursor_of(e, src, channel, DOES_SEND);
    e->conns[id].dst_cursor = cursor_of(e, dst, channel, DOES_RECV);
    map->keys[i] = key;
    map->vals[i] = id;
    map->n++;
    return id;
}

/* Checks a step's fields against the schedule's shape. */
static gboolean
step_valid(const Engine *e, int rank, gsize i, const CsStep *st, GError **error)
{
    const char *problem = NULL;

    if (st->kind >= CS_N_STEP_KINDS)
        problem = "unknown step kind";
    else if (st->channel >= e->n_channels)
        problem = "channel out of range";
    else if ((kind_does[st->kind] & DOES_SEND)
             && (st->send_peer < 0 || st->send_peer >= e->all_ranks))
        problem = "send peer out of range";
    else if ((kind_does[st->kind] & DOES_RECV)
             && (st->recv_peer < 0 || st->recv_peer >= e->all_ranks))
        problem = "receive peer out of range";
    else if (e->halves == 2 && (kind_does[st->kind] & DOES_RECV)
             && (kind_does[st->kind] & DOES_SEND))
        problem = "a step that receives and sends in a schedule whose sends and receives run "
                  "apart";
    else if (e->halves == 2 && !(kind_does[st->kind] & DOES_RECV) && st->src_buf != CS_BUF_INPUT)
        /* Nothing orders it after the receives that may have written what it reads. */
        problem = "a send or local step that reads more than the input in a schedule whose "
                  "sends and receives run apart";
    else if (st->bytes < 0)
        problem = "negative size";
    else if ((st->flags & ~(guint)CS_STEP_FLAGS_ALL) != 0
             || (st->flags != 0 && !(kind_does[st->kind] & DOES_SEND)))
        problem = "flags on a step that sends nothing, or unknown flags";
    if (problem == NULL)
        return TRUE;
    g_set_error(error, CS_ENGINE_ERROR, CS_ENGINE_ERROR_MISMATCH,
                "schedule rank %d step %" G_GSIZE_FORMAT ": %s", rank, i, problem);
    return FALSE;
}

/* How many recent sends of a cursor a multicast member is looked for among. */
#define MULTICAST_LEADERS 8

/* Links every multicast member (SHARED_FIRST_HOP) to the group of the latest earlier send of
 * its cursor that reads the same region and is no member itself, its leader (schedule.h
 * CsStepFlags): e->fan chains a leader to its members in walking order. The messages of an
 * in-switch reduction, which NVLS interleaves with its multicasts, are no candidates. A
 * member whose leader is not among the last MULTICAST_LEADERS candidates stays alone and is
 * charged as its own flow. */
static void
setup_multicasts(Engine *e)
{
    e->fan = g_new(gint32, MAX(e->n_steps, 1));
    e->mc = g_new(Multicast, e->n_cursors);
    for (gint32 i = 0; i < e->n_steps; i++)
        e->fan[i] = -1;
    for (int id = 0; id < e->n_cursors; id++) {
        const Cursor *c = &e->cursors[id];
        const CsStep *prog = e->rank_steps[c->rank];
        gint32 leader[MULTICAST_LEADERS]; /* recent sends, a ring */
        gint32 tail[MULTICAST_LEADERS];   /* the last member of each */
        int n = 0;

        e->mc[id].next = -1;
        for (gint32 i = c->step; i < e->ends[id]; i++) {
            /* The walk reads the compact steps; the schedule's, a cache line each, only for a
             * member and its candidate leaders. */
            const guint8 flags = e->steps[i].flags;
            if (!(e->steps[i].does & DOES_SEND))
                continue;
            /* A message of an in-switch reduction leads no multicast. */
            if (flags & (CS_STEP_FLAG_SHARED_LAST_HOP | CS_STEP_FLAG_REDUCE_SELF))
                continue;
            if (!(flags & CS_STEP_FLAG_SHARED_FIRST_HOP)) {
                leader[n % MULTICAST_LEADERS] = i;
                tail[n % MULTICAST_LEADERS] = i;
                n++;
                continue;
            }
            const CsStep *st = &prog[e->local[i]];
            for (int back = 1; back <= MIN(n, MULTICAST_LEADERS); back++) {
                int slot = (n - back) % MULTICAST_LEADERS;
                const CsStep *ls = &prog[e->local[leader[slot]]];
                if (ls->src_buf == st->src_buf && ls->src_offset == st->src_offset
                    && ls->bytes == st->bytes) {
                    e->fan[tail[slot]] = i;
                    tail[slot] = i;
                    break;
                }
            }
        }
    }
    /* Every send asks whether it leads members: the answer rides in the step the cursor
     * holds, where reading e->fan misses the cache once per send. */
    for (gint32 i = 0; i < e->n_steps; i++)
        if (e->fan[i] >= 0)
            e->steps[i].does |= DOES_FANS;
}

/* Copies the steps into cursor order and builds the connections: two sequential passes
 * over the schedule (count, then copy and connect). A connection whose two ends disagree on
 * the number of messages can never complete. */
gboolean
cs_engine_setup_programs(Engine *e, GError **error)
{
    g_autofree gsize *n_steps = g_new(gsize, e->n_ranks);
    g_autofree gint32 *fill = NULL;
    gsize total = 0;
    ConnMap map;

    e->rank_steps = g_new(const CsStep *, e->n_ranks);
    e->n_cursors = e->n_ranks * e->n_channels * e->halves;
    e->cursors = g_aligned_alloc0(e->n_cursors, sizeof(Cursor), 64);
    e->ends = g_new0(gint32, MAX(e->n_cursors, 1));
    e->flow_first = g_new0(CsTime, MAX(e->n_cursors, 1));
    e->read_first = g_new0(CsTime, MAX(e->n_cursors, 1));
    if (e->obs != NULL)
        e->step_start = g_new0(CsTime, MAX(e->n_cursors, 1));
    for (int r = 0; r < e->n_ranks; r++) {
        e->rank_steps[r] = cs_schedule_steps(e->sched, r, &n_steps[r]);
        for (gsize i = 0; i < n_steps[r]; i++) {
            const CsStep *st = &e->rank_steps[r][i];
            if (!step_valid(e, r, i, st, error))
                return FALSE;
            e->ends[cursor_of(e, r, st->channel, kind_does[st->kind])]++;
        }
        total += n_steps[r];
    }
    if (total > G_MAXINT32) {
        g_set_error(error, CS_ENGINE_ERROR, CS_ENGINE_ERROR_MISMATCH,
                    "schedule of %" G_GSIZE_FORMAT " steps is too large to simulate", total);
        return FALSE;
    }
    e->steps = big_alloc(total, sizeof(EStep), 16);
    e->local = g_new(gint32, MAX(total, 1));
    e->n_steps = (gint32)total;
    fill = g_new(gint32, e->n_cursors);
    gint32 at = 0;
    for (int i = 0; i < e->n_cursors; i++) {
        Cursor *c = &e->cursors[i];
        c->rank = cursor_rank(e, i);
        c->step = at;
        at += e->ends[i];
        e->ends[i] = at;
        fill[i] = c->step;
    }

    conn_map_init(&map, (gsize)e->n_cursors);
    for (int r = 0; r < e->n_ranks; r++) {
        /* Programs name the same peer many times in a row: look up only on change. */
        guint64 out_key = 0;
        guint64 in_key = 0;
        gint32 out_conn = -1;
        gint32 in_conn = -1;
        for (gsize i = 0; i < n_steps[r]; i++) {
            const CsStep *st = &e->rank_steps[r][i];
            EStep *es = &e->steps[fill[cursor_of(e, r, st->channel, kind_does[st->kind])]++];
            if (st->bytes >= (gint64)1 << 48) {
                g_set_error(error, CS_ENGINE_ERROR, CS_ENGINE_ERROR_MISMATCH,
                            "schedule rank %d step %" G_GSIZE_FORMAT ": %" G_GINT64_FORMAT
                            " bytes is too large to simulate",
                            r, i, st->bytes);
                conn_map_clear(&map);
                return FALSE;
            }
            es->bytes_lo = (guint32)st->bytes;
            es->bytes_hi = (guint16)(st->bytes >> 32);
            es->conn_in = -1;
            es->conn_out = -1;
            e->local[es - e->steps] = (gint32)i;
            es->does = kind_does[st->kind];
            es->flags = st->flags;
            e->any_flags = e->any_flags || st->flags != 0;
            if (es->does & DOES_SEND) {
                guint64 key = conn_key(r, st->send_peer, st->channel);
                if (key != out_key) {
                    out_conn = conn_find(e, &map, r, st->send_peer, st->channel);
                    out_key = key;
                }
                es->conn_out = out_conn;
                e->conns[out_conn].n_msgs++;
            }
            if (es->does & DOES_RECV) {
                guint64 key = conn_key(st->recv_peer, r, st->channel);
                if (key != in_key) {
                    /* Shifted so that the sender is a replayed rank. */
                    const int q = st->recv_peer;
                    const int shift = q - q % e->n_ranks;
                    in_conn = conn_find(e, &map, q % e->n_ranks,
                                        (r - shift + e->all_ranks) % e->all_ranks, st->channel);
                    in_key = key;
                }
                es->conn_in = in_conn;
                e->conns[in_conn].n_recvs++;
            }
        }
    }
    conn_map_clear(&map);
    if (e->any_flags)
        setup_multicasts(e);

    for (int i = 0; i < e->n_conns; i++) {
        const Conn *conn = &e->conns[i];
        if (conn->n_msgs != conn->n_recvs) {
            g_set_error(error, CS_ENGINE_ERROR, CS_ENGINE_ERROR_DEADLOCK,
                        "schedule: rank %d sends %d messages to rank %d on channel %d, "
                        "which receives %d",
                        cursor_rank(e, conn->src_cursor), conn->n_msgs,
                        cursor_rank(e, conn->dst_cursor), cursor_channel(e, conn->src_cursor),
                        conn->n_recvs);
            return FALSE;
        }
    }
    return TRUE;
}

/* What one channel can drive along @route: one link of each NVLink-class bond (bw / count),
 * the slowest of them; 0 when that is no less than the route's bottleneck. PCIe lanes and
 * network ports stripe a transfer over all of them. */
static double
channel_cap(const CsTopo *topo, const CsRoute *route)
{
    return links_cap(topo, route->links, route->n_links);
}

/* The share of the links' bandwidth that NVLS traffic (multimem.ld_reduce and multimem.st
 * through the switch, the flagged messages) gets on @rank's GPU generation, named by its
 * model: NCCL's measured nvlsEfficiency (NCCL 2.28 src/graph/tuning.cc: Hopper 0.85,
 * Blackwell 0.74; NCCL scales its NVLS bandwidth by it). Other or unnamed GPUs: 1. */
static double
nvls_efficiency(const CsTopo *topo, int rank)
{
    static const struct {
        const char *token;
        double efficiency;
    } table[] = {
        { "B100", 0.74 },      { "B200", 0.74 }, { "B300", 0.74 },
        { "BLACKWELL", 0.74 }, { "H100", 0.85 }, { "H200", 0.85 },
        { "H800", 0.85 },      { "H20", 0.85 },  { "HOPPER", 0.85 },
    };
    const char *model = cs_topo_device(topo, cs_topo_rank_device(topo, rank))->model;

    if (model == NULL)
        return 1.0;
    g_autofree char *upper = g_ascii_strup(model, -1);
    for (gsize i = 0; i < G_N_ELEMENTS(table); i++)
        if (strstr(upper, table[i].token) != NULL)
            return table[i].efficiency;
    return 1.0;
}

/* How many links of @route lead into the switch that reduces and multicasts for flagged
 * messages (schedule.h CsStepFlags): the first device on it that can, an NVSwitch with
 * multicast_reduction (NVLS) or a network switch with sharp (SHARP, CollNet). Sets *@nvls
 * when that is an NVSwitch, whose traffic gets nvlsEfficiency. A route through neither is
 * cut after its first link, as an NVLS route is, and counted as NVLS. */
static int
reducing_split(const CsTopo *topo, const CsRoute *route, guint8 *nvls)
{
    for (int i = 0; i + 1 < route->n_links; i++) {
        const CsDevice *d = cs_topo_device(topo, cs_topo_link(topo, route->links[i])->dst);
        if ((d->kind == CS_DEVICE_NVSWITCH && d->multicast_reduction)
            || (d->kind == CS_DEVICE_SWITCH && d->sharp)) {
            *nvls = d->kind == CS_DEVICE_NVSWITCH;
            return i + 1;
        }
    }
    *nvls = TRUE;
    return MIN(route->n_links, 1);
}

/* The links of @route up to host memory when the route is staged there (NCCL's SHM transport,
 * an MPI shared-memory segment): its first shm link ends in the buffer, and more links lead on
 * to the receiver. 0 when it is not staged. */
static int
staged_links(const CsTopo *topo, const CsRoute *route)
{
    for (int i = 0; i + 1 < route->n_links; i++)
        if (cs_topo_link(topo, route->links[i])->kind == CS_LINK_SHM)
            return i + 1;
    return 0;
}

/* The @n links of @route from @first on as a route of their own: their alpha and bottleneck;
 * the class stays the whole route's (the protocol's hop latency is the whole hop's). */
static CsRoute
route_part(const CsTopo *topo, const CsRoute *route, int first, int n)
{
    CsRoute part = *route;

    part.links = route->links + first;
    part.n_links = n;
    part.alpha_s = 0.0;
    part.bw_Bps = G_MAXDOUBLE;
    for (int i = 0; i < n; i++) {
        const CsLink *l = cs_topo_link(topo, part.links[i]);
        part.alpha_s += l->alpha_s;
        part.bw_Bps = MIN(part.bw_Bps, l->bw_Bps);
    }
    return part;
}

/* Splits @conn's route at host memory (see "Staging" in engine.c): the sender's flow crosses the
 * leg into the buffer, where the message is seen after the protocol's hop latency, and the
 * receiver's channel reads it out over the rest, paying that leg's alpha. */
static void
split_staged(Engine *e, Conn *conn, int up)
{
    const CsTopo *topo = e->topo;
    CsLinkClass cls = conn->route.link_class;

    conn->read = route_part(topo, &conn->route, up, conn->route.n_links - up);
    conn->route = route_part(topo, &conn->route, 0, up);
    conn->prop_ps = cs_time_from_s(conn->route.alpha_s) + e->hop_ps[cls];
    conn->read_prop_ps = cs_time_from_s(conn->read.alpha_s);
    conn->cap_Bps = channel_cap(topo, &conn->route);
    conn->read_cap_Bps = channel_cap(topo, &conn->read);
    e->any_staged = TRUE;
}

/* The orbit of every link for a period's replay (see "Symmetry" in engine.c): the connections of
 * the replayed ranks, each direction, proven to repeat with the ranks. */
static gboolean
shift_orbits(const Engine *e, int gpus_per_thread, int **link_rep, GError **error)
{
    g_autofree char *why = NULL;
    const int P = e->all_ranks;
    const int T = e->n_ranks;

    /* A host thread that launches the GPUs of two periods (nccl-tests -g) delays them alike
     * only when it starts at the period's start. */
    if (T % gpus_per_thread != 0) {
        g_set_error(error, CS_ENGINE_ERROR, CS_ENGINE_ERROR_ASYMMETRIC,
                    "one host thread launches %d GPUs, across a period of %d ranks",
                    gpus_per_thread, T);
        return FALSE;
    }
    const gsize n = (gsize)e->n_conns;
    g_autofree int *pairs = g_new(int, 6 * MAX(n, 1));
    for (gsize i = 0; i < n; i++) {
        const int src = cursor_rank(e, e->conns[i].src_cursor);
        const int dst = e->conn_peer[i];
        const int lane = cs_schedule_nic_lane(e->sched, cursor_channel(e, e->conns[i].src_cursor));
        const int shift = dst - dst % T;
        int *fwd = pairs + 3 * i;
        int *rev = pairs + 3 * (n + i);
        fwd[0] = src, fwd[1] = dst, fwd[2] = lane;
        /* The slot's return: the reverse route, shifted to start in the period (charged only
         * where flagged flows cross it). */
        rev[0] = dst % T, rev[1] = (src - shift + P) % P, rev[2] = lane;
    }
    *link_rep = cs_topo_shift_orbits(e->topo, P, T, pairs, 2 * e->n_conns,
                                     e->any_flags ? 2 * e->n_conns : e->n_conns, &why);
    if (*link_rep == NULL) {
        g_set_error(error, CS_ENGINE_ERROR, CS_ENGINE_ERROR_ASYMMETRIC,
                    "the machine does not repeat every %d ranks: %s", T, why);
        return FALSE;
    }
    return TRUE;
}

/* SHARP sums (CollNet): the switch adds the members' chunks at line rate, and the head takes
 * the sum off the network with directRecvCopyDirectSend (NCCL 2.28 src/device/all_reduce.h,
 * COLLNET_CHAIN and COLLNET_DIRECT): a copy, no reduction on the GPU. The IR writes the sum
 * as the members' messages into one of them (schedule.h CsStepFlags): that receiver copies
 * the leading one (REDUCE_SELF) and does nothing for the others (SHARED_LAST_HOP), where it
 * would otherwise reduce N - 1 chunks one after another on the critical path, a cost that
 * grows with the nodes. An NVSwitch's sums (NVLS) keep the head's reductions (nvls.c). A
 * connection's messages are its sender's sends in order, received in the same order. */
static void
mark_switch_sums(Engine *e)
{
    g_autofree gint32 *base = g_new(gint32, (gsize)e->n_conns + 1);
    g_autofree gint32 *next = g_new0(gint32, MAX(e->n_conns, 1));

    base[0] = 0;
    for (int i = 0; i < e->n_conns; i++)
        base[i + 1] = base[i] + e->conns[i].n_msgs;
    g_autofree guint8 *msg_flags = g_new0(guint8, MAX((gsize)base[e->n_conns], 1));
    for (int id = 0; id < e->n_cursors; id++)
        for (gint32 i = e->cursors[id].step; i < e->ends[id]; i++)
            if (e->steps[i].does & DOES_SEND) {
                const gint32 conn = e->steps[i].conn_out;
                msg_flags[base[conn] + next[conn]++] = e->steps[i].flags;
            }
    memset(next, 0, sizeof(gint32) * (gsize)MAX(e->n_conns, 1));
    for (int id = 0; id < e->n_cursors; id++)
        for (gint32 i = e->cursors[id].step; i < e->ends[id]; i++) {
            EStep *st = &e->steps[i];
            if (!(st->does & DOES_RECV))
                continue;
            const guint8 f = msg_flags[base[st->conn_in] + next[st->conn_in]++];
            if (e->conns[st->conn_in].nvls || !(st->does & DOES_REDUCE)
                || !(f & (CS_STEP_FLAG_REDUCE_SELF | CS_STEP_FLAG_SHARED_LAST_HOP)))
                continue;
            st->does &= (guint8)~DOES_REDUCE;
            if (f & CS_STEP_FLAG_SHARED_LAST_HOP)
                st->does |= DOES_NO_WORK;
        }
}

/* Routes, latencies and message slots of every connection; the ranks' constants. */
gboolean
cs_engine_setup_costs(Engine *e, const CsEngineOptions *options, GError **error)
{
    CsProto proto = cs_schedule_proto(e->sched);
    const CsProtoInfo *pi = cs_proto_info(proto);
    int gpus_per_thread = MAX(options->gpus_per_thread, 1);
    gsize n_slots = 0;

    e->data_fraction = e->textbook ? 1.0 : pi->data_fraction;
    /* Simple's flag covers a slot; LL and LL128 flag each 16- / 128-byte line, which carries
     * 8 / 120 bytes of data (prims_ll.h, prims_ll128.h). */
    if (proto == CS_PROTO_SIMPLE)
        e->grain_bytes = (double)pi->slot_data_bytes;
    else
        e->grain_bytes = proto == CS_PROTO_LL ? 8.0 : 120.0;
    for (int k = 0; k < CS_N_LINK_CLASSES; k++) {
        /* A topology's own hop latency (its "protocols", or calibrate's fit) replaces NCCL's. */
        double hop_s = cs_topo_hop_latency_override(e->topo, proto, (CsLinkClass)k);
        e->hop_ps[k] = e->textbook ? 0 : cs_time_from_s(hop_s >= 0 ? hop_s : pi->hop_latency_s[k]);
    }

    e->ranks = g_new0(RankInfo, e->n_ranks);
    for (int r = 0; r < e->n_ranks; r++) {
        const CsGpuSpec *gpu = cs_topo_rank_gpu(e->topo, r);
        RankInfo *ri = &e->ranks[r];
        ri->reduce_ps_per_byte = gpu->reduce_Bps > 0 ? CS_TIME_PS_PER_S / gpu->reduce_Bps : 0;
        ri->copy_ps_per_byte = gpu->copy_Bps > 0 ? CS_TIME_PS_PER_S / gpu->copy_Bps : 0;
        ri->nvls_wire = e->textbook || !e->any_flags ? 1.0 : 1.0 / nvls_efficiency(e->topo, r);
        if (!e->textbook)
            ri->step_ps = cs_time_from_s(gpu->step_overhead_s);
    }
    /* Thread t drives ranks t*g .. t*g + g - 1; they start once it has launched them all. */
    for (int first = 0; first < e->n_ranks && !e->textbook && !options->no_launch;
         first += gpus_per_thread) {
        int end = MIN(first + gpus_per_thread, e->n_ranks);
        double thread_s = 0;
        for (int r = first; r < end; r++)
            thread_s += cs_topo_rank_gpu(e->topo, r)->launch_s;
        for (int r = first; r < end; r++)
            e->ranks[r].launch_ps = cs_time_from_s(thread_s);
    }
    for (int r = 0; r < e->n_ranks; r++)
        e->ranks[r].finish.t = e->ranks[r].launch_ps;
    /* A rank that moves nothing to or from another rank (a one-rank collective) runs its
     * local work as a copy kernel over all its channels, bounded by the GPU's memory: those
     * channels share the copy and reduce rate. A rank that communicates runs its local steps
     * as NCCL fuses them into its transfers (copySend, recvCopySend: the schedules place them
     * off the critical path, beside a transfer the link bounds), so each keeps the full rate. */
    g_autofree gboolean *talks = g_new0(gboolean, e->n_ranks);
    /* A connection exists only because a step sends or receives on it (conn_find()). */
    for (int i = 0; i < e->n_conns; i++) {
        const int src = cursor_rank(e, e->conns[i].src_cursor);
        const int dst = cursor_rank(e, e->conns[i].dst_cursor);
        /* In a period's replay a message to another rank may land on the sender's image. */
        if (src != (e->conn_peer != NULL ? e->conn_peer[i] : dst))
            talks[src] = talks[dst] = TRUE;
    }
    for (int id = 0; id < e->n_cursors; id++) {
        const Cursor *c = &e->cursors[id];
        if (!talks[c->rank] && c->step < e->ends[id])
            e->ranks[c->rank].local_channels++;
    }

    g_autofree int *link_rep = NULL;
    if (e->conn_peer != NULL && !shift_orbits(e, gpus_per_thread, &link_rep, error))
        return FALSE;
    for (int i = 0; i < e->n_conns; i++) {
        Conn *conn = &e->conns[i];
        int src = cursor_rank(e, conn->src_cursor);
        /* In a period's replay, the route of the real pair. */
        int dst = e->conn_peer != NULL ? e->conn_peer[i] : cursor_rank(e, conn->dst_cursor);
        const char *why = NULL;
        const int lane = cs_schedule_nic_lane(e->sched, cursor_channel(e, conn->src_cursor));
        conn->route = *cs_topo_route_channel(e->topo, src, dst, lane);
        if (!e->textbook && conn->route.n_links > 0
            && !cs_proto_legal(proto, conn->route.link_class, &why)) {
            g_set_error(error, CS_ENGINE_ERROR, CS_ENGINE_ERROR_MISMATCH,
                        "protocol %s cannot carry rank %d -> %d over %s: %s", pi->name, src, dst,
                        cs_link_class_name(conn->route.link_class), why);
            return FALSE;
        }
        conn->prop_ps = cs_time_from_s(conn->route.alpha_s);
        if (conn->route.n_links > 0)
            conn->prop_ps += e->hop_ps[conn->route.link_class];
        conn->sync_ps = e->ranks[src].step_ps;
        conn->cap_Bps = e->textbook ? 0.0 : channel_cap(e->topo, &conn->route);
        /* NCCL's p2p kernel (sends and receives apart) moves one channel's network message
         * at NCCL_P2P_PER_CHANNEL_NET_BW at most (see "Channels" in engine.c). */
        const double p2p_net_Bps = CS_NCCL_P2P_NET_CHANNEL_GBPS * 1e9;
        if (!e->textbook && e->halves == 2 && conn->route.link_class == CS_LINK_CLASS_NET
            && (conn->cap_Bps > 0 ? conn->cap_Bps : conn->route.bw_Bps) > p2p_net_Bps)
            conn->cap_Bps = p2p_net_Bps;
        /* NVLS flags never meet host memory; their shared hops assume whole routes. */
        int up = e->textbook || e->any_flags ? 0 : staged_links(e->topo, &conn->route);
        if (up > 0)
            split_staged(e, conn, up);
        const CsRoute *back = cs_topo_route_channel(e->topo, dst, src, lane);
        conn->credit_ps = e->textbook ? 0 : cs_time_from_s(back->alpha_s);
        if (!e->textbook && conn->route.link_class == CS_LINK_CLASS_NET) {
            /* The network transport's own latency (topo_transport.c): each message pays it,
             * a Simple one its completion too, and each slot's return crosses it: the
             * receiver's proxy posts the buffer back over the network. */
            const CsTransport *t = cs_topo_transport(e->topo);
            CsTime lat = cs_time_from_s(t->latency_s);
            conn->prop_ps += lat + (proto == CS_PROTO_SIMPLE ? cs_time_from_s(t->flush_s) : 0);
            conn->credit_ps += lat;
        }
        if (e->any_flags) {
            guint8 back_nvls;
            conn->split = (gint16)reducing_split(e->topo, &conn->route, &conn->nvls);
            conn->back_split = (gint16)reducing_split(e->topo, back, &back_nvls);
            conn->back_n = (gint16)back->n_links;
            conn->back = back->links; /* packed into route_links below */
        }
        gint32 slots = 1;
        while (slots < MIN(conn->n_msgs, CS_NCCL_STEPS))
            slots *= 2;
        conn->slot_mask = slots - 1;
        conn->slot_base = (gint32)n_slots;
        n_slots += (gsize)slots;
    }
    if (e->any_flags)
        mark_switch_sums(e);
    e->msgs = big_alloc(n_slots, sizeof(Msg), 64);
    memset(e->msgs, 0, MAX(n_slots, 1) * sizeof(Msg));
    gsize n_links = 0;
    for (int i = 0; i < e->n_conns; i++)
        n_links
            += (gsize)(e->conns[i].route.n_links + e->conns[i].read.n_links + e->conns[i].back_n);
    e->route_links = g_new(int, MAX(n_links, 1));
    n_links = 0;
    for (int i = 0; i < e->n_conns; i++) {
        /* A staged route's read leg follows its send leg, as in the whole route; the reverse
         * route of a flagged schedule's connection follows them. */
        Conn *conn = &e->conns[i];
        CsRoute *route = &conn->route;
        CsRoute *read = &conn->read;
        gsize n = (gsize)(route->n_links + read->n_links);
        /* An empty leg may have no array: memcpy from NULL is undefined even for 0 bytes. */
        if (route->n_links > 0)
            memcpy(&e->route_links[n_links], route->links, sizeof(int) * route->n_links);
        if (read->n_links > 0)
            memcpy(&e->route_links[n_links + route->n_links], read->links,
                   sizeof(int) * read->n_links);
        route->links = &e->route_links[n_links];
        read->links = route->links + route->n_links;
        n_links += n;
        if (conn->back_n > 0) {
            memcpy(&e->route_links[n_links], conn->back, sizeof(int) * (gsize)conn->back_n);
            conn->back = &e->route_links[n_links];
            n_links += (gsize)conn->back_n;
        }
    }
    /* A period's replay charges each link's orbit (see "Symmetry" in engine.c). */
    for (gsize i = 0; link_rep != NULL && i < n_links; i++)
        e->route_links[i] = link_rep[e->route_links[i]];
    /* Per flow, the most links it crosses: a send's route (with flags, the links it charges:
     * its reverse hops and, for a multicast leader, every member's hops beyond the switch;
     * flow_charged_links() counts each once, so this bounds it), a staged read's read leg.
     * Per flow, not one maximum for all: under a SHARP switch of 16,384 nodes the leader's
     * flow crosses tens of thousands of links and every other flow a few. */
    const int n_flows = e->any_staged ? 2 * e->n_cursors : e->n_cursors;
    g_autofree int *flow_hops = g_new0(int, MAX(n_flows, 1));
    guint64 all_hops = 0;
    for (int id = 0; id < e->n_cursors; id++) {
        for (gint32 i = e->cursors[id].step; i < e->ends[id]; i++) {
            const EStep *st = &e->steps[i];
            if (st->does & DOES_SEND) {
                const Conn *conn = &e->conns[st->conn_out];
                int hops = conn->route.n_links;
                if (e->any_flags) {
                    hops += conn->back_n;
                    if (e->fan[i] >= 0 && !(st->flags & CS_STEP_FLAG_SHARED_FIRST_HOP))
                        for (gint32 k = e->fan[i]; k >= 0; k = e->fan[k]) {
                            const Conn *member = &e->conns[e->steps[k].conn_out];
                            hops += member->route.n_links - member->split;
                        }
                }
                flow_hops[id] = MAX(flow_hops[id], hops);
            }
            if (e->any_staged && (st->does & DOES_RECV))
                flow_hops[e->n_cursors + id]
                    = MAX(flow_hops[e->n_cursors + id], e->conns[st->conn_in].read.n_links);
        }
    }
    for (int f = 0; f < n_flows; f++)
        all_hops += (guint64)flow_hops[f];
    /* The models' per-hop state (at most a time and an index), the flagged flows' links. */
    const guint64 hop_bytes = all_hops * (sizeof(CsTime) + 2 * sizeof(int));
    if (all_hops > G_MAXINT32 || hop_bytes > cs_membudget_bytes()) {
        g_autofree char *need = cs_membudget_format(hop_bytes);
        g_autofree char *have = cs_membudget_format(cs_membudget_bytes());
        g_set_error(error, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_TOO_LARGE,
                    "flows crossing %" G_GUINT64_FORMAT
                    " links in all (multicasts count a link per member): %s of memory to "
                    "simulate, beyond the memory budget of %s (%s)",
                    all_hops, need, have, cs_membudget_source());
        return FALSE;
    }
    if (e->any_flags) {
        e->flow_base = cs_net_hop_bases(flow_hops, e->n_cursors);
        e->flow_links = g_new(int, MAX((gsize)e->flow_base[e->n_cursors], 1));
        e->link_seen = g_new0(guint32, MAX(cs_topo_n_links(e->topo), 1));
    }
    e->net = e->model->create(e->topo, n_flows, flow_hops, e->textbook);
    if (e->obs != NULL && e->obs->link_load != NULL && e->model->watch != NULL)
        e->model->watch(e->net, e->obs->link_load, e->obs->user_data);
    return TRUE;
}

/* Whether the arrays the run still allocates fit the memory budget beside those it holds: the
 * schedule, its steps in cursor order and the connections (set up), then per connection its
 * message slots and packed routes (at most 2 x 8 links each way), per cursor its events and
 * per rank its constants. A schedule with many connections of few messages each (a
 * personalised all-to-all) costs here what its steps do not say. */
gboolean
cs_engine_memory_fits(const Engine *e, GError **error)
{
    guint64 slots = 0;
    for (int i = 0; i < e->n_conns; i++) {
        gint32 k = 1;
        while (k < MIN(e->conns[i].n_msgs, CS_NCCL_STEPS))
            k *= 2;
        slots += (guint64)k;
    }
    const guint64 held
        = (guint64)e->n_steps
              * (sizeof(CsStep) + sizeof(EStep) + sizeof(gint32)
                 + (e->any_flags ? sizeof(gint32) : 0))
          + (guint64)e->conns_cap * (sizeof(Conn) + sizeof(gint32))
          + (guint64)e->n_cursors
                * (sizeof(Cursor) + sizeof(Multicast) + sizeof(gint32) + 3 * sizeof(CsTime));
    const guint64 more = slots * sizeof(Msg) + (guint64)e->n_conns * 2 * 2 * 8 * sizeof(int)
                         + (guint64)e->n_cursors * (2 + 4 * (1 + N_RUNS)) * sizeof(CsEvent)
                         + (guint64)e->n_ranks * sizeof(RankInfo);
    const guint64 budget = cs_membudget_bytes();
    if (held + more <= budget)
        return TRUE;
    g_autofree char *need = cs_membudget_format(held + more);
    g_autofree char *have = cs_membudget_format(budget);
    g_set_error(error, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_TOO_LARGE,
                "schedule of %d steps, %d connections and %" G_GUINT64_FORMAT
                " message slots: %s of memory to simulate, beyond the memory budget of %s (%s)",
                e->n_steps, e->n_conns, slots, need, have, cs_membudget_source());
    return FALSE;
}
