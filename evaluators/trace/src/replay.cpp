// Trace → operations. Within one MPI call every operation starts as soon as
// the call is entered (each also waits for the start of the one before it,
// so the rank issues them in order); the call ends when its blocking parts
// and the requests it completes are done. After the call, the next
// operation requires those and the start of the call's last operation.
#include "poems/trace/replay.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace poems::trace {

using taskgraph::CollectiveAlgorithm;
using taskgraph::CollectiveCall;
using taskgraph::CollectiveOp;
using taskgraph::Dependency;
using taskgraph::OpBuffer;
using taskgraph::Operation;
using taskgraph::OpKind;

namespace {

constexpr std::uint64_t kNoOp = ~std::uint64_t{0};
constexpr std::uint32_t kComputeNode = 1;  // node 0 is none; regions follow

bool parse_side(std::string_view text, std::string& name, std::int64_t& index, std::int64_t fallback,
                std::string& error) {
  const auto hash = text.find('#');
  name = std::string(text.substr(0, hash));
  index = fallback;
  if (hash == std::string_view::npos) return true;
  const std::string number(text.substr(hash + 1));
  try {
    std::size_t used = 0;
    index = std::stoll(number, &used);
    if (used != number.size() || index == 0) throw std::invalid_argument("");
  } catch (const std::exception&) {
    error =
        "'" + std::string(text) + "': the occurrence after '#' must be a non-zero integer (1 the first, -1 the last)";
    return false;
  }
  return true;
}

// The call of `rank` that `name#index` names, or kNone.
std::uint32_t find_call(const Trace& t, const Rank& r, const std::string& name, std::int64_t index) {
  std::vector<std::uint32_t> matching;
  for (std::uint32_t c = 0; c < r.calls.size(); ++c)
    if (t.regions[r.calls[c].region] == name) matching.push_back(c);
  const auto n = static_cast<std::int64_t>(matching.size());
  const std::int64_t at = index > 0 ? index - 1 : n + index;
  return at >= 0 && at < n ? matching[static_cast<std::size_t>(at)] : kNone;
}

std::optional<CollectiveOp> library_op(Collective c) {
  switch (c) {
    case Collective::Barrier:
    case Collective::CreateHandle: return CollectiveOp::Barrier;
    case Collective::Bcast: return CollectiveOp::Bcast;
    case Collective::Gather:
    case Collective::Gatherv: return CollectiveOp::Gather;
    case Collective::Scatter:
    case Collective::Scatterv: return CollectiveOp::Scatter;
    case Collective::Allgather:
    case Collective::Allgatherv: return CollectiveOp::Allgather;
    case Collective::Alltoall:
    case Collective::Alltoallv:
    case Collective::Alltoallw: return CollectiveOp::Alltoall;
    case Collective::Allreduce: return CollectiveOp::Allreduce;
    case Collective::Reduce: return CollectiveOp::Reduce;
    default: return std::nullopt;  // reduce-scatter and the scans are composed below
  }
}

}  // namespace

std::string Window::text() const {
  if (whole()) return "";
  auto side = [](const std::string& n, std::int64_t i) { return n.empty() ? n : n + "#" + std::to_string(i); };
  return side(from, from_index) + ".." + side(to, to_index);
}

bool parse_window(std::string_view text, Window& out, std::string& error) {
  const auto dots = text.find("..");
  if (dots == std::string_view::npos) {
    error =
        "'" + std::string(text) + "' is not a window; expected FROM[#N]..TO[#M], e.g. MPI_Barrier#1..MPI_Allreduce#-1";
    return false;
  }
  Window w;
  if (!parse_side(text.substr(0, dots), w.from, w.from_index, 1, error)) return false;
  if (!parse_side(text.substr(dots + 2), w.to, w.to_index, -1, error)) return false;
  out = w;
  return true;
}

