#include "poems/core/timeline.h"

#include "poems/core/error.h"
#include "poems/trace/timeline.h"
#include "poems/trace/trace.h"

namespace poems::core {

sim::SimulationResult simulate_with_timeline(taskgraph::ScheduleSource& source, sim::SimulationOptions options,
                                             std::size_t max_stuck_listed, const std::string& otf2_path, bool by_kind) {
  if (otf2_path.empty()) return sim::simulate(source, options, max_stuck_listed);
  if (!trace::is_otf2_name(otf2_path))
    throw UsageError("--timeline", "'" + otf2_path + "' is not an OTF2 archive's name (NAME.otf2)");
  trace::Otf2Timeline timeline(source,
                               by_kind ? trace::Otf2Timeline::Labels::ByKind : trace::Otf2Timeline::Labels::FromSource);
  if (const std::string problem = timeline.check_order(); !problem.empty()) throw InputError(problem);
  options.observer = &timeline.observer();
  options.record_timeline = true;
  sim::SimulationResult r = sim::simulate(timeline.source(), options, max_stuck_listed);
  try {
    timeline.write(otf2_path, r, options.cpus);
  } catch (const trace::TraceError& e) {
    throw InputError(e.what());
  }
  return r;
}

}  // namespace poems::core
