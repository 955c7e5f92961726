// `poems measure SPEC --study NAME` / `poems measure SPEC --set ...`: runs the
// model's real program under mpirun (measurement[mpirun]) for the bindings
// that fit this machine, stores the measured times beside the predictions,
// and prints them next to the predictions of the other paradigms.
#include <stdlib.h>

#include <ostream>

#include "options.h"
#include "poems/core/parallel_study.h"
#include "poems/measure/mpirun.h"
#include "poems/report/study_table.h"

namespace poems::cli {

namespace {

constexpr const char* kMeasurement = "measurement[mpirun]";

struct MeasureOptions {
  SystemOptions system;
  ChoiceOptions choices;
  MachineOptions machine;  // the compared predictions' machine
  std::vector<std::string> paradigms;
  core::MeasureOptions measure;
  core::StoreOptions store;
  std::string format, plot, plot_x;
  std::size_t jobs = 0;  // predictions at once; 0 = the cores
  double disagree_pct = core::kDisagreePct;
};

// Other work on the machine slows a measurement down: say so.
void warn_if_busy(const Context& ctx) {
  double load[1];
  if (::getloadavg(load, 1) == 1 && load[0] > 0.5)
    ctx.warn("the 1-minute load average is " + std::to_string(load[0]) + " on " +
             std::to_string(measure::host_cores()) + " cores: other processes compete with the measured program");
}

void run_measure(const MeasureOptions& o, Context& ctx) {
  const PriorityScope priority(o.measure.nice, ctx);
  const auto system = core::load_system(o.system.request(true));
  ctx.err << system->warnings();
  core::Store store(o.store);
  core::SessionOptions options = session_options(*system, o.choices, o.machine, "", "");
  options.measure = o.measure;
  core::Session session(*system, options, store);
  const core::MeasurementPlan mp = core::measurement_plan(session, o.paradigms);
  const core::StudyPlan& plan = mp.plan;
  if (mp.dropped)
    ctx.err << "measuring " << plan.bindings.size() << " of " << plan.bindings.size() + mp.dropped << " bindings; "
            << mp.dropped << " do not fit this machine (e.g. " << mp.example << ")\n";
  if (plan.bindings.empty())
    throw core::InputError("no binding of study " + plan.study + " fits this machine (at most " +
                           std::to_string(o.measure.max_ranks ? o.measure.max_ranks : measure::host_cores()) +
                           " processes; see --max-ranks)");
  if (!o.plot.empty()) report::check_plot_x(o.plot_x, plan.targets);
  warn_if_busy(ctx);
  core::StudyTable table = core::run_study_jobs(session, plan, jobs_or_cores(o.jobs));
  for (const std::string& w : store.take_warnings()) ctx.warn(w);  // runs not linked to a study
  table.disagree_pct = o.disagree_pct;
  const psl::StudyDecl none;
  const psl::StudyDecl& study = system->study() ? *system->study() : none;
  if (system->study() || o.format != "json") {
    const bool complete =
        report::write_study_table(table, study, o.format, {o.plot, o.plot_x, o.system.sets}, ctx.out, ctx.err);
    ctx.result = complete ? kExitOk : kExitEvaluation;
    return;
  }
  core::finish_study_table(table);
  ctx.out << report::measured_binding_json(table, kMeasurement, plan.paradigms).dump(2) << '\n';
  const core::StudyCell& measured = table.rows.front().cells.at(kMeasurement);
  ctx.result = measured.skipped ? kExitInputError : table.failures || table.store_failures ? kExitEvaluation : kExitOk;
}

}  // namespace

void register_measure(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<MeasureOptions>();
  CLI::App* cmd = app.add_subcommand(
      "measure", "Run the real program of a model under mpirun (measurement[mpirun]) beside the predictions");
  add_system_options(cmd, o->system);
  add_paradigm_option(cmd, o->paradigms,
                      "Paradigms to predict beside the measurement (default with --study: the study's compare "
                      "entries; none: measure only)",
                      {"--compare"});
  add_choice_options(cmd, o->choices);
  add_machine_options(cmd, o->machine);
  add_format_option(cmd, o->format, {"table", "csv", "json"});
  add_plot_option(cmd, o->plot, o->plot_x);
  add_disagree_option(cmd, o->disagree_pct);
  add_measure_options(cmd, o->measure);
  add_store_options(cmd, o->store);
  add_jobs_option(cmd, o->jobs);
  cmd->callback([o, &ctx, cmd] {
    finish_machine_options(cmd, o->machine);
    run_measure(*o, ctx);
  });
}

}  // namespace poems::cli
