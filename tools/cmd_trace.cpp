// `poems trace`: record an MPI run as an OTF2 archive, summarize an archive,
// export its replay as GOAL; and the trace replay behind `poems simulate
// --trace` and `poems analyze --trace` (docs/trace.md).
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli_common.h"
#include "machine_model.h"
#include "poems/loggp/critical_path.h"
#include "poems/measure/mpirun.h"
#include "poems/psl/frontend.h"
#include "poems/psl/units.h"
#include "poems/recommender/stored_results.h"
#include "poems/sim/report.h"
#include "poems/taskgraph/goal.h"
#include "poems/trace/archive.h"
#include "poems/trace/otf2_read.h"
#include "poems/trace/record.h"
#include "poems/trace/replay.h"
#include "poems/trace/timeline.h"
#include "trace_options.h"

namespace poems::cli {

namespace fs = std::filesystem;
using taskgraph::Picoseconds;

bool is_otf2_path(const std::string& path) { return path.size() > 5 && path.compare(path.size() - 5, 5, ".otf2") == 0; }

// Named, not anonymous: the tool is built as unity batches, where helper
// names of other commands' files would collide.
namespace trace_cli {

std::string with_commas(std::uint64_t n) {
  std::string s = std::to_string(n);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<std::size_t>(i), ",");
  return s;
}

std::string seconds(Picoseconds ps) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.6f s", static_cast<double>(ps) / 1e12);
  return buffer;
}

double percent(Picoseconds predicted, Picoseconds measured) {
  return measured == 0
             ? 0.0
             : 100.0 * (static_cast<double>(predicted) - static_cast<double>(measured)) / static_cast<double>(measured);
}

// A trace resolved for replay: the archive read, the options, the machine.
struct Replay {
  trace::Trace trace;
  trace::ReplayOptions options;
  std::string hash, name;
  std::string machine, scale;  // descriptions
  nlohmann::json binding;
};

std::unique_ptr<psl::Frontend> load_machines(const std::vector<std::string>& files) {
  auto frontend = std::make_unique<psl::Frontend>();
  if (!frontend->load_files(files)) {
    frontend->diagnostics().print(std::cerr);
    return nullptr;
  }
  return frontend;
}

