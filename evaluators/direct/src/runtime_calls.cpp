// The runtime's building blocks of MPI calls: point-to-point posts, probes,
// communicators, groups, datatypes, operators, keyvals, and the timing side
// of collectives (the algorithm library's operations for the calling rank).
#include <algorithm>
#include <cstring>

#include "runtime_impl.h"

namespace poems::direct::detail {

std::uint32_t Runtime::post_send(svector<std::byte>&& data, std::uint32_t dest, int tag, MPI_Comm comm, bool blocking,
                                 int mode, std::uint32_t node, const char* call) {
  Rank& k = *current_;
  issue_compute();
  const std::uint64_t bytes = data.size();
  Operation op;
  op.kind = OpKind::Send;
  op.peer = static_cast<std::int32_t>(dest);
  op.tag = tag;
  op.comm = static_cast<std::uint32_t>(comm);
  op.bytes = bytes;
  const std::uint64_t idx = issue(op, k.after, node);
  Message msg;
  msg.data = std::move(data);
  msg.bytes = bytes;
  msg.tag = tag;
  msg.comm = static_cast<std::uint32_t>(comm);
  msg.source = comm_rank(*comms_[static_cast<std::size_t>(comm)], k.world);
  const bool synchronous = mode == 1;
  std::uint64_t ack = kNoOp;
  if (synchronous) {
    // The receiver acknowledges the match with an empty message (its
    // runtime sends it); the send completes when that arrives.
    msg.ack_tag = static_cast<std::uint32_t>(idx & 0x3fffffff);
    Operation r;
    r.kind = OpKind::Recv;
    r.peer = static_cast<std::int32_t>(dest);
    r.tag = static_cast<std::int32_t>(msg.ack_tag);
    r.comm = kAckComm;
    const Dependency start{idx, true};
    ack = issue(r, {&start, 1}, node);
    synchronous_sends_ = true;
  }
  messages_.emplace(op_key(k.world, idx), std::move(msg));
  // The sender may go on once the send has started (its data are copied);
  // MPI_Send of a large message waits for its completion (rendezvous).
  k.after.assign(1, Dependency{idx, !blocking});
  const bool rendezvous = options_.sim.params.rendezvous(bytes);
  if (blocking && !rendezvous && !synchronous) return kNoRequest;  // complete for the program at once
  const std::uint32_t id = new_request(Request::Kind::Send, call);
  expect(id, idx);
  if (ack != kNoOp) expect(id, ack);
  return id;
}

std::uint32_t Runtime::post_recv(RecvTarget&& target, std::int32_t source, int tag, MPI_Comm comm, std::uint32_t node,
                                 const char* call) {
  Rank& k = *current_;
  issue_compute();
  Operation op;
  op.kind = OpKind::Recv;
  op.peer = source;
  op.tag = tag;
  op.comm = static_cast<std::uint32_t>(comm);
  op.bytes = target.capacity;
  const std::uint64_t idx = issue(op, k.after, node);
  k.after.assign(1, Dependency{idx, true});
  const std::uint32_t id = new_request(Request::Kind::Recv, call);
  Request& q = requests_[id];
  q.target = std::move(target);
  expect(id, idx);
  return id;
}

std::pair<std::uint32_t, std::uint64_t> Runtime::probe_match_key(std::int32_t source, int tag, MPI_Comm comm) {
  for (const auto& [sender, op] : current_->unexpected) {
    const Message& m = messages_.at(op_key(sender, op));
    if (m.comm == static_cast<std::uint32_t>(comm) && (source < 0 || static_cast<std::uint32_t>(source) == sender) &&
        (tag == MPI_ANY_TAG || tag == m.tag))
      return {sender, op};
  }
  return {kNoRequest, kNoOp};
}

const Message* Runtime::probe_match(std::int32_t source, int tag, MPI_Comm comm) {
  const auto [sender, op] = probe_match_key(source, tag, comm);
  return sender == kNoRequest ? nullptr : &messages_.at(op_key(sender, op));
}

Message* Runtime::message(std::uint64_t key) {
  auto it = messages_.find(key);
  return it == messages_.end() ? nullptr : &it->second;
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
  k.probe.active = false;
}

// ---- communicators and groups ----------------------------------------------------------

Comm* Runtime::comm(MPI_Comm handle) {
  if (handle < 0 || static_cast<std::size_t>(handle) >= comms_.size()) return nullptr;
  Comm* c = comms_[static_cast<std::size_t>(handle)];
  if (c->freed) return nullptr;
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

MPI_Comm Runtime::add_comm(svector<std::uint32_t> members) {
  Comm* c = shared_new<Comm>();
  for (std::size_t i = 0; i < members.size(); ++i) c->rank_of.emplace(members[i], static_cast<int>(i));
  c->started.assign(members.size(), 0);
  c->members = std::move(members);
  if (comms_.size() >= static_cast<std::size_t>(kRmaComm)) {
    shared_delete(c);
    throw std::length_error("too many communicators");
  }
  comms_.push_back(c);
  return static_cast<MPI_Comm>(comms_.size() - 1);
}

MPI_Group Runtime::add_group(svector<std::uint32_t> members) {
  if (members.empty()) return MPI_GROUP_EMPTY;
  for (std::size_t i = 1; i < groups_.size(); ++i)
    if (!groups_[i].used) {
      groups_[i].members = std::move(members);
      groups_[i].used = true;
      return static_cast<MPI_Group>(i);
    }
  groups_.emplace_back();
  groups_.back().members = std::move(members);
  groups_.back().used = true;
  return static_cast<MPI_Group>(groups_.size() - 1);
}

MPI_Comm Runtime::group_comm(MPI_Comm parent, int tag, const svector<std::uint32_t>& members) {
  GroupComms& entry = group_comms_[{{parent, tag}, members}];
  std::uint32_t& calls = entry.calls[current_->world];
  if (calls == entry.made.size()) entry.made.push_back(add_comm(members));
  return entry.made[calls++];
}

Group* Runtime::group(MPI_Group handle) {
  if (handle < 0 || static_cast<std::size_t>(handle) >= groups_.size()) return nullptr;
  Group& g = groups_[static_cast<std::size_t>(handle)];
  return g.used ? &g : nullptr;
}

// ---- datatypes, operators, keyvals ----------------------------------------------------------

TypeInfo* Runtime::type(MPI_Datatype handle) {
  if (handle <= 0 || static_cast<std::size_t>(handle) >= types_.size()) return nullptr;
  TypeInfo& t = types_[static_cast<std::size_t>(handle)];
  return t.used ? &t : nullptr;
}

MPI_Datatype Runtime::add_type(TypeInfo&& t) {
  t.used = true;
  if (free_types_ != 0) {
    const std::uint32_t id = free_types_ - 1;
    free_types_ = static_cast<std::uint32_t>(types_[id].elements);  // the free list's link
    types_[id] = std::move(t);
    return static_cast<MPI_Datatype>(id);
  }
  if (types_.size() >= 0x7fffffff) throw std::length_error("too many datatypes");
  types_.push_back(std::move(t));
  return static_cast<MPI_Datatype>(types_.size() - 1);
}

void Runtime::free_type(MPI_Datatype handle) {
  TypeInfo& t = types_[static_cast<std::size_t>(handle)];
  t = TypeInfo{};
  t.elements = free_types_;  // the free list's link
  free_types_ = static_cast<std::uint32_t>(handle) + 1;
}

Runtime::UserOp* Runtime::user_op(MPI_Op op) {
  if (op <= MPI_NO_OP || static_cast<std::size_t>(op) >= user_ops_.size()) return nullptr;
  UserOp& u = user_ops_[static_cast<std::size_t>(op)];
  return u.used ? &u : nullptr;
}

MPI_Op Runtime::add_op(MPI_User_function* fn, bool commute) {
  user_ops_.push_back(UserOp{fn, commute, true});
  return static_cast<MPI_Op>(user_ops_.size() - 1);
}

void Runtime::free_op(MPI_Op op) { user_ops_[static_cast<std::size_t>(op)].used = false; }

int Runtime::add_keyval(const Keyval& k) {
  keyvals_.push_back(k);
  keyvals_.back().used = true;
  return static_cast<int>(keyvals_.size() - 1);
}

Runtime::Keyval* Runtime::keyval(int k) {
  if (k <= 0 || static_cast<std::size_t>(k) >= keyvals_.size()) return nullptr;
  Keyval& kv = keyvals_[static_cast<std::size_t>(k)];
  return kv.used ? &kv : nullptr;
}

void Runtime::free_keyval(int k) { keyvals_[static_cast<std::size_t>(k)].used = false; }

// ---- collectives ------------------------------------------------------------------------------

std::uint32_t Runtime::collective_tag(MPI_Comm, std::uint64_t seq) const {
  return static_cast<std::uint32_t>(seq & 0x3fffffff);
}

Collective* Runtime::find_collective(const CollectiveKey& key) {
  auto it = collectives_.find(key);
  return it == collectives_.end() ? nullptr : &it->second;
}

taskgraph::CollectiveCall Runtime::library_call(MPI_Comm handle, taskgraph::CollectiveOp op, std::uint64_t bytes,
                                                int root, const char* call, std::int32_t tag) {
  const Comm& c = *comms_[static_cast<std::size_t>(handle)];
  taskgraph::CollectiveCall cc;
  cc.op = op;
  auto chosen = options_.algorithms.find(op);
  cc.algorithm = chosen != options_.algorithms.end() ? chosen->second : taskgraph::algorithms_for(op).front();
  cc.procs = static_cast<std::uint32_t>(c.size());
  cc.rank = static_cast<std::uint32_t>(comm_rank(c, current_->world));
  cc.bytes = bytes;
  cc.root = static_cast<std::uint32_t>(root);
  cc.comm = static_cast<std::uint32_t>(handle);
  cc.tag = tag;
  cc.node = node_of(call);
  return cc;
}

Collective& Runtime::start_collective(MPI_Comm handle, taskgraph::CollectiveOp op, std::uint64_t bytes, int root,
                                      const char* call, bool wait, std::uint32_t& request) {
  return start_custom_collective(
      handle, static_cast<int>(op), root, call, wait, request,
      [&](std::uint64_t first, const std::vector<Dependency>& entry, std::int32_t tag, taskgraph::OpBuffer& out) {
        return taskgraph::append_collective(library_call(handle, op, bytes, root, call, tag), first, entry, out);
      });
}

Collective& Runtime::start_nonblocking_collective(MPI_Comm handle, taskgraph::CollectiveOp op, std::uint64_t bytes,
                                                  int root, const char* call, std::uint32_t& request) {
  return start_nonblocking_collective(
      handle, static_cast<int>(op), root, call, request,
      [&](std::uint64_t first, const std::vector<Dependency>& entry, std::int32_t tag, taskgraph::OpBuffer& out) {
        return taskgraph::append_collective(library_call(handle, op, bytes, root, call, tag), first, entry, out);
      });
}

Collective& Runtime::enter_collective(MPI_Comm handle, int kind, int root, const char* call, std::uint64_t& seq) {
  Rank& k = *current_;
  Comm& c = *comms_[static_cast<std::size_t>(handle)];
  const int me = comm_rank(c, k.world);
  const std::size_t slot = c.self ? k.world : static_cast<std::size_t>(me);
  seq = c.started[slot]++;
  const CollectiveKey key{handle, c.self ? k.world : 0, seq};
  Collective& col = collectives_[key];
  if (col.entered == 0) {
    col.key = key;
    col.op = kind;
    col.call = call;
    col.root = root;
  } else if (col.op != kind || col.root != root) {
    fail(call, "collective call " + std::to_string(seq + 1) + " on this communicator is " + col.call + " with root " +
                   std::to_string(col.root) + " on other ranks");
  }
  ++col.entered;
  return col;
}

Collective& Runtime::start_custom_collective(MPI_Comm handle, int kind, int root, const char* call, bool wait,
                                             std::uint32_t& request, const ScheduleBuilder& build) {
  Rank& k = *current_;
  Comm& c = *comms_[static_cast<std::size_t>(handle)];
  std::uint64_t seq = 0;
  Collective& col = enter_collective(handle, kind, root, call, seq);

  issue_compute();
  taskgraph::OpBuffer ops;  // private scratch: the schedule, then into the outbox
  const std::vector<Dependency> entry(k.after.begin(), k.after.end());
  std::vector<std::uint64_t> exits =
      build(k.next_op, entry, static_cast<std::int32_t>(collective_tag(handle, seq)), ops);
  for (Operation& o : ops.ops) {
    o.peer = static_cast<std::int32_t>(world_rank(c, o.peer));
    ++k.next_op;
  }
  append_ops(k, ops, 0);
  request = kNoRequest;
  if (ops.ops.empty()) return col;  // nothing to do on this rank (one member)
  k.after.clear();
  for (std::uint64_t e : exits) k.after.push_back(Dependency{e, false});
  if (wait) {
    request = new_request(Request::Kind::Collective);
    for (std::uint64_t e : exits) expect(request, e);
  }
  return col;
}

Collective& Runtime::start_nonblocking_collective(MPI_Comm handle, int kind, int root, const char* call,
                                                  std::uint32_t& request, const ScheduleBuilder& build) {
  Rank& k = *current_;
  Comm& c = *comms_[static_cast<std::size_t>(handle)];
  std::uint64_t seq = 0;
  Collective& col = enter_collective(handle, kind, root, call, seq);
  // The schedule, relative to its first operation, with the companion's peers.
  taskgraph::OpBuffer ops;
  std::vector<std::uint64_t> exits = build(0, {}, static_cast<std::int32_t>(collective_tag(handle, seq)), ops);
  for (Operation& o : ops.ops) o.peer = static_cast<std::int32_t>(programs_ + world_rank(c, o.peer));
  request = new_request(Request::Kind::Collective, call);
  // It starts when the program reaches this call in virtual time: a marker
  // operation in the program's stream, whose completion hands the schedule
  // to the companion (run_deferred).
  issue_compute();
  Operation marker;
  marker.kind = OpKind::Calc;
  const std::uint64_t idx = issue(marker, k.after, node_of(call));
  k.after.assign(1, Dependency{idx, false});
  std::uint32_t index;
  if (free_deferred_ != 0) {
    index = free_deferred_ - 1;
    free_deferred_ = deferred_[index].request;
  } else {
    deferred_.emplace_back();
    index = static_cast<std::uint32_t>(deferred_.size() - 1);
  }
  DeferredSchedule& d = deferred_[index];
  d.companion = programs_ + k.world;
  d.ops.assign(ops.ops.begin(), ops.ops.end());
  d.deps.assign(ops.deps.begin(), ops.deps.end());
  d.exits.assign(exits.begin(), exits.end());
  d.request = request;
  const std::uint32_t start = new_request(Request::Kind::Deferred, call);
  requests_[start].deferred = index;
  expect(start, idx);
  return col;
}

void Runtime::finish_collective(MPI_Comm handle, Collective& col) {
  Comm& c = *comms_[static_cast<std::size_t>(handle)];
  if (++col.left < static_cast<std::uint32_t>(c.size())) return;
  collectives_.erase(col.key);
}

}  // namespace poems::direct::detail
