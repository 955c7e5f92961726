// One core shared by the work in progress on it, PUPPET's multitasking rule
// (docs/network.md, "Time sharing"): processes that share a processor run
// round-robin with a negligible quantum and no switching cost, so r jobs in
// progress each advance at 1/r of the core. The simulator keeps one per
// shared core; a job is a computation or a message overhead.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "poems/components/loggops.h"

namespace poems::components {

class ProcessorSharing {
 public:
  static constexpr Picoseconds kNever = std::numeric_limits<Picoseconds>::max();

  // Room for `jobs` jobs at once (a core's ranks times their CPUs), so that
  // adding one never allocates.
  void reserve(std::size_t jobs) { jobs_.reserve(jobs); }
  // A job of `work` (> 0) picoseconds of the core's time begins at `now`
  // (not before the last change).
  void add(Picoseconds now, std::uint32_t id, Picoseconds work);
  // When the next job ends if nothing else begins: kNever if none is in progress.
  Picoseconds next_end() const;
  // Ends the job that ends next (next_end() <= now) and returns its id.
  std::uint32_t remove_next(Picoseconds now);
  std::size_t active() const { return jobs_.size(); }

 private:
  // The jobs' remaining work after sharing the core from the last change to `now`.
  void advance(Picoseconds now);
  struct Job {
    double remaining;  // picoseconds of the core alone
    std::uint32_t id;
  };
  std::vector<Job> jobs_;  // a core has few: a linear scan beats a heap
  Picoseconds last_ = 0;
};

}  // namespace poems::components
