// Running a program and collecting what it printed, with a deadline: how
// the measurement evaluator starts `mpirun` (docs/sweep3d.md, "Measurement").
// The runner itself is poems/base/child_process.h.
#pragma once

#include <string>
#include <vector>

#include "poems/base/child_process.h"

namespace poems::measure {

// started, exit_code, signal, timed_out, wall_seconds, out, err (each kept
// up to 4 MiB), error; ok(); status_text(): "exit code 3", "killed by
// signal 9 (Killed)", "timed out after 10 s", "could not start: ...".
using ProcessResult = base::ChildResult;

// Runs argv[0] (searched in PATH) with `extra_environment` ("NAME=value")
// added to this process's environment, in its own process group. At the
// deadline the group gets SIGTERM, then SIGKILL two seconds later; it is
// always reaped. stdin is /dev/null. A run killed at the deadline has a
// signal (SIGTERM if it exited otherwise). It runs in `working_directory`
// ("" = this process's).
ProcessResult run_process(const std::vector<std::string>& argv, double timeout_seconds,
                          const std::vector<std::string>& extra_environment = {},
                          const std::string& working_directory = "");

}  // namespace poems::measure
