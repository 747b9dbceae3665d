// SPDX-License-Identifier: MIT
/* `collsim plan`: a workload (the collectives of a training step, by phase, each on a group
 * of a TP x DP x PP layout) on each candidate topology: each collective's time and busbw,
 * each phase's communication and exposed time, and the step time (docs/workloads.md). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/fileio.h"
#include "base/json_util.h"
#include "base/op.h"
#include "analysis/plot.h"
#include "base/parallel.h"
#include "base/expr.h"
#include "base/units.h"
#include "cli/cli.h"
#include "models/nccl.h"
#include "predict/predict.h"
#include "topo/topo.h"

/* A workload is a small hand-written file; anything larger is a mistake. */
#define MAX_WORKLOAD_BYTES ((gsize)1 << 20)
/* A step with more collectives per phase than this is not written by hand. */
#define MAX_COUNT 1000000
/* Steps of a training run: 1e12 is past any run (and exact in a double). */
#define MAX_STEPS 1e12

static const char summary[]
    = "Plan a purchase: run a workload's collectives (the communication of one training\n"
      "step, by phase) on each candidate topology and print each collective's time and busbw,\n"
      "each phase's communication and exposed time, and the step time.";

static const char description[]
    = "The workload file (docs/workloads.md) names a parallel layout (tp, dp, optional cp, ep,\n"
      "pp) and phases, each a list of collectives on the group \"tp\", \"cp\", \"ep\", \"dp\",\n"
      "\"pp\" or \"world\" of that layout, with an optional compute time and whether\n"
      "communication overlaps it. Ranks are laid out in Megatron-LM's order tp-cp-ep-dp-pp,\n"
      "rails first: TP groups are consecutive ranks, a DP group takes the ranks with the same TP\n"
      "and CP index, an EP group consecutive ones of a DP group, PP stages come last (a PP group\n"
      "is one rank of each stage). sendrecv is nccl-tests' ring shift over the group: each rank\n"
      "sends to the next and receives from the one before.\n"
      "\n"
      "Each collective is predicted as 'collsim run' predicts it (NCCL's pick where NCCL runs\n"
      "it on GPUs its model knows, collsim's fastest otherwise), picked for the first group of\n"
      "its kind (tp: ranks 0..tp-1; dp: ranks 0, tp, 2tp...; world: every rank of the layout)\n"
      "and run by every group of that kind at once (the DP groups of all TP ranks and stages\n"
      "together), sharing the links they share: two GPUs behind one NIC halve each other's\n"
      "network bandwidth. The time is the last group's.\n"
      "\n"
      "A phase's communication time is the sum of its collectives' times x count; its exposed\n"
      "time is that minus the compute time when the phase overlaps, else all of it; the step\n"
      "time is the sum over phases of compute + exposed time.\n"
      "\n"
      "Examples:\n"
      "  collsim plan --workload examples/workloads/dp-gradient-buckets.json \\\n"
      "      --topo hgx-h100x8-2n --topo dgx-h100x8\n"
      "  collsim plan --workload W.json --topo hgx-h100x8-2n --format csv\n"
      "  collsim plan --workload W.json --topo hgx-h100x8-2n --topo dgx-h100x8 --plot plan.svg";

/* The command as invoked, to start every message. */
static const char *prog = "collsim plan";

/* ---- The workload ---- */

typedef struct {
    CsOp op;
    gint64 bytes;
    int count;
    CsGroup group;
    CsDtype dtype; /* nccl-tests' -d: what a reduction adds and the elements counted */
} Collective;

typedef struct {
    char *name;
    double compute_s;
    gboolean overlap;
    GArray *colls; /* Collective */
} Phase;

typedef struct {
    char *name;
    int tp;
    int cp; /* context-parallel size, 1 when not given */
    int ep; /* expert-parallel size, a divisor of dp, 1 when not given */
    int dp;
    int pp;
    gint64 steps;      /* steps of a training run; 0 when not given */
    GPtrArray *phases; /* Phase */
    /* "model": the dimensions formulas in "bytes" and "count" may name. */
    GPtrArray *dim_names; /* char * */
    GArray *dim_values;   /* double */
    CsExprNames dims;
} Workload;

static void
phase_free(gpointer data)
{
    Phase *p = data;
    g_free(p->name);
    g_array_unref(p->colls);
    g_free(p);
}

