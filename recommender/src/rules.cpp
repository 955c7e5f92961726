#include "poems/recommender/rules.h"

#include "poems/recommender/problem_class.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <numeric>
#include <optional>
#include <unordered_map>

namespace poems::recommender {

namespace {

double number(const db::Cell& cell) {
  if (const auto* i = std::get_if<std::int64_t>(&cell)) return static_cast<double>(*i);
  if (const auto* d = std::get_if<double>(&cell)) return *d;
  return std::numeric_limits<double>::quiet_NaN();
}

std::string text(const db::Cell& cell) {
  if (const auto* s = std::get_if<std::string>(&cell)) return *s;
  return "";
}

std::string format(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

// The best time of a case with target `t` at `value` (the other targets at
// their best); the nearest stored value stands in for one the case lacks.
double time_at(const RuleCase& c, std::size_t t, std::int64_t value) {
  std::map<std::int64_t, double> best;
  for (const auto& [key, time] : c.times) {
    const std::int64_t v = key[t];
    auto it = best.find(v);
    if (it == best.end() || time < it->second) best[v] = time;
  }
  auto above = best.lower_bound(value);
  if (above == best.end()) return std::prev(above)->second;
  if (above->first == value || above == best.begin()) return above->second;
  auto below = std::prev(above);
  return value - below->first <= above->first - value ? below->second : above->second;
}

struct Labelled {
  const RuleCase* c;
  std::int64_t best;  // the target's value at the case's best time
  double best_time;
};

struct Condition {
  std::size_t feature;
  bool at_most;  // feature <= value, else feature > value
  double value;
};

double sse(const std::vector<const Labelled*>& cases) {
  if (cases.empty()) return 0;
  double mean = 0;
  for (const Labelled* l : cases) mean += std::log2(static_cast<double>(l->best));
  mean /= static_cast<double>(cases.size());
  double s = 0;
  for (const Labelled* l : cases) s += std::pow(std::log2(static_cast<double>(l->best)) - mean, 2);
  return s;
}

class TreeMiner {
 public:
  TreeMiner(std::size_t target, const RuleSpace& space, const MiningOptions& o, const std::string& problem_class,
            MinedRules& out)
      : target_(target), space_(space), o_(o), class_(problem_class), out_(out) {}

  void fit(const std::vector<const Labelled*>& cases, std::vector<Condition> path, int depth) {
    if (depth < o_.depth && cases.size() >= 2 * o_.min_leaf) {
      if (auto split = best_split(cases)) {
        std::vector<const Labelled*> left, right;
        for (const Labelled* l : cases) (l->c->features[split->feature] <= split->value ? left : right).push_back(l);
        path.push_back({split->feature, true, split->value});
        fit(left, path, depth + 1);
        path.back().at_most = false;
        fit(right, path, depth + 1);
        return;
      }
    }
    leaf(cases, path);
  }

 private:
  struct Split {
    std::size_t feature;
    double value;  // the largest feature value on the left
  };

  // The split that most reduces the squared error of log2(best): a stump of
  // a regression tree (CART); none if it explains less than a tenth.
  std::optional<Split> best_split(const std::vector<const Labelled*>& cases) const {
    const double parent = sse(cases);
    std::optional<Split> best;
    double best_error = parent;
    for (std::size_t f = 0; f < space_.feature_names.size(); ++f) {
      std::vector<const Labelled*> sorted = cases;
      std::sort(sorted.begin(), sorted.end(),
                [&](const Labelled* a, const Labelled* b) { return a->c->features[f] < b->c->features[f]; });
      for (std::size_t k = o_.min_leaf; k + o_.min_leaf <= sorted.size(); ++k) {
        if (sorted[k - 1]->c->features[f] == sorted[k]->c->features[f]) continue;
        const std::vector<const Labelled*> left(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(k));
        const std::vector<const Labelled*> right(sorted.begin() + static_cast<std::ptrdiff_t>(k), sorted.end());
        const double error = sse(left) + sse(right);
        if (error < best_error - 1e-12) {
          best_error = error;
          best = Split{f, sorted[k - 1]->c->features[f]};
        }
      }
    }
    if (best && parent - best_error < 0.1 * parent) return std::nullopt;
    return best;
  }

  void leaf(const std::vector<const Labelled*>& cases, const std::vector<Condition>& path) {
    if (cases.size() < o_.min_leaf) return;
    std::vector<std::int64_t> values;
    std::size_t runs = 0;
    for (const Labelled* l : cases) {
      values.push_back(l->best);
      runs += l->c->times.size();
    }
    std::sort(values.begin(), values.end());
    const std::int64_t lo = values.front(), hi = values.back(), suggest = values[(values.size() - 1) / 2];
    std::size_t hits = 0;
    for (const Labelled* l : cases)
      if (time_at(*l->c, target_, suggest) <= (1.0 + o_.tolerance) * l->best_time) ++hits;
    // A path may test a feature twice; keep the tightest bound of each side.
    std::string when;
    nlohmann::json conditions = nlohmann::json::array();
    for (std::size_t f = 0; f < space_.feature_names.size(); ++f) {
      const std::string& fname = space_.feature_names[f];
      std::optional<double> above, at_most;
      for (const Condition& c : path) {
        if (c.feature != f) continue;
        if (c.at_most)
          at_most = at_most ? std::min(*at_most, c.value) : c.value;
        else
          above = above ? std::max(*above, c.value) : c.value;
      }
      if (!above && !at_most) continue;
      std::string part = above && at_most ? format(*above) + " < " + fname + " <= " + format(*at_most)
                         : above          ? fname + " > " + format(*above)
                                          : fname + " <= " + format(*at_most);
      when += (when.empty() ? "" : " and ") + part;
      if (above) conditions.push_back({{"feature", fname}, {"op", ">"}, {"value", *above}});
      if (at_most) conditions.push_back({{"feature", fname}, {"op", "<="}, {"value", *at_most}});
    }
    const std::string& name = space_.targets[target_];
    db::Rule rule;
    rule.problem_class = class_;
    const std::string best =
        lo == hi ? name + " = " + std::to_string(lo) : name + " in " + std::to_string(lo) + ".." + std::to_string(hi);
    rule.rule_text = (when.empty() ? std::string("always") : when) + " => best " + best + "; " + name + " = " +
                     std::to_string(suggest) + " is within " + format(100 * o_.tolerance) + "% of the best in " +
                     std::to_string(hits) + " of " + std::to_string(cases.size()) + " cases";
    rule.support = static_cast<std::int64_t>(cases.size());
    rule.confidence = static_cast<double>(hits) / static_cast<double>(cases.size());
    rule.data = {{"target", name},
                 {"conditions", conditions},
                 {"range", {lo, hi}},
                 {"suggest", suggest},
                 {"tolerance", o_.tolerance},
                 {"hits", hits},
                 {"cases", cases.size()},
                 {"runs", runs}};
    out_.rules.push_back(std::move(rule));
  }

  std::size_t target_;
  const RuleSpace& space_;
  const MiningOptions& o_;
  const std::string& class_;
  MinedRules& out_;
};

std::vector<Labelled> label(const std::vector<RuleCase>& cases, std::size_t t, std::size_t min_values) {
  std::vector<Labelled> out;
  for (const RuleCase& c : cases) {
    std::vector<std::int64_t> seen;
    const std::vector<std::int64_t>* best = nullptr;
    double best_time = 0;
    for (const auto& [key, time] : c.times) {
      seen.push_back(key[t]);
      // Ties go to the smaller first target, then the second (the map's order), as the recommender breaks them.
      if (!best || time < best_time) {
        best = &key;
        best_time = time;
      }
    }
    std::sort(seen.begin(), seen.end());
    seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
    if (!best || seen.size() < min_values) continue;
    out.push_back({&c, (*best)[t], best_time});
  }
  return out;
}

}  // namespace

RuleSpace rule_space(const Problem& problem, const CandidateSet& candidates) {
  const ProblemClass* pc = find_problem_class(problem.model);
  if (pc && !pc->rule_targets.empty()) return {pc->rule_targets, pc->rule_feature_names};
  RuleSpace s;
  // Rules are about the chosen parameters, not the process layout (a
  // processor count is the question's, as in --procs-range).
  const std::vector<std::string>& layout = pc && !pc->layout.empty() ? pc->layout : problem.graph->process_set_params;
  for (const Dimension& d : candidates.dimensions())
    if (d.names.size() == 1 && s.targets.size() < 2 &&
        std::find(layout.begin(), layout.end(), d.names.front()) == layout.end())
      s.targets.push_back(d.names.front());
  for (const std::string& p : problem.parameters)
    if (std::find(s.targets.begin(), s.targets.end(), p) == s.targets.end()) s.feature_names.push_back(p);
  s.feature_names.push_back("L/Wg");
  return s;
}

std::vector<double> rule_features(const Problem& problem, const RuleSpace& space, const Binding& b,
                                  const components::ClosedFormMachine& m) {
  const ProblemClass* pc = find_problem_class(problem.model);
  if (pc && !pc->rule_targets.empty() && pc->rule_features) return pc->rule_features(b, m);
  std::vector<double> f;
  for (std::size_t k = 0; k + 1 < space.feature_names.size(); ++k) f.push_back(b(space.feature_names[k]));
  const double latency_ns = static_cast<double>(m.params.L) / 1000.0;
  f.push_back(m.ns_per_work > 0 ? latency_ns / m.ns_per_work : std::numeric_limits<double>::infinity());
  return f;
}

std::vector<RuleCase> load_rule_cases(const db::KnowledgeBase& kb, const Problem& problem, const RuleSpace& space) {
  if (space.targets.empty()) return {};
  // A case is everything of a binding but the targets: the other
  // parameters, the machine, the rates, the method.
  std::string removed, targets;
  for (const std::string& t : space.targets) {
    removed += ", '$.parameters." + t + "'";
    targets += ", json_extract(r.binding, '$.parameters." + t + "')";
  }
  const db::QueryResult rows = kb.query_readonly(
      "SELECT json_remove(r.binding" + removed +
          "), json_extract(r.binding, '$.parameters'), "
          "json_extract(r.binding, '$.machine'), json_extract(r.binding, '$.compute[0].ns_per_work'), res.time_ns" +
          targets +
          " FROM runs r JOIN results res ON res.run_id = r.id "
          "WHERE r.model = ?1 AND r.spec_hash = ?2 AND r.tool_version = ?3 AND r.status = 'done' "
          "AND r.evaluator = 'analytic[LogGP]' AND json_extract(r.binding, '$.method') = ?4 ORDER BY r.id",
      {problem.model, problem.spec_hash, problem.tool_version, problem.method});
  std::vector<RuleCase> cases;
  std::unordered_map<std::string, std::size_t> index;
  for (const auto& row : rows.rows) {
    std::vector<std::int64_t> key;
    bool ok = true;
    for (std::size_t k = 0; k < space.targets.size(); ++k) {
      const double v = number(row[5 + k]);
      ok = ok && !std::isnan(v);
      key.push_back(static_cast<std::int64_t>(v));
    }
    const double time = number(row[4]);
    if (!ok || std::isnan(time)) continue;
    auto [it, inserted] = index.try_emplace(text(row[0]), cases.size());
    if (inserted) {
      const nlohmann::json params = nlohmann::json::parse(text(row[1]), nullptr, false);
      const nlohmann::json machine = nlohmann::json::parse(text(row[2]), nullptr, false);
      if (!params.is_object() || !machine.is_object()) {
        index.erase(it);
        continue;
      }
      std::vector<double> values;
      for (const std::string& p : problem.parameters) values.push_back(params.value(p, 0.0));
      components::ClosedFormMachine m = problem.machine;
      m.params.L = machine.value("L_ps", m.params.L);
      m.ns_per_work = std::isnan(number(row[3])) ? m.ns_per_work : number(row[3]);
      try {
        RuleCase c;
        c.features = rule_features(problem, space, {&problem.parameters, values}, m);
        cases.push_back(std::move(c));
      } catch (const std::exception&) {
        index.erase(it);
        continue;
      }
    }
    cases[it->second].times[key] = time;
  }
  return cases;
}

MinedRules mine_rules(const std::vector<RuleCase>& cases, const RuleSpace& space, const std::string& problem_class,
                      const MiningOptions& options) {
  MinedRules out;
  out.cases = cases.size();
  for (const RuleCase& c : cases) out.runs += c.times.size();
  for (std::size_t t = 0; t < space.targets.size(); ++t) {
    const std::vector<Labelled> labelled = label(cases, t, t == 0 ? options.min_values : 2);
    std::vector<const Labelled*> all;
    for (const Labelled& l : labelled) all.push_back(&l);
    TreeMiner(t, space, options, problem_class, out).fit(all, {}, 0);
  }
  if (space.targets.size() < 2) return out;
  // The paper's observation (POEMS section 5.3): at a well-chosen first
  // target (mk), the second (mmi) matters little.
  std::size_t spread_cases = 0, flat = 0;
  double worst = 0;
  for (const Labelled& l : label(cases, 0, options.min_values)) {
    double lo = std::numeric_limits<double>::infinity(), hi = 0;
    std::size_t n = 0;
    for (const auto& [key, time] : l.c->times)
      if (key[0] == l.best) {
        lo = std::min(lo, time);
        hi = std::max(hi, time);
        ++n;
      }
    if (n < 2) continue;
    ++spread_cases;
    const double spread = (hi - lo) / lo;
    worst = std::max(worst, spread);
    if (spread <= 0.01) ++flat;
  }
  if (spread_cases >= options.min_leaf) {
    const std::string& first = space.targets[0];
    const std::string& second = space.targets[1];
    db::Rule rule;
    rule.problem_class = problem_class;
    rule.rule_text = "at the best " + first + " => every " + second + " is within 1% of the best time in " +
                     std::to_string(flat) + " of " + std::to_string(spread_cases) + " cases (largest spread " +
                     format(100 * worst) + "%)";
    rule.support = static_cast<std::int64_t>(spread_cases);
    rule.confidence = static_cast<double>(flat) / static_cast<double>(spread_cases);
    rule.data = {{"target", second + "-spread"},
                 {"conditions", nlohmann::json::array()},
                 {"within", 0.01},
                 {"hits", flat},
                 {"cases", spread_cases},
                 {"largest_spread", worst}};
    out.rules.push_back(std::move(rule));
  }
  return out;
}

bool rule_applies(const db::Rule& rule, const RuleSpace& space, const std::vector<double>& features) {
  if (!rule.data.contains("conditions")) return false;
  for (const auto& c : rule.data["conditions"]) {
    const std::string name = c.value("feature", "");
    const auto f = std::find(space.feature_names.begin(), space.feature_names.end(), name);
    if (f == space.feature_names.end()) return false;
    const std::size_t k = static_cast<std::size_t>(f - space.feature_names.begin());
    if (k >= features.size()) return false;
    const double x = features[k];
    const double v = c.value("value", 0.0);
    if (c.value("op", "") == "<=" ? !(x <= v) : !(x > v)) return false;
  }
  return true;
}

}  // namespace poems::recommender
