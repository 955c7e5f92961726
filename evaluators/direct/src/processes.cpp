// Ranks as OS processes: the controller (the process that runs the engine)
// forks one process per rank before the engine starts; each waits for its
// turn on a futex word in the shared region, runs until its program blocks
// in an MPI call (or ends), and hands the turn back through an eventfd.
// Exactly one process runs at a time, in the order the engine decides, so
// runs stay deterministic and a rank's measured CPU time is its own. A rank
// that dies (a crash, exit()) wakes the controller through SIGCHLD.
//
// The ranks' standard output and error go through two pipes the controller
// drains while it waits: what arrives belongs to the rank that runs, and is
// passed on line by line, so lines of different ranks never mix (as mpirun
// forwards each rank's output).
//
// Launched as the program's own process (poems direct), the controller is a
// child subreaper (poems/base/subreaper.h): a process a rank leaves
// behind (a daemon, a setsid'ed grandchild) becomes its child and is killed
// when the run ends; the result says so. A process a rank forks is no rank:
// if it calls MPI, the run stops naming the rank that forked it.
#include <dirent.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
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
#include <string>
#include <vector>

#include "poems/base/subreaper.h"
#include "runtime_impl.h"
#include "virtual_time.h"

namespace poems::direct::detail {

namespace {

std::int32_t g_self = -1;                  // this process's rank (-1: not a rank process)
std::int32_t g_forked_from = -1;           // a process a rank forked: that rank (-1: not one)
bool g_subreaper = false;                  // the controller adopts the processes the ranks leave behind
int g_wake_fd = -1;                        // eventfd: a rank handed the turn back, or a child ended
volatile sig_atomic_t g_child_events = 0;  // SIGCHLDs seen by the controller
sig_atomic_t g_child_events_seen = 0;      // ranks at once: as many as reap_ended has looked after
struct sigaction g_previous_sigchld {};
std::size_t g_ranks_peak_rss = 0;  // the reaped rank processes' peak RSS, summed (bytes)
cpu_set_t g_affinity;              // the controller's CPUs before the run (Handover::OneCpu)
bool g_affinity_saved = false;

// The controller's side of the ranks' output: the pipes' read ends and each
// rank's unfinished line per stream.
struct Output {
  int read_fd[2] = {-1, -1};  // stdout, stderr
  std::vector<std::string> partial[2];
  bool hung_up[2] = {false, false};  // no writer left (ranks at once stop polling it)
};
Output* g_output = nullptr;

long futex(std::uint32_t* word, int op, std::uint32_t value, const timespec* timeout = nullptr) {
  return ::syscall(SYS_futex, word, op, value, timeout, nullptr, 0);
}

// Gives rank `k` the go (its futex word) and wakes it if it sleeps on it.
void let_run(Rank& k) {
  std::atomic_ref<std::uint32_t>(k.go).store(1);
  futex(&k.go, FUTEX_WAKE, 1);
}

// Spins up to `budget_ns` for `ready()`, yielding the CPU now and then so
// that a process waiting for it runs; true if `ready()` came true. Waking a
// process that sleeps on another CPU costs this 2-vCPU VM about 40 us (the
// hypervisor wakes the idle vCPU), a hand-over caught spinning 0.5 us
// (docs/direct.md, "Hand-overs").
template <typename Ready>
bool spin_until(Ready ready, std::uint64_t budget_ns) {
  if (budget_ns == 0) return ready();
  std::uint64_t start = 0;
  for (std::uint32_t round = 0;; ++round) {
    if (ready()) return true;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
    if ((round & 63) != 63) continue;
    timespec ts{};
    real_clock_gettime(CLOCK_MONOTONIC, &ts);
    const std::uint64_t now =
        static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<std::uint64_t>(ts.tv_nsec);
    if (start == 0) start = now;
    if (now - start >= budget_ns) return ready();
    ::sched_yield();
  }
}

// waitpid that also adds the child's peak RSS to g_ranks_peak_rss.
pid_t reap_rank(pid_t pid, int* status, int options) {
  rusage usage{};
  const pid_t got = ::wait4(pid, status, options, &usage);
  if (got == pid) g_ranks_peak_rss += static_cast<std::size_t>(usage.ru_maxrss) * 1024;
  return got;
}

void signal_wake() {
  const std::uint64_t one = 1;
  [[maybe_unused]] const ssize_t n = ::write(g_wake_fd, &one, sizeof one);
}

extern "C" void on_sigchld(int) {
  const int saved = errno;
  g_child_events = g_child_events + 1;
  if (g_wake_fd >= 0) signal_wake();
  errno = saved;
}

void write_all(int fd, const char* data, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, data, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    data += w;
    n -= static_cast<std::size_t>(w);
  }
}

// Moves what rank `r` wrote from the pipes to the controller's own streams, whole lines only.
void drain_output(std::uint32_t r) {
  if (!g_output) return;
  char buf[65536];
  for (int s = 0; s < 2; ++s) {
    std::string& line = g_output->partial[s][r];
    for (;;) {
      const ssize_t n = ::read(g_output->read_fd[s], buf, sizeof buf);
      if (n <= 0) break;
      line.append(buf, static_cast<std::size_t>(n));
    }
    const std::size_t end = line.rfind('\n');
    if (end == std::string::npos) continue;
    write_all(s == 0 ? STDOUT_FILENO : STDERR_FILENO, line.data(), end + 1);
    line.erase(0, end + 1);
  }
}

// The unfinished lines of rank `r` (it ended), or of every rank.
void flush_output(std::int64_t r) {
  if (!g_output) return;
  for (int s = 0; s < 2; ++s)
    for (std::size_t i = 0; i < g_output->partial[s].size(); ++i) {
      if (r >= 0 && i != static_cast<std::size_t>(r)) continue;
      std::string& line = g_output->partial[s][i];
      write_all(s == 0 ? STDOUT_FILENO : STDERR_FILENO, line.data(), line.size());
      line.clear();
    }
}

std::string describe_signal(int sig) {
  const char* name = ::strsignal(sig);
  return "signal " + std::to_string(sig) + (name ? std::string(" (") + name + ")" : std::string());
}

// In the child of every fork() (pthread_atfork): a child of a rank is not
// that rank. With processes it stops being a rank process at once (its
// clocks are real, its exit is not the rank's); any MPI call it makes
// reports the fork (Runtime::forked_call).
extern "C" void on_fork_child() {
  if (g_self >= 0) {
    g_forked_from = g_self;
    g_self = -1;
    g_own_rank = nullptr;
    return;
  }
  Runtime* rt = Runtime::active();
  if (rt && rt->threads() && rt->running()) g_forked_from = static_cast<std::int32_t>(rt->current().world);
}

}  // namespace

