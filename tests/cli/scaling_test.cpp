// `poems scaling` (docs/scaling.md): scaling models fitted to runs at three
// rank counts. The runs are simulated runs written as OTF2 (poems simulate
// --timeline) of a strong-scaling model whose regions have known laws: the
// step's work 1 ms / P per iteration, a fixed 2 us task, and the gaps
// between an allreduce's log2 P rounds (the timeline writes each round as a
// call, so the 5 us a round waits for its message, L, lies between calls).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "run_command.h"
#include "work_components.h"

namespace fs = std::filesystem;

namespace {

const char* kStrongModel = R"(model Strong {
  param P = 4;
  taskgraph t {
    processes { [p] : 0 <= p < P };
    for it in 1 .. 3 {
      task c : Work(work = 1000000 / P);
      allreduce size 8;
      task d : Work(work = 2000);
      barrier;
    }
  }
}
)";

const std::string kStrong = kStrongModel + work_components("Strong") +
                            net_component("L = 5us, o = 1us, g = 2us, G = 0ns/B, O = 0ns/B, S = 64KiB");

class Scaling : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("poems_scaling_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::ofstream(dir_ / "strong.psl") << kStrong;
    for (int p : {4, 8, 16}) {
      CommandResult r = poems_in_process("simulate " + (dir_ / "strong.psl").string() +
                                         " --model Strong --machine Net --no-store --set P=" + std::to_string(p) +
                                         " --timeline " + archive(p));
      ASSERT_EQ(r.exit_code, 0) << r.err;
    }
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string archive(int p) const { return (dir_ / ("s" + std::to_string(p) + ".otf2")).string(); }
  std::string archives() const { return archive(4) + " " + archive(8) + " " + archive(16); }
  fs::path dir_;
};

const nlohmann::json* region(const nlohmann::json& report, const std::string& name) {
  for (const auto& r : report["regions"])
    if (r["region"] == name) return &r;
  return nullptr;
}

TEST_F(Scaling, EachRegionGetsItsLawAndPredictsAThousandRanks) {
  const std::string db = (dir_ / "kb.db").string();
  CommandResult r = poems_in_process("scaling " + archives() + " --predict 1024 --regions 0 --format json --db " + db);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["archives"].size(), 3u);
  EXPECT_EQ(j["archives"][2]["ranks"], 16);
  // The step of iterations 2 and 3 (after the barrier, before the
  // allreduce): 2 ms / P, no constant.
  const nlohmann::json* step = region(j, "barrier/dissemination..allreduce/recursive_doubling");
  ASSERT_NE(step, nullptr) << j.dump(2);
  EXPECT_EQ((*step)["model"]["i"], -1);
  EXPECT_EQ((*step)["model"]["j"], 0);
  EXPECT_FALSE((*step)["model"]["offset"]);
  EXPECT_NEAR((*step)["model"]["c1"].get<double>(), 0.002, 1e-12);
  EXPECT_NEAR((*step)["predictions"][0]["seconds"].get<double>(), 0.002 / 1024, 1e-12);
  // The fixed task, three times 2 us: a constant.
  const nlohmann::json* fixed = region(j, "allreduce/recursive_doubling..barrier/dissemination");
  ASSERT_NE(fixed, nullptr);
  EXPECT_EQ((*fixed)["model"]["formula"], "6e-06");
  // The allreduce's rounds: log2 P gaps of L = 5 us, three iterations.
  const nlohmann::json* rounds = region(j, "allreduce/recursive_doubling..allreduce/recursive_doubling");
  ASSERT_NE(rounds, nullptr);
  EXPECT_EQ((*rounds)["model"]["formula"], "1.5e-05 * log2(p)");
  ASSERT_TRUE(j.contains("run_id"));
  // Stored once: the same archives again are the same run.
  r = poems_in_process("scaling " + archives() + " --predict 1024 --regions 0 --db " + db);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("already stored as run " + std::to_string(j["run_id"].get<int>())), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  PSL:   0.002 * pow(P, -1)"), std::string::npos) << r.out;
}

TEST_F(Scaling, BadRequestsAreRefused) {
  CommandResult r = poems_in_process("scaling " + archive(4) + " " + archive(8) + " --no-store");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("scaling: give archives of 3 or more runs at different rank counts (got 2)"), std::string::npos)
      << r.err;
  r = poems_in_process("scaling " + archive(4) + " " + archive(4) + " " + archive(8) + " --no-store");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("no model: a scaling model needs measurements at 3 or more values of p"), std::string::npos)
      << r.out;
  r = poems_in_process("scaling " + archives() + " --predict 0 --no-store");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--predict: a rank count to predict at must be >= 1"), std::string::npos) << r.err;
  r = poems_in_process("scaling " + archives() + " --window MPI_Bcast#1.. --no-store");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("rank 0 has no call MPI_Bcast#1 (the window's start)"), std::string::npos) << r.err;
  r = poems_in_process("scaling " + archives() + " --computation cpu --no-store");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("has no CPU time of its computation"), std::string::npos) << r.err;
  r = poems_in_process("scaling " + archives() + " " + (dir_ / "missing").string() + " --no-store");
  EXPECT_EQ(r.exit_code, 1) << r.err;
}

