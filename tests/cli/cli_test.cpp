// The `poems` command line on real PSL files, in process (poems::cli::run).
#include <gtest/gtest.h>

#include <sys/wait.h>
#include "run_command.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace fs = std::filesystem;

namespace {

CommandResult poems_run(const std::string& args) { return poems_in_process(args); }

std::string example(const std::string& name) { return std::string(POEMS_SOURCE_DIR) + "/examples/sweep3d/" + name; }
std::string corpus(const std::string& name) { return std::string(POEMS_SOURCE_DIR) + "/tests/psl/errors/" + name; }

}  // namespace

TEST(Cli, CheckSweep3DSucceeds) {
  CommandResult r = poems_run("check " + example("sweep3d.psl"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "OK: 1 models, 13 components, 9 studies\n");
  EXPECT_EQ(r.err, "");
}

TEST(Cli, CheckBrokenFileExitsOneWithLocatedDiagnostics) {
  CommandResult r = poems_run("check " + corpus("unit_time_plus_size.psl"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("unit_time_plus_size.psl:3:17: error: cannot add time and size\n"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("    param a = 5us + 8KB;\n                  ^\n"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("1 error generated."), std::string::npos);
}

TEST(Cli, CheckReportsEveryBrokenFile) {
  CommandResult r = poems_run("check " + corpus("unit_time_plus_size.psl") + " " + corpus("missing_semicolon.psl"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("unit_time_plus_size.psl:"), std::string::npos);
  EXPECT_NE(r.err.find("missing_semicolon.psl:"), std::string::npos);
}

TEST(Cli, CheckJsonFormat) {
  CommandResult r = poems_run("check --format json " + corpus("unit_time_plus_size.psl"));
  EXPECT_EQ(r.exit_code, 1);
  auto j = nlohmann::json::parse(r.out);
  EXPECT_FALSE(j["ok"]);
  ASSERT_EQ(j["diagnostics"].size(), 1u);
  EXPECT_EQ(j["diagnostics"][0]["line"], 3);
  EXPECT_EQ(j["diagnostics"][0]["severity"], "error");
}

TEST(Cli, AstIsValidJsonWithLocations) {
  CommandResult r = poems_run("ast " + example("sweep3d.psl") + " --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["modules"].size(), 3u);
  const auto& model = j["modules"][2]["models"][0];
  EXPECT_EQ(model["name"]["name"], "Sweep3D");
  EXPECT_TRUE(model["name"]["location"]["file"].get<std::string>().ends_with("sweep3d.psl"));
  EXPECT_EQ(j["modules"][0]["components"][0]["name"]["name"], "Odin");
}

TEST(Cli, AstOfBrokenFileExitsOne) {
  CommandResult r = poems_run("ast " + corpus("missing_semicolon.psl"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
}

TEST(Cli, VersionAndHelp) {
  CommandResult v = poems_run("--version");
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_EQ(v.out.rfind("poems ", 0), 0u) << v.out;
  CommandResult h = poems_run("--help");
  EXPECT_EQ(h.exit_code, 0);
  EXPECT_NE(h.out.find("check"), std::string::npos);
  EXPECT_NE(h.out.find("ast"), std::string::npos);
}

TEST(Cli, UsageErrorsExitTwo) {
  EXPECT_EQ(poems_run("").exit_code, 2);
  EXPECT_EQ(poems_run("frobnicate").exit_code, 2);
  EXPECT_EQ(poems_run("check").exit_code, 2);
  CommandResult missing = poems_run("check /nonexistent/file.psl");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("/nonexistent/file.psl"), std::string::npos) << missing.err;
  EXPECT_EQ(poems_run("check --format yaml " + example("sweep3d.psl")).exit_code, 2);
}

TEST(Cli, TaskgraphStatsOfTheDesignCase) {
  CommandResult r = poems_run("taskgraph " + example("sweep3d.psl") +
                              " --stats --format json --set mk=30 --set mmi=2 --set iterations=1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["processes"], 6);
  EXPECT_EQ(j["p2p_messages"], 840);
  EXPECT_EQ(j["p2p_bytes"], 25920000);  // 360 x 8*50*30*2 + 480 x 8*75*30*2
  EXPECT_EQ(j["tasks"], 720);
  EXPECT_EQ(j["collectives"], 1);
}

TEST(Cli, TaskgraphRejectsBadBindings) {
  CommandResult unknown = poems_run("taskgraph " + example("sweep3d.psl") + " --stats --set npe_k=1");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("--set npe_k=1: 'npe_k' is not a parameter of model 'Sweep3D' nor a study setting that "
                             "a selector reads as 'study.npe_k'; did you mean 'npe_i'?"),
            std::string::npos)
      << unknown.err;
  CommandResult malformed = poems_run("taskgraph " + example("sweep3d.psl") + " --stats --set mk");
  EXPECT_EQ(malformed.exit_code, 2);
  EXPECT_NE(malformed.err.find("'mk' is not NAME=VALUE"), std::string::npos) << malformed.err;
  CommandResult unit = poems_run("taskgraph " + example("sweep3d.psl") + " --stats --set mk=3parsecs");
  EXPECT_EQ(unit.exit_code, 2);
  EXPECT_NE(unit.err.find("unknown unit 'parsecs'"), std::string::npos) << unit.err;
}

TEST(Cli, SimulateSpecEqualsSimulatingItsGoalExport) {
  const std::string goal =
      (fs::temp_directory_path() / ("poems_cli_sweep_" + std::to_string(::getpid()) + ".goal")).string();
  const std::string binding = " --set npe_i=3 --set npe_j=2 --set iterations=1 --set mk=50";
  CommandResult exported = poems_run("taskgraph " + example("sweep3d.psl") + binding + " --wg 60ns --goal " + goal);
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  // Odin's LogGOPS parameters (machines.psl) given by hand to the GOAL run.
  CommandResult from_goal =
      poems_run("simulate --goal " + goal + " -L 5.3us -o 2.3us -g 2us -G 2.5ns/B -O 1ns/B -S 32768 --format json");
  CommandResult from_spec = poems_run("simulate " + example("sweep3d.psl") + binding + " --machine Odin --format json");
  fs::remove(goal);
  ASSERT_EQ(from_goal.exit_code, 0) << from_goal.err;
  ASSERT_EQ(from_spec.exit_code, 0) << from_spec.err;
  auto a = nlohmann::json::parse(from_goal.out), b = nlohmann::json::parse(from_spec.out);
  EXPECT_GT(b["finish_ns"].get<double>(), 0);
  EXPECT_EQ(a["finish_ns"], b["finish_ns"]);
  EXPECT_EQ(a["events"], b["events"]);
  EXPECT_EQ(a["ranks"], b["ranks"]);
}

TEST(Cli, SimulateSpecErrors) {
  CommandResult machine = poems_run("simulate " + example("sweep3d.psl") + " --machine Odn");
  EXPECT_EQ(machine.exit_code, 2);
  EXPECT_NE(machine.err.find("--machine: no component named 'Odn' (hardware components: Odin, BigRed, Opteron, "
                             "Opteron_hierarchy, Opteron_measured); did you mean 'Odin'?"),
            std::string::npos)
      << machine.err;
  CommandResult param = poems_run("simulate " + example("sweep3d.psl") + " --machine Odin --set nosuch=3");
  EXPECT_EQ(param.exit_code, 2);
  EXPECT_NE(param.err.find("'nosuch' is not a parameter of model 'Sweep3D'"), std::string::npos) << param.err;
  CommandResult not_hw = poems_run("simulate " + example("sweep3d.psl") + " --machine KBlock");
  EXPECT_EQ(not_hw.exit_code, 2);
  EXPECT_NE(not_hw.err.find("'KBlock' is not a hardware component"), std::string::npos) << not_hw.err;
  CommandResult cpu = poems_run("simulate " + example("sweep3d.psl") + " --machine Opteron");
  EXPECT_EQ(cpu.exit_code, 2);
  EXPECT_NE(cpu.err.find("'Opteron' is hardware[processor], not a machine (hardware[network])"), std::string::npos)
      << cpu.err;
  // A machine parameter overridden with --set Component.param (the latency study's knob).
  CommandResult slow = poems_run("simulate " + example("sweep3d.psl") +
                                 " --machine Odin --set iterations=1 --set Odin.L=53us --format json");
  CommandResult fast =
      poems_run("simulate " + example("sweep3d.psl") + " --machine Odin --set iterations=1 --format json");
  ASSERT_EQ(slow.exit_code, 0) << slow.err;
  EXPECT_GT(nlohmann::json::parse(slow.out)["finish_ns"].get<double>(),
            nlohmann::json::parse(fast.out)["finish_ns"].get<double>());
}

TEST(Cli, SimulateStoresItsResultOnce) {
  const fs::path db = fs::temp_directory_path() / ("poems_cli_store_" + std::to_string(::getpid()) + ".db");
  fs::remove(db);
  const std::string run =
      "simulate " + example("sweep3d.psl") + " --machine Odin --set iterations=1 --format json --db " + db.string();
  CommandResult first = poems_run(run), second = poems_run(run);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.err.find("stored as run 1"), std::string::npos) << first.err;
  EXPECT_NE(second.err.find("already stored as run 1"), std::string::npos) << second.err;
  CommandResult runs = poems_run("db runs --format json --db " + db.string());
  ASSERT_EQ(runs.exit_code, 0) << runs.err;
  auto j = nlohmann::json::parse(runs.out);
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["evaluator"], "simulation[MPI-Sim]");
  EXPECT_EQ(j[0]["status"], "done");
  EXPECT_EQ(j[0]["result"]["time_ns"], nlohmann::json::parse(first.out)["finish_ns"]);
  // A different binding is a different run; --no-store stores nothing.
  poems_run(run + " --set npe_i=3");
  poems_run(run + " --set npe_i=4 --no-store");
  EXPECT_EQ(nlohmann::json::parse(poems_run("db runs --format json --db " + db.string()).out).size(), 2u);
  fs::remove(db);
  fs::remove(db.string() + "-wal");
  fs::remove(db.string() + "-shm");
}

// A run is keyed by what the specification says, not where it lies: the same
// files copied elsewhere (or named by another path) find the stored run; a
// changed file is another specification.
TEST(Cli, StoredRunsAreFoundByContentNotPath) {
  const fs::path dir = fs::temp_directory_path() / ("poems_cli_copy_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  for (const char* f : {"sweep3d.psl", "machines.psl", "mpi.psl"}) fs::copy_file(example(f), dir / f);
  const fs::path db = dir / "kb.db";
  const std::string args =
      " --machine Odin --set iterations=1 --set npe_i=3 --set npe_j=3 --format json --db " + db.string();
  CommandResult original = poems_run("analyze " + example("sweep3d.psl") + args);
  ASSERT_EQ(original.exit_code, 0) << original.err;
  EXPECT_NE(original.err.find("stored as run 1"), std::string::npos) << original.err;
  CommandResult copy = poems_run("analyze " + (dir / "." / "sweep3d.psl").string() + args);
  ASSERT_EQ(copy.exit_code, 0) << copy.err;
  EXPECT_NE(copy.err.find("already stored as run 1"), std::string::npos) << copy.err;
  {
    std::ofstream machines(dir / "machines.psl", std::ios::app);
    machines << "\n// edited\n";
  }
  CommandResult edited = poems_run("analyze " + (dir / "sweep3d.psl").string() + args);
  ASSERT_EQ(edited.exit_code, 0) << edited.err;
  EXPECT_NE(edited.err.find("stored as run 2"), std::string::npos) << edited.err;
  fs::remove_all(dir);
}
