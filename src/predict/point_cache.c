// SPDX-License-Identifier: MIT
/* The point cache (predict.h): made, bound to a topology, counted and freed here; predict.c
 * looks its points, periods and schedules up. */
#include "predict/predict-private.h"

CsPointCache *
cs_point_cache_new(gboolean keep_schedules)
{
    CsPointCache *cache = g_new0(CsPointCache, 1);
    g_mutex_init(&cache->lock);
    if (keep_schedules)
        cache->schedules = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                                 (GDestroyNotify)cs_schedule_free);
    cache->points = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    cache->periods = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    cache->pending = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    return cache;
}

/**
 * cs_point_cache_new_sharing:
 * A cache of its own points that builds and keeps its schedules in @owner's (which must
 * outlive it), so that threads predicting at several parameter vectors of one machine at
 * once (calibrate's Jacobian) build each schedule once. Bind it first to the topology
 * @owner was first bound to: the shared schedules are built on that one.
 */
CsPointCache *
cs_point_cache_new_sharing(CsPointCache *owner)
{
    g_return_val_if_fail(owner != NULL && owner->schedule_owner == NULL, NULL);
    CsPointCache *cache = cs_point_cache_new(FALSE);
    cache->schedule_owner = owner;
    return cache;
}

void
cs_point_cache_bind(CsPointCache *cache, const CsTopo *topo)
{
    g_return_if_fail(cache != NULL && topo != NULL);
    if (cache->topo == topo)
        return;
    /* Schedules carry over to another parameter vector of the same machine only. */
    if (cache->structure == NULL)
        cache->structure = cs_topo_ref((CsTopo *)topo);
    g_return_if_fail(cs_topo_n_ranks(cache->structure) == cs_topo_n_ranks(topo)
                     && cs_topo_n_links(cache->structure) == cs_topo_n_links(topo));
    g_hash_table_remove_all(cache->points);
    g_hash_table_remove_all(cache->periods);
    g_clear_pointer(&cache->topo, cs_topo_unref);
    cache->topo = cs_topo_ref((CsTopo *)topo);
}

void
cs_point_cache_free(CsPointCache *cache)
{
    if (cache == NULL)
        return;
    g_hash_table_unref(cache->points);
    g_hash_table_unref(cache->periods);
    /* Freed with no simulation in flight: every owner removes its entry before it returns. */
    g_warn_if_fail(g_hash_table_size(cache->pending) == 0);
    g_hash_table_unref(cache->pending);
    g_clear_pointer(&cache->schedules, g_hash_table_unref);
    g_clear_pointer(&cache->topo, cs_topo_unref);
    g_clear_pointer(&cache->structure, cs_topo_unref);
    g_mutex_clear(&cache->lock);
    g_free(cache);
}

void
cs_point_cache_stats(const CsPointCache *cache, gint64 *misses, gint64 *hits)
{
    g_return_if_fail(cache != NULL);
    g_mutex_lock((GMutex *)&cache->lock);
    if (misses != NULL)
        *misses = cache->misses;
    if (hits != NULL)
        *hits = cache->hits;
    g_mutex_unlock((GMutex *)&cache->lock);
}