// The replay of `request` (nullptr with `result` set on bad input); fills
// `options` with the machine: --machine from the machines files, else the
// command-line LogGOPS; command-line -L ... override a named machine.
std::unique_ptr<Replay> resolve_replay(const ModelRequest& model, const TraceReplayRequest& request,
                                       sim::SimulationOptions& options, int& result) {
  auto replay = std::make_unique<Replay>();
  const sim::SimulationOptions cli = command_line_machine(model);
  options.params = cli.params;
  options.rendezvous_handshake = cli.rendezvous_handshake;
  replay->machine = "command-line LogGOPS parameters";

  const bool processors = !model.processor.empty() || !model.wg.empty();
  const bool traced = !request.traced_processor.empty() || !request.traced_wg.empty();
  if (!request.compute_scale.empty() && (processors || traced))
    usage_error("--compute-scale",
                "give either --compute-scale or the two processors (--processor/--wg and "
                "--traced-processor/--traced-wg), not both");
  if (processors != traced)
    usage_error(processors ? "--traced-processor" : "--processor",
                "the compute scale is Wg(modelled) / Wg(traced): give the modelled processor (--processor NAME or "
                "--wg TIME) and the one the trace was recorded on (--traced-processor NAME or --traced-wg TIME)");

  std::unique_ptr<psl::Frontend> machines;
  const bool needs_machines = !model.machine.empty() || !model.processor.empty() || !request.traced_processor.empty();
  if (needs_machines) {
    machines = load_machines(request.machines);
    if (!machines) {
      result = kExitInputError;
      return nullptr;
    }
  }
  try {
    if (!model.machine.empty()) {
      MachineModel m = resolve_machine(machines->program(), model.machine, "", {});
      for (const std::string& p : model.explicit_params) {
        if (p == "-L") m.params.L = cli.params.L;
        if (p == "-o") m.params.o = cli.params.o;
        if (p == "-g") m.params.g = cli.params.g;
        if (p == "-G") m.params.G = cli.params.G;
        if (p == "-O") m.params.O = cli.params.O;
        if (p == "-S") m.params.S = cli.params.S;
      }
      options.params = m.params;
      replay->machine = m.network;
    }
    auto wg_of = [&](const std::string& component, const std::string& time, const std::string& option,
                     std::string& from) {
      if (!time.empty()) {
        from = option + " " + time;
        return quantity(option, time, psl::kTime, "a time per unit of work, e.g. 60ns");
      }
      const MachineModel m = resolve_machine(machines->program(), model.machine, component, {});
      from = m.processor;
      return m.wg_ns;
    };
    if (!request.compute_scale.empty()) {
      const double s = quantity("--compute-scale", request.compute_scale, psl::kDimensionless, "a number >= 0");
      if (!(s >= 0) || !std::isfinite(s))
        usage_error("--compute-scale", "'" + request.compute_scale + "' must be >= 0");
      replay->options.compute_scale = s;
      replay->scale = "x" + request.compute_scale + " (--compute-scale)";
    } else if (processors) {
      std::string to, from;
      const double modelled = wg_of(model.processor, model.wg, "--wg", to);
      const double recorded = wg_of(request.traced_processor, request.traced_wg, "--traced-wg", from);
      if (!(recorded > 0)) usage_error("--traced-wg", "the traced processor's Wg must be > 0");
      replay->options.compute_scale = modelled / recorded;
      char text[200];
      std::snprintf(text, sizeof text, "x%.6g (Wg %s of %s / %s of %s)", replay->options.compute_scale,
                    psl::format_quantity({modelled, psl::kTime}).c_str(), to.c_str(),
                    psl::format_quantity({recorded, psl::kTime}).c_str(), from.c_str());
      replay->scale = text;
    } else {
      replay->scale = "x1 (as traced)";
    }
  } catch (const CLI::ValidationError&) {
    throw;
  } catch (const std::runtime_error& e) {
    std::cerr << "poems: error: " << e.what() << '\n';
    result = kExitInputError;
    return nullptr;
  }
  for (const std::string& a : request.algorithms) {
    std::string error;
    if (!trace::parse_algorithm_choice(a, replay->options, error)) usage_error("--collective-algorithm", error);
  }
  if (!request.window.empty()) {
    std::string error;
    if (!trace::parse_window(request.window, replay->options.window, error)) usage_error("--window", error);
  }
  replay->options.cpu_time = request.computation == "cpu";
  try {
    replay->trace = trace::read_trace(request.trace);
    replay->hash = trace::archive_hash(replay->trace.path);
  } catch (const trace::TraceError& e) {
    std::cerr << "poems: error: " << e.what() << '\n';
    result = kExitInputError;
    return nullptr;
  }
  for (const std::string& w : replay->trace.warnings)
    std::cerr << "poems: warning: " << replay->trace.path << ": " << w << '\n';
  // Keyed by content: the same archive anywhere is the same model.
  replay->name = "trace:" + replay->hash.substr(0, 12);
  nlohmann::json algorithms = nlohmann::json::object();
  for (const auto& [op, alg] : replay->options.algorithms)
    algorithms[taskgraph::collective_op_name(op)] = taskgraph::collective_algorithm_name(alg);
  replay->binding = {{"compute_scale", replay->options.compute_scale},
                     {"computation", request.computation},
                     {"algorithms", algorithms},
                     {"window", replay->options.window.text()}};
  return replay;
}

std::string trace_summary(const Replay& r, const trace::ReplayScope& scope) {
  std::string s = "trace " + r.trace.path + " (" + std::to_string(r.trace.ranks.size()) + " ranks" +
                  (r.options.cpu_time ? ", computation as CPU time" : "") +
                  (r.trace.creator.empty() ? "" : ", recorded by " + r.trace.creator) + ")\n";
  s += "  " + (r.options.window.whole() ? std::string("the whole run") : "window " + r.options.window.text()) + ": " +
       with_commas(scope.calls) + " MPI calls, " + with_commas(scope.messages) + " messages, " +
       with_commas(scope.collectives) + " collectives";
  if (scope.messages_cut + scope.collectives_cut > 0)
    s += " (cut by the window: " + with_commas(scope.messages_cut) + " messages, " +
         with_commas(scope.collectives_cut) + " collectives)";
  s += "\n  computation " + r.scale + "\n";
  return s;
}

