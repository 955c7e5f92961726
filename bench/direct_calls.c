/* The host cost of an MPI call that does not wait under `poems direct`: a
 * loop of 1,000,000 MPI_Comm_rank calls, three times, each timed with
 * MPI_Wtime (virtual time: what the rank is charged a call). docs/PERFORMANCE.md
 * ("Measured computation's clock") holds the figures.
 *   build/bin/poems-mpicc -O2 bench/direct_calls.c -o calls
 *   build/bin/poems direct ./calls -np 1 --no-store   (and --compute model)
 *   mpicc -O2 bench/direct_calls.c -o calls.real && mpirun -np 1 ./calls.real */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  const int n = 1000000;
  for (int rep = 0; rep < 3; ++rep) {
    const double t0 = MPI_Wtime();
    for (int i = 0; i < n; ++i) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const double t1 = MPI_Wtime();
    printf("MPI_Comm_rank: %.1f ns per call\n", (t1 - t0) / n * 1e9);
  }
  MPI_Finalize();
  return 0;
}
