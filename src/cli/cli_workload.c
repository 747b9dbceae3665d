// SPDX-License-Identifier: MIT
/* `collsim workload import`: a workload file (docs/workloads.md) from NCCL's own log of the
 * collectives a run called (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=COLL) or from a PyTorch profiler
 * trace (base/kineto.c), one phase per communicator, identical calls counted, each
 * communicator mapped to a group of the layout. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "base/json_util.h"
#include "base/kineto.h"
#include "base/nccl_log.h"
#include "base/op.h"
#include "cli/cli.h"

/* A workload collective's count per step, as `collsim plan` takes it (cli_plan.c). */
#define MAX_COUNT 1000000
/* Ranks of a workload's layout (cli_plan.c). */
#define MAX_RANKS 65536

static const char summary[]
    = "Write a workload (docs/workloads.md) from NCCL's log of the collectives a run called\n"
      "(NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=COLL) or from a PyTorch profiler trace (JSON with\n"
      "\"traceEvents\"), import one rank's calls, then 'collsim plan --workload W.json --topo T'.";

static const char description[]
    = "Each LOG is read line by line. A collective's INFO line (\"NAME: opCount ... count N\n"
      "datatype D ... comm 0x... [nranks=R] stream 0x...\", NCCL 2.3 to 2.30) must be whole:\n"
      "one cut short or garbled is an error naming FILE:LINE (exit 2); every other line is\n"
      "skipped and counted. Lines name their rank by HOST:PID:DEV; one rank's lines are\n"
      "imported (--rank, default the first rank in the log): every rank of an SPMD job calls\n"
      "the same collectives.\n"
      "\n"
      "Each communicator of that rank becomes a phase; identical calls (same collective, count\n"
      "and datatype) become one collective with their number of calls divided by --steps;\n"
      "bytes = count x datatype size, times the communicator's ranks for AllGather,\n"
      "ReduceScatter and AlltoAll (whose count is per rank or per peer). AllReduce, AllGather,\n"
      "ReduceScatter, Broadcast and AlltoAll are imported; Send, Recv, Reduce, Gather, Scatter\n"
      "and other calls are counted and left out: the workload format has no such operation.\n"
      "\n"
      "A log does not say which ranks a communicator holds, only how many. The layout is\n"
      "tp x dp x pp = --world (default: the largest communicator); a communicator of the\n"
      "world's size is the group \"world\"; the smaller sizes are tp (--tp, default the\n"
      "smallest) and dp (the other, or world / tp). --group 0xADDR=tp|dp|world names one\n"
      "communicator's group. The ranks the plan then takes are the layout's (TP-major, rails\n"
      "first: docs/workloads.md).\n"
      "\n"
      "A FILE whose first byte (after blanks) is '{' is a PyTorch profiler (Kineto) trace of\n"
      "one rank: its NCCL kernels whose args carry PyTorch's \"Collective name\" (or, where\n"
      "none does, its record_param_comms CPU ops) are its calls, each process group a\n"
      "communicator (--group PG=tp|dp|world names one). --steps defaults to the trace's\n"
      "ProfilerStep# spans, --world to its distributedInfo.world_size; the size of the groups\n"
      "of consecutive ranks is tp. A trace over 2 GiB, gzip'd or malformed is refused with\n"
      "FILE:LINE:COL (exit 2).\n"
      "\n"
      "Examples:\n"
      "  NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=COLL torchrun ... 2>&1 | tee run.log\n"
      "  collsim workload import run.log --steps 10 -o w.json\n"
      "  collsim workload import run.log --world 16 --tp 8 -o w.json\n"
      "  collsim workload import rank0.pt.trace.json -o w.json\n"
      "  collsim plan --workload w.json --topo hgx-h100x8-2n";

/* The command as invoked, to start every message. */
static const char *prog = "collsim workload import";

/* ---- NCCL calls the workload format takes ---- */

static const struct {
    const char *nccl;  /* NCCL's opName (src/collectives.cc) */
    CsOp op;           /* the workload's op */
    gboolean per_rank; /* count is per rank (AllGather, ReduceScatter) or per peer (AlltoAll):
                        * the whole buffer is count x nranks */
} imported_ops[] = {
    { "AllReduce", CS_OP_ALL_REDUCE, FALSE }, { "Broadcast", CS_OP_BROADCAST, FALSE },
    { "AllGather", CS_OP_ALL_GATHER, TRUE },  { "ReduceScatter", CS_OP_REDUCE_SCATTER, TRUE },
    { "AlltoAll", CS_OP_ALL_TO_ALL, TRUE },
};

static int
imported_op(const char *name)
{
    for (gsize i = 0; i < G_N_ELEMENTS(imported_ops); i++)
        if (strcmp(name, imported_ops[i].nccl) == 0)
            return (int)i;
    return -1;
}

/* ---- Communicators to groups ---- */

