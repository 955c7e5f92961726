/* A rank's messages to itself, as Open MPI's self transport carries them:
 * the best of three runs of N round trips per size, the receive posted
 * first (MPI_Irecv, MPI_Send, MPI_Wait) or the send (MPI_Isend, MPI_Recv,
 * MPI_Wait). bench/self-message/run times it under mpirun and poems direct
 * (docs/network.md, "A rank's message to itself"). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const size_t largest = 16u << 20;
  char* a = malloc(largest);
  char* b = malloc(largest);
  if (!a || !b) MPI_Abort(MPI_COMM_WORLD, 1);
  memset(a, 1, largest);
  memset(b, 2, largest);
  for (size_t s = 8; s <= largest; s *= 8) {
    const int reps = s >= (1u << 20) ? 10 : 1000;
    for (int send_first = 0; send_first < 2; ++send_first) {
      double best = 1e9;
      for (int t = 0; t < 3; ++t) {
        const double t0 = MPI_Wtime();
        for (int i = 0; i < reps; ++i) {
          MPI_Request r;
          if (send_first) {
            MPI_Isend(a, (int)s, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &r);
            MPI_Recv(b, (int)s, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          } else {
            MPI_Irecv(b, (int)s, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &r);
            MPI_Send(a, (int)s, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
          }
          MPI_Wait(&r, MPI_STATUS_IGNORE);
        }
        const double dt = (MPI_Wtime() - t0) / reps;
        if (dt < best) best = dt;
      }
      printf("%s %zu %.4f\n", send_first ? "send-first" : "recv-first", s, best * 1e6);
    }
  }
  if (b[largest - 1] != 1) MPI_Abort(MPI_COMM_WORLD, 2);
  free(a);
  free(b);
  MPI_Finalize();
  return 0;
}
