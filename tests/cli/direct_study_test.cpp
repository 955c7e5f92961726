// End-to-end cross-check: a study's simulation[direct] cell and `poems
// direct --machine` run the same program under the same MPI runtime
// (MPI_direct with an eager_limit) and must give the same times, the known
// ones. The study runs the model's registered program (Sweep3D's
// sweep3d_direct: simulation[direct] runs nothing else, core/programs.h), so
// that is the program compared; tests/cli/data/direct_study holds the study
// and the deck it writes for its one binding.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "run_command.h"

namespace fs = std::filesystem;

// Its own namespace: unity builds (tests/CMakeLists.txt) batch files together.
namespace direct_study_tests {

namespace {

const std::string kPoems = POEMS_BINARY;
const fs::path kData = fs::path(POEMS_SOURCE_DIR) / "tests/cli/data/direct_study";

// examples/sweep3d's three files and the study beside them; `profile_entry`
// goes into MPI_direct's send profile (e.g. an eager_limit).
fs::path study_files(const std::string& name, const std::string& profile_entry) {
  const fs::path dir = fs::temp_directory_path() / ("poems_direct_study_" + std::to_string(::getpid()) + "_" + name);
  fs::create_directories(dir);
  const fs::path examples = fs::path(POEMS_SOURCE_DIR) / "examples/sweep3d";
  for (const char* f : {"sweep3d.psl", "machines.psl"})
    fs::copy_file(examples / f, dir / f, fs::copy_options::overwrite_existing);
  fs::copy_file(kData / "cross_check.psl", dir / "cross_check.psl", fs::copy_options::overwrite_existing);
  std::string mpi = read_text(examples / "mpi.psl");
  const std::string send = "evaluation = simulation[direct];";
  const std::size_t at = mpi.find(send + " handshake = false;");
  if (at == std::string::npos) throw std::runtime_error("MPI_direct's send profile is not in examples/sweep3d/mpi.psl");
  if (!profile_entry.empty()) mpi.insert(at + send.size(), " " + profile_entry);
  std::ofstream(dir / "mpi.psl") << mpi;
  return dir;
}

struct Times {
  double loop_ns = 0;    // the program's own iteration-loop time (what a study reports)
  double finish_ns = 0;  // the simulated run's last rank's finish
};

// The study's one cell, stored in a knowledge base of its own.
Times study(const fs::path& dir) {
  const fs::path db = dir / "poems.db";
  fs::remove(db);
  const CommandResult run = run_command(kPoems + " run " + (dir / "cross_check.psl").string() +
                                        " --study cross_check --format json --db " + db.string());
  EXPECT_EQ(run.exit_code, 0) << run.err;
  const CommandResult stored =
      run_command(kPoems + " db query --db " + db.string() +
                  " \"SELECT json_extract(extra, '\\$.program_finish_ns') AS finish FROM results\" --format json");
  EXPECT_EQ(stored.exit_code, 0) << stored.err;
  if (run.exit_code != 0 || stored.exit_code != 0) return {};
  const nlohmann::json rows = nlohmann::json::parse(run.out)["rows"];
  const nlohmann::json finish = nlohmann::json::parse(stored.out);
  EXPECT_EQ(rows.size(), 1u);
  EXPECT_EQ(finish.size(), 1u);
  return {rows.at(0)["times_ns"]["simulation[direct]"].get<double>(), finish.at(0)["finish"].get<double>()};
}

// `poems direct` of the same program and deck on the same machine files.
Times direct(const fs::path& dir) {
  const CommandResult r = run_command(
      kPoems + " direct " + POEMS_BIN_DIR + "/sweep3d_direct -np 2 --machine Odin --import " +
      (dir / "machines.psl").string() + " --import " + (dir / "mpi.psl").string() +
      " --compute model --processor Opteron --format json --no-store -- " + (kData / "cross_check.deck").string());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  if (r.exit_code != 0) return {};
  // In JSON mode the program's own output (its result line) goes to stderr.
  const std::string prefix = "POEMS_SWEEP3D_RESULT ";
  const std::size_t at = r.err.find(prefix);
  EXPECT_NE(at, std::string::npos) << r.err;
  if (at == std::string::npos) return {};
  const std::size_t end = r.err.find('\n', at);
  const nlohmann::json line = nlohmann::json::parse(r.err.substr(at + prefix.size(), end - at - prefix.size()));
  return {line["time_ns"].get<double>(), nlohmann::json::parse(r.out)["finish_ns"].get<double>()};
}

}  // namespace

// 2 ranks on Odin (L = 5300, o = 2300, G = 2.5/B, O = 1/B ns), one block per
// rank per octant: C = 12 cell-angles x 60 ns = 720 ns of compute, then a
// 96-byte message along i; octants 0-3 go from rank 1 to rank 0, 4-7 back.
// Rank 0 leaves the barrier L after rank 1 (t = 0); rank 1's loop is the
// longer. A message's data arrives o + L after its send starts; a receive
// takes o + 95 G = 2537.5 (an 8-byte one o + 7 G = 2317.5); an eager send's
// call o + 95 O = 2395 (8 bytes: o + 7 O = 2307).
//
// Rendezvous (eager_limit = 64B < 96 B; no handshake): a send waits L, then
// returns when its data arrives, o + L later, so a sending block takes
// C + L + o + L = 13620. Octants 0-3: rank 1 is free at 4 x 13620 = 54480;
// rank 0 receives and computes the last, 2537.5 + 720, to 57737.5, sends
// octants 4-7, the last arriving at 57737.5 + 4 x 13620 = 112217.5; rank 1
// receives and computes it to 115475. The allreduce (8 B, eager): rank 1
// sends (2307, to 117782) and receives rank 0's message, which arrived at
// 112217.5 + 7600 = 119817.5: 119817.5 + 2317.5 = 122135.
//
// Eager (Odin's S = 32768 B): rank 1 sends every 720 + 2395 = 3115 ns, from
// 720; rank 0, receiving and computing at 3257.5 a block, ends octant 3 at
// 21350, sends at 22070 + 3115k; rank 1 receives those from 22070 + 7600 =
// 29670 and ends octant 7 at 42700 (its receives wait for its computes:
// 29670 + 2537.5 + 720 + 3 x 3257.5); its allreduce send ends at 45007, and
// rank 0's message (sent at 33810, arrived 41410) is received by 47324.5.
TEST(DirectStudy, ACellUnderTheRuntimesEagerLimitIsPoemsDirectOnTheMachine) {
  const fs::path limited = study_files("limited", "eager_limit = 64B;");
  const fs::path plain = study_files("plain", "");
  // The program times its loop with MPI_Wtime, in seconds: a difference of
  // two doubles, so the known answers are met to a thousandth of a ns; the
  // two ways run the same engine and must agree bit for bit.
  const Times cell = study(limited), run = direct(limited);
  EXPECT_NEAR(cell.loop_ns, 122135, 1e-3);
  EXPECT_EQ(cell.loop_ns, run.loop_ns);
  EXPECT_EQ(cell.finish_ns, run.finish_ns);
  EXPECT_GT(cell.finish_ns, cell.loop_ns);  // the program's setup and reductions lie outside its loop

  const Times eager_cell = study(plain), eager_run = direct(plain);
  EXPECT_NEAR(eager_cell.loop_ns, 47324.5, 1e-3);
  EXPECT_EQ(eager_cell.loop_ns, eager_run.loop_ns);
  EXPECT_EQ(eager_cell.finish_ns, eager_run.finish_ns);
  EXPECT_LT(eager_run.finish_ns, run.finish_ns);
  fs::remove_all(limited);
  fs::remove_all(plain);
}

}  // namespace direct_study_tests