/* "comm 0x55.." for a log's communicator, "process group \"0\"" for a trace's.
 * (transfer full) */
static char *
comm_text(const CsNcclLogComm *c)
{
    if (c->name != NULL)
        return g_strdup_printf("process group \"%s\"", c->name);
    return g_strdup_printf("comm 0x%" G_GINT64_MODIFIER "x", c->comm);
}

/* "communicator 0x55.." or "process group \"0\"", for messages. (transfer full) */
static char *
comm_long(const CsNcclLogComm *c)
{
    if (c->name != NULL)
        return g_strdup_printf("process group \"%s\"", c->name);
    return g_strdup_printf("communicator 0x%" G_GINT64_MODIFIER "x", c->comm);
}

/* What --group calls @c: "0x55.." or the process group's name. (transfer full) */
static char *
comm_flag(const CsNcclLogComm *c)
{
    if (c->name != NULL)
        return g_strdup(c->name);
    return g_strdup_printf("0x%" G_GINT64_MODIFIER "x", c->comm);
}

/* "opCount 1a to 1c" of a log's calls, "collectives 3 to 40" of a trace's (in the order the
 * trace holds them). (transfer full) */
static char *
op_range(const CsNcclLogComm *c, guint64 first, guint64 last)
{
    if (c->name != NULL)
        return g_strdup_printf("collectives %" G_GUINT64_FORMAT " to %" G_GUINT64_FORMAT, first,
                               last);
    return g_strdup_printf("opCount %" G_GINT64_MODIFIER "x to %" G_GINT64_MODIFIER "x", first,
                           last);
}

typedef struct {
    const CsNcclLogComm *comm;
    gint64 imported; /* calls the workload takes */
    CsGroup group;
    gboolean named; /* by --group */
} CommMap;

static gboolean input_error(GError **error, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

static gboolean
input_error(GError **error, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    g_autofree char *what = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_INPUT, "%s: %s", prog, what);
    return FALSE;
}

/* Applies one --group "0xADDR=G" to @maps. */
static gboolean
apply_group_flag(const char *flag, const char *rank, CommMap *maps, guint n, GError **error)
{
    const char *eq = strchr(flag, '=');
    guint64 addr = 0;
    /* A trace's process group by its name. */
    for (guint i = 0; eq != NULL && i < n; i++)
        if (maps[i].comm->name != NULL && strlen(maps[i].comm->name) == (gsize)(eq - flag)
            && strncmp(flag, maps[i].comm->name, (gsize)(eq - flag)) == 0) {
            CsGroup g = CS_GROUP_NONE;
            for (int k = 0; k <= CS_GROUP_WORLD; k++)
                if (strcmp(eq + 1, cs_group_names[k]) == 0)
                    g = (CsGroup)k;
            if (g == CS_GROUP_NONE)
                return cs_cli_usage_error(
                    error, prog, "--group \"%s\": \"%s\" is not tp, dp or world", flag, eq + 1);
            maps[i].group = g;
            maps[i].named = TRUE;
            return TRUE;
        }
    gboolean ok
        = eq != NULL && flag[0] == '0' && (flag[1] == 'x' || flag[1] == 'X') && eq > flag + 2;
    if (ok) {
        g_autofree char *hex = g_strndup(flag + 2, (gsize)(eq - flag - 2));
        char *end = NULL;
        addr = g_ascii_strtoull(hex, &end, 16);
        ok = *end == '\0';
    }
    if (!ok)
        return cs_cli_usage_error(error, prog,
                                  "--group \"%s\": expected 0xADDR=tp, 0xADDR=dp or 0xADDR=world "
                                  "(ADDR a communicator as the log prints it), or PG=tp|dp|world "
                                  "(PG a process group of the trace)",
                                  flag);
    CsGroup g = CS_GROUP_NONE;
    for (int k = 0; k <= CS_GROUP_WORLD; k++)
        if (strcmp(eq + 1, cs_group_names[k]) == 0)
            g = (CsGroup)k;
    if (g == CS_GROUP_NONE)
        return cs_cli_usage_error(error, prog, "--group \"%s\": \"%s\" is not tp, dp or world",
                                  flag, eq + 1);
    for (guint i = 0; i < n; i++)
        if (maps[i].comm->comm == addr) {
            maps[i].group = g;
            maps[i].named = TRUE;
            return TRUE;
        }
    return cs_cli_usage_error(
        error, prog, "--group \"%s\": rank %s has no communicator 0x%" G_GINT64_MODIFIER "x", flag,
        rank, addr);
}

typedef struct {
    int world;
    int tp;
    int dp;
    int pp;
} Layout;

/* Sizes the layout and gives each communicator with imported calls a group (docs/workloads.md,
 * "Importing NCCL logs"). */
