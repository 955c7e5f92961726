// The real Sweep3D computation and the modeled one (see block_compute.h).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "poems/sweep3d/app/block_compute.h"

namespace poems::sweep3d::app {

namespace {

std::size_t size(int v) { return static_cast<std::size_t>(v); }

// Slot of an octant's stored outflow at the j = 0 face: the octants that
// flow towards j = 0 are 0, 1, 4, 5; octant q + 2 reads what q left.
int j_slot(int iq) { return (iq / 4) * 2 + iq % 2; }

}  // namespace

std::vector<Ordinate> TransportCompute::ordinates(int mm) {
  std::vector<Ordinate> out(size(mm));
  double total = 0;
  for (int m = 0; m < mm; ++m) {
    out[size(m)] = default_ordinate(m);
    total += out[size(m)].w;
  }
  for (Ordinate& o : out) o.w /= total * 8;
  return out;
}

TransportCompute::TransportCompute(const Deck& deck, const Decomposition& d, Material material)
    : deck_(deck), d_(d), material_(material), ordinates_(ordinates(deck.mm)) {
  volume_ = deck.dx * deck.dy * deck.dz;
  const std::size_t cells = size(d.it) * size(d.jt) * size(d.kt);
  source_.assign(cells, 0.0);
  sigt_.assign(cells, material.sigt);
  flux_.assign(cells, 0.0);
  previous_.assign(cells, 0.0);
  face_k_.assign(size(d.it) * size(d.jt) * size(d.mmi), 0.0);
  const std::size_t blocks = 4 * size(d.mmo) * size(d.kb);
  if (deck.ibc == 1 && d.pi == 0) reflect_i_.assign(blocks * d.face_i_doubles(), 0.0);
  if (deck.jbc == 1 && d.pj == 0) reflect_j_.assign(blocks * d.face_j_doubles(), 0.0);
  if (deck.kbc == 1) reflect_k_.assign(size(d.mmo) * face_k_.size(), 0.0);
}

void TransportCompute::start_iteration(int) {
  // Source iteration: the scattering source from the previous flux.
  const double q = material_.q, sigs = material_.sigs;
  double total = 0;
  for (std::size_t c = 0; c < source_.size(); ++c) {
    source_[c] = q + sigs * flux_[c];
    total += source_[c];
  }
  previous_.swap(flux_);
  std::fill(flux_.begin(), flux_.end(), 0.0);
  tallies_.external = q * volume_ * static_cast<double>(source_.size());
  tallies_.source = total * volume_;
  tallies_.inflow = tallies_.outflow = 0;
}

double TransportCompute::face_sum(const double* face, int length, int angles, int first_angle, int axis) const {
  // One angle's part of a face: `length` entries (jt·nk for an i face of a
  // block with nk planes, it·nk for a j face, it·jt for the k face).
  double total = 0;
  for (int m = 0; m < angles; ++m) {
    const Ordinate& a = ordinates_[size(first_angle + m)];
    const double coefficient = axis == 0   ? std::fabs(a.mu) * deck_.dy * deck_.dz
                               : axis == 1 ? std::fabs(a.eta) * deck_.dx * deck_.dz
                                           : std::fabs(a.xi) * deck_.dx * deck_.dy;
    double sum = 0;
    const double* part = face + static_cast<std::ptrdiff_t>(m) * length;
    for (int e = 0; e < length; ++e) sum += part[e];
    total += a.w * coefficient * sum;
  }
  return total;
}

void TransportCompute::compute(const BlockStep& s, double* face_i, double* face_j) {
  const int mmi = s.angles, iq = s.octant;
  const std::size_t fi = size(s.jt) * size(s.nk) * size(mmi), fj = size(s.it) * size(s.nk) * size(mmi);
  const std::size_t stride_i = d_.face_i_doubles(), stride_j = d_.face_j_doubles();  // a full block's face
  const std::size_t block_index = size(s.angle_block) * size(d_.kb) + size(s.k_block);
  // Boundary inflow: vacuum (zero) or the stored outflow of the mirror octant.
  if (!s.i_upstream) {
    if (s.dir.di > 0 && !reflect_i_.empty())
      std::memcpy(face_i, reflect_i_.data() + (size(iq - 4) * size(d_.mmo) * size(d_.kb) + block_index) * stride_i,
                  fi * sizeof(double));
    else
      std::fill(face_i, face_i + fi, 0.0);
    tallies_.inflow += face_sum(face_i, s.jt * s.nk, mmi, s.first_angle, 0);
  }
  if (!s.j_upstream) {
    if (s.dir.dj > 0 && !reflect_j_.empty())
      std::memcpy(face_j,
                  reflect_j_.data() + (size(j_slot(iq - 2)) * size(d_.mmo) * size(d_.kb) + block_index) * stride_j,
                  fj * sizeof(double));
    else
      std::fill(face_j, face_j + fj, 0.0);
    tallies_.inflow += face_sum(face_j, s.it * s.nk, mmi, s.first_angle, 1);
  }
  if (s.first_k_block) {
    if (s.dir.dk > 0 && !reflect_k_.empty())
      std::copy_n(reflect_k_.begin() + static_cast<std::ptrdiff_t>(size(s.angle_block) * face_k_.size()),
                  face_k_.size(), face_k_.begin());
    else
      std::fill(face_k_.begin(), face_k_.end(), 0.0);
    tallies_.inflow += face_sum(face_k_.data(), s.it * s.jt, mmi, s.first_angle, 2);
  }

  KBlockView view;
  view.shape = KBlockShape{s.it, s.jt, s.nk, mmi};
  view.dx = deck_.dx, view.dy = deck_.dy, view.dz = deck_.dz;
  view.fixup = deck_.ifixups == 1;
  view.ordinates = ordinates_.data() + s.first_angle;
  const std::size_t offset = size(s.k0) * size(s.it) * size(s.jt);
  view.source = source_.data() + offset;
  view.sigt = sigt_.data() + offset;
  view.flux = flux_.data() + offset;
  view.face_i = face_i;
  view.face_j = face_j;
  view.face_k = face_k_.data();
  const SweepCounts counts = sweep_kblock(view, Octant{s.dir.di, s.dir.dj, s.dir.dk});
  tallies_.fixups += static_cast<double>(counts.fixups);

  // Outflow leaving the grid; keep what a reflective boundary returns.
  if (!s.i_downstream) {
    tallies_.outflow += face_sum(face_i, s.jt * s.nk, mmi, s.first_angle, 0);
    if (s.dir.di < 0 && !reflect_i_.empty())
      std::memcpy(reflect_i_.data() + (size(iq) * size(d_.mmo) * size(d_.kb) + block_index) * stride_i, face_i,
                  fi * sizeof(double));
  }
  if (!s.j_downstream) {
    tallies_.outflow += face_sum(face_j, s.it * s.nk, mmi, s.first_angle, 1);
    if (s.dir.dj < 0 && !reflect_j_.empty())
      std::memcpy(reflect_j_.data() + (size(j_slot(iq)) * size(d_.mmo) * size(d_.kb) + block_index) * stride_j, face_j,
                  fj * sizeof(double));
  }
  if (s.last_k_block) {
    tallies_.outflow += face_sum(face_k_.data(), s.it * s.jt, mmi, s.first_angle, 2);
    if (s.dir.dk < 0 && !reflect_k_.empty())
      std::copy(face_k_.begin(), face_k_.end(),
                reflect_k_.begin() + static_cast<std::ptrdiff_t>(size(s.angle_block) * face_k_.size()));
  }
}

double TransportCompute::finish_iteration() {
  double change = 0, collisions = 0, flux_sum = 0;
  for (std::size_t c = 0; c < flux_.size(); ++c) {
    const double phi = flux_[c];
    const double difference = std::fabs(phi - previous_[c]);
    change = std::max(change, std::fabs(phi) > 1e-300 ? difference / std::fabs(phi) : difference);
    collisions += sigt_[c] * phi;
    flux_sum += phi;
  }
  tallies_.collisions = collisions * volume_;
  tallies_.flux_sum = flux_sum * volume_;
  tallies_.absorption = (material_.sigt - material_.sigs) * tallies_.flux_sum;
  return change;
}

double TransportCompute::flux_at(int i, int j, int k) const {
  if (i < 0 || i >= d_.it || j < 0 || j >= d_.jt || k < 0 || k >= d_.kt) return 0;
  return flux_[(size(k) * size(d_.jt) + size(j)) * size(d_.it) + size(i)];
}

ModeledCompute::ModeledCompute(double ns_per_cell_angle, Delay delay)
    : ns_per_cell_angle_(ns_per_cell_angle), delay_(std::move(delay)) {
  if (!(ns_per_cell_angle >= 0) || !std::isfinite(ns_per_cell_angle))
    throw std::invalid_argument("the modeled time per cell-angle must be a finite number >= 0");
  if (!delay_) delay_ = spin_for_ns;
}

void ModeledCompute::compute(const BlockStep& s, double*, double*) {
  delay_(ns_per_cell_angle_ * static_cast<double>(s.it) * s.jt * s.nk * s.angles);
}

void spin_for_ns(double ns) {
  using Clock = std::chrono::steady_clock;
  const auto end = Clock::now() + std::chrono::nanoseconds(static_cast<long long>(ns));
  while (Clock::now() < end) {
  }
}

}  // namespace poems::sweep3d::app
