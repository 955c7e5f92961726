#include "poems/measure/host_caches.h"

#include <hwloc.h>

#include <memory>
#include <stdexcept>

namespace poems::measure {

namespace {

struct TopologyDeleter {
  void operator()(hwloc_topology* t) const { hwloc_topology_destroy(t); }
};

std::string size_text(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) bytes /= 1024, ++u;
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, bytes == static_cast<long long>(bytes) ? "%.0f %s" : "%.1f %s", bytes, units[u]);
  return buffer;
}

}  // namespace

std::vector<CacheLevel> host_caches() {
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) throw std::runtime_error("hwloc: cannot initialise a topology");
  std::unique_ptr<hwloc_topology, TopologyDeleter> topology(raw);
  if (hwloc_topology_load(raw) != 0) throw std::runtime_error("hwloc: cannot read this host's topology");
  // Walk from the first core's first processing unit up to the machine:
  // every data or unified cache on the way, innermost first.
  hwloc_obj_t pu = hwloc_get_obj_by_type(raw, HWLOC_OBJ_PU, 0);
  if (!pu) throw std::runtime_error("hwloc: this host has no processing unit");
  std::vector<CacheLevel> levels;
  for (hwloc_obj_t o = pu->parent; o; o = o->parent) {
    if (!hwloc_obj_type_is_dcache(o->type) || !o->attr) continue;
    const auto& c = o->attr->cache;
    if (c.type == HWLOC_OBJ_CACHE_INSTRUCTION || c.size == 0) continue;
    CacheLevel level;
    level.depth = static_cast<int>(c.depth);
    level.bytes = static_cast<double>(c.size);
    level.line_bytes = static_cast<int>(c.linesize);
    level.associativity = c.associativity;
    const int cores = hwloc_get_nbobjs_inside_cpuset_by_type(raw, o->cpuset, HWLOC_OBJ_CORE);
    level.shared_by_cores = cores > 0 ? cores : 1;
    levels.push_back(level);
  }
  if (levels.empty()) throw std::runtime_error("hwloc: found no data cache on this host");
  return levels;
}

std::string describe(const std::vector<CacheLevel>& levels) {
  std::string out;
  for (const CacheLevel& l : levels) {
    if (!out.empty()) out += ", ";
    out += l.name() + " " + size_text(l.bytes) + " (";
    if (l.associativity > 0) out += std::to_string(l.associativity) + "-way, ";
    if (l.associativity == -1) out += "fully associative, ";
    if (l.line_bytes > 0) out += std::to_string(l.line_bytes) + " B lines, ";
    out += l.shared_by_cores > 1 ? "shared by " + std::to_string(l.shared_by_cores) + " cores)" : "per core)";
  }
  return out;
}

}  // namespace poems::measure
