// SPDX-License-Identifier: MIT
/* libFuzzer target: `collsim topo import` (cs_topo_import_data) on arbitrary bytes, as NCCL
 * XML and as nvidia-smi text. An import either fails with an error or gives a document that
 * the topology loader reads: the contract `topo import` relies on before it writes a file. */
#include <glib.h>
#include <stdint.h>

#include "topo/topo_import.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    CsTopoImportOptions options = { 0 };
    options.gpu.launch_s = 4.5e-6;
    options.gpu.step_overhead_s = 0.2e-6;
    options.gpu.reduce_Bps = 1116.7e9;
    options.gpu.copy_Bps = 1675e9;
    options.nvlink_lane_Bps = 20.6e9;
    options.pcie_Bps = 48e9;
    options.sys_Bps = 22e9;

    for (int format = CS_TOPO_IMPORT_NCCL_XML; format <= CS_TOPO_IMPORT_NVIDIA_SMI; format++) {
        g_autoptr(GPtrArray) notes = g_ptr_array_new_with_free_func(g_free);
        g_autoptr(GError) error = NULL;
        options.format = (CsTopoImportFormat)format;
        options.nvswitch = size % 2 == 0;
        g_autofree char *json = cs_topo_import_data((const char *)data, size, "fuzz.xml", &options,
                                                    notes, NULL, &error);
        if (json == NULL) {
            g_assert_nonnull(error);
            continue;
        }
        g_autoptr(CsTopo) topo = cs_topo_load_data(json, "fuzz-import.json", &error);
        if (topo == NULL)
            g_error("an import does not load: %s", error->message);
    }
    return 0;
}
