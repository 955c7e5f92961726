// `poems compile`: composes a model's components by associative-interface
// matching and prints the SystemModel and its EvaluationPlan (one TED per
// static task-graph node).
#include <fstream>
#include <iostream>

#include "cli_common.h"
#include "model_source.h"
#include "system_compile.h"

namespace poems::cli {

namespace {

struct CompileOptions {
  std::string spec, model, study, paradigm, machine, processor, dot, format = "table";
  std::vector<std::string> sets;
};

std::string where(const psl::SourceManager& sources, psl::SourceLocation at) {
  if (!at.valid()) return "";
  return sources.path(at.file) + ":" + std::to_string(at.line) + ":" + std::to_string(at.column);
}

void print_text(const ComposedSystem& c, const psl::SourceManager& sources) {
  const psl::SystemModel& s = c.system;
  std::cout << "system " << s.model << " (taskgraph " << s.taskgraph << ")";
  for (const auto& [k, v] : s.study) std::cout << ", study." << k << " = " << v.str();
  std::cout << "\n";
  for (const char* domain : {"application", "runtime", "hardware"}) {
    std::cout << "  " << domain << ":";
    for (const psl::ComponentInstance& i : s.instances)
      if (i.domain_head == domain) std::cout << " " << i.name << " (" << i.domain << ")";
    std::cout << "\n";
  }
  std::cout << "bindings:\n";
  for (const psl::InterfaceBinding& b : s.bindings) {
    std::cout << "  " << s.instances[b.from].name << (b.request.empty() ? "" : "." + b.request) << " -> "
              << s.instances[b.to].name << "." << s.instances[b.to].accepts[b.accepts].label << "  " << b.transaction
              << " (" << b.protocol << ")";
    for (const psl::ArgumentBinding& a : b.arguments)
      if (a.source != psl::ArgumentBinding::Source::Forwarded || a.expression != a.parameter)
        std::cout << ", " << a.parameter << " = " << a.expression
                  << (a.source == psl::ArgumentBinding::Source::Library ? " (library coercion)" : "");
    std::cout << "  [" << where(sources, b.location) << "]\n";
  }
  std::cout << "evaluation plan (communication: " << (c.plan.communication.empty() ? "-" : c.plan.communication)
            << (c.plan.network ? ", network " + c.plan.network_component : std::string()) << "):\n";
  for (const components::Ted& t : c.plan.teds) {
    std::cout << "  node " << t.node << " " << t.node_text << "\n    -> " << (t.evaluator.empty() ? "-" : t.evaluator);
    if (t.implicit) std::cout << " (no component accepts this node: defaults)";
    if (!t.chain.empty()) {
      std::cout << " via";
      for (std::size_t k = 0; k < t.chain.size(); ++k) std::cout << (k ? " -> " : " ") << t.chain[k];
    }
    std::cout << "\n";
    if (!t.parameters.empty()) {
      std::cout << "      ";
      bool first = true;
      for (const auto& [k, v] : t.parameters) {
        std::cout << (first ? "" : ", ") << k << " = " << v.str();
        first = false;
      }
      std::cout << "\n";
    }
  }
}

void run(const CompileOptions& o, int& result) {
  LoadedModel loaded;
  if (!load_model(o.spec, o.model, loaded, result)) return;
  const psl::Program& program = loaded.frontend->program();
  psl::CompileRequest request;
  if (!o.study.empty()) {
    const psl::StudyDecl* st = program.find_study(o.study);
    if (!st) usage_error("--study", "no study named '" + o.study + "' in " + o.spec);
    std::string paradigm = o.paradigm;
    if (paradigm.empty() && !st->compare.empty()) paradigm = st->compare.front().str();
    request = psl::study_request(program, *st, paradigm.empty() ? "analytic[LogGP]" : paradigm);
  } else {
    request.model = loaded.graph->model;
    if (!o.paradigm.empty()) request.study["paradigm"] = command_line_value("--paradigm", o.paradigm);
  }
  if (!o.machine.empty()) request.chosen.push_back(o.machine);
  if (!o.processor.empty()) request.chosen.push_back(o.processor);
  add_command_line_settings(program, request.model, o.sets, request);
  apply_default_study(request);
  std::optional<ComposedSystem> composed = compose(loaded, request, result);
  if (!composed) return;
  if (!o.dot.empty()) {
    std::ofstream out(o.dot);
    out << psl::to_dot(composed->system);
    if (!out) usage_error("--dot", "cannot write '" + o.dot + "'");
  }
  if (o.format == "json") {
    nlohmann::json j = psl::to_json(composed->system, loaded.frontend->sources());
    j["plan"] = composed->plan.to_json();
    std::cout << j.dump(2) << '\n';
  } else {
    print_text(*composed, loaded.frontend->sources());
  }
  result = kExitOk;
}

}  // namespace

void register_compile(CLI::App& app, int& result) {
  auto o = std::make_shared<CompileOptions>();
  CLI::App* cmd = app.add_subcommand(
      "compile", "Compose a model's components (requests matched to accepts) and print its evaluation plan");
  cmd->add_option("spec", o->spec, "PSL specification")->required()->check(CLI::ExistingFile);
  cmd->add_option("--model", o->model, "Model to compose (default: the only one)");
  cmd->add_option("--study", o->study, "Compose in the context of this study (its machine and settings)");
  cmd->add_option("--paradigm", o->paradigm,
                  "study.paradigm, e.g. simulation[MPI-Sim] (default: the study's first compare entry, or "
                  "analytic[LogGP])");
  cmd->add_option("--machine", o->machine, "Hardware component to run on (excludes the others of its domain)");
  cmd->add_option("--processor", o->processor, "Processor component (excludes the others of its domain)");
  cmd->add_option("--set", o->sets, "study.X settings and Component.param overrides, e.g. compute=processor[wg]");
  cmd->add_option("--format", o->format, "Output format")->check(CLI::IsMember({"table", "json"}));
  cmd->add_option("--dot", o->dot, "Write the hierarchical dependence graph as Graphviz DOT");
  cmd->callback([o, &result] { run(*o, result); });
}

}  // namespace poems::cli
