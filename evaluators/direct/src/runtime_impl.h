// The direct-execution runtime: a ScheduleSource whose operations come from
// programs running on user-level threads, and the ExecutionObserver through
// which the simulator's engine tells it what completed, matched and arrived.
//
// Coupling (docs/direct.md): a rank's MPI calls append operations to the
// rank's outbox; the engine pulls them. A call that needs something the
// engine has not simulated yet (a receive's data, a request's completion, the
// virtual time) blocks its thread; pull then answers kBlocked, and the
// observer's completed()/arrived_unexpected() answer true once the call may
// go on, so the engine pulls (and the thread runs) again. Every operation a
// rank issues depends on the one before it, so the source issues in order.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "mpi.h"
#include "poems/direct/runtime.h"
#include "poems/sim/observer.h"
#include "threads.h"

namespace poems::direct::detail {

using taskgraph::Dependency;
using taskgraph::Operation;
using taskgraph::OpKind;
using taskgraph::Picoseconds;

// Thrown inside a rank's thread to unwind its program when the run stops.
struct RankUnwind {};
// Thrown on the scheduler's side (out of pull or an observer call) to stop the engine.
struct RunStopped {};

inline constexpr std::uint32_t kNoRequest = ~std::uint32_t{0};
inline constexpr std::uint64_t kNoOp = ~std::uint64_t{0};  // a request without an operation (MPI_PROC_NULL)

// A rank-local operation index with its rank, as one key.
inline std::uint64_t op_key(std::uint32_t rank, std::uint64_t op) { return std::uint64_t{rank} << 40 | op; }

struct Request {
  enum class Kind : std::uint8_t { Free, Send, Recv, Marker, Collective };
  Kind kind = Kind::Free;
  bool done = false;
  bool waited = false;  // its rank is blocked until it is done
  std::uint32_t rank = 0;
  std::uint32_t remaining = 0;  // operations still to complete
  std::uint64_t op = 0;         // the engine operation (the last one, for a collective)
  Picoseconds done_time = 0;
  // Recv: where the data goes, and what arrived (the status).
  void* buffer = nullptr;
  std::uint64_t capacity = 0;
  int source = MPI_ANY_SOURCE, tag = MPI_ANY_TAG;
  std::uint64_t bytes = 0;
  std::uint32_t next_free = 0;
};

// A message between its send and the receive that matches it.
struct Message {
  std::vector<std::byte> copy;  // eager: copied when sent (the sender may reuse its buffer)
  const void* user = nullptr;   // rendezvous: the sender's buffer (the sender waits until the match)
  std::uint64_t bytes = 0;
  int tag = 0;
  int source = 0;          // the sender's rank in the communicator
  std::uint32_t comm = 0;  // communicator handle (the engine's communicator id)
  const void* data() const { return user ? user : static_cast<const void*>(copy.data()); }
};

struct Comm {
  std::vector<std::uint32_t> members;              // world ranks by communicator rank
  std::unordered_map<std::uint32_t, int> rank_of;  // world rank -> rank (empty for the world: identity)
  std::vector<std::uint64_t> started;              // per member: collectives it has started
  bool self = false;                               // MPI_COMM_SELF: one member, whoever asks
  int size() const { return self ? 1 : static_cast<int>(members.size()); }
};

// One collective call of a communicator: its handle, the member for
// MPI_COMM_SELF (whose collectives are each rank's own), its sequence number.
struct CollectiveKey {
  MPI_Comm comm = MPI_COMM_NULL;
  std::uint32_t self_rank = 0;
  std::uint64_t seq = 0;
  auto operator<=>(const CollectiveKey&) const = default;
};

// The data side of one collective call (the timing side is the engine's):
// contributions are copied when ranks enter, results computed once all are in.
struct Collective {
  CollectiveKey key;
  taskgraph::CollectiveOp op{};
  const char* call = "";
  int root = 0, count = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_Op reduce = MPI_OP_NULL;
  std::size_t chunk = 0;  // bytes of one rank's contribution
  std::vector<std::byte> data;
  std::vector<std::byte> result;
  bool result_ready = false;
  std::uint32_t entered = 0, left = 0, contributed = 0;
  std::vector<std::pair<int, int>> split;  // Comm_split: (color, key) by communicator rank
  std::map<int, MPI_Comm> created;         // Comm_split / Comm_dup: new communicator by color
};

struct Rank {
  enum class State : std::uint8_t { NotStarted, Ready, Blocked, Finished };
  RankThread thread;
  State state = State::NotStarted;
  std::uint32_t world = 0;
  taskgraph::OpBuffer out;  // issued, not yet pulled from out_read on
  std::size_t out_read = 0;
  std::uint64_t next_op = 0;      // rank-local index of the next operation
  std::vector<Dependency> after;  // what the next operation depends on
  double compute_ps = 0;          // computation not yet issued
  std::uint64_t cpu_mark = 0;     // host CPU clock when the program last left an MPI call
  std::uint32_t waiting = 0;      // requests it is blocked on
  // Operations whose completion a request counts: (operation, request). A
  // rank has a few at a time, completing mostly in order.
  std::vector<std::pair<std::uint64_t, std::uint32_t>> tracked;
  // The request tracking `op` (kNoRequest if none); `keep` leaves it tracked.
  std::uint32_t untrack(std::uint64_t op, bool keep = false) {
    for (std::size_t i = 0; i < tracked.size(); ++i)
      if (tracked[i].first == op) {
        const std::uint32_t id = tracked[i].second;
        if (!keep) tracked.erase(tracked.begin() + static_cast<std::ptrdiff_t>(i));
        return id;
      }
    return kNoRequest;
  }
  struct {
    bool active = false;
    std::int32_t source = -1;  // world rank or -1
    int tag = MPI_ANY_TAG;
    MPI_Comm comm = MPI_COMM_WORLD;
  } probe;                                                          // blocked in MPI_Probe
  std::vector<std::pair<std::uint32_t, std::uint64_t>> unexpected;  // arrived, unmatched: (sender, send op)
  bool initialized = false, finalized = false;
  int exit_code = -1;
  const char* blocked_in = "";  // the MPI call it waits in
  std::vector<std::string> args;
  std::vector<char*> argv;
};

class Runtime final : public taskgraph::ScheduleSource, public sim::ExecutionObserver {
 public:
  Runtime(const Program& program, const std::vector<std::string>& args, const DirectOptions& options);
  ~Runtime() override;
  DirectResult run();

