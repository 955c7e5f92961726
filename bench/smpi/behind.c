/* A small message sent right after a large one, to another rank: rank 0
 * sends N bytes to rank 1, then 8 bytes to rank 2; rank 2 prints when its
 * 8 bytes arrived (NPB CG's dot products wait so behind its 5,600-byte
 * exchanges). A plain MPI program, built unchanged by scripts/smpi-compare. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int n = argc > 1 ? atoi(argv[1]) : 5600;
  char* buf = calloc((size_t)n + 8, 1);
  const double t0 = MPI_Wtime();
  if (rank == 0) {
    MPI_Send(buf, n, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
    MPI_Send(buf, 8, MPI_CHAR, 2, 0, MPI_COMM_WORLD);
  } else if (rank == 1) {
    MPI_Recv(buf, n, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else if (rank == 2) {
    MPI_Recv(buf, 8, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("8 B behind %d B received after %.1f ns\n", n, (MPI_Wtime() - t0) * 1e9);
  }
  free(buf);
  MPI_Finalize();
  return 0;
}
