// Collectives (MPI 3.1 chapter 5). Their timing is a point-to-point
// schedule per rank run through the engine: the algorithm library's
// (taskgraph::append_collective, `--algorithm OP=ALG`) for the eight
// operations it knows, and ours for the others: linear gatherv/scatterv, a
// ring allgatherv, a linear alltoallv/w, reduce + scatterv for
// reduce_scatter, a chain for scan. Their data are combined here: every
// rank's contribution is packed when it enters, and a rank that needs a
// result waits until the engine has completed its part of the schedule, by
// which time every contribution the result depends on has been made (the
// schedule's messages carry them). Reductions combine contributions in rank
// order, so every rank gets the same bits. The nonblocking forms run the
// same schedules on the rank's companion (runtime_impl.h) and copy the
// result out when the program sees the request complete.
#include <algorithm>
#include <cstring>
#include <memory>
#include <numeric>
#include <vector>

#include "api.h"
#include "collective_moves.h"
#include "poems/components/network.h"
#include "reduction_order.h"

namespace poems::direct::detail {

namespace {

using taskgraph::CollectiveOp;

// Our own schedules' kinds (after the library's CollectiveOp values).
enum Kind : int {
  kGatherv = 100,
  kScatterv,
  kAllgatherv,
  kAlltoallv,
  kAlltoallw,
  kReduceScatter,
  kReduceScatterBlock,
  kScan,
  kExscan,
};

// What a collective does once its rank's part is complete: copy results out
// and release its record.
using Finish = std::function<void(Runtime&)>;

int my_rank(Runtime& rt, const Comm& c) { return Communicators::rank(c, rt.current().world); }

// Runs a collective: `start(rt, nonblocking, part)` checks, contributes and
// starts the schedule, returning what to do when the part is complete.
// Blocking: waits, finishes. Nonblocking: the request finishes when the program sees it complete.
template <typename Start>
int collective(const char* call, MPI_Request* request, Start&& start) {
  return mpi_call(call, [&](Runtime& rt) {
    std::uint32_t part = kNoRequest;
    Finish finish = start(rt, request != nullptr, part);
    if (!request) {
      if (part != kNoRequest) {
        rt.wait_for({&part, 1}, call);
        rt.free_request(part);
      }
      if (finish) finish(rt);
      return MPI_SUCCESS;
    }
    if (finish) rt.on_complete(part, [finish, &rt] { finish(rt); });
    *request = static_cast<MPI_Request>(part);
    return MPI_SUCCESS;
  });
}

// The schedule's start, blocking (waiting if `wait`) or on the companion.
Collective& begin(Runtime& rt, bool nonblocking, MPI_Comm comm, CollectiveOp op, std::uint64_t bytes, int root,
                  const char* call, bool wait, std::uint32_t& part) {
  if (nonblocking) return rt.start_nonblocking_collective(comm, op, bytes, root, call, part);
  return rt.start_collective(comm, op, bytes, root, call, wait, part);
}

Collective& begin_custom(Runtime& rt, bool nonblocking, MPI_Comm comm, int kind, int root, const char* call, bool wait,
                         std::uint32_t& part, const Runtime::ScheduleBuilder& build) {
  if (nonblocking) return rt.start_nonblocking_collective(comm, kind, root, call, part, build);
  return rt.start_custom_collective(comm, kind, root, call, wait, part, build);
}

// The record of a collective once a rank's part is complete (it exists until every rank has finished).
Collective& record(Runtime& rt, const CollectiveKey& key) { return *rt.collectives().find(key); }

void finish_record(Runtime& rt, const CollectiveKey& key) {
  rt.collectives().finish(rt.comms().at(key.comm), *rt.collectives().find(key));
}

// What a rank does once its part is complete: `copy_out(rt, record)` copies
// its results out of the collective's record, then the record is released.
template <typename CopyOut>
Finish deliver(const Collective& col, CopyOut copy_out) {
  const CollectiveKey key = col.key;
  return [key, copy_out](Runtime& r) {
    copy_out(r, record(r, key));
    finish_record(r, key);
  };
}

// A rank's own block, which the MPI library copies within the rank's memory
// (Open MPI's basic linear and ring algorithms: ompi_datatype_copy of the
// rank's part), at the machine's copy_G, charged as the rank's CPU time at
// the call. Nothing on a machine without copy_G (docs/direct.md).
void charge_own_copy(Runtime& rt, std::uint64_t bytes) {
  const auto& network = rt.options().sim.network;
  if (!network) return;
  rt.charge(static_cast<double>(components::LogGOPS::times_bytes(bytes, network->spec().copy_per_byte)));
}

// The bytes an allgather or alltoall moves per rank pair: what this rank
// receives from each, which (unless in place) it must also send to each.
std::uint64_t each_rank_bytes(Runtime& rt, const char* call, bool in_place, int sendcount, MPI_Datatype sendtype,
                              int recvcount, MPI_Datatype recvtype) {
  const std::uint64_t chunk = check_bytes(rt, call, recvcount, recvtype);
  if (!in_place && check_bytes(rt, call, sendcount, sendtype) != chunk)
    rt.fail(call, "this rank sends " + std::to_string(check_bytes(rt, call, sendcount, sendtype)) +
                      " bytes but receives " + std::to_string(chunk) + " per rank (MPI_ERR_TRUNCATE)");
  return chunk;
}

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
  // User-defined operators are each rank's own handle: the same function agrees.
  const ObjectTables::UserOp *mine = rt.objects().user_op(op), *theirs = rt.objects().user_op(col.reduce);
  const bool same = mine && theirs ? mine->fn == theirs->fn : col.reduce == op;
  if (!same)
    rt.fail(call, "this rank reduces with " + std::string(op_name(op)) + ", another rank with " + op_name(col.reduce) +
                      " (MPI_ERR_OP)");
}

// Packs `count` items of `type` at `buf` into slot `slot` of `slots` slots of `chunk` bytes.
void contribute(Runtime& rt, Collective& col, std::size_t slot, std::size_t slots, const void* buf, int count,
                MPI_Datatype type, std::size_t chunk) {
  if (col.data.size() < slots * chunk) col.data.resize(slots * chunk);
  if (chunk > 0) pack_into(rt, buf, static_cast<std::uint64_t>(count), type, col.data.data() + slot * chunk);
  ++col.contributed;
}

void contribute_part(Runtime& rt, Collective& col, std::size_t slot, std::size_t slots, const void* buf, int count,
                     MPI_Datatype type) {
  if (col.parts.size() < slots) col.parts.resize(slots);
  col.parts[slot] = pack_data(rt, buf, count, type);
}

void require_all(Runtime& rt, const char* call, const Collective& col, std::uint32_t expected) {
  if (col.contributed < expected)
    rt.fail(call, "internal error: a result was needed before every rank had contributed (" +
                      std::to_string(col.contributed) + " of " + std::to_string(expected) + ")");
}

// Contributions [first, last] of `chunk` bytes each (in col.data), folded in
// rank order: c_first op ... op c_last.
svector<std::byte> fold(Runtime& rt, const Collective& col, int first, int last, std::size_t chunk) {
  const std::byte* base = col.data.data();
  svector<std::byte> acc;
  const auto count = static_cast<std::uint64_t>(col.count);
  if (rt.objects().user_op(col.reduce)) {  // acc = c_i op acc, from the right: user operators need not commute
    acc.assign(base + static_cast<std::size_t>(last) * chunk, base + (static_cast<std::size_t>(last) + 1) * chunk);
    for (int i = last - 1; i >= first; --i)
      reduce_packed(rt, col.reduce, col.type, count, acc.data(), base + static_cast<std::size_t>(i) * chunk, true);
    return acc;
  }
  acc.assign(base + static_cast<std::size_t>(first) * chunk, base + (static_cast<std::size_t>(first) + 1) * chunk);
  for (int i = first + 1; i <= last; ++i)
    reduce_packed(rt, col.reduce, col.type, count, acc.data(), base + static_cast<std::size_t>(i) * chunk, false);
  return acc;
}

// The whole communicator's reduction, computed once, in rank order.
const std::byte* reduced(Runtime& rt, const char* call, Collective& col, int procs) {
  require_all(rt, call, col, static_cast<std::uint32_t>(procs));
  if (!col.result_ready) {
    col.result = fold(rt, col, 0, procs - 1, col.chunk);
    col.result_ready = true;
  }
  return col.result.data();
}

// Node `r`'s value in `tree` for items [first, first + items): its own
// contribution combined with its children's values, left to right.
std::vector<std::byte> tree_value(Runtime& rt, const Collective& col, const ReductionTree& tree, int r,
                                  std::uint64_t first, std::uint64_t items, std::uint64_t item_bytes) {
  const std::byte* own = col.data.data() + static_cast<std::size_t>(r) * col.chunk + first * item_bytes;
  std::vector<std::byte> acc(own, own + items * item_bytes);
  for (const int child : tree.children[static_cast<std::size_t>(r)]) {
    const std::vector<std::byte> in = tree_value(rt, col, tree, child, first, items, item_bytes);
    reduce_packed(rt, col.reduce, col.type, items, acc.data(), in.data(), false);
  }
  return acc;
}

// MPI_Reduce's and MPI_Allreduce's result, computed once, associated as Open
// MPI associates it (reduction_order.h), so that floating-point results agree
// with mpirun's to the last digit.
const std::byte* reduced_in_order(Runtime& rt, const char* call, Collective& col, int procs, ReductionKind kind,
                                  int root) {
  require_all(rt, call, col, static_cast<std::uint32_t>(procs));
  if (!col.result_ready) {
    const std::uint64_t item_bytes = rt.objects().type(col.type)->size;
    const ObjectTables::UserOp* user = rt.objects().user_op(col.reduce);
    const bool commutative = user == nullptr || user->commute;
    col.result.resize(col.chunk);
    if (item_bytes > 0)
      for (const ReductionPiece& piece :
           reduction_order(kind, procs, root, static_cast<std::uint64_t>(col.count), item_bytes, commutative)) {
        const std::vector<std::byte> value =
            tree_value(rt, col, piece.tree, piece.tree.root, piece.first, piece.items, item_bytes);
        std::copy(value.begin(), value.end(),
                  col.result.begin() + static_cast<std::ptrdiff_t>(piece.first * item_bytes));
      }
    col.result_ready = true;
  }
  return col.result.data();
}

std::byte* at(void* buf, std::int64_t bytes) { return static_cast<std::byte*>(buf) + bytes; }
const std::byte* at(const void* buf, std::int64_t bytes) { return static_cast<const std::byte*>(buf) + bytes; }

void check_counts(Runtime& rt, const char* call, const int* counts, int n) {
  for (int i = 0; i < n; ++i)
    if (counts[i] < 0) rt.fail(call, "count " + std::to_string(counts[i]) + " is negative (MPI_ERR_COUNT)");
}

// ---- schedules of our own ----------------------------------------------------------------

struct Builder {
  taskgraph::OpBuffer& out;
  std::uint64_t next;
  std::uint32_t comm;
  std::int32_t tag;
  std::uint32_t node;
  std::uint64_t add(taskgraph::OpKind kind, int peer, std::uint64_t bytes, const std::vector<Dependency>& deps) {
    taskgraph::Operation op;
    op.kind = kind;
    op.peer = peer;
    op.bytes = bytes;
    op.tag = tag;
    op.comm = taskgraph::collective_comm(comm);
    op.node = node;
    op.first_dep = static_cast<std::uint32_t>(out.deps.size());
    op.dep_count = static_cast<std::uint32_t>(deps.size());
    out.deps.insert(out.deps.end(), deps.begin(), deps.end());
    out.ops.push_back(op);
    return next++;
  }
};

// Linear: the root receives (gather) or sends (scatter) `bytes[i]` to every other rank; each
// other rank sends or receives its own.
std::vector<std::uint64_t> linear_rooted(Builder& b, int me, int procs, int root, bool to_root,
                                         const std::vector<std::uint64_t>& bytes,
                                         const std::vector<Dependency>& entry) {
  std::vector<std::uint64_t> exits;
  if (me == root) {
    for (int i = 0; i < procs; ++i) {
      if (i == root) continue;
      exits.push_back(b.add(to_root ? taskgraph::OpKind::Recv : taskgraph::OpKind::Send, i,
                            bytes[static_cast<std::size_t>(i)], entry));
    }
  } else {
    exits.push_back(b.add(to_root ? taskgraph::OpKind::Send : taskgraph::OpKind::Recv, root,
                          bytes[static_cast<std::size_t>(me)], entry));
  }
  return exits;
}

Runtime::ScheduleBuilder rooted_schedule(Runtime& rt, const Comm& c, MPI_Comm comm, const char* call, int root,
                                         bool to_root, std::vector<std::uint64_t> bytes) {
  const int me = my_rank(rt, c), procs = c.size();
  const std::uint32_t node = rt.node_of(call);
  return [=](std::uint64_t first, const std::vector<Dependency>& entry, std::int32_t tag, taskgraph::OpBuffer& out) {
    Builder b{out, first, static_cast<std::uint32_t>(comm), tag, node};
    return linear_rooted(b, me, procs, root, to_root, bytes, entry);
  };
}

// Ring: in step k each rank sends the block that originated k ranks before it to the next
// rank and receives the one from k+1 ranks before it; `bytes[j]` is block j's size.
Runtime::ScheduleBuilder ring_schedule(Runtime& rt, const Comm& c, MPI_Comm comm, const char* call,
                                       std::vector<std::uint64_t> bytes) {
  const int me = my_rank(rt, c), procs = c.size();
  const std::uint32_t node = rt.node_of(call);
  return [=](std::uint64_t first, const std::vector<Dependency>& entry, std::int32_t tag, taskgraph::OpBuffer& out) {
    Builder b{out, first, static_cast<std::uint32_t>(comm), tag, node};
    std::vector<std::uint64_t> exits;
    std::vector<Dependency> deps = entry;
    const int next = (me + 1) % procs, prev = (me - 1 + procs) % procs;
    for (int k = 0; k + 1 < procs; ++k) {
      const int send_block = (me - k + procs) % procs, recv_block = (me - k - 1 + procs) % procs;
      const std::uint64_t r = b.add(taskgraph::OpKind::Recv, prev, bytes[static_cast<std::size_t>(recv_block)], deps);
      const std::uint64_t s = b.add(taskgraph::OpKind::Send, next, bytes[static_cast<std::size_t>(send_block)], deps);
      deps = {Dependency{r, false}};  // the next step forwards what this one received
      exits = {r, s};
    }
    return exits;
  };
}

// Linear exchange: every pair at once; sizes to and from each rank. Open
// MPI's basic linear order (and SMPI's ompi_basic_linear): the receives, then
// the sends, each from rank 0 up, skipping this one. The order matters where
// links are shared: every rank's first flow goes to rank 0.
Runtime::ScheduleBuilder exchange_schedule(Runtime& rt, const Comm& c, MPI_Comm comm, const char* call,
                                           std::vector<std::uint64_t> send_bytes,
                                           std::vector<std::uint64_t> recv_bytes) {
  const int me = my_rank(rt, c), procs = c.size();
  const std::uint32_t node = rt.node_of(call);
  return [=](std::uint64_t first, const std::vector<Dependency>& entry, std::int32_t tag, taskgraph::OpBuffer& out) {
    Builder b{out, first, static_cast<std::uint32_t>(comm), tag, node};
    std::vector<std::uint64_t> exits;
    for (int from = 0; from < procs; ++from)
      if (from != me)
        exits.push_back(b.add(taskgraph::OpKind::Recv, from, recv_bytes[static_cast<std::size_t>(from)], entry));
    for (int to = 0; to < procs; ++to)
      if (to != me)
        exits.push_back(b.add(taskgraph::OpKind::Send, to, send_bytes[static_cast<std::size_t>(to)], entry));
    return exits;
  };
}

// Chain (scan): receive the prefix from the previous rank, then send it on.
Runtime::ScheduleBuilder chain_schedule(Runtime& rt, const Comm& c, MPI_Comm comm, const char* call,
                                        std::uint64_t bytes) {
  const int me = my_rank(rt, c), procs = c.size();
  const std::uint32_t node = rt.node_of(call);
  return [=](std::uint64_t first, const std::vector<Dependency>& entry, std::int32_t tag, taskgraph::OpBuffer& out) {
    Builder b{out, first, static_cast<std::uint32_t>(comm), tag, node};
    std::vector<std::uint64_t> exits;
    std::vector<Dependency> deps = entry;
    if (me > 0) {
      const std::uint64_t r = b.add(taskgraph::OpKind::Recv, me - 1, bytes, deps);
      deps = {Dependency{r, false}};
      exits.push_back(r);
    }
    if (me + 1 < procs) exits.push_back(b.add(taskgraph::OpKind::Send, me + 1, bytes, deps));
    return exits;
  };
}

// Reduce to rank 0 (the library's algorithm), then a linear scatterv of the parts.
Runtime::ScheduleBuilder reduce_scatter_schedule(Runtime& rt, const Comm& c, MPI_Comm comm, const char* call,
                                                 std::uint64_t total, std::vector<std::uint64_t> part_bytes) {
  const int me = my_rank(rt, c), procs = c.size();
  const std::uint32_t node = rt.node_of(call);
  taskgraph::CollectiveCall cc;
  cc.op = CollectiveOp::Reduce;
  auto chosen = rt.options().algorithms.find(CollectiveOp::Reduce);
  cc.algorithm = chosen != rt.options().algorithms.end() ? chosen->second
                                                         : taskgraph::algorithms_for(CollectiveOp::Reduce).front();
  cc.procs = static_cast<std::uint32_t>(procs);
  cc.rank = static_cast<std::uint32_t>(me);
  cc.bytes = total;
  cc.root = 0;
  cc.comm = static_cast<std::uint32_t>(comm);
  cc.node = node;
  return [=](std::uint64_t first, const std::vector<Dependency>& entry, std::int32_t tag, taskgraph::OpBuffer& out) {
    taskgraph::CollectiveCall reduce = cc;
    reduce.tag = tag;
    std::vector<std::uint64_t> exits = taskgraph::append_collective(reduce, first, entry, out);
    std::vector<Dependency> after;
    for (std::uint64_t e : exits) after.push_back(Dependency{e, false});
    if (after.empty()) after = entry;
    // The scatter's messages use the next tag (the reduce's own are on `tag`).
    Builder b{out, first + out.ops.size(), static_cast<std::uint32_t>(comm), tag ^ 0x20000000, node};
    std::vector<std::uint64_t> scattered = linear_rooted(b, me, procs, 0, false, part_bytes, after);
    if (scattered.empty()) return exits;
    return scattered;
  };
}

}  // namespace

}  // namespace poems::direct::detail

