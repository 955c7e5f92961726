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
