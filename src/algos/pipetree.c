// SPDX-License-Identifier: MIT
/* Shared machinery of the tree-shaped and node-aware algorithms: NCCL's (double) binary
 * trees, trees of ranks, node groups, a time-ordered step sink and pipelined tree collectives.
 *
 * The trees follow NCCL 2.28 src/graph/trees.cc (ncclGetBtree, ncclGetDtree,
 * ncclGetDtreeRoots), which implements the two-tree scheme of P. Sanders, J. Speck and
 * J. L. Träff, "Two-tree algorithms for full bandwidth broadcast, reduction and scan",
 * Parallel Computing 35(12), 2009. The per-rank primitives of the tree collectives follow
 * NCCL 2.28 src/device/all_reduce.h (runTreeSplit). */
#include "algos/pipetree.h"

#include <stdlib.h>
#include <string.h>

#include "base/membudget.h"

/* ---- NCCL's trees ---- */

/**
 * cs_pipetree_btree:
 * In-order binary tree on bit patterns: index xx10..0 has children xx01..0 and xx11..0 (or
 * the largest xx1(0..)1(0..) in range), so odd indices are leaves and 0 is the root with a
 * single child. Same parent/child relation as NCCL's ncclGetBtree.
 */
void
cs_pipetree_btree(int n, int index, int *parent, int *child0, int *child1, int *child_type)
{
    int bit = 1;

    g_return_if_fail(n >= 1 && index >= 0 && index < n);

    while (bit < n && (bit & index) == 0)
        bit <<= 1;

    if (index == 0) {
        *parent = -1;
        *child0 = -1;
        /* The only child of the root is above it, hence child1 as in NCCL. */
        *child1 = n > 1 ? bit >> 1 : -1;
        *child_type = -1;
        return;
    }

    int up = (index ^ bit) | (bit << 1);
    if (up >= n)
        up = index ^ bit;
    *parent = up;
    *child_type = index < up ? 0 : 1;

    int low = bit >> 1;
    *child0 = low == 0 ? -1 : index - low;
    while (low > 0 && index + low >= n)
        low >>= 1;
    *child1 = low == 0 ? -1 : index + low;
}

/**
 * cs_pipetree_dtree:
 * Tree 1 is tree 0 mirrored (index -> n-1-index) when @n is even, so inner ranks of one are
 * leaves of the other; shifted by one when @n is odd, where only index 0 is inner in both.
 */
void
cs_pipetree_dtree(int n, int tree, int index, int *parent, int *child0, int *child1,
                  int *child_type)
{
    int u, d0, d1;

    g_return_if_fail(tree == 0 || tree == 1);

    if (tree == 0) {
        cs_pipetree_btree(n, index, parent, child0, child1, child_type);
        return;
    }
    if (n % 2 == 1) {
        cs_pipetree_btree(n, (index - 1 + n) % n, &u, &d0, &d1, child_type);
        *parent = u == -1 ? -1 : (u + 1) % n;
        *child0 = d0 == -1 ? -1 : (d0 + 1) % n;
        *child1 = d1 == -1 ? -1 : (d1 + 1) % n;
    }
    else {
        cs_pipetree_btree(n, n - 1 - index, &u, &d0, &d1, child_type);
        *parent = u == -1 ? -1 : n - 1 - u;
        *child0 = d0 == -1 ? -1 : n - 1 - d0;
        *child1 = d1 == -1 ? -1 : n - 1 - d1;
    }
}

int
cs_pipetree_dtree_root(int n, int tree)
{
    if (tree == 0)
        return 0;
    return (n % 2 == 1 && n > 1) ? 1 : n - 1;
}

/* ---- Trees of ranks ---- */

CsPipeTree *
cs_pipetree_new(int n_ranks)
{
    CsPipeTree *tree;

    g_return_val_if_fail(n_ranks >= 1, NULL);

    tree = g_new0(CsPipeTree, 1);
    tree->n_ranks = n_ranks;
    tree->root = -1;
    tree->nodes = g_new0(CsTreeNode, n_ranks);
    for (int r = 0; r < n_ranks; r++) {
        tree->nodes[r].parent = -1;
        tree->nodes[r].depth = -1;
    }
    return tree;
}

void
cs_pipetree_free(CsPipeTree *tree)
{
    if (tree == NULL)
        return;
    g_free(tree->nodes);
    g_free(tree);
}

void
cs_pipetree_link(CsPipeTree *tree, int parent, int child)
{
    CsTreeNode *p;

    g_return_if_fail(parent >= 0 && parent < tree->n_ranks);
    g_return_if_fail(child >= 0 && child < tree->n_ranks && child != parent);

    p = &tree->nodes[parent];
    g_assert(p->n_children < CS_PIPETREE_MAX_CHILDREN);
    g_assert(tree->nodes[child].parent == -1);
    p->children[p->n_children++] = child;
    tree->nodes[child].parent = parent;
}

void
cs_pipetree_finish(CsPipeTree *tree, int root)
{
    g_autofree int *order = g_new(int, tree->n_ranks);
    g_autofree int *below = g_new0(int, tree->n_ranks);
    int head = 0;
    int tail = 0;

    g_return_if_fail(root >= 0 && root < tree->n_ranks);
    g_return_if_fail(tree->nodes[root].parent == -1);

    tree->root = root;
    tree->height = 0;
    tree->nodes[root].depth = 0;
    order[tail++] = root;
    while (head < tail) {
        const CsTreeNode *n = &tree->nodes[order[head++]];
        for (int i = 0; i < n->n_children; i++) {
            CsTreeNode *c = &tree->nodes[n->children[i]];
            c->depth = n->depth + 1;
            tree->height = MAX(tree->height, c->depth);
            order[tail++] = n->children[i];
        }
    }

    /* Subtree heights bottom-up, then deepest child first: its path is the critical one. */
    for (int i = tail - 1; i >= 0; i--) {
        CsTreeNode *n = &tree->nodes[order[i]];
        for (int a = 1; a < n->n_children; a++) {
            int c = n->children[a];
            int b = a;
            while (b > 0 && below[n->children[b - 1]] < below[c]) {
                n->children[b] = n->children[b - 1];
                b--;
            }
            n->children[b] = c;
        }
        if (n->parent >= 0)
            below[n->parent] = MAX(below[n->parent], below[order[i]] + 1);
    }
}

