// OS noise through the `poems` commands (docs/simulator.md, "OS noise"): a
// network component's noise_* parameters and --noise reach the simulator
// and the critical path, studies vary them, run keys tell them apart, the
// closed forms refuse them, and bad ones are located.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "run_command.h"
#include "work_components.h"

namespace fs = std::filesystem;

namespace {

// Two ranks compute 5 ms (Wg 1 ns), then an allreduce of 8 B (o + L + o =
// 7 us on this network). Aligned detours of 25 us every 1 ms stretch the
// 5 ms by the detour in progress at 0 and those at 1..5 ms: 150 us.
const char* kStepsModel = R"(model Steps {
  param procs = 2;
  taskgraph t {
    processes { [p] : 0 <= p < procs };
    task c : Work(work = 5000000);
    allreduce size 8;
  }
}
)";

const std::string kSteps = kStepsModel + work_components("Steps");

class Noise : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("poems_noise_" + std::string(info->name()) + "_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string spec(const std::string& noise, const std::string& extra = "") const {
    std::ofstream(dir_ / "steps.psl") << kSteps
                                      << net_component("L = 5us, o = 1us, g = 2us, G = 0ns/B, O = 0ns/B, S = 64KiB",
                                                       noise)
                                      << extra;
    return (dir_ / "steps.psl").string();
  }
  double finish_ns(const std::string& command) const {
    CommandResult r = poems_in_process(command + " --no-store --format json");
    EXPECT_EQ(r.exit_code, 0) << command << "\n" << r.err;
    if (r.exit_code != 0) return -1;
    const nlohmann::json j = nlohmann::json::parse(r.out);
    return j.contains("finish_ns") ? j["finish_ns"].get<double>() : j["time_ns"].get<double>();
  }
  fs::path dir_;
};

const char* kAligned = R"(param noise_period = 1ms, noise_detour = 25us, noise_phase = "aligned";)";

TEST_F(Noise, PslNoiseReachesTheSimulatorAndTheCriticalPath) {
  const std::string file = spec(kAligned);
  EXPECT_EQ(finish_ns("simulate " + file + " --model Steps --machine Net"), 5157000);
  EXPECT_EQ(finish_ns("analyze " + file + " --model Steps --machine Net"), 5157000);
  // The command line's noise replaces the component's: none, or 50 us
  // detours (six of them).
  EXPECT_EQ(finish_ns("simulate " + file + " --model Steps --machine Net --noise none"), 5007000);
  EXPECT_EQ(finish_ns("simulate " + file +
                      " --model Steps --machine Net --noise periodic:period=1ms,detour=50us,"
                      "phase=aligned"),
            5307000);
  // The machine line says what the noise is.
  CommandResult r = poems_in_process("simulate " + file + " --model Steps --machine Net --no-store");
  EXPECT_NE(r.out.find("periodic noise: 25000ns every 1000000ns, aligned phases"), std::string::npos) << r.out;
}

TEST_F(Noise, AStudyVariesTheDetourAndRunKeysTellNoisesApart) {
  const std::string file = spec(kAligned, R"(study noise {
  model Steps on Net;
  set compute = processor[wg];
  vary Net.noise_detour in [0us, 25us];
  compare simulation[MPI-Sim];
}
)");
  const std::string db = (dir_ / "kb.db").string();
  auto times = [&](const std::string& extra) {
    CommandResult r = poems_in_process("run " + file + " --study noise --db " + db + " --format json" + extra);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::vector<double> out;
    if (r.exit_code != 0) return out;
    const nlohmann::json j = nlohmann::json::parse(r.out);
    for (const auto& row : j["rows"]) out.push_back(row["times_ns"]["simulation[MPI-Sim]"].get<double>());
    return out;
  };
  // A detour of 0 is a quiet machine.
  EXPECT_EQ(times(""), (std::vector<double>{5007000, 5157000}));
  // Stored runs are not reused for another noise: random phases (seed 1)
  // give other times than the aligned ones.
  const std::vector<double> random = times(" --noise periodic:period=1ms,detour=25us,seed=1");
  ASSERT_EQ(random.size(), 2u);
  EXPECT_EQ(random[0], random[1]);  // --noise replaces the component's in every cell
  EXPECT_NE(random[0], 5157000);
  EXPECT_GE(random[0], 5007000 + 100000);  // 5 ms meet at least four whole detours
  EXPECT_LE(random[0], 5007000 + 150000);
}

TEST_F(Noise, TheClosedFormsAreRefusedOnANoisyMachine) {
  const std::string sweep3d = std::string(POEMS_SOURCE_DIR) + "/examples/sweep3d/sweep3d.psl";
  CommandResult r = poems_in_process("analyze " + sweep3d +
                                     " --machine Odin --noise periodic:period=1ms,detour=25us --method closed-form "
                                     "--no-store");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--method: the Sweep3D closed form has no OS noise; this machine has periodic noise: 25000ns "
                       "every 1000000ns, random phases (seed 1); use critical-path, or simulate"),
            std::string::npos)
      << r.err;
  r = poems_in_process("analyze " + sweep3d +
                       " --machine Odin --noise periodic:period=1ms,detour=25us --no-store "
                       "--format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["method"], "critical-path");
}

