#include "poems/taskgraph/dtg.h"

#include "isl_context.h"
#include "poems/psl/value.h"

#include <isl/ctx.h>
#include <isl/ilp.h>
#include <isl/options.h>
#include <isl/point.h>
#include <isl/set.h>
#include <isl/val.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>

namespace poems::taskgraph {

// ------------------------------------------------------------ process set
namespace {
std::int64_t val_to_int(isl_val* v, bool& ok) {
  ok = v != nullptr && isl_val_is_int(v) == isl_bool_true;
  std::int64_t out = ok ? isl_val_get_num_si(v) : 0;
  isl_val_free(v);
  return out;
}
}  // namespace

ProcessSet ProcessSet::from_isl(const std::string& text, const std::vector<std::string>& params,
                                const std::vector<double>& values, std::size_t dims) {
  IslContext isl;
  isl_set* set = isl_set_read_from_str(isl.ctx, text.c_str());
  if (!set) throw InstantiationError("isl cannot read the process set: " + text);
  for (std::size_t i = 0; i < params.size(); ++i) {
    double v = values.at(i);
    if (std::floor(v) != v || std::fabs(v) > 9.0e15) {
      isl_set_free(set);
      throw InstantiationError("the process set needs an integer '" + params[i] + "', not " + std::to_string(v));
    }
    set = isl_set_fix_val(set, isl_dim_param, static_cast<unsigned>(i),
                          isl_val_int_from_si(isl.ctx, static_cast<long>(v)));
  }
  ProcessSet ps;
  if (dims == 0 || dims > kMaxDims) {
    isl_set_free(set);
    throw InstantiationError("process sets have 1 to " + std::to_string(kMaxDims) + " coordinates");
  }
  ps.dims_ = dims;
  const isl_bool empty = isl_set_is_empty(set);
  if (empty == isl_bool_true) {
    isl_set_free(set);
    throw InstantiationError("the process set is empty for this binding");
  }
  if (isl.over_budget()) {
    isl_set_free(set);
    throw InstantiationError("isl gave up on the process set after " +
                             std::to_string(isl_ctx_get_max_operations(isl.ctx)) +
                             " operations (raise the limit with --limit isl-operations=N)");
  }
  for (std::size_t d = 0; d < dims; ++d) {
    bool ok_lo = false, ok_hi = false;
    std::int64_t lo = val_to_int(isl_set_dim_min_val(isl_set_copy(set), static_cast<int>(d)), ok_lo);
    std::int64_t hi = val_to_int(isl_set_dim_max_val(isl_set_copy(set), static_cast<int>(d)), ok_hi);
    if (!ok_lo || !ok_hi) {
      isl_set_free(set);
      throw InstantiationError("the process set is unbounded for this binding");
    }
    ps.lo_[d] = static_cast<double>(lo);
    ps.extent_[d] = static_cast<double>(hi - lo + 1);
  }
  double count = 1;
  for (std::size_t d = dims; d-- > 0;) {
    ps.stride_[d] = static_cast<std::int64_t>(count);
    count *= ps.extent_[d];
  }
  ps.box_ = isl_set_is_box(set) == isl_bool_true;
  if (ps.box_) {
    if (count > static_cast<double>(kMaxRanks)) {
      isl_set_free(set);
      throw InstantiationError("the process set has " + psl::Value::of_number(count).str() +
                               " processes for this binding; at most 2^31 - 1 are supported");
    }
    ps.size_ = static_cast<std::uint32_t>(count);
  } else {
    // Enumerate once; ranks follow the lexicographic order of the points.
    struct Collect {
      ProcessSet* ps;
      std::size_t dims;
    } collect{&ps, dims};
    if (count > 2.7e8) {
      isl_set_free(set);
      throw InstantiationError("non-rectangular process sets are limited to 2^28 points in their bounding box");
    }
    try {
      require_memory(static_cast<std::uint64_t>(count) * 16, "enumerating a process set with a bounding box of " +
                                                                 psl::Value::of_number(count).str() + " points");
    } catch (...) {
      isl_set_free(set);
      throw;
    }
    // The enumeration's work is bounded by the box (above), not by isl's budget.
    isl_ctx_set_max_operations(isl.ctx, 0);
    isl_set_foreach_point(
        set,
        [](isl_point* p, void* user) -> isl_stat {
          auto* c = static_cast<Collect*>(user);
          std::int64_t flat = 0;
          for (std::size_t d = 0; d < c->dims; ++d) {
            bool ok = false;
            std::int64_t v = val_to_int(isl_point_get_coordinate_val(p, isl_dim_set, static_cast<int>(d)), ok);
            flat += (v - static_cast<std::int64_t>(c->ps->lo_[d])) * c->ps->stride_[d];
          }
          c->ps->points_.push_back(flat);
          isl_point_free(p);
          return isl_stat_ok;
        },
        &collect);
    std::sort(ps.points_.begin(), ps.points_.end());
    ps.size_ = static_cast<std::uint32_t>(ps.points_.size());
  }
  isl_set_free(set);
  return ps;
}

std::int64_t ProcessSet::rank_of_flat(std::int64_t flat) const {
  auto it = std::lower_bound(points_.begin(), points_.end(), flat);
  if (it == points_.end() || *it != flat) return -1;
  return it - points_.begin();
}

void ProcessSet::coords(std::uint32_t rank, double* out) const {
  std::int64_t flat = box_ ? rank : points_.at(rank);
  for (std::size_t d = 0; d < dims_; ++d) {
    out[d] = lo_[d] + static_cast<double>(flat / stride_[d]);
    flat %= stride_[d];
  }
}

// ------------------------------------------------------------- instantiation
std::vector<double> evaluate_model_values(const StaticTaskGraph& g, const ParameterBinding& binding) {
  for (const auto& [name, value] : binding)
    if (std::find(g.params.begin(), g.params.end(), name) == g.params.end()) {
      std::string known;
      for (const std::string& p : g.params) known += (known.empty() ? "" : ", ") + p;
      throw InstantiationError("model '" + g.model + "' has no parameter '" + name + "' (parameters: " + known + ")");
    }
  std::vector<double> values(g.slot_count(), 0.0);
  for (std::size_t i = 0; i < g.params.size(); ++i) {
    auto it = binding.find(g.params[i]);
    values[i] = it != binding.end() ? it->second : g.param_defaults[i].eval(values.data());
  }
  for (std::size_t i = 0; i < g.model_lets.size(); ++i) {
    double& v = values[g.params.size() + i];
    v = g.model_lets[i].eval(values.data());
    // A numeric let that is no number (a division by zero the binding
    // caused): named here, with the values it read, rather than as whatever
    // bound or size it makes infinite later. (The checker refuses the same at
    // the defaults.)
    if (!std::isfinite(v) && i < g.model_let_text.size() && !g.model_let_text[i].empty()) {
      std::string inputs;
      for (const ExprInstr& in : g.model_lets[i].code())
        if (in.op == ExprOp::Slot && in.slot < g.params.size() + i &&
            inputs.find(g.slot_names[in.slot] + " = ") == std::string::npos)
          inputs += (inputs.empty() ? " (" : ", ") + g.slot_names[in.slot] + " = " +
                    psl::Value::of_number(values[in.slot]).str();
      const std::string& at = g.model_let_location[i];
      throw InstantiationError((at.empty() ? "" : at + ": ") + "'" + g.slot_names[g.params.size() + i] +
                               "' = " + g.model_let_text[i] + " is " + (std::isnan(v) ? "not a number" : "infinite") +
                               " with this binding" + (inputs.empty() ? "" : inputs + ")") + "; a division by zero?");
    }
  }
  values.resize(g.model_slot_count());
  return values;
}

ModelSchedule::ModelSchedule(std::shared_ptr<const StaticTaskGraph> graph, const ParameterBinding& binding,
                             const InstantiateOptions& options)
    : graph_(std::move(graph)) {
  const StaticTaskGraph& g = *graph_;
  model_values_ = evaluate_model_values(g, binding);

  // Specialize: every model slot is known; the rest are rebased to start at 0.
  std::vector<std::optional<double>> known(g.slot_count());
  for (std::size_t i = 0; i < model_values_.size(); ++i) known[i] = model_values_[i];
  const std::int64_t base = g.model_slot_count();
  slots_per_rank_ = g.slot_count() - g.model_slot_count();
  auto fix = [&](const CompiledExpr& e) {
    CompiledExpr s = e.empty() ? e : e.specialize(known);
    s.shift_slots(-base);
    return s;
  };
  auto rebase = [&](std::uint32_t slot) { return static_cast<std::uint32_t>(slot >= base ? slot - base : 0); };
  // Lets whose value the binding fixes become known slots; their instructions
  // disappear and every later use folds (e.g. a task's work = cells * angles).
  // Each let has a slot of its own, so this is sound.
  std::vector<bool> dropped(g.code.size(), false);
  for (std::size_t pc = 0; pc < g.code.size(); ++pc) {
    const StgInstr& in = g.code[pc];
    if (in.op != StgOp::Let) continue;
    CompiledExpr v = in.value.specialize(known);
    if (v.is_constant()) {
      known[in.slot] = v.constant_value();
      dropped[pc] = true;
    }
  }
  std::vector<StgInstr> spec(g.code.size());
  for (std::size_t pc = 0; pc < g.code.size(); ++pc) {
    const StgInstr& in = g.code[pc];
    StgInstr& s = spec[pc];
    s = in;
    s.value = fix(in.value);
    s.last = fix(in.last);
    s.step = fix(in.step);
    s.size = fix(in.size);
    s.tag = fix(in.tag);
    s.peer_guard = fix(in.peer_guard);
    for (CompiledExpr& p : s.peer) p = fix(p);
    s.slot = rebase(in.slot);
    s.limit_slot = rebase(in.limit_slot);
    s.step_slot = rebase(in.step_slot);
  }
  // Loop bounds the binding fixes must be integers (mmo = mm / mmi with mmi = 4 is 1.5).
  for (const StgInstr& in : spec) {
    if (in.op != StgOp::LoopBegin) continue;
    for (const CompiledExpr* bound : {&in.value, &in.last, &in.step})
      if (bound->is_constant() && std::floor(bound->constant_value()) != bound->constant_value())
        throw InstantiationError("loop '" + in.text + "' has the bound " +
                                 psl::Value::of_number(bound->constant_value()).str() +
                                 " with this binding; loop bounds must be integers");
  }
  std::vector<std::vector<StgInstr>> inserted_before(g.code.size() + 1);
  hoist_peer_ranks(spec, dropped, inserted_before);
  // Rebuild: insertions, kept instructions, jump targets remapped (a jump to an
  // instruction lands on what was inserted before it).
  std::vector<std::uint32_t> new_pc(g.code.size() + 1, 0);
  for (std::size_t pc = 0, at = 0; pc <= g.code.size(); ++pc) {
    new_pc[pc] = static_cast<std::uint32_t>(at);
    at += inserted_before[pc].size();
    if (pc < g.code.size() && !dropped[pc]) ++at;
  }
  code_.reserve(g.code.size());
  for (std::size_t pc = 0; pc < g.code.size(); ++pc) {
    for (StgInstr& h : inserted_before[pc]) code_.push_back(std::move(h));
    if (dropped[pc]) continue;
    StgInstr s = std::move(spec[pc]);
    if (s.op == StgOp::LoopBegin || s.op == StgOp::LoopEnd || s.op == StgOp::Branch || s.op == StgOp::Jump)
      s.target = new_pc[s.target];
    code_.push_back(std::move(s));
  }

  std::vector<double> set_params;
  for (const std::string& p : g.process_set_params) {
    auto it = std::find(g.slot_names.begin(), g.slot_names.begin() + base, p);
    if (it == g.slot_names.begin() + base)
      throw InstantiationError("process set parameter '" + p + "' is not a model value");
    set_params.push_back(model_values_[static_cast<std::size_t>(it - g.slot_names.begin())]);
  }
  try {
    processes_ = ProcessSet::from_isl(g.process_set, g.process_set_params, set_params, g.process_dims.size());
  } catch (const InstantiationError& e) {
    // Located at the process set, with the values that made it so.
    std::string values;
    for (std::size_t i = 0; i < g.process_set_params.size(); ++i)
      values += (values.empty() ? " with " : ", ") + g.process_set_params[i] + " = " +
                psl::Value::of_number(set_params[i]).str();
    std::string text = (g.process_set_location.empty() ? "" : g.process_set_location + ": ") + e.what() + " (" +
                       g.process_set_source + values + ")";
    if (dynamic_cast<const ResourceError*>(&e)) throw ResourceError(text);
    throw InstantiationError(text);
  }

  ps_per_work_.assign(g.nodes.size(), options.ns_per_work * 1000.0);
  for (const auto& [node, ns] : options.ns_per_work_by_node)
    if (node < ps_per_work_.size()) ps_per_work_[node] = ns * 1000.0;
  for (std::size_t i = 0; i < ps_per_work_.size(); ++i)
    if (!(ps_per_work_[i] >= 0 && ps_per_work_[i] <= kMaxOperationPs))
      fail(static_cast<std::uint32_t>(i), "the time per unit of work is " +
                                              psl::Value::of_number(ps_per_work_[i] / 1000.0, psl::kTime).str() +
                                              "; it must be a time >= 0");
  const InstantiationLimits& limits = default_instantiation_limits();
  max_operations_ = limits.max_operations;
  max_loop_iterations_ = limits.max_loop_iterations;
  algorithm_.resize(g.nodes.size());
  node_info_.resize(g.nodes.size());
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    const StaticNode& n = g.nodes[i];
    algorithm_[i] = n.algorithm;
    auto it = options.algorithms.find(n.collective);
    if (n.kind == StaticNode::Kind::Collective && it != options.algorithms.end()) algorithm_[i] = it->second;
    node_info_[i].label =
        n.kind == StaticNode::Kind::Collective ? n.label + "/" + collective_algorithm_name(algorithm_[i]) : n.label;
    node_info_[i].location = n.location;
  }
  check_constants();
  // Before allocating: a rank's cursor, its first dependency, its slots.
  const std::uint64_t per_rank = sizeof(Cursor) + 48 + std::uint64_t{slots_per_rank_} * sizeof(double);
  require_memory(per_rank * processes_.size(), "instantiating " + std::to_string(processes_.size()) +
                                                   " processes of model " + g.model + " (" + format_bytes(per_rank) +
                                                   " each)");
  slots_.assign(static_cast<std::size_t>(processes_.size()) * slots_per_rank_, 0.0);
  cursors_.assign(processes_.size(), Cursor{});
}

