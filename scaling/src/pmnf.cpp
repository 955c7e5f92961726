// Extra-P's performance model normal form for one parameter (pmnf.h).
#include "poems/scaling/pmnf.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <tuple>

namespace poems::scaling {

namespace {

double basis(const Term& t, double p) { return term_value(t, p); }

struct Line {
  double c0 = 0, c1 = 0;
  bool ok = false;
};

// Least squares of y = c0 + c1 * x over the points but `skip`.
Line least_squares(const std::vector<Point>& points, const Term& t, std::size_t skip) {
  Line l;
  double n = 0, sx = 0, sy = 0;
  for (std::size_t k = 0; k < points.size(); ++k)
    if (k != skip) {
      n += 1;
      sx += basis(t, points[k].p);
      sy += points[k].value;
    }
  if (n == 0) return l;
  const double mx = sx / n, my = sy / n;
  if (t.constant()) {
    l.c0 = my;
    l.ok = true;
    return l;
  }
  if (!t.offset) {  // y = c1 * x through the origin
    double sxx = 0, sxy = 0;
    for (std::size_t k = 0; k < points.size(); ++k)
      if (k != skip) {
        const double x = basis(t, points[k].p);
        sxx += x * x;
        sxy += x * points[k].value;
      }
    if (!(sxx > 0) || !std::isfinite(sxx)) return l;
    l.c1 = sxy / sxx;
    l.ok = std::isfinite(l.c1);
    return l;
  }
  double sxx = 0, sxy = 0;
  for (std::size_t k = 0; k < points.size(); ++k)
    if (k != skip) {
      const double dx = basis(t, points[k].p) - mx;
      sxx += dx * dx;
      sxy += dx * (points[k].value - my);
    }
  // The points cannot tell the term from the constant (or it overflowed).
  if (!(sxx > 1e-300 * std::max(1.0, mx * mx)) || !std::isfinite(sxx)) return l;
  l.c1 = sxy / sxx;
  l.c0 = my - l.c1 * mx;
  l.ok = std::isfinite(l.c0) && std::isfinite(l.c1);
  return l;
}

// "-1/2", "2", "4/3".
std::string exponent(double i) {
  for (int d : {1, 2, 3, 4})
    for (int n = -12; n <= 12; ++n)
      if (std::abs(i - static_cast<double>(n) / d) < 1e-9)
        return d == 1 ? std::to_string(n) : std::to_string(n) + "/" + std::to_string(d);
  return number(i);
}

}  // namespace

double term_value(const Term& t, double p) {
  if (t.constant()) return 0;
  double x = std::pow(p, t.i);
  if (t.j) x *= std::pow(std::log2(p), t.j);
  return x;
}

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4g", v);
  return text;
}

std::string term_factor(const Term& t, const std::string& v) {
  std::string f;
  if (t.i != 0) f += " * " + v + (t.i == 1 ? "" : "^(" + exponent(t.i) + ")");
  if (t.j) f += " * log2(" + v + ")" + (t.j == 1 ? "" : "^" + std::to_string(t.j));
  return f;
}

std::string term_factor_psl(const Term& t, const std::string& v) {
  std::string f;
  if (t.i != 0) f += t.i == 1 ? " * " + v : " * pow(" + v + ", " + number(t.i) + ")";
  if (t.j) f += t.j == 1 ? " * log2(" + v + ")" : " * pow(log2(" + v + "), " + std::to_string(t.j) + ")";
  return f;
}

double smape(double predicted, double measured) {
  const double d = std::abs(predicted) + std::abs(measured);
  return d == 0 ? 0 : 200 * std::abs(predicted - measured) / d;
}

double Model::at(double p) const { return c0 + c1 * basis(term, p); }

std::string Model::formula(const std::string& v) const {
  if (term.constant()) return number(c0);
  const std::string f = term.offset ? number(c0) + (c1 < 0 ? " - " : " + ") + number(std::abs(c1)) : number(c1);
  return f + term_factor(term, v);
}

std::string Model::psl(const std::string& v) const {
  if (term.constant()) return number(c0);
  const std::string f = term.offset ? number(c0) + (c1 < 0 ? " - " : " + ") + number(std::abs(c1)) : number(c1);
  return f + term_factor_psl(term, v);
}

