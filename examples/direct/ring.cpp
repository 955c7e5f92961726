// A token passed around a ring of ranks, each adding its rank: an ordinary
// MPI program (it builds with mpicxx too). Under direct execution:
//   poems direct examples/direct/ring.cpp -np 8 --machine Odin
#include <mpi.h>

#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int laps = argc > 1 ? std::atoi(argv[1]) : 1;
  long token = 0;
  const double start = MPI_Wtime();
  for (int lap = 0; lap < laps; ++lap) {
    if (rank == 0) {
      token += 1;
      if (size > 1) {
        MPI_Send(&token, 1, MPI_LONG, 1, lap, MPI_COMM_WORLD);
        MPI_Recv(&token, 1, MPI_LONG, size - 1, lap, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      }
    } else {
      MPI_Recv(&token, 1, MPI_LONG, rank - 1, lap, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      token += rank;
      MPI_Send(&token, 1, MPI_LONG, (rank + 1) % size, lap, MPI_COMM_WORLD);
    }
  }
  const double elapsed = MPI_Wtime() - start;
  if (rank == 0) std::printf("token %ld after %d lap(s) of %d ranks in %.3f us\n", token, laps, size, elapsed * 1e6);
  MPI_Finalize();
  return 0;
}
