#include "poems/components/processor_sharing.h"

#include <cmath>

namespace poems::components {

void ProcessorSharing::advance(Picoseconds now) {
  if (now > last_ && !jobs_.empty()) {
    const double done = static_cast<double>(now - last_) / static_cast<double>(jobs_.size());
    for (Job& j : jobs_) j.remaining = j.remaining > done ? j.remaining - done : 0.0;
  }
  if (now > last_) last_ = now;
}

void ProcessorSharing::add(Picoseconds now, std::uint32_t id, Picoseconds work) {
  advance(now);
  jobs_.push_back(Job{static_cast<double>(work), id});
}

Picoseconds ProcessorSharing::next_end() const {
  if (jobs_.empty()) return kNever;
  double least = jobs_.front().remaining;
  for (const Job& j : jobs_) least = std::min(least, j.remaining);
  // Rounded to the picosecond: equal jobs begun together end together.
  return last_ + static_cast<Picoseconds>(std::llround(least * static_cast<double>(jobs_.size())));
}

std::uint32_t ProcessorSharing::remove_next(Picoseconds now) {
  advance(now);
  std::size_t least = 0;
  for (std::size_t i = 1; i < jobs_.size(); ++i)
    if (jobs_[i].remaining < jobs_[least].remaining) least = i;
  const std::uint32_t id = jobs_[least].id;
  // Order does not matter to the scan: the last job takes the ended one's place.
  jobs_[least] = jobs_.back();
  jobs_.pop_back();
  return id;
}

}  // namespace poems::components
