// Internal state of the simulator: per-rank operation windows, matching
// queues and resource clocks, all in contiguous arrays of POD records.
#pragma once

#include <algorithm>
#include <bit>
#include <chrono>
#include <span>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "calendar_queue.h"
#include "event_queue.h"
#include "poems/base/huge_pages.h"
#include "poems/components/max_min_sharing.h"
#include "poems/components/network.h"
#include "poems/components/noise.h"
#include "poems/components/processor_sharing.h"
#include "poems/sim/simulator.h"
#include "window.h"

namespace poems::taskgraph {
class ExplicitSchedule;
}

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
// The wavefront example 64x64 from GOAL, best of twelve interleaved runs each on a noisy
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
  // Processor sharing (core_sharing.cpp): a send whose CPU part is still in
  // progress on its shared core, and one whose rendezvous was matched before
  // that part ended (its `done` then holds the match's time).
  kCpuInProgress = 16,
  kMatchedEarly = 32,
  // Operation::receive_overhead_deferred: a Recv that completes without its
  // CPU overhead, or the Calc that is that overhead (counted as overhead).
  kOverheadDeferred = 64,
};

// One operation of a rank's window (64 bytes).
struct Slot {
  // Matched semantics: the latest time among the satisfied dependencies.
  // loggopsim: the stamp of its start (LoggopsimMarks).
  Picoseconds ready = 0;
  Picoseconds start = 0;  // loggopsim: the stamp of its completion (LoggopsimMarks)
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
  kTotalsWords,
  // With resource queuing (so never kLastSend's use), under the loggopsim
  // semantics: the time the rank's last event was queued again for (lgs_park).
  kLastRequeue = kLastSend
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

// A vector of trivially copyable records whose push_back inlines (that of
// std::vector does not, in the event handlers: a call per operation freed).
template <class T>
class Appender {
 public:
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  void clear() { size_ = 0; }
  T& operator[](std::size_t i) { return items_[i]; }
  const T& operator[](std::size_t i) const { return items_[i]; }
  // Forced: GCC's unit-growth limit otherwise drops it out of line in the
  // event loop whenever code elsewhere in simulator.cpp grows (+2 M
  // instructions on the 16x16 export when it does).
  [[gnu::always_inline]] void push_back(const T& v) {
    if (size_ == items_.size()) [[unlikely]]
      grow();
    items_[size_++] = v;
  }

 private:
  [[gnu::noinline]] void grow() { items_.resize(std::max<std::size_t>(64, 2 * items_.size())); }
  std::vector<T> items_;
  std::size_t size_ = 0;
};

// MPI's matching rule: a receive of (src, tag, comm), either of the first
// two maybe a wildcard, takes a message from `src` with `tag` (a message
// tagged kAnyTag, as LogGOPSim allows, matches any receive) on `comm`.
inline bool receive_matches(std::int32_t recv_src, std::int32_t recv_tag, std::uint32_t recv_comm, std::int32_t src,
                            std::int32_t tag, std::uint32_t comm) {
  return (recv_src == taskgraph::kAnySource || recv_src == src) &&
         (recv_tag == taskgraph::kAnyTag || tag == taskgraph::kAnyTag || recv_tag == tag) && recv_comm == comm;
}

// Thrown by a lazy attempt on a source without the issues_in_order() promise
// once the promise fails (Engine::add_op).
struct LazyReadingFailed {};

// The largest time the clock may reach: every cost is checked when its
// operation is read to be at most kMaxCost, and every event's time at most
// kMaxTime when it is taken, so no sum of a time and a cost wraps.
inline constexpr Picoseconds kMaxTime = Picoseconds{1} << 62;
inline constexpr Picoseconds kMaxCost = Picoseconds{1} << 61;
// Messages are smaller than 2^53 bytes (exact in a double, as in the GOAL reader).
inline constexpr std::uint64_t kMaxMessageBytes = std::uint64_t{1} << 53;

// loggopsim: a slot's `ready` word holds the stamp of the event and list
// walk (the "mark") in which it started, its `start` word that of its
// completion: the event's serial (its pop count) shifted past the mark,
// which orders the operations one event frees as LogGOPSim's list of
// executable nodes does (lgs_freed_on_read).
struct LoggopsimMarks {
  static std::uint64_t stamp(std::uint64_t event, std::uint32_t mark) { return event << 16 | mark; }
};

// The engine, one instantiation per message-progress semantics: kLoggopsim
// false is the matched semantics (resources reserved first come first
// served, a message processed once its receive is posted), true reproduces
// LogGOPSim (docs/simulator.md, the two rule tables).
template <bool kLoggopsim>
class Engine {
 public:
  // `optimistic`: read `source` lazily although it does not promise order.
  Engine(taskgraph::ScheduleSource& source, const SimulationOptions& options, bool optimistic = false);
  // A run that ends stuck still holds its ranks' windows: those taken from
  // the heap (over 64 KiB) go back here; the chunks go with windows_.
  ~Engine() {
    if (windows_.large_in_use() == 0) return;
    for (RankState& rs : ranks_) {
      rs.slots.release(windows_);
      rs.edges.release(windows_);
    }
  }
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;
  SimulationResult run(std::size_t max_stuck_listed);

