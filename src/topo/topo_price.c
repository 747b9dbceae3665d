// SPDX-License-Identifier: MIT
/* A topology's "price" block (the user's quote for the machine, which `collsim plan` turns
 * into cost per hour and per step; collsim ships none), and the counts it is charged on: the
 * NICs of a set of nodes and the ports of the network switches (docs/workloads.md, Prices). */
#include "config.h"

#include <math.h>
#include <string.h>

#include "base/units.h"
#include "topo/topo-private.h"

static const char *const price_keys[] = {
    "node", "nic", "switch_port", "gpu_hour", "node_hour", "amortize", "currency", "source", NULL,
};

/* A quote above this is a slip of the keyboard (a trillion per node). */
#define MAX_PRICE 1e12

/* An optional amount at @key of @obj: a JSON number, or a string holding a decimal number
 * ("250000", "1800.50"), from 0 to MAX_PRICE; @value is left < 0 when absent. */
static gboolean
get_amount(const CsJsonCtx *ctx, const cJSON *obj, const char *path, const char *key, double *value,
           GError **error)
{
    const cJSON *item = cs_json_member(obj, key);
    if (item == NULL)
        return TRUE;
    double v = -1;
    gboolean ok = FALSE;
    if (cJSON_IsNumber(item))
        ok = isfinite(item->valuedouble) && item->valuedouble >= 0;
    else if (cJSON_IsString(item))
        ok = cs_units_parse_decimal(item->valuestring, &v);
    if (cJSON_IsNumber(item))
        v = item->valuedouble;
    if (!ok || v > MAX_PRICE) {
        g_autofree char *where = cs_json_path_member(path, key);
        g_autofree char *got = cs_json_describe(item);
        cs_json_set_error(ctx, error, where,
                          "%s is not a price: expected an amount from 0 to 1e12 in the block's "
                          "currency, as a number or a string of digits (e.g. 250000 or "
                          "\"1800.50\"; no sign, no currency symbol)",
                          got);
        return FALSE;
    }
    *value = v;
    return TRUE;
}

void
cs_topo_price_free(CsTopoPrice *price)
{
    if (price == NULL)
        return;
    g_free(price->currency);
    g_free(price->source);
    g_free(price);
}

CsTopoPrice *
cs_topo_price_copy(const CsTopoPrice *price)
{
    if (price == NULL)
        return NULL;
    CsTopoPrice *copy = g_new(CsTopoPrice, 1);
    *copy = *price;
    copy->currency = g_strdup(price->currency);
    copy->source = g_strdup(price->source);
    return copy;
}

/**
 * cs_topo_parse_price:
 * Reads the optional "price" object of @obj (at @path): amounts per node, NIC and switch port
 * (capital, which need "amortize") and per GPU-hour and node-hour, with "currency" and
 * "source" as free text. At least one amount; unknown keys are errors.
 */
gboolean
cs_topo_parse_price(CsTopo *topo, const CsJsonCtx *ctx, const cJSON *obj, const char *path,
                    GError **error)
{
    const cJSON *block = NULL;
    if (!cs_json_get_object(ctx, obj, path, "price", FALSE, &block, error))
        return FALSE;
    if (block == NULL)
        return TRUE;
    g_autofree char *where = cs_json_path_member(path, "price");
    if (!cs_json_check_object(ctx, block, where, price_keys, error))
        return FALSE;
    CsTopoPrice p = { -1, -1, -1, -1, -1, 0, NULL, NULL };
    const char *amortize = NULL, *currency = NULL, *source = NULL;
    if (!get_amount(ctx, block, where, "node", &p.node, error)
        || !get_amount(ctx, block, where, "nic", &p.nic, error)
        || !get_amount(ctx, block, where, "switch_port", &p.switch_port, error)
        || !get_amount(ctx, block, where, "gpu_hour", &p.gpu_hour, error)
        || !get_amount(ctx, block, where, "node_hour", &p.node_hour, error)
        || !cs_json_get_string(ctx, block, where, "amortize", FALSE, &amortize, error)
        || !cs_json_get_string(ctx, block, where, "currency", FALSE, &currency, error)
        || !cs_json_get_string(ctx, block, where, "source", FALSE, &source, error))
        return FALSE;
    if (amortize != NULL) {
        g_autoptr(GError) local = NULL;
        if (!cs_units_parse_period(amortize, &p.amortize_h, &local)) {
            g_autofree char *at = cs_json_path_member(where, "amortize");
            cs_json_set_error(ctx, error, at, "%s", local->message);
            return FALSE;
        }
    }
    if (p.node < 0 && p.nic < 0 && p.switch_port < 0 && p.gpu_hour < 0 && p.node_hour < 0) {
        cs_json_set_error(ctx, error, where,
                          "a price block gives at least one of \"node\", \"nic\", "
                          "\"switch_port\" (capital) or \"gpu_hour\", \"node_hour\" (hourly)");
        return FALSE;
    }
    const char *capital = p.node >= 0 ? "node" : p.nic >= 0 ? "nic" : "switch_port";
    if ((p.node >= 0 || p.nic >= 0 || p.switch_port >= 0) && amortize == NULL) {
        cs_json_set_error(ctx, error, where,
                          "\"%s\" is a purchase price: give \"amortize\" (e.g. \"4y\") to "
                          "spread it over the machine's life as a cost per hour",
                          capital);
        return FALSE;
    }
    p.currency = g_strdup(currency);
    p.source = g_strdup(source);
    cs_topo_price_free(topo->price);
    topo->price = g_new(CsTopoPrice, 1);
    *topo->price = p;
    return TRUE;
}

