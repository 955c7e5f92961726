#include "options.h"

#include <ostream>

#include "poems/core/limits.h"
#include "poems/core/parallel_study.h"
#include "poems/measure/mpirun.h"

namespace poems::cli {

core::SystemRequest SystemOptions::request(bool study_bindings) const {
  core::SystemRequest r;
  r.study_bindings = study_bindings;
  r.files.push_back(spec);
  r.files.insert(r.files.end(), imports.begin(), imports.end());
  r.model = model;
  r.study = study;
  r.sets = sets;
  r.where = where;
  return r;
}

void add_system_options(CLI::App* cmd, SystemOptions& o, bool spec_required) {
  CLI::Option* spec = cmd->add_option("spec", o.spec, "PSL specification")->check(CLI::ExistingFile);
  if (spec_required) spec->required();
  cmd->add_option("--import", o.imports, "More PSL files to load with SPEC (e.g. the local.psl of poems calibrate)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--model", o.model, "The model to evaluate (default: the study's, else the only one)");
  cmd->add_option("--study", o.study, "Evaluate in this study: its model, its `on Machine` and its `set` values");
  cmd->add_option("--set", o.sets,
                  "NAME=VALUE, checked as a study's `set`: a model parameter (npe_i=4), a study attribute "
                  "(compute=processor[measured]) or a component parameter (Odin.L=5.3us); repeatable");
}

void add_choice_options(CLI::App* cmd, ChoiceOptions& o) {
  cmd->add_option("--machine", o.machine,
                  "hardware[network] component to run on (instead of the study's); brings the processors "
                  "declared beside it (the calibrated local_cpu of local)");
  cmd->add_option("--processor", o.processor, "hardware[processor] component to choose");
}

void add_machine_options(CLI::App* cmd, MachineOptions& o) {
  cmd->add_option("-L", o.L, "Latency over the machine's (ns; units allowed, e.g. 5.3us)");
  cmd->add_option("-o", o.o, "CPU overhead per message (ns)");
  cmd->add_option("-g", o.g, "NIC gap per message (ns)");
  cmd->add_option("-G", o.G, "NIC gap per byte (ns/B, e.g. 0.04ns/B)");
  cmd->add_option("-O", o.O, "CPU overhead per byte (ns/B)");
  cmd->add_option("-S", o.S, "Eager limit: larger messages use rendezvous (bytes, e.g. 32KiB)");
  cmd->add_flag("--rendezvous-handshake", o.handshake,
                "Rendezvous pays a request/acknowledge round trip 2L+2o instead of L");
  cmd->add_option("--cpus", o.cpus, "CPUs per process (a GOAL file: default its highest cpu field + 1)")
      ->check(CLI::Range(1, 256));
  cmd->add_option("--nics", o.nics, "NICs per process (a GOAL file: default its highest nic field + 1)")
      ->check(CLI::Range(1, 256));
  cmd->add_option("--ranks-per-node", o.ranks_per_node,
                  "Ranks on each node, sharing its cores and NICs (default: the machine's, else 1; docs/network.md)")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--cores-per-node", o.cores_per_node,
                  "Cores of a node; fewer than its ranks' CPUs: they time-share them (default: one per CPU)")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--map", o.map_file, "Rank placement file: lines \"rank node\" (docs/network.md)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--contention", o.contention,
                  "Links and NICs shared by concurrent messages: none (LogGOPS, the default) or max-min "
                  "(flows at their max-min fair share; docs/network.md)");
  cmd->add_option("--wire-overhead", o.wire_overhead,
                  "Under max-min contention, bytes each message carries on the wire beyond its own (headers; "
                  "SMPI's 16): they share the links, a message alone costs the same (docs/network.md)");
  cmd->add_option("--time-sharing", o.time_sharing,
                  "How ranks that share a core take turns: fcfs (each computation or overhead takes it whole, "
                  "the default) or processor-sharing (r working ranks each at 1/r; docs/network.md)");
  cmd->add_option("--noise", o.noise,
                  "OS noise on every rank's computation: periodic:period=1ms,detour=25us[,phase=aligned], "
                  "poisson:interval=1ms,detour=25us, file:PATH or none (seeded: seed=N; docs/simulator.md)");
  cmd->add_option("--semantics", o.semantics,
                  "Message progress: matched (a message is processed once its receive is posted; the default) or "
                  "loggopsim (LogGOPSim exactly: processed on arrival); docs/simulator.md");
}

