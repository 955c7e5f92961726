#include "shared_memory.h"

#include <sys/mman.h>

#include <boost/interprocess/indexes/iset_index.hpp>
#include <boost/interprocess/managed_external_buffer.hpp>
#include <boost/interprocess/mem_algo/rbtree_best_fit.hpp>
#include <boost/interprocess/sync/mutex_family.hpp>
#include <cstdio>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>

namespace poems::direct::detail {

namespace {

namespace bi = boost::interprocess;
// No locking: only one process of a run executes at any time.
using Segment = bi::basic_managed_external_buffer<char, bi::rbtree_best_fit<bi::null_mutex_family>, bi::iset_index>;

// The handle is private to each process; after fork every rank holds a copy
// naming the same segment manager, which lives inside the region.
struct Region {
  char* base = nullptr;
  std::size_t bytes = 0;
  std::optional<Segment> segment;
};
Region g_region;

std::string mib_text(std::size_t bytes) {
  char text[64];
  std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / 1048576.0);
  return text;
}

}  // namespace

void SharedRegion::create(std::size_t bytes, const std::string& origin) {
  if (g_region.base) throw std::logic_error("a shared region is active already");
  const std::string what = mib_text(bytes) + " of shared memory for the ranks' MPI state and messages";
  const std::string why = origin.empty() ? std::string() : " (" + origin + ")";
  if (bytes < (std::size_t{1} << 20)) throw std::runtime_error(what + " are too few: at least 1 MiB is needed" + why);
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) throw std::runtime_error("cannot map " + what + ": " + std::strerror(errno) + why);
  g_region.base = static_cast<char*>(p);
  g_region.bytes = bytes;
  g_region.segment.emplace(bi::create_only, p, bytes);
}

void SharedRegion::destroy() {
  if (!g_region.base) return;
  g_region.segment.reset();
  ::munmap(g_region.base, g_region.bytes);
  g_region = Region{};
}

bool SharedRegion::active() { return g_region.base != nullptr; }

bool SharedRegion::contains(const void* p) {
  const char* c = static_cast<const char*>(p);
  return g_region.base && c >= g_region.base && c < g_region.base + g_region.bytes;
}

void* SharedRegion::allocate(std::size_t bytes) {
  void* p = g_region.segment->allocate(bytes == 0 ? 1 : bytes, std::nothrow);
  if (!p)
    throw SharedRegionFull("the " + mib_text(g_region.bytes) +
                           " of shared memory for the ranks' MPI state and messages in flight are full (" +
                           std::to_string(bytes) + " more bytes asked, " +
                           mib_text(g_region.segment->get_free_memory()) +
                           " free); give --memory-limit SIZE for a larger region");
  return p;
}

void SharedRegion::deallocate(void* p) noexcept { g_region.segment->deallocate(p); }

std::size_t SharedRegion::size() { return g_region.bytes; }

std::size_t SharedRegion::free_bytes() { return g_region.segment ? g_region.segment->get_free_memory() : 0; }

}  // namespace poems::direct::detail
