// The processor models of a command (processor[measured], processor[external],
// ...): kept for the command's life, so a measured shape or an external answer
// is computed once.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "poems/components/evaluation_plan.h"

namespace poems::cli {

struct ProcessorTask {
  std::string component, transaction;
  std::map<std::string, double> params;  // the task's arguments and the bound transaction (work, ...)
};

class ProcessorModels {
 public:
  ProcessorModels();
  ~ProcessorModels();
  // Time of one task of `ted`'s node in ns; throws std::runtime_error.
  double task_time_ns(const components::Ted& ted, const ProcessorTask& task);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace poems::cli
