// SPDX-License-Identifier: MIT
/* Topology: devices, directed links, routes between GPUs and the rank <-> GPU map, loaded from
 * the JSON files of topologies/ (explicit graph or cluster template, DESIGN §3). */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define CS_TOPO_ERROR (cs_topo_error_quark())
/* The largest topology file read (the shipped ones are a few KiB; a template describes a
 * cluster of any size in a few hundred bytes). */
#define CS_TOPO_MAX_FILE_BYTES ((gsize)64 << 20)
GQuark cs_topo_error_quark(void);

typedef enum {
    CS_TOPO_ERROR_NOT_FOUND, /* no such file, and no shipped topology of that name */
    CS_TOPO_ERROR_PARSE,     /* not JSON */
    CS_TOPO_ERROR_INVALID,   /* JSON, but not a valid topology */
    CS_TOPO_ERROR_EDIT,      /* an edit (--set PATH=VALUE) that is malformed, does not apply,
                              * or makes the topology invalid; the message starts with it */
} CsTopoError;

typedef enum {
    CS_DEVICE_GPU,
    CS_DEVICE_NVSWITCH,
    CS_DEVICE_PCIE_SWITCH,
    CS_DEVICE_CPU,
    CS_DEVICE_NIC,
    CS_DEVICE_SWITCH, /* a scale-out network switch (IB, RoCE, Ethernet) */
    CS_N_DEVICE_KINDS
} CsDeviceKind;

typedef enum {
    CS_LINK_NVLINK,
    CS_LINK_NVSWITCH,
    CS_LINK_PCIE,
    CS_LINK_IB,
    CS_LINK_ROCE,
    CS_LINK_ETHERNET,
    CS_LINK_XGMI,
    CS_LINK_SHM, /* staged through host memory (no peer-to-peer) */
    CS_N_LINK_KINDS
} CsLinkKind;

/* The three link classes NCCL's cost model distinguishes. */
typedef enum {
    CS_LINK_CLASS_NVLINK, /* NVLink, NVSwitch, xGMI */
    CS_LINK_CLASS_PCI,    /* PCIe, SHM */
    CS_LINK_CLASS_NET,    /* IB, RoCE, Ethernet */
    CS_N_LINK_CLASSES
} CsLinkClass;

/**
 * CsGpuSpec:
 * The GPU-side costs that make the model alpha-beta-gamma. Also used for CPUs in CPU-only
 * (teaching) clusters, where the "kernel launch" is the MPI call overhead.
 */
typedef struct {
    double launch_s;        /* s: kernel launch / per-collective base latency */
    double step_overhead_s; /* s: per schedule step (flag wait, fence) */
    double reduce_Bps;      /* bytes/s: reduction throughput, gamma = 1 / reduce_Bps */
    double copy_Bps;        /* bytes/s: local device copy throughput */
    guint default_protos;   /* bit per protocol (LL, LL128, Simple) the collective library
                               picks from when none is forced; 0: all */
} CsGpuSpec;

/**
 * CsDevice:
 * One device of the expanded graph. Names are unique ("node0/gpu3", "node0/nic1", "spine").
 */
typedef struct {
    char *name;  /* unique name */
    char *model; /* e.g. "H100 SXM5 80GB"; NULL if not given */
    CsDeviceKind kind;
    int node;                     /* node index, -1 for fabric devices outside every node */
    CsGpuSpec gpu;                /* for GPUs (and CPUs acting as ranks) */
    gboolean multicast_reduction; /* NVSwitch with NVLS (in-switch reduction) */
    gboolean sharp;               /* IB switch with SHARP in-network reduction */
} CsDevice;

/**
 * CsLink:
 * One direction of a physical connection. A bonded set of @count lanes is one CsLink whose
 * @bw_Bps is the sum. A duplex link in the file becomes two CsLinks.
 */