static void
workload_free(Workload *w)
{
    if (w == NULL)
        return;
    g_free(w->name);
    g_ptr_array_unref(w->phases);
    g_clear_pointer(&w->dim_names, g_ptr_array_unref);
    g_clear_pointer(&w->dim_values, g_array_unref);
    g_free(w);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC(Workload, workload_free)

/* The collectives a plan takes: what data-, tensor- and pipeline-parallel training steps run
 * (sendrecv: a pipeline's stage-to-stage exchange, docs/workloads.md). */
static const CsOp plan_ops[] = { CS_OP_ALL_REDUCE, CS_OP_ALL_GATHER, CS_OP_REDUCE_SCATTER,
                                 CS_OP_ALL_TO_ALL, CS_OP_BROADCAST,  CS_OP_SEND_RECV };

/* Member @key of @node as a whole number in [@min, @max]: a number, for "bytes" also a size
 * with units ("64 MiB"), or a formula of the model's dimensions ("b * s * h * 2"). */
static gboolean
get_whole(const CsJsonCtx *ctx, const cJSON *node, const char *path, const char *key,
          const CsExprNames *dims, gboolean size, double min, double max, double *out,
          GError **error)
{
    const cJSON *member = cs_json_member(node, key);
    g_autofree char *where = cs_json_path_member(path, key);
    if (cJSON_IsString(member)) {
        gint64 bytes = 0;
        g_autoptr(GError) local = NULL;
        if (size && cs_units_parse_size(member->valuestring, &bytes, NULL)) {
            *out = (double)bytes;
        }
        else if (!cs_expr_eval(member->valuestring, dims, out, &local)) {
            cs_json_set_error(ctx, error, where, "%s", local->message);
            return FALSE;
        }
    }
    else if (cJSON_IsNumber(member)) {
        *out = member->valuedouble;
    }
    else {
        cs_json_set_error(ctx, error, where,
                          "a number or a formula of the model's dimensions (a string) is "
                          "expected");
        return FALSE;
    }
    if (*out != floor(*out) || *out < min || *out > max) {
        cs_json_set_error(ctx, error, where, "%.17g is not a whole number from %.0f to %.0f", *out,
                          min, max);
        return FALSE;
    }
    return TRUE;
}

static gboolean
parse_collective(const CsJsonCtx *ctx, const cJSON *node, const char *path, const CsExprNames *dims,
                 Collective *c, GError **error)
{
    static const char *const keys[] = { "op", "bytes", "count", "group", "datatype", NULL };
    if (!cs_json_check_object(ctx, node, path, keys, error))
        return FALSE;
    const char *op = NULL;
    const char *group = NULL;
    if (!cs_json_get_string(ctx, node, path, "op", TRUE, &op, error))
        return FALSE;
    gboolean known = FALSE;
    CsOp parsed;
    if (cs_op_from_name(op, &parsed, NULL))
        for (gsize i = 0; i < G_N_ELEMENTS(plan_ops); i++)
            known = known || plan_ops[i] == parsed;
    if (!known) {
        g_autofree char *where = cs_json_path_member(path, "op");
        cs_json_set_error(ctx, error, where,
                          "\"%s\" is not a collective a plan takes (allreduce, allgather, "
                          "reducescatter, alltoall, broadcast, sendrecv)",
                          op);
        return FALSE;
    }
    c->op = parsed;
    double bytes = 0;
    if (cs_json_member(node, "bytes") == NULL) {
        cs_json_set_error(ctx, error, path, "\"bytes\" is missing");
        return FALSE;
    }
    if (!get_whole(ctx, node, path, "bytes", dims, TRUE, 1, (double)CS_PREDICT_MAX_BYTES, &bytes,
                   error))
        return FALSE;
    c->bytes = (gint64)bytes;
    c->count = 1;
    if (cs_json_member(node, "count") != NULL) {
        double count = 0;
        if (!get_whole(ctx, node, path, "count", dims, FALSE, 1, MAX_COUNT, &count, error))
            return FALSE;
        c->count = (int)count;
    }
    const char *dtype = NULL;
    c->dtype = CS_DTYPE_FLOAT;
    if (!cs_json_get_string(ctx, node, path, "datatype", FALSE, &dtype, error))
        return FALSE;
    g_autoptr(GError) bad_dtype = NULL;
    if (dtype != NULL && !cs_dtype_from_name(dtype, &c->dtype, &bad_dtype)) {
        g_autofree char *where = cs_json_path_member(path, "datatype");
        cs_json_set_error(ctx, error, where, "%s", bad_dtype->message);
        return FALSE;
    }
    if (!cs_json_get_string(ctx, node, path, "group", TRUE, &group, error))
        return FALSE;
    for (int g = 0; g < CS_N_GROUPS; g++)
        if (strcmp(group, cs_group_names[g]) == 0) {
            c->group = (CsGroup)g;
            return TRUE;
        }
    g_autofree char *where = cs_json_path_member(path, "group");
    cs_json_set_error(ctx, error, where, "\"%s\" is not a group (tp, cp, ep, dp, pp or world)",
                      group);
    return FALSE;
}

/* A phase's "compute": a time with units, which unlike a machine's latencies may run to
 * seconds (a training step's backward pass); more than a day is a unit slip. */
#define MAX_COMPUTE_S 86400.0

static gboolean
get_compute(const CsJsonCtx *ctx, const cJSON *node, const char *path, double *seconds,
            GError **error)
{
    const char *text = NULL;
    if (!cs_json_get_string(ctx, node, path, "compute", FALSE, &text, error))
        return FALSE;
    if (text == NULL)
        return TRUE;
    g_autoptr(GError) local = NULL;
    double v = 0;
    if (!cs_units_parse_time(text, &v, &local) || v < 0 || v > MAX_COMPUTE_S) {
        g_autofree char *where = cs_json_path_member(path, "compute");
        cs_json_set_error(ctx, error, where, "\"%s\" is not a compute time of 0 to 1 day (%s)",
                          text, local != NULL ? local->message : "out of range");
        return FALSE;
    }
    *seconds = v;
    return TRUE;
}

static Phase *
parse_phase(const CsJsonCtx *ctx, const cJSON *node, const char *path, const CsExprNames *dims,
            GError **error)
{
    static const char *const keys[] = { "name", "compute", "overlap", "collectives", NULL };
    if (!cs_json_check_object(ctx, node, path, keys, error))
        return NULL;
    const char *name = NULL;
    const cJSON *colls = NULL;
    double compute_s = 0;
    gboolean overlap = FALSE;
    if (!cs_json_get_string(ctx, node, path, "name", TRUE, &name, error)
        || !get_compute(ctx, node, path, &compute_s, error)
        || !cs_json_get_bool(ctx, node, path, "overlap", FALSE, &overlap, error)
        || !cs_json_get_array(ctx, node, path, "collectives", TRUE, &colls, error))
        return NULL;
    if (overlap && cs_json_member(node, "compute") == NULL) {
        g_autofree char *where = cs_json_path_member(path, "overlap");
        cs_json_set_error(ctx, error, where,
                          "overlap needs the phase's \"compute\" time to hide communication "
                          "behind");
        return NULL;
    }
    g_autofree char *colls_path = cs_json_path_member(path, "collectives");
    GArray *list = g_array_new(FALSE, TRUE, sizeof(Collective));
    int i = 0;
    for (const cJSON *c = colls->child; c != NULL; c = c->next, i++) {
        g_autofree char *cpath = cs_json_path_element(colls_path, i);
        Collective coll;
        if (!parse_collective(ctx, c, cpath, dims, &coll, error)) {
            g_array_unref(list);
            return NULL;
        }
        g_array_append_val(list, coll);
    }
    /* A phase of compute alone (a forward pass whose communication is elsewhere) is fine. */
    if (list->len == 0 && cs_json_member(node, "compute") == NULL) {
        cs_json_set_error(ctx, error, colls_path,
                          "a phase lists at least one collective, or gives its \"compute\" "
                          "time");
        g_array_unref(list);
        return NULL;
    }
    Phase *p = g_new0(Phase, 1);
    p->name = g_strdup(name);
    p->compute_s = compute_s;
    p->overlap = overlap;
    p->colls = list;
    return p;
}

/* The ranks of one group of kind @g in @w's layout (group_ranks() lists them). */
static int
group_size(const Workload *w, CsGroup g)
{
    switch (g) {
    case CS_GROUP_TP:
        return w->tp;
    case CS_GROUP_CP:
        return w->cp;
    case CS_GROUP_EP:
        return w->ep;
    case CS_GROUP_DP:
        return w->dp;
    case CS_GROUP_PP:
        return w->pp;
    case CS_GROUP_WORLD:
    case CS_GROUP_NONE:
    case CS_N_GROUPS:
    default:
        return w->tp * w->cp * w->dp * w->pp;
    }
}

/* A sendrecv needs a peer: on a group of one rank it is a slip in the workload (a pipeline
 * exchange in a layout without stages), refused rather than predicted as free. Collectives on
 * a group of one rank are legal (they communicate nothing). */
static gboolean
check_peers(const CsJsonCtx *ctx, const Workload *w, const Phase *phase, const char *ppath,
            GError **error)
{
    for (guint j = 0; j < phase->colls->len; j++) {
        const Collective *c = &g_array_index(phase->colls, Collective, j);
        if (c->op != CS_OP_SEND_RECV || group_size(w, c->group) >= 2)
            continue;
        g_autofree char *colls = cs_json_path_member(ppath, "collectives");
        g_autofree char *cpath = cs_json_path_element(colls, (int)j);
        g_autofree char *where = cs_json_path_member(cpath, "group");
        cs_json_set_error(ctx, error, where,
                          "sendrecv on group %s of 1 rank: each rank sends to the next of its "
                          "group, so it needs at least 2 (set layout.%s >= 2, or drop it)",
                          cs_group_names[c->group],
                          c->group == CS_GROUP_WORLD ? "tp" : cs_group_names[c->group]);
        return FALSE;
    }
    return TRUE;
}

/* Reads the workload in @path; errors are CS_CLI_ERROR_INPUT, "PATH: JSON-PATH: problem". */
static Workload *
workload_load(const char *path, GError **error)
{
    g_autofree char *text = NULL;
    gsize len = 0;
    g_autoptr(GError) local = NULL;
    if (!cs_file_read_bounded(path, MAX_WORKLOAD_BYTES, &text, &len, &local)) {
        g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_INPUT, "%s: --workload %s: cannot read: %s",
                    prog, path, local->message);
        return NULL;
    }
    if (memchr(text, '\0', len) != NULL) {
        g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_INPUT,
                    "%s: binary data, not a workload (JSON) file", path);
        return NULL;
    }
    g_autoptr(cJSON) root = cs_json_parse(text, path, CS_CLI_ERROR, CS_CLI_ERROR_INPUT, error);
    if (root == NULL)
        return NULL;
    CsJsonCtx ctx = { .origin = path, .domain = CS_CLI_ERROR, .code = CS_CLI_ERROR_INPUT };
    static const char *const keys[]
        = { "name", "notes", "layout", "model", "steps", "phases", NULL };
    if (!cs_json_check_object(&ctx, root, "", keys, error))
        return NULL;
    const char *name = NULL;
    const char *notes = NULL;
    const cJSON *layout = NULL;
    const cJSON *phases = NULL;
    /* "notes": free text, where the figures come from; only its type is checked. */
    if (!cs_json_get_string(&ctx, root, "", "name", TRUE, &name, error)
        || !cs_json_get_string(&ctx, root, "", "notes", FALSE, &notes, error)
        || !cs_json_get_object(&ctx, root, "", "layout", TRUE, &layout, error)
        || !cs_json_get_array(&ctx, root, "", "phases", TRUE, &phases, error))
        return NULL;
    static const char *const layout_keys[] = { "tp", "cp", "ep", "dp", "pp", NULL };
    g_autoptr(Workload) w = g_new0(Workload, 1);
    w->name = g_strdup(name);
    w->phases = g_ptr_array_new_with_free_func(phase_free);
    w->cp = w->ep = w->pp = 1;
    if (!cs_json_check_object(&ctx, layout, "layout", layout_keys, error)
        || !cs_json_get_int(&ctx, layout, "layout", "tp", TRUE, 1, 65536, &w->tp, error)
        || !cs_json_get_int(&ctx, layout, "layout", "cp", FALSE, 1, 65536, &w->cp, error)
        || !cs_json_get_int(&ctx, layout, "layout", "ep", FALSE, 1, 65536, &w->ep, error)
        || !cs_json_get_int(&ctx, layout, "layout", "dp", TRUE, 1, 65536, &w->dp, error)
        || !cs_json_get_int(&ctx, layout, "layout", "pp", FALSE, 1, 65536, &w->pp, error))
        return NULL;
    if ((gint64)w->tp * w->cp * w->dp * w->pp > 65536) {
        cs_json_set_error(&ctx, error, "layout",
                          "tp x cp x dp x pp = %" G_GINT64_FORMAT " ranks: more than 65536",
                          (gint64)w->tp * w->cp * w->dp * w->pp);
        return NULL;
    }
    /* Megatron-LM carves its expert-parallel groups out of the data-parallel ranks. */
    if (w->dp % w->ep != 0) {
        cs_json_set_error(&ctx, error, "layout.ep",
                          "ep %d does not divide dp %d (expert-parallel groups are carved out "
                          "of the data-parallel ranks)",
                          w->ep, w->dp);
        return NULL;
    }
    double steps = 0;
    if (!cs_json_get_number(&ctx, root, "", "steps", FALSE, 1, FALSE, MAX_STEPS, &steps, error))
        return NULL;
    if (steps != floor(steps)) {
        cs_json_set_error(&ctx, error, "steps", "%g is not a whole number of steps", steps);
        return NULL;
    }
    w->steps = (gint64)steps;
    /* "model": names and numbers for the formulas (its dimensions: batch, sequence, hidden...). */
    const cJSON *model = NULL;
    if (!cs_json_get_object(&ctx, root, "", "model", FALSE, &model, error))
        return NULL;
    w->dim_names = g_ptr_array_new_with_free_func(g_free);
    w->dim_values = g_array_new(FALSE, FALSE, sizeof(double));
    for (const cJSON *d = model != NULL ? model->child : NULL; d != NULL; d = d->next) {
        g_autofree char *where = cs_json_path_member("model", d->string);
        gboolean name_ok = g_ascii_isalpha(d->string[0]) || d->string[0] == '_';
        for (const char *ch = d->string; *ch != '\0' && name_ok; ch++)
            name_ok = g_ascii_isalnum(*ch) || *ch == '_';
        if (!name_ok) {
            cs_json_set_error(&ctx, error, where,
                              "a dimension's name is letters, digits and '_', not starting "
                              "with a digit");
            return NULL;
        }
        if (!cJSON_IsNumber(d) || !isfinite(d->valuedouble)) {
            cs_json_set_error(&ctx, error, where, "a dimension is a number");
            return NULL;
        }
        g_ptr_array_add(w->dim_names, g_strdup(d->string));
        g_array_append_val(w->dim_values, d->valuedouble);
    }
    w->dims = (CsExprNames){ (int)w->dim_names->len, (const char *const *)w->dim_names->pdata,
                             (const double *)(gconstpointer)w->dim_values->data };
    int i = 0;
    for (const cJSON *p = phases->child; p != NULL; p = p->next, i++) {
        g_autofree char *ppath = cs_json_path_element("phases", i);
        Phase *phase = parse_phase(&ctx, p, ppath, &w->dims, error);
        if (phase == NULL)
            return NULL;
        g_ptr_array_add(w->phases, phase);
        if (!check_peers(&ctx, w, phase, ppath, error))
            return NULL;
    }
    if (w->phases->len == 0) {
        cs_json_set_error(&ctx, error, "phases", "a workload has at least one phase");
        return NULL;
    }
    return g_steal_pointer(&w);
}

