// The event queue of the `matched` semantics: a radix heap of POD events
// (16 bytes; the `loggopsim` semantics' 24-byte StampedEvent, with its
// stamp, is defined here too, and queued by CalendarQueue in
// calendar_queue.h).
// Simulated time never goes back (every event is scheduled at or after the
// current time), so a monotone radix heap applies. Its digits are 4 bits
// wide: an event whose time first differs from the last extracted time in
// digit L (bits 4L .. 4L+3) goes to bucket 16L + its value of that digit,
// and an event at the last extracted time to bucket 0. Buckets are in time
// order; refilling the lowest one moves each of its events down at least one
// digit, so an event moves at most once per digit of its distance ahead
// (with one bit per bucket, once per bit: redistribution took 386 M of the
// 1.62 G instructions of a 32x32 wavefront run, 282 M with 4-bit digits).
// Pushes are an append, and events of equal time always share a bucket and
// come out in the order they were pushed (FIFO), the simulator's documented
// tie-break.
// A refilled bucket of few events is sorted into a run instead (below): the
// moves it saves were most of refill's work on Sweep3D.
//
// A bucket is a list of 4 KiB blocks from one shared free list, not a
// vector: growing vectors copied every event again on each doubling and
// touched fresh pages each time (half the time of a push in a 2^17-rank
// broadcast), while blocks go back to the list as soon as they are read. A
// drained bucket keeps one block, so the next push needs no allocation.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <iterator>
#include <vector>

namespace poems::sim::detail {

struct Event {
  std::uint64_t time;  // picoseconds
  std::uint64_t key;   // owner rank << 32 | low 32 bits of the operation's rank-local index
};

// An event of the `loggopsim` semantics: LogGOPSim orders equal times by the
// stamp an event got when it was first queued (a re-queued event keeps it).
struct StampedEvent {
  std::uint64_t time;
  std::uint64_t key;
  std::uint64_t stamp;
};

// The radix heap over any POD event with a `time` (Event, StampedEvent).
template <class E>
class RadixQueue {
 public:
  RadixQueue() {
    std::fill(std::begin(least_), std::end(least_), ~std::uint64_t{0});
    run_.reserve(2 * kRunMax);
  }
  ~RadixQueue();
  RadixQueue(const RadixQueue&) = delete;
  RadixQueue& operator=(const RadixQueue&) = delete;

  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }

  // `e.time` must not be earlier than the last popped event's time.
  void push(E e) {
    if (run_front_ != run_end_ && e.time <= run_[run_end_ - 1].time) [[unlikely]]
      insert_into_run(e);
    else
      place(e);
    ++size_;
  }

  // Events already known to come next, in order: `count` of them from the
  // returned one (those of the current block only). Lets the engine prefetch
  // their state.
  const E* upcoming(std::size_t& count) const {
    if (run_front_ != run_end_) {
      count = run_end_ - run_front_;
      return run_.data() + run_front_;
    }
    const Block* h = buckets_[0].head;
    if (h == nullptr) {
      count = 0;
      return nullptr;
    }
    count = head_size() - front_;
    return h->events + front_;
  }

  // The event pop() returns next if nothing is pushed before it (nullptr
  // when empty): bucket 0's next event, else the lowest occupied bucket's
  // earliest, the first pushed among its equal earliest times, which its
  // refill puts first in bucket 0. The engine only prefetches with it.
  const E* peek() const {
    if (run_front_ != run_end_) return run_.data() + run_front_;
    const Bucket& zero = buckets_[0];
    if (zero.head != nullptr) {
      if (front_ < head_size()) return zero.head->events + front_;
      if (zero.head != zero.tail) return zero.head->next->events;
    }
    for (int w = 0; w < kBitmapWords; ++w)
      if (occupied_[w] != 0) return least_at_[w * 64 + std::countr_zero(occupied_[w])];
    return nullptr;
  }

  // Not empty().
  E pop() {
    --size_;
    if (run_front_ != run_end_) return run_[run_front_++];
    Block* h = buckets_[0].head;
    if (h == nullptr || front_ == head_size()) [[unlikely]] {
      h = next_block();
      if (h == nullptr) return run_[run_front_++];  // refill sorted a small bucket into the run
    }
    return h->events[front_++];
  }

