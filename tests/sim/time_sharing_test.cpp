// Ranks that share a core under processor sharing (docs/network.md, "Time
// sharing"): PUPPET's multitasking rule, r ranks working on the core each at
// 1/r of it. Each answer written out by hand, and set beside first come first
// served where the two rules must agree.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "poems/components/network.h"
#include "poems/taskgraph/collectives.h"
#include "sim_test_util.h"

namespace poems::sim {
namespace {

using namespace testing;
using components::Network;
using components::NetworkSpec;
using components::TimeSharing;

constexpr Picoseconds kMs = ns(1'000'000);

// L 5 us, o 1 us, g 2 us, G 1 ns/B, O 0, S 65535 B.
LogGOPS sharing_machine() { return params(5000, 1000, 2000, ns_per_byte(1), 0); }

// `per_node` ranks on a node of one core, shared by `rule`.
SimulationResult run(const std::string& text, TimeSharing rule, std::uint32_t per_node = 2,
                     const LogGOPS& p = sharing_machine()) {
  auto s = goal(text);
  NetworkSpec spec;
  spec.mapping.ranks_per_node = per_node;
  spec.cores_per_node = 1;
  spec.time_sharing = rule;
  SimulationOptions o;
  o.params = p;
  o.network = std::make_shared<const Network>(spec);
  return s ? simulate(*s, o) : SimulationResult{};
}

constexpr auto kShared = TimeSharing::ProcessorSharing;
constexpr auto kFcfs = TimeSharing::FirstCome;

// Two equal steps: the step ends at 2 ms under either rule; processor sharing
// ends both ranks then, first come first served the first at 1 ms.
TEST(TimeSharing, TwoEqualStepsOnOneCoreTakeTwiceAsLongUnderEitherRule) {
  const std::string text = "num_ranks 2\nrank 0 {\nl1: calc 1000000\n}\nrank 1 {\nl1: calc 1000000\n}\n";
  SimulationResult shared = run(text, kShared);
  EXPECT_EQ(shared.per_rank[0].finish, 2 * kMs);
  EXPECT_EQ(shared.per_rank[1].finish, 2 * kMs);
  SimulationResult fcfs = run(text, kFcfs);
  EXPECT_EQ(fcfs.per_rank[0].finish, 1 * kMs);
  EXPECT_EQ(fcfs.per_rank[1].finish, 2 * kMs);
}

// 1 ms beside 3 ms: both at half speed until the short one ends at 2 ms, the
// long one alone then (first come first served: 1 ms, then 4 ms).
TEST(TimeSharing, AShortStepBesideALongOneEndsAtTwiceItsWork) {
  const std::string text = "num_ranks 2\nrank 0 {\nl1: calc 1000000\n}\nrank 1 {\nl1: calc 3000000\n}\n";
  SimulationResult shared = run(text, kShared);
  EXPECT_EQ(shared.per_rank[0].finish, 2 * kMs);
  EXPECT_EQ(shared.per_rank[1].finish, 4 * kMs);
  SimulationResult fcfs = run(text, kFcfs);
  EXPECT_EQ(fcfs.per_rank[0].finish, 1 * kMs);
  EXPECT_EQ(fcfs.per_rank[1].finish, 4 * kMs);
}

// PUPPET's case: a rank that blocks leaves the core to the others. Ranks 0
// and 1 share a core, rank 2 has its own node. Rank 1 computes 1 ms (done at
// 2 ms, at half speed beside rank 0), then waits for rank 2's message (sent
// at 10 ms); rank 0 has 3 ms left at 2 ms and ends alone at 5 ms. Rank 1
// receives at 10 ms + o + L, processes o + (s-1)G, then computes 1 ms alone.
// First come first served keeps rank 1's first step behind rank 0's 4 ms.
TEST(TimeSharing, ARankThatBlocksLeavesTheCoreToTheOthers) {
  const std::string text =
      "num_ranks 3\n"
      "rank 0 {\nl1: calc 4000000\n}\n"
      "rank 1 {\nl1: calc 1000000\nl2: recv 8b from 2\nl3: calc 1000000\nl2 requires l1\nl3 requires l2\n}\n"
      "rank 2 {\nl1: calc 10000000\nl2: send 8b to 1\nl2 requires l1\n}\n";
  SimulationResult shared = run(text, kShared);
  EXPECT_EQ(shared.per_rank[0].finish, 5 * kMs);
  EXPECT_EQ(shared.per_rank[1].finish, 10 * kMs + ns(1000 + 5000 + 1000 + 7) + kMs);
  SimulationResult fcfs = run(text, kFcfs);
  EXPECT_EQ(fcfs.per_rank[0].finish, 4 * kMs);
  EXPECT_EQ(fcfs.per_rank[1].finish, 10 * kMs + ns(1000 + 5000 + 1000 + 7) + kMs);
}

// A send's overhead is a job of the core too: rank 1's o (1 us) beside rank
// 0's 10 ms takes 2 us, the message leaves then (arriving 5 us later, received
// in o), and rank 0 ends 1 us late.
TEST(TimeSharing, MessageOverheadsShareTheCoreWithComputation) {
  const std::string text =
      "num_ranks 3\n"
      "rank 0 {\nl1: calc 10000000\n}\n"
      "rank 1 {\nl1: send 1b to 2\n}\n"
      "rank 2 {\nl1: recv 1b from 1\n}\n";
  SimulationResult shared = run(text, kShared);
  EXPECT_EQ(shared.per_rank[1].finish, ns(2000));
  EXPECT_EQ(shared.per_rank[2].finish, ns(2000 + 5000 + 1000));
  EXPECT_EQ(shared.per_rank[0].finish, 10 * kMs + ns(1000));
}

// A rendezvous send beside a computation: its o at half speed delays the
// message, its receive and its completion by o (1 us) against first come
// first served with the send first, and the computation ends o after its 1 ms.
TEST(TimeSharing, ARendezvousSendSharesItsOverheadAndCompletesWhenMatched) {
  const std::string text =
      "num_ranks 3\n"
      "rank 0 {\nl1: send 100000b to 2\n}\n"
      "rank 1 {\nl1: calc 1000000\n}\n"
      "rank 2 {\nl1: recv 100000b from 0\n}\n";
  SimulationResult fcfs = run(text, kFcfs);
  SimulationResult shared = run(text, kShared);
  EXPECT_EQ(shared.per_rank[2].finish, fcfs.per_rank[2].finish + ns(1000));
  EXPECT_EQ(shared.per_rank[0].finish, fcfs.per_rank[0].finish + ns(1000));
  EXPECT_EQ(shared.per_rank[1].finish, kMs + ns(1000));
  // First come first served: the send first, then the whole 1 ms.
  const Picoseconds sync_and_o = fcfs.per_rank[2].finish - ns(5000 + 1000 + 99'999);
  EXPECT_EQ(fcfs.per_rank[1].finish, sync_and_o + kMs);
}

// A rendezvous send whose CPU part, o + (s-1)O = 1 + 49.9995 us, outlasts
// the message's flight: the receive matches it before that part ends, and
// the send completes when it ends. Beside a computation the part takes twice
// as long (101.999 us), and the message leaves (s-1)O before its end: both
// the send and the receive end 50.9995 us later than first come first served
// (which runs the send first), and the computation 50.9995 us after its 1 ms.
TEST(TimeSharing, ARendezvousMatchedBeforeItsSendsCpuPartEndsCompletesWithIt) {
  const std::string text =
      "num_ranks 3\n"
      "rank 0 {\nl1: send 100000b to 2\n}\n"
      "rank 1 {\nl1: calc 1000000\n}\n"
      "rank 2 {\nl1: recv 100000b from 0\n}\n";
  LogGOPS p = sharing_machine();
  p.O = ns_per_byte(1) / 2;
  SimulationResult fcfs = run(text, kFcfs, 2, p);
  SimulationResult shared = run(text, kShared, 2, p);
  const Picoseconds part = 50'999'500;  // o + (s-1)O
  EXPECT_EQ(shared.per_rank[0].finish, fcfs.per_rank[0].finish + part);
  EXPECT_EQ(shared.per_rank[2].finish, fcfs.per_rank[2].finish + part);
  EXPECT_EQ(shared.per_rank[1].finish, kMs + part);
  EXPECT_EQ(fcfs.per_rank[1].finish, fcfs.per_rank[0].finish + kMs);  // the send first, then the 1 ms
}

// A token passed around 8 ranks of one core: one rank works at a time, so
// processor sharing and first come first served agree to the picosecond.
TEST(TimeSharing, OneRankWorkingAtATimeIsTheSameUnderEitherRule) {
  std::string text = "num_ranks 8\n";
  for (int r = 0; r < 8; ++r) {
    text += "rank " + std::to_string(r) + " {\n";
    int n = 0;
    if (r > 0) text += "l" + std::to_string(++n) + ": recv 64b from " + std::to_string(r - 1) + "\n";
    text += "l" + std::to_string(++n) + ": calc 250000\n";
    if (r < 7) text += "l" + std::to_string(++n) + ": send 64b to " + std::to_string(r + 1) + "\n";
    for (int i = 2; i <= n; ++i) text += "l" + std::to_string(i) + " requires l" + std::to_string(i - 1) + "\n";
    text += "}\n";
  }
  SimulationResult shared = run(text, kShared, 8), fcfs = run(text, kFcfs, 8);
  ASSERT_EQ(shared.per_rank.size(), 8u);
  for (int r = 0; r < 8; ++r) EXPECT_EQ(shared.per_rank[r].finish, fcfs.per_rank[r].finish) << "rank " << r;
  EXPECT_EQ(shared.max_finish, 8 * ns(250'000) + 7 * ns(1000 + 5000 + 1000 + 63));
}

// Work is conserved: 8 ranks of one core, each computing in steps between
// dissemination exchanges; the core is busy for every rank's work, so the
// run ends no earlier than the sum, and not much later (waiting only for
// messages' latencies).
TEST(TimeSharing, EightRanksOnOneCoreTakeTheirSummedWork) {
  std::string text = "num_ranks 8\n";
  for (int r = 0; r < 8; ++r) {
    text += "rank " + std::to_string(r) + " {\n";
    text += "l1: calc " + std::to_string(100000 * (r + 1)) + "\n";
    text += "}\n";
  }
  SimulationResult shared = run(text, kShared, 8);
  // 0.1 .. 0.8 ms: rank k ends when the k smallest are done at 8, 7, ... shares.
  Picoseconds t = 0, done = 0;
  for (int k = 0; k < 8; ++k) {
    t += static_cast<Picoseconds>(8 - k) * (ns(100'000) * (k + 1) - done);
    done = ns(100'000) * (k + 1);
    EXPECT_EQ(shared.per_rank[k].finish, t) << "rank " << k;
  }
  EXPECT_EQ(shared.max_finish, ns(100'000) * 36);
}

// Collectives of every kind, eager and rendezvous, with and without max-min
// contention, 13 ranks at 4 a node on 2 cores: every operation completes, as
// under first come first served, and no core does more than one rank's work
// at a time: a node's computation and overheads fit in the time its ranks take.
TEST(TimeSharing, CollectivesCompleteAndEveryCoreDoesAtMostItsTime) {
  for (auto op : {taskgraph::CollectiveOp::Allreduce, taskgraph::CollectiveOp::Bcast, taskgraph::CollectiveOp::Alltoall,
                  taskgraph::CollectiveOp::Barrier}) {
    for (std::uint64_t bytes : {8ull, 100000ull}) {
      for (auto contention : {components::Contention::None, components::Contention::MaxMin}) {
        taskgraph::CollectiveCall call;
        call.op = op;
        call.procs = 13;
        call.bytes = bytes;
        call.algorithm = taskgraph::algorithms_for(op).front();
        SimulationResult result[2];
        for (TimeSharing rule : {kFcfs, kShared}) {
          NetworkSpec spec;
          spec.mapping.ranks_per_node = 4;
          spec.cores_per_node = 2;
          spec.time_sharing = rule;
          spec.contention = contention;
          SimulationOptions o;
          o.params = sharing_machine();
          o.params.O = ns_per_byte(1) / 2;  // a per-byte overhead, so a send's CPU part outlasts its o
          o.params.S = 4096;
          o.network = std::make_shared<const Network>(spec);
          taskgraph::CollectiveSchedule schedule(call);
          result[rule == kShared] = simulate(schedule, o);
        }
        const SimulationResult& shared = result[1];
        const std::string what = std::string(taskgraph::collective_op_name(op)) + " " + std::to_string(bytes) + "B";
        ASSERT_EQ(shared.per_rank.size(), 13u) << what;
        EXPECT_EQ(shared.operations, result[0].operations) << what;
        EXPECT_TRUE(shared.completed) << what;
        for (std::uint32_t node = 0; node < 4; ++node) {
          Picoseconds work = 0, end = 0;
          for (std::uint32_t r = 4 * node; r < std::min(13u, 4 * node + 4); ++r) {
            work += shared.per_rank[r].compute + shared.per_rank[r].overhead;
            end = std::max(end, shared.per_rank[r].finish);
          }
          EXPECT_LE(work, 2 * end) << what << " node " << node;
        }
      }
    }
  }
}

}  // namespace
}  // namespace poems::sim
