// The engine's side of direct execution (poems/sim/observer.h), kept out of
// the hot functions: they only test whether an observer is set.
#include "engine.h"
#include "poems/sim/observer.h"

namespace poems::sim::detail {

template <bool L>
void Engine<L>::wake(std::uint32_t r) {
  RankState& rs = ranks_[r];
  rs.blocked = false;
  rs.woken = true;       // read() pulls at least once
  rs.wants_read = true;  // the rank is among the touched ones: read after the event
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

template void Engine<false>::wake(std::uint32_t);
template void Engine<false>::observe_completion(std::uint32_t, std::uint64_t, Picoseconds);
template void Engine<false>::observe_match(std::uint32_t, std::uint64_t, std::uint32_t, std::uint64_t, Picoseconds);
template void Engine<false>::observe_unexpected(std::uint32_t, std::uint32_t, std::uint64_t);
template void Engine<true>::wake(std::uint32_t);
template void Engine<true>::observe_completion(std::uint32_t, std::uint64_t, Picoseconds);
template void Engine<true>::observe_match(std::uint32_t, std::uint64_t, std::uint32_t, std::uint64_t, Picoseconds);
template void Engine<true>::observe_unexpected(std::uint32_t, std::uint32_t, std::uint64_t);

}  // namespace poems::sim::detail
