#include "poems/core/limits.h"

#include <cerrno>
#include <cstdlib>

#include "poems/base/limits.h"
#include "poems/base/units.h"
#include "poems/core/error.h"
#include "poems/core/machine.h"

namespace poems::core {

LimitsScope::LimitsScope()
    : diagnostics_(base::default_diagnostic_limits()),
      frontend_(psl::default_frontend_limits()),
      instantiation_(taskgraph::default_instantiation_limits()),
      isl_(base::isl_operation_budget()) {}

LimitsScope::~LimitsScope() {
  base::default_diagnostic_limits() = diagnostics_;
  psl::default_frontend_limits() = frontend_;
  taskgraph::default_instantiation_limits() = instantiation_;
  base::isl_operation_budget() = isl_;
}

void set_limit(const std::string& s) {
  const auto eq = s.find('=');
  char* end = nullptr;
  errno = 0;
  // strtoul takes "-5" as 2^64 - 5: a sign is refused before it.
  const bool digits = eq != std::string::npos && eq + 1 < s.size() && s[eq + 1] >= '0' && s[eq + 1] <= '9';
  const unsigned long value = digits ? std::strtoul(s.c_str() + eq + 1, &end, 10) : 0;
  if (!digits || *end != '\0' || errno == ERANGE)
    throw UsageError("--limit", "'" + s.substr(0, 80) + (s.size() > 80 ? "..." : "") +
                                    "' is not NAME=N with a NAME of docs/limits.md and N a whole "
                                    "number below 2^64");
  const std::string name = s.substr(0, eq), problem = psl::frontend_limit_problem(name, value);
  if (!problem.empty()) throw UsageError("--limit", problem);
  if (!psl::set_frontend_limit(name, value) && !taskgraph::set_instantiation_limit(name, value))
    throw UsageError("--limit",
                     "'" + s.substr(0, 80) + (s.size() > 80 ? "..." : "") + "' names no limit of docs/limits.md");
}

void set_memory_limit(const std::string& option, const std::string& text) {
  const double bytes = quantity(option, text, base::kBytes, "a size in 1..1.8e19 bytes, e.g. 32GiB");
  if (!(bytes >= 1 && bytes < 1.8e19))
    throw UsageError(option, "'" + text + "' is out of range; expected a size in 1..1.8e19 bytes");
  taskgraph::default_instantiation_limits().memory_limit_bytes = static_cast<std::uint64_t>(bytes);
}

}  // namespace poems::core
