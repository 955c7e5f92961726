// Known answers for every rule of the two message-progress semantics
// (docs/simulator.md, the rule tables). Each schedule's per-rank finish
// times were computed by hand from the rules; the `loggopsim` ones were then
// confirmed with LogGOPSim (spcl/LogGOPSim at 76451de, built with -O3: txt2bin
// and LogGOPSim with its default parameters L=2500 o=1500 g=1000 G=6 O=0
// S=65535, the figures it printed are the ones below).
#include <algorithm>

#include "poems/sim/observer.h"
#include "sim_test_util.h"

namespace poems::sim::testing {
namespace {

const LogGOPS kDefaults = params(2500, 1500, 1000, ns_per_byte(6), 0);  // LogGOPSim's defaults

std::vector<Picoseconds> run(const std::string& text, Semantics semantics, const LogGOPS& p = kDefaults) {
  auto s = goal(text);
  if (!s) return {};
  SimulationOptions o;
  o.params = p;
  o.semantics = semantics;
  o.cpus = s->max_cpu() + 1;
  o.nics = s->max_nic() + 1;
  SimulationResult r = simulate(*s, o);
  EXPECT_TRUE(r.completed);
  return finishes(r);
}

std::vector<Picoseconds> in_ns(std::initializer_list<std::uint64_t> v) {
  std::vector<Picoseconds> out;
  for (std::uint64_t x : v) out.push_back(ns(x));
  return out;
}

// Rank 1 first waits for rank 2's late message; rank 0's message arrives
// meanwhile (at o + L = 4000) to an idle CPU. loggopsim processes it then
// (4000 + o + 7G = 5542), so the receive that finds it later completes at
// once: rank 1 ends with the other message, 10000 + 1500 + 2500 + 1542.
// matched processes it only once its receive is posted (15542), 1542 more.
TEST(LoggopsimRules, AnUnexpectedMessageIsProcessedWhenItArrives) {
  const std::string text = R"(num_ranks 3
rank 0 { s: send 8b to 1 }
rank 1 { r1: recv 8b from 2; r2: recv 8b from 0; r2 requires r1 }
rank 2 { c: calc 10000; s: send 8b to 1; s requires c }
)";
  EXPECT_EQ(run(text, Semantics::Loggopsim), in_ns({1500, 15542, 11500}));
  EXPECT_EQ(run(text, Semantics::Matched), in_ns({1500, 17084, 11500}));
}

// A rendezvous send (70000 B > S) leaves at once: it arrives at 4000 and
// is processed there (o + 69999 G: 425494); it completes when matched, at
// 4000, and its sender's CPU clock moves up to 4000, so the calc that
// requires it runs 4000 .. 4100. matched synchronizes first for L: arrival
// 6500, the send completes at 6500, the calc ends at 6600.
TEST(LoggopsimRules, RendezvousTravelsAsEagerAndCompletesWhenMatched) {
  const std::string text = R"(num_ranks 2
rank 0 { s: send 70000b to 1; c: calc 100; c requires s }
rank 1 { r: recv 70000b from 0 }
)";
  EXPECT_EQ(run(text, Semantics::Loggopsim), in_ns({4100, 425494}));
  EXPECT_EQ(run(text, Semantics::Matched), in_ns({6600, 427994}));
}

// Two CPUs. Rank 1's receive (CPU 1) requires a calc on CPU 0, but is
// queued at CPU 1's clock (0), so it is posted at once. The message is
// processed on CPU 0 of rank 1 (the send's CPU index), busy until 10000:
// 10000 + 421494 = 431494. The match at 10000 completes the send and moves
// rank 0's CPU 0 (the send's) up to 10000; rank 0's calc on CPU 1 is
// queued at CPU 1's clock, 0, in the past, and runs 0 .. 100. Rank 0 ends
// at its latest CPU clock, 10000.
TEST(LoggopsimRules, OperationsAreQueuedAtTheClockOfTheirOwnCpu) {
  const std::string text = R"(num_ranks 2
rank 0 { s: send 70000b to 1 cpu 0; c: calc 100 cpu 1; c requires s }
rank 1 { c: calc 10000 cpu 0; r: recv 70000b from 0 cpu 1; r requires c }
)";
  EXPECT_EQ(run(text, Semantics::Loggopsim), in_ns({10000, 431494}));
}

