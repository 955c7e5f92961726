// `poems recommend`: the performance recommender (docs/recommender.md). Which
// (mk, mmi) — and, with --grid, which processor grid — for a Sweep3D problem
// on a machine of the specification, from stored evidence first; --confirm,
// --explain and --procs-range answer the follow-up questions.
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <regex>

#include "cli_common.h"
#include "loaded_model.h"
#include "machine_model.h"
#include "model_evaluators.h"
#include "model_source.h"
#include "poems/db/knowledge_base.h"
#include "poems/recommender/recommender.h"
#include "poems/recommender/rules.h"
#include "poems/taskgraph/dtg.h"
#include "recommend_output.h"
#include "result_store.h"

namespace poems::cli {

namespace {

namespace fs = std::filesystem;

constexpr const char* kDefaultSpec = "examples/sweep3d/sweep3d.psl";

struct RecommendOptions {
  std::string spec, model, machine, processor, wg, procs, procs_range, format = "table";
  std::vector<std::string> sets;
  std::size_t top = 5;
  double knee_fraction = 0.10;
  bool grid = false, confirm = false, explain = false;
  StoreOptions store;
};

// The default specification: ./examples/sweep3d/sweep3d.psl (as `poems
// analyze` is usually given it, so run keys match), else the one beside the
// executable's source tree (build/bin/poems -> examples/).
std::string default_spec() {
  if (fs::is_regular_file(kDefaultSpec)) return kDefaultSpec;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path beside = exe.parent_path().parent_path().parent_path() / kDefaultSpec;
    if (fs::is_regular_file(beside)) return beside.lexically_normal().string();
  }
  usage_error("--spec", std::string("no specification given and ") + kDefaultSpec +
                            " is not here; give --spec FILE (a PSL specification with a Sweep3D model)");
}

std::vector<std::string> network_components(const psl::Program& program) {
  std::vector<std::string> names;
  for (const psl::Module& m : program.modules)
    for (const psl::ComponentDecl& c : m.components)
      if (c.domain.head == "hardware" && c.domain.path == "network") names.push_back(c.name.name);
  return names;
}

std::int64_t count_option(const std::string& option, const std::string& text) {
  static const std::regex digits("[0-9]{1,12}");
  const char* range = "an integer in 1..2147483648";
  if (!std::regex_match(text, digits))
    usage_error(option, "'" + text + "' is not a processor count; expected " + range);
  const std::int64_t v = std::stoll(text);
  if (v < 1 || v > (std::int64_t{1} << 31)) usage_error(option, "'" + text + "' is out of range; expected " + range);
  return v;
}

std::pair<std::int64_t, std::int64_t> range_option(const std::string& text) {
  static const std::regex form("([0-9]{1,12})\\.\\.([0-9]{1,12})");
  std::smatch m;
  const char* expected = "A..B with 1 <= A < B <= 2147483648, e.g. 100..20000";
  if (!std::regex_match(text, m, form))
    usage_error("--procs-range", "'" + text + "' is not a range; expected " + expected);
  const std::int64_t a = std::stoll(m[1]), b = std::stoll(m[2]);
  if (a < 1 || b <= a || b > (std::int64_t{1} << 31))
    usage_error("--procs-range", "'" + text + "' is out of range; expected " + expected);
  return {a, b};
}

// The recommender varies mk, mmi, npe_i and npe_j; every other parameter must
// not depend on them, or the candidates' bindings would be wrong.
void check_independent(const taskgraph::StaticTaskGraph& g, const taskgraph::ParameterBinding& binding) {
  taskgraph::ParameterBinding a = binding, b = binding;
  const std::vector<std::pair<const char*, std::pair<double, double>>> varied = {
      {"mk", {1, 2}}, {"mmi", {1, 2}}, {"npe_i", {1, 3}}, {"npe_j", {1, 5}}};
  for (const auto& [name, values] : varied) {
    a[name] = values.first;
    b[name] = values.second;
  }
  const std::vector<double> va = taskgraph::evaluate_model_values(g, a), vb = taskgraph::evaluate_model_values(g, b);
  for (std::size_t i = 0; i < g.params.size(); ++i) {
    const std::string& p = g.params[i];
    if (p == "mk" || p == "mmi" || p == "npe_i" || p == "npe_j") continue;
    if (va[i] != vb[i])
      throw std::runtime_error(
          "parameter " + p + " depends on mk, mmi, npe_i or npe_j, which the recommender varies; bind it with --set " +
          p + "=VALUE");
  }
}

void run(const RecommendOptions& o, int& result) {
  const auto started = std::chrono::steady_clock::now();
  if (o.top < 1 || o.top > 100000) usage_error("--top", std::to_string(o.top) + " is out of range; expected 1..100000");
  if (!(o.knee_fraction > 0 && o.knee_fraction < 1))
    usage_error("--knee-fraction", std::to_string(o.knee_fraction) + " is out of range; expected 0 < F < 1");
  std::optional<std::pair<std::int64_t, std::int64_t>> range;
  if (!o.procs_range.empty()) range = range_option(o.procs_range);
  if (range && !o.procs.empty()) usage_error("--procs-range", "give either --procs or --procs-range, not both");
  if (range && o.confirm) usage_error("--confirm", "confirms the recommendations of --procs, not of --procs-range");
  std::int64_t procs = o.procs.empty() ? 0 : count_option("--procs", o.procs);
  if (o.explain && o.store.disabled)
    usage_error("--explain", "mines the knowledge base; it cannot be used with --no-store");

  const std::string spec = o.spec.empty() ? default_spec() : o.spec;
  LoadedModel loaded;
  if (!load_model(spec, o.model, loaded, result)) return;
  const taskgraph::StaticTaskGraph& graph = *loaded.graph;
  if (!has_closed_form(graph.model))
    usage_error("--model", "the recommender ranks Sweep3D blocking factors; model " + graph.model +
                               " has no closed form (models: Sweep3D)");
  const psl::Program& program = loaded.frontend->program();
  const std::vector<std::string> machines = network_components(program);
  std::string machine_list;
  for (const std::string& m : machines) machine_list += (machine_list.empty() ? "" : ", ") + m;
  if (machines.empty()) {
    std::cerr << "poems: error: " << spec << " has no hardware[network] component to take a machine from\n";
    result = kExitInputError;
    return;
  }
  if (!o.machine.empty() && std::find(machines.begin(), machines.end(), o.machine) == machines.end())
    usage_error("--machine", "unknown machine '" + o.machine + "'; expected one of " + machine_list);

  taskgraph::ParameterBinding binding;
  std::map<std::string, double> overrides;
  for (const auto& [name, value] : parse_bindings(o.sets))
    (name.find('.') == std::string::npos ? binding : overrides)[name] = value;

  recommender::Problem problem;
  recommender::CandidateSpace space;
  try {
    MachineModel m = resolve_machine(program, o.machine, o.processor, overrides);
    problem.machine.params = m.params;
    problem.machine.wg_ns =
        o.wg.empty() ? m.wg_ns : quantity("--wg", o.wg, psl::kTime, "a time per unit of work, e.g. 60ns");
    problem.machine_name = m.network;
    check_independent(graph, binding);
    const std::vector<double> values = taskgraph::evaluate_model_values(graph, binding);
    // Integral values as integers: the run keys are the same either way, the JSON output reads better.
    for (std::size_t i = 0; i < graph.params.size(); ++i)
      problem.parameters[graph.params[i]] = values[i] == std::trunc(values[i]) && std::fabs(values[i]) < 9e15
                                                ? nlohmann::json(static_cast<std::int64_t>(values[i]))
                                                : nlohmann::json(values[i]);
  } catch (const CLI::ValidationError&) {
    throw;
  } catch (const std::exception& e) {  // a bad machine, an unknown or dependent parameter
    std::cerr << "poems: error: " << e.what() << '\n';
    result = kExitInputError;
    return;
  }
  problem.model = graph.model;
  problem.spec_hash = specification_hash(loaded.frontend->sources());
  problem.tool_version = POEMS_VERSION;
  problem.graph = loaded.graph;
  const bool has_i = binding.count("npe_i") > 0, has_j = binding.count("npe_j") > 0;
  if (has_i != has_j) usage_error("--set", "give both npe_i and npe_j (a grid), or neither and --procs N");
  if (has_i && range) usage_error("--procs-range", "chooses the grids itself; drop --set npe_i and npe_j");
  space.procs = procs;
  space.all_grids = o.grid;
  if (has_i && !o.grid) {
    space.npe_i = static_cast<std::int64_t>(binding["npe_i"]);
    space.npe_j = static_cast<std::int64_t>(binding["npe_j"]);
    if (procs == 0) space.procs = space.npe_i * space.npe_j;
  } else if (procs == 0) {
    const recommender::Candidate d = problem.defaults();  // the specification's grid
    space.procs = d.npe_i * d.npe_j;
    if (!o.grid) {
      space.npe_i = d.npe_i;
      space.npe_j = d.npe_j;
    }
  }
  if (binding.count("mk")) space.mk = static_cast<std::int64_t>(binding["mk"]);
  if (binding.count("mmi")) space.mmi = static_cast<std::int64_t>(binding["mmi"]);

  std::unique_ptr<db::KnowledgeBase> kb;
  RecommendReport report;
  report.spec = spec;
  report.procs = space.procs;
  report.all_grids = o.grid;
  try {
    if (!o.store.disabled) {
      kb = std::make_unique<db::KnowledgeBase>(db::resolve_path(o.store.db_path));
      report.db_path = kb->path().string();
    }
    recommender::Recommender recommender(kb.get(), problem);
    report.problem = &recommender.problem();
    if (range) {
      recommender::ProcsRange r{range->first, range->second, o.knee_fraction, o.grid, space.mk, space.mmi};
      report.operating_point = recommender.operating_point(r);
      report.recommendations.push_back(report.operating_point->points[*report.operating_point->knee].best);
    } else {
      report.recommendations = recommender.recommend(space, o.top);
      if (o.confirm) report.confirm = recommender.confirm(report.recommendations);
    }
    if (o.explain) {
      const std::vector<recommender::RuleCase> cases =
          recommender::load_rule_cases(*kb, problem.model, problem.spec_hash, problem.tool_version);
      report.rules = recommender::mine_rules(cases, problem.model);
      kb->replace_rules(problem.model, report.rules.rules);
      const recommender::Recommendation& best = report.recommendations.front();
      const components::Sweep3DConfig c = problem.config(best.candidate);
      const recommender::RuleFeatures f =
          recommender::rule_features(c.it_g, c.jt_g, c.kt, c.npe_i, c.npe_j,
                                     static_cast<double>(problem.machine.params.L) / 1000.0, problem.machine.wg_ns);
      for (const db::Rule& rule : report.rules.rules) report.rule_applies.push_back(recommender::rule_applies(rule, f));
      report.explained = true;
    }
    report.stats = recommender.stats();
    report.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (o.format == "json")
      std::cout << report_json(report).dump(2) << '\n';
    else
      std::cout << report_text(report);
    result = kExitOk;
  } catch (const recommender::QueryError& e) {
    std::cerr << "poems: error: " << e.what() << '\n';
    result = kExitInputError;
  } catch (const db::Error& e) {
    std::cerr << "poems: error: " << e.what() << '\n';
    result = kExitInputError;
  } catch (const std::exception& e) {  // a simulation that failed (--confirm)
    std::cerr << "poems: error: " << e.what() << '\n';
    result = kExitEvaluation;
  }
}

}  // namespace