typedef struct {
    int src; /* device index */
    int dst; /* device index */
    CsLinkKind kind;
    double alpha_s;    /* s: latency of one traversal */
    double bw_Bps;     /* bytes/s: count * per-lane bandwidth * efficiency */
    double raw_bw_Bps; /* bytes/s: count * per-lane datasheet bandwidth */
    int count;         /* bonded lanes */
    int file_index;    /* index in the file's links[] (-1 if made by a template) */
} CsLink;

/**
 * CsRoute:
 * The deterministic path between two GPUs: shortest in hops, widest bottleneck on ties, then
 * lowest device indices.
 */
typedef struct {
    int n_links;            /* hops; 0 from a GPU to itself */
    const int *links;       /* link indices, in order */
    double alpha_s;         /* s: sum of the links' alphas */
    double bw_Bps;          /* bytes/s: bottleneck bandwidth */
    CsLinkClass link_class; /* slowest class crossed (NET > PCI > NVLINK) */
    /* 0 for a route between two GPUs. The engine's multicast flows (engine.c) set it: their
     * last n_branches links are the switch's copies out, each fed by the links before them
     * and crossed side by side, not one after another. */
    int n_branches;
} CsRoute;

typedef struct _CsTopo CsTopo;

/* Loads @name_or_path: a path to a JSON file, or the name of a shipped topology looked up in
 * $COLLSIM_TOPO_PATH, the build's topologies/ and the installed data directory.
 * Returns: (transfer full) (nullable): the topology, or NULL with @error set to one line that
 * names the file, the JSON path and what is wrong. */
CsTopo *cs_topo_load(const char *name_or_path, GError **error);
CsTopo *cs_topo_load_file(const char *path, GError **error);
/* @origin names the source in messages. */
CsTopo *cs_topo_load_data(const char *json, const char *origin, GError **error);

/* ---- What-ifs: edits of the JSON before it is loaded (topo_edit.c) ---- */

/* Loads @name_or_path as cs_topo_load() does, after setting each of @edits (nullable,
 * NULL-terminated "PATH=VALUE" strings, in order) in its JSON document: PATH is object keys
 * separated by dots, array elements as [i] or .i ("network.nic_bandwidth", "links[3].alpha");
 * VALUE replaces the value there or adds the key. The loader then checks the result as it
 * checks a file. The topology's name gets " [EDIT, EDIT...]". Errors caused by an edit are
 * CS_TOPO_ERROR_EDIT, "EDIT: what is wrong" (an unknown path, a path into a string or number,
 * or what the loader found wrong once it was set); an error the file has without any edit is
 * reported as cs_topo_load() reports it. Returns: (transfer full) (nullable). */
CsTopo *cs_topo_load_edited(const char *name_or_path, char **edits, GError **error);
/* The single edits @edit stands for: "PATH=V1,V2" is "PATH=V1" and "PATH=V2" (a comma inside
 * brackets, braces or quotes does not split). Checks PATH's syntax and that no value is empty.
 * Returns: (transfer full) (nullable): NULL-terminated, or NULL with CS_TOPO_ERROR_EDIT. */
char **cs_topo_edit_split(const char *edit, GError **error);

CsTopo *cs_topo_ref(CsTopo *topo);
void cs_topo_unref(CsTopo *topo);

/* Where shipped topologies are searched, in order (transfer full, NULL-terminated). */
char **cs_topo_search_dirs(void);
/* Names of every shipped topology found (transfer full, sorted, NULL-terminated). */
char **cs_topo_list_shipped(void);

const char *cs_topo_name(const CsTopo *topo);
const char *cs_topo_description(const CsTopo *topo);
const char *cs_topo_path(const CsTopo *topo); /* NULL when loaded from data */

int cs_topo_n_devices(const CsTopo *topo);
const CsDevice *cs_topo_device(const CsTopo *topo, int index);
int cs_topo_find_device(const CsTopo *topo, const char *name); /* -1 if absent */
int cs_topo_n_links(const CsTopo *topo);
const CsLink *cs_topo_link(const CsTopo *topo, int index);

