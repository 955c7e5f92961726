// Storage for the per-rank operation windows: a minimal vector of POD records
// (16 bytes: pointer, size, capacity) whose memory comes from a WindowMemory
// passed to each call that allocates, so a rank's record stays one cache line.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <type_traits>
#include <vector>

namespace poems::sim::detail {

// Where windows live. Recycling (lazily read windows, which come and go by
// the million: a collective's rank holds a few slots, then none): requests up
// to 64 KiB are rounded up to a power of two and kept on one free list per
// size, carved from 2 MiB chunks; larger ones go to the heap. Otherwise
// (windows read in full up front): exact sizes carved in rank order from the
// chunks, never freed before the end, so ranks lie in memory in the order
// collectives touch them. No virtual call on either path (libstdc++'s pool
// resource cost ~190 instructions per deallocation here).
class WindowMemory {
 public:
  explicit WindowMemory(bool recycle) : recycle_(recycle) {}
  ~WindowMemory();
  WindowMemory(const WindowMemory&) = delete;
  WindowMemory& operator=(const WindowMemory&) = delete;

  // The capacity in bytes a request for `bytes` receives.
  std::size_t rounded(std::size_t bytes) const {
    if (!recycle_ || bytes > kLargest) return (bytes + 63) & ~std::size_t{63};
    return bytes <= 16 ? 16 : std::bit_ceil(bytes);
  }
  // Windows now held that came from the heap (over 64 KiB, recycling).
  std::size_t large_in_use() const { return large_in_use_; }
  // `bytes` must be a value rounded() returned.
  void* allocate(std::size_t bytes) {
    if (recycle_ && bytes <= kLargest) {
      const int c = size_class(bytes);
      if (FreeBlock* b = free_[c]) {
        free_[c] = b->next;
        return b;
      }
    } else if (recycle_) {
      void* p = allocate_large(bytes);
      ++large_in_use_;
      return p;
    }
    return carve(bytes);
  }
  void deallocate(void* p, std::size_t bytes) {
    if (!recycle_) return;  // the chunks go at the end
    if (bytes > kLargest) {
      --large_in_use_;
      return deallocate_large(p, bytes);
    }
    const int c = size_class(bytes);
    free_[c] = new (p) FreeBlock{free_[c]};
  }

 private:
  static constexpr std::size_t kLargest = std::size_t{1} << 16;
  static constexpr int kClasses = 13;  // 16 B .. 64 KiB
  // `bytes` a power of two of 16 .. kLargest (the or bounds the class for the compiler too).
  static int size_class(std::size_t bytes) { return std::countr_zero(bytes | kLargest) - 4; }
  void* carve(std::size_t bytes) {
    // Blocks of 64 bytes and more start on a cache line (a slot never straddles two).
    const std::uintptr_t align = bytes >= 64 ? 64 : 16;
    const std::uintptr_t at = (reinterpret_cast<std::uintptr_t>(cursor_) + align - 1) & ~(align - 1);
    if (at + bytes > reinterpret_cast<std::uintptr_t>(end_)) return carve_new_chunk(bytes);
    cursor_ = reinterpret_cast<char*>(at + bytes);
    return reinterpret_cast<void*>(at);
  }
  [[gnu::noinline]] void* carve_new_chunk(std::size_t bytes);
  [[gnu::noinline]] static void* allocate_large(std::size_t bytes);
  [[gnu::noinline]] static void deallocate_large(void* p, std::size_t bytes);

  struct FreeBlock {
    FreeBlock* next;
  };
  bool recycle_;
  char* cursor_ = nullptr;
  char* end_ = nullptr;
  std::size_t next_chunk_ = std::size_t{1} << 21;
  struct Chunk {
    void* data;
    std::size_t bytes;
  };
  std::vector<Chunk> chunks_;
  FreeBlock* free_[kClasses] = {};
  std::size_t large_in_use_ = 0;
};

template <typename T>
class Window {
  static_assert(std::is_trivially_copyable_v<T> && std::has_single_bit(sizeof(T)));

 public:
  T* data() { return data_; }
  const T* data() const { return data_; }
  std::uint32_t size() const { return size_; }
  std::uint32_t capacity() const { return cap_; }
  bool empty() const { return size_ == 0; }
  T& operator[](std::size_t i) { return data_[i]; }
  const T& operator[](std::size_t i) const { return data_[i]; }
  T& back() { return data_[size_ - 1]; }
  const T& back() const { return data_[size_ - 1]; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }

  void reserve(WindowMemory& m, std::size_t n) {
    if (n > cap_) grow(m, n);
  }
  void push_back(WindowMemory& m, const T& v) {
    if (size_ == cap_) [[unlikely]]
      grow(m, size_ < 2 ? 2 : 2 * std::size_t{size_});
    data_[size_++] = v;
  }
  // After reserve().
  T& append_unchecked() { return data_[size_++]; }
  void clear() { size_ = 0; }
  void release(WindowMemory& m) {
    if (data_) m.deallocate(data_, std::size_t{cap_} * sizeof(T));
    data_ = nullptr;
    size_ = cap_ = 0;
  }
  void erase_front(std::uint32_t n) {
    std::memmove(static_cast<void*>(data_), data_ + n, std::size_t{size_ - n} * sizeof(T));
    size_ -= n;
  }
  void swap(Window& other) {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    std::swap(cap_, other.cap_);
  }

 private:
  [[gnu::noinline]] void grow(WindowMemory& m, std::size_t n) {
    const std::size_t bytes = m.rounded(n * sizeof(T));
    T* p = static_cast<T*>(m.allocate(bytes));
    if (size_ != 0) std::memcpy(static_cast<void*>(p), data_, std::size_t{size_} * sizeof(T));
    if (data_) m.deallocate(data_, std::size_t{cap_} * sizeof(T));
    data_ = p;
    cap_ = static_cast<std::uint32_t>(bytes / sizeof(T));
  }

  T* data_ = nullptr;
  std::uint32_t size_ = 0;
  std::uint32_t cap_ = 0;
};

}  // namespace poems::sim::detail
