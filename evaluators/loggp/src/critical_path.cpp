#include "poems/loggp/critical_path.h"

#include <string>

namespace poems::loggp {

AnalyticResult breakdown(Picoseconds time, Picoseconds compute, Picoseconds comm) {
  AnalyticResult r;
  r.time = time;
  r.compute = compute;
  r.comm = comm;
  r.sync = time > compute + comm ? time - compute - comm : 0;
  return r;
}

// The simulator's engine without resource queuing is exactly a longest-path
// evaluation: every operation starts at the latest of its dependencies and
// messages, in an order (event time) in which those are known first. Using it
// keeps one implementation of the cost rules, matching and lazy traversal.
AnalyticResult critical_path(taskgraph::ScheduleSource& source, sim::SimulationOptions options) {
  options.resource_queuing = false;
  options.record_timeline = false;
  options.per_rank_results = false;
  sim::SimulationResult s = sim::simulate(source, options, 4);
  if (!s.completed) {
    std::string what = "the task graph cannot complete (deadlock or unmatched messages):";
    for (const auto& r : s.stuck) {
      what += " rank " + std::to_string(r.rank);
      if (!r.waits.empty()) what += " " + r.waits.front();
      what += ";";
    }
    throw sim::SimulationError(what);
  }
  const Picoseconds ranks = s.ranks > 0 ? s.ranks : 1;
  AnalyticResult r = breakdown(s.max_finish, s.total_compute / ranks, s.total_overhead / ranks);
  r.ranks = s.ranks;
  r.last_rank = s.max_finish_rank;
  r.operations = s.operations;
  r.messages = s.messages;
  r.wall_seconds = s.wall_seconds;
  return r;
}

}  // namespace poems::loggp
