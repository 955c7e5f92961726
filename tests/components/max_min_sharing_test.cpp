// Max-min fair sharing: the known answers of docs/network.md ("Contention").
#include "poems/components/max_min_sharing.h"

#include <gtest/gtest.h>

#include <vector>

namespace poems::components {
namespace {

constexpr double kGBps = 1e-3;  // 1 GB/s in bytes per ps: 1,000 B take 1,000,000 ps alone

// Finishes every flow, returning (tag, end) in the order they leave.
std::vector<std::pair<std::uint64_t, Picoseconds>> drain(MaxMinSharing& net) {
  std::vector<std::pair<std::uint64_t, Picoseconds>> out;
  for (Picoseconds t = net.next_end(); t != MaxMinSharing::kNever; t = net.next_end())
    out.emplace_back(net.finish_next(t), t);
  return out;
}

TEST(MaxMinSharing, AFlowAloneRunsAtItsBottleneck) {
  MaxMinSharing net;
  const std::uint32_t fast = net.add_resource(2 * kGBps), slow = net.add_resource(kGBps);
  const std::uint32_t route[] = {fast, slow};
  const std::uint32_t f = net.start(100, route, 1000, 7);
  EXPECT_DOUBLE_EQ(net.rate(f), kGBps);
  EXPECT_EQ(drain(net), (std::vector<std::pair<std::uint64_t, Picoseconds>>{{7, 1'000'100}}));
}

TEST(MaxMinSharing, TwoFlowsOnOneLinkEachGetHalfAndFinishAtTheClosedForm) {
  MaxMinSharing net;
  const std::uint32_t link = net.add_resource(kGBps);
  const std::uint32_t route[] = {link};
  const std::uint32_t a = net.start(0, route, 1000, 1), b = net.start(0, route, 1000, 2);
  EXPECT_DOUBLE_EQ(net.rate(a), kGBps / 2);
  EXPECT_DOUBLE_EQ(net.rate(b), kGBps / 2);
  // 2 x 1,000 B through 1 B/ns: both leave at 2 us.
  EXPECT_EQ(drain(net), (std::vector<std::pair<std::uint64_t, Picoseconds>>{{1, 2'000'000}, {2, 2'000'000}}));
}

TEST(MaxMinSharing, AThirdFlowJoiningLateSlowsTheFirstTwoFromThatMoment) {
  MaxMinSharing net;
  const std::uint32_t link = net.add_resource(kGBps);
  const std::uint32_t route[] = {link};
  net.start(0, route, 1000, 1);
  net.start(0, route, 1000, 2);
  EXPECT_EQ(net.next_end(), 2'000'000);
  // At 0.5 us each has 750 B left; three at 1/3 B/ns: the first two leave
  // 2.25 us later, the third (250 B left) alone 0.25 us after them.
  const std::uint32_t c = net.start(500'000, route, 1000, 3);
  EXPECT_DOUBLE_EQ(net.rate(c), kGBps / 3);
  EXPECT_EQ(drain(net),
            (std::vector<std::pair<std::uint64_t, Picoseconds>>{{1, 2'750'000}, {2, 2'750'000}, {3, 3'000'000}}));
}

TEST(MaxMinSharing, FlowsOnDisjointLinksDoNotInteract) {
  MaxMinSharing net;
  const std::uint32_t x = net.add_resource(kGBps), y = net.add_resource(kGBps);
  const std::uint32_t rx[] = {x}, ry[] = {y};
  net.start(0, rx, 1000, 1);
  const std::uint64_t rated = net.flows_rated();
  net.start(0, ry, 3000, 2);
  // The second start rated its own flow only: the first is in another component.
  EXPECT_EQ(net.flows_rated() - rated, 1u);
  EXPECT_EQ(drain(net), (std::vector<std::pair<std::uint64_t, Picoseconds>>{{1, 1'000'000}, {2, 3'000'000}}));
}

TEST(MaxMinSharing, SixteenFlowsShareTheirNodesInjectionLink) {
  MaxMinSharing net;
  const std::uint32_t injection = net.add_resource(kGBps);
  std::vector<std::uint32_t> flows;
  for (std::uint64_t i = 0; i < 16; ++i) {
    const std::uint32_t route[] = {injection, net.add_resource(kGBps)};  // each to its own destination
    flows.push_back(net.start(0, route, 1000, i));
  }
  for (std::uint32_t f : flows) EXPECT_DOUBLE_EQ(net.rate(f), kGBps / 16);
  const auto out = drain(net);
  ASSERT_EQ(out.size(), 16u);
  for (const auto& [tag, end] : out) EXPECT_EQ(end, 16'000'000) << tag;
}

// Three links of different capacities, five flows: progressive filling fixes
// B's flows at 2, then C's at 3, then A's last at 5 (every link saturated).
TEST(MaxMinSharing, ThreeLinksOfDifferentCapacitiesGiveTheTextbookRates) {
  MaxMinSharing net;
  const std::uint32_t a = net.add_resource(10 * kGBps), b = net.add_resource(4 * kGBps),
                      c = net.add_resource(6 * kGBps);
  const std::uint32_t r1[] = {a, b}, r2[] = {b}, r3[] = {a, c}, r4[] = {c}, r5[] = {a};
  const std::uint32_t f1 = net.start(0, r1, 1e6, 1), f2 = net.start(0, r2, 1e6, 2), f3 = net.start(0, r3, 1e6, 3),
                      f4 = net.start(0, r4, 1e6, 4), f5 = net.start(0, r5, 1e6, 5);
  EXPECT_DOUBLE_EQ(net.rate(f1), 2 * kGBps);
  EXPECT_DOUBLE_EQ(net.rate(f2), 2 * kGBps);
  EXPECT_DOUBLE_EQ(net.rate(f3), 3 * kGBps);
  EXPECT_DOUBLE_EQ(net.rate(f4), 3 * kGBps);
  EXPECT_DOUBLE_EQ(net.rate(f5), 5 * kGBps);
  // f5 leaves first (1 MB at 5 GB/s: 200 us); A then gives f3 more, C gives f4 the rest.
  const auto out = drain(net);
  ASSERT_EQ(out.size(), 5u);
  EXPECT_EQ(out[0], (std::pair<std::uint64_t, Picoseconds>{5, 200'000'000}));
}

TEST(MaxMinSharing, FlowIdsAreReusedAndStaleEndsSkipped) {
  MaxMinSharing net;
  const std::uint32_t link = net.add_resource(kGBps);
  const std::uint32_t route[] = {link};
  const std::uint32_t a = net.start(0, route, 1000, 1);
  EXPECT_EQ(net.finish_next(net.next_end()), 1u);
  EXPECT_EQ(net.active_flows(), 0u);
  EXPECT_EQ(net.next_end(), MaxMinSharing::kNever);
  const std::uint32_t b = net.start(2'000'000, route, 500, 2);
  EXPECT_EQ(a, b);
  EXPECT_EQ(net.next_end(), 2'500'000);
}

TEST(MaxMinSharing, PenaltiesSplitALinkInInverseProportion) {
  // SimGrid's sharing: penalties 1 and 2 on one link of 1 B/ns take 2/3 and 1/3.
  MaxMinSharing net;
  const std::uint32_t link = net.add_resource(kGBps);
  const std::uint32_t route[] = {link};
  const std::uint32_t a = net.start(0, route, 1000, 1, 1.0), b = net.start(0, route, 1000, 2, 2.0);
  EXPECT_DOUBLE_EQ(net.rate(a), 2 * kGBps / 3);
  EXPECT_DOUBLE_EQ(net.rate(b), kGBps / 3);
  // a leaves at 1.5 us (1,000 B at 2/3); b has 500 B left and takes the whole link: 2 us.
  EXPECT_EQ(drain(net), (std::vector<std::pair<std::uint64_t, Picoseconds>>{{1, 1'500'000}, {2, 2'000'000}}));
}

TEST(MaxMinSharing, AWeightedFlowFixedElsewhereLeavesItsShareToTheOthers) {
  // Link x (1 B/ns) carries a (penalty 1) and b (penalty 3); link y (0.1 B/ns)
  // carries a alone. a is held at 0.1 by y; b then takes the 0.9 left on x,
  // although its penalty alone would give it a quarter of x.
  MaxMinSharing net;
  const std::uint32_t x = net.add_resource(kGBps), y = net.add_resource(kGBps / 10);
  const std::uint32_t ra[] = {x, y}, rb[] = {x};
  const std::uint32_t a = net.start(0, ra, 1000, 1, 1.0), b = net.start(0, rb, 1000, 2, 3.0);
  EXPECT_DOUBLE_EQ(net.rate(a), kGBps / 10);
  EXPECT_DOUBLE_EQ(net.rate(b), 9 * kGBps / 10);
}

}  // namespace
}  // namespace poems::components
