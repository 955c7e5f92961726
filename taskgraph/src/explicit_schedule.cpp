#include "poems/taskgraph/explicit_schedule.h"

#include <algorithm>

namespace poems::taskgraph {

std::uint64_t ExplicitSchedule::total_operations() const {
  std::uint64_t n = 0;
  for (const OpBuffer& b : ranks_) n += b.ops.size();
  return n;
}

std::size_t ExplicitSchedule::pull(std::uint32_t rank, std::size_t max_ops, OpBuffer& out) {
  const OpBuffer& src = ranks_[rank];
  std::size_t& at = cursor_[rank];
  std::size_t n = std::min(max_ops, src.ops.size() - at);
  for (std::size_t i = 0; i < n; ++i) {
    Operation op = src.ops[at + i];
    op.first_dep = static_cast<std::uint32_t>(out.deps.size());
    out.deps.insert(out.deps.end(), src.deps.begin() + src.ops[at + i].first_dep,
                    src.deps.begin() + src.ops[at + i].first_dep + op.dep_count);
    out.ops.push_back(op);
  }
  at += n;
  if (n > 0 && at == src.ops.size()) out.rank_done = true;
  if (n > 0 && at < src.ops.size()) {
    // A lazy reader comes back for this rank's next operations after many
    // other pulls, by which time a hardware prefetcher has lost the stream:
    // fetch them, and their dependencies, now.
    const std::size_t ahead = std::min<std::size_t>(std::max<std::size_t>(2 * n, 8), src.ops.size() - at);
    const char* ops = reinterpret_cast<const char*>(src.ops.data() + at);
    for (std::size_t b = 0; b < ahead * sizeof(Operation); b += 64) __builtin_prefetch(ops + b);
    const Operation& last = src.ops[at - 1];
    const std::size_t dep_at = last.first_dep + last.dep_count;
    const std::size_t dep_ahead = std::min<std::size_t>(2 * ahead, src.deps.size() - dep_at);
    const char* deps = reinterpret_cast<const char*>(src.deps.data() + dep_at);
    for (std::size_t b = 0; b < dep_ahead * sizeof(Dependency); b += 64) __builtin_prefetch(deps + b);
  }
  return n;
}

std::unique_ptr<ExplicitSchedule> materialize(ScheduleSource& source) {
  auto out = std::make_unique<ExplicitSchedule>(source.ranks());
  const auto& nodes = source.nodes();
  for (std::size_t i = 1; i < nodes.size(); ++i) out->add_node(nodes[i]);
  for (std::uint32_t r = 0; r < source.ranks(); ++r)
    while (source.pull(r, 4096, out->rank(r)) > 0) {
    }
  return out;
}

CollectiveSchedule::CollectiveSchedule(CollectiveCall call) : call_(call), next_(call.procs, 0) {
  nodes_.push_back(NodeInfo{});
  nodes_.push_back(
      NodeInfo{std::string(collective_op_name(call.op)) + "/" + collective_algorithm_name(call.algorithm), ""});
  call_.node = 1;
}

// Hands a rank's collective over in the chunks the reader asks for, so a
// lazy reader holds a few operations per rank, not its whole collective.
std::size_t CollectiveSchedule::pull(std::uint32_t rank, std::size_t max_ops, OpBuffer& out) {
  CollectiveCall c = call_;
  c.rank = rank;
  const std::size_t n = append_collective_range(c, next_[rank], max_ops, out);
  next_[rank] += static_cast<std::uint32_t>(n);
  // The emitter stops short only at the end of the rank's part.
  if (n > 0 && n < max_ops) out.rank_done = true;
  return n;
}

}  // namespace poems::taskgraph
