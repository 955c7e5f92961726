// `poems taskgraph SPEC --stats`: instantiate a model's task graph and count it.
#include <chrono>
#include <fstream>
#include <ostream>

#include "options.h"
#include "poems/base/units.h"
#include "poems/core/error.h"
#include "poems/core/session.h"
#include "poems/core/system.h"
#include "poems/report/specification.h"
#include "poems/taskgraph/dot.h"
#include "poems/taskgraph/dtg.h"
#include "poems/taskgraph/goal.h"

namespace poems::cli {

namespace {

struct TaskgraphOptions {
  SystemOptions system;
  ChoiceOptions choices;
  std::string format, dot, goal, wg;
  bool stats = false, dynamic = false;
};

void run_taskgraph(const TaskgraphOptions& o, Context& ctx) {
  const auto system = core::load_system(o.system.request());
  ctx.err << system->warnings();
  // Calc durations matter to what is instantiated: --goal, --dot --dynamic.
  const bool timed = !o.goal.empty() || (!o.dot.empty() && o.dynamic);
  const taskgraph::InstantiateOptions inst =
      timed ? core::calc_rates(*system, session_options(*system, o.choices, {}, "", ""), o.wg)
            : taskgraph::InstantiateOptions{};
  const taskgraph::ParameterBinding& binding = system->binding();
  auto write = [&](const std::string& path, auto&& draw) {
    std::ofstream out(path);
    if (!out) throw core::UsageError("", "cannot write '" + path + "'");
    const std::string note = draw(out);
    ctx.err << "wrote " << path << note << '\n';
  };
  try {
    if (!o.dot.empty())
      write(o.dot, [&](std::ostream& out) {
        if (!o.dynamic) {
          taskgraph::write_static_dot(*system->graph(), out);
          return std::string();
        }
        taskgraph::ModelSchedule drawn(system->graph(), binding, inst);
        taskgraph::write_dynamic_dot(drawn, out);
        return std::string();
      });
    if (!o.goal.empty())
      write(o.goal, [&](std::ostream& out) {
        taskgraph::ModelSchedule exported(system->graph(), binding, inst);
        const taskgraph::GoalWriteStats stats = taskgraph::write_goal(out, exported);
        std::string note = " (calcs at Wg=" + base::format_quantity({inst.ns_per_work, base::kTime});
        if (stats.rounded_calcs)
          note += "; " + std::to_string(stats.rounded_calcs) + " calc durations rounded to whole ns";
        if (stats.folded_messages)
          note += "; " + std::to_string(stats.folded_messages) +
                  " sends and receives with their communicator folded into the tag";
        return note + ")";
      });
    if (!o.stats && (!o.dot.empty() || !o.goal.empty())) return;
    taskgraph::ModelSchedule schedule(system->graph(), binding, {});
    const auto t0 = std::chrono::steady_clock::now();
    const taskgraph::GraphStatistics st = taskgraph::collect_statistics(schedule);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    report::write_graph_statistics(system->graph()->model, st, seconds, o.format, ctx.out);
  } catch (const taskgraph::InstantiationError& e) {
    throw core::InputError(e.what());
  } catch (const std::length_error& e) {  // a drawing too large for DOT
    throw core::UsageError("--dot", e.what());
  }
}

}  // namespace

void register_taskgraph(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<TaskgraphOptions>();
  CLI::App* cmd = app.add_subcommand("taskgraph", "Instantiate a model's task graph for a binding and report on it");
  add_system_options(cmd, o->system);
  add_choice_options(cmd, o->choices);
  cmd->add_flag("--stats", o->stats, "Count processes, tasks, messages and bytes of the whole run");
  add_format_option(cmd, o->format, {"table", "json"});
  cmd->add_option("--dot", o->dot, "Write the static task graph (or with --dynamic the instantiated one) as DOT");
  cmd->add_flag("--dynamic", o->dynamic, "With --dot: draw the dynamic task graph (small bindings only)");
  cmd->add_option("--goal", o->goal, "Write the instantiated task graph as a GOAL schedule (LogGOPSim's format)");
  cmd->add_option("--wg", o->wg,
                  "Compute time per unit of work for calc durations (--goal, --dot); default: the processors' "
                  "rates, as poems simulate takes them, else 1ns");
  cmd->callback([o, &ctx] { run_taskgraph(*o, ctx); });
}

}  // namespace poems::cli
