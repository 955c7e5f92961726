// `poems analyze`: the analytic evaluator (analytic[LogGP]) on a PSL model
// (through the evaluation core, as a study's cell), a GOAL schedule or a
// single collective: a closed form where one applies, or the critical path
// of the task graph under LogGOPS costs.
#include <cstdio>
#include <optional>
#include <ostream>

#include "input_options.h"

namespace poems::cli {

namespace {

struct AnalyzeOptions {
  InputOptions input;
  std::string method, format;
};

void run_analyze(const AnalyzeOptions& o, Context& ctx) {
  core::EvaluationInput input(o.input.request("analyze", "analytic[LogGP]", o.method));
  report_input_warnings(input, ctx);
  const core::Cell cell = input.evaluate();
  ctx.err << cell.warnings;
  const std::string model = input.model(), description = describe_input(input, cell);
  std::optional<trace::ReplayScope> scope;
  if (input.replay()) scope = input.scope();
  if (!cell.ok()) throw core::Error(cell.error_kind, cell.error);
  const core::Outcome& r = cell.outcome;
  const core::Breakdown& b = r.breakdown;
  if (o.format == "json") {
    nlohmann::json out = r.extra;
    out["evaluator"] = "analytic[LogGP]";
    out["method"] = r.method;
    out["semantics"] = sim::semantics_name(cell.evaluation.machine.semantics);
    out["model"] = model;
    out["messages"] = r.messages;
    out["time_ns"] = b.time_ns;
    out["compute_ns"] = b.compute_ns;
    out["comm_ns"] = b.comm_ns;
    out["sync_ns"] = b.sync_ns;
    out["wall_seconds"] = cell.wall_seconds;
    ctx.out << out.dump(2) << '\n';
  } else {
    char line[256];
    ctx.out << description;
    std::snprintf(line, sizeof line, "analytic[LogGP] %s (%s semantics): time %.3f ns", r.method.c_str(),
                  sim::semantics_name(cell.evaluation.machine.semantics), b.time_ns);
    ctx.out << line;
    if (scope) std::snprintf(line, sizeof line, " (traced %.3f ns)", static_cast<double>(scope->measured) / 1000.0);
    ctx.out << (scope ? line : "") << '\n';
    std::snprintf(line, sizeof line,
                  "  compute %.3f ns, comm %.3f ns, sync %.3f ns (per-process means; sync is the rest)\n", b.compute_ns,
                  b.comm_ns, b.sync_ns);
    ctx.out << line;
    std::snprintf(line, sizeof line, "  evaluated in %.6f s\n", cell.wall_seconds);
    ctx.out << line;
  }
  ctx.result = report_record(cell, ctx);
}

}  // namespace

void register_analyze(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<AnalyzeOptions>();
  CLI::App* cmd = app.add_subcommand(
      "analyze", "Analytic evaluation (LogGP): a closed-form model, or the critical path of the task graph");
  add_input_options(cmd, o->input);
  add_method_option(cmd, o->method);
  cmd->add_option("--goal", o->input.goal, "GOAL schedule (LogGOPSim text format): its critical path");
  add_collective_options(cmd, o->input.collective, "Analyze");
  add_format_option(cmd, o->format, {"table", "json"});
  add_trace_options(cmd, o->input.trace, true);
  add_input_callback(cmd, o->input, "poems analyze", [o, &ctx] { run_analyze(*o, ctx); });
}

}  // namespace poems::cli