bool parse_algorithm_choice(std::string_view text, ReplayOptions& options, std::string& error) {
  const auto eq = text.find('=');
  const std::string op_name(text.substr(0, eq));
  const auto op = taskgraph::parse_collective_op(op_name);
  if (eq == std::string_view::npos || !op) {
    error = "'" + std::string(text) +
            "': expected OPERATION=ALGORITHM with OPERATION one of barrier, bcast, reduce, allreduce, gather, scatter, "
            "allgather, alltoall";
    return false;
  }
  const auto allowed = taskgraph::algorithms_for(*op);
  const auto algorithm = taskgraph::parse_collective_algorithm(text.substr(eq + 1));
  if (!algorithm || std::find(allowed.begin(), allowed.end(), *algorithm) == allowed.end()) {
    std::string names;
    for (auto a : allowed) names += std::string(names.empty() ? "" : ", ") + taskgraph::collective_algorithm_name(a);
    error =
        "'" + std::string(text.substr(eq + 1)) + "' is not an algorithm of " + op_name + "; expected one of " + names;
    return false;
  }
  options.algorithms[*op] = *algorithm;
  return true;
}

std::vector<WindowBounds> window_bounds(const Trace& trace, const Window& w) {
  const auto nranks = static_cast<std::uint32_t>(trace.ranks.size());
  std::vector<WindowBounds> out(nranks);
  for (std::uint32_t r = 0; r < nranks; ++r) {
    const Rank& rank = trace.ranks[r];
    // By default the run between MPI_Init and MPI_Finalize (Rank::begin, end).
    std::uint32_t first = 0, last = static_cast<std::uint32_t>(rank.steps.size());
    if (!rank.calls.empty()) {
      const std::string& a = trace.regions[rank.calls.front().region];
      if (a == "MPI_Init" || a == "MPI_Init_thread") first = rank.calls.front().end_step;
      if (rank.calls.size() > 1 && trace.regions[rank.calls.back().region] == "MPI_Finalize")
        last = rank.calls.back().first_step;
    }
    Picoseconds t0 = rank.begin, t1 = rank.end;
    // The window's side `name#index`: the step and the time after that call.
    auto side = [&](const std::string& name, std::int64_t index, const char* which, std::uint32_t& step,
                    Picoseconds& time) {
      if (name.empty()) return;
      const std::uint32_t c = find_call(trace, rank, name, index);
      if (c == kNone)
        throw TraceError("rank " + std::to_string(r) + " has no call " + name + "#" + std::to_string(index) +
                         " (the window's " + which + ")");
      step = rank.calls[c].end_step;
      time = rank.calls[c].leave;
    };
    side(w.from, w.from_index, "start", first, t0);
    side(w.to, w.to_index, "end", last, t1);
    if (last < first || t1 < t0) {
      const std::string what = w.whole() ? "the run (from the end of MPI_Init, else the first record, to the start "
                                           "of MPI_Finalize, else the last record)"
                                         : "the window " + w.text();
      throw TraceError("on rank " + std::to_string(r) + " " + what + " ends before it starts: it starts at " +
                       std::to_string(t0) + " ps and ends at " + std::to_string(t1) + " ps");
    }
    out[r] = {first, last, t0, t1};
  }
  return out;
}

// ---- the schedule -----------------------------------------------------------------

struct TraceSchedule::Cursor {
  std::uint32_t step = 0;
  std::uint64_t next_op = 0;
  std::vector<Dependency> frontier;  // what the next operation outside a call depends on
  std::uint32_t call = kNone;        // the open call
  std::vector<Dependency> entry;     // the frontier when it was entered
  std::vector<std::uint64_t> waits;  // what its end requires
  std::uint64_t last_issued = kNoOp;
  std::vector<std::uint64_t> slot_op;  // request slot -> operation
  std::vector<Dependency> scratch;     // the dependencies of the operation being made
  OpBuffer pending;                    // operations made but not handed over
  std::size_t pending_at = 0;
  bool finished = false;

  void reset(std::uint32_t first, std::uint32_t slots) {
    *this = Cursor{};
    step = first;
    slot_op.assign(slots, kNoOp);
  }
};

