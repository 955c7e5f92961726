// One command-line grammar and one path from a specification to a stored
// run, in process (poems::cli::run). Each test names the problem of issue 21
// it guards against; every one of them failed on the command line before it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

#include "run_command.h"

namespace fs = std::filesystem;

// Its own namespace: unity builds (tests/CMakeLists.txt) batch files together.
namespace grammar_tests {

namespace {

const std::string kSource = POEMS_SOURCE_DIR;
const std::string kSweep3D = kSource + "/examples/sweep3d/sweep3d.psl";

CommandResult poems_run(const std::string& args) { return poems_in_process(args); }

class Grammar : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ =
        fs::temp_directory_path() / ("poems_grammar_" + std::string(info->name()) + "_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string db() const { return " --db " + (dir_ / "kb.db").string(); }
  std::string file(const std::string& name, const std::string& text) const {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }
  // A machine file as `poems calibrate` writes it: a network and, beside it, its processor.
  std::string lab() const {
    return file("lab.psl", R"(component lab in hardware[network] {
  param L = 1us, o = 500ns, g = 400ns, G = 0.1ns/B, O = 0.05ns/B, S = 65536B;
  accepts { profile { evaluation = analytic[LogGP]; L = L; o = o; g = g; G = G; O = O; S = S; }
            transaction message(bytes: bytes) -> time; protocol call_return; }
}
component lab_cpu in hardware[processor] {
  param Wg = 7ns;
  accepts { profile { node_type = "cpu"; evaluation = processor[wg]; Wg = Wg; }
            transaction execute_code_block(work: real) -> time; protocol call_return; }
}
)");
  }
  static std::int64_t run_id(const std::string& err) {
    std::smatch m;
    if (!std::regex_search(err, m, std::regex("(?:stored as run|already stored as run) ([0-9]+)"))) return -1;
    return std::stoll(m[1]);
  }
  fs::path dir_;
};

// A tiny model with two processes that only send and receive.
const char* kPingPong = R"(model PingPong {
  param P = 2, n = 3;
  taskgraph ping {
    processes { [r] : 0 <= r < P };
    for k in 1 .. n {
      if r == 0 { send to [1] size 1KiB; recv from [1] size 1KiB; }
      else { recv from [0] size 1KiB; send to [0] size 1KiB; }
    }
  }
}
component Net in hardware[network] {
  param L = 2us, o = 1us, g = 1us, G = 0.5ns/B, O = 0ns/B, S = 64KiB;
  accepts { profile { evaluation = analytic[LogGP]; L = L; o = o; g = g; G = G; O = O; S = S; }
            transaction message(bytes: bytes) -> time; protocol call_return; }
}
)";

}  // namespace

// `poems run` and `poems simulate` stored the 4x4 scaling_50 simulation as two
// runs with different sync_ns (82,012,816 vs 82,002,230).
TEST_F(Grammar, TheSameBindingByTwoCommandsIsOneStoredRun) {
  CommandResult run = poems_run("run " + kSweep3D + " --study scaling_50 --format json" + db());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json table = nlohmann::json::parse(run.out);
  nlohmann::json row;
  for (const auto& r : table["rows"])
    if (r["processes"] == 16) row = r;
  const double sync = row["breakdown"]["simulation[MPI-Sim]"]["sync_ns"];
  EXPECT_EQ(sync, 82012816.0);
  // In the study's context, and spelled out on the command line: the same run, not evaluated again.
  const std::string in_study = " --study scaling_50 --set npe_i=4 --set npe_j=4";
  const std::string spelled =
      " --machine Odin --set it_g=50 --set jt_g=50 --set kt=50 --set mk=10 --set mmi=3 "
      "--set mm=6 --set npe_i=4 --set npe_j=4";
  CommandResult a = poems_run("simulate " + kSweep3D + in_study + " --format json --max-ranks-listed 0" + db());
  CommandResult b = poems_run("simulate " + kSweep3D + spelled + " --format json --max-ranks-listed 0" + db());
  CommandResult c = poems_run("analyze " + kSweep3D + in_study + " --format json" + db());
  for (const CommandResult* r : {&a, &b, &c}) {
    ASSERT_EQ(r->exit_code, 0) << r->err;
    EXPECT_NE(r->err.find("the same run is already stored as run"), std::string::npos) << r->err;
  }
  EXPECT_EQ(run_id(a.err), run_id(b.err));
  EXPECT_EQ(nlohmann::json::parse(a.out)["finish_ns"], row["times_ns"]["simulation[MPI-Sim]"]);
  EXPECT_EQ(nlohmann::json::parse(c.out)["sync_ns"], row["breakdown"]["analytic[LogGP]"]["sync_ns"]);
  const CommandResult rows = poems_run("db query" + db() +
                                       " \"SELECT count(*) AS n, res.sync_ns FROM runs r JOIN results res ON "
                                       "res.run_id = r.id WHERE r.evaluator = 'simulation[MPI-Sim]' AND "
                                       "json_extract(r.binding, '$.parameters.npe_i') = 4\" --format json");
  EXPECT_EQ(nlohmann::json::parse(rows.out), nlohmann::json::parse(R"([{"n": 1, "sync_ns": 82012816.0}])"));
}

