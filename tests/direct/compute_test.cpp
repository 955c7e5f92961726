// Computation between MPI calls: measured host CPU time (scaled), charges
// through the processor model (POEMS_Compute) and plain delays
// (POEMS_Advance, the memory-reduced mode's stand-in for skipped code).
#include <algorithm>
#include <cmath>
#include <vector>

#include "direct_test_util.h"
#include "poems/components/network.h"
#include "poems/components/noise.h"

namespace poems::direct::testing {
namespace {

const sim::LogGOPS kFlat{};

processor::ProcessorSpec wg(double ns) {
  processor::ProcessorSpec s;
  s.component = "Opteron";
  s.evaluator = "processor[wg]";
  s.numbers["Wg"] = ns;
  return s;
}

// Keeps the optimizer from dropping the loop.
volatile double sink = 0;
void spin(int n) {
  double x = 0;
  for (int i = 0; i < n; ++i) x += std::sqrt(static_cast<double>(i));
  sink = x;
}

TEST(Compute, ProcessorModelChargesWorkTimesWg) {
  DirectOptions o = model_options(2, kFlat);
  o.processor = wg(60);
  std::vector<Picoseconds> t(2);
  DirectResult r = run_ranks(o, [&](int rank, int) {
    POEMS_Compute(100.0 * (rank + 1));  // 6 us and 12 us
    t[static_cast<std::size_t>(rank)] = ps(MPI_Wtime());
    spin(100000);  // measured time does not count in model mode
  });
  ASSERT_TRUE(r.completed()) << r.error;
  EXPECT_EQ(t, (std::vector<Picoseconds>{ns(6000), ns(12000)}));
  EXPECT_EQ(r.sim.total_compute, ns(18000));
  EXPECT_EQ(r.measured_cpu_seconds, 0.0);
}

TEST(Compute, WithoutAProcessorModelPOEMSComputeFails) {
  DirectResult r = run_ranks(model_options(1, kFlat), [&](int, int) { POEMS_Compute(1); });
  EXPECT_NE(r.error.find("rank 0: POEMS_Compute: no processor model is set"), std::string::npos) << r.error;
}

TEST(Compute, MeasuredTimeIsChargedBetweenCalls) {
  DirectOptions o = model_options(2, kFlat);
  o.compute = ComputeMode::Measured;
  Picoseconds recv_done = 0;
  DirectResult r = run_ranks(o, [&](int rank, int) {
    int v = 0;
    if (rank == 0) {
      spin(2'000'000);
      MPI_Send(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
    } else {
      MPI_Recv(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      recv_done = ps(MPI_Wtime());
    }
  });
  ASSERT_TRUE(r.completed()) << r.error;
  EXPECT_GT(r.measured_cpu_seconds, 0.0);
  EXPECT_GT(r.sim.per_rank[0].compute, 0u);
  // Rank 1 computes little, so its receive completes one hop after rank 0's
  // send, which starts after rank 0's measured computation.
  EXPECT_GT(recv_done, kFlat.o + kFlat.L + kFlat.recv_cpu(4));
  EXPECT_GE(r.sim.per_rank[0].compute + kFlat.o + kFlat.L + kFlat.recv_cpu(4), recv_done - r.sim.per_rank[1].compute);
}

TEST(Compute, ScaleZeroLeavesOnlyDelays) {
  // Measured mode: POEMS_Compute describes code that was timed, so it adds
  // nothing; POEMS_Advance stands for code that did not run, so it counts.
  DirectOptions o = model_options(1, kFlat);
  o.compute = ComputeMode::Measured;
  o.compute_scale = 0;
  o.processor = wg(60);
  DirectResult r = run_ranks(o, [&](int, int) {
    spin(1'000'000);
    POEMS_Compute(1000);
    POEMS_Advance(250);
    MPI_Barrier(MPI_COMM_WORLD);
  });
  ASSERT_TRUE(r.completed()) << r.error;
  EXPECT_EQ(r.sim.total_compute, ns(250));
}

TEST(Compute, ManyRanksWithDelaysOnly) {
  // The memory-reduced pattern: no arrays, delays instead of kernels.
  const int P = 1000;
  DirectResult r = run_ranks(model_options(P, kFlat), [&](int rank, int size) {
    double x = rank;
    for (int step = 0; step < 3; ++step) {
      POEMS_Advance(1000);
      if (rank > 0) MPI_Recv(&x, 1, MPI_DOUBLE, rank - 1, step, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (rank + 1 < size) MPI_Send(&x, 1, MPI_DOUBLE, rank + 1, step, MPI_COMM_WORLD);
    }
    MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    EXPECT_EQ(x, 0.0);
  });
  ASSERT_TRUE(r.completed()) << r.error;
  EXPECT_EQ(r.sim.total_compute, static_cast<Picoseconds>(P) * 3 * ns(1000));
  EXPECT_EQ(r.sim.messages > 3u * (P - 1), true);
}

TEST(Compute, OsNoiseStretchesARanksComputation) {
  // Aligned detours of 25 us every 1 ms (docs/simulator.md, "OS noise"): 5 ms
  // charged from time 0 meet the detour in progress at 0 and those at 1..5 ms.
  DirectOptions o = model_options(2, kFlat);
  components::NoiseSpec noise = components::parse_noise("periodic:period=1ms,detour=25us,phase=aligned");
  o.sim.noise = std::make_shared<const components::Noise>(noise);
  std::vector<double> took(2);
  DirectResult r = run_ranks(o, [&](int rank, int) {
    const double start = MPI_Wtime();
    POEMS_Advance(5e6);
    took[static_cast<std::size_t>(rank)] = MPI_Wtime() - start;
    MPI_Barrier(MPI_COMM_WORLD);
  });
  ASSERT_TRUE(r.completed()) << r.error;
  EXPECT_EQ(r.sim.total_compute, 2 * ns(5'000'000));  // the work; the detours are waiting
  for (double t : took) EXPECT_NEAR(t, 5.15e-3, 1e-12);
}

TEST(Compute, RanksSharingACoreAdvanceAtItsShare) {
  // Two ranks on a node of one core under processor sharing (docs/network.md,
  // "Time sharing"): 1 ms beside 3 ms, the first ends at 2 ms (half speed),
  // the second at 4 ms; first come first served runs one whole, then the other.
  for (auto rule : {components::TimeSharing::ProcessorSharing, components::TimeSharing::FirstCome}) {
    DirectOptions o = model_options(2, kFlat);
    components::NetworkSpec spec;
    spec.mapping.ranks_per_node = 2;
    spec.cores_per_node = 1;
    spec.time_sharing = rule;
    o.sim.network = std::make_shared<const components::Network>(spec);
    std::vector<double> took(2);
    DirectResult r = run_ranks(o, [&](int rank, int) {
      const double start = MPI_Wtime();
      POEMS_Advance(rank == 0 ? 1e6 : 3e6);
      took[static_cast<std::size_t>(rank)] = MPI_Wtime() - start;
    });
    ASSERT_TRUE(r.completed()) << r.error;
    if (rule == components::TimeSharing::ProcessorSharing) {
      EXPECT_NEAR(took[0], 2e-3, 1e-12);
      EXPECT_NEAR(took[1], 4e-3, 1e-12);
    } else {
      // One runs whole, then the other; the rank whose computation ended
      // first cannot read its clock until the core is free again (a clock
      // read runs on the core, behind the other's job): both read 4 ms,
      // whichever went first.
      EXPECT_NEAR(took[0], 4e-3, 1e-12);
      EXPECT_NEAR(took[1], 4e-3, 1e-12);
    }
  }
}

}  // namespace
}  // namespace poems::direct::testing
