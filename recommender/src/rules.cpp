#include "poems/recommender/rules.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <numeric>
#include <optional>
#include <unordered_map>

namespace poems::recommender {

const std::array<const char*, kRuleFeatureCount> kRuleFeatureNames = {"it*jt", "procs", "kt", "L/Wg"};

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

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

std::string format(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

// Which blocking factor a tree is about.
enum class Target { kMk, kMmi };

const char* target_name(Target t) { return t == Target::kMk ? "mk" : "mmi"; }

// The best time of a case with the target at `value` (the other factor at its
// best); the nearest stored value stands in for one the case lacks.
double time_at(const RuleCase& c, Target t, std::int64_t value) {
  std::map<std::int64_t, double> best;
  for (const auto& [key, time] : c.times) {
    const std::int64_t v = t == Target::kMk ? key.first : key.second;
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
  TreeMiner(Target target, const MiningOptions& o, const std::string& problem_class, MinedRules& out)
      : target_(target), o_(o), class_(problem_class), out_(out) {}

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
    for (std::size_t f = 0; f < kRuleFeatureCount; ++f) {
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
    for (std::size_t f = 0; f < kRuleFeatureCount; ++f) {
      std::optional<double> above, at_most;
      for (const Condition& c : path) {
        if (c.feature != f) continue;
        if (c.at_most)
          at_most = at_most ? std::min(*at_most, c.value) : c.value;
        else
          above = above ? std::max(*above, c.value) : c.value;
      }
      if (!above && !at_most) continue;
      std::string part = above && at_most ? format(*above) + " < " + kRuleFeatureNames[f] + " <= " + format(*at_most)
                         : above          ? std::string(kRuleFeatureNames[f]) + " > " + format(*above)
                                          : std::string(kRuleFeatureNames[f]) + " <= " + format(*at_most);
      when += (when.empty() ? "" : " and ") + part;
      if (above) conditions.push_back({{"feature", kRuleFeatureNames[f]}, {"op", ">"}, {"value", *above}});
      if (at_most) conditions.push_back({{"feature", kRuleFeatureNames[f]}, {"op", "<="}, {"value", *at_most}});
    }
    const std::string name = target_name(target_);
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

  Target target_;
  const MiningOptions& o_;
  const std::string& class_;
  MinedRules& out_;
};

std::vector<Labelled> label(const std::vector<RuleCase>& cases, Target t, std::size_t min_values) {
  std::vector<Labelled> out;
  for (const RuleCase& c : cases) {
    std::vector<std::int64_t> seen;
    const std::pair<std::int64_t, std::int64_t>* best = nullptr;
    double best_time = 0;
    for (const auto& [key, time] : c.times) {
      seen.push_back(t == Target::kMk ? key.first : key.second);
      // Ties go to the smaller mk, then mmi (the map's order), as the recommender breaks them.
      if (!best || time < best_time) {
        best = &key;
        best_time = time;
      }
    }
    std::sort(seen.begin(), seen.end());
    seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
    if (!best || seen.size() < min_values) continue;
    out.push_back({&c, t == Target::kMk ? best->first : best->second, best_time});
  }
  return out;
}

}  // namespace

RuleFeatures rule_features(std::int64_t it_g, std::int64_t jt_g, std::int64_t kt, std::int64_t npe_i,
                           std::int64_t npe_j, double latency_ns, double wg_ns) {
  return {static_cast<double>(ceil_div(it_g, npe_i) * ceil_div(jt_g, npe_j)), static_cast<double>(npe_i * npe_j),
          static_cast<double>(kt), wg_ns > 0 ? latency_ns / wg_ns : std::numeric_limits<double>::infinity()};
}

std::vector<RuleCase> load_rule_cases(const db::KnowledgeBase& kb, const std::string& model,
                                      const std::string& spec_hash, const std::string& tool_version) {
  // A case is everything of a binding but mk and mmi: the other parameters,
  // the machine and the rate (wg_ns from `poems analyze`, the first compute
  // node's ns_per_work from `poems run`).
  const db::QueryResult rows = kb.query_readonly(
      "SELECT json_remove(json_extract(r.binding, '$.parameters'), '$.mk', '$.mmi') || "
      "json_extract(r.binding, '$.machine') || "
      "coalesce(json_extract(r.binding, '$.wg_ns'), json_extract(r.binding, '$.compute[0].ns_per_work')), "
      "json_extract(r.binding, '$.parameters.mk'), json_extract(r.binding, '$.parameters.mmi'), "
      "json_extract(r.binding, '$.parameters.it_g'), json_extract(r.binding, '$.parameters.jt_g'), "
      "json_extract(r.binding, '$.parameters.kt'), json_extract(r.binding, '$.parameters.npe_i'), "
      "json_extract(r.binding, '$.parameters.npe_j'), json_extract(r.binding, '$.machine.L_ps'), "
      "coalesce(json_extract(r.binding, '$.wg_ns'), json_extract(r.binding, '$.compute[0].ns_per_work')), "
      "res.time_ns FROM runs r JOIN results res ON res.run_id = r.id "
      "WHERE r.model = ?1 AND r.spec_hash = ?2 AND r.tool_version = ?3 AND r.status = 'done' "
      "AND r.evaluator = 'analytic[LogGP]' "
      "AND coalesce(json_extract(r.binding, '$.method'), 'default') IN ('closed-form', 'default') ORDER BY r.id",
      {model, spec_hash, tool_version});
  std::vector<RuleCase> cases;
  std::unordered_map<std::string, std::size_t> index;
  for (const auto& row : rows.rows) {
    double v[10];
    bool ok = true;
    for (int k = 0; k < 10; ++k) {
      v[k] = number(row[k + 1]);
      ok = ok && !std::isnan(v[k]);
    }
    if (!ok || v[2] < 1 || v[3] < 1 || v[5] < 1 || v[6] < 1) continue;
    auto [it, inserted] = index.try_emplace(text(row[0]), cases.size());
    if (inserted) {
      cases.emplace_back();
      cases.back().features = rule_features(static_cast<std::int64_t>(v[2]), static_cast<std::int64_t>(v[3]),
                                            static_cast<std::int64_t>(v[4]), static_cast<std::int64_t>(v[5]),
                                            static_cast<std::int64_t>(v[6]), v[7] / 1000.0, v[8]);
    }
    cases[it->second].times[{static_cast<std::int64_t>(v[0]), static_cast<std::int64_t>(v[1])}] = v[9];
  }
  return cases;
}

MinedRules mine_rules(const std::vector<RuleCase>& cases, const std::string& problem_class,
                      const MiningOptions& options) {
  MinedRules out;
  out.cases = cases.size();
  for (const RuleCase& c : cases) out.runs += c.times.size();
  for (Target t : {Target::kMk, Target::kMmi}) {
    const std::vector<Labelled> labelled = label(cases, t, t == Target::kMk ? options.min_values : 2);
    std::vector<const Labelled*> all;
    for (const Labelled& l : labelled) all.push_back(&l);
    TreeMiner(t, options, problem_class, out).fit(all, {}, 0);
  }
  // The paper's observation (POEMS section 5.3): at a well-chosen mk, mmi matters little.
  std::size_t spread_cases = 0, flat = 0;
  double worst = 0;
  for (const Labelled& l : label(cases, Target::kMk, options.min_values)) {
    double lo = std::numeric_limits<double>::infinity(), hi = 0;
    std::size_t n = 0;
    for (const auto& [key, time] : l.c->times)
      if (key.first == l.best) {
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
    db::Rule rule;
    rule.problem_class = problem_class;
    rule.rule_text = "at the best mk => every mmi is within 1% of the best time in " + std::to_string(flat) + " of " +
                     std::to_string(spread_cases) + " cases (largest spread " + format(100 * worst) + "%)";
    rule.support = static_cast<std::int64_t>(spread_cases);
    rule.confidence = static_cast<double>(flat) / static_cast<double>(spread_cases);
    rule.data = {{"target", "mmi-spread"}, {"conditions", nlohmann::json::array()},
                 {"within", 0.01},         {"hits", flat},
                 {"cases", spread_cases},  {"largest_spread", worst}};
    out.rules.push_back(std::move(rule));
  }
  return out;
}

bool rule_applies(const db::Rule& rule, const RuleFeatures& features) {
  if (!rule.data.contains("conditions")) return false;
  for (const auto& c : rule.data["conditions"]) {
    const std::string name = c.value("feature", "");
    const auto f =
        std::find_if(kRuleFeatureNames.begin(), kRuleFeatureNames.end(), [&](const char* n) { return name == n; });
    if (f == kRuleFeatureNames.end()) return false;
    const double x = features[static_cast<std::size_t>(f - kRuleFeatureNames.begin())];
    const double v = c.value("value", 0.0);
    if (c.value("op", "") == "<=" ? !(x <= v) : !(x > v)) return false;
  }
  return true;
}

}  // namespace poems::recommender
