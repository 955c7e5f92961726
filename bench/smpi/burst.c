/* K messages of N bytes sent back to back from rank 0 to rank 1; rank 1
 * prints when the first and the last arrived. A plain MPI program, built
 * unchanged by scripts/smpi-compare. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int n = argc > 1 ? atoi(argv[1]) : 2880, k = argc > 2 ? atoi(argv[2]) : 10;
  char* buf = calloc(n > 0 ? (size_t)n : 1, 1);
  const double t0 = MPI_Wtime();
  for (int i = 0; i < k; ++i) {
    if (rank == 0) {
      MPI_Send(buf, n, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
    } else if (rank == 1) {
      MPI_Recv(buf, n, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (i == 0) printf("first of %d x %d B received after %.1f ns\n", k, n, (MPI_Wtime() - t0) * 1e9);
      if (i == k - 1) printf("last received after %.1f ns\n", (MPI_Wtime() - t0) * 1e9);
    }
  }
  free(buf);
  MPI_Finalize();
  return 0;
}
