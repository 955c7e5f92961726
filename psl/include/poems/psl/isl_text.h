// PSL integer sets in isl notation, for stages after the front end.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "poems/psl/ast.h"

namespace poems::psl {

// Writes `set` as isl text. Every PSL name is written with a '_' prefix (so no
// name collides with an isl keyword); the set's free names are its isl
// parameters, returned (without prefix) in `params`. Returns nullopt with
// `error` set when the set is not representable (the front end reports the
// same condition as a located diagnostic).
std::optional<std::string> integer_set_isl(const IntegerSet& set, std::vector<std::string>& params,
                                           std::string* error = nullptr);

// The isl spelling of a PSL name.
inline std::string isl_identifier(const std::string& name) { return "_" + name; }

}  // namespace poems::psl
