// Sweep3D under direct execution: a thin main, as the app's.
#include <mpi.h>

#include "poems/sweep3d/direct/charged_compute.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rc = poems::sweep3d::direct::sweep3d_direct_program(argc, argv);
  MPI_Finalize();
  return rc;
}
