// A rank's copy within its own memory, timed on this host: what an MPI
// library pays for a collective's own block (the machine's copy_G,
// docs/network.md).
#pragma once

#include <cstddef>

namespace poems::measure {

// ns per byte of memcpy between two buffers of `bytes` each (by default
// 64 MiB: beyond this host's caches, as a large collective's own block is),
// the fastest of `repetitions` copies after one that faults the pages in.
// Throws std::invalid_argument for bytes < 4096 or repetitions < 1.
double copy_ns_per_byte(std::size_t bytes = std::size_t{64} << 20, int repetitions = 5);

}  // namespace poems::measure
