// Helpers shared by the built-in processor models (not installed).
#pragma once

#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include "poems/processor/processor_model.h"

namespace poems::processor::detail {

// "processor component 'Opteron' (processor[wg])": the start of every message.
inline std::string who(const ProcessorSpec& spec) {
  return "processor component '" + spec.component + "' (" + spec.evaluator + ")";
}

// "task KBlock.execute_code_block"
inline std::string task_name(const TaskRequest& task) { return "task " + task.component + "." + task.transaction; }

// A number for messages: integers without a fraction, others as %g.
inline std::string format_number(double v) {
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e15) return std::to_string(static_cast<long long>(v));
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.9g", v);
  return buffer;
}

// params["work"], checked: present, finite, non-negative.
inline double work_of(const ProcessorSpec& spec, const TaskRequest& task) {
  auto it = task.params.find("work");
  if (it == task.params.end())
    throw ProcessorError(who(spec) + ": " + task_name(task) + " has no parameter 'work' (the processor's " +
                         "execute_code_block(work: real) needs it)");
  if (!std::isfinite(it->second) || it->second < 0)
    throw ProcessorError(who(spec) + ": " + task_name(task) + " has work = " + format_number(it->second) +
                         "; work must be a finite number >= 0");
  return it->second;
}

// The longest time one task may take: 2^60 ps (about 13.3 days), the bound
// every evaluator's picosecond clock is checked against (taskgraph/limits.h).
inline constexpr double kMaxTaskTimeNs = 1152921504606846.976;

// `time_ns` of a task, refused when it is beyond what an evaluator can represent.
inline double checked_time(const ProcessorSpec& spec, const TaskRequest& task, double time_ns) {
  if (!(time_ns <= kMaxTaskTimeNs))
    throw ProcessorError(who(spec) + ": " + task_name(task) + " takes " + format_number(time_ns) +
                         " ns; one task may take at most 2^60 ps (about 13.3 days)");
  return time_ns;
}

// The built-ins, registered lazily by the registry (registry.cpp).
std::unique_ptr<ProcessorModel> make_wg(const ProcessorSpec& spec);
std::unique_ptr<ProcessorModel> make_measured(const ProcessorSpec& spec);
std::unique_ptr<ProcessorModel> make_external(const ProcessorSpec& spec);
std::unique_ptr<ProcessorModel> make_hierarchy(const ProcessorSpec& spec);
std::unique_ptr<ProcessorModel> make_cachesim(const ProcessorSpec& spec);

}  // namespace poems::processor::detail
