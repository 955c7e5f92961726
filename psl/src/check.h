// Internal: semantic checks over a whole program.
#pragma once

#include "poems/psl/ast.h"
#include "poems/psl/diagnostics.h"

namespace poems::psl {

void check_program(const Program& program, DiagnosticEngine& diags);

}  // namespace poems::psl