// Knowledge-base key: the archive's contents, the machine, the replay options.
EvaluationKey replay_key(const Replay& r, const std::string& evaluator, const sim::SimulationOptions& options) {
  EvaluationKey key;
  key.evaluator = evaluator;
  key.model = r.name;
  key.spec_hash = r.hash;
  nlohmann::json machine = machine_json(options);
  machine["cpus"] = options.cpus;
  machine["nics"] = options.nics;
  key.binding = r.binding;
  key.binding["machine"] = machine;
  return key;
}

}  // namespace trace_cli

using namespace trace_cli;

// ---- options shared with simulate and analyze -----------------------------------------

void add_trace_replay_options(CLI::App* cmd, TraceReplayRequest& r, bool with_trace) {
  if (with_trace)
    cmd->add_option("--trace", r.trace, "Replay an OTF2 archive (poems trace, Score-P): its anchor file or directory");
  r.machines = {POEMS_DEFAULT_MACHINES};
  cmd->add_option("--machines", r.machines,
                  "Trace replay: PSL files with the machine components (--machine, "
                  "--processor, --traced-processor)")
      ->capture_default_str();
  cmd->add_option(
      "--traced-processor", r.traced_processor,
      "Trace replay: hardware[processor] the trace was recorded on; computation x Wg(--processor) / Wg(this)");
  cmd->add_option("--traced-wg", r.traced_wg, "Trace replay: Wg of the machine the trace was recorded on, e.g. 7.7ns");
  cmd->add_option("--compute-scale", r.compute_scale,
                  "Trace replay: simulated time per traced time of computation (default 1)");
  cmd->add_option("--collective-algorithm", r.algorithms,
                  "Trace replay: the modelled MPI's algorithm, OP=ALGORITHM (e.g. allreduce=ring); repeatable");
  cmd->add_option("--computation", r.computation,
                  "Trace replay: computation is the wall time between calls, or the thread's CPU time (archives "
                  "recorded with poems trace --cpu-time)")
      ->check(CLI::IsMember({"wall", "cpu"}))
      ->capture_default_str();
  cmd->add_option("--window", r.window,
                  "Trace replay: only FROM[#N]..TO[#M], e.g. MPI_Barrier#1..MPI_Allreduce#-1 (after the first "
                  "barrier, through the last allreduce)");
}

void reject_replay_options_without_trace(const TraceReplayRequest& r) {
  const std::pair<bool, const char*> given[] = {{!r.traced_processor.empty(), "--traced-processor"},
                                                {!r.traced_wg.empty(), "--traced-wg"},
                                                {!r.compute_scale.empty(), "--compute-scale"},
                                                {!r.algorithms.empty(), "--collective-algorithm"},
                                                {!r.window.empty(), "--window"},
                                                {r.computation != "wall", "--computation"}};
  for (const auto& [set, option] : given)
    if (set) throw CLI::ValidationError(option, "applies to a trace replay only; give --trace ARCHIVE");
}

// ---- poems simulate --trace ---------------------------------------------------------------