void add_memory_limit_option(CLI::App* cmd) {
  cmd->add_option_function<std::string>(
      "--memory-limit", [](const std::string& text) { core::set_memory_limit("--memory-limit", text); },
      "Memory the run may take (e.g. 32GiB; default: what the machine has available)");
}

void finish_machine_options(const CLI::App* cmd, MachineOptions& o) {
  core::MachineOverrides& m = o.overrides;
  m = {};
  if (cmd->count("-L")) m.L = o.L;
  if (cmd->count("-o")) m.o = o.o;
  if (cmd->count("-g")) m.g = o.g;
  if (cmd->count("-G")) m.G = o.G;
  if (cmd->count("-O")) m.O = o.O;
  if (cmd->count("-S")) m.S = o.S;
  if (o.handshake) m.rendezvous_handshake = true;
  if (cmd->count("--cpus")) m.cpus = o.cpus;
  if (cmd->count("--nics")) m.nics = o.nics;
  if (cmd->count("--semantics")) m.semantics = o.semantics;
  if (cmd->count("--ranks-per-node")) m.ranks_per_node = o.ranks_per_node;
  if (cmd->count("--cores-per-node")) m.cores_per_node = o.cores_per_node;
  if (cmd->count("--map")) m.map_file = o.map_file;
  if (cmd->count("--contention")) m.contention = o.contention;
  if (cmd->count("--wire-overhead")) m.wire_overhead = o.wire_overhead;
  if (cmd->count("--time-sharing")) m.time_sharing = o.time_sharing;
  if (cmd->count("--noise")) m.noise = o.noise;
}

void add_wg_option(CLI::App* cmd, std::string& wg) {
  cmd->add_option("--wg", wg,
                  "Compute time per unit of work of every compute node, over the processor components' "
                  "(e.g. 60ns)");
}

void add_method_option(CLI::App* cmd, std::string& method) {
  cmd->add_option("--method", method,
                  "analytic[LogGP]: closed-form (a model's registered closed form) or critical-path "
                  "(default: closed-form where one is registered)");
}

void add_paradigm_option(CLI::App* cmd, std::vector<std::string>& paradigms, const std::string& help,
                         const std::vector<std::string>& aliases) {
  std::string names = "--paradigm";
  for (const std::string& a : aliases) names += "," + a;
  cmd->add_option(names, paradigms, help + " (e.g. analytic[LogGP], simulation[MPI-Sim]; repeatable)");
}

CLI::Option* add_procs_option(CLI::App* cmd, std::string& procs, const std::string& help,
                              const std::vector<std::string>& aliases) {
  std::string names = "--procs";
  for (const std::string& a : aliases) names += "," + a;
  return cmd->add_option(names, procs, help);
}

void add_collective_options(CLI::App* cmd, core::CollectiveRequest& o, const std::string& verb) {
  cmd->add_option("--collective", o.operation, verb + " one collective: barrier, bcast, reduce, allreduce, ...");
  cmd->add_option("--algorithm", o.algorithm, "Collective algorithm (default: the operation's first)");
  add_procs_option(cmd, o.procs, "Processes of the collective");
  cmd->add_option("--size", o.size, "Per-process payload of the collective (bytes; units allowed)");
  cmd->add_option("--root", o.root, "Root of a rooted collective");
}

