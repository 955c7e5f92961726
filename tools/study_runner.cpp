#include "study_runner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "cli_common.h"
#include "compute_rates.h"
#include "measured_programs.h"
#include "model_source.h"
#include "system_compile.h"

namespace poems::cli {

namespace {

// A study beyond this is a typo (a range without a step), not a plan.
constexpr std::size_t kMaxBindings = 1'000'000;

// The values of one vary clause: one tuple of values per entry.
std::vector<std::vector<psl::Value>> clause_values(const psl::VaryClause& v) {
  std::vector<std::vector<psl::Value>> out;
  if (v.is_range) {
    psl::Value first = constant_value(*v.first), last = constant_value(*v.last);
    double step = v.step ? constant_value(*v.step).number : 1;
    if (!(step > 0)) throw std::runtime_error("range step must be positive");
    if ((last.number - first.number) / step > kMaxBindings)
      throw std::runtime_error("vary " + v.targets.front().name + " in " + first.str() + " .. " + last.str() +
                               " has more than " + std::to_string(kMaxBindings) + " values");
    for (double x = first.number; x <= last.number + 1e-9 * std::fabs(last.number); x += step)
      out.push_back({psl::Value::of_number(x, first.dimension)});
    return out;
  }
  for (const psl::ExprPtr& item : v.values->operands) {
    psl::Value x = constant_value(*item);
    out.push_back(x.kind == psl::Value::Kind::Tuple ? x.items : std::vector<psl::Value>{x});
  }
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

class PlanRunner {
 public:
  PlanRunner(const RunnerOptions& o, LoadedModel& loaded, const StudyPlan& plan)
      : o_(o), loaded_(loaded), plan_(plan), spec_hash_(specification_hash(loaded.frontend->sources())) {}

  bool run(StudyTable& table, int& result) {
    for (const std::string& p : plan_.paradigms) {
      if (!find_model_evaluator(p)) {
        std::string known;
        for (const std::string& n : model_evaluators()) known += (known.empty() ? "" : ", ") + n;
        std::cerr << "poems: error: " << (plan_.study.empty() ? "" : "study " + plan_.study + " ") << "compares " << p
                  << ", which no evaluator implements (evaluators: " << known << ")\n";
        result = kExitInputError;
        return false;
      }
    }
    table.paradigms = plan_.paradigms;
    table.study = plan_.study.empty() ? "(command line)" : plan_.study;
    table.model = loaded_.graph->model;
    table.targets = plan_.targets;
    for (const std::string& p : loaded_.graph->process_set_params) table.process_params.insert(p);

    const std::size_t total = plan_.bindings.size() * plan_.paradigms.size();
    std::size_t done = 0;
    for (const StudyBinding& b : plan_.bindings) {
      StudyRow row;
      row.binding = b;
      taskgraph::ParameterBinding params = plan_.fixed;
      std::map<std::string, psl::Value> overrides;
      for (const auto& [k, v] : b) {
        if (k.find('.') != std::string::npos)
          overrides[k] = v;
        else
          params[k] = v.number;
      }
      for (const std::string& paradigm : plan_.paradigms) {
        ++done;
        psl::CompileRequest request = plan_.request(paradigm);
        for (const auto& [k, v] : overrides) request.overrides[k] = v;
        const ComposedSystem* composed = composition(request, result);
        if (!composed) return false;
        StudyCell cell = evaluate(*composed, params, paradigm, b);
        std::fprintf(stderr, "[%zu/%zu] %s %s: %s\n", done, total, printable_text(binding_text(b)).c_str(),
                     paradigm.c_str(),
                     !cell.error.empty() ? printable_text(cell.error).c_str()
                     : cell.reused       ? "stored result"
                                         : "evaluated");
        if (!cell.error.empty() && !cell.skipped) table.failures++;
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
    // A measurement runs on this machine, not on a model of one.
    if (!c->plan.network && !is_measurement(c->plan.communication)) {
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
    if (c.plan.network) e.options.params = *c.plan.network;
    e.options.rendezvous_handshake = c.plan.rendezvous_handshake;
    e.method = o_.method;
    e.measure = o_.measure;
    const std::string evaluator = c.plan.communication.empty() ? paradigm : c.plan.communication;
    const bool measured = is_measurement(evaluator);
    ComputeRates rates;
    std::vector<double> values;
    try {
      values = taskgraph::evaluate_model_values(*loaded_.graph, params);
      if (measured) {
        // The real program computes for itself: no processor model is asked.
        const std::string obstacle = measurement_obstacle(*loaded_.graph, values, o_.measure);
        if (!obstacle.empty()) {
          cell.skipped = true;
          cell.error = "not measured: " + obstacle;
          return cell;
        }
      } else {
        rates = compute_rates(loaded_.frontend->program(), c.system, c.plan, *loaded_.graph, values, processors_);
      }
    } catch (const std::exception& ex) {
      cell.error = ex.what();
      return cell;
    }
    if (!measured && rates.main_ns_per_work < 0) {
      cell.error = "no processor component gives this model's compute nodes a Wg";
      return cell;
    }
    e.instantiate.ns_per_work = rates.main_ns_per_work;
    e.instantiate.ns_per_work_by_node = rates.ns_per_work;
    e.wg_ns = rates.main_ns_per_work;

    EvaluationKey key;
    key.model = loaded_.graph->model;
    key.evaluator = evaluator;
    key.spec_hash = spec_hash_;
    if (measured) {
      // A measurement depends on the program and this host, not on a machine model.
      key.binding = measurement_binding(*loaded_.graph, values, o_.measure);
    } else {
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
    }
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
      cell.extra = r->extra;
      if (!plan_.study.empty()) stored.link(plan_.study, spec_hash_, db_teds(c.plan, rates));
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
      r.kind = measured ? db::ResultKind::kMeasured : db::ResultKind::kPredicted;
      r.time_ns = out.time_ns;
      r.compute_ns = out.compute_ns;
      r.comm_ns = out.comm_ns;
      r.sync_ns = out.sync_ns;
      if (out.events) r.events = out.events;
      r.extra = out.extra;
      r.extra["processes"] = out.processes;
      r.extra["method"] = out.method;
      r.extra["messages"] = out.messages;
      if (!plan_.study.empty()) r.extra["study"] = plan_.study;
      cell.extra = r.extra;
      stored.finish(r);
      if (!plan_.study.empty()) stored.link(plan_.study, spec_hash_, db_teds(c.plan, rates));
    } catch (const std::exception& ex) {
      cell.error = ex.what();
      stored.fail(ex.what());
    }
    cell.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return cell;
  }

  const RunnerOptions& o_;
  LoadedModel& loaded_;
  const StudyPlan& plan_;
  std::string spec_hash_;
  std::map<std::string, ComposedSystem> compositions_;
  ProcessorModels processors_;
};

}  // namespace

psl::Value constant_value(const psl::Expr& e) {
  psl::EvalResult r = psl::evaluate(e, [](std::string_view) -> const psl::Value* { return nullptr; });
  if (!r.value) throw std::runtime_error("a study value is not a constant: " + r.error);
  return *r.value;
}

std::vector<StudyBinding> expand_study(const psl::StudyDecl& st) {
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

taskgraph::ParameterBinding study_parameters(const LoadedModel& loaded, const psl::StudyDecl& st) {
  taskgraph::ParameterBinding fixed;
  for (const psl::Binding& b : st.settings)
    for (const std::string& p : loaded.graph->params)
      if (p == b.name.name && b.value) fixed[p] = constant_value(*b.value).number;
  return fixed;
}

std::string binding_text(const StudyBinding& b) {
  std::string out;
  for (const auto& [k, v] : b) out += (out.empty() ? "" : " ") + k + "=" + v.str();
  return out;
}

StudyPlan plan_study(const LoadedModel& loaded, const psl::StudyDecl& st, const std::string& machine,
                     const std::string& processor, const std::vector<std::string>& only,
                     const std::vector<std::string>& paradigms) {
  StudyPlan plan;
  plan.study = st.name.name;
  if (!paradigms.empty()) {
    plan.paradigms = paradigms;
  } else {
    for (const psl::QualifiedRef& p : st.compare)
      if (only.empty() || std::find(only.begin(), only.end(), p.str()) != only.end()) plan.paradigms.push_back(p.str());
    if (plan.paradigms.empty()) usage_error("--only", "selects none of the study's compare entries");
  }
  plan.bindings = expand_study(st);
  plan.fixed = study_parameters(loaded, st);
  for (const psl::VaryClause& v : st.varies)
    for (const psl::Identifier& t : v.targets) plan.targets.push_back(t.name);
  const psl::Program* program = &loaded.frontend->program();
  const psl::StudyDecl* study = &st;
  plan.request = [program, study, machine, processor](const std::string& paradigm) {
    psl::CompileRequest r = psl::study_request(*program, *study, paradigm);
    if (!machine.empty()) {
      if (study->machine) std::erase(r.chosen, study->machine->name);
      r.chosen.push_back(machine);
    }
    if (!processor.empty()) r.chosen.push_back(processor);
    return r;
  };
  return plan;
}

bool run_plan(const RunnerOptions& options, LoadedModel& loaded, const StudyPlan& plan, StudyTable& table,
              int& result) {
  PlanRunner runner(options, loaded, plan);
  return runner.run(table, result);
}

}  // namespace poems::cli
