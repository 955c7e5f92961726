// Running a child process (see child_process.h). Plain POSIX: posix_spawn,
// or fork for the keeper; pipes read with poll; pidfd to learn of an exit.
//
// Not Boost.Process: Debian's Boost 1.74 Process v1 needs the compiled
// Boost.Filesystem library, cannot kill a process tree, and its wait_for
// with a timeout is known to misbehave; we need exact control over every
// process the child starts, SIGPIPE and reaping.
#include "poems/base/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string_view>

extern char** environ;

namespace poems::base {

namespace {

using Clock = std::chrono::steady_clock;

// After the child has ended, what is left in its pipes is read to end of
// file, until 50 ms pass without data or 500 ms in all: a process outside
// the run may hold a pipe open.
constexpr auto kDrainQuiet = std::chrono::milliseconds(50);
constexpr auto kDrainLimit = std::chrono::milliseconds(500);
// Without pidfd (old kernels) a plain child's exit is looked for this often.
constexpr int kExitPollMs = 20;

std::string errno_text(const std::string& what, int error) { return what + ": " + std::strerror(error); }

// A file descriptor closed on scope exit.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  int get() const { return fd_; }
  bool open() const { return fd_ >= 0; }
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

// A pipe, both ends closed on exec (the child's end is dup2'ed onto 0, 1 or 2).
bool make_pipe(Fd& read_end, Fd& write_end) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return false;
  read_end.reset(fds[0]);
  write_end.reset(fds[1]);
  return true;
}

void set_nonblocking(const Fd& fd) {
  if (fd.open()) ::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) | O_NONBLOCK);
}

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

// Reads what is there, keeping at most `limit` bytes in `into`; false at end
// of file (or an error).
bool read_some(int fd, std::string& into, std::size_t limit) {
  char buffer[16384];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n > 0) {
      if (into.size() < limit) into.append(buffer, std::min(static_cast<std::size_t>(n), limit - into.size()));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    return false;
  }
}

// argv[0] looked up in PATH as execvp does, before the keeper's fork (no
// allocation after it); "" if not found.
std::string find_in_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  const std::string dirs = path ? path : "/bin:/usr/bin";
  for (std::size_t begin = 0;;) {
    const std::size_t end = std::min(dirs.find(':', begin), dirs.size());
    const std::string dir = end > begin ? dirs.substr(begin, end - begin) : ".";
    const std::string candidate = dir + "/" + name;
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(candidate.c_str(), X_OK) == 0)
      return candidate;
    if (end == dirs.size()) return "";
    begin = end + 1;
  }
}

// What becomes of one of the child's descriptors 0, 1, 2.
struct Redirection {
  enum Kind { keep, from_fd, open_path, same_as_stderr } kind = keep;
  int fd = -1;                 // from_fd
  const char* path = nullptr;  // open_path
  int flags = 0;               // open_path
};

// Everything the child's side of the fork needs, prepared before it.
struct Launch {
  const char* path = nullptr;  // the program (resolved already in keeper mode)
  char* const* argv = nullptr;
  char* const* envp = nullptr;
  const char* directory = nullptr;  // to change to, or none
  Redirection stdio[3];             // applied in the order stdin, stderr, stdout: stdout may follow stderr
  bool own_group = false;
  bool reset_signals = true;
  sigset_t mask{};                     // the caller's, when !reset_signals
  const int* keeper_closes = nullptr;  // the runner's descriptors the keeper closes after its fork
  int keeper_close_count = 0;
};

constexpr int kStdioOrder[3] = {STDIN_FILENO, STDERR_FILENO, STDOUT_FILENO};

// ---- the keeper: a forked process between us and the child -------------
//
// The keeper is a child subreaper: every process below it that loses its
// parent becomes its child. When the child exits, when we ask (a byte on the
// control pipe: the deadline), or when we die (end of file on it), the keeper
// kills the child's group (if it has its own) and every process left below
// it, reaps them all, and reports on the report pipe. Until it exits it
// makes only async-signal-safe calls: it was forked from a possibly
// multi-threaded process.

struct KeeperReport {
  int kind = -1;   // 0: the child exited with `status`; 1: it could not start (errno in `status`); 2: killed on request
  int status = 0;  // wait status or errno
  FoundProcesses killed;
};

