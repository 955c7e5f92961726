// A Sweep3D process's column swept block by block (see column.h).
#include "poems/sweep3d/column.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace poems::sweep3d {

void KColumn::reshape(KBlockShape block, int kt) {
  if (block.it < 1 || block.jt < 1 || block.mk < 1 || block.angles < 1 || kt < 1)
    throw std::invalid_argument("KColumn: it, jt, mk, angles and kt must be >= 1");
  if (block == block_ && kt == kt_) return;
  block_ = block;
  kt_ = kt;
  step_ = 0;
  slice_ = 0;
  const std::size_t plane = static_cast<std::size_t>(block.it) * static_cast<std::size_t>(block.jt);
  const std::size_t cells = plane * static_cast<std::size_t>(kt), a = static_cast<std::size_t>(block.angles);
  ordinates_.resize(a);
  for (int m = 0; m < block.angles; ++m) ordinates_[static_cast<std::size_t>(m)] = default_ordinate(m);
  source_.assign(cells, 1.0);
  sigt_.assign(cells, 1.0);
  flux_.assign(cells, 0.0);
  previous_.assign(passes_ > 0 ? cells : 0, 0.0);
  face_i_.assign(static_cast<std::size_t>(block.jt) * static_cast<std::size_t>(block.mk) * a, 0.0);
  face_j_.assign(static_cast<std::size_t>(block.it) * static_cast<std::size_t>(block.mk) * a, 0.0);
  face_k_.assign(plane * a, 0.0);
}

void KColumn::set_iteration_passes(int passes) {
  if (passes < 0) throw std::invalid_argument("KColumn: iteration passes must be >= 0");
  if (passes == passes_) return;
  passes_ = passes;
  slice_ = 0;
  previous_.assign(passes > 0 ? flux_.size() : 0, 0.0);
}

void KColumn::update_source_slice() {
  // TransportCompute's arithmetic (examples/sweep3d/app/src/transport.cpp)
  // on one slice of the cells, with q = 1 and sigma_s = 0.5.
  const std::size_t n = flux_.size(), parts = static_cast<std::size_t>(passes_);
  const std::size_t slice = static_cast<std::size_t>(slice_);
  const std::size_t first = n * slice / parts, last = n * (slice + 1) / parts;
  slice_ = (slice_ + 1) % passes_;
  constexpr double q = 1.0, sigs = 0.5;
  double change = 0, collisions = 0, flux_sum = 0, total = 0;
  for (std::size_t c = first; c < last; ++c) {
    const double phi = flux_[c];
    const double difference = std::fabs(phi - previous_[c]);
    change = std::max(change, std::fabs(phi) > 1e-300 ? difference / std::fabs(phi) : difference);
    collisions += sigt_[c] * phi;
    flux_sum += phi;
    previous_[c] = phi;
    source_[c] = q + sigs * phi;
    total += source_[c];
    flux_[c] = 0;
  }
  change_ = change;
  tallies_ = collisions + flux_sum + total;
}

SweepCounts KColumn::sweep_next() {
  if (kt_ < 1) throw std::invalid_argument("KColumn: reshape before sweeping");
  const int mk = std::min(block_.mk, kt_), kb = (kt_ + mk - 1) / mk;
  const int octant = (step_ / kb) % 8, kk = step_ % kb;
  if (passes_ > 0 && step_ > 0 && step_ % (8 * kb) == 0) update_source_slice();
  ++step_;
  const Octant o{octant < 4 ? -1 : 1, (octant / 2) % 2 == 0 ? -1 : 1, octant % 2 == 0 ? -1 : 1};
  const int b = o.dk > 0 ? kk : kb - 1 - kk;
  const int k0 = b * mk, nk = std::min(mk, kt_ - k0);
  if (kk == 0) std::fill(face_k_.begin(), face_k_.end(), 0.0);
  std::fill(face_i_.begin(), face_i_.end(), 0.0);
  std::fill(face_j_.begin(), face_j_.end(), 0.0);
  const std::size_t offset =
      static_cast<std::size_t>(k0) * static_cast<std::size_t>(block_.it) * static_cast<std::size_t>(block_.jt);
  KBlockView view;
  view.shape = KBlockShape{block_.it, block_.jt, nk, block_.angles};
  view.fixup = fixup;
  view.ordinates = ordinates_.data();
  view.source = source_.data() + offset;
  view.sigt = sigt_.data() + offset;
  view.flux = flux_.data() + offset;
  view.face_i = face_i_.data();
  view.face_j = face_j_.data();
  view.face_k = face_k_.data();
  return sweep_kblock(view, o);
}

}  // namespace poems::sweep3d
