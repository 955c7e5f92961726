// The processor-model hook (DESIGN 5.4): a task's transaction parameters plus
// the hardware[processor] component a TED names → the time of one task
// instance. Built-ins: processor[wg] (work × Wg), processor[measured] (time a
// registered native kernel), processor[external] (run a command, JSON in and
// out), processor[cachesim] (the kernel under cachegrind with a target's
// caches, cachesim.h). Adding a model is one file and one
// register_processor_model call (docs/processor.md). Depends on the
// standard library only.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace poems::processor {

// A task as a processor model sees it: its transaction parameters in base
// units (ns, bytes, plain numbers). Always has "work"; usually also the task's
// own arguments (e.g. a block's cells, angles and sizes).
struct TaskRequest {
  std::string component;                 // application component, e.g. "KBlock"
  std::string transaction;               // e.g. "execute_code_block"
  std::map<std::string, double> params;  // contains "work"
};

// The hardware[processor] component a TED names, with its attributes.
struct ProcessorSpec {
  std::string component;                       // e.g. "Opteron"
  std::string evaluator;                       // "processor[wg]", "processor[measured]", "processor[external]"
  std::map<std::string, double> numbers;       // e.g. Wg (ns per unit of work), timeout (ns), repetitions
  std::map<std::string, std::string> strings;  // e.g. kernel = "app.block", command = "python3 model.py"
};

// Every failure: the message names the component, the evaluator and what went wrong.
class ProcessorError : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

// One model object per processor component. task_time_ns may be called from
// several threads: the built-ins serialize internally (measured and external
// keep caches).
class ProcessorModel {
 public:
  virtual ~ProcessorModel() = default;
  virtual std::string evaluator() const = 0;
  // Time of one task instance in ns. Throws ProcessorError.
  virtual double task_time_ns(const TaskRequest& task) = 0;
};

using ProcessorFactory = std::function<std::unique_ptr<ProcessorModel>(const ProcessorSpec&)>;

// Adding a processor model is one file and one call of this. Registering a
// name again replaces the earlier factory.
void register_processor_model(const std::string& evaluator, ProcessorFactory factory);

// Throws ProcessorError for an unknown evaluator, listing the known ones; also
// for a spec missing a required attribute (naming it and giving an example).
std::unique_ptr<ProcessorModel> make_processor_model(const ProcessorSpec& spec);

std::vector<std::string> processor_models();  // registered names, sorted

// Native kernels that processor[measured] times: runs ONE task instance for
// the given params. A kernel throws (any std::exception) for params it cannot
// run; processor[measured] reports that as a ProcessorError. Registering a
// name again replaces the earlier kernel.
using Kernel = std::function<void(const std::map<std::string, double>& params)>;
void register_kernel(const std::string& name, Kernel kernel);
std::vector<std::string> kernels();  // registered names, sorted

// The kernel registered under `name`; empty if there is none.
Kernel find_kernel(const std::string& name);

// How many calls of a native kernel cover its state once for the given
// params (a Sweep3D column: 8 octants × its k-blocks, one block a call). The
// calls of a cycle differ by design (a block's time depends on its octant
// and on what the previous blocks left in the caches), so processor[measured]
// times whole cycles. A kernel without one has cycles of 1 call.
using KernelCycle = std::function<int(const std::map<std::string, double>& params)>;
void register_kernel_cycle(const std::string& name, KernelCycle cycle);
KernelCycle find_kernel_cycle(const std::string& name);  // empty if none

// Kernels that time themselves (a PSL `kernel { }` runs the model's program
// for one task and reads the times it prints): one call returns the times
// of the task's instances in ns, at least one. processor[measured] takes
// them as its samples. Throws (any std::exception) when the run fails.
using TimedKernel = std::function<std::vector<double>(const std::map<std::string, double>& params)>;
void register_timed_kernel(const std::string& name, TimedKernel kernel);
TimedKernel find_timed_kernel(const std::string& name);

// Grind time for reports: model.task_time_ns(task) / task.params["work"], in
// ns per unit of work (for processor[wg] this is Wg; for processor[measured]
// the Wg fitted to the measured shape). Throws ProcessorError if work is
// missing or not positive.
double fitted_wg_ns(ProcessorModel& model, const TaskRequest& task);

}  // namespace poems::processor