static gboolean
map_groups(CommMap *maps, guint n, int world_flag, int tp_flag, Layout *lay, GError **error)
{
    int world = world_flag;
    if (world <= 0)
        for (guint i = 0; i < n; i++)
            world = MAX(world, maps[i].comm->nranks);
    if (world > MAX_RANKS)
        return input_error(error, "a %d-rank job: a workload's layout has at most %d ranks", world,
                           MAX_RANKS);
    for (guint i = 0; i < n; i++)
        if (maps[i].comm->nranks > world) {
            g_autofree char *what = comm_long(maps[i].comm);
            return input_error(error, "%s has %d ranks, more than --world %d", what,
                               maps[i].comm->nranks, world);
        }
    /* The sizes named by --group, and those left to infer. */
    int named[CS_N_GROUPS] = { 0 };
    GArray *sizes = g_array_new(FALSE, FALSE, sizeof(int));
    for (guint i = 0; i < n; i++) {
        const int r = maps[i].comm->nranks;
        if (maps[i].named) {
            if (named[maps[i].group] != 0 && named[maps[i].group] != r) {
                g_array_unref(sizes);
                return input_error(error, "--group names communicators of %d and %d ranks %s",
                                   named[maps[i].group], r, cs_group_names[maps[i].group]);
            }
            named[maps[i].group] = r;
            continue;
        }
        if (maps[i].imported == 0 || r == 1 || r == world)
            continue;
        gboolean seen = FALSE;
        for (guint k = 0; k < sizes->len; k++)
            seen = seen || g_array_index(sizes, int, k) == r;
        if (!seen)
            g_array_append_val(sizes, r);
    }
    /* tp: --tp, a communicator named tp, or the smallest size left (not dp's). */
    int tp = tp_flag > 0 ? tp_flag : named[CS_GROUP_TP];
    if (tp == 0) {
        for (guint k = 0; k < sizes->len; k++) {
            const int s = g_array_index(sizes, int, k);
            if (s != named[CS_GROUP_DP] && (tp == 0 || s < tp))
                tp = s;
        }
        if (tp == 0)
            tp = 1;
    }
    if (named[CS_GROUP_TP] != 0 && named[CS_GROUP_TP] != tp) {
        g_array_unref(sizes);
        return input_error(error, "--tp %d, but --group names a communicator of %d ranks tp", tp,
                           named[CS_GROUP_TP]);
    }
    int dp = named[CS_GROUP_DP];
    GString *others = g_string_new(NULL);
    for (guint k = 0; k < sizes->len; k++) {
        const int s = g_array_index(sizes, int, k);
        if (s == tp || s == dp)
            continue;
        if (dp == 0)
            dp = s;
        else
            g_string_append_printf(others, "%s%d", others->len > 0 ? ", " : "", s);
    }
    g_array_unref(sizes);
    if (others->len > 0) {
        g_autofree char *list = g_string_free(others, FALSE);
        return input_error(error,
                           "communicators of tp %d, dp %d and more sizes (%s) below the world of "
                           "%d ranks: a workload's layout has two groups below the world; name "
                           "them with --tp and --group 0xADDR=tp|dp|world",
                           tp, dp, list, world);
    }
    g_string_free(others, TRUE);
    if (tp > world || world % tp != 0)
        return input_error(error, "tp %d does not divide the world of %d ranks", tp, world);
    if (dp == 0)
        dp = world / tp;
    if (world % ((gint64)tp * dp) != 0)
        return input_error(error,
                           "tp %d x dp %d does not divide the world of %d ranks: the layout is "
                           "tp x dp x pp (set --world, --tp or --group)",
                           tp, dp, world);
    lay->world = world;
    lay->tp = tp;
    lay->dp = dp;
    lay->pp = world / (tp * dp);

    const int size_of[CS_N_GROUPS] = { tp, dp, world, 1, 1 };
    for (guint i = 0; i < n; i++) {
        CommMap *m = &maps[i];
        const int r = m->comm->nranks;
        if (m->named) {
            if (r != size_of[m->group]) {
                g_autofree char *flag = comm_flag(m->comm);
                return input_error(error,
                                   "--group %s=%s: the communicator has %d ranks, the layout's %s "
                                   "%d",
                                   flag, cs_group_names[m->group], r, cs_group_names[m->group],
                                   size_of[m->group]);
            }
            continue;
        }
        if (m->imported == 0 || (r == 1 && world > 1)) {
            m->group = CS_GROUP_NONE;
            continue;
        }
        if (r == world)
            m->group = CS_GROUP_WORLD;
        else if (r == tp && r == dp) {
            g_autofree char *what = comm_long(m->comm);
            g_autofree char *flag = comm_flag(m->comm);
            return input_error(error,
                               "%s has %d ranks, the size of both tp and dp: say which with "
                               "--group %s=tp or =dp",
                               what, r, flag);
        }
        else if (r == tp)
            m->group = CS_GROUP_TP;
        else
            m->group = CS_GROUP_DP; /* r == dp: every other size was refused above */
    }
    return TRUE;
}

