#include "poems/taskgraph/collectives.h"

#include <algorithm>
#include <bit>

namespace poems::taskgraph {

std::optional<CollectiveOp> parse_collective_op(std::string_view n) {
  if (n == "barrier") return CollectiveOp::Barrier;
  if (n == "bcast") return CollectiveOp::Bcast;
  if (n == "reduce") return CollectiveOp::Reduce;
  if (n == "allreduce") return CollectiveOp::Allreduce;
  if (n == "gather") return CollectiveOp::Gather;
  if (n == "scatter") return CollectiveOp::Scatter;
  if (n == "allgather") return CollectiveOp::Allgather;
  if (n == "alltoall") return CollectiveOp::Alltoall;
  return std::nullopt;
}

std::optional<CollectiveAlgorithm> parse_collective_algorithm(std::string_view n) {
  if (n == "binomial") return CollectiveAlgorithm::Binomial;
  if (n == "linear") return CollectiveAlgorithm::Linear;
  if (n == "dissemination") return CollectiveAlgorithm::Dissemination;
  if (n == "recursive_doubling") return CollectiveAlgorithm::RecursiveDoubling;
  if (n == "ring") return CollectiveAlgorithm::Ring;
  if (n == "pairwise") return CollectiveAlgorithm::Pairwise;
  return std::nullopt;
}

const char* collective_op_name(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::Barrier: return "barrier";
    case CollectiveOp::Bcast: return "bcast";
    case CollectiveOp::Reduce: return "reduce";
    case CollectiveOp::Allreduce: return "allreduce";
    case CollectiveOp::Gather: return "gather";
    case CollectiveOp::Scatter: return "scatter";
    case CollectiveOp::Allgather: return "allgather";
    case CollectiveOp::Alltoall: return "alltoall";
  }
  return "?";
}

const char* collective_algorithm_name(CollectiveAlgorithm a) {
  switch (a) {
    case CollectiveAlgorithm::Binomial: return "binomial";
    case CollectiveAlgorithm::Linear: return "linear";
    case CollectiveAlgorithm::Dissemination: return "dissemination";
    case CollectiveAlgorithm::RecursiveDoubling: return "recursive_doubling";
    case CollectiveAlgorithm::Ring: return "ring";
    case CollectiveAlgorithm::Pairwise: return "pairwise";
  }
  return "?";
}

std::vector<CollectiveAlgorithm> algorithms_for(CollectiveOp op) {
  using A = CollectiveAlgorithm;
  switch (op) {
    case CollectiveOp::Barrier: return {A::Dissemination, A::Binomial, A::Linear};
    case CollectiveOp::Bcast:
    case CollectiveOp::Reduce: return {A::Binomial, A::Linear};
    case CollectiveOp::Allreduce: return {A::RecursiveDoubling, A::Dissemination, A::Ring, A::Binomial};
    case CollectiveOp::Gather:
    case CollectiveOp::Scatter: return {A::Linear, A::Binomial};
    case CollectiveOp::Allgather: return {A::Ring, A::RecursiveDoubling, A::Dissemination, A::Linear};
    case CollectiveOp::Alltoall: return {A::Pairwise, A::Linear};
  }
  return {};
}

namespace {

// Builds one rank's operations; every helper returns rank-local indices.
class Builder {
 public:
  Builder(const CollectiveCall& call, std::uint64_t first_index, const std::vector<Dependency>& entry, OpBuffer& out)
      : c_(call), next_(first_index), entry_(entry), out_(out) {}