TEST_F(Noise, BadNoiseIsNamedAndLocated) {
  CommandResult r =
      poems_in_process("simulate " + spec("param noise_detour = 25us;") + " --model Steps --machine Net --no-store");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("steps.psl:24:9: noise parameter Net.noise_detour needs noise_period (periodic noise) or "
                       "noise_interval (poisson noise)"),
            std::string::npos)
      << r.err;
  r = poems_in_process("simulate " + spec(R"(param noise_period = 1ms, noise_detour = 2ms;)") +
                       " --model Steps --machine Net --no-store");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("noise of Net: noise detour = 2000000ns is out of range; it must be above 0 and below the "
                       "period (1000000ns)"),
            std::string::npos)
      << r.err;
  r = poems_in_process("simulate " + spec(R"(param noise_period = 1ms, noise_detour = 2us, noise_phase = "late";)") +
                       " --model Steps --machine Net --no-store");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("noise parameter Net.noise_phase = \"late\" must be aligned or random"), std::string::npos)
      << r.err;
  r = poems_in_process("simulate " + spec("") + " --model Steps --machine Net --noise periodic:period=1ms --no-store");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--noise: periodic noise needs period and detour"), std::string::npos) << r.err;
}

// examples/noise/noise.psl as docs/simulator.md reports it at 64 ranks:
// quiet, 50 steps of 10 us and a 6-round dissemination allreduce (each
// round o + L + o = 9.9 us, plus the 10 us of work: 69.505 us a step);
// with the component's 25 us detours every 10 ms, 81.4 us more.
TEST_F(Noise, TheNoiseExampleGivesItsDocumentedTimes) {
  const std::string file = std::string(POEMS_SOURCE_DIR) + "/examples/noise/noise.psl";
  CommandResult r = poems_in_process("check " + file);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const std::string run = "simulate " + file + " --model BulkSynchronous --machine NoisyOdin";
  EXPECT_EQ(finish_ns(run + " --noise none"), 3475250);
  EXPECT_DOUBLE_EQ(finish_ns(run), 3556659.868);
}

// examples/noise/selfish_detour.c records this host's detours as a noise
// trace: lines "start length" (ns), each longer than the threshold, in
// order and apart; `--noise file:` reads it, and the 5 ms step is stretched
// by exactly the recorded detours that fall into it (aligned phase, the
// trace repeated every end of its last detour), walked here by hand.
TEST_F(Noise, TheHostsDetoursRecordedAndReplayed) {
  const fs::path trace = dir_ / "host-noise.txt";
  // 1 us: above the loop's step even under the sanitizers (a few hundred ns).
  CommandResult r = run_command(std::string(POEMS_SELFISH_DETOUR) + " --seconds 0.3 --threshold 1000 --clock wall > " +
                                trace.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("of wall time"), std::string::npos) << r.err;
  std::ifstream in(trace);
  std::vector<std::pair<double, double>> detours;
  double start = 0, length = 0;
  while (in >> start >> length) {
    EXPECT_GT(length, 1000) << start;
    if (!detours.empty()) {
      EXPECT_GE(start, detours.back().first + detours.back().second);
    }
    detours.emplace_back(start, length);
  }
  // Timer interrupts and the hypervisor take a microsecond or more every few ms.
  ASSERT_FALSE(detours.empty()) << r.err;
  const double period = detours.back().first + detours.back().second;
  double t = 0, work = 5e6;  // the step's remaining work, ns
  for (std::size_t k = 0; k < 100'000'000; ++k) {
    const auto& [s, l] = detours[k % detours.size()];
    const double begin = s + period * static_cast<double>(k / detours.size());
    if (begin >= t + work) break;
    work -= begin - t;
    t = begin + l;
  }
  const double expected = t + work + 7000;  // and the allreduce, o + L + o
  EXPECT_NEAR(finish_ns("simulate " + spec("") + " --model Steps --machine Net --noise file:" + trace.string() +
                        ",phase=aligned"),
              expected, 1e-3 * static_cast<double>(detours.size()) + 1);
  // Bad options name the option and the range.
  r = run_command(std::string(POEMS_SELFISH_DETOUR) + " --seconds 0");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--seconds: '0' is not allowed; allowed: a number from 0.01 to 3600"), std::string::npos)
      << r.err;
  r = run_command(std::string(POEMS_SELFISH_DETOUR) + " --clock tsc");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--clock: allowed: cpu or wall"), std::string::npos) << r.err;
  // A threshold below the loop's step would make all time a detour: refused.
  r = run_command(std::string(POEMS_SELFISH_DETOUR) + " --seconds 0.01 --threshold 100 --clock cpu > /dev/null");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("is longer than --threshold 100 ns; raise --threshold above it"), std::string::npos) << r.err;
}

}  // namespace
