// Running a program with a deadline (see process.h).
#include "poems/measure/process.h"

#include <signal.h>

namespace poems::measure {

ProcessResult run_process(const std::vector<std::string>& argv, double timeout_seconds,
                          const std::vector<std::string>& extra_environment, const std::string& working_directory) {
  base::ChildOptions o;
  o.argv = argv;
  o.working_directory = working_directory;
  o.environment = extra_environment;
  o.timeout_seconds = timeout_seconds;
  o.kill_grace_seconds = 2;  // mpirun takes its job down on SIGTERM
  o.own_process_group = true;
  o.input = base::ChildInput::null_device;
  o.out = base::ChildStream::capture(std::size_t{4} << 20);
  o.err = base::ChildStream::capture(std::size_t{4} << 20);
  ProcessResult r = base::run_child(o);
  if (r.timed_out && !r.signal) r.signal = SIGTERM;
  return r;
}

}  // namespace poems::measure
