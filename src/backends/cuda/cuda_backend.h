// SPDX-License-Identifier: MIT
/* `collsim measure --backend cuda`: runs collsim's schedules on NVIDIA GPUs through the
 * executor in cuda_exec.cu, checks them against the host reference and times them. */
#pragma once

#include <glib.h>

#include "backends/backend.h"

G_BEGIN_DECLS

/* The backend's CsBackendMeasureFunc. */
gboolean cs_cuda_backend_measure(const CsMeasureArgs *args, CsTrace **trace, GError **error);

/* Usable CUDA devices; 0 with @why set (transfer full) when there is no GPU or no driver. */
int cs_cuda_backend_device_count(char **why);

G_END_DECLS