void simulate_trace(const ModelRequest& model, const TraceReplayRequest& request, const TraceSimulateOutput& out,
                    int& result) {
  sim::SimulationOptions options;
  auto replay = resolve_replay(model, request, options, result);
  if (!replay) return;
  options.cpus = out.cpus;
  options.nics = out.nics;
  options.record_timeline = !out.timeline.empty();
  std::unique_ptr<trace::TraceSchedule> schedule;
  try {
    schedule = std::make_unique<trace::TraceSchedule>(replay->trace, replay->options);
  } catch (const trace::TraceError& e) {  // a window a rank cannot satisfy, no CPU time recorded
    std::cerr << "poems: error: " << e.what() << '\n';
    result = kExitInputError;
    return;
  }
  OtfTimelineOutput otf2(out.timeline, *schedule, false, options);
  StoredEvaluation stored(out.store, replay_key(*replay, "simulation[MPI-Sim]", options));
  sim::SimulationResult r;
  try {
    r = sim::simulate(otf2.source(), options, out.max_ranks_listed);
  } catch (const sim::SimulationError& e) {
    std::cerr << "poems: error: " << e.what() << '\n';
    stored.fail(e.what());
    result = kExitEvaluation;
    return;
  }
  const trace::ReplayScope& scope = schedule->scope();
  const double diff = percent(r.max_finish, scope.measured);
  if (out.format == "json") {
    std::ostringstream text;
    sim::write_json(text, r, out.max_ranks_listed);
    nlohmann::json j = nlohmann::json::parse(text.str());
    j["trace"] = {{"archive", replay->trace.path},
                  {"creator", replay->trace.creator},
                  {"hash", replay->hash},
                  {"machine", replay->machine},
                  {"compute_scale", replay->options.compute_scale},
                  {"window", replay->options.window.text()},
                  {"calls", scope.calls},
                  {"messages", scope.messages},
                  {"collectives", scope.collectives},
                  {"traced_compute_ns", static_cast<double>(scope.traced_compute) / 1000.0},
                  {"traced_ns", static_cast<double>(scope.measured) / 1000.0},
                  {"difference_pct", diff}};
    std::cout << j.dump(1) << '\n';
  } else {
    const auto& p = options.params;
    std::cout << trace_summary(*replay, scope);
    std::cout << "LogGOPS L=" << sim::format_ps(p.L) << " o=" << sim::format_ps(p.o) << " g=" << sim::format_ps(p.g)
              << " G=" << sim::format_fs_per_byte(p.G) << " O=" << sim::format_fs_per_byte(p.O) << " S=" << p.S << "B ("
              << replay->machine << "), " << options.cpus << " CPU(s) and " << options.nics << " NIC(s) per process\n";
    sim::write_table(std::cout, r, out.max_ranks_listed);
    char line[160];
    std::snprintf(line, sizeof line, "traced %s, replayed %s: %+.2f %%\n", seconds(scope.measured).c_str(),
                  seconds(r.max_finish).c_str(), diff);
    std::cout << line;
  }
  if (!out.timeline.empty()) {
    if (otf2.active()) {
      if (!otf2.write(r, options.cpus)) {
        result = kExitInputError;
        return;
      }
    } else {
      std::ofstream file(out.timeline);
      if (!file) {
        std::cerr << "poems: error: cannot write '" << out.timeline << "'\n";
        result = kExitInputError;
        return;
      }
      sim::write_chrome_trace(file, r);
      std::cerr << "wrote " << out.timeline << " (" << r.timeline.size() << " intervals)\n";
    }
  }
  if (!r.completed) {
    sim::write_stuck_report(std::cerr, r);
    stored.fail("deadlock or unmatched messages");
    result = kExitEvaluation;
    return;
  }
  db::Result record = recommender::simulation_record(r);
  record.extra["traced_ns"] = static_cast<double>(scope.measured) / 1000.0;
  record.extra["difference_pct"] = diff;
  record.extra["archive"] = replay->trace.path;
  result = stored.finish(record) ? kExitOk : kExitEvaluation;
}

// ---- poems analyze --trace ------------------------------------------------------------------

void analyze_trace(const ModelRequest& model, const TraceReplayRequest& request, const std::string& format,
                   const StoreOptions& store, int& result) {
  sim::SimulationOptions options;
  auto replay = resolve_replay(model, request, options, result);
  if (!replay) return;
  EvaluationKey key = replay_key(*replay, "analytic[LogGP]", options);
  key.binding["method"] = "critical-path";
  StoredEvaluation stored(store, key);
  loggp::AnalyticResult r;
  trace::ReplayScope scope;
  try {
    trace::TraceSchedule schedule(replay->trace, replay->options);
    scope = schedule.scope();
    r = loggp::critical_path(schedule, options);
  } catch (const trace::TraceError& e) {
    std::cerr << "poems: error: " << e.what() << '\n';
    stored.fail(e.what());
    result = kExitInputError;
    return;
  } catch (const sim::SimulationError& e) {
    std::cerr << "poems: error: " << e.what() << '\n';
    stored.fail(e.what());
    result = kExitEvaluation;
    return;
  }
  auto ns = [](Picoseconds ps) { return static_cast<double>(ps) / 1000.0; };
  nlohmann::json j = {
      {"evaluator", "analytic[LogGP]"}, {"method", "critical-path"},       {"model", replay->name},
      {"time_ns", ns(r.time)},          {"compute_ns", ns(r.compute)},     {"comm_ns", ns(r.comm)},
      {"sync_ns", ns(r.sync)},          {"operations", r.operations},      {"messages", r.messages},
      {"last_rank", r.last_rank},       {"traced_ns", ns(scope.measured)}, {"wall_seconds", r.wall_seconds}};
  if (format == "json") {
    std::cout << j.dump(2) << '\n';
  } else {
    std::cout << trace_summary(*replay, scope);
    std::printf("analytic[LogGP] critical-path: time %.3f ns (traced %.3f ns)\n", ns(r.time), ns(scope.measured));
    std::printf("  compute %.3f ns, comm %.3f ns, sync %.3f ns (per-process means; sync is the rest)\n", ns(r.compute),
                ns(r.comm), ns(r.sync));
  }
  db::Result stored_result;
  stored_result.time_ns = ns(r.time);
  stored_result.compute_ns = ns(r.compute);
  stored_result.comm_ns = ns(r.comm);
  stored_result.sync_ns = ns(r.sync);
  stored_result.extra = j;
  result = stored.finish(stored_result) ? kExitOk : kExitEvaluation;
}