// ------------------------------------------------------------------ checks
namespace {
std::string value_text(double v) {
  if (std::isnan(v)) return "not a number";
  if (std::isinf(v)) return v > 0 ? "infinite" : "-infinite";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.15g", v);
  return buf;
}
std::string quoted(const std::string& expression) { return expression.empty() ? "" : " '" + expression + "'"; }
}  // namespace

namespace {
// 0 <= v <= max and a whole number: two compares and a round trip through an
// integer register (no call to floor(), which the baseline x86-64 target does
// not inline).
inline bool whole_within(double v, double max) {  // max <= 2^53: an int64 round trip is exact
  return v >= 0 && v <= max && static_cast<double>(static_cast<std::int64_t>(v)) == v;
}
}  // namespace

// The fast paths are inline (pull() calls them per operation); reporting is cold.
inline std::uint64_t ModelSchedule::checked_bytes(std::uint32_t node, double bytes) const {
  if (whole_within(bytes, kMaxMessageBytes)) [[likely]]
    return static_cast<std::uint64_t>(static_cast<std::int64_t>(bytes));
  bad_value(node, Quantity::kBytes, bytes);
}

inline std::int32_t ModelSchedule::checked_tag(std::uint32_t node, double tag) const {
  if (whole_within(tag, kMaxTag)) [[likely]]
    return static_cast<std::int32_t>(tag);
  bad_value(node, Quantity::kTag, tag);
}

