// processor[external]: run a command, request as JSON on stdin, {"time_ns": x}
// on stdout, with a timeout.
//
// How a command runs (poems/base/child_process.h, keeper mode):
// - a keeper process runs `/bin/sh -c COMMAND` in a process group of its
//   own, with SIGPIPE at its default and an empty signal mask;
// - the request is written to its stdin while stdout and stderr are read
//   (poll, non-blocking), so a large request or large output cannot deadlock;
//   SIGPIPE is blocked in the writing thread, so a command that never reads
//   stdin gives EPIPE here, not a dead evaluator;
// - when the shell exits, at the deadline, or if poems dies, the keeper kills
//   the command's group and every process the command started, including
//   those that left the group with setsid, reaps them all and reports the
//   shell's exit status: no hang, no zombie, no survivor;
// - what the command printed is then checked strictly: one JSON document,
//   no NUL byte, nothing after it; hostile output is quoted with its
//   control characters spelled out.
#include <signal.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string_view>

#include "common.h"
#include "poems/base/child_process.h"
#include "poems/base/escaped.h"

namespace poems::processor::detail {
namespace {

constexpr double kDefaultTimeoutNs = 10e9;                // 10 s
constexpr std::size_t kMaxStdout = std::size_t{1} << 20;  // keep at most 1 MiB of stdout
constexpr std::size_t kMaxStderr = std::size_t{64} << 10;

// Runs the command to its end or the deadline; throws std::runtime_error
// only if it cannot be started.
base::ChildResult run_command(const std::string& command, const std::string& input, double timeout_ns) {
  base::ChildOptions o;
  o.argv = {"/bin/sh", "-c", command};
  o.search_path = false;
  o.timeout_seconds = timeout_ns / 1e9;
  o.keeper = true;
  o.own_process_group = true;  // out of the terminal's foreground group: Ctrl-C reaches only poems
  o.reset_signals = true;
  o.input = base::ChildInput::text;
  o.input_text = input;
  o.out = base::ChildStream::capture(kMaxStdout);
  o.err = base::ChildStream::capture(kMaxStderr);
  base::ChildResult r = base::run_child(o);
  if (r.timed_out) return r;
  if (!r.started && r.start_errno != 0)
    throw std::runtime_error(std::string("cannot start /bin/sh: ") + std::strerror(r.start_errno));
  if (r.keeper_lost) throw std::runtime_error("the process that runs the command ended unexpectedly");
  if (!r.started) throw std::runtime_error(r.error);  // "pipe: ...", "fork: ..."
  return r;
}

// The first lines of a command's stderr, for messages, with control
// characters spelled out (a hostile command cannot drive the terminal).
std::string stderr_excerpt(const std::string& err) {
  if (err.empty()) return "nothing on stderr";
  std::istringstream in(err);
  std::string line, first, last;
  int lines = 0, total = 0;
  while (std::getline(in, line)) {
    ++total;
    if (lines < 6) {
      first += (lines ? "\n  " : "  ") + base::escaped(line.substr(0, 400));
      ++lines;
    }
    if (!line.empty()) last = line;
  }
  if (first.size() > 1200) first = first.substr(0, 1200) + " ...";
  if (total > lines)
    first +=
        "\n  ... (" + std::to_string(total - lines) + " more lines; last: " + base::escaped(last.substr(0, 400)) + ")";
  return "stderr:\n" + first;
}

// The start of some output, printable, for messages.
std::string quote_start(const std::string& text) {
  return "'" + base::escaped(text.substr(0, 120)) + (text.size() > 120 ? "...'" : "'");
}

class ExternalProcessor : public ProcessorModel {
 public:
  explicit ExternalProcessor(const ProcessorSpec& spec) : spec_(spec) {
    auto it = spec.strings.find("command");
    if (it == spec.strings.end() || it->second.empty())
      throw ProcessorError(who(spec) + ": missing attribute 'command' (run through /bin/sh -c), e.g. " +
                           "`command = \"python3 model.py\";` in the profile");
    command_ = it->second;
    auto t = spec.numbers.find("timeout");
    if (t != spec.numbers.end()) {
      if (!std::isfinite(t->second) || t->second <= 0 || t->second > 1e13)
        throw ProcessorError(who(spec) + ": attribute 'timeout' is " + format_number(t->second) +
                             " ns; it must be a time > 0 and at most 10000 s, e.g. `timeout = 10s;`");
      timeout_ns_ = t->second;
    }
  }

  std::string evaluator() const override { return "processor[external]"; }

