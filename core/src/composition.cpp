#include "poems/core/composition.h"

#include <algorithm>

#include "poems/base/suggest.h"
#include "poems/core/error.h"
#include "poems/core/evaluators.h"

namespace poems::core {

namespace {

// The processors declared in the same file as `machine`: what `poems
// calibrate` writes beside a machine (local, local_cpu).
std::vector<std::string> companions(const psl::Program& program, const std::string& machine) {
  std::vector<std::string> out;
  for (const psl::Module& m : program.modules) {
    bool here = false;
    for (const psl::ComponentDecl& c : m.components) here = here || c.name.name == machine;
    if (!here) continue;
    for (const psl::ComponentDecl& c : m.components)
      if (c.domain.head == "hardware" && c.domain.path == "processor") out.push_back(c.name.name);
  }
  return out;
}

// The machine of the model's only study (`model M on Machine;`), if the
// specification has exactly one study of `model` and it names a machine.
std::optional<std::string> studies_machine(const psl::Program& program, const std::string& model) {
  const psl::StudyDecl* only = nullptr;
  for (const psl::Module& m : program.modules)
    for (const psl::StudyDecl& st : m.studies) {
      if (!st.model || st.model->name != model || st.name.name == "__command_line") continue;  // --set's
      if (only) return std::nullopt;
      only = &st;
    }
  if (!only || !only->machine) return std::nullopt;
  return only->machine->name;
}

// The fix for a model that has no machine: name one, listing the candidates.
std::string name_a_machine(const System& system, const std::vector<std::string>& machines) {
  const std::string model = system.model().name.name;
  std::string fix = "name a machine with --machine";
  if (!machines.empty()) fix += " (" + base::name_list(machines) + ")";
  return fix + " or with `model " + model + " on Machine;` in a study (--study)";
}

// A study's `on Machine` or --machine, when the communication nodes are bound
// to no component (no MPI runtime in the specification): the messages of the
// task graph still run on that machine.
std::optional<Machine> chosen_network(System& system, const psl::CompileRequest& request,
                                      const std::map<std::string, base::Value>& overrides) {
  std::vector<std::string> candidates = request.chosen;
  bool named = false;
  for (const std::string& name : request.chosen)
    if (const psl::ComponentDecl* c = system.program().find_component(name))
      named = named || (c->domain.head == "hardware" && c->domain.path == "network");
  if (!named) {  // none named: the only machine there is
    const std::vector<std::string> all = components_in(system.program(), "hardware[network]");
    if (all.size() == 1) candidates = all;
  }
  for (const std::string& name : candidates) {
    const psl::ComponentDecl* c = system.program().find_component(name);
    if (!c || c->domain.head != "hardware" || c->domain.path != "network") continue;
    psl::DiagnosticEngine& diags = system.diagnostics();
    const std::size_t before = diags.all().size();
    std::optional<psl::ComponentInstance> inst = psl::instantiate_component(system.program(), *c, overrides, diags);
    if (!inst) throw InputError("machine " + name + " cannot be evaluated", system.render_diagnostics(before));
    Machine m;
    m.params = loggops_of(inst->params, name, parameter_locator(system.program(), *c));
    m.network_model = network_of_component(system.program(), *c, inst->params, m.params);
    m.noise = noise_of_component(system.program(), *c, inst->params);
    m.network = name;
    return m;
  }
  return std::nullopt;
}

// The semantics the MPI runtime's profile sets; a bad value (or loggopsim
// with the rendezvous handshake) is located where it was written.
sim::Semantics runtime_semantics(System& system, const EvaluationPlan& plan, bool handshake) {
  const psl::Value& value = *plan.semantics;
  const std::string problem = runtime_semantics_problem(plan.runtime_component, value, handshake);
  if (problem.empty()) return *semantics_value(value);
  std::vector<const psl::StudyDecl*> studies;
  for (const psl::Module& m : system.program().modules)  // --set, then the run's study
    for (const psl::StudyDecl& st : m.studies)
      if (st.name.name == "__command_line") studies.push_back(&st);
  studies.push_back(system.study());
  const psl::SourceLocation at = semantics_location(system.program(), studies, plan.runtime_component, value);
  if (!at.valid()) throw InputError(problem);
  psl::DiagnosticEngine& diags = system.diagnostics();
  const std::size_t before = diags.all().size();
  diags.error(at, problem);
  throw InputError("runtime " + plan.runtime_component + " cannot be evaluated", system.render_diagnostics(before));
}

// A model from a trace has no components to compose: its replay runs on
// the study's machine (or --machine), with the binding's overrides.
Composition compose_trace_model(System& system, const std::string& paradigm, const psl::CompileRequest& request) {
  if (paradigm != "simulation[MPI-Sim]" && paradigm != "analytic[LogGP]")
    throw UsageError("--paradigm", "model " + system.model().name.name + " comes from a trace; " + paradigm +
                                       " does not evaluate traces (use simulation[MPI-Sim], the replay simulated, "
                                       "or analytic[LogGP], its critical path)");
  Composition c;
  c.paradigm = paradigm;
  c.machine = chosen_network(system, request, request.overrides);
  if (c.machine) return c;
  if (components_in(system.program(), "hardware[network]").empty()) {
    c.machine = Machine{};  // the command line's LogGOPS (-L ...)
    return c;
  }
  c.no_machine = name_a_machine(system, components_in(system.program(), "hardware[network]")) + ": model " +
                 system.model().name.name + " comes from a trace and no machine is named";
  return c;
}

}  // namespace

void check_choices(const System& system, const Choices& choices) {
  auto check = [&](const std::string& name, const char* option, const char* path, const char* what) {
    if (name.empty()) return;
    const psl::ComponentDecl& c = hardware_component(system.program(), name, option);
    if (c.domain.path != path)
      throw UsageError(option, "'" + name + "' is " + c.domain.str() + ", not " + what + " (hardware[" + path + "])");
  };
  check(choices.machine, "--machine", "network", "a machine");
  check(choices.processor, "--processor", "processor", "a processor");
}

psl::CompileRequest compile_request(const System& system, const std::string& paradigm, const Choices& choices,
                                    const std::map<std::string, base::Value>& overrides) {
  check_choices(system, choices);
  psl::CompileRequest r;
  if (const psl::StudyDecl* st = system.study()) {
    r = psl::study_request(system.program(), *st, paradigm);
    if (!choices.machine.empty() && st->machine) std::erase(r.chosen, st->machine->name);
  } else {
    r.model = system.model().name.name;
    // No study and no --machine: the machine of the model's only study (a
    // spec whose one study says `on Odin`).
    if (choices.machine.empty())
      if (std::optional<std::string> m = studies_machine(system.program(), r.model)) r.chosen.push_back(*m);
  }
  if (!choices.machine.empty()) r.chosen.push_back(choices.machine);
  if (!choices.processor.empty()) r.chosen.push_back(choices.processor);
  for (const std::string& chosen : r.chosen)
    for (const std::string& p : companions(system.program(), chosen)) r.preferred.push_back(p);
  for (const auto& [k, v] : choices.study) r.study[k] = v;
  r.study["paradigm"] = base::Value::of_string(paradigm, base::Value::Kind::Ref);
  if (!r.study.count("compute")) r.study["compute"] = base::Value::of_string("processor[wg]", base::Value::Kind::Ref);
  for (const auto& [k, v] : choices.overrides) r.overrides[k] = v;
  for (const auto& [k, v] : overrides) r.overrides[k] = v;
  return r;
}

Composition compose(System& system, const std::string& paradigm, const Choices& choices,
                    const std::map<std::string, base::Value>& overrides) {
  const psl::CompileRequest request = compile_request(system, paradigm, choices, overrides);
  if (system.model().trace) return compose_trace_model(system, paradigm, request);
  psl::DiagnosticEngine& diags = system.diagnostics();
  const std::size_t before = diags.all().size();
  std::optional<psl::SystemModel> composed = psl::compile_system(system.program(), request, diags);
  if (!composed)
    throw InputError("model " + system.model().name.name + " cannot be composed for " + paradigm,
                     system.render_diagnostics(before));
  Composition c;
  c.paradigm = paradigm;
  try {
    c.plan = plan_evaluation(*composed, *system.graph());
  } catch (const PlanError& e) {
    if (!e.location().valid()) throw;
    diags.error(e.location(), e.what());
    throw InputError("model " + system.model().name.name + " cannot be evaluated for " + paradigm,
                     system.render_diagnostics(before));
  }
  c.system = std::move(*composed);
  if (c.plan.network) {
    Machine m;
    m.params = *c.plan.network;
    m.rendezvous_handshake = c.plan.rendezvous_handshake;
    m.network = c.plan.network_component;
    const std::size_t at = c.system.find(c.plan.network_component);
    if (at != psl::kNoInstance && c.system.instances[at].decl) {
      m.network_model =
          network_of_component(system.program(), *c.system.instances[at].decl, c.system.instances[at].params, m.params);
      m.noise = noise_of_component(system.program(), *c.system.instances[at].decl, c.system.instances[at].params);
    }
    if (c.plan.semantics) m.semantics = runtime_semantics(system, c.plan, m.rendezvous_handshake);
    c.machine = m;
    return c;
  }
  std::vector<const Ted*> comm, bound;
  for (const Ted& t : c.plan.teds)
    if (t.kind != "compute") {
      comm.push_back(&t);
      if (!t.implicit) bound.push_back(&t);
    }
  if (comm.empty()) {  // nothing communicates: the cost rules are never used
    c.machine = Machine{};
    return c;
  }
  if (bound.empty()) {
    c.machine = chosen_network(system, request, request.overrides);
    if (c.machine) return c;
    // A specification without any machine (a bare model, as a trace replay
    // or a GOAL file is) runs on the command line's LogGOPS (-L ...).
    if (components_in(system.program(), "hardware[network]").empty()) {
      c.machine = Machine{};
      return c;
    }
    const taskgraph::StaticNode& n = system.graph()->nodes.at(comm.front()->node);
    c.no_machine = name_a_machine(system, components_in(system.program(), "hardware[network]")) +
                   ", or give the communication nodes application components whose requests reach an MPI runtime "
                   "and a hardware[network] component: no component accepts the communication nodes of model " +
                   system.model().name.name + " (" + n.label + " at " + n.location +
                   (comm.size() > 1 ? " and " + std::to_string(comm.size() - 1) + " more" : "") +
                   "), and no machine is named";
    return c;
  }
  const Ted& t = *bound.front();
  std::string chain;
  for (const std::string& s : t.chain) chain += (chain.empty() ? "" : " -> ") + s;
  c.no_machine = "the communication of model " + system.model().name.name +
                 " reaches no hardware[network] component (" + t.node_text + ": " + chain +
                 "), so there are no LogGOPS parameters to evaluate with: the runtime's "
                 "requests must reach a network";
  return c;
}

std::string compile_paradigm(const System& system, const std::string& requested) {
  std::string paradigm = requested;
  if (paradigm.empty() && system.study() && !system.study()->compare.empty())
    paradigm = system.study()->compare.front().str();
  if (paradigm.empty()) paradigm = "analytic[LogGP]";
  return evaluator_named(paradigm, "--paradigm").name;
}

}  // namespace poems::core
