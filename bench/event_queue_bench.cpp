// The simulator's event queues alone, in the classic hold model of
// discrete-event simulation: N events queued, then M times pop the earliest
// and push one at its time plus an increment. Measures what a pop and a push
// cost apart from the handlers (docs/PERFORMANCE.md, issue 20's instruction
// budget), for
//   radix     RadixQueue<Event>: the matched semantics' queue (equal times FIFO)
//   stamped   StampedQueue: the loggopsim semantics' queue ((time, stamp) order)
//   heap      std::priority_queue of 56-byte elements in (time, stamp) order:
//             the shape of LogGOPSim's queue (its graph_node_properties)
// All three must pop the same sequence of times (checked), and the two
// stamped ones the same stamps.
//
//   event_queue_bench [N M [QUEUE]]   (default: 4096 events, 20,000,000 holds, all three)
//
// QUEUE (radix, stamped or heap) runs that one alone (for callgrind's
// instruction count of a hold), without the cross-check.
//
// Increments: one in eight is 0 (an event at the current time, after those
// already there), the others uniform in [1 ps, 20 us) (LogGOPS costs of a
// few microseconds, in picoseconds). They are drawn before the clock starts.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <queue>
#include <random>
#include <string>
#include <vector>

#include "event_queue.h"

using namespace poems::sim::detail;

namespace {

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
    std::fprintf(stderr, "usage: %s [EVENTS HOLDS [radix|stamped|heap]]\n", argv[0]);
    return 2;
  }
  const std::string only = argc == 4 ? argv[3] : "";
  if (!only.empty() && only != "radix" && only != "stamped" && only != "heap") {
    std::fprintf(stderr, "QUEUE must be radix, stamped or heap, not '%s'\n", only.c_str());
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
  const Outcome stamped = !runs("stamped") ? Outcome{} : [&] {
    StampedQueue q;
    return hold(
        n, increments,
        [&](std::uint64_t t, std::uint64_t s) {
          q.push(StampedEvent{t, s, s});
        },
        [&] {
          const StampedEvent e = q.pop();
          return Popped{e.time, e.stamp};
        });
  }();
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
                                {"stamped (loggopsim)", stamped},
                                {"heap (LogGOPSim's shape)", heap}})
    if (o.seconds > 0)
      std::printf("%-26s %8.2f ns a hold   %.3f s\n", name, 1e9 * o.seconds / static_cast<double>(m), o.seconds);
  if (!only.empty()) return 0;
  if (radix.times != heap.times || stamped.times != heap.times || radix.stamps != heap.stamps ||
      stamped.stamps != heap.stamps) {
    std::fprintf(stderr, "the queues popped different sequences\n");
    return 1;
  }
  return 0;
}
