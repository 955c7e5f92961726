// processor[external]: run a command, request as JSON on stdin, {"time_ns": x}
// on stdout, with a timeout.
//
// Process handling is plain POSIX (fork, pipes, poll, pidfd, a child
// subreaper), not Boost.Process: Debian's Boost 1.74 Process v1 needs the
// compiled Boost.Filesystem library, cannot kill a process tree, and its
// wait_for with a timeout is known to misbehave; we need exact control over
// every process the command starts, SIGPIPE and reaping.
//
// How a command runs:
// - a keeper process (below) runs `/bin/sh -c COMMAND` in a process group of
//   its own, with SIGPIPE at its default and an empty signal mask;
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
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string_view>

#include "common.h"
#include "poems/base/escaped.h"
#include "poems/base/subreaper.h"

extern char** environ;

namespace poems::processor::detail {
namespace {

using Clock = std::chrono::steady_clock;

constexpr double kDefaultTimeoutNs = 10e9;                // 10 s
constexpr std::size_t kMaxStdout = std::size_t{1} << 20;  // keep at most 1 MiB of stdout
constexpr std::size_t kMaxStderr = std::size_t{64} << 10;

// A file descriptor closed on scope exit.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  int get() const { return fd_; }
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

std::string errno_text(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

// SIGPIPE blocked in this thread while it lives; a SIGPIPE raised meanwhile by
// writing to a closed pipe is consumed before the old mask comes back.
class SigpipeBlock {
 public:
  SigpipeBlock() {
    sigemptyset(&set_);
    sigaddset(&set_, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &set_, &old_);
  }
  ~SigpipeBlock() {
    if (!was_pending_) {
      sigset_t pending;
      sigpending(&pending);
      if (sigismember(&pending, SIGPIPE) == 1) {
        timespec zero{0, 0};
        sigtimedwait(&set_, nullptr, &zero);
      }
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  SigpipeBlock(const SigpipeBlock&) = delete;
  SigpipeBlock& operator=(const SigpipeBlock&) = delete;

 private:
  sigset_t set_{}, old_{};
  bool was_pending_ = false;
};

struct RunResult {
  bool timed_out = false;
  int status = 0;  // waitpid status
  std::string out, err;
};

void set_nonblocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK); }

// Reads what is there; false at end of file (or an error).
bool read_some(int fd, std::string& into, std::size_t cap) {
  char buffer[16384];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n > 0) {
      if (into.size() < cap) into.append(buffer, std::min(static_cast<std::size_t>(n), cap - into.size()));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    return false;
  }
}

int reap(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

// ---- the keeper: a forked process between us and the command ----------
//
// A process group is not enough to end a command: anything it starts with
// setsid (or setpgid) leaves the group and would outlive a kill(-pgid). So
// the command runs under a keeper, a forked child that makes itself a
// "child subreaper" (prctl): every descendant the command orphans becomes
// the keeper's child. When the command exits, when we ask (timeout), or when
// we die (its control pipe closes), the keeper kills the command's group and
// then every child it has, level by level, until it has none left: nothing
// the command started survives. It then reports the command's wait status
// on a pipe and exits.
//
// The keeper is forked from a possibly multi-threaded process, so until it
// exits it may only make async-signal-safe calls: raw system calls, no
// allocation, no locks.

struct KeeperMessage {
  int kind;    // 0: the command exited with `status`; 1: it could not start (errno in `status`); 2: killed on request
  int status;  // wait status or errno
};

// Kills the command's group and every descendant, then reaps them all.
void kill_everything(pid_t command_group) {
  ::kill(-command_group, SIGKILL);
  base::FoundProcesses killed;
  base::kill_all_descendants(killed);
}

[[noreturn]] void run_keeper(char* const argv[], int in_fd, int out_fd, int err_fd, int control_fd, int report_fd,
                             const int* close_fds, int close_count) {
  sigset_t all;
  sigfillset(&all);
  ::sigprocmask(SIG_BLOCK, &all, nullptr);  // the keeper ends by its own decision, never by a stray signal
  ::setpgid(0, 0);                          // out of the terminal's foreground group: Ctrl-C reaches only poems
  ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  const pid_t command = ::fork();
  if (command == 0) {
    ::setpgid(0, 0);
    ::dup2(in_fd, 0);
    ::dup2(out_fd, 1);
    ::dup2(err_fd, 2);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    ::sigaction(SIGPIPE, &dfl, nullptr);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execve("/bin/sh", argv, environ);
    ::_exit(127);
  }
  for (int i = 0; i < close_count; ++i) ::close(close_fds[i]);  // the pipes' other ends: EOF works
  KeeperMessage report{0, 0};
  if (command < 0) {
    report = {1, errno};
  } else {
    ::setpgid(command, command);  // also here: no race with the kill below
    const int exited_fd = base::exit_descriptor(command);
    for (;;) {
      int status = 0;
      const pid_t r = ::waitpid(command, &status, WNOHANG);
      if (r == command) {
        report = {0, status};
        break;
      }
      // The control pipe: a byte (timeout) or end of file (poems is gone) means stop now.
      pollfd fds[2] = {{control_fd, POLLIN, 0}, {exited_fd, POLLIN, 0}};
      if (::poll(fds, exited_fd >= 0 ? 2 : 1, exited_fd >= 0 ? -1 : 2) > 0 && fds[0].revents != 0) {
        report = {2, 0};
        break;
      }
    }
    kill_everything(command);
  }
  ssize_t ignored = ::write(report_fd, &report, sizeof report);
  (void)ignored;
  ::_exit(0);
}

// Throws std::runtime_error only if the process cannot be started.
RunResult run_command(const std::string& command, const std::string& input, double timeout_ns) {
  int in_pipe[2], out_pipe[2], err_pipe[2], control_pipe[2], report_pipe[2];
  if (::pipe2(in_pipe, O_CLOEXEC) != 0) throw std::runtime_error(errno_text("pipe"));
  Fd in_read(in_pipe[0]), in_write(in_pipe[1]);
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) throw std::runtime_error(errno_text("pipe"));
  Fd out_read(out_pipe[0]), out_write(out_pipe[1]);
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) throw std::runtime_error(errno_text("pipe"));
  Fd err_read(err_pipe[0]), err_write(err_pipe[1]);
  if (::pipe2(control_pipe, O_CLOEXEC) != 0) throw std::runtime_error(errno_text("pipe"));
  Fd control_read(control_pipe[0]), control_write(control_pipe[1]);
  if (::pipe2(report_pipe, O_CLOEXEC) != 0) throw std::runtime_error(errno_text("pipe"));
  Fd report_read(report_pipe[0]), report_write(report_pipe[1]);

