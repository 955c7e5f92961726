// CoMet (examples/comet/comet.c) end to end: built with poems-mpicc and run
// under `poems direct` on a flat LogGOPS machine, where a message's times are
// known in closed form, and built with Open MPI's mpicc and run under mpirun,
// where only the output's structure is checked (host times vary).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "run_command.h"

namespace {

const std::string kPoems = POEMS_BINARY;
const std::string kCometDirect = COMET_DIRECT;
const std::string kCometOmpi = COMET_OMPI;

// L = 5000 ns, o = 1000 ns, g = 1000 ns, G = 1 ns/B, eager up to 65535 B.
const std::string kFlatMachine = " --compute model --no-store -L 5000 -o 1000 -g 1000 -G 1 -S 65535";

const std::vector<std::string> kAllKernels = {"echo",      "pairwise",   "broadcast", "reduce", "allreduce",
                                              "barrier",   "contention", "overlap",   "guard",  "shift",
                                              "transpose", "rowbcast",   "colbcast"};

CommandResult poems_direct(int ranks, const std::string& args) {
  return run_command(kPoems + " direct " + kCometDirect + " -np " + std::to_string(ranks) + kFlatMachine + " -- " +
                     args);
}

// In a session base of its own: Open MPI 4's session directory races when two
// mpiruns start at once (ctest -j; measure::MpiSessionBase).
CommandResult mpirun(int ranks, const std::string& args) {
  static int counter = 0;
  const std::filesystem::path session =
      std::filesystem::temp_directory_path() /
      ("poems_mpirun_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  std::filesystem::create_directories(session);
  CommandResult r =
      run_command(std::string(POEMS_MPIRUN) + " --allow-run-as-root --oversubscribe --mca orte_tmpdir_base " +
                  session.string() + " -np " + std::to_string(ranks) + " " + kCometOmpi + " " + args);
  std::error_code ec;
  std::filesystem::remove_all(session, ec);
  return r;
}

// One `comet key=value ...` line.
struct Result {
  std::map<std::string, std::string> fields;
  double number(const std::string& key) const { return std::stod(fields.at(key)); }
};

// The result lines of a run (header lines start with '#'; skipped kernels have no numbers).
std::vector<Result> results(const std::string& out) {
  std::vector<Result> found;
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("comet kernel=", 0) != 0 || line.find("skipped:") != std::string::npos) continue;
    std::istringstream words(line.substr(6));
    std::string word;
    Result r;
    while (words >> word) {
      const auto eq = word.find('=');
      if (eq != std::string::npos) r.fields[word.substr(0, eq)] = word.substr(eq + 1);
    }
    found.push_back(r);
  }
  return found;
}

// Every kernel printed one line per size (barrier and transpose: one), with
// min <= median <= max, in the order asked; the header lines come first.
void expect_every_kernel(const CommandResult& r, int ranks, const std::vector<long>& sizes) {
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("# comet ranks=" + std::to_string(ranks) + " grid=", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("\n# timer wtick_ns="), std::string::npos) << r.out;
  const auto lines = results(r.out);
  std::vector<std::string> expected_order;
  for (const auto& k : kAllKernels) {
    const std::size_t n = (k == "barrier" || k == "transpose") ? 1 : sizes.size();
    for (std::size_t i = 0; i < n; ++i) expected_order.push_back(k);
  }
  ASSERT_EQ(lines.size(), expected_order.size()) << r.out;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const Result& line = lines[i];
    EXPECT_EQ(line.fields.at("kernel"), expected_order[i]) << r.out;
    EXPECT_EQ(line.fields.at("reps"), "3");
    EXPECT_LE(line.number("min_ns"), line.number("median_ns")) << r.out;
    EXPECT_LE(line.number("median_ns"), line.number("max_ns")) << r.out;
    EXPECT_GE(line.number("min_ns"), 0.0);
  }
}

