// Memory for big arrays read in a scattered order (the simulator's records,
// an encoded schedule's streams), on transparent huge pages where the kernel
// allows it.
#pragma once

#include <cstddef>
#include <vector>

namespace poems::base {

// Blocks of 2 MiB and more backed by transparent huge pages where the kernel
// allows it (smaller ones come from the heap): the simulator touches millions
// of per-rank records in a scattered order, and with 4 KiB pages most of
// those touches would be TLB misses, each a page walk (two-dimensional under
// a hypervisor). The advice must come before the first touch: memory already
// faulted in stays on small pages.
void advise_huge_pages(void* data, std::size_t bytes);
void* allocate_huge(std::size_t bytes, std::size_t alignment);
void deallocate_huge(void* p, std::size_t bytes, std::size_t alignment);

// The same for std::vector, stateless (the engine's per-rank records and
// matching-queue pool, an ExplicitSchedule's code).
template <typename T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>&) {}
  T* allocate(std::size_t n) { return static_cast<T*>(allocate_huge(n * sizeof(T), alignof(T))); }
  void deallocate(T* p, std::size_t n) { deallocate_huge(p, n * sizeof(T), alignof(T)); }
  friend bool operator==(const HugePageAllocator&, const HugePageAllocator&) { return true; }
};
template <typename T>
using HugeVector = std::vector<T, HugePageAllocator<T>>;

}  // namespace poems::base
