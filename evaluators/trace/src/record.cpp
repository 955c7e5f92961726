#include "poems/trace/record.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "poems/base/child_process.h"
#include "poems/base/executable_path.h"
#include "poems/measure/mpirun.h"

namespace poems::trace {

namespace fs = std::filesystem;

std::string interposition_library() {
  if (const char* env = std::getenv("POEMS_TRACE_LIBRARY"); env && *env) return env;
  std::error_code ec;
  if (fs::exists(POEMS_TRACE_LIBRARY, ec)) return POEMS_TRACE_LIBRARY;
  const std::string dir = base::executable_directory();
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
  // mpirun in our process group (Ctrl-C reaches the job), with our stdin,
  // stdout, stderr and signal mask; at the deadline SIGTERM (mpirun ends its
  // processes), SIGKILL two seconds later.
  const measure::MpiSessionBase session;
  base::ChildOptions child;
  child.argv = r.command;
  child.environment = session.environment();
  child.working_directory = o.working_directory;
  child.timeout_seconds = o.timeout_seconds;
  child.kill_grace_seconds = 2;
  child.reset_signals = false;
  child.input = base::ChildInput::inherit;
  child.out = base::ChildStream::inherit();
  child.err = base::ChildStream::inherit();
  const base::ChildResult run = base::run_child(child);
  if (!run.started && run.start_errno == 0) {
    r.error = "cannot start mpirun: " + run.error;
    return r;
  }
  r.started = true;
  if (!run.started) {  // as a shell would: the message, and exit code 127
    std::fprintf(stderr, "poems trace: cannot run %s: %s\n", r.command[0].c_str(), std::strerror(run.start_errno));
    r.exit_code = 127;
  }
  r.timed_out = run.timed_out;
  r.wall_seconds = run.wall_seconds;
  if (run.started) {
    r.exit_code = run.exit_code;
    r.signal = run.signal;
  }
  if (r.exit_code == 127 && !fs::exists(fs::path(o.output) / "traces.otf2", ec)) r.error = "cannot run " + o.mpirun;
  const fs::path anchor = fs::path(o.output) / "traces.otf2";
  if (fs::exists(anchor, ec)) r.anchor = anchor.string();
  return r;
}

}  // namespace poems::trace
