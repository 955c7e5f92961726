// `poems simulate`: the discrete-event MPI simulator (simulation[MPI-Sim]) on
// a PSL model (through the evaluation core, as a study's cell), a GOAL
// schedule, a single collective or a trace's replay.
#include <fstream>
#include <ostream>

#include "input_options.h"
#include "poems/core/timeline.h"
#include "poems/report/evaluation.h"
#include "poems/sim/report.h"
#include "poems/trace/timeline.h"

namespace poems::cli {

namespace {

struct SimulateOptions {
  InputOptions input;
  std::string format, timeline;
  std::size_t max_ranks_listed = 1024;
};

void run_simulate(const SimulateOptions& o, Context& ctx) {
  const bool otf2 = trace::is_otf2_name(o.timeline);
  core::InputRequest request = o.input.request("simulate", "simulation[MPI-Sim]", "");
  request.cell.per_rank = true;
  request.cell.timeline = !o.timeline.empty() && !otf2;
  request.cell.otf2_timeline = otf2 ? o.timeline : "";
  request.cell.max_stuck_listed = o.max_ranks_listed;
  core::EvaluationInput input(std::move(request));
  report_input_warnings(input, ctx);
  const core::Cell cell = input.evaluate();
  ctx.err << cell.warnings;
  if (!cell.outcome.simulation) throw core::Error(cell.error_kind, cell.error);
  const sim::SimulationResult& r = *cell.outcome.simulation;
  report::write_simulation(input, cell, o.format, o.max_ranks_listed, ctx.out);
  if (otf2) {
    ctx.err << "wrote " << o.timeline << " (OTF2, " << r.ranks << " ranks)\n";
  } else if (!o.timeline.empty()) {
    std::ofstream out(o.timeline);
    sim::write_chrome_trace(out, r);
    if (!out) throw core::UsageError("--timeline", "cannot write '" + o.timeline + "'");
    ctx.err << "wrote " << o.timeline << " (" << r.timeline.size() << " intervals)\n";
  }
  if (!cell.ok()) {
    sim::write_stuck_report(ctx.err, r);
    ctx.err << "poems: error: " << cell.error << '\n';
    ctx.result = static_cast<int>(cell.error_kind);
    return;
  }
  ctx.result = report::write_record(cell, ctx.err) ? kExitOk : kExitEvaluation;
}

}  // namespace

void register_simulate(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<SimulateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "simulate", "Simulate MPI processes in the LogGOPS model (discrete events, full MPI matching)");
  add_input_options(cmd, o->input);
  cmd->add_option("--goal", o->input.goal, "GOAL schedule (LogGOPSim text format; times in ns)");
  add_collective_options(cmd, o->input.collective, "Simulate");
  add_format_option(cmd, o->format, {"table", "json"});
  cmd->add_option("--timeline", o->timeline,
                  "Write the run as a Chrome trace (ui.perfetto.dev), or as OTF2 if it ends in .otf2 (Vampir)");
  add_trace_options(cmd, o->input.trace, true);
  cmd->add_option("--max-ranks-listed", o->max_ranks_listed, "Per-rank lines to print (and ranks in deadlock reports)")
      ->capture_default_str();
  add_input_callback(cmd, o->input, "poems simulate", [o, &ctx] { run_simulate(*o, ctx); });
}

}  // namespace poems::cli
