// SPDX-License-Identifier: MIT
/* NCCL's own analytical cost model (NVIDIA/nccl src/graph/tuning.cc), with one constant set per
 * NCCL release, so collsim can say what NCCL would pick for a size and how far that choice is
 * from the engine's best ("why did NCCL pick tree here, and was it right?").
 * nccl_constants.c holds the constant sets, nccl_system.c the system from a topology,
 * nccl_names.c the names and NCCL_ALGO/NCCL_PROTO lists, nccl.c the model and its pick. */
#pragma once

#include <glib.h>

#include "models/protocol.h"
#include "base/op.h"
#include "topo/topo.h"

G_BEGIN_DECLS

#define CS_NCCL_ERROR (cs_nccl_error_quark())
GQuark cs_nccl_error_quark(void);

typedef enum {
    CS_NCCL_ERROR_VERSION,     /* no constant set for that NCCL version */
    CS_NCCL_ERROR_SPEC,        /* a model spec that is not "nccl" or "nccl:VERSION" */
    CS_NCCL_ERROR_UNSUPPORTED, /* NCCL has no model for that collective/algorithm/protocol */
} CsNcclError;

/**
 * CsNcclAlgo:
 * NCCL's algorithms, in NCCL's own order (NCCL_ALGO_TREE = 0 ... NCCL_ALGO_PAT = 6): the
 * indices of a tuner plugin's cost table.
 */
typedef enum {
    CS_NCCL_ALGO_TREE,
    CS_NCCL_ALGO_RING,
    CS_NCCL_ALGO_COLLNET_DIRECT,
    CS_NCCL_ALGO_COLLNET_CHAIN,
    CS_NCCL_ALGO_NVLS,
    CS_NCCL_ALGO_NVLS_TREE,
    CS_NCCL_ALGO_PAT,
    CS_NCCL_N_ALGOS
} CsNcclAlgo;

/**
 * CsNcclFunc:
 * The collectives NCCL's cost model covers, in ncclFunc_t order (ncclFuncBroadcast = 0 ...
 * ncclFuncAllReduce = 4). Scatter, gather and all-to-all are point-to-point in NCCL: no model.
 */
typedef enum {
    CS_NCCL_FUNC_BROADCAST,
    CS_NCCL_FUNC_REDUCE,
    CS_NCCL_FUNC_ALL_GATHER,
    CS_NCCL_FUNC_REDUCE_SCATTER,
    CS_NCCL_FUNC_ALL_REDUCE,
    CS_NCCL_N_FUNCS
} CsNcclFunc;

/* NCCL's hardware link classes for latencies (NCCL_HW_NVLINK, NCCL_HW_PCI, NCCL_HW_NET). */
typedef enum { CS_NCCL_HW_NVLINK, CS_NCCL_HW_PCI, CS_NCCL_HW_NET, CS_NCCL_N_HW } CsNcclHw;

/* GPU generations NCCL's tables are indexed by (NCCL_VOLTA_COMPCAP_IDX ...). */
typedef enum {
    CS_NCCL_ARCH_VOLTA,
    CS_NCCL_ARCH_AMPERE,
    CS_NCCL_ARCH_HOPPER,
    CS_NCCL_ARCH_BLACKWELL,
    CS_NCCL_N_ARCHS
} CsNcclArch;

/* Which release's formulas apply where the formulas themselves changed, not only constants. */
typedef enum {
    CS_NCCL_FORMULA_2_19,
    CS_NCCL_FORMULA_2_28,
    CS_NCCL_FORMULA_RCCL_2_21, /* RCCL's own model (ROCm/rccl src/graph/tuning.cc, 2.21.5) */
    CS_NCCL_FORMULA_RCCL_2_26, /* RCCL 2.26: gfx942/gfx950 rules, llProtoRanges */
} CsNcclFormula;