// Two parameters: the same model with a problem size N, its step's work
// 200 N^2 / P ns (100 N^2 / P per iteration, iterations 2 and 3), run on a
// 3 x 3 grid of (P, N).
const char* kSizedModel = R"(model Sized {
  param P = 4;
  param N = 64;
  taskgraph t {
    processes { [p] : 0 <= p < P };
    for it in 1 .. 3 {
      task c : Work(work = 100 * N * N / P);
      allreduce size 8;
      task d : Work(work = 2000);
      barrier;
    }
  }
}
)";

TEST_F(Scaling, RanksAndProblemSizeTogether) {
  std::ofstream(dir_ / "sized.psl") << kSizedModel + work_components("Sized") +
                                           net_component("L = 5us, o = 1us, g = 2us, G = 0ns/B, O = 0ns/B, S = 64KiB");
  std::string runs, sizes;
  for (int p : {4, 8, 16})
    for (int n : {64, 128, 256}) {
      const std::string a = (dir_ / ("z" + std::to_string(p) + "_" + std::to_string(n) + ".otf2")).string();
      CommandResult r = poems_in_process("simulate " + (dir_ / "sized.psl").string() +
                                         " --model Sized --machine Net --no-store --set P=" + std::to_string(p) +
                                         " --set N=" + std::to_string(n) + " --timeline " + a);
      ASSERT_EQ(r.exit_code, 0) << r.err;
      runs += " " + a;
      sizes += (sizes.empty() ? "" : ",") + std::to_string(n);
    }
  CommandResult r = poems_in_process("scaling" + runs + " --sizes " + sizes +
                                     " --predict 1024:2048 --regions 0 --format json --no-store");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  const nlohmann::json* step = region(j, "barrier/dissemination..allreduce/recursive_doubling");
  ASSERT_NE(step, nullptr) << j.dump(2);
  ASSERT_TRUE((*step).contains("model")) << step->dump(2);
  EXPECT_EQ((*step)["model"]["formula"], "2e-07 * P^(-1) * N^(2)") << step->dump(2);
  EXPECT_EQ((*step)["model"]["psl"], "2e-07 * pow(P, -1) * pow(N, 2)");
  EXPECT_EQ((*step)["points"].size(), 9u);
  // 1,024 ranks on N = 2,048, eight times the largest N run.
  EXPECT_NEAR((*step)["predictions"][0]["seconds"].get<double>(), 200e-9 * 2048 * 2048 / 1024, 1e-12);
  EXPECT_EQ((*step)["predictions"][0]["size"], 2048);
  // The fixed task: a constant in both.
  const nlohmann::json* fixed = region(j, "allreduce/recursive_doubling..barrier/dissemination");
  ASSERT_NE(fixed, nullptr);
  EXPECT_EQ((*fixed)["model"]["formula"], "6e-06");
  // The table names both parameters.
  r = poems_in_process("scaling" + runs + " --sizes " + sizes + " --predict 1024:2048 --regions 0 --no-store");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("predicted:  P=1024,N=2048 0.0008192 s"), std::string::npos) << r.out;

  // Refusals: sizes that do not match the archives, a prediction without its size.
  r = poems_in_process("scaling" + runs + " --sizes 64,128 --no-store");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--sizes: give one problem size per archive: 2 sizes for 9 archives"), std::string::npos)
      << r.err;
  r = poems_in_process("scaling" + runs + " --sizes " + sizes + " --predict 1024 --no-store");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--predict: with --sizes, each prediction is RANKS:SIZE"), std::string::npos) << r.err;
  r = poems_in_process("scaling" + runs + " --sizes " + sizes + " --predict 1024:big --no-store");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--predict: '1024:big' is not RANKS or RANKS:SIZE (numbers)"), std::string::npos) << r.err;
  r = poems_in_process("scaling " + archives() + " --predict 1024:64 --no-store");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--predict: RANKS:SIZE needs the archives' sizes (--sizes)"), std::string::npos) << r.err;
  // One size for every run: no line of sizes, said for each region.
  r = poems_in_process("scaling " + archives() + " --sizes 64,64,64 --no-store");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("no model: a model in two parameters needs measurements at 3 or more values of n with p held"),
            std::string::npos)
      << r.out;
}

}  // namespace
