// The registry of model evaluators: a study's `compare` entries and the
// commands' --paradigm name one. Built in: analytic[LogGP] (the model's
// registered closed form, else the task graph's critical path),
// simulation[MPI-Sim] (the discrete-event simulator), simulation[direct] and
// measurement[mpirun] (the model's registered program, programs.h). Adding an
// evaluator is one register_evaluator call.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "poems/components/closed_forms.h"
#include "poems/core/error.h"
#include "poems/core/machine.h"
#include "poems/sim/simulator.h"
#include "poems/taskgraph/dtg.h"

namespace poems::core {

struct ModelProgram;

// How measurement[mpirun] runs a real program.
struct MeasureOptions {
  int repetitions = 3;           // runs per binding; the time is the fastest (the least disturbed)
  int max_ranks = 0;             // largest process count measured; 0 = this machine's cores
  double timeout_seconds = 600;  // per run; 0 = no limit
  int nice = 0;                  // nice value of the measured runs (recorded in the run key)
};

// One evaluation: the model bound and instantiable, on a machine.
struct Evaluation {
  std::shared_ptr<const taskgraph::StaticTaskGraph> graph;
  taskgraph::ParameterBinding binding;        // model parameters
  std::vector<double> values;                 // every model parameter then every model let, evaluated
  taskgraph::InstantiateOptions instantiate;  // compute time per unit of work, per node (from the TEDs)
  Machine machine;
  double ns_per_work = 0;  // rate of the model's first compute node (closed forms)
  std::string method;      // resolved by the evaluator (EvaluatorEntry::method)
  MeasureOptions measure;
  // The model's program when its PSL attaches one (`program { }`); else the
  // registered one (programs.h) is used.
  std::shared_ptr<const ModelProgram> program;
  // The study's settings of this binding (its `set`, `vary` and --set values
  // that are neither model parameters nor Component.param): what selectors
  // read as study.NAME, and a trace replay's options (core/trace_model.h).
  std::map<std::string, base::Value> settings;
  // Model parameters whose value is not a number ("a", true), as PSL writes
  // them: the task graph sees them as 0, so the run key must hold the text.
  std::map<std::string, std::string> text_parameters;
  // What a single evaluation may ask for beside the record (poems simulate):
  // the simulator's per-rank results and a timeline.
  bool per_rank = false, timeline = false;
  std::size_t max_stuck_listed = 16;
  std::string otf2_timeline;  // simulation[MPI-Sim]: write the run as this OTF2 archive (core/timeline.h)
  // The value of a model parameter or let by name; throws InputError.
  double value(const std::string& name) const;
  // Every model parameter by name as a run key holds it: its number, or its
  // text where text_parameters has one.
  nlohmann::json parameters_key() const;
};

// The time of one evaluation and its breakdown: compute and comm are
// per-process means (compute time; CPU time in communication), sync is the
// rest of the time (waiting). The one definition every evaluator reports:
// build it with one of the two functions below.
struct Breakdown {
  double time_ns = 0, compute_ns = 0, comm_ns = 0, sync_ns = 0;
  // From nanoseconds: sync = max(0, time - compute - comm).
  static Breakdown of_ns(double time, double compute, double comm);
  // From whole picoseconds (the analytic evaluator's exact arithmetic).
  static Breakdown of_ps(std::uint64_t time, std::uint64_t compute, std::uint64_t comm);
};

struct Outcome {
  Breakdown breakdown;
  std::uint64_t events = 0, messages = 0;
  std::uint32_t processes = 0;
  std::string method;
  nlohmann::json extra = nlohmann::json::object();  // the evaluator's own figures
  // The simulator's whole result, when it ran (per-rank results and a
  // timeline if Evaluation asked for them).
  std::shared_ptr<const sim::SimulationResult> simulation;
};

// A simulation that did not complete (deadlock, unmatched messages), with
// the simulator's result for the report of the stuck ranks.
class SimulationFailed : public EvaluationError {
 public:
  SimulationFailed(const std::string& message, std::shared_ptr<const sim::SimulationResult> result)
      : EvaluationError(message), result_(std::move(result)) {}
  const std::shared_ptr<const sim::SimulationResult>& result() const { return result_; }

 private:
  std::shared_ptr<const sim::SimulationResult> result_;
};

struct EvaluatorEntry {
  std::string name;  // e.g. "simulation[MPI-Sim]"
  // The method this evaluation uses; `requested` is --method ("" = the
  // default). Throws UsageError for a method the evaluator does not have.
  std::function<std::string(const Evaluation&, const std::string& requested)> method;
  // Throws InputError for a parameter outside the model's range,
  // EvaluationError when the evaluation fails.
  std::function<Outcome(const Evaluation&)> evaluate;
  // false: it measures this host, so it needs no network model, no processor
  // model (the real program computes) and keys runs by program and host.
  bool modelled = true;
  // Why this evaluation is not made here ("" = it is): a measurement that
  // does not fit this machine is skipped, not failed.
  std::function<std::string(const Evaluation&)> obstacle;
  // The run key's binding when it is not the model's (what a measurement depends on).
  std::function<nlohmann::json(const Evaluation&)> key;
  // What this evaluator's result depends on beyond the model's binding
  // (direct execution: the program's code), added to the model's key.
  std::function<void(const Evaluation&, nlohmann::json& binding)> extend_key;
};

// analytic[LogGP]'s outcome of a closed form (the recommender, which
// evaluates closed forms by the million, records them through this too).
Outcome closed_form_outcome(const components::ClosedFormResult& result);

void register_evaluator(EvaluatorEntry evaluator);
const EvaluatorEntry* find_evaluator(const std::string& name);
std::vector<std::string> evaluator_names();
// The evaluator named `name` (exactly, or by its head alone when one
// evaluator has it: "analytic"); UsageError naming `option`, the evaluators
// and the closest spelling otherwise.
const EvaluatorEntry& evaluator_named(const std::string& name, const std::string& option);

}  // namespace poems::core