[[noreturn]] void fail_start(int error_fd) {
  const int e = errno;
  if (error_fd >= 0) {
    [[maybe_unused]] const ssize_t w = ::write(error_fd, &e, sizeof e);
  }
  ::_exit(127);
}

// In the keeper's child: its descriptors, signals and program. Reports a
// failure's errno on `error_fd` (closed on exec: end of file means it runs).
[[noreturn]] void exec_child(const Launch& l, int error_fd) {
  if (l.own_group) ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // a keeper killed from outside takes the child with it
  if (l.directory && ::chdir(l.directory) != 0) fail_start(error_fd);
  for (int target : kStdioOrder) {
    const Redirection& r = l.stdio[target];
    if (r.kind == Redirection::from_fd) {
      if (r.fd == target ? ::fcntl(r.fd, F_SETFD, 0) < 0 : ::dup2(r.fd, target) < 0) fail_start(error_fd);
    } else if (r.kind == Redirection::open_path) {
      const int fd = ::open(r.path, r.flags | O_CLOEXEC, 0600);
      if (fd < 0 || (fd == target ? ::fcntl(fd, F_SETFD, 0) : ::dup2(fd, target)) < 0) fail_start(error_fd);
    } else if (r.kind == Redirection::same_as_stderr) {
      if (::dup2(STDERR_FILENO, STDOUT_FILENO) < 0) fail_start(error_fd);
    }
  }
  if (l.reset_signals) {
    struct sigaction default_action {};
    default_action.sa_handler = SIG_DFL;
    ::sigaction(SIGPIPE, &default_action, nullptr);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
  } else {
    ::sigprocmask(SIG_SETMASK, &l.mask, nullptr);
  }
  ::execve(l.path, l.argv, l.envp);
  fail_start(error_fd);
}

[[noreturn]] void run_keeper(const Launch& l, int control_fd, int report_fd) {
  sigset_t all;
  sigfillset(&all);
  ::sigprocmask(SIG_BLOCK, &all, nullptr);  // the keeper ends by its own decision, never by a stray signal
  if (l.own_group) ::setpgid(0, 0);         // out of the terminal's foreground group: Ctrl-C reaches only us
  ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  int exec_error[2] = {-1, -1};  // the child's errno if it cannot start (closed by its exec)
  if (::pipe2(exec_error, O_CLOEXEC) != 0) exec_error[0] = exec_error[1] = -1;
  const pid_t child = ::fork();
  if (child == 0) {
    ::close(control_fd);
    ::close(report_fd);
    if (exec_error[0] >= 0) ::close(exec_error[0]);
    exec_child(l, exec_error[1]);
  }
  const int fork_errno = errno;
  if (child > 0 && l.own_group) ::setpgid(child, child);                       // also here: no race with the kill below
  for (int i = 0; i < l.keeper_close_count; ++i) ::close(l.keeper_closes[i]);  // the pipes' ends: EOF works
  if (exec_error[1] >= 0) ::close(exec_error[1]);
  int exec_errno = 0;
  if (child > 0 && exec_error[0] >= 0) {
    ssize_t n;
    while ((n = ::read(exec_error[0], &exec_errno, sizeof exec_errno)) < 0 && errno == EINTR) {
    }
    if (n != static_cast<ssize_t>(sizeof exec_errno)) exec_errno = 0;  // end of file: the program runs
  }
  if (exec_error[0] >= 0) ::close(exec_error[0]);
  KeeperReport report;
  if (child < 0 || exec_errno != 0) {
    report.kind = 1;
    report.status = child < 0 ? fork_errno : exec_errno;
    if (child > 0) ::waitpid(child, nullptr, 0);
  } else {
    const int exited_fd = exit_descriptor(child);
    for (;;) {
      int status = 0;
      if (::waitpid(child, &status, WNOHANG) == child) {
        report.kind = 0;
        report.status = status;
        break;
      }
      // The control pipe: a byte (the deadline) or end of file (we are gone) means stop now.
      pollfd fds[2] = {{control_fd, POLLIN, 0}, {exited_fd, POLLIN, 0}};
      if (::poll(fds, exited_fd >= 0 ? 2 : 1, exited_fd >= 0 ? -1 : 5) > 0 && fds[0].revents != 0) {
        report.kind = 2;
        break;
      }
    }
    if (l.own_group) ::kill(-child, SIGKILL);
    kill_all_descendants(report.killed);
  }
  [[maybe_unused]] const ssize_t written = ::write(report_fd, &report, sizeof report);
  ::_exit(0);
}

