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

#include <filesystem>
#include "poems/psl/diagnostics.h"
#include "poems/psl/units.h"
#include "poems/sim/report.h"
#include "poems/sim/simulator.h"
#include "poems/taskgraph/dtg.h"
#include "poems/taskgraph/explicit_schedule.h"
#include "poems/taskgraph/goal.h"

namespace poems::cli {

namespace {

struct SimulateOptions : ModelRequest {
  StoreOptions store;
  std::string goal;
  std::string collective, algorithm;
  std::string procs, size, root = "0";
  std::string L = "2500", o = "1500", g = "1000", G = "6", O = "0", S = "65535";
  std::uint32_t cpus = 1, nics = 1;
  bool handshake = false;
  std::string format = "table";
  std::string timeline;
  std::size_t max_ranks_listed = 1024;
};

sim::Picoseconds time_param(const std::string& option, const std::string& text) {
  const char* range = "a time in 0..1e12 ns (e.g. 2500, 5.3us)";
  double ns = quantity(option, text, psl::kTime, range);
  auto ps = sim::ns_to_ps(ns);
  if (!ps || ns > 1e12) usage_error(option, "'" + text + "' is out of range; expected " + range);
  return *ps;
}

sim::FemtosecondsPerByte per_byte_param(const std::string& option, const std::string& text) {
  const char* range = "a time per byte in 0..1e6 ns/B (e.g. 6, 0.04ns/B)";
  double ns = quantity(option, text, psl::kTimePerByte, range);
  auto fs = sim::ns_per_byte_to_fs(ns);
  if (!fs || ns > 1e6) usage_error(option, "'" + text + "' is out of range; expected " + range);
  return *fs;
}

std::uint64_t bytes_param(const std::string& option, const std::string& text, double max, const char* range) {
  double b = quantity(option, text, psl::kBytes, range);
  if (b < 0 || b > max || b != static_cast<double>(static_cast<std::uint64_t>(b)))
    usage_error(option, "'" + text + "' is out of range; expected " + range);
  return static_cast<std::uint64_t>(b);
}

std::uint64_t count_param(const std::string& option, const std::string& text, std::uint64_t lo, std::uint64_t hi) {
  const std::string range = "an integer in " + std::to_string(lo) + ".." + std::to_string(hi);
  double v = quantity(option, text, psl::kDimensionless, range.c_str());
  if (v < static_cast<double>(lo) || v > static_cast<double>(hi) ||
      v != static_cast<double>(static_cast<std::uint64_t>(v)))
    usage_error(option, "'" + text + "' is out of range; expected " + range);
  return static_cast<std::uint64_t>(v);
}

std::unique_ptr<taskgraph::ScheduleSource> collective_source(const SimulateOptions& o) {
  auto op = taskgraph::parse_collective_op(o.collective);
  if (!op)
    usage_error("--collective", "'" + o.collective +
                                    "' is not a collective; expected one of barrier, bcast, reduce, allreduce, gather, "
                                    "scatter, allgather, alltoall");
  auto allowed = taskgraph::algorithms_for(*op);
  std::string names;
  for (auto a : allowed) names += std::string(names.empty() ? "" : ", ") + taskgraph::collective_algorithm_name(a);
  taskgraph::CollectiveAlgorithm algorithm = allowed.front();
  if (!o.algorithm.empty()) {
    auto a = taskgraph::parse_collective_algorithm(o.algorithm);
    if (!a || std::find(allowed.begin(), allowed.end(), *a) == allowed.end())
      usage_error("--algorithm",
                  "'" + o.algorithm + "' is not an algorithm of " + o.collective + "; expected one of " + names);
    algorithm = *a;
  }
  if (o.procs.empty()) usage_error("--procs", "required with --collective; expected an integer in 1..2147483647");
  taskgraph::CollectiveCall call;
  call.op = *op;
  call.algorithm = algorithm;
  call.procs = static_cast<std::uint32_t>(count_param("--procs", o.procs, 1, 2147483647));
  call.bytes = o.size.empty() ? 0 : bytes_param("--size", o.size, 1e15, "a size in 0..1e15 bytes (e.g. 1024, 32KiB)");
  call.root = static_cast<std::uint32_t>(count_param("--root", o.root, 0, call.procs - 1));
  return std::make_unique<taskgraph::CollectiveSchedule>(call);
}

// Returns nullptr (with `result` set) if the file cannot be read or parsed.
std::unique_ptr<taskgraph::ScheduleSource> goal_source(const std::string& path, int& result) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::cerr << "poems: error: cannot read '" << path << "'\n";
    result = kExitInputError;
    return nullptr;
  }
  std::stringstream text;
  text << in.rdbuf();
  psl::SourceManager sources;
  psl::FileId file = sources.add(path, text.str());
  psl::DiagnosticEngine diags(sources);
  auto schedule = taskgraph::parse_goal(sources, file, diags);
  if (!schedule) {
    diags.print(std::cerr);
    result = kExitInputError;
  }
  return schedule;
}

