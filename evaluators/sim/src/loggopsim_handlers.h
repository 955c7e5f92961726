// The `loggopsim` semantics: LogGOPSim's simulation core (the LogGOPSim paper, section
// 2.2 and its source) on the engine's windows, successor lists and matching
// queues. Rules, one per row, in docs/simulator.md ("The loggopsim
// semantics"); each has a known-answer test confirmed with LogGOPSim.
// Included by simulator.cpp only, so that its event loop inlines the two
// handlers an event calls (lgs_start, lgs_arrive); the others are defined
// here once, for that translation unit.
#pragma once

#include <algorithm>
#include <cassert>

#include "engine.h"
#include "engine_hot.h"

namespace poems::sim::detail {

using taskgraph::kAnySource;
using taskgraph::kAnyTag;

// LogGOPSim's operation types: operations freed together are queued sends
// first, then receives, then calcs.
inline std::uint8_t lgs_kind(OpKind k) { return k == OpKind::Send ? 1 : k == OpKind::Recv ? 2 : 3; }

template <>
inline void Engine<true>::lgs_complete(std::uint32_t r, std::uint32_t pos) {
  RankState& rs = ranks_[r];
  Slot& s = rs.slots[pos];
  s.flags |= kCompleted;                              // at now_: `done` is not kept (finished() needs no time)
  if (pos == rs.head) head_finished(r);               // a send's message may still be on its way
  s.start = LoggopsimMarks::stamp(events_, ++mark_);  // the completion's stamp (see Slot)
  ++operations_;
  std::uint32_t list = s.done_succ;
  s.done_succ = kNone;
  if (observer_) [[unlikely]]
    observe_completion(r, rs.base + pos, now_);
  const std::size_t walked = edge_order_.empty() ? 0 : freed_.size();
  notify(rs, r, list, now_);
  if (!edge_order_.empty() && freed_.size() - walked >= 2) [[unlikely]]
    lgs_order_walk(r, rs.base + pos, false, walked);
}

template <>
inline void Engine<true>::lgs_start(std::uint32_t r, std::uint32_t pos) {
  RankState& rs = ranks_[r];
  Slot& s = rs.slots[pos];
  switch (s.kind) {
    case OpKind::Calc: {
      Picoseconds& cpu = cpu_free(r, s.cpu);
      if (cpu > now_) return lgs_requeue(cpu, r, kParkCalc);
      cpu = calc_end(r, now_, s.amount);
      word(r, kCompute) += s.amount;
      if (options_.record_timeline) timeline_.push_back(Span{r, s.cpu, Span::Calc, -1, now_, cpu, 0, s.node});
      break;
    }
    case OpKind::Send: {
      Picoseconds& cpu = cpu_free(r, s.cpu);
      Picoseconds& nic = nic_send_free(r, s.nic);
      const Picoseconds free = std::max(cpu, nic);
      if (free > now_) return lgs_requeue(free, r, kParkSend);
      const LgsCosts& costs = lgs_costs(s.amount);
      const Picoseconds busy = costs.send_cpu;
      cpu = now_ + busy;
      nic = now_ + costs.nic;
      word(r, kOverhead) += busy;
      ++messages_;
      // The message's event, stamped before anything this event frees.
      queue_.push(StampedEvent{now_ + p_.o + p_.L, current_key_, next_stamp_++});
      if (options_.record_timeline)
        timeline_.push_back(Span{r, s.cpu, Span::Send, s.peer, now_, now_ + busy, s.amount, s.node});
      break;
    }
    case OpKind::Recv: break;  // posting costs nothing
  }
  s.flags |= kStarted;
  s.ready = LoggopsimMarks::stamp(events_, ++mark_);
  std::uint32_t list = s.start_succ;
  s.start_succ = kNone;
  const std::size_t walked = edge_order_.empty() ? 0 : freed_.size();
  notify(rs, r, list, now_);
  if (!edge_order_.empty() && freed_.size() - walked >= 2) [[unlikely]]
    lgs_order_walk(r, rs.base + pos, true, walked);
  if (s.kind == OpKind::Calc) return lgs_complete(r, pos);
  if (s.kind == OpKind::Send) {
    if (!p_.rendezvous(s.amount)) lgs_complete(r, pos);  // eager: done once it left
    return;
  }
  // A receive is posted: the unexpected messages, already processed, in arrival order.
  Pending msg;
  if (take_first(
          rs.unexpected,
          [&s](const Pending& m) { return receive_matches(s.peer, s.tag, s.comm, m.src, m.tag, m.comm); }, msg)) {
    // LogGOPSim decides by the receive's size here (by the message's in lgs_arrive).
    const bool rendezvous = p_.rendezvous(s.amount);
    if (rendezvous != p_.rendezvous(msg.bytes)) lgs_protocol_mismatch(r, pos, msg.bytes);
    if (rendezvous) lgs_finish_rendezvous(static_cast<std::uint32_t>(msg.src), msg.op, s.cpu, s.nic);
    lgs_complete(r, pos);
    if (observer_) [[unlikely]]
      observe_match(r, rs.base + pos, static_cast<std::uint32_t>(msg.src), msg.op, now_);
    return;
  }
  std::uint32_t e = new_pending();
  pending_[e] = Pending{rs.base + pos, s.amount, 0, s.peer, s.tag, s.comm, kNone};
  append(rs.posted, e);
}

// A message at its destination, processed on the CPU and NIC the send named
// as soon as both are free, whether or not a receive is posted.
template <>
inline void Engine<true>::lgs_arrive(std::uint32_t sender, std::uint32_t pos) {
  RankState& from = ranks_[sender];
  Slot& s = from.slots[pos];
  const auto dest = static_cast<std::uint32_t>(s.peer);
  Picoseconds& cpu = cpu_free(dest, s.cpu);
  Picoseconds& nic = nic_recv_free(dest, s.nic);
  const Picoseconds free = std::max(cpu, nic);
  if (free > now_) return lgs_requeue(free, dest, kParkArrive);
  s.flags |= kDelivered;
  if (pos == from.head) head_finished(sender);  // if it completed too
  const std::uint64_t op = from.base + pos;
  const std::uint64_t bytes = s.amount;
  const std::int32_t tag = s.tag;
  const std::uint32_t comm = s.comm;
  const LgsCosts& costs = lgs_costs(bytes);
  const Picoseconds busy = costs.recv_cpu;
  cpu = now_ + busy;
  nic = now_ + costs.nic;
  word(dest, kOverhead) += busy;
  if (options_.record_timeline)
    timeline_.push_back(Span{dest, s.cpu, Span::Recv, static_cast<std::int32_t>(sender), now_, cpu, bytes, s.node});
  RankState& rs = ranks_[dest];
  Pending rq;
  const auto src = static_cast<std::int32_t>(sender);
  if (take_posted(rs, src, tag, comm, rq)) {
    const auto recv_pos = static_cast<std::uint32_t>(rq.op - rs.base);
    if (p_.rendezvous(bytes)) lgs_finish_rendezvous(sender, op, s.cpu, s.nic);
    lgs_complete(dest, recv_pos);
    if (observer_) [[unlikely]]
      observe_match(dest, rs.base + recv_pos, sender, op, now_);
    return;
  }
  queue_unexpected(dest, sender, op, bytes, tag, comm);
}

// A rendezvous send completes when matched, and its sender's clocks move up
// to the match: CPU `cpu` and NIC `nic`, the indices the event's side named
// (LogGOPSim uses the receive's on a posted receive, the send's otherwise).
template <>
void Engine<true>::lgs_finish_rendezvous(std::uint32_t sender, std::uint64_t op, std::uint32_t cpu, std::uint32_t nic) {
  Picoseconds& c = cpu_free(sender, cpu);
  if (c < now_) c = now_;
  Picoseconds& n = nic_send_free(sender, nic);
  if (n < now_) n = now_;
  lgs_complete(sender, static_cast<std::uint32_t>(op - ranks_[sender].base));
}

template <>
void Engine<true>::lgs_park(Picoseconds at, std::uint32_t rank, std::uint32_t cls) {
  std::uint32_t& id = lot_of_[std::size_t{rank} * kParkClasses + cls];
  if (id != kNone) {
    Lot& lot = lots_[id];
    // Stamps join in ascending order, so the queued entry keeps the smallest.
    if (lot.time == at && current_stamp_ > lot.members.back().stamp) {
      lot.members.push_back(Parked{current_stamp_, current_key_});
      return;
    }
    queue_.push(StampedEvent{at, current_key_, current_stamp_});
    return;
  }
  if (free_lots_.empty()) {
    free_lots_.push_back(static_cast<std::uint32_t>(lots_.size()));
    lots_.emplace_back();
  }
  id = free_lots_.back();
  free_lots_.pop_back();
  Lot& lot = lots_[id];
  lot.time = at;
  lot.rank = rank;
  lot.cls = cls;
  lot.first = 0;
  lot.members.clear();
  lot.members.push_back(Parked{current_stamp_, current_key_});
  queue_.push(StampedEvent{at, kLotKey | id, current_stamp_});
}

template <>
std::uint64_t Engine<true>::lgs_unpark(std::uint32_t id) {
  lot_in_hand_ = id;
  Lot& lot = lots_[id];
  return lot.members[lot.first++].key;
}

template <>
void Engine<true>::lgs_settle() {
  const std::uint32_t id = lot_in_hand_;
  lot_in_hand_ = kNone;
  const Picoseconds back = member_requeued_at_;  // its first member was queued again (times are > 0 then)
  member_requeued_at_ = 0;
  Lot& lot = lots_[id];
  const std::size_t left = lot.members.size() - lot.first;
  const Picoseconds cpu = cpu_free(lot.rank, 0);
  if ((left != 0 || back != 0) && cpu > now_) {
    Picoseconds at = cpu;
    if (lot.cls == kParkSend) at = std::max(at, nic_send_free(lot.rank, 0));
    if (lot.cls == kParkArrive) at = std::max(at, nic_recv_free(lot.rank, 0));
    events_ += left;  // the pops and requeues the members stand for
    requeued_ += left;
    // The first member was queued again for `at` too (no clock moved
    // since), and its stamp is still the smallest: it stays the first.
    assert(back == 0 || back == at);
    if (back != 0) --lot.first;
    if (lot.first >= 64 && 2 * lot.first >= lot.members.size()) {
      lot.members.erase(lot.members.begin(), lot.members.begin() + static_cast<std::ptrdiff_t>(lot.first));
      lot.first = 0;
    }
    lot.time = at;
    queue_.push(StampedEvent{at, kLotKey | id, lot.members[lot.first].stamp});
    return;
  }
  // Each member where it was: at this time, with its stamp; the first, if
  // it was queued again, where that put it.
  if (back != 0) queue_.push(StampedEvent{back, lot.members[lot.first - 1].key, lot.members[lot.first - 1].stamp});
  for (std::size_t i = lot.first; i < lot.members.size(); ++i)
    queue_.push(StampedEvent{now_, lot.members[i].key, lot.members[i].stamp});
  lot_of_[std::size_t{lot.rank} * kParkClasses + lot.cls] = kNone;
  free_lots_.push_back(id);
}

template <>
void Engine<true>::lgs_order_walk(std::uint32_t r, std::uint64_t on, bool on_start, std::size_t from) {
  const std::uint64_t base = ranks_[r].base;
  std::vector<std::pair<std::uint32_t, Freed>> keyed;
  for (std::size_t i = from; i < freed_.size(); ++i) {
    auto it = edge_order_.find(EdgeKey{on, base + freed_[i].pos, r, on_start});
    if (it == edge_order_.end()) return;  // this rank's lists are in program order
    keyed.push_back({it->second, freed_[i]});
  }
  std::stable_sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (std::size_t i = 0; i < keyed.size(); ++i) freed_[from + i] = keyed[i].second;
}

template <>
void Engine<true>::lgs_freed_on_read(std::uint32_t r, std::uint64_t index, std::uint32_t pos, std::uint64_t last) {
  if (last >> 16 == events_) {  // its last dependency was satisfied by this event, at that mark
    freed_.push_back(Freed{r, static_cast<std::uint32_t>(last & 0xffff), pos});
    return;
  }
  if (!observer_)
    bad_input(r, index, ranks_[r].slots[pos].node,
              "became ready before it was read: the source breaks its issues_in_order() promise");
  freed_.push_back(Freed{r, 0, pos});  // a running program issues it now
}

template <>
void Engine<true>::lgs_queue_freed() {
  auto push = [this](std::uint32_t r, std::uint32_t pos) { lgs_push_freed(r, pos); };
  if (freed_.size() == 1) {  // most events free one operation
    push(freed_[0].rank, freed_[0].pos);
    freed_.clear();
    return;
  }
  // By rank, then in the order freed (stable: within a mark, program order).
  for (std::size_t i = 1; i < freed_.size(); ++i) {
    const Freed x = freed_[i];
    std::size_t j = i;
    for (; j > 0 && (freed_[j - 1].rank > x.rank || (freed_[j - 1].rank == x.rank && freed_[j - 1].mark > x.mark)); --j)
      freed_[j] = freed_[j - 1];
    freed_[j] = x;
  }
  for (std::size_t b = 0; b < freed_.size();) {
    const std::uint32_t r = freed_[b].rank;
    std::size_t e = b;
    by_kind_.clear();
    for (; e < freed_.size() && freed_[e].rank == r; ++e)
      by_kind_.push_back(ByKind{lgs_kind(ranks_[r].slots[freed_[e].pos].kind), freed_[e].pos});
    if (by_kind_.size() <= 16) {
      // libstdc++'s std::sort sorts up to 16 elements by insertion, which
      // keeps equal kinds in order: the same, without the call.
      for (std::size_t i = 1; i < by_kind_.size(); ++i) {
        const ByKind x = by_kind_[i];
        std::size_t j = i;
        for (; j > 0 && by_kind_[j - 1].kind > x.kind; --j) by_kind_[j] = by_kind_[j - 1];
        by_kind_[j] = x;
      }
    } else {
      // The same call on the same sequence of kinds as LogGOPSim's, so the
      // order among equal kinds is libstdc++'s std::sort's there too.
      std::sort(by_kind_.begin(), by_kind_.end(), [](const ByKind& x, const ByKind& y) { return x.kind < y.kind; });
    }
    for (const ByKind& k : by_kind_) push(r, k.pos);
    b = e;
  }
  freed_.clear();
}

template <>
void Engine<true>::lgs_protocol_mismatch(std::uint32_t r, std::uint32_t recv_pos, std::uint64_t bytes) const {
  const Slot& s = ranks_[r].slots[recv_pos];
  const bool rendezvous = p_.rendezvous(bytes);
  bad_input(r, ranks_[r].base + recv_pos, s.node,
            "a receive of " + std::to_string(s.amount) + " bytes matched an unexpected message of " +
                std::to_string(bytes) + " bytes, and only one of them is above S = " + std::to_string(p_.S) +
                ": LogGOPSim decides the protocol of an unexpected message by the receive's size, so it would " +
                (rendezvous ? "never complete the rendezvous send" : "complete the eager send a second time") +
                "; give both the same side of S");
}

}  // namespace poems::sim::detail
