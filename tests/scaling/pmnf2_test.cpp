// Scaling models in ranks and problem size (poems/scaling/pmnf2.h): the
// terms and the way they combine found again from exact data on a grid of
// runs, predictions far outside it under measurement noise, and the errors.
#include "poems/scaling/pmnf2.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

namespace poems::scaling {
namespace {

using Law = std::function<double(double p, double n)>;

std::vector<Point2> grid(const std::vector<double>& ps, const std::vector<double>& ns, const Law& law, double noise = 0,
                         std::mt19937_64* rng = nullptr) {
  std::vector<Point2> out;
  std::normal_distribution<double> z(0, 1);
  for (double p : ps)
    for (double n : ns) out.push_back({p, n, law(p, n) * (noise > 0 ? 1 + noise * z(*rng) : 1)});
  return out;
}

const std::vector<double> ps = {4, 8, 16, 32, 64};
const std::vector<double> ns = {32, 64, 128, 256, 512};

TEST(Pmnf2, MultiplicativeWorkPerRankIsFoundWithItsTerms) {
  // Sweep3D-like: n^3 cells split over p ranks, 2 ns each, and a fixed 1 ms.
  const Model2 m = fit2(grid(ps, ns, [](double p, double n) { return 1e-3 + 2e-9 * n * n * n / p; }));
  EXPECT_EQ(m.p_term.i, -1);
  EXPECT_EQ(m.p_term.j, 0);
  EXPECT_EQ(m.n_term.i, 3);
  EXPECT_EQ(m.n_term.j, 0);
  EXPECT_TRUE(m.has_pn);
  EXPECT_FALSE(m.has_p);
  EXPECT_FALSE(m.has_n);
  EXPECT_NEAR(m.c0, 1e-3, 1e-9);
  EXPECT_NEAR(m.cpn, 2e-9, 1e-15);
  EXPECT_LT(m.cv_smape, 1e-6);
  EXPECT_EQ(m.formula(), "0.001 + 2e-09 * p^(-1) * n^(3)");
  EXPECT_EQ(m.psl("P", "N"), "0.001 + 2e-09 * pow(P, -1) * pow(N, 3)");
  // 4,096 ranks on 2,048^3: outside the grid in both parameters.
  EXPECT_NEAR(m.at(4096, 2048) / (1e-3 + 2e-9 * std::pow(2048, 3) / 4096), 1, 1e-9);
}

TEST(Pmnf2, AdditiveTermsAreToldFromAProduct) {
  // A reduction's log2(p) beside a rank's n^2 work: they add, no product.
  // Rank counts over a wide range, so that log2(p) is told from p^(1/4).
  const Model2 m =
      fit2(grid({4, 16, 64, 256, 1024}, ns, [](double p, double n) { return 5e-6 * std::log2(p) + 3e-8 * n * n; }));
  EXPECT_EQ(m.p_term.i, 0);
  EXPECT_EQ(m.p_term.j, 1);
  EXPECT_EQ(m.n_term.i, 2);
  EXPECT_TRUE(m.has_p);
  EXPECT_TRUE(m.has_n);
  EXPECT_FALSE(m.has_pn);
  EXPECT_NEAR(m.cp, 5e-6, 1e-12);
  EXPECT_NEAR(m.cn, 3e-8, 1e-14);
  EXPECT_NEAR(m.at(65536, 4096) / (5e-6 * 16 + 3e-8 * 4096.0 * 4096), 1, 1e-9);
}

TEST(Pmnf2, AParameterThatDoesNotMatterIsLeftOut) {
  // Weak scaling done right: the time follows n only.
  const Model2 m = fit2(grid(ps, ns, [](double, double n) { return 0.01 + 1e-5 * n; }));
  EXPECT_TRUE(m.p_term.constant());
  EXPECT_FALSE(m.has_p);
  EXPECT_FALSE(m.has_pn);
  EXPECT_TRUE(m.has_n);
  EXPECT_EQ(m.n_term.i, 1);
  EXPECT_EQ(m.formula("P", "N"), "0.01 + 1e-05 * N");
}

TEST(Pmnf2, PredictsFarOutsideTheGridUnderNoise) {
  // 1 % noise on every run of a 3 x 3 grid (9 runs, what a user affords):
  // the prediction at 1,024 ranks and 4 times the largest n within 10 %,
  // in at least 18 of 20 draws.
  const Law law = [](double p, double n) { return 2e-3 + 4e-9 * n * n * n / p; };
  std::mt19937_64 rng(46);
  int within = 0;
  for (int draw = 0; draw < 20; ++draw) {
    const Model2 m = fit2(grid({4, 8, 16}, {64, 128, 256}, law, 0.01, &rng));
    const double truth = law(1024, 1024), predicted = m.at(1024, 1024);
    within += std::abs(predicted - truth) / truth < 0.10;
  }
  EXPECT_GE(within, 18);
}

TEST(Pmnf2, LinesAreNeededInBothParameters) {
  // Three ranks counts, but n varies only with p (a diagonal): no line of n.
  const std::vector<Point2> diagonal = {{4, 32, 1}, {8, 64, 2}, {16, 128, 3}};
  try {
    fit2(diagonal);
    FAIL() << "a diagonal of runs was fitted";
  } catch (const FitError& e) {
    EXPECT_STREQ(e.what(),
                 "a model in two parameters needs measurements at 3 or more values of p with n held (a line of "
                 "runs); there is none");
  }
  std::vector<Point2> line = grid(ps, {100}, [](double p, double) { return 1 / p; });
  try {
    fit2(line);
    FAIL() << "one line of runs was fitted in two parameters";
  } catch (const FitError& e) {
    EXPECT_STREQ(e.what(),
                 "a model in two parameters needs measurements at 3 or more values of n with p held (a line of "
                 "runs); there is none");
  }
  EXPECT_THROW(fit2({{4, 0, 1}, {8, 64, 2}, {16, 128, 3}}), FitError);
  EXPECT_THROW(fit2({{4, 32, NAN}, {8, 64, 2}, {16, 128, 3}}), FitError);
}

}  // namespace
}  // namespace poems::scaling