// --set kept units in compile but dropped them in simulate (--set Odin.L=100B
// simulated L = 100 ns; --set npe_i=4us gave 4000 processes): now every
// command checks them as PSL checks a study's `set`.
TEST_F(Grammar, SetValuesAreCheckedAsPslChecksAStudysSet) {
  for (const char* command : {"simulate --no-store --machine Odin", "analyze --no-store --machine Odin",
                              "compile --machine Odin", "taskgraph"}) {
    SCOPED_TRACE(command);
    CommandResult size = poems_run(std::string(command) + " " + kSweep3D + " --set Odin.L=100B");
    EXPECT_EQ(size.exit_code, 2);
    EXPECT_NE(size.err.find("--set Odin.L=100B: 'Odin.L' is a time (default 5300ns); this value is a size"),
              std::string::npos)
        << size.err;
    CommandResult time = poems_run(std::string(command) + " " + kSweep3D + " --set npe_i=4us");
    EXPECT_EQ(time.exit_code, 2);
    EXPECT_NE(time.err.find("'npe_i' is a number (default 2); this value is a time"), std::string::npos) << time.err;
  }
  CommandResult unknown = poems_run("run " + kSweep3D + " --study scaling --set npe_k=2 --no-store");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("did you mean 'npe_i'?"), std::string::npos) << unknown.err;
  // Units that PSL converts are converted: 0.0053ms is Odin's own latency.
  CommandResult ms =
      poems_run("analyze " + kSweep3D + " --machine Odin --set Odin.L=0.0053ms --format json --no-store");
  CommandResult ns = poems_run("analyze " + kSweep3D + " --machine Odin --format json --no-store");
  ASSERT_EQ(ms.exit_code, 0) << ms.err;
  EXPECT_EQ(nlohmann::json::parse(ms.out)["time_ns"], nlohmann::json::parse(ns.out)["time_ns"]);
}

// `poems measure` refused --set compute=processor[measured] as "not a
// number"; a study attribute is a value wherever the specification allows one.
TEST_F(Grammar, NonNumericValuesWhereTheSpecificationAllowsThem) {
  CommandResult measured = poems_run("measure " + kSweep3D +
                                     " --set compute=processor[measured] --set npe_i=64 --set npe_j=64 "
                                     "--max-ranks 1 --machine Odin --no-store --format json");
  EXPECT_EQ(measured.exit_code, 1) << measured.err;  // not measured here: 4096 processes, but accepted
  EXPECT_EQ(nlohmann::json::parse(measured.out)["skipped"],
            "not measured: 4096 processes exceed the 1 this machine runs (--max-ranks)");
  CommandResult compiled = poems_run("compile " + kSweep3D + " --machine Odin --set compute=processor[measured]");
  ASSERT_EQ(compiled.exit_code, 0) << compiled.err;
  EXPECT_NE(compiled.out.find("-> processor[measured] via KBlock -> Opteron_measured"), std::string::npos)
      << compiled.out;
}

// `poems run` had no --set.
TEST_F(Grammar, RunTakesSetForWhatTheStudyDoesNotVary) {
  const std::string args =
      "run " + kSweep3D + " --study scaling_50 --paradigm analytic[LogGP] --format json --no-store";
  CommandResult mk10 = poems_run(args), mk5 = poems_run(args + " --set mk=5");
  ASSERT_EQ(mk5.exit_code, 0) << mk5.err;
  EXPECT_NE(nlohmann::json::parse(mk10.out)["rows"][2]["times_ns"],
            nlohmann::json::parse(mk5.out)["rows"][2]["times_ns"]);
  CommandResult varied = poems_run(args + " --set npe_i=2");
  EXPECT_EQ(varied.exit_code, 2);
  EXPECT_NE(varied.err.find("study scaling_50 varies npe_i"), std::string::npos) << varied.err;
}

