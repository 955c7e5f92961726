// The direct-execution runtime's collective calls, their data side (the
// timing side is the engine's, from the algorithm library): one record per
// call of a communicator while ranks are in it, and the schedules of
// nonblocking collectives waiting for their rank to reach the call.
#pragma once

#include <sys/types.h>

#include <compare>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "communicators.h"
#include "mpi.h"
#include "poems/taskgraph/schedule.h"
#include "shared_memory.h"

namespace poems::direct::detail {

using taskgraph::Dependency;
using taskgraph::Operation;

// One collective call of a communicator: its handle, the member for
// MPI_COMM_SELF (whose collectives are each rank's own), its sequence number.
struct CollectiveKey {
  MPI_Comm comm = MPI_COMM_NULL;
  std::uint32_t self_rank = 0;
  std::uint64_t seq = 0;
  auto operator<=>(const CollectiveKey&) const = default;
};

// Where one rank's data of a collective are, for the moves of
// collective_moves.h: its process, its send and receive buffers, and (for
// the v-forms) each peer's block in them: byte offset and bytes. Without
// the lists, block j is `chunk` bytes at j x chunk.
struct RankBuffers {
  pid_t pid = 0;
  std::uintptr_t send = 0, recv = 0;
  svector<std::uint64_t> send_offset, send_bytes, recv_offset, recv_bytes;
  bool entered = false;  // it has recorded the above
  bool left = false;     // it has moved its blocks and left the call
};

// The data side of one collective call (the timing side is the engine's):
// contributions are copied when ranks enter, results computed once all are in.
struct Collective {
  CollectiveKey key;
  int op = 0;  // what the call is (taskgraph::CollectiveOp, or a kind of ours above it)
  const char* call = "";
  int root = 0, count = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_Op reduce = MPI_OP_NULL;
  std::size_t chunk = 0;  // bytes of one rank's contribution (packed)
  svector<std::byte> data;
  svector<svector<std::byte>> parts;  // v-collectives: each rank's (or pair's) packed part
  svector<std::byte> result;
  bool result_ready = false;
  std::uint32_t entered = 0, left = 0, contributed = 0;
  svector<std::pair<int, int>> split;  // Comm_split: (color, key) by communicator rank
  smap<int, MPI_Comm> created;         // Comm_split / Comm_dup: new communicator by color
  svector<std::int64_t> values;        // small per-rank values (window creation)
  svector<RankBuffers> buffers;        // blocking all-to-all(v/w): moved once between them (collective_moves.h)
};

// A nonblocking collective's schedule, waiting for its rank's program to
// reach the call in virtual time (a marker operation) before the companion
// runs it. Indices are relative to the schedule's first operation.
struct DeferredSchedule {
  std::uint32_t companion = 0;
  svector<Operation> ops;
  svector<Dependency> deps;
  svector<std::uint64_t> exits;
  std::uint32_t request = 0;
};

class CollectiveRecords {
 public:
  // The record of call `key`, made when its first rank enters.
  Collective& record(const CollectiveKey& key) { return records_[key]; }
  Collective* find(const CollectiveKey& key) {
    auto it = records_.find(key);
    return it == records_.end() ? nullptr : &it->second;
  }
  // A rank of `c` is done with the call's data (the last one frees it).
  void finish(const Comm& c, Collective& col) {
    if (++col.left < static_cast<std::uint32_t>(c.size())) return;
    records_.erase(col.key);
  }

  // A free entry for a deferred schedule: its index.
  std::uint32_t add_deferred() {
    std::uint32_t index;
    if (free_deferred_ != 0) {
      index = free_deferred_ - 1;
      free_deferred_ = deferred_[index].request;
    } else {
      deferred_.emplace_back();
      index = static_cast<std::uint32_t>(deferred_.size() - 1);
    }
    return index;
  }
  DeferredSchedule& deferred(std::uint32_t index) { return deferred_[index]; }
  void release_deferred(std::uint32_t index) {
    DeferredSchedule& d = deferred_[index];
    d = DeferredSchedule{};
    d.request = free_deferred_;
    free_deferred_ = index + 1;
  }

 private:
  smap<CollectiveKey, Collective> records_;
  svector<DeferredSchedule> deferred_;
  std::uint32_t free_deferred_ = 0;  // 1 + first free entry
};

}  // namespace poems::direct::detail
