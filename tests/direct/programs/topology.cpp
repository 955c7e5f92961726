// Cartesian and graph topologies: Dims_create, Cart_create/get/rank/coords/
// shift/sub, Topo_test, Graph_create and its queries, a halo exchange on the
// grid, Dist_graph_create_adjacent. Same lines as under mpirun.
#include <mpi.h>

#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  const int tries[][2] = {{6, 2}, {12, 2}, {16, 3}, {24, 3}, {7, 2}, {30, 3}, {64, 3}};
  if (rank == 0)
    for (const auto& t : tries) {
      int dims[3] = {0, 0, 0};
      MPI_Dims_create(t[0], t[1], dims);
      std::printf("dims_create %d %d: %d %d %d\n", t[0], t[1], dims[0], dims[1], t[1] > 2 ? dims[2] : 0);
    }
  int dims[2] = {0, 0};
  MPI_Dims_create(size, 2, dims);
  const int periods[2] = {1, 0};
  MPI_Comm cart;
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
  int status = 0;
  MPI_Topo_test(cart, &status);
  int crank = 0, coords[2], d2[2], p2[2], c2[2];
  MPI_Comm_rank(cart, &crank);
  MPI_Cart_coords(cart, crank, 2, coords);
  MPI_Cart_get(cart, 2, d2, p2, c2);
  int back = -1;
  MPI_Cart_rank(cart, coords, &back);
  int src0, dst0, src1, dst1;
  MPI_Cart_shift(cart, 0, 1, &src0, &dst0);
  MPI_Cart_shift(cart, 1, 1, &src1, &dst1);
  std::printf("%d: cart %s %dx%d coords (%d,%d) rank %d shift0 %d %d shift1 %d %d\n", rank,
              status == MPI_CART ? "cart" : "?", d2[0], d2[1], c2[0], c2[1], back, src0, dst0, src1, dst1);
  // Halo exchange along dimension 1 (not periodic: MPI_PROC_NULL at the ends).
  int left = -1, right = -1;
  MPI_Sendrecv(&crank, 1, MPI_INT, dst1, 0, &left, 1, MPI_INT, src1, 0, cart, MPI_STATUS_IGNORE);
  MPI_Sendrecv(&crank, 1, MPI_INT, src1, 1, &right, 1, MPI_INT, dst1, 1, cart, MPI_STATUS_IGNORE);
  std::printf("%d: halo %d %d\n", rank, left, right);
  // Rows of the grid.
  const int remain[2] = {0, 1};
  MPI_Comm row;
  MPI_Cart_sub(cart, remain, &row);
  int rrank, rsize, rdims[1], rper[1], rco[1];
  MPI_Comm_rank(row, &rrank);
  MPI_Comm_size(row, &rsize);
  MPI_Cart_get(row, 1, rdims, rper, rco);
  int rowsum = 0;
  MPI_Allreduce(&rank, &rowsum, 1, MPI_INT, MPI_SUM, row);
  std::printf("%d: row %d of %d dims %d coord %d sum %d\n", rank, rrank, rsize, rdims[0], rco[0], rowsum);
  int ndims = 0;
  MPI_Cartdim_get(row, &ndims);
  std::printf("%d: row ndims %d\n", rank, ndims);
  MPI_Comm_free(&row);
  MPI_Comm_free(&cart);

  // A ring as a graph.
  std::vector<int> index(static_cast<std::size_t>(size)), edges;
  for (int i = 0; i < size; ++i) {
    edges.push_back((i + 1) % size);
    edges.push_back((i + size - 1) % size);
    index[static_cast<std::size_t>(i)] = static_cast<int>(edges.size());
  }
  MPI_Comm graph;
  MPI_Graph_create(MPI_COMM_WORLD, size, index.data(), edges.data(), 0, &graph);
  int nn = 0, ne = 0, count = 0, nbrs[2] = {-1, -1};
  MPI_Graphdims_get(graph, &nn, &ne);
  MPI_Graph_neighbors_count(graph, rank, &count);
  MPI_Graph_neighbors(graph, rank, 2, nbrs);
  MPI_Topo_test(graph, &status);
  std::printf("%d: graph %s nodes %d edges %d neighbours %d: %d %d\n", rank, status == MPI_GRAPH ? "graph" : "?", nn,
              ne, count, nbrs[0], nbrs[1]);
  MPI_Comm_free(&graph);

  MPI_Comm dist;
  const int to = (rank + 1) % size, from = (rank + size - 1) % size;
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &from, MPI_UNWEIGHTED, 1, &to, MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
                                 &dist);
  int indeg, outdeg, weighted, s = -1, t = -1;
  MPI_Dist_graph_neighbors_count(dist, &indeg, &outdeg, &weighted);
  MPI_Dist_graph_neighbors(dist, 1, &s, MPI_UNWEIGHTED, 1, &t, MPI_UNWEIGHTED);
  std::printf("%d: dist graph in %d out %d from %d to %d\n", rank, indeg, outdeg, s, t);
  MPI_Comm_free(&dist);
  MPI_Finalize();
  return 0;
}
