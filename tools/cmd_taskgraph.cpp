// `poems taskgraph SPEC --stats`: instantiate a model's task graph and count it.
#include <chrono>
#include <fstream>
#include <ostream>

#include "options.h"
#include "poems/core/error.h"
#include "poems/core/system.h"
#include "poems/taskgraph/dot.h"
#include "poems/taskgraph/dtg.h"
#include "poems/taskgraph/goal.h"

namespace poems::cli {

namespace {

struct TaskgraphOptions {
  SystemOptions system;
  std::string format, dot, goal, wg = "1ns";
  bool stats = false, dynamic = false;
};

void run_taskgraph(const TaskgraphOptions& o, Context& ctx) {
  const auto system = core::load_system(o.system.request());
  ctx.err << system->warnings();
  const double wg = core::quantity("--wg", o.wg, base::kTime, "a time per unit of work, e.g. 60ns");
  if (wg < 0) throw core::UsageError("--wg", "'" + o.wg + "' is negative; expected a time per unit of work");
  taskgraph::InstantiateOptions inst;
  inst.ns_per_work = wg;
  const taskgraph::ParameterBinding& binding = system->binding();
  auto write = [&](const std::string& path, auto&& draw) {
    std::ofstream out(path);
    if (!out) throw core::UsageError("", "cannot write '" + path + "'");
    draw(out);
    ctx.err << "wrote " << path << '\n';
  };
  try {
    if (!o.dot.empty())
      write(o.dot, [&](std::ostream& out) {
        if (!o.dynamic) return taskgraph::write_static_dot(*system->graph(), out);
        taskgraph::ModelSchedule drawn(system->graph(), binding, inst);
        taskgraph::write_dynamic_dot(drawn, out);
      });
    if (!o.goal.empty())
      write(o.goal, [&](std::ostream& out) {
        taskgraph::ModelSchedule exported(system->graph(), binding, inst);
        taskgraph::write_goal(out, exported);
      });
    if (!o.stats && (!o.dot.empty() || !o.goal.empty())) return;
    taskgraph::ModelSchedule schedule(system->graph(), binding, {});
    const auto t0 = std::chrono::steady_clock::now();
    const taskgraph::GraphStatistics st = taskgraph::collect_statistics(schedule);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (o.format == "json") {
      ctx.out << nlohmann::json{{"model", system->graph()->model},
                                {"processes", st.processes},
                                {"tasks", st.tasks},
                                {"p2p_messages", st.p2p_messages},
                                {"p2p_bytes", st.p2p_bytes},
                                {"collectives", st.collectives},
                                {"collective_messages", st.collective_messages},
                                {"collective_bytes", st.collective_bytes},
                                {"operations", st.operations},
                                {"traversal_seconds", seconds}}
                     .dump(2)
              << '\n';
      return;
    }
    ctx.out << "model                " << system->graph()->model << "\n"
            << "processes            " << st.processes << "\n"
            << "tasks                " << st.tasks << "\n"
            << "p2p_messages         " << st.p2p_messages << "\n"
            << "p2p_bytes            " << st.p2p_bytes << "\n"
            << "collectives          " << st.collectives << "\n"
            << "collective_messages  " << st.collective_messages << "\n"
            << "operations           " << st.operations << "\n";
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
  cmd->add_flag("--stats", o->stats, "Count processes, tasks, messages and bytes of the whole run");
  add_format_option(cmd, o->format, {"table", "json"});
  cmd->add_option("--dot", o->dot, "Write the static task graph (or with --dynamic the instantiated one) as DOT");
  cmd->add_flag("--dynamic", o->dynamic, "With --dot: draw the dynamic task graph (small bindings only)");
  cmd->add_option("--goal", o->goal, "Write the instantiated task graph as a GOAL schedule (LogGOPSim's format)");
  cmd->add_option("--wg", o->wg, "Compute time per unit of work for calc durations (--goal, --dot)")
      ->capture_default_str();
  cmd->callback([o, &ctx] { run_taskgraph(*o, ctx); });
}

}  // namespace poems::cli
