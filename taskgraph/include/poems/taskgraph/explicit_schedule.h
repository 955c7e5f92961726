// Schedules held in memory: built op by op (GOAL import, tests, small
// graphs), or generated for one collective at any scale.
#pragma once

#include <memory>
#include <vector>

#include "poems/taskgraph/collectives.h"
#include "poems/taskgraph/node_table.h"
#include "poems/taskgraph/schedule.h"

namespace poems::taskgraph {

// Node descriptions kept elsewhere than in a NodeTable: a GOAL file read
// without holding its text describes a node by reading its line back
// (read_goal_file).
class NodeDescriber {
 public:
  virtual ~NodeDescriber() = default;
  virtual std::uint32_t count() const = 0;
  virtual NodeInfo info(std::uint32_t node) const = 0;
  virtual std::size_t memory_bytes() const = 0;
};

// Every rank's operations, materialized and encoded: a header byte and
// variable-length fields per operation, peers relative to the rank and
// dependencies relative to the operation (7.6 bytes an operation in
// Sweep3D, against 48 for an Operation and 16 per Dependency). A lazy reader
// comes back to a rank after many other ranks' pulls, so what it reads is
// out of cache: the fewer bytes, the fewer misses. Each rank's operations are
// one contiguous segment, set once. What an operation of its kind does not
// use is not kept: a Calc keeps its duration and cpu (no nic, peer, bytes,
// tag or comm); a Send or Recv no duration.
class ExplicitSchedule final : public ScheduleSource {
 public:
  explicit ExplicitSchedule(std::uint32_t ranks);

  // Sets rank `r`'s operations (dependency indices rank-local, as in a
  // stream). Each rank is set at most once; throws std::logic_error if `r`
  // already has operations, std::out_of_range if it is no rank,
  // std::invalid_argument for an operation it cannot encode (the rank then
  // stays unset).
  void set_rank(std::uint32_t r, const OpBuffer& ops);
  // Rank `r`'s operations, decoded (for tests and comparisons).
  OpBuffer operations(std::uint32_t r) const;
  std::uint64_t operation_count(std::uint32_t r) const { return segments_[r].ops; }
  std::uint64_t total_operations() const;
  // The highest CPU and NIC index any operation names (LogGOPSim gives
  // every process that many plus one).
  std::uint32_t max_cpu() const { return max_cpu_; }
  std::uint32_t max_nic() const { return max_nic_; }
  // Bytes of the encoded operations and of the node table.
  std::size_t encoded_bytes() const { return code_.size(); }
  std::size_t node_bytes() const { return describer_ ? describer_->memory_bytes() : nodes_.memory_bytes(); }
  // Bytes the schedule takes per rank before any operation is set.
  static constexpr std::size_t kBytesPerRank = 56;
  // Hands node descriptions to `d` instead of the node table.
  void set_node_describer(std::unique_ptr<NodeDescriber> d) { describer_ = std::move(d); }

  NodeTable& nodes() { return nodes_; }
  const NodeTable& nodes() const { return nodes_; }

  // Streams start over (a source is otherwise read once).
  void rewind();
  bool restart() override {
    rewind();
    return true;
  }

  std::uint32_t ranks() const override { return static_cast<std::uint32_t>(segments_.size()); }
  std::size_t pull(std::uint32_t rank, std::size_t max_ops, OpBuffer& out) override;
  std::uint32_t node_count() const override { return describer_ ? describer_->count() : nodes_.size(); }
  NodeInfo node_info(std::uint32_t node) const override {
    return describer_ ? describer_->info(node) : nodes_.info(node);
  }

 private:
  struct Segment {
    std::uint64_t begin = 0, end = 0;  // bytes of code_
    std::uint64_t ops = 0;
    bool set = false;
  };
  // Where a rank's stream stands: the next byte, the index of the next
  // operation (dependencies are relative to it) and the last node id (node
  // ids are coded as differences).
  struct Cursor {
    std::uint64_t at = 0;
    std::uint64_t op = 0;
    std::uint32_t node = 0;
  };
  // Appends rank `r`'s operations to code_ (set_rank undoes it if this throws).
  void encode(std::uint32_t r, const OpBuffer& ops);
  std::size_t decode(std::uint32_t rank, Cursor& c, std::size_t max_ops, OpBuffer& out) const;

  std::vector<std::uint8_t> code_;
  std::vector<Segment> segments_;
  std::vector<Cursor> cursor_;
  NodeTable nodes_;
  std::unique_ptr<NodeDescriber> describer_;
  std::uint32_t max_cpu_ = 0, max_nic_ = 0;
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
  std::uint32_t node_count() const override { return static_cast<std::uint32_t>(nodes_.size()); }
  NodeInfo node_info(std::uint32_t node) const override { return node_info_in(nodes_, node); }
  // Every round of the algorithms waits for the whole previous round.
  bool issues_in_order() const override { return true; }

 private:
  CollectiveCall call_;
  std::vector<std::uint32_t> next_;  // per rank: the first operation not yet handed over
  std::vector<NodeInfo> nodes_;
};

}  // namespace poems::taskgraph
