// `poems simulate --trace ARCHIVE --extrapolate Q` (docs/trace.md,
// "Extrapolation"): a pipeline's simulated run written as OTF2 at 4 ranks,
// replayed as 64, differs from the model simulated at 64 by exactly what the
// replay at 4 differs from the model at 4 (the computation before the first
// call, which a replay starts after); refusals are input errors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "run_command.h"
#include "work_components.h"

namespace fs = std::filesystem;

namespace {

const char* kPipeModel = R"(model Pipe {
  param P = 4;
  taskgraph t {
    processes { [p] : 0 <= p < P };
    for s in 1 .. 3 {
      if p > 0 { recv from [p - 1] size 800 tag s; }
      task c : Work(work = 10000);
      if p < P - 1 { send to [p + 1] size 800 tag s; }
    }
  }
}
)";

const std::string kNet = net_component("L = 5us, o = 1us, g = 2us, G = 1ns/B, O = 0ns/B, S = 64KiB");
const std::string kPipe = kPipeModel + work_components("Pipe") + kNet;

const std::string kMachine = " -L 5us -o 1us -g 2us -G 1ns/B -O 0 -S 64KiB";

class Extrapolate : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("poems_extrapolate_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::ofstream(dir_ / "pipe.psl") << kPipe;
  }
  void TearDown() override { fs::remove_all(dir_); }
  double finish_ns(const std::string& command) const {
    CommandResult r = poems_in_process(command + " --no-store --format json");
    EXPECT_EQ(r.exit_code, 0) << command << "\n" << r.err;
    if (r.exit_code) return -1;
    const nlohmann::json j = nlohmann::json::parse(r.out);  // simulate: finish_ns; analyze: time_ns
    return j.contains("finish_ns") ? j["finish_ns"].get<double>() : j["time_ns"].get<double>();
  }
  std::string model(int p, const std::string& extra = "") const {
    return "simulate " + (dir_ / "pipe.psl").string() + " --model Pipe --machine Net --set P=" + std::to_string(p) +
           extra;
  }
  fs::path dir_;
};

TEST_F(Extrapolate, APipelineTracedAtFourReplaysAsTheModelAtSixtyFour) {
  const std::string archive = (dir_ / "p4.otf2").string();
  CommandResult r = poems_in_process(model(4, " --no-store --timeline " + archive));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const double model4 = finish_ns(model(4)), model64 = finish_ns(model(64));
  const double replay4 = finish_ns("simulate --trace " + archive + kMachine);
  const double replay64 = finish_ns("simulate --trace " + archive + kMachine + " --extrapolate 64");
  EXPECT_EQ(model64, 1156935);
  EXPECT_EQ(replay64 - model64, replay4 - model4);
  // The critical path of the extrapolated replay agrees (a pipeline has no queuing).
  EXPECT_EQ(finish_ns("analyze --trace " + archive + kMachine + " --extrapolate 64"), replay64);
  // Strong scaling: each computation x 0.5.
  EXPECT_LT(finish_ns("simulate --trace " + archive + kMachine + " --extrapolate 64 --extrapolate-compute 0.5"),
            replay64);
  // Refused: a line cannot become a grid; a bad count; a factor without --extrapolate.
  r = poems_in_process("simulate --trace " + archive + kMachine + " --extrapolate 8x8 --no-store");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("the trace is a line of 4; a grid of 2 dimension(s) does not extend it"), std::string::npos)
      << r.err;
  r = poems_in_process("simulate --trace " + archive + kMachine + " --extrapolate many --no-store");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--extrapolate: 'many' is not a rank count or a grid"), std::string::npos) << r.err;
  r = poems_in_process("simulate --trace " + archive + kMachine + " --extrapolate-compute 0.5 --no-store");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--extrapolate-compute: goes with --extrapolate"), std::string::npos) << r.err;
  r = poems_in_process("simulate --trace " + archive + kMachine + " --extrapolate 64 --extrapolate-variation some");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--extrapolate-variation: 'some' is not allowed; allowed: copy, resample or resample,seed=N"),
            std::string::npos)
      << r.err;
  r = poems_in_process("simulate --trace " + archive + kMachine + " --extrapolate-variation resample --no-store");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--extrapolate-variation: goes with --extrapolate"), std::string::npos) << r.err;
  // Explicitly copied is the default.
  EXPECT_EQ(finish_ns("simulate --trace " + archive + kMachine + " --extrapolate 64 --extrapolate-variation copy"),
            replay64);
}