  // Operation depending on the given earlier operations (completion), or on
  // the entry dependencies when `after` is empty and `use_entry` holds.
  std::uint64_t op(OpKind kind, std::uint32_t peer_rel, std::uint64_t bytes, const std::vector<std::uint64_t>& after,
                   bool use_entry) {
    Operation o;
    o.kind = kind;
    o.peer = static_cast<std::int32_t>((peer_rel + c_.root) % c_.procs);
    o.tag = c_.tag;
    o.comm = collective_comm(c_.comm);
    o.node = c_.node;
    o.bytes = bytes;
    o.first_dep = static_cast<std::uint32_t>(out_.deps.size());
    if (use_entry)
      for (const Dependency& d : entry_) out_.deps.push_back(d);
    for (std::uint64_t a : after) out_.deps.push_back({a, false});
    o.dep_count = static_cast<std::uint32_t>(out_.deps.size() - o.first_dep);
    out_.ops.push_back(o);
    return next_++;
  }
  // Peers are given relative to the root so rooted trees can be written for root 0.
  std::uint64_t send(std::uint32_t peer_rel, std::uint64_t bytes, const std::vector<std::uint64_t>& after) {
    return op(OpKind::Send, peer_rel, bytes, after, after.empty());
  }
  std::uint64_t recv(std::uint32_t peer_rel, std::uint64_t bytes, const std::vector<std::uint64_t>& after) {
    return op(OpKind::Recv, peer_rel, bytes, after, after.empty());
  }

  std::vector<std::uint64_t> entry_ops() const {
    std::vector<std::uint64_t> v;
    for (const Dependency& d : entry_) v.push_back(d.op);
    return v;
  }

  const CollectiveCall& c_;
  std::uint64_t next_;
  const std::vector<Dependency>& entry_;
  OpBuffer& out_;
};

std::uint32_t rel(const CollectiveCall& c) { return (c.rank + c.procs - c.root) % c.procs; }
std::uint32_t high_bit(std::uint32_t v) { return v == 0 ? 0 : std::bit_floor(v); }

// Binomial tree rooted at relative rank 0: the parent of v is v - highbit(v);
// the children of v are v + 2^k for every 2^k > v (nearest first), so the
// first send of every hop continues the longest path (LogGOPSim eq. 3).
std::vector<std::uint32_t> binomial_children(std::uint32_t v, std::uint32_t p) {
  std::vector<std::uint32_t> out;
  for (std::uint64_t k = v == 0 ? 1 : std::uint64_t{high_bit(v)} << 1; v + k < p; k <<= 1)
    out.push_back(static_cast<std::uint32_t>(v + k));
  return out;
}

// Number of ranks in the subtree of v (v included): the w in [v, p) with
// w = v mod 2*highbit(v) (v plus any sum of children offsets); all for the root.
std::uint32_t subtree_size(std::uint32_t v, std::uint32_t p) {
  if (v == 0) return p;
  const std::uint64_t stride = std::uint64_t{high_bit(v)} << 1;
  return static_cast<std::uint32_t>((p - 1 - v) / stride + 1);
}

std::vector<std::uint64_t> binomial_down(Builder& b, std::uint32_t v, std::uint32_t p, bool scatter) {
  const std::uint64_t s = b.c_.bytes;
  std::vector<std::uint64_t> after;
  std::vector<std::uint64_t> exits;
  if (v != 0) {
    std::uint64_t bytes = scatter ? s * subtree_size(v, p) : s;
    std::uint64_t r = b.recv(v - high_bit(v), bytes, {});
    after = {r};
    exits.push_back(r);
  }
  for (std::uint32_t child : binomial_children(v, p))
    exits.push_back(b.send(child, scatter ? s * subtree_size(child, p) : s, after));
  if (exits.empty()) return b.entry_ops();
  return exits;
}

std::vector<std::uint64_t> binomial_up(Builder& b, std::uint32_t v, std::uint32_t p, bool gather) {
  const std::uint64_t s = b.c_.bytes;
  std::vector<std::uint64_t> received;
  for (std::uint32_t child : binomial_children(v, p))
    received.push_back(b.recv(child, gather ? s * subtree_size(child, p) : s, {}));
  if (v == 0) return received.empty() ? b.entry_ops() : received;
  std::uint64_t bytes = gather ? s * subtree_size(v, p) : s;
  // With no children the send depends on the entry; otherwise on every receive.
  return {b.send(v - high_bit(v), bytes, received)};
}

std::vector<std::uint64_t> linear_down(Builder& b, std::uint32_t v, std::uint32_t p) {
  if (v != 0) return {b.recv(0, b.c_.bytes, {})};
  std::vector<std::uint64_t> exits;
  for (std::uint32_t i = 1; i < p; ++i) exits.push_back(b.send(i, b.c_.bytes, {}));
  return exits.empty() ? b.entry_ops() : exits;
}

std::vector<std::uint64_t> linear_up(Builder& b, std::uint32_t v, std::uint32_t p) {
  if (v != 0) return {b.send(0, b.c_.bytes, {})};
  std::vector<std::uint64_t> exits;
  for (std::uint32_t i = 1; i < p; ++i) exits.push_back(b.recv(i, b.c_.bytes, {}));
  return exits.empty() ? b.entry_ops() : exits;
}

// Rounds in which a rank sends to send_peer(k) and receives from recv_peer(k);
// every round waits for the previous round's send and receive.
template <typename SendPeer, typename RecvPeer, typename Bytes>
std::vector<std::uint64_t> rounds(Builder& b, std::uint32_t count, SendPeer send_peer, RecvPeer recv_peer,
                                  Bytes bytes) {
  std::vector<std::uint64_t> prev;
  for (std::uint32_t k = 0; k < count; ++k) {
    std::uint64_t s = b.send(send_peer(k), bytes(k), prev);
    std::uint64_t r = b.recv(recv_peer(k), bytes(k), prev);
    prev = {s, r};
  }
  return prev.empty() ? b.entry_ops() : prev;
}

std::uint32_t ceil_log2(std::uint32_t p) { return p <= 1 ? 0 : static_cast<std::uint32_t>(std::bit_width(p - 1)); }

// MPICH-style recursive doubling for any P: the first 2*rem ranks pair up so
// that a power of two takes part in the exchange, then results go back.
std::vector<std::uint64_t> recursive_doubling(Builder& b, std::uint32_t r, std::uint32_t p, bool allgather) {
  const std::uint32_t p2 = std::bit_floor(p);
  const std::uint32_t rem = p - p2;
  const std::uint64_t s = b.c_.bytes;
  std::vector<std::uint64_t> prev;
  std::int64_t newrank;
  if (r < 2 * rem) {
    if (r % 2 == 0) {  // hands its data to r+1 and waits for the result
      std::uint64_t snd = b.send(r + 1, s, {});
      return {snd, b.recv(r + 1, allgather ? s * p : s, {snd})};
    }
    prev = {b.recv(r - 1, s, {})};
    newrank = r / 2;
  } else {
    newrank = r - rem;
  }
  auto real = [&](std::int64_t nr) { return static_cast<std::uint32_t>(nr < rem ? nr * 2 + 1 : nr + rem); };
  std::uint64_t held = allgather && r < 2 * rem ? 2 * s : s;
  for (std::uint32_t mask = 1; mask < p2; mask <<= 1) {
    std::uint32_t partner = real(newrank ^ mask);
    std::uint64_t bytes = allgather ? held : s;
    std::uint64_t snd = b.send(partner, bytes, prev);
    std::uint64_t rcv = b.recv(partner, bytes, prev);
    prev = {snd, rcv};
    if (allgather) held *= 2;
  }
  if (r < 2 * rem) prev = {b.send(r - 1, allgather ? s * p : s, prev)};
  return prev.empty() ? b.entry_ops() : prev;
}

}  // namespace

