// SPDX-License-Identifier: MIT
/* `collsim measure --backend nccl`: NCCL's own collectives (scatter, gather and all-to-all as
 * grouped ncclSend/ncclRecv, as nccl-tests does), with NCCL_ALGO/NCCL_PROTO forced, in one
 * process for all local GPUs or one process per GPU under mpirun. */
#pragma once

#include <glib.h>

#include "backends/backend.h"

G_BEGIN_DECLS

/* The backend's CsBackendMeasureFunc. */
gboolean cs_nccl_backend_measure(const CsMeasureArgs *args, CsTrace **trace, GError **error);

G_END_DECLS
