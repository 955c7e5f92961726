#include "poems/core/schedules.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "poems/base/suggest.h"
#include "poems/base/units.h"
#include "poems/components/collective_models.h"
#include "poems/db/run_key.h"
#include "poems/loggp/critical_path.h"
#include "poems/taskgraph/explicit_schedule.h"
#include "poems/taskgraph/goal.h"

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

std::unique_ptr<taskgraph::ScheduleSource> read_goal(const std::string& path, std::string& text_hash) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError("cannot read '" + path + "'");
  std::stringstream text;
  text << in.rdbuf();
  psl::SourceManager sources;
  const psl::FileId file = sources.add(path, std::move(text).str());
  text_hash = db::sha256_hex(sources.text(file));
  psl::DiagnosticEngine diags(sources);
  auto schedule = taskgraph::parse_goal(sources, file, diags);
  if (!schedule) {
    std::ostringstream rendered;
    diags.print(rendered);
    throw InputError("errors in " + path, rendered.str());
  }
  return schedule;
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
  cell.evaluation.machine = r.machine;
  db::RunKey key;
  key.evaluator = entry.name;
  key.tool_version = POEMS_VERSION;
  key.binding = {{"machine", machine_key(r.machine)}};
  std::unique_ptr<taskgraph::ScheduleSource> source;
  std::optional<taskgraph::Picoseconds> closed_form;
  std::string method = entry.name == "analytic[LogGP]" ? r.method : "discrete-event";
  if (!r.goal.empty()) {
    source = read_goal(r.goal, key.spec_hash);
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
      closed_form = components::collective_time(
          call, r.machine.params, components::rendezvous_sync(r.machine.params, r.machine.rendezvous_handshake));
      if (method.empty()) method = closed_form ? "closed-form" : "critical-path";
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
      const loggp::AnalyticResult a = loggp::critical_path(*source, simulation_options(r.machine));
      out.breakdown = Breakdown::of_ps(a.time, a.compute, a.comm);
      out.messages = a.messages;
      out.events = a.operations;
      out.processes = a.ranks;
      out.extra = {{"operations", a.operations}, {"last_rank", a.last_rank}};
    } else {
      sim::SimulationOptions options = simulation_options(r.machine);
      options.per_rank_results = r.per_rank;
      options.record_timeline = r.timeline;
      auto s = std::make_shared<sim::SimulationResult>(sim::simulate(*source, options, r.max_stuck_listed));
      out.simulation = s;
      if (!s->completed) throw EvaluationError("deadlock or unmatched messages");
      const double p = s->ranks ? static_cast<double>(s->ranks) : 1.0;
      out.breakdown = Breakdown::of_ns(ns(s->max_finish), ns(s->total_compute) / p, ns(s->total_overhead) / p);
      out.events = s->events;
      out.messages = s->messages;
      out.processes = s->ranks;
      out.extra = {{"max_finish_rank", s->max_finish_rank}, {"events_per_second", s->events_per_second()}};
    }
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
