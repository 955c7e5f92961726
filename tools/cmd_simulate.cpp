// `poems simulate`: the discrete-event MPI simulator on a GOAL schedule or a
// single collective (and, once connected, a PSL specification).
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli_common.h"
#include "loaded_model.h"
#include "machine_model.h"
#include "model_source.h"
#include "poems/db/run_key.h"
#include "result_store.h"
#include "trace_options.h"

#include <filesystem>
#include "poems/psl/diagnostics.h"
#include "poems/psl/units.h"
#include "poems/recommender/stored_results.h"
#include "poems/sim/report.h"
#include "poems/sim/simulator.h"
#include "poems/taskgraph/dtg.h"
#include "poems/taskgraph/explicit_schedule.h"
#include "poems/taskgraph/goal.h"

namespace poems::cli {

namespace {

struct SimulateOptions : ModelRequest, CollectiveRequest {
  StoreOptions store;
  std::string goal;
  std::uint32_t cpus = 1, nics = 1;
  std::string format = "table";
  std::string timeline;
  std::size_t max_ranks_listed = 1024;
  TraceReplayRequest trace;  // --trace ARCHIVE (cmd_trace.cpp)
};

// Returns nullptr (with `result` set) if the file cannot be read or parsed;
// `text_hash` gets the SHA-256 of the text parsed, which is then released.
std::unique_ptr<taskgraph::ScheduleSource> goal_source(const std::string& path, int& result, std::string& text_hash) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::cerr << "poems: error: cannot read '" << path << "'\n";
    result = kExitInputError;
    return nullptr;
  }
  std::stringstream text;
  text << in.rdbuf();
  psl::SourceManager sources;
  psl::FileId file = sources.add(path, std::move(text).str());
  text_hash = db::sha256_hex(sources.text(file));
  psl::DiagnosticEngine diags(sources);
  auto schedule = taskgraph::parse_goal(sources, file, diags);
  if (!schedule) {
    diags.print(std::cerr);
    result = kExitInputError;
  }
  return schedule;
}

// Everything a simulated time depends on: the input, the machine, the binding.
EvaluationKey evaluation_key(const SimulateOptions& o, const sim::SimulationOptions& options, const PslSource* model,
                             const std::string& goal_hash) {
  nlohmann::json machine = machine_json(options);
  machine["cpus"] = options.cpus;
  machine["nics"] = options.nics;
  EvaluationKey key;
  key.evaluator = "simulation[MPI-Sim]";
  key.binding = {{"machine", machine}};
  if (model) {
    const taskgraph::StaticTaskGraph& g = *model->loaded.graph;
    nlohmann::json params = nlohmann::json::object();
    for (std::size_t i = 0; i < g.params.size(); ++i) params[g.params[i]] = model->schedule->model_values()[i];
    key.model = g.model;
    key.spec_hash = specification_hash(model->loaded.frontend->sources());
    key.binding["parameters"] = params;
    key.binding["wg_ns"] = model->wg_ns;
  } else if (!o.goal.empty()) {
    key.model = "goal:" + std::filesystem::path(o.goal).filename().string();
    key.spec_hash = goal_hash;
  } else {
    key.model = "collective:" + o.collective;
    key.binding["collective"] = {{"operation", o.collective},
                                 {"algorithm", o.algorithm},
                                 {"procs", o.procs},
                                 {"size", o.size},
                                 {"root", o.root}};
  }
  return key;
}

// The stored form: the finish time, and the per-rank means of the breakdown.
db::Result to_db_result(const sim::SimulationResult& r) { return recommender::simulation_record(r); }