void register_recommend(CLI::App& app, int& result) {
  auto o = std::make_shared<RecommendOptions>();
  CLI::App* cmd = app.add_subcommand(
      "recommend", "Recommend Sweep3D blocking factors (mk, mmi) and processor grids from the knowledge base");
  cmd->add_option("--spec", o->spec, std::string("PSL specification (default: ") + kDefaultSpec + ")")
      ->check(CLI::ExistingFile);
  cmd->add_option("--model", o->model, "Model of the specification (default: the only one; Sweep3D)");
  cmd->add_option("--set", o->sets,
                  "Bind a problem parameter: it_g=255, kt=255, mm=6, iterations=12, ... (mk or mmi fixes that factor)");
  cmd->add_option("--procs", o->procs, "Processors (default: the specification's npe_i x npe_j)");
  cmd->add_flag("--grid", o->grid, "Also rank every processor grid npe_i x npe_j of --procs");
  cmd->add_option("--machine", o->machine, "hardware[network] component of the specification (default: the first)");
  cmd->add_option("--processor", o->processor, "hardware[processor] component with Wg (default: the first)");
  cmd->add_option("--wg", o->wg, "Compute time per unit of work (overrides the processor's Wg), e.g. 60ns");
  cmd->add_option("--top", o->top, "Recommendations to show")->capture_default_str();
  cmd->add_option("--format", o->format, "Output format")->check(CLI::IsMember({"table", "json"}));
  cmd->add_flag("--confirm", o->confirm, "Simulate the recommendations (simulation[MPI-Sim]) and report the agreement");
  cmd->add_flag("--explain", o->explain, "Mine rules from the knowledge base and show which apply");
  cmd->add_option("--procs-range", o->procs_range,
                  "A..B: the best time per processor count and the optimal operating point");
  cmd->add_option("--knee-fraction", o->knee_fraction,
                  "The operating point is where the time improves by less than this fraction")
      ->capture_default_str();
  add_store_options(cmd, o->store);
  cmd->callback([o, &result] { run(*o, result); });
}

}  // namespace poems::cli
