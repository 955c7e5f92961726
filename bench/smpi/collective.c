/* One collective of N bytes per rank (barrier, bcast, reduce, allreduce,
 * gather, scatter, allgather, alltoall); every rank prints when it left it
 * (all start at time 0: the latest is the collective's time). Each prints
 * its own rather than reducing them: a second collective's messages could
 * reach a rank still in the first, and under LogGOPSim's semantics they are
 * processed there on arrival. A plain MPI program, built unchanged by
 * scripts/smpi-compare. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* op = argc > 1 ? argv[1] : "bcast";
  const int n = argc > 2 ? atoi(argv[2]) : 8;
  char* a = calloc((size_t)n * size + 8, 1);
  char* b = calloc((size_t)n * size + 8, 1);
  const double t0 = MPI_Wtime();
  if (!strcmp(op, "barrier"))
    MPI_Barrier(MPI_COMM_WORLD);
  else if (!strcmp(op, "bcast"))
    MPI_Bcast(a, n, MPI_CHAR, 0, MPI_COMM_WORLD);
  else if (!strcmp(op, "reduce"))
    MPI_Reduce(a, b, n, MPI_CHAR, MPI_MAX, 0, MPI_COMM_WORLD);
  else if (!strcmp(op, "allreduce"))
    MPI_Allreduce(a, b, n, MPI_CHAR, MPI_MAX, MPI_COMM_WORLD);
  else if (!strcmp(op, "gather"))
    MPI_Gather(a, n, MPI_CHAR, b, n, MPI_CHAR, 0, MPI_COMM_WORLD);
  else if (!strcmp(op, "scatter"))
    MPI_Scatter(a, n, MPI_CHAR, b, n, MPI_CHAR, 0, MPI_COMM_WORLD);
  else if (!strcmp(op, "allgather"))
    MPI_Allgather(a, n, MPI_CHAR, b, n, MPI_CHAR, MPI_COMM_WORLD);
  else if (!strcmp(op, "alltoall"))
    MPI_Alltoall(a, n, MPI_CHAR, b, n, MPI_CHAR, MPI_COMM_WORLD);
  else {
    if (rank == 0) fprintf(stderr, "unknown collective %s\n", op);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const double took = MPI_Wtime() - t0;
  printf("%s %d B on %d ranks: rank %d left after %.1f ns\n", op, n, size, rank, took * 1e9);
  free(a);
  free(b);
  MPI_Finalize();
  return 0;
}
