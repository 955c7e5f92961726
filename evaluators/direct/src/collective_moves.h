// Collective data moved once, straight from each sender's buffer into each
// receiver's, by one of the two ranks as it leaves a blocking call while
// the other is still inside it. Between rank processes the moves are
// process_vm_readv/process_vm_writev; with threads, memcpy. Without it each block was packed into the shared region
// when its rank entered and unpacked when the receiver left: two copies, and a buffer the size of all the data in the
// region (docs/direct.md, "Collective data").
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

// Rank `me`'s part of an all-to-all as it leaves the call (every rank has
// recorded its buffers by then: its part cannot complete before every rank
// has entered): with each peer still in the call, the peer's block to this
// rank is pulled and this rank's block to the peer pushed; a peer that has
// left did both as it left. So every block is copied once, by whichever of
// its two ranks leaves first, while the other is inside the call and its
// buffers hold still. Its own block is copied within its memory. A block
// larger than the one it goes to fails the run (MPI_ERR_TRUNCATE). Without
// lists, a pair's block is `chunk` bytes at peer x chunk.
void exchange_alltoall(Runtime& rt, const char* call, svector<RankBuffers>& ranks, std::size_t chunk, std::size_t me);

}  // namespace poems::direct::detail
