// The variation of the traced ranks' computation, resampled onto the ranks
// of an extrapolated trace (extrapolate.h, Extrapolation::resample).
//
// Copies of P traced ranks keep the slowest of those P in every step, while
// Q > P ranks that each vary as the traced ones did have a slower slowest:
// a bulk-synchronous step waits for it. A computation step is known by its
// code region (the MPI calls before and after it, as docs/scaling.md names
// regions) and by how many times the rank has passed that region before
// (its iteration); the traced ranks' steps of one such key are one sample
// set, and each step's time over their median is one sample of the
// variation. An extrapolated rank runs each of its computation steps at
// the key's median (its own time, for a key no other traced rank shares)
// times a sample drawn for it (seeded, counter-based: reproducible whatever
// the order).
#pragma once

#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "poems/trace/trace.h"

namespace poems::trace {

class ComputeVariation {
 public:
  // Samples of `time` (Step::cpu when `cpu_time`, else Step::value), from
  // keys that two or more traced ranks pass and whose median is at least
  // `min_step` ps; TraceError when there is none.
  ComputeVariation(const Trace& t, bool cpu_time, Picoseconds min_step);

  // Rewrites the computation steps of `rank` (a copy of traced rank
  // `from`, becoming rank `to`) of `min_step` or more: the key's median (or
  // the step's own time) times a drawn sample.
  void apply(Rank& rank, std::uint32_t from, std::uint32_t to, std::uint64_t seed) const;

  std::size_t samples() const { return samples_.size(); }
  std::size_t keys() const { return keys_; }  // keys passed by two or more traced ranks

 private:
  using Key = std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>;  // region before, after; visit
  struct Median {
    std::uint64_t value = 0, cpu = 0;
  };
  static std::vector<Key> step_keys(const Rank& r);
  // Per traced rank, per computation step: what a copy's step is drawn
  // about (its key's median, or the step's own time), found once for all
  // the copies.
  std::vector<std::vector<Median>> bases_;
  std::vector<double> samples_;  // time over the key's median
  Picoseconds min_step_ = 0;
  std::size_t keys_ = 0;
};

}  // namespace poems::trace
