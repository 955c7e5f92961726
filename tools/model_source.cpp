#include "model_source.h"

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