// ---- --timeline FILE.otf2 ---------------------------------------------------------------------

struct OtfTimelineOutput::Impl {
  std::string path;
  trace::Otf2Timeline timeline;
  Impl(const std::string& p, taskgraph::ScheduleSource& s, bool by_kind)
      : path(p), timeline(s, by_kind ? trace::Otf2Timeline::Labels::ByKind : trace::Otf2Timeline::Labels::FromSource) {}
};

OtfTimelineOutput::OtfTimelineOutput(const std::string& path, taskgraph::ScheduleSource& source, bool by_kind,
                                     sim::SimulationOptions& options)
    : original_(source) {
  if (!is_otf2_path(path)) return;
  impl_ = std::make_unique<Impl>(path, source, by_kind);
  problem_ = impl_->timeline.check_order();
  if (!problem_.empty()) return;
  active_ = true;
  options.observer = &impl_->timeline.observer();
  options.record_timeline = true;
}

OtfTimelineOutput::~OtfTimelineOutput() = default;

taskgraph::ScheduleSource& OtfTimelineOutput::source() { return active_ ? impl_->timeline.source() : original_; }

bool OtfTimelineOutput::write(const sim::SimulationResult& result, std::uint32_t cpus) {
  try {
    impl_->timeline.write(impl_->path, result, cpus);
  } catch (const trace::TraceError& e) {
    std::cerr << "poems: error: " << e.what() << '\n';
    return false;
  }
  std::cerr << "wrote " << impl_->path << " (OTF2, " << result.ranks << " ranks)\n";
  return true;
}

// ---- poems trace ---------------------------------------------------------------------------

