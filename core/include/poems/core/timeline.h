// A simulated run written as an OTF2 archive (`poems simulate --timeline
// FILE.otf2`, docs/trace.md): the schedule wrapped so the simulator reports
// to an observer, the run recorded, the archive written beside the result.
#pragma once

#include <cstddef>
#include <string>

#include "poems/sim/simulator.h"
#include "poems/taskgraph/schedule.h"

namespace poems::core {

// sim::simulate, and with an `otf2_path` the run written as that archive:
// regions named by the source's node labels, or by the kind of operation
// (`by_kind`: GOAL files, whose labels name single operations). Throws
// InputError when the source's operations cannot be recorded in order or
// the archive cannot be written; the simulator's own errors pass through.
sim::SimulationResult simulate_with_timeline(taskgraph::ScheduleSource& source, sim::SimulationOptions options,
                                             std::size_t max_stuck_listed, const std::string& otf2_path, bool by_kind);

}  // namespace poems::core
