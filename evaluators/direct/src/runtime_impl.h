// The direct-execution runtime: a ScheduleSource whose operations come from
// running programs, and the ExecutionObserver through which the simulator's
// engine tells it what completed, matched and arrived.
//
// Coupling (docs/direct.md): a rank's MPI calls append operations to the
// rank's outbox; the engine pulls them. A call that needs something the
// engine has not simulated yet (a receive's data, a request's completion, the
// virtual time) hands the turn back; pull then answers kBlocked, and the
// observer's completed()/arrived_unexpected() answer true once the call may
// go on, so the engine pulls (and the rank runs) again. Every operation a
// rank issues depends on the one before it, so the source issues in order.
//
// Ranks are OS processes (default: each has its own globals and C library
// state) or user-level threads of one process (Isolation::Threads). Either
// way exactly one of them, or the controller that runs the engine, executes
// at any time, so the state below needs no locks. With processes it lives in
// the shared region (shared_memory.h): everything that is written after the
// ranks start uses SharedAlloc containers. Data reach a receive buffer in
// the receiving rank (deliver()), never from the controller, which cannot
// write into a rank's memory.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "datatypes.h"
#include "mpi.h"
#include "poems/direct/runtime.h"
#include "poems/sim/observer.h"
#include "shared_memory.h"

namespace poems::direct::detail {

using taskgraph::Dependency;
using taskgraph::Operation;
using taskgraph::OpKind;
using taskgraph::Picoseconds;

class RankThreads;

// Thrown inside a rank's thread to unwind its program when the run stops (threads only).
struct RankUnwind {};
// Thrown on the controller's side (out of pull or an observer call) to stop the engine.
struct RunStopped {};

inline constexpr std::uint32_t kNoRequest = ~std::uint32_t{0};
inline constexpr std::uint64_t kNoOp = ~std::uint64_t{0};  // a request without an operation (MPI_PROC_NULL)
// Communicator ids on the wire: application messages use the communicator's
// handle; collectives use taskgraph::collective_comm; acknowledgements of
// synchronous sends and one-sided traffic use these (never matched by programs).
inline constexpr std::uint32_t kAckComm = 0x40000000u;
inline constexpr std::uint32_t kRmaComm = 0x20000000u;

// A rank-local operation index with its rank, as one key.
inline std::uint64_t op_key(std::uint32_t rank, std::uint64_t op) { return std::uint64_t{rank} << 40 | op; }

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

struct Request {
  enum class Kind : std::uint8_t { Free, Send, Recv, Marker, Collective, Persistent, Generalized, Deferred, Rma };
  Kind kind = Kind::Free;
  bool done = false;
  bool waited = false;      // its rank is blocked until it is done
  bool delivered = true;    // Recv: its data (payload) reached the buffer
  bool persistent = false;  // MPI_Send_init / MPI_Recv_init: survives completion
  bool active = true;       // persistent: started
  bool cancelled = false;
  std::uint32_t rank = 0;
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
  // Persistent requests: the arguments of each start.
  const void* send_buffer = nullptr;
  int peer = 0, ptag = 0, count = 0;
  MPI_Datatype ptype = MPI_DATATYPE_NULL;
  MPI_Comm comm = MPI_COMM_NULL;
  int mode = 0;                      // persistent sends: 0 standard, 1 synchronous
  std::uint32_t inner = kNoRequest;  // persistent: the request of the current start
  std::uint32_t deferred = 0;        // Kind::Deferred: index into deferred_
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
};

struct CartTopology {
  svector<int> dims, periods;
};

// A rank's neighbours in a distributed graph topology (communicator ranks).
struct Neighbors {
  svector<int> sources, destinations;
};

struct Comm {
  svector<std::uint32_t> members;              // world ranks by communicator rank
  sunordered_map<std::uint32_t, int> rank_of;  // world rank -> rank (empty for the world: identity)
  svector<std::uint64_t> started;              // per member: collectives it has started
  bool self = false;                           // MPI_COMM_SELF: one member, whoever asks
  bool freed = false;
  int topology = 0;  // MPI_CART, MPI_GRAPH, MPI_DIST_GRAPH or 0
  CartTopology cart;
  svector<int> graph_index, graph_edges;     // MPI_Graph_create
  smap<std::uint32_t, Neighbors> neighbors;  // distributed graph: by world rank
  sstring name;
  int errhandler = MPI_ERRORS_ARE_FATAL;
  std::uint32_t ranks_per_node = 0;  // MPI_Comm_split_type results (0: not from one)
  int size() const { return self ? 1 : static_cast<int>(members.size()); }
};

struct Group {
  svector<std::uint32_t> members;  // world ranks
  bool used = false;
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
};

// A program rank, or the companion of one (ranks P..2P-1 of the engine): the
// companion carries the rank's nonblocking collectives and serves the
// one-sided operations that target it, with a CPU and NIC of its own, so the
// program's own stream never waits behind them (docs/direct.md).
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

struct Rank {
  enum class State : std::uint8_t { NotStarted, Ready, Blocked, Finished };
  State state = State::NotStarted;
  std::uint32_t world = 0;  // its engine rank (a companion: P + the program rank)
  bool companion = false;
  // Issued operations, not yet pulled from out_read on.
  svector<Operation> out_ops;
  svector<Dependency> out_deps;
  std::size_t out_read = 0;
  std::uint64_t next_op = 0;   // rank-local index of the next operation
  svector<Dependency> after;   // what the next operation depends on
  double compute_ps = 0;       // computation not yet issued
  std::uint64_t cpu_mark = 0;  // host CPU clock when the program last left an MPI call
  std::uint32_t waiting = 0;   // request completions it still waits for
  // Operations whose completion a request counts: (operation, request). A
  // rank has a few at a time, completing mostly in order.
  svector<std::pair<std::uint64_t, std::uint32_t>> tracked;
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
  } probe;                                                      // blocked in MPI_Probe
  svector<std::pair<std::uint32_t, std::uint64_t>> unexpected;  // arrived, unmatched: (sender, send op)
  bool initialized = false, finalized = false;
  bool exiting = false;  // processes: its exit handler ran
  int exit_code = -1;
  const char* blocked_in = "";  // the MPI call it waits in
  svector<sstring> args;
  svector<char*> argv;
  std::uint32_t rma_tags = 0;    // one-sided messages sent (their tags)
  void* bsend_buffer = nullptr;  // MPI_Buffer_attach
  int bsend_size = 0;
  // Processes: the turn (futex word: 1 = run) and the process.
  std::uint32_t go = 0;
  pid_t pid = 0;
};

