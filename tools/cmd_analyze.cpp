// `poems analyze`: the analytic evaluator (analytic[LogGP]) on a PSL model
// (through the evaluation core, as a study's cell), a GOAL schedule or a
// single collective: a closed form where one applies, or the critical path
// of the task graph under LogGOPS costs.
#include <ostream>

#include "input_options.h"
#include "poems/report/evaluation.h"

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
  if (!cell.ok()) throw core::Error(cell.error_kind, cell.error);
  report::write_analysis(input, cell, o.format, ctx.out);
  ctx.result = report::write_record(cell, ctx.err) ? kExitOk : kExitEvaluation;
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