/* AMD GPU architectures RCCL's rules name (IsArchMatch on the gcn name); NONE on NVIDIA. */
typedef enum {
    CS_NCCL_AMD_NONE,
    CS_NCCL_AMD_GFX90A, /* MI210, MI250(X) */
    CS_NCCL_AMD_GFX942, /* MI300X, MI300A, MI325X */
    CS_NCCL_AMD_GFX950, /* MI350X, MI355X */
    CS_NCCL_AMD_OTHER,  /* an AMD GPU of another architecture */
} CsNcclAmdArch;

/* RCCL's rcclTuningModel[] entries (tuning_model_0 .. _5 in 2.21.5, .. _6 in 2.26). */
#define CS_RCCL_N_TUNING_MODELS 7
#define CS_RCCL_N_CORRECTION 27

/**
 * CsRcclTuningModel:
 * One entry of RCCL's rcclTuningModel[] (struct tuningModel): per-hop latencies (us), the
 * ratio the bus bandwidth is scaled by (index 0: 2 nodes or fewer, 1: more), and the tree and
 * ring correction factors per protocol and log2(nBytes / 64). Plain data.
 */
typedef struct {
    double hw_lat_us[3][CS_NCCL_N_ALGOS][CS_N_PROTOS];
    double bw_ratio[2][CS_NCCL_N_ALGOS][CS_N_PROTOS];
    double tree_correction[CS_N_PROTOS][CS_RCCL_N_CORRECTION];
    double ring_correction[CS_N_PROTOS][CS_RCCL_N_CORRECTION];
    /* llProtoRanges (2.26): per RCCL tunable collective (reduce-scatter, all-gather,
     * all-reduce), for LL and LL128, {min, max} size per rank in bytes; 0 0 = undefined */
    gint64 ll_ranges[3][2][2];
    gboolean present; /* transcribed; FALSE for entries collsim never selects */
} CsRcclTuningModel;

#define CS_NCCL_N_TREE_CORRECTION 24
/* NCCL_MAX_NVLS_ARITY: NVLS heads (graph channels) at most. */
#define CS_NCCL_MAX_NVLS_ARITY 32
/* NCCL_MAX_DIRECT_ARITY (device.h): CollNet Direct's heads are at most this + 1. */
#define CS_NCCL_MAX_DIRECT_ARITY 7
#define CS_NCCL_N_SCALES 3 /* 1 node, 2 nodes, 4+ nodes */

/**
 * CsNcclConstants:
 * One release's constants (tuning.cc's baseLat/hwLat/llMaxBws/perChMax* tables, search.cc's
 * speed arrays and channel limits). Latencies in us, bandwidths in GB/s. Plain data.
 */
typedef struct {
    const char *library;   /* "NCCL" or "RCCL" */
    const char *version;   /* "2.28" */
    const char *reference; /* provenance, one line */
    CsNcclFormula formula;
    double base_lat_us[CS_NCCL_N_ALGOS][CS_N_PROTOS];
    double hw_lat_us[CS_NCCL_N_HW][CS_NCCL_N_ALGOS][CS_N_PROTOS];
    double ll_max_bw[CS_NCCL_N_ARCHS][CS_NCCL_N_SCALES]; /* GB/s, whole ring/tree */
    double per_ch_max_ring_ll128_bw[CS_NCCL_N_ARCHS][CS_NCCL_N_SCALES];
    double per_ch_max_tree_ll128_bw[CS_NCCL_N_ARCHS][CS_NCCL_N_SCALES];
    double per_ch_max_tree_bw[CS_NCCL_N_ARCHS][CS_NCCL_N_SCALES];
    double per_ch_max_nvls_tree_bw[CS_NCCL_N_ARCHS][CS_NCCL_N_SCALES];
    double nvls_efficiency[CS_NCCL_N_ARCHS]; /* 2.28 only; 0 = not used */
    int n_tree_correction;                   /* entries used below */
    double tree_correction[CS_N_PROTOS][CS_NCCL_N_TREE_CORRECTION];
    int n_archs;           /* rows in the per-arch tables */
    int max_ring_channels; /* search limit: MAXCHANNELS / 2 */
    /* NVLS CTAs (nvlsChannels): Hopper and older; Blackwell on one NVLink domain; Blackwell
     * across domains */
    int nvls_channels[3];
    /* RCCL only (formulas CS_NCCL_FORMULA_RCCL_*): rcclTuningModel[], by index */
    const CsRcclTuningModel *rccl_models;
} CsNcclConstants;