class Runtime final : public taskgraph::ScheduleSource, public sim::ExecutionObserver {
 public:
  // `program` empty: the ranks continue into the executable's own main
  // (process isolation, launched from the library's constructor).
  Runtime(const Program& program, const std::vector<std::string>& args, const DirectOptions& options);
  ~Runtime() override;
  // Processes: forks the ranks. Returns in the controller (-1) and, when the
  // program is the executable's main, in each rank with its number once the
  // engine first runs it.
  int start_processes();
  DirectResult run();
  // Processes: ends and reaps every rank process still there.
  void reap_all();

  static Runtime* active();  // the runtime of this process's run, or null

  // ---- ScheduleSource --------------------------------------------------------
  std::uint32_t ranks() const override { return static_cast<std::uint32_t>(ranks_.size()); }
  std::uint32_t programs() const { return programs_; }  // program ranks (then as many companions)
  std::size_t pull(std::uint32_t rank, std::size_t max_ops, taskgraph::OpBuffer& out) override;
  std::uint32_t node_count() const override { return static_cast<std::uint32_t>(nodes_.size()); }
  taskgraph::NodeInfo node_info(std::uint32_t node) const override;
  bool issues_in_order() const override { return true; }

  // ---- ExecutionObserver -------------------------------------------------------
  bool completed(std::uint32_t rank, std::uint64_t op, Picoseconds time) override;
  void matched(std::uint32_t rank, std::uint64_t recv_op, std::uint32_t sender, std::uint64_t send_op,
               Picoseconds time) override;
  bool arrived_unexpected(std::uint32_t rank, std::uint32_t sender, std::uint64_t send_op, Picoseconds time) override;
  std::span<const std::uint32_t> take_woken() override;
  std::span<const std::uint32_t> drained(Picoseconds now) override;

  // ---- for the MPI functions (called in a rank) ------------------------------
  bool running() const;  // this code runs in a rank (not the controller)
  Rank& current() { return *current_; }
  const DirectOptions& options() const { return options_; }
  bool threads() const { return options_.isolation == Isolation::Threads; }
  // Entering and leaving an MPI call: the computation in between is measured.
  void enter(const char* call, bool needs_init = true);
  void leave();
  // Stops the run with an MPI error (MPI_ERRORS_ARE_FATAL), naming the call.
  [[noreturn]] void fail(const char* call, const std::string& message);
  [[noreturn]] void abort_run(int code);
  [[noreturn]] void exit_rank(int code);  // threads: exit() in a rank
  // Processes: the rank's exit handler (on_exit): its last computation, its status.
  void rank_exiting(int code);
  // Processes: a process a rank forked called MPI (in that process): tells
  // the controller, which stops the run naming the rank, and ends.
  [[noreturn]] void forked_call(const char* call);
  // In the controller: whether a forked process has reported (the first time
  // it is asked after the report); stops the run if so.
  bool fork_reported();
  void charge(double ps) { current_->compute_ps += ps; }
  void charge_task(const processor::TaskRequest& task);
  bool stopping() const { return stopping_; }
  // The host's clocks when the run started: virtual wall and monotonic time count from them.
  std::uint64_t epoch_realtime_ns() const { return epoch_realtime_ns_; }
  std::uint64_t epoch_monotonic_ns() const { return epoch_monotonic_ns_; }