inline Picoseconds ModelSchedule::checked_duration(std::uint32_t node, double work) const {
  const double ps = work * ps_per_work_[node];
  if (work >= 0 && ps <= kMaxOperationPs) [[likely]]  // below 2^63: the signed conversion is one instruction
    return static_cast<Picoseconds>(static_cast<std::int64_t>(ps + 0.5));
  bad_value(node, Quantity::kWork, work);
}

void ModelSchedule::bad_value(std::uint32_t node, Quantity what, double v) const {
  const StaticNode& n = graph_->nodes[node];
  switch (what) {
    case Quantity::kBytes:
      fail(node, n.label + " size" + quoted(n.size) + " is " + value_text(v) +
                     " with this binding; a message size must be a whole number of bytes from 0 to 2^53 - 1");
    case Quantity::kTag:
      fail(node, n.label + " tag" + quoted(n.tag) + " is " + value_text(v) +
                     " with this binding; a tag must be a whole number from 0 to 2^31 - 1");
    case Quantity::kWork: break;
  }
  if (!(v >= 0) || !std::isfinite(v))
    fail(node, "task " + n.label + ": work" + quoted(n.work) + " is " + value_text(v) +
                   " with this binding; work must be a finite number >= 0");
  fail(node, "task " + n.label + ": work" + quoted(n.work) + " = " + value_text(v) + " takes " +
                 value_text(v * ps_per_work_[node] / 1e12) + " s at " + value_text(ps_per_work_[node] / 1000.0) +
                 " ns per unit of work; one operation may take at most 2^60 ps (about 13.3 days)");
}

