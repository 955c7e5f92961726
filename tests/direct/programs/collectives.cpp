// Collectives: fixed and v-variants, MPI_IN_PLACE, reduce_scatter(_block),
// scan/exscan, a user-defined operator, MINLOC, complex sums, reduce_local.
// Prints the same lines under mpirun and `poems direct` (sorted). Any size.
#include <mpi.h>

#include <complex>
#include <cstdio>
#include <numeric>
#include <vector>

namespace {

// Element-wise a*b+... : a non-commutative operator (2x2 matrix product on pairs).
void matmul(void* in, void* inout, int* len, MPI_Datatype*) {
  auto* a = static_cast<int*>(in);
  auto* b = static_cast<int*>(inout);
  for (int i = 0; i + 3 < *len; i += 4) {  // len counts the ints: four per matrix
    int* x = a + i;
    int* y = b + i;
    const int r0 = x[0] * y[0] + x[1] * y[2], r1 = x[0] * y[1] + x[1] * y[3];
    const int r2 = x[2] * y[0] + x[3] * y[2], r3 = x[2] * y[1] + x[3] * y[3];
    y[0] = r0 % 1000;
    y[1] = r1 % 1000;
    y[2] = r2 % 1000;
    y[3] = r3 % 1000;
  }
}

template <typename T>
void print(int rank, const char* what, const std::vector<T>& v) {
  std::printf("%d: %s", rank, what);
  for (const T& x : v) std::printf(" %g", static_cast<double>(x));
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int root = size > 1 ? 1 : 0;

  std::vector<double> b(4, 0.0);
  if (rank == root) b = {1.5, 2.5, 3.5, 4.5};
  MPI_Bcast(b.data(), 4, MPI_DOUBLE, root, MPI_COMM_WORLD);
  print(rank, "bcast", b);

  std::vector<int> mine = {rank, rank * rank, 7}, sum(3), mx(3);
  MPI_Reduce(mine.data(), sum.data(), 3, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
  if (rank == root) print(rank, "reduce", sum);
  MPI_Allreduce(mine.data(), mx.data(), 3, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  print(rank, "allreduce max", mx);
  std::vector<long> inplace = {static_cast<long>(rank) + 1, 2};
  MPI_Allreduce(MPI_IN_PLACE, inplace.data(), 2, MPI_LONG, MPI_PROD, MPI_COMM_WORLD);
  print(rank, "allreduce in place", inplace);

  std::vector<int> all(static_cast<std::size_t>(size) * 2);
  const int pair[2] = {rank, -rank};
  MPI_Gather(pair, 2, MPI_INT, all.data(), 2, MPI_INT, 0, MPI_COMM_WORLD);
  if (rank == 0) print(rank, "gather", all);
  MPI_Allgather(pair, 2, MPI_INT, all.data(), 2, MPI_INT, MPI_COMM_WORLD);
  print(rank, "allgather", all);
  std::vector<int> part(2);
  for (int i = 0; i < 2 * size; ++i) all[static_cast<std::size_t>(i)] = 10 * i;
  MPI_Scatter(all.data(), 2, MPI_INT, part.data(), 2, MPI_INT, 0, MPI_COMM_WORLD);
  print(rank, "scatter", part);
  std::vector<int> a2a(static_cast<std::size_t>(size)), got(static_cast<std::size_t>(size));
  for (int i = 0; i < size; ++i) a2a[static_cast<std::size_t>(i)] = 100 * rank + i;
  MPI_Alltoall(a2a.data(), 1, MPI_INT, got.data(), 1, MPI_INT, MPI_COMM_WORLD);
  print(rank, "alltoall", got);

  // v-collectives: rank i contributes i+1 elements.
  std::vector<int> counts(static_cast<std::size_t>(size)), displs(static_cast<std::size_t>(size));
  for (int i = 0; i < size; ++i) {
    counts[static_cast<std::size_t>(i)] = i + 1;
    displs[static_cast<std::size_t>(i)] = i * (i + 1) / 2 + i;  // a gap of one between blocks
  }
  const int total = displs.back() + counts.back();
  std::vector<int> contribution(static_cast<std::size_t>(rank) + 1, rank + 1),
      gathered(static_cast<std::size_t>(total), -1);
  MPI_Gatherv(contribution.data(), rank + 1, MPI_INT, gathered.data(), counts.data(), displs.data(), MPI_INT, root,
              MPI_COMM_WORLD);
  if (rank == root) print(rank, "gatherv", gathered);
  std::fill(gathered.begin(), gathered.end(), -1);
  MPI_Allgatherv(contribution.data(), rank + 1, MPI_INT, gathered.data(), counts.data(), displs.data(), MPI_INT,
                 MPI_COMM_WORLD);
  print(rank, "allgatherv", gathered);
  std::vector<int> source(static_cast<std::size_t>(total));
  std::iota(source.begin(), source.end(), 0);
  std::vector<int> piece(static_cast<std::size_t>(rank) + 1);
  MPI_Scatterv(source.data(), counts.data(), displs.data(), MPI_INT, piece.data(), rank + 1, MPI_INT, root,
               MPI_COMM_WORLD);
  print(rank, "scatterv", piece);
  // Alltoallv: rank r sends j+1 copies of r to rank j.
  std::vector<int> scounts(static_cast<std::size_t>(size)), sdispls(static_cast<std::size_t>(size)),
      rcounts(static_cast<std::size_t>(size)), rdispls(static_cast<std::size_t>(size));
  int so = 0, ro = 0;
  for (int j = 0; j < size; ++j) {
    scounts[static_cast<std::size_t>(j)] = j + 1;
    sdispls[static_cast<std::size_t>(j)] = so;
    so += j + 1;
    rcounts[static_cast<std::size_t>(j)] = rank + 1;
    rdispls[static_cast<std::size_t>(j)] = ro;
    ro += rank + 1;
  }
  std::vector<int> sendv(static_cast<std::size_t>(so), rank), recvv(static_cast<std::size_t>(ro), -1);
  MPI_Alltoallv(sendv.data(), scounts.data(), sdispls.data(), MPI_INT, recvv.data(), rcounts.data(), rdispls.data(),
                MPI_INT, MPI_COMM_WORLD);
  print(rank, "alltoallv", recvv);
  // Alltoallw with byte displacements and one type per peer.
  std::vector<int> wsd(static_cast<std::size_t>(size)), wrd(static_cast<std::size_t>(size)),
      wc(static_cast<std::size_t>(size), 1);
  std::vector<MPI_Datatype> wt(static_cast<std::size_t>(size), MPI_DOUBLE);
  std::vector<double> wsend(static_cast<std::size_t>(size)), wrecv(static_cast<std::size_t>(size), -1);
  for (int j = 0; j < size; ++j) {
    wsd[static_cast<std::size_t>(j)] = j * static_cast<int>(sizeof(double));
    wrd[static_cast<std::size_t>(j)] = j * static_cast<int>(sizeof(double));
    wsend[static_cast<std::size_t>(j)] = rank + 0.25 * j;
  }
  MPI_Alltoallw(wsend.data(), wc.data(), wsd.data(), wt.data(), wrecv.data(), wc.data(), wrd.data(), wt.data(),
                MPI_COMM_WORLD);
  print(rank, "alltoallw", wrecv);

  // Reduce_scatter: rank i gets i+1 sums.
  std::vector<int> rs(static_cast<std::size_t>(so)), rsout(static_cast<std::size_t>(rank) + 1);
  for (int i = 0; i < so; ++i) rs[static_cast<std::size_t>(i)] = i * (rank + 1);
  MPI_Reduce_scatter(rs.data(), rsout.data(), scounts.data(), MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  print(rank, "reduce_scatter", rsout);
  std::vector<double> rsb(static_cast<std::size_t>(size) * 2), rsbout(2);
  for (int i = 0; i < 2 * size; ++i) rsb[static_cast<std::size_t>(i)] = 0.5 * i + rank;
  MPI_Reduce_scatter_block(rsb.data(), rsbout.data(), 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  print(rank, "reduce_scatter_block", rsbout);

  // Scan and exscan.
  int sv = rank + 1, scanned = 0, exscanned = -1;
  MPI_Scan(&sv, &scanned, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Exscan(&sv, &exscanned, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  std::printf("%d: scan %d exscan %d\n", rank, scanned, rank == 0 ? 0 : exscanned);

  // A user-defined, non-commutative operator on 2x2 matrices.
  MPI_Op op;
  MPI_Op_create(matmul, 0, &op);
  int m[4] = {rank + 1, 1, 1, 0}, prod[4] = {0, 0, 0, 0};
  MPI_Allreduce(m, prod, 4, MPI_INT, op, MPI_COMM_WORLD);
  std::printf("%d: matmul %d %d %d %d\n", rank, prod[0], prod[1], prod[2], prod[3]);
  MPI_Op_free(&op);

  // MINLOC / MAXLOC.
  struct {
    double v;
    int i;
  } in{static_cast<double>((rank * 7) % 5), rank}, lo{}, hi{};
  MPI_Allreduce(&in, &lo, 1, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD);
  MPI_Allreduce(&in, &hi, 1, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD);
  std::printf("%d: minloc %g@%d maxloc %g@%d\n", rank, lo.v, lo.i, hi.v, hi.i);

  // Complex sums.
  std::complex<double> z(rank, 1.0), zs;
  MPI_Allreduce(&z, &zs, 1, MPI_C_DOUBLE_COMPLEX, MPI_SUM, MPI_COMM_WORLD);
  std::complex<float> f(1.0f, static_cast<float>(rank)), fs;
  MPI_Allreduce(&f, &fs, 1, MPI_C_FLOAT_COMPLEX, MPI_PROD, MPI_COMM_WORLD);
  std::printf("%d: complex %g%+gi %g%+gi\n", rank, zs.real(), zs.imag(), fs.real(), fs.imag());

  int acc[2] = {1, 2};
  const int add[2] = {10, 20};
  MPI_Reduce_local(add, acc, 2, MPI_INT, MPI_SUM);
  std::printf("%d: reduce_local %d %d\n", rank, acc[0], acc[1]);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