  // Operations (issue_on: on another rank's stream, from the controller).
  std::uint64_t issue(const Operation& op, std::span<const Dependency> deps, std::uint32_t node) {
    return issue_on(*current_, op, deps, node);
  }
  std::uint64_t issue_on(Rank& k, const Operation& op, std::span<const Dependency> deps, std::uint32_t node);
  void issue_compute();  // the pending computation as a calc operation
  std::uint32_t new_request(Request::Kind kind, const char* call = "");
  Request& request(std::uint32_t id) { return requests_[id]; }
  void free_request(std::uint32_t id);
  // A request of the running rank that the program may name (MPI_ERR_REQUEST otherwise).
  bool valid_request(MPI_Request handle) const;
  // `op`'s completion counts for `request` (`on`: the engine rank whose op it is; default the request's).
  void expect(std::uint32_t request, std::uint64_t op, std::uint32_t on = kNoRequest);
  // Blocks the running rank until `need` of the requests in `ids` are done
  // (all of them if need >= ids.size()).
  void wait_for(std::span<const std::uint32_t> ids, const char* call, std::size_t need = ~std::size_t{0});
  // Issues a zero-time operation after everything the rank did and waits
  // for it: the rank's virtual time, with the engine there.
  Picoseconds checkpoint(const char* call, std::uint32_t node);
  // Copies a completed receive's bytes into its buffer (in the receiving rank).
  void deliver(Request& q);

  // Point to point (ranks are world ranks; the communicator is a handle).
  // `data` is the packed message; `mode` 1 makes it synchronous (completes
  // when the receiver matched it).
  std::uint32_t post_send(svector<std::byte>&& data, std::uint32_t dest, int tag, MPI_Comm comm, bool blocking,
                          int mode, std::uint32_t node, const char* call);
  std::uint32_t post_recv(RecvTarget&& target, std::int32_t source, int tag, MPI_Comm comm, std::uint32_t node,
                          const char* call);
  // The first unexpected message of the running rank that a probe would
  // match, or null.
  const Message* probe_match(std::int32_t source, int tag, MPI_Comm comm);
  std::pair<std::uint32_t, std::uint64_t> probe_match_key(std::int32_t source, int tag, MPI_Comm comm);
  void block_in_probe(std::int32_t source, int tag, MPI_Comm comm, const char* call);
  // MPI_Mprobe: takes the message out of matching; MPI_Mrecv receives it.
  Message* message(std::uint64_t key);

  // Communicators and groups.
  Comm* comm(MPI_Comm handle);  // null if not one of the running rank's
  Comm& comm_at(MPI_Comm handle) { return *comms_[static_cast<std::size_t>(handle)]; }
  int comm_rank(const Comm& c, std::uint32_t world) const;
  std::uint32_t world_rank(const Comm& c, int rank) const;
  MPI_Comm add_comm(svector<std::uint32_t> members);
  std::size_t comm_count() const { return comms_.size(); }
  MPI_Group add_group(svector<std::uint32_t> members);
  // MPI_Comm_create_group: the communicator the running rank's next call
  // with this (communicator, tag, members) joins.
  MPI_Comm group_comm(MPI_Comm parent, int tag, const svector<std::uint32_t>& members);
  Group* group(MPI_Group handle);

  // Datatypes.
  TypeInfo* type(MPI_Datatype handle);  // null if not a valid (live) datatype
  MPI_Datatype add_type(TypeInfo&& t);
  void free_type(MPI_Datatype handle);

  // User-defined operators (MPI_Op_create): the function and whether it commutes.
  struct UserOp {
    MPI_User_function* fn = nullptr;
    bool commute = true;
    bool used = false;
  };
  UserOp* user_op(MPI_Op op);
  MPI_Op add_op(MPI_User_function* fn, bool commute);
  void free_op(MPI_Op op);

