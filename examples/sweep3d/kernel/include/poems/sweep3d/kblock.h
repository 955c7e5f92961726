// The Sweep3D k-block kernel: the computation of one pipeline step of
// Sweep3D 2.2 (DESIGN section 6). One process, one octant, one block of
// `angles` (mmi) discrete ordinates, one k-block of it × jt × mk cells:
// for each angle and each cell in sweep order, the diamond-difference (DD)
// balance equation
//
//   psi = (s + cx·ψi + cy·ψj + cz·ψk) / (σt + cx + cy + cz),
//   cx = 2|μ|/dx, cy = 2|η|/dy, cz = 2|ξ|/dz,
//
// with ψi, ψj, ψk the angular fluxes entering the cell through its i, j and k
// faces; the outgoing face fluxes are 2·psi − ψin (diamond difference), and
// the cell's scalar flux accumulates w·psi. With fixups on, an outgoing face
// flux that would be negative is set to zero and psi is recomputed from the
// balance equation (Sweep3D's ifixups, the "set-to-zero" fixup), which keeps
// every cell's particle balance exact:
//
//   σt·psi + (cx/2)(ψi_out − ψi_in) + (cy/2)(ψj_out − ψj_in) + (cz/2)(ψk_out − ψk_in) = s.
//
// The face arrays are Sweep3D's phiib / phijb / phikb: before a sweep they
// hold the inflow, after it the outflow, in place. face_i (jt·mk·angles
// doubles) is exactly the east-west message of a k-block (8·jt·mk·mmi bytes),
// face_j (it·mk·angles) the north-south one; face_k (it·jt·angles) is carried
// from one k-block to the next on the same process. A real MPI Sweep3D does,
// per k-block: receive into face_i and face_j, sweep_kblock, send them.
//
// Data are contiguous; nothing is allocated inside a sweep (reshape allocates
// when the shape changes). The source is one isotropic value per cell (isct =
// 0; with scattering the caller refreshes `source` between iterations).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace poems::sweep3d {

// The size of one k-block: it × jt × mk cells and `angles` (mmi) ordinates.
struct KBlockShape {
  int it = 1, jt = 1, mk = 1, angles = 1;
  std::size_t cells() const {
    return static_cast<std::size_t>(it) * static_cast<std::size_t>(jt) * static_cast<std::size_t>(mk);
  }
  auto operator<=>(const KBlockShape&) const = default;
};

// Sweep direction per axis: +1 from index 0 upwards, −1 from the top down.
// Sweep3D's eight octants are the eight sign combinations.
struct Octant {
  int di = +1, dj = +1, dk = +1;
};

// One discrete ordinate: direction cosines |μ|, |η|, |ξ| (positive; the
// octant gives the signs) and its quadrature weight.
struct Ordinate {
  double mu = 0, eta = 0, xi = 0, w = 0;
};

// The arrays of one k-block. Construct or reshape once per shape; keep the
// vectors' sizes (reshape owns them), change their contents freely.
// Indexing (i fastest): cell (i, j, k) → (k·jt + j)·it + i;
// face_i (j, k, m) → (m·mk + k)·jt + j; face_j (i, k, m) → (m·mk + k)·it + i;
// face_k (i, j, m) → (m·jt + j)·it + i.
struct KBlockState {
  KBlockState() { reshape(KBlockShape{}); }
  explicit KBlockState(KBlockShape shape) { reshape(shape); }

  // Sets the shape; allocates only if it differs from the current one. A new
  // shape gets the defaults: dx = dy = dz = 1, source = 1, σt = 1, flux = 0,
  // vacuum inflow (faces 0), the S6 ordinates (default_ordinate).
  void reshape(KBlockShape shape);
  const KBlockShape& shape() const { return shape_; }

