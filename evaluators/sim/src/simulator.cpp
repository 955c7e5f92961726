// The simulation core: one event queue, two event kinds (an operation became
// ready; a message arrived), resources granted first come first served in
// event order. See docs/simulator.md for the semantics.
#include "poems/sim/simulator.h"

#include <time.h>
#include <algorithm>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>

#include "engine.h"
#include "engine_hot.h"
#include "loggopsim_handlers.h"
#include "poems/taskgraph/explicit_schedule.h"
#include "poems/taskgraph/memory_budget.h"

namespace poems::sim {
namespace detail {

using taskgraph::kAnyTag;

LineArray::~LineArray() {
  if (words_) base::deallocate_huge(words_, bytes_, 64);
}

void LineArray::allocate(std::size_t words) {
  bytes_ = std::max<std::size_t>(words * sizeof(std::uint64_t), 64);
  words_ = static_cast<std::uint64_t*>(base::allocate_huge(bytes_, 64));
  std::memset(words_, 0, bytes_);
}

template <bool L>
Engine<L>::Engine(taskgraph::ScheduleSource& source, const SimulationOptions& options, bool optimistic)
    : source_(source),
      explicit_(dynamic_cast<taskgraph::ExplicitSchedule*>(&source)),
      options_(options),
      p_(options.params),
      sync_(components::rendezvous_sync(options.params, options.rendezvous_handshake)),
      queuing_(options.resource_queuing),
      unexpected_at_arrival_(options.semantics == Semantics::Loggopsim && !options.resource_queuing),
      optimistic_(optimistic),
      lazy_(optimistic || source.issues_in_order()),
      nranks_(source.ranks()),
      windows_(lazy_),
      observer_(options.observer) {
  if (options.cpus == 0 || options.cpus > 256) throw SimulationError("cpus per process must be in 1..256");
  if (observer_ && !lazy_) throw SimulationError("an observed source must issue its operations in order");
  if (options.nics == 0 || options.nics > 256) throw SimulationError("NICs per process must be in 1..256");
  ranks_.resize(nranks_);
  clock_stride_ = (kTotalsWords + options.cpus + 2 * options.nics + 7) / 8 * 8;
  std::size_t clock_words = std::size_t{nranks_} * clock_stride_;
  if (options.network && !options.network->flat()) {
    if (options.semantics == Semantics::Loggopsim) {
      const std::string what =
          "the loggopsim semantics reproduces LogGOPSim, whose machine has one rank per node on a complete "
          "network; a machine of " +
          options.network->describe() + " runs under the matched semantics (--semantics matched)";
      throw SimulationLimitError(what, 0, what);
    }
    net_ = options.network.get();
    clock_words += setup_network(clock_words);
  }
  if (processor_sharing_ && options.noise && options.noise->active()) {
    const std::string what =
        "OS noise is not modelled together with processor sharing (time_sharing = \"processor-sharing\"); "
        "use time_sharing = \"fcfs\" or a quiet machine";
    throw SimulationLimitError(what, 0, what);
  }
  if (options.noise && options.noise->active()) {
    noise_ = options.noise.get();
    noisy_ranks_ =
        options.companions_from != 0 && options.companions_from < nranks_ ? options.companions_from : nranks_;
  }
  clocks_.allocate(clock_words);
  pending_.reserve(nranks_);              // about one posted receive per rank at a time in collectives
  if (unexpected_at_arrival_) sync_ = 0;  // LogGOPSim's rendezvous: no synchronization before the payload
  // The largest message whose every cost stays within kMaxCost.
  max_bytes_ = kMaxMessageBytes - 1;
  auto bound_bytes = [&](const LogGOPS& p, Picoseconds sync) {
    const FemtosecondsPerByte x = std::max(p.G, p.O);
    const Picoseconds fixed = std::max({p.o, p.g}) + sync + p.L;
    if (fixed >= kMaxCost) throw SimulationError("the LogGOPS parameters exceed the clock's range");
    if (x != 0) {
      const unsigned __int128 fs = static_cast<unsigned __int128>(kMaxCost - fixed) * 1000;
      max_bytes_ = std::min(max_bytes_,
                            static_cast<std::uint64_t>(std::min<unsigned __int128>(fs / x + 1, kMaxMessageBytes - 1)));
    }
  };
  bound_bytes(p_, sync_);
  if (net_) bound_bytes(intra_, intra_sync_);
  for (const auto* list : {&net_regimes_, &intra_regimes_})
    for (const components::SizeRegime& r : *list)
      bound_bytes(r.params, components::rendezvous_sync(r.params, options.rendezvous_handshake));
  trusted_reads_ = explicit_ && queuing_ && explicit_->max_cpu() < options.cpus &&
                   explicit_->max_nic() < options.nics && explicit_->peers_are_ranks() &&
                   explicit_->depends_on_earlier() && explicit_->max_message_bytes() <= max_bytes_ &&
                   explicit_->max_calc_duration() <= kMaxCost;
  if constexpr (L) {
    by_kind_.reserve(64);
    // One CPU and one NIC: the rule that lets a lot move as one (lgs_settle).
    parking_ = queuing_ && options.cpus == 1 && options.nics == 1 && !observer_ && nranks_ < (1u << 31);
    if (parking_) lot_of_.assign(std::size_t{nranks_} * kParkClasses, kNone);
  }
  if (options.progress) {
    progress_at_ = kProgressInterval;
    if (explicit_) total_operations_ = explicit_->total_operations();
  }
}

// ---- reading the source ------------------------------------------------------

template <bool L>
void Engine<L>::read(std::uint32_t r) {
  RankState& rs = ranks_[r];
  if (lazy_) {
    // Read until the last operation waits for a dependency: by the source's
    // promise nothing after it can be ready before it is. Pulls start small
    // and double up to chunk_ops, so a rank whose operations mostly wait (a
    // collective's rounds) holds a few slots, not its whole stream.
    std::size_t want = std::min<std::size_t>(options_.chunk_ops, optimistic_ ? kFirstPullOnTrial : kFirstPull);
    bool woken = rs.woken;  // an observed source's program may go on: pull once in any case
    rs.woken = false;
    while (!rs.exhausted && !rs.blocked && (woken || rs.slots.size() == rs.head || rs.slots.back().pending == 0)) {
      woken = false;
      if (explicit_)  // one call less per read
        pull_explicit(r, want);
      else
        pull_chunk(r, want);
      want = std::min(2 * want, options_.chunk_ops);
    }
  } else {
    while (!rs.exhausted) pull_chunk(r, std::numeric_limits<std::uint32_t>::max());
  }
  rs.wants_read = false;
}

namespace {

// An OpBuffer's dependencies of one operation, read as add_op reads them.
struct BufferedDependencies {
  const taskgraph::Dependency* at;
  taskgraph::Dependency next() { return *at++; }
};

}  // namespace

template <bool L>
void Engine<L>::pull_chunk(std::uint32_t r, std::size_t max_ops) {
  if (explicit_) return pull_explicit(r, max_ops);
  RankState& rs = ranks_[r];
  buffer_.clear();
  std::size_t n = source_.pull(r, max_ops, buffer_);
  if (n == taskgraph::ScheduleSource::kBlocked) {
    if (!observer_) bad_input(r, rs.base + rs.slots.size(), 0, "the source blocks but nothing observes the run");
    rs.blocked = true;
    return;
  }
  if (n == 0) {
    rs.exhausted = true;
    return;
  }
  // Known before the operations are added, so the last one does not ask
  // for another read.
  if (buffer_.rank_done) rs.exhausted = true;
  make_room(rs, n, buffer_.deps.size());
  for (const taskgraph::Operation& op : buffer_.ops) {
    BufferedDependencies deps{buffer_.deps.data() + op.first_dep};
    add_op<false>(r, rs, op, deps);
  }
  count_read(n);
}

// Room for `n` more operations: read in full (one pull from the start, with
// its `deps` dependencies), one exact allocation per rank from the arena;
// lazily, one growth per chunk, not per operation.
template <bool L>
void Engine<L>::make_room(RankState& rs, std::size_t n, std::size_t deps) {
  if (!lazy_) {
    rs.slots.reserve(windows_, std::size_t{rs.slots.size()} + n);
    rs.edges.reserve(windows_, std::size_t{rs.edges.size()} + deps);
  } else if (rs.slots.capacity() < rs.slots.size() + n) {
    rs.slots.reserve(windows_, std::max(std::size_t{rs.slots.size()} + n, 2 * std::size_t{rs.slots.capacity()}));
  }
}

template <bool L>
void Engine<L>::count_read(std::size_t n) {
  window_ops_ += n;
  peak_window_ops_ = std::max(peak_window_ops_, window_ops_);
}

template <bool L>
template <bool kTrusted>
void Engine<L>::decode_explicit(std::uint32_t r, std::size_t n) {
  using Reader = taskgraph::ExplicitSchedule::DependencyReader;
  // Inlined into the decoding loop (the Operation stays in registers).
  // clang-format off
  RankState* const rs = &ranks_[r];
  auto to_slot = [this, r, rs](const taskgraph::Operation& op, Reader& deps) __attribute__((always_inline)) {
    add_op<kTrusted>(r, *rs, op, deps);
  };
  // clang-format on
  explicit_->decode_into(r, n, to_slot);
}

template <bool L>
void Engine<L>::decode_checked(std::uint32_t r, std::size_t n) {
  decode_explicit<false>(r, n);
}

// pull_chunk for a schedule in memory: each operation is decoded into a local
// Operation that add_op, inlined, turns into its slot (about 100 instructions
// an operation less than writing an OpBuffer and reading it back).
template <bool L>
void Engine<L>::pull_explicit(std::uint32_t r, std::size_t max_ops) {
  RankState& rs = ranks_[r];
  const std::uint64_t left = explicit_->operations_left(r);
  const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(max_ops, left));
  if (n == left) rs.exhausted = true;  // known before the operations are added, as in pull_chunk
  if (n == 0) return;
  make_room(rs, n, lazy_ ? 0 : explicit_->dependency_count(r));
  if (trusted_reads_ && rs.slots.size() + n <= kInlinePair) [[likely]]
    decode_explicit<true>(r, n);
  else
    decode_checked(r, n);
  count_read(n);
}

template <bool L>
void Engine<L>::bad_input(std::uint32_t r, std::uint64_t index, std::uint32_t node, const std::string& what) const {
  std::string where;
  if (node != 0 && node < source_.node_count()) where = " (" + node_text(node) + ")";
  throw SimulationError("rank " + std::to_string(r) + " operation " + std::to_string(index) + where + ": " + what);
}

template void Engine<true>::bad_input(std::uint32_t, std::uint64_t, std::uint32_t, const std::string&) const;

template <bool L>
void Engine<L>::reject_op(std::uint32_t r, std::uint64_t index, taskgraph::Operation op) const {
  if (index - ranks_[r].base >= kInlinePair) bad_input(r, index, op.node, "more than 2^30 operations held at once");
  if (op.cpu >= options_.cpus)
    bad_input(r, index, op.node,
              "uses CPU " + std::to_string(op.cpu) + " but processes have " + std::to_string(options_.cpus) +
                  " (use --cpus)");
  if (op.nic >= options_.nics)
    bad_input(r, index, op.node,
              "uses NIC " + std::to_string(op.nic) + " but processes have " + std::to_string(options_.nics) +
                  " (use --nics)");
  bad_input(r, index, op.node,
            "peer " + std::to_string(op.peer) + " is not a rank (0.." + std::to_string(nranks_ - 1) + ")");
}

// A Recv completes without its CPU overhead; a Calc is that overhead, priced
// as receive() or net_receive() would have priced it at the match.
template <bool L>
void Engine<L>::defer_receive_overhead(std::uint32_t r, std::uint64_t index, Slot& s, const taskgraph::Operation& op) {
  if constexpr (L)
    bad_input(r, index, op.node,
              "defers a receive's overhead to its wait, which LogGOPSim's semantics do not model (use matched)");
  s.flags |= kOverheadDeferred;
  if (op.kind != OpKind::Calc) return;
  if (op.peer < 0 || static_cast<std::uint32_t>(op.peer) >= nranks_) reject_op(r, index, op);
  if (op.bytes > max_bytes_)
    reject_time(r, index, op.node,
                "a receive overhead of a message of " + std::to_string(op.bytes) + " bytes: at most " +
                    std::to_string(max_bytes_) + " bytes with these LogGOPS parameters");
  s.peer = op.peer;
  s.amount = receive_overhead(static_cast<std::uint32_t>(op.peer), r, op.bytes);
}

template <bool L>
void Engine<L>::reject_dependency(std::uint32_t r, std::uint64_t index, std::uint32_t node, std::uint64_t dep) const {
  bad_input(r, index, node, "depends on operation " + std::to_string(dep) + ", not an earlier one");
}

template <bool L>
void Engine<L>::reject_time(std::uint32_t r, std::uint64_t index, std::uint32_t node, const std::string& what) const {
  std::string where;
  if (node != 0 && node < source_.node_count()) where = " (" + node_text(node) + ")";
  throw SimulationLimitError("rank " + std::to_string(r) + " operation " + std::to_string(index) + where + ": " + what,
                             node, what);
}

template <bool L>
void Engine<L>::clock_overflow() const {
  const std::string what = "simulated time passed 2^62 ps (about 53 days), the clock's range";
  throw SimulationLimitError(what, 0, what);
}

template <bool L>
template <bool kTrusted, class Dependencies>
void Engine<L>::add_op(std::uint32_t r, RankState& rs, const taskgraph::Operation& op, Dependencies& deps) {
  const std::uint64_t index = rs.base + rs.slots.size();
  const auto pos = static_cast<std::uint32_t>(rs.slots.size());
  if constexpr (!kTrusted) {
    const bool message = op.kind != OpKind::Calc;
    const bool bad_peer = message && !taskgraph::peer_is_rank(op, nranks_);
    if (pos >= kInlinePair || op.cpu >= options_.cpus || (message && op.nic >= options_.nics) || bad_peer) [[unlikely]]
      reject_op(r, index, op);
    if (message ? op.bytes > max_bytes_ : op.duration > kMaxCost) [[unlikely]]
      reject_time(r, index, op.node,
                  message
                      ? "a message of " + std::to_string(op.bytes) + " bytes: at most " + std::to_string(max_bytes_) +
                            " bytes with these LogGOPS parameters (sizes below 2^53, every cost within 2^61 ps)"
                      : "a calc of " + format_ps(op.duration) + ": at most 2^61 ps (about 26.7 days)");
  }
  // Built where it goes (pull_chunk reserved the chunk), counted once complete.
  Slot& s = rs.slots.data()[pos];
  s = Slot{};
  s.kind = op.kind;
  s.cpu = op.cpu;
  s.nic = op.nic;
  s.peer = op.peer;
  s.tag = op.tag;
  s.comm = op.comm;
  s.node = op.node;
  s.amount = op.kind == OpKind::Calc ? op.duration : op.bytes;
  if (op.receive_overhead_deferred) [[unlikely]]
    defer_receive_overhead(r, index, s, op);
  bool follows = false;  // on the previous send (critical-path mode)
  std::uint64_t& last_send = word(r, kLastSend);
  for (std::uint32_t i = 0; i < op.dep_count; ++i) {
    const taskgraph::Dependency d = deps.next();
    if (!kTrusted && d.op >= index) [[unlikely]]
      reject_dependency(r, index, op.node, d.op);
    if (!kTrusted && !queuing_ && last_send != 0)
      follows = follows || d.op + 1 == last_send ||
                (d.op >= last_send && d.op >= rs.base + rs.head && (rs.slots[d.op - rs.base].flags & kFollowsSend));
    if constexpr (L)
      if (d.order != 0) [[unlikely]]
        edge_order_[EdgeKey{d.op, index, r, d.on_start}] = d.order;
    if (d.op < rs.base + rs.head) continue;  // retired: finished no later than now (see read())
    Slot& before = rs.slots[d.op - rs.base];
    if (d.on_start ? (before.flags & kStarted) : (before.flags & kCompleted)) {
      if constexpr (L)  // the latest stamp among the satisfied dependencies
        s.ready = std::max(s.ready, d.on_start ? before.ready : before.start);
      else
        s.ready = std::max(s.ready, d.on_start ? before.start : before.done);
      continue;
    }
    std::uint32_t& list = d.on_start ? before.start_succ : before.done_succ;
    const auto low = static_cast<std::uint32_t>(index);
    if (list == kNone) {
      list = kInlineSucc | (low & (kInlinePair - 1));
    } else if (is_inline_succ(list) && !(list & kInlinePair) && pos < kPairLimit) {
      // A second successor, inline too (the first is below pos).
      list = kInlineSucc | kInlinePair | (list & (kPairLimit - 1)) | (low & (kPairLimit - 1)) << 15;
    } else {
      if (is_inline_succ(list)) {  // a second or third successor: the inline ones move to Edges
        const auto base = static_cast<std::uint32_t>(rs.base);
        if (list & kInlinePair) {
          rs.edges.push_back(windows_, Edge{base + pair_first(list, rs.base), kNone});
          rs.edges.push_back(windows_,
                             Edge{base + pair_second(list, rs.base), static_cast<std::uint32_t>(rs.edges.size() - 1)});
        } else {
          rs.edges.push_back(windows_, Edge{base + single_pos(list, rs.base), kNone});
        }
        list = static_cast<std::uint32_t>(rs.edges.size() - 1);
      }
      rs.edges.push_back(windows_, Edge{low, list});
      list = static_cast<std::uint32_t>(rs.edges.size() - 1);
    }
    ++s.pending;
  }
  if (!kTrusted && !queuing_) {
    // Without queuing the NIC still serializes a rank's sends where one
    // follows another: remember which send this one follows.
    if (follows) s.flags |= kFollowsSend;
    if (op.kind == OpKind::Send) {
      s.done = follows ? last_send : 0;
      last_send = index + 1;
    }
  }
  rs.slots.append_unchecked();
  if (s.pending == 0) {
    // Past the start, a full reading would have queued this operation when
    // its last dependency was satisfied, maybe before events of the same
    // time that are queued now: the order, and so the result, could differ.
    if (optimistic_ && events_ != 0) throw LazyReadingFailed{};
    if constexpr (L) {
      const std::uint64_t last = s.ready;
      s.ready = 0;
      if (events_ != 0) return lgs_freed_on_read(r, index, pos, last);
    } else if (lazy_ && s.ready < now_) {
      if (!observer_)
        bad_input(r, index, op.node,
                  "became ready before it was read: the source breaks its issues_in_order() promise");
      s.ready = now_;  // a running program issues it now
    }
    schedule_ready(r, pos);
  }
}

// ---- events --------------------------------------------------------------------

template <bool L>
void Engine<L>::complete(std::uint32_t r, std::uint32_t pos, Picoseconds t) {
  RankState& rs = ranks_[r];
  Slot& s = rs.slots[pos];
  s.done = t;
  s.flags |= kCompleted;
  if (word(r, kFinish) < t) word(r, kFinish) = t;
  ++operations_;
  std::uint32_t list = s.done_succ;
  s.done_succ = kNone;
  if (observer_) [[unlikely]]
    observe_completion(r, rs.base + pos, t);
  notify(rs, r, list, t);
}

template <bool L>
void Engine<L>::start(std::uint32_t r, std::uint32_t pos) {
  RankState& rs = ranks_[r];
  Slot& s = rs.slots[pos];
  Picoseconds t0 = now_;
  Picoseconds done = 0;
  switch (s.kind) {
    case OpKind::Calc:
      // Processor sharing (core_sharing.cpp) only where cores are shared.
      if constexpr (!L)
        if (shared_cores_ && processor_sharing_) [[unlikely]]
          if (shared_core(r, s.cpu) != kNone) return shared_start(r, pos);
      t0 = queuing_ ? std::max(now_, cpu_free(r, s.cpu)) : now_;
      if (s.flags & kOverheadDeferred) [[unlikely]] {  // a receive's overhead, paid in its wait: no noise
        done = t0 + s.amount;
        cpu_free(r, s.cpu) = done;
        word(r, kOverhead) += s.amount;
        if (options_.record_timeline) timeline_.push_back(Span{r, s.cpu, Span::Recv, s.peer, t0, done, 0, s.node});
        break;
      }
      done = calc_end(r, t0, s.amount);
      cpu_free(r, s.cpu) = done;
      word(r, kCompute) += s.amount;
      if (options_.record_timeline) timeline_.push_back(Span{r, s.cpu, Span::Calc, -1, t0, done, 0, s.node});
      break;
    case OpKind::Send: {
      if constexpr (!L)
        if (net_) [[unlikely]] {
          if (processor_sharing_ && shared_core(r, s.cpu) != kNone) return shared_start(r, pos);
          t0 = net_send(r, pos, done);
          break;
        }
      if (queuing_) {
        t0 = std::max({now_, cpu_free(r, s.cpu), nic_send_free(r, s.nic)});
      } else if (s.done > rs.base) {
        // Critical path: the previous send this one follows holds the NIC
        // for its sync + g + (s-1)G (docs/models/critical-path.md).
        const Slot& before = rs.slots[s.done - 1 - rs.base];
        if (before.nic == s.nic)
          t0 = std::max(now_, before.start + (p_.rendezvous(before.amount) ? sync_ : 0) + send_nic_cost(before.amount));
      }
      const Picoseconds sync = p_.rendezvous(s.amount) ? sync_ : 0;
      const Picoseconds cpu_busy = send_cpu_cost(s.amount);
      done = t0 + sync + cpu_busy;
      cpu_free(r, s.cpu) = done;
      nic_send_free(r, s.nic) = t0 + sync + send_nic_cost(s.amount);
      word(r, kOverhead) += cpu_busy;
      ++messages_;
      queue_.push(Event{t0 + sync + p_.o + p_.L, std::uint64_t{r} << 32 | static_cast<std::uint32_t>(rs.base + pos)});
      if (options_.record_timeline) {
        if (sync) timeline_.push_back(Span{r, s.cpu, Span::Sync, s.peer, t0, t0 + sync, s.amount, s.node});
        timeline_.push_back(Span{r, s.cpu, Span::Send, s.peer, t0 + sync, done, s.amount, s.node});
      }
      break;
    }
    case OpKind::Recv: break;
  }
  s.start = t0;
  s.flags |= kStarted;
  std::uint32_t list = s.start_succ;
  s.start_succ = kNone;
  notify(rs, r, list, t0);

  if (s.kind == OpKind::Calc) return complete(r, pos, done);
  if (s.kind == OpKind::Send) {
    if (rendezvous(r, static_cast<std::uint32_t>(s.peer), s.amount))
      s.done = done;  // local part; completes when matched (finish_rendezvous)
    else
      complete(r, pos, done);
    return;
  }
  // A receive is posted: match it against the unexpected messages in arrival order.
  Pending msg;
  if (take_first(
          rs.unexpected,
          [&s](const Pending& m) { return receive_matches(s.peer, s.tag, s.comm, m.src, m.tag, m.comm); }, msg)) {
    Picoseconds matched = now_;
    if (unexpected_at_arrival_) [[unlikely]] {  // processed when it arrived: done at the later of that and now
      const Picoseconds busy = recv_cpu_cost(msg.bytes);
      word(r, kOverhead) += busy;
      complete(r, pos, std::max(now_, msg.arrival + busy));
    } else {
      matched = receive(r, pos, msg.bytes, msg.src, msg.op, now_);
      if (matched == kDeferred) return;  // processor sharing: reported when it is processed
    }
    if (observer_) [[unlikely]]
      observe_match(r, rs.base + pos, static_cast<std::uint32_t>(msg.src), msg.op, matched);
    if (rendezvous(r, static_cast<std::uint32_t>(msg.src), msg.bytes))
      finish_rendezvous(static_cast<std::uint32_t>(msg.src), msg.op, matched);
    return;
  }
  std::uint32_t e = new_pending();
  pending_[e] = Pending{rs.base + pos, 0, 0, s.peer, s.tag, s.comm, kNone};
  append(rs.posted, e);
}

template <bool L>
void Engine<L>::arrive(std::uint32_t sender, std::uint32_t pos) {
  RankState& from = ranks_[sender];
  Slot& s = from.slots[pos];
  s.flags |= kDelivered;
  const auto dest = static_cast<std::uint32_t>(s.peer);
  const std::uint64_t op = from.base + pos;
  const std::uint64_t bytes = s.amount;
  const std::int32_t tag = s.tag;
  const std::uint32_t comm = s.comm;
  touch(dest);
  RankState& rs = ranks_[dest];
  // Match against the posted receives in posting order.
  Pending rq;
  const auto src = static_cast<std::int32_t>(sender);
  if (take_posted(rs, src, tag, comm, rq)) {
    const auto recv_pos = static_cast<std::uint32_t>(rq.op - rs.base);
    Picoseconds matched = receive(dest, recv_pos, bytes, src, op, now_);
    if (matched == kDeferred) return;  // processor sharing: reported when it is processed
    if (observer_) [[unlikely]]
      observe_match(dest, rs.base + recv_pos, sender, op, matched);
    if (rendezvous(sender, dest, bytes)) finish_rendezvous(sender, op, matched);
    return;
  }
  queue_unexpected(dest, sender, op, bytes, tag, comm);
}

// The matched message is processed once the receiving CPU and NIC are free:
// CPU o + max((s-1)O, (s-1)G), NIC g + (s-1)G. Returns the processing start.
template <bool L>
Picoseconds Engine<L>::receive(std::uint32_t r, std::uint32_t recv_pos, std::uint64_t bytes, std::int32_t src,
                               std::uint64_t send_op, Picoseconds at) {
  if constexpr (!L)
    if (net_) [[unlikely]]
      return net_receive(r, recv_pos, bytes, src, send_op, at);
  RankState& rs = ranks_[r];
  const Slot& s = rs.slots[recv_pos];
  Picoseconds& cpu = cpu_free(r, s.cpu);
  Picoseconds& nic = nic_recv_free(r, s.nic);
  if (s.flags & kOverheadDeferred) [[unlikely]] {  // in once its bytes are; the CPU pays o + (s-1)O in the wait
    const Picoseconds t0 = queuing_ ? std::max(at, nic) : at;
    nic = t0 + recv_nic_cost(bytes);
    complete(r, recv_pos, t0 + LogGOPS::per_byte(bytes, p_.G));
    return t0;
  }
  const Picoseconds t0 = queuing_ ? std::max({at, cpu, nic}) : at;
  const Picoseconds busy = recv_cpu_cost(bytes);
  cpu = t0 + busy;
  nic = t0 + recv_nic_cost(bytes);
  word(r, kOverhead) += busy;
  if (options_.record_timeline) timeline_.push_back(Span{r, s.cpu, Span::Recv, src, t0, t0 + busy, bytes, s.node});
  complete(r, recv_pos, t0 + busy);
  return t0;
}

template <bool L>
void Engine<L>::finish_rendezvous(std::uint32_t sender, std::uint64_t op, Picoseconds matched) {
  touch(sender);
  RankState& rs = ranks_[sender];
  const auto pos = static_cast<std::uint32_t>(op - rs.base);
  Slot& s = rs.slots[pos];
  if (s.flags & kCpuInProgress) [[unlikely]] {  // processor sharing: completes when its CPU part ends (end_job)
    s.done = matched;
    s.flags |= kMatchedEarly;
    return;
  }
  complete(sender, pos, std::max(s.done, matched));
}

// ---- window management ---------------------------------------------------------

template <bool L>
void Engine<L>::retire(std::uint32_t r) {
  RankState& rs = ranks_[r];
  const auto size = static_cast<std::uint32_t>(rs.slots.size());
  std::uint32_t h = rs.head;
  while (h < size) {
    if (!finished(rs.slots[h])) break;
    ++h;
  }
  window_ops_ -= h - rs.head;
  rs.head = h;
  if (h == size && size > 0)
    retire_all(rs);
  else if (h >= kCompactAt && 2 * h >= size)
    compact(rs);
}

// Every operation of the window is retired: it starts over empty.
template <bool L>
void Engine<L>::retire_all(RankState& rs) {
  rs.base += rs.slots.size();
  rs.head = 0;
  if (rs.exhausted) {  // the rank is done: give its memory back
    rs.slots.release(windows_);
    rs.edges.release(windows_);
  } else {
    rs.slots.clear();
    rs.edges.clear();
  }
}

// Drops retired slots from the front of a window. Successor lists name
// operations by index, so they stay valid; the Edges that retired slots
// consumed are dropped only once they outnumber the window (the lists that
// name Edges are then rewritten).
template <bool L>
void Engine<L>::compact(RankState& rs) {
  const std::uint32_t h = rs.head;
  rs.slots.erase_front(h);
  rs.base += h;
  rs.head = 0;
  if (rs.edges.size() <= kEdgeCompactAt || rs.edges.size() <= 2 * rs.slots.size()) return;
  compact_edges(rs);
}

template <bool L>
void Engine<L>::compact_edges(RankState& rs) {
  Window<Edge> edges;
  edges.reserve(windows_, std::max<std::size_t>(rs.slots.size(), 1));
  auto move_list = [&](std::uint32_t list) {
    if (list == kNone || is_inline_succ(list)) return list;
    std::uint32_t first = kNone, last = kNone;
    for (std::uint32_t e = list; e != kNone; e = rs.edges[e].next) {
      edges.push_back(windows_, Edge{rs.edges[e].succ, kNone});
      auto at = static_cast<std::uint32_t>(edges.size() - 1);
      if (last == kNone)
        first = at;
      else
        edges[last].next = at;
      last = at;
    }
    return first;
  };
  for (Slot& s : rs.slots) {
    s.start_succ = move_list(s.start_succ);
    s.done_succ = move_list(s.done_succ);
  }
  rs.edges.swap(edges);
  edges.release(windows_);
}

// ---- the run -----------------------------------------------------------------------

// Events of equal time leave the queue in order, so the state they will touch
// can be fetched from memory while earlier ones are handled. Each distance
// reads what the previous, larger one fetched: the rank's record, then its
// operation and clocks, then its successor list or the message's destination,
// then the destination's first posted receive, then that receive's slot and
// the one after it (16, 12, 8, 4 and 2 events ahead). Where a slot is
// fetched, so is the next (most often its successor) and, at 12 and 4, the
// window's head, which retire() reads.
template <bool L>
inline void Engine<L>::prefetch_upcoming() const {
  std::size_t known = 0;
  const QueuedEvent* next = queue_.upcoming(known);
  if (known <= 16) return;  // a short run of equal times: nothing to gain
  auto slot_of = [this](const QueuedEvent& e) -> const Slot* {
    const RankState& rs = ranks_[key_rank(e.key)];
    const auto pos =
        static_cast<std::uint32_t>(static_cast<std::uint32_t>(e.key) - static_cast<std::uint32_t>(rs.base));
    return pos < rs.slots.size() ? rs.slots.data() + pos : nullptr;
  };
  auto is_arrival = [](const Slot& s) { return s.kind == OpKind::Send && (s.flags & kStarted); };
  __builtin_prefetch(&ranks_[key_rank(next[16].key)]);
  if (const Slot* s = slot_of(next[12])) {
    __builtin_prefetch(s);
    __builtin_prefetch(s + 1);  // its successor, most often (a prefetch past the window is harmless)
    const RankState& rs = ranks_[key_rank(next[12].key)];  // retire() starts at the window's head
    __builtin_prefetch(rs.slots.data() + rs.head);
  }
  __builtin_prefetch(clocks_.data() + std::size_t{key_rank(next[12].key)} * clock_stride_);
  if (const Slot* s = slot_of(next[8])) {
    if (is_arrival(*s)) {
      __builtin_prefetch(&ranks_[static_cast<std::uint32_t>(s->peer)]);
      __builtin_prefetch(clocks_.data() + std::size_t(s->peer) * clock_stride_);
    } else if (s->done_succ != kNone && !is_inline_succ(s->done_succ)) {
      __builtin_prefetch(ranks_[key_rank(next[8].key)].edges.data() + s->done_succ);
    }
  }
  if (const Slot* s = slot_of(next[4]); s && is_arrival(*s)) {
    const RankState& dest = ranks_[static_cast<std::uint32_t>(s->peer)];
    if (dest.posted.head != kNone) __builtin_prefetch(&pending_[dest.posted.head]);
    __builtin_prefetch(dest.slots.data() + dest.head);
  }
  if (const Slot* s = slot_of(next[2]); s && is_arrival(*s)) {
    const RankState& dest = ranks_[static_cast<std::uint32_t>(s->peer)];
    if (dest.posted.head != kNone) {
      const auto pos = static_cast<std::uint32_t>(pending_[dest.posted.head].op - dest.base);
      if (pos < dest.slots.size()) {
        __builtin_prefetch(dest.slots.data() + pos);
        __builtin_prefetch(dest.slots.data() + pos + 1);
      }
    }
  }
}

// Called right after a pop, before the popped event's own loads: the next
// event's rank record is loaded (a miss the out-of-order core overlaps with
// the current event's) to find its slot, which is fetched with the window's
// head (retire) and the rank's clocks.
template <bool L>
inline void Engine<L>::prefetch_next() const {
  const QueuedEvent* next = queue_.peek();
  if (next == nullptr) return;
  const std::uint32_t r = key_rank(next->key);
  const RankState& rs = ranks_[r];
  const auto pos =
      static_cast<std::uint32_t>(static_cast<std::uint32_t>(next->key) - static_cast<std::uint32_t>(rs.base));
  if (pos < rs.slots.size()) __builtin_prefetch(rs.slots.data() + pos);
  __builtin_prefetch(rs.slots.data() + rs.head);
  __builtin_prefetch(clocks_.data() + std::size_t{r} * clock_stride_);
}

namespace {
double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}
}  // namespace

