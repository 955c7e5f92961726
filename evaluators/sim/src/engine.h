// Internal state of the simulator: per-rank operation windows, matching
// queues and resource clocks, all in contiguous arrays of POD records.
#pragma once

#include <bit>
#include <span>
#include <vector>

#include "event_queue.h"
#include "huge_pages.h"
#include "poems/sim/simulator.h"
#include "window.h"

namespace poems::sim::detail {

using taskgraph::OpKind;

inline constexpr std::uint32_t kNone = ~std::uint32_t{0};

// A successor list (Slot::start_succ, done_succ) is kNone when empty,
// kInlineSucc | index when it holds exactly one successor (most do: no Edge
// to fetch), kInlineSucc | kInlinePair | first | second << 15 when it holds two
// while the window is shorter than kPairLimit (a dissemination round: its send
// and receive both wait for the previous round's), and otherwise the position
// of its first Edge. Successors are named by their rank-local index modulo the
// field's width (30, 15 or 32 bits), not by their position in the window, so
// dropping the window's retired front (compact) rewrites no list: the
// position is the index minus the window's base, modulo the same width.
inline constexpr std::uint32_t kInlineSucc = std::uint32_t{1} << 31;
inline constexpr std::uint32_t kInlinePair = std::uint32_t{1} << 30;
inline constexpr std::uint32_t kPairLimit = std::uint32_t{1} << 15;
inline bool is_inline_succ(std::uint32_t list) { return list != kNone && (list & kInlineSucc); }  // one or two
inline bool is_inline_pair(std::uint32_t list) {
  return (list & (kInlineSucc | kInlinePair)) == (kInlineSucc | kInlinePair);
}
// Positions in a window whose first slot has rank-local index `base`.
inline std::uint32_t single_pos(std::uint32_t list, std::uint64_t base) {
  return (list - static_cast<std::uint32_t>(base)) & (kInlinePair - 1);
}
inline std::uint32_t pair_first(std::uint32_t list, std::uint64_t base) {
  return (list - static_cast<std::uint32_t>(base)) & (kPairLimit - 1);
}
inline std::uint32_t pair_second(std::uint32_t list, std::uint64_t base) {
  return ((list >> 15) - static_cast<std::uint32_t>(base)) & (kPairLimit - 1);
}

// The first pull of a lazy read asks for this many operations (then doubling
// up to SimulationOptions::chunk_ops).
inline constexpr std::size_t kFirstPull = 4;
// The same for a source read lazily on trial (a GOAL file): its operations
// are already in memory, and longer first pulls miss the cache less often.
// Sweep3D 64x64 from GOAL, best of twelve interleaved runs each on a noisy
// host: 0.611 s with 8, 0.629 s with 16, 0.679 s with 32 (docs/PERFORMANCE.md).
inline constexpr std::size_t kFirstPullOnTrial = 8;
// A lazy window drops its retired front once it is at least this long and
// half the window (amortized O(1) per operation).
inline constexpr std::uint32_t kCompactAt = 4;
// Consumed Edges are dropped (and the lists naming them rewritten) once the
// edge array is longer than this and twice the window.
inline constexpr std::size_t kEdgeCompactAt = 64;

enum SlotFlag : std::uint8_t {
  kStarted = 1,    // start time known; irequires successors notified
  kCompleted = 2,  // completion time known; requires successors notified
  kDelivered = 4,  // Send: the message reached its destination's queues
  // Critical-path mode: the operation depends, directly or through others,
  // on the rank's previous send in program order (so that send starts first
  // in every schedule).
  kFollowsSend = 8,
};

// One operation of a rank's window (64 bytes).
struct Slot {
  Picoseconds ready = 0;  // latest time among the satisfied dependencies
  Picoseconds start = 0;
  // Completion (for a rendezvous send: local part until matched). Before a
  // send starts, in critical-path mode: 1 + the rank-local index of the
  // previous send it follows (kFollowsSend), 0 if none.
  Picoseconds done = 0;
  std::uint64_t amount = 0;  // Calc: duration in ps; Send/Recv: bytes
  std::int32_t peer = 0;
  std::int32_t tag = 0;
  std::uint32_t comm = 0;
  std::uint32_t node = 0;
  std::uint32_t pending = 0;         // unsatisfied dependencies
  std::uint32_t start_succ = kNone;  // successors waiting for the start (edge list)
  std::uint32_t done_succ = kNone;   // successors waiting for the completion
  OpKind kind = OpKind::Calc;
  std::uint8_t cpu = 0;
  std::uint8_t nic = 0;
  std::uint8_t flags = 0;
};
static_assert(sizeof(Slot) == 64);

// A successor link: `succ` is the successor's rank-local index modulo 2^32.
struct Edge {
  std::uint32_t succ;
  std::uint32_t next;
};

// A posted receive (RQ) or an unexpected message (UQ); pooled, linked per rank.
struct Pending {
  std::uint64_t op;     // RQ: the receive's rank-local index; UQ: the send's index at `src`
  std::uint64_t bytes;  // UQ: message size
  Picoseconds arrival;  // UQ: when it arrived
  std::int32_t src;     // RQ: source or kAnySource
  std::int32_t tag;     // RQ: tag or kAnyTag
  std::uint32_t comm;
  std::uint32_t next;
};

struct Queue {
  std::uint32_t head = kNone, tail = kNone;
  bool empty() const { return head == kNone; }
};

// One cache line: window position, matching queues, the windows. What an
// operation's completion writes (finish, compute, overhead) lives with the
// rank's resource clocks (RankWord), on the line its start reads anyway.
struct alignas(64) RankState {
  std::uint64_t base = 0;   // rank-local index of slots[0]
  std::uint32_t head = 0;   // slots[0 .. head) are retired
  bool exhausted = false;   // the source has no more operations for this rank
  bool wants_read = false;  // the window's last operation became ready (lazy reading)
  bool blocked = false;     // observed source: the rank's program waits (pull said kBlocked)
  bool woken = false;       // observed source: pull at least once, the program may go on
  Queue posted, unexpected;
  Window<Slot> slots;  // the window: operations base .. base + slots.size()
  Window<Edge> edges;
};
static_assert(sizeof(RankState) == 64);

// A rank's clock line starts with these words; its CPU clocks follow, then a
// send and a receive clock per NIC (eight words in all for one CPU and one NIC).
enum RankWord : std::uint32_t {
  kFinish,    // latest completion
  kCompute,   // time in Calc operations
  kOverhead,  // CPU time in sends and receives
  kLastSend,  // critical-path mode: 1 + index of the last send read, 0 if none
  kTotalsWords
};

// Zeroed words on 64-byte lines, on huge pages where the kernel allows it.
class LineArray {
 public:
  LineArray() = default;
  ~LineArray();
  void allocate(std::size_t words);  // once
  LineArray(const LineArray&) = delete;
  LineArray& operator=(const LineArray&) = delete;
  std::uint64_t* data() const { return words_; }

