// Computation per code region of a recorded run (regions.h).
#include "poems/trace/regions.h"

#include <algorithm>
#include <map>
#include <numeric>

namespace poems::trace {

Picoseconds RegionComputation::max() const {
  return per_rank.empty() ? 0 : *std::max_element(per_rank.begin(), per_rank.end());
}

double RegionComputation::mean() const {
  if (per_rank.empty()) return 0;
  double sum = 0;
  for (Picoseconds v : per_rank) sum += static_cast<double>(v);
  return sum / static_cast<double>(per_rank.size());
}

std::vector<RegionComputation> region_computation(const Trace& trace, const Window& window, bool cpu_time) {
  if (cpu_time && !trace.cpu_time)
    throw TraceError(trace.path + " has no CPU time of its computation; record it with poems trace --cpu-time");
  const std::vector<WindowBounds> bounds = window_bounds(trace, window);
  const std::size_t nranks = trace.ranks.size();
  std::map<std::string, RegionComputation> regions;
  for (std::size_t r = 0; r < nranks; ++r) {
    const Rank& rank = trace.ranks[r];
    // The call before a step: the last call whose steps end at or before it.
    std::size_t call = 0;
    auto name_of = [&](std::uint32_t c) {
      return c < rank.calls.size() ? trace.regions[rank.calls[c].region] : std::string("end");
    };
    for (std::uint32_t s = bounds[r].first; s < bounds[r].last; ++s) {
      const Step& step = rank.steps[s];
      if (step.kind != StepKind::Compute) continue;
      while (call < rank.calls.size() && rank.calls[call].end_step <= s) ++call;
      // `call` is now the first call after the step.
      const std::string before = call == 0 ? std::string("start") : name_of(static_cast<std::uint32_t>(call - 1));
      RegionComputation& region = regions[before + ".." + name_of(static_cast<std::uint32_t>(call))];
      if (region.per_rank.empty()) region.per_rank.assign(nranks, 0);
      region.per_rank[r] += cpu_time ? step.cpu : step.value;
      ++region.visits;
    }
  }
  std::vector<RegionComputation> out;
  for (auto& [name, region] : regions) {
    region.name = name;
    out.push_back(std::move(region));
  }
  auto total = [](const RegionComputation& x) {
    return std::accumulate(x.per_rank.begin(), x.per_rank.end(), Picoseconds{0});
  };
  std::stable_sort(out.begin(), out.end(),
                   [&](const RegionComputation& a, const RegionComputation& b) { return total(a) > total(b); });
  return out;
}

}  // namespace poems::trace
