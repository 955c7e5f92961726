#include "poems/recommender/recommender.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "evidence.h"
#include "poems/core/difference.h"
#include "poems/taskgraph/dtg.h"

namespace poems::recommender {

double Recommendation::value(const std::string& name) const {
  for (std::size_t k = 0; k < names.size(); ++k)
    if (names[k] == name) return values[k];
  return std::numeric_limits<double>::quiet_NaN();
}

namespace {

// A model parameter whose default follows a chosen one would take a wrong
// value in the candidates' bindings: refuse the question.
void check_independent(const Problem& p, const CandidateSet& set) {
  if (set.size() == 0 || set.names().empty()) return;
  taskgraph::ParameterBinding a = p.analytic.binding, b = p.analytic.binding;
  const std::vector<double> first = set.at(0), last = set.at(set.size() - 1);
  for (std::size_t k = 0; k < set.names().size(); ++k) {
    a[set.names()[k]] = first[k];
    b[set.names()[k]] = first[k] == last[k] ? first[k] + 1 : last[k];
  }
  std::vector<double> va, vb;
  try {
    va = taskgraph::evaluate_model_values(*p.graph, a);
    vb = taskgraph::evaluate_model_values(*p.graph, b);
  } catch (const std::exception&) {
    return;  // the candidates' own evaluation reports it
  }
  for (std::size_t i = 0; i < p.parameters.size(); ++i) {
    const std::string& name = p.parameters[i];
    if (std::find(set.names().begin(), set.names().end(), name) != set.names().end()) continue;
    if (va[i] != vb[i] && !p.analytic.binding.count(name))
      throw QueryError("parameter " + name + " depends on the parameters the recommender chooses (" +
                       [&] {
                         std::string s;
                         for (const std::string& n : set.names()) s += (s.empty() ? "" : ", ") + n;
                         return s;
                       }() +
                       "); bind it with --set " + name + "=VALUE");
  }
}

// Fastest first; equal times in the problem class's tie order, then the candidates' order.
struct Faster {
  const CandidateSet& set;
  const std::vector<detail::AnalyticValue>& values;
  std::vector<std::size_t> tie_positions;  // positions in names() of the tie order's names
  bool operator()(std::size_t a, std::size_t b) const {
    if (values[a].time_ns != values[b].time_ns) return values[a].time_ns < values[b].time_ns;
    if (!tie_positions.empty()) {
      const std::vector<double> ca = set.at(a), cb = set.at(b);
      for (std::size_t p : tie_positions)
        if (ca[p] != cb[p]) return ca[p] < cb[p];
    }
    return a < b;
  }
};

Faster faster(const Problem& p, const CandidateSet& set, const std::vector<detail::AnalyticValue>& values) {
  Faster f{set, values, {}};
  if (const ProblemClass* pc = find_problem_class(p.model))
    for (const std::string& n : pc->tie_order) {
      auto it = std::find(set.names().begin(), set.names().end(), n);
      if (it != set.names().end()) f.tie_positions.push_back(static_cast<std::size_t>(it - set.names().begin()));
    }
  return f;
}

}  // namespace

struct Recommender::State {
  db::KnowledgeBase* kb;
  Problem problem;
  QueryStats stats;
  detail::EvidenceStore store;
  std::size_t jobs = 1;
  State(db::KnowledgeBase* k, Problem p) : kb(k), problem(std::move(p)), store(k, problem) {}
};

Recommender::Recommender(db::KnowledgeBase* kb, Problem problem)
    : state_(std::make_unique<State>(kb, std::move(problem))) {
  const Problem& p = state_->problem;
  for (const auto& node : p.analytic_key.binding.value("compute", nlohmann::json::array()))
    if (node.value("evaluator", "") != "processor[wg]")
      throw QueryError(
          "the recommender needs compute rates that do not change with the candidates "
          "(processor[wg]); node " +
          node.value("node", nlohmann::json()).dump() + " is timed by " + node.value("evaluator", "?") +
          " (give --wg, or --set compute=processor[wg])");
  if (const ProblemClass* pc = find_problem_class(p.model))
    if (pc->validate) pc->validate(p);
}

Recommender::~Recommender() = default;

void Recommender::set_jobs(std::size_t jobs) {
  state_->store.set_jobs(jobs);
  state_->jobs = std::max<std::size_t>(jobs, 1);
}

const QueryStats& Recommender::stats() const { return state_->stats; }
const Problem& Recommender::problem() const { return state_->problem; }

namespace {

Recommendation make_recommendation(const Problem& problem, const detail::EvidenceStore& store,
                                   const std::vector<std::string>& names, const std::vector<double>& c,
                                   const detail::AnalyticValue& v, const std::vector<CrossCheck>& checks) {
  Recommendation r;
  r.names = names;
  r.values = c;
  r.time_ns = v.time_ns;
  r.evidence.push_back({v.run_id, kAnalytic, v.time_ns, v.fresh});
  const std::string key = analytic_key(problem, names, c).canonical_text();
  for (const CrossCheck& check : checks)
    if (check.case_key == key) r.evidence.push_back({check.run_id, check.paradigm, check.other_ns, false});
  r.confidence = confidence(store.features(names, c), checks);
  return r;
}

// The analytic time of every candidate: the first step of every ranking.
// (A template: it takes the recommender's private state without naming it.)
template <typename State>
std::vector<detail::AnalyticValue> analytic_values(State& s, const CandidateSet& set) {
  if (set.size() > kMaxCandidates)
    throw QueryError("the question has " + std::to_string(set.size()) + " candidates; expected at most " +
                     std::to_string(kMaxCandidates) + " (fix a parameter with --set, or narrow --vary)");
  check_independent(s.problem, set);
  std::vector<detail::AnalyticValue> values = s.store.analytic(set, s.stats);
  s.stats.candidates += set.size();
  return values;
}

}  // namespace

std::vector<Recommendation> Recommender::recommend(const CandidateSet& set, std::size_t top) {
  State& s = *state_;
  const std::vector<detail::AnalyticValue> values = analytic_values(s, set);
  std::vector<std::size_t> order(set.size());
  std::iota(order.begin(), order.end(), 0);
  const std::size_t n = std::min(top, order.size());
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(n), order.end(),
                    faster(s.problem, set, values));
  const std::vector<CrossCheck>& checks = s.store.cross_checks(s.stats);
  std::vector<Recommendation> out;
  for (std::size_t k = 0; k < n; ++k)
    out.push_back(make_recommendation(s.problem, s.store, set.names(), set.at(order[k]), values[order[k]], checks));
  return out;
}

