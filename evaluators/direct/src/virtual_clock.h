// The direct-execution runtime's side of virtual time that is not the
// engine's: what a rank's computation between MPI calls costs (its host CPU
// time, scaled, under --compute measured; a processor model's answer for a
// charged task), and the epochs from which the clocks a program reads count.
#pragma once

#include <time.h>

#include <algorithm>
#include <cstdint>
#include <memory>

#include "poems/direct/runtime.h"
#include "threads.h"
#include "virtual_time.h"

namespace poems::direct::detail {

// A reading of a rank's host CPU clock: exact (the thread's CPU clock, a
// system call: about 380 ns on this VM) or estimated from the wall clock
// (the vDSO's CLOCK_MONOTONIC, about 20 ns) within a short window after an
// exact reading (cpu_clock_ns).
struct CpuMark {
  std::uint64_t ns = 0;
  bool exact = true;
};

// This host thread's CPU time. Within kCpuWindowNs of wall time after an
// exact reading, and unless the thread slept since (forget_cpu_estimate),
// its CPU time is taken to advance with the wall clock: a thread that
// neither sleeps nor is preempted in so short a while ran all of it, and one
// that is preempted longer finds the window past and reads the CPU clock.
// So an MPI call costs two wall-clock reads, not two system calls, in
// call-dense code (docs/direct.md, "Measured computation").
inline constexpr std::uint64_t kCpuWindowNs = 50'000;
CpuMark cpu_clock_ns();
// The thread slept (a hand-over, its process's start): the next reading is exact.
void forget_cpu_estimate();

class VirtualClock {
 public:
  // Before any rank runs: the clock reads' own cost, the processor model, the epochs.
  void init(const DirectOptions& options) {
    measure_ = options.compute == ComputeMode::Measured && options.compute_scale > 0;
    scale_ = options.compute_scale;
    if (measure_) {
      // An interval between two MPI calls also holds the end of one clock read
      // and the start of the next: the least time two back-to-back reads show.
      exact_cost_ns_ = wall_cost_ns_ = ~std::uint64_t{0};
      for (int i = 0; i < 64; ++i) {
        const std::uint64_t a = thread_cpu_ns(), b = thread_cpu_ns();
        exact_cost_ns_ = std::min(exact_cost_ns_, b - a);
        const std::uint64_t c = monotonic_ns(), d = monotonic_ns();
        wall_cost_ns_ = std::min(wall_cost_ns_, d - c);
      }
      forget_cpu_estimate();
    }
    if (options.processor) processor_ = processor::make_processor_model(*options.processor);
    find_sanitizer_clock();
    timespec ts{};
    real_clock_gettime(CLOCK_REALTIME, &ts);
    epoch_realtime_ns_ = static_cast<std::uint64_t>(options.epoch_seconds >= 0 ? options.epoch_seconds : ts.tv_sec) *
                         1'000'000'000ull;  // whole seconds
    real_clock_gettime(CLOCK_MONOTONIC, &ts);
    epoch_monotonic_ns_ = static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ull;
  }

  // The rank's computation starts now (it leaves an MPI call, or starts).
  void mark(CpuMark& cpu_mark) const {
    if (measure_) cpu_mark = cpu_clock_ns();
  }
  // The rank enters an MPI call: the computation since `cpu_mark`, less the
  // clock reads' own cost, is charged to `compute_ps`.
  void measure_call(const CpuMark& cpu_mark, double& compute_ps) {
    if (!measure_) return;
    const std::uint64_t spent = spent_since(cpu_mark);
    measured_ns_ += spent;
    compute_ps += static_cast<double>(spent) * 1000.0 * scale_;
  }
  // The rank ends (exit, or main returned without MPI_Finalize): its last computation.
  void measure_end(const CpuMark& cpu_mark, double& compute_ps) const {
    if (measure_) compute_ps += static_cast<double>(spent_since(cpu_mark)) * 1000.0 * scale_;
  }
  // Host CPU time measured as computation so far.
  std::uint64_t measured_ns() const { return measured_ns_; }

  processor::ProcessorModel* processor() const { return processor_.get(); }
  // The host's clocks when the run started: virtual wall and monotonic time count from them.
  std::uint64_t epoch_realtime_ns() const { return epoch_realtime_ns_; }
  std::uint64_t epoch_monotonic_ns() const { return epoch_monotonic_ns_; }

 private:
  // The CPU time since `mark` less the readings' own cost; 0 if the clock
  // reads less (a clock of another thread or process than the mark's): never
  // an unsigned wrap. An estimate counts from the wall clock read after its
  // exact reading returned, so it leaves out that reading's return; an exact
  // end adds its own entry and, after an estimated mark, the return the mark
  // left out: a pair of exact reads in all. So the cost is the end's kind's.
  std::uint64_t spent_since(const CpuMark& mark) const {
    const CpuMark now = cpu_clock_ns();
    const std::uint64_t cost = now.exact ? exact_cost_ns_ : wall_cost_ns_;
    const std::uint64_t since = now.ns > mark.ns ? now.ns - mark.ns : 0;
    return since > cost ? since - cost : 0;
  }

  bool measure_ = true;
  double scale_ = 1;
  std::uint64_t exact_cost_ns_ = 0;  // host CPU time of reading the CPU clock, taken off each measured interval
  std::uint64_t wall_cost_ns_ = 0;   // the same of the wall clock's read, for an estimated end
  std::uint64_t measured_ns_ = 0;
  std::unique_ptr<processor::ProcessorModel> processor_;
  std::uint64_t epoch_realtime_ns_ = 0, epoch_monotonic_ns_ = 0;
};

}  // namespace poems::direct::detail
