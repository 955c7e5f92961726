// `poems run SPEC --study NAME`: every binding of the study's `vary` clauses,
// evaluated by every paradigm of its `compare` (core/study.h); results stored
// (and reused) in the knowledge base, printed as a table, CSV or JSON, and
// drawn with gnuplot.
#include <cstdio>
#include <ostream>

#include "options.h"
#include "poems/core/parallel_study.h"
#include "output.h"
#include "study_output.h"

namespace poems::cli {

namespace {

struct RunOptions {
  SystemOptions system;
  ChoiceOptions choices;
  MachineOptions machine;
  std::vector<std::string> paradigms;
  core::MeasureOptions measure;
  core::StoreOptions store;
  std::string wg, method, format, plot;
  std::size_t jobs = 0;  // 0 = the cores
};

void run_run(const RunOptions& o, Context& ctx) {
  const PriorityScope priority(o.measure.nice, ctx);
  const auto system = core::load_system(o.system.request(true));
  ctx.err << system->warnings();
  core::Store store(o.store);
  core::SessionOptions options = session_options(*system, o.choices, o.machine, o.wg, o.method);
  options.measure = o.measure;
  core::Session session(*system, options, store);
  const core::StudyPlan plan = core::plan_study(*system, o.paradigms);
  core::StudyTable table = core::run_study_jobs(session, plan, jobs_or_cores(o.jobs), [&](const core::StudyProgress& p) {
    const core::Cell& c = *p.cell;
    char head[64];
    std::snprintf(head, sizeof head, "[%zu/%zu] ", p.done, p.total);
    ctx.err << head << printable_text(core::binding_text(*p.binding)) << " " << c.paradigm << ": "
            << (!c.error.empty() ? printable_text(c.error)
                : c.reused       ? "stored result"
                                 : "evaluated")
            << '\n';
    if (!c.store_error.empty()) ctx.err << "poems: error: " << c.store_error << '\n';
  });
  report_store_warnings(store, ctx);
  ctx.result = print_study_table(table, *system->study(), o.format, o.plot, ctx.out, ctx.err);
}

}  // namespace

void register_run(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* cmd =
      app.add_subcommand("run", "Run a study: every binding of its vary clauses with every compared paradigm");
  add_system_options(cmd, o->system);
  cmd->get_option("--study")->required();
  add_paradigm_option(cmd, o->paradigms, "Evaluate with these paradigms instead of the study's compare entries",
                      {"--only"});
  add_method_option(cmd, o->method);
  add_choice_options(cmd, o->choices);
  add_machine_options(cmd, o->machine);
  add_wg_option(cmd, o->wg);
  add_format_option(cmd, o->format, {"table", "csv", "json"});
  add_plot_option(cmd, o->plot);
  add_measure_options(cmd, o->measure);
  add_store_options(cmd, o->store);
  add_jobs_option(cmd, o->jobs);
  cmd->callback([o, cmd, &ctx] {
    finish_machine_options(cmd, o->machine);
    run_run(*o, ctx);
  });
}

}  // namespace poems::cli
