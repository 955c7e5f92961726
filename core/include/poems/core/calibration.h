// `poems calibrate`: this machine as a model (docs/sweep3d.md). The local MPI's
// LogGOPS parameters (poems_loggops_bench under mpirun: echo, exchange and
// message trains, the LogGOPSim paper section 1.3, CoMet section 3.3, fitted around
// the message sizes in use) and Wg of a kernel (processor[measured]) for the
// tasks in use: a study's compute tasks, tasks given in the kernel's own
// shorthand, or the kernel's defaults. Kernels are registered by the code
// that owns them (the examples register theirs).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "poems/core/store.h"
#include "poems/measure/comet_fit.h"
#include "poems/measure/loggops_fit.h"
#include "poems/processor/hierarchy.h"

namespace poems::core {

using TaskParameters = std::map<std::string, double>;

struct CalibrationKernel {
  std::string kernel;                  // processor[measured]'s kernel name
  std::string description;             // for messages and the PSL file
  std::string component, transaction;  // what the kernel's tasks are
  std::vector<TaskParameters> default_tasks;
  // A task from the kernel's shorthand (--shape); throws std::invalid_argument saying the syntax.
  std::function<TaskParameters(const std::string& text)> parse_task;
  std::string task_syntax;  // the shorthand, for --help, e.g. "A,B[,C]"

  // The task's label in reports and calibration records.
  std::function<std::string(const TaskParameters& task)> task_text;
  // The message sizes the task's runs send (to fit LogGOPS around), if known.
  std::function<std::vector<double>(const TaskParameters& task)> message_sizes;
  // A task whose working set (its parameter `working_set`, bytes) is about
  // `bytes`, for the processor[hierarchy] curve; unset: no curve.
  std::function<TaskParameters(double bytes)> task_for_working_set;
};

void register_calibration_kernel(CalibrationKernel kernel);
// The kernel named (or the first registered when `name` is ""); UsageError otherwise.
const CalibrationKernel& calibration_kernel(const std::string& name);
std::vector<CalibrationKernel> calibration_kernels();

struct CalibrationRequest {
  int procs = 2;  // processes of the benchmark, and copies of a task at once
  bool quick = false;
  std::string name = "local";                          // machine name (PSL identifier)
  std::string sizes;                                   // --sizes for the benchmark ("" = its defaults)
  std::optional<std::pair<double, double>> fit_bytes;  // message sizes the machine's fit takes
  std::vector<std::string> shapes;                     // tasks in the kernel's shorthand
  std::string spec, study;                             // and/or the compute tasks of a study's bindings
  std::string kernel;  // "" = the study's processor[measured] kernel, else the default one
  // The network benchmark: "loggops" (poems_loggops_bench's echo, exchange
  // and trains) or "comet" (CoMet's echo and pairwise, the trains for o and
  // g; core/comet_calibration.h).
  std::string network = "loggops";
};

// The values --network takes.
const std::vector<std::string>& calibration_networks();

// The machine's name becomes its PSL components' (NAME, NAME_cpu, ...):
// UsageError("--name") unless it is a PSL identifier.
void check_machine_name(const std::string& name);

struct TaskWg {
  TaskParameters task;
  std::string text;
  double block_ns = 0, wg_ns = 0;  // alone on the machine
  int concurrent = 1;              // copies running at once for the next two
  double busy_block_ns = 0, busy_wg_ns = 0;
};

struct Calibration {
  std::string name, kernel, kernel_description;
  std::string network = "loggops";  // the network benchmark (CalibrationRequest::network)
  measure::LoggopsSamples samples;  // poems_loggops_bench's (with "comet": the trains of o and g)
  measure::LoggopsCalibration loggops;
  measure::CometNetworkFit comet;  // with "comet": CoMet's echo and pairwise and their fit
  std::string comet_command;       // with "comet": the echo's mpirun line
  std::vector<TaskWg> tasks;
  double wg_ns = 0;  // median over tasks of the rate with `procs` copies at once
  double copy_ns_per_byte = 0;  // memcpy of 64 MiB: the machine's copy_G
  // The processor[hierarchy] curve: Wg of the kernel against its working set,
  // one point in each cache level of this host (hwloc) and one in DRAM.
  processor::WorkingSetCurve hierarchy;
  std::vector<std::string> hierarchy_levels;  // where each point falls: "L1", "L1-L2" (between), ..., "DRAM"
  std::vector<std::string> hierarchy_tasks;   // each point's task, as the kernel writes it
  std::string caches;                         // this host's caches, described; empty: no curve
  std::string hierarchy_note;                 // why there is no curve, if there is none
  std::string source;                         // "poems calibrate --np 2 on HOST (...)"
  std::string psl;                            // the machine as PSL components (NAME, NAME_cpu)
};

// The compute tasks of a study's bindings as processor[measured] times them
// (each distinct params map once, `procs` included), and the kernel that
// times them (set when `kernel` is empty); with `traffic`, the message sizes
// the bindings send and how many of each. Throws InputError.
std::vector<TaskParameters> study_compute_tasks(const std::string& spec, const std::string& study, std::string& kernel,
                                                std::map<double, double>* traffic = nullptr);

// Measures; `progress` is told what is measured next. Throws UsageError for
// bad options, EvaluationError when the benchmark or a kernel fails.
Calibration calibrate(const CalibrationRequest& request, const std::function<void(const std::string&)>& progress);
// Stores the machine with its provenance and every calibration; `psl_path`
// is where its PSL file was written. Throws StoreError.
void store_calibration(const Calibration& calibration, const CalibrationRequest& request, const std::string& psl_path,
                       Store& store);

// What `poems calibrate --format json` prints.
nlohmann::json to_json(const Calibration& calibration, const std::string& psl_path);

}  // namespace poems::core
