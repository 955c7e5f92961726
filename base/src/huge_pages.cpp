#include "poems/base/huge_pages.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <new>

namespace poems::base {

namespace {
constexpr std::size_t kHugePage = std::size_t{1} << 21;
}

void* allocate_huge(std::size_t bytes, std::size_t alignment) {
  if (bytes < kHugePage) return ::operator new (bytes, std::align_val_t{alignment});
  const std::size_t size = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  void* p = std::aligned_alloc(std::max(alignment, kHugePage), size);
  if (!p) throw std::bad_alloc();
  advise_huge_pages(p, size);
  return p;
}

void deallocate_huge(void* p, std::size_t bytes, std::size_t alignment) {
  if (bytes < kHugePage)
    ::operator delete (p, bytes, std::align_val_t{alignment});
  else
    std::free(p);
}

void advise_huge_pages(void* data, std::size_t bytes) {
  auto begin = (reinterpret_cast<std::uintptr_t>(data) + kHugePage - 1) / kHugePage * kHugePage;
  auto end = (reinterpret_cast<std::uintptr_t>(data) + bytes) / kHugePage * kHugePage;
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);  // a hint only
}

}  // namespace poems::base
