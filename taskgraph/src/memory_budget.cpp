#include "poems/taskgraph/memory_budget.h"

#include "poems/taskgraph/limits.h"

#include <cstdio>
#include <cstring>

namespace poems::taskgraph {

// MemAvailable, or the cgroup's room if smaller (limits.cpp).
std::uint64_t available_memory() { return available_memory_bytes(); }

std::uint64_t memory_limit_or_available(std::uint64_t limit) {
  if (limit != 0) return limit;
  const std::uint64_t available = available_memory();
  return available != 0 ? available : ~std::uint64_t{0};
}

std::string format_bytes(std::uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 6) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  if (u == 0)
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  else
    std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
  return buf;
}

std::string memory_limit_text(std::uint64_t limit_option, std::uint64_t limit) {
  if (limit_option != 0) return "the limit is " + format_bytes(limit) + " (--memory-limit)";
  return "this machine has " + format_bytes(limit) + " available (--memory-limit allows more)";
}

}  // namespace poems::taskgraph
