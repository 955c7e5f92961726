// Sweep3D's KBA decomposition (docs/references.md, Sweep3D facts), without MPI: the 2-D
// processor grid over (i, j), the local block of each process (the remainder
// of it_g / npe_i and jt_g / npe_j goes to the lowest ranks; kt is not
// decomposed), the octant order and directions, the k-blocks, and the
// message counts the PSL task graph predicts.
//
// Ranks are numbered row-major over [pi, pj] (rank = pi * npe_j + pj), as the
// task graph numbers the PSL process set { [pi, pj] }.
#pragma once

#include <cstdint>

#include "poems/sweep3d/app/deck.h"

namespace poems::sweep3d::app {

// Sweep direction per axis, +1 or -1. Sweep3D's order (i, j):
// (-,-) (-,-) (-,+) (-,+) (+,-) (+,-) (+,+) (+,+); within each pair k goes
// down (from kt to 0), then up: the second octant of a pair starts at the
// k = 0 face where the first one left (the reflective k boundary).
struct OctantDirection {
  int di = -1, dj = -1, dk = -1;
};
OctantDirection octant_direction(int iq);  // iq in 0..7

inline constexpr int kNoNeighbour = -1;

struct Decomposition {
  int ranks = 1, rank = 0;
  int npe_i = 1, npe_j = 1, pi = 0, pj = 0;
  int it = 1, jt = 1, kt = 1;  // local cells (kt: all planes)
  int i0 = 0, j0 = 0;          // global index of the first local cell
  int it_max = 1, jt_max = 1;  // of the largest block (what the PSL spec uses)
  int mk = 1, kb = 1, mmi = 1, mmo = 1, mm = 1;

  // The rank at (pi + di, pj + dj), or kNoNeighbour outside the grid.
  int neighbour(int di, int dj) const;
  // Message sizes in doubles: i-direction (to/from pi±1) jt·mk·mmi, j-direction it·mk·mmi.
  std::size_t face_i_doubles() const { return static_cast<std::size_t>(jt) * mk * mmi; }
  std::size_t face_j_doubles() const { return static_cast<std::size_t>(it) * mk * mmi; }
  // Cells [k0, k0 + nk) of k-block b (0-based from k = 0; the last may be short).
  int block_k0(int b) const { return b * mk; }
  int block_nk(int b) const { return b * mk + mk <= kt ? mk : kt - b * mk; }
};

// Throws std::invalid_argument if the deck does not fit `ranks` or rank is outside.
Decomposition decompose(const Deck& deck, int ranks, int rank);

// Local cells along one axis: n cells over p processes, the remainder to the
// lowest indices. first_index is the global index of the first cell of part q.
int part_size(int n, int p, int q);
int first_index(int n, int p, int q);

// docs/references.md, Sweep3D facts, per source iteration, of the whole grid:
//   messages = kb·[4·(2mmo)·4 + 2(npe_i−2)(2mmo)·6 + 2(npe_j−2)(2mmo)·6 + (npe_i−2)(npe_j−2)(2mmo)·8]
// (for grids of at least 2 × 2; general grids count each process's sends).
std::uint64_t messages_per_iteration(int npe_i, int npe_j, int kb, int mmo);
// Pipeline steps per iteration: 8·mmo·kb + 2(npe_i−1) + 4(npe_j−1).
std::uint64_t pipeline_steps(int npe_i, int npe_j, int kb, int mmo);

}  // namespace poems::sweep3d::app