// `poems analyze` and `poems simulate` had no --import; `--machine local`
// did not bring its calibrated processor (two processors matched).
TEST_F(Grammar, ImportAndAMachinesOwnProcessorEverywhere) {
  const std::string lab_psl = lab();
  for (const char* command : {"analyze", "simulate"}) {
    CommandResult r = poems_run(std::string(command) + " " + kSweep3D + " --import " + lab_psl +
                                " --machine lab --set iterations=1 --no-store");
    ASSERT_EQ(r.exit_code, 0) << command << ": " << r.err;
    EXPECT_NE(r.out.find("model Sweep3D (6 processes) on lab, Wg=7ns from lab_cpu"), std::string::npos) << r.out;
  }
  // --processor still chooses another one.
  CommandResult opteron =
      poems_run("analyze " + kSweep3D + " --import " + lab_psl + " --machine lab --processor Opteron --no-store");
  EXPECT_NE(opteron.out.find("Wg=60ns from Opteron"), std::string::npos) << opteron.out;
}

// `poems compile` refused an ambiguous machine while `poems simulate` took the first.
TEST_F(Grammar, AnAmbiguousMachineIsAnErrorEverywhere) {
  for (const char* command :
       {"compile", "simulate --no-store", "analyze --no-store", "recommend --procs 4 --no-store"}) {
    CommandResult r = poems_run(std::string(command) + " " + kSweep3D);
    EXPECT_EQ(r.exit_code, 1) << command;
    EXPECT_NE(r.err.find("matches 2 components: 'Odin', 'BigRed'"), std::string::npos) << command << ": " << r.err;
  }
}

// Paradigms were --only, --compare or --paradigm; process counts --procs,
// --np or -np; --timeout had three ranges.
TEST_F(Grammar, OneNameForParadigmsProcessCountsAndTimeouts) {
  CommandResult run = poems_run("run " + kSweep3D + " --study scaling_50 --paradigm analytic --no-store --format json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(nlohmann::json::parse(run.out)["paradigms"], nlohmann::json::array({"analytic[LogGP]"}));
  CommandResult ambiguous = poems_run("run " + kSweep3D + " --study scaling_50 --paradigm simulation --no-store");
  EXPECT_EQ(ambiguous.exit_code, 2);
  EXPECT_NE(ambiguous.err.find("'simulation' is ambiguous: simulation[MPI-Sim], simulation[direct]"), std::string::npos)
      << ambiguous.err;
  for (const char* command : {"simulate", "analyze"}) {
    CommandResult procs = poems_run(std::string(command) + " --collective bcast --procs 8 --size 8 --no-store");
    EXPECT_EQ(procs.exit_code, 0) << procs.err;
  }
  CommandResult timeout =
      poems_run("run " + kSweep3D + " --study scaling_50 --paradigm analytic --timeout 0 --no-store");
  EXPECT_EQ(timeout.exit_code, 0) << timeout.err;
  for (const char* command : {"run ", "measure "}) {
    CommandResult negative = poems_run(std::string(command) + kSweep3D + " --study scaling_50 --timeout -1 --no-store");
    EXPECT_EQ(negative.exit_code, 2) << command;
  }
}

// A mistyped subcommand got "A subcommand is required" and no suggestion.
TEST_F(Grammar, DidYouMean) {
  struct Case {
    std::string args, message;
  };
  const std::vector<Case> cases = {
      {"simulat " + kSweep3D, "unknown command 'simulat'; did you mean 'simulate'?"},
      {"run " + kSweep3D + " --studdy scaling", "unknown option '--studdy' of poems run; did you mean '--study'?"},
      {"run " + kSweep3D + " --study scalin", "no study named 'scalin'"},
      {"simulate " + kSweep3D + " --machine Odn", "did you mean 'Odin'?"},
      {"run " + kSweep3D + " --study scaling --paradigm analytic[LogGp]", "did you mean 'analytic[LogGP]'?"},
      {"simulate --collective alreduce --procs 4", "did you mean 'allreduce'?"},
  };
  for (const Case& c : cases) {
    CommandResult r = poems_run(c.args + " --no-store");
    EXPECT_EQ(r.exit_code, 2) << c.args;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.args << ": " << r.err;
  }
  CommandResult study = poems_run("run " + kSweep3D + " --study scalin --no-store");
  EXPECT_NE(study.err.find("did you mean 'scaling'?"), std::string::npos) << study.err;
}

// `poems check` accepted `compare analytic[LogGp]` and a study whose
// composition fails; `poems run` rejected them.
TEST_F(Grammar, CheckReportsWhatRunWouldReject) {
  const std::string spec = file("typo.psl", "import \"" + kSweep3D + "\";\n" + R"(study typo {
  model Sweep3D on Odin;
  set compute = processor[wg];
  vary npe_i in [1, 2];
  compare analytic[LogGp];
}
study no_cpu {
  model Sweep3D on Odin;
  set compute = processor[gem5];
  vary npe_i in [1, 2];
  compare analytic[LogGP];
}
)");
  CommandResult check = poems_run("check " + spec);
  EXPECT_EQ(check.exit_code, 1);
  EXPECT_NE(check.err.find("typo.psl:6:11: error: study 'typo' compares analytic[LogGp], which no evaluator implements "
                           "(evaluators: analytic[LogGP], measurement[mpirun], simulation[MPI-Sim], "
                           "simulation[direct]); did you mean 'analytic[LogGP]'?"),
            std::string::npos)
      << check.err;
  EXPECT_NE(check.err.find("sweep3d.psl:60:14: error: no component accepts request 'cpu' of 'KBlock'"),
            std::string::npos)
      << check.err;
  // Reported once, though both paradigms of a study compose the same request.
  const std::string no_cpu = "sweep3d.psl:60:14: error: no component accepts request 'cpu' of 'KBlock'";
  EXPECT_EQ(check.err.find(no_cpu), check.err.rfind(no_cpu)) << check.err;
  for (const char* study : {"typo", "no_cpu"}) {
    CommandResult run = poems_run("run " + spec + " --study " + study + " --no-store");
    EXPECT_EQ(run.exit_code, 1) << study << ": " << run.err;
  }
  EXPECT_EQ(poems_run("check " + kSweep3D).exit_code, 0);
}

