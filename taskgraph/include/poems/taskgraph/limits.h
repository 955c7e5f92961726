// What a task graph may ask of an evaluator, and of this machine, when it is
// instantiated (docs/limits.md). Every quantity that reaches an evaluator is
// checked here, where it becomes a number: a bad one is a located error, never
// a wrapped integer or a silent zero.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "poems/taskgraph/memory_budget.h"

namespace poems::taskgraph {

// A binding the task graph cannot be instantiated with; the text starts with
// "file:line:col: " when a PSL statement is to blame.
class InstantiationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The run would need more than the memory limit (or another resource limit).
class ResourceError : public InstantiationError {
 public:
  using InstantiationError::InstantiationError;
};

// Message sizes are whole numbers of bytes in [0, 2^53): exact in a double,
// which every evaluator's arithmetic relies on.
inline constexpr double kMaxMessageBytes = 9007199254740991.0;  // 2^53 - 1
// One operation's time (a task's work x Wg) in picoseconds: at most 2^60 ps,
// about 13.3 days, 16 times below the 2^64 ps clock.
inline constexpr double kMaxOperationPs = 1152921504606846976.0;  // 2^60
// Tags and ranks are MPI ints.
inline constexpr double kMaxTag = 2147483647.0;
inline constexpr std::uint64_t kMaxRanks = 2147483647;

struct InstantiationLimits {
  // Bytes an instantiation may plan to use; 0 means the memory available
  // when it starts (MemAvailable, or the cgroup's limit if lower).
  std::uint64_t memory_limit_bytes = 0;
  // Iterations of one loop each time it is entered.
  std::uint64_t max_loop_iterations = 1'000'000'000;
  // Operations of a whole run, every rank together (Sweep3D on 10^6
  // processes has 1.2 x 10^9).
  std::uint64_t max_operations = 100'000'000'000;
};
// The limits every instantiation uses (`poems --memory-limit`, `--limit`).
InstantiationLimits& default_instantiation_limits();
// Sets a limit by its name in docs/limits.md ("loop-iterations",
// "operations", "memory-bytes"); false for a name this library does not own.
bool set_instantiation_limit(std::string_view name, std::uint64_t value);

// Memory this process may still use: MemAvailable of /proc/meminfo, lowered
// to the cgroup's limit minus its usage when that is smaller; 0 when unknown.
std::uint64_t available_memory_bytes();
// The limit require_memory() applies: --memory-limit if given, else
// available_memory_bytes() (0: unknown, nothing is refused).
std::uint64_t memory_limit_bytes();
// Throws ResourceError when `bytes` exceed memory_limit_bytes(). `what` says
// what needs it ("instantiating 10^9 processes of model M (136 B each)").
// (memory_budget.h's format_bytes() writes the sizes; the simulator and the
// GOAL reader compare their own estimates with memory_limit_or_available().)
void require_memory(std::uint64_t bytes, const std::string& what);

}  // namespace poems::taskgraph
