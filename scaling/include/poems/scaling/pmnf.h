// Empirical scaling models (docs/scaling.md): the performance model normal
// form of Extra-P for one parameter p (the ranks),
//   f(p) = c0 + c1 * p^i * log2(p)^j,
// with i and j from a fixed search space, fitted by least squares to
// measurements at a few values of p, and chosen by leave-one-out
// cross-validation (each point predicted from the others), so that a model
// is chosen for how it extrapolates, not for how closely it passes through
// the points (with two coefficients, three points can be passed through
// closely by many terms), preferring the simplest of those that predict
// about as well as the best.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace poems::scaling {

struct Point {
  double p = 0;      // the parameter (ranks), > 0
  double value = 0;  // what was measured there (seconds, say), finite
};

// p^i * log2(p)^j; i = 0 and j = 0 is the constant model (c1 = 0).
// `offset` false: the term alone, c0 = 0 (a region whose time is all in
// the term, as the sweep of fixed work over p ranks: extrapolating a c0
// fitted from noisy points far from where it matters costs more than it
// gains, and cross-validation says which of the two predicts better).
struct Term {
  double i = 0;
  int j = 0;
  bool offset = true;
  bool constant() const { return i == 0 && j == 0; }
};

struct Model {
  Term term;
  double c0 = 0, c1 = 0;
  double rss = 0;          // residual sum of squares on the points
  double adjusted_r2 = 0;  // 1 for an exact fit; can be negative
  double fit_smape = 0;    // symmetric mean absolute percentage error on the points, %
  double cv_smape = 0;     // leave-one-out: each point predicted from the others, %
  std::size_t points = 0;

  double at(double p) const;
  // "3.2e-05 + 0.51 * p^(-1)", with `p` named `variable`.
  std::string formula(const std::string& variable = "p") const;
  // The same as a PSL expression (pow, log2), for a task's work.
  std::string psl(const std::string& variable = "P") const;
};

class FitError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// The exponents Extra-P searches by default, i in {0, 1/4, 1/3, 1/2, 2/3,
// 3/4, 1, 5/4, 4/3, 3/2, 5/3, 7/4, 2, 9/4, 7/3, 5/2, 8/3, 11/4, 3} and j in
// {0, 1, 2}, with every i also negated for strong scaling (a rank's share
// of fixed work shrinks as 1/p), each with and without c0.
const std::vector<Term>& default_terms();

// Every hypothesis fitted and cross-validated, best first. Needs points at
// three or more distinct p (two coefficients and one to validate); throws
// FitError otherwise, or for p <= 0 or a value that is not finite.
// `nonnegative`: only hypotheses whose fitted c0 and c1 are >= 0, as a time
// is a sum of parts that take time (a negative coefficient fits three
// points and then predicts negative times; a decrease is a negative
// exponent instead).
std::vector<Model> rank_hypotheses(const std::vector<Point>& points, const std::vector<Term>& terms = default_terms(),
                                   bool nonnegative = true);
// The one chosen: of those whose cross-validated SMAPE is within 1.5 x the
// best + 1 percentage point, the fewest coefficients, then the smallest
// exponents (|i| + j), then the best score.
Model fit(const std::vector<Point>& points, const std::vector<Term>& terms = default_terms(), bool nonnegative = true);

// A term's p^i * log2(p)^j (0 for the constant term), and its factor as
// text (" * p^(-1) * log2(p)") and as PSL (" * pow(P, -1) * log2(P)"), ""
// for the constant; numbers as the formulas print them (4 digits).
double term_value(const Term& t, double p);
std::string term_factor(const Term& t, const std::string& variable);
std::string term_factor_psl(const Term& t, const std::string& variable);
std::string number(double v);

// SMAPE of one prediction against one measurement, % (0 when both are 0).
double smape(double predicted, double measured);

}  // namespace poems::scaling
