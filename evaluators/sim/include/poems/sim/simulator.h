// The discrete-event MPI simulator (`simulation[MPI-Sim]`): a ScheduleSource
// executed under LogGOPS costs with full MPI matching. Semantics, tie-breaking
// and the rendezvous rule are documented in docs/simulator.md.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "poems/sim/loggops.h"
#include "poems/taskgraph/schedule.h"

namespace poems::components {
class Network;
class Noise;
}  // namespace poems::components

namespace poems::sim {

class ExecutionObserver;

// How messages progress (docs/simulator.md has both as rule tables):
// - Matched: a message is processed by its receiver once it has arrived and
//   a matching receive is posted, on the receive's CPU and NIC; a rendezvous
//   sender first waits one L (or the handshake) for its receiver; CPUs and
//   NICs are granted first come first served in event order.
// - Loggopsim: LogGOPSim exactly (the LogGOPSim paper, its source): a message is
//   processed as soon as it arrives and the receiver's CPU and NIC (those the
//   send names) are free, posted receive or not; a receive that finds its
//   message already processed completes at once; a rendezvous send travels
//   as an eager one and completes when matched; events of equal time run in
//   the order they were first queued, a busy resource re-queues an event.
enum class Semantics : std::uint8_t { Matched, Loggopsim };
const char* semantics_name(Semantics s);  // "matched", "loggopsim"
std::optional<Semantics> parse_semantics(std::string_view name);

// Where a long run stands, for a progress display (SimulationOptions::progress).
struct SimulationProgress {
  Picoseconds now = 0;           // simulated time reached
  std::uint64_t events = 0;      // events taken from the queue
  std::uint64_t operations = 0;  // operations completed
  // Work done of the total known in advance: operations of a schedule held in
  // memory (a GOAL file); total 0 when unknown (a model read as it runs, a
  // direct execution). A caller wrapping the hook may substitute its own
  // measure (a trace replay: trace records read).
  std::uint64_t done = 0, total = 0;
  double wall_seconds = 0;  // since this run began (a lazy attempt that is abandoned starts over)
  bool finished = false;    // the last report of a run: the display may go
  // Set by a reporter that is not one simulation (the recommender's batch of
  // evaluations on workers): `done` and `total` count these, and `now` and
  // `events` mean nothing. The simulator leaves it null.
  const char* unit = nullptr;
};

// Called from the event loop every kProgressInterval events, and once with
// finished set when the run ends: a plain function pointer (no virtual call,
// no allocation); the loop pays one compare per event for it.
struct ProgressHook {
  void (*report)(void* context, const SimulationProgress& progress) = nullptr;
  void* context = nullptr;
  explicit operator bool() const { return report != nullptr; }
};
inline constexpr std::uint64_t kProgressInterval = std::uint64_t{1} << 14;

struct SimulationOptions {
  LogGOPS params;
  Semantics semantics = Semantics::Matched;
  std::uint32_t cpus = 1;  // per process
  std::uint32_t nics = 1;  // per process
  // A rendezvous sender waits for the receiver's readiness before its payload
  // leaves: L by default (makes the LogGOPSim paper, eq. 1's "+(P-1)L" exact); with the
  // handshake, an explicit request/acknowledge round trip 2L + 2o instead
  // (docs/simulator.md).
  bool rendezvous_handshake = false;
  // false: an operation never waits for a busy CPU or NIC, only for its
  // dependencies and messages, so the finish time is the longest path of the
  // task graph under LogGOPS costs (the critical-path analysis of
  // analytic[LogGP]; docs/models/critical-path.md).
  bool resource_queuing = true;
  // Keep every CPU busy interval for a timeline (memory grows with events).
  bool record_timeline = false;
  // Keep per-rank results (32 bytes per rank).
  bool per_rank_results = true;
  // Operations read per pull when a source is read lazily.
  std::size_t chunk_ops = 256;
  // A source that can restart() but makes no issues_in_order() promise (a
  // GOAL file) is first read lazily, as if it made it; the first operation
  // read with all its dependencies already satisfied, past the start, ends
  // that attempt and the run starts over with every rank read in full. A
  // completed lazy run is the full run's result exactly (docs/simulator.md).
  bool try_lazy_reading = true;
  // Direct execution: told of completions, matches and unexpected arrivals
  // (poems/sim/observer.h); the source may then answer pulls with
  // ScheduleSource::kBlocked. Needs a source that issues_in_order().
  ExecutionObserver* observer = nullptr;
  // The machine's nodes and network (poems/components/network.h,
  // docs/network.md): ranks per node and their placement, shared cores and
  // NICs, shared-memory parameters between ranks of one node, the topology
  // and switching between nodes. Null, or a flat one: one rank per node on
  // the complete LogGOPS network (the fast path, as before nodes existed).
  // Only the matched semantics runs on one that is not flat.
  std::shared_ptr<const components::Network> network;
  // Ranks from this one on (0: none) are companions of the ranks below it
  // (direct execution's, which carry a rank's nonblocking collectives and
  // serve its windows): companion r runs on the node of rank r -
  // companions_from, on a core of its own, and counts for no node's ranks.
  std::uint32_t companions_from = 0;
  // OS noise (poems/components/noise.h, docs/simulator.md): detours that
  // stretch every rank's computation (not its message overheads, and not a
  // companion's work). Null or none: computation takes exactly its work.
  std::shared_ptr<const components::Noise> noise;
  // Bytes the run may take; 0: what the machine has available
  // (/proc/meminfo MemAvailable). A run estimated to need more is refused
  // before it allocates (SimulationLimitError).
  std::uint64_t memory_limit = 0;
  // A progress display (none by default).
  ProgressHook progress;
};

struct RankResult {
  Picoseconds finish = 0;    // completion of the rank's last operation
  Picoseconds compute = 0;   // calc time
  Picoseconds overhead = 0;  // CPU time spent in communication (o and O terms)
  Picoseconds wait = 0;      // cpus * finish - compute - overhead: idle or blocked CPU time
};

// One CPU busy interval, for timelines.
struct Span {
  enum Kind : std::uint8_t { Calc, Send, Recv, Sync };
  std::uint32_t rank;
  std::uint8_t cpu;
  Kind kind;
  std::int32_t peer;  // Send/Recv/Sync: the other rank
  Picoseconds start, end;
  std::uint64_t bytes;
  std::uint32_t node;
};

// A rank that could not finish, and why.
struct StuckRank {
  std::uint32_t rank = 0;
  // One line per blocked operation or unmatched message, at most
  // kStuckWaitsListed and kStuckMessagesListed of each; a line after them
  // counts the rest.
  std::vector<std::string> waits;
};
inline constexpr std::size_t kStuckWaitsListed = 4;
inline constexpr std::size_t kStuckMessagesListed = 4;

// What the messages of a run on a machine that is not flat crossed
// (docs/network.md): within nodes and between them, the links of their routes.
struct NetworkTraffic {
  std::uint64_t intra_node_messages = 0, intra_node_bytes = 0;
  std::uint64_t inter_node_messages = 0, inter_node_bytes = 0;
  std::uint64_t hops = 0;  // links crossed, summed over the messages between nodes
  // Per link class of the topology ("x", "local", "global", ...): bytes
  // times the links of that class each message crossed.
  std::vector<std::pair<std::string, std::uint64_t>> bytes_by_link_class;
  // Max-min contention (docs/network.md): messages that became flows, the
  // most active at once, and the rate computations their starts and ends
  // made (flows rated: the selective update's cost).
  bool contention = false;
  std::uint64_t flows = 0, peak_flows = 0, flows_rated = 0;
};

struct SimulationResult {
  std::uint32_t ranks = 0;
  std::vector<RankResult> per_rank;  // empty unless options.per_rank_results
  Picoseconds max_finish = 0;
  std::uint32_t max_finish_rank = 0;
  Picoseconds total_compute = 0, total_overhead = 0, total_wait = 0;
  std::uint64_t events = 0;      // events taken from the queue
  std::uint64_t requeued = 0;    // loggopsim: of which taken again after a busy CPU or NIC had sent them back
  std::uint64_t operations = 0;  // operations executed
  std::uint64_t messages = 0;
  std::uint64_t peak_queue = 0;         // most events queued at once
  std::uint64_t peak_window_ops = 0;    // most operations held at once (all ranks)
  double wall_seconds = 0;              // the whole run, reading the source included
  double cpu_seconds = 0;               // the same span in CPU time of the simulating thread
  double initial_read_seconds = 0;      // of which reading each rank's first operations
  bool read_lazily = false;             // ranks were read as the run went (a few operations held each)
  bool lazy_attempt_abandoned = false;  // a lazy attempt ended early; then read in full (its time is in wall_seconds)
  double events_per_second() const { return wall_seconds > 0 ? static_cast<double>(events) / wall_seconds : 0; }