void
cs_pipetree_dtree_over(CsPipeTree *tree, const int *members, int n, int which)
{
    for (int i = 0; i < n; i++) {
        int parent, c0, c1, type;
        cs_pipetree_dtree(n, which, i, &parent, &c0, &c1, &type);
        if (parent >= 0)
            cs_pipetree_link(tree, members[parent], members[i]);
    }
    cs_pipetree_finish(tree, members[cs_pipetree_dtree_root(n, which)]);
}

/* ---- Node groups ---- */

typedef struct {
    int node;
    int rank;
} NodeRank;

static int
node_rank_cmp(const void *a, const void *b)
{
    const NodeRank *x = a;
    const NodeRank *y = b;

    if (x->node != y->node)
        return x->node < y->node ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

static CsNodeGroups *
groups_from_pairs(NodeRank *pairs, int n_ranks)
{
    CsNodeGroups *groups = g_new0(CsNodeGroups, 1);
    int g = -1;

    qsort(pairs, n_ranks, sizeof *pairs, node_rank_cmp);
    groups->n_ranks = n_ranks;
    groups->ranks = g_new(int, n_ranks);
    groups->group_of = g_new(int, n_ranks);
    groups->local_of = g_new(int, n_ranks);
    groups->offsets = g_new(int, n_ranks + 1);
    for (int i = 0; i < n_ranks; i++) {
        if (i == 0 || pairs[i].node != pairs[i - 1].node)
            groups->offsets[++g] = i;
        groups->ranks[i] = pairs[i].rank;
        groups->group_of[pairs[i].rank] = g;
        groups->local_of[pairs[i].rank] = i - groups->offsets[g];
    }
    groups->n_groups = g + 1;
    groups->offsets[groups->n_groups] = n_ranks;
    return groups;
}

/**
 * cs_node_groups_new:
 * Ranks sharing cs_topo_rank_node() form a group; the rank numbering need not be node-major.
 * Returns: (transfer full) (nullable)
 */
CsNodeGroups *
cs_node_groups_new(const CsTopo *topo, int n_ranks, GError **error)
{
    g_autofree NodeRank *pairs = NULL;

    g_return_val_if_fail(n_ranks >= 1, NULL);

    if (topo != NULL && n_ranks > cs_topo_n_ranks(topo)) {
        g_set_error(error, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_UNSUPPORTED,
                    "%d ranks requested but topology %s has %d GPUs", n_ranks, cs_topo_name(topo),
                    cs_topo_n_ranks(topo));
        return NULL;
    }
    pairs = g_new(NodeRank, n_ranks);
    for (int r = 0; r < n_ranks; r++) {
        pairs[r].node = topo != NULL ? cs_topo_rank_node(topo, r) : 0;
        pairs[r].rank = r;
    }
    return groups_from_pairs(pairs, n_ranks);
}

/**
 * cs_node_groups_new_nvlink:
 * A rank joins the domain of the first earlier domain head it reaches over NVLink only (the
 * route's slowest link class), else starts a domain. Domains are numbered by their lowest rank.
 * Returns: (transfer full) (nullable)
 */
CsNodeGroups *
cs_node_groups_new_nvlink(const CsTopo *topo, int n_ranks, GError **error)
{
    g_autofree NodeRank *pairs = NULL;
    g_autofree int *heads = NULL;
    g_autofree int *next_head = NULL;
    int n_heads = 0;

    g_return_val_if_fail(topo != NULL && n_ranks >= 1, NULL);

    if (n_ranks > cs_topo_n_ranks(topo)) {
        g_set_error(error, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_UNSUPPORTED,
                    "%d ranks requested but topology %s has %d GPUs", n_ranks, cs_topo_name(topo),
                    cs_topo_n_ranks(topo));
        return NULL;
    }
    /* Only heads in r's NVLink island can be reached over NVLink only; scanning those alone,
     * in the order they became heads, finds the same first one (linear in ranks, not
     * ranks x domains: 131,072 GPUs have 16,384 domains). Islands are numbered below the
     * ranks (cs_topo_rank_island()). */
    pairs = g_new(NodeRank, n_ranks);
    heads = g_new(int, n_ranks);
    next_head = g_new(int, n_ranks);
    g_autofree int *first_head = g_new(int, cs_topo_n_ranks(topo)); /* per island, -1 */
    g_autofree int *last_head = g_new(int, cs_topo_n_ranks(topo));
    for (int i = 0; i < cs_topo_n_ranks(topo); i++)
        first_head[i] = last_head[i] = -1;
    for (int r = 0; r < n_ranks; r++) {
        const int island = cs_topo_rank_island(topo, r);
        int d = first_head[island];
        while (d >= 0 && cs_topo_route(topo, heads[d], r)->link_class != CS_LINK_CLASS_NVLINK)
            d = next_head[d];
        if (d < 0) {
            d = n_heads++;
            heads[d] = r;
            next_head[d] = -1;
            if (last_head[island] < 0)
                first_head[island] = d;
            else
                next_head[last_head[island]] = d;
            last_head[island] = d;
        }
        pairs[r].node = d;
        pairs[r].rank = r;
    }
    return groups_from_pairs(pairs, n_ranks);
}

CsNodeGroups *
cs_node_groups_new_flat(int n_ranks)
{
    g_autofree NodeRank *pairs = g_new(NodeRank, n_ranks);

    for (int r = 0; r < n_ranks; r++) {
        pairs[r].node = r;
        pairs[r].rank = r;
    }
    return groups_from_pairs(pairs, n_ranks);
}

void
cs_node_groups_free(CsNodeGroups *groups)
{
    if (groups == NULL)
        return;
    g_free(groups->offsets);
    g_free(groups->ranks);
    g_free(groups->group_of);
    g_free(groups->local_of);
    g_free(groups);
}

int
cs_node_groups_size(const CsNodeGroups *groups, int g)
{
    return groups->offsets[g + 1] - groups->offsets[g];
}

int
cs_node_groups_rank(const CsNodeGroups *groups, int g, int local)
{
    g_assert(local >= 0 && local < cs_node_groups_size(groups, g));
    return groups->ranks[groups->offsets[g] + local];
}

gboolean
cs_node_groups_uniform(const CsNodeGroups *groups)
{
    for (int g = 1; g < groups->n_groups; g++)
        if (cs_node_groups_size(groups, g) != cs_node_groups_size(groups, 0))
            return FALSE;
    return TRUE;
}

/* ---- Step sink ---- */

/* Queueing order breaks ties of (time, order) (timed_steps_sort() is stable). */
typedef struct {
    gint64 time;
    gint64 order;
    CsStep step;
} TimedStep;

/* A rank's queued steps, in queueing order; the array doubles as it grows. */
typedef struct {
    TimedStep *a;
    gsize len;
    gsize cap;
} TimedProgram;

struct _CsStepSink {
    int n_ranks;
    TimedProgram *programs; /* per rank */
    gsize n_held;           /* steps held, all ranks: at most max_steps */
    gsize max_steps; /* what the memory budget holds of these and the schedule made of them */
    gboolean overflowed;
};

CsStepSink *
cs_step_sink_new(int n_ranks)
{
    CsStepSink *sink = g_new0(CsStepSink, 1);

    sink->n_ranks = n_ranks;
    /* Its arrays hold up to twice their steps (they double), beside the schedule built from
     * them. */
    sink->max_steps
        = (gsize)MIN(cs_membudget_bytes() / (2 * sizeof(TimedStep) + CS_SCHEDULE_STEP_PEAK_BYTES),
                     (guint64)CS_SCHEDULE_MAX_STEPS);
    sink->programs = g_new0(TimedProgram, n_ranks);
    return sink;
}

void
cs_step_sink_free(CsStepSink *sink)
{
    if (sink == NULL)
        return;
    for (int r = 0; r < sink->n_ranks; r++)
        g_free(sink->programs[r].a);
    g_free(sink->programs);
    g_free(sink);
}

void
cs_step_sink_add_ordered(CsStepSink *sink, int rank, gint64 time, gint64 order, const CsStep *step)
{
    g_return_if_fail(rank >= 0 && rank < sink->n_ranks);

    if (step->bytes == 0)
        return;
    if (sink->n_held >= sink->max_steps) {
        sink->overflowed = TRUE;
        return;
    }
    sink->n_held++;
    TimedProgram *program = &sink->programs[rank];
    if (program->len == program->cap) {
        program->cap = MAX(2 * program->cap, 32);
        program->a = g_renew(TimedStep, program->a, program->cap);
    }
    TimedStep *ts = &program->a[program->len++];
    ts->time = time;
    ts->order = order;
    ts->step = *step;
}

void
cs_step_sink_add(CsStepSink *sink, int rank, gint64 time, const CsStep *step)
{
    cs_step_sink_add_ordered(sink, rank, time, 0, step);
}

void
cs_step_sink_step(CsStepSink *sink, int rank, gint64 time, int channel, CsStepKind kind,
                  int recv_peer, int send_peer, CsBuffer src_buf, gint64 src_offset,
                  CsBuffer dst_buf, gint64 dst_offset, gint64 bytes, int chunk)
{
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

    g_return_if_fail(channel >= 0 && channel <= G_MAXUINT8);
    cs_step_sink_add(sink, rank, time, &step);
}

static inline gboolean
timed_step_after(const TimedStep *x, const TimedStep *y)
{
    return x->time > y->time || (x->time == y->time && x->order > y->order);
}

/* A sorted run of @program not yet copied: its next step (NO_STEP once done); the steps after
 * it follow StepMerge.link. */
typedef struct {
    gsize next;
} StepRun;

#define NO_STEP G_MAXSIZE

/* Runs whose heads are merged, and each step's successor in its run. */
typedef struct {
    const TimedStep *a;
    gsize *link;
    StepRun *heap;
    gsize n_heap;
} StepMerge;

/* Whether run @x's next step goes after run @y's: later (time, order), or the same and @x
 * queued later (a run holds steps in queueing order, so the step index breaks ties). */
static inline gboolean
run_after(const TimedStep *a, const StepRun *x, const StepRun *y)
{
    const TimedStep *sx = &a[x->next];
    const TimedStep *sy = &a[y->next];

    if (sx->time != sy->time)
        return sx->time > sy->time;
    if (sx->order != sy->order)
        return sx->order > sy->order;
    return x->next > y->next;
}

static void
runs_sift_down(const TimedStep *a, StepRun *heap, gsize n, gsize pos)
{
    StepRun r = heap[pos];

    for (;;) {
        gsize child = 2 * pos + 1;
        if (child >= n)
            break;
        if (child + 1 < n && run_after(a, &heap[child], &heap[child + 1]))
            child++;
        if (!run_after(a, &r, &heap[child]))
            break;
        heap[pos] = heap[child];
        pos = child;
    }
    heap[pos] = r;
}

/* At most this many piles; a program that needs more is merged from its natural runs. */
#define MAX_PILES 256

/* Deals the @n steps of @a onto as few sorted piles as it can (patience sorting: each step on
 * the pile with the latest last step not after it, else a new pile). Builders interleave a few
 * sorted streams (a CollNet chain's up and down passes, chunk by chunk): natural runs of two
 * steps, thousands of them, where a few dozen piles hold them all. The piles' last steps stay
 * in decreasing order (a new pile's is before all; a step goes after the latest one not
 * after it and stays before the pile left of it), so the pile is found by bisection. FALSE
 * past MAX_PILES. */
static gboolean
deal_piles(StepMerge *m, gsize n)
{
    gsize tails[MAX_PILES];
    gsize n_piles = 0;

    for (gsize i = 0; i < n; i++) {
        /* The first pile whose last step is not after step i. */
        gsize lo = 0, hi = n_piles;
        while (lo < hi) {
            gsize mid = lo + (hi - lo) / 2;
            if (timed_step_after(&m->a[tails[mid]], &m->a[i]))
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo == n_piles) {
            if (n_piles == MAX_PILES)
                return FALSE;
            m->heap[n_piles++].next = i;
        }
        else {
            m->link[tails[lo]] = i;
        }
        tails[lo] = i;
        m->link[i] = NO_STEP;
    }
    m->n_heap = n_piles;
    return TRUE;
}

/* The natural runs of the @n steps of @a: maximal stretches in (time, order). */
static void
natural_runs(StepMerge *m, gsize n)
{
    m->n_heap = 0;
    for (gsize i = 0; i < n; i++) {
        if (i == 0 || timed_step_after(&m->a[i - 1], &m->a[i]))
            m->heap[m->n_heap++].next = i;
        m->link[i] = i + 1 < n && !timed_step_after(&m->a[i], &m->a[i + 1]) ? i + 1 : NO_STEP;
    }
}

/* Buckets a counting sort may use beyond twice the steps it sorts. */
#define COUNT_SLACK 1024

/* How many steps ahead the counting sort fetches the steps it gathers. */
#define GATHER_AHEAD 16

/* The counting sort's bucket of @s: buckets in (time, order) order, @o_span orders a time. */
static inline gsize
bucket_of(const TimedStep *s, gint64 t_min, gint64 o_min, guint64 o_span)
{
    return (gsize)(((guint64)s->time - (guint64)t_min) * o_span
                   + ((guint64)s->order - (guint64)o_min));
}

/* Appends the @n steps of @a to rank @rank of @sched sorted by (time, order), stably, by a
 * counting sort over the keys, whose times lie in [@t_min, @t_max] and orders in [@o_min,
 * @o_max]: one bucket per (time, order), filled in queueing order. FALSE, adding nothing,
 * when the keys span more than 2 @n + COUNT_SLACK buckets. The builders' logical times and
 * orders are small integers (chunk indices plus a tree's depth; a phase's peer index), so
 * the keys of a program of many steps are dense: two passes over the steps replace a merge
 * whose heap of interleaved streams cost a cache miss per comparison. */
static gboolean
add_counted(CsSchedule *sched, int rank, const TimedStep *a, gsize n, gint64 t_min, gint64 t_max,
            gint64 o_min, gint64 o_max)
{
    /* Spans as unsigned differences: no overflow for any gint64 keys (0 for the whole range). */
    const guint64 t_span = (guint64)t_max - (guint64)t_min + 1;
    const guint64 o_span = (guint64)o_max - (guint64)o_min + 1;
    const guint64 limit = 2 * (guint64)n + COUNT_SLACK;

    if (n > G_MAXUINT32 || t_span == 0 || o_span == 0 || t_span > limit || o_span > limit / t_span)
        return FALSE;
    const gsize n_buckets = (gsize)(t_span * o_span);
    g_autofree guint32 *start = g_new0(guint32, n_buckets + 1);
    g_autofree guint32 *perm = g_new(guint32, n);
    for (gsize i = 0; i < n; i++)
        start[bucket_of(&a[i], t_min, o_min, o_span) + 1]++;
    for (gsize b = 0; b < n_buckets; b++)
        start[b + 1] += start[b];
    for (gsize i = 0; i < n; i++)
        perm[start[bucket_of(&a[i], t_min, o_min, o_span)]++] = (guint32)i;
    /* The steps are gathered out of queueing order: fetch them a few ahead (a record may
     * straddle two cache lines). */
    for (gsize k = 0; k < n; k++) {
        if (k + GATHER_AHEAD < n) {
            const char *next = (const char *)&a[perm[k + GATHER_AHEAD]];
            __builtin_prefetch(next);
            __builtin_prefetch(next + sizeof(TimedStep) - 1);
        }
        cs_schedule_add(sched, rank, &a[perm[k]].step);
    }
    return TRUE;
}

/* Appends @program to rank @rank of @sched sorted by (time, order), stably (queueing order
 * breaks ties). A program comes as a few sorted streams (phases, channels, passes; most often
 * one, copied as it is). Dense keys are counted (add_counted()); otherwise the streams are
 * merged straight into the schedule through a heap of their heads: no sort buffer, no record
 * moved but into the schedule. */
static void
add_sorted(CsSchedule *sched, int rank, const TimedProgram *program)
{
    const gsize n = program->len;
    const TimedStep *a = program->a;
    gsize n_runs = n > 0 ? 1 : 0;

    if (n == 0)
        return;
    cs_schedule_reserve(sched, rank, n);
    gint64 t_min = a[0].time, t_max = a[0].time;
    gint64 o_min = a[0].order, o_max = a[0].order;
    for (gsize i = 1; i < n; i++) {
        n_runs += timed_step_after(&a[i - 1], &a[i]);
        t_min = MIN(t_min, a[i].time);
        t_max = MAX(t_max, a[i].time);
        o_min = MIN(o_min, a[i].order);
        o_max = MAX(o_max, a[i].order);
    }
    if (n_runs <= 1) {
        for (gsize i = 0; i < n; i++)
            cs_schedule_add(sched, rank, &a[i].step);
        return;
    }
    if (add_counted(sched, rank, a, n, t_min, t_max, o_min, o_max))
        return;
    g_autofree gsize *link = g_new(gsize, n);
    /* Piles never outnumber the natural runs (a run's steps go on one pile). */
    g_autofree StepRun *heap = g_new(StepRun, n_runs);
    StepMerge m = { .a = a, .link = link, .heap = heap };
    /* A few natural runs merge as they are; many may be few interleaved streams. */
    if (n_runs <= 8 || !deal_piles(&m, n))
        natural_runs(&m, n);
    for (gsize k = m.n_heap / 2; k-- > 0;)
        runs_sift_down(a, m.heap, m.n_heap, k);
    while (m.n_heap > 0) {
        cs_schedule_add(sched, rank, &a[m.heap[0].next].step);
        m.heap[0].next = link[m.heap[0].next];
        if (m.heap[0].next == NO_STEP)
            m.heap[0] = m.heap[--m.n_heap];
        if (m.n_heap > 0)
            runs_sift_down(a, m.heap, m.n_heap, 0);
    }
}

/* Each rank's queue is freed once copied, so the peak stays the queued steps, not twice. */
void
cs_step_sink_flush(CsStepSink *sink, CsSchedule *sched)
{
    /* The ranks' steps go to the schedule one rank after another. */
    cs_schedule_reserve_ranks(sched, 0, sink->n_held);
    for (int r = 0; r < sink->n_ranks; r++) {
        TimedProgram *program = &sink->programs[r];
        add_sorted(sched, r, program);
        g_free(program->a);
        *program = (TimedProgram){ NULL, 0, 0 };
    }
    if (sink->overflowed)
        cs_schedule_mark_overflowed(sched);
    sink->n_held = 0;
    sink->overflowed = FALSE;
}

/* ---- Pipelined collectives over a tree ---- */

static void
put(CsStepSink *sink, const CsTreeRegion *rg, int rank, gint64 time, CsStepKind kind, int recv_peer,
    int send_peer, CsBuffer src, CsBuffer dst)
{
    cs_step_sink_step(sink, rank, time, rg->channel, kind, recv_peer, send_peer, src, rg->offset,
                      dst, rg->offset, rg->bytes, rg->chunk);
}

/* Sends what @rank holds in @buf down to its children, the first by @first_kind (which also
 * receives from the parent). */
static void
fan_out(CsStepSink *sink, const CsTreeRegion *rg, const CsTreeNode *n, int rank, gint64 time,
        CsBuffer buf, int first)
{
    for (int i = first; i < n->n_children; i++)
        put(sink, rg, rank, time, CS_STEP_SEND, -1, n->children[i], buf, buf);
}

/* The reduce-up part of a non-root rank: NCCL's send (leaf) or recvReduceSend, split into one
 * receive per child because a step names one peer; partial sums wait in @acc_buf. */
static void
reduce_up(CsStepSink *sink, const CsTreeRegion *rg, const CsTreeNode *n, int rank, gint64 time)
{
    CsBuffer src = rg->src_buf;

    if (n->n_children == 0) {
        put(sink, rg, rank, time, CS_STEP_SEND, -1, n->parent, src, src);
        return;
    }
    for (int i = 0; i + 1 < n->n_children; i++) {
        put(sink, rg, rank, time, CS_STEP_RECV_REDUCE, n->children[i], -1, src, rg->acc_buf);
        src = rg->acc_buf;
    }
    put(sink, rg, rank, time, CS_STEP_RECV_REDUCE_SEND, n->children[n->n_children - 1], n->parent,
        src, src);
}

/* Everything the root receives, reduced into @dst_buf except the last child's message,
 * which the caller consumes. Returns the buffer holding the partial sum so far. */
static CsBuffer
root_gather(CsStepSink *sink, const CsTreeRegion *rg, const CsTreeNode *n, int rank, gint64 time)
{
    CsBuffer src = rg->src_buf;

    for (int i = 0; i + 1 < n->n_children; i++) {
        put(sink, rg, rank, time, CS_STEP_RECV_REDUCE, n->children[i], -1, src, rg->dst_buf);
        src = rg->dst_buf;
    }
    return src;
}

void
cs_pipetree_broadcast(CsStepSink *sink, const CsPipeTree *tree, const CsTreeRegion *region,
                      gboolean root_copy)
{
    if (region->bytes == 0)
        return;
    for (int r = 0; r < tree->n_ranks; r++) {
        const CsTreeNode *n = &tree->nodes[r];
        gint64 t = region->time + n->depth;

        if (n->depth < 0)
            continue;
        if (r == tree->root) {
            fan_out(sink, region, n, r, t, region->src_buf, 0);
            /* Copy after the sends: NCCL's copySend does both at once, the copy never
             * delays the children. */
            if (root_copy && region->src_buf != region->dst_buf)
                put(sink, region, r, t, CS_STEP_COPY, -1, -1, region->src_buf, region->dst_buf);
        }
        else if (n->n_children == 0) {
            put(sink, region, r, t, CS_STEP_RECV, n->parent, -1, region->dst_buf, region->dst_buf);
        }
        else {
            put(sink, region, r, t, CS_STEP_RECV_COPY_SEND, n->parent, n->children[0],
                region->dst_buf, region->dst_buf);
            fan_out(sink, region, n, r, t, region->dst_buf, 1);
        }
    }
}

void
cs_pipetree_reduce(CsStepSink *sink, const CsPipeTree *tree, const CsTreeRegion *region)
{
    if (region->bytes == 0)
        return;
    for (int r = 0; r < tree->n_ranks; r++) {
        const CsTreeNode *n = &tree->nodes[r];
        gint64 t = region->time + tree->height - n->depth;

        if (n->depth < 0)
            continue;
        if (r != tree->root) {
            reduce_up(sink, region, n, r, t);
            continue;
        }
        if (n->n_children == 0) {
            if (region->src_buf != region->dst_buf)
                put(sink, region, r, t, CS_STEP_COPY, -1, -1, region->src_buf, region->dst_buf);
            continue;
        }
        CsBuffer src = root_gather(sink, region, n, r, t);
        put(sink, region, r, t, CS_STEP_RECV_REDUCE, n->children[n->n_children - 1], -1, src,
            region->dst_buf);
    }
}

void
cs_pipetree_allreduce(CsStepSink *sink, const CsPipeTree *tree, const CsTreeRegion *region)
{
    if (region->bytes == 0)
        return;
    for (int r = 0; r < tree->n_ranks; r++) {
        const CsTreeNode *n = &tree->nodes[r];
        gint64 up = region->time + tree->height - n->depth;
        gint64 down = region->time + tree->height + n->depth;

        if (n->depth < 0)
            continue;
        if (r == tree->root) {
            if (n->n_children == 0) {
                if (region->src_buf != region->dst_buf)
                    put(sink, region, r, up, CS_STEP_COPY, -1, -1, region->src_buf,
                        region->dst_buf);
                continue;
            }
            /* NCCL's recvReduceCopySend: the last reduction turns straight around. */
            CsBuffer src = root_gather(sink, region, n, r, up);
            put(sink, region, r, up, CS_STEP_RECV_REDUCE_COPY_SEND, n->children[n->n_children - 1],
                n->children[0], src, region->dst_buf);
            fan_out(sink, region, n, r, up, region->dst_buf, 1);
            continue;
        }
        reduce_up(sink, region, n, r, up);
        if (n->n_children == 0) {
            put(sink, region, r, down, CS_STEP_RECV, n->parent, -1, region->dst_buf,
                region->dst_buf);
        }
        else {
            put(sink, region, r, down, CS_STEP_RECV_COPY_SEND, n->parent, n->children[0],
                region->dst_buf, region->dst_buf);
            fan_out(sink, region, n, r, down, region->dst_buf, 1);
        }
    }
}

/* ---- Direct phases (NVLS) ---- */

/* Queues a step with @flags (CsStepFlags) for @rank at (@time, @order). */
static void
direct_step(CsStepSink *sink, int rank, gint64 time, gint64 order, int channel, CsStepKind kind,
            int recv_peer, int send_peer, CsBuffer src_buf, gint64 src_offset, CsBuffer dst_buf,
            gint64 dst_offset, gint64 bytes, int chunk, guint8 flags)
{
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
        .flags = flags,
    };

    cs_step_sink_add_ordered(sink, rank, time, order, &step);
}