template <bool L>
void Engine<L>::report_progress(std::chrono::steady_clock::time_point start, bool finished) {
  progress_at_ = events_ + kProgressInterval;  // a parked lot may have moved events_ past the mark
  SimulationProgress p;
  p.now = now_;
  p.events = events_;
  p.operations = operations_;
  p.done = operations_;
  p.total = total_operations_;
  p.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  p.finished = finished;
  options_.progress.report(options_.progress.context, p);
}

// One event under the loggopsim semantics: its handler, then the reading,
// queuing and retiring it asked for.
template <bool L>
inline void Engine<L>::lgs_handle(std::uint64_t key, std::uint64_t stamp) {
  if constexpr (L) {
    const auto r = static_cast<std::uint32_t>(key >> 32);
    const auto pos =
        static_cast<std::uint32_t>(static_cast<std::uint32_t>(key) - static_cast<std::uint32_t>(ranks_[r].base));
    current_key_ = key;
    current_stamp_ = stamp;
    mark_ = 0;
    to_read_count_ = to_retire_count_ = 0;
    if (ranks_[r].slots[pos].flags & kStarted)
      lgs_arrive(r, pos);
    else
      lgs_start(r, pos);
    // Read what the event made readable, then queue what it freed, then
    // retire (which may move the windows the freed positions point into).
    for (std::uint32_t i = 0; i < to_read_count_; ++i) read(to_read_[i]);
    if (freed_.size() == 1) {  // most events free one operation
      lgs_push_freed(freed_[0].rank, freed_[0].pos);
      freed_.clear();
    } else if (!freed_.empty()) {
      lgs_queue_freed();
    }
    if (lazy_)
      for (std::uint32_t i = 0; i < to_retire_count_; ++i) retire(to_retire_[i]);
  }
}

