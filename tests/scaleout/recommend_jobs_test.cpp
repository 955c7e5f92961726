// `poems recommend --jobs N`: the gap-filling evaluations (the critical path
// of a model without a closed form) and the --confirm simulations on forked
// workers store the rows a serial question stores and print its answer; a
// candidate that cannot be evaluated fails the question as it does serially;
// a question killed with SIGKILL loses nothing stored and a rerun completes
// it. Each question runs in a directory of its own with the same knowledge
// base name, so the answers (which name the file) compare byte for byte but
// for the wall time.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <thread>

#include "../cli/run_command.h"
#include "stored_rows.h"

namespace fs = std::filesystem;

// Its own namespace: unity builds (tests/CMakeLists.txt) batch files together.
namespace recommend_jobs_tests {

namespace {

const std::string kSource = POEMS_SOURCE_DIR;
const std::string kPoems = POEMS_BINARY;
const std::string kPipeline = kSource + "/tests/scaleout/recommend_pipeline.psl";
const std::string kChunks = " --vary chunk=1,2,3,4,5,6,8,10,12,15,20,24,30,40";

// An empty directory of its own.
std::string temp_dir(const std::string& name) {
  const fs::path p = fs::temp_directory_path() / ("poems_recjobs_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(p);
  fs::create_directories(p);
  return p.string();
}

// `poems ARGS --db poems.db` in `dir`.
CommandResult recommend(const std::string& dir, const std::string& args) {
  return run_command("cd " + dir + " && " + kPoems + " " + args + " --db poems.db");
}

// The answer without its wall time ("...; 0.264 s").
std::string without_wall(const std::string& text) {
  static const std::regex wall("; [0-9]+\\.[0-9]{3} s\n");
  return std::regex_replace(text, wall, "; (wall) s\n");
}

}  // namespace

TEST(RecommendJobs, TwoJobsStoreAndPrintWhatASerialQuestionDoes) {
  const std::string serial = temp_dir("serial"), parallel = temp_dir("parallel");
  // Seven layouts (one study each), 14 candidates a layout, by critical path.
  const std::string args = "recommend " + kPipeline + kChunks + " --procs-range 2..20 ";
  const CommandResult s = recommend(serial, args + "--jobs 1");
  ASSERT_EQ(s.exit_code, 0) << s.err;
  const CommandResult p = recommend(parallel, args + "--jobs 2");
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_NE(s.out.find("98 candidates (critical-path)"), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("98 evaluated, 98 stored"), std::string::npos) << s.out;
  EXPECT_EQ(without_wall(p.out), without_wall(s.out));
  EXPECT_EQ(p.err, s.err);
  const nlohmann::json rows = stored_rows(serial + "/poems.db");
  ASSERT_EQ(rows["runs"].size(), 98u);
  ASSERT_EQ(rows["studies"].size(), 98u);  // every run linked to its layout's study
  EXPECT_EQ(stored_rows(parallel + "/poems.db"), rows);

  // The recommendations confirmed by simulation, as JSON: the simulations
  // run on the workers, are stored in the same order with the same ids.
  const std::string confirm =
      "recommend " + kPipeline + kChunks + " --procs 8 --top 3 --confirm --format json --set n=240 ";
  const CommandResult sc = recommend(serial, confirm + "--jobs 1");
  ASSERT_EQ(sc.exit_code, 0) << sc.err;
  const CommandResult pc = recommend(parallel, confirm + "--jobs 2");
  ASSERT_EQ(pc.exit_code, 0) << pc.err;
  nlohmann::json sj = nlohmann::json::parse(sc.out), pj = nlohmann::json::parse(pc.out);
  ASSERT_TRUE(sj.contains("wall_seconds")) << sc.out;
  sj.erase("wall_seconds");
  pj.erase("wall_seconds");
  EXPECT_EQ(pj, sj);
  EXPECT_EQ(sj["confirm"]["items"].size(), 3u) << sc.out;
  const nlohmann::json confirmed = stored_rows(serial + "/poems.db");
  std::size_t simulations = 0;
  for (const nlohmann::json& run : confirmed["runs"]) simulations += run["evaluator"] == "simulation[MPI-Sim]";
  EXPECT_EQ(simulations, 3u);
  EXPECT_EQ(stored_rows(parallel + "/poems.db"), confirmed);

  // Asked again: everything is found, nothing evaluated, the same answer.
  const CommandResult again_s = recommend(serial, args + "--jobs 1");
  const CommandResult again_p = recommend(parallel, args + "--jobs 2");
  ASSERT_EQ(again_p.exit_code, 0) << again_p.err;
  EXPECT_NE(again_p.out.find("98 stored results reused, 0 evaluated, 0 stored"), std::string::npos) << again_p.out;
  EXPECT_EQ(without_wall(again_p.out), without_wall(again_s.out));
  EXPECT_EQ(stored_rows(parallel + "/poems.db"), confirmed);
  fs::remove_all(serial);
  fs::remove_all(parallel);
}

TEST(RecommendJobs, ACandidateThatCannotBeEvaluatedFailsTheQuestionAsSerially) {
  // bad=1: P = 9 (the fourth layout) makes a loop bound 48 / 9; the layouts
  // before it are stored, nothing of it or after it.
  const std::string serial = temp_dir("fail_serial"), parallel = temp_dir("fail_parallel");
  const std::string args = "recommend " + kPipeline + kChunks + " --procs-range 2..20 --set bad=1 ";
  const CommandResult s = recommend(serial, args + "--jobs 1");
  const CommandResult p = recommend(parallel, args + "--jobs 2");
  EXPECT_EQ(s.exit_code, 1) << s.err;
  EXPECT_EQ(p.exit_code, 1) << p.err;
  EXPECT_NE(s.err.find("the candidate P=9, chunk=1 cannot be evaluated: loop"), std::string::npos) << s.err;
  EXPECT_EQ(p.err, s.err);
  EXPECT_EQ(p.out, s.out);
  const nlohmann::json rows = stored_rows(serial + "/poems.db");
  EXPECT_EQ(rows["runs"].size(), 3u * 14u);
  EXPECT_EQ(stored_rows(parallel + "/poems.db"), rows);
  fs::remove_all(serial);
  fs::remove_all(parallel);
}

TEST(RecommendJobs, AFailingConfirmingSimulationIsStoredAsFailed) {
  // An operation limit the simulations exceed (Sweep3D's closed form has no
  // operations to count): the first fails the question with the serial
  // message and exit code and is stored as failed; the second, started on the
  // other worker with the first (two workers, none free before a result),
  // is stored as failed too (a serial question would not have started it),
  // the other two are not started.
  const std::string serial = temp_dir("sim_serial"), parallel = temp_dir("sim_parallel");
  const std::string args = "--limit operations=" POEMS_SCALEOUT_OPERATION_LIMIT " recommend " + kSource +
                           "/examples/sweep3d/sweep3d.psl --machine Odin --wg 60ns --set it_g=16 --set jt_g=16 "
                           "--set kt=16 --procs 4 --top 4 --confirm ";
  const CommandResult s = recommend(serial, args + "--jobs 1");
  const CommandResult p = recommend(parallel, args + "--jobs 2");
  EXPECT_EQ(s.exit_code, 1) << s.err;  // the binding is too large for the limit: an input error
  EXPECT_EQ(p.exit_code, s.exit_code) << p.err;
  EXPECT_NE(s.err.find("more than " POEMS_SCALEOUT_OPERATION_LIMIT " operations"), std::string::npos) << s.err;
  EXPECT_EQ(p.err, s.err);
  EXPECT_EQ(p.out, s.out);
  const nlohmann::json srows = stored_rows(serial + "/poems.db"), prows = stored_rows(parallel + "/poems.db");
  // Serially: the 64 analytic runs (16 mk x 4 mmi), then the first simulation, failed.
  ASSERT_EQ(srows["runs"].size(), 65u) << srows.dump(1);
  EXPECT_EQ(srows["runs"][64]["evaluator"], "simulation[MPI-Sim]");
  EXPECT_EQ(srows["runs"][64]["status"], "failed");
  ASSERT_EQ(prows["runs"].size(), 66u) << prows.dump(1);  // one more: the other worker's, not left running
  for (std::size_t i = 0; i < 65; ++i) EXPECT_EQ(prows["runs"][i], srows["runs"][i]) << i;
  EXPECT_EQ(prows["runs"][65]["evaluator"], "simulation[MPI-Sim]");
  EXPECT_EQ(prows["runs"][65]["status"], "failed");
  EXPECT_EQ(prows["runs"][65]["error"], srows["runs"][64]["error"]);
  fs::remove_all(serial);
  fs::remove_all(parallel);
}

TEST(RecommendJobs, AKilledQuestionLosesNothingStoredAndARerunCompletesIt) {
  const std::string dir = temp_dir("killed"), serial = temp_dir("killed_serial");
  const std::string db = dir + "/poems.db";
  // 18 layouts of 14 candidates, a few seconds in all.
  const std::string range = "2..100";
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::freopen("/dev/null", "w", stdout);
    ::freopen("/dev/null", "w", stderr);
    ::execl(kPoems.c_str(), kPoems.c_str(), "recommend", kPipeline.c_str(), "--vary",
            "chunk=1,2,3,4,5,6,8,10,12,15,20,24,30,40", "--procs-range", range.c_str(), "--set", "n=2400", "--jobs",
            "2", "--db", db.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // Kill it (SIGKILL: no handler runs) once a layout is stored and before the last.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (fs::exists(db) && done_runs(db) >= 14) break;
  }
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the question finished before it was killed: make it slower";
  const nlohmann::json before = stored_rows(db);
  const std::size_t stored_before = before["runs"].size();
  ASSERT_GE(stored_before, 14u);
  ASSERT_LT(stored_before, 252u) << "every candidate was stored before the kill";
  EXPECT_EQ(stored_before % 14, 0u) << "a layout is stored whole or not at all";

  const std::string args = "recommend " + kPipeline + kChunks + " --procs-range " + range + " --set n=2400 ";
  const CommandResult rerun = recommend(dir, args + "--jobs 2");
  ASSERT_EQ(rerun.exit_code, 0) << rerun.err;
  // What was stored before the kill is reused, the rest evaluated.
  EXPECT_NE(rerun.out.find(std::to_string(stored_before) + " stored results reused, " +
                           std::to_string(252 - stored_before) + " evaluated"),
            std::string::npos)
      << rerun.out;
  const CommandResult s = recommend(serial, args + "--jobs 1");
  ASSERT_EQ(s.exit_code, 0) << s.err;
  // The same table; the same rows and ids as one serial question.
  const auto table = [](const std::string& out) { return out.substr(out.find("\n\n")); };
  EXPECT_EQ(table(rerun.out), table(s.out));
  EXPECT_EQ(stored_rows(db), stored_rows(serial + "/poems.db"));
  const nlohmann::json after = stored_rows(db);
  for (std::size_t i = 0; i < stored_before; ++i) EXPECT_EQ(after["runs"][i], before["runs"][i]) << i;
  fs::remove_all(dir);
  fs::remove_all(serial);
}

}  // namespace recommend_jobs_tests
