/* A 1-byte ping-pong between two ranks, ITERATIONS round trips: the cost of
 * an MPI call under `poems trace` against the same call untraced
 * (trace_overhead_bench). Prints POEMS_PINGPONG {"seconds": ..., "calls": ...}. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  char byte = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const long n = argc > 1 ? atol(argv[1]) : 100000;
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  for (long i = 0; i < n; ++i) {
    if (rank == 0) {
      MPI_Send(&byte, 1, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
      MPI_Recv(&byte, 1, MPI_CHAR, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
      MPI_Recv(&byte, 1, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(&byte, 1, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
    }
  }
  const double seconds = MPI_Wtime() - start;
  if (rank == 0) printf("POEMS_PINGPONG {\"seconds\": %.9f, \"calls\": %ld}\n", seconds, 2 * n);
  MPI_Finalize();
  return 0;
}
