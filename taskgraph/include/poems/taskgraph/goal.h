// GOAL (Group Operation Assembly Language, the LogGOPSim paper, section 2.1):
// the text form of a schedule, read into an ExplicitSchedule and written from
// any ScheduleSource.
//
//   num_ranks 2
//   rank 0 {
//     l1: calc 100 cpu 0                      // ns
//     l2: send 10b to 1 tag 0 cpu 0 nic 0     // tag, cpu, nic (and comm) optional
//     l3: recv 10b from 1 tag 0               // "from -1" / "tag -1" (or "any"): wildcards
//     l2 requires l1                          // after l1 completes
//     l3 irequires l2                         // after l2 starts
//   }
//
// The reader takes everything LogGOPSim's txt2bin takes and more:
// statements are separated by newlines or `;`; comments are `//`, `#` and
// `/* */`; lines may be indented; fields come in any order; a size's `b` may
// stand apart; tags are 0 .. 2^32-1 (-1 or 2^32-1: any tag, on a send too);
// `comm N` is POEMS's. Dependencies may name labels defined later; each
// rank's operations are ordered topologically, keeping the order in which
// LogGOPSim would free them (docs/taskgraph.md, "GOAL").
#pragma once

#include <iosfwd>
#include <memory>
#include <string>

#include "poems/base/diagnostics.h"
#include "poems/taskgraph/explicit_schedule.h"

namespace poems::taskgraph {

// Bounds of GOAL quantities, checked where they are read (a located error
// names the value and the range): message sizes 0 .. 2^53-1 bytes, calc
// durations up to 2^61 ps (about 26.7 days), so no cost the simulator
// computes can overflow its picosecond clock.
inline constexpr std::uint64_t kMaxGoalBytes = (std::uint64_t{1} << 53) - 1;
inline constexpr Picoseconds kMaxGoalCalc = Picoseconds{1} << 61;

struct GoalReadOptions {
  // Bytes the run may take; 0: the machine's available memory. A
  // `num_ranks` whose records alone would need more is an error.
  std::uint64_t memory_limit = 0;
  // Bytes per rank the caller needs besides the schedule (a simulation's
  // per-rank records), counted against the limit too.
  std::uint64_t more_bytes_per_rank = 0;
};

// Parses the GOAL text of `file`. Every error is reported to `diags`
// (file:line:col with the line and a caret); returns nullptr if there was any.
std::unique_ptr<ExplicitSchedule> parse_goal(const psl::SourceManager& sources, psl::FileId file,
                                             psl::DiagnosticEngine& diags, const GoalReadOptions& options = {});

// Reads the GOAL file at `path` without keeping its text: the file is mapped
// and parsed rank by rank, pages released behind the parser, and a node's
// label and location are read back from the file when a report asks for
// one (the file must then be unchanged). Warnings go to `diags`. On an error
// (or if the file cannot be read: `io_error` says why) returns nullptr; the
// text is then added to `sources` and parsed again so that the diagnostics
// in `diags` quote it.
std::unique_ptr<ExplicitSchedule> read_goal_file(const std::string& path, psl::SourceManager& sources,
                                                 psl::DiagnosticEngine& diags, const GoalReadOptions& options,
                                                 std::string& io_error);

// What write_goal had to change to stay within LogGOPSim's GOAL.
struct GoalWriteStats {
  std::uint64_t rounded_calcs = 0;    // calc durations not a whole ns, rounded to the nearest
  std::uint64_t folded_messages = 0;  // sends and receives on another communicator than the world
};

// Reads every rank of `source` once and writes it as GOAL that LogGOPSim's
// txt2bin reads: no indentation, labels l0, l1, ... per rank, every
// dependency after the operations, fields in txt2bin's order, default fields
// omitted, wildcards as -1. LogGOPSim has no communicators and integer
// times: a (communicator, tag) pair other than the world's becomes one tag
// of 2^31 .. 2^32-2, numbered in the order first written, so no two pairs
// and no world tag share one; calc durations are written in whole ns,
// rounded to the nearest (half up). Throws std::runtime_error if a world tag
// of 2^31 or more meets a folded one, or a receive on another communicator
// takes any tag (LogGOPSim could not keep them apart).
GoalWriteStats write_goal(std::ostream& out, ScheduleSource& source);

// True if both schedules have the same operations and dependencies (node
// descriptions aside); otherwise `why` says where they first differ.
bool same_operations(const ExplicitSchedule& a, const ExplicitSchedule& b, std::string* why = nullptr);

// True if `b` is what reading write_goal's text of `a` gives: the same
// operations and dependencies, each (communicator, tag) pair of `a` one tag
// of `b`'s world (the same pair always the same tag, no two pairs one tag),
// calc durations rounded to whole ns; otherwise `why` says where not.
bool same_after_export(const ExplicitSchedule& a, const ExplicitSchedule& b, std::string* why = nullptr);

}  // namespace poems::taskgraph
