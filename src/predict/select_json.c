// SPDX-License-Identifier: MIT
/* The JSON emitters of a selection: select's document (cs_selection_to_json(), the input of
 * libnccl-tuner-collsim.so) and --compare's (cs_selection_compare_to_json()), one per
 * communicator shape or an array of them. */
#include "config.h"

#include <math.h>

#include "base/json_util.h"
#include "predict/select-private.h"

/* The candidate rule that applied (cs_predict_default_candidate()), by its JSON name. */
static const char *
candidates_name(const CsSelection *sel)
{
    if (sel->nccl_model)
        return "nccl-model";
    if (sel->any_algorithm)
        return "any-algorithm";
    return sel->mpi ? "mpi" : "nccl-tests";
}

/* The choice's fields into @o: collsim's names (with NCCL's, null when NCCL has no such
 * algorithm) or, with @nccl_names, NCCL's (the spelling of its tuner CSV). */
static void
add_choice(cJSON *o, const CsSelectChoice *c, gboolean nccl_names)
{
    if (nccl_names) {
        cJSON_AddStringToObject(o, "algorithm", cs_nccl_algo_name((CsNcclAlgo)c->nccl_algo));
        cJSON_AddStringToObject(o, "protocol", cs_nccl_proto_name(c->proto));
        if (c->algo != NULL)
            cJSON_AddStringToObject(o, "collsim_algorithm", c->algo->name);
    }
    else {
        cJSON_AddStringToObject(o, "algorithm", cs_select_choice_algo_name(c));
        cJSON_AddStringToObject(o, "protocol", cs_proto_name(c->proto));
        if (c->nccl_algo >= 0) {
            cJSON_AddStringToObject(o, "nccl_algorithm",
                                    cs_nccl_algo_name((CsNcclAlgo)c->nccl_algo));
            cJSON_AddStringToObject(o, "nccl_protocol", cs_nccl_proto_name(c->proto));
        }
        else {
            cJSON_AddNullToObject(o, "nccl_algorithm");
            cJSON_AddNullToObject(o, "nccl_protocol");
        }
    }
    cJSON_AddNumberToObject(o, "channels", c->n_channels);
}

static cJSON *
choice_json(const CsSelectChoice *c, gboolean nccl_names)
{
    cJSON *o = cJSON_CreateObject();
    add_choice(o, c, nccl_names);
    return o;
}

/* Rounded to 1e-6 us so the text stays short and identical across runs. */
static double
round_us(double us)
{
    return round(us * 1e6) / 1e6;
}

/* A crossover side's time, or null where that side cannot run. */
static void
add_time(cJSON *o, const char *key, double us)
{
    if (isnan(us))
        cJSON_AddNullToObject(o, key);
    else
        cJSON_AddNumberToObject(o, key, round_us(us));
}

static cJSON *
ranges_json(const CsSelectTable *t, gboolean nccl_names)
{
    cJSON *ranges = cJSON_CreateArray();
    for (guint i = 0; i < t->ranges->len; i++) {
        const CsSelectRange *r = &g_array_index(t->ranges, CsSelectRange, i);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "min_bytes", (double)r->min_bytes);
        /* null: no upper bound (the last range). */
        if (r->max_bytes < 0)
            cJSON_AddNullToObject(o, "max_bytes");
        else
            cJSON_AddNumberToObject(o, "max_bytes", (double)r->max_bytes);
        add_choice(o, &r->choice, nccl_names);
        /* null: NCCL's model picks nothing collsim can time here. */
        if (isnan(r->gain_pct))
            cJSON_AddNullToObject(o, "gain_pct");
        else
            cJSON_AddNumberToObject(o, "gain_pct", r->gain_pct);
        cJSON_AddNumberToObject(o, "margin_pct", r->margin_pct);
        cJSON_AddBoolToObject(o, "validated", r->validated);
        if (r->min_measured)
            cJSON_AddBoolToObject(o, "min_measured", TRUE);
        cJSON_AddItemToArray(ranges, o);
    }
    return ranges;
}

/* The fields a selection and a comparison begin with: schema, format and its version, collsim
 * version, topology, ranks, nodes, datatype. (transfer full) */
static cJSON *
header_json(const CsSelection *sel, const char *schema, const char *format)
{
    cJSON *root = cJSON_CreateObject();
    cs_json_add_schema(root, schema, CS_JSON_SCHEMA_VERSION);
    cJSON_AddStringToObject(root, "format", format);
    cJSON_AddNumberToObject(root, "format_version", 1);
    cJSON_AddStringToObject(root, "collsim_version", COLLSIM_VERSION);
    cJSON_AddStringToObject(root, "topology", cs_topo_name(sel->topo));
    cJSON_AddNumberToObject(root, "nranks", sel->nranks);
    cJSON_AddNumberToObject(root, "nnodes", sel->nnodes);
    cJSON_AddStringToObject(root, "dtype", cs_dtype_name(sel->dtype));
    return root;
}