using namespace poems::direct::detail;

namespace {

// ---- the collectives, each once for both the blocking and the nonblocking form -------------

int barrier(const char* call, MPI_Comm comm, MPI_Request* request) {
  return collective(call, request, [&](Runtime& rt, bool nb, std::uint32_t& part) -> Finish {
    check_comm(rt, call, comm);
    // Nothing to deliver: a blocking barrier's rank goes on, its next
    // operation after the barrier's. While a window exists it waits
    // instead: one-sided accesses move data when the origin makes its call,
    // so a target's loads after the barrier must not run before the other
    // ranks' calls from before it (passive target and shared windows have
    // no other synchronization the runtime sees). Virtual time is the same.
    const bool order_host = !nb && rt.one_sided().any_window();
    Collective& col = begin(rt, nb, comm, CollectiveOp::Barrier, 0, 0, call, order_host, part);
    const CollectiveKey key = col.key;
    return [key](Runtime& r) { finish_record(r, key); };
  });
}

int bcast(const char* call, void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
          MPI_Request* request) {
  return collective(call, request, [&](Runtime& rt, bool nb, std::uint32_t& part) -> Finish {
    const Comm& c = check_comm(rt, call, comm);
    const std::uint64_t bytes = check_bytes(rt, call, count, datatype);
    check_buffer(rt, call, buffer, bytes, datatype, "the buffer");
    check_root(rt, call, c, root);
    const bool is_root = my_rank(rt, c) == root;
    Collective& col = begin(rt, nb, comm, CollectiveOp::Bcast, bytes, root, call, !is_root, part);
    agree(rt, call, col, bytes, datatype, count, MPI_OP_NULL);
    if (is_root) contribute(rt, col, 0, 1, buffer, count, datatype, bytes);
    return deliver(col, [=](Runtime& r, Collective& done) {
      if (!is_root) {
        require_all(r, call, done, 1);
        unpack_into(r, done.data.data(), bytes, buffer, static_cast<std::uint64_t>(count), datatype);
      }
    });
  });
}

int reduce(const char* call, const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
           MPI_Comm comm, MPI_Request* request) {
  return collective(call, request, [&](Runtime& rt, bool nb, std::uint32_t& part) -> Finish {
    const Comm& c = check_comm(rt, call, comm);
    const std::uint64_t bytes = check_bytes(rt, call, count, datatype);
    check_op(rt, call, op, datatype);
    check_root(rt, call, c, root);
    const int me = my_rank(rt, c);
    const bool is_root = me == root;
    const void* mine = sendbuf == MPI_IN_PLACE && is_root ? recvbuf : sendbuf;
    check_buffer(rt, call, mine, bytes, datatype, "the send buffer");
    if (is_root) check_buffer(rt, call, recvbuf, bytes, datatype, "the receive buffer");
    Collective& col = begin(rt, nb, comm, CollectiveOp::Reduce, bytes, root, call, is_root, part);
    agree(rt, call, col, bytes, datatype, count, op);
    contribute(rt, col, static_cast<std::size_t>(me), static_cast<std::size_t>(c.size()), mine, count, datatype, bytes);
    const int procs = c.size();
    return deliver(col, [=](Runtime& r, Collective& done) {
      if (is_root && bytes > 0)
        unpack_into(r, reduced_in_order(r, call, done, procs, poems::direct::ReductionKind::Reduce, root), bytes,
                    recvbuf, static_cast<std::uint64_t>(count), datatype);
    });
  });
}

int allreduce(const char* call, const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
              MPI_Comm comm, MPI_Request* request) {
  return collective(call, request, [&](Runtime& rt, bool nb, std::uint32_t& part) -> Finish {
    const Comm& c = check_comm(rt, call, comm);
    const std::uint64_t bytes = check_bytes(rt, call, count, datatype);
    check_op(rt, call, op, datatype);
    const void* mine = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    check_buffer(rt, call, mine, bytes, datatype, "the send buffer");
    check_buffer(rt, call, recvbuf, bytes, datatype, "the receive buffer");
    Collective& col = begin(rt, nb, comm, CollectiveOp::Allreduce, bytes, 0, call, true, part);
    agree(rt, call, col, bytes, datatype, count, op);
    contribute(rt, col, static_cast<std::size_t>(my_rank(rt, c)), static_cast<std::size_t>(c.size()), mine, count,
               datatype, bytes);
    const int procs = c.size();
    return deliver(col, [=](Runtime& r, Collective& done) {
      if (bytes > 0)
        unpack_into(r, reduced_in_order(r, call, done, procs, poems::direct::ReductionKind::Allreduce, 0), bytes,
                    recvbuf, static_cast<std::uint64_t>(count), datatype);
    });
  });
}

int gather(const char* call, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
           MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  return collective(call, request, [&](Runtime& rt, bool nb, std::uint32_t& part) -> Finish {
    const Comm& c = check_comm(rt, call, comm);
    check_root(rt, call, c, root);
    const int me = my_rank(rt, c);
    const bool is_root = me == root;
    const bool in_place = is_root && sendbuf == MPI_IN_PLACE;
    const std::uint64_t chunk =
        in_place ? check_bytes(rt, call, recvcount, recvtype) : check_bytes(rt, call, sendcount, sendtype);
    std::int64_t rext = 0;
    if (is_root) {
      if (check_bytes(rt, call, recvcount, recvtype) != chunk)
        rt.fail(call, "the root receives " + std::to_string(check_bytes(rt, call, recvcount, recvtype)) +
                          " bytes per rank but sends " + std::to_string(chunk) + " (MPI_ERR_TRUNCATE)");
      rext = rt.objects().type(recvtype)->extent() * recvcount;
    }
    const auto procs = static_cast<std::size_t>(c.size());
    if (is_root && !in_place) charge_own_copy(rt, chunk);
    Collective& col = begin(rt, nb, comm, CollectiveOp::Gather, chunk, root, call, is_root, part);
    agree(rt, call, col, chunk, MPI_DATATYPE_NULL, 0, MPI_OP_NULL);
    if (in_place)
      contribute(rt, col, static_cast<std::size_t>(me), procs, at(recvbuf, me * rext), recvcount, recvtype, chunk);
    else
      contribute(rt, col, static_cast<std::size_t>(me), procs, sendbuf, sendcount, sendtype, chunk);
    return deliver(col, [=](Runtime& r, Collective& done) {
      if (is_root) {
        require_all(r, call, done, static_cast<std::uint32_t>(procs));
        for (std::size_t i = 0; i < procs && chunk > 0; ++i) {
          if (in_place && i == static_cast<std::size_t>(me)) continue;
          unpack_into(r, done.data.data() + i * chunk, chunk, at(recvbuf, static_cast<std::int64_t>(i) * rext),
                      static_cast<std::uint64_t>(recvcount), recvtype);
        }
      }
    });
  });
}

int scatter(const char* call, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
            MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  return collective(call, request, [&](Runtime& rt, bool nb, std::uint32_t& part) -> Finish {
    const Comm& c = check_comm(rt, call, comm);
    check_root(rt, call, c, root);
    const int me = my_rank(rt, c);
    const bool is_root = me == root;
    const bool in_place = is_root && recvbuf == MPI_IN_PLACE;
    const std::uint64_t chunk =
        is_root ? check_bytes(rt, call, sendcount, sendtype) : check_bytes(rt, call, recvcount, recvtype);
    if (is_root && !in_place && check_bytes(rt, call, recvcount, recvtype) != chunk)
      rt.fail(call, "the root sends " + std::to_string(chunk) + " bytes per rank but receives " +
                        std::to_string(check_bytes(rt, call, recvcount, recvtype)) + " (MPI_ERR_TRUNCATE)");
    const auto procs = static_cast<std::size_t>(c.size());
    if (is_root && !in_place) charge_own_copy(rt, chunk);
    Collective& col = begin(rt, nb, comm, CollectiveOp::Scatter, chunk, root, call, !is_root, part);
    agree(rt, call, col, chunk, MPI_DATATYPE_NULL, 0, MPI_OP_NULL);
    if (is_root) {
      const std::int64_t sext = rt.objects().type(sendtype)->extent() * sendcount;
      if (col.data.size() < procs * chunk) col.data.resize(procs * chunk);
      for (std::size_t i = 0; i < procs && chunk > 0; ++i)
        pack_into(rt, at(sendbuf, static_cast<std::int64_t>(i) * sext), static_cast<std::uint64_t>(sendcount), sendtype,
                  col.data.data() + i * chunk);
      ++col.contributed;
    }
    return deliver(col, [=](Runtime& r, Collective& done) {
      if (!in_place && chunk > 0) {
        require_all(r, call, done, 1);
        unpack_into(r, done.data.data() + static_cast<std::size_t>(me) * chunk, chunk, recvbuf,
                    static_cast<std::uint64_t>(recvcount), recvtype);
      }
    });
  });
}

int allgather(const char* call, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
              MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return collective(call, request, [&](Runtime& rt, bool nb, std::uint32_t& part) -> Finish {
    const Comm& c = check_comm(rt, call, comm);
    const int me = my_rank(rt, c);
    const bool in_place = sendbuf == MPI_IN_PLACE;
    const std::uint64_t chunk = each_rank_bytes(rt, call, in_place, sendcount, sendtype, recvcount, recvtype);
    const std::int64_t rext = rt.objects().type(recvtype)->extent() * recvcount;
    const auto procs = static_cast<std::size_t>(c.size());
    if (!in_place) charge_own_copy(rt, chunk);
    Collective& col = begin(rt, nb, comm, CollectiveOp::Allgather, chunk, 0, call, true, part);
    agree(rt, call, col, chunk, MPI_DATATYPE_NULL, 0, MPI_OP_NULL);
    if (in_place)
      contribute(rt, col, static_cast<std::size_t>(me), procs, at(recvbuf, me * rext), recvcount, recvtype, chunk);
    else
      contribute(rt, col, static_cast<std::size_t>(me), procs, sendbuf, sendcount, sendtype, chunk);
    return deliver(col, [=](Runtime& r, Collective& done) {
      require_all(r, call, done, static_cast<std::uint32_t>(procs));
      for (std::size_t i = 0; i < procs && chunk > 0; ++i)
        unpack_into(r, done.data.data() + i * chunk, chunk, at(recvbuf, static_cast<std::int64_t>(i) * rext),
                    static_cast<std::uint64_t>(recvcount), recvtype);
    });
  });
}

// A blocking all-to-all whose blocks move once, straight from sender to
// receiver, as the first of the two leaves the call (collective_moves.h). A rank whose
// send type is not contiguous, or that sends in place, offers a packed copy
// of its blocks; one whose receive type is not contiguous receives into a
// packed buffer and unpacks it when its part is complete.
Finish alltoall_moved(Runtime& rt, const char* call, MPI_Comm comm, const Comm& c, const void* src, int scount,
                      MPI_Datatype stype, std::int64_t sext, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                      std::int64_t rext, std::uint64_t chunk, std::uint32_t& part) {
  const int me = my_rank(rt, c);
  const auto procs = static_cast<std::size_t>(c.size());
  auto send_copy = std::make_shared<std::vector<std::byte>>();
  auto recv_copy = std::make_shared<std::vector<std::byte>>();
  RankBuffers mine;
  mine.entered = true;
  mine.pid = rt.threads() ? 0 : rt.pid_of(rt.current().world);
  if (src != recvbuf && rt.objects().type(stype)->contiguous()) {
    mine.send = reinterpret_cast<std::uintptr_t>(src);
  } else {
    send_copy->resize(procs * chunk);
    for (std::size_t i = 0; i < procs && chunk > 0; ++i)
      pack_into(rt, at(src, static_cast<std::int64_t>(i) * sext), static_cast<std::uint64_t>(scount), stype,
                send_copy->data() + i * chunk);
    mine.send = reinterpret_cast<std::uintptr_t>(send_copy->data());
  }
  const bool recv_direct = rt.objects().type(recvtype)->contiguous();
  if (recv_direct) {
    mine.recv = reinterpret_cast<std::uintptr_t>(recvbuf);
  } else {
    recv_copy->resize(procs * chunk);
    mine.recv = reinterpret_cast<std::uintptr_t>(recv_copy->data());
  }
  Collective& col = begin(rt, false, comm, CollectiveOp::Alltoall, chunk, 0, call, true, part);
  agree(rt, call, col, chunk, MPI_DATATYPE_NULL, 0, MPI_OP_NULL);
  if (col.buffers.size() < procs) col.buffers.resize(procs);
  col.buffers[static_cast<std::size_t>(me)] = mine;
  ++col.contributed;
  return deliver(col, [=](Runtime& r, Collective& done) {
    require_all(r, call, done, static_cast<std::uint32_t>(procs));
    exchange_alltoall(r, call, done.buffers, chunk, static_cast<std::size_t>(me));
    if (recv_direct || chunk == 0) return;
    for (std::size_t i = 0; i < procs; ++i)
      unpack_into(r, recv_copy->data() + i * chunk, chunk, at(recvbuf, static_cast<std::int64_t>(i) * rext),
                  static_cast<std::uint64_t>(recvcount), recvtype);
    (void)send_copy;  // held until this rank's blocks have been moved
  });
}

int alltoall(const char* call, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
             MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return collective(call, request, [&](Runtime& rt, bool nb, std::uint32_t& part) -> Finish {
    const Comm& c = check_comm(rt, call, comm);
    const int me = my_rank(rt, c);
    const bool in_place = sendbuf == MPI_IN_PLACE;
    const std::uint64_t chunk = each_rank_bytes(rt, call, in_place, sendcount, sendtype, recvcount, recvtype);
    const void* src = in_place ? recvbuf : sendbuf;
    const MPI_Datatype stype = in_place ? recvtype : sendtype;
    const int scount = in_place ? recvcount : sendcount;
    const std::int64_t sext = rt.objects().type(stype)->extent() * scount,
                       rext = rt.objects().type(recvtype)->extent() * recvcount;
    const auto procs = static_cast<std::size_t>(c.size());
    if (!in_place) charge_own_copy(rt, chunk);
    if (!nb && can_move_between_ranks(rt))
      return alltoall_moved(rt, call, comm, c, src, scount, stype, sext, recvbuf, recvcount, recvtype, rext, chunk,
                            part);
    Collective& col = begin(rt, nb, comm, CollectiveOp::Alltoall, chunk, 0, call, true, part);
    agree(rt, call, col, chunk, MPI_DATATYPE_NULL, 0, MPI_OP_NULL);
    if (col.data.size() < procs * procs * chunk) col.data.resize(procs * procs * chunk);
    for (std::size_t i = 0; i < procs && chunk > 0; ++i)
      pack_into(rt, at(src, static_cast<std::int64_t>(i) * sext), static_cast<std::uint64_t>(scount), stype,
                col.data.data() + (static_cast<std::size_t>(me) * procs + i) * chunk);
    ++col.contributed;
    return deliver(col, [=](Runtime& r, Collective& done) {
      require_all(r, call, done, static_cast<std::uint32_t>(procs));
      for (std::size_t i = 0; i < procs && chunk > 0; ++i)
        unpack_into(r, done.data.data() + (i * procs + static_cast<std::size_t>(me)) * chunk, chunk,
                    at(recvbuf, static_cast<std::int64_t>(i) * rext), static_cast<std::uint64_t>(recvcount), recvtype);
    });
  });
}

int gatherv(const char* call, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
            const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm,
            MPI_Request* request) {
  return collective(call, request, [&](Runtime& rt, bool nb, std::uint32_t& part) -> Finish {
    const Comm& c = check_comm(rt, call, comm);
    check_root(rt, call, c, root);
    const int me = my_rank(rt, c), procs = c.size();
    const bool is_root = me == root;
    const bool in_place = is_root && sendbuf == MPI_IN_PLACE;
    std::vector<std::uint64_t> bytes(static_cast<std::size_t>(procs), 0);
    std::vector<int> counts, offsets;
    std::int64_t rext = 0;
    if (is_root) {
      check_counts(rt, call, recvcounts, procs);
      const std::uint64_t rsize = check_type(rt, call, recvtype).size;
      rext = rt.objects().type(recvtype)->extent();
      counts.assign(recvcounts, recvcounts + procs);
      offsets.assign(displs, displs + procs);
      for (int i = 0; i < procs; ++i)
        bytes[static_cast<std::size_t>(i)] = static_cast<std::uint64_t>(recvcounts[i]) * rsize;
    }
    if (!in_place) bytes[static_cast<std::size_t>(me)] = check_bytes(rt, call, sendcount, sendtype);
    if (is_root && !in_place) charge_own_copy(rt, bytes[static_cast<std::size_t>(me)]);
    Collective& col = begin_custom(rt, nb, comm, kGatherv, root, call, is_root, part,
                                   rooted_schedule(rt, c, comm, call, root, true, bytes));
    if (in_place)
      contribute_part(rt, col, static_cast<std::size_t>(me), static_cast<std::size_t>(procs),
                      at(recvbuf, displs[me] * rext), recvcounts[me], recvtype);
    else
      contribute_part(rt, col, static_cast<std::size_t>(me), static_cast<std::size_t>(procs), sendbuf, sendcount,
                      sendtype);
    return deliver(col, [=](Runtime& r, Collective& done) {
      if (is_root) {
        for (int i = 0; i < procs; ++i) {
          if (in_place && i == me) continue;
          const svector<std::byte>& p = done.parts[static_cast<std::size_t>(i)];
          if (p.size() > bytes[static_cast<std::size_t>(i)])
            r.fail(call, "rank " + std::to_string(i) + " sends " + std::to_string(p.size()) +
                             " bytes, the root receives " + std::to_string(bytes[static_cast<std::size_t>(i)]) +
                             " (MPI_ERR_TRUNCATE)");
          unpack_into(r, p.data(), p.size(), at(recvbuf, offsets[static_cast<std::size_t>(i)] * rext),
                      static_cast<std::uint64_t>(counts[static_cast<std::size_t>(i)]), recvtype);
        }
      }
    });
  });
}

int scatterv(const char* call, const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
             void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  return collective(call, request, [&](Runtime& rt, bool nb, std::uint32_t& part) -> Finish {
    const Comm& c = check_comm(rt, call, comm);
    check_root(rt, call, c, root);
    const int me = my_rank(rt, c), procs = c.size();
    const bool is_root = me == root;
    const bool in_place = is_root && recvbuf == MPI_IN_PLACE;
    std::vector<std::uint64_t> bytes(static_cast<std::size_t>(procs), 0);
    if (is_root) {
      check_counts(rt, call, sendcounts, procs);
      const std::uint64_t ssize = check_type(rt, call, sendtype).size;
      for (int i = 0; i < procs; ++i)
        bytes[static_cast<std::size_t>(i)] = static_cast<std::uint64_t>(sendcounts[i]) * ssize;
    }
    if (!in_place) {
      const std::uint64_t mine = check_bytes(rt, call, recvcount, recvtype);
      if (!is_root) bytes[static_cast<std::size_t>(me)] = mine;
    }
    if (is_root && !in_place) charge_own_copy(rt, bytes[static_cast<std::size_t>(me)]);
    Collective& col = begin_custom(rt, nb, comm, kScatterv, root, call, !is_root, part,
                                   rooted_schedule(rt, c, comm, call, root, false, bytes));
    if (is_root) {
      const std::int64_t sext = rt.objects().type(sendtype)->extent();
      for (int i = 0; i < procs; ++i)
        contribute_part(rt, col, static_cast<std::size_t>(i), static_cast<std::size_t>(procs),
                        at(sendbuf, displs[i] * sext), sendcounts[i], sendtype);
      ++col.contributed;
    }
    const std::uint64_t capacity =
        in_place ? 0 : static_cast<std::uint64_t>(recvcount) * rt.objects().type(recvtype)->size;
    return deliver(col, [=](Runtime& r, Collective& done) {
      if (!in_place) {
        require_all(r, call, done, 1);
        const svector<std::byte>& p = done.parts[static_cast<std::size_t>(me)];
        if (p.size() > capacity)
          r.fail(call, "the root sends " + std::to_string(p.size()) + " bytes, this rank receives " +
                           std::to_string(capacity) + " (MPI_ERR_TRUNCATE)");
        unpack_into(r, p.data(), p.size(), recvbuf, static_cast<std::uint64_t>(recvcount), recvtype);
      }
    });
  });
}

int allgatherv(const char* call, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
               const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return collective(call, request, [&](Runtime& rt, bool nb, std::uint32_t& part) -> Finish {
    const Comm& c = check_comm(rt, call, comm);
    const int me = my_rank(rt, c), procs = c.size();
    check_counts(rt, call, recvcounts, procs);
    const std::uint64_t rsize = check_type(rt, call, recvtype).size;
    const std::int64_t rext = rt.objects().type(recvtype)->extent();
    std::vector<std::uint64_t> bytes(static_cast<std::size_t>(procs));
    for (int i = 0; i < procs; ++i)
      bytes[static_cast<std::size_t>(i)] = static_cast<std::uint64_t>(recvcounts[i]) * rsize;
    const bool in_place = sendbuf == MPI_IN_PLACE;
    if (!in_place) charge_own_copy(rt, bytes[static_cast<std::size_t>(me)]);
    Collective& col =
        begin_custom(rt, nb, comm, kAllgatherv, 0, call, true, part, ring_schedule(rt, c, comm, call, bytes));
    if (in_place)
      contribute_part(rt, col, static_cast<std::size_t>(me), static_cast<std::size_t>(procs),
                      at(recvbuf, displs[me] * rext), recvcounts[me], recvtype);
    else
      contribute_part(rt, col, static_cast<std::size_t>(me), static_cast<std::size_t>(procs), sendbuf, sendcount,
                      sendtype);
    const std::vector<int> counts(recvcounts, recvcounts + procs), offsets(displs, displs + procs);
    return deliver(col, [=](Runtime& r, Collective& done) {
      for (int i = 0; i < procs; ++i) {
        const svector<std::byte>& p = done.parts[static_cast<std::size_t>(i)];
        if (p.size() > bytes[static_cast<std::size_t>(i)])
          r.fail(call, "rank " + std::to_string(i) + " sends " + std::to_string(p.size()) +
                           " bytes, this rank receives " + std::to_string(bytes[static_cast<std::size_t>(i)]) +
                           " (MPI_ERR_TRUNCATE)");
        unpack_into(r, p.data(), p.size(), at(recvbuf, offsets[static_cast<std::size_t>(i)] * rext),
                    static_cast<std::uint64_t>(counts[static_cast<std::size_t>(i)]), recvtype);
      }
    });
  });
}

// Alltoallv (w = false: counts x extent displacements, one type) and
// alltoallw (w = true: byte displacements, a type per rank).
int alltoallvw(const char* call, bool w, const void* sendbuf, const int sendcounts[], const int sdispls[],
               const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[], const int rdispls[],
               const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request* request) {
  return collective(call, request, [&](Runtime& rt, bool nb, std::uint32_t& part) -> Finish {
    const Comm& c = check_comm(rt, call, comm);
    const int me = my_rank(rt, c), procs = c.size();
    const bool in_place = sendbuf == MPI_IN_PLACE;
    check_counts(rt, call, recvcounts, procs);
    const int* scounts = in_place ? recvcounts : sendcounts;
    const int* sdisp = in_place ? rdispls : sdispls;
    const MPI_Datatype* stypes = in_place ? recvtypes : sendtypes;
    const void* src = in_place ? recvbuf : sendbuf;
    check_counts(rt, call, scounts, procs);
    auto type_at = [&](const MPI_Datatype* t, int i) { return w ? t[i] : t[0]; };
    auto offset = [&](const int* d, const MPI_Datatype* t, int i) {
      return w ? static_cast<std::int64_t>(d[i]) : d[i] * rt.objects().type(t[0])->extent();
    };
    std::vector<std::uint64_t> sbytes(static_cast<std::size_t>(procs)), rbytes(static_cast<std::size_t>(procs));
    for (int i = 0; i < procs; ++i) {
      sbytes[static_cast<std::size_t>(i)] =
          static_cast<std::uint64_t>(scounts[i]) * check_type(rt, call, type_at(stypes, i)).size;
      rbytes[static_cast<std::size_t>(i)] =
          static_cast<std::uint64_t>(recvcounts[i]) * check_type(rt, call, type_at(recvtypes, i)).size;
    }
    if (!in_place) charge_own_copy(rt, sbytes[static_cast<std::size_t>(me)]);
    const auto p = static_cast<std::size_t>(procs);
    // Where each peer's block goes in the receive buffer, as what type.
    std::vector<std::int64_t> roffsets(p);
    std::vector<MPI_Datatype> rtypes(p);
    for (int i = 0; i < procs; ++i) {
      roffsets[static_cast<std::size_t>(i)] = offset(rdispls, recvtypes, i);
      rtypes[static_cast<std::size_t>(i)] = type_at(recvtypes, i);
    }
    const std::vector<int> rcounts(recvcounts, recvcounts + procs);
    if (!nb && can_move_between_ranks(rt)) {
      // Moved once between sender and receiver (collective_moves.h): each block where
      // it is when its types are contiguous, else from or into a packed copy.
      bool send_direct = !in_place, recv_direct = true;
      for (int i = 0; i < procs; ++i) {
        send_direct = send_direct && rt.objects().type(type_at(stypes, i))->contiguous();
        recv_direct = recv_direct && rt.objects().type(type_at(recvtypes, i))->contiguous();
      }
      auto send_copy = std::make_shared<std::vector<std::byte>>();
      auto recv_copy = std::make_shared<std::vector<std::byte>>();
      RankBuffers mine;
      mine.entered = true;
      mine.pid = rt.threads() ? 0 : rt.pid_of(rt.current().world);
      mine.send_offset.resize(p);
      mine.send_bytes.assign(sbytes.begin(), sbytes.end());
      mine.recv_offset.resize(p);
      mine.recv_bytes.assign(rbytes.begin(), rbytes.end());
      if (send_direct) {
        mine.send = reinterpret_cast<std::uintptr_t>(src);
        for (int i = 0; i < procs; ++i)
          mine.send_offset[static_cast<std::size_t>(i)] = static_cast<std::uint64_t>(offset(sdisp, stypes, i));
      } else {
        send_copy->resize(std::accumulate(sbytes.begin(), sbytes.end(), std::uint64_t{0}));
        std::uint64_t at_byte = 0;
        for (int i = 0; i < procs; ++i) {
          const auto k = static_cast<std::size_t>(i);
          if (sbytes[k] > 0)
            pack_into(rt, at(src, offset(sdisp, stypes, i)), static_cast<std::uint64_t>(scounts[i]), type_at(stypes, i),
                      send_copy->data() + at_byte);
          mine.send_offset[k] = at_byte;
          at_byte += sbytes[k];
        }
        mine.send = reinterpret_cast<std::uintptr_t>(send_copy->data());
      }
      if (recv_direct) {
        mine.recv = reinterpret_cast<std::uintptr_t>(recvbuf);
        for (std::size_t k = 0; k < p; ++k) mine.recv_offset[k] = static_cast<std::uint64_t>(roffsets[k]);
      } else {
        recv_copy->resize(std::accumulate(rbytes.begin(), rbytes.end(), std::uint64_t{0}));
        std::uint64_t at_byte = 0;
        for (std::size_t k = 0; k < p; ++k) {
          mine.recv_offset[k] = at_byte;  // its place in the packed receive copy
          at_byte += rbytes[k];
        }
        mine.recv = reinterpret_cast<std::uintptr_t>(recv_copy->data());
      }
      Collective& col = begin_custom(rt, false, comm, w ? kAlltoallw : kAlltoallv, 0, call, true, part,
                                     exchange_schedule(rt, c, comm, call, sbytes, rbytes));
      if (col.buffers.size() < p) col.buffers.resize(p);
      col.buffers[static_cast<std::size_t>(me)] = std::move(mine);
      ++col.contributed;
      return deliver(col, [=](Runtime& r, Collective& done) {
        (void)send_copy;  // held until this rank's blocks have been moved
        exchange_alltoall(r, call, done.buffers, 0, static_cast<std::size_t>(me));
        if (recv_direct) return;
        for (std::size_t i = 0; i < p; ++i)  // what rank i sent this rank (at most what it receives)
          unpack_into(r, recv_copy->data() + done.buffers[static_cast<std::size_t>(me)].recv_offset[i],
                      done.buffers[i].send_bytes[static_cast<std::size_t>(me)], at(recvbuf, roffsets[i]),
                      static_cast<std::uint64_t>(rcounts[i]), rtypes[i]);
      });
    }
    Collective& col = begin_custom(rt, nb, comm, w ? kAlltoallw : kAlltoallv, 0, call, true, part,
                                   exchange_schedule(rt, c, comm, call, sbytes, rbytes));
    if (col.parts.size() < p * p) col.parts.resize(p * p);
    for (int i = 0; i < procs; ++i)
      col.parts[static_cast<std::size_t>(me) * p + static_cast<std::size_t>(i)] =
          pack_data(rt, at(src, offset(sdisp, stypes, i)), scounts[i], type_at(stypes, i));
    return deliver(col, [=](Runtime& r, Collective& done) {
      for (std::size_t i = 0; i < p; ++i) {
        const svector<std::byte>& part_i = done.parts[i * p + static_cast<std::size_t>(me)];
        if (part_i.size() > rbytes[i])
          r.fail(call, "rank " + std::to_string(i) + " sends " + std::to_string(part_i.size()) +
                           " bytes, this rank receives " + std::to_string(rbytes[i]) + " (MPI_ERR_TRUNCATE)");
        unpack_into(r, part_i.data(), part_i.size(), at(recvbuf, roffsets[i]), static_cast<std::uint64_t>(rcounts[i]),
                    rtypes[i]);
      }
    });
  });
}

int reduce_scatter(const char* call, bool block, const void* sendbuf, void* recvbuf, const int recvcounts[],
                   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  return collective(call, request, [&](Runtime& rt, bool nb, std::uint32_t& part) -> Finish {
    const Comm& c = check_comm(rt, call, comm);
    const int me = my_rank(rt, c), procs = c.size();
    std::vector<int> counts(static_cast<std::size_t>(procs));
    for (int i = 0; i < procs; ++i) counts[static_cast<std::size_t>(i)] = block ? recvcounts[0] : recvcounts[i];
    check_counts(rt, call, counts.data(), procs);
    check_op(rt, call, op, datatype);
    const std::uint64_t size = rt.objects().type(datatype)->size;
    const int total = std::accumulate(counts.begin(), counts.end(), 0);
    std::vector<std::uint64_t> part_bytes(static_cast<std::size_t>(procs));
    for (int i = 0; i < procs; ++i)
      part_bytes[static_cast<std::size_t>(i)] = static_cast<std::uint64_t>(counts[static_cast<std::size_t>(i)]) * size;
    const std::uint64_t chunk = static_cast<std::uint64_t>(total) * size;
    Collective& col = begin_custom(rt, nb, comm, block ? kReduceScatterBlock : kReduceScatter, 0, call, true, part,
                                   reduce_scatter_schedule(rt, c, comm, call, chunk, part_bytes));
    agree(rt, call, col, chunk, datatype, total, op);
    col.count = total;
    col.type = datatype;
    contribute(rt, col, static_cast<std::size_t>(me), static_cast<std::size_t>(procs),
               sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, total, datatype, chunk);
    const int before = std::accumulate(counts.begin(), counts.begin() + me, 0);
    const int mine = counts[static_cast<std::size_t>(me)];
    return deliver(col, [=](Runtime& r, Collective& done) {
      if (mine > 0 && chunk > 0)
        unpack_into(r, reduced(r, call, done, procs) + static_cast<std::uint64_t>(before) * size,
                    static_cast<std::uint64_t>(mine) * size, recvbuf, static_cast<std::uint64_t>(mine), datatype);
    });
  });
}

// Scan (exclusive = false) and exscan: rank r gets c_0 op ... op c_r (or up to c_{r-1}).
int scan(const char* call, bool exclusive, const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
         MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  return collective(call, request, [&](Runtime& rt, bool nb, std::uint32_t& part) -> Finish {
    const Comm& c = check_comm(rt, call, comm);
    const std::uint64_t bytes = check_bytes(rt, call, count, datatype);
    check_op(rt, call, op, datatype);
    const int me = my_rank(rt, c), procs = c.size();
    Collective& col = begin_custom(rt, nb, comm, exclusive ? kExscan : kScan, 0, call, true, part,
                                   chain_schedule(rt, c, comm, call, bytes));
    agree(rt, call, col, bytes, datatype, count, op);
    col.type = datatype;
    contribute(rt, col, static_cast<std::size_t>(me), static_cast<std::size_t>(procs),
               sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, count, datatype, bytes);
    return deliver(col, [=](Runtime& r, Collective& done) {
      const int last = exclusive ? me - 1 : me;
      if (last >= 0 && bytes > 0) {
        const svector<std::byte> prefix = fold(r, done, 0, last, bytes);
        unpack_into(r, prefix.data(), bytes, recvbuf, static_cast<std::uint64_t>(count), datatype);
      }
    });
  });
}

}  // namespace