/* The step between the ranks a trace lists for a process group ("[0, 1, 2, 3]" -> 1, "[0, 4]"
 * -> 4; a long list may be cut short with ", ...", and the ranks before it are read), or 0
 * when they are fewer than two or not evenly spaced. */
static int
ranks_stride(const char *ranks)
{
    const char *p = ranks;
    while (*p == ' ' || *p == '[')
        p++;
    gint64 prev = 0;
    gint64 stride = 0;
    int seen = 0;
    while (g_ascii_isdigit(*p)) {
        char *end = NULL;
        const gint64 r = g_ascii_strtoll(p, &end, 10);
        if (seen == 1)
            stride = r - prev;
        else if (seen > 1 && r - prev != stride)
            return 0;
        prev = r;
        seen++;
        p = end;
        while (*p == ',' || *p == ' ')
            p++;
    }
    return seen >= 2 && stride > 0 && stride <= G_MAXINT ? (int)stride : 0;
}

/* A trace names each process group's ranks: when exactly one size below the world is that of
 * groups of consecutive ranks, it is tp (the plan places tp on consecutive ranks), and the
 * reason goes to @report. 0 when the ranks do not say. */
static int
tp_from_ranks(const CommMap *maps, guint n, int world_flag, GString *report)
{
    int world = world_flag;
    if (world <= 0)
        for (guint i = 0; i < n; i++)
            world = MAX(world, maps[i].comm->nranks);
    int tp = 0;
    const CsNcclLogComm *which = NULL;
    for (guint i = 0; i < n; i++) {
        const CsNcclLogComm *c = maps[i].comm;
        if (maps[i].named || maps[i].imported == 0 || c->ranks == NULL || c->nranks <= 1
            || c->nranks >= world || ranks_stride(c->ranks) != 1)
            continue;
        if (tp != 0 && tp != c->nranks)
            return 0;
        tp = c->nranks;
        which = c;
    }
    if (tp != 0)
        g_string_append_printf(report,
                               "%s: tp %d: process group \"%s\" holds consecutive ranks %s\n", prog,
                               tp, which->name, which->ranks);
    return tp;
}

/* ---- The workload ---- */

/* One collective of @comm's phase, or FALSE with the error when it does not fit a workload. */
static gboolean
add_collective(cJSON *list, GHashTable *index, const CsNcclLogComm *comm, const CsNcclLogCall *call,
               int steps, CsGroup group, gint64 *rounded, GError **error)
{
    const int k = imported_op(call->name);
    g_autofree char *what = comm_text(comm);
    const gint64 elem = cs_nccl_log_datatype_size(call->datatype);
    const gint64 per_call = (gint64)call->count * elem;
    const gint64 mult = imported_ops[k].per_rank ? comm->nranks : 1;
    if (per_call > CS_NCCL_LOG_MAX_BYTES / mult)
        return input_error(
            error, "%s of count %" G_GUINT64_FORMAT " %s on %d ranks (%s): more than 1 PiB",
            call->name, call->count, cs_nccl_log_datatype_name(call->datatype), comm->nranks, what);
    gint64 bytes = per_call * mult;
    if (bytes == 0)
        return TRUE; /* count 0: NCCL returns at once, nothing moves */
    /* collsim plan counts float32 elements, in 16-byte blocks per rank where each rank has a
     * block (cs_op_nccl_tests_bytes): smaller calls are written as its smallest size. */
    const gint64 smallest = imported_ops[k].per_rank ? 16 * (gint64)comm->nranks : 4;
    if (bytes < smallest) {
        bytes = smallest;
        *rounded += call->calls;
    }
    if (call->calls % steps != 0) {
        g_autofree char *range = op_range(comm, call->first_op, call->last_op);
        return input_error(error,
                           "%s of count %" G_GUINT64_FORMAT
                           " %s (%s, %s) is called %" G_GINT64_FORMAT
                           " times, not a multiple of --steps %d: cut the %s to whole steps",
                           call->name, call->count, cs_nccl_log_datatype_name(call->datatype), what,
                           range, call->calls, steps, comm->name != NULL ? "trace" : "log");
    }
    const gint64 count = call->calls / steps;
    if (count > MAX_COUNT)
        return input_error(error,
                           "%s of count %" G_GUINT64_FORMAT " (%s): %" G_GINT64_FORMAT
                           " calls per step, more than %d (set --steps)",
                           call->name, call->count, what, count, MAX_COUNT);
    /* The same collective with another datatype but the same bytes joins it. */
    const char *op = cs_op_name(imported_ops[k].op);
    g_autofree char *text = g_strdup_printf("%" G_GINT64_FORMAT, bytes);
    g_autofree char *key = g_strdup_printf("%s %s", op, text);
    cJSON *seen = g_hash_table_lookup(index, key);
    if (seen != NULL) {
        cJSON *n = cJSON_GetObjectItemCaseSensitive(seen, "count");
        const double total = n->valuedouble + (double)count;
        if (total > MAX_COUNT)
            return input_error(error,
                               "%s of %s bytes (%s): more than %d calls per step (set --steps)", op,
                               text, what, MAX_COUNT);
        cJSON_SetNumberValue(n, total);
        return TRUE;
    }
    cJSON *c = cJSON_CreateObject();
    cJSON_AddItemToArray(list, c);
    g_hash_table_insert(index, g_steal_pointer(&key), c);
    cJSON_AddStringToObject(c, "op", op);
    cJSON_AddStringToObject(c, "bytes", text);
    cJSON_AddNumberToObject(c, "count", (double)count);
    cJSON_AddStringToObject(c, "group", cs_group_names[group]);
    return TRUE;
}

