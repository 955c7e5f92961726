#include "virtual_time.h"

#include <dlfcn.h>
#include <sys/time.h>
#include <unwind.h>

#include <cerrno>
#include <cstdint>

#include "api.h"
#include "thread_gate.h"

namespace poems::direct::detail {

namespace {

using ClockGettime = int (*)(clockid_t, timespec*);

ClockGettime real() {
  static ClockGettime fn = reinterpret_cast<ClockGettime>(::dlsym(RTLD_NEXT, "clock_gettime"));
  return fn;
}

bool cpu_clock(clockid_t clock) {
  return clock == CLOCK_PROCESS_CPUTIME_ID || clock == CLOCK_THREAD_CPUTIME_ID || clock < 0;  // < 0: another
                                                                                              // thread's or process's
}

bool wall_clock(clockid_t clock) {
  return clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_COARSE || clock == CLOCK_TAI;
}

// A sanitizer runtime (ASan's, TSan's) interposes clock_gettime, and also
// reads CLOCK_MONOTONIC itself through its interceptor's REAL(), that is
// through this library's clock_gettime: ASan's allocator does when it maps
// a new region or considers returning memory to the system, inside any
// malloc, the runtime's own in the middle of an MPI call included. Taken as
// the rank's clock reading, such a read issued an operation in the middle
// of another (a barrier's successors lost their dependency on it: the
// barrier returned before the other ranks entered it) and suspended the
// rank inside the allocator, holding its lock (with threads, the next rank
// to allocate waited forever). The program's reads come from its code
// through the interceptor: the sanitizer library calls us, called from
// outside it. The sanitizer's own reads come from the sanitizer library
// called from the sanitizer library.
void* g_sanitizer_library = nullptr;  // the sanitizer runtime's base address, null if none is loaded

struct CallerFrames {
  static constexpr int kMax = 8;
  void* ip[kMax] = {};
  int count = 0;
};

_Unwind_Reason_Code collect_frame(_Unwind_Context* context, void* arg) {
  auto* frames = static_cast<CallerFrames*>(arg);
  frames->ip[frames->count++] = reinterpret_cast<void*>(_Unwind_GetIP(context));
  return frames->count == CallerFrames::kMax ? _URC_END_OF_STACK : _URC_NO_REASON;
}

bool in_sanitizer_library(const void* ip) {
  Dl_info info{};
  return ::dladdr(ip, &info) != 0 && info.dli_fbase == g_sanitizer_library;
}

// Whether the sanitizer runtime itself, not the program, reads the clock
// (`caller` is clock_gettime's return address).
bool read_by_sanitizer(const void* caller) {
  if (!g_sanitizer_library || !in_sanitizer_library(caller)) return false;
  CallerFrames frames;
  _Unwind_Backtrace(collect_frame, &frames);
  for (int i = 0; i + 1 < frames.count; ++i)
    if (in_sanitizer_library(frames.ip[i])) return in_sanitizer_library(frames.ip[i + 1]);
  return false;
}

// The running rank's runtime if virtual time applies to this call, else null
// (a thread of a rank that is not running, or beside its rank's MPI call,
// reads the host's clocks: it must not touch a rank's state meanwhile).
Runtime* virtual_rank() {
  Runtime* rt = Runtime::active();
  // Under MPI_THREAD_MULTIPLE every thread of the rank reads its virtual
  // time, entering through the gate (a thread that is no rank's, a fork's
  // child, reads the host's).
  if (rt && multiple_threads()) return rt->stopping() || forked_from_rank() >= 0 ? nullptr : rt;
  if (!rt || !rt->running() || rt->stopping() || rt->current().exiting || rt->second_thread()) return nullptr;
  return rt;
}

// The rank's present virtual time in ns since the run started.
std::uint64_t virtual_now_ns(Runtime& rt, const char* call) {
  std::uint64_t ps = 0;
  mpi_call(
      call,
      [&](Runtime& r) {
        ps = r.checkpoint(call, r.node_of(call), true);
        return 0;
      },
      false);
  (void)rt;
  return ps / 1000;
}

void advance_ns(Runtime& rt, const char* call, std::uint64_t ns) {
  (void)rt;
  mpi_call(
      call,
      [&](Runtime& r) {
        r.charge(static_cast<double>(ns) * 1000.0);
        return 0;
      },
      false);
}

timespec to_timespec(std::uint64_t ns) {
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(ns / 1'000'000'000ull);
  ts.tv_nsec = static_cast<long>(ns % 1'000'000'000ull);
  return ts;
}

std::uint64_t from_timespec(const timespec& ts) {
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

}  // namespace

int real_clock_gettime(clockid_t clock, timespec* ts) {
  ClockGettime fn = real();
  return fn ? fn(clock, ts) : -1;
}

void find_sanitizer_clock() {
  if (g_sanitizer_library) return;
  // GCC's and older LLVM's sanitizers name it __interceptor_*, LLVM 17's ___interceptor_*.
  void* fn = ::dlsym(RTLD_DEFAULT, "__interceptor_clock_gettime");
  if (!fn) fn = ::dlsym(RTLD_DEFAULT, "___interceptor_clock_gettime");
  Dl_info info{};
  if (!fn || ::dladdr(fn, &info) == 0) return;
  g_sanitizer_library = info.dli_fbase;
  CallerFrames frames;  // the unwinder's first use here, not inside the allocator
  _Unwind_Backtrace(collect_frame, &frames);
}

}  // namespace poems::direct::detail

using namespace poems::direct::detail;

extern "C" {

__attribute__((visibility("default"))) int clock_gettime(clockid_t clock, timespec* ts) {
  Runtime* rt = cpu_clock(clock) ? nullptr : virtual_rank();
  if (!rt || read_by_sanitizer(__builtin_return_address(0))) return real_clock_gettime(clock, ts);
  const std::uint64_t ns = virtual_now_ns(*rt, "clock_gettime");
  *ts = to_timespec((wall_clock(clock) ? rt->clock().epoch_realtime_ns() : rt->clock().epoch_monotonic_ns()) + ns);
  return 0;
}

__attribute__((visibility("default"))) int gettimeofday(struct timeval* tv, void* tz) {
  Runtime* rt = virtual_rank();
  if (!rt) {
    timespec ts{};
    const int rc = real_clock_gettime(CLOCK_REALTIME, &ts);
    tv->tv_sec = ts.tv_sec;
    tv->tv_usec = ts.tv_nsec / 1000;
    if (tz) *static_cast<struct timezone*>(tz) = {};
    return rc;
  }
  const std::uint64_t ns = rt->clock().epoch_realtime_ns() + virtual_now_ns(*rt, "gettimeofday");
  tv->tv_sec = static_cast<time_t>(ns / 1'000'000'000ull);
  tv->tv_usec = static_cast<suseconds_t>(ns % 1'000'000'000ull / 1000);
  if (tz) *static_cast<struct timezone*>(tz) = {};
  return 0;
}

__attribute__((visibility("default"))) time_t time(time_t* out) {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  if (out) *out = ts.tv_sec;
  return ts.tv_sec;
}

__attribute__((visibility("default"))) int clock_nanosleep(clockid_t clock, int flags, const timespec* request,
                                                           timespec* remain) {
  Runtime* rt = cpu_clock(clock) ? nullptr : virtual_rank();
  if (!rt) {
    using Fn = int (*)(clockid_t, int, const timespec*, timespec*);
    static Fn fn = reinterpret_cast<Fn>(::dlsym(RTLD_NEXT, "clock_nanosleep"));
    return fn ? fn(clock, flags, request, remain) : EINVAL;
  }
  if (!request || request->tv_nsec < 0 || request->tv_nsec >= 1'000'000'000) return EINVAL;
  std::uint64_t ns = from_timespec(*request);
  if (flags & TIMER_ABSTIME) {
    const std::uint64_t base = wall_clock(clock) ? rt->clock().epoch_realtime_ns() : rt->clock().epoch_monotonic_ns();
    const std::uint64_t now = base + virtual_now_ns(*rt, "clock_nanosleep");
    ns = ns > now ? ns - now : 0;
  }
  advance_ns(*rt, "clock_nanosleep", ns);
  (void)remain;  // set only when a signal interrupts the sleep, which a virtual sleep never is
  return 0;
}

__attribute__((visibility("default"))) int nanosleep(const timespec* request, timespec* remain) {
  const int rc = clock_nanosleep(CLOCK_MONOTONIC, 0, request, remain);
  if (rc == 0) return 0;
  errno = rc;
  return -1;
}

__attribute__((visibility("default"))) int usleep(useconds_t usec) {
  const timespec ts = to_timespec(static_cast<std::uint64_t>(usec) * 1000);
  return nanosleep(&ts, nullptr);
}

__attribute__((visibility("default"))) unsigned int sleep(unsigned int seconds) {
  const timespec ts = to_timespec(static_cast<std::uint64_t>(seconds) * 1'000'000'000ull);
  nanosleep(&ts, nullptr);
  return 0;
}

}  // extern "C"
