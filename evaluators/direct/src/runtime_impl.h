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
//
// Runtime keeps the ranks, their outboxes and the turn; the rest of the state
// is in parts it holds by value, each in its own header and called directly
// (no virtual calls): requests and point-to-point messages (requests.h),
// communicators and groups (communicators.h), datatypes, operators, keyvals
// and infos (object_tables.h), collective calls' data and deferred schedules
// (collective_records.h), one-sided windows and messages (one_sided.h), and
// computation's cost and the clocks' epochs (virtual_clock.h).
#pragma once

#include <pthread.h>
#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "collective_records.h"
#include "communicators.h"
#include "datatypes.h"
#include "mpi.h"
#include "object_tables.h"
#include "one_sided.h"
#include "poems/direct/runtime.h"
#include "poems/sim/observer.h"
#include "requests.h"
#include "shared_memory.h"
#include "virtual_clock.h"

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

// A rank-local operation index with its rank, as one key.
inline std::uint64_t op_key(std::uint32_t rank, std::uint64_t op) { return std::uint64_t{rank} << 40 | op; }

// The threads of a rank granted MPI_THREAD_MULTIPLE that have called MPI
// (thread_gate.h), and whether each is inside the gate now: the controller
// does not wait for those to call MPI (settle), which spares it waiting for
// a thread that has just handed the turn back and is on its way to sleep.
// Written by the rank's threads, atomically; in the shared region, one per
// such rank.
struct GateThreads {
  static constexpr std::uint32_t kMax = 64;  // threads beyond are looked at as if outside
  std::uint32_t count = 0;
  std::int32_t tid[kMax] = {};
  std::uint8_t inside[kMax] = {};
};

// A program rank, or the companion of one (ranks P..2P-1 of the engine): the
// companion carries the rank's nonblocking collectives and serves the
// one-sided operations that target it, with a CPU and NIC of its own, so the
// program's own stream never waits behind them (docs/direct.md).
struct Rank {
  enum class State : std::uint8_t { NotStarted, Ready, Blocked, Finished };
  State state = State::NotStarted;
  std::uint32_t world = 0;  // its engine rank (a companion: P + the program rank)
  bool companion = false;
  // Issued operations, not yet pulled from out_read on.
  svector<Operation> out_ops;
  svector<Dependency> out_deps;
  std::size_t out_read = 0;
  std::uint64_t next_op = 0;  // rank-local index of the next operation
  svector<Dependency> after;  // what the next operation depends on
  double compute_ps = 0;      // computation not yet issued
  // Virtual time at the rank's last checkpoint, valid while `synced`: it
  // has issued nothing since and nothing of it was outstanding then, so its
  // present is that time plus its computation since (Runtime::checkpoint).
  Picoseconds synced_at = 0;
  bool synced = false;
  CpuMark cpu_mark;           // host CPU clock when the program last left an MPI call
  std::uint32_t waiting = 0;  // request completions it still waits for
  // Ranks at once: it waits for receives that a message sent to it may let
  // complete early (Runtime::take_early), from `data_from` (-1: any of
  // several sources): the sender wakes it, not the engine.
  bool data_wait = false;
  std::int32_t data_from = -1;
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
  void forget_unexpected(std::uint32_t sender, std::uint64_t send_op) {
    for (auto u = unexpected.begin(); u != unexpected.end(); ++u)
      if (u->first == sender && u->second == send_op) {
        unexpected.erase(u);
        return;
      }
  }
  // Point-to-point messages sent to it, in the order they were sent (sender,
  // send op; sender kGone once matched or taken): an early receive takes the
  // first its receive matches (Runtime::take_early). inbox[i] is message
  // inbox_base + i; those before inbox_head are all gone.
  svector<std::pair<std::uint32_t, std::uint64_t>> inbox;
  std::size_t inbox_head = 0;
  std::uint64_t inbox_base = 0;
  static constexpr std::uint32_t kGone = ~std::uint32_t{0};
  bool initialized = false, finalized = false;
  bool exiting = false;  // processes: its exit handler ran
  int exit_code = -1;
  const char* blocked_in = "";  // the MPI call it waits in
  // Processes: the host thread in an MPI call of this rank, and how deep
  // (calls nest: MPI_Init_thread calls MPI_Init); check_thread reads them.
  pthread_t call_thread{};
  std::uint32_t call_depth = 0;
  bool asked_multiple = false;  // MPI_Init_thread asked for MPI_THREAD_MULTIPLE
  bool multiple = false;        // and was granted it (processes: thread_gate.h)
  // Threads of a rank granted MULTIPLE that wait to enter MPI while the rank
  // waits without the turn (written by the rank, atomically; the controller
  // reads the rank as ready when it sees one).
  std::uint32_t entries = 0;
  GateThreads* gate = nullptr;  // granted MULTIPLE: its threads that called MPI
  std::uint32_t probing = 0;    // its threads waiting in MPI_Probe (gate_wait_arrival)
  std::uint64_t arrivals = 0;   // unmatched arrivals while some did
  // A rank granted MULTIPLE that waits in any of its threads' calls may go on
  // (the gate sorts out which thread).
  void wake_threads() {
    state = State::Ready;
    waiting = 0;
  }
  svector<sstring> args;
  svector<char*> argv;
  std::uint32_t rma_tags = 0;    // one-sided messages sent (their tags)
  void* bsend_buffer = nullptr;  // MPI_Buffer_attach
  int bsend_size = 0;
  // Processes: the turn (futex word: 1 = run) and the process.
  std::uint32_t go = 0;
  pid_t pid = 0;
};

