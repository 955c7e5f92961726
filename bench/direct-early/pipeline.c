// A wavefront pipeline, the pattern of Sweep3D's and NAS LU's sweeps: rank r
// receives a plane from rank r-1, computes on it, sends it to rank r+1, for
// PLANES planes a sweep, SWEEPS sweeps. Every receive finds its message sent
// already once the pipeline is full, so under `poems direct --early on` a
// rank runs through its planes without handing the turn to the engine
// (docs/PERFORMANCE.md, "Early completion"). The computation is a fixed loop
// over the plane (about WORK multiply-adds a plane), checked at the end.
//   poems-mpicc -O2 pipeline.c -o pipeline
//   poems direct ./pipeline -np 8 --early off -- 64 200 20000
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int planes = argc > 1 ? atoi(argv[1]) : 64;
  const int sweeps = argc > 2 ? atoi(argv[2]) : 200;
  const long work = argc > 3 ? atol(argv[3]) : 20000;
  if (planes < 1 || sweeps < 1 || work < 1) {
    if (rank == 0) fprintf(stderr, "usage: pipeline [PLANES >= 1] [SWEEPS >= 1] [WORK >= 1]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  enum { kPlane = 80 };  // doubles a message (640 B, NAS LU's exchange_1 at 8 ranks)
  double plane[kPlane];
  for (int i = 0; i < kPlane; ++i) plane[i] = rank + i * 1e-3;
  double checksum = 0;
  for (int s = 0; s < sweeps; ++s) {
    for (int p = 0; p < planes; ++p) {
      if (rank > 0) MPI_Recv(plane, kPlane, MPI_DOUBLE, rank - 1, p, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      double acc = plane[p % kPlane];
      for (long w = 0; w < work; ++w) acc = acc * 0.999999 + plane[w % kPlane] * 1e-9;
      plane[p % kPlane] = acc;
      checksum += acc;
      if (rank + 1 < size) MPI_Send(plane, kPlane, MPI_DOUBLE, rank + 1, p, MPI_COMM_WORLD);
    }
  }
  double total = 0;
  MPI_Reduce(&checksum, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("pipeline: %d ranks, %d planes x %d sweeps, checksum %.9e\n", size, planes, sweeps, total);
  MPI_Finalize();
  return 0;
}
