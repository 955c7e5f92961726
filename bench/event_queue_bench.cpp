// The simulator's event queues alone, in the classic hold model of
// discrete-event simulation: N events queued, then M times pop the earliest
// and push one at its time plus an increment. Measures what a pop and a push
// cost apart from the handlers (docs/PERFORMANCE.md, issue 20's instruction
// budget), for
//   radix     RadixQueue<Event>: the matched semantics' queue (equal times FIFO)
//   calendar  CalendarQueue: the loggopsim semantics' queue ((time, stamp) order)
//   stamped   StampedQueue: the loggopsim semantics' queue before it (a radix
//             heap with batches sorted by stamp; defined here)
//   calendarW CalendarQueue with buckets fixed at 2^W ps, W in 10, 12, 14, 16,
//             18 (the engine's adapts its width, from 2^16)
//   heap      std::priority_queue of 56-byte elements in (time, stamp) order:
//             the shape of LogGOPSim's queue (its graph_node_properties)
// All must pop the same sequence of times (checked), and the stamped ones
// (all but radix, whose keys are its push order) the same stamps.
//
//   event_queue_bench [N M [QUEUE]]   (default: 4096 events, 20,000,000 holds, all)
//
// QUEUE (one of the names above) runs that one alone (for callgrind's
// instruction count of a hold), without the cross-check.
//
// Increments: one in eight is 0 (an event at the current time, after those
// already there), the others uniform in [1 ps, 20 us) (LogGOPS costs of a
// few microseconds, in picoseconds). They are drawn before the clock starts.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <queue>
#include <random>
#include <string>
#include <vector>

#include "calendar_queue.h"
#include "event_queue.h"

using namespace poems::sim::detail;

namespace {

// The `loggopsim` semantics' queue before CalendarQueue (kept here to compare
// with): (time, stamp) order, as
// LogGOPSim's priority queue. Events later than the current time wait in
// the radix heap; those at the current time form a batch kept in stamp
// order (the heap gives them out in push order, and a re-queued event keeps
// its older stamp, so a batch is sorted when it is taken, if it is not
// already); an event pushed at the current time has the newest stamp and
// goes last, unless it is a re-queued one. LogGOPSim may queue an event
// earlier than the current time (an operation freed on another CPU whose
// clock is behind): such events go to a small binary heap that is always
// drained first, since everything in it is earlier than the rest.
class StampedQueue {
 public:
  // Counted, not summed: the engine asks for both at every pop.
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }

  [[gnu::always_inline]] void push(const StampedEvent& e) {
    ++size_;
    if (e.time > now_) {
      future_.push(e);
    } else if (e.time == now_) {
      if (front_ == batch_.size() || batch_.back().stamp < e.stamp) {
        batch_.push_back(e);
      } else {  // a re-queued event among newer ones
        auto at = std::lower_bound(batch_.begin() + static_cast<std::ptrdiff_t>(front_), batch_.end(), e,
                                   [](const StampedEvent& a, const StampedEvent& b) { return a.stamp < b.stamp; });
        batch_.insert(at, e);
      }
    } else {
      past_.push_back(e);
      std::push_heap(past_.begin(), past_.end(), later);
    }
  }

  // Not empty().
  StampedEvent pop() {
    --size_;
    if (!past_.empty()) [[unlikely]] {
      std::pop_heap(past_.begin(), past_.end(), later);
      const StampedEvent e = past_.back();
      past_.pop_back();
      return e;
    }
    if (front_ == batch_.size()) [[unlikely]] {
      // Most times have one event: no batch to sort.
      const StampedEvent e = future_.pop();
      now_ = e.time;
      const StampedEvent* next = future_.peek();
      if (next == nullptr || next->time != e.time) return e;
      take_batch(e);
    }
    return batch_[front_++];
  }

  // The event pop() returns next if nothing is pushed before it, as
  // RadixQueue::peek; when the batch is drained and several events share the
  // next time, the first pushed of them (a hint: pop() sorts them by stamp).
  const StampedEvent* peek() const {
    if (!past_.empty()) return past_.data();
    if (front_ < batch_.size()) return batch_.data() + front_;
    return future_.peek();
  }

