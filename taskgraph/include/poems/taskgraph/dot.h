// Graphviz DOT drawings: the static task graph (for docs, in the spirit of the
// POEMS paper's figures) and small dynamic task graphs.
#pragma once

#include <ostream>

#include "poems/taskgraph/schedule.h"
#include "poems/taskgraph/stg.h"

namespace poems::taskgraph {

// Loops and branches become nested clusters around the nodes in program
// order; dashed edges join sends to the receives that match them.
void write_static_dot(const StaticTaskGraph& graph, std::ostream& out);

// One cluster per rank, dependency edges (dotted for irequires) and message
// edges. Refuses (std::length_error) graphs of more than `max_ops` operations.
void write_dynamic_dot(ScheduleSource& source, std::ostream& out, std::size_t max_ops = 2000);

}  // namespace poems::taskgraph