// The child's output pipes and its input, as the run goes.
struct Streams {
  Fd in_write, out_read, err_read;
  std::string_view input;
  std::size_t written = 0;
  std::size_t out_limit = 0, err_limit = 0;

  // Writes or reads what `poll` found ready.
  void serve(const pollfd& in, const pollfd& out, const pollfd& err, ChildResult& r) {
    if (in_write.open() && in.revents != 0) {
      const ssize_t w = ::write(in_write.get(), input.data() + written, input.size() - written);
      if (w > 0) written += static_cast<std::size_t>(w);
      if ((w < 0 && errno != EAGAIN && errno != EINTR) || written == input.size()) in_write.reset();  // EPIPE: not read
    }
    if (out_read.open() && out.revents != 0 && !read_some(out_read.get(), r.out, out_limit)) out_read.reset();
    if (err_read.open() && err.revents != 0 && !read_some(err_read.get(), r.err, err_limit)) err_read.reset();
  }

  // After the end: what is left, to end of file (see kDrainQuiet).
  void drain(ChildResult& r) {
    in_write.reset();
    const auto until = Clock::now() + kDrainLimit;
    while ((out_read.open() || err_read.open()) && Clock::now() < until) {
      pollfd fds[2] = {{out_read.get(), POLLIN, 0}, {err_read.get(), POLLIN, 0}};  // a negative fd is skipped
      const int ready = ::poll(fds, 2, static_cast<int>(kDrainQuiet.count()));
      if (ready < 0 && errno == EINTR) continue;
      if (ready <= 0) break;
      serve({-1, 0, 0}, fds[0], fds[1], r);
    }
  }
};

void set_exit(ChildResult& r, int status) {
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
}

}  // namespace

std::string ChildResult::status_text() const {
  if (!started) return "could not start: " + error;
  if (timed_out) return "timed out after " + std::to_string(static_cast<long long>(wall_seconds)) + " s";
  if (signal) return "killed by signal " + std::to_string(signal) + " (" + ::strsignal(signal) + ")";
  return "exit code " + std::to_string(exit_code);
}