/* The layout's ranks: tp x cp x dp x pp. */
static int
layout_ranks(const Workload *w)
{
    return w->tp * w->cp * w->dp * w->pp;
}

/* "tp 8 x dp 2 x pp 1 = 16", with cp and ep where the layout has them. (transfer full) */
static char *
layout_text(const Workload *w)
{
    g_autofree char *cp = w->cp > 1 ? g_strdup_printf(" x cp %d", w->cp) : g_strdup("");
    g_autofree char *ep = w->ep > 1 ? g_strdup_printf(" (ep %d)", w->ep) : g_strdup("");
    return g_strdup_printf("tp %d%s x dp %d%s x pp %d = %d", w->tp, cp, w->dp, ep, w->pp,
                           layout_ranks(w));
}

/* The ranks of every group of kind @g, group after group, in Megatron-LM's order
 * "tp-cp-ep-dp-pp" (megatron/core/parallel_state.py, RankGenerator): rank = t + tp x (c + cp
 * x (d + dp x p)), the expert-parallel index the fastest part of d. A group of kind @g is
 * its size n of ranks @stride apart: tp (tp, 1), cp (cp, tp), ep (ep, tp x cp), dp (dp,
 * tp x cp), pp (pp, tp x cp x dp: one rank of each stage), world (every rank, 1); the groups
 * are listed by their first rank. Returns n; @n_groups gets the number of groups. */
static int
group_ranks(const Workload *w, CsGroup g, int *ranks, int *n_groups)
{
    const int all = layout_ranks(w);
    int n = all, stride = 1;
    switch (g) {
    case CS_GROUP_TP:
        n = w->tp;
        break;
    case CS_GROUP_CP:
        n = w->cp;
        stride = w->tp;
        break;
    case CS_GROUP_EP:
        n = w->ep;
        stride = w->tp * w->cp;
        break;
    case CS_GROUP_DP:
        n = w->dp;
        stride = w->tp * w->cp;
        break;
    case CS_GROUP_PP:
        n = w->pp;
        stride = w->tp * w->cp * w->dp;
        break;
    default:
        break;
    }
    int k = 0;
    *n_groups = 0;
    for (int r = 0; r < all; r++) {
        if ((r / stride) % n != 0)
            continue;
        (*n_groups)++;
        for (int j = 0; j < n; j++)
            ranks[k++] = r + j * stride;
    }
    return n;
}

/* Whether a collective of the workload runs on groups of kind @g. */
static gboolean
group_used(const Workload *w, CsGroup g)
{
    for (guint i = 0; i < w->phases->len; i++) {
        const Phase *p = g_ptr_array_index(w->phases, i);
        for (guint j = 0; j < p->colls->len; j++)
            if (g_array_index(p->colls, Collective, j).group == g)
                return TRUE;
    }
    return FALSE;
}

/* ---- Prices ---- */

/* What a price term is per: hourly terms (GPU-hour, node-hour) are paid while the machine
 * runs, purchase terms (node, NIC, switch port) once, spread over the amortization period. */
typedef enum { TERM_GPU_HOUR, TERM_NODE_HOUR, TERM_NODE, TERM_NIC, TERM_SWITCH_PORT, N_TERMS } Term;

static const struct {
    const char *unit;  /* --price AMOUNT/unit, and the CSV's and JSON's name */
    const char *alias; /* nullable */
    const char *per;   /* "per GPU-hour" */
    const char *one;   /* what is counted */
    const char *many;
    gboolean capital;
} terms[N_TERMS] = {
    { "gpu-hour", "gpu-h", "GPU-hour", "GPU", "GPUs", FALSE },
    { "node-hour", "node-h", "node-hour", "node", "nodes", FALSE },
    { "node", NULL, "node", "node", "nodes", TRUE },
    { "nic", NULL, "NIC", "NIC", "NICs", TRUE },
    { "switch-port", "switch_port", "switch port", "switch port", "switch ports", TRUE },
};

/* A quote above this per unit is a slip of the keyboard. */
#define MAX_PRICE 1e12

/* A candidate's price: the user's (--price) or its topology's "price" block, in the user's
 * currency. */
typedef struct {
    double amount[N_TERMS]; /* per unit; < 0: not given */
    double amortize_h;      /* h: purchase terms spread over it; 0 when none is given */
    const char *currency;   /* nullable; the topology's */
    const char *source;     /* nullable; the topology's */
    gboolean from_topo;     /* the topology's block, not --price */
} Price;

static gboolean
price_has_capital(const Price *p)
{
    for (int t = 0; t < N_TERMS; t++)
        if (terms[t].capital && p->amount[t] >= 0)
            return TRUE;
    return FALSE;
}

static const char price_units_help[]
    = "expected AMOUNT/UNIT, several joined by '+', UNIT gpu-hour or node-hour (per hour) or "
      "node, nic or switch-port (purchase, with --amortize), e.g. 2.50/gpu-hour or "
      "250000/node+1800/nic+1200/switch-port";

/* Parses "2.50/gpu-hour", "98.32/node-hour" or a sum of terms such as
 * "250000/node+1800/nic+1200/switch-port+4.2/node-hour" (a leading currency sign such as "$"
 * is allowed and dropped in each term). */
static gboolean
parse_price(const char *text, Price *out, GError **error)
{
    *out = (Price){ .amortize_h = 0 };
    for (int t = 0; t < N_TERMS; t++)
        out->amount[t] = -1;
    g_auto(GStrv) parts = g_strsplit(text, "+", -1);
    const gboolean several = g_strv_length(parts) > 1;
    for (int i = 0; parts[i] != NULL; i++) {
        const char *p = parts[i];
        g_autofree char *which
            = several ? g_strdup_printf("term \"%s\": ", parts[i]) : g_strdup("");
        if (*p == '$')
            p++;
        const char *slash = strchr(p, '/');
        int term = -1;
        for (int t = 0; slash != NULL && t < N_TERMS && term < 0; t++)
            if (g_ascii_strcasecmp(slash + 1, terms[t].unit) == 0
                || (terms[t].alias != NULL && g_ascii_strcasecmp(slash + 1, terms[t].alias) == 0))
                term = t;
        if (term < 0)
            return cs_cli_usage_error(error, prog, "--price \"%s\": %s%s", text, which,
                                      price_units_help);
        /* A plain decimal number: no sign, no hex, no "inf". */
        g_autofree char *amount = g_strndup(p, slash - p);
        double v = -1;
        if (!cs_units_parse_decimal(amount, &v) || v > MAX_PRICE)
            return cs_cli_usage_error(error, prog,
                                      "--price \"%s\": %san amount from 0 to 1e12 per %s, not "
                                      "\"%s\"",
                                      text, which, terms[term].per, amount);
        if (out->amount[term] >= 0)
            return cs_cli_usage_error(error, prog, "--price \"%s\": %s is given twice", text,
                                      terms[term].unit);
        out->amount[term] = v;
    }
    return TRUE;
}

/* The topology's "price" block as a Price (FALSE when it has none). */
static gboolean
price_from_topo(const CsTopo *topo, Price *out)
{
    const CsTopoPrice *tp = cs_topo_price(topo);
    if (tp == NULL)
        return FALSE;
    *out = (Price){ .amortize_h = tp->amortize_h,
                    .currency = tp->currency,
                    .source = tp->source,
                    .from_topo = TRUE };
    out->amount[TERM_GPU_HOUR] = tp->gpu_hour;
    out->amount[TERM_NODE_HOUR] = tp->node_hour;
    out->amount[TERM_NODE] = tp->node;
    out->amount[TERM_NIC] = tp->nic;
    out->amount[TERM_SWITCH_PORT] = tp->switch_port;
    return TRUE;
}

/* ---- Predictions ---- */

typedef struct {
    gint64 bytes;  /* the size predicted: the workload's, rounded as nccl-tests rounds it */
    double time_s; /* one collective; 0 for a group of one rank */
    double busbw_GBps;
    char *choice; /* "ring/LL128" or "-" */
} CollResult;

typedef struct {
    double comm_s;
    double exposed_s;
    double total_s; /* compute + exposed */
} PhaseResult;

