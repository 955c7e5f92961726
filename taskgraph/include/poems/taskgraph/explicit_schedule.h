// Schedules held in memory: built op by op (GOAL import, tests, small
// graphs), or generated for one collective at any scale.
#pragma once

#include <memory>
#include <vector>

#include "poems/taskgraph/collectives.h"
#include "poems/taskgraph/schedule.h"

namespace poems::taskgraph {

// Every rank's operations, materialized. Dependencies in each rank's buffer
// are rank-local operation indices, as in the stream.
class ExplicitSchedule final : public ScheduleSource {
 public:
  explicit ExplicitSchedule(std::uint32_t ranks) : ranks_(ranks), cursor_(ranks, 0) {}

  OpBuffer& rank(std::uint32_t r) { return ranks_[r]; }
  const OpBuffer& rank(std::uint32_t r) const { return ranks_[r]; }
  // Registers a static node; returns its id for Operation::node.
  std::uint32_t add_node(NodeInfo info) {
    nodes_.push_back(std::move(info));
    return static_cast<std::uint32_t>(nodes_.size() - 1);
  }
  // Streams start over (a source is otherwise read once).
  void rewind() { std::fill(cursor_.begin(), cursor_.end(), 0); }
  bool restart() override {
    rewind();
    return true;
  }
  std::uint64_t total_operations() const;

  std::uint32_t ranks() const override { return static_cast<std::uint32_t>(ranks_.size()); }
  std::size_t pull(std::uint32_t rank, std::size_t max_ops, OpBuffer& out) override;
  const std::vector<NodeInfo>& nodes() const override { return nodes_; }

 private:
  std::vector<OpBuffer> ranks_;
  std::vector<std::size_t> cursor_;
  std::vector<NodeInfo> nodes_{NodeInfo{}};
};

// Reads a whole source into memory (for small graphs: export, tests).
std::unique_ptr<ExplicitSchedule> materialize(ScheduleSource& source);

// One collective on `call.procs` ranks, generated per rank on demand: the
// memory of a run is that of the evaluator, not of the schedule.
class CollectiveSchedule final : public ScheduleSource {
 public:
  explicit CollectiveSchedule(CollectiveCall call);
  std::uint32_t ranks() const override { return call_.procs; }
  std::size_t pull(std::uint32_t rank, std::size_t max_ops, OpBuffer& out) override;
  const std::vector<NodeInfo>& nodes() const override { return nodes_; }
  // Every round of the algorithms waits for the whole previous round.
  bool issues_in_order() const override { return true; }

 private:
  CollectiveCall call_;
  std::vector<std::uint32_t> next_;  // per rank: the first operation not yet handed over
  std::vector<NodeInfo> nodes_;
};

}  // namespace poems::taskgraph
