// The registries of processor models and native kernels. Both are
// function-local statics (safe whatever the order of static initialization);
// the built-in models are registered inside the accessor on first use, so
// linking poems_processor as a static library cannot drop them.
#include <algorithm>

#include "common.h"
#include "poems/base/registry.h"

namespace poems::processor {
namespace {

base::Registry<ProcessorFactory>& model_registry() {
  static auto* registry = [] {
    auto* r = new base::Registry<ProcessorFactory>;  // never destroyed: usable from other statics' destructors
    r->add("processor[wg]", detail::make_wg);
    r->add("processor[measured]", detail::make_measured);
    r->add("processor[external]", detail::make_external);
    r->add("processor[hierarchy]", detail::make_hierarchy);
    r->add("processor[cachesim]", detail::make_cachesim);
    return r;
  }();
  return *registry;
}

base::Registry<Kernel>& kernel_registry() {
  static auto* registry = new base::Registry<Kernel>;
  return *registry;
}

base::Registry<KernelCycle>& kernel_cycle_registry() {
  static auto* registry = new base::Registry<KernelCycle>;
  return *registry;
}

base::Registry<TimedKernel>& timed_kernel_registry() {
  static auto* registry = new base::Registry<TimedKernel>;
  return *registry;
}

}  // namespace

void register_processor_model(const std::string& evaluator, ProcessorFactory factory) {
  if (evaluator.empty() || !factory)
    throw ProcessorError("register_processor_model: needs a name and a factory (got '" + evaluator + "')");
  model_registry().add(evaluator, std::move(factory));
}

std::vector<std::string> processor_models() { return model_registry().names(); }

std::unique_ptr<ProcessorModel> make_processor_model(const ProcessorSpec& spec) {
  const ProcessorFactory factory = model_registry().find_copy(spec.evaluator).value_or(ProcessorFactory{});
  if (!factory)
    throw ProcessorError("processor component '" + spec.component + "': unknown processor evaluator '" +
                         spec.evaluator + "' (known: " + base::known_names(processor_models()) + ")");
  auto model = factory(spec);
  if (!model) throw ProcessorError(detail::who(spec) + ": the registered factory returned no model");
  return model;
}

void register_kernel(const std::string& name, Kernel kernel) {
  if (name.empty() || !kernel) throw ProcessorError("register_kernel: needs a name and a kernel (got '" + name + "')");
  kernel_registry().add(name, std::move(kernel));
}

std::vector<std::string> kernels() {
  std::vector<std::string> names = kernel_registry().names();
  for (const std::string& n : timed_kernel_registry().names()) names.push_back(n);
  std::sort(names.begin(), names.end());
  return names;
}

Kernel find_kernel(const std::string& name) { return kernel_registry().find_copy(name).value_or(Kernel{}); }

void register_kernel_cycle(const std::string& name, KernelCycle cycle) {
  if (name.empty() || !cycle)
    throw ProcessorError("register_kernel_cycle: needs a name and a function (got '" + name + "')");
  kernel_cycle_registry().add(name, std::move(cycle));
}

KernelCycle find_kernel_cycle(const std::string& name) {
  return kernel_cycle_registry().find_copy(name).value_or(KernelCycle{});
}

void register_timed_kernel(const std::string& name, TimedKernel kernel) {
  if (name.empty() || !kernel)
    throw ProcessorError("register_timed_kernel: needs a name and a kernel (got '" + name + "')");
  timed_kernel_registry().add(name, std::move(kernel));
}

TimedKernel find_timed_kernel(const std::string& name) {
  return timed_kernel_registry().find_copy(name).value_or(TimedKernel{});
}

double fitted_wg_ns(ProcessorModel& model, const TaskRequest& task) {
  auto it = task.params.find("work");
  if (it == task.params.end() || !(it->second > 0) || !std::isfinite(it->second))
    throw ProcessorError(model.evaluator() + ": cannot fit Wg for " + detail::task_name(task) +
                         ": needs a positive parameter 'work'");
  return model.task_time_ns(task) / it->second;
}

}  // namespace poems::processor