/* "3 Send, 3 Recv" of the calls the workload cannot take. (transfer full) */
static char *
left_out(const CsNcclLogRank *rank, gint64 *total)
{
    g_autoptr(GHashTable) counts = g_hash_table_new(g_str_hash, g_str_equal);
    GPtrArray *order = g_ptr_array_new();
    *total = 0;
    for (guint i = 0; i < rank->comms->len; i++) {
        const CsNcclLogComm *c = g_ptr_array_index(rank->comms, i);
        for (guint j = 0; j < c->call_list->len; j++) {
            const CsNcclLogCall *call = &g_array_index(c->call_list, CsNcclLogCall, j);
            if (imported_op(call->name) >= 0)
                continue;
            gpointer old = g_hash_table_lookup(counts, call->name);
            if (old == NULL)
                g_ptr_array_add(order, call->name);
            g_hash_table_insert(counts, call->name,
                                GSIZE_TO_POINTER(GPOINTER_TO_SIZE(old) + (gsize)call->calls));
            *total += call->calls;
        }
    }
    GString *s = g_string_new(NULL);
    for (guint i = 0; i < order->len; i++) {
        const char *name = g_ptr_array_index(order, i);
        g_string_append_printf(s, "%s%" G_GSIZE_FORMAT " %s", i > 0 ? ", " : "",
                               GPOINTER_TO_SIZE(g_hash_table_lookup(counts, name)), name);
    }
    g_ptr_array_unref(order);
    return g_string_free(s, FALSE);
}

