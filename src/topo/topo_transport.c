// SPDX-License-Identifier: MIT
/* The scale-out transport: what a network message costs beyond its links' alphas, as the
 * collective library's network plugin reports it to NCCL (ncclNetProperties_t.latency, in us).
 * NCCL's tuning model adds that latency once per network hop and once more with the Simple
 * protocol, for the receiver's flush of GPUDirect data before the GPU may read it
 * (src/graph/tuning.cc: "interLat += graphs[a]->latencyInter; // Also add the flush extra
 * latency", NCCL 2.30.7); the engine charges it where it arises (engine.c).
 *
 * In a file: "transport" at the top of an explicit graph, or in a cluster template's network,
 * either the name of a known transport or an object {"kind", "latency", "source"} whose
 * latency overrides the default. Without one, the network's link kind says which: ib and roce
 * links run NCCL's IB verbs transport, ethernet links its socket transport. */
#include "config.h"

#include <string.h>

#include "topo/topo-private.h"

static const char *const transport_keys[] = { "kind", "latency", "source", NULL };

/* Each default is what that plugin reports to NCCL as its latency. */
static const CsTransport known[] = {
    { "ib", 0.0,
      "NCCL's IB verbs transport: props->latency = 0 (src/transport/net_ib/init.cc, NCCL "
      "2.30.7)" },
    { "roce", 0.0,
      "RoCE runs NCCL's IB verbs transport: props->latency = 0 (src/transport/net_ib/init.cc, "
      "NCCL 2.30.7)" },
    { "socket", 0.0,
      "NCCL's socket transport: props->latency = 0 (src/transport/net_socket.cc, NCCL 2.30.7)" },
    { "efa", 75e-6,
      "AWS EFA through aws-ofi-nccl on p4d, p4de, p5 and p5e: platform latency 75 us reported to "
      "NCCL (src/platform-aws.cpp, aws-ofi-nccl 2daf7d3)" },
    { "efa3", 35e-6,
      "AWS EFA through aws-ofi-nccl on p5en, p6-b200, p6-b300 and later P instances: platform "
      "latency 35 us reported to NCCL (src/platform-aws.cpp, aws-ofi-nccl 2daf7d3)" },
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
    if (spec != NULL && cs_json_member(spec, "latency") != NULL) {
        const char *source = NULL;
        if (!cs_json_get_time(ctx, spec, p, "latency", TRUE, &topo->transport.latency_s, error))
            return FALSE;
        cs_json_get_string(ctx, spec, p, "source", FALSE, &source, NULL);
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
