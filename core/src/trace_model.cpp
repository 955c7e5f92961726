#include "poems/core/trace_model.h"

#include <cmath>
#include <optional>

#include "builtin_evaluators.h"

#include "poems/core/difference.h"
#include "poems/core/error.h"
#include "poems/core/machine.h"
#include "poems/core/timeline.h"
#include "poems/core/trace_replay.h"
#include "poems/trace/archive.h"
#include "poems/trace/extrapolate.h"
#include "poems/trace/otf2_read.h"
#include "poems/trace/replay.h"

namespace poems::core {

namespace {

// Marks a TraceGraph: no PSL taskgraph can have this name.
constexpr const char* kTraceGraphName = "(trace)";

double ns(taskgraph::Picoseconds ps) { return static_cast<double>(ps) / 1000.0; }

// The study's extrapolation (settings extrapolate, extrapolate_compute,
// extrapolate_variation), if any.
std::optional<trace::Extrapolation> extrapolation_of(const Evaluation& e);

// A replay's schedule, with the extrapolated trace it reads when the study
// extrapolates (the schedule holds a reference to its trace).
struct Replayable {
  std::shared_ptr<const trace::Trace> extrapolated;
  std::unique_ptr<trace::TraceSchedule> schedule;
};

Replayable schedule_of(const Evaluation& e, const TraceGraph& g) {
  const trace::ReplayOptions options = replay_options(e, g.model);
  Replayable out;
  try {
    if (std::optional<trace::Extrapolation> x = extrapolation_of(e)) {
      x->cpu_time = options.cpu_time;
      out.extrapolated = std::make_shared<const trace::Trace>(trace::extrapolate(g.trace, *x));
    }
    out.schedule = std::make_unique<trace::TraceSchedule>(out.extrapolated ? *out.extrapolated : g.trace, options);
  } catch (const trace::TraceError& x) {
    throw InputError(x.what());
  }
  return out;
}

void add_trace_figures(Outcome& o, const TraceGraph& g, const trace::ReplayScope& scope, taskgraph::Picoseconds t) {
  o.extra["traced_ns"] = ns(scope.measured);
  // Predicted against traced, the traced time the reference (core/difference.h); 0 without a traced time.
  o.extra["difference_pct"] = difference_pct(static_cast<double>(t), static_cast<double>(scope.measured)).value_or(0.0);
  o.extra["archive"] = g.trace.path;
}

// A replay setting's text, if the study gives it.
std::optional<std::string> setting_text(const Evaluation& e, const char* name) {
  const auto it = e.settings.find(name);
  if (it == e.settings.end()) return std::nullopt;
  if (it->second.kind != base::Value::Kind::String)
    throw InputError(std::string("study setting ") + name + " = " + it->second.str() + " is not text; " +
                     "give it in quotes (docs/trace.md)");
  return it->second.text;
}

const TraceGraph& the_trace_graph(const Evaluation& e) {
  const TraceGraph* g = trace_graph(*e.graph);
  if (!g) throw UsageError("--paradigm", "model " + e.graph->model + " is not a model from a trace");
  return *g;
}

// The study's replay settings (window, collective_algorithm, computation) into `options`.
void apply_replay_settings(const Evaluation& e, trace::ReplayOptions& options) {
  std::string error;
  if (const auto window = setting_text(e, "window"))
    if (!trace::parse_window(*window, options.window, error))
      throw InputError("study setting window = \"" + *window + "\": " + error);
  // "allreduce=ring, bcast=linear": one choice per collective, as repeated --collective-algorithm.
  if (const auto algorithms = setting_text(e, "collective_algorithm"))
    for (std::size_t from = 0; from <= algorithms->size();) {
      std::size_t to = algorithms->find(',', from);
      if (to == std::string::npos) to = algorithms->size();
      std::string choice = algorithms->substr(from, to - from);
      choice.erase(0, choice.find_first_not_of(' '));
      choice.erase(choice.find_last_not_of(' ') + 1);
      if (!trace::parse_algorithm_choice(choice, options, error))
        throw InputError("study setting collective_algorithm = \"" + *algorithms + "\": " + error);
      from = to + 1;
    }
  if (const auto computation = setting_text(e, "computation")) {
    if (*computation != "wall" && *computation != "cpu")
      throw InputError("study setting computation = \"" + *computation +
                       "\" is neither \"wall\" (the time between calls) nor \"cpu\" (the thread's CPU time)");
    options.cpu_time = *computation == "cpu";
  }
}

std::optional<trace::Extrapolation> extrapolation_of(const Evaluation& e) {
  const std::optional<std::string> to = setting_text(e, "extrapolate");
  const std::optional<std::string> factor = setting_text(e, "extrapolate_compute");
  const std::optional<std::string> variation = setting_text(e, "extrapolate_variation");
  if (!to) {
    if (factor || variation)
      throw InputError(std::string("study setting ") + (factor ? "extrapolate_compute" : "extrapolate_variation") +
                       " goes with extrapolate (the rank count to replay as)");
    return std::nullopt;
  }
  trace::Extrapolation x;
  std::string error;
  if (!trace::parse_extrapolation(*to, x, error))
    throw InputError("study setting extrapolate = \"" + *to + "\": " + error);
  if (factor && *factor != "keep") {
    std::size_t used = 0;
    double f = -1;
    try {
      f = std::stod(*factor, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != factor->size() || !(f >= 0) || !std::isfinite(f))
      throw InputError("study setting extrapolate_compute = \"" + *factor +
                       "\" is out of range; expected \"keep\" or a number >= 0 (each computation's factor)");
    x.compute_factor = f;
  }
  if (variation && !trace::parse_variation(*variation, x, error))
    throw InputError("study setting extrapolate_variation = \"" + *variation + "\": " + error);
  return x;
}

}  // namespace

trace::ReplayOptions replay_options(const Evaluation& e, const std::string& model) {
  trace::ReplayOptions options;
  options.compute_scale = e.value("compute_scale");
  if (!(options.compute_scale >= 0) || !std::isfinite(options.compute_scale))
    throw InputError("compute_scale = " + std::to_string(options.compute_scale) + " of model " + model +
                     " is out of range; expected a number >= 0 (Wg of the modelled processor over the traced one's)");
  apply_replay_settings(e, options);
  return options;
}

std::optional<sim::Semantics> replay_semantics(const Evaluation& e) {
  const std::optional<std::string> text = setting_text(e, "semantics");
  if (!text) return std::nullopt;
  if (const std::optional<sim::Semantics> s = sim::parse_semantics(*text)) return s;
  throw InputError(semantics_error("study setting semantics", base::Value::of_string(*text)));
}

nlohmann::json replay_settings_key(const Evaluation& e) {
  nlohmann::json key = nlohmann::json::object();
  trace::ReplayOptions options;
  apply_replay_settings(e, options);
  if (e.settings.count("window")) key["window"] = options.window.text();
  if (e.settings.count("collective_algorithm")) key["algorithms"] = algorithms_key(options);
  if (e.settings.count("computation")) key["computation"] = options.cpu_time ? "cpu" : "wall";
  if (const std::optional<trace::Extrapolation> x = extrapolation_of(e)) {
    key["extrapolate"] = {{"ranks", x->ranks}, {"grid", x->grid}, {"compute_factor", x->compute_factor}};
    // Only when resampled, so that earlier runs' keys still match.
    if (x->resample) key["extrapolate"]["variation"] = {{"resample", true}, {"seed", x->seed}};
  }
  return key;
}

std::shared_ptr<const TraceGraph> make_trace_graph(const std::string& archive) {
  auto g = std::make_shared<TraceGraph>();
  g->trace = trace::read_trace(archive);
  g->hash = trace::archive_hash(g->trace.path);
  g->model = "trace:" + g->hash.substr(0, 12);
  g->name = kTraceGraphName;
  g->params = {"compute_scale"};
  g->slot_names = {"compute_scale"};
  g->param_defaults = {taskgraph::CompiledExpr::constant(1.0)};
  return g;
}

const TraceGraph* trace_graph(const taskgraph::StaticTaskGraph& graph) {
  // Only make_trace_graph names a graph so, and it makes a TraceGraph.
  return graph.name == kTraceGraphName ? static_cast<const TraceGraph*>(&graph) : nullptr;
}

Outcome simulate_trace_model(const Evaluation& e) {
  const TraceGraph& g = the_trace_graph(e);
  Replayable r = schedule_of(e, g);
  Outcome out = simulate_schedule(*r.schedule, e, "the replay");
  add_trace_figures(out, g, r.schedule->scope(), out.simulation->max_finish);
  return out;
}

Outcome critical_path_of_trace_model(const Evaluation& e) {
  const TraceGraph& g = the_trace_graph(e);
  Replayable r = schedule_of(e, g);
  taskgraph::Picoseconds finish = 0;
  Outcome out = critical_path_of_schedule(*r.schedule, e, &finish);
  add_trace_figures(out, g, r.schedule->scope(), finish);
  return out;
}

}  // namespace poems::core
