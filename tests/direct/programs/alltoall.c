/* MPI_Alltoall's data, beside mpirun's: blocks large enough to be moved in
 * pieces (300 KiB a pair), in place, a strided send type and a strided
 * receive type, and on a split communicator whose ranks are not the world's;
 * MPI_Alltoallv with counts that differ by pair, strided and in place.
 * Direct execution moves a blocking all-to-all's blocks straight between the
 * ranks' buffers (docs/direct.md); a nonblocking one takes the packed path.
 * Each case prints a line per rank: a checksum of what it received and
 * whether every element is the one expected. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int value(int from, int to, int k) { return from * 1000003 + to * 7919 + k; }

static void report(const char *what, int rank, const int *got, int procs, int n, int stride) {
  long long sum = 0;
  int wrong = 0;
  for (int from = 0; from < procs; ++from)
    for (int k = 0; k < n; ++k) {
      const int v = got[(from * n + k) * stride];
      sum += v;
      wrong += v != value(from, rank, k);
    }
  printf("%s rank %d sum %lld wrong %d\n", what, rank, sum, wrong);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, procs;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &procs);
  const int n = 300 * 1024 / (int)sizeof(int); /* 300 KiB a pair */
  int *send = malloc(sizeof(int) * (size_t)procs * n * 2);
  int *recv = malloc(sizeof(int) * (size_t)procs * n * 2);
  for (int to = 0; to < procs; ++to)
    for (int k = 0; k < n; ++k) send[to * n + k] = value(rank, to, k);

  MPI_Alltoall(send, n, MPI_INT, recv, n, MPI_INT, MPI_COMM_WORLD);
  report("contiguous", rank, recv, procs, n, 1);

  for (int to = 0; to < procs; ++to)
    for (int k = 0; k < n; ++k) recv[to * n + k] = value(rank, to, k);
  MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, n, MPI_INT, MPI_COMM_WORLD);
  report("in-place", rank, recv, procs, n, 1);

  /* Every other int: the send blocks strided, the receive contiguous, then the reverse. */
  MPI_Datatype every_other, strided;
  MPI_Type_vector(n, 1, 2, MPI_INT, &every_other);
  MPI_Type_create_resized(every_other, 0, (MPI_Aint)sizeof(int) * 2 * n, &strided);
  MPI_Type_commit(&strided);
  for (int to = 0; to < procs; ++to)
    for (int k = 0; k < n; ++k) {
      send[(to * n + k) * 2] = value(rank, to, k);
      send[(to * n + k) * 2 + 1] = -1;
    }
  MPI_Alltoall(send, 1, strided, recv, n, MPI_INT, MPI_COMM_WORLD);
  report("strided-send", rank, recv, procs, n, 1);
  for (int to = 0; to < procs; ++to)
    for (int k = 0; k < n; ++k) send[to * n + k] = value(rank, to, k);
  for (int i = 0; i < procs * n * 2; ++i) recv[i] = -2;
  MPI_Alltoall(send, n, MPI_INT, recv, 1, strided, MPI_COMM_WORLD);
  report("strided-recv", rank, recv, procs, n, 2);
  int untouched = 0;
  for (int i = 1; i < procs * n * 2; i += 2) untouched += recv[i] == -2;
  printf("strided-recv rank %d gaps untouched %d\n", rank, untouched == procs * n);
  MPI_Type_free(&strided);
  MPI_Type_free(&every_other);

  /* The odd and the even ranks apart, in reverse order. */
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
  int hrank, hprocs;
  MPI_Comm_rank(half, &hrank);
  MPI_Comm_size(half, &hprocs);
  for (int to = 0; to < hprocs; ++to)
    for (int k = 0; k < 16; ++k) send[to * 16 + k] = value(hrank, to, k);
  MPI_Alltoall(send, 16, MPI_INT, recv, 16, MPI_INT, half);
  report(rank % 2 ? "odd" : "even", hrank, recv, hprocs, 16, 1);

  /* Alltoallv: rank r sends 1000 * (r + 1) + j ints to rank j, at
   * displacements in reverse order of the peers; then the same with a
   * strided receive type (every other int), then in place. */
  int *scounts = malloc(sizeof(int) * (size_t)procs), *sdispls = malloc(sizeof(int) * (size_t)procs);
  int *rcounts = malloc(sizeof(int) * (size_t)procs), *rdispls = malloc(sizeof(int) * (size_t)procs);
  int stotal = 0, rtotal = 0;
  for (int j = procs - 1; j >= 0; --j) {
    scounts[j] = 1000 * (rank + 1) + j;
    sdispls[j] = stotal;
    stotal += scounts[j];
  }
  for (int i = 0; i < procs; ++i) {
    rcounts[i] = 1000 * (i + 1) + rank;
    rdispls[i] = rtotal;
    rtotal += rcounts[i];
  }
  for (int j = 0; j < procs; ++j)
    for (int k = 0; k < scounts[j]; ++k) send[sdispls[j] + k] = value(rank, j, k);
  MPI_Alltoallv(send, scounts, sdispls, MPI_INT, recv, rcounts, rdispls, MPI_INT, MPI_COMM_WORLD);
  long long vsum = 0;
  int vwrong = 0;
  for (int i = 0; i < procs; ++i)
    for (int k = 0; k < rcounts[i]; ++k) {
      vsum += recv[rdispls[i] + k];
      vwrong += recv[rdispls[i] + k] != value(i, rank, k);
    }
  printf("alltoallv rank %d sum %lld wrong %d\n", rank, vsum, vwrong);
  MPI_Datatype two, pair;
  MPI_Type_vector(1, 1, 2, MPI_INT, &two);
  MPI_Type_create_resized(two, 0, (MPI_Aint)sizeof(int) * 2, &pair);
  MPI_Type_commit(&pair);
  for (int i = 0; i < 2 * rtotal; ++i) recv[i] = -3;
  MPI_Alltoallv(send, scounts, sdispls, MPI_INT, recv, rcounts, rdispls, pair, MPI_COMM_WORLD);
  vsum = 0;
  vwrong = 0;
  for (int i = 0; i < procs; ++i)
    for (int k = 0; k < rcounts[i]; ++k) {
      vsum += recv[2 * (rdispls[i] + k)];
      vwrong += recv[2 * (rdispls[i] + k)] != value(i, rank, k) || recv[2 * (rdispls[i] + k) + 1] != -3;
    }
  printf("alltoallv-strided rank %d sum %lld wrong %d\n", rank, vsum, vwrong);
  MPI_Type_free(&pair);
  MPI_Type_free(&two);
  /* In place: equal counts both ways (each pair swaps 500 + i + j ints). */
  int total = 0;
  for (int j = 0; j < procs; ++j) {
    scounts[j] = 500 + rank + j;
    sdispls[j] = total;
    total += scounts[j];
  }
  for (int j = 0; j < procs; ++j)
    for (int k = 0; k < scounts[j]; ++k) recv[sdispls[j] + k] = value(rank, j, k);
  MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, recv, scounts, sdispls, MPI_INT, MPI_COMM_WORLD);
  vsum = 0;
  vwrong = 0;
  for (int i = 0; i < procs; ++i)
    for (int k = 0; k < scounts[i]; ++k) {
      vsum += recv[sdispls[i] + k];
      vwrong += recv[sdispls[i] + k] != value(i, rank, k);
    }
  printf("alltoallv-in-place rank %d sum %lld wrong %d\n", rank, vsum, vwrong);
  free(scounts);
  free(sdispls);
  free(rcounts);
  free(rdispls);

  /* Nonblocking: the packed path. */
  for (int to = 0; to < procs; ++to)
    for (int k = 0; k < 64; ++k) send[to * 64 + k] = value(rank, to, k);
  MPI_Request request;
  MPI_Ialltoall(send, 64, MPI_INT, recv, 64, MPI_INT, MPI_COMM_WORLD, &request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  report("nonblocking", rank, recv, procs, 64, 1);

  MPI_Comm_free(&half);
  free(send);
  free(recv);
  MPI_Finalize();
  return 0;
}