/* The selection as one JSON object: headers (format, collsim version, topology, ranks,
 * nodes, datatype, model, grid), then per collective the points, crossovers, ranges (collsim's
 * names) and nccl_ranges (NCCL's names, algorithms NCCL implements; null when NCCL does not
 * tune the collective), which libnccl-tuner-collsim.so reads. (transfer full) */
static cJSON *
selection_json(const CsSelection *sel)
{
    cJSON *root = header_json(sel, "collsim-select", "collsim-select");
    cJSON_AddStringToObject(root, "model", sel->nccl_model ? sel->model : "collsim");
    cJSON_AddStringToObject(root, "candidate_rule", candidates_name(sel));
    if (!sel->nccl_model)
        cJSON_AddStringToObject(root, "net_model", sel->model);
    cJSON_AddStringToObject(root, "nccl_version", cs_nccl_model_constants(sel->nccl)->version);
    cJSON_AddBoolToObject(root, "nccl_only", sel->nccl_only);
    cJSON *grid = cJSON_AddObjectToObject(root, "grid");
    cJSON_AddNumberToObject(grid, "min_bytes", (double)sel->min_bytes);
    cJSON_AddNumberToObject(grid, "max_bytes", (double)sel->max_bytes);
    cJSON_AddNumberToObject(grid, "factor", (double)sel->step_factor);
    cJSON_AddBoolToObject(grid, "exact", sel->exact);
    cJSON_AddNumberToObject(grid, "max_events", (double)sel->max_events);
    cJSON_AddNumberToObject(grid, "interpolate_events", (double)sel->interpolate_events);
    cJSON_AddNumberToObject(grid, "min_gain_pct", sel->min_gain_pct);
    if (sel->notes != NULL) {
        cJSON *notes = cJSON_AddArrayToObject(root, "notes");
        for (guint i = 0; i < sel->notes->len; i++)
            cJSON_AddItemToArray(notes, cJSON_CreateString(g_ptr_array_index(sel->notes, i)));
    }
    /* The margin per regime and where it comes from (docs/formats.md). */
    cJSON *margin = cJSON_AddObjectToObject(root, "margin");
    cJSON_AddStringToObject(margin, "source",
                            sel->nccl_model         ? "none"
                            : sel->validated_margin ? "validated"
                                                    : "min-gain");
    cJSON_AddStringToObject(margin, "machine_class", sel->machine_class);
    cJSON_AddStringToObject(margin, "validated_by", cs_validated_source());
    cJSON_AddNumberToObject(margin, "floor_pct", CS_VALIDATED_MIN_MARGIN_PCT);
    const CsValidatedError *e = cs_validated_error(sel->machine_class);
    for (int k = 0; k < CS_N_REGIMES; k++) {
        cJSON *rg = cJSON_AddObjectToObject(margin, cs_regime_name((CsRegime)k));
        cJSON_AddNumberToObject(rg, "margin_pct", sel->margin_pct[k]);
        cJSON_AddBoolToObject(rg, "validated", sel->validated[k]);
        if (sel->validated[k])
            cJSON_AddNumberToObject(rg, "validated_error_pct", e->error_pct[k]);
        else
            cJSON_AddNullToObject(rg, "validated_error_pct");
    }

    cJSON *colls = cJSON_AddArrayToObject(root, "collectives");
    for (guint i = 0; i < sel->ops->len; i++) {
        const OpResult *r = g_ptr_array_index(sel->ops, i);
        const CsSelectTable *t = &r->full;
        cJSON *c = cJSON_CreateObject();
        cJSON_AddItemToArray(colls, c);
        cJSON_AddStringToObject(c, "collective", cs_op_name(t->op));
        cJSON_AddNumberToObject(c, "granularity_bytes", (double)t->granularity);
        cJSON_AddNumberToObject(c, "candidates", t->n_candidates);
        if (t->note != NULL)
            cJSON_AddStringToObject(c, "note", t->note);
        cJSON *points = cJSON_AddArrayToObject(c, "points");
        for (guint j = 0; j < t->points->len; j++) {
            const CsSelectPoint *p = &g_array_index(t->points, CsSelectPoint, j);
            cJSON *o = cJSON_CreateObject();
            cJSON_AddNumberToObject(o, "size_bytes", (double)p->size_bytes);
            add_choice(o, &p->best, FALSE);
            cJSON_AddNumberToObject(o, "time_us", round_us(p->time_us));
            cJSON_AddNumberToObject(o, "algbw_GBps", round_us(p->algbw_GBps));
            cJSON_AddNumberToObject(o, "busbw_GBps", round_us(p->busbw_GBps));
            cJSON_AddBoolToObject(o, "extrapolated", p->extrapolated);
            cJSON_AddBoolToObject(o, "bracketed", p->bracketed);
            cJSON_AddItemToArray(points, o);
        }
        cJSON *xs = cJSON_AddArrayToObject(c, "crossovers");
        for (guint j = 0; j < t->crossovers->len; j++) {
            const CsSelectCrossover *x = &g_array_index(t->crossovers, CsSelectCrossover, j);
            cJSON *o = cJSON_CreateObject();
            cJSON_AddNumberToObject(o, "size_bytes", (double)x->size_bytes);
            cJSON_AddNumberToObject(o, "below_bytes", (double)x->below_bytes);
            cJSON *from = choice_json(&x->from, FALSE);
            add_time(from, "time_us", x->from_time_us);
            add_time(from, "time_below_us", x->from_time_below_us);
            cJSON_AddItemToObject(o, "from", from);
            cJSON *to = choice_json(&x->to, FALSE);
            add_time(to, "time_us", x->to_time_us);
            add_time(to, "time_below_us", x->to_time_below_us);
            cJSON_AddItemToObject(o, "to", to);
            cJSON_AddBoolToObject(o, "interpolated", x->interpolated);
            cJSON_AddItemToArray(xs, o);
        }
        cJSON_AddItemToObject(c, "ranges", ranges_json(t, FALSE));
        if (r->nccl != NULL && r->nccl->points->len > 0)
            cJSON_AddItemToObject(c, "nccl_ranges", ranges_json(r->nccl, TRUE));
        else
            cJSON_AddNullToObject(c, "nccl_ranges");
    }
    return root;
}

