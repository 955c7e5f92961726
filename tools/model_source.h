// A PSL model bound for evaluation: the specification loaded and lowered, the
// `--set` binding applied, and the machine read from its hardware components
// (shared by `poems simulate` and `poems analyze`).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "loaded_model.h"
#include "machine_model.h"
#include "poems/base/units.h"
#include "poems/sim/simulator.h"
#include "poems/taskgraph/collectives.h"
#include "poems/taskgraph/dtg.h"

namespace poems::cli {

struct ModelRequest {
  std::string spec;  // PSL specification
  std::string model, machine, processor, wg;
  std::vector<std::string> sets;
  // LogGOPS on the command line (bare numbers in ns, ns/B, bytes); for a PSL
  // model only those in explicit_params override the machine's.
  std::string L = "2500", o = "1500", g = "1000", G = "6", O = "0", S = "65535";
  bool handshake = false;
  std::vector<std::string> explicit_params;  // LogGOPS options given on the command line ("-L", ...)
};

// A single collective given on the command line.
struct CollectiveRequest {
  std::string collective, algorithm, procs, size, root = "0";
};

// Options shared by the evaluator commands; `verb` words the help text.
void add_model_options(CLI::App* cmd, ModelRequest& request, const std::string& verb);
void add_collective_options(CLI::App* cmd, CollectiveRequest& request, const std::string& verb);
// Records which LogGOPS options were given (call from the command's callback).
void note_explicit_params(const CLI::App* cmd, ModelRequest& request);

// The command-line LogGOPS parameters and handshake; throws
// CLI::ValidationError naming the option and its range.
sim::SimulationOptions command_line_machine(const ModelRequest& request);
// The machine as stored in a run's binding.
nlohmann::json machine_json(const sim::SimulationOptions& options);
// The collective call; throws CLI::ValidationError naming a bad option.
taskgraph::CollectiveCall collective_call(const CollectiveRequest& request);

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
