// The closed-form Sweep3D wavefront model (analytic[LogGP]) after
// Sundaram-Stukel & Vernon, derived under the simulator's LogGOPS cost rules
// (docs/references.md, docs/models/sweep3d.md). One evaluation is a few hundred
// arithmetic operations, whatever the processor count. Registered as
// analytic[LogGP]'s closed form of models named Sweep3D
// (register_sweep3d_closed_form, called by the example's registration).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "poems/components/closed_forms.h"
#include "poems/components/loggops.h"

namespace poems::components {

using taskgraph::Picoseconds;

// The parameters of examples/sweep3d/sweep3d.psl (Sweep3D input deck names).
struct Sweep3DConfig {
  std::int64_t it_g = 150, jt_g = 150, kt = 150;  // global grid
  std::int64_t npe_i = 2, npe_j = 3;              // processor grid
  std::int64_t mk = 10, mmi = 3, mm = 6;          // k-block, angle block, angles per octant
  std::int64_t iterations = 12;                   // source iterations
  std::uint64_t allreduce_bytes = 8;              // the convergence test's allreduce
};

// The machine: LogGOPS, the rendezvous handshake option, and the time per
// unit of work (one cell-angle of the k-block kernel).
struct Sweep3DMachine {
  LogGOPS params;
  bool rendezvous_handshake = false;
  double wg_ns = 60;
};

// A bad parameter: names it and the allowed range.
class Sweep3DParameterError : public ParameterError {
 public:
  using ParameterError::ParameterError;
};

struct Sweep3DPrediction {
  Picoseconds time = 0;       // completion of the last process
  Picoseconds iteration = 0;  // one source iteration, allreduce included
  Picoseconds allreduce = 0;  // the allreduce on the critical path, per iteration
  // Per-process means over the run, as the simulator reports them; sync is
  // the rest of `time` (waiting: pipeline fill, latency, load imbalance).
  Picoseconds compute = 0, comm = 0, sync = 0;
  // Derived sizes, for reports.
  std::int64_t it = 0, jt = 0, kb = 0, mmo = 0;
  std::uint64_t block_work_ps = 0;  // W
  std::uint64_t message_i_bytes = 0, message_j_bytes = 0;
  std::uint64_t messages = 0;  // point-to-point messages of the sweeps, whole run
};

// Throws Sweep3DParameterError on a parameter outside its range.
Sweep3DPrediction predict_sweep3d(const Sweep3DConfig& config, const Sweep3DMachine& machine);

// The model parameters the closed form reads (examples/sweep3d/sweep3d.psl).
const std::vector<std::string>& sweep3d_parameter_names();
// The configuration from the model's parameter values, given by name.
// Throws Sweep3DParameterError naming a parameter the model lacks.
Sweep3DConfig sweep3d_config(const std::vector<std::string>& names, const std::vector<double>& values);

// Registers predict_sweep3d as the closed form of models named "Sweep3D".
void register_sweep3d_closed_form();

}  // namespace poems::components
