// `poems simulate`: the discrete-event MPI simulator (simulation[MPI-Sim]) on
// a PSL model (through the evaluation core, as a study's cell), a GOAL
// schedule, a single collective or a trace's replay.
#include <cstdio>
#include <fstream>
#include <ostream>
#include <sstream>

#include "command_deadline.h"
#include "options.h"
#include "output.h"
#include "poems/core/schedules.h"
#include "poems/core/timeline.h"
#include "poems/sim/report.h"
#include "poems/trace/timeline.h"

namespace poems::cli {

namespace {

struct SimulateOptions {
  SystemOptions system;
  ChoiceOptions choices;
  MachineOptions machine;
  core::CollectiveRequest collective;
  core::StoreOptions store;
  TraceOptions trace;
  std::string wg, goal, format, timeline;
  std::size_t max_ranks_listed = 1024;
  double timeout_seconds = 0;
};

void run_simulate(const SimulateOptions& o, Context& ctx) {
  const int sources =
      !o.system.spec.empty() + !o.goal.empty() + !o.collective.operation.empty() + !o.trace.archive.empty();
  if (sources != 1)
    throw core::UsageError("simulate", "give exactly one of SPEC, --goal FILE, --collective NAME or --trace ARCHIVE");
  if (o.trace.archive.empty()) reject_trace_options(o.trace);
  const bool otf2 = trace::is_otf2_name(o.timeline);
  core::Store store(o.store);
  core::Cell cell;
  std::string description;
  std::unique_ptr<core::Replay> replay;
  trace::ReplayScope scope;
  if (!o.trace.archive.empty()) {
    replay = core::prepare_replay(o.trace.request(o.choices, o.machine, o.wg));
    for (const std::string& w : replay->trace.warnings) ctx.warn(replay->trace.path + ": " + w);
    core::ReplayCell r =
        core::evaluate_replay(*replay, "simulation[MPI-Sim]", "", store, true, !o.timeline.empty() && !otf2,
                              o.max_ranks_listed, otf2 ? o.timeline : "");
    cell = std::move(r.cell);
    scope = r.scope;
    description = replay_summary(*replay, scope);
  } else if (!o.system.spec.empty()) {
    const auto system = core::load_system(o.system.request());
    ctx.err << system->warnings();
    core::Session session(*system, session_options(*system, o.choices, o.machine, o.wg, ""), store);
    core::CellRequest request;
    request.paradigm = "simulation[MPI-Sim]";
    request.reuse = false;  // asked for: simulate it (the per-rank table needs the run)
    request.per_rank = true;
    request.timeline = !o.timeline.empty() && !otf2;
    request.otf2_timeline = otf2 ? o.timeline : "";
    request.max_stuck_listed = o.max_ranks_listed;
    cell = session.evaluate(request);
    description = describe(cell, system->graph()->model) + "\n";
  } else {
    if (!o.choices.machine.empty() || !o.choices.processor.empty() || !o.system.sets.empty())
      throw core::UsageError("--machine",
                             "--machine, --processor and --set choose a PSL model's components; "
                             "a GOAL file or a collective runs on -L -o -g -G -O -S");
    core::ScheduleRequest request;
    request.goal = o.goal;
    request.collective = o.collective;
    request.paradigm = "simulation[MPI-Sim]";
    request.machine = core::command_line_machine(o.machine.overrides);
    request.cpus_given = o.machine.overrides.cpus.has_value();
    request.nics_given = o.machine.overrides.nics.has_value();
    request.per_rank = true;
    request.timeline = !o.timeline.empty() && !otf2;
    request.otf2_timeline = otf2 ? o.timeline : "";
    request.max_stuck_listed = o.max_ranks_listed;
    cell = core::evaluate_schedule(request, store);
    ctx.err << cell.warnings;
  }
  const auto& r = cell.outcome.simulation;
  if (!r) throw core::Error(cell.error_kind, cell.error);
  const nlohmann::json& extra = cell.outcome.extra;
  if (o.format == "json") {
    if (!replay) {
      sim::write_json(ctx.out, *r, o.max_ranks_listed);
    } else {
      std::ostringstream text;
      sim::write_json(text, *r, o.max_ranks_listed);
      nlohmann::json j = nlohmann::json::parse(text.str());
      j["trace"] = {{"archive", replay->trace.path},
                    {"creator", replay->trace.creator},
                    {"hash", replay->hash},
                    {"machine", replay->machine_source},
                    {"compute_scale", replay->options.compute_scale},
                    {"window", replay->options.window.text()},
                    {"calls", scope.calls},
                    {"messages", scope.messages},
                    {"collectives", scope.collectives},
                    {"traced_compute_ns", static_cast<double>(scope.traced_compute) / 1000.0},
                    {"traced_ns", static_cast<double>(scope.measured) / 1000.0},
                    {"difference_pct", extra.value("difference_pct", 0.0)}};
      ctx.out << j.dump(1) << '\n';
    }
  } else {
    ctx.out << description << describe_machine(cell.evaluation.machine) << '\n';
    sim::write_table(ctx.out, *r, o.max_ranks_listed);
    if (replay && cell.ok()) {
      char line[160];
      std::snprintf(line, sizeof line, "traced %.6f s, replayed %.6f s: %+.2f %%\n",
                    static_cast<double>(scope.measured) / 1e12, static_cast<double>(r->max_finish) / 1e12,
                    extra.value("difference_pct", 0.0));
      ctx.out << line;
    }
  }
  if (otf2) {
    ctx.err << "wrote " << o.timeline << " (OTF2, " << r->ranks << " ranks)\n";
  } else if (!o.timeline.empty()) {
    std::ofstream out(o.timeline);
    sim::write_chrome_trace(out, *r);
    if (!out) throw core::UsageError("--timeline", "cannot write '" + o.timeline + "'");
    ctx.err << "wrote " << o.timeline << " (" << r->timeline.size() << " intervals)\n";
  }
  if (!cell.ok()) {
    sim::write_stuck_report(ctx.err, *r);
    ctx.err << "poems: error: " << cell.error << '\n';
    ctx.result = static_cast<int>(cell.error_kind);
    return;
  }
  ctx.result = report_record(cell, ctx);
}

}  // namespace

void register_simulate(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<SimulateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "simulate", "Simulate MPI processes in the LogGOPS model (discrete events, full MPI matching)");
  add_system_options(cmd, o->system, false);
  add_choice_options(cmd, o->choices);
  add_machine_options(cmd, o->machine);
  add_memory_limit_option(cmd);
  add_wg_option(cmd, o->wg);
  cmd->add_option("--goal", o->goal, "GOAL schedule (LogGOPSim text format; times in ns)");
  add_collective_options(cmd, o->collective, "Simulate");
  add_format_option(cmd, o->format, {"table", "json"});
  cmd->add_option("--timeline", o->timeline,
                  "Write the run as a Chrome trace (ui.perfetto.dev), or as OTF2 if it ends in .otf2 (Vampir)");
  add_trace_options(cmd, o->trace, true);
  cmd->add_option("--max-ranks-listed", o->max_ranks_listed, "Per-rank lines to print (and ranks in deadlock reports)")
      ->capture_default_str();
  add_store_options(cmd, o->store);
  cmd->add_option("--timeout", o->timeout_seconds,
                  "Seconds the command may run; past them it stops with exit 3 (0: no limit, the default)")
      ->check(CLI::Range(0.0, 1e7));
  cmd->callback([o, cmd, &ctx] {
    finish_machine_options(cmd, o->machine);
    const CommandDeadline deadline(o->timeout_seconds, "poems simulate");
    run_simulate(*o, ctx);
  });
}

}  // namespace poems::cli
