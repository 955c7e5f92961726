// The machine's nodes and network (docs/network.md): how many ranks a node
// holds and on which node each rank runs, the node's cores and NICs, the
// shared-memory parameters between ranks of one node, and the topology and
// switching technique between nodes. The simulator asks it one question per
// message (what the path adds to L), so every evaluator that runs on the
// simulator (PSL models, GOAL, collectives, direct execution, trace replay,
// the critical path) sees the same machine.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "poems/components/loggops.h"
#include "poems/components/rank_mapping.h"
#include "poems/components/switching.h"
#include "poems/components/topology.h"

namespace poems::components {

// How messages between nodes share what they cross (docs/network.md,
// "Contention"). None: LogGOPS, a message never waits for another's bytes
// beyond the NIC's gaps. MaxMin: every message between nodes is a flow over
// its node's NIC, the route's links (each direction on its own) and the
// destination's NIC, at its max-min fair share of their bandwidths.
enum class Contention : std::uint8_t { None, MaxMin };
const char* contention_name(Contention c);  // "none", "max-min"
std::optional<Contention> parse_contention(std::string_view name);

// How the ranks that share a core take turns on it (docs/network.md, "Time
// sharing"). FirstCome: each computation and overhead takes the core whole,
// in the order they asked for it. ProcessorSharing: PUPPET's multitasking
// rule, r ranks working on the core each advance at 1/r of it.
enum class TimeSharing : std::uint8_t { FirstCome, ProcessorSharing };
const char* time_sharing_name(TimeSharing t);  // "fcfs", "processor-sharing"
std::optional<TimeSharing> parse_time_sharing(std::string_view name);

// LogGOPS for the messages of at least `from_bytes` bytes (docs/network.md,
// "Message-size regimes"): a real MPI changes protocol with the size (a copy
// through a bounce buffer, a single copy, a rendezvous), and one set of
// parameters fits one protocol. A machine's regimes, in increasing
// from_bytes, replace its parameters from that size on; S (the eager limit)
// stays the machine's.
struct SizeRegime {
  std::uint64_t from_bytes = 0;
  LogGOPS params;
};
constexpr std::size_t kMaxSizeRegimes = 8;

// The parameters that price a message of `bytes` bytes: `base`, or the last
// regime whose from_bytes it reaches.
inline const LogGOPS& regime_params(const LogGOPS& base, const std::vector<SizeRegime>& regimes, std::uint64_t bytes) {
  const LogGOPS* p = &base;
  for (const SizeRegime& r : regimes) {
    if (bytes < r.from_bytes) break;
    p = &r.params;
  }
  return *p;
}

// What a machine is built of. The default is today's ideal machine: one
// rank per node, each with its own CPU and NIC, a contention-free wire of
// latency L to every other rank.
struct NetworkSpec {
  TopologySpec topology;  // Complete: no path beyond L
  SwitchingModel switching;
  MappingSpec mapping;               // ranks_per_node, placement
  std::uint32_t cores_per_node = 0;  // 0: one core per rank's CPU (no time sharing)
  TimeSharing time_sharing = TimeSharing::FirstCome;
  // Between ranks of one node (shared memory); none: the network's LogGOPS.
  std::optional<LogGOPS> intra;
  Contention contention = Contention::None;
  // A backbone every message between nodes of the complete network crosses
  // (SimGrid's cluster backbone, shared by both directions), per-byte time;
  // 0: none. Only under max-min contention (without it, a shared link costs nothing).
  FemtosecondsPerByte backbone_per_byte = 0;
  // Under max-min contention, a node's NIC's per-byte time (each direction);
  // none: the network's G; 0: no limit, the node's links alone (as
  // SimGrid's torus, whose nodes inject on every link at once).
  std::optional<FemtosecondsPerByte> nic_per_byte;
  // Under max-min contention, SimGrid's unequal sharing: flows that meet at
  // a bottleneck share it in inverse proportion to their penalty, their
  // route's latency + rtt_bytes x its per-byte times (SimGrid's weight-S:
  // 8775 B in SMPI, 0 in CM02); none: equal shares.
  std::optional<std::uint64_t> rtt_bytes;
  // Under max-min contention, bytes every message between nodes carries on
  // the wire beyond its own (protocol headers; SimGrid's SMPI adds 16): they
  // take a share of every link the flow crosses, while a message alone
  // costs what it did (they come out of its latency). 0: none.
  std::uint64_t wire_overhead_bytes = 0;
  // Message-size regimes between nodes (over the network's LogGOPS) and
  // between ranks of one node (over intra, or the network's); empty: one set.
  std::vector<SizeRegime> regimes;
  std::vector<SizeRegime> intra_regimes;
  // A rank's copy within its own memory, per byte: what an MPI library
  // charges for a collective's own block (alltoall(v/w), allgather(v), a
  // root's part of gather(v)/scatter(v)), which never crosses a NIC. 0: free.
  FemtosecondsPerByte copy_per_byte = 0;