static void
add_amount(cJSON *obj, const char *key, double v)
{
    if (v >= 0)
        cJSON_AddNumberToObject(obj, key, v);
}

void
cs_topo_price_to_json(const CsTopoPrice *price, cJSON *root)
{
    if (price == NULL)
        return;
    cJSON *o = cJSON_AddObjectToObject(root, "price");
    add_amount(o, "node", price->node);
    add_amount(o, "nic", price->nic);
    add_amount(o, "switch_port", price->switch_port);
    add_amount(o, "gpu_hour", price->gpu_hour);
    add_amount(o, "node_hour", price->node_hour);
    if (price->amortize_h > 0) {
        char buf[G_ASCII_DTOSTR_BUF_SIZE];
        g_ascii_formatd(buf, sizeof buf, "%.15g", price->amortize_h);
        g_autofree char *text = g_strdup_printf("%sh", buf);
        cJSON_AddStringToObject(o, "amortize", text);
    }
    if (price->currency != NULL)
        cJSON_AddStringToObject(o, "currency", price->currency);
    if (price->source != NULL)
        cJSON_AddStringToObject(o, "source", price->source);
}

const CsTopoPrice *
cs_topo_price(const CsTopo *topo)
{
    g_return_val_if_fail(topo != NULL, NULL);
    return topo->price;
}

int
cs_topo_count_nics(const CsTopo *topo, const gboolean *on_node)
{
    g_return_val_if_fail(topo != NULL && on_node != NULL, 0);
    int n = 0;
    for (guint d = 0; d < topo->devices->len; d++) {
        const CsDevice *dev = &g_array_index(topo->devices, CsDevice, d);
        n += dev->kind == CS_DEVICE_NIC && dev->node >= 0 && dev->node < topo->n_nodes
             && on_node[dev->node];
    }
    return n;
}

/* @l's ports at a switch end: its raw bandwidth in ports of @port_Bps, rounded up (a slower
 * link still takes a whole port; 1e-9 absorbs the rounding of count x lane / lane). */
static gint64
link_ports(const CsLink *l, double port_Bps)
{
    return (gint64)ceil(l->raw_bw_Bps / port_Bps - 1e-9);
}

gint64
cs_topo_switch_ports(const CsTopo *topo, double *port_Bps)
{
    g_return_val_if_fail(topo != NULL, 0);
    const int n_dev = (int)topo->devices->len;
    double port = 0;
    for (guint i = 0; i < topo->links->len; i++) {
        const CsLink *l = &g_array_index(topo->links, CsLink, i);
        if (g_array_index(topo->devices, CsDevice, l->src).kind == CS_DEVICE_SWITCH
            || g_array_index(topo->devices, CsDevice, l->dst).kind == CS_DEVICE_SWITCH)
            port = MAX(port, l->raw_bw_Bps / l->count);
    }
    if (port_Bps != NULL)
        *port_Bps = port;
    if (port <= 0)
        return 0;
    gint64 total = 0;
    for (int d = 0; d < n_dev; d++) {
        if (g_array_index(topo->devices, CsDevice, d).kind != CS_DEVICE_SWITCH)
            continue;
        /* Each duplex link is a link out and a link in: the larger side counts its ports
         * once, and a one-way link still takes its port. */
        gint64 out = 0, in = 0;
        for (int k = topo->out_start[d]; k < topo->out_start[d + 1]; k++)
            out += link_ports(&g_array_index(topo->links, CsLink, topo->out_links[k]), port);
        for (int k = topo->in_start[d]; k < topo->in_start[d + 1]; k++)
            in += link_ports(&g_array_index(topo->links, CsLink, topo->in_links[k]), port);
        total += MAX(out, in);
    }
    return total;
}
