// SPDX-License-Identifier: MIT
/* The engine's event and its flat-array binary heap, shared by engine.c and its tests
 * (STYLE §2: a *-private.h when two files share a struct). */
#pragma once

#include <glib.h>

#include "base/units.h"

G_BEGIN_DECLS

/**
 * CsEvent:
 * One pending event, stored by value in the heap. Size budget: 32 bytes (current: 24).
 * Ordered by (@time, @seq): @seq is the heap's insertion counter, so ties resolve the same
 * way on every run (STYLE §4).
 */
typedef struct {
    CsTime time;   /* ps */
    guint64 seq;   /* insertion order, tie breaker */
    gint32 cursor; /* the (rank, channel) program it wakes */
    guint32 kind;  /* what it does (engine.c's EventKind) */
} CsEvent;

G_STATIC_ASSERT(sizeof(CsEvent) <= 32);

/**
 * CsEventHeap:
 * A min-heap of events in one array sized once: pushing beyond @capacity is a programming
 * error, never a reallocation (no allocation in the hot loop).
 */
typedef struct {
    CsEvent *ev;
    gsize n;
    gsize capacity;
    guint64 next_seq;
    gboolean hole; /* the root was taken and awaits a push or a settle */
} CsEventHeap;

void cs_event_heap_init(CsEventHeap *heap, gsize capacity);
void cs_event_heap_clear(CsEventHeap *heap);
void cs_event_heap_push(CsEventHeap *heap, CsTime time, gint32 cursor, guint32 kind);
/* Removes the earliest event into @out; FALSE when empty. */
gboolean cs_event_heap_pop(CsEventHeap *heap, CsEvent *out);
/* Copies the earliest event into @out and leaves a hole at the root that the next push fills
 * (a pop and a push cost one sift); FALSE when empty. */
gboolean cs_event_heap_take(CsEventHeap *heap, CsEvent *out);
/* Closes a hole left by cs_event_heap_take() that no push filled. */
void cs_event_heap_settle(CsEventHeap *heap);

G_END_DECLS
