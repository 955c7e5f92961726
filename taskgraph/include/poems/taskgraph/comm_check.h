// Static communication check (before any evaluation): every send of a task
// graph must have a matching receive and vice versa, with equal tags and
// sizes. Decided with isl per loop nest, for the model's default parameters;
// mismatches become PSL diagnostics at the send and the receive.
#pragma once

#include <utility>
#include <vector>

#include "poems/base/diagnostics.h"
#include "poems/taskgraph/stg.h"

namespace poems::taskgraph {

// Checks one lowered task graph; returns the number of errors reported.
std::size_t check_communication(const StaticTaskGraph& graph, psl::DiagnosticEngine& diags);

// Pairs (send node, recv node) whose messages overlap, for the default parameters.
std::vector<std::pair<std::uint32_t, std::uint32_t>> matching_nodes(const StaticTaskGraph& graph);

}  // namespace poems::taskgraph
