// `poems direct PROGRAM --procs P`: direct execution (simulation[direct]). The
// program (a binary built with poems-mpicxx, or a C/C++ source compiled with
// it) runs as P simulated ranks (core/direct_run.h); the output is that of
// `poems simulate`.
#include <cstdio>
#include <filesystem>
#include <ostream>

#include "options.h"
#include "output.h"
#include "poems/base/units.h"
#include "poems/core/direct_run.h"
#include "poems/core/progress.h"
#include "poems/core/timeline.h"
#include "poems/sim/report.h"
#include "poems/trace/timeline.h"

namespace poems::cli {

namespace {

struct DirectOptions {
  std::string program, procs;
  std::vector<std::string> args, imports;
  ChoiceOptions choices;
  MachineOptions machine;
  std::string runtime, wg, compute = "measured", stack = "256KiB", isolation = "processes", format, timeline;
  std::int64_t epoch = -1;
  double compute_scale = 1, timeout = 0;
  std::vector<std::string> algorithms;
  std::size_t max_ranks_listed = 1024;
  core::StoreOptions store;
};

direct::DirectOptions direct_options(const DirectOptions& o, const core::DirectMachine& m) {
  direct::DirectOptions d;
  const double np = core::quantity("--procs", o.procs, base::kDimensionless, "an integer in 1..16777216");
  if (np < 1 || np > 16777216 || np != static_cast<double>(static_cast<std::uint32_t>(np)))
    throw core::UsageError("--procs", "'" + o.procs + "' is out of range; expected an integer in 1..16777216");
  d.ranks = static_cast<std::uint32_t>(np);
  d.sim = core::simulation_options(m.machine);
  d.processor = m.processor;
  d.compute = o.compute == "model" ? direct::ComputeMode::Model : direct::ComputeMode::Measured;
  d.compute_scale = o.compute_scale;
  const double stack = core::quantity("--stack-size", o.stack, base::kBytes, "a size in 16KiB..1GiB");
  if (stack < 16384 || stack > 1073741824.0)
    throw core::UsageError("--stack-size", "'" + o.stack + "' is not in 16KiB..1GiB");
  d.stack_bytes = static_cast<std::size_t>(stack);
  d.isolation = o.isolation == "threads" ? direct::Isolation::Threads : direct::Isolation::Processes;
  // MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) groups the ranks of a node.
  d.ranks_per_node = m.machine.flat() ? 1 : m.machine.network_model->spec().mapping.ranks_per_node;
  d.epoch_seconds = o.epoch;
  for (const std::string& a : o.algorithms) {
    const auto eq = a.find('=');
    auto op = taskgraph::parse_collective_op(a.substr(0, eq));
    auto alg = eq == std::string::npos ? std::nullopt : taskgraph::parse_collective_algorithm(a.substr(eq + 1));
    if (!op || !alg)
      throw core::UsageError("--algorithm",
                             "'" + a + "' is not OP=ALGORITHM (e.g. allreduce=dissemination, bcast=linear)");
    auto allowed = taskgraph::algorithms_for(*op);
    if (std::find(allowed.begin(), allowed.end(), *alg) == allowed.end())
      throw core::UsageError("--algorithm", "'" + a + "': not an algorithm of " + taskgraph::collective_op_name(*op));
    d.algorithms[*op] = *alg;
  }
  d.max_stuck_listed = std::max<std::size_t>(1, std::min<std::size_t>(o.max_ranks_listed, 1024));
  // The program's process draws the engine's progress itself when this
  // command would (a terminal, no --quiet: cli::run opened a scope).
  d.progress = static_cast<bool>(core::current_progress());
  // The program's process writes it (docs/trace.md section 7), from its own
  // working directory: the name is made absolute here.
  if (!o.timeline.empty()) {
    const std::filesystem::path path = std::filesystem::absolute(o.timeline);
    if (trace::is_otf2_name(o.timeline) && path.stem().empty())
      throw core::UsageError("--timeline", "'" + o.timeline + "' is not an OTF2 archive's name (NAME.otf2)");
    d.timeline = path.string();
  }
  return d;
}

void run_direct(const DirectOptions& o, Context& ctx) {
  core::DirectMachineRequest mr;
  mr.files = o.imports;
  mr.machine = o.choices.machine;
  mr.processor = o.choices.processor;
  mr.runtime = o.runtime;
  mr.paradigm = "simulation[direct]";  // the runtime a study's simulation[direct] cells are bound to
  if (!o.wg.empty()) mr.wg = o.wg;
  mr.overrides = o.machine.overrides;
  mr.needs_processor = o.compute == "model";
  const core::DirectMachine machine = core::direct_machine(mr);
  const direct::DirectOptions options = direct_options(o, machine);
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
  if (r.left_behind > 0) {
    std::string names;
    for (const std::string& n : r.left_behind_names) names += (names.empty() ? "" : ", ") + n;
    ctx.warn("the ranks left " + std::to_string(r.left_behind) + " process" + (r.left_behind == 1 ? "" : "es") +
             " running (" + names + (r.left_behind > r.left_behind_names.size() ? ", ..." : "") +
             "); killed when the run ended");
  }
  if (!run.error.empty()) {                               // a failed run has no results to show: the reason alone
    if (!o.timeline.empty() && r.timeline_error.empty())  // (what it did until it failed)
      ctx.err << "wrote " << o.timeline << (trace::is_otf2_name(o.timeline) ? " (OTF2, " : " (Chrome trace, ")
              << r.sim.ranks << " ranks)\n";
    if (r.sim.stuck_total > 0) sim::write_stuck_report(ctx.err, r.sim);  // a deadlock: who waits for what
    ctx.err << "poems: error: " << run.error << '\n';
    ctx.result = kExitEvaluation;
    return;
  }
  if (o.format == "json") {
    sim::write_json(ctx.out, r.sim, o.max_ranks_listed);
  } else {
    ctx.out << "program " << std::filesystem::path(o.program).filename().string() << " (" << options.ranks
            << " ranks) on " << machine.description << ", compute "
            << (options.compute == direct::ComputeMode::Model
                    ? std::string("from the processor model")
                    : "measured x" + base::format_quantity({options.compute_scale, base::kDimensionless}))
            << '\n';
    ctx.out << "LogGOPS " << core::loggops_text(options.sim.params) << '\n';
    if (options.sim.network && !options.sim.network->flat())
      ctx.out << "machine: " << options.sim.network->describe() << '\n';
    sim::write_table(ctx.out, r.sim, o.max_ranks_listed);
    char line[256];
    std::snprintf(line, sizeof line,
                  "direct execution: %.3f s on the host, %llu MPI calls, %llu thread switches, measured CPU %.3f s, "
                  "peak RSS %.1f MiB\n",
                  r.host_seconds, static_cast<unsigned long long>(r.mpi_calls),
                  static_cast<unsigned long long>(r.switches), r.measured_cpu_seconds,
                  static_cast<double>(r.peak_rss_bytes) / 1048576.0);
    ctx.out << line;
  }
  if (!o.timeline.empty() && r.timeline_error.empty())
    ctx.err << "wrote " << o.timeline << (trace::is_otf2_name(o.timeline) ? " (OTF2, " : " (Chrome trace, ")
            << r.sim.ranks << " ranks)\n";
  core::Cell cell;  // for the record's report
  cell.record = run.record;
  cell.run_id = run.run_id;
  cell.store_error = run.store_error;
  cell.store_path = run.store_path;
  ctx.result = report_record(cell, ctx);
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
  add_procs_option(cmd, o->procs, "Simulated ranks (also -np, --np, -n)", {"--np", "-n"})->required();
  cmd->add_option("--import,--machines", o->imports,
                  "PSL files with the machine components (default: the examples' machines.psl)");
  add_choice_options(cmd, o->choices);
  cmd->add_option("--runtime", o->runtime,
                  "runtime[MPI] component whose simulation[direct] profiles set the protocol with --machine "
                  "(eager_limit, handshake, semantics; default: the only one in the files; -S ... override it)");
  add_machine_options(cmd, o->machine);
  add_wg_option(cmd, o->wg);
  cmd->add_option("--compute", o->compute,
                  "measured: host CPU time between MPI calls (x --compute-scale); model: only what the program "
                  "charges (POEMS_Compute, POEMS_Advance)")
      ->check(CLI::IsMember({"measured", "model"}))
      ->capture_default_str();
  cmd->add_option("--compute-scale", o->compute_scale, "Simulated time per measured host time")
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
  cmd->add_option("--algorithm", o->algorithms, "Collective algorithm, OP=ALGORITHM (e.g. allreduce=dissemination)");
  cmd->add_option("--isolation", o->isolation,
                  "processes: each rank an OS process with its own globals and C library state; threads: "
                  "user-level threads sharing them (faster, smaller; for programs without per-rank globals)")
      ->check(CLI::IsMember({"processes", "threads"}))
      ->capture_default_str();
  cmd->add_option("--epoch", o->epoch,
                  "Seconds since 1970 the program's wall clock starts at (default: the host's time at the start)")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 40));
  cmd->add_option("--stack-size", o->stack, "Stack of each simulated rank with --isolation threads (virtual memory)")
      ->capture_default_str();
  add_timeout_option(cmd, o->timeout);
  add_format_option(cmd, o->format, {"table", "json"});
  cmd->add_option("--timeline", o->timeline,
                  "Write the simulated run as a Chrome trace (ui.perfetto.dev), or as OTF2 if it ends in .otf2 "
                  "(Vampir)");
  cmd->add_option("--max-ranks-listed", o->max_ranks_listed, "Per-rank lines to print")->capture_default_str();
  add_store_options(cmd, o->store);
  cmd->callback([o, cmd, &ctx] {
    finish_machine_options(cmd, o->machine);
    run_direct(*o, ctx);
  });
}

}  // namespace poems::cli
