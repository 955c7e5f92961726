#include "poems/recommender/confidence.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "poems/core/difference.h"

namespace poems::recommender {

double distance(const Features& a, const Features& b) {
  double sum = 0;
  const std::size_t n = std::min(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i) sum += (a[i] - b[i]) * (a[i] - b[i]);
  // Features of different models are far apart.
  return a.size() == b.size() ? std::sqrt(sum) : std::numeric_limits<double>::infinity();
}

double CrossCheck::disagreement() const {
  if (other_ns == analytic_ns) return 0;
  // The one difference between paradigms (core/difference.h), the analytic time the reference, as a fraction.
  const std::optional<double> d = core::difference_pct(other_ns, analytic_ns);
  return d ? std::fabs(*d) / 100 : 1.0;
}

Confidence confidence(const Features& candidate, const std::vector<CrossCheck>& cases) {
  Confidence out;
  const CrossCheck* nearest = nullptr;
  double best_d = 0;
  for (const CrossCheck& c : cases) {
    const double d = distance(candidate, c.features);
    if (!nearest || d < best_d || (d == best_d && c.disagreement() < nearest->disagreement())) {
      nearest = &c;
      best_d = d;
    }
  }
  if (!nearest || !std::isfinite(best_d)) return out;
  out.nearest_run = nearest->run_id;
  out.nearest_paradigm = nearest->paradigm;
  out.distance = best_d;
  out.disagreement = nearest->disagreement();
  const double agreement = std::max(0.0, 1.0 - out.disagreement / kAgreementTolerance);
  out.value = 0.5 + 0.5 * agreement * std::exp(-best_d / kDistanceScale);
  return out;
}

}  // namespace poems::recommender
