// How much memory a run may take: the machine's available memory unless the
// user set a limit. Readers and evaluators estimate what an input needs
// before they allocate it (a GOAL `num_ranks`, a simulation's per-rank
// records) and refuse it with the figures instead of dying on bad_alloc.
#pragma once

#include <cstdint>
#include <string>

namespace poems::taskgraph {

// MemAvailable of /proc/meminfo in bytes; 0 if it cannot be read.
std::uint64_t available_memory();

// `limit` if non-zero, else available_memory() (if that is 0, no limit:
// ~0).
std::uint64_t memory_limit_or_available(std::uint64_t limit);

// "1.5 GiB", "512 MiB", "800 B".
std::string format_bytes(std::uint64_t bytes);

// The sentence a refusal ends with: "this machine has X available (set
// --memory-limit to allow more)" or "the limit is X (--memory-limit)".
std::string memory_limit_text(std::uint64_t limit_option, std::uint64_t limit);

}  // namespace poems::taskgraph
