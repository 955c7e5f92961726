// `poems simulate` on GOAL files, single collectives and a PSL model (in process).
#include <gtest/gtest.h>

#include <sys/wait.h>
#include "run_command.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace fs = std::filesystem;

namespace {

using SimRun = CommandResult;

SimRun simulate(const std::string& args) { return poems_in_process("simulate " + args); }

std::string goal(const std::string& name) { return std::string(POEMS_SOURCE_DIR) + "/examples/goal/" + name; }

}  // namespace

TEST(CliSimulate, TreeKnownAnswerAsJson) {
  SimRun r = simulate("--goal " + goal("tree8.goal") + " --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["finish_ns"], 34914);
  EXPECT_EQ(j["events"], 21);
  EXPECT_GT(j["events_per_second"].get<double>(), 0);
  std::vector<double> finish;
  for (const auto& rank : j["ranks"]) finish.push_back(rank["finish_ns"].get<double>());
  EXPECT_EQ(finish, (std::vector<double>{34914, 24776, 13138, 13138, 1500, 1500, 1500, 1500}));
  EXPECT_EQ(j["ranks"][1]["overhead_ns"], 16776);
  EXPECT_EQ(j["ranks"][1]["wait_ns"], 8000);
}

// A GOAL file makes no issue-order promise: it is read lazily on trial, and
// in full once an operation turns out to be ready before it was read.
TEST(CliSimulate, ReportsHowTheRanksWereRead) {
  SimRun tree = simulate("--goal " + goal("tree8.goal") + " --format json");
  ASSERT_EQ(tree.exit_code, 0) << tree.err;
  EXPECT_EQ(nlohmann::json::parse(tree.out)["reading"], "lazily");
  // Rank 0's send needs only the calc but comes after a receive and twenty
  // calcs that wait for it: past the first pull, read late.
  const fs::path file = fs::temp_directory_path() / "poems_out_of_order.goal";
  std::string text = "num_ranks 2\nrank 0 {\n c: calc 100\n r: recv 8b from 1\n r requires c\n";
  for (int i = 0; i < 20; ++i)
    text += " d" + std::to_string(i) + ": calc 10\n d" + std::to_string(i) + " requires " +
            (i == 0 ? std::string("r") : "d" + std::to_string(i - 1)) + "\n";
  text += " s: send 8b to 1\n s requires c\n}\nrank 1 {\n s: send 8b to 0\n r: recv 8b from 0\n}\n";
  std::ofstream(file) << text;
  SimRun out_of_order = simulate("--goal " + file.string() + " --format json");
  ASSERT_EQ(out_of_order.exit_code, 0) << out_of_order.err;
  EXPECT_EQ(nlohmann::json::parse(out_of_order.out)["reading"], "in full after a lazy attempt");
  SimRun collective = simulate("--collective bcast --algorithm binomial --procs 64 --size 8");
  ASSERT_EQ(collective.exit_code, 0) << collective.err;
  EXPECT_NE(collective.out.find("ranks read lazily"), std::string::npos) << collective.out;
  fs::remove(file);
}

TEST(CliSimulate, TwoRankKnownAnswerWithUnits) {
  SimRun r = simulate("--goal " + goal("pingpong2.goal") + " -L 1us -o 200 -g 0.1us -G 1ns/B --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["ranks"][0]["finish_ns"], 1200);
  EXPECT_EQ(j["ranks"][1]["finish_ns"], 6995);
}

TEST(CliSimulate, TableAndTimeline) {
  fs::path trace = fs::temp_directory_path() / ("poems_trace_" + std::to_string(::getpid()) + ".json");
  SimRun r = simulate("--goal " + goal("tree8.goal") + " --timeline " + trace.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("finish 34914 ns (rank 0)"), std::string::npos) << r.out;
  std::ifstream in(trace);
  auto j = nlohmann::json::parse(in);
  std::size_t spans = 0;
  for (const auto& e : j["traceEvents"])
    if (e["ph"] == "X") ++spans;
  EXPECT_EQ(spans, 14u);  // 7 sends and 7 receives
  fs::remove(trace);
}

TEST(CliSimulate, CollectiveMatchesTheClosedForm) {
  // Dissemination allreduce, eq. 5: (2o + L + (s-1)G) * ceil(log2 1000) = (3000 + 2500 + 6138) * 10 ns.
  SimRun r = simulate(
      "--collective allreduce --algorithm dissemination --procs 1000 --size 1KiB --format json "
      "--max-ranks-listed 3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["finish_ns"], 116380);
  EXPECT_EQ(j["ranks"].size(), 3u);
}

TEST(CliSimulate, DeadlockExitsThreeWithAReport) {
  SimRun r = simulate("--goal " + goal("deadlock.goal"));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("rank 0: waits in operation 0 recv 8 B from rank 1 tag 7 [r at"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("deadlock.goal:4:3]"), std::string::npos) << r.err;
}

TEST(CliSimulate, BadGoalExitsOneWithDiagnostics) {
  SimRun r = simulate("--goal " + std::string(POEMS_SOURCE_DIR) + "/tests/goal/errors/cycle.goal");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("cycle.goal:8:3: error: dependency cycle in rank 0: b -> c -> b"), std::string::npos) << r.err;
  SimRun missing = simulate("--goal /nonexistent.goal");
  EXPECT_EQ(missing.exit_code, 1);
}

TEST(CliSimulate, BadParametersExitTwoNamingTheParameter) {
  SimRun r = simulate("--goal " + goal("tree8.goal") + " -G 5us");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("-G"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("0..1e6 ns/B"), std::string::npos) << r.err;
  SimRun a = simulate("--collective bcast --algorithm ring --procs 4");
  EXPECT_EQ(a.exit_code, 2);
  EXPECT_NE(a.err.find("expected one of binomial, linear"), std::string::npos) << a.err;
  SimRun none = simulate("-L 5");
  EXPECT_EQ(none.exit_code, 2);
  SimRun cpus = simulate("--goal " + goal("tree8.goal") + " --cpus 0");
  EXPECT_EQ(cpus.exit_code, 2);
}

TEST(CliSimulate, PslSpecificationOnItsMachine) {
  SimRun r =
      simulate(std::string(POEMS_SOURCE_DIR) + "/examples/sweep3d/sweep3d.psl --machine Odin --set iterations=1");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("model Sweep3D (6 processes) on Odin, Wg=60ns from Opteron"), std::string::npos) << r.out;
}
