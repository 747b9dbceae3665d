// SPDX-License-Identifier: MIT
/* A prediction packed for another rank of a study (cs_parallel_for_ranks()) and read back
 * there: its plain fields, its algorithms by name. */
#include "predict/predict.h"

#include <string.h>

#include "algos/registry.h"

static void
pack_algo(GByteArray *out, const CsAlgo *algo)
{
    cs_pack_string(out, algo != NULL ? algo->name : NULL);
}

/* The registry's algorithm of the packed name (every rank has the same registry). */
static const CsAlgo *
unpack_algo(CsUnpack *in)
{
    g_autofree char *name = cs_unpack_string(in);
    if (name == NULL)
        return NULL;
    const CsAlgo *algo = cs_algo_lookup(name, NULL);
    g_assert(algo != NULL);
    return algo;
}

/**
 * cs_prediction_pack:
 * Every field of CsPrediction but the result's rank_finish (NULL in a prediction); a field
 * added to CsPrediction or CsResult is added here and in cs_prediction_unpack().
 */
void
cs_prediction_pack(const CsPrediction *pred, GByteArray *out)
{
    pack_algo(out, pred->algo);
    cs_pack_int(out, pred->proto);
    cs_pack_int(out, pred->n_channels);
    cs_pack_int(out, pred->peer_channels);
    cs_pack_int(out, pred->size.size_bytes);
    cs_pack_int(out, pred->size.count);
    cs_pack_int(out, pred->size.block_bytes);
    cs_pack_int(out, pred->size.send_bytes);
    cs_pack_int(out, pred->size.recv_bytes);
    const CsResult *r = &pred->result;
    g_assert(r->rank_finish == NULL);
    cs_pack_int(out, r->time);
    cs_pack_int(out, r->alpha);
    cs_pack_int(out, r->beta);
    cs_pack_int(out, r->gamma);
    cs_pack_int(out, r->overhead);
    cs_pack_int(out, r->n_events);
    cs_pack_int(out, r->n_transfers);
    cs_pack_int(out, r->bytes_moved);
    cs_pack_int(out, r->n_ranks);
    cs_pack_double(out, pred->time_us);
    cs_pack_double(out, pred->algbw_GBps);
    cs_pack_double(out, pred->busbw_GBps);
    cs_pack_int(out, pred->extrapolated);
    cs_pack_int(out, pred->nccl_picked);
    cs_pack_int(out, pred->n_unsimulated);
    pack_algo(out, pred->unsimulated_algo);
    cs_pack_int(out, pred->unsimulated_proto);
    cs_pack_int(out, pred->replayed_ranks);
    cs_pack_int(out, pred->asymmetric);
    cs_pack_int(out, pred->bracketed);
    cs_pack_double(out, pred->bracket_low_us);
}

void
cs_prediction_unpack(CsUnpack *in, CsPrediction *pred)
{
    memset(pred, 0, sizeof(*pred));
    pred->algo = unpack_algo(in);
    pred->proto = (CsProto)cs_unpack_int(in);
    pred->n_channels = (int)cs_unpack_int(in);
    pred->peer_channels = (int)cs_unpack_int(in);
    pred->size.size_bytes = cs_unpack_int(in);
    pred->size.count = cs_unpack_int(in);
    pred->size.block_bytes = cs_unpack_int(in);
    pred->size.send_bytes = cs_unpack_int(in);
    pred->size.recv_bytes = cs_unpack_int(in);
    CsResult *r = &pred->result;
    r->time = cs_unpack_int(in);
    r->alpha = cs_unpack_int(in);
    r->beta = cs_unpack_int(in);
    r->gamma = cs_unpack_int(in);
    r->overhead = cs_unpack_int(in);
    r->n_events = cs_unpack_int(in);
    r->n_transfers = cs_unpack_int(in);
    r->bytes_moved = cs_unpack_int(in);
    r->n_ranks = (int)cs_unpack_int(in);
    pred->time_us = cs_unpack_double(in);
    pred->algbw_GBps = cs_unpack_double(in);
    pred->busbw_GBps = cs_unpack_double(in);
    pred->extrapolated = (gboolean)cs_unpack_int(in);
    pred->nccl_picked = (gboolean)cs_unpack_int(in);
    pred->n_unsimulated = (int)cs_unpack_int(in);
    pred->unsimulated_algo = unpack_algo(in);
    pred->unsimulated_proto = (CsProto)cs_unpack_int(in);
    pred->replayed_ranks = (int)cs_unpack_int(in);
    pred->asymmetric = (gboolean)cs_unpack_int(in);
    pred->bracketed = (gboolean)cs_unpack_int(in);
    pred->bracket_low_us = cs_unpack_double(in);
}