// The message arrives unexpected (rank 1's CPU 0 is idle at 4000: processed
// there, 425494); the receive on CPU 1 matches it at 10000. The match moves
// the sender's clocks named by the receive: rank 0's CPU 1 goes to 10000,
// while its calc (CPU 0, requiring the send) is queued at CPU 0's clock,
// 1500, and runs 1500 .. 1600. Rank 0 ends at 10000.
TEST(LoggopsimRules, AnUnexpectedRendezvousMovesTheClocksTheReceiveNames) {
  const std::string text = R"(num_ranks 2
rank 0 { s: send 70000b to 1 cpu 0; c: calc 100 cpu 0; c requires s }
rank 1 { c: calc 10000 cpu 1; r: recv 70000b from 0 cpu 1; r requires c }
)";
  EXPECT_EQ(run(text, Semantics::Loggopsim), in_ns({10000, 425494}));
}

// Equal times run in the order events were first queued. Rank 0's message
// (queued at 0 for 4000) finds rank 1's CPU busy until 10000 and is queued
// again for 10000, keeping its stamp; rank 1's send b was queued for 10000
// later (when the calc started), so the message goes first (10000 .. 11542)
// and b is pushed back to 11542: rank 2 receives at 11542 + 4000 + 1542.
// matched: b at 10000, the message processed when its receive is posted.
TEST(LoggopsimRules, ARequeuedEventKeepsItsPlaceAmongEqualTimes) {
  const std::string text = R"(num_ranks 3
rank 0 { s: send 8b to 1 }
rank 1 { a: calc 10000; b: send 8b to 2; c: recv 8b from 0; b requires a; c requires b }
rank 2 { r: recv 8b from 1 }
)";
  EXPECT_EQ(run(text, Semantics::Loggopsim), in_ns({1500, 13042, 17084}));
  EXPECT_EQ(run(text, Semantics::Matched), in_ns({1500, 13042, 15542}));
}

// Operations without dependencies are queued sends first, then receives,
// then calcs: rank 0's send goes at 0 and its message reaches rank 1 at
// 4000 (5542); the calc waits for the CPU (1500 .. 6500), and rank 1's
// message, processed after it, ends rank 0 at 8042. matched runs them in
// program order: the calc first, the send at 5000, rank 1 at 10542.
TEST(LoggopsimRules, FirstOperationsAreQueuedSendsRecvsCalcs) {
  const std::string text = R"(num_ranks 2
rank 0 { a: calc 5000; b: recv 8b from 1; c: send 8b to 1 }
rank 1 { s: send 8b to 0; r: recv 8b from 0 }
)";
  EXPECT_EQ(run(text, Semantics::Loggopsim), in_ns({8042, 5542}));
  EXPECT_EQ(run(text, Semantics::Matched), in_ns({8042, 10542}));
}

// A dependency frees an operation when it is satisfied, at the clock of the
// freed operation's own CPU: b (CPU 1) requires a (CPU 0, 0 .. 1000) but is
// queued at CPU 1's clock, 0. matched starts it when a completes.
TEST(LoggopsimRules, AFreedOperationStartsAtItsCpusClock) {
  const std::string text = "num_ranks 1\nrank 0 { a: calc 1000 cpu 0; b: calc 500 cpu 1; b requires a }\n";
  EXPECT_EQ(run(text, Semantics::Loggopsim), in_ns({1000}));
  EXPECT_EQ(run(text, Semantics::Matched), in_ns({1500}));
}

// A send's wildcard tag (-1) matches any receive's tag, in both semantics.
TEST(LoggopsimRules, ASendsWildcardTagMatchesAnyTag) {
  const std::string text = "num_ranks 2\nrank 0 { s: send 8b to 1 tag -1 }\nrank 1 { r: recv 8b from 0 tag 7 }\n";
  EXPECT_EQ(run(text, Semantics::Loggopsim), in_ns({1500, 5542}));
  EXPECT_EQ(run(text, Semantics::Matched), in_ns({1500, 5542}));
}

