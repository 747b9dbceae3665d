// SPDX-License-Identifier: MIT
/* libFuzzer target: the topology loader (cs_topo_load_data) on arbitrary bytes. A load either
 * fails with an error or gives a topology whose JSON form (cs_topo_to_json) loads again. */
#include <glib.h>
#include <stdint.h>

#include "topo/topo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    g_autofree char *text = g_strndup((const char *)data, size);
    g_autoptr(GError) error = NULL;
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
