// The order in which a parallel study hands its cells to free workers.
//
// Plan order keeps the printed progress flowing (lines are reported in plan
// order), but a long cell near the end of the plan becomes the study's tail:
// in Sweep3D's latency study the last 50x50 simulation (6.6 s of 42 s)
// started after every other cell left two workers 1.79x faster than one,
// where 2.0x was possible. So cells go out in plan order until the costliest
// cell not yet started weighs at least half of what one worker still has
// ahead (the estimated work left, shared among the slots); from then on that
// cell goes first. Estimates only order the hand-out: results, stored rows
// and output do not depend on them.
#pragma once

#include <cstddef>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "poems/core/session.h"

namespace poems::core {

// A prepared cell's work relative to other cells: the operations its
// evaluation walks (the model's schedule for this binding, from a sample of
// its ranks). 0 for a closed form, a measurement, a cell that cannot be
// evaluated, or a model whose schedule cannot be read without evaluating it.
double estimated_work(const Session::Prepared& prepared);

class HandOutOrder {
 public:
  // `work[i]`: cell i's estimated work (>= 0); `slots`: cells under way at once.
  HandOutOrder(const std::vector<double>& work, std::size_t slots);
  // The next cell to start among those not started yet and below `limit`
  // (after a failure at `limit`, a serial run would not evaluate the cells
  // after it: those before it go out in plan order); nullopt when none is left.
  std::optional<std::size_t> next(std::size_t limit);

 private:
  std::vector<double> work_;
  std::vector<bool> started_;
  std::size_t slots_ = 1;
  std::size_t first_ = 0;                           // lowest cell not started
  double left_ = 0;                                 // work of the cells not started
  std::set<std::pair<double, std::size_t>> heavy_;  // (-work, index) of cells not started, work > 0
};

}  // namespace poems::core
