// A study's `where` constraint: of the cartesian product of its varies, only
// the bindings where the constraint holds are evaluated.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>
#include <vector>

#include "run_command.h"

namespace fs = std::filesystem;

// Its own namespace: unity builds (tests/CMakeLists.txt) batch files together.
namespace constraint_tests {

namespace {

// A px x py grid of processes that meet at a barrier, on a LogGP network.
const char* kGrid = R"(model Grid {
  param px = 2, py = 2;
  taskgraph t {
    processes { [i, j] : 0 <= i < px and 0 <= j < py };
    barrier;
  }
}
component Net in hardware[network] {
  param L = 2us, o = 1us, g = 1us, G = 0.5ns/B, O = 0ns/B, S = 64KiB;
  accepts { profile { evaluation = analytic[LogGP]; L = L; o = o; g = g; G = G; O = O; S = S; }
            transaction message(bytes: bytes) -> time; protocol call_return; }
}
)";

class Constraint : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("poems_constraint_" + std::string(info->name()) + "_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string spec(const std::string& study) const {
    std::ofstream(dir_ / "grid.psl") << kGrid << study;
    return (dir_ / "grid.psl").string();
  }
  fs::path dir_;
};

// The five grids of 16 processes: a 5 x 5 product constrained.
const char* const kSquare = R"(study square {
  model Grid on Net;
  vary px in [1, 2, 4, 8, 16];
  vary py in [1, 2, 4, 8, 16];
  where px * py == 16;
  compare analytic[LogGP];
}
)";

}  // namespace

TEST_F(Constraint, WhereKeepsOnlyTheBindingsWhereItHolds) {
  const std::string file = spec(kSquare);
  CommandResult r = poems_in_process("run " + file + " --study square --no-store --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json table = nlohmann::json::parse(r.out);
  std::vector<std::pair<int, int>> got;
  for (const auto& row : table["rows"]) got.emplace_back(row["binding"]["px"], row["binding"]["py"]);
  const std::vector<std::pair<int, int>> want{{1, 16}, {2, 8}, {4, 4}, {8, 2}, {16, 1}};
  EXPECT_EQ(got, want);
  for (const auto& row : table["rows"]) EXPECT_EQ(row["processes"], 16);
}

TEST_F(Constraint, WhereMayReadAModelParameterItDoesNotVary) {
  const std::string file = spec(R"(study row {
  model Grid on Net;
  vary px in 1 .. 6;
  where px <= py * 2;
  compare analytic[LogGP];
}
)");
  CommandResult r = poems_in_process("run " + file + " --study row --no-store --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json table = nlohmann::json::parse(r.out);
  ASSERT_EQ(table["rows"].size(), 4u);  // py defaults to 2: px in 1..4
  EXPECT_EQ(table["rows"][3]["binding"]["px"], 4);
}

TEST_F(Constraint, AConstraintThatKeepsNoBindingIsAnError) {
  const std::string file = spec(R"(study none {
  model Grid on Net;
  vary px in [1, 2];
  vary py in [1, 2];
  where px * py == 16;
  compare analytic[LogGP];
}
)");
  CommandResult r = poems_in_process("run " + file + " --study none --no-store");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("grid.psl:17:17: study none: its 'where' constraint keeps none of its 4 bindings"),
            std::string::npos)
      << r.err;
}