inline void ModelSchedule::check_loop(const StgInstr& loop, double first, double last, double step) const {
  // Finite bounds, a positive step and not too many iterations: the common case in a few compares.
  if (step > 0 && std::isfinite(first) && std::isfinite(last) && std::isfinite(step) &&
      (last - first) / step < static_cast<double>(max_loop_iterations_)) [[likely]]
    return;
  bad_loop(loop, first, last, step);
}

void ModelSchedule::bad_loop(const StgInstr& loop, double first, double last, double step) const {
  const auto where = loop.location.empty() ? std::string() : loop.location + ": ";
  if (!std::isfinite(first) || !std::isfinite(last) || !std::isfinite(step))
    throw InstantiationError(where + "loop '" + loop.text + "' has the bounds " + value_text(first) + " .. " +
                             value_text(last) + " step " + value_text(step) +
                             " with this binding; loop bounds must be finite");
  if (!(step > 0))
    throw InstantiationError(where + "loop '" + loop.text + "' has the step " + value_text(step) +
                             " with this binding; the step must be > 0");
  const double iterations = last >= first ? std::floor((last - first) / step) + 1 : 0;
  if (iterations > static_cast<double>(max_loop_iterations_))
    throw InstantiationError(where + "loop '" + loop.text + "' would run " + value_text(iterations) +
                             " times with this binding; the limit is " + std::to_string(max_loop_iterations_) +
                             " iterations (raise it with --limit loop-iterations=N)");
}

