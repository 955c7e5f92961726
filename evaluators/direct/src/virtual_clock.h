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

class VirtualClock {
 public:
  // Before any rank runs: the clock read's own cost, the processor model, the epochs.
  void init(const DirectOptions& options) {
    measure_ = options.compute == ComputeMode::Measured && options.compute_scale > 0;
    scale_ = options.compute_scale;
    if (measure_) {
      // An interval between two MPI calls also holds the end of one clock read
      // and the start of the next: the least time two back-to-back reads show.
      clock_cost_ns_ = ~std::uint64_t{0};
      for (int i = 0; i < 64; ++i) {
        const std::uint64_t a = thread_cpu_ns(), b = thread_cpu_ns();
        clock_cost_ns_ = std::min(clock_cost_ns_, b - a);
      }
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
  void mark(std::uint64_t& cpu_mark) const {
    if (measure_) cpu_mark = thread_cpu_ns();
  }
  // The rank enters an MPI call: the computation since `cpu_mark`, less the
  // clock reads' own cost, is charged to `compute_ps`.
  void measure_call(std::uint64_t cpu_mark, double& compute_ps) {
    if (!measure_) return;
    const std::uint64_t since = cpu_since(cpu_mark);
    const std::uint64_t spent = since > clock_cost_ns_ ? since - clock_cost_ns_ : 0;
    measured_ns_ += spent;
    compute_ps += static_cast<double>(spent) * 1000.0 * scale_;
  }
  // The rank ends (exit, or main returned without MPI_Finalize): its last computation.
  void measure_end(std::uint64_t cpu_mark, double& compute_ps) const {
    if (measure_) compute_ps += static_cast<double>(cpu_since(cpu_mark)) * 1000.0 * scale_;
  }
  // Host CPU time measured as computation so far.
  std::uint64_t measured_ns() const { return measured_ns_; }

  processor::ProcessorModel* processor() const { return processor_.get(); }
  // The host's clocks when the run started: virtual wall and monotonic time count from them.
  std::uint64_t epoch_realtime_ns() const { return epoch_realtime_ns_; }
  std::uint64_t epoch_monotonic_ns() const { return epoch_monotonic_ns_; }

 private:
  // The thread's CPU time since `mark`; 0 if the clock reads less (a clock of
  // another thread or process than the mark's): never an unsigned wrap.
  static std::uint64_t cpu_since(std::uint64_t mark) {
    const std::uint64_t now = thread_cpu_ns();
    return now > mark ? now - mark : 0;
  }

  bool measure_ = true;
  double scale_ = 1;
  std::uint64_t clock_cost_ns_ = 0;  // host CPU time of reading the clock, taken off each measured interval
  std::uint64_t measured_ns_ = 0;
  std::unique_ptr<processor::ProcessorModel> processor_;
  std::uint64_t epoch_realtime_ns_ = 0, epoch_monotonic_ns_ = 0;
};

}  // namespace poems::direct::detail