  double task_time_ns(const TaskRequest& task) override {
    const std::string request = request_json(task);
    std::lock_guard lock(mutex_);
    auto hit = cache_.find(request);
    if (hit != cache_.end()) return hit->second;
    const double t = run(task, request);
    cache_.emplace(request, t);
    return t;
  }

 private:
  std::string request_json(const TaskRequest& task) const {
    nlohmann::json j;
    j["component"] = task.component;
    j["transaction"] = task.transaction;
    j["params"] = task.params;
    j["processor"] = {{"component", spec_.component}, {"numbers", spec_.numbers}, {"strings", spec_.strings}};
    return j.dump() + "\n";
  }

  std::string where(const TaskRequest& task) const {
    return who(spec_) + ": " + task_name(task) + ": command `" + base::escaped(command_) + "`";
  }

  double run(const TaskRequest& task, const std::string& request) const {
    base::ChildResult r;
    try {
      r = run_command(command_, request, timeout_ns_);
    } catch (const std::runtime_error& e) {
      throw ProcessorError(where(task) + " could not be run: " + e.what());
    }
    if (r.timed_out)
      throw ProcessorError(where(task) + " timed out after " + format_number(timeout_ns_ / 1e6) +
                           " ms (timeout = " + format_number(timeout_ns_) +
                           " ns; set the processor's `timeout`); it and every process it started were killed");
    if (r.signal != 0)
      throw ProcessorError(where(task) + " was killed by signal " + std::to_string(r.signal) + " (SIG" +
                           (sigabbrev_np(r.signal) ? sigabbrev_np(r.signal) : "?") + "); " + stderr_excerpt(r.err));
    const int code = r.exit_code;
    if (code == 127)
      throw ProcessorError(where(task) + ": command not found (exit code 127); " + stderr_excerpt(r.err));
    if (code == 126)
      throw ProcessorError(where(task) + ": command not executable (exit code 126: permission denied?); " +
                           stderr_excerpt(r.err));
    if (code != 0)
      throw ProcessorError(where(task) + " failed with exit code " + std::to_string(code) + "; " +
                           stderr_excerpt(r.err));
    const auto first = r.out.find_first_not_of(" \t\r\n");
    if (first == std::string::npos)
      throw ProcessorError(where(task) + " printed nothing on stdout; expected JSON like {\"time_ns\": 1234.5}");
    // One JSON document and nothing else: a NUL byte or trailing text means
    // the command did not do what it should, whatever a lenient reader makes of it.
    if (const auto nul = r.out.find('\0'); nul != std::string::npos)
      throw ProcessorError(where(task) + " printed a NUL byte (at byte " + std::to_string(nul) +
                           " of stdout): " + quote_start(r.out.substr(first)) +
                           "; expected one JSON document like {\"time_ns\": 1234.5}");
    nlohmann::json answer;
    try {
      answer = nlohmann::json::parse(r.out);
    } catch (const nlohmann::json::parse_error& e) {
      if (std::string_view(e.what()).find("expected end of input") != std::string_view::npos && e.byte >= 1 &&
          e.byte - 1 < r.out.size())
        throw ProcessorError(where(task) + " printed something after its JSON document: " +
                             quote_start(r.out.substr(e.byte - 1)) + "; expected one JSON document only");
      throw ProcessorError(where(task) + " printed output that is not JSON: " + quote_start(r.out.substr(first)) +
                           "; expected {\"time_ns\": <number>}");
    } catch (const nlohmann::json::exception&) {
      throw ProcessorError(where(task) + " printed output that is not JSON: " + quote_start(r.out.substr(first)) +
                           "; expected {\"time_ns\": <number>}");
    }
    if (!answer.is_object() || !answer.contains("time_ns") || !answer["time_ns"].is_number())
      throw ProcessorError(where(task) + " printed JSON without a numeric \"time_ns\": " + quote_start(answer.dump()) +
                           "; expected {\"time_ns\": <number>}");
    const double t = answer["time_ns"].get<double>();
    if (!std::isfinite(t) || t < 0)
      throw ProcessorError(where(task) + " returned time_ns = " + format_number(t) + "; a time must be >= 0");
    return checked_time(spec_, task, t);
  }

  ProcessorSpec spec_;
  std::string command_;
  double timeout_ns_ = kDefaultTimeoutNs;
  std::mutex mutex_;
  std::map<std::string, double> cache_;
};

}  // namespace

std::unique_ptr<ProcessorModel> make_external(const ProcessorSpec& spec) {
  return std::make_unique<ExternalProcessor>(spec);
}

}  // namespace poems::processor::detail