// LogGOPSim computes (s-1)·X in unsigned 64-bit arithmetic, so a 0-byte
// message's per-byte terms are -X: the receive costs o + max(-O, -G) taken
// unsigned, o - 6 with O = 0 (max(0, 2^64 - 6)), o - 2 with O = 2; the send
// o - O. matched charges 0 per byte below 2 bytes.
TEST(LoggopsimRules, AZeroByteMessagesPerByteTermsWrapAsInLogGOPSim) {
  const std::string text = "num_ranks 2\nrank 0 { s: send 0b to 1 }\nrank 1 { r: recv 0b from 0 }\n";
  EXPECT_EQ(run(text, Semantics::Loggopsim), in_ns({1500, 5494}));
  EXPECT_EQ(run(text, Semantics::Loggopsim, params(2500, 1500, 1000, ns_per_byte(6), ns_per_byte(2))),
            in_ns({1498, 5498}));
  EXPECT_EQ(run(text, Semantics::Matched), in_ns({1500, 5500}));
}

// Operations one event frees are queued in the order the file's statements
// list them: y (to rank 2) before x (to rank 1), although x comes first in
// the program. matched frees them in program order.
TEST(LoggopsimRules, OperationsFreedTogetherFollowTheStatementOrder) {
  const std::string text = R"(num_ranks 3
rank 0 { a: calc 100; x: send 8b to 1; y: send 8b to 2; y requires a; x requires a }
rank 1 { r: recv 8b from 0 }
rank 2 { r: recv 8b from 0 }
)";
  EXPECT_EQ(run(text, Semantics::Loggopsim), in_ns({3100, 7142, 5642}));
  EXPECT_EQ(run(text, Semantics::Matched), in_ns({3100, 5642, 7142}));
}

// More than 16 operations freed by one event are ordered by libstdc++'s
// std::sort on their kinds, which LogGOPSim calls (introsort: equal kinds
// do not keep their order). Here a calc frees c1, s1 .. s15 (sends to
// ranks 1 .. 15), c2; the sends leave in the order std::sort gives, 1500
// apart from 100, each received 4000 + 1542 later; the calcs run after.
TEST(LoggopsimRules, SeventeenFreedOperationsAreOrderedAsStdSortOrdersThem) {
  std::string text = "num_ranks 16\nrank 0 {\na: calc 100\nc1: calc 7\n";
  for (int i = 1; i <= 15; ++i) text += "s" + std::to_string(i) + ": send 8b to " + std::to_string(i) + "\n";
  text += "c2: calc 11\nc1 requires a\n";
  for (int i = 1; i <= 15; ++i) text += "s" + std::to_string(i) + " requires a\n";
  text += "c2 requires a\n}\n";
  for (int i = 1; i <= 15; ++i) text += "rank " + std::to_string(i) + " { r: recv 8b from 0 }\n";
  // LogGOPSim's figures.
  EXPECT_EQ(run(text, Semantics::Loggopsim), in_ns({22618, 5642, 26642, 25142, 23642, 22142, 20642, 19142, 17642, 16142,
                                                    14642, 13142, 11642, 10142, 8642, 7142}));
  // They are std::sort's order: s1, s15, s14, ..., s2, then c1, c2.
  struct Kind {
    int kind, rank;
  };
  std::vector<Kind> freed{{3, 0}};
  for (int i = 1; i <= 15; ++i) freed.push_back({1, i});
  freed.push_back({3, 16});
  std::sort(freed.begin(), freed.end(), [](const Kind& x, const Kind& y) { return x.kind < y.kind; });
  std::vector<Picoseconds> expected(16, ns(100 + 15 * 1500 + 7 + 11));
  for (int k = 0; k < 15; ++k) expected[static_cast<std::size_t>(freed[k].rank)] = ns(100 + 1500 * k + 4000 + 1542);
  EXPECT_EQ(run(text, Semantics::Loggopsim), expected);
}