/* The workload of @rank (transfer full), its summary for stderr in @report. */
static char *
build_workload(const CsNcclLog *log, const CsNcclLogRank *rank, const CsKinetoInfo *trace,
               char **paths, const char *name, int steps, int world_flag, int tp_flag,
               char **group_flags, GString *report, GError **error)
{
    const guint n = rank->comms->len;
    g_autofree CommMap *maps = g_new0(CommMap, n);
    for (guint i = 0; i < n; i++) {
        const CsNcclLogComm *c = g_ptr_array_index(rank->comms, i);
        maps[i].comm = c;
        maps[i].group = CS_GROUP_NONE;
        for (guint j = 0; j < c->call_list->len; j++) {
            const CsNcclLogCall *call = &g_array_index(c->call_list, CsNcclLogCall, j);
            if (imported_op(call->name) >= 0 && call->count > 0)
                maps[i].imported += call->calls;
        }
    }
    for (char **g = group_flags; g != NULL && *g != NULL; g++)
        if (!apply_group_flag(*g, rank->label, maps, n, error))
            return NULL;
    gboolean tp_named = FALSE;
    for (guint i = 0; i < n; i++)
        tp_named = tp_named || (maps[i].named && maps[i].group == CS_GROUP_TP);
    if (trace != NULL && tp_flag == 0 && !tp_named)
        tp_flag = tp_from_ranks(maps, n, world_flag, report);
    Layout lay = { 0 };
    if (!map_groups(maps, n, world_flag, tp_flag, &lay, error))
        return NULL;

    g_autoptr(cJSON) root = cJSON_CreateObject();
    g_autofree char *files = g_strjoinv(", ", paths);
    g_autofree char *default_name
        = g_strdup_printf("%s %s, rank %s", trace != NULL ? "PyTorch profiler trace" : "NCCL log",
                          files, rank->label);
    cJSON_AddStringToObject(root, "name", name != NULL ? name : default_name);
    cJSON_AddStringToObject(root, "notes", ""); /* filled in below, kept after "name" */
    GString *notes = g_string_new(NULL);
    if (trace != NULL)
        g_string_append_printf(
            notes,
            "Imported by collsim workload import from the PyTorch profiler trace %s: the "
            "%" G_GINT64_FORMAT " collectives of rank %s (%s), as %d "
            "step%s (%d ProfilerStep# spans in the trace). Layout: world %d ranks = tp %d x dp "
            "%d x pp %d.",
            files, trace->collectives, rank->label,
            trace->from_kernels ? "record_param_comms args of NCCL kernels"
                                : "record_param_comms CPU ops",
            steps, steps == 1 ? "" : "s", trace->profiler_steps, lay.world, lay.tp, lay.dp, lay.pp);
    else
        g_string_append_printf(
            notes,
            "Imported by collsim workload import from the NCCL_DEBUG_SUBSYS=COLL "
            "lines of %s: %" G_GINT64_FORMAT " collective lines of %u rank%s, "
            "those of rank %s taken, as %d step%s. Layout: world %d ranks = tp "
            "%d x dp %d x pp %d.",
            files, cs_nccl_log_n_collective_lines(log), cs_nccl_log_ranks(log)->len,
            cs_nccl_log_ranks(log)->len == 1 ? "" : "s", rank->label, steps, steps == 1 ? "" : "s",
            lay.world, lay.tp, lay.dp, lay.pp);
    cJSON *layout = cJSON_AddObjectToObject(root, "layout");
    cJSON_AddNumberToObject(layout, "tp", lay.tp);
    cJSON_AddNumberToObject(layout, "dp", lay.dp);
    cJSON_AddNumberToObject(layout, "pp", lay.pp);
    cJSON *phases = cJSON_AddArrayToObject(root, "phases");
    gint64 rounded = 0;
    int per_group[CS_N_GROUPS] = { 0 };
    g_string_append_printf(report, "%s: rank %s: layout tp %d x dp %d x pp %d = %d ranks\n", prog,
                           rank->label, lay.tp, lay.dp, lay.pp, lay.world);
    for (guint i = 0; i < n; i++) {
        const CsNcclLogComm *c = maps[i].comm;
        g_autofree char *ctext = comm_text(c);
        g_autofree char *range = op_range(c, c->first_op, c->last_op);
        g_autofree char *pname = NULL;
        if (maps[i].group != CS_GROUP_NONE)
            pname = g_strdup_printf("%s comm %d", cs_group_names[maps[i].group],
                                    ++per_group[maps[i].group]);
        g_autofree char *line = g_strdup_printf(
            "%s (%d ranks%s%s, %s, %" G_GINT64_FORMAT " calls): %s", ctext, c->nranks,
            c->ranks != NULL ? " " : "", c->ranks != NULL ? c->ranks : "", range, c->calls,
            pname != NULL ? pname : "left out");
        g_string_append_printf(notes, " %s%s.", line,
                               maps[i].group == CS_GROUP_NONE
                                   ? (maps[i].imported == 0 ? " (no call the format takes)"
                                                            : " (one rank: no communication)")
                                   : "");
        g_string_append_printf(report, "%s:   %s\n", prog, line);
        if (maps[i].group == CS_GROUP_NONE)
            continue;
        cJSON *phase = cJSON_CreateObject();
        cJSON_AddStringToObject(phase, "name", pname);
        cJSON *list = cJSON_AddArrayToObject(phase, "collectives");
        g_autoptr(GHashTable) index = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
        for (guint j = 0; j < c->call_list->len; j++) {
            const CsNcclLogCall *call = &g_array_index(c->call_list, CsNcclLogCall, j);
            if (imported_op(call->name) < 0)
                continue;
            if (!add_collective(list, index, c, call, steps, maps[i].group, &rounded, error)) {
                cJSON_Delete(phase);
                g_string_free(notes, TRUE);
                return NULL;
            }
        }
        if (cJSON_GetArraySize(list) > 0)
            cJSON_AddItemToArray(phases, phase);
        else
            cJSON_Delete(phase);
    }
    if (rounded > 0)
        g_string_append_printf(notes,
                               " %" G_GINT64_FORMAT " calls smaller than collsim plan's smallest "
                               "size (4 bytes; 16 bytes per rank for allgather, reducescatter and "
                               "alltoall) are written as that size.",
                               rounded);
    gint64 skipped = 0;
    g_autofree char *skipped_list = left_out(rank, &skipped);
    if (skipped > 0) {
        g_string_append_printf(notes, " Left out (no such operation in the format): %s.",
                               skipped_list);
        g_string_append_printf(report, "%s: left out %s (no such operation in a workload)\n", prog,
                               skipped_list);
    }
    if (trace != NULL && trace->compute_kernels > 0)
        g_string_append_printf(
            notes,
            " Its GPU ran %" G_GINT64_FORMAT " other kernels, busy %.1f us per step (the "
            "union of their spans over %d step%s); not written as a phase's compute: a phase "
            "here is a process group, and the trace does not say which of its collectives wait "
            "for which kernels.",
            trace->compute_kernels, trace->compute_busy_us / steps, steps, steps == 1 ? "" : "s");
    if (trace != NULL)
        g_string_append(notes, " The plan places groups TP-major (docs/workloads.md), whatever "
                               "ranks the trace's process groups held (listed above).");
    else
        g_string_append(notes, " A log does not say which ranks a communicator holds: the plan "
                               "places groups TP-major (docs/workloads.md).");
    cJSON_ReplaceItemInObjectCaseSensitive(root, "notes", cJSON_CreateString(notes->str));
    g_string_free(notes, TRUE);
    if (cJSON_GetArraySize(phases) == 0) {
        input_error(error,
                    "rank %s called no collective a workload takes (AllReduce, AllGather, "
                    "ReduceScatter, Broadcast, AlltoAll) with a non-zero count%s%s",
                    rank->label, skipped > 0 ? "; it called " : "",
                    skipped > 0 ? skipped_list : "");
        return NULL;
    }
    char *printed = cs_json_print(root, TRUE);
    char *text = g_strconcat(printed, "\n", NULL);
    cJSON_free(printed);
    return text;
}

