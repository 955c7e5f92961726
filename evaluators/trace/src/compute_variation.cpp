#include "compute_variation.h"

#include <algorithm>
#include <cmath>

#include "poems/base/splitmix.h"

namespace poems::trace {

namespace {

std::uint64_t median_of(std::vector<std::uint64_t> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

// Each computation step's key, in step order (other steps: none listed).
std::vector<ComputeVariation::Key> ComputeVariation::step_keys(const Rank& r) {
  constexpr std::uint32_t kEdge = ~std::uint32_t{0};  // the run's start or end
  const std::size_t n = r.steps.size();
  std::vector<std::uint32_t> before(n, kEdge), after(n, kEdge);
  std::uint32_t region = kEdge;
  for (std::size_t i = 0; i < n; ++i) {
    before[i] = region;
    if (r.steps[i].call != kNone) region = r.calls[r.steps[i].call].region;
  }
  region = kEdge;
  for (std::size_t i = n; i-- > 0;) {
    after[i] = region;
    if (r.steps[i].call != kNone) region = r.calls[r.steps[i].call].region;
  }
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> visits;
  std::vector<Key> keys;
  for (std::size_t i = 0; i < n; ++i)
    if (r.steps[i].kind == StepKind::Compute) {
      const std::uint32_t visit = visits[{before[i], after[i]}]++;
      keys.emplace_back(before[i], after[i], visit);
    }
  return keys;
}

ComputeVariation::ComputeVariation(const Trace& t, bool cpu_time, Picoseconds min_step) : min_step_(min_step) {
  // A region's visits align across ranks (the j-th visit in the same
  // iteration) only if every rank that passes it passes it as often.
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> visits;  // -1: not the same on every rank
  std::map<Key, std::vector<const Step*>> steps;
  std::vector<std::vector<Key>> rank_keys;
  for (const Rank& r : t.ranks) {
    const std::vector<Key>& keys = rank_keys.emplace_back(step_keys(r));
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> own;
    std::size_t k = 0;
    for (const Step& s : r.steps)
      if (s.kind == StepKind::Compute) {
        const Key& key = keys[k++];
        steps[key].push_back(&s);
        ++own[{std::get<0>(key), std::get<1>(key)}];
      }
    for (const auto& [region, n] : own) {
      const auto [it, fresh] = visits.emplace(region, n);
      if (!fresh && it->second != n) it->second = kNone;
    }
  }
  std::map<Key, Median> medians;  // keys of two or more ranks
  for (const auto& [key, members] : steps) {
    if (members.size() < 2 || visits[{std::get<0>(key), std::get<1>(key)}] == kNone) continue;
    std::vector<std::uint64_t> values, cpus;
    for (const Step* s : members) values.push_back(s->value), cpus.push_back(s->cpu);
    const Median med{median_of(values), median_of(cpus)};
    medians[key] = med;
    ++keys_;
    const std::uint64_t base = cpu_time ? med.cpu : med.value;
    if (base < min_step_) continue;
    for (const Step* s : members)
      samples_.push_back(static_cast<double>(cpu_time ? s->cpu : s->value) / static_cast<double>(base));
  }
  if (samples_.empty())
    throw TraceError(keys_ == 0 ? "no two traced ranks pass the same code region, so the trace shows no variation "
                                  "of their computation to resample"
                                : "no code region that two traced ranks pass computes " +
                                      std::to_string(min_step_ / 1000) + " ns or more: nothing to resample");
  std::sort(samples_.begin(), samples_.end());
  for (std::size_t r = 0; r < t.ranks.size(); ++r) {
    std::vector<Median>& bases = bases_.emplace_back();
    std::size_t k = 0;
    for (const Step& s : t.ranks[r].steps)
      if (s.kind == StepKind::Compute) {
        const auto m = medians.find(rank_keys[r][k++]);
        bases.push_back(m != medians.end() ? m->second : Median{s.value, s.cpu});
      }
  }
}

void ComputeVariation::apply(Rank& rank, std::uint32_t from, std::uint32_t to, std::uint64_t seed) const {
  const std::vector<Median>& bases = bases_[from];
  std::uint64_t k = 0;
  for (Step& s : rank.steps) {
    if (s.kind != StepKind::Compute) continue;
    const Median& about = bases[k];
    if (std::max(about.value, about.cpu) >= min_step_) {
      const std::uint64_t draw = base::splitmix64(seed ^ base::splitmix64((static_cast<std::uint64_t>(to) << 32) | k));
      const double f = samples_[draw % samples_.size()];
      s.value = static_cast<std::uint64_t>(std::llround(static_cast<double>(about.value) * f));
      s.cpu = static_cast<std::uint64_t>(std::llround(static_cast<double>(about.cpu) * f));
    }
    ++k;
  }
}

}  // namespace poems::trace
