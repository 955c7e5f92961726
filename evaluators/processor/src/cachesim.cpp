// processor[cachesim]: the task's kernel under cachegrind with the target's
// caches; time = instructions and misses per level times their rates.
#include <algorithm>
#include <cmath>
#include <mutex>

#include "common.h"
#include "poems/processor/cachesim.h"

namespace poems::processor::detail {
namespace {

constexpr double kDefaultTimeoutNs = 600e9;  // a large column under cachegrind takes a minute or two

class CachesimProcessor : public ProcessorModel {
 public:
  explicit CachesimProcessor(const ProcessorSpec& spec) : spec_(spec) {
    auto k = spec.strings.find("kernel");
    if (k == spec.strings.end() || k->second.empty())
      throw ProcessorError(who(spec) + ": missing attribute 'kernel' (the native kernel to simulate), e.g. " +
                           "`kernel = \"" + first_kernel() + "\";` in the profile");
    kernel_ = k->second;
    if (!find_kernel(kernel_))
      throw ProcessorError(who(spec) + ": unknown kernel '" + kernel_ + "' (registered native kernels: " +
                           (native_kernels().empty() ? std::string("none") : join(native_kernels())) + ")");
    caches_.I1 = level("I1", "32KiB", "8");
    caches_.D1 = level("D1", "48KiB", "12");
    caches_.LL = level("LL", "32MiB", "16");
    rates_.ns_per_instruction = rate("ns_per_instruction", "0.2ns");
    rates_.ns_per_L1_miss = rate("ns_per_L1_miss", "4ns");
    rates_.ns_per_LL_miss = rate("ns_per_LL_miss", "60ns");
    if (spec.numbers.count("ns_per_LL_miss_shared"))
      rates_.ns_per_LL_miss_shared = rate("ns_per_LL_miss_shared", "10ns");
    ll_shared_by_ = whole("LL_shared_by", 1, 1, 1024);
    if (auto t = spec.numbers.find("timeout"); t != spec.numbers.end()) {
      if (!std::isfinite(t->second) || t->second <= 0 || t->second > 1e13)
        throw ProcessorError(who(spec) + ": attribute 'timeout' is " + format_number(t->second) +
                             " ns; it must be a time > 0 and at most 10000 s, e.g. `timeout = 600s;`");
      options_.timeout_ns = t->second;
    }
    if (auto v = spec.strings.find("valgrind"); v != spec.strings.end()) options_.valgrind = v->second;
    if (auto r = spec.strings.find("runner"); r != spec.strings.end()) options_.runner = r->second;
  }

  std::string evaluator() const override { return "processor[cachesim]"; }

  double task_time_ns(const TaskRequest& task) override {
    // `procs` is not the kernel's: it says how many processes share the LL.
    std::map<std::string, double> params = task.params;
    int sharers = 1;
    if (auto p = params.find("procs"); p != params.end()) {
      if (std::isfinite(p->second) && p->second > 1) sharers = static_cast<int>(std::min<double>(p->second, 1024));
      params.erase(p);
    }
    sharers = std::min(sharers, ll_shared_by_);
    CacheConfig caches = caches_;
    caches.LL = shared_level(caches_.LL, sharers);
    std::lock_guard lock(mutex_);  // one simulation at a time: each already takes two cores
    auto key = std::make_pair(params, caches.LL);
    auto hit = cache_.find(key);
    if (hit == cache_.end()) {
      Simulation s;
      try {
        s = simulate_kernel(kernel_, params, caches, options_);
      } catch (const ProcessorError& e) {
        throw ProcessorError(who(spec_) + ": " + task_name(task) + ": " + e.what());
      }
      hit = cache_.emplace(key, s.per_call).first;
    }
    return checked_time(spec_, task, cachesim_time_ns(hit->second, rates_, sharers));
  }

 private:
  static std::string join(const std::vector<std::string>& names) {
    std::string out;
    for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
    return out;
  }
  // Only a native kernel runs under cachegrind (kernels() lists the timed ones too).
  static std::vector<std::string> native_kernels() {
    std::vector<std::string> out;
    for (const std::string& k : kernels())
      if (find_kernel(k) && (out.empty() || out.back() != k)) out.push_back(k);
    return out;
  }
  static std::string first_kernel() {
    const std::vector<std::string> native = native_kernels();
    return native.empty() ? std::string("NAME") : native.front();
  }

  CacheLevel level(const std::string& name, const char* size_example, const char* assoc_example) const {
    CacheLevel c;
    auto need = [&](const std::string& attribute, const std::string& example) {
      auto it = spec_.numbers.find(name + "_" + attribute);
      if (it == spec_.numbers.end())
        throw ProcessorError(who(spec_) + ": missing attribute '" + name + "_" + attribute + "' (the " + name +
                             " cache of the target), e.g. `" + name + "_" + attribute + " = " + example + ";`");
      return it->second;
    };
    c.size = need("size", size_example);
    c.assoc = need("assoc", assoc_example);
    c.line = need("line", "64B");
    check_cache_level(who(spec_), name, c);
    return c;
  }

  double rate(const std::string& name, const char* example) const {
    auto it = spec_.numbers.find(name);
    if (it == spec_.numbers.end())
      throw ProcessorError(who(spec_) + ": missing attribute '" + name + "' (calibrated by `poems calibrate " +
                           "--cachesim`), e.g. `" + name + " = " + example + ";`");
    if (!std::isfinite(it->second) || it->second < 0 || it->second > 1e9)
      throw ProcessorError(who(spec_) + ": attribute '" + name + "' is " + format_number(it->second) +
                           " ns; it must be a time from 0 to 1 s, e.g. `" + name + " = " + example + ";`");
    return it->second;
  }

  int whole(const std::string& name, int fallback, int min, int max) const {
    auto it = spec_.numbers.find(name);
    if (it == spec_.numbers.end()) return fallback;
    const double v = it->second;
    if (!std::isfinite(v) || v != std::floor(v) || v < min || v > max)
      throw ProcessorError(who(spec_) + ": attribute '" + name + "' is " + format_number(v) +
                           "; it must be a whole number from " + std::to_string(min) + " to " + std::to_string(max));
    return static_cast<int>(v);
  }

  ProcessorSpec spec_;
  std::string kernel_;
  CacheConfig caches_;
  CachesimRates rates_;
  int ll_shared_by_ = 1;
  SimulationOptions options_;
  std::mutex mutex_;
  std::map<std::pair<std::map<std::string, double>, CacheLevel>, CacheCounts> cache_;
};

}  // namespace

std::unique_ptr<ProcessorModel> make_cachesim(const ProcessorSpec& spec) {
  return std::make_unique<CachesimProcessor>(spec);
}

}  // namespace poems::processor::detail
