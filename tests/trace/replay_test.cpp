// The replay rules (docs/trace.md) on traces built by hand, each checked
// against the same communication written as GOAL.
#include <gtest/gtest.h>

#include <sstream>

#include "poems/taskgraph/explicit_schedule.h"
#include "poems/trace/replay.h"
#include "trace_test_util.h"

namespace poems::trace {
namespace {

using testing::finish_times;
using testing::goal;
using testing::machine;
using testing::ns;
using testing::TraceBuilder;

const sim::SimulationOptions kOdin = machine(5300, 2300, 2000, 2500000, 32768);  // the LogGOPSim paper's Odin, O = 0
const sim::SimulationOptions kRendezvous = machine(2500, 1500, 1000, 6000000, 100);  // every message above 100 B
const sim::SimulationOptions kFast = machine(10, 5, 5, 0, 65535);                    // communication almost free

void expect_same(const Trace& t, const ReplayOptions& o, const std::string& expected_goal) {
  auto expected = goal(expected_goal);
  ASSERT_TRUE(expected);
  for (const sim::SimulationOptions& m : {kOdin, kRendezvous}) {
    TraceSchedule replay(t, o);
    expected->rewind();
    EXPECT_EQ(finish_times(replay, m), finish_times(*expected, m));
  }
}

// Two ranks: computation, a blocking exchange whose receive was a wildcard
// (the trace holds the source and tag it matched).
Trace blocking_exchange() {
  TraceBuilder b(2);
  b.compute(0, ns(1000));
  b.call(0, "MPI_Send").send(1, 3, 100).end();
  b.call(0, "MPI_Recv").recv(1, 4, 5000).end();
  b.call(1, "MPI_Recv").recv(0, 3, 100).end();
  b.compute(1, ns(500));
  b.call(1, "MPI_Send").send(0, 4, 5000).end();
  return b.finish();
}

TEST(Replay, ComputationBetweenCallsAndBlockingMessages) {
  const Trace t = blocking_exchange();
  EXPECT_EQ(t.messages.size(), 2u);
  expect_same(t, {}, R"(num_ranks 2
    rank 0 { c: calc 1000; s: send 100b to 1 tag 3; r: recv 5000b from 1 tag 4; s requires c; r requires s }
    rank 1 { r: recv 100b from 0 tag 3; c: calc 500; s: send 5000b to 0 tag 4; c requires r; s requires c })");
}

TEST(Replay, ComputeScaleMultipliesEveryComputationAndRoundsToThePicosecond) {
  const Trace t = blocking_exchange();
  ReplayOptions o;
  o.compute_scale = 2.5;
  expect_same(t, o, R"(num_ranks 2
    rank 0 { c: calc 2500; s: send 100b to 1 tag 3; r: recv 5000b from 1 tag 4; s requires c; r requires s }
    rank 1 { r: recv 100b from 0 tag 3; c: calc 1250; s: send 5000b to 0 tag 4; c requires r; s requires c })");
  TraceBuilder b(1);
  b.compute(0, 1001);  // ps
  Trace one = b.finish();
  ReplayOptions half;
  half.compute_scale = 0.5;
  TraceSchedule s(one, half);
  taskgraph::OpBuffer out;
  ASSERT_EQ(s.pull(0, 10, out), 1u);
  EXPECT_EQ(out.ops[0].duration, 501u);  // 500.5 rounded half away from zero
  ReplayOptions none;
  none.compute_scale = 0;
  TraceSchedule empty(one, none);
  out.clear();
  EXPECT_EQ(empty.pull(0, 10, out), 0u);  // a computation scaled to nothing is no operation
}

TEST(Replay, RejectsANegativeOrInfiniteComputeScale) {
  const Trace t = blocking_exchange();
  ReplayOptions o;
  o.compute_scale = -1;
  EXPECT_THROW(TraceSchedule(t, o), TraceError);
  o.compute_scale = std::numeric_limits<double>::infinity();
  EXPECT_THROW(TraceSchedule(t, o), TraceError);
}

// Isend/Irecv start at their call; computation overlaps them; the Waitall
// makes the next operation wait for both.
TEST(Replay, NonblockingOperationsWithTheirWaits) {
  TraceBuilder b(2);
  for (std::uint32_t r = 0; r < 2; ++r) {
    const auto other = static_cast<std::int32_t>(1 - r);
    b.call(r, "MPI_Irecv").irecv(other, 1, 40000, 0).end();
    b.call(r, "MPI_Isend").isend(other, 1, 40000, 1).end();
    b.compute(r, ns(3000));
    b.call(r, "MPI_Waitall").complete(0).complete(1).end();
    b.compute(r, ns(100));
  }
  const Trace t = b.finish();
  std::string g = "num_ranks 2\n";
  for (int r = 0; r < 2; ++r)
    g +=
        "rank " + std::to_string(r) + " { r: recv 40000b from " + std::to_string(1 - r) + " tag 1; s: send 40000b to " +
        std::to_string(1 - r) +
        " tag 1; s irequires r; c: calc 3000; c irequires s; d: calc 100; d requires r; d requires s; d requires c }\n";
  expect_same(t, {}, g);
}

// MPI_Sendrecv: one call, both parts start at once, the next call waits for both.
TEST(Replay, OperationsOfOneCallStartTogether) {
  TraceBuilder b(2);
  for (std::uint32_t r = 0; r < 2; ++r) {
    const auto other = static_cast<std::int32_t>(1 - r);
    b.call(r, "MPI_Sendrecv").send(other, 0, 50000).recv(other, 0, 50000).end();
    b.compute(r, ns(10));
  }
  const Trace t = b.finish();
  // As two blocking calls this would deadlock under rendezvous.
  expect_same(t, {}, R"(num_ranks 2
    rank 0 { s: send 50000b to 1; r: recv 50000b from 1; r irequires s; c: calc 10; c requires s; c requires r }
    rank 1 { s: send 50000b to 0; r: recv 50000b from 0; r irequires s; c: calc 10; c requires s; c requires r })");
}

// A collective on a communicator whose ranks are world ranks 3 and 1, in
// that order: the library's peers are mapped back to world ranks, and the
// root (rank 0 of the communicator) is world rank 3.
TEST(Replay, CollectivesOnASubCommunicatorUseItsRanks) {
  TraceBuilder b(4);
  const std::uint32_t odd = b.comm({3, 1});
  for (std::uint32_t r : {1u, 3u}) {
    b.call(r, "MPI_Bcast").collective(Collective::Bcast, 2000, 0, odd).end();
    b.call(r, "MPI_Allreduce").collective(Collective::Allreduce, 8, -1, odd).end();
  }
  const Trace t = b.finish();
  expect_same(t, {}, R"(num_ranks 4
    rank 0 { }
    rank 1 { b: recv 2000b from 3 comm 5; s: send 8b to 3 comm 6; r: recv 8b from 3 comm 6;
             s requires b; r requires b }
    rank 2 { }
    rank 3 { b: send 2000b to 1 comm 5; s: send 8b to 1 comm 6; r: recv 8b from 1 comm 6;
             s requires b; r requires b })");
}

TEST(Replay, TheModelledMpisAlgorithmsLowerTheCollectives) {
  TraceBuilder b(4);
  for (std::uint32_t r = 0; r < 4; ++r) b.call(r, "MPI_Allreduce").collective(Collective::Allreduce, 4096).end();
  const Trace t = b.finish();
  ReplayOptions ring;
  std::string error;
  ASSERT_TRUE(parse_algorithm_choice("allreduce=ring", ring, error)) << error;
  const sim::SimulationResult by_default = replay(t, kOdin, {});
  const sim::SimulationResult by_ring = replay(t, kOdin, ring);
  EXPECT_EQ(by_default.messages, 8u);  // recursive doubling: 2 rounds x 4 ranks
  EXPECT_EQ(by_ring.messages, 24u);    // ring: 2 (P - 1) rounds x 4 ranks
  ReplayOptions bad;
  EXPECT_FALSE(parse_algorithm_choice("allreduce=pairwise", bad, error));
  EXPECT_NE(error.find("recursive_doubling, dissemination, ring, binomial"), std::string::npos) << error;
  EXPECT_FALSE(parse_algorithm_choice("reduceall=ring", bad, error));
  EXPECT_NE(error.find("OPERATION=ALGORITHM"), std::string::npos) << error;
}

TEST(Replay, ScansAreAChainAndReduceScatterAReduceThenAScatter) {
  TraceBuilder b(4);
  for (std::uint32_t r = 0; r < 4; ++r) {
    b.call(r, "MPI_Scan").collective(Collective::Scan, 64).end();
    b.call(r, "MPI_Reduce_scatter_block").collective(Collective::ReduceScatterBlock, 100).end();
  }
  const Trace t = b.finish();
  const sim::SimulationResult r = replay(t, kOdin, {});
  ASSERT_TRUE(r.completed);
  // Scan: 3 links; reduce (binomial, 3 messages of 400 B) and scatter (linear, 3 of 100 B).
  EXPECT_EQ(r.messages, 3u + 3u + 3u);
  // Rank 3 of the chain waits for the prefix through ranks 0, 1, 2.
  EXPECT_GT(r.per_rank[3].finish, r.per_rank[1].finish);
}

TEST(Replay, LinkMatchesInProgramOrderAndDropsWhatHasNoPartner) {
  TraceBuilder b(2);
  b.call(0, "MPI_Send").send(1, 7, 10).end();
  b.call(0, "MPI_Send").send(1, 7, 20).end();
  b.call(0, "MPI_Send").send(1, 8, 30).end();  // never received
  b.call(1, "MPI_Recv").recv(0, 7, 10).end();
  b.call(1, "MPI_Recv").recv(0, 7, 20).end();
  const Trace t = b.finish();
  ASSERT_EQ(t.messages.size(), 2u);
  EXPECT_EQ(t.ranks[0].steps[t.messages[0].send_step].value, 10u);
  EXPECT_EQ(t.ranks[1].steps[t.messages[0].recv_step].value, 10u);
  EXPECT_EQ(t.ranks[0].steps[t.messages[1].send_step].value, 20u);
  EXPECT_TRUE(t.ranks[0].steps[2].dropped);
  ASSERT_EQ(t.warnings.size(), 1u);
  EXPECT_NE(t.warnings[0].find("1 sends have no matching receive"), std::string::npos) << t.warnings[0];
  EXPECT_TRUE(replay(t, kOdin, {}).completed);
}

TEST(Replay, CollectivesMissingOnAMemberAreDroppedAndBlocksUnified) {
  TraceBuilder b(3);
  // A gatherv: the root's block is the mean (300 / 3), the others' their own.
  b.call(0, "MPI_Gatherv").collective(Collective::Gatherv, 100, 0).end();
  b.call(1, "MPI_Gatherv").collective(Collective::Gatherv, 40, 0).end();
  b.call(2, "MPI_Gatherv").collective(Collective::Gatherv, 160, 0).end();
  // A barrier rank 2 never recorded.
  b.call(0, "MPI_Barrier").collective(Collective::Barrier, 0).end();
  b.call(1, "MPI_Barrier").collective(Collective::Barrier, 0).end();
  const Trace t = b.finish();
  for (std::uint32_t r = 0; r < 3; ++r) EXPECT_EQ(t.ranks[r].steps[0].value, 100u) << r;
  EXPECT_TRUE(t.ranks[0].steps[1].dropped);
  EXPECT_TRUE(t.ranks[1].steps[1].dropped);
  ASSERT_EQ(t.warnings.size(), 1u);
  EXPECT_NE(t.warnings[0].find("not recorded on every member"), std::string::npos);
  const sim::SimulationResult r = replay(t, kOdin, {});
  EXPECT_TRUE(r.completed);
  EXPECT_EQ(r.messages, 2u);
}

// Four iterations of compute, exchange and allreduce between two barriers.
Trace iterations() {
  TraceBuilder b(2);
  for (std::uint32_t r = 0; r < 2; ++r) {
    const auto other = static_cast<std::int32_t>(1 - r);
    b.compute(r, ns(777));  // set-up, outside the window
    b.call(r, "MPI_Barrier").collective(Collective::Barrier, 0).end();
    for (int i = 0; i < 4; ++i) {
      b.compute(r, ns(1000 * (r + 1)));
      b.call(r, "MPI_Sendrecv").send(other, i, 64).recv(other, i, 64).end();
      b.call(r, "MPI_Allreduce").collective(Collective::Allreduce, 8).end();
    }
    b.compute(r, ns(5000));  // tear-down, outside
    b.call(r, "MPI_Barrier").collective(Collective::Barrier, 0).end();
  }
  return b.finish();
}

TEST(Replay, AWindowReplaysOnlyWhatEachRankDidBetweenTwoCalls) {
  const Trace t = iterations();
  ReplayOptions o;
  std::string error;
  ASSERT_TRUE(parse_window("MPI_Barrier#1..MPI_Allreduce#-1", o.window, error)) << error;
  TraceSchedule s(t, o);
  EXPECT_EQ(s.scope().messages, 8u);
  EXPECT_EQ(s.scope().collectives, 4u);
  EXPECT_EQ(s.scope().traced_compute, ns(4000 + 8000));
  // Rank 1 computes 2000 ns per iteration: the window as traced ends with its
  // last allreduce, 4 x (2000 + 2) ns after its first barrier ended at 778 ns.
  EXPECT_EQ(s.scope().measured, ns(4 * 2002 + 778) - ns(778));
  // Only the window's work: rank 0 waits for rank 1 in every iteration.
  const sim::SimulationResult r = sim::simulate(s, kFast);
  EXPECT_GE(r.per_rank[0].finish, ns(8000));
  EXPECT_LT(r.per_rank[0].finish, ns(8000 + 5000));
  // The later iterations only: what the window cuts is counted.
  ASSERT_TRUE(parse_window("MPI_Allreduce#2..", o.window, error));
  TraceSchedule tail(t, o);
  EXPECT_EQ(tail.scope().messages, 4u);
  EXPECT_EQ(tail.scope().collectives, 2u + 1u);  // two allreduces and the last barrier
}

TEST(Replay, WindowErrorsNameTheRankAndTheCall) {
  const Trace t = iterations();
  ReplayOptions o;
  std::string error;
  ASSERT_TRUE(parse_window("MPI_Barrier#3..", o.window, error));
  try {
    TraceSchedule s(t, o);
    FAIL() << "a window past the last barrier was accepted";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("rank 0 has no call MPI_Barrier#3"), std::string::npos) << e.what();
  }
  ASSERT_TRUE(parse_window("MPI_Allreduce#-1..MPI_Allreduce#1", o.window, error));
  EXPECT_THROW(TraceSchedule(t, o), TraceError);
  EXPECT_FALSE(parse_window("MPI_Barrier", o.window, error));
  EXPECT_NE(error.find("FROM[#N]..TO[#M]"), std::string::npos);
  EXPECT_FALSE(parse_window("MPI_Barrier#0..", o.window, error));
  EXPECT_FALSE(parse_window("MPI_Barrier#x..", o.window, error));
  Window w;
  ASSERT_TRUE(parse_window("MPI_Barrier..MPI_Allreduce#-2", w, error));
  EXPECT_EQ(w.text(), "MPI_Barrier#1..MPI_Allreduce#-2");
}

// The replay is a task graph like any other: its GOAL text reads back to the
// same run (what Schedgen does for LogGOPSim).
TEST(Replay, GoalExportReadsBackToTheSameRun) {
  const Trace t = iterations();
  TraceSchedule s(t, {});
  std::ostringstream text;
  taskgraph::write_goal(text, s);
  auto back = goal(text.str());
  ASSERT_TRUE(back);
  for (const sim::SimulationOptions& m : {kOdin, kRendezvous}) {
    TraceSchedule again(t, {});
    back->rewind();
    EXPECT_EQ(finish_times(again, m), finish_times(*back, m));
  }
}

TEST(Replay, RestartReplaysFromTheBeginning) {
  const Trace t = iterations();
  TraceSchedule s(t, {});
  const auto first = finish_times(s, kOdin);
  ASSERT_TRUE(s.restart());
  EXPECT_EQ(finish_times(s, kOdin), first);
}

}  // namespace
}  // namespace poems::trace
