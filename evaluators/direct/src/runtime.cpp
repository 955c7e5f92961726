// The direct-execution runtime: ranks as user-level threads feeding the
// simulator's engine (pull), and the engine's reports back (observer).
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "runtime_impl.h"

namespace poems::direct {
namespace detail {

namespace {

Runtime* g_active = nullptr;

// A running rank stops issuing and lets the engine read once it has this
// many operations waiting in its outbox (a program that only sends would
// otherwise run to its end before the engine sees anything).
constexpr std::size_t kPauseOps = 256;

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
  measure_ = options.compute == ComputeMode::Measured && options.compute_scale > 0;
  if (measure_) {
    // An interval between two MPI calls also holds the end of one clock read
    // and the start of the next: the least time two back-to-back reads show.
    clock_cost_ns_ = ~std::uint64_t{0};
    for (int i = 0; i < 64; ++i) {
      const std::uint64_t a = thread_cpu_ns(), b = thread_cpu_ns();
      clock_cost_ns_ = std::min(clock_cost_ns_, b - a);
    }
  }
  if (options.processor) processor_ = processor::make_processor_model(*options.processor);
  nodes_.push_back({"", ""});  // node 0: none
  compute_node_ = node_of("computation");
  const std::uint32_t p = options.ranks;
  auto world = std::make_unique<Comm>();
  world->members.resize(p);
  for (std::uint32_t r = 0; r < p; ++r) world->members[r] = r;
  world->started.assign(p, 0);
  comms_.push_back(std::move(world));
  auto self = std::make_unique<Comm>();
  self->self = true;
  self->started.assign(p, 0);  // by world rank
  comms_.push_back(std::move(self));
  ranks_.resize(p);
  for (std::uint32_t r = 0; r < p; ++r) ranks_[r].world = r;
  stacks_ = std::make_unique<StackRegion>(p, options.stack_bytes);
}

Runtime::~Runtime() = default;

std::uint32_t Runtime::node_of(const char* label) {
  auto fast = node_by_literal_.find(label);
  if (fast != node_by_literal_.end()) return fast->second;
  auto it = node_ids_.find(label);
  std::uint32_t id;
  if (it != node_ids_.end()) {
    id = it->second;
  } else {
    nodes_.push_back({label, ""});
    id = static_cast<std::uint32_t>(nodes_.size() - 1);
    node_ids_.emplace(label, id);
  }
  node_by_literal_.emplace(label, id);
  return id;
}

// ---- the ranks' threads ----------------------------------------------------------

void Runtime::start_rank(std::uint32_t r) {
  Rank& k = ranks_[r];
  k.args = args_;
  for (std::string& a : k.args) k.argv.push_back(a.data());
  k.argv.push_back(nullptr);
  k.thread.start(*stacks_, r, [this, r] {
    Rank& me = ranks_[r];
    me.cpu_mark = measure_ ? thread_cpu_ns() : 0;
    try {
      me.exit_code = program_(static_cast<int>(me.argv.size() - 1), me.argv.data());
      if (!me.finalized) {
        // A program that returns without MPI_Finalize: its last computation still counts.
        if (measure_)
          me.compute_ps += static_cast<double>(thread_cpu_ns() - me.cpu_mark) * 1000.0 * options_.compute_scale;
        issue_compute();
      }
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
  if (k.state == Rank::State::NotStarted) start_rank(k.world);
  current_ = &k;
  ++switches_;
  k.thread.resume();
  current_ = nullptr;
  if (k.state == Rank::State::Finished && !k.thread.finished()) return;  // it called exit(): never resumed
  // With guard pages an overflow faults; without them the canary tells.
  if (!stacks_->guarded() && !stacks_->canary_intact(k.world)) {
    stop("rank " + std::to_string(k.world) + " overflowed its stack of " +
         std::to_string(stacks_->stack_bytes() >> 10) + " KiB (give a larger stack size)");
    k.state = Rank::State::Finished;  // its stack cannot be trusted: never resume it
    return;
  }
  if (k.thread.finished()) {
    k.state = Rank::State::Finished;
    stacks_->release(k.world);
  }
}

void Runtime::suspend(Rank& k) {
  k.thread.suspend();
  if (stopping_) throw RankUnwind{};
}

void Runtime::stop(const std::string& error) {
  if (error_.empty()) error_ = error;
  stopping_ = true;
}

void Runtime::unwind_all() {
  stopping_ = true;
  for (Rank& k : ranks_) {
    if (!k.thread.started() || k.thread.finished() || k.state == Rank::State::Finished) continue;
    resume(k);  // the rank's program unwinds from its MPI call
    if (!k.thread.finished())
      std::fprintf(stderr, "poems: warning: rank %u did not end when the run stopped\n", k.world);
  }
}

// ---- ScheduleSource ------------------------------------------------------------------

std::size_t Runtime::pull(std::uint32_t rank, std::size_t max_ops, taskgraph::OpBuffer& out) {
  Rank& k = ranks_[rank];
  if (k.out_read == k.out.ops.size()) {
    k.out.clear();
    k.out_read = 0;
    while (k.out.ops.empty() && (k.state == Rank::State::NotStarted || k.state == Rank::State::Ready)) {
      resume(k);
      if (stopping_) throw RunStopped{};
    }
    if (k.out.ops.empty()) return k.state == Rank::State::Finished ? 0 : kBlocked;
  }
  const std::size_t n = std::min(max_ops, k.out.ops.size() - k.out_read);
  for (std::size_t i = 0; i < n; ++i) {
    Operation op = k.out.ops[k.out_read + i];
    const Dependency* deps = k.out.deps.data() + op.first_dep;
    op.first_dep = static_cast<std::uint32_t>(out.deps.size());
    out.deps.insert(out.deps.end(), deps, deps + op.dep_count);
    out.ops.push_back(op);
  }
  k.out_read += n;
  return n;
}

// ---- ExecutionObserver -------------------------------------------------------------

bool Runtime::completed(std::uint32_t rank, std::uint64_t op, Picoseconds time) {
  Rank& k = ranks_[rank];
  if (k.tracked.empty()) return false;
  const std::uint32_t id = k.untrack(op, true);
  if (id == kNoRequest) return false;
  Request& q = requests_[id];
  // A receive stays tracked for matched(), which the engine calls in the same event.
  if (q.kind != Request::Kind::Recv) k.untrack(op);
  if (time > q.done_time) q.done_time = time;
  if (--q.remaining > 0) return false;
  q.done = true;
  if (!q.waited) return false;
  q.waited = false;
  if (--k.waiting > 0) return false;
  k.state = Rank::State::Ready;
  return true;
}

void Runtime::matched(std::uint32_t rank, std::uint64_t recv_op, std::uint32_t sender, std::uint64_t send_op,
                      Picoseconds) {
  auto m = messages_.find(op_key(sender, send_op));
  if (m == messages_.end()) return;  // a collective's message: its data is the collective's
  Rank& k = ranks_[rank];
  for (auto u = k.unexpected.begin(); u != k.unexpected.end(); ++u)
    if (u->first == sender && u->second == send_op) {
      k.unexpected.erase(u);
      break;
    }
  const std::uint32_t id = k.untrack(recv_op);
  if (id == kNoRequest) {
    stop("internal error: rank " + std::to_string(rank) + " received a message without a receive request");
    throw RunStopped{};
  }
  Request& q = requests_[id];
  const Message& msg = m->second;
  if (msg.bytes > q.capacity) {
    stop("rank " + std::to_string(rank) + ": MPI_Recv: a message of " + std::to_string(msg.bytes) +
         " bytes from rank " + std::to_string(msg.source) + " (tag " + std::to_string(msg.tag) +
         ") is longer than the receive buffer of " + std::to_string(q.capacity) + " bytes (MPI_ERR_TRUNCATE)");
    throw RunStopped{};
  }
  if (msg.bytes > 0) std::memcpy(q.buffer, msg.data(), msg.bytes);
  q.source = msg.source;
  q.tag = msg.tag;
  q.bytes = msg.bytes;
  messages_.erase(m);
}

bool Runtime::arrived_unexpected(std::uint32_t rank, std::uint32_t sender, std::uint64_t send_op, Picoseconds) {
  auto m = messages_.find(op_key(sender, send_op));
  if (m == messages_.end()) return false;
  Rank& k = ranks_[rank];
  k.unexpected.emplace_back(sender, send_op);
  if (!k.probe.active || k.state != Rank::State::Blocked) return false;
  const Message& msg = m->second;
  if (msg.comm != static_cast<std::uint32_t>(k.probe.comm) ||
      (k.probe.source >= 0 && static_cast<std::uint32_t>(k.probe.source) != sender) ||
      (k.probe.tag != MPI_ANY_TAG && k.probe.tag != msg.tag))
    return false;
  k.probe.active = false;
  k.state = Rank::State::Ready;
  return true;
}

// ---- the run ---------------------------------------------------------------------------

DirectResult Runtime::run() {
  if (g_active) throw std::invalid_argument("direct execution runs are not nested");
  const auto start = std::chrono::steady_clock::now();
  g_active = this;
  DirectResult out;
  sim::SimulationOptions so = options_.sim;
  so.observer = this;
  try {
    out.sim = sim::simulate(*this, so, options_.max_stuck_listed);
  } catch (const RunStopped&) {
    out.sim.completed = false;
  } catch (const sim::SimulationError& e) {
    out.sim.completed = false;
    stop(std::string("internal error: the engine refused an operation: ") + e.what());
  } catch (...) {
    unwind_all();
    g_active = nullptr;
    throw;
  }
  out.sim.ranks = ranks();
  if (error_.empty() && !out.sim.completed) {
    describe_blocked(out);
    error_ = "deadlock: " + std::to_string(out.sim.stuck_total) + " rank(s) cannot go on";
    if (!out.sim.stuck.empty() && !out.sim.stuck.front().waits.empty())
      error_ +=
          " (rank " + std::to_string(out.sim.stuck.front().rank) + ": " + out.sim.stuck.front().waits.front() + ")";
  }
  unwind_all();
  g_active = nullptr;
  out.error = error_;
  out.abort_code = abort_code_;
  for (const Rank& k : ranks_) out.exit_codes.push_back(k.exit_code);
  out.switches = switches_;
  out.mpi_calls = mpi_calls_;
  out.measured_cpu_seconds = static_cast<double>(measured_ns_) * 1e-9;
  out.host_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  out.peak_rss_bytes = static_cast<std::size_t>(usage.ru_maxrss) * 1024;
  return out;
}

void Runtime::describe_blocked(DirectResult& out) const {
  for (sim::StuckRank& s : out.sim.stuck) {
    const Rank& k = ranks_[s.rank];
    if (k.state != Rank::State::Blocked) continue;
    std::string what = std::string("the program waits in ") + k.blocked_in;
    if (k.probe.active) {
      what += " for a message from " +
              (k.probe.source < 0 ? std::string("any rank") : "rank " + std::to_string(k.probe.source)) + " tag " +
              (k.probe.tag == MPI_ANY_TAG ? std::string("any") : std::to_string(k.probe.tag));
    }
    s.waits.insert(s.waits.begin(), what);
  }
}

// ---- calls ----------------------------------------------------------------------------

void Runtime::enter(const char* call, bool needs_init) {
  Rank& k = *current_;
  if (stopping_) throw RankUnwind{};
  ++mpi_calls_;
  if (measure_) {
    const std::uint64_t now = thread_cpu_ns();
    const std::uint64_t spent = now - k.cpu_mark > clock_cost_ns_ ? now - k.cpu_mark - clock_cost_ns_ : 0;
    measured_ns_ += spent;
    k.compute_ps += static_cast<double>(spent) * 1000.0 * options_.compute_scale;
  }
  if (needs_init && !k.initialized) fail(call, "called before MPI_Init");
  if (needs_init && k.finalized) fail(call, "called after MPI_Finalize");
}

void Runtime::leave() {
  Rank& k = *current_;
  if (k.out.ops.size() - k.out_read >= kPauseOps) suspend(k);  // stays Ready: pulled again when the engine reads
  if (measure_) k.cpu_mark = thread_cpu_ns();
}

void Runtime::fail(const char* call, const std::string& message) {
  Rank& k = *current_;
  stop("rank " + std::to_string(k.world) + ": " + call + ": " + message);
  suspend(k);
  throw RankUnwind{};
}

void Runtime::abort_run(int code) {
  Rank& k = *current_;
  abort_code_ = code;
  stop("rank " + std::to_string(k.world) + " called MPI_Abort with error code " + std::to_string(code));
  suspend(k);
  throw RankUnwind{};
}

void Runtime::exit_rank(int code) {
  Rank& k = *current_;
  if (!stopping_) enter("exit", false);  // (enter throws when stopping; exit() must not)
  k.exit_code = code;
  if (!k.finalized) {
    stop("rank " + std::to_string(k.world) + " called exit(" + std::to_string(code) + ") before MPI_Finalize");
  } else if (!stopping_) {
    issue_compute();  // what it did after MPI_Finalize
  }
  // exit() runs no destructors of the rank's locals: its stack is left as it
  // is and the thread is never resumed.
  k.state = Rank::State::Finished;
  k.thread.suspend();
  std::abort();  // unreachable
}

void Runtime::charge_task(const processor::TaskRequest& task) {
  // Measured computation: the code the charge describes was timed already.
  if (options_.compute != ComputeMode::Model) return;
  if (!processor_)
    fail("POEMS_Compute",
         "no processor model is set (run with a machine that has a hardware[processor] component, e.g. "
         "`poems direct PROGRAM --compute model --machine Odin`)");
  double ns = 0;
  try {
    ns = processor_->task_time_ns(task);
  } catch (const std::exception& e) {
    fail("POEMS_Compute", e.what());
  }
  if (!(ns >= 0) || !std::isfinite(ns)) fail("POEMS_Compute", "the processor model gave a time that is not >= 0");
  charge(ns * 1000.0);
}

std::uint64_t Runtime::issue(const Operation& op, std::span<const Dependency> deps, std::uint32_t node) {
  Rank& k = *current_;
  Operation o = op;
  o.node = node;
  o.first_dep = static_cast<std::uint32_t>(k.out.deps.size());
  o.dep_count = static_cast<std::uint32_t>(deps.size());
  k.out.deps.insert(k.out.deps.end(), deps.begin(), deps.end());
  k.out.ops.push_back(o);
  return k.next_op++;
}

void Runtime::issue_compute() {
  Rank& k = *current_;
  const double whole = std::floor(k.compute_ps + 0.5);
  if (whole < 1) return;  // less than a picosecond: carried to the next computation
  k.compute_ps -= whole;
  Operation op;
  op.kind = OpKind::Calc;
  op.duration = static_cast<Picoseconds>(whole);
  const std::uint64_t idx = issue(op, k.after, compute_node_);
  k.after.assign(1, Dependency{idx, false});
}

std::uint32_t Runtime::new_request(Request::Kind kind) {
  std::uint32_t id;
  if (free_requests_ != 0) {
    id = free_requests_ - 1;
    free_requests_ = requests_[id].next_free;
  } else {
    requests_.emplace_back();
    id = static_cast<std::uint32_t>(requests_.size() - 1);
  }
  requests_[id] = Request{};
  requests_[id].kind = kind;
  requests_[id].rank = current_->world;
  return id;
}

void Runtime::free_request(std::uint32_t id) {
  requests_[id].kind = Request::Kind::Free;
  requests_[id].next_free = free_requests_;
  free_requests_ = id + 1;
}

void Runtime::expect(std::uint32_t request, std::uint64_t op) {
  Request& q = requests_[request];
  ranks_[q.rank].tracked.emplace_back(op, request);
  ++q.remaining;
  q.op = op;
}

void Runtime::wait_for(std::span<const std::uint32_t> ids, const char* call) {
  Rank& k = *current_;
  std::uint32_t n = 0;
  for (std::uint32_t id : ids) {
    Request& q = requests_[id];
    if (!q.done && !q.waited) {
      q.waited = true;
      ++n;
    }
  }
  if (n == 0) return;
  k.waiting = n;
  k.state = Rank::State::Blocked;
  k.blocked_in = call;
  suspend(k);
}

Picoseconds Runtime::checkpoint(const char* call, std::uint32_t node) {
  Rank& k = *current_;
  issue_compute();
  Operation op;
  op.kind = OpKind::Calc;
  const std::uint64_t idx = issue(op, k.after, node);
  k.after.assign(1, Dependency{idx, false});
  const std::uint32_t id = new_request(Request::Kind::Marker);
  expect(id, idx);
  wait_for({&id, 1}, call);
  const Picoseconds t = requests_[id].done_time;
  free_request(id);
  return t;
}

}  // namespace detail

DirectResult run(const Program& program, const std::vector<std::string>& args, const DirectOptions& options) {
  detail::Runtime runtime(program, args, options);
  return runtime.run();
}

bool in_rank() {
  detail::Runtime* rt = detail::Runtime::active();
  return rt && rt->running();
}

void exit_rank(int code) {
  detail::Runtime* rt = detail::Runtime::active();
  if (!in_rank()) std::exit(code);
  rt->exit_rank(code);
}

void compute_task(const processor::TaskRequest& task) {
  detail::Runtime* rt = detail::Runtime::active();
  if (!in_rank()) throw std::logic_error("poems::direct::compute_task called outside a simulated rank");
  rt->enter("POEMS_Compute", false);
  rt->charge_task(task);
  rt->leave();
}

}  // namespace poems::direct
