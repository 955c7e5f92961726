// Collectives. Their timing is the algorithm library's point-to-point
// schedule for each rank (taskgraph::append_collective) run through the
// engine; their data are combined here: every rank's contribution is copied
// when it enters, and a rank that needs a result waits until the engine has
// completed its part of the algorithm, by which time every contribution the
// result depends on has been made (the algorithm's messages carry them).
// Reductions combine contributions in rank order, so every rank gets the
// same bits.
#include <algorithm>
#include <cstring>

#include "api.h"

namespace poems::direct::detail {

namespace {

using taskgraph::CollectiveOp;

void wait_part(Runtime& rt, std::uint32_t request, const char* call) {
  if (request == kNoRequest) return;
  rt.wait_for({&request, 1}, call);
  rt.free_request(request);
}

int my_rank(Runtime& rt, const Comm& c) { return rt.comm_rank(c, rt.current().world); }

// Checks that every rank passes the same amount, type and operator.
void agree(Runtime& rt, const char* call, Collective& col, std::size_t chunk, MPI_Datatype type, int count, MPI_Op op) {
  if (col.entered == 1) {
    col.chunk = chunk;
    col.type = type;
    col.count = count;
    col.reduce = op;
    return;
  }
  if (col.chunk != chunk)
    rt.fail(call, "this rank passes " + std::to_string(chunk) + " bytes per rank, another rank " +
                      std::to_string(col.chunk) + " (MPI_ERR_TRUNCATE)");
  if (col.reduce != op || (op != MPI_OP_NULL && col.type != type))
    rt.fail(call, "this rank reduces with " + std::string(op_name(op)) + " on " + datatype_name(type) +
                      ", another rank with " + op_name(col.reduce) + " on " + datatype_name(col.type) +
                      " (MPI_ERR_OP)");
}

void contribute(Collective& col, std::size_t slot, std::size_t slots, const void* data, std::size_t bytes) {
  if (col.data.size() < slots * bytes) col.data.resize(slots * bytes);
  if (bytes > 0) std::memcpy(col.data.data() + slot * bytes, data, bytes);
  ++col.contributed;
}

void require_all(Runtime& rt, const char* call, const Collective& col, std::uint32_t expected) {
  if (col.contributed < expected)
    rt.fail(call, "internal error: a result was needed before every rank had contributed (" +
                      std::to_string(col.contributed) + " of " + std::to_string(expected) + ")");
}

// Contributions folded in rank order, computed once.
const std::byte* reduced(Runtime& rt, const char* call, Collective& col, int procs) {
  require_all(rt, call, col, static_cast<std::uint32_t>(procs));
  if (!col.result_ready) {
    col.result.assign(col.data.begin(), col.data.begin() + static_cast<std::ptrdiff_t>(col.chunk));
    for (int i = 1; i < procs; ++i)
      reduce_into(col.reduce, col.type, col.result.data(), col.data.data() + static_cast<std::size_t>(i) * col.chunk,
                  static_cast<std::size_t>(col.count));
    col.result_ready = true;
  }
  return col.result.data();
}

}  // namespace

}  // namespace poems::direct::detail

using namespace poems::direct::detail;

extern "C" {

int MPI_Barrier(MPI_Comm comm) {
  return mpi_call("MPI_Barrier", [&](Runtime& rt) {
    check_comm(rt, "MPI_Barrier", comm);
    std::uint32_t request;
    // Nothing to deliver: the rank goes on, its next operation after the barrier's.
    Collective& col = rt.start_collective(comm, CollectiveOp::Barrier, 0, 0, "MPI_Barrier", false, request);
    rt.finish_collective(comm, col);
    return MPI_SUCCESS;
  });
}

int MPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  return mpi_call("MPI_Bcast", [&](Runtime& rt) {
    const char* call = "MPI_Bcast";
    const Comm& c = check_comm(rt, call, comm);
    const std::uint64_t bytes = check_bytes(rt, call, count, datatype);
    check_buffer(rt, call, buffer, bytes, "the buffer");
    check_root(rt, call, c, root);
    const bool is_root = my_rank(rt, c) == root;
    std::uint32_t request;
    Collective& col = rt.start_collective(comm, CollectiveOp::Bcast, bytes, root, call, !is_root, request);
    agree(rt, call, col, bytes, datatype, count, MPI_OP_NULL);
    if (is_root) {
      contribute(col, 0, 1, buffer, bytes);
    } else {
      wait_part(rt, request, call);
      require_all(rt, call, col, 1);
      if (bytes > 0) std::memcpy(buffer, col.data.data(), bytes);
    }
    rt.finish_collective(comm, col);
    return MPI_SUCCESS;
  });
}

int MPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
               MPI_Comm comm) {
  return mpi_call("MPI_Reduce", [&](Runtime& rt) {
    const char* call = "MPI_Reduce";
    const Comm& c = check_comm(rt, call, comm);
    const std::uint64_t bytes = check_bytes(rt, call, count, datatype);
    check_op(rt, call, op, datatype);
    check_root(rt, call, c, root);
    const int me = my_rank(rt, c);
    const bool is_root = me == root;
    const void* mine = sendbuf == MPI_IN_PLACE && is_root ? recvbuf : sendbuf;
    check_buffer(rt, call, mine, bytes, "the send buffer");
    if (is_root) check_buffer(rt, call, recvbuf, bytes, "the receive buffer");
    std::uint32_t request;
    Collective& col = rt.start_collective(comm, CollectiveOp::Reduce, bytes, root, call, is_root, request);
    agree(rt, call, col, bytes, datatype, count, op);
    contribute(col, static_cast<std::size_t>(me), static_cast<std::size_t>(c.size()), mine, bytes);
    if (is_root) {
      wait_part(rt, request, call);
      if (bytes > 0) std::memcpy(recvbuf, reduced(rt, call, col, c.size()), bytes);
    }
    rt.finish_collective(comm, col);
    return MPI_SUCCESS;
  });
}

int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return mpi_call("MPI_Allreduce", [&](Runtime& rt) {
    const char* call = "MPI_Allreduce";
    const Comm& c = check_comm(rt, call, comm);
    const std::uint64_t bytes = check_bytes(rt, call, count, datatype);
    check_op(rt, call, op, datatype);
    const void* mine = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    check_buffer(rt, call, mine, bytes, "the send buffer");
    check_buffer(rt, call, recvbuf, bytes, "the receive buffer");
    std::uint32_t request;
    Collective& col = rt.start_collective(comm, CollectiveOp::Allreduce, bytes, 0, call, true, request);
    agree(rt, call, col, bytes, datatype, count, op);
    contribute(col, static_cast<std::size_t>(my_rank(rt, c)), static_cast<std::size_t>(c.size()), mine, bytes);
    wait_part(rt, request, call);
    if (bytes > 0) std::memcpy(recvbuf, reduced(rt, call, col, c.size()), bytes);
    rt.finish_collective(comm, col);
    return MPI_SUCCESS;
  });
}

int MPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
               MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return mpi_call("MPI_Gather", [&](Runtime& rt) {
    const char* call = "MPI_Gather";
    const Comm& c = check_comm(rt, call, comm);
    check_root(rt, call, c, root);
    const int me = my_rank(rt, c);
    const bool is_root = me == root;
    const bool in_place = is_root && sendbuf == MPI_IN_PLACE;
    const std::uint64_t chunk =
        in_place ? check_bytes(rt, call, recvcount, recvtype) : check_bytes(rt, call, sendcount, sendtype);
    if (is_root && check_bytes(rt, call, recvcount, recvtype) != chunk)
      rt.fail(call, "the root receives " + std::to_string(recvcount) + " elements per rank but sends " +
                        std::to_string(chunk) + " bytes (MPI_ERR_TRUNCATE)");
    const auto procs = static_cast<std::size_t>(c.size());
    const void* mine = in_place ? static_cast<const std::byte*>(recvbuf) + me * chunk : sendbuf;
    check_buffer(rt, call, mine, chunk, "the send buffer");
    if (is_root) check_buffer(rt, call, recvbuf, chunk * procs, "the receive buffer");
    std::uint32_t request;
    Collective& col = rt.start_collective(comm, CollectiveOp::Gather, chunk, root, call, is_root, request);
    agree(rt, call, col, chunk, MPI_DATATYPE_NULL, 0, MPI_OP_NULL);
    contribute(col, static_cast<std::size_t>(me), procs, mine, chunk);
    if (is_root) {
      wait_part(rt, request, call);
      require_all(rt, call, col, static_cast<std::uint32_t>(procs));
      if (chunk > 0) std::memmove(recvbuf, col.data.data(), chunk * procs);
    }
    rt.finish_collective(comm, col);
    return MPI_SUCCESS;
  });
}

int MPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return mpi_call("MPI_Scatter", [&](Runtime& rt) {
    const char* call = "MPI_Scatter";
    const Comm& c = check_comm(rt, call, comm);
    check_root(rt, call, c, root);
    const int me = my_rank(rt, c);
    const bool is_root = me == root;
    const bool in_place = is_root && recvbuf == MPI_IN_PLACE;
    const std::uint64_t chunk =
        is_root ? check_bytes(rt, call, sendcount, sendtype) : check_bytes(rt, call, recvcount, recvtype);
    if (is_root && !in_place && check_bytes(rt, call, recvcount, recvtype) != chunk)
      rt.fail(call, "the root sends " + std::to_string(chunk) + " bytes per rank but receives " +
                        std::to_string(recvcount) + " elements (MPI_ERR_TRUNCATE)");
    const auto procs = static_cast<std::size_t>(c.size());
    if (is_root) check_buffer(rt, call, sendbuf, chunk * procs, "the send buffer");
    if (!in_place) check_buffer(rt, call, recvbuf, chunk, "the receive buffer");
    std::uint32_t request;
    Collective& col = rt.start_collective(comm, CollectiveOp::Scatter, chunk, root, call, !is_root, request);
    agree(rt, call, col, chunk, MPI_DATATYPE_NULL, 0, MPI_OP_NULL);
    if (is_root) {
      contribute(col, 0, 1, sendbuf, chunk * procs);
      if (!in_place && chunk > 0) std::memmove(recvbuf, static_cast<const std::byte*>(sendbuf) + me * chunk, chunk);
    } else {
      wait_part(rt, request, call);
      require_all(rt, call, col, 1);
      if (chunk > 0) std::memcpy(recvbuf, col.data.data() + static_cast<std::size_t>(me) * chunk, chunk);
    }
    rt.finish_collective(comm, col);
    return MPI_SUCCESS;
  });
}

int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm) {
  return mpi_call("MPI_Allgather", [&](Runtime& rt) {
    const char* call = "MPI_Allgather";
    const Comm& c = check_comm(rt, call, comm);
    const int me = my_rank(rt, c);
    const bool in_place = sendbuf == MPI_IN_PLACE;
    const std::uint64_t chunk = check_bytes(rt, call, recvcount, recvtype);
    if (!in_place && check_bytes(rt, call, sendcount, sendtype) != chunk)
      rt.fail(call, "this rank sends " + std::to_string(sendcount) + " elements but receives " +
                        std::to_string(recvcount) + " per rank (MPI_ERR_TRUNCATE)");
    const auto procs = static_cast<std::size_t>(c.size());
    const void* mine = in_place ? static_cast<const std::byte*>(recvbuf) + me * chunk : sendbuf;
    check_buffer(rt, call, mine, chunk, "the send buffer");
    check_buffer(rt, call, recvbuf, chunk * procs, "the receive buffer");
    std::uint32_t request;
    Collective& col = rt.start_collective(comm, CollectiveOp::Allgather, chunk, 0, call, true, request);
    agree(rt, call, col, chunk, MPI_DATATYPE_NULL, 0, MPI_OP_NULL);
    contribute(col, static_cast<std::size_t>(me), procs, mine, chunk);
    wait_part(rt, request, call);
    require_all(rt, call, col, static_cast<std::uint32_t>(procs));
    if (chunk > 0) std::memmove(recvbuf, col.data.data(), chunk * procs);
    rt.finish_collective(comm, col);
    return MPI_SUCCESS;
  });
}