Ranking ranking_named(const std::string& name) {
  if (name == kAnalytic || name == "analytic") return Ranking::Analytic;
  if (name == kSimulation || name == "simulation") return Ranking::Simulation;
  if (name == "both") return Ranking::Both;
  throw QueryError("'" + name + "' is not a ranking; expected " + kAnalytic + ", " + kSimulation + " or both");
}

std::string ranking_name(Ranking by) {
  return by == Ranking::Analytic ? kAnalytic : by == Ranking::Simulation ? kSimulation : "both";
}

namespace {

// A fresh simulation of a recommendation is a cross-checked case.
void add_simulation(detail::EvidenceStore& store, const Problem& problem, Recommendation& r, const Evidence& e) {
  const bool listed = std::any_of(r.evidence.begin(), r.evidence.end(),
                                  [&](const Evidence& x) { return x.run_id != 0 && x.run_id == e.run_id; });
  if (!listed) r.evidence.push_back(e);
  if (!e.fresh) return;
  CrossCheck check;
  check.run_id = e.run_id;
  check.analytic_run_id = r.evidence.front().run_id;
  check.paradigm = e.paradigm;
  check.features = store.features(r.names, r.values);
  check.analytic_ns = r.time_ns;
  check.other_ns = e.time_ns;
  check.case_key = analytic_key(problem, r.names, r.values).canonical_text();
  store.add_cross_check(std::move(check));
}

}  // namespace