void ModelSchedule::check_constants() const {
  // Whatever the binding already fixes is checked before any rank runs, so
  // an evaluation fails at once instead of part-way through.
  for (const StgInstr& in : code_) {
    switch (in.op) {
      case StgOp::Comm:
        if (in.size.is_constant()) checked_bytes(in.node, in.size.constant_value());
        if (!in.tag_any && in.peer_slot == UINT32_MAX && in.tag.is_constant())
          checked_tag(in.node, in.tag.constant_value());
        break;
      case StgOp::PeerRank:
        if (in.tag.is_constant()) checked_tag(in.node, in.tag.constant_value());
        break;
      case StgOp::Collective:
        if (in.size.is_constant()) checked_bytes(in.node, in.size.constant_value());
        break;
      case StgOp::Compute:
        if (in.value.is_constant()) checked_duration(in.node, in.value.constant_value());
        break;
      case StgOp::LoopBegin:
        if (in.value.is_constant() && in.last.is_constant() && in.step.is_constant())
          check_loop(in, in.value.constant_value(), in.last.constant_value(), in.step.constant_value());
        break;
      default: break;
    }
  }
}

namespace {
void collect_reads(const CompiledExpr& e, std::vector<std::uint32_t>& out) {
  for (const ExprInstr& i : e.code())
    if (i.op == ExprOp::Slot) out.push_back(i.slot);
}
}  // namespace

