/* Floating-point reductions print the same last digits as under mpirun:
 * MPI_Reduce and MPI_Allreduce associate the ranks' contributions as Open
 * MPI 4.1 does (evaluators/direct/src/reduction_order.h), for small and large
 * messages (recursive doubling, Rabenseifner, ring, binary and binomial
 * trees, linear, pipeline) and any root. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int counts[] = {1, 2, 3, 7, 100, 600, 1500, 3000, 40000};
  const int kinds = (int)(sizeof counts / sizeof counts[0]);
  for (int k = 0; k < kinds; ++k) {
    const int n = counts[k];
    double* a = malloc(n * sizeof(double));
    double* b = malloc(n * sizeof(double));
    float* fa = malloc(n * sizeof(float));
    float* fb = malloc(n * sizeof(float));
    unsigned seed = 7919u * (unsigned)rank + (unsigned)k;
    for (int i = 0; i < n; ++i) {
      seed = seed * 1103515245u + 12345u;
      a[i] = (double)(seed >> 8) / (1 << 24) * 1e3 / (i + 1 + rank);
      fa[i] = (float)a[i];
    }
    /* A digest that depends on every element's last digits. */
    double h = 0;
    float fh = 0;
    MPI_Allreduce(a, b, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < n; ++i) h = h * 1.0000001 + b[i];
    MPI_Allreduce(fa, fb, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < n; ++i) fh = fh * 1.0000001f + fb[i];
    printf("rank %d allreduce n=%d %.17g %.9g\n", rank, n, h, (double)fh);
    const int root = k % size;
    MPI_Reduce(a, b, n, MPI_DOUBLE, MPI_SUM, root, MPI_COMM_WORLD);
    MPI_Reduce(rank == root ? MPI_IN_PLACE : fa, rank == root ? fa : NULL, n, MPI_FLOAT, MPI_SUM, root, MPI_COMM_WORLD);
    if (rank == root) {
      h = 0;
      fh = 0;
      for (int i = 0; i < n; ++i) {
        h = h * 1.0000001 + b[i];
        fh = fh * 1.0000001f + fa[i];
      }
      printf("reduce n=%d root=%d %.17g %.9g\n", n, root, h, (double)fh);
    }
    free(a);
    free(b);
    free(fa);
    free(fb);
  }
  MPI_Finalize();
  return 0;
}
