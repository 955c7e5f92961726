// The simulator's internal containers against plain references: the event
// queue against a stable sort (time order, FIFO among equal times), the
// `loggopsim` semantics' calendar queue against std::priority_queue in
// (time, stamp) order, the window storage against std::vector.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <queue>
#include <random>
#include <vector>

#include "calendar_queue.h"
#include "event_queue.h"
#include "window.h"

namespace poems::sim::detail {
namespace {

struct Pushed {
  std::uint64_t time, seq;
};

// Runs a schedule of pushes and pops (every push at or after the last popped
// time) and checks each pop against the earliest remaining push, the earlier
// pushed first among equal times; also checks that upcoming() shows what
// the next pops return and peek() the next one.
void check_against_reference(std::uint64_t seed, std::size_t steps, std::uint64_t max_ahead, double equal_share) {
  std::mt19937_64 rng(seed);
  EventQueue q;
  std::vector<Pushed> pending;  // the reference: kept in (time, seq) order
  std::uint64_t now = 0, seq = 0;
  auto push = [&](std::uint64_t t) {
    q.push(Event{t, seq});
    const Pushed p{t, seq++};
    pending.insert(std::upper_bound(pending.begin(), pending.end(), p,
                                    [](const Pushed& a, const Pushed& b) { return a.time < b.time; }),
                   p);
  };
  for (std::size_t i = 0; i < steps; ++i) {
    const bool pop = !pending.empty() && rng() % 2 == 0;
    if (!pop) {
      std::uint64_t ahead = std::uniform_real_distribution<double>(0, 1)(rng) < equal_share ? 0 : rng() % max_ahead;
      if (now > ~std::uint64_t{0} / 2) ahead %= 1000;  // far runs stay clear of 2^64
      push(now + ahead);
      continue;
    }
    std::size_t known = 0;
    const Event* next = q.upcoming(known);
    for (std::size_t k = 0; k < std::min(known, pending.size()); ++k) {
      ASSERT_EQ(next[k].time, pending[k].time) << "upcoming " << k << " at step " << i;
      ASSERT_EQ(next[k].key, pending[k].seq) << "upcoming " << k << " at step " << i;
    }
    const Event* peeked = q.peek();  // exact when nothing is pushed before the pop
    ASSERT_NE(peeked, nullptr) << "step " << i;
    ASSERT_EQ(peeked->time, pending.front().time) << "peek at step " << i;
    ASSERT_EQ(peeked->key, pending.front().seq) << "peek at step " << i;
    const Event e = q.pop();
    ASSERT_EQ(e.time, pending.front().time) << "step " << i;
    ASSERT_EQ(e.key, pending.front().seq) << "step " << i;
    now = e.time;
    pending.erase(pending.begin());
    ASSERT_EQ(q.size(), pending.size());
  }
  while (!pending.empty()) {
    const Event e = q.pop();
    ASSERT_EQ(e.key, pending.front().seq);
    pending.erase(pending.begin());
  }
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.peek(), nullptr);
}

// The same with every pop taking all events of the earliest time at once
// through peek() (as the bench's StampedQueue takes its batches): peek()
// must show the event pop() returns next, across a refill that sorts a small
// bucket into the run and pushes into that run's range, at, before and
// after the times the queue holds.
void check_batches_against_reference(std::uint64_t seed, std::size_t steps, std::uint64_t max_ahead) {
  std::mt19937_64 rng(seed);
  EventQueue q;
  std::vector<Pushed> pending;
  std::uint64_t now = 0, seq = 0;
  std::vector<Event> batch;
  for (std::size_t i = 0; i < steps; ++i) {
    if (pending.empty() || rng() % 3 != 0) {
      const std::uint64_t t = now + (rng() % 4 == 0 ? 0 : rng() % max_ahead);
      q.push(Event{t, seq});
      const Pushed p{t, seq++};
      pending.insert(std::upper_bound(pending.begin(), pending.end(), p,
                                      [](const Pushed& a, const Pushed& b) { return a.time < b.time; }),
                     p);
      continue;
    }
    batch.clear();
    const Event* next = q.peek();
    ASSERT_NE(next, nullptr) << "step " << i;
    const Event shown = *next;
    batch.push_back(q.pop());
    ASSERT_EQ(batch.back().key, shown.key) << "step " << i;
    now = batch.back().time;
    while ((next = q.peek()) != nullptr && next->time == now) {
      const Event want = *next;
      batch.push_back(q.pop());
      ASSERT_EQ(batch.back().key, want.key) << "step " << i;
    }
    std::size_t equal = 0;
    while (equal < pending.size() && pending[equal].time == pending.front().time) ++equal;
    ASSERT_EQ(now, pending.front().time) << "step " << i;
    ASSERT_EQ(batch.size(), equal) << "step " << i;
    for (std::size_t k = 0; k < equal; ++k) ASSERT_EQ(batch[k].key, pending[k].seq) << "step " << i << " event " << k;
    pending.erase(pending.begin(), pending.begin() + static_cast<std::ptrdiff_t>(equal));
    ASSERT_EQ(q.size(), pending.size());
  }
}

TEST(EventQueue, BatchesOfEqualTimesMatchTheReference) {
  check_batches_against_reference(5, 30000, 50);         // small buckets, many ties: runs with pushes into them
  check_batches_against_reference(6, 30000, 3000);       // a few events per bucket, a few ties
  check_batches_against_reference(7, 30000, 1'000'000);  // mostly distinct times
}

TEST(EventQueue, PopsInTimeOrderFifoAmongEqualTimes) {
  check_against_reference(1, 20000, 5000, 0.3);          // a collective: times a few ns apart, many ties
  check_against_reference(2, 20000, 400'000'000, 0.05);  // Sweep3D-like: compute blocks up to 400 us ahead
  check_against_reference(3, 20000, 7, 0.5);             // every digit-0 bucket in use
  check_against_reference(8, 20000, 300, 0.2);           // buckets of a few events: sorted runs, pushes into them
}

TEST(EventQueue, TimesAcrossAllDigits) {
  check_against_reference(4, 20000, ~std::uint64_t{0} / 4, 0.1);  // differences in the top digits too
}

TEST(EventQueue, ThousandsOfEventsInOneBucketKeepTheirOrder) {
  // More events at one time than a block holds, pushed before and while they are popped.
  EventQueue q;
  std::uint64_t seq = 0;
  for (int i = 0; i < 5000; ++i) q.push(Event{1000, seq++});
  for (std::uint64_t i = 0; i < 5000; ++i) q.push(Event{1001 + i % 3, seq++});
  std::uint64_t expect = 0;
  for (int i = 0; i < 2500; ++i) ASSERT_EQ(q.pop().key, expect++);
  for (int i = 0; i < 3000; ++i) q.push(Event{1000, seq++});  // at the current time: after the 5000
  std::vector<std::uint64_t> order;
  while (!q.empty()) order.push_back(q.pop().key);
  ASSERT_EQ(order.size(), 2500u + 5000u + 3000u);
  for (std::size_t i = 0; i < 2500; ++i) ASSERT_EQ(order[i], 2500 + i);
  for (std::size_t i = 0; i < 3000; ++i) ASSERT_EQ(order[2500 + i], 10000 + i);
  // Then times 1001, 1002, 1003, each in push order.
  std::size_t at = 5500;
  for (std::uint64_t t = 1001; t <= 1003; ++t) {
    for (std::uint64_t s = 5000; s < 10000; ++s) {
      if (1001 + (s - 5000) % 3 != t) continue;
      ASSERT_EQ(order[at++], s);
    }
  }
}

// The calendar queue against std::priority_queue on (time, stamp), as
// LogGOPSim orders its queue. Pushes as the `loggopsim` semantics makes
// them: new events (the next stamp) later than now, at now, and earlier
// than now (an operation freed on a CPU whose clock is behind); re-queues of
// the event just popped at a later time with its old stamp; times in the
// current bucket, the next ones, across the horizon and beyond it (the far
// heap). Checks every pop, and that peek() and upcoming() show what comes
// next.
// Buckets of 2^width_bits ps (fixed, or adapted from there); `width_bits`
// is left at the queue's width at the end.
void check_calendar_against_reference(std::uint64_t seed, std::size_t steps, std::uint64_t max_ahead, int& width_bits,
                                      bool adapt) {
  std::mt19937_64 rng(seed);
  CalendarQueue<12> q(width_bits, adapt);
  auto later = [](const StampedEvent& a, const StampedEvent& b) {
    return a.time != b.time ? a.time > b.time : a.stamp > b.stamp;
  };
  std::priority_queue<StampedEvent, std::vector<StampedEvent>, decltype(later)> reference(later);
  std::uint64_t now = 1'000'000, stamp = 0;
  StampedEvent last{};
  bool can_requeue = false;
  // Until the first pop after the queue was empty, peek() may not know the
  // next event (the pushes since went to buckets after the current one).
  bool was_dry = true;
  for (std::size_t i = 0; i < steps; ++i) {
    const std::uint64_t kind = rng() % 16;
    if (kind < 7 || reference.empty()) {
      StampedEvent e{0, rng(), stamp++};
      if (kind == 0)
        e.time = now;  // at now: after those already there
      else if (kind == 1)
        e.time = now - std::min(now, rng() % 2000);  // earlier than now
      else if (kind == 2)
        e.time = now + rng() % 64;  // most often the current bucket
      else
        e.time = now + rng() % max_ahead;
      q.push(e);
      reference.push(e);
    } else if (kind < 9 && can_requeue) {  // the popped event back at a later time, its stamp kept
      last.time += 1 + rng() % (kind == 7 ? 3 : max_ahead);
      q.push(last);
      reference.push(last);
      can_requeue = false;
    } else {
      const StampedEvent expected = reference.top();
      reference.pop();
      if (const StampedEvent* next = q.peek(); next != nullptr) {
        ASSERT_EQ(next->time, expected.time) << "step " << i;
        ASSERT_EQ(next->stamp, expected.stamp) << "step " << i;
      } else {
        ASSERT_TRUE(was_dry) << "step " << i;
      }
      const StampedEvent e = q.pop();
      ASSERT_EQ(e.time, expected.time) << "step " << i;
      ASSERT_EQ(e.stamp, expected.stamp) << "step " << i;
      ASSERT_EQ(e.key, expected.key) << "step " << i;
      now = e.time;
      last = e;
      can_requeue = true;
      was_dry = reference.empty();
    }
    ASSERT_EQ(q.size(), reference.size());
    ASSERT_EQ(q.empty(), reference.empty());
    if (i % 64 == 0) {  // upcoming(): the next events, in order
      std::size_t count = 0;
      const StampedEvent* run = q.upcoming(count);
      ASSERT_LE(count, reference.size());
      count = std::min<std::size_t>(count, 32);
      auto copy = reference;
      for (std::size_t k = 0; k < count; ++k, copy.pop()) {
        ASSERT_EQ(run[k].time, copy.top().time) << "step " << i << " upcoming " << k;
        ASSERT_EQ(run[k].stamp, copy.top().stamp) << "step " << i << " upcoming " << k;
      }
    }
  }
  while (!reference.empty()) {
    const StampedEvent e = q.pop();
    ASSERT_EQ(e.time, reference.top().time);
    ASSERT_EQ(e.stamp, reference.top().stamp);
    reference.pop();
  }
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.peek(), nullptr);
  width_bits = q.width_bits();
}