typedef struct {
    CsTopo *topo;
    CsTopo *sub[CS_N_GROUPS]; /* the first group of each kind, alone */
    int n_ranks[CS_N_GROUPS]; /* its ranks */
    CsTopo *all[CS_N_GROUPS]; /* every group of the kind, group after group */
    int n_groups[CS_N_GROUPS];
    /* Per kind of group, the points simulated on it: a workload's collectives on one group
     * (a 1 GiB and a 413 MB bucket) climb the same extension windows. */
    CsPointCache *cache[CS_N_GROUPS];
    GPtrArray *colls; /* CollResult per phase's collective, in order */
    GArray *phases;   /* PhaseResult */
    double step_s;
    char **bottlenecks;    /* cs_cli_bottlenecks() of the topology */
    int n_gpus;            /* the ranks the layout uses */
    int n_nodes;           /* the nodes they are on */
    gint64 units[N_TERMS]; /* what each price term counts: GPUs, nodes, NICs, switch ports */
    gboolean priced;       /* @price holds its price */
    Price price;
} Candidate;

static void
candidate_clear(Candidate *c)
{
    g_strfreev(c->bottlenecks);
    for (int g = 0; g < CS_N_GROUPS; g++)
        g_clear_pointer(&c->cache[g], cs_point_cache_free);
    for (int g = 0; g < CS_N_GROUPS; g++)
        if (c->sub[g] != NULL)
            cs_topo_unref(c->sub[g]);
    for (int g = 0; g < CS_N_GROUPS; g++)
        if (c->all[g] != NULL)
            cs_topo_unref(c->all[g]);
    if (c->topo != NULL)
        cs_topo_unref(c->topo);
    if (c->colls != NULL)
        g_ptr_array_unref(c->colls);
    if (c->phases != NULL)
        g_array_unref(c->phases);
}

static void
coll_result_free(gpointer data)
{
    CollResult *r = data;
    g_free(r->choice);
    g_free(r);
}

/* One collective on @sub (all its @n ranks), as `collsim run` predicts it by default, run by
 * @n_groups groups at once on @all (nullable with one group), each group's rank j on rank
 * i x n + j: NCCL's pick is one group's, the time the last group's. */
static gboolean
predict_collective(const CsTopo *sub, int n, const CsTopo *all, int n_groups, CsPointCache *cache,
                   const Collective *c, CollResult *out, GError **error)
{
    if (n < 2) {
        out->bytes = c->bytes;
        out->time_s = 0;
        out->busbw_GBps = 0;
        out->choice = g_strdup("- (1 rank)");
        return TRUE;
    }
    CsPredictOptions popts;
    cs_predict_options_init(&popts);
    popts.nranks = n;
    popts.dtype = c->dtype;
    popts.concurrent = n_groups;
    popts.concurrent_topo = all;
    popts.cache = cache;
    g_autoptr(CsNcclModel) nccl = NULL;
    const char *spec = cs_nccl_func_from_op(c->op) >= 0 ? cs_nccl_default_spec(sub, n) : NULL;
    if (spec != NULL) {
        nccl = cs_nccl_model_new_for_topo(sub, n, spec, error);
        if (nccl == NULL)
            return FALSE;
        popts.pick = CS_PICK_NCCL;
        popts.nccl = nccl;
    }
    gint64 bytes = cs_op_nccl_tests_bytes(c->op, c->bytes, popts.dtype, n);
    CsPrediction pred;
    if (bytes <= 0 || !cs_predict_best(sub, c->op, bytes, NULL, -1, &popts, &pred, error)) {
        if (bytes <= 0)
            g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_INPUT,
                        "%s: %s of %" G_GINT64_FORMAT " bytes on %d ranks is empty", prog,
                        cs_op_name(c->op), c->bytes, n);
        return FALSE;
    }
    out->bytes = bytes;
    out->time_s = pred.time_us * 1e-6;
    out->busbw_GBps = pred.busbw_GBps;
    out->choice = g_strdup_printf("%s/%s", pred.algo->name, cs_proto_name(pred.proto));
    return TRUE;
}

/* The candidate @label: topology @topo_name with @edits (nullable, single values) applied,
 * its groups cut out, a slot for each collective's result (plan_predict() fills them). */
static gboolean
plan_candidate(const Workload *w, const char *topo_name, char **edits, const char *label,
               Candidate *c, GError **error)
{
    c->topo = cs_cli_load_topo(prog, topo_name, edits, error);
    if (c->topo == NULL)
        return FALSE;
    const int need = layout_ranks(w);
    const int have = cs_topo_n_ranks(c->topo);
    if (need > have) {
        g_autofree char *layout = layout_text(w);
        g_set_error(error, CS_CLI_ERROR, CS_CLI_ERROR_INPUT,
                    "%s: --topo %s has %d ranks; the workload's layout needs %s", prog, label, have,
                    layout);
        return FALSE;
    }
    c->n_gpus = need;
    c->n_nodes = 0;
    g_autofree gboolean *on_node = g_new0(gboolean, cs_topo_n_nodes(c->topo));
    for (int r = 0; r < need; r++) {
        const int node = cs_topo_rank_node(c->topo, r);
        c->n_nodes += !on_node[node];
        on_node[node] = TRUE;
    }
    c->units[TERM_GPU_HOUR] = c->n_gpus;
    c->units[TERM_NODE_HOUR] = c->n_nodes;
    c->units[TERM_NODE] = c->n_nodes;
    c->units[TERM_NIC] = cs_topo_count_nics(c->topo, on_node);
    c->units[TERM_SWITCH_PORT] = cs_topo_switch_ports(c->topo, NULL);
    /* The machine's bottlenecks, then the groups whose placement breaks rails. */
    g_autoptr(GPtrArray) binds = g_ptr_array_new();
    g_auto(GStrv) machine = cs_cli_bottlenecks(c->topo);
    for (int b = 0; machine[b] != NULL; b++)
        g_ptr_array_add(binds, g_steal_pointer(&machine[b]));
    int *ranks = g_new(int, need);
    for (int g = 0; g < CS_N_GROUPS; g++) {
        c->n_ranks[g] = group_ranks(w, (CsGroup)g, ranks, &c->n_groups[g]);
        c->sub[g] = cs_topo_subset(c->topo, ranks, c->n_ranks[g]);
        c->cache[g] = cs_point_cache_new(FALSE);
        cs_point_cache_bind(c->cache[g], c->sub[g]);
        if (c->n_groups[g] > 1)
            c->all[g] = cs_topo_subset(c->topo, ranks, c->n_ranks[g] * c->n_groups[g]);
        char *rails = group_used(w, (CsGroup)g) ? cs_cli_rail_breaks(
                          c->topo, cs_group_names[g], ranks, c->n_ranks[g], c->n_groups[g])
                                                : NULL;
        if (rails != NULL)
            g_ptr_array_add(binds, rails);
    }
    g_free(ranks);
    g_ptr_array_add(binds, NULL);
    c->bottlenecks = (char **)g_ptr_array_free(g_steal_pointer(&binds), FALSE);
    c->colls = g_ptr_array_new_with_free_func(coll_result_free);
    c->phases = g_array_new(FALSE, TRUE, sizeof(PhaseResult));
    for (guint i = 0; i < w->phases->len; i++) {
        const Phase *p = g_ptr_array_index(w->phases, i);
        for (guint j = 0; j < p->colls->len; j++)
            g_ptr_array_add(c->colls, g_new0(CollResult, 1));
    }
    return TRUE;
}

/* Every collective of every candidate, one item each (--jobs), each writing its own slot and
 * error: item k is candidate k % n's collective k / n, n the candidates (item_cand()). */
typedef struct {
    const Workload *w;
    Candidate *cands;
    char **labels;
    const Collective **colls; /* the workload's collectives, in order */
    const Phase **phase_of;   /* the phase of each */
    guint n_colls;
    guint n_cands;
    GError **errors;         /* per item */
    CsCliProgress *progress; /* (nullable) */
} PlanJob;

/* Item @k's candidate and collective. Candidates interleave, so that the threads at work take
 * different candidates, and one candidate's collectives, which share simulated points through
 * the point cache (a 1 GiB and a 413 MB bucket climb the same extension windows), come one
 * after the other instead of two threads simulating the same points at once. */
static inline guint
item_cand(const PlanJob *j, guint k)
{
    return k % j->n_cands;
}

static inline guint
item_coll(const PlanJob *j, guint k)
{
    return k / j->n_cands;
}

static void
plan_item(guint k, gpointer data)
{
    PlanJob *j = data;
    const guint cand = item_cand(j, k);
    const guint idx = item_coll(j, k);
    Candidate *c = &j->cands[cand];
    const Collective *coll = j->colls[idx];
    CollResult *r = g_ptr_array_index(c->colls, idx);
    if (!predict_collective(c->sub[coll->group], c->n_ranks[coll->group], c->all[coll->group],
                            c->n_groups[coll->group], c->cache[coll->group], coll, r,
                            &j->errors[k]))
        g_prefix_error(
            &j->errors[k],
            "%s: --topo %s: phase \"%s\", %s of %" G_GINT64_FORMAT " bytes on group %s: ", prog,
            j->labels[cand], j->phase_of[idx]->name, cs_op_name(coll->op), coll->bytes,
            cs_group_names[coll->group]);
}

/* Progress after item @k: which candidate's which collective. */
static void
plan_item_done(guint done, guint k, gpointer data)
{
    PlanJob *j = data;
    (void)done;
    if (j->progress == NULL)
        return;
    const Collective *coll = j->colls[item_coll(j, k)];
    g_autofree char *size = cs_units_format_size(coll->bytes);
    g_autofree char *what
        = g_strdup_printf("%s: %s %s on %s", j->labels[item_cand(j, k)], cs_op_name(coll->op), size,
                          cs_group_names[coll->group]);
    cs_cli_progress_step_text(j->progress, what);
}