  // Keyvals (attributes): copy/delete callbacks and extra state.
  struct Keyval {
    void* copy = nullptr;
    void* del = nullptr;
    void* extra = nullptr;
    bool fortran = false;
    bool used = false;
  };
  int add_keyval(const Keyval& k);
  Keyval* keyval(int k);
  void free_keyval(int k);
  // Attributes are each rank's own: (kind, object, world rank, keyval) -> value.
  enum AttrKind : int { kCommAttr, kTypeAttr, kWinAttr };
  struct AttrKey {
    int kind = 0, object = 0;
    std::uint32_t rank = 0;
    int keyval = 0;
    auto operator<=>(const AttrKey&) const = default;
  };
  smap<AttrKey, std::uintptr_t>& attributes() { return attributes_; }

  // Info objects: key/value pairs, shared table.
  struct InfoObject {
    bool used = false;
    svector<std::pair<sstring, sstring>> entries;
  };
  svector<InfoObject>& infos() { return infos_; }

  // Collectives: the calling rank's operations from the algorithm library
  // (`bytes` as taskgraph::CollectiveCall counts them) and the call's data
  // record. With `wait`, `request` tracks the rank's part (kNoRequest if it
  // has none), so the rank can wait before it uses the result.
  Collective& start_collective(MPI_Comm comm, taskgraph::CollectiveOp op, std::uint64_t bytes, int root,
                               const char* call, bool wait, std::uint32_t& request);
  // The same with a schedule of our own (v-collectives): `build` appends
  // this rank's operations given the first index and the entry dependencies,
  // returning the indices that complete its part.
  using ScheduleBuilder = std::function<std::vector<std::uint64_t>(
      std::uint64_t first, const std::vector<Dependency>& entry, std::int32_t tag, taskgraph::OpBuffer& out)>;
  Collective& start_custom_collective(MPI_Comm comm, int kind, int root, const char* call, bool wait,
                                      std::uint32_t& request, const ScheduleBuilder& build);
  // A nonblocking collective: the rank's schedule runs on its companion from
  // the rank's present virtual time on; `request` (a program-visible request)
  // completes with it.
  Collective& start_nonblocking_collective(MPI_Comm comm, int kind, int root, const char* call, std::uint32_t& request,
                                           const ScheduleBuilder& build);
  Collective& start_nonblocking_collective(MPI_Comm comm, taskgraph::CollectiveOp op, std::uint64_t bytes, int root,
                                           const char* call, std::uint32_t& request);
  // The rank is done with the call's data (the last one frees it).
  void finish_collective(MPI_Comm comm, Collective& c);
  Collective* find_collective(const CollectiveKey& key);
  std::uint32_t node_of(const char* label);
  std::uint32_t collective_tag(MPI_Comm comm, std::uint64_t seq) const;

  // Nonblocking operations that finish in the rank when their request
  // completes (a nonblocking collective's copy-out): private to the rank's
  // process, run by complete_request().
  void on_complete(std::uint32_t request, std::function<void()> action);
  // Runs what the program sees when a request completes: data delivery and actions.
  void complete_request(std::uint32_t id);

  // Computation.
  void start_cpu_mark();

  // One-sided communication.
  svector<Window>& windows() { return windows_; }
  pid_t pid_of(std::uint32_t world) const { return ranks_[world].pid; }
  // Sends a one-sided message from the running rank to the companion of
  // world rank `target_world`; with reply_bytes the companion answers and
  // the returned request waits for the answer (kNoRequest otherwise).
  std::uint32_t rma_send(const RmaMessage& m, std::uint32_t target_world, std::uint64_t bytes, bool reply,
                         const char* call);
  // Whether the messages of window `win` go to a companion that serves it.
  void serve_rma(std::uint32_t companion, std::uint32_t sender, std::uint64_t send_op);

 private:
  friend struct ProcessControl;
  void start_rank_thread(std::uint32_t r);
  void resume(Rank& k);
  void suspend(Rank& k);  // in the rank; unwinds (threads) or exits (processes) when the run stops
  void unwind_all();
  void stop(const std::string& error);
  void describe_blocked(DirectResult& out) const;
  void reap(Rank& k, int status);
  void process_resume(Rank& k);
  void process_suspend(Rank& k);
  [[noreturn]] void rank_process_main(std::uint32_t r);
  void append_ops(Rank& k, const taskgraph::OpBuffer& ops, std::size_t from);
  void run_deferred(std::uint32_t index);
  taskgraph::CollectiveCall library_call(MPI_Comm handle, taskgraph::CollectiveOp op, std::uint64_t bytes, int root,
                                         const char* call, std::int32_t tag);
  void strip_companions(DirectResult& out) const;
  void write_chrome_timeline(DirectResult& out) const;  // after strip_companions
  // The calling rank enters the next collective on `handle` (`seq`, its
  // number there): the call's record, checked against the other ranks'.
  Collective& enter_collective(MPI_Comm handle, int kind, int root, const char* call, std::uint64_t& seq);

