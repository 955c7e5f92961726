// `poems run --jobs N`: the same table, progress lines and stored runs as a
// serial run; a failing evaluation stored as failed while the rest go on; a
// run killed with SIGKILL loses nothing stored and a re-run completes it.
// The `poems` executable runs as a process of its own (its workers are
// forked processes; the kill test kills it).
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "../cli/run_command.h"
#include "stored_rows.h"

namespace fs = std::filesystem;

namespace {

const std::string kSource = POEMS_SOURCE_DIR;
const std::string kPoems = POEMS_BINARY;
const std::string kSmall = kSource + "/tests/compiler/studies/sweep3d_small.psl";

std::string temp_path(const std::string& name) {
  const fs::path p = fs::temp_directory_path() / ("poems_scaleout_" + name + "_" + std::to_string(::getpid()));
  fs::remove(p);
  return p.string();
}

CommandResult poems_cmd(const std::string& args) { return run_command(kPoems + " " + args); }

}  // namespace

TEST(ParallelStudy, TwoJobsStoreAndPrintWhatASerialRunDoes) {
  const std::string serial_db = temp_path("serial.db"), parallel_db = temp_path("parallel.db");
  const CommandResult serial = poems_cmd("run " + kSmall + " --study small --jobs 1 --db " + serial_db);
  ASSERT_EQ(serial.exit_code, 0) << serial.err;
  const CommandResult parallel = poems_cmd("run " + kSmall + " --study small --jobs 2 --db " + parallel_db);
  ASSERT_EQ(parallel.exit_code, 0) << parallel.err;
  EXPECT_EQ(parallel.out, serial.out);
  EXPECT_EQ(parallel.err, serial.err);  // the progress lines, in plan order
  EXPECT_NE(serial.out.find("npe_i"), std::string::npos) << serial.out;
  const nlohmann::json rows = stored_rows(serial_db);
  ASSERT_EQ(rows["runs"].size(), 8u);  // 4 bindings x 2 paradigms
  EXPECT_EQ(stored_rows(parallel_db), rows);

  // JSON output, and a re-run that reuses every stored cell, as serial.
  const CommandResult again = poems_cmd("run " + kSmall + " --study small --jobs 2 --format json --db " + parallel_db);
  const CommandResult again_serial =
      poems_cmd("run " + kSmall + " --study small --jobs 1 --format json --db " + serial_db);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out, again_serial.out);
  EXPECT_EQ(again.err, again_serial.err);
  EXPECT_NE(again.err.find("[8/8] npe_i=4 npe_j=4 simulation[MPI-Sim]: stored result"), std::string::npos) << again.err;
  EXPECT_EQ(stored_rows(parallel_db), rows);
  fs::remove(serial_db);
  fs::remove(parallel_db);
}

TEST(ParallelStudy, AFailingEvaluationIsStoredAsFailedAndTheRestGoOn) {
  // An operation limit that the two larger simulations exceed: they fail in
  // the workers, the other cells are stored.
  const std::string serial_db = temp_path("fail_serial.db"), parallel_db = temp_path("fail_parallel.db");
  const std::string args = "--limit operations=" POEMS_SCALEOUT_OPERATION_LIMIT " run " + kSmall + " --study small ";
  const CommandResult serial = poems_cmd(args + "--jobs 1 --db " + serial_db);
  const CommandResult parallel = poems_cmd(args + "--jobs 2 --db " + parallel_db);
  EXPECT_EQ(serial.exit_code, 3) << serial.err;
  EXPECT_EQ(parallel.exit_code, 3) << parallel.err;
  EXPECT_EQ(parallel.out, serial.out);
  EXPECT_EQ(parallel.err, serial.err);
  const nlohmann::json rows = stored_rows(parallel_db);
  EXPECT_EQ(rows, stored_rows(serial_db));
  std::size_t failed = 0, done = 0;
  for (const nlohmann::json& run : rows["runs"]) {
    failed += run["status"] == "failed";
    done += run["status"] == "done";
  }
  EXPECT_EQ(failed, 2u) << rows.dump(1);
  EXPECT_EQ(done, 6u) << rows.dump(1);
  fs::remove(serial_db);
  fs::remove(parallel_db);
}

TEST(ParallelStudy, AKilledRunLosesNothingStoredAndARerunCompletesIt) {
  const std::string db = temp_path("killed.db"), serial_db = temp_path("killed_serial.db");
  const std::string study = kSource + "/tests/scaleout/slow_study.psl";
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::freopen("/dev/null", "w", stdout);
    ::freopen("/dev/null", "w", stderr);
    ::execl(kPoems.c_str(), kPoems.c_str(), "run", study.c_str(), "--study", "slow", "--jobs", "2", "--db", db.c_str(),
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // Kill it (SIGKILL: no handler runs) once some cells are stored and before the last.
  std::size_t stored_before = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (fs::exists(db)) {
      stored_before = done_runs(db);
      if (stored_before >= 2) break;
    }
  }
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the run finished before it was killed: make slow_study.psl slower";
  const nlohmann::json before = stored_rows(db);
  stored_before = 0;
  for (const nlohmann::json& run : before["runs"]) stored_before += run["status"] == "done";
  ASSERT_GE(stored_before, 2u);
  ASSERT_LT(stored_before, 8u) << "every cell was stored before the kill";

  const CommandResult rerun = poems_cmd("run " + study + " --study slow --jobs 2 --db " + db);
  ASSERT_EQ(rerun.exit_code, 0) << rerun.err;
  // What was stored before the kill is reused, not evaluated again.
  std::size_t reused = 0;
  for (std::size_t at = 0; (at = rerun.err.find(": stored result", at)) != std::string::npos; ++at) ++reused;
  EXPECT_EQ(reused, stored_before) << rerun.err;
  const CommandResult serial = poems_cmd("run " + study + " --study slow --jobs 1 --db " + serial_db);
  ASSERT_EQ(serial.exit_code, 0) << serial.err;
  EXPECT_EQ(rerun.out, serial.out);
  const nlohmann::json after = stored_rows(db), expected = stored_rows(serial_db);
  ASSERT_EQ(after["runs"].size(), expected["runs"].size());
  for (std::size_t i = 0; i < expected["runs"].size(); ++i) {
    EXPECT_EQ(after["runs"][i]["status"], "done");
    EXPECT_EQ(after["runs"][i]["result"], expected["runs"][i]["result"]) << i;
  }
  EXPECT_EQ(after["studies"], expected["studies"]);
  // Every result stored before the kill is still there, unchanged.
  for (std::size_t i = 0; i < before["runs"].size(); ++i)
    if (before["runs"][i]["status"] == "done") {
      EXPECT_EQ(after["runs"][i], before["runs"][i]) << i;
    }
  fs::remove(db);
  fs::remove(serial_db);
}