TraceSchedule::TraceSchedule(const Trace& trace, const ReplayOptions& options) : trace_(trace), options_(options) {
  if (!(options.compute_scale >= 0) || !std::isfinite(options.compute_scale))
    throw TraceError("the compute scale must be a finite number >= 0, not " + std::to_string(options.compute_scale));
  if (options.cpu_time && !trace.cpu_time)
    throw TraceError(trace.path + " has no CPU time of its computation; record it with poems trace --cpu-time");
  const auto nranks = static_cast<std::uint32_t>(trace.ranks.size());
  nodes_.push_back({});
  nodes_.push_back({"computation", trace.path});
  for (const std::string& region : trace.regions) nodes_.push_back({region, trace.path});

  // The window on every rank.
  const std::vector<WindowBounds> window = window_bounds(trace, options.window);
  bounds_.resize(nranks);
  Picoseconds start = ~Picoseconds{0}, end = 0;
  for (std::uint32_t r = 0; r < nranks; ++r) {
    const Rank& rank = trace.ranks[r];
    const auto [first, last, t0, t1] = window[r];
    bounds_[r] = {first, last};
    steps_total_ += last > first ? last - first : 0;
    start = std::min(start, t0);
    end = std::max(end, t1);
    for (const CallRecord& call : rank.calls)
      if (call.first_step >= first && call.end_step <= last && call.leave <= t1 && call.enter >= t0) ++scope_.calls;
    for (std::uint32_t i = first; i < last; ++i)
      if (rank.steps[i].kind == StepKind::Compute)
        scope_.traced_compute += options.cpu_time ? rank.steps[i].cpu : rank.steps[i].value;
  }
  scope_.measured = end > start ? end - start : 0;

  // What the window cuts: messages with one end outside, collectives not
  // inside on every member.
  cut_.resize(nranks);
  for (std::uint32_t r = 0; r < nranks; ++r) cut_[r].assign(trace.ranks[r].steps.size(), false);
  auto inside = [&](std::uint32_t r, std::uint32_t s) { return s >= bounds_[r].first && s < bounds_[r].second; };
  for (const Message& m : trace.messages) {
    const bool a = inside(m.sender, m.send_step), b = inside(m.receiver, m.recv_step);
    if (a && b) {
      ++scope_.messages;
    } else if (a || b) {
      cut_[m.sender][m.send_step] = cut_[m.receiver][m.recv_step] = true;
      ++scope_.messages_cut;
    }
  }
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>, std::pair<std::uint32_t, std::uint32_t>> counts;
  for (std::uint32_t r = 0; r < nranks; ++r)
    for (std::uint32_t s = 0; s < trace.ranks[r].steps.size(); ++s) {
      const Step& st = trace.ranks[r].steps[s];
      if (st.kind != StepKind::Collective || st.dropped) continue;
      auto& [in, all] = counts[{st.comm, trace.comms[st.comm].self ? r : kNone, st.request}];
      ++all;
      if (inside(r, s)) ++in;
    }
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>, bool> partial;
  for (const auto& [key, c] : counts) {
    if (c.first == c.second)
      ++scope_.collectives;
    else if (c.first > 0)
      ++scope_.collectives_cut, partial[key] = true;
  }
  if (!partial.empty())
    for (std::uint32_t r = 0; r < nranks; ++r)
      for (std::uint32_t s = 0; s < trace.ranks[r].steps.size(); ++s) {
        const Step& st = trace.ranks[r].steps[s];
        if (st.kind == StepKind::Collective && !st.dropped &&
            partial.count({st.comm, trace.comms[st.comm].self ? r : kNone, st.request}))
          cut_[r][s] = true;
      }
  cursors_.resize(nranks);
  restart();
}

TraceSchedule::~TraceSchedule() = default;

std::uint32_t TraceSchedule::ranks() const { return static_cast<std::uint32_t>(trace_.ranks.size()); }

bool TraceSchedule::restart() {
  for (std::uint32_t r = 0; r < cursors_.size(); ++r)
    cursors_[r].reset(bounds_[r].first, trace_.ranks[r].request_slots);
  steps_read_ = 0;
  return true;
}

namespace {

void add_op(OpBuffer& b, Operation op, const std::vector<Dependency>& deps) {
  op.first_dep = static_cast<std::uint32_t>(b.deps.size());
  op.dep_count = static_cast<std::uint32_t>(deps.size());
  b.deps.insert(b.deps.end(), deps.begin(), deps.end());
  b.ops.push_back(op);
}

}  // namespace