/* Ranks are GPUs in rank order (node-major unless the file maps them). */
int cs_topo_n_ranks(const CsTopo *topo);
int cs_topo_rank_device(const CsTopo *topo, int rank);
int cs_topo_rank_node(const CsTopo *topo, int rank);
int cs_topo_rank_island(const CsTopo *topo, int rank);
int cs_topo_n_nodes(const CsTopo *topo);
/* Ranks of the largest node; every node has the same count in templates. */
int cs_topo_ranks_per_node(const CsTopo *topo);
/* The GPU spec of @rank. */
const CsGpuSpec *cs_topo_rank_gpu(const CsTopo *topo, int rank);

/* A copy of @topo whose rank r is @topo's rank @ranks[r] (distinct), r < @n_ranks: the GPUs a
 * smaller run used, routes recomputed (topo_subset.c). (transfer full) */
CsTopo *cs_topo_subset(const CsTopo *topo, const int *ranks, int n_ranks);

/* Route between two ranks on channel 0 (transfer none, valid as long as @topo). */
const CsRoute *cs_topo_route(const CsTopo *topo, int src_rank, int dst_rank);
/* The route channel @channel's connection between two ranks takes: across nodes, through the
 * NICs NCCL assigns that channel at either end (transfer none, valid as long as @topo). Routes
 * are found when first asked and kept; thread-safe. */
const CsRoute *cs_topo_route_channel(const CsTopo *topo, int src_rank, int dst_rank, int channel);

/* The hops and bottleneck bandwidth of cs_topo_route() from @src_rank to each of @dst_ranks
 * inside its node, from one search, keeping no route; FALSE when one is elsewhere. */
gboolean cs_topo_node_route_costs(const CsTopo *topo, int src_rank, const int *dst_ranks, int n,
                                  int *hops, double *bw_Bps);

/* The NICs of a rank's channels, listed. */
#define CS_TOPO_MAX_RANK_NICS 16

/**
 * CsRankNics:
 * How a rank reaches the network, as NCCL assigns NICs to channels (ncclTopoGetLocalNet).
 * A "NIC" is any device of the rank's node with a link out of it (on an NVL72 tray, the GPU).
 */
typedef struct {
    int n_local; /* NICs at the widest, then nearest path from the GPU (NCCL's localNets) */
    int used;    /* of those, how many its channels cycle over (NCCL's netsPerGpu) */
    int sharing; /* GPUs that count its first local NIC as local too (NCCL's localGpuCount) */
    int device[CS_TOPO_MAX_RANK_NICS]; /* the used NICs, channel 0 first (first 16) */
} CsRankNics;

CsRankNics cs_topo_rank_nics(const CsTopo *topo, int rank);

/* Whether ranks 0..@nranks-1 (at least 3) form a full mesh: one direct link between every
 * pair, as on an xGMI platform. */
gboolean cs_topo_full_mesh(const CsTopo *topo, int nranks);

/* The protocols the GPUs of ranks 0..@nranks-1 all pick from when none is forced, as bits
 * over LL, LL128, Simple (each rank's default_protos, 0 meaning all three; a CPU rank allows
 * Simple only): 0x7 when no rank restricts them, 0 when their lists share none. */
guint cs_topo_default_protos(const CsTopo *topo, int nranks);

/**
 * CsTransport:
 * The scale-out transport: what a network message costs beyond its links' alphas
 * (topo_transport.c).
 */
typedef struct {
    const char *kind;   /* "ib", "roce", "socket", "efa", "efa3"; NULL: no network */
    double latency_s;   /* s: per network message, measured end to end where published */
    double flush_s;     /* s: more per message with Simple (completion, GPUDirect flush) */
    double reported_s;  /* s: the latency its plugin reports to NCCL's tuning model */
    const char *source; /* where those figures come from */
} CsTransport;

const CsTransport *cs_topo_transport(const CsTopo *topo);

