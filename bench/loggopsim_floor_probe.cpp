// How fast can LogGOPSim's rules run on this machine at all? A deliberately
// minimal simulator of the `loggopsim` semantics (docs/simulator.md), for
// measuring, not for use: every operation materialized up front as a
// 32-byte record on huge pages, successor lists in one array, the engine's
// CalendarQueue, and nothing else (no lazy reading, no parking, no
// observer, timeline or critical path, no diagnosis of a schedule that
// does not finish). It is the floor a leaner `poems` engine could reach
// with this queue and layout (docs/PERFORMANCE.md, "The floor of the
// rules"); bench/loggopsim_floor.sh runs it beside `poems simulate` and
// checks that both give the same finish time and event counts.
//
//   loggopsim_floor_probe GOAL [-L ns] [-o ns] [-g ns] [-G ns/B] [-O ns/B] [-S bytes]
//
// Defaults are LogGOPSim's (L=2500 o=1500 g=1000 G=6 O=0 S=65535). Prints one
// JSON line: finish_ns, finish_rank, events (pops, as `poems` counts them),
// requeued, operations, completed, simulation_seconds (CPU time of the
// simulation alone, not of reading). Exit 2 for a schedule outside its
// scope: more than one CPU or NIC per rank, communicators, dependencies
// listed out of program order, more than 65,535 successors of one operation.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "calendar_queue.h"
#include "poems/base/huge_pages.h"
#include "poems/taskgraph/goal.h"

namespace {

using poems::sim::detail::CalendarQueue;
using poems::sim::detail::StampedEvent;
using poems::taskgraph::OpKind;

constexpr std::uint32_t kNone = ~std::uint32_t{0};
constexpr std::uint32_t kAny = ~std::uint32_t{0};           // a wildcard source or tag
constexpr std::uint64_t kMessage = std::uint64_t{1} << 31;  // an event's key: the send's message, not its start
// LogGOPSim's operation types: operations freed together are queued sends, receives, calcs.
enum Kind : std::uint32_t { kSend = 1, kRecv = 2, kCalc = 3 };

struct Op {              // 32 bytes: two to a cache line
  std::uint64_t amount;  // bytes, or a calc's picoseconds
  std::uint32_t peer, tag, rank;
  std::uint32_t succ;             // its successors: succ[succ ..) those told at its start, then at its end
  std::uint16_t n_start, n_done;  // how many of each
  std::uint32_t waiting;          // kind << 30 | dependencies not yet satisfied
};
static_assert(sizeof(Op) == 32);

struct Clocks {
  std::uint64_t cpu = 0, nic_out = 0, nic_in = 0;
  std::uint32_t posted = kNone, posted_tail = kNone;          // posted receives, oldest first
  std::uint32_t unexpected = kNone, unexpected_tail = kNone;  // sends whose message came first
};

struct Params {
  std::uint64_t L = 2500, o = 1500, g = 1000, G = 6, O = 0, S = 65535;  // ns, ns/B, bytes
};

[[noreturn]] void out_of_scope(const char* why) {
  std::fprintf(stderr, "loggopsim_floor_probe: outside the probe's scope: %s\n", why);
  std::exit(2);
}

double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

class Probe {
 public:
  Probe(poems::taskgraph::ExplicitSchedule& schedule, const Params& p)
      : L_(p.L * 1000), o_(p.o * 1000), g_(p.g * 1000), G_(p.G * 1000), O_(p.O * 1000), S_(p.S) {
    if (schedule.max_cpu() != 0 || schedule.max_nic() != 0) out_of_scope("more than one CPU or NIC per rank");
    const std::uint32_t ranks = schedule.ranks();
    first_.assign(ranks + 1, 0);
    for (std::uint32_t r = 0; r < ranks; ++r) first_[r + 1] = first_[r] + schedule.operation_count(r);
    if (first_[ranks] >= kMessage) out_of_scope("2^31 operations or more");
    ops_.resize(first_[ranks]);
    next_.assign(first_[ranks], kNone);
    clocks_.resize(ranks);
    std::vector<std::uint32_t> n_start(first_[ranks], 0), n_done(first_[ranks], 0);
    for (std::uint32_t r = 0; r < ranks; ++r) {
      const poems::taskgraph::OpBuffer b = schedule.operations(r);
      const std::uint64_t base = first_[r];
      for (std::size_t i = 0; i < b.ops.size(); ++i) {
        const poems::taskgraph::Operation& x = b.ops[i];
        if (x.comm != 0) out_of_scope("communicators");
        if (x.dep_count >= std::uint32_t{1} << 30) out_of_scope("2^30 dependencies of one operation or more");
        Op& op = ops_[base + i];
        op.rank = r;
        op.peer = static_cast<std::uint32_t>(x.peer);  // kAnySource (-1) is kAny
        op.tag = static_cast<std::uint32_t>(x.tag);    // kAnyTag (-1) too
        const Kind kind = x.kind == OpKind::Send ? kSend : x.kind == OpKind::Recv ? kRecv : kCalc;
        op.amount = kind == kCalc ? x.duration : x.bytes;
        op.waiting = kind << 30 | x.dep_count;
        for (std::uint32_t d = x.first_dep; d < x.first_dep + x.dep_count; ++d) {
          if (b.deps[d].order != 0) out_of_scope("dependencies listed out of program order");
          ++(b.deps[d].on_start ? n_start : n_done)[base + b.deps[d].op];
        }
      }
    }
    std::uint32_t at = 0;
    for (std::size_t i = 0; i < ops_.size(); ++i) {
      if (n_start[i] > 0xffff || n_done[i] > 0xffff) out_of_scope("more than 65,535 successors of one operation");
      ops_[i].succ = at;
      ops_[i].n_start = static_cast<std::uint16_t>(n_start[i]);
      ops_[i].n_done = static_cast<std::uint16_t>(n_done[i]);
      if (std::uint64_t{at} + n_start[i] + n_done[i] > kNone) out_of_scope("2^32 dependencies or more");
      at += n_start[i] + n_done[i];
      n_done[i] = n_start[i];  // from here: where its next successor told at its end goes
      n_start[i] = 0;          // and at its start
    }
    succ_.resize(at);
    // Successors in the order their dependencies were listed, which is
    // program order (checked above): LogGOPSim tells them in that order.
    for (std::uint32_t r = 0; r < ranks; ++r) {
      const poems::taskgraph::OpBuffer b = schedule.operations(r);
      const std::uint64_t base = first_[r];
      for (std::size_t i = 0; i < b.ops.size(); ++i)
        for (std::uint32_t d = b.ops[i].first_dep; d < b.ops[i].first_dep + b.ops[i].dep_count; ++d) {
          const std::uint64_t on = base + b.deps[d].op;
          std::uint32_t& slot = b.deps[d].on_start ? n_start[on] : n_done[on];
          succ_[ops_[on].succ + slot++] = static_cast<std::uint32_t>(base + i);
        }
    }
  }

