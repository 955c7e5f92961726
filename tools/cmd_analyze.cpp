// `poems analyze`: the analytic evaluator (analytic[LogGP]) on a PSL model
// (through the evaluation core, as a study's cell), a GOAL schedule or a
// single collective: a closed form where one applies, or the critical path
// of the task graph under LogGOPS costs.
#include <cstdio>
#include <optional>
#include <ostream>

#include "command_deadline.h"
#include "options.h"
#include "output.h"
#include "poems/core/schedules.h"

namespace poems::cli {

namespace {

struct AnalyzeOptions {
  SystemOptions system;
  ChoiceOptions choices;
  MachineOptions machine;
  core::CollectiveRequest collective;
  core::StoreOptions store;
  TraceOptions trace;
  std::string wg, method, goal, format;
  double timeout_seconds = 0;
};

void run_analyze(const AnalyzeOptions& o, Context& ctx) {
  const int sources =
      !o.system.spec.empty() + !o.goal.empty() + !o.collective.operation.empty() + !o.trace.archive.empty();
  if (sources != 1)
    throw core::UsageError("analyze", "give exactly one of SPEC, --goal FILE, --collective NAME or --trace ARCHIVE");
  if (o.trace.archive.empty()) reject_trace_options(o.trace);
  core::Store store(o.store);
  core::Cell cell;
  std::string model, description;
  std::optional<trace::ReplayScope> scope;
  if (!o.trace.archive.empty()) {
    if (o.method == "closed-form") throw core::UsageError("--method", "a trace has no closed form; use critical-path");
    const auto replay = core::prepare_replay(o.trace.request(o.choices, o.machine, o.wg));
    for (const std::string& w : replay->trace.warnings) ctx.warn(replay->trace.path + ": " + w);
    core::ReplayCell r = core::evaluate_replay(*replay, "analytic[LogGP]", o.method, store);
    cell = std::move(r.cell);
    scope = r.scope;
    model = replay->name;
    description = replay_summary(*replay, r.scope);
  } else if (!o.system.spec.empty()) {
    const auto system = core::load_system(o.system.request());
    ctx.err << system->warnings();
    core::Session session(*system, session_options(*system, o.choices, o.machine, o.wg, o.method), store);
    core::CellRequest request;
    request.paradigm = "analytic[LogGP]";
    request.reuse = false;  // asked for: evaluate it (its wall time is part of the answer)
    cell = session.evaluate(request);
    model = system->graph()->model;
    description = describe(cell, model) + "\n";
  } else {
    if (!o.choices.machine.empty() || !o.choices.processor.empty() || !o.system.sets.empty())
      throw core::UsageError("--machine",
                             "--machine, --processor and --set choose a PSL model's components; "
                             "a GOAL file or a collective runs on -L -o -g -G -O -S");
    core::ScheduleRequest request;
    request.goal = o.goal;
    request.collective = o.collective;
    request.paradigm = "analytic[LogGP]";
    request.method = o.method;
    request.machine = core::command_line_machine(o.machine.overrides);
    request.cpus_given = o.machine.overrides.cpus.has_value();
    request.nics_given = o.machine.overrides.nics.has_value();
    cell = core::evaluate_schedule(request, store);
    ctx.err << cell.warnings;
    model = o.goal.empty() ? "collective:" + o.collective.operation : "goal:" + o.goal;
  }
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
  add_system_options(cmd, o->system, false);
  add_choice_options(cmd, o->choices);
  add_machine_options(cmd, o->machine);
  add_memory_limit_option(cmd);
  add_wg_option(cmd, o->wg);
  add_method_option(cmd, o->method);
  cmd->add_option("--goal", o->goal, "GOAL schedule (LogGOPSim text format): its critical path");
  add_collective_options(cmd, o->collective, "Analyze");
  add_format_option(cmd, o->format, {"table", "json"});
  add_trace_options(cmd, o->trace, true);
  add_store_options(cmd, o->store);
  cmd->add_option("--timeout", o->timeout_seconds,
                  "Seconds the command may run; past them it stops with exit 3 (0: no limit, the default)")
      ->check(CLI::Range(0.0, 1e7));
  cmd->callback([o, cmd, &ctx] {
    finish_machine_options(cmd, o->machine);
    const CommandDeadline deadline(o->timeout_seconds, "poems analyze");
    run_analyze(*o, ctx);
  });
}

}  // namespace poems::cli
