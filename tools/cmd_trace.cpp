// `poems trace`: record an MPI run as an OTF2 archive, summarize an archive,
// export its replay as GOAL; and the trace-replay options `poems simulate
// --trace` and `poems analyze --trace` share (docs/trace.md). The replay,
// the recording and the archive's figures are the core's
// (core/trace_replay.h, core/trace_record.h); what is printed of them,
// report/trace_archive.h's.
#include <cmath>
#include <fstream>
#include <ostream>
#include <sstream>

#include "options.h"
#include "poems/core/trace_record.h"
#include "poems/report/text_table.h"
#include "poems/report/trace_archive.h"

namespace poems::cli {

// ---- options shared with simulate and analyze -----------------------------------------

void add_trace_options(CLI::App* cmd, TraceOptions& r, bool with_trace) {
  if (with_trace)
    cmd->add_option("--trace", r.archive,
                    "Replay an OTF2 archive (poems trace, Score-P): its anchor file or directory");
  // simulate and analyze read --import (their SPEC's option) as the replay's
  // machine files; --machines is its older spelling.
  cmd->add_option(with_trace ? "--machines" : "--import,--machines", r.machines,
                  "Trace replay: PSL files with the machine components (--machine, --processor, "
                  "--traced-processor; default: the examples' machines.psl)" +
                      std::string(with_trace ? "; the same as --import" : ""));
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
  cmd->add_option("--extrapolate", r.extrapolate,
                  "Trace replay: as Q ranks (or a grid, 32x32 or 16x16x16), each copying a traced rank of the same "
                  "role in the trace's line, ring, 2-D or 3-D grid (docs/trace.md, \"Extrapolation\")");
  cmd->add_option("--extrapolate-compute", r.extrapolate_compute,
                  "With --extrapolate: keep each rank's computation (weak scaling, the default) or multiply it by "
                  "this factor (strong scaling: a scaling model's value at Q over its value at the traced count)");
  cmd->add_option("--extrapolate-variation", r.extrapolate_variation,
                  "With --extrapolate: copy each traced rank's computation (the default), or resample how the traced "
                  "ranks running the same program varied: resample or resample,seed=N (docs/trace.md)");
}

core::TraceRequest TraceOptions::request(const ChoiceOptions& choices, const MachineOptions& machine,
                                         const std::string& wg) const {
  core::TraceRequest r;
  r.archive = archive;
  r.machines = machines;
  r.machine = choices.machine;
  r.processor = choices.processor;
  if (!wg.empty()) r.wg = wg;
  r.traced_processor = traced_processor;
  if (!traced_wg.empty()) r.traced_wg = traced_wg;
  r.compute_scale = compute_scale;
  r.algorithms = algorithms;
  r.window = window;
  r.extrapolate = extrapolate;
  r.extrapolate_compute = extrapolate_compute;
  r.extrapolate_variation = extrapolate_variation;
  r.cpu_time = computation == "cpu";
  r.overrides = machine.overrides;
  return r;
}

// ---- poems trace ---------------------------------------------------------------------------

namespace trace_cli {

struct TraceCliOptions {
  std::string procs = "1";
  std::string mpirun_args, output = "poems-trace";
  bool force = false;
  double timeout = 0;
  int nice = 0;
  bool cpu_time = false;
  bool info = false;
  std::string goal;
  std::string format;
  std::vector<std::string> args;  // PROGRAM ARGS, or the ARCHIVE
  SystemOptions system;           // --spec: record the program a model attaches
  ChoiceOptions choices;          // --processor for the GOAL's compute scale
  std::string wg;
  TraceOptions replay;
};

std::vector<std::string> split_words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

void show_info(const TraceCliOptions& o, Context& ctx) {
  const trace::Trace t = core::read_trace_archive(o.args.front());
  report::write_trace_summary(t, core::summarize_trace(t), o.format, ctx.out);
  for (const std::string& w : t.warnings) ctx.warn(t.path + ": " + w);
}

void export_goal(const TraceCliOptions& o, Context& ctx) {
  TraceOptions options = o.replay;
  options.archive = o.args.front();
  const auto replay = core::prepare_replay(options.request(o.choices, {}, o.wg));
  for (const std::string& w : replay->trace.warnings) ctx.warn(replay->trace.path + ": " + w);
  std::ofstream out(o.goal);
  if (!out) throw core::UsageError("--goal", "cannot write '" + o.goal + "'");
  const std::uint64_t messages = core::write_replay_goal(*replay, out);
  ctx.err << "wrote " << o.goal << " (" << replay->trace.ranks.size() << " ranks, " << report::with_commas(messages)
          << " messages)\n";
}

void record_run(const TraceCliOptions& o, Context& ctx) {
  trace::RecordOptions r;
  if (o.system.spec.empty()) {
    const double np = core::quantity("--procs", o.procs, base::kDimensionless, "an integer in 1..65536");
    if (np < 1 || np > 65536 || np != std::floor(np))
      throw core::UsageError("--procs", "'" + o.procs + "' is out of range; expected an integer in 1..65536");
    r.ranks = static_cast<int>(np);
    r.program = o.args.front();
    r.args.assign(o.args.begin() + 1, o.args.end());
  }
  r.mpirun_args = split_words(o.mpirun_args);
  r.output = o.output;
  r.force = o.force;
  r.timeout_seconds = o.timeout;
  r.cpu_time = o.cpu_time;
  core::RecordedTrace rec;
  {
    const PriorityScope priority(o.nice, ctx);
    rec = o.system.spec.empty() ? core::record_trace(r) : core::record_model_program(o.system.request(), r);
  }
  ctx.err << report::recorded_trace_line(rec);
  for (const std::string& w : rec.trace.warnings) ctx.warn(w);
}

}  // namespace trace_cli

using namespace trace_cli;

void register_trace(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<TraceCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "trace",
      "Record an MPI run as an OTF2 archive (poems trace --procs N -- PROGRAM ARGS), summarize one (--info "
      "ARCHIVE) or export its replay as GOAL (--goal OUT ARCHIVE)");
  cmd->add_option("args", o->args, "PROGRAM and its arguments (after --), or the ARCHIVE with --info/--goal");
  add_procs_option(cmd, o->procs, "Processes (also -np, --np, -n)", {"--np", "-n"})->capture_default_str();
  cmd->add_option("--mpirun", o->mpirun_args, "More arguments for mpirun, e.g. \"--bind-to core\"");
  cmd->add_option("-o,--output", o->output, "Directory of the archive (traces.otf2 in it)")->capture_default_str();
  cmd->add_flag("--force", o->force, "Replace an archive already in the output directory");
  add_timeout_option(cmd, o->timeout);
  cmd->add_option("--nice", o->nice,
                  "Run at this nice value, and this session's scheduling group too (negative needs root), as "
                  "poems measure does")
      ->check(CLI::Range(-20, 19));
  cmd->add_flag("--cpu-time", o->cpu_time,
                "Also record each process's CPU time at every MPI call, for replays with --computation cpu (costs "
                "a system call per call)");
  cmd->add_flag("--info", o->info, "Summarize the ARCHIVE: ranks, calls, messages, size per call");
  cmd->add_option("--goal", o->goal, "Write the ARCHIVE's replay as a GOAL schedule (LogGOPSim's Schedgen)");
  add_format_option(cmd, o->format, {"table", "json"});
  cmd->add_option("--processor", o->choices.processor,
                  "--goal: hardware[processor] the replay models (with --traced-*)");
  add_wg_option(cmd, o->wg);
  add_trace_options(cmd, o->replay, false);
  cmd->add_option("--spec", o->system.spec,
                  "Record the program this PSL file's model attaches (program { }), for its binding")
      ->check(CLI::ExistingFile);
  cmd->add_option("--model", o->system.model, "--spec: the model (default: the study's, else the only one)");
  cmd->add_option("--study", o->system.study, "--spec: take this study's `set` values");
  cmd->add_option("--set", o->system.sets, "--spec: NAME=VALUE of a model parameter (px=2); repeatable");
  cmd->callback([o, &ctx] {
    if (!o->system.spec.empty()) {
      if (!o->args.empty() || o->info || !o->goal.empty())
        throw core::UsageError("--spec", "records the model's program: give no PROGRAM, --info or --goal with it");
      return record_run(*o, ctx);
    }
    if (!o->system.model.empty() || !o->system.study.empty() || !o->system.sets.empty())
      throw core::UsageError(!o->system.model.empty()   ? "--model"
                             : !o->system.study.empty() ? "--study"
                                                        : "--set",
                             "takes --spec (the PSL file whose model's program to record)");
    if (o->args.empty())
      throw core::UsageError("trace",
                             "give -- PROGRAM ARGS to record, --spec FILE, or an ARCHIVE with --info or --goal");
    if (o->info || !o->goal.empty()) {
      if (o->info && !o->goal.empty()) throw core::UsageError("trace", "give one of --info and --goal");
      if (o->args.size() != 1) throw core::UsageError("trace", "--info and --goal take one ARCHIVE");
      return o->info ? show_info(*o, ctx) : export_goal(*o, ctx);
    }
    record_run(*o, ctx);
  });
}

}  // namespace poems::cli
