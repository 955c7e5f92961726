// `poems run SPEC --study NAME`: every binding of the study's `vary` clauses,
// evaluated by every paradigm of its `compare` (core/study.h); results stored
// (and reused) in the knowledge base, printed as a table, CSV or JSON, and
// drawn with gnuplot. --jobs N evaluates N cells at once in worker processes
// (core/parallel_study.h); under mpirun (or with --ranks R, which starts it)
// the cells are shared among the ranks (core/mpi_study.h, docs/scaleout.md).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <ostream>

#include "options.h"
#include "poems/base/escaped.h"
#include "poems/base/executable_path.h"
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

// This command line without --ranks, for mpirun to start again.
std::vector<std::string> arguments_without_ranks() {
  const std::filesystem::path exe = base::executable_path();
  if (exe.empty() || exe.filename() != "poems")
    throw core::UsageError("--ranks",
                           "starts mpirun on the poems executable; run it from poems itself, or run "
                           "mpirun -np R poems run ...");
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> args;
  for (std::string a; std::getline(in, a, '\0');) args.push_back(a);
  std::vector<std::string> out;
  for (std::size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--") {  // nothing after it is an option
      out.insert(out.end(), args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
      break;
    }
    if (args[i] == "--ranks") {
      ++i;
      continue;
    }
    if (!args[i].starts_with("--ranks=")) out.push_back(args[i]);
  }
  return out;
}

// Measured runs need the whole machine: not under the distributed runner.
void check_distributed(const core::StudyPlan& plan) {
  for (const std::string& p : plan.paradigms)
    if (!core::evaluator_named(p, "--paradigm").modelled)
      throw core::UsageError("--ranks", p + " measures this host: run it without mpirun (its measured runs never "
                                            "overlap other work; --jobs shares the rest of the study)");
}

void run_run(const RunOptions& o, Context& ctx) {
  if (o.ranks > 0 && !core::under_mpirun()) {
    ctx.result = core::run_under_mpirun(o.ranks, arguments_without_ranks());
    return;
  }
  std::unique_ptr<core::MpiWorld> world;
  if (core::under_mpirun()) world = std::make_unique<core::MpiWorld>();
  if (world && world->size() > 1 && world->rank() != 0) {
    // A worker rank: prints nothing (rank 0 reports), never opens the knowledge base.
    std::unique_ptr<core::System> system;
    std::unique_ptr<core::Store> store;
    std::unique_ptr<core::Session> session;
    core::StudyPlan plan;
    std::string cannot;
    try {
      system = core::load_system(o.system.request(true));
      core::StoreOptions no_store;
      no_store.disabled = true;
      store = std::make_unique<core::Store>(no_store);
      core::SessionOptions options = session_options(*system, o.choices, o.machine, o.wg, o.method);
      options.measure = o.measure;
      session = std::make_unique<core::Session>(*system, options, *store);
      plan = core::plan_study(*system, o.paradigms);
    } catch (const std::exception& e) {
      cannot = e.what();
      session.reset();
    }
    core::serve_study(*world, session.get(), session ? &plan : nullptr, cannot);
    return;
  }
  const PriorityScope priority(o.measure.nice, ctx);
  const auto system = core::load_system(o.system.request(true));
  ctx.err << system->warnings() << core::semantics_override_warnings(*system, o.machine.overrides);
  core::Store store(o.store);
  core::SessionOptions options = session_options(*system, o.choices, o.machine, o.wg, o.method);
  options.measure = o.measure;
  core::Session session(*system, options, store);
  const core::StudyPlan plan = core::plan_study(*system, o.paradigms);
  if (!o.plot.empty()) report::check_plot_x(o.plot_x, plan.targets);
  const auto progress = [&](const core::StudyProgress& p) {
    const core::Cell& c = *p.cell;
    char head[64];
    std::snprintf(head, sizeof head, "[%zu/%zu] ", p.done, p.total);
    ctx.err << head << base::escaped(core::binding_text(*p.binding)) << " " << c.paradigm << ": "
            << (!c.error.empty() ? base::escaped(c.error)
                : c.reused       ? "stored result"
                                 : "evaluated")
            << '\n';
    if (!c.store_error.empty()) ctx.err << "poems: error: " << c.store_error << '\n';
  };
  core::StudyTable table;
  if (world && world->size() > 1) {
    check_distributed(plan);
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
