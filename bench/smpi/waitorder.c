/* When a receive pays its overhead: rank 1 sends two messages of N bytes
 * (tags 1, 2) at once; rank 0 has posted both receives and completes them
 * the way MODE says: "later" waits for the later message first, "arrival"
 * in arrival order, "waitall" with MPI_Waitall on the two in reverse order.
 * Rank 0 prints when it is done. A plain MPI program, built unchanged by
 * scripts/smpi-compare. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int n = argc > 1 ? atoi(argv[1]) : 8;
  const char* mode = argc > 2 ? argv[2] : "later";
  char* a = calloc((size_t)n + 1, 1);
  char* b = calloc((size_t)n + 1, 1);
  const double t0 = MPI_Wtime();
  if (rank == 1) {
    MPI_Send(a, n, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
    MPI_Send(b, n, MPI_CHAR, 0, 2, MPI_COMM_WORLD);
  } else if (rank == 0) {
    MPI_Request q[2];
    MPI_Irecv(a, n, MPI_CHAR, 1, 1, MPI_COMM_WORLD, &q[0]);
    MPI_Irecv(b, n, MPI_CHAR, 1, 2, MPI_COMM_WORLD, &q[1]);
    if (strcmp(mode, "waitall") == 0) {
      MPI_Request reversed[2] = {q[1], q[0]};
      MPI_Waitall(2, reversed, MPI_STATUSES_IGNORE);
    } else {
      const int first = strcmp(mode, "later") == 0 ? 1 : 0;
      MPI_Wait(&q[first], MPI_STATUS_IGNORE);
      MPI_Wait(&q[1 - first], MPI_STATUS_IGNORE);
    }
    printf("waitorder %d B %s: rank 0 done after %.1f ns\n", n, mode, (MPI_Wtime() - t0) * 1e9);
  }
  free(a);
  free(b);
  MPI_Finalize();
  return 0;
}
