// Running a program with a deadline (see process.h). Plain POSIX:
// posix_spawn into a new process group, pipes read with poll.
#include "poems/measure/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

extern char** environ;

namespace poems::measure {

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kMaxOutput = std::size_t{4} << 20;

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// Reads what is available; returns false at end of file.
bool drain(int fd, std::string& into) {
  char buffer[8192];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n > 0) {
      if (into.size() < kMaxOutput) into.append(buffer, static_cast<std::size_t>(n));
      continue;
    }
    if (n == 0) return false;
    return errno == EAGAIN || errno == EINTR;
  }
}

}  // namespace

std::string ProcessResult::status_text() const {
  if (!started) return "could not start: " + error;
  if (timed_out) return "timed out after " + std::to_string(static_cast<long long>(wall_seconds)) + " s";
  if (signal) return "killed by signal " + std::to_string(signal) + " (" + ::strsignal(signal) + ")";
  return "exit code " + std::to_string(exit_code);
}

ProcessResult run_process(const std::vector<std::string>& argv, double timeout_seconds,
                          const std::vector<std::string>& extra_environment) {
  ProcessResult r;
  if (argv.empty()) {
    r.error = "no program given";
    return r;
  }
  int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
  if (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0) {
    r.error = std::string("pipe: ") + std::strerror(errno);
    for (int* fd : {&out_pipe[0], &out_pipe[1], &err_pipe[0], &err_pipe[1]}) close_fd(*fd);
    return r;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  posix_spawnattr_setpgroup(&attributes, 0);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  std::vector<std::string> environment;
  for (char** e = environ; e && *e; ++e) environment.emplace_back(*e);
  for (const std::string& add : extra_environment) {
    const std::string name = add.substr(0, add.find('=') + 1);
    std::erase_if(environment, [&](const std::string& e) { return e.rfind(name, 0) == 0; });
    environment.push_back(add);
  }
  std::vector<char*> args, envp;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  for (const std::string& e : environment) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);

  const auto start = Clock::now();
  pid_t pid = -1;
  const int spawned = ::posix_spawnp(&pid, args[0], &actions, &attributes, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  close_fd(out_pipe[1]);
  close_fd(err_pipe[1]);
  if (spawned != 0) {
    r.error = argv[0] + ": " + std::strerror(spawned);
    close_fd(out_pipe[0]);
    close_fd(err_pipe[0]);
    return r;
  }
  r.started = true;
  for (int fd : {out_pipe[0], err_pipe[0]}) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);

  const auto deadline = start + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(timeout_seconds > 0 ? timeout_seconds : 1e9));
  bool out_open = true, err_open = true, terminated = false;
  auto kill_time = Clock::time_point::max();
  int status = 0;
  bool reaped = false;
  while (!reaped) {
    pollfd fds[2];
    nfds_t n = 0;
    if (out_open) fds[n++] = {out_pipe[0], POLLIN, 0};
    if (err_open) fds[n++] = {err_pipe[0], POLLIN, 0};
    ::poll(n ? fds : nullptr, n, 20);
    if (out_open) out_open = drain(out_pipe[0], r.out);
    if (err_open) err_open = drain(err_pipe[0], r.err);
    const pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid) {
      reaped = true;
      break;
    }
    const auto now = Clock::now();
    if (!terminated && now >= deadline) {
      r.timed_out = true;
      terminated = true;
      ::kill(-pid, SIGTERM);  // mpirun takes its job down on SIGTERM
      kill_time = now + std::chrono::seconds(2);
    }
    if (terminated && now >= kill_time) {
      ::kill(-pid, SIGKILL);
      kill_time = Clock::time_point::max();
    }
  }
  // The leader exited: read what is left, and end whatever it left behind.
  while (out_open && drain(out_pipe[0], r.out)) {
    pollfd p{out_pipe[0], POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) break;
  }
  drain(err_pipe[0], r.err);
  ::kill(-pid, SIGKILL);
  close_fd(out_pipe[0]);
  close_fd(err_pipe[0]);
  r.wall_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  if (r.timed_out && !r.signal) r.signal = SIGTERM;
  return r;
}

std::string executable_directory() {
  std::error_code ec;
  const auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? "" : path.parent_path().string();
}

}  // namespace poems::measure