/* Item @k's slot, for the other ranks of a study: its error, or its result. */
static void
plan_pack(guint k, GByteArray *out, gpointer data)
{
    const PlanJob *j = data;
    cs_pack_error(out, j->errors[k]);
    if (j->errors[k] != NULL)
        return;
    const CollResult *r = g_ptr_array_index(j->cands[item_cand(j, k)].colls, item_coll(j, k));
    cs_pack_int(out, r->bytes);
    cs_pack_double(out, r->time_s);
    cs_pack_double(out, r->busbw_GBps);
    cs_pack_string(out, r->choice);
}

static void
plan_unpack(guint k, CsUnpack *in, gpointer data)
{
    PlanJob *j = data;
    j->errors[k] = cs_unpack_error(in);
    if (j->errors[k] != NULL)
        return;
    CollResult *r = g_ptr_array_index(j->cands[item_cand(j, k)].colls, item_coll(j, k));
    r->bytes = cs_unpack_int(in);
    r->time_s = cs_unpack_double(in);
    r->busbw_GBps = cs_unpack_double(in);
    g_free(r->choice);
    r->choice = cs_unpack_string(in);
}

/* Predicts the collectives of the first @n candidates on @jobs threads, then adds up each
 * candidate's phases in order. The first error in candidate and collective order, as one
 * thread would meet it. */
static gboolean
plan_predict(const Workload *w, Candidate *cands, char **labels, int n, int jobs,
             CsCliProgress *progress, GError **error)
{
    g_autoptr(GPtrArray) colls = g_ptr_array_new();
    g_autoptr(GPtrArray) phase_of = g_ptr_array_new();
    for (guint i = 0; i < w->phases->len; i++) {
        const Phase *p = g_ptr_array_index(w->phases, i);
        for (guint j = 0; j < p->colls->len; j++) {
            g_ptr_array_add(colls, &g_array_index(p->colls, Collective, j));
            g_ptr_array_add(phase_of, (gpointer)p);
        }
    }
    const guint n_items = (guint)n * colls->len;
    PlanJob job = { w,
                    cands,
                    labels,
                    (const Collective **)colls->pdata,
                    (const Phase **)phase_of->pdata,
                    colls->len,
                    (guint)n,
                    g_new0(GError *, MAX(n_items, 1)),
                    progress };
    if (progress != NULL)
        cs_cli_progress_restart(progress, (int)n_items, "collectives");
    if (colls->len > 0)
        cs_parallel_for_ranks(n_items, 1, jobs, plan_item, plan_item_done, plan_pack, plan_unpack,
                              &job);
    if (progress != NULL)
        cs_cli_progress_finish(progress);
    gboolean ok = TRUE;
    for (guint cand = 0; cand < (guint)n; cand++) {
        for (guint idx = 0; idx < colls->len; idx++) {
            const guint k = idx * (guint)n + cand;
            if (job.errors[k] != NULL && ok) {
                g_propagate_error(error, g_steal_pointer(&job.errors[k]));
                ok = FALSE;
            }
            g_clear_error(&job.errors[k]);
        }
    }
    g_free(job.errors);
    if (!ok)
        return FALSE;
    for (int k = 0; k < n; k++) {
        Candidate *c = &cands[k];
        guint idx = 0;
        c->step_s = 0;
        for (guint i = 0; i < w->phases->len; i++) {
            const Phase *p = g_ptr_array_index(w->phases, i);
            PhaseResult pr = { 0 };
            for (guint j = 0; j < p->colls->len; j++, idx++) {
                const Collective *coll = &g_array_index(p->colls, Collective, j);
                const CollResult *r = g_ptr_array_index(c->colls, idx);
                pr.comm_s += r->time_s * coll->count;
            }
            pr.exposed_s = p->overlap ? MAX(0.0, pr.comm_s - p->compute_s) : pr.comm_s;
            pr.total_s = p->compute_s + pr.exposed_s;
            c->step_s += pr.total_s;
            g_array_append_val(c->phases, pr);
        }
    }
    return TRUE;
}

/* ---- Output ---- */

static const char concurrency_note[]
    = "every group of a kind runs its collective at once, sharing links; the time is the last "
      "group's";

/* What term @t of the candidate's price costs: per hour for an hourly term, the purchase for
 * a capital one (0 when the price has no such term). */
static double
term_cost(const Candidate *c, int t)
{
    if (!c->priced || c->price.amount[t] < 0)
        return 0;
    return c->price.amount[t] * (double)c->units[t];
}

/* The purchase: the sum of the capital terms. */
static double
capital_cost(const Candidate *c)
{
    double sum = 0;
    for (int t = 0; t < N_TERMS; t++)
        if (terms[t].capital)
            sum += term_cost(c, t);
    return sum;
}

/* What one hour of the candidate costs: its hourly terms, and its purchase spread evenly
 * over the amortization period (straight line); 0 without a price. */
static double
cost_per_hour(const Candidate *c)
{
    if (!c->priced)
        return 0;
    double sum = price_has_capital(&c->price) ? capital_cost(c) / c->price.amortize_h : 0;
    for (int t = 0; t < N_TERMS; t++)
        if (!terms[t].capital)
            sum += term_cost(c, t);
    return sum;
}

static double
cost_per_step(const Candidate *c)
{
    return cost_per_hour(c) * c->step_s / 3600.0;
}

/* "35040 h (4 y)", or the hours alone when not whole years. (transfer full) */
static char *
period_text(double hours)
{
    const double years = hours / 8760.0;
    if (fabs(years - round(years)) < 1e-9)
        return g_strdup_printf("%.6g h (%.6g y)", hours, round(years));
    return g_strdup_printf("%.6g h", hours);
}

/* "3 per GPU-hour x 256 GPUs". (transfer full) */
static char *
term_text(const Candidate *c, int t)
{
    return g_strdup_printf("%.10g per %s x %" G_GINT64_FORMAT " %s", c->price.amount[t],
                           terms[t].per, c->units[t],
                           c->units[t] == 1 ? terms[t].one : terms[t].many);
}

/* The parts of the candidate's cost per hour, each a sentence: the purchase ("250000 per node
 * x 2 nodes + 1800 per NIC x 16 NICs = 528800 over 35040 h (4 y) = 15.0913 per hour") and
 * each hourly term ("3 per GPU-hour x 256 GPUs = 768 per hour"). (transfer full) */
static GPtrArray *
cost_parts(const Candidate *c)
{
    GPtrArray *parts = g_ptr_array_new_with_free_func(g_free);
    if (price_has_capital(&c->price)) {
        GString *s = g_string_new(NULL);
        for (int t = 0; t < N_TERMS; t++) {
            if (!terms[t].capital || c->price.amount[t] < 0)
                continue;
            g_autofree char *term = term_text(c, t);
            g_string_append_printf(s, "%s%s", s->len > 0 ? " + " : "", term);
        }
        g_autofree char *period = period_text(c->price.amortize_h);
        g_string_append_printf(s, " = %.10g, straight line over %s = %.6g per hour",
                               capital_cost(c), period, capital_cost(c) / c->price.amortize_h);
        g_ptr_array_add(parts, g_string_free(s, FALSE));
    }
    for (int t = 0; t < N_TERMS; t++) {
        if (terms[t].capital || c->price.amount[t] < 0)
            continue;
        g_autofree char *term = term_text(c, t);
        g_ptr_array_add(parts, g_strdup_printf("%s = %.6g per hour", term, term_cost(c, t)));
    }
    return parts;
}

/* Whether two candidates' costs compare: both priced, in the same currency (or none named). */
static gboolean
same_currency(const Candidate *a, const Candidate *b)
{
    return a->priced && b->priced && g_strcmp0(a->price.currency, b->price.currency) == 0;
}

