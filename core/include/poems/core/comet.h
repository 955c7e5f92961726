// `poems comet` (docs/comet.md): the CoMet communication kernels
// (examples/comet/comet.c) measured on this host under mpirun and predicted,
// kernel by kernel and size by size, on a machine model: by direct execution
// of the same program (simulation[direct], --compute model), by the
// simulator on the kernels' PSL models (simulation[MPI-Sim],
// core/comet_simulation.h) and by the LogGOPS closed forms where one exists
// for the algorithm direct execution runs. Every figure is stored in the knowledge base as its own run
// (model "comet.KERNEL"; binding: the size, ranks, repetitions, machine).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "poems/base/temporary_directory.h"
#include "poems/core/direct_run.h"
#include "poems/core/store.h"

namespace poems::core {

// The CoMet program's source (registered by the examples).
void set_comet_source(std::string path);
const std::string& comet_source();
// The SHA-256 of a file's bytes: what CoMet's stored figures were computed
// from (comet.c, or the PSL model of the simulation column).
std::string comet_file_hash(const std::string& path);

// The kernels comet.c runs, in its order.
const std::vector<std::string>& comet_kernel_names();
// "all" or a comma-separated list of kernel names (at most 64):
// UsageError("--kernels") naming the bad one and the allowed names.
std::vector<std::string> parse_comet_kernels(const std::string& list);
// Comma-separated sizes in bytes, 0..16M, suffix K = 1024 and M = 1024K (at
// most 64): UsageError("--sizes") naming the bad one and the range.
std::vector<std::uint64_t> parse_comet_sizes(const std::string& list);
// --procs: an integer in 1..1024 (UsageError("--procs") otherwise).
std::uint32_t parse_comet_procs(const std::string& text);
// --reps: an integer in 1..100000 (UsageError("--reps") otherwise).
std::uint32_t parse_comet_reps(const std::string& text);
// The sizes as comet.c reads them ("0,8,1024").
std::string comet_sizes_text(const std::vector<std::uint64_t>& sizes);

struct CometRequest {
  std::vector<std::string> kernels;  // default: all
  std::vector<std::uint64_t> sizes;  // default: comet.c's (0,1,8,64,512,4K,32K,256K,1M)
  std::uint32_t procs = 2;           // --procs, 1..1024
  std::uint32_t reps = 10;           // --reps, 1..100000
  bool measure = true;               // false: --no-measure, or --machine names another machine
  bool simulate = true;              // false: --no-simulation (no PSL model simulated)
  DirectMachineRequest machine;      // --import, --machine, -L ...
  double timeout_seconds = 600;      // per program run (build, mpirun, direct execution)
};

// Whether `--machine NAME` names this host: none given, or `local` (the
// machine `poems calibrate` writes for this host).
bool comet_machine_is_this_host(const std::string& machine);

// The paradigms of a CoMet report, as stored.
inline constexpr const char* kCometMeasured = "measurement[mpirun]";
inline constexpr const char* kCometDirect = "simulation[direct]";
inline constexpr const char* kCometSimulated = "simulation[MPI-Sim]";
inline constexpr const char* kCometClosedForm = "analytic[closed-form]";

// One kernel at one size: median (min, max) over the repetitions, ns.
struct CometFigure {
  double median_ns = 0, min_ns = 0, max_ns = 0;
};
struct CometPoint {
  std::uint64_t bytes = 0;
  std::optional<CometFigure> measured, direct;
  std::optional<CometFigure> simulated;  // examples/comet/comet.psl under simulation[MPI-Sim]
  std::optional<double> closed_form_ns;
};
struct CometKernelResult {
  std::string name;
  std::string closed_form;  // the form used ("o + L + (s-1)G + o ..."), "" = none
  std::string note;         // why a column is missing (skipped kernel, no form)
  std::vector<CometPoint> points;
};
struct CometReport {
  std::vector<CometKernelResult> kernels;
  std::uint32_t procs = 0, reps = 0;
  bool measured = false;
  std::string machine;                          // what was predicted: its description and LogGOPS
  std::string host;                             // the host measured: name, cores, MPI library
  double load_average = -1;                     // 1-minute load before the measurement (-1: unknown)
  std::string measure_command, direct_command;  // how the program was run (one kernel's line)
  std::size_t stored = 0, already_stored = 0;   // runs written to the knowledge base
  std::string store_path;
  std::vector<std::string> warnings;
};

// The LogGOPS closed form of `kernel` at `bytes` on `procs` ranks of
// `machine`, for the algorithms direct execution lowers the MPI calls to
// (MPI_Bcast, MPI_Reduce: binomial; MPI_Allreduce: recursive doubling;
// MPI_Barrier: dissemination); nullopt where there is none (or outside its regime, a
// machine that is not flat, OS noise). `form` receives its text.
std::optional<double> comet_closed_form_ns(const std::string& kernel, std::uint64_t bytes, std::uint32_t procs,
                                           const Machine& machine, std::string* form = nullptr);

// comet.c built with Open MPI's mpicc (`mpicc -std=c99 -O2 ... -lm`) in a
// scratch directory and run under mpirun on this host, one kernel per run:
// what `poems comet` measures and `poems calibrate --network comet` fits.
class CometOnHost {
 public:
  // Builds comet.c (comet_source()); throws InputError/EvaluationError.
  explicit CometOnHost(double timeout_seconds);
  // One kernel alone at `sizes`, `reps` timed repetitions, `procs` ranks:
  // its figures per size as comet.c printed them. `command` receives the
  // mpirun command line. Throws EvaluationError when the run fails.
  std::map<std::uint64_t, CometFigure> run(const std::string& kernel, const std::vector<std::uint64_t>& sizes,
                                           std::uint32_t procs, std::uint32_t reps,
                                           std::string* command = nullptr) const;

 private:
  base::TemporaryDirectory dir_;
  std::string binary_;
  double timeout_seconds_;
};

// Builds comet.c with mpicc and poems-mpicc, runs each kernel alone (so no
// kernel inherits another's skew) under mpirun and under direct execution,
// simulates its PSL model (core/comet_simulation.h), adds the closed forms,
// and stores every figure. Throws UsageError for bad
// parameters, InputError/EvaluationError when a build or run fails.
CometReport run_comet(const CometRequest& request, Store& store);

}  // namespace poems::core
