// The AST as JSON, every node with its source location.
#pragma once

#include <nlohmann/json.hpp>

#include "poems/psl/ast.h"

namespace poems::psl {

nlohmann::json to_json(const Program& program, const SourceManager& sources);
nlohmann::json to_json(const Expr& e, const SourceManager& sources);

}  // namespace poems::psl
