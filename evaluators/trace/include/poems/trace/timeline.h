// A simulated run written as an OTF2 archive (docs/trace.md, "Simulated
// runs as OTF2"), so Vampir shows a prediction beside a measured trace: per
// rank (and CPU) the CPU's busy intervals as regions — computation, the
// send and receive overheads, rendezvous synchronization — and every message
// from its send's start to its receive's completion, paired exactly as the
// simulator matched them.
//
// Use: wrap the schedule, simulate the wrapper with the observer and a
// recorded timeline, then write:
//
//   trace::Otf2Timeline t(source, trace::Otf2Timeline::Labels::FromSource);
//   options.observer = &t.observer();
//   options.record_timeline = true;
//   sim::SimulationResult r = sim::simulate(t.source(), options);
//   t.write("run.otf2", r, options.cpus);
//
// A source that is its own observer (direct execution's runtime) passes
// itself as `forward`: the timeline records, then hands every call on and
// answers what the source answers.
//
// The simulator reports to an observer only for a source whose operations
// are issued in order; a source that does not promise it (a GOAL file) is
// checked operation by operation first (check_order()).
#pragma once

#include <memory>
#include <string>

#include "poems/sim/observer.h"
#include "poems/sim/simulator.h"
#include "poems/taskgraph/schedule.h"

namespace poems::trace {

// True when a --timeline `path` names an OTF2 archive (NAME.otf2) rather
// than a Chrome trace.
bool is_otf2_name(const std::string& path);

class Otf2Timeline {
 public:
  // Region names: the source's node labels (PSL statements, MPI calls of a
  // trace), or only the kind of work (calc, send, recv: for GOAL files,
  // whose labels name single operations).
  enum class Labels { FromSource, ByKind };
  Otf2Timeline(taskgraph::ScheduleSource& source, Labels labels, sim::ExecutionObserver* forward = nullptr);
  ~Otf2Timeline();
  Otf2Timeline(const Otf2Timeline&) = delete;
  Otf2Timeline& operator=(const Otf2Timeline&) = delete;

  // For a source without the issues_in_order() promise: reads it through
  // once and checks that no operation could become ready before the one
  // before it (each depends on its predecessor, or on everything it depends
  // on). Returns "" if the check passed (then the timeline can be recorded),
  // else why not. Restarts the source.
  std::string check_order();

  // Direct execution: engine ranks from `program_ranks` on are companions
  // (rank r's is program_ranks + r: its nonblocking collectives and
  // one-sided service), written as more locations of rank r, and a message's
  // peer is the rank, not the companion.
  void set_companions(std::uint32_t program_ranks);
  void set_creator(std::string creator);  // the archive's creator (default "poems simulate")

  taskgraph::ScheduleSource& source();
  sim::ExecutionObserver& observer();

  // Writes PATH (the anchor, NAME.otf2) with NAME.def and NAME/ beside it,
  // replacing an archive of that name. Needs the result of a run of
  // source() with observer() and record_timeline. Throws TraceError.
  void write(const std::string& path, const sim::SimulationResult& result, std::uint32_t cpus) const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace poems::trace
