// Schedules held in memory: built op by op (GOAL import, tests, small
// graphs), or generated for one collective at any scale.
#pragma once

#include <memory>
#include <vector>

#include "poems/taskgraph/collectives.h"
#include "poems/taskgraph/node_table.h"
#include "poems/taskgraph/schedule.h"

namespace poems::taskgraph {

// Every rank's operations, materialized and encoded: a header byte and
// variable-length fields per operation, peers relative to the rank and
// dependencies relative to the operation (7.6 bytes an operation in
// the wavefront example, against 48 for an Operation and 16 per Dependency). A lazy reader
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
  // Bytes of the encoded operations and of the node table.
  std::size_t encoded_bytes() const { return code_.size(); }
  std::size_t node_bytes() const { return nodes_.memory_bytes(); }

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
  std::uint32_t node_count() const override { return nodes_.size(); }
  NodeInfo node_info(std::uint32_t node) const override { return nodes_.info(node); }

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