void add_timeout_option(CLI::App* cmd, double& seconds) {
  cmd->add_option("--timeout", seconds, "Seconds a program may run before it is killed (0: no limit)")
      ->check(CLI::Range(0.0, 1e7));
}

void add_measure_options(CLI::App* cmd, core::MeasureOptions& m) {
  cmd->add_option("--repetitions", m.repetitions, "measurement[mpirun]: runs per binding; the fastest counts")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_option("--max-ranks", m.max_ranks,
                  "measurement[mpirun]: largest process count to run (default: this machine's cores)")
      ->check(CLI::Range(1, 4096));
  add_timeout_option(cmd, m.timeout_seconds);
  cmd->add_option("--nice", m.nice,
                  "Run this command (kernel timings, measured runs) at this nice value, and its session's "
                  "scheduling group (Linux autogroups; restored after); negative values (root) keep other work "
                  "on a shared machine from disturbing the measurements")
      ->check(CLI::Range(-20, 19));
}

void add_format_option(CLI::App* cmd, std::string& format, const std::vector<std::string>& formats) {
  format = formats.front();
  cmd->add_option("--format", format, "Output format")->check(CLI::IsMember(formats))->capture_default_str();
}

void add_store_options(CLI::App* cmd, core::StoreOptions& o) {
  cmd->add_option("--db", o.path, "Knowledge base file (default: $POEMS_DB, else ./poems.db)");
  cmd->add_flag("--no-store", o.disabled, "Do not store results in the knowledge base");
}

void add_jobs_option(CLI::App* cmd, std::size_t& jobs) {
  cmd->add_option("--jobs,-j", jobs,
                  "Evaluations at once, in worker processes (default: this machine's cores; 1: one after another). "
                  "Results, stored runs and output are the serial run's; measured runs run alone")
      ->check(CLI::Range(std::size_t{1}, std::size_t{4096}));
}

std::size_t jobs_or_cores(std::size_t jobs) { return jobs ? jobs : core::default_jobs(); }

void add_plot_option(CLI::App* cmd, std::string& plot, std::string& plot_x) {
  cmd->add_option("--plot", plot, "Draw time and speedup against processes with gnuplot (OUT.png or OUT.svg)")
      ->check([](const std::string& p) {
        return p.ends_with(".png") || p.ends_with(".svg") ? std::string() : "'" + p + "' must end in .png or .svg";
      });
  cmd->add_option("--plot-x", plot_x,
                  "The plot's x axis: a varied name or processes (default: processes where they vary, else the "
                  "bindings one by one); speedup is drawn only against processes");
}

void add_disagree_option(CLI::App* cmd, double& pct) {
  cmd->add_option("--disagree", pct,
                  "Flag the rows where a paradigm's time differs from the first paradigm's by more than this "
                  "percentage")
      ->check(CLI::Range(0.0, 1e12))
      ->capture_default_str();
}

core::SessionOptions session_options(const core::System& system, const ChoiceOptions& choices,
                                     const MachineOptions& machine, const std::string& wg, const std::string& method) {
  core::SessionOptions s;
  s.choices.machine = choices.machine;
  s.choices.processor = choices.processor;
  s.choices.study = system.settings().study;
  s.choices.overrides = system.settings().overrides;
  s.machine = machine.overrides;
  if (!wg.empty()) s.wg = wg;
  s.method = method;
  return s;
}

struct PriorityScope::State {
  measure::PriorityGuard guard;
  explicit State(int nice) : guard(nice) {}
};

PriorityScope::PriorityScope(int nice, const Context& ctx) : state_(new State(nice)) {
  if (!state_->guard.warning.empty()) ctx.warn(state_->guard.warning);
}

PriorityScope::~PriorityScope() { delete state_; }

std::vector<std::string> rewrite_deprecated(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  bool program_args = false;
  for (const std::string& a : args) {
    program_args = program_args || a == "--";
    out.push_back(!program_args && a == "-np" ? "--procs" : a);
  }
  return out;
}

}  // namespace poems::cli
