// Not a test but its input: calls an MPI function outside what the simulated
// MPI runs (every MPI-3.1 function is declared, so it compiles).
// DirectCli.UnsupportedCallIsNamed (tests/cli/direct_test.cpp) asserts the
// exit code and the one line that names the call.
#include <mpi.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_File file;
  MPI_File_open(MPI_COMM_WORLD, "data", MPI_MODE_RDONLY, MPI_INFO_NULL, &file);
  MPI_Finalize();
  return 0;
}