  void run() {
    for (std::uint32_t r = 0; r < clocks_.size(); ++r) {
      for (std::uint64_t x = first_[r]; x < first_[r + 1]; ++x)
        if ((ops_[x].waiting & 0x3fffffff) == 0) freed_[0].push_back({ops_[x].waiting >> 30, x});
      queue_freed(0, r, true);
    }
    while (!queue_.empty()) {
      const StampedEvent e = queue_.pop();
      if (const StampedEvent* next = queue_.peek()) __builtin_prefetch(&ops_[next->key & (kMessage - 1)]);
      ++events_;
      now_ = e.time;
      host_[1] = kNone;
      if (!(e.key & kMessage) ? start(e) : arrive(e)) {
        if (host_[1] != kNone && host_[1] < host_[0]) std::swap(host_[0], host_[1]), std::swap(freed_[0], freed_[1]);
        queue_freed(0, host_[0], false);
        if (host_[1] != kNone) queue_freed(1, host_[1], false);
      }
    }
  }

  void print(double seconds) const {
    std::uint64_t finish = 0;
    std::uint32_t at = 0;
    bool completed = done_ == ops_.size();
    for (std::uint32_t r = 0; r < clocks_.size(); ++r) {
      if (clocks_[r].cpu > finish) finish = clocks_[r].cpu, at = r;
      completed = completed && clocks_[r].posted == kNone && clocks_[r].unexpected == kNone;
    }
    std::printf(
        "{\"finish_ns\": %llu, \"finish_rank\": %u, \"events\": %llu, \"requeued\": %llu, \"operations\": %zu, "
        "\"completed\": %s, \"simulation_seconds\": %.6f}\n",
        static_cast<unsigned long long>(finish / 1000), at, static_cast<unsigned long long>(events_),
        static_cast<unsigned long long>(requeued_), ops_.size(), completed ? "true" : "false", seconds);
  }

