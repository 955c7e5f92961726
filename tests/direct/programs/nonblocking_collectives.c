/* Nonblocking collectives, overlapped with point-to-point and with each
 * other; results checked after the waits. Same lines as under mpirun. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Request r[10];
  int n = 0;
  double bval = rank == 0 ? 3.25 : 0.0;
  MPI_Ibcast(&bval, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD, &r[n++]);
  int mine = rank + 1, sum = 0, mx = 0;
  MPI_Iallreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r[n++]);
  MPI_Ireduce(&mine, &mx, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD, &r[n++]);
  int gathered[64], scattered = -1, all[64], a2a_in[64], a2a_out[64];
  MPI_Igather(&mine, 1, MPI_INT, gathered, 1, MPI_INT, 0, MPI_COMM_WORLD, &r[n++]);
  int src[64];
  for (int i = 0; i < size; ++i) src[i] = 5 * i;
  MPI_Iscatter(src, 1, MPI_INT, &scattered, 1, MPI_INT, 0, MPI_COMM_WORLD, &r[n++]);
  MPI_Iallgather(&mine, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD, &r[n++]);
  for (int i = 0; i < size; ++i) a2a_in[i] = rank * 10 + i;
  MPI_Ialltoall(a2a_in, 1, MPI_INT, a2a_out, 1, MPI_INT, MPI_COMM_WORLD, &r[n++]);
  MPI_Ibarrier(MPI_COMM_WORLD, &r[n++]);
  /* Point to point while the collectives are in flight. */
  int token = rank, back = -1;
  MPI_Sendrecv(&token, 1, MPI_INT, (rank + 1) % size, 3, &back, 1, MPI_INT, (rank + size - 1) % size, 3, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  MPI_Waitall(n, r, MPI_STATUSES_IGNORE);
  printf("%d: ibcast %.2f iallreduce %d sendrecv %d iscatter %d\n", rank, bval, sum, back, scattered);
  if (rank == 0) {
    printf("%d: ireduce %d igather", rank, mx);
    for (int i = 0; i < size; ++i) printf(" %d", gathered[i]);
    printf("\n");
  }
  printf("%d: iallgather", rank);
  for (int i = 0; i < size; ++i) printf(" %d", all[i]);
  printf(" ialltoall");
  for (int i = 0; i < size; ++i) printf(" %d", a2a_out[i]);
  printf("\n");
  /* v-variants and scans, completed with MPI_Test in a loop. */
  int counts[64], displs[64], vout[256], vin[64];
  for (int i = 0; i < size; ++i) {
    counts[i] = i + 1;
    displs[i] = i * (i + 1) / 2;
  }
  for (int i = 0; i <= rank; ++i) vin[i] = rank;
  MPI_Request v[4];
  MPI_Iallgatherv(vin, rank + 1, MPI_INT, vout, counts, displs, MPI_INT, MPI_COMM_WORLD, &v[0]);
  int scan = 0, exscan = 0;
  MPI_Iscan(&mine, &scan, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &v[1]);
  MPI_Iexscan(&mine, &exscan, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &v[2]);
  int rsb_in[64], rsb_out = 0;
  for (int i = 0; i < size; ++i) rsb_in[i] = i + rank;
  MPI_Ireduce_scatter_block(rsb_in, &rsb_out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &v[3]);
  int flag = 0;
  while (!flag) MPI_Testall(4, v, &flag, MPI_STATUSES_IGNORE);
  int total = displs[size - 1] + counts[size - 1];
  long check = 0;
  for (int i = 0; i < total; ++i) check = check * 3 + vout[i];
  printf("%d: iallgatherv %ld iscan %d iexscan %d ireduce_scatter_block %d\n", rank, check, scan,
         rank == 0 ? 0 : exscan, rsb_out);
  MPI_Finalize();
  return 0;
}
