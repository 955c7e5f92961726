// What `poems simulate` and `poems analyze` evaluate (core/evaluation_input.h):
// SPEC, --goal, --collective or --trace, the machine they run on and the
// knowledge base (what both print of it: report/evaluation.h).
#pragma once

#include <functional>
#include <string>
#include <utility>

#include "command_deadline.h"
#include "options.h"
#include "poems/core/evaluation_input.h"

namespace poems::cli {

struct InputOptions {
  SystemOptions system;
  ChoiceOptions choices;
  MachineOptions machine;
  core::CollectiveRequest collective;
  core::StoreOptions store;
  TraceOptions trace;
  std::string wg, goal;
  double timeout_seconds = 0;  // --timeout: the command's deadline

  // The core's request: `command` names its usage error, `method` is --method.
  core::InputRequest request(const std::string& command, const std::string& paradigm, const std::string& method) const {
    core::InputRequest r;
    r.command = command;
    r.system = system.request();
    r.goal = goal;
    r.collective = collective;
    r.trace = trace.request(choices, machine, wg);
    r.session.choices.machine = choices.machine;
    r.session.choices.processor = choices.processor;
    r.session.machine = machine.overrides;
    if (!wg.empty()) r.session.wg = wg;
    r.session.method = method;
    r.cell.paradigm = paradigm;
    r.cell.reuse = false;  // asked for: evaluate it (a simulation's per-rank table, an evaluation's wall time)
    r.store = store;
    return r;
  }
};

// The options both commands take first: SPEC (optional), --import ...,
// --machine, --processor, -L ..., --memory-limit, --wg. Each adds --goal,
// --collective, the replay's options and --db where its help lists them.
inline void add_input_options(CLI::App* cmd, InputOptions& o) {
  add_system_options(cmd, o.system, false);
  add_choice_options(cmd, o.choices);
  add_machine_options(cmd, o.machine);
  add_memory_limit_option(cmd);
  add_wg_option(cmd, o.wg);
}

// --db, --no-store and --timeout, the last options of both commands, and
// the command's callback: `run`, once the machine options are known, under
// the deadline of --timeout.
inline void add_input_callback(CLI::App* cmd, InputOptions& o, const std::string& command, std::function<void()> run) {
  add_store_options(cmd, o.store);
  cmd->add_option("--timeout", o.timeout_seconds,
                  "Seconds the command may run; past them it stops with exit 3 (0: no limit, the default)")
      ->check(CLI::Range(0.0, 1e7));
  cmd->callback([cmd, &o, command, run = std::move(run)] {
    finish_machine_options(cmd, o.machine);
    const CommandDeadline deadline(o.timeout_seconds, command);
    run();
  });
}

// The model's or the trace's warnings, on err.
inline void report_input_warnings(const core::EvaluationInput& input, const Context& ctx) {
  if (const core::Replay* replay = input.replay())
    for (const std::string& w : replay->trace.warnings) ctx.warn(replay->trace.path + ": " + w);
  if (const core::System* system = input.system()) ctx.err << system->warnings();
}

}  // namespace poems::cli
