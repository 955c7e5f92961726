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

  const KBlockShape& block() const { return block_; }
  const std::vector<double>& flux() const { return flux_; }  // accumulated over every sweep since reshape
  int kt() const { return kt_; }
  bool fixup = false;

 private:
  KBlockShape block_{0, 0, 0, 0};
  int kt_ = 0, step_ = 0;
  std::vector<Ordinate> ordinates_;
  std::vector<double> source_, sigt_, flux_, face_i_, face_j_, face_k_;
};

}  // namespace poems::sweep3d