void run(const SimulateOptions& o, int& result) {
  const int sources_given = !o.spec.empty() + !o.goal.empty() + !o.collective.empty() + !o.trace.trace.empty();
  if (sources_given != 1)
    throw CLI::ValidationError("simulate",
                               "give exactly one of SPEC, --goal FILE, --collective NAME or --trace ARCHIVE");
  if (!o.trace.trace.empty())
    return simulate_trace(o, o.trace, {o.cpus, o.nics, o.format, o.timeline, o.max_ranks_listed, o.store}, result);
  reject_replay_options_without_trace(o.trace);
  sim::SimulationOptions options = command_line_machine(o);
  options.cpus = o.cpus;
  options.nics = o.nics;
  options.record_timeline = !o.timeline.empty();

  std::unique_ptr<taskgraph::ScheduleSource> source;
  std::unique_ptr<PslSource> model;
  std::string goal_hash;
  if (!o.spec.empty()) {
    model = psl_source(o, options, result);
    if (!model) return;
  } else if (!o.collective.empty()) {
    source = std::make_unique<taskgraph::CollectiveSchedule>(collective_call(o));
  } else {
    source = goal_source(o.goal, result, goal_hash);
    if (!source) return;
  }
  taskgraph::ScheduleSource& input = model ? static_cast<taskgraph::ScheduleSource&>(*model->schedule) : *source;

  // --timeline FILE.otf2: the run as an OTF2 archive (cmd_trace.cpp).
  OtfTimelineOutput otf2(o.timeline, input, !o.goal.empty(), options);
  if (!otf2.problem().empty()) {
    std::cerr << "poems: error: " << otf2.problem() << '\n';
    result = kExitInputError;
    return;
  }
  StoredEvaluation stored(o.store, evaluation_key(o, options, model.get(), goal_hash));
  sim::SimulationResult r;
  try {
    r = sim::simulate(otf2.source(), options, o.max_ranks_listed);
  } catch (const sim::SimulationError& e) {
    std::cerr << "poems: error: " << e.what() << '\n';
    stored.fail(e.what());
    result = kExitEvaluation;
    return;
  }
  if (o.format == "json") {
    sim::write_json(std::cout, r, o.max_ranks_listed);
  } else {
    const auto& p = options.params;
    if (model) std::cout << model->description << '\n';
    std::cout << "LogGOPS L=" << sim::format_ps(p.L) << " o=" << sim::format_ps(p.o) << " g=" << sim::format_ps(p.g)
              << " G=" << sim::format_fs_per_byte(p.G) << " O=" << sim::format_fs_per_byte(p.O) << " S=" << p.S << "B, "
              << options.cpus << " CPU(s) and " << options.nics << " NIC(s) per process\n";
    sim::write_table(std::cout, r, o.max_ranks_listed);
  }
  if (otf2.active()) {
    if (!otf2.write(r, options.cpus)) {
      result = kExitInputError;
      return;
    }
  } else if (!o.timeline.empty()) {
    std::ofstream out(o.timeline);
    if (!out) {
      std::cerr << "poems: error: cannot write '" << o.timeline << "'\n";
      result = kExitInputError;
      return;
    }
    sim::write_chrome_trace(out, r);
    std::cerr << "wrote " << o.timeline << " (" << r.timeline.size() << " intervals)\n";
  }
  if (!r.completed) {
    sim::write_stuck_report(std::cerr, r);
    stored.fail("deadlock or unmatched messages");
    result = kExitEvaluation;
    return;
  }
  result = stored.finish(to_db_result(r)) ? kExitOk : kExitEvaluation;
}

}  // namespace

void register_simulate(CLI::App& app, int& result) {
  auto o = std::make_shared<SimulateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "simulate", "Simulate MPI processes in the LogGOPS model (discrete events, full MPI matching)");
  add_model_options(cmd, *o, "simulate");
  cmd->add_option("--goal", o->goal, "GOAL schedule (LogGOPSim text format; times in ns)");
  add_collective_options(cmd, *o, "Simulate");
  cmd->add_option("--cpus", o->cpus, "CPUs per process")->check(CLI::Range(1, 256))->capture_default_str();
  cmd->add_option("--nics", o->nics, "NICs per process")->check(CLI::Range(1, 256))->capture_default_str();
  cmd->add_option("--format", o->format, "Output format")->check(CLI::IsMember({"table", "json"}));
  cmd->add_option("--timeline", o->timeline,
                  "Write the run as a Chrome trace (ui.perfetto.dev), or as OTF2 if it ends in .otf2 (Vampir)");
  add_trace_replay_options(cmd, o->trace, true);
  add_store_options(cmd, o->store);
  cmd->add_option("--max-ranks-listed", o->max_ranks_listed, "Per-rank lines to print (and ranks in deadlock reports)")
      ->capture_default_str();
  cmd->callback([o, cmd, &result] {
    note_explicit_params(cmd, *o);
    run(*o, result);
  });
}

}  // namespace poems::cli