/* Order keys of the direct phases within one logical time on channel c: the q-th send and
 * receive of one phase at 2q, of the other at 2q + 1 (the all-gather first on even
 * channels, the reduce-scatter first on odd ones). A rank's sends of the two phases
 * alternate, and the channels do not move in step, so the reduce-scatter's traffic towards
 * the switch and the all-gather's traffic from it (with the step flags, mostly one direction
 * each) cross a link's two directions side by side, as NCCL's reduce warps interleave
 * ld_reduce and multimem.st. On the connection x -> x + q both phases' messages of one time
 * leave and are taken in the same order, whatever order the caller queued the phases in. */
#define ORDER_AG(q, c) (2 * (gint64)(q) + (c) % 2)
#define ORDER_RS(q, c) (2 * (gint64)(q) + 1 - (c) % 2)

/* The distance a direct phase's @j-th peer (1 .. k - 1) lies at: j itself, or with @rotate
 * the distances taken from 1 + rotate % (k - 1) on, wrapping (so that channels with
 * different rotations start on different links). Sender and receiver of one connection
 * give its message the same j, so both ends keep one order. */
static int
visit_distance(int j, int k, int rotate)
{
    g_return_val_if_fail(rotate >= 0, j);
    return 1 + (j - 1 + rotate % (k - 1)) % (k - 1);
}

