// `poems direct PROGRAM --procs P`: direct execution (simulation[direct]). The
// program (a binary built with poems-mpicxx, or a C/C++ source compiled with
// it) runs as P simulated ranks (core/direct_run.h); the output is that of
// `poems simulate` (report/direct_run.h).
#include <ostream>

#include "options.h"
#include "poems/core/direct_run.h"
#include "poems/report/direct_run.h"
#include "poems/report/evaluation.h"
#include "poems/sim/report.h"

namespace poems::cli {

namespace {

struct DirectOptions {
  std::string program;
  std::vector<std::string> args, imports;
  ChoiceOptions choices;
  MachineOptions machine;
  std::string runtime, wg, format;
  core::DirectRunSettings run;
  double timeout = 0;
  core::StoreOptions store;
};

void run_direct(const DirectOptions& o, Context& ctx) {
  core::DirectMachineRequest mr;
  mr.files = o.imports;
  mr.machine = o.choices.machine;
  mr.processor = o.choices.processor;
  mr.runtime = o.runtime;
  mr.paradigm = "simulation[direct]";  // the runtime a study's simulation[direct] cells are bound to
  if (!o.wg.empty()) mr.wg = o.wg;
  mr.overrides = o.machine.overrides;
  mr.needs_processor = o.run.compute == "model";
  const core::DirectMachine machine = core::direct_machine(mr);
  const direct::DirectOptions options = core::direct_options(o.run, machine);
  core::Store store(o.store);
  const core::PreparedProgram program = core::prepare_program(o.program);
  ctx.err << program.compile_log;
  if (options.isolation == direct::Isolation::Threads)
    for (const std::string& g : program.shared_globals)
      ctx.warn(o.program + " defines the mutable global '" + g +
               "': with --isolation threads all simulated ranks share it (docs/direct.md, \"Ranks\")");
  ctx.out.flush();
  const core::DirectOutcome run = core::run_direct(
      o.program, program.binary, o.args, options, machine.machine,
      o.format == "json" ? core::ProgramOutput::ToStderr : core::ProgramOutput::Inherit, o.timeout, store);
  if (!run.run.result) throw core::EvaluationError(run.error);
  const direct::DirectResult& r = *run.run.result;
  if (const std::string left = report::left_behind(r); !left.empty()) ctx.warn(left);
  const bool timeline = !o.run.timeline.empty() && r.timeline_error.empty();
  // A failed run has no results to show: the reason alone (and what it did
  // until it failed: its timeline; a deadlock's report of who waits for what).
  if (!run.error.empty()) {
    if (timeline) ctx.err << report::timeline_written(o.run.timeline, r.sim.ranks);
    if (r.sim.stuck_total > 0) sim::write_stuck_report(ctx.err, r.sim);
    ctx.err << "poems: error: " << run.error << '\n';
    ctx.result = kExitEvaluation;
    return;
  }
  report::write_direct_run(o.program, options, machine, r, o.format, o.run.max_ranks_listed, ctx.out);
  if (timeline) ctx.err << report::timeline_written(o.run.timeline, r.sim.ranks);
  core::Cell cell;  // for the record's report
  cell.record = run.record;
  cell.run_id = run.run_id;
  cell.store_error = run.store_error;
  cell.store_path = run.store_path;
  ctx.result = report::write_record(cell, ctx.err) ? kExitOk : kExitEvaluation;
  if (!r.timeline_error.empty()) {  // the run itself is done (and stored); its timeline is not
    ctx.err << "poems: error: --timeline: " << r.timeline_error << '\n';
    ctx.result = kExitInputError;
  }
}

}  // namespace

void register_direct(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<DirectOptions>();
  CLI::App* cmd = app.add_subcommand(
      "direct", "Direct execution (simulation[direct]): run an MPI program's real code on P simulated ranks");
  cmd->add_option("program", o->program,
                  "Program built with poems-mpicc/mpicxx/mpif90, or a C, C++ or Fortran source to build with them")
      ->required();
  cmd->add_option("args", o->args, "The program's own arguments (after --)");
  add_procs_option(cmd, o->run.procs, "Simulated ranks (also -np, --np, -n)", {"--np", "-n"})->required();
  cmd->add_option("--import,--machines", o->imports,
                  "PSL files with the machine components (default: the examples' machines.psl)");
  add_choice_options(cmd, o->choices);
  cmd->add_option("--runtime", o->runtime,
                  "runtime[MPI] component whose simulation[direct] profiles set the protocol with --machine "
                  "(eager_limit, handshake, semantics; default: the only one in the files; -S ... override it)");
  add_machine_options(cmd, o->machine);
  add_wg_option(cmd, o->wg);
  cmd->add_option("--compute", o->run.compute,
                  "measured: host CPU time between MPI calls (x --compute-scale); model: only what the program "
                  "charges (POEMS_Compute, POEMS_Advance)")
      ->check(CLI::IsMember({"measured", "model"}))
      ->capture_default_str();
  cmd->add_option("--compute-scale", o->run.compute_scale, "Simulated time per measured host time")
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
  cmd->add_option("--algorithm", o->run.algorithms,
                  "Collective algorithm, OP=ALGORITHM (e.g. allreduce=dissemination)");
  cmd->add_option("--isolation", o->run.isolation,
                  "processes: each rank an OS process with its own globals and C library state; threads: "
                  "user-level threads sharing them (faster, smaller; for programs without per-rank globals)")
      ->check(CLI::IsMember({"processes", "threads"}))
      ->capture_default_str();
  cmd->add_option("--handover", o->run.handover,
                  "How the turn passes to a rank process: one-cpu (every rank and the engine on the CPU the run "
                  "starts on), spin (any CPU; a waiting side spins up to 50 us), sleep (any CPU; it sleeps)")
      ->check(CLI::IsMember({"one-cpu", "spin", "sleep"}))
      ->capture_default_str();
  cmd->add_option("--early", o->run.early,
                  "on: a wait whose receive's message was sent already, or whose send's data are packed, lets the "
                  "rank go on before the engine simulates it (fewer hand-overs, the same virtual times); off: every "
                  "wait hands the turn to the engine")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();
  o->run.host_cores = "auto";
  cmd->add_option("--host-cores", o->run.host_cores,
                  "Host cores the ranks compute on at once (processes only): 1 runs one rank or the engine at a "
                  "time; N > 1 runs the ranks at once on N CPUs, the engine behind them (the same virtual times); "
                  "auto: this host's CPUs, at most one a rank, 1 for a program that names MPI_Init_thread")
      ->capture_default_str();
  cmd->add_option("--receive-overhead", o->run.receive_overhead,
                  "When a receive's CPU overhead o + (s-1)O is paid: match (when its message is matched, as Open "
                  "MPI copies an eager message) or wait (in the call that completes it, in the program's order, as "
                  "SimGrid's SMPI charges smpi/or)")
      ->check(CLI::IsMember({"match", "wait"}))
      ->capture_default_str();
  cmd->add_option("--epoch", o->run.epoch,
                  "Seconds since 1970 the program's wall clock starts at (default: the host's time at the start)")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 40));
  cmd->add_option("--stack-size", o->run.stack,
                  "Stack of each simulated rank with --isolation threads (virtual memory)")
      ->capture_default_str();
  add_timeout_option(cmd, o->timeout);
  add_format_option(cmd, o->format, {"table", "json"});
  cmd->add_option("--timeline", o->run.timeline,
                  "Write the simulated run as a Chrome trace (ui.perfetto.dev), or as OTF2 if it ends in .otf2 "
                  "(Vampir)");
  cmd->add_option("--max-ranks-listed", o->run.max_ranks_listed, "Per-rank lines to print")->capture_default_str();
  add_store_options(cmd, o->store);
  cmd->callback([o, cmd, &ctx] {
    finish_machine_options(cmd, o->machine);
    run_direct(*o, ctx);
  });
}

}  // namespace poems::cli
