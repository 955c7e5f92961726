/* One-sided communication: windows created, allocated and from
 * MPI_Alloc_mem; fence epochs with put, get and accumulate; passive target
 * with lock/unlock, lock_all/flush; fetch_and_op, compare_and_swap,
 * get_accumulate; a window attribute. Same lines as under mpirun. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;

  /* Fence: every rank puts its number into the next rank's window, gets
   * the previous rank's second element, and all add into rank 0's counter. */
  int buf[4] = {0, rank * 10, 0, 0};
  MPI_Win win;
  MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Win_fence(0, win);
  int me = rank + 1, got = -1, one = 1;
  MPI_Put(&me, 1, MPI_INT, next, 0, 1, MPI_INT, win);
  MPI_Get(&got, 1, MPI_INT, prev, 1, 1, MPI_INT, win);
  MPI_Accumulate(&one, 1, MPI_INT, 0, 2, 1, MPI_INT, MPI_SUM, win);
  MPI_Win_fence(0, win);
  printf("%d: fence put %d get %d\n", rank, buf[0], got);
  if (rank == 0) printf("%d: accumulated %d\n", rank, buf[2]);
  int* base;
  int flag;
  MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &flag);
  printf("%d: win base is the buffer: %d\n", rank, flag && base == buf);
  MPI_Win_free(&win);

  /* Passive target on memory from MPI_Win_allocate. */
  long* mem;
  MPI_Win awin;
  MPI_Win_allocate(2 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &awin);
  mem[0] = 0;
  mem[1] = 1000 + rank;
  MPI_Barrier(MPI_COMM_WORLD);
  long ticket = -1, add = 1;
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, awin);
  MPI_Fetch_and_op(&add, &ticket, MPI_LONG, 0, 0, MPI_SUM, awin);
  MPI_Win_unlock(0, awin);
  MPI_Barrier(MPI_COMM_WORLD);
  long tickets = 0;
  MPI_Reduce(&ticket, &tickets, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("%d: counter %ld ticket sum %ld\n", rank, mem[0], tickets);
  /* lock_all + flush: read every rank's second element. */
  long sum = 0;
  MPI_Win_lock_all(0, awin);
  for (int p = 0; p < size; ++p) {
    long v = 0;
    MPI_Get(&v, 1, MPI_LONG, p, 1, 1, MPI_LONG, awin);
    MPI_Win_flush(p, awin);
    sum += v;
  }
  MPI_Win_unlock_all(awin);
  printf("%d: lock_all sum %ld\n", rank, sum);
  MPI_Barrier(MPI_COMM_WORLD);
  /* Compare-and-swap: only the first rank to try succeeds. */
  long expected = 1000, mine = 2000 + rank, old = -1;
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, awin);
  MPI_Compare_and_swap(&mine, &expected, &old, MPI_LONG, 0, 1, awin);
  MPI_Win_unlock(0, awin);
  int won = old == 1000, winners = 0;
  MPI_Allreduce(&won, &winners, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  printf("%d: compare_and_swap winners %d\n", rank, winners);
  MPI_Win_free(&awin);

  /* Get_accumulate on MPI_Alloc_mem memory with MPI_REPLACE (a swap). */
  double* dm;
  MPI_Alloc_mem(sizeof(double), MPI_INFO_NULL, &dm);
  *dm = rank * 1.5;
  MPI_Win dwin;
  MPI_Win_create(dm, sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &dwin);
  double newval = 100.0 + rank, oldval = -1;
  MPI_Win_lock(MPI_LOCK_SHARED, next, 0, dwin);
  MPI_Get_accumulate(&newval, 1, MPI_DOUBLE, &oldval, 1, MPI_DOUBLE, next, 0, 1, MPI_DOUBLE, MPI_REPLACE, dwin);
  MPI_Win_unlock(next, dwin);
  MPI_Barrier(MPI_COMM_WORLD);
  printf("%d: swap old %.1f now %.1f\n", rank, oldval, *dm);
  MPI_Win_free(&dwin);
  MPI_Free_mem(dm);
  MPI_Finalize();
  return 0;
}
