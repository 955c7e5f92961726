// PUPPET's multitasking rule on one core: r jobs in progress each advance at 1/r.
#include "poems/components/processor_sharing.h"

#include <gtest/gtest.h>

namespace poems::components {
namespace {

constexpr Picoseconds kMs = 1'000'000'000;

TEST(ProcessorSharing, AJobAloneTakesItsWork) {
  ProcessorSharing core;
  EXPECT_EQ(core.next_end(), ProcessorSharing::kNever);
  core.add(5, 7, 3 * kMs);
  EXPECT_EQ(core.next_end(), 5 + 3 * kMs);
  EXPECT_EQ(core.remove_next(5 + 3 * kMs), 7u);
  EXPECT_EQ(core.active(), 0u);
}

TEST(ProcessorSharing, TwoEqualJobsBegunTogetherEndTogetherAtTwiceTheirWork) {
  ProcessorSharing core;
  core.add(0, 1, kMs);
  core.add(0, 2, kMs);
  EXPECT_EQ(core.next_end(), 2 * kMs);
  core.remove_next(2 * kMs);
  EXPECT_EQ(core.next_end(), 2 * kMs);
  core.remove_next(2 * kMs);
  EXPECT_EQ(core.next_end(), ProcessorSharing::kNever);
}

// 1 ms and 3 ms begun together: the short one ends at 2 ms (both at half
// speed), the long one has 2 ms left and ends alone at 4 ms. First come first
// served would end them at 1 and 4 ms, or at 3 and 4 ms.
TEST(ProcessorSharing, AShortJobBesideALongOneEndsAtTwiceItsWork) {
  ProcessorSharing core;
  core.add(0, 1, kMs);
  core.add(0, 2, 3 * kMs);
  EXPECT_EQ(core.next_end(), 2 * kMs);
  EXPECT_EQ(core.remove_next(2 * kMs), 1u);
  EXPECT_EQ(core.next_end(), 4 * kMs);
  EXPECT_EQ(core.remove_next(4 * kMs), 2u);
}

// A job joining later: 4 ms from 0, 1 ms from 1 ms. The first has 3 ms left
// at 1 ms; both at half speed until the second ends at 3 ms; the first has
// 2 ms left then and ends at 5 ms. The core did 5 ms of work by 5 ms.
TEST(ProcessorSharing, ALateJobSlowsTheOthersOnlyWhileItRuns) {
  ProcessorSharing core;
  core.add(0, 1, 4 * kMs);
  EXPECT_EQ(core.next_end(), 4 * kMs);
  core.add(kMs, 2, kMs);
  EXPECT_EQ(core.next_end(), 3 * kMs);
  EXPECT_EQ(core.remove_next(3 * kMs), 2u);
  EXPECT_EQ(core.next_end(), 5 * kMs);
}

// Work is conserved: k jobs of random sizes begun at random times end, the
// last of them, at the first begin plus the total work when the core is never idle.
TEST(ProcessorSharing, TheCoreIsNeverIdleWhileWorkIsLeft) {
  ProcessorSharing core;
  Picoseconds total = 0, now = 0;
  std::uint64_t x = 12345;
  for (std::uint32_t i = 0; i < 20; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    const Picoseconds work = 1000 + (x >> 40) % 1'000'000;
    core.add(now, i, work);
    total += work;
    now += (x >> 20) % 1000;  // every job joins before the first could end
  }
  Picoseconds last = 0;
  while (core.active() > 0) {
    last = core.next_end();
    core.remove_next(last);
  }
  EXPECT_NEAR(static_cast<double>(last), static_cast<double>(total), 20.0);
}

}  // namespace
}  // namespace poems::components
