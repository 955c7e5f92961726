// Ending every process a run started (a direct-execution program and its
// ranks, an external processor model's command), including those that left
// its process group or session (setsid, a daemon's double fork).
//
// A process group is not enough: setsid leaves it. So the process that
// starts them makes itself a child subreaper (PR_SET_CHILD_SUBREAPER):
// every process below it that loses its parent becomes its child instead of
// init's. At the end it kills its children, reaps them, and repeats until it
// has none (a killed process's own children reach it a moment later): then
// nothing it started survives.
//
// Async-signal-safe (system calls only, no allocation, no locks): usable in
// a process forked from a multi-threaded one.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

namespace poems::base {

// A process found running below the caller: its pid and its name (comm).
struct FoundProcess {
  pid_t pid = 0;
  char name[16] = {};
};

// What kill_all_descendants found: how many processes it killed, and the
// first kCapacity of them by name.
struct FoundProcesses {
  static constexpr int kCapacity = 8;
  int count = 0;
  int stored = 0;
  FoundProcess first[kCapacity];
};

namespace reaper_detail {

inline void remember(FoundProcesses& found, pid_t pid, const char* name, int name_length) {
  for (int i = 0; i < found.stored; ++i)
    if (found.first[i].pid == pid) return;  // killed in an earlier round, not dead yet
  if (found.stored == FoundProcesses::kCapacity) return;
  FoundProcess& p = found.first[found.stored++];
  p.pid = pid;
  int n = 0;
  for (; n < name_length && n < static_cast<int>(sizeof p.name) - 1; ++n) p.name[n] = name[n];
  p.name[n] = '\0';
}

}  // namespace reaper_detail

// Sends SIGKILL to every live child of the calling process but `spare`
// (found by its parent in /proc/PID/stat), noting them in `found`; returns
// how many it signalled.
inline int kill_children_of_self(FoundProcesses& found, pid_t spare = 0) {
  const pid_t self = ::getpid();
  const int dir = ::open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return 0;
  int signalled = 0;
  alignas(8) char entries[8192];
  for (;;) {
    const long n = ::syscall(SYS_getdents64, dir, entries, sizeof entries);
    if (n <= 0) break;
    for (long offset = 0; offset < n;) {
      struct Entry {
        std::uint64_t ino;
        std::int64_t off;
        unsigned short reclen;
        unsigned char type;
        char name[1];
      };
      const auto* e = reinterpret_cast<const Entry*>(entries + offset);
      offset += e->reclen;
      pid_t pid = 0;
      const char* c = e->name;
      for (; *c >= '0' && *c <= '9'; ++c) pid = pid * 10 + (*c - '0');
      if (*c != '\0' || pid <= 0 || pid == self || pid == spare) continue;
      char path[64] = "/proc/";
      int len = 6;
      for (const char* q = e->name; *q && len < 40; ++q) path[len++] = *q;
      for (const char* q = "/stat"; *q; ++q) path[len++] = *q;
      path[len] = '\0';
      const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
      if (fd < 0) continue;
      char stat[512];
      const ssize_t got = ::read(fd, stat, sizeof stat - 1);
      ::close(fd);
      if (got <= 0) continue;
      stat[got] = '\0';
      // "pid (comm) S ppid ...": comm may hold spaces and parentheses; the last ')' ends it.
      const char* open_paren = nullptr;
      const char* close_paren = nullptr;
      for (const char* q = stat; *q; ++q) {
        if (*q == '(' && !open_paren) open_paren = q;
        if (*q == ')') close_paren = q;
      }
      if (!open_paren || !close_paren || close_paren < open_paren || close_paren[1] != ' ' || close_paren[2] == '\0' ||
          close_paren[3] != ' ')
        continue;
      if (close_paren[2] == 'Z') continue;  // dead already: reaped below
      pid_t parent = 0;
      for (const char* q = close_paren + 4; *q >= '0' && *q <= '9'; ++q) parent = parent * 10 + (*q - '0');
      if (parent != self) continue;
      ::kill(pid, SIGKILL);
      reaper_detail::remember(found, pid, open_paren + 1, static_cast<int>(close_paren - open_paren - 1));
      ++signalled;
    }
  }
  ::close(dir);
  return signalled;
}

// Kills and reaps every descendant of the calling process, which must be a
// child subreaper for orphans to reach it; `found.count` tells how many
// were still running (those that had ended by themselves are only reaped).
// Returns when the caller has no child left.
inline void kill_all_descendants(FoundProcesses& found) {
  for (int round = 0; round < 100000; ++round) {
    kill_children_of_self(found);
    pid_t r;
    int status = 0;
    while ((r = ::waitpid(-1, &status, WNOHANG | __WALL)) > 0)
      if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) ++found.count;
    if (r < 0 && errno != EINTR) return;  // ECHILD: no children, so no descendants either
    const timespec pause{0, 1'000'000};   // a killed parent's children reach us in a moment
    ::nanosleep(&pause, nullptr);
  }
}

// A descriptor that polls readable when `child` exits (pidfd_open), or -1
// where the kernel has none: the keepers then poll on a short timeout.
inline int exit_descriptor(pid_t child) {
#ifdef SYS_pidfd_open
  return static_cast<int>(::syscall(SYS_pidfd_open, child, 0));
#else
  (void)child;
  return -1;
#endif
}

}  // namespace poems::base
