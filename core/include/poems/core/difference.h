// The one definition of the difference between two paradigms' times, and of
// when two paradigms disagree (docs/recommender.md, "Differences between
// paradigms"). Every command that reports a difference computes it here:
// `poems run` and `poems measure` (diff_%, difference_pct), `poems recommend
// --confirm` and its confidence, trace replay (traced against predicted).
//
//   difference_pct(other, reference) = (other - reference) / reference * 100
//
// The reference is the first paradigm of the comparison: a study's first
// compare entry; measurement[mpirun] in `poems measure` (which puts it
// first); the traced time of a trace replay; analytic[LogGP] in `poems
// recommend`. So a positive difference says the other paradigm gives the
// longer time.
#pragma once

#include <optional>
#include <string>

#include "poems/taskgraph/stg.h"

namespace poems::core {

// The default threshold above which two paradigms disagree (percent).
inline constexpr double kDisagreePct = 10.0;

// (other - reference) / reference * 100; none when the reference is not a
// positive time or either time is not finite (there is no difference to give).
std::optional<double> difference_pct(double other_ns, double reference_ns);

// |difference| > threshold (percent).
bool disagrees(double difference_pct, double threshold_pct = kDisagreePct);

// What an evaluation was made by: its paradigm and its method
// (Outcome::method, e.g. analytic[LogGP]'s "closed-form" or "critical-path").
struct EvaluatedBy {
  std::string paradigm, method;
};

// Whether the model's task graph has non-blocking communication (isend, irecv).
bool has_nonblocking(const taskgraph::StaticTaskGraph& graph);

// The known cause of a disagreement between two evaluations of one binding,
// "" when none is known: analytic[LogGP] evaluated by the task graph's
// critical path (not a closed form) on a model with isend/irecv against
// another paradigm is the critical path's missing CPU queuing
// (docs/models/critical-path.md, "Where it differs from the simulator").
std::string disagreement_cause(const EvaluatedBy& reference, const EvaluatedBy& other, bool nonblocking);

}  // namespace poems::core
