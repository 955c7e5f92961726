#include "poems/recommender/recommender.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "evidence.h"

namespace poems::recommender {

struct Recommender::State {
  db::KnowledgeBase* kb;
  Problem problem;
  QueryStats stats;
  detail::EvidenceStore store;
  State(db::KnowledgeBase* k, Problem p) : kb(k), problem(std::move(p)), store(k, problem) {}
};

namespace {

// Fastest first; ties go to the smaller mk, mmi, npe_i (a deterministic answer).
struct Faster {
  const CandidateSet& set;
  const std::vector<detail::AnalyticValue>& values;
  bool operator()(std::size_t a, std::size_t b) const {
    if (values[a].time_ns != values[b].time_ns) return values[a].time_ns < values[b].time_ns;
    const Candidate ca = set.at(a), cb = set.at(b);
    return std::tie(ca.mk, ca.mmi, ca.npe_i) < std::tie(cb.mk, cb.mmi, cb.npe_i);
  }
};

// Runs `body`, turning the closed form's parameter errors into QueryError.
template <class F>
auto guarded(F&& body) {
  try {
    return body();
  } catch (const components::Sweep3DParameterError& e) {
    throw QueryError(e.what());
  }
}

}  // namespace

Recommender::Recommender(db::KnowledgeBase* kb, Problem problem)
    : state_(std::make_unique<State>(kb, std::move(problem))) {
  validate(state_->problem);
}

Recommender::~Recommender() = default;

const QueryStats& Recommender::stats() const { return state_->stats; }
const Problem& Recommender::problem() const { return state_->problem; }

namespace {

Recommendation make_recommendation(const Problem& problem, const Candidate& c, const detail::AnalyticValue& v,
                                   const std::vector<CrossCheck>& checks) {
  Recommendation r;
  r.candidate = c;
  r.time_ns = v.time_ns;
  r.evidence.push_back({v.run_id, kAnalytic, v.time_ns, v.fresh});
  const std::string key = analytic_key(problem, c).canonical_text();
  for (const CrossCheck& check : checks)
    if (check.case_key == key) r.evidence.push_back({check.run_id, check.paradigm, check.other_ns, false});
  r.confidence = confidence(features(problem.config(c), problem.machine), checks);
  return r;
}

}  // namespace

std::vector<Recommendation> Recommender::recommend(const CandidateSpace& space, std::size_t top) {
  return guarded([&] {
    State& s = *state_;
    const CandidateSet set = candidates(s.problem, space);
    const std::vector<detail::AnalyticValue> values = s.store.analytic(set, s.stats);
    s.stats.candidates += set.size();
    std::vector<std::size_t> order(set.size());
    std::iota(order.begin(), order.end(), 0);
    const std::size_t n = std::min(top, order.size());
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(n), order.end(), Faster{set, values});
    const std::vector<CrossCheck>& checks = s.store.cross_checks(s.stats);
    std::vector<Recommendation> out;
    for (std::size_t k = 0; k < n; ++k)
      out.push_back(make_recommendation(s.problem, set.at(order[k]), values[order[k]], checks));
    return out;
  });
}

ConfirmReport Recommender::confirm(std::vector<Recommendation>& recommendations) {
  return guarded([&] {
    State& s = *state_;
    s.store.cross_checks(s.stats);  // loaded before the fresh simulations are added
    ConfirmReport report;
    for (Recommendation& r : recommendations) {
      const Evidence e = s.store.simulation(r.candidate, s.stats);
      const bool listed = std::any_of(r.evidence.begin(), r.evidence.end(),
                                      [&](const Evidence& x) { return x.run_id != 0 && x.run_id == e.run_id; });
      if (!listed) r.evidence.push_back(e);
      if (e.fresh) {
        CrossCheck check;
        check.run_id = e.run_id;
        check.analytic_run_id = r.evidence.front().run_id;
        check.paradigm = e.paradigm;
        check.features = features(s.problem.config(r.candidate), s.problem.machine);
        check.analytic_ns = r.time_ns;
        check.other_ns = e.time_ns;
        check.case_key = analytic_key(s.problem, r.candidate).canonical_text();
        s.store.add_cross_check(std::move(check));
      }
      Confirmation c;
      c.candidate = r.candidate;
      c.analytic_ns = r.time_ns;
      c.simulated_ns = e.time_ns;
      c.difference = e.time_ns > 0 ? (r.time_ns - e.time_ns) / e.time_ns : 0;
      c.simulation = e;
      report.max_abs_difference = std::max(report.max_abs_difference, std::fabs(c.difference));
      if (!report.items.empty() && e.time_ns < report.items.back().simulated_ns) report.same_order = false;
      report.items.push_back(c);
    }
    const std::vector<CrossCheck>& checks = s.store.cross_checks(s.stats);
    for (Recommendation& r : recommendations)
      r.confidence = confidence(features(s.problem.config(r.candidate), s.problem.machine), checks);
    return report;
  });
}

