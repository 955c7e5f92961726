#include "poems/trace/record.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>

#include "poems/measure/mpirun.h"
#include "poems/measure/process.h"

namespace poems::trace {

namespace fs = std::filesystem;

std::string interposition_library() {
  if (const char* env = std::getenv("POEMS_TRACE_LIBRARY"); env && *env) return env;
  std::error_code ec;
  if (fs::exists(POEMS_TRACE_LIBRARY, ec)) return POEMS_TRACE_LIBRARY;
  const std::string dir = measure::executable_directory();
  return dir.empty() ? std::string(POEMS_TRACE_LIBRARY)
                     : (fs::path(dir) / ".." / "lib" / "libpoems_trace_mpi.so").string();
}

std::vector<std::string> record_command(const RecordOptions& o, const std::string& library) {
  std::string preload = library;
  if (const char* existing = std::getenv("LD_PRELOAD"); existing && *existing) preload += std::string(":") + existing;
  std::vector<std::string> argv{o.mpirun};
  if (measure::running_as_root()) argv.push_back("--allow-run-as-root");
  if (o.ranks > measure::host_cores()) argv.push_back("--oversubscribe");
  argv.insert(argv.end(), {"-np", std::to_string(o.ranks), "-x", "LD_PRELOAD=" + preload, "-x",
                           "POEMS_TRACE_DIR=" + fs::absolute(o.output).string()});
  if (o.cpu_time) argv.insert(argv.end(), {"-x", "POEMS_TRACE_CPU_TIME=1"});
  argv.insert(argv.end(), o.mpirun_args.begin(), o.mpirun_args.end());
  argv.push_back(o.program);
  argv.insert(argv.end(), o.args.begin(), o.args.end());
  return argv;
}

namespace {

// The archive's files in `dir`: what a forced run replaces.
const char* const kArchiveFiles[] = {"traces.otf2", "traces.def", "traces"};

std::string prepare_output(const RecordOptions& o) {
  std::error_code ec;
  const fs::path dir(o.output);
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec)) return "'" + o.output + "' exists and is not a directory";
  if (fs::is_directory(dir, ec)) {
    bool archive = false, other = false;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      const std::string name = e.path().filename().string();
      bool ours = false;
      for (const char* f : kArchiveFiles) ours = ours || name == f;
      (ours ? archive : other) = true;
    }
    if (other) return "'" + o.output + "' holds other files; name a new or empty directory with -o";
    if (archive && !o.force) return "'" + o.output + "' already holds an archive; use --force to replace it";
    for (const char* f : kArchiveFiles) fs::remove_all(dir / f, ec);
  }
  fs::create_directories(dir, ec);
  if (ec) return "cannot create '" + o.output + "': " + ec.message();
  return "";
}

}  // namespace

RecordResult record(const RecordOptions& o) {
  RecordResult r;
  r.error = prepare_output(o);
  if (!r.error.empty()) return r;
  const std::string library = o.library.empty() ? interposition_library() : o.library;
  std::error_code ec;
  if (!fs::exists(library, ec)) {
    r.error = "the interposition library '" + library + "' does not exist (set POEMS_TRACE_LIBRARY)";
    return r;
  }
  r.command = record_command(o, library);
  std::vector<char*> argv;
  for (std::string& a : r.command) argv.push_back(a.data());
  argv.push_back(nullptr);
  const auto begin = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) {
    r.error = std::string("cannot start mpirun: ") + std::strerror(errno);
    return r;
  }
  if (pid == 0) {
    ::execvp(argv[0], argv.data());
    std::fprintf(stderr, "poems trace: cannot run %s: %s\n", argv[0], std::strerror(errno));
    ::_exit(127);
  }
  r.started = true;
  int status = 0;
  const auto deadline = begin + std::chrono::duration<double>(o.timeout_seconds);
  for (;;) {
    const pid_t done = ::waitpid(pid, &status, o.timeout_seconds > 0 ? WNOHANG : 0);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) break;
    if (o.timeout_seconds > 0 && std::chrono::steady_clock::now() >= deadline && !r.timed_out) {
      r.timed_out = true;
      ::kill(pid, SIGTERM);  // mpirun ends its processes
      std::this_thread::sleep_for(std::chrono::seconds(2));
      ::kill(pid, SIGKILL);
    }
    if (o.timeout_seconds > 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  if (r.exit_code == 127 && !fs::exists(fs::path(o.output) / "traces.otf2", ec)) r.error = "cannot run " + o.mpirun;
  const fs::path anchor = fs::path(o.output) / "traces.otf2";
  if (fs::exists(anchor, ec)) r.anchor = anchor.string();
  return r;
}

}  // namespace poems::trace