extern "C" {

int MPI_Barrier(MPI_Comm comm) { return barrier("MPI_Barrier", comm, nullptr); }
int MPI_Ibarrier(MPI_Comm comm, MPI_Request* request) { return barrier("MPI_Ibarrier", comm, request); }

int MPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  return bcast("MPI_Bcast", buffer, count, datatype, root, comm, nullptr);
}
int MPI_Ibcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Request* request) {
  return bcast("MPI_Ibcast", buffer, count, datatype, root, comm, request);
}

int MPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
               MPI_Comm comm) {
  return reduce("MPI_Reduce", sendbuf, recvbuf, count, datatype, op, root, comm, nullptr);
}
int MPI_Ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                MPI_Comm comm, MPI_Request* request) {
  return reduce("MPI_Ireduce", sendbuf, recvbuf, count, datatype, op, root, comm, request);
}

int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return allreduce("MPI_Allreduce", sendbuf, recvbuf, count, datatype, op, comm, nullptr);
}
int MPI_Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                   MPI_Request* request) {
  return allreduce("MPI_Iallreduce", sendbuf, recvbuf, count, datatype, op, comm, request);
}

int MPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
               MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return gather("MPI_Gather", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, nullptr);
}
int MPI_Igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  return gather("MPI_Igather", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request);
}

int MPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return scatter("MPI_Scatter", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, nullptr);
}
int MPI_Iscatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  return scatter("MPI_Iscatter", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request);
}

int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm) {
  return allgather("MPI_Allgather", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, nullptr);
}
int MPI_Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                   MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return allgather("MPI_Iallgather", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
}

int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, MPI_Comm comm) {
  return alltoall("MPI_Alltoall", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, nullptr);
}
int MPI_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return alltoall("MPI_Ialltoall", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
}

int MPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return gatherv("MPI_Gatherv", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm,
                 nullptr);
}
int MPI_Igatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                 const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  return gatherv("MPI_Igatherv", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm,
                 request);
}

int MPI_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return scatterv("MPI_Scatterv", sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm,
                  nullptr);
}
int MPI_Iscatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  return scatterv("MPI_Iscatterv", sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm,
                  request);
}

int MPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                   const int displs[], MPI_Datatype recvtype, MPI_Comm comm) {
  return allgatherv("MPI_Allgatherv", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
                    nullptr);
}
int MPI_Iallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                    const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return allgatherv("MPI_Iallgatherv", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
                    request);
}

int MPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                  void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  return alltoallvw("MPI_Alltoallv", false, sendbuf, sendcounts, sdispls, &sendtype, recvbuf, recvcounts, rdispls,
                    &recvtype, comm, nullptr);
}
int MPI_Ialltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                   void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                   MPI_Request* request) {
  return alltoallvw("MPI_Ialltoallv", false, sendbuf, sendcounts, sdispls, &sendtype, recvbuf, recvcounts, rdispls,
                    &recvtype, comm, request);
}
int MPI_Alltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[],
                  void* recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[],
                  MPI_Comm comm) {
  return alltoallvw("MPI_Alltoallw", true, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                    recvtypes, comm, nullptr);
}
int MPI_Ialltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[],
                   void* recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[],
                   MPI_Comm comm, MPI_Request* request) {
  return alltoallvw("MPI_Ialltoallw", true, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                    recvtypes, comm, request);
}