// A model from a trace extrapolates as a study setting: every cell equals
// the command-line replay with the same --extrapolate.
TEST_F(Extrapolate, AStudyOfATraceVariesTheRankCount) {
  const std::string archive = (dir_ / "p4.otf2").string();
  CommandResult r = poems_in_process(model(4, " --no-store --timeline " + archive));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ofstream(dir_ / "grow.psl") << "model Piped from trace \"p4.otf2\";\n"
                                   << kNet << R"(study grow {
  model Piped on Net;
  vary extrapolate in ["16", "64"];
  set extrapolate_compute = "0.5";
  compare simulation[MPI-Sim];
}
)";
  r = poems_in_process("run " + (dir_ / "grow.psl").string() + " --study grow --no-store --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["rows"].size(), 2u);
  for (int k = 0; k < 2; ++k) {
    const std::string q = k == 0 ? "16" : "64";
    EXPECT_EQ(j["rows"][k]["processes"], std::stoi(q));
    EXPECT_EQ(
        j["rows"][k]["times_ns"]["simulation[MPI-Sim]"].get<double>(),
        finish_ns("simulate --trace " + archive + kMachine + " --extrapolate " + q + " --extrapolate-compute 0.5"));
  }
  std::ofstream(dir_ / "bad.psl")
      << "model Piped from trace \"p4.otf2\";\n"
      << kNet << R"(study grid { model Piped on Net; set extrapolate = "8x8"; compare simulation[MPI-Sim]; }
)";
  r = poems_in_process("run " + (dir_ / "bad.psl").string() + " --study grid --no-store");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE((r.out + r.err).find("the trace is a line of 4; a grid of 2 dimension(s) does not extend it"),
            std::string::npos)
      << r.out << r.err;
  // The variation setting: copy is the command line's default; a bad value
  // and one without extrapolate are named.
  const auto study = [&](const std::string& name, const std::string& settings) {
    std::ofstream(dir_ / (name + ".psl"))
        << "model Piped from trace \"p4.otf2\";\n"
        << kNet << "study s { model Piped on Net; " << settings << " compare simulation[MPI-Sim]; }\n";
    return poems_in_process("run " + (dir_ / (name + ".psl")).string() + " --study s --no-store --format json");
  };
  r = study("copy", R"(set extrapolate = "16"; set extrapolate_variation = "copy";)");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["rows"][0]["times_ns"]["simulation[MPI-Sim]"].get<double>(),
            finish_ns("simulate --trace " + archive + kMachine + " --extrapolate 16"));
  r = study("sometimes", R"(set extrapolate = "16"; set extrapolate_variation = "sometimes";)");
  EXPECT_EQ(r.exit_code, 3);  // a failed cell
  EXPECT_NE((r.out + r.err)
                .find("study setting extrapolate_variation = \"sometimes\": 'sometimes' is not allowed; "
                      "allowed: copy, resample or resample,seed=N"),
            std::string::npos)
      << r.out << r.err;
  r = study("alone", R"(set extrapolate_variation = "resample";)");
  EXPECT_EQ(r.exit_code, 3);  // a failed cell
  EXPECT_NE((r.out + r.err).find("study setting extrapolate_variation goes with extrapolate"), std::string::npos)
      << r.out << r.err;
}

}  // namespace
