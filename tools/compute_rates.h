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

#include "poems/components/evaluation_plan.h"
#include "poems/psl/compiler.h"
#include "poems/taskgraph/stg.h"
#include "processor_models.h"

namespace poems::cli {

struct ComputeRates {
  std::map<std::uint32_t, double> ns_per_work;  // by static node
  double main_ns_per_work = 0;                  // of the first compute node (closed forms)
  nlohmann::json report = nlohmann::json::array();
};

// Throws std::runtime_error (processor::ProcessorError included) naming the node.
ComputeRates compute_rates(const psl::Program& program, const psl::SystemModel& system,
                           const components::EvaluationPlan& plan, const taskgraph::StaticTaskGraph& graph,
                           const std::vector<double>& model_values, ProcessorModels& models);

}  // namespace poems::cli
