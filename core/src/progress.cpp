#include "poems/core/progress.h"

namespace poems::core {

namespace {
thread_local sim::ProgressHook current_hook;
}  // namespace

ProgressScope::ProgressScope(sim::ProgressHook hook) : previous_(current_hook) { current_hook = hook; }
ProgressScope::~ProgressScope() { current_hook = previous_; }

sim::ProgressHook current_progress() { return current_hook; }

sim::ProgressHook progress_hook(base::ProgressLine& line) {
  if (!line.enabled()) return {};
  return sim::ProgressHook{base::draw_progress<sim::SimulationProgress>, &line};
}

}  // namespace poems::core
