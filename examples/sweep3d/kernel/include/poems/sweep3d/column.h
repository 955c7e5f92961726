// A Sweep3D process's column of cells swept one k-block at a time, as the
// real program does (examples/sweep3d/app): it × jt × kt cells, k-blocks of
// mk planes (the last may be short), octants in Sweep3D's order, each block
// a slice of the column's arrays. What processor[measured] times when a task
// gives the local kt: a block then sees the application's memory footprint
// (the column's arrays, which outgrow the caches a lone block fits in), not
// only the block's own.
#pragma once

#include <vector>

#include "poems/sweep3d/kblock.h"

namespace poems::sweep3d {

class KColumn {
 public:
  // Sets the block shape (mk = the k-block size) and the column height kt
  // (>= 1); allocates only when they change. Throws std::invalid_argument.
  void reshape(KBlockShape block, int kt);
  // Sweeps the next k-block: k-blocks in the octant's k order, then the next
  // octant ((-,-,-), (-,-,+), (-,+,-), ... as Sweep3D orders them), the
  // inflow faces zero at the start of each octant's column.
  SweepCounts sweep_next();
  // The program's work between its sweeps (TransportCompute's
  // start_iteration and finish_iteration: the flux's change and tallies, the
  // scattering source from the flux, the flux cleared), which it does once an
  // iteration of 8 octants x `passes` angle blocks (mm / angles) x kb blocks.
  // Spread here over the iteration: after every 8 x kb blocks, 1/passes of the
  // column's cells, so that any whole cycle of 8 x kb blocks carries its share.
  // 0 (the default): sweeps only.
  void set_iteration_passes(int passes);
  const std::vector<double>& source() const { return source_; }

  const KBlockShape& block() const { return block_; }
  const std::vector<double>& flux() const { return flux_; }  // accumulated over every sweep since reshape
  int kt() const { return kt_; }
  bool fixup = false;

 private:
  KBlockShape block_{0, 0, 0, 0};
  int kt_ = 0, step_ = 0, passes_ = 0, slice_ = 0;
  std::vector<Ordinate> ordinates_;
  std::vector<double> source_, sigt_, flux_, previous_, face_i_, face_j_, face_k_;
  double change_ = 0, tallies_ = 0;  // the program's results, kept so that no loop is dropped
  void update_source_slice();
};

}  // namespace poems::sweep3d
