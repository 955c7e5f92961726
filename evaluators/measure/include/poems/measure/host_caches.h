// The memory hierarchy of this host, from hwloc: the data (and unified)
// caches of the first core's path to memory, innermost first, each with how
// many cores share one instance.
#pragma once

#include <string>
#include <vector>

namespace poems::measure {

struct CacheLevel {
  int depth = 0;            // 1 = L1
  double bytes = 0;         // one instance
  int line_bytes = 0;       // 0 = unknown
  int associativity = 0;    // ways; -1 = fully associative, 0 = unknown
  int shared_by_cores = 1;  // cores that share one instance
  std::string name() const { return "L" + std::to_string(depth); }
};

// Throws std::runtime_error when hwloc cannot read the topology or finds no cache.
std::vector<CacheLevel> host_caches();

// "L1d 48 KiB (12-way, 64 B lines, per core), L2 1 MiB ..., L3 32 MiB (..., shared by 2 cores)"
std::string describe(const std::vector<CacheLevel>& levels);

}  // namespace poems::measure