template <bool L>
SimulationResult Engine<L>::run(std::size_t max_stuck_listed) {
  auto wall_start = std::chrono::steady_clock::now();
  const double cpu_start = thread_cpu_seconds();
  for (std::uint32_t r = 0; r < nranks_; ++r) {
    read(r);
    if constexpr (L) lgs_queue_freed();  // rank by rank, at time 0
  }
  if (observer_) [[unlikely]]
    while (read_woken()) {
    }
  const double initial_read = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  std::size_t peak_queue = 0;
  // An observed source may add operations once the queue has run dry.
  while (!queue_.empty() || (observer_ && read_drained() && !queue_.empty())) {
    peak_queue = std::max(peak_queue, queue_.size());
    prefetch_upcoming();
    const QueuedEvent ev = queue_.pop();
    prefetch_next();
    // Parked lots count the events they stand for: past, not only at, the mark.
    if (++events_ >= progress_at_) [[unlikely]]
      report_progress(wall_start, false);
    now_ = ev.time;
    if (now_ > kMaxTime) [[unlikely]]
      clock_overflow();
    if constexpr (L) {
      lgs_handle((ev.key & kLotKey) ? lgs_unpark(static_cast<std::uint32_t>(ev.key)) : ev.key, ev.stamp);
      if (lot_in_hand_ != kNone) [[unlikely]]
        lgs_settle();
    } else {
      std::uint64_t key = ev.key;
      if (key & kNetKey) [[unlikely]]  // contention: a flow starts, or one ends and its message arrives
        key = net_event(key);
      if (key != kNetKey) [[likely]] {
        const auto r = static_cast<std::uint32_t>(key >> 32);
        const auto pos =
            static_cast<std::uint32_t>(static_cast<std::uint32_t>(key) - static_cast<std::uint32_t>(ranks_[r].base));
        touched_count_ = 0;
        touch(r);
        if (ranks_[r].slots[pos].flags & kStarted)
          arrive(r, pos);
        else
          start(r, pos);
        for (std::uint32_t i = 0; i < touched_count_; ++i) {
          const std::uint32_t t = touched_[i];
          RankState& rs = ranks_[t];
          if (rs.wants_read) read(t);
          // Windows read up front live in the arena until the end.
          if (lazy_ && rs.head < rs.slots.size() && finished(rs.slots[rs.head])) retire(t);
        }
      }
    }
    if (observer_) [[unlikely]]
      while (read_woken()) {
      }
  }
  if (options_.progress) report_progress(wall_start, true);
  // Operations complete at known future times without an event of their own;
  // everything that completed is finished now.
  now_ = std::numeric_limits<Picoseconds>::max();
  if (lazy_)
    for (std::uint32_t r = 0; r < nranks_; ++r) retire(r);
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  const double cpu = thread_cpu_seconds() - cpu_start;

  SimulationResult out;
  out.ranks = nranks_;
  out.events = events_;
  out.requeued = requeued_;
  out.operations = operations_;
  out.messages = messages_;
  out.peak_window_ops = peak_window_ops_;
  out.peak_queue = peak_queue;
  out.wall_seconds = wall;
  out.cpu_seconds = cpu;
  out.initial_read_seconds = initial_read;
  out.read_lazily = lazy_;
  if (options_.per_rank_results) out.per_rank.resize(nranks_);
  for (std::uint32_t r = 0; r < nranks_; ++r) {
    Picoseconds finish = word(r, kFinish);
    if constexpr (L) {  // LogGOPSim's end time of a process: its latest CPU clock
      finish = 0;
      for (std::uint32_t c = 0; c < options_.cpus; ++c) finish = std::max(finish, cpu_free(r, c));
    }
    if (finish > kMaxTime) clock_overflow();
    const Picoseconds compute = word(r, kCompute), overhead = word(r, kOverhead);
    const Picoseconds busy = compute + overhead;
    const Picoseconds capacity = finish * options_.cpus;
    RankResult rr{finish, compute, overhead, capacity > busy ? capacity - busy : 0};
    if (options_.per_rank_results) out.per_rank[r] = rr;
    out.total_compute += rr.compute;
    out.total_overhead += rr.overhead;
    out.total_wait += rr.wait;
    if (finish > out.max_finish) {
      out.max_finish = finish;
      out.max_finish_rank = r;
    }
  }
  report_stuck(out, max_stuck_listed);
  finish_traffic(out);
  out.timeline = std::move(timeline_);
  return out;
}

