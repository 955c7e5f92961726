// End-to-end: the message-progress switch (--semantics) of `poems simulate`
// and `poems analyze`, LogGOPSim's GOAL, and the limits of GOAL quantities.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "run_command.h"

namespace fs = std::filesystem;

// Its own namespace: unity builds (tests/CMakeLists.txt) batch files together.
namespace semantics_tests {

namespace {

// In process (poems::cli::run).
CommandResult poems_run(const std::string& args) { return poems_in_process(args); }

// A GOAL file in the test's temporary directory.
std::string write_goal(const std::string& name, const std::string& text) {
  const fs::path file = fs::temp_directory_path() / ("poems_semantics_" + std::to_string(::getpid()) + "_" + name);
  std::ofstream(file) << text;
  return file.string();
}

std::vector<double> finishes(const std::string& json) {
  std::vector<double> out;
  const nlohmann::json j = nlohmann::json::parse(json);
  for (const auto& rank : j["ranks"]) out.push_back(rank["finish_ns"].get<double>());
  return out;
}

// Sweep3D on Odin (the specification has several machines).
const std::string kSpec = std::string(POEMS_SOURCE_DIR) + "/examples/sweep3d/sweep3d.psl --machine Odin";

}  // namespace

// tests/sim/loggopsim_rules_test.cpp: an unexpected message processed when
// it arrives (loggopsim, LogGOPSim's figures) or once its receive is posted.
TEST(CliSemantics, SimulateTakesTheSwitch) {
  const std::string file = write_goal("unexpected.goal", R"(num_ranks 3
rank 0 {
s: send 8b to 1
}
rank 1 {
r1: recv 8b from 2
r2: recv 8b from 0
r2 requires r1
}
rank 2 {
c: calc 10000
s: send 8b to 1
s requires c
}
)");
  CommandResult lgs = poems_run("simulate --goal " + file + " --semantics loggopsim --no-store --format json");
  ASSERT_EQ(lgs.exit_code, 0) << lgs.err;
  EXPECT_EQ(finishes(lgs.out), (std::vector<double>{1500, 15542, 11500}));
  CommandResult matched = poems_run("simulate --goal " + file + " --no-store --format json");
  ASSERT_EQ(matched.exit_code, 0) << matched.err;
  EXPECT_EQ(finishes(matched.out), (std::vector<double>{1500, 17084, 11500}));
  CommandResult table = poems_run("simulate --goal " + file + " --semantics loggopsim --no-store");
  EXPECT_NE(table.out.find("loggopsim semantics"), std::string::npos) << table.out;
  CommandResult bad = poems_run("simulate --goal " + file + " --semantics lazy --no-store");
  EXPECT_EQ(bad.exit_code, 2);
  CommandResult handshake = poems_run("simulate --goal " + file + " --semantics loggopsim --rendezvous-handshake");
  EXPECT_EQ(handshake.exit_code, 2);
  EXPECT_NE(handshake.err.find("matched semantics"), std::string::npos) << handshake.err;
  fs::remove(file);
}

// As LogGOPSim, a GOAL file gets as many CPUs and NICs as it names.
TEST(CliSemantics, GoalCpusAndNicsDefaultToWhatTheFileNames) {
  const std::string file = write_goal("cpus.goal", R"(num_ranks 1
rank 0 {
a: calc 1000 cpu 0
b: calc 500 cpu 1
b requires a
}
)");
  CommandResult r = poems_run("simulate --goal " + file + " --semantics loggopsim --no-store --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(finishes(r.out), std::vector<double>{1000});
  CommandResult one = poems_run("simulate --goal " + file + " --cpus 1 --no-store");
  EXPECT_EQ(one.exit_code, 3);
  EXPECT_NE(one.err.find("uses CPU 1 but processes have 1"), std::string::npos) << one.err;
  fs::remove(file);
}

// The Sweep3D closed form holds for the matched semantics only: refused
// under loggopsim, where the default method is the critical path.
TEST(CliSemantics, AnalyzeRefusesTheSweep3DClosedFormUnderLoggopsim) {
  CommandResult refused =
      poems_run("analyze " + kSpec + " --set iterations=1 --method closed-form --semantics loggopsim --no-store");
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("holds for the matched semantics only"), std::string::npos) << refused.err;
  CommandResult cp =
      poems_run("analyze " + kSpec + " --set iterations=1 --semantics loggopsim --no-store --format json");
  ASSERT_EQ(cp.exit_code, 0) << cp.err;
  const auto j = nlohmann::json::parse(cp.out);
  EXPECT_EQ(j["method"], "critical-path");
  EXPECT_EQ(j["semantics"], "loggopsim");
  CommandResult sim =
      poems_run("simulate " + kSpec + " --set iterations=1 --semantics loggopsim --no-store --format json");
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  EXPECT_LE(j["time_ns"].get<double>(), nlohmann::json::parse(sim.out)["finish_ns"].get<double>());
}

// Collective forms hold under loggopsim without the rendezvous
// synchronization (tests/loggp), but not for 0-byte messages.
TEST(CliSemantics, AnalyzeCollectivesUnderLoggopsim) {
  // g >= o and G >= O: the NIC dominates, where eq. 1 is exact.
  const std::string call = "--collective scatter --algorithm linear --procs 8 --size 100000 -S 1000 -g 2000";
  CommandResult form = poems_run("analyze " + call + " --semantics loggopsim --no-store --format json");
  ASSERT_EQ(form.exit_code, 0) << form.err;
  EXPECT_EQ(nlohmann::json::parse(form.out)["method"], "closed-form");
  CommandResult sim = poems_run("simulate " + call + " --semantics loggopsim --no-store --format json");
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  EXPECT_EQ(nlohmann::json::parse(form.out)["time_ns"], nlohmann::json::parse(sim.out)["finish_ns"]);
  CommandResult matched = poems_run("analyze " + call + " --no-store --format json");
  EXPECT_GT(nlohmann::json::parse(matched.out)["time_ns"].get<double>(),
            nlohmann::json::parse(form.out)["time_ns"].get<double>());  // 7 L of synchronization
  CommandResult barrier =
      poems_run("analyze --collective barrier --procs 8 --method closed-form --semantics loggopsim --no-store");
  EXPECT_EQ(barrier.exit_code, 2);
  EXPECT_NE(barrier.err.find("0-byte"), std::string::npos) << barrier.err;
}

// POEMS's GOAL export is LogGOPSim's GOAL: no indentation, no comm, tags
// folded, whole-ns calcs, wildcards as -1; and it reads back.
TEST(CliSemantics, TaskgraphWritesLogGOPSimsGoal) {
  const fs::path out = fs::temp_directory_path() / ("poems_export_" + std::to_string(::getpid()) + ".goal");
  CommandResult w =
      poems_run("taskgraph " + kSpec + " --set npe_i=2 --set npe_j=2 --set iterations=1 --goal " + out.string());
  ASSERT_EQ(w.exit_code, 0) << w.err;
  std::ifstream in(out);
  std::string line;
  std::size_t lines = 0, folded = 0;
  while (std::getline(in, line)) {
    ++lines;
    ASSERT_FALSE(line.empty());
    EXPECT_NE(line[0], ' ') << line;
    EXPECT_EQ(line.find("comm"), std::string::npos) << line;
    if (line.find(" tag 2147483648") != std::string::npos) ++folded;
  }
  EXPECT_GT(lines, 100u);
  EXPECT_GT(folded, 0u);  // the allreduce's messages
  // Same time from the export as from the spec, both semantics (Wg = 60 ns: whole ns).
  for (const char* semantics : {"matched", "loggopsim"}) {
    CommandResult spec =
        poems_run("simulate " + kSpec + " --set npe_i=2 --set npe_j=2 --set iterations=1 --semantics " + semantics +
                  " --no-store --format json");
    CommandResult goal =
        poems_run("simulate --goal " + out.string() + " -L 5300 -o 2300 -g 2000 -G 2.5 -O 1 -S 32768 --semantics " +
                  semantics + " --no-store --format json");
    ASSERT_EQ(spec.exit_code, 0) << spec.err;
    ASSERT_EQ(goal.exit_code, 0) << goal.err;
    EXPECT_EQ(nlohmann::json::parse(spec.out)["finish_ns"], nlohmann::json::parse(goal.out)["finish_ns"]) << semantics;
  }
  fs::remove(out);
}

// Every GOAL quantity is checked where it becomes concrete: a located error
// naming the value and the range, exit 1, never a result.
TEST(CliSemantics, GoalQuantitiesBeyondTheClockAreLocatedErrors) {
  const std::string size = write_goal("size.goal", "num_ranks 2\nrank 0 {\ns: send 9223372036854775807b to 1\n}\n");
  CommandResult r = poems_run("simulate --goal " + size + " --no-store");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("size.goal:3:9: error: a size in bytes '9223372036854775807' is out of range "
                       "(0..9007199254740991)"),
            std::string::npos)
      << r.err;
  // Below 2^53 bytes but beyond the clock at G = 6 ns/B: located at simulation time.
  const std::string costly = write_goal(
      "costly.goal", "num_ranks 2\nrank 0 {\ns: send 9007199254740991b to 1\n}\nrank 1 {\nr: recv 8b from 0\n}\n");
  CommandResult c = poems_run("simulate --goal " + costly + " --no-store");
  EXPECT_EQ(c.exit_code, 1);
  EXPECT_NE(c.err.find("costly.goal:3:1: error: s: a message of 9007199254740991 bytes: at most"), std::string::npos)
      << c.err;
  EXPECT_NE(c.err.find("s: send 9007199254740991b to 1\n^"), std::string::npos) << c.err;
  const std::string calc = write_goal("calc.goal", "num_ranks 1\nrank 0 {\nc: calc 9223372036854775\n}\n");
  CommandResult k = poems_run("simulate --goal " + calc + " --no-store");
  EXPECT_EQ(k.exit_code, 1);
  EXPECT_NE(k.err.find("calc.goal:3:9: error: a duration in ns '9223372036854775' is out of range"), std::string::npos)
      << k.err;
  for (const auto& f : {size, costly, calc}) fs::remove(f);
}

