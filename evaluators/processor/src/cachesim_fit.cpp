// processor[cachesim]'s rates from measured times: non-negative least
// squares on relative errors (four unknowns: every subset of them is tried).
#include <array>
#include <cmath>
#include <vector>

#include "poems/processor/cachesim.h"

namespace poems::processor {
namespace {

constexpr int kRates = 4;
using Row = std::array<double, kRates>;

// Least squares of A x = 1 on the columns in `use` (normal equations).
bool solve_subset(const std::vector<Row>& rows, const std::array<bool, kRates>& use, Row& x) {
  double m[kRates][kRates + 1] = {};
  for (const Row& row : rows)
    for (int i = 0; i < kRates; ++i) {
      if (!use[i]) continue;
      for (int j = 0; j < kRates; ++j)
        if (use[j]) m[i][j] += row[i] * row[j];
      m[i][kRates] += row[i];
    }
  for (int i = 0; i < kRates; ++i)
    if (!use[i] || m[i][i] == 0) m[i][i] = 1, m[i][kRates] = 0;  // an unused or all-zero column: rate 0
  for (int c = 0; c < kRates; ++c) {                             // Gaussian elimination, partial pivoting
    int pivot = c;
    for (int r = c + 1; r < kRates; ++r)
      if (std::fabs(m[r][c]) > std::fabs(m[pivot][c])) pivot = r;
    if (std::fabs(m[pivot][c]) < 1e-300) return false;
    for (int k = 0; k <= kRates; ++k) std::swap(m[c][k], m[pivot][k]);
    for (int r = 0; r < kRates; ++r) {
      if (r == c) continue;
      const double f = m[r][c] / m[c][c];
      for (int k = 0; k <= kRates; ++k) m[r][k] -= f * m[c][k];
    }
  }
  for (int i = 0; i < kRates; ++i) x[static_cast<std::size_t>(i)] = m[i][kRates] / m[i][i];
  return true;
}

}  // namespace

CachesimRates fit_cachesim_rates(const std::vector<CacheCounts>& per_call, const std::vector<double>& measured_ns,
                                 const std::vector<int>& sharers) {
  if (per_call.size() != measured_ns.size() || per_call.empty() ||
      (!sharers.empty() && sharers.size() != per_call.size()))
    throw ProcessorError("fit_cachesim_rates: needs as many counts as times (and sharers, if any), at least one");
  std::vector<Row> rows;
  for (std::size_t k = 0; k < per_call.size(); ++k) {
    const double t = measured_ns[k];
    if (!(t > 0)) throw ProcessorError("fit_cachesim_rates: a measured time is not positive");
    const int others = sharers.empty() ? 0 : std::max(sharers[k], 1) - 1;
    const CacheCounts& c = per_call[k];
    rows.push_back({c.Ir / t, c.l1_misses() / t, c.ll_misses() / t, c.ll_misses() * others / t});
  }
  // Columns scaled to unit norm: instructions and LL misses differ by 10^4
  // and more, which the normal equations would square.
  Row scale{};
  for (const Row& row : rows)
    for (std::size_t i = 0; i < kRates; ++i) scale[i] += row[i] * row[i];
  for (double& s : scale) s = std::sqrt(s);
  for (Row& row : rows)
    for (std::size_t i = 0; i < kRates; ++i) row[i] = scale[i] > 0 ? row[i] / scale[i] : 0;
  double best_residual = INFINITY;
  Row best{};
  for (int mask = 1; mask < (1 << kRates); ++mask) {  // every subset of the rates; the best feasible one
    std::array<bool, kRates> use{};
    for (int i = 0; i < kRates; ++i) use[static_cast<std::size_t>(i)] = (mask >> i) & 1;
    Row x{};
    if (!solve_subset(rows, use, x)) continue;
    bool feasible = true;
    for (double v : x) feasible = feasible && v >= 0;
    if (!feasible) continue;
    double residual = 0;
    for (const Row& row : rows) {
      double e = -1;
      for (std::size_t i = 0; i < kRates; ++i) e += row[i] * x[i];
      residual += e * e;
    }
    if (residual < best_residual) best_residual = residual, best = x;
  }
  for (std::size_t i = 0; i < kRates; ++i)
    best[i] = scale[i] > 0 ? best[i] / scale[i] : 0;  // a count never seen: no rate
  return {best[0], best[1], best[2], best[3]};
}

}  // namespace poems::processor