template <bool L>
void Engine<L>::settle_touched() {
  for (std::uint32_t i = 0; i < touched_count_; ++i) {
    const std::uint32_t t = touched_[i];
    RankState& rs = ranks_[t];
    if (rs.wants_read) read(t);
    if (lazy_ && rs.head < rs.slots.size() && finished(rs.slots[rs.head])) retire(t);
  }
}

// network_paths.cpp completes the receives of a machine that is not flat.
template void Engine<false>::settle_touched();
template void Engine<false>::complete(std::uint32_t, std::uint32_t, Picoseconds);
template void Engine<false>::finish_rendezvous(std::uint32_t, std::uint64_t, Picoseconds);

}  // namespace detail

namespace {

template <bool L>
SimulationResult run(taskgraph::ScheduleSource& source, const SimulationOptions& options,
                     std::size_t max_stuck_listed) {
  if (!options.try_lazy_reading || source.issues_in_order() || !options.resource_queuing || options.observer ||
      !source.restart()) {
    detail::Engine<L> engine(source, options);
    return engine.run(max_stuck_listed);
  }
  const auto attempt_start = std::chrono::steady_clock::now();
  const double attempt_cpu_start = detail::thread_cpu_seconds();
  try {
    detail::Engine<L> engine(source, options, true);
    SimulationResult lazy = engine.run(max_stuck_listed);
    if (lazy.completed) return lazy;
  } catch (const detail::LazyReadingFailed&) {
  } catch (const SimulationError&) {
  }
  const double attempt = std::chrono::duration<double>(std::chrono::steady_clock::now() - attempt_start).count();
  const double attempt_cpu = detail::thread_cpu_seconds() - attempt_cpu_start;
  source.restart();
  detail::Engine<L> engine(source, options);
  SimulationResult full = engine.run(max_stuck_listed);
  full.wall_seconds += attempt;
  full.cpu_seconds += attempt_cpu;
  full.lazy_attempt_abandoned = true;
  return full;
}

}  // namespace

