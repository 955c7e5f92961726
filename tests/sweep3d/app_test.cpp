// The real MPI Sweep3D (examples/sweep3d/app) under mpirun: tiny decks, a
// few seconds in all.
#include <gtest/gtest.h>

#include <cmath>

#include "mpi_run.h"
#include "poems/sweep3d/app/decomposition.h"

namespace {

using poems::sweep3d::app::messages_per_iteration;

// 13 x 10 x 9 cells: remainders in i (7 + 6) and j (5 + 5), a short last
// k-block (mk = 4: 4 + 4 + 1), fixups on, 3 fixed iterations.
std::string small_deck(int npe_i, int npe_j) {
  return std::to_string(npe_i) + " " + std::to_string(npe_j) +
         " 4 3 1\n"
         "13 10 9 6 0\n"
         "0.5 0.7 0.9 -3\n"
         "0 0 0\n"
         "0 0 1\n";
}

void expect_ok(const SweepRun& r) {
  ASSERT_EQ(r.command.exit_code, 0) << r.command.out << r.command.err;
  ASSERT_TRUE(r.result.is_object()) << r.command.out;
}

TEST(SweepMpi, OneTwoAndFourRanksGiveTheSameFluxAndDesignMessageCounts) {
  const SweepRun one = run_sweep3d(1, "one.deck", small_deck(1, 1));
  const SweepRun two = run_sweep3d(2, "two.deck", small_deck(2, 1));
  const SweepRun four = run_sweep3d(4, "four.deck", small_deck(2, 2));
  expect_ok(one);
  expect_ok(two);
  expect_ok(four);
  const double flux = one.result["flux_sum"].get<double>();
  EXPECT_GT(flux, 0);
  for (const SweepRun* r : {&one, &two, &four}) {
    EXPECT_NEAR(r->result["flux_sum"].get<double>(), flux, 1e-12 * flux) << r->command.out;
    EXPECT_LT(std::fabs(r->result["balance_sweep"].get<double>()), 1e-12);
    EXPECT_EQ(r->result["iterations"], 3);
    EXPECT_EQ(r->result["computation"], "kernel");
  }
  // kb = 3 k-blocks, mmo = 2 angle blocks.
  EXPECT_EQ(one.result["messages_per_iteration"], 0);
  EXPECT_EQ(two.result["messages_per_iteration"], messages_per_iteration(2, 1, 3, 2));
  EXPECT_EQ(four.result["messages_per_iteration"], messages_per_iteration(2, 2, 3, 2));
  EXPECT_EQ(four.result["messages"], 3 * messages_per_iteration(2, 2, 3, 2));
  // The monitor, the balance and the times are printed.
  EXPECT_NE(four.command.out.find("         3   "), std::string::npos) << four.command.out;
  EXPECT_NE(four.command.out.find("particle balance"), std::string::npos);
  EXPECT_NE(four.command.out.find("grind time"), std::string::npos);
  EXPECT_NE(four.command.out.find("cpu time"), std::string::npos);
}

TEST(SweepMpi, ReflectiveBoundariesMirrorTheFullProblem) {
  // Reflective i = 0, j = 0, k = 0 faces make a 4^3 grid one octant of the
  // symmetric 8^3 vacuum problem: the flux sums differ by exactly 8, also
  // when the reflected faces lie on different processes.
  const SweepRun full = run_sweep3d(1, "full.deck", "1 1 2 2 1\n8 8 8 6 0\n0.4 0.4 0.4 -4\n0 0 0\n1 0 0\n");
  const SweepRun half = run_sweep3d(4, "half.deck", "2 2 2 2 1\n4 4 4 6 0\n0.4 0.4 0.4 -4\n1 1 1\n1 0 0\n");
  expect_ok(full);
  expect_ok(half);
  const double f = full.result["flux_sum"].get<double>(), h = half.result["flux_sum"].get<double>();
  EXPECT_NEAR(f, 8 * h, 1e-12 * f);
  EXPECT_LT(std::fabs(half.result["balance_sweep"].get<double>()), 1e-12);
  // iprint = 1 prints the per-rank table and the flux line.
  EXPECT_NE(half.command.out.find(" rank      loop_s"), std::string::npos) << half.command.out;
  EXPECT_NE(half.command.out.find("scalar flux along i at j = 2, k = 2"), std::string::npos);
}

TEST(SweepMpi, ConvergesToTheToleranceAndBalances) {
  const SweepRun r = run_sweep3d(1, "converge.deck", "1 1 5 3 1\n6 6 10 6 0\n1 1 1 1e-6\n0 0 0\n0 0 0\n");
  expect_ok(r);
  EXPECT_EQ(r.result["converged"], true);
  EXPECT_LT(r.result["change"].get<double>(), 1e-6);
  EXPECT_LT(r.result["iterations"].get<int>(), 40);
  // At convergence source = absorption + leakage.
  EXPECT_LT(std::fabs(r.result["balance_physical"].get<double>()), 1e-5);
  EXPECT_NE(r.command.out.find("converged after"), std::string::npos);
}

TEST(SweepMpi, DesignsMessageCountFor150CubedOnSixRanks) {
  // The Sweep3D facts (docs/references.md): 150^3, 2 x 3, mk = 30, mmi = 2, mm = 6: 840 messages
  // per iteration. The modeled computation (no cell arrays) keeps it cheap.
  const SweepRun r =
      run_sweep3d(6, "design.deck", "2 3 30 2 1\n150 150 150 6 0\n1 1 1 -1\n0 0 0\n0 0 0\n", " --modeled-wg 0");
  expect_ok(r);
  EXPECT_EQ(r.result["messages"], 840);
  EXPECT_EQ(r.result["computation"], "modeled");
  // 8 bytes * jt * mk * mmi along i (jt = 50), 8 * it * mk * mmi along j (it = 75), full size always.
  const std::uint64_t i_messages = 8 * 3 * 5 * (1 * 3), j_messages = 8 * 3 * 5 * (2 * 2);
  EXPECT_EQ(r.result["bytes"], i_messages * 8 * 50 * 30 * 2 + j_messages * 8 * 75 * 30 * 2);
}

TEST(SweepMpi, BadDecksAndArgumentsFailWithTheirExitCodes) {
  const SweepRun bad = run_sweep3d(0, "bad.deck", "1 1 10 4 1\n10 10 10 6 0\n1 1 1 -2\n0 0 0\n0 0 0\n");
  EXPECT_EQ(bad.command.exit_code, 1);
  EXPECT_NE(bad.command.err.find("bad.deck:1: mmi = 4: must divide mm = 6; allowed: 1, 2, 3, 6"), std::string::npos)
      << bad.command.err;
  const SweepRun ranks = run_sweep3d(0, "ranks.deck", small_deck(2, 2));
  EXPECT_EQ(ranks.command.exit_code, 1);
  EXPECT_NE(ranks.command.err.find("npe_i * npe_j = 2 * 2 = 4, but the program runs on 1 MPI process"),
            std::string::npos)
      << ranks.command.err;
  const SweepRun usage = run_sweep3d(0, "usage.deck", small_deck(1, 1), " --modeled-wg -3");
  EXPECT_EQ(usage.command.exit_code, 2);
  EXPECT_NE(usage.command.err.find("--modeled-wg -3: allowed: a number of nanoseconds from 0 to 1e9"),
            std::string::npos)
      << usage.command.err;
}

}  // namespace
