// The report of a run that could not finish: which ranks wait, on what, and
// where the operation came from (ScheduleSource::node_info()).
#include <string>

#include "engine.h"

namespace poems::sim::detail {

namespace {

std::string rank_or_any(std::int32_t peer) {
  return peer == taskgraph::kAnySource ? std::string("any rank") : "rank " + std::to_string(peer);
}
std::string tag_or_any(std::int32_t tag) {
  return tag == taskgraph::kAnyTag ? std::string("any") : std::to_string(tag);
}

}  // namespace

template <bool L>
std::string Engine<L>::describe(std::uint32_t r, std::uint64_t index, const Slot& s) const {
  std::string what = "operation " + std::to_string(index) + " ";
  switch (s.kind) {
    case OpKind::Calc: what += "calc"; break;
    case OpKind::Send:
      what +=
          "send " + std::to_string(s.amount) + " B to rank " + std::to_string(s.peer) + " tag " + std::to_string(s.tag);
      break;
    case OpKind::Recv:
      what += "recv " + std::to_string(s.amount) + " B from " + rank_or_any(s.peer) + " tag " + tag_or_any(s.tag);
      break;
  }
  if (s.kind != OpKind::Calc && s.comm != 0) what += " comm " + std::to_string(s.comm);
  if (s.node != 0 && s.node < source_.node_count()) what += " [" + node_text(s.node) + "]";
  (void)r;
  return what;
}

template <bool L>
std::string Engine<L>::node_text(std::uint32_t node) const {
  if (node == 0 || node >= source_.node_count()) return {};
  const taskgraph::NodeInfo info = source_.node_info(node);
  return info.location.empty() ? info.label : info.label + " at " + info.location;
}

// Linear in the rank's pending operations and messages: only the listed
// ones are described, because a description may read the operation's line
// back from its file (read_goal_file), which takes time in the size of the
// rank's text; the rest are counted.
template <bool L>
void Engine<L>::report_stuck(SimulationResult& out, std::size_t max_listed) const {
  for (std::uint32_t r = 0; r < nranks_; ++r) {
    const RankState& rs = ranks_[r];
    bool idle = rs.exhausted && rs.unexpected.empty() && rs.posted.empty();
    for (std::size_t i = rs.head; idle && i < rs.slots.size(); ++i) {
      const Slot& s = rs.slots[i];
      idle = (s.flags & kCompleted) && (s.kind != OpKind::Send || (s.flags & kDelivered));
    }
    if (idle) continue;
    out.completed = false;
    ++out.stuck_total;
    if (out.stuck.size() >= max_listed) continue;
    StuckRank stuck{r, {}};
    std::size_t blocked_on_deps = 0, waits_not_listed = 0;
    for (std::size_t i = rs.head; i < rs.slots.size(); ++i) {
      const Slot& s = rs.slots[i];
      if (s.flags & kCompleted) continue;
      const bool waits_in_it = (s.flags & kStarted) && s.kind != OpKind::Calc;
      if (!waits_in_it && s.pending > 0) {
        ++blocked_on_deps;
        continue;
      }
      if (stuck.waits.size() >= kStuckWaitsListed) {
        ++waits_not_listed;
        continue;
      }
      const std::string what = describe(r, rs.base + i, s);
      if (waits_in_it && s.kind == OpKind::Recv)
        stuck.waits.push_back("waits in " + what + ": no matching message arrived");
      else if (waits_in_it)
        stuck.waits.push_back("waits in " + what + " (rendezvous): no matching receive was posted");
      else
        stuck.waits.push_back("cannot start " + what);
    }
    if (waits_not_listed > 0)
      stuck.waits.push_back("... and " + std::to_string(waits_not_listed) + " more waiting operation(s) not listed");
    if (blocked_on_deps > 0)
      stuck.waits.push_back(std::to_string(blocked_on_deps) + " later operation(s) wait for these");
    std::size_t messages_listed = 0, messages_not_listed = 0;
    for (std::uint32_t e = rs.unexpected.head; e != kNone; e = pending_[e].next) {
      if (messages_listed == kStuckMessagesListed) {
        ++messages_not_listed;
        continue;
      }
      ++messages_listed;
      const Pending& m = pending_[e];
      stuck.waits.push_back("holds an unmatched message from rank " + std::to_string(m.src) + " tag " +
                            std::to_string(m.tag) + (m.comm ? " comm " + std::to_string(m.comm) : std::string()) +
                            " (" + std::to_string(m.bytes) + " B) that no receive matched");
    }
    if (messages_not_listed > 0)
      stuck.waits.push_back("... and " + std::to_string(messages_not_listed) + " more unmatched message(s) not listed");
    if (!rs.exhausted) stuck.waits.push_back("has operations not yet read from its schedule");
    out.stuck.push_back(std::move(stuck));
  }
}

template std::string Engine<false>::describe(std::uint32_t, std::uint64_t, const Slot&) const;
template std::string Engine<false>::node_text(std::uint32_t) const;
template void Engine<false>::report_stuck(SimulationResult&, std::size_t) const;
template std::string Engine<true>::describe(std::uint32_t, std::uint64_t, const Slot&) const;
template std::string Engine<true>::node_text(std::uint32_t) const;
template void Engine<true>::report_stuck(SimulationResult&, std::size_t) const;

}  // namespace poems::sim::detail
