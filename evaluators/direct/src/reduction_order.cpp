// Open MPI 4.1.4's choice of reduction algorithm (ompi/mca/coll/tuned/
// coll_tuned_decision_fixed.c) and each algorithm's association, as trees.
// Only the order of combination is reproduced here; the messages are not.
#include "reduction_order.h"

namespace poems::direct {

namespace {

ReductionTree empty_tree(int procs, int root) {
  ReductionTree t;
  t.root = root;
  t.children.assign(static_cast<std::size_t>(procs), {});
  return t;
}

int largest_power_of_two_at_most(int n) {
  int p = 1;
  while (p * 2 <= n) p *= 2;
  return p;
}

// Open MPI's allreduce algorithms: 1 linear, 3 recursive doubling, 4 ring,
// 5 segmented ring, 6 Rabenseifner (reduce-scatter + allgather).
int allreduce_algorithm(int p, std::uint64_t bytes, bool commutative) {
  if (!commutative) return 3;  // recursive doubling, or nonoverlapping (reduce + bcast) at some sizes
  if (p < 4) {
    if (bytes < 8) return 4;
    if (bytes < 4096) return 3;
    if (bytes < 8192) return 4;
    if (bytes < 16384) return 3;
    if (bytes < 65536) return 4;
    if (bytes < 262144) return 5;
    return 6;
  }
  if (p < 8) return bytes < 16 ? 4 : bytes < 8192 ? 3 : 6;
  if (p < 16) return bytes < 8192 ? 3 : 6;
  if (p < 32) return bytes < 64 ? 5 : bytes < 4096 ? 3 : 6;
  if (p < 64) return bytes < 128 ? 5 : 6;
  if (p < 128) return bytes < 262144 ? 3 : 6;
  return bytes < 16384 ? 3 : 6;  // larger communicators: nonoverlapping at some sizes, not modelled
}

// Open MPI's reduce algorithms: 1 linear, 2 chain, 3 pipeline, 4 binary,
// 5 binomial, 6 in-order binary, 7 reduce-scatter + gather.
int reduce_algorithm(int p, std::uint64_t bytes) {
  if (p < 4) {
    if (bytes < 8) return 7;
    if (bytes < 16) return 4;
    if (bytes < 32) return 3;
    if (bytes < 262144) return 1;
    if (bytes < 524288) return 3;
    if (bytes < 1048576) return 2;
    return 3;
  }
  if (p < 8) {
    if (bytes < 4096) return 4;
    if (bytes < 65536) return 2;
    if (bytes < 262144) return 5;
    if (bytes < 524288) return 1;
    if (bytes < 1048576) return 5;
    return 1;
  }
  if (p < 16) return bytes < 8192 ? 4 : 5;
  if (p < 32) return bytes < 4096 ? 4 : 5;
  return 5;  // in-order binary at a few sizes beyond 256 ranks, not modelled
}

ReductionPiece whole(std::uint64_t count, ReductionTree tree) { return ReductionPiece{0, count, std::move(tree)}; }

}  // namespace

ReductionTree right_fold(int procs) { return chain_from(procs, 0); }

ReductionTree chain_from(int procs, int root) {
  ReductionTree t = empty_tree(procs, root);
  for (int i = 0; i + 1 < procs; ++i)
    t.children[static_cast<std::size_t>((root + i) % procs)].push_back((root + i + 1) % procs);
  return t;
}

ReductionTree left_fold_from(int procs, int first) {
  ReductionTree t = empty_tree(procs, first);
  for (int i = 1; i < procs; ++i) t.children[static_cast<std::size_t>(first)].push_back((first + i) % procs);
  return t;
}

// ompi_coll_base_topo_build_tree(2, comm, root): shifted rank s at level l
// (2^l - 1 <= s < 2^(l+1) - 1) has children s + 2^l and s + 2^(l+1).
ReductionTree binary_tree(int procs, int root) {
  ReductionTree t = empty_tree(procs, root);
  for (int s = 0; s < procs; ++s) {
    int delta = 1;
    while (2 * delta - 1 <= s) delta *= 2;  // delta = 2^level
    for (int i = 1; i <= 2; ++i) {
      const int child = s + delta * i;
      if (child >= procs) break;
      t.children[static_cast<std::size_t>((s + root) % procs)].push_back((child + root) % procs);
    }
  }
  return t;
}

// ompi_coll_base_topo_build_in_order_bmtree: virtual rank v's children are
// v | mask for the masks below v's lowest set bit, ascending.
ReductionTree binomial_tree(int procs, int root) {
  ReductionTree t = empty_tree(procs, root);
  for (int v = 0; v < procs; ++v)
    for (int mask = 1; mask < procs && (v & mask) == 0; mask <<= 1)
      if ((v | mask) < procs)
        t.children[static_cast<std::size_t>((v + root) % procs)].push_back(((v | mask) + root) % procs);
  return t;
}

// ompi_coll_base_allreduce_intra_recursivedoubling (and the recursive halving
// of Rabenseifner's): with 2^k <= p < 2^(k+1) and e = p - 2^k, ranks 2i and
// 2i+1 (i < e) first combine into new rank i, the others become rank - e;
// then new ranks combine in pairs, pairs of pairs, ..., lower ranks on the left.
ReductionTree recursive_doubling(int procs) {
  const int adjusted = largest_power_of_two_at_most(procs);
  const int extra = procs - adjusted;
  auto real = [extra](int n) { return n < extra ? 2 * n : n + extra; };
  ReductionTree t = empty_tree(procs, 0);
  for (int i = 0; i < extra; ++i) t.children[static_cast<std::size_t>(2 * i)].push_back(2 * i + 1);
  for (int n = 0; n < adjusted; ++n)
    for (int mask = 1; mask < adjusted && (n & mask) == 0; mask <<= 1)
      t.children[static_cast<std::size_t>(real(n))].push_back(real(n | mask));
  return t;
}

std::vector<ReductionPiece> reduction_order(ReductionKind kind, int procs, int root, std::uint64_t count,
                                            std::uint64_t item_bytes, bool commutative) {
  const std::uint64_t bytes = count * item_bytes;
  const auto p = static_cast<std::uint64_t>(procs);
  std::vector<ReductionPiece> pieces;
  if (procs <= 1) {
    pieces.push_back(whole(count, empty_tree(1, 0)));
    return pieces;
  }
  if (kind == ReductionKind::Reduce) {
    if (!commutative) {  // Open MPI: linear, or an in-order binary tree at some sizes
      pieces.push_back(whole(count, right_fold(procs)));
      return pieces;
    }
    switch (reduce_algorithm(procs, bytes)) {
      case 1: pieces.push_back(whole(count, right_fold(procs))); break;
      case 2:  // a chain of fanout 1 is the pipeline
      case 3: pieces.push_back(whole(count, chain_from(procs, root))); break;
      case 4: pieces.push_back(whole(count, binary_tree(procs, root))); break;
      case 7:
        pieces.push_back(whole(count, count < static_cast<std::uint64_t>(largest_power_of_two_at_most(procs))
                                          ? right_fold(procs)
                                          : recursive_doubling(procs)));
        break;
      default: pieces.push_back(whole(count, binomial_tree(procs, root))); break;
    }
    return pieces;
  }
  int algorithm = allreduce_algorithm(procs, bytes, commutative);
  if ((algorithm == 4 || algorithm == 5) && count < p) algorithm = 3;  // the ring falls back on small counts
  if (algorithm == 6 && count < static_cast<std::uint64_t>(largest_power_of_two_at_most(procs))) algorithm = 1;
  if (algorithm == 1) {
    pieces.push_back(whole(count, right_fold(procs)));
  } else if (algorithm == 4 || algorithm == 5) {
    // Ring: block b (the first count % p blocks one item longer) starts at
    // rank b and passes round the ring, each rank adding its own on the right.
    // The segmented ring splits blocks further; its association is taken as the ring's.
    const std::uint64_t late = count / p, split = count % p;
    std::uint64_t first = 0;
    for (int b = 0; b < procs; ++b) {
      const std::uint64_t items = late + (static_cast<std::uint64_t>(b) < split ? 1 : 0);
      if (items > 0) pieces.push_back(ReductionPiece{first, items, left_fold_from(procs, b)});
      first += items;
    }
  } else {
    pieces.push_back(whole(count, recursive_doubling(procs)));
  }
  return pieces;
}

}  // namespace poems::direct
