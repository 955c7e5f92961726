#include "poems/components/collective_models.h"

#include <algorithm>
#include <bit>

namespace poems::components {

namespace {

Picoseconds sO(const LogGOPS& p, std::uint64_t s) { return LogGOPS::per_byte(s, p.O); }
Picoseconds sG(const LogGOPS& p, std::uint64_t s) { return LogGOPS::per_byte(s, p.G); }
Picoseconds sync_for(const LogGOPS& p, std::uint64_t s, Picoseconds sync) { return p.rendezvous(s) ? sync : 0; }

// One round of an exchange where every rank sends and receives at once
// (eqs. 4, 5): the receive is processed after the message's o + L and after
// the rank's own send, o + sO: delta = max{0, sO - L} when the send is longer.
Picoseconds exchange_round(const LogGOPS& p, std::uint64_t s, Picoseconds sync) {
  const Picoseconds so = sO(p, s);
  const Picoseconds delta = so > p.L ? so - p.L : 0;
  return sync_for(p, s, sync) + delta + 2 * p.o + p.L + std::max(so, sG(p, s));
}
std::uint64_t ceil_log2(std::uint64_t v) { return v <= 1 ? 0 : static_cast<std::uint64_t>(std::bit_width(v - 1)); }

// Both terms of eq. 1 are bound by the same resource.
bool one_resource_dominates(const LogGOPS& p) { return (p.o >= p.g && p.O >= p.G) || (p.g >= p.o && p.G >= p.O); }

Picoseconds linear_form(const LogGOPS& p, std::uint64_t procs, std::uint64_t s) {
  const Picoseconds cpu = (procs - 2) * p.o + (procs - 1) * sO(p, s);
  const Picoseconds nic = (procs - 2) * p.g + (procs - 1) * sG(p, s);
  return 2 * p.o + p.L + std::max(cpu, nic);
}

}  // namespace

std::optional<Picoseconds> linear_scatter_time(const LogGOPS& p, std::uint64_t procs, std::uint64_t bytes,
                                               Picoseconds rendezvous_sync) {
  if (procs <= 1) return 0;
  if (!one_resource_dominates(p)) return std::nullopt;
  // The root's sends are serialized, each paying its synchronization.
  return linear_form(p, procs, bytes) + (procs - 1) * sync_for(p, bytes, rendezvous_sync);
}

std::optional<Picoseconds> linear_gather_time(const LogGOPS& p, std::uint64_t procs, std::uint64_t bytes,
                                              Picoseconds rendezvous_sync) {
  if (procs <= 1) return 0;
  if (!one_resource_dominates(p)) return std::nullopt;
  // Every sender synchronizes concurrently: the pattern shifts once.
  return linear_form(p, procs, bytes) + sync_for(p, bytes, rendezvous_sync);
}

std::optional<Picoseconds> binomial_bcast_time(const LogGOPS& p, std::uint64_t procs, std::uint64_t bytes,
                                               Picoseconds rendezvous_sync) {
  if (procs <= 1) return 0;
  if (!std::has_single_bit(procs)) return std::nullopt;  // an incomplete tree: eq. 3 is only a bound
  const Picoseconds sync = sync_for(p, bytes, rendezvous_sync);
  const Picoseconds hop = sync + 2 * p.o + p.L + std::max(sO(p, bytes), sG(p, bytes));
  // A node's next send may start only when its CPU and NIC are free again.
  if (std::max(p.send_cpu(bytes), p.send_nic(bytes)) + sync > hop) return std::nullopt;
  return hop * ceil_log2(procs);
}

std::optional<Picoseconds> binomial_reduce_time(const LogGOPS& p, std::uint64_t procs, std::uint64_t bytes,
                                                Picoseconds rendezvous_sync) {
  if (procs <= 1) return 0;
  if (!std::has_single_bit(procs)) return std::nullopt;  // an incomplete tree
  const Picoseconds sync = sync_for(p, bytes, rendezvous_sync);
  const Picoseconds hop = sync + 2 * p.o + p.L + std::max(sO(p, bytes), sG(p, bytes));
  // A node takes one child's message a hop: its CPU and NIC must be free by the next.
  if (std::max(p.recv_cpu(bytes), p.recv_nic(bytes)) + sync > hop) return std::nullopt;
  return hop * ceil_log2(procs);
}

std::optional<Picoseconds> dissemination_time(const LogGOPS& p, std::uint64_t procs, std::uint64_t bytes,
                                              Picoseconds rendezvous_sync) {
  if (procs <= 1) return 0;
  const Picoseconds round = exchange_round(p, bytes, rendezvous_sync);
  if (p.send_nic(bytes) > round || p.recv_nic(bytes) > round) return std::nullopt;
  return round * ceil_log2(procs);
}

std::optional<Picoseconds> recursive_doubling_allreduce_time(const LogGOPS& p, std::uint64_t procs, std::uint64_t bytes,
                                                             Picoseconds rendezvous_sync) {
  if (procs <= 1) return 0;
  // With P not a power of two the folded ranks' first round overlaps the
  // others' exchanges: no single form.
  if (!std::has_single_bit(procs)) return std::nullopt;
  const Picoseconds round = exchange_round(p, bytes, rendezvous_sync);
  if (p.send_nic(bytes) > round || p.recv_nic(bytes) > round) return std::nullopt;
  return round * ceil_log2(procs);
}

Picoseconds recursive_doubling_allreduce_after_last(const LogGOPS& p, std::uint64_t procs, std::uint64_t bytes,
                                                    Picoseconds rendezvous_sync) {
  if (procs <= 1) return 0;
  const std::uint64_t p2 = std::bit_floor(procs);
  const Picoseconds round = exchange_round(p, bytes, rendezvous_sync);
  // The last value crosses log2(p2) hops to newrank 0, which is the folded
  // rank 1 when P is not a power of two: one more hop back to rank 0.
  return round * (ceil_log2(p2) + (procs > p2 ? 1 : 0));
}

std::optional<Picoseconds> collective_time(const taskgraph::CollectiveCall& call, const LogGOPS& p,
                                           Picoseconds rendezvous_sync) {
  using taskgraph::CollectiveAlgorithm;
  using taskgraph::CollectiveOp;
  const auto a = call.algorithm;
  switch (call.op) {
    case CollectiveOp::Scatter:
      if (a == CollectiveAlgorithm::Linear) return linear_scatter_time(p, call.procs, call.bytes, rendezvous_sync);
      break;
    case CollectiveOp::Gather:
      if (a == CollectiveAlgorithm::Linear) return linear_gather_time(p, call.procs, call.bytes, rendezvous_sync);
      break;
    case CollectiveOp::Bcast:
      if (a == CollectiveAlgorithm::Binomial) return binomial_bcast_time(p, call.procs, call.bytes, rendezvous_sync);
      break;
    case CollectiveOp::Reduce:
      if (a == CollectiveAlgorithm::Binomial) return binomial_reduce_time(p, call.procs, call.bytes, rendezvous_sync);
      break;
    case CollectiveOp::Barrier:
    case CollectiveOp::Allreduce:
      if (a == CollectiveAlgorithm::Dissemination)  // a barrier's messages are empty
        return dissemination_time(p, call.procs, call.op == CollectiveOp::Barrier ? 0 : call.bytes, rendezvous_sync);
      if (a == CollectiveAlgorithm::RecursiveDoubling && call.op == CollectiveOp::Allreduce)
        return recursive_doubling_allreduce_time(p, call.procs, call.bytes, rendezvous_sync);
      break;
    default: break;
  }
  return std::nullopt;
}

}  // namespace poems::components