gint64
cs_pipetree_channel_shards(gint64 count, int n_channels, int c, int k, gint64 *first, gint64 *len)
{
    gint64 channel_first, channel_len, longest = 0;
    cs_algo_split(count, n_channels, c, &channel_first, &channel_len);
    for (int x = 0; x < k; x++) {
        cs_algo_split(channel_len, k, x, &first[x], &len[x]);
        first[x] += channel_first;
        longest = MAX(longest, len[x]);
    }
    return longest;
}

CsBlockMove
cs_pipetree_shard_chunk(const gint64 *first, const gint64 *len, int x, gint64 i, gint64 chunk_el,
                        int es)
{
    const gint64 at = (first[x] + i * chunk_el) * es;
    const gint64 bytes = CLAMP(len[x] - i * chunk_el, 0, chunk_el) * es;
    return (CsBlockMove){ CS_BUF_INPUT, at, CS_BUF_OUTPUT, at, bytes };
}

/* In the switch, the messages into member h are one ld_reduce: the first visited (from h - 1
 * unrotated) leads it and also brings h's own copy to the switch, the others share its last
 * hop. */
void
cs_pipetree_direct_reduce_scatter(CsStepSink *sink, int channel, const int *m, int k,
                                  const CsBlockMove *blocks, gint64 time, int chunk,
                                  gboolean in_switch, int rotate)
{
    if (k == 1) {
        const CsBlockMove *b = &blocks[0];
        if (b->src_buf != b->dst_buf || b->src_off != b->dst_off)
            cs_step_sink_step(sink, m[0], time, channel, CS_STEP_COPY, -1, -1, b->src_buf,
                              b->src_off, b->dst_buf, b->dst_off, b->bytes, chunk);
        return;
    }
    for (int x = 0; x < k; x++) {
        const CsBlockMove *own = &blocks[x];
        for (int j = 1; j < k; j++) {
            const int q = visit_distance(j, k, rotate);
            const CsBlockMove *b = &blocks[(x + q) % k];
            guint8 flags = !in_switch ? 0
                           : j == 1   ? CS_STEP_FLAG_REDUCE_SELF
                                      : CS_STEP_FLAG_SHARED_LAST_HOP;
            direct_step(sink, m[x], time, ORDER_RS(j, channel), channel, CS_STEP_SEND, -1,
                        m[(x + q) % k], b->src_buf, b->src_off, b->src_buf, b->src_off, b->bytes,
                        chunk, flags);
        }
        for (int j = 1; j < k; j++) {
            const int q = visit_distance(j, k, rotate);
            CsBuffer src = j == 1 ? own->src_buf : own->dst_buf;
            gint64 src_off = j == 1 ? own->src_off : own->dst_off;
            direct_step(sink, m[x], time + 1, ORDER_RS(j, channel), channel, CS_STEP_RECV_REDUCE,
                        m[(x + k - q) % k], -1, src, src_off, own->dst_buf, own->dst_off,
                        own->bytes, chunk, 0);
        }
    }
}

