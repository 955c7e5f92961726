// Processor sharing from PSL (docs/network.md, "Time sharing"): a network
// component's time_sharing reaches the simulator, a study varies it, the run
// key tells the rules apart, and a bad value is a located error.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "run_command.h"
#include "work_components.h"

namespace fs = std::filesystem;

namespace {

// Ranks 0 and 1 share a node of one core, rank 2 has its own. Rank 0
// computes 4 ms; rank 1 computes 1 ms, then sends 8 B to rank 2, which then
// computes 10 ms (Wg 1 ns; o 1 us, L 5 us, G 0).
// Processor sharing: rank 1's step ends at 2 ms, its o beside rank 0 takes
// 2 us, the message arrives 5 us later and is received in 1 us: rank 2 ends
// at 2.008 + 10 = 12.008 ms. First come first served: rank 1 waits for rank
// 0's 4 ms, sends at 5 ms: 5.007 + 10 = 15.007 ms.
const char* kModel = R"(model Blocking {
  param procs = 3;
  taskgraph t {
    processes { [p] : 0 <= p < procs };
    if p == 0 { task a : Work(work = 4000000); }
    if p == 1 { task b : Work(work = 1000000); send to [2] size 8 tag 1; }
    if p == 2 { recv from [1] size 8 tag 1; task c : Work(work = 10000000); }
  }
}
)";

class TimeSharingCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fresh_temp_dir("sharing_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string spec(const std::string& extra, const std::string& study = "") const {
    std::ofstream(dir_ / "sharing.psl") << kModel << work_components("Blocking")
                                        << net_component("L = 5us, o = 1us, g = 2us, G = 0ns/B, O = 0ns/B, S = 64KiB",
                                                         "param ranks_per_node = 2, cores_per_node = 1;\n  " + extra)
                                        << study;
    return (dir_ / "sharing.psl").string();
  }
  fs::path dir_;
};

TEST_F(TimeSharingCli, PslChoosesTheRuleAndAStudyComparesThem) {
  const std::string file = spec(R"(param time_sharing = "fcfs";)", R"(study sharing {
  model Blocking on Net;
  set compute = processor[wg];
  vary Net.time_sharing in ["fcfs", "processor-sharing"];
  compare simulation[MPI-Sim];
}
)");
  const std::string db = (dir_ / "kb.db").string();
  CommandResult r = poems_in_process("run " + file + " --study sharing --db " + db + " --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json table = nlohmann::json::parse(r.out);
  ASSERT_EQ(table["rows"].size(), 2u);
  EXPECT_EQ(table["rows"][0]["times_ns"]["simulation[MPI-Sim]"].get<double>(), 15007000);
  EXPECT_EQ(table["rows"][1]["times_ns"]["simulation[MPI-Sim]"].get<double>(), 12008000);
  // Two runs stored, one per rule: the run key holds it.
  r = poems_in_process("db runs --db " + db + " --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json runs = nlohmann::json::parse(r.out);
  ASSERT_EQ(runs.size(), 2u);
  int shared = 0;
  for (const auto& run : runs) shared += run["binding"]["machine"]["network"].contains("time_sharing");
  EXPECT_EQ(shared, 1);
  // The machine line says which rule shares the core.
  r = poems_in_process("simulate " + spec(R"(param time_sharing = "processor-sharing";)") +
                       " --model Blocking --machine Net --no-store");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("1 cores per node, processor-sharing"), std::string::npos) << r.out;
}

// The same run as a GOAL schedule, the rule from the command line.
TEST_F(TimeSharingCli, TheCommandLineChoosesTheRule) {
  std::ofstream(dir_ / "blocking.goal") << "num_ranks 3\n"
                                           "rank 0 {\nl1: calc 4000000\n}\n"
                                           "rank 1 {\nl1: calc 1000000\nl2: send 8b to 2\nl2 requires l1\n}\n"
                                           "rank 2 {\nl1: recv 8b from 1\nl2: calc 10000000\nl2 requires l1\n}\n";
  const std::string base = "simulate --goal " + (dir_ / "blocking.goal").string() +
                           " -L 5us -o 1us -g 2us -G 0 --ranks-per-node 2 --cores-per-node 1 --no-store --format json";
  auto finish = [&](const std::string& extra) {
    CommandResult r = poems_in_process(base + extra);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.exit_code == 0 ? nlohmann::json::parse(r.out)["finish_ns"].get<double>() : -1.0;
  };
  EXPECT_EQ(finish(""), 15007000);
  EXPECT_EQ(finish(" --time-sharing fcfs"), 15007000);
  EXPECT_EQ(finish(" --time-sharing processor-sharing"), 12008000);
  CommandResult r = poems_in_process(base + " --time-sharing processor");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--time-sharing: 'processor' is not a time-sharing rule; expected fcfs or processor-sharing"),
            std::string::npos)
      << r.err;
  // Not modelled together with OS noise: refused with the reason.
  r = poems_in_process(base + " --time-sharing processor-sharing --noise periodic:period=1ms,detour=25us");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("OS noise is not modelled together with processor sharing"), std::string::npos) << r.err;
}

// poems compile shows the machine the command line makes of the component;
// poems measure takes the same options for its compared predictions.
TEST_F(TimeSharingCli, CompileShowsTheMachineOfTheCommandLine) {
  CommandResult r = poems_in_process("compile " + spec("") +
                                     " --model Blocking --machine Net --ranks-per-node 3 --cores-per-node 2 "
                                     "--time-sharing processor-sharing");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("3 ranks per node (block), 2 cores per node, processor-sharing"), std::string::npos) << r.out;
  r = poems_in_process("measure --help");
  EXPECT_NE(r.out.find("--time-sharing"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--ranks-per-node"), std::string::npos) << r.out;
}

TEST_F(TimeSharingCli, ABadRuleIsALocatedError) {
  CommandResult r = poems_in_process("simulate " + spec(R"(param time_sharing = "round-robin";)") +
                                     " --model Blocking --machine Net --no-store");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("sharing.psl:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("network parameter Net.time_sharing = \"round-robin\" is not a time-sharing rule; allowed: "
                       "fcfs, processor-sharing"),
            std::string::npos)
      << r.err;
}

}  // namespace
