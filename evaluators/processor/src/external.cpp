// processor[external]: run a command, request as JSON on stdin, {"time_ns": x}
// on stdout, with a timeout.
//
// Process handling is plain POSIX (posix_spawn, pipes, poll, pidfd), not
// Boost.Process: Debian's Boost 1.74 Process v1 needs the compiled
// Boost.Filesystem library, has no process-group kill, and its wait_for with
// a timeout is known to misbehave (it can block or leave the child
// unreaped); we need exact control over the process group, SIGPIPE and
// reaping.
//
// How a command runs:
// - `/bin/sh -c COMMAND` via posix_spawn (safe in a multi-threaded process),
//   in a new process group, with SIGPIPE at its default and an empty signal mask;
// - the request is written to its stdin while stdout and stderr are read
//   (poll, non-blocking), so a large request or large output cannot deadlock;
//   SIGPIPE is blocked in the writing thread, so a command that never reads
//   stdin gives EPIPE here, not a dead evaluator;
// - when the shell exits (seen through a pidfd, or a 5 ms poll where pidfds
//   are not available) what it wrote is drained, anything it left running in
//   its process group is killed, and it is reaped;
// - at the deadline the whole process group gets SIGKILL and is reaped: no
//   hang, no zombie.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common.h"

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

int open_pidfd(pid_t pid) {
#ifdef SYS_pidfd_open
  const long fd = ::syscall(SYS_pidfd_open, pid, 0);
  if (fd >= 0) {
    ::fcntl(static_cast<int>(fd), F_SETFD, FD_CLOEXEC);
    return static_cast<int>(fd);
  }
#else
  (void)pid;
#endif
  return -1;
}

// Has the process exited? Leaves it unreaped (a zombie holds its pid, so its
// process group id stays valid for kill(-pid)).
bool has_exited(pid_t pid) {
  siginfo_t info{};
  return ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid;
}

int reap(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

// Throws std::runtime_error only if the process cannot be started.
RunResult run_command(const std::string& command, const std::string& input, double timeout_ns) {
  int in_pipe[2], out_pipe[2], err_pipe[2];
  if (::pipe2(in_pipe, O_CLOEXEC) != 0) throw std::runtime_error(errno_text("pipe"));
  Fd in_read(in_pipe[0]), in_write(in_pipe[1]);
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) throw std::runtime_error(errno_text("pipe"));
  Fd out_read(out_pipe[0]), out_write(out_pipe[1]);
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) throw std::runtime_error(errno_text("pipe"));
  Fd err_read(err_pipe[0]), err_write(err_pipe[1]);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in_read.get(), 0);
  posix_spawn_file_actions_adddup2(&actions, out_write.get(), 1);
  posix_spawn_file_actions_adddup2(&actions, err_write.get(), 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setpgroup(&attr, 0);  // its own process group: a timeout kills all of it
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  std::string sh = "/bin/sh", dash_c = "-c", cmd = command;
  char* argv[] = {sh.data(), dash_c.data(), cmd.data(), nullptr};
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, "/bin/sh", &actions, &attr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) throw std::runtime_error(std::string("cannot start /bin/sh: ") + std::strerror(rc));
  in_read.reset();
  out_write.reset();
  err_write.reset();

  SigpipeBlock no_sigpipe;
  set_nonblocking(in_write.get());
  set_nonblocking(out_read.get());
  set_nonblocking(err_read.get());
  Fd pidfd(open_pidfd(pid));
  RunResult result;
  std::size_t written = 0;
  if (input.empty()) in_write.reset();
  const auto deadline = Clock::now() + std::chrono::nanoseconds(static_cast<long long>(timeout_ns));
  bool exited = false;

  while (!exited) {
    if (pidfd.get() < 0 && has_exited(pid)) break;
    const auto now = Clock::now();
    if (now >= deadline) {
      result.timed_out = true;
      break;
    }
    long long wait_ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count() + 1;
    if (pidfd.get() < 0) wait_ms = std::min(wait_ms, 5LL);
    pollfd fds[4];
    int n = 0, i_in = -1, i_out = -1, i_err = -1, i_pid = -1;
    if (in_write.get() >= 0) fds[i_in = n++] = {in_write.get(), POLLOUT, 0};
    if (out_read.get() >= 0) fds[i_out = n++] = {out_read.get(), POLLIN, 0};
    if (err_read.get() >= 0) fds[i_err = n++] = {err_read.get(), POLLIN, 0};
    if (pidfd.get() >= 0) fds[i_pid = n++] = {pidfd.get(), POLLIN, 0};
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
    if (i_pid >= 0 && fds[i_pid].revents != 0) exited = true;
  }

  if (result.timed_out) {
    ::kill(-pid, SIGKILL);  // the shell is not reaped yet, so -pid is still its group
    result.status = reap(pid);
    return result;
  }
  // The shell has exited: everything it wrote is in the pipes. Drain them
  // without waiting for end of file (a background child may hold them open).
  if (out_read.get() >= 0) read_some(out_read.get(), result.out, kMaxStdout);
  if (err_read.get() >= 0) read_some(err_read.get(), result.err, kMaxStderr);
  ::kill(-pid, SIGKILL);  // whatever it left running in its group
  result.status = reap(pid);
  return result;
}

// The first lines of a command's stderr, for messages.
std::string stderr_excerpt(const std::string& err) {
  if (err.empty()) return "nothing on stderr";
  std::istringstream in(err);
  std::string line, first, last;
  int lines = 0, total = 0;
  while (std::getline(in, line)) {
    ++total;
    if (lines < 6) {
      first += (lines ? "\n  " : "  ") + line;
      ++lines;
    }
    if (!line.empty()) last = line;
  }
  if (first.size() > 1200) first = first.substr(0, 1200) + " ...";
  if (total > lines) first += "\n  ... (" + std::to_string(total - lines) + " more lines; last: " + last + ")";
  return "stderr:\n" + first;
}

// The start of some output, printable, for messages.
std::string quote_start(const std::string& text) {
  std::string out;
  for (char c : text.substr(0, 120)) {
    if (c == '\n')
      out += "\\n";
    else if (c == '\t')
      out += "\\t";
    else if (static_cast<unsigned char>(c) < 0x20)
      out += '?';
    else
      out += c;
  }
  return "'" + out + (text.size() > 120 ? "...'" : "'");
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
    return who(spec_) + ": " + task_name(task) + ": command `" + command_ + "`";
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
                           " ns; set the processor's `timeout`); its process group was killed");
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
    nlohmann::json answer;
    try {
      answer = nlohmann::json::parse(r.out);
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
    return t;
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
