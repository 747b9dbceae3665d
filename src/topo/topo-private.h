// SPDX-License-Identifier: MIT
/* CsTopo's definition, shared by topo.c (loader, accessors), topo_template.c (cluster
 * template expansion) and topo_route.c (routes, injection and bisection bandwidth). */
#pragma once

#include "base/json_util.h"
#include "topo/topo.h"

G_BEGIN_DECLS

/* The protocols a "protocols" object may name, in CsProto order (models/protocol.h sits
 * above this layer, so the names are repeated here). */
#define CS_TOPO_N_PROTOS 3
/* Simple's bit in a protocol mask (LL, LL128, Simple). */
#define CS_TOPO_SIMPLE_BIT (1u << 2)
/* Node indices a file may use, and the nodes a template may expand to. */
#define CS_TOPO_MAX_NODES 65536
/* Ranks a machine may have. Routes are found when asked (topo_route.c), so nothing grows with
 * the square of the ranks; 2^20 keeps rank and device indices well inside an int. */
#define CS_TOPO_MAX_RANKS (1 << 20)
/* The slowest usable link: the floor a datasheet rate is held to, efficiency applied. */
#define CS_TOPO_MIN_USABLE_BPS CS_JSON_MIN_BANDWIDTH_BPS
extern const char *const cs_topo_proto_names[CS_TOPO_N_PROTOS + 1]; /* NULL-terminated */

/* Reads an optional "protocols" object of @root (at @path) into @topo's overrides. */
gboolean cs_topo_parse_protocols(CsTopo *topo, const CsJsonCtx *ctx, const cJSON *root,
                                 const char *path, GError **error);

/* Which GPU-spec keys a device has been given (from the device or the defaults object). */
typedef enum {
    SPEC_LAUNCH = 1 << 0,
    SPEC_STEP = 1 << 1,
    SPEC_REDUCE = 1 << 2,
    SPEC_COPY = 1 << 3,
    SPEC_ALL = (1 << 4) - 1,
} SpecMask;

/* What the loader knows about a device beyond CsDevice, for its messages. */
typedef struct {
    int file_index;  /* index in the file's devices[] (-1 if made by a template) */
    guint spec_mask; /* SpecMask */
} CsDeviceOrigin;

typedef struct _CsRouteState CsRouteState;

struct _CsTopo {
    grefcount ref;
    char *name;
    char *description;
    char *path; /* NULL when loaded from data */

    GArray *devices;         /* CsDevice */
    GArray *origins;         /* CsDeviceOrigin, parallel to @devices (loading only) */
    GArray *links;           /* CsLink */
    GHashTable *by_name;     /* device name (owned by the CsDevice) -> index + 1 */
    GArray *rank_order;      /* int device indices from "ranks", or NULL for the default */
    gboolean template_sharp; /* a template's network declared SHARP */
    CsTransport transport;   /* the scale-out transport (strings static or interned) */
    gboolean transport_set;  /* the file named it */
    /* s: per-hop protocol latency overrides from "protocols", < 0 = none; rows follow
     * CsProto (models/protocol.h): LL, LL128, Simple. */
    double hop_latency_s[CS_TOPO_N_PROTOS][CS_N_LINK_CLASSES];

    /* Derived by cs_topo_finish(). */
    int n_ranks;
    int *rank_device; /* rank -> device index */
    int *rank_node;   /* rank -> node index */
    int *rank_island; /* rank -> NVLink island: devices joined by NVLink-class links only */
    int n_nodes;
    int ranks_per_node; /* largest node */
    int *out_start;     /* CSR: links leaving device d are out_links[out_start[d]..] */
    int *out_links;
    int *in_start; /* CSR: links entering device d are in_links[in_start[d]..] */
    int *in_links;
    int *node_start; /* CSR: the devices of node n are node_devs[node_start[n]..] */
    int *node_devs;
    CsRouteState *routes; /* routes, NIC plans and bandwidth figures, made when asked */
    gboolean nvls;
    gboolean sharp;
    CsTopoPrice *price; /* nullable: the file's "price" block */
};

