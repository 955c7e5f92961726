#include "poems/core/handout_order.h"

#include <algorithm>

#include "poems/taskgraph/dtg.h"

namespace poems::core {

double estimated_work(const Session::Prepared& p) {
  if (!p.evaluator || !p.evaluator->modelled || !p.cell.ok()) return 0;
  const Evaluation& e = p.cell.evaluation;
  if (!e.graph || e.method == "closed-form") return 0;
  try {
    taskgraph::ModelSchedule schedule(e.graph, e.binding, e.instantiate);
    const std::uint32_t ranks = schedule.ranks();
    if (ranks == 0) return 0;
    // Eight ranks spread over the rank order stand for all (a stencil's or
    // a wavefront's ranks differ by their boundary messages only).
    constexpr std::uint32_t kSamples = 8;
    taskgraph::OpBuffer buffer;
    double operations = 0;
    std::uint32_t counted = 0, last = ranks;
    for (std::uint32_t s = 0; s < kSamples; ++s) {
      const auto rank = static_cast<std::uint32_t>((2 * std::uint64_t{s} + 1) * ranks / (2 * kSamples));
      if (rank == last) continue;
      last = rank;
      ++counted;
      for (;;) {
        buffer.clear();
        const std::size_t n = schedule.pull(rank, 4096, buffer);
        if (n == 0 || n == taskgraph::ScheduleSource::kBlocked) break;
        operations += static_cast<double>(n);
        if (buffer.rank_done) break;
      }
    }
    return operations / static_cast<double>(counted) * ranks;
  } catch (const std::exception&) {
    return 0;  // the cell fails at its turn, with the evaluator's own message
  }
}

HandOutOrder::HandOutOrder(const std::vector<double>& work, std::size_t slots)
    : work_(work), started_(work.size(), false), slots_(std::max<std::size_t>(slots, 1)) {
  for (std::size_t i = 0; i < work_.size(); ++i)
    if (work_[i] > 0) {
      left_ += work_[i];
      heavy_.emplace(-work_[i], i);
    }
}

std::optional<std::size_t> HandOutOrder::next(std::size_t limit) {
  while (first_ < work_.size() && started_[first_]) ++first_;
  if (first_ >= std::min(limit, work_.size())) return std::nullopt;
  std::size_t chosen = first_;
  // After a failure the rest goes in plan order: the serial run's cells before it.
  if (limit >= work_.size() && !heavy_.empty()) {
    const auto [minus_work, heaviest] = *heavy_.begin();
    if (-minus_work * 2 * static_cast<double>(slots_) >= left_) chosen = heaviest;
  }
  started_[chosen] = true;
  if (work_[chosen] > 0) {
    heavy_.erase({-work_[chosen], chosen});
    left_ = heavy_.empty() ? 0 : std::max(0.0, left_ - work_[chosen]);
  }
  return chosen;
}

}  // namespace poems::core
