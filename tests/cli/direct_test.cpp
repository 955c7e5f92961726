// End-to-end: `poems direct` on programs built with poems-mpicxx (or by the
// build, as poems-mpicxx builds them), and the Sweep3D study `direct`.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "run_command.h"

namespace fs = std::filesystem;

namespace {

const std::string kPoems = POEMS_BINARY;

CommandResult direct(const std::string& args) { return run_command(kPoems + " direct " + args + " --no-store"); }
std::string program(const std::string& name) { return std::string(POEMS_BIN_DIR) + "/" + name; }

std::set<std::string> keys(const nlohmann::json& j) {
  std::set<std::string> k;
  for (const auto& [key, value] : j.items()) k.insert(key);
  return k;
}

}  // namespace

TEST(DirectCli, RingSourceBuildsRunsAndMatchesTheClosedForm) {
  // Two laps around 5 ranks: 10 hops of o + L + o + (8-1)G = 5542 ns (DESIGN 5.1's parameters).
  CommandResult r =
      direct(std::string(POEMS_SOURCE_DIR) + "/examples/direct/ring.cpp -np 5 --compute model --format json -- 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["finish_ns"], 55420);
  EXPECT_EQ(j["processes"], 5);
  EXPECT_EQ(j["messages"], 10);
  EXPECT_EQ(j["completed"], true);
  EXPECT_EQ(j["ranks"].size(), 5u);
  // The program's own output goes to stderr, away from the JSON.
  EXPECT_NE(r.err.find("token 22 after 2 lap(s) of 5 ranks in 55.420 us"), std::string::npos) << r.err;
  // The same JSON shape as `poems simulate`.
  CommandResult s = run_command(kPoems + " simulate --goal " + std::string(POEMS_SOURCE_DIR) +
                                "/examples/goal/tree8.goal --format json --no-store");
  ASSERT_EQ(s.exit_code, 0) << s.err;
  auto sj = nlohmann::json::parse(s.out);
  EXPECT_EQ(keys(j), keys(sj));
  EXPECT_EQ(keys(j["ranks"][0]), keys(sj["ranks"][0]));
}

TEST(DirectCli, SemanticsSwitch) {
  // In the ring every receive is posted before its message arrives: both
  // semantics give the closed form (docs/simulator.md; the late-receive
  // cases are in tests/direct/p2p_test.cpp).
  const std::string ring = program("direct_ring") + " -np 5 --compute model --format json";
  CommandResult r = direct(ring + " --semantics loggopsim -- 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["finish_ns"], 55420);
  r = direct(ring + " --semantics loggopsim --rendezvous-handshake -- 2");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--rendezvous-handshake"), std::string::npos) << r.err;
  r = direct(ring + " --semantics exact -- 2");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--semantics"), std::string::npos) << r.err;
}

TEST(DirectCli, TableOnAMachine) {
  // Odin: o + L + o + max(7 O, 7 G) = 2.3 + 5.3 + 2.3 + 0.0175 us per hop.
  CommandResult r = direct(program("direct_ring") + " -np 4 --machine Odin --compute model -- 3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("token 21 after 3 lap(s) of 4 ranks in 119.010 us"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("program direct_ring (4 ranks) on Odin"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("finish 119010 ns (rank 0)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("direct execution: "), std::string::npos) << r.out;
}

TEST(DirectCli, MeasuredComputationCounts) {
  CommandResult r = direct(program("direct_ring") + " -np 3 --format json -- 1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_GT(j["compute_ns"].get<double>(), 0);
  EXPECT_GT(j["finish_ns"].get<double>(), 3 * 5542);
}

TEST(DirectCli, DeadlockIsAnEvaluationFailure) {
  CommandResult r = direct(program("direct_deadlock") + " -np 2");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("deadlock: 2 rank(s) cannot go on"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("rank 0: the program waits in MPI_Recv"), std::string::npos) << r.err;
}

TEST(DirectCli, UnsupportedCallIsNamed) {
  CommandResult r = direct(program("direct_unsupported") + " -np 2");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("poems: error: rank 0: MPI_File_open: is not supported by POEMS direct execution"),
            std::string::npos)
      << r.err;
  // One line, and no deadlock report before it.
  EXPECT_EQ(r.err.find("deadlock"), std::string::npos) << r.err;
}

TEST(DirectCli, ExitEndsARankOrTheRun) {
  CommandResult ok = direct(program("direct_exits") + " -np 3");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  CommandResult early = direct(program("direct_exits") + " -np 3 -- early");
  EXPECT_EQ(early.exit_code, 3);
  EXPECT_NE(early.err.find("rank 1 exited with status 4 before MPI_Finalize"), std::string::npos) << early.err;
}

TEST(DirectCli, BadInputs) {
  CommandResult r = direct(program("direct_ring") + " -np 0");
  EXPECT_EQ(r.exit_code, 2);
  // mpirun's -np spells --procs, the process count of every command.
  EXPECT_NE(r.err.find("--procs: '0' is out of range; expected an integer in 1..16777216"), std::string::npos) << r.err;
  r = direct("/nonexistent/program -np 2");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("is not an executable file or a C, C++ or Fortran source"), std::string::npos) << r.err;
  r = direct("/bin/true -np 2");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("without a result; build it with poems-mpicc, poems-mpicxx or poems-mpif90"), std::string::npos)
      << r.err;
  r = direct(program("direct_ring") + " -np 2 --algorithm allreduce=linear");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("not an algorithm of allreduce"), std::string::npos) << r.err;
  r = direct(program("direct_ring") + " -np 2 --machine Nowhere");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no component named 'Nowhere'"), std::string::npos) << r.err;
  // Every MPI-3.1 function is declared: one the simulated MPI does not run
  // compiles and stops the run naming itself.
  const fs::path source = fs::temp_directory_path() / ("poems_direct_spawn_" + std::to_string(::getpid()) + ".cpp");
  std::ofstream(source) << "#include <mpi.h>\nint main(int c, char** v) { MPI_Init(&c, &v);\n"
                           "  MPI_Comm_spawn(0, 0, 1, 0, 0, MPI_COMM_WORLD, 0, 0); return 0; }\n";
  r = direct(source.string() + " -np 2");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find(": MPI_Comm_spawn: is not supported by POEMS direct execution"), std::string::npos) << r.err;
  fs::remove(source);
}

