// The limits of docs/limits.md as a front end sets them: by name (`--limit
// NAME=N`), the memory a model may plan to use (`--memory-limit 64GiB`),
// and restored when a command is done, so commands run one after another in
// one process (the tests, a service) do not inherit each other's.
#pragma once

#include <cstdint>
#include <string>

#include "poems/base/diagnostics.h"
#include "poems/psl/frontend.h"
#include "poems/taskgraph/limits.h"

namespace poems::core {

// While alive, keeps the limits as they were when it was made; restores
// them when it ends.
class LimitsScope {
 public:
  LimitsScope();
  ~LimitsScope();
  LimitsScope(const LimitsScope&) = delete;
  LimitsScope& operator=(const LimitsScope&) = delete;

 private:
  base::DiagnosticLimits diagnostics_;
  psl::FrontendLimits frontend_;
  taskgraph::InstantiationLimits instantiation_;
  unsigned long isl_;
};

// Sets the limit a setting NAME=N names, in whichever library owns it;
// UsageError("--limit") for text that is not NAME=N with N a whole number
// below 2^64, a value out of the limit's range, or a name of no limit.
void set_limit(const std::string& setting);

// Sets the memory limit from `text` (e.g. 64GiB); UsageError naming `option`.
void set_memory_limit(const std::string& option, const std::string& text);

}  // namespace poems::core
