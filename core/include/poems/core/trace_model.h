// A PSL model from a trace (`model NAME from trace "run/traces.otf2";`,
// docs/trace.md section 4): the archive read once when the system is loaded,
// carried by the system's task graph, and replayed by simulation[MPI-Sim]
// and analytic[LogGP] (the critical path) for every binding of a study —
// the same replay as `poems simulate --trace`, on the study's machine with
// its Component.param overrides and the model's one parameter, compute_scale.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "poems/core/evaluators.h"
#include "poems/taskgraph/stg.h"
#include "poems/trace/replay.h"
#include "poems/trace/trace.h"

namespace poems::core {

// The task graph of a model from a trace: no nodes, one parameter
// (compute_scale, default 1), the archive it replays. Its `model` is
// "trace:" and the first 12 hex digits of the archive's hash, as the runs of
// `poems simulate --trace` are named.
struct TraceGraph : taskgraph::StaticTaskGraph {
  trace::Trace trace;
  std::string hash;  // trace::archive_hash of the archive
};

// Reads the archive; throws trace::TraceError when it cannot be read.
std::shared_ptr<const TraceGraph> make_trace_graph(const std::string& archive);
// The trace behind `graph`, or nullptr for a PSL model's task graph.
const TraceGraph* trace_graph(const taskgraph::StaticTaskGraph& graph);

// The replay's options of an evaluation of a model from a trace: the
// model's parameter compute_scale and the study's replay settings `window`
// ("FROM[#N]..TO[#M]"), `collective_algorithm` ("allreduce=ring, bcast=
// linear") and `computation` ("wall" or "cpu"), as `poems simulate --trace`
// reads --window, --collective-algorithm and --computation. Throws
// InputError naming the setting.
trace::ReplayOptions replay_options(const Evaluation& e, const std::string& model);
// The study's setting `semantics` of a model from a trace ("matched" or
// "loggopsim"), if it gives one: the message-progress semantics of the
// replay, as --semantics on the command line (which replaces it, as it
// replaces an MPI runtime's `semantics` for a PSL model). A trace model
// binds no runtime, so this is where a study chooses, or varies, it.
// Throws InputError naming the setting.
std::optional<sim::Semantics> replay_semantics(const Evaluation& e);
// The replay settings the evaluation gives, normalized, for its run key
// (empty when it gives none, so runs without them keep their keys).
nlohmann::json replay_settings_key(const Evaluation& e);

// The evaluations of a model from a trace (called by the built-in
// evaluators for a TraceGraph): the replay simulated, or its critical path.
// Throw InputError for a compute_scale < 0, EvaluationError for a replay
// that does not complete.
Outcome simulate_trace_model(const Evaluation& e);
Outcome critical_path_of_trace_model(const Evaluation& e);

}  // namespace poems::core