/**
 * CsNcclGraph:
 * What NCCL's topology search found for one algorithm (struct ncclTopoGraph): the inputs of
 * the tuning model. Bandwidths are per channel, GB/s.
 */
typedef struct {
    int n_channels;          /* 0 = the algorithm has no graph here */
    double bw_intra_GBps;    /* per channel, inside a node */
    double bw_inter_GBps;    /* per channel, across nodes */
    CsNcclHw hw_intra;       /* CS_NCCL_HW_NVLINK or CS_NCCL_HW_PCI (graph typeIntra) */
    gboolean ll128;          /* LL128 enabled on this graph (NVLink inside, NIC close) */
    gboolean same_channels;  /* every channel takes the same path (ring bcast/reduce) */
    gboolean tree_pattern;   /* NCCL_TOPO_PATTERN_TREE, not balanced: tree bw x 0.85 */
    double latency_inter_us; /* graph latencyInter (network latency NCCL adds) */
} CsNcclGraph;

/**
 * CsNcclSystem:
 * The communicator NCCL tunes for. Built from a topology by cs_nccl_system_from_topo(), or by
 * hand in tests. Plain data.
 */
typedef struct {
    int n_ranks;
    int n_nodes;
    CsNcclArch arch;
    gboolean arch_guessed;  /* the GPU model was not recognised: @arch is an assumption */
    gboolean cpu_amd;       /* AMD hosts: llMaxBws row and 2 us network overhead */
    gboolean collnet;       /* CollNet (SHARP) available */
    gboolean nvswitch;      /* NVSwitches in the node (CollNet Direct needs them) */
    int n_nics;             /* NICs per node (CollNet heads) */
    CsNcclAmdArch amd_arch; /* RCCL's arch rules; CS_NCCL_AMD_NONE on NVIDIA GPUs */
    int rccl_tuning;        /* RCCL: comm->topo->tuning, the rcclTuningModel[] index */
    CsNcclGraph graphs[CS_NCCL_N_ALGOS];
} CsNcclSystem;

/**
 * CsNcclPrediction:
 * NCCL's model for one size: the chosen (or forced) algorithm/protocol and its time.
 */
typedef struct {
    CsNcclAlgo algo;
    CsProto proto;
    int n_channels;        /* the algorithm's graph channels */
    double time_us;        /* lat + nBytes / (1000 * bw) */
    double latency_us;     /* the latency term */
    double bandwidth_GBps; /* algorithm bandwidth used, after the tree correction */
} CsNcclPrediction;

typedef struct _CsNcclModel CsNcclModel;

/* ---- Constant sets ---- */

/* Every known constant set, oldest first (transfer none, NULL-terminated). */
const CsNcclConstants *const *cs_nccl_constants_all(void);
/* "2.28", "2.28.9" or NULL (the newest). NULL with CS_NCCL_ERROR_VERSION listing known ones. */
const CsNcclConstants *cs_nccl_constants_lookup(const char *version, GError **error);
/* The set nearest the release @version ("2.26.2" -> 2.28), the older on a tie; NULL or an
 * unreadable version: the newest. Never NULL. */
const CsNcclConstants *cs_nccl_constants_nearest(const char *version);
/* RCCL's constant sets (RCCL's own tuning model), oldest first (transfer none,
 * NULL-terminated). */
const CsNcclConstants *const *cs_rccl_constants_all(void);
/* "2.21" or "2.21.5" or NULL (the newest). NULL with CS_NCCL_ERROR_VERSION listing known ones. */
const CsNcclConstants *cs_rccl_constants_lookup(const char *version, GError **error);
/* The RCCL set nearest the release @version ("2.27.7" -> 2.26), the older on a tie; NULL or
 * an unreadable version: the newest. Never NULL. */
const CsNcclConstants *cs_rccl_constants_nearest(const char *version);
/* Parses a model spec "nccl", "nccl:VERSION", "rccl" or "rccl:VERSION". */
gboolean cs_nccl_parse_spec(const char *spec, const CsNcclConstants **constants, GError **error);