/* ---- The command ---- */

static gboolean import_logs(const CsNcclLog *log, const CsKinetoInfo *traces, guint n_files,
                            guint n_traces, char **logs, const char *rank_label, const char *name,
                            int steps, int world, int tp, char **groups, const char *output,
                            GError **error);

static gboolean
workload_import(int argc, char **argv, GError **error)
{
    prog = argv[0];
    g_autofree char *output = NULL;
    g_autofree char *rank_label = NULL;
    g_autofree char *name = NULL;
    g_auto(GStrv) groups = NULL;
    g_auto(GStrv) logs = NULL;
    int steps = G_MININT; /* unset: 1, or a trace's ProfilerStep# spans */
    int world = 0;
    int tp = 0;
    const GOptionEntry entries[]
        = { { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output,
              "Write the workload to FILE (replaced whole or not at all; default stdout)", "FILE" },
            { "rank", 0, 0, G_OPTION_ARG_STRING, &rank_label,
              "The rank whose lines to import, HOST:PID:DEV as the summary prints it (default: the "
              "first in the log)",
              "R" },
            { "steps", 0, 0, G_OPTION_ARG_INT, &steps,
              "The input holds N training steps: counts are calls / N (default 1, or a trace's "
              "ProfilerStep# spans)",
              "N" },
            { "world", 0, 0, G_OPTION_ARG_INT, &world,
              "Ranks in the job (default: the largest communicator)", "N" },
            { "tp", 0, 0, G_OPTION_ARG_INT, &tp,
              "Ranks of the tp group (default: the smallest communicator below the world)", "N" },
            { "group", 0, 0, G_OPTION_ARG_STRING_ARRAY, &groups,
              "Communicator 0xADDR (a trace's process group PG) is group G (tp, dp or world); "
              "repeat for more",
              "0xADDR=G" },
            { "name", 0, 0, G_OPTION_ARG_STRING, &name, "The workload's name", "TEXT" },
            { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &logs, NULL, NULL },
            G_OPTION_ENTRY_NULL };
    if (!cs_cli_parse(&argc, &argv, entries, "LOG...", summary, description, error))
        return FALSE;
    if (logs == NULL || logs[0] == NULL)
        return cs_cli_usage_error(error, prog, "a LOG file is required (\"-\" for stdin)");
    if (steps != G_MININT && steps < 1)
        return cs_cli_usage_error(error, prog, "--steps %d: at least 1", steps);
    if (world < 0 || world > MAX_RANKS)
        return cs_cli_usage_error(error, prog, "--world %d: 1 to %d", world, MAX_RANKS);
    if (tp < 0 || tp > MAX_RANKS)
        return cs_cli_usage_error(error, prog, "--tp %d: 1 to %d", tp, MAX_RANKS);
    if (!cs_cli_check_output(prog, "--output", output, error))
        return FALSE;

    g_autoptr(CsNcclLog) log = cs_nccl_log_new();
    const guint n_files = g_strv_length(logs);
    g_autofree CsKinetoInfo *traces = g_new0(CsKinetoInfo, n_files);
    guint n_traces = 0;
    for (guint i = 0; i < n_files; i++) {
        g_autoptr(GError) local = NULL;
        gboolean ok;
        if (cs_kineto_looks_like_trace(logs[i])) {
            ok = cs_kineto_add_file(log, logs[i], &traces[i], &local);
            n_traces++;
        }
        else
            ok = cs_nccl_log_add_file(log, logs[i], &local);
        if (!ok) {
            for (guint k = 0; k < n_files; k++)
                cs_kineto_info_clear(&traces[k]);
            g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_INPUT, "%s: %s", prog, local->message);
            return FALSE;
        }
    }
    gboolean ok = import_logs(log, traces, n_files, n_traces, logs, rank_label, name, steps, world,
                              tp, groups, output, error);
    for (guint k = 0; k < n_files; k++)
        cs_kineto_info_clear(&traces[k]);
    return ok;
}

