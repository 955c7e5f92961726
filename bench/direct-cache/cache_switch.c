/* How much rank switching costs direct execution's measured computation
 * (issue 42 item 3, docs/direct.md "Computation and the caches").
 *
 * Each rank owns an array of BYTES bytes and runs SEGMENTS segments of
 * PASSES read-modify-write passes over it, each segment ended by an
 * MPI_Barrier: in order (`stream`, which the hardware prefetches) or in a
 * random order (`random`, each access waits for its line: the worst case
 * for a rank that finds its data evicted). Under `poems direct` the ranks take turns on one host core,
 * so a rank's segment may start on caches the other ranks filled; a 1-rank
 * run does the same per-rank work without switching. The per-rank compute
 * the direct runtime measures, against the 1-rank run's, is the cost.
 *
 *   cache_switch stream|random BYTES PASSES SEGMENTS
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int random = argc == 5 && strcmp(argv[1], "random") == 0;
  if (argc != 5 || (!random && strcmp(argv[1], "stream") != 0)) {
    if (rank == 0) fprintf(stderr, "usage: cache_switch stream|random BYTES PASSES SEGMENTS\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const long bytes = atol(argv[2]), passes = atol(argv[3]), segments = atol(argv[4]);
  if (bytes < 64 || passes < 1 || segments < 1) {
    if (rank == 0) fprintf(stderr, "cache_switch: BYTES >= 64, PASSES >= 1, SEGMENTS >= 1\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const long n = bytes / (long)sizeof(double);
  double* a = malloc((size_t)n * sizeof(double));
  long* order = malloc((size_t)n * sizeof(long));
  if (!a || !order) MPI_Abort(MPI_COMM_WORLD, 3);
  /* The order: in place, or a random permutation (a fixed seed per rank). */
  unsigned long long x = 88172645463325252ULL + (unsigned long long)rank;
  for (long i = 0; i < n; ++i) a[i] = (double)(i % 7), order[i] = i;
  for (long i = n - 1; random && i > 0; --i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    const long j = (long)(x % (unsigned long long)(i + 1)), t = order[i];
    order[i] = order[j], order[j] = t;
  }
  MPI_Barrier(MPI_COMM_WORLD);
  for (long s = 0; s < segments; ++s) {
    for (long p = 0; p < passes; ++p)
      for (long i = 0; i < n; ++i) a[order[i]] = a[order[i]] * 0.999999 + 1e-6;
    MPI_Barrier(MPI_COMM_WORLD);
  }
  double sum = 0;
  for (long i = 0; i < n; ++i) sum += a[i];
  double total = 0;
  MPI_Reduce(&sum, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("cache_switch checksum %.6f\n", total);
  free(a);
  free(order);
  MPI_Finalize();
  return 0;
}
