/* Not compared with mpirun: ways a program fails (DirectPrograms.FailuresAreFailedRuns).
 * The argument says how; rank 1 fails, the others go through a barrier. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const char* how = argc > 1 ? argv[1] : "ok";
  printf("rank %d starts\n", rank);
  if (rank == 1) {
    if (strcmp(how, "early") == 0) exit(2);
    if (strcmp(how, "abort") == 0) MPI_Abort(MPI_COMM_WORLD, 7);
    if (strcmp(how, "segv") == 0) {
      volatile int* p = NULL;
      *p = 1;
    }
    if (strcmp(how, "unsupported") == 0) {
      MPI_File f;
      MPI_File_open(MPI_COMM_WORLD, "none", MPI_MODE_RDONLY, MPI_INFO_NULL, &f);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  if (rank == 1 && strcmp(how, "exit") == 0) exit(3);
  if (rank == 0 && strcmp(how, "return") == 0) return 5;
  return 0;
}
