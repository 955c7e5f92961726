// The order in which a reduction combines the ranks' contributions.
//
// MPI leaves the association of a reduction open, and floating-point sums of
// the same numbers in another order differ in their last digits, which a
// program prints. So that a program prints under `poems direct` what it
// prints under mpirun, MPI_Reduce and MPI_Allreduce combine the contributions
// in the order Open MPI 4.1's default ("tuned") component does: its fixed
// decision picks an algorithm by communicator size and message size, and
// each algorithm is a tree (per block of elements for the ring) in which a
// node combines its own value with its children's results, left to right.
// The virtual time does not depend on this; it comes from the collective's
// own LogGOPS schedule.
#pragma once

#include <cstdint>
#include <vector>

namespace poems::direct {

// One tree: node r's value is ((c_r op T(k0)) op T(k1)) ... over its children
// k0, k1, ... in order; the result is the value at `root`.
struct ReductionTree {
  int root = 0;
  std::vector<std::vector<int>> children;  // per rank
};

// Items [first, first + items) of the buffer combine by `tree`.
struct ReductionPiece {
  std::uint64_t first = 0;
  std::uint64_t items = 0;
  ReductionTree tree;
};

enum class ReductionKind { Reduce, Allreduce };

// The pieces covering `count` items (each `item_bytes` bytes) reduced over
// `procs` ranks (to `root` for Reduce). `commutative` is the operator's.
std::vector<ReductionPiece> reduction_order(ReductionKind kind, int procs, int root, std::uint64_t count,
                                            std::uint64_t item_bytes, bool commutative);

// The trees themselves (exposed for tests).
ReductionTree right_fold(int procs);                 // c_0 op (c_1 op (... op c_{p-1}))
ReductionTree chain_from(int procs, int root);       // c_root op (c_root+1 op (...)), cyclic
ReductionTree binary_tree(int procs, int root);      // Open MPI's fanout-2 tree, shifted by root
ReductionTree binomial_tree(int procs, int root);    // Open MPI's in-order binomial tree
ReductionTree recursive_doubling(int procs);         // pairs, then pairs of pairs, ...
ReductionTree left_fold_from(int procs, int first);  // ((c_f op c_f+1) op ...), cyclic (a ring block)

}  // namespace poems::direct
