// What the evaluating commands print of one evaluation: what was evaluated
// (the model, the trace's replay, the machine), the result of `poems
// analyze` and `poems simulate`, and what became of it in the knowledge base.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <string>

#include "poems/core/evaluation_input.h"
#include "poems/core/session.h"
#include "poems/core/trace_replay.h"

namespace poems::report {

// "model Ring (6 processes) on Odin, Wg=60ns from Opteron".
std::string describe(const core::Cell& cell, const std::string& model);
// "LogGOPS L=5300ns ... S=32768B, 1 CPU(s) and 1 NIC(s) per process, matched semantics".
std::string describe_machine(const core::Machine& machine);
// A replay: the archive, the window's calls, messages and collectives, the
// computation's scale and the machine, one line each.
std::string replay_summary(const core::Replay& replay, const trace::ReplayScope& scope);
// What was evaluated, before the result: the replay's summary, the model's
// description; nothing for a GOAL file or a collective.
std::string describe_input(const core::EvaluationInput& input, const core::Cell& cell);
// What happened to the run in the knowledge base, on `err` ("stored as run 3
// in poems.db"; nothing with `quiet`). False when the result could not be
// stored (its error is printed whether `quiet` or not).
bool write_record(const core::Cell& cell, std::ostream& err, bool quiet = false);

// `poems analyze`: the analytic result of a successful `cell` of `input` as
// `format` (json, else text).
void write_analysis(const core::EvaluationInput& input, const core::Cell& cell, const std::string& format,
                    std::ostream& out);
// `poems simulate`: the simulated run of `cell` (which has one) as `format`
// (json, else text), at most `max_ranks_listed` per-rank lines; a replay's
// JSON and text say how it compares with the traced run.
void write_simulation(const core::EvaluationInput& input, const core::Cell& cell, const std::string& format,
                      std::size_t max_ranks_listed, std::ostream& out);

}  // namespace poems::report
