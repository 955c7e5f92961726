// Helpers shared by the simulator tests: GOAL text in, results out.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "poems/base/diagnostics.h"
#include "poems/sim/simulator.h"
#include "poems/taskgraph/collectives.h"
#include "poems/taskgraph/explicit_schedule.h"
#include "poems/taskgraph/goal.h"

namespace poems::sim::testing {

inline constexpr Picoseconds ns(std::uint64_t v) { return v * 1000; }

// LogGOPS parameters in ns and ns/B (per-byte values as fs/B to stay exact).
inline LogGOPS params(std::uint64_t L, std::uint64_t o, std::uint64_t g, FemtosecondsPerByte G_fs,
                      FemtosecondsPerByte O_fs, std::uint64_t S = 65535) {
  LogGOPS p;
  p.L = ns(L);
  p.o = ns(o);
  p.g = ns(g);
  p.G = G_fs;
  p.O = O_fs;
  p.S = S;
  return p;
}
inline constexpr FemtosecondsPerByte ns_per_byte(std::uint64_t v) { return v * 1'000'000; }

inline std::unique_ptr<taskgraph::ExplicitSchedule> goal(const std::string& text) {
  psl::SourceManager sources;
  psl::FileId f = sources.add("test.goal", text);
  psl::DiagnosticEngine diags(sources);
  auto s = taskgraph::parse_goal(sources, f, diags);
  if (!s) {
    std::string all;
    for (const auto& d : diags.all()) all += diags.render(d);
    ADD_FAILURE() << all;
  }
  return s;
}

inline SimulationResult run_goal(const std::string& text, const LogGOPS& p, std::uint32_t cpus = 1,
                                 std::uint32_t nics = 1) {
  auto s = goal(text);
  SimulationOptions o;
  o.params = p;
  o.cpus = cpus;
  o.nics = nics;
  return s ? simulate(*s, o) : SimulationResult{};
}

// One collective with each rank's operations handed over in one pull
// (append_collective), as taskgraph::CollectiveSchedule read it before it
// honoured max_ops: the reference for the chunked reading.
class WholeCollectiveSource final : public taskgraph::ScheduleSource {
 public:
  explicit WholeCollectiveSource(taskgraph::CollectiveCall call) : call_(call), done_(call.procs, false) {
    nodes_.push_back(taskgraph::NodeInfo{});
    nodes_.push_back(taskgraph::NodeInfo{std::string(taskgraph::collective_op_name(call.op)) + "/" +
                                             taskgraph::collective_algorithm_name(call.algorithm),
                                         ""});
    call_.node = 1;
  }
  std::uint32_t ranks() const override { return call_.procs; }
  std::size_t pull(std::uint32_t rank, std::size_t, taskgraph::OpBuffer& out) override {
    if (done_[rank]) return 0;
    done_[rank] = true;
    taskgraph::CollectiveCall c = call_;
    c.rank = rank;
    const std::size_t before = out.ops.size();
    taskgraph::append_collective(c, 0, {}, out);
    return out.ops.size() - before;
  }
  std::uint32_t node_count() const override { return static_cast<std::uint32_t>(nodes_.size()); }
  taskgraph::NodeInfo node_info(std::uint32_t node) const override { return taskgraph::node_info_in(nodes_, node); }
  bool issues_in_order() const override { return true; }

 private:
  taskgraph::CollectiveCall call_;
  std::vector<bool> done_;
  std::vector<taskgraph::NodeInfo> nodes_;
};

inline SimulationResult run_collective(taskgraph::CollectiveOp op, taskgraph::CollectiveAlgorithm a,
                                       std::uint32_t procs, std::uint64_t bytes, const LogGOPS& p) {
  taskgraph::CollectiveCall call;
  call.op = op;
  call.algorithm = a;
  call.procs = procs;
  call.bytes = bytes;
  taskgraph::CollectiveSchedule s(call);
  SimulationOptions o;
  o.params = p;
  return simulate(s, o);
}

// A schedule in memory handed over through the ScheduleSource interface
// only, so the engine reads it through OpBuffers (the path of every source
// other than an ExplicitSchedule, which it decodes straight into its slots).
class Opaque final : public taskgraph::ScheduleSource {
 public:
  explicit Opaque(taskgraph::ExplicitSchedule& s) : s_(s) {}
  std::uint32_t ranks() const override { return s_.ranks(); }
  std::size_t pull(std::uint32_t r, std::size_t n, taskgraph::OpBuffer& out) override { return s_.pull(r, n, out); }
  std::uint32_t node_count() const override { return s_.node_count(); }
  taskgraph::NodeInfo node_info(std::uint32_t node) const override { return s_.node_info(node); }
  bool restart() override { return s_.restart(); }

 private:
  taskgraph::ExplicitSchedule& s_;
};

inline std::vector<Picoseconds> finishes(const SimulationResult& r) {
  std::vector<Picoseconds> out;
  for (const RankResult& rr : r.per_rank) out.push_back(rr.finish);
  return out;
}

}  // namespace poems::sim::testing
