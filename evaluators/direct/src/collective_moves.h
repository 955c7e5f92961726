// Collective data moved once, straight from each sender's buffer into each
// receiver's, by the last rank to enter a blocking call: every other rank
// is then inside the call, waiting, so its buffers hold still (a blocking
// collective cannot return before every rank has entered it). Between rank
// processes the moves are process_vm_readv/process_vm_writev; with threads,
// memcpy. Without it each block was packed into the shared region when its
// rank entered and unpacked when the receiver left: two copies, and a
// buffer the size of all the data in the region (docs/direct.md,
// "Collective data").
#pragma once

#include <cstddef>
#include <cstdint>

#include "collective_records.h"
#include "runtime_impl.h"

namespace poems::direct::detail {

// True when this rank can move other ranks' data: with threads always; with
// processes when process_vm_readv reaches another rank's process (probed
// once per process; a kernel that forbids it, e.g. Yama's ptrace_scope 1
// between siblings, leaves the packed path).
bool can_move_between_ranks(Runtime& rt);

// The all-to-all of `ranks.size()` ranks, moved by rank `mover`: rank i's
// block j into rank j's block i, `chunk` bytes a pair where a rank gives no
// lists. A block larger than the one it goes to fails the run
// (MPI_ERR_TRUNCATE). Between processes, another rank's block to itself is
// left to that rank (move_own_block as it leaves the call: one copy in its
// own memory, not two through this process).
void move_alltoall(Runtime& rt, const char* call, const svector<RankBuffers>& ranks, std::size_t chunk,
                   std::size_t mover);
// Rank `me`'s block to itself, when move_alltoall left it (`mover` another rank).
void move_own_block(Runtime& rt, const svector<RankBuffers>& ranks, std::size_t chunk, std::size_t me,
                    std::size_t mover);

}  // namespace poems::direct::detail
