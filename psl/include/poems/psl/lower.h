// Lowering a checked PSL model's task graph into a StaticTaskGraph (the
// task graph library's representation, which knows nothing of PSL): slots for
// every name, compiled expressions, a flat control program, static node
// records with their isl instance sets and message relations.
#pragma once

#include <cstddef>
#include <string>

#include "poems/base/diagnostics.h"
#include "poems/psl/ast.h"
#include "poems/taskgraph/stg.h"

namespace poems::psl {

struct LowerOptions {
  // Merge consecutive compute tasks of a block into one whose scaling
  // function is the sum (POEMS paper 4.1).
  bool condense = true;
};

// Lowers a checked model's task graph. Throws std::runtime_error with a
// "file:line:col: message" text on constructs it cannot lower.
taskgraph::StaticTaskGraph lower(const Program& program, const SourceManager& sources, const ModelDecl& model,
                                 const TaskGraphDecl& graph, const LowerOptions& options = {});

// Finds the model (or the only one) and its first task graph and lowers it.
taskgraph::StaticTaskGraph lower_model(const Program& program, const SourceManager& sources,
                                       const std::string& model_name, const LowerOptions& options = {});

// Lowers every model of a checked program and checks its communication
// (taskgraph/comm_check.h); lowering failures are reported too. Returns the
// number of errors.
std::size_t check_program_communication(const Program& program, const SourceManager& sources, DiagnosticEngine& diags);

}  // namespace poems::psl