static void
print_table(GString *s, const Workload *w, char **topos, const Candidate *cands, int n,
            gint64 steps)
{
    g_autofree char *layout = layout_text(w);
    g_string_append_printf(s, "# workload: %s, layout %s ranks\n", w->name, layout);
    g_string_append_printf(s, "# %s\n", concurrency_note);
    for (int k = 0; k < n; k++) {
        const Candidate *c = &cands[k];
        /* A what-if's label already is its topology's name: "T [PATH=VALUE]". */
        if (g_str_has_suffix(topos[k], "]") && strcmp(topos[k], cs_topo_name(c->topo)) == 0)
            g_string_append_printf(s, "\n## %s (%d ranks): step %.1f us", topos[k],
                                   cs_topo_n_ranks(c->topo), c->step_s * 1e6);
        else
            g_string_append_printf(s, "\n## %s (%s, %d ranks): step %.1f us", topos[k],
                                   cs_topo_name(c->topo), cs_topo_n_ranks(c->topo),
                                   c->step_s * 1e6);
        if (k > 0 && cands[0].step_s > 0)
            g_string_append_printf(s, ", %.3fx the first", c->step_s / cands[0].step_s);
        g_string_append(s, "\n");
        for (int b = 0; c->bottlenecks[b] != NULL; b++)
            g_string_append_printf(s, "# bottleneck: %s\n", c->bottlenecks[b]);
        if (c->priced) {
            if (c->price.from_topo)
                g_string_append_printf(s,
                                       "# price: the topology's price block (currency %s; "
                                       "source: %s)\n",
                                       c->price.currency != NULL ? c->price.currency : "not named",
                                       c->price.source != NULL ? c->price.source : "not named");
            g_autoptr(GPtrArray) parts = cost_parts(c);
            for (guint i = 0; parts->len > 1 && i < parts->len; i++)
                g_string_append_printf(s, "# cost: %s\n", (char *)g_ptr_array_index(parts, i));
            if (parts->len == 1)
                g_string_append_printf(s, "# cost: %s; %.6g per step",
                                       (char *)g_ptr_array_index(parts, 0), cost_per_step(c));
            else
                g_string_append_printf(s, "# cost: %.6g per hour in all; %.6g per step",
                                       cost_per_hour(c), cost_per_step(c));
            if (steps > 0)
                g_string_append_printf(s, ", %.6g per run of %" G_GINT64_FORMAT " steps",
                                       cost_per_step(c) * (double)steps, steps);
            if (cost_per_step(c) > 0)
                g_string_append_printf(s, ", %.6g steps per unit of currency",
                                       1.0 / cost_per_step(c));
            if (k > 0 && same_currency(c, &cands[0]) && cost_per_step(&cands[0]) > 0)
                g_string_append_printf(s, ", %.3fx the first's cost per step",
                                       cost_per_step(c) / cost_per_step(&cands[0]));
            g_string_append(s, "\n");
        }
        g_string_append_printf(s, "%-16s %-14s %-6s %5s %12s %6s %-16s %12s %10s\n", "# phase",
                               "op", "group", "ranks", "bytes", "count", "algo/proto", "time(us)",
                               "busbw(GB/s)");
        guint idx = 0;
        for (guint i = 0; i < w->phases->len; i++) {
            const Phase *p = g_ptr_array_index(w->phases, i);
            for (guint j = 0; j < p->colls->len; j++, idx++) {
                const Collective *coll = &g_array_index(p->colls, Collective, j);
                const CollResult *r = g_ptr_array_index(c->colls, idx);
                g_string_append_printf(
                    s, "  %-14s %-14s %-6s %5d %12" G_GINT64_FORMAT " %6d %-16s %12.2f %10.2f\n",
                    p->name, cs_op_name(coll->op), cs_group_names[coll->group],
                    c->n_ranks[coll->group], r->bytes, coll->count, r->choice, r->time_s * 1e6,
                    r->busbw_GBps);
            }
        }
        g_string_append_printf(s, "%-16s %14s %14s %14s %14s\n", "# phase", "comm(us)",
                               "compute(us)", "exposed(us)", "total(us)");
        for (guint i = 0; i < w->phases->len; i++) {
            const Phase *p = g_ptr_array_index(w->phases, i);
            const PhaseResult *pr = &g_array_index(c->phases, PhaseResult, i);
            g_string_append_printf(s, "  %-14s %14.2f %14.2f %14.2f %14.2f\n", p->name,
                                   pr->comm_s * 1e6, p->compute_s * 1e6, pr->exposed_s * 1e6,
                                   pr->total_s * 1e6);
        }
    }
}

/* @text as one CSV field (quoted where it holds a comma or a quote). (transfer full) */
static char *
csv_text(const char *text)
{
    GString *out = g_string_new(NULL);
    cs_csv_append_field(out, text);
    return g_string_free(out, FALSE);
}

/* The columns a plan's CSV has after the step's four cost figures: a cost row's term
 * (gpu-hour, node-hour, node, nic, switch-port), its count and unit price, and the purchase,
 * amortization period and currency (on cost rows and the step row). */
#define CSV_PRICE_COLUMNS ",,,,,"

static void
print_csv(GString *s, const Workload *w, char **topos, const Candidate *cands, int n, gint64 steps)
{
    g_string_append(s, "topology,row,phase,op,group,ranks,bytes,count,algo_proto,time_us,"
                       "busbw_GBps,comm_us,compute_us,exposed_us,total_us,cost_per_hour,"
                       "cost_per_step,cost_per_run,steps_per_cost,term,term_count,unit_price,"
                       "capital,amortize_h,currency\n");
    for (int k = 0; k < n; k++) {
        const Candidate *c = &cands[k];
        guint idx = 0;
        g_autofree char *topo = csv_text(topos[k]);
        for (guint i = 0; i < w->phases->len; i++) {
            const Phase *p = g_ptr_array_index(w->phases, i);
            g_autofree char *phase = csv_text(p->name);
            for (guint j = 0; j < p->colls->len; j++, idx++) {
                const Collective *coll = &g_array_index(p->colls, Collective, j);
                const CollResult *r = g_ptr_array_index(c->colls, idx);
                g_string_append_printf(s,
                                       "%s,collective,%s,%s,%s,%d,%" G_GINT64_FORMAT
                                       ",%d,%s,%.3f,%.3f,,,,,,,,," CSV_PRICE_COLUMNS "\n",
                                       topo, phase, cs_op_name(coll->op),
                                       cs_group_names[coll->group], c->n_ranks[coll->group],
                                       r->bytes, coll->count, r->choice, r->time_s * 1e6,
                                       r->busbw_GBps);
            }
            const PhaseResult *pr = &g_array_index(c->phases, PhaseResult, i);
            g_string_append_printf(
                s, "%s,phase,%s,,,,,,,,,%.3f,%.3f,%.3f,%.3f,,,,," CSV_PRICE_COLUMNS "\n", topo,
                phase, pr->comm_s * 1e6, p->compute_s * 1e6, pr->exposed_s * 1e6,
                pr->total_s * 1e6);
        }
        g_autofree char *currency
            = c->priced && c->price.currency != NULL ? csv_text(c->price.currency) : g_strdup("");
        /* One row per price term: its count x unit price, per hour. */
        for (int t = 0; c->priced && t < N_TERMS; t++) {
            if (c->price.amount[t] < 0)
                continue;
            const double per_hour
                = terms[t].capital ? term_cost(c, t) / c->price.amortize_h : term_cost(c, t);
            g_string_append_printf(s, "%s,cost,,,,,,,,,,,,,,%.6g,,,,%s,%" G_GINT64_FORMAT ",%.6g,",
                                   topo, per_hour, terms[t].unit, c->units[t], c->price.amount[t]);
            if (terms[t].capital)
                g_string_append_printf(s, "%.6g,%.6g", term_cost(c, t), c->price.amortize_h);
            else
                g_string_append(s, ",");
            g_string_append_printf(s, ",%s\n", currency);
        }
        g_string_append_printf(s, "%s,step,,,,,,,,,,,,,%.3f", topo, c->step_s * 1e6);
        if (!c->priced)
            g_string_append(s, ",,,,,,,,,,\n");
        else {
            g_string_append_printf(s, ",%.6g,%.6g,", cost_per_hour(c), cost_per_step(c));
            if (steps > 0)
                g_string_append_printf(s, "%.6g", cost_per_step(c) * (double)steps);
            g_string_append(s, ",");
            if (cost_per_step(c) > 0)
                g_string_append_printf(s, "%.6g", 1.0 / cost_per_step(c));
            g_string_append(s, ",,,,");
            if (price_has_capital(&c->price))
                g_string_append_printf(s, "%.6g,%.6g", capital_cost(c), c->price.amortize_h);
            else
                g_string_append(s, ",");
            g_string_append_printf(s, ",%s\n", currency);
        }
    }
}