/* In the switch, member x's sends are one multicast: the first (to x + 1) leads it and also
 * lands on x itself, the others share its first hop. */
void
cs_pipetree_direct_all_gather(CsStepSink *sink, int channel, const int *m, int k,
                              const CsBlockMove *blocks, gint64 time, int chunk, gboolean in_switch,
                              int rotate)
{
    for (int x = 0; x < k; x++) {
        const CsBlockMove *own = &blocks[x];
        for (int j = 1; j < k; j++) {
            const int q = visit_distance(j, k, rotate);
            guint8 flags = !in_switch ? 0
                           : j == 1   ? CS_STEP_FLAG_MULTICAST_SELF
                                      : CS_STEP_FLAG_SHARED_FIRST_HOP;
            direct_step(sink, m[x], time, ORDER_AG(j, channel), channel, CS_STEP_SEND, -1,
                        m[(x + q) % k], own->src_buf, own->src_off, own->src_buf, own->src_off,
                        own->bytes, chunk, flags);
        }
        for (int j = 1; j < k; j++) {
            const int q = visit_distance(j, k, rotate);
            const CsBlockMove *b = &blocks[(x + k - q) % k];
            direct_step(sink, m[x], time + 1, ORDER_AG(j, channel), channel, CS_STEP_RECV,
                        m[(x + k - q) % k], -1, b->dst_buf, b->dst_off, b->dst_buf, b->dst_off,
                        b->bytes, chunk, 0);
        }
    }
}

