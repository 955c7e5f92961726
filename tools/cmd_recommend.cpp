// `poems recommend`: the performance recommender (docs/recommender.md).
// Which values of a model's parameters minimise its time on a machine — the
// model's registered question by default (Sweep3D: blocking factors mk, mmi
// and, with --grid, the processor grid), a study's vary space (--study) or
// any parameters (--vary) — from stored evidence first; --confirm, --explain
// and --procs-range answer the follow-up questions.
#include <chrono>
#include <ostream>
#include <regex>

#include "options.h"
#include "poems/core/study.h"
#include "poems/examples/examples.h"
#include "poems/recommender/recommender.h"
#include "poems/recommender/rules.h"
#include "recommend_output.h"

namespace poems::cli {

namespace {

struct RecommendOptions {
  SystemOptions system;
  ChoiceOptions choices;
  MachineOptions machine;
  core::StoreOptions store;
  std::string spec_alias, wg, procs, procs_range, format;
  std::vector<std::string> vary;
  std::size_t top = 5;
  double knee_fraction = 0.10;
  bool grid = false, confirm = false, explain = false;
};

std::int64_t count_option(const std::string& option, const std::string& text) {
  static const std::regex digits("[0-9]{1,12}");
  const char* range = "an integer in 1..2147483648";
  if (!std::regex_match(text, digits))
    throw core::UsageError(option, "'" + text + "' is not a processor count; expected " + range);
  const std::int64_t v = std::stoll(text);
  if (v < 1 || v > (std::int64_t{1} << 31))
    throw core::UsageError(option, "'" + text + "' is out of range; expected " + range);
  return v;
}

std::pair<std::int64_t, std::int64_t> range_option(const std::string& text) {
  static const std::regex form("([0-9]{1,12})\\.\\.([0-9]{1,12})");
  std::smatch m;
  const char* expected = "A..B with 1 <= A < B <= 2147483648, e.g. 100..20000";
  if (!std::regex_match(text, m, form))
    throw core::UsageError("--procs-range", "'" + text + "' is not a range; expected " + expected);
  const std::int64_t a = std::stoll(m[1]), b = std::stoll(m[2]);
  if (a < 1 || b <= a || b > (std::int64_t{1} << 31))
    throw core::UsageError("--procs-range", "'" + text + "' is out of range; expected " + expected);
  return {a, b};
}

// --vary NAME=V1,V2,... or NAME=A..B (whole steps).
recommender::Dimension vary_option(const std::string& text) {
  const auto [name, values] = core::split_setting(text);
  recommender::Dimension d{{name}, {}};
  static const std::regex range("(-?[0-9]+)\\.\\.(-?[0-9]+)");
  std::smatch m;
  if (std::regex_match(values, m, range)) {
    const std::int64_t a = std::stoll(m[1]), b = std::stoll(m[2]);
    if (b < a || b - a >= static_cast<std::int64_t>(recommender::kMaxCandidates))
      throw core::UsageError("--vary " + name, "'" + values + "' is not a range A..B with A <= B and at most " +
                                                   std::to_string(recommender::kMaxCandidates) + " values");
    for (std::int64_t v = a; v <= b; ++v) d.values.push_back({static_cast<double>(v)});
    return d;
  }
  std::size_t start = 0;
  while (start <= values.size()) {
    const std::size_t comma = std::min(values.find(',', start), values.size());
    const std::string item = values.substr(start, comma - start);
    d.values.push_back({core::quantity("--vary " + name, item, base::kDimensionless, "numbers, e.g. 1,2,4 or 1..30")});
    start = comma + 1;
  }
  return d;
}

// The candidate dimensions of a study's vary clauses.
std::vector<recommender::Dimension> study_dimensions(const core::System& system) {
  std::vector<recommender::Dimension> out;
  for (const psl::VaryClause& v : system.study()->varies) {
    recommender::Dimension d;
    for (const psl::Identifier& t : v.targets) {
      if (t.name.find('.') != std::string::npos)
        throw core::UsageError("--study", "study " + system.study()->name.name + " varies " + t.name +
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

void run_recommend(const RecommendOptions& o, Context& ctx) {
  const auto started = std::chrono::steady_clock::now();
  if (o.top < 1 || o.top > 100000)
    throw core::UsageError("--top", std::to_string(o.top) + " is out of range; expected 1..100000");
  if (!(o.knee_fraction > 0 && o.knee_fraction < 1))
    throw core::UsageError("--knee-fraction", std::to_string(o.knee_fraction) + " is out of range; expected 0 < F < 1");
  std::optional<std::pair<std::int64_t, std::int64_t>> range;
  if (!o.procs_range.empty()) range = range_option(o.procs_range);
  if (range && !o.procs.empty())
    throw core::UsageError("--procs-range", "give either --procs or --procs-range, not both");
  if (range && o.confirm)
    throw core::UsageError("--confirm", "confirms the recommendations of --procs, not of --procs-range");
  if (o.explain && o.store.disabled)
    throw core::UsageError("--explain", "mines the knowledge base; it cannot be used with --no-store");
  if (!o.vary.empty() && !o.system.study.empty())
    throw core::UsageError("--vary", "give either --study (its vary space) or --vary, not both");
  std::int64_t procs = o.procs.empty() ? 0 : count_option("--procs", o.procs);

  SystemOptions system_options = o.system;
  if (system_options.spec.empty()) system_options.spec = o.spec_alias;
  if (system_options.spec.empty()) system_options.spec = examples::default_specification();
  if (system_options.spec.empty())
    throw core::UsageError("SPEC", "no specification given, and no example one to fall back on");
  const auto system = core::load_system(system_options.request());
  ctx.err << system->warnings();
  core::Store store(o.store);
  core::Session session(*system, session_options(*system, o.choices, o.machine, o.wg, ""), store);
  const recommender::Problem problem = recommender::problem_of(session);

  std::vector<recommender::Dimension> dims;
  for (const std::string& v : o.vary) dims.push_back(vary_option(v));
  if (system->study()) dims = study_dimensions(*system);
  std::set<std::string> fixed;
  for (const auto& [k, v] : system->binding()) fixed.insert(k);
  if (o.grid && procs == 0 && !range) procs = taskgraph::ModelSchedule(system->graph(), system->binding(), {}).ranks();

  RecommendReport report;
  report.spec = system_options.spec;
  report.procs = procs;
  report.all_layouts = o.grid;
  report.db_path = store.path();
  try {
    recommender::Recommender recommender(store.kb(), problem);
    report.problem = &recommender.problem();
    if (range) {
      recommender::ProcsRange r;
      r.from = range->first;
      r.to = range->second;
      r.fraction = o.knee_fraction;
      r.all_layouts = o.grid;
      r.others = dims.empty() ? recommender::candidates(problem, {}, fixed, 0, false).dimensions() : dims;
      report.operating_point = recommender.operating_point(r);
      const recommender::Recommendation& knee = report.operating_point->points[*report.operating_point->knee].best;
      report.recommendations.push_back(knee);
      report.chosen = knee.names;
    } else {
      const recommender::CandidateSet set = recommender::candidates(problem, dims, fixed, procs, o.grid);
      report.chosen = set.names();
      report.recommendations = recommender.recommend(set, o.top);
      if (o.confirm) report.confirm = recommender.confirm(report.recommendations);
    }
    if (o.explain) {
      const recommender::Recommendation& best = report.recommendations.front();
      recommender::CandidateSet chosen;
      {
        std::vector<recommender::Dimension> one;
        for (std::size_t k = 0; k < best.names.size(); ++k) one.push_back({{best.names[k]}, {{best.values[k]}}});
        chosen = recommender::CandidateSet(std::move(one));
      }
      report.rule_space = recommender::rule_space(problem, chosen);
      report.rules = recommender::mine_rules(recommender::load_rule_cases(*store.kb(), problem, report.rule_space),
                                             report.rule_space, problem.model);
      store.kb()->replace_rules(problem.model, report.rules.rules);
      std::vector<double> values;
      recommender::apply(problem, best.names, best.values, values);
      const std::vector<double> f =
          recommender::rule_features(problem, report.rule_space, {&problem.parameters, values}, problem.machine);
      for (const db::Rule& rule : report.rules.rules)
        report.rule_applies.push_back(recommender::rule_applies(rule, report.rule_space, f));
      report.explained = true;
    }
    report.stats = recommender.stats();
    report.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (o.format == "json")
      ctx.out << report_json(report).dump(2) << '\n';
    else
      ctx.out << report_text(report);
  } catch (const recommender::QueryError& e) {
    throw core::InputError(e.what());
  } catch (const db::Error& e) {
    throw core::StoreError(e.what());
  }
}

}  // namespace

void register_recommend(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<RecommendOptions>();
  CLI::App* cmd = app.add_subcommand(
      "recommend",
      "Recommend the values of a model's parameters that minimise its time (Sweep3D: blocking factors and grids)");
  add_system_options(cmd, o->system, false);
  cmd->add_option("--spec", o->spec_alias, "The specification (deprecated spelling of SPEC)");
  cmd->add_option("--vary", o->vary,
                  "A parameter to choose and its candidates: NAME=1,2,4 or NAME=1..30 (repeatable; default: the "
                  "model's registered question, or the --study's vary space)");
  add_procs_option(cmd, o->procs, "Processors: the candidates run on process layouts of this many");
  cmd->add_flag("--grid", o->grid, "Rank every process layout (processor grid) of --procs, not only the most square");
  cmd->add_option("--procs-range", o->procs_range,
                  "A..B: the best time per processor count and the optimal operating point");
  cmd->add_option("--knee-fraction", o->knee_fraction,
                  "The operating point is where the time improves by less than this fraction")
      ->capture_default_str();
  add_choice_options(cmd, o->choices);
  add_machine_options(cmd, o->machine);
  add_wg_option(cmd, o->wg);
  cmd->add_option("--top", o->top, "Recommendations to show")->capture_default_str();
  add_format_option(cmd, o->format, {"table", "json"});
  cmd->add_flag("--confirm", o->confirm, "Simulate the recommendations (simulation[MPI-Sim]) and report the agreement");
  cmd->add_flag("--explain", o->explain, "Mine rules from the knowledge base and show which apply");
  add_store_options(cmd, o->store);
  cmd->callback([o, cmd, &ctx] {
    finish_machine_options(cmd, o->machine);
    run_recommend(*o, ctx);
  });
}

}  // namespace poems::cli
