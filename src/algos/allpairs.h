// SPDX-License-Identifier: MIT
/* RCCL's MSCCL all-pairs all-reduce (allpairs.c): which of its algorithm files RCCL's
 * scheduler takes for a call, for the predictor's emulation of RCCL's pick. */
#pragma once

#include "models/protocol.h"

#include <glib.h>

G_BEGIN_DECLS

/* Whether RCCL's MSCCL scheduler runs an allreduce_pairs file for an out-of-place all-reduce
 * of @size_bytes (@count elements) on @nranks ranks; its protocol and channels (nullable). */
gboolean cs_allpairs_msccl_plan(gint64 size_bytes, gint64 count, int nranks, CsProto *proto,
                                int *n_channels);
/* The files' rule in words for elements of @type_size bytes ("from 1 KiB to 16 MiB (element
 * counts a multiple of 256, of 512 above 64 KiB; not avg)"). (transfer full) */
char *cs_allpairs_msccl_text(int type_size);
/* The channels the allreduce_pairs file of @proto at @size_bytes runs. */
int cs_allpairs_channels(CsProto proto, gint64 size_bytes);

G_END_DECLS
