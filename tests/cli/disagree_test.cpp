// Paradigms that disagree say so (issue 48, item 4): a study row where a
// paradigm differs from the first by more than --disagree (10 %) is flagged
// in the table, the CSV and the JSON with its known cause (the critical
// path's missing CPU queuing, on a model with isend/irecv); a study that
// agrees prints what it printed before; `poems recommend --by
// simulation[MPI-Sim]` ranks by the simulated time.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "run_command.h"

namespace fs = std::filesystem;

namespace {

// Two processes exchange `bytes` in k messages each way, all posted at once
// with irecv/isend, then waitall. The critical path (analytic[LogGP]: no
// closed form) lets the overheads of the posted operations overlap on the
// CPU; the simulator queues them: with a large per-byte overhead O the
// critical path gains from splitting, the simulator pays k times o.
const char* kHalo = R"(model Halo {
  param k = 1, bytes = 2048;
  taskgraph t {
    processes { [r] : 0 <= r < 2 };
    for m in 1 .. k { irecv from [1 - r] size bytes / k tag m; }
    for m in 1 .. k { isend to [1 - r] size bytes / k tag m; }
    waitall;
  }
}
component Net in hardware[network] {
  param L = 2us, o = 2us, g = 10ns, G = 0.01ns/B, O = 1ns/B, S = 1MiB;
  accepts { profile { evaluation = analytic[LogGP]; L = L; o = o; g = g; G = G; O = O; S = S; }
            transaction message(bytes: bytes) -> time; protocol call_return; }
}
// Splitting the exchange: the paradigms part ways as k grows.
study split {
  model Halo on Net;
  vary k in [1, 16];
  compare analytic[LogGP], simulation[MPI-Sim];
}
// One message each way: they agree.
study whole {
  model Halo on Net;
  vary bytes in [1024, 2048];
  compare analytic[LogGP], simulation[MPI-Sim];
}
)";

constexpr const char* kCause =
    "known cause: analytic[LogGP] is the task graph's critical path, which has no CPU queuing: the overheads of a "
    "process's isend/irecv that the graph does not order overlap on its CPU (docs/models/critical-path.md)";

class Disagree : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ =
        fs::temp_directory_path() / ("poems_disagree_" + std::string(info->name()) + "_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::ofstream(dir_ / "halo.psl") << kHalo;
    file_ = (dir_ / "halo.psl").string();
  }
  void TearDown() override { fs::remove_all(dir_); }
  CommandResult run(const std::string& args) { return poems_in_process(args); }
  nlohmann::json json(const std::string& args) {
    CommandResult r = run(args + " --format json");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out);
  }
  fs::path dir_;
  std::string file_;
};

}  // namespace

TEST_F(Disagree, AStudyFlagsTheRowsWhereTheParadigmsDifferWithTheKnownCause) {
  const nlohmann::json t = json("run " + file_ + " --study split --no-store");
  EXPECT_EQ(t["disagree_pct"], 10.0);
  ASSERT_EQ(t["rows"].size(), 2u);
  for (const auto& row : t["rows"]) {
    const double a = row["times_ns"]["analytic[LogGP]"], s = row["times_ns"]["simulation[MPI-Sim]"];
    // The one difference: the second paradigm against the first, in percent of the first.
    EXPECT_DOUBLE_EQ(row["difference_pct"].get<double>(), (s - a) / a * 100) << row.dump();
  }
  // k = 1: one message each way, nothing to overlap.
  const nlohmann::json& one = t["rows"][0];
  EXPECT_LT(std::abs(one["difference_pct"].get<double>()), 10.0) << one.dump();
  EXPECT_EQ(one["disagrees"], false);
  EXPECT_FALSE(one.contains("disagreements"));
  // k = 16: the simulator queues 32 overheads the critical path overlaps.
  const nlohmann::json& split = t["rows"][1];
  EXPECT_GT(split["difference_pct"].get<double>(), 10.0) << split.dump();
  EXPECT_EQ(split["disagrees"], true);
  EXPECT_NE(split["disagreements"]["simulation[MPI-Sim]"].get<std::string>().find("no CPU queuing"), std::string::npos)
      << split.dump();

  // The table: a marker column and a note under it.
  CommandResult text = run("run " + file_ + " --study split --no-store");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  std::vector<std::string> lines;
  std::istringstream in(text.out);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  ASSERT_EQ(lines.size(), 5u) << text.out;
  EXPECT_TRUE(lines[1].ends_with("diff_%  disagree")) << lines[1];
  EXPECT_FALSE(lines[2].ends_with("*")) << lines[2];  // k = 1
  EXPECT_TRUE(lines[3].ends_with("*")) << lines[3];   // k = 16
  EXPECT_EQ(lines[4], "* disagree: simulation[MPI-Sim] differs from analytic[LogGP] by more than 10% in 1 of 2 rows; " +
                          std::string(kCause))
      << text.out;

  // CSV: a boolean and the cause per row.
  CommandResult csv = run("run " + file_ + " --study split --no-store --format csv");
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_NE(csv.out.find(",difference_pct,disagrees,disagreement_cause\n"), std::string::npos) << csv.out;
  EXPECT_NE(csv.out.find(",true,\"analytic[LogGP] is the task graph's critical path"), std::string::npos) << csv.out;
  EXPECT_NE(csv.out.find(",false,\n"), std::string::npos) << csv.out;

  // --disagree sets the threshold: above the k = 16 gap, nothing is flagged.
  const double gap = split["difference_pct"];
  const nlohmann::json loose =
      json("run " + file_ + " --study split --no-store --disagree " + std::to_string(std::ceil(gap + 1)));
  for (const auto& row : loose["rows"]) EXPECT_EQ(row["disagrees"], false) << row.dump();
  CommandResult strict = run("run " + file_ + " --study split --no-store --disagree -1");
  EXPECT_EQ(strict.exit_code, 2) << strict.err;
}