std::vector<Recommendation> Recommender::recommend(const CandidateSet& set, std::size_t top, Ranking by,
                                                   SimulatedRanking* report) {
  if (by == Ranking::Analytic) return recommend(set, top);
  State& s = *state_;
  const std::vector<detail::AnalyticValue> values = analytic_values(s, set);
  std::vector<std::size_t> order(set.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), faster(s.problem, set, values));
  s.store.cross_checks(s.stats);  // loaded before the fresh simulations are added
  SimulatedRanking how;
  how.by = by;
  how.candidates = set.size();
  how.limit = std::min(set.size(), std::max(kSimulatedCandidates, 4 * top));
  // Candidates in analytic order, as recommendations with their simulation.
  std::vector<Recommendation> simulated;
  const auto ranked_ns = [by](const Recommendation& r) {
    return by == Ranking::Both ? std::max(r.time_ns, *r.simulated_ns) : *r.simulated_ns;
  };
  // Whether the next candidate in analytic order, and so every later one, cannot enter the top.
  const auto beyond_the_top = [&] {
    if (simulated.size() < top || simulated.size() == set.size()) return simulated.size() == set.size();
    std::vector<double> times;
    for (const Recommendation& r : simulated) times.push_back(ranked_ns(r));
    std::nth_element(times.begin(), times.begin() + static_cast<std::ptrdiff_t>(top - 1), times.end());
    return values[order[simulated.size()]].time_ns > times[top - 1] * (1 + kRankingMargin);
  };
  while (simulated.size() < how.limit && !beyond_the_top()) {
    // First the analytic top, then as many at once as there are workers.
    const std::size_t batch =
        std::min(how.limit - simulated.size(), simulated.size() < top ? top - simulated.size() : s.jobs);
    std::vector<std::vector<double>> cases;
    for (std::size_t k = simulated.size(); k < simulated.size() + batch; ++k) cases.push_back(set.at(order[k]));
    const std::vector<Evidence> evidence = s.store.simulations(set.names(), cases, s.stats);
    for (std::size_t k = 0; k < batch; ++k) {
      const std::size_t i = order[simulated.size()];
      Recommendation r = make_recommendation(s.problem, s.store, set.names(), cases[k], values[i], {});
      r.simulated_ns = evidence[k].time_ns;
      add_simulation(s.store, s.problem, r, evidence[k]);
      simulated.push_back(std::move(r));
    }
  }
  how.simulated = simulated.size();
  how.complete = beyond_the_top();
  // By the ranked time; ties keep the analytic order.
  std::stable_sort(simulated.begin(), simulated.end(),
                   [&](const Recommendation& a, const Recommendation& b) { return ranked_ns(a) < ranked_ns(b); });
  simulated.resize(std::min(top, simulated.size()));
  const std::vector<CrossCheck>& checks = s.store.cross_checks(s.stats);
  for (Recommendation& r : simulated) {
    // The stored cases of other paradigms at this candidate are evidence too.
    const std::string key = analytic_key(s.problem, r.names, r.values).canonical_text();
    for (const CrossCheck& check : checks)
      if (check.case_key == key && std::none_of(r.evidence.begin(), r.evidence.end(),
                                                [&](const Evidence& e) { return e.run_id == check.run_id; }))
        r.evidence.push_back({check.run_id, check.paradigm, check.other_ns, false});
    r.confidence = confidence(s.store.features(r.names, r.values), checks);
  }
  if (report) *report = how;
  return simulated;
}

