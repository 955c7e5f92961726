// Empirical scaling models in two parameters (docs/scaling.md, "Two
// parameters"): the ranks p and the problem size n, as Extra-P's
// multi-parameter modelling does it. First each parameter's terms alone
// (pmnf.h's search space), from the lines of measurements where the other
// parameter is held (every line with 3 or more values; the few terms that
// predict best on all of them); then each pair of terms combined,
//   f(p, n) = c0 + cp * P(p) + cn * N(n) + cpn * P(p) * N(n),
// every subset of the three products with and without c0, fitted by least
// squares to all the points and chosen by leave-one-out cross-validation
// with the one-parameter fit's parsimony rule.
#pragma once

#include <string>
#include <vector>

#include "poems/scaling/pmnf.h"

namespace poems::scaling {

struct Point2 {
  double p = 0;      // ranks, > 0
  double n = 0;      // problem size, > 0
  double value = 0;  // what was measured there, finite
};

struct Model2 {
  Term p_term, n_term;  // their `offset` is not used; constant: the parameter does not matter
  bool offset = true;   // c0 fitted (false: 0)
  bool has_p = false, has_n = false, has_pn = false;
  double c0 = 0, cp = 0, cn = 0, cpn = 0;
  double rss = 0, adjusted_r2 = 0, fit_smape = 0, cv_smape = 0;
  std::size_t points = 0;

  double at(double p, double n) const;
  std::size_t coefficients() const { return offset + has_p + has_n + has_pn; }
  // "0.002 + 3.1e-06 * p^(-1) * n^3", the parameters named as given.
  std::string formula(const std::string& p_name = "p", const std::string& n_name = "n") const;
  std::string psl(const std::string& p_name = "P", const std::string& n_name = "N") const;
};

// The terms one parameter may follow, from the lines of `points` in which
// the other is held (`by_n` false: p's, from the lines of equal n): the
// constant, then up to `count` terms that fit every line, best mean
// cross-validated score first. Throws FitError when no line has 3 or more
// distinct values.
std::vector<Term> line_terms(const std::vector<Point2>& points, bool by_n, std::size_t count,
                             const std::vector<Term>& terms = default_terms());

// Every combination of the two terms, fitted and cross-validated, best first.
// Needs 3 or more distinct values of each parameter on one line and at
// least one more point than a hypothesis has coefficients.
std::vector<Model2> rank_hypotheses2(const std::vector<Point2>& points,
                                     const std::vector<Term>& terms = default_terms(), bool nonnegative = true);
// The one chosen (pmnf.h's rule: within 1.5 x the best + 1 point, the fewest
// coefficients, then the smallest exponents, then the best score).
Model2 fit2(const std::vector<Point2>& points, const std::vector<Term>& terms = default_terms(),
            bool nonnegative = true);

}  // namespace poems::scaling