 private:
  std::uint64_t* words_ = nullptr;
  std::size_t bytes_ = 0;
};

// Thrown by a lazy attempt on a source without the issues_in_order() promise
// once the promise fails (Engine::add_op).
struct LazyReadingFailed {};

class Engine {
 public:
  // `optimistic`: read `source` lazily although it does not promise order.
  Engine(taskgraph::ScheduleSource& source, const SimulationOptions& options, bool optimistic = false);
  SimulationResult run(std::size_t max_stuck_listed);

 private:
  // Reading the source.
  void read(std::uint32_t r);
  void pull_chunk(std::uint32_t r, std::size_t max_ops);
  void add_op(std::uint32_t r, const taskgraph::Operation& op, const taskgraph::Dependency* deps);
  [[noreturn]] void bad_input(std::uint32_t r, std::uint64_t index, std::uint32_t node, const std::string& what) const;
  // add_op's checks, out of line so its hot path stays small: each names the
  // first problem found.
  [[noreturn, gnu::cold, gnu::noinline]] void reject_op(std::uint32_t r, std::uint64_t index,
                                                        const taskgraph::Operation& op) const;
  [[noreturn, gnu::cold, gnu::noinline]] void reject_dependency(std::uint32_t r, std::uint64_t index,
                                                                const taskgraph::Operation& op,
                                                                std::uint64_t dep) const;