namespace trace_cli {

struct TraceCliOptions {
  std::string np = "1";
  std::string mpirun_args, output = "poems-trace";
  bool force = false;
  double timeout = 0;
  int nice = 0;
  bool cpu_time = false;
  bool info = false;
  std::string goal;
  std::string format = "table";
  std::vector<std::string> args;  // PROGRAM ARGS, or the ARCHIVE
  ModelRequest model;             // --processor / --wg for the GOAL's compute scale
  TraceReplayRequest replay;
};

std::vector<std::string> split_words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

void show_info(const TraceCliOptions& o, int& result) {
  trace::Trace t;
  try {
    t = trace::read_trace(o.args.front());
  } catch (const trace::TraceError& e) {
    std::cerr << "poems: error: " << e.what() << '\n';
    result = kExitInputError;
    return;
  }
  std::map<std::string, std::uint64_t> per_region;
  for (const trace::Rank& r : t.ranks)
    for (const trace::CallRecord& c : r.calls) ++per_region[t.regions[c.region]];
  std::uint64_t bytes = 0, collectives = 0;
  for (const trace::Message& m : t.messages) bytes += t.ranks[m.sender].steps[m.send_step].value;
  for (const trace::Rank& r : t.ranks)
    for (const trace::Step& s : r.steps) collectives += s.kind == trace::StepKind::Collective && !s.dropped;
  const std::uint64_t size = trace::archive_bytes(t.path);
  const std::uint64_t calls = t.calls();
  if (o.format == "json") {
    nlohmann::json j = {{"archive", t.path},
                        {"creator", t.creator},
                        {"ranks", t.ranks.size()},
                        {"events", t.events},
                        {"calls", calls},
                        {"calls_by_function", per_region},
                        {"messages", t.messages.size()},
                        {"message_bytes", bytes},
                        {"collective_calls", collectives},
                        {"communicators", t.comms.size()},
                        {"compute_ns", static_cast<double>(t.compute()) / 1000.0},
                        {"measured_ns", static_cast<double>(t.measured()) / 1000.0},
                        {"archive_bytes", size},
                        {"bytes_per_call", calls ? static_cast<double>(size) / static_cast<double>(calls) : 0.0},
                        {"warnings", t.warnings}};
    std::cout << j.dump(2) << '\n';
  } else {
    TextTable table{{"archive", t.path},
                    {"recorded by", t.creator.empty() ? "(unknown)" : t.creator},
                    {"ranks", std::to_string(t.ranks.size())},
                    {"events", with_commas(t.events)},
                    {"MPI calls", with_commas(calls)},
                    {"messages", with_commas(t.messages.size()) + " (" + with_commas(bytes) + " bytes)"},
                    {"collective calls", with_commas(collectives)},
                    {"communicators", std::to_string(t.comms.size())},
                    {"computation", seconds(t.compute()) + " (all ranks)"},
                    {"run", seconds(t.measured()) + " (first to last event)"},
                    {"archive size", with_commas(size) + " bytes" +
                                         (calls ? " (" + std::to_string(size / calls) + " per MPI call)" : "")}};
    print_table(table, std::cout);
    std::cout << "calls by function:\n";
    TextTable by;
    for (const auto& [name, n] : per_region) by.push_back({"  " + name, with_commas(n)});
    print_table(by, std::cout);
  }
  for (const std::string& w : t.warnings) std::cerr << "poems: warning: " << t.path << ": " << w << '\n';
  result = kExitOk;
}

void export_goal(const TraceCliOptions& o, int& result) {
  TraceReplayRequest request = o.replay;
  request.trace = o.args.front();
  sim::SimulationOptions options;
  auto replay = resolve_replay(o.model, request, options, result);
  if (!replay) return;
  try {
    trace::TraceSchedule schedule(replay->trace, replay->options);
    std::ofstream out(o.goal);
    if (!out) {
      std::cerr << "poems: error: cannot write '" << o.goal << "'\n";
      result = kExitInputError;
      return;
    }
    out << "// GOAL schedule of " << replay->trace.path << " (poems trace --goal), computation " << replay->scale
        << "\n";
    taskgraph::write_goal(out, schedule);
    std::cerr << "wrote " << o.goal << " (" << replay->trace.ranks.size() << " ranks, "
              << with_commas(schedule.scope().messages) << " messages)\n";
  } catch (const trace::TraceError& e) {
    std::cerr << "poems: error: " << e.what() << '\n';
    result = kExitInputError;
    return;
  }
  result = kExitOk;
}

void record_run(const TraceCliOptions& o, int& result) {
  trace::RecordOptions r;
  const double np = quantity("-np", o.np, psl::kDimensionless, "an integer in 1..65536");
  if (np < 1 || np > 65536 || np != std::floor(np))
    usage_error("-np", "'" + o.np + "' is out of range; expected an integer in 1..65536");
  r.ranks = static_cast<int>(np);
  r.program = o.args.front();
  r.args.assign(o.args.begin() + 1, o.args.end());
  r.mpirun_args = split_words(o.mpirun_args);
  r.output = o.output;
  r.force = o.force;
  r.timeout_seconds = o.timeout;
  r.cpu_time = o.cpu_time;
  trace::RecordResult rec;
  {
    measure::PriorityGuard priority(o.nice);
    if (!priority.warning.empty()) std::cerr << "poems: warning: " << priority.warning << '\n';
    rec = trace::record(r);
  }
  if (!rec.error.empty()) {
    std::cerr << "poems: error: " << rec.error << '\n';
    result = rec.started ? kExitEvaluation : kExitInputError;
    return;
  }
  if (!rec.ok()) {
    std::cerr << "poems: error: the traced run failed ("
              << (rec.timed_out ? "timed out"
                  : rec.signal  ? "signal " + std::to_string(rec.signal)
                                : "exit code " + std::to_string(rec.exit_code))
              << ")" << (rec.anchor.empty() ? "; no archive was written" : "; the archive may be incomplete") << '\n';
    result = kExitEvaluation;
    return;
  }
  if (rec.anchor.empty()) {
    std::cerr << "poems: error: the run wrote no archive in '" << o.output
              << "' (is it an MPI program, and does it call MPI_Finalize?)\n";
    result = kExitEvaluation;
    return;
  }
  try {
    const trace::Trace t = trace::read_trace(rec.anchor);
    const std::uint64_t size = trace::archive_bytes(rec.anchor), calls = t.calls();
    char line[400];
    std::snprintf(line, sizeof line,
                  "poems trace: %d processes recorded in %s: %s MPI calls, %s messages, %s bytes (%.1f bytes per "
                  "call); run %.3f s\n",
                  r.ranks, rec.anchor.c_str(), with_commas(calls).c_str(), with_commas(t.messages.size()).c_str(),
                  with_commas(size).c_str(), calls ? static_cast<double>(size) / static_cast<double>(calls) : 0.0,
                  static_cast<double>(t.measured()) / 1e12);
    std::cerr << line;
    for (const std::string& w : t.warnings) std::cerr << "poems: warning: " << w << '\n';
  } catch (const trace::TraceError& e) {
    std::cerr << "poems: error: the archive cannot be read back: " << e.what() << '\n';
    result = kExitEvaluation;
    return;
  }
  result = kExitOk;
}

}  // namespace trace_cli

