// The direct-execution runtime's one-sided communication (its MPI functions
// are in mpi_rma.cpp): the windows and the one-sided messages in flight to
// the companions that serve them. The data move in the ranks (origin to
// target memory) at the call; the messages carry the timing, and the
// target's companion keeps each window's locks.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "mpi.h"
#include "shared_memory.h"

namespace poems::direct::detail {

class Runtime;
struct Rank;

// One-sided communication (mpi_rma.cpp). A window's memory at each of its
// ranks, the lock each target's companion keeps, and what each origin has
// outstanding at each target.
struct WindowRank {
  std::uintptr_t base = 0;
  MPI_Aint size = 0;
  int disp_unit = 1;
  std::uint32_t world = 0;
  bool shared = false;  // in the shared region (MPI_Win_allocate*): any rank reads it directly
};
struct LockWaiter {
  std::uint32_t origin = 0;  // world rank
  int tag = 0;
  int type = 0;
};
struct TargetLock {
  int exclusive = -1;  // world rank holding it exclusively, or -1
  std::uint32_t shared = 0;
  svector<LockWaiter> waiting;
};
struct Outstanding {
  int target = 0;             // communicator rank
  std::uint32_t request = 0;  // a reply the origin waits for (get, fetch) or kNoRequest
};
struct Window {
  bool used = false;
  MPI_Comm comm = MPI_COMM_NULL;
  int flavor = MPI_WIN_FLAVOR_CREATE;
  svector<WindowRank> ranks;                                  // by communicator rank
  svector<TargetLock> locks;                                  // by communicator rank
  smap<std::uint32_t, svector<Outstanding>> outstanding;      // by origin world rank
  smap<std::uint32_t, svector<int>> accessed;                 // targets since the last synchronization, by origin
  smap<std::uint32_t, svector<int>> post_group, start_group;  // PSCW, by world rank
  svector<std::pair<std::uintptr_t, MPI_Aint>> attached;      // dynamic windows
  std::uintptr_t shared_block = 0;                            // MPI_Win_allocate_shared: one block for all
  std::uint32_t freed = 0;
  sstring name;
};
// A one-sided message in flight to a companion: what the companion does with it.
struct RmaMessage {
  enum Kind : std::uint8_t { Data, Fetch, Flush, Lock, Unlock } kind = Data;
  std::uint32_t window = 0;
  std::uint32_t origin = 0;  // world rank
  int target = 0;            // communicator rank
  int tag = 0;
  std::uint64_t bytes = 0;  // of the message itself
  std::uint64_t reply_bytes = 0;
  int lock_type = 0;
};

class OneSided {
 public:
  svector<Window>& windows() { return windows_; }
  bool any_window() const {
    return std::any_of(windows_.begin(), windows_.end(), [](const Window& w) { return w.used; });
  }
  // Sends a one-sided message from the running rank to the companion of
  // world rank `target_world`; with `reply` the companion answers and the
  // returned request waits for the answer (kNoRequest otherwise).
  std::uint32_t send(Runtime& rt, const RmaMessage& m, std::uint32_t target_world, std::uint64_t bytes, bool reply,
                     const char* call);
  // Whether the engine message (sender, send_op) is a one-sided message.
  bool in_flight(std::uint64_t key) const { return messages_.find(key) != messages_.end(); }
  // The companion `c` of a target receives the one-sided message (sender,
  // send_op) and, for those that ask, answers it (a get's data, a flush, a
  // lock grant) after processing it. False if it is no one-sided message.
  bool serve(Runtime& rt, Rank& c, std::uint32_t sender, std::uint64_t send_op);

 private:
  svector<Window> windows_;
  sunordered_map<std::uint64_t, RmaMessage> messages_;  // op_key of the send -> what it asks
};

}  // namespace poems::direct::detail
