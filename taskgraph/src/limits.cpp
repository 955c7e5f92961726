#include "poems/taskgraph/limits.h"

#include <cstdio>
#include <fstream>
#include <sstream>

namespace poems::taskgraph {

namespace {

// A number from a one-line file such as /sys/fs/cgroup/memory.max ("max" or bytes).
std::uint64_t read_number(const char* path) {
  std::ifstream in(path);
  std::uint64_t v = 0;
  if (in >> v) return v;
  return 0;
}

}  // namespace

InstantiationLimits& default_instantiation_limits() {
  static InstantiationLimits limits;
  return limits;
}

bool set_instantiation_limit(std::string_view name, std::uint64_t value) {
  InstantiationLimits& l = default_instantiation_limits();
  if (name == "loop-iterations")
    l.max_loop_iterations = value;
  else if (name == "operations")
    l.max_operations = value;
  else if (name == "memory-bytes")
    l.memory_limit_bytes = value;
  else
    return false;
  return true;
}

std::uint64_t available_memory_bytes() {
  std::uint64_t available = 0;
  std::ifstream meminfo("/proc/meminfo");
  for (std::string line; std::getline(meminfo, line);)
    if (line.rfind("MemAvailable:", 0) == 0) {
      std::istringstream fields(line.substr(13));
      std::uint64_t kib = 0;
      if (fields >> kib) available = kib * 1024;
      break;
    }
  // A container's cgroup (v2) may allow less than the machine has free.
  const std::uint64_t cgroup_max = read_number("/sys/fs/cgroup/memory.max");
  if (cgroup_max > 0) {
    const std::uint64_t used = read_number("/sys/fs/cgroup/memory.current");
    const std::uint64_t room = cgroup_max > used ? cgroup_max - used : 0;
    if (available == 0 || room < available) available = room;
  }
  return available;
}

std::uint64_t memory_limit_bytes() {
  const std::uint64_t given = default_instantiation_limits().memory_limit_bytes;
  return given != 0 ? given : available_memory_bytes();
}

void require_memory(std::uint64_t bytes, const std::string& what) {
  const std::uint64_t limit = memory_limit_bytes();
  if (limit == 0 || bytes <= limit) return;
  const bool given = default_instantiation_limits().memory_limit_bytes != 0;
  throw ResourceError(
      what + " needs about " + format_bytes(bytes) + ", more than " +
      (given ? "the memory limit of " + format_bytes(limit) + " (--memory-limit)"
             : "the " + format_bytes(limit) + " of memory available now; give --memory-limit SIZE to allow more"));
}

}  // namespace poems::taskgraph
