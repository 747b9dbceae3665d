// SPDX-License-Identifier: MIT
/* What the files of the prediction share (STYLE §2): the point cache's fields, which
 * point_cache.c makes and predict.c looks points and schedules up in; one point's arguments
 * and extension tolerance, which the best point's bound (predict_bound.c, predict_best.c)
 * follows; and NCCL's launch policy (predict_candidates.c, predict_channels.c,
 * predict_p2p.c) as one point and the best one ask it. */
#pragma once

#include "predict/predict.h"

G_BEGIN_DECLS

/* One lock guards the tables and counters, so that threads predicting points of one
 * topology (--jobs) share the cache; simulations run outside it. A point one thread is
 * simulating is pending: another thread that asks for it waits for the answer instead of
 * simulating it too (threads sweeping neighbouring sizes climb the same extension windows at
 * once). A simulation asks for no other point, so a thread that owns a pending point never
 * waits and the waits cannot form a cycle. */
struct _CsPointCache {
    GMutex lock;
    CsTopo *topo;          /* (nullable) the topology the points are for */
    CsTopo *structure;     /* (nullable) the first one bound: cached schedules are built on it */
    GHashTable *schedules; /* (nullable) schedule key -> CsSchedule */
    CsPointCache *schedule_owner; /* (nullable) the cache whose schedules this one uses */
    gsize schedule_steps;         /* steps of the schedules kept */
    GHashTable *points;           /* point key -> CsPrediction */
    GHashTable *periods;          /* period key -> the shortest period the machine repeats under */
    GHashTable *pending;          /* point key -> CsPendingPoint: being simulated by one thread */
    gint64 hits;
    gint64 misses;
};

/* A point in simulation: its owner broadcasts @done on the cache's lock when the answer is
 * in the points table (or the simulation failed: a waiter then simulates it itself). */
typedef struct {
    GCond done_cond;
    gboolean done;
    int refs; /* the owner and the waiters */
} CsPendingPoint;

/* ---- One point (predict.c) ---- */

/* Past the hard step limit a point is extended when its slopes agree within this share. */
#define PREDICT_LOOSE_TOLERANCE 0.05

/* The algorithm arguments of one point, as cs_predict_one() simulates it. */
void cs_predict_point_args(const CsTopo *topo, CsOp op, gint64 size_bytes, const CsAlgo *algo,
                           CsProto proto, const CsPredictOptions *options, int nranks,
                           CsAlgoArgs *args);

/* Errors that mean "this candidate does not apply", as opposed to a broken input. */
static inline gboolean
is_refusal(const GError *error)
{
    return g_error_matches(error, CS_SCHEDULE_ERROR, CS_SCHEDULE_ERROR_UNSUPPORTED)
           || g_error_matches(error, CS_ENGINE_ERROR, CS_ENGINE_ERROR_MISMATCH);
}

/* ---- NCCL's launch policy ---- */

/* Whether nccl-tests runs @op as grouped send/recv (scatter, gather, all-to-all, sendrecv). */
static inline gboolean
is_p2p_op(CsOp op)
{
    return op == CS_OP_SCATTER || op == CS_OP_GATHER || op == CS_OP_ALL_TO_ALL
           || op == CS_OP_SEND_RECV;
}

/* NCCL's plan for one grouped send/recv: the protocol each peer's message gets, the channels
 * it is striped over, all channels in use together and the pipeline step. */
typedef struct {
    CsProto proto;          /* LL or Simple */
    int channels;           /* in use at once: at most p2pnChannels */
    int per_peer;           /* channels each peer's message is striped over */
    gint64 chunk_bytes;     /* bytes: Simple's p2pChunkSize; 0 (the slot) for LL */
    gint64 net_chunk_bytes; /* bytes: a network message's smaller chunk; 0: chunk_bytes */
} P2pPlan;

/* NCCL's plan when @algo runs @op as grouped send/recv on GPU ranks; FALSE otherwise
 * (predict_p2p.c). */
gboolean cs_predict_p2p_plan(const CsTopo *topo, const CsAlgo *algo, CsOp op, CsProto proto,
                             gint64 size_bytes, int nranks, int release, P2pPlan *plan);

/* NCCL's collective channel count before small operations drop some (predict_channels.c). */
int cs_predict_coll_channels_max(const CsTopo *topo, int nranks);
/* The pipeline chunk NCCL's (RCCL's on AMD GPUs) collectives use for @size_bytes on
 * @n_channels channels of @nranks ranks of @topo where it differs from one slot, 0 elsewhere
 * (predict_channels.c). */
gint64 cs_predict_nccl_chunk_bytes(const CsTopo *topo, const CsAlgo *algo, CsOp op, CsProto proto,
                                   gint64 size_bytes, int nranks, int n_channels);

/* Whether the first @nranks ranks of @topo span more than one node, more than one NVLink
 * domain (predict_candidates.c). */
gboolean cs_predict_spans_nodes(const CsTopo *topo, int nranks);
gboolean cs_predict_spans_nvlink_domains(const CsTopo *topo, int nranks);
/* One node of 8 AMD GPUs on single xGMI links, as RCCL's rome_model_79, which enables MSCCL
 * (predict_channels.c). */
gboolean cs_predict_rccl_mesh8(const CsTopo *topo, int nranks);
/* Whether RCCL under @model runs MSCCL's all-pairs files there (predict_best.c). */
gboolean cs_predict_rccl_msccl_node(const CsTopo *topo, int nranks, const CsNcclModel *model,
                                    CsRedop redop);
/* Whether an nccl-tests run could carry @op with @proto on @algo (predict_candidates.c). */
gboolean cs_predict_proto_in_nccl_tests(const CsTopo *topo, const CsAlgo *algo, CsOp op,
                                        CsProto proto, gint64 size_bytes, int nranks, int release);
/* The protocols a run picks from when it forces none, bits over CsProto
 * (predict_candidates.c). */
guint cs_predict_unforced_protos(const CsTopo *topo, const CsPredictOptions *options);

G_END_DECLS
