// Critical-path analysis (analytic[LogGP], generic): the longest path of a
// dynamic task graph with the simulator's LogGOPS operation and message costs
// and its MPI matching, but no queuing for a busy CPU or NIC. It differs from
// simulation[MPI-Sim] exactly where a rank's operations compete for a resource
// (docs/models/critical-path.md).
#pragma once

#include <cstdint>

#include "poems/sim/simulator.h"

namespace poems::loggp {

using taskgraph::Picoseconds;

// Time and its breakdown as `poems analyze` reports it: compute and comm are
// per-process means (calc time; CPU time in communication), sync is the rest
// of `time` (waiting for messages and for the pipeline).
struct AnalyticResult {
  Picoseconds time = 0;
  Picoseconds compute = 0, comm = 0, sync = 0;
  std::uint32_t ranks = 0;
  std::uint32_t last_rank = 0;   // the process that finishes last
  std::uint64_t operations = 0;  // tasks on all paths (critical path only)
  std::uint64_t messages = 0;
  double wall_seconds = 0;
};

// Throws sim::SimulationError on malformed input, and on a deadlock or an
// unmatched message (the message names the first stuck ranks).
AnalyticResult critical_path(taskgraph::ScheduleSource& source, sim::SimulationOptions options);

// Splits `time` given per-process means of compute and comm.
AnalyticResult breakdown(Picoseconds time, Picoseconds compute, Picoseconds comm);

}  // namespace poems::loggp
