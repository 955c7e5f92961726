// `poems simulate`: the discrete-event MPI simulator (simulation[MPI-Sim]) on
// a PSL model (through the evaluation core, as a study's cell), a GOAL
// schedule, a single collective or a trace's replay.
#include <cstdio>
#include <fstream>
#include <ostream>
#include <sstream>

#include "input_options.h"
#include "poems/core/timeline.h"
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
  const core::Replay* replay = input.replay();
  const trace::ReplayScope& scope = input.scope();
  const std::string description = describe_input(input, cell);
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