int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, MPI_Comm comm) {
  return mpi_call("MPI_Alltoall", [&](Runtime& rt) {
    const char* call = "MPI_Alltoall";
    const Comm& c = check_comm(rt, call, comm);
    const int me = my_rank(rt, c);
    const bool in_place = sendbuf == MPI_IN_PLACE;
    const std::uint64_t chunk = check_bytes(rt, call, recvcount, recvtype);
    if (!in_place && check_bytes(rt, call, sendcount, sendtype) != chunk)
      rt.fail(call, "this rank sends " + std::to_string(sendcount) + " elements but receives " +
                        std::to_string(recvcount) + " per rank (MPI_ERR_TRUNCATE)");
    const auto procs = static_cast<std::size_t>(c.size());
    const void* mine = in_place ? recvbuf : sendbuf;
    check_buffer(rt, call, mine, chunk * procs, "the send buffer");
    check_buffer(rt, call, recvbuf, chunk * procs, "the receive buffer");
    std::uint32_t request;
    Collective& col = rt.start_collective(comm, CollectiveOp::Alltoall, chunk, 0, call, true, request);
    agree(rt, call, col, chunk, MPI_DATATYPE_NULL, 0, MPI_OP_NULL);
    contribute(col, static_cast<std::size_t>(me), procs, mine, chunk * procs);
    wait_part(rt, request, call);
    require_all(rt, call, col, static_cast<std::uint32_t>(procs));
    for (std::size_t i = 0; i < procs && chunk > 0; ++i)
      std::memcpy(static_cast<std::byte*>(recvbuf) + i * chunk,
                  col.data.data() + (i * procs + static_cast<std::size_t>(me)) * chunk, chunk);
    rt.finish_collective(comm, col);
    return MPI_SUCCESS;
  });
}

// A new communicator costs what MPI libraries spend on it: an allgather of
// (color, key) for a split, an allreduce of the context id for a duplicate.
int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  return mpi_call("MPI_Comm_split", [&](Runtime& rt) {
    const char* call = "MPI_Comm_split";
    const Comm& c = check_comm(rt, call, comm);
    if (color < 0 && color != MPI_UNDEFINED)
      rt.fail(call, "color " + std::to_string(color) + " is negative and not MPI_UNDEFINED (MPI_ERR_ARG)");
    const int me = my_rank(rt, c);
    std::uint32_t request;
    Collective& col = rt.start_collective(comm, CollectiveOp::Allgather, 8, 0, call, true, request);
    agree(rt, call, col, 8, MPI_DATATYPE_NULL, 0, MPI_OP_NULL);
    col.split.resize(static_cast<std::size_t>(c.size()));
    col.split[static_cast<std::size_t>(me)] = {color, key};
    ++col.contributed;
    wait_part(rt, request, call);
    require_all(rt, call, col, static_cast<std::uint32_t>(c.size()));
    if (color == MPI_UNDEFINED) {
      *newcomm = MPI_COMM_NULL;
    } else if (auto it = col.created.find(color); it != col.created.end()) {
      *newcomm = it->second;
    } else {
      std::vector<int> ranks;
      for (int r = 0; r < c.size(); ++r)
        if (col.split[static_cast<std::size_t>(r)].first == color) ranks.push_back(r);
      std::stable_sort(ranks.begin(), ranks.end(), [&](int a, int b) {
        return col.split[static_cast<std::size_t>(a)].second < col.split[static_cast<std::size_t>(b)].second;
      });
      std::vector<std::uint32_t> members;
      for (int r : ranks) members.push_back(rt.world_rank(c, r));
      *newcomm = col.created[color] = rt.add_comm(std::move(members));
    }
    rt.finish_collective(comm, col);
    return MPI_SUCCESS;
  });
}

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  return mpi_call("MPI_Comm_dup", [&](Runtime& rt) {
    const char* call = "MPI_Comm_dup";
    const Comm& c = check_comm(rt, call, comm);
    std::uint32_t request;
    Collective& col = rt.start_collective(comm, CollectiveOp::Allreduce, 4, 0, call, true, request);
    wait_part(rt, request, call);
    if (auto it = col.created.find(0); it != col.created.end()) {
      *newcomm = it->second;
    } else {
      std::vector<std::uint32_t> members;
      for (int r = 0; r < c.size(); ++r) members.push_back(rt.world_rank(c, r));
      *newcomm = col.created[0] = rt.add_comm(std::move(members));
    }
    rt.finish_collective(comm, col);
    return MPI_SUCCESS;
  });
}

}  // extern "C"