 private:
  using QueuedEvent = std::conditional_t<kLoggopsim, StampedEvent, Event>;
  using Events = std::conditional_t<kLoggopsim, CalendarQueue<>, EventQueue>;

  // Reading the source.
  void read(std::uint32_t r);
  void pull_chunk(std::uint32_t r, std::size_t max_ops);
  // From a schedule in memory: decoded straight into the slots, no OpBuffer.
  // Out of line, so that the decoding loop stays inlined into it.
  [[gnu::noinline]] void pull_explicit(std::uint32_t r, std::size_t max_ops);
  // pull_explicit's decoding loop: unchecked (kTrusted, see add_op) inlined
  // into it; checked out of line, so that its error paths do not crowd the
  // registers of the unchecked loop.
  template <bool kTrusted>
  [[gnu::always_inline]] inline void decode_explicit(std::uint32_t r, std::size_t n);
  [[gnu::noinline]] void decode_checked(std::uint32_t r, std::size_t n);
  // What both reading paths do around a chunk.
  [[gnu::always_inline]] inline void make_room(RankState& rs, std::size_t n, std::size_t deps);
  void count_read(std::size_t n);
  // `deps.next()` gives the operation's dependencies one by one.
  // Inlined into each reading loop (one per source kind). kTrusted: the
  // chunk is known to pass every check (trusted_reads_, and the window stays
  // below kInlinePair), so none is made, and resources are queued.
  template <bool kTrusted, class Dependencies>
  [[gnu::always_inline]] inline void add_op(std::uint32_t r, RankState& rs, const taskgraph::Operation& op,
                                            Dependencies& deps);
  [[noreturn]] void bad_input(std::uint32_t r, std::uint64_t index, std::uint32_t node, const std::string& what) const;
  // add_op's checks, out of line so its hot path stays small: each names the
  // first problem found. The operation by value, so add_op's need not live
  // in memory.
  [[noreturn, gnu::cold, gnu::noinline]] void reject_op(std::uint32_t r, std::uint64_t index,
                                                        taskgraph::Operation op) const;
  [[noreturn, gnu::cold, gnu::noinline]] void reject_dependency(std::uint32_t r, std::uint64_t index,
                                                                std::uint32_t node, std::uint64_t dep) const;
  [[noreturn, gnu::cold, gnu::noinline]] void reject_time(std::uint32_t r, std::uint64_t index, std::uint32_t node,
                                                          const std::string& what) const;
  [[noreturn, gnu::cold, gnu::noinline]] void clock_overflow() const;