/* @root's text and a newline (transfer full); frees @root. */
static char *
json_text(cJSON *root)
{
    char *text = cs_json_print(root, TRUE);
    char *copy = g_strconcat(text, "\n", NULL);
    cJSON_free(text);
    cJSON_Delete(root);
    return copy;
}

/**
 * cs_selection_to_json:
 * The selection as one JSON document (selection_json()), the input of libnccl-tuner-collsim.so.
 */
char *
cs_selection_to_json(const CsSelection *sel)
{
    g_return_val_if_fail(sel != NULL, NULL);
    return json_text(selection_json(sel));
}

static cJSON *
compare_json(const CsSelection *sel)
{
    cJSON *root = header_json(sel, "collsim-select-compare", "collsim-compare");
    cJSON_AddStringToObject(root, "net_model", sel->model);
    cJSON_AddStringToObject(root, "nccl_model", cs_nccl_model_constants(sel->nccl)->version);
    cJSON *colls = cJSON_AddArrayToObject(root, "collectives");
    for (guint i = 0; i < sel->ops->len; i++) {
        const OpResult *r = g_ptr_array_index(sel->ops, i);
        if (r->compare == NULL)
            continue;
        cJSON *c = cJSON_CreateObject();
        cJSON_AddItemToArray(colls, c);
        cJSON_AddStringToObject(c, "collective", cs_op_name(r->full.op));
        cJSON *rows = cJSON_AddArrayToObject(c, "sizes");
        for (guint j = 0; j < r->compare->len; j++) {
            const CsSelectCompareRow *row = &g_array_index(r->compare, CsSelectCompareRow, j);
            cJSON *o = cJSON_CreateObject();
            cJSON_AddNumberToObject(o, "size_bytes", (double)row->size_bytes);
            cJSON *n = cJSON_AddObjectToObject(o, "nccl");
            cJSON_AddStringToObject(n, "algorithm", cs_nccl_algo_name(row->nccl.algo));
            cJSON_AddStringToObject(n, "protocol", cs_nccl_proto_name(row->nccl.proto));
            cJSON_AddNumberToObject(n, "channels", row->nccl.n_channels);
            cJSON_AddNumberToObject(n, "nccl_time_us", round_us(row->nccl.time_us));
            if (row->nccl_simulated)
                cJSON_AddNumberToObject(n, "collsim_time_us", round_us(row->nccl_pick_us));
            else
                cJSON_AddNullToObject(n, "collsim_time_us");
            cJSON *b = choice_json(&row->best, FALSE);
            cJSON_AddNumberToObject(b, "collsim_time_us", round_us(row->best_us));
            cJSON_AddItemToObject(o, "collsim", b);
            if (row->nccl_simulated) {
                cJSON_AddNumberToObject(o, "loss_us", round_us(row->loss_us));
                cJSON_AddNumberToObject(o, "loss_pct", round_us(row->loss_pct));
            }
            else {
                cJSON_AddNullToObject(o, "loss_us");
                cJSON_AddNullToObject(o, "loss_pct");
            }
            cJSON_AddItemToArray(rows, o);
        }
    }
    return root;
}

char *
cs_selection_compare_to_json(const CsSelection *sel)
{
    g_return_val_if_fail(sel != NULL && sel->compare_spec != NULL, NULL);
    return json_text(compare_json(sel));
}

/* --emit json or compare-json for several shapes: an array of the single documents
 * (libnccl-tuner-collsim.so picks the one for its communicator). (transfer full) */
char *
cs_select_json_shapes(CsSelection *const *sels, guint n, gboolean compare)
{
    cJSON *all = cJSON_CreateArray();
    for (guint i = 0; i < n; i++)
        cJSON_AddItemToArray(all, !compare ? selection_json(sels[i]) : compare_json(sels[i]));
    return json_text(all);
}
