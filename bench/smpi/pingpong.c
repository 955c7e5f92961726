/* Ping-pong of N bytes between ranks 0 and 1, R round trips; rank 0 prints
 * the time (MPI_Wtime). A plain MPI program: built with poems-mpicc and with
 * SimGrid's smpicc by scripts/smpi-compare, unchanged. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int n = argc > 1 ? atoi(argv[1]) : 8, rounds = argc > 2 ? atoi(argv[2]) : 1;
  char* buf = calloc(n > 0 ? (size_t)n : 1, 1);
  const double t0 = MPI_Wtime();
  for (int i = 0; i < rounds; ++i) {
    if (rank == 0) {
      MPI_Send(buf, n, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
      MPI_Recv(buf, n, MPI_CHAR, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
      MPI_Recv(buf, n, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(buf, n, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
    }
  }
  if (rank == 0) printf("pingpong %d B x %d: %.1f ns\n", n, rounds, (MPI_Wtime() - t0) * 1e9);
  free(buf);
  MPI_Finalize();
  return 0;
}
