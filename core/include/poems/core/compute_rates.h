// Compute time per unit of work for every compute node, from the processor
// TEDs of the plan (the processor-model hook, DESIGN 5.4): processor[wg]
// reads Wg; processor[measured], processor[external] and any registered model
// time one task of the node at the binding and divide by its work.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "poems/core/evaluation_plan.h"
#include "poems/core/processor_models.h"
#include "poems/psl/compiler.h"
#include "poems/taskgraph/stg.h"

namespace poems::core {

struct ComputeRates {
  std::map<std::uint32_t, double> ns_per_work;  // by static node
  double main_ns_per_work = 0;                  // of the first compute node (closed forms)
  nlohmann::json report = nlohmann::json::array();
};

// The processor task of `ted`'s compute node at a binding: the task
// statement's arguments and the transaction its component binds (work, ...).
// Throws InputError when the node is not one task statement or an argument
// is not known per binding.
ProcessorTask compute_task(const psl::Program& program, const psl::SystemModel& system, const Ted& ted,
                           const taskgraph::StaticTaskGraph& graph, const std::vector<double>& model_values);

// Throws InputError naming the node when its task cannot be timed, and
// EvaluationError when a processor model fails (processor::ProcessorError).
ComputeRates compute_rates(const psl::Program& program, const psl::SystemModel& system, const EvaluationPlan& plan,
                           const taskgraph::StaticTaskGraph& graph, const std::vector<double>& model_values,
                           ProcessorModels& models);

}  // namespace poems::core