ConfirmReport Recommender::confirm(std::vector<Recommendation>& recommendations) {
  State& s = *state_;
  s.store.cross_checks(s.stats);  // loaded before the fresh simulations are added
  ConfirmReport report;
  std::vector<std::vector<double>> cases;
  for (const Recommendation& r : recommendations) cases.push_back(r.values);
  const std::vector<Evidence> simulated = recommendations.empty()
                                              ? std::vector<Evidence>{}
                                              : s.store.simulations(recommendations.front().names, cases, s.stats);
  for (std::size_t k = 0; k < recommendations.size(); ++k) {
    Recommendation& r = recommendations[k];
    const Evidence& e = simulated[k];
    add_simulation(s.store, s.problem, r, e);
    Confirmation c;
    c.values = r.values;
    c.analytic_ns = r.time_ns;
    c.simulated_ns = e.time_ns;
    c.difference_pct = core::difference_pct(e.time_ns, r.time_ns).value_or(0.0);
    c.simulation = e;
    report.max_abs_difference_pct = std::max(report.max_abs_difference_pct, std::fabs(c.difference_pct));
    if (!report.items.empty() && e.time_ns < report.items.back().simulated_ns) report.same_order = false;
    report.items.push_back(c);
  }
  const std::vector<CrossCheck>& checks = s.store.cross_checks(s.stats);
  for (Recommendation& r : recommendations) r.confidence = confidence(s.store.features(r.names, r.values), checks);
  return report;
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

Dimension layouts(const Problem& problem, std::int64_t procs, bool all) {
  if (procs < 1 || procs > (std::int64_t{1} << 31))
    throw QueryError("procs = " + std::to_string(procs) + " is out of range; expected an integer in 1..2147483648");
  if (const ProblemClass* pc = find_problem_class(problem.model); pc && pc->layouts)
    return {pc->layout, pc->layouts(problem, procs, all)};
  const std::vector<std::string>& set = problem.graph->process_set_params;
  if (set.size() == 2 || set.size() == 3) {
    // A grid of processes: every factorization of procs over its axes, or
    // (without --grid) the most square of them, the first on a tie.
    const std::vector<std::vector<std::int64_t>> grids = grid_factorizations(procs, set.size());
    const auto spread = [](const std::vector<std::int64_t>& g) {
      return *std::max_element(g.begin(), g.end()) - *std::min_element(g.begin(), g.end());
    };
    Dimension d{set, {}};
    const std::vector<std::int64_t>* best = nullptr;
    for (const std::vector<std::int64_t>& g : grids) {
      if (all)
        d.values.emplace_back(g.begin(), g.end());
      else if (!best || spread(g) < spread(*best))
        best = &g;
    }
    if (best) d.values.emplace_back(best->begin(), best->end());
    return d;
  }
  if (set.size() != 1) {
    std::string names;
    for (const std::string& n : set) names += (names.empty() ? "" : ", ") + n;
    throw QueryError("model " + problem.model + " has " + std::to_string(set.size()) + " process-set parameters (" +
                     names + "): choose their values with --vary instead of --procs (or register the model's layouts)");
  }
  return {set, {{static_cast<double>(procs)}}};
}

CandidateSet candidates(const Problem& problem, std::vector<Dimension> dimensions, const std::set<std::string>& fixed,
                        std::int64_t procs, bool all_layouts) {
  const ProblemClass* pc = find_problem_class(problem.model);
  if (dimensions.empty() && pc && pc->dimensions) dimensions = pc->dimensions(problem, fixed);
  if (procs != 0) {
    Dimension l = layouts(problem, procs, all_layouts);
    for (const std::string& n : l.names)
      if (fixed.count(n)) throw QueryError("--procs chooses " + n + "; do not also --set it");
    for (const Dimension& d : dimensions)
      for (const std::string& n : d.names)
        if (std::find(l.names.begin(), l.names.end(), n) != l.names.end())
          throw QueryError("--procs chooses " + n + "; do not also --vary it");
    dimensions.insert(dimensions.begin(), std::move(l));  // first: one study per layout
  }
  if (dimensions.empty())
    throw QueryError("nothing to choose: name the parameters with --vary NAME=VALUES (or --study, --procs)");
  for (const Dimension& d : dimensions) {
    if (d.values.empty()) throw QueryError("no candidate values for " + d.names.front());
    for (const std::string& n : d.names) problem.index(n);  // a model parameter
  }
  CandidateSet set(std::move(dimensions));
  if (set.size() > kMaxCandidates)
    throw QueryError("the question has " + std::to_string(set.size()) + " candidates; expected at most " +
                     std::to_string(kMaxCandidates) + " (fix a parameter with --set, or drop --grid)");
  return set;
}

OperatingPoint Recommender::operating_point(const ProcsRange& range) {
  State& s = *state_;
  if (!(range.fraction > 0 && range.fraction < 1))
    throw QueryError("fraction = " + std::to_string(range.fraction) + " is out of range; expected 0 < f < 1");
  const std::vector<std::int64_t> ladder = procs_ladder(range.from, range.to);
  // One candidate set over every layout of every count: one evidence lookup.
  Dimension all;
  std::vector<std::pair<std::int64_t, std::size_t>> counts;  // procs, layouts
  for (std::int64_t p : ladder) {
    Dimension l;
    try {
      l = layouts(s.problem, p, range.all_layouts);
    } catch (const QueryError&) {
      if (find_problem_class(s.problem.model) == nullptr) throw;
      continue;  // no usable layout at this count
    }
    if (l.values.empty()) continue;
    all.names = l.names;
    counts.emplace_back(p, l.values.size());
    all.values.insert(all.values.end(), l.values.begin(), l.values.end());
  }
  if (counts.empty())
    throw QueryError("procs-range " + std::to_string(range.from) + ".." + std::to_string(range.to) +
                     " has no processor count with a usable layout");
  std::vector<Dimension> dims{all};
  dims.insert(dims.end(), range.others.begin(), range.others.end());
  const CandidateSet set(std::move(dims));
  if (set.size() > kMaxCandidates)
    throw QueryError("the range has " + std::to_string(set.size()) + " candidates; expected at most " +
                     std::to_string(kMaxCandidates) + " (narrow it, fix a parameter with --set, or drop --grid)");
  check_independent(s.problem, set);
  const std::vector<detail::AnalyticValue> values = s.store.analytic(set, s.stats);
  s.stats.candidates += set.size();
  const std::vector<CrossCheck>& checks = s.store.cross_checks(s.stats);
  const Faster f = faster(s.problem, set, values);
  const std::size_t per_layout = set.size() / all.values.size();
  OperatingPoint out;
  out.fraction = range.fraction;
  std::size_t first = 0;
  std::vector<double> times;
  for (const auto& [procs, n] : counts) {
    std::size_t best = first * per_layout;
    for (std::size_t i = first * per_layout; i < (first + n) * per_layout; ++i)
      if (f(i, best)) best = i;
    out.points.push_back(
        {procs, make_recommendation(s.problem, s.store, set.names(), set.at(best), values[best], checks)});
    times.push_back(values[best].time_ns);
    first += n;
  }
  out.knee = knee(times, range.fraction);
  return out;
}

}  // namespace poems::recommender
