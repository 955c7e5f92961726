// `poems analyze` on the Sweep3D specification and on single collectives,
// checked against `poems simulate` (in process).
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "run_command.h"

// Its own namespace: unity builds (tests/CMakeLists.txt) batch files together.
namespace analyze_tests {

namespace {

CommandResult poems_run(const std::string& args) { return poems_in_process(args); }
const std::string kSpec = std::string(POEMS_SOURCE_DIR) + "/examples/sweep3d/sweep3d.psl --machine Odin";

}  // namespace

TEST(CliAnalyze, Sweep3DClosedFormAndCriticalPathAgreeWithTheSimulator) {
  const std::string sets = " --set npe_i=4 --set npe_j=3 --set mk=5 --set mmi=2 --set iterations=2 --no-store";
  CommandResult sim = poems_run("simulate " + kSpec + sets + " --format json --max-ranks-listed 0");
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  auto s = nlohmann::json::parse(sim.out);
  const double sim_ns = s["finish_ns"].get<double>();
  const double sim_comm = s["overhead_ns"].get<double>() / s["processes"].get<double>();
  for (const char* method : {"closed-form", "critical-path"}) {
    CommandResult r = poems_run("analyze " + kSpec + sets + " --format json --method " + method);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["evaluator"], "analytic[LogGP]");
    EXPECT_EQ(j["method"], method);
    const double t = j["time_ns"].get<double>();
    EXPECT_LT(std::abs(t - sim_ns) / sim_ns, 0.02) << method << ": " << t << " vs " << sim_ns;
    // The breakdown adds up; communication CPU time is the simulator's, exactly.
    EXPECT_DOUBLE_EQ(j["compute_ns"].get<double>() + j["comm_ns"].get<double>() + j["sync_ns"].get<double>(), t);
    EXPECT_DOUBLE_EQ(j["comm_ns"].get<double>(), sim_comm) << method;
    EXPECT_DOUBLE_EQ(j["compute_ns"].get<double>(), 2 * 8 * 3 * 30 * 60.0 * 38 * 50 * 5 * 2) << method;
  }
}

TEST(CliAnalyze, DefaultsToTheClosedFormAndStoresTheRun) {
  CommandResult r = poems_run("analyze " + kSpec + " --set npe_i=8 --set npe_j=8 --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["method"], "closed-form");
  CommandResult runs = poems_run("db runs --format json");
  ASSERT_EQ(runs.exit_code, 0) << runs.err;
  bool found = false;
  for (const auto& run : nlohmann::json::parse(runs.out))
    if (run["evaluator"] == "analytic[LogGP]" && run["binding"]["parameters"]["npe_i"] == 8) found = true;
  EXPECT_TRUE(found) << runs.out;
}

TEST(CliAnalyze, CollectiveClosedFormEqualsTheSimulator) {
  const std::string args = " --collective bcast --algorithm binomial --procs 16 --size 1KiB --no-store --format json";
  CommandResult a = poems_run("analyze" + args);
  CommandResult s = poems_run("simulate" + args);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(s.exit_code, 0) << s.err;
  EXPECT_EQ(nlohmann::json::parse(a.out)["method"], "closed-form");
  EXPECT_EQ(nlohmann::json::parse(a.out)["time_ns"].get<double>(),
            nlohmann::json::parse(s.out)["finish_ns"].get<double>());
  // An incomplete tree has no exact form: the default falls back to the critical path.
  CommandResult cp = poems_run("analyze --collective bcast --procs 6 --size 1KiB --no-store --format json");
  ASSERT_EQ(cp.exit_code, 0) << cp.err;
  EXPECT_EQ(nlohmann::json::parse(cp.out)["method"], "critical-path");
  CommandResult forced = poems_run("analyze --collective bcast --procs 6 --size 1KiB --no-store --method closed-form");
  EXPECT_EQ(forced.exit_code, 2);
  EXPECT_NE(forced.err.find("no closed form of bcast/binomial"), std::string::npos) << forced.err;
}

TEST(CliAnalyze, BadParametersAreInputErrors) {
  CommandResult r = poems_run("analyze " + kSpec + " --set mk=0 --no-store");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("mk"), std::string::npos) << r.err;
  CommandResult usage = poems_run("analyze " + kSpec + " --method exact --no-store");
  EXPECT_EQ(usage.exit_code, 2);
  // Command-line LogGOPS parameters are checked as `poems simulate` checks them.
  CommandResult latency = poems_run("analyze --collective bcast --procs 4 -L 2e13 --no-store");
  EXPECT_EQ(latency.exit_code, 2);
  EXPECT_NE(latency.err.find("-L: '2e13' is out of range; expected a time in 0..1e12 ns"), std::string::npos)
      << latency.err;
  CommandResult procs = poems_run("analyze --collective bcast --procs 0 --no-store");
  EXPECT_EQ(procs.exit_code, 2);
  EXPECT_NE(procs.err.find("expected an integer in 1..2147483647"), std::string::npos) << procs.err;
}

}  // namespace analyze_tests
