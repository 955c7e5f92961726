// What one fuzz input must survive, for the CI driver (tests/fuzz/fuzz_test.cpp,
// which asserts every Outcome): the whole pipeline a command runs, with the
// properties of docs/limits.md checked. Each broken property comes back as
// Outcome::problem rather than a test failure here, so a fuzzing engine could
// drive these functions too (none is wired up: g++ has no -fsanitize=fuzzer).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace poems::fuzz {

struct Outcome {
  bool accepted = false;  // the input was valid (and evaluated)
  bool skipped = false;   // outside what this harness may run (none today)
  std::string problem;    // a broken property: a crash-free failure to report ("" if none)
};

// Process-wide limits for fuzzing: small budgets so no input can take long.
void set_fuzz_limits();

// PSL text as `path`: front end, then for a valid input every model's
// lowering, the static communication check, instantiation with its defaults
// and a simulation. Properties: no exception escapes but the documented
// ones; every error diagnostic is located; what would be printed is bounded
// and free of control characters.
Outcome check_psl(std::string_view text, const std::string& path = "fuzz.psl");

// GOAL text: the reader (within the fuzz memory limit, so a huge
// `num_ranks` is refused by its estimate), then (if valid) a simulation.
// Same properties.
Outcome check_goal(std::string_view text);

// Upper bound on what the diagnostics of one input may print.
inline constexpr std::size_t kMaxPrinted = 2u << 20;

}  // namespace poems::fuzz
