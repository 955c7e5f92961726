// `poems calibrate --network comet`'s fit (measure/comet_fit.h): CoMet's echo
// and pairwise generated from known LogGOPS parameters by the closed forms,
// one machine per protocol regime, and the fit recovering them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "poems/measure/comet_fit.h"

namespace poems::measure {
namespace {

struct Regime {
  double L, g, G, O;
};

// What comet.c and the trains would print on a machine whose sizes up to S
// follow `eager` and above S `rendezvous` (each under the simulator's cost
// rules, the rendezvous sync L above S), with one o.
CometNetworkSamples synthetic(const Regime& eager, const Regime& rendezvous, double o, double S,
                              const std::vector<double>& sizes) {
  CometNetworkSamples s;
  s.o = o;
  for (double b : sizes) {
    const Regime& m = b > S ? rendezvous : eager;
    const double per_byte = std::max(0.0, b - 1);
    const double sync = b > S ? m.L : 0;
    s.sizes.push_back(b);
    s.echo_ns.push_back(sync + m.L + 2 * o + per_byte * std::max(m.O, m.G));
    s.pairwise_ns.push_back(sync + std::max(0.0, per_byte * m.O - m.L) + 2 * o + m.L + per_byte * std::max(m.O, m.G));
    if (b > 0) {
      s.gap_sizes.push_back(b);
      s.gap_ns.push_back(m.g + (b - 1) * m.G);
    }
  }
  return s;
}

std::vector<double> powers_of_two() {
  std::vector<double> sizes = {0};
  for (double b = 1; b <= 1 << 20; b *= 2) sizes.push_back(b);
  return sizes;
}

void expect_range(const RangeFit& f, const Regime& m, double o, const char* what) {
  EXPECT_NEAR(f.L, m.L, 1e-6 * m.L) << what;
  EXPECT_NEAR(f.o, o, 1e-9) << what;
  EXPECT_NEAR(f.g, m.g, 1e-6 * m.g) << what;
  EXPECT_NEAR(f.G, m.G, 1e-9) << what;
  EXPECT_NEAR(f.O, m.O, 1e-6 * m.O) << what;
}

TEST(CometFit, RecoversEachRegimesParametersFromItsClosedForms) {
  // A shared-memory MPI's two protocols: up to 2 KiB L 150 ns, G 0.12 ns/B,
  // O 0.1 ns/B; above it a rendezvous with L 1000 ns, G 0.1 ns/B, O 0.04 ns/B.
  // The echo jumps 5.8 times from 2 KiB to 4 KiB: S = 2048 B.
  const Regime eager{150, 100, 0.12, 0.1}, rendezvous{1000, 400, 0.1, 0.04};
  const double o = 10, S = 2048;
  const CometNetworkSamples s = synthetic(eager, rendezvous, o, S, powers_of_two());
  const CometNetworkFit f = fit_comet_network(s);
  ASSERT_EQ(f.regimes.size(), 2u);
  EXPECT_EQ(f.regimes[0], std::make_pair(0.0, 2048.0));
  EXPECT_EQ(f.regimes[1], std::make_pair(4096.0, 1048576.0));
  EXPECT_EQ(f.loggops.S, S);
  EXPECT_EQ(f.loggops.eager.sizes, 13);
  EXPECT_EQ(f.loggops.rendezvous.sizes, 9);
  expect_range(f.loggops.eager, eager, o, "eager");
  expect_range(f.loggops.rendezvous, rendezvous, o, "rendezvous");
  EXPECT_LT(f.loggops.eager.echo.max_relative_residual, 1e-9);
  EXPECT_LT(f.eager_pairwise_residual, 1e-6);
  EXPECT_LT(f.rendezvous_pairwise_residual, 1e-6);
  EXPECT_TRUE(f.loggops.notes.empty()) << f.loggops.notes.front();

  // Without --fit-bytes the machine takes the rendezvous range (fit_loggops's
  // rule), and its model reproduces every rendezvous point.
  EXPECT_EQ(f.loggops.machine_range, "rendezvous");
  EXPECT_NEAR(f.loggops.L, rendezvous.L, 1e-6 * rendezvous.L);
  ASSERT_EQ(f.points.size(), s.sizes.size());
  for (const CometFitPoint& p : f.points) {
    EXPECT_EQ(p.regime, p.bytes > S ? "rendezvous" : "eager");
    if (p.bytes <= S) continue;
    EXPECT_NEAR(p.model_echo_ns, p.echo_ns, 1e-6 * p.echo_ns) << p.bytes;
    EXPECT_NEAR(p.model_pairwise_ns, p.pairwise_ns, 1e-6 * p.pairwise_ns) << p.bytes;
  }
  // The closed forms the fit inverts, at one point each: 1 MiB above S,
  // L + L + 2o + (s-1)G, and pairwise adds (s-1)O - L.
  EXPECT_NEAR(comet_echo_model_ns(1000, 10, 0.1, 0.04, S, 1 << 20), 2020 + 104857.5, 1e-6);
  EXPECT_NEAR(comet_pairwise_model_ns(1000, 10, 0.1, 0.04, S, 1 << 20), 2020 + 104857.5 + 41943.0 - 1000, 1e-6);
}

TEST(CometFit, TheMachineFollowsTheGivenRange) {
  const Regime eager{150, 100, 0.12, 0.1}, rendezvous{1000, 400, 0.1, 0.04};
  const CometNetworkSamples s = synthetic(eager, rendezvous, 10, 2048, powers_of_two());
  const CometNetworkFit f = fit_comet_network(s, 64, 2048);
  EXPECT_EQ(f.loggops.machine_range, "messages");
  expect_range(f.loggops.messages, eager, 10, "messages");
  EXPECT_NEAR(f.loggops.O, eager.O, 1e-6 * eager.O);
  EXPECT_EQ(fit_comet_network(s, 0, 1).loggops.machine_range, "messages");        // 0 B and 1 B
  EXPECT_EQ(fit_comet_network(s, 3e7, 4e7).loggops.machine_range, "rendezvous");  // no size there
}

TEST(CometFit, OIsCappedWhereTheTrainsExceedTheEcho) {
  // The trains' o (200 ns) is more than half the echo at 1 B (170 ns): o is
  // what the echo allows, L = 0, and the model still follows the echo.
  const Regime eager{150, 100, 0.12, 0.1};
  CometNetworkSamples s = synthetic(eager, eager, 10, 1e9, {0, 1, 4, 16, 64, 256, 1024});
  s.o = 200;
  const CometNetworkFit f = fit_comet_network(s);
  ASSERT_EQ(f.regimes.size(), 1u);
  EXPECT_EQ(f.loggops.S, 1024);
  EXPECT_EQ(f.loggops.machine_range, "eager");
  EXPECT_NEAR(f.loggops.o, 85, 1e-9);
  EXPECT_NEAR(f.loggops.L, 0, 1e-9);
  for (const CometFitPoint& p : f.points) EXPECT_NEAR(p.model_echo_ns, p.echo_ns, 1e-6 * p.echo_ns) << p.bytes;
  const auto& notes = f.loggops.notes;
  EXPECT_TRUE(
      std::any_of(notes.begin(), notes.end(),
                  [](const std::string& n) { return n.find("o set to 85 ns and L to 0") != std::string::npos; }))
      << notes.size() << " notes";
}

TEST(CometFit, MismatchedSamplesAreErrors) {
  CometNetworkSamples s;
  EXPECT_THROW(fit_comet_network(s), std::invalid_argument);
  s.sizes = {8, 64};
  s.echo_ns = {100, 120};
  s.pairwise_ns = {100};
  EXPECT_THROW(fit_comet_network(s), std::invalid_argument);
}

}  // namespace
}  // namespace poems::measure
