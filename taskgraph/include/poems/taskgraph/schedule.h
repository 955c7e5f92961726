// The dynamic task graph as evaluators consume it: for every rank, a stream of
// operations in an order where each operation depends only on earlier
// operations of the same rank. Sources produce the stream lazily, in chunks,
// so a model with 10^6 ranks never holds its 10^9 operations at once.
//
// Semantics (docs/references.md, LogGOPSim's GOAL): an operation may start once
// every dependency is satisfied; a dependency with `on_start` (GOAL's
// `irequires`) is satisfied when that operation has started, otherwise
// (`requires`) when it has completed. A Send/Recv pair matches on
// (source, tag, communicator) in posting order; kAnySource/kAnyTag match any.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace poems::taskgraph {

// Simulated time is an integer number of picoseconds, so per-byte costs such
// as G = 0.04 ns/B are exact (2^64 ps is about 213 days).
using Picoseconds = std::uint64_t;
inline constexpr Picoseconds kPsPerNs = 1000;

enum class OpKind : std::uint8_t { Calc, Send, Recv };

inline constexpr std::int32_t kAnySource = -1;
inline constexpr std::int32_t kAnyTag = -1;

struct Operation {
  OpKind kind = OpKind::Calc;
  std::uint8_t cpu = 0;  // which CPU of the rank runs it
  std::uint8_t nic = 0;  // which NIC carries it (Send/Recv)
  // A receive's CPU overhead paid where the program completes it (SimGrid's
  // SMPI charges it in the MPI_Wait, in the program's wait order): a Recv
  // with it set completes when its bytes are in, without o + (s-1)O; a Calc
  // with it set is that overhead, o + (s-1)O of a message of `bytes` from
  // rank `peer`, priced by the evaluator and counted as overhead.
  bool receive_overhead_deferred = false;
  std::int32_t peer = 0;        // Send: destination; Recv: source or kAnySource
  std::int32_t tag = 0;         // Recv: or kAnyTag
  std::uint32_t comm = 0;       // communicator; 0 is the world
  std::uint32_t node = 0;       // static node (for reports and source locations); 0 = none
  std::uint64_t bytes = 0;      // Send/Recv payload
  Picoseconds duration = 0;     // Calc: time on the CPU
  std::uint32_t first_dep = 0;  // dependencies: deps[first_dep .. first_dep + dep_count)
  std::uint32_t dep_count = 0;
};

// A message's peer is one of `ranks` ranks, or a Recv's kAnySource; the
// simulator and ExplicitSchedule's summary (peers_are_ranks) check the same
// rule. Negative peers wrap to large unsigned values.
inline bool peer_is_rank(const Operation& op, std::uint32_t ranks) {
  return (op.kind == OpKind::Recv && op.peer == kAnySource) || static_cast<std::uint32_t>(op.peer) < ranks;
}

struct Dependency {
  std::uint64_t op;       // rank-local index of an earlier operation (0 = the rank's first)
  bool on_start = false;  // irequires: satisfied when `op` starts, not when it completes
  // 0, or where LogGOPSim lists this operation among those waiting on `op`
  // (a GOAL file's statement order, where it differs from program order;
  // the simulator's loggopsim semantics frees them in this order).
  std::uint32_t order = 0;
};

// A chunk of one rank's stream: operations and the dependencies they index.
struct OpBuffer {
  std::vector<Operation> ops;
  std::vector<Dependency> deps;
  // Set by a pull whose operations are the rank's last (the next pull would
  // return 0), so a lazy reader need not pull again to learn it. Optional: a
  // source may leave it false and answer the next pull with 0.
  bool rank_done = false;
  void clear() {
    ops.clear();
    deps.clear();
    rank_done = false;
  }
};

// Where each static node came from, so evaluators can report "rank 3 waits in
// recv at model.psl:31:13" instead of a bare node number.
struct NodeInfo {
  std::string label;     // e.g. "recv", "kblock", "allreduce/dissemination"
  std::string location;  // "file:line:col" or ""
};

// node_info() for a source that keeps its nodes in a vector.
inline NodeInfo node_info_in(const std::vector<NodeInfo>& nodes, std::uint32_t node) {
  return node < nodes.size() ? nodes[node] : NodeInfo{};
}

class ScheduleSource {
 public:
  virtual ~ScheduleSource() = default;
  virtual std::uint32_t ranks() const = 0;
  // Appends up to `max_ops` of `rank`'s next operations to `out` (dependency
  // indices in `first_dep` are positions in `out.deps`). Returns how many were
  // appended; 0 means the rank has no more. One virtual call per chunk, never
  // per operation.
  virtual std::size_t pull(std::uint32_t rank, std::size_t max_ops, OpBuffer& out) = 0;
  // pull's answer for a rank that has no operation yet but is not finished:
  // a running program blocked in a call until one of its operations completes
  // (direct execution). Only a source that the simulator reports completions
  // to (sim::ExecutionObserver) gives it; it asks to be pulled again.
  static constexpr std::size_t kBlocked = ~std::size_t{0};
  // Static node descriptions: ids 0..node_count()-1, as in Operation::node;
  // 0 is none. node_info() answers {} for 0 and for ids out of range. A
  // function, not a table, so a source with a node per operation (a GOAL
  // file) can keep them compact.
  virtual std::uint32_t node_count() const = 0;
  virtual NodeInfo node_info(std::uint32_t node) const = 0;
  // True if no operation can become ready while an earlier operation of its
  // rank still waits for an unsatisfied dependency, as when a sequential
  // program issues its calls in order. Evaluators may then read a rank lazily,
  // stopping at the first waiting operation (memory O(in-flight operations));
  // otherwise they read each rank in full before simulating it.
  virtual bool issues_in_order() const { return false; }
  // Starts every rank's stream over; false if this source cannot (it is read
  // once). An evaluator may then try a lazy reading of a source that makes
  // no issues_in_order() promise, and read it again in full if the promise
  // turns out not to hold.
  virtual bool restart() { return false; }
};

}  // namespace poems::taskgraph