static char *
print_json(const Workload *w, char **topos, const Candidate *cands, int n, gint64 steps)
{
    g_autoptr(cJSON) root = cJSON_CreateObject();
    cs_json_add_schema(root, "collsim-plan", CS_JSON_SCHEMA_VERSION);
    cJSON_AddStringToObject(root, "workload", w->name);
    cJSON *layout = cJSON_AddObjectToObject(root, "layout");
    cJSON_AddNumberToObject(layout, "tp", w->tp);
    cJSON_AddNumberToObject(layout, "cp", w->cp);
    cJSON_AddNumberToObject(layout, "ep", w->ep);
    cJSON_AddNumberToObject(layout, "dp", w->dp);
    cJSON_AddNumberToObject(layout, "pp", w->pp);
    /* Each kind of group the workload uses: its size, how many run at once, the first. */
    cJSON *groups = cJSON_AddObjectToObject(root, "groups");
    g_autofree int *ranks = g_new(int, layout_ranks(w));
    for (int g = 0; g < CS_N_GROUPS; g++) {
        if (!group_used(w, (CsGroup)g))
            continue;
        int n_groups = 0;
        const int size = group_ranks(w, (CsGroup)g, ranks, &n_groups);
        cJSON *kind = cJSON_AddObjectToObject(groups, cs_group_names[g]);
        cJSON_AddNumberToObject(kind, "ranks", size);
        cJSON_AddNumberToObject(kind, "groups", n_groups);
        cJSON_AddItemToObject(kind, "first", cJSON_CreateIntArray(ranks, size));
    }
    cJSON_AddStringToObject(root, "note", concurrency_note);
    cJSON *list = cJSON_AddArrayToObject(root, "candidates");
    for (int k = 0; k < n; k++) {
        const Candidate *c = &cands[k];
        cJSON *cand = cJSON_CreateObject();
        cJSON_AddItemToArray(list, cand);
        cJSON_AddStringToObject(cand, "topology", topos[k]);
        cJSON_AddStringToObject(cand, "name", cs_topo_name(c->topo));
        cJSON_AddNumberToObject(cand, "step_us", c->step_s * 1e6);
        cJSON *binds = cJSON_AddArrayToObject(cand, "bottlenecks");
        for (int b = 0; c->bottlenecks[b] != NULL; b++)
            cJSON_AddItemToArray(binds, cJSON_CreateString(c->bottlenecks[b]));
        if (c->priced) {
            cJSON *cost = cJSON_AddObjectToObject(cand, "cost");
            cJSON_AddStringToObject(cost, "from", c->price.from_topo ? "topology" : "--price");
            if (c->price.currency != NULL)
                cJSON_AddStringToObject(cost, "currency", c->price.currency);
            if (c->price.source != NULL)
                cJSON_AddStringToObject(cost, "source", c->price.source);
            cJSON *term_list = cJSON_AddArrayToObject(cost, "terms");
            int n_terms = 0, last = 0;
            for (int t = 0; t < N_TERMS; t++) {
                if (c->price.amount[t] < 0)
                    continue;
                n_terms++;
                last = t;
                cJSON *o = cJSON_CreateObject();
                cJSON_AddItemToArray(term_list, o);
                cJSON_AddStringToObject(o, "per", terms[t].unit);
                cJSON_AddNumberToObject(o, "price", c->price.amount[t]);
                cJSON_AddNumberToObject(o, "units", (double)c->units[t]);
                if (terms[t].capital) {
                    cJSON_AddNumberToObject(o, "capital", term_cost(c, t));
                    cJSON_AddNumberToObject(o, "per_hour", term_cost(c, t) / c->price.amortize_h);
                }
                else
                    cJSON_AddNumberToObject(o, "per_hour", term_cost(c, t));
            }
            /* One hourly term: its figures at the top too, as before terms were combined. */
            if (n_terms == 1 && !terms[last].capital) {
                cJSON_AddNumberToObject(cost, "price", c->price.amount[last]);
                cJSON_AddStringToObject(cost, "per", terms[last].unit);
                cJSON_AddNumberToObject(cost, "units", (double)c->units[last]);
            }
            if (price_has_capital(&c->price)) {
                cJSON_AddNumberToObject(cost, "capital", capital_cost(c));
                cJSON_AddNumberToObject(cost, "amortize_h", c->price.amortize_h);
            }
            cJSON_AddNumberToObject(cost, "per_hour", cost_per_hour(c));
            cJSON_AddNumberToObject(cost, "per_step", cost_per_step(c));
            if (steps > 0) {
                cJSON_AddNumberToObject(cost, "steps", (double)steps);
                cJSON_AddNumberToObject(cost, "per_run", cost_per_step(c) * (double)steps);
            }
            if (cost_per_step(c) > 0)
                cJSON_AddNumberToObject(cost, "steps_per_cost", 1.0 / cost_per_step(c));
        }
        cJSON *phases = cJSON_AddArrayToObject(cand, "phases");
        guint idx = 0;
        for (guint i = 0; i < w->phases->len; i++) {
            const Phase *p = g_ptr_array_index(w->phases, i);
            const PhaseResult *pr = &g_array_index(c->phases, PhaseResult, i);
            cJSON *ph = cJSON_CreateObject();
            cJSON_AddItemToArray(phases, ph);
            cJSON_AddStringToObject(ph, "name", p->name);
            cJSON_AddNumberToObject(ph, "comm_us", pr->comm_s * 1e6);
            cJSON_AddNumberToObject(ph, "compute_us", p->compute_s * 1e6);
            cJSON_AddNumberToObject(ph, "exposed_us", pr->exposed_s * 1e6);
            cJSON_AddNumberToObject(ph, "total_us", pr->total_s * 1e6);
            cJSON *colls = cJSON_AddArrayToObject(ph, "collectives");
            for (guint j = 0; j < p->colls->len; j++, idx++) {
                const Collective *coll = &g_array_index(p->colls, Collective, j);
                const CollResult *r = g_ptr_array_index(c->colls, idx);
                cJSON *o = cJSON_CreateObject();
                cJSON_AddItemToArray(colls, o);
                cJSON_AddStringToObject(o, "op", cs_op_name(coll->op));
                cJSON_AddStringToObject(o, "group", cs_group_names[coll->group]);
                cJSON_AddNumberToObject(o, "ranks", c->n_ranks[coll->group]);
                cJSON_AddNumberToObject(o, "bytes", (double)r->bytes);
                cJSON_AddNumberToObject(o, "count", coll->count);
                cJSON_AddStringToObject(o, "algo_proto", r->choice);
                cJSON_AddNumberToObject(o, "time_us", r->time_s * 1e6);
                cJSON_AddNumberToObject(o, "busbw_GBps", r->busbw_GBps);
            }
        }
    }
    char *printed = cs_json_print(root, TRUE);
    char *text = g_strconcat(printed, "\n", NULL);
    cJSON_free(printed);
    return text;
}

/* ---- The picture ---- */

/* Each candidate's step as a bar, stacked by phase: the phase's compute, then each of its
 * collectives' share of the exposed time (all of its time x count when the phase does not
 * overlap). */
static gboolean
plot_plan(const Workload *w, char **labels, const Candidate *cands, int n, const char *cmd,
          const char *path, GError **error)
{
    g_autoptr(GPtrArray) parts = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(GArray) compute = g_array_new(FALSE, FALSE, sizeof(gboolean));
    for (guint i = 0; i < w->phases->len; i++) {
        const Phase *p = g_ptr_array_index(w->phases, i);
        gboolean yes = TRUE, no = FALSE;
        if (p->compute_s > 0.0) {
            g_ptr_array_add(parts, g_strdup_printf("%s: compute", p->name));
            g_array_append_val(compute, yes);
        }
        for (guint j = 0; j < p->colls->len; j++) {
            const Collective *coll = &g_array_index(p->colls, Collective, j);
            g_autofree char *size = cs_units_format_size(coll->bytes);
            g_ptr_array_add(parts,
                            g_strdup_printf("%s: %s %s x%d (%s)", p->name, cs_op_name(coll->op),
                                            size, coll->count, cs_group_names[coll->group]));
            g_array_append_val(compute, no);
        }
    }
    const int n_parts = (int)parts->len;
    g_autofree double *times = g_new0(double, (gsize)n *(gsize)n_parts);
    g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
    for (int k = 0; k < n; k++) {
        const Candidate *c = &cands[k];
        g_ptr_array_add(names, g_strdup(labels[k]));
        int part = 0;
        guint idx = 0;
        for (guint i = 0; i < w->phases->len; i++) {
            const Phase *p = g_ptr_array_index(w->phases, i);
            const PhaseResult *pr = &g_array_index(c->phases, PhaseResult, i);
            if (p->compute_s > 0.0)
                times[k * n_parts + part++] = p->compute_s;
            const double share = pr->comm_s > 0.0 ? pr->exposed_s / pr->comm_s : 0.0;
            for (guint j = 0; j < p->colls->len; j++, idx++) {
                const Collective *coll = &g_array_index(p->colls, Collective, j);
                const CollResult *r = g_ptr_array_index(c->colls, idx);
                times[k * n_parts + part++] = r->time_s * coll->count * share;
            }
        }
    }
    /* With prices, each bar's cost per step (and its ratio to the first's, in one currency). */
    g_autoptr(GPtrArray) notes = g_ptr_array_new_with_free_func(g_free);
    for (int k = 0; k < n; k++) {
        const Candidate *c = &cands[k];
        if (!c->priced) {
            g_ptr_array_add(notes, NULL);
            continue;
        }
        GString *note = g_string_new(NULL);
        g_string_append_printf(note, "%.4g%s%s per step", cost_per_step(c),
                               c->price.currency != NULL ? " " : "",
                               c->price.currency != NULL ? c->price.currency : "");
        if (k > 0 && same_currency(c, &cands[0]) && cost_per_step(&cands[0]) > 0)
            g_string_append_printf(note, " (%.3fx)", cost_per_step(c) / cost_per_step(&cands[0]));
        g_ptr_array_add(notes, g_string_free(note, FALSE));
    }
    g_autofree char *title = g_strdup_printf("collsim plan: %s", w->name);
    if (!cs_plot_stacked_times((const char *const *)names->pdata, n,
                               (const char *const *)parts->pdata, (gboolean *)compute->data,
                               n_parts, times, (const char *const *)notes->pdata, title, cmd, path,
                               error)) {
        g_prefix_error(error, "%s: --plot: ", prog);
        return FALSE;
    }
    return TRUE;
}

/* ---- The command ---- */

/* The most candidates one plan runs (--topo x --set combinations). */
#define MAX_CANDIDATES 64

/* The single edits of combination @index of the --set lists in @split, the last list varying
 * fastest. (transfer container) NULL-terminated, NULL when there are none. */
static char **
candidate_edits(const GPtrArray *split, gint64 index)
{
    if (split->len == 0)
        return NULL;
    char **edits = g_new0(char *, split->len + 1);
    for (guint i = split->len; i-- > 0;) {
        char **values = g_ptr_array_index(split, i);
        const guint n = g_strv_length(values);
        edits[i] = values[index % n];
        index /= n;
    }
    return edits;
}

/* "hgx-h100x8-2n [network.nic_bandwidth=800Gb/s]", or the topology alone. (transfer full) */
static char *
candidate_label(const char *topo, char **edits)
{
    if (edits == NULL)
        return g_strdup(topo);
    g_autofree char *list = g_strjoinv(", ", edits);
    return g_strdup_printf("%s [%s]", topo, list);
}

/* A bar's name in the plot: a what-if by its keys' last parts and values only
 * ("nics_per_node=4"), after its topology's file name where the candidates' topologies
 * differ; the table keeps the whole label. */