 private:
  struct Freed {
    std::uint32_t kind;
    std::uint64_t op;
  };

  static bool matches(std::uint32_t want_src, std::uint32_t want_tag, std::uint32_t src, std::uint32_t tag) {
    return (want_src == kAny || src == kAny || src == want_src) && (want_tag == kAny || tag == kAny || tag == want_tag);
  }
  // (s - 1) times a per-byte cost; wraps at 0 bytes, as in LogGOPSim.
  static std::uint64_t per_byte(std::uint64_t bytes, std::uint64_t x) { return (bytes - 1) * x; }

  // Tells op's successors succ[from, from + n) into freed_[which].
  void tell(int which, std::uint32_t from, std::uint32_t n) {
    for (std::uint32_t i = 0; i < n; ++i) {
      const std::uint32_t x = succ_[from + i];
      if ((--ops_[x].waiting & 0x3fffffff) == 0) freed_[which].push_back({ops_[x].waiting >> 30, x});
    }
  }
  void complete(int which, const Op& op) {
    ++done_;
    tell(which, op.succ + op.n_start, op.n_done);
  }
  void requeue(StampedEvent e, std::uint64_t at) {
    ++requeued_;
    e.time = at;
    queue_.push(e);
  }
  // A rendezvous send completes when its receive is matched; its clocks move up to now.
  // Its successors join the current host's if it is the same rank, in the
  // order LogGOPSim frees them.
  void finish_rendezvous(int which, std::uint64_t send) {
    const Op& s = ops_[send];
    if (s.rank == host_[0]) which = 0;
    host_[which] = s.rank;
    complete(which, s);
    Clocks& c = clocks_[s.rank];
    c.cpu = std::max(c.cpu, now_);
    c.nic_out = std::max(c.nic_out, now_);
  }
  static void append(std::uint32_t& head, std::uint32_t& tail, std::vector<std::uint32_t>& next, std::uint32_t x) {
    (tail == kNone ? head : next[tail]) = x;
    tail = x;
  }
  // The first entry of a list that `match` accepts, taken off it; kNone if none.
  template <class Match>
  std::uint32_t take(std::uint32_t& head, std::uint32_t& tail, Match match) {
    std::uint32_t before = kNone;
    for (std::uint32_t x = head; x != kNone; before = x, x = next_[x]) {
      if (!match(ops_[x])) continue;
      (before == kNone ? head : next_[before]) = next_[x];
      if (tail == x) tail = before;
      next_[x] = kNone;
      return x;
    }
    return kNone;
  }

  // An operation's start; false if it was queued again.
  bool start(const StampedEvent& e) {
    const std::uint64_t x = e.key;
    const Op& op = ops_[x];
    __builtin_prefetch(ops_.data() + std::min<std::uint64_t>(x + 4, ops_.size() - 1));  // the rank's next events
    Clocks& c = clocks_[op.rank];
    host_[0] = op.rank;
    switch (op.waiting >> 30) {
      case kCalc:
        if (c.cpu > now_) return requeue(e, c.cpu), false;
        c.cpu = now_ + op.amount;
        tell(0, op.succ, op.n_start);
        complete(0, op);
        return true;
      case kSend: {
        const std::uint64_t free = std::max(c.cpu, c.nic_out);
        if (free > now_) return requeue(e, free), false;
        tell(0, op.succ, op.n_start);
        c.cpu = now_ + o_ + per_byte(op.amount, O_);
        c.nic_out = now_ + g_ + per_byte(op.amount, G_);
        queue_.push(StampedEvent{now_ + o_ + L_, x | kMessage, stamp_++});
        if (op.amount <= S_) complete(0, op);
        return true;
      }
      default: {  // a receive is posted
        tell(0, op.succ, op.n_start);
        const std::uint32_t m =
            take(c.unexpected, c.unexpected_tail, [&](const Op& s) { return matches(op.peer, op.tag, s.rank, s.tag); });
        if (m == kNone) {
          append(c.posted, c.posted_tail, next_, static_cast<std::uint32_t>(x));
          return true;
        }
        if ((op.amount > S_) != (ops_[m].amount > S_)) out_of_scope("a protocol that differs across S");
        if (op.amount > S_) finish_rendezvous(1, m);
        complete(0, op);
        return true;
      }
    }
  }

