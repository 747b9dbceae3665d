// SPDX-License-Identifier: MIT
/* The textbook ring all-reduce as an MPI program for SimGrid's SMPI (bench/bench-smpi-ring.sh):
 * 2(P-1) rounds, each an MPI_Sendrecv of one n/P block to the next rank and from the previous
 * one. The buffers are SMPI_SHARED_MALLOC'd (one copy for all ranks, never copied), and
 * nothing is computed: the simulated time is the network's alone. Prints the last rank's
 * simulated finish in seconds. Usage: smpirun ... smpi-ring BYTES_PER_RANK */
#include <mpi.h>
#include <smpi/smpi.h>
#include <stdio.h>
#include <stdlib.h>

int
main(int argc, char **argv)
{
    int rank;
    int p;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    if (argc != 2) {
        if (rank == 0)
            fprintf(stderr, "usage: smpi-ring BYTES_PER_RANK\n");
        MPI_Finalize();
        return 2;
    }
    long long n = atoll(argv[1]);
    int block = (int)(n / p);
    char *send = SMPI_SHARED_MALLOC(block);
    char *recv = SMPI_SHARED_MALLOC(block);
    int next = (rank + 1) % p;
    int prev = (rank + p - 1) % p;

    /* Every rank starts at simulated time 0: no barrier, whose own time would count. */
    for (int k = 0; k < 2 * (p - 1); k++)
        MPI_Sendrecv(send, block, MPI_BYTE, next, k, recv, block, MPI_BYTE, prev, k, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
    double end = MPI_Wtime();
    double last = 0.0;
    MPI_Reduce(&end, &last, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("smpi_time_s %.9f\n", last);
    SMPI_SHARED_FREE(send);
    SMPI_SHARED_FREE(recv);
    MPI_Finalize();
    return 0;
}
