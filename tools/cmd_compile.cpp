// `poems compile`: composes a model's components by associative-interface
// matching and prints the SystemModel and its EvaluationPlan (one TED per
// static task-graph node; report/composition.h).
#include <fstream>
#include <ostream>

#include "options.h"
#include "poems/core/composition.h"
#include "poems/core/error.h"
#include "poems/core/trace_model.h"
#include "poems/report/composition.h"

namespace poems::cli {

namespace {

struct CompileOptions {
  SystemOptions system;
  ChoiceOptions choices;
  MachineOptions machine;
  std::string paradigm, dot, format;
};

void run_compile(const CompileOptions& o, Context& ctx) {
  const auto system = core::load_system(o.system.request());
  ctx.err << system->warnings();
  const std::string paradigm = core::compile_paradigm(*system, o.paradigm);
  core::Choices choices{o.choices.machine, o.choices.processor, system->settings().study, system->settings().overrides};
  const std::size_t before = system->diagnostics().all().size();
  core::Composition c = core::compose(*system, paradigm, choices);
  if (c.machine) core::apply_overrides(o.machine.overrides, *c.machine);     // the machine as it would run
  for (std::size_t i = before; i < system->diagnostics().all().size(); ++i)  // warnings
    ctx.err << system->diagnostics().render(system->diagnostics().all()[i]);
  if (const core::TraceGraph* g = core::trace_graph(*system->graph())) {
    if (!o.dot.empty())
      throw core::UsageError(
          "--dot", "model " + system->model().name.name + " comes from a trace: it has no components to draw");
    report::write_trace_model(*system, *g, c, o.format, ctx.out);
    return;
  }
  if (!o.dot.empty()) {
    std::ofstream out(o.dot);
    out << psl::to_dot(c.system);
    if (!out) throw core::UsageError("--dot", "cannot write '" + o.dot + "'");
  }
  report::write_composition(*system, c, o.format, ctx.out);
}

}  // namespace

void register_compile(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<CompileOptions>();
  CLI::App* cmd = app.add_subcommand(
      "compile", "Compose a model's components (requests matched to accepts) and print its evaluation plan");
  add_system_options(cmd, o->system);
  add_choice_options(cmd, o->choices);
  add_machine_options(cmd, o->machine);
  cmd->add_option("--paradigm", o->paradigm,
                  "study.paradigm, e.g. simulation[MPI-Sim] (default: the study's first compare entry, or "
                  "analytic[LogGP])");
  add_format_option(cmd, o->format, {"table", "json"});
  cmd->add_option("--dot", o->dot, "Write the hierarchical dependence graph as Graphviz DOT");
  cmd->callback([o, &ctx, cmd] {
    finish_machine_options(cmd, o->machine);
    run_compile(*o, ctx);
  });
}

}  // namespace poems::cli