  // A message at its destination; false if it was queued again.
  bool arrive(const StampedEvent& e) {
    const std::uint64_t x = e.key & (kMessage - 1);
    const Op& send = ops_[x];
    Clocks& c = clocks_[send.peer];
    const std::uint64_t free = std::max(c.cpu, c.nic_in);
    if (free > now_) return requeue(e, free), false;
    c.cpu = now_ + o_ + std::max(per_byte(send.amount, O_), per_byte(send.amount, G_));
    c.nic_in = now_ + g_ + per_byte(send.amount, G_);
    host_[0] = send.peer;
    const std::uint32_t r =
        take(c.posted, c.posted_tail, [&](const Op& rq) { return matches(send.rank, send.tag, rq.peer, rq.tag); });
    if (r == kNone) {
      append(c.unexpected, c.unexpected_tail, next_, static_cast<std::uint32_t>(x));
      return true;
    }
    if (send.amount > S_) finish_rendezvous(1, x);
    complete(0, ops_[r]);
    return true;
  }

  // Queues freed_[which], on rank `r`, by kind as LogGOPSim sorts them.
  void queue_freed(int which, std::uint32_t r, bool at_zero) {
    std::vector<Freed>& f = freed_[which];
    if (f.size() > 1) std::sort(f.begin(), f.end(), [](const Freed& a, const Freed& b) { return a.kind < b.kind; });
    const Clocks& c = clocks_[r];
    for (const Freed& x : f) {
      const std::uint64_t t = at_zero ? 0 : x.kind == kSend ? std::max(c.cpu, c.nic_out) : c.cpu;
      queue_.push(StampedEvent{t, x.op, stamp_++});
    }
    f.clear();
  }

  const std::uint64_t L_, o_, g_, G_, O_, S_;  // ps, ps/B, bytes
  std::vector<std::uint64_t> first_;           // rank r's operations: first_[r] .. first_[r + 1]
  poems::base::HugeVector<Op> ops_;
  poems::base::HugeVector<std::uint32_t> succ_;
  std::vector<std::uint32_t> next_;  // the matching lists' links (an operation is on one list at a time)
  poems::base::HugeVector<Clocks> clocks_;
  CalendarQueue<> queue_;
  std::vector<Freed> freed_[2];  // freed by this event on host_[0] and host_[1]
  std::uint32_t host_[2] = {kNone, kNone};
  std::uint64_t now_ = 0, stamp_ = 0, events_ = 0, requeued_ = 0, done_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s GOAL [-L ns] [-o ns] [-g ns] [-G ns/B] [-O ns/B] [-S bytes]\n", argv[0]);
    return 1;
  }
  Params p;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    char* end = nullptr;
    const std::uint64_t v = std::strtoull(argv[i + 1], &end, 10);
    if (*end != '\0') {
      std::fprintf(stderr, "loggopsim_floor_probe: %s wants a whole number, not '%s'\n", flag.c_str(), argv[i + 1]);
      return 1;
    }
    std::uint64_t* field = flag == "-L"   ? &p.L
                           : flag == "-o" ? &p.o
                           : flag == "-g" ? &p.g
                           : flag == "-G" ? &p.G
                           : flag == "-O" ? &p.O
                           : flag == "-S" ? &p.S
                                          : nullptr;
    if (!field) {
      std::fprintf(stderr, "loggopsim_floor_probe: unknown option %s (-L -o -g -G -O -S)\n", flag.c_str());
      return 1;
    }
    *field = v;
  }
  poems::base::SourceManager sources;
  poems::base::DiagnosticEngine diags(sources);
  std::string io_error;
  auto schedule = poems::taskgraph::read_goal_file(argv[1], sources, diags, {}, io_error);
  if (!schedule) {
    if (!io_error.empty()) std::fprintf(stderr, "loggopsim_floor_probe: %s\n", io_error.c_str());
    diags.print(std::cerr);
    return 1;
  }
  Probe probe(*schedule, p);
  schedule.reset();  // the records hold all the probe reads
  const double begin = cpu_seconds();
  probe.run();
  probe.print(cpu_seconds() - begin);
  return 0;
}