void ModelSchedule::hoist_peer_ranks(std::vector<StgInstr>& code, const std::vector<bool>& dropped,
                                     std::vector<std::vector<StgInstr>>& inserted_before) {
  // Loops as [begin, end] pc ranges, and the slots each one's body assigns.
  struct Loop {
    std::size_t begin, end;
    std::vector<std::uint32_t> assigns;
  };
  std::vector<Loop> loops;
  for (std::size_t pc = 0; pc < code.size(); ++pc)
    if (code[pc].op == StgOp::LoopBegin) {
      Loop l{pc, code[pc].target - 1, {}};
      for (std::size_t q = pc; q <= l.end; ++q) {
        const StgInstr& in = code[q];
        if (in.op == StgOp::LoopBegin) l.assigns.insert(l.assigns.end(), {in.slot, in.limit_slot, in.step_slot});
        if (in.op == StgOp::Let && !dropped[q]) l.assigns.push_back(in.slot);
      }
      loops.push_back(std::move(l));
    }
  for (std::size_t pc = 0; pc < code.size(); ++pc) {
    StgInstr& comm = code[pc];
    if (comm.op != StgOp::Comm || comm.peer.empty()) continue;
    std::vector<std::uint32_t> reads;
    for (const CompiledExpr& p : comm.peer) collect_reads(p, reads);
    collect_reads(comm.peer_guard, reads);
    collect_reads(comm.tag, reads);
    // Climb out of every enclosing loop (innermost first) that leaves the inputs alone.
    std::size_t hoist_to = pc;
    for (auto it = loops.rbegin(); it != loops.rend(); ++it) {
      if (!(it->begin < pc && pc < it->end) || it->begin >= hoist_to) continue;
      bool invariant = std::none_of(reads.begin(), reads.end(), [&](std::uint32_t r) {
        return std::find(it->assigns.begin(), it->assigns.end(), r) != it->assigns.end();
      });
      if (!invariant) break;
      hoist_to = it->begin;
    }
    if (hoist_to == pc) continue;
    StgInstr rank;
    rank.op = StgOp::PeerRank;
    rank.slot = slots_per_rank_;
    slots_per_rank_ += 2;  // rank, tag
    rank.peer = std::move(comm.peer);
    rank.peer_guard = std::move(comm.peer_guard);
    rank.tag = std::move(comm.tag);
    comm.peer.clear();
    comm.peer_slot = rank.slot;
    inserted_before[hoist_to].push_back(std::move(rank));
  }
}

void ModelSchedule::rewind() {
  std::fill(slots_.begin(), slots_.end(), 0.0);
  std::fill(cursors_.begin(), cursors_.end(), Cursor{});
  operations_ = 0;
}

void ModelSchedule::fail(std::uint32_t node, const std::string& message) const {
  const std::string& at = graph_->nodes[node].location;
  throw InstantiationError((at.empty() ? "" : at + ": ") + message);
}

void ModelSchedule::start(std::uint32_t rank, Cursor& c, double* slots) {
  c.started = true;
  double coords[16];
  processes_.coords(rank, coords);
  const std::int64_t base = graph_->model_slot_count();
  for (std::size_t d = 0; d < graph_->process_dims.size(); ++d) slots[graph_->process_dims[d] - base] = coords[d];
}

inline void ModelSchedule::emit(Cursor& c, const Operation& op, OpBuffer& out, bool nonblocking) {
  Operation& o = out.ops.emplace_back(op);
  o.first_dep = static_cast<std::uint32_t>(out.deps.size());
  o.dep_count = static_cast<std::uint32_t>(c.before.size());
  const std::uint64_t index = c.next_index++;
  if (o.dep_count == 1) {  // program order: the common case
    out.deps.push_back(c.before[0]);
  } else {
    out.deps.insert(out.deps.end(), c.before.begin(), c.before.end());
    c.before.resize(1);
  }
  c.before[0] = {index, nonblocking};  // the next operation waits for this one's start or end
  if (nonblocking) c.outstanding.push_back(index);
}

