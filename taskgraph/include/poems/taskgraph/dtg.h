// The dynamic task graph: a static task graph instantiated for one parameter
// binding and traversed lazily. Each rank has a cursor (program counter and
// slot values) that yields its operations in program order with their
// dependencies; memory is O(ranks x slots), never O(total operations).
#pragma once

#include <array>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "poems/psl/frontend.h"
#include "poems/taskgraph/limits.h"
#include "poems/taskgraph/schedule.h"
#include "poems/taskgraph/stg.h"

namespace poems::taskgraph {

// Parameter values in base units (ns, bytes, plain numbers), by name.
using ParameterBinding = std::map<std::string, double>;

// The process set of a binding and its rank order (lexicographic in the
// coordinates). Box-shaped sets use arithmetic; other sets an enumeration.
class ProcessSet {
 public:
  static constexpr std::size_t kMaxDims = psl::kMaxProcessCoordinates;
  static ProcessSet from_isl(const std::string& isl_text, const std::vector<std::string>& params,
                             const std::vector<double>& param_values, std::size_t dims);
  std::uint32_t size() const { return size_; }
  std::size_t dims() const { return dims_; }
  bool is_box() const { return box_; }
  // Rank of a point, or -1 when the point is not in the set. Hot: one call per message.
  std::int64_t rank(const double* coords) const {
    std::int64_t flat = 0;
    for (std::size_t d = 0; d < dims_; ++d) {
      // Outside the bounding box (or not an integer): not a process.
      const double rel = coords[d] - lo_[d];
      if (!(rel >= 0 && rel < extent_[d])) return -1;
      const auto c = static_cast<std::int64_t>(rel);
      if (static_cast<double>(c) != rel) return -1;
      flat += c * stride_[d];
    }
    return box_ ? flat : rank_of_flat(flat);
  }
  void coords(std::uint32_t rank, double* out) const;

 private:
  std::int64_t rank_of_flat(std::int64_t flat) const;
  std::uint32_t size_ = 0;
  std::size_t dims_ = 0;
  bool box_ = true;
  std::array<double, kMaxDims> lo_{}, extent_{};
  std::array<std::int64_t, kMaxDims> stride_{};
  std::vector<std::int64_t> points_;  // non-box: row-major flattened coordinates, sorted
};

struct InstantiateOptions {
  // Compute time per unit of work (Wg), for every compute node unless
  // overridden per node (the processor model decides these; see TEDs).
  double ns_per_work = 1.0;
  std::map<std::uint32_t, double> ns_per_work_by_node;
  // Algorithms chosen for collectives, overriding the static choice.
  std::map<CollectiveOp, CollectiveAlgorithm> algorithms;
};

// The value of every model parameter and model let (in slot order) for a
// binding; unbound parameters take their defaults.
std::vector<double> evaluate_model_values(const StaticTaskGraph& graph, const ParameterBinding& binding);

class ModelSchedule final : public ScheduleSource {
 public:
  ModelSchedule(std::shared_ptr<const StaticTaskGraph> graph, const ParameterBinding& binding,
                const InstantiateOptions& options);

  std::uint32_t ranks() const override { return processes_.size(); }
  std::size_t pull(std::uint32_t rank, std::size_t max_ops, OpBuffer& out) override;
  std::uint32_t node_count() const override { return static_cast<std::uint32_t>(node_info_.size()); }
  NodeInfo node_info(std::uint32_t node) const override { return node_info_in(node_info_, node); }
  // Program order: each operation depends on the one before it (or, inside a
  // collective round, on the same operations as the one before it).
  bool issues_in_order() const override { return true; }

  const ProcessSet& processes() const { return processes_; }
  // The value every model parameter and model let took in this binding.
  const std::vector<double>& model_values() const { return model_values_; }
  // Restarts every rank from the beginning.
  void rewind();

 private:
  struct Cursor {
    std::uint32_t pc = 0;
    bool started = false;
    bool finished = false;
    std::uint32_t collective_sequence = 0;
    std::uint64_t next_index = 0;            // rank-local index of the next operation
    std::vector<Dependency> before;          // what the next operation depends on
    std::vector<std::uint64_t> outstanding;  // nonblocking operations not yet waited for
  };

  void start(std::uint32_t rank, Cursor& c, double* slots);
  // Moves each message's peer-rank computation out of the loops that do not change it.
  void hoist_peer_ranks(std::vector<StgInstr>& code, const std::vector<bool>& dropped,
                        std::vector<std::vector<StgInstr>>& inserted_before);
  void emit(Cursor& c, const Operation& op, OpBuffer& out, bool nonblocking);
  [[noreturn]] void fail(std::uint32_t node, const std::string& message) const;
  // The checks of docs/limits.md, where values become concrete; each throws a
  // located InstantiationError naming the PSL expression and its value.
  std::uint64_t checked_bytes(std::uint32_t node, double bytes) const;
  std::int32_t checked_tag(std::uint32_t node, double tag) const;
  Picoseconds checked_duration(std::uint32_t node, double work) const;
  void check_loop(const StgInstr& loop, double first, double last, double step) const;
  enum class Quantity { kBytes, kTag, kWork };
  [[noreturn, gnu::cold, gnu::noinline]] void bad_value(std::uint32_t node, Quantity what, double value) const;
  [[gnu::cold, gnu::noinline]] void bad_loop(const StgInstr& loop, double first, double last, double step) const;
  void check_constants() const;
  void check_peer(const StgInstr& in, const double* coords) const;  // finite coordinates
  void count_operations(std::size_t produced);                      // the operations budget

  std::shared_ptr<const StaticTaskGraph> graph_;
  std::vector<StgInstr> code_;  // specialized for the binding
  std::vector<double> model_values_;
  std::vector<double> ps_per_work_;             // per node
  std::vector<CollectiveAlgorithm> algorithm_;  // per node
  ProcessSet processes_;
  std::uint32_t slots_per_rank_ = 0;
  std::vector<double> slots_;  // ranks x slots_per_rank_
  std::vector<Cursor> cursors_;
  std::vector<NodeInfo> node_info_;
  std::uint64_t operations_ = 0;  // produced so far, every rank (the operations budget)
  std::uint64_t max_operations_ = 0;
  std::uint64_t max_loop_iterations_ = 0;
};

// Counts of a whole run (every rank traversed once).
struct GraphStatistics {
  std::uint64_t processes = 0;
  std::uint64_t tasks = 0;         // compute operations
  std::uint64_t p2p_messages = 0;  // application sends
  std::uint64_t p2p_bytes = 0;
  std::uint64_t collectives = 0;  // collective calls (per communicator, not per rank)
  std::uint64_t collective_messages = 0;
  std::uint64_t collective_bytes = 0;
  std::uint64_t operations = 0;  // every operation of every rank
  double total_work_ps = 0;      // sum of compute durations
};
GraphStatistics collect_statistics(ScheduleSource& source);

}  // namespace poems::taskgraph
