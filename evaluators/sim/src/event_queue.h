// The simulator's single event queue: a radix heap of 16-byte POD events.
// Simulated time never goes back (every event is scheduled at or after the
// current time), so a monotone radix heap applies: bucket b holds events
// whose time first differs from the last extracted time in bit b-1. Pushes
// are an append, extraction is amortized O(1) with sequential memory access,
// and events of equal time come out in the order they were pushed (FIFO),
// which is the simulator's documented tie-break.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <iterator>
#include <vector>

#include "huge_pages.h"

namespace poems::sim::detail {

struct Event {
  std::uint64_t time;  // picoseconds
  std::uint64_t key;   // owner rank << 32 | low 32 bits of the operation's rank-local index
};

class EventQueue {
 public:
  EventQueue() { std::fill(std::begin(least_), std::end(least_), ~std::uint64_t{0}); }
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  void reserve(std::size_t n) { buckets_[0].reserve(n); }

  // `e.time` must not be earlier than the last popped event's time.
  void push(Event e) {
    const int b = bucket(e.time);
    buckets_[b].push_back(e);
    if (b != 0) {
      occupied_ |= std::uint64_t{1} << (b - 1);
      if (e.time < least_[b]) least_[b] = e.time;
    }
    ++size_;
  }

  // The events already known to come next, in order (same time, queued):
  // `count` of them from the returned one. Lets the engine prefetch their state.
  const Event* upcoming(std::size_t& count) const {
    count = buckets_[0].size() - front_;
    return buckets_[0].data() + front_;
  }

  Event pop() {
    if (front_ == buckets_[0].size()) refill();
    --size_;
    return buckets_[0][front_++];
  }

 private:
  int bucket(std::uint64_t t) const { return t == last_ ? 0 : 64 - std::countl_zero(t ^ last_); }

  // Bucket 0 is used up: move the lowest non-empty bucket down, relative to its minimum.
  void refill() {
    buckets_[0].clear();
    front_ = 0;
    const int b = std::countr_zero(occupied_) + 1;
    occupied_ &= occupied_ - 1;
    HugeVector<Event>& from = buckets_[b];
    last_ = least_[b];
    least_[b] = ~std::uint64_t{0};
    if (from.size() == 1) {  // common when times are spread out: no redistribution
      buckets_[0].push_back(from[0]);
    } else {
      for (const Event& e : from) {  // keeps FIFO order among equal times
        const int to = bucket(e.time);
        buckets_[to].push_back(e);
        if (to != 0) {
          occupied_ |= std::uint64_t{1} << (to - 1);
          if (e.time < least_[to]) least_[to] = e.time;
        }
      }
    }
    from.clear();
  }

  HugeVector<Event> buckets_[65];
  std::uint64_t occupied_ = 0;  // bit b-1 set: bucket b (1..64) holds events
  std::uint64_t least_[65];     // per bucket: its earliest time (~0 when empty)
  std::size_t front_ = 0;
  std::size_t size_ = 0;
  std::uint64_t last_ = 0;
};

}  // namespace poems::sim::detail
