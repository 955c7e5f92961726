// How much to trust a recommendation (docs/recommender.md, "Confidence"):
// the agreement between paradigms at the nearest stored case that two
// paradigms evaluated, discounted by the distance to that case.
//
//   confidence = 0.5 + 0.5 * A * exp(-D / kDistanceScale)
//   A = max(0, 1 - e / kAgreementTolerance),  e = |t_other - t_analytic| / t_analytic
//   (|core::difference_pct(t_other, t_analytic)| / 100)
//   D = Euclidean distance of the case features (the problem class's, or
//       log2(1 + x) of every parameter and the machine)
//
// With no cross-checked case at all the confidence is 0.5: the analytic
// model alone, unverified on this problem.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "poems/db/records.h"

namespace poems::recommender {

constexpr double kAgreementTolerance = 0.10;  // e at which paradigm agreement counts for nothing
constexpr double kDistanceScale = 2.0;        // D at which the agreement's weight falls to 1/e

using Features = std::vector<double>;
double distance(const Features& a, const Features& b);

// A stored case evaluated by the analytic evaluator and by another paradigm.
struct CrossCheck {
  db::RowId run_id = 0;           // the other paradigm's run
  db::RowId analytic_run_id = 0;  // the analytic run at the same case (0: not stored)
  std::string paradigm;           // e.g. "simulation[MPI-Sim]"
  Features features;
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
