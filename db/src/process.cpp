// Claimant identity and liveness, for the resume rule.
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>

#include "internal.h"

namespace poems::db::detail {

namespace {

// Field 22 of /proc/PID/stat (start time in clock ticks since boot); none for
// a missing or zombie process. The command name (field 2) may hold spaces and
// parentheses, so fields are counted after its last ')'.
std::optional<std::int64_t> read_start_ticks(std::int64_t pid, bool* zombie) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  if (!in) return std::nullopt;
  std::string line;
  std::getline(in, line);
  std::size_t close = line.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(line.substr(close + 1));
  std::string field;
  for (int n = 3; n <= 22 && fields >> field; ++n) {
    if (n == 3 && zombie) *zombie = field == "Z" || field == "X";
    if (n == 22) return std::stoll(field);
  }
  return std::nullopt;
}

}  // namespace

const ProcessIdentity& this_process() {
  // Per pid: a forked child must not inherit its parent's identity.
  thread_local ProcessIdentity identity;
  std::int64_t pid = ::getpid();
  if (identity.pid != pid) {
    char host[256] = {};
    if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
    identity.host = host;
    identity.pid = pid;
    identity.start_ticks = read_start_ticks(pid, nullptr);
  }
  return identity;
}

bool process_alive(std::int64_t pid, std::optional<std::int64_t> start_ticks) {
  if (pid <= 0) return false;
  bool zombie = false;
  std::optional<std::int64_t> ticks = read_start_ticks(pid, &zombie);
  if (ticks) return !zombie && (!start_ticks || *ticks == *start_ticks);
  if (std::ifstream("/proc/self/stat").good()) return false;  // /proc works: no entry means gone
  return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

}  // namespace poems::db::detail
