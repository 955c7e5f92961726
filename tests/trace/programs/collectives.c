/* Four ranks, the collectives of MPI_COMM_WORLD with computation between
 * them; its replay is checked against tests/trace/collectives.psl, the same
 * collectives in PSL. */
#include <mpi.h>
#include <stdio.h>
#include <time.h>

static void compute_us(long us) {
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  do clock_gettime(CLOCK_MONOTONIC, &t);
  while ((t.tv_sec - t0.tv_sec) * 1000000L + (t.tv_nsec - t0.tv_nsec) / 1000 < us);
}

int main(int argc, char** argv) {
  static double d[4096], e[4096];
  static int i[4096], j[4096];
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 4) {
    if (rank == 0) fprintf(stderr, "collectives: run on 4 processes\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  compute_us(1000 + 300 * rank);
  MPI_Bcast(d, 1000, MPI_DOUBLE, 1, MPI_COMM_WORLD); /* 8,000 B from rank 1 */
  compute_us(500);
  MPI_Reduce(d, e, 16, MPI_DOUBLE, MPI_SUM, 2, MPI_COMM_WORLD); /* 128 B to rank 2 */
  MPI_Allreduce(MPI_IN_PLACE, d, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  compute_us(700);
  MPI_Gather(i, 100, MPI_INT, j, 100, MPI_INT, 0, MPI_COMM_WORLD);  /* 400 B a rank to rank 0 */
  MPI_Scatter(i, 200, MPI_INT, j, 200, MPI_INT, 3, MPI_COMM_WORLD); /* 800 B a rank from rank 3 */
  compute_us(300);
  MPI_Allgather(d, 50, MPI_DOUBLE, e, 50, MPI_DOUBLE, MPI_COMM_WORLD); /* 400 B a rank */
  MPI_Alltoall(i, 25, MPI_INT, j, 25, MPI_INT, MPI_COMM_WORLD);        /* 100 B a pair */
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