// A processor that is its attributes (a Wg, a working-set curve) is built by
// `poems check`: a bad attribute is located at its component, once, not
// found by the first run.
TEST_F(Grammar, CheckBuildsTheProcessorsThatAreTheirAttributes) {
  const std::string spec =
      file("curve.psl", "import \"" + kSweep3D + "\";\n" + R"(component MyNet in hardware[network] {
  param L = 5.3us, o = 2.3us, g = 2us, G = 2.5ns/B, O = 1ns/B, S = 32768B;
  accepts {
    profile { evaluation = analytic[LogGP]; L = L; o = o; g = g; G = G; O = O; S = S; }
    transaction message(bytes: bytes) -> time;
    protocol call_return;
  }
}
component Backwards in hardware[processor] {
  param ws_1 = 1MiB, ws_2 = 512KiB;
  accepts {
    profile { node_type = "cpu"; evaluation = processor[hierarchy]; ws_1 = ws_1; Wg_1 = 5ns; ws_2 = ws_2; Wg_2 = 6ns; }
    transaction execute_code_block(work: real) -> time;
    protocol call_return;
  }
}
study s {
  model Sweep3D on MyNet;
  set compute = processor[hierarchy];
  set npe_i = 1, npe_j = 1, it_g = 8, jt_g = 8, kt = 8, mk = 4, iterations = 1;
  compare simulation[MPI-Sim], analytic[LogGP];
}
)");
  CommandResult check = poems_run("check " + spec);
  EXPECT_EQ(check.exit_code, 1);
  const std::string error =
      "curve.psl:10:11: error: processor component 'Backwards' (processor[hierarchy]): attribute 'ws_2' (524288 B) "
      "must be larger than 'ws_1' (1048576 B)";
  EXPECT_NE(check.err.find(error), std::string::npos) << check.err;
  EXPECT_EQ(check.err.find(error), check.err.rfind(error)) << check.err;
  CommandResult run = poems_run("run " + spec + " --study s --no-store");
  EXPECT_NE(run.exit_code, 0);
  EXPECT_NE(run.err.find("must be larger than 'ws_1'"), std::string::npos) << run.err;
}

// `poems simulate` ran a specification that fails the static communication
// check into a deadlock without a word.
TEST_F(Grammar, WhatCheckRejectsIsNotSimulated) {
  const std::string spec = file("lost.psl", R"(model Lost {
  param P = 2;
  taskgraph t {
    processes { [r] : 0 <= r < P };
    if r == 0 { send to [1] size 8B; }
  }
}
)" + std::string(kPingPong).substr(std::string(kPingPong).find("component")));
  for (const char* command : {"simulate", "analyze", "check"}) {
    CommandResult r =
        poems_run(std::string(command) + " " + spec + (std::string(command) == "check" ? "" : " --no-store"));
    EXPECT_EQ(r.exit_code, 1) << command << ": " << r.err;
    EXPECT_NE(r.err.find("lost.psl:5:17: error: send has no matching recv"), std::string::npos) << r.err;
  }
}