std::vector<std::uint64_t> append_collective(const CollectiveCall& call, std::uint64_t first_index,
                                             const std::vector<Dependency>& entry, OpBuffer& out) {
  Builder b(call, first_index, entry, out);
  const std::uint32_t p = call.procs;
  if (p <= 1) return b.entry_ops();
  const std::uint32_t v = rel(call);  // rank relative to the root
  // Rooted algorithms address peers relative to the root; the others use
  // absolute ranks, which Builder maps with root 0.
  CollectiveCall unrooted = call;
  unrooted.root = 0;
  Builder u(unrooted, first_index, entry, out);
  const std::uint32_t r = call.rank;
  const std::uint64_t s = call.bytes;
  using A = CollectiveAlgorithm;
  switch (call.op) {
    case CollectiveOp::Bcast: return call.algorithm == A::Linear ? linear_down(b, v, p) : binomial_down(b, v, p, false);
    case CollectiveOp::Scatter:
      return call.algorithm == A::Binomial ? binomial_down(b, v, p, true) : linear_down(b, v, p);
    case CollectiveOp::Reduce: return call.algorithm == A::Linear ? linear_up(b, v, p) : binomial_up(b, v, p, false);
    case CollectiveOp::Gather: return call.algorithm == A::Binomial ? binomial_up(b, v, p, true) : linear_up(b, v, p);
    case CollectiveOp::Barrier:
    case CollectiveOp::Allreduce: {
      std::uint64_t bytes = call.op == CollectiveOp::Barrier ? 0 : s;
      switch (call.algorithm) {
        case A::Binomial:
        case A::Linear: {
          // Reduce to rank 0, then broadcast: the second phase starts from the first's exits.
          CollectiveCall phase = unrooted;
          phase.bytes = bytes;
          Builder up(phase, first_index, entry, out);
          auto mid = call.algorithm == A::Linear ? linear_up(up, r, p) : binomial_up(up, r, p, false);
          std::vector<Dependency> between;
          for (std::uint64_t m : mid) between.push_back({m, false});
          Builder down(phase, up.next_, between, out);
          return call.algorithm == A::Linear ? linear_down(down, r, p) : binomial_down(down, r, p, false);
        }
        case A::Ring: {
          // Reduce-scatter then allgather: 2(P-1) rounds of s/P bytes.
          std::uint64_t piece = (bytes + p - 1) / p;
          return rounds(
              u, 2 * (p - 1), [&](std::uint32_t) { return (r + 1) % p; },
              [&](std::uint32_t) { return (r + p - 1) % p; }, [&](std::uint32_t) { return piece; });
        }
        case A::RecursiveDoubling: {
          CollectiveCall phase = unrooted;
          phase.bytes = bytes;
          Builder rd(phase, first_index, entry, out);
          return recursive_doubling(rd, r, p, false);
        }
        default:  // dissemination
          return rounds(
              u, ceil_log2(p), [&](std::uint32_t k) { return static_cast<std::uint32_t>((r + (1ull << k)) % p); },
              [&](std::uint32_t k) { return static_cast<std::uint32_t>((r + p - ((1ull << k) % p)) % p); },
              [&](std::uint32_t) { return bytes; });
      }
    }
    case CollectiveOp::Allgather:
      switch (call.algorithm) {
        case A::RecursiveDoubling: return recursive_doubling(u, r, p, true);
        case A::Dissemination:  // Bruck: round k moves min(2^k, P - 2^k) blocks
          return rounds(
              u, ceil_log2(p),
              [&](std::uint32_t k) { return static_cast<std::uint32_t>((r + p - ((1ull << k) % p)) % p); },
              [&](std::uint32_t k) { return static_cast<std::uint32_t>((r + (1ull << k)) % p); },
              [&](std::uint32_t k) { return s * std::min<std::uint64_t>(1ull << k, p - (1ull << k)); });
        case A::Linear: {
          std::vector<std::uint64_t> exits;
          for (std::uint32_t i = 1; i < p; ++i) exits.push_back(u.send((r + i) % p, s, {}));
          for (std::uint32_t i = 1; i < p; ++i) exits.push_back(u.recv((r + p - i) % p, s, {}));
          return exits;
        }
        default:  // ring
          return rounds(
              u, p - 1, [&](std::uint32_t) { return (r + 1) % p; }, [&](std::uint32_t) { return (r + p - 1) % p; },
              [&](std::uint32_t) { return s; });
      }
    case CollectiveOp::Alltoall:
      if (call.algorithm == A::Linear) {
        std::vector<std::uint64_t> exits;
        for (std::uint32_t i = 1; i < p; ++i) exits.push_back(u.send((r + i) % p, s, {}));
        for (std::uint32_t i = 1; i < p; ++i) exits.push_back(u.recv((r + p - i) % p, s, {}));
        return exits;
      }
      return rounds(
          u, p - 1, [&](std::uint32_t k) { return (r + k + 1) % p; },
          [&](std::uint32_t k) { return (r + p - k - 1) % p; }, [&](std::uint32_t) { return s; });
  }
  return b.entry_ops();
}

}  // namespace poems::taskgraph

