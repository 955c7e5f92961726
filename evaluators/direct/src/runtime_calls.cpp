// The runtime's building blocks of MPI calls: point-to-point posts, probes,
// and the timing side of collectives (the algorithm library's operations for
// the calling rank).
#include <algorithm>
#include <cstring>

#include "runtime_impl.h"
#include "thread_gate.h"

namespace poems::direct::detail {

std::uint32_t Runtime::post_send(svector<std::byte>&& data, std::uint32_t dest, int tag, MPI_Comm comm, bool blocking,
                                 int mode, std::uint32_t node, const char* call) {
  Rank& k = *cur();
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
  msg.source = Communicators::rank(comms_.at(comm), k.world);
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
  }
  if (early_enabled()) {
    Rank& to = ranks_[dest];
    msg.inbox_at = to.inbox_base + to.inbox.size();
    to.inbox.emplace_back(k.world, idx);
    if (to.data_wait) data_sent(to, dest, k.world);
  }
  messages_.add(op_key(k.world, idx), std::move(msg), synchronous);
  // The sender may go on once the send has started (its data are copied);
  // MPI_Send of a large message waits for its completion (rendezvous).
  k.after.assign(1, Dependency{idx, !blocking});
  const bool rendezvous = options_.sim.params.rendezvous(bytes);
  if (blocking && !rendezvous && !synchronous) return kNoRequest;  // complete for the program at once
  const std::uint32_t id = new_request(Request::Kind::Send, call);
  requests_[id].standard = !synchronous;
  requests_[id].bytes = bytes;
  expect(id, idx);
  if (ack != kNoOp) expect(id, ack);
  return id;
}

std::uint32_t Runtime::post_recv(RecvTarget&& target, std::int32_t source, int tag, MPI_Comm comm, std::uint32_t node,
                                 const char* call, bool program_completes) {
  Rank& k = *cur();
  issue_compute();
  Operation op;
  op.kind = OpKind::Recv;
  op.peer = source;
  op.tag = tag;
  op.comm = static_cast<std::uint32_t>(comm);
  op.bytes = target.capacity;
  op.receive_overhead_deferred = program_completes && options_.receive_overhead_at_wait;
  const std::uint64_t idx = issue(op, k.after, node);
  k.after.assign(1, Dependency{idx, true});
  const std::uint32_t id = new_request(Request::Kind::Recv, call);
  Request& q = requests_[id];
  q.target = std::move(target);
  q.overhead_owed = op.receive_overhead_deferred;
  q.peer = source;
  q.ptag = tag;
  q.comm = comm;
  expect(id, idx);
  return id;
}

// ---- early completion -------------------------------------------------------------------------

namespace {

// A request of rank `k` that a wait may complete early (take_early): pending, its own, not persistent.
bool early_candidate(const Request& q, const Rank& k) {
  return !q.done && !q.cancelled && q.op_rank == k.world && !q.persistent;
}

// A receive that its message alone lets complete: not matched by the engine
// yet (matched() takes its delivered flag down), naming its source, owing no
// overhead to the wait, not one the engine must complete.
bool data_receive(const Request& q) {
  return q.kind == Request::Kind::Recv && q.delivered && q.peer >= 0 && !q.overhead_owed && !q.engine_only;
}

}  // namespace

void Runtime::leave_inbox(Rank& receiver, std::uint64_t inbox_at) {
  if (inbox_at < receiver.inbox_base) return;
  const std::size_t i = static_cast<std::size_t>(inbox_at - receiver.inbox_base);
  if (i >= receiver.inbox.size()) return;
  receiver.inbox[i].first = Rank::kGone;
  while (receiver.inbox_head < receiver.inbox.size() && receiver.inbox[receiver.inbox_head].first == Rank::kGone)
    ++receiver.inbox_head;
  // Drop the gone front once it is most of the inbox (amortized: each entry moves once or twice).
  if (receiver.inbox_head >= 64 && receiver.inbox_head * 2 >= receiver.inbox.size()) {
    receiver.inbox.erase(receiver.inbox.begin(),
                         receiver.inbox.begin() + static_cast<std::ptrdiff_t>(receiver.inbox_head));
    receiver.inbox_base += receiver.inbox_head;
    receiver.inbox_head = 0;
  }
}