  // One rank per node on the complete network, no intra-node parameters:
  // the machine the simulator always had (its fast path).
  bool flat() const;
};

// A machine description that is out of range, or a network or mapping file
// that cannot be read: the message names the parameter and its range, or
// locates the error in the file.
class NetworkError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The ranks of one run on the machine's nodes.
struct RankPlacement {
  std::vector<std::uint32_t> node_of;   // per rank
  std::vector<std::uint32_t> local;     // per rank: its index among its node's ranks
  std::vector<std::uint32_t> ranks_on;  // per node
  std::uint32_t nodes = 0;              // nodes the machine has (not only those used)
};

class Network {
 public:
  // Builds the topology (reading a network file) and checks the spec;
  // NetworkError when something is out of range.
  explicit Network(NetworkSpec spec);

  const NetworkSpec& spec() const { return spec_; }
  const Topology& topology() const { return topology_; }
  bool flat() const { return spec_.flat(); }
  bool complete() const { return spec_.topology.kind == TopologyKind::Complete; }
  // Nodes of the machine: the topology's, or (complete) as many as the ranks need.
  std::uint32_t nodes_for(std::uint32_t ranks) const;

  // The ranks on the nodes; NetworkError when they do not fit (more ranks
  // than the nodes hold, a mapping file that names an unknown node, ...).
  RankPlacement place(std::uint32_t ranks) const;
  // Cores of a node that holds `ranks_on_node` ranks of `cpus` CPUs each.
  std::uint32_t cores(std::uint32_t ranks_on_node, std::uint32_t cpus) const;

  // What the path from node a to node b adds to the network's L for a
  // message of `bytes` bytes alone: the switching technique's time on the
  // route less the (s-1)G the endpoints already charge, never below 0 (the
  // NIC is then the slower). 0 on the complete network. Saturates at 2^61 ps.
  Picoseconds path_delay(std::uint32_t a, std::uint32_t b, std::uint64_t bytes, FemtosecondsPerByte G) const;

  // Under max-min contention, what a message's route adds before its bytes
  // stream at the flow's rate: the switching technique's time for `bytes`
  // alone on the route less (s-1)·G of its slowest link, never below 0; 0
  // on the complete network. A message alone then costs what path_delay
  // gives it whenever the links are no faster than the NIC.
  Picoseconds flow_latency(std::uint32_t a, std::uint32_t b, std::uint64_t bytes) const;

  // "torus 4x4 (16 nodes), cut-through, 4 ranks per node (block), 4 cores, shared memory L=300ns ..."
  std::string describe() const;

 private:
  NetworkSpec spec_;
  Topology topology_;
};

// The network as run keys hold it: absent (null) for a flat machine, so that
// every key stored before nodes existed still matches.
nlohmann::json network_key_json(const NetworkSpec& spec);
// The spec back from network_key_json's object (direct execution hands the
// machine to the program's process this way); NetworkError if malformed.
NetworkSpec network_spec_from_json(const nlohmann::json& key);

}  // namespace poems::components
