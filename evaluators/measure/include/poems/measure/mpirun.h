// Launching MPI programs on this machine with Open MPI's mpirun (docs/sweep3d.md,
// "Measurement"): as root mpirun needs --allow-run-as-root, and more ranks than cores
// need --oversubscribe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "poems/base/temporary_directory.h"
#include "poems/measure/process.h"

namespace poems::measure {

struct Launch {
  int ranks = 1;
  std::string program;            // path of the MPI executable
  std::vector<std::string> args;  // its arguments
  std::string mpirun = "mpirun";
  double timeout_seconds = 600;
  std::string working_directory;  // "" = this process's
};

// Cores of this machine (std::thread::hardware_concurrency, at least 1).
int host_cores();
std::string host_name();
bool running_as_root();

// The command line: mpirun [--allow-run-as-root] [--oversubscribe] -np N program args...
std::vector<std::string> mpirun_command(const Launch& launch);

// Open MPI 4 makes its session directory (/tmp/ompi.HOST.UID) with a stat and
// then a mkdir, so two mpiruns that start at once race and the loser stops in
// orte_init ("A call to mkdir was unable to create the desired directory ...
// File exists"; seen under ctest -j2, and possible in a parallel study). Each
// launch gets a session base of its own, unless the user chose one
// (OMPI_MCA_orte_tmpdir_base): the entries to add to mpirun's environment,
// valid while this object lives (it removes the directory).
class MpiSessionBase {
 public:
  MpiSessionBase();
  const std::vector<std::string>& environment() const { return environment_; }

 private:
  std::optional<base::TemporaryDirectory> directory_;
  std::vector<std::string> environment_;
};

// Runs it (in a session base of its own). LeakSanitizer and the like see the
// environment otherwise unchanged.
ProcessResult run_mpi(const Launch& launch);

// The version line of `mpirun --version` ("mpirun (Open MPI) 4.1.4"), or "".
std::string mpi_version(const std::string& mpirun = "mpirun");

// Runs the rest of a command at another priority: the process's nice value
// (children inherit it) and, where the kernel groups processes by session
// for scheduling (/proc/sys/kernel/sched_autogroup_enabled), the nice value
// of this session's group, without which nice has no effect against other
// sessions' work. The destructor puts the group's value back. Negative values
// need root: with them a measurement on a shared machine takes the CPU from
// other work. `warning` says what could not be set.
class PriorityGuard {
 public:
  explicit PriorityGuard(int nice);
  ~PriorityGuard();
  PriorityGuard(const PriorityGuard&) = delete;
  PriorityGuard& operator=(const PriorityGuard&) = delete;
  std::string warning;

 private:
  bool restore_group_ = false;
  int group_nice_ = 0;
};

// The JSON object printed after `prefix` on a line of `out`, as text; "" if
// there is none.
std::string result_line(const std::string& out, const std::string& prefix);

}  // namespace poems::measure
