// The event queue of the `loggopsim` semantics: a calendar (bucket) queue in
// the order of LogGOPSim's priority queue, (time, stamp) ascending. Stamps
// are distinct (an event is queued once at a time; a re-queued one keeps its
// old stamp), so the order is total and any correct sort gives it.
//
// Time is cut into buckets of 2^width ps. A circular array of
// 2^kSlotBits slots holds the buckets of the horizon after the current one,
// each an unsorted list of pooled nodes (a push is a prepend, whatever its
// time and stamp) with a two-level bitmap of the occupied slots. The current
// bucket is the run: a sorted array read from its front. When it is
// drained, the next occupied slot is found in the bitmap and its events are
// copied into the run and sorted (most buckets hold a few events, mostly in
// order). This happens at once, in the pop that drains the run, so that
// peek() and upcoming() show what comes next (the engine prefetches
// with them). An event pushed into the current bucket or before it — a late
// push, or one earlier than the last popped time, which LogGOPSim may queue
// when an operation is freed on a CPU whose clock is behind — is inserted
// into the run in order: it comes before everything in the slots. Events
// beyond the horizon wait in a binary heap by time and join the run when
// their bucket becomes the current one.
//
// The width adapts (adapt()): buckets that hold many events cost sorting
// and insertions, nearly empty ones a bitmap search each; it starts at 2^16
// ps (65 ns) and settles where buckets hold 2 to 8 events on average. The
// horizon is 2^14 buckets. docs/PERFORMANCE.md has the measurements.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

#include "event_queue.h"

namespace poems::sim::detail {

template <int kSlotBits = 14>
class CalendarQueue {
  static_assert(kSlotBits >= 12 && kSlotBits <= 18, "two bitmap levels: 2^12 .. 2^18 slots");

 public:
  // Buckets of 2^width_bits ps; `adapt`: narrower or wider as the buckets
  // taken hold many or few events.
  explicit CalendarQueue(int width_bits = 16, bool adapt = true)
      : slots_(kSlots), run_(256), width_(width_bits), adapt_(adapt) {}
  CalendarQueue(const CalendarQueue&) = delete;
  CalendarQueue& operator=(const CalendarQueue&) = delete;

  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }

  [[gnu::always_inline]] void push(const StampedEvent& e) {
    ++size_;
    place(e);
  }

  // Not empty(). The next bucket is taken as soon as the run is drained, so
  // that peek() and upcoming() know what comes next.
  [[gnu::always_inline]] StampedEvent pop() {
    if (front_ == end_) [[unlikely]]  // the queue ran dry and was pushed to again
      advance();
    --size_;
    const StampedEvent e = run_[front_++];
    if (front_ == end_ && size_ != 0) [[unlikely]]
      advance();
    return e;
  }

  // The event pop() returns next if nothing is pushed before it; nullptr
  // when empty, or when the queue ran dry and every push since went after
  // the current bucket (until the next pop). The engine only prefetches
  // with it.
  const StampedEvent* peek() const { return front_ != end_ ? run_.data() + front_ : nullptr; }

  // Events known to come next, in order (the current bucket's run).
  const StampedEvent* upcoming(std::size_t& count) const {
    count = end_ - front_;
    return run_.data() + front_;
  }

  // The bucket width now, log2 of picoseconds.
  int width_bits() const { return width_; }

 private:
  [[gnu::always_inline]] void place(const StampedEvent& e) {
    const std::uint64_t b = e.time >> width_;
    if (b <= current_) [[unlikely]]
      return insert_into_run(e);
    if (b - current_ >= kSlots) [[unlikely]]
      return push_far(e);
    const auto at = static_cast<std::uint32_t>(b & kSlotMask);
    std::uint32_t n = free_;
    if (n == kNil) [[unlikely]]
      n = grow();
    free_ = nodes_[n].next;
    Slot& slot = slots_[at];
    nodes_[n] = Node{e, slot.head};
    slot.head = n;
    ++slot.count;
    words_[at >> 6] |= std::uint64_t{1} << (at & 63);
    summary_[at >> 12] |= std::uint64_t{1} << ((at >> 6) & 63);
  }

