// The engine's side of direct execution (poems/sim/observer.h), kept out of
// the hot functions: they only test whether an observer is set.
#include "engine.h"
#include "poems/sim/observer.h"

namespace poems::sim::detail {

template <bool L>
void Engine<L>::wake(std::uint32_t r) {
  RankState& rs = ranks_[r];
  rs.blocked = false;
  rs.woken = true;         // read() pulls at least once
  mark_wants_read(rs, r);  // the rank is among the touched ones: read after the event
}

template <bool L>
void Engine<L>::observe_completion(std::uint32_t r, std::uint64_t op, Picoseconds t) {
  if (observer_->completed(r, op, t)) wake(r);
}

template <bool L>
void Engine<L>::observe_match(std::uint32_t r, std::uint64_t recv_op, std::uint32_t sender, std::uint64_t send_op,
                              Picoseconds t) {
  observer_->matched(r, recv_op, sender, send_op, t);
}

template <bool L>
void Engine<L>::observe_unexpected(std::uint32_t dest, std::uint32_t sender, std::uint64_t op) {
  if (observer_->arrived_unexpected(dest, sender, op, now_)) wake(dest);
}

template <bool L>
bool Engine<L>::read_woken() {
  return read_named(observer_->take_woken());
}

template <bool L>
bool Engine<L>::read_drained() {
  return read_named(observer_->drained(now_));
}

template <bool L>
bool Engine<L>::read_named(std::span<const std::uint32_t> ranks) {
  if (ranks.empty()) return false;
  named_scratch_.assign(ranks.begin(), ranks.end());  // reading may call the observer again
  for (std::uint32_t r : named_scratch_) {
    if (r >= nranks_) throw SimulationError("the observer named rank " + std::to_string(r) + ", which is no rank");
    wake(r);
    read(r);
    if constexpr (L) lgs_queue_freed();  // what the read freed, as after an event
  }
  return true;
}

template void Engine<false>::wake(std::uint32_t);
template void Engine<false>::observe_completion(std::uint32_t, std::uint64_t, Picoseconds);
template void Engine<false>::observe_match(std::uint32_t, std::uint64_t, std::uint32_t, std::uint64_t, Picoseconds);
template void Engine<false>::observe_unexpected(std::uint32_t, std::uint32_t, std::uint64_t);
template bool Engine<false>::read_woken();
template bool Engine<false>::read_drained();
template void Engine<true>::wake(std::uint32_t);
template void Engine<true>::observe_completion(std::uint32_t, std::uint64_t, Picoseconds);
template void Engine<true>::observe_match(std::uint32_t, std::uint64_t, std::uint32_t, std::uint64_t, Picoseconds);
template void Engine<true>::observe_unexpected(std::uint32_t, std::uint32_t, std::uint64_t);
template bool Engine<true>::read_woken();
template bool Engine<true>::read_drained();

}  // namespace poems::sim::detail
