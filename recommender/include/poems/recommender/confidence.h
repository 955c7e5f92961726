// How much to trust a recommendation (docs/recommender.md, "Confidence"):
// the agreement between paradigms at the nearest stored case that two
// paradigms evaluated, discounted by the distance to that case.
//
//   confidence = 0.5 + 0.5 * A * exp(-D / kDistanceScale)
//   A = max(0, 1 - e / kAgreementTolerance),  e = |t_analytic - t_other| / t_other
//   D = Euclidean distance of the features phi(x) = log2(1 + x)
//
// With no cross-checked case at all the confidence is 0.5: the analytic
// model alone, unverified on this problem.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "poems/components/sweep3d_model.h"
#include "poems/db/records.h"

namespace poems::recommender {

constexpr double kAgreementTolerance = 0.10;  // e at which paradigm agreement counts for nothing
constexpr double kDistanceScale = 2.0;        // D at which the agreement's weight falls to 1/e

// it, jt (per process), kt, mk, mmi, mm, npe_i, npe_j; L, o, g (ns), G, O
// (ns/B), S (bytes), Wg (ns); the rendezvous handshake (0 or 1).
constexpr std::size_t kFeatureCount = 16;
using Features = std::array<double, kFeatureCount>;
Features features(const components::Sweep3DConfig& config, const components::Sweep3DMachine& machine);
double distance(const Features& a, const Features& b);

// A stored case evaluated by the closed form and by another paradigm.
struct CrossCheck {
  db::RowId run_id = 0;           // the other paradigm's run
  db::RowId analytic_run_id = 0;  // the closed form's run at the same case (0: not stored)
  std::string paradigm;           // e.g. "simulation[MPI-Sim]"
  Features features{};
  double analytic_ns = 0, other_ns = 0;
  std::string case_key;         // canonical text of the case's analytic run key: which candidate it is
  double disagreement() const;  // e
};

struct Confidence {
  double value = 0.5;
  // The nearest cross-checked case (none: analytic only).
  std::optional<db::RowId> nearest_run;
  std::string nearest_paradigm;
  double distance = 0;      // D to it
  double disagreement = 0;  // e at it
};

// The nearest case wins; among equally near ones, the best agreeing.
Confidence confidence(const Features& candidate, const std::vector<CrossCheck>& cases);

}  // namespace poems::recommender
