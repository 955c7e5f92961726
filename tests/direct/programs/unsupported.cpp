// Not a test but its input: calls an MPI function outside the supported
// subset. DirectCli.UnsupportedCallIsNamed (tests/cli/direct_test.cpp)
// asserts the exit code and that the message names the call.
#include <mpi.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Datatype pair;
  MPI_Type_contiguous(2, MPI_INT, &pair);
  MPI_Finalize();
  return 0;
}
