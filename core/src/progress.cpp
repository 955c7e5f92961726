#include "poems/core/progress.h"

namespace poems::core {

namespace {
thread_local sim::ProgressHook current_hook;

void draw(void* line, const sim::SimulationProgress& p) {
  static_cast<base::ProgressLine*>(line)->update(progress_figures(p));
}
}  // namespace

ProgressScope::ProgressScope(sim::ProgressHook hook) : previous_(current_hook) { current_hook = hook; }
ProgressScope::~ProgressScope() { current_hook = previous_; }

sim::ProgressHook current_progress() { return current_hook; }

base::ProgressFigures progress_figures(const sim::SimulationProgress& p) {
  base::ProgressFigures f;
  f.elapsed_seconds = p.wall_seconds;
  f.simulated_seconds = static_cast<double>(p.now) * 1e-12;
  f.events = p.events;
  f.done = p.done;
  f.total = p.total;
  f.finished = p.finished;
  return f;
}

sim::ProgressHook progress_hook(base::ProgressLine& line) {
  if (!line.enabled()) return {};
  return sim::ProgressHook{draw, &line};
}

}  // namespace poems::core
