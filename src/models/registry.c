// SPDX-License-Identifier: MIT
/* The one table of network models (STYLE §3): lookup by name, listing for --help. */
#include "engine/engine.h"
#include "models/netmodel.h"

static const CsNetModel *const net_models[] = {
    &cs_net_model_reservation,
    &cs_net_model_maxmin,
    NULL,
};

/* The NULL-terminated table, default first (transfer none). */
const CsNetModel *const *
cs_net_model_registry(void)
{
    return net_models;
}

/* Finds a model by its CLI name; NULL or "" gives the default (reservation). Returns
 * (transfer none) the model, or NULL with CS_ENGINE_ERROR_MODEL listing the known names. */
const CsNetModel *
cs_net_model_lookup(const char *name, GError **error)
{
    if (name == NULL || *name == '\0')
        return net_models[0];
    for (int i = 0; net_models[i] != NULL; i++) {
        if (g_strcmp0(net_models[i]->name, name) == 0)
            return net_models[i];
    }

    g_autoptr(GString) known = g_string_new(NULL);
    for (int i = 0; net_models[i] != NULL; i++)
        g_string_append_printf(known, "%s%s", i > 0 ? ", " : "", net_models[i]->name);
    g_set_error(error, CS_ENGINE_ERROR, CS_ENGINE_ERROR_MODEL,
                "unknown network model \"%s\" (known: %s)", name, known->str);
    return NULL;
}
