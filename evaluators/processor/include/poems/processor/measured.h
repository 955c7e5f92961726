// processor[measured]: runs the kernel that times a task (the one named by the
// component's `kernel` attribute, else the one registered under the task's
// component: a PSL `kernel { }`) for the task's params and returns the time
// of one instance. A native kernel is timed here with std::chrono::steady_clock
// (the mean, bursts of other work left out: typical_mean); a timed kernel
// reports its own times (their median). Other copies run on the other cores
// when the task says how many processes run: see concurrency().
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "poems/processor/processor_model.h"

namespace poems::processor {

class MeasuredProcessor : public ProcessorModel {
 public:
  // How one shape (one distinct params map) was measured.
  struct Measurement {
    double mean_ns = 0;  // per instance: the value task_time_ns returns (typical_mean)
    double median_ns = 0, min_ns = 0, max_ns = 0;
    int samples = 0;     // timed samples
    int batch = 1;       // kernel calls per sample (short kernels run in batches)
    int concurrent = 1;  // copies of the kernel running during the timing (concurrency)
    int cycle = 1;       // calls per cycle of the kernel's state: adaptive samples cover whole cycles
  };

  // The mean of per-call times without the samples above twice their median
  // (a descheduling or a burst of other work on a shared machine). Not the
  // median: a kernel whose calls differ by design (a wavefront column's
  // blocks take 6 or 7 ns per cell-angle depending on the octant) costs its
  // mean per call over a run, and the median picks the common case (7 % low
  // for a 25 x 50 column). 0 for no samples.
  static double typical_mean(const std::vector<double>& per_call_ns);

  // How many copies of the kernel run while a task is timed: min(procs,
  // cores) for a task with a parameter "procs" (the processes of the run:
  // on a node they share caches and memory bandwidth), else 1.
  static int concurrency(const TaskRequest& task);

  // A timed kernel's samples are means over its own batches: the task's time
  // is their median (over every copy and repetition).
  // strings["kernel"] names a registered kernel (native or timed); without
  // it, each task is timed by the kernel registered under its component's
  // name (a PSL `kernel { }`). Optional numbers:
  // "repetitions" (exact number of timed samples, one call each), "warmup"
  // (untimed calls first, default 1). Throws ProcessorError.
  explicit MeasuredProcessor(const ProcessorSpec& spec);

  std::string evaluator() const override { return "processor[measured]"; }

  // Measures each distinct (kernel, params map) once per object (all params go
  // to the kernel, "work" included) and answers later requests from the cache.
  double task_time_ns(const TaskRequest& task) override;

  // The full measurement behind task_time_ns (measured now if not cached).
  Measurement measurement(const TaskRequest& task);

  // Measured time / work: the Wg this shape implies (ns per unit of work).
  double fitted_wg_ns(const TaskRequest& task);

  // The kernel attribute ("" = each task's component's kernel).
  const std::string& kernel_name() const { return kernel_name_; }

 private:
  // The kernel that times a task: native (timed here) or timed by itself.
  struct Resolved {
    std::string name;
    Kernel native;
    TimedKernel timed;
  };
  Resolved resolve(const TaskRequest& task) const;
  Measurement measure(const TaskRequest& task);
  Measurement measure_alone(const TaskRequest& task, const Resolved& kernel);
  Measurement measure_together(const TaskRequest& task, const Resolved& kernel, int n);
  Measurement from_samples(std::vector<double> per_call, int batch);

  ProcessorSpec spec_;
  std::string kernel_name_;
  int repetitions_ = 0;  // 0: adaptive (>= 5 samples and >= 100 ms of timed calls)
  int warmup_ = 1;
  std::mutex mutex_;
  // Keyed by the kernel too: two components' kernels may see the same params.
  std::map<std::pair<std::string, std::map<std::string, double>>, Measurement> cache_;
};

}  // namespace poems::processor
