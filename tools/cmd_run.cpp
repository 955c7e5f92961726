// `poems run SPEC --study NAME`: every binding of the study's `vary` clauses,
// evaluated by every paradigm of its `compare` (core/study.h); results stored
// (and reused) in the knowledge base, printed as a table, CSV or JSON, and
// drawn with gnuplot. --jobs N evaluates N cells at once in worker processes
// (core/parallel_study.h); under mpirun (or with --ranks R, which starts it)
// the cells are shared among the ranks (core/mpi_study.h, docs/scaleout.md).
#include <ostream>

#include "options.h"
#include "poems/core/mpi_study.h"
#include "poems/core/parallel_study.h"
#include "poems/report/study_table.h"

namespace poems::cli {

namespace {

struct RunOptions {
  SystemOptions system;
  ChoiceOptions choices;
  MachineOptions machine;
  std::vector<std::string> paradigms;
  core::MeasureOptions measure;
  core::StoreOptions store;
  std::string wg, method, format, plot, plot_x;
  std::size_t jobs = 0;  // 0 = the cores
  int ranks = 0;         // > 0: run under `mpirun -np ranks`
  double disagree_pct = core::kDisagreePct;
};

void run_run(const RunOptions& o, Context& ctx) {
  if (o.ranks > 0 && !core::under_mpirun()) {
    ctx.result = core::run_under_mpirun(o.ranks, core::arguments_without_ranks());
    return;
  }
  const auto session_of = [&](const core::System& system) {
    core::SessionOptions options = session_options(system, o.choices, o.machine, o.wg, o.method);
    options.measure = o.measure;
    return options;
  };
  std::unique_ptr<core::MpiWorld> world;
  if (core::under_mpirun()) world = std::make_unique<core::MpiWorld>();
  if (world && world->size() > 1 && world->rank() != 0) {  // a worker rank: rank 0 reports
    core::serve_study_rank(*world, o.system.request(true), session_of, o.paradigms);
    return;
  }
  const PriorityScope priority(o.measure.nice, ctx);
  const auto system = core::load_system(o.system.request(true));
  ctx.err << system->warnings() << core::semantics_override_warnings(*system, o.machine.overrides);
  core::Store store(o.store);
  core::Session session(*system, session_of(*system), store);
  const core::StudyPlan plan = core::plan_study(*system, o.paradigms);
  if (!o.plot.empty()) report::check_plot_x(o.plot_x, plan.targets);
  const auto progress = [&](const core::StudyProgress& p) { report::write_study_progress(p, ctx.err); };
  core::StudyTable table;
  if (world && world->size() > 1) {
    core::check_distributable(plan);
    const std::unique_ptr<core::CellWorkers> workers = core::mpi_workers(*world, session, plan);
    table = core::run_study(session, plan, *workers, progress);
  } else {
    table = core::run_study_jobs(session, plan, jobs_or_cores(o.jobs), progress);
  }
  for (const std::string& w : store.take_warnings()) ctx.warn(w);  // runs not linked to a study
  table.disagree_pct = o.disagree_pct;
  const bool complete =
      report::write_study_table(table, *system->study(), o.format, {o.plot, o.plot_x, o.system.sets}, ctx.out, ctx.err);
  ctx.result = complete ? kExitOk : kExitEvaluation;
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
  add_plot_option(cmd, o->plot, o->plot_x);
  add_disagree_option(cmd, o->disagree_pct);
  add_measure_options(cmd, o->measure);
  add_store_options(cmd, o->store);
  add_jobs_option(cmd, o->jobs);
  cmd->add_option("--ranks", o->ranks,
                  "Share the study among R MPI ranks: runs mpirun -np R poems run ... (see docs/scaleout.md for "
                  "mpirun across nodes)")
      ->check(CLI::Range(1, 65536));
  cmd->callback([o, cmd, &ctx] {
    finish_machine_options(cmd, o->machine);
    run_run(*o, ctx);
  });
}

}  // namespace poems::cli