  // Events known to come next (the current batch), as RadixQueue::upcoming.
  const StampedEvent* upcoming(std::size_t& count) const {
    count = past_.empty() ? batch_.size() - front_ : 0;
    return batch_.data() + front_;
  }

 private:
  static bool later(const StampedEvent& a, const StampedEvent& b) {
    return a.time != b.time ? a.time > b.time : a.stamp > b.stamp;
  }
  // `first` was popped and more events have its time.
  [[gnu::noinline]] void take_batch(const StampedEvent& first) {
    batch_.clear();
    front_ = 0;
    batch_.push_back(first);
    // The rest of the time, in the order pushed (as RadixQueue pops them).
    for (const StampedEvent* next = future_.peek(); next != nullptr && next->time == first.time; next = future_.peek())
      batch_.push_back(future_.pop());
    auto by_stamp = [](const StampedEvent& a, const StampedEvent& b) { return a.stamp < b.stamp; };
    if (batch_.size() <= 16) {  // most batches: two or three events, nearly in order
      for (std::size_t i = 1; i < batch_.size(); ++i) {
        const StampedEvent x = batch_[i];
        std::size_t j = i;
        for (; j > 0 && batch_[j - 1].stamp > x.stamp; --j) batch_[j] = batch_[j - 1];
        batch_[j] = x;
      }
    } else if (!std::is_sorted(batch_.begin(), batch_.end(), by_stamp)) {
      std::sort(batch_.begin(), batch_.end(), by_stamp);  // stamps are distinct: any sort gives this order
    }
  }

  RadixQueue<StampedEvent> future_;
  std::vector<StampedEvent> batch_;
  std::size_t front_ = 0;
  std::vector<StampedEvent> past_;  // a binary heap, earliest on top
  std::uint64_t now_ = 0;
  std::size_t size_ = 0;  // events in past_, batch_ from front_, and future_
};

// LogGOPSim's queue element: time, starttime, ts (its stamp), size, five
// 32-bit fields and three bytes (56 bytes).
struct HeapElement {
  std::uint64_t time, starttime, stamp, size;
  std::uint32_t target, host, offset, tag, handle;
  std::uint8_t proc, nic;
  char type;
};
struct Later {
  bool operator()(const HeapElement& a, const HeapElement& b) const {
    return a.time != b.time ? a.time > b.time : a.stamp > b.stamp;
  }
};

struct Outcome {
  double seconds = 0;
  std::uint64_t times = 0, stamps = 0;  // hashes of the popped sequence: equal in each queue
};

