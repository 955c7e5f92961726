#include "poems/core/direct_program.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "poems/base/subreaper.h"
#include "poems/direct/protocol.h"
#include "poems/taskgraph/limits.h"

extern char** environ;

namespace poems::core {

namespace fs = std::filesystem;

namespace {

fs::path self_directory() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::current_path() : exe.parent_path();
}

fs::path unique_temp(const std::string& stem) {
  static int counter = 0;
  return fs::temp_directory_path() /
         ("poems_direct_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) + "_" + stem);
}

// ---- the keeper: a forked process between poems and the program ----------
//
// The program runs under a keeper, a child of ours that is a child
// subreaper (poems/base/subreaper.h): every process below it that loses
// its parent becomes its child. When the program exits, at the timeout, or
// when poems dies (the control pipe closes), the keeper kills every process
// left below it, reaps them, and reports the program's wait status and what
// it had to kill: nothing the program started outlives the run, whatever
// becomes of poems or of the program's controller. (The program's own
// controller is a subreaper too and ends what its ranks leave behind, so
// normally the keeper finds nothing left.) The keeper stays in our process
// group: rank 0 reads the terminal and Ctrl-C reaches the program as under
// mpirun.
//
// The keeper is forked from a possibly multi-threaded process: until it
// exits it makes only async-signal-safe calls.

struct KeeperReport {
  int kind = -1;   // 0: the program exited with `status`; 1: it could not start (errno); 2: killed on request
  int status = 0;  // wait status or errno
  base::FoundProcesses left;  // what was still running when the program had exited
};

struct ProgramLaunch {
  const char* path = nullptr;
  char* const* argv = nullptr;
  char* const* envp = nullptr;
  ProgramOutput output = ProgramOutput::Inherit;
  const char* capture_path = nullptr;
  sigset_t mask{};  // poems's signal mask, for the program
};

[[noreturn]] void run_keeper(const ProgramLaunch& launch, int control_fd, int report_fd) {
  sigset_t all;
  sigfillset(&all);
  ::sigprocmask(SIG_BLOCK, &all, nullptr);  // the keeper ends by its own decision, never by a stray signal
  ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  int exec_error[2] = {-1, -1};  // the program's execve errno, if it fails (closed on success)
  if (::pipe2(exec_error, O_CLOEXEC) != 0) exec_error[0] = exec_error[1] = -1;
  const pid_t program = ::fork();
  if (program == 0) {
    ::close(control_fd);
    ::close(report_fd);
    if (exec_error[0] >= 0) ::close(exec_error[0]);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // a keeper killed from outside takes the program with it
    if (launch.output == ProgramOutput::ToStderr) ::dup2(STDERR_FILENO, STDOUT_FILENO);
    if (launch.output == ProgramOutput::Capture) {
      const int fd = ::open(launch.capture_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
      if (fd < 0 || ::dup2(fd, STDOUT_FILENO) < 0) ::_exit(127);
    }
    ::sigprocmask(SIG_SETMASK, &launch.mask, nullptr);
    ::execve(launch.path, launch.argv, launch.envp);
    const int e = errno;
    if (exec_error[1] >= 0) {
      [[maybe_unused]] const ssize_t w = ::write(exec_error[1], &e, sizeof e);
    }
    ::_exit(126);
  }
  KeeperReport report;
  if (exec_error[1] >= 0) ::close(exec_error[1]);
  int exec_errno = 0;
  if (program > 0 && exec_error[0] >= 0) {
    ssize_t n;
    while ((n = ::read(exec_error[0], &exec_errno, sizeof exec_errno)) < 0 && errno == EINTR) {
    }
    if (n != static_cast<ssize_t>(sizeof exec_errno)) exec_errno = 0;  // end of file: the program runs
  }
  if (exec_error[0] >= 0) ::close(exec_error[0]);
  if (program < 0 || exec_errno != 0) {
    report.kind = 1;
    report.status = program < 0 ? errno : exec_errno;
    if (program > 0) ::waitpid(program, nullptr, 0);
  } else {
    const int exited_fd = base::exit_descriptor(program);
    for (;;) {
      int status = 0;
      if (::waitpid(program, &status, WNOHANG) == program) {
        report.kind = 0;
        report.status = status;
        break;
      }
      // The control pipe: a byte (timeout) or end of file (poems is gone) means stop now.
      pollfd fds[2] = {{control_fd, POLLIN, 0}, {exited_fd, POLLIN, 0}};
      if (::poll(fds, exited_fd >= 0 ? 2 : 1, exited_fd >= 0 ? -1 : 5) > 0 && fds[0].revents != 0) {
        report.kind = 2;
        break;
      }
    }
    base::kill_all_descendants(report.left);
  }
  [[maybe_unused]] const ssize_t written = ::write(report_fd, &report, sizeof report);
  ::_exit(0);
}

// Runs the program under a keeper; returns its report (kind -1 if the keeper
// itself failed). Kills everything after `timeout_seconds` (> 0).
KeeperReport run_under_keeper(const ProgramLaunch& launch, double timeout_seconds, bool& timed_out) {
  int control[2], report_pipe[2];
  if (::pipe2(control, O_CLOEXEC) != 0) return {};
  if (::pipe2(report_pipe, O_CLOEXEC) != 0) {
    ::close(control[0]);
    ::close(control[1]);
    return {};
  }
  const pid_t keeper = ::fork();
  if (keeper == 0) {
    ::close(control[1]);
    ::close(report_pipe[0]);
    run_keeper(launch, control[0], report_pipe[1]);
  }
  ::close(control[0]);
  ::close(report_pipe[1]);
  KeeperReport report;
  if (keeper > 0) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_seconds);
    for (;;) {
      int wait_ms = -1;
      if (timeout_seconds > 0) {
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
          timed_out = true;
          const char stop = 'k';
          [[maybe_unused]] const ssize_t w = ::write(control[1], &stop, 1);  // the keeper kills everything
          break;
        }
        wait_ms = static_cast<int>(std::min<long long>(left.count() + 1, 1000));
      }
      pollfd fd{report_pipe[0], POLLIN, 0};
      const int ready = ::poll(&fd, 1, wait_ms);
      if (ready > 0) break;
      if (ready < 0 && errno != EINTR) break;
    }
    std::size_t got = 0;
    for (;;) {  // the keeper's one write of a few hundred bytes (or end of file if it died)
      const ssize_t n = ::read(report_pipe[0], reinterpret_cast<char*>(&report) + got, sizeof report - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += static_cast<std::size_t>(n);
      if (got == sizeof report) break;
    }
    if (got != sizeof report) report = KeeperReport{};
    int status = 0;
    while (::waitpid(keeper, &status, 0) < 0 && errno == EINTR) {
    }
  }
  ::close(control[1]);
  ::close(report_pipe[0]);
  return report;
}

}  // namespace

