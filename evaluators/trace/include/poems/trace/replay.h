// Replaying a trace on a machine model (docs/trace.md, "Replay rules"): the
// trace becomes a dynamic task graph — computation between MPI calls as
// calc scaled to the modelled processor, each message with its traced
// matching, nonblocking operations with their waits, collectives lowered by
// the modelled MPI's algorithms (taskgraph/collectives.h) — which the
// simulator, the critical path and the GOAL writer all read.
//
// For a study runner, one call: replay(trace, machine, options) with the
// machine's LogGOPS parameters in `machine.params` and the processor ratio
// in `options.compute_scale` returns the simulated run.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "poems/sim/simulator.h"
#include "poems/taskgraph/collectives.h"
#include "poems/taskgraph/schedule.h"
#include "poems/trace/trace.h"

namespace poems::trace {

// A part of the run: what each rank does after its `from_index`-th call to
// `from` returned, up to and including its `to_index`-th call to `to`
// (indices from 1; -1 is the last). Empty names: from the start / to the end.
struct Window {
  std::string from;
  std::int64_t from_index = 1;
  std::string to;
  std::int64_t to_index = -1;
  bool whole() const { return from.empty() && to.empty(); }
  std::string text() const;  // "MPI_Barrier#1..MPI_Allreduce#-1"
};

// Parses "FROM[#N]..TO[#M]" (either side may be empty); false with `error`.
bool parse_window(std::string_view text, Window& out, std::string& error);

// A window on one rank: its steps [first, last) and its time [begin, end]
// since the trace's offset; by default the run between MPI_Init and
// MPI_Finalize.
struct WindowBounds {
  std::uint32_t first = 0, last = 0;
  Picoseconds begin = 0, end = 0;
};
// The window on every rank; TraceError for one a rank cannot satisfy.
std::vector<WindowBounds> window_bounds(const Trace& trace, const Window& window);

struct ReplayOptions {
  // Simulated time per traced time of computation: 1 on the traced machine;
  // Wg(modelled) / Wg(traced) for another processor.
  double compute_scale = 1.0;
  // Computation as the thread's CPU time between calls instead of wall time
  // (archives recorded with `poems trace --cpu-time`, or Score-P's ru_utime):
  // time the process was descheduled on a shared host is then not scaled
  // as if it were work.
  bool cpu_time = false;
  // The modelled MPI's algorithm per collective; missing ones take the
  // library's default (the first of taskgraph::algorithms_for).
  std::map<taskgraph::CollectiveOp, taskgraph::CollectiveAlgorithm> algorithms;
  Window window;
};

// Parses "allreduce=ring" into `options.algorithms`; false with `error`
// naming the operations or the algorithms allowed.
bool parse_algorithm_choice(std::string_view text, ReplayOptions& options, std::string& error);

// What a replay covers.
struct ReplayScope {
  std::uint64_t calls = 0;            // MPI calls in the window, all ranks
  std::uint64_t messages = 0;         // point-to-point messages replayed
  std::uint64_t messages_cut = 0;     // left out: one end outside the window
  std::uint64_t collectives = 0;      // collective instances replayed
  std::uint64_t collectives_cut = 0;  // left out: not inside the window on every member
  Picoseconds traced_compute = 0;     // computation in the window, all ranks, as traced (wall or CPU time)
  Picoseconds measured = 0;           // the window as traced: last rank's end - first rank's start
};

// The trace as a schedule. Ranks are generated lazily, step by step, and in
// order (issues_in_order): memory is the trace plus a few operations per
// rank. The Trace must outlive it.
class TraceSchedule final : public taskgraph::ScheduleSource {
 public:
  // Throws TraceError for a window a rank cannot satisfy, or a compute
  // scale that is negative or not finite.
  TraceSchedule(const Trace& trace, const ReplayOptions& options);
  ~TraceSchedule() override;

  const ReplayScope& scope() const { return scope_; }
  // Trace records (calls, computation) read so far, of the window's: how far
  // a replay has come (the progress display's ETA).
  std::uint64_t steps_read() const { return steps_read_; }
  std::uint64_t steps_total() const { return steps_total_; }

  std::uint32_t ranks() const override;
  std::size_t pull(std::uint32_t rank, std::size_t max_ops, taskgraph::OpBuffer& out) override;
  std::uint32_t node_count() const override { return static_cast<std::uint32_t>(nodes_.size()); }
  taskgraph::NodeInfo node_info(std::uint32_t node) const override { return taskgraph::node_info_in(nodes_, node); }
  bool issues_in_order() const override { return true; }
  bool restart() override;

 private:
  struct Cursor;
  void process(std::uint32_t rank, Cursor& c, const Step& step);
  void close_call(Cursor& c);
  void lower_collective(std::uint32_t rank, Cursor& c, const Step& step,
                        const std::vector<taskgraph::Dependency>& deps);

  const Trace& trace_;
  ReplayOptions options_;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> bounds_;  // per rank: [first step, end step)
  std::vector<std::vector<bool>> cut_;                           // per rank: steps the window leaves out
  std::vector<Cursor> cursors_;
  std::vector<taskgraph::NodeInfo> nodes_;
  ReplayScope scope_;
  std::uint64_t steps_read_ = 0, steps_total_ = 0;
};

// Replays `trace` under `machine` (LogGOPS, CPUs, NICs, ...): the simulated
// run. Throws TraceError (bad options) or sim::SimulationError.
sim::SimulationResult replay(const Trace& trace, const sim::SimulationOptions& machine, const ReplayOptions& options);

}  // namespace poems::trace
