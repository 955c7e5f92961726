#include "poems/core/evaluators.h"

#include <algorithm>
#include <mutex>

#include "builtin_evaluators.h"
#include "poems/base/registry.h"
#include "poems/base/suggest.h"
#include "poems/components/closed_forms.h"
#include "poems/core/error.h"
#include "poems/core/timeline.h"
#include "poems/core/trace_model.h"
#include "poems/loggp/critical_path.h"
#include "poems/taskgraph/limits.h"

namespace poems::core {

namespace {

double ns(taskgraph::Picoseconds ps) { return static_cast<double>(ps) / 1000.0; }

// analytic[LogGP]: the model's closed form where one is registered, else the
// critical path of the task graph.
std::string analytic_method(const Evaluation& e, const std::string& requested) {
  if (trace_graph(*e.graph)) {  // a model from a trace has no closed form
    if (!requested.empty() && requested != "critical-path")
      throw UsageError("--method", "a model from a trace has no closed form; use critical-path");
    return "critical-path";
  }
  const components::ClosedForm* form = components::find_closed_form(e.graph->model);
  const bool closed = form != nullptr;
  // A form derived for the matched semantics does not hold under loggopsim
  // (arrivals that take the CPU delay a wavefront, by up to 37 % measured).
  std::string refusal = closed && e.machine.semantics == sim::Semantics::Loggopsim && !form->holds_under_loggopsim
                            ? "the " + e.graph->model + " closed form holds for the matched semantics only (" +
                                  form->description + "); use critical-path, or simulate"
                            : "";
  // The closed forms price every message with one L: a machine of nodes or
  // a topology is the critical path's (which asks the network each message).
  if (closed && refusal.empty() && !e.machine.flat())
    refusal = "the " + e.graph->model +
              " closed form assumes one rank per node on a complete network; this machine has " +
              e.machine.network_model->describe() + "; use critical-path, or simulate";
  if (closed && refusal.empty() && e.machine.noisy())
    refusal = "the " + e.graph->model + " closed form has no OS noise; this machine has " +
              e.machine.noise->describe() + "; use critical-path, or simulate";
  if (requested.empty()) return closed && refusal.empty() ? "closed-form" : "critical-path";
  if (requested == "closed-form" && !refusal.empty()) throw UsageError("--method", refusal);
  if (requested == "closed-form" && !closed) {
    const std::vector<std::string> models = components::closed_form_models();
    throw UsageError("--method", "model " + e.graph->model + " has no closed form (closed forms: " +
                                     base::known_names(models) + "); use critical-path");
  }
  if (requested != "closed-form" && requested != "critical-path")
    throw UsageError("--method", "'" + requested +
                                     "' is not a method of analytic[LogGP]; expected closed-form or "
                                     "critical-path" +
                                     base::did_you_mean(requested, {"closed-form", "critical-path"}));
  return requested;
}

Outcome analytic(const Evaluation& e) {
  if (trace_graph(*e.graph)) return critical_path_of_trace_model(e);
  if (e.method == "closed-form") {
    const components::ClosedForm* form = components::find_closed_form(e.graph->model);
    if (!form) throw UsageError("--method", "model " + e.graph->model + " has no closed form");
    components::ClosedFormResult r;
    try {
      const auto bound = form->bind(e.graph->params);
      r = bound->evaluate(e.values, {e.machine.params, e.machine.rendezvous_handshake, e.ns_per_work}, true);
    } catch (const components::ParameterError& x) {
      throw InputError(x.what());
    }
    return closed_form_outcome(r);
  }
  taskgraph::ModelSchedule schedule(e.graph, e.binding, e.instantiate);
  return critical_path_of_schedule(schedule, e);
}

}  // namespace

Outcome critical_path_of_schedule(taskgraph::ScheduleSource& schedule, const Evaluation& e,
                                  taskgraph::Picoseconds* finish) {
  loggp::AnalyticResult r;
  try {
    r = loggp::critical_path(schedule, simulation_options(e.machine));
  } catch (const sim::SimulationLimitError& x) {  // beyond the clock or the memory limit: the input's
    throw InputError(x.what());
  } catch (const sim::SimulationError& x) {
    throw EvaluationError(x.what());
  } catch (const taskgraph::InstantiationError& x) {  // a bad size, work or loop bound met while running
    throw InputError(x.what());
  }
  Outcome out;
  out.method = "critical-path";
  out.breakdown = Breakdown::of_ps(r.time, r.compute, r.comm);
  out.messages = r.messages;
  out.events = r.operations;
  out.processes = schedule.ranks();
  out.extra = {{"operations", r.operations}, {"last_rank", r.last_rank}};
  if (finish) *finish = r.time;
  return out;
}

// simulation[MPI-Sim]: the discrete-event simulator.

Outcome simulate_schedule(taskgraph::ScheduleSource& schedule, const Evaluation& e, const std::string& what_ran) {
  sim::SimulationOptions options = simulation_options(e.machine);
  options.per_rank_results = e.per_rank;
  options.record_timeline = e.timeline;
  auto r = std::make_shared<sim::SimulationResult>();
  try {
    *r = simulate_with_timeline(schedule, options, e.max_stuck_listed, e.otf2_timeline, false);
  } catch (const sim::SimulationLimitError& x) {
    throw InputError(x.what());
  } catch (const sim::SimulationError& x) {
    throw EvaluationError(x.what());
  } catch (const taskgraph::InstantiationError& x) {
    throw InputError(x.what());
  }
  Outcome out;
  out.simulation = r;
  out.method = "discrete-event";
  if (!r->completed) {
    std::string what = what_ran + " did not complete (deadlock or unmatched messages)";
    for (const sim::StuckRank& s : r->stuck)
      if (!s.waits.empty()) {
        what += "; rank " + std::to_string(s.rank) + ": " + s.waits.front();
        break;
      }
    throw SimulationFailed(what, r);
  }
  const double p = r->ranks ? static_cast<double>(r->ranks) : 1.0;
  // Per-process means, as the analytic breakdown: CPU overhead of messages is
  // communication, the rest of the finish time waiting.
  out.breakdown = Breakdown::of_ns(ns(r->max_finish), ns(r->total_compute) / p, ns(r->total_overhead) / p);
  out.events = r->events;
  out.messages = r->messages;
  out.processes = r->ranks;
  out.extra = {{"max_finish_rank", r->max_finish_rank}, {"events_per_second", r->events_per_second()}};
  return out;
}

namespace {

Outcome simulation(const Evaluation& e) {
  if (trace_graph(*e.graph)) return simulate_trace_model(e);
  taskgraph::ModelSchedule schedule(e.graph, e.binding, e.instantiate);
  return simulate_schedule(schedule, e, "the simulation");
}

// Registering goes here directly; lookups go through registry(), which adds the
// built-in evaluators first.
base::Registry<EvaluatorEntry>& raw_registry() {
  static base::Registry<EvaluatorEntry> r;
  return r;
}

base::Registry<EvaluatorEntry>& registry() {
  static std::once_flag once;
  std::call_once(once, [] {
    EvaluatorEntry a;
    a.name = "analytic[LogGP]";
    a.method = analytic_method;
    a.evaluate = analytic;
    register_evaluator(std::move(a));
    EvaluatorEntry s;
    s.name = "simulation[MPI-Sim]";
    s.method = [](const Evaluation&, const std::string&) { return std::string("discrete-event"); };
    s.evaluate = simulation;
    register_evaluator(std::move(s));
    register_direct_evaluator();
    register_measurement_evaluator();
  });
  return raw_registry();
}

}  // namespace

Outcome closed_form_outcome(const components::ClosedFormResult& r) {
  Outcome out;
  out.method = "closed-form";
  out.breakdown = Breakdown::of_ps(r.time, r.compute, r.comm);
  out.messages = r.messages;
  out.processes = r.processes;
  out.extra = r.details;
  return out;
}

Breakdown Breakdown::of_ns(double time, double compute, double comm) {
  return {time, compute, comm, std::max(0.0, time - compute - comm)};
}

Breakdown Breakdown::of_ps(std::uint64_t time, std::uint64_t compute, std::uint64_t comm) {
  const std::uint64_t sync = time > compute + comm ? time - compute - comm : 0;
  return {ns(time), ns(compute), ns(comm), ns(sync)};
}

double Evaluation::value(const std::string& name) const {
  for (std::uint32_t i = 0; i < graph->model_slot_count() && i < values.size(); ++i)
    if (graph->slot_names[i] == name) return values[i];
  throw InputError("model " + graph->model + " has no parameter or let named '" + name + "'");
}

nlohmann::json Evaluation::parameters_key() const {
  nlohmann::json parameters = nlohmann::json::object();
  for (std::size_t i = 0; i < graph->params.size() && i < values.size(); ++i) {
    auto text = text_parameters.find(graph->params[i]);
    if (text != text_parameters.end())
      parameters[graph->params[i]] = text->second;
    else
      parameters[graph->params[i]] = values[i];
  }
  return parameters;
}

void register_evaluator(EvaluatorEntry evaluator) {
  std::string name = evaluator.name;
  raw_registry().add(name, std::move(evaluator));
}

const EvaluatorEntry* find_evaluator(const std::string& name) { return registry().find(name); }

std::vector<std::string> evaluator_names() { return registry().names(); }

const EvaluatorEntry& evaluator_named(const std::string& name, const std::string& option) {
  if (const EvaluatorEntry* e = find_evaluator(name)) return *e;
  const std::vector<std::string> names = evaluator_names();
  std::vector<std::string> heads;
  for (const std::string& n : names)
    if (n.rfind(name + "[", 0) == 0) heads.push_back(n);
  if (heads.size() == 1) return *find_evaluator(heads.front());
  if (heads.size() > 1)
    throw UsageError(option, "'" + name + "' is ambiguous: " + base::name_list(heads) + "; name one");
  throw UsageError(option, "no evaluator implements '" + name + "' (evaluators: " + base::name_list(names) + ")" +
                               base::did_you_mean(name, names));
}

}  // namespace poems::core