  // Event handling, matched semantics.
  [[gnu::always_inline]] inline void schedule_ready(std::uint32_t r, std::uint32_t pos);
  void start(std::uint32_t r, std::uint32_t pos);
  void arrive(std::uint32_t sender, std::uint32_t pos);
  // Returns the processing start, or kDeferred under processor sharing
  // (which then reports the match and finishes a rendezvous itself).
  Picoseconds receive(std::uint32_t r, std::uint32_t recv_pos, std::uint64_t bytes, std::int32_t src,
                      std::uint64_t send_op, Picoseconds at);
  static constexpr Picoseconds kDeferred = ~Picoseconds{0};
  void finish_rendezvous(std::uint32_t sender, std::uint64_t op, Picoseconds matched);
  void complete(std::uint32_t r, std::uint32_t pos, Picoseconds t);
  // Inlined for the lists most operations have (none, or one successor
  // inline); the rest out of line (notify_list).
  [[gnu::always_inline]] inline void notify(RankState& rs, std::uint32_t r, std::uint32_t list, Picoseconds t);
  [[gnu::noinline]] void notify_list(RankState& rs, std::uint32_t r, std::uint32_t list, Picoseconds t);
  // Event handling, loggopsim semantics (loggopsim_handlers.h).
  void lgs_start(std::uint32_t r, std::uint32_t pos);
  void lgs_arrive(std::uint32_t sender, std::uint32_t pos);
  void lgs_complete(std::uint32_t r, std::uint32_t pos);
  void lgs_finish_rendezvous(std::uint32_t sender, std::uint64_t op, std::uint32_t cpu, std::uint32_t nic);
  // The current event waits for rank `rank`'s resources of class `cls`
  // (kParkCalc: the CPU; kParkSend: CPU and send NIC; kParkArrive: CPU and
  // receive NIC) until `at`: queued again then, with its stamp, or parked.
  void lgs_requeue(Picoseconds at, std::uint32_t rank, std::uint32_t cls) {
    if constexpr (kLoggopsim) {
      ++requeued_;
      if (parking_) {
        // The first event queued again for a time goes alone; the clock
        // line holding the time was just read by the caller's test.
        std::uint64_t& last = word(rank, kLastRequeue);
        if (lot_in_hand_ != kNone) [[unlikely]] {
          // A lot's first member, queued again: it stays the lot's first
          // (lgs_settle), so that the lot does not shed one member a move.
          last = at;
          member_requeued_at_ = at;
          return;
        }
        if (last == at) [[unlikely]]
          return lgs_park(at, rank, cls);
        last = at;
      }
      queue_.push(QueuedEvent{at, current_key_, current_stamp_});
    }
  }
  // Parked requeues (docs/simulator.md, "Parked requeues"). LogGOPSim
  // queues an event that finds its CPU busy again at the time the CPU is
  // free; when k operations of a rank wait for its CPU, each release pops
  // all k and queues k - 1 again: quadratic. On ranks with one CPU and one
  // NIC, the events of one rank and class queued again for the same time
  // form a lot: the queue holds one entry for it, (time, smallest stamp).
  // The first event queued again for a time goes alone (most do: a lot costs
  // more than one event), the second and later ones of the same class form
  // the lot.
  // When that entry pops, its first member is handled; if the CPU is then
  // busy past now, nothing can change the rank's clocks before the time
  // moves on (every event that takes one of them needs the CPU), so every
  // other member would be queued again at the same time, max(CPU, the
  // class's NIC): the lot moves there in one push, and its members are
  // counted as the events and requeues they stand for. Otherwise its
  // members are queued one by one where they were.
  enum ParkClass : std::uint32_t { kParkCalc, kParkSend, kParkArrive, kParkClasses };
  static constexpr std::uint64_t kLotKey = std::uint64_t{1} << 63;  // ranks < 2^31: no event key has it
  struct Parked {
    std::uint64_t stamp, key;
  };
  struct Lot {
    Picoseconds time = 0;
    std::uint32_t rank = 0, cls = 0;
    std::size_t first = 0;  // members[first ..) wait
    std::vector<Parked> members;
  };
  // A second or later event of `rank` queued again for `at`: joins, or starts, the lot.
  [[gnu::noinline]] void lgs_park(Picoseconds at, std::uint32_t rank, std::uint32_t cls);
  // A lot's entry popped: the key of its first member, taken off it, whose
  // event is handled next (its stamp is the entry's); then lgs_settle: the
  // lot moves on, or is dissolved. Out of the event loop's way; the lot in
  // hand is a member, not a local, so the loop keeps its registers.
  [[gnu::noinline]] std::uint64_t lgs_unpark(std::uint32_t lot);
  [[gnu::noinline]] void lgs_settle();
  std::uint32_t lot_in_hand_ = kNone;
  Picoseconds member_requeued_at_ = 0;  // the lot in hand's first member was queued again for this time (0: it was not)
  // The loggopsim event loop's body for one event.
  [[gnu::always_inline]] inline void lgs_handle(std::uint64_t key, std::uint64_t stamp);
  bool parking_ = false;
  std::vector<std::uint32_t> lot_of_;  // per rank and class: its lot, or kNone
  std::vector<Lot> lots_;
  std::vector<std::uint32_t> free_lots_;
  // Queues the operations the event freed: per rank in ascending order, in
  // the order they were freed, then by kind as LogGOPSim sorts them.
  void lgs_queue_freed();
  // Queues one freed operation: when its CPU (and a send's NIC) is free.
  [[gnu::always_inline]] inline void lgs_push_freed(std::uint32_t r, std::uint32_t pos);
  // An operation read with every dependency satisfied: where LogGOPSim would
  // have listed it among the event's freed operations.
  void lgs_freed_on_read(std::uint32_t r, std::uint64_t index, std::uint32_t pos, std::uint64_t last_mark);
  [[noreturn, gnu::cold, gnu::noinline]] void lgs_protocol_mismatch(std::uint32_t r, std::uint32_t recv_pos,
                                                                    std::uint64_t bytes) const;
  // The matched engine's costs; in the critical path under the loggopsim
  // semantics, LogGOPSim's (which differ for 0-byte messages only).
  Picoseconds send_cpu_cost(std::uint64_t bytes) const {
    return unexpected_at_arrival_ && bytes == 0 ? p_.o + lgs_per_byte(0, p_.O) : p_.send_cpu(bytes);
  }
  Picoseconds send_nic_cost(std::uint64_t bytes) const {
    return unexpected_at_arrival_ && bytes == 0 ? p_.g + lgs_per_byte(0, p_.G) : p_.send_nic(bytes);
  }
  Picoseconds recv_cpu_cost(std::uint64_t bytes) const {
    return unexpected_at_arrival_ && bytes == 0 ? p_.o + std::max(lgs_per_byte(0, p_.O), lgs_per_byte(0, p_.G))
                                                : p_.recv_cpu(bytes);
  }
  Picoseconds recv_nic_cost(std::uint64_t bytes) const {
    return unexpected_at_arrival_ && bytes == 0 ? p_.g + lgs_per_byte(0, p_.G) : p_.recv_nic(bytes);
  }
  // A message's costs under the loggopsim semantics, remembered for the last
  // sizes seen (a schedule has few): the per-byte terms cost a division and
  // three branches each, on every send and every arrival.
  struct LgsCosts {
    std::uint64_t bytes = ~std::uint64_t{0};  // no message is this large (kMaxMessageBytes)
    Picoseconds send_cpu = 0, nic = 0, recv_cpu = 0;
  };
  LgsCosts lgs_costs_[4];
  const LgsCosts& lgs_costs(std::uint64_t bytes) {
    LgsCosts& c = lgs_costs_[(bytes ^ bytes >> 8) & 3];
    if (c.bytes != bytes) [[unlikely]] {
      c.bytes = bytes;
      c.send_cpu = p_.o + lgs_per_byte(bytes, p_.O);
      c.nic = p_.g + lgs_per_byte(bytes, p_.G);
      // max in unsigned arithmetic, as LogGOPSim (it matters for 0 bytes only).
      c.recv_cpu = p_.o + std::max(lgs_per_byte(bytes, p_.O), lgs_per_byte(bytes, p_.G));
    }
    return c;
  }
  // LogGOPSim's per-message costs: (s-1)·X in unsigned 64-bit arithmetic,
  // so a 0-byte message's per-byte term is -X (docs/simulator.md).
  Picoseconds lgs_per_byte(std::uint64_t bytes, FemtosecondsPerByte x) const {
    return bytes == 0 ? Picoseconds{0} - LogGOPS::per_byte(2, x) : LogGOPS::per_byte(bytes, x);
  }