std::int32_t self_rank_process() { return g_self; }
std::int32_t forked_from_rank() { return g_forked_from; }

void watch_forks() {
  static const bool registered = ::pthread_atfork(nullptr, nullptr, on_fork_child) == 0;
  (void)registered;
}

std::string forked_call_error(std::int32_t rank, const char* call) {
  return "rank " + std::to_string(rank) + " forked: a child process called " + call +
         " (only a rank's own process may call MPI; a process it forks may compute, exec another program or exit)";
}

static std::string second_thread_error(std::int32_t rank, const char* call) {
  return (rank >= 0 ? "rank " + std::to_string(rank) : std::string("a rank")) + ": a second thread called " + call +
         " while another thread of the rank was in MPI or waited for its turn (direct execution provides "
         "MPI_THREAD_SERIALIZED: one thread of a rank in MPI at a time; MPI_THREAD_MULTIPLE is not supported)";
}

// The calling process touches nothing of the run but these words (its rank
// may be running at the same time): the first report is kept; the controller
// stops the run when it sees it. Then the process ends.
void Runtime::report_foreign_call(std::int32_t rank, bool second_thread, const char* call) {
  std::int32_t unclaimed = 0;
  if (std::atomic_ref<std::int32_t>(forked_claim_).compare_exchange_strong(unclaimed, 1)) {
    std::size_t n = 0;
    for (; call[n] != '\0' && n + 1 < sizeof forked_call_; ++n) forked_call_[n] = call[n];
    forked_call_[n] = '\0';
    forked_thread_ = second_thread ? 1 : 0;
    std::atomic_ref<std::int32_t>(forked_rank_).store(rank);
    if (g_wake_fd >= 0) signal_wake();
  }
  ::_exit(127);
}

