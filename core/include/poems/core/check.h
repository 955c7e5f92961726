// `poems check`: everything `poems run` would reject before it evaluates,
// reported as located diagnostics: the front end's checks, the static
// communication check of every model, and for every study its compare
// entries (against the evaluators, with the closest spelling), its bindings,
// the composition of its model for each compared paradigm (requests matched
// to accepts, the evaluation plan), the machine its messages reach and the
// closed form's parameters.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "poems/psl/frontend.h"

namespace poems::core {

struct CheckResult {
  std::shared_ptr<psl::Frontend> frontend;  // its diagnostics and sources
  bool ok = false;
  std::size_t models = 0, components = 0, studies = 0;
};

// Checks one specification file with what it imports.
CheckResult check_specification(const std::string& file);

}  // namespace poems::core
