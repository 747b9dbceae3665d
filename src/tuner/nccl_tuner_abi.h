// SPDX-License-Identifier: MIT
/* NCCL's tuner-plugin ABI, versions 3, 4 and 5, declared from NCCL's documented layouts
 * (NVIDIA/nccl src/include/plugin/tuner/tuner_v3.h, tuner_v4.h, tuner_v5.h, nccl_tuner.h and
 * ext-tuner/example/nccl/common.h) so the plugin builds with a C compiler alone, no NCCL
 * headers. The names are ours; the layouts, enum values and calling conventions are NCCL's,
 * member for member. NCCL dlopen()s the plugin and looks up ncclTunerPlugin_v5, then _v4,
 * then _v3 (NCCL 2.28 / 2.23-2.27 / 2.22). */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* ncclResult_t (nccl.h). */
typedef enum {
    CS_NCCL_SUCCESS = 0,              /* ncclSuccess */
    CS_NCCL_UNHANDLED_CUDA_ERROR = 1, /* ncclUnhandledCudaError */
    CS_NCCL_SYSTEM_ERROR = 2,         /* ncclSystemError */
    CS_NCCL_INTERNAL_ERROR = 3,       /* ncclInternalError */
    CS_NCCL_INVALID_ARGUMENT = 4,     /* ncclInvalidArgument */
    CS_NCCL_INVALID_USAGE = 5,        /* ncclInvalidUsage */
    CS_NCCL_REMOTE_ERROR = 6,         /* ncclRemoteError */
    CS_NCCL_IN_PROGRESS = 7,          /* ncclInProgress */
} CsNcclResult;

/* ncclDebugLogLevel (common.h). */
typedef enum {
    CS_NCCL_LOG_NONE = 0,
    CS_NCCL_LOG_VERSION = 1,
    CS_NCCL_LOG_WARN = 2,
    CS_NCCL_LOG_INFO = 3,
    CS_NCCL_LOG_ABORT = 4,
    CS_NCCL_LOG_TRACE = 5,
} CsNcclLogLevel;

/* ncclDebugLogSubSys bit NCCL_TUNING (common.h): the subsystem tuner messages belong to. */
#define CS_NCCL_LOG_TUNING 64ul

/* ncclDebugLogger_t (common.h). */
typedef void (*CsNcclLogger)(CsNcclLogLevel level, unsigned long flags, const char *file, int line,
                             const char *fmt, ...);

/* ncclFunc_t: collective types passed to getCollInfo (ncclFuncBroadcast = 0 ...). */
typedef enum {
    CS_NCCL_COLL_BROADCAST = 0,
    CS_NCCL_COLL_REDUCE = 1,
    CS_NCCL_COLL_ALL_GATHER = 2,
    CS_NCCL_COLL_REDUCE_SCATTER = 3,
    CS_NCCL_COLL_ALL_REDUCE = 4,
    CS_NCCL_COLL_SEND_RECV = 5,
    CS_NCCL_COLL_SEND = 6,
    CS_NCCL_COLL_RECV = 7,
} CsNcclColl;

/* Cost-table indices (nccl_tuner.h): NCCL_ALGO_* and NCCL_PROTO_*. */
#define CS_NCCL_TUNER_ALGO_TREE 0
#define CS_NCCL_TUNER_ALGO_RING 1
#define CS_NCCL_TUNER_ALGO_COLLNET_DIRECT 2
#define CS_NCCL_TUNER_ALGO_COLLNET_CHAIN 3
#define CS_NCCL_TUNER_ALGO_NVLS 4
#define CS_NCCL_TUNER_ALGO_NVLS_TREE 5
#define CS_NCCL_TUNER_ALGO_PAT 6
#define CS_NCCL_TUNER_PROTO_LL 0
#define CS_NCCL_TUNER_PROTO_LL128 1
#define CS_NCCL_TUNER_PROTO_SIMPLE 2
/* NCCL_ALGO_PROTO_IGNORE: an entry NCCL cannot use; a plugin must leave it. */
#define CS_NCCL_TUNER_IGNORE (-1.0f)

/* The cost table is NCCL's float[numAlgo][numProto], passed as float ** (a cast of the 2-D
 * array, not an array of row pointers): entry (a, p) is ((float *) table)[a * numProto + p]. */

/* ncclTuner_v3_t (NCCL 2.22). */
typedef struct {
    const char *name;
    CsNcclResult (*init)(size_t n_ranks, size_t n_nodes, CsNcclLogger log_function, void **context);
    CsNcclResult (*get_coll_info)(void *context, CsNcclColl coll_type, size_t n_bytes,
                                  int num_pipe_ops, float **coll_cost_table, int num_algo,
                                  int num_proto, int *n_channels);
    CsNcclResult (*destroy)(void *context);
} CsNcclTunerV3;