std::size_t ModelSchedule::pull(std::uint32_t rank, std::size_t max_ops, OpBuffer& out) {
  Cursor& c = cursors_[rank];
  if (c.finished) return 0;
  double* s = slots_.data() + static_cast<std::size_t>(rank) * slots_per_rank_;
  if (!c.started) start(rank, c, s);
  const std::size_t before = out.ops.size();
  const std::size_t limit = max_ops > SIZE_MAX - before ? SIZE_MAX : before + max_ops;
  // Room for a typical chunk up front (callers may ask for "everything").
  const std::size_t expected = std::min<std::size_t>(max_ops, 4096);
  out.ops.reserve(before + expected);
  out.deps.reserve(out.deps.size() + expected);
  const StgInstr* code = code_.data();
  while (out.ops.size() < limit) {
    const StgInstr& in = code[c.pc];
    switch (in.op) {
      case StgOp::Let:
        s[in.slot] = in.value.eval(s);
        ++c.pc;
        break;
      case StgOp::LoopBegin:
        s[in.slot] = in.value.eval(s);
        s[in.limit_slot] = in.last.eval(s);
        s[in.step_slot] = in.step.eval(s);
        check_loop(in, s[in.slot], s[in.limit_slot], s[in.step_slot]);
        c.pc = s[in.slot] <= s[in.limit_slot] ? c.pc + 1 : in.target;
        break;
      case StgOp::LoopEnd:
        s[in.slot] += s[in.step_slot];
        c.pc = s[in.slot] <= s[in.limit_slot] ? in.target : c.pc + 1;
        break;
      case StgOp::Branch: c.pc = in.value.eval(s) != 0 ? c.pc + 1 : in.target; break;
      case StgOp::Jump: c.pc = in.target; break;
      case StgOp::PeerRank: {
        ++c.pc;
        double coords[ProcessSet::kMaxDims];
        for (std::size_t k = 0; k < in.peer.size(); ++k) coords[k] = in.peer[k].eval(s);
        bool guarded_out = !in.peer_guard.empty() && in.peer_guard.eval(s) == 0;
        if (!guarded_out) check_peer(in, coords);
        s[in.slot] = guarded_out ? -1.0 : static_cast<double>(processes_.rank(coords));
        s[in.slot + 1] = in.tag_any ? 0 : checked_tag(in.node, in.tag.eval(s));
        break;
      }
      case StgOp::Comm: {
        ++c.pc;
        Operation op;
        op.kind = in.is_send ? OpKind::Send : OpKind::Recv;
        op.node = in.node;
        if (in.peer_slot != UINT32_MAX) {
          if (s[in.peer_slot] < 0) break;  // outside the process set: no message
          op.peer = static_cast<std::int32_t>(s[in.peer_slot]);
          op.tag = in.tag_any ? kAnyTag : static_cast<std::int32_t>(s[in.peer_slot + 1]);
          op.bytes = checked_bytes(in.node, in.size.eval(s));
          emit(c, op, out, in.nonblocking);
          break;
        }
        if (in.peer.empty()) {
          op.peer = kAnySource;
        } else {
          if (!in.peer_guard.empty() && in.peer_guard.eval(s) == 0) break;
          double coords[ProcessSet::kMaxDims];
          for (std::size_t k = 0; k < in.peer.size(); ++k) coords[k] = in.peer[k].eval(s);
          check_peer(in, coords);
          std::int64_t peer = processes_.rank(coords);
          if (peer < 0) break;  // the peer is outside the process set: the boundary, no message
          op.peer = static_cast<std::int32_t>(peer);
        }
        op.tag = in.tag_any ? kAnyTag : checked_tag(in.node, in.tag.eval(s));
        op.bytes = checked_bytes(in.node, in.size.eval(s));
        emit(c, op, out, in.nonblocking);
        break;
      }
      case StgOp::Compute: {
        ++c.pc;
        Operation op;
        op.kind = OpKind::Calc;
        op.node = in.node;
        op.duration = checked_duration(in.node, in.value.eval(s));
        emit(c, op, out, false);
        break;
      }
      case StgOp::Collective: {
        ++c.pc;
        const StaticNode& node = graph_->nodes[in.node];
        CollectiveCall call;
        call.op = node.collective;
        call.algorithm = algorithm_[in.node];
        call.procs = processes_.size();
        call.rank = rank;
        call.bytes = checked_bytes(in.node, in.size.eval(s));
        const double root = in.value.eval(s);
        if (!(root >= 0 && root < call.procs && root == std::floor(root))) [[unlikely]]
          fail(in.node, node.label + " root" + quoted(node.root) + " is " + value_text(root) +
                            " with this binding; the root must be a rank from 0 to " + std::to_string(call.procs - 1));
        call.root = static_cast<std::uint32_t>(root);
        call.tag = static_cast<std::int32_t>(c.collective_sequence++ & 0x7fffffff);
        call.node = in.node;
        std::size_t first = out.ops.size();
        std::vector<std::uint64_t> exits = append_collective(call, c.next_index, c.before, out);
        c.next_index += out.ops.size() - first;
        c.before.clear();
        for (std::uint64_t e : exits) c.before.push_back({e, false});
        break;
      }
      case StgOp::WaitAll:
        ++c.pc;
        for (std::uint64_t o : c.outstanding) c.before.push_back({o, false});
        c.outstanding.clear();
        break;
      case StgOp::End:
        c.finished = true;
        if (out.ops.size() > before) out.rank_done = true;
        count_operations(out.ops.size() - before);
        return out.ops.size() - before;
    }
  }
  count_operations(out.ops.size() - before);
  return out.ops.size() - before;
}

