// The MPI-distributed study runner (`mpirun -np R poems run`, `--ranks R`):
// the serial run's table, progress lines and stored runs; a failing
// evaluation stored as failed while the rest go on; the writer rank killed
// with SIGKILL loses nothing stored and a re-run completes the study.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "../cli/run_command.h"
#include "stored_rows.h"

namespace fs = std::filesystem;

// Its own namespace: unity builds (tests/CMakeLists.txt) batch files together.
namespace mpi_study_tests {

namespace {

const std::string kSource = POEMS_SOURCE_DIR;
const std::string kPoems = POEMS_BINARY;
const std::string kSmall = kSource + "/tests/compiler/studies/sweep3d_small.psl";
const std::string kSlow = kSource + "/tests/scaleout/slow_study.psl";

std::string temp_path(const std::string& name) {
  const fs::path p = fs::temp_directory_path() / ("poems_mpi_study_" + name + "_" + std::to_string(::getpid()));
  fs::remove(p);
  return p.string();
}

std::string mpirun(int ranks) {
  return sanitizer_environment() + "mpirun " + (::geteuid() == 0 ? "--allow-run-as-root " : "") +
         "--oversubscribe --bind-to none -np " + std::to_string(ranks) + " " + kPoems + " ";
}

CommandResult serial(const std::string& args) { return run_command(sanitizer_environment() + kPoems + " " + args); }

}  // namespace

TEST(MpiStudy, RanksStoreAndPrintWhatASerialRunDoes) {
  const std::string serial_db = temp_path("serial.db");
  const CommandResult expected = serial("run " + kSmall + " --study small --jobs 1 --db " + serial_db);
  ASSERT_EQ(expected.exit_code, 0) << expected.err;
  const nlohmann::json rows = stored_rows(serial_db);
  ASSERT_EQ(rows["runs"].size(), 8u);
  // Two ranks (rank 0 evaluates too), three (two serving rank 0), and
  // --ranks, which starts mpirun itself.
  for (const std::string& launch : {mpirun(2), mpirun(3), sanitizer_environment() + kPoems + " --ranks 2 "}) {
    const std::string db = temp_path("ranks.db");
    const bool ranks_option = launch.find("--ranks") != std::string::npos;
    const std::string command =
        ranks_option ? sanitizer_environment() + kPoems + " run " + kSmall + " --study small --ranks 2 --db " + db
                     : launch + "run " + kSmall + " --study small --db " + db;
    const CommandResult r = run_command(command);
    ASSERT_EQ(r.exit_code, 0) << command << "\n" << r.err;
    EXPECT_EQ(r.out, expected.out) << command;
    EXPECT_EQ(r.err, expected.err) << command;
    EXPECT_EQ(stored_rows(db), rows) << command;
    fs::remove(db);
  }
  fs::remove(serial_db);
}

TEST(MpiStudy, AFailingEvaluationIsStoredAsFailedAndTheRestGoOn) {
  const std::string serial_db = temp_path("fail_serial.db"), db = temp_path("fail.db");
  const std::string args = "--limit operations=" POEMS_SCALEOUT_OPERATION_LIMIT " run " + kSmall + " --study small ";
  const CommandResult expected = serial(args + "--jobs 1 --db " + serial_db);
  const CommandResult r = run_command(mpirun(3) + args + "--db " + db);
  EXPECT_EQ(expected.exit_code, 3) << expected.err;
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(r.out, expected.out);
  // Then mpirun's own notice of a rank's non-zero exit status.
  EXPECT_EQ(r.err.substr(0, expected.err.size()), expected.err);
  const nlohmann::json rows = stored_rows(db);
  EXPECT_EQ(rows, stored_rows(serial_db));
  std::size_t failed = 0;
  for (const nlohmann::json& run : rows["runs"]) failed += run["status"] == "failed";
  EXPECT_EQ(failed, 2u) << rows.dump(1);
  fs::remove(serial_db);
  fs::remove(db);
}

TEST(MpiStudy, MeasuredRunsAreRefused) {
  const CommandResult r =
      run_command(mpirun(2) + "run " + kSmall + " --study small --paradigm measurement[mpirun] --no-store");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("measurement[mpirun] measures this host: run it without mpirun"), std::string::npos) << r.err;
}

TEST(MpiStudy, AKilledWriterRankLosesNothingStoredAndARerunCompletesIt) {
  const std::string db = temp_path("killed.db"), serial_db = temp_path("killed_serial.db");
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const std::string command = mpirun(2) + "run " + kSlow + " --study slow --db " + db + " >/dev/null 2>&1";
    ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // Rank 0 claims the runs it hands out: its process id is in the running rows.
  std::int64_t writer = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (std::chrono::steady_clock::now() < deadline && !writer) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (fs::exists(db) && done_runs(db) >= 2) writer = running_pid(db);
  }
  ASSERT_GT(writer, 0) << "the run finished before it was killed: make slow_study.psl slower";
  ::kill(static_cast<pid_t>(writer), SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);  // mpirun ends the other rank
  EXPECT_NE(status, 0);
  const nlohmann::json before = stored_rows(db);
  std::size_t stored_before = 0;
  for (const nlohmann::json& run : before["runs"]) stored_before += run["status"] == "done";
  ASSERT_GE(stored_before, 2u);
  ASSERT_LT(stored_before, 8u);

  const CommandResult rerun = run_command(mpirun(2) + "run " + kSlow + " --study slow --db " + db);
  ASSERT_EQ(rerun.exit_code, 0) << rerun.err;
  std::size_t reused = 0;
  for (std::size_t at = 0; (at = rerun.err.find(": stored result", at)) != std::string::npos; ++at) ++reused;
  EXPECT_EQ(reused, stored_before) << rerun.err;
  const CommandResult expected = serial("run " + kSlow + " --study slow --jobs 1 --db " + serial_db);
  ASSERT_EQ(expected.exit_code, 0) << expected.err;
  EXPECT_EQ(rerun.out, expected.out);
  const nlohmann::json after = stored_rows(db), want = stored_rows(serial_db);
  ASSERT_EQ(after["runs"].size(), want["runs"].size());
  for (std::size_t i = 0; i < want["runs"].size(); ++i) {
    EXPECT_EQ(after["runs"][i]["status"], "done");
    EXPECT_EQ(after["runs"][i]["result"], want["runs"][i]["result"]) << i;
  }
  EXPECT_EQ(after["studies"], want["studies"]);
  for (std::size_t i = 0; i < before["runs"].size(); ++i)
    if (before["runs"][i]["status"] == "done") {
      EXPECT_EQ(after["runs"][i], before["runs"][i]) << i;
    }
  fs::remove(db);
  fs::remove(serial_db);
}

}  // namespace mpi_study_tests
