// `poems run SPEC --study NAME`: every binding of the study's `vary` clauses,
// evaluated by every paradigm of its `compare`, each composed and planned by
// the compiler; results stored (and reused) in the knowledge base, printed as
// a table, CSV or JSON, and drawn with gnuplot.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <set>
#include <sstream>

#include "cli_common.h"
#include "compute_rates.h"
#include "model_evaluators.h"
#include "model_source.h"
#include "result_store.h"
#include "study_output.h"
#include "system_compile.h"

namespace poems::cli {

namespace {

struct RunOptions {
  std::string spec, study, format = "table", plot, method;
  std::vector<std::string> only;
  StoreOptions store;
};

// A study beyond this is a typo (a range without a step), not a plan.
constexpr std::size_t kMaxBindings = 1'000'000;

psl::Value constant(const psl::Expr& e) {
  psl::EvalResult r = psl::evaluate(e, [](std::string_view) -> const psl::Value* { return nullptr; });
  if (!r.value) throw std::runtime_error("a study value is not a constant: " + r.error);
  return *r.value;
}

// The values of one vary clause: one tuple of values per entry.
std::vector<std::vector<psl::Value>> clause_values(const psl::VaryClause& v) {
  std::vector<std::vector<psl::Value>> out;
  if (v.is_range) {
    psl::Value first = constant(*v.first), last = constant(*v.last);
    double step = v.step ? constant(*v.step).number : 1;
    if (!(step > 0)) throw std::runtime_error("range step must be positive");
    if ((last.number - first.number) / step > kMaxBindings)
      throw std::runtime_error("vary " + v.targets.front().name + " in " + first.str() + " .. " + last.str() +
                               " has more than " + std::to_string(kMaxBindings) + " values");
    for (double x = first.number; x <= last.number + 1e-9 * std::fabs(last.number); x += step)
      out.push_back({psl::Value::of_number(x, first.dimension)});
    return out;
  }
  for (const psl::ExprPtr& item : v.values->operands) {
    psl::Value x = constant(*item);
    out.push_back(x.kind == psl::Value::Kind::Tuple ? x.items : std::vector<psl::Value>{x});
  }
  return out;
}

// The cartesian product of the clauses, the first clause outermost.
std::vector<StudyBinding> expand(const psl::StudyDecl& st) {
  std::vector<StudyBinding> rows{{}};
  for (const psl::VaryClause& v : st.varies) {
    std::vector<StudyBinding> next;
    const auto values = clause_values(v);
    if (static_cast<double>(rows.size()) * static_cast<double>(values.size()) > kMaxBindings)
      throw std::runtime_error("study " + st.name.name + " has more than " + std::to_string(kMaxBindings) +
                               " bindings; split it");
    for (const StudyBinding& row : rows)
      for (const auto& tuple : values) {
        StudyBinding b = row;
        for (std::size_t k = 0; k < v.targets.size() && k < tuple.size(); ++k)
          b.emplace_back(v.targets[k].name, tuple[k]);
        next.push_back(std::move(b));
      }
    rows = std::move(next);
  }
  return rows;
}

std::string binding_text(const StudyBinding& b) {
  std::string out;
  for (const auto& [k, v] : b) out += (out.empty() ? "" : " ") + k + "=" + v.str();
  return out;
}

std::vector<db::Ted> db_teds(const components::EvaluationPlan& plan, const ComputeRates& rates) {
  std::vector<db::Ted> out;
  for (const components::Ted& t : plan.teds) {
    db::Ted d;
    d.node = std::to_string(t.node) + " " + t.node_text;
    d.evaluator = t.evaluator;
    for (const auto& [k, v] : t.parameters) d.parameters[k] = v.str();
    auto r = rates.ns_per_work.find(t.node);
    if (r != rates.ns_per_work.end()) d.parameters["ns_per_work"] = r->second;
    if (!t.chain.empty()) d.parameters["chain"] = t.chain;
    out.push_back(std::move(d));
  }
  return out;
}

class StudyRunner {
 public:
  StudyRunner(const RunOptions& o, LoadedModel& loaded, const psl::StudyDecl& st)
      : o_(o), loaded_(loaded), st_(st), spec_hash_(specification_hash(loaded.frontend->sources())) {}