// Runs the hold model on queue operations given as lambdas (out of line:
// callgrind --toggle-collect='*hold*' counts the queue's instructions alone).
template <class Push, class Pop>
[[gnu::noinline]] Outcome hold(std::size_t n, const std::vector<std::uint64_t>& increments, Push push, Pop pop) {
  for (std::size_t i = 0; i < n; ++i) push(increments[i], i);
  Outcome out;
  const auto start = std::chrono::steady_clock::now();
  std::uint64_t stamp = n;
  for (std::size_t i = n; i < increments.size(); ++i) {
    const auto [time, popped_stamp] = pop();
    out.times = out.times * 1000003 + time;
    out.stamps = out.stamps * 1000003 + popped_stamp;
    push(time + increments[i], stamp++);
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 1 && argc != 3 && argc != 4) {
    std::fprintf(stderr, "usage: %s [EVENTS HOLDS [radix|stamped|calendar|calendarW|heap]]\n", argv[0]);
    return 2;
  }
  const std::string only = argc == 4 ? argv[3] : "";
  if (!only.empty() && only != "radix" && only != "stamped" && only != "heap" && only != "calendar" &&
      only != "calendar10" && only != "calendar12" && only != "calendar14" && only != "calendar16" &&
      only != "calendar18") {
    std::fprintf(stderr, "QUEUE must be radix, stamped, calendar, calendar10|12|14|16|18 or heap, not '%s'\n",
                 only.c_str());
    return 2;
  }
  auto runs = [&](const char* name) { return only.empty() || only == name; };
  const std::size_t n = argc >= 3 ? std::strtoull(argv[1], nullptr, 10) : 4096;
  const std::size_t m = argc >= 3 ? std::strtoull(argv[2], nullptr, 10) : 20'000'000;
  if (n == 0 || n > (std::size_t{1} << 26) || m == 0 || m > (std::size_t{1} << 31)) {
    std::fprintf(stderr, "EVENTS must be in [1, 2^26] and HOLDS in [1, 2^31]\n");
    return 2;
  }
  std::mt19937_64 random(20261126);
  std::uniform_int_distribution<std::uint64_t> ahead(1, 20'000'000 - 1);
  std::vector<std::uint64_t> increments(n + m);
  for (std::uint64_t& x : increments) x = random() % 8 == 0 ? 0 : ahead(random);

  struct Popped {
    std::uint64_t time, stamp;
  };
  const Outcome radix = !runs("radix") ? Outcome{} : [&] {
    EventQueue q;
    return hold(
        n, increments,
        [&](std::uint64_t t, std::uint64_t s) {
          q.push(Event{t, s});
        },
        [&] {
          const Event e = q.pop();
          return Popped{e.time, e.key};  // the key carries the push order: FIFO is stamp order
        });
  }();
  // The hold model on a queue of StampedEvents (the stamp is the push order).
  auto hold_stamped = [&](auto& q) {
    return hold(
        n, increments,
        [&](std::uint64_t t, std::uint64_t s) {
          q.push(StampedEvent{t, s, s});
        },
        [&] {
          const StampedEvent e = q.pop();
          return Popped{e.time, e.stamp};
        });
  };
  const Outcome stamped = !runs("stamped") ? Outcome{} : [&] {
    StampedQueue q;
    return hold_stamped(q);
  }();
  auto calendar = [&](const char* name, int width_bits, bool adapt) {
    if (!runs(name)) return Outcome{};
    CalendarQueue<> q(width_bits, adapt);
    return hold_stamped(q);
  };
  const Outcome cal = calendar("calendar", 16, true);
  const Outcome cal10 = calendar("calendar10", 10, false);
  const Outcome cal12 = calendar("calendar12", 12, false);
  const Outcome cal14 = calendar("calendar14", 14, false);
  const Outcome cal16 = calendar("calendar16", 16, false);
  const Outcome cal18 = calendar("calendar18", 18, false);
  const Outcome heap = !runs("heap") ? Outcome{} : [&] {
    std::priority_queue<HeapElement, std::vector<HeapElement>, Later> q;
    return hold(
        n, increments,
        [&](std::uint64_t t, std::uint64_t s) {
          q.push(HeapElement{t, t, s, 0, 0, 0, 0, 0, 0, 0, 0, 0});
        },
        [&] {
          const HeapElement e = q.top();
          q.pop();
          return Popped{e.time, e.stamp};
        });
  }();
  std::printf("hold model: %zu events queued, %zu holds (pop + push)\n", n, m);
  for (const auto& [name, o] : {std::pair<const char*, const Outcome&>{"radix (matched)", radix},
                                {"stamped (loggopsim, before)", stamped},
                                {"calendar (loggopsim)", cal},
                                {"calendar10", cal10},
                                {"calendar12", cal12},
                                {"calendar14", cal14},
                                {"calendar16", cal16},
                                {"calendar18", cal18},
                                {"heap (LogGOPSim's shape)", heap}})
    if (o.seconds > 0)
      std::printf("%-26s %8.2f ns a hold   %.3f s\n", name, 1e9 * o.seconds / static_cast<double>(m), o.seconds);
  if (!only.empty()) return 0;
  if (radix.times != heap.times || stamped.times != heap.times || radix.stamps != heap.stamps ||
      stamped.stamps != heap.stamps || cal.times != heap.times || cal.stamps != heap.stamps ||
      cal10.stamps != heap.stamps || cal12.stamps != heap.stamps || cal14.stamps != heap.stamps ||
      cal16.stamps != heap.stamps || cal18.stamps != heap.stamps) {
    std::fprintf(stderr, "the queues popped different sequences\n");
    return 1;
  }
  return 0;
}
