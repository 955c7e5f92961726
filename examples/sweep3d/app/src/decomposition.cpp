// Sweep3D's KBA decomposition (see decomposition.h).
#include "poems/sweep3d/app/decomposition.h"

#include <stdexcept>
#include <string>

namespace poems::sweep3d::app {

OctantDirection octant_direction(int iq) {
  if (iq < 0 || iq > 7) throw std::invalid_argument("octant " + std::to_string(iq) + " is outside 0..7");
  OctantDirection d;
  d.di = iq < 4 ? -1 : 1;
  d.dj = (iq / 2) % 2 == 0 ? -1 : 1;
  d.dk = iq % 2 == 0 ? -1 : 1;
  return d;
}

int part_size(int n, int p, int q) { return n / p + (q < n % p ? 1 : 0); }

int first_index(int n, int p, int q) { return q * (n / p) + (q < n % p ? q : n % p); }

int Decomposition::neighbour(int di, int dj) const {
  const int i = pi + di, j = pj + dj;
  if (i < 0 || i >= npe_i || j < 0 || j >= npe_j) return kNoNeighbour;
  return i * npe_j + j;
}

Decomposition decompose(const Deck& deck, int ranks, int rank) {
  if (static_cast<long long>(deck.npe_i) * deck.npe_j != ranks)
    throw std::invalid_argument("npe_i * npe_j = " + std::to_string(deck.npe_i * deck.npe_j) + " is not " +
                                std::to_string(ranks) + " processes");
  if (rank < 0 || rank >= ranks) throw std::invalid_argument("rank " + std::to_string(rank) + " is outside the grid");
  Decomposition d;
  d.ranks = ranks;
  d.rank = rank;
  d.npe_i = deck.npe_i;
  d.npe_j = deck.npe_j;
  d.pi = rank / deck.npe_j;
  d.pj = rank % deck.npe_j;
  d.it = part_size(deck.it_g, deck.npe_i, d.pi);
  d.jt = part_size(deck.jt_g, deck.npe_j, d.pj);
  d.i0 = first_index(deck.it_g, deck.npe_i, d.pi);
  d.j0 = first_index(deck.jt_g, deck.npe_j, d.pj);
  d.it_max = part_size(deck.it_g, deck.npe_i, 0);
  d.jt_max = part_size(deck.jt_g, deck.npe_j, 0);
  d.kt = deck.kt;
  d.mk = deck.mk;
  d.kb = deck.k_blocks();
  d.mmi = deck.mmi;
  d.mmo = deck.angle_blocks();
  d.mm = deck.mm;
  return d;
}

std::uint64_t messages_per_iteration(int npe_i, int npe_j, int kb, int mmo) {
  // Each of the 8 octants sends along i from every process with an
  // i-downstream neighbour ((npe_i-1)·npe_j of them) and along j likewise.
  const std::uint64_t a = static_cast<std::uint64_t>(npe_i), b = static_cast<std::uint64_t>(npe_j);
  return 8ull * static_cast<std::uint64_t>(mmo) * static_cast<std::uint64_t>(kb) * ((a - 1) * b + a * (b - 1));
}

std::uint64_t pipeline_steps(int npe_i, int npe_j, int kb, int mmo) {
  return 8ull * static_cast<std::uint64_t>(mmo) * static_cast<std::uint64_t>(kb) +
         2ull * static_cast<std::uint64_t>(npe_i - 1) + 4ull * static_cast<std::uint64_t>(npe_j - 1);
}

}  // namespace poems::sweep3d::app
