// A PSL model bound for evaluation: the specification loaded and lowered, the
// `--set` binding applied, and the machine read from its hardware components
// (shared by `poems simulate` and `poems analyze`).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "loaded_model.h"
#include "machine_model.h"
#include "poems/psl/units.h"
#include "poems/sim/simulator.h"
#include "poems/taskgraph/dtg.h"

namespace poems::cli {

struct ModelRequest {
  std::string spec;  // PSL specification
  std::string model, machine, processor, wg;
  std::vector<std::string> sets;
  std::vector<std::string> explicit_params;  // LogGOPS options given on the command line ("-L", ...)
};

// A PSL model instantiated for the `--set` binding, on the machine its hardware
// components describe (command-line LogGOPS options override them).
struct PslSource {
  LoadedModel loaded;
  std::unique_ptr<taskgraph::ModelSchedule> schedule;
  std::string description;
  double wg_ns = 0;
};

// Returns nullptr (exit code in `result`, diagnostics printed) on bad input;
// throws CLI::ValidationError on a bad option value.
std::unique_ptr<PslSource> psl_source(const ModelRequest& request, sim::SimulationOptions& options, int& result);

// A bad parameter value: names the option and the accepted range (exit 2).
[[noreturn]] void usage_error(const std::string& option, const std::string& message);
// Parses `text` as a quantity of `expected` dimension (a bare number is in
// base units: ns, ns/B or bytes).
double quantity(const std::string& option, const std::string& text, psl::Dimension expected, const char* range);

}  // namespace poems::cli
