#include "model_evaluators.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <mutex>

#include "direct_evaluator.h"
#include "measured_programs.h"
#include "poems/loggp/critical_path.h"

namespace poems::cli {

namespace {

double ns(taskgraph::Picoseconds ps) { return static_cast<double>(ps) / 1000.0; }

// analytic[LogGP]: the closed form where one applies, else the critical path.
EvaluationOutcome analytic(const ModelEvaluation& e) {
  EvaluationOutcome out;
  out.method = e.method.empty() ? (has_closed_form(e.graph->model) ? "closed-form" : "critical-path") : e.method;
  if (out.method == "closed-form") {
    if (!has_closed_form(e.graph->model))
      throw std::runtime_error("model " + e.graph->model + " has no closed form (closed forms: Sweep3D)");
    const std::vector<double> values = taskgraph::evaluate_model_values(*e.graph, e.binding);
    const components::Sweep3DConfig config = sweep3d_config(*e.graph, values);
    components::Sweep3DMachine m{e.options.params, e.options.rendezvous_handshake, e.wg_ns};
    const components::Sweep3DPrediction s = components::predict_sweep3d(config, m);
    const loggp::AnalyticResult r = loggp::breakdown(s.time, s.compute, s.comm);
    out.time_ns = ns(r.time);
    out.compute_ns = ns(r.compute);
    out.comm_ns = ns(r.comm);
    out.sync_ns = ns(r.sync);
    out.messages = s.messages;
    out.processes = static_cast<std::uint32_t>(config.npe_i * config.npe_j);
    out.extra["iteration_ns"] = ns(s.iteration);
    out.extra["allreduce_ns"] = ns(s.allreduce);
    return out;
  }
  taskgraph::ModelSchedule schedule(e.graph, e.binding, e.instantiate);
  const loggp::AnalyticResult r = loggp::critical_path(schedule, e.options);
  out.time_ns = ns(r.time);
  out.compute_ns = ns(r.compute);
  out.comm_ns = ns(r.comm);
  out.sync_ns = ns(r.sync);
  out.messages = r.messages;
  out.events = r.operations;
  out.processes = schedule.ranks();
  return out;
}

// simulation[MPI-Sim]: the discrete-event simulator.
EvaluationOutcome simulation(const ModelEvaluation& e) {
  taskgraph::ModelSchedule schedule(e.graph, e.binding, e.instantiate);
  sim::SimulationOptions options = e.options;
  options.per_rank_results = false;
  const sim::SimulationResult r = sim::simulate(schedule, options);
  if (!r.completed) {
    std::string what = "the simulation did not complete (deadlock or unmatched messages)";
    for (const sim::StuckRank& s : r.stuck)
      if (!s.waits.empty()) {
        what += "; rank " + std::to_string(s.rank) + ": " + s.waits.front();
        break;
      }
    throw sim::SimulationError(what);
  }
  EvaluationOutcome out;
  out.method = "discrete-event";
  const double p = r.ranks ? static_cast<double>(r.ranks) : 1.0;
  out.time_ns = ns(r.max_finish);
  // Per-process means, as the analytic breakdown: CPU overhead of messages is
  // communication, the rest of the finish time waiting (synchronization).
  out.compute_ns = ns(r.total_compute) / p;
  out.comm_ns = ns(r.total_overhead) / p;
  out.sync_ns = std::max(0.0, out.time_ns - out.compute_ns - out.comm_ns);
  out.events = r.events;
  out.messages = r.messages;
  out.processes = r.ranks;
  out.extra["events_per_second"] = r.events_per_second();
  return out;
}

std::map<std::string, ModelEvaluator>& registry() {
  static std::map<std::string, ModelEvaluator> r;
  return r;
}

void register_builtin_model_evaluators() {
  register_model_evaluator("analytic[LogGP]", analytic);
  register_model_evaluator("simulation[MPI-Sim]", simulation);
  register_model_evaluator("simulation[direct]", direct_execution);
  register_model_evaluator(kMeasurementEvaluator, measure_model);
}

std::map<std::string, ModelEvaluator>& populated() {
  static std::once_flag once;
  std::call_once(once, register_builtin_model_evaluators);
  return registry();
}

}  // namespace

void register_model_evaluator(const std::string& name, ModelEvaluator evaluator) {
  registry()[name] = std::move(evaluator);
}

const ModelEvaluator* find_model_evaluator(const std::string& name) {
  auto& r = populated();
  auto it = r.find(name);
  return it == r.end() ? nullptr : &it->second;
}

std::vector<std::string> model_evaluators() {
  std::vector<std::string> names;
  for (const auto& [name, _] : populated()) names.push_back(name);
  return names;
}

bool has_closed_form(const std::string& model) {
  std::string m = model;
  std::transform(m.begin(), m.end(), m.begin(), [](unsigned char c) { return std::tolower(c); });
  return m == "sweep3d";
}

components::Sweep3DConfig sweep3d_config(const taskgraph::StaticTaskGraph& graph, const std::vector<double>& values) {
  auto get = [&](const char* name) -> std::int64_t {
    for (std::size_t i = 0; i < graph.params.size(); ++i)
      if (graph.params[i] == name) return static_cast<std::int64_t>(values[i]);
    throw std::runtime_error(std::string("the Sweep3D closed form needs the model parameter '") + name + "'");
  };
  components::Sweep3DConfig c;
  c.it_g = get("it_g");
  c.jt_g = get("jt_g");
  c.kt = get("kt");
  c.npe_i = get("npe_i");
  c.npe_j = get("npe_j");
  c.mk = get("mk");
  c.mmi = get("mmi");
  c.mm = get("mm");
  c.iterations = get("iterations");
  return c;
}

}  // namespace poems::cli