  // Everything the keeper needs is prepared here: after fork it may not allocate.
  std::string sh = "/bin/sh", dash_c = "-c", cmd = command;
  char* argv[] = {sh.data(), dash_c.data(), cmd.data(), nullptr};
  const int close_in_keeper[] = {in_read.get(),  in_write.get(),  out_read.get(),      out_write.get(),
                                 err_read.get(), err_write.get(), control_write.get(), report_read.get()};
  const pid_t keeper = ::fork();
  if (keeper < 0) throw std::runtime_error(errno_text("fork"));
  if (keeper == 0)
    run_keeper(argv, in_read.get(), out_write.get(), err_write.get(), control_read.get(), report_write.get(),
               close_in_keeper, static_cast<int>(std::size(close_in_keeper)));
  in_read.reset();
  out_write.reset();
  err_write.reset();
  control_read.reset();
  report_write.reset();

  SigpipeBlock no_sigpipe;
  set_nonblocking(in_write.get());
  set_nonblocking(out_read.get());
  set_nonblocking(err_read.get());
  RunResult result;
  std::size_t written = 0;
  if (input.empty()) in_write.reset();
  const auto deadline = Clock::now() + std::chrono::nanoseconds(static_cast<long long>(timeout_ns));
  KeeperMessage report{-1, 0};
  bool reported = false;