void Runtime::forked_call(const char* call) {
  const std::int32_t rank = g_forked_from;
  if (threads()) {  // the child has a private copy of the runtime: nobody to tell but the user
    std::fprintf(stderr, "poems: %s\n", forked_call_error(rank, call).c_str());
    std::fflush(nullptr);
    ::_exit(127);
  }
  report_foreign_call(rank, false, call);
}

void Runtime::second_thread_call(const char* call) {
  if (threads()) {  // one process: the run ends with it
    std::fprintf(stderr, "poems: error: %s\n", second_thread_error(-1, call).c_str());
    std::fflush(nullptr);
    ::_exit(3);
  }
  std::fflush(nullptr);  // what the rank printed (its other thread is in MPI, not in stdio)
  report_foreign_call(self_rank_process(), true, call);
}

bool Runtime::fork_reported() {
  const std::int32_t rank = std::atomic_ref<std::int32_t>(forked_rank_).load();
  if (rank < 0 || fork_handled_) return false;
  fork_handled_ = true;
  // The cause of whatever else went wrong after it: its message wins.
  error_ = (forked_thread_ ? second_thread_error(rank, forked_call_) : forked_call_error(rank, forked_call_)).c_str();
  stopping_ = true;
  return true;
}

// Where the controller and the rank processes (which inherit it) run. One
// CPU: a hand-over is a switch on it, no wake-up of another CPU (on this
// VM 10-15 us a switch against 38-57 us; docs/direct.md, "Hand-overs").
// The CPU is the one the run starts on, which the kernel chose; the
// controller's own mask comes back when the run ends (finish_processes).
void Runtime::place_on_cpus() {
  spin_ns_ = 0;
  g_affinity_saved = false;
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (::sched_getaffinity(0, sizeof allowed, &allowed) != 0 || CPU_COUNT(&allowed) < 2) return;  // one already
  if (concurrent_) {  // the first host_cores CPUs, the one the run starts on first
    if (static_cast<std::uint32_t>(CPU_COUNT(&allowed)) <= options_.host_cores) return;
    cpu_set_t some;
    CPU_ZERO(&some);
    const int here = ::sched_getcpu();
    if (here >= 0 && here < CPU_SETSIZE && CPU_ISSET(here, &allowed)) CPU_SET(here, &some);
    for (int cpu = 0; cpu < CPU_SETSIZE && static_cast<std::uint32_t>(CPU_COUNT(&some)) < options_.host_cores; ++cpu)
      if (CPU_ISSET(cpu, &allowed)) CPU_SET(cpu, &some);
    if (::sched_setaffinity(0, sizeof some, &some) == 0) {
      g_affinity = allowed;
      g_affinity_saved = true;
    }
    return;
  }
  if (options_.handover == Handover::Spin) spin_ns_ = 50'000;
  if (options_.handover != Handover::OneCpu) return;
  int cpu = ::sched_getcpu();
  if (cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &allowed))
    for (cpu = 0; cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &allowed); ++cpu) {
    }
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  if (::sched_setaffinity(0, sizeof one, &one) == 0) {
    g_affinity = allowed;
    g_affinity_saved = true;
  }
}

