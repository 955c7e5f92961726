// known answer (docs/references.md)s, as GOAL text and through the collectives library.
#include "sim_test_util.h"

namespace poems::sim::testing {
namespace {

using taskgraph::CollectiveAlgorithm;
using taskgraph::CollectiveOp;

const std::vector<Picoseconds> kTree8 = {ns(34914), ns(24776), ns(13138), ns(13138),
                                         ns(1500),  ns(1500),  ns(1500),  ns(1500)};

TEST(KnownAnswers, EightRankTreeFromGoal) {
  const char* text = R"(num_ranks 8
rank 0 { a: recv 1024b from 1; b: recv 1024b from 2; c: recv 1024b from 4 }
rank 1 { a: recv 1024b from 3; b: recv 1024b from 5; s: send 1024b to 0; s requires a; s requires b }
rank 2 { a: recv 1024b from 6; s: send 1024b to 0; s requires a }
rank 3 { a: recv 1024b from 7; s: send 1024b to 1; s requires a }
rank 4 { s: send 1024b to 0 }
rank 5 { s: send 1024b to 1 }
rank 6 { s: send 1024b to 2 }
rank 7 { s: send 1024b to 3 }
)";
  SimulationResult r = run_goal(text, params(2500, 1500, 1000, ns_per_byte(6), 0));
  ASSERT_TRUE(r.completed);
  EXPECT_EQ(finishes(r), kTree8);
  EXPECT_EQ(r.max_finish, ns(34914));
  EXPECT_EQ(r.messages, 7u);
}

TEST(KnownAnswers, EightRankTreeFromBinomialReduce) {
  SimulationResult r = run_collective(CollectiveOp::Reduce, CollectiveAlgorithm::Binomial, 8, 1024,
                                      params(2500, 1500, 1000, ns_per_byte(6), 0));
  ASSERT_TRUE(r.completed);
  EXPECT_EQ(finishes(r), kTree8);
}

TEST(KnownAnswers, TwoRanksComputeThenMessage) {
  const char* text = R"(num_ranks 2
rank 0 { c: calc 1000; s: send 4096b to 1; s requires c }
rank 1 { r: recv 4096b from 0; c: calc 500; c requires r }
)";
  SimulationResult r = run_goal(text, params(1000, 200, 100, ns_per_byte(1), 0));
  ASSERT_TRUE(r.completed);
  EXPECT_EQ(finishes(r), (std::vector<Picoseconds>{ns(1200), ns(6995)}));
  // Breakdown: rank 1 computes 500, spends o + 4095 G receiving, and waits the rest.
  EXPECT_EQ(r.per_rank[1].compute, ns(500));
  EXPECT_EQ(r.per_rank[1].overhead, ns(200 + 4095));
  EXPECT_EQ(r.per_rank[1].wait, ns(6995 - 500 - 4295));
  EXPECT_EQ(r.per_rank[0].wait, 0u);
}

}  // namespace
}  // namespace poems::sim::testing
