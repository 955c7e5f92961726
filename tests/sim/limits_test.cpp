// The simulator's limits: costs and times that would overflow the
// picosecond clock, and runs that need more memory than allowed, are errors
// naming the operation or the figures, at their bounds exactly.
#include "sim_test_util.h"

namespace poems::sim::testing {
namespace {

SimulationResult run_one_message(std::uint64_t bytes, const LogGOPS& p, Semantics semantics = Semantics::Matched) {
  taskgraph::ExplicitSchedule s(2);
  taskgraph::OpBuffer send, recv;
  taskgraph::Operation op;
  op.kind = taskgraph::OpKind::Send;
  op.peer = 1;
  op.bytes = bytes;
  send.ops.push_back(op);
  op.kind = taskgraph::OpKind::Recv;
  op.peer = 0;
  recv.ops.push_back(op);
  s.set_rank(0, send);
  s.set_rank(1, recv);
  SimulationOptions o;
  o.params = p;
  o.semantics = semantics;
  return simulate(s, o);
}

// The largest message is the one whose every cost stays within 2^61 ps:
// with G = 6 ns/B, (s-1)·6000 ps ≤ 2^61 - (max(o, g) + L + the rendezvous
// synchronization L), the bound counting the fixed costs of any message.
TEST(Limits, MessagesUpToTheirLargestCostSimulateOneMoreIsRefused) {
  LogGOPS p = params(2500, 1500, 1000, ns_per_byte(6), 0, ~std::uint64_t{0} >> 1);
  const std::uint64_t largest = ((std::uint64_t{1} << 61) - ns(1500 + 2500 + 2500)) / 6000 + 1;
  for (Semantics semantics : {Semantics::Matched, Semantics::Loggopsim}) {
    SimulationResult r = run_one_message(largest, p, semantics);
    ASSERT_TRUE(r.completed);
    // o + L, then o + (s-1)G, exactly (no wrap).
    EXPECT_EQ(r.per_rank[1].finish, ns(1500 + 2500 + 1500) + (largest - 1) * 6000);
    try {
      run_one_message(largest + 1, p, semantics);
      ADD_FAILURE() << "accepted " << largest + 1 << " bytes";
    } catch (const SimulationLimitError& e) {
      EXPECT_EQ(e.detail, "a message of " + std::to_string(largest + 1) + " bytes: at most " + std::to_string(largest) +
                              " bytes with these LogGOPS parameters (sizes below 2^53, every cost within 2^61 ps)");
    }
  }
  // Without per-byte costs the size bound is 2^53 - 1.
  LogGOPS free = params(2500, 1500, 1000, 0, 0, ~std::uint64_t{0} >> 1);
  EXPECT_TRUE(run_one_message((std::uint64_t{1} << 53) - 1, free).completed);
  EXPECT_THROW(run_one_message(std::uint64_t{1} << 53, free), SimulationLimitError);
  // Issue 25's reproducer: 2^63 - 1 bytes finished in 7,988 ns (a wrapped cost).
  EXPECT_THROW(run_one_message(9223372036854775807ull, params(2500, 1500, 1000, ns_per_byte(6), 0)),
               SimulationLimitError);
}

TEST(Limits, CalcsUpTo2To61PsTimesBeyond2To62Stop) {
  auto calcs = [](std::initializer_list<Picoseconds> durations) {
    taskgraph::ExplicitSchedule s(1);
    taskgraph::OpBuffer b;
    for (Picoseconds d : durations) {
      taskgraph::Operation op;
      op.duration = d;
      op.first_dep = static_cast<std::uint32_t>(b.deps.size());
      if (!b.ops.empty()) {
        b.deps.push_back(taskgraph::Dependency{b.ops.size() - 1, false});
        op.dep_count = 1;
      }
      b.ops.push_back(op);
    }
    s.set_rank(0, b);
    return simulate(s, SimulationOptions{});
  };
  const Picoseconds kMax = Picoseconds{1} << 61;
  EXPECT_EQ(calcs({kMax}).max_finish, kMax);
  EXPECT_THROW(calcs({kMax + 1}), SimulationLimitError);
  // Two: the second starts at 2^61, ends at 2^62, the clock's end.
  EXPECT_EQ(calcs({kMax, kMax}).max_finish, 2 * kMax);
  // Three: the third would start past 2^62.
  try {
    calcs({kMax, kMax, 1});
    ADD_FAILURE() << "ran past the clock";
  } catch (const SimulationLimitError& e) {
    EXPECT_NE(std::string(e.what()).find("2^62 ps"), std::string::npos) << e.what();
  }
}

// Refused before anything is allocated, with the estimate and the limit.
TEST(Limits, ARunAboveTheMemoryLimitIsRefusedWithItsEstimate) {
  taskgraph::CollectiveCall call;
  call.op = taskgraph::CollectiveOp::Bcast;
  call.procs = 100'000;
  taskgraph::CollectiveSchedule s(call);
  SimulationOptions o;
  const std::uint64_t need = estimated_memory(s, o);
  EXPECT_EQ(need, std::uint64_t{100'000} * memory_per_rank(o));
  EXPECT_GE(memory_per_rank(o), 200u);  // record, clock line, matching entry, result
  o.memory_limit = need - 1;
  try {
    simulate(s, o);
    ADD_FAILURE() << "not refused";
  } catch (const SimulationLimitError& e) {
    EXPECT_NE(std::string(e.what()).find("simulating 100000 processes needs about"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("(--memory-limit)"), std::string::npos) << e.what();
  }
  o.memory_limit = need;
  taskgraph::CollectiveSchedule again(call);
  EXPECT_TRUE(simulate(again, o).completed);
}

// Every GOAL quantity at the top of its range is read exactly, nothing
// rounded or wrapped (one past it is an error, tests/goal/errors/hostile_numbers.goal).
TEST(Limits, GoalQuantitiesAtTheirBoundsAreReadExactly) {
  auto s = goal(
      "num_ranks 3\nrank 0 {\n"
      "  a: send 9007199254740991b to 2 tag 4294967294 cpu 255 nic 255 comm 4294967295\n"
      "  b: calc 2305843009213693.952\n"
      "  c: recv 0b from 2 tag 2147483647\n}\n");
  ASSERT_TRUE(s);
  taskgraph::OpBuffer b;
  ASSERT_EQ(s->pull(0, 10, b), 3u);
  EXPECT_EQ(b.ops[0].bytes, (std::uint64_t{1} << 53) - 1);
  EXPECT_EQ(b.ops[0].peer, 2);
  EXPECT_EQ(static_cast<std::uint32_t>(b.ops[0].tag), 4294967294u);
  EXPECT_EQ(b.ops[0].cpu, 255);
  EXPECT_EQ(b.ops[0].nic, 255);
  EXPECT_EQ(b.ops[0].comm, 4294967295u);
  EXPECT_EQ(b.ops[1].duration, Picoseconds{1} << 61);
  EXPECT_EQ(b.ops[2].bytes, 0u);
  EXPECT_EQ(b.ops[2].tag, 2147483647);
}

}  // namespace
}  // namespace poems::sim::testing
