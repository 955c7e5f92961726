// The direct-execution runtime: ranks feeding the simulator's engine (pull),
// the engine's reports back (observer), and the calls' common steps.
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <unordered_map>

#include "poems/base/progress.h"
#include "poems/components/network.h"
#include "poems/components/noise.h"
#include "poems/sim/report.h"
#include "poems/trace/timeline.h"
#include "poems/trace/trace.h"
#include "runtime_impl.h"
#include "thread_gate.h"
#include "threads.h"
#include "virtual_time.h"

namespace poems::direct {
namespace detail {

namespace {

Runtime* g_active = nullptr;

// A running rank stops issuing and lets the engine read once it has this
// many operations waiting in its outbox (a program that only sends would
// otherwise run to its end before the engine sees anything).
constexpr std::size_t kPauseOps = 256;
// Ranks at once: how far a rank may run ahead of the engine, in operations
// it has not read (a rank that pauses leaves its core idle if the others wait too).
constexpr std::size_t kPauseOpsAtOnce = std::size_t{1} << 16;

// What a rank's process runs when one of its requests completes (private to
// the process: the functions and their captures live in its own memory).
std::unordered_map<std::uint32_t, std::function<void()>>& completion_actions() {
  static auto* actions = new std::unordered_map<std::uint32_t, std::function<void()>>();
  return *actions;
}

}  // namespace

Runtime* Runtime::active() { return g_active; }

Runtime::Runtime(const Program& program, const std::vector<std::string>& args, const DirectOptions& options)
    : program_(program), args_(args), options_(options) {
  if (options.ranks == 0 || options.ranks > (1u << 24))
    throw std::invalid_argument("ranks must be in 1..16777216 (got " + std::to_string(options.ranks) + ")");
  if (!(options.compute_scale >= 0) || !std::isfinite(options.compute_scale))
    throw std::invalid_argument("the compute scale must be a finite number >= 0");
  if (options.stack_bytes < (16u << 10) || options.stack_bytes > (std::size_t{1} << 30))
    throw std::invalid_argument("the stack size must be in 16 KiB..1 GiB");
  if (options.ranks_per_node == 0) throw std::invalid_argument("ranks per node must be at least 1");
  if (options.isolation == Isolation::Threads && !program)
    throw std::invalid_argument("ranks as threads need the program as a function");
  clock_.init(options);
  nodes_.emplace_back();  // node 0: none
  compute_node_ = node_of("computation");
  const std::uint32_t p = options.ranks;
  comms_.init(p);
  objects_.init();
  programs_ = p;
  ranks_.resize(2 * std::size_t{p});  // the programs, then their companions
  for (std::uint32_t r = 0; r < 2 * p; ++r) {
    ranks_[r].world = r;
    ranks_[r].companion = r >= p;
    if (r >= p) ranks_[r].state = Rank::State::Blocked;
  }
  if (threads()) threads_ = std::make_unique<RankThreads>(p, options.stack_bytes);
  concurrent_ = !threads() && options.host_cores > 1;
  // Whether some rank shares a core with another (the engine's time sharing:
  // docs/network.md), which the clock-read shortcut must leave to the engine.
  if (const auto& net = options.sim.network; net && net->spec().cores_per_node != 0) {
    try {
      const components::RankPlacement placed = net->place(p);
      const std::uint32_t cpus = std::max<std::uint32_t>(1, options.sim.cpus);
      for (std::uint32_t on : placed.ranks_on)
        if (std::uint64_t{on} * cpus > net->cores(on, cpus)) cores_shared_ = true;
    } catch (const std::exception&) {
      cores_shared_ = true;  // (the engine reports the placement's error)
    }
  }
  if (concurrent_) {  // shared by the rank processes; a rank that dies holding it is reported (reap)
    pthread_mutexattr_t a;
    ::pthread_mutexattr_init(&a);
    ::pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
    ::pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
    ::pthread_mutex_init(&state_lock_, &a);
    ::pthread_mutexattr_destroy(&a);
  }
  // stop() needs no allocation for a usual message: it may report a full shared region.
  error_.reserve(1024);
  watch_forks();
  g_active = this;
}

Runtime::~Runtime() {
  if (concurrent_) ::pthread_mutex_destroy(&state_lock_);
  if (g_active == this) g_active = nullptr;
}

std::uint32_t Runtime::node_of(const char* label) {
  auto fast = node_by_literal_.find(label);
  if (fast != node_by_literal_.end()) return fast->second;
  const sstring key(label);
  auto it = node_ids_.find(key);
  std::uint32_t id;
  if (it != node_ids_.end()) {
    id = it->second;
  } else {
    nodes_.emplace_back(key, sstring());
    id = static_cast<std::uint32_t>(nodes_.size() - 1);
    node_ids_.emplace(key, id);
  }
  node_by_literal_.emplace(label, id);
  return id;
}

taskgraph::NodeInfo Runtime::node_info(std::uint32_t node) const {
  if (node >= nodes_.size()) return {};
  return {std::string(nodes_[node].first), std::string(nodes_[node].second)};
}

bool Runtime::running() const {
  if (!cur() || forked_from_rank() >= 0) return false;  // (a forked process is no rank)
  return threads() || self_rank_process() >= 0;
}

Rank& Runtime::own_rank() { return ranks_[static_cast<std::uint32_t>(self_rank_process())]; }

bool Runtime::second_thread() const {
  if (threads()) return engine_thread_set_ && !pthread_equal(::pthread_self(), engine_thread_);
  if (multiple_threads()) return false;  // every thread enters through the gate
  const std::int32_t self = self_rank_process();
  if (self < 0) return false;  // the controller (running() refuses it)
  const Rank* k = cur();
  return !k || k->world != static_cast<std::uint32_t>(self) ||
         (k->call_depth != 0 && !pthread_equal(k->call_thread, ::pthread_self()));
}

void Runtime::check_thread(const char* call) {
  if (second_thread()) second_thread_call(call);
}

// ---- switching between the engine and the ranks ---------------------------------------

void Runtime::start_rank_thread(std::uint32_t r) {
  Rank& k = ranks_[r];
  for (const std::string& a : args_) k.args.emplace_back(a.c_str());
  for (sstring& a : k.args) k.argv.push_back(a.data());
  k.argv.push_back(nullptr);
  threads_->threads[r].start(threads_->stacks, r, [this, r] {
    Rank& me = ranks_[r];
    start_cpu_mark();
    try {
      me.exit_code = program_(static_cast<int>(me.argv.size() - 1), me.argv.data());
      if (!me.finalized) {
        // A program that returns without MPI_Finalize: its last computation still counts.
        clock_.measure_end(me.cpu_mark, me.compute_ps);
        issue_compute();
        if (me.initialized) stop("rank " + std::to_string(r) + " returned from main without MPI_Finalize");
      }
      if (me.exit_code != 0 && !stopping_)
        stop("rank " + std::to_string(r) + " exited with status " + std::to_string(me.exit_code));
    } catch (const RankUnwind&) {
    } catch (const std::exception& e) {
      stop("rank " + std::to_string(r) + ": uncaught exception: " + e.what());
    } catch (...) {
      stop("rank " + std::to_string(r) + ": uncaught exception");
    }
    me.state = Rank::State::Finished;
  });
  k.state = Rank::State::Ready;
}

void Runtime::resume(Rank& k) {
  ++switches_;
  if (!threads()) {
    if (k.state == Rank::State::NotStarted) k.state = Rank::State::Ready;
    current_ = &k;
    process_resume(k);
    current_ = nullptr;
    return;
  }
  if (k.state == Rank::State::NotStarted) start_rank_thread(k.world);
  RankThread& t = threads_->threads[k.world];
  current_ = &k;
  t.resume();
  current_ = nullptr;
  if (k.state == Rank::State::Finished && !t.finished()) return;  // it called exit(): never resumed
  // With guard pages an overflow faults; without them the canary tells.
  if (!threads_->stacks.guarded() && !threads_->stacks.canary_intact(k.world)) {
    stop("rank " + std::to_string(k.world) + " overflowed its stack of " +
         std::to_string(threads_->stacks.stack_bytes() >> 10) + " KiB (give a larger stack size)");
    k.state = Rank::State::Finished;  // its stack cannot be trusted: never resume it
    return;
  }
  if (t.finished()) {
    k.state = Rank::State::Finished;
    threads_->stacks.release(k.world);
  }
}

void Runtime::suspend(Rank& k) {
  k.synced = false;  // the engine may move the rank's present on (MPI_Probe waits without an operation)
  if (threads())
    threads_->threads[k.world].suspend();
  else if (concurrent_)
    concurrent_suspend(k);
  else
    process_suspend(k);
  if (!stopping_) return;
  if (threads()) throw RankUnwind{};
  // The run stopped: the rank ends here, keeping what it printed.
  std::fflush(nullptr);
  std::_Exit(0);
}

void Runtime::stop(const std::string& error) {
  if (error_.empty()) error_ = error.c_str();
  stopping_ = true;
  if (concurrent_) tell_controller(nullptr);
}

void Runtime::unwind_all() {
  if (concurrent_) {
    end_concurrent_ranks();
    return;
  }
  stopping_ = true;
  for (Rank& k : ranks_) {
    if (k.state == Rank::State::Finished || k.companion) continue;
    if (threads()) {
      RankThread& t = threads_->threads[k.world];
      if (!t.started() || t.finished()) continue;
      resume(k);  // the rank's program unwinds from its MPI call
      if (!t.finished()) std::fprintf(stderr, "poems: warning: rank %u did not end when the run stopped\n", k.world);
    } else if (k.pid > 0) {
      resume(k);  // the rank's process ends in its MPI call (or before it started)
    }
  }
}

// ---- ScheduleSource --------------------------------------------------------------------

std::size_t Runtime::pull(std::uint32_t rank, std::size_t max_ops, taskgraph::OpBuffer& out) {
  StateGuard guard(*this);
  Rank& k = ranks_[rank];
  if (k.companion && k.out_read == k.out_ops.size()) {
    k.out_ops.clear();
    k.out_deps.clear();
    k.out_read = 0;
    return companions_done_ ? 0 : kBlocked;
  }
  if (k.out_read == k.out_ops.size()) {
    k.out_ops.clear();
    k.out_deps.clear();
    k.out_read = 0;
    // Ranks at once: the rank runs already (or is let run); the engine waits
    // until it has issued what comes next.
    while (concurrent_ && k.out_ops.empty() && (k.state == Rank::State::NotStarted || k.state == Rank::State::Ready)) {
      await_rank(k);
      if (stopping_) throw RunStopped{};
    }
    while (k.out_ops.empty() && (k.state == Rank::State::NotStarted || k.state == Rank::State::Ready)) {
      resume(k);
      if (stopping_) throw RunStopped{};
      if (k.multiple && k.state == Rank::State::Blocked) [[unlikely]]
        if (settle(k, true) && !k.out_ops.empty()) woken_.push_back(rank);
    }
    if (k.out_ops.empty()) return k.state == Rank::State::Finished ? 0 : kBlocked;
  }
  const std::size_t n = std::min(max_ops, k.out_ops.size() - k.out_read);
  for (std::size_t i = 0; i < n; ++i) {
    Operation op = k.out_ops[k.out_read + i];
    const Dependency* deps = k.out_deps.data() + op.first_dep;
    op.first_dep = static_cast<std::uint32_t>(out.deps.size());
    out.deps.insert(out.deps.end(), deps, deps + op.dep_count);
    out.ops.push_back(op);
  }
  k.out_read += n;
  return n;
}

// ---- ExecutionObserver -------------------------------------------------------------------

bool Runtime::completed(std::uint32_t rank, std::uint64_t op, Picoseconds time) {
  StateGuard guard(*this);
  Rank& k = ranks_[rank];
  if (k.tracked.empty()) return false;
  const std::uint32_t id = k.untrack(op, true);
  if (id == kNoRequest) return false;
  if (id == kEarlySend) {  // the program went on from it already (take_early)
    k.untrack(op);
    return false;
  }
  Request& q = requests_[id];
  if (q.kind == Request::Kind::Deferred) {  // the program reached a nonblocking collective
    k.untrack(op);
    const std::uint32_t index = q.deferred;
    free_request(id);
    run_deferred(index);
    return false;
  }
  // A receive stays tracked for matched(), which the engine calls in the same
  // event; it may owe the sender an acknowledgement (MPI_Ssend), which
  // matched() issues: the rank is read after this event in any case.
  const bool read_again = q.kind == Request::Kind::Recv && messages_.synchronous();
  if (q.kind != Request::Kind::Recv) k.untrack(op);
  if (time > q.done_time) q.done_time = time;
  if (--q.remaining > 0) return read_again;
  // Ranks at once: a receive the engine has not matched yet is done with its
  // match, which comes next in this event; until then a running rank must
  // not see it done (it would go on without its data, free the request, and
  // the match would find another request under its number).
  if (concurrent_ && q.kind == Request::Kind::Recv && q.delivered) {
    q.match_pending = true;
    return read_again;
  }
  return finish_request(q, rank) || read_again;
}

bool Runtime::finish_request(Request& q, std::uint32_t rank) {
  q.done = true;
  if (!q.waited) return false;
  q.waited = false;
  Rank& waiter = ranks_[q.rank];
  if (waiter.waiting == 0 || --waiter.waiting > 0) return false;
  make_ready(waiter);
  if (q.rank == rank) return true;
  woken_.push_back(q.rank);  // a companion's operation lets the program go on
  return false;
}

void Runtime::finish_matched(std::uint32_t rank, std::uint32_t id) {
  Request& q = requests_[id];
  if (!q.match_pending) return;
  q.match_pending = false;
  if (finish_request(q, rank)) woken_.push_back(rank);
}

void Runtime::run_deferred(std::uint32_t index) {
  DeferredSchedule& d = collectives_.deferred(index);
  Rank& c = ranks_[d.companion];
  const std::uint64_t first = c.next_op;
  for (Operation o : d.ops) {
    const Dependency* deps = d.deps.data() + o.first_dep;
    o.first_dep = static_cast<std::uint32_t>(c.out_deps.size());
    for (std::uint32_t i = 0; i < o.dep_count; ++i)
      c.out_deps.push_back(Dependency{first + deps[i].op, deps[i].on_start});
    c.out_ops.push_back(o);
    ++c.next_op;
    c.synced = false;
  }
  for (std::uint64_t e : d.exits) expect(d.request, first + e, d.companion);
  if (d.exits.empty()) {  // nothing to do on this rank: complete at once
    Request& q = requests_[d.request];
    q.done = true;
    if (q.waited) {
      q.waited = false;
      Rank& waiter = ranks_[q.rank];
      if (waiter.waiting > 0 && --waiter.waiting == 0) {
        make_ready(waiter);
        woken_.push_back(q.rank);
      }
    }
  }
  woken_.push_back(d.companion);
  collectives_.release_deferred(index);
}

std::span<const std::uint32_t> Runtime::take_woken() {
  StateGuard guard(*this);
  if (std::atomic_ref<std::uint32_t>(entry_signals_).load() != entry_signals_seen_) [[unlikely]]
    wake_entries();
  woken_out_.swap(woken_);
  woken_.clear();
  return {woken_out_.data(), woken_out_.size()};
}

std::span<const std::uint32_t> Runtime::drained(Picoseconds) {
  StateGuard guard(*this);
  woken_out_.clear();
  // A rank granted MULTIPLE may still have a thread on its way to MPI.
  for (std::uint32_t r = 0; r < programs_; ++r)
    if (ranks_[r].multiple && ranks_[r].state == Rank::State::Blocked && settle(ranks_[r], false))
      woken_out_.push_back(r);
  if (!woken_out_.empty()) return {woken_out_.data(), woken_out_.size()};
  if (companions_done_) return {};
  companions_done_ = true;  // nothing more can come: the companions end
  for (std::uint32_t r = programs_; r < ranks(); ++r) woken_out_.push_back(r);
  return {woken_out_.data(), woken_out_.size()};
}

void Runtime::matched(std::uint32_t rank, std::uint64_t recv_op, std::uint32_t sender, std::uint64_t send_op,
                      Picoseconds) {
  StateGuard guard(*this);
  auto m = messages_.find(op_key(sender, send_op));
  Rank& k = ranks_[rank];
  if (m == messages_.end()) {  // a collective's message: its data is the collective's
    if (const std::uint32_t id = k.untrack(recv_op, true);
        id != kNoRequest && id != kEarlySend && requests_[id].match_pending) {
      k.untrack(recv_op);
      finish_matched(rank, id);
    }
    return;
  }
  if (m->second.taken_by != kNoOp) {  // an early receive took it (take_early)
    if (m->second.taken_by != op_key(rank, recv_op)) {
      stop("internal error: rank " + std::to_string(rank) + " took rank " + std::to_string(sender) +
           "'s message early for another receive than the engine matched it with (operation " +
           std::to_string(recv_op) + ")");
      throw RunStopped{};
    }
    messages_.erase(m);
    return;
  }
  if (early_enabled()) leave_inbox(k, m->second.inbox_at);
  k.forget_unexpected(sender, send_op);
  const std::uint32_t id = k.untrack(recv_op);
  if (id == kNoRequest) {
    stop("internal error: rank " + std::to_string(rank) + " received a message without a receive request");
    throw RunStopped{};
  }
  Request& q = requests_[id];
  Message& msg = m->second;
  if (msg.bytes > q.target.capacity) {
    stop("rank " + std::to_string(rank) + ": " + q.call + ": " + too_long(msg, q.target.capacity));
    throw RunStopped{};
  }
  take_message(q, msg, sender);
  if (msg.ack_tag != kNoRequest) {
    // MPI_Ssend: the receiving side tells the sender its message matched.
    Operation ack;
    ack.kind = OpKind::Send;
    ack.peer = static_cast<std::int32_t>(sender);
    ack.tag = static_cast<std::int32_t>(msg.ack_tag);
    ack.comm = kAckComm;
    const Dependency received{recv_op, false};
    issue_on(k, ack, {&received, 1}, node_of("MPI_Ssend acknowledgement"));
  }
  messages_.erase(m);
  finish_matched(rank, id);
}

bool Runtime::arrived_unexpected(std::uint32_t rank, std::uint32_t sender, std::uint64_t send_op, Picoseconds) {
  StateGuard guard(*this);
  if (rank >= programs_) {  // a one-sided message reached the target's companion
    if (!one_sided_.in_flight(op_key(sender, send_op))) return false;  // a collective's
    if (!one_sided_.serve(*this, ranks_[rank], sender, send_op)) {
      stop("internal error: the companion of rank " + std::to_string(rank - programs_) +
           " received a message that is no one-sided operation");
      throw RunStopped{};
    }
    return true;
  }
  auto m = messages_.find(op_key(sender, send_op));
  if (m == messages_.end() || m->second.taken_by != kNoOp) return false;  // (taken: its receive was early)
  Rank& k = ranks_[rank];
  k.unexpected.emplace_back(sender, send_op);
  if (k.probing > 0) [[unlikely]] {  // threads of a rank granted MULTIPLE wait in probes
    ++k.arrivals;
    if (k.state != Rank::State::Blocked) return false;
    k.wake_threads();
    return true;
  }
  if (!k.probe.active || k.state != Rank::State::Blocked) return false;
  const Message& msg = m->second;
  if (msg.comm != static_cast<std::uint32_t>(k.probe.comm) ||
      (k.probe.source >= 0 && static_cast<std::uint32_t>(k.probe.source) != sender) ||
      (k.probe.tag != MPI_ANY_TAG && k.probe.tag != msg.tag))
    return false;
  k.probe.active = false;
  make_ready(k);
  return true;
}

// ---- the run -----------------------------------------------------------------------------

DirectResult Runtime::run() {
  const auto start = std::chrono::steady_clock::now();
  DirectResult out;
  if (threads()) {  // every rank runs on this host thread (check_thread)
    engine_thread_ = ::pthread_self();
    engine_thread_set_ = true;
  }
  sim::SimulationOptions so = options_.sim;
  so.observer = this;
  so.companions_from = programs_;
  // The engine's progress on this process's terminal (the run's own thread
  // draws it; a rank's output may land after the line until it is redrawn).
  std::optional<base::ProgressLine> progress;
  if (options_.progress && base::stderr_is_terminal()) {
    progress.emplace(std::cerr, base::progress_delay_seconds());
    progress->enable();
    so.progress = {base::draw_progress<sim::SimulationProgress>, &*progress};
  }
  // --timeline: the engine records its spans; for OTF2 the writer also sits
  // between the engine and this runtime (source and observer), recording
  // every operation and match before handing the call on.
  std::optional<trace::Otf2Timeline> otf2;
  taskgraph::ScheduleSource* source = this;
  if (!options_.timeline.empty()) {
    so.record_timeline = true;
    if (trace::is_otf2_name(options_.timeline)) {
      otf2.emplace(*this, trace::Otf2Timeline::Labels::FromSource, this);
      otf2->set_companions(programs_);
      otf2->set_creator("poems direct");
      so.observer = &otf2->observer();
      source = &otf2->source();
    }
  }
  if (concurrent_) {  // every rank runs from the start
    StateGuard guard(*this);
    for (std::uint32_t r = 0; r < programs_; ++r) release_rank(ranks_[r]);
  }
  try {
    out.sim = sim::simulate(*source, so, options_.max_stuck_listed);
  } catch (const RunStopped&) {
    out.sim.completed = false;
  } catch (const SharedRegionFull& e) {  // in the controller (the engine's side of the runtime)
    out.sim.completed = false;
    stop(e.what());
  } catch (const sim::SimulationError& e) {
    out.sim.completed = false;
    stop(std::string("internal error: the engine refused an operation: ") + e.what());
  } catch (...) {
    unwind_all();
    throw;
  }
  if (concurrent_) controller_lock();  // ranks may still run (the run stopped): they wait
  if (otf2) {
    try {
      otf2->write(options_.timeline, out.sim, so.cpus);
    } catch (const std::exception& e) {
      out.timeline_error = e.what();
    }
  }
  if (!threads() && fork_reported()) out.sim.completed = false;  // reported while the engine ran
  strip_companions(out);
  if (!options_.timeline.empty() && !otf2) write_chrome_timeline(out);
  out.sim.timeline = {};
  if (error_.empty() && !out.sim.completed) {
    describe_blocked(out);
    error_ = ("deadlock: " + std::to_string(out.sim.stuck_total) + " rank(s) cannot go on").c_str();
    if (!out.sim.stuck.empty() && !out.sim.stuck.front().waits.empty())
      error_ +=
          (" (rank " + std::to_string(out.sim.stuck.front().rank) + ": " + out.sim.stuck.front().waits.front() + ")")
              .c_str();
    for (std::uint32_t r = 0; r < programs_; ++r)
      if (ranks_[r].asked_multiple && !ranks_[r].multiple && ranks_[r].state == Rank::State::Blocked) {
        error_ += ("; rank " + std::to_string(r) +
                   " asked for MPI_THREAD_MULTIPLE and was given MPI_THREAD_SERIALIZED (a thread of it that waits "
                   "for another's MPI call waits for ever)")
                      .c_str();
        break;
      }
  }
  if (!error_.empty() && out.sim.stuck_total == 0) out.sim.completed = false;
  if (concurrent_) unlock_state();
  unwind_all();
  out.error = std::string(error_);
  out.abort_code = abort_code_;
  for (std::uint32_t r = 0; r < programs_; ++r) out.exit_codes.push_back(ranks_[r].exit_code);
  out.switches = switches_;
  out.mpi_calls = mpi_calls_;
  out.early_completions = early_;
  out.measured_cpu_seconds = static_cast<double>(clock_.measured_ns()) * 1e-9;
  out.host_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  out.peak_rss_bytes = static_cast<std::size_t>(usage.ru_maxrss) * 1024;
  if (!threads()) {
    rusage children{};
    getrusage(RUSAGE_CHILDREN, &children);
    out.peak_rss_bytes = std::max(out.peak_rss_bytes, static_cast<std::size_t>(children.ru_maxrss) * 1024);
  }
  out.peak_rss_all_bytes = out.peak_rss_bytes;  // processes: finish_processes adds up every rank's
  return out;
}

// A companion's spans are its rank's, on one more CPU (after the rank's own),
// as the Chrome trace shows several CPUs of a rank: in the rank's track.
void Runtime::write_chrome_timeline(DirectResult& out) const {
  const auto programs = static_cast<std::int32_t>(programs_);
  for (sim::Span& span : out.sim.timeline) {
    if (span.rank >= programs_) {
      span.rank -= programs_;
      span.cpu = static_cast<std::uint8_t>(std::min<std::uint32_t>(options_.sim.cpus, 255));
    }
    if (span.peer >= programs) span.peer -= programs;
  }
  std::ofstream file(options_.timeline);
  sim::write_chrome_trace(file, out.sim);
  file.close();
  if (!file) out.timeline_error = "cannot write the timeline '" + options_.timeline + "'";
}

// The engine's result names the companions too: the program ranks' figures
// are the run's; a stuck companion is reported as its rank's.
void Runtime::strip_companions(DirectResult& out) const {
  sim::SimulationResult& s = out.sim;
  s.ranks = programs_;
  if (s.per_rank.size() > programs_) s.per_rank.resize(programs_);
  s.total_compute = s.total_overhead = s.total_wait = 0;
  s.max_finish = 0;
  s.max_finish_rank = 0;
  for (std::uint32_t r = 0; r < s.per_rank.size(); ++r) {
    const sim::RankResult& rr = s.per_rank[r];
    s.total_compute += rr.compute;
    s.total_overhead += rr.overhead;
    s.total_wait += rr.wait;
    if (rr.finish > s.max_finish) {
      s.max_finish = rr.finish;
      s.max_finish_rank = r;
    }
  }
  std::vector<sim::StuckRank> merged;
  for (sim::StuckRank& st : s.stuck) {
    if (st.rank >= programs_) {
      st.rank -= programs_;
      for (std::string& w : st.waits) w = "(its companion: nonblocking collectives, one-sided) " + w;
    }
    auto same = std::find_if(merged.begin(), merged.end(), [&](const sim::StuckRank& m) { return m.rank == st.rank; });
    if (same == merged.end()) {
      merged.push_back(std::move(st));
    } else {
      same->waits.insert(same->waits.end(), st.waits.begin(), st.waits.end());
      if (s.stuck_total > 0) --s.stuck_total;
    }
  }
  std::sort(merged.begin(), merged.end(),
            [](const sim::StuckRank& a, const sim::StuckRank& b) { return a.rank < b.rank; });
  s.stuck = std::move(merged);
}

void Runtime::describe_blocked(DirectResult& out) const {
  for (sim::StuckRank& s : out.sim.stuck) {
    const Rank& k = ranks_[s.rank];
    if (k.state != Rank::State::Blocked || k.companion) continue;
    std::string what = std::string("the program waits in ") + k.blocked_in;
    if (k.probe.active) {
      what += " for a message from " +
              (k.probe.source < 0 ? std::string("any rank") : "rank " + std::to_string(k.probe.source)) + " tag " +
              (k.probe.tag == MPI_ANY_TAG ? std::string("any") : std::to_string(k.probe.tag));
    }
    for (const auto& [op, id] : k.tracked)
      if (id == kEarlySend) {
        what += ", having gone on from its rendezvous send (operation " + std::to_string(op) +
                ") with the data buffered before a receive matched it";
        break;
      }
    s.waits.insert(s.waits.begin(), what);
  }
}

// ---- calls ---------------------------------------------------------------------------------

void Runtime::enter(const char* call, bool needs_init) {
  if (concurrent_ && g_lock_depth++ == 0) lock_state();
  Rank& k = *cur();
  if (stopping_) suspend(k);  // unwinds or ends the rank
  if (mpi_function(call) && k.call_depth++ == 0) k.call_thread = ::pthread_self();
  ++mpi_calls_;
  clock_.measure_call(k.multiple ? gate_cpu_mark() : k.cpu_mark, k.compute_ps);
  if (needs_init && !k.initialized) fail(call, "called before MPI_Init");
  if (needs_init && k.finalized) fail(call, "called after MPI_Finalize");
}

void Runtime::leave(const char* call) {
  Rank& k = *cur();
  if (mpi_function(call) && k.call_depth > 0) --k.call_depth;
  if (k.out_ops.size() - k.out_read >=
      (concurrent_ ? kPauseOpsAtOnce : kPauseOps)) {  // stays Ready: pulled again when the engine reads
    if (k.multiple)
      gate_pause(*this, k);
    else
      suspend(k);
  }
  if (concurrent_ && --g_lock_depth == 0) {
    tell_controller(&k);
    unlock_state();
  }
  clock_.mark(k.multiple ? gate_cpu_mark() : k.cpu_mark);
}

void Runtime::fail(const char* call, const std::string& message) {
  Rank& k = *cur();
  stop("rank " + std::to_string(k.world) + ": " + call + ": " + message);
  suspend(k);
  throw RankUnwind{};  // threads (processes end in suspend)
}

void Runtime::abort_run(int code) {
  Rank& k = *cur();
  abort_code_ = code;
  stop("rank " + std::to_string(k.world) + " called MPI_Abort with error code " + std::to_string(code));
  suspend(k);
  throw RankUnwind{};
}

void Runtime::exit_rank(int code) {
  Rank& k = *cur();
  if (!stopping_) enter("exit", false);  // (enter ends the rank when stopping; exit() must not)
  k.exit_code = code;
  if (!k.finalized && k.initialized) {
    stop("rank " + std::to_string(k.world) + " exited with status " + std::to_string(code) + " before MPI_Finalize");
  } else if (!stopping_) {
    issue_compute();  // what it did after MPI_Finalize
    if (code != 0) stop("rank " + std::to_string(k.world) + " exited with status " + std::to_string(code));
  }
  // exit() runs no destructors of the rank's locals: its stack is left as it
  // is and the thread is never resumed.
  k.state = Rank::State::Finished;
  threads_->threads[k.world].suspend();
  std::abort();  // unreachable
}

void Runtime::rank_exiting(int code) {
  const bool lock = concurrent_ && g_lock_depth == 0;  // (exit() from inside a call holds it already)
  if (lock) {
    lock_state();
    ++g_lock_depth;
  }
  rank_exiting_locked(code);
  if (lock) {
    --g_lock_depth;
    tell_controller(cur());
    unlock_state();
  }
}

void Runtime::rank_exiting_locked(int code) {
  Rank& k = *cur();
  if (stopping_ || k.exiting) return;
  clock_.measure_end(k.multiple ? gate_cpu_mark() : k.cpu_mark, k.compute_ps);
  k.exit_code = code;
  k.exiting = true;
  if (k.initialized && !k.finalized) {
    stop("rank " + std::to_string(k.world) + " exited with status " + std::to_string(code) + " before MPI_Finalize");
    return;
  }
  issue_compute();  // what it did after MPI_Finalize
  if (code == 0) return;
  const std::string why = "rank " + std::to_string(k.world) + " exited with status " + std::to_string(code);
  if (!concurrent_) {
    stop(why);
    return;
  }
  // Ranks at once: it has left MPI, the others run on to their own ends (the
  // rank that prints why, often rank 0, may not have yet); the run fails
  // with the lowest such rank's status, as one rank at a time would stop at
  // it first when all fail alike.
  if (error_.empty() || (exit_error_rank_ >= 0 && k.world < static_cast<std::uint32_t>(exit_error_rank_))) {
    error_ = why.c_str();
    exit_error_rank_ = static_cast<std::int32_t>(k.world);
  }
}

void Runtime::charge_task(const processor::TaskRequest& task) {
  // Measured computation: the code the charge describes was timed already.
  if (options_.compute != ComputeMode::Model) return;
  processor::ProcessorModel* processor = clock_.processor();
  if (!processor)
    fail("POEMS_Compute",
         "no processor model is set (run with a machine that has a hardware[processor] component, e.g. "
         "`poems direct PROGRAM --compute model --machine Odin`)");
  double ns = 0;
  try {
    ns = processor->task_time_ns(task);
  } catch (const std::exception& e) {
    fail("POEMS_Compute", e.what());
  }
  if (!(ns >= 0) || !std::isfinite(ns)) fail("POEMS_Compute", "the processor model gave a time that is not >= 0");
  charge(ns * 1000.0);
}

std::uint64_t Runtime::issue_on(Rank& k, const Operation& op, std::span<const Dependency> deps, std::uint32_t node) {
  k.synced = false;
  Operation o = op;
  o.node = node;
  o.first_dep = static_cast<std::uint32_t>(k.out_deps.size());
  o.dep_count = static_cast<std::uint32_t>(deps.size());
  k.out_deps.insert(k.out_deps.end(), deps.begin(), deps.end());
  k.out_ops.push_back(o);
  return k.next_op++;
}

void Runtime::append_ops(Rank& k, const taskgraph::OpBuffer& ops, std::size_t from) {
  k.synced = false;
  for (std::size_t i = from; i < ops.ops.size(); ++i) {
    Operation o = ops.ops[i];
    const Dependency* deps = ops.deps.data() + o.first_dep;
    o.first_dep = static_cast<std::uint32_t>(k.out_deps.size());
    k.out_deps.insert(k.out_deps.end(), deps, deps + o.dep_count);
    k.out_ops.push_back(o);
  }
}

void Runtime::issue_compute() {
  Rank& k = *cur();
  const double whole = std::floor(k.compute_ps + 0.5);
  if (whole < 1) return;  // less than a picosecond: carried to the next computation
  k.compute_ps -= whole;
  Operation op;
  op.kind = OpKind::Calc;
  op.duration = static_cast<Picoseconds>(whole);
  const std::uint64_t idx = issue(op, k.after, compute_node_);
  k.after.assign(1, Dependency{idx, false});
}

void Runtime::free_request(std::uint32_t id) {
  requests_.release(id);
  auto& actions = completion_actions();
  if (!actions.empty()) actions.erase(id);
}

void Runtime::expect(std::uint32_t request, std::uint64_t op, std::uint32_t on) {
  Request& q = requests_[request];
  q.op_rank = on == kNoRequest ? q.rank : on;
  ranks_[q.op_rank].tracked.emplace_back(op, request);
  ++q.remaining;
  q.op = op;
}

void Runtime::wait_for(std::span<const std::uint32_t> ids, const char* call, std::size_t need) {
  Rank& k = *cur();
  need = std::min(need, ids.size());
  for (;;) {
    if (need == ids.size()) take_early(ids);  // (not Waitany/Waitsome: which completes first is the engine's)
    std::size_t done = 0;
    for (std::uint32_t id : ids)
      if (requests_[id].done) ++done;
    if (done >= need) break;
    for (std::uint32_t id : ids) {
      Request& q = requests_[id];
      if (!q.done) q.waited = true;
    }
    if (k.multiple) {
      gate_wait(*this, k, ids, need, call);
      return;
    }
    k.waiting = static_cast<std::uint32_t>(need - done);
    k.state = Rank::State::Blocked;
    k.blocked_in = call;
    // Ranks at once: a receive that its message lets complete early wakes on
    // the send, not on the engine (whichever comes first; then look again).
    k.data_wait = concurrent_ && need == ids.size() && awaits_data(ids, k.data_from);
    suspend(k);
    k.data_wait = false;
    if (!concurrent_) break;  // one rank at a time: resumed once the requests are done
  }
  for (std::uint32_t id : ids) requests_[id].waited = false;
  k.waiting = 0;
}

// The rank's CPU is its own between checkpoints: nothing is outstanding
// (a posted receive would be processed on it when its message arrives), its
// core is not shared, no noise stretches its computation, messages are
// processed when received (matched semantics), and no timeline records the
// checkpoints as operations.
bool Runtime::checkpoint_alone() const {
  const sim::SimulationOptions& so = options_.sim;
  return !cur()->multiple && cur()->tracked.empty() && so.semantics == sim::Semantics::Matched &&
         !(so.noise && so.noise->active()) && !cores_shared_ && options_.timeline.empty();
}

Picoseconds Runtime::checkpoint(const char* call, std::uint32_t node, bool clock) {
  Rank& k = *cur();
  if (clock && k.synced && checkpoint_alone()) {
    // What the engine would answer: the computation since, issued whole at
    // the last checkpoint's time (issue_compute's rounding), and nothing
    // before it on the CPU.
    const double whole = std::floor(k.compute_ps + 0.5);
    return k.synced_at + (whole < 1 ? 0 : static_cast<Picoseconds>(whole));
  }
  issue_compute();
  Operation op;
  op.kind = OpKind::Calc;
  const std::uint64_t idx = issue(op, k.after, node);
  k.after.assign(1, Dependency{idx, false});
  const std::uint32_t id = new_request(Request::Kind::Marker, call);
  expect(id, idx);
  wait_for({&id, 1}, call);
  const Picoseconds t = requests_[id].done_time;
  free_request(id);
  k.synced_at = t;
  k.synced = checkpoint_alone();
  return t;
}

void Runtime::deliver(Request& q) {
  if (q.delivered) return;
  q.delivered = true;
  const RecvTarget& t = q.target;
  if (q.bytes > 0) {
    if (t.blocks.empty()) {
      const TypeInfo& layout = objects_.layout(t.type);
      unpack_runs(layout.blocks, layout.extent(), layout.size, q.payload.data(), q.bytes, t.buffer, t.count);
    } else {
      unpack_runs(t.blocks, t.extent, t.size, q.payload.data(), q.bytes, t.buffer, t.count);
    }
  }
  q.payload = svector<std::byte>();
}

// SMPI's rule (DirectOptions::receive_overhead_at_wait): the receive's CPU
// overhead is paid by the call that completes it, after what the rank did
// before, in the order the program completes its receives.
void Runtime::pay_receive_overhead(Request& q) {
  q.overhead_owed = false;
  if (q.cancelled || q.op_rank != cur()->world) return;
  Rank& k = *cur();
  issue_compute();
  Operation op;
  op.kind = OpKind::Calc;
  op.receive_overhead_deferred = true;
  op.peer = static_cast<std::int32_t>(q.sender);
  op.bytes = q.bytes;
  if (std::none_of(k.after.begin(), k.after.end(), [&](const Dependency& d) { return d.op == q.op && !d.on_start; }))
    k.after.push_back(Dependency{q.op, false});
  const std::uint64_t idx = issue(op, k.after, node_of(q.call));
  k.after.assign(1, Dependency{idx, false});
}

void Runtime::on_complete(std::uint32_t request, std::function<void()> action) {
  completion_actions()[request] = std::move(action);
}

void Runtime::complete_request(std::uint32_t id) {
  Request& q = requests_[id];
  if (q.kind == Request::Kind::Recv) {
    deliver(q);
    if (q.overhead_owed) pay_receive_overhead(q);
  }
  auto& actions = completion_actions();
  if (actions.empty()) return;
  auto it = actions.find(id);
  if (it == actions.end()) return;
  std::function<void()> action = std::move(it->second);
  actions.erase(it);
  action();
}

}  // namespace detail

DirectResult run(const Program& program, const std::vector<std::string>& args, const DirectOptions& options) {
  if (detail::Runtime::active()) throw std::invalid_argument("direct execution runs are not nested");
  if (options.isolation == Isolation::Threads) {
    detail::Runtime runtime(program, args, options);
    return runtime.run();
  }
  return detail::run_processes(program, args, options);
}

bool in_rank() {
  detail::Runtime* rt = detail::Runtime::active();
  return rt && rt->running();
}

void exit_rank(int code) {
  detail::Runtime* rt = detail::Runtime::active();
  if (!in_rank() || !rt->threads()) std::exit(code);
  rt->exit_rank(code);
}

void compute_task(const processor::TaskRequest& task) {
  detail::Runtime* rt = detail::Runtime::active();
  if (!in_rank()) throw std::logic_error("poems::direct::compute_task called outside a simulated rank");
  rt->enter("POEMS_Compute", false);
  rt->charge_task(task);
  rt->leave("POEMS_Compute");
}

}  // namespace poems::direct