TEST_F(Disagree, AStudyThatAgreesIsNotFlaggedAndPrintsWhatItPrinted) {
  const nlohmann::json t = json("run " + file_ + " --study whole --no-store");
  ASSERT_EQ(t["rows"].size(), 2u);
  for (const auto& row : t["rows"]) {
    EXPECT_LT(std::abs(row["difference_pct"].get<double>()), 10.0) << row.dump();
    EXPECT_EQ(row["disagrees"], false);
  }
  CommandResult text = run("run " + file_ + " --study whole --no-store");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_EQ(text.out.find("disagree"), std::string::npos) << text.out;
  EXPECT_EQ(std::count(text.out.begin(), text.out.end(), '\n'), 4) << text.out;  // title, header, 2 rows
  CommandResult csv = run("run " + file_ + " --study whole --no-store --format csv");
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_NE(csv.out.find(",difference_pct\n"), std::string::npos) << csv.out;
  EXPECT_EQ(csv.out.find("disagree"), std::string::npos) << csv.out;
}

// The critical path picks the most split exchange; the simulator the least.
TEST_F(Disagree, RecommendBySimulationRanksByTheSimulatedTime) {
  const std::string question = "recommend " + file_ + " --model Halo --machine Net --vary k=1,2,4,8,16 --no-store";
  // The simulated time of every candidate, as `poems simulate` gives it.
  std::vector<std::pair<double, int>> simulated;
  for (int k : {1, 2, 4, 8, 16}) {
    const nlohmann::json s =
        json("simulate " + file_ + " --model Halo --machine Net --set k=" + std::to_string(k) + " --no-store");
    simulated.emplace_back(s["finish_ns"].get<double>(), k);
  }
  std::sort(simulated.begin(), simulated.end());
  ASSERT_EQ(simulated.front().second, 1);

  const nlohmann::json analytic = json(question + " --top 5");
  EXPECT_EQ(analytic["ranked_by"], "analytic[LogGP]");
  EXPECT_EQ(analytic["recommendations"][0]["k"], 16);
  EXPECT_FALSE(analytic["recommendations"][0].contains("simulated_ns"));

  const nlohmann::json by = json(question + " --top 5 --by simulation[MPI-Sim]");
  EXPECT_EQ(by["ranked_by"], "simulation[MPI-Sim]");
  EXPECT_EQ(by["ranking"]["candidates"], 5);
  EXPECT_EQ(by["ranking"]["simulated"], 5);  // fewer than 16: every one
  EXPECT_EQ(by["ranking"]["complete"], true);
  EXPECT_EQ(by["evidence"]["simulated"], 5);
  ASSERT_EQ(by["recommendations"].size(), 5u);
  for (std::size_t i = 0; i < 5; ++i) {
    const nlohmann::json& rec = by["recommendations"][i];
    EXPECT_EQ(rec["k"], simulated[i].second) << i;
    EXPECT_DOUBLE_EQ(rec["simulated_ns"].get<double>(), simulated[i].first) << i;
    const double a = rec["time_ns"], s = rec["simulated_ns"];
    EXPECT_DOUBLE_EQ(rec["difference_pct"].get<double>(), (s - a) / a * 100);
    ASSERT_EQ(rec["evidence"].size(), 2u);
    EXPECT_EQ(rec["evidence"][1]["paradigm"], "simulation[MPI-Sim]");
  }

  // --top 1: the analytic best one first (k = 16), then one at a time until
  // the next analytic time is above the best simulated one.
  const nlohmann::json top1 = json(question + " --top 1 --by simulation[MPI-Sim] --jobs 1");
  EXPECT_EQ(top1["recommendations"][0]["k"], 1);
  EXPECT_EQ(top1["ranking"]["complete"], true);

  // The table shows both times and their difference.
  CommandResult text = run(question + " --top 2 --by simulation[MPI-Sim]");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("ranked by simulation[MPI-Sim]: the analytic best 5 of 5 candidates simulated (all of them)"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("rank  k  simulated  analytic  difference"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("* the paradigms differ by more than 10% (difference = (simulated - analytic) / analytic)"),
            std::string::npos)
      << text.out;

  // by both: the larger of the two times.
  const nlohmann::json both = json(question + " --top 5 --by both");
  EXPECT_EQ(both["ranked_by"], "both");
  for (std::size_t i = 1; i < 5; ++i) {
    const auto& p = both["recommendations"][i - 1];
    const auto& q = both["recommendations"][i];
    EXPECT_LE(std::max(p["time_ns"].get<double>(), p["simulated_ns"].get<double>()),
              std::max(q["time_ns"].get<double>(), q["simulated_ns"].get<double>()));
  }

  CommandResult bad = run(question + " --by simulation");
  EXPECT_EQ(bad.exit_code, 0) << bad.err;  // the head alone names it
  CommandResult wrong = run(question + " --by measurement[mpirun]");
  EXPECT_EQ(wrong.exit_code, 2) << wrong.err;
  EXPECT_NE(wrong.err.find("--by: 'measurement[mpirun]' is not a ranking"), std::string::npos) << wrong.err;
}
