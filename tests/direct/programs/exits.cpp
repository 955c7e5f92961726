// Not a test but its input: exit() after MPI_Finalize ends a rank; before it
// (argument "early"), the run. DirectCli.ExitEndsARankOrTheRun
// (tests/cli/direct_test.cpp) asserts both outcomes.
#include <mpi.h>

#include <cstdlib>
#include <cstring>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (argc > 1 && std::strcmp(argv[1], "early") == 0 && rank == 1) std::exit(4);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  std::exit(0);
}
