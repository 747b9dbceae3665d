// SPDX-License-Identifier: MIT
/* The scale-out transport: what a network message costs beyond its links' alphas. Three
 * figures, each cited: the latency of one message (the engine charges it to every message that
 * crosses the network and to every slot's return), the more a Simple message pays for its
 * completion (the engine adds it on arrival), and the latency the network plugin reports to
 * NCCL (ncclNetProperties_t.latency), which NCCL's tuning model adds once per network hop and
 * once more with Simple (src/graph/tuning.cc, NCCL 2.30.7) and `--pick nccl` adds likewise.
 * NCCL's own IB and socket transports report 0 and publish no per-message figure: their cost
 * is the protocol model's network hop latency alone. AWS's plugin reports 75 us, a value its
 * authors chose for NCCL's tuner ("Empirical testing on P5 had shown that NCCL's internal
 * tuner choices work better with this value", src/platform-aws.cpp), while its own model
 * tuner states the measured one: 20 us for "2 nodes, 8B RDMA w/imm lat" on P5/P5e
 * (src/tuner/nccl_ofi_model.cpp, aws-ofi-nccl 2daf7d3). docs/transports-sources.md has every
 * quote.
 *
 * In a file: "transport" at the top of an explicit graph, or in a cluster template's network,
 * either the name of a known transport or an object {"kind", "latency", "flush", "reported",
 * "source"} whose times override the defaults. Without one, the network's link kind says
 * which: ib and roce links run NCCL's IB verbs transport, ethernet links its socket transport. */
#include "config.h"

#include <string.h>

#include "topo/topo-private.h"

static const char *const transport_keys[] = {
    "kind", "latency", "flush", "reported", "source", NULL,
};

static const CsTransport known[] = {
    { "ib", 0.0, 0.0, 0.0,
      "NCCL's IB verbs transport reports 0 and its cost is the protocol's network hop latency "
      "(src/transport/net_ib/init.cc, NCCL 2.30.7)" },
    { "roce", 0.0, 0.0, 0.0,
      "RoCE runs NCCL's IB verbs transport, which reports 0 (src/transport/net_ib/init.cc, NCCL "
      "2.30.7)" },
    { "socket", 0.0, 0.0, 0.0,
      "NCCL's socket transport reports 0 (src/transport/net_socket.cc, NCCL 2.30.7); so do "
      "Google's TCPX and TCPXO plugins" },
    { "efa", 20e-6, 3e-6, 75e-6,
      "AWS EFA on P5/P5e through aws-ofi-nccl 2daf7d3: 20 us for a 2-node 8 B RDMA write with "
      "immediate (src/tuner/nccl_ofi_model.cpp), 3 us more to complete a Simple message "
      "(include/nccl_ofi_param.h), 75 us reported to NCCL (src/platform-aws.cpp, also p4d)" },
    { "efa3", 18e-6, 3e-6, 35e-6,
      "AWS EFA on P5en through aws-ofi-nccl 2daf7d3: 18 us for a 2-node 8 B RDMA write "
      "(src/tuner/nccl_ofi_model.cpp), 3 us more with Simple (include/nccl_ofi_param.h), 35 us "
      "reported to NCCL (src/platform-aws.cpp, also p6-b200 and p6-b300)" },
};

/* The transport of a network whose links are of @kind. */
static const CsTransport *
default_for(CsLinkKind kind)
{
    switch (kind) {
    case CS_LINK_IB:
        return &known[0];
    case CS_LINK_ROCE:
        return &known[1];
    default:
        return &known[2];
    }
}

static char *
known_names(void)
{
    GString *s = g_string_new(NULL);
    for (gsize i = 0; i < G_N_ELEMENTS(known); i++)
        g_string_append_printf(s, "%s%s", i > 0 ? ", " : "", known[i].kind);
    return g_string_free(s, FALSE);
}

static const CsTransport *
lookup(const char *name)
{
    for (gsize i = 0; i < G_N_ELEMENTS(known); i++)
        if (strcmp(known[i].kind, name) == 0)
            return &known[i];
    return NULL;
}

/**
 * cs_topo_parse_transport:
 * Reads the optional "transport" member of @obj (at @path) into @topo. Absent, @topo keeps
 * what it has (none yet: the network's link kind decides in cs_topo_finish()).
 */
gboolean
cs_topo_parse_transport(CsTopo *topo, const CsJsonCtx *ctx, const cJSON *obj, const char *path,
                        GError **error)
{
    const cJSON *item = cs_json_member(obj, "transport");
    g_autofree char *p = cs_json_path_member(path, "transport");

    if (item == NULL)
        return TRUE;
    const char *name = NULL;
    const cJSON *spec = NULL;
    if (cJSON_IsString(item)) {
        name = item->valuestring;
    }
    else if (cJSON_IsObject(item)) {
        spec = item;
        const char *source = NULL;
        if (!cs_json_check_object(ctx, item, p, transport_keys, error)
            || !cs_json_get_string(ctx, item, p, "kind", TRUE, &name, error)
            || !cs_json_get_string(ctx, item, p, "source", FALSE, &source, error))
            return FALSE;
    }
    else {
        g_autofree char *got = cs_json_describe(item);
        cs_json_set_error(ctx, error, p, "expected a transport name or object, got %s", got);
        return FALSE;
    }
    const CsTransport *base = lookup(name);
    if (base == NULL) {
        g_autofree char *names = known_names();
        g_autofree char *where = spec != NULL ? cs_json_path_member(p, "kind") : g_strdup(p);
        cs_json_set_error(ctx, error, where, "\"%s\" is not a transport (%s)", name, names);
        return FALSE;
    }
    topo->transport = *base;
    topo->transport_set = TRUE;
    if (spec != NULL) {
        gboolean own = cs_json_member(spec, "latency") != NULL
                       || cs_json_member(spec, "flush") != NULL
                       || cs_json_member(spec, "reported") != NULL;
        const char *source = NULL;
        if (!cs_json_get_time(ctx, spec, p, "latency", FALSE, &topo->transport.latency_s, error)
            || !cs_json_get_time(ctx, spec, p, "flush", FALSE, &topo->transport.flush_s, error)
            || !cs_json_get_time(ctx, spec, p, "reported", FALSE, &topo->transport.reported_s,
                                 error))
            return FALSE;
        cs_json_get_string(ctx, spec, p, "source", FALSE, &source, NULL);
        if (own)
            topo->transport.source = source != NULL ? g_intern_string(source) : "set in the file";
    }
    return TRUE;
}

/**
 * cs_topo_finish_transport:
 * A network without a transport gets its link kind's (the first scale-out link's, in index
 * order); a machine without network links keeps none.
 */
void
cs_topo_finish_transport(CsTopo *topo)
{
    if (topo->transport_set)
        return;
    topo->transport = (CsTransport){ 0 };
    for (guint i = 0; i < topo->links->len; i++) {
        const CsLink *l = &g_array_index(topo->links, CsLink, i);
        if (cs_link_kind_class(l->kind) == CS_LINK_CLASS_NET) {
            topo->transport = *default_for(l->kind);
            return;
        }
    }
}

/**
 * cs_topo_transport:
 * The scale-out transport (transfer none); kind NULL when the machine has no network.
 */
const CsTransport *
cs_topo_transport(const CsTopo *topo)
{
    return &topo->transport;
}
