// Running a program and collecting what it printed, with a deadline: how
// the measurement evaluator starts `mpirun` (DESIGN.md 5.5).
#pragma once

#include <string>
#include <vector>

namespace poems::measure {

struct ProcessResult {
  bool started = false;     // false: the program could not be started (see error)
  int exit_code = -1;       // when it exited normally
  int signal = 0;           // when a signal ended it
  bool timed_out = false;   // killed at the deadline
  double wall_seconds = 0;  // from start to exit
  std::string out, err;     // what it printed (each kept up to 4 MiB)
  std::string error;        // why it could not be started
  bool ok() const { return started && !timed_out && signal == 0 && exit_code == 0; }
  // "exit code 3", "killed by signal 9", "timed out after 10 s", ...
  std::string status_text() const;
};

// Runs argv[0] (searched in PATH) with `extra_environment` ("NAME=value")
// added to this process's environment, in its own process group. At the
// deadline the group gets SIGTERM, then SIGKILL two seconds later; it is
// always reaped. stdin is /dev/null.
ProcessResult run_process(const std::vector<std::string>& argv, double timeout_seconds,
                          const std::vector<std::string>& extra_environment = {});

// The directory of the running executable (/proc/self/exe), "" if unknown:
// `poems` finds the programs it measures beside itself in build/bin.
std::string executable_directory();

}  // namespace poems::measure
