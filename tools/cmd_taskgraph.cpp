// `poems taskgraph SPEC --stats`: instantiate a model's task graph and count it.
#include <chrono>
#include <iostream>

#include "cli_common.h"
#include "loaded_model.h"
#include "machine_model.h"
#include "nlohmann/json.hpp"
#include "poems/psl/units.h"
#include "poems/taskgraph/dot.h"
#include "poems/taskgraph/dtg.h"
#include "poems/taskgraph/goal.h"

#include <fstream>

namespace poems::cli {

void register_taskgraph(CLI::App& app, int& result) {
  struct Options {
    std::string spec, model, format = "table";
    std::vector<std::string> sets;
    std::string dot, goal, wg = "1ns", machine, processor;
    bool stats = false, dynamic = false;
  };
  auto opts = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("taskgraph", "Instantiate a model's task graph for a binding and report on it");
  cmd->add_option("spec", opts->spec, "PSL specification")->required()->check(CLI::ExistingFile);
  cmd->add_option("--model", opts->model, "Model (default: the only one)");
  cmd->add_option("--set", opts->sets, "Bind a parameter: name=value (units allowed), repeatable");
  cmd->add_flag("--stats", opts->stats, "Count processes, tasks, messages and bytes of the whole run");
  cmd->add_option("--format", opts->format, "Output format")->check(CLI::IsMember({"table", "json"}));
  cmd->add_option("--dot", opts->dot, "Write the static task graph (or with --dynamic the instantiated one) as DOT");
  cmd->add_flag("--dynamic", opts->dynamic, "With --dot: draw the dynamic task graph (small bindings only)");
  cmd->add_option("--goal", opts->goal, "Write the instantiated task graph as a GOAL schedule (LogGOPSim's format)");
  cmd->add_option("--wg", opts->wg,
                  "Compute time per unit of work for calc durations (--goal, --dot); default: Wg of the "
                  "specification's hardware[processor] component, else 1ns");
  cmd->add_option("--machine", opts->machine, "hardware[network] component the processor goes with (--goal)");
  cmd->add_option("--processor", opts->processor, "hardware[processor] component whose Wg times calcs (--goal)");
  cmd->callback([opts, cmd, &result] {
    auto binding = parse_bindings(opts->sets);
    std::string wg_error;
    auto wg = psl::parse_quantity(opts->wg, &wg_error);
    if (!wg || !(wg->dimension == psl::kTime || wg->dimension.dimensionless()) || wg->value < 0)
      throw CLI::ValidationError("--wg", wg ? "expected a time per unit of work, e.g. 60ns" : wg_error);
    taskgraph::InstantiateOptions inst;
    inst.ns_per_work = wg->value;
    LoadedModel loaded;
    if (!load_model(opts->spec, opts->model, loaded, result)) return;
    // Without --wg, calcs take the bound machine's Wg, as `poems simulate SPEC` does.
    if (cmd->count("--wg") == 0) {
      bool has_processor = false;
      for (const psl::Module& m : loaded.frontend->program().modules)
        for (const psl::ComponentDecl& c : m.components)
          has_processor = has_processor || (c.domain.head == "hardware" && c.domain.path == "processor");
      if (has_processor) {
        try {
          std::map<std::string, double> overrides;
          for (const auto& [name, value] : binding)
            if (name.find('.') != std::string::npos) overrides[name] = value;
          inst.ns_per_work =
              resolve_machine(loaded.frontend->program(), opts->machine, opts->processor, overrides).wg_ns;
        } catch (const std::runtime_error& e) {
          std::cerr << "poems: error: " << e.what() << '\n';
          result = kExitInputError;
          return;
        }
      }
    }
    try {
      if (!opts->dot.empty()) {
        std::ofstream out(opts->dot);
        if (!out) throw std::runtime_error("cannot write '" + opts->dot + "'");
        if (opts->dynamic) {
          taskgraph::ModelSchedule drawn(loaded.graph, binding, inst);
          taskgraph::write_dynamic_dot(drawn, out);
        } else {
          taskgraph::write_static_dot(*loaded.graph, out);
        }
        std::cerr << "wrote " << opts->dot << '\n';
      }
      if (!opts->goal.empty()) {
        std::ofstream out(opts->goal);
        if (!out) throw std::runtime_error("cannot write '" + opts->goal + "'");
        taskgraph::ModelSchedule exported(loaded.graph, binding, inst);
        const taskgraph::GoalWriteStats stats = taskgraph::write_goal(out, exported);
        std::cerr << "wrote " << opts->goal << " (calcs at Wg=" << inst.ns_per_work << "ns";
        if (stats.rounded_calcs) std::cerr << "; " << stats.rounded_calcs << " calc durations rounded to whole ns";
        if (stats.folded_messages)
          std::cerr << "; " << stats.folded_messages
                    << " sends and receives with their communicator folded into the tag";
        std::cerr << ")\n";
      }
      if (!opts->stats && (!opts->dot.empty() || !opts->goal.empty())) {
        result = kExitOk;
        return;
      }
      taskgraph::ModelSchedule schedule(loaded.graph, binding, {});
      auto t0 = std::chrono::steady_clock::now();
      taskgraph::GraphStatistics st = taskgraph::collect_statistics(schedule);
      double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (opts->format == "json") {
        nlohmann::json j = {{"model", loaded.graph->model},
                            {"processes", st.processes},
                            {"tasks", st.tasks},
                            {"p2p_messages", st.p2p_messages},
                            {"p2p_bytes", st.p2p_bytes},
                            {"collectives", st.collectives},
                            {"collective_messages", st.collective_messages},
                            {"collective_bytes", st.collective_bytes},
                            {"operations", st.operations},
                            {"traversal_seconds", seconds}};
        std::cout << j.dump(2) << '\n';
      } else {
        std::cout << "model                " << loaded.graph->model << "\n"
                  << "processes            " << st.processes << "\n"
                  << "tasks                " << st.tasks << "\n"
                  << "p2p_messages         " << st.p2p_messages << "\n"
                  << "p2p_bytes            " << st.p2p_bytes << "\n"
                  << "collectives          " << st.collectives << "\n"
                  << "collective_messages  " << st.collective_messages << "\n"
                  << "operations           " << st.operations << "\n";
      }
      result = kExitOk;
    } catch (const taskgraph::InstantiationError& e) {
      std::cerr << "poems: error: " << e.what() << '\n';
      result = kExitInputError;
    } catch (const std::length_error& e) {
      std::cerr << "poems: error: " << e.what() << '\n';
      result = kExitUsage;
    } catch (const std::runtime_error& e) {
      std::cerr << "poems: error: " << e.what() << '\n';
      result = kExitInputError;
    }
  });
}

}  // namespace poems::cli