namespace poems::taskgraph {

namespace {

// Emits the operations of append_collective(call, 0, {}, ...) whose index lies
// in [from, to), computing each one from its index.
class RangeEmitter {
 public:
  RangeEmitter(const CollectiveCall& call, std::uint64_t from, std::uint64_t to, OpBuffer& out)
      : c_(call), from_(from), to_(to), out_(out) {}

  // Operation `index` (from_ <= index < to_) to absolute rank `peer`, whose
  // completion dependencies are the operations [dep_first, dep_first + dep_count).
  void op(OpKind kind, std::uint32_t peer, std::uint64_t bytes, std::uint64_t dep_first, std::uint64_t dep_count) {
    Operation o;
    o.kind = kind;
    o.peer = static_cast<std::int32_t>(peer);
    o.tag = c_.tag;
    o.comm = collective_comm(c_.comm);
    o.node = c_.node;
    o.bytes = bytes;
    o.first_dep = static_cast<std::uint32_t>(out_.deps.size());
    for (std::uint64_t d = 0; d < dep_count; ++d) out_.deps.push_back({dep_first + d, false});
    o.dep_count = static_cast<std::uint32_t>(dep_count);
    out_.ops.push_back(o);
  }

  // `count` rounds of a send then a receive, each round after both operations
  // of the previous one (rounds() above).
  template <typename SendPeer, typename RecvPeer, typename Bytes>
  void rounds(std::uint64_t count, SendPeer send_peer, RecvPeer recv_peer, Bytes bytes) {
    for (std::uint64_t i = from_; i < std::min(to_, 2 * count); ++i) {
      const auto k = static_cast<std::uint32_t>(i / 2);
      const std::uint64_t deps = k == 0 ? 0 : 2;
      if (i % 2 == 0)
        op(OpKind::Send, send_peer(k), bytes(k), 2 * std::uint64_t{k} - deps, deps);
      else
        op(OpKind::Recv, recv_peer(k), bytes(k), 2 * std::uint64_t{k} - deps, deps);
    }
  }

