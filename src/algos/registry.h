// SPDX-License-Identifier: MIT
/* The one table of algorithms (src/algos/registry.c). */
#pragma once

#include "algos/algo.h"

G_BEGIN_DECLS

/* NULL-terminated table, in listing order (transfer none). */
const CsAlgo *const *cs_algo_registry(void);
/* By CLI name; NULL with CS_SCHEDULE_ERROR_UNSUPPORTED listing the known names. */
const CsAlgo *cs_algo_lookup(const char *name, GError **error);

G_END_DECLS
