// The processor models of a session (processor[measured], processor[external],
// ...): kept for its life, so a measured shape or an external answer is
// computed once. The kernels processor[measured] can time are registered by
// the code that owns them (processor::register_kernel, from examples/).
#pragma once

#include <map>
#include <memory>
#include <string>

#include "poems/core/evaluation_plan.h"
#include "poems/processor/processor_model.h"

namespace poems::core {

struct ProcessorTask {
  std::string component, transaction;
  std::map<std::string, double> params;  // the task's arguments and the bound transaction (work, ...)
};

// The processor component a compute TED reaches, as processor models read it.
processor::ProcessorSpec processor_spec(const Ted& ted);

class ProcessorModels {
 public:
  ProcessorModels();
  ~ProcessorModels();
  // Time of one task of `ted`'s node in ns; throws std::runtime_error.
  double task_time_ns(const Ted& ted, const ProcessorTask& task);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace poems::core
