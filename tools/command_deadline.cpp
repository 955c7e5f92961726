#include "command_deadline.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace poems::cli {

CommandDeadline::CommandDeadline(double seconds, std::string command) {
  if (!(seconds > 0)) return;
  watcher_ = std::thread([this, seconds, command = std::move(command)] {
    std::unique_lock lock(mutex_);
    if (done_.wait_for(lock, std::chrono::duration<double>(seconds), [this] { return finished_; })) return;
    char line[256];
    const int n = std::snprintf(line, sizeof line,
                                "poems: error: %s did not finish within --timeout %g s (give a larger --timeout, "
                                "or 0 for no limit)\n",
                                command.c_str(), seconds);
    // The main thread may hold any lock (stdio's, the allocator's): write(2)
    // and _exit(2) take none.
    const std::size_t length = n < 0 ? 0 : std::min(static_cast<std::size_t>(n), sizeof line - 1);
    (void)!::write(STDERR_FILENO, line, length);
    ::_exit(3);
  });
}

CommandDeadline::~CommandDeadline() {
  if (!watcher_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    finished_ = true;
  }
  done_.notify_all();
  watcher_.join();
}

}  // namespace poems::cli
