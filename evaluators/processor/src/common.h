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

// `text` safe for a terminal and a log: newlines and tabs as \n and \t,
// other control characters (C0, DEL, C1) and bytes that are not UTF-8 as \xNN.
inline std::string printable(std::string_view text) {
  std::string out;
  auto hex = [&](unsigned char c) {
    static constexpr char kDigits[] = "0123456789abcdef";
    out += "\\x";
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  };
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      out += "\\n";
      ++i;
    } else if (c == '\t') {
      out += "\\t";
      ++i;
    } else if (c < 0x20 || c == 0x7f) {
      hex(c);
      ++i;
    } else if (c < 0x80) {
      out += static_cast<char>(c);
      ++i;
    } else {
      const std::size_t len = c >= 0xC2 && c < 0xE0 ? 2 : c >= 0xE0 && c < 0xF0 ? 3 : c >= 0xF0 && c < 0xF5 ? 4 : 0;
      bool ok = len > 0 && i + len <= text.size();
      for (std::size_t k = 1; ok && k < len; ++k) ok = (static_cast<unsigned char>(text[i + k]) & 0xC0) == 0x80;
      if (ok && len == 2 && c == 0xC2 && static_cast<unsigned char>(text[i + 1]) < 0xA0) ok = false;  // C1 control
      if (!ok) {
        hex(c);
        ++i;
      } else {
        out.append(text.substr(i, len));
        i += len;
      }
    }
  }
  return out;
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

}  // namespace poems::processor::detail
