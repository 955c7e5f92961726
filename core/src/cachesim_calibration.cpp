// `poems calibrate --cachesim`: the three rates of processor[cachesim] on
// this host, fitted so that cachegrind's counts with this host's caches
// reproduce processor[measured]'s times of the same tasks.
#include "poems/core/cachesim_calibration.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>

#include "poems/core/calibration.h"
#include "poems/core/compute_rates.h"
#include "poems/core/error.h"
#include "poems/core/session.h"
#include "poems/core/study.h"
#include "poems/measure/mpirun.h"
#include "poems/processor/measured.h"

namespace poems::core {
namespace {

constexpr int kMeasuredPasses = 3;

std::string read_line(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  return line;
}

double sysfs_bytes(const std::string& text) {  // "48K", "32768K", "1M"
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (end && *end == 'K') v *= 1024;
  if (end && *end == 'M') v *= 1024 * 1024;
  if (end && *end == 'G') v *= 1024.0 * 1024 * 1024;
  return v;
}

int cpus_in(const std::string& list) {  // "0-1,4"
  int count = 0;
  std::size_t at = 0;
  while (at < list.size()) {
    const std::size_t comma = std::min(list.find(',', at), list.size());
    const std::string part = list.substr(at, comma - at);
    const std::size_t dash = part.find('-');
    count += dash == std::string::npos ? 1 : std::stoi(part.substr(dash + 1)) - std::stoi(part.substr(0, dash)) + 1;
    at = comma + 1;
  }
  return std::max(count, 1);
}

std::string fmt(const char* spec, double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, spec, v);
  return buffer;
}

std::string bytes_text(double bytes) {
  if (std::fmod(bytes, 1024.0 * 1024) == 0) return fmt("%.0f", bytes / (1024.0 * 1024)) + "MiB";
  if (std::fmod(bytes, 1024.0) == 0) return fmt("%.0f", bytes / 1024) + "KiB";
  return fmt("%.0f", bytes) + "B";
}

std::string psl_of(const CachesimCalibration& c, const std::string& source) {
  auto level = [](const std::string& name, const processor::CacheLevel& l) {
    return "    " + name + "_size = " + bytes_text(l.size) + "; " + name + "_assoc = " + fmt("%.0f", l.assoc) + "; " +
           name + "_line = " + fmt("%.0f", l.line) + "B;\n";
  };
  std::string out;
  out += "// processor[cachesim] of this host, written by " + source + ".\n";
  out += "// Caches from /sys/devices/system/cpu/cpu0/cache (LL: the last level, shared by " +
         std::to_string(c.ll_shared_by) + " CPUs);\n";
  out += "// rates: non-negative least squares on the relative error over " + std::to_string(c.points.size()) +
         " tasks of kernel " + c.kernel + " timed by processor[measured].\n";
  out += "component " + c.component + " in hardware[processor] {\n";
  out += "  param ns_per_instruction = " + fmt("%.6g", c.rates.ns_per_instruction) +
         "ns, ns_per_L1_miss = " + fmt("%.6g", c.rates.ns_per_L1_miss) +
         "ns, ns_per_LL_miss = " + fmt("%.6g", c.rates.ns_per_LL_miss) +
         "ns, ns_per_LL_miss_shared = " + fmt("%.6g", c.rates.ns_per_LL_miss_shared) + "ns;\n";
  out += "  accepts {\n";
  out += "    profile { node_type = \"cpu\"; evaluation = processor[cachesim]; kernel = \"" + c.kernel + "\";\n";
  out += level("I1", c.caches.I1) + level("D1", c.caches.D1) + level("LL", c.caches.LL);
  out += "    LL_shared_by = " + std::to_string(c.ll_shared_by) + ";\n";
  out +=
      "    ns_per_instruction = ns_per_instruction; ns_per_L1_miss = ns_per_L1_miss; ns_per_LL_miss = "
      "ns_per_LL_miss;\n    ns_per_LL_miss_shared = ns_per_LL_miss_shared; }\n";
  out += "    transaction execute_code_block(work: real) -> time;\n";
  out += "    protocol call_return;\n  }\n}\n";
  return out;
}

}  // namespace

processor::CacheConfig host_caches(int& ll_shared_by) {
  const std::filesystem::path root = "/sys/devices/system/cpu/cpu0/cache";
  processor::CacheConfig c;
  int ll_level = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(root, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("index", 0) != 0) continue;
    const int level = std::atoi(read_line(entry.path() / "level").c_str());
    const std::string type = read_line(entry.path() / "type");
    processor::CacheLevel l;
    l.size = sysfs_bytes(read_line(entry.path() / "size"));
    l.assoc = std::atof(read_line(entry.path() / "ways_of_associativity").c_str());
    l.line = std::atof(read_line(entry.path() / "coherency_line_size").c_str());
    if (level == 1 && type == "Instruction") c.I1 = l;
    if (level == 1 && type == "Data") c.D1 = l;
    if (type == "Unified" && level > ll_level) {
      ll_level = level, c.LL = l;
      ll_shared_by = cpus_in(read_line(entry.path() / "shared_cpu_list"));
    }
  }
  if (c.I1.size == 0 || c.D1.size == 0 || ll_level == 0)
    throw EvaluationError("this host's caches are not described in " + root.string() +
                          " (L1 instruction, L1 data and a unified last level are needed)");
  for (const auto& [name, level] : {std::pair{"I1", c.I1}, std::pair{"D1", c.D1}, std::pair{"LL", c.LL}}) {
    try {
      processor::check_cache_level("this host's " + std::string(name) + " cache", name, level);
    } catch (const processor::ProcessorError& e) {
      throw EvaluationError(std::string(e.what()) + " (from " + root.string() + ")");
    }
  }
  return c;
}