const char* semantics_name(Semantics s) { return s == Semantics::Loggopsim ? "loggopsim" : "matched"; }

std::optional<Semantics> parse_semantics(std::string_view name) {
  if (name == "matched") return Semantics::Matched;
  if (name == "loggopsim") return Semantics::Loggopsim;
  return std::nullopt;
}

std::uint64_t memory_per_rank(const SimulationOptions& options) {
  const std::uint64_t clock_line = (detail::kTotalsWords + std::uint64_t{options.cpus} + 2 * options.nics + 7) / 8 * 64;
  std::uint64_t per_rank = sizeof(detail::RankState) + clock_line + sizeof(detail::Pending);
  if (options.per_rank_results) per_rank += sizeof(RankResult);
  return per_rank;
}

std::uint64_t estimated_memory(taskgraph::ScheduleSource& source, const SimulationOptions& options) {
  std::uint64_t bytes = std::uint64_t{source.ranks()} * memory_per_rank(options);
  // A schedule in memory may be read in full (if a lazy attempt fails): a
  // slot per operation and about one successor edge.
  if (const auto* s = dynamic_cast<const taskgraph::ExplicitSchedule*>(&source))
    bytes += s->total_operations() * (sizeof(detail::Slot) + sizeof(detail::Edge));
  return bytes;
}

// A lazy attempt needs the resource queuing of the default model: in
// critical-path mode add_op reads flags of earlier operations that a lazy
// window may have retired. A stuck or malformed run is redone in full, so
// that its report names the same operations a full reading names.
SimulationResult simulate(taskgraph::ScheduleSource& source, const SimulationOptions& options,
                          std::size_t max_stuck_listed) {
  const std::uint64_t limit = taskgraph::memory_limit_or_available(options.memory_limit);
  const std::uint64_t need = estimated_memory(source, options);
  if (need > limit) {
    std::string what = "simulating " + std::to_string(source.ranks()) + " processes needs about " +
                       taskgraph::format_bytes(need) + "; " + taskgraph::memory_limit_text(options.memory_limit, limit);
    throw SimulationLimitError(what, 0, what);
  }
  if (options.semantics == Semantics::Loggopsim) {
    if (options.rendezvous_handshake)
      throw SimulationError(
          "the rendezvous handshake is a rule of the matched semantics; LogGOPSim's rendezvous has none");
    if (options.resource_queuing) return run<true>(source, options, max_stuck_listed);
  }
  return run<false>(source, options, max_stuck_listed);
}

}  // namespace poems::sim
