// A message's one-way time (ping-pong: half the round trip) and the time of
// a simultaneous exchange (each of two ranks posts its receive, sends, waits:
// the halo pattern of NAS CG and MG), per message size, 2 ranks, only the
// MPI calls timed (docs/network.md, "The echo, the exchange and the host's
// drift"; bench/exchange/run).
//   exchange [ITERATIONS] [clean|dirty]   prints "SIZE ECHO_US EXCHANGE_US" for each size
// dirty: each rank writes a byte of every cache line of its send buffer before
// each message, as a program sends what it has just computed (the lines are
// then in its core's cache, modified, when the other side copies them).
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (rank == 0) fprintf(stderr, "exchange: run it on 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int iterations = argc > 1 ? atoi(argv[1]) : 1000;
  const int dirty = argc > 2 && argv[2][0] == 'd';
  const int sizes[] = {8, 1024, 8192, 57344, 262144, 1048576};
  const int largest = 1048576, other = 1 - rank;
  char* out = malloc(largest);
  char* in = malloc(largest);
  memset(out, rank + 1, largest);
  memset(in, 0, largest);
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; ++k) {
    const int bytes = sizes[k];
    double echo = 0, exchange = 0;
    for (int round = 0; round < 2; ++round) {  // the first warms the buffers and the protocol
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = 0, spent = 0;
      for (int i = 0; i < iterations; ++i) {
        if (dirty)
          for (int j = 0; j < bytes; j += 64) out[j]++;
        t0 = MPI_Wtime();
        if (rank == 0) {
          MPI_Send(out, bytes, MPI_BYTE, other, 1, MPI_COMM_WORLD);
          MPI_Recv(in, bytes, MPI_BYTE, other, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
          MPI_Recv(in, bytes, MPI_BYTE, other, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          MPI_Send(out, bytes, MPI_BYTE, other, 1, MPI_COMM_WORLD);
        }
        spent += MPI_Wtime() - t0;
      }
      echo = spent / iterations / 2;
      MPI_Barrier(MPI_COMM_WORLD);
      spent = 0;
      for (int i = 0; i < iterations; ++i) {
        if (dirty)
          for (int j = 0; j < bytes; j += 64) out[j]++;
        t0 = MPI_Wtime();
        MPI_Request request;
        MPI_Irecv(in, bytes, MPI_BYTE, other, 2, MPI_COMM_WORLD, &request);
        MPI_Send(out, bytes, MPI_BYTE, other, 2, MPI_COMM_WORLD);
        MPI_Wait(&request, MPI_STATUS_IGNORE);
        spent += MPI_Wtime() - t0;
      }
      exchange = spent / iterations;
    }
    if (in[bytes - 1] != other + 1) {
      fprintf(stderr, "exchange: rank %d received wrong data at %d bytes\n", rank, bytes);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (rank == 0) printf("%d %.3f %.3f\n", bytes, echo * 1e6, exchange * 1e6);
  }
  free(out);
  free(in);
  MPI_Finalize();
  return 0;
}
