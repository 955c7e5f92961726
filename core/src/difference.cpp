#include "poems/core/difference.h"

#include <algorithm>
#include <cmath>

namespace poems::core {

std::optional<double> difference_pct(double other_ns, double reference_ns) {
  if (!(reference_ns > 0) || !std::isfinite(reference_ns) || !std::isfinite(other_ns)) return std::nullopt;
  return (other_ns - reference_ns) / reference_ns * 100.0;
}

bool disagrees(double difference_pct, double threshold_pct) { return std::fabs(difference_pct) > threshold_pct; }

bool has_nonblocking(const taskgraph::StaticTaskGraph& graph) {
  return std::any_of(graph.nodes.begin(), graph.nodes.end(), [](const taskgraph::StaticNode& n) {
    return n.nonblocking &&
           (n.kind == taskgraph::StaticNode::Kind::Send || n.kind == taskgraph::StaticNode::Kind::Recv);
  });
}

std::string disagreement_cause(const EvaluatedBy& reference, const EvaluatedBy& other, bool nonblocking) {
  const auto critical_path = [](const EvaluatedBy& e) {
    return e.paradigm == "analytic[LogGP]" && e.method == "critical-path";
  };
  if (!nonblocking || critical_path(reference) == critical_path(other)) return "";
  return "analytic[LogGP] is the task graph's critical path, which has no CPU queuing: the overheads of a "
         "process's isend/irecv that the graph does not order overlap on its CPU (docs/models/critical-path.md)";
}

}  // namespace poems::core
