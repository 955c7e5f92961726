// Memory every process of a direct-execution run sees at the same address.
//
// With one OS process per simulated rank (docs/direct.md, "Ranks"), the
// runtime's state (requests, messages, communicators, collectives, the
// ranks' operation outboxes) must be visible to the controller, which runs
// the engine, and to the rank processes, which run the program. The
// controller maps one shared anonymous region before it forks the ranks, so
// the region has the same address everywhere and plain pointers into it stay
// valid; a Boost.Interprocess best-fit allocator (no locks: one process runs
// at a time) hands out its memory. Containers of the runtime's state use
// SharedAlloc, which allocates there while a region is active and from the
// ordinary heap otherwise (ranks as threads, tests).
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

namespace poems::direct::detail {

// The active region has no room for an allocation: what() names the
// region's size and how to make it larger (the option the region came from).
class SharedRegionFull : public std::bad_alloc {
 public:
  explicit SharedRegionFull(std::string message) : message_(std::move(message)) {}
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  std::string message_;
};

class SharedRegion {
 public:
  // Maps `bytes` of address space (pages are committed when touched) and
  // makes it the active region. Throws std::runtime_error if it cannot,
  // naming the size and `origin` (where the size came from, how to change it).
  static void create(std::size_t bytes, const std::string& origin = "");
  // Unmaps the active region (nothing may be left in it that is used later).
  static void destroy();
  static bool active();
  static bool contains(const void* p);
  // Throws SharedRegionFull when the region is full.
  static void* allocate(std::size_t bytes);
  static void deallocate(void* p) noexcept;
  static std::size_t size();
  static std::size_t free_bytes();
};

// Allocates from the active shared region, or the heap when none is active;
// frees to wherever the block came from. Stateless, so containers of
// containers need no allocator plumbing.
template <typename T>
struct SharedAlloc {
  using value_type = T;
  SharedAlloc() noexcept = default;
  template <typename U>
  SharedAlloc(const SharedAlloc<U>&) noexcept {}
  T* allocate(std::size_t n) {
    if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
    const std::size_t bytes = n * sizeof(T);
    if (SharedRegion::active()) return static_cast<T*>(SharedRegion::allocate(bytes));
    return static_cast<T*>(::operator new(bytes));
  }
  void deallocate(T* p, std::size_t) noexcept {
    if (SharedRegion::contains(p))
      SharedRegion::deallocate(p);
    else
      ::operator delete(p);
  }
  // Bytes are left uninitialized (default-initialized) where a container
  // would zero them: a message or a collective's buffer is written in full
  // right after it is made, and zeroing it first was a pass of its own
  // (NAS FT class A, 2 ranks: 128 MiB a transpose; 273,575 -> 217,790 page
  // faults, 3.29 -> 3.17 s). Everything else is value-initialized.
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    if constexpr (sizeof...(Args) == 0 &&
                  (std::is_same_v<U, std::byte> || std::is_same_v<U, char> || std::is_same_v<U, unsigned char>))
      ::new (static_cast<void*>(p)) U;
    else
      ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
  template <typename U>
  bool operator==(const SharedAlloc<U>&) const noexcept {
    return true;
  }
};

template <typename T>
using svector = std::vector<T, SharedAlloc<T>>;
using sstring = std::basic_string<char, std::char_traits<char>, SharedAlloc<char>>;
template <typename K, typename V, typename Less = std::less<K>>
using smap = std::map<K, V, Less, SharedAlloc<std::pair<const K, V>>>;
template <typename K, typename V, typename Hash = std::hash<K>>
using sunordered_map = std::unordered_map<K, V, Hash, std::equal_to<K>, SharedAlloc<std::pair<const K, V>>>;

// An object constructed in the shared region (or on the heap without one).
template <typename T, typename... Args>
T* shared_new(Args&&... args) {
#if defined(__SANITIZE_ADDRESS__)
  // Heap memory an object in the shared region owns (the Runtime's copy of
  // the arguments) is reachable only through the region, which
  // LeakSanitizer does not scan: it is no leak.
  __lsan::ScopedDisabler not_a_leak;
#endif
  SharedAlloc<T> a;
  T* p = a.allocate(1);
  try {
    return ::new (static_cast<void*>(p)) T(std::forward<Args>(args)...);
  } catch (...) {
    a.deallocate(p, 1);
    throw;
  }
}
template <typename T>
void shared_delete(T* p) noexcept {
  if (!p) return;
  p->~T();
  SharedAlloc<T>().deallocate(p, 1);
}

}  // namespace poems::direct::detail