/* topo.c */
CsTopo *cs_topo_new_empty(const char *name, const char *path);
/* The file format's names of device and link kinds, by CsDeviceKind and CsLinkKind (topo.c). */
extern const char *const cs_topo_device_kind_names[CS_N_DEVICE_KINDS];
extern const char *const cs_topo_link_kind_names[CS_N_LINK_KINDS];
/* The index of @name among @n @names (topo.c). */
gboolean cs_topo_lookup_name(const char *const *names, int n, const char *name, int *index);
/* "a, b or c". (transfer full) */
char *cs_topo_joined_names(const char *const *names, int n);
/* The index of the device named @name, -1 if none (topo_load.c). */
int cs_topo_device_index(const CsTopo *topo, const char *name);
/* A copy of @topo's devices, links, rank order, transport and overrides, to finish. */
CsTopo *cs_topo_copy_unfinished(const CsTopo *topo);
/* cs_topo_finish() on such a copy, which cannot fail. (transfer full: @copy) */
CsTopo *cs_topo_finish_copy(CsTopo *copy);
/* Appends a device (name and model copied); returns its index, or -1 if the name is taken. */
int cs_topo_add_device(CsTopo *topo, const CsDevice *device, const CsDeviceOrigin *origin);
void cs_topo_add_link(CsTopo *topo, const CsLink *link);
/* Reads the explicit-graph keys of @root (at @path) into @topo. */
gboolean cs_topo_parse_graph(CsTopo *topo, const CsJsonCtx *ctx, const cJSON *root,
                             const char *path, GError **error);
/* Resolves a topology name or path; @base_dir (nullable) is searched first. (transfer full) */
char *cs_topo_resolve(const char *name_or_path, const char *base_dir, GError **error);
/* The text of a topology file, bounded and NUL-free. (transfer full) (nullable) */
char *cs_topo_read_file(const char *path, GError **error);
/* Loads a parsed document (not modified); see topo.c. (transfer full) (nullable) */
CsTopo *cs_topo_load_json(const cJSON *root, const char *origin, const char *path,
                          const char *base_dir, GError **error);
/* Rank map, node map, routes and the derived figures; errors name @ctx's origin. */
gboolean cs_topo_finish(CsTopo *topo, const CsJsonCtx *ctx, GError **error);

/* topo_transport.c */
/* Reads the optional "transport" member of @obj (at @path). */
gboolean cs_topo_parse_transport(CsTopo *topo, const CsJsonCtx *ctx, const cJSON *obj,
                                 const char *path, GError **error);
/* The network's link kind's transport when the file named none. */
void cs_topo_finish_transport(CsTopo *topo);

/* topo_price.c */
/* Reads the optional "price" member of @obj (at @path) into @topo (replacing any). */
gboolean cs_topo_parse_price(CsTopo *topo, const CsJsonCtx *ctx, const cJSON *obj, const char *path,
                             GError **error);
CsTopoPrice *cs_topo_price_copy(const CsTopoPrice *price);
void cs_topo_price_free(CsTopoPrice *price);
/* The price block as the file format writes it, added to @root as "price". */
void cs_topo_price_to_json(const CsTopoPrice *price, cJSON *root);

/* topo_template.c */
gboolean cs_topo_template_expand(CsTopo *topo, const CsJsonCtx *ctx, const cJSON *root,
                                 const char *base_dir, GError **error);

/* topo_route.c */
/* Adjacency both ways and each node's devices (needs the node map). */
void cs_topo_build_adjacency(CsTopo *topo);
/* Fails when two ranks cannot reach each other. */
gboolean cs_topo_check_connected(const CsTopo *topo, const CsJsonCtx *ctx, GError **error);
/* An empty route state (replacing any); freed with the topology. */
void cs_topo_routes_init(CsTopo *topo);
void cs_topo_routes_free(CsTopo *topo);
double cs_topo_compute_bisection(const CsTopo *topo);
/* The bisection, computed on first use and kept in the route state. */
double cs_topo_routes_bisection(const CsTopo *topo);

G_END_DECLS
