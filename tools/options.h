// The command-line grammar every command shares: one spelling and one
// meaning per option. A command adds the groups it takes; adding an option
// to a group adds it to every command with that group.
//
//   SPEC --import F --model M --study S --set NAME=VALUE    the system (SystemOptions)
//   --machine M --processor P                               components to run on (ChoiceOptions)
//   -L -o -g -G -O -S --rendezvous-handshake --cpus --nics --ranks-per-node
//   --cores-per-node --map   machine parameters (MachineOptions)
//   --semantics matched|loggopsim                            message progress (MachineOptions)
//   --memory-limit SIZE                                      memory a model may plan to use
//   --trace ARCHIVE --machines F --traced-processor ...      trace replay (TraceOptions)
//   --wg T  --method M                                       compute rate, analytic method
//   --paradigm P                                             paradigms to evaluate (ParadigmOptions)
//   --procs N                                                process counts
//   --collective --algorithm --procs --size --root           one collective
//   --repetitions --max-ranks --timeout --nice               measured runs (MeasureOptions)
//   --format F  --db PATH --no-store                         output, knowledge base
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli.h"
#include "poems/core/composition.h"
#include "poems/core/evaluators.h"
#include "poems/core/machine.h"
#include "poems/core/schedules.h"
#include "poems/core/session.h"
#include "poems/core/store.h"
#include "poems/core/system.h"
#include "poems/core/trace_replay.h"

namespace poems::cli {

// SPEC, --import, --model, --study, --set.
struct SystemOptions {
  std::string spec;
  std::vector<std::string> imports, sets;
  std::vector<std::string> where;  // recommend's --where
  std::string model, study;
  // `study_bindings`: the command evaluates the study's bindings (run, measure, recommend).
  core::SystemRequest request(bool study_bindings = false) const;
};
// `spec_required`: SPEC is a required positional; else optional.
void add_system_options(CLI::App* cmd, SystemOptions& o, bool spec_required = true);

// --machine, --processor.
struct ChoiceOptions {
  std::string machine, processor;
};
void add_choice_options(CLI::App* cmd, ChoiceOptions& o);

// Machine parameters over the machine's: -L -o -g -G -O -S, the rendezvous
// handshake, CPUs and NICs per process.
struct MachineOptions {
  std::string L, o, g, G, O, S;
  bool handshake = false;
  std::uint32_t cpus = 1, nics = 1;
  std::string semantics;  // --semantics
  std::uint32_t ranks_per_node = 1, cores_per_node = 1;
  std::string contention;
  std::string wire_overhead;  // --wire-overhead
  std::string time_sharing;   // --time-sharing
  std::string noise;
  std::string map_file;              // --map
  core::MachineOverrides overrides;  // filled by finish_machine_options
};
void add_machine_options(CLI::App* cmd, MachineOptions& o);
// Records which were given (call from the command's callback).
void finish_machine_options(const CLI::App* cmd, MachineOptions& o);

// --memory-limit SIZE: the memory a model may plan to use, for this command
// (the same limit as `poems --memory-limit`; docs/limits.md).
void add_memory_limit_option(CLI::App* cmd);

// Trace replay (docs/trace.md): --trace ARCHIVE (if `with_trace`),
// --machines, --traced-processor, --traced-wg, --compute-scale,
// --collective-algorithm, --computation, --window. cmd_trace.cpp.
struct TraceOptions {
  std::string archive;
  std::vector<std::string> machines;
  std::string traced_processor, traced_wg, compute_scale, window, computation = "wall";
  std::string extrapolate, extrapolate_compute, extrapolate_variation;
  std::vector<std::string> algorithms;
  // The request with the command's machine (--machine, --processor, --wg, -L ...).
  core::TraceRequest request(const ChoiceOptions& choices, const MachineOptions& machine, const std::string& wg) const;
};
void add_trace_options(CLI::App* cmd, TraceOptions& o, bool with_trace);

// One collective on its own (`poems simulate|analyze --collective`):
// --collective, --algorithm, --procs, --size, --root; `verb` starts the help
// of --collective ("Simulate", "Analyze").
void add_collective_options(CLI::App* cmd, core::CollectiveRequest& o, const std::string& verb);

// --wg and --method.
void add_wg_option(CLI::App* cmd, std::string& wg);
void add_method_option(CLI::App* cmd, std::string& method);

// --paradigm (repeatable); `aliases` are deprecated spellings kept for old
// command lines (e.g. --only, --compare).
void add_paradigm_option(CLI::App* cmd, std::vector<std::string>& paradigms, const std::string& help,
                         const std::vector<std::string>& aliases = {});

// --procs (process counts); `aliases` are deprecated spellings (-np).
CLI::Option* add_procs_option(CLI::App* cmd, std::string& procs, const std::string& help,
                              const std::vector<std::string>& aliases = {});

// --repetitions, --max-ranks, --timeout, --nice.
void add_measure_options(CLI::App* cmd, core::MeasureOptions& o);
// --timeout alone: seconds a program may run before it is killed (0 = no limit).
void add_timeout_option(CLI::App* cmd, double& seconds);

// --format, one of `formats` (the first is the default).
void add_format_option(CLI::App* cmd, std::string& format, const std::vector<std::string>& formats);

// --db, --no-store.
void add_store_options(CLI::App* cmd, core::StoreOptions& o);

// --jobs N: evaluations at once on this machine (0 = its cores; 1 = one
// after another in this process).
void add_jobs_option(CLI::App* cmd, std::size_t& jobs);
// The --jobs value to use: `jobs`, or this machine's cores for 0.
std::size_t jobs_or_cores(std::size_t jobs);

// --plot OUT.png|OUT.svg, --plot-x NAME (its x axis; checked by check_plot_x)
void add_plot_option(CLI::App* cmd, std::string& plot, std::string& plot_x);

// --disagree PCT: a study row is flagged where a paradigm differs from the
// first by more than PCT percent (core::difference_pct; default 10).
void add_disagree_option(CLI::App* cmd, double& pct);

// The session's options from the groups above and the system's --set values.
core::SessionOptions session_options(const core::System& system, const ChoiceOptions& choices,
                                     const MachineOptions& machine, const std::string& wg, const std::string& method);

// Raises `nice` for the command (restored at the end); warns when it cannot.
class PriorityScope {
 public:
  PriorityScope(int nice, const Context& ctx);
  ~PriorityScope();

 private:
  struct State;
  State* state_;
};

// mpirun's `-np N` (CLI11's short options have one letter) as --procs N,
// up to a `--` after which the arguments are a program's own.
std::vector<std::string> rewrite_deprecated(const std::vector<std::string>& args);

}  // namespace poems::cli
