// Recording a run (`poems trace`, docs/trace.md "Recording"): the unmodified
// program under Open MPI's mpirun with the interposition library preloaded
// into every process (mpirun -x LD_PRELOAD=...), which writes the OTF2
// archive at MPI_Finalize.
#pragma once

#include <string>
#include <vector>

namespace poems::trace {

struct RecordOptions {
  int ranks = 1;
  std::string program;
  std::vector<std::string> args;
  std::vector<std::string> mpirun_args;  // given to mpirun before the program
  std::string mpirun = "mpirun";
  std::string output = "poems-trace";  // the archive's directory
  bool force = false;                  // replace an archive already there
  std::string library;                 // the interposition library; "" = interposition_library()
  double timeout_seconds = 0;          // 0: none; else the job is killed at the deadline
  bool cpu_time = false;               // record each thread's CPU time at every MPI call (a system call each)
  std::string working_directory;       // where the job runs ("" = this process's)
};

struct RecordResult {
  bool started = false;
  int exit_code = -1, signal = 0;
  bool timed_out = false;
  double wall_seconds = 0;
  std::string anchor;  // OUTPUT/traces.otf2 if the archive was written, else ""
  std::string error;   // why the run could not start
  std::vector<std::string> command;
  bool ok() const { return started && exit_code == 0 && signal == 0 && !timed_out; }
};

// $POEMS_TRACE_LIBRARY, else the one this build made, else
// <directory of the running executable>/../lib/libpoems_trace_mpi.so.
std::string interposition_library();

// The mpirun command line record() runs.
std::vector<std::string> record_command(const RecordOptions& options, const std::string& library);

// Runs the program (its output goes to this process's stdout and stderr).
// Refuses (RecordResult::error) an output directory that is a file, that
// holds other files, or an archive unless `force`.
RecordResult record(const RecordOptions& options);

}  // namespace poems::trace