/* ---- Systems ---- */

/* Zeroes @system and sets @n_ranks, @n_nodes and @arch; graphs are left empty. */
void cs_nccl_system_init(CsNcclSystem *system, int n_ranks, int n_nodes, CsNcclArch arch);
/* NCCL's nodes among some ranks of @topo (nccl_system.c): topology nodes, those an NVLink
 * clique joins as one from 2.21.5 on. @ranks NULL: the first @nranks; @constants NULL: the
 * newest release; @node (nullable): each rank's node. Returns how many. */
int cs_nccl_nodes(const CsTopo *topo, int nranks, const int *ranks,
                  const CsNcclConstants *constants, int *node);
/* Emulates NCCL's topology search (search.cc) on the first @nranks ranks of @topo (0 = all):
 * NVLink bandwidth as NCCL assumes it per generation, the speed arrays, channel duplication.
 * An approximation of the search, documented in nccl_system.c. */
gboolean cs_nccl_system_from_topo(const CsTopo *topo, int nranks, const CsNcclConstants *constants,
                                  CsNcclSystem *system, GError **error);
/* The generation a GPU model string names ("H100 SXM5" -> Hopper); unknown -> Hopper with
 * *recognised FALSE. */
CsNcclArch cs_nccl_arch_from_model(const char *model, gboolean *recognised);
/* The CTAs NCCL runs NVLS and NVLSTree with (nvlsChannels) on @arch, for ranks on one NVLink
 * domain or on several. */
int cs_nccl_nvls_channels(const CsNcclConstants *constants, CsNcclArch arch,
                          gboolean several_domains);
const char *cs_nccl_arch_name(CsNcclArch arch);
/* The AMD architecture a GPU model string names ("Instinct MI300X" -> gfx942), or
 * CS_NCCL_AMD_NONE when it names no AMD GPU. */
CsNcclAmdArch cs_nccl_amd_arch_from_model(const char *model);
/* "gfx90a", "gfx942", "gfx950", "AMD (other)", or "" for none. */
const char *cs_nccl_amd_arch_name(CsNcclAmdArch arch);

/* ---- The model ---- */

/* Tunes the model for @system (ncclTopoTuneModel). Returns: (transfer full). */
CsNcclModel *cs_nccl_model_new(const CsNcclConstants *constants, const CsNcclSystem *system);
/* Whether @c is one of RCCL's own sets (rccl_constants.c) rather than NCCL's. */
static inline gboolean
cs_nccl_constants_rccl(const CsNcclConstants *c)
{
    return c->formula == CS_NCCL_FORMULA_RCCL_2_21 || c->formula == CS_NCCL_FORMULA_RCCL_2_26;
}

/* "nccl" or "rccl": the library model that picks by default on @topo's first @nranks ranks
 * (the one that knows its GPUs), NULL where neither does. */
const char *cs_nccl_default_spec(const CsTopo *topo, int nranks);
/* cs_nccl_parse_spec() + cs_nccl_system_from_topo() + cs_nccl_model_new().
 * Returns: (transfer full) (nullable). */
CsNcclModel *cs_nccl_model_new_for_topo(const CsTopo *topo, int nranks, const char *spec,
                                        GError **error);
void cs_nccl_model_free(CsNcclModel *model);

const CsNcclConstants *cs_nccl_model_constants(const CsNcclModel *model);
const CsNcclSystem *cs_nccl_model_system(const CsNcclModel *model);

/* The tuned tables: latency (us) and algorithm bandwidth (GB/s, 0 = unusable). */
double cs_nccl_model_latency_us(const CsNcclModel *model, CsNcclFunc func, CsNcclAlgo algo,
                                CsProto proto);
double cs_nccl_model_bandwidth_GBps(const CsNcclModel *model, CsNcclFunc func, CsNcclAlgo algo,
                                    CsProto proto);

/* NCCL's predicted time (ncclTopoGetAlgoTime, one op in the group) for @nbytes, NCCL's nBytes
 * (= nccl-tests' size column); -1 when the entry is unusable or @op has no NCCL model. */
