// Renderings of a simulation: a table for people, JSON for tools, and a
// Chrome trace timeline (chrome://tracing, ui.perfetto.dev).
#pragma once

#include <iosfwd>
#include <string>

#include "poems/sim/simulator.h"

namespace poems::sim {

// Per-rank lines are capped at `max_ranks_listed` (the rank with the
// maximum finish time is always shown).
void write_table(std::ostream& out, const SimulationResult& r, std::size_t max_ranks_listed);
void write_json(std::ostream& out, const SimulationResult& r, std::size_t max_ranks_listed);
// The deadlock / unmatched-message report, one line per fact.
void write_stuck_report(std::ostream& out, const SimulationResult& r);
// One track per rank; needs options.record_timeline.
void write_chrome_trace(std::ostream& out, const SimulationResult& r);

}  // namespace poems::sim