  static constexpr std::uint64_t kSlots = std::uint64_t{1} << kSlotBits;
  static constexpr std::uint64_t kSlotMask = kSlots - 1;
  static constexpr std::uint32_t kNil = ~std::uint32_t{0};
  static constexpr int kWords = 1 << (kSlotBits - 6);
  static constexpr int kSummaryWords = kWords >= 64 ? kWords / 64 : 1;
  // Free room before a fresh run: an event pushed before all of the run
  // (earlier than its bucket) is written in front of it, not shifted in.
  static constexpr std::size_t kHeadroom = 8;
  struct Node {
    StampedEvent e;
    std::uint32_t next;
  };
  struct Slot {
    std::uint32_t head = kNil;  // the newest event's node
    std::uint32_t count = 0;
  };
  // One 128-bit comparison (a compare and a subtract with borrow), not two
  // branches: within a bucket, times and stamps are in no predictable order.
  static bool before(const StampedEvent& a, const StampedEvent& b) {
    using Key = unsigned __int128;
    return (Key{a.time} << 64 | a.stamp) < (Key{b.time} << 64 | b.stamp);
  }
  static bool later_time(const StampedEvent& a, const StampedEvent& b) { return a.time > b.time; }

  void reserve_run(std::size_t n) {
    if (n > run_.size()) [[unlikely]]
      run_.resize(std::max(n, 2 * run_.size()));
  }

  // An event of the current bucket or earlier: into the run, in order.
  [[gnu::noinline]] void insert_into_run(const StampedEvent& e) {
    insert_in_order(e);
    if (adapt_ && ++events_ == 8 * kAdaptEvery) [[unlikely]]
      adapt();
  }
  void insert_in_order(const StampedEvent& e) {
    if (front_ == end_) {
      front_ = end_ = kHeadroom;
      reserve_run(end_ + 1);
      run_[end_++] = e;
      return;
    }
    if (before(run_[end_ - 1], e)) {
      reserve_run(end_ + 1);
      run_[end_++] = e;
      return;
    }
    if (front_ > 0 && before(e, run_[front_])) {
      run_[--front_] = e;
      return;
    }
    reserve_run(end_ + 1);
    std::size_t j = end_++;
    for (; j > front_ && before(e, run_[j - 1]); --j) run_[j] = run_[j - 1];
    run_[j] = e;
  }

  [[gnu::noinline]] void push_far(const StampedEvent& e) {
    far_.push_back(e);
    std::push_heap(far_.begin(), far_.end(), later_time);
  }

  [[gnu::noinline]] std::uint32_t grow() {
    const auto old = static_cast<std::uint32_t>(nodes_.size());
    const std::uint32_t add = std::max<std::uint32_t>(1024, old);
    nodes_.resize(old + add);
    for (std::uint32_t i = old; i + 1 < old + add; ++i) nodes_[i].next = i + 1;
    nodes_[old + add - 1].next = free_;
    free_ = old;
    return old;
  }

  // The first occupied slot after the current one (circularly), as a
  // distance ahead in [1, kSlots), or 0 if none.
  std::uint64_t next_occupied() const {
    const auto from = static_cast<std::uint32_t>((current_ + 1) & kSlotMask);
    std::uint32_t at = find_from(from);
    if (at == kNil && from != 0) at = find_from(0);
    if (at == kNil) return 0;
    return (at - current_) & kSlotMask;
  }
  // The first occupied slot at or after `from` (no wrap), or kNil.
  std::uint32_t find_from(std::uint32_t from) const {
    std::uint32_t w = from >> 6;
    const std::uint64_t bits = words_[w] & (~std::uint64_t{0} << (from & 63));
    if (bits != 0) return (w << 6) | static_cast<std::uint32_t>(std::countr_zero(bits));
    if (++w >= static_cast<std::uint32_t>(kWords)) return kNil;
    std::uint32_t s = w >> 6;
    std::uint64_t sum = summary_[s] & (~std::uint64_t{0} << (w & 63));
    for (;;) {
      if (sum != 0) {
        const std::uint32_t word = (s << 6) | static_cast<std::uint32_t>(std::countr_zero(sum));
        return (word << 6) | static_cast<std::uint32_t>(std::countr_zero(words_[word]));
      }
      if (++s >= static_cast<std::uint32_t>(kSummaryWords)) return kNil;
      sum = summary_[s];
    }
  }

