// SPDX-License-Identifier: MIT
/* The memory budget: how many bytes a run may hold in its largest structures (a schedule and
 * the engine's arrays), checked against an estimate before they are allocated, so that a
 * point too large to hold is refused with one line instead of dying in the allocator. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The environment variable that sets the budget: a size as -b/-e take it ("512M", "8G"). */
#define CS_MEMBUDGET_ENV "COLLSIM_MEMORY_LIMIT"

/**
 * cs_membudget_init:
 * Reads COLLSIM_MEMORY_LIMIT, once. Unset, the budget is half of physical memory, or three
 * quarters of the address-space or data-segment limit (ulimit -v, ulimit -d) if that is
 * smaller. A value that is not a size of at least 1 MiB is an error in CS_UNITS_ERROR naming
 * the variable. Calling it again returns the first answer.
 */
gboolean cs_membudget_init(GError **error);

/* The budget in bytes (cs_membudget_init() first; if it failed or was not called, the default
 * budget). */
guint64 cs_membudget_bytes(void);

/* Where the budget comes from, for messages: "half of the 31.2 GiB of physical memory;
 * COLLSIM_MEMORY_LIMIT sets another", "COLLSIM_MEMORY_LIMIT=512M", ... (owned by this
 * module). */
const char *cs_membudget_source(void);

/* @bytes for a message, to three figures: "512 KiB", "1.43 GiB". (transfer full) */
char *cs_membudget_format(guint64 bytes);

/* Sets the budget for this process (tests); 0 restores the default. */
void cs_membudget_set_for_testing(guint64 bytes);

G_END_DECLS