void ModelSchedule::count_operations(std::size_t produced) {
  operations_ += produced;
  if (operations_ > max_operations_) [[unlikely]]
    throw ResourceError("model " + graph_->model + " has more than " + std::to_string(max_operations_) +
                        " operations with this binding (every rank together); raise the limit with "
                        "--limit operations=N");
}

void ModelSchedule::check_peer(const StgInstr& in, const double* coords) const {
  for (std::size_t k = 0; k < in.peer.size(); ++k)
    if (!std::isfinite(coords[k])) [[unlikely]]
      fail(in.node, graph_->nodes[in.node].label + " peer coordinate " + std::to_string(k + 1) + " is " +
                        value_text(coords[k]) + " with this binding");
}

// ---------------------------------------------------------------- statistics
GraphStatistics collect_statistics(ScheduleSource& source) {
  GraphStatistics st;
  st.processes = source.ranks();
  OpBuffer buf;
  // A collective call's operations share (node, tag) and the tag is the
  // rank's call sequence number, so a rank's calls are the changes of
  // (node, tag) along its collective operations; every rank makes every call,
  // so the most any rank made is the count. Constant memory, however many.
  std::uint64_t most_calls = 0;
  for (std::uint32_t r = 0; r < source.ranks(); ++r) {
    std::uint64_t calls = 0, last_call = UINT64_MAX;
    for (;;) {
      buf.clear();
      if (source.pull(r, 8192, buf) == 0) break;
      for (const Operation& op : buf.ops) {
        ++st.operations;
        bool collective = (op.comm & 0x80000000u) != 0;
        if (op.kind == OpKind::Calc) {
          ++st.tasks;
          st.total_work_ps += static_cast<double>(op.duration);
        } else if (op.kind == OpKind::Send) {
          if (collective) {
            ++st.collective_messages;
            st.collective_bytes += op.bytes;
          } else {
            ++st.p2p_messages;
            st.p2p_bytes += op.bytes;
          }
        }
        if (collective) {
          const std::uint64_t call = (std::uint64_t{op.node} << 32) | static_cast<std::uint32_t>(op.tag);
          calls += call != last_call;
          last_call = call;
        }
      }
    }
    most_calls = std::max(most_calls, calls);
  }
  st.collectives = most_calls;
  return st;
}

}  // namespace poems::taskgraph
