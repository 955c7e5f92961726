/* Two ranks, point to point: blocking sends (eager and large), receives from
 * MPI_ANY_SOURCE with MPI_ANY_TAG, MPI_Probe, MPI_Sendrecv, and computation
 * between the calls. p2p.f90 and p2p_f08.f90 do exactly the same; the three
 * replays are checked against tests/trace/p2p.goal. */
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
  static double buf[8192], in[8192];
  int rank, size, ints[10] = {0}, count;
  MPI_Status st;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (rank == 0) fprintf(stderr, "p2p: run on 2 processes\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  for (int it = 0; it < 2; ++it) {
    compute_us(3000 + 1000 * rank);
    if (rank == 0) {
      MPI_Send(buf, 125, MPI_DOUBLE, 1, it, MPI_COMM_WORLD);               /* 1,000 B */
      MPI_Recv(in, 8192, MPI_DOUBLE, 1, MPI_ANY_TAG, MPI_COMM_WORLD, &st); /* 40,000 B, tag 10 + it */
    } else {
      MPI_Recv(in, 8192, MPI_DOUBLE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      compute_us(2000);
      MPI_Send(buf, 5000, MPI_DOUBLE, 0, 10 + it, MPI_COMM_WORLD);
    }
    compute_us(1000);
    MPI_Sendrecv(buf, 250, MPI_DOUBLE, 1 - rank, 20, in, 250, MPI_DOUBLE, 1 - rank, 20, MPI_COMM_WORLD, &st);
    if (rank == 1) {
      MPI_Send(ints, 10, MPI_INT, 0, 30, MPI_COMM_WORLD); /* 40 B */
    } else {
      MPI_Probe(1, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
      MPI_Get_count(&st, MPI_INT, &count);
      MPI_Recv(ints, count, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  }
  MPI_Finalize();
  return 0;
}