void TraceSchedule::close_call(Cursor& c) {
  if (c.call == kNone) return;
  std::vector<Dependency> next;
  for (std::uint64_t w : c.waits) next.push_back({w, false});
  if (c.last_issued != kNoOp && std::find(c.waits.begin(), c.waits.end(), c.last_issued) == c.waits.end())
    next.push_back({c.last_issued, true});
  if (c.last_issued == kNoOp)
    for (const Dependency& d : c.entry)
      if (std::none_of(next.begin(), next.end(), [&](const Dependency& n) { return n.op == d.op; })) next.push_back(d);
  std::sort(next.begin(), next.end(), [](const Dependency& a, const Dependency& b) { return a.op < b.op; });
  c.frontier = std::move(next);
  c.call = kNone;
  c.waits.clear();
  c.entry.clear();
  c.last_issued = kNoOp;
}

void TraceSchedule::lower_collective(std::uint32_t rank, Cursor& c, const Step& step,
                                     const std::vector<Dependency>& deps) {
  const Communicator& comm = trace_.comms[step.comm];
  const std::uint32_t n = comm.self ? 1 : static_cast<std::uint32_t>(comm.members.size());
  std::uint32_t me = 0;
  if (!comm.self)
    me = static_cast<std::uint32_t>(std::find(comm.members.begin(), comm.members.end(), rank) - comm.members.begin());
  if (me >= n) return;  // not a member: link() only keeps instances every member recorded
  const std::uint32_t root =
      step.peer >= 0 && static_cast<std::uint32_t>(step.peer) < n ? static_cast<std::uint32_t>(step.peer) : 0;
  const std::uint32_t node = 2 + trace_.ranks[rank].calls[step.call].region;
  const std::size_t first = c.pending.ops.size();
  std::vector<std::uint64_t> exits;
  auto phase = [&](CollectiveOp op, std::uint64_t bytes, std::uint32_t phase_root, std::int32_t tag,
                   const std::vector<Dependency>& entry) {
    CollectiveCall call;
    call.op = op;
    auto chosen = options_.algorithms.find(op);
    call.algorithm = chosen != options_.algorithms.end() ? chosen->second : taskgraph::algorithms_for(op).front();
    call.procs = n;
    call.rank = me;
    call.bytes = bytes;
    call.root = phase_root;
    call.comm = taskgraph::collective_comm(step.comm);
    call.tag = tag;
    call.node = node;
    const std::size_t before = c.pending.ops.size();
    std::vector<std::uint64_t> out = taskgraph::append_collective(call, c.next_op, entry, c.pending);
    c.next_op += c.pending.ops.size() - before;
    return c.pending.ops.size() > before ? out : std::vector<std::uint64_t>{};
  };
  const auto tag = static_cast<std::int32_t>(2 * (step.request & 0x3FFFFFFF));
  if (auto op = library_op(step.collective)) {
    exits = phase(*op, step.value, root, tag, deps);
  } else if (step.collective == Collective::ReduceScatter || step.collective == Collective::ReduceScatterBlock) {
    // Reduce the whole vector to rank 0, then scatter the blocks.
    std::vector<std::uint64_t> mid = phase(CollectiveOp::Reduce, step.value * n, 0, tag, deps);
    std::vector<Dependency> between;
    for (std::uint64_t m : mid) between.push_back({m, false});
    if (between.empty()) between = deps;
    exits = phase(CollectiveOp::Scatter, step.value, 0, tag + 1, between);
    if (exits.empty()) exits = mid;
  } else if (step.collective == Collective::Scan || step.collective == Collective::Exscan) {
    // A linear chain: receive the prefix from the rank before, pass it on.
    std::vector<Dependency> after = deps;
    auto p2p = [&](OpKind kind, std::uint32_t peer) {
      Operation op;
      op.kind = kind;
      op.peer = static_cast<std::int32_t>(comm.self ? rank : comm.members[peer]);
      op.tag = tag;
      op.comm = taskgraph::collective_comm(step.comm);
      op.bytes = step.value;
      op.node = node;
      add_op(c.pending, op, after);
      after = {{c.next_op, false}};
      exits = {c.next_op};
      ++c.next_op;
    };
    if (me > 0) p2p(OpKind::Recv, me - 1);
    if (me + 1 < n) p2p(OpKind::Send, me + 1);
  }
  // The library numbers peers within the communicator.
  if (!comm.self)
    for (std::size_t i = first; i < c.pending.ops.size(); ++i) {
      Operation& op = c.pending.ops[i];
      if (step.collective != Collective::Scan && step.collective != Collective::Exscan)
        op.peer = static_cast<std::int32_t>(comm.members[static_cast<std::size_t>(op.peer)]);
    }
  if (c.pending.ops.size() > first) c.last_issued = c.next_op - 1;
  c.waits.insert(c.waits.end(), exits.begin(), exits.end());
}