const std::vector<Term>& default_terms() {
  static const std::vector<Term> terms = [] {
    std::vector<Term> out;
    const double positive[] = {1.0 / 4, 1.0 / 3, 1.0 / 2, 2.0 / 3, 3.0 / 4, 1,       5.0 / 4, 4.0 / 3,  3.0 / 2,
                               5.0 / 3, 7.0 / 4, 2,       9.0 / 4, 7.0 / 3, 5.0 / 2, 8.0 / 3, 11.0 / 4, 3};
    std::vector<double> is = {0};
    for (double i : positive) {
      is.push_back(i);
      if (i <= 3) is.push_back(-i);
    }
    std::sort(is.begin(), is.end());
    for (double i : is)
      for (int j : {0, 1, 2}) {
        out.push_back({i, j, true});
        if (i != 0 || j != 0) out.push_back({i, j, false});
      }
    return out;
  }();
  return terms;
}

std::vector<Model> rank_hypotheses(const std::vector<Point>& points, const std::vector<Term>& terms, bool nonnegative) {
  std::set<double> distinct;
  for (const Point& pt : points) {
    if (!(pt.p > 0) || !std::isfinite(pt.p)) throw FitError("a scaling model needs p > 0; got " + number(pt.p));
    if (!std::isfinite(pt.value)) throw FitError("a measurement at p = " + number(pt.p) + " is not a number");
    distinct.insert(pt.p);
  }
  if (distinct.size() < 3)
    throw FitError(
        "a scaling model needs measurements at 3 or more values of p (two coefficients, and one to "
        "validate them); got " +
        std::to_string(distinct.size()));
  const std::size_t none = points.size();
  double mean = 0;
  for (const Point& pt : points) mean += pt.value;
  mean /= static_cast<double>(points.size());
  double tss = 0;
  for (const Point& pt : points) tss += (pt.value - mean) * (pt.value - mean);
  std::vector<Model> out;
  for (const Term& t : terms) {
    // Two coefficients need four rank counts: with three, leaving one out
    // leaves a curve through two points, which predicts the third well for
    // almost any smooth law and so validates nothing (docs/scaling.md).
    if (t.offset && !t.constant() && distinct.size() < 4) continue;
    const Line all = least_squares(points, t, none);
    if (!all.ok || (nonnegative && (all.c0 < 0 || all.c1 < 0))) continue;
    Model m;
    m.term = t;
    m.c0 = all.c0;
    m.c1 = all.c1;
    m.points = points.size();
    bool valid = true;
    for (std::size_t k = 0; k < points.size() && valid; ++k) {
      const double r = points[k].value - m.at(points[k].p);
      m.rss += r * r;
      m.fit_smape += smape(m.at(points[k].p), points[k].value);
      const Line rest = least_squares(points, t, k);
      if (!rest.ok) valid = false;
      m.cv_smape += smape(rest.c0 + rest.c1 * basis(t, points[k].p), points[k].value);
    }
    if (!valid) continue;
    const double n = static_cast<double>(points.size());
    m.fit_smape /= n;
    m.cv_smape /= n;
    const double coefficients = t.constant() || !t.offset ? 1 : 2;
    m.adjusted_r2 = tss > 0 ? 1 - (m.rss / (n - coefficients)) / (tss / (n - 1)) : (m.rss == 0 ? 1 : 0);
    out.push_back(m);
  }
  // Best prediction first; among equals (within 1e-6 %), the simpler term.
  auto complexity = [](const Term& t) { return t.constant() ? -1.0 : std::abs(t.i) + t.j + (t.offset ? 0.5 : 0); };
  std::stable_sort(out.begin(), out.end(), [&](const Model& a, const Model& b) {
    if (std::abs(a.cv_smape - b.cv_smape) > 1e-6) return a.cv_smape < b.cv_smape;
    return complexity(a.term) < complexity(b.term);
  });
  return out;
}

Model fit(const std::vector<Point>& points, const std::vector<Term>& terms, bool nonnegative) {
  std::vector<Model> ranked = rank_hypotheses(points, terms, nonnegative);
  if (ranked.empty())
    throw FitError(nonnegative ? "no hypothesis fits the points with non-negative coefficients"
                               : "no hypothesis could be fitted to the points");
  // Parsimony: of the hypotheses that predict about as well as the best
  // (cross-validated SMAPE within 1.5 x the best + 1 point), the one with
  // the fewest coefficients, then the smallest exponents. With a few noisy
  // points the best score alone often goes to a term that fits the noise
  // (docs/scaling.md measures both rules on synthetic data).
  const double bound = 1.5 * ranked.front().cv_smape + 1.0;
  auto coefficients = [](const Term& t) { return t.constant() || !t.offset ? 1 : 2; };
  const Model* chosen = &ranked.front();
  for (const Model& m : ranked) {
    if (m.cv_smape > bound) break;
    const auto key = [&](const Model& x) {
      return std::make_tuple(coefficients(x.term), std::abs(x.term.i) + x.term.j, x.cv_smape);
    };
    if (key(m) < key(*chosen)) chosen = &m;
  }
  return *chosen;
}

}  // namespace poems::scaling
