// Internal: semantic checks over a whole program.
#pragma once

#include "poems/base/diagnostics.h"
#include "poems/psl/ast.h"

namespace poems::psl {

void check_program(const Program& program, DiagnosticEngine& diags);

}  // namespace poems::psl