std::string bin_path(const std::string& name) { return (self_directory() / name).string(); }

std::string mpicxx_path() { return bin_path("poems-mpicxx"); }

std::string wrapper_for(const std::string& source) {
  const std::string ext = fs::path(source).extension().string();
  if (ext == ".c") return bin_path("poems-mpicc");
  if (ext == ".f" || ext == ".F" || ext == ".f90" || ext == ".F90" || ext == ".f95" || ext == ".f03" || ext == ".f08" ||
      ext == ".for" || ext == ".f77")
    return bin_path("poems-mpif90");
  return mpicxx_path();
}

bool is_source_file(const std::string& path) {
  const std::string ext = fs::path(path).extension().string();
  return ext == ".c" || ext == ".cc" || ext == ".cpp" || ext == ".cxx" || ext == ".C" || ext == ".c++" ||
         wrapper_for(path) != mpicxx_path();
}

std::optional<std::string> compile_direct_program(const std::string& source, std::string& log,
                                                  std::vector<std::string>& shared) {
  const fs::path dir = unique_temp("build");
  fs::create_directories(dir);
  const fs::path object = dir / (fs::path(source).stem().string() + ".o");
  const fs::path binary = dir / fs::path(source).stem();
  const fs::path output = dir / "compiler.log";
  // poems-mpicxx is a shell script; the paths are quoted for the shell.
  auto quote = [](const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
  };
  auto read = [](const fs::path& p) {
    std::ifstream in(p);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  };
  const std::string mpicxx = quote(wrapper_for(source));
  // Compile and link in two steps: the object holds the source's own symbols.
  int status = std::system(
      (mpicxx + " -O2 -c " + quote(source) + " -o " + quote(object.string()) + " > " + quote(output.string()) + " 2>&1")
          .c_str());
  log = read(output);
  if (status != 0 || !fs::exists(object)) return std::nullopt;
  const fs::path symbols = dir / "symbols.txt";
  if (std::system(("nm -C --defined-only " + quote(object.string()) + " > " + quote(symbols.string()) + " 2>/dev/null")
                      .c_str()) == 0) {
    std::istringstream lines(read(symbols));
    for (std::string line; std::getline(lines, line);) {
      // "ADDRESS TYPE NAME": B/b (bss) and D/d (data) are writable.
      std::istringstream fields(line);
      std::string address, type, name;
      if (!(fields >> address >> type) || type.size() != 1 || std::string("BbDd").find(type[0]) == std::string::npos)
        continue;
      std::getline(fields >> std::ws, name);
      if (name.empty() || name.rfind("guard variable", 0) == 0 || name.rfind("__", 0) == 0 || name[0] == '.') continue;
      shared.push_back(name);
    }
  }
  status = std::system((mpicxx + " -O2 " + quote(object.string()) + " -o " + quote(binary.string()) + " > " +
                        quote(output.string()) + " 2>&1")
                           .c_str());
  log += read(output);
  if (status != 0 || !fs::exists(binary)) return std::nullopt;
  return binary.string();
}

