// The engine's small hot functions both semantics' handlers call
// (simulator.cpp, loggopsim_handlers.h), defined where each can inline them.
#pragma once

#include "engine.h"
#include "poems/taskgraph/explicit_schedule.h"

namespace poems::sim::detail {

template <bool L>
void Engine<L>::schedule_ready(std::uint32_t r, std::uint32_t pos) {
  RankState& rs = ranks_[r];
  if constexpr (L) {
    freed_.push_back(Freed{r, mark_, pos});  // queued once the event is done (lgs_queue_freed)
  } else {
    const Slot& s = rs.slots[pos];
    queue_.push(Event{s.ready, std::uint64_t{r} << 32 | static_cast<std::uint32_t>(rs.base + pos)});
  }
  if (lazy_ && pos + 1 == rs.slots.size() && !rs.exhausted) mark_wants_read(rs, r);
  // A few operations before the window's last is ready, its next read's
  // first bytes are fetched (a miss on each pull otherwise).
  else if (explicit_ && lazy_ && pos + 3 == rs.slots.size() && !rs.exhausted)
    explicit_->prefetch_stream(r);
}

// Successor lists are built by prepending, so they run from the latest
// operation back; ready successors are scheduled in program order.
template <bool L>
void Engine<L>::notify(RankState& rs, std::uint32_t r, std::uint32_t list, Picoseconds t) {
  if (list == kNone) return;
  if ((list & (kInlineSucc | kInlinePair)) == kInlineSucc) {  // one successor, inline
    const std::uint32_t succ = single_pos(list, rs.base);
    Slot& s = rs.slots[succ];
    if constexpr (!L)
      if (s.ready < t) s.ready = t;
    if (--s.pending == 0) schedule_ready(r, succ);
    return;
  }
  notify_list(rs, r, list, t);
}

template <bool L>
void Engine<L>::notify_list(RankState& rs, std::uint32_t r, std::uint32_t list, Picoseconds t) {
  if (is_inline_pair(list)) {  // two inline, in program order
    const std::uint32_t a = pair_first(list, rs.base), b = pair_second(list, rs.base);
    Slot& sa = rs.slots[a];
    Slot& sb = rs.slots[b];
    if constexpr (!L) {
      if (sa.ready < t) sa.ready = t;
      if (sb.ready < t) sb.ready = t;
    }
    const bool a_ready = --sa.pending == 0;
    const bool b_ready = --sb.pending == 0;
    if (a_ready) schedule_ready(r, a);
    if (b_ready) schedule_ready(r, b);
    return;
  }
  const auto base = static_cast<std::uint32_t>(rs.base);
  std::uint32_t ready[8];
  std::uint32_t count = 0;
  std::uint32_t e = list;
  for (; e != kNone && count < 8; e = rs.edges[e].next) {
    const std::uint32_t succ = rs.edges[e].succ - base;
    Slot& s = rs.slots[succ];
    if constexpr (!L)
      if (s.ready < t) s.ready = t;
    if (--s.pending == 0) ready[count++] = succ;
  }
  if (e != kNone) {  // a long list (e.g. a wait on many requests): spill to the scratch vector
    ready_scratch_.assign(ready, ready + count);
    for (; e != kNone; e = rs.edges[e].next) {
      const std::uint32_t succ = rs.edges[e].succ - base;
      Slot& s = rs.slots[succ];
      if constexpr (!L)
        if (s.ready < t) s.ready = t;
      if (--s.pending == 0) ready_scratch_.push_back(succ);
    }
    for (auto it = ready_scratch_.rbegin(); it != ready_scratch_.rend(); ++it) schedule_ready(r, *it);
    return;
  }
  while (count > 0) schedule_ready(r, ready[--count]);
}

template <bool L>
void Engine<L>::lgs_push_freed(std::uint32_t r, std::uint32_t pos) {
  if constexpr (L) {
    const RankState& rs = ranks_[r];
    const Slot& s = rs.slots[pos];
    Picoseconds t = cpu_free(r, s.cpu);
    if (s.kind == OpKind::Send) t = std::max(t, nic_send_free(r, s.nic));
    if (observer_ && t < now_) [[unlikely]]
      t = now_;
    queue_.push(StampedEvent{t, std::uint64_t{r} << 32 | static_cast<std::uint32_t>(rs.base + pos), next_stamp_++});
  }
}

template <bool L>
template <class Accepts>
bool Engine<L>::take_first(Queue& q, Accepts accepts, Pending& out) {
  std::uint32_t prev = kNone;
  for (std::uint32_t e = q.head; e != kNone; prev = e, e = pending_[e].next) {
    if (!accepts(pending_[e])) continue;
    out = pending_[e];
    unlink(q, prev, e);
    return true;
  }
  return false;
}

template <bool L>
void Engine<L>::queue_unexpected(std::uint32_t dest, std::uint32_t sender, std::uint64_t op, std::uint64_t bytes,
                                 std::int32_t tag, std::uint32_t comm) {
  std::uint32_t e = new_pending();
  pending_[e] = Pending{op, bytes, now_, static_cast<std::int32_t>(sender), tag, comm, kNone};
  append(ranks_[dest].unexpected, e);
  if (observer_) [[unlikely]]
    observe_unexpected(dest, sender, op);
}

template <bool L>
std::uint32_t Engine<L>::new_pending() {
  if (free_pending_ != kNone) {
    std::uint32_t e = free_pending_;
    free_pending_ = pending_[e].next;
    return e;
  }
  pending_.push_back(Pending{});
  return static_cast<std::uint32_t>(pending_.size() - 1);
}

template <bool L>
void Engine<L>::append(Queue& q, std::uint32_t e) {
  pending_[e].next = kNone;
  if (q.tail == kNone)
    q.head = e;
  else
    pending_[q.tail].next = e;
  q.tail = e;
}

template <bool L>
void Engine<L>::unlink(Queue& q, std::uint32_t prev, std::uint32_t e) {
  const std::uint32_t next = pending_[e].next;
  if (prev == kNone)
    q.head = next;
  else
    pending_[prev].next = next;
  if (q.tail == e) q.tail = prev;
  pending_[e].next = free_pending_;
  free_pending_ = e;
}

}  // namespace poems::sim::detail
