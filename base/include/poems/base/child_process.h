// Running a child process with a deadline: the one runner behind every
// program POEMS starts (mpirun for measurements and trace recording, a
// direct-execution program, an external processor model's command, gnuplot).
//
//   base::ChildOptions o;
//   o.argv = {"gnuplot", "plot.gp"};            // argv[0] searched in PATH
//   o.working_directory = dir;
//   o.out = base::ChildStream::file(picture);   // or capture(limit), inherit(), ...
//   o.err = base::ChildStream::file(errors);
//   const base::ChildResult r = base::run_child(o);
//   if (!r.started) ... r.error, r.start_errno;  else r.exit_code, r.signal, r.timed_out, r.out, r.err
//
// Two ways of ending what the child started:
// - plain (keeper = false): the child alone, or its own process group
//   (own_process_group). At the deadline it gets SIGTERM (mpirun takes its
//   job down on SIGTERM), then SIGKILL kill_grace_seconds later; when the
//   child has exited its group gets SIGKILL, ending what it left behind.
//   A process that left the group (setsid) survives.
// - keeper (keeper = true): the child runs under a keeper, a forked process
//   that is a child subreaper (poems/base/subreaper.h). When the child
//   exits, at the deadline, or when this process dies, the keeper kills the
//   child's group (with own_process_group) and every process below it,
//   including those that left the group or session, reaps them all and
//   reports: nothing the child started outlives the run. At the deadline
//   everything gets SIGKILL at once (kill_grace_seconds does not apply).
//   ChildResult::killed names what was still running at the end.
//
// The keeper is forked from a possibly multi-threaded process: everything it
// and the child's side of the fork need is prepared before the fork, and
// they make only async-signal-safe calls (no allocation, no locks).
//
// Output passed through (inherit, to_stderr) is not flushed here: flush
// this process's stdio first if the order matters.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "poems/base/subreaper.h"

namespace poems::base {

// Where the child's stdin comes from.
enum class ChildInput {
  null_device,  // /dev/null
  inherit,      // this process's stdin
  text,         // ChildOptions::input_text, written while the output is read (no deadlock on large texts)
};

// Where one of the child's output streams goes.
enum class ChildOutputMode {
  capture,    // into ChildResult::out or ::err, at most `limit` bytes kept (the rest is read and dropped)
  inherit,    // this process's stdout or stderr
  file,       // `path` (from working_directory if relative), created or truncated, mode 0600
  discard,    // /dev/null
  to_stderr,  // stdout only: wherever the child's stderr goes
};

struct ChildStream {
  static constexpr std::size_t kDefaultLimit = std::size_t{4} << 20;  // 4 MiB
  ChildOutputMode mode = ChildOutputMode::capture;
  std::size_t limit = kDefaultLimit;  // capture: bytes kept
  std::string path;                   // file

  static ChildStream capture(std::size_t limit = kDefaultLimit) { return {ChildOutputMode::capture, limit, {}}; }
  static ChildStream inherit() { return {ChildOutputMode::inherit, 0, {}}; }
  static ChildStream file(std::string path) { return {ChildOutputMode::file, 0, std::move(path)}; }
  static ChildStream discard() { return {ChildOutputMode::discard, 0, {}}; }
  static ChildStream to_stderr() { return {ChildOutputMode::to_stderr, 0, {}}; }
};

struct ChildOptions {
  std::vector<std::string> argv;  // argv[0] is the program
  bool search_path = true;        // argv[0] without a '/' is looked up in PATH; false: argv[0] is the path
  // "NAME=value" entries added to this process's environment, each replacing
  // an entry of the same NAME.
  std::vector<std::string> environment;
  std::string working_directory;  // "": this process's
  double timeout_seconds = 0;     // > 0: the deadline, from the start; otherwise none
  double kill_grace_seconds = 2;  // plain mode: SIGTERM at the deadline, SIGKILL this much later (0: SIGKILL at once)
  // The child leads a new process group (and, with keeper, the keeper one
  // more): the deadline's signals reach the group, and the terminal's Ctrl-C
  // reaches only this process. false: the child stays in this process's
  // group, and Ctrl-C reaches it too (as under mpirun).
  bool own_process_group = false;
  bool keeper = false;  // end every process below the child, see above
  // true: the child starts with no signal blocked and SIGPIPE at its default
  // action; false: with the calling thread's signal mask and dispositions.
  bool reset_signals = true;
  ChildInput input = ChildInput::null_device;
  std::string input_text;  // with ChildInput::text
  ChildStream out, err;    // default: captured, 4 MiB each
};

struct ChildResult {
  bool started = false;     // the program ran; false: see error (and start_errno)
  int exit_code = -1;       // when it exited normally
  int signal = 0;           // when a signal ended it
  bool timed_out = false;   // killed at the deadline (keeper mode: exit_code and signal then stay unset)
  double wall_seconds = 0;  // from start to the end of the run
  std::string out, err;     // what it printed, with ChildOutputMode::capture
  // Why it could not be started ("PROGRAM: reason", "pipe: reason", ...),
  // or that the keeper was lost.
  std::string error;
  // The errno of starting the program itself (fork, exec, a redirection or
  // the working directory); 0 when the failure was the runner's own (pipes,
  // the keeper's fork).
  int start_errno = 0;
  bool keeper_lost = false;  // keeper mode: the keeper ended without reporting: how the child ended is unknown
  FoundProcesses killed;     // keeper mode: processes the keeper killed at the end (the child too, at the deadline)

  bool ok() const { return started && !timed_out && signal == 0 && exit_code == 0; }
  // "exit code 3", "killed by signal 9 (Killed)", "timed out after 10 s", "could not start: ..."
  std::string status_text() const;
};

// Runs the child to its end (or the deadline) and reaps it, and, in keeper
// mode, everything it started. Never throws for a program that cannot run:
// ChildResult::started is false. Writing input_text, SIGPIPE is blocked in
// the calling thread (a child that does not read its stdin gives EPIPE here).
ChildResult run_child(const ChildOptions& options);

}  // namespace poems::base
