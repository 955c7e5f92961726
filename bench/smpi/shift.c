/* Every rank sends `bytes` to rank + k and receives from rank - k, for each
 * shift k given, all at once (Isend/Irecv, then Waitall): an explicit pattern
 * whose messages share links, the same under every MPI (no collective
 * algorithm to differ). "all" is every shift 1 .. size-1 (an all-to-all).
 *   shift BYTES K[,K...]|all */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int n = argc > 1 ? atoi(argv[1]) : 4096;
  int shifts[256], count = 0;
  if (argc > 2 && strcmp(argv[2], "all") != 0) {
    char* list = argv[2];
    for (char* k = strtok(list, ","); k && count < 256; k = strtok(NULL, ",")) shifts[count++] = atoi(k) % size;
  } else {
    for (int k = 1; k < size && count < 256; ++k) shifts[count++] = k;
  }
  char* out = calloc((size_t)n + 1, 1);
  char* in = calloc((size_t)n * count + 1, 1);
  MPI_Request* req = malloc(sizeof(MPI_Request) * 2 * (count + 1));
  const double t0 = MPI_Wtime();
  for (int i = 0; i < count; ++i)
    MPI_Irecv(in + (size_t)n * i, n, MPI_CHAR, (rank - shifts[i] + size) % size, i, MPI_COMM_WORLD, &req[i]);
  for (int i = 0; i < count; ++i)
    MPI_Isend(out, n, MPI_CHAR, (rank + shifts[i]) % size, i, MPI_COMM_WORLD, &req[count + i]);
  MPI_Waitall(2 * count, req, MPI_STATUSES_IGNORE);
  const double took = MPI_Wtime() - t0;
  printf("shift %d B x %d on %d ranks: rank %d left after %.1f ns\n", n, count, size, rank, took * 1e9);
  free(req);
  free(in);
  free(out);
  MPI_Finalize();
  return 0;
}
