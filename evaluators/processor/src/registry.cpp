// The registries of processor models and native kernels. Both are
// function-local statics (safe whatever the order of static initialization);
// the built-in models are registered inside the accessor on first use, so
// linking poems_processor as a static library cannot drop them.
#include <algorithm>
#include <mutex>

#include "common.h"

namespace poems::processor {
namespace {

struct ModelRegistry {
  std::mutex mutex;
  std::map<std::string, ProcessorFactory> factories;
};

ModelRegistry& model_registry() {
  static ModelRegistry* registry = [] {
    auto* r = new ModelRegistry;  // never destroyed: usable from other statics' destructors
    r->factories["processor[wg]"] = detail::make_wg;
    r->factories["processor[measured]"] = detail::make_measured;
    r->factories["processor[external]"] = detail::make_external;
    return r;
  }();
  return *registry;
}

struct KernelRegistry {
  std::mutex mutex;
  std::map<std::string, Kernel> kernels;
};

KernelRegistry& kernel_registry() {
  static auto* registry = new KernelRegistry;
  return *registry;
}

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "none" : out;
}

}  // namespace

void register_processor_model(const std::string& evaluator, ProcessorFactory factory) {
  if (evaluator.empty() || !factory)
    throw ProcessorError("register_processor_model: needs a name and a factory (got '" + evaluator + "')");
  auto& r = model_registry();
  std::lock_guard lock(r.mutex);
  r.factories[evaluator] = std::move(factory);
}

std::vector<std::string> processor_models() {
  auto& r = model_registry();
  std::lock_guard lock(r.mutex);
  std::vector<std::string> names;
  for (const auto& [name, factory] : r.factories) names.push_back(name);
  return names;  // std::map: sorted
}

std::unique_ptr<ProcessorModel> make_processor_model(const ProcessorSpec& spec) {
  ProcessorFactory factory;
  {
    auto& r = model_registry();
    std::lock_guard lock(r.mutex);
    auto it = r.factories.find(spec.evaluator);
    if (it != r.factories.end()) factory = it->second;
  }
  if (!factory)
    throw ProcessorError("processor component '" + spec.component + "': unknown processor evaluator '" +
                         spec.evaluator + "' (known: " + join(processor_models()) + ")");
  auto model = factory(spec);
  if (!model) throw ProcessorError(detail::who(spec) + ": the registered factory returned no model");
  return model;
}

void register_kernel(const std::string& name, Kernel kernel) {
  if (name.empty() || !kernel) throw ProcessorError("register_kernel: needs a name and a kernel (got '" + name + "')");
  auto& r = kernel_registry();
  std::lock_guard lock(r.mutex);
  r.kernels[name] = std::move(kernel);
}

std::vector<std::string> kernels() {
  auto& r = kernel_registry();
  std::lock_guard lock(r.mutex);
  std::vector<std::string> names;
  for (const auto& [name, kernel] : r.kernels) names.push_back(name);
  return names;
}

Kernel find_kernel(const std::string& name) {
  auto& r = kernel_registry();
  std::lock_guard lock(r.mutex);
  auto it = r.kernels.find(name);
  return it == r.kernels.end() ? Kernel{} : it->second;
}

double fitted_wg_ns(ProcessorModel& model, const TaskRequest& task) {
  auto it = task.params.find("work");
  if (it == task.params.end() || !(it->second > 0) || !std::isfinite(it->second))
    throw ProcessorError(model.evaluator() + ": cannot fit Wg for " + detail::task_name(task) +
                         ": needs a positive parameter 'work'");
  return model.task_time_ns(task) / it->second;
}

}  // namespace poems::processor
