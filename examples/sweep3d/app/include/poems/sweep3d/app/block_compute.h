// The computation of one Sweep3D pipeline step behind one small interface,
// so the sweep driver (driver.h) does not care whether a block is computed
// by the real diamond-difference kernel (TransportCompute, the default) or
// replaced by a modeled delay (ModeledCompute, which allocates no cell
// arrays: direct execution of the MPI program with simulated computation).
//
// No MPI here, and no mutable global or static state anywhere in the app:
// ranks may share one address space (direct execution runs them as threads).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "poems/sweep3d/app/decomposition.h"
#include "poems/sweep3d/kblock.h"

namespace poems::sweep3d::app {

// One k-block of one angle block of one octant on this process.
struct BlockStep {
  int iteration = 1;  // source iteration, from 1
  int octant = 0;     // iq, 0..7
  OctantDirection dir;
  int angle_block = 0;                               // mo, 0..mmo-1
  int first_angle = 0;                               // mo * mmi: ordinates first_angle .. first_angle + mmi - 1
  int angles = 1;                                    // mmi
  int k_block = 0;                                   // index from k = 0
  int k0 = 0, nk = 1;                                // cells [k0, k0 + nk); nk < mk for a short last block
  int it = 1, jt = 1;                                // local cells
  bool first_k_block = false, last_k_block = false;  // in sweep order
  // Whether the neighbours exist; without an upstream one the face is the
  // domain boundary, without a downstream one the outflow leaves the domain.
  bool i_upstream = false, j_upstream = false, i_downstream = false, j_downstream = false;
};

// Sums over this process for the particle balance (volume-weighted).
struct LocalTallies {
  double external = 0;    // Σ V·q: the fixed source
  double source = 0;      // Σ V·s of the last sweep, s = q + σs·φ(previous iteration)
  double collisions = 0;  // Σ V·σt·φ
  double absorption = 0;  // Σ V·(σt − σs)·φ
  double inflow = 0;      // through the domain boundary into the grid, last sweep
  double outflow = 0;     // through the domain boundary out of the grid, last sweep
  double flux_sum = 0;    // Σ V·φ
  double fixups = 0;      // cell-angles that needed the fixup, whole run
};

class BlockCompute {
 public:
  virtual ~BlockCompute() = default;
  // Before the sweeps of an iteration (the scattering source is refreshed).
  virtual void start_iteration(int iteration) = 0;
  // face_i (jt·mk·mmi doubles) and face_j (it·mk·mmi) hold the inflow received
  // from the upstream neighbours (unspecified where there is none: the block
  // supplies the boundary inflow); on return they hold the outflow to send.
  virtual void compute(const BlockStep& step, double* face_i, double* face_j) = 0;
  // After the sweeps: this process's largest relative change of the scalar flux.
  virtual double finish_iteration() = 0;
  virtual LocalTallies tallies() const { return {}; }
  // False for a modeled computation (no flux, no balance, no convergence).
  virtual bool physical() const { return true; }
  // Scalar flux of local cell (i, j, k), or 0 if there is none.
  virtual double flux_at(int, int, int) const { return 0; }
};

// Sweep3D's problem as this program sets it up: one material, an isotropic
// fixed source everywhere (the Sweep3D facts do not fix the physics; these values
// give source iteration a contraction of σs/σt = 1/2 per iteration).
struct Material {
  double sigt = 1.0;  // total cross section
  double sigs = 0.5;  // isotropic scattering cross section
  double q = 1.0;     // fixed source per unit volume
};

// The real computation: the diamond-difference k-block kernel
// (poems/sweep3d/kblock.h) over this process's it × jt × kt cells, with
// vacuum or reflective boundaries at i = 0, j = 0, k = 0 (ibc, jbc, kbc) and
// vacuum at the far faces.
class TransportCompute : public BlockCompute {
 public:
  TransportCompute(const Deck& deck, const Decomposition& d, Material material = {});
  void start_iteration(int iteration) override;
  void compute(const BlockStep& step, double* face_i, double* face_j) override;
  double finish_iteration() override;
  LocalTallies tallies() const override { return tallies_; }
  double flux_at(int i, int j, int k) const override;
  const std::vector<double>& flux() const { return flux_; }

  // The angle set: level-symmetric S6 directions (cycled beyond 6), weights
  // normalized to 1/8 per octant.
  static std::vector<Ordinate> ordinates(int mm);

 private:
  double face_sum(const double* face, int length, int angles, int first_angle, int axis) const;

  Deck deck_;
  Decomposition d_;
  Material material_;
  double volume_ = 1;
  std::vector<Ordinate> ordinates_;
  std::vector<double> source_, sigt_, flux_, previous_;
  std::vector<double> face_k_;  // it·jt·mmi: carried from k-block to k-block
  // Outflows kept for the reflective boundaries (empty when vacuum):
  // i = 0: 4 octants × mmo × kb blocks of jt·mk·mmi; j = 0 likewise with
  // it·mk·mmi; k = 0: mmo blocks of it·jt·mmi.
  std::vector<double> reflect_i_, reflect_j_, reflect_k_;
  LocalTallies tallies_;
};

// A modeled computation: each block costs ns_per_cell_angle × it·jt·nk·mmi,
// spent by `delay` (a spin on the host clock in a real run; direct execution
// advances virtual time instead). Allocates nothing per cell.
class ModeledCompute : public BlockCompute {
 public:
  using Delay = std::function<void(double ns)>;
  ModeledCompute(double ns_per_cell_angle, Delay delay);
  void start_iteration(int) override {}
  void compute(const BlockStep& step, double* face_i, double* face_j) override;
  double finish_iteration() override { return 0; }
  bool physical() const override { return false; }

 private:
  double ns_per_cell_angle_;
  Delay delay_;
};

// Busy-waits `ns` nanoseconds on the steady clock (the default Delay).
void spin_for_ns(double ns);

}  // namespace poems::sweep3d::app
