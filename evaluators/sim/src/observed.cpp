// Direct execution's side of the engine (poems/sim/observer.h): ranks whose
// programs may go on are read once the current event is handled.
#include "engine.h"

namespace poems::sim::detail {

void Engine::wake(std::uint32_t r) {
  RankState& rs = ranks_[r];
  rs.blocked = false;
  if (!rs.woken) {
    rs.woken = true;
    woken_.push_back(r);
  }
}

// Reading a woken rank runs its program, which may complete nothing (only
// events do), so no rank is woken while this runs; index-based anyway.
void Engine::read_woken() {
  for (std::size_t i = 0; i < woken_.size(); ++i) {
    const std::uint32_t r = woken_[i];
    read(r);
    retire(r);
  }
  woken_.clear();
}

}  // namespace poems::sim::detail
