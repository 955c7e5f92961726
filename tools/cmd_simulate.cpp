// `poems simulate`: the discrete-event MPI simulator on a GOAL schedule or a
// single collective (and, once connected, a PSL specification).
#include <openssl/evp.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli_common.h"
#include "loaded_model.h"
#include "machine_model.h"
#include "model_source.h"
#include "poems/db/run_key.h"
#include "poems/taskgraph/limits.h"
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
  bool cpus_given = false, nics_given = false;
  std::string semantics = "matched";
  std::string memory_limit;
  std::string format = "table";
  std::string timeline;
  std::size_t max_ranks_listed = 1024;
  TraceReplayRequest trace;  // --trace ARCHIVE (cmd_trace.cpp)
};

// SHA-256 of a file's bytes, read in blocks (a GOAL file may be larger than
// what a run should hold in memory).
std::string file_sha256(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr);
  std::vector<char> block(1 << 20);
  while (in) {
    in.read(block.data(), static_cast<std::streamsize>(block.size()));
    EVP_DigestUpdate(ctx, block.data(), static_cast<std::size_t>(in.gcount()));
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_DigestFinal_ex(ctx, digest, &length);
  EVP_MD_CTX_free(ctx);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) hex += {kHex[digest[i] >> 4], kHex[digest[i] & 15]};
  return hex;
}

// Returns nullptr (with `result` set) if the file cannot be read or parsed;
// `text_hash` gets the SHA-256 of the file. The text is not kept
// (taskgraph::read_goal_file).
std::unique_ptr<taskgraph::ExplicitSchedule> goal_source(const std::string& path, const sim::SimulationOptions& options,
                                                         int& result, std::string& text_hash) {
  psl::SourceManager sources;
  psl::DiagnosticEngine diags(sources);
  std::string io_error;
  auto schedule =
      taskgraph::read_goal_file(path, sources, diags, {options.memory_limit, sim::memory_per_rank(options)}, io_error);
  if (!io_error.empty()) {
    std::cerr << "poems: error: " << io_error << "\n";
    result = kExitInputError;
    return nullptr;
  }
  if (!schedule || diags.warning_count() > 0) diags.print(std::cerr);
  if (!schedule) {
    result = kExitInputError;
    return nullptr;
  }
  text_hash = file_sha256(path);
  return schedule;
}