// A specification with no compute task still demanded --wg.
TEST_F(Grammar, NoComputeTaskNeedsNoWg) {
  const std::string spec = file("pingpong.psl", kPingPong);
  CommandResult r = poems_run("simulate " + spec + " --format json --no-store");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["finish_ns"], 27069);
  // The only machine of the specification; the messages' components are not needed.
  CommandResult a = poems_run("analyze " + spec + " --format json --no-store");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(nlohmann::json::parse(a.out)["time_ns"], 27069);
}

// `run` and `simulate` on an unusable knowledge base exited 0 with a warning
// that nothing was stored (issue 25).
TEST_F(Grammar, AResultThatCannotBeStoredIsAnEvaluationFailure) {
  const std::string nowhere = " --db " + (dir_ / "missing" / "dir" / "kb.db").string();
  for (const std::string& command :
       {"simulate " + kSweep3D + " --machine Odin --set iterations=1", "analyze " + kSweep3D + " --machine Odin",
        "run " + kSweep3D + " --study scaling_50 --paradigm analytic"}) {
    CommandResult failed = poems_run(command + nowhere);
    EXPECT_EQ(failed.exit_code, 3) << command;
    EXPECT_NE(failed.err.find("cannot store results"), std::string::npos) << failed.err;
    EXPECT_NE(failed.err.find("--no-store evaluates without storing"), std::string::npos) << failed.err;
    EXPECT_EQ(poems_run(command + nowhere + " --no-store").exit_code, 0) << command;
  }
  // A file that is not a knowledge base (issue 25: refused unchanged, never
  // replaced) fails the evaluation the same way, the file left as it was.
  const std::string text = "not a knowledge base\n";
  const std::string foreign = file("notes.db", text);
  for (const std::string& command :
       {"simulate --goal " + kSource + "/examples/goal/tree8.goal", "run " + kSweep3D + " --study scaling_50"}) {
    CommandResult failed = poems_run(command + " --db " + foreign);
    EXPECT_EQ(failed.exit_code, 3) << command;
    EXPECT_NE(failed.err.find("cannot store results"), std::string::npos) << failed.err;
    EXPECT_EQ(failed.out, "") << command;  // nothing evaluated
  }
  EXPECT_EQ(read_text(foreign), text);
}

// Exit codes follow the kind of error, whichever command meets it.
TEST_F(Grammar, ExitCodesByErrorType) {
  const std::string broken = file("broken.psl", "model M { param a = 5us + 8KB; }\n");
  EXPECT_EQ(poems_run("simulate " + broken + " --no-store").exit_code, 1);  // the file
  EXPECT_EQ(poems_run("run " + broken + " --study s --no-store").exit_code, 1);
  EXPECT_EQ(poems_run("simulate " + kSweep3D + " --machine Odin --format yaml").exit_code, 2);  // the command line
  EXPECT_EQ(poems_run("analyze " + kSweep3D + " --machine Odin --method exact --no-store").exit_code, 2);
  const std::string deadlock = kSource + "/examples/goal/deadlock.goal";
  EXPECT_EQ(poems_run("simulate --goal " + deadlock + " --no-store").exit_code, 3);  // the evaluation
}

// An option given twice was CLI11's "At Most 1 required but received 2";
// a recommender question could name a parameter twice, or both fix and vary it.
TEST_F(Grammar, AnOptionOrAParameterGivenTwice) {
  CommandResult twice = poems_run("analyze " + kSweep3D + " --machine Odin --machine BigRed --no-store");
  EXPECT_EQ(twice.exit_code, 2);
  EXPECT_NE(twice.err.find("--machine: given more than once; it takes one value"), std::string::npos) << twice.err;
  const std::string question = "recommend " + kSweep3D + " --machine Odin --procs 16 --no-store";
  CommandResult vary = poems_run(question + " --vary mk=1..3 --vary mk=2");
  EXPECT_EQ(vary.exit_code, 2);
  EXPECT_NE(vary.err.find("--vary: mk is given twice"), std::string::npos) << vary.err;
  CommandResult fixed = poems_run(question + " --set mk=3 --vary mk=1..4");
  EXPECT_EQ(fixed.exit_code, 2);
  EXPECT_NE(fixed.err.find("--vary: mk is also bound by --set"), std::string::npos) << fixed.err;
}

}  // namespace grammar_tests
