#include "window.h"

#include <algorithm>

#include "poems/base/huge_pages.h"

namespace poems::sim::detail {

namespace {
constexpr std::size_t kHugePage = std::size_t{1} << 21;
constexpr std::size_t kLargestChunk = std::size_t{1} << 26;
}  // namespace

WindowMemory::~WindowMemory() {
  for (const Chunk& c : chunks_) base::deallocate_huge(c.data, c.bytes, kHugePage);
}

// Chunks double from 2 MiB up to 64 MiB (a run reading 10^8 operations up
// front does not make 10^4 of them, a small run does not hold 64 MiB).
void* WindowMemory::carve_new_chunk(std::size_t bytes) {
  const std::size_t size = std::max(next_chunk_, (bytes + kHugePage - 1) / kHugePage * kHugePage);
  next_chunk_ = std::min(2 * next_chunk_, kLargestChunk);
  chunks_.reserve(chunks_.size() + 1);  // so the push below cannot throw and leak the chunk
  auto* data = static_cast<char*>(base::allocate_huge(size, kHugePage));
  chunks_.push_back(Chunk{data, size});
  cursor_ = data + bytes;
  end_ = data + size;
  return data;
}

void* WindowMemory::allocate_large(std::size_t bytes) { return ::operator new (bytes, std::align_val_t{64}); }

void WindowMemory::deallocate_large(void* p, std::size_t bytes) { ::operator delete (p, bytes, std::align_val_t{64}); }

}  // namespace poems::sim::detail