/* ncclTuner_v4_t (NCCL 2.23-2.27): getCollInfo gains regBuff. */
typedef struct {
    const char *name;
    CsNcclResult (*init)(size_t n_ranks, size_t n_nodes, CsNcclLogger log_function, void **context);
    CsNcclResult (*get_coll_info)(void *context, CsNcclColl coll_type, size_t n_bytes,
                                  int num_pipe_ops, float **coll_cost_table, int num_algo,
                                  int num_proto, int reg_buff, int *n_channels);
    CsNcclResult (*destroy)(void *context);
} CsNcclTunerV4;

/* ncclNvlDomainInfo_v5_t. */
typedef struct {
    int n_nvl_domains;
    int min_ranks_per_nvl_domain;
    int max_ranks_per_nvl_domain;
} CsNcclNvlDomainInfoV5;

#define CS_NCCL_V5_N_ALGOS 7    /* NCCL_NUM_ALGORITHMS_V5 */
#define CS_NCCL_V5_N_PROTOS 3   /* NCCL_NUM_PROTOCOLS_V5 */
#define CS_NCCL_V5_N_HW 3       /* NCCL_NUM_HW_LINKS_V5 */
#define CS_NCCL_V5_N_COMPCAPS 4 /* NCCL_NUM_COMPCAPS_V5 */
#define CS_NCCL_V5_N_SCALES 3   /* NCCL_NUM_TUNING_SCALES_V5 */

/* ncclTunerConstants_v5_t: NCCL's own constants, handed to init so a plugin may adjust them. */
typedef struct {
    double base_latencies[CS_NCCL_V5_N_ALGOS][CS_NCCL_V5_N_PROTOS];
    double hw_latencies[CS_NCCL_V5_N_HW][CS_NCCL_V5_N_ALGOS][CS_NCCL_V5_N_PROTOS];
    double ll_max_bws[CS_NCCL_V5_N_COMPCAPS][CS_NCCL_V5_N_SCALES];
    double per_ch_max_ring_ll128_bws[CS_NCCL_V5_N_COMPCAPS][CS_NCCL_V5_N_SCALES];
    double per_ch_max_tree_ll128_bws[CS_NCCL_V5_N_COMPCAPS][CS_NCCL_V5_N_SCALES];
    double per_ch_max_tree_bws[CS_NCCL_V5_N_COMPCAPS][CS_NCCL_V5_N_SCALES];
    double per_ch_max_nvls_tree_bws[CS_NCCL_V5_N_COMPCAPS][CS_NCCL_V5_N_SCALES];
} CsNcclTunerConstantsV5;

/* ncclTuner_v5_t (NCCL 2.28): init takes a context out-parameter first, the communicator id,
 * NVLink domain information and NCCL's constants; destroy is called finalize. */
typedef struct {
    const char *name;
    CsNcclResult (*init)(void **context, uint64_t comm_id, size_t n_ranks, size_t n_nodes,
                         CsNcclLogger log_function, CsNcclNvlDomainInfoV5 *nvl_domain_info,
                         CsNcclTunerConstantsV5 *constants);
    CsNcclResult (*get_coll_info)(void *context, CsNcclColl coll_type, size_t n_bytes,
                                  int num_pipe_ops, float **coll_cost_table, int num_algo,
                                  int num_proto, int reg_buff, int *n_channels);
    CsNcclResult (*finalize)(void *context);
} CsNcclTunerV5;

/* The layouts NCCL expects on LP64 (x86-64, aarch64): a changed member would move these. */
_Static_assert(sizeof(CsNcclResult) == 4, "ncclResult_t is an int-sized enum");
_Static_assert(sizeof(CsNcclColl) == 4, "ncclFunc_t is an int-sized enum");
_Static_assert(sizeof(CsNcclTunerV3) == 4 * sizeof(void *), "ncclTuner_v3_t: 4 pointers");
_Static_assert(sizeof(CsNcclTunerV4) == 4 * sizeof(void *), "ncclTuner_v4_t: 4 pointers");
_Static_assert(sizeof(CsNcclTunerV5) == 4 * sizeof(void *), "ncclTuner_v5_t: 4 pointers");
_Static_assert(offsetof(CsNcclTunerV5, get_coll_info) == 2 * sizeof(void *),
               "ncclTuner_v5_t.getCollInfo is the third member");
_Static_assert(sizeof(CsNcclNvlDomainInfoV5) == 3 * sizeof(int), "three ints");
_Static_assert(sizeof(CsNcclTunerConstantsV5) == sizeof(double) * (7 * 3 + 3 * 7 * 3 + 5 * 4 * 3),
               "ncclTunerConstants_v5_t: seven double tables, no padding");

/* The symbols NCCL looks up (defined by the plugin). */
extern const CsNcclTunerV3 ncclTunerPlugin_v3;
extern const CsNcclTunerV4 ncclTunerPlugin_v4;
extern const CsNcclTunerV5 ncclTunerPlugin_v5;
