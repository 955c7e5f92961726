// Ranks as OS processes: the controller (the process that runs the engine)
// forks one process per rank before the engine starts; each waits for its
// turn on a futex word in the shared region, runs until its program blocks
// in an MPI call (or ends), and hands the turn back. Exactly one process runs
// at a time, in the order the engine decides, so runs stay deterministic and
// a rank's measured CPU time is its own. A rank that dies (a crash, exit())
// wakes the controller through SIGCHLD.
#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "runtime_impl.h"

namespace poems::direct::detail {

namespace {

std::int32_t g_self = -1;                    // this process's rank (-1: not a rank process)
std::uint32_t* g_wake_word = nullptr;        // the controller's futex word (SIGCHLD bumps it)
volatile sig_atomic_t g_child_events = 0;    // SIGCHLDs seen by the controller
struct sigaction g_previous_sigchld {};

long futex(std::uint32_t* word, int op, std::uint32_t value, const timespec* timeout = nullptr) {
  return ::syscall(SYS_futex, word, op, value, timeout, nullptr, 0);
}

void wake_word(std::uint32_t* word) {
  std::atomic_ref<std::uint32_t>(*word).fetch_add(1);
  futex(word, FUTEX_WAKE, 1);
}

extern "C" void on_sigchld(int) {
  const int saved = errno;
  g_child_events = g_child_events + 1;
  if (g_wake_word) wake_word(g_wake_word);
  errno = saved;
}

std::string describe_signal(int sig) {
  const char* name = ::strsignal(sig);
  return "signal " + std::to_string(sig) + (name ? std::string(" (") + name + ")" : std::string());
}

}  // namespace

std::int32_t self_rank_process() { return g_self; }

int Runtime::start_processes() {
  controller_ = ::getpid();
  g_wake_word = &wake_;
  struct sigaction sa {};
  sa.sa_handler = on_sigchld;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_NOCLDSTOP;
  ::sigaction(SIGCHLD, &sa, &g_previous_sigchld);
  std::fflush(nullptr);  // nothing buffered is written twice
  for (std::uint32_t r = 0; r < programs_; ++r) {
    const pid_t pid = ::fork();
    if (pid < 0) {
      const int err = errno;
      stopping_ = true;
      for (std::uint32_t i = 0; i < r; ++i) ::kill(ranks_[i].pid, SIGKILL);
      for (std::uint32_t i = 0; i < r; ++i) ::waitpid(ranks_[i].pid, nullptr, 0);
      throw std::runtime_error("cannot start rank " + std::to_string(r) + " as a process: " + std::strerror(err) +
                               " (see docs/direct.md: the process limit; --isolation threads runs ranks as threads)");
    }
    if (pid == 0) {
      g_self = static_cast<std::int32_t>(r);
      g_wake_word = nullptr;
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // the controller's end is the rank's
      if (::getppid() != controller_) std::_Exit(1);
      ::sigaction(SIGCHLD, &g_previous_sigchld, nullptr);
      if (r > 0) {  // as under mpirun: standard input goes to rank 0 only
        const int null = ::open("/dev/null", O_RDONLY);
        if (null >= 0) {
          ::dup2(null, STDIN_FILENO);
          ::close(null);
        }
      }
      Rank& k = ranks_[r];
      while (std::atomic_ref<std::uint32_t>(k.go).load() == 0) futex(&k.go, FUTEX_WAIT, 0);
      if (stopping_) std::_Exit(0);
      start_cpu_mark();
      if (program_) rank_process_main(r);
      return static_cast<int>(r);  // into the executable's main
    }
    ranks_[r].pid = pid;
  }
  return -1;
}

void Runtime::rank_process_main(std::uint32_t r) {
  Rank& k = ranks_[r];
  for (const std::string& a : args_) k.args.emplace_back(a.c_str());
  for (sstring& a : k.args) k.argv.push_back(a.data());
  k.argv.push_back(nullptr);
  int code = 0;
  try {
    code = program_(static_cast<int>(k.argv.size() - 1), k.argv.data());
  } catch (const std::exception& e) {
    stop("rank " + std::to_string(r) + ": uncaught exception: " + e.what());
    code = 1;
  }
  rank_exiting(code);
  std::fflush(nullptr);
  std::_Exit(code & 0xff);
}

void Runtime::process_resume(Rank& k) {
  if (k.pid <= 0) {
    k.state = Rank::State::Finished;
    return;
  }
  std::atomic_ref<std::int32_t>(yielded_).store(-1);
  std::atomic_ref<std::uint32_t>(k.go).store(1);
  futex(&k.go, FUTEX_WAKE, 1);
  sig_atomic_t events = g_child_events;
  for (;;) {
    const std::uint32_t seen = std::atomic_ref<std::uint32_t>(wake_).load();
    if (std::atomic_ref<std::int32_t>(yielded_).load() == static_cast<std::int32_t>(k.world)) return;
    // Woken without a hand-back: a child ended. (A one-second timeout is the safety net.)
    if (events != g_child_events) {
      events = g_child_events;
      int status = 0;
      const pid_t p = ::waitpid(k.pid, &status, WNOHANG);
      if (p == k.pid) {
        reap(k, status);
        return;
      }
    }
    const timespec second{1, 0};
    if (futex(&wake_, FUTEX_WAIT, seen, &second) != 0 && errno == ETIMEDOUT) {
      int status = 0;
      const pid_t p = ::waitpid(k.pid, &status, WNOHANG);
      if (p == k.pid) {
        reap(k, status);
        return;
      }
    }
  }
}

void Runtime::process_suspend(Rank& k) {
  std::atomic_ref<std::uint32_t>(k.go).store(0);
  std::atomic_ref<std::int32_t>(yielded_).store(static_cast<std::int32_t>(k.world));
  wake_word(&wake_);
  while (std::atomic_ref<std::uint32_t>(k.go).load() == 0) futex(&k.go, FUTEX_WAIT, 0);
}

void Runtime::reap(Rank& k, int status) {
  const std::string who = "rank " + std::to_string(k.world);
  k.pid = -k.pid;  // reaped
  k.state = Rank::State::Finished;
  if (stopping_ && !k.exiting) return;  // it ended because the run stopped
  if (WIFSIGNALED(status)) {
    stop(who + " was killed by " + describe_signal(WTERMSIG(status)));
    return;
  }
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (k.exiting) return;  // its exit handler said what there was to say
  // Ended without the exit handler (_exit, or a library's own exit path).
  k.exit_code = code;
  if (k.initialized && !k.finalized)
    stop(who + " exited with status " + std::to_string(code) + " before MPI_Finalize");
  else if (code != 0)
    stop(who + " exited with status " + std::to_string(code));
}

DirectResult run_processes(const Program& program, const std::vector<std::string>& args,
                           const DirectOptions& options) {
  SharedRegion::create(options.shared_bytes != 0 ? options.shared_bytes : default_shared_bytes());
  Runtime* rt = nullptr;
  DirectResult result;
  try {
    rt = shared_new<Runtime>(program, args, options);
    rt->start_processes();  // the ranks run `program` and never return here
    result = rt->run();
  } catch (...) {
    finish_processes(rt);
    SharedRegion::destroy();
    throw;
  }
  finish_processes(rt);
  SharedRegion::destroy();
  return result;
}

void finish_processes(Runtime* rt) {
  if (rt) {
    rt->reap_all();
    shared_delete(rt);
  }
  ::sigaction(SIGCHLD, &g_previous_sigchld, nullptr);
  g_wake_word = nullptr;
}

void Runtime::reap_all() {
  for (Rank& k : ranks_) {
    if (k.companion || k.pid <= 0) continue;
    ::kill(k.pid, SIGKILL);
    ::waitpid(k.pid, nullptr, 0);
    k.pid = -k.pid;
  }
}

std::size_t default_shared_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  const std::size_t ram = pages > 0 && page > 0 ? static_cast<std::size_t>(pages) * static_cast<std::size_t>(page)
                                                : std::size_t{16} << 30;
  return std::max(ram, std::size_t{1} << 30);
}

}  // namespace poems::direct::detail
