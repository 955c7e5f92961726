#include "model_source.h"

#include <algorithm>
#include <iostream>

#include "cli_common.h"
#include "poems/taskgraph/dtg.h"

namespace poems::cli {

// A bad parameter value: names the option and the accepted range (exit 2).
[[noreturn]] void usage_error(const std::string& option, const std::string& message) {
  throw CLI::ValidationError(option, message);
}

double quantity(const std::string& option, const std::string& text, psl::Dimension expected, const char* range) {
  std::string error;
  auto q = psl::parse_quantity(text, &error);
  if (!q) usage_error(option, error + "; expected " + range);
  if (!q->dimension.dimensionless() && !(q->dimension == expected))
    usage_error(option, "'" + text + "' is a " + psl::dimension_name(q->dimension) + "; expected " + range);
  return q->value;
}

sim::Picoseconds time_param(const std::string& option, const std::string& text) {
  const char* range = "a time in 0..1e12 ns (e.g. 2500, 5.3us)";
  double ns = quantity(option, text, psl::kTime, range);
  auto ps = sim::ns_to_ps(ns);
  if (!ps || ns > 1e12) usage_error(option, "'" + text + "' is out of range; expected " + range);
  return *ps;
}

sim::FemtosecondsPerByte per_byte_param(const std::string& option, const std::string& text) {
  const char* range = "a time per byte in 0..1e6 ns/B (e.g. 6, 0.04ns/B)";
  double ns = quantity(option, text, psl::kTimePerByte, range);
  auto fs = sim::ns_per_byte_to_fs(ns);
  if (!fs || ns > 1e6) usage_error(option, "'" + text + "' is out of range; expected " + range);
  return *fs;
}

std::uint64_t bytes_param(const std::string& option, const std::string& text, double max, const char* range) {
  double b = quantity(option, text, psl::kBytes, range);
  if (b < 0 || b > max || b != static_cast<double>(static_cast<std::uint64_t>(b)))
    usage_error(option, "'" + text + "' is out of range; expected " + range);
  return static_cast<std::uint64_t>(b);
}

std::uint64_t count_param(const std::string& option, const std::string& text, std::uint64_t lo, std::uint64_t hi) {
  const std::string range = "an integer in " + std::to_string(lo) + ".." + std::to_string(hi);
  double v = quantity(option, text, psl::kDimensionless, range.c_str());
  if (v < static_cast<double>(lo) || v > static_cast<double>(hi) ||
      v != static_cast<double>(static_cast<std::uint64_t>(v)))
    usage_error(option, "'" + text + "' is out of range; expected " + range);
  return static_cast<std::uint64_t>(v);
}

taskgraph::CollectiveCall collective_call(const CollectiveRequest& o) {
  auto op = taskgraph::parse_collective_op(o.collective);
  if (!op)
    usage_error("--collective", "'" + o.collective +
                                    "' is not a collective; expected one of barrier, bcast, reduce, allreduce, gather, "
                                    "scatter, allgather, alltoall");
  auto allowed = taskgraph::algorithms_for(*op);
  std::string names;
  for (auto a : allowed) names += std::string(names.empty() ? "" : ", ") + taskgraph::collective_algorithm_name(a);
  taskgraph::CollectiveAlgorithm algorithm = allowed.front();
  if (!o.algorithm.empty()) {
    auto a = taskgraph::parse_collective_algorithm(o.algorithm);
    if (!a || std::find(allowed.begin(), allowed.end(), *a) == allowed.end())
      usage_error("--algorithm",
                  "'" + o.algorithm + "' is not an algorithm of " + o.collective + "; expected one of " + names);
    algorithm = *a;
  }
  if (o.procs.empty()) usage_error("--procs", "required with --collective; expected an integer in 1..2147483647");
  taskgraph::CollectiveCall call;
  call.op = *op;
  call.algorithm = algorithm;
  call.procs = static_cast<std::uint32_t>(count_param("--procs", o.procs, 1, 2147483647));
  call.bytes = o.size.empty() ? 0 : bytes_param("--size", o.size, 1e15, "a size in 0..1e15 bytes (e.g. 1024, 32KiB)");
  call.root = static_cast<std::uint32_t>(count_param("--root", o.root, 0, call.procs - 1));
  return call;
}

sim::SimulationOptions command_line_machine(const ModelRequest& o) {
  sim::SimulationOptions options;
  options.params.L = time_param("-L", o.L);
  options.params.o = time_param("-o", o.o);
  options.params.g = time_param("-g", o.g);
  options.params.G = per_byte_param("-G", o.G);
  options.params.O = per_byte_param("-O", o.O);
  options.params.S = bytes_param("-S", o.S, 1.8e19, "a size in 0..1.8e19 bytes (e.g. 65535, 32KiB)");
  options.rendezvous_handshake = o.handshake;
  return options;
}

nlohmann::json machine_json(const sim::SimulationOptions& options) {
  return components::machine_key_json(options.params, options.rendezvous_handshake);
}

void add_model_options(CLI::App* cmd, ModelRequest& o, const std::string& verb) {
  cmd->add_option("spec", o.spec, "PSL specification: " + verb + " a model (see --model, --set, --machine)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--model", o.model, "Model of the specification (default: the only one)");
  cmd->add_option("--set", o.sets, "Bind a parameter: name=value or Component.param=value (units allowed)");
  cmd->add_option("--machine", o.machine, "hardware[network] component with L o g G O S (default: the first)");
  cmd->add_option("--processor", o.processor, "hardware[processor] component with Wg (default: the first)");
  cmd->add_option("--wg", o.wg, "Compute time per unit of work (overrides the processor's Wg), e.g. 60ns");
  cmd->add_option("-L", o.L, "Latency (ns; units allowed, e.g. 5.3us)")->capture_default_str();
  cmd->add_option("-o", o.o, "CPU overhead per message (ns)")->capture_default_str();
  cmd->add_option("-g", o.g, "NIC gap per message (ns)")->capture_default_str();
  cmd->add_option("-G", o.G, "NIC gap per byte (ns/B, e.g. 0.04ns/B)")->capture_default_str();
  cmd->add_option("-O", o.O, "CPU overhead per byte (ns/B)")->capture_default_str();
  cmd->add_option("-S", o.S, "Eager limit: larger messages use rendezvous (bytes, e.g. 32KiB)")->capture_default_str();
  cmd->add_flag("--rendezvous-handshake", o.handshake,
                "Rendezvous pays a request/acknowledge round trip 2L+2o instead of L");
}

void note_explicit_params(const CLI::App* cmd, ModelRequest& o) {
  o.explicit_params.clear();
  for (const char* p : {"-L", "-o", "-g", "-G", "-O", "-S"})
    if (cmd->count(p) > 0) o.explicit_params.push_back(p);
}

void add_collective_options(CLI::App* cmd, CollectiveRequest& o, const std::string& verb) {
  cmd->add_option("--collective", o.collective, verb + " one collective: barrier, bcast, reduce, allreduce, ...");
  cmd->add_option("--algorithm", o.algorithm, "Collective algorithm (default: the operation's first)");
  cmd->add_option("--procs", o.procs, "Processes of the collective");
  cmd->add_option("--size", o.size, "Per-process payload of the collective (bytes; units allowed)");
  cmd->add_option("--root", o.root, "Root of a rooted collective");
}

namespace {

bool has_component(const psl::Program& program, const char* path) {
  for (const psl::Module& m : program.modules)
    for (const psl::ComponentDecl& c : m.components)
      if (c.domain.head == "hardware" && c.domain.path == path) return true;
  return false;
}

}  // namespace

std::unique_ptr<PslSource> psl_source(const ModelRequest& o, sim::SimulationOptions& options, int& result) {
  std::map<std::string, double> binding, overrides;
  for (const auto& [name, value] : parse_bindings(o.sets))
    (name.find('.') == std::string::npos ? binding : overrides)[name] = value;
  auto src = std::make_unique<PslSource>();
  if (!load_model(o.spec, o.model, src->loaded, result)) return nullptr;
  const psl::Program& program = src->loaded.frontend->program();
  try {
    MachineModel m;
    bool from_spec = !o.machine.empty() || has_component(program, "network");
    if (from_spec) {
      m = resolve_machine(program, o.machine, o.processor, overrides);
      // Command-line LogGOPS options win over the machine's.
      sim::LogGOPS cli = options.params;
      for (const std::string& p : o.explicit_params) {
        if (p == "-L") m.params.L = cli.L;
        if (p == "-o") m.params.o = cli.o;
        if (p == "-g") m.params.g = cli.g;
        if (p == "-G") m.params.G = cli.G;
        if (p == "-O") m.params.O = cli.O;
        if (p == "-S") m.params.S = cli.S;
      }
      options.params = m.params;
    }
    double wg = m.wg_ns;
    if (!o.wg.empty())
      wg = quantity("--wg", o.wg, psl::kTime, "a time per unit of work, e.g. 60ns");
    else if (!from_spec && !has_component(program, "processor"))
      throw CLI::ValidationError("--wg", "the specification has no hardware[processor] component; give --wg");
    taskgraph::InstantiateOptions inst;
    inst.ns_per_work = wg;
    src->schedule = std::make_unique<taskgraph::ModelSchedule>(src->loaded.graph, binding, inst);
    src->wg_ns = wg;
    src->description = "model " + src->loaded.graph->model + " (" + std::to_string(src->schedule->ranks()) +
                       " processes)" + (from_spec ? " on " + m.network : std::string(" on command-line parameters")) +
                       ", Wg=" + psl::format_quantity({wg, psl::kTime}) +
                       (o.wg.empty() && !m.processor.empty() ? " from " + m.processor : "");
  } catch (const taskgraph::InstantiationError& e) {
    std::cerr << "poems: error: " << e.what() << '\n';
    result = kExitInputError;
    return nullptr;
  } catch (const CLI::ValidationError&) {
    throw;
  } catch (const std::runtime_error& e) {
    std::cerr << "poems: error: " << e.what() << '\n';
    result = kExitInputError;
    return nullptr;
  }
  return src;
}

}  // namespace poems::cli
