/* Four ranks, communicators: MPI_Comm_split into two halves with their ranks
 * in reverse order, a broadcast, a message and an allreduce in each half;
 * MPI_Comm_dup, and two messages that differ only by their communicator,
 * received in the other order. Its replay is checked against
 * tests/trace/communicators.goal. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  static char buf[1000];
  double x = 1;
  int rank, size, in_half, n = 1;
  MPI_Comm half, dup;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 4) {
    if (rank == 0) fprintf(stderr, "communicators: run on 4 processes\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half); /* {2, 0} and {3, 1} */
  MPI_Comm_rank(half, &in_half);
  MPI_Bcast(buf, 100, MPI_CHAR, 0, half);
  if (in_half == 0)
    MPI_Send(buf, 500, MPI_CHAR, 1, 0, half);
  else
    MPI_Recv(buf, 500, MPI_CHAR, 0, 0, half, MPI_STATUS_IGNORE);
  MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_DOUBLE, MPI_SUM, half);
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  if (rank == 0) {
    MPI_Send(buf, 300, MPI_CHAR, 1, 9, dup);
    MPI_Send(buf, 700, MPI_CHAR, 1, 9, MPI_COMM_WORLD);
  } else if (rank == 1) {
    MPI_Recv(buf, 1000, MPI_CHAR, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(buf, 1000, MPI_CHAR, 0, 9, dup, MPI_STATUS_IGNORE);
  }
  MPI_Allreduce(MPI_IN_PLACE, &n, 1, MPI_INT, MPI_SUM, dup);
  MPI_Comm_free(&half);
  MPI_Comm_free(&dup);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
