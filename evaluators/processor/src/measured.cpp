// processor[measured]: time the registered native kernel for the task's shape.
#include "poems/processor/measured.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
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
  auto it = spec.strings.find("kernel");
  if (it == spec.strings.end() || it->second.empty()) {
    const std::vector<std::string> known = kernels();
    throw ProcessorError(detail::who(spec) + ": missing attribute 'kernel' (the native kernel to time), e.g. " +
                         "`kernel = \"" + (known.empty() ? std::string("NAME") : known.front()) +
                         "\";` in the profile (registered kernels: " + base::known_names(known, "none registered") +
                         ")");
  }
  kernel_name_ = it->second;
  kernel_ = find_kernel(kernel_name_);
  if (!kernel_)
    throw ProcessorError(detail::who(spec) + ": unknown kernel '" + kernel_name_ +
                         "' (registered kernels: " + base::known_names(kernels(), "none registered") + ")");
  repetitions_ = count_attribute(spec, "repetitions", 0, 1);
  warmup_ = count_attribute(spec, "warmup", 1, 0);
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
  const int n = concurrency(task);
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
          kernel_(task.params);
          if (!counted) warm++, counted = true;
        }
      } catch (const std::exception& e) {
        std::lock_guard lock(failure_mutex);
        failure = e.what();
      }
      if (!counted) warm++;
    });
  struct Joiner {  // the helpers stop however the timing ends
    std::function<void()> stop;
    ~Joiner() { stop(); }
  } joiner{stop_helpers};
  while (warm < n - 1) std::this_thread::yield();
  Measurement m = measure_alone(task);
  stop_helpers();
  if (!failure.empty())
    throw ProcessorError(detail::who(spec_) + ": kernel '" + kernel_name_ + "' failed for " + detail::task_name(task) +
                         ": " + failure);
  m.concurrent = n;
  return m;
}

MeasuredProcessor::Measurement MeasuredProcessor::measure_alone(const TaskRequest& task) {
  auto run = [&](int calls) {
    const auto start = Clock::now();
    for (int c = 0; c < calls; ++c) kernel_(task.params);
    return std::chrono::duration<double, std::nano>(Clock::now() - start).count();
  };
  Measurement m;
  std::vector<double> per_call;
  try {
    if (warmup_ > 0) run(warmup_);
    if (repetitions_ > 0) {
      for (int s = 0; s < repetitions_; ++s) per_call.push_back(run(1));
    } else {
      const double one = std::max(run(1), 1.0);  // also calibrates the batch size
      m.batch = one >= kMinSampleNs ? 1 : static_cast<int>(std::min(std::ceil(kMinSampleNs / one), 1e6));
      double total = 0;
      while (per_call.size() < static_cast<std::size_t>(kMinSamples) ||
             (total < kMinTotalNs && per_call.size() < static_cast<std::size_t>(kMaxSamples))) {
        const double t = run(m.batch);
        total += t;
        per_call.push_back(t / m.batch);
      }
    }
  } catch (const ProcessorError&) {
    throw;
  } catch (const std::exception& e) {
    throw ProcessorError(detail::who(spec_) + ": kernel '" + kernel_name_ + "' failed for " + detail::task_name(task) +
                         ": " + e.what());
  }
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
  auto it = cache_.find(task.params);
  if (it != cache_.end()) return it->second;
  Measurement m = measure(task);
  cache_.emplace(task.params, m);
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