static char *
bar_label(const char *topo, char **edits, gboolean one_topo)
{
    g_autofree char *base = g_path_get_basename(topo);
    if (edits == NULL)
        return g_steal_pointer(&base);
    GString *out = g_string_new(one_topo ? NULL : base);
    for (int i = 0; edits[i] != NULL; i++) {
        const char *eq = strchr(edits[i], '=');
        const char *key = edits[i];
        for (const char *c = edits[i]; eq != NULL && c < eq; c++)
            if (*c == '.')
                key = c + 1;
        g_string_append_printf(out, "%s%s", out->len > 0 ? (i == 0 ? ": " : ", ") : "", key);
    }
    return g_string_free(out, FALSE);
}

gboolean
cs_cli_plan(int argc, char **argv, GError **error)
{
    prog = argv[0];
    g_autofree char *workload_path = NULL;
    g_auto(GStrv) topos = NULL;
    g_auto(GStrv) sets = NULL;
    g_autofree char *format = NULL;
    g_autofree char *plot = NULL;
    g_autofree char *cmd = cs_cli_command_line(argc, argv);
    g_auto(GStrv) prices = NULL;
    g_autofree char *amortize = NULL;
    gint64 steps_arg = 0;
    int jobs_arg = CS_CLI_JOBS_UNSET;
    gboolean progress_arg = FALSE;
    gboolean quiet = FALSE;
    const GOptionEntry entries[]
        = { { "workload", 'w', 0, G_OPTION_ARG_FILENAME, &workload_path,
              "The workload: layout and phases of collectives (docs/workloads.md)", "FILE" },
            { "topo", 't', 0, G_OPTION_ARG_FILENAME_ARRAY, &topos,
              "A candidate topology (shipped name or file); repeat for more", "T" },
            { "set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &sets,
              "What-if: set PATH of every candidate topology to VALUE before it is loaded "
              "(docs/what-if.md); a list V1,V2,... makes a candidate of each value (with "
              "several lists, of each combination); repeatable",
              "PATH=VALUE" },
            { "price", 0, 0, G_OPTION_ARG_STRING_ARRAY, &prices,
              "What a candidate costs (your currency, your quote): AMOUNT/gpu-hour, "
              "AMOUNT/node-hour, or purchase prices AMOUNT/node, AMOUNT/nic, "
              "AMOUNT/switch-port (with --amortize), several joined by '+'; once for every "
              "candidate, or once per candidate in order (default: each topology's \"price\")",
              "PRICE" },
            { "amortize", 0, 0, G_OPTION_ARG_STRING, &amortize,
              "Spread purchase prices over this period, straight line: 4y, 1460d or 35040h "
              "(a year is 8760 h); overrides a topology's \"amortize\"",
              "PERIOD" },
            { "steps", 0, 0, G_OPTION_ARG_INT64, &steps_arg,
              "Steps of a training run, for the cost of a run (default: the workload's "
              "\"steps\")",
              "N" },
            { "format", 0, 0, G_OPTION_ARG_STRING, &format, "table (default), csv or json", "F" },
            { "plot", 0, 0, G_OPTION_ARG_FILENAME, &plot,
              "Also draw each candidate's step as a bar into FILE (.svg, .png or .pdf), stacked "
              "by phase: compute, then each collective's exposed time",
              "FILE" },
            CS_CLI_JOBS_ENTRY(&jobs_arg),
            { "progress", 0, 0, G_OPTION_ARG_NONE, &progress_arg,
              "Print progress with an estimate of the time left on stderr, a line per "
              "collective of a candidate (by default only on a terminal, once a second has "
              "passed)",
              NULL },
            { "quiet", 0, 0, G_OPTION_ARG_NONE, &quiet, "Print no progress", NULL },
            G_OPTION_ENTRY_NULL };
    if (!cs_cli_parse(&argc, &argv, entries, "", summary, description, error))
        return FALSE;
    if (argc > 1)
        return cs_cli_usage_error(error, prog, "unexpected argument '%s'", argv[1]);
    CsCliProgressMode progress_mode;
    if (!cs_cli_progress_mode(prog, progress_arg, quiet, &progress_mode, error))
        return FALSE;
    if (workload_path == NULL)
        return cs_cli_usage_error(error, prog, "--workload FILE is required");
    if (topos == NULL || topos[0] == NULL)
        return cs_cli_usage_error(error, prog, "at least one --topo T is required");
    if (format != NULL && strcmp(format, "table") != 0 && strcmp(format, "csv") != 0
        && strcmp(format, "json") != 0)
        return cs_cli_usage_error(error, prog, "--format: \"%s\" is not table, csv or json",
                                  format);
    if (plot != NULL && !cs_cli_check_plot(prog, plot, error))
        return FALSE;

    if (steps_arg < 0 || steps_arg > (gint64)MAX_STEPS)
        return cs_cli_usage_error(error, prog, "--steps %" G_GINT64_FORMAT ": 1 to 1e12",
                                  steps_arg);
    const int n_prices = prices == NULL ? 0 : (int)g_strv_length(prices);
    g_autofree Price *price = g_new0(Price, MAX(n_prices, 1));
    double amortize_h = 0;
    if (amortize != NULL) {
        g_autoptr(GError) local = NULL;
        if (!cs_units_parse_period(amortize, &amortize_h, &local))
            return cs_cli_usage_error(error, prog, "--amortize: %s", local->message);
    }
    for (int i = 0; i < n_prices; i++) {
        if (!parse_price(prices[i], &price[i], error))
            return FALSE;
        price[i].amortize_h = amortize_h;
        if (price_has_capital(&price[i]) && amortize == NULL)
            return cs_cli_usage_error(error, prog,
                                      "--price \"%s\": a purchase price needs --amortize "
                                      "PERIOD (e.g. 4y) to become a cost per hour",
                                      prices[i]);
    }
    int jobs;
    if (!cs_cli_resolve_jobs(prog, jobs_arg, &jobs, error))
        return FALSE;
    g_autoptr(GPtrArray) split = cs_cli_split_sets(prog, sets, error);
    if (split == NULL)
        return FALSE;
    gint64 combos = 1;
    /* Stops growing past the limit: many lists must not overflow the product. */
    guint multiplied = 0;
    for (; multiplied < split->len && combos <= MAX_CANDIDATES; multiplied++)
        combos *= g_strv_length(g_ptr_array_index(split, multiplied));
    const char *at_least = multiplied < split->len ? "at least " : "";
    const gint64 n_all = combos * g_strv_length(topos);
    if (n_all > MAX_CANDIDATES)
        return cs_cli_usage_error(
            error, prog,
            "%s%" G_GINT64_FORMAT " candidates (%u --topo x %s%" G_GINT64_FORMAT
            " combinations of --set values): more than %d",
            at_least, n_all, g_strv_length(topos), at_least, combos, MAX_CANDIDATES);

    if (n_prices > 1 && n_prices != n_all)
        return cs_cli_usage_error(error, prog,
                                  "%d --price for %" G_GINT64_FORMAT
                                  " candidates: give one price for all, or one per candidate "
                                  "(join one candidate's terms with '+', e.g. "
                                  "250000/node+1800/nic)",
                                  n_prices, n_all);
    g_autoptr(Workload) w = workload_load(workload_path, error);
    if (w == NULL)
        return FALSE;
    const gint64 steps = steps_arg > 0 ? steps_arg : w->steps;
    const int n = (int)n_all;
    Candidate *cands = g_new0(Candidate, n);
    g_auto(GStrv) labels = g_new0(char *, n + 1);
    g_auto(GStrv) bars = g_new0(char *, n + 1);
    /* Loaded one after the other; a candidate that fails to load ends the list, after the
     * collectives of those before it are predicted (an error there comes first, as it
     * would one candidate at a time). */
    int loaded = 0;
    g_autoptr(GError) load_error = NULL;
    for (; loaded < n; loaded++) {
        g_autofree char **edits = candidate_edits(split, loaded % combos);
        labels[loaded] = candidate_label(topos[loaded / combos], edits);
        bars[loaded] = bar_label(topos[loaded / combos], edits, g_strv_length(topos) == 1);
        if (!plan_candidate(w, topos[loaded / combos], edits, labels[loaded], &cands[loaded],
                            &load_error))
            break;
        Candidate *c = &cands[loaded];
        if (n_prices > 0) {
            c->price = price[n_prices == 1 ? 0 : loaded];
            c->priced = TRUE;
        }
        else if (price_from_topo(c->topo, &c->price)) {
            c->priced = TRUE;
            if (amortize != NULL)
                c->price.amortize_h = amortize_h;
        }
    }
    CsCliProgress progress;
    cs_cli_progress_init(&progress, prog, 0, progress_mode);
    gboolean ok = plan_predict(w, cands, labels, loaded, jobs, &progress, error);
    if (ok && load_error != NULL) {
        g_propagate_error(error, g_steal_pointer(&load_error));
        ok = FALSE;
    }
    /* The picture first: a file that cannot be written fails before anything is printed. */
    if (ok && plot != NULL)
        ok = plot_plan(w, bars, cands, n, cmd, plot, error);
    g_autofree char *text = NULL;
    if (ok) {
        if (format != NULL && strcmp(format, "json") == 0)
            text = print_json(w, labels, cands, n, steps);
        else {
            GString *s = g_string_new(NULL);
            if (format != NULL && strcmp(format, "csv") == 0)
                print_csv(s, w, labels, cands, n, steps);
            else
                print_table(s, w, labels, cands, n, steps);
            text = g_string_free(s, FALSE);
        }
    }
    for (int k = 0; k < n; k++)
        candidate_clear(&cands[k]);
    g_free(cands);
    if (!ok)
        return FALSE;
    return cs_cli_write_output(prog, NULL, NULL, text, -1, error);
}