  bool completed = true;         // false: deadlock or unmatched messages
  std::vector<StuckRank> stuck;  // ranks that did not finish (capped, see stuck_total)
  std::uint64_t stuck_total = 0;
  std::vector<Span> timeline;             // if options.record_timeline
  std::optional<NetworkTraffic> network;  // a machine that is not flat
};

// Malformed input found while simulating (a peer out of range, a dependency
// on a later operation, a CPU index beyond options.cpus, ...).
class SimulationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Input the simulator cannot run as given (exit 1 in the tools): a cost or a
// time beyond the picosecond clock, a run that needs more memory than
// allowed. `node` names the operation's static node when one is to blame
// (ScheduleSource::node_info), else 0; `detail` is the message without it.
class SimulationLimitError : public SimulationError {
 public:
  SimulationLimitError(const std::string& what, std::uint32_t node, std::string detail)
      : SimulationError(what), node(node), detail(std::move(detail)) {}
  std::uint32_t node;
  std::string detail;
};

// The memory a run of `source` is estimated to need under `options`, in
// bytes: the per-rank records, and the operations if they are read in full.
std::uint64_t estimated_memory(taskgraph::ScheduleSource& source, const SimulationOptions& options);
// Of which per rank.
std::uint64_t memory_per_rank(const SimulationOptions& options);

// Runs `source` to completion. `max_stuck_listed` caps the ranks the deadlock
// report describes in detail. Throws SimulationError on malformed input.
SimulationResult simulate(taskgraph::ScheduleSource& source, const SimulationOptions& options,
                          std::size_t max_stuck_listed = 16);

}  // namespace poems::sim
