#include "poems/recommender/question.h"

#include <map>
#include <optional>
#include <string_view>
#include <utility>

#include "poems/core/error.h"
#include "poems/core/study.h"
#include "poems/psl/value.h"
#include "poems/taskgraph/dtg.h"

namespace poems::recommender {

namespace {

// "A..B" with A and B whole numbers of at most 15 digits (no regex: libstdc++'s
// recurses once per character and overflows the stack on a long argument).
std::optional<std::pair<std::int64_t, std::int64_t>> integer_range(const std::string& text) {
  const std::size_t dots = text.find("..");
  if (dots == std::string::npos) return std::nullopt;
  auto whole = [](std::string_view t) -> std::optional<std::int64_t> {
    const bool negative = !t.empty() && t.front() == '-';
    if (negative) t.remove_prefix(1);
    if (t.empty() || t.size() > 15) return std::nullopt;
    std::int64_t v = 0;
    for (char c : t) {
      if (c < '0' || c > '9') return std::nullopt;
      v = v * 10 + (c - '0');
    }
    return negative ? -v : v;
  };
  const auto a = whole(std::string_view(text).substr(0, dots)), b = whole(std::string_view(text).substr(dots + 2));
  if (!a || !b) return std::nullopt;
  return std::pair{*a, *b};
}

}  // namespace

Dimension vary_dimension(const std::string& text) {
  const auto [name, values] = core::split_setting(text);
  Dimension d{{name}, {}};
  if (const auto range = integer_range(values)) {
    const auto [a, b] = *range;
    if (b < a || b - a >= static_cast<std::int64_t>(kMaxCandidates))
      throw core::UsageError("--vary " + name, "'" + values + "' is not a range A..B with A <= B and at most " +
                                                   std::to_string(kMaxCandidates) + " values");
    for (std::int64_t v = a; v <= b; ++v) d.values.push_back({static_cast<double>(v)});
    return d;
  }
  for (std::size_t start = 0; start <= values.size();) {
    const std::size_t comma = std::min(values.find(',', start), values.size());
    d.values.push_back({core::quantity("--vary " + name, values.substr(start, comma - start), base::kDimensionless,
                                       "numbers, e.g. 1,2,4 or 1..30")});
    start = comma + 1;
  }
  return d;
}

std::vector<Dimension> study_dimensions(const psl::StudyDecl& study) {
  std::vector<Dimension> out;
  for (const psl::VaryClause& v : study.varies) {
    Dimension d;
    for (const psl::Identifier& t : v.targets) {
      if (t.name.find('.') != std::string::npos)
        throw core::UsageError("--study", "study " + study.name.name + " varies " + t.name +
                                              ", a machine parameter; the recommender chooses model parameters");
      d.names.push_back(t.name);
    }
    for (const auto& tuple : core::vary_values(v)) {
      std::vector<double> values;
      for (const base::Value& x : tuple) values.push_back(x.number);
      d.values.push_back(values);
    }
    out.push_back(std::move(d));
  }
  return out;
}

namespace {

// The candidates every constraint holds for (--where), as one dimension of
// their names: the product of the --vary lines, filtered.
Dimension constrained(const core::System& system, const CandidateSet& set, const std::vector<const psl::Expr*>& where) {
  if (set.size() > kMaxCandidates)
    throw core::UsageError("--vary", "the candidates number " + std::to_string(set.size()) + "; expected at most " +
                                         std::to_string(kMaxCandidates) + " before --where");
  Dimension kept;
  kept.names = set.names();
  const taskgraph::StaticTaskGraph& graph = *system.graph();
  std::vector<double> candidate;
  for (std::size_t i = 0; i < set.size(); ++i) {
    set.at(i, candidate);
    taskgraph::ParameterBinding binding = system.binding();
    for (std::size_t k = 0; k < kept.names.size(); ++k) binding[kept.names[k]] = candidate[k];
    std::vector<double> values;
    try {
      values = taskgraph::evaluate_model_values(graph, binding);
    } catch (const std::exception&) {
      continue;  // a candidate the model cannot take is no answer
    }
    std::map<std::string, base::Value, std::less<>> names;
    for (std::uint32_t s = 0; s < graph.model_slot_count() && s < values.size(); ++s)
      names[graph.slot_names[s]] = base::Value::of_number(values[s]);
    bool holds = true;
    for (const psl::Expr* c : where) {
      const psl::EvalResult r = psl::evaluate(*c, [&](std::string_view n) -> const base::Value* {
        auto it = names.find(n);
        return it == names.end() ? nullptr : &it->second;
      });
      if (!r.value) throw core::UsageError("--where", psl::to_source(*c) + ": " + r.error);
      holds = holds && r.value->kind == base::Value::Kind::Bool && r.value->boolean;
    }
    if (holds) kept.values.push_back(candidate);
  }
  if (kept.values.empty())
    throw core::UsageError("--where", "keeps none of the " + std::to_string(set.size()) + " candidates of --vary");
  return kept;
}

}  // namespace

Answer answer(core::Session& session, const Question& q) {
  if (q.procs_range && q.procs)
    throw core::UsageError("--procs-range", "give either --procs or --procs-range, not both");
  if (q.procs_range && q.confirm)
    throw core::UsageError("--confirm", "confirms the recommendations of --procs, not of --procs-range");
  const Ranking by = ranking_named(q.by);
  if (q.procs_range && by != Ranking::Analytic)
    throw core::UsageError(
        "--by", "ranks the candidates of --procs or --vary; --procs-range ranks by " + std::string(kAnalytic));
  const core::System& system = session.system();
  if (!q.vary.empty() && system.study())
    throw core::UsageError("--vary", "give either --study (its vary space) or --vary, not both");
  Answer a;
  a.problem = problem_of(session, q.confirm || by != Ranking::Analytic);
  std::vector<Dimension> dims;
  for (const std::string& v : q.vary) dims.push_back(vary_dimension(v));
  if (system.study()) dims = study_dimensions(*system.study());
  if (system.study() && !system.study()->constraints.empty()) {
    // A `where` couples the varied names: one dimension of the bindings it keeps.
    Dimension kept;
    for (const Dimension& d : dims) kept.names.insert(kept.names.end(), d.names.begin(), d.names.end());
    for (const core::StudyBinding& b : core::plan_study(system, {"analytic[LogGP]"}).bindings) {
      std::vector<double> values;
      for (const auto& [name, value] : b) values.push_back(value.number);
      kept.values.push_back(std::move(values));
    }
    dims = {std::move(kept)};
  }
  const std::vector<const psl::Expr*>& where = system.settings().constraints;
  if (!where.empty()) {
    if (q.vary.empty())
      throw core::UsageError("--where", system.study() ? "constrains --vary's candidates; a study's are constrained "
                                                         "by its own `where`"
                                                       : "constrains the candidates of --vary: give --vary");
    dims = {constrained(system, CandidateSet(dims), where)};
  }
  std::set<std::string> fixed;
  for (const auto& [k, v] : system.binding()) fixed.insert(k);
  if (!q.vary.empty()) {
    std::set<std::string> seen;
    for (const Dimension& d : dims)
      for (const std::string& n : d.names) {
        if (!seen.insert(n).second) throw core::UsageError("--vary", n + " is given twice");
        if (fixed.contains(n))
          throw core::UsageError("--vary", n + " is also bound by --set; give it one way (--set fixes it)");
      }
  }
  a.procs = q.procs;
  a.all_layouts = q.all_layouts;
  if (q.all_layouts && a.procs == 0 && !q.procs_range)
    a.procs = taskgraph::ModelSchedule(system.graph(), system.binding(), {}).ranks();

  db::KnowledgeBase* kb = session.store().kb();
  Recommender r(kb, a.problem);
  r.set_jobs(q.jobs);
  if (q.procs_range) {
    ProcsRange range;
    range.from = q.procs_range->first;
    range.to = q.procs_range->second;
    range.fraction = q.knee_fraction;
    range.all_layouts = q.all_layouts;
    range.others = dims.empty() ? candidates(a.problem, {}, fixed, 0, false).dimensions() : dims;
    a.operating_point = r.operating_point(range);
    a.recommendations.push_back(a.operating_point->points[*a.operating_point->knee].best);
  } else {
    a.recommendations = r.recommend(candidates(a.problem, dims, fixed, a.procs, q.all_layouts), q.top, by, &a.ranking);
    if (q.confirm) a.confirm = r.confirm(a.recommendations);
  }
  a.chosen = a.recommendations.front().names;
  if (q.explain) {
    if (!kb) throw core::UsageError("--explain", "mines the knowledge base; it cannot be used with --no-store");
    const Recommendation& best = a.recommendations.front();
    std::vector<Dimension> chosen;
    for (std::size_t k = 0; k < best.names.size(); ++k) chosen.push_back({{best.names[k]}, {{best.values[k]}}});
    a.rule_space = rule_space(a.problem, CandidateSet(std::move(chosen)));
    a.rules = mine_rules(load_rule_cases(*kb, a.problem, a.rule_space), a.rule_space, a.problem.model);
    kb->replace_rules(a.problem.model, a.rules.rules);
    std::vector<double> values;
    apply(a.problem, best.names, best.values, values);
    const std::vector<double> f =
        rule_features(a.problem, a.rule_space, {&a.problem.parameters, values}, a.problem.machine);
    for (const db::Rule& rule : a.rules.rules) a.rule_applies.push_back(rule_applies(rule, a.rule_space, f));
    a.explained = true;
  }
  a.stats = r.stats();
  return a;
}

void check_question(const Question& q, bool with_store) {
  if (q.top < 1 || q.top > 100000)
    throw core::UsageError("--top", std::to_string(q.top) + " is out of range; expected 1..100000");
  if (!(q.knee_fraction > 0 && q.knee_fraction < 1))
    throw core::UsageError("--knee-fraction", std::to_string(q.knee_fraction) + " is out of range; expected 0 < F < 1");
  if (q.explain && !with_store)
    throw core::UsageError("--explain", "mines the knowledge base; it cannot be used with --no-store");
  try {
    ranking_named(q.by);
  } catch (const QueryError& e) {
    throw core::UsageError("--by", e.what());
  }
}

}  // namespace poems::recommender
