// Trace replay on the command line (docs/trace.md): the options `poems
// simulate --trace`, `poems analyze --trace` and `poems trace --goal` share,
// and the OTF2 timeline of `poems simulate --timeline FILE.otf2`. The
// commands live in cmd_trace.cpp; cmd_simulate.cpp and cmd_analyze.cpp call
// these entry points.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "model_source.h"
#include "poems/sim/simulator.h"
#include "poems/taskgraph/schedule.h"
#include "result_store.h"

namespace poems::cli {

struct TraceReplayRequest {
  std::string trace;                  // archive (anchor file or its directory)
  std::vector<std::string> machines;  // PSL files with the machine components
  std::string traced_processor, traced_wg;
  std::string compute_scale;            // "" = from the processors, else 1
  std::vector<std::string> algorithms;  // OP=ALGORITHM
  std::string window;                   // FROM[#N]..TO[#M]
  std::string computation = "wall";     // wall or cpu time between calls
};

// Adds --machines, --traced-processor, --traced-wg, --compute-scale,
// --collective-algorithm, --window (and --trace ARCHIVE if `with_trace`).
void add_trace_replay_options(CLI::App* cmd, TraceReplayRequest& request, bool with_trace);

// Throws CLI::ValidationError if a replay option was given without --trace.
void reject_replay_options_without_trace(const TraceReplayRequest& request);

// What simulate needs besides the replay options.
struct TraceSimulateOutput {
  std::uint32_t cpus = 1, nics = 1;
  std::string format = "table", timeline;
  std::size_t max_ranks_listed = 1024;
  StoreOptions store;
};

// `poems simulate --trace`: the replay on the simulator, its result beside
// the traced time, stored in the knowledge base keyed by the archive's
// contents. Sets `result` to the exit code.
void simulate_trace(const ModelRequest& model, const TraceReplayRequest& request, const TraceSimulateOutput& output,
                    int& result);
// `poems analyze --trace`: the critical path of the replayed task graph.
void analyze_trace(const ModelRequest& model, const TraceReplayRequest& request, const std::string& format,
                   const StoreOptions& store, int& result);

// `--timeline FILE.otf2` for any other schedule: when `path` ends in .otf2,
// wraps `source` and sets `options` up to record the run (observer, CPU
// intervals); write() then writes the archive. Labels name operations by
// their source's node labels, or by kind (`by_kind`: GOAL files).
class OtfTimelineOutput {
 public:
  OtfTimelineOutput(const std::string& path, taskgraph::ScheduleSource& source, bool by_kind,
                    sim::SimulationOptions& options);
  ~OtfTimelineOutput();
  bool active() const { return active_; }
  // The source to simulate (the wrapper when active).
  taskgraph::ScheduleSource& source();
  // "" or why the timeline cannot be recorded (then nothing was changed).
  const std::string& problem() const { return problem_; }
  // Writes the archive; false (message printed) on failure.
  bool write(const sim::SimulationResult& result, std::uint32_t cpus);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  taskgraph::ScheduleSource& original_;
  bool active_ = false;
  std::string problem_;
};

bool is_otf2_path(const std::string& path);

// The `poems trace` command (cmd_trace.cpp); mpirun's spelling -np is
// rewritten to --np before parsing, as for `poems direct`.
void register_trace(CLI::App& app, int& result);
void normalize_trace_arguments(int argc, char** argv);

}  // namespace poems::cli
