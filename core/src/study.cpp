#include "poems/core/study.h"

#include <algorithm>
#include <cmath>
#include <string_view>

#include "poems/psl/value.h"

namespace poems::core {

std::vector<std::vector<base::Value>> vary_values(const psl::VaryClause& v) {
  std::vector<std::vector<base::Value>> out;
  if (v.is_range) {
    const base::Value first = constant_value(*v.first), last = constant_value(*v.last);
    const double step = v.step ? constant_value(*v.step).number : 1;
    if (!(step > 0)) throw InputError("range step must be positive");
    if ((last.number - first.number) / step > kMaxBindings)
      throw InputError("vary " + v.targets.front().name + " in " + first.str() + " .. " + last.str() +
                       " has more than " + std::to_string(kMaxBindings) + " values");
    for (double x = first.number; x <= last.number + 1e-9 * std::fabs(last.number); x += step)
      out.push_back({base::Value::of_number(x, first.dimension)});
    return out;
  }
  for (const psl::ExprPtr& item : v.values->operands) {
    base::Value x = constant_value(*item);
    out.push_back(x.kind == base::Value::Kind::Tuple ? x.items : std::vector<base::Value>{x});
  }
  return out;
}

namespace {

// Whether a binding satisfies every `where` constraint of the study; names
// the binding does not vary are read from `fixed`.
bool satisfies(const psl::StudyDecl& st, const StudyBinding& b, const std::map<std::string, base::Value>& fixed,
               bool model_unknown) {
  bool missing = false;
  const psl::NameLookup lookup = [&](std::string_view name) -> const base::Value* {
    for (const auto& [k, v] : b)
      if (k == name) return &v;
    auto it = fixed.find(std::string(name));
    if (it != fixed.end()) return &it->second;
    missing = true;
    return nullptr;
  };
  for (const psl::ExprPtr& c : st.constraints) {
    const psl::EvalResult r = psl::evaluate(*c, lookup);
    // Without the model's values (a check of the study alone) a constraint on
    // a model parameter cannot be decided here; the run decides it.
    if (!r.value && missing && model_unknown) return true;
    if (!r.value) throw InputError("study " + st.name.name + ": 'where' at " + binding_text(b) + ": " + r.error);
    if (r.value->kind != base::Value::Kind::Bool)
      throw InputError("study " + st.name.name + ": 'where' must be a boolean, not " + r.value->str());
    if (!r.value->boolean) return false;
  }
  return true;
}

}  // namespace

std::vector<StudyBinding> expand_study(const psl::StudyDecl& st, const std::map<std::string, base::Value>& fixed) {
  std::vector<StudyBinding> rows{{}};
  for (const psl::VaryClause& v : st.varies) {
    std::vector<StudyBinding> next;
    const auto values = vary_values(v);
    if (static_cast<double>(rows.size()) * static_cast<double>(values.size()) > kMaxBindings)
      throw InputError("study " + st.name.name + " has more than " + std::to_string(kMaxBindings) +
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
  if (st.constraints.empty()) return rows;
  std::map<std::string, base::Value> known = fixed;
  for (const psl::Binding& b : st.settings) {
    if (!b.value) continue;
    const psl::EvalResult r = psl::evaluate(*b.value, [](std::string_view) -> const base::Value* { return nullptr; });
    if (r.value) known[b.name.name] = *r.value;
  }
  const std::size_t all = rows.size();
  std::vector<StudyBinding> kept;
  for (StudyBinding& b : rows)
    if (satisfies(st, b, known, fixed.empty())) kept.push_back(std::move(b));
  if (kept.empty())
    throw InputError("study " + st.name.name + ": its 'where' constraint keeps none of its " + std::to_string(all) +
                     " binding" + (all == 1 ? "" : "s"));
  return kept;
}

std::map<std::string, base::Value> fixed_values(const System& system) {
  std::map<std::string, base::Value> out;
  // Model parameter defaults in declaration order (a default may read an earlier parameter).
  for (const psl::Binding& p : system.model().params) {
    if (!p.value) continue;
    const psl::EvalResult r = psl::evaluate(*p.value, [&](std::string_view name) -> const base::Value* {
      auto it = out.find(std::string(name));
      return it == out.end() ? nullptr : &it->second;
    });
    if (r.value) out[p.name.name] = *r.value;
  }
  for (const auto& [k, v] : system.settings().parameters) out[k] = v;
  for (const auto& [k, v] : system.settings().overrides) out[k] = v;
  for (const auto& [k, v] : system.settings().study) out[k] = v;
  return out;
}

std::string binding_text(const StudyBinding& b) {
  std::string out;
  for (const auto& [k, v] : b) out += (out.empty() ? "" : " ") + k + "=" + v.str();
  return out;
}

StudyPlan plan_study(const System& system, const std::vector<std::string>& paradigms) {
  const psl::StudyDecl* st = system.study();
  if (!st) throw UsageError("--study", "no study given");
  StudyPlan plan;
  plan.study = st->name.name;
  if (!paradigms.empty()) {
    for (const std::string& p : paradigms) plan.paradigms.push_back(evaluator_named(p, "--paradigm").name);
  } else {
    for (const psl::QualifiedRef& p : st->compare) {
      try {
        plan.paradigms.push_back(evaluator_named(p.str(), "compare").name);
      } catch (const UsageError& e) {  // the file's mistake, not the command line's
        const psl::SourceLocation at = p.location;
        throw InputError((at.valid() ? system.sources().path(at.file) + ":" + std::to_string(at.line) + ":" +
                                           std::to_string(at.column) + ": "
                                     : std::string()) +
                         "study " + st->name.name + " compares " + p.str() + ": " + e.what());
      }
    }
  }
  if (plan.paradigms.empty()) throw InputError("study " + st->name.name + " compares no paradigm");
  try {
    plan.bindings = expand_study(*st, fixed_values(system));
  } catch (const InputError& e) {
    const psl::SourceLocation at = st->constraints.empty() ? st->name.location : st->constraints.front()->location;
    if (!at.valid()) throw;
    throw InputError(system.sources().path(at.file) + ":" + std::to_string(at.line) + ":" + std::to_string(at.column) +
                     ": " + e.what());
  }
  for (const psl::VaryClause& v : st->varies)
    for (const psl::Identifier& t : v.targets) plan.targets.push_back(t.name);
  return plan;
}

StudyCell study_cell(const Cell& c) {
  StudyCell cell;
  const Breakdown& b = c.outcome.breakdown;
  cell.time_ns = b.time_ns;
  cell.compute_ns = b.compute_ns;
  cell.comm_ns = b.comm_ns;
  cell.sync_ns = b.sync_ns;
  cell.events = c.outcome.events;
  cell.processes = c.outcome.processes;
  cell.reused = c.reused;
  cell.wall_seconds = c.wall_seconds;
  cell.error = c.error;
  cell.skipped = c.skipped;
  cell.store_error = c.store_error;
  cell.method = c.outcome.method;
  cell.extra = c.outcome.extra;
  return cell;
}

CellRequest cell_request(const System& system, const StudyBinding& b) {
  const taskgraph::StaticTaskGraph& graph = *system.graph();
  CellRequest request;
  for (const auto& [k, v] : b) {
    const bool parameter = std::find(graph.params.begin(), graph.params.end(), k) != graph.params.end();
    if (k.find('.') != std::string::npos)
      request.overrides[k] = v;
    else if (parameter && v.kind == base::Value::Kind::Number)
      request.parameters[k] = v.number;
    else if (parameter)
      request.text_parameters[k] = v.str();
    else
      request.study[k] = v;
  }
  return request;
}

StudyTable study_table(Session& session, const StudyPlan& plan) {
  const taskgraph::StaticTaskGraph& graph = *session.system().graph();
  StudyTable table;
  table.paradigms = plan.paradigms;
  table.study = plan.study.empty() ? "(command line)" : plan.study;
  // The PSL name (a model from a trace is stored as trace:<hash>, shown as written).
  table.model = session.system().model().name.name;
  table.targets = plan.targets;
  for (const std::string& p : graph.process_set_params) table.process_params.insert(p);
  table.nonblocking = has_nonblocking(graph);
  return table;
}

void add_cell(StudyTable& table, StudyRow& row, const std::string& paradigm, const Cell& c) {
  StudyCell cell = study_cell(c);
  if (!cell.ok() && !cell.skipped) table.failures++;
  if (!cell.store_error.empty()) table.store_failures++;
  if (cell.processes) row.processes = cell.processes;
  row.cells[paradigm] = std::move(cell);
}

std::string study_group(const StudyTable& t, const StudyRow& r) {
  std::string key;
  for (const auto& [k, v] : r.binding)
    if (!t.process_params.count(k)) key += k + "=" + v.str() + ";";
  return key;
}

void finish_study_table(StudyTable& t) {
  for (const std::string& p : t.paradigms) {
    std::map<std::string, const StudyRow*> base;
    for (const StudyRow& r : t.rows) {
      auto c = r.cells.find(p);
      if (c == r.cells.end() || !c->second.ok() || r.processes == 0) continue;
      const StudyRow*& b = base[study_group(t, r)];
      if (!b || r.processes < b->processes) b = &r;
    }
    for (StudyRow& r : t.rows) {
      auto c = r.cells.find(p);
      auto b = base.find(study_group(t, r));
      if (c == r.cells.end() || !c->second.ok() || b == base.end() || c->second.time_ns <= 0) continue;
      const StudyCell& bc = b->second->cells.at(p);
      c->second.speedup = bc.time_ns / c->second.time_ns;
      c->second.efficiency = *c->second.speedup * b->second->processes / std::max<std::uint32_t>(r.processes, 1);
    }
  }
  if (t.paradigms.size() >= 2)
    for (StudyRow& r : t.rows) {
      const StudyCell& a = r.cells[t.paradigms[0]];
      r.differences_pct.clear();
      r.disagreements.clear();
      for (std::size_t k = 1; k < t.paradigms.size(); ++k) {
        const StudyCell& b = r.cells[t.paradigms[k]];
        if (!a.ok() || !b.ok()) continue;
        const std::optional<double> d = difference_pct(b.time_ns, a.time_ns);
        if (!d) continue;
        r.differences_pct[t.paradigms[k]] = *d;
        if (disagrees(*d, t.disagree_pct))
          r.disagreements[t.paradigms[k]] =
              disagreement_cause({t.paradigms[0], a.method}, {t.paradigms[k], b.method}, t.nonblocking);
      }
      auto second = r.differences_pct.find(t.paradigms[1]);
      if (second != r.differences_pct.end()) r.difference_pct = second->second;
    }
}

std::size_t StudyTable::disagreeing_rows() const {
  return static_cast<std::size_t>(
      std::count_if(rows.begin(), rows.end(), [](const StudyRow& r) { return r.disagrees(); }));
}

StudyTable run_study(Session& session, const StudyPlan& plan,
                     const std::function<void(const StudyProgress&)>& progress) {
  const System& system = session.system();
  StudyTable table = study_table(session, plan);
  const std::size_t total = plan.bindings.size() * plan.paradigms.size();
  std::size_t done = 0;
  for (const StudyBinding& b : plan.bindings) {
    StudyRow row;
    row.binding = b;
    CellRequest request = cell_request(system, b);
    for (const std::string& paradigm : plan.paradigms) {
      request.paradigm = paradigm;
      const Cell c = session.evaluate(request, plan.study);
      ++done;
      if (progress) progress({done, total, &b, &c});
      add_cell(table, row, paradigm, c);
    }
    table.rows.push_back(std::move(row));
  }
  return table;
}

MeasurementPlan measurement_plan(Session& session, const std::vector<std::string>& paradigms) {
  const char* measurement = "measurement[mpirun]";
  System& system = session.system();
  std::vector<std::string> names{measurement};
  if (!paradigms.empty()) {
    for (const std::string& p : paradigms)
      if (p != "none" && evaluator_named(p, "--paradigm").name != measurement)
        names.push_back(evaluator_named(p, "--paradigm").name);
  } else if (system.study()) {
    for (const psl::QualifiedRef& p : system.study()->compare)
      if (evaluator_named(p.str(), "compare").name != measurement) names.push_back(p.str());
  }
  MeasurementPlan out;
  StudyPlan& plan = out.plan;
  if (!system.study()) {
    plan.paradigms = names;
    StudyBinding binding;
    for (const auto& [name, value] : system.settings().parameters) {
      binding.emplace_back(name, value);
      plan.targets.push_back(name);
    }
    plan.bindings = {binding};
    return out;
  }
  plan = plan_study(system, names);
  // Bindings that do not fit this machine are not measured, nor predicted.
  std::vector<StudyBinding> kept;
  for (const StudyBinding& b : plan.bindings) {
    CellRequest request = cell_request(system, b);
    request.paradigm = measurement;
    const std::string why = session.obstacle(request);
    if (why.empty()) {
      kept.push_back(b);
    } else {
      ++out.dropped;
      if (out.example.empty()) out.example = binding_text(b) + ": " + why;
    }
  }
  plan.bindings = std::move(kept);
  return out;
}

}  // namespace poems::core