  std::size_t cell(int i, int j, int k) const {
    return (static_cast<std::size_t>(k) * static_cast<std::size_t>(shape_.jt) + static_cast<std::size_t>(j)) *
               static_cast<std::size_t>(shape_.it) +
           static_cast<std::size_t>(i);
  }
  std::size_t face_i_index(int j, int k, int m) const {
    return (static_cast<std::size_t>(m) * static_cast<std::size_t>(shape_.mk) + static_cast<std::size_t>(k)) *
               static_cast<std::size_t>(shape_.jt) +
           static_cast<std::size_t>(j);
  }
  std::size_t face_j_index(int i, int k, int m) const {
    return (static_cast<std::size_t>(m) * static_cast<std::size_t>(shape_.mk) + static_cast<std::size_t>(k)) *
               static_cast<std::size_t>(shape_.it) +
           static_cast<std::size_t>(i);
  }
  std::size_t face_k_index(int i, int j, int m) const {
    return (static_cast<std::size_t>(m) * static_cast<std::size_t>(shape_.jt) + static_cast<std::size_t>(j)) *
               static_cast<std::size_t>(shape_.it) +
           static_cast<std::size_t>(i);
  }

  double dx = 1, dy = 1, dz = 1;  // cell widths
  bool fixup = false;             // Sweep3D's ifixups: negative-flux fixup on/off
  std::vector<Ordinate> ordinates;
  std::vector<double> source;  // per cell, isotropic: s
  std::vector<double> sigt;    // per cell: total cross section σt
  std::vector<double> flux;    // per cell: += w·psi over every swept ordinate
  std::vector<double> face_i, face_j, face_k;

 private:
  KBlockShape shape_{0, 0, 0, 0};
};

// The same arrays borrowed from elsewhere: what a full Sweep3D process uses,
// whose cell arrays span all kt planes (a k-block is the contiguous slice
// starting at cell (0, 0, k0)) and whose ordinates are one angle block of
// the octant's mm. Sizes as in KBlockState: cell arrays shape.cells(),
// face_i jt·mk·angles, face_j it·mk·angles, face_k it·jt·angles (layouts
// as there, with this view's mk).
struct KBlockView {
  KBlockShape shape;
  double dx = 1, dy = 1, dz = 1;
  bool fixup = false;
  const Ordinate* ordinates = nullptr;  // shape.angles of them
  const double* source = nullptr;
  const double* sigt = nullptr;
  double* flux = nullptr;
  double* face_i = nullptr;
  double* face_j = nullptr;
  double* face_k = nullptr;
};

// What a sweep did.
struct SweepCounts {
  std::uint64_t cell_angles = 0;  // balance equations solved
  std::uint64_t fixups = 0;       // cell-angles whose outflow needed the fixup
};

// Sweeps the block in the octant's direction: for each ordinate m, k, j, i
// in sweep order solves the DD balance, replaces face inflows by outflows and
// adds w·psi to flux. No allocation.
SweepCounts sweep_kblock(KBlockState& state, Octant octant = {});

// The sweep on borrowed arrays (KBlockState's sweep is this on its own).
SweepCounts sweep_kblock(const KBlockView& view, Octant octant);

// reshape(shape) (allocating only if the shape is new), then a sweep in
// octant (+,+,+). The form the measured processor model times.
SweepCounts sweep_kblock(KBlockState& state, int it, int jt, int mk, int angles);

// The default ordinates: the level-symmetric S6 set of one octant (6
// directions; Sweep3D's mm = 6), cycled for m ≥ 6, with weights w/8 so that
// the 6 ordinates of all 8 octants weigh 1 in total (an isotropic psi then
// gives flux = psi after a sweep of all eight octants).
Ordinate default_ordinate(int m);

// The k-block shape for a task's params: it, jt, mk, angles if all are given;
// otherwise cells and angles (the PSL KBlock passes only these), factored
// exactly into it × jt × mk with factors as near the cube root as the
// divisors allow (a prime cell count gives a long thin block; the time per
// cell-angle hardly depends on the shape). Throws std::invalid_argument for
// missing, fractional or non-positive values.
KBlockShape shape_for(const std::map<std::string, double>& params);

// Registers the kernel "sweep3d.kblock" with poems::processor: one call runs
// sweep_kblock once for shape_for(params) (params "fixup" != 0 turns fixups
// on), on a per-thread state that is reallocated only when the shape changes.
// With a parameter "kt" (the process's planes) a call sweeps the next k-block
// of a KColumn of it × jt × kt cells instead (column.h): the block inside the
// application's memory footprint; with "mm" too (the angles per octant),
// its share of the iteration's source update (KColumn::set_iteration_passes
// with mm / angles passes). Idempotent.
void register_sweep3d_kernels();

}  // namespace poems::sweep3d