/* ---- In-network reduction (SHARP) ---- */

/* The reduction's messages come to the root in the order q = 1..n-1 (the first leads it and
 * brings the root's own copy), and its multicast leaves in the same order right after them,
 * before any other step of that time (negative orders): the sum it sends is the one the
 * last receive left. Between two members, one chunk's multicast and the next chunk's
 * reduction may share a time and a connection: at each time the reduction's sends come
 * first and so do its receives, so both ends keep one order. */
void
cs_pipetree_sharp_allreduce(CsStepSink *sink, int channel, const int *m, int n, int root,
                            CsBuffer buf, gint64 off, gint64 bytes, gint64 time, int chunk)
{
    g_return_if_fail(n >= 1 && root >= 0 && root < n);
    for (int q = 1; q < n; q++) {
        int x = (root + q) % n;
        guint8 in = q == 1 ? CS_STEP_FLAG_REDUCE_SELF : CS_STEP_FLAG_SHARED_LAST_HOP;
        guint8 out = q == 1 ? CS_STEP_FLAG_FROM_SWITCH : CS_STEP_FLAG_SHARED_FIRST_HOP;
        direct_step(sink, m[x], time, -1 - 2 * (gint64)n, channel, CS_STEP_SEND, -1, m[root], buf,
                    off, buf, off, bytes, chunk, in);
        direct_step(sink, m[root], time + 1, q - 2 * (gint64)n, channel, CS_STEP_RECV_REDUCE, m[x],
                    -1, buf, off, buf, off, bytes, chunk, 0);
        direct_step(sink, m[root], time + 1, q - (gint64)n, channel, CS_STEP_SEND, -1, m[x], buf,
                    off, buf, off, bytes, chunk, out);
        direct_step(sink, m[x], time + 2, -1, channel, CS_STEP_RECV, m[root], -1, buf, off, buf,
                    off, bytes, chunk, 0);
    }
}

