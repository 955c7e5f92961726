// The progress display of long evaluations. A command that wants one opens a
// ProgressScope on its thread with a hook (poems/sim/simulator.h: a function
// pointer and its context); every simulation the core starts on that thread
// (simulation_options() copies the hook, as it copies the memory limit) then
// reports to it: a model's simulation, a study cell, a GOAL file, a trace
// replay, a critical path. Threads without a scope (workers of a parallel
// study) report nothing.
#pragma once

#include "poems/base/progress.h"
#include "poems/sim/simulator.h"

namespace poems::core {

class ProgressScope {
 public:
  explicit ProgressScope(sim::ProgressHook hook);
  ~ProgressScope();
  ProgressScope(const ProgressScope&) = delete;
  ProgressScope& operator=(const ProgressScope&) = delete;

 private:
  sim::ProgressHook previous_;
};

// The hook of the innermost scope on this thread (none: empty).
sim::ProgressHook current_progress();

// A hook drawing on `line` (which must outlive the scope using it).
sim::ProgressHook progress_hook(base::ProgressLine& line);

}  // namespace poems::core
