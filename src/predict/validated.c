// SPDX-License-Identifier: MIT
/* The model's validated error per machine class and size regime (validated.h): the machine
 * classes, and the table scripts/accuracy.py --margins writes into validated-errors.inc from
 * `collsim validate --format json` on every shipped trace with its datasheet topology. */
#include "config.h"

#include <string.h>

#include "algos/pipetree.h"
#include "predict/validated.h"

/* ---- The table (generated) ---- */

static const CsValidatedError table[] = {
#include "predict/validated-errors.inc"
};

const char *
cs_validated_source(void)
{
    return VALIDATED_SOURCE;
}

const CsValidatedError *
cs_validated_error(const char *klass)
{
    g_return_val_if_fail(klass != NULL, NULL);
    for (gsize i = 0; i < G_N_ELEMENTS(table); i++)
        if (strcmp(table[i].klass, klass) == 0)
            return &table[i];
    return NULL;
}

double
cs_validated_margin_pct(const char *klass, CsRegime regime, gboolean *validated)
{
    g_return_val_if_fail(regime < CS_N_REGIMES, CS_VALIDATED_MIN_MARGIN_PCT);
    const CsValidatedError *e = cs_validated_error(klass);
    const double err = e != NULL ? e->error_pct[regime] : -1.0;
    if (validated != NULL)
        *validated = err >= 0.0;
    return MAX(CS_VALIDATED_MIN_MARGIN_PCT, err);
}

/* ---- Regimes ---- */

CsRegime
cs_regime_of_size(gint64 size_bytes)
{
    if (size_bytes < CS_REGIME_LATENCY_MAX_BYTES)
        return CS_REGIME_LATENCY;
    return size_bytes < CS_REGIME_KNEE_MAX_BYTES ? CS_REGIME_KNEE : CS_REGIME_BANDWIDTH;
}

const char *
cs_regime_name(CsRegime regime)
{
    static const char *const names[CS_N_REGIMES] = { "latency", "knee", "bandwidth" };
    g_return_val_if_fail(regime < CS_N_REGIMES, "?");
    return names[regime];
}

/* ---- Machine classes ---- */

/* Whether a device of @kind is in @topo; then whether a link of @kind is. */
static gboolean
has_device(const CsTopo *topo, CsDeviceKind kind)
{
    for (int d = 0; d < cs_topo_n_devices(topo); d++)
        if (cs_topo_device(topo, d)->kind == kind)
            return TRUE;
    return FALSE;
}

static gboolean
has_link(const CsTopo *topo, CsLinkKind kind)
{
    for (int l = 0; l < cs_topo_n_links(topo); l++)
        if (cs_topo_link(topo, l)->kind == kind)
            return TRUE;
    return FALSE;
}

const char *
cs_validated_class(const CsTopo *topo, int nranks)
{
    g_return_val_if_fail(topo != NULL, "multi-node-other");
    const int n = nranks > 0 ? MIN(nranks, cs_topo_n_ranks(topo)) : cs_topo_n_ranks(topo);
    gboolean nodes = FALSE;
    for (int r = 0; r < n; r++) {
        const CsDevice *dev = cs_topo_device(topo, cs_topo_rank_device(topo, r));
        if (dev->kind == CS_DEVICE_CPU)
            return "cpu";
        nodes |= cs_topo_rank_node(topo, r) != cs_topo_rank_node(topo, 0);
    }
    if (!nodes) {
        if (has_device(topo, CS_DEVICE_NVSWITCH))
            return "single-node-nvswitch";
        return has_link(topo, CS_LINK_XGMI) ? "single-node-xgmi" : "single-node-pcie";
    }
    /* Several nodes: one NVLink domain (an NVL72 rack) or several of them over a network. */
    g_autoptr(CsNodeGroups) domains = cs_node_groups_new_nvlink(topo, n, NULL);
    if (domains != NULL && domains->n_groups == 1)
        return "nvlink-rack";
    g_autoptr(CsNodeGroups) by_node = cs_node_groups_new(topo, n, NULL);
    if (domains != NULL && by_node != NULL && domains->n_groups < by_node->n_groups)
        return "nvlink-racks";
    const char *transport = cs_topo_transport(topo)->kind;
    if (transport == NULL)
        return "multi-node-other";
    if (strcmp(transport, "ib") == 0)
        return "multi-node-ib";
    if (strcmp(transport, "roce") == 0)
        return "multi-node-roce";
    if (g_str_has_prefix(transport, "efa"))
        return "multi-node-efa";
    if (strcmp(transport, "socket") == 0)
        return "multi-node-socket";
    return "multi-node-other";
}