// --procs on a model whose process set is a px x py grid was refused ("choose
// their values with --vary instead"); with --grid it ranks every factorization.
TEST_F(Constraint, RecommendProcsGridFactorizesATwoParameterProcessSet) {
  const std::string file = spec("");
  CommandResult r = poems_in_process("recommend " + file +
                                     " --model Grid --machine Net --procs 12 --grid --top 10 --no-store --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json answer = nlohmann::json::parse(r.out);
  EXPECT_EQ(answer["candidates"], 6);
  std::set<std::pair<int, int>> got;
  for (const auto& rec : answer["recommendations"]) got.emplace(rec["px"], rec["py"]);
  const std::set<std::pair<int, int>> want{{1, 12}, {2, 6}, {3, 4}, {4, 3}, {6, 2}, {12, 1}};
  EXPECT_EQ(got, want);
}

// `poems recommend --study` ranks the study's bindings: only those its `where` keeps.
TEST_F(Constraint, RecommendOverAStudyRanksOnlyTheBindingsItsWhereKeeps) {
  const std::string file = spec(kSquare);
  CommandResult r = poems_in_process("recommend " + file + " --study square --top 10 --no-store --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json answer = nlohmann::json::parse(r.out);
  EXPECT_EQ(answer["candidates"], 5);
  for (const auto& rec : answer["recommendations"]) EXPECT_EQ(rec["px"].get<int>() * rec["py"].get<int>(), 16);
}

// `poems recommend --vary ... --where EXPR`: the product of the --vary lines
// filtered as a study's `where` filters its varies; a constraint is checked
// as one (names, a boolean), and one that keeps nothing is an error.
TEST_F(Constraint, RecommendVaryWhereRanksOnlyTheCandidatesItKeeps) {
  const std::string file = spec("");
  const std::string base =
      "recommend " + file + " --model Grid --machine Net --no-store --vary px=1..16 --vary py=1..16";
  CommandResult r = poems_in_process(base + " --where \"px * py == 16\" --top 10 --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json answer = nlohmann::json::parse(r.out);
  EXPECT_EQ(answer["candidates"], 5);
  std::set<std::pair<int, int>> got;
  for (const auto& rec : answer["recommendations"]) got.emplace(rec["px"], rec["py"]);
  const std::set<std::pair<int, int>> want{{1, 16}, {2, 8}, {4, 4}, {8, 2}, {16, 1}};
  EXPECT_EQ(got, want);
  // Two constraints: both hold.
  CommandResult two = poems_in_process(base + " --where \"px * py == 16\" --where \"px >= py\" --top 10 --format json");
  ASSERT_EQ(two.exit_code, 0) << two.err;
  EXPECT_EQ(nlohmann::json::parse(two.out)["candidates"], 3);

  CommandResult typo = poems_in_process(base + " --where \"px * pz == 16\"");
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_NE(typo.err.find("--where px * pz == 16: use of undefined name 'pz'; did you mean 'px'?"), std::string::npos)
      << typo.err;
  CommandResult number = poems_in_process(base + " --where \"px + 1\"");
  EXPECT_EQ(number.exit_code, 2);
  EXPECT_NE(number.err.find("--where px + 1: a study's 'where' constraint must be a boolean, not a number"),
            std::string::npos)
      << number.err;
  CommandResult none = poems_in_process(base + " --where \"px > 99\"");
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("--where: keeps none of the 256 candidates of --vary"), std::string::npos) << none.err;
  CommandResult bare =
      poems_in_process("recommend " + file + " --model Grid --machine Net --procs 16 --where \"px > 1\"");
  EXPECT_EQ(bare.exit_code, 2);
  EXPECT_NE(bare.err.find("--where: constrains the candidates of --vary: give --vary"), std::string::npos) << bare.err;
}

// Two machines and no --machine: the machine of the model's only study is
// used; with two studies, the error starts with the fix and lists them.
const char* const kTwoNets = R"(component Slow in hardware[network] {
  param L = 20us, o = 1us, g = 1us, G = 0.5ns/B, O = 0ns/B, S = 64KiB;
  accepts { profile { evaluation = analytic[LogGP]; L = L; o = o; g = g; G = G; O = O; S = S; }
            transaction message(bytes: bytes) -> time; protocol call_return; }
}
study fast {
  model Grid on Net;
  compare analytic[LogGP];
}
)";

TEST_F(Constraint, WithoutMachineTheStudiesOnlyMachineIsUsed) {
  const std::string file = spec(kTwoNets);
  CommandResult bare = poems_in_process("analyze " + file + " --no-store --format json");
  ASSERT_EQ(bare.exit_code, 0) << bare.err;
  CommandResult named = poems_in_process("analyze " + file + " --machine Net --no-store --format json");
  ASSERT_EQ(named.exit_code, 0) << named.err;
  CommandResult slow = poems_in_process("analyze " + file + " --machine Slow --no-store --format json");
  ASSERT_EQ(slow.exit_code, 0) << slow.err;
  const double t = nlohmann::json::parse(bare.out)["time_ns"];
  EXPECT_EQ(t, nlohmann::json::parse(named.out)["time_ns"].get<double>());
  EXPECT_LT(t, nlohmann::json::parse(slow.out)["time_ns"].get<double>());
}

TEST_F(Constraint, WhenStudiesNameTwoMachinesTheErrorStartsWithTheFix) {
  const std::string file = spec(std::string(kTwoNets) + R"(study slow {
  model Grid on Slow;
  compare analytic[LogGP];
}
)");
  CommandResult r = poems_in_process("analyze " + file + " --no-store");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(
      r.err.find("poems: error: name a machine with --machine (Net, Slow) or with `model Grid on Machine;` in a study "
                 "(--study), or give the communication nodes"),
      std::string::npos)
      << r.err;
}

TEST_F(Constraint, TheOnlyStudysMachineHoldsWithSetValues) {
  const std::string file = spec(kTwoNets);
  CommandResult bare = poems_in_process("analyze " + file + " --set px=4 --no-store --format json");
  ASSERT_EQ(bare.exit_code, 0) << bare.err;
  CommandResult named = poems_in_process("analyze " + file + " --set px=4 --machine Net --no-store --format json");
  ASSERT_EQ(named.exit_code, 0) << named.err;
  EXPECT_EQ(nlohmann::json::parse(bare.out)["time_ns"], nlohmann::json::parse(named.out)["time_ns"]);
}

}  // namespace constraint_tests
