// SPDX-License-Identifier: MIT
/* `collsim measure --backend mpi`: collsim's schedules over MPI point-to-point between CPU
 * processes (`mpirun -np P collsim measure --backend mpi ...`), reductions on the CPU. Also the
 * MPI session the NCCL backend bootstraps multi-process runs with. */
#pragma once

#include <glib.h>

#include "backends/backend.h"

G_BEGIN_DECLS

/* The backend's CsBackendMeasureFunc: rank 0 gets the trace, the other ranks NULL. */
gboolean cs_mpi_backend_measure(const CsMeasureArgs *args, CsTrace **trace, GError **error);

/* Initialises MPI once (later calls do nothing). FALSE with CS_BACKEND_ERROR_RUNTIME. */
gboolean cs_mpi_backend_init(GError **error);
/* This process's rank in MPI_COMM_WORLD; 0 when MPI is not (or no longer) initialised. */
int cs_mpi_backend_rank(void);
/* The ranks in MPI_COMM_WORLD; 1 when MPI is not (or no longer) initialised. */
int cs_mpi_backend_n_ranks(void);
/* A CsParallelAllgather (base/parallel.h) over MPI_COMM_WORLD, for a study under mpirun.
 * Returns: (transfer full). */
GPtrArray *cs_mpi_backend_allgather(GBytes *mine);
/* Finalises MPI if cs_mpi_backend_init() initialised it. */
void cs_mpi_backend_finalize(void);
/* Whether an MPI launcher (mpirun, mpiexec, srun with PMI) started this process as one of
 * several: the environment says so before MPI_Init. */
gboolean cs_mpi_backend_launched(void);

G_END_DECLS
