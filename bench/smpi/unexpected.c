/* A message of N bytes that reaches rank 0 before its receive is posted:
 * rank 1 sends it (tag 0), then 8 bytes (tag 1); rank 0 receives tag 1
 * first. Rank 0 prints when its second receive returned. A plain MPI
 * program, built unchanged by scripts/smpi-compare. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int n = argc > 1 ? atoi(argv[1]) : 8;
  char* buf = calloc((size_t)n + 8, 1);
  const double t0 = MPI_Wtime();
  if (rank == 1) {
    MPI_Send(buf, n, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
    MPI_Send(buf, 8, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
  } else if (rank == 0) {
    MPI_Recv(buf, 8, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(buf, n, MPI_CHAR, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("unexpected %d B received after %.1f ns\n", n, (MPI_Wtime() - t0) * 1e9);
  }
  free(buf);
  MPI_Finalize();
  return 0;
}