  // The run is drained and the queue is not empty: the next bucket (from
  // the slots or the far heap) becomes the current one and its events the
  // run, sorted.
  [[gnu::noinline]] void advance() {
    front_ = end_ = kHeadroom;
    const std::uint64_t ahead = next_occupied();
    const std::uint64_t in_slots = ahead != 0 ? current_ + ahead : ~std::uint64_t{0};
    if (far_.empty()) [[likely]] {
      current_ = in_slots;
      take_slot(static_cast<std::uint32_t>(current_ & kSlotMask));
    } else {
      current_ = std::min(in_slots, far_.front().time >> width_);
      if (current_ == in_slots) take_slot(static_cast<std::uint32_t>(current_ & kSlotMask));
      while (!far_.empty() && (far_.front().time >> width_) == current_) {
        std::pop_heap(far_.begin(), far_.end(), later_time);
        reserve_run(end_ + 1);
        run_[end_++] = far_.back();
        far_.pop_back();
      }
    }
    StampedEvent* run = run_.data() + front_;
    const std::size_t n = end_ - front_;
    if (n <= 16) {  // most buckets: a few events
      for (std::size_t i = 1; i < n; ++i) {
        if (!before(run[i], run[i - 1])) continue;
        const StampedEvent x = run[i];
        std::size_t j = i;
        for (; j > 0 && before(x, run[j - 1]); --j) run[j] = run[j - 1];
        run[j] = x;
      }
    } else {
      std::sort(run, run + n, [](const StampedEvent& a, const StampedEvent& b) { return before(a, b); });
    }
    if (adapt_) [[likely]] {
      events_ += n;
      if (++advances_ == kAdaptEvery) [[unlikely]]
        adapt();
    }
  }
  // Every kAdaptEvery buckets taken, or 8 kAdaptEvery events in the run
  // (taken or inserted): if the buckets held more than 8 events on average
  // (sorting and inserting them costs), buckets half as wide; if fewer than
  // 2 (each costs a search of the bitmap), twice as wide. The events in
  // the slots and the far heap are placed again. The run is not empty.
  static constexpr std::uint32_t kAdaptEvery = 1024;
  [[gnu::noinline]] void adapt() {
    const std::size_t events = events_, advances = advances_;
    advances_ = 0;
    events_ = 0;
    int width = width_;
    // Narrower buckets split only events of different times: a run of equal
    // times (many operations freed at once, at time 0 say) would otherwise
    // narrow them to a picosecond and send the rest of the run to the far heap.
    const bool splits = run_[end_ - 1].time - run_[front_].time >= (std::uint64_t{1} << width) / 4;
    if (events > 8 * advances && width > 0 && splits)
      --width;
    else if (events < 2 * advances && width < 40)
      ++width;
    else
      return;
    adapt_ = false;  // placing again inserts into the run: no adapt() from there
    replaced_.clear();
    for (std::uint32_t w = 0; w < static_cast<std::uint32_t>(kWords); ++w) {
      while (words_[w] != 0) {
        const std::uint32_t at = (w << 6) | static_cast<std::uint32_t>(std::countr_zero(words_[w]));
        words_[w] &= words_[w] - 1;
        Slot& slot = slots_[at];
        std::uint32_t n = slot.head, last = n;
        for (; n != kNil; n = nodes_[n].next) {
          replaced_.push_back(nodes_[n].e);
          last = n;
        }
        nodes_[last].next = free_;
        free_ = slot.head;
        slot = Slot{};
      }
    }
    std::fill(std::begin(summary_), std::end(summary_), 0);
    replaced_.insert(replaced_.end(), far_.begin(), far_.end());
    far_.clear();
    width_ = width;
    current_ = run_[end_ - 1].time >> width_;  // the run is not empty: it was just taken
    for (const StampedEvent& e : replaced_) place(e);
    adapt_ = true;
  }
  // Appends a slot's events to the run in the order they were pushed (its
  // list is newest first) and gives their nodes back.
  void take_slot(std::uint32_t at) {
    Slot& slot = slots_[at];
    words_[at >> 6] &= ~(std::uint64_t{1} << (at & 63));
    if (words_[at >> 6] == 0) summary_[at >> 12] &= ~(std::uint64_t{1} << ((at >> 6) & 63));
    reserve_run(end_ + slot.count);
    StampedEvent* out = run_.data() + end_ + slot.count;
    end_ += slot.count;
    std::uint32_t n = slot.head, last = n;
    for (; n != kNil; n = nodes_[n].next) {
      *--out = nodes_[n].e;
      last = n;
    }
    nodes_[last].next = free_;
    free_ = slot.head;
    slot = Slot{};
  }

  std::vector<Slot> slots_;
  std::vector<StampedEvent> run_;  // the current bucket, sorted: run_[front_, end_)
  std::size_t front_ = 0, end_ = 0;
  std::uint64_t current_ = 0;  // the current bucket: time >> width_
  std::vector<Node> nodes_;
  std::uint32_t free_ = kNil;
  std::uint64_t words_[kWords] = {};
  std::uint64_t summary_[kSummaryWords] = {};
  std::vector<StampedEvent> far_;  // beyond the horizon: a binary heap, earliest time on top
  std::size_t size_ = 0;
  int width_;
  bool adapt_;
  std::uint32_t advances_ = 0;  // buckets taken since the last adapt()
  std::size_t events_ = 0;      // events taken into the run or inserted since
  std::vector<StampedEvent> replaced_;
};

}  // namespace poems::sim::detail
