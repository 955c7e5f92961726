// The machine an evaluation runs on: LogGOPS parameters read from a
// hardware[network] component (the one place they are read, for compositions
// and for `poems direct`'s machines file), the engine's options, command-line
// parameters that replace the component's, and the machine as run keys hold it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "poems/base/value.h"
#include "poems/components/loggops.h"
#include "poems/components/network.h"
#include "poems/components/noise.h"
#include "poems/psl/ast.h"
#include "poems/sim/simulator.h"

namespace poems::core {

class System;

struct Machine {
  components::LogGOPS params;
  bool rendezvous_handshake = false;
  std::uint32_t cpus = 1, nics = 1;  // per process
  // Message progress (docs/simulator.md): matched, or LogGOPSim's exactly.
  sim::Semantics semantics = sim::Semantics::Matched;
  std::string network;  // the component the parameters came from ("" = the command line)
  // Nodes, ranks per node, topology and switching (docs/network.md); null:
  // one rank per node on the complete network (flat).
  std::shared_ptr<const components::Network> network_model;
  bool flat() const { return !network_model || network_model->flat(); }
  // OS noise on every rank's computation (docs/simulator.md); null: none.
  std::shared_ptr<const components::Noise> noise;
  bool noisy() const { return noise && noise->active(); }
  // A new option of the engine that changes results belongs here, in
  // machine_key and in simulation_options, so that runs key it.
};

// LogGOPS of a network component's parameter values (L, o, g: times; G, O:
// times per byte; S: bytes). Throws InputError naming the parameter and
// what it must be (and, given `where`, where the parameter is declared:
// "file:line:col" of a parameter name, "" if unknown).
components::LogGOPS loggops_of(const std::map<std::string, base::Value>& parameters, const std::string& component,
                               const std::function<std::string(const std::string&)>& where = {});

// The nodes, topology and switching a network component declares
// (docs/network.md: topology, dims, hop_latency, switching, ranks_per_node,
// cores_per_node, mapping, shm_L ...); null when it declares none of them,
// or only values that leave the machine flat. InputError names the
// parameter and its range, located by `where` as for loggops_of.
std::shared_ptr<const components::Network> network_of(const std::map<std::string, base::Value>& parameters,
                                                      const std::string& component, const components::LogGOPS& network,
                                                      const std::function<std::string(const std::string&)>& where = {},
                                                      const std::string& directory = "");
// (`directory`: where relative network_file and map_file paths start, the
// declaring file's directory; "" the working directory.)
// network_of for a component of `program` whose parameters are `parameters`:
// errors located at its parameters, files relative to its file.
std::shared_ptr<const components::Network> network_of_component(const psl::Program& program,
                                                                const psl::ComponentDecl& component,
                                                                const std::map<std::string, base::Value>& parameters,
                                                                const components::LogGOPS& network);
// A mapping or network file's path as the machine holds it: absolute
// (relative paths start at `directory`, "" the working directory), since a
// direct execution's program process reads it from its own directory.
std::string network_file_path(const std::string& file, const std::string& directory = "");
// The OS noise a network component declares (noise_period, noise_interval,
// noise_detour, noise_phase, noise_seed, noise_file; docs/simulator.md);
// null when it declares none. InputError names the parameter and its range.
std::shared_ptr<const components::Noise> noise_of(const std::map<std::string, base::Value>& parameters,
                                                  const std::string& component,
                                                  const std::function<std::string(const std::string&)>& where = {},
                                                  const std::string& directory = "");
std::shared_ptr<const components::Noise> noise_of_component(const psl::Program& program, const psl::ComponentDecl& c,
                                                            const std::map<std::string, base::Value>& parameters);
// Where a component's parameter is declared ("file:line:col", "" if it is
// not): the `where` of loggops_of, network_of and noise_of. The program and
// the component must outlive the function.
std::function<std::string(const std::string&)> parameter_locator(const psl::Program& program,
                                                                 const psl::ComponentDecl& c);
// The directory of the file that declares `c` (where its relative file names start).
std::string component_directory(const psl::Program& program, const psl::ComponentDecl& c);
// The parameter names network_of reads (a component's other parameters are its own business).
const std::vector<std::string>& network_parameter_names();

// The machine as run keys hold it: {"L_ps", "o_ps", "g_ps", "G_fs_per_byte",
// "O_fs_per_byte", "S_bytes", "rendezvous_handshake", "cpus", "nics"}.
nlohmann::json machine_key(const Machine& machine);
sim::SimulationOptions simulation_options(const Machine& machine);
// "L=5300ns o=2300ns g=2000ns G=2.5ns/B O=1ns/B S=32768B" (reports).
std::string loggops_text(const components::LogGOPS& params);

// Machine parameters given on the command line (-L 5.3us, -S 32KiB, ...),
// each replacing the machine's; text as typed, units allowed.
struct MachineOverrides {
  std::optional<std::string> L, o, g, G, O, S;
  std::optional<bool> rendezvous_handshake;
  std::optional<std::uint32_t> cpus, nics;
  std::optional<std::string> semantics;  // --semantics matched|loggopsim
  // --ranks-per-node N, --cores-per-node N, --map FILE (docs/network.md).
  std::optional<std::uint32_t> ranks_per_node, cores_per_node;
  std::optional<std::string> map_file;
  std::optional<std::string> contention;     // --contention none|max-min
  std::optional<std::string> wire_overhead;  // --wire-overhead BYTES (max-min only)
  std::optional<std::string> time_sharing;   // --time-sharing fcfs|processor-sharing
  std::optional<std::string> noise;          // --noise SPEC (components::parse_noise)
  bool empty() const;
};
// Applies the overrides; throws UsageError naming the option and its range
// (and for the handshake under loggopsim, a rule of the matched semantics).
void apply_overrides(const MachineOverrides& overrides, Machine& machine);
// The machine of the command line alone: LogGOPSim's example parameters
// (L 2500, o 1500, g 1000, G 6 ns, O 0, S 65535 B) with the overrides applied.
Machine command_line_machine(const MachineOverrides& overrides);

// The message-progress semantics a PSL value names ("matched" or
// "loggopsim", a string), or nullopt.
std::optional<sim::Semantics> semantics_value(const base::Value& value);
// Where the value of `Runtime.semantics` (a runtime[MPI] component's
// parameter or profile attribute) was written: the first `set` or `vary` of
// `Runtime.semantics` to `value` in `studies` (the command line's, then the
// run's), else the component's parameter or profile entry; invalid if none.
psl::SourceLocation semantics_location(const psl::Program& program, const std::vector<const psl::StudyDecl*>& studies,
                                       const std::string& runtime, const base::Value& value);
// The run's study's `set` and `vary` of a semantics (`semantics`, or
// `Runtime.semantics`) that --semantics replaces in every cell, each a
// located warning, rendered; "" when there is none (or no --semantics).
std::string semantics_override_warnings(System& system, const MachineOverrides& overrides);
// "MPI_simulated.semantics = \"lazy\" is not a message-progress semantics; allowed: ...",
// for a subject such as "MPI_simulated.semantics" or "study setting semantics".
std::string semantics_error(const std::string& subject, const base::Value& value);
// What is wrong with the semantics a runtime's profile sets, "" if nothing:
// not a semantics (semantics_error), or loggopsim with the rendezvous
// handshake (a rule of the matched semantics). A composition's runtime and
// `poems direct`'s both.
std::string runtime_semantics_problem(const std::string& runtime, const base::Value& value, bool handshake);

// A hardware component of a program by name, with its parameters evaluated
// (`poems direct`, which runs a program, not a model). UsageError when there
// is none of that name (did you mean), or it is not a hardware component.
const psl::ComponentDecl& hardware_component(const psl::Program& program, const std::string& name, const char* option);
// Every component of `domain` (e.g. "hardware[network]"), in program order.
std::vector<std::string> components_in(const psl::Program& program, const std::string& domain);

// Parses a command-line quantity of `expected` dimension; a bare number is in
// base units (ns, ns/B, bytes). UsageError naming `option` and `range`.
double quantity(const std::string& option, const std::string& text, base::Dimension expected, const std::string& range);

}  // namespace poems::core