TEST(Comet, EchoOnAFlatMachineTakesOPlusLPlusSizeMinusOneGPlusO) {
  // One way: the send's o, L, (s-1)G on the wire, the receive's o = 7000 + (s-1) ns.
  const CommandResult r = poems_direct(4, "--kernels echo --sizes 1,8,1K,32K --reps 4 --warmup 1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = results(r.out);
  const std::vector<long> sizes = {1, 8, 1024, 32768};
  ASSERT_EQ(lines.size(), sizes.size()) << r.out;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    EXPECT_EQ(lines[i].fields.at("kernel"), "echo");
    EXPECT_EQ(lines[i].number("bytes"), static_cast<double>(sizes[i]));
    EXPECT_EQ(lines[i].fields.at("reps"), "4");
    EXPECT_NEAR(lines[i].number("min_ns"), 7000.0 + static_cast<double>(sizes[i] - 1), 1.0) << r.out;
  }
  EXPECT_EQ(lines[2].fields.at("min_ns"), "8023.0");
  EXPECT_NE(r.out.find("# comet ranks=4 grid=2x2 reps=4 warmup=1 "), std::string::npos) << r.out;
  // Virtual time does not move without computation or messages: no step between reads.
  EXPECT_NE(r.out.find("# timer wtick_ns=0.001 resolution_ns=0.0 reads="), std::string::npos) << r.out;
}

