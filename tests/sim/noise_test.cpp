// The simulator with OS noise (docs/simulator.md, "OS noise"): a rank's
// computation ends where the noise model says, under both semantics, and P
// ranks with periodic noise of independent uniform phases finish a step in
// the expected maximum derived in the docs, within its sampling error, for
// P = 1 to 2^16.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>

#include "poems/components/noise.h"
#include "sim_test_util.h"

namespace poems::sim {
namespace {

using namespace testing;
using components::Noise;
using components::NoiseKind;
using components::NoiseSpec;

std::shared_ptr<const Noise> periodic(Picoseconds period, Picoseconds detour, bool aligned, std::uint64_t seed = 1) {
  NoiseSpec s;
  s.kind = NoiseKind::Periodic;
  s.period = period;
  s.detour = detour;
  s.aligned = aligned;
  s.seed = seed;
  return std::make_shared<const Noise>(s);
}

// Each rank computes `w_ns`, then the ranks do what `after` says.
std::string steps(std::uint32_t ranks, std::uint64_t w_ns, const std::string& after = "") {
  std::string text = "num_ranks " + std::to_string(ranks) + "\n";
  for (std::uint32_t r = 0; r < ranks; ++r)
    text += "rank " + std::to_string(r) + " {\n  c: calc " + std::to_string(w_ns) + "\n" + after + "}\n";
  return text;
}

TEST(NoiseSim, AStepIsStretchedByTheDetoursInItUnderBothSemantics) {
  // Rank 0 computes 5 ms, sends 8 B to rank 1, which computes 1 ms after it
  // receives. Aligned detours of 25 us every 1 ms.
  const std::string text =
      "num_ranks 2\n"
      "rank 0 {\n  c: calc 5000000\n  s: send 8b to 1\n  s requires c\n}\n"
      "rank 1 {\n  r: recv 8b from 0\n  c: calc 1000000\n  c requires r\n}\n";
  const LogGOPS p = params(2500, 1500, 1000, 0, 0);  // G 0: the 8 B add nothing
  for (Semantics semantics : {Semantics::Matched, Semantics::Loggopsim}) {
    auto s = goal(text);
    ASSERT_TRUE(s);
    SimulationOptions o;
    o.params = p;
    o.semantics = semantics;
    o.noise = periodic(ns(1000000), ns(25000), true);
    const SimulationResult r = simulate(*s, o);
    // 5 ms of work from 0: the detour in progress at 0 and those at 1..5 ms.
    EXPECT_EQ(r.per_rank[0].finish, ns(5150000 + 1500));
    // Arrival at 5,151.5 + 2.5 us; receive overhead 1.5 us: rank 1 computes
    // from 5,155.5 us, meets the detour at 6 ms.
    EXPECT_EQ(r.per_rank[1].finish, ns(5155500 + 1000000 + 25000));
    EXPECT_EQ(r.per_rank[1].compute, ns(1000000));  // compute is the work; the detours are waiting
    // Without noise: the same run, unstretched.
    auto quiet = goal(text);
    o.noise = nullptr;
    EXPECT_EQ(simulate(*quiet, o).per_rank[1].finish, ns(5000000 + 1500 + 2500 + 1500 + 1000000));
  }
}

// E[max over P ranks of a step of W], periodic noise of period T and detour
// d at independent uniform phases, W <= T - d (docs/simulator.md):
// W + d - T/(P+1) [((T-W)/T)^(P+1) - ((T-d-W)/T)^(P+1)].
double expected_step(double W, double T, double d, double P) {
  return W + d - T / (P + 1) * (std::pow((T - W) / T, P + 1) - std::pow((T - d - W) / T, P + 1));
}

TEST(NoiseSim, TheSlowestOfPRanksMatchesTheExpectedMaximum) {
  const double T = 1e6, d = 1e5, W = 3e5;                                        // ns: 1 ms, 100 us, 300 us
  EXPECT_DOUBLE_EQ(expected_step(W, T, d, 1), W + d * W / T + d * d / (2 * T));  // the single-rank mean
  struct Size {
    std::uint32_t ranks;
    int trials;
  };
  for (Size size : {Size{1, 4000}, Size{4, 2000}, Size{64, 400}, Size{1024, 100}, Size{65536, 12}}) {
    auto s = goal(steps(size.ranks, static_cast<std::uint64_t>(W)));
    ASSERT_TRUE(s);
    double sum = 0, sum2 = 0;
    for (int trial = 0; trial < size.trials; ++trial) {
      s->restart();
      SimulationOptions o;
      o.per_rank_results = false;
      o.noise = periodic(ns(static_cast<std::uint64_t>(T)), ns(static_cast<std::uint64_t>(d)), false,
                         1000003ull * size.ranks + static_cast<std::uint64_t>(trial));
      const double finish = static_cast<double>(simulate(*s, o).max_finish) / 1000;
      sum += finish;
      sum2 += finish * finish;
    }
    const double n = size.trials, mean = sum / n;
    const double sd = std::sqrt(std::max(0.0, sum2 / n - mean * mean) * n / (n - 1));
    const double expected = expected_step(W, T, d, size.ranks);
    // Four standard errors, or 1 ns where every trial meets a whole detour.
    EXPECT_NEAR(mean, expected, std::max(4 * sd / std::sqrt(n), 1.0)) << size.ranks << " ranks, sd " << sd;
  }
}

TEST(NoiseSim, NoiseIsAmplifiedByABarrierAfterEachStep) {
  // Ten steps of 300 us, each followed by a dissemination barrier: with
  // random phases every step waits for the unluckiest rank, so 64 ranks lose
  // far more than one rank does (the expected maximum, not the mean).
  const LogGOPS p = params(2500, 1500, 1000, ns_per_byte(6), 0);
  auto run = [&](std::uint32_t ranks, bool noisy) {
    std::string text = "num_ranks " + std::to_string(ranks) + "\n";
    for (std::uint32_t r = 0; r < ranks; ++r) {
      text += "rank " + std::to_string(r) + " {\n";
      std::string last;
      for (int step = 0; step < 10; ++step) {
        const std::string c = "c" + std::to_string(step);
        text += "  " + c + ": calc 300000\n";
        if (!last.empty()) text += "  " + c + " requires " + last + "\n";
        last = c;
        // Dissemination: round k sends to r + 2^k and receives from r - 2^k.
        for (std::uint32_t k = 1; k < ranks; k *= 2) {
          const std::string tag = std::to_string(step * 32 + static_cast<int>(std::log2(k)));
          const std::string snd = "s" + std::to_string(step) + "_" + std::to_string(k);
          const std::string rcv = "r" + std::to_string(step) + "_" + std::to_string(k);
          text += "  " + snd + ": send 1b to " + std::to_string((r + k) % ranks) + " tag " + tag + "\n";
          text += "  " + rcv + ": recv 1b from " + std::to_string((r + ranks - k) % ranks) + " tag " + tag + "\n";
          text += "  " + snd + " requires " + last + "\n  " + rcv + " requires " + last + "\n";
          last = rcv;
        }
      }
      text += "}\n";
    }
    auto s = goal(text);
    SimulationOptions o;
    o.params = p;
    if (noisy) o.noise = periodic(ns(1000000), ns(100000), false, 5);
    return static_cast<double>(simulate(*s, o).max_finish);
  };
  const double one = run(1, true) - run(1, false), many = run(64, true) - run(64, false);
  // One rank's 3 ms of work meets three or four 100 us detours; 64 ranks
  // lose nearly a whole detour in each of the 10 steps.
  EXPECT_GE(one, 3e8);
  EXPECT_LE(one, 4e8);
  EXPECT_GT(many, 9e8);
}

}  // namespace
}  // namespace poems::sim
