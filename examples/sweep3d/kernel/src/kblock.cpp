// The Sweep3D k-block kernel (see kblock.h for what it computes).
#include "poems/sweep3d/kblock.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>

#include "poems/processor/processor_model.h"
#include "poems/sweep3d/column.h"

namespace poems::sweep3d {
namespace {

// One cell, one ordinate, with the set-to-zero fixup: faces whose outflow
// would be negative are pinned to 0 and psi recomputed until none is (at most
// four solves: each round pins at least one more of the three faces).
inline double solve_with_fixup(double s, double sigt, double cx, double cy, double cz, double& fi, double& fj,
                               double& fk, std::uint64_t& fixups) {
  const double in_i = fi, in_j = fj, in_k = fk;
  double psi = (s + cx * in_i + cy * in_j + cz * in_k) / (sigt + cx + cy + cz);
  double out_i = 2 * psi - in_i, out_j = 2 * psi - in_j, out_k = 2 * psi - in_k;
  if (out_i >= 0 && out_j >= 0 && out_k >= 0) {
    fi = out_i, fj = out_j, fk = out_k;
    return psi;
  }
  ++fixups;
  bool zi = false, zj = false, zk = false;  // pinned faces
  for (;;) {
    bool more = false;
    if (!zi && out_i < 0) zi = more = true;
    if (!zj && out_j < 0) zj = more = true;
    if (!zk && out_k < 0) zk = more = true;
    if (!more) break;
    // Balance with pinned faces: a pinned face contributes (c/2)·(0 − in).
    const double num = s + (zi ? cx / 2 : cx) * in_i + (zj ? cy / 2 : cy) * in_j + (zk ? cz / 2 : cz) * in_k;
    const double den = sigt + (zi ? 0 : cx) + (zj ? 0 : cy) + (zk ? 0 : cz);
    psi = num / den;
    out_i = zi ? 0 : 2 * psi - in_i;
    out_j = zj ? 0 : 2 * psi - in_j;
    out_k = zk ? 0 : 2 * psi - in_k;
  }
  fi = out_i, fj = out_j, fk = out_k;
  return psi;
}

template <bool Fixup>
SweepCounts sweep(const KBlockView& st, Octant o) {
  const KBlockShape sh = st.shape;
  const std::ptrdiff_t it = sh.it, jt = sh.jt, mk = sh.mk;
  SweepCounts counts;
  const double* source = st.source;
  const double* sigt = st.sigt;
  double* flux = st.flux;
  for (int m = 0; m < sh.angles; ++m) {
    const Ordinate& a = st.ordinates[m];
    const double cx = 2 * std::fabs(a.mu) / st.dx, cy = 2 * std::fabs(a.eta) / st.dy, cz = 2 * std::fabs(a.xi) / st.dz,
                 w = a.w, cxyz = cx + cy + cz;
    double* face_i = st.face_i + m * mk * jt;  // (k, j)
    double* face_j = st.face_j + m * mk * it;  // (k, i)
    double* face_k = st.face_k + m * jt * it;  // (j, i)
    for (std::ptrdiff_t kk = 0; kk < mk; ++kk) {
      const std::ptrdiff_t k = o.dk > 0 ? kk : mk - 1 - kk;
      for (std::ptrdiff_t jj = 0; jj < jt; ++jj) {
        const std::ptrdiff_t j = o.dj > 0 ? jj : jt - 1 - jj;
        const std::ptrdiff_t row = (k * jt + j) * it;
        const double* s_row = source + row;
        const double* t_row = sigt + row;
        double* f_row = flux + row;
        double* fj_row = face_j + k * it;
        double* fk_row = face_k + j * it;
        double fi = face_i[k * jt + j];  // carried along the row: the i recurrence
        std::ptrdiff_t i = o.di > 0 ? 0 : it - 1;
        const std::ptrdiff_t step = o.di > 0 ? 1 : -1;
        for (std::ptrdiff_t n = 0; n < it; ++n, i += step) {
          double psi;
          if constexpr (Fixup) {
            psi = solve_with_fixup(s_row[i], t_row[i], cx, cy, cz, fi, fj_row[i], fk_row[i], counts.fixups);
          } else {
            psi = (s_row[i] + cx * fi + cy * fj_row[i] + cz * fk_row[i]) / (t_row[i] + cxyz);
            fi = 2 * psi - fi;
            fj_row[i] = 2 * psi - fj_row[i];
            fk_row[i] = 2 * psi - fk_row[i];
          }
          f_row[i] += w * psi;
        }
        face_i[k * jt + j] = fi;
      }
    }
  }
  counts.cell_angles = static_cast<std::uint64_t>(sh.cells()) * static_cast<std::uint64_t>(sh.angles);
  return counts;
}

// A whole number >= 1 from params, or std::invalid_argument.
int positive_int(const std::map<std::string, double>& params, const std::string& name) {
  auto it = params.find(name);
  if (it == params.end()) throw std::invalid_argument("sweep3d.kblock needs parameter '" + name + "'");
  const double v = it->second;
  if (!std::isfinite(v) || v != std::floor(v) || v < 1 || v > 1e9)
    throw std::invalid_argument("sweep3d.kblock: parameter '" + name + "' = " + std::to_string(v) +
                                " is not a whole number from 1 to 10^9");
  return static_cast<int>(v);
}

// cells = a·b·c exactly, with the largest factor as small as the divisors allow
// (ties: the smaller middle factor, i.e. the more cube-like block).
std::array<long long, 3> factor3(long long n) {
  std::array<long long, 3> best{n, 1, 1};
  for (long long a = 1; a * a * a <= n; ++a) {
    if (n % a != 0) continue;
    const long long m = n / a;
    long long b = static_cast<long long>(std::sqrt(static_cast<double>(m)));
    while (b * b > m) --b;
    while (b > 1 && m % b != 0) --b;
    const long long c = m / b;  // c >= b; a <= b unless m has no divisor >= a below its root
    std::array<long long, 3> f{a, b, c};
    std::sort(f.begin(), f.end(), std::greater<>());
    if (f < best) best = f;  // smallest largest factor, then smallest middle one
  }
  return best;  // descending
}

constexpr double kMaxCells = 1e8;  // 2.4 GB of cell arrays: beyond any k-block worth timing

}  // namespace

void KBlockState::reshape(KBlockShape shape) {
  if (shape.it < 1 || shape.jt < 1 || shape.mk < 1 || shape.angles < 1)
    throw std::invalid_argument("KBlockState: it, jt, mk and angles must be >= 1");
  if (shape == shape_) return;
  shape_ = shape;
  const std::size_t cells = shape.cells(), a = static_cast<std::size_t>(shape.angles);
  const std::size_t it = static_cast<std::size_t>(shape.it), jt = static_cast<std::size_t>(shape.jt),
                    mk = static_cast<std::size_t>(shape.mk);
  dx = dy = dz = 1;
  ordinates.resize(a);
  for (int m = 0; m < shape.angles; ++m) ordinates[static_cast<std::size_t>(m)] = default_ordinate(m);
  source.assign(cells, 1.0);
  sigt.assign(cells, 1.0);
  flux.assign(cells, 0.0);
  face_i.assign(jt * mk * a, 0.0);
  face_j.assign(it * mk * a, 0.0);
  face_k.assign(it * jt * a, 0.0);
}

Ordinate default_ordinate(int m) {
  // Level-symmetric S6 (Lewis & Miller): cosines μ1 < μ2 < μ3, two weight classes.
  constexpr double mu1 = 0.2666355, mu2 = 0.6815076, mu3 = 0.9261808;
  constexpr double w1 = 0.1761263, w2 = 0.1572071;
  static const std::array<Ordinate, 6> table = [] {
    std::array<Ordinate, 6> t{{{mu1, mu1, mu3, w1},
                               {mu1, mu3, mu1, w1},
                               {mu3, mu1, mu1, w1},
                               {mu1, mu2, mu2, w2},
                               {mu2, mu1, mu2, w2},
                               {mu2, mu2, mu1, w2}}};
    double total = 0;
    for (const auto& o : t) total += o.w;
    for (auto& o : t) {
      const double norm = std::sqrt(o.mu * o.mu + o.eta * o.eta + o.xi * o.xi);
      o.mu /= norm, o.eta /= norm, o.xi /= norm;
      o.w /= total * 8;
    }
    return t;
  }();
  return table[static_cast<std::size_t>(m % 6)];
}

SweepCounts sweep_kblock(const KBlockView& view, Octant octant) {
  return view.fixup ? sweep<true>(view, octant) : sweep<false>(view, octant);
}

SweepCounts sweep_kblock(KBlockState& state, Octant octant) {
  KBlockView view;
  view.shape = state.shape();
  view.dx = state.dx, view.dy = state.dy, view.dz = state.dz;
  view.fixup = state.fixup;
  view.ordinates = state.ordinates.data();
  view.source = state.source.data();
  view.sigt = state.sigt.data();
  view.flux = state.flux.data();
  view.face_i = state.face_i.data();
  view.face_j = state.face_j.data();
  view.face_k = state.face_k.data();
  return sweep_kblock(view, octant);
}

SweepCounts sweep_kblock(KBlockState& state, int it, int jt, int mk, int angles) {
  state.reshape(KBlockShape{it, jt, mk, angles});
  return sweep_kblock(state, Octant{});
}

KBlockShape shape_for(const std::map<std::string, double>& params) {
  KBlockShape shape;
  shape.angles = positive_int(params, "angles");
  if (params.count("it") && params.count("jt") && params.count("mk")) {
    shape.it = positive_int(params, "it");
    shape.jt = positive_int(params, "jt");
    shape.mk = positive_int(params, "mk");
  } else if (params.count("cells")) {
    const auto f = factor3(positive_int(params, "cells"));
    shape.it = static_cast<int>(f[0]), shape.jt = static_cast<int>(f[1]), shape.mk = static_cast<int>(f[2]);
  } else {
    throw std::invalid_argument("sweep3d.kblock needs parameters it, jt, mk and angles, or cells and angles");
  }
  if (static_cast<double>(shape.cells()) > kMaxCells)
    throw std::invalid_argument("sweep3d.kblock: " + std::to_string(shape.cells()) + " cells exceed the limit of " +
                                std::to_string(static_cast<long long>(kMaxCells)));
  return shape;
}

void register_sweep3d_kernels() {
  // In a column, a call sweeps the next k-block; 8 octants of ceil(kt / mk)
  // blocks each bring the column back to where it started (KColumn).
  processor::register_kernel_cycle("sweep3d.kblock", [](const std::map<std::string, double>& params) {
    auto kt = params.find("kt"), mk = params.find("mk");
    if (kt == params.end() || mk == params.end() || !(kt->second >= 1) || !(mk->second >= 1)) return 1;
    const double block = std::min(mk->second, kt->second);
    return static_cast<int>(std::min(8 * std::ceil(kt->second / block), 1e5));
  });
  processor::register_kernel("sweep3d.kblock", [](const std::map<std::string, double>& params) {
    // Per thread: the last params and their shape (shape_for factors cells,
    // which must not be timed on every call), and the block's or column's arrays.
    thread_local std::map<std::string, double> last_params;
    thread_local KBlockShape shape;
    thread_local int kt = 0;
    thread_local bool have_shape = false;
    thread_local KBlockState state;
    thread_local KColumn column;
    if (!have_shape || params != last_params) {
      const KBlockShape new_shape = shape_for(params);
      const int new_kt = params.count("kt") ? positive_int(params, "kt") : 0;
      if (static_cast<double>(new_shape.it) * new_shape.jt * new_kt > kMaxCells)
        throw std::invalid_argument("sweep3d.kblock: a column of " + std::to_string(new_shape.it) + " x " +
                                    std::to_string(new_shape.jt) + " x " + std::to_string(new_kt) +
                                    " cells exceeds the limit of " + std::to_string(static_cast<long long>(kMaxCells)));
      shape = new_shape;
      kt = new_kt;
      last_params = params;
      have_shape = true;
    }
    auto fix = params.find("fixup");
    const bool fixup = fix != params.end() && fix->second != 0;
    if (kt > 0) {
      column.reshape(shape, kt);
      column.fixup = fixup;
      // With the run's angles per octant (mm), the iteration's work between
      // sweeps is timed too, spread over its blocks (column.h).
      auto mm = params.find("mm");
      column.set_iteration_passes(mm == params.end() || !(mm->second >= shape.angles) || !std::isfinite(mm->second)
                                      ? 0
                                      : static_cast<int>(std::min(std::floor(mm->second / shape.angles), 1e4)));
      column.sweep_next();
      return;
    }
    state.reshape(shape);
    state.fixup = fixup;
    sweep_kblock(state);
  });
}

}  // namespace poems::sweep3d