TEST(DirectCli, EveryRankHasItsOwnGlobalsUnlessThreadsAreAskedFor) {
  const fs::path source = fs::temp_directory_path() / ("poems_direct_globals_" + std::to_string(::getpid()) + ".cpp");
  std::ofstream(source) << "#include <mpi.h>\n#include <cstdio>\nint counter = 0;\nconst int limit = 3;\n"
                           "int main(int c, char** v) { static int calls = 0; MPI_Init(&c, &v); ++counter; ++calls;\n"
                           "  MPI_Finalize(); std::printf(\"%d %d %d\\n\", counter, calls, limit); return 0; }\n";
  // Ranks are processes: each has its own counter, as under mpirun.
  CommandResult r = direct(source.string() + " -np 3");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("3 3 3"), std::string::npos) << r.out;
  std::size_t own = 0;
  for (std::size_t at = r.out.find("1 1 3"); at != std::string::npos; at = r.out.find("1 1 3", at + 1)) ++own;
  EXPECT_EQ(own, 3u) << r.out;
  EXPECT_EQ(r.err.find("mutable global"), std::string::npos) << r.err;
  // Threads share them: asked for explicitly, and each mutable global is named.
  r = direct(source.string() + " -np 3 --isolation threads");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("defines the mutable global 'counter': with --isolation threads all simulated ranks share it"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("defines the mutable global 'main::calls'"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("'limit'"), std::string::npos) << r.err;  // constants are fine
  EXPECT_NE(r.out.find("3 3 3"), std::string::npos) << r.out;    // one counter for all ranks
  fs::remove(source);
}

TEST(DirectCli, Sweep3DStudyAgreesWithTheSimulatorAndTheClosedForm) {
  CommandResult r = run_command(kPoems + " run " + std::string(POEMS_SOURCE_DIR) +
                                "/examples/sweep3d/sweep3d.psl --study direct --format json --no-store");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["rows"].size(), 5u);
  for (const auto& row : j["rows"]) {
    const double direct_ns = row["times_ns"]["simulation[direct]"].get<double>();
    const double sim_ns = row["times_ns"]["simulation[MPI-Sim]"].get<double>();
    const double form_ns = row["times_ns"]["analytic[LogGP]"].get<double>();
    EXPECT_LT(std::fabs(direct_ns - sim_ns), 0.05 * sim_ns) << row.dump();
    EXPECT_LT(std::fabs(direct_ns - form_ns), 0.05 * form_ns) << row.dump();
  }
}
