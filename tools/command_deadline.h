// A wall-clock limit on a whole command (`--timeout` of simulate and
// analyze): an input that blocks (a FIFO given as a file, a file system that
// stops answering) or a model far larger than meant must not run forever.
#pragma once

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace poems::cli {

// While alive, a watcher thread waits `seconds` (<= 0: no limit); if the
// command has not finished by then, it prints one line naming the command and
// the option and ends the process with exit code 3 (an evaluation that did not
// finish). The knowledge base needs no care: every write is one SQLite
// transaction, so what was stored before stays, and nothing is half stored.
class CommandDeadline {
 public:
  CommandDeadline(double seconds, std::string command);
  ~CommandDeadline();
  CommandDeadline(const CommandDeadline&) = delete;
  CommandDeadline& operator=(const CommandDeadline&) = delete;

 private:
  std::mutex mutex_;
  std::condition_variable done_;
  bool finished_ = false;
  std::thread watcher_;
};

}  // namespace poems::cli
