// processor[measured]: time the registered native kernel for the task's shape.
#include "poems/processor/measured.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <thread>
#include <vector>

#include "common.h"
#include "poems/base/registry.h"

namespace poems::processor {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kMinSamples = 5;
constexpr int kMaxSamples = 1000;
constexpr double kMinTotalNs = 100e6;  // adaptive mode: at least 100 ms of timed calls
constexpr double kMinSampleNs = 50e3;  // short kernels run in batches of at least ~50 µs
constexpr int kMaxCycle = 100000;      // calls per cycle a kernel may ask for

double median(std::vector<double> v) {
  const auto mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  double m = v[mid];
  if (v.size() % 2 == 0) m = (m + *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid))) / 2;
  return m;
}

int count_attribute(const ProcessorSpec& spec, const char* name, int fallback, int min) {
  auto it = spec.numbers.find(name);
  if (it == spec.numbers.end()) return fallback;
  const double v = it->second;
  if (!std::isfinite(v) || v != std::floor(v) || v < min || v > 1e6)
    throw ProcessorError(detail::who(spec) + ": attribute '" + name + "' is " + detail::format_number(v) +
                         "; it must be a whole number from " + std::to_string(min) + " to 1000000");
  return static_cast<int>(v);
}

}  // namespace

MeasuredProcessor::MeasuredProcessor(const ProcessorSpec& spec) : spec_(spec) {
  if (auto it = spec.strings.find("kernel"); it != spec.strings.end()) {
    kernel_name_ = it->second;
    if (kernel_name_.empty()) throw ProcessorError(detail::who(spec) + ": attribute 'kernel' is empty");
    resolve({});  // an unknown name fails now, not at the first task
  }
  repetitions_ = count_attribute(spec, "repetitions", 0, 1);
  warmup_ = count_attribute(spec, "warmup", 1, 0);
}

MeasuredProcessor::Resolved MeasuredProcessor::resolve(const TaskRequest& task) const {
  Resolved k;
  k.name = kernel_name_.empty() ? task.component : kernel_name_;
  if (!k.name.empty()) {
    k.native = find_kernel(k.name);
    if (!k.native) k.timed = find_timed_kernel(k.name);
    if (k.native || k.timed) return k;
  }
  const std::vector<std::string> known = kernels();
  if (kernel_name_.empty())
    throw ProcessorError(detail::who(spec_) + ": missing attribute 'kernel' (the native kernel to time), e.g. " +
                         "`kernel = \"" + (known.empty() ? std::string("NAME") : known.front()) +
                         "\";` in the profile, or a `kernel { }` in component " +
                         (task.component.empty() ? std::string("the task's component") : "'" + task.component + "'") +
                         " (registered kernels: " + base::known_names(known, "none registered") + ")");
  throw ProcessorError(detail::who(spec_) + ": unknown kernel '" + kernel_name_ +
                       "' (registered kernels: " + base::known_names(known, "none registered") + ")");
}

int MeasuredProcessor::concurrency(const TaskRequest& task) {
  auto it = task.params.find("procs");
  if (it == task.params.end() || !(it->second > 1)) return 1;
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  return static_cast<int>(std::min<double>(it->second, cores));
}

MeasuredProcessor::Measurement MeasuredProcessor::measure(const TaskRequest& task) {
  // With n > 1, n - 1 other threads call the kernel (each on its own
  // per-thread state) for as long as the timing lasts: the node's other cores
  // compute too, sharing caches and memory bandwidth, as the processes of a
  // parallel run do. They start before the timing and stop after it.
  const Resolved kernel = resolve(task);
  const int n = concurrency(task);
  if (kernel.timed) return measure_together(task, kernel, n);
  std::atomic<bool> stop{false};
  std::atomic<int> warm{0};
  std::mutex failure_mutex;
  std::string failure;
  std::vector<std::thread> helpers;
  auto stop_helpers = [&] {
    stop = true;
    for (std::thread& t : helpers) t.join();
    helpers.clear();
  };
  for (int k = 1; k < n; ++k)
    helpers.emplace_back([&] {
      bool counted = false;
      try {
        while (!stop) {
          if (kernel.native)
            kernel.native(task.params);
          else
            kernel.timed(task.params);
          if (!counted) warm++, counted = true;
        }
      } catch (const std::exception& e) {
        std::lock_guard lock(failure_mutex);
        failure = e.what();
      } catch (...) {
        std::lock_guard lock(failure_mutex);
        failure = "it threw an unknown exception";
      }
      if (!counted) warm++;
    });
  struct Joiner {  // the helpers stop however the timing ends
    std::function<void()> stop;
    ~Joiner() { stop(); }
  } joiner{stop_helpers};
  while (warm < n - 1) std::this_thread::yield();
  Measurement m = measure_alone(task, kernel);
  stop_helpers();
  if (!failure.empty())
    throw ProcessorError(detail::who(spec_) + ": kernel '" + kernel.name + "' failed for " + detail::task_name(task) +
                         ": " + failure);
  m.concurrent = n;
  return m;
}