 private:
  // A 4 KiB block: a 16-byte header (events of 16 bytes never straddle a
  // cache line) and as many events as fit after it.
  static constexpr std::uint32_t kBlockEvents = static_cast<std::uint32_t>((4096 - 16) / sizeof(E));
  struct Block {
    Block* next;
    std::uint64_t unused;
    E events[kBlockEvents];
  };
  static_assert(sizeof(Block) <= 4096 && 4096 - sizeof(Block) < sizeof(E));
  // Every block but the tail is full, so the one fill count a push needs
  // lives here, not in a block's header (a second cache line per push).
  struct Bucket {
    Block* head = nullptr;
    Block* tail = nullptr;
    // Events in the tail block; kBlockEvents before the bucket's first push,
    // so that push appends a block.
    std::uint32_t tail_size = kBlockEvents;
  };
  std::uint32_t head_size() const {
    const Bucket& zero = buckets_[0];
    return zero.head == zero.tail ? zero.tail_size : kBlockEvents;
  }

  static constexpr int kDigitBits = 4;
  static constexpr int kBuckets = (64 / kDigitBits) << kDigitBits;  // 16 digits of 16 values
  static constexpr int kBitmapWords = kBuckets / 64;

  int bucket(std::uint64_t t) const {
    if (t == last_) return 0;
    const int digit = (63 - std::countl_zero(t ^ last_)) / kDigitBits;
    return (digit << kDigitBits) | static_cast<int>((t >> (digit * kDigitBits)) & ((1u << kDigitBits) - 1));
  }
  void place(const E& e) {
    const int b = bucket(e.time);
    Bucket& k = buckets_[b];
    if (k.tail_size == kBlockEvents) [[unlikely]]
      append_block(k);
    k.tail->events[k.tail_size++] = e;
    if (b != 0) {
      occupied_[b >> 6] |= std::uint64_t{1} << (b & 63);
      if (e.time < least_[b]) {
        least_[b] = e.time;
        least_at_[b] = k.tail->events + k.tail_size - 1;
      }
    }
  }
  [[gnu::noinline]] void append_block(Bucket& k);
  // An event no later than the run's last: into the run, after those of its
  // time (FIFO).
  [[gnu::noinline]] void insert_into_run(const E& e);
  void free_block(Block* b) {
    b->next = free_;
    free_ = b;
  }
  // Bucket 0's current block is used up: its next block, or (bucket 0 is
  // empty) the lowest non-empty bucket moved down.
  [[gnu::noinline]] Block* next_block();
  void refill();

  // The run: the lowest bucket's events, when it held few (kRunMax), sorted
  // by time (stably) by refill instead of moved down the digits one by one
  // (an event moved about once per digit of its distance ahead; most buckets
  // refilled hold a few events of distinct times). It is read from
  // run_front_; while it is, every event in the buckets is later than its
  // last (pushes up to that time go into the run), bucket 0 is empty and the
  // buckets stay placed relative to last_, the run's first time; the next
  // refill clears it.
  static constexpr std::uint32_t kRunMax = 32;
  std::vector<E> run_;  // its storage; the run is run_[run_front_ .. run_end_)
  std::size_t run_front_ = 0, run_end_ = 0;
  Bucket buckets_[kBuckets];
  std::uint64_t occupied_[kBitmapWords] = {};  // bit b set: bucket b (not 0) holds events
  std::uint64_t least_[kBuckets];              // per bucket: its earliest time (~0 when empty)
  const E* least_at_[kBuckets] = {};           // per occupied bucket: where its earliest event is (peek)
  std::uint32_t front_ = 0;                    // next event in bucket 0's head block
  std::size_t size_ = 0;
  std::uint64_t last_ = 0;
  Block* free_ = nullptr;
  // Blocks never used yet: the rest of the newest chunk, handed out in
  // order so a small run touches only the blocks it uses.
  Block* unused_ = nullptr;
  Block* unused_end_ = nullptr;
  std::vector<void*> chunks_;  // where blocks come from, 2 MiB at a time
};

// The radix heap for the matched semantics: equal times come out FIFO.
using EventQueue = RadixQueue<Event>;

// The `loggopsim` semantics' queue is CalendarQueue (calendar_queue.h).

}  // namespace poems::sim::detail