  // Returns false (exit code in `result`) when composition fails.
  bool run(StudyTable& table, int& result) {
    const psl::Program& program = loaded_.frontend->program();
    for (const psl::QualifiedRef& p : st_.compare) {
      if (!o_.only.empty() && std::find(o_.only.begin(), o_.only.end(), p.str()) == o_.only.end()) continue;
      if (!find_model_evaluator(p.str())) {
        std::string known;
        for (const std::string& n : model_evaluators()) known += (known.empty() ? "" : ", ") + n;
        std::cerr << "poems: error: study " << st_.name.name << " compares " << p.str()
                  << ", which no evaluator implements (evaluators: " << known << ")\n";
        result = kExitInputError;
        return false;
      }
      table.paradigms.push_back(p.str());
    }
    if (table.paradigms.empty()) usage_error("--only", "selects none of the study's compare entries");
    // Model parameters the study sets once.
    taskgraph::ParameterBinding fixed;
    for (const psl::Binding& b : st_.settings)
      for (const std::string& p : loaded_.graph->params)
        if (p == b.name.name && b.value) fixed[p] = constant(*b.value).number;
    table.study = st_.name.name;
    table.model = loaded_.graph->model;
    for (const psl::VaryClause& v : st_.varies)
      for (const psl::Identifier& t : v.targets) table.targets.push_back(t.name);
    for (const std::string& p : loaded_.graph->process_set_params) table.process_params.insert(p);

    const std::vector<StudyBinding> bindings = expand(st_);
    const std::size_t total = bindings.size() * table.paradigms.size();
    std::size_t done = 0;
    for (const StudyBinding& b : bindings) {
      StudyRow row;
      row.binding = b;
      taskgraph::ParameterBinding params = fixed;
      std::map<std::string, psl::Value> overrides;
      for (const auto& [k, v] : b) {
        if (k.find('.') != std::string::npos)
          overrides[k] = v;
        else
          params[k] = v.number;
      }
      for (const std::string& paradigm : table.paradigms) {
        ++done;
        psl::CompileRequest request = psl::study_request(program, st_, paradigm);
        for (const auto& [k, v] : overrides) request.overrides[k] = v;
        const ComposedSystem* composed = composition(request, result);
        if (!composed) return false;
        StudyCell cell = evaluate(*composed, params, paradigm, b);
        std::fprintf(stderr, "[%zu/%zu] %s %s: %s\n", done, total, binding_text(b).c_str(), paradigm.c_str(),
                     cell.error.empty() ? (cell.reused ? "stored result" : "evaluated") : cell.error.c_str());
        if (!cell.error.empty()) table.failures++;
        if (cell.processes) row.processes = cell.processes;
        row.cells[paradigm] = std::move(cell);
      }
      table.rows.push_back(std::move(row));
    }
    return true;
  }

 private:
  const ComposedSystem* composition(const psl::CompileRequest& request, int& result) {
    std::string key = request.study.at("paradigm").text;
    for (const auto& [k, v] : request.overrides) key += "|" + k + "=" + v.str();
    auto it = compositions_.find(key);
    if (it != compositions_.end()) return &it->second;
    std::optional<ComposedSystem> c = compose(loaded_, request, result);
    if (!c) return nullptr;
    if (!c->plan.network) {
      std::cerr << "poems: error: the composition reaches no hardware[network] component, so there are no LogGOPS "
                   "parameters to evaluate with (give the study a machine: `model M on Machine;`)\n";
      result = kExitInputError;
      return nullptr;
    }
    return &compositions_.emplace(key, std::move(*c)).first->second;
  }

  StudyCell evaluate(const ComposedSystem& c, const taskgraph::ParameterBinding& params, const std::string& paradigm,
                     const StudyBinding& b) {
    StudyCell cell;
    ModelEvaluation e;
    e.graph = loaded_.graph;
    e.binding = params;
    e.options.params = *c.plan.network;
    e.options.rendezvous_handshake = c.plan.rendezvous_handshake;
    e.method = o_.method;
    ComputeRates rates;
    std::vector<double> values;
    try {
      values = taskgraph::evaluate_model_values(*loaded_.graph, params);
      rates = compute_rates(loaded_.frontend->program(), c.system, c.plan, *loaded_.graph, values, processors_);
    } catch (const std::exception& ex) {
      cell.error = ex.what();
      return cell;
    }
    if (rates.main_ns_per_work < 0) {
      cell.error = "no processor component gives this model's compute nodes a Wg";
      return cell;
    }
    e.instantiate.ns_per_work = rates.main_ns_per_work;
    e.instantiate.ns_per_work_by_node = rates.ns_per_work;
    e.wg_ns = rates.main_ns_per_work;

    const std::string evaluator = c.plan.communication.empty() ? paradigm : c.plan.communication;
    EvaluationKey key;
    key.model = loaded_.graph->model;
    key.evaluator = evaluator;
    key.spec_hash = spec_hash_;
    nlohmann::json parameters = nlohmann::json::object();
    for (std::size_t i = 0; i < loaded_.graph->params.size() && i < values.size(); ++i)
      parameters[loaded_.graph->params[i]] = values[i];
    nlohmann::json overrides = nlohmann::json::object();
    for (const auto& [k, v] : b)
      if (k.find('.') != std::string::npos) overrides[k] = v.str();
    key.binding = {{"parameters", parameters},
                   {"overrides", overrides},
                   {"machine", machine_json(e.options)},
                   {"compute", rates.report},
                   {"method", o_.method.empty() ? "default" : o_.method}};
    StoreOptions store = o_.store;
    store.quiet = true;
    StoredEvaluation stored(store, key);
    if (const db::Result* r = stored.stored()) {
      cell.reused = true;
      cell.time_ns = r->time_ns;
      cell.compute_ns = r->compute_ns.value_or(0);
      cell.comm_ns = r->comm_ns.value_or(0);
      cell.sync_ns = r->sync_ns.value_or(0);
      cell.events = r->events.value_or(0);
      cell.processes = r->extra.value("processes", 0u);
      stored.link(st_.name.name, spec_hash_, db_teds(c.plan, rates));
      return cell;
    }
    const auto start = std::chrono::steady_clock::now();
    try {
      EvaluationOutcome out = (*find_model_evaluator(evaluator))(e);
      cell.time_ns = out.time_ns;
      cell.compute_ns = out.compute_ns;
      cell.comm_ns = out.comm_ns;
      cell.sync_ns = out.sync_ns;
      cell.events = out.events;
      cell.processes = out.processes;
      db::Result r;
      r.time_ns = out.time_ns;
      r.compute_ns = out.compute_ns;
      r.comm_ns = out.comm_ns;
      r.sync_ns = out.sync_ns;
      if (out.events) r.events = out.events;
      r.extra = out.extra;
      r.extra["processes"] = out.processes;
      r.extra["method"] = out.method;
      r.extra["messages"] = out.messages;
      r.extra["study"] = st_.name.name;
      stored.finish(r);
      stored.link(st_.name.name, spec_hash_, db_teds(c.plan, rates));
    } catch (const std::exception& ex) {
      cell.error = ex.what();
      stored.fail(ex.what());
    }
    cell.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return cell;
  }