DirectRun run_direct_program(const std::string& binary, const std::vector<std::string>& args,
                             const direct::DirectOptions& options, ProgramOutput output, double timeout_seconds) {
  DirectRun run;
  const fs::path result_file = unique_temp("result.json");
  const fs::path output_file = unique_temp("stdout.txt");
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, direct::kOptionsVariable, std::strlen(direct::kOptionsVariable)) != 0 &&
        std::strncmp(*e, direct::kResultVariable, std::strlen(direct::kResultVariable)) != 0)
      env_strings.emplace_back(*e);
  // The shared region of ranks as processes: --memory-limit's size if given.
  direct::DirectOptions effective = options;
  if (effective.shared_bytes == 0 && effective.isolation == direct::Isolation::Processes)
    effective.shared_bytes = static_cast<std::size_t>(taskgraph::default_instantiation_limits().memory_limit_bytes);
  env_strings.push_back(std::string(direct::kOptionsVariable) + "=" + direct::options_to_json(effective).dump());
  env_strings.push_back(std::string(direct::kResultVariable) + "=" + result_file.string());
  std::vector<char*> envp;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_strings{binary};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);

  // Everything the keeper needs is prepared here: after fork it may not allocate.
  ProgramLaunch launch;
  launch.path = binary.c_str();
  launch.argv = argv.data();
  launch.envp = envp.data();
  launch.output = output;
  const std::string capture_path = output_file.string();
  launch.capture_path = capture_path.c_str();
  ::sigprocmask(SIG_SETMASK, nullptr, &launch.mask);
  std::fflush(stdout);
  std::fflush(stderr);
  bool timed_out = false;
  const KeeperReport report = run_under_keeper(launch, timeout_seconds, timed_out);
  if (report.kind == 1 || (report.kind == -1 && !timed_out)) {
    run.failure = "cannot run '" + binary +
                  "': " + (report.kind == 1 ? std::strerror(report.status) : "its keeper process failed");
    return run;
  }
  const int status = report.kind == 0 ? report.status : -1;
  if (output == ProgramOutput::Capture) {
    std::ifstream captured(output_file);
    std::stringstream text;
    text << captured.rdbuf();
    run.output = text.str();
    std::error_code ec;
    fs::remove(output_file, ec);
  }
  std::ifstream in(result_file);
  if (in) {
    std::stringstream text;
    text << in.rdbuf();
    in.close();
    std::error_code ec;
    fs::remove(result_file, ec);
    try {
      run.result = direct::result_from_json(nlohmann::json::parse(text.str()));
      // What the program's controller could not end itself (it died first).
      if (report.kind == 0 && report.left.count > 0) {
        run.result->left_behind += static_cast<std::uint32_t>(report.left.count);
        for (int i = 0; i < report.left.stored; ++i)
          run.result->left_behind_names.push_back(std::string(report.left.first[i].name) + " (pid " +
                                                  std::to_string(report.left.first[i].pid) + ")");
      }
      return run;
    } catch (const std::exception& e) {
      run.failure = "'" + binary + "' wrote a malformed result: " + e.what();
      return run;
    }
  }
  if (timed_out)
    run.failure = "'" + binary + "' did not finish within " + std::to_string(timeout_seconds) + " s (killed)";
  else if (status >= 0 && WIFSIGNALED(status))
    run.failure = "'" + binary + "' died of signal " + std::to_string(WTERMSIG(status)) + " (" +
                  strsignal(WTERMSIG(status)) + ") without a result";
  else if (status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 2)
    run.failure = "'" + binary + "' is not a POEMS direct-execution program, or rejected its options (see above)";
  else
    run.failure = "'" + binary + "' exited with status " +
                  std::to_string(status >= 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1) +
                  " without a result; build it with poems-mpicc, poems-mpicxx or poems-mpif90";
  return run;
}

}  // namespace poems::core