  static Runtime* active();  // the runtime whose rank is running, or null

  // ---- ScheduleSource --------------------------------------------------------
  std::uint32_t ranks() const override { return static_cast<std::uint32_t>(ranks_.size()); }
  std::size_t pull(std::uint32_t rank, std::size_t max_ops, taskgraph::OpBuffer& out) override;
  std::uint32_t node_count() const override { return static_cast<std::uint32_t>(nodes_.size()); }
  taskgraph::NodeInfo node_info(std::uint32_t node) const override { return taskgraph::node_info_in(nodes_, node); }
  bool issues_in_order() const override { return true; }

  // ---- ExecutionObserver -------------------------------------------------------
  bool completed(std::uint32_t rank, std::uint64_t op, Picoseconds time) override;
  void matched(std::uint32_t rank, std::uint64_t recv_op, std::uint32_t sender, std::uint64_t send_op,
               Picoseconds time) override;
  bool arrived_unexpected(std::uint32_t rank, std::uint32_t sender, std::uint64_t send_op, Picoseconds time) override;

  // ---- for the MPI functions (called on a rank's thread) ----------------------
  bool running() const { return current_ != nullptr; }  // on a rank's thread
  Rank& current() { return *current_; }
  const DirectOptions& options() const { return options_; }
  // Entering and leaving an MPI call: the computation in between is measured.
  void enter(const char* call, bool needs_init = true);
  void leave();
  // Stops the run with an MPI error (MPI_ERRORS_ARE_FATAL), naming the call.
  [[noreturn]] void fail(const char* call, const std::string& message);
  [[noreturn]] void abort_run(int code);
  [[noreturn]] void exit_rank(int code);
  void charge(double ps) { current_->compute_ps += ps; }
  void charge_task(const processor::TaskRequest& task);

