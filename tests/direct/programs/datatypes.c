/* Derived datatypes: contiguous, vector, hvector, indexed, hindexed,
 * indexed_block, struct, subarray, resized; extents and sizes; pack and
 * unpack; Get_count and Get_elements; a column of a matrix sent as a vector
 * and received as contiguous. Same lines as under mpirun. Run with 2+ ranks. */
#include <mpi.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

struct Particle {
  double x[3];
  int id;
  char tag;
};

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  MPI_Datatype contig, column, hvec, indexed, hindexed, block, particle, sub, resized;
  MPI_Type_contiguous(3, MPI_DOUBLE, &contig);
  MPI_Type_vector(4, 1, 5, MPI_INT, &column); /* one column of a 4x5 int matrix */
  MPI_Type_create_hvector(2, 2, 3 * sizeof(double), MPI_DOUBLE, &hvec);
  int lens[3] = {2, 1, 3}, disps[3] = {0, 4, 7};
  MPI_Type_indexed(3, lens, disps, MPI_INT, &indexed);
  MPI_Aint hdisps[2] = {0, 3 * sizeof(int)};
  int hlens[2] = {1, 2};
  MPI_Type_create_hindexed(2, hlens, hdisps, MPI_INT, &hindexed);
  int bdisps[3] = {5, 1, 3};
  MPI_Type_create_indexed_block(3, 2, bdisps, MPI_SHORT, &block);
  int plens[3] = {3, 1, 1};
  MPI_Aint pdisps[3] = {offsetof(struct Particle, x), offsetof(struct Particle, id), offsetof(struct Particle, tag)};
  MPI_Datatype ptypes[3] = {MPI_DOUBLE, MPI_INT, MPI_CHAR};
  MPI_Type_create_struct(3, plens, pdisps, ptypes, &particle);
  int sizes[2] = {6, 8}, subsizes[2] = {3, 4}, starts[2] = {2, 3};
  MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_C, MPI_DOUBLE, &sub);
  MPI_Type_create_resized(column, 0, sizeof(int), &resized); /* consecutive columns */
  MPI_Datatype all[9] = {contig, column, hvec, indexed, hindexed, block, particle, sub, resized};
  const char* names[9] = {"contig",        "column", "hvector",  "indexed", "hindexed",
                          "indexed_block", "struct", "subarray", "resized"};
  for (int i = 0; i < 9; ++i) {
    MPI_Type_commit(&all[i]);
    int tsize;
    MPI_Aint lb, extent, tlb, textent;
    MPI_Type_size(all[i], &tsize);
    MPI_Type_get_extent(all[i], &lb, &extent);
    MPI_Type_get_true_extent(all[i], &tlb, &textent);
    if (rank == 0)
      printf("%s: size %d lb %ld extent %ld true %ld %ld\n", names[i], tsize, (long)lb, (long)extent, (long)tlb,
             (long)textent);
  }
  contig = all[0];
  column = all[1];
  particle = all[6];
  sub = all[7];
  resized = all[8];

  if (size >= 2 && rank < 2) {
    int peer = 1 - rank;
    /* A column as a vector, received contiguous. */
    int m[4][5];
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 5; ++j) m[i][j] = rank * 100 + i * 10 + j;
    int col[4] = {0, 0, 0, 0};
    MPI_Sendrecv(&m[0][2], 1, column, peer, 1, col, 4, MPI_INT, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("%d: column %d %d %d %d\n", rank, col[0], col[1], col[2], col[3]);
    /* Two consecutive columns with the resized type. */
    int cols[4][5];
    memset(cols, 0, sizeof cols);
    MPI_Sendrecv(&m[0][1], 2, resized, peer, 2, &cols[0][1], 2, resized, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("%d: two columns %d %d %d %d\n", rank, cols[0][1], cols[0][2], cols[3][1], cols[3][2]);
    /* Structs with padding. */
    struct Particle ps[2], pr[2];
    memset(ps, 0, sizeof ps);
    memset(pr, 0, sizeof pr);
    for (int i = 0; i < 2; ++i) {
      ps[i].x[0] = rank + i;
      ps[i].x[1] = 0.5 * i;
      ps[i].x[2] = -1.0;
      ps[i].id = 10 * rank + i;
      ps[i].tag = (char)('a' + rank + i);
    }
    MPI_Status st;
    MPI_Sendrecv(ps, 2, particle, peer, 3, pr, 2, particle, peer, 3, MPI_COMM_WORLD, &st);
    int n, elements;
    MPI_Get_count(&st, particle, &n);
    MPI_Get_elements(&st, particle, &elements);
    printf("%d: particles %d (%d elements) %.1f %.1f %d %c %d %c\n", rank, n, elements, pr[0].x[0], pr[1].x[1],
           pr[0].id, pr[0].tag, pr[1].id, pr[1].tag);
    /* A subarray of a 6x8 grid. */
    double grid[6][8], into[3][4];
    for (int i = 0; i < 6; ++i)
      for (int j = 0; j < 8; ++j) grid[i][j] = rank + i * 8 + j;
    MPI_Sendrecv(grid, 1, sub, peer, 4, into, 12, MPI_DOUBLE, peer, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("%d: subarray %.0f %.0f %.0f\n", rank, into[0][0], into[1][2], into[2][3]);
    /* A partial receive of a derived type: Get_count is undefined, Get_elements is not. */
    double three[3] = {1, 2, 3}, got[6] = {0};
    if (rank == 0) MPI_Send(three, 2, MPI_DOUBLE, 1, 5, MPI_COMM_WORLD);
    if (rank == 1) {
      MPI_Recv(got, 2, contig, 0, 5, MPI_COMM_WORLD, &st);
      MPI_Get_count(&st, contig, &n);
      MPI_Get_elements(&st, contig, &elements);
      printf("%d: partial count %s elements %d\n", rank, n == MPI_UNDEFINED ? "undefined" : "defined", elements);
    }
  }

  /* Pack and unpack. */
  char packbuf[256];
  int position = 0, psize;
  double d[3] = {rank + 0.5, 2.0, 3.0};
  int ints[2] = {rank, 42};
  MPI_Pack(d, 1, contig, packbuf, sizeof packbuf, &position, MPI_COMM_WORLD);
  MPI_Pack(ints, 2, MPI_INT, packbuf, sizeof packbuf, &position, MPI_COMM_WORLD);
  MPI_Pack_size(1, contig, MPI_COMM_WORLD, &psize);
  MPI_Bcast(packbuf, position, MPI_PACKED, 0, MPI_COMM_WORLD);
  double d2[3];
  int i2[2];
  int at = 0;
  MPI_Unpack(packbuf, sizeof packbuf, &at, d2, 1, contig, MPI_COMM_WORLD);
  MPI_Unpack(packbuf, sizeof packbuf, &at, i2, 2, MPI_INT, MPI_COMM_WORLD);
  printf("%d: packed %d bytes (contig %d): %.1f %.1f %d %d\n", rank, position, psize, d2[0], d2[2], i2[0], i2[1]);

  /* A broadcast of a contiguous type. */
  double v[3] = {rank, 1.0, 2.0 * rank + 1};
  MPI_Bcast(v, 1, contig, size - 1, MPI_COMM_WORLD);
  printf("%d: bcast contig %.1f %.1f %.1f\n", rank, v[0], v[1], v[2]);

  MPI_Datatype dup;
  MPI_Type_dup(particle, &dup);
  int ni, na, nd, combiner;
  MPI_Type_get_envelope(dup, &ni, &na, &nd, &combiner);
  if (rank == 0) printf("dup envelope %d %d %d %s\n", ni, na, nd, combiner == MPI_COMBINER_DUP ? "dup" : "other");
  MPI_Type_free(&dup);
  for (int i = 0; i < 9; ++i) MPI_Type_free(&all[i]);
  if (rank == 0) printf("freed %s\n", all[0] == MPI_DATATYPE_NULL ? "null" : "not null");
  MPI_Finalize();
  return 0;
}