// Ranks at once (DirectOptions::host_cores > 1): this process's rank (null
// in the controller and in a process a rank forked), and how deep this
// process is in calls that hold the runtime's lock. Process-local.
inline Rank* g_own_rank = nullptr;
inline std::uint32_t g_lock_depth = 0;

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
  // Processes: the CPUs the controller and its ranks run on (DirectOptions::handover).
  void place_on_cpus();
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
  Rank& current() { return *cur(); }
  // The rank this code runs for: with ranks at once, each rank process's
  // own; else the one that has the turn (null in the controller).
  Rank* cur() const { return concurrent_ ? g_own_rank : current_; }
  // Ranks run at once on several host cores (DirectOptions::host_cores > 1).
  bool concurrent() const { return concurrent_; }
  const DirectOptions& options() const { return options_; }
  bool threads() const { return options_.isolation == Isolation::Threads; }
  // Entering and leaving an MPI call: the computation in between is measured.
  void enter(const char* call, bool needs_init = true);
  void leave(const char* call);
  // Stops the run with an MPI error (MPI_ERRORS_ARE_FATAL), naming the call.
  [[noreturn]] void fail(const char* call, const std::string& message);
  [[noreturn]] void abort_run(int code);
  [[noreturn]] void exit_rank(int code);  // threads: exit() in a rank
  // Processes: the rank's exit handler (on_exit): its last computation, its status.
  void rank_exiting(int code);
  void rank_exiting_locked(int code);
  // Processes: a process a rank forked called MPI (in that process): tells
  // the controller, which stops the run naming the rank, and ends.
  [[noreturn]] void forked_call(const char* call);
  // MPI_THREAD_SERIALIZED, the level MPI_Init_thread provides: one thread of
  // a rank in MPI at a time, and only while its rank has the turn. An MPI
  // call from a second thread that breaks it stops the run naming the rank,
  // the call and the level (reported as a fork is, and the rank's process
  // ends). Clock reads and sleeps are not MPI: such a thread's read the
  // host's clocks (virtual_time.cpp).
  void check_thread(const char* call);
  // Whether this host thread is not the one that may use the rank's state
  // now: its rank is not the running one, or another of its threads is in MPI.
  bool second_thread() const;
  // MPI_THREAD_MULTIPLE (thread_gate.h): the rank of this process (processes only).
  Rank& own_rank();
  // The gate's driver hands the rank's turn back (as a blocked call does).
  void yield_turn(Rank& k) { suspend(k); }
  // A thread of `k` asks to enter MPI while the rank waits without the turn; and got in.
  void request_entry(Rank& k);
  void entry_served(Rank& k);
  // An MPI function (not a clock or sleep the runtime answers, nor exit()):
  // what check_thread and the call depth count.
  static bool mpi_function(const char* call) {
    return call[0] == 'M' && call[1] == 'P' && call[2] == 'I' && call[3] == '_';
  }
  [[noreturn]] void second_thread_call(const char* call);
  // Processes: a forked process's or a second thread's MPI call, told to the controller.
  [[noreturn]] void report_foreign_call(std::int32_t rank, bool second_thread, const char* call);
  // In the controller: whether a forked process or a second thread has
  // reported (the first time it is asked after the report); stops the run if so.
  bool fork_reported();
  void charge(double ps) { cur()->compute_ps += ps; }
  void charge_task(const processor::TaskRequest& task);
  bool stopping() const { return stopping_; }
  // Computation's cost and the epochs of the clocks programs read.
  const VirtualClock& clock() const { return clock_; }

  // Operations (issue_on: on another rank's stream, from the controller).
  std::uint64_t issue(const Operation& op, std::span<const Dependency> deps, std::uint32_t node) {
    return issue_on(*cur(), op, deps, node);
  }
  std::uint64_t issue_on(Rank& k, const Operation& op, std::span<const Dependency> deps, std::uint32_t node);
  void issue_compute();  // the pending computation as a calc operation
  // A request of the running rank; freeing one drops its completion action too.
  std::uint32_t new_request(Request::Kind kind, const char* call = "") {
    return requests_.add(kind, cur()->world, call);
  }
  RequestTable& requests() { return requests_; }
  void free_request(std::uint32_t id);
  // `op`'s completion counts for `request` (`on`: the engine rank whose op it is; default the request's).
  void expect(std::uint32_t request, std::uint64_t op, std::uint32_t on = kNoRequest);
  // Blocks the running rank until `need` of the requests in `ids` are done
  // (all of them if need >= ids.size()).
  void wait_for(std::span<const std::uint32_t> ids, const char* call, std::size_t need = ~std::size_t{0});
  // Early completion (DirectOptions::early_receive): a receive among `ids`
  // whose message is here already and that no other pending receive of the
  // rank could match takes it now, and a standard send (its data packed) is
  // done for the program, before the engine has simulated either: the rank goes on
  // without handing the turn over, its next operations depending on theirs
  // as before, so virtual time is the same. Not for MPI_Waitany/Waitsome
  // (which completes first is the engine's to say), synchronous sends, a
  // rank granted MPI_THREAD_MULTIPLE, receive overhead paid at the wait, or
  // LogGOPSim's semantics.
  void take_early(std::span<const std::uint32_t> ids);
  // Whether a receive among `ids` may complete early once its message is sent
  // (what take_early looks at), and from which source (-1: several).
  bool awaits_data(std::span<const std::uint32_t> ids, std::int32_t& from);
  // Ranks at once: a message to `to` was sent; wakes it if it waits for one.
  void data_sent(Rank& to, std::uint32_t dest, std::uint32_t sender);
  static constexpr std::uint64_t kEarlySendBytes = std::uint64_t{64} << 20;
  // How far into the inbox a receive looks for its message: beyond, it waits
  // for the engine (a rank receiving in the reverse of the sending order
  // would otherwise scan its inbox once a receive).
  static constexpr std::size_t kInboxScan = 256;
  // Issues a zero-time operation after everything the rank did and waits
  // for it: the rank's virtual time, with the engine there.
  // A clock read (`clock`) where nothing else can take the rank's CPU
  // (checkpoint_alone), right after another checkpoint, answers without the
  // engine: the same time, and a program that reads the clock in a loop runs
  // without a switch a read. Probes and tests always go to the engine: a
  // loop of them waits for other ranks, which only the engine moves on.
  Picoseconds checkpoint(const char* call, std::uint32_t node, bool clock = false);
  bool checkpoint_alone() const;
  // Copies a completed receive's bytes into its buffer (in the receiving rank).
  void deliver(Request& q);

  // Point to point (ranks are world ranks; the communicator is a handle).
  // `data` is the packed message; `mode` 1 makes it synchronous (completes
  // when the receiver matched it).
  std::uint32_t post_send(svector<std::byte>&& data, std::uint32_t dest, int tag, MPI_Comm comm, bool blocking,
                          int mode, std::uint32_t node, const char* call);
  // `program_completes`: the program completes it with a wait or test, which
  // then pays its overhead under DirectOptions::receive_overhead_at_wait.
  std::uint32_t post_recv(RecvTarget&& target, std::int32_t source, int tag, MPI_Comm comm, std::uint32_t node,
                          const char* call, bool program_completes = true);
  // The first unexpected message of the running rank that a probe would
  // match, or null.
  const Message* probe_match(std::int32_t source, int tag, MPI_Comm comm);
  std::pair<std::uint32_t, std::uint64_t> probe_match_key(std::int32_t source, int tag, MPI_Comm comm);
  void block_in_probe(std::int32_t source, int tag, MPI_Comm comm, const char* call);

  // Communicators and groups.
  Communicators& comms() { return comms_; }

  // Datatypes, operators, keyvals and attributes, info objects.
  ObjectTables& objects() { return objects_; }

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
  // The data records of the collective calls under way, nonblocking collectives' deferred schedules.
  CollectiveRecords& collectives() { return collectives_; }
  std::uint32_t node_of(const char* label);
  std::uint32_t collective_tag(MPI_Comm comm, std::uint64_t seq) const;

  // Nonblocking operations that finish in the rank when their request
  // completes (a nonblocking collective's copy-out): private to the rank's
  // process, run by complete_request().
  void on_complete(std::uint32_t request, std::function<void()> action);
  // Runs what the program sees when a request completes: data delivery and actions.
  void complete_request(std::uint32_t id);
  void pay_receive_overhead(Request& q);

  // Computation: the running rank's starts now.
  void start_cpu_mark() {
    forget_cpu_estimate();  // a new process, or a thread that has not run yet
    clock_.mark(cur()->cpu_mark);
  }

  // One-sided communication.
  OneSided& one_sided() { return one_sided_; }
  pid_t pid_of(std::uint32_t world) const { return ranks_[world].pid; }

 private:
  friend struct ProcessControl;
  void start_rank_thread(std::uint32_t r);
  void resume(Rank& k);
  void suspend(Rank& k);  // in the rank; unwinds (threads) or exits (processes) when the run stops
  void unwind_all();
  void stop(const std::string& error);
  void describe_blocked(DirectResult& out) const;
  void reap(Rank& k, int status);
  // A rank granted MULTIPLE handed the turn back blocked: waits until another
  // of its threads asks to enter MPI (the rank is ready again: true) or none
  // of them runs (false), so the engine does not move on past a thread about
  // to call MPI. `bounded`: while the engine has other work, a thread that
  // runs on without asking is waited for kSettleNs at most.
  bool settle(Rank& k, bool bounded);
  static constexpr std::uint64_t kSettleNs = 2'000'000;
  // Ranks whose threads asked to enter while they waited: ready, to be read.
  void wake_entries();
  void process_resume(Rank& k);
  void process_suspend(Rank& k);
  // Ranks at once (processes.cpp): the lock, taken by a rank (blocking) or by
  // the controller (draining the ranks' output while it waits); whether it
  // was released by a rank process that died holding it is the run's to
  // report, not the lock's.
  void lock_state();
  void unlock_state();
  void controller_lock();
  struct StateGuard {
    Runtime& rt;
    explicit StateGuard(Runtime& r) : rt(r) {
      if (rt.concurrent_) rt.controller_lock();
    }
    ~StateGuard() {
      if (rt.concurrent_) rt.unlock_state();
    }
    StateGuard(const StateGuard&) = delete;
    StateGuard& operator=(const StateGuard&) = delete;
  };
  // A rank leaving a call or blocking wakes the controller if it sleeps for
  // it; null (the run stops): wakes it in any case.
  void tell_controller(const Rank* k);
  // The controller: lets `k` run if it waits for nothing, and sleeps (the
  // lock released) until it issues, blocks, ends or the run stops.
  void await_rank(Rank& k);
  void release_rank(Rank& k);
  // The controller: reaps the rank processes that ended (only if a SIGCHLD
  // came since it last looked, unless `always`), their output passed on.
  void reap_ended(bool always);
  // The engine lets a blocked rank go on: with ranks at once it runs from now
  // (not when the engine next reads it: it may be reading another for long).
  void make_ready(Rank& k) {
    k.state = Rank::State::Ready;
    if (concurrent_ && !k.companion && std::atomic_ref<std::uint32_t>(k.go).load() == 0) release_rank(k);
  }
  // The controller, once the run stopped: every rank ends (waking those that
  // sleep; a rank that computes on is waited for a while, then killed).
  void end_concurrent_ranks();
  // In a rank: suspend() with ranks at once (the lock released while it sleeps).
  void concurrent_suspend(Rank& k);
  // In a rank process: wakes the controller if it sleeps in poll (Dekker's handshake, process_resume).
  void wake_controller();
  [[noreturn]] void rank_process_main(std::uint32_t r);
  void append_ops(Rank& k, const taskgraph::OpBuffer& ops, std::size_t from);
  // A matched message's bytes and status into its receive request (matched(), take_early).
  void take_message(Request& q, Message& msg, std::uint32_t sender);
  // MPI_ERR_TRUNCATE's words for `msg` into a buffer of `capacity` bytes.
  static std::string too_long(const Message& msg, std::uint64_t capacity);
  // Early receives: the message of `inbox_at` leaves its receiver's inbox.
  void leave_inbox(Rank& receiver, std::uint64_t inbox_at);
  bool early_enabled() const {
    return options_.early_receive && options_.sim.semantics == sim::Semantics::Matched &&
           !options_.receive_overhead_at_wait;
  }
  void run_deferred(std::uint32_t index);
  // A request's last operation completed: done, and its waiting rank ready
  // if it waited for nothing else (true: `rank`, the engine's, is read again).
  bool finish_request(Request& q, std::uint32_t rank);
  // Ranks at once: a receive whose completion waited for its match (completed()).
  void finish_matched(std::uint32_t rank, std::uint32_t id);
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
  svector<Rank> ranks_;
  std::unique_ptr<RankThreads> threads_;  // Isolation::Threads
  Rank* current_ = nullptr;
  // Ranks at once (docs/direct.md, "Ranks on several host cores"): the
  // runtime's state below is the lock's; a rank holds it through each MPI
  // call (not while it computes or sleeps), the controller through each call
  // the engine makes. `awaited_`: the rank the controller sleeps for (it
  // has read all its operations and it runs), which wakes it when it issues
  // more, blocks or stops the run.
  bool concurrent_ = false;
  bool cores_shared_ = false;          // the machine puts two ranks' CPUs on one core
  std::int32_t exit_error_rank_ = -1;  // ranks at once: the rank whose non-zero exit status error_ names
  pthread_mutex_t state_lock_{};
  std::int32_t awaited_ = -1;
  svector<std::pair<sstring, sstring>> nodes_;  // label, location
  smap<sstring, std::uint32_t> node_ids_;
  sunordered_map<const char*, std::uint32_t> node_by_literal_;  // labels are string literals
  std::uint32_t compute_node_ = 0;
  RequestTable requests_;
  MessageTable messages_;
  Communicators comms_;
  ObjectTables objects_;
  OneSided one_sided_;
  CollectiveRecords collectives_;
  VirtualClock clock_;
  sstring error_;
  int abort_code_ = 0;
  bool stopping_ = false;                     // the run is being stopped: ranks unwind
  bool companions_done_ = false;              // the queue ran dry: companions end
  svector<std::uint32_t> woken_, woken_out_;  // ranks to read that no event touched
  std::uint64_t switches_ = 0, mpi_calls_ = 0, early_ = 0;
  // Requests to enter (Rank::entries) made so far, and as many as the controller has looked at.
  std::uint32_t entry_signals_ = 0, entry_signals_seen_ = 0;
  // Processes: the rank that handed the turn back last, and whether the
  // controller sleeps in poll (a rank then wakes it through the eventfd).
  std::int32_t yielded_ = -1;
  std::int32_t controller_sleeps_ = 0;
  // Processes: how long a waiting side spins before it sleeps (handover_spin_ns).
  std::uint64_t spin_ns_ = 0;
  pid_t controller_ = 0;
  // A forked process's MPI call, or a second thread's (written by that
  // process alone, atomically): the rank (-1: none), what called, and the call.
  std::int32_t forked_claim_ = 0;
  std::int32_t forked_rank_ = -1;
  std::int32_t forked_thread_ = 0;  // 1: a second thread of the rank, not a forked process
  pthread_t engine_thread_{};       // threads: the one host thread every rank runs on
  bool engine_thread_set_ = false;
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