MeasuredProcessor::Measurement MeasuredProcessor::measure_alone(const TaskRequest& task, const Resolved& kernel) {
  auto run = [&](int calls) {
    const auto start = Clock::now();
    for (int c = 0; c < calls; ++c) kernel.native(task.params);
    return std::chrono::duration<double, std::nano>(Clock::now() - start).count();
  };
  std::vector<double> per_call;
  int batch = 1, cycle = 1;
  try {
    if (const KernelCycle cycle_of = find_kernel_cycle(kernel.name))
      cycle = std::clamp(cycle_of(task.params), 1, kMaxCycle);
    if (warmup_ > 0) run(warmup_);
    if (repetitions_ > 0) {
      for (int s = 0; s < repetitions_; ++s) per_call.push_back(run(1));
    } else {
      const double one = std::max(run(1), 1.0);  // also calibrates the batch size
      batch = one >= kMinSampleNs ? 1 : static_cast<int>(std::min(std::ceil(kMinSampleNs / one), 1e6));
      // Whole cycles: a batch of several is a multiple of the cycle; one call
      // a sample takes samples up to a multiple of it, at least one cycle.
      if (batch > 1) batch = (batch + cycle - 1) / cycle * cycle;
      const std::size_t whole = batch == 1 ? static_cast<std::size_t>(cycle) : 1;
      double total = 0;
      while (per_call.size() < std::max<std::size_t>(kMinSamples, whole) ||
             (total < kMinTotalNs && per_call.size() < static_cast<std::size_t>(kMaxSamples)) ||
             per_call.size() % whole != 0) {
        const double t = run(batch);
        total += t;
        per_call.push_back(t / batch);
      }
    }
  } catch (const ProcessorError&) {
    throw;
  } catch (const std::exception& e) {
    throw ProcessorError(detail::who(spec_) + ": kernel '" + kernel.name + "' failed for " + detail::task_name(task) +
                         ": " + e.what());
  }
  Measurement m = from_samples(std::move(per_call), batch);
  m.cycle = cycle;
  return m;
}

// A kernel that times itself runs as n copies started together (the
// processes of a node, sharing its caches and memory bandwidth for the
// whole run); every copy's samples count, as every process's time does.
MeasuredProcessor::Measurement MeasuredProcessor::measure_together(const TaskRequest& task, const Resolved& kernel,
                                                                   int n) {
  std::vector<std::string> failures(static_cast<std::size_t>(n));
  std::vector<std::vector<double>> samples(static_cast<std::size_t>(n));
  std::vector<std::thread> copies;
  for (int k = 0; k < n; ++k)
    copies.emplace_back([&, k] {
      try {
        for (int s = 0; s < std::max(1, repetitions_); ++s)
          for (double t : kernel.timed(task.params)) samples[static_cast<std::size_t>(k)].push_back(t);
      } catch (const std::exception& e) {
        failures[static_cast<std::size_t>(k)] = e.what();
      } catch (...) {  // nothing may leave a thread: std::terminate would end poems
        failures[static_cast<std::size_t>(k)] = "it threw an unknown exception";
      }
    });
  for (std::thread& t : copies) t.join();
  std::vector<double> all;
  for (int k = 0; k < n; ++k) {
    const std::string& failure = failures[static_cast<std::size_t>(k)];
    std::string problem = failure;
    if (problem.empty() && samples[static_cast<std::size_t>(k)].empty()) problem = "it reported no time";
    for (double t : samples[static_cast<std::size_t>(k)])
      if (problem.empty() && (!(t >= 0) || !std::isfinite(t)))
        problem = "it reported a time of " + std::to_string(t) + " ns";
    if (!problem.empty())
      throw ProcessorError(detail::who(spec_) + ": kernel '" + kernel.name + "' failed for " + detail::task_name(task) +
                           ": " + problem);
    all.insert(all.end(), samples[static_cast<std::size_t>(k)].begin(), samples[static_cast<std::size_t>(k)].end());
  }
  // Each sample is already a mean over a batch (the program's own); their
  // median is the task's time, which a disturbed run among several cannot move.
  Measurement m = from_samples(std::move(all), 1);
  m.mean_ns = m.median_ns;
  m.concurrent = n;
  return m;
}

MeasuredProcessor::Measurement MeasuredProcessor::from_samples(std::vector<double> per_call, int batch) {
  Measurement m;
  m.batch = batch;
  m.samples = static_cast<int>(per_call.size());
  m.min_ns = *std::min_element(per_call.begin(), per_call.end());
  m.max_ns = *std::max_element(per_call.begin(), per_call.end());
  m.mean_ns = typical_mean(per_call);
  m.median_ns = median(std::move(per_call));
  return m;
}

double MeasuredProcessor::typical_mean(const std::vector<double>& per_call_ns) {
  if (per_call_ns.empty()) return 0;
  const double limit = 2 * median(per_call_ns);
  double sum = 0;
  int kept = 0;
  for (double t : per_call_ns)
    if (t <= limit) sum += t, ++kept;
  return sum / kept;  // the median itself is always kept
}

MeasuredProcessor::Measurement MeasuredProcessor::measurement(const TaskRequest& task) {
  std::lock_guard lock(mutex_);  // one measurement at a time: concurrent timing would disturb it
  auto key = std::make_pair(resolve(task).name, task.params);
  auto it = cache_.find(key);
  if (it != cache_.end()) return it->second;
  Measurement m = measure(task);
  cache_.emplace(std::move(key), m);
  return m;
}

double MeasuredProcessor::task_time_ns(const TaskRequest& task) { return measurement(task).mean_ns; }

double MeasuredProcessor::fitted_wg_ns(const TaskRequest& task) { return processor::fitted_wg_ns(*this, task); }

namespace detail {
std::unique_ptr<ProcessorModel> make_measured(const ProcessorSpec& spec) {
  return std::make_unique<MeasuredProcessor>(spec);
}
}  // namespace detail

}  // namespace poems::processor
