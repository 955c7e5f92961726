// The EvaluationPlan (POEMS paper 3.3): one TED (task execution description)
// per static task-graph node, resolved once from the composed SystemModel:
// which evaluator runs the node and with which bound parameters. Dynamic
// instances never look anything up; evaluators read the plan.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "poems/components/loggops.h"
#include "poems/core/error.h"
#include "poems/psl/compiler.h"
#include "poems/taskgraph/stg.h"

namespace poems::core {

using components::LogGOPS;

struct Ted {
  std::uint32_t node = 0;          // index into StaticTaskGraph::nodes
  std::string node_text;           // the statement, for reports
  std::string kind;                // compute, send, recv, collective
  std::string evaluator;           // "processor[wg]", "simulation[MPI-Sim]", "analytic[LogGP]", ...
  std::vector<std::string> chain;  // the components walked, application first
  // Bound parameters: the implementing components' parameters and profile
  // attributes (Wg, kernel, command; L, o, g, G, O, S, eager_limit, handshake).
  std::map<std::string, psl::Value> parameters;
  // Compute: how the processor's transaction arguments are computed from the
  // task's arguments ("work" -> "cells * angles").
  std::map<std::string, std::string> arguments;
  bool implicit = false;  // no component accepts the node: the run's defaults apply
};

// The plan cannot be carried out: an error in the specification, located
// where it was written when one place is to blame (compose() renders it).
class PlanError : public InputError {
 public:
  explicit PlanError(const std::string& message, psl::SourceLocation at = {}) : InputError(message), at_(at) {}
  const psl::SourceLocation& location() const { return at_; }

 private:
  psl::SourceLocation at_;
};

struct EvaluationPlan {
  std::vector<Ted> teds;  // one per static node, in node order (node 0, "none", excluded)
  // The paradigm of every communication node (they must agree: one engine
  // carries the messages); "" when no node names one.
  std::string communication;
  // The network the communication nodes reach, if any composed one.
  std::optional<LogGOPS> network;
  std::string network_component;
  bool rendezvous_handshake = false;
  // The MPI runtime's `semantics` profile attribute, if it has one, and the
  // runtime component it was read from (validated by compose()).
  std::optional<psl::Value> semantics;
  std::string runtime_component;

  const Ted* ted(std::uint32_t node) const;
  nlohmann::json to_json() const;
};

// The message-protocol attributes (eager_limit, handshake, semantics) that
// one runtime component's accepts profiles for `paradigm` set (those whose
// `evaluation` is `paradigm`, or without one in a component implementing it),
// checked as plan_evaluation checks the profiles a composition's messages are
// bound through: of the right kind, the same wherever written. For `poems
// direct`, which runs a program instead of a model's task graph. Throws
// PlanError located where a bad or disagreeing value is written.
struct RuntimeProtocol {
  std::optional<std::uint64_t> eager_limit;  // bytes
  std::optional<bool> handshake;
  std::optional<psl::Value> semantics;  // unchecked, as EvaluationPlan::semantics
};
RuntimeProtocol runtime_protocol(const psl::ComponentInstance& runtime, const std::string& paradigm);
// Whether any accepts interface of `runtime` is for `paradigm` (as above).
bool runtime_accepts(const psl::ComponentInstance& runtime, const std::string& paradigm);

// Resolves the TEDs of `graph` from `system` (composed for the same model).
// Throws PlanError when the plan cannot be carried out (e.g. communication
// nodes bound to different paradigms, a network without LogGOPS parameters).
EvaluationPlan plan_evaluation(const psl::SystemModel& system, const taskgraph::StaticTaskGraph& graph);

}  // namespace poems::core
