// The association of MPI_Reduce / MPI_Allreduce: Open MPI 4.1's trees
// (evaluators/direct/src/reduction_order.h). The printed results are checked
// against mpirun by DirectPrograms (reduction_order.c); these pin the shapes.
#include <gtest/gtest.h>

#include <vector>

#include "../../evaluators/direct/src/reduction_order.h"

namespace poems::direct {
namespace {

using Children = std::vector<std::vector<int>>;

// The expression a tree computes, e.g. "((0+1)+(2+3))".
std::string expression(const ReductionTree& t, int r) {
  std::string s = std::to_string(r);
  for (int c : t.children[static_cast<std::size_t>(r)]) s = "(" + s + "+" + expression(t, c) + ")";
  return s;
}

TEST(ReductionOrder, BinaryTreeIsOpenMpisFanoutTwoTree) {
  // coll_base_topo.c's example for 7 ranks: 0 -> 1 2, 1 -> 3 5, 2 -> 4 6.
  EXPECT_EQ(binary_tree(7, 0).children, (Children{{1, 2}, {3, 5}, {4, 6}, {}, {}, {}, {}}));
  // Shifted by the root.
  EXPECT_EQ(binary_tree(3, 1).children, (Children{{}, {2, 0}, {}}));
  EXPECT_EQ(binary_tree(3, 1).root, 1);
}

TEST(ReductionOrder, BinomialTreeIsInOrder) {
  EXPECT_EQ(binomial_tree(8, 0).children, (Children{{1, 2, 4}, {}, {3}, {}, {5, 6}, {}, {7}, {}}));
  EXPECT_EQ(expression(binomial_tree(4, 0), 0), "((0+1)+(2+3))");
}

TEST(ReductionOrder, RecursiveDoublingPairsThenPairsOfPairs) {
  EXPECT_EQ(expression(recursive_doubling(8), 0), "(((0+1)+(2+3))+((4+5)+(6+7)))");
  // 6 ranks: 0+1 and 2+3 first (new ranks 0 and 1), then 4 and 5 as new ranks 2 and 3.
  EXPECT_EQ(expression(recursive_doubling(6), 0), "(((0+1)+(2+3))+(4+5))");
  EXPECT_EQ(expression(recursive_doubling(3), 0), "((0+1)+2)");
}

TEST(ReductionOrder, FoldsAndChains) {
  EXPECT_EQ(expression(right_fold(4), 0), "(0+(1+(2+3)))");
  EXPECT_EQ(expression(chain_from(4, 2), 2), "(2+(3+(0+1)))");
  EXPECT_EQ(expression(left_fold_from(4, 1), 1), "(((1+2)+3)+0)");
}

TEST(ReductionOrder, OpenMpisDecisions) {
  // Allreduce of one double on 8 ranks: recursive doubling.
  auto pieces = reduction_order(ReductionKind::Allreduce, 8, 0, 1, 8, true);
  ASSERT_EQ(pieces.size(), 1u);
  EXPECT_EQ(expression(pieces[0].tree, pieces[0].tree.root), "(((0+1)+(2+3))+((4+5)+(6+7)))");
  // Reduce of 4 bytes on 8 ranks to root 3: the binary tree rooted at 3.
  pieces = reduction_order(ReductionKind::Reduce, 8, 3, 1, 4, true);
  ASSERT_EQ(pieces.size(), 1u);
  EXPECT_EQ(pieces[0].tree.root, 3);
  EXPECT_EQ(pieces[0].tree.children, binary_tree(8, 3).children);
  // Allreduce of 20 KB on 3 ranks: the ring, one block per rank, each starting at its rank.
  pieces = reduction_order(ReductionKind::Allreduce, 3, 0, 2500, 8, true);
  ASSERT_EQ(pieces.size(), 3u);
  EXPECT_EQ(pieces[1].first, 834u);
  EXPECT_EQ(pieces[1].items, 833u);
  EXPECT_EQ(expression(pieces[1].tree, pieces[1].tree.root), "((1+2)+0)");
  // Non-commutative: MPI's canonical order.
  pieces = reduction_order(ReductionKind::Reduce, 5, 2, 1, 8, false);
  EXPECT_EQ(expression(pieces[0].tree, pieces[0].tree.root), "(0+(1+(2+(3+4))))");
  // One rank: its own value.
  pieces = reduction_order(ReductionKind::Allreduce, 1, 0, 7, 4, true);
  EXPECT_EQ(expression(pieces[0].tree, 0), "0");
}

}  // namespace
}  // namespace poems::direct