  // Operations [0, n) of the first kind to peer(j), then [n, 2n) of the
  // second kind to peer2(j - n), each after `deps2` (first-phase operations
  // [0, n)) when `second_waits`.
  template <typename Peer, typename Peer2>
  void two_blocks(std::uint64_t n, OpKind first, Peer peer, OpKind second, Peer2 peer2, std::uint64_t bytes,
                  bool second_waits) {
    for (std::uint64_t j = from_; j < std::min(to_, 2 * n); ++j) {
      if (j < n)
        op(first, peer(j), bytes, 0, 0);
      else
        op(second, peer2(j - n), bytes, 0, second_waits ? n : 0);
    }
  }

  // Operation `index`, if it lies in the requested range.
  void at(std::uint64_t index, OpKind kind, std::uint32_t peer, std::uint64_t bytes, std::uint64_t dep_first,
          std::uint64_t dep_count) {
    if (index >= from_ && index < to_) op(kind, peer, bytes, dep_first, dep_count);
  }

  // binomial_down for relative rank v from index `first`, the receive (or,
  // at the root, every send) after operations [entry_first, + entry_count):
  // a receive from the parent, then the sends to the children nearest first,
  // each after the receive. Returns the index after the last operation.
  template <typename Peer>
  std::uint64_t binomial_down(std::uint64_t first, std::uint32_t v, std::uint32_t p, bool scatter, Peer peer,
                              std::uint64_t entry_first, std::uint64_t entry_count) {
    const std::uint64_t s = c_.bytes;
    std::uint64_t i = first;
    std::uint64_t after_first = entry_first, after_count = entry_count;
    if (v != 0) {
      at(i, OpKind::Recv, peer(v - high_bit(v)), scatter ? s * subtree_size(v, p) : s, entry_first, entry_count);
      after_first = i++;
      after_count = 1;
    }
    for (std::uint64_t k = v == 0 ? 1 : std::uint64_t{high_bit(v)} << 1; v + k < p && i < to_; k <<= 1, ++i) {
      const auto child = static_cast<std::uint32_t>(v + k);
      at(i, OpKind::Send, peer(child), scatter ? s * subtree_size(child, p) : s, after_first, after_count);
    }
    return i;
  }

