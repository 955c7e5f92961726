// Internal: parse one registered file into a Module (syntax diagnostics only).
#pragma once

#include "poems/base/diagnostics.h"
#include "poems/psl/ast.h"
#include "poems/psl/frontend.h"

namespace poems::psl {

Module parse_module(FileId file, const SourceManager& sources, DiagnosticEngine& diags, const FrontendLimits& limits);

}  // namespace poems::psl
