#include "poems/core/trace_replay.h"

#include <chrono>
#include <cmath>
#include <cstdio>

#include "poems/base/units.h"
#include "poems/core/difference.h"
#include "poems/core/direct_run.h"
#include "poems/core/error.h"
#include "poems/core/timeline.h"
#include "poems/loggp/critical_path.h"
#include "poems/taskgraph/goal.h"
#include "poems/trace/archive.h"
#include "poems/trace/extrapolate.h"
#include "poems/trace/otf2_read.h"

namespace poems::core {

namespace {

double ns(taskgraph::Picoseconds ps) { return static_cast<double>(ps) / 1000.0; }

// Predicted against traced, the traced time the reference (core/difference.h); 0 without a traced time.
double percent(taskgraph::Picoseconds predicted, taskgraph::Picoseconds measured) {
  return difference_pct(static_cast<double>(predicted), static_cast<double>(measured)).value_or(0.0);
}

// Wg of the modelled or the traced processor: the time given, else the
// processor component's (named, or the one beside the machine).
double wg_of(const TraceRequest& r, const std::string& processor, const std::optional<std::string>& wg,
             const std::string& option, std::string& from) {
  if (wg) {
    from = option + " " + *wg;
    return quantity(option, *wg, base::kTime, "a time per unit of work, e.g. 60ns");
  }
  DirectMachineRequest q;
  q.files = r.machines;
  q.machine = r.machine;
  q.processor = processor;
  q.needs_processor = true;
  const DirectMachine d = direct_machine(q);
  if (!d.processor) throw UsageError(option, "no processor with a Wg in the machine files; give " + option + " TIME");
  from = d.processor->component;
  return d.processor->numbers.at("Wg");
}

}  // namespace

nlohmann::json algorithms_key(const trace::ReplayOptions& options) {
  nlohmann::json algorithms = nlohmann::json::object();
  for (const auto& [op, alg] : options.algorithms)
    algorithms[taskgraph::collective_op_name(op)] = taskgraph::collective_algorithm_name(alg);
  return algorithms;
}

std::unique_ptr<Replay> prepare_replay(const TraceRequest& r) {
  auto replay = std::make_unique<Replay>();
  const bool processors = !r.processor.empty() || r.wg;
  const bool traced = !r.traced_processor.empty() || r.traced_wg;
  if (!r.compute_scale.empty() && (processors || traced))
    throw UsageError("--compute-scale",
                     "give either --compute-scale or the two processors (--processor/--wg and "
                     "--traced-processor/--traced-wg), not both");
  if (processors != traced)
    throw UsageError(processors ? "--traced-processor" : "--processor",
                     "the compute scale is Wg(modelled) / Wg(traced): give the modelled processor (--processor NAME "
                     "or --wg TIME) and the one the trace was recorded on (--traced-processor NAME or --traced-wg "
                     "TIME)");
  DirectMachineRequest m;
  m.files = r.machines;
  m.machine = r.machine;
  m.overrides = r.overrides;
  replay->machine = direct_machine(m).machine;
  replay->machine_source = r.machine.empty() ? "command-line LogGOPS parameters" : r.machine;
  if (!r.compute_scale.empty()) {
    const double s = quantity("--compute-scale", r.compute_scale, base::kDimensionless, "a number >= 0");
    if (!(s >= 0) || !std::isfinite(s)) throw UsageError("--compute-scale", "'" + r.compute_scale + "' must be >= 0");
    replay->options.compute_scale = s;
    replay->scale = "x" + r.compute_scale + " (--compute-scale)";
  } else if (processors) {
    std::string to, from;
    const double modelled = wg_of(r, r.processor, r.wg, "--wg", to);
    const double recorded = wg_of(r, r.traced_processor, r.traced_wg, "--traced-wg", from);
    if (!(recorded > 0)) throw UsageError("--traced-wg", "the traced processor's Wg must be > 0");
    replay->options.compute_scale = modelled / recorded;
    char text[200];
    std::snprintf(text, sizeof text, "x%.6g (Wg %s of %s / %s of %s)", replay->options.compute_scale,
                  base::format_quantity({modelled, base::kTime}).c_str(), to.c_str(),
                  base::format_quantity({recorded, base::kTime}).c_str(), from.c_str());
    replay->scale = text;
  } else {
    replay->scale = "x1 (as traced)";
  }
  for (const std::string& a : r.algorithms) {
    std::string error;
    if (!trace::parse_algorithm_choice(a, replay->options, error)) throw UsageError("--collective-algorithm", error);
  }
  if (!r.window.empty()) {
    std::string error;
    if (!trace::parse_window(r.window, replay->options.window, error)) throw UsageError("--window", error);
  }
  replay->options.cpu_time = r.cpu_time;
  try {
    replay->trace = trace::read_trace(r.archive);
    replay->hash = trace::archive_hash(replay->trace.path);
  } catch (const trace::TraceError& e) {
    throw InputError(e.what());
  }
  if (!r.extrapolate_compute.empty() && r.extrapolate.empty())
    throw UsageError("--extrapolate-compute", "goes with --extrapolate (the rank count to replay the trace as)");
  if (!r.extrapolate_variation.empty() && r.extrapolate.empty())
    throw UsageError("--extrapolate-variation", "goes with --extrapolate (the rank count to replay the trace as)");
  nlohmann::json extrapolation;
  if (!r.extrapolate.empty()) {
    trace::Extrapolation x;
    std::string error;
    if (!trace::parse_extrapolation(r.extrapolate, x, error)) throw UsageError("--extrapolate", error);
    if (!r.extrapolate_compute.empty() && r.extrapolate_compute != "keep") {
      const double f =
          quantity("--extrapolate-compute", r.extrapolate_compute, base::kDimensionless, "keep or a factor >= 0");
      if (!(f >= 0) || !std::isfinite(f))
        throw UsageError("--extrapolate-compute", "'" + r.extrapolate_compute + "' must be keep or a factor >= 0");
      x.compute_factor = f;
    }
    if (!r.extrapolate_variation.empty() && !trace::parse_variation(r.extrapolate_variation, x, error))
      throw UsageError("--extrapolate-variation", error);
    x.cpu_time = r.cpu_time;
    const std::size_t traced = replay->trace.ranks.size();
    try {
      replay->trace = trace::extrapolate(replay->trace, x);
    } catch (const trace::TraceError& e) {
      throw InputError(std::string(e.what()));
    }
    extrapolation = {{"ranks", replay->trace.ranks.size()},
                     {"traced_ranks", traced},
                     {"compute_factor", x.compute_factor},
                     {"grid", x.grid}};
    // Only when resampled, so that earlier runs' keys still match.
    if (x.resample) extrapolation["variation"] = {{"resample", true}, {"seed", x.seed}};
  }
  // Keyed by content: the same archive anywhere is the same model.
  replay->name = "trace:" + replay->hash.substr(0, 12);
  replay->binding = {{"compute_scale", replay->options.compute_scale},
                     {"computation", r.cpu_time ? "cpu" : "wall"},
                     {"algorithms", algorithms_key(replay->options)},
                     {"window", replay->options.window.text()}};
  if (!extrapolation.is_null()) replay->binding["extrapolate"] = extrapolation;
  return replay;
}

namespace {
// A progress hook that counts a replay's work in trace records read.
struct ReplayProgress {
  sim::ProgressHook display;
  const trace::TraceSchedule* schedule;
  static void report(void* context, const sim::SimulationProgress& p) {
    const auto* self = static_cast<const ReplayProgress*>(context);
    sim::SimulationProgress q = p;
    q.done = self->schedule->steps_read();
    q.total = self->schedule->steps_total();
    self->display.report(self->display.context, q);
  }
};
}  // namespace

ReplayCell evaluate_replay(const Replay& replay, const std::string& paradigm, const std::string& method, Store& store,
                           bool per_rank, bool timeline, std::size_t max_stuck_listed,
                           const std::string& otf2_timeline) {
  const EvaluatorEntry& entry = evaluator_named(paradigm, "--paradigm");
  if (entry.name != "simulation[MPI-Sim]" && entry.name != "analytic[LogGP]")
    throw UsageError("--paradigm", entry.name +
                                       " evaluates models; a trace is replayed by simulation[MPI-Sim] or "
                                       "analytic[LogGP]");
  const bool analytic = entry.name == "analytic[LogGP]";
  if (analytic && !method.empty() && method != "critical-path")
    throw UsageError("--method", "a trace has no closed form; use critical-path");
  ReplayCell out;
  Cell& cell = out.cell;
  cell.paradigm = entry.name;
  cell.store_path = store.path();
  cell.evaluation.machine = replay.machine;
  db::RunKey key;
  key.evaluator = entry.name;
  key.model = replay.name;
  key.spec_hash = replay.hash;
  key.tool_version = POEMS_VERSION;
  key.binding = replay.binding;
  key.binding["machine"] = machine_key(replay.machine);
  if (analytic) key.binding["method"] = "critical-path";
  std::unique_ptr<trace::TraceSchedule> schedule;
  try {
    schedule = std::make_unique<trace::TraceSchedule>(replay.trace, replay.options);
  } catch (const trace::TraceError& e) {  // a window a rank cannot satisfy, no CPU time recorded
    throw InputError(e.what());
  }
  out.scope = schedule->scope();
  RunRecord record(store, key);
  cell.run_id = record.id();
  Outcome& o = cell.outcome;
  o.method = analytic ? "critical-path" : "discrete-event";
  const auto start = std::chrono::steady_clock::now();
  taskgraph::Picoseconds predicted = 0;
  try {
    sim::SimulationOptions options = simulation_options(replay.machine);
    // The progress display's ETA: trace records read of the window's.
    ReplayProgress progress{options.progress, schedule.get()};
    if (options.progress) options.progress = {ReplayProgress::report, &progress};
    if (analytic) {
      const loggp::AnalyticResult a = loggp::critical_path(*schedule, options);
      o.breakdown = Breakdown::of_ps(a.time, a.compute, a.comm);
      predicted = a.time;
      o.messages = a.messages;
      o.events = a.operations;
      o.processes = a.ranks;
      o.extra = {{"operations", a.operations}, {"last_rank", a.last_rank}};
    } else {
      options.per_rank_results = per_rank;
      options.record_timeline = timeline;
      auto s = std::make_shared<sim::SimulationResult>(
          simulate_with_timeline(*schedule, options, max_stuck_listed, otf2_timeline, false));
      o.simulation = s;
      if (!s->completed) throw EvaluationError("deadlock or unmatched messages");
      predicted = s->max_finish;
      const double p = s->ranks ? static_cast<double>(s->ranks) : 1.0;
      o.breakdown = Breakdown::of_ns(ns(s->max_finish), ns(s->total_compute) / p, ns(s->total_overhead) / p);
      o.events = s->events;
      o.messages = s->messages;
      o.processes = s->ranks;
      o.extra = {{"max_finish_rank", s->max_finish_rank}, {"events_per_second", s->events_per_second()}};
    }
  } catch (const sim::SimulationLimitError& e) {
    record.fail(e.what());
    throw InputError(e.what());
  } catch (const Error& e) {
    record.fail(e.what());
    if (e.kind() != ErrorKind::Evaluation) throw;
    cell.error = e.what();
    return out;
  } catch (const std::exception& e) {  // sim::SimulationError
    cell.error = e.what();
    record.fail(e.what());
    return out;
  }
  cell.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  o.extra["traced_ns"] = ns(out.scope.measured);
  o.extra["difference_pct"] = percent(predicted, out.scope.measured);
  o.extra["archive"] = replay.trace.path;
  try {
    cell.record = record.finish(record_of(o, false));
  } catch (const StoreError& e) {
    cell.store_error = e.what();
  }
  return out;
}

std::uint64_t write_replay_goal(const Replay& replay, std::ostream& out) {
  try {
    trace::TraceSchedule schedule(replay.trace, replay.options);
    out << "// GOAL schedule of " << replay.trace.path << " (poems trace --goal), computation " << replay.scale << "\n";
    taskgraph::write_goal(out, schedule);
    return schedule.scope().messages;
  } catch (const trace::TraceError& e) {
    throw InputError(e.what());
  }
}

}  // namespace poems::core
