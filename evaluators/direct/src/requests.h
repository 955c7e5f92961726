// The direct-execution runtime's requests (what a rank waits for or tests)
// and its point-to-point messages between a send and the receive that
// matches it. Both tables are shared by all ranks; the engine's observer
// calls reach them on every completion and match, so everything here is
// inline.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <utility>

#include "datatypes.h"
#include "mpi.h"
#include "poems/taskgraph/schedule.h"
#include "shared_memory.h"

namespace poems::direct::detail {

using taskgraph::Picoseconds;

inline constexpr std::uint32_t kNoRequest = ~std::uint32_t{0};
// In Rank::tracked: a rendezvous send the program went on from early
// (Runtime::take_early), kept until the engine completes it for the report of a deadlock.
inline constexpr std::uint32_t kEarlySend = ~std::uint32_t{0} - 1;
inline constexpr std::uint64_t kNoOp = ~std::uint64_t{0};  // a request without an operation (MPI_PROC_NULL)

// Where received data goes: `count` items of a datatype at `buffer` (the
// layout is copied for derived types: the program may free the type).
struct RecvTarget {
  void* buffer = nullptr;
  std::uint64_t count = 0;
  MPI_Datatype type = MPI_BYTE;
  std::uint64_t capacity = 0;  // bytes (count x size)
  svector<Block> blocks;       // derived types: the layout
  std::int64_t extent = 0;
  std::uint64_t size = 0;
};

struct Request {
  enum class Kind : std::uint8_t { Free, Send, Recv, Marker, Collective, Persistent, Generalized, Deferred, Rma };
  Kind kind = Kind::Free;
  bool done = false;
  bool waited = false;      // its rank is blocked until it is done
  bool delivered = true;    // Recv: its data (payload) reached the buffer
  bool persistent = false;  // MPI_Send_init / MPI_Recv_init: survives completion
  bool active = true;       // persistent: started
  bool cancelled = false;
  bool match_pending = false;  // Recv, ranks at once: completed before the engine matched it (Runtime::completed)
  // Recv with DirectOptions::receive_overhead_at_wait: its CPU overhead is
  // still to be paid (by the call that completes it for the program).
  bool overhead_owed = false;
  // Send: a standard (not synchronous) send, whose data are packed already,
  // so a wait may let the program go on at once (Runtime::take_early).
  bool standard = false;
  // Recv: completes only with the engine: what it stands for may be data the
  // engine writes in virtual time (one-sided operations before a
  // post/start/complete/wait notification), not the message alone.
  bool engine_only = false;
  std::uint32_t rank = 0;
  std::uint32_t sender = 0;     // Recv: the world rank whose message matched
  std::uint32_t remaining = 0;  // operations still to complete
  std::uint64_t op = 0;         // the engine operation (the last one, for a collective)
  std::uint32_t op_rank = 0;    // the engine rank whose operation it is (a companion's, for a nonblocking collective)
  Picoseconds done_time = 0;
  const char* call = "";  // the MPI call that posted it
  // Recv: what arrived (the status) and its bytes until the rank delivers them.
  RecvTarget target;
  int source = MPI_ANY_SOURCE, tag = MPI_ANY_TAG;
  std::uint64_t bytes = 0;
  svector<std::byte> payload;
  // Persistent requests: the arguments of each start; a receive's own
  // (peer: its world source or -1 for any, ptag, comm) for Runtime::take_early.
  const void* send_buffer = nullptr;
  int peer = 0, ptag = 0, count = 0;
  MPI_Datatype ptype = MPI_DATATYPE_NULL;
  MPI_Comm comm = MPI_COMM_NULL;
  int mode = 0;                      // persistent sends: 0 standard, 1 synchronous
  std::uint32_t inner = kNoRequest;  // persistent: the request of the current start
  std::uint32_t deferred = 0;        // Kind::Deferred: its schedule (CollectiveRecords::deferred)
  std::uint32_t next_free = 0;
};

// A message between its send and the receive that matches it: its bytes,
// packed, in the shared region (the sender may reuse its buffer at once; the
// receiver copies them out when it sees the receive complete).
struct Message {
  svector<std::byte> data;
  std::uint64_t bytes = 0;
  int tag = 0;
  int source = 0;                      // the sender's rank in the communicator
  std::uint32_t comm = 0;              // communicator handle (the engine's communicator id)
  std::uint32_t ack_tag = kNoRequest;  // synchronous send: the receiver acknowledges the match
  // Early receives (Runtime::take_early): where it is in its receiver's
  // inbox, and the receive that took it before the engine matched it
  // (op_key of the receiving rank and its receive operation; kNoOp if none).
  std::uint64_t inbox_at = 0;
  std::uint64_t taken_by = kNoOp;
};

class RequestTable {
 public:
  Request& operator[](std::uint32_t id) { return requests_[id]; }
  // A fresh request of world rank `rank`, posted by `call`.
  std::uint32_t add(Request::Kind kind, std::uint32_t rank, const char* call) {
    std::uint32_t id;
    if (free_ != 0) {
      id = free_ - 1;
      free_ = requests_[id].next_free;
    } else {
      if (requests_.size() >= 0x7fffffff) throw std::length_error("too many requests");
      requests_.emplace_back();
      id = static_cast<std::uint32_t>(requests_.size() - 1);
    }
    requests_[id] = Request{};
    requests_[id].kind = kind;
    requests_[id].rank = rank;
    requests_[id].call = call;
    return id;
  }
  void release(std::uint32_t id) {
    Request& q = requests_[id];
    q.kind = Request::Kind::Free;
    q.payload = svector<std::byte>();
    q.target = RecvTarget{};
    q.next_free = free_;
    free_ = id + 1;
  }
  // A request of world rank `rank` that its program may name (MPI_ERR_REQUEST otherwise).
  bool valid(MPI_Request handle, std::uint32_t rank) const {
    if (handle < 0 || static_cast<std::size_t>(handle) >= requests_.size()) return false;
    const Request& q = requests_[static_cast<std::size_t>(handle)];
    return q.kind != Request::Kind::Free && q.kind != Request::Kind::Marker && q.rank == rank &&
           !(q.kind == Request::Kind::Collective && q.call[0] == '\0');
  }

 private:
  svector<Request> requests_;
  std::uint32_t free_ = 0;  // 1 + index of the first free request; 0 = none
};

// Messages by the op_key of their send.
class MessageTable {
 public:
  using Map = sunordered_map<std::uint64_t, Message>;
  void add(std::uint64_t key, Message&& m, bool synchronous) {
    if (synchronous) synchronous_ = true;
    bytes_ += m.data.size();
    messages_.emplace(key, std::move(m));
  }
  Map::iterator find(std::uint64_t key) { return messages_.find(key); }
  Map::iterator end() { return messages_.end(); }
  void erase(Map::iterator it) {
    bytes_ -= it->second.data.size();
    messages_.erase(it);
  }
  // Moves a message's bytes out (to its receive request).
  svector<std::byte> take_data(Message& m) {
    bytes_ -= m.data.size();
    return std::move(m.data);
  }
  // Bytes of the messages held, not yet received.
  std::uint64_t bytes() const { return bytes_; }
  Message& at(std::uint64_t key) { return messages_.at(key); }
  // Some receive may owe an acknowledgement (MPI_Ssend has been called).
  bool synchronous() const { return synchronous_; }

 private:
  Map messages_;
  bool synchronous_ = false;
  std::uint64_t bytes_ = 0;
};

}  // namespace poems::direct::detail
