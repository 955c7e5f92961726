#include "poems/report/evaluation.h"

#include <cstdio>
#include <optional>
#include <ostream>
#include <sstream>

#include "poems/base/units.h"
#include "poems/report/text_table.h"
#include "poems/sim/report.h"

namespace poems::report {

std::string describe(const core::Cell& cell, const std::string& model) {
  const core::Evaluation& e = cell.evaluation;
  std::string text = "model " + model + " (" + std::to_string(cell.outcome.processes) + " processes) on " +
                     (e.machine.network.empty() ? std::string("command-line parameters") : e.machine.network);
  if (!cell.compute.empty())
    text += ", Wg=" + base::format_quantity({e.ns_per_work, base::kTime}) +
            (cell.processors.empty() ? std::string() : " from " + cell.processors.front());
  return text;
}

std::string describe_machine(const core::Machine& m) {
  return "LogGOPS " + core::loggops_text(m.params) + ", " + std::to_string(m.cpus) + " CPU(s) and " +
         std::to_string(m.nics) + " NIC(s) per " + (m.flat() ? "process" : "node") + ", " +
         sim::semantics_name(m.semantics) + " semantics" + (m.flat() ? "" : "; " + m.network_model->describe()) +
         (m.noisy() ? "; " + m.noise->describe() : "");
}

std::string replay_summary(const core::Replay& r, const trace::ReplayScope& scope) {
  std::string s = "trace " + r.trace.path + " (" + std::to_string(r.trace.ranks.size()) + " ranks" +
                  (r.options.cpu_time ? ", computation as CPU time" : "") +
                  (r.trace.creator.empty() ? "" : ", recorded by " + r.trace.creator) + ")\n";
  s += "  " + (r.options.window.whole() ? std::string("the whole run") : "window " + r.options.window.text()) + ": " +
       with_commas(scope.calls) + " MPI calls, " + with_commas(scope.messages) + " messages, " +
       with_commas(scope.collectives) + " collectives";
  if (scope.messages_cut + scope.collectives_cut > 0)
    s += " (cut by the window: " + with_commas(scope.messages_cut) + " messages, " +
         with_commas(scope.collectives_cut) + " collectives)";
  s += "\n  computation " + r.scale + "\n  machine " + r.machine_source + "\n";
  return s;
}

std::string describe_input(const core::EvaluationInput& input, const core::Cell& cell) {
  if (const core::Replay* replay = input.replay()) return replay_summary(*replay, input.scope());
  if (input.system()) return describe(cell, input.model()) + "\n";
  return "";
}

bool write_record(const core::Cell& cell, std::ostream& err, bool quiet) {
  if (!cell.store_error.empty()) {
    err << "poems: error: " << cell.store_error << '\n';
    return false;
  }
  if (quiet) return true;
  switch (cell.record) {
    case core::RunRecord::State::Stored:
      err << "stored as run " << cell.run_id << " in " << cell.store_path << '\n';
      break;
    case core::RunRecord::State::AlreadyStored:
      err << "the same run is already stored as run " << cell.run_id << " in " << cell.store_path << '\n';
      break;
    case core::RunRecord::State::Busy:
      err << "another process is evaluating the same run (" << cell.run_id << "); not stored twice\n";
      break;
    case core::RunRecord::State::NotStored: break;
  }
  return true;
}

void write_analysis(const core::EvaluationInput& input, const core::Cell& cell, const std::string& format,
                    std::ostream& out) {
  const core::Outcome& r = cell.outcome;
  const core::Breakdown& b = r.breakdown;
  if (format == "json") {
    nlohmann::json j = r.extra;
    j["evaluator"] = "analytic[LogGP]";
    j["method"] = r.method;
    j["semantics"] = sim::semantics_name(cell.evaluation.machine.semantics);
    j["model"] = input.model();
    j["messages"] = r.messages;
    j["time_ns"] = b.time_ns;
    j["compute_ns"] = b.compute_ns;
    j["comm_ns"] = b.comm_ns;
    j["sync_ns"] = b.sync_ns;
    j["wall_seconds"] = cell.wall_seconds;
    out << j.dump(2) << '\n';
    return;
  }
  std::optional<trace::ReplayScope> scope;
  if (input.replay()) scope = input.scope();
  char line[256];
  out << describe_input(input, cell);
  std::snprintf(line, sizeof line, "analytic[LogGP] %s (%s semantics): time %.3f ns", r.method.c_str(),
                sim::semantics_name(cell.evaluation.machine.semantics), b.time_ns);
  out << line;
  if (scope) std::snprintf(line, sizeof line, " (traced %.3f ns)", static_cast<double>(scope->measured) / 1000.0);
  out << (scope ? line : "") << '\n';
  std::snprintf(line, sizeof line,
                "  compute %.3f ns, comm %.3f ns, sync %.3f ns (per-process means; sync is the rest)\n", b.compute_ns,
                b.comm_ns, b.sync_ns);
  out << line;
  std::snprintf(line, sizeof line, "  evaluated in %.6f s\n", cell.wall_seconds);
  out << line;
}

void write_simulation(const core::EvaluationInput& input, const core::Cell& cell, const std::string& format,
                      std::size_t max_ranks_listed, std::ostream& out) {
  const core::Replay* replay = input.replay();
  const trace::ReplayScope& scope = input.scope();
  const sim::SimulationResult& r = *cell.outcome.simulation;
  const nlohmann::json& extra = cell.outcome.extra;
  if (format == "json") {
    if (!replay) {
      sim::write_json(out, r, max_ranks_listed);
      return;
    }
    std::ostringstream text;
    sim::write_json(text, r, max_ranks_listed);
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
    out << j.dump(1) << '\n';
    return;
  }
  out << describe_input(input, cell) << describe_machine(cell.evaluation.machine) << '\n';
  sim::write_table(out, r, max_ranks_listed);
  if (replay && cell.ok()) {
    char line[160];
    std::snprintf(line, sizeof line, "traced %.6f s, replayed %.6f s: %+.2f %%\n",
                  static_cast<double>(scope.measured) / 1e12, static_cast<double>(r.max_finish) / 1e12,
                  extra.value("difference_pct", 0.0));
    out << line;
  }
}

}  // namespace poems::report
