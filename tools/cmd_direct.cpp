// `poems direct PROGRAM -np P`: direct execution (simulation[direct]). The
// program (a binary built with poems-mpicxx, or a C/C++ source compiled with
// it) runs as P simulated ranks; the output is that of `poems simulate`.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string_view>

#include <unistd.h>

#include "cli_common.h"
#include "direct_program.h"
#include "machine_model.h"
#include "model_source.h"
#include "poems/db/run_key.h"
#include "poems/direct/protocol.h"
#include "poems/psl/frontend.h"
#include "poems/recommender/stored_results.h"
#include "poems/sim/report.h"
#include "result_store.h"

namespace poems::cli {

namespace {

namespace fs = std::filesystem;

struct DirectCliOptions {
  std::string program;
  std::vector<std::string> args;
  std::string np;
  std::string machines = POEMS_DEFAULT_MACHINES;
  std::string machine, processor, wg;
  std::string semantics = "matched";
  std::string compute = "measured";
  double compute_scale = 1;
  ModelRequest loggops;  // -L -o -g -G -O -S and the handshake
  std::vector<std::string> algorithms;
  std::uint32_t cpus = 1, nics = 1;
  std::string stack = "256KiB";
  std::string isolation = "processes";
  std::uint32_t ranks_per_node = 1;
  std::int64_t epoch = -1;
  std::string format = "table";
  std::size_t max_ranks_listed = 1024;
  double timeout = 0;
  StoreOptions store;
};

// The machine: LogGOPS from --machine (a hardware[network] component of the
// machines file) or the command line, and the processor model for
// POEMS_Compute (Wg from --wg or a hardware[processor] component).
std::string resolve_machine_options(const DirectCliOptions& o, direct::DirectOptions& out) {
  out.sim = command_line_machine(o.loggops);
  std::string description = "command-line LogGOPS parameters";
  const bool needs_file = !o.machine.empty() || !o.processor.empty() || (o.compute == "model" && o.wg.empty());
  if (needs_file) {
    psl::Frontend frontend;
    if (!frontend.load_files({o.machines})) {
      frontend.diagnostics().print(std::cerr);
      throw std::runtime_error("cannot read the machines file '" + o.machines + "'");
    }
    MachineModel m;
    try {
      m = resolve_machine(frontend.program(), o.machine, o.processor, {});
    } catch (const std::runtime_error& e) {
      if (!o.machine.empty() || !o.processor.empty()) throw;
      return description;  // no processor to be found: POEMS_Compute will say so if it is called
    }
    if (!o.machine.empty()) {
      const sim::LogGOPS cli = out.sim.params;
      out.sim.params = m.params;
      for (const std::string& p : o.loggops.explicit_params) {
        if (p == "-L") out.sim.params.L = cli.L;
        if (p == "-o") out.sim.params.o = cli.o;
        if (p == "-g") out.sim.params.g = cli.g;
        if (p == "-G") out.sim.params.G = cli.G;
        if (p == "-O") out.sim.params.O = cli.O;
        if (p == "-S") out.sim.params.S = cli.S;
      }
      description = m.network;
    }
    if (o.wg.empty()) {
      out.processor = processor::ProcessorSpec{m.processor, "processor[wg]", {{"Wg", m.wg_ns}}, {}};
      description += ", Wg=" + psl::format_quantity({m.wg_ns, psl::kTime}) + " from " + m.processor;
    }
  }
  if (!o.wg.empty()) {
    const double wg = quantity("--wg", o.wg, psl::kTime, "a time per unit of work, e.g. 60ns");
    out.processor = processor::ProcessorSpec{"--wg", "processor[wg]", {{"Wg", wg}}, {}};
    description += ", Wg=" + psl::format_quantity({wg, psl::kTime});
  }
  return description;
}

direct::DirectOptions direct_options(const DirectCliOptions& o, std::string& machine) {
  direct::DirectOptions d;
  const double np = quantity("-np", o.np, psl::kDimensionless, "an integer in 1..16777216");
  if (np < 1 || np > 16777216 || np != static_cast<double>(static_cast<std::uint32_t>(np)))
    usage_error("-np", "'" + o.np + "' is out of range; expected an integer in 1..16777216");
  machine = resolve_machine_options(o, d);
  d.ranks = static_cast<std::uint32_t>(np);
  d.sim.cpus = o.cpus;
  d.sim.semantics = *sim::parse_semantics(o.semantics);
  if (d.sim.semantics == sim::Semantics::Loggopsim && o.loggops.handshake)
    usage_error("--rendezvous-handshake",
                "is a rule of the matched semantics; LogGOPSim's rendezvous has no handshake");
  d.sim.nics = o.nics;
  d.compute = o.compute == "model" ? direct::ComputeMode::Model : direct::ComputeMode::Measured;
  d.compute_scale = o.compute_scale;
  const double stack = quantity("--stack-size", o.stack, psl::kBytes, "a size in 16KiB..1GiB");
  if (stack < 16384 || stack > 1073741824.0) usage_error("--stack-size", "'" + o.stack + "' is not in 16KiB..1GiB");
  d.stack_bytes = static_cast<std::size_t>(stack);
  d.isolation = o.isolation == "threads" ? direct::Isolation::Threads : direct::Isolation::Processes;
  d.ranks_per_node = o.ranks_per_node;
  d.epoch_seconds = o.epoch;
  for (const std::string& a : o.algorithms) {
    const auto eq = a.find('=');
    auto op = taskgraph::parse_collective_op(a.substr(0, eq));
    auto alg = eq == std::string::npos ? std::nullopt : taskgraph::parse_collective_algorithm(a.substr(eq + 1));
    if (!op || !alg)
      usage_error("--algorithm", "'" + a + "' is not OP=ALGORITHM (e.g. allreduce=dissemination, bcast=linear)");
    auto allowed = taskgraph::algorithms_for(*op);
    if (std::find(allowed.begin(), allowed.end(), *alg) == allowed.end())
      usage_error("--algorithm", "'" + a + "': not an algorithm of " + taskgraph::collective_op_name(*op));
    d.algorithms[*op] = *alg;
  }
  d.max_stuck_listed = std::max<std::size_t>(1, std::min<std::size_t>(o.max_ranks_listed, 1024));
  return d;
}

db::Result to_db_result(const direct::DirectResult& d) {
  db::Result out = recommender::simulation_record(d.sim);
  out.extra["host_seconds"] = d.host_seconds;
  out.extra["mpi_calls"] = d.mpi_calls;
  out.extra["measured_cpu_seconds"] = d.measured_cpu_seconds;
  return out;
}

void run(const DirectCliOptions& o, int& result) {
  std::string machine;
  direct::DirectOptions options = direct_options(o, machine);
  std::string binary = o.program;
  if (is_source_file(o.program)) {
    std::string log;
    std::vector<std::string> shared;
    auto built = compile_direct_program(o.program, log, shared);
    std::cerr << log;
    if (options.isolation == direct::Isolation::Threads)
      for (const std::string& g : shared)
        std::cerr << "poems: warning: " << o.program << " defines the mutable global '" << g
                  << "': with --isolation threads all simulated ranks share it (docs/direct.md, \"Ranks\")\n";
    if (!built) {
      std::cerr << "poems: error: cannot compile '" << o.program << "' with " << wrapper_for(o.program) << '\n';
      result = kExitInputError;
      return;
    }
    binary = *built;
  } else if (!fs::is_regular_file(o.program) || ::access(o.program.c_str(), X_OK) != 0) {
    std::cerr << "poems: error: '" << o.program << "' is not an executable file or a C, C++ or Fortran source\n";
    result = kExitInputError;
    return;
  }

  std::ifstream in(binary, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  EvaluationKey key;
  key.evaluator = "simulation[direct]";
  key.model = "program:" + fs::path(o.program).filename().string();
  key.spec_hash = db::sha256_hex(bytes.str());
  nlohmann::json options_json = direct::options_to_json(options);
  options_json.erase("max_stuck_listed");
  // Only when not the matched semantics, so earlier runs' keys still match.
  if (options.sim.semantics == sim::Semantics::Matched) options_json.erase("semantics");
  key.binding = {{"machine", machine_json(options.sim)}, {"options", options_json}, {"args", o.args}};
  StoredEvaluation stored(o.store, key);

  DirectRun run = run_direct_program(binary, o.args, options,
                                     o.format == "json" ? ProgramOutput::ToStderr : ProgramOutput::Inherit, o.timeout);
  if (!run.result) {
    std::cerr << "poems: error: " << run.failure << '\n';
    stored.fail(run.failure);
    result = kExitEvaluation;
    return;
  }
  const direct::DirectResult& r = *run.result;
  if (o.format == "json") {
    sim::write_json(std::cout, r.sim, o.max_ranks_listed);
  } else {
    const auto& p = options.sim.params;
    std::cout << "program " << fs::path(o.program).filename().string() << " (" << options.ranks << " ranks) on "
              << machine << ", compute "
              << (options.compute == direct::ComputeMode::Model
                      ? std::string("from the processor model")
                      : "measured x" + psl::format_quantity({options.compute_scale, psl::kDimensionless}))
              << '\n';
    std::cout << "LogGOPS L=" << sim::format_ps(p.L) << " o=" << sim::format_ps(p.o) << " g=" << sim::format_ps(p.g)
              << " G=" << sim::format_fs_per_byte(p.G) << " O=" << sim::format_fs_per_byte(p.O) << " S=" << p.S
              << "B\n";
    sim::write_table(std::cout, r.sim, o.max_ranks_listed);
    char line[256];
    std::snprintf(line, sizeof line,
                  "direct execution: %.3f s on the host, %llu MPI calls, %llu thread switches, measured CPU %.3f s, "
                  "peak RSS %.1f MiB\n",
                  r.host_seconds, static_cast<unsigned long long>(r.mpi_calls),
                  static_cast<unsigned long long>(r.switches), r.measured_cpu_seconds,
                  static_cast<double>(r.peak_rss_bytes) / 1048576.0);
    std::cout << line;
  }
  if (!r.completed()) {
    if (r.sim.stuck_total > 0) sim::write_stuck_report(std::cerr, r.sim);  // a deadlock: who waits for what
    std::cerr << "poems: error: " << r.error << '\n';
    stored.fail(r.error);
    result = kExitEvaluation;
    return;
  }
  result = stored.finish(to_db_result(r)) ? kExitOk : kExitEvaluation;
}

}  // namespace

void normalize_direct_arguments(int argc, char** argv) {
  static char np[] = "--np";
  if (argc < 2 || std::string_view(argv[1]) != "direct") return;
  for (int i = 2; i < argc; ++i) {
    const std::string_view a(argv[i]);
    if (a == "--") break;  // the program's own arguments
    if (a == "-np") argv[i] = np;
  }
}

void register_direct(CLI::App& app, int& result) {
  auto o = std::make_shared<DirectCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "direct", "Direct execution (simulation[direct]): run an MPI program's real code on P simulated ranks");
  cmd->add_option("program", o->program,
                  "Program built with poems-mpicc/mpicxx/mpif90, or a C, C++ or Fortran source to build with them")
      ->required();
  cmd->add_option("args", o->args, "The program's own arguments (after --)");
  cmd->add_option("-n,--np", o->np, "Simulated ranks (also -np)")->required();
  cmd->add_option("--machine", o->machine, "hardware[network] component with L o g G O S (of --machines)");
  cmd->add_option("--machines", o->machines, "PSL file with the machine components")->capture_default_str();
  cmd->add_option("--processor", o->processor, "hardware[processor] component with Wg (for POEMS_Compute)");
  cmd->add_option("--wg", o->wg, "Compute time per unit of work for POEMS_Compute, e.g. 60ns");
  cmd->add_option("--compute", o->compute,
                  "measured: host CPU time between MPI calls (x --compute-scale); model: only what the program "
                  "charges (POEMS_Compute, POEMS_Advance)")
      ->check(CLI::IsMember({"measured", "model"}))
      ->capture_default_str();
  cmd->add_option("--compute-scale", o->compute_scale, "Simulated time per measured host time")
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
  cmd->add_option("-L", o->loggops.L, "Latency (ns; units allowed, e.g. 5.3us)")->capture_default_str();
  cmd->add_option("-o", o->loggops.o, "CPU overhead per message (ns)")->capture_default_str();
  cmd->add_option("-g", o->loggops.g, "NIC gap per message (ns)")->capture_default_str();
  cmd->add_option("-G", o->loggops.G, "NIC gap per byte (ns/B)")->capture_default_str();
  cmd->add_option("-O", o->loggops.O, "CPU overhead per byte (ns/B)")->capture_default_str();
  cmd->add_option("-S", o->loggops.S, "Eager limit (bytes)")->capture_default_str();
  cmd->add_flag("--rendezvous-handshake", o->loggops.handshake, "Rendezvous pays 2L+2o instead of L");
  cmd->add_option("--algorithm", o->algorithms, "Collective algorithm, OP=ALGORITHM (e.g. allreduce=dissemination)");
  cmd->add_option("--semantics", o->semantics,
                  "Message progress: matched (a message is processed once its receive is posted) or loggopsim "
                  "(LogGOPSim's rules: processed on arrival; docs/simulator.md)")
      ->check(CLI::IsMember({"matched", "loggopsim"}))
      ->capture_default_str();
  cmd->add_option("--cpus", o->cpus, "CPUs per process")->check(CLI::Range(1, 256))->capture_default_str();
  cmd->add_option("--nics", o->nics, "NICs per process")->check(CLI::Range(1, 256))->capture_default_str();
  cmd->add_option("--isolation", o->isolation,
                  "processes: each rank an OS process with its own globals and C library state; threads: "
                  "user-level threads sharing them (faster, smaller; for programs without per-rank globals)")
      ->check(CLI::IsMember({"processes", "threads"}))
      ->capture_default_str();
  cmd->add_option("--ranks-per-node", o->ranks_per_node,
                  "Ranks MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) groups together")
      ->check(CLI::Range(1u, 16777216u))
      ->capture_default_str();
  cmd->add_option("--epoch", o->epoch,
                  "Seconds since 1970 the program's wall clock starts at (default: the host's time at the start)")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 40));
  cmd->add_option("--stack-size", o->stack, "Stack of each simulated rank with --isolation threads (virtual memory)")
      ->capture_default_str();
  cmd->add_option("--timeout", o->timeout, "Kill the program after this many seconds (0: no limit)")
      ->check(CLI::Range(0.0, 1e7));
  cmd->add_option("--format", o->format, "Output format")->check(CLI::IsMember({"table", "json"}));
  cmd->add_option("--max-ranks-listed", o->max_ranks_listed, "Per-rank lines to print")->capture_default_str();
  add_store_options(cmd, o->store);
  cmd->callback([o, cmd, &result] {
    note_explicit_params(cmd, o->loggops);
    try {
      run(*o, result);
    } catch (const CLI::ValidationError&) {
      throw;
    } catch (const std::runtime_error& e) {
      std::cerr << "poems: error: " << e.what() << '\n';
      result = kExitInputError;
    }
  });
}

}  // namespace poems::cli