std::string Runtime::too_long(const Message& msg, std::uint64_t capacity) {
  return "a message of " + std::to_string(msg.bytes) + " bytes from rank " + std::to_string(msg.source) + " (tag " +
         std::to_string(msg.tag) + ") is longer than the receive buffer of " + std::to_string(capacity) +
         " bytes (MPI_ERR_TRUNCATE)";
}

void Runtime::take_message(Request& q, Message& msg, std::uint32_t sender) {
  q.source = msg.source;
  q.sender = sender;
  q.tag = msg.tag;
  q.bytes = msg.bytes;
  q.payload = messages_.take_data(msg);
  q.delivered = false;  // the receiving rank unpacks it (deliver)
}

void Runtime::take_early(std::span<const std::uint32_t> ids) {
  Rank& k = *cur();
  if (!early_enabled() || k.multiple) return;
  for (std::uint32_t id : ids) {
    Request& q = requests_[id];
    if (!early_candidate(q, k)) continue;
    if (q.kind == Request::Kind::Send) {
      // The data are packed in the shared region: the program may go on; what
      // the rank does next still depends on the send (its caller's
      // dependency), so the engine completes it when the model says. A
      // rendezvous send goes on only while the messages not yet received
      // hold little memory (as a real MPI library would block it).
      const bool rendezvous = options_.sim.params.rendezvous(q.bytes);
      if (!q.standard || (rendezvous && messages_.bytes() > kEarlySendBytes)) continue;
      k.untrack(q.op);
      if (rendezvous) k.tracked.emplace_back(q.op, kEarlySend);
      q.done = true;
      ++early_;
      continue;
    }
    if (!data_receive(q)) continue;
    const auto source = static_cast<std::uint32_t>(q.peer);
    // Receives are matched in the order they were posted: a pending receive
    // posted before this one that could take a message of this source comes
    // first (its operation index is lower: a rank's operations are numbered
    // in the order it issues them).
    bool contended = false;
    for (const auto& [op, other] : k.tracked) {
      if (other == id || other == kEarlySend || op > q.op) continue;
      const Request& o = requests_[other];
      if (o.kind == Request::Kind::Recv && !o.done && o.delivered && (o.peer < 0 || o.peer == q.peer)) {
        contended = true;
        break;
      }
    }
    if (contended) continue;
    // The first message from the source on the communicator that the
    // receive matches: MPI keeps one sender's messages in order.
    Message* msg = nullptr;
    std::uint64_t send_op = 0;
    const std::size_t scan_end = std::min(k.inbox.size(), k.inbox_head + kInboxScan);
    for (std::size_t i = k.inbox_head; i < scan_end; ++i) {
      if (k.inbox[i].first != source) continue;
      auto m = messages_.find(op_key(source, k.inbox[i].second));
      if (m == messages_.end() || m->second.taken_by != kNoOp) continue;
      if (m->second.comm != static_cast<std::uint32_t>(q.comm) || (q.ptag != MPI_ANY_TAG && q.ptag != m->second.tag))
        continue;
      msg = &m->second;
      send_op = k.inbox[i].second;
      break;
    }
    // Not sent yet, or synchronous (the acknowledgement is the engine's to send at the match).
    if (!msg || msg->ack_tag != kNoRequest) continue;
    if (msg->bytes > q.target.capacity) fail(q.call, too_long(*msg, q.target.capacity));
    k.forget_unexpected(source, send_op);
    take_message(q, *msg, source);
    msg->taken_by = op_key(k.world, q.op);
    leave_inbox(k, msg->inbox_at);
    k.untrack(q.op);
    q.done = true;
    ++early_;
  }
}

bool Runtime::awaits_data(std::span<const std::uint32_t> ids, std::int32_t& from) {
  const Rank& k = *cur();
  if (!early_enabled() || k.multiple) return false;
  bool any = false;
  from = -1;
  for (std::uint32_t id : ids) {
    const Request& q = requests_[id];
    if (!early_candidate(q, k) || !data_receive(q)) continue;
    from = any && from != q.peer ? -1 : q.peer;
    any = true;
  }
  return any;
}

