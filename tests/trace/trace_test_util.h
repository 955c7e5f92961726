// Helpers for the trace tests: traces built by hand, GOAL text in, finish
// times out.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "poems/psl/diagnostics.h"
#include "poems/sim/simulator.h"
#include "poems/taskgraph/goal.h"
#include "poems/trace/trace.h"

namespace poems::trace::testing {

inline constexpr Picoseconds ns(std::uint64_t v) { return v * 1000; }

// A trace written call by call: each rank keeps a clock; compute() advances
// it, a call takes 1 ns.
class TraceBuilder {
 public:
  explicit TraceBuilder(std::uint32_t ranks) {
    t.ranks.resize(ranks);
    Communicator world;
    world.name = "MPI_COMM_WORLD";
    for (std::uint32_t r = 0; r < ranks; ++r) world.members.push_back(r);
    t.comms.push_back(world);
    t.timer_resolution = 1000000000;
    clock_.assign(ranks, 0);
  }
  std::uint32_t comm(std::vector<std::uint32_t> members) {
    Communicator c;
    c.name = "comm " + std::to_string(t.comms.size());
    c.members = std::move(members);
    t.comms.push_back(c);
    return static_cast<std::uint32_t>(t.comms.size() - 1);
  }
  void compute(std::uint32_t r, Picoseconds d) {
    Step s;
    s.kind = StepKind::Compute;
    s.value = d;
    t.ranks[r].steps.push_back(s);
    clock_[r] += d;
  }
  // Starts a call of `region` on rank r; the steps until end() belong to it.
  TraceBuilder& call(std::uint32_t r, const std::string& region) {
    CallRecord c;
    c.region = region_id(region);
    c.enter = clock_[r];
    c.first_step = static_cast<std::uint32_t>(t.ranks[r].steps.size());
    t.ranks[r].calls.push_back(c);
    rank_ = r;
    return *this;
  }
  TraceBuilder& send(std::int32_t peer, std::int32_t tag, std::uint64_t bytes, std::uint32_t comm = 0) {
    return p2p(StepKind::Send, peer, tag, bytes, comm, kNone);
  }
  TraceBuilder& recv(std::int32_t peer, std::int32_t tag, std::uint64_t bytes, std::uint32_t comm = 0) {
    return p2p(StepKind::Recv, peer, tag, bytes, comm, kNone);
  }
  // Nonblocking: `slot` names the request for complete().
  TraceBuilder& isend(std::int32_t peer, std::int32_t tag, std::uint64_t bytes, std::uint32_t slot,
                      std::uint32_t comm = 0) {
    return p2p(StepKind::Send, peer, tag, bytes, comm, slot);
  }
  TraceBuilder& irecv(std::int32_t peer, std::int32_t tag, std::uint64_t bytes, std::uint32_t slot,
                      std::uint32_t comm = 0) {
    return p2p(StepKind::Recv, peer, tag, bytes, comm, slot);
  }
  TraceBuilder& complete(std::uint32_t slot) {
    Step s;
    s.kind = StepKind::Complete;
    s.request = slot;
    return add(s);
  }
  TraceBuilder& collective(Collective op, std::uint64_t block, std::int32_t root = -1, std::uint32_t comm = 0) {
    Step s;
    s.kind = StepKind::Collective;
    s.collective = op;
    s.value = block;
    s.peer = root;
    s.comm = comm;
    return add(s);
  }
  void end() {
    Rank& rank = t.ranks[rank_];
    clock_[rank_] += 1000;
    rank.calls.back().leave = clock_[rank_];
    rank.calls.back().end_step = static_cast<std::uint32_t>(rank.steps.size());
    rank.begin = 0;
    rank.end = clock_[rank_];
  }
  Trace finish() {
    for (std::uint32_t r = 0; r < t.ranks.size(); ++r) t.ranks[r].end = clock_[r];
    link(t);
    return std::move(t);
  }
  Trace t;

 private:
  std::uint32_t region_id(const std::string& name) {
    auto it = regions_.find(name);
    if (it != regions_.end()) return it->second;
    t.regions.push_back(name);
    return regions_[name] = static_cast<std::uint32_t>(t.regions.size() - 1);
  }
  TraceBuilder& p2p(StepKind kind, std::int32_t peer, std::int32_t tag, std::uint64_t bytes, std::uint32_t comm,
                    std::uint32_t slot) {
    Step s;
    s.kind = kind;
    s.peer = peer;
    s.tag = tag;
    s.value = bytes;
    s.comm = comm;
    if (slot != kNone) {
      s.nonblocking = true;
      s.request = slot;
      Rank& rank = t.ranks[rank_];
      rank.request_slots = std::max(rank.request_slots, slot + 1);
    }
    return add(s);
  }
  TraceBuilder& add(Step s) {
    s.call = static_cast<std::uint32_t>(t.ranks[rank_].calls.size() - 1);
    t.ranks[rank_].steps.push_back(s);
    return *this;
  }
  std::vector<Picoseconds> clock_;
  std::map<std::string, std::uint32_t> regions_;
  std::uint32_t rank_ = 0;
};

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

inline sim::SimulationOptions machine(std::uint64_t L_ns, std::uint64_t o_ns, std::uint64_t g_ns,
                                      std::uint64_t G_fs_per_byte, std::uint64_t S) {
  sim::SimulationOptions m;
  m.params.L = ns(L_ns);
  m.params.o = ns(o_ns);
  m.params.g = ns(g_ns);
  m.params.G = G_fs_per_byte;
  m.params.O = 0;
  m.params.S = S;
  return m;
}

inline std::vector<Picoseconds> finish_times(taskgraph::ScheduleSource& s, const sim::SimulationOptions& m) {
  const sim::SimulationResult r = sim::simulate(s, m);
  EXPECT_TRUE(r.completed);
  std::vector<Picoseconds> out;
  for (const auto& rank : r.per_rank) out.push_back(rank.finish);
  return out;
}

}  // namespace poems::trace::testing
