// SPDX-License-Identifier: MIT
/* What nccl.c (the model), nccl_constants.c (the constant sets), nccl_names.c (the names) and
 * nccl_system.c (the system from a topology) share beyond nccl.h. */
#pragma once

#include "models/nccl.h"

G_BEGIN_DECLS

/* NCCL's ncclProtoStr, the spelling NCCL_PROTO accepts, by CsProto (nccl_names.c). */
extern const char *const cs_nccl_proto_env_names[CS_N_PROTOS];

G_END_DECLS
