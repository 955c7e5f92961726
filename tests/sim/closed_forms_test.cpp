// The LogGPS closed forms of the LogGOPSim paper, section 3, reproduced exactly by the
// simulator through the shared collectives library. Each form is exact in
// the regime stated with it (see docs/simulator.md, "Closed forms").
#include <algorithm>
#include <bit>

#include "sim_test_util.h"

namespace poems::sim::testing {
namespace {

using taskgraph::CollectiveAlgorithm;
using taskgraph::CollectiveOp;

struct Case {
  const char* name;
  LogGOPS p;
  std::uint64_t s;
};

Picoseconds sO(const Case& c) { return LogGOPS::per_byte(c.s, c.p.O); }
Picoseconds sG(const Case& c) { return LogGOPS::per_byte(c.s, c.p.G); }

// Eq. 1 and 2: T = 2o + L + max{(P-2)o + (P-1)sO, (P-2)g + (P-1)sG}; for s > S
// add (P-1)L (scatter). Exact when one resource dominates both the per-message
// and the per-byte term (o >= g and O >= G, or g >= o and G >= O).
Picoseconds linear_form(const Case& c, std::uint64_t P) {
  const LogGOPS& p = c.p;
  Picoseconds cpu = (P - 2) * p.o + (P - 1) * sO(c), nic = (P - 2) * p.g + (P - 1) * sG(c);
  return 2 * p.o + p.L + std::max(cpu, nic);
}

// Linear cases: CPU-dominated, NIC-dominated, fractional G (200 Gb/s), and O > 0 with G = 0.
std::vector<Case> linear_cases() {
  return {
      {"cpu_bound", params(2500, 1500, 1000, 0, ns_per_byte(6)), 1024},
      {"nic_bound", params(2500, 1500, 4000, ns_per_byte(6), 0), 1024},
      {"nic_bound_both_per_byte", params(2500, 1500, 4000, ns_per_byte(8), ns_per_byte(6)), 4096},
      {"fast_link", params(5300, 300, 800, 40'000, 10'000), 50'000},
      {"tiny", params(1000, 10, 5, 0, 0), 1},
  };
}

const std::uint32_t kLinearProcs[] = {2, 3, 5, 8, 13, 64};

TEST(ClosedForms, LinearScatterEq1) {
  for (const Case& c : linear_cases())
    for (std::uint32_t P : kLinearProcs) {
      SimulationResult r = run_collective(CollectiveOp::Scatter, CollectiveAlgorithm::Linear, P, c.s, c.p);
      ASSERT_TRUE(r.completed);
      EXPECT_EQ(r.max_finish, linear_form(c, P)) << c.name << " P=" << P;
    }
}

TEST(ClosedForms, LinearScatterRendezvousAddsPMinus1L) {
  for (Case c : linear_cases())
    for (std::uint32_t P : kLinearProcs) {
      c.p.S = c.s - 1;  // s > S
      SimulationResult r = run_collective(CollectiveOp::Scatter, CollectiveAlgorithm::Linear, P, c.s, c.p);
      ASSERT_TRUE(r.completed);
      EXPECT_EQ(r.max_finish, linear_form(c, P) + (P - 1) * c.p.L) << c.name << " P=" << P;
    }
}

TEST(ClosedForms, LinearGatherEq2) {
  for (const Case& c : linear_cases())
    for (std::uint32_t P : kLinearProcs) {
      SimulationResult r = run_collective(CollectiveOp::Gather, CollectiveAlgorithm::Linear, P, c.s, c.p);
      ASSERT_TRUE(r.completed);
      EXPECT_EQ(r.max_finish, linear_form(c, P)) << c.name << " P=" << P;
      EXPECT_EQ(r.max_finish_rank, 0u);
    }
}

TEST(ClosedForms, LinearGatherRendezvousAddsOneL) {
  // Every sender synchronizes for L concurrently: the whole pattern shifts by L.
  for (Case c : linear_cases())
    for (std::uint32_t P : kLinearProcs) {
      c.p.S = c.s - 1;
      SimulationResult r = run_collective(CollectiveOp::Gather, CollectiveAlgorithm::Linear, P, c.s, c.p);
      ASSERT_TRUE(r.completed);
      EXPECT_EQ(r.max_finish, linear_form(c, P) + c.p.L) << c.name << " P=" << P;
    }
}

// Eq. 3: T = (2o + L + max{sO, sG}) log2 P for P a power of two (the tree is
// then complete), when one send interval max{o + sO, g + sG} fits in a hop.
TEST(ClosedForms, BinomialBroadcastEq3) {
  std::vector<Case> cases = {
      {"paper", params(2500, 1500, 4000, ns_per_byte(6), ns_per_byte(8)), 1},
      {"paper_1KiB", params(2500, 1500, 4000, ns_per_byte(6), ns_per_byte(8)), 1024},
      {"design", params(2500, 1500, 1000, ns_per_byte(6), 0), 1024},
      {"fast_link", params(5300, 300, 800, 40'000, 10'000, 1 << 20), 100'000},
  };
  for (const Case& c : cases) {
    for (std::uint32_t P : {2u, 4u, 8u, 64u, 1024u}) {
      const Picoseconds hop = 2 * c.p.o + c.p.L + std::max(sO(c), sG(c));
      const auto rounds = static_cast<Picoseconds>(std::bit_width(P - 1));
      SimulationResult r = run_collective(CollectiveOp::Bcast, CollectiveAlgorithm::Binomial, P, c.s, c.p);
      ASSERT_TRUE(r.completed);
      EXPECT_EQ(r.max_finish, hop * rounds) << c.name << " P=" << P;
      // Above S every hop pays the synchronization L once more.
      LogGOPS rdv = c.p;
      rdv.S = c.s - 1;
      if (c.s > 0) {
        SimulationResult q = run_collective(CollectiveOp::Bcast, CollectiveAlgorithm::Binomial, P, c.s, rdv);
        EXPECT_EQ(q.max_finish, (hop + c.p.L) * rounds) << c.name << " P=" << P << " rendezvous";
      }
    }
    // Otherwise the tree is incomplete and eq. 3 is an upper bound.
    for (std::uint32_t P : {3u, 5u, 6u, 7u, 100u}) {
      const Picoseconds hop = 2 * c.p.o + c.p.L + std::max(sO(c), sG(c));
      SimulationResult r = run_collective(CollectiveOp::Bcast, CollectiveAlgorithm::Binomial, P, c.s, c.p);
      EXPECT_LE(r.max_finish, hop * static_cast<Picoseconds>(std::bit_width(P - 1))) << c.name << " P=" << P;
    }
  }
}

// Eqs. 4 and 5: every round costs delta + 2o + L + max{sO, sG} with
// delta = max{0, sO - L}; exact for any P (ceil(log2 P) rounds).
TEST(ClosedForms, DisseminationEq4Eq5) {
  std::vector<Case> cases = {
      {"paper_s1", params(2500, 1500, 4000, ns_per_byte(6), ns_per_byte(8)), 1},
      {"delta_positive", params(2500, 1500, 1000, 0, ns_per_byte(10)), 1024},
      {"delta_zero", params(2500, 1500, 1000, ns_per_byte(6), ns_per_byte(1)), 1024},
      {"fast_link", params(5300, 300, 800, 40'000, 10'000, 1 << 20), 100'000},
  };
  for (const Case& c : cases)
    for (std::uint32_t P : {2u, 3u, 5u, 7u, 8u, 12u, 64u, 1000u}) {
      const Picoseconds delta = sO(c) > c.p.L ? sO(c) - c.p.L : 0;
      const Picoseconds round = delta + 2 * c.p.o + c.p.L + std::max(sO(c), sG(c));
      const auto rounds = static_cast<Picoseconds>(std::bit_width(P - 1));
      SimulationResult r = run_collective(CollectiveOp::Allreduce, CollectiveAlgorithm::Dissemination, P, c.s, c.p);
      ASSERT_TRUE(r.completed);
      EXPECT_EQ(r.max_finish, round * rounds) << c.name << " P=" << P;
      // All processes complete at the same time.
      for (const RankResult& rr : r.per_rank) EXPECT_EQ(rr.finish, r.max_finish) << c.name << " P=" << P;
      LogGOPS rdv = c.p;
      rdv.S = c.s - 1;
      if (c.s > 0) {
        SimulationResult q = run_collective(CollectiveOp::Allreduce, CollectiveAlgorithm::Dissemination, P, c.s, rdv);
        EXPECT_EQ(q.max_finish, (round + c.p.L) * rounds) << c.name << " P=" << P << " rendezvous";
      }
    }
}

}  // namespace
}  // namespace poems::sim::testing
