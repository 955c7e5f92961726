// Extra-P's normal form in two parameters, ranks and problem size (pmnf2.h).
#include "poems/scaling/pmnf2.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

namespace poems::scaling {

namespace {

// At most four columns: 1, P(p), N(n), P(p) * N(n).
constexpr std::size_t max_columns = 4;
// Terms per parameter carried from its lines into the combined search.
constexpr std::size_t candidates = 16;
using Row = std::array<double, max_columns>;

struct Columns {
  std::array<int, max_columns> which{};  // 0: 1, 1: P, 2: N, 3: P*N
  std::size_t count = 0;
};

Columns columns_of(const Model2& m) {
  Columns c;
  if (m.offset) c.which[c.count++] = 0;
  if (m.has_p) c.which[c.count++] = 1;
  if (m.has_n) c.which[c.count++] = 2;
  if (m.has_pn) c.which[c.count++] = 3;
  return c;
}

Row row_of(const Model2& m, const Columns& c, const Point2& pt) {
  const double fp = term_value(m.p_term, pt.p), gn = term_value(m.n_term, pt.n);
  const double all[max_columns] = {1, fp, gn, fp * gn};
  Row r{};
  for (std::size_t k = 0; k < c.count; ++k) r[k] = all[c.which[k]];
  return r;
}

// Least squares over the points but `skip` by the normal equations (at most
// 4 x 4, Gaussian elimination with partial pivoting); false when the
// columns cannot be told apart on these points.
bool least_squares(const Model2& m, const std::vector<Point2>& points, std::size_t skip, Row& x) {
  const Columns c = columns_of(m);
  const std::size_t k = c.count;
  double a[max_columns][max_columns + 1] = {};
  double scale = 0;
  for (std::size_t q = 0; q < points.size(); ++q) {
    if (q == skip) continue;
    const Row r = row_of(m, c, points[q]);
    for (std::size_t i = 0; i < k; ++i) {
      for (std::size_t j = 0; j < k; ++j) a[i][j] += r[i] * r[j];
      a[i][k] += r[i] * points[q].value;
    }
  }
  for (std::size_t i = 0; i < k; ++i) scale = std::max(scale, std::abs(a[i][i]));
  if (!(scale > 0) || !std::isfinite(scale)) return false;
  for (std::size_t col = 0; col < k; ++col) {
    std::size_t pivot = col;
    for (std::size_t i = col + 1; i < k; ++i)
      if (std::abs(a[i][col]) > std::abs(a[pivot][col])) pivot = i;
    if (!(std::abs(a[pivot][col]) > 1e-12 * scale)) return false;
    for (std::size_t j = 0; j <= k; ++j) std::swap(a[col][j], a[pivot][j]);
    for (std::size_t i = 0; i < k; ++i) {
      if (i == col) continue;
      const double f = a[i][col] / a[col][col];
      for (std::size_t j = col; j <= k; ++j) a[i][j] -= f * a[col][j];
    }
  }
  x = Row{};
  for (std::size_t i = 0; i < k; ++i) {
    x[i] = a[i][k] / a[i][i];
    if (!std::isfinite(x[i])) return false;
  }
  return true;
}

void assign(Model2& m, const Row& x) {
  const Columns c = columns_of(m);
  double* slot[max_columns] = {&m.c0, &m.cp, &m.cn, &m.cpn};
  m.c0 = m.cp = m.cn = m.cpn = 0;
  for (std::size_t k = 0; k < c.count; ++k) *slot[c.which[k]] = x[k];
}

double complexity(const Term& t) { return t.constant() ? 0 : std::abs(t.i) + t.j; }

std::string product(double c, const Model2& m, bool p, bool n, const std::string& pv, const std::string& nv, bool psl) {
  std::string f = number(c);
  if (p) f += psl ? term_factor_psl(m.p_term, pv) : term_factor(m.p_term, pv);
  if (n) f += psl ? term_factor_psl(m.n_term, nv) : term_factor(m.n_term, nv);
  return f;
}

std::string text(const Model2& m, const std::string& pv, const std::string& nv, bool psl) {
  std::string f;
  auto add = [&](const std::string& part) { f += f.empty() ? part : " + " + part; };
  if (m.offset) add(number(m.c0));
  if (m.has_p) add(product(m.cp, m, true, false, pv, nv, psl));
  if (m.has_n) add(product(m.cn, m, false, true, pv, nv, psl));
  if (m.has_pn) add(product(m.cpn, m, true, true, pv, nv, psl));
  return f.empty() ? "0" : f;
}

}  // namespace

double Model2::at(double p, double n) const {
  const double fp = term_value(p_term, p), gn = term_value(n_term, n);
  return (offset ? c0 : 0) + (has_p ? cp * fp : 0) + (has_n ? cn * gn : 0) + (has_pn ? cpn * fp * gn : 0);
}

std::string Model2::formula(const std::string& p_name, const std::string& n_name) const {
  return text(*this, p_name, n_name, false);
}

std::string Model2::psl(const std::string& p_name, const std::string& n_name) const {
  return text(*this, p_name, n_name, true);
}

std::vector<Term> line_terms(const std::vector<Point2>& points, bool by_n, std::size_t count,
                             const std::vector<Term>& terms) {
  // The lines: points grouped by the held parameter's value.
  std::map<double, std::vector<Point>> lines;
  for (const Point2& pt : points) lines[by_n ? pt.p : pt.n].push_back({by_n ? pt.n : pt.p, pt.value});
  const char* varying = by_n ? "n" : "p";
  const char* held = by_n ? "p" : "n";
  // Per term (i, j): how closely c0 + c1 * term (or c1 * term) fits each
  // usable line, the better of the two; a line of three runs leaves one
  // degree of freedom, so this only short-lists: the combined fit's
  // cross-validation on all the points chooses.
  std::map<std::pair<double, int>, std::pair<double, std::size_t>> score;
  std::size_t usable = 0;
  for (auto& [value, line] : lines) {
    std::set<double> distinct;
    for (const Point& pt : line) distinct.insert(pt.p);
    if (distinct.size() < 3) continue;
    ++usable;
    std::vector<Point2> as_p;  // the line as points of one parameter, n = 1 throughout
    for (const Point& pt : line) as_p.push_back({pt.p, 1, pt.value});
    std::set<std::pair<double, int>> seen;
    for (const Term& t : terms) {
      if (t.constant() || !seen.insert({t.i, t.j}).second) continue;
      double best = -1;
      for (bool offset : {true, false}) {
        Model2 m;
        m.p_term = t;
        m.offset = offset;
        m.has_p = true;
        Row x;
        if (!least_squares(m, as_p, as_p.size(), x)) continue;
        assign(m, x);
        if (m.c0 < 0 || m.cp < 0) continue;
        double fit = 0;
        for (const Point2& pt : as_p) fit += smape(m.at(pt.p, 1), pt.value);
        fit /= static_cast<double>(as_p.size());
        if (best < 0 || fit < best) best = fit;
      }
      if (best < 0) continue;
      score[{t.i, t.j}].first += best;
      score[{t.i, t.j}].second += 1;
    }
  }
  if (usable == 0)
    throw FitError(std::string("a model in two parameters needs measurements at 3 or more values of ") + varying +
                   " with " + held + " held (a line of runs); there is none");
  // Terms that fitted on every line, by their mean score; the constant always.
  std::vector<std::pair<Term, double>> ranked;
  for (const auto& [key, s] : score)
    if (s.second == usable) ranked.push_back({{key.first, key.second, true}, s.first / static_cast<double>(usable)});
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  std::vector<Term> out = {Term{0, 0, true}};
  for (const auto& [t, cv] : ranked) {
    if (out.size() > count) break;
    if (!t.constant()) out.push_back(t);
  }
  return out;
}

std::vector<Model2> rank_hypotheses2(const std::vector<Point2>& points, const std::vector<Term>& terms,
                                     bool nonnegative) {
  for (const Point2& pt : points) {
    if (!(pt.p > 0) || !std::isfinite(pt.p)) throw FitError("a scaling model needs p > 0; got " + number(pt.p));
    if (!(pt.n > 0) || !std::isfinite(pt.n)) throw FitError("a scaling model needs n > 0; got " + number(pt.n));
    if (!std::isfinite(pt.value))
      throw FitError("a measurement at p = " + number(pt.p) + ", n = " + number(pt.n) + " is not a number");
  }
  // Each parameter's candidates from its lines, then every pair combined
  // and cross-validated on all the points: with three runs a line, one
  // line's choice alone is often wrong (no c0 can be validated on it).
  const std::vector<Term> p_terms = line_terms(points, false, candidates, terms);
  const std::vector<Term> n_terms = line_terms(points, true, candidates, terms);
  double mean = 0;
  for (const Point2& pt : points) mean += pt.value;
  mean /= static_cast<double>(points.size());
  double tss = 0;
  for (const Point2& pt : points) tss += (pt.value - mean) * (pt.value - mean);
  std::vector<Model2> out;
  for (const Term& p_term : p_terms)
    for (const Term& n_term : n_terms)
      for (bool offset : {true, false})
        for (int mask = 0; mask < 8; ++mask) {
          Model2 m;
          m.p_term = p_term;
          m.n_term = n_term;
          m.offset = offset;
          m.has_p = mask & 1;
          m.has_n = mask & 2;
          m.has_pn = mask & 4;
          // A constant term is no factor: its products are the offset.
          if ((p_term.constant() && (m.has_p || m.has_pn)) || (n_term.constant() && (m.has_n || m.has_pn))) continue;
          const std::size_t k = m.coefficients();
          if (k == 0 || points.size() < k + 1) continue;  // leave one out and still determine every coefficient
          Row x;
          if (!least_squares(m, points, points.size(), x)) continue;
          assign(m, x);
          if (nonnegative &&
              std::any_of(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(k), [](double c) { return c < 0; }))
            continue;
          m.points = points.size();
          bool valid = true;
          for (std::size_t q = 0; q < points.size() && valid; ++q) {
            const double predicted = m.at(points[q].p, points[q].n);
            m.rss += (points[q].value - predicted) * (points[q].value - predicted);
            m.fit_smape += smape(predicted, points[q].value);
            Model2 rest = m;
            Row y;
            if (!least_squares(rest, points, q, y)) {
              valid = false;
              break;
            }
            assign(rest, y);
            m.cv_smape += smape(rest.at(points[q].p, points[q].n), points[q].value);
          }
          if (!valid) continue;
          const double n = static_cast<double>(points.size());
          m.fit_smape /= n;
          m.cv_smape /= n;
          m.adjusted_r2 = tss > 0 && n > static_cast<double>(k)
                              ? 1 - (m.rss / (n - static_cast<double>(k))) / (tss / (n - 1))
                              : (m.rss == 0 ? 1 : 0);
          out.push_back(m);
        }
  std::stable_sort(out.begin(), out.end(), [](const Model2& a, const Model2& b) {
    if (std::abs(a.cv_smape - b.cv_smape) > 1e-6) return a.cv_smape < b.cv_smape;
    return a.coefficients() < b.coefficients();
  });
  return out;
}

Model2 fit2(const std::vector<Point2>& points, const std::vector<Term>& terms, bool nonnegative) {
  std::vector<Model2> ranked = rank_hypotheses2(points, terms, nonnegative);
  if (ranked.empty())
    throw FitError(nonnegative ? "no combination of the two terms fits the points with non-negative coefficients"
                               : "no combination of the two terms could be fitted to the points");
  const double bound = 1.5 * ranked.front().cv_smape + 1.0;
  auto key = [](const Model2& m) {
    const double c =
        (m.has_p || m.has_pn ? complexity(m.p_term) : 0) + (m.has_n || m.has_pn ? complexity(m.n_term) : 0);
    return std::make_tuple(m.coefficients(), c, m.cv_smape);
  };
  const Model2* chosen = &ranked.front();
  for (const Model2& m : ranked) {
    if (m.cv_smape > bound) break;
    if (key(m) < key(*chosen)) chosen = &m;
  }
  return *chosen;
}

}  // namespace poems::scaling
