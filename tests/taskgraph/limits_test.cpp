// Quantities checked where a binding makes them concrete (docs/limits.md):
// every reproducer of issue 25 that reached an evaluator with a wrapped or
// zeroed value is now a located error naming the expression, the value and
// the allowed range; resource budgets stop runaway models before they run.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "poems/base/limits.h"
#include "poems/psl/frontend.h"
#include "poems/psl/lower.h"
#include "poems/taskgraph/comm_check.h"
#include "poems/taskgraph/dtg.h"

using namespace poems;
using namespace poems::taskgraph;
using poems::psl::lower_model;

// Its own namespace: unity builds (tests/CMakeLists.txt) batch files together.
namespace limits_tests {

namespace {

std::shared_ptr<const StaticTaskGraph> load(const std::string& text) {
  static std::vector<std::unique_ptr<psl::Frontend>> keep;
  auto fe = std::make_unique<psl::Frontend>();
  const bool ok = fe->load_text("t.psl", text);
  std::ostringstream diags;
  fe->diagnostics().print(diags);
  EXPECT_TRUE(ok) << diags.str();
  auto g = std::make_shared<StaticTaskGraph>(lower_model(fe->program(), fe->sources(), ""));
  keep.push_back(std::move(fe));
  return g;
}

// Instantiates and traverses every rank; returns the error text ("" if none).
std::string run(const std::shared_ptr<const StaticTaskGraph>& g, const ParameterBinding& binding = {},
                InstantiateOptions options = {}) {
  try {
    ModelSchedule s(g, binding, options);
    collect_statistics(s);
  } catch (const InstantiationError& e) {
    return e.what();
  }
  return "";
}

// Two processes exchange one message of `size` bytes.
std::shared_ptr<const StaticTaskGraph> message(const std::string& size) {
  return load(
      "model M {\n  param n = 8, r = 1;\n  taskgraph g {\n    processes { [p] : 0 <= p < 2 };\n"
      "    if p == 0 { send to [1] size " +
      size + "; } else { recv from [0] size " + size + "; }\n  }\n}\n");
}

std::shared_ptr<const StaticTaskGraph> task(const std::string& work) {
  return load(
      "model M {\n  param w = 10;\n  taskgraph g {\n    processes { [p] : 0 <= p < 2 };\n"
      "    task t : Work(n = " +
      work +
      ");\n  }\n}\n"
      "component Work in application[M] {\n"
      "  accepts { profile { node_type = \"compute\"; } transaction compute(n: real); protocol dataflow; }\n"
      "  requests cpu { selector domain == hardware[processor]; transaction execute_code_block(work = n);\n"
      "                 protocol call_return; }\n}\n");
}

// Restores the process-wide limits a test changes.
struct LimitsGuard {
  InstantiationLimits saved = default_instantiation_limits();
  ~LimitsGuard() { default_instantiation_limits() = saved; }
};

}  // namespace

// ---------------------------------------------------------------- message sizes

TEST(Quantities, NegativeSizeFromABindingIsLocated) {
  // Issue 25: `--set n=-8` gave p2p_bytes 18446744073709551592 and a 15 us run.
  const std::string e = run(message("n * 8"), {{"n", -8}});
  EXPECT_EQ(e,
            "t.psl:5:17: send size 'n * 8' is -64 with this binding; a message size must be a whole number of "
            "bytes from 0 to 2^53 - 1");
}

TEST(Quantities, SizesBeyondTwoToThe53AreRefused) {
  // `size 2^63` and `size 1e300` became 2^63 or 0 bytes.
  // (With constants the checker already refuses them; a binding reaches the instantiation.)
  auto g = message("pow(2, n)");
  EXPECT_NE(run(g, {{"n", 63}}).find("send size 'pow(2, n)' is 9.22337203685478e+18"), std::string::npos);
  EXPECT_NE(run(message("n"), {{"n", 1e300}}).find("is 1e+300 with this binding"), std::string::npos);
  EXPECT_NE(run(g, {{"n", 53}}).find("from 0 to 2^53 - 1"), std::string::npos);
  EXPECT_EQ(run(message("pow(2, n) - 1"), {{"n", 53}}), "");  // the largest size is fine
  EXPECT_EQ(run(message("0")), "");
}

TEST(Quantities, FractionalAndUndefinedSizesAreRefused) {
  // `size 0.5` (through a binding), `floor(8/r)` and `8 % r` at r = 0.
  EXPECT_NE(run(message("n * 8"), {{"n", 0.0625}}).find("is 0.5 with this binding"), std::string::npos);
  EXPECT_NE(run(message("floor(8 / r)"), {{"r", 0}}).find("send size 'floor(8 / r)' is infinite"), std::string::npos);
  EXPECT_NE(run(message("8 % r"), {{"r", 0}}).find("send size '8 % r' is not a number"), std::string::npos);
}

TEST(Quantities, SizesThatDependOnLoopsAreCheckedAsTheyRun) {
  auto g = load(
      "model M {\n  taskgraph g {\n    processes { [p] : 0 <= p < 2 };\n    for k in 0 .. 3 {\n"
      "      if p == 0 { send to [1] size 100 - 40 * k; } else { recv from [0] size 100 - 40 * k; }\n    }\n  }\n}\n");
  const std::string e = run(g);
  EXPECT_NE(e.find("t.psl:5:19: send size '100 - 40 * k' is -20 with this binding"), std::string::npos) << e;
}

TEST(Quantities, CollectiveSizesTagsAndRootsAreChecked) {
  auto coll = [](const std::string& clause) {
    return load(
        "model M {\n  param P = 4, x = 0;\n  taskgraph g {\n    processes { [p] : 0 <= p < P };\n"
        "    bcast " +
        clause + ";\n  }\n}\n");
  };
  EXPECT_NE(run(coll("size 8 * x root 0"), {{"x", -1}}).find("bcast size '8 * x' is -8"), std::string::npos);
  const std::string e = run(coll("size 8 root x"), {{"x", 4}});
  EXPECT_NE(e.find("t.psl:5:5: bcast root 'x' is 4 with this binding; the root must be a rank from 0 to 3"),
            std::string::npos)
      << e;
  EXPECT_NE(run(coll("size 8 root x"), {{"x", 0.5}}).find("root 'x' is 0.5"), std::string::npos);
  auto tagged = load(
      "model M {\n  param t = 1;\n  taskgraph g {\n    processes { [p] : 0 <= p < 2 };\n"
      "    if p == 0 { send to [1] size 8 tag t; } else { recv from [0] size 8 tag t; }\n  }\n}\n");
  EXPECT_NE(run(tagged, {{"t", 2147483648.0}}).find("send tag 't' is 2147483648 with this binding; a tag must be"),
            std::string::npos);
  EXPECT_NE(run(tagged, {{"t", -3}}).find("tag 't' is -3"), std::string::npos);
  EXPECT_EQ(run(tagged, {{"t", 2147483647.0}}), "");
}

// ---------------------------------------------------------------- work

TEST(Quantities, TaskWorkBeyondTheClockOrNegativeIsRefused) {
  // Issue 25: work 1e15, 2^63 - 1 or -10 gave 0 ns of compute.
  InstantiateOptions wg60;
  wg60.ns_per_work = 60;
  auto g = task("w");
  std::string e = run(g, {{"w", 1e15}}, wg60);
  EXPECT_NE(e.find("t.psl:5:5: task t: work 'n' = 1e+15 takes 60000000 s at 60 ns per unit of work; one operation "
                   "may take at most 2^60 ps"),
            std::string::npos)
      << e;
  EXPECT_NE(run(g, {{"w", 9223372036854775807.0}}, wg60).find("at most 2^60 ps"), std::string::npos);
  e = run(g, {{"w", -10}}, wg60);
  EXPECT_NE(e.find("task t: work 'n' is -10 with this binding; work must be a finite number >= 0"), std::string::npos)
      << e;
  EXPECT_NE(run(task("1 / (w - 11)"), {{"w", 11}}).find("is infinite"), std::string::npos);
  EXPECT_EQ(run(g, {{"w", 1e9}}, wg60), "");
}

TEST(Quantities, ComputeTimesAreExact) {
  InstantiateOptions wg;
  wg.ns_per_work = 0.37;
  ModelSchedule s(task("w"), {{"w", 12345}}, wg);
  OpBuffer buf;
  s.pull(0, 10, buf);
  ASSERT_EQ(buf.ops.size(), 1u);
  EXPECT_EQ(buf.ops[0].duration, 4567650u);  // 12345 x 370 ps
}

// ---------------------------------------------------------------- loops

TEST(Budgets, ATrillionIterationLoopStopsAtOnce) {
  // Issue 25: `for k in 1 .. 1e12 { barrier; }` grew 40 B an iteration in
  // `taskgraph --stats` and ran without end in `simulate`.
  auto g = load(
      "model M {\n  param P = 2;\n  taskgraph g {\n    processes { [p] : 0 <= p < P };\n"
      "    for k in 1 .. 1e12 { barrier; }\n  }\n}\n");
  const std::string e = run(g);
  EXPECT_EQ(e,
            "t.psl:5:5: loop 'for k in 1 .. 1000000000000' would run 1000000000000 times with this binding; the "
            "limit is 1000000000 iterations (raise it with --limit loop-iterations=N)");
}

TEST(Budgets, LoopBoundsThatAreNotFiniteAreLocatedErrors) {
  auto g = load(
      "model M {\n  param r = 1;\n  taskgraph g {\n    processes { [p] : 0 <= p < 2 };\n"
      "    for k in 1 .. 1 / r { barrier; }\n  }\n}\n");
  EXPECT_NE(run(g, {{"r", 0}}).find("t.psl:5:5: loop 'for k in 1 .. 1 / r' has the bounds 1 .. infinite"),
            std::string::npos);
  auto stepped = load(
      "model M {\n  param s = 1;\n  taskgraph g {\n    processes { [p] : 0 <= p < 2 };\n"
      "    for k in 1 .. 4 step s { barrier; }\n  }\n}\n");
  EXPECT_NE(run(stepped, {{"s", 0}}).find("has the step 0 with this binding; the step must be > 0"), std::string::npos);
  EXPECT_EQ(run(stepped, {{"s", 2}}), "");
}

TEST(Budgets, LoopAndOperationLimitsCanBeChanged) {
  LimitsGuard guard;
  auto g = load(
      "model M {\n  param n = 100;\n  taskgraph g {\n    processes { [p] : 0 <= p < 4 };\n"
      "    for k in 1 .. n { barrier; }\n  }\n}\n");
  default_instantiation_limits().max_loop_iterations = 99;
  EXPECT_NE(run(g).find("would run 100 times with this binding; the limit is 99 iterations"), std::string::npos);
  default_instantiation_limits().max_loop_iterations = 100;
  EXPECT_EQ(run(g), "");
  // 4 ranks x 100 dissemination barriers of 2 rounds x 2 operations = 1600 operations.
  default_instantiation_limits().max_operations = 1599;
  EXPECT_NE(run(g).find("has more than 1599 operations with this binding"), std::string::npos);
  default_instantiation_limits().max_operations = 1600;
  EXPECT_EQ(run(g), "");
}

TEST(Budgets, StatisticsCountCollectivesInConstantMemory) {
  auto g = load(
      "model M {\n  param n = 3;\n  taskgraph g {\n    processes { [p] : 0 <= p < 4 };\n"
      "    for k in 1 .. n { barrier; allreduce size 8; }\n    bcast size 8 root 1;\n  }\n}\n");
  ModelSchedule s(g, {}, {});
  const GraphStatistics st = collect_statistics(s);
  EXPECT_EQ(st.collectives, 7u);
}

// ---------------------------------------------------------------- memory and process sets

TEST(Budgets, ABillionProcessesAreRefusedBeforeAllocating) {
  // Issue 25: P = 10^9 aborted on bad_alloc after 8-18 GB.
  LimitsGuard guard;
  default_instantiation_limits().memory_limit_bytes = std::uint64_t{1} << 30;  // 1 GiB, whatever this host has
  auto g = load(
      "model M {\n  param P = 1000000000;\n  taskgraph g {\n    processes { [p] : 0 <= p < P };\n"
      "    barrier;\n  }\n}\n");
  const std::string e = run(g);
  EXPECT_NE(e.find("instantiating 1000000000 processes of model M ("), std::string::npos) << e;
  EXPECT_NE(e.find("more than the memory limit of 1.0 GiB (--memory-limit)"), std::string::npos) << e;
  EXPECT_EQ(run(g, {{"P", 1000}}), "");
}

TEST(Budgets, RequireMemoryNamesWhatAndHowMuch) {
  LimitsGuard guard;
  default_instantiation_limits().memory_limit_bytes = 1000;
  EXPECT_NO_THROW(require_memory(1000, "x"));
  try {
    require_memory(3 * 1024 * 1024, "a simulation of 8 ranks");
    FAIL();
  } catch (const ResourceError& e) {
    EXPECT_STREQ(e.what(),
                 "a simulation of 8 ranks needs about 3.0 MiB, more than the memory limit of 1000 B (--memory-limit)");
  }
  // With no limit given it is the memory free now, which other processes
  // change between two reads: it must lie between a read before and after.
  default_instantiation_limits().memory_limit_bytes = 0;
  const std::uint64_t before = available_memory_bytes();
  const std::uint64_t limit = memory_limit_bytes();
  const std::uint64_t after = available_memory_bytes();
  EXPECT_GT(before, 0u);  // Linux: /proc/meminfo
  EXPECT_GE(limit, std::min(before, after));
  EXPECT_LE(limit, std::max(before, after));
}

TEST(Budgets, ProcessSetsBeyondTwoToThe31AndEmptyOnesAreLocated) {
  auto g = load(
      "model M {\n  param P = 4;\n  taskgraph g {\n    processes { [p] : 0 <= p < P };\n"
      "    barrier;\n  }\n}\n");
  EXPECT_EQ(run(g, {{"P", 0}}),
            "t.psl:4:15: the process set is empty for this binding ({ [p] : 0 <= p < P } with P = 0)");
  EXPECT_EQ(run(g, {{"P", 2147483648.0}}),
            "t.psl:4:15: the process set has 2147483648 processes for this binding; at most 2^31 - 1 are supported ({ "
            "[p] : 0 <= p < P } with P = 2147483648)");
}

TEST(Budgets, IslBudgetLeavesTheCommunicationCheckUndecided) {
  // Sweep3D's check needs between 3 x 10^4 and 10^5 isl operations: with a
  // budget of 3 x 10^4 one loop nest is left unchecked, with a warning.
  auto& isl_budget = base::isl_operation_budget();
  const unsigned long saved = isl_budget;
  psl::Frontend fe;
  ASSERT_TRUE(fe.load_files({std::string(POEMS_SOURCE_DIR) + "/examples/sweep3d/sweep3d.psl"}));
  const StaticTaskGraph g = lower_model(fe.program(), fe.sources(), "");
  EXPECT_EQ(check_communication(g, fe.mutable_diagnostics()), 0u);
  EXPECT_EQ(fe.diagnostics().warning_count(), 0u);
  isl_budget = 30000;
  EXPECT_EQ(check_communication(g, fe.mutable_diagnostics()), 0u);
  isl_budget = saved;
  ASSERT_EQ(fe.diagnostics().warning_count(), 1u);
  EXPECT_NE(fe.diagnostics().all().back().message.find("was not checked: isl gave up after 30000 operations"),
            std::string::npos);
}

TEST(Budgets, AnExpressionAtTheDepthLimitGoesThroughEveryStage) {
  // The front end allows 1,000 operators on a path; lowering, specialization
  // and evaluation recurse that deep on this thread's ordinary stack.
  std::string sum = "8";
  for (int i = 0; i < 998; ++i) sum += " + 8";  // 998 operators deep; with `+ k - k`, 1,000
  auto g = load("model M {\n  param P = 2, s = " + sum +
                ";\n  taskgraph g {\n    processes { [p] : 0 <= p < P };\n"
                "    for k in 1 .. 2 {\n      if p == 0 { send to [1] size " +
                sum +
                " + k - k; } else { recv from [0] "
                "size " +
                sum + " + k - k; }\n    }\n  }\n}\n");
  ModelSchedule s(g, {}, {});
  const GraphStatistics st = collect_statistics(s);
  EXPECT_EQ(st.p2p_messages, 2u);
  EXPECT_EQ(st.p2p_bytes, 2u * 999 * 8);
}

TEST(Quantities, ALetTheBindingDividesByZeroIsNamed) {
  // `--set mk=0` made Sweep3D's kb = ceil(kt / mk) infinite: the error names
  // the let and what it read, not the loop bound it made infinite.
  auto g = load(
      "model M {\n  param kt = 150, mk = 10;\n  let kb = ceil(kt / mk);\n  taskgraph g {\n"
      "    processes { [p] : 0 <= p < 2 };\n    for k in 1 .. kb { barrier; }\n  }\n}\n");
  EXPECT_EQ(run(g, {{"mk", 0}}),
            "t.psl:3:7: 'kb' = ceil(kt / mk) is infinite with this binding (kt = 150, mk = 0); "
            "a division by zero?");
  EXPECT_EQ(run(g, {{"mk", 7}}), "");
}

}  // namespace limits_tests