// A schedule whose ranks alone need more memory than allowed is refused
// before it is allocated, saying how much it would take.
TEST(CliSemantics, RanksBeyondTheMemoryLimitAreRefused) {
  const std::string file = write_goal("ranks.goal", "num_ranks 100000000\nrank 0 {\nc: calc 1\n}\n");
  CommandResult r = poems_run("simulate --goal " + file + " --no-store --memory-limit 1GiB");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("ranks.goal:1:1: error: num_ranks 100000000 needs about"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("the limit is 1.0 GiB (--memory-limit)"), std::string::npos) << r.err;
  CommandResult collective = poems_run("simulate --collective bcast --procs 20000000 --no-store --memory-limit 1GiB");
  EXPECT_EQ(collective.exit_code, 1);
  EXPECT_NE(collective.err.find("simulating 20000000 processes needs about"), std::string::npos) << collective.err;
  CommandResult bad = poems_run("simulate --goal " + file + " --memory-limit -3");
  EXPECT_EQ(bad.exit_code, 2);
  fs::remove(file);
}

TEST(CliSemantics, AnalyzeTakesTheMemoryLimitToo) {
  CommandResult r =
      poems_run("analyze --collective bcast --procs 20000000 --method critical-path --memory-limit 1GiB --no-store");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("simulating 20000000 processes needs about"), std::string::npos) << r.err;
}

}  // namespace semantics_tests
