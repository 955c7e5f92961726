#include "poems/core/direct_run.h"
#include "poems/base/file_bytes.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "poems/base/suggest.h"
#include "poems/base/units.h"
#include "poems/core/error.h"
#include "poems/core/evaluation_plan.h"
#include "poems/core/progress.h"
#include "poems/direct/protocol.h"
#include "poems/psl/compiler.h"
#include "poems/psl/frontend.h"
#include "poems/sim/report.h"
#include "poems/taskgraph/collectives.h"
#include "poems/trace/timeline.h"

namespace poems::core {

namespace fs = std::filesystem;

namespace {

std::vector<std::string>& machine_files() {
  static std::vector<std::string> files;
  return files;
}

// Component `c` evaluated with its defaults; InputError with the located
// diagnostics if it cannot be (`what`: "component", "runtime").
psl::ComponentInstance instance_of(const psl::Frontend& fe, const psl::ComponentDecl& c, const std::string& what) {
  psl::DiagnosticEngine diags(fe.sources());
  std::optional<psl::ComponentInstance> inst = psl::instantiate_component(fe.program(), c, {}, diags);
  if (!inst) {
    std::ostringstream text;
    diags.print(text);
    throw InputError(what + " " + c.name.name + " cannot be evaluated", text.str());
  }
  return std::move(*inst);
}

std::map<std::string, base::Value> parameters_of(const psl::Frontend& fe, const psl::ComponentDecl& c) {
  return instance_of(fe, c, "component").params;
}

// The processors with a Wg: those in `file` (the machine's) if any, else all.
std::vector<const psl::ComponentDecl*> wg_processors(const psl::Program& program, psl::FileId file) {
  std::vector<const psl::ComponentDecl*> all, beside;
  for (const psl::Module& m : program.modules)
    for (const psl::ComponentDecl& c : m.components) {
      if (c.domain.head != "hardware" || c.domain.path != "processor") continue;
      bool wg = false;
      for (const psl::Binding& p : c.params) wg = wg || p.name.name == "Wg";
      if (!wg) continue;
      all.push_back(&c);
      if (m.file == file) beside.push_back(&c);
    }
  return beside.empty() ? all : beside;
}

// A processor the compute requests of an imported model reach, with the Wg
// its parameters and the profile it was reached through give it (as
// plan_evaluation reads a compute TED's chain).
struct ReachedProcessor {
  std::string name;
  std::optional<double> wg;  // ns; nullopt: no Wg time
};

std::string processor_text(const ReachedProcessor& p) {
  return p.name + (p.wg ? " (Wg=" + base::format_quantity({*p.wg, base::kTime}) + ")" : " (no Wg)");
}

// The models of the files with a taskgraph, each composed as a study's
// simulation[direct] cell composes it (on `machine` if given, compute =
// processor[wg]), and the processors their compute tasks' requests reach.
// nullopt: the files have no such model. InputError, located, when a model
// cannot be composed.
std::optional<std::vector<ReachedProcessor>> model_processors(const psl::Frontend& fe, const std::string& machine,
                                                              std::vector<std::string>& models) {
  for (const psl::Module& m : fe.program().modules)
    for (const psl::ModelDecl& model : m.models)
      if (!model.taskgraphs.empty()) models.push_back(model.name.name);
  if (models.empty()) return std::nullopt;
  std::vector<ReachedProcessor> reached;
  for (const std::string& model : models) {
    psl::CompileRequest request;
    request.model = model;
    if (!machine.empty()) request.chosen = {machine};
    request.study["paradigm"] = base::Value::of_string("simulation[direct]", base::Value::Kind::Ref);
    request.study["compute"] = base::Value::of_string("processor[wg]", base::Value::Kind::Ref);
    psl::DiagnosticEngine diags(fe.sources());
    const std::optional<psl::SystemModel> s = psl::compile_system(fe.program(), request, diags);
    if (!s) {
      std::ostringstream text;
      diags.print(text);
      throw InputError("model " + model + " cannot be composed to find the processor of its computation" +
                           (machine.empty() ? std::string() : " on --machine " + machine) +
                           "; give --processor NAME or --wg T",
                       text.str());
    }
    for (const psl::TaskNodeLink& link : s->task_nodes) {
      if (link.kind != "task" || link.component == psl::kNoInstance) continue;
      const std::vector<std::size_t> chain = s->call_chain(link.component, "hardware");
      if (chain.size() < 2 || s->instances[chain.back()].domain != "hardware[processor]") continue;
      ReachedProcessor p{s->instances[chain.back()].name, std::nullopt};
      std::optional<base::Value> wg;
      for (std::size_t k = 1; k < chain.size(); ++k) {
        const psl::ComponentInstance& to = s->instances[chain[k]];
        if (auto it = to.params.find("Wg"); it != to.params.end()) wg = it->second;
        for (const psl::InterfaceBinding& b : s->bindings)
          if (b.from == chain[k - 1] && b.to == chain[k] && b.accepts < to.accepts.size())
            if (auto it = to.accepts[b.accepts].profile.find("Wg"); it != to.accepts[b.accepts].profile.end())
              wg = it->second;
      }
      if (wg && wg->kind == base::Value::Kind::Number && wg->dimension == base::kTime) p.wg = wg->number;
      bool known = false;
      for (const ReachedProcessor& q : reached) known = known || (q.name == p.name && q.wg == p.wg);
      if (!known) reached.push_back(std::move(p));
    }
  }
  return reached;
}

[[noreturn]] void located_error(const psl::Frontend& fe, const psl::SourceLocation& at, const std::string& message,
                                const std::string& summary) {
  if (!at.valid()) throw InputError(message);
  psl::DiagnosticEngine diags(fe.sources());
  diags.error(at, message);
  std::ostringstream text;
  diags.print(text);
  throw InputError(summary, text.str());
}

// The MPI runtime that carries `paradigm`'s messages: the one named, else
// the only runtime component of the files accepting it (nullopt: none).
// Several are never chosen between silently.
std::optional<psl::ComponentInstance> runtime_for(const psl::Frontend& fe, const std::string& name,
                                                  const std::string& paradigm) {
  std::vector<psl::ComponentInstance> found;
  std::vector<std::string> runtimes;
  for (const psl::Module& m : fe.program().modules)
    for (const psl::ComponentDecl& c : m.components) {
      if (c.domain.head != "runtime") continue;
      runtimes.push_back(c.name.name);
      if (!name.empty() && c.name.name != name) continue;
      psl::ComponentInstance inst = instance_of(fe, c, "runtime");
      if (runtime_accepts(inst, paradigm))
        found.push_back(std::move(inst));
      else if (!name.empty())
        throw UsageError("--runtime", "'" + name + "' accepts no " + paradigm + " messages (no accepts profile with " +
                                          "evaluation = " + paradigm + ")");
    }
  if (!name.empty() && found.empty()) {
    const psl::ComponentDecl* c = fe.program().find_component(name);
    throw UsageError("--runtime", c ? "'" + name + "' is " + c->domain.str() + ", not a runtime component"
                                    : "no component named '" + name + "' (runtime components: " +
                                          (runtimes.empty() ? std::string("none") : base::name_list(runtimes)) + ")" +
                                          base::did_you_mean(name, runtimes));
  }
  if (found.size() > 1) {
    std::vector<std::string> names;
    for (const psl::ComponentInstance& c : found) names.push_back(c.name);
    throw UsageError("--runtime", "several runtime components accept " + paradigm + " messages (" +
                                      base::name_list(names) + "); choose one with --runtime NAME");
  }
  if (found.empty()) return std::nullopt;
  return std::move(found.front());
}

// The runtime's requests composed with `machine` chosen, as a study `on` the
// machine composes them: they must reach it, or the runtime's protocol
// would be applied to messages it does not carry. InputError, located.
void check_runtime_reaches(const psl::Frontend& fe, const psl::ComponentInstance& runtime, const std::string& machine,
                           const std::string& paradigm) {
  psl::CompileRequest request;
  request.chosen = {machine};
  request.study["paradigm"] = base::Value::of_string(paradigm, base::Value::Kind::Ref);
  request.study["compute"] = base::Value::of_string("processor[wg]", base::Value::Kind::Ref);
  const std::string summary = "runtime " + runtime.name + " does not carry the messages of --machine " + machine;
  psl::DiagnosticEngine diags(fe.sources());
  const std::optional<psl::SystemModel> composed = psl::compile_component(fe.program(), *runtime.decl, request, diags);
  if (!composed) {
    std::ostringstream text;
    diags.print(text);
    throw InputError(summary, text.str());
  }
  // The hardware its call_return requests lead to, as a study's plan finds
  // its network from the runtime (plan_evaluation).
  const std::vector<std::size_t> chain = composed->call_chain(0, "hardware");
  if (!chain.empty() && composed->instances[chain.back()].name == machine) return;
  const psl::ComponentInstance* reached = chain.empty() ? nullptr : &composed->instances[chain.back()];
  located_error(fe, runtime.decl->name.location,
                "the requests of runtime " + runtime.name + " reach " +
                    (reached ? reached->name + " (" + reached->domain + ")" : std::string("no hardware component")) +
                    ", not --machine " + machine + ": a runtime carries the messages of the network its requests reach",
                summary);
}

// The runtime's eager_limit, handshake and semantics over the network's, as
// a composition applies those of the profiles its messages are bound through.
void apply_runtime(const psl::Frontend& fe, const psl::ComponentInstance& runtime, const std::string& paradigm,
                   Machine& machine) {
  const std::string summary = "runtime " + runtime.name + " cannot be evaluated";
  RuntimeProtocol p;
  try {
    p = runtime_protocol(runtime, paradigm);
  } catch (const PlanError& e) {
    located_error(fe, e.location(), e.what(), summary);
  }
  if (p.eager_limit) machine.params.S = *p.eager_limit;
  if (p.handshake) machine.rendezvous_handshake = *p.handshake;
  if (!p.semantics) return;
  const std::string problem = runtime_semantics_problem(runtime.name, *p.semantics, machine.rendezvous_handshake);
  if (!problem.empty())
    located_error(fe, semantics_location(fe.program(), {}, runtime.name, *p.semantics), problem, summary);
  machine.semantics = *semantics_value(*p.semantics);
}

}  // namespace

void set_default_machine_files(std::vector<std::string> files) { machine_files() = std::move(files); }
const std::vector<std::string>& default_machine_files() { return machine_files(); }

DirectMachine direct_machine(const DirectMachineRequest& r) {
  DirectMachine out;
  out.machine = command_line_machine(r.overrides);
  out.description = "command-line LogGOPS parameters";
  std::optional<double> wg;
  if (r.wg) wg = quantity("--wg", *r.wg, base::kTime, "a time per unit of work, e.g. 60ns");
  if (!r.runtime.empty() && r.machine.empty())
    throw UsageError("--runtime", "sets the protocol of a machine component's messages; give --machine NAME too");
  const bool needs_file = !r.machine.empty() || !r.processor.empty() || (r.needs_processor && !wg);
  if (needs_file) {
    const std::vector<std::string> files = r.files.empty() ? default_machine_files() : r.files;
    if (files.empty()) throw UsageError("--import", "no PSL file to read machines from; give --import FILE");
    psl::Frontend fe;
    if (!fe.load_files(files)) {
      std::ostringstream text;
      fe.diagnostics().print(text);
      throw InputError("cannot read the machines of " + base::name_list(files), text.str());
    }
    psl::FileId machine_file = psl::kNoFile;
    if (!r.machine.empty()) {
      const psl::ComponentDecl& c = hardware_component(fe.program(), r.machine, "--machine");
      if (c.domain.path != "network")
        throw UsageError("--machine", "'" + r.machine + "' is " + c.domain.str() + ", not hardware[network]");
      out.machine.params = loggops_of(parameters_of(fe, c), r.machine);
      out.machine.network_model = network_of_component(fe.program(), c, parameters_of(fe, c), out.machine.params);
      out.machine.noise = noise_of_component(fe.program(), c, parameters_of(fe, c));
      out.machine.network = r.machine;
      out.description = r.machine;
      if (!r.paradigm.empty())
        if (std::optional<psl::ComponentInstance> runtime = runtime_for(fe, r.runtime, r.paradigm)) {
          check_runtime_reaches(fe, *runtime, r.machine, r.paradigm);
          apply_runtime(fe, *runtime, r.paradigm, out.machine);
          out.runtime = runtime->name;
          out.description += " with " + runtime->name;
        }
      apply_overrides(r.overrides, out.machine);  // the command line's -S ... win
      machine_file = c.location.file;
    }
    if (!wg) {
      const psl::ComponentDecl* cpu = nullptr;
      std::vector<std::string> models;
      std::optional<std::vector<ReachedProcessor>> reached;
      if (!r.processor.empty()) {
        cpu = &hardware_component(fe.program(), r.processor, "--processor");
      } else if (r.needs_processor && (reached = model_processors(fe, r.machine, models))) {
        // The processor the model's own requests select, never another one
        // of the files (a machine file's Wg prices a different code).
        std::vector<std::string> candidates;
        for (const ReachedProcessor& p : *reached) candidates.push_back(processor_text(p));
        const bool one_wg = !reached->empty() && std::all_of(reached->begin(), reached->end(), [&](const auto& p) {
          return p.wg && *p.wg == *reached->front().wg;
        });
        if (!one_wg) {
          std::vector<std::string> all;
          for (const psl::ComponentDecl* c : wg_processors(fe.program(), psl::kNoFile)) all.push_back(c->name.name);
          throw UsageError(
              "--processor",
              reached->empty()
                  ? "the compute requests of model " + base::name_list(models) + " reach no hardware[processor]" +
                        (r.machine.empty() ? std::string() : " on --machine " + r.machine) +
                        " (processors with a Wg: " + (all.empty() ? std::string("none") : base::name_list(all)) +
                        "); choose one with --processor NAME, or give --wg T"
                  : "the compute requests of model " + base::name_list(models) +
                        " reach processors with different Wg (" + base::name_list(candidates) +
                        "); choose one with --processor NAME, or give --wg T");
        }
        const ReachedProcessor& p = reached->front();
        out.processor = processor::ProcessorSpec{p.name, "processor[wg]", {{"Wg", *p.wg}}, {}};
        out.description += ", Wg=" + base::format_quantity({*p.wg, base::kTime}) + " from " + p.name + " (model " +
                           base::name_list(models) + ")";
      } else {
        const std::vector<const psl::ComponentDecl*> found = wg_processors(fe.program(), machine_file);
        if (found.size() > 1) {
          std::vector<std::string> names;
          for (const psl::ComponentDecl* c : found) names.push_back(c->name.name);
          if (r.needs_processor)
            throw UsageError("--processor",
                             "several processors have a Wg (" + base::name_list(names) + "); choose one, or give --wg");
        } else if (found.size() == 1) {
          cpu = found.front();
        }
      }
      if (cpu) {
        const auto params = parameters_of(fe, *cpu);
        auto it = params.find("Wg");
        if (it == params.end() || it->second.kind != base::Value::Kind::Number || it->second.dimension != base::kTime)
          throw InputError("processor " + cpu->name.name + " has no Wg time (e.g. param Wg = 60ns;)");
        out.processor = processor::ProcessorSpec{cpu->name.name, "processor[wg]", {{"Wg", it->second.number}}, {}};
        if (r.needs_processor)  // measured computation prices nothing with it
          out.description +=
              ", Wg=" + base::format_quantity({it->second.number, base::kTime}) + " from " + cpu->name.name;
      }
    }
  } else {
    apply_overrides(r.overrides, out.machine);
  }
  if (wg) {
    out.processor = processor::ProcessorSpec{"--wg", "processor[wg]", {{"Wg", *wg}}, {}};
    if (r.needs_processor) out.description += ", Wg=" + base::format_quantity({*wg, base::kTime});
  }
  return out;
}

PreparedProgram prepare_program(const std::string& program) {
  PreparedProgram out;
  if (is_source_file(program)) {
    auto directory = std::make_shared<base::TemporaryDirectory>("poems_direct_build_");
    if (!directory->created())
      throw EvaluationError("cannot create a directory to build '" + program + "' in: " + directory->error());
    out.build_directory = directory;
    auto built = compile_direct_program(program, directory->path(), out.compile_log, out.shared_globals);
    if (!built) throw InputError("cannot compile '" + program + "' with " + wrapper_for(program), out.compile_log);
    out.binary = *built;
    return out;
  }
  if (!fs::is_regular_file(program) || ::access(program.c_str(), X_OK) != 0)
    throw InputError("'" + program + "' is not an executable file or a C, C++ or Fortran source");
  out.binary = program;
  return out;
}

DirectOutcome run_direct(const std::string& program, const std::string& binary, const std::vector<std::string>& args,
                         const direct::DirectOptions& options, const Machine& machine, ProgramOutput output,
                         double timeout_seconds, Store& store) {
  const std::string bytes = base::read_file_bytes(binary).value_or("");
  db::RunKey key;
  key.evaluator = "simulation[direct]";
  key.model = "program:" + fs::path(program).filename().string();
  key.spec_hash = db::sha256_hex(bytes);
  key.tool_version = POEMS_VERSION;
  nlohmann::json options_json = direct::options_to_json(options);
  options_json.erase("max_stuck_listed");
  options_json.erase("progress");       // how the run is shown, not what it computes
  options_json.erase("timeline");       // where the run is also written, not what it computes
  options_json.erase("handover");       // where the ranks run on the host, not what they compute
  options_json.erase("early_receive");  // when the ranks go on, not what they compute (the same virtual times)
  options_json.erase("host_cores");     // where the ranks run on the host (the same virtual times)
  // Only when not the matched semantics, so earlier runs' keys still match.
  if (options.sim.semantics == sim::Semantics::Matched) options_json.erase("semantics");
  key.binding = {{"machine", machine_key(machine)}, {"options", options_json}, {"args", args}};
  DirectOutcome out;
  out.store_path = store.path();
  RunRecord record(store, key);
  out.run_id = record.id();
  direct::DirectOptions run_options = options;
  resolve_host_cores(run_options, bytes);
  out.run = run_direct_program(binary, args, run_options, output, timeout_seconds);
  if (!out.run.result) {
    out.error = out.run.failure;
    record.fail(out.error);
    return out;
  }
  const direct::DirectResult& r = *out.run.result;
  if (!r.completed()) {
    out.error = r.error;
    record.fail(r.error);
    return out;
  }
  Outcome o;
  const double p = r.sim.ranks ? static_cast<double>(r.sim.ranks) : 1.0;
  o.breakdown = Breakdown::of_ns(static_cast<double>(r.sim.max_finish) / 1000.0,
                                 static_cast<double>(r.sim.total_compute) / 1000.0 / p,
                                 static_cast<double>(r.sim.total_overhead) / 1000.0 / p);
  o.events = r.sim.events;
  o.messages = r.sim.messages;
  o.processes = r.sim.ranks;
  o.method = "direct-execution";
  o.extra = {{"max_finish_rank", r.sim.max_finish_rank},
             {"events_per_second", r.sim.events_per_second()},
             {"host_seconds", r.host_seconds},
             {"mpi_calls", r.mpi_calls},
             {"measured_cpu_seconds", r.measured_cpu_seconds},
             {"peak_rss_all_bytes", r.peak_rss_all_bytes}};
  if (r.left_behind > 0) {  // killed when the run ended (poems/base/subreaper.h)
    o.extra["processes_left_behind"] = r.left_behind;
    o.extra["processes_left_behind_names"] = r.left_behind_names;
  }
  try {
    out.record = record.finish(record_of(o, false));
  } catch (const StoreError& e) {
    out.store_error = e.what();
  }
  return out;
}

void resolve_host_cores(direct::DirectOptions& options, std::string_view executable) {
  if (options.host_cores != 0) return;
  options.host_cores = 1;
  if (options.isolation == direct::Isolation::Threads || options.ranks < 2) return;
  // (C's, C++'s and Fortran's names of it, as the executable imports them)
  if (executable.find("MPI_Init_thread") != std::string_view::npos ||
      executable.find("mpi_init_thread") != std::string_view::npos)
    return;
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (::sched_getaffinity(0, sizeof allowed, &allowed) != 0) return;
  const auto cpus = static_cast<std::uint32_t>(CPU_COUNT(&allowed));
  options.host_cores = std::clamp<std::uint32_t>(std::min(cpus, options.ranks), 1, direct::kMaxHostCores);
}

direct::DirectOptions direct_options(const DirectRunSettings& o, const DirectMachine& m) {
  direct::DirectOptions d;
  const double np = quantity("--procs", o.procs, base::kDimensionless, "an integer in 1..16777216");
  if (np < 1 || np > 16777216 || np != static_cast<double>(static_cast<std::uint32_t>(np)))
    throw UsageError("--procs", "'" + o.procs + "' is out of range; expected an integer in 1..16777216");
  d.ranks = static_cast<std::uint32_t>(np);
  d.sim = simulation_options(m.machine);
  d.processor = m.processor;
  d.compute = o.compute == "model" ? direct::ComputeMode::Model : direct::ComputeMode::Measured;
  d.compute_scale = o.compute_scale;
  const double stack = quantity("--stack-size", o.stack, base::kBytes, "a size in 16KiB..1GiB");
  if (stack < 16384 || stack > 1073741824.0)
    throw UsageError("--stack-size", "'" + o.stack + "' is not in 16KiB..1GiB");
  d.stack_bytes = static_cast<std::size_t>(stack);
  d.isolation = o.isolation == "threads" ? direct::Isolation::Threads : direct::Isolation::Processes;
  const auto handover = direct::parse_handover(o.handover);
  if (!handover) throw UsageError("--handover", "'" + o.handover + "' is not one of one-cpu, spin, sleep");
  d.handover = *handover;
  // MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) groups the ranks of a node.
  d.ranks_per_node = m.machine.flat() ? 1 : m.machine.network_model->spec().mapping.ranks_per_node;
  d.epoch_seconds = o.epoch;
  for (const std::string& a : o.algorithms) {
    const auto eq = a.find('=');
    auto op = taskgraph::parse_collective_op(a.substr(0, eq));
    auto alg = eq == std::string::npos ? std::nullopt : taskgraph::parse_collective_algorithm(a.substr(eq + 1));
    if (!op || !alg)
      throw UsageError("--algorithm", "'" + a + "' is not OP=ALGORITHM (e.g. allreduce=dissemination, bcast=linear)");
    auto allowed = taskgraph::algorithms_for(*op);
    if (std::find(allowed.begin(), allowed.end(), *alg) == allowed.end())
      throw UsageError("--algorithm", "'" + a + "': not an algorithm of " + taskgraph::collective_op_name(*op));
    d.algorithms[*op] = *alg;
  }
  if (o.early != "on" && o.early != "off") throw UsageError("--early", "'" + o.early + "' is not one of on, off");
  d.early_receive = o.early == "on";
  if (o.host_cores == "auto") {
    d.host_cores = 0;  // resolve_host_cores, once the program is known
  } else {
    const std::string range = "expected auto or an integer in 1.." + std::to_string(direct::kMaxHostCores);
    std::uint32_t n = 0;
    const auto [end, ec] = std::from_chars(o.host_cores.data(), o.host_cores.data() + o.host_cores.size(), n);
    if (ec != std::errc() || end != o.host_cores.data() + o.host_cores.size())
      throw UsageError("--host-cores", "'" + o.host_cores + "' is not a number; " + range);
    if (n < 1 || n > direct::kMaxHostCores)
      throw UsageError("--host-cores", o.host_cores + " is out of range; " + range);
    d.host_cores = n;
  }
  if (d.host_cores > 1 && d.isolation == direct::Isolation::Threads)
    throw UsageError("--host-cores", "needs --isolation processes (ranks as threads share one host thread)");
  if (o.receive_overhead != "match" && o.receive_overhead != "wait")
    throw UsageError("--receive-overhead", "'" + o.receive_overhead + "' is not one of match, wait");
  d.receive_overhead_at_wait = o.receive_overhead == "wait";
  if (d.receive_overhead_at_wait && d.sim.semantics == sim::Semantics::Loggopsim)
    throw UsageError("--receive-overhead",
                     "wait needs the matched semantics (LogGOPSim charges a receive's overhead at its arrival)");
  d.max_stuck_listed = std::max<std::size_t>(1, std::min<std::size_t>(o.max_ranks_listed, 1024));
  // The program's process draws the engine's progress itself when this
  // command would (a terminal, no --quiet: cli::run opened a scope).
  d.progress = static_cast<bool>(current_progress());
  // The program's process writes it (docs/trace.md section 7), from its own
  // working directory: the name is made absolute here.
  if (!o.timeline.empty()) {
    const std::filesystem::path path = std::filesystem::absolute(o.timeline);
    if (trace::is_otf2_name(o.timeline) && path.stem().empty())
      throw UsageError("--timeline", "'" + o.timeline + "' is not an OTF2 archive's name (NAME.otf2)");
    d.timeline = path.string();
  }
  return d;
}

}  // namespace poems::core
