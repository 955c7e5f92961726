// The runtime's building blocks of MPI calls: point-to-point posts, probes,
// communicators and the timing side of collectives (the algorithm library's
// operations for the calling rank).
#include <algorithm>
#include <cstring>

#include "runtime_impl.h"

namespace poems::direct::detail {

std::uint32_t Runtime::post_send(const void* buf, std::uint64_t bytes, std::uint32_t dest, int tag, MPI_Comm comm,
                                 bool blocking, std::uint32_t node) {
  Rank& k = *current_;
  issue_compute();
  Operation op;
  op.kind = OpKind::Send;
  op.peer = static_cast<std::int32_t>(dest);
  op.tag = tag;
  op.comm = static_cast<std::uint32_t>(comm);
  op.bytes = bytes;
  const std::uint64_t idx = issue(op, k.after, node);
  Message msg;
  msg.bytes = bytes;
  msg.tag = tag;
  msg.comm = static_cast<std::uint32_t>(comm);
  msg.source = comm_rank(*comms_[static_cast<std::size_t>(comm)], k.world);
  const bool rendezvous = options_.sim.params.rendezvous(bytes);
  if (rendezvous) {
    msg.user = buf;  // the sender waits until the match (blocking) or keeps it until MPI_Wait (MPI's rule)
  } else if (bytes > 0) {
    const auto* p = static_cast<const std::byte*>(buf);
    msg.copy.assign(p, p + bytes);
  }
  messages_.emplace(op_key(k.world, idx), std::move(msg));
  k.after.assign(1, Dependency{idx, !blocking});
  // A blocking eager send is complete for the program as soon as it is
  // copied: nothing waits for it, so no request tracks it.
  if (blocking && !rendezvous) return kNoRequest;
  const std::uint32_t id = new_request(Request::Kind::Send);
  expect(id, idx);
  return id;
}

std::uint32_t Runtime::post_recv(void* buf, std::uint64_t capacity, std::int32_t source, int tag, MPI_Comm comm,
                                 std::uint32_t node) {
  Rank& k = *current_;
  issue_compute();
  Operation op;
  op.kind = OpKind::Recv;
  op.peer = source;
  op.tag = tag;
  op.comm = static_cast<std::uint32_t>(comm);
  op.bytes = capacity;
  const std::uint64_t idx = issue(op, k.after, node);
  k.after.assign(1, Dependency{idx, true});
  const std::uint32_t id = new_request(Request::Kind::Recv);
  Request& q = requests_[id];
  q.buffer = buf;
  q.capacity = capacity;
  expect(id, idx);
  return id;
}

const Message* Runtime::probe_match(std::int32_t source, int tag, MPI_Comm comm) {
  for (const auto& [sender, op] : current_->unexpected) {
    const Message& m = messages_.at(op_key(sender, op));
    if (m.comm == static_cast<std::uint32_t>(comm) && (source < 0 || static_cast<std::uint32_t>(source) == sender) &&
        (tag == MPI_ANY_TAG || tag == m.tag))
      return &m;
  }
  return nullptr;
}

void Runtime::block_in_probe(std::int32_t source, int tag, MPI_Comm comm, const char* call) {
  Rank& k = *current_;
  k.probe.active = true;
  k.probe.source = source;
  k.probe.tag = tag;
  k.probe.comm = comm;
  k.state = Rank::State::Blocked;
  k.blocked_in = call;
  suspend(k);
}

// ---- communicators ------------------------------------------------------------------

Comm* Runtime::comm(MPI_Comm handle) {
  if (handle < 0 || static_cast<std::size_t>(handle) >= comms_.size()) return nullptr;
  Comm* c = comms_[static_cast<std::size_t>(handle)].get();
  return comm_rank(*c, current_->world) < 0 ? nullptr : c;
}

int Runtime::comm_rank(const Comm& c, std::uint32_t world) const {
  if (c.self) return 0;
  if (c.rank_of.empty()) return static_cast<int>(world);  // the world: identity
  auto it = c.rank_of.find(world);
  return it == c.rank_of.end() ? -1 : it->second;
}

std::uint32_t Runtime::world_rank(const Comm& c, int rank) const {
  return c.self ? current_->world : c.members[static_cast<std::size_t>(rank)];
}

MPI_Comm Runtime::add_comm(std::vector<std::uint32_t> members) {
  auto c = std::make_unique<Comm>();
  for (std::size_t i = 0; i < members.size(); ++i) c->rank_of.emplace(members[i], static_cast<int>(i));
  c->started.assign(members.size(), 0);
  c->members = std::move(members);
  if (comms_.size() >= 0x7fffffff) throw std::length_error("too many communicators");
  comms_.push_back(std::move(c));
  return static_cast<MPI_Comm>(comms_.size() - 1);
}

// ---- collectives --------------------------------------------------------------------

Collective& Runtime::start_collective(MPI_Comm handle, taskgraph::CollectiveOp op, std::uint64_t bytes, int root,
                                      const char* call, bool wait, std::uint32_t& request) {
  Rank& k = *current_;
  Comm& c = *comms_[static_cast<std::size_t>(handle)];
  const int me = comm_rank(c, k.world);
  const std::size_t slot = c.self ? k.world : static_cast<std::size_t>(me);
  const std::uint64_t seq = c.started[slot]++;
  const CollectiveKey key{handle, c.self ? k.world : 0, seq};
  Collective& col = collectives_[key];
  if (col.entered == 0) {
    col.key = key;
    col.op = op;
    col.call = call;
    col.root = root;
  } else if (col.op != op || col.root != root) {
    fail(call, "collective call " + std::to_string(seq + 1) + " on this communicator is " + col.call + " with root " +
                   std::to_string(col.root) + " on other ranks");
  }
  ++col.entered;

  issue_compute();
  taskgraph::CollectiveCall cc;
  cc.op = op;
  auto chosen = options_.algorithms.find(op);
  cc.algorithm = chosen != options_.algorithms.end() ? chosen->second : taskgraph::algorithms_for(op).front();
  cc.procs = static_cast<std::uint32_t>(c.size());
  cc.rank = static_cast<std::uint32_t>(me);
  cc.bytes = bytes;
  cc.root = static_cast<std::uint32_t>(root);
  cc.comm = static_cast<std::uint32_t>(handle);
  cc.tag = static_cast<std::int32_t>(seq & 0x3fffffff);
  cc.node = node_of(call);
  const std::size_t first = k.out.ops.size();
  std::vector<std::uint64_t> exits = taskgraph::append_collective(cc, k.next_op, k.after, k.out);
  for (std::size_t i = first; i < k.out.ops.size(); ++i) {
    Operation& o = k.out.ops[i];
    o.peer = static_cast<std::int32_t>(world_rank(c, o.peer));
    ++k.next_op;
  }
  request = kNoRequest;
  if (k.out.ops.size() == first) return col;  // nothing to do on this rank (one member)
  k.after.clear();
  for (std::uint64_t e : exits) k.after.push_back(Dependency{e, false});
  if (wait) {
    request = new_request(Request::Kind::Collective);
    for (std::uint64_t e : exits) expect(request, e);
  }
  return col;
}

void Runtime::finish_collective(MPI_Comm handle, Collective& col) {
  Comm& c = *comms_[static_cast<std::size_t>(handle)];
  if (++col.left < static_cast<std::uint32_t>(c.size())) return;
  collectives_.erase(col.key);
}

}  // namespace poems::direct::detail