void TraceSchedule::process(std::uint32_t rank, Cursor& c, const Step& step) {
  if (step.kind == StepKind::Compute) {
    close_call(c);
    const double scaled = static_cast<double>(options_.cpu_time ? step.cpu : step.value) * options_.compute_scale;
    const auto d = static_cast<Picoseconds>(std::llround(scaled));
    if (d == 0) return;
    Operation op;
    op.kind = OpKind::Calc;
    op.duration = d;
    op.node = kComputeNode;
    add_op(c.pending, op, c.frontier);
    c.frontier = {{c.next_op++, false}};
    return;
  }
  if (step.call != c.call) {
    close_call(c);
    c.call = step.call;
    c.entry = c.frontier;
  }
  std::vector<Dependency>& deps = c.scratch;  // reused: no allocation per operation
  deps.assign(c.entry.begin(), c.entry.end());
  if (c.last_issued != kNoOp) deps.push_back({c.last_issued, true});
  switch (step.kind) {
    case StepKind::Send:
    case StepKind::Recv: {
      Operation op;
      op.kind = step.kind == StepKind::Send ? OpKind::Send : OpKind::Recv;
      op.peer = step.peer;
      op.tag = step.tag;
      op.comm = step.comm;
      op.bytes = step.value;
      op.node = 2 + trace_.ranks[rank].calls[step.call].region;
      add_op(c.pending, op, deps);
      const std::uint64_t index = c.next_op++;
      if (step.nonblocking)
        c.slot_op[step.request] = index;
      else
        c.waits.push_back(index);
      c.last_issued = index;
      break;
    }
    case StepKind::Complete:
      if (step.request < c.slot_op.size() && c.slot_op[step.request] != kNoOp) {
        c.waits.push_back(c.slot_op[step.request]);
        c.slot_op[step.request] = kNoOp;
      }
      break;
    case StepKind::Collective: lower_collective(rank, c, step, deps); break;
    case StepKind::Compute: break;
  }
}

std::size_t TraceSchedule::pull(std::uint32_t rank, std::size_t max_ops, OpBuffer& out) {
  Cursor& c = cursors_[rank];
  const Rank& r = trace_.ranks[rank];
  const std::uint32_t end = bounds_[rank].second;
  std::size_t given = 0;
  while (given < max_ops) {
    if (c.pending_at < c.pending.ops.size()) {
      Operation op = c.pending.ops[c.pending_at];
      const Dependency* deps = c.pending.deps.data() + op.first_dep;
      op.first_dep = static_cast<std::uint32_t>(out.deps.size());
      out.deps.insert(out.deps.end(), deps, deps + op.dep_count);
      out.ops.push_back(op);
      ++c.pending_at;
      ++given;
      continue;
    }
    c.pending.clear();
    c.pending_at = 0;
    if (c.step >= end) {
      close_call(c);
      c.finished = true;
      break;
    }
    const Step& step = r.steps[c.step];
    const bool skip = step.dropped || cut_[rank][c.step];
    ++c.step;
    ++steps_read_;
    if (!skip) process(rank, c, step);
  }
  if (c.finished && c.pending_at >= c.pending.ops.size()) out.rank_done = given > 0;
  return given;
}

sim::SimulationResult replay(const Trace& trace, const sim::SimulationOptions& machine, const ReplayOptions& options) {
  TraceSchedule schedule(trace, options);
  return sim::simulate(schedule, machine);
}

}  // namespace poems::trace