TEST(CalendarQueue, PopsInTimeThenStampOrderAsTheReference) {
  // Fixed 64 ns buckets: many events a bucket, ties, re-queues.
  int width = 16;
  check_calendar_against_reference(11, 40000, 400'000, width, false);
  check_calendar_against_reference(12, 40000, 20'000'000, width, false);
  // Fixed 16 ps buckets and a horizon of 64 Ki ps (4,096 slots): most events
  // in their own bucket, the bitmap's wrap-around and the far heap.
  width = 4;
  check_calendar_against_reference(13, 40000, 5'000, width, false);
  check_calendar_against_reference(14, 40000, 1'000'000, width, false);
  EXPECT_EQ(width, 4);
}

TEST(CalendarQueue, AdaptsItsBucketWidthAndKeepsTheOrder) {
  // Dense events in wide buckets: the width shrinks, with events in the
  // slots and the far heap placed again.
  int width = 20;
  check_calendar_against_reference(15, 200000, 400'000, width, true);
  EXPECT_LT(width, 20);
  // Sparse events in narrow buckets: it grows.
  width = 2;
  check_calendar_against_reference(16, 200000, 20'000'000, width, true);
  EXPECT_GT(width, 2);
}

TEST(CalendarQueue, ThousandsOfEqualTimesComeOutByStamp) {
  CalendarQueue<> q;  // 5,000 events in one bucket: sorted by std::sort
  std::vector<std::uint64_t> stamps(5000);
  for (std::size_t i = 0; i < stamps.size(); ++i) stamps[i] = (i * 7919) % stamps.size();  // a permutation
  for (const std::uint64_t s : stamps) q.push(StampedEvent{1'000'000, s, s});
  for (std::uint64_t s = 0; s < stamps.size(); ++s) {
    const StampedEvent e = q.pop();
    ASSERT_EQ(e.time, 1'000'000u);
    ASSERT_EQ(e.stamp, s);
  }
  EXPECT_TRUE(q.empty());
}

// Many operations freed at the same time (all of an all-to-all's sends and
// receives at time 0) are inserted into the run: narrower buckets would not
// split them, so the width stays, and the events after them still fall
// into buckets, not the far heap.
TEST(CalendarQueue, EqualTimesDoNotNarrowTheBuckets) {
  CalendarQueue<> q;
  ASSERT_EQ(q.width_bits(), 16);
  std::uint64_t stamp = 0;
  for (int i = 0; i < 40000; ++i) q.push(StampedEvent{0, 0, stamp++});
  EXPECT_EQ(q.width_bits(), 16);
  for (std::uint64_t s = 0; s < 40000; ++s) {
    const StampedEvent e = q.pop();
    ASSERT_EQ(e.time, 0u);
    ASSERT_EQ(e.stamp, s);
    if (s % 4 == 0) q.push(StampedEvent{1'000 + 37 * s, 0, stamp++});
  }
  for (std::uint64_t s = 0; s < 10000; ++s) ASSERT_EQ(q.pop().time, 1'000 + 37 * 4 * s);
  EXPECT_TRUE(q.empty());
  // Different times in the run are split as before: 40,000 events in 64 ns.
  CalendarQueue<> dense;
  for (std::uint64_t i = 0; i < 40000; ++i) dense.push(StampedEvent{i, 0, i});
  EXPECT_LT(dense.width_bits(), 16);
  for (std::uint64_t i = 0; i < 40000; ++i) ASSERT_EQ(dense.pop().time, i);
}

// Events at the horizon's edge: the last bucket the slots hold (the slot
// before the current one, circularly) and the first ones the far heap does.
TEST(CalendarQueue, EventsAtTheHorizonsEdge) {
  CalendarQueue<12> q(4, false);  // 16 ps buckets, 4,096 of them
  const std::uint64_t now = 100 * 16 + 5;
  q.push(StampedEvent{now, 0, 0});
  ASSERT_EQ(q.pop().stamp, 0u);  // the current bucket is now 100
  std::uint64_t stamp = 1;
  std::vector<std::uint64_t> times;
  for (const std::uint64_t bucket : {100 + 4097, 100 + 4095, 100 + 4096, 100 + 1, 100 + 4095 + 4096})
    for (const std::uint64_t within : {15, 0}) times.push_back(bucket * 16 + within);
  for (const std::uint64_t t : times) q.push(StampedEvent{t, 0, stamp++});
  std::sort(times.begin(), times.end());
  for (const std::uint64_t t : times) ASSERT_EQ(q.pop().time, t);
  EXPECT_TRUE(q.empty());
  // Alone: a whole horizon after the current bucket, whose slot it would share.
  const std::uint64_t current = times.back() / 16;  // the current bucket
  q.push(StampedEvent{(current + 4096) * 16, 0, stamp++});
  ASSERT_EQ(q.pop().time, (current + 4096) * 16);
  EXPECT_TRUE(q.empty());
}

TEST(Window, BehavesAsAVectorInBothModes) {
  for (bool recycle : {true, false}) {
    WindowMemory memory(recycle);
    Window<std::uint64_t> w;
    std::vector<std::uint64_t> reference;
    std::mt19937_64 rng(recycle ? 5 : 6);
    for (int i = 0; i < 20000; ++i) {
      if (rng() % 8 == 0 && !reference.empty()) {
        const auto n = static_cast<std::uint32_t>(rng() % (reference.size() + 1));
        w.erase_front(n);
        reference.erase(reference.begin(), reference.begin() + n);
      } else {
        const std::uint64_t v = rng();
        w.push_back(memory, v);
        reference.push_back(v);
      }
      ASSERT_EQ(w.size(), reference.size());
      ASSERT_GE(w.capacity(), w.size());
    }
    ASSERT_TRUE(std::equal(w.begin(), w.end(), reference.begin(), reference.end()));
    w.release(memory);
    EXPECT_EQ(w.size(), 0u);
    EXPECT_EQ(w.capacity(), 0u);
  }
}

TEST(WindowMemory, RecyclesBlocksBySize) {
  WindowMemory memory(true);
  EXPECT_EQ(memory.rounded(1), 16u);
  EXPECT_EQ(memory.rounded(65), 128u);
  EXPECT_EQ(memory.rounded(std::size_t{1} << 16), std::size_t{1} << 16);
  EXPECT_EQ(memory.rounded((std::size_t{1} << 16) + 1), (std::size_t{1} << 16) + 64);  // large: heap, cache lines
  void* a = memory.allocate(256);
  void* b = memory.allocate(256);
  EXPECT_NE(a, b);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a) % 64, 0u);
  memory.deallocate(a, 256);
  EXPECT_EQ(memory.allocate(256), a);  // the freed block, not a new one
  void* large = memory.allocate(memory.rounded(100000));
  memory.deallocate(large, memory.rounded(100000));
  memory.deallocate(a, 256);
  memory.deallocate(b, 256);

  WindowMemory exact(false);  // read up front: exact sizes on cache lines, in order
  EXPECT_EQ(exact.rounded(100), 128u);
  auto* first = static_cast<char*>(exact.allocate(128));
  auto* second = static_cast<char*>(exact.allocate(64));
  EXPECT_EQ(second, first + 128);
}

}  // namespace
}  // namespace poems::sim::detail