void normalize_trace_arguments(int argc, char** argv) {
  static char np[] = "--np";
  if (argc < 2 || std::string_view(argv[1]) != "trace") return;
  for (int i = 2; i < argc; ++i) {
    const std::string_view a(argv[i]);
    if (a == "--") break;
    if (a == "-np") argv[i] = np;
  }
}

void register_trace(CLI::App& app, int& result) {
  auto o = std::make_shared<TraceCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "trace",
      "Record an MPI run as an OTF2 archive (poems trace -np N -- PROGRAM ARGS), summarize one (--info "
      "ARCHIVE) or export its replay as GOAL (--goal OUT ARCHIVE)");
  cmd->add_option("args", o->args, "PROGRAM and its arguments (after --), or the ARCHIVE with --info/--goal");
  cmd->add_option("-n,--np", o->np, "Processes (also -np)")->capture_default_str();
  cmd->add_option("--mpirun", o->mpirun_args, "More arguments for mpirun, e.g. \"--bind-to core\"");
  cmd->add_option("-o,--output", o->output, "Directory of the archive (traces.otf2 in it)")->capture_default_str();
  cmd->add_flag("--force", o->force, "Replace an archive already in the output directory");
  cmd->add_option("--timeout", o->timeout, "Kill the run after this many seconds (0: no limit)")
      ->check(CLI::Range(0.0, 1e7));
  cmd->add_option("--nice", o->nice,
                  "Run at this nice value, and this session's scheduling group too (negative needs root), as "
                  "poems measure does")
      ->check(CLI::Range(-20, 19));
  cmd->add_flag("--cpu-time", o->cpu_time,
                "Also record each process's CPU time at every MPI call, for replays with --computation cpu (costs "
                "a system call per call)");
  cmd->add_flag("--info", o->info, "Summarize the ARCHIVE: ranks, calls, messages, size per call");
  cmd->add_option("--goal", o->goal, "Write the ARCHIVE's replay as a GOAL schedule (LogGOPSim's Schedgen)");
  cmd->add_option("--format", o->format, "Output of --info")->check(CLI::IsMember({"table", "json"}));
  cmd->add_option("--processor", o->model.processor, "--goal: hardware[processor] the replay models (with --traced-*)");
  cmd->add_option("--wg", o->model.wg, "--goal: Wg the replay models (with --traced-*)");
  add_trace_replay_options(cmd, o->replay, false);
  cmd->callback([o, &result] {
    if (o->args.empty())
      throw CLI::ValidationError("trace", "give -- PROGRAM ARGS to record, or an ARCHIVE with --info or --goal");
    if (o->info || !o->goal.empty()) {
      if (o->info && !o->goal.empty()) throw CLI::ValidationError("trace", "give one of --info and --goal");
      if (o->args.size() != 1) throw CLI::ValidationError("trace", "--info and --goal take one ARCHIVE");
      return o->info ? show_info(*o, result) : export_goal(*o, result);
    }
    record_run(*o, result);
  });
}

}  // namespace poems::cli
