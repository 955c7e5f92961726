// The engine's side of direct execution (poems/sim/observer.h), kept out of
// the hot functions: they only test whether an observer is set.
#include "engine.h"
#include "poems/sim/observer.h"

namespace poems::sim::detail {

void Engine::wake(std::uint32_t r) {
  RankState& rs = ranks_[r];
  rs.blocked = false;
  rs.woken = true;       // read() pulls at least once
  rs.wants_read = true;  // the rank is among the touched ones: read after the event
}

void Engine::observe_completion(std::uint32_t r, std::uint64_t op, Picoseconds t) {
  if (observer_->completed(r, op, t)) wake(r);
}

void Engine::observe_match(std::uint32_t r, std::uint64_t recv_op, std::uint32_t sender, std::uint64_t send_op,
                           Picoseconds t) {
  observer_->matched(r, recv_op, sender, send_op, t);
}

void Engine::observe_unexpected(std::uint32_t dest, std::uint32_t sender, std::uint64_t op) {
  if (observer_->arrived_unexpected(dest, sender, op, now_)) wake(dest);
}

}  // namespace poems::sim::detail