// Everything a simulated time depends on: the input, the machine, the binding.
EvaluationKey evaluation_key(const SimulateOptions& o, const sim::SimulationOptions& options, const PslSource* model) {
  const sim::LogGOPS& p = options.params;
  nlohmann::json machine = {
      {"L_ps", p.L},          {"o_ps", p.o},          {"g_ps", p.g},
      {"G_fs_per_byte", p.G}, {"O_fs_per_byte", p.O}, {"S_bytes", p.S},
      {"cpus", options.cpus}, {"nics", options.nics}, {"rendezvous_handshake", options.rendezvous_handshake}};
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
    std::ifstream in(o.goal, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    key.model = "goal:" + std::filesystem::path(o.goal).filename().string();
    key.spec_hash = db::sha256_hex(text.str());
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
db::Result to_db_result(const sim::SimulationResult& r) {
  db::Result out;
  out.time_ns = static_cast<double>(r.max_finish) / 1000.0;
  const double per_rank = r.ranks > 0 ? 1000.0 * r.ranks : 1.0;
  out.compute_ns = static_cast<double>(r.total_compute) / per_rank;
  out.comm_ns = static_cast<double>(r.total_overhead) / per_rank;
  out.sync_ns = static_cast<double>(r.total_wait) / per_rank;
  out.events = static_cast<std::int64_t>(r.events);
  out.extra = {{"ranks", r.ranks},
               {"max_finish_rank", r.max_finish_rank},
               {"messages", r.messages},
               {"breakdown", "mean per rank"},
               {"events_per_second", r.events_per_second()}};
  return out;
}

void run(const SimulateOptions& o, int& result) {
  const int sources_given = !o.spec.empty() + !o.goal.empty() + !o.collective.empty();
  if (sources_given != 1)
    throw CLI::ValidationError("simulate", "give exactly one of SPEC, --goal FILE or --collective NAME");
  sim::SimulationOptions options;
  options.params.L = time_param("-L", o.L);
  options.params.o = time_param("-o", o.o);
  options.params.g = time_param("-g", o.g);
  options.params.G = per_byte_param("-G", o.G);
  options.params.O = per_byte_param("-O", o.O);
  options.params.S = bytes_param("-S", o.S, 1.8e19, "a size in 0..1.8e19 bytes (e.g. 65535, 32KiB)");
  options.cpus = o.cpus;
  options.nics = o.nics;
  options.rendezvous_handshake = o.handshake;
  options.record_timeline = !o.timeline.empty();

  std::unique_ptr<taskgraph::ScheduleSource> source;
  std::unique_ptr<PslSource> model;
  if (!o.spec.empty()) {
    model = psl_source(o, options, result);
    if (!model) return;
  } else if (!o.collective.empty()) {
    source = collective_source(o);
  } else {
    source = goal_source(o.goal, result);
    if (!source) return;
  }
  taskgraph::ScheduleSource& input = model ? static_cast<taskgraph::ScheduleSource&>(*model->schedule) : *source;

  StoredEvaluation stored(o.store, evaluation_key(o, options, model.get()));
  sim::SimulationResult r;
  try {
    r = sim::simulate(input, options, o.max_ranks_listed);
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
  if (!o.timeline.empty()) {
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
  cmd->add_option("spec", o->spec, "PSL specification: simulate a model (see --model, --set, --machine)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--model", o->model, "Model of the specification (default: the only one)");
  cmd->add_option("--set", o->sets, "Bind a parameter: name=value or Component.param=value (units allowed)");
  cmd->add_option("--machine", o->machine, "hardware[network] component with L o g G O S (default: the first)");
  cmd->add_option("--processor", o->processor, "hardware[processor] component with Wg (default: the first)");
  cmd->add_option("--wg", o->wg, "Compute time per unit of work (overrides the processor's Wg), e.g. 60ns");
  cmd->add_option("--goal", o->goal, "GOAL schedule (LogGOPSim text format; times in ns)");
  cmd->add_option("--collective", o->collective, "Simulate one collective: barrier, bcast, reduce, allreduce, ...");
  cmd->add_option("--algorithm", o->algorithm, "Collective algorithm (default: the operation's first)");
  cmd->add_option("--procs", o->procs, "Processes of the collective");
  cmd->add_option("--size", o->size, "Per-process payload of the collective (bytes; units allowed)");
  cmd->add_option("--root", o->root, "Root of a rooted collective");
  cmd->add_option("-L", o->L, "Latency (ns; units allowed, e.g. 5.3us)")->capture_default_str();
  cmd->add_option("-o", o->o, "CPU overhead per message (ns)")->capture_default_str();
  cmd->add_option("-g", o->g, "NIC gap per message (ns)")->capture_default_str();
  cmd->add_option("-G", o->G, "NIC gap per byte (ns/B, e.g. 0.04ns/B)")->capture_default_str();
  cmd->add_option("-O", o->O, "CPU overhead per byte (ns/B)")->capture_default_str();
  cmd->add_option("-S", o->S, "Eager limit: larger messages use rendezvous (bytes, e.g. 32KiB)")->capture_default_str();
  cmd->add_option("--cpus", o->cpus, "CPUs per process")->check(CLI::Range(1, 256))->capture_default_str();
  cmd->add_option("--nics", o->nics, "NICs per process")->check(CLI::Range(1, 256))->capture_default_str();
  cmd->add_flag("--rendezvous-handshake", o->handshake,
                "Rendezvous pays a request/acknowledge round trip 2L+2o instead of L");
  cmd->add_option("--format", o->format, "Output format")->check(CLI::IsMember({"table", "json"}));
  cmd->add_option("--timeline", o->timeline, "Write a Chrome trace (open in ui.perfetto.dev)");
  add_store_options(cmd, o->store);
  cmd->add_option("--max-ranks-listed", o->max_ranks_listed, "Per-rank lines to print (and ranks in deadlock reports)")
      ->capture_default_str();
  cmd->callback([o, cmd, &result] {
    o->explicit_params.clear();
    for (const char* p : {"-L", "-o", "-g", "-G", "-O", "-S"})
      if (cmd->count(p) > 0) o->explicit_params.push_back(p);
    run(*o, result);
  });
}

}  // namespace poems::cli
