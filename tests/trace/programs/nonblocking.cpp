// Two ranks, nonblocking point to point (C++): MPI_Isend/MPI_Irecv with
// computation while the messages are in flight and MPI_Waitall, MPI_Waitany,
// an MPI_Test loop, persistent requests (MPI_Send_init, MPI_Recv_init,
// MPI_Startall, MPI_Request_free) and MPI_Waitsome. Its replay is checked
// against tests/trace/nonblocking.goal.
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <vector>

namespace {

void compute_us(long us) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
  while (std::chrono::steady_clock::now() < end) {
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (rank == 0) std::fprintf(stderr, "nonblocking: run on 2 processes\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int other = 1 - rank;
  std::vector<char> a(100000), b(100000), c(100000), d(100000);
  MPI_Request r[2];

  // Exchange, overlapped with computation.
  MPI_Irecv(a.data(), 4000, MPI_CHAR, other, 1, MPI_COMM_WORLD, &r[0]);
  MPI_Isend(b.data(), 4000, MPI_CHAR, other, 1, MPI_COMM_WORLD, &r[1]);
  compute_us(2000);
  MPI_Waitall(2, r, MPI_STATUSES_IGNORE);

  // Two receives completed one at a time, in the order the messages come.
  if (rank == 0) {
    MPI_Irecv(a.data(), 100000, MPI_CHAR, 1, 2, MPI_COMM_WORLD, &r[0]);
    MPI_Irecv(b.data(), 100000, MPI_CHAR, 1, 3, MPI_COMM_WORLD, &r[1]);
    int index = 0;
    MPI_Waitany(2, r, &index, MPI_STATUS_IGNORE);
    compute_us(500);
    MPI_Waitany(2, r, &index, MPI_STATUS_IGNORE);
  } else {
    compute_us(1000);
    MPI_Send(c.data(), 100, MPI_CHAR, 0, 3, MPI_COMM_WORLD);
    compute_us(1000);
    MPI_Send(c.data(), 50000, MPI_CHAR, 0, 2, MPI_COMM_WORLD);
  }

  // A large send polled with MPI_Test while computing.
  if (rank == 0) {
    MPI_Isend(d.data(), 60000, MPI_CHAR, 1, 4, MPI_COMM_WORLD, &r[0]);
    int done = 0;
    while (!done) {
      compute_us(200);
      MPI_Test(&r[0], &done, MPI_STATUS_IGNORE);
    }
  } else {
    compute_us(3000);
    MPI_Recv(d.data(), 60000, MPI_CHAR, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }

  // Persistent requests, started three times.
  MPI_Recv_init(a.data(), 800, MPI_CHAR, other, 5, MPI_COMM_WORLD, &r[0]);
  MPI_Send_init(b.data(), 800, MPI_CHAR, other, 5, MPI_COMM_WORLD, &r[1]);
  for (int k = 0; k < 3; ++k) {
    MPI_Startall(2, r);
    compute_us(500);
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
  }
  MPI_Request_free(&r[0]);
  MPI_Request_free(&r[1]);

  // Waitsome until both receives are in.
  if (rank == 1) {
    MPI_Irecv(a.data(), 1000, MPI_CHAR, 0, 6, MPI_COMM_WORLD, &r[0]);
    MPI_Irecv(b.data(), 1000, MPI_CHAR, 0, 7, MPI_COMM_WORLD, &r[1]);
    int left = 2;
    while (left > 0) {
      int n = 0, indices[2];
      MPI_Waitsome(2, r, &n, indices, MPI_STATUSES_IGNORE);
      left -= n;
    }
  } else {
    MPI_Send(c.data(), 700, MPI_CHAR, 1, 7, MPI_COMM_WORLD);
    compute_us(1000);
    MPI_Send(c.data(), 600, MPI_CHAR, 1, 6, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