int MPI_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
                       MPI_Comm comm) {
  return reduce_scatter("MPI_Reduce_scatter", false, sendbuf, recvbuf, recvcounts, datatype, op, comm, nullptr);
}
int MPI_Ireduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
                        MPI_Comm comm, MPI_Request* request) {
  return reduce_scatter("MPI_Ireduce_scatter", false, sendbuf, recvbuf, recvcounts, datatype, op, comm, request);
}
int MPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
                             MPI_Comm comm) {
  return reduce_scatter("MPI_Reduce_scatter_block", true, sendbuf, recvbuf, &recvcount, datatype, op, comm, nullptr);
}
int MPI_Ireduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
                              MPI_Comm comm, MPI_Request* request) {
  return reduce_scatter("MPI_Ireduce_scatter_block", true, sendbuf, recvbuf, &recvcount, datatype, op, comm, request);
}

int MPI_Scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return scan("MPI_Scan", false, sendbuf, recvbuf, count, datatype, op, comm, nullptr);
}
int MPI_Iscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
              MPI_Request* request) {
  return scan("MPI_Iscan", false, sendbuf, recvbuf, count, datatype, op, comm, request);
}
int MPI_Exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return scan("MPI_Exscan", true, sendbuf, recvbuf, count, datatype, op, comm, nullptr);
}
int MPI_Iexscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                MPI_Request* request) {
  return scan("MPI_Iexscan", true, sendbuf, recvbuf, count, datatype, op, comm, request);
}