// A limit error about a GOAL operation, as the reader reports its errors:
// file:line:col: error: ..., the line and a caret.
void print_located(const taskgraph::NodeInfo& node, const std::string& message) {
  const auto col_at = node.location.rfind(':'), line_at = node.location.rfind(':', col_at - 1);
  std::cerr << node.location << ": error: " << node.label << ": " << message << "\n";
  if (col_at == std::string::npos || line_at == std::string::npos) return;
  const unsigned long line = std::stoul(node.location.substr(line_at + 1, col_at - line_at - 1));
  const unsigned long column = std::stoul(node.location.substr(col_at + 1));
  std::ifstream in(node.location.substr(0, line_at));
  std::string text;
  for (unsigned long i = 0; i < line && std::getline(in, text); ++i) {
  }
  if (!in) return;
  std::cerr << text << "\n" << std::string(column > 0 ? column - 1 : 0, ' ') << "^\n";
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
  // Only when not the matched semantics, so earlier runs' keys still match.
  if (options.semantics != sim::Semantics::Matched) key.binding["semantics"] = sim::semantics_name(options.semantics);
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
  if (!o.trace.trace.empty() && o.semantics != "matched")
    throw CLI::ValidationError("--semantics", "a trace replay takes the matched semantics only, for now");
  if (!o.trace.trace.empty())
    return simulate_trace(o, o.trace, {o.cpus, o.nics, o.format, o.timeline, o.max_ranks_listed, o.store}, result);
  reject_replay_options_without_trace(o.trace);
  sim::SimulationOptions options = command_line_machine(o);
  options.cpus = o.cpus;
  options.nics = o.nics;
  options.record_timeline = !o.timeline.empty();
  options.semantics = *sim::parse_semantics(o.semantics);
  if (options.semantics == sim::Semantics::Loggopsim && o.handshake)
    throw CLI::ValidationError("--rendezvous-handshake",
                               "is a rule of the matched semantics; LogGOPSim's rendezvous has no handshake");
  if (!o.memory_limit.empty()) {
    const double bytes =
        quantity("--memory-limit", o.memory_limit, psl::kBytes, "a size in 1..1.8e19 bytes, e.g. 32GiB");
    if (!(bytes >= 1 && bytes < 1.8e19))
      usage_error("--memory-limit", "'" + o.memory_limit + "' is out of range; expected a size in 1..1.8e19 bytes");
    options.memory_limit = static_cast<std::uint64_t>(bytes);
  }
  // One limit for the whole command: this option or the global `poems --memory-limit`
  // (which the PSL instantiation reads, docs/limits.md).
  auto& instantiation_limit = taskgraph::default_instantiation_limits().memory_limit_bytes;
  if (options.memory_limit != 0)
    instantiation_limit = options.memory_limit;
  else
    options.memory_limit = instantiation_limit;

  std::unique_ptr<taskgraph::ScheduleSource> source;
  std::unique_ptr<PslSource> model;
  std::string goal_hash;
  if (!o.spec.empty()) {
    model = psl_source(o, options, result);
    if (!model) return;
  } else if (!o.collective.empty()) {
    source = std::make_unique<taskgraph::CollectiveSchedule>(collective_call(o));
  } else {
    auto goal = goal_source(o.goal, options, result, goal_hash);
    if (!goal) return;
    // As LogGOPSim: as many CPUs and NICs as the schedule names, unless given.
    if (!o.cpus_given) options.cpus = std::max<std::uint32_t>(options.cpus, goal->max_cpu() + 1);
    if (!o.nics_given) options.nics = std::max<std::uint32_t>(options.nics, goal->max_nic() + 1);
    source = std::move(goal);
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
  } catch (const sim::SimulationLimitError& e) {
    const taskgraph::NodeInfo node = otf2.source().node_info(e.node);
    if (!o.goal.empty() && !node.location.empty())
      print_located(node, e.detail);
    else
      std::cerr << "poems: error: " << e.what() << '\n';
    stored.fail(e.what());
    result = kExitInputError;
    return;
  } catch (const sim::SimulationError& e) {
    std::cerr << "poems: error: " << e.what() << '\n';
    stored.fail(e.what());
    result = kExitEvaluation;
    return;
  } catch (const taskgraph::InstantiationError& e) {  // a bad size, work or loop bound met while running
    std::cerr << "poems: error: " << e.what() << '\n';
    stored.fail(e.what());
    result = kExitInputError;
    return;
  }
  if (o.format == "json") {
    sim::write_json(std::cout, r, o.max_ranks_listed);
  } else {
    const auto& p = options.params;
    if (model) std::cout << model->description << '\n';
    std::cout << "LogGOPS L=" << sim::format_ps(p.L) << " o=" << sim::format_ps(p.o) << " g=" << sim::format_ps(p.g)
              << " G=" << sim::format_fs_per_byte(p.G) << " O=" << sim::format_fs_per_byte(p.O) << " S=" << p.S << "B, "
              << options.cpus << " CPU(s) and " << options.nics << " NIC(s) per process, "
              << sim::semantics_name(options.semantics) << " semantics\n";
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
  cmd->add_option("--cpus", o->cpus, "CPUs per process (GOAL: default the highest cpu field + 1)")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  cmd->add_option("--nics", o->nics, "NICs per process (GOAL: default the highest nic field + 1)")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  cmd->add_option("--semantics", o->semantics,
                  "Message progress: matched (a message is processed once its receive is posted) or loggopsim "
                  "(LogGOPSim exactly: processed on arrival); docs/simulator.md")
      ->check(CLI::IsMember({"matched", "loggopsim"}))
      ->capture_default_str();
  cmd->add_option("--memory-limit", o->memory_limit,
                  "Memory the run may take (bytes, e.g. 32GiB; default: what the machine has available)");
  cmd->add_option("--format", o->format, "Output format")->check(CLI::IsMember({"table", "json"}));
  cmd->add_option("--timeline", o->timeline,
                  "Write the run as a Chrome trace (ui.perfetto.dev), or as OTF2 if it ends in .otf2 (Vampir)");
  add_trace_replay_options(cmd, o->trace, true);
  add_store_options(cmd, o->store);
  cmd->add_option("--max-ranks-listed", o->max_ranks_listed, "Per-rank lines to print (and ranks in deadlock reports)")
      ->capture_default_str();
  cmd->callback([o, cmd, &result] {
    note_explicit_params(cmd, *o);
    o->cpus_given = cmd->count("--cpus") > 0;
    o->nics_given = cmd->count("--nics") > 0;
    run(*o, result);
  });
}

}  // namespace poems::cli
