// End-to-end: `poems recommend` on the Sweep3D specification, sharing its
// knowledge base with `poems analyze` and `poems simulate`.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>

#include "run_command.h"

// Its own namespace: unity builds (tests/CMakeLists.txt) batch files together.
namespace recommend_tests {

namespace {

namespace fs = std::filesystem;

const std::string kSpec = std::string(POEMS_SOURCE_DIR) + "/examples/sweep3d/sweep3d.psl";

class CliRecommend : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("poems_recommend_cli_" + std::string(info->name()) + "_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string db() const { return (dir_ / "kb.db").string(); }
  CommandResult poems(const std::string& args) const { return poems_in_process(args + " --db '" + db() + "'"); }
  nlohmann::json json(const std::string& args) const {
    CommandResult r = poems(args + " --format json");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json();
  }
  static std::int64_t stored_run(const std::string& err) {
    std::smatch m;
    if (!std::regex_search(err, m, std::regex("(?:stored as run|already stored as run) ([0-9]+)"))) return -1;
    return std::stoll(m[1]);
  }
  fs::path dir_;
};

const std::string kQuestion = " --set it_g=24 --set jt_g=24 --set kt=12 --set iterations=2";
const std::string kProblem = " " + kSpec + kQuestion + " --machine Odin";

TEST_F(CliRecommend, JsonShapeAndWarmQuery) {
  nlohmann::json cold = json("recommend" + kProblem + " --procs 16 --top 3");
  ASSERT_TRUE(cold.is_object());
  ASSERT_EQ(cold["recommendations"].size(), 3u);
  const auto& best = cold["recommendations"][0];
  for (const char* key : {"mk", "mmi", "npe_i", "npe_j", "time_ns", "evidence", "confidence"})
    EXPECT_TRUE(best.contains(key)) << key;
  EXPECT_EQ(best["npe_i"], 4);
  EXPECT_EQ(best["npe_j"], 4);
  EXPECT_EQ(best["evidence"][0]["paradigm"], "analytic[LogGP]");
  EXPECT_EQ(best["evidence"][0]["source"], "evaluated");
  EXPECT_EQ(best["confidence"], 0.5);
  EXPECT_EQ(cold["candidates"], 12 * 4);
  EXPECT_EQ(cold["evidence"]["evaluated"], 48);
  EXPECT_EQ(cold["evidence"]["stored"], 48);
  EXPECT_EQ(cold["problem"]["machine"], "Odin");
  EXPECT_EQ(cold["problem"]["parameters"]["kt"], 12);
  const nlohmann::json warm = json("recommend" + kProblem + " --procs 16 --top 3");
  EXPECT_EQ(warm["evidence"]["reused"], 48);
  EXPECT_EQ(warm["evidence"]["evaluated"], 0);
  EXPECT_EQ(warm["evidence"]["stored"], 0);
  EXPECT_EQ(warm["recommendations"][0]["evidence"][0]["run_id"], best["evidence"][0]["run_id"]);
  EXPECT_EQ(warm["recommendations"][0]["evidence"][0]["source"], "stored");
  // The runs are in the knowledge base for `poems db` to list.
  CommandResult runs = poems("db runs --format json");
  ASSERT_EQ(runs.exit_code, 0) << runs.err;
  EXPECT_EQ(nlohmann::json::parse(runs.out).size(), 48u);
}

TEST_F(CliRecommend, SharesRunsWithAnalyzeAndSimulate) {
  const std::string sets = " --set it_g=24 --set jt_g=24 --set kt=12 --set iterations=2 --set npe_i=4 --set npe_j=4";
  // An analyze first: recommend reuses it as the evidence of that candidate.
  CommandResult a = poems("analyze " + kSpec + sets + " --set mk=3 --set mmi=2 --machine Odin");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  const std::int64_t analyzed = stored_run(a.err);
  ASSERT_GT(analyzed, 0) << a.err;
  nlohmann::json r = json("recommend" + kProblem + " --set mk=3 --set mmi=2 --procs 16 --top 1");
  EXPECT_EQ(r["evidence"]["reused"], 1);
  EXPECT_EQ(r["evidence"]["evaluated"], 0);
  EXPECT_EQ(r["recommendations"][0]["evidence"][0]["run_id"], analyzed);
  // The other candidates it stored are what analyze would have stored.
  json("recommend" + kProblem + " --procs 16");
  CommandResult again = poems("analyze " + kSpec + sets + " --set mk=7 --set mmi=6 --machine Odin");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.err.find("the same run is already stored"), std::string::npos) << again.err;
  // A simulation stored by `poems simulate` is the evidence --confirm finds.
  CommandResult s = poems("simulate " + kSpec + sets + " --set mk=3 --set mmi=2 --machine Odin");
  ASSERT_EQ(s.exit_code, 0) << s.err;
  const std::int64_t simulated = stored_run(s.err);
  nlohmann::json c = json("recommend" + kProblem + " --set mk=3 --set mmi=2 --procs 16 --top 1 --confirm");
  EXPECT_EQ(c["evidence"]["simulated"], 0);
  EXPECT_EQ(c["confirm"]["items"][0]["simulation"]["run_id"], simulated);
  // The closed form lets all ranks start an iteration together after the
  // allreduce; the simulated ranks leave it staggered, which it does not
  // model: -0.38% here at 2 iterations (exact at 1), so the bound is 1%.
  const nlohmann::json& item = c["confirm"]["items"][0];
  EXPECT_LT(std::abs(item["difference_pct"].get<double>()), 1.0);
  // The one difference (core/difference.h): simulated against analytic, percent of the analytic time.
  EXPECT_DOUBLE_EQ(item["difference_pct"].get<double>(),
                   (item["simulated_ns"].get<double>() - item["analytic_ns"].get<double>()) /
                       item["analytic_ns"].get<double>() * 100);
  EXPECT_EQ(c["confirm"]["same_order"], true);
  EXPECT_GT(c["recommendations"][0]["confidence"].get<double>(), 0.95);
}

TEST_F(CliRecommend, ConfirmExplainAndTable) {
  CommandResult r = poems("recommend" + kProblem + " --procs 16 --grid --top 2 --confirm --explain");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("rank  npe_i  npe_j  mk  mmi  time"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("confirm with simulation[MPI-Sim]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("the simulator ranks them in the same order"), std::string::npos) << r.out;
  // 16 processors on 24 x 24: grids 1x16, 2x8, 4x4, 8x2, 16x1 -- five cases to mine.
  EXPECT_NE(r.out.find("rules mined from 5 stored cases (240 runs)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[support "), std::string::npos) << r.out;
  nlohmann::json j = json("recommend" + kProblem + " --procs 16 --grid --explain");
  ASSERT_FALSE(j["rules"].empty());
  std::int64_t mk_support = 0;
  for (const auto& rule : j["rules"])
    if (rule["data"]["target"] == "mk") mk_support += rule["support"].get<std::int64_t>();
  EXPECT_EQ(mk_support, 5);
  CommandResult stored =
      poems("db query \"SELECT count(*) AS n FROM recommender_rules WHERE problem_class = 'Sweep3D'\"");
  EXPECT_EQ(stored.out, "n\n" + std::to_string(j["rules"].size()) + "\n");
}

TEST_F(CliRecommend, ProcsRangeFindsTheOperatingPoint) {
  nlohmann::json j = json("recommend" + kProblem + " --procs-range 1..144 --knee-fraction 0.2");
  ASSERT_TRUE(j.contains("operating_point"));
  const auto& points = j["operating_point"]["points"];
  ASSERT_GE(points.size(), 10u);
  EXPECT_EQ(points.front()["procs"], 1);
  EXPECT_EQ(points.back()["procs"], 144);
  EXPECT_EQ(j["operating_point"]["fraction"], 0.2);
  // The knee by its definition, from the printed times.
  std::size_t knee = 0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    double rest = points[i]["time_ns"];
    for (std::size_t k = i; k < points.size(); ++k) rest = std::min(rest, points[k]["time_ns"].get<double>());
    if (rest >= 0.8 * points[i]["time_ns"].get<double>()) {
      knee = i;
      break;
    }
  }
  EXPECT_EQ(j["operating_point"]["knee_procs"], points[knee]["procs"]);
  EXPECT_EQ(j["recommendations"][0]["npe_i"], points[knee]["npe_i"]);
  CommandResult t = poems("recommend" + kProblem + " --procs-range 1..144");
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_NE(t.out.find("<- knee"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("optimal operating point: "), std::string::npos) << t.out;
}

TEST_F(CliRecommend, DefaultSpecification) {
  // Run from an empty directory: the example specification of the source tree.
  CommandResult r = poems("recommend --set it_g=12 --set jt_g=12 --set kt=6 --procs 4 --top 1 --machine Odin");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Sweep3D it_g=12, jt_g=12, kt=6, mm=6, iterations=12 on Odin, Wg=60ns, 4 processors"),
            std::string::npos)
      << r.out;
  // It has two machines: naming none is ambiguous, and the message lists them.
  CommandResult none = poems("recommend --set it_g=12 --set jt_g=12 --set kt=6 --procs 4");
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_NE(none.err.find("matches 2 components: 'Odin', 'BigRed'"), std::string::npos) << none.err;
  CommandResult big_red = poems("recommend --set it_g=12 --set jt_g=12 --set kt=6 --procs 4 --machine BigRed");
  ASSERT_EQ(big_red.exit_code, 0) << big_red.err;
  EXPECT_NE(big_red.out.find("on BigRed"), std::string::npos) << big_red.out;
}

TEST_F(CliRecommend, BadInputsNameTheParameterAndTheRange) {
  struct Bad {
    std::string args;
    int exit_code;
    std::string message;
  };
  const std::vector<Bad> bad = {
      {" --procs 0", 2, "--procs: '0' is out of range; expected an integer in 1..2147483648"},
      {" --procs many", 2, "--procs: 'many' is not a processor count"},
      {" --procs 16 --set mmi=4", 1, "mmi = 4 is out of range; expected a divisor of mm = 6: 1, 2, 3, 6"},
      {" --procs 16 --set mk=13", 1, "mk = 13 is out of range; expected an integer in 1..kt = 12"},
      {" --procs 16 --set kt=0", 1, "kt = 0 is out of range; expected an integer in 1..2147483648"},
      {" --procs 16 --machine Odn", 2, "--machine: no component named 'Odn'"},
      {" --procs 1000", 1, "procs = 1000 has no grid with at most 24 x 24 processes along its axes"},
      {" --procs 16 --set npe_i=4", 1, "--procs chooses npe_i; do not also --set it"},
      {" --procs 16 --vary mk=1..3 --study scaling", 2, "--vary: give either --study (its vary space) or --vary"},
      {" --procs-range 10..5", 2, "--procs-range: '10..5' is out of range; expected A..B with 1 <= A < B"},
      {" --procs 16 --top 0", 2, "--top: 0 is out of range; expected 1..100000"},
      {" --procs 16 --knee-fraction 1.5", 2, "--knee-fraction"},
      {" --procs 16 --set nosuch=1", 2, "'nosuch' is not a parameter of model 'Sweep3D'"},
      {" --procs 16 --explain --no-store", 2, "--explain: mines the knowledge base"},
  };
  for (const Bad& b : bad) {
    // --machine given twice is a usage error of its own: the bad one replaces Odin.
    // So are --machine and a --set of the same name given twice.
    std::string problem = b.args.find("--machine") == std::string::npos ? kProblem : " " + kSpec + kQuestion;
    if (b.args.find("--set kt=") != std::string::npos)
      problem = " " + kSpec + " --set it_g=24 --set jt_g=24 --set iterations=2 --machine Odin";
    CommandResult r = poems("recommend" + problem + b.args);
    EXPECT_EQ(r.exit_code, b.exit_code) << b.args << ": " << r.err;
    EXPECT_NE(r.err.find(b.message), std::string::npos) << b.args << ": " << r.err;
    EXPECT_EQ(r.out, "") << b.args;
  }
}

}  // namespace

}  // namespace recommend_tests