  // Until the keeper reports (the command and all it started are gone) or the deadline.
  while (!reported) {
    const auto now = Clock::now();
    if (now >= deadline) {
      result.timed_out = true;
      break;
    }
    const long long wait_ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count() + 1;
    pollfd fds[4];
    int n = 0, i_in = -1, i_out = -1, i_err = -1, i_report = -1;
    if (in_write.get() >= 0) fds[i_in = n++] = {in_write.get(), POLLOUT, 0};
    if (out_read.get() >= 0) fds[i_out = n++] = {out_read.get(), POLLIN, 0};
    if (err_read.get() >= 0) fds[i_err = n++] = {err_read.get(), POLLIN, 0};
    fds[i_report = n++] = {report_read.get(), POLLIN, 0};
    const int ready = ::poll(fds, static_cast<nfds_t>(n), static_cast<int>(std::min(wait_ms, 1000LL)));
    if (ready < 0) {
      if (errno == EINTR) continue;
      result.timed_out = true;  // cannot wait any more: treat as a timeout (kill and reap below)
      break;
    }
    if (i_in >= 0 && fds[i_in].revents != 0) {
      const ssize_t w = ::write(in_write.get(), input.data() + written, input.size() - written);
      if (w > 0) written += static_cast<std::size_t>(w);
      if ((w < 0 && errno != EAGAIN && errno != EINTR) || written == input.size()) in_write.reset();  // EPIPE: not read
    }
    if (i_out >= 0 && fds[i_out].revents != 0 && !read_some(out_read.get(), result.out, kMaxStdout)) out_read.reset();
    if (i_err >= 0 && fds[i_err].revents != 0 && !read_some(err_read.get(), result.err, kMaxStderr)) err_read.reset();
    if (fds[i_report].revents != 0) {
      const ssize_t got = ::read(report_read.get(), &report, sizeof report);
      reported = true;
      if (got != static_cast<ssize_t>(sizeof report)) report = {-1, 0};  // the keeper died: nothing known
    }
  }
  if (result.timed_out) {
    const char stop = 'k';
    ssize_t ignored = ::write(control_write.get(), &stop, 1);  // the keeper kills everything and exits
    (void)ignored;
  }
  control_write.reset();  // (also what tells the keeper to stop if we never wrote)
  reap(keeper);
  // Every writer is dead now: read what is left, to end of file (bounded, in
  // case the command handed its pipe to a process outside its tree).
  const auto drain_until = Clock::now() + std::chrono::milliseconds(500);
  while ((out_read.get() >= 0 || err_read.get() >= 0) && Clock::now() < drain_until) {
    pollfd fds[2];
    int n = 0;
    if (out_read.get() >= 0) fds[n++] = {out_read.get(), POLLIN, 0};
    if (err_read.get() >= 0) fds[n++] = {err_read.get(), POLLIN, 0};
    if (::poll(fds, static_cast<nfds_t>(n), 50) <= 0) continue;
    if (out_read.get() >= 0 && !read_some(out_read.get(), result.out, kMaxStdout)) out_read.reset();
    if (err_read.get() >= 0 && !read_some(err_read.get(), result.err, kMaxStderr)) err_read.reset();
  }
  if (result.timed_out) return result;
  if (report.kind == 1) throw std::runtime_error(std::string("cannot start /bin/sh: ") + std::strerror(report.status));
  if (report.kind != 0) throw std::runtime_error("the process that runs the command ended unexpectedly");
  result.status = report.status;
  return result;
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
    RunResult r;
    try {
      r = run_command(command_, request, timeout_ns_);
    } catch (const std::runtime_error& e) {
      throw ProcessorError(where(task) + " could not be run: " + e.what());
    }
    if (r.timed_out)
      throw ProcessorError(where(task) + " timed out after " + format_number(timeout_ns_ / 1e6) +
                           " ms (timeout = " + format_number(timeout_ns_) +
                           " ns; set the processor's `timeout`); it and every process it started were killed");
    if (WIFSIGNALED(r.status))
      throw ProcessorError(where(task) + " was killed by signal " + std::to_string(WTERMSIG(r.status)) + " (SIG" +
                           (sigabbrev_np(WTERMSIG(r.status)) ? sigabbrev_np(WTERMSIG(r.status)) : "?") + "); " +
                           stderr_excerpt(r.err));
    const int code = WIFEXITED(r.status) ? WEXITSTATUS(r.status) : -1;
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