void Runtime::data_sent(Rank& to, std::uint32_t dest, std::uint32_t sender) {
  if (to.state != Rank::State::Blocked || (to.data_from >= 0 && static_cast<std::uint32_t>(to.data_from) != sender))
    return;
  to.data_wait = false;
  woken_.push_back(dest);  // the engine reads it again (it runs on)
  release_rank(to);
}

std::pair<std::uint32_t, std::uint64_t> Runtime::probe_match_key(std::int32_t source, int tag, MPI_Comm comm) {
  for (const auto& [sender, op] : cur()->unexpected) {
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

void Runtime::block_in_probe(std::int32_t source, int tag, MPI_Comm comm, const char* call) {
  Rank& k = *cur();
  if (k.multiple) {  // any arrival wakes the rank; MPI_Probe looks again
    gate_wait_arrival(*this, k, call);
    return;
  }
  k.probe.active = true;
  k.probe.source = source;
  k.probe.tag = tag;
  k.probe.comm = comm;
  k.state = Rank::State::Blocked;
  k.blocked_in = call;
  suspend(k);
  k.probe.active = false;
}

// ---- collectives ------------------------------------------------------------------------------

std::uint32_t Runtime::collective_tag(MPI_Comm, std::uint64_t seq) const {
  return static_cast<std::uint32_t>(seq & 0x3fffffff);
}

taskgraph::CollectiveCall Runtime::library_call(MPI_Comm handle, taskgraph::CollectiveOp op, std::uint64_t bytes,
                                                int root, const char* call, std::int32_t tag) {
  const Comm& c = comms_.at(handle);
  taskgraph::CollectiveCall cc;
  cc.op = op;
  auto chosen = options_.algorithms.find(op);
  cc.algorithm = chosen != options_.algorithms.end() ? chosen->second : taskgraph::algorithms_for(op).front();
  cc.procs = static_cast<std::uint32_t>(c.size());
  cc.rank = static_cast<std::uint32_t>(Communicators::rank(c, cur()->world));
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
  Rank& k = *cur();
  Comm& c = comms_.at(handle);
  const int me = Communicators::rank(c, k.world);
  const std::size_t slot = c.self ? k.world : static_cast<std::size_t>(me);
  seq = c.started[slot]++;
  const CollectiveKey key{handle, c.self ? k.world : 0, seq};
  Collective& col = collectives_.record(key);
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
  Rank& k = *cur();
  Comm& c = comms_.at(handle);
  std::uint64_t seq = 0;
  Collective& col = enter_collective(handle, kind, root, call, seq);

  issue_compute();
  taskgraph::OpBuffer ops;  // private scratch: the schedule, then into the outbox
  const std::vector<Dependency> entry(k.after.begin(), k.after.end());
  std::vector<std::uint64_t> exits =
      build(k.next_op, entry, static_cast<std::int32_t>(collective_tag(handle, seq)), ops);
  for (Operation& o : ops.ops) {
    o.peer = static_cast<std::int32_t>(Communicators::world_rank(c, o.peer, k.world));
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
  Rank& k = *cur();
  Comm& c = comms_.at(handle);
  std::uint64_t seq = 0;
  Collective& col = enter_collective(handle, kind, root, call, seq);
  // The schedule, relative to its first operation, with the companion's peers.
  taskgraph::OpBuffer ops;
  std::vector<std::uint64_t> exits = build(0, {}, static_cast<std::int32_t>(collective_tag(handle, seq)), ops);
  for (Operation& o : ops.ops)
    o.peer = static_cast<std::int32_t>(programs_ + Communicators::world_rank(c, o.peer, k.world));
  request = new_request(Request::Kind::Collective, call);
  // It starts when the program reaches this call in virtual time: a marker
  // operation in the program's stream, whose completion hands the schedule
  // to the companion (run_deferred).
  issue_compute();
  Operation marker;
  marker.kind = OpKind::Calc;
  const std::uint64_t idx = issue(marker, k.after, node_of(call));
  k.after.assign(1, Dependency{idx, false});
  const std::uint32_t index = collectives_.add_deferred();
  DeferredSchedule& d = collectives_.deferred(index);
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

}  // namespace poems::direct::detail
