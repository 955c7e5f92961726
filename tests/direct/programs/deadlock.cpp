// Not a test but its input: both ranks receive first, a deadlock `poems
// direct` must report. DirectCli.DeadlockIsAnEvaluationFailure
// (tests/cli/direct_test.cpp) asserts the exit code and the report.
#include <mpi.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, v = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Recv(&v, 1, MPI_INT, 1 - rank, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Send(&v, 1, MPI_INT, 1 - rank, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
