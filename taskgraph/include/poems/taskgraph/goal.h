// GOAL (Group Operation Assembly Language, LogGOPSim seed 002 section 2.1):
// the text form of a schedule, read into an ExplicitSchedule and written from
// any ScheduleSource.
//
//   num_ranks 2
//   rank 0 {
//     l1: calc 100 cpu 0                      // ns
//     l2: send 10b to 1 tag 0 cpu 0 nic 0     // tag, cpu, nic (and comm) optional
//     l3: recv 10b from 1 tag 0               // "from any" / "tag any": wildcards
//     l2 requires l1                          // after l1 completes
//     l3 irequires l2                         // after l2 starts
//   }
//
// Statements are separated by newlines or `;`; comments are `//`, `#` and
// `/* */`. Dependencies may name labels defined later; each rank's operations
// are ordered topologically (file order where it already is one).
#pragma once

#include <iosfwd>
#include <memory>
#include <string>

#include "poems/base/diagnostics.h"
#include "poems/taskgraph/explicit_schedule.h"

namespace poems::taskgraph {

// Parses the GOAL text of `file`. Every error is reported to `diags`
// (file:line:col with the line and a caret); returns nullptr if there was any.
std::unique_ptr<ExplicitSchedule> parse_goal(const psl::SourceManager& sources, psl::FileId file,
                                             psl::DiagnosticEngine& diags);

// Reads every rank of `source` once and writes it as GOAL (labels l0, l1, ...
// per rank; default fields omitted; times in ns with up to 3 decimals, exact).
void write_goal(std::ostream& out, ScheduleSource& source);

// True if both schedules have the same operations and dependencies (node
// descriptions aside); otherwise `why` says where they first differ.
bool same_operations(const ExplicitSchedule& a, const ExplicitSchedule& b, std::string* why = nullptr);

}  // namespace poems::taskgraph
