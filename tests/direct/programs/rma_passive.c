/* Passive-target one-sided communication: what a target reads in its own
 * window after the origin's MPI_Win_unlock / MPI_Win_flush* and a barrier
 * (MPI 3.1 11.5.4, unified memory model), and what a get under a lock reads
 * after the target's stores and a barrier. The barrier carries no data, so
 * only it orders the origin's access before the target's loads. Same lines
 * as under mpirun (with --mca osc pt2pt: osc/rdma refuses MPI_COMM_SELF
 * windows here). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static void print_ints(const char* what, int rank, const int* v, int n) {
  printf("%d: %s", rank, what);
  for (int i = 0; i < n; ++i) printf(" %d", v[i]);
  printf("\n");
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int next = (rank + 1) % size;

  int buf[4] = {-1, -1, -1, -1};
  MPI_Win win;
  MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);

  /* Lock, put, unlock: the put is complete at the target when unlock returns. */
  if (rank == 0) {
    const int v[3] = {1, 2, 3};
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
    MPI_Put(v, 3, MPI_INT, 1, 0, 3, MPI_INT, win);
    MPI_Win_unlock(1, win);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 1) print_ints("lock put unlock", rank, buf, 3);
  MPI_Barrier(MPI_COMM_WORLD);

  /* Lock_all, put to the next rank, flush, unlock_all. */
  int mine[4] = {10 * rank + 1, 10 * rank + 2, 10 * rank + 3, 10 * rank + 4};
  MPI_Win_lock_all(0, win);
  MPI_Put(mine, 2, MPI_INT, next, 0, 2, MPI_INT, win);
  MPI_Win_flush(next, win);
  MPI_Win_unlock_all(win);
  MPI_Barrier(MPI_COMM_WORLD);
  print_ints("lock_all put flush", rank, buf, 2);
  MPI_Barrier(MPI_COMM_WORLD);

  /* Flush_local: the origin buffer may be reused at once; the target holds
   * what was put when it was read (at unlock_all at the latest). */
  MPI_Win_lock_all(0, win);
  MPI_Put(&mine[2], 2, MPI_INT, next, 2, 2, MPI_INT, win);
  MPI_Win_flush_local(next, win);
  mine[2] = mine[3] = -7;
  MPI_Win_unlock_all(win);
  MPI_Barrier(MPI_COMM_WORLD);
  print_ints("flush_local", rank, buf, 4);
  MPI_Barrier(MPI_COMM_WORLD);

  /* Flush_all inside one lock_all epoch of every rank, a few rounds (as in
   * a transpose): puts to every rank, flush_all, then the targets read
   * after MPI_Win_sync and a barrier. */
  int* all;
  MPI_Win awin;
  MPI_Win_allocate((MPI_Aint)(size * sizeof(int)), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &all, &awin);
  for (int i = 0; i < size; ++i) all[i] = -1;
  MPI_Win_lock_all(0, awin);
  MPI_Win_sync(awin);
  MPI_Barrier(MPI_COMM_WORLD);
  for (int round = 1; round <= 3; ++round) {
    const int v = 100 * round + rank;
    for (int p = 0; p < size; ++p) MPI_Put(&v, 1, MPI_INT, p, rank, 1, MPI_INT, awin);
    MPI_Win_flush_all(awin);
    MPI_Win_sync(awin);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_sync(awin);
    int sum = 0, wrong = 0;
    for (int p = 0; p < size; ++p) {
      sum += all[p];
      wrong += all[p] != 100 * round + p;
    }
    printf("%d: flush_all round %d sum %d wrong %d\n", rank, round, sum, wrong);
    MPI_Barrier(MPI_COMM_WORLD); /* everyone has read before the next round's puts */
  }
  MPI_Win_unlock_all(awin);
  MPI_Win_free(&awin);

  /* Get under a shared lock: the target's own stores before the barrier. */
  buf[0] = 1000 + rank;
  buf[1] = 2000 + rank;
  MPI_Barrier(MPI_COMM_WORLD);
  int got[2] = {-1, -1};
  MPI_Win_lock(MPI_LOCK_SHARED, next, 0, win);
  MPI_Get(got, 2, MPI_INT, next, 0, 2, MPI_INT, win);
  MPI_Win_unlock(next, win);
  print_ints("shared lock get", rank, got, 2);
  /* ... and under lock_all, which need not wait for the target. */
  MPI_Barrier(MPI_COMM_WORLD);
  buf[2] = 3000 + rank;
  MPI_Barrier(MPI_COMM_WORLD);
  int third = -1;
  MPI_Win_lock_all(0, win);
  MPI_Get(&third, 1, MPI_INT, next, 2, 1, MPI_INT, win);
  MPI_Win_unlock_all(win);
  printf("%d: lock_all get %d\n", rank, third);

  /* Accumulate under an exclusive lock from every rank into rank 0. */
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) buf[3] = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  const int one = 1;
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
  MPI_Accumulate(&one, 1, MPI_INT, 0, 3, 1, MPI_INT, MPI_SUM, win);
  MPI_Win_unlock(0, win);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("%d: accumulated %d\n", rank, buf[3]);

  /* Rank 1 waits in MPI_Win_unlock_all for its put to complete while rank
   * 0 (after its message) creates windows of its own. */
  MPI_Barrier(MPI_COMM_WORLD);
  int self_mem[8];
  MPI_Win self[8];
  if (rank == 1) {
    const int v = 5;
    MPI_Win_lock_all(0, win);
    MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
    MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
    MPI_Win_unlock_all(win);
  } else if (rank == 0) {
    int v;
    MPI_Recv(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < 8; ++i)
      MPI_Win_create(&self_mem[i], sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_SELF, &self[i]);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    printf("%d: put while windows were created %d\n", rank, buf[0]);
    for (int i = 0; i < 8; ++i) MPI_Win_free(&self[i]);
  }

  /* A dynamic window: rank 0 puts 256 KiB of bytes into rank 1's attached
   * memory in one MPI_Put (one contiguous piece, however many bytes). */
  {
    enum { kBytes = 1 << 18 };
    char* mem = malloc(kBytes);
    char* src = malloc(kBytes);
    for (int i = 0; i < kBytes; ++i) {
      mem[i] = 0;
      src[i] = (char)(i % 251);
    }
    MPI_Win dyn;
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &dyn);
    MPI_Win_attach(dyn, mem, kBytes);
    MPI_Aint mine, at = 0;
    MPI_Get_address(mem, &mine);
    if (size > 1) {
      if (rank == 1) MPI_Send(&mine, 1, MPI_AINT, 0, 1, MPI_COMM_WORLD);
      if (rank == 0) MPI_Recv(&at, 1, MPI_AINT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, dyn);
        MPI_Put(src, kBytes, MPI_CHAR, 1, at, kBytes, MPI_CHAR, dyn);
        MPI_Win_unlock(1, dyn);
      }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {
      long sum = 0;
      for (int i = 0; i < kBytes; ++i) sum += mem[i];
      printf("%d: dynamic window put sum %ld\n", rank, sum);
    }
    MPI_Win_detach(dyn, mem);
    MPI_Win_free(&dyn);
    free(mem);
    free(src);
  }

  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
