#include "collective_records.h"

#include <otf2/OTF2_Events.h>

#include "recorder.h"

namespace poems::trace::interpose::collective {

namespace {

struct Shape {
  std::uint64_t n = 1;  // members
  int rank = 0;
};

Shape shape(MPI_Comm comm) {
  int n = 1, r = 0;
  PMPI_Comm_size(comm, &n);
  PMPI_Comm_rank(comm, &r);
  return {static_cast<std::uint64_t>(n > 0 ? n : 1), r};
}

std::uint64_t sum_bytes(const int* counts, std::uint64_t n, MPI_Datatype type) {
  std::int64_t total = 0;
  for (std::uint64_t i = 0; i < n; ++i) total += counts[i] > 0 ? counts[i] : 0;
  return type_bytes(type, total);
}

void end(OTF2_CollectiveOp op, MPI_Comm comm, int root, std::uint64_t sent, std::uint64_t received) {
  collective_end(op, comm, root, sent, received);
}

}  // namespace

void barrier(MPI_Comm comm) { end(OTF2_COLLECTIVE_OP_BARRIER, comm, -1, 0, 0); }

void bcast(std::int64_t count, MPI_Datatype type, int root, MPI_Comm comm) {
  const Shape s = shape(comm);
  const std::uint64_t b = type_bytes(type, count);
  end(OTF2_COLLECTIVE_OP_BCAST, comm, root, s.rank == root ? s.n * b : 0, b);
}

void reduce(std::int64_t count, MPI_Datatype type, int root, MPI_Comm comm) {
  const Shape s = shape(comm);
  const std::uint64_t b = type_bytes(type, count);
  end(OTF2_COLLECTIVE_OP_REDUCE, comm, root, b, s.rank == root ? s.n * b : 0);
}

void allreduce(std::int64_t count, MPI_Datatype type, MPI_Comm comm) {
  const Shape s = shape(comm);
  const std::uint64_t b = type_bytes(type, count);
  end(OTF2_COLLECTIVE_OP_ALLREDUCE, comm, -1, s.n * b, s.n * b);
}

void gather(bool in_place, std::int64_t send_count, MPI_Datatype send_type, std::int64_t recv_count,
            MPI_Datatype recv_type, int root, MPI_Comm comm) {
  const Shape s = shape(comm);
  if (s.rank == root) {
    const std::uint64_t block = type_bytes(recv_type, recv_count);
    end(OTF2_COLLECTIVE_OP_GATHER, comm, root, in_place ? block : type_bytes(send_type, send_count), s.n * block);
  } else {
    end(OTF2_COLLECTIVE_OP_GATHER, comm, root, type_bytes(send_type, send_count), 0);
  }
}

void gatherv(bool in_place, std::int64_t send_count, MPI_Datatype send_type, const int* recv_counts,
             MPI_Datatype recv_type, int root, MPI_Comm comm) {
  const Shape s = shape(comm);
  if (s.rank == root) {
    const std::uint64_t own = in_place ? type_bytes(recv_type, recv_counts[s.rank]) : type_bytes(send_type, send_count);
    end(OTF2_COLLECTIVE_OP_GATHERV, comm, root, own, sum_bytes(recv_counts, s.n, recv_type));
  } else {
    end(OTF2_COLLECTIVE_OP_GATHERV, comm, root, type_bytes(send_type, send_count), 0);
  }
}

void scatter(bool in_place, std::int64_t send_count, MPI_Datatype send_type, std::int64_t recv_count,
             MPI_Datatype recv_type, int root, MPI_Comm comm) {
  const Shape s = shape(comm);
  if (s.rank == root) {
    const std::uint64_t block = type_bytes(send_type, send_count);
    end(OTF2_COLLECTIVE_OP_SCATTER, comm, root, s.n * block, in_place ? block : type_bytes(recv_type, recv_count));
  } else {
    end(OTF2_COLLECTIVE_OP_SCATTER, comm, root, 0, type_bytes(recv_type, recv_count));
  }
}

void scatterv(bool in_place, const int* send_counts, MPI_Datatype send_type, std::int64_t recv_count,
              MPI_Datatype recv_type, int root, MPI_Comm comm) {
  const Shape s = shape(comm);
  if (s.rank == root) {
    const std::uint64_t own = in_place ? type_bytes(send_type, send_counts[s.rank]) : type_bytes(recv_type, recv_count);
    end(OTF2_COLLECTIVE_OP_SCATTERV, comm, root, sum_bytes(send_counts, s.n, send_type), own);
  } else {
    end(OTF2_COLLECTIVE_OP_SCATTERV, comm, root, 0, type_bytes(recv_type, recv_count));
  }
}

void allgather(bool in_place, std::int64_t send_count, MPI_Datatype send_type, std::int64_t recv_count,
               MPI_Datatype recv_type, MPI_Comm comm) {
  const Shape s = shape(comm);
  const std::uint64_t block = in_place ? type_bytes(recv_type, recv_count) : type_bytes(send_type, send_count);
  end(OTF2_COLLECTIVE_OP_ALLGATHER, comm, -1, s.n * block, s.n * type_bytes(recv_type, recv_count));
}

void allgatherv(bool in_place, std::int64_t send_count, MPI_Datatype send_type, const int* recv_counts,
                MPI_Datatype recv_type, MPI_Comm comm) {
  const Shape s = shape(comm);
  const std::uint64_t own = in_place ? type_bytes(recv_type, recv_counts[s.rank]) : type_bytes(send_type, send_count);
  end(OTF2_COLLECTIVE_OP_ALLGATHERV, comm, -1, s.n * own, sum_bytes(recv_counts, s.n, recv_type));
}

void alltoall(bool in_place, std::int64_t send_count, MPI_Datatype send_type, std::int64_t recv_count,
              MPI_Datatype recv_type, MPI_Comm comm) {
  const Shape s = shape(comm);
  const std::uint64_t received = s.n * type_bytes(recv_type, recv_count);
  end(OTF2_COLLECTIVE_OP_ALLTOALL, comm, -1, in_place ? received : s.n * type_bytes(send_type, send_count), received);
}

void alltoallv(bool in_place, const int* send_counts, MPI_Datatype send_type, const int* recv_counts,
               MPI_Datatype recv_type, MPI_Comm comm) {
  const Shape s = shape(comm);
  const std::uint64_t received = sum_bytes(recv_counts, s.n, recv_type);
  end(OTF2_COLLECTIVE_OP_ALLTOALLV, comm, -1, in_place ? received : sum_bytes(send_counts, s.n, send_type), received);
}

void reduce_scatter(const int* recv_counts, MPI_Datatype type, MPI_Comm comm) {
  const Shape s = shape(comm);
  end(OTF2_COLLECTIVE_OP_REDUCE_SCATTER, comm, -1, sum_bytes(recv_counts, s.n, type),
      s.n * type_bytes(type, recv_counts[s.rank]));
}

void reduce_scatter_block(std::int64_t recv_count, MPI_Datatype type, MPI_Comm comm) {
  const Shape s = shape(comm);
  const std::uint64_t b = type_bytes(type, recv_count);
  end(OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK, comm, -1, s.n * b, s.n * b);
}

void scan(bool exclusive, std::int64_t count, MPI_Datatype type, MPI_Comm comm) {
  const Shape s = shape(comm);
  const std::uint64_t b = type_bytes(type, count);
  const auto r = static_cast<std::uint64_t>(s.rank);
  if (exclusive)
    end(OTF2_COLLECTIVE_OP_EXSCAN, comm, -1, (s.n - 1 - r) * b, r * b);
  else
    end(OTF2_COLLECTIVE_OP_SCAN, comm, -1, (s.n - r) * b, (r + 1) * b);
}

void created(MPI_Comm parent, MPI_Comm made) {
  communicator_created(parent, made);
  end(OTF2_COLLECTIVE_OP_CREATE_HANDLE, parent, -1, 0, 0);
}

}  // namespace poems::trace::interpose::collective