/* The NICs of node @node of @topo. */
static int
node_nics(const CsTopo *topo, int node)
{
    int n = 0;

    for (int d = 0; d < cs_topo_n_devices(topo); d++) {
        const CsDevice *dev = cs_topo_device(topo, d);
        if (dev->kind == CS_DEVICE_NIC && dev->node == node)
            n++;
    }
    return n;
}

gboolean
cs_collnet_supports(const CsTopo *topo, int nranks, const char **why)
{
    g_autoptr(CsNodeGroups) nodes = NULL;

    if (topo == NULL || !cs_topo_has_sharp(topo)) {
        *why = "needs a network switch with SHARP (\"sharp\": true) in the topology";
        return FALSE;
    }
    nodes = cs_node_groups_new(topo, nranks, NULL);
    if (nodes == NULL) {
        *why = "more ranks than GPUs in the topology";
        return FALSE;
    }
    if (nodes->n_groups < 2) {
        *why = "CollNet runs across nodes only (NCCL enables it for nNodes > 1)";
        return FALSE;
    }
    if (!cs_node_groups_uniform(nodes)) {
        *why = "nodes hold different numbers of ranks";
        return FALSE;
    }
    if (cs_node_groups_size(nodes, 0) > CS_COLLNET_MAX_LOCAL) {
        *why = "more than 8 ranks per node (NCCL_MAX_DIRECT_ARITY + 1, enqueue.cc)";
        return FALSE;
    }
    /* NICs counted per node in one pass over the devices (a pass per node is quadratic). */
    g_autofree int *nics = g_new0(int, cs_topo_n_nodes(topo));
    for (int d = 0; d < cs_topo_n_devices(topo); d++) {
        const CsDevice *dev = cs_topo_device(topo, d);
        if (dev->kind == CS_DEVICE_NIC && dev->node >= 0 && dev->node < cs_topo_n_nodes(topo))
            nics[dev->node]++;
    }
    for (int g = 0; g < nodes->n_groups; g++) {
        int r = cs_node_groups_rank(nodes, g, 0);
        if (nics[cs_topo_rank_node(topo, r)] == 0) {
            *why = "a node has no NIC";
            return FALSE;
        }
    }
    return TRUE;
}

CsNodeGroups *
cs_collnet_nodes(const CsTopo *topo, int nranks, CsProto proto, const char *label, GError **error)
{
    const char *why = NULL;

    if (proto != CS_PROTO_SIMPLE) {
        g_set_error(error, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_UNSUPPORTED,
                    "%s runs only with the Simple protocol (NCCL 2.28 tuning.cc), not %s", label,
                    cs_proto_name(proto));
        return NULL;
    }
    if (!cs_collnet_supports(topo, nranks, &why)) {
        g_set_error(error, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_UNSUPPORTED, "%s: %s", label, why);
        return NULL;
    }
    return cs_node_groups_new(topo, nranks, error);
}