  // binomial_up for relative rank v from index `first`: the receives from the
  // children nearest first, then (not at the root) the send to the parent
  // after all of them, or after the entry with no children.
  template <typename Peer>
  std::uint64_t binomial_up(std::uint64_t first, std::uint32_t v, std::uint32_t p, bool gather, Peer peer) {
    const std::uint64_t s = c_.bytes;
    std::uint64_t i = first;
    for (std::uint64_t k = v == 0 ? 1 : std::uint64_t{high_bit(v)} << 1; v + k < p; k <<= 1, ++i) {
      const auto child = static_cast<std::uint32_t>(v + k);
      at(i, OpKind::Recv, peer(child), gather ? s * subtree_size(child, p) : s, 0, 0);
    }
    if (v != 0) {
      at(i, OpKind::Send, peer(v - high_bit(v)), gather ? s * subtree_size(v, p) : s, first, i - first);
      ++i;
    }
    return i;
  }

  // A single block of n operations of one kind with no dependencies.
  template <typename Peer>
  void block(std::uint64_t n, OpKind kind, Peer peer, std::uint64_t bytes) {
    for (std::uint64_t j = from_; j < std::min(to_, n); ++j) op(kind, peer(j), bytes, 0, 0);
  }

 private:
  const CollectiveCall& c_;
  std::uint64_t from_, to_;
  OpBuffer& out_;
};

// The rank's whole part, then the range copied (for algorithms with O(log P)
// operations per rank).
std::size_t copy_range(const CollectiveCall& call, std::uint64_t from, std::uint64_t to, OpBuffer& out) {
  thread_local OpBuffer whole;
  whole.clear();
  append_collective(call, 0, {}, whole);
  const std::uint64_t end = std::min<std::uint64_t>(to, whole.ops.size());
  for (std::uint64_t i = from; i < end; ++i) {
    Operation o = whole.ops[i];
    o.first_dep = static_cast<std::uint32_t>(out.deps.size());
    out.deps.insert(out.deps.end(), whole.deps.begin() + whole.ops[i].first_dep,
                    whole.deps.begin() + whole.ops[i].first_dep + o.dep_count);
    out.ops.push_back(o);
  }
  return end > from ? static_cast<std::size_t>(end - from) : 0;
}

}  // namespace

std::size_t append_collective_range(const CollectiveCall& call, std::uint64_t from, std::size_t max_ops,
                                    OpBuffer& out) {
  const std::uint32_t p = call.procs;
  if (p <= 1 || max_ops == 0) return 0;
  const std::uint64_t to = max_ops > ~std::uint64_t{0} - from ? ~std::uint64_t{0} : from + max_ops;
  const std::size_t before = out.ops.size();
  RangeEmitter e(call, from, to, out);
  const std::uint32_t r = call.rank;
  const std::uint32_t v = rel(call);
  const std::uint32_t root = call.root;
  const std::uint64_t s = call.bytes;
  using A = CollectiveAlgorithm;
  using O = CollectiveOp;
  auto rooted = [&](std::uint64_t rel_peer) { return static_cast<std::uint32_t>((rel_peer + root) % p); };
  switch (call.op) {
    case O::Bcast:
    case O::Scatter:
      if (call.op == O::Bcast ? call.algorithm != A::Linear : call.algorithm == A::Binomial) {
        e.binomial_down(0, v, p, call.op == O::Scatter, rooted, 0, 0);
        break;
      }
      // linear_down
      if (v != 0)
        e.block(
            1, OpKind::Recv, [&](std::uint64_t) { return rooted(0); }, s);
      else
        e.block(
            p - 1, OpKind::Send, [&](std::uint64_t j) { return rooted(j + 1); }, s);
      break;
    case O::Reduce:
    case O::Gather:
      if (call.op == O::Reduce ? call.algorithm != A::Linear : call.algorithm == A::Binomial) {
        e.binomial_up(0, v, p, call.op == O::Gather, rooted);
        break;
      }
      // linear_up
      if (v != 0)
        e.block(
            1, OpKind::Send, [&](std::uint64_t) { return rooted(0); }, s);
      else
        e.block(
            p - 1, OpKind::Recv, [&](std::uint64_t j) { return rooted(j + 1); }, s);
      break;
    case O::Barrier:
    case O::Allreduce: {
      const std::uint64_t bytes = call.op == O::Barrier ? 0 : s;
      switch (call.algorithm) {
        case A::Linear:  // linear_up to rank 0, then linear_down after it
          if (r != 0) {
            e.two_blocks(
                1, OpKind::Send, [](std::uint64_t) { return 0u; }, OpKind::Recv, [](std::uint64_t) { return 0u; },
                bytes, true);
          } else {
            auto peer = [](std::uint64_t j) { return static_cast<std::uint32_t>(j + 1); };
            e.two_blocks(p - 1, OpKind::Recv, peer, OpKind::Send, peer, bytes, true);
          }
          break;
        case A::Ring: {
          const std::uint64_t piece = (bytes + p - 1) / p;
          e.rounds(
              2 * std::uint64_t{p - 1}, [&](std::uint32_t) { return (r + 1) % p; },
              [&](std::uint32_t) { return (r + p - 1) % p; }, [&](std::uint32_t) { return piece; });
          break;
        }
        case A::Dissemination:
          e.rounds(
              ceil_log2(p), [&](std::uint32_t k) { return static_cast<std::uint32_t>((r + (1ull << k)) % p); },
              [&](std::uint32_t k) { return static_cast<std::uint32_t>((r + p - ((1ull << k) % p)) % p); },
              [&](std::uint32_t) { return bytes; });
          break;
        case A::Binomial: {
          // binomial_up to rank 0, then binomial_down after its exits: the
          // send to the parent, or at rank 0 every receive.
          auto peer = [](std::uint64_t q) { return static_cast<std::uint32_t>(q); };
          CollectiveCall phase = call;
          phase.bytes = bytes;
          RangeEmitter pe(phase, from, to, out);
          const std::uint64_t mid = pe.binomial_up(0, r, p, false, peer);
          if (r == 0)
            pe.binomial_down(mid, r, p, false, peer, 0, mid);
          else
            pe.binomial_down(mid, r, p, false, peer, mid - 1, 1);
          break;
        }
        default: return copy_range(call, from, to, out);  // recursive doubling
      }
      break;
    }
    case O::Allgather:
      switch (call.algorithm) {
        case A::Dissemination:
          e.rounds(
              ceil_log2(p),
              [&](std::uint32_t k) { return static_cast<std::uint32_t>((r + p - ((1ull << k) % p)) % p); },
              [&](std::uint32_t k) { return static_cast<std::uint32_t>((r + (1ull << k)) % p); },
              [&](std::uint32_t k) { return s * std::min<std::uint64_t>(1ull << k, p - (1ull << k)); });
          break;
        case A::Linear:
          e.two_blocks(
              p - 1, OpKind::Send, [&](std::uint64_t j) { return static_cast<std::uint32_t>((r + j + 1) % p); },
              OpKind::Recv, [&](std::uint64_t j) { return static_cast<std::uint32_t>((r + p - j - 1) % p); }, s, false);
          break;
        case A::Ring:
          e.rounds(
              p - 1, [&](std::uint32_t) { return (r + 1) % p; }, [&](std::uint32_t) { return (r + p - 1) % p; },
              [&](std::uint32_t) { return s; });
          break;
        default: return copy_range(call, from, to, out);  // recursive doubling
      }
      break;
    case O::Alltoall:
      if (call.algorithm == A::Linear)
        e.two_blocks(
            p - 1, OpKind::Send, [&](std::uint64_t j) { return static_cast<std::uint32_t>((r + j + 1) % p); },
            OpKind::Recv, [&](std::uint64_t j) { return static_cast<std::uint32_t>((r + p - j - 1) % p); }, s, false);
      else
        e.rounds(
            p - 1, [&](std::uint32_t k) { return (r + k + 1) % p; },
            [&](std::uint32_t k) { return (r + p - k - 1) % p; }, [&](std::uint32_t) { return s; });
      break;
  }
  return out.ops.size() - before;
}

}  // namespace poems::taskgraph
