#include "poems/core/session.h"
#include "poems/core/trace_model.h"

#include <chrono>

#include "poems/base/units.h"
#include "poems/core/compute_rates.h"
#include "poems/core/processor_models.h"
#include "poems/core/programs.h"
#include "poems/taskgraph/limits.h"

namespace poems::core {

namespace {

std::vector<db::Ted> db_teds(const EvaluationPlan& plan, const std::map<std::uint32_t, double>& rates) {
  std::vector<db::Ted> out;
  for (const Ted& t : plan.teds) {
    db::Ted d;
    d.node = std::to_string(t.node) + " " + t.node_text;
    d.evaluator = t.evaluator;
    for (const auto& [k, v] : t.parameters) d.parameters[k] = v.str();
    auto r = rates.find(t.node);
    if (r != rates.end()) d.parameters["ns_per_work"] = r->second;
    if (!t.chain.empty()) d.parameters["chain"] = t.chain;
    out.push_back(std::move(d));
  }
  return out;
}

std::string composition_key(const std::string& paradigm, const std::map<std::string, base::Value>& overrides,
                            const std::map<std::string, base::Value>& study) {
  std::string key = paradigm;
  for (const auto& [k, v] : overrides) key += "|" + k + "=" + v.str();
  for (const auto& [k, v] : study) key += "|study." + k + "=" + v.str();
  return key;
}

}  // namespace

struct Session::State {
  std::map<std::string, Composition> compositions;
  ProcessorModels processors;
  std::optional<double> wg_ns;
};

Session::Session(System& system, SessionOptions options, Store& store)
    : system_(system), options_(std::move(options)), store_(store), state_(std::make_unique<State>()) {
  if (options_.wg) {
    const double wg = quantity("--wg", *options_.wg, base::kTime, "a time per unit of work in 0..1e9 ns, e.g. 60ns");
    if (!(wg >= 0 && wg <= 1e9))
      throw UsageError("--wg", "'" + *options_.wg + "' is out of range; expected a time per unit of work in 0..1e9 ns");
    state_->wg_ns = wg;
  }
}

Session::~Session() = default;

std::map<std::string, std::string> Session::text_parameters(const CellRequest& request) const {
  // Later values replace earlier ones, as for the numbers: the model's
  // defaults, the study's `set`, --set, the binding's own.
  std::map<std::string, std::string> text;
  auto take = [&](const std::string& name, const base::Value& v) {
    if (v.kind == base::Value::Kind::Number)
      text.erase(name);
    else
      text[name] = v.str();
  };
  for (const psl::Binding& p : system_.model().params) {
    if (!p.value) continue;
    try {
      take(p.name.name, constant_value(*p.value));
    } catch (const Error&) {  // a default computed from other parameters: a number
    }
  }
  const std::vector<std::string>& params = system_.graph()->params;
  auto is_parameter = [&](const std::string& n) { return std::find(params.begin(), params.end(), n) != params.end(); };
  if (const psl::StudyDecl* study = system_.study())
    for (const psl::Binding& b : study->settings)
      if (b.value && is_parameter(b.name.name)) take(b.name.name, constant_value(*b.value));
  for (const auto& [k, v] : system_.settings().parameters) take(k, v);
  for (const auto& [k, v] : request.text_parameters) text[k] = v;
  for (const auto& [k, v] : request.parameters) text.erase(k);
  return text;
}

taskgraph::ParameterBinding Session::binding(const taskgraph::ParameterBinding& parameters) const {
  taskgraph::ParameterBinding b = system_.binding();
  for (const auto& [k, v] : parameters) b[k] = v;
  return b;
}

const Composition& Session::composition(const std::string& paradigm,
                                        const std::map<std::string, base::Value>& overrides,
                                        const std::map<std::string, base::Value>& study) {
  const std::string key = composition_key(paradigm, overrides, study);
  auto it = state_->compositions.find(key);
  if (it != state_->compositions.end()) return it->second;
  Choices choices = options_.choices;
  for (const auto& [k, v] : study) choices.study[k] = v;
  return state_->compositions.emplace(key, compose(system_, paradigm, choices, overrides)).first->second;
}

std::string Session::obstacle(const CellRequest& request) {
  const EvaluatorEntry& entry = evaluator_named(request.paradigm, "--paradigm");
  if (!entry.obstacle) return "";
  Evaluation e;
  e.graph = system_.graph();
  e.program = system_.attached_program();
  e.binding = binding(request.parameters);
  e.measure = options_.measure;
  try {
    e.values = taskgraph::evaluate_model_values(*e.graph, e.binding);
    return entry.obstacle(e);
  } catch (const std::exception& x) {
    return x.what();
  }
}

Session::Prepared Session::prepare(const CellRequest& request) {
  Prepared p;
  const EvaluatorEntry& entry = evaluator_named(request.paradigm, "--paradigm");
  const Composition& comp = composition(entry.name, request.overrides, request.study);
  p.evaluator = &entry;
  p.composition = &comp;
  const taskgraph::StaticTaskGraph& graph = *system_.graph();
  Cell& cell = p.cell;
  cell.paradigm = entry.name;
  cell.store_path = store_.path();
  Evaluation& e = cell.evaluation;
  e.graph = system_.graph();
  e.program = system_.attached_program();
  e.binding = binding(request.parameters);
  e.measure = options_.measure;
  e.per_rank = request.per_rank;
  e.timeline = request.timeline;
  e.otf2_timeline = request.otf2_timeline;
  e.max_stuck_listed = request.max_stuck_listed;
  // The study's `set` values, then --set's, then the binding's own.
  if (const psl::StudyDecl* study = system_.study())
    for (const psl::Binding& b : study->settings)
      if (b.value && b.name.name.find('.') == std::string::npos &&
          std::find(graph.params.begin(), graph.params.end(), b.name.name) == graph.params.end())
        e.settings[b.name.name] = constant_value(*b.value);
  for (const auto& [k, v] : options_.choices.study) e.settings[k] = v;
  for (const auto& [k, v] : request.study) e.settings[k] = v;
  e.text_parameters = text_parameters(request);
  if (entry.modelled) {
    if (!comp.machine) throw InputError(comp.no_machine);
    e.machine = *comp.machine;
    // A trace model's `semantics` setting, before the command line's
    // --semantics (which replaces it, as it replaces a runtime's).
    if (trace_graph(graph)) try {
        if (const std::optional<sim::Semantics> s = replay_semantics(e)) e.machine.semantics = *s;
      } catch (const Error& x) {
        cell.error = x.what();
        cell.error_kind = x.kind();
        return p;
      }
    apply_overrides(options_.machine, e.machine);
  }
  try {
    e.values = taskgraph::evaluate_model_values(graph, e.binding);
    if (entry.modelled) {
      bool first = true;
      if (state_->wg_ns) {
        for (const Ted& t : comp.plan.teds) {
          if (t.kind != "compute") continue;
          p.rates[t.node] = *state_->wg_ns;
          cell.compute.push_back({{"node", t.node}, {"evaluator", "processor[wg]"}, {"ns_per_work", *state_->wg_ns}});
          if (first) e.ns_per_work = *state_->wg_ns;
          first = false;
        }
      } else {
        ComputeRates r = compute_rates(system_.program(), comp.system, comp.plan, graph, e.values, state_->processors);
        for (const Ted& t : comp.plan.teds)
          if (t.kind == "compute" && !r.ns_per_work.count(t.node))
            throw InputError("no hardware[processor] component times node " + t.node_text + " (" +
                             graph.nodes.at(t.node).location +
                             "): give its component a request that reaches one, or give --wg");
        p.rates = r.ns_per_work;
        cell.compute = r.report;
        e.ns_per_work = r.main_ns_per_work;
        for (const Ted& t : comp.plan.teds)
          if (t.kind == "compute" && !t.chain.empty()) cell.processors.push_back(t.chain.back());
      }
      e.instantiate.ns_per_work = e.ns_per_work;
      e.instantiate.ns_per_work_by_node = p.rates;
    }
  } catch (const taskgraph::InstantiationError& x) {
    cell.error = x.what();
    cell.error_kind = ErrorKind::Input;
    return p;
  } catch (const UsageError&) {
    throw;
  } catch (const Error& x) {
    cell.error = x.what();
    cell.error_kind = x.kind();
    return p;
  }
  e.method = entry.method(e, options_.method);
  p.key.model = graph.model;
  p.key.evaluator = entry.name;
  p.key.spec_hash = system_.spec_hash();
  p.key.tool_version = POEMS_VERSION;
  if (entry.key) {
    try {
      p.key.binding = entry.key(e);
    } catch (const std::exception& x) {
      cell.error = x.what();
    }
    return p;
  }
  const nlohmann::json parameters = e.parameters_key();
  nlohmann::json overrides = nlohmann::json::object();
  for (const auto& [k, v] : options_.choices.overrides) overrides[k] = v.str();
  for (const auto& [k, v] : request.overrides) overrides[k] = v.str();
  p.key.binding = {{"parameters", parameters},
                   {"overrides", overrides},
                   {"machine", machine_key(e.machine)},
                   {"compute", cell.compute},
                   {"method", e.method}};
  if (entry.extend_key) entry.extend_key(e, p.key.binding);
  if (trace_graph(graph)) try {  // a replay's window, algorithms, computation: other runs
      if (nlohmann::json replay = replay_settings_key(e); !replay.empty()) p.key.binding["replay"] = std::move(replay);
    } catch (const Error& x) {
      cell.error = x.what();
      cell.error_kind = x.kind();
    }
  return p;
}

Cell Session::evaluate(const CellRequest& request, const std::string& study) {
  Pending pending = begin(request, study);
  if (pending.done) return std::move(pending.prepared.cell);
  Computed computed = compute(pending.prepared);
  return finish(std::move(pending), std::move(computed));
}

Session::Pending Session::begin(const CellRequest& request, const std::string& study) {
  Pending pending;
  pending.study = study;
  pending.prepared = prepare(request);
  Prepared& p = pending.prepared;
  Cell& cell = p.cell;
  pending.done = true;
  if (!cell.ok()) return pending;
  const EvaluatorEntry& entry = *p.evaluator;
  const Evaluation& e = cell.evaluation;
  if (entry.obstacle) {
    std::string why;
    try {
      why = entry.obstacle(e);
    } catch (const std::exception& x) {
      why = x.what();
    }
    if (!why.empty()) {
      cell.skipped = true;
      cell.error = "not measured: " + why;
      cell.error_kind = ErrorKind::Input;
      return pending;
    }
  }
  pending.record = std::make_unique<RunRecord>(store_, p.key);
  RunRecord& record = *pending.record;
  cell.run_id = record.id();
  if (request.reuse)
    if (const db::Result* r = record.stored()) {
      cell.reused = true;
      cell.record = RunRecord::State::AlreadyStored;
      cell.outcome = outcome_of(*r);
      if (!study.empty()) record.link(study, system_.spec_hash(), db_teds(p.composition->plan, p.rates));
      return pending;
    }
  pending.done = false;
  return pending;
}

Session::Computed Session::compute(const Prepared& p) {
  Computed out;
  const EvaluatorEntry& entry = *p.evaluator;
  const auto start = std::chrono::steady_clock::now();
  try {
    out.outcome = entry.evaluate(p.cell.evaluation);
  } catch (const SimulationFailed& x) {
    out.outcome.simulation = x.result();
    out.error = x.what();
  } catch (const UsageError& x) {
    out.usage = true;
    out.usage_option = x.option();
    out.error = x.what();
    out.error_kind = ErrorKind::Usage;
  } catch (const Error& x) {
    out.error = x.what();
    out.error_kind = x.kind();
  } catch (const taskgraph::InstantiationError& x) {  // a size, work or loop bound of this binding: the input's
    out.error = x.what();
    out.error_kind = ErrorKind::Input;
  } catch (const sim::SimulationLimitError& x) {  // beyond the clock or the memory limit: the input's
    out.error = x.what();
    out.error_kind = ErrorKind::Input;
  } catch (const std::exception& x) {  // a library's own failure, reported as the evaluation's
    out.error = x.what();
  }
  out.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

Cell Session::finish(Pending pending, Computed computed) {
  Prepared& p = pending.prepared;
  Cell& cell = p.cell;
  RunRecord& record = *pending.record;
  const EvaluatorEntry& entry = *p.evaluator;
  cell.outcome = std::move(computed.outcome);
  cell.error = std::move(computed.error);
  cell.error_kind = computed.error_kind;
  if (computed.usage) {
    record.fail("a bad request");
    const std::string prefix = computed.usage_option + ": ";
    throw UsageError(computed.usage_option, !computed.usage_option.empty() && cell.error.starts_with(prefix)
                                                ? cell.error.substr(prefix.size())
                                                : cell.error);
  }
  if (!cell.ok()) record.fail(cell.error);
  // A task graph that cannot complete: if its messages do not match, that
  // is the specification's error, reported where it is written.
  if (!cell.ok() && entry.modelled && cell.error_kind == ErrorKind::Evaluation) system_.check_messages();
  cell.wall_seconds = computed.wall_seconds;
  if (!cell.ok()) return std::move(cell);
  try {
    cell.record = record.finish(record_of(cell.outcome, !entry.modelled));
  } catch (const StoreError& x) {
    cell.store_error = x.what();
  }
  if (!pending.study.empty()) record.link(pending.study, system_.spec_hash(), db_teds(p.composition->plan, p.rates));
  return std::move(cell);
}

std::vector<std::uint8_t> computed_bytes(const Session::Computed& c) {
  const Outcome& o = c.outcome;
  const nlohmann::json j = {
      {"breakdown", {o.breakdown.time_ns, o.breakdown.compute_ns, o.breakdown.comm_ns, o.breakdown.sync_ns}},
      {"events", o.events},
      {"messages", o.messages},
      {"processes", o.processes},
      {"method", o.method},
      {"extra", o.extra},
      {"error", c.error},
      {"error_kind", static_cast<int>(c.error_kind)},
      {"wall_seconds", c.wall_seconds},
      {"usage", c.usage},
      {"usage_option", c.usage_option}};
  return nlohmann::json::to_msgpack(j);
}

Session::Computed computed_of_bytes(const std::vector<std::uint8_t>& bytes) {
  try {
    const nlohmann::json j = nlohmann::json::from_msgpack(bytes);
    Session::Computed c;
    Outcome& o = c.outcome;
    const nlohmann::json& b = j.at("breakdown");
    o.breakdown = {b.at(0).get<double>(), b.at(1).get<double>(), b.at(2).get<double>(), b.at(3).get<double>()};
    o.events = j.at("events").get<std::uint64_t>();
    o.messages = j.at("messages").get<std::uint64_t>();
    o.processes = j.at("processes").get<std::uint32_t>();
    o.method = j.at("method").get<std::string>();
    o.extra = j.at("extra");
    c.error = j.at("error").get<std::string>();
    const int kind = j.at("error_kind").get<int>();
    if (kind < 1 || kind > 3) throw std::runtime_error("error kind " + std::to_string(kind));
    c.error_kind = static_cast<ErrorKind>(kind);
    c.wall_seconds = j.at("wall_seconds").get<double>();
    c.usage = j.at("usage").get<bool>();
    c.usage_option = j.at("usage_option").get<std::string>();
    return c;
  } catch (const std::exception& x) {
    throw std::runtime_error(std::string("a garbled evaluation result: ") + x.what());
  }
}

taskgraph::InstantiateOptions calc_rates(System& system, const SessionOptions& options, const std::string& wg) {
  taskgraph::InstantiateOptions inst;
  inst.ns_per_work = 1;
  if (!wg.empty()) {
    inst.ns_per_work = quantity("--wg", wg, base::kTime, "a time per unit of work, e.g. 60ns");
    if (!(inst.ns_per_work >= 0 && inst.ns_per_work <= 1e9))
      throw UsageError("--wg", "'" + wg + "' is out of range; expected a time per unit of work in 0..1e9 ns");
    return inst;
  }
  bool has_processor = false;
  for (const psl::Module& m : system.program().modules)
    for (const psl::ComponentDecl& c : m.components)
      has_processor = has_processor || (c.domain.head == "hardware" && c.domain.path == "processor");
  if (!has_processor) return inst;
  StoreOptions none;
  none.disabled = true;
  Store store(none);
  Session session(system, options, store);
  CellRequest request;
  request.paradigm = "simulation[MPI-Sim]";
  Session::Prepared p = session.prepare(request);
  if (!p.cell.ok()) throw Error(p.cell.error_kind, p.cell.error);
  return p.cell.evaluation.instantiate;
}

}  // namespace poems::core
