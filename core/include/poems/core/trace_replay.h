// Trace replay (docs/trace.md): an OTF2 archive of a real MPI run read into a
// dynamic task graph and evaluated on a machine model, by the simulator or
// the critical path, keyed in the knowledge base by the archive's contents
// (model "trace:<hex>") like every evaluation. The machine is read from PSL
// files as `poems direct` reads it (direct_run.h), with its semantics.
#pragma once

#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "poems/core/machine.h"
#include "poems/core/session.h"
#include "poems/core/store.h"
#include "poems/trace/replay.h"
#include "poems/trace/trace.h"

namespace poems::core {

struct TraceRequest {
  std::string archive;                // anchor file or its directory
  std::vector<std::string> machines;  // PSL files with the machine components ("" = the default machine files)
  std::string machine, processor;     // --machine, --processor (the modelled processor)
  std::optional<std::string> wg;      // --wg (the modelled processor's Wg)
  std::string traced_processor;       // --traced-processor
  std::optional<std::string> traced_wg;
  std::string compute_scale;            // "" = from the two processors, else 1
  std::vector<std::string> algorithms;  // OP=ALGORITHM
  std::string window;                   // FROM[#N]..TO[#M]
  bool cpu_time = false;                // computation as CPU time (--computation cpu)
  MachineOverrides overrides;           // -L ... --cpus --nics --semantics
  std::string extrapolate;              // --extrapolate Q or AxB: replayed as that many ranks
  std::string extrapolate_compute;      // --extrapolate-compute keep (default) or a factor
  std::string extrapolate_variation;    // --extrapolate-variation copy (default), resample[,seed=N]
};

// A trace resolved for replay: the archive read, the options, the machine.
struct Replay {
  trace::Trace trace;
  trace::ReplayOptions options;
  Machine machine;
  std::string hash, name;      // the archive's contents; "trace:<12 hex digits>"
  std::string machine_source;  // "Odin" or "command-line LogGOPS parameters"
  std::string scale;           // how the computation is scaled, for reports
  nlohmann::json binding;      // what the run key holds besides the machine
};

// Throws UsageError for contradicting or bad options, InputError for an
// archive that cannot be read or machine files with errors.
std::unique_ptr<Replay> prepare_replay(const TraceRequest& request);

// The replay's chosen collective algorithms as a run key holds them: {"allreduce": "ring", ...}.
nlohmann::json algorithms_key(const trace::ReplayOptions& options);

// The replay evaluated by `paradigm` (simulation[MPI-Sim] or analytic[LogGP]'s
// critical path) and stored; the cell's outcome extra holds the trace's
// figures (traced_ns, difference_pct, scope). Throws TraceError's message as
// InputError for a window a rank cannot satisfy.
struct ReplayCell {
  Cell cell;
  trace::ReplayScope scope;
};
ReplayCell evaluate_replay(const Replay& replay, const std::string& paradigm, const std::string& method, Store& store,
                           bool per_rank = true, bool timeline = false, std::size_t max_stuck_listed = 16,
                           const std::string& otf2_timeline = "");

// Writes the replay as a GOAL schedule; returns the messages written.
std::uint64_t write_replay_goal(const Replay& replay, std::ostream& out);

}  // namespace poems::core
