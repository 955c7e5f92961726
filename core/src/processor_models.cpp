#include "poems/core/processor_models.h"

#include <cstdio>
#include <stdexcept>

#include "poems/processor/processor_model.h"

namespace poems::core {

processor::ProcessorSpec processor_spec(const Ted& ted) {
  processor::ProcessorSpec spec;
  spec.component = ted.chain.empty() ? "" : ted.chain.back();
  spec.evaluator = ted.evaluator;
  for (const auto& [k, v] : ted.parameters) {
    if (v.kind == psl::Value::Kind::Number) spec.numbers[k] = v.number;  // base units: ns, bytes
    if (v.kind == psl::Value::Kind::String || v.kind == psl::Value::Kind::Ref) spec.strings[k] = v.text;
  }
  return spec;
}

struct ProcessorModels::State {
  std::map<std::string, std::unique_ptr<processor::ProcessorModel>> models;
};

ProcessorModels::ProcessorModels() : state_(std::make_unique<State>()) {}

ProcessorModels::~ProcessorModels() = default;

double ProcessorModels::task_time_ns(const Ted& ted, const ProcessorTask& task) {
  // One model per component and attribute values: a study that varies a
  // component parameter (processor[cachesim]'s cache sizes) gets a model each.
  const processor::ProcessorSpec spec = processor_spec(ted);
  std::string key = ted.evaluator + "|" + spec.component;
  for (const auto& [k, v] : spec.numbers) {
    char number[40];
    std::snprintf(number, sizeof number, "%.17g", v);
    key += "|" + k + "=" + number;
  }
  for (const auto& [k, v] : spec.strings) key += "|" + k + "=" + v;
  auto it = state_->models.find(key);
  if (it == state_->models.end()) it = state_->models.emplace(key, processor::make_processor_model(spec)).first;
  processor::TaskRequest request;
  request.component = task.component;
  request.transaction = task.transaction;
  request.params = task.params;
  return it->second->task_time_ns(request);
}

}  // namespace poems::core
