// Evaluations of a schedule given without a model: a GOAL file (LogGOPSim's
// text format) or one collective on the command line, by the simulator or
// the analytic evaluator (a collective's closed form, or the critical
// path), keyed and stored like a model's evaluations.
#pragma once

#include <cstdint>
#include <string>

#include "poems/core/session.h"
#include "poems/taskgraph/collectives.h"

namespace poems::core {

// A collective as the command line gives it (texts; units allowed).
struct CollectiveRequest {
  std::string operation, algorithm, procs, size, root = "0";
};
// Throws UsageError naming the option and what it takes.
taskgraph::CollectiveCall collective_call(const CollectiveRequest& request);

struct ScheduleRequest {
  std::string goal;              // a GOAL file, or
  CollectiveRequest collective;  // one collective
  std::string paradigm;          // simulation[MPI-Sim] or analytic[LogGP]
  std::string method;            // analytic[LogGP]: closed-form (collectives) or critical-path; "" = the default
  Machine machine;
  // A GOAL file: as many CPUs and NICs as its operations name unless given (as LogGOPSim).
  bool cpus_given = false, nics_given = false;
  bool per_rank = false, timeline = false;
  std::size_t max_stuck_listed = 16;
  std::string otf2_timeline;  // simulation: the run as this OTF2 archive (core/timeline.h)
};

// Evaluates the schedule and stores the run (or finds it stored). Throws
// InputError for a GOAL file with errors (its diagnostics rendered) and for
// an operation beyond the simulator's limits (located in the GOAL file),
// UsageError for a bad option (a closed form that does not hold under the
// machine's semantics); a failed evaluation is the cell's error.
Cell evaluate_schedule(const ScheduleRequest& request, Store& store);

}  // namespace poems::core
