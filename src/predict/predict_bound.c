// SPDX-License-Identifier: MIT
/* A time one point cannot beat, known without building its schedule
 * (cs_predict_lower_bound()): cs_predict_best() leaves out the candidates it rules out. */
#include "predict/predict-private.h"

#include <math.h>

CsTime
cs_predict_lower_bound(const CsTopo *topo, CsOp op, gint64 size_bytes, const CsAlgo *algo,
                       CsProto proto, const CsPredictOptions *options)
{
    CsPredictOptions defaults;
    CsAlgoArgs args;
    CsAlgoBound bound;

    g_return_val_if_fail(topo != NULL && algo != NULL, 0);
    if (algo->bound == NULL)
        return 0;
    if (options == NULL) {
        cs_predict_options_init(&defaults);
        options = &defaults;
    }
    const int nranks = options->nranks > 0 ? options->nranks : cs_topo_n_ranks(topo);
    if (nranks > cs_topo_n_ranks(topo) || size_bytes < 0 || size_bytes > CS_PREDICT_MAX_BYTES)
        return 0;
    cs_predict_point_args(topo, op, size_bytes, algo, proto, options, nranks, &args);
    if (!algo->bound(&args, &bound) || (bound.chain <= 0 && bound.bytes_sent <= 0))
        return 0;

    /* Every rank on a device of its own, so that every message crosses at least one link;
     * what the devices can send out at once, over all their links. */
    const int n_devices = cs_topo_n_devices(topo);
    g_autofree double *egress_Bps = g_new0(double, n_devices);
    g_autofree gboolean *taken = g_new0(gboolean, n_devices);
    double min_alpha_s = G_MAXDOUBLE;
    for (int l = 0; l < cs_topo_n_links(topo); l++) {
        const CsLink *link = cs_topo_link(topo, l);
        egress_Bps[link->src] += link->bw_Bps;
        min_alpha_s = MIN(min_alpha_s, link->alpha_s);
    }
    double ranks_egress_Bps = 0.0;
    for (int r = 0; r < nranks; r++) {
        const int d = cs_topo_rank_device(topo, r);
        if (taken[d])
            return 0;
        taken[d] = TRUE;
        ranks_egress_Bps += egress_Bps[d];
    }
    if (min_alpha_s == G_MAXDOUBLE || ranks_egress_Bps <= 0.0)
        return 0;

    /* A message arrives a route's alpha plus the protocol's hop latency on its class after it
     * left (engine.c, setup_costs), and LL and LL128 put only part of a line on the wire. */
    const gboolean textbook = options->engine.textbook;
    const CsProtoInfo *pi = cs_proto_info(proto);
    double min_hop_s = G_MAXDOUBLE;
    for (int k = 0; k < CS_N_LINK_CLASSES; k++) {
        const double own = cs_topo_hop_latency_override(topo, proto, (CsLinkClass)k);
        min_hop_s = MIN(min_hop_s, own >= 0 ? own : pi->hop_latency_s[k]);
    }
    if (textbook)
        min_hop_s = 0.0;
    const double data_fraction = textbook ? 1.0 : pi->data_fraction;
    const double latency_s = (double)bound.chain * (MAX(min_alpha_s, 0.0) + MAX(min_hop_s, 0.0));
    /* Less a ten-thousandth: the network model rounds each flow's end to a picosecond. */
    const double bandwidth_s
        = (double)bound.bytes_sent / data_fraction / ranks_egress_Bps * (1.0 - 1e-4);
    const double ps = floor(MAX(latency_s, bandwidth_s) * CS_TIME_PS_PER_S);
    /* The engine rounds each hop's latency to a picosecond: allow one per hop. */
    const double slack = (double)bound.chain + 1.0;
    /* A bound past the clock's range (8 TiB on 1 MB/s links) saturates: converting it to
     * CsTime would be undefined (clang's -fsanitize=float-cast-overflow caught it). */
    if (ps - slack >= (double)G_MAXINT64)
        return G_MAXINT64;
    return ps > slack ? (CsTime)(ps - slack) : 0;
}
