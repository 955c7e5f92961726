/* A small MPI program to trace for examples/trace/whatif.psl: a 1-D halo
 * exchange with nonblocking sends and receives and an allreduce per step,
 * computing for about 2 ms between the exchanges. Built with Open MPI's
 * mpicc as build/bin/trace_halo (run it with any number of processes). */
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
  static double left_out[2048], right_out[2048], left_in[2048], right_in[2048];
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int left = (rank + size - 1) % size, right = (rank + 1) % size;
  double t0 = MPI_Wtime(), residual = 1.0;
  for (int step = 0; step < 20; ++step) {
    MPI_Request r[4];
    MPI_Irecv(left_in, 2048, MPI_DOUBLE, left, 0, MPI_COMM_WORLD, &r[0]);
    MPI_Irecv(right_in, 2048, MPI_DOUBLE, right, 1, MPI_COMM_WORLD, &r[1]);
    MPI_Isend(right_out, 2048, MPI_DOUBLE, right, 0, MPI_COMM_WORLD, &r[2]); /* 16 KiB */
    MPI_Isend(left_out, 2048, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &r[3]);
    MPI_Waitall(4, r, MPI_STATUSES_IGNORE);
    compute_us(2000);
    MPI_Allreduce(MPI_IN_PLACE, &residual, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }
  if (rank == 0) printf("halo: %d processes, 20 steps, %.6f s\n", size, MPI_Wtime() - t0);
  MPI_Finalize();
  return 0;
}
