// The registry of model evaluators: a study's `compare` entry (and a plan's
// communication paradigm) names one. Adding an evaluator is one file with
// its function and one line in register_builtin_model_evaluators().
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "poems/components/sweep3d_model.h"
#include "poems/sim/simulator.h"
#include "poems/taskgraph/dtg.h"

namespace poems::cli {

// How measurement[mpirun] runs a real program (tools/measured_programs.h).
struct MeasureOptions {
  int repetitions = 3;           // runs per binding; the time is the fastest (the least disturbed)
  int max_ranks = 0;             // largest process count measured; 0 = this machine's cores
  double timeout_seconds = 600;  // per run
  int nice = 0;                  // nice value of the whole command (and so of the runs); 0 = unchanged
};

// One evaluation: the model bound and instantiable, on a machine.
struct ModelEvaluation {
  std::shared_ptr<const taskgraph::StaticTaskGraph> graph;
  taskgraph::ParameterBinding binding;        // model parameters
  taskgraph::InstantiateOptions instantiate;  // compute time per unit of work, per node (from the TEDs)
  sim::SimulationOptions options;             // LogGOPS and handshake (from the plan's network)
  double wg_ns = 0;                           // rate of the model's compute node, for closed forms
  std::string method;                         // evaluator-specific ("closed-form", "critical-path"); "" = default
  MeasureOptions measure;                     // measurement[mpirun]
};

struct EvaluationOutcome {
  double time_ns = 0, compute_ns = 0, comm_ns = 0, sync_ns = 0;
  std::uint64_t events = 0, messages = 0;
  std::uint32_t processes = 0;
  std::string method;
  nlohmann::json extra = nlohmann::json::object();
};

// Throws on failure: components::Sweep3DParameterError for a bad parameter,
// sim::SimulationError for a deadlock, std::runtime_error otherwise.
using ModelEvaluator = std::function<EvaluationOutcome(const ModelEvaluation&)>;

void register_model_evaluator(const std::string& name, ModelEvaluator evaluator);
const ModelEvaluator* find_model_evaluator(const std::string& name);
std::vector<std::string> model_evaluators();

// The closed forms bound to models (by name until closed forms are
// components of their own): Sweep3D's wavefront.
bool has_closed_form(const std::string& model);
// The Sweep3D closed form's configuration from the model's parameter values.
components::Sweep3DConfig sweep3d_config(const taskgraph::StaticTaskGraph& graph, const std::vector<double>& values);

}  // namespace poems::cli
