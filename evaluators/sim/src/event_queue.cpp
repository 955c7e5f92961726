#include "event_queue.h"

#include "poems/base/huge_pages.h"

namespace poems::sim::detail {

namespace {
constexpr std::size_t kChunkBytes = std::size_t{1} << 21;  // one huge page of blocks
}

template <class E>
RadixQueue<E>::~RadixQueue() {
  for (void* c : chunks_) base::deallocate_huge(c, kChunkBytes, kChunkBytes);
}

template <class E>
void RadixQueue<E>::append_block(Bucket& k) {
  Block* b = free_;
  if (b != nullptr) {
    free_ = b->next;
  } else {
    // Carved from the chunk one at a time: threading a whole chunk into the
    // free list would write every page of it, 2 MiB per run however small
    // the run (a collective on 2 ranks, a recommender's many short runs).
    if (unused_ == unused_end_) {
      chunks_.reserve(chunks_.size() + 1);  // so the push below cannot throw and leak the chunk
      auto* chunk = static_cast<Block*>(base::allocate_huge(kChunkBytes, kChunkBytes));
      chunks_.push_back(chunk);
      unused_ = chunk;
      unused_end_ = chunk + kChunkBytes / sizeof(Block);
    }
    b = unused_++;
  }
  b->next = nullptr;
  if (k.tail != nullptr)
    k.tail->next = b;
  else
    k.head = b;
  k.tail = b;
  k.tail_size = 0;
}

template <class E>
typename RadixQueue<E>::Block* RadixQueue<E>::next_block() {
  Bucket& zero = buckets_[0];
  front_ = 0;
  if (zero.head != nullptr) {
    if (zero.head != zero.tail) {  // a full block read: on to the next
      Block* h = zero.head;
      zero.head = h->next;
      free_block(h);
      return zero.head;
    }
    zero.tail_size = 0;  // empty, keeping its block
  }
  refill();
  return run_.empty() ? zero.head : nullptr;
}

template <class E>
void RadixQueue<E>::insert_into_run(const E& e) {
  auto at = std::upper_bound(run_.begin() + static_cast<std::ptrdiff_t>(run_front_), run_.end(), e,
                             [](const E& a, const E& b) { return a.time < b.time; });
  run_.insert(at, e);
  ++run_end_;
}

// Bucket 0 is empty: move the lowest non-empty bucket down, relative to its
// minimum. Every event lands in a lower bucket, so the one being read is not
// written.
template <class E>
void RadixQueue<E>::refill() {
  run_.clear();  // read to its end
  run_front_ = run_end_ = 0;
  int w = 0;
  while (occupied_[w] == 0) ++w;  // one is set: the queue is not empty
  const int b = w * 64 + std::countr_zero(occupied_[w]);
  occupied_[w] &= occupied_[w] - 1;
  Bucket& source = buckets_[b];
  last_ = least_[b];
  least_[b] = ~std::uint64_t{0};
  if (source.head == source.tail && source.tail_size == 1) {  // one event: no copy, bucket 0's block goes to b
    std::swap(buckets_[0], source);
    return;
  }
  if (source.head == source.tail && source.tail_size <= kRunMax) {
    // A few events: sorted once into the run (insertion sort, stable).
    const E* events = source.head->events;
    for (std::uint32_t i = 0; i < source.tail_size; ++i) {
      const E e = events[i];
      std::size_t j = run_.size();
      run_.push_back(e);
      for (; j > 0 && run_[j - 1].time > e.time; --j) run_[j] = run_[j - 1];
      run_[j] = e;
    }
    run_end_ = run_.size();
    source.tail_size = 0;
    return;
  }
  const Bucket from = source;
  for (Block* blk = from.head; blk != nullptr;) {
    const std::uint32_t n = blk == from.tail ? from.tail_size : kBlockEvents;
    for (std::uint32_t i = 0; i < n; ++i) place(blk->events[i]);  // in order: FIFO among equal times holds
    Block* next = blk->next;
    if (blk != from.head) free_block(blk);
    blk = next;
  }
  from.head->next = nullptr;  // b keeps its first block, empty
  source = Bucket{from.head, from.head, 0};
}

template class RadixQueue<Event>;
template class RadixQueue<StampedEvent>;

}  // namespace poems::sim::detail
