// Limits every library shares (docs/limits.md): the PSL checks and the task
// graph both ask isl, and the instantiation's fixed arrays bound the process
// coordinates the checker allows.
#pragma once

#include <cstddef>

namespace poems::base {

// Process sets have 1 to 8 coordinates (the instantiation's fixed arrays).
inline constexpr std::size_t kMaxProcessCoordinates = 8;

// isl's own step count for one process set, peer map or communication check
// (a budget, not a clock: the same answer on any machine). The example
// wavefront model needs about 10^5 operations; a 1,000-coordinate set would
// need minutes.
// `--limit isl-operations=N` sets it.
unsigned long& isl_operation_budget();

}  // namespace poems::base
