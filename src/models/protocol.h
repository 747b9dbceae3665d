// SPDX-License-Identifier: MIT
/* NCCL's three protocols as parameter sets: per-hop latency, usable bandwidth fraction,
 * buffer and slot sizes, and when each is legal (DESIGN §5, §9). */
#pragma once

#include <glib.h>

#include "topo/topo.h"

G_BEGIN_DECLS

typedef enum { CS_PROTO_LL, CS_PROTO_LL128, CS_PROTO_SIMPLE, CS_N_PROTOS } CsProto;

/* NCCL_STEPS: slots per connection. */
#define CS_NCCL_STEPS 8

/* NCCL_P2P_PER_CHANNEL_NET_BW (NCCL 2.29.2 src/graph/paths.cc), GB/s: what NCCL counts one
 * point-to-point channel over the network to carry; predict_p2p.c sizes a network peer's
 * channels by it, the engine caps such a channel at it (engine.c, "Channels"). */
#define CS_NCCL_P2P_NET_CHANNEL_GBPS 14

/**
 * CsProtoInfo:
 * What a protocol costs and carries.
 */
typedef struct {
    const char *name;                        /* "LL", "LL128", "Simple" */
    double data_fraction;                    /* usable share of a link's bytes (LL 8/16) */
    double hop_latency_s[CS_N_LINK_CLASSES]; /* s: per hop, on top of the link's alpha */
    gint64 buffer_bytes;                     /* bytes: raw buffer per connection */
    gint64 slot_data_bytes;                  /* bytes: data carried by one of the 8 slots */
    gboolean needs_nvlink;                   /* legal only if every hop is NVLink class */
    const char *reference;                   /* provenance of the constants */
} CsProtoInfo;

const CsProtoInfo *cs_proto_info(CsProto proto);
const char *cs_proto_name(CsProto proto);
gboolean cs_proto_from_name(const char *name, CsProto *proto, GError **error);

/* Whether @proto may carry a transfer over @link_class; FALSE with @why set (static string). */
gboolean cs_proto_legal(CsProto proto, CsLinkClass link_class, const char **why);
/* Whether @proto can run on ranks that are devices of @kind (LL, LL128: GPUs only); FALSE
 * with @why set (static string). */
gboolean cs_proto_legal_on_device(CsProto proto, CsDeviceKind kind, const char **why);

G_END_DECLS