  const RunOptions& o_;
  LoadedModel& loaded_;
  const psl::StudyDecl& st_;
  std::string spec_hash_;
  std::map<std::string, ComposedSystem> compositions_;
  ProcessorModels processors_;
};

void run(const RunOptions& o, int& result) {
  LoadedModel loaded;
  int load_result = kExitOk;
  // The study names its model: load that one.
  {
    psl::Frontend probe;
    if (probe.load_files({o.spec})) {
      const psl::StudyDecl* st = probe.program().find_study(o.study);
      if (!st) {
        std::string names;
        for (const psl::Module& m : probe.program().modules)
          for (const psl::StudyDecl& s : m.studies) names += (names.empty() ? "" : ", ") + s.name.name;
        usage_error("--study", "no study named '" + o.study + "' in " + o.spec + " (studies: " + names + ")");
      }
      if (!load_model(o.spec, st->model ? st->model->name : "", loaded, load_result)) {
        result = load_result;
        return;
      }
    } else if (!load_model(o.spec, "", loaded, load_result)) {
      result = load_result;
      return;
    }
  }
  const psl::StudyDecl& st = *loaded.frontend->program().find_study(o.study);
  StudyTable table;
  StudyRunner runner(o, loaded, st);
  try {
    if (!runner.run(table, result)) return;
  } catch (const std::runtime_error& e) {
    std::cerr << "poems: error: " << e.what() << '\n';
    result = kExitInputError;
    return;
  }
  finish_table(table, st);
  if (o.format == "json")
    std::cout << table_json(table).dump(2) << '\n';
  else if (o.format == "csv")
    std::cout << table_csv(table);
  else
    std::cout << table_text(table, st);
  if (!o.plot.empty()) {
    std::string error = plot_table(table, o.plot);
    if (!error.empty()) {
      std::cerr << "poems: error: " << error << '\n';
      result = kExitEvaluation;
      return;
    }
    std::cerr << "plot written to " << o.plot << '\n';
  }
  result = table.failures ? kExitEvaluation : kExitOk;
}

}  // namespace

void register_run(CLI::App& app, int& result) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* cmd =
      app.add_subcommand("run", "Run a study: every binding of its vary clauses with every compared paradigm");
  cmd->add_option("spec", o->spec, "PSL specification")->required()->check(CLI::ExistingFile);
  cmd->add_option("--study", o->study, "The study to run")->required();
  cmd->add_option("--format", o->format, "Output format")->check(CLI::IsMember({"table", "csv", "json"}));
  cmd->add_option("--plot", o->plot, "Draw time and speedup against processes with gnuplot (OUT.png or OUT.svg)");
  cmd->add_option("--only", o->only, "Evaluate only these compare entries, e.g. analytic[LogGP]");
  cmd->add_option("--method", o->method, "analytic[LogGP] method: closed-form or critical-path")
      ->check(CLI::IsMember({"closed-form", "critical-path"}));
  add_store_options(cmd, o->store);
  cmd->callback([o, &result] {
    if (!o->plot.empty() && !(o->plot.ends_with(".png") || o->plot.ends_with(".svg")))
      usage_error("--plot", "'" + o->plot + "' must end in .png or .svg");
    run(*o, result);
  });
}

}  // namespace poems::cli
