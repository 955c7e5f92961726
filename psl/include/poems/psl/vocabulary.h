// The fixed words of PSL that are identifiers in the grammar and checked by
// the front end: domains, protocols, types, paradigms, collectives, metrics.
#pragma once

#include <array>
#include <string_view>
#include <vector>

namespace poems::psl {

inline constexpr std::array<std::string_view, 3> kDomains{"application", "runtime", "hardware"};
inline constexpr std::array<std::string_view, 2> kProtocols{"dataflow", "call_return"};
inline constexpr std::array<std::string_view, 7> kTransactionTypes{"int",  "real",  "bool", "string",
                                                                   "time", "bytes", "size"};
inline constexpr std::array<std::string_view, 4> kParadigms{"analytic", "simulation", "processor", "measurement"};
inline constexpr std::array<std::string_view, 8> kCollectives{"barrier", "bcast",   "reduce",    "allreduce",
                                                              "gather",  "scatter", "allgather", "alltoall"};
inline constexpr std::array<std::string_view, 10> kReportMetrics{
    "time", "speedup", "efficiency", "comm_fraction", "compute", "comm", "sync", "events", "messages", "bytes"};
// The settings a study may give a model from a trace (its replay's options:
// `poems simulate --trace --window/--collective-algorithm/--computation/--extrapolate/--extrapolate-compute/
// --extrapolate-variation`).
inline constexpr std::array<std::string_view, 7> kTraceReplaySettings{
    "window",      "collective_algorithm", "computation",          "semantics",
    "extrapolate", "extrapolate_compute",  "extrapolate_variation"};

// Collectives with a root process.
inline bool collective_is_rooted(std::string_view op) {
  return op == "bcast" || op == "reduce" || op == "gather" || op == "scatter";
}

// Point-to-point algorithms a collective may be lowered to; the first is the default.
inline std::vector<std::string> collective_algorithms(std::string_view op) {
  if (op == "barrier") return {"dissemination", "binomial", "linear"};
  if (op == "bcast" || op == "reduce") return {"binomial", "linear"};
  if (op == "allreduce") return {"recursive_doubling", "dissemination", "ring", "binomial"};
  if (op == "gather" || op == "scatter") return {"linear", "binomial"};
  if (op == "allgather") return {"ring", "recursive_doubling", "dissemination", "linear"};
  if (op == "alltoall") return {"pairwise", "linear"};
  return {};
}

}  // namespace poems::psl