/* Whether ranks 0..@nranks-1 repeat under the shift by @period ranks on the routes of @pairs
 * ((source < @period, destination, NIC lane) triples): for each link, the link of its orbit
 * that carries its traffic in a replay of one period (topo_symmetry.c); NULL with @why set
 * (transfer full) when they do not. (transfer full) */
int *cs_topo_shift_orbits(const CsTopo *topo, int nranks, int period, const int *pairs, int n_pairs,
                          int n_charged, char **why);

/* NVLS: every GPU of a node reaches an NVSwitch with multicast reduction. */
gboolean cs_topo_has_nvls(const CsTopo *topo);
/* SHARP: the scale-out fabric declares in-network reduction. */
gboolean cs_topo_has_sharp(const CsTopo *topo);
/* ---- Prices (topo_price.c) ---- */

/**
 * CsTopoPrice:
 * The optional "price" block of a topology file: the user's quote (collsim ships none).
 * Capital terms (@node, @nic, @switch_port) are paid once and spread over @amortize_h;
 * hourly terms (@gpu_hour, @node_hour) are paid per hour. A term not given is < 0.
 */
typedef struct {
    double node;        /* per node bought; < 0: not given */
    double nic;         /* per NIC bought */
    double switch_port; /* per switch port bought (cs_topo_switch_ports()) */
    double gpu_hour;    /* per GPU-hour */
    double node_hour;   /* per node-hour */
    double amortize_h;  /* h: straight-line amortization period; 0: not given */
    char *currency;     /* nullable: "USD", free text */
    char *source;       /* nullable: where the quote comes from */
} CsTopoPrice;

/* The topology's price block, a template's own or else its node file's (transfer none,
 * nullable: none). */
const CsTopoPrice *cs_topo_price(const CsTopo *topo);
/* The NIC devices of the nodes marked in @on_node (cs_topo_n_nodes() entries). */
int cs_topo_count_nics(const CsTopo *topo, const gboolean *on_node);
/* The ports of the topology's network switches (kind "switch"; NVSwitches and PCIe switches
 * are part of their node): at each switch, each link's raw bandwidth in ports of the fastest
 * lane any switch link has (@port_Bps, nullable; 0 without switches), rounded up per link, a
 * duplex link counted once at each switch end. */
gint64 cs_topo_switch_ports(const CsTopo *topo, double *port_Bps);

/* Aggregate bandwidth out of one GPU over its links of @link_class, bytes/s (computed on first
 * use). */
double cs_topo_injection_bw(const CsTopo *topo, int rank, CsLinkClass link_class);
/**
 * CsNetPath:
 * What binds a rank's traffic out of its node: the NICs its channels use (NCCL's netsPerGpu),
 * each NIC's port shared by the GPUs that count it as local (NCCL's localGpuCount), and the
 * links in front of the NICs (PCIe). Traffic is spread evenly over the used NICs, as NCCL's
 * channels are, so a link crossed by k of n channels carries k/n of it.
 */
typedef struct {
    int used;         /* NICs its channels use */
    int sharing;      /* GPUs of its node that count its first NIC as local */
    int nic;          /* device: channel 0's NIC */
    int port_link;    /* link: channel 0's NIC port, the first network link */
    double port_Bps;  /* bytes/s: one NIC port */
    double ports_Bps; /* bytes/s: the used NICs' ports, each divided by its sharers */
    int front_link;   /* link: the narrowest link before a NIC port (bound on the spread
                         traffic), -1 when none is narrower than the ports */
    double front_Bps; /* bytes/s: what that link lets through (its rate x n / k) */
    double rate_Bps;  /* bytes/s: min(ports, front) */
} CsNetPath;

/* Fills @out for @rank's way out of its node over the network; FALSE when its node has none
 * (one node, or links out that are not network links). */
gboolean cs_topo_net_path(const CsTopo *topo, int rank, CsNetPath *out);