  // Inlined into the event loop; what ends or compacts a window out of line.
  [[gnu::always_inline]] inline void retire(std::uint32_t r);
  [[gnu::noinline]] void retire_all(RankState& rs);
  // Retirable: completed by now, and a send's message delivered.
  // Under the loggopsim semantics an operation completes at the time of its
  // event (lgs_complete), so a completed one is done by now.
  bool finished(const Slot& s) const {
    if constexpr (kLoggopsim)
      return (s.flags & kCompleted) && (s.kind != OpKind::Send || (s.flags & kDelivered));
    else
      return (s.flags & kCompleted) && s.done <= now_ && (s.kind != OpKind::Send || (s.flags & kDelivered));
  }
  void compact(RankState& rs);
  // Out of line: rare, and its frame would weigh on every compact().
  [[gnu::noinline]] void compact_edges(RankState& rs);
  // Always inlined: out of line, GCC finds it pure (prefetches are not side
  // effects to it) and deletes the call, result unused.
  [[gnu::always_inline]] inline void prefetch_upcoming() const;
  // A queued event's rank, for the prefetches: a parked lot's entry
  // (kLotKey) reads as rank 0, a harmless guess.
  static std::uint32_t key_rank(std::uint64_t key) { return static_cast<std::uint32_t>(key >> 32) & 0x7fffffffu; }
  // The same for the one event the queue says comes next (RadixQueue::peek),
  // whatever its time: most times have one or two events.
  [[gnu::always_inline]] inline void prefetch_next() const;
  void touch(std::uint32_t r) {
    if (touched_count_ < 3) touched_[touched_count_++] = r;
  }
  // An event touches at most three ranks (its own, a message's sender and
  // destination). The matched semantics visits them all after the event;
  // the loggopsim semantics lists only those with work left: a window to
  // read, and a window whose head operation finished (the only way a head
  // can become retirable there, since an operation completes at the time of
  // its event), so no head slot is loaded for nothing.
  void mark_wants_read(RankState& rs, std::uint32_t r) {
    if constexpr (kLoggopsim)
      if (!rs.wants_read && to_read_count_ < 3) to_read_[to_read_count_++] = r;
    rs.wants_read = true;
  }
  void head_finished(std::uint32_t r) {
    for (std::uint32_t i = 0; i < to_retire_count_; ++i)
      if (to_retire_[i] == r) return;
    if (to_retire_count_ < 3) to_retire_[to_retire_count_++] = r;
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
  // Takes the first entry of `q` (posting or arrival order) that
  // `accepts(entry)` off the queue into `out`; false if none does.
  template <class Accepts>
  [[gnu::always_inline]] inline bool take_first(Queue& q, Accepts accepts, Pending& out);
  // The posted receive of `rs` that a message (src, tag, comm) matches, taken off its queue.
  [[gnu::always_inline]] inline bool take_posted(RankState& rs, std::int32_t src, std::int32_t tag, std::uint32_t comm,
                                                 Pending& out) {
    return take_first(
        rs.posted, [=](const Pending& p) { return receive_matches(p.src, p.tag, p.comm, src, tag, comm); }, out);
  }
  // A message no posted receive matched waits in `dest`'s unexpected queue.
  void queue_unexpected(std::uint32_t dest, std::uint32_t sender, std::uint64_t op, std::uint64_t bytes,
                        std::int32_t tag, std::uint32_t comm);
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
  taskgraph::ExplicitSchedule* explicit_;  // source_, if a schedule in memory (pull_explicit)
  SimulationOptions options_;
  LogGOPS p_;
  Picoseconds sync_;  // rendezvous synchronization charged to the sender
  bool queuing_;      // operations wait for busy CPUs and NICs
  // Critical path under the loggopsim semantics: an unexpected message is
  // processed when it arrives, so its receive completes at the later of its
  // posting and the end of that processing.
  bool unexpected_at_arrival_;
  bool optimistic_;  // lazy reading on trial (LazyReadingFailed)
  bool lazy_;
  std::uint32_t nranks_;
  std::uint64_t max_bytes_;  // the largest message whose costs stay within kMaxCost
  // A schedule in memory whose every operation passes add_op's checks (the
  // schedule's maxima, peers and dependencies against this run's limits),
  // read with resource queuing: pull_explicit adds its chunks unchecked.
  bool trusted_reads_ = false;
  WindowMemory windows_;
  base::HugeVector<RankState> ranks_;
  // Per rank, one or more cache lines: the RankWord totals, then CPU clocks, then NIC
  // send and receive clocks.
  std::uint32_t clock_stride_;  // words, a multiple of 8
  LineArray clocks_;
  std::uint64_t& word(std::uint32_t r, std::uint32_t w) { return clocks_.data()[std::size_t{r} * clock_stride_ + w]; }
  std::uint64_t word(std::uint32_t r, std::uint32_t w) const {
    return clocks_.data()[std::size_t{r} * clock_stride_ + w];
  }
  // A rank's CPU: its own, or (ranks time-sharing a node's cores) the core it runs on.
  Picoseconds& cpu_free(std::uint32_t r, std::uint32_t c) {
    if constexpr (!kLoggopsim)
      if (shared_cores_) [[unlikely]]
        return clocks_.data()[core_word_[std::size_t{r} * options_.cpus + c]];
    return word(r, kTotalsWords + c);
  }
  // Under a network that is not flat, a rank's own NIC clocks below are its
  // shared-memory channel (messages within its node); messages between nodes
  // take the node's NIC clocks, shared by its ranks.
  Picoseconds& node_nic_send_free(std::uint32_t r, std::uint32_t n) {
    return clocks_.data()[nic_word_[r] + 2 * std::size_t{n}];
  }
  Picoseconds& node_nic_recv_free(std::uint32_t r, std::uint32_t n) {
    return clocks_.data()[nic_word_[r] + 2 * std::size_t{n} + 1];
  }
  Picoseconds& nic_send_free(std::uint32_t r, std::uint32_t n) { return word(r, kTotalsWords + options_.cpus + 2 * n); }
  Picoseconds& nic_recv_free(std::uint32_t r, std::uint32_t n) {
    return word(r, kTotalsWords + options_.cpus + 2 * n + 1);
  }
  // The machine's nodes and network, when not flat (docs/network.md): null
  // keeps the flat fast path. Set up by setup_network().
  const components::Network* net_ = nullptr;
  // OS noise, if any: a computation of rank r started at t ends at
  // calc_end(r, t, work) (the rank's detours that fall into it added).
  const components::Noise* noise_ = nullptr;
  std::uint32_t noisy_ranks_ = 0;  // companions (from companions_from on) have none
  Picoseconds calc_end(std::uint32_t r, Picoseconds t, Picoseconds work) const {
    if (noise_ && r < noisy_ranks_) [[unlikely]]
      return noise_->finish(r, t, work);
    return t + work;
  }
  components::RankPlacement placement_;
  bool shared_cores_ = false;           // some node has fewer cores than its ranks' CPUs
  std::vector<std::size_t> core_word_;  // per rank and CPU, if shared_cores_: its core's clock
  std::vector<std::size_t> nic_word_;   // per rank: its node's first NIC clock (send; receive is +1)

  // Processor sharing on shared cores (docs/network.md, "Time sharing";
  // core_sharing.cpp): the computations and message overheads in progress
  // on a core share it equally, each a job of a ProcessorSharing; the end of
  // a job is an event of its own. A rank's CPU does one job at a time: what
  // asks for it meanwhile waits in the CPU's queue, in order.
  bool processor_sharing_ = false;
  enum class CpuTask : std::uint8_t {
    kStartOp,     // waiting: a Calc or Send of the rank to start
    kReceive,     // waiting: a matched message to process
    kCalc,        // in progress
    kSendCpu,     // in progress: a send's o + (s-1)O
    kReceiveCpu,  // in progress: a receive's processing
  };
  struct CpuJob {
    std::uint64_t op = 0;       // the operation's rank-local index
    std::uint64_t send_op = 0;  // kReceive, kReceiveCpu: the matched send's index at `src`
    std::uint64_t bytes = 0;
    Picoseconds begin = 0;  // in progress: when it began on the core
    Picoseconds work = 0;
    std::uint32_t rank = 0, cpu = 0;
    std::int32_t src = 0;
    std::uint32_t next = kNone;  // the CPU's queue, or the free list
    CpuTask task = CpuTask::kStartOp;
  };
  std::vector<CpuJob> cpu_jobs_;
  std::uint32_t free_cpu_jobs_ = kNone;
  std::vector<std::uint32_t> core_of_;   // per rank and CPU: its shared core, or kNone (a core of its own)
  std::vector<std::uint32_t> cpu_busy_;  // per rank and CPU: the job in progress (or about to begin), or kNone
  std::vector<std::uint32_t> cpu_head_, cpu_tail_;  // per rank and CPU: the queue of what waits for it
  std::vector<components::ProcessorSharing> cores_;
  std::vector<Picoseconds> core_armed_;  // per core: the time of its current wakeup event
  // Core event keys (with kNetKey): a job's begin (kBeginBit, the job) or a
  // core's wakeup (the core); rank bits stay zero, as the prefetches need.
  static constexpr std::uint32_t kCoreBit = std::uint32_t{1} << 29;
  static constexpr std::uint32_t kBeginBit = std::uint32_t{1} << 28;
  static constexpr std::uint32_t kCoreMask = kBeginBit - 1;
  std::uint32_t shared_core(std::uint32_t r, std::uint32_t c) const {
    return core_of_[std::size_t{r} * options_.cpus + c];
  }
  void setup_processor_sharing(const std::vector<std::size_t>& core_words);
  std::uint32_t new_cpu_job();
  void enqueue_cpu(std::size_t rc, std::uint32_t job);
  // start() of a Calc or Send whose CPU is a shared core.
  [[gnu::noinline]] void shared_start(std::uint32_t r, std::uint32_t pos);
  void begin_op(std::uint32_t r, std::uint32_t pos);  // its CPU free
  void begin_receive(std::uint32_t job);              // its CPU free
  // The job takes the CPU now and begins on the core at `at` (>= now).
  void run_job(std::uint32_t job, Picoseconds at);
  void arm_core(std::uint32_t core);
  void end_job(std::uint32_t job);
  void core_event(std::uint32_t low);
  // After an event that is not an operation's: read and retire what it touched.
  void settle_touched();
  LogGOPS intra_;  // between ranks of one node
  Picoseconds intra_sync_ = 0;
  // Message-size regimes (docs/network.md): between nodes over p_, within a node over intra_.
  std::vector<components::SizeRegime> net_regimes_, intra_regimes_;
  bool regimes_ = false;
  // The parameters that price a message of `bytes` between ranks of one node (local) or of two.
  const LogGOPS& msg_params(bool local, std::uint64_t bytes) const {
    if (!regimes_) [[likely]]
      return local ? intra_ : p_;
    return local ? components::regime_params(intra_, intra_regimes_, bytes)
                 : components::regime_params(p_, net_regimes_, bytes);
  }
  // A rank's message to itself on a machine with copy_G: one copy in the
  // rank's memory (Open MPI's self transport), no latency, gap or wire; the
  // copy's (s-1) copy_G is paid half by the send's CPU and half by the
  // receive's (O = copy_G / 2), the node's eager limit kept (docs/network.md).
  bool self_copy_ = false;
  LogGOPS self_;
  bool self_message(std::uint32_t a, std::uint32_t b) const { return a == b && self_copy_; }
  // The parameters of a message of `bytes` from rank a to rank b.
  const LogGOPS& route_params(std::uint32_t a, std::uint32_t b, std::uint64_t bytes) const {
    if (self_message(a, b)) [[unlikely]]
      return self_;
    return msg_params(same_node(a, b), bytes);
  }
  NetworkTraffic traffic_;
  std::vector<std::uint32_t> route_;  // scratch: the route of the message being sent
  std::vector<std::pair<std::string_view, std::uint64_t>> class_bytes_;
  void count_traffic(std::uint32_t a, std::uint32_t b, std::uint64_t bytes, bool local);
  void finish_traffic(SimulationResult& out) const;
  // Places the ranks, finds the clocks of each rank's cores and NICs; the
  // node clocks start at word `first`. Returns how many words they take.
  std::size_t setup_network(std::size_t first);
  // The rendezvous synchronization of a message of `bytes` between ranks a
  // and b (their path's delay included).
  Picoseconds pair_sync(std::uint32_t a, std::uint32_t b, std::uint64_t bytes) const;
  bool same_node(std::uint32_t a, std::uint32_t b) const { return placement_.node_of[a] == placement_.node_of[b]; }
  // A message between ranks a and b: the parameters that price it, and its
  // path's delay beyond L.
  const LogGOPS& pair_params(std::uint32_t a, std::uint32_t b, std::uint64_t bytes) const {
    if constexpr (!kLoggopsim)
      if (net_) return route_params(a, b, bytes);
    return p_;
  }
  // The CPU overhead of receiving `bytes` from rank `src` at rank `r` that
  // a deferred receive leaves to its wait: o + (s-1)O. The bytes' own time,
  // (s-1)G, stays with the message (receive(), net_receive()).
  Picoseconds receive_overhead(std::uint32_t src, std::uint32_t r, std::uint64_t bytes) const {
    const LogGOPS& p = pair_params(src, r, bytes);
    return p.o + LogGOPS::per_byte(bytes, p.O);
  }
  [[gnu::cold, gnu::noinline]] void defer_receive_overhead(std::uint32_t r, std::uint64_t index, Slot& s,
                                                           const taskgraph::Operation& op);
  bool rendezvous(std::uint32_t a, std::uint32_t b, std::uint64_t bytes) const {
    return pair_params(a, b, bytes).rendezvous(bytes);
  }
  // The send of a machine that is not flat (start()): returns its start
  // time, sets `done` (its CPU part's end).
  [[gnu::noinline]] Picoseconds net_send(std::uint32_t r, std::uint32_t pos, Picoseconds& done);
  [[gnu::noinline]] Picoseconds net_receive(std::uint32_t r, std::uint32_t recv_pos, std::uint64_t bytes,
                                            std::int32_t src, std::uint64_t send_op, Picoseconds at);
  // Max-min contention (docs/network.md, "Contention"): a message between
  // nodes is a flow over its resources (the source node's NIC, the route's
  // links each way on its own, a backbone, the destination node's NIC),
  // started after its latency by an event of its own; the flow that ends
  // next wakes the loop, and its message arrives then.
  bool flows_ = false;
  components::MaxMinSharing sharing_;
  std::unordered_map<std::uint64_t, std::uint32_t> resource_of_;  // a physical resource's key -> sharing_'s id
  struct FlowMessage {
    std::uint32_t sender = 0;
    std::uint64_t op = 0;  // the send's rank-local index
    double bytes = 0;
    double penalty = 1;                // its weight in the sharing (MaxMinSharing::add)
    std::vector<std::uint32_t> route;  // sharing_'s resource ids
  };
  std::vector<FlowMessage> flow_messages_;
  std::vector<std::uint32_t> free_flow_messages_;
  std::uint32_t wakeup_serial_ = 0;  // only the latest wakeup event is current
  Picoseconds armed_ = components::MaxMinSharing::kNever;
  // Event keys of the network (bit 63; rank bits 32..62 zero, so the
  // prefetches read rank 0): a flow's start (bit 31, its FlowMessage) or a
  // wakeup (its serial).
  static constexpr std::uint64_t kNetKey = std::uint64_t{1} << 63;
  static constexpr std::uint32_t kFlowStartBit = std::uint32_t{1} << 31;
  // The rates are recomputed once an instant (MaxMinSharing::update), by an
  // event of their own after the starts and ends queued for it.
  static constexpr std::uint32_t kRerateBit = std::uint32_t{1} << 30;
  static constexpr std::uint32_t kSerialMask = kCoreBit - 1;  // bit 29 is a core event's (kCoreBit)
  bool rerate_queued_ = false;
  std::uint32_t flow_resource(std::uint64_t key, FemtosecondsPerByte per_byte);
  // The flow of the send at `pos` of rank r to `dst`, which leaves its CPU
  // at `leaves` (its o done): its bytes go on the wire once `latency` (L)
  // and the route's latency are paid (wire overhead bytes come out of them).
  void start_flow(std::uint32_t r, std::uint32_t pos, std::uint32_t dst, Picoseconds leaves, Picoseconds latency);
  void arm_wakeup();
  // A network event: a flow starts, the rates are recomputed, or (a current
  // wakeup) the next flow ends; returns the ended flow's message as an event
  // key for arrive(), or kNetKey if none.
  [[gnu::noinline]] std::uint64_t net_event(std::uint64_t key);
  base::HugeVector<Pending> pending_;
  std::uint32_t free_pending_ = kNone;
  Events queue_;
  taskgraph::OpBuffer buffer_;
  Picoseconds now_ = 0;
  std::uint64_t events_ = 0, operations_ = 0, messages_ = 0, window_ops_ = 0, peak_window_ops_ = 0;
  // The event count at which the progress hook is next called (never, without a hook).
  std::uint64_t progress_at_ = ~std::uint64_t{0};
  std::uint64_t total_operations_ = 0;  // known in advance (a schedule in memory), else 0
  [[gnu::noinline, gnu::cold]] void report_progress(std::chrono::steady_clock::time_point start, bool finished);
  std::uint32_t touched_[3] = {0, 0, 0};
  std::uint32_t touched_count_ = 0;
  std::uint32_t to_read_[3] = {0, 0, 0}, to_retire_[3] = {0, 0, 0};  // loggopsim (mark_wants_read, head_finished)
  std::uint32_t to_read_count_ = 0, to_retire_count_ = 0;
  std::vector<Span> timeline_;
  std::vector<std::uint32_t> ready_scratch_;
  std::vector<std::uint32_t> named_scratch_;  // observed sources: ranks to read that no event touched
  ExecutionObserver* observer_;
  // loggopsim: the event being handled, the marks it made, what it freed.
  struct Freed {
    std::uint32_t rank;
    std::uint32_t mark;
    std::uint32_t pos;
    std::uint32_t unused = 0;  // 16 bytes: the vector's size() is a shift, not a division
  };
  std::uint64_t current_key_ = 0, current_stamp_ = 0, next_stamp_ = 0, requeued_ = 0;
  // Dependencies that carry LogGOPSim's order (Dependency::order): (rank,
  // the operation waited on, the waiting one, irequires) -> order. Empty for
  // schedules in program order, nearly always.
  struct EdgeKey {
    std::uint64_t on, waiting;
    std::uint32_t rank;
    bool on_start;
    bool operator==(const EdgeKey&) const = default;
  };
  struct EdgeKeyHash {
    std::size_t operator()(const EdgeKey& k) const {
      return std::hash<std::uint64_t>{}(k.on * 0x9e3779b97f4a7c15ull ^ k.waiting ^ (std::uint64_t{k.rank} << 40) ^
                                        k.on_start);
    }
  };
  std::unordered_map<EdgeKey, std::uint32_t, EdgeKeyHash> edge_order_;
  // After the walk of `on`'s list that appended freed_[from ..]: those in
  // the order their dependencies carry, if they carry one.
  void lgs_order_walk(std::uint32_t r, std::uint64_t on, bool on_start, std::size_t from);
  std::uint32_t mark_ = 0;
  Appender<Freed> freed_;
  struct ByKind {
    std::uint8_t kind;  // LogGOPSim's operation type: send 1, recv 2, calc 3
    std::uint32_t pos;
  };
  std::vector<ByKind> by_kind_;
};

// The loggopsim event handlers (loggopsim_handlers.h, included by
// simulator.cpp only): the two an event calls inlined into the event loop,
// lgs_complete into them.
template <>
[[gnu::always_inline]] inline void Engine<true>::lgs_start(std::uint32_t r, std::uint32_t pos);
template <>
[[gnu::always_inline]] inline void Engine<true>::lgs_arrive(std::uint32_t sender, std::uint32_t pos);
template <>
[[gnu::always_inline]] inline void Engine<true>::lgs_complete(std::uint32_t r, std::uint32_t pos);
template <>
void Engine<true>::lgs_finish_rendezvous(std::uint32_t sender, std::uint64_t op, std::uint32_t cpu, std::uint32_t nic);
template <>
void Engine<true>::lgs_queue_freed();
template <>
void Engine<true>::lgs_order_walk(std::uint32_t r, std::uint64_t on, bool on_start, std::size_t from);
template <>
void Engine<true>::lgs_freed_on_read(std::uint32_t r, std::uint64_t index, std::uint32_t pos, std::uint64_t last_mark);
template <>
void Engine<true>::lgs_protocol_mismatch(std::uint32_t r, std::uint32_t recv_pos, std::uint64_t bytes) const;

}  // namespace poems::sim::detail
