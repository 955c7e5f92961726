// Sweep3D over MPI: a thin main around sweep3d_program (driver.h).
#include <mpi.h>

#include <iostream>

#include "poems/sweep3d/app/driver.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rc = poems::sweep3d::app::sweep3d_program(argc, argv, std::cout, std::cerr);
  MPI_Finalize();
  return rc;
}
