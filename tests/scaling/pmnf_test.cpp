// Empirical scaling models (poems/scaling/pmnf.h): the term of exact data
// found again, strong scaling's 1/p from three points, predictions under
// measurement noise, and the errors.
#include "poems/scaling/pmnf.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace poems::scaling {
namespace {

std::vector<Point> sample(const std::vector<double>& ps, double c0, double c1, Term t, double noise = 0,
                          std::mt19937_64* rng = nullptr) {
  std::vector<Point> out;
  std::normal_distribution<double> n(0, 1);
  for (double p : ps) {
    double v = c0 + c1 * std::pow(p, t.i) * std::pow(std::log2(p), t.j);
    if (noise > 0) v *= 1 + noise * n(*rng);
    out.push_back({p, v});
  }
  return out;
}

TEST(Pmnf, ExactDataGivesBackItsTermAndCoefficients) {
  const std::vector<double> ps = {4, 8, 16, 32, 64};
  for (Term t : {Term{-1, 0}, Term{-0.5, 0}, Term{0.5, 0}, Term{1, 0}, Term{1, 1}, Term{0, 1}, Term{2, 0},
                 Term{1.0 / 3, 2}, Term{-2.0 / 3, 1}}) {
    const Model m = fit(sample(ps, 2.5, 7.0, t));
    EXPECT_NEAR(m.term.i, t.i, 1e-12) << m.formula();
    EXPECT_EQ(m.term.j, t.j) << m.formula();
    // Where the constant is a few hundredths of a percent of every value
    // (7 p^2 beside 2.5), the simpler model without it may be chosen; its
    // prediction is as good.
    const double truth = 2.5 + 7.0 * std::pow(1024, t.i) * std::pow(10, t.j);
    EXPECT_NEAR(m.at(1024) / truth, 1, 1e-3) << m.formula();
    if (m.term.offset) {
      EXPECT_NEAR(m.c0, 2.5, 1e-6);
      EXPECT_NEAR(m.c1, 7.0, 1e-6);
      EXPECT_LT(m.cv_smape, 1e-6);
      EXPECT_NEAR(m.adjusted_r2, 1, 1e-9);
    }
  }
  // Without the parsimony rule, the best cross-validated score: the exact one.
  const Model best = rank_hypotheses(sample(ps, 2.5, 7.0, Term{2, 0})).front();
  EXPECT_EQ(best.term.i, 2);
  EXPECT_TRUE(best.term.offset);
  EXPECT_NEAR(best.c0, 2.5, 1e-6);
  // A constant is the constant model, not a term with c1 = 0.
  const Model c = fit(sample(ps, 3, 0, Term{1, 0}));
  EXPECT_TRUE(c.term.constant());
  EXPECT_EQ(c.formula(), "3");
}

TEST(Pmnf, StrongScalingFromThreeRankCountsPredictsAThousand) {
  // A sweep of fixed work split over p ranks, 100 s / p, measured at 4, 8
  // and 16 ranks.
  const Model m = fit(sample({4, 8, 16}, 0, 100, Term{-1, 0}));
  EXPECT_EQ(m.formula(), "100 * p^(-1)");
  EXPECT_EQ(m.psl("P"), "100 * pow(P, -1)");
  EXPECT_NEAR(m.at(1024), 100.0 / 1024, 1e-9);
  // Three counts validate one coefficient only: no hypothesis with c0 is
  // tried. A part that does not shrink (0.2 s + 100 s / p) needs a fourth.
  for (const Model& h : rank_hypotheses(sample({4, 8, 16}, 0.2, 100, Term{-1, 0})))
    EXPECT_TRUE(h.term.constant() || !h.term.offset) << h.formula();
  const Model four = fit(sample({4, 8, 16, 32}, 0.2, 100, Term{-1, 0}));
  EXPECT_EQ(four.formula(), "0.2 + 100 * p^(-1)");
  EXPECT_EQ(four.psl("P"), "0.2 + 100 * pow(P, -1)");
  EXPECT_NEAR(four.at(1024), 0.2 + 100.0 / 1024, 1e-9);
}

TEST(Pmnf, NoisyMeasurementsStillPredictWithinTenPercent) {
  // A region of fixed work split over p ranks (100 s / p) measured with 1 %
  // multiplicative noise, predicted at 1,024 ranks, over 300 draws each:
  // from five rank counts (4..64) nearly always; from three (4, 8, 16: the
  // issue's traces) most of the time (docs/scaling.md has the table).
  std::mt19937_64 rng(2026);
  auto score = [&](const std::vector<double>& ps) {
    int within = 0, right_term = 0;
    for (int k = 0; k < 300; ++k) {
      const Model m = fit(sample(ps, 0, 100, Term{-1, 0}, 0.01, &rng));
      within += std::abs(m.at(1024) - 100.0 / 1024) / (100.0 / 1024) < 0.10;
      right_term += m.term.i == -1 && m.term.j == 0;
    }
    return std::make_pair(within, right_term);
  };
  const auto five = score({4, 8, 16, 32, 64}), three = score({4, 8, 16});
  EXPECT_GE(five.first, 290);
  EXPECT_GE(five.second, 290);
  EXPECT_GE(three.first, 290);
  EXPECT_GE(three.second, 290);
  // A law with a constant, from four counts (4..32): 5 s + 100 s / p.
  int within = 0;
  for (int k = 0; k < 300; ++k) {
    const Model m = fit(sample({4, 8, 16, 32}, 5, 100, Term{-1, 0}, 0.01, &rng));
    within += std::abs(m.at(1024) / (5 + 100.0 / 1024) - 1) < 0.10;
  }
  EXPECT_GE(within, 270);
}

TEST(Pmnf, HypothesesAreRankedByCrossValidation) {
  const std::vector<Model> ranked = rank_hypotheses(sample({2, 4, 8, 16}, 1, 1, Term{1, 0}));
  ASSERT_GT(ranked.size(), 50u);
  EXPECT_EQ(ranked.front().term.i, 1);
  for (std::size_t k = 1; k < ranked.size(); ++k) EXPECT_LE(ranked[k - 1].cv_smape, ranked[k].cv_smape + 1e-6);
}

TEST(Pmnf, TooFewPointsAndBadValuesAreRefused) {
  try {
    fit({{4, 1}, {8, 0.5}, {8, 0.6}});
    ADD_FAILURE() << "two values of p were accepted";
  } catch (const FitError& e) {
    EXPECT_STREQ(e.what(),
                 "a scaling model needs measurements at 3 or more values of p (two coefficients, and one to validate "
                 "them); got 2");
  }
  EXPECT_THROW(fit({{0, 1}, {8, 0.5}, {16, 0.6}}), FitError);
  EXPECT_THROW(fit({{4, NAN}, {8, 0.5}, {16, 0.6}}), FitError);
  EXPECT_DOUBLE_EQ(smape(110, 90), 20);
  EXPECT_DOUBLE_EQ(smape(0, 0), 0);
}

}  // namespace
}  // namespace poems::scaling
