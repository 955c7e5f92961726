#include "poems/recommender/confidence.h"

#include <algorithm>
#include <cmath>

namespace poems::recommender {

namespace {

double phi(double x) { return std::log2(1.0 + std::max(0.0, x)); }

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

}  // namespace

Features features(const components::Sweep3DConfig& c, const components::Sweep3DMachine& m) {
  const components::LogGOPS& p = m.params;
  const double raw[kFeatureCount] = {static_cast<double>(ceil_div(c.it_g, c.npe_i)),
                                     static_cast<double>(ceil_div(c.jt_g, c.npe_j)),
                                     static_cast<double>(c.kt),
                                     static_cast<double>(c.mk),
                                     static_cast<double>(c.mmi),
                                     static_cast<double>(c.mm),
                                     static_cast<double>(c.npe_i),
                                     static_cast<double>(c.npe_j),
                                     static_cast<double>(p.L) / 1e3,
                                     static_cast<double>(p.o) / 1e3,
                                     static_cast<double>(p.g) / 1e3,
                                     static_cast<double>(p.G) / 1e6,
                                     static_cast<double>(p.O) / 1e6,
                                     static_cast<double>(p.S),
                                     m.wg_ns,
                                     m.rendezvous_handshake ? 1.0 : 0.0};
  Features f{};
  for (std::size_t i = 0; i < kFeatureCount; ++i) f[i] = phi(raw[i]);
  return f;
}

double distance(const Features& a, const Features& b) {
  double sum = 0;
  for (std::size_t i = 0; i < kFeatureCount; ++i) sum += (a[i] - b[i]) * (a[i] - b[i]);
  return std::sqrt(sum);
}

double CrossCheck::disagreement() const {
  if (other_ns == analytic_ns) return 0;
  return other_ns > 0 ? std::fabs(analytic_ns - other_ns) / other_ns : 1.0;
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
  if (!nearest) return out;
  out.nearest_run = nearest->run_id;
  out.nearest_paradigm = nearest->paradigm;
  out.distance = best_d;
  out.disagreement = nearest->disagreement();
  const double agreement = std::max(0.0, 1.0 - out.disagreement / kAgreementTolerance);
  out.value = 0.5 + 0.5 * agreement * std::exp(-best_d / kDistanceScale);
  return out;
}

}  // namespace poems::recommender