int MPI_Reduce_local(const void* inbuf, void* inoutbuf, int count, MPI_Datatype datatype, MPI_Op op) {
  return mpi_call("MPI_Reduce_local", [&](Runtime& rt) {
    const std::uint64_t bytes = check_bytes(rt, "MPI_Reduce_local", count, datatype);
    check_op(rt, "MPI_Reduce_local", op, datatype);
    if (bytes == 0) return MPI_SUCCESS;
    svector<std::byte> in = pack_data(rt, inbuf, count, datatype), acc = pack_data(rt, inoutbuf, count, datatype);
    reduce_packed(rt, op, datatype, static_cast<std::uint64_t>(count), acc.data(), in.data(), true);
    unpack_into(rt, acc.data(), bytes, inoutbuf, static_cast<std::uint64_t>(count), datatype);
    return MPI_SUCCESS;
  });
}

int MPI_Op_create(MPI_User_function* function, int commute, MPI_Op* op) {
  return mpi_call(
      "MPI_Op_create",
      [&](Runtime& rt) {
        *op = rt.objects().add_op(function, commute != 0);
        return MPI_SUCCESS;
      },
      false);
}

int MPI_Op_free(MPI_Op* op) {
  return mpi_call(
      "MPI_Op_free",
      [&](Runtime& rt) {
        if (!rt.objects().user_op(*op))
          rt.fail("MPI_Op_free", "operator " + std::to_string(*op) + " is not user-defined (MPI_ERR_OP)");
        rt.objects().free_op(*op);
        *op = MPI_OP_NULL;
        return MPI_SUCCESS;
      },
      false);
}

int MPI_Op_commutative(MPI_Op op, int* commute) {
  return mpi_call(
      "MPI_Op_commutative",
      [&](Runtime& rt) {
        ObjectTables::UserOp* u = rt.objects().user_op(op);
        *commute = u ? u->commute : 1;
        return MPI_SUCCESS;
      },
      false);
}

}  // extern "C"