  // Operations.
  std::uint64_t issue(const Operation& op, std::span<const Dependency> deps, std::uint32_t node);
  void issue_compute();  // the pending computation as a calc operation
  std::uint32_t new_request(Request::Kind kind);
  Request& request(std::uint32_t id) { return requests_[id]; }
  void free_request(std::uint32_t id);
  bool valid_request(MPI_Request handle) const {
    return handle >= 0 && static_cast<std::size_t>(handle) < requests_.size() &&
           requests_[static_cast<std::size_t>(handle)].kind != Request::Kind::Free &&
           requests_[static_cast<std::size_t>(handle)].kind != Request::Kind::Marker &&
           requests_[static_cast<std::size_t>(handle)].kind != Request::Kind::Collective &&
           requests_[static_cast<std::size_t>(handle)].rank == current_->world;
  }
  void expect(std::uint32_t request, std::uint64_t op);  // `op`'s completion counts for `request`
  // Blocks the running rank until every request in `ids` is done.
  void wait_for(std::span<const std::uint32_t> ids, const char* call);
  // Issues a zero-time operation after everything the rank did and waits
  // for it: the rank's virtual time, with the engine there.
  Picoseconds checkpoint(const char* call, std::uint32_t node);

  // Point to point (ranks are world ranks; the communicator is a handle).
  std::uint32_t post_send(const void* buf, std::uint64_t bytes, std::uint32_t dest, int tag, MPI_Comm comm,
                          bool blocking, std::uint32_t node);
  std::uint32_t post_recv(void* buf, std::uint64_t capacity, std::int32_t source, int tag, MPI_Comm comm,
                          std::uint32_t node);
  // The first unexpected message of the running rank that a probe would
  // match, or null.
  const Message* probe_match(std::int32_t source, int tag, MPI_Comm comm);
  void block_in_probe(std::int32_t source, int tag, MPI_Comm comm, const char* call);

  // Communicators.
  Comm* comm(MPI_Comm handle);
  int comm_rank(const Comm& c, std::uint32_t world) const;
  std::uint32_t world_rank(const Comm& c, int rank) const;
  MPI_Comm add_comm(std::vector<std::uint32_t> members);

  // Collectives: the calling rank's operations from the algorithm library
  // (`bytes` as taskgraph::CollectiveCall counts them) and the call's data
  // record. With `wait`, `request` tracks the rank's part (kNoRequest if it
  // has none), so the rank can wait before it uses the result.
  Collective& start_collective(MPI_Comm comm, taskgraph::CollectiveOp op, std::uint64_t bytes, int root,
                               const char* call, bool wait, std::uint32_t& request);
  // The rank is done with the call's data (the last one frees it).
  void finish_collective(MPI_Comm comm, Collective& c);
  std::uint32_t node_of(const char* label);

 private:
  friend struct RankBody;
  void start_rank(std::uint32_t r);
  void resume(Rank& k);
  void suspend(Rank& k);  // on the rank's thread; throws RankUnwind when the run stops
  void unwind_all();
  void stop(const std::string& error);
  void describe_blocked(DirectResult& out) const;
  Picoseconds compute_now();

  Program program_;
  std::vector<std::string> args_;
  DirectOptions options_;
  bool measure_ = true;
  std::uint64_t clock_cost_ns_ = 0;  // host CPU time of reading the clock, taken off each measured interval
  std::vector<Rank> ranks_;
  std::unique_ptr<StackRegion> stacks_;
  Rank* current_ = nullptr;
  std::vector<taskgraph::NodeInfo> nodes_;
  std::map<std::string, std::uint32_t> node_ids_;
  std::unordered_map<const char*, std::uint32_t> node_by_literal_;  // labels are string literals
  std::uint32_t compute_node_ = 0;
  std::vector<Request> requests_;
  std::uint32_t free_requests_ = 0;                      // 1 + index of the first free request; 0 = none
  std::unordered_map<std::uint64_t, Message> messages_;  // op_key of the send -> message
  std::vector<std::unique_ptr<Comm>> comms_;
  std::map<CollectiveKey, Collective> collectives_;
  std::unique_ptr<processor::ProcessorModel> processor_;
  std::string error_;
  int abort_code_ = 0;
  bool stopping_ = false;  // the run is being stopped: threads unwind
  std::uint64_t switches_ = 0, mpi_calls_ = 0, measured_ns_ = 0;
};

}  // namespace poems::direct::detail
