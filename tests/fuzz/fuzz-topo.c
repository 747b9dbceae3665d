// SPDX-License-Identifier: MIT
/* libFuzzer target: the topology loader (cs_topo_load_data) on arbitrary bytes. A load either
 * fails with an error or gives a topology whose JSON form (cs_topo_to_json) loads again. */
#include <cjson/cJSON.h>
#include <glib.h>
#include <stdint.h>

#include "topo/topo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    g_autofree char *text = g_strndup((const char *)data, size);
    g_autoptr(GError) error = NULL;

    /* Large machines are bench-topo's business: a template of thousands of nodes loads in
     * seconds under the sanitizers, past libFuzzer's time per input. */
    cJSON *doc = cJSON_Parse(text);
    if (doc != NULL) {
        const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(doc, "nodes");
        const cJSON *domains = cJSON_GetObjectItemCaseSensitive(doc, "domains");
        gboolean big = (cJSON_IsNumber(nodes) && nodes->valuedouble > 256)
                       || (cJSON_IsNumber(domains) && domains->valuedouble > 16);
        cJSON_Delete(doc);
        if (big)
            return 0;
    }
    g_autoptr(CsTopo) topo = cs_topo_load_data(text, "fuzz.json", &error);

    if (topo == NULL) {
        g_assert_nonnull(error);
        return 0;
    }
    g_autofree char *json = cs_topo_to_json(topo);
    g_autoptr(CsTopo) again = cs_topo_load_data(json, "fuzz-roundtrip.json", &error);
    if (again == NULL)
        g_error("a loaded topology does not load back from its JSON: %s", error->message);
    return 0;
}