std::vector<std::int64_t> procs_ladder(std::int64_t from, std::int64_t to) {
  if (from < 1 || to < from || to > (std::int64_t{1} << 31))
    throw QueryError("procs-range " + std::to_string(from) + ".." + std::to_string(to) +
                     " is out of range; expected A..B with 1 <= A <= B <= 2147483648");
  std::vector<std::int64_t> near_square;
  for (std::int64_t n = 1; n * n <= to; ++n)
    for (std::int64_t v : {n * n, n * (n + 1)})
      if (v > from && v < to) near_square.push_back(v);
  std::sort(near_square.begin(), near_square.end());
  const double ratio = std::exp2(1.0 / 8.0);
  std::vector<std::int64_t> out{from};
  for (std::int64_t v : near_square)
    if (static_cast<double>(v) >= ratio * static_cast<double>(out.back())) out.push_back(v);
  if (to > out.back()) out.push_back(to);
  return out;
}

std::optional<std::size_t> knee(const std::vector<double>& times, double fraction) {
  if (times.empty()) return std::nullopt;
  std::vector<double> suffix_min(times.size());
  double m = times.back();
  for (std::size_t i = times.size(); i-- > 0;) suffix_min[i] = m = std::min(m, times[i]);
  for (std::size_t i = 0; i < times.size(); ++i)
    if (suffix_min[i] >= (1.0 - fraction) * times[i]) return i;
  return times.size() - 1;  // only with NaN times: the last point qualifies otherwise
}

OperatingPoint Recommender::operating_point(const ProcsRange& range) {
  return guarded([&] {
    State& s = *state_;
    if (!(range.fraction > 0 && range.fraction < 1))
      throw QueryError("fraction = " + std::to_string(range.fraction) + " is out of range; expected 0 < f < 1");
    const std::vector<std::int64_t> ladder = procs_ladder(range.from, range.to);
    validate(s.problem);
    const components::Sweep3DConfig base = s.problem.config(s.problem.defaults());
    // One candidate set over every grid of every count: one evidence lookup.
    CandidateSet set;
    std::vector<std::pair<std::int64_t, std::size_t>> counts;  // procs, grids
    for (std::int64_t p : ladder) {
      auto grids = range.all_grids ? factorizations(p, base.it_g, base.jt_g)
                                   : std::vector<std::pair<std::int64_t, std::int64_t>>{};
      if (!range.all_grids && !factorizations(p, base.it_g, base.jt_g).empty())
        grids.push_back(square_grid(p, base.it_g, base.jt_g));
      if (grids.empty()) continue;
      if (set.grids.empty()) {
        CandidateSpace space{p, false, grids.front().first, grids.front().second, range.mk, range.mmi};
        const CandidateSet first = candidates(s.problem, space);  // validates mk and mmi
        set.mk = first.mk;
        set.mmi = first.mmi;
      }
      counts.emplace_back(p, grids.size());
      set.grids.insert(set.grids.end(), grids.begin(), grids.end());
    }
    if (counts.empty())
      throw QueryError("procs-range " + std::to_string(range.from) + ".." + std::to_string(range.to) +
                       " has no processor count with a grid npe_i <= it_g, npe_j <= jt_g");
    if (set.size() > kMaxCandidates)
      throw QueryError("the range has " + std::to_string(set.size()) + " candidates; expected at most " +
                       std::to_string(kMaxCandidates) + " (narrow it, fix mk with --set mk=N, or drop --grid)");
    const std::vector<detail::AnalyticValue> values = s.store.analytic(set, s.stats);
    s.stats.candidates += set.size();
    const std::vector<CrossCheck>& checks = s.store.cross_checks(s.stats);
    const Faster faster{set, values};
    const std::size_t per_grid = set.mk.size() * set.mmi.size();
    OperatingPoint out;
    out.fraction = range.fraction;
    std::size_t first = 0;
    std::vector<double> times;
    for (const auto& [procs, grids] : counts) {
      std::size_t best = first * per_grid;
      for (std::size_t i = first * per_grid; i < (first + grids) * per_grid; ++i)
        if (faster(i, best)) best = i;
      out.points.push_back({procs, make_recommendation(s.problem, set.at(best), values[best], checks)});
      times.push_back(values[best].time_ns);
      first += grids;
    }
    out.knee = knee(times, range.fraction);
    return out;
  });
}

}  // namespace poems::recommender
