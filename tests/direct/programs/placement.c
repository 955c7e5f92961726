/* Where a rank process runs on the host: how many CPUs it may use and the
 * first of them, as `poems direct --handover` places it (docs/direct.md,
 * "Hand-overs"). Then a ring of one token, so every rank hands the turn over.
 * With an argument N, every rank first writes N MiB of its own memory. */
#define _GNU_SOURCE
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const size_t mib = argc > 1 ? (size_t)atoi(argv[1]) : 0;
  char* touched = mib ? malloc(mib << 20) : NULL;
  if (touched) memset(touched, rank + 1, mib << 20);
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  int first = -1;
  if (sched_getaffinity(0, sizeof allowed, &allowed) == 0)
    for (int c = 0; c < CPU_SETSIZE && first < 0; ++c)
      if (CPU_ISSET(c, &allowed)) first = c;
  int token = 0;
  if (rank == 0) {
    MPI_Send(&token, 1, MPI_INT, 1 % size, 0, MPI_COMM_WORLD);
    MPI_Recv(&token, 1, MPI_INT, size - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else {
    MPI_Recv(&token, 1, MPI_INT, rank - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    ++token;
    MPI_Send(&token, 1, MPI_INT, (rank + 1) % size, 0, MPI_COMM_WORLD);
  }
  printf("rank %d cpus %d first %d token %d time %.9f\n", rank, CPU_COUNT(&allowed), first, token, MPI_Wtime());
  if (touched) printf("rank %d touched %d\n", rank, touched[(mib << 20) - 1]);
  free(touched);
  MPI_Finalize();
  return 0;
}
