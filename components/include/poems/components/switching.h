// Switching techniques of the network (PUPPET's four, with their latency
// formulas for a message alone on its path): what a message of s bytes costs
// on a route of d links, from its first byte entering the route to its last
// byte leaving it. No contention: a message that shares links with others is
// the engine's business, not these formulas'.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "poems/components/loggops.h"

namespace poems::components {

// A route summarized (no allocation): its hops d, the sum and the largest of
// its links' latencies, and the sum and the largest of its links' per-byte
// times. One link's time for k bytes is t_i(k) = l_i + k·G_i.
struct PathCost {
  std::uint32_t hops = 0;
  Picoseconds latency_sum = 0;
  Picoseconds latency_max = 0;
  FemtosecondsPerByte per_byte_sum = 0;
  FemtosecondsPerByte per_byte_max = 0;

  friend bool operator==(const PathCost&, const PathCost&) = default;
};

// The cost of `hops` identical links of latency l and per-byte time G.
PathCost uniform_path(std::uint32_t hops, Picoseconds latency, FemtosecondsPerByte per_byte);

enum class Switching : std::uint8_t { Packet, VirtualCutThrough, Circuit, Wormhole };

// "packet", "cut-through", "circuit", "wormhole".
const char* switching_name(Switching kind);
// The names above, and "store-and-forward" (packet) and "virtual-cut-through".
std::optional<Switching> parse_switching(std::string_view name);

// Each per-byte product (k·G, in fs) is rounded to the nearest picosecond,
// half up, once per term, as in LogGOPS. With s the message's bytes:
//   Packet (store and forward): every link receives the whole message before
//     forwarding it: sum_i t_i(s) = latency_sum + s·per_byte_sum   (uniform: d·t(s)).
//   VirtualCutThrough: the header (h bytes) is stored and forwarded, the body
//     trails it and streams at the slowest link without initializing links of
//     its own: latency_sum + h·per_byte_sum + s·per_byte_max   (uniform: d·t0(h) + s·G;
//     with h = 0, "sum of latencies + size/bandwidth" as SimGrid computes a lone flow).
//   Circuit: a control packet of c bytes reserves the path, then the circuit
//     streams: latency_sum + c·per_byte_sum + s·per_byte_max.
//   Wormhole: flits of f bytes pipelined over the links:
//     (d - 1 + max(1, ceil(s/f))) · (latency_max + f·per_byte_max).
//     Exact, (d-1+ceil(s/f))·t(f), when the links are identical; for links
//     that differ it is an upper bound (every stage paced by the slowest link).
// A route of 0 hops (a == b) costs 0.
struct SwitchingModel {
  Switching kind = Switching::VirtualCutThrough;
  std::uint64_t header_bytes = 0;   // h (cut-through)
  std::uint64_t control_bytes = 0;  // c (circuit)
  std::uint64_t flit_bytes = 8;     // f (wormhole), 1 or more

  // Time from the first byte entering `path` to the last byte leaving it, for
  // `bytes` bytes alone on it. Throws std::invalid_argument for flit_bytes 0
  // (wormhole) and std::overflow_error when the result would exceed 2^62 ps
  // (about 53 days), so a caller never stores a wrapped time.
  Picoseconds time(const PathCost& path, std::uint64_t bytes) const;
};

// The largest time SwitchingModel::time returns (2^62 ps).
inline constexpr Picoseconds kMaxSwitchingTime = Picoseconds{1} << 62;

}  // namespace poems::components
