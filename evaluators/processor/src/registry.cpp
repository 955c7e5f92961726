// The registries of processor models and native kernels. Both are
// function-local statics (safe whatever the order of static initialization);
// the built-in models are registered inside the accessor on first use, so
// linking poems_processor as a static library cannot drop them.
#include <algorithm>
#include <mutex>

#include "common.h"

namespace poems::processor {
namespace {

// Callables by name, safe to use from several threads.
template <typename T>
class Registry {
 public:
  void add(const std::string& name, T value) {
    std::lock_guard lock(mutex_);
    entries_[name] = std::move(value);
  }
  std::vector<std::string> names() {
    std::lock_guard lock(mutex_);
    std::vector<std::string> out;
    for (const auto& [name, value] : entries_) out.push_back(name);
    return out;  // std::map: sorted
  }
  // The entry `name`, or an empty T.
  T find(const std::string& name) {
    std::lock_guard lock(mutex_);
    auto it = entries_.find(name);
    return it == entries_.end() ? T{} : it->second;
  }

 private:
  std::mutex mutex_;
  std::map<std::string, T> entries_;
};

Registry<ProcessorFactory>& model_registry() {
  static auto* registry = [] {
    auto* r = new Registry<ProcessorFactory>;  // never destroyed: usable from other statics' destructors
    r->add("processor[wg]", detail::make_wg);
    r->add("processor[measured]", detail::make_measured);
    r->add("processor[external]", detail::make_external);
    return r;
  }();
  return *registry;
}

Registry<Kernel>& kernel_registry() {
  static auto* registry = new Registry<Kernel>;
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
  model_registry().add(evaluator, std::move(factory));
}

std::vector<std::string> processor_models() { return model_registry().names(); }

std::unique_ptr<ProcessorModel> make_processor_model(const ProcessorSpec& spec) {
  const ProcessorFactory factory = model_registry().find(spec.evaluator);
  if (!factory)
    throw ProcessorError("processor component '" + spec.component + "': unknown processor evaluator '" +
                         spec.evaluator + "' (known: " + join(processor_models()) + ")");
  auto model = factory(spec);
  if (!model) throw ProcessorError(detail::who(spec) + ": the registered factory returned no model");
  return model;
}

void register_kernel(const std::string& name, Kernel kernel) {
  if (name.empty() || !kernel) throw ProcessorError("register_kernel: needs a name and a kernel (got '" + name + "')");
  kernel_registry().add(name, std::move(kernel));
}

std::vector<std::string> kernels() { return kernel_registry().names(); }

Kernel find_kernel(const std::string& name) { return kernel_registry().find(name); }

double fitted_wg_ns(ProcessorModel& model, const TaskRequest& task) {
  auto it = task.params.find("work");
  if (it == task.params.end() || !(it->second > 0) || !std::isfinite(it->second))
    throw ProcessorError(model.evaluator() + ": cannot fit Wg for " + detail::task_name(task) +
                         ": needs a positive parameter 'work'");
  return model.task_time_ns(task) / it->second;
}

}  // namespace poems::processor
