#include "poems/core/schedules.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <openssl/evp.h>

#include "poems/base/suggest.h"
#include "poems/base/units.h"
#include "poems/components/collective_models.h"
#include "poems/core/timeline.h"
#include "poems/db/run_key.h"
#include "poems/loggp/critical_path.h"
#include "poems/taskgraph/explicit_schedule.h"
#include "poems/taskgraph/goal.h"
#include "poems/taskgraph/limits.h"

namespace poems::core {

namespace {

double ns(taskgraph::Picoseconds ps) { return static_cast<double>(ps) / 1000.0; }

std::uint64_t count(const std::string& option, const std::string& text, std::uint64_t lo, std::uint64_t hi) {
  const std::string range = "an integer in " + std::to_string(lo) + ".." + std::to_string(hi);
  const double v = quantity(option, text, base::kDimensionless, range);
  if (v < static_cast<double>(lo) || v > static_cast<double>(hi) ||
      v != static_cast<double>(static_cast<std::uint64_t>(v)))
    throw UsageError(option, "'" + text + "' is out of range; expected " + range);
  return static_cast<std::uint64_t>(v);
}

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

// The GOAL file read without keeping its text (taskgraph::read_goal_file),
// refused if its ranks alone would need more than the memory limit.
std::unique_ptr<taskgraph::ExplicitSchedule> read_goal(const std::string& path, const sim::SimulationOptions& options,
                                                       std::string& text_hash, std::string& warnings) {
  psl::SourceManager sources;
  psl::DiagnosticEngine diags(sources);
  std::string io_error;
  auto schedule =
      taskgraph::read_goal_file(path, sources, diags, {options.memory_limit, sim::memory_per_rank(options)}, io_error);
  if (!io_error.empty()) throw InputError(io_error);
  std::ostringstream rendered;
  if (!schedule || diags.warning_count() > 0) diags.print(rendered);
  if (!schedule) throw InputError("errors in " + path, rendered.str());
  warnings = rendered.str();
  text_hash = file_sha256(path);
  return schedule;
}

// A limit error about a GOAL operation, as the reader reports its errors:
// file:line:col: error: ..., the line and a caret.
std::string located(const taskgraph::NodeInfo& node, const std::string& message) {
  std::string out = node.location + ": error: " + node.label + ": " + message + "\n";
  const auto col_at = node.location.rfind(':');
  const auto line_at = col_at == std::string::npos ? col_at : node.location.rfind(':', col_at - 1);
  if (col_at == std::string::npos || line_at == std::string::npos) return out;
  const unsigned long line = std::stoul(node.location.substr(line_at + 1, col_at - line_at - 1));
  const unsigned long column = std::stoul(node.location.substr(col_at + 1));
  std::ifstream in(node.location.substr(0, line_at));
  std::string text;
  for (unsigned long i = 0; i < line && std::getline(in, text); ++i) {
  }
  if (!in) return out;
  return out + text + "\n" + std::string(column > 0 ? column - 1 : 0, ' ') + "^\n";
}

// Why a collective's closed form does not hold under the semantics ("" =
// it does): under loggopsim the forms hold without the rendezvous
// synchronization, except that LogGOPSim charges a 0-byte message o - G.
std::string closed_form_refusal(sim::Semantics semantics, const taskgraph::CollectiveCall& call) {
  if (semantics != sim::Semantics::Loggopsim) return {};
  if (call.op == taskgraph::CollectiveOp::Barrier || call.bytes == 0)
    return "under the loggopsim semantics a 0-byte message costs o - G (LogGOPSim's (s-1)G wraps), which the "
           "closed forms do not model; use critical-path";
  return {};
}

}  // namespace

taskgraph::CollectiveCall collective_call(const CollectiveRequest& o) {
  std::vector<std::string> ops;
  for (const char* n : {"barrier", "bcast", "reduce", "allreduce", "gather", "scatter", "allgather", "alltoall"})
    ops.push_back(n);
  auto op = taskgraph::parse_collective_op(o.operation);
  if (!op)
    throw UsageError("--collective", "'" + o.operation + "' is not a collective; expected one of " +
                                         base::name_list(ops) + base::did_you_mean(o.operation, ops));
  auto allowed = taskgraph::algorithms_for(*op);
  std::vector<std::string> names;
  for (auto a : allowed) names.push_back(taskgraph::collective_algorithm_name(a));
  taskgraph::CollectiveAlgorithm algorithm = allowed.front();
  if (!o.algorithm.empty()) {
    auto a = taskgraph::parse_collective_algorithm(o.algorithm);
    if (!a || std::find(allowed.begin(), allowed.end(), *a) == allowed.end())
      throw UsageError("--algorithm", "'" + o.algorithm + "' is not an algorithm of " + o.operation +
                                          "; expected one of " + base::name_list(names) +
                                          base::did_you_mean(o.algorithm, names));
    algorithm = *a;
  }
  if (o.procs.empty()) throw UsageError("--procs", "required with --collective; expected an integer in 1..2147483647");
  taskgraph::CollectiveCall call;
  call.op = *op;
  call.algorithm = algorithm;
  call.procs = static_cast<std::uint32_t>(count("--procs", o.procs, 1, 2147483647));
  if (!o.size.empty()) {
    const std::string range = "a size in 0..1e15 bytes (e.g. 1024, 32KiB)";
    const double b = quantity("--size", o.size, base::kBytes, range);
    if (b < 0 || b > 1e15 || b != static_cast<double>(static_cast<std::uint64_t>(b)))
      throw UsageError("--size", "'" + o.size + "' is out of range; expected " + range);
    call.bytes = static_cast<std::uint64_t>(b);
  }
  call.root = static_cast<std::uint32_t>(count("--root", o.root, 0, call.procs - 1));
  return call;
}

Cell evaluate_schedule(const ScheduleRequest& r, Store& store) {
  const EvaluatorEntry& entry = evaluator_named(r.paradigm, "--paradigm");
  if (entry.name != "simulation[MPI-Sim]" && entry.name != "analytic[LogGP]")
    throw UsageError("--paradigm", entry.name +
                                       " evaluates models; a GOAL file or a collective is evaluated by "
                                       "simulation[MPI-Sim] or analytic[LogGP]");
  Cell cell;
  cell.paradigm = entry.name;
  cell.store_path = store.path();
  Machine machine = r.machine;
  db::RunKey key;
  key.evaluator = entry.name;
  key.tool_version = POEMS_VERSION;
  std::unique_ptr<taskgraph::ScheduleSource> source;
  std::optional<taskgraph::Picoseconds> closed_form;
  std::string method = entry.name == "analytic[LogGP]" ? r.method : "discrete-event";
  if (!r.goal.empty()) {
    auto goal = read_goal(r.goal, simulation_options(machine), key.spec_hash, cell.warnings);
    // As LogGOPSim: as many CPUs and NICs as the schedule names, unless given.
    if (!r.cpus_given) machine.cpus = std::max<std::uint32_t>(machine.cpus, goal->max_cpu() + 1);
    if (!r.nics_given) machine.nics = std::max<std::uint32_t>(machine.nics, goal->max_nic() + 1);
    source = std::move(goal);
    key.model = "goal:" + std::filesystem::path(r.goal).filename().string();
    if (method == "closed-form") throw UsageError("--method", "a GOAL schedule has no closed form; use critical-path");
    if (method.empty()) method = "critical-path";
  } else {
    const taskgraph::CollectiveCall call = collective_call(r.collective);
    key.model = "collective:" + r.collective.operation;
    key.binding["collective"] = {{"operation", r.collective.operation},
                                 {"algorithm", taskgraph::collective_algorithm_name(call.algorithm)},
                                 {"procs", call.procs},
                                 {"bytes", call.bytes},
                                 {"root", call.root}};
    if (entry.name == "analytic[LogGP]") {
      std::string refusal = closed_form_refusal(machine.semantics, call);
      if (refusal.empty() && !machine.flat())
        refusal = "the collective closed forms assume one rank per node on a complete network; this machine has " +
                  machine.network_model->describe() + "; use critical-path";
      if (refusal.empty() && machine.noisy())
        refusal = "the collective closed forms have no OS noise; this machine has " + machine.noise->describe() +
                  "; use critical-path";
      // The rendezvous synchronization the closed forms charge: none under loggopsim.
      const taskgraph::Picoseconds sync =
          machine.semantics == sim::Semantics::Loggopsim
              ? 0
              : components::rendezvous_sync(machine.params, machine.rendezvous_handshake);
      if (refusal.empty()) closed_form = components::collective_time(call, machine.params, sync);
      if (method.empty()) method = closed_form ? "closed-form" : "critical-path";
      if (method == "closed-form" && !refusal.empty()) throw UsageError("--method", refusal);
      if (method == "closed-form" && !closed_form)
        throw UsageError("--method", "no closed form of " + r.collective.operation + "/" +
                                         taskgraph::collective_algorithm_name(call.algorithm) +
                                         " holds for these parameters (see docs/models/collectives.md); use "
                                         "critical-path");
    }
    source = std::make_unique<taskgraph::CollectiveSchedule>(call);
  }
  if (method != "closed-form" && method != "critical-path" && method != "discrete-event")
    throw UsageError("--method", "'" + method +
                                     "' is not a method of analytic[LogGP]; expected closed-form or "
                                     "critical-path");
  cell.evaluation.machine = machine;
  key.binding["machine"] = machine_key(machine);
  key.binding["method"] = method;
  RunRecord record(store, key);
  cell.run_id = record.id();
  Outcome& out = cell.outcome;
  out.method = method;
  const auto start = std::chrono::steady_clock::now();
  try {
    if (method == "closed-form") {
      out.breakdown = Breakdown::of_ps(*closed_form, 0, 0);
      out.processes = static_cast<std::uint32_t>(source->ranks());
    } else if (method == "critical-path") {
      const loggp::AnalyticResult a = loggp::critical_path(*source, simulation_options(machine));
      out.breakdown = Breakdown::of_ps(a.time, a.compute, a.comm);
      out.messages = a.messages;
      out.events = a.operations;
      out.processes = a.ranks;
      out.extra = {{"operations", a.operations}, {"last_rank", a.last_rank}};
    } else {
      sim::SimulationOptions options = simulation_options(machine);
      options.per_rank_results = r.per_rank;
      options.record_timeline = r.timeline;
      auto s = std::make_shared<sim::SimulationResult>(
          simulate_with_timeline(*source, options, r.max_stuck_listed, r.otf2_timeline, !r.goal.empty()));
      out.simulation = s;
      if (!s->completed) throw EvaluationError("deadlock or unmatched messages");
      const double p = s->ranks ? static_cast<double>(s->ranks) : 1.0;
      out.breakdown = Breakdown::of_ns(ns(s->max_finish), ns(s->total_compute) / p, ns(s->total_overhead) / p);
      out.events = s->events;
      out.messages = s->messages;
      out.processes = s->ranks;
      out.extra = {{"max_finish_rank", s->max_finish_rank}, {"events_per_second", s->events_per_second()}};
    }
  } catch (const sim::SimulationLimitError& e) {  // beyond the clock or the memory limit: the input's
    record.fail(e.what());
    const taskgraph::NodeInfo node = source->node_info(e.node);
    if (!r.goal.empty() && !node.location.empty()) throw InputError("", located(node, e.detail));
    throw InputError(e.what());
  } catch (const taskgraph::InstantiationError& e) {
    record.fail(e.what());
    throw InputError(e.what());
  } catch (const Error& e) {
    record.fail(e.what());
    if (e.kind() != ErrorKind::Evaluation) throw;  // an OTF2 timeline that cannot be recorded or written
    cell.error = e.what();
    return cell;
  } catch (const std::exception& e) {  // sim::SimulationError, a deadlock
    cell.error = e.what();
    record.fail(e.what());
    return cell;
  }
  cell.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  try {
    cell.record = record.finish(record_of(out, false));
  } catch (const StoreError& e) {
    cell.store_error = e.what();
  }
  return cell;
}

}  // namespace poems::core