  // Event handling.
  void schedule_ready(std::uint32_t r, std::uint32_t pos);
  void start(std::uint32_t r, std::uint32_t pos);
  void arrive(std::uint32_t sender, std::uint32_t pos);
  Picoseconds receive(std::uint32_t r, std::uint32_t recv_pos, std::uint64_t bytes, std::int32_t src, Picoseconds at);
  void finish_rendezvous(std::uint32_t sender, std::uint64_t op, Picoseconds matched);
  void complete(std::uint32_t r, std::uint32_t pos, Picoseconds t);
  void notify(RankState& rs, std::uint32_t r, std::uint32_t list, Picoseconds t);
  void retire(std::uint32_t r);
  // Retirable: completed by now, and a send's message delivered.
  bool finished(const Slot& s) const {
    return (s.flags & kCompleted) && s.done <= now_ && (s.kind != OpKind::Send || (s.flags & kDelivered));
  }
  void compact(RankState& rs);
  // Always inlined: out of line, GCC finds it pure (prefetches are not side
  // effects to it) and deletes the call, result unused.
  [[gnu::always_inline]] inline void prefetch_upcoming() const;
  void touch(std::uint32_t r) {
    if (touched_count_ < 3) touched_[touched_count_++] = r;
  }
  // Observed sources (direct execution), out of line so the hot paths stay
  // small (observed.cpp). Every call is about a rank the current event
  // touched; a rank whose program may go on is read with the touched ones.
  [[gnu::noinline, gnu::cold]] void observe_completion(std::uint32_t r, std::uint64_t op, Picoseconds t);
  [[gnu::noinline, gnu::cold]] void observe_match(std::uint32_t r, std::uint64_t recv_op, std::uint32_t sender,
                                                  std::uint64_t send_op, Picoseconds t);
  [[gnu::noinline, gnu::cold]] void observe_unexpected(std::uint32_t dest, std::uint32_t sender, std::uint64_t op);
  void wake(std::uint32_t r);
  // Read the ranks the observer names (take_woken, drained); false if it named none.
  [[gnu::noinline, gnu::cold]] bool read_woken();
  [[gnu::noinline, gnu::cold]] bool read_drained();
  bool read_named(std::span<const std::uint32_t> ranks);

  // Matching queues.
  std::uint32_t new_pending();
  void append(Queue& q, std::uint32_t e);
  void unlink(Queue& q, std::uint32_t prev, std::uint32_t e);

  // The deadlock / unmatched-message report.
  void report_stuck(SimulationResult& out, std::size_t max_listed) const;
  std::string describe(std::uint32_t r, std::uint64_t index, const Slot& s) const;
  // "label at file:line:col" for a report (no location: the label alone);
  // empty for node 0 and ids the source does not know.
  std::string node_text(std::uint32_t node) const;

  taskgraph::ScheduleSource& source_;
  SimulationOptions options_;
  LogGOPS p_;
  Picoseconds sync_;  // rendezvous synchronization charged to the sender
  bool queuing_;      // operations wait for busy CPUs and NICs
  bool optimistic_;   // lazy reading on trial (LazyReadingFailed)
  bool lazy_;
  std::uint32_t nranks_;
  WindowMemory windows_;
  HugeVector<RankState> ranks_;
  // Per rank, one or more cache lines: the RankWord totals, then CPU clocks, then NIC
  // send and receive clocks.
  std::uint32_t clock_stride_;  // words, a multiple of 8
  LineArray clocks_;
  std::uint64_t& word(std::uint32_t r, std::uint32_t w) { return clocks_.data()[std::size_t{r} * clock_stride_ + w]; }
  std::uint64_t word(std::uint32_t r, std::uint32_t w) const {
    return clocks_.data()[std::size_t{r} * clock_stride_ + w];
  }
  Picoseconds& cpu_free(std::uint32_t r, std::uint32_t c) { return word(r, kTotalsWords + c); }
  Picoseconds& nic_send_free(std::uint32_t r, std::uint32_t n) { return word(r, kTotalsWords + options_.cpus + 2 * n); }
  Picoseconds& nic_recv_free(std::uint32_t r, std::uint32_t n) {
    return word(r, kTotalsWords + options_.cpus + 2 * n + 1);
  }
  HugeVector<Pending> pending_;
  std::uint32_t free_pending_ = kNone;
  EventQueue queue_;
  taskgraph::OpBuffer buffer_;
  Picoseconds now_ = 0;
  std::uint64_t events_ = 0, operations_ = 0, messages_ = 0, window_ops_ = 0, peak_window_ops_ = 0;
  std::uint32_t touched_[3] = {0, 0, 0};
  std::uint32_t touched_count_ = 0;
  std::vector<Span> timeline_;
  std::vector<std::uint32_t> ready_scratch_;
  std::vector<std::uint32_t> named_scratch_;  // observed sources: ranks to read that no event touched
  ExecutionObserver* observer_;
};

}  // namespace poems::sim::detail