/* The rest of workload_import, once every input is read into @log. */
static gboolean
import_logs(const CsNcclLog *log, const CsKinetoInfo *traces, guint n_files, guint n_traces,
            char **logs, const char *rank_label, const char *name, int steps, int world, int tp,
            char **groups, const char *output, GError **error)
{
    const GPtrArray *ranks = cs_nccl_log_ranks(log);
    if (ranks->len == 0 && n_traces > 0)
        return input_error(error,
                           "%s: no collective (an NCCL kernel or record_param_comms with a "
                           "\"Collective name\") in the trace: profile with "
                           "torch.profiler on a run that uses torch.distributed",
                           logs[0]);
    if (ranks->len == 0)
        return input_error(error,
                           "%s: no NCCL collective line (\"NCCL INFO AllReduce: opCount ...\") "
                           "in %" G_GINT64_FORMAT " lines: run with NCCL_DEBUG=INFO "
                           "NCCL_DEBUG_SUBSYS=COLL",
                           logs[0], cs_nccl_log_n_other_lines(log));
    const CsNcclLogRank *rank = g_ptr_array_index(ranks, 0);
    if (rank_label != NULL) {
        rank = cs_nccl_log_find_rank(log, rank_label);
        if (rank == NULL) {
            GString *list = g_string_new(NULL);
            for (guint i = 0; i < ranks->len && i < 8; i++)
                g_string_append_printf(list, "%s%s", i > 0 ? ", " : "",
                                       ((const CsNcclLogRank *)g_ptr_array_index(ranks, i))->label);
            if (ranks->len > 8)
                g_string_append(list, ", ...");
            g_autofree char *names = g_string_free(list, FALSE);
            return cs_cli_usage_error(error, prog, "--rank %s: not in the log (its ranks: %s)",
                                      rank_label, names);
        }
    }
    /* The trace the rank comes from, if it does. */
    const CsKinetoInfo *trace = NULL;
    for (guint i = 0; i < n_files; i++)
        if (traces[i].rank != NULL && strcmp(traces[i].rank, rank->label) == 0)
            trace = &traces[i];
    g_autoptr(GString) report = g_string_new(NULL);
    if (trace != NULL) {
        if (steps == G_MININT)
            steps = MAX(trace->profiler_steps, 1);
        if (world == 0)
            world = trace->world_size;
        g_string_append_printf(report,
                               "%s: %" G_GINT64_FORMAT " events; %" G_GINT64_FORMAT
                               " collectives of rank %s on %s; %d ProfilerStep# spans: %d step%s\n",
                               prog, trace->events, trace->collectives, rank->label,
                               trace->from_kernels ? "NCCL kernels" : "record_param_comms CPU ops",
                               trace->profiler_steps, steps, steps == 1 ? "" : "s");
        if (trace->compute_kernels > 0)
            g_string_append_printf(report,
                                   "%s: other GPU kernels busy %.1f us per step (in the notes, "
                                   "not as compute)\n",
                                   prog, trace->compute_busy_us / steps);
    }
    else
        g_string_append_printf(report,
                               "%s: %" G_GINT64_FORMAT " collective lines of %u rank%s; other "
                               "lines skipped: %" G_GINT64_FORMAT "\n",
                               prog, cs_nccl_log_n_collective_lines(log), ranks->len,
                               ranks->len == 1 ? "" : "s", cs_nccl_log_n_other_lines(log));
    if (steps == G_MININT)
        steps = 1;
    g_autofree char *text
        = build_workload(log, rank, trace, logs, name, steps, world, tp, groups, report, error);
    if (text == NULL)
        return FALSE;
    if (!cs_cli_write_output(prog, "--output", output, text, -1, error))
        return FALSE;
    fputs(report->str, stderr);
    return TRUE;
}

static void
print_usage(const char *prog_name)
{
    printf("Usage: %s import [OPTION...] LOG...\n"
           "\n"
           "Workload files for 'collsim plan' (docs/workloads.md).\n"
           "\n"
           "Commands:\n"
           "  import   a workload from NCCL's log of a run (NCCL_DEBUG=INFO "
           "NCCL_DEBUG_SUBSYS=COLL)\n"
           "           or from a PyTorch profiler trace (JSON)\n"
           "\n"
           "'%s import --help' describes the options.\n",
           prog_name, prog_name);
}

/**
 * cs_cli_workload:
 * `collsim workload import`: the one verb so far, dispatched as `collsim topo` dispatches.
 */
gboolean
cs_cli_workload(int argc, char **argv, GError **error)
{
    if (argc >= 2
        && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0
            || strcmp(argv[1], "help") == 0)) {
        print_usage(argv[0]);
        return TRUE;
    }
    if (argc < 2 || strcmp(argv[1], "import") != 0) {
        g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_USAGE, "%s: %s (import)", argv[0],
                    argc < 2 ? "missing command" : "unknown command");
        return FALSE;
    }
    g_autofree char *sub_prog = g_strdup_printf("%s import", argv[0]);
    g_autofree char **sub = g_new0(char *, argc);
    sub[0] = sub_prog;
    for (int k = 2; k < argc; k++)
        sub[k - 1] = argv[k];
    return workload_import(argc - 1, sub, error);
}