ChildResult run_child(const ChildOptions& o) {
  ChildResult r;
  if (o.argv.empty()) {
    r.error = "no program given";
    return r;
  }

  // Everything the child (and the keeper) needs, prepared before the fork.
  std::vector<std::string> environment;
  for (char** e = environ; e && *e; ++e) environment.emplace_back(*e);
  for (const std::string& add : o.environment) {
    const std::string name = add.substr(0, add.find('=') + 1);
    std::erase_if(environment, [&](const std::string& e) { return e.rfind(name, 0) == 0; });
    environment.push_back(add);
  }
  std::vector<char*> argv, envp;
  for (const std::string& a : o.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const std::string& e : environment) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  std::string program = o.argv[0];
  if (o.keeper && o.search_path && program.find('/') == std::string::npos) {
    program = find_in_path(program);
    if (program.empty()) {
      r.start_errno = ENOENT;
      r.error = errno_text(o.argv[0], ENOENT);
      return r;
    }
  }

  Streams io;
  Fd in_read, out_write, err_write;
  if ((o.input == ChildInput::text && !make_pipe(in_read, io.in_write)) ||
      (o.out.mode == ChildOutputMode::capture && !make_pipe(io.out_read, out_write)) ||
      (o.err.mode == ChildOutputMode::capture && !make_pipe(io.err_read, err_write))) {
    r.error = errno_text("pipe", errno);
    return r;
  }
  io.input = o.input_text;
  io.out_limit = o.out.limit;
  io.err_limit = o.err.limit;

  Launch launch;
  launch.path = program.c_str();
  launch.argv = argv.data();
  launch.envp = envp.data();
  launch.directory = o.working_directory.empty() ? nullptr : o.working_directory.c_str();
  launch.own_group = o.own_process_group;
  launch.reset_signals = o.reset_signals;
  ::pthread_sigmask(SIG_SETMASK, nullptr, &launch.mask);
  constexpr int kWrite = O_WRONLY | O_CREAT | O_TRUNC;
  if (o.input == ChildInput::null_device) launch.stdio[0] = {Redirection::open_path, -1, "/dev/null", O_RDONLY};
  if (o.input == ChildInput::text) launch.stdio[0] = {Redirection::from_fd, in_read.get(), nullptr, 0};
  for (int target : {STDOUT_FILENO, STDERR_FILENO}) {
    const ChildStream& s = target == STDOUT_FILENO ? o.out : o.err;
    Redirection& d = launch.stdio[target];
    switch (s.mode) {
      case ChildOutputMode::capture:
        d = {Redirection::from_fd, (target == STDOUT_FILENO ? out_write : err_write).get(), nullptr, 0};
        break;
      case ChildOutputMode::file: d = {Redirection::open_path, -1, s.path.c_str(), kWrite}; break;
      case ChildOutputMode::discard: d = {Redirection::open_path, -1, "/dev/null", O_WRONLY}; break;
      case ChildOutputMode::to_stderr:
        if (target == STDOUT_FILENO) d.kind = Redirection::same_as_stderr;
        break;
      case ChildOutputMode::inherit: break;
    }
  }

  const auto start = Clock::now();
  pid_t pid = -1;    // the child (plain) or the keeper
  Fd exited;         // readable when it has ended: the child's pidfd, or the keeper's report pipe
  Fd control_write;  // keeper: a byte or end of file stops it
  if (o.keeper) {
    Fd control_read, report_write;
    if (!make_pipe(control_read, control_write) || !make_pipe(exited, report_write)) {
      r.error = errno_text("pipe", errno);
      return r;
    }
    const int closes[] = {in_read.get(),     io.in_write.get(), io.out_read.get(),   out_write.get(),
                          io.err_read.get(), err_write.get(),   control_write.get(), exited.get()};
    launch.keeper_closes = closes;
    launch.keeper_close_count = static_cast<int>(std::size(closes));
    pid = ::fork();
    if (pid < 0) {
      r.error = errno_text("fork", errno);
      return r;
    }
    if (pid == 0) run_keeper(launch, control_read.get(), report_write.get());
  } else {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    if (launch.directory) posix_spawn_file_actions_addchdir_np(&actions, launch.directory);
    for (int target : kStdioOrder) {
      const Redirection& d = launch.stdio[target];
      if (d.kind == Redirection::from_fd) posix_spawn_file_actions_adddup2(&actions, d.fd, target);
      if (d.kind == Redirection::open_path) posix_spawn_file_actions_addopen(&actions, target, d.path, d.flags, 0600);
      if (d.kind == Redirection::same_as_stderr) posix_spawn_file_actions_adddup2(&actions, STDERR_FILENO, target);
    }
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    short flags = 0;
    sigset_t none, defaults;
    sigemptyset(&none);
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGPIPE);
    if (o.reset_signals) {
      posix_spawnattr_setsigmask(&attributes, &none);
      posix_spawnattr_setsigdefault(&attributes, &defaults);
      flags |= POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
    }
    if (o.own_process_group) {
      posix_spawnattr_setpgroup(&attributes, 0);
      flags |= POSIX_SPAWN_SETPGROUP;
    }
    posix_spawnattr_setflags(&attributes, flags);
    const int spawned = o.search_path
                            ? ::posix_spawnp(&pid, launch.path, &actions, &attributes, launch.argv, launch.envp)
                            : ::posix_spawn(&pid, launch.path, &actions, &attributes, launch.argv, launch.envp);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    if (spawned != 0) {
      r.start_errno = spawned;
      r.error = errno_text(o.argv[0], spawned);
      return r;
    }
    r.started = true;
    exited.reset(exit_descriptor(pid));
  }
  in_read.reset();  // the child's ends: only it holds them now
  out_write.reset();
  err_write.reset();

  std::optional<SigpipeBlock> no_sigpipe;
  if (io.in_write.open()) no_sigpipe.emplace();
  set_nonblocking(io.in_write);
  set_nonblocking(io.out_read);
  set_nonblocking(io.err_read);
  if (io.input.empty()) io.in_write.reset();

  const bool has_deadline = o.timeout_seconds > 0;
  const auto deadline =
      has_deadline
          ? start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.timeout_seconds))
          : Clock::time_point::max();
  auto kill_at = Clock::time_point::max();  // plain mode: SIGKILL after SIGTERM
  const pid_t target = o.own_process_group ? -pid : pid;
  int status = 0;
  bool ended = false;
  KeeperReport report;
  const auto read_report = [&] {  // the keeper's one write of a few hundred bytes (or end of file if it died)
    std::size_t got = 0;
    for (;;) {
      const ssize_t n = ::read(exited.get(), reinterpret_cast<char*>(&report) + got, sizeof report - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += static_cast<std::size_t>(n);
      if (got == sizeof report) break;
    }
    if (got != sizeof report) report = KeeperReport{};
  };
  const auto stop_keeper = [&] {
    const char stop = 'k';
    [[maybe_unused]] const ssize_t w = ::write(control_write.get(), &stop, 1);  // the keeper kills everything
  };
  for (;;) {
    if (!o.keeper) {
      const pid_t w = ::waitpid(pid, &status, WNOHANG);
      if (w == pid) {
        ended = true;
        break;
      }
      if (w < 0 && errno != EINTR) {
        r.error = errno_text("waitpid", errno);  // reaped elsewhere: how it ended is unknown
        break;
      }
    }
    const auto now = Clock::now();
    if (!r.timed_out && now >= deadline) {
      r.timed_out = true;
      if (o.keeper) {
        stop_keeper();
      } else if (o.kill_grace_seconds > 0) {
        ::kill(target, SIGTERM);
        kill_at =
            now + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.kill_grace_seconds));
      } else {
        ::kill(target, SIGKILL);
      }
    }
    if (now >= kill_at) {
      ::kill(target, SIGKILL);
      kill_at = Clock::time_point::max();
    }
    const auto next = std::min(r.timed_out ? Clock::time_point::max() : deadline, kill_at);
    int wait_ms = -1;
    if (next != Clock::time_point::max())
      wait_ms = static_cast<int>(std::clamp<long long>(
          std::chrono::duration_cast<std::chrono::milliseconds>(next - now).count() + 1, 0, 1000));
    if (!exited.open()) wait_ms = wait_ms < 0 ? kExitPollMs : std::min(wait_ms, kExitPollMs);
    pollfd fds[4] = {{io.in_write.get(), POLLOUT, 0},
                     {io.out_read.get(), POLLIN, 0},
                     {io.err_read.get(), POLLIN, 0},
                     {exited.get(), POLLIN, 0}};  // a negative fd is skipped
    const int ready = ::poll(fds, 4, wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) {  // nothing can be waited for any more: end it as at the deadline, and wait for that
      r.timed_out = true;
      if (o.keeper) {
        stop_keeper();
        read_report();
      } else {
        ::kill(target, SIGKILL);
        pid_t w;
        while ((w = ::waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
        }
        ended = w == pid;
      }
      break;
    }
    io.serve(fds[0], fds[1], fds[2], r);
    if (o.keeper && fds[3].revents != 0) {
      read_report();
      break;
    }
  }

  if (o.keeper) {
    control_write.reset();  // (also what stops the keeper if it never reported)
    int keeper_status = 0;
    while (::waitpid(pid, &keeper_status, 0) < 0 && errno == EINTR) {
    }
    r.killed = report.killed;
    if (report.kind == 0 || report.kind == 2) r.started = true;
    if (report.kind == 0) set_exit(r, report.status);
    if (report.kind == 1) {
      r.start_errno = report.status;
      r.error = errno_text(o.argv[0], report.status);
    }
    if (report.kind == -1) {
      r.keeper_lost = true;
      r.error = "the keeper process ended without a report";
    }
  }
  io.drain(r);  // every writer has ended (but what the plain child left behind in its group)
  if (!o.keeper) {
    if (o.own_process_group) ::kill(-pid, SIGKILL);  // end whatever the child left behind
    if (ended) set_exit(r, status);
  }
  r.wall_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return r;
}

}  // namespace poems::base