int Runtime::start_processes() {
  controller_ = ::getpid();
  place_on_cpus();
  g_wake_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (g_wake_fd < 0) throw std::runtime_error(std::string("cannot make an eventfd: ") + std::strerror(errno));
  int out[2] = {-1, -1}, err[2] = {-1, -1};
  if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("cannot make the output pipes: ") + std::strerror(errno));
  for (int fd : {out[0], err[0]}) {
    ::fcntl(fd, F_SETPIPE_SZ, 1 << 20);  // fewer waits on long outputs (best effort)
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  }
  g_output = new Output();
  g_output->read_fd[0] = out[0];
  g_output->read_fd[1] = err[0];
  g_output->partial[0].resize(programs_);
  g_output->partial[1].resize(programs_);
  struct sigaction sa {};
  sa.sa_handler = on_sigchld;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_NOCLDSTOP;
  ::sigaction(SIGCHLD, &sa, &g_previous_sigchld);
  std::fflush(nullptr);  // nothing buffered is written twice
  // The program's own process (poems direct): what the ranks leave behind is ours to end.
  if (!program_ && ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0) g_subreaper = true;
  for (std::uint32_t r = 0; r < programs_; ++r) {
    const pid_t pid = ::fork();
    if (pid < 0) {
      const int e = errno;
      stopping_ = true;
      for (std::uint32_t i = 0; i < r; ++i) ::kill(ranks_[i].pid, SIGKILL);
      for (std::uint32_t i = 0; i < r; ++i) ::waitpid(ranks_[i].pid, nullptr, 0);
      throw std::runtime_error("cannot start rank " + std::to_string(r) + " as a process: " + std::strerror(e) +
                               " (see docs/direct.md: the process limit; --isolation threads runs ranks as threads)");
    }
    if (pid == 0) {
      g_self = static_cast<std::int32_t>(r);
      g_own_rank = &ranks_[r];
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // the controller's end is the rank's
      if (::getppid() != controller_) std::_Exit(1);
      ::sigaction(SIGCHLD, &g_previous_sigchld, nullptr);
      ::dup2(out[1], STDOUT_FILENO);
      ::dup2(err[1], STDERR_FILENO);
      for (int fd : {out[0], out[1], err[0], err[1]}) ::close(fd);
      g_output = nullptr;  // (the controller's; this process only writes)
      // Ranks at once share the pipes: whole lines keep them apart.
      if (concurrent_) std::setvbuf(stdout, nullptr, _IOLBF, 0);
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
  ::close(out[1]);
  ::close(err[1]);
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
    const bool lock = concurrent_ && g_lock_depth == 0;  // (ranks at once: the run's state is the lock's)
    if (lock) lock_state();
    stop("rank " + std::to_string(r) + ": uncaught exception: " + e.what());
    if (lock) unlock_state();
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
  std::atomic_ref<std::int32_t> yielded(yielded_);
  yielded.store(-1);
  const sig_atomic_t events = g_child_events;  // before the rank runs: it may end at once
  let_run(k);
  const auto handed_back = [&] { return yielded.load() == static_cast<std::int32_t>(k.world); };
  if (spin_until(handed_back, spin_ns_)) {
    drain_output(k.world);
    return;
  }
  std::atomic_ref<std::int32_t> sleeps(controller_sleeps_);
  pollfd fds[3] = {{g_wake_fd, POLLIN, 0}, {g_output->read_fd[0], POLLIN, 0}, {g_output->read_fd[1], POLLIN, 0}};
  for (;;) {
    // Dekker's handshake with process_suspend: either the rank sees that we
    // sleep and writes the eventfd, or we see its hand-back here.
    sleeps.store(1);
    if (handed_back()) break;
    // A one-second timeout is the safety net.
    const int ready = ::poll(fds, 3, 1000);
    sleeps.store(0);
    for (int i = 1; i < 3; ++i)
      if (fds[i].revents & (POLLHUP | POLLERR)) fds[i].fd = -1;   // no writer left: stop asking
    if (fds[1].revents || fds[2].revents) drain_output(k.world);  // a full pipe would stop the rank
    if (ready > 0 && (fds[0].revents & POLLIN)) {
      std::uint64_t count;
      [[maybe_unused]] const ssize_t n = ::read(g_wake_fd, &count, sizeof count);
    }
    if (fork_reported()) {  // a process some rank forked called MPI: the run stops, `k` with it
      ::kill(k.pid, SIGKILL);
      reap_rank(k.pid, nullptr, 0);
      drain_output(k.world);
      flush_output(k.world);
      k.pid = -k.pid;
      k.state = Rank::State::Finished;
      return;
    }
    if (handed_back()) break;
    // Woken without a hand-back: a child may have ended.
    if (events != g_child_events || ready == 0) {
      int status = 0;
      if (reap_rank(k.pid, &status, WNOHANG) == k.pid) {
        drain_output(k.world);
        flush_output(k.world);
        reap(k, status);
        return;
      }
    }
  }
  sleeps.store(0);
  drain_output(k.world);
}

void Runtime::wake_controller() {
  if (std::atomic_ref<std::int32_t>(controller_sleeps_).load() != 0) signal_wake();
}

void Runtime::process_suspend(Rank& k) {
  std::atomic_ref<std::uint32_t> go(k.go);
  go.store(0);
  std::atomic_ref<std::int32_t>(yielded_).store(static_cast<std::int32_t>(k.world));
  wake_controller();
  forget_cpu_estimate();  // it waits or sleeps: its wall time runs on without its computation
  // A rank whose other threads may run sleeps at once: the controller waits
  // for them to sleep too (settle), and a spinning driver would look busy.
  if (spin_until([&] { return go.load() != 0; }, k.multiple ? 0 : spin_ns_)) return;
  while (go.load() == 0) futex(&k.go, FUTEX_WAIT, 0);
}

// ---- ranks at once (DirectOptions::host_cores > 1) ----

void Runtime::lock_state() {
  if (::pthread_mutex_lock(&state_lock_) == EOWNERDEAD) ::pthread_mutex_consistent(&state_lock_);
}

void Runtime::unlock_state() { ::pthread_mutex_unlock(&state_lock_); }

void Runtime::controller_lock() {
  for (;;) {
    int rc = ::pthread_mutex_trylock(&state_lock_);
    if (rc == EBUSY) {
      timespec until{};
      real_clock_gettime(CLOCK_REALTIME, &until);
      until.tv_nsec += 2'000'000;
      if (until.tv_nsec >= 1'000'000'000) {
        until.tv_nsec -= 1'000'000'000;
        ++until.tv_sec;
      }
      rc = ::pthread_mutex_timedlock(&state_lock_, &until);
    }
    if (rc == 0) return;
    if (rc == EOWNERDEAD) {  // a rank died inside a call: its end stops the run (reap)
      ::pthread_mutex_consistent(&state_lock_);
      return;
    }
    // A rank holding the lock may be writing to a full pipe.
    drain_output(0);
  }
}

void Runtime::tell_controller(const Rank* k) {
  std::atomic_ref<std::int32_t> awaited(awaited_);
  if (k && awaited.load() != static_cast<std::int32_t>(k->world)) return;
  awaited.store(-1);
  if (g_wake_fd >= 0) signal_wake();
}

void Runtime::release_rank(Rank& k) {
  if (k.pid <= 0) {
    k.state = Rank::State::Finished;
    return;
  }
  ++switches_;
  k.state = Rank::State::Ready;
  let_run(k);
}

void Runtime::reap_ended(bool always) {
  const sig_atomic_t events = g_child_events;
  if (!always && events == g_child_events_seen) return;
  g_child_events_seen = events;
  for (std::uint32_t r = 0; r < programs_; ++r) {
    Rank& k = ranks_[r];
    if (k.pid <= 0) continue;
    int status = 0;
    if (reap_rank(k.pid, &status, WNOHANG) == k.pid) {
      drain_output(0);
      reap(k, status);
    }
  }
}

void Runtime::await_rank(Rank& k) {
  if (k.state == Rank::State::NotStarted ||
      (k.state == Rank::State::Ready && std::atomic_ref<std::uint32_t>(k.go).load() == 0))
    release_rank(k);
  // A rank that ended since the controller last looked (its SIGCHLD may
  // have come while the engine was busy) is reaped before anyone waits for it.
  reap_ended(false);
  if (k.state == Rank::State::Finished) return;
  std::atomic_ref<std::int32_t>(awaited_).store(static_cast<std::int32_t>(k.world));
  unlock_state();
  pollfd fds[3] = {{g_wake_fd, POLLIN, 0},
                   {g_output->hung_up[0] ? -1 : g_output->read_fd[0], POLLIN, 0},
                   {g_output->hung_up[1] ? -1 : g_output->read_fd[1], POLLIN, 0}};
  // A one-second timeout is the safety net.
  const int ready = ::poll(fds, 3, 1000);
  if (ready > 0 && (fds[0].revents & POLLIN)) {
    std::uint64_t count;
    [[maybe_unused]] const ssize_t n = ::read(g_wake_fd, &count, sizeof count);
  }
  if (fds[1].revents || fds[2].revents) drain_output(0);
  for (int i = 1; i < 3; ++i)  // no writer left: stop asking
    if (fds[i].revents & (POLLHUP | POLLERR)) g_output->hung_up[i - 1] = true;
  controller_lock();
  std::atomic_ref<std::int32_t>(awaited_).store(-1);
  fork_reported();         // stops the run if a forked process or a second thread called MPI
  reap_ended(ready == 0);  // (after the timeout, look in any case)
}

void Runtime::concurrent_suspend(Rank& k) {
  std::atomic_ref<std::uint32_t> go(k.go);
  go.store(0);
  tell_controller(&k);
  forget_cpu_estimate();
  unlock_state();
  // (end_concurrent_ranks sets stopping_ before it wakes the ranks: either it
  // saw go 0 and wakes this one, or this one sees stopping_ now.)
  std::atomic_ref<bool> stopping(stopping_);
  while (go.load() == 0 && !stopping.load()) futex(&k.go, FUTEX_WAIT, 0);
  if (stopping.load()) {  // the run stopped: end here, the lock not held
    std::fflush(nullptr);
    std::_Exit(0);
  }
  lock_state();
}

void Runtime::end_concurrent_ranks() {
  std::atomic_ref<bool>(stopping_).store(true);
  for (std::uint32_t r = 0; r < programs_; ++r) {
    Rank& k = ranks_[r];
    if (k.pid > 0) let_run(k);
  }
  // Those that sleep or call MPI end at once; one that computes on is given
  // two seconds to reach a call (its output kept), then reap_all kills it.
  const std::uint64_t start = monotonic_ns();
  for (;;) {
    bool left = false;
    controller_lock();  // (reap writes the run's state; an ending rank may hold the lock a moment)
    reap_ended(true);
    unlock_state();
    for (std::uint32_t r = 0; r < programs_; ++r) left = left || ranks_[r].pid > 0;
    if (!left || monotonic_ns() - start > 2'000'000'000ull) break;
    const timespec pause{0, 1'000'000};
    ::nanosleep(&pause, nullptr);
  }
  drain_output(0);
}

// ---- MPI_THREAD_MULTIPLE: threads that ask to enter while their rank waits ----

void Runtime::request_entry(Rank& k) {
  std::atomic_ref<std::uint32_t>(k.entries).fetch_add(1);
  std::atomic_ref<std::uint32_t>(entry_signals_).fetch_add(1);
  wake_controller();
}

void Runtime::entry_served(Rank& k) { std::atomic_ref<std::uint32_t>(k.entries).fetch_sub(1); }

namespace {

// Whether thread `tid` of process `pid` runs or waits for a CPU (state R
// in /proc); a thread that is gone does not.
bool task_runs(pid_t pid, long tid) {
  char path[96];
  std::snprintf(path, sizeof path, "/proc/%d/task/%ld/stat", static_cast<int>(pid), tid);
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[512];
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return false;
  buf[n] = '\0';
  const char* close_paren = std::strrchr(buf, ')');  // the name may hold spaces and parentheses
  return close_paren && close_paren[1] == ' ' && close_paren[2] == 'R';
}

bool inside_gate(GateThreads& g, long tid) {
  const std::uint32_t n = std::atomic_ref<std::uint32_t>(g.count).load();
  for (std::uint32_t i = 0; i < n; ++i)
    if (g.tid[i] == tid) return std::atomic_ref<std::uint8_t>(g.inside[i]).load() != 0;
  return false;
}

// Whether no thread of process `pid` outside its MPI gate runs: each of them
// sleeps, so none can call MPI before something else wakes it (a thread in
// the gate waits for the turn, or asks for it). A process that is gone
// counts as asleep.
bool threads_asleep(pid_t pid, GateThreads& g) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/task", static_cast<int>(pid));
  DIR* dir = ::opendir(path);
  if (!dir) return true;
  bool asleep = true;
  while (const dirent* e = ::readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    const long tid = std::strtol(e->d_name, nullptr, 10);
    if (!inside_gate(g, tid) && task_runs(pid, tid)) {
      asleep = false;
      break;
    }
  }
  ::closedir(dir);
  return asleep;
}

}  // namespace

bool Runtime::settle(Rank& k, bool bounded) {
  std::atomic_ref<std::uint32_t> entries(k.entries);
  std::atomic_ref<std::int32_t> sleeps(controller_sleeps_);
  const auto ready = [&] {
    k.wake_threads();
    return true;
  };
  // A thread on its way to MPI asks within microseconds; one that computes
  // on (or spins on a flag the blocked thread would set) is not waited for
  // longer than kSettleNs while the engine has other work.
  if (spin_until([&] { return entries.load() > 0; }, spin_ns_)) return ready();
  const std::uint64_t start = monotonic_ns();
  for (;;) {
    if (entries.load() > 0) return ready();
    if (k.pid <= 0 || threads_asleep(k.pid, *k.gate)) return entries.load() > 0 ? ready() : false;
    if (bounded && monotonic_ns() - start > kSettleNs) return false;
    // A thread of it runs: sleep until it asks (the eventfd) or 50 us pass.
    sleeps.store(1);
    if (entries.load() == 0) {
      pollfd fd{g_wake_fd, POLLIN, 0};
      const timespec pause{0, 50'000};
      if (::ppoll(&fd, 1, &pause, nullptr) > 0) {
        std::uint64_t count;
        [[maybe_unused]] const ssize_t n = ::read(g_wake_fd, &count, sizeof count);
      }
    }
    sleeps.store(0);
  }
}

void Runtime::wake_entries() {
  entry_signals_seen_ = std::atomic_ref<std::uint32_t>(entry_signals_).load();
  for (std::uint32_t r = 0; r < programs_; ++r) {
    Rank& k = ranks_[r];
    if (k.multiple && k.state == Rank::State::Blocked && std::atomic_ref<std::uint32_t>(k.entries).load() > 0) {
      k.wake_threads();
      woken_.push_back(r);
    }
  }
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

DirectResult run_processes(const Program& program, const std::vector<std::string>& args, const DirectOptions& options) {
  create_shared_region(options);
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
  finish_processes(rt, &result);
  SharedRegion::destroy();
  return result;
}

void finish_processes(Runtime* rt, DirectResult* result) {
  if (rt) {
    rt->reap_all();
    shared_delete(rt);
  }
  if (result) {
    rusage self{};
    ::getrusage(RUSAGE_SELF, &self);
    result->peak_rss_all_bytes = static_cast<std::size_t>(self.ru_maxrss) * 1024 + g_ranks_peak_rss;
  }
  g_ranks_peak_rss = 0;
  if (g_subreaper) {
    // Every rank is reaped: any child left is a process the ranks left behind.
    base::FoundProcesses found;
    base::kill_all_descendants(found);
    ::prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
    g_subreaper = false;
    if (result && found.count > 0) {
      result->left_behind = static_cast<std::uint32_t>(found.count);
      for (int i = 0; i < found.stored; ++i)
        result->left_behind_names.push_back(std::string(found.first[i].name) + " (pid " +
                                            std::to_string(found.first[i].pid) + ")");
    }
  }
  ::sigaction(SIGCHLD, &g_previous_sigchld, nullptr);
  if (g_output) {
    flush_output(-1);
    for (int fd : g_output->read_fd) ::close(fd);
    delete g_output;
    g_output = nullptr;
  }
  if (g_wake_fd >= 0) ::close(g_wake_fd);
  g_wake_fd = -1;
  if (g_affinity_saved) ::sched_setaffinity(0, sizeof g_affinity, &g_affinity);
  g_affinity_saved = false;
}

void Runtime::reap_all() {
  for (Rank& k : ranks_) {
    if (k.companion || k.pid <= 0) continue;
    ::kill(k.pid, SIGKILL);
    reap_rank(k.pid, nullptr, 0);
    drain_output(k.world);
    k.pid = -k.pid;
  }
}

namespace {

std::string size_text(std::size_t bytes) {
  char text[64];
  if (bytes >= (std::size_t{1} << 30))
    std::snprintf(text, sizeof text, "%.1f GiB", static_cast<double>(bytes) / static_cast<double>(1u << 30));
  else
    std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / static_cast<double>(1u << 20));
  return text;
}

// The address space this process may still map (RLIMIT_AS, `ulimit -v`
// less what is mapped already); 0 if unlimited. Every rank process inherits
// the shared region, so it counts in each one's limit.
std::size_t address_space_left(std::size_t& limit) {
  rlimit rl{};
  limit = 0;
  if (::getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return 0;
  limit = static_cast<std::size_t>(rl.rlim_cur);
  std::size_t mapped = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    unsigned long pages = 0;
    if (std::fscanf(f, "%lu", &pages) == 1) mapped = pages * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    std::fclose(f);
  }
  return limit > mapped ? limit - mapped : 1;
}

}  // namespace

std::size_t default_shared_bytes(std::uint32_t ranks) {
  // The runtime's state is a few KiB per rank; the rest holds messages in
  // flight, collective contributions and MPI_Win_allocate windows.
  std::size_t bytes = kSharedBase + kSharedPerRank * std::size_t{ranks};
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) bytes = std::min(bytes, static_cast<std::size_t>(pages) * static_cast<std::size_t>(page));
  // Under an address-space limit, half of what is left: the other half is the program's.
  std::size_t limit = 0;
  if (const std::size_t left = address_space_left(limit); left != 0) bytes = std::min(bytes, left / 2);
  return std::max(bytes, std::size_t{32} << 20);
}

void create_shared_region(const DirectOptions& options) {
  const bool given = options.shared_bytes != 0;
  const std::size_t bytes = given ? options.shared_bytes : default_shared_bytes(options.ranks);
  std::string why;
  if (given)
    why = "the size --memory-limit gives";
  else
    why = "sized for " + std::to_string(options.ranks) + " ranks; --memory-limit SIZE sets it";
  std::size_t limit = 0;
  address_space_left(limit);
  if (limit != 0) why += "; the address-space limit, ulimit -v, is " + size_text(limit);
  SharedRegion::create(bytes, why);
}

}  // namespace poems::direct::detail
