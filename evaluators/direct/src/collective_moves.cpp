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

// `bytes` from `src` in process `from` to `dst` in process `to`, through
// this process: directly when one end is this process, else through a
// bounce buffer small enough to stay in the cache.
void move(Runtime& rt, const char* call, pid_t self, pid_t from, std::uintptr_t src, pid_t to, std::uintptr_t dst,
          std::size_t bytes, std::vector<std::byte>& bounce) {
  if (bytes == 0) return;
  if (from == self && to == self) {
    std::memmove(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), bytes);
    return;
  }
  if (from == self || to == self) {
    iovec local{reinterpret_cast<void*>(from == self ? src : dst), bytes};
    iovec remote{reinterpret_cast<void*>(from == self ? dst : src), bytes};
    const ssize_t done = from == self ? ::process_vm_writev(to, &local, 1, &remote, 1, 0)
                                      : ::process_vm_readv(from, &local, 1, &remote, 1, 0);
    if (done != static_cast<ssize_t>(bytes)) unreachable(rt, call, done);
    return;
  }
  constexpr std::size_t piece = 256 * 1024;
  if (bounce.size() < piece) bounce.resize(piece);
  for (std::size_t at = 0; at < bytes; at += piece) {
    const std::size_t n = std::min(piece, bytes - at);
    iovec local{bounce.data(), n};
    iovec in{reinterpret_cast<void*>(src + at), n}, out{reinterpret_cast<void*>(dst + at), n};
    ssize_t done = ::process_vm_readv(from, &local, 1, &in, 1, 0);
    if (done != static_cast<ssize_t>(n)) unreachable(rt, call, done);
    done = ::process_vm_writev(to, &local, 1, &out, 1, 0);
    if (done != static_cast<ssize_t>(n)) unreachable(rt, call, done);
  }
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

namespace {

struct PairBlock {
  std::uintptr_t src = 0, dst = 0;
  std::uint64_t bytes = 0, room = 0;
};

// Rank i's block to rank j (datatypes.h has a Block of its own).
PairBlock pair_block(const svector<RankBuffers>& ranks, std::size_t chunk, std::size_t i, std::size_t j) {
  const RankBuffers &from = ranks[i], &to = ranks[j];
  const bool send_listed = !from.send_bytes.empty(), recv_listed = !to.recv_bytes.empty();
  return {from.send + (send_listed ? from.send_offset[j] : j * chunk),
          to.recv + (recv_listed ? to.recv_offset[i] : i * chunk), send_listed ? from.send_bytes[j] : chunk,
          recv_listed ? to.recv_bytes[i] : chunk};
}

}  // namespace

void move_alltoall(Runtime& rt, const char* call, const svector<RankBuffers>& ranks, std::size_t chunk,
                   std::size_t mover) {
  const bool threads = rt.threads();
  const pid_t self = threads ? 0 : rt.pid_of(rt.current().world);
  std::vector<std::byte> bounce;
  for (std::size_t i = 0; i < ranks.size(); ++i)
    for (std::size_t j = 0; j < ranks.size(); ++j) {
      const PairBlock b = pair_block(ranks, chunk, i, j);
      if (b.bytes > b.room)
        rt.fail(call, "rank " + std::to_string(i) + " sends " + std::to_string(b.bytes) + " bytes, rank " +
                          std::to_string(j) + " receives " + std::to_string(b.room) + " (MPI_ERR_TRUNCATE)");
      if (!threads && i == j && i != mover) continue;  // move_own_block
      move(rt, call, self, threads ? 0 : ranks[i].pid, b.src, threads ? 0 : ranks[j].pid, b.dst, b.bytes, bounce);
    }
}

void move_own_block(Runtime& rt, const svector<RankBuffers>& ranks, std::size_t chunk, std::size_t me,
                    std::size_t mover) {
  if (rt.threads() || me == mover) return;
  const PairBlock b = pair_block(ranks, chunk, me, me);
  if (b.bytes > 0) std::memmove(reinterpret_cast<void*>(b.dst), reinterpret_cast<const void*>(b.src), b.bytes);
}

}  // namespace poems::direct::detail
