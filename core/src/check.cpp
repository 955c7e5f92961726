#include "poems/core/check.h"

#include <set>

#include "poems/base/suggest.h"
#include "poems/components/closed_forms.h"
#include "poems/core/composition.h"
#include "poems/core/error.h"
#include "poems/core/evaluators.h"
#include "poems/core/processor_models.h"
#include "poems/core/programs.h"
#include "poems/core/study.h"
#include "poems/core/trace_model.h"
#include "poems/psl/lower.h"
#include "system_internal.h"

namespace poems::core {

namespace {

// Processor models that are their attributes alone (a Wg, a working-set
// curve) are built here, so a bad attribute is an error of `poems check`,
// located at its component, not of the first run. Models that time or run
// something (measured, external) are left to the run.
void check_processors(const psl::Program& program, const EvaluationPlan& plan, psl::DiagnosticEngine& diags) {
  std::set<std::string> seen;
  for (const Ted& ted : plan.teds) {
    if (ted.kind != "compute" || ted.implicit || ted.chain.empty()) continue;
    if (ted.evaluator != "processor[wg]" && ted.evaluator != "processor[hierarchy]") continue;
    if (!seen.insert(ted.chain.back()).second) continue;
    try {
      processor::make_processor_model(processor_spec(ted));
    } catch (const processor::ProcessorError& e) {
      const psl::ComponentDecl* c = program.find_component(ted.chain.back());
      diags.error(c ? c->name.location : psl::SourceLocation{}, e.what());
    }
  }
}

void check_study(const std::shared_ptr<psl::Frontend>& fe, const std::string& file, const psl::StudyDecl& st,
                 std::set<std::string>& composed) {
  psl::DiagnosticEngine& diags = fe->mutable_diagnostics();
  std::vector<const EvaluatorEntry*> paradigms;
  const std::vector<std::string> names = evaluator_names();
  for (const psl::QualifiedRef& p : st.compare) {
    if (const EvaluatorEntry* e = find_evaluator(p.str())) {
      paradigms.push_back(e);
      continue;
    }
    diags.error(p.location, "study '" + st.name.name + "' compares " + p.str() +
                                ", which no evaluator implements (evaluators: " + base::name_list(names) + ")" +
                                base::did_you_mean(p.str(), names));
  }
  try {
    expand_study(st);
  } catch (const Error& e) {
    diags.error(st.name.location, e.what());
  }
  if (!st.model) return;
  SystemRequest request;
  request.files = {file};
  request.study = st.name.name;
  std::unique_ptr<System> system;
  try {
    system = make_system(fe, request);
  } catch (const Error& e) {
    diags.error(st.name.location, "study '" + st.name.name + "': " + e.what());
    return;
  }
  const taskgraph::StaticTaskGraph& graph = *system->graph();
  for (const EvaluatorEntry* entry : paradigms) {
    // Studies of the same model, machine and settings compose alike: once.
    const psl::CompileRequest r = compile_request(*system, entry->name, {});
    std::string key = r.model + "|" + entry->name;
    for (const std::string& c : r.chosen) key += "|" + c;
    for (const auto& [k, v] : r.study) key += "|" + k + "=" + v.str();
    for (const auto& [k, v] : r.overrides) key += "|" + k + "=" + v.str();
    if (!composed.insert(key).second) continue;
    const std::size_t before = diags.all().size();
    try {
      const Composition c = compose(*system, entry->name, {});
      if (entry->modelled && !c.machine)
        diags.error(st.name.location, "study '" + st.name.name + "' (" + entry->name + "): " + c.no_machine);
      check_processors(fe->program(), c.plan, diags);
    } catch (const Error& e) {
      // The compiler's errors are in `diags` already, located; others are not.
      if (e.diagnostics().empty())
        diags.error(st.name.location, "study '" + st.name.name + "' (" + entry->name + "): " + e.what());
    }
    if (diags.all().size() > before) diags.drop_repeats(before);
  }
  // The paradigms that run the model's program: a study that compares one
  // on a model without such a program would fail every cell.
  if (!trace_graph(graph))
    for (const psl::QualifiedRef& p : st.compare) {
      const bool direct = p.str() == "simulation[direct]";
      if (!direct && p.str() != "measurement[mpirun]") continue;
      const ModelProgram* program =
          system->attached_program() ? system->attached_program().get() : find_program(graph.model);
      if (program && !(direct ? program->direct : program->measured).empty()) continue;
      diags.error(p.location, "study '" + st.name.name + "' compares " + p.str() + ", which runs model " + graph.model +
                                  "'s program, but " +
                                  (program ? std::string("its program gives no ") +
                                                 (direct ? "'sources' or 'direct_executable' (built with poems-mpicc)"
                                                         : "'sources' or 'executable' (built with mpicc)")
                                           : "the model has none: attach one with `program { sources = \"...\"; ... }` "
                                             "(docs/psl.md, \"Programs and kernels\")"));
    }
  for (const EvaluatorEntry* entry : paradigms) {
    if (entry->name != "analytic[LogGP]") continue;
    if (const components::ClosedForm* form = components::find_closed_form(graph.model)) {
      try {
        form->bind(graph.params);
      } catch (const std::exception& e) {
        diags.error(st.name.location, "study '" + st.name.name + "': " + e.what());
      }
    }
  }
}

}  // namespace

CheckResult check_specification(const std::string& file) {
  CheckResult result;
  result.frontend = std::make_shared<psl::Frontend>();
  psl::Frontend& fe = *result.frontend;
  bool ok = fe.load_files({file});
  if (ok) ok = psl::check_program_communication(fe.program(), fe.sources(), fe.mutable_diagnostics()) == 0;
  result.models = fe.program().model_count();
  result.components = fe.program().component_count();
  result.studies = fe.program().study_count();
  if (ok) {
    std::set<std::string> composed;
    for (const psl::Module& m : fe.program().modules)
      for (const psl::StudyDecl& st : m.studies) check_study(result.frontend, file, st, composed);
    ok = !fe.diagnostics().has_errors();
  }
  result.ok = ok;
  return result;
}

}  // namespace poems::core