CachesimCalibration calibrate_cachesim(const CachesimCalibrationRequest& r,
                                       const std::function<void(const std::string&)>& progress) {
  if (r.spec.empty() || r.study.empty())
    throw UsageError("--cachesim", "needs a specification and --study whose compute tasks to calibrate on");
  CachesimCalibration out;
  out.kernel = r.kernel;
  const std::vector<std::map<std::string, double>> tasks = study_compute_tasks(r.spec, r.study, out.kernel);
  if (out.kernel.empty() || !processor::find_kernel(out.kernel))
    throw UsageError("--kernel",
                     "processor[cachesim] needs a registered native kernel; '" + out.kernel + "' is not one");
  out.component = r.name + "_cachesim";
  out.caches = host_caches(out.ll_shared_by);
  processor::ProcessorSpec spec;
  spec.component = r.name + "_cpu";
  spec.evaluator = "processor[measured]";
  spec.strings["kernel"] = out.kernel;
  // Measured in passes over every task, each task's time the median of its
  // passes: on a shared machine a task with helper threads (procs > 1) was
  // seen to take twice as long in one measurement as in the next; a
  // disturbance lasting seconds then lands in one pass of a task, not all.
  std::vector<std::vector<double>> samples(tasks.size());
  try {
    for (int pass = 1; pass <= kMeasuredPasses; ++pass) {
      progress("processor[measured], pass " + std::to_string(pass) + " of " + std::to_string(kMeasuredPasses) +
               " over " + std::to_string(tasks.size()) + " tasks");
      processor::MeasuredProcessor measured(spec);  // a fresh one: its cache would answer again
      for (std::size_t k = 0; k < tasks.size(); ++k) {
        processor::TaskRequest request;
        request.params = tasks[k];
        samples[k].push_back(measured.task_time_ns(request));
      }
    }
  } catch (const processor::ProcessorError& e) {
    throw EvaluationError(e.what());
  }
  std::vector<processor::CacheCounts> counts;
  std::vector<double> times;
  std::vector<int> sharers;
  for (std::size_t k = 0; k < tasks.size(); ++k) {
    progress("cachegrind, task " + std::to_string(k + 1) + " of " + std::to_string(tasks.size()));
    CachesimPoint p;
    p.task = tasks[k];
    std::sort(samples[k].begin(), samples[k].end());
    p.measured_ns = samples[k][samples[k].size() / 2];
    try {
      std::map<std::string, double> params = tasks[k];
      int procs = 1;
      if (auto it = params.find("procs"); it != params.end()) {
        procs = static_cast<int>(std::max(1.0, std::min(it->second, 1024.0)));
        params.erase(it);
      }
      processor::CacheConfig caches = out.caches;
      p.sharers = std::min(procs, out.ll_shared_by);
      caches.LL = processor::shared_level(out.caches.LL, p.sharers);
      p.ll = caches.LL;
      const processor::Simulation s = processor::simulate_kernel(out.kernel, params, caches);
      p.per_call = s.per_call, p.simulation_seconds = s.seconds, p.cached = s.cached;
    } catch (const processor::ProcessorError& e) {
      throw EvaluationError(e.what());
    }
    counts.push_back(p.per_call);
    times.push_back(p.measured_ns);
    sharers.push_back(p.sharers);
    out.points.push_back(p);
  }
  try {
    out.rates = processor::fit_cachesim_rates(counts, times, sharers);
  } catch (const processor::ProcessorError& e) {
    throw EvaluationError(e.what());
  }
  for (std::size_t k = 0; k < out.points.size(); ++k) {
    CachesimPoint& p = out.points[k];
    p.predicted_ns = processor::cachesim_time_ns(p.per_call, out.rates, p.sharers);
    if (out.points.size() < 5) continue;  // four rates need four other tasks
    std::vector<processor::CacheCounts> other_counts = counts;
    std::vector<double> other_times = times;
    std::vector<int> other_sharers = sharers;
    const auto at = static_cast<std::ptrdiff_t>(k);
    other_counts.erase(other_counts.begin() + at);
    other_times.erase(other_times.begin() + at);
    other_sharers.erase(other_sharers.begin() + at);
    p.left_out_ns = processor::cachesim_time_ns(
        p.per_call, processor::fit_cachesim_rates(other_counts, other_times, other_sharers), p.sharers);
  }
  out.psl = psl_of(out, "poems calibrate --cachesim --study " + r.study + " on " + measure::host_name());
  return out;
}

}  // namespace poems::core