TEST(Comet, PairwiseExchangeAloneOverlapsBothDirections) {
  // Both ranks send at once: each waits o + L + (s-1)G + o for the other's message,
  // as long as the echo's one way, not a round trip.
  const CommandResult r = poems_direct(4, "--kernels pairwise,shift --sizes 1,1K --reps 3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = results(r.out);
  ASSERT_EQ(lines.size(), 4u) << r.out;
  for (const Result& line : lines) {
    const double bytes = line.number("bytes");
    EXPECT_NEAR(line.number("min_ns"), 7000.0 + bytes - 1.0, 1.0) << r.out;
    EXPECT_NEAR(line.number("max_ns"), 7000.0 + bytes - 1.0, 1.0) << r.out;
  }
}

TEST(Comet, EveryKernelRunsUnderPoemsDirectOnTwoAndFourRanks) {
  for (int ranks : {2, 4}) {
    SCOPED_TRACE(ranks);
    const CommandResult r = poems_direct(ranks, "--sizes 0,8,1K --reps 3 --daxpy 1000 --matrix 16");
    expect_every_kernel(r, ranks, {0, 8, 1024});
    EXPECT_NE(r.out.find("comet kernel=transpose bytes=" + std::to_string(16 / ranks * 16 / ranks * 8) + " reps=3 "),
              std::string::npos)
        << r.out;
  }
}

TEST(Comet, JsonIsOneDocumentWithTheSameResults) {
  const CommandResult r = poems_direct(2, "--kernels echo,barrier --sizes 8,1K --reps 3 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // `poems direct` prints its own table after the program's output.
  const std::string document = r.out.substr(0, r.out.find("\n}\n") + 3);
  const auto json = nlohmann::json::parse(document);
  EXPECT_EQ(json.at("benchmark"), "comet");
  EXPECT_EQ(json.at("ranks"), 2);
  EXPECT_EQ(json.at("grid"), "1x2");
  EXPECT_DOUBLE_EQ(json.at("timer").at("wtick_ns").get<double>(), 0.001);
  const auto& lines = json.at("results");
  ASSERT_EQ(lines.size(), 3u) << document;
  EXPECT_EQ(lines[0].at("kernel"), "echo");
  EXPECT_EQ(lines[0].at("bytes"), 8);
  EXPECT_DOUBLE_EQ(lines[0].at("min_ns").get<double>(), 7007.0);
  EXPECT_DOUBLE_EQ(lines[1].at("min_ns").get<double>(), 8023.0);
  EXPECT_EQ(lines[2].at("kernel"), "barrier");
  EXPECT_EQ(lines[2].at("reps"), 3);
}

TEST(Comet, OneRankSkipsTheKernelsOfPairs) {
  // A program built with poems-mpicc runs alone as one rank.
  const CommandResult r = run_command(kCometDirect + " --kernels echo,pairwise,contention,overlap,barrier --sizes 8");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* kernel : {"echo", "pairwise", "contention", "overlap"})
    EXPECT_NE(r.out.find(std::string("comet kernel=") + kernel + " skipped: needs at least 2 ranks\n"),
              std::string::npos)
        << r.out;
  ASSERT_EQ(results(r.out).size(), 1u) << r.out;
  EXPECT_EQ(results(r.out)[0].fields.at("kernel"), "barrier");
}

TEST(Comet, BadParametersExitTwoNamingTheParameterAndItsRange) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--reps 0", "comet: --reps: \"0\" is not allowed; allowed: an integer from 1 to 1000000"},
      {"--warmup -1", "comet: --warmup: \"-1\" is not allowed; allowed: an integer from 0 to 1000000"},
      {"--sizes 8,17M", "comet: --sizes: \"17M\" is not allowed; allowed: a comma-separated list"},
      {"--sizes 8,,16", "comet: --sizes: \"8,,16\" is not allowed"},
      {"--load 1.5", "comet: --load: \"1.5\" is not allowed; allowed: a number from 0 to 1"},
      {"--daxpy x", "comet: --daxpy: \"x\" is not allowed; allowed: an integer from 0 to 100000000"},
      {"--matrix 6", "comet: --matrix: \"6\" is not allowed; allowed: a multiple of the number of ranks (4)"},
      {"--grid 3x3", "comet: --grid: \"3x3\" is not allowed; allowed: RxC with R, C >= 1 and R * C = the number"},
      {"--kernels echo,ping",
       "comet: --kernels: \"ping\" is not allowed; allowed: a comma-separated list of: all, echo"},
      {"--reps", "comet: --reps: \"\" is not allowed; allowed: a value after the option"},
      {"--fast", "comet: option: \"--fast\" is not allowed; allowed: --kernels, --sizes"},
  };
  for (const auto& [args, message] : cases) {
    SCOPED_TRACE(args);
    // Every rank checks the arguments before communicating: all exit with 2,
    // rank 0 prints why (`poems direct` reports the ranks' failure as 3).
    const CommandResult direct = poems_direct(4, args);
    EXPECT_EQ(direct.exit_code, 3) << direct.out << direct.err;
    EXPECT_NE(direct.err.find(message), std::string::npos) << direct.err;
    EXPECT_NE(direct.err.find("exited with status 2"), std::string::npos) << direct.err;
    EXPECT_EQ(direct.out.find("comet kernel="), std::string::npos) << direct.out;
  }
  const CommandResult alone = run_command(kCometDirect + " --grid 2x1");
  EXPECT_EQ(alone.exit_code, 2);
  EXPECT_NE(alone.err.find("comet: --grid: \"2x1\" is not allowed; allowed: RxC with R, C >= 1 and R * C = the "
                           "number of ranks (1)"),
            std::string::npos)
      << alone.err;
}

TEST(Comet, BuildsWithOpenMpiAndRunsEveryKernelUnderMpirun) {
  for (int ranks : {2, 4}) {
    SCOPED_TRACE(ranks);
    const CommandResult r = mpirun(ranks, "--sizes 0,8,1K --reps 3 --daxpy 1000 --matrix 16");
    expect_every_kernel(r, ranks, {0, 8, 1024});
  }
  const CommandResult bad = mpirun(2, "--load -0.5");
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_NE(bad.err.find("comet: --load: \"-0.5\" is not allowed; allowed: a number from 0 to 1"), std::string::npos)
      << bad.err;
}

}  // namespace