// An unexpected message's protocol is decided by its receive's size in
// LogGOPSim (by the message's when the receive was posted first). Sizes on
// both sides of S would leave the send incomplete or complete it twice
// there: refused, naming the receive.
TEST(LoggopsimRules, AReceiveAcrossSFromItsUnexpectedMessageIsRefused) {
  for (const char* sizes : {"70000b to 1", "100b to 1"}) {
    const bool big = std::string(sizes).front() == '7';
    const std::string text = std::string("num_ranks 2\nrank 0 { s: send ") + sizes +
                             " }\nrank 1 { c: calc 10000; r: recv " + (big ? "100b" : "70000b") +
                             " from 0; r requires c }\n";
    auto s = goal(text);
    ASSERT_TRUE(s);
    SimulationOptions o;
    o.semantics = Semantics::Loggopsim;
    try {
      simulate(*s, o);
      ADD_FAILURE() << "accepted " << sizes;
    } catch (const SimulationError& e) {
      EXPECT_NE(std::string(e.what()).find("decides the protocol of an unexpected message by the receive's size"),
                std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find("(r at test.goal:3:"), std::string::npos) << e.what();
    }
  }
  // Posted first, the message decides: a 100-byte receive takes a rendezvous message.
  const std::string posted = "num_ranks 2\nrank 0 { s: send 70000b to 1 }\nrank 1 { r: recv 100b from 0 }\n";
  EXPECT_EQ(run(posted, Semantics::Loggopsim), in_ns({4000, 425494}));
}

// The handshake option is a rule of the matched semantics.
TEST(LoggopsimRules, TheHandshakeIsRefused) {
  auto s = goal("num_ranks 1\nrank 0 { c: calc 1 }\n");
  SimulationOptions o;
  o.semantics = Semantics::Loggopsim;
  o.rendezvous_handshake = true;
  EXPECT_THROW(simulate(*s, o), SimulationError);
}

// Reading lazily (a source that issues in order) and in full give the same
// result, bit for bit, and the re-queued events are counted.
TEST(LoggopsimRules, LazyAndFullReadingsAgree) {
  taskgraph::CollectiveCall call;
  call.op = taskgraph::CollectiveOp::Gather;  // the root's CPU is busy as messages arrive
  call.algorithm = taskgraph::CollectiveAlgorithm::Linear;
  call.procs = 100;
  call.bytes = 1000;
  taskgraph::CollectiveSchedule lazy_source(call);
  auto full_source = taskgraph::materialize(lazy_source);
  taskgraph::CollectiveSchedule again(call);
  SimulationOptions o;
  o.semantics = Semantics::Loggopsim;
  SimulationResult a = simulate(again, o);
  o.try_lazy_reading = false;
  SimulationResult b = simulate(*full_source, o);
  EXPECT_TRUE(a.read_lazily);
  EXPECT_FALSE(b.read_lazily);
  EXPECT_EQ(finishes(a), finishes(b));
  EXPECT_EQ(a.events, b.events);
  EXPECT_GT(a.requeued, 0u);
  EXPECT_EQ(a.events, a.operations + a.messages + a.requeued);
}

// Direct execution's path (poems/sim/observer.h): a source whose programs
// issue each operation once the previous one completed, blocking in
// between, gives what the same blocking programs as a fixed schedule give,
// under both semantics.
class BlockingPrograms final : public taskgraph::ScheduleSource, public ExecutionObserver {
 public:
  explicit BlockingPrograms(std::vector<std::vector<taskgraph::Operation>> programs)
      : programs_(std::move(programs)), next_(programs_.size(), 0), released_(programs_.size(), 1) {}
  std::uint32_t ranks() const override { return static_cast<std::uint32_t>(programs_.size()); }
  std::size_t pull(std::uint32_t r, std::size_t, taskgraph::OpBuffer& out) override {
    if (next_[r] == programs_[r].size()) return 0;
    if (next_[r] == released_[r]) return kBlocked;
    taskgraph::Operation op = programs_[r][next_[r]];
    op.first_dep = static_cast<std::uint32_t>(out.deps.size());
    op.dep_count = next_[r] > 0 ? 1 : 0;
    if (next_[r] > 0) out.deps.push_back(taskgraph::Dependency{next_[r] - 1, false});
    out.ops.push_back(op);
    ++next_[r];
    return 1;
  }
  std::uint32_t node_count() const override { return 0; }
  taskgraph::NodeInfo node_info(std::uint32_t) const override { return {}; }
  bool issues_in_order() const override { return true; }
  bool completed(std::uint32_t r, std::uint64_t op, Picoseconds) override {
    if (op + 1 != released_[r] || released_[r] == programs_[r].size()) return false;
    ++released_[r];  // the program goes on
    return true;
  }
  void matched(std::uint32_t, std::uint64_t, std::uint32_t, std::uint64_t, Picoseconds) override {}
  bool arrived_unexpected(std::uint32_t, std::uint32_t, std::uint64_t, Picoseconds) override { return false; }

