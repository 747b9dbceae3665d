// SPDX-License-Identifier: MIT
/* Parallel loops: run the items 0 .. n-1 of a loop on a pool of threads (--jobs), and over the
 * ranks of an mpirun job, each item writing only its own results, so that the caller merges
 * them in index order and the output never depends on the number of threads or ranks. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The most threads --jobs accepts. */
#define CS_PARALLEL_MAX_JOBS 1024

/* Computes item @index of a loop; @data is the caller's. Must touch only what item @index
 * owns, or state that locks. */
typedef void (*CsParallelFunc)(guint index, gpointer data);

/* Told on the calling thread after each item ends, with the items ended so far and the index
 * of the one that just did (in whatever order threads finish them). */
typedef void (*CsParallelDone)(guint done, guint index, gpointer data);

/* The default thread count: the processors this process may run on. */
int cs_parallel_default_jobs(void);

/* Runs @func on every index in 0 .. @n - 1 over @jobs threads (<= 1: on the calling thread, in
 * index order) and returns when all have ended; @done (nullable) is told of each on the calling
 * thread. */
void cs_parallel_for(guint n, int jobs, CsParallelFunc func, CsParallelDone done, gpointer data);

/* ---- Ranks of a study (mpirun) ----
 *
 * Under `mpirun -np N` every rank runs the same command. cs_parallel_for_ranks() gives each
 * rank a share of a loop's items (dealt in order, each share on --jobs threads), packs
 * what each item computed and gathers every item to every rank, so each rank goes on with the
 * results of all items and every rank takes the same path through the command; rank 0 alone
 * prints and writes files. Without ranks (a single process) it is cs_parallel_for(). */

/* Gathers @mine from every rank to every rank: one GBytes per rank, in rank order, the
 * caller's own included. Every rank calls it at the same point. (transfer full) */
typedef GPtrArray *(*CsParallelAllgather)(GBytes *mine);

/* Ends this process with @status after the last round (MPI_Finalize, then exit). @report
 * (nullable) is what rank 0 prints on stderr. Never returns. */
typedef void (*CsParallelLeave)(int status, const char *report);

/* Makes this process rank @rank of @n_ranks (> 1) that run one study; @allgather carries the
 * rounds, @leave ends a rank whose others left the study before it (see
 * cs_parallel_ranks_end()). Called once, before any loop. */
void cs_parallel_set_ranks(int rank, int n_ranks, CsParallelAllgather allgather,
                           CsParallelLeave leave);
/* This process's rank in the study, 0 without ranks. */
int cs_parallel_rank(void);
/* The ranks of the study, 1 without ranks. */
int cs_parallel_n_ranks(void);

/* Appends item @index's results (what the CsParallelFunc wrote) to @out. */
typedef void (*CsParallelPack)(guint index, GByteArray *out, gpointer data);

/* Reads item @index's results, as packed on another rank, from @in into the caller's slots. */
typedef struct _CsUnpack CsUnpack;
typedef void (*CsParallelUnpack)(guint index, CsUnpack *in, gpointer data);

/* cs_parallel_for() over the ranks of the study: this rank runs its share of 0 .. @n - 1 on
 * @jobs threads (the items are dealt to the ranks in runs of @grain: items that reuse each
 * other's simulated points through the point cache, which is per process, stay on one rank), then
 * every item's results are packed (@pack) and unpacked (@unpack) on every other rank, so all ranks
 * return with every item done. @done (nullable) is told of every item, this rank's as they end, the
 * others' as they arrive. Every rank must call it with the same @n at the same point; a rank that
 * left the study meanwhile (an error only it met) ends this one through the CsParallelLeave. */
void cs_parallel_for_ranks(guint n, guint grain, int jobs, CsParallelFunc func, CsParallelDone done,
                           CsParallelPack pack, CsParallelUnpack unpack, gpointer data);

/* The last round of a study: every rank tells its exit @status and error @message (nullable).
 * Returns the status this rank exits with and, on rank 0, in @report (transfer full,
 * nullable), what to print on stderr: @message when every rank ended alike, otherwise also a
 * line for each rank that ended otherwise, the first failing rank's status winning. Without
 * ranks it returns @status and @message. */
int cs_parallel_ranks_end(int status, const char *message, char **report);

/* ---- Packing item results ----
 *
 * Native byte order and layout: every rank runs the same collsim build. Reading past the end
 * of what was packed is a programming error (g_error). */

void cs_pack_int(GByteArray *out, gint64 v);
void cs_pack_double(GByteArray *out, double v);
/* @s may be NULL (unpacked as NULL). */
void cs_pack_string(GByteArray *out, const char *s);
/* @error may be NULL; its domain travels by name. */
void cs_pack_error(GByteArray *out, const GError *error);

/* A reader of @len bytes at @data (not copied: they must outlive it). (transfer full) */
CsUnpack *cs_unpack_new(const guint8 *data, gsize len);
void cs_unpack_free(CsUnpack *in);
/* The bytes not read yet. */
gsize cs_unpack_left(const CsUnpack *in);

gint64 cs_unpack_int(CsUnpack *in);
double cs_unpack_double(CsUnpack *in);
/* Returns: (transfer full) (nullable). */
char *cs_unpack_string(CsUnpack *in);
/* The string, interned (g_intern_string): for fields that hold static strings. (nullable) */
const char *cs_unpack_interned(CsUnpack *in);
/* Returns: (transfer full) (nullable). */
GError *cs_unpack_error(CsUnpack *in);

G_END_DECLS
