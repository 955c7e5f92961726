// Collective data moved once between the ranks' own buffers (collective_moves.h).
#include "collective_moves.h"

#include <sys/uio.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace poems::direct::detail {

namespace {

// A word every rank process has at the same address (they are forked from
// one controller); a process that reads it back from a sibling can move
// data between them.
volatile std::uint64_t g_probe = 0x504f454d53434d41;  // "POEMSCMA"

[[noreturn]] void unreachable(Runtime& rt, const char* call, ssize_t done) {
  rt.fail(call, "cannot move the collective's data between rank processes (" +
                    std::string(done < 0 ? std::strerror(errno) : "a partial transfer") +
                    "); run with --isolation threads");
}

// `bytes` between this process's `local` and `remote` in process `peer`
// (`pull`: from remote to local), or both here (peer 0: threads).
void copy(Runtime& rt, const char* call, pid_t peer, bool pull, std::uintptr_t local, std::uintptr_t remote,
          std::size_t bytes) {
  if (bytes == 0) return;
  if (peer == 0) {
    if (pull)
      std::memmove(reinterpret_cast<void*>(local), reinterpret_cast<const void*>(remote), bytes);
    else
      std::memmove(reinterpret_cast<void*>(remote), reinterpret_cast<const void*>(local), bytes);
    return;
  }
  iovec here{reinterpret_cast<void*>(local), bytes}, there{reinterpret_cast<void*>(remote), bytes};
  const ssize_t done =
      pull ? ::process_vm_readv(peer, &here, 1, &there, 1, 0) : ::process_vm_writev(peer, &here, 1, &there, 1, 0);
  if (done != static_cast<ssize_t>(bytes)) unreachable(rt, call, done);
}

// Rank i's block to rank j (datatypes.h has a Block of its own).
struct PairBlock {
  std::uintptr_t src = 0, dst = 0;
  std::uint64_t bytes = 0, room = 0;
};

PairBlock pair_block(Runtime& rt, const char* call, const svector<RankBuffers>& ranks, std::size_t chunk, std::size_t i,
                     std::size_t j) {
  const RankBuffers &from = ranks[i], &to = ranks[j];
  const bool send_listed = !from.send_bytes.empty(), recv_listed = !to.recv_bytes.empty();
  const PairBlock b{from.send + (send_listed ? from.send_offset[j] : j * chunk),
                    to.recv + (recv_listed ? to.recv_offset[i] : i * chunk), send_listed ? from.send_bytes[j] : chunk,
                    recv_listed ? to.recv_bytes[i] : chunk};
  if (b.bytes > b.room)
    rt.fail(call, "rank " + std::to_string(i) + " sends " + std::to_string(b.bytes) + " bytes, rank " +
                      std::to_string(j) + " receives " + std::to_string(b.room) + " (MPI_ERR_TRUNCATE)");
  return b;
}

}  // namespace

bool can_move_between_ranks(Runtime& rt) {
  if (rt.threads()) return true;
  static int reachable = -1;  // per process: -1 not probed yet
  if (reachable < 0) {
    const std::uint32_t me = rt.current().world;
    const std::uint32_t other = me == 0 ? 1 : 0;
    if (other >= rt.programs()) return true;  // one rank: nothing to reach
    std::uint64_t word = 0;
    iovec local{&word, sizeof word}, remote{const_cast<std::uint64_t*>(&g_probe), sizeof word};
    reachable = ::process_vm_readv(rt.pid_of(other), &local, 1, &remote, 1, 0) == sizeof word && word == g_probe;
  }
  return reachable == 1;
}

void exchange_alltoall(Runtime& rt, const char* call, svector<RankBuffers>& ranks, std::size_t chunk, std::size_t me) {
  const bool threads = rt.threads();
  for (std::size_t m = 0; m < ranks.size(); ++m) {
    if (m == me) {
      const PairBlock own = pair_block(rt, call, ranks, chunk, me, me);
      if (own.bytes > 0)
        std::memmove(reinterpret_cast<void*>(own.dst), reinterpret_cast<const void*>(own.src), own.bytes);
      continue;
    }
    if (ranks[m].left) continue;  // it moved both blocks with this rank as it left
    // Every algorithm run for these calls (pairwise, linear) has each rank
    // receive from every other, so no part completes before all have
    // entered; one that did not would leave buffers unknown here.
    if (!ranks[m].entered)
      rt.fail(call, "internal error: rank " + std::to_string(me) + " left the all-to-all before rank " +
                        std::to_string(m) + " entered it");
    const pid_t peer = threads ? 0 : ranks[m].pid;
    const PairBlock in = pair_block(rt, call, ranks, chunk, m, me), out = pair_block(rt, call, ranks, chunk, me, m);
    copy(rt, call, peer, true, in.dst, in.src, in.bytes);
    copy(rt, call, peer, false, out.src, out.dst, out.bytes);
  }
  ranks[me].left = true;
}

}  // namespace poems::direct::detail
