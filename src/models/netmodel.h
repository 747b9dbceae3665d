// SPDX-License-Identifier: MIT
/* The network-model interface: how long a transfer's bytes occupy the links of its route.
 * The engine owns time and events; a model only answers "when does this flow's last byte
 * leave the source" (DESIGN §5, STYLE §3-§4). Models are registered in models/registry.c. */
#pragma once

#include <glib.h>

#include "topo/topo.h"
#include "base/units.h"

G_BEGIN_DECLS

/* A time that never comes: "no event pending" and "not known yet". */
#define CS_TIME_NEVER G_MAXINT64

/* Opaque per-run state of one model. */
typedef struct _CsNetState CsNetState;

/* Reported by CsNetModel.advance() for each flow whose last byte left its source at @t. */
typedef void (*CsNetDoneFunc)(gpointer user_data, gint32 flow, CsTime t);

/* Reported through CsNetModel.watch(): from @start until @end, @link carried @rate_Bps more
 * wire bytes per second, as the model accounts for it (a lane's reservation, a flow's fair
 * share between two of its rate changes). The pieces of one link never add up to more than
 * its bandwidth. */
typedef void (*CsNetLoadFunc)(gpointer user_data, int link, CsTime start, CsTime end,
                              double rate_Bps);

/**
 * CsNetModel:
 * @name:       CLI spelling (`--net-model reservation`).
 * @summary:    one line for --help.
 * @reference:  where the model comes from.
 * @create:     state for @topo with at most @max_flows flows in flight at once, flow ids in
 *              [0, @max_flows), flow f's route at most @flow_hops[f] links, and the flows'
 *              hops together at most G_MAXINT32 (transfer full). Per flow, not one maximum
 *              for all: a multicast leader's flow crosses a link per member (16,384 nodes
 *              under one SHARP tree) where every other flow crosses a few. With
 *              @whole_links every link is one resource at its full bandwidth (the textbook
 *              machine's B), also a bond of NVLinks that a channel otherwise drives one at a
 *              time.
 * @destroy:    frees the state.
 * @start:      a flow @flow of @wire_bytes enters @route at @now (calls come in
 *              non-decreasing @now), never faster than @cap_Bps (0: no cap of its own; the
 *              engine caps a flow at what one channel can drive). Returns the time its last byte
 * leaves the source when the model knows it at once (reservation), or CS_TIME_NEVER when it will
 * report it through @settle or @advance. *@first_out receives the time its first byte leaves
 * (later than @now when it queues behind other flows), by the time the end is reported.
 * @settle:     called once the engine has no event left at the instant of the flows started
 *              since the last call: calls @done for each of them, in the order they started,
 *              with the time its last byte leaves (reservation, whose flows of one instant
 *              share a lane). @done must not call @start. NULL for models that never defer or
 *              defer through @advance.
 * @next_event_time: the earliest time @advance has something to report, or CS_TIME_NEVER.
 *              NULL for models that never defer (the engine then skips the call).
 * @advance:    moves the model to @t (== next_event_time()) and calls @done for every flow
 *              that ends at @t, in increasing flow id. @done must not call @start.
 * @watch:      from now on, reports each link's use to @load, piece by piece, each piece once
 *              the model has settled it (timelines; the engine calls it only for an observer
 *              that asks, so a run without one pays nothing).
 *
 * SimGrid's Model::next_occurring_event() / update_actions_state() split (STYLE §4): the
 * engine takes the minimum of its own heap and the model's next event.
 */
typedef struct {
    const char *name;
    const char *summary;
    const char *reference;
    CsNetState *(*create)(const CsTopo *topo, int max_flows, const int *flow_hops,
                          gboolean whole_links);
    void (*destroy)(CsNetState *state);
    CsTime (*start)(CsNetState *state, CsTime now, const CsRoute *route, double wire_bytes,
                    double cap_Bps, gint32 flow, CsTime *first_out);
    void (*settle)(CsNetState *state, CsNetDoneFunc done, gpointer user_data);
    CsTime (*next_event_time)(CsNetState *state);
    void (*advance)(CsNetState *state, CsTime t, CsNetDoneFunc done, gpointer user_data);
    void (*watch)(CsNetState *state, CsNetLoadFunc load, gpointer user_data);
} CsNetModel;

/* Serialization of @wire_bytes at @bw_Bps in picoseconds, rounded to the nearest: the one
 * formula every model uses, so that they agree to the picosecond on an idle link. */
static inline CsTime
cs_net_serialization_ps(double wire_bytes, double bw_Bps)
{
    return (CsTime)(wire_bytes / bw_Bps * CS_TIME_PS_PER_S + 0.5);
}

/* Where each of @n_flows flows' hops start in one array of them all, from @flow_hops (see
 * CsNetModel.create); [n_flows] is the total. (transfer full) */
static inline gint32 *
cs_net_hop_bases(const int *flow_hops, int n_flows)
{
    gint32 *base = g_new(gint32, (gsize)n_flows + 1);

    base[0] = 0;
    for (int f = 0; f < n_flows; f++) {
        g_assert(flow_hops[f] >= 0 && base[f] <= G_MAXINT32 - flow_hops[f]);
        base[f + 1] = base[f] + flow_hops[f];
    }
    return base;
}

extern const CsNetModel cs_net_model_reservation;
extern const CsNetModel cs_net_model_maxmin;

/* The NULL-terminated table of models, default first (transfer none). */
const CsNetModel *const *cs_net_model_registry(void);
/* By name; NULL name means the default. NULL with CS_ENGINE_ERROR_MODEL naming the known
 * models otherwise. */
const CsNetModel *cs_net_model_lookup(const char *name, GError **error);

G_END_DECLS