  Program program_;
  std::vector<std::string> args_;
  DirectOptions options_;
  std::uint32_t programs_ = 0;
  bool measure_ = true;
  std::uint64_t clock_cost_ns_ = 0;  // host CPU time of reading the clock, taken off each measured interval
  svector<Rank> ranks_;
  std::unique_ptr<RankThreads> threads_;  // Isolation::Threads
  Rank* current_ = nullptr;
  svector<std::pair<sstring, sstring>> nodes_;  // label, location
  smap<sstring, std::uint32_t> node_ids_;
  sunordered_map<const char*, std::uint32_t> node_by_literal_;  // labels are string literals
  std::uint32_t compute_node_ = 0;
  svector<Request> requests_;
  std::uint32_t free_requests_ = 0;                  // 1 + index of the first free request; 0 = none
  sunordered_map<std::uint64_t, Message> messages_;  // op_key of the send -> message
  svector<Comm*> comms_;
  svector<Group> groups_;
  struct GroupComms {
    svector<MPI_Comm> made;
    smap<std::uint32_t, std::uint32_t> calls;  // by world rank
  };
  smap<std::pair<std::pair<MPI_Comm, int>, svector<std::uint32_t>>, GroupComms> group_comms_;
  svector<TypeInfo> types_;
  std::uint32_t free_types_ = 0;  // 1 + first free derived type handle
  svector<UserOp> user_ops_;
  svector<Keyval> keyvals_;
  smap<AttrKey, std::uintptr_t> attributes_;
  svector<Window> windows_;
  sunordered_map<std::uint64_t, RmaMessage> rma_messages_;  // op_key of the send -> what it asks
  svector<InfoObject> infos_;
  smap<CollectiveKey, Collective> collectives_;
  std::unique_ptr<processor::ProcessorModel> processor_;
  sstring error_;
  int abort_code_ = 0;
  bool stopping_ = false;           // the run is being stopped: ranks unwind
  bool synchronous_sends_ = false;  // some receive may owe an acknowledgement (MPI_Ssend)
  bool companions_done_ = false;    // the queue ran dry: companions end
  svector<DeferredSchedule> deferred_;
  std::uint32_t free_deferred_ = 0;           // 1 + first free entry
  svector<std::uint32_t> woken_, woken_out_;  // ranks to read that no event touched
  std::uint64_t switches_ = 0, mpi_calls_ = 0, measured_ns_ = 0;
  std::uint64_t epoch_realtime_ns_ = 0, epoch_monotonic_ns_ = 0;
  // Processes: the rank that handed the turn back last.
  std::int32_t yielded_ = -1;
  pid_t controller_ = 0;
  // A forked process's MPI call (written by that process alone, atomically):
  // the rank that forked it (-1: none), and the call.
  std::int32_t forked_claim_ = 0;
  std::int32_t forked_rank_ = -1;
  char forked_call_[64] = {};
  bool fork_handled_ = false;  // the controller has stopped the run for it
};

// The rank number of this process (processes), or -1 (the controller, or threads).
std::int32_t self_rank_process();
// In a process a rank forked: that rank; else -1.
std::int32_t forked_from_rank();
// Notes forks in every process from now on (forked_from_rank).
void watch_forks();

// Runs `program` with one process per rank (poems::direct::run for Isolation::Processes).
DirectResult run_processes(const Program& program, const std::vector<std::string>& args, const DirectOptions& options);
// After a run with processes: reaps the ranks, destroys the runtime, restores
// SIGCHLD; as the program's own process (a subreaper), kills what the ranks
// left behind and says so in `result`.
void finish_processes(Runtime* rt, DirectResult* result = nullptr);
// The shared region's size when the options leave it open (docs/direct.md,
// "Limits"): kSharedBase + kSharedPerRank per rank, at most the machine's
// memory and, under an address-space limit (ulimit -v), half of what is left.
inline constexpr std::size_t kSharedBase = std::size_t{1} << 30;
inline constexpr std::size_t kSharedPerRank = std::size_t{64} << 10;
std::size_t default_shared_bytes(std::uint32_t ranks);
// Maps the shared region of a run with processes (DirectOptions::shared_bytes
// or the default); the error names its size and how to change it.
void create_shared_region(const DirectOptions& options);

}  // namespace poems::direct::detail