double cs_nccl_model_time_us(const CsNcclModel *model, CsOp op, CsNcclAlgo algo, CsProto proto,
                             gint64 nbytes);
/* The cost table NCCL hands a tuner plugin, float[algo][proto], -1 = ignore. FALSE (table all
 * -1) when @op has no NCCL model. */
gboolean cs_nccl_model_cost_table(const CsNcclModel *model, CsOp op, gint64 nbytes,
                                  float table[CS_NCCL_N_ALGOS][CS_N_PROTOS]);
/* NCCL's pick: the first minimum of the cost table (algorithms, then protocols, in NCCL's
 * order). FALSE when nothing is usable or @op has no model. */
gboolean cs_nccl_model_pick(const CsNcclModel *model, CsOp op, gint64 nbytes,
                            CsNcclPrediction *out);
/* Every algorithm / protocol, as masks of 1 << CsNcclAlgo / 1 << CsProto. */
#define CS_NCCL_ALL_ALGOS ((1u << CS_NCCL_N_ALGOS) - 1)
#define CS_NCCL_ALL_PROTOS ((1u << CS_N_PROTOS) - 1)
/* NCCL's pick among the algorithms and protocols the masks allow (NCCL_ALGO / NCCL_PROTO as
 * lists or exclusions). FALSE when nothing allowed is usable or @op has no model. */
gboolean cs_nccl_model_pick_among(const CsNcclModel *model, CsOp op, gint64 nbytes, guint algo_mask,
                                  guint proto_mask, CsNcclPrediction *out);
/* One point for `collsim run --model nccl`: NCCL's pick, or the forced @algo (-1 = any) and
 * @proto (-1 = any) as NCCL_ALGO/NCCL_PROTO would force them. FALSE with
 * CS_NCCL_ERROR_UNSUPPORTED when nothing matching is usable. */
gboolean cs_nccl_model_predict(const CsNcclModel *model, CsOp op, gint64 nbytes, int algo,
                               int proto, CsNcclPrediction *out, GError **error);

/* ---- Names ---- */

/* The tuner CSV / JSON spelling: "tree", "ring", "collnet_direct", "collnet_chain", "nvls",
 * "nvls_tree", "pat". */
const char *cs_nccl_algo_name(CsNcclAlgo algo);
/* NCCL_ALGO's spelling: "Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree",
 * "PAT". */
const char *cs_nccl_algo_env_name(CsNcclAlgo algo);
/* Accepts either spelling (any case, '-' or '_'). */
gboolean cs_nccl_algo_from_name(const char *name, CsNcclAlgo *algo);
/* The collsim algorithm name of @algo ("ring", "tree", "collnet_direct", "collnet_chain",
 * "nvls", "nvls_tree", "pat"); no collsim algorithm has the name "pat" yet. */
const char *cs_nccl_algo_collsim_name(CsNcclAlgo algo);
/* The NCCL algorithm a collsim algorithm name is; FALSE for algorithms NCCL does not have
 * (mst, rhd, bruck, ...). */
gboolean cs_nccl_algo_from_collsim(const char *collsim_name, CsNcclAlgo *algo);
/* "ll", "ll128", "simple" (tuner CSV spelling). */
const char *cs_nccl_proto_name(CsProto proto);
/* An NCCL_ALGO / NCCL_PROTO value checked and in NCCL's spellings (see nccl_names.c). */
char *cs_nccl_env_list(const char *value, gboolean is_proto, GError **error);
/* What an NCCL_ALGO / NCCL_PROTO value allows collective @func (see nccl_names.c). */
guint cs_nccl_list_mask(const char *value, gboolean is_proto, int func);
/* The NCCL collective of @op, or -1 (scatter, gather, all-to-all). */
int cs_nccl_func_from_op(CsOp op);
/* "broadcast", "reduce", "allgather", "reducescatter", "allreduce". */
const char *cs_nccl_func_name(CsNcclFunc func);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(CsNcclModel, cs_nccl_model_free)

G_END_DECLS
