// The per-feature programs of tests/direct/programs, each built for direct
// execution and with Open MPI's wrappers (tests/CMakeLists.txt), print the
// same lines under `poems direct`'s runtime as under mpirun (sorted: ranks
// print in either order); and the direct-only programs give known answers:
// clocks and sleeps in virtual time, failures as failed runs.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "run_command.h"

namespace fs = std::filesystem;

namespace {

const std::string kBin = POEMS_BIN_DIR;

std::vector<std::string> sorted_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(line);
  std::sort(lines.begin(), lines.end());
  return lines;
}

struct DirectRun {
  CommandResult command;
  nlohmann::json result;  // the runtime's result (null if none was written)
};

// Runs a program built for direct execution as `ranks` ranks (the runtime
// reads its options from the environment, as `poems direct` passes them).
DirectRun run_direct(const std::string& program, int ranks, const std::string& args,
                     const std::string& extra_options = "", const std::string& env = "") {
  static int counter = 0;
  const fs::path result =
      fs::temp_directory_path() / ("poems_programs_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  const std::string options = "{\"ranks\":" + std::to_string(ranks) + extra_options + "}";
  DirectRun r;
  r.command = run_command(env + " POEMS_DIRECT_OPTIONS='" + options + "' POEMS_DIRECT_RESULT=" + result.string() + " " +
                          kBin + "/" + program + " " + args);
  std::ifstream in(result);
  if (in) r.result = nlohmann::json::parse(in, nullptr, false);
  fs::remove(result);
  return r;
}

CommandResult run_mpirun(const std::string& program, int ranks, const std::string& args,
                         const std::string& mpirun_options) {
  return run_command(std::string(POEMS_MPIRUN) + " --allow-run-as-root --oversubscribe " + mpirun_options + " -np " +
                     std::to_string(ranks) + " " + kBin + "/" + program + " " + args);
}

struct Feature {
  std::string name;
  std::vector<int> ranks;
  std::string args;
  std::string mpirun_options = "";
};

std::string feature_name(const ::testing::TestParamInfo<Feature>& info) { return info.param.name; }

class SameAsMpirun : public ::testing::TestWithParam<Feature> {};

TEST_P(SameAsMpirun, PrintsTheSameLines) {
  const Feature& f = GetParam();
  for (int ranks : f.ranks) {
    const CommandResult reference = run_mpirun("ompi_feature_" + f.name, ranks, f.args, f.mpirun_options);
    ASSERT_EQ(reference.exit_code, 0) << f.name << " under mpirun, " << ranks << " ranks:\n" << reference.err;
    const DirectRun direct = run_direct("direct_feature_" + f.name, ranks, f.args);
    ASSERT_EQ(direct.command.exit_code, 0) << f.name << " under direct execution, " << ranks << " ranks:\n"
                                           << direct.command.err << direct.result.dump();
    EXPECT_TRUE(direct.result.value("completed", false)) << direct.result.dump();
    const std::vector<std::string> expected = sorted_lines(reference.out), got = sorted_lines(direct.command.out);
    EXPECT_FALSE(expected.empty());
    EXPECT_EQ(got, expected) << f.name << " at " << ranks << " ranks";
  }
}

INSTANTIATE_TEST_SUITE_P(Features, SameAsMpirun,
                         ::testing::Values(Feature{"p2p", {2, 3}, ""}, Feature{"collectives", {1, 3}, ""},
                                           Feature{"nonblocking_collectives", {2, 3}, ""},
                                           Feature{"datatypes", {2, 3}, ""}, Feature{"topology", {2, 4}, ""},
                                           Feature{"communicators", {3}, ""},
                                           // Open MPI 4.1.4's osc/rdma crashes in MPI_Compare_and_swap over vader.
                                           Feature{"rma", {2, 3}, "", "--mca osc pt2pt"},
                                           Feature{"per_rank_state", {3}, "-n 3 -v"},
                                           Feature{"reduction_order", {3, 8}, ""}, Feature{"fortran77", {1, 3}, ""},
                                           Feature{"fortran90", {2, 3}, ""}),
                         feature_name);

// Under --compute model only the sleeps take time: the clocks see exactly
// them, with ranks as processes and as threads (in the sanitizer build the
// sanitizer's own clock reads once broke both: docs/direct.md).
TEST(DirectPrograms, ClocksAndSleepsAreVirtual) {
  for (const char* isolation : {"processes", "threads"}) {
    SCOPED_TRACE(isolation);
    const DirectRun r = run_direct("direct_virtual_time", 2, "",
                                   ",\"compute\":\"model\",\"isolation\":\"" + std::string(isolation) + "\"");
    ASSERT_EQ(r.command.exit_code, 0) << r.command.err;
    ASSERT_TRUE(r.result.is_object());
    EXPECT_EQ(r.result["operations"].get<int>(), 21);  // no operation but the program's
    const std::string& out = r.command.out;
    EXPECT_NE(out.find("monotonic 2003750000\n"), std::string::npos) << out;
    EXPECT_NE(out.find("realtime 2003750000\n"), std::string::npos) << out;
    EXPECT_NE(out.find("gettimeofday 2003750\n"), std::string::npos) << out;
    EXPECT_NE(out.find("time 2\n"), std::string::npos) << out;
    EXPECT_NE(out.find("wtime 2.003750000\n"), std::string::npos) << out;
    EXPECT_NE(out.find("remain 9 9\n"), std::string::npos) << out;  // untouched: a virtual sleep is never interrupted
    // Rank 0 entered the barrier last (after its sleeps): rank 1 leaves it L
    // later and sends; then o + L + o + 3G (default LogGOPS: 2500 + 1500 +
    // 2500 + 1500 + 18 ns).
    EXPECT_NE(out.find("receive 8018 value 42\n"), std::string::npos) << out;
    EXPECT_NE(out.find("cpu clock below a tenth of the sleep 1\n"), std::string::npos) << out;
  }
}

TEST(DirectPrograms, FailuresAreFailedRuns) {
  struct Case {
    const char* how;
    const char* error;
    const char* env = "";
  };
  const Case cases[] = {
      {"exit", "rank 1 exited with status 3"},
      {"return", "rank 0 exited with status 5"},
      {"early", "rank 1 exited with status 2 before MPI_Finalize"},
      {"abort", "rank 1 called MPI_Abort with error code 7"},
      // In the sanitizer build ASan's own SIGSEGV handler would report the
      // fault and exit with status 1: the signal is what is tested here.
      {"segv", "rank 1 was killed by signal 11 (Segmentation fault)", "ASAN_OPTIONS=\"$ASAN_OPTIONS:handle_segv=0\""},
      {"unsupported", "rank 1: MPI_File_open: is not supported by POEMS direct execution"},
  };
  for (const Case& c : cases) {
    const DirectRun r = run_direct("direct_failures", 3, c.how, "", c.env);
    EXPECT_EQ(r.command.exit_code, 3) << c.how << ": " << r.command.err;
    ASSERT_TRUE(r.result.is_object()) << c.how;
    EXPECT_FALSE(r.result["completed"].get<bool>()) << c.how;
    EXPECT_NE(r.result["error"].get<std::string>().find(c.error), std::string::npos)
        << c.how << ": " << r.result["error"];
    // What the ranks printed before the failure is not lost.
    EXPECT_NE(r.command.out.find("rank 0 starts"), std::string::npos) << c.how << ": " << r.command.out;
  }
  const DirectRun ok = run_direct("direct_failures", 3, "ok");
  EXPECT_EQ(ok.command.exit_code, 0) << ok.command.err;
  EXPECT_TRUE(ok.result["completed"].get<bool>());
}

// Started alone (as configure scripts and CMake's try-run do), a program is
// one rank and exits with its own status.
TEST(DirectPrograms, AloneAProgramIsOneRankWithItsOwnExitStatus) {
  CommandResult r = run_command(kBin + "/direct_failures ok");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "rank 0 starts\n");
  r = run_command(kBin + "/direct_failures return");
  EXPECT_EQ(r.exit_code, 5) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;  // a plain exit status is not an error message
  r = run_command(kBin + "/direct_feature_p2p");
  EXPECT_NE(r.exit_code, 0);  // p2p needs two ranks: rank 1 does not exist
}

}  // namespace