 private:
  std::vector<std::vector<taskgraph::Operation>> programs_;
  std::vector<std::size_t> next_, released_;
};

TEST(LoggopsimRules, AnObservedSourceRunsAsItsFixedSchedule) {
  auto op = [](taskgraph::OpKind kind, std::int32_t peer, std::uint64_t amount) {
    taskgraph::Operation o;
    o.kind = kind;
    o.peer = peer;
    (kind == taskgraph::OpKind::Calc ? o.duration : o.bytes) = amount;
    return o;
  };
  using K = taskgraph::OpKind;
  const std::vector<std::vector<taskgraph::Operation>> programs = {
      {op(K::Send, 1, 8), op(K::Recv, 1, 100000), op(K::Calc, 0, ns(700)), op(K::Send, 2, 8)},
      {op(K::Calc, 0, ns(5000)), op(K::Recv, 0, 8), op(K::Send, 0, 100000), op(K::Recv, 2, 8)},
      {op(K::Recv, 0, 8), op(K::Send, 1, 8)}};
  for (Semantics semantics : {Semantics::Matched, Semantics::Loggopsim}) {
    SimulationOptions o;
    o.semantics = semantics;
    taskgraph::ExplicitSchedule fixed(3);
    for (std::uint32_t r = 0; r < 3; ++r) {
      taskgraph::OpBuffer b;
      for (std::size_t i = 0; i < programs[r].size(); ++i) {
        taskgraph::Operation x = programs[r][i];
        x.first_dep = static_cast<std::uint32_t>(b.deps.size());
        x.dep_count = i > 0 ? 1 : 0;
        if (i > 0) b.deps.push_back(taskgraph::Dependency{i - 1, false});
        b.ops.push_back(x);
      }
      fixed.set_rank(r, b);
    }
    const SimulationResult want = simulate(fixed, o);
    BlockingPrograms running(programs);
    o.observer = &running;
    const SimulationResult got = simulate(running, o);
    ASSERT_TRUE(want.completed);
    ASSERT_TRUE(got.completed);
    EXPECT_EQ(finishes(got), finishes(want)) << semantics_name(semantics);
  }
}

}  // namespace
}  // namespace poems::sim::testing

namespace poems::sim::testing {
namespace {

// 2048 sends of rank 0, none depending on another, all ready at 0, wait
// for its one CPU: under LogGOPSim's rules each release of the CPU pops
// every waiting send, the first (in stamp order) takes it and the others
// are queued again, 2048 * 2047 / 2 = 2,096,128 times in all. The engine
// parks them (engine.h, lgs_park) and must count, and give, the same: the
// CPU is the bottleneck (o + 0 O = 2300 > g = 2000), so the last send
// starts at 2047 * 2300 and ends at 4,710,400; its message arrives o + L
// later and is processed for o: 4,718,000. Confirmed with LogGOPSim.
TEST(LoggopsimRules, OperationsWaitingForTheCpuTakeItInStampOrder) {
  std::string text = "num_ranks 2\nrank 0 {\n";
  for (int i = 0; i < 2048; ++i) text += "send 1b to 1 tag 0\n";
  text += "}\nrank 1 {\n";
  for (int i = 0; i < 2048; ++i) text += "recv 1b from 0 tag 0\n";
  text += "}\n";
  auto s = goal(text);
  ASSERT_TRUE(s);
  SimulationOptions o;
  o.params = params(5300, 2300, 2000, ns_per_byte(2), ns_per_byte(1), 32768);
  o.semantics = Semantics::Loggopsim;
  const SimulationResult r = simulate(*s, o);
  ASSERT_TRUE(r.completed);
  EXPECT_EQ(finishes(r), in_ns({4'710'400, 4'718'000}));
  EXPECT_EQ(r.requeued, 2'096'128u);
  EXPECT_EQ(r.events, 2'096'128u + 2 * 2048u + 2048u);  // requeues, sends and receives, messages
}

}  // namespace
}  // namespace poems::sim::testing