int
cs_collnet_heads(const CsTopo *topo, const CsNodeGroups *nodes)
{
    int l = cs_node_groups_size(nodes, 0);
    int nics = node_nics(topo, cs_topo_rank_node(topo, cs_node_groups_rank(nodes, 0, 0)));

    return CLAMP(nics, 1, l);
}

int
cs_collnet_head_local(int h, int n_heads, int l)
{
    return (h * l + n_heads - 1) / n_heads;
}

/**
 * cs_collnet_direct_schedule:
 * The all-reduce CollNet Direct and NVLS across nodes share (collnet_direct.c, nvls.c): per
 * channel and chunk of @chunk_bytes, each node's ranks reduce-scatter into its heads (one per
 * NIC), heads h of every node all-reduce on the SHARP switch (cs_pipetree_sharp_allreduce()),
 * and each head gathers its part back to its node. With @nvls the node's phases go through
 * the NVSwitch (its in-switch reduction and multicast flags), as NVLS does; without, each rank
 * sends to each head and back, as CollNet Direct's scatter and gather warps do.
 * Returns: (transfer full): the schedule.
 */
CsSchedule *
cs_collnet_direct_schedule(const CsAlgoArgs *args, const CsNodeGroups *nodes, gint64 chunk_bytes,
                           gboolean nvls)
{
    const int es = cs_dtype_size(args->dtype);
    const CsOpSize size = cs_op_size(args->op, args->size_bytes, args->dtype, args->nranks);
    const int n = nodes->n_groups;
    const int l = cs_node_groups_size(nodes, 0);
    const int heads = cs_collnet_heads(args->topo, nodes);
    const gint64 chunk_el = chunk_bytes / es;
    g_autoptr(CsStepSink) sink = cs_step_sink_new(args->nranks);
    g_autofree int *m = g_new(int, l);
    g_autofree int *rail = g_new(int, n);
    g_autofree CsBlockMove *blocks = g_new0(CsBlockMove, l);
    g_autofree gint64 *shard_first = g_new(gint64, heads);
    g_autofree gint64 *shard_len = g_new(gint64, heads);
    CsSchedule *sched = cs_algo_schedule_new(args);

    for (int c = 0; c < args->n_channels; c++) {
        const gint64 max_len = cs_pipetree_channel_shards(size.recv_bytes / es, args->n_channels, c,
                                                          heads, shard_first, shard_len);
        for (gint64 i = 0; i * chunk_el < max_len; i++) {
            /* Block x of the node's phases is head x's piece; other ranks own nothing. */
            for (int x = 0; x < l; x++)
                blocks[x] = (CsBlockMove){ CS_BUF_INPUT, 0, CS_BUF_OUTPUT, 0, 0 };
            for (int h = 0; h < heads; h++)
                blocks[cs_collnet_head_local(h, heads, l)]
                    = cs_pipetree_shard_chunk(shard_first, shard_len, h, i, chunk_el, es);
            for (int g = 0; g < n; g++) {
                for (int x = 0; x < l; x++)
                    m[x] = cs_node_groups_rank(nodes, g, x);
                cs_pipetree_direct_reduce_scatter(sink, c, m, l, blocks, i, (int)i, nvls, 0);
            }
            for (int h = 0; h < heads; h++) {
                const CsBlockMove *b = &blocks[cs_collnet_head_local(h, heads, l)];
                for (int g = 0; g < n; g++)
                    rail[g] = cs_node_groups_rank(nodes, g, cs_collnet_head_local(h, heads, l));
                cs_pipetree_sharp_allreduce(sink, c, rail, n, (int)((i + h) % n), CS_BUF_OUTPUT,
                                            b->dst_off, b->bytes, i + 2, (int)i);
            }
            for (int x = 0; x < l; x++)
                blocks[x].src_buf = CS_BUF_OUTPUT;
            for (int g = 0; g < n; g++) {
                for (int x = 0; x < l; x++)
                    m[x] = cs_node_groups_rank(nodes, g, x);
                cs_pipetree_direct_all_gather(sink, c, m, l, blocks, i + 6, (int)i, nvls, 0);
            }
        }
    }
    cs_step_sink_flush(sink, sched);
    return sched;
}

/* ---- Sizes ---- */

gint64
cs_pipetree_part_start(gint64 n, int parts, int i)
{
    g_return_val_if_fail(parts >= 1 && i >= 0 && i <= parts, 0);
    return n / parts * i + n % parts * i / parts;
}

int
cs_pipetree_log2i(gint64 n)
{
    int l = 0;

    while (n >>= 1)
        l++;
    return l;
}

/* NCCL 2.28 enqueue.cc (computeColl / getChunkSize): NVLS caps the Simple step at
 * comm->nvlsChunkSize (NCCL_NVLS_CHUNKSIZE, default 128 KiB) and halves it for small sizes;
 * NVLS_TREE starts from nvlsChunkSize, caps it at 64 KiB from 4 nodes, and has its own
 * thresholds. */
gint64
cs_pipetree_nvls_chunk(gint64 chunk_bytes, int esize, int n_channels, int n_heads, int n_nodes,
                       gint64 total_bytes, gboolean nvls_tree)
{
    gint64 chunk = chunk_bytes;
    gint64 ops = (gint64)n_channels * n_heads;

    if (chunk <= 0) {
        chunk = 128 * 1024;
        if (nvls_tree) {
            if (n_nodes >= 4)
                chunk = 65536;
            if (total_bytes < 32 * ops * chunk && chunk > 262144)
                chunk = 262144;
            if (total_bytes < 16 * ops * chunk && chunk > 131072)
                chunk = 131072;
            if (total_bytes < 4 * ops * chunk && chunk > 65536)
                chunk = 65536;
            if (total_bytes < 1 * ops * chunk && chunk > 32768)
                chunk = 32768;
        }
        else {
            if (total_bytes < 64 * ops * chunk && chunk > 65536)
                chunk = 65536;
            if (total_bytes < 8 * ops * chunk && chunk > 32768)
                chunk = 32768;
            if (total_bytes < 2 * ops * chunk && chunk > 16384)
                chunk = 16384;
        }
    }
    chunk -= chunk % esize;
    return MAX(chunk, esize);
}