/**
 * CsFabricTier:
 * One tier of the switches outside the nodes, over network links: tier 1 holds those linked
 * to a node's device, tier t + 1 those linked to tier t and not nearer. Per switch, "down" is the
 * bandwidth into it from the tier below (or the nodes), "up" the bandwidth out of it to the tier
 * above.
 */
typedef struct {
    int tier;         /* 1, 2, ... */
    int n_switches;   /* switches in the tier */
    int example;      /* device: the tier's first switch */
    int n_uplinked;   /* of them, those with links up */
    double ratio_min; /* down / up over the switches with links up (oversubscription) */
    double ratio_max;
    double down_Bps; /* bytes/s: the example switch's down bandwidth */
    double up_Bps;   /* bytes/s: its up bandwidth (0 in the top tier) */
} CsFabricTier;

/* Each device's tier: 0 inside a node, t for a switch of tier t (as CsFabricTier counts
 * them), -1 for a device outside the nodes that no network link reaches (an NVL72 rack's
 * NVLink switch); @n_tiers (nullable) gets the top tier. (transfer full): one per device. */
int *cs_topo_device_tiers(const CsTopo *topo, int *n_tiers);
/* The tiers of the fabric, nearest the nodes first. (transfer full): an array of CsFabricTier,
 * empty when there is no switch outside the nodes. */
GArray *cs_topo_fabric_tiers(const CsTopo *topo);

/* Bisection bandwidth between the two halves of the ranks (min cut, bytes/s, one direction). */
double cs_topo_bisection_bw(const CsTopo *topo);

/* A copy of @topo with every link of @link_kind given new alpha / bandwidth per lane
 * (a negative value keeps the old one), and every GPU given @gpu when non-NULL.
 * Used by calibrate. (transfer full) */
CsTopo *cs_topo_copy_with(const CsTopo *topo, CsLinkKind link_kind, double alpha_s,
                          double lane_bw_Bps, const CsGpuSpec *gpu);

/**
 * CsTopoAdjust:
 * Scale factors and overrides applied by cs_topo_adjust() (calibrate's knobs). Scales keep the
 * differences between links of one kind (a Gen3 and a Gen5 PCIe link stay apart).
 */
typedef struct {
    double link_alpha_scale[CS_N_LINK_KINDS];   /* 1 = unchanged */
    double link_bw_scale[CS_N_LINK_KINDS];      /* 1 = unchanged; scales bw_Bps only */
    double hop_latency_s[3][CS_N_LINK_CLASSES]; /* s, per CsProto; < 0 = unchanged */
    double launch_scale;                        /* 1 = unchanged */
    double step_overhead_scale;                 /* 1 = unchanged */
    double reduce_bw_scale;                     /* 1 = unchanged */
    double copy_bw_scale;                       /* 1 = unchanged */
} CsTopoAdjust;

/* An adjustment that changes nothing. */
void cs_topo_adjust_init(CsTopoAdjust *adjust);
/* A copy of @topo with @adjust applied to every link, GPU and protocol override.
 * (transfer full) */
CsTopo *cs_topo_adjust(const CsTopo *topo, const CsTopoAdjust *adjust);

/* The per-hop latency of protocol @proto (a CsProto) on @link_class that the file overrides
 * in its "protocols" object (calibrated topologies), or a negative value when it does not. */
double cs_topo_hop_latency_override(const CsTopo *topo, int proto, CsLinkClass link_class);

/* @topo as an explicit-graph JSON document (templates expanded, calibrated values kept) that
 * cs_topo_load_data() reads back. (transfer full) */
char *cs_topo_to_json(const CsTopo *topo);

const char *cs_device_kind_name(CsDeviceKind kind);
const char *cs_link_kind_name(CsLinkKind kind);
CsLinkClass cs_link_kind_class(CsLinkKind kind);
const char *cs_link_class_name(CsLinkClass link_class);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(CsTopo, cs_topo_unref)

G_END_DECLS
