// Internal: the entries of a model's `program { }` and an application
// component's `kernel { }` (docs/psl.md, "Programs and kernels").
#pragma once

#include "analyzer.h"
#include "poems/psl/ast.h"

namespace poems::psl {

enum class AttachedKind { Program, Kernel };

// Checks every entry's name, type and value; `scope` holds the names the
// arguments may read (the model's parameters and lets for a program, the
// component's accepted transaction parameters for a kernel).
void check_attached(const AttachedCommand& block, AttachedKind kind, const Scope& scope, const Analyzer::Hooks& hooks,
                    DiagnosticEngine& diags);

}  // namespace poems::psl
